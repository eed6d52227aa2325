/* tests/test_transformer_parallel.c — Megatron-style parallel training of a transformer:
 * the dimensions read back from a model, one tensor-parallel rank's share (its parameters),
 * the activation memory per block against Korthikanti et al.'s formulas, the iteration's
 * composition (pipeline with its bubble and sends, recomputation, sequence parallel,
 * collectives) from a share of known cost, the memory per GPU, and the checks' errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/plan.h"
#include "models/transformer.h"
#include "predictor/transformer_parallel.h"

#define CLOSE(a, b) assert_true(fabs((a) - (b)) <= 1e-9 * fmax(1.0, fabs(b)))

static void test_dims_of_zoo_models(void **state)
{
    TransformerDims d;
    char err[256];
    assert_int_equal(transformer_dims(zoo_find("gpt2"), &d, err, sizeof err), 0);
    assert_int_equal(d.layers, 12);
    assert_int_equal(d.hidden, 768);
    assert_int_equal(d.heads, 12);
    assert_int_equal(d.ffn, 3072);
    assert_int_equal(d.vocab, 50257);
    assert_int_equal(d.seq, 1024);
    assert_true(d.causal);
    assert_true(d.params == 124439808.0);
    assert_int_equal(transformer_dims(zoo_find("bert-base"), &d, err, sizeof err), 0);
    assert_false(d.causal);
    assert_true(d.dropout > 0.09f && d.attn_dropout > 0.09f);
    assert_int_equal(d.seq, 128);
    /* a convnet is refused with a message that names it */
    assert_int_equal(transformer_dims(zoo_find("alexnet-owt"), &d, err, sizeof err), -1);
    assert_non_null(strstr(err, "alexnet-owt is not a transformer"));
}

/* one rank's share holds its heads' QKV columns and projection rows, its MLP columns and
 * rows, the replicated biases and norms, and vocab / t rows of the embedding and head */
static void test_shard_parameters(void **state)
{
    const TransformerDims d = {.layers = 4, .hidden = 64, .heads = 8, .ffn = 256, .vocab = 1024, .seq = 16,
                               .causal = true, .act = ACT_GELU, .dropout = 0.1f, .attn_dropout = 0.1f, .opt = OPT_ADAMW};
    const double h = d.hidden, f = d.ffn;
    for (int t = 1; t <= 8; t *= 2) {
        ModelSpec m;
        char err[256];
        assert_int_equal(transformer_shard_model(&d, t, &m, err, sizeof err), 0);
        Plan p;
        assert_int_equal(plan_build(&m, 2, &p, err, sizeof err), 0);
        double part[SHARD_PART_COUNT] = {0};
        for (int i = 0; i < p.nparams; i++)
            part[transformer_shard_part(&m.layers[p.params[i].layer])] += (double)p.params[i].count;
        const double block = (3 * h * h + 3 * h) / t + h * h / t + h + 4 * h + (h * f + f) / t + f * h / t + h;
        assert_true(part[SHARD_BLOCK] == block);
        if (t == 1)
            assert_true(block == 12 * h * h + 13 * h); /* GPT-2's block with ffn = 4h */
        assert_true(part[SHARD_EMBEDDING] == d.vocab / t * h + d.seq * h);
        assert_true(part[SHARD_HEAD] == 2 * h + d.vocab / t * h);
        plan_free(&p);
        free((void *)m.layers);
    }
    ModelSpec m;
    char err[256];
    assert_int_equal(transformer_shard_model(&d, 3, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "must divide the heads"));
    assert_int_equal(tpar_padded_vocab(50257, 8), 51200);
    assert_int_equal(tpar_padded_vocab(51200, 8), 51200);
    assert_int_equal(tpar_padded_vocab(50257, 1), 50304); /* Megatron's GPT-2 vocabulary */
}

