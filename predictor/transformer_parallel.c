/* predictor/transformer_parallel.c — Megatron-style parallel training of a transformer:
 * the shard's ops priced on the device, composed into an iteration and memory per GPU. */
#include "predictor/transformer_parallel.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/plan.h"
#include "predictor/comm_model.h"
#include "predictor/whatif.h"

static const char *const recompute_names[RECOMPUTE_COUNT] = {"none", "selective", "full"};

const char *recompute_name(Recompute r) { return r >= 0 && r < RECOMPUTE_COUNT ? recompute_names[r] : "?"; }

int recompute_parse(const char *s, Recompute *out)
{
    for (int r = 0; r < RECOMPUTE_COUNT; r++)
        if (strcmp(s, recompute_names[r]) == 0) {
            *out = (Recompute)r;
            return 0;
        }
    return -1;
}

int tpar_padded_vocab(int vocab, int tp)
{
    const int unit = 128 * tp;
    return (vocab + unit - 1) / unit * unit;
}

int tpar_price_shard(const SystemPricer *sp, const TransformerDims *d0, int tp, int micro_batch, ShardCost *out,
                     char *err, size_t errlen)
{
    TransformerDims padded = *d0;
    padded.vocab = tpar_padded_vocab(d0->vocab, tp);
    const TransformerDims *d = &padded;
    memset(out, 0, sizeof *out);
    out->tp = tp, out->micro_batch = micro_batch;
    if (sp->sys.device.calibrated || !sp->dp) {
        snprintf(err, errlen, "tensor and pipeline parallelism price a spec-sheet GPU system; %s's device is this "
                 "machine", sp->sys.name);
        return SYSP_USAGE;
    }
    ModelSpec m;
    if (transformer_shard_model(d, tp, &m, err, errlen) != 0)
        return SYSP_USAGE;
    Plan p;
    if (plan_build(&m, micro_batch, &p, err, errlen) != 0) {
        free((void *)m.layers);
        return SYSP_USAGE;
    }
    double *op_s = calloc((size_t)p.nops, sizeof *op_s);
    DeviceStep step;
    /* Megatron runs its layers at the precision itself (bf16 weights, fp32 master copies in
     * its optimizer) with fused kernels: no autocast casts and no framework optimizer passes,
     * so the kernels alone (fw NULL); the optimizer is priced below as one fused pass. */
    int rc = op_s ? whatif_device_ops(&p, sp->cm, sp->dp, &sp->sys.device, sp->prec, NULL, &step, op_s, err, errlen)
                  : (snprintf(err, errlen, "out of memory"), -1);
    if (rc == 0) {
        for (int k = 0; k < DP_SOURCE_COUNT; k++)
            out->priced_by[k] = step.priced_by[k];
        for (int i = 0; i < p.nops; i++) {
            const PlanOp *o = &p.ops[i];
            if (o->desc.phase == PHASE_UPDATE || o->desc.kind == OP_SUMSQ)
                continue;
            out->ops++;
            const LayerSpec *l = o->layer >= 0 ? &m.layers[o->layer] : NULL;
            const ShardPart part = l ? transformer_shard_part(l) : SHARD_HEAD; /* the loss: the last stage's */
            const bool fwd = o->desc.phase == PHASE_FWD;
            (fwd ? out->fwd_s : out->bwd_s)[part] += op_s[i];
            if (part != SHARD_BLOCK)
                continue;
            if (fwd && l->kind == LAYER_ATTENTION &&
                (o->desc.kind == OP_BMM || o->desc.kind == OP_SOFTMAX || o->desc.kind == OP_DROPOUT))
                out->core_fwd_s += op_s[i];
            if (l->kind == LAYER_LAYERNORM || l->kind == LAYER_DROPOUT || l->kind == LAYER_ADD)
                *(fwd ? &out->seq_fwd_s : &out->seq_bwd_s) += op_s[i];
        }
        for (int t = 0; t < p.nparams; t++) {
            const int layer = p.params[t].layer;
            const ShardPart part = layer >= 0 ? transformer_shard_part(&m.layers[layer]) : SHARD_HEAD;
            *(part == SHARD_BLOCK ? &out->block_params : part == SHARD_EMBEDDING ? &out->emb_params
                                                                                 : &out->head_params) +=
                (double)p.params[t].count;
        }
        DevPrice s;
        const double probe = 1e9;
        if ((rc = dp_price_stream(sp->dp, probe, &s, err, errlen)) == 0)
            out->stream_s_per_byte = s.time_s / probe;
    }
    free(op_s);
    plan_free(&p);
    free((void *)m.layers);
    return rc ? SYSP_FAIL : 0;
}

