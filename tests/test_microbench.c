/* tests/test_microbench.c — the measurement protocol (GSL statistics against hand-computed
 * values; mb_time_op on small GEMM, convolution and element-wise descriptors), the shape
 * lists (DeepBench rows checked against MODELS.md §6.4, STREAM's 4x-LLC rule), the
 * calibration driver end to end into a SQLite file, and the machine fingerprint.
 * Nothing here asserts a timing target: the machine is shared and noisy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include <ctype.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "microbench/mb.h"
#include "microbench/rtt_modes.h"
#include "ops/kernels.h"
#include "ops/ops.h"

/* ---- statistics ---- */

static void test_stats_odd(void **state)
{
    (void)state;
    double x[] = {3, 1, 2, 5, 4};
    MbStats s;
    mb_stats(x, 5, &s);
    assert_int_equal(s.n, 5);
    assert_float_equal(s.median, 3.0, 1e-12);
    assert_float_equal(s.mean, 3.0, 1e-12);
    assert_float_equal(s.min, 1.0, 1e-12);
    assert_float_equal(s.max, 5.0, 1e-12);
    assert_float_equal(s.stddev, sqrt(2.5), 1e-12); /* sample sd: sum sq dev 10 / (n-1) */
    /* mean +- t_{0.975,4} * sd / sqrt(5), t_{0.975,4} = 2.776445105 (tables) */
    assert_float_equal(s.ci95_lo, 1.0367568385224393, 1e-8);
    assert_float_equal(s.ci95_hi, 4.9632431614775605, 1e-8);
    /* the sample is sorted in place */
    for (int i = 0; i < 5; i++)
        assert_float_equal(x[i], (double)(i + 1), 0.0);
}

static void test_stats_even(void **state)
{
    (void)state;
    double x[] = {4, 1, 3, 2};
    MbStats s;
    mb_stats(x, 4, &s);
    assert_float_equal(s.median, 2.5, 1e-12); /* mean of the middle two */
    assert_float_equal(s.mean, 2.5, 1e-12);
    assert_float_equal(s.stddev, 1.2909944487358056, 1e-12);
    /* t_{0.975,3} = 3.182446305 */
    assert_float_equal(s.ci95_lo, 0.445739743239121, 1e-8);
    assert_float_equal(s.ci95_hi, 4.5542602567608785, 1e-8);
}

static void test_stats_single(void **state)
{
    (void)state;
    double x[] = {7.5};
    MbStats s;
    mb_stats(x, 1, &s);
    assert_int_equal(s.n, 1);
    assert_float_equal(s.median, 7.5, 0.0);
    assert_float_equal(s.mean, 7.5, 0.0);
    assert_float_equal(s.min, 7.5, 0.0);
    assert_float_equal(s.max, 7.5, 0.0);
    assert_float_equal(s.stddev, 0.0, 0.0);
    assert_float_equal(s.ci95_lo, 7.5, 0.0); /* zero width: no spread information */
    assert_float_equal(s.ci95_hi, 7.5, 0.0);
}

static void test_stats_ci_symmetric_and_t_quantile(void **state)
{
    (void)state;
    double x[] = {1.0e-3, 1.2e-3, 0.9e-3, 1.1e-3, 1.05e-3};
    MbStats s;
    mb_stats(x, 5, &s);
    assert_true(s.ci95_lo <= s.mean && s.mean <= s.ci95_hi);
    assert_float_equal(s.mean - s.ci95_lo, s.ci95_hi - s.mean, 1e-15);
    /* half-width * sqrt(n) / sd is the t quantile for 4 degrees of freedom */
    double t = (s.ci95_hi - s.mean) * sqrt(5.0) / s.stddev;
    assert_float_equal(t, 2.7764451051977987, 1e-6);
    assert_true(s.min <= s.median && s.median <= s.max);
}

static void test_timer(void **state)
{
    (void)state;
    double res = mb_timer_resolution_s();
    assert_true(res > 0.0 && res < 1e-3);
    double a = mb_now_s(), b = mb_now_s();
    assert_true(b >= a);
}

/* ---- mb_time_op ---- */

/* A protocol that keeps each op to a few milliseconds. */
static MbProtocol fast_protocol(void)
{
    MbProtocol p = mb_protocol(MB_QUICK);
    p.target_s = 0.01;
    p.min_sample_s = 1e-4;
    return p;
}

static void check_time_op(const OpDesc *d)
{
    MbProtocol p = fast_protocol();
    double samples[64];
    assert_true(p.max_reps <= 64);
    MeasurementRow m;
    char err[256] = "";
    int rc = mb_time_op(d, &p, 1, &m, samples, err, sizeof err);
    if (rc != 0)
        fail_msg("mb_time_op: %s", err);
    char key[OP_KEY_MAX];
    op_key(d, key);
    assert_string_equal(m.key, key);
    assert_string_equal(m.kind, op_kind_name(d->kind));
    assert_string_equal(m.phase, op_phase_name(d->phase));
    assert_true(m.validated);
    assert_true(m.max_err >= 0.0 && m.max_err <= 1.0);
    assert_true(m.reps >= p.min_reps && m.reps <= p.max_reps);
    assert_int_equal(m.nsamples, m.reps);
    assert_ptr_equal(m.samples, samples);
    assert_true(m.inner >= 1);
    assert_int_equal(m.threads, 1);
    assert_true(m.min_s > 0.0);
    assert_true(m.min_s <= m.median_s && m.median_s <= m.max_s);
    assert_true(m.min_s <= m.mean_s && m.mean_s <= m.max_s);
    assert_true(m.ci95_lo_s <= m.mean_s && m.mean_s <= m.ci95_hi_s);
    OpCost c = op_cost(d);
    assert_float_equal(m.flops, c.flops, 0.0);
    assert_float_equal(m.bytes, c.bytes, 0.0);
    for (int i = 0; i < m.reps; i++)
        assert_true(samples[i] >= m.min_s && samples[i] <= m.max_s);
}

static void test_time_op_gemm(void **state)
{
    (void)state;
    OpDesc nn = op_gemm(PHASE_FWD, 64, 48, 32, false, false, 0.0f);
    OpDesc tn = op_gemm(PHASE_FWD, 33, 17, 65, true, false, 0.0f);
    OpDesc nt_acc = op_gemm(PHASE_FWD, 20, 30, 40, false, true, 1.0f); /* C is read: INOUT */
    check_time_op(&nn);
    check_time_op(&tn);
    check_time_op(&nt_acc);
}

/* A GEMM with a dimension as small as a small batch moves more bytes than it has FLOPs to
 * hide them behind: it is timed cold, with its warm time kept for the cache model, as the
 * memory-bound kinds are; a cube keeps its warm repetitions. */
static void test_time_op_gemm_cold_when_memory_bound(void **state)
{
    (void)state;
    MbProtocol p = fast_protocol();
    double samples[64];
    MeasurementRow m;
    char err[256] = "";
    OpDesc skinny = op_gemm(PHASE_BWD_WEIGHTS, 256, 256, 4, true, false, 0.0f);
    assert_true(op_cost(&skinny).flops < 16 * op_cost(&skinny).bytes);
    assert_int_equal(mb_time_op(&skinny, &p, 1, &m, samples, err, sizeof err), 0);
    assert_true(m.validated && m.warm_s > 0.0);
    OpDesc cube = op_gemm(PHASE_FWD, 128, 128, 128, false, false, 0.0f);
    assert_true(op_cost(&cube).flops > 16 * op_cost(&cube).bytes);
    assert_int_equal(mb_time_op(&cube, &p, 1, &m, samples, err, sizeof err), 0);
    assert_true(m.validated);
    assert_float_equal(m.warm_s, 0.0, 0.0);
}

/* A convolution of low intensity (a 1x1 over few channels, ~5 FLOPs per byte) is timed
 * cold as well, with its warm time kept: in steps its data comes from where the ops
 * before it left them. */
static void test_time_op_conv_cold_when_low_intensity(void **state)
{
    (void)state;
    MbProtocol p = fast_protocol();
    double samples[64];
    MeasurementRow m;
    char err[256] = "";
    OpDesc pointwise = op_conv2d_explicit(PHASE_FWD, 2, 16, 16, 16, 32, 1, 1, 1, 1, 0, 0, 1);
    assert_true(op_cost(&pointwise).flops < 1024 * op_cost(&pointwise).bytes);
    assert_int_equal(mb_time_op(&pointwise, &p, 1, &m, samples, err, sizeof err), 0);
    assert_true(m.validated && m.warm_s > 0.0);
}

static void test_time_op_conv(void **state)
{
    (void)state;
    OpPhase ph[] = {PHASE_FWD, PHASE_BWD_DATA, PHASE_BWD_WEIGHTS};
    for (int i = 0; i < 3; i++) {
        OpDesc d = op_conv2d_explicit(ph[i], 2, 3, 9, 11, 4, 3, 5, 2, 1, 1, 2, 1);
        check_time_op(&d); /* backward constructors accumulate: INOUT outputs */
    }
}

static void test_time_op_eltwise(void **state)
{
    (void)state;
    OpDesc ds[] = {
        op_act(PHASE_FWD, ACT_RELU, 5000),
        op_act(PHASE_BWD_DATA, ACT_SIGMOID, 5000),
        op_act(PHASE_BWD_DATA, ACT_TANH, 4096),
        op_act_in_place(PHASE_FWD, ACT_RELU, 5000), /* fresh-input samples */
        op_act_in_place(PHASE_BWD_DATA, ACT_RELU, 5000),
        op_bias(PHASE_FWD, 2, 8, 49),
        op_bias(PHASE_BWD_WEIGHTS, 2, 8, 49),
        op_sgd(3000, 1e-4f),
        op_rmsprop(3000, 1e-4f, 0.9f, 1e-7f),
        op_zero(PHASE_FWD, 1000),
        op_copy(PHASE_FWD, 1000),
        op_stream(STREAM_TRIAD, 10000, 3.0f),
        op_softmax_xent(PHASE_FWD, 8, 10),  /* int32 labels must be in [0, classes) */
        op_softmax_xent(PHASE_BWD_DATA, 8, 10),
        op_pool2d(PHASE_BWD_DATA, POOL_MAX, 2, 3, 8, 8, 2, 2, PAD_VALID), /* y from forward */
    };
    for (size_t i = 0; i < sizeof ds / sizeof *ds; i++)
        check_time_op(&ds[i]);
}

/* ---- lists ---- */

typedef struct {
    int m, n, k;
    char a, b;
} GemmRow;