/* Korthikanti et al. 2022, section 4: bytes per block at 16-bit values with 1-byte masks */
static void test_activation_memory_formulas(void **state)
{
    const TransformerDims d = {.layers = 96, .hidden = 12288, .heads = 96, .ffn = 4 * 12288, .vocab = 51200,
                               .seq = 2048, .dropout = 0.1f, .attn_dropout = 0.1f};
    const double s = d.seq, h = d.hidden, a = d.heads, b = 2, t = 8, sbh = s * b * h;
    ParallelConfig c = {.tp = 1, .micro_batch = 2};
    CLOSE(tpar_block_activation_bytes(&d, &c, 2), sbh * (34 + 5 * a * s / h));
    c.tp = 8;
    CLOSE(tpar_block_activation_bytes(&d, &c, 2), sbh * (10 + 24 / t + 5 * a * s / (h * t)));
    c.sp = true;
    CLOSE(tpar_block_activation_bytes(&d, &c, 2), sbh / t * (34 + 5 * a * s / h));
    c.recompute = RECOMPUTE_SELECTIVE;
    CLOSE(tpar_block_activation_bytes(&d, &c, 2), 34 * sbh / t);
    c.sp = false;
    CLOSE(tpar_block_activation_bytes(&d, &c, 2), sbh * (10 + 24 / t));
    c.recompute = RECOMPUTE_FULL;
    CLOSE(tpar_block_activation_bytes(&d, &c, 2), 2 * sbh);
    /* without dropout: no masks, and the softmax's output is what the weights x V reads */
    TransformerDims nd = d;
    nd.dropout = nd.attn_dropout = 0;
    c = (ParallelConfig){.tp = 1, .micro_batch = 2};
    CLOSE(tpar_block_activation_bytes(&nd, &c, 2), sbh * (32 + 2 * a * s / h));
}

/* a system of 8 GPUs a node like a DGX A100 */
static SystemSpec test_system(void)
{
    SystemSpec s = {.devices_per_node = 8, .has_intra = true, .nics_per_node = 8};
    snprintf(s.name, sizeof s.name, "test-node");
    s.device.gpu = true;
    s.device.peak_flops[PREC_FP16] = 312e12;
    s.device.mem_bytes = 80e9;
    s.device.mem_Bps = 2e12;
    s.intra = (LinkSpec){.intra = true, .beta_Bps = 300e9, .alpha_s = 2e-6};
    s.inter = (LinkSpec){.beta_Bps = 25e9, .alpha_s = 5e-6};
    return s;
}

/* an allreduce of `bytes` over n of test_system's GPUs: a ring on its NVLink, reducing at
 * the device's streaming rate (3 bytes moved a byte reduced) */
static double ring(double bytes, int n)
{
    const double f = (n - 1.0) / n;
    return 2 * (n - 1) * 2e-6 + 2 * f * bytes / 300e9 + f * bytes * 3 / 2e12;
}

static const TransformerDims DIMS = {.layers = 16, .hidden = 4096, .heads = 32, .ffn = 16384, .vocab = 51200,
                                     .seq = 2048, .causal = true, .dropout = 0.1f, .attn_dropout = 0.1f,
                                     .opt = OPT_ADAMW};

static ShardCost test_cost(int tp, int micro)
{
    ShardCost sc = {.tp = tp, .micro_batch = micro, .core_fwd_s = 0.002, .seq_fwd_s = 0.001, .seq_bwd_s = 0.002,
                    .block_params = 1e8, .emb_params = 3e7, .head_params = 2e7, .stream_s_per_byte = 1e-12};
    sc.fwd_s[SHARD_EMBEDDING] = 1e-4, sc.bwd_s[SHARD_EMBEDDING] = 2e-4;
    sc.fwd_s[SHARD_BLOCK] = 0.010, sc.bwd_s[SHARD_BLOCK] = 0.020;
    sc.fwd_s[SHARD_HEAD] = 0.003, sc.bwd_s[SHARD_HEAD] = 0.006;
    return sc;
}