int tpar_check(const TransformerDims *d, const SystemSpec *sys, int nodes, ParallelConfig *c, char *err, size_t errlen)
{
    const int G = nodes * sys->devices_per_node;
    if (c->tp < 1 || c->pp < 1 || c->micro_batch < 1 || c->interleave < 1) {
        snprintf(err, errlen, "--tp, --pp, --micro-batch and --interleave must be >= 1");
        return -1;
    }
    if (c->tp > sys->devices_per_node) {
        snprintf(err, errlen, "--tp %d: tensor parallelism stays inside a node; %s has %d devices a node", c->tp,
                 sys->name, sys->devices_per_node);
        return -1;
    }
    if (d->heads % c->tp || d->ffn % c->tp) {
        snprintf(err, errlen, "--tp %d must divide the heads (%d) and the MLP width (%d)", c->tp, d->heads, d->ffn);
        return -1;
    }
    if (d->layers % c->pp) {
        snprintf(err, errlen, "--pp %d must divide the %d blocks", c->pp, d->layers);
        return -1;
    }
    if (G % (c->tp * c->pp)) {
        snprintf(err, errlen, "--tp %d x --pp %d = %d must divide the %d GPUs (%d nodes of %d)", c->tp, c->pp,
                 c->tp * c->pp, G, nodes, sys->devices_per_node);
        return -1;
    }
    c->dp = G / (c->tp * c->pp);
    if (c->global_batch < 1 || c->global_batch % (c->micro_batch * c->dp)) {
        snprintf(err, errlen, "--batch %d (global) must be a multiple of --micro-batch %d x data parallel %d", c->global_batch,
                 c->micro_batch, c->dp);
        return -1;
    }
    const int m = c->global_batch / (c->micro_batch * c->dp);
    if (c->interleave > 1 && (c->pp == 1 || (d->layers / c->pp) % c->interleave || m % c->pp)) {
        snprintf(err, errlen, "--interleave %d needs --pp > 1, the stage's %d blocks a multiple of it and the %d "
                 "micro-batches a multiple of --pp %d (Megatron's interleaved schedule)", c->interleave,
                 d->layers / c->pp, m, c->pp);
        return -1;
    }
    if (c->tp == 1)
        c->sp = false;
    return 0;
}

double tpar_block_activation_bytes(const TransformerDims *d, const ParallelConfig *c, double vb)
{
    const double s = d->seq, b = c->micro_batch, h = d->hidden, a = d->heads, t = c->tp;
    const double sbh = s * b * h, ffn_h = (double)d->ffn / h;
    const double hid_mask = d->dropout > 0 ? 1 : 0, attn_drop = d->attn_dropout > 0;
    /* kept whole on every rank without sequence parallel: the two norms' inputs, the QKV's
     * and the MLP's inputs (the norms' outputs) and the residual dropouts' masks */
    const double whole = (4 * vb + 2 * hid_mask) * sbh;
    /* split t ways: q, k, v, the projection's input, the MLP's activation input and its
     * second GEMM's input (ffn wide each) */
    const double split = (4 * vb + 2 * vb * ffn_h) * sbh;
    /* the attention core, split t ways: the softmax's output, and with dropout its mask
     * (1 byte) and output */
    const double core = a * s * s * b * (vb + (attn_drop ? 1 + vb : 0));
    if (c->recompute == RECOMPUTE_FULL)
        return vb * sbh / (c->sp ? t : 1);
    const double kept_core = c->recompute == RECOMPUTE_SELECTIVE ? 0 : core;
    return (c->sp ? whole / t : whole) + split / t + kept_core / t;
}

/* the all-reduce of `bytes` over n ranks on one link (a ring) */
static double ring_s(double bytes, int n, LinkParams link)
{
    if (n <= 1)
        return 0;
    const CommParams cp = {.intra = link, .inter = link, .ranks_per_node = n};
    return allreduce_model_s(AR_RING, bytes, n, &cp);
}