/* DeepBench GEMM training_set, all 160 rows of MODELS.md §6.4 (final list state), in order. */
static const GemmRow deepbench_gemm_training[160] = {
    {1760, 16, 1760, 'N', 'N'}, {1760, 32, 1760, 'N', 'N'}, {1760, 64, 1760, 'N', 'N'}, {1760, 128, 1760, 'N', 'N'},
    {1760, 7000, 1760, 'N', 'N'}, {2048, 16, 2048, 'N', 'N'}, {2048, 32, 2048, 'N', 'N'}, {2048, 64, 2048, 'N', 'N'},
    {2048, 128, 2048, 'N', 'N'}, {2048, 7000, 2048, 'N', 'N'}, {2560, 16, 2560, 'N', 'N'}, {2560, 32, 2560, 'N', 'N'},
    {2560, 64, 2560, 'N', 'N'}, {2560, 128, 2560, 'N', 'N'}, {2560, 7000, 2560, 'N', 'N'}, {4096, 16, 4096, 'N', 'N'},
    {4096, 32, 4096, 'N', 'N'}, {4096, 64, 4096, 'N', 'N'}, {4096, 128, 4096, 'N', 'N'}, {4096, 7000, 4096, 'N', 'N'},
    {1760, 16, 1760, 'T', 'N'}, {1760, 32, 1760, 'T', 'N'}, {1760, 64, 1760, 'T', 'N'}, {1760, 128, 1760, 'T', 'N'},
    {1760, 7000, 1760, 'T', 'N'}, {2048, 16, 2048, 'T', 'N'}, {2048, 32, 2048, 'T', 'N'}, {2048, 64, 2048, 'T', 'N'},
    {2048, 128, 2048, 'T', 'N'}, {2048, 7000, 2048, 'T', 'N'}, {2560, 16, 2560, 'T', 'N'}, {2560, 32, 2560, 'T', 'N'},
    {2560, 64, 2560, 'T', 'N'}, {2560, 128, 2560, 'T', 'N'}, {2560, 7000, 2560, 'T', 'N'}, {4096, 16, 4096, 'T', 'N'},
    {4096, 32, 4096, 'T', 'N'}, {4096, 64, 4096, 'T', 'N'}, {4096, 128, 4096, 'T', 'N'}, {4096, 7000, 4096, 'T', 'N'},
    {1760, 7133, 1760, 'N', 'T'}, {2048, 7133, 2048, 'N', 'T'}, {2560, 7133, 2560, 'N', 'T'}, {4096, 7133, 4096, 'N', 'T'},
    {5124, 9124, 1760, 'N', 'N'}, {35, 8457, 1760, 'N', 'N'}, {5124, 9124, 2048, 'N', 'N'}, {35, 8457, 2048, 'N', 'N'},
    {5124, 9124, 2560, 'N', 'N'}, {35, 8457, 2560, 'N', 'N'}, {5124, 9124, 4096, 'N', 'N'}, {35, 8457, 4096, 'N', 'N'},
    {5124, 9124, 1760, 'T', 'N'}, {35, 8457, 1760, 'T', 'N'}, {5124, 9124, 2048, 'T', 'N'}, {35, 8457, 2048, 'T', 'N'},
    {5124, 9124, 2560, 'T', 'N'}, {35, 8457, 2560, 'T', 'N'}, {5124, 9124, 4096, 'T', 'N'}, {35, 8457, 4096, 'T', 'N'},
    {7680, 16, 2560, 'N', 'N'}, {7680, 32, 2560, 'N', 'N'}, {7680, 64, 2560, 'N', 'N'}, {7680, 128, 2560, 'N', 'N'},
    {7680, 16, 2560, 'T', 'N'}, {7680, 32, 2560, 'T', 'N'}, {7680, 64, 2560, 'T', 'N'}, {7680, 128, 2560, 'T', 'N'},
    {3072, 16, 1024, 'N', 'N'}, {3072, 32, 1024, 'N', 'N'}, {3072, 64, 1024, 'N', 'N'}, {3072, 128, 1024, 'N', 'N'},
    {3072, 16, 1024, 'T', 'N'}, {3072, 32, 1024, 'T', 'N'}, {3072, 64, 1024, 'T', 'N'}, {3072, 128, 1024, 'T', 'N'},
    {3072, 7435, 1024, 'N', 'T'}, {7680, 5481, 2560, 'N', 'T'}, {512, 8, 500000, 'N', 'N'}, {1024, 8, 500000, 'N', 'N'},
    {512, 16, 500000, 'N', 'N'}, {1024, 16, 500000, 'N', 'N'}, {512, 8, 500000, 'T', 'N'}, {1024, 8, 500000, 'T', 'N'},
    {512, 16, 500000, 'T', 'N'}, {1024, 16, 500000, 'T', 'N'}, {1024, 700, 512, 'N', 'N'}, {1024, 700, 512, 'T', 'N'},
    {7680, 24000, 2560, 'N', 'N'}, {6144, 24000, 2048, 'N', 'N'}, {4608, 24000, 1536, 'N', 'N'}, {8448, 24000, 2816, 'N', 'N'},
    {3072, 24000, 1024, 'N', 'N'}, {7680, 48000, 2560, 'N', 'N'}, {6144, 48000, 2048, 'N', 'N'}, {4608, 48000, 1536, 'N', 'N'},
    {8448, 48000, 2816, 'N', 'N'}, {3072, 48000, 1024, 'N', 'N'}, {7680, 24000, 2560, 'T', 'N'}, {6144, 24000, 2048, 'T', 'N'},
    {4608, 24000, 1536, 'T', 'N'}, {8448, 24000, 2816, 'T', 'N'}, {3072, 24000, 1024, 'T', 'N'}, {7680, 48000, 2560, 'T', 'N'},
    {6144, 48000, 2048, 'T', 'N'}, {4608, 48000, 1536, 'T', 'N'}, {8448, 48000, 2816, 'T', 'N'}, {3072, 48000, 1024, 'T', 'N'},
    {6144, 16, 2048, 'N', 'N'}, {4608, 16, 1536, 'N', 'N'}, {8448, 16, 2816, 'N', 'N'}, {6144, 32, 2048, 'N', 'N'},
    {4608, 32, 1536, 'N', 'N'}, {8448, 32, 2816, 'N', 'N'}, {6144, 16, 2048, 'T', 'N'}, {4608, 16, 1536, 'T', 'N'},
    {8448, 16, 2816, 'T', 'N'}, {6144, 32, 2048, 'T', 'N'}, {4608, 32, 1536, 'T', 'N'}, {8448, 32, 2816, 'T', 'N'},
    {512, 24000, 2816, 'N', 'N'}, {512, 24000, 2048, 'N', 'N'}, {512, 24000, 2560, 'N', 'N'}, {512, 24000, 1536, 'N', 'N'},
    {1024, 24000, 2816, 'N', 'N'}, {1024, 24000, 2048, 'N', 'N'}, {1024, 24000, 2560, 'N', 'N'}, {1024, 24000, 1536, 'N', 'N'},
    {512, 16, 512, 'N', 'N'}, {1024, 16, 512, 'N', 'N'}, {512, 24000, 2816, 'T', 'N'}, {512, 24000, 2048, 'T', 'N'},
    {512, 24000, 2560, 'T', 'N'}, {512, 24000, 1536, 'T', 'N'}, {1024, 24000, 2816, 'T', 'N'}, {1024, 24000, 2048, 'T', 'N'},
    {1024, 24000, 2560, 'T', 'N'}, {1024, 24000, 1536, 'T', 'N'}, {512, 16, 512, 'N', 'T'}, {1024, 16, 512, 'N', 'T'},
    {512, 48000, 2816, 'N', 'N'}, {512, 48000, 2048, 'N', 'N'}, {512, 48000, 2560, 'N', 'N'}, {512, 48000, 1536, 'N', 'N'},
    {1024, 48000, 2816, 'N', 'N'}, {1024, 48000, 2048, 'N', 'N'}, {1024, 48000, 2560, 'N', 'N'}, {1024, 48000, 1536, 'N', 'N'},
    {512, 32, 512, 'N', 'N'}, {1024, 32, 512, 'N', 'N'}, {512, 48000, 2816, 'T', 'N'}, {512, 48000, 2048, 'T', 'N'},
    {512, 48000, 2560, 'T', 'N'}, {512, 48000, 1536, 'T', 'N'}, {1024, 48000, 2816, 'T', 'N'}, {1024, 48000, 2048, 'T', 'N'},
    {1024, 48000, 2560, 'T', 'N'}, {1024, 48000, 1536, 'T', 'N'}, {512, 32, 512, 'N', 'T'}, {1024, 32, 512, 'N', 'T'},
};

static bool in_deepbench_table(const GemmDesc *g)
{
    for (int i = 0; i < 160; i++) {
        const GemmRow *r = &deepbench_gemm_training[i];
        if (r->m == g->m && r->n == g->n && r->k == g->k && (r->a == 'T') == g->trans_a &&
            (r->b == 'T') == g->trans_b)
            return true;
    }
    return false;
}

static bool list_has_gemm(const OpDesc *ds, int n, int m, int nn, int k, bool ta, bool tb)
{
    for (int i = 0; i < n; i++) {
        const GemmDesc *g = &ds[i].u.gemm;
        if (ds[i].kind == OP_GEMM && g->m == m && g->n == nn && g->k == k && g->trans_a == ta &&
            g->trans_b == tb)
            return true;
    }
    return false;
}

enum { LIST_MAX = 1024 };

static bool in_seed004_dmm(const GemmDesc *g)
{
    for (int i = 0; i < mb_seed004_dmm_count; i++) {
        const MbGemmShape *r = &mb_seed004_dmm[i];
        if (r->m == g->m && r->n == g->n && r->k == g->k && !g->trans_a && !g->trans_b)
            return true;
    }
    return false;
}

static void test_list_gemm_deepbench(void **state)
{
    (void)state;
    static OpDesc ds[LIST_MAX];
    for (int mode = MB_QUICK; mode <= MB_FULL; mode++) {
        int n = mb_list_gemm_deepbench(mode, ds, LIST_MAX);
        assert_true(n > 0 && n <= LIST_MAX);
        assert_int_equal(mb_list_gemm_deepbench(mode, NULL, 0), n); /* count query */
        int ta = 0, tb = 0, from_table = 0;
        for (int i = 0; i < n; i++) {
            assert_int_equal(ds[i].kind, OP_GEMM);
            assert_int_equal(ds[i].phase, PHASE_FWD);
            const bool db = in_deepbench_table(&ds[i].u.gemm);
            if (!db && (mode == MB_QUICK || !in_seed004_dmm(&ds[i].u.gemm)))
                fail_msg("row %d (m=%d n=%d k=%d) is neither DeepBench's nor seed 004's", i, ds[i].u.gemm.m,
                         ds[i].u.gemm.n, ds[i].u.gemm.k);
            from_table += db;
            double gflop = 2.0 * ds[i].u.gemm.m * ds[i].u.gemm.n * (double)ds[i].u.gemm.k / 1e9;
            if (mode != MB_FULL && !in_seed004_dmm(&ds[i].u.gemm)) /* seed 004's five: all of them */
                assert_true(gflop <= (mode == MB_QUICK ? 50.0 : 100.0));
            assert_float_equal(ds[i].u.gemm.beta, 0.0, 0.0);
            ta += ds[i].u.gemm.trans_a;
            tb += ds[i].u.gemm.trans_b;
        }
        assert_true(ta > 0 && tb > 0); /* TN and NT rows are both present */
        /* #5 NN, #24 TN (A transposed), #41 NT (B transposed) in every list */
        assert_true(list_has_gemm(ds, n, 1760, 7000, 1760, false, false));
        assert_true(list_has_gemm(ds, n, 1760, 128, 1760, true, false));
        assert_true(list_has_gemm(ds, n, 1760, 7133, 1760, false, true));
        assert_false(list_has_gemm(ds, n, 1760, 7133, 1760, true, false));
        if (mode == MB_DEFAULT) {
            assert_int_equal(from_table, 109); /* every row up to 100 GFLOP, and seed 004's 5124x9124x2560 */
            assert_true(list_has_gemm(ds, n, 512, 8, 500000, false, false));     /* #79 */
            assert_true(list_has_gemm(ds, n, 512, 24000, 1536, true, false));    /* #134 */
            assert_true(list_has_gemm(ds, n, 3072, 7435, 1024, false, true));    /* #77 */
            assert_false(list_has_gemm(ds, n, 7680, 5481, 2560, false, true));   /* #78: 215 GFLOP */
            assert_true(list_has_gemm(ds, n, 7860, 64, 2560, false, false));     /* seed 004 */
            assert_false(list_has_gemm(ds, n, 8448, 48000, 2816, false, false)); /* 2284 GFLOP */
        }
        if (mode == MB_FULL) {
            assert_int_equal(from_table, 160); /* DeepBench's whole training list */
            assert_true(list_has_gemm(ds, n, 8448, 48000, 2816, false, false));
        }
    }
}

