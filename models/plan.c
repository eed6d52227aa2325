/* models/plan.c — expansion of a model into the training-step plan: shape inference,
 * memory layout in arenas, and the op list (forward, loss, backward, update).
 *
 * Layers append their ops through the emitters in models/layers.c; this file owns the
 * order (forward in layer order, backward in reverse), the "first writer overwrites"
 * rule for gradients, views (layers whose output is another layer's), the parameter
 * layout (L2-decayed kernels first, so decay is a prefix of the one parameter buffer) and
 * the single optimizer op over that buffer.
 */
#include "models/plan.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/fista.h"
#include "models/layers.h"

enum { ALIGN = 64 };

/* Largest batch-dependent tensor a plan may hold: 2^36 floats (256 GiB), far beyond one
 * process today and well inside the ops' own limit (2^40 elements), so an absurd batch is
 * refused with a message instead of tripping a kernel assertion or wrapping around. */
#define MAX_TENSOR_ELEMS 68719476736.0

const char *arena_name(ArenaId a)
{
    static const char *const names[ARENA_COUNT] = {"params", "grads", "optimizer", "state", "activations",
                                                   "activation-grads", "workspace", "input"};
    return (unsigned)a < ARENA_COUNT ? names[a] : "?";
}

const char *plan_mode_name(PlanMode m)
{
    static const char *const names[] = {"train", "fwd_bwd", "inference"};
    return (unsigned)m < 3 ? names[m] : "?";
}

int layer_ninputs(const LayerSpec *l) { return l->ninputs > 0 ? l->ninputs : 1; }

int shape_count(const Shape *s)
{
    int n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= s->d[i];
    return n;
}

void shape_str(const Shape *s, char *out, int n)
{
    switch (s->rank) {
    case 1: snprintf(out, (size_t)n, "%d", s->d[0]); break;
    case 2: snprintf(out, (size_t)n, "%dx%d", s->d[0], s->d[1]); break;
    default: snprintf(out, (size_t)n, "%dx%dx%d", s->d[0], s->d[1], s->d[2]); break;
    }
}

/* ---- memory layout ---- */

static size_t align_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

BufRef plan_alloc(Plan *p, ArenaId a, size_t bytes)
{
    assert(a != ARENA_WS && a != ARENA_PARAM);
    size_t off = align_up(p->arena_bytes[a]);
    p->arena_bytes[a] = off + bytes;
    return (BufRef){.arena = a, .offset = off, .bytes = bytes};
}

BufRef buf_slice(BufRef b, size_t offset, size_t bytes)
{
    assert(offset + bytes <= b.bytes);
    return (BufRef){.arena = b.arena, .offset = b.offset + offset, .bytes = bytes};
}

void plan_add(Plan *p, int layer, OpDesc d, const BufRef *bufs, int nbuf)
{
    OpBufInfo info[OP_MAX_BUFS];
    int n = op_buffer_info(&d, info);
    /* Programmer errors: a layer binding the wrong number or size of buffers. */
    assert(n == nbuf);
    for (int i = 0; i < n; i++)
        assert(bufs[i].bytes >= info[i].bytes);
    if (p->nops == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 64;
        p->ops = realloc(p->ops, (size_t)p->cap * sizeof *p->ops);
        assert(p->ops); /* a plan is a few thousand entries at most */
    }
    PlanOp *o = &p->ops[p->nops++];
    memset(o, 0, sizeof *o);
    o->desc = d;
    o->layer = layer;
    o->nbuf = nbuf;
    memcpy(o->buf, bufs, (size_t)nbuf * sizeof *bufs);
    size_t ws = op_workspace_bytes(&d);
    if (ws > p->arena_bytes[ARENA_WS])
        p->arena_bytes[ARENA_WS] = ws;
}

/* Gives every op the plan's largest per-thread workspace slice, so each thread computes in
 * the same addresses from op to op (op_workspace_set_slice says why), and sizes the
 * workspace arena for it. */