/* The data-parallel allreduce of `bytes` over d ranks, min(d, G_node / t) of them in a
 * node, every GPU of a node in some group at once, sharing its NICs. */
static double dp_allreduce_s(const SystemSpec *sys, const CommParams *node, int tp, int d, double bytes)
{
    if (d <= 1)
        return 0;
    const int gpn = sys->devices_per_node;
    const int q = d < gpn / tp ? d : (gpn / tp > 0 ? gpn / tp : 1);
    if (q >= d)
        return ring_s(bytes, d, node->intra);
    /* gpn / q groups at once share the node's injection bandwidth */
    CommParams cp = *node;
    cp.inter.beta_Bps = node->inter.beta_Bps * q / gpn;
    cp.ranks_per_node = q;
    return allreduce_model_s(q > 1 ? AR_HIERARCHICAL : AR_RING, bytes, d, &cp);
}

/* fp32 state bytes a parameter: Adam's two moments, RMSprop's or momentum's one */
static double optimizer_state_bytes(OptKind k)
{
    switch (k) {
    case OPT_ADAM:
    case OPT_ADAMW: return 8;
    case OPT_RMSPROP:
    case OPT_MOMENTUM: return 4;
    case OPT_SGD: return 0;
    }
    return 0;
}

void tpar_estimate(const TransformerDims *d, const SystemSpec *sys, Precision prec, int nodes,
                   const ParallelConfig *c, const ShardCost *sc, ParallelEstimate *out)
{
    memset(out, 0, sizeof *out);
    out->cfg = *c;
    out->nodes = nodes;
    out->gpus = nodes * sys->devices_per_node;
    const int t = c->tp, p = c->pp, v = c->interleave, dp = c->dp, gpn = sys->devices_per_node;
    const int m = out->micro_batches = c->global_batch / (c->micro_batch * dp);
    const int Lp = out->layers_per_stage = d->layers / p;
    const double vb = precision_bytes(prec);
    const CommParams node = whatif_comm_params(sys, NULL, prec);
    /* a GPU's share of its node's NICs: every GPU of the node sends at once */
    const LinkParams gpu_inter = {node.inter.alpha_s, node.inter.beta_Bps / gpn, 0};
    const double act_msg = (double)c->micro_batch * d->seq * d->hidden * vb; /* b s h values */

    /* one block, one micro-batch */
    const double sp_cut = c->sp ? 1.0 - 1.0 / t : 0; /* the share of the sequence ops a rank no longer runs */
    const double f = sc->fwd_s[SHARD_BLOCK] - sp_cut * sc->seq_fwd_s;
    const double b = sc->bwd_s[SHARD_BLOCK] - sp_cut * sc->seq_bwd_s;
    const double tp_one = ring_s(act_msg, t, node.intra); /* one allreduce (or RS + AG) */
    const double tp_blk = 4 * tp_one + (c->recompute == RECOMPUTE_FULL ? 2 * tp_one : 0);
    const double rc_blk = c->recompute == RECOMPUTE_FULL ? f : c->recompute == RECOMPUTE_SELECTIVE ? sc->core_fwd_s : 0;
    /* Outside the blocks: the vocabulary-parallel lookup's sum forward (first stage; with
     * sequence parallel a reduce-scatter into the sequence's shares, half an allreduce's
     * sends); the LM head's input gradient summed backward (its f; with sequence parallel
     * an all-gather forward and a reduce-scatter backward, the same sends), and the loss's
     * two sums over the group, of the rows' maxima (b s fp32 values) and of their
     * exponentials with the label's logit (2 b s), before the loss is known (last stage). */
    const double micro_tokens = (double)c->micro_batch * d->seq;
    const double emb_c = sc->fwd_s[SHARD_EMBEDDING] + sc->bwd_s[SHARD_EMBEDDING];
    const double emb_x = c->sp ? 0.5 * tp_one : tp_one;
    const double head_c = sc->fwd_s[SHARD_HEAD] + sc->bwd_s[SHARD_HEAD];
    const double head_x = tp_one + ring_s(4 * micro_tokens, t, node.intra) + ring_s(8 * micro_tokens, t, node.intra);
    const double first_c = Lp * (f + b) + emb_c + (p == 1 ? head_c : 0), first_x = emb_x + (p == 1 ? head_x : 0);
    const double last_c = p == 1 ? first_c : Lp * (f + b) + head_c, last_x = p == 1 ? first_x : head_x;
    const bool first_slowest = first_c + first_x >= last_c + last_x;
    const double stage_compute = first_slowest ? first_c : last_c, stage_comm = first_slowest ? first_x : last_x;
    /* the slowest stage, one micro-batch */
    const double W = stage_compute + stage_comm + Lp * (rc_blk + tp_blk);

    /* neighbouring stages are t d ranks apart: another node once that is a node's worth */
    const bool pp_inter = t * dp >= gpn || !sys->has_intra;
    const LinkParams pl = pp_inter ? gpu_inter : node.intra;
    const double x = p > 1 ? pl.alpha_s + act_msg / (t > 1 ? t : 1) / pl.beta_Bps : 0;
    out->compute_s = m * stage_compute;
    out->recompute_s = m * Lp * rc_blk;
    out->tp_comm_s = m * (Lp * tp_blk + stage_comm);
    if (p > 1) {
        out->pp_comm_s = (double)m * v * 2 * x;
        out->bubble_s = (p - 1) * (W / v + 2 * x);
    }

    /* the rank's parameters: the fuller of the first and last stages */
    const double blocks = Lp * sc->block_params;
    const double params_first = blocks + sc->emb_params + (p == 1 ? sc->head_params : 0);
    const double params_last = p == 1 ? params_first : blocks + sc->head_params;
    const double rank_params = fmax(params_first, params_last);
    const bool mixed = vb < 4;
    const double states = optimizer_state_bytes(d->opt) + (mixed ? 4 : 0); /* + fp32 master weights */
    const double grads_bytes = 4 * rank_params;
    out->dp_comm_s = c->dist_opt ? 0.5 * dp_allreduce_s(sys, &node, t, dp, grads_bytes) +
                                       0.5 * dp_allreduce_s(sys, &node, t, dp, vb * rank_params)
                                 : dp_allreduce_s(sys, &node, t, dp, grads_bytes);
    if (p > 1) /* the tied word embedding's gradients between the first and last stage */
        out->dp_comm_s += ring_s(4 * sc->emb_params, 2, gpu_inter);
    /* one fused pass: read the weights, gradients and states, write the weights and states
     * (and the 16-bit copy) */
    const double opt_bytes =
        rank_params / (c->dist_opt ? dp : 1) * (mixed ? 4 + 2 * states + vb : 4 + 2 * (4 + states));
    out->optimizer_s = opt_bytes * sc->stream_s_per_byte;
    out->iter_s = out->compute_s + out->recompute_s + out->tp_comm_s + out->pp_comm_s + out->bubble_s +
                  out->dp_comm_s + out->optimizer_s;

    /* memory */
    const double act_blk = tpar_block_activation_bytes(d, c, vb);
    const double full_blk = tpar_block_activation_bytes(
        d, &(ParallelConfig){.tp = t, .micro_batch = c->micro_batch, .sp = c->sp, .recompute = RECOMPUTE_NONE}, vb);
    const double inflight = p == 1 ? 1 : (m < p ? m : p);
    const double interleave_factor = v > 1 ? 1 + (double)(p - 1) / ((double)p * v) : 1;
    const double sbh_t = (double)c->micro_batch * d->seq * d->hidden / (c->sp ? t : 1);
    const double emb_act = sbh_t * (vb + (d->dropout > 0 ? 1 : 0));
    const double logits = 4.0 * c->micro_batch * d->seq * tpar_padded_vocab(d->vocab, t) / t + vb * sbh_t; /* fp32 logits, ln_f's input */
    const double working = c->recompute == RECOMPUTE_FULL ? full_blk : 0;       /* the block being recomputed */
    double act_first = Lp * act_blk * inflight * interleave_factor + emb_act * inflight + working;
    double act_last = Lp * act_blk + logits + working;
    if (p == 1)
        act_first = act_last = Lp * act_blk + emb_act + logits + working;
    const double opt_state = states * (c->dist_opt ? 1.0 / dp : 1.0);
    const double mem_first = params_first * (vb + 4 + opt_state) + act_first;
    const double mem_last = params_last * (vb + 4 + opt_state) + act_last;
    out->first_stage_fuller = mem_first >= mem_last;
    const double P = out->first_stage_fuller ? params_first : params_last;
    out->weights_B = vb * P;
    out->grads_B = 4 * P;
    out->optimizer_B = opt_state * P;
    out->activations_B = out->first_stage_fuller ? act_first : act_last;
    out->total_B = out->weights_B + out->grads_B + out->optimizer_B + out->activations_B;
    out->fits = sys->device.mem_bytes <= 0 || out->total_B <= sys->device.mem_bytes;

    /* model FLOPs: the matmuls of a token forward, three times (forward, two backward) */
    const double h = d->hidden, s = d->seq;
    const double per_token = 2 * d->layers * (4 * h * h + 2 * h * d->ffn) + 4 * d->layers * s * h +
                             2 * h * tpar_padded_vocab(d->vocab, t);
    const double tokens = (double)c->global_batch * s;
    out->model_flops = 3 * per_token * tokens;
    const double peak = sys->device.peak_flops[prec];
    out->mfu = peak > 0 && out->iter_s > 0 ? out->model_flops / (out->iter_s * out->gpus * peak) : 0;
    out->tokens_per_s = out->iter_s > 0 ? tokens / out->iter_s : 0;
}