/* deepbench.c against this file's own copy of the GEMM list and the tables' FLOP columns. */
static void test_deepbench_tables(void **state)
{
    (void)state;
    assert_int_equal(mb_deepbench_gemm_train_count, 160);
    assert_int_equal(mb_deepbench_conv_train_count, 94);
    assert_int_equal(mb_deepbench_rnn_train_count, 53);
    assert_int_equal(mb_deepbench_sparse_count, 24);
    for (int i = 0; i < 160; i++) {
        const MbGemmShape *g = &mb_deepbench_gemm_train[i];
        const GemmRow *r = &deepbench_gemm_training[i];
        assert_true(g->m == r->m && g->n == r->n && g->k == r->k && g->ta == (r->a == 'T') && g->tb == (r->b == 'T'));
        /* the tables print 4 significant digits */
        assert_true(fabs(2.0 * g->m * g->n * (double)g->k / 1e9 / g->gflop - 1) < 1e-3);
    }
    for (int i = 0; i < 94; i++) {
        const MbConvShape *c = &mb_deepbench_conv_train[i];
        OpDesc d = mb_conv_shape_desc(c, PHASE_FWD);
        if (fabs(op_cost(&d).flops / 1e9 / c->gflop - 1) >= 1e-3)
            fail_msg("conv row %d: %.6g GFLOP computed, %.6g in the table", i + 1, op_cost(&d).flops / 1e9, c->gflop);
    }
    int cells[3] = {0};
    for (int i = 0; i < 53; i++) {
        const MbRnnShape *r = &mb_deepbench_rnn_train[i];
        const int g = r->cell == MB_RNN_VANILLA ? 1 : r->cell == MB_RNN_LSTM ? 4 : 3;
        assert_true(fabs(2.0 * g * (double)r->hidden * r->hidden * r->batch * r->steps / 1e9 / r->gflop - 1) < 1e-3);
        cells[r->cell]++;
        /* a step's forward GEMM is DeepBench's recurrent part: 2 g H^2 N FLOPs */
        OpDesc ops[8];
        assert_int_equal(mb_rnn_step_ops(r, false, ops, 8), r->cell == MB_RNN_VANILLA ? 3 : 2);
        assert_true(fabs(op_cost(&ops[0]).flops * r->steps / 1e9 / r->gflop - 1) < 1e-3);
        const int nb = mb_rnn_step_ops(r, true, ops, 8);
        assert_int_equal(nb, 4);
        /* backward: the data and the weight GEMMs, each as many FLOPs as the forward one */
        assert_true(op_cost(&ops[1]).flops == op_cost(&ops[2]).flops);
    }
    assert_true(cells[MB_RNN_VANILLA] > 0 && cells[MB_RNN_LSTM] > 0 && cells[MB_RNN_GRU] > 0);
}

static void test_list_gemm_sweep(void **state)
{
    (void)state;
    static OpDesc ds[LIST_MAX];
    int nq = mb_list_gemm_sweep(MB_QUICK, ds, LIST_MAX);
    assert_int_equal(nq, 4 + 27);
    int nd = mb_list_gemm_sweep(MB_DEFAULT, ds, LIST_MAX);
    assert_true(nd > nq && nd <= LIST_MAX);
    bool non_pow2 = false, skinny = false, fc_fwd = false, fc_data = false, fc_weights = false;
    int trans = 0;
    for (int i = 0; i < nd; i++) {
        const GemmDesc *g = &ds[i].u.gemm;
        if (g->m == g->n && g->n == g->k)
            non_pow2 |= (g->m & (g->m - 1)) != 0;
        skinny |= g->m == 16 && g->n == 4096;
        trans += g->trans_a || g->trans_b;
        /* a fully connected layer's three GEMMs at batch 1 with 16384 x 4096 weights */
        fc_fwd |= g->m == 1 && g->n == 16384 && g->k == 4096 && !g->trans_a && !g->trans_b;
        fc_data |= g->m == 1 && g->n == 4096 && g->k == 16384 && g->trans_b;
        fc_weights |= g->m == 16384 && g->n == 4096 && g->k == 1 && g->trans_a;
        assert_true((double)g->m * g->n <= 1 << 26 || (double)g->n * g->k <= 1 << 26 || (double)g->m * g->k <= 1 << 26);
    }
    assert_true(non_pow2 && skinny && fc_fwd && fc_data && fc_weights);
    /* TN and NT on a 3 x 3 x 3 grid, and the small batches' backward GEMMs: 7 batches x 8
     * pairs of widths (not 16384 x 16384) x 2 */
    assert_int_equal(trans, 54 + 112);
}

static void test_list_conv(void **state)
{
    (void)state;
    static OpDesc ds[LIST_MAX];
    for (int mode = MB_QUICK; mode <= MB_FULL; mode++) {
        int n = mb_list_conv_deepbench(mode, ds, LIST_MAX);
        assert_true(n > 0 && n <= LIST_MAX);
        int phases[PHASE_COUNT] = {0};
        bool first_layer_row = false;
        for (int i = 0; i < n; i++) {
            const ConvDesc *c = &ds[i].u.conv;
            assert_int_equal(ds[i].kind, OP_CONV2D);
            phases[ds[i].phase]++;
            if (ds[i].phase == PHASE_BWD_DATA)
                assert_true(c->c > 3); /* DeepBench: no backward-data for first layers */
            assert_false(c->accumulate);
            /* DeepBench #1: W=700 H=161 C=1 N=4 K=32, filter S(width)=20 R(height)=5,
             * stride 2: output 341 (W) x 79 (H) per MODELS.md */
            if (c->c == 1 && c->w == 700 && c->n == 4) {
                first_layer_row = true;
                assert_int_equal(c->h, 161);
                assert_int_equal(c->k, 32);
                assert_int_equal(c->r, 5);
                assert_int_equal(c->s, 20);
                assert_int_equal(c->out_w, 341);
                assert_int_equal(c->out_h, 79);
            }
        }
        assert_true(first_layer_row);
        assert_true(phases[PHASE_FWD] > 0 && phases[PHASE_BWD_DATA] > 0 && phases[PHASE_BWD_WEIGHTS] > 0);
        assert_int_equal(phases[PHASE_FWD], phases[PHASE_BWD_WEIGHTS]);
        assert_true(phases[PHASE_BWD_DATA] < phases[PHASE_FWD]); /* the C=1 rows have none */
        if (mode != MB_QUICK)
            assert_int_equal(phases[PHASE_FWD], 94); /* every row (all are below the default cap) */
    }
}

/* The limits: FMA peak on one core and on all threads; read and triad at a working set
 * inside each level of the given caches and beyond them, and the sweep between. */
static void test_list_limits(void **state)
{
    (void)state;
    static OpDesc ds[LIST_MAX];
    assert_int_equal(mb_list_peak(MB_QUICK, 2, ds, LIST_MAX), 2);
    assert_true(ds[0].u.peak.threads == 1 && ds[1].u.peak.threads == 2);
    assert_int_equal(mb_list_peak(MB_DEFAULT, 1, ds, LIST_MAX), 1);
    const MbCaches c = {.bytes = {32 << 10, 512 << 10, 32 << 20}, .shared_cpus = {1, 1, 8}};
    const int nq = mb_list_memory(MB_QUICK, 2, &c, ds, LIST_MAX);
    /* per level: read, triad, one-core read; then the handoff curve, 64 KiB per thread to
     * twice the LLC over the threads (32 MiB each), by powers of four; then the cross-core
     * curve at the same working sets; then the retention curve: in L2 and in the LLC, 5
     * waits each (0 .. 16 ms); then the shared-write curve at the cross curve's sets */
    assert_int_equal(nq, 4 * 3 + 5 + 5 + 2 * 5 + 5);
    for (int w = 0; w < 2; w++)
        for (int k = 0; k < 5; k++) {
            const MembwDesc *r = &ds[4 * 3 + 10 + 5 * w + k].u.membw;
            assert_true(r->kind == MEMBW_RETAIN && r->threads == 2 && r->passes == 1);
            assert_true(r->bytes_per_thread >= (w ? (size_t)4 << 20 : (size_t)256 << 10));
            assert_true(k == 0 ? r->idle_us == 0 : r->idle_us > r[-1].idle_us);
        }
    assert_int_equal(ds[4 * 3 + 10 + 4].u.membw.idle_us, 16000);
    /* the default list: three working sets (the third half the LLC's share), 8 waits each */
    static OpDesc dd[LIST_MAX];
    const int ndefault = mb_list_memory(MB_DEFAULT, 2, &c, dd, LIST_MAX);
    int retain = 0;
    for (int i = 0; i < ndefault; i++)
        retain += dd[i].kind == OP_MEMBW && dd[i].u.membw.kind == MEMBW_RETAIN;
    assert_int_equal(retain, 3 * 8);
    for (int i = 0; i < 5; i++) {
        const MembwDesc *h = &ds[4 * 3 + i].u.membw, *x = &ds[4 * 3 + 5 + i].u.membw;
        assert_true(h->kind == MEMBW_HANDOFF && h->threads == 2 && h->passes == 1);
        assert_true(h->bytes_per_thread >= ((size_t)64 << 10 << (2 * i)) && h->bytes_per_thread <= (size_t)32 << 20);
        assert_true(x->kind == MEMBW_CROSS && x->threads == 2 && x->bytes_per_thread == h->bytes_per_thread);
    }
    /* the shared-write curve: the cross curve's working sets, last in the list */
    int cross = 0, shared = 0;
    for (int i = 0; i < nq; i++) {
        cross += ds[i].u.membw.kind == MEMBW_CROSS;
        if (ds[i].u.membw.kind == MEMBW_SHARED) {
            assert_true(ds[i].u.membw.threads == 2 && ds[i].u.membw.passes == 1 &&
                        ds[i].u.membw.bytes_per_thread == ds[4 * 3 + 5 + shared].u.membw.bytes_per_thread);
            assert_true(i >= nq - 5); /* after every kernel the indices above name */
            shared++;
        }
    }
    assert_int_equal(shared, cross);
    /* one thread: no other core to read from or to share with */
    static OpDesc one[LIST_MAX];
    const int n1 = mb_list_memory(MB_QUICK, 1, &c, one, LIST_MAX);
    for (int i = 0; i < n1; i++)
        assert_true(one[i].u.membw.kind != MEMBW_CROSS && one[i].u.membw.kind != MEMBW_SHARED);
    /* per thread: half of L1, half of L2, a quarter of the shared L3, 4x L3 over 2 threads */
    const size_t want[] = {16 << 10, 256 << 10, 8 << 20, 64 << 20};
    for (int lv = 0; lv < 4; lv++) {
        const MembwDesc *r = &ds[3 * lv].u.membw, *t = &ds[3 * lv + 1].u.membw;
        assert_true(r->kind == MEMBW_READ && t->kind == MEMBW_TRIAD && r->threads == 2);
        assert_true(r->bytes_per_thread >= want[lv] && r->bytes_per_thread < want[lv] + 192);
        assert_true((double)r->bytes_per_thread * (double)r->passes >= 32.0 * (1 << 20) || r->passes == 1);
        assert_int_equal(ds[3 * lv + 2].u.membw.threads, 1);
    }
    const int nd = mb_list_memory(MB_DEFAULT, 2, &c, ds, LIST_MAX);
    /* read 4 KiB .. 64 MiB per thread; handoff, cross and shared by powers of two;
     * retention at a third working set and at 3 more waits */
    assert_int_equal(nd, nq + 15 + 5 + 5 + 5 + 8 + 2 * 3);
    int cross_d = 0, shared_d = 0;
    for (int i = 0; i < nd; i++) {
        cross_d += ds[i].u.membw.kind == MEMBW_CROSS;
        shared_d += ds[i].u.membw.kind == MEMBW_SHARED;
    }
    assert_int_equal(shared_d, cross_d);
}