static void share_workspace_slices(Plan *p)
{
    size_t slice = 0, ws = 0;
    for (int i = 0; i < p->nops; i++) {
        const size_t s = op_workspace_slice_bytes(&p->ops[i].desc);
        slice = s > slice ? s : slice;
    }
    for (int i = 0; i < p->nops; i++) {
        OpDesc *d = &p->ops[i].desc;
        op_workspace_set_slice(d, slice); /* no effect on an op that needs no workspace */
        const size_t b = op_workspace_bytes(d);
        ws = b > ws ? b : ws;
    }
    p->arena_bytes[ARENA_WS] = ws;
}

BufRef plan_add_tensor(Plan *p, int layer, const char *role, size_t count, bool learnable, bool decayed,
                       InitKind init, float scale, float fill, int fan_in, int fan_out)
{
    BufRef ref;
    size_t bytes = count * sizeof(float);
    if (!learnable) {
        ref = plan_alloc(p, ARENA_STATE, bytes);
    } else {
        size_t *cursor = decayed ? &p->param_head : &p->param_tail;
        size_t off = align_up(*cursor);
        *cursor = off + bytes;
        ref = (BufRef){.arena = ARENA_PARAM, .offset = off, .bytes = bytes};
        if (decayed)
            p->decay_bytes = p->param_head;
        size_t end = p->param_head > p->param_tail ? p->param_head : p->param_tail;
        if (end > p->arena_bytes[ARENA_PARAM])
            p->arena_bytes[ARENA_PARAM] = end;
    }
    p->params = realloc(p->params, (size_t)(p->nparams + 1) * sizeof *p->params);
    assert(p->params);
    PlanParam *pp = &p->params[p->nparams++];
    memset(pp, 0, sizeof *pp);
    pp->layer = layer;
    snprintf(pp->role, sizeof pp->role, "%s", role);
    pp->ref = ref;
    pp->count = count;
    pp->fan_in = fan_in;
    pp->fan_out = fan_out;
    pp->init = init;
    pp->init_scale = scale;
    pp->fill = fill;
    pp->learnable = learnable;
    pp->decayed = learnable && decayed;
    if (learnable) {
        p->param_count += count;
        p->layers[layer].params += count;
    } else {
        p->state_count += count;
        p->layers[layer].state += count;
    }
    return ref;
}

/* ---- building ---- */

static int err_layer(char *err, size_t n, int i, const LayerSpec *l, const char *msg)
{
    snprintf(err, n, "layer %d '%s': %s", i + 1, l->name, msg);
    return -1;
}

/* The layer whose buffers a view layer's output really is. */
static int root_of(const Plan *p, int i) { return i >= 0 && p->layers[i].alias_of >= 0 ? p->layers[i].alias_of : i; }

/* Elements per sample of the largest tensor layer l keeps (inputs, output, and the
 * recurrent layers' per-step gate buffers). */
static double layer_elems_per_sample(const LayerSpec *l, const PlanLayer *pl)
{
    double e = fmax(shape_count(&pl->in), shape_count(&pl->out));
    if (l->kind == LAYER_LSTM || l->kind == LAYER_RNN)
        e = fmax(e, (double)pl->in.d[0] * 4.0 * l->u.rnn.hidden);
    return e;
}

/* Shapes first: every mismatch is reported before anything is laid out. */
static int infer_shapes(const ModelSpec *m, int batch, Plan *p, char *err, size_t errlen)
{
    for (int i = 0; i < m->nlayers; i++) {
        const LayerSpec *l = &m->layers[i];
        PlanLayer *pl = &p->layers[i];
        snprintf(pl->name, sizeof pl->name, "%s", l->name);
        pl->kind = l->kind;
        pl->alias_of = -1;
        int nin = layer_ninputs(l);
        if (nin > LAYER_MAX_INPUTS)
            return err_layer(err, errlen, i, l, "too many inputs");
        Shape in[LAYER_MAX_INPUTS];
        for (int k = 0; k < nin; k++) {
            int src = l->inputs[k];
            if (src < -1 || src >= i) {
                char msg[128];
                snprintf(msg, sizeof msg, "input %d must name an earlier layer (or the model input)", src + 1);
                return err_layer(err, errlen, i, l, msg);
            }
            in[k] = src < 0 ? m->input : p->layers[src].out;
        }
        pl->in = in[0];
        char msg[256];
        if (layer_infer(m, l, in, nin, &pl->out, msg, sizeof msg) != 0)
            return err_layer(err, errlen, i, l, msg);
        if (layer_elems_per_sample(l, pl) * batch > MAX_TENSOR_ELEMS) {
            snprintf(err, errlen, "batch %d: layer %d '%s' would hold a tensor of %.3g floats, more than "
                     "the %.3g a process can address here; use a smaller batch", batch, i + 1, l->name,
                     layer_elems_per_sample(l, pl) * batch, MAX_TENSOR_ELEMS);
            return -1;
        }
    }
    return 0;
}