static void estimate(ParallelConfig c, int nodes, ParallelEstimate *e)
{
    const SystemSpec sys = test_system();
    char err[256];
    assert_int_equal(tpar_check(&DIMS, &sys, nodes, &c, err, sizeof err), 0);
    const ShardCost sc = test_cost(c.tp, c.micro_batch);
    tpar_estimate(&DIMS, &sys, PREC_FP16, nodes, &c, &sc, e);
    CLOSE(e->iter_s, e->compute_s + e->recompute_s + e->tp_comm_s + e->pp_comm_s + e->bubble_s + e->dp_comm_s +
                         e->optimizer_s);
    CLOSE(e->total_B, e->weights_B + e->grads_B + e->optimizer_B + e->activations_B);
}

static void test_pipeline_and_recomputation(void **state)
{
    ParallelEstimate e, v2, sel, full, sp;
    const ParallelConfig base = {.tp = 8, .pp = 4, .micro_batch = 1, .global_batch = 32, .interleave = 1};
    estimate(base, 4, &e);
    assert_int_equal(e.cfg.dp, 1);
    assert_int_equal(e.micro_batches, 32);
    assert_int_equal(e.layers_per_stage, 4);
    /* the slowest stage is the last (its head outweighs the first's embedding) */
    CLOSE(e.compute_s, 32 * (4 * (0.010 + 0.020) + 0.009));
    assert_true(e.recompute_s == 0);
    /* 1F1B: (p - 1) slots of the stage's work and two sends each */
    const double x = e.pp_comm_s / (2.0 * 32), W = (e.compute_s + e.tp_comm_s) / 32;
    assert_true(x > 0);
    CLOSE(e.bubble_s, 3 * (W + 2 * x));
    /* interleaved in 2 chunks: half the bubble's work, twice the sends */
    ParallelConfig c = base;
    c.interleave = 2;
    estimate(c, 4, &v2);
    CLOSE(v2.pp_comm_s, 2 * e.pp_comm_s);
    CLOSE(v2.bubble_s, 3 * (W / 2 + 2 * x));
    /* selective re-runs the attention core; full the whole forward and its two allreduces */
    c = base, c.recompute = RECOMPUTE_SELECTIVE;
    estimate(c, 4, &sel);
    CLOSE(sel.recompute_s, 32 * 4 * 0.002);
    CLOSE(sel.tp_comm_s, e.tp_comm_s);
    c.recompute = RECOMPUTE_FULL;
    estimate(c, 4, &full);
    CLOSE(full.recompute_s, 32 * 4 * 0.010);
    /* a block's sums: 4 of b s h 16-bit values, 6 with full recomputation; the last stage
     * adds the head's input gradient's and the loss's two (b s and 2 b s fp32 values) */
    const double one = ring(2048.0 * 4096 * 2, 8);
    CLOSE(full.tp_comm_s - e.tp_comm_s, 32 * 4 * 2 * one);
    CLOSE(e.tp_comm_s, 32 * (4 * 4 * one + one + ring(4 * 2048.0, 8) + ring(8 * 2048.0, 8)));
    assert_true(full.activations_B < sel.activations_B && sel.activations_B < e.activations_B);
    /* sequence parallel: the norms, dropouts and adds on 1/8 of the tokens */
    c = base, c.sp = true;
    estimate(c, 4, &sp);
    CLOSE(sp.compute_s, e.compute_s - 32 * 4 * (1 - 1.0 / 8) * (0.001 + 0.002));
    assert_true(sp.activations_B < e.activations_B);
    /* the first stage holds p micro-batches' activations, the last one's and the logits */
    const double blk = tpar_block_activation_bytes(&DIMS, &base, 2);
    assert_true(e.first_stage_fuller);
    const double sbh = 2048.0 * 4096;
    CLOSE(e.activations_B, 4 * blk * 4 + 4 * sbh * (2 + 1));
}