typedef struct {
    int tp, micro;
    ShardCost cost;
} CachedShard;

int tpar_search(const SystemPricer *sp, const TransformerDims *d, int nodes, int global_batch, ParallelEstimate *best,
                int *tried, int *fitting, char *err, size_t errlen)
{
    static const int micros[] = {1, 2, 4, 8};
    CachedShard cache[64];
    int ncache = 0;
    *tried = *fitting = 0;
    ParallelEstimate least = {0};
    bool have_best = false, have_least = false;
    const int gpn = sp->sys.devices_per_node;
    for (int t = 1; t <= gpn; t *= 2)
        for (int p = 1; p <= d->layers; p++)
            for (size_t mi = 0; mi < sizeof micros / sizeof micros[0]; mi++)
                for (int v = 1; v <= 4; v++)
                    for (int r = 0; r < RECOMPUTE_COUNT; r++) {
                        ParallelConfig c = {.tp = t, .pp = p, .micro_batch = micros[mi], .global_batch = global_batch,
                                            .interleave = v, .sp = t > 1, .recompute = (Recompute)r};
                        char e[256];
                        if (tpar_check(d, &sp->sys, nodes, &c, e, sizeof e) != 0)
                            continue;
                        c.dist_opt = c.dp > 1;
                        const ShardCost *sc = NULL;
                        for (int k = 0; k < ncache && !sc; k++)
                            if (cache[k].tp == t && cache[k].micro == c.micro_batch)
                                sc = &cache[k].cost;
                        if (!sc) {
                            if (ncache == (int)(sizeof cache / sizeof cache[0]))
                                continue;
                            const int rc = tpar_price_shard(sp, d, t, c.micro_batch, &cache[ncache].cost, err, errlen);
                            if (rc == SYSP_USAGE)
                                continue; /* a shape the model refuses at this share */
                            if (rc != 0)
                                return rc;
                            cache[ncache].tp = t, cache[ncache].micro = c.micro_batch;
                            sc = &cache[ncache++].cost;
                        }
                        ParallelEstimate e1;
                        tpar_estimate(d, &sp->sys, sp->prec, nodes, &c, sc, &e1);
                        ++*tried;
                        if (!have_least || e1.total_B < least.total_B)
                            least = e1, have_least = true;
                        if (!e1.fits)
                            continue;
                        ++*fitting;
                        if (!have_best || e1.iter_s < best->iter_s)
                            *best = e1, have_best = true;
                    }
    if (!have_least) {
        snprintf(err, errlen, "no configuration of %d nodes of %d devices divides %s's %d blocks, %d heads and "
                 "global batch %d", nodes, gpn, sp->sys.name, d->layers, d->heads, global_batch);
        return SYSP_USAGE;
    }
    if (!have_best) {
        *best = least;
        return 1;
    }
    return 0;
}