/* needed[i]: layer i lies on the path from the model input to the head's output. */
static void mark_needed(const ModelSpec *m, int out_layer, bool *needed)
{
    memset(needed, 0, (size_t)m->nlayers * sizeof *needed);
    needed[out_layer] = true;
    for (int i = out_layer; i >= 0; i--) {
        if (!needed[i])
            continue;
        const LayerSpec *l = &m->layers[i];
        for (int k = 0; k < layer_ninputs(l); k++)
            if (l->inputs[k] >= 0)
                needed[l->inputs[k]] = true;
    }
}

/* The loss of the head: forward value, then the gradient that starts backward. */
static void emit_loss(Plan *p, const ModelSpec *m, int out_layer, bool backward)
{
    const PlanLayer *last = &p->layers[out_layer];
    int per = shape_count(&last->out), B = p->batch;
    /* a sequence output (T, F) is scored per step: T*B rows of F */
    int rows = last->out.rank == 2 ? B * last->out.d[0] : B;
    int width = last->out.rank == 2 ? last->out.d[1] : per;
    BufRef y = last->y, dy = p->layers[root_of(p, out_layer)].dy;
    p->output = y;
    p->probs = y;
    if (m->loss == LOSS_SOFTMAX_XENT) {
        p->probs = plan_alloc(p, ARENA_ACT, (size_t)rows * width * sizeof(float));
        const int parts = m->tp_vocab > 0 ? m->tp_ranks : 0;
        plan_add(p, -1, op_softmax_xent_parallel(PHASE_FWD, rows, width, parts, m->tp_vocab),
                 (BufRef[]){p->loss, p->probs, y, p->target}, 4);
        if (backward)
            plan_add(p, -1, op_softmax_xent_parallel(PHASE_BWD_DATA, rows, width, parts, m->tp_vocab),
                     (BufRef[]){dy, p->probs, p->target}, 3);
        return;
    }
    bool mean = m->loss == LOSS_MSE;
    OpDesc f = op_sqerr(PHASE_FWD, rows, width, mean), b = op_sqerr(PHASE_BWD_DATA, rows, width, mean);
    if (m->loss == LOSS_HALF_SSE_MEAN) /* UFLDL: sum of squared errors / (2 * batch) */
        f.u.sqerr.weight = b.u.sqerr.weight = 0.5f / (float)B;
    plan_add(p, -1, f, (BufRef[]){p->loss, y, p->target}, 3);
    if (backward)
        plan_add(p, -1, b, (BufRef[]){dy, y, p->target}, 3);
}

/* The optimizer op of kind o over parameters [off, off + bytes); its state lives at the
 * same offsets of ARENA_OPT (Adam's second moments after the first). */