static void test_memory_and_data_parallel(void **state)
{
    ParallelEstimate e, z;
    ParallelConfig c = {.tp = 8, .pp = 1, .micro_batch = 2, .global_batch = 64, .interleave = 1};
    estimate(c, 4, &e); /* 32 GPUs: 4 replicas */
    assert_int_equal(e.cfg.dp, 4);
    assert_int_equal(e.micro_batches, 8);
    const double P = 16 * 1e8 + 3e7 + 2e7;
    CLOSE(e.weights_B, 2 * P);
    CLOSE(e.grads_B, 4 * P);
    CLOSE(e.optimizer_B, 12 * P); /* fp32 master weights and AdamW's two moments */
    assert_true(e.dp_comm_s > 0 && e.bubble_s == 0 && e.pp_comm_s == 0);
    /* sequence parallel turns the lookup's sum into a reduce-scatter, half its sends; the
     * blocks' and the head's sums keep their bytes */
    ParallelEstimate sp;
    c.sp = true;
    estimate(c, 4, &sp);
    CLOSE(sp.tp_comm_s, e.tp_comm_s - 8 * 0.5 * ring(2 * 2048.0 * 4096 * 2, 8));
    c.sp = false;
    c.dist_opt = true;
    estimate(c, 4, &z);
    CLOSE(z.optimizer_B, 3 * P);
    CLOSE(z.optimizer_s, e.optimizer_s * (4 + 2 * 12 + 2) / 4 / (4 + 2 * 12 + 2)); /* a quarter of the pass */
    /* a reduce-scatter of fp32 gradients and an all-gather of 16-bit weights: 3/4 of the allreduce's bytes */
    assert_true(z.dp_comm_s < e.dp_comm_s && z.dp_comm_s > 0.6 * e.dp_comm_s);
    /* model FLOPs: 72 B L s h^2 (1 + s / 6h + V / 12 h L) with ffn = 4h */
    const double B = 64, L = 16, s = 2048, h = 4096, V = 51200;
    CLOSE(e.model_flops, 72 * B * L * s * h * h * (1 + s / (6 * h) + V / (12 * h * L)));
    CLOSE(e.mfu, e.model_flops / (e.iter_s * 32 * 312e12));
    CLOSE(e.tokens_per_s, B * s / e.iter_s);
}

static void test_checks(void **state)
{
    const SystemSpec sys = test_system();
    char err[256];
    ParallelConfig c = {.tp = 16, .pp = 1, .micro_batch = 1, .global_batch = 8, .interleave = 1};
    assert_int_equal(tpar_check(&DIMS, &sys, 2, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "inside a node"));
    c.tp = 8, c.pp = 3;
    assert_int_equal(tpar_check(&DIMS, &sys, 3, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "--pp 3 must divide the 16 blocks"));
    c.pp = 4;
    assert_int_equal(tpar_check(&DIMS, &sys, 3, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "must divide the 24 GPUs"));
    c.global_batch = 7;
    assert_int_equal(tpar_check(&DIMS, &sys, 8, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "multiple of --micro-batch 1 x data parallel 2"));
    c.global_batch = 8, c.interleave = 3;
    assert_int_equal(tpar_check(&DIMS, &sys, 8, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "--interleave 3"));
    c.interleave = 2, c.sp = true;
    assert_int_equal(tpar_check(&DIMS, &sys, 8, &c, err, sizeof err), 0);
    assert_int_equal(c.dp, 2);
    c.tp = 1, c.pp = 4;
    assert_int_equal(tpar_check(&DIMS, &sys, 1, &c, err, sizeof err), 0);
    assert_false(c.sp); /* nothing to split along */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dims_of_zoo_models),
        cmocka_unit_test(test_shard_parameters),
        cmocka_unit_test(test_activation_memory_formulas),
        cmocka_unit_test(test_pipeline_and_recomputation),
        cmocka_unit_test(test_memory_and_data_parallel),
        cmocka_unit_test(test_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