static void test_list_rnn_and_sparse(void **state)
{
    (void)state;
    static OpDesc ds[LIST_MAX * 2];
    const int nq = mb_list_rnn_deepbench(MB_QUICK, ds, 2 * LIST_MAX);
    const int nd = mb_list_rnn_deepbench(MB_DEFAULT, ds, 2 * LIST_MAX);
    assert_true(nq > 0 && nd > nq && nd <= 2 * LIST_MAX);
    int kinds[OP_KIND_COUNT] = {0};
    for (int i = 0; i < nd; i++)
        kinds[ds[i].kind]++;
    assert_true(kinds[OP_GEMM] > 0 && kinds[OP_LSTM_CELL] > 0 && kinds[OP_GRU_CELL] > 0 && kinds[OP_ACT] > 0);
    const int sq = mb_list_sparse(MB_QUICK, ds, LIST_MAX), sd = mb_list_sparse(MB_DEFAULT, ds, LIST_MAX);
    assert_int_equal(sq, 3);
    assert_int_equal(sd, 24 + 4);
    for (int i = 0; i < sd; i++) {
        assert_int_equal(ds[i].kind, OP_SPMM);
        const double density = (double)ds[i].u.spmm.nnz_per_row / ds[i].u.spmm.k;
        assert_true(density >= 0.049 && density <= 0.101); /* sparsity 0.9 or 0.95 */
    }
}

static void test_list_stream(void **state)
{
    (void)state;
    static OpDesc ds[LIST_MAX];
    size_t llc = mb_llc_bytes();
    assert_true(llc >= 1024);
    int nq = mb_list_stream(MB_QUICK, ds, LIST_MAX);
    assert_int_equal(nq, STREAM_COUNT);
    int nd = mb_list_stream(MB_DEFAULT, ds, LIST_MAX);
    assert_int_equal(nd, 2 * STREAM_COUNT);
    int kinds[STREAM_COUNT] = {0};
    for (int i = 0; i < nd; i++) {
        assert_int_equal(ds[i].kind, OP_STREAM);
        assert_true(ds[i].u.mem.count * sizeof(float) >= 4 * llc); /* STREAM's rule */
        kinds[ds[i].u.mem.kind]++;
    }
    for (int k = 0; k < STREAM_COUNT; k++)
        assert_int_equal(kinds[k], 2);
}

static void test_list_eltwise(void **state)
{
    (void)state;
    static OpDesc ds[LIST_MAX];
    int nq = mb_list_eltwise(MB_QUICK, ds, LIST_MAX);
    int nd = mb_list_eltwise(MB_DEFAULT, ds, LIST_MAX);
    assert_true(nq > 0 && nd > nq && nd <= LIST_MAX);
    int kinds[OP_KIND_COUNT] = {0};
    for (int i = 0; i < nd; i++) {
        OpCost c = op_cost(&ds[i]);
        assert_true(c.bytes > 0);
        kinds[ds[i].kind]++;
    }
    assert_true(kinds[OP_ACT] > 0 && kinds[OP_BIAS] > 0 && kinds[OP_SGD] > 0 && kinds[OP_RMSPROP] > 0 &&
                kinds[OP_ZERO] > 0 && kinds[OP_COPY] > 0 && kinds[OP_MOMENTUM] > 0 && kinds[OP_ADAM] > 0 &&
                kinds[OP_SOFTMAX_XENT] > 0 && kinds[OP_DROPOUT] > 0 && kinds[OP_AXPBY] > 0 &&
                kinds[OP_ADAMW] > 0 && kinds[OP_SUMSQ] > 0);
    /* a generic CNN's layers: convolutions in three phases, pooling, batch norm, LRN */
    const int cq = mb_list_cnn_sweep(MB_QUICK, ds, LIST_MAX), cd = mb_list_cnn_sweep(MB_DEFAULT, ds, LIST_MAX);
    assert_true(cq > 0 && cd > cq && cd <= LIST_MAX);
    int ck[OP_KIND_COUNT] = {0}, phases[PHASE_COUNT] = {0};
    for (int i = 0; i < cd; i++) {
        ck[ds[i].kind]++;
        if (ds[i].kind == OP_CONV2D)
            phases[ds[i].phase]++;
    }
    assert_true(ck[OP_POOL2D] > 0 && ck[OP_BATCHNORM] > 0 && ck[OP_LRN] > 0);
    /* 83 image convolutions (23 of them depthwise, 10 of 8 groups) and 12 of a sentence
     * CNN, each in three phases */
    assert_true(phases[PHASE_FWD] == 95 && phases[PHASE_BWD_DATA] == 95 && phases[PHASE_BWD_WEIGHTS] == 95);
    int depthwise = 0, grouped = 0;
    for (int i = 0; i < cd; i++)
        if (ds[i].kind == OP_CONV2D && ds[i].u.conv.groups > 1) {
            depthwise += ds[i].u.conv.groups == ds[i].u.conv.c && ds[i].u.conv.groups == ds[i].u.conv.k;
            grouped += ds[i].u.conv.groups == 8;
        }
    assert_int_equal(depthwise, 69);
    assert_int_equal(grouped, 30);
    int seq = 0;
    for (int i = 0; i < cd; i++)
        seq += ds[i].kind == OP_CONV2D && conv2d_is_rows(&ds[i].u.conv);
    assert_int_equal(seq, 36);
    int global = 0; /* the sentence CNN's max over time, two phases, and ResNet's average */
    for (int i = 0; i < cd; i++)
        global += ds[i].kind == OP_POOL2D && op_pool_global(&ds[i]);
    assert_int_equal(global, 24 + 2);
    /* keys are unique within the list (calibration stores one row per key) */
    static char keys[LIST_MAX][OP_KEY_MAX];
    for (int i = 0; i < nd; i++) {
        op_key(&ds[i], keys[i]);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(keys[i], keys[j]);
    }
}

/* The transformer family: every new kind in quick mode (so a quick calibration can price
 * them by the roofline ratio), more shapes in default and full, element counts from 64K to
 * 64M, keys unique, and in the default enough points per fitted group (MIN_FIT_POINTS 5 in
 * cost_model.c) for every phase and operator. */
static void test_list_transformer(void **state)
{
    (void)state;
    static OpDesc ds[LIST_MAX];
    const int nq = mb_list_transformer(MB_QUICK, ds, LIST_MAX);
    int kq[OP_KIND_COUNT] = {0};
    for (int i = 0; i < nq; i++)
        kq[ds[i].kind]++;
    assert_true(kq[OP_BMM] > 0 && kq[OP_GEMM] > 0 && kq[OP_LAYERNORM] > 0 && kq[OP_SOFTMAX] > 0 &&
                kq[OP_ACT] > 0 && kq[OP_BINARY] > 0 && kq[OP_SCALAR] > 0 && kq[OP_EMBEDDING] > 0);
    assert_true(nq <= 48); /* a few: quick calibrations stay short */
    /* the decoder's attention as the layer runs it: strided BMMs and the causal softmax */
    int strided = 0, causal = 0;
    for (int i = 0; i < nq; i++) {
        strided += ds[i].kind == OP_BMM && ds[i].u.bmm.ldc + ds[i].u.bmm.lda > 0;
        causal += ds[i].kind == OP_SOFTMAX && ds[i].u.softmax.causal;
    }
    assert_int_equal(strided, ATTN_BMMS);
    assert_int_equal(causal, 2);
    const int nf = mb_list_transformer(MB_FULL, ds, LIST_MAX);
    const int nd = mb_list_transformer(MB_DEFAULT, ds, LIST_MAX);
    assert_true(nd > nq && nf > nd && nf <= LIST_MAX);
    int per_group[OP_KIND_COUNT][PHASE_COUNT][BIN_COUNT] = {{{0}}};
    size_t lo = SIZE_MAX, hi = 0;
    static char keys[LIST_MAX][OP_KEY_MAX];
    for (int i = 0; i < nd; i++) {
        const OpDesc *d = &ds[i];
        int sub = 0;
        size_t count = 0;
        switch (d->kind) {
        case OP_BMM: assert_true(d->u.bmm.beta == 0.0f); break;
        case OP_EMBEDDING: assert_true(d->u.embed.repeat > 0); break; /* the positional lookup */
        case OP_SOFTMAX_XENT: assert_true(d->u.xent.classes >= 30522); break; /* a vocabulary */
        case OP_ADAMW: case OP_SUMSQ: break; /* the optimizer at 2^27 parameters */
        case OP_GEMM: assert_true(d->u.gemm.bias && d->u.gemm.trans_b); break; /* nn.Linear */
        case OP_LAYERNORM:
            count = (size_t)d->u.ln.n * (size_t)d->u.ln.h;
            assert_true(d->phase == PHASE_FWD || !d->u.ln.accumulate); /* first writers */
            break;
        case OP_SOFTMAX:
            count = (size_t)d->u.softmax.n * (size_t)d->u.softmax.h;
            assert_true(d->phase == PHASE_FWD || !d->u.softmax.accumulate);
            break;
        case OP_ACT: assert_int_equal(d->u.act.act, ACT_GELU); count = d->u.act.count; break;
        case OP_BINARY: sub = d->u.binary.op; count = d->u.binary.count; break;
        case OP_SCALAR: sub = d->u.scalar.op; count = d->u.scalar.count; break;
        default: fail_msg("unexpected kind %s in the transformer list", op_kind_name(d->kind));
        }
        per_group[d->kind][d->kind == OP_BMM || d->kind == OP_GEMM ? 0 : d->phase][sub]++;
        if (count) {
            lo = count < lo ? count : lo;
            hi = count > hi ? count : hi;
        }
        op_key(d, keys[i]);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(keys[i], keys[j]);
    }
    assert_true(lo <= (size_t)65536 + 1024 && hi >= (size_t)64 << 20); /* 64K .. 64M elements */
    assert_true(per_group[OP_BMM][0][0] >= 5 && per_group[OP_GEMM][0][0] >= 5);
    for (int p = PHASE_FWD; p <= PHASE_BWD_WEIGHTS; p++)
        assert_true(per_group[OP_LAYERNORM][p][0] >= 5);
    for (int p = PHASE_FWD; p <= PHASE_BWD_DATA; p++) {
        assert_true(per_group[OP_SOFTMAX][p][0] >= 5 && per_group[OP_ACT][p][0] >= 5);
        for (int op = 0; op < BIN_COUNT; op++)
            assert_true(per_group[OP_BINARY][p][op] >= 5 && per_group[OP_SCALAR][p][op] >= 5);
    }
    /* the element-wise sweep keeps relu, sigmoid and tanh only: GELU is never in place */
    const int ne = mb_list_eltwise(MB_DEFAULT, ds, LIST_MAX);
    for (int i = 0; i < ne; i++)
        assert_true(ds[i].kind != OP_ACT || ds[i].u.act.act != ACT_GELU);
}