static void emit_update_range(Plan *p, const OptSpec *o, size_t off, size_t bytes, size_t whole)
{
    size_t n = bytes / sizeof(float);
    BufRef w = {.arena = ARENA_PARAM, .offset = off, .bytes = bytes};
    BufRef g = {.arena = ARENA_GRAD, .offset = off, .bytes = bytes};
    BufRef s1 = {.arena = ARENA_OPT, .offset = off, .bytes = bytes};
    BufRef s2 = {.arena = ARENA_OPT, .offset = align_up(whole) + off, .bytes = bytes};
    /* the decayed kernels are a prefix of the buffer, hence a prefix of any range */
    size_t decay_end = p->decay_bytes > off ? p->decay_bytes - off : 0;
    size_t decay = (decay_end < bytes ? decay_end : bytes) / sizeof(float);
    OpDesc d;
    switch (o->kind) {
    case OPT_RMSPROP:
        d = op_rmsprop(n, o->lr, o->rho, o->eps);
        op_update_set_decay(&d, decay, 2 * o->weight_decay);
        plan_add(p, -1, d, (BufRef[]){w, s1, g}, 3);
        break;
    case OPT_MOMENTUM:
        d = op_momentum(n, o->lr, o->momentum, o->nesterov);
        op_update_set_decay(&d, decay, 2 * o->weight_decay);
        plan_add(p, -1, d, (BufRef[]){w, s1, g}, 3);
        break;
    case OPT_ADAM:
        d = op_adam(n, o->lr, o->beta1, o->beta2, o->eps);
        op_update_set_decay(&d, decay, 2 * o->weight_decay);
        plan_add(p, -1, d, (BufRef[]){w, s1, s2, g}, 4);
        break;
    case OPT_ADAMW:
        d = op_adamw(n, o->lr, o->beta1, o->beta2, o->eps, o->weight_decay, decay);
        op_update_set_clip(&d, o->clip_norm); /* 0: no clipping, no norm to read */
        plan_add(p, -1, d, (BufRef[]){w, s1, s2, g, p->grad_sumsq}, o->clip_norm > 0 ? 5 : 4);
        break;
    case OPT_SGD:
    default:
        d = op_sgd(n, o->lr);
        op_update_set_decay(&d, decay, 2 * o->weight_decay);
        plan_add(p, -1, d, (BufRef[]){w, g}, 2);
        break;
    }
}

static int cmp_param_offset(const void *a, const void *b)
{
    const PlanParam *x = *(const PlanParam *const *)a, *y = *(const PlanParam *const *)b;
    return (x->ref.offset > y->ref.offset) - (x->ref.offset < y->ref.offset);
}

/* The global norm of a tensor-parallel rank's share: the sum of squares over its buffer
 * counts the tensors every rank holds whole once, as it should, but only this rank's part
 * of the split ones. Each split tensor's sum of squares goes into its own float, the
 * group sums those, and what the other ranks add (the sums less this rank's own, all >= 0,
 * so their 1-norm is their sum) goes onto the total: Megatron's norm over model-parallel
 * ranks, exactly, with the kinds of op the plan already has. */
static void emit_tp_norm(Plan *p)
{
    int k = 0, ranks = 1;
    for (int i = 0; i < p->nparams; i++)
        k += p->params[i].learnable && p->params[i].tp_split;
    for (int i = 0; i < p->model->nlayers; i++) /* the group's size, as the model's layers say it */
        if (p->model->layers[i].kind == LAYER_TP_COPY || p->model->layers[i].kind == LAYER_TP_SUM)
            ranks = p->model->layers[i].u.tp.ranks;
    if (k == 0 || ranks == 1)
        return;
    const BufRef own = plan_alloc(p, ARENA_ACT, (size_t)k * sizeof(float));
    const BufRef all = plan_alloc(p, ARENA_ACT, (size_t)k * sizeof(float));
    const BufRef others = plan_alloc(p, ARENA_ACT, sizeof(float));
    for (int i = 0, j = 0; i < p->nparams; i++) {
        const PlanParam *pp = &p->params[i];
        if (!pp->learnable || !pp->tp_split)
            continue;
        const BufRef g = {.arena = ARENA_GRAD, .offset = pp->ref.offset, .bytes = pp->ref.bytes};
        plan_add(p, -1, op_sumsq(PHASE_UPDATE, pp->count), (BufRef[]){buf_slice(own, (size_t)j++ * sizeof(float),
                                                                                  sizeof(float)), g}, 2);
    }
    plan_add(p, -1, op_allreduce(PHASE_UPDATE, (size_t)k, ranks), (BufRef[]){all, own}, 2);
    plan_add(p, -1, op_axpby(PHASE_UPDATE, (size_t)k, 1, -1), (BufRef[]){all, all, own}, 3);
    plan_add(p, -1, op_norm1(PHASE_UPDATE, (size_t)k), (BufRef[]){others, all}, 2);
    plan_add(p, -1, op_axpby(PHASE_UPDATE, 1, 1, 1), (BufRef[]){p->grad_sumsq, p->grad_sumsq, others}, 3);
}

/* The update: one flat op over the one parameter buffer (alignment padding included; its
 * gradient is zero). A multi-task head updates only the parameters on its path — the
 * other towers' are not its to change — in as few ranges as their layout allows. */
static void emit_update(Plan *p, const OptSpec *o, const bool *needed)
{
    size_t whole = p->arena_bytes[ARENA_PARAM];
    size_t per_state = o->kind == OPT_SGD ? 0 : o->kind == OPT_ADAM || o->kind == OPT_ADAMW ? 2 : 1;
    p->arena_bytes[ARENA_OPT] = per_state == 2 ? align_up(whole) + whole : per_state * whole;
    p->update_op = p->nops;
    if (o->clip_norm > 0) { /* the global norm first: the update reads it (after any all-reduce) */
        p->grad_sumsq = plan_alloc(p, ARENA_ACT, sizeof(float));
        plan_add(p, -1, op_sumsq(PHASE_UPDATE, whole / sizeof(float)),
                 (BufRef[]){p->grad_sumsq, {.arena = ARENA_GRAD, .offset = 0, .bytes = whole}}, 2);
        emit_tp_norm(p);
    }
    if (p->model->nheads == 0) {
        emit_update_range(p, o, 0, whole, whole);
        return;
    }
    const PlanParam **sorted = malloc((size_t)p->nparams * sizeof *sorted);
    assert(sorted);
    int n = 0;
    for (int i = 0; i < p->nparams; i++)
        if (p->params[i].learnable && needed[p->params[i].layer])
            sorted[n++] = &p->params[i];
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_param_offset);
    for (int i = 0; i < n;) {
        size_t start = sorted[i]->ref.offset, end = start + sorted[i]->ref.bytes;
        /* neighbours in the layout are at most the alignment padding apart */
        while (++i < n && sorted[i]->ref.offset <= align_up(end))
            end = sorted[i]->ref.offset + sorted[i]->ref.bytes;
        emit_update_range(p, o, start, end - start, whole);
    }
    free(sorted);
}