/* ---- calibration end to end ---- */

static char tmpdir[256];

static int setup_tmp(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dlperf-test-mb-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A new database <tmpdir>/<name>, its path in path (len bytes). */
static Db *open_tmp_db(const char *name, char *path, size_t len)
{
    char err[512] = "";
    snprintf(path, len, "%s/%s", tmpdir, name);
    Db *db;
    if (db_open(path, &db, err, sizeof err) != 0)
        fail_msg("db_open: %s", err);
    return db;
}

/* The first row of sql (its one parameter bound to arg) on the database at path, read only;
 * query_done closes both. */
static sqlite3_stmt *query_row(const char *path, const char *sql, long long arg, sqlite3 **h)
{
    assert_int_equal(sqlite3_open_v2(path, h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(*h, sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int64(st, 1, arg);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    return st;
}

static void query_done(sqlite3_stmt *st, sqlite3 *h)
{
    sqlite3_finalize(st);
    sqlite3_close(h);
}

static long long query_int(const char *path, const char *sql, long long arg)
{
    sqlite3 *h;
    sqlite3_stmt *st = query_row(path, sql, arg, &h);
    long long v = sqlite3_column_int64(st, 0);
    query_done(st, h);
    return v;
}

typedef struct {
    int calls, last_done, last_total;
    char last_family[24];
} ProgressLog;

static void progress_log(int done, int total, const char *family, const char *key,
                         double elapsed_s, void *ctx)
{
    ProgressLog *pl = ctx;
    assert_non_null(key);
    assert_true(elapsed_s >= 0.0);
    assert_int_equal(done, pl->last_done + 1);
    pl->calls++;
    pl->last_done = done;
    pl->last_total = total;
    snprintf(pl->last_family, sizeof pl->last_family, "%s", family);
}

static int64_t begin_calibration_rounds(Db *db, int rounds)
{
    MachineRow mr;
    mb_machine_detect(&mr);
    assert_int_equal(db_machine_upsert(db, &mr), 0);
    CalibrationRow c;
    memset(&c, 0, sizeof c);
    c.machine_id = mr.id;
    c.rounds = rounds;
    snprintf(c.mode, sizeof c.mode, "quick");
    mb_software_detect(&c.sw, 1);
    assert_int_equal(db_calibration_begin(db, &c), 0);
    return c.id;
}

static int64_t begin_calibration(Db *db) { return begin_calibration_rounds(db, 1); }

/* mb_calibrate of fams into calibration cal on 1 thread, progress into *pl; must succeed. */
static void calibrate_ok(Db *db, int64_t cal, const MbProtocol *p, const MbFamily *fams, int nfams, ProgressLog *pl)
{
    char err[512] = "";
    volatile sig_atomic_t stop = 0;
    const int rc = mb_calibrate(db, cal, p, 1, fams, nfams, progress_log, pl, &stop, err, sizeof err);
    if (rc != 0)
        fail_msg("mb_calibrate: %d %s", rc, err);
}

static void test_calibrate_end_to_end(void **state)
{
    (void)state;
    char path[512], err[512] = "";
    Db *db = open_tmp_db("cal.db", path, sizeof path);
    int64_t cal = begin_calibration(db);

    /* two families sharing the relu key: it is measured once, under family "a" */
    OpDesc fa[] = {op_gemm(PHASE_FWD, 32, 24, 16, false, false, 0.0f),
                   op_act(PHASE_FWD, ACT_RELU, 4096)};
    OpDesc fb[] = {op_act(PHASE_FWD, ACT_RELU, 4096), op_sgd(4096, 1e-4f),
                   op_sgd(4096, 1e-4f) /* duplicate within a family too */};
    MbFamily fams[] = {{"a", fa, 2, false}, {"b", fb, 3, false}};
    MbProtocol p = fast_protocol();
    ProgressLog pl = {0};
    calibrate_ok(db, cal, &p, fams, 2, &pl);
    assert_int_equal(pl.calls, 3);
    assert_int_equal(pl.last_done, 3);
    assert_int_equal(pl.last_total, 3);
    assert_string_equal(pl.last_family, "b");

    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM measurement WHERE calibration_id = ?", cal), 3);
    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM measurement WHERE calibration_id = ?"
                                     " AND family = 'a'", cal), 2);
    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM measurement WHERE calibration_id = ?"
                                     " AND validated = 1 AND threads = 1", cal), 3);
    char relu_key[OP_KEY_MAX], sql[512];
    op_key(&fa[1], relu_key);
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM measurement WHERE calibration_id = ? AND"
                              " family = 'a' AND key = '%s'", relu_key);
    assert_int_equal(query_int(path, sql, cal), 1);
    /* every kept sample is stored */
    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM sample JOIN measurement ON id ="
                                     " measurement_id WHERE calibration_id = ?", cal),
                     query_int(path, "SELECT SUM(reps) FROM measurement WHERE calibration_id = ?", cal));

    /* a stop requested before the first kernel: returns 1, stores nothing */
    int64_t cal2 = begin_calibration(db);
    volatile sig_atomic_t stop = 1;
    ProgressLog pl2 = {0};
    const int rc = mb_calibrate(db, cal2, &p, 1, fams, 2, progress_log, &pl2, &stop, err, sizeof err);
    assert_int_equal(rc, 1);
    assert_int_equal(pl2.calls, 0);
    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM measurement WHERE calibration_id = ?", cal2), 0);
    db_close(db);
}

/* Rounds: every kernel measured once per pass; its samples pooled into one stored row
 * (at least min_reps per pass), and the calibration records its rounds. */
/* A calibration in rounds prices a kernel by the median of its passes' medians: a pass
 * in a burst that took more samples (as a slow pass does, its CI wider) has one vote. */
static void test_pass_median(void **state)
{
    (void)state;
    const double t[] = {637, 690, 669, 726, 746, 676, 737, 699, 423, 414, 422, 422, 425, 421};
    const int round[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2};
    double scratch[14];
    assert_float_equal(mb_pass_median(t, round, 14, 3, NULL, NULL, scratch), 422.0, 1e-12); /* passes 694.5, 422, 422 */
    MbStats st; /* the pooled median followed the slow pass */
    memcpy(scratch, t, sizeof t);
    mb_stats(scratch, 14, &st);
    assert_true(st.median > 600);
    assert_float_equal(mb_pass_median(t, round, 8, 3, NULL, NULL, scratch), 694.5, 1e-12); /* one pass only */
    assert_float_equal(mb_pass_median(t, round, 11, 2, NULL, NULL, scratch), 0.5 * (694.5 + 422.0), 1e-12);
    assert_float_equal(mb_pass_median(t, round, 0, 3, NULL, NULL, scratch), 0.0, 0.0);
}

/* Passes timed with the cores apart are left out of the price, unless every pass was. */
static void test_pass_median_far(void **state)
{
    (void)state;
    const double t[] = {637, 690, 669, 726, 746, 676, 737, 699, 423, 414, 422, 422, 425, 421};
    const int round[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2};
    double scratch[14];
    const bool far1[3] = {false, true, false}, far0[3] = {true, false, false}, all[3] = {true, true, true};
    assert_float_equal(mb_pass_median(t, round, 14, 3, far1, NULL, scratch), 0.5 * (694.5 + 422.0), 1e-12);
    assert_float_equal(mb_pass_median(t, round, 14, 3, far0, NULL, scratch), 422.0, 1e-12);
    assert_float_equal(mb_pass_median(t, round, 14, 3, all, NULL, scratch), 422.0, 1e-12); /* as with none */
    /* the only pass with samples is far: it stands */
    assert_float_equal(mb_pass_median(t, round, 8, 3, far0, NULL, scratch), 694.5, 1e-12);
}

/* How far a kernel's passes disagree: the slowest pass's median over the fastest's, the
 * marked passes and samples left out (never counted back in, unlike the price), 1 with
 * fewer than two passes: alexnet-owt's GEMM of stop 44, near passes 48.1 and 77.7 ms. */