static int build_once(const ModelSpec *m, int batch, PlanMode mode, int head, size_t tail_start, Plan *p,
                      char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->model = m;
    p->batch = batch;
    p->mode = mode;
    p->head = head;
    p->update_op = -1;
    p->threads = ops_get_threads();
    p->param_tail = tail_start;
    if (batch < 1) {
        snprintf(err, errlen, "batch %d: must be a positive integer", batch);
        return -1;
    }
    if (m->nlayers < 1) {
        snprintf(err, errlen, "model '%s' has no layers", m->name);
        return -1;
    }
    int nheads = m->nheads > 0 ? m->nheads : 1;
    if (head < 0 || head >= nheads) {
        snprintf(err, errlen, "model '%s' has %d head(s); head %d does not exist", m->name, nheads, head);
        return -1;
    }
    if (m->opt.clip_norm > 0 && (m->nheads > 0 || m->opt.kind != OPT_ADAMW)) {
        snprintf(err, errlen, "model '%s': gradient clipping is AdamW's here, over one network's gradients "
                              "(not a multi-task model's)", m->name);
        return -1;
    }
    int out_layer = m->nheads > 0 ? m->heads[head].layer : m->nlayers - 1;
    p->classes = m->nheads > 0 ? m->heads[head].classes : m->classes;
    p->layers = calloc((size_t)m->nlayers, sizeof *p->layers);
    p->nlayers = m->nlayers;
    bool *needed = calloc((size_t)m->nlayers, sizeof *needed);
    bool *dy_written = calloc((size_t)m->nlayers, sizeof *dy_written);
    assert(p->layers && needed && dy_written);
    int rc = -1;
    if (infer_shapes(m, batch, p, err, errlen) != 0)
        goto done;
    if (out_layer < 0 || out_layer >= m->nlayers) {
        snprintf(err, errlen, "model '%s': head %d names layer %d, which does not exist", m->name, head, out_layer + 1);
        goto done;
    }
    const PlanLayer *last = &p->layers[out_layer];
    int width = last->out.rank == 2 ? last->out.d[1] : shape_count(&last->out);
    /* a vocabulary-parallel head gives its rank's block of the classes */
    const int block = m->tp_vocab > 0 ? (p->classes + m->tp_ranks - 1) / m->tp_ranks : p->classes;
    if (m->tp_vocab > 0 && (m->loss != LOSS_SOFTMAX_XENT || m->nheads > 0 || m->tp_ranks < 2 || m->tp_vocab != p->classes)) {
        snprintf(err, errlen, "model '%s': a vocabulary-parallel head needs one softmax loss over its %d classes "
                 "split over 2 or more ranks", m->name, m->tp_vocab);
        goto done;
    }
    if (m->loss == LOSS_SOFTMAX_XENT && (last->out.rank == 3 || width != block)) {
        snprintf(err, errlen, "model '%s': softmax loss over %d classes%s, layer %d '%s' gives %d values per %s",
                 m->name, block, m->tp_vocab > 0 ? " (a rank's block)" : "", out_layer + 1, last->name, width,
                 last->out.rank == 2 ? "step" : "sample");
        goto done;
    }
    mark_needed(m, out_layer, needed);

    /* Input batch and targets (the target of an autoencoder is its input). */
    size_t in_count = (size_t)shape_count(&m->input) * (size_t)batch;
    p->input = plan_alloc(p, ARENA_INPUT, in_count * sizeof(float)); /* float or int32 ids */
    int rows = last->out.rank == 2 ? batch * last->out.d[0] : batch;
    if (m->loss == LOSS_SOFTMAX_XENT)
        p->target = plan_alloc(p, ARENA_INPUT, (size_t)rows * sizeof(int32_t));
    else if (m->autoencoder)
        p->target = p->input;
    else
        p->target = plan_alloc(p, ARENA_INPUT, (size_t)rows * width * sizeof(float));
    p->loss = plan_alloc(p, ARENA_ACT, sizeof(float));

    /* Forward: each layer lays out its parameters and activations and emits its ops.
     * Layers off the head's path still lay out their parameters (one layout per model). */
    LayerCtx ctx = {.plan = p, .model = m, .batch = batch, .mode = mode};
    for (int i = 0; i < m->nlayers; i++) {
        const LayerSpec *l = &m->layers[i];
        ctx.layer = i;
        ctx.active = needed[i];
        ctx.nin = layer_ninputs(l);
        for (int k = 0; k < ctx.nin; k++) {
            int src = l->inputs[k];
            ctx.x[k] = src < 0 ? p->input : p->layers[src].y;
            ctx.in_shape[k] = src < 0 ? m->input : p->layers[src].out;
            ctx.in_root[k] = root_of(p, src);
        }
        size_t before = p->arena_bytes[ARENA_ACT] + p->arena_bytes[ARENA_ACTGRAD];
        layer_forward(&ctx, l);
        p->layers[i].act_bytes = p->arena_bytes[ARENA_ACT] + p->arena_bytes[ARENA_ACTGRAD] - before;
    }
    bool backward = mode != PLAN_INFERENCE;
    emit_loss(p, m, out_layer, backward);
    /* Penalties on activations are added to the loss once it is computed. */
    for (int i = 0; i < m->nlayers; i++)
        if (needed[i] && m->layers[i].kind == LAYER_SPARSITY)
            layer_emit_penalty(&ctx, i);

    if (backward) {
        /* Backward in reverse layer order. A gradient is overwritten by its first writer
         * and accumulated by later ones (layers with several consumers). */
        dy_written[root_of(p, out_layer)] = true;
        for (int i = out_layer; i >= 0; i--) {
            const LayerSpec *l = &m->layers[i];
            if (!needed[i])
                continue;
            if (!dy_written[root_of(p, i)]) {
                err_layer(err, errlen, i, l, "output is used by no later layer (dead branch)");
                goto done;
            }
            ctx.layer = i;
            ctx.active = true;
            ctx.nin = layer_ninputs(l);
            for (int k = 0; k < ctx.nin; k++) {
                int src = l->inputs[k], r = root_of(p, src);
                ctx.x[k] = src < 0 ? p->input : p->layers[src].y;
                ctx.in_shape[k] = src < 0 ? m->input : p->layers[src].out;
                ctx.in_root[k] = r;
                ctx.need_dx[k] = src >= 0;
                ctx.dx[k] = src >= 0 ? p->layers[r].dy : (BufRef){0};
            }
            layer_backward(&ctx, l, dy_written);
        }
        /* gradients mirror the parameters, offset for offset */
        p->arena_bytes[ARENA_GRAD] = p->arena_bytes[ARENA_PARAM];
        if (mode == PLAN_TRAIN)
            emit_update(p, &m->opt, needed);
    }
    share_workspace_slices(p);
    rc = 0;
done:
    free(needed);
    free(dy_written);
    if (rc != 0)
        plan_free(p);
    return rc;
}