static void test_pass_split(void **state)
{
    (void)state;
    const double t[] = {47.5, 48.1, 48.7, 55.0, 57.5, 61.4, 67.7, 77.7, 84.9, 40.0};
    const int round[] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 2};
    double scratch[10];
    const bool apart1[3] = {false, true, false}, all[3] = {true, true, true};
    bool sample_off[10] = {false};
    sample_off[9] = true; /* pass 2's last sample taken apart */
    assert_float_equal(mb_pass_split(t, round, 9, 3, apart1, NULL, scratch), 77.7 / 48.1, 1e-12);
    assert_float_equal(mb_pass_split(t, round, 10, 3, apart1, sample_off, scratch), 77.7 / 48.1, 1e-12);
    /* unmarked, pass 2's medians with its fast sample: (67.7 + 77.7) / 2 */
    assert_float_equal(mb_pass_split(t, round, 10, 3, apart1, NULL, scratch), 0.5 * (67.7 + 77.7) / 48.1, 1e-12);
    assert_float_equal(mb_pass_split(t, round, 9, 3, NULL, NULL, scratch), 77.7 / 48.1, 1e-12); /* 57.5 between */
    assert_float_equal(mb_pass_split(t, round, 3, 3, NULL, NULL, scratch), 1.0, 0.0);   /* one pass */
    assert_float_equal(mb_pass_split(t, round, 9, 3, all, NULL, scratch), 1.0, 0.0);    /* none left */
    assert_float_equal(mb_pass_split(t, round, 0, 3, NULL, NULL, scratch), 1.0, 0.0);
}

/* Samples taken with the cores apart (by the probes around each) are left out of their
 * pass's median, a pass left with none has no vote, and all count where every one is
 * marked; with a pass marked too, only the samples of the others. */
static void test_pass_median_samples(void **state)
{
    (void)state;
    /* pass 0 moved mid-pass: three samples near (420..430), five apart (690..750) */
    const double t[] = {425, 690, 430, 726, 746, 420, 737, 699, 423, 414, 422, 422, 425, 421};
    const int round[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2};
    bool apart[14] = {false, true, false, true, true, false, true, true};
    double scratch[14];
    /* unmarked: pass 0's median is a mixture, between its near and apart samples */
    assert_float_equal(mb_pass_median(t, round, 8, 1, NULL, NULL, scratch), 0.5 * (690 + 699), 1e-12);
    assert_float_equal(mb_pass_median(t, round, 8, 1, NULL, apart, scratch), 425.0, 1e-12); /* near samples */
    bool near[14];
    for (int i = 0; i < 14; i++)
        near[i] = !apart[i];
    assert_float_equal(mb_pass_median(t, round, 8, 1, NULL, near, scratch), 726.0, 1e-12); /* apart samples */
    /* passes 1 and 2 all near: pass 0 votes 425 -> median of 425, 422, 422 */
    assert_float_equal(mb_pass_median(t, round, 14, 3, NULL, apart, scratch), 422.0, 1e-12);
    /* every sample marked: all count, as with no mark */
    bool all[14];
    for (int i = 0; i < 14; i++)
        all[i] = true;
    assert_float_equal(mb_pass_median(t, round, 14, 3, NULL, all, scratch),
                       mb_pass_median(t, round, 14, 3, NULL, NULL, scratch), 1e-12);
    /* pass 2 marked (one core) and pass 0's apart samples: 425 and pass 1's 422 */
    const bool off2[3] = {false, false, true};
    assert_float_equal(mb_pass_median(t, round, 14, 3, off2, apart, scratch), 0.5 * (425 + 422), 1e-12);
    /* round NULL: every sample from pass 0 */
    assert_float_equal(mb_pass_median(t, NULL, 8, 1, NULL, apart, scratch), 425.0, 1e-12);
}

/* The placement probe: nothing to measure on one thread; on two, a round trip that took
 * some time and came back (no timing bound: a shared machine's is anything). */
static void test_core_rtt(void **state)
{
    (void)state;
    assert_float_equal(mb_core_rtt_ns(1), 0.0, 0.0);
    const double ns = mb_core_rtt_ns(2);
    assert_true(ns > 0 && isfinite(ns));
}

/* The core share: nothing to compare on one thread; on two, a ratio of two bursts' times
 * (no timing bound: on a shared machine the lone burst can be the slowed one, and a bound
 * of 0.8 failed there one run in three). */
static void test_core_share(void **state)
{
    (void)state;
    assert_float_equal(mb_core_share(1), 0.0, 0.0);
    const double share = mb_core_share(2);
    assert_true(isfinite(share) && share > 0);
}

static void test_calibrate_rounds(void **state)
{
    (void)state;
    char path[512], err[512] = "";
    Db *db = open_tmp_db("rounds.db", path, sizeof path);
    int64_t cal = begin_calibration(db);
    OpDesc fa[] = {op_gemm(PHASE_FWD, 32, 24, 16, false, false, 0.0f), op_act_in_place(PHASE_FWD, ACT_RELU, 4096)};
    MbFamily fams[] = {{"a", fa, 2, false}};
    MbProtocol p = fast_protocol();
    p.rounds = 3;
    ProgressLog pl = {0};
    calibrate_ok(db, cal, &p, fams, 1, &pl);
    assert_int_equal(pl.calls, 6); /* 2 kernels x 3 passes */
    assert_int_equal(pl.last_total, 6);
    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM measurement WHERE calibration_id = ?", cal), 2);
    const int per_pass = p.min_reps / 3 > 2 ? p.min_reps / 3 : 2;
    assert_true(query_int(path, "SELECT MIN(reps) FROM measurement WHERE calibration_id = ?", cal) >= 3 * per_pass);
    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM sample JOIN measurement ON id ="
                                     " measurement_id WHERE calibration_id = ?", cal),
                     query_int(path, "SELECT SUM(reps) FROM measurement WHERE calibration_id = ?", cal));
    /* each sample records its pass, in time order: every kernel has samples of passes 0, 1
     * and 2, and no sample of a later pass comes before one of an earlier pass */
    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM (SELECT measurement_id FROM sample JOIN measurement ON"
                                     " id = measurement_id WHERE calibration_id = ? GROUP BY measurement_id"
                                     " HAVING COUNT(DISTINCT round) = 3 AND MIN(round) = 0 AND MAX(round) = 2)", cal),
                     2);
    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM sample a JOIN sample b ON a.measurement_id ="
                                     " b.measurement_id AND a.rep < b.rep AND a.round > b.round JOIN measurement m"
                                     " ON m.id = a.measurement_id WHERE m.calibration_id = ?", cal),
                     0);
    db_close(db);

    /* the calibration row keeps its rounds */
    if (db_open(path, &db, err, sizeof err) != 0)
        fail_msg("db_open: %s", err);
    const int64_t id = begin_calibration_rounds(db, 3);
    assert_int_equal(db_calibration_finish(db, id, "complete"), 0);
    CalibrationRow got;
    MachineRow mr;
    mb_machine_detect(&mr);
    assert_int_equal(db_machine_upsert(db, &mr), 0);
    assert_int_equal(db_calibration_latest(db, mr.id, 1, &got), 0);
    assert_int_equal(got.id, id);
    assert_int_equal(got.rounds, 3);
    db_close(db);
}

/* A kernel larger than the memory is refused before anything is allocated, and a
 * calibration leaves it out (warning) and stores the others. 2^38 floats: 1 TiB. */
/* The host, played by a fake probe: the cores near for the first five probes (two modes
 * need a few probes each: microbench/rtt_modes.h; the first kernel's first samples near),
 * then apart for the rest of the scheduled passes, then, in catch_up_near, near again. */
static int fake_probes;
static bool fake_near_again;
static double fake_rtt_ns(int threads)
{
    (void)threads;
    return fake_probes++ < 5 || fake_near_again ? 50.0 : 400.0;
}
static double fake_share(int threads)
{
    (void)threads;
    return 1.0; /* a core each */
}

typedef struct {
    bool near_after_passes; /* the cores come back near once the scheduled passes end */
    volatile sig_atomic_t *stop_at_catch_up; /* non-NULL: set after the first catch-up pass */
    int scheduled, catch_ups;
} CatchUpLog;

static void catch_up_progress(int done, int total, const char *family, const char *key, double elapsed_s, void *ctx)
{
    (void)key, (void)elapsed_s, (void)done;
    CatchUpLog *l = ctx;
    if (strcmp(family, "catch-up") == 0) {
        l->catch_ups++;
        if (l->stop_at_catch_up)
            *l->stop_at_catch_up = 1;
    } else if (++l->scheduled == total && l->near_after_passes)
        fake_near_again = true;
}

static void query_text(const char *path, const char *sql, long long arg, char *out, size_t len)
{
    sqlite3 *h;
    sqlite3_stmt *st = query_row(path, sql, arg, &h);
    snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
    query_done(st, h);
}

/* Kernels that the scheduled passes leave with fewer than two near passes (or with an even
 * count split by more than the protocol's catchup_split) are timed again once the cores are
 * near, up to two more passes each, and priced from their near passes;
 * where the cores never come back near, they are stored as the scheduled passes left them
 * once the catch-up's time is up; a stop during the catch-up keeps them all. */
static void test_calibrate_near_catch_up(void **state)
{
    (void)state;
    char path[512], err[512] = "";
    Db *db = open_tmp_db("catchup.db", path, sizeof path);
    OpDesc ops[] = {op_act(PHASE_FWD, ACT_RELU, 4096), op_sgd(4096, 1e-4f)};
    MbFamily fams[] = {{"a", ops, 2, false}};
    MbProtocol p = fast_protocol();
    p.rounds = 2;
    p.catchup_split = 0; /* no tie-break: the split of two near passes is the host's (below) */
    p.min_reps = p.max_reps = 16; /* 8 samples a pass: 9 probes */
    mb_placement_fake = (MbPlacementProbes){fake_rtt_ns, fake_share};
    for (int near_again = 1; near_again >= 0; near_again--) {
        fake_probes = 0;
        fake_near_again = false;
        const int64_t cal = begin_calibration_rounds(db, 2);
        CatchUpLog l = {.near_after_passes = near_again};
        volatile sig_atomic_t stop = 0;
        const int rc = mb_calibrate(db, cal, &p, 2, fams, 1, catch_up_progress, &l, &stop, err, sizeof err);
        if (rc != 0)
            fail_msg("mb_calibrate: %d %s", rc, err);
        assert_int_equal(l.scheduled, 4);
        assert_int_equal(query_int(path, "SELECT COUNT(*) FROM measurement WHERE calibration_id = ?", cal), 2);
        char relu[OP_KEY_MAX], sgd[OP_KEY_MAX], sql[512], letters[16];
        op_key(&ops[0], relu);
        op_key(&ops[1], sgd);
        /* relu: its first sample near, the rest apart (na); sgd: apart throughout (aa) */
        snprintf(sql, sizeof sql, "SELECT pass_placement FROM measurement WHERE calibration_id = ? AND key = '%s'",
                 relu);
        query_text(path, sql, cal, letters, sizeof letters);
        assert_string_equal(letters, near_again ? "nan" : "na");
        snprintf(sql, sizeof sql, "SELECT pass_placement FROM measurement WHERE calibration_id = ? AND key = '%s'",
                 sgd);
        query_text(path, sql, cal, letters, sizeof letters);
        assert_string_equal(letters, near_again ? "aann" : "aa");
        assert_int_equal(l.catch_ups, near_again ? 3 : 0);
        /* every pass's samples stored, each with its pass; sgd's far passes, and its apart
         * price from them */
        assert_int_equal(query_int(path, "SELECT COUNT(*) FROM sample JOIN measurement ON id ="
                                         " measurement_id WHERE calibration_id = ?", cal),
                         query_int(path, "SELECT SUM(reps) FROM measurement WHERE calibration_id = ?", cal));
        snprintf(sql, sizeof sql, "SELECT MAX(round) FROM sample JOIN measurement ON id = measurement_id"
                                  " WHERE calibration_id = ? AND key = '%s'", sgd);
        assert_int_equal(query_int(path, sql, cal), near_again ? 3 : 1);
        snprintf(sql, sizeof sql, "SELECT far_passes * 10 + (apart_s > 0) FROM measurement WHERE calibration_id = ?"
                                  " AND key = '%s'", sgd);
        assert_int_equal(query_int(path, sql, cal), 21);
        if (near_again) { /* sgd's near price lies within its catch-up passes' samples */
            snprintf(sql, sizeof sql, "SELECT (SELECT median_s FROM measurement WHERE id = m.id) BETWEEN"
                                      " (SELECT MIN(time_s) FROM sample WHERE measurement_id = m.id AND round >= 2) AND"
                                      " (SELECT MAX(time_s) FROM sample WHERE measurement_id = m.id AND round >= 2)"
                                      " FROM measurement m WHERE calibration_id = ? AND key = '%s'", sgd);
            assert_int_equal(query_int(path, sql, cal), 1);
        }
    }
    /* a stop during the catch-up: returns 1 with every kernel stored, the one caught up
     * with its catch-up pass */
    fake_probes = 0;
    fake_near_again = false;
    const int64_t cal = begin_calibration_rounds(db, 2);
    volatile sig_atomic_t stop = 0;
    CatchUpLog l = {.near_after_passes = true, .stop_at_catch_up = &stop};
    assert_int_equal(mb_calibrate(db, cal, &p, 2, fams, 1, catch_up_progress, &l, &stop, err, sizeof err), 1);
    assert_int_equal(l.catch_ups, 1);
    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM measurement WHERE calibration_id = ?", cal), 2);
    assert_int_equal(query_int(path, "SELECT SUM(LENGTH(pass_placement)) FROM measurement WHERE calibration_id = ?",
                               cal), 5);
    /* the tie-break: with a split below 1 every even count of near passes takes one more
     * (relu's two, after its catch-up, a third; sgd's two came from both catch-up passes:
     * none left), and the price is the median of the odd count */
    fake_probes = 0;
    fake_near_again = false;
    p.catchup_split = 0.5;
    const int64_t cal_split = begin_calibration_rounds(db, 2);
    CatchUpLog ls = {.near_after_passes = true};
    stop = 0;
    assert_int_equal(mb_calibrate(db, cal_split, &p, 2, fams, 1, catch_up_progress, &ls, &stop, err, sizeof err), 0);
    char relu[OP_KEY_MAX], sql[512], letters[16];
    op_key(&ops[0], relu);
    snprintf(sql, sizeof sql, "SELECT pass_placement FROM measurement WHERE calibration_id = ? AND key = '%s'", relu);
    query_text(path, sql, cal_split, letters, sizeof letters);
    assert_string_equal(letters, "nann");
    assert_int_equal(ls.catch_ups, 4);
    mb_placement_fake = (MbPlacementProbes){0};
    db_close(db);
}

/* The wait for near (calibrate's catch-up, validate's rounds): true at once where the cores
 * are near, true after the probes that find them apart where they come back, false once the
 * deadline passes where they do not (having slept, not spun, through it), false with one
 * thread or no near mark. With a hold, near must last that long at every probe: a near
 * reading between apart ones starts the hold again. */
static int wait_probes;
static const char *wait_script; /* probe i reads wait_script[i] ('a' apart, 'n' near), 'n' past its end */
static double wait_rtt_ns(int threads)
{
    (void)threads;
    const int i = wait_probes++;
    return i < (int)strlen(wait_script) && wait_script[i] == 'a' ? 400.0 : 50.0;
}

static void test_wait_until_near(void **state)
{
    (void)state;
    mb_placement_fake = (MbPlacementProbes){wait_rtt_ns, fake_share};
    wait_probes = 0, wait_script = "";
    assert_true(mb_wait_until_near(2, 60, 0, mb_now_s() + 10, NULL));
    assert_int_equal(wait_probes, 1);
    wait_probes = 0, wait_script = "aaa"; /* apart for three probes: near at the fourth */
    double t0 = mb_now_s();
    assert_true(mb_wait_until_near(2, 60, 0, t0 + 10, NULL));
    assert_int_equal(wait_probes, 4);
    assert_true(mb_now_s() - t0 >= 3 * MB_NEAR_POLL_S * 0.9);
    /* a hold of two polls: the near reading between apart ones does not count; near from the
     * fifth probe on, held at the seventh (two polls later) */
    wait_probes = 0, wait_script = "anaa";
    t0 = mb_now_s();
    assert_true(mb_wait_until_near(2, 60, 2 * MB_NEAR_POLL_S * 0.99, t0 + 10, NULL));
    assert_int_equal(wait_probes, 7);
    assert_true(mb_now_s() - t0 >= 6 * MB_NEAR_POLL_S * 0.9);
    wait_probes = 0, wait_script = "nanananananananananananananana"; /* never near for long */
    assert_false(mb_wait_until_near(2, 60, 2 * MB_NEAR_POLL_S * 0.99, mb_now_s() + 1.0, NULL));
    wait_probes = 0, wait_script = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"; /* never near: the deadline */
    t0 = mb_now_s();
    const clock_t cpu0 = clock();
    assert_false(mb_wait_until_near(2, 60, 0, t0 + 1.0, NULL));
    const double waited = mb_now_s() - t0;
    assert_true(waited >= 1.0 - MB_NEAR_POLL_S && waited < 1.0 + MB_NEAR_POLL_S);
    assert_true((double)(clock() - cpu0) / CLOCKS_PER_SEC < 0.5 * waited); /* asleep */
    volatile sig_atomic_t stop = 1; /* a stop: after one probe */
    wait_probes = 0;
    assert_false(mb_wait_until_near(2, 60, 0, mb_now_s() + 10, &stop));
    assert_int_equal(wait_probes, 1);
    assert_false(mb_wait_until_near(1, 60, 0, mb_now_s() + 10, NULL)); /* nothing to wait for */
    assert_false(mb_wait_until_near(2, 0, 0, mb_now_s() + 10, NULL));
    mb_placement_fake = (MbPlacementProbes){0};
}

/* Played-back hosts, each a thousand probes. The EPYC VMs: near (x1-1.5) or apart (x4-10)
 * for stretches: two modes, split between them. The Xeon VM: one mode with one probe at 0.3x
 * the rest, where the ratio to the fastest probe classed nearly every sample apart: one
 * mode, nothing acted on. A single mode with a long tail: one. Too few probes: one. */
static void lognormal_probes(gsl_rng *r, double *out, int n, double median_ns, double sigma)
{
    for (int i = 0; i < n; i++)
        out[i] = gsl_ran_lognormal(r, log(median_ns), sigma);
}

static void test_rtt_modes(void **state)
{
    (void)state;
    enum { N = 1000 };
    static double v[N], scratch[N];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    MbRttModes m;
    /* EPYC-like: 70% near at 100 ns, 30% apart at 600 ns, interleaved in stretches */
    lognormal_probes(r, v, 700, 100, 0.12);
    lognormal_probes(r, v + 700, 300, 600, 0.2);
    mb_rtt_modes(v, N, scratch, &m);
    assert_true(m.two_modes);
    assert_true(m.near_ns > 90 && m.near_ns < 110);
    assert_true(m.apart_ns > 540 && m.apart_ns < 660);
    assert_true(m.split_ns > 150 && m.split_ns < 400);
    assert_true(fabs(m.apart_share - 0.3) < 0.02);
    assert_true(fabs(mb_rtt_near_mark(&m) * MB_FAR_RTT - m.split_ns) < 1e-9);
    /* Xeon-like: one mode at 200 ns, one probe at 60 ns */
    v[0] = 60;
    lognormal_probes(r, v + 1, N - 1, 200, 0.15);
    int old_apart = 0;
    for (int i = 0; i < N; i++)
        old_apart += v[i] >= MB_FAR_RTT * 60;
    assert_true(old_apart > N / 2); /* what the ratio to the fastest made of it */
    mb_rtt_modes(v, N, scratch, &m);
    assert_false(m.two_modes);
    assert_true(mb_rtt_near_mark(&m) == 0);
    assert_true(m.near_ns > 180 && m.near_ns < 220);
    char line[256];
    mb_rtt_modes_describe(&m, line, sizeof line);
    assert_non_null(strstr(line, "one mode"));
    /* one mode with a long tail */
    lognormal_probes(r, v, N, 200, 0.5);
    mb_rtt_modes(v, N, scratch, &m);
    assert_false(m.two_modes);
    /* a small apart mode still counts (3% of the probes, x5) */
    lognormal_probes(r, v, 970, 100, 0.1);
    lognormal_probes(r, v + 970, 30, 500, 0.1);
    mb_rtt_modes(v, N, scratch, &m);
    assert_true(m.two_modes);
    assert_true(fabs(m.apart_share - 0.03) < 0.005);
    /* too few probes, and no probes (zeros: not probed) */
    mb_rtt_modes(v, MB_RTT_MODES_MIN_PROBES - 1, scratch, &m);
    assert_false(m.two_modes);
    for (int i = 0; i < N; i++)
        v[i] = 0;
    mb_rtt_modes(v, N, scratch, &m);
    assert_int_equal(m.probes, 0);
    assert_false(m.two_modes);
    gsl_rng_free(r);
}

/* A calibration on the played-back Xeon host (one mode and one fast outlier) classes no
 * pass apart and stores no near mark, so validate waits for nothing; on a host with two
 * modes it classes the apart passes (test_calibrate_near_catch_up). */
static gsl_rng *xeon_rng;
static int xeon_probes;
static double xeon_rtt_ns(int threads)
{
    (void)threads;
    return xeon_probes++ == 0 ? 60.0 : gsl_ran_lognormal(xeon_rng, log(200), 0.15);
}

static void test_calibrate_one_mode_host(void **state)
{
    (void)state;
    char path[512], err[512] = "";
    Db *db = open_tmp_db("onemode.db", path, sizeof path);
    OpDesc ops[] = {op_act(PHASE_FWD, ACT_RELU, 4096), op_sgd(4096, 1e-4f), op_act(PHASE_FWD, ACT_TANH, 4096)};
    MbFamily fams[] = {{"a", ops, 3, false}};
    MbProtocol p = fast_protocol();
    p.rounds = 2;
    p.min_reps = p.max_reps = 16;
    xeon_rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(xeon_rng, 11);
    xeon_probes = 0;
    mb_placement_fake = (MbPlacementProbes){xeon_rtt_ns, fake_share};
    const int64_t cal = begin_calibration_rounds(db, 2);
    volatile sig_atomic_t stop = 0;
    const int rc = mb_calibrate(db, cal, &p, 2, fams, 1, NULL, NULL, &stop, err, sizeof err);
    mb_placement_fake = (MbPlacementProbes){0};
    gsl_rng_free(xeon_rng);
    if (rc != 0)
        fail_msg("mb_calibrate: %d %s", rc, err);
    assert_true(xeon_probes > 40);
    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM measurement WHERE calibration_id = ?", cal), 3);
    assert_int_equal(query_int(path, "SELECT SUM(far_passes) FROM measurement WHERE calibration_id = ?", cal), 0);
    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM measurement WHERE calibration_id = ? AND pass_placement"
                                     " <> 'nn'", cal), 0);
    CalibrationRow got;
    assert_int_equal(db_calibration_get(db, cal, &got), 0);
    assert_true(got.rtt_fastest_ns == 0);
    db_close(db);
}