int plan_build_head(const ModelSpec *m, int batch, PlanMode mode, int head, Plan *p, char *err, size_t errlen)
{
    if (m->algorithm == ALGO_FISTA) /* not a layer network: its own expansion */
        return fista_plan(m, batch, p, err, errlen);
    /* Two passes: the first measures the decayed kernels, the second lays the other
     * parameters out after them, so L2 decay covers a prefix of the buffer. */
    if (build_once(m, batch, mode, head, 0, p, err, errlen) != 0)
        return -1;
    size_t tail = align_up(p->decay_bytes);
    plan_free(p);
    return build_once(m, batch, mode, head, tail, p, err, errlen);
}

int plan_build_mode(const ModelSpec *m, int batch, PlanMode mode, Plan *p, char *err, size_t errlen)
{
    return plan_build_head(m, batch, mode, 0, p, err, errlen);
}

int plan_build(const ModelSpec *m, int batch, Plan *p, char *err, size_t errlen)
{
    return plan_build_head(m, batch, PLAN_TRAIN, 0, p, err, errlen);
}

void plan_free(Plan *p)
{
    free(p->ops);
    free(p->layers);
    free(p->params);
    memset(p, 0, sizeof *p);
}

size_t plan_total_bytes(const Plan *p)
{
    size_t t = 0;
    for (int a = 0; a < ARENA_COUNT; a++)
        t += p->arena_bytes[a];
    return t;
}

typedef struct {
    int arena;
    size_t lo, hi;    /* [lo, hi) bytes */
    int first, last;  /* ops touching it */
} LiveBlock;