/* A budget bounds the calibration: once the kernels so far project the passes past it, the
 * later kernels sample for a shorter time (their minimum samples still taken), and past
 * that an optional family's kernels are left out. 12 GEMMs
 * that never meet the CI each sample for their whole 0.25 s: 3 s without a budget; with
 * 0.8 s the later ones take a fraction of the first ones' samples. */
static void test_calibrate_budget(void **state)
{
    (void)state;
    char path[512], err[512] = "";
    Db *db = open_tmp_db("budget.db", path, sizeof path);
    enum { K = 12 };
    OpDesc ops[K];
    for (int k = 0; k < K; k++)
        ops[k] = op_gemm(PHASE_FWD, 256, 256 + 8 * k, 256, false, false, 0); /* timed warm: no flush */
    MbFamily fams[] = {{"a", ops, K, false}};
    MbProtocol p = fast_protocol();
    p.target_s = 0.25;
    p.ci_frac = 0; /* never met: every kernel samples for its whole target */
    p.max_reps = 100000;
    p.budget_s = 0.8;
    const int64_t cal = begin_calibration(db);
    volatile sig_atomic_t stop = 0;
    const double t0 = mb_now_s();
    const int rc = mb_calibrate(db, cal, &p, 1, fams, 1, NULL, NULL, &stop, err, sizeof err);
    const double took = mb_now_s() - t0;
    if (rc != 0)
        fail_msg("mb_calibrate: %d %s", rc, err);
    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM measurement WHERE calibration_id = ?", cal), K);
    /* the first kernels sampled for the protocol's 0.25 s, the last five for a fraction */
    const long long first = query_int(path, "SELECT MIN(reps) FROM (SELECT reps FROM measurement WHERE"
                                            " calibration_id = ? ORDER BY id LIMIT 3)", cal);
    const long long last = query_int(path, "SELECT MAX(reps) FROM (SELECT reps FROM measurement WHERE"
                                           " calibration_id = ? ORDER BY id DESC LIMIT 5)", cal);
    if (!(last * 2 < first))
        fail_msg("the last kernels took up to %lld samples, the first %lld: no shorter", last, first);
    if (!(took < 4 * p.budget_s))
        fail_msg("a 0.8 s budget took %.2f s", took);
    /* where the shortest sampling still overruns, kernels of an optional family are left
     * out, spread over its list; a required family's are all timed */
    OpDesc many[K];
    for (int k = 0; k < K; k++)
        many[k] = op_gemm(PHASE_FWD, 256, 384 + 8 * k, 256, false, false, 0);
    MbFamily two[] = {{"kept", ops, K, false}, {"thinned", many, K, true}};
    p.budget_s = 0.3;
    const int64_t thin = begin_calibration(db);
    if (mb_calibrate(db, thin, &p, 1, two, 2, NULL, NULL, &stop, err, sizeof err) != 0)
        fail_msg("mb_calibrate: %s", err);
    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM measurement WHERE calibration_id = ? AND family = 'kept'",
                               thin), K);
    const long long thinned = query_int(path, "SELECT COUNT(*) FROM measurement WHERE calibration_id = ? AND family ="
                                              " 'thinned'", thin);
    if (!(thinned < K))
        fail_msg("the optional family kept all %lld kernels past its budget", thinned);
    db_close(db);
}

static void test_calibrate_leaves_out_what_does_not_fit(void **state)
{
    (void)state;
    const OpDesc huge = op_copy(PHASE_FWD, (size_t)1 << 38);
    MeasurementRow m;
    double samples[64];
    char err[512] = "", path[512];
    MbProtocol p = fast_protocol();
    assert_int_equal(mb_time_op(&huge, &p, 1, &m, samples, err, sizeof err), MB_DOES_NOT_FIT);
    assert_int_equal(m.reps, 0);
    assert_non_null(strstr(err, "GiB available"));

    Db *db = open_tmp_db("fit.db", path, sizeof path);
    int64_t cal = begin_calibration(db);
    OpDesc ops[] = {op_sgd(4096, 1e-4f), huge, op_copy(PHASE_FWD, 4096)};
    MbFamily fams[] = {{"a", ops, 3, false}};
    ProgressLog pl = {0};
    calibrate_ok(db, cal, &p, fams, 1, &pl);
    assert_int_equal(pl.calls, 3);
    assert_int_equal(query_int(path, "SELECT COUNT(*) FROM measurement WHERE calibration_id = ?", cal), 2);
    db_close(db);
}

/* What a rank of a node's calibrating ranks needs for a kernel: its own buffers, and a
 * share of the spot check's snapshots of in-out buffers, which rank 0 alone keeps (P1B1's
 * RMSprop update, 2.73 GiB of buffers, was left out at np=4 when every rank kept 1.82 GiB
 * of snapshots too). RMSprop: w and acc in-out, g in. */
static void test_kernel_share_counts_one_rank_of_snapshots(void **state)
{
    (void)state;
    const size_t count = (size_t)1 << 20;
    const OpDesc d = op_rmsprop(count, 1e-3f, 0.9f, 1e-8f);
    const double buf = (double)(count * sizeof(float));
    const double line = 64; /* an empty workspace still gets a cache line */
    assert_float_equal(mb_kernel_share_bytes(&d, 1), 5 * buf, line);          /* one process: 3 + 2 snapshots */
    assert_float_equal(mb_kernel_share_bytes(&d, 4), (3 + 2 / 4.0) * buf, line); /* 4 ranks: 3 each + 2 / 4 */
    /* a fresh input's copy is every rank's: it is rewritten before each sample */
    const OpDesc relu = op_act(PHASE_FWD, ACT_RELU, count);
    assert_float_equal(mb_kernel_share_bytes(&relu, 4), mb_kernel_share_bytes(&relu, 1), 1.0);
}

/* ---- machine ---- */

static void test_machine_detect(void **state)
{
    (void)state;
    MachineRow a, b;
    mb_machine_detect(&a);
    mb_machine_detect(&b);
    assert_true(strlen(a.cpu_model) > 0);
    assert_true(a.cores >= 1);
    assert_true(a.mem_bytes > 0);
    assert_true(strlen(a.os) > 0);
    assert_int_equal(strlen(a.fingerprint), 16);
    for (int i = 0; i < 16; i++)
        assert_true(isxdigit((unsigned char)a.fingerprint[i]));
    assert_string_equal(a.fingerprint, b.fingerprint);

    SoftwareInfo sw;
    mb_software_detect(&sw, 3);
    assert_int_equal(sw.threads, 3);
    assert_int_equal(sw.ranks, 1);
    assert_true(strlen(sw.compiler) > 0);
    assert_true(strlen(sw.blas_core) > 0);
    assert_string_equal(sw.git_commit, "");

    /* the threading record: the BLAS build, then the wait policy and who chose it */
    char *policy = getenv("OMP_WAIT_POLICY") ? strdup(getenv("OMP_WAIT_POLICY")) : NULL;
    char *set_by = getenv("DLPERF_OMP_WAIT_SET") ? strdup(getenv("DLPERF_OMP_WAIT_SET")) : NULL;
    unsetenv("OMP_WAIT_POLICY");
    unsetenv("DLPERF_OMP_WAIT_SET");
    mb_software_detect(&sw, 1);
    assert_int_equal(strncmp(sw.threading, ops_blas_threading(), strlen(ops_blas_threading())), 0);
    assert_non_null(strstr(sw.threading, "wait libgomp default"));
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    mb_software_detect(&sw, 1);
    assert_non_null(strstr(sw.threading, "wait OMP_WAIT_POLICY=PASSIVE (user)"));
    setenv("DLPERF_OMP_WAIT_SET", "set by dlperf: 2 ranks on this node", 1);
    mb_software_detect(&sw, 1);
    assert_non_null(strstr(sw.threading, "OMP_WAIT_POLICY=PASSIVE (set by dlperf: 2 ranks on this node)"));
    policy ? setenv("OMP_WAIT_POLICY", policy, 1) : unsetenv("OMP_WAIT_POLICY");
    set_by ? setenv("DLPERF_OMP_WAIT_SET", set_by, 1) : unsetenv("DLPERF_OMP_WAIT_SET");
    free(policy), free(set_by);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_odd),
        cmocka_unit_test(test_stats_even),
        cmocka_unit_test(test_stats_single),
        cmocka_unit_test(test_stats_ci_symmetric_and_t_quantile),
        cmocka_unit_test(test_timer),
        cmocka_unit_test(test_time_op_gemm),
        cmocka_unit_test(test_time_op_gemm_cold_when_memory_bound),
        cmocka_unit_test(test_time_op_conv_cold_when_low_intensity),
        cmocka_unit_test(test_time_op_conv),
        cmocka_unit_test(test_time_op_eltwise),
        cmocka_unit_test(test_list_gemm_deepbench),
        cmocka_unit_test(test_deepbench_tables),
        cmocka_unit_test(test_list_gemm_sweep),
        cmocka_unit_test(test_list_limits),
        cmocka_unit_test(test_list_rnn_and_sparse),
        cmocka_unit_test(test_list_conv),
        cmocka_unit_test(test_list_stream),
        cmocka_unit_test(test_list_eltwise),
        cmocka_unit_test(test_list_transformer),
        cmocka_unit_test_setup_teardown(test_calibrate_end_to_end, setup_tmp, teardown_tmp),
        cmocka_unit_test(test_pass_median),
        cmocka_unit_test(test_pass_median_far), cmocka_unit_test(test_pass_median_samples),
        cmocka_unit_test(test_pass_split),
        cmocka_unit_test(test_core_rtt),
        cmocka_unit_test(test_core_share),
        cmocka_unit_test_setup_teardown(test_calibrate_rounds, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_calibrate_near_catch_up, setup_tmp, teardown_tmp),
        cmocka_unit_test(test_wait_until_near),
        cmocka_unit_test(test_rtt_modes),
        cmocka_unit_test(test_calibrate_budget),
        cmocka_unit_test(test_calibrate_one_mode_host),
        cmocka_unit_test_setup_teardown(test_calibrate_leaves_out_what_does_not_fit, setup_tmp, teardown_tmp),
        cmocka_unit_test(test_kernel_share_counts_one_rank_of_snapshots),
        cmocka_unit_test(test_machine_detect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