static int block_cmp(const void *a, const void *b)
{
    const LiveBlock *x = a, *y = b;
    if (x->arena != y->arena)
        return x->arena < y->arena ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

size_t plan_peak_live_bytes(const Plan *p, unsigned arena_mask)
{
    size_t n = 0;
    for (int i = 0; i < p->nops; i++)
        for (int k = 0; k < p->ops[i].nbuf; k++)
            n += p->ops[i].buf[k].bytes > 0 && (arena_mask >> p->ops[i].buf[k].arena & 1u);
    if (n == 0)
        return 0;
    LiveBlock *b = malloc(n * sizeof *b);
    if (!b) { /* no room to analyse: every buffer counts, as a run keeps them */
        size_t t = 0;
        for (int a = 0; a < ARENA_COUNT; a++)
            t += (arena_mask >> a & 1u) ? p->arena_bytes[a] : 0;
        return t;
    }
    n = 0;
    for (int i = 0; i < p->nops; i++)
        for (int k = 0; k < p->ops[i].nbuf; k++) {
            const BufRef *r = &p->ops[i].buf[k];
            if (r->bytes > 0 && (arena_mask >> r->arena & 1u))
                b[n++] = (LiveBlock){r->arena, r->offset, r->offset + r->bytes, i, i};
        }
    /* merge the references that overlap into blocks, each living over all their ops */
    qsort(b, n, sizeof *b, block_cmp);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && b[m - 1].arena == b[i].arena && b[i].lo < b[m - 1].hi) {
            LiveBlock *u = &b[m - 1];
            u->hi = b[i].hi > u->hi ? b[i].hi : u->hi;
            u->first = b[i].first < u->first ? b[i].first : u->first;
            u->last = b[i].last > u->last ? b[i].last : u->last;
        } else
            b[m++] = b[i];
    }
    /* sweep the ops: a block's bytes from its first op through its last */
    double *delta = calloc((size_t)p->nops + 1, sizeof *delta);
    size_t peak = 0;
    if (delta) {
        for (size_t i = 0; i < m; i++) {
            delta[b[i].first] += (double)(b[i].hi - b[i].lo);
            delta[b[i].last + 1] -= (double)(b[i].hi - b[i].lo);
        }
        double live = 0;
        for (int i = 0; i < p->nops; i++) {
            live += delta[i];
            if (live > (double)peak)
                peak = (size_t)(live + 0.5);
        }
        free(delta);
    } else
        for (size_t i = 0; i < m; i++)
            peak += b[i].hi - b[i].lo;
    free(b);
    return peak;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void plan_exec(const Plan *p, void *const base[ARENA_COUNT], double *op_time_s)
{
    plan_exec_range(p, base, 0, p->nops, op_time_s);
}

void plan_exec_range(const Plan *p, void *const base[ARENA_COUNT], int first, int end, double *op_time_s)
{
    assert(ops_get_threads() == p->threads); /* else per-thread workspace would overflow */
    void *bufs[OP_MAX_BUFS];
    for (int i = first; i < end; i++) {
        const PlanOp *o = &p->ops[i];
        for (int b = 0; b < o->nbuf; b++)
            bufs[b] = (char *)base[o->buf[b].arena] + o->buf[b].offset;
        if (op_time_s) {
            double t0 = now_s();
            op_run(&o->desc, bufs, base[ARENA_WS]);
            op_time_s[i] = now_s() - t0;
        } else {
            op_run(&o->desc, bufs, base[ARENA_WS]);
        }
    }
}

const char *plan_op_owner(const Plan *p, int i)
{
    const PlanOp *o = &p->ops[i];
    if (o->layer >= 0)
        return p->layers[o->layer].name;
    return o->desc.phase == PHASE_UPDATE ? "(update)" : "(loss)";
}

void plan_flops(const Plan *p, double flops[PHASE_COUNT])
{
    for (int ph = 0; ph < PHASE_COUNT; ph++)
        flops[ph] = 0;
    for (int i = 0; i < p->nops; i++)
        flops[p->ops[i].desc.phase] += op_cost(&p->ops[i].desc).flops;
}

double plan_forward_macs_per_sample(const Plan *p)
{
    double macs = 0;
    for (int i = 0; i < p->nops; i++) {
        const OpDesc *d = &p->ops[i].desc;
        if (d->phase == PHASE_FWD && (d->kind == OP_GEMM || d->kind == OP_CONV2D))
            macs += op_cost(d).flops / 2;
    }
    return macs / p->batch;
}

int plan_batch_within(const ModelSpec *m, double max_flops, char *err, size_t errlen)
{
    Plan p;
    if (plan_build(m, 1, &p, err, errlen) != 0)
        return -1;
    double f[PHASE_COUNT], per_sample = 0;
    plan_flops(&p, f);
    for (int i = 0; i < PHASE_COUNT; i++)
        per_sample += i == PHASE_UPDATE ? 0 : f[i]; /* the update does not grow with the batch */
    plan_free(&p);
    double b = per_sample > 0 ? floor(max_flops / per_sample) : m->default_batch;
    return b < 1 ? 1 : b > m->default_batch ? m->default_batch : (int)b;
}
