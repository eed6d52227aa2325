/* tests/test_ops.c — unit and gradient-check tests of the ops/ layer: every kernel against
 * the naive double references in ref_ops.c, every backward against central finite
 * differences of its forward, keys, costs, TF padding, the spot check and the threading
 * knobs. Deterministic (fixed seeds) and fast (small shapes; main lowers the parallel
 * threshold to TEST_PAR_MIN and a few shapes cross it, so the OpenMP paths run too). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <malloc.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ops/kernels.h"
#include "ops/ops.h"
#include "ops/vecmath.h"
#include "tests/ref_ops.h"
#include "tests/testutil.h"

/* Kernel vs reference: fp32 sums of a few hundred terms against double. */
#define REF_ATOL 1e-5
#define REF_RTOL 1e-4
/* Finite differences with eps = 1e-2 in fp32: rounding of L divided by 2 eps dominates. */
#define FD_EPS 1e-2
#define FD_ATOL 2e-3
#define FD_RTOL 1e-2
#define FD_SAMPLES 40

/* ---------------------------------------------------------------------------------------
 * helpers
 * ------------------------------------------------------------------------------------- */

static void run(const OpDesc *d, void *const bufs[])
{
    const size_t ws = op_workspace_bytes(d);
    float *w = ws ? tu_floats(ws / sizeof(float)) : NULL;
    op_run(d, bufs, w);
    free(w);
}

static OpDesc with_phase(OpDesc d, OpPhase p, bool acc)
{
    d.phase = p;
    if (d.kind == OP_CONV2D)
        d.u.conv.accumulate = acc;
    else if (d.kind == OP_POOL2D)
        d.u.pool.accumulate = acc;
    else if (d.kind == OP_BIAS)
        d.u.bias.accumulate = acc;
    else if (d.kind == OP_BATCHNORM)
        d.u.bn.accumulate = acc;
    else if (d.kind == OP_LRN)
        d.u.lrn.accumulate = acc;
    else if (d.kind == OP_CHANNEL_COPY)
        d.u.chan.accumulate = acc;
    else if (d.kind == OP_EMBEDDING)
        d.u.embed.accumulate = acc;
    return d;
}

/* Objective L = sum_o sum_i y_o[i] * r_o[i] over up to two outputs of a forward op,
 * accumulated in double; `restore` resets an in-place output before each run. */
typedef struct {
    const OpDesc *fwd;
    void **bufs;
    int nout;
    int out[2];
    const float *r[2];
    size_t n[2];
    const float *restore;
} FwdObj;

static double fwd_objective(void *p)
{
    FwdObj *o = p;
    if (o->restore)
        memcpy(o->bufs[o->out[0]], o->restore, o->n[0] * sizeof(float));
    run(o->fwd, o->bufs);
    double s = 0.0;
    for (int k = 0; k < o->nout; k++) {
        const float *y = o->bufs[o->out[k]];
        for (size_t i = 0; i < o->n[k]; i++)
            s += (double)y[i] * o->r[k][i];
    }
    return s;
}

/* Spot check of a finished run must pass. */
static void expect_spot_ok(const OpDesc *d, void *const bufs[], void *const before[])
{
    double err = -1.0;
    const bool ok = op_spot_check(d, bufs, before, 64, 11, &err);
    if (!ok) {
        char key[OP_KEY_MAX];
        op_key(d, key);
        fprintf(stderr, "  spot check failed for '%s' (max scaled error %.3g)\n", key, err);
    }
    assert_true(ok);
    assert_true(err >= 0.0 && err <= 1.0);
}

/* ---------------------------------------------------------------------------------------
 * GEMM
 * ------------------------------------------------------------------------------------- */

static void gemm_case(int m, int n, int k, bool ta, bool tb, float alpha, float beta,
                      uint64_t seed)
{
    OpDesc d = op_gemm(PHASE_FWD, m, n, k, ta, tb, beta);
    d.u.gemm.alpha = alpha;
    float *A = tu_floats((size_t)m * k), *B = tu_floats((size_t)k * n);
    float *C = tu_floats((size_t)m * n);
    tu_fill_uniform(A, (size_t)m * k, -1, 1, seed);
    tu_fill_uniform(B, (size_t)k * n, -1, 1, seed + 1);
    tu_fill_uniform(C, (size_t)m * n, -1, 1, seed + 2);
    float *C0 = tu_dup(C, (size_t)m * n);
    double *ref = tu_doubles((size_t)m * n);
    void *bufs[] = {C, A, B};
    run(&d, bufs);
    ref_gemm(ref, A, B, C0, &d.u.gemm);
    char what[96];
    snprintf(what, sizeof what, "gemm %dx%dx%d ta=%d tb=%d alpha=%g beta=%g", m, n, k, ta, tb,
             alpha, beta);
    assert_true(tu_close(what, C, ref, (size_t)m * n, REF_ATOL, REF_RTOL));
    void *before[] = {C0, NULL, NULL};
    expect_spot_ok(&d, bufs, before);
    free(A), free(B), free(C), free(C0), free(ref);
}

static void test_gemm_vs_reference(void **state)
{
    (void)state;
    static const int sizes[][3] = {{1, 1, 1}, {7, 5, 3}, {33, 17, 65}, {64, 1, 9}, {3, 70, 1}};
    uint64_t seed = 100;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int t = 0; t < 4; t++)
            for (int b = 0; b < 2; b++)
                for (int a = 0; a < 2; a++)
                    gemm_case(sizes[s][0], sizes[s][1], sizes[s][2], t & 1, t >> 1,
                              a ? -0.75f : 1.0f, (float)b, seed += 3);
    gemm_case(9, 11, 13, true, false, 2.0f, 0.5f, 999); /* beta neither 0 nor 1 */

    /* beta = 0 does not read C: NaN there must not leak into the result (BLAS rule) */
    OpDesc d = op_gemm(PHASE_FWD, 5, 6, 7, false, false, 0.0f);
    float A[35], B[42], C[30];
    tu_fill_uniform(A, 35, -1, 1, 990);
    tu_fill_uniform(B, 42, -1, 1, 991);
    tu_fill_const(C, 30, NAN);
    void *bufs[] = {C, A, B};
    run(&d, bufs);
    for (int i = 0; i < 30; i++)
        assert_true(isfinite(C[i]));
}

/* ---------------------------------------------------------------------------------------
 * Convolution
 * ------------------------------------------------------------------------------------- */

typedef struct {
    int n, c, h, w, k, r, s, sh, sw;
    int mode; /* 0 VALID, 1 SAME (TF, sh == sw), 2 explicit symmetric pads */
    int ph, pw, g;
} ConvCase;

static OpDesc conv_from_case(const ConvCase *cc, OpPhase phase)
{
    if (cc->mode == 2)
        return op_conv2d_explicit(phase, cc->n, cc->c, cc->h, cc->w, cc->k, cc->r, cc->s, cc->sh,
                                  cc->sw, cc->ph, cc->pw, cc->g);
    return op_conv2d(phase, cc->n, cc->c, cc->h, cc->w, cc->k, cc->r, cc->s, cc->sh,
                     cc->mode == 1 ? PAD_SAME : PAD_VALID, cc->g);
}

static const ConvCase CONV_CASES[] = {
    {2, 3, 7, 7, 4, 3, 3, 1, 1, 1, 0, 0, 1},    /* SAME odd, pad 1/1 */
    {2, 4, 8, 8, 6, 3, 3, 2, 2, 1, 0, 0, 2},    /* SAME even stride 2: pad 0/1, groups 2 */
    {1, 3, 9, 10, 2, 5, 2, 3, 3, 0, 0, 0, 1},   /* VALID, non-square kernel, stride 3 */
    {2, 2, 11, 9, 3, 4, 4, 4, 4, 1, 0, 0, 1},   /* SAME stride 4: pads 0/1 and 1/2 */
    {2, 4, 6, 5, 4, 1, 1, 1, 1, 0, 0, 0, 2},    /* 1x1 fast path, groups 2 */
    {3, 5, 5, 5, 7, 1, 1, 1, 1, 1, 0, 0, 1},    /* 1x1 fast path via SAME */
    {2, 3, 7, 6, 4, 3, 2, 2, 1, 2, 1, 2, 1},    /* explicit pads, stride 2x1 */
    {1, 4, 6, 6, 2, 1, 1, 2, 2, 2, 0, 0, 1},    /* 1x1 stride 2: not the fast path */
    {1, 2, 4, 4, 2, 2, 2, 1, 1, 2, 2, 2, 1},    /* pad = kernel: all-padding windows */
    {1, 3, 12, 12, 4, 7, 7, 2, 2, 1, 0, 0, 1},  /* GoogLeNet conv1 style: pad 2/3 */
    {2, 4, 3, 3, 4, 5, 5, 1, 1, 1, 0, 0, 2},    /* SAME with kernel larger than input */
    {1, 6, 9, 9, 6, 3, 3, 1, 1, 2, 1, 1, 3},    /* explicit pad 1, groups 3 */
};

static void conv_case_vs_reference(const ConvCase *cc, uint64_t seed)
{
    const OpDesc f = conv_from_case(cc, PHASE_FWD);
    const ConvDesc *v = &f.u.conv;
    const size_t nx = (size_t)v->n * v->c * v->h * v->w;
    const size_t nw = (size_t)v->k * (v->c / v->groups) * v->r * v->s;
    const size_t ny = (size_t)v->n * v->k * v->out_h * v->out_w;
    float *x = tu_floats(nx), *w = tu_floats(nw), *y = tu_floats(ny), *dy = tu_floats(ny);
    float *dx = tu_floats(nx), *dw = tu_floats(nw);
    double *rx = tu_doubles(nx), *rw = tu_doubles(nw), *ry = tu_doubles(ny);
    tu_fill_uniform(x, nx, -1, 1, seed);
    tu_fill_uniform(w, nw, -1, 1, seed + 1);
    tu_fill_uniform(dy, ny, -1, 1, seed + 2);
    char key[OP_KEY_MAX];
    op_key(&f, key);

    /* forward overwrites whatever y held */
    tu_fill_const(y, ny, 123.0f);
    void *fb[] = {y, x, w};
    run(&f, fb);
    ref_conv_forward(ry, x, w, v);
    assert_true(tu_close(key, y, ry, ny, REF_ATOL, REF_RTOL));
    expect_spot_ok(&f, fb, NULL);

    /* backward, both overwrite and accumulate, from known prior contents */
    ref_conv_backward_data(rx, dy, w, v);
    ref_conv_backward_weights(rw, dy, x, v);
    for (int acc = 0; acc < 2; acc++) {
        const float prior = 0.25f;
        OpDesc bd = with_phase(f, PHASE_BWD_DATA, acc);
        OpDesc bw = with_phase(f, PHASE_BWD_WEIGHTS, acc);
        tu_fill_const(dx, nx, prior);
        tu_fill_const(dw, nw, prior);
        float *dx0 = tu_dup(dx, nx), *dw0 = tu_dup(dw, nw);
        void *bdb[] = {dx, dy, w}, *bwb[] = {dw, dy, x};
        run(&bd, bdb);
        run(&bw, bwb);
        double *ex = tu_doubles(nx), *ew = tu_doubles(nw);
        for (size_t i = 0; i < nx; i++)
            ex[i] = rx[i] + (acc ? prior : 0.0);
        for (size_t i = 0; i < nw; i++)
            ew[i] = rw[i] + (acc ? prior : 0.0);
        op_key(&bd, key);
        assert_true(tu_close(key, dx, ex, nx, REF_ATOL, REF_RTOL));
        op_key(&bw, key);
        assert_true(tu_close(key, dw, ew, nw, REF_ATOL, REF_RTOL));
        void *bdx[] = {dx0, NULL, NULL}, *bwx[] = {dw0, NULL, NULL};
        expect_spot_ok(&bd, bdb, bdx);
        expect_spot_ok(&bw, bwb, bwx);
        free(ex), free(ew), free(dx0), free(dw0);
    }
    free(x), free(w), free(y), free(dy), free(dx), free(dw), free(rx), free(rw), free(ry);
}

static void test_conv_vs_reference(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof CONV_CASES / sizeof CONV_CASES[0]; i++)
        conv_case_vs_reference(&CONV_CASES[i], 200 + 10 * i);
}

/* Larger columns than CONV_CASES: groups, 16 channels and 5x5 filters (conv.c splits the
 * batch over threads; no element-count threshold applies to it). */
static void test_conv_large_vs_reference(void **state)
{
    (void)state;
    const ConvCase big = {2, 8, 20, 20, 6, 3, 3, 1, 1, 1, 0, 0, 2}; /* 4*9*400 = 14400/grp */
    const ConvCase big2 = {1, 16, 24, 24, 8, 5, 5, 1, 1, 1, 0, 0, 1}; /* 16*25*576 cols */
    conv_case_vs_reference(&big, 300);
    conv_case_vs_reference(&big2, 310);
}

/* Small feature maps put several images in one GEMM (ops/conv.c chunks): uneven thread
 * shares, a short last chunk, groups, the 1x1 path and strides, at 1 and 2 threads. */
static void test_conv_chunked_vs_reference(void **state)
{
    (void)state;
    static const ConvCase chunked[] = {
        {7, 2, 22, 22, 3, 3, 3, 1, 1, 1, 0, 0, 1}, /* 484 px: 3 images a chunk, 3+3+1 or 3 / 3+1 */
        {7, 4, 5, 5, 6, 3, 3, 1, 1, 1, 0, 0, 2},   /* 25 px: a thread's whole share, groups 2 */
        {9, 6, 4, 4, 4, 1, 1, 1, 1, 0, 0, 0, 1},   /* 1x1: columns copied when chunked */
        {5, 3, 7, 7, 4, 3, 3, 2, 2, 2, 1, 1, 1},   /* stride 2, explicit pads */
    };
    const int t0 = ops_get_threads();
    for (int t = 1; t <= 2; t++) {
        ops_set_threads(t);
        for (size_t i = 0; i < sizeof chunked / sizeof chunked[0]; i++)
            conv_case_vs_reference(&chunked[i], 400 + 10 * i + (uint64_t)t);
    }
    ops_set_threads(t0);
}

/* Sequence convolutions (one channel a group, the filter as wide as the input, unpadded)
 * copy their windows as rows (conv2d_is_rows): overlapping and strided windows, groups,
 * a window as tall as the input, at 1 and 2 threads; and the near misses that must not
 * take that path. */
static void test_conv_rows_vs_reference(void **state)
{
    (void)state;
    static const ConvCase rows[] = {
        {5, 1, 12, 8, 4, 3, 8, 1, 1, 0, 0, 0, 1}, /* textcnn-like: windows overlap */
        {4, 1, 13, 6, 3, 4, 6, 2, 1, 0, 0, 0, 1}, /* stride 2 down the sequence */
        {3, 2, 9, 5, 4, 2, 5, 1, 1, 0, 0, 0, 2},  /* two groups of one channel */
        {3, 1, 4, 7, 3, 4, 7, 1, 1, 0, 0, 0, 1},  /* the window is the whole input */
        {9, 1, 20, 3, 2, 5, 3, 1, 3, 2, 0, 0, 1}, /* explicit zero pads, stride_w unused */
    };
    static const ConvCase not_rows[] = {
        {2, 2, 6, 5, 3, 2, 5, 1, 1, 0, 0, 0, 1}, /* two channels in a group */
        {2, 1, 6, 5, 3, 3, 5, 1, 1, 1, 0, 0, 1}, /* SAME pads */
        {2, 1, 6, 5, 3, 3, 4, 1, 1, 0, 0, 0, 1}, /* narrower than the input */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const OpDesc f = conv_from_case(&rows[i], PHASE_FWD);
        assert_true(conv2d_is_rows(&f.u.conv));
    }
    for (size_t i = 0; i < sizeof not_rows / sizeof not_rows[0]; i++) {
        const OpDesc f = conv_from_case(&not_rows[i], PHASE_FWD);
        assert_false(conv2d_is_rows(&f.u.conv));
        conv_case_vs_reference(&not_rows[i], 700 + 10 * i);
    }
    const int t0 = ops_get_threads();
    for (int t = 1; t <= 2; t++) {
        ops_set_threads(t);
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
            conv_case_vs_reference(&rows[i], 600 + 10 * i + (uint64_t)t);
    }
    ops_set_threads(t0);
}

/* A convolution whose threads' workspace slices lie further apart than it needs (a plan's
 * spacing, op_workspace_set_slice) gives the same bits in all three phases; the workspace
 * grows to a slice per thread, and the kernel reads only what it wrote (the slack is NaN). */
static void conv_spaced_case(const ConvCase *cc, uint64_t seed)
{
    const OpDesc f = conv_from_case(cc, PHASE_FWD);
    const ConvDesc *v = &f.u.conv;
    const size_t nx = (size_t)v->n * v->c * v->h * v->w;
    const size_t nw = (size_t)v->k * (v->c / v->groups) * v->r * v->s;
    const size_t ny = (size_t)v->n * v->k * v->out_h * v->out_w;
    float *x = tu_floats(nx), *w = tu_floats(nw), *dy = tu_floats(ny);
    tu_fill_uniform(x, nx, -1, 1, seed);
    tu_fill_uniform(w, nw, -1, 1, seed + 1);
    tu_fill_uniform(dy, ny, -1, 1, seed + 2);
    const OpPhase phases[] = {PHASE_FWD, PHASE_BWD_DATA, PHASE_BWD_WEIGHTS};
    for (int ph = 0; ph < 3; ph++)
        for (int acc = 0; acc < (phases[ph] == PHASE_FWD ? 1 : 2); acc++) {
            const OpDesc packed = with_phase(f, phases[ph], acc);
            OpDesc spaced = packed;
            const size_t own = op_workspace_slice_bytes(&packed), slice = own + 4096 + 64;
            op_workspace_set_slice(&spaced, slice);
            const int nt = ops_get_threads() > 1 && v->n >= ops_get_threads() ? ops_get_threads() : 1;
            assert_int_equal(op_workspace_slice_bytes(&spaced), own ? slice : 0);
            assert_int_equal(op_workspace_bytes(&packed), (size_t)nt * own);
            assert_int_equal(op_workspace_bytes(&spaced), (size_t)nt * (own ? slice : 0));
            const size_t nout = phases[ph] == PHASE_FWD ? ny : phases[ph] == PHASE_BWD_DATA ? nx : nw;
            float *a = tu_floats(nout), *b = tu_floats(nout);
            tu_fill_const(a, nout, 0.25f);
            tu_fill_const(b, nout, 0.25f);
            void *ab[3] = {a, phases[ph] == PHASE_FWD ? (void *)x : dy, phases[ph] == PHASE_BWD_WEIGHTS ? (void *)x : w};
            void *bb[3] = {b, ab[1], ab[2]};
            run(&packed, ab);
            const size_t wsf = op_workspace_bytes(&spaced) / sizeof(float);
            float *ws = wsf ? tu_floats(wsf) : NULL;
            tu_fill_const(ws, wsf, NAN);
            op_run(&spaced, bb, ws);
            char key[OP_KEY_MAX];
            op_key(&packed, key);
            if (memcmp(a, b, nout * sizeof(float)) != 0)
                fail_msg("%s: spaced workspace slices changed the result", key);
            free(a), free(b), free(ws);
        }
    free(x), free(w), free(dy);
}

static void test_conv_workspace_slices(void **state)
{
    (void)state;
    static const ConvCase cases[] = {
        {4, 6, 14, 14, 10, 3, 3, 1, 1, 1, 0, 0, 1}, /* small maps: two images a GEMM */
        {4, 8, 14, 14, 12, 1, 1, 1, 1, 0, 0, 0, 1}, /* 1x1 chunked */
        {3, 4, 24, 24, 5, 1, 1, 1, 1, 0, 0, 0, 1},  /* 1x1, one image a GEMM: no columns */
        {5, 4, 23, 23, 6, 3, 3, 2, 2, 1, 0, 0, 2},  /* grouped, strided, uneven split */
        {5, 1, 12, 8, 4, 3, 8, 1, 1, 0, 0, 0, 1},   /* sequence rows */
        {1, 3, 9, 9, 4, 3, 3, 1, 1, 1, 0, 0, 1},    /* batch 1: one thread */
    };
    const int t0 = ops_get_threads();
    for (int t = 1; t <= 2; t++) {
        ops_set_threads(t);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            conv_spaced_case(&cases[i], 900 + 10 * i + (uint64_t)t);
    }
    ops_set_threads(t0);
    /* the other kinds have no workspace: no slice, and setting one changes nothing */
    OpDesc g = op_gemm(PHASE_FWD, 8, 8, 8, false, false, 0.0f);
    op_workspace_set_slice(&g, 4096);
    assert_int_equal(op_workspace_slice_bytes(&g), 0);
    assert_int_equal(op_workspace_bytes(&g), 0);
}

static void conv_fd_case(const ConvCase *cc, uint64_t seed)
{
    OpDesc f = conv_from_case(cc, PHASE_FWD);
    const ConvDesc *v = &f.u.conv;
    const size_t nx = (size_t)v->n * v->c * v->h * v->w;
    const size_t nw = (size_t)v->k * (v->c / v->groups) * v->r * v->s;
    const size_t ny = (size_t)v->n * v->k * v->out_h * v->out_w;
    float *x = tu_floats(nx), *w = tu_floats(nw), *y = tu_floats(ny), *r = tu_floats(ny);
    float *dx = tu_floats(nx), *dw = tu_floats(nw);
    tu_fill_uniform(x, nx, -1, 1, seed);
    tu_fill_uniform(w, nw, -1, 1, seed + 1);
    tu_fill_uniform(r, ny, -1, 1, seed + 2);
    void *fb[] = {y, x, w};
    OpDesc bd = with_phase(f, PHASE_BWD_DATA, false), bw = with_phase(f, PHASE_BWD_WEIGHTS, false);
    void *bdb[] = {dx, r, w}, *bwb[] = {dw, r, x};
    run(&bd, bdb);
    run(&bw, bwb);
    FwdObj o = {.fwd = &f, .bufs = fb, .nout = 1, .out = {0}, .r = {r}, .n = {ny}};
    char key[OP_KEY_MAX + 16];
    op_key(&bd, key);
    assert_true(tu_grad_check(key, x, nx, dx, fwd_objective, &o, FD_SAMPLES, seed + 3, FD_EPS,
                              FD_ATOL, FD_RTOL));
    op_key(&bw, key);
    assert_true(tu_grad_check(key, w, nw, dw, fwd_objective, &o, FD_SAMPLES, seed + 4, FD_EPS,
                              FD_ATOL, FD_RTOL));
    free(x), free(w), free(y), free(r), free(dx), free(dw);
}

static void test_conv_finite_differences(void **state)
{
    (void)state;
    conv_fd_case(&CONV_CASES[1], 400); /* SAME stride 2, asymmetric pad, groups 2 */
    conv_fd_case(&CONV_CASES[4], 410); /* 1x1 fast path */
    conv_fd_case(&CONV_CASES[6], 420); /* explicit pads, non-square */
}

/* ---------------------------------------------------------------------------------------
 * Pooling
 * ------------------------------------------------------------------------------------- */

typedef struct {
    PoolKind kind;
    int n, c, h, w, win, stride;
    PadMode pad;
    bool ties; /* x in {-1, 0, 1}: windows hold several cells equal to their max */
} PoolCase;

static const PoolCase POOL_CASES[] = {
    {POOL_MAX, 2, 3, 8, 8, 3, 2, PAD_SAME, false},  /* even: pad 0/1 */
    {POOL_MAX, 2, 2, 9, 9, 3, 2, PAD_VALID, false},
    {POOL_AVG, 2, 3, 7, 7, 3, 2, PAD_SAME, false},  /* odd: pad 1/1 */
    {POOL_AVG, 1, 2, 5, 6, 3, 1, PAD_SAME, false},  /* stride 1 SAME */
    {POOL_MAX, 1, 3, 6, 6, 2, 2, PAD_VALID, false}, /* non-overlapping */
    {POOL_AVG, 2, 2, 7, 7, 2, 2, PAD_VALID, false}, /* drops the last row/column */
    {POOL_AVG, 1, 3, 8, 8, 3, 2, PAD_SAME, false},  /* asymmetric pad: counts at the border */
    {POOL_MAX, 2, 2, 4, 4, 3, 1, PAD_SAME, false},  /* inception pool branch */
    {POOL_MAX, 4, 16, 30, 30, 3, 2, PAD_VALID, false}, /* > TEST_PAR_MIN: OpenMP path */
    {POOL_AVG, 4, 16, 30, 30, 3, 2, PAD_SAME, false},
    /* rows wider than the kernels' chunk of output columns (256) */
    {POOL_MAX, 1, 2, 3, 600, 3, 1, PAD_SAME, false},
    {POOL_AVG, 1, 2, 5, 531, 3, 2, PAD_SAME, false},
    /* ties: the first cell (row-major) equal to the max takes the gradient */
    {POOL_MAX, 2, 3, 9, 9, 3, 1, PAD_SAME, true},
    {POOL_MAX, 1, 2, 4, 520, 2, 2, PAD_VALID, true},
};

/* A forward pooling f and its backward (overwrite and accumulate) against the reference;
 * ties: inputs rounded to integers, so that max windows hold equal cells. */
static void pool_desc_vs_reference(const OpDesc f, bool ties, uint64_t seed)
{
    const PoolDesc *p = &f.u.pool;
    const size_t nx = (size_t)p->n * p->c * p->h * p->w;
    const size_t ny = (size_t)p->n * p->c * p->out_h * p->out_w;
    float *x = tu_floats(nx), *y = tu_floats(ny), *dy = tu_floats(ny), *dx = tu_floats(nx);
    double *ry = tu_doubles(ny), *rx = tu_doubles(nx), *ex = tu_doubles(nx);
    tu_fill_uniform(x, nx, -1, 1, seed);
    if (ties)
        for (size_t i = 0; i < nx; i++)
            x[i] = roundf(x[i]);
    tu_fill_uniform(dy, ny, -1, 1, seed + 1);
    char key[OP_KEY_MAX];
    op_key(&f, key);
    tu_fill_const(y, ny, 77.0f); /* forward overwrites */
    void *fb[] = {y, x};
    run(&f, fb);
    ref_pool_forward(ry, x, p);
    assert_true(tu_close(key, y, ry, ny, REF_ATOL, REF_RTOL));
    expect_spot_ok(&f, fb, NULL);
    ref_pool_backward_data(rx, dy, x, p);
    for (int acc = 0; acc < 2; acc++) {
        OpDesc b = with_phase(f, PHASE_BWD_DATA, acc);
        tu_fill_const(dx, nx, -0.5f);
        float *dx0 = tu_dup(dx, nx);
        void *bb[] = {dx, dy, x, y};
        run(&b, bb);
        for (size_t i = 0; i < nx; i++)
            ex[i] = rx[i] + (acc ? -0.5 : 0.0);
        op_key(&b, key);
        assert_true(tu_close(key, dx, ex, nx, REF_ATOL, REF_RTOL));
        void *before[] = {dx0, NULL, NULL, NULL};
        expect_spot_ok(&b, bb, before);
        free(dx0);
    }
    free(x), free(y), free(dy), free(dx), free(ry), free(rx), free(ex);
}

static void pool_case_vs_reference(const PoolCase *pc, uint64_t seed)
{
    pool_desc_vs_reference(op_pool2d(PHASE_FWD, pc->kind, pc->n, pc->c, pc->h, pc->w, pc->win, pc->stride, pc->pad),
                           pc->ties, seed);
}

/* Global pooling (ops/pool.c reduces the planes side by side): max and average, planes
 * beyond one chunk of 256 and a short last chunk, a sentence CNN's max over time (62 x 1),
 * ResNet's 7 x 7, one-cell planes and ties, at 1 and 2 threads; windowed poolings that
 * cover the plane only with padding or with two outputs take the general loop. */
static void test_pool_global_vs_reference(void **state)
{
    (void)state;
    static const struct {
        PoolKind kind;
        int n, c, h, w;
        bool ties;
    } cases[] = {
        {POOL_MAX, 5, 128, 62, 1, false}, {POOL_MAX, 3, 100, 9, 1, true}, {POOL_AVG, 2, 300, 7, 7, false},
        {POOL_AVG, 1, 7, 3, 5, false},    {POOL_MAX, 2, 3, 1, 1, false},  {POOL_MAX, 1, 40, 4, 6, true},
    };
    const int t0 = ops_get_threads();
    for (int t = 1; t <= 2; t++) {
        ops_set_threads(t);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            const OpDesc f = op_pool2d_global(PHASE_FWD, cases[i].kind, cases[i].n, cases[i].c, cases[i].h, cases[i].w);
            assert_true(pool2d_is_global(&f.u.pool));
            pool_desc_vs_reference(f, cases[i].ties, 800 + 10 * i + (uint64_t)t);
        }
    }
    ops_set_threads(t0);
    const OpDesc same = op_pool2d(PHASE_FWD, POOL_MAX, 2, 3, 5, 5, 5, 1, PAD_SAME); /* 5x5 out, padded */
    const OpDesc two = op_pool2d(PHASE_FWD, POOL_AVG, 2, 3, 6, 6, 5, 1, PAD_VALID); /* 2x2 out */
    assert_false(pool2d_is_global(&same.u.pool));
    assert_false(pool2d_is_global(&two.u.pool));
    pool_desc_vs_reference(same, true, 900);
    pool_desc_vs_reference(two, false, 910);
}

static void test_pool_vs_reference(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof POOL_CASES / sizeof POOL_CASES[0]; i++)
        pool_case_vs_reference(&POOL_CASES[i], 500 + 10 * i);
}

static void pool_fd_case(const PoolCase *pc, uint64_t seed)
{
    OpDesc f = op_pool2d(PHASE_FWD, pc->kind, pc->n, pc->c, pc->h, pc->w, pc->win, pc->stride,
                         pc->pad);
    const PoolDesc *p = &f.u.pool;
    const size_t nx = (size_t)p->n * p->c * p->h * p->w;
    const size_t ny = (size_t)p->n * p->c * p->out_h * p->out_w;
    float *x = tu_floats(nx), *y = tu_floats(ny), *r = tu_floats(ny), *dx = tu_floats(nx);
    /* distinct values 0.05 apart: a +-0.01 perturbation never changes a window's argmax */
    tu_fill_distinct(x, nx, -0.025f * (float)nx, 0.05f, seed);
    tu_fill_uniform(r, ny, -1, 1, seed + 1);
    void *fb[] = {y, x};
    run(&f, fb);
    OpDesc b = with_phase(f, PHASE_BWD_DATA, false);
    void *bb[] = {dx, r, x, y};
    run(&b, bb);
    FwdObj o = {.fwd = &f, .bufs = fb, .nout = 1, .out = {0}, .r = {r}, .n = {ny}};
    char key[OP_KEY_MAX];
    op_key(&b, key);
    assert_true(tu_grad_check(key, x, nx, dx, fwd_objective, &o, 60, seed + 2, FD_EPS, FD_ATOL,
                              FD_RTOL));
    free(x), free(y), free(r), free(dx);
}

static void test_pool_finite_differences(void **state)
{
    (void)state;
    pool_fd_case(&POOL_CASES[0], 600); /* max SAME asym */
    pool_fd_case(&POOL_CASES[1], 610); /* max VALID */
    pool_fd_case(&POOL_CASES[2], 620); /* avg SAME */
    pool_fd_case(&POOL_CASES[6], 630); /* avg SAME asym */
}

/* ---------------------------------------------------------------------------------------
 * Bias
 * ------------------------------------------------------------------------------------- */

static void bias_case(int n, int c, int sp, uint64_t seed)
{
    const size_t ny = (size_t)n * c * sp;
    float *y = tu_floats(ny), *b = tu_floats((size_t)c), *dy = tu_floats(ny);
    float *db = tu_floats((size_t)c);
    double *ref = tu_doubles(ny), *rdb = tu_doubles((size_t)c);
    tu_fill_uniform(y, ny, -1, 1, seed);
    tu_fill_uniform(b, (size_t)c, -1, 1, seed + 1);
    tu_fill_uniform(dy, ny, -1, 1, seed + 2);
    float *y0 = tu_dup(y, ny);
    OpDesc f = op_bias(PHASE_FWD, n, c, sp);
    char key[OP_KEY_MAX];
    op_key(&f, key);
    void *fb[] = {y, b};
    run(&f, fb);
    ref_bias_forward(ref, y0, b, &f.u.bias);
    assert_true(tu_close(key, y, ref, ny, REF_ATOL, REF_RTOL));
    void *fb0[] = {y0, NULL};
    expect_spot_ok(&f, fb, fb0);
    ref_bias_backward_weights(rdb, dy, &f.u.bias);
    for (int acc = 0; acc < 2; acc++) {
        OpDesc bw = op_bias(PHASE_BWD_WEIGHTS, n, c, sp);
        bw.u.bias.accumulate = acc;
        tu_fill_const(db, (size_t)c, 2.0f);
        float *db0 = tu_dup(db, (size_t)c);
        void *bb[] = {db, dy};
        run(&bw, bb);
        double *e = tu_doubles((size_t)c);
        for (int i = 0; i < c; i++)
            e[i] = rdb[i] + (acc ? 2.0 : 0.0);
        op_key(&bw, key);
        assert_true(tu_close(key, db, e, (size_t)c, REF_ATOL, REF_RTOL));
        void *before[] = {db0, NULL};
        expect_spot_ok(&bw, bb, before);
        free(e), free(db0);
    }
    /* finite differences: L = sum (y0 + b) r, so dL/db = the bias gradient of dy = r */
    OpDesc bw = op_bias(PHASE_BWD_WEIGHTS, n, c, sp);
    bw.u.bias.accumulate = false;
    void *bb[] = {db, dy};
    run(&bw, bb);
    FwdObj o = {.fwd = &f, .bufs = fb, .nout = 1, .out = {0}, .r = {dy}, .n = {ny},
                .restore = y0};
    op_key(&bw, key);
    assert_true(tu_grad_check(key, b, (size_t)c, db, fwd_objective, &o, FD_SAMPLES, seed + 3,
                              FD_EPS, FD_ATOL, FD_RTOL));
    free(y), free(b), free(dy), free(db), free(ref), free(rdb), free(y0);
}

static void test_bias(void **state)
{
    (void)state;
    bias_case(3, 5, 7, 700);
    bias_case(4, 9, 1, 710);     /* dense (n, c) */
    bias_case(8, 64, 100, 720);  /* OpenMP planes */
    bias_case(128, 300, 1, 730); /* OpenMP dense */
}

/* ---------------------------------------------------------------------------------------
 * Activations
 * ------------------------------------------------------------------------------------- */

static void act_case(ActKind a, size_t count, uint64_t seed)
{
    float *x = tu_floats(count), *y = tu_floats(count), *dy = tu_floats(count);
    float *dx = tu_floats(count);
    double *ref = tu_doubles(count);
    if (a == ACT_RELU)
        tu_fill_margin(x, count, 0.1f, 2.0f, seed);
    else
        tu_fill_uniform(x, count, -3, 3, seed);
    tu_fill_uniform(dy, count, -1, 1, seed + 1);
    OpDesc f = op_act(PHASE_FWD, a, count), b = op_act(PHASE_BWD_DATA, a, count);
    char key[OP_KEY_MAX];
    op_key(&f, key);
    tu_fill_const(y, count, 99.0f); /* outputs are written, never accumulated */
    tu_fill_const(dx, count, 99.0f);
    void *fb[] = {y, x};
    run(&f, fb);
    ref_act_forward(ref, x, a, count);
    assert_true(tu_close(key, y, ref, count, 1e-6, 1e-5));
    expect_spot_ok(&f, fb, NULL);
    /* fused in place (its own descriptor and key): the same values; GELU never runs in
     * place (test_programmer_errors_abort) */
    float *xi = tu_dup(x, count), *dyi = tu_dup(dy, count);
    if (a != ACT_GELU) {
        const OpDesc fip = op_act_in_place(PHASE_FWD, a, count);
        void *fi[] = {xi}, *fi0[] = {x};
        run(&fip, fi);
        assert_true(tu_close_f("act fwd in place", xi, y, count, 0, 0));
        expect_spot_ok(&fip, fi, fi0);
    }

    /* the derivative from the forward output, or GELU's from its input */
    float *saved = a == ACT_GELU ? x : y;
    op_key(&b, key);
    void *bb[] = {dx, dy, saved};
    run(&b, bb);
    ref_act_backward_data(ref, dy, saved, a, count);
    assert_true(tu_close(key, dx, ref, count, 1e-6, 1e-5));
    expect_spot_ok(&b, bb, NULL);
    if (a != ACT_GELU) {
        const OpDesc bip = op_act_in_place(PHASE_BWD_DATA, a, count);
        void *bi[] = {dyi, y}, *bi0[] = {dy, NULL};
        run(&bip, bi);
        assert_true(tu_close_f("act bwd in place", dyi, dx, count, 0, 0));
        expect_spot_ok(&bip, bi, bi0);
    }

    if (count <= 4096) { /* finite differences of L = sum f(x) r, r = dy */
        FwdObj o = {.fwd = &f, .bufs = fb, .nout = 1, .out = {0}, .r = {dy}, .n = {count}};
        assert_true(tu_grad_check(key, x, count, dx, fwd_objective, &o, FD_SAMPLES, seed + 2,
                                  FD_EPS, FD_ATOL, FD_RTOL));
    }
    free(x), free(y), free(dy), free(dx), free(ref), free(xi), free(dyi);
}

static void test_activations(void **state)
{
    (void)state;
    for (int a = 0; a < ACT_COUNT; a++) {
        act_case((ActKind)a, 1000, 800 + 10 * a);
        act_case((ActKind)a, 70001, 850 + 10 * a); /* OpenMP, ragged tail */
    }
}

/* ---------------------------------------------------------------------------------------
 * Losses
 * ------------------------------------------------------------------------------------- */

/* ignore_every: every so many rows' label is XENT_IGNORE (a masked LM's unmasked
 * positions; 0: none) */
static void xent_case(int n, int classes, float logit_scale, int ignore_every, uint64_t seed)
{
    const size_t e = (size_t)n * classes;
    float *logits = tu_floats(e), *probs = tu_floats(e), *dl = tu_floats(e), loss = 0;
    int32_t *labels = calloc((size_t)n, sizeof *labels);
    assert_non_null(labels);
    double *rp = tu_doubles(e), *rd = tu_doubles(e);
    tu_fill_uniform(logits, e, -logit_scale, logit_scale, seed);
    tu_fill_labels(labels, (size_t)n, classes, seed + 1);
    for (int r = 0; ignore_every > 0 && r < n; r += ignore_every)
        labels[r] = XENT_IGNORE;
    tu_fill_const(probs, e, 99.0f); /* outputs are written, never accumulated */
    tu_fill_const(dl, e, 99.0f);
    loss = 99.0f;
    OpDesc f = op_softmax_xent(PHASE_FWD, n, classes);
    void *fb[] = {&loss, probs, logits, labels};
    run(&f, fb);
    const double rl = ref_softmax_xent_forward(rp, logits, labels, n, classes);
    char key[OP_KEY_MAX];
    op_key(&f, key);
    assert_true(isfinite(loss));
    assert_true(tu_close(key, &loss, &rl, 1, 1e-6, 1e-5));
    assert_true(tu_close(key, probs, rp, e, 1e-7, 1e-5));
    expect_spot_ok(&f, fb, NULL);
    OpDesc b = op_softmax_xent(PHASE_BWD_DATA, n, classes);
    b.u.xent.scale = 0.5f;
    void *bb[] = {dl, probs, labels};
    run(&b, bb);
    ref_softmax_xent_backward_data(rd, probs, labels, &b.u.xent);
    op_key(&b, key);
    assert_true(tu_close(key, dl, rd, e, 1e-7, 1e-5));
    expect_spot_ok(&b, bb, NULL);
    if (e <= 4096) { /* finite differences of the loss itself, scale 1 */
        b.u.xent.scale = 1.0f;
        run(&b, bb);
        const float one = 1.0f;
        FwdObj o = {.fwd = &f, .bufs = fb, .nout = 1, .out = {0}, .r = {&one}, .n = {1}};
        assert_true(tu_grad_check(key, logits, e, dl, fwd_objective, &o, FD_SAMPLES, seed + 2,
                                  FD_EPS, 1e-4, FD_RTOL));
    }
    free(logits), free(probs), free(dl), free(labels), free(rp), free(rd);
}

static void test_softmax_xent(void **state)
{
    (void)state;
    xent_case(5, 7, 3.0f, 0, 900);
    xent_case(64, 1000, 5.0f, 0, 910);  /* OpenMP rows */
    xent_case(4, 10, 1000.0f, 0, 920);  /* huge logits: stable, no inf/NaN */
    xent_case(9, 7, 3.0f, 2, 930);      /* ignored rows: no loss, no gradient, not counted */
    xent_case(64, 1000, 5.0f, 7, 940);
    /* every row ignored: loss 0 and no gradient (PyTorch's mean over nothing is NaN) */
    float logits[6] = {1, 2, 3, 4, 5, 6}, probs[6], dl[6], loss = 99;
    int32_t labels[2] = {XENT_IGNORE, XENT_IGNORE};
    OpDesc f = op_softmax_xent(PHASE_FWD, 2, 3), b = op_softmax_xent(PHASE_BWD_DATA, 2, 3);
    void *fb[] = {&loss, probs, logits, labels}, *bb[] = {dl, probs, labels};
    run(&f, fb);
    run(&b, bb);
    assert_true(loss == 0.0f);
    for (int i = 0; i < 6; i++)
        assert_true(dl[i] == 0.0f && probs[i] > 0.0f);
}

static void sqerr_case(int n, int f, bool mean, uint64_t seed)
{
    const size_t e = (size_t)n * f;
    float *pred = tu_floats(e), *target = tu_floats(e), *dp = tu_floats(e), loss = 0;
    double *rd = tu_doubles(e);
    tu_fill_uniform(pred, e, -1, 1, seed);
    tu_fill_uniform(target, e, -1, 1, seed + 1);
    tu_fill_const(dp, e, 99.0f); /* outputs are written, never accumulated */
    loss = 99.0f;
    OpDesc fw = op_sqerr(PHASE_FWD, n, f, mean);
    void *fb[] = {&loss, pred, target};
    run(&fw, fb);
    const double rl = ref_sqerr_forward(pred, target, &fw.u.sqerr);
    char key[OP_KEY_MAX];
    op_key(&fw, key);
    assert_true(tu_close(key, &loss, &rl, 1, 1e-7, 1e-6));
    expect_spot_ok(&fw, fb, NULL);
    OpDesc b = op_sqerr(PHASE_BWD_DATA, n, f, mean);
    b.u.sqerr.scale = 0.25f;
    void *bb[] = {dp, pred, target};
    run(&b, bb);
    ref_sqerr_backward_data(rd, pred, target, &b.u.sqerr);
    op_key(&b, key);
    assert_true(tu_close(key, dp, rd, e, 1e-8, 1e-5));
    expect_spot_ok(&b, bb, NULL);
    if (e <= 4096) {
        b.u.sqerr.scale = 1.0f;
        run(&b, bb);
        const float one = 1.0f;
        FwdObj o = {.fwd = &fw, .bufs = fb, .nout = 1, .out = {0}, .r = {&one}, .n = {1}};
        assert_true(tu_grad_check(key, pred, e, dp, fwd_objective, &o, FD_SAMPLES, seed + 2,
                                  FD_EPS, 1e-4, FD_RTOL));
    }
    free(pred), free(target), free(dp), free(rd);
}

static void test_sqerr(void **state)
{
    (void)state;
    sqerr_case(4, 6, true, 1000);
    sqerr_case(4, 6, false, 1010);
    sqerr_case(300, 200, true, 1020); /* OpenMP reduction */
    sqerr_case(300, 200, false, 1030);
}

/* ---------------------------------------------------------------------------------------
 * LSTM cell
 * ------------------------------------------------------------------------------------- */

static void lstm_case(int B, int H, float forget_bias, bool fd, uint64_t seed)
{
    const size_t bh = (size_t)B * H, b4 = 4 * bh;
    float *pre = tu_floats(b4), *b = tu_floats(4 * (size_t)H), *cp = tu_floats(bh);
    float *c = tu_floats(bh), *h = tu_floats(bh), *act = tu_floats(b4);
    float *dh = tu_floats(bh), *dc = tu_floats(bh), *dpre = tu_floats(b4), *dcp = tu_floats(bh);
    double *rc = tu_doubles(bh), *rh = tu_doubles(bh), *ract = tu_doubles(b4);
    double *rdpre = tu_doubles(b4), *rdcp = tu_doubles(bh);
    tu_fill_uniform(pre, b4, -2, 2, seed);
    tu_fill_uniform(b, 4 * (size_t)H, -0.5f, 0.5f, seed + 1);
    tu_fill_uniform(cp, bh, -1.5f, 1.5f, seed + 2);
    tu_fill_uniform(dh, bh, -1, 1, seed + 3);
    tu_fill_uniform(dc, bh, -1, 1, seed + 4);
    tu_fill_const(c, bh, 99.0f); /* outputs are written, never accumulated */
    tu_fill_const(h, bh, 99.0f);
    tu_fill_const(act, b4, 99.0f);
    tu_fill_const(dpre, b4, 99.0f);
    tu_fill_const(dcp, bh, 99.0f);
    OpDesc f = op_lstm_cell(PHASE_FWD, B, H, forget_bias);
    OpDesc bk = op_lstm_cell(PHASE_BWD_DATA, B, H, forget_bias);
    void *fb[] = {c, h, act, pre, cp, b};
    run(&f, fb);
    ref_lstm_forward(rc, rh, ract, pre, cp, b, &f.u.lstm);
    assert_true(tu_close("lstm c_t", c, rc, bh, 1e-6, 1e-5));
    assert_true(tu_close("lstm h_t", h, rh, bh, 1e-6, 1e-5));
    assert_true(tu_close("lstm act", act, ract, b4, 1e-6, 1e-5));
    expect_spot_ok(&f, fb, NULL);
    void *bb[] = {dpre, dcp, dh, dc, act, cp, c};
    run(&bk, bb);
    ref_lstm_backward_data(rdpre, rdcp, dh, dc, pre, cp, b, &bk.u.lstm);
    assert_true(tu_close("lstm dpre", dpre, rdpre, b4, 1e-5, 1e-4));
    assert_true(tu_close("lstm dc_prev", dcp, rdcp, bh, 1e-5, 1e-4));
    expect_spot_ok(&bk, bb, NULL);
    /* dc_prev may alias dc_t (one buffer carried back through time) */
    float *dci = tu_dup(dc, bh);
    float *dpre2 = tu_floats(b4);
    void *bi[] = {dpre2, dci, dh, dci, act, cp, c};
    run(&bk, bi);
    assert_true(tu_close_f("lstm dc_prev aliasing dc_t", dci, dcp, bh, 0, 0));
    assert_true(tu_close_f("lstm dpre with aliasing", dpre2, dpre, b4, 0, 0));
    if (fd) {
        /* L = sum h r_h + sum c r_c with r_h = dh, r_c = dc */
        FwdObj o = {.fwd = &f, .bufs = fb, .nout = 2, .out = {1, 0}, .r = {dh, dc},
                    .n = {bh, bh}};
        assert_true(tu_grad_check("lstm dpre", pre, b4, dpre, fwd_objective, &o, 60,
                                  seed + 5, FD_EPS, FD_ATOL, FD_RTOL));
        assert_true(tu_grad_check("lstm dc_prev", cp, bh, dcp, fwd_objective, &o, FD_SAMPLES,
                                  seed + 6, FD_EPS, FD_ATOL, FD_RTOL));
        /* the bias gradient is OP_BIAS BWD_WEIGHTS over dpre viewed as (B, 4H, 1) */
        float *db = tu_floats(4 * (size_t)H);
        OpDesc bw = op_bias(PHASE_BWD_WEIGHTS, B, 4 * H, 1);
        bw.u.bias.accumulate = false;
        void *bwb[] = {db, dpre};
        run(&bw, bwb);
        assert_true(tu_grad_check("lstm db via bias", b, 4 * (size_t)H, db, fwd_objective, &o,
                                  FD_SAMPLES, seed + 7, FD_EPS, FD_ATOL, FD_RTOL));
        free(db);
    }
    free(pre), free(b), free(cp), free(c), free(h), free(act), free(dh), free(dc), free(dpre);
    free(dcp), free(rc), free(rh), free(ract), free(rdpre), free(rdcp), free(dci), free(dpre2);
}

static void test_lstm_cell(void **state)
{
    (void)state;
    lstm_case(3, 5, 1.0f, true, 1100);
    lstm_case(2, 8, 0.0f, true, 1110);
    lstm_case(16, 700, 1.0f, false, 1120); /* OpenMP rows */
}

/* ---------------------------------------------------------------------------------------
 * Optimizers, memory ops, STREAM
 * ------------------------------------------------------------------------------------- */

static void test_updates(void **state)
{
    (void)state;
    static const size_t counts[] = {17, 100003};
    for (size_t ci = 0; ci < 2; ci++) {
        const size_t n = counts[ci];
        float *w = tu_floats(n), *acc = tu_floats(n), *g = tu_floats(n);
        double *rw = tu_doubles(n), *ra = tu_doubles(n);
        tu_fill_uniform(w, n, -1, 1, 1200 + ci);
        for (size_t i = 0; i < n; i++)
            rw[i] = w[i];
        OpDesc s = op_sgd(n, 0.05f);
        for (int step = 0; step < 3; step++) {
            tu_fill_uniform(g, n, -1, 1, 1210 + 10 * ci + step);
            float *w0 = tu_dup(w, n);
            void *b[] = {w, g}, *b0[] = {w0, NULL};
            run(&s, b);
            for (size_t i = 0; i < n; i++)
                rw[i] -= 0.05 * g[i];
            expect_spot_ok(&s, b, b0);
            free(w0);
        }
        assert_true(tu_close("sgd", w, rw, n, 1e-6, 1e-5));

        /* Keras RMSprop from acc = 0 */
        tu_fill_uniform(w, n, -1, 1, 1250 + ci);
        for (size_t i = 0; i < n; i++)
            rw[i] = w[i], ra[i] = 0.0, acc[i] = 0.0f;
        OpDesc r = op_rmsprop(n, 0.001f, 0.9f, 1e-7f);
        for (int step = 0; step < 3; step++) {
            tu_fill_uniform(g, n, -1, 1, 1260 + 10 * ci + step);
            float *w0 = tu_dup(w, n), *a0 = tu_dup(acc, n);
            void *b[] = {w, acc, g}, *b0[] = {w0, a0, NULL};
            run(&r, b);
            for (size_t i = 0; i < n; i++) {
                ra[i] = 0.9 * ra[i] + 0.1 * (double)g[i] * g[i];
                rw[i] -= 0.001 * g[i] / (sqrt(ra[i]) + 1e-7);
            }
            expect_spot_ok(&r, b, b0);
            free(w0), free(a0);
        }
        assert_true(tu_close("rmsprop acc", acc, ra, n, 1e-7, 1e-5));
        assert_true(tu_close("rmsprop w", w, rw, n, 1e-6, 1e-5));
        free(w), free(acc), free(g), free(rw), free(ra);
    }
}

static void test_memory_and_stream(void **state)
{
    (void)state;
    static const size_t counts[] = {1000, 100003};
    for (size_t ci = 0; ci < 2; ci++) {
        const size_t n = counts[ci];
        float *a = tu_floats(n), *b = tu_floats(n), *c = tu_floats(n), *e = tu_floats(n);
        tu_fill_uniform(a, n, -1, 1, 1300 + ci);
        tu_fill_uniform(b, n, -1, 1, 1310 + ci);
        tu_fill_uniform(c, n, -1, 1, 1320 + ci);
        const float q = 3.0f;
        OpDesc d;
        void *bufs[] = {a, b, c};
        /* copy c = a */
        d = op_stream(STREAM_COPY, n, q);
        run(&d, bufs);
        assert_true(tu_close_f("stream copy", c, a, n, 0, 0));
        expect_spot_ok(&d, bufs, NULL);
        /* scale b = q c */
        d = op_stream(STREAM_SCALE, n, q);
        for (size_t i = 0; i < n; i++)
            e[i] = q * c[i];
        run(&d, bufs);
        assert_true(tu_close_f("stream scale", b, e, n, 0, 0));
        expect_spot_ok(&d, bufs, NULL);
        /* add c = a + b */
        d = op_stream(STREAM_ADD, n, q);
        for (size_t i = 0; i < n; i++)
            e[i] = a[i] + b[i];
        run(&d, bufs);
        assert_true(tu_close_f("stream add", c, e, n, 0, 0));
        expect_spot_ok(&d, bufs, NULL);
        /* triad a = b + q c */
        d = op_stream(STREAM_TRIAD, n, q);
        for (size_t i = 0; i < n; i++)
            e[i] = b[i] + q * c[i];
        run(&d, bufs);
        /* The kernels are built with FMA contraction: b + q*c may be rounded
         * once instead of twice, so allow one rounding of q*c (values here are O(10)). */
        assert_true(tu_close_f("stream triad", a, e, n, 1e-5, 2e-7));
        expect_spot_ok(&d, bufs, NULL);
        /* copy and zero */
        d = op_copy(PHASE_FWD, n);
        void *cb[] = {e, b};
        run(&d, cb);
        assert_true(tu_close_f("copy", e, b, n, 0, 0));
        expect_spot_ok(&d, cb, NULL);
        d = op_zero(PHASE_BWD_WEIGHTS, n);
        void *zb[] = {e};
        run(&d, zb);
        for (size_t i = 0; i < n; i++)
            assert_true(e[i] == 0.0f);
        expect_spot_ok(&d, zb, NULL);
        free(a), free(b), free(c), free(e);
    }
}

/* ---------------------------------------------------------------------------------------
 * Model-zoo ops: batch norm, LRN, dropout, channel copy, axpby, embedding, KL penalty,
 * shrink / norm1, and the optimizers with momentum, Adam and L2 decay
 * ------------------------------------------------------------------------------------- */

/* Batch norm: training forward, running statistics, inference, and the BWD_WEIGHTS /
 * BWD_DATA pair, each against the reference; finite differences through the batch
 * statistics for dx, dgamma and dbeta. x has a mean far from 0 (3) so a one-pass variance
 * without care would show. */
static void bn_case(int n, int c, int sp, bool fd, uint64_t seed)
{
    const size_t e = (size_t)n * c * sp, C = (size_t)c;
    float *x = tu_floats(e), *y = tu_floats(e), *dy = tu_floats(e), *dx = tu_floats(e);
    float *gamma = tu_floats(C), *beta = tu_floats(C), *mean = tu_floats(C), *inv = tu_floats(C);
    float *rm = tu_floats(C), *rv = tu_floats(C), *dg = tu_floats(C), *db = tu_floats(C);
    double *ry = tu_doubles(e), *rmean = tu_doubles(C), *rinv = tu_doubles(C);
    double *rrm = tu_doubles(C), *rrv = tu_doubles(C), *rdx = tu_doubles(e);
    double *rdg = tu_doubles(C), *rdb = tu_doubles(C), *ex = tu_doubles(e), *ec = tu_doubles(C);
    tu_fill_uniform(x, e, 2.0f, 4.0f, seed);
    tu_fill_uniform(gamma, C, 0.5f, 1.5f, seed + 1);
    tu_fill_uniform(beta, C, -0.5f, 0.5f, seed + 2);
    tu_fill_uniform(rm, C, -1, 1, seed + 3);
    tu_fill_uniform(rv, C, 0.5f, 2.0f, seed + 4);
    tu_fill_uniform(dy, e, -1, 1, seed + 5);
    float *rm0 = tu_dup(rm, C), *rv0 = tu_dup(rv, C);
    OpDesc f = op_batchnorm(PHASE_FWD, n, c, sp, 1e-3f, 0.9f, true);
    char key[OP_KEY_MAX];
    op_key(&f, key);
    tu_fill_const(y, e, 99.0f);
    void *fb[] = {y, mean, inv, rm, rv, x, gamma, beta};
    run(&f, fb);
    ref_batchnorm_forward_train(ry, rmean, rinv, rrm, rrv, x, gamma, beta, rm0, rv0, &f.u.bn);
    assert_true(tu_close(key, y, ry, e, 1e-5, 1e-5));
    assert_true(tu_close("bn mean", mean, rmean, C, 1e-6, 1e-6));
    assert_true(tu_close("bn invstd", inv, rinv, C, 1e-6, 1e-5));
    assert_true(tu_close("bn running mean (Keras)", rm, rrm, C, 1e-6, 1e-6));
    assert_true(tu_close("bn running variance (Keras, unbiased)", rv, rrv, C, 1e-6, 1e-5));
    void *fb0[] = {NULL, NULL, NULL, rm0, rv0, NULL, NULL, NULL};
    expect_spot_ok(&f, fb, fb0);

    /* inference uses the running statistics, by the formula */
    OpDesc fi = op_batchnorm(PHASE_FWD, n, c, sp, 1e-3f, 0.9f, false);
    void *fib[] = {y, x, gamma, beta, rm, rv};
    run(&fi, fib);
    ref_batchnorm_forward_infer(ry, x, gamma, beta, rm, rv, &fi.u.bn);
    op_key(&fi, key);
    assert_true(tu_close(key, y, ry, e, 1e-5, 1e-5));
    expect_spot_ok(&fi, fib, NULL);
    run(&f, fb); /* back to this batch's statistics for the backward pass */

    ref_batchnorm_backward(rdx, rdg, rdb, dy, x, gamma, &f.u.bn);
    for (int acc = 0; acc < 2; acc++) {
        OpDesc bw = op_batchnorm(PHASE_BWD_WEIGHTS, n, c, sp, 1e-3f, 0.9f, true);
        OpDesc bd = op_batchnorm(PHASE_BWD_DATA, n, c, sp, 1e-3f, 0.9f, true);
        bw.u.bn.accumulate = acc;
        bd.u.bn.accumulate = acc;
        tu_fill_const(dg, C, 0.5f);
        tu_fill_const(db, C, -0.5f);
        tu_fill_const(dx, e, 0.25f);
        float *dg0 = tu_dup(dg, C), *db0 = tu_dup(db, C), *dx0 = tu_dup(dx, e);
        void *bwb[] = {dg, db, dy, x, mean, inv};
        run(&bw, bwb);
        op_key(&bw, key);
        for (size_t i = 0; i < C; i++)
            ec[i] = rdg[i] + (acc ? 0.5 : 0.0);
        assert_true(tu_close(key, dg, ec, C, 1e-5, 1e-4));
        for (size_t i = 0; i < C; i++)
            ec[i] = rdb[i] + (acc ? -0.5 : 0.0);
        assert_true(tu_close(key, db, ec, C, 1e-5, 1e-4));
        void *bwx[] = {dg0, db0, NULL, NULL, NULL, NULL};
        expect_spot_ok(&bw, bwb, bwx);
        /* BWD_DATA reads the step's own dgamma/dbeta: with accumulate they hold the prior
         * too, so it is given a written pair (the plan's order: BWD_WEIGHTS first, written) */
        float *dgw = tu_floats(C), *dbw = tu_floats(C);
        OpDesc bw1 = bw;
        bw1.u.bn.accumulate = false;
        void *bw1b[] = {dgw, dbw, dy, x, mean, inv};
        run(&bw1, bw1b);
        void *bdb[] = {dx, dy, x, gamma, mean, inv, dgw, dbw};
        run(&bd, bdb);
        op_key(&bd, key);
        for (size_t i = 0; i < e; i++)
            ex[i] = rdx[i] + (acc ? 0.25 : 0.0);
        assert_true(tu_close(key, dx, ex, e, 1e-5, 1e-4));
        void *bdx[] = {dx0, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        expect_spot_ok(&bd, bdb, bdx);
        free(dg0), free(db0), free(dx0), free(dgw), free(dbw);
    }
    if (fd) {
        /* L = sum y r through the batch statistics: the pair gives dx, BWD_WEIGHTS dgamma
         * and dbeta, all with accumulate cleared (the plan's first writers) */
        OpDesc bw = op_batchnorm(PHASE_BWD_WEIGHTS, n, c, sp, 1e-3f, 0.9f, true);
        OpDesc bd = op_batchnorm(PHASE_BWD_DATA, n, c, sp, 1e-3f, 0.9f, true);
        bw.u.bn.accumulate = bd.u.bn.accumulate = false;
        run(&f, fb);
        void *bwb[] = {dg, db, dy, x, mean, inv}, *bdb[] = {dx, dy, x, gamma, mean, inv, dg, db};
        run(&bw, bwb);
        run(&bd, bdb);
        FwdObj o = {.fwd = &f, .bufs = fb, .nout = 1, .out = {0}, .r = {dy}, .n = {e}};
        assert_true(tu_grad_check("bn dx (pair)", x, e, dx, fwd_objective, &o, FD_SAMPLES,
                                  seed + 6, FD_EPS, FD_ATOL, FD_RTOL));
        assert_true(tu_grad_check("bn dgamma", gamma, C, dg, fwd_objective, &o, FD_SAMPLES,
                                  seed + 7, FD_EPS, FD_ATOL, FD_RTOL));
        assert_true(tu_grad_check("bn dbeta", beta, C, db, fwd_objective, &o, FD_SAMPLES,
                                  seed + 8, FD_EPS, FD_ATOL, FD_RTOL));
    }
    free(x), free(y), free(dy), free(dx), free(gamma), free(beta), free(mean), free(inv);
    free(rm), free(rv), free(dg), free(db), free(ry), free(rmean), free(rinv), free(rrm);
    free(rrv), free(rdx), free(rdg), free(rdb), free(ex), free(ec), free(rm0), free(rv0);
}

static void test_batchnorm(void **state)
{
    (void)state;
    bn_case(3, 4, 5, true, 2000);
    bn_case(6, 5, 1, true, 2010);     /* dense (n, c): the row path */
    bn_case(2, 3, 2, true, 2020);     /* tiny planes */
    bn_case(8, 16, 300, false, 2030); /* OpenMP channels */
    bn_case(64, 600, 1, false, 2040); /* OpenMP column blocks, a ragged last block */
    bn_case(2, 300, 2000, false, 2045); /* planes: blocks of 128 channels, ragged last */
    /* one value per channel (m = 1): variance 0, the running update's factor 1 */
    bn_case(1, 3, 1, false, 2050);
}

/* Running statistics over several steps match Keras' moving averages exactly as composed
 * updates (the momentum applied once per step, never to the unbiased factor). */
static void test_batchnorm_running_stats(void **state)
{
    (void)state;
    const int n = 4, c = 3, sp = 2;
    const size_t e = (size_t)n * c * sp;
    float x[24], y[24], mean[3], inv[3], rm[3] = {0, 0, 0}, rv[3] = {1, 1, 1};
    float gamma[3] = {1, 1, 1}, beta[3] = {0, 0, 0};
    double erm[3] = {0, 0, 0}, erv[3] = {1, 1, 1};
    OpDesc f = op_batchnorm(PHASE_FWD, n, c, sp, 1e-3f, 0.99f, true);
    for (int step = 0; step < 3; step++) {
        tu_fill_uniform(x, e, -2, 2, 2100 + step);
        void *fb[] = {y, mean, inv, rm, rv, x, gamma, beta};
        run(&f, fb);
        for (int ch = 0; ch < c; ch++) {
            double s = 0, ss = 0;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < sp; j++) {
                    const double v = x[(i * c + ch) * sp + j];
                    s += v, ss += v * v;
                }
            const double mu = s / 8, var = ss / 8 - mu * mu;
            erm[ch] = 0.99 * erm[ch] + 0.01 * mu;
            erv[ch] = 0.99 * erv[ch] + 0.01 * var * 8 / (8 - 1.001); /* Keras' sample variance */
        }
    }
    assert_true(tu_close("bn running mean, 3 steps", rm, erm, 3, 1e-7, 1e-6));
    assert_true(tu_close("bn running variance, 3 steps", rv, erv, 3, 1e-7, 1e-6));
}

/* LRN against the chain-rule reference, both phases, accumulate and overwrite, plus
 * finite differences. alpha is large so the normalisation matters. */
static void lrn_case(int n, int c, int sp, int size, float alpha, float beta, float k, bool fd,
                     uint64_t seed)
{
    const size_t e = (size_t)n * c * sp;
    float *x = tu_floats(e), *y = tu_floats(e), *sc = tu_floats(e), *dy = tu_floats(e);
    float *dx = tu_floats(e);
    double *ry = tu_doubles(e), *rs = tu_doubles(e), *rdx = tu_doubles(e), *ex = tu_doubles(e);
    tu_fill_uniform(x, e, -2, 2, seed);
    tu_fill_uniform(dy, e, -1, 1, seed + 1);
    OpDesc f = op_lrn(PHASE_FWD, n, c, sp, size, alpha, beta, k);
    char key[OP_KEY_MAX];
    op_key(&f, key);
    void *fb[] = {y, sc, x};
    run(&f, fb);
    ref_lrn_forward(ry, rs, x, &f.u.lrn);
    assert_true(tu_close(key, y, ry, e, 1e-6, 1e-5));
    assert_true(tu_close("lrn scale", sc, rs, e, 1e-6, 1e-6));
    expect_spot_ok(&f, fb, NULL);
    ref_lrn_backward_data(rdx, dy, x, &f.u.lrn);
    for (int acc = 0; acc < 2; acc++) {
        OpDesc b = op_lrn(PHASE_BWD_DATA, n, c, sp, size, alpha, beta, k);
        b.u.lrn.accumulate = acc;
        tu_fill_const(dx, e, 0.75f);
        float *dx0 = tu_dup(dx, e);
        void *bb[] = {dx, dy, x, y, sc};
        run(&b, bb);
        for (size_t i = 0; i < e; i++)
            ex[i] = rdx[i] + (acc ? 0.75 : 0.0);
        op_key(&b, key);
        assert_true(tu_close(key, dx, ex, e, 1e-5, 1e-4));
        void *bx[] = {dx0, NULL, NULL, NULL, NULL};
        expect_spot_ok(&b, bb, bx);
        free(dx0);
    }
    if (fd) {
        OpDesc b = op_lrn(PHASE_BWD_DATA, n, c, sp, size, alpha, beta, k);
        b.u.lrn.accumulate = false;
        void *bb[] = {dx, dy, x, y, sc};
        run(&b, bb);
        FwdObj o = {.fwd = &f, .bufs = fb, .nout = 1, .out = {0}, .r = {dy}, .n = {e}};
        op_key(&b, key);
        assert_true(tu_grad_check(key, x, e, dx, fwd_objective, &o, FD_SAMPLES, seed + 2,
                                  FD_EPS, FD_ATOL, FD_RTOL));
    }
    free(x), free(y), free(sc), free(dy), free(dx), free(ry), free(rs), free(rdx), free(ex);
}

static void test_lrn(void **state)
{
    (void)state;
    lrn_case(2, 7, 9, 5, 0.5f, 0.75f, 2.0f, true, 2200);
    lrn_case(1, 3, 4, 5, 1.0f, 0.75f, 1.0f, true, 2210);  /* window wider than c */
    lrn_case(2, 5, 3, 1, 0.8f, 0.6f, 1.5f, true, 2220);   /* size 1 */
    lrn_case(2, 6, 5, 3, 0.3f, 1.3f, 0.5f, true, 2230);   /* beta > 1, k < 1 */
    lrn_case(1, 9, 2000, 5, 1e-4f, 0.75f, 1.0f, false, 2240); /* AlexNet values, 3 blocks */
    lrn_case(2, 9, 2000, 5, 0.5f, 0.75f, 1.0f, false, 2250);  /* OpenMP units */
}

/* Dropout: the mask statistics (fraction dropped ~ rate, pairs independent), values,
 * y = x * mask, reproducibility per (seed, step), independence of the thread count, and
 * the backward pass with the same mask. */
static void test_dropout(void **state)
{
    (void)state;
    const size_t n = 200003;
    const float rate = 0.3f;
    float *x = tu_floats(n), *y = tu_floats(n), *m1 = tu_floats(n), *m2 = tu_floats(n);
    float *dy = tu_floats(n), *dx = tu_floats(n);
    tu_fill_uniform(x, n, -1, 1, 2300);
    tu_fill_uniform(dy, n, -1, 1, 2301);
    int32_t step = 5;
    OpDesc f = op_dropout(PHASE_FWD, n, rate, 1234u);
    void *fb[] = {y, m1, x, &step};
    run(&f, fb);
    const float scale = 1.0f / (1.0f - rate);
    size_t dropped = 0, both = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(m1[i] == 0.0f || m1[i] == scale);
        assert_true(y[i] == x[i] * m1[i]);
        dropped += m1[i] == 0.0f;
        both += i + 1 < n && m1[i] == 0.0f && m1[i + 1] == 0.0f;
    }
    /* binomial: sd of the fraction sqrt(p(1-p)/n) = 0.001; 5 sd */
    const double frac = (double)dropped / (double)n;
    if (fabs(frac - rate) > 0.005)
        fprintf(stderr, "  dropout fraction %.4f, rate %.2f\n", frac, rate);
    assert_true(fabs(frac - rate) <= 0.005);
    assert_true(fabs((double)both / (double)(n - 1) - rate * rate) <= 0.005); /* neighbours */
    expect_spot_ok(&f, fb, NULL);

    /* the same step gives the same mask, another step another one, also across threads */
    const int t0 = ops_get_threads();
    ops_set_threads(1);
    void *fb2[] = {y, m2, x, &step};
    run(&f, fb2);
    assert_memory_equal(m1, m2, n * sizeof(float));
    ops_set_threads(2);
    run(&f, fb2);
    assert_memory_equal(m1, m2, n * sizeof(float));
    ops_set_threads(t0);
    step = 6;
    run(&f, fb2);
    size_t differ = 0;
    for (size_t i = 0; i < n; i++)
        differ += (m1[i] == 0.0f) != (m2[i] == 0.0f);
    /* two independent masks disagree with probability 2 p (1 - p) = 0.42 */
    assert_true(fabs((double)differ / (double)n - 2.0 * rate * (1.0 - rate)) <= 0.01);
    step = 5;
    OpDesc f2 = op_dropout(PHASE_FWD, n, rate, 1235u); /* another seed */
    void *fb3[] = {y, m2, x, &step};
    run(&f2, fb3);
    assert_true(memcmp(m1, m2, n * sizeof(float)) != 0);
    run(&f, fb); /* y, m1 back to (seed 1234, step 5) */

    /* in place (y aliasing x) gives the same */
    float *xi = tu_dup(x, n);
    void *fi[] = {xi, m2, xi, &step};
    run(&f, fi);
    assert_memory_equal(xi, y, n * sizeof(float));

    /* backward with the fixed mask: dx = dy * mask, also in place; finite differences of
     * L = sum y dy over a small prefix (the op is linear in x for a fixed step) */
    OpDesc b = op_dropout(PHASE_BWD_DATA, n, rate, 1234u);
    void *bb[] = {dx, dy, m1};
    run(&b, bb);
    for (size_t i = 0; i < n; i++)
        assert_true(dx[i] == dy[i] * m1[i]);
    expect_spot_ok(&b, bb, NULL);
    float *dyi = tu_dup(dy, n);
    void *bi[] = {dyi, dyi, m1};
    run(&b, bi);
    assert_memory_equal(dyi, dx, n * sizeof(float));
    OpDesc fs = op_dropout(PHASE_FWD, 500, rate, 1234u);
    OpDesc bs = op_dropout(PHASE_BWD_DATA, 500, rate, 1234u);
    void *fsb[] = {y, m2, x, &step}, *bsb[] = {dx, dy, m2};
    run(&fs, fsb);
    run(&bs, bsb);
    FwdObj o = {.fwd = &fs, .bufs = fsb, .nout = 1, .out = {0}, .r = {dy}, .n = {500}};
    assert_true(tu_grad_check("dropout dx", x, 500, dx, fwd_objective, &o, FD_SAMPLES, 2302,
                              FD_EPS, FD_ATOL, FD_RTOL));
    assert_memory_equal(m2, m1, 500 * sizeof(float)); /* a prefix of the same draws */

    /* rate 0 keeps everything */
    OpDesc z = op_dropout(PHASE_FWD, 1000, 0.0f, 7u);
    void *zb[] = {y, m2, x, &step};
    run(&z, zb);
    for (size_t i = 0; i < 1000; i++)
        assert_true(m2[i] == 1.0f && y[i] == x[i]);
    free(x), free(y), free(m1), free(m2), free(dy), free(dx), free(xi), free(dyi);
}

/* Channel copy: two inputs concatenated into y and their gradients pulled back. */
static void chan_case(int n, int c1, int c2, int pad_after, int sp, uint64_t seed)
{
    const int cd = c1 + c2 + pad_after;
    const size_t ny = (size_t)n * cd * sp, n1 = (size_t)n * c1 * sp, n2 = (size_t)n * c2 * sp;
    float *y = tu_floats(ny), *x1 = tu_floats(n1), *x2 = tu_floats(n2), *dy = tu_floats(ny);
    float *d1 = tu_floats(n1), *d2 = tu_floats(n2);
    double *ry = tu_doubles(ny), *rd = tu_doubles(n1 > n2 ? n1 : n2);
    tu_fill_uniform(y, ny, -1, 1, seed);
    tu_fill_uniform(x1, n1, -1, 1, seed + 1);
    tu_fill_uniform(x2, n2, -1, 1, seed + 2);
    tu_fill_uniform(dy, ny, -1, 1, seed + 3);
    OpDesc f1 = op_channel_copy(PHASE_FWD, n, cd, c1, 0, sp);
    OpDesc f2 = op_channel_copy(PHASE_FWD, n, cd, c2, c1, sp);
    char key[OP_KEY_MAX];
    op_key(&f2, key);
    float *y0 = tu_dup(y, ny);
    void *b1[] = {y, x1};
    run(&f1, b1);
    void *b1x[] = {y0, NULL};
    expect_spot_ok(&f1, b1, b1x);
    float *y1 = tu_dup(y, ny);
    void *b2[] = {y, x2};
    run(&f2, b2);
    void *b2x[] = {y1, NULL};
    expect_spot_ok(&f2, b2, b2x);
    ref_channel_copy_forward(ry, y1, x2, &f2.u.chan);
    assert_true(tu_close(key, y, ry, ny, 0, 0)); /* the slice is x2, the rest untouched */
    for (size_t i = 0; i < n1; i++) /* and x1 is still there */
        assert_true(y[(i / ((size_t)c1 * sp)) * (size_t)cd * sp + i % ((size_t)c1 * sp)] == x1[i]);
    for (int acc = 0; acc < 2; acc++) {
        OpDesc b = op_channel_copy(PHASE_BWD_DATA, n, cd, c2, c1, sp);
        b.u.chan.accumulate = acc;
        tu_fill_const(d2, n2, 1.5f);
        float *d20 = tu_dup(d2, n2);
        void *bb[] = {d2, dy};
        run(&b, bb);
        ref_channel_copy_backward_data(rd, dy, &b.u.chan);
        for (size_t i = 0; i < n2; i++)
            rd[i] += acc ? 1.5 : 0.0;
        op_key(&b, key);
        assert_true(tu_close(key, d2, rd, n2, 0, 1e-7));
        void *bx[] = {d20, NULL};
        expect_spot_ok(&b, bb, bx);
        free(d20);
    }
    /* finite differences of L = sum y dy with respect to x1 */
    OpDesc bk = op_channel_copy(PHASE_BWD_DATA, n, cd, c1, 0, sp);
    bk.u.chan.accumulate = false;
    void *bkb[] = {d1, dy};
    run(&bk, bkb);
    FwdObj o = {.fwd = &f1, .bufs = b1, .nout = 1, .out = {0}, .r = {dy}, .n = {ny}};
    assert_true(tu_grad_check("channel_copy dx", x1, n1, d1, fwd_objective, &o, FD_SAMPLES,
                              seed + 4, FD_EPS, FD_ATOL, FD_RTOL));
    free(y), free(x1), free(x2), free(dy), free(d1), free(d2), free(ry), free(rd), free(y0);
    free(y1);
}

static void test_channel_copy(void **state)
{
    (void)state;
    chan_case(3, 2, 3, 2, 5, 2400);    /* slice in the middle */
    chan_case(2, 4, 1, 0, 1, 2410);    /* last slice ends at c_dst, spatial 1 */
    chan_case(2, 32, 16, 16, 784, 2420); /* OpenMP, n smaller than what threads split */
}

static void test_axpby(void **state)
{
    (void)state;
    static const size_t counts[] = {1000, 100003};
    for (int ci = 0; ci < 2; ci++) {
        const size_t n = counts[ci];
        float *a = tu_floats(n), *b = tu_floats(n), *y = tu_floats(n);
        double *r = tu_doubles(n);
        tu_fill_uniform(a, n, -1, 1, 2500 + ci);
        tu_fill_uniform(b, n, -1, 1, 2510 + ci);
        OpDesc d = op_axpby(PHASE_BWD_DATA, n, 1.5f, -0.25f);
        void *bufs[] = {y, a, b};
        run(&d, bufs);
        ref_axpby(r, a, b, &d.u.axpby);
        assert_true(tu_close("axpby", y, r, n, 1e-7, 1e-6));
        expect_spot_ok(&d, bufs, NULL);
        /* y aliasing a, then b */
        float *ai = tu_dup(a, n), *bi = tu_dup(b, n);
        void *ia[] = {ai, ai, b}, *ib[] = {bi, a, bi};
        run(&d, ia);
        run(&d, ib);
        assert_memory_equal(ai, y, n * sizeof(float));
        assert_memory_equal(bi, y, n * sizeof(float));
        /* dL/da of L = sum y r is alpha r */
        float *g = tu_floats(n);
        for (size_t i = 0; i < n; i++)
            g[i] = 1.5f * b[i];
        FwdObj o = {.fwd = &d, .bufs = bufs, .nout = 1, .out = {0}, .r = {b}, .n = {n}};
        assert_true(tu_grad_check("axpby da", a, n, g, fwd_objective, &o, 10, 2520, FD_EPS,
                                  FD_ATOL, FD_RTOL));
        free(a), free(b), free(y), free(r), free(ai), free(bi), free(g);
    }
}

static void embed_case(int n, int vocab, int dim, uint64_t seed)
{
    const size_t ny = (size_t)n * dim, nw = (size_t)vocab * dim;
    float *W = tu_floats(nw), *y = tu_floats(ny), *dy = tu_floats(ny), *dW = tu_floats(nw);
    float *dW2 = tu_floats(nw);
    int32_t *ids = calloc((size_t)n, sizeof *ids);
    assert_non_null(ids);
    double *ry = tu_doubles(ny), *rw = tu_doubles(nw);
    tu_fill_uniform(W, nw, -1, 1, seed);
    tu_fill_uniform(dy, ny, -1, 1, seed + 1);
    tu_fill_labels(ids, (size_t)n, vocab, seed + 2); /* repeats when n > vocab */
    OpDesc f = op_embedding(PHASE_FWD, n, vocab, dim);
    char key[OP_KEY_MAX];
    op_key(&f, key);
    void *fb[] = {y, ids, W};
    run(&f, fb);
    ref_embedding_forward(ry, ids, W, &f.u.embed);
    assert_true(tu_close(key, y, ry, ny, 0, 0));
    expect_spot_ok(&f, fb, NULL);
    ref_embedding_backward_weights(rw, dy, ids, &f.u.embed);
    for (int acc = 0; acc < 2; acc++) {
        OpDesc b = op_embedding(PHASE_BWD_WEIGHTS, n, vocab, dim);
        b.u.embed.accumulate = acc;
        tu_fill_const(dW, nw, -2.0f);
        float *dW0 = tu_dup(dW, nw);
        void *bb[] = {dW, dy, ids};
        run(&b, bb);
        double *e = tu_doubles(nw);
        for (size_t i = 0; i < nw; i++)
            e[i] = rw[i] + (acc ? -2.0 : 0.0);
        op_key(&b, key);
        assert_true(tu_close(key, dW, e, nw, 1e-6, 1e-5));
        void *bx[] = {dW0, NULL, NULL};
        expect_spot_ok(&b, bb, bx);
        free(e), free(dW0);
    }
    /* deterministic: bitwise the same with 1 and 2 threads */
    OpDesc b = op_embedding(PHASE_BWD_WEIGHTS, n, vocab, dim);
    b.u.embed.accumulate = false;
    const int t0 = ops_get_threads();
    void *b1[] = {dW, dy, ids}, *b2[] = {dW2, dy, ids};
    ops_set_threads(1);
    run(&b, b1);
    ops_set_threads(2);
    run(&b, b2);
    ops_set_threads(t0);
    assert_memory_equal(dW, dW2, nw * sizeof(float));
    if (nw <= 4096) {
        FwdObj o = {.fwd = &f, .bufs = fb, .nout = 1, .out = {0}, .r = {dy}, .n = {ny}};
        assert_true(tu_grad_check("embedding dW", W, nw, dW, fwd_objective, &o, FD_SAMPLES,
                                  seed + 3, FD_EPS, FD_ATOL, FD_RTOL));
    }
    free(W), free(y), free(dy), free(dW), free(dW2), free(ids), free(ry), free(rw);
}

static void test_embedding(void **state)
{
    (void)state;
    embed_case(50, 20, 7, 2600);     /* repeated ids */
    embed_case(5, 40, 3, 2610);      /* most rows untouched */
    embed_case(2000, 100, 33, 2620); /* OpenMP column blocks */
}

/* The positional lookup: T positions of a time-major sequence of B samples, each row
 * reading its position's row of a table with more rows than the sequence uses; backward
 * sums each position's B rows, overwriting or adding. */
static void test_embedding_positions(void **state)
{
    (void)state;
    const int T = 37, B = 5, P = 64, D = 48, n = T * B;
    float *W = tu_floats((size_t)P * D), *y = tu_floats((size_t)n * D), *dy = tu_floats((size_t)n * D);
    float *dW = tu_floats((size_t)P * D);
    tu_fill_uniform(W, (size_t)P * D, -1, 1, 2650);
    tu_fill_uniform(dy, (size_t)n * D, -1, 1, 2651);
    OpDesc f = op_embedding_positions(PHASE_FWD, n, B, P, D);
    void *fb[] = {y, W};
    run(&f, fb);
    for (int i = 0; i < n; i++)
        assert_memory_equal(y + (size_t)i * D, W + (size_t)(i / B) * D, D * sizeof(float));
    expect_spot_ok(&f, fb, NULL);
    for (int acc = 0; acc < 2; acc++) {
        OpDesc b = op_embedding_positions(PHASE_BWD_WEIGHTS, n, B, P, D);
        b.u.embed.accumulate = acc;
        tu_fill_const(dW, (size_t)P * D, 0.5f);
        float *dW0 = tu_dup(dW, (size_t)P * D);
        void *bb[] = {dW, dy}, *bx[] = {dW0, NULL};
        run(&b, bb);
        for (int t = 0; t < P; t++)
            for (int j = 0; j < D; j++) {
                double s = acc ? 0.5 : 0.0;
                for (int k = 0; t < T && k < B; k++)
                    s += dy[((size_t)t * B + k) * D + j];
                assert_float_equal(dW[(size_t)t * D + j], s, 1e-5);
            }
        expect_spot_ok(&b, bb, acc ? bx : NULL);
        free(dW0);
    }
    char key[OP_KEY_MAX];
    op_key(&f, key);
    assert_string_equal(key, "embedding fwd n=185 vocab=64 dim=48 acc=0 pos=5");
    OpDesc back;
    assert_true(op_key_parse(key, &back) && back.u.embed.repeat == 5);
    /* no ids: two buffers; the backward touches the T rows the sequence uses */
    OpBufInfo info[OP_MAX_BUFS];
    assert_int_equal(op_buffer_info(&f, info), 2);
    OpDesc b = op_embedding_positions(PHASE_BWD_WEIGHTS, n, B, P, D);
    assert_true(op_cost(&b).bytes == 4.0 * ((double)n * D + 2.0 * T * D));
    assert_false(op_key_parse("embedding fwd n=186 vocab=64 dim=48 acc=0 pos=5", &back)); /* not a multiple */
    assert_false(op_key_parse("embedding fwd n=650 vocab=64 dim=48 acc=0 pos=5", &back)); /* 130 > 64 rows */
    assert_false(op_key_parse("embedding fwd n=185 vocab=64 dim=48 acc=0 pos=0", &back));
    free(W), free(y), free(dy), free(dW);
}

/* KL sparsity: the loss it adds and rho_hat, the gradient it adds, and finite differences
 * of the penalty through rho_hat. */
static void kl_case(int n, int units, bool fd, uint64_t seed)
{
    const size_t e = (size_t)n * units;
    float *a = tu_floats(e), *rh = tu_floats((size_t)units), *da = tu_floats(e), loss = 0.5f;
    double *rrh = tu_doubles((size_t)units), *rda = tu_doubles(e);
    tu_fill_uniform(a, e, 0.02f, 0.3f, seed); /* sigmoid outputs, near a sparse target */
    tu_fill_uniform(da, e, -1, 1, seed + 1);
    OpDesc f = op_kl_sparsity(PHASE_FWD, n, units, 0.05f, 3.0f);
    char key[OP_KEY_MAX];
    op_key(&f, key);
    float loss0 = loss;
    void *fb[] = {&loss, rh, a};
    run(&f, fb);
    const double pen = ref_kl_forward(rrh, a, &f.u.kl), el = 0.5 + pen;
    assert_true(tu_close(key, &loss, &el, 1, 1e-6, 1e-5)); /* added to the loss */
    assert_true(tu_close("kl rho_hat", rh, rrh, (size_t)units, 1e-7, 1e-6));
    void *fx[] = {&loss0, NULL, NULL};
    expect_spot_ok(&f, fb, fx);
    OpDesc b = op_kl_sparsity(PHASE_BWD_DATA, n, units, 0.05f, 3.0f);
    float *da0 = tu_dup(da, e);
    void *bb[] = {da, rh};
    run(&b, bb);
    ref_kl_backward_data(rda, a, &b.u.kl);
    for (size_t i = 0; i < e; i++)
        rda[i] += da0[i]; /* added to what the next layer wrote */
    op_key(&b, key);
    assert_true(tu_close(key, da, rda, e, 1e-6, 1e-5));
    void *bx[] = {da0, NULL};
    expect_spot_ok(&b, bb, bx);
    if (fd) {
        const float zero = 0.0f, one = 1.0f;
        tu_fill_const(da, e, 0.0f);
        run(&b, bb);
        FwdObj o = {.fwd = &f, .bufs = fb, .nout = 1, .out = {0}, .r = {&one}, .n = {1},
                    .restore = &zero};
        assert_true(tu_grad_check("kl da through rho_hat", a, e, da, fwd_objective, &o,
                                  FD_SAMPLES, seed + 2, 1e-3, 1e-3, FD_RTOL));
    }
    free(a), free(rh), free(da), free(rrh), free(rda), free(da0);
}

static void test_kl_sparsity(void **state)
{
    (void)state;
    kl_case(10, 7, true, 2700);
    kl_case(300, 300, false, 2710); /* OpenMP: column blocks forward, rows backward */
    kl_case(2, 600, false, 2720);   /* several column blocks */
}

static void test_shrink_norm1(void **state)
{
    (void)state;
    static const size_t counts[] = {1000, 100003};
    for (int ci = 0; ci < 2; ci++) {
        const size_t n = counts[ci];
        float *x = tu_floats(n), *y = tu_floats(n), out = 0;
        double *r = tu_doubles(n);
        tu_fill_uniform(x, n, -1, 1, 2800 + ci);
        OpDesc d = op_shrink(PHASE_FWD, n, 0.3f);
        void *bufs[] = {y, x};
        run(&d, bufs);
        ref_shrink(r, x, n, 0.3f);
        const double s = ref_norm1(x, n);
        assert_true(tu_close("shrink", y, r, n, 1e-7, 1e-6));
        expect_spot_ok(&d, bufs, NULL);
        float *xi = tu_dup(x, n);
        void *ib[] = {xi, xi};
        run(&d, ib);
        assert_memory_equal(xi, y, n * sizeof(float));
        OpDesc nd = op_norm1(PHASE_FWD, n);
        void *nb[] = {&out, x};
        run(&nd, nb);
        assert_true(tu_close("norm1", &out, &s, 1, 0, 1e-6));
        expect_spot_ok(&nd, nb, NULL);
        free(x), free(y), free(r), free(xi);
    }
}

/* Every optimizer over several steps against its formula in double (Adam's bias
 * correction at steps 1, 2, 3), with and without the L2 decay prefix; g is never written. */
static void update_case(OpDesc d, size_t decay, uint64_t seed)
{
    const size_t n = d.u.update.count;
    op_update_set_decay(&d, decay, 0.1f);
    assert_int_equal(d.u.update.decay_count, decay);
    float *w = tu_floats(n), *s1 = tu_floats(n), *s2 = tu_floats(n), *g = tu_floats(n);
    double *rw = tu_doubles(n), *r1 = tu_doubles(n), *r2 = tu_doubles(n);
    tu_fill_uniform(w, n, -1, 1, seed);
    for (size_t i = 0; i < n; i++)
        rw[i] = w[i];
    char key[OP_KEY_MAX];
    op_key(&d, key);
    for (long step = 1; step <= 3; step++) {
        d.u.update.step = d.kind == OP_ADAM ? step : 0;
        tu_fill_uniform(g, n, -1, 1, seed + (uint64_t)step);
        float *g0 = tu_dup(g, n), *w0 = tu_dup(w, n), *a0 = tu_dup(s1, n), *b0 = tu_dup(s2, n);
        void *bufs[4], *before[4] = {w0, a0, b0, NULL};
        int nb = 0;
        bufs[nb++] = w;
        if (d.kind != OP_SGD)
            bufs[nb++] = s1;
        if (d.kind == OP_ADAM)
            bufs[nb++] = s2;
        bufs[nb++] = g;
        if (d.kind != OP_ADAM)
            before[nb - 1] = NULL;
        run(&d, bufs);
        ref_update_step(d.kind, &d.u.update, rw, r1, r2, g);
        expect_spot_ok(&d, bufs, before);
        assert_memory_equal(g, g0, n * sizeof(float)); /* decay never touches g */
        free(g0), free(w0), free(a0), free(b0);
    }
    assert_true(tu_close(key, w, rw, n, 1e-6, 1e-5));
    if (d.kind != OP_SGD)
        assert_true(tu_close(key, s1, r1, n, 1e-7, 1e-5));
    if (d.kind == OP_ADAM)
        assert_true(tu_close(key, s2, r2, n, 1e-7, 1e-5));
    free(w), free(s1), free(s2), free(g), free(rw), free(r1), free(r2);
}

static void test_optimizers_zoo(void **state)
{
    (void)state;
    static const size_t counts[] = {17, 100003};
    for (int ci = 0; ci < 2; ci++) {
        const size_t n = counts[ci];
        /* no decay, a decay prefix (crossing the 2-thread split at n/2 for the large
         * count), and decay everywhere */
        const size_t decays[] = {0, n / 3 + n / 4, n};
        for (int di = 0; di < 3; di++) {
            const uint64_t seed = 3000 + 100 * (uint64_t)ci + 10 * (uint64_t)di;
            update_case(op_sgd(n, 0.05f), decays[di], seed);
            update_case(op_rmsprop(n, 0.001f, 0.9f, 1e-7f), decays[di], seed + 1);
            update_case(op_momentum(n, 0.05f, 0.9f, false), decays[di], seed + 2);
            update_case(op_momentum(n, 0.05f, 0.9f, true), decays[di], seed + 3);
            update_case(op_adam(n, 0.01f, 0.9f, 0.999f, 1e-7f), decays[di], seed + 4);
        }
    }
    /* the decay only where it is set: element decay_count - 1 moves, decay_count does not
     * (g = 0, lr = 1, l2 = 0.5: w -= 0.5 w on the prefix) */
    float w[8] = {1, 1, 1, 1, 1, 1, 1, 1}, g[8] = {0};
    OpDesc s = op_sgd(8, 1.0f);
    op_update_set_decay(&s, 3, 0.5f);
    void *bufs[] = {w, g};
    run(&s, bufs);
    for (int i = 0; i < 8; i++)
        assert_true(w[i] == (i < 3 ? 0.5f : 1.0f));
    /* l2 == 0 is no decay at all, and the key does not change */
    OpDesc a = op_adam(100, 0.001f, 0.9f, 0.999f, 1e-7f), a0 = a;
    op_update_set_decay(&a, 50, 0.0f);
    assert_int_equal(a.u.update.decay_count, 0);
    char k1[OP_KEY_MAX], k2[OP_KEY_MAX];
    op_key(&a, k1);
    op_key(&a0, k2);
    assert_string_equal(k1, k2);
    /* Adam's first step moves every weight by about lr (m / sqrt(v) = sign(g)) */
    float aw[4] = {0}, am[4] = {0}, av[4] = {0}, ag[4] = {0.5f, -2.0f, 0.1f, 3.0f};
    OpDesc ad = op_adam(4, 0.01f, 0.9f, 0.999f, 1e-7f);
    void *ab[] = {aw, am, av, ag};
    run(&ad, ab);
    for (int i = 0; i < 4; i++)
        assert_true(fabsf(fabsf(aw[i]) - 0.01f) < 1e-5f && (aw[i] < 0) == (ag[i] > 0));
}

/* PyTorch's AdamW in double (torch.optim.AdamW's documented algorithm): decoupled decay,
 * then the bias-corrected Adam step with eps outside the root; g already scaled. */
static void ref_adamw_step(const UpdateDesc *u, double *w, double *m, double *v, const double *g, size_t n)
{
    const double t = (double)u->step, bc1 = 1.0 - pow(u->beta1, t), bc2 = 1.0 - pow(u->beta2, t);
    for (size_t i = 0; i < n; i++) {
        if (i < u->decay_count)
            w[i] -= (double)u->lr * u->weight_decay * w[i];
        m[i] = u->beta1 * m[i] + (1.0 - u->beta1) * g[i];
        v[i] = u->beta2 * v[i] + (1.0 - u->beta2) * g[i] * g[i];
        w[i] -= u->lr * (m[i] / bc1) / (sqrt(v[i] / bc2) + u->eps);
    }
}

/* AdamW over three steps against the reference, with no decay, a decay prefix crossing
 * the threads' split, and decay everywhere; each step clipped to a global norm that the
 * gradients exceed on odd steps and not on even ones, their sum over P ranks averaged. */
static void adamw_case(size_t n, size_t decay, int P, uint64_t seed)
{
    float *w = tu_floats(n), *m = tu_floats(n), *v = tu_floats(n), *g = tu_floats(n), sumsq = 0;
    double *rw = tu_doubles(n), *rm = tu_doubles(n), *rv = tu_doubles(n), *rg = tu_doubles(n);
    tu_fill_uniform(w, n, -1, 1, seed);
    tu_fill_const(m, n, 0.0f);
    tu_fill_const(v, n, 0.0f);
    for (size_t i = 0; i < n; i++)
        rw[i] = w[i], rm[i] = 0, rv[i] = 0;
    OpDesc d = op_adamw(n, 0.01f, 0.9f, 0.999f, 1e-8f, 0.1f, decay);
    d.u.update.grad_ranks = P;
    for (long step = 1; step <= 3; step++) {
        tu_fill_uniform(g, n, -1, 1, seed + (uint64_t)step);
        OpDesc ss = op_sumsq(PHASE_FWD, n);
        void *sb[] = {&sumsq, g};
        run(&ss, sb);
        expect_spot_ok(&ss, sb, NULL);
        double norm = 0;
        for (size_t i = 0; i < n; i++)
            norm += (double)g[i] * g[i];
        norm = sqrt(norm) / P; /* of the mean */
        const float clip = (float)(step % 2 ? norm / 2 : norm * 2);
        op_update_set_clip(&d, clip);
        d.u.update.step = step;
        const double k = fmin(1.0, clip / (norm + 1e-6)) / P;
        for (size_t i = 0; i < n; i++)
            rg[i] = k * g[i];
        float *w0 = tu_dup(w, n), *m0 = tu_dup(m, n), *v0 = tu_dup(v, n), *g0 = tu_dup(g, n);
        void *bufs[] = {w, m, v, g, &sumsq}, *before[] = {w0, m0, v0, NULL, NULL};
        run(&d, bufs);
        ref_adamw_step(&d.u.update, rw, rm, rv, rg, n);
        expect_spot_ok(&d, bufs, before);
        assert_memory_equal(g, g0, n * sizeof(float));
        free(w0), free(m0), free(v0), free(g0);
    }
    char key[OP_KEY_MAX];
    op_key(&d, key);
    assert_true(tu_close(key, w, rw, n, 1e-6, 1e-5));
    assert_true(tu_close(key, m, rm, n, 1e-7, 1e-5));
    assert_true(tu_close(key, v, rv, n, 1e-7, 1e-5));
    free(w), free(m), free(v), free(g), free(rw), free(rm), free(rv), free(rg);
}

static void test_adamw_and_clipping(void **state)
{
    (void)state;
    static const size_t counts[] = {17, 100003};
    for (int ci = 0; ci < 2; ci++) {
        const size_t n = counts[ci], decays[] = {0, n / 3 + n / 4, n};
        for (int di = 0; di < 3; di++)
            adamw_case(n, decays[di], ci + di % 2 + 1, 3500 + 10 * (uint64_t)(3 * ci + di));
    }
    /* by hand, PyTorch's algorithm: w 1, g 0.5, lr 0.1, wd 0.1, step 1: w = 1 (1 - 0.01)
     * - 0.1 (0.05 / 0.1) / (sqrt(0.00025 / 0.001) + 1e-8) = 0.99 - 0.1 = 0.89 */
    float w = 1.0f, mm = 0.0f, vv = 0.0f, g = 0.5f;
    OpDesc one = op_adamw(1, 0.1f, 0.9f, 0.999f, 1e-8f, 0.1f, 1);
    void *ob[] = {&w, &mm, &vv, &g};
    run(&one, ob);
    assert_float_equal(w, 0.89f, 1e-6f);
    /* clipping any update: SGD's step is lr times the clipped gradient (norm 5 -> 1) */
    float sw[2] = {0, 0}, sg[2] = {3, 4}, s2 = 25;
    OpDesc sgd = op_sgd(2, 1.0f);
    op_update_set_clip(&sgd, 1.0f);
    void *sgb[] = {sw, sg, &s2};
    run(&sgd, sgb);
    assert_float_equal(sw[0], -0.6f, 1e-6f);
    assert_float_equal(sw[1], -0.8f, 1e-6f);
    /* keys: the decay prefix keyed, clipping and the values not; PyTorch's defaults parsed */
    char key[OP_KEY_MAX];
    OpDesc d = op_adamw(1000, 0.001f, 0.9f, 0.95f, 1e-8f, 0.1f, 600);
    op_update_set_clip(&d, 1.0f);
    op_key(&d, key);
    assert_string_equal(key, "adamw count=1000 decay=600");
    OpDesc back;
    assert_true(op_key_parse(key, &back));
    assert_true(back.kind == OP_ADAMW && back.u.update.decay_count == 600 && back.u.update.l2 == 0.0f &&
                back.u.update.weight_decay == 0.01f && back.u.update.eps == 1e-8f && back.u.update.clip == 0.0f);
    /* the cost: 13 FLOPs per parameter and 1 per decayed one; w, m, v twice, g, sumsq */
    OpCost c = op_cost(&d);
    assert_true(c.flops == 13.0 * 1000 + 600 && c.bytes == 4.0 * (7 * 1000 + 1));
    OpBufInfo info[OP_MAX_BUFS];
    assert_int_equal(op_buffer_info(&d, info), 5);
    assert_string_equal(info[4].name, "sumsq");
    assert_int_equal(info[4].bytes, 4);
    op_update_set_clip(&d, 0.0f);
    assert_int_equal(op_buffer_info(&d, info), 4);
    OpDesc sq = op_sumsq(PHASE_FWD, 1000);
    assert_true(op_cost(&sq).flops == 2000 && op_cost(&sq).bytes == 4.0 * 1001);
    op_key(&sq, key);
    assert_string_equal(key, "sumsq count=1000");
}

/* Data-parallel: an update told that g is a sum over P ranks (grad_ranks) computes what
 * the trainer's former separate pass g *= 1/P followed by the plain update computed (bit
 * for bit without decay; with it, the kernel may fuse g/P + l2 w into one FMA: within
 * rounding), leaves g as it was, and passes the spot check; told nothing, it fails. */
static void test_update_averages_ranks(void **state)
{
    (void)state;
    const size_t n = 50021;
    const int P = 3;
    for (int with_decay = 0; with_decay < 2; with_decay++) {
        const size_t decay = with_decay ? n / 3 : 0;
        const OpDesc kinds[] = {op_sgd(n, 0.05f), op_rmsprop(n, 0.001f, 0.9f, 1e-7f), op_momentum(n, 0.05f, 0.9f, true),
                                op_adam(n, 0.01f, 0.9f, 0.999f, 1e-7f)};
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            OpDesc plain = kinds[k];
            plain.u.update.step = plain.kind == OP_ADAM ? 1 : 0;
            op_update_set_decay(&plain, decay, 0.1f);
            OpDesc avg = plain;
            avg.u.update.grad_ranks = P;
            const int nstate = plain.kind == OP_SGD ? 0 : plain.kind == OP_ADAM ? 2 : 1;
            float *w[2], *st[2][2], *g[2];
            for (int v = 0; v < 2; v++) {
                w[v] = tu_floats(n), g[v] = tu_floats(n);
                tu_fill_uniform(w[v], n, -1, 1, 71);
                tu_fill_uniform(g[v], n, -3, 3, 72); /* a sum over P ranks */
                for (int j = 0; j < 2; j++) {
                    st[v][j] = tu_floats(n);
                    tu_fill_uniform(st[v][j], n, 0, 1, 73 + (uint64_t)j);
                }
            }
            for (size_t i = 0; i < n; i++) /* variant 1: the former pass, then the plain update */
                g[1][i] = (1.0f / (float)P) * g[1][i];
            float *gsum = tu_dup(g[0], n), *w0 = tu_dup(w[0], n), *s00 = tu_dup(st[0][0], n), *s01 = tu_dup(st[0][1], n);
            void *b[2][4];
            for (int v = 0; v < 2; v++) {
                int nb = 0;
                b[v][nb++] = w[v];
                for (int j = 0; j < nstate; j++)
                    b[v][nb++] = st[v][j];
                b[v][nb++] = g[v];
            }
            run(&avg, b[0]);
            run(&plain, b[1]);
            for (int j = -1; j < nstate; j++) {
                const float *x = j < 0 ? w[0] : st[0][j], *y = j < 0 ? w[1] : st[1][j];
                if (!with_decay) {
                    assert_memory_equal(x, y, n * sizeof(float));
                    continue;
                }
                for (size_t i = 0; i < n; i++)
                    assert_true(fabsf(x[i] - y[i]) <= 1e-6f * (1.0f + fabsf(y[i])));
            }
            assert_memory_equal(g[0], gsum, n * sizeof(float)); /* the sum is left as it was */
            void *before[4] = {w0, nstate > 0 ? s00 : NULL, nstate > 1 ? s01 : NULL, NULL};
            expect_spot_ok(&avg, b[0], before);
            double err;
            assert_false(op_spot_check(&plain, b[0], before, 64, 11, &err)); /* g taken as it is: wrong */
            free(gsum), free(w0), free(s00), free(s01);
            for (int v = 0; v < 2; v++) {
                free(w[v]), free(g[v]), free(st[v][0]), free(st[v][1]);
            }
        }
    }
}

/* SqErr's weight scales the loss and the gradient (UFLDL's 1/(2n)). */
static void test_sqerr_weight(void **state)
{
    (void)state;
    const int n = 5, f = 6;
    const size_t e = (size_t)n * f;
    float pred[30], target[30], dp[30], loss = 0, dp1[30], loss1 = 0;
    tu_fill_uniform(pred, e, -1, 1, 3200);
    tu_fill_uniform(target, e, -1, 1, 3201);
    for (int mean = 0; mean < 2; mean++) {
        OpDesc fw = op_sqerr(PHASE_FWD, n, f, mean), bw = op_sqerr(PHASE_BWD_DATA, n, f, mean);
        assert_true(fw.u.sqerr.weight == 1.0f);
        void *f1[] = {&loss1, pred, target}, *b1[] = {dp1, pred, target};
        run(&fw, f1);
        run(&bw, b1);
        fw.u.sqerr.weight = bw.u.sqerr.weight = 0.5f / (float)n;
        void *fb[] = {&loss, pred, target}, *bb[] = {dp, pred, target};
        run(&fw, fb);
        run(&bw, bb);
        const double el = loss1 * 0.1, rl = ref_sqerr_forward(pred, target, &fw.u.sqerr);
        assert_true(tu_close("sqerr weighted loss", &loss, &el, 1, 0, 1e-6));
        assert_true(tu_close("sqerr weighted loss vs reference", &loss, &rl, 1, 0, 1e-6));
        double rd[30];
        ref_sqerr_backward_data(rd, pred, target, &bw.u.sqerr);
        assert_true(tu_close("sqerr weighted dpred", dp, rd, e, 1e-8, 1e-5));
        for (size_t i = 0; i < e; i++)
            assert_true(fabsf(dp[i] - 0.1f * dp1[i]) <= 1e-7f);
        expect_spot_ok(&fw, fb, NULL);
        expect_spot_ok(&bw, bb, NULL);
        const float one = 1.0f;
        FwdObj o = {.fwd = &fw, .bufs = fb, .nout = 1, .out = {0}, .r = {&one}, .n = {1}};
        assert_true(tu_grad_check("sqerr weighted dpred", pred, e, dp, fwd_objective, &o,
                                  FD_SAMPLES, 3202, FD_EPS, 1e-4, FD_RTOL));
    }
}

/* Caffe-style explicit (asymmetric) pooling pads: ceil mode as extra bottom/right pad. */
static void test_pool_pads(void **state)
{
    (void)state;
    /* Caffe GoogLeNet pool1: 3x3/2 on 112, ceil mode -> 56: pads 0,0,1,1 */
    OpDesc d = op_pool2d_pads(PHASE_FWD, POOL_MAX, 1, 64, 112, 112, 3, 2, 0, 0, 1, 1);
    assert_int_equal(d.u.pool.out_h, 56);
    assert_int_equal(d.u.pool.out_w, 56);
    /* asymmetric pads against the reference, both kinds, both phases, and finite
     * differences (average: counts only the non-padded cells) */
    static const int cases[][9] = {
        /* kind, n, c, h, w, win, stride, pads t l b r packed below */
        {POOL_MAX, 2, 3, 6, 7, 3, 2, 0, 0},
        {POOL_AVG, 2, 3, 6, 7, 3, 2, 0, 0},
        {POOL_AVG, 1, 2, 5, 5, 2, 1, 0, 0},
    };
    static const int pads[][4] = {{0, 1, 1, 1}, {1, 0, 2, 1}, {1, 1, 0, 0}};
    for (int ci = 0; ci < 3; ci++) {
        const int *c = cases[ci];
        OpDesc f = op_pool2d_pads(PHASE_FWD, (PoolKind)c[0], c[1], c[2], c[3], c[4], c[5], c[6],
                                  pads[ci][0], pads[ci][1], pads[ci][2], pads[ci][3]);
        const PoolDesc *p = &f.u.pool;
        assert_int_equal(p->out_h, (c[3] + pads[ci][0] + pads[ci][2] - c[5]) / c[6] + 1);
        const size_t nx = (size_t)p->n * p->c * p->h * p->w;
        const size_t ny = (size_t)p->n * p->c * p->out_h * p->out_w;
        float *x = tu_floats(nx), *y = tu_floats(ny), *r = tu_floats(ny), *dx = tu_floats(nx);
        double *ry = tu_doubles(ny), *rx = tu_doubles(nx);
        tu_fill_distinct(x, nx, -0.025f * (float)nx, 0.05f, 3300 + ci);
        tu_fill_uniform(r, ny, -1, 1, 3310 + ci);
        void *fb[] = {y, x};
        run(&f, fb);
        ref_pool_forward(ry, x, p);
        assert_true(tu_close("pool pads fwd", y, ry, ny, REF_ATOL, REF_RTOL));
        expect_spot_ok(&f, fb, NULL);
        OpDesc b = with_phase(f, PHASE_BWD_DATA, false);
        void *bb[] = {dx, r, x, y};
        run(&b, bb);
        ref_pool_backward_data(rx, r, x, p);
        assert_true(tu_close("pool pads bwd", dx, rx, nx, REF_ATOL, REF_RTOL));
        expect_spot_ok(&b, bb, NULL);
        FwdObj o = {.fwd = &f, .bufs = fb, .nout = 1, .out = {0}, .r = {r}, .n = {ny}};
        assert_true(tu_grad_check("pool pads dx", x, nx, dx, fwd_objective, &o, FD_SAMPLES,
                                  3320 + ci, FD_EPS, FD_ATOL, FD_RTOL));
        free(x), free(y), free(r), free(dx), free(ry), free(rx);
    }
}

/* ---------------------------------------------------------------------------------------
 * Descriptors: TF padding, costs, buffers, keys
 * ------------------------------------------------------------------------------------- */

static void test_tf_padding(void **state)
{
    (void)state;
    /* GoogLeNet conv1: 7x7/2 SAME on 224 -> 112, pad 2 top/left, 3 bottom/right */
    OpDesc d = op_conv2d(PHASE_FWD, 1, 3, 224, 224, 64, 7, 7, 2, PAD_SAME, 1);
    assert_int_equal(d.u.conv.out_h, 112);
    assert_int_equal(d.u.conv.out_w, 112);
    assert_int_equal(d.u.conv.pad_top, 2);
    assert_int_equal(d.u.conv.pad_left, 2);
    assert_int_equal(d.u.conv.pad_bottom, 3);
    assert_int_equal(d.u.conv.pad_right, 3);
    /* GoogLeNet pool1: max 3x3/2 SAME on 112 -> 56, pad 0 top/left, 1 bottom/right */
    d = op_pool2d(PHASE_FWD, POOL_MAX, 1, 64, 112, 112, 3, 2, PAD_SAME);
    assert_int_equal(d.u.pool.out_h, 56);
    assert_int_equal(d.u.pool.pad_top, 0);
    assert_int_equal(d.u.pool.pad_left, 0);
    assert_int_equal(d.u.pool.pad_bottom, 1);
    assert_int_equal(d.u.pool.pad_right, 1);
    /* AlexNet-OWT: conv1 11x11/4 VALID on 227 -> 55; pool 3x3/2 VALID 55 -> 27;
     * conv2 5x5 SAME on 27 keeps 27 with pad 2/2 */
    d = op_conv2d(PHASE_FWD, 1, 3, 227, 227, 64, 11, 11, 4, PAD_VALID, 1);
    assert_int_equal(d.u.conv.out_h, 55);
    assert_int_equal(d.u.conv.pad_top + d.u.conv.pad_bottom, 0);
    d = op_pool2d(PHASE_FWD, POOL_MAX, 1, 64, 55, 55, 3, 2, PAD_VALID);
    assert_int_equal(d.u.pool.out_h, 27);
    d = op_conv2d(PHASE_FWD, 1, 64, 27, 27, 192, 5, 5, 1, PAD_SAME, 1);
    assert_int_equal(d.u.conv.out_h, 27);
    assert_int_equal(d.u.conv.pad_top, 2);
    assert_int_equal(d.u.conv.pad_bottom, 2);
    /* Overfeat conv1 11x11/4 VALID on 231 -> 56; GoogLeNet pool3 3x3/2 SAME 56 -> 28 (0/1) */
    d = op_conv2d(PHASE_FWD, 1, 3, 231, 231, 96, 11, 11, 4, PAD_VALID, 1);
    assert_int_equal(d.u.conv.out_h, 56);
    d = op_pool2d(PHASE_FWD, POOL_MAX, 1, 192, 56, 56, 3, 2, PAD_SAME);
    assert_int_equal(d.u.pool.out_h, 28);
    assert_int_equal(d.u.pool.pad_bottom, 1);
    /* explicit (DeepBench): floor((in + 2p - k)/s) + 1 */
    d = op_conv2d_explicit(PHASE_FWD, 1, 3, 700, 161, 32, 5, 20, 2, 2, 0, 0, 1);
    assert_int_equal(d.u.conv.out_h, 348);
    assert_int_equal(d.u.conv.out_w, 71);
    /* backward constructors accumulate by default, forward never */
    assert_false(op_conv2d(PHASE_FWD, 1, 1, 3, 3, 1, 3, 3, 1, PAD_SAME, 1).u.conv.accumulate);
    assert_true(op_conv2d(PHASE_BWD_DATA, 1, 1, 3, 3, 1, 3, 3, 1, PAD_SAME, 1).u.conv.accumulate);
    assert_true(op_bias(PHASE_BWD_WEIGHTS, 1, 1, 1).u.bias.accumulate);
}

static void test_costs(void **state)
{
    (void)state;
    /* AlexNet-OWT conv1 at batch 1 */
    OpDesc d = op_conv2d(PHASE_FWD, 1, 3, 227, 227, 64, 11, 11, 4, PAD_VALID, 1);
    OpCost c = op_cost(&d);
    assert_true(c.flops == 2.0 * 64 * 3 * 121 * 3025);
    assert_true(c.flops == 140553600.0);
    assert_true(c.bytes == 4.0 * (3 * 227 * 227 + 64 * 3 * 121 + 64 * 3025));
    /* the same FLOPs in every phase */
    d = op_conv2d(PHASE_BWD_WEIGHTS, 1, 3, 227, 227, 64, 11, 11, 4, PAD_VALID, 1);
    assert_true(op_cost(&d).flops == 140553600.0);
    /* groups divide the input channels each filter sees */
    d = op_conv2d(PHASE_FWD, 2, 4, 8, 8, 6, 3, 3, 1, PAD_SAME, 2);
    assert_true(op_cost(&d).flops == 2.0 * 2 * 6 * 2 * 9 * 64);
    /* GEMM: 2mnk; C counted twice when read (beta != 0) */
    d = op_gemm(PHASE_FWD, 60, 2000, 60483, false, false, 0.0f);
    c = op_cost(&d);
    assert_true(c.flops == 2.0 * 60 * 2000 * 60483);
    assert_true(c.bytes == 4.0 * (60.0 * 60483 + 60483.0 * 2000 + 60.0 * 2000));
    d = op_gemm(PHASE_BWD_WEIGHTS, 60, 2000, 60483, true, false, 1.0f);
    assert_true(op_cost(&d).bytes == 4.0 * (60.0 * 60483 + 60483.0 * 2000 + 2 * 60.0 * 2000));
    /* STREAM convention */
    d = op_stream(STREAM_TRIAD, 1000000, 3.0f);
    assert_true(op_cost(&d).flops == 2e6 && op_cost(&d).bytes == 12e6);
    d = op_stream(STREAM_COPY, 1000000, 3.0f);
    assert_true(op_cost(&d).flops == 0 && op_cost(&d).bytes == 8e6);
    d = op_stream(STREAM_SCALE, 1000000, 3.0f);
    assert_true(op_cost(&d).flops == 1e6 && op_cost(&d).bytes == 8e6);
    d = op_stream(STREAM_ADD, 1000000, 3.0f);
    assert_true(op_cost(&d).flops == 1e6 && op_cost(&d).bytes == 12e6);
    /* element-wise conventions */
    d = op_sgd(1000, 0.1f);
    assert_true(op_cost(&d).flops == 2000 && op_cost(&d).bytes == 12000);
    d = op_act(PHASE_FWD, ACT_RELU, 1000);
    assert_true(op_cost(&d).flops == 1000 && op_cost(&d).bytes == 8000);
    /* workspace: a slice per thread that splits the batch, with one image's columns (a
     * chunk's and its outputs for small maps; none on the unchunked 1x1 path) and, for
     * backward-weights, a weight-gradient accumulator, in whole cache lines */
    const int t0 = ops_get_threads();
    ops_set_threads(2);
    d = op_conv2d(PHASE_FWD, 16, 64, 27, 27, 192, 5, 5, 1, PAD_SAME, 1);
    assert_int_equal(op_workspace_bytes(&d), 2 * 4 * 64 * 25 * 729);
    d = op_conv2d(PHASE_BWD_WEIGHTS, 16, 64, 27, 27, 192, 5, 5, 1, PAD_SAME, 1);
    assert_int_equal(op_workspace_bytes(&d), 2 * 4 * (64 * 25 * 729 + 192 * 64 * 25));
    d = op_conv2d(PHASE_BWD_DATA, 16, 64, 27, 27, 192, 1, 1, 1, PAD_SAME, 1);
    assert_int_equal(op_workspace_bytes(&d), 0);
    d = op_conv2d(PHASE_FWD, 1, 4, 8, 8, 4, 3, 3, 1, PAD_SAME, 2); /* batch 1: one thread's */
    assert_int_equal(op_workspace_bytes(&d), 4 * 2 * 9 * 64);
    /* 13x13 maps: 7 images per GEMM (ceil(1024 / 169)), columns and outputs of the chunk */
    d = op_conv2d(PHASE_FWD, 16, 8, 13, 13, 6, 3, 3, 1, PAD_SAME, 1);
    assert_int_equal(op_workspace_bytes(&d), 2 * 4 * 92288); /* 8*9*7*169 + 6*7*169 = 92274, in lines */
    d = op_conv2d(PHASE_FWD, 16, 8, 7, 7, 6, 1, 1, 1, PAD_SAME, 1); /* 1x1: 8 images (the share) */
    assert_int_equal(op_workspace_bytes(&d), 2 * 4 * (8 * 8 * 49 + 6 * 8 * 49));
    ops_set_threads(1);
    d = op_conv2d(PHASE_FWD, 16, 64, 27, 27, 192, 5, 5, 1, PAD_SAME, 1);
    assert_int_equal(op_workspace_bytes(&d), 4 * 64 * 25 * 729);
    ops_set_threads(t0);
    d = op_pool2d(PHASE_FWD, POOL_MAX, 1, 64, 112, 112, 3, 2, PAD_SAME);
    assert_int_equal(op_workspace_bytes(&d), 0);

    /* model-zoo kinds: ResNet-50's first bottleneck BN at batch 32 */
    const double e = 32.0 * 256 * 3136;
    d = op_batchnorm(PHASE_FWD, 32, 256, 3136, 1e-3f, 0.99f, true);
    assert_true(op_cost(&d).flops == 6 * e && op_cost(&d).bytes == 4 * (2 * e + 8 * 256));
    assert_int_equal(op_workspace_bytes(&d), 0);
    d = op_batchnorm(PHASE_FWD, 32, 256, 3136, 1e-3f, 0.99f, false);
    assert_true(op_cost(&d).flops == 3 * e && op_cost(&d).bytes == 4 * (2 * e + 4 * 256));
    d = op_batchnorm(PHASE_BWD_WEIGHTS, 32, 256, 3136, 1e-3f, 0.99f, true); /* accumulates */
    assert_true(op_cost(&d).flops == 4 * e && op_cost(&d).bytes == 4 * (2 * e + 6 * 256));
    d = op_batchnorm(PHASE_BWD_DATA, 32, 256, 3136, 1e-3f, 0.99f, true);
    d.u.bn.accumulate = false;
    assert_true(op_cost(&d).flops == 5 * e && op_cost(&d).bytes == 4 * (3 * e + 6 * 256));
    /* AlexNet's LRN1 at batch 128, size 5 */
    const double el = 128.0 * 96 * 3025;
    d = op_lrn(PHASE_FWD, 128, 96, 3025, 5, 1e-4f, 0.75f, 1.0f);
    assert_true(op_cost(&d).flops == 16 * el && op_cost(&d).bytes == 12 * el);
    d = op_lrn(PHASE_BWD_DATA, 128, 96, 3025, 5, 1e-4f, 0.75f, 1.0f); /* accumulates */
    assert_true(op_cost(&d).flops == 15 * el && op_cost(&d).bytes == 24 * el);
    /* Adam over ResNet-50's 25.6M parameters: w, m, v read and written, g read */
    d = op_adam(25557032, 0.001f, 0.9f, 0.999f, 1e-7f);
    assert_true(op_cost(&d).flops == 12.0 * 25557032 && op_cost(&d).bytes == 28.0 * 25557032);
    op_update_set_decay(&d, 1000, 1e-4f);
    assert_true(op_cost(&d).flops == 12.0 * 25557032 + 2000); /* bytes unchanged */
    assert_true(op_cost(&d).bytes == 28.0 * 25557032);
    d = op_momentum(1000, 0.1f, 0.9f, true);
    assert_true(op_cost(&d).flops == 6000 && op_cost(&d).bytes == 20000);
    d = op_dropout(PHASE_FWD, 1000, 0.5f, 1u);
    assert_true(op_cost(&d).flops == 2000 && op_cost(&d).bytes == 12004);
    d = op_channel_copy(PHASE_FWD, 2, 10, 4, 3, 5); /* the slice and x only */
    assert_true(op_cost(&d).flops == 0 && op_cost(&d).bytes == 4 * 2 * 40);
    d = op_embedding(PHASE_BWD_WEIGHTS, 10, 1000, 8); /* accumulates: touched rows only */
    assert_true(op_cost(&d).flops == 80 && op_cost(&d).bytes == 4 * (80 + 2 * 80) + 40);
    d.u.embed.accumulate = false; /* cleared: all of dW written */
    assert_true(op_cost(&d).bytes == 4 * (80 + 8000) + 40);
    d = op_axpby(PHASE_FWD, 1000, 1.0f, 1.0f);
    assert_true(op_cost(&d).flops == 3000 && op_cost(&d).bytes == 12000);
}

static void test_buffer_info(void **state)
{
    (void)state;
    OpBufInfo info[OP_MAX_BUFS];
    OpDesc d = op_gemm(PHASE_FWD, 3, 4, 5, false, false, 0.0f);
    assert_int_equal(op_buffer_info(&d, info), 3);
    assert_string_equal(info[0].name, "C");
    assert_int_equal(info[0].role, BUF_OUT);
    assert_int_equal(info[0].bytes, 4 * 12);
    assert_int_equal(info[1].bytes, 4 * 15);
    assert_int_equal(info[2].bytes, 4 * 20);
    d = op_gemm(PHASE_FWD, 3, 4, 5, false, false, 1.0f);
    op_buffer_info(&d, info);
    assert_int_equal(info[0].role, BUF_INOUT);
    d = op_conv2d(PHASE_BWD_DATA, 2, 4, 8, 8, 6, 3, 3, 2, PAD_SAME, 2);
    assert_int_equal(op_buffer_info(&d, info), 3);
    assert_string_equal(info[0].name, "dx");
    assert_int_equal(info[0].role, BUF_INOUT); /* accumulate by default */
    assert_int_equal(info[0].bytes, 4 * 2 * 4 * 64);
    assert_int_equal(info[2].bytes, 4 * 6 * 2 * 9);
    d.u.conv.accumulate = false;
    op_buffer_info(&d, info);
    assert_int_equal(info[0].role, BUF_OUT);
    d = op_softmax_xent(PHASE_FWD, 8, 10);
    assert_int_equal(op_buffer_info(&d, info), 4);
    assert_int_equal(info[3].type, BUF_INT32);
    assert_int_equal(info[0].bytes, 4);
    d = op_lstm_cell(PHASE_BWD_DATA, 2, 3, 1.0f);
    assert_int_equal(op_buffer_info(&d, info), 7);
    assert_string_equal(info[1].name, "dc_prev");
    d = op_stream(STREAM_TRIAD, 10, 3.0f);
    op_buffer_info(&d, info);
    assert_int_equal(info[0].role, BUF_OUT);
    assert_int_equal(info[2].role, BUF_IN);
    d = op_rmsprop(10, 0.001f, 0.9f, 1e-7f);
    assert_int_equal(op_buffer_info(&d, info), 3);
    assert_int_equal(info[1].role, BUF_INOUT);

    /* model-zoo kinds, in the order of the table in ops.h */
    d = op_batchnorm(PHASE_FWD, 2, 3, 4, 1e-3f, 0.99f, true);
    assert_int_equal(op_buffer_info(&d, info), 8);
    assert_string_equal(info[3].name, "run_mean");
    assert_int_equal(info[3].role, BUF_INOUT);
    assert_int_equal(info[4].role, BUF_INOUT);
    assert_int_equal(info[1].role, BUF_OUT);
    assert_int_equal(info[0].bytes, 4 * 24);
    assert_int_equal(info[7].bytes, 4 * 3);
    d.u.bn.training = false;
    assert_int_equal(op_buffer_info(&d, info), 6);
    assert_string_equal(info[5].name, "run_var");
    assert_int_equal(info[5].role, BUF_IN);
    d = op_batchnorm(PHASE_BWD_DATA, 2, 3, 4, 1e-3f, 0.99f, true);
    assert_int_equal(op_buffer_info(&d, info), 8);
    assert_string_equal(info[6].name, "dgamma");
    assert_int_equal(info[0].role, BUF_INOUT);
    d = op_batchnorm(PHASE_BWD_WEIGHTS, 2, 3, 4, 1e-3f, 0.99f, true);
    assert_int_equal(op_buffer_info(&d, info), 6);
    assert_int_equal(info[1].role, BUF_INOUT);
    d = op_lrn(PHASE_BWD_DATA, 2, 3, 4, 3, 1e-4f, 0.75f, 1.0f);
    assert_int_equal(op_buffer_info(&d, info), 5);
    assert_string_equal(info[4].name, "scale");
    d = op_dropout(PHASE_FWD, 10, 0.5f, 1u);
    assert_int_equal(op_buffer_info(&d, info), 4);
    assert_int_equal(info[3].type, BUF_INT32);
    assert_int_equal(info[3].bytes, 4);
    d = op_channel_copy(PHASE_FWD, 2, 8, 3, 5, 9);
    assert_int_equal(op_buffer_info(&d, info), 2);
    assert_int_equal(info[0].role, BUF_INOUT);
    assert_int_equal(info[0].bytes, 4 * 2 * 8 * 9);
    assert_int_equal(info[1].bytes, 4 * 2 * 3 * 9);
    d = op_embedding(PHASE_FWD, 5, 100, 7);
    assert_int_equal(op_buffer_info(&d, info), 3);
    assert_int_equal(info[1].type, BUF_INT32);
    assert_int_equal(info[2].bytes, 4 * 700);
    d = op_embedding(PHASE_BWD_WEIGHTS, 5, 100, 7);
    op_buffer_info(&d, info);
    assert_int_equal(info[2].type, BUF_INT32);
    d = op_kl_sparsity(PHASE_FWD, 5, 3, 0.1f, 3.0f);
    op_buffer_info(&d, info);
    assert_int_equal(info[0].role, BUF_INOUT); /* the penalty is added to the loss */
    d = op_norm1(PHASE_FWD, 9);
    op_buffer_info(&d, info);
    assert_int_equal(info[0].bytes, 4);
    d = op_adam(10, 0.001f, 0.9f, 0.999f, 1e-7f);
    assert_int_equal(op_buffer_info(&d, info), 4);
    assert_int_equal(info[2].role, BUF_INOUT);
    assert_int_equal(info[3].role, BUF_IN);
}

static void key_roundtrip(const OpDesc *d)
{
    char key[OP_KEY_MAX], again[OP_KEY_MAX];
    op_key(d, key);
    OpDesc p;
    if (!op_key_parse(key, &p)) {
        fprintf(stderr, "  key does not parse: '%s'\n", key);
        fail();
    }
    op_key(&p, again);
    assert_string_equal(key, again);
    assert_int_equal(p.kind, d->kind);
    /* what the key carries must come back exactly */
    switch (d->kind) {
    case OP_GEMM:
        assert_true(p.u.gemm.m == d->u.gemm.m && p.u.gemm.n == d->u.gemm.n &&
                    p.u.gemm.k == d->u.gemm.k && p.u.gemm.trans_a == d->u.gemm.trans_a &&
                    p.u.gemm.trans_b == d->u.gemm.trans_b && p.u.gemm.beta == d->u.gemm.beta &&
                    p.u.gemm.alpha == d->u.gemm.alpha && p.u.gemm.bias == d->u.gemm.bias);
        break;
    case OP_BMM:
        assert_memory_equal(&p.u.bmm, &d->u.bmm, sizeof(BmmDesc));
        break;
    case OP_LAYERNORM:
        assert_true(p.phase == d->phase && p.u.ln.n == d->u.ln.n && p.u.ln.h == d->u.ln.h);
        assert_true(p.u.ln.accumulate == (d->phase != PHASE_FWD && d->u.ln.accumulate));
        break;
    case OP_SOFTMAX:
        assert_true(p.phase == d->phase && p.u.softmax.n == d->u.softmax.n &&
                    p.u.softmax.h == d->u.softmax.h);
        assert_true(p.u.softmax.accumulate == (d->phase != PHASE_FWD && d->u.softmax.accumulate));
        assert_true(p.u.softmax.causal == d->u.softmax.causal && p.u.softmax.samples == d->u.softmax.samples &&
                    p.u.softmax.pad_id == d->u.softmax.pad_id);
        break;
    case OP_BINARY:
        assert_true(p.phase == d->phase && p.u.binary.op == d->u.binary.op &&
                    p.u.binary.count == d->u.binary.count);
        assert_true(p.u.binary.accumulate == (d->phase != PHASE_FWD && d->u.binary.accumulate));
        break;
    case OP_SCALAR:
        assert_true(p.phase == d->phase && p.u.scalar.op == d->u.scalar.op &&
                    p.u.scalar.count == d->u.scalar.count);
        assert_true(p.u.scalar.accumulate == (d->phase != PHASE_FWD && d->u.scalar.accumulate));
        break;
    case OP_CONV2D:
        assert_int_equal(p.phase, d->phase);
        assert_memory_equal(&p.u.conv.n, &d->u.conv.n, offsetof(ConvDesc, accumulate));
        assert_true(p.u.conv.accumulate == (d->phase != PHASE_FWD && d->u.conv.accumulate));
        break;
    case OP_POOL2D:
        assert_int_equal(p.phase, d->phase);
        assert_memory_equal(&p.u.pool, &d->u.pool, offsetof(PoolDesc, accumulate));
        break;
    case OP_BIAS:
        assert_int_equal(p.phase, d->phase);
        assert_true(p.u.bias.n == d->u.bias.n && p.u.bias.c == d->u.bias.c &&
                    p.u.bias.spatial == d->u.bias.spatial);
        break;
    case OP_ACT:
        assert_true(p.phase == d->phase && p.u.act.act == d->u.act.act &&
                    p.u.act.count == d->u.act.count);
        break;
    case OP_SOFTMAX_XENT:
        assert_true(p.phase == d->phase && p.u.xent.n == d->u.xent.n &&
                    p.u.xent.classes == d->u.xent.classes);
        assert_true(p.u.xent.parts == d->u.xent.parts && p.u.xent.total == d->u.xent.total);
        break;
    case OP_SQERR:
        assert_true(p.phase == d->phase && p.u.sqerr.n == d->u.sqerr.n &&
                    p.u.sqerr.features == d->u.sqerr.features &&
                    p.u.sqerr.mean == d->u.sqerr.mean);
        break;
    case OP_LSTM_CELL:
        assert_true(p.phase == d->phase && p.u.lstm.batch == d->u.lstm.batch &&
                    p.u.lstm.hidden == d->u.lstm.hidden);
        break;
    case OP_SGD:
    case OP_RMSPROP:
    case OP_MOMENTUM:
    case OP_ADAM:
    case OP_ADAMW:
        assert_true(p.phase == PHASE_UPDATE && p.u.update.count == d->u.update.count &&
                    p.u.update.decay_count == d->u.update.decay_count);
        if (d->kind == OP_MOMENTUM)
            assert_true(p.u.update.nesterov == d->u.update.nesterov);
        break;
    case OP_BATCHNORM:
        assert_true(p.phase == d->phase && p.u.bn.n == d->u.bn.n && p.u.bn.c == d->u.bn.c &&
                    p.u.bn.spatial == d->u.bn.spatial && p.u.bn.training == d->u.bn.training);
        assert_true(p.u.bn.accumulate == (d->phase != PHASE_FWD && d->u.bn.accumulate));
        break;
    case OP_LRN:
        assert_true(p.phase == d->phase && p.u.lrn.n == d->u.lrn.n && p.u.lrn.c == d->u.lrn.c &&
                    p.u.lrn.spatial == d->u.lrn.spatial && p.u.lrn.size == d->u.lrn.size);
        assert_true(p.u.lrn.accumulate == (d->phase != PHASE_FWD && d->u.lrn.accumulate));
        break;
    case OP_DROPOUT:
        assert_true(p.phase == d->phase && p.u.dropout.count == d->u.dropout.count);
        break;
    case OP_CHANNEL_COPY:
        assert_int_equal(p.phase, d->phase);
        assert_memory_equal(&p.u.chan, &d->u.chan, offsetof(ChannelDesc, accumulate));
        assert_true(p.u.chan.accumulate == (d->phase != PHASE_FWD && d->u.chan.accumulate));
        break;
    case OP_AXPBY:
        assert_true(p.u.axpby.count == d->u.axpby.count);
        break;
    case OP_EMBEDDING:
        assert_true(p.u.embed.repeat == d->u.embed.repeat && p.u.embed.part == d->u.embed.part);
        assert_true(p.phase == d->phase && p.u.embed.n == d->u.embed.n &&
                    p.u.embed.vocab == d->u.embed.vocab && p.u.embed.dim == d->u.embed.dim);
        assert_true(p.u.embed.accumulate == (d->phase != PHASE_FWD && d->u.embed.accumulate));
        break;
    case OP_KL_SPARSITY:
        assert_true(p.phase == d->phase && p.u.kl.n == d->u.kl.n && p.u.kl.units == d->u.kl.units);
        break;
    case OP_STREAM:
        assert_true(p.u.mem.kind == d->u.mem.kind);
        /* fall through */
    default:
        assert_true(p.u.mem.count == d->u.mem.count);
        break;
    }
}

static void test_keys(void **state)
{
    (void)state;
    OpDesc g = op_gemm(PHASE_BWD_DATA, 60, 2000, 60483, false, false, 0.0f);
    char key[OP_KEY_MAX];
    op_key(&g, key);
    assert_string_equal(key, "gemm m=60 n=2000 k=60483 ta=0 tb=0 beta=0");
    OpDesc cw = op_conv2d(PHASE_BWD_WEIGHTS, 128, 3, 227, 227, 64, 11, 11, 4, PAD_VALID, 1);
    op_key(&cw, key);
    assert_string_equal(key, "conv2d bwd_weights n=128 c=3 h=227 w=227 k=64 r=11 s=11 sh=4 "
                             "sw=4 p=0,0,0,0 g=1 acc=1");
    OpDesc ga = op_gemm(PHASE_FWD, 3, 4, 5, true, true, 0.5f);
    ga.u.gemm.alpha = -0.75f;
    OpDesc cd = op_conv2d(PHASE_BWD_DATA, 2, 4, 8, 8, 6, 3, 3, 2, PAD_SAME, 2);
    cd.u.conv.accumulate = false;
    OpDesc bnd = op_batchnorm(PHASE_BWD_DATA, 128, 64, 12544, 1e-3f, 0.99f, true);
    OpDesc bnw = op_batchnorm(PHASE_BWD_WEIGHTS, 2, 3, 4, 1e-3f, 0.99f, true);
    bnw.u.bn.accumulate = false;
    OpDesc lrb = op_lrn(PHASE_BWD_DATA, 128, 256, 729, 5, 1e-4f, 0.75f, 2.0f);
    lrb.u.lrn.accumulate = false;
    OpDesc chb = op_channel_copy(PHASE_BWD_DATA, 32, 256, 64, 192, 784);
    chb.u.chan.accumulate = false;
    OpDesc emb = op_embedding(PHASE_BWD_WEIGHTS, 64 * 400, 20000, 300);
    emb.u.embed.accumulate = false;
    OpDesc mn = op_momentum(25557032, 0.1f, 0.9f, true);
    op_update_set_decay(&mn, 25000000, 2e-4f);
    OpDesc ad = op_adam(1000, 0.001f, 0.9f, 0.999f, 1e-7f);
    op_update_set_decay(&ad, 1000, 1e-4f);
    OpDesc sd = op_sgd(1000, 0.1f), rd = op_rmsprop(1000, 0.001f, 0.9f, 1e-7f);
    op_update_set_decay(&sd, 1, 1e-4f);
    op_update_set_decay(&rd, 999, 1e-4f);
    OpDesc gab = op_gemm_bias(PHASE_FWD, 3, 4, 5, true, false);
    gab.u.gemm.alpha = 0.5f;
    gab.u.gemm.beta = 1.0f;
    OpDesc bma = op_bmm(PHASE_FWD, 8, 16, 16, 32, false, true, 0.0f);
    bma.u.bmm.alpha = 0.125f;
    const OpDesc all[] = {
        g, ga, cw, cd,
        op_gemm(PHASE_FWD, 1, 1, 1, false, true, 1.0f),
        op_conv2d(PHASE_FWD, 1, 3, 224, 224, 64, 7, 7, 2, PAD_SAME, 1),
        op_conv2d_explicit(PHASE_BWD_DATA, 16, 1, 700, 161, 32, 5, 20, 2, 2, 3, 1, 1),
        op_pool2d(PHASE_FWD, POOL_MAX, 128, 64, 112, 112, 3, 2, PAD_SAME),
        op_pool2d(PHASE_BWD_DATA, POOL_AVG, 2, 1024, 7, 7, 7, 1, PAD_VALID),
        op_bias(PHASE_FWD, 128, 64, 3025), op_bias(PHASE_BWD_WEIGHTS, 128, 4096, 1),
        op_act(PHASE_FWD, ACT_RELU, 12345), op_act(PHASE_BWD_DATA, ACT_SIGMOID, 7),
        op_act(PHASE_BWD_DATA, ACT_TANH, 1), op_act_in_place(PHASE_FWD, ACT_RELU, 12345),
        op_act_in_place(PHASE_BWD_DATA, ACT_TANH, 3),
        op_softmax_xent(PHASE_FWD, 128, 1000), op_softmax_xent(PHASE_BWD_DATA, 1, 2),
        op_sqerr(PHASE_FWD, 60, 60483, true), op_sqerr(PHASE_BWD_DATA, 128, 1024, false),
        op_lstm_cell(PHASE_FWD, 128, 1024, 1.0f), op_lstm_cell(PHASE_BWD_DATA, 16, 512, 1.0f),
        op_sgd(61100840, 0.01f), op_rmsprop(8392704, 0.001f, 0.9f, 1e-7f),
        op_zero(PHASE_FWD, 5), op_copy(PHASE_FWD, 1ull << 30),
        op_stream(STREAM_COPY, 20000000, 3.0f), op_stream(STREAM_SCALE, 1, 3.0f),
        op_stream(STREAM_ADD, 2, 3.0f), op_stream(STREAM_TRIAD, 3, 3.0f),
        op_batchnorm(PHASE_FWD, 32, 256, 3136, 1e-3f, 0.99f, true),
        op_batchnorm(PHASE_FWD, 32, 256, 3136, 1e-3f, 0.99f, false),
        op_batchnorm(PHASE_BWD_WEIGHTS, 32, 2048, 1, 1e-5f, 0.9f, true), bnd, bnw,
        op_lrn(PHASE_FWD, 128, 96, 3025, 5, 1e-4f, 0.75f, 1.0f), lrb,
        op_lrn(PHASE_BWD_DATA, 1, 1, 1, 1, 1.0f, 1.0f, 1.0f),
        op_dropout(PHASE_FWD, 4096 * 128, 0.5f, 9u), op_dropout(PHASE_BWD_DATA, 7, 0.1f, 0u),
        op_channel_copy(PHASE_FWD, 32, 256, 64, 192, 784), chb,
        op_channel_copy(PHASE_BWD_DATA, 1, 3, 1, 0, 1),
        op_axpby(PHASE_FWD, 25690112, 1.0f, 1.0f), op_axpby(PHASE_BWD_DATA, 3, -0.5f, 2.0f),
        op_embedding(PHASE_FWD, 64 * 400, 20000, 300), emb,
        op_embedding(PHASE_BWD_WEIGHTS, 1, 1, 1),
        op_kl_sparsity(PHASE_FWD, 10000, 25, 0.01f, 3.0f),
        op_kl_sparsity(PHASE_BWD_DATA, 1, 1, 0.5f, 0.0f),
        op_shrink(PHASE_UPDATE, 1000, 0.1f), op_norm1(PHASE_FWD, 123456789),
        op_momentum(25557032, 0.1f, 0.9f, false), mn, ad, sd, rd,
        op_adam(1, 0.001f, 0.9f, 0.999f, 1e-7f),
        op_gru_cell(PHASE_FWD, 32, 2816, ACT_RELU), op_gru_cell(PHASE_BWD_DATA, 1, 1, ACT_TANH),
        op_spmm(7680, 1500, 2560, 0.95), op_spmm(1, 1, 1, 0.0),
        op_peak_fma(1, 1L << 28), op_peak_fma(64, 192),
        op_membw(MEMBW_READ, 2, 16384, 4096), op_membw(MEMBW_TRIAD, 1, 1u << 30, 1),
        op_membw(MEMBW_HANDOFF, 2, 1u << 20, 1), op_membw(MEMBW_CROSS, 2, 1u << 20, 1),
        op_membw(MEMBW_SHARED, 2, 1u << 20, 1),
        op_membw_retain(2, 1u << 20, 0), op_membw_retain(1, 192, MEMBW_IDLE_MAX_US),
        op_gemm_bias(PHASE_FWD, 64, 768, 3072, false, true), gab,
        op_act(PHASE_FWD, ACT_GELU, 4096), op_act(PHASE_BWD_DATA, ACT_GELU, 7),
        op_bmm(PHASE_FWD, 96, 128, 128, 64, false, true, 0.0f),
        op_bmm(PHASE_BWD_WEIGHTS, 96, 64, 128, 128, true, false, 1.0f), bma,
        op_layernorm(PHASE_FWD, 4096, 768, 1e-5f), op_layernorm(PHASE_BWD_WEIGHTS, 1, 1, 1e-5f),
        op_layernorm(PHASE_BWD_DATA, 4096, 768, 1e-6f),
        op_softmax(PHASE_FWD, 12288, 128), op_softmax(PHASE_BWD_DATA, 1, 1),
        op_binary(PHASE_FWD, BIN_ADD, 3145728), op_binary(PHASE_BWD_DATA, BIN_POW, 3),
        op_binary(PHASE_FWD, BIN_DIV, 1), op_binary(PHASE_BWD_DATA, BIN_MUL, 1000),
        op_scalar(PHASE_FWD, BIN_MUL, 1000, 0.125f), op_scalar(PHASE_BWD_DATA, BIN_DIV, 10, 8.0f),
        op_scalar(PHASE_FWD, BIN_POW, 7, 3.0f), op_scalar(PHASE_BWD_DATA, BIN_ADD, 1, 1.0f),
        op_softmax_causal(PHASE_FWD, 12 * 128, 128), op_softmax_causal(PHASE_BWD_DATA, 3, 1),
        op_softmax_padded(8 * 12 * 128, 128, false, 8, 0), op_softmax_padded(2, 1, true, 1, 7),
        op_bmm_strided(PHASE_FWD, 96, 128, 128, 64, false, true, 0.125f, 0.0f, (int[3]){18432, 18432, 0},
                       (size_t[3]){192, 192, 0}),
        op_sumsq(PHASE_FWD, 124439808), op_sumsq(PHASE_FWD, 1),
        op_embedding_positions(PHASE_FWD, 1024 * 8, 8, 1024, 768), op_embedding_positions(PHASE_BWD_WEIGHTS, 1, 1, 1, 1),
        op_adamw(124439808, 6e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, 124318464), op_adamw(1, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, 0),
        op_transpose(PHASE_FWD, 8 * 768, 196), op_transpose(PHASE_BWD_DATA, 1, 1),
        op_allreduce(PHASE_FWD, 1024 * 768, 2), op_allreduce(PHASE_BWD_DATA, 1, 1), op_allreduce(PHASE_UPDATE, 48, 8),
        op_softmax_xent_parallel(PHASE_FWD, 1024, 25129, 2, 50257), op_softmax_xent_parallel(PHASE_BWD_DATA, 1, 1, 2, 2),
        op_embedding_part(PHASE_FWD, 1024, 25129, 768), op_embedding_part(PHASE_BWD_WEIGHTS, 1, 1, 1),
    };
    bool seen[OP_KIND_COUNT] = {0};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        key_roundtrip(&all[i]);
        seen[all[i].kind] = true;
        /* a phaseless kind's key has no phase word; every other kind's second word is one */
        char k[OP_KEY_MAX], second[32] = "";
        op_key(&all[i], k);
        sscanf(k, "%*s %31s", second);
        bool is_phase = false;
        for (int ph = 0; ph < PHASE_COUNT; ph++)
            is_phase = is_phase || strcmp(second, op_phase_name((OpPhase)ph)) == 0;
        if (is_phase == op_kind_phaseless(all[i].kind))
            fail_msg("'%s': %s, but op_kind_phaseless says %d", k, is_phase ? "a phase in the key" : "no phase",
                     op_kind_phaseless(all[i].kind));
    }
    for (int k = 0; k < OP_KIND_COUNT; k++)
        assert_true(seen[k]); /* every kind covered */

    OpDesc nk = op_gru_cell(PHASE_BWD_DATA, 32, 2816, ACT_RELU);
    op_key(&nk, key);
    assert_string_equal(key, "gru_cell bwd_data relu batch=32 hidden=2816");
    nk = op_spmm(7680, 1500, 2560, 0.95);
    op_key(&nk, key);
    assert_string_equal(key, "spmm m=7680 n=1500 k=2560 nnz_row=128");
    nk = op_peak_fma(2, 1000);
    op_key(&nk, key);
    assert_string_equal(key, "peak_fma threads=2 fma=1152"); /* rounded up to 6 x 192 */
    nk = op_membw(MEMBW_READ, 2, 16000, 100);
    op_key(&nk, key);
    assert_string_equal(key, "membw read threads=2 bytes=16128 passes=100"); /* 84 x 192 */
    /* cross reads another thread's slice once: one thread, or passes, is no such kernel */
    OpDesc xd;
    assert_false(op_key_parse("membw cross threads=1 bytes=192 passes=1", &xd));
    assert_false(op_key_parse("membw cross threads=2 bytes=192 passes=2", &xd));
    assert_true(op_key_parse("membw cross threads=2 bytes=192 passes=1", &xd) && xd.u.membw.kind == MEMBW_CROSS);
    /* shared writes over data another core read: the same rules */
    assert_false(op_key_parse("membw shared threads=1 bytes=192 passes=1", &xd));
    assert_false(op_key_parse("membw shared threads=2 bytes=192 passes=2", &xd));
    assert_true(op_key_parse("membw shared threads=2 bytes=192 passes=1", &xd) && xd.u.membw.kind == MEMBW_SHARED);
    /* retain: handoff's read after a wait, which only it carries, within a second */
    nk = op_membw_retain(2, 4u << 20, 500);
    op_key(&nk, key);
    assert_string_equal(key, "membw retain threads=2 bytes=4194432 passes=1 idle_us=500");
    assert_false(op_key_parse("membw retain threads=2 bytes=192 passes=1", &xd));
    assert_false(op_key_parse("membw retain threads=2 bytes=192 passes=2 idle_us=5", &xd));
    assert_false(op_key_parse("membw retain threads=2 bytes=192 passes=1 idle_us=1000001", &xd));
    assert_false(op_key_parse("membw read threads=2 bytes=192 passes=1 idle_us=5", &xd));
    assert_true(op_key_parse("membw retain threads=2 bytes=192 passes=1 idle_us=5", &xd) &&
                xd.u.membw.kind == MEMBW_RETAIN && xd.u.membw.idle_us == 5);

    /* FWD ignores accumulate, so its key does not carry it */
    OpDesc cf = op_conv2d(PHASE_FWD, 1, 3, 9, 9, 4, 3, 3, 1, PAD_SAME, 1);
    cf.u.conv.accumulate = true;
    op_key(&cf, key);
    assert_non_null(strstr(key, "acc=0"));

    /* a normalised descriptor (batch 0, as the predictor keys them) can be keyed but
     * does not parse back */
    OpDesc nz = op_conv2d(PHASE_FWD, 8, 3, 9, 9, 4, 3, 3, 1, PAD_SAME, 1);
    nz.u.conv.n = 0;
    op_key(&nz, key);
    assert_string_equal(key, "conv2d fwd n=0 c=3 h=9 w=9 k=4 r=3 s=3 sh=1 sw=1 p=1,1,1,1 g=1 acc=0");
    OpDesc back;
    assert_false(op_key_parse(key, &back));

    /* the model-zoo keys, spelled out */
    op_key(&bnd, key);
    assert_string_equal(key, "batchnorm bwd_data n=128 c=64 spatial=12544 train=1 acc=1");
    op_key(&mn, key);
    assert_string_equal(key, "momentum count=25557032 nesterov=1 decay=25000000");
    op_key(&sd, key);
    assert_string_equal(key, "sgd count=1000 decay=1");
    OpDesc sg = op_sgd(1000, 0.1f);
    op_key(&sg, key);
    assert_string_equal(key, "sgd count=1000"); /* undecayed keys as before */
    OpDesc dr = op_dropout(PHASE_FWD, 10, 0.25f, 3u);
    op_key(&dr, key);
    assert_string_equal(key, "dropout fwd count=10");
    OpDesc ax = op_axpby(PHASE_BWD_DATA, 10, 2.0f, 0.0f);
    op_key(&ax, key);
    assert_string_equal(key, "axpby count=10");
    OpDesc ch = op_channel_copy(PHASE_FWD, 2, 8, 3, 5, 9);
    ch.u.chan.accumulate = true; /* FWD ignores it */
    op_key(&ch, key);
    assert_string_equal(key, "channel_copy fwd n=2 c_dst=8 c_src=3 offset=5 spatial=9 acc=0");
    OpKind k0;
    assert_true(op_kind_from_name("kl_sparsity", &k0) && k0 == OP_KL_SPARSITY);
    assert_string_equal(op_kind_name(OP_CHANNEL_COPY), "channel_copy");
    /* a batch-normalised model-zoo descriptor keys too */
    OpDesc bz = op_batchnorm(PHASE_FWD, 8, 4, 9, 1e-3f, 0.99f, true);
    bz.u.bn.n = 0;
    op_key(&bz, key);
    assert_false(op_key_parse(key, &back));
    /* parsed values are the documented defaults */
    assert_true(op_key_parse("adam count=10", &back) && back.u.update.step == 1 &&
                back.u.update.beta2 == 0.999f && back.u.update.eps == 1e-7f);
    assert_true(op_key_parse("batchnorm fwd n=1 c=1 spatial=1 train=1 acc=0", &back) &&
                back.u.bn.eps == 1e-3f && back.u.bn.momentum == 0.99f);

    /* names */
    OpKind k;
    assert_true(op_kind_from_name("lstm_cell", &k) && k == OP_LSTM_CELL);
    assert_false(op_kind_from_name("lstm", &k));
    assert_string_equal(op_phase_name(PHASE_BWD_WEIGHTS), "bwd_weights");
    assert_string_equal(op_act_name(ACT_SIGMOID), "sigmoid");
    assert_string_equal(op_kind_name(OP_SOFTMAX_XENT), "softmax_xent");

    /* malformed or non-canonical keys are rejected, never abort */
    static const char *const bad[] = {
        "", " ", "gemm", "foo count=3", "gemm m=0 n=1 k=1 ta=0 tb=0 beta=0",
        "gemm m=1 n=1 k=1 ta=2 tb=0 beta=0", "gemm m=-1 n=1 k=1 ta=0 tb=0 beta=0",
        "gemm m=1 n=1 k=1 ta=0 tb=0 beta=nan", "gemm m=1 n=1 k=1 ta=0 tb=0 beta=0 alpha=1",
        "gemm m=1 n=1 k=1 ta=0 tb=0 beta=0.50", "gemm m=01 n=1 k=1 ta=0 tb=0 beta=0",
        "gemm  m=1 n=1 k=1 ta=0 tb=0 beta=0", "gemm m=1 n=1 k=1 ta=0 tb=0 beta=0 ",
        "gemm m=1 n=1 k=1 tb=0 ta=0 beta=0", "gemm m=99999999999 n=1 k=1 ta=0 tb=0 beta=0",
        "conv2d fwd n=1 c=3 h=9 w=9 k=4 r=3 s=3 sh=1 sw=1 p=1,1,1,1 g=1 acc=1",
        "conv2d bwd_data n=1 c=3 h=9 w=9 k=4 r=3 s=3 sh=1 sw=1 p=1,1,1,1 g=2 acc=1",
        "conv2d update n=1 c=3 h=9 w=9 k=4 r=3 s=3 sh=1 sw=1 p=1,1,1,1 g=1 acc=1",
        "conv2d fwd n=1 c=3 h=2 w=2 k=4 r=3 s=3 sh=1 sw=1 p=0,0,0,0 g=1 acc=0",
        "conv2d fwd n=1 c=3 h=9 w=9 k=4 r=3 s=3 sh=0 sw=1 p=1,1,1,1 g=1 acc=0",
        "conv2d fwd n=2147483647 c=2147483647 h=9 w=9 k=4 r=3 s=3 sh=1 sw=1 p=1,1,1,1 g=1 acc=0",
        "pool2d bwd_weights max n=1 c=1 h=4 w=4 r=2 s=2 sh=2 sw=2 p=0,0,0,0 acc=0",
        "pool2d fwd max n=1 c=1 h=4 w=4 r=2 s=2 sh=2 sw=2 p=2,0,0,0 acc=0",
        "pool2d fwd min n=1 c=1 h=4 w=4 r=2 s=2 sh=2 sw=2 p=0,0,0,0 acc=0",
        "bias bwd_data n=1 c=1 spatial=1 acc=0", "act fwd swish count=3",
        "act fwd gelu count=3 inplace=1", /* gelu's backward needs x: never in place */
        "act bwd_weights relu count=3", "act fwd relu count=0", "sgd count=18446744073709551616",
        "stream fwd triad count=3", "stream triad count=3 q=3", "zero count=5x",
        "lstm_cell fwd batch=1", "sqerr fwd n=1 features=1 mean=2",
        "batchnorm bwd_data n=1 c=1 spatial=1 train=0 acc=1", /* backward needs training */
        "batchnorm update n=1 c=1 spatial=1 train=1 acc=0",
        "batchnorm fwd n=1 c=1 spatial=1 train=2 acc=0",
        "lrn fwd n=1 c=4 spatial=3 size=4 acc=0", "lrn bwd_weights n=1 c=4 spatial=3 size=3 acc=0",
        "dropout count=5", "dropout bwd_weights count=5",
        "channel_copy fwd n=1 c_dst=4 c_src=3 offset=2 spatial=1 acc=0",
        "axpby fwd count=3", "embedding bwd_data n=1 vocab=2 dim=3 acc=0",
        "kl_sparsity fwd n=1 units=0", "norm1 count=0",
        "momentum count=10", "momentum count=10 nesterov=2",
        "adam count=10 decay=11", "sgd count=10 decay=0x", "sgd count=10 nesterov=0",
        "rmsprop count=10 decay=010",
        "membw handoff threads=2 bytes=192 passes=2", /* a handoff reads once */
        "gemm m=1 n=1 k=1 ta=0 tb=0 beta=0 bias=0", "gemm m=1 n=1 k=1 ta=0 tb=0 beta=0 bias=2",
        "gemm m=1 n=1 k=1 ta=0 tb=0 beta=0 bias=1 alpha=2", /* the fixed order: alpha first */
        "bmm m=1 n=1 k=1 ta=0 tb=0 beta=0", "bmm b=0 m=1 n=1 k=1 ta=0 tb=0 beta=0",
        "bmm fwd b=1 m=1 n=1 k=1 ta=0 tb=0 beta=0", "bmm b=1 m=1 n=1 k=1 ta=0 tb=0 beta=0 bias=1",
        "layernorm fwd n=1 h=1", "layernorm update n=1 h=1 acc=0", "layernorm fwd n=1 h=0 acc=0",
        "layernorm fwd n=1 h=1 acc=1", "layernorm bwd_data n=1 h=1 acc=2",
        "softmax bwd_weights n=1 h=1 acc=0", "softmax fwd n=1 h=1 acc=1",
        "binary fwd sub count=1 acc=0", "binary bwd_weights add count=1 acc=0",
        "binary fwd add count=0 acc=0", "binary fwd add count=1",
        "scalar fwd pow count=1 acc=0 s=2", "scalar bwd_data mod count=1 acc=1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        OpDesc p;
        if (op_key_parse(bad[i], &p)) {
            fprintf(stderr, "  malformed key accepted: '%s'\n", bad[i]);
            fail();
        }
    }
    assert_false(op_key_parse(NULL, &g));
}

/* ---------------------------------------------------------------------------------------
 * The transformer's ops: linear with bias, batched GEMM, layer norm, softmax, binary and
 * tensor-scalar operators (GELU is among the activations above)
 * ------------------------------------------------------------------------------------- */

/* L = sum C r of a GEMM or BMM forward: the objective of the weight checks below. */
typedef struct {
    const OpDesc *fwd;
    void **bufs;
    size_t nc;
    const float *r;
} MatObj;

static double mat_objective(void *p)
{
    MatObj *o = p;
    run(o->fwd, o->bufs);
    const float *c = o->bufs[0];
    double s = 0.0;
    for (size_t i = 0; i < o->nc; i++)
        s += (double)c[i] * o->r[i];
    return s;
}

/* A linear layer (PyTorch nn.Linear: x (m, k), W stored (n, k), bias (n)): forward against
 * the reference, the spot check, beta != 0, and the backward as documented in ops.h: dx and
 * dW are GEMMs, dbias is OP_BIAS BWD_WEIGHTS over dC; all three by finite differences. */
static void gemm_bias_case(int m, int n, int k, bool ta, bool tb, uint64_t seed)
{
    const size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    float *A = tu_floats(na), *B = tu_floats(nb), *C = tu_floats(nc), *bias = tu_floats((size_t)n);
    float *r = tu_floats(nc), *dA = tu_floats(na), *dB = tu_floats(nb), *dbias = tu_floats((size_t)n);
    double *ref = tu_doubles(nc);
    tu_fill_uniform(A, na, -1, 1, seed);
    tu_fill_uniform(B, nb, -1, 1, seed + 1);
    tu_fill_uniform(bias, (size_t)n, -1, 1, seed + 2);
    tu_fill_uniform(r, nc, -1, 1, seed + 3);
    tu_fill_const(C, nc, NAN); /* beta 0: C is written, never read */
    OpDesc d = op_gemm_bias(PHASE_FWD, m, n, k, ta, tb);
    char key[OP_KEY_MAX];
    op_key(&d, key);
    void *bufs[] = {C, A, B, bias};
    run(&d, bufs);
    ref_gemm_bias(ref, A, B, NULL, bias, &d.u.gemm);
    assert_true(tu_close(key, C, ref, nc, REF_ATOL, REF_RTOL));
    expect_spot_ok(&d, bufs, NULL);

    /* beta != 0: C = op(A) op(B) + beta C0 + bias */
    OpDesc db = d;
    db.u.gemm.beta = 0.5f;
    tu_fill_uniform(C, nc, -1, 1, seed + 4);
    float *C0 = tu_dup(C, nc);
    run(&db, bufs);
    ref_gemm_bias(ref, A, B, C0, bias, &db.u.gemm);
    assert_true(tu_close("gemm bias beta=0.5", C, ref, nc, REF_ATOL, REF_RTOL));
    void *before[] = {C0, NULL, NULL, NULL};
    expect_spot_ok(&db, bufs, before);

    /* backward of L = sum C r (dC = r): the recipe of BmmDesc at batch 1, and the bias's
     * own gradient, OP_BIAS BWD_WEIGHTS over dC rows */
    OpDesc ga = ta ? op_gemm(PHASE_BWD_DATA, k, m, n, tb, true, 0.0f)
                   : op_gemm(PHASE_BWD_DATA, m, k, n, false, !tb, 0.0f);
    OpDesc gb = tb ? op_gemm(PHASE_BWD_WEIGHTS, n, k, m, true, ta, 0.0f)
                   : op_gemm(PHASE_BWD_WEIGHTS, k, n, m, !ta, false, 0.0f);
    void *ba[] = {dA, ta ? (void *)B : r, ta ? r : (void *)B};
    void *bbuf[] = {dB, tb ? r : (void *)A, tb ? (void *)A : r};
    run(&ga, ba);
    run(&gb, bbuf);
    OpDesc bias_bw = op_bias(PHASE_BWD_WEIGHTS, m, n, 1);
    bias_bw.u.bias.accumulate = false;
    void *bw[] = {dbias, r};
    run(&bias_bw, bw);
    MatObj o = {.fwd = &d, .bufs = bufs, .nc = nc, .r = r};
    assert_true(tu_grad_check("linear dx", A, na, dA, mat_objective, &o, FD_SAMPLES, seed + 5,
                              FD_EPS, FD_ATOL, FD_RTOL));
    assert_true(tu_grad_check("linear dW", B, nb, dB, mat_objective, &o, FD_SAMPLES, seed + 6,
                              FD_EPS, FD_ATOL, FD_RTOL));
    assert_true(tu_grad_check("linear dbias", bias, (size_t)n, dbias, mat_objective, &o,
                              FD_SAMPLES, seed + 7, FD_EPS, FD_ATOL, FD_RTOL));
    free(A), free(B), free(C), free(bias), free(r), free(dA), free(dB), free(dbias), free(ref);
    free(C0);
}

static void test_gemm_bias(void **state)
{
    (void)state;
    gemm_bias_case(5, 7, 3, false, true, 3000);   /* nn.Linear: W stored (n, k) */
    gemm_bias_case(6, 4, 9, false, false, 3010);
    gemm_bias_case(4, 5, 6, true, false, 3020);
    gemm_bias_case(3, 8, 5, true, true, 3030);
    gemm_bias_case(300, 130, 17, false, true, 3040); /* OpenMP bias fill */
    /* the cost: the GEMM's plus one add per element of C and the bias read */
    OpDesc d = op_gemm_bias(PHASE_FWD, 64, 768, 3072, false, true);
    OpCost c = op_cost(&d);
    assert_true(c.flops == 2.0 * 64 * 768 * 3072 + 64.0 * 768);
    assert_true(c.bytes == 4.0 * (64.0 * 3072 + 3072.0 * 768 + 64.0 * 768 + 768));
    OpBufInfo info[OP_MAX_BUFS];
    assert_int_equal(op_buffer_info(&d, info), 4);
    assert_string_equal(info[3].name, "bias");
    assert_int_equal(info[3].bytes, 4 * 768);
    assert_int_equal(info[3].role, BUF_IN);
    assert_int_equal(info[0].role, BUF_OUT);
}

/* Which of A, B, dC (0, 1, 2) each backward BMM takes as its own A and B operands. */
typedef struct {
    OpDesc d;
    int first, second;
} BmmGrad;

/* The backward BMMs of C = op(A) op(B) by BmmDesc's recipe, beta as given. */
static void bmm_backward(const BmmDesc *g, float beta, BmmGrad *da, BmmGrad *db)
{
    const int b = g->batch, m = g->m, n = g->n, k = g->k;
    const bool ta = g->trans_a, tb = g->trans_b;
    if (!ta)
        *da = (BmmGrad){op_bmm(PHASE_BWD_DATA, b, m, k, n, false, !tb, beta), 2, 1};
    else
        *da = (BmmGrad){op_bmm(PHASE_BWD_DATA, b, k, m, n, tb, true, beta), 1, 2};
    if (!tb)
        *db = (BmmGrad){op_bmm(PHASE_BWD_WEIGHTS, b, k, n, m, !ta, false, beta), 0, 2};
    else
        *db = (BmmGrad){op_bmm(PHASE_BWD_WEIGHTS, b, n, k, m, true, ta, beta), 2, 0};
}

static void bmm_case(int batch, int m, int n, int k, bool ta, bool tb, float beta, uint64_t seed)
{
    const size_t na = (size_t)batch * m * k, nb = (size_t)batch * k * n, nc = (size_t)batch * m * n;
    float *A = tu_floats(na), *B = tu_floats(nb), *C = tu_floats(nc), *r = tu_floats(nc);
    float *dA = tu_floats(na), *dB = tu_floats(nb);
    double *ref = tu_doubles(nc);
    tu_fill_uniform(A, na, -1, 1, seed);
    tu_fill_uniform(B, nb, -1, 1, seed + 1);
    tu_fill_uniform(C, nc, -1, 1, seed + 2);
    tu_fill_uniform(r, nc, -1, 1, seed + 3);
    float *C0 = tu_dup(C, nc);
    OpDesc d = op_bmm(PHASE_FWD, batch, m, n, k, ta, tb, beta);
    char key[OP_KEY_MAX];
    op_key(&d, key);
    void *bufs[] = {C, A, B};
    run(&d, bufs);
    ref_bmm(ref, A, B, C0, &d.u.bmm);
    assert_true(tu_close(key, C, ref, nc, REF_ATOL, REF_RTOL));
    void *before[] = {C0, NULL, NULL};
    expect_spot_ok(&d, bufs, beta != 0.0f ? before : NULL);

    /* backward of L = sum C r (dC = r): the recipe's BMMs with beta 0 against finite
     * differences, then with beta 1 adding to what the gradient buffers held */
    OpDesc f = op_bmm(PHASE_FWD, batch, m, n, k, ta, tb, 0.0f);
    BmmGrad ga, gb;
    void *ops[] = {A, B, r};
    bmm_backward(&f.u.bmm, 0.0f, &ga, &gb);
    tu_fill_const(dA, na, NAN); /* beta 0: written, never read */
    tu_fill_const(dB, nb, NAN);
    void *ba[] = {dA, ops[ga.first], ops[ga.second]}, *bb[] = {dB, ops[gb.first], ops[gb.second]};
    run(&ga.d, ba);
    run(&gb.d, bb);
    void *fb[] = {C, A, B};
    MatObj o = {.fwd = &f, .bufs = fb, .nc = nc, .r = r};
    assert_true(tu_grad_check("bmm dA", A, na, dA, mat_objective, &o, FD_SAMPLES, seed + 4,
                              FD_EPS, FD_ATOL, FD_RTOL));
    assert_true(tu_grad_check("bmm dB", B, nb, dB, mat_objective, &o, FD_SAMPLES, seed + 5,
                              FD_EPS, FD_ATOL, FD_RTOL));
    double *ea = tu_doubles(na), *eb = tu_doubles(nb);
    for (size_t i = 0; i < na; i++)
        ea[i] = dA[i] + 0.25;
    for (size_t i = 0; i < nb; i++)
        eb[i] = dB[i] - 0.5;
    bmm_backward(&f.u.bmm, 1.0f, &ga, &gb);
    tu_fill_const(dA, na, 0.25f);
    tu_fill_const(dB, nb, -0.5f);
    void *ba1[] = {dA, ops[ga.first], ops[ga.second]}, *bb1[] = {dB, ops[gb.first], ops[gb.second]};
    run(&ga.d, ba1);
    run(&gb.d, bb1);
    assert_true(tu_close("bmm dA accumulated", dA, ea, na, REF_ATOL, REF_RTOL));
    assert_true(tu_close("bmm dB accumulated", dB, eb, nb, REF_ATOL, REF_RTOL));
    free(ea), free(eb);
    free(A), free(B), free(C), free(r), free(dA), free(dB), free(ref), free(C0);
}

static void test_bmm(void **state)
{
    (void)state;
    uint64_t seed = 3100;
    for (int t = 0; t < 4; t++) {
        bmm_case(3, 5, 4, 6, t & 1, t >> 1, 0.0f, seed += 10);
        bmm_case(2, 7, 3, 5, t & 1, t >> 1, 1.0f, seed += 10);
    }
    bmm_case(1, 9, 11, 13, true, false, 0.5f, 3190); /* batch 1 is the GEMM */
    bmm_case(12, 16, 16, 8, false, true, 0.0f, 3195); /* attention's QK^T: 12 heads */
    /* the cost of attention's scores at 12 heads x batch 8, seq 128, head 64 */
    OpDesc d = op_bmm(PHASE_FWD, 96, 128, 128, 64, false, true, 0.0f);
    assert_true(op_cost(&d).flops == 2.0 * 96 * 128 * 128 * 64);
    assert_true(op_cost(&d).bytes == 4.0 * 96 * (128 * 64 + 64 * 128 + 128 * 128));
    d.u.bmm.beta = 1.0f;
    assert_true(op_cost(&d).bytes == 4.0 * 96 * (128 * 64 + 64 * 128 + 2 * 128 * 128));
    OpBufInfo info[OP_MAX_BUFS];
    assert_int_equal(op_buffer_info(&d, info), 3);
    assert_int_equal(info[0].role, BUF_INOUT);
    assert_int_equal(info[0].bytes, 4 * 96 * 128 * 128);
    assert_int_equal(info[1].bytes, 4 * 96 * 128 * 64);
    /* a BMM of batch 1 runs the GEMM exactly */
    const OpDesc one = op_bmm(PHASE_FWD, 1, 33, 17, 65, true, true, 0.0f);
    const OpDesc gemm = op_gemm(PHASE_FWD, 33, 17, 65, true, true, 0.0f);
    float *A = tu_floats(33 * 65), *B = tu_floats(65 * 17), *C1 = tu_floats(33 * 17), *C2 = tu_floats(33 * 17);
    tu_fill_uniform(A, 33 * 65, -1, 1, 3198);
    tu_fill_uniform(B, 65 * 17, -1, 1, 3199);
    void *b1[] = {C1, A, B}, *b2[] = {C2, A, B};
    run(&one, b1);
    run(&gemm, b2);
    assert_true(tu_close_f("bmm batch 1 = gemm", C1, C2, 33 * 17, 0, 0));
    free(A), free(B), free(C1), free(C2);
}

/* Strided BMMs as a decoder's attention runs them (Megatron's layout): the fused QKV
 * projection's output (T, B, H, 3 hd), head i = b H + h a (T, hd) matrix at 3 hd i (q),
 * + hd (k), + 2 hd (v), rows 3 B H hd apart; scores packed (B H, T, T); the context
 * written straight into (T, B, H, hd). Each against the packed BMM of gathered copies. */
static void test_bmm_strided(void **state)
{
    (void)state;
    const int T = 7, B = 2, H = 3, hd = 4, BH = B * H;
    const size_t row = (size_t)3 * BH * hd, nqkv = (size_t)T * row;
    float *qkv = tu_floats(nqkv), *S = tu_floats((size_t)BH * T * T);
    tu_fill_uniform(qkv, nqkv, -1, 1, 3400);
    /* gathered packed copies: Q, K, V (BH, T, hd) */
    const size_t nh = (size_t)BH * T * hd;
    float *Q = tu_floats(nh), *K = tu_floats(nh), *V = tu_floats(nh);
    for (int i = 0; i < BH; i++)
        for (int t = 0; t < T; t++)
            for (int e = 0; e < hd; e++) {
                const size_t src = (size_t)t * row + (size_t)3 * hd * i + e, dst = ((size_t)i * T + t) * hd + e;
                Q[dst] = qkv[src], K[dst] = qkv[src + hd], V[dst] = qkv[src + 2 * hd];
            }
    const int ld_qk[3] = {(int)row, (int)row, 0};
    const size_t st_qk[3] = {(size_t)3 * hd, (size_t)3 * hd, 0};
    OpDesc s = op_bmm_strided(PHASE_FWD, BH, T, T, hd, false, true, 0.5f, 0.0f, ld_qk, st_qk);
    char key[OP_KEY_MAX];
    op_key(&s, key);
    assert_string_equal(key, "bmm b=6 m=7 n=7 k=4 ta=0 tb=1 beta=0 alpha=0.5 lda=72 ldb=72 ldc=0 sa=12 sb=12 sc=0");
    OpDesc parsed;
    assert_true(op_key_parse(key, &parsed));
    assert_memory_equal(&parsed.u.bmm, &s.u.bmm, sizeof(BmmDesc));
    OpBufInfo info[OP_MAX_BUFS];
    assert_int_equal(op_buffer_info(&s, info), 3);
    /* A spans from q of head 0 to the last row's q of head BH - 1 */
    assert_int_equal(info[1].bytes, 4 * ((BH - 1) * 3 * hd + (T - 1) * row + hd));
    /* what the attention layer runs is exactly this */
    OpDesc ab[ATTN_BMMS];
    op_attention_bmms(B, H, T, hd, ab);
    char akey[OP_KEY_MAX];
    op_key(&ab[ATTN_SCORES], akey);
    assert_string_equal(akey, key);
    void *sb[] = {S, qkv, qkv + hd};
    run(&s, sb);
    expect_spot_ok(&s, sb, NULL);
    OpDesc sp = op_bmm(PHASE_FWD, BH, T, T, hd, false, true, 0.0f);
    sp.u.bmm.alpha = 0.5f;
    float *Sp = tu_floats((size_t)BH * T * T);
    void *spb[] = {Sp, Q, K};
    run(&sp, spb);
    assert_true(tu_close_f("strided scores", S, Sp, (size_t)BH * T * T, 1e-6, 1e-5));
    /* context O = S V into (T, B, H, hd), then accumulated (beta 1) */
    const size_t no = (size_t)T * BH * hd;
    float *O = tu_floats(no), *Op = tu_floats(nh);
    tu_fill_const(O, no, NAN);
    const int ld_av[3] = {0, (int)row, BH * hd};
    const size_t st_av[3] = {0, (size_t)3 * hd, (size_t)hd};
    OpDesc av = op_bmm_strided(PHASE_FWD, BH, T, hd, T, false, false, 1.0f, 0.0f, ld_av, st_av);
    op_key(&ab[ATTN_CONTEXT], akey);
    op_key(&av, key);
    assert_string_equal(akey, key);
    void *avb[] = {O, S, qkv + 2 * hd};
    run(&av, avb);
    expect_spot_ok(&av, avb, NULL);
    OpDesc avp = op_bmm(PHASE_FWD, BH, T, hd, T, false, false, 0.0f);
    void *avpb[] = {Op, Sp, V};
    run(&avp, avpb);
    for (int i = 0; i < BH; i++)
        for (int t = 0; t < T; t++)
            for (int e = 0; e < hd; e++)
                assert_float_equal(O[(size_t)t * BH * hd + (size_t)i * hd + e], Op[((size_t)i * T + t) * hd + e], 1e-5);
    float *O0 = tu_dup(O, no);
    av.u.bmm.beta = 1.0f;
    run(&av, avb);
    void *before[] = {O0, NULL, NULL};
    expect_spot_ok(&av, avb, before);
    for (size_t i = 0; i < no; i++)
        assert_float_equal(O[i], 2.0f * O0[i], 1e-5);
    /* C matrices that would overlap are refused; a packed BMM keys without strides */
    assert_false(op_key_parse("bmm b=2 m=2 n=4 k=1 ta=0 tb=0 beta=0 lda=0 ldb=0 ldc=4 sa=0 sb=0 sc=2", &parsed));
    assert_false(op_key_parse("bmm b=2 m=2 n=2 k=1 ta=0 tb=0 beta=0 lda=0 ldb=0 ldc=0 sa=0 sb=0 sc=0", &parsed));
    assert_false(op_key_parse("bmm b=2 m=2 n=2 k=3 ta=0 tb=0 beta=0 lda=2 ldb=0 ldc=0 sa=0 sb=0 sc=0", &parsed));
    assert_true(op_key_parse("bmm b=2 m=2 n=2 k=1 ta=0 tb=0 beta=0 lda=0 ldb=0 ldc=4 sa=0 sb=0 sc=2", &parsed));
    free(qkv), free(S), free(Q), free(K), free(V), free(Sp), free(O), free(Op), free(O0);
}

/* Layer norm: forward, both backward phases (written and accumulated) against the
 * references, the spot checks, and finite differences for dx, dgamma and dbeta. x has a
 * mean far from 0 (3), so a one-pass variance would show. */
static void ln_case(int n, int h, bool fd, uint64_t seed)
{
    const size_t e = (size_t)n * h, H = (size_t)h, N = (size_t)n;
    float *x = tu_floats(e), *y = tu_floats(e), *dy = tu_floats(e), *dx = tu_floats(e);
    float *gamma = tu_floats(H), *beta = tu_floats(H), *mean = tu_floats(N), *rstd = tu_floats(N);
    float *dg = tu_floats(H), *db = tu_floats(H);
    double *ry = tu_doubles(e), *rmean = tu_doubles(N), *rrstd = tu_doubles(N);
    double *rdx = tu_doubles(e), *rdg = tu_doubles(H), *rdb = tu_doubles(H), *ex = tu_doubles(e);
    tu_fill_uniform(x, e, 2.0f, 4.0f, seed);
    tu_fill_uniform(gamma, H, 0.5f, 1.5f, seed + 1);
    tu_fill_uniform(beta, H, -0.5f, 0.5f, seed + 2);
    tu_fill_uniform(dy, e, -1, 1, seed + 3);
    OpDesc f = op_layernorm(PHASE_FWD, n, h, 1e-5f);
    char key[OP_KEY_MAX];
    op_key(&f, key);
    tu_fill_const(y, e, 99.0f);
    void *fb[] = {y, mean, rstd, x, gamma, beta};
    run(&f, fb);
    ref_layernorm_forward(ry, rmean, rrstd, x, gamma, beta, &f.u.ln);
    assert_true(tu_close(key, y, ry, e, 1e-5, 1e-5));
    assert_true(tu_close("ln mean", mean, rmean, N, 1e-6, 1e-6));
    assert_true(tu_close("ln rstd", rstd, rrstd, N, 1e-6, 1e-5));
    expect_spot_ok(&f, fb, NULL);

    ref_layernorm_backward(rdx, rdg, rdb, dy, x, gamma, &f.u.ln);
    for (int acc = 0; acc < 2; acc++) {
        OpDesc bw = op_layernorm(PHASE_BWD_WEIGHTS, n, h, 1e-5f);
        OpDesc bd = op_layernorm(PHASE_BWD_DATA, n, h, 1e-5f);
        assert_true(bw.u.ln.accumulate && bd.u.ln.accumulate); /* backward constructors */
        bw.u.ln.accumulate = bd.u.ln.accumulate = acc;
        tu_fill_const(dg, H, 0.5f);
        tu_fill_const(db, H, -0.5f);
        tu_fill_const(dx, e, 0.25f);
        float *dg0 = tu_dup(dg, H), *db0 = tu_dup(db, H), *dx0 = tu_dup(dx, e);
        void *bwb[] = {dg, db, dy, x, mean, rstd};
        run(&bw, bwb);
        op_key(&bw, key);
        for (size_t i = 0; i < H; i++)
            ex[i] = rdg[i] + (acc ? 0.5 : 0.0);
        assert_true(tu_close(key, dg, ex, H, 1e-5, 1e-4));
        for (size_t i = 0; i < H; i++)
            ex[i] = rdb[i] + (acc ? -0.5 : 0.0);
        assert_true(tu_close(key, db, ex, H, 1e-5, 1e-4));
        void *bwx[] = {dg0, db0, NULL, NULL, NULL, NULL};
        expect_spot_ok(&bw, bwb, acc ? bwx : NULL);
        void *bdb[] = {dx, dy, x, gamma, mean, rstd};
        run(&bd, bdb);
        op_key(&bd, key);
        for (size_t i = 0; i < e; i++)
            ex[i] = rdx[i] + (acc ? 0.25 : 0.0);
        assert_true(tu_close(key, dx, ex, e, 1e-5, 1e-4));
        void *bdx[] = {dx0, NULL, NULL, NULL, NULL, NULL};
        expect_spot_ok(&bd, bdb, acc ? bdx : NULL);
        free(dg0), free(db0), free(dx0);
    }
    if (fd) { /* L = sum y r through each row's statistics, gradients written */
        OpDesc bw = op_layernorm(PHASE_BWD_WEIGHTS, n, h, 1e-5f);
        OpDesc bd = op_layernorm(PHASE_BWD_DATA, n, h, 1e-5f);
        bw.u.ln.accumulate = bd.u.ln.accumulate = false;
        run(&f, fb);
        void *bwb[] = {dg, db, dy, x, mean, rstd}, *bdb[] = {dx, dy, x, gamma, mean, rstd};
        run(&bd, bdb); /* either order: BWD_DATA does not read dgamma */
        run(&bw, bwb);
        FwdObj o = {.fwd = &f, .bufs = fb, .nout = 1, .out = {0}, .r = {dy}, .n = {e}};
        assert_true(tu_grad_check("ln dx", x, e, dx, fwd_objective, &o, FD_SAMPLES, seed + 4,
                                  FD_EPS, FD_ATOL, FD_RTOL));
        assert_true(tu_grad_check("ln dgamma", gamma, H, dg, fwd_objective, &o, FD_SAMPLES,
                                  seed + 5, FD_EPS, FD_ATOL, FD_RTOL));
        assert_true(tu_grad_check("ln dbeta", beta, H, db, fwd_objective, &o, FD_SAMPLES,
                                  seed + 6, FD_EPS, FD_ATOL, FD_RTOL));
    }
    free(x), free(y), free(dy), free(dx), free(gamma), free(beta), free(mean), free(rstd);
    free(dg), free(db), free(ry), free(rmean), free(rrstd), free(rdx), free(rdg), free(rdb);
    free(ex);
}

static void test_layernorm(void **state)
{
    (void)state;
    ln_case(4, 7, true, 3200);
    ln_case(3, 40, true, 3210);      /* rows longer than the lanes, a ragged tail */
    ln_case(1, 1, false, 3220);      /* one value: variance 0, rstd 1/sqrt(eps) */
    ln_case(64, 768, false, 3230);   /* OpenMP rows, column blocks of 256 split by thread */
    ln_case(300, 600, false, 3240);  /* ragged column blocks */
    const double e = 4096.0 * 768;
    OpDesc d = op_layernorm(PHASE_FWD, 4096, 768, 1e-5f);
    assert_true(op_cost(&d).flops == 8 * e && op_cost(&d).bytes == 4 * (2 * e + 2 * 768 + 2 * 4096));
    d = op_layernorm(PHASE_BWD_WEIGHTS, 4096, 768, 1e-5f); /* accumulates */
    assert_true(op_cost(&d).flops == 5 * e && op_cost(&d).bytes == 4 * (2 * e + 2 * 4096 + 4 * 768));
    d = op_layernorm(PHASE_BWD_DATA, 4096, 768, 1e-5f);
    assert_true(op_cost(&d).flops == 11 * e && op_cost(&d).bytes == 4 * (4 * e + 768 + 2 * 4096));
    d.u.ln.accumulate = false;
    assert_true(op_cost(&d).flops == 10 * e && op_cost(&d).bytes == 4 * (3 * e + 768 + 2 * 4096));
    OpBufInfo info[OP_MAX_BUFS];
    d = op_layernorm(PHASE_FWD, 5, 3, 1e-5f);
    assert_int_equal(op_buffer_info(&d, info), 6);
    assert_string_equal(info[2].name, "rstd");
    assert_int_equal(info[2].bytes, 4 * 5);
    assert_int_equal(info[4].bytes, 4 * 3);
    d = op_layernorm(PHASE_BWD_WEIGHTS, 5, 3, 1e-5f);
    assert_int_equal(op_buffer_info(&d, info), 6);
    assert_int_equal(info[1].role, BUF_INOUT);
    d = op_layernorm(PHASE_BWD_DATA, 5, 3, 1e-5f);
    assert_int_equal(op_buffer_info(&d, info), 6);
    assert_string_equal(info[3].name, "gamma");
}

/* The causal mask as the reference sees it: masked scores at -inf (exp gives 0). */
static float *causal_masked(const float *x, int n, int h)
{
    float *xm = tu_dup(x, (size_t)n * h);
    for (int r = 0; r < n; r++)
        for (int j = r % h + 1; j < h; j++)
            xm[(size_t)r * h + j] = -INFINITY;
    return xm;
}

static OpDesc softmax_of(OpPhase phase, int n, int h, bool causal)
{
    return causal ? op_softmax_causal(phase, n, h) : op_softmax(phase, n, h);
}

/* The backward (written, from the forward's y = fb[0]) against finite differences of the
 * forward f over its input x = fb[1], along dy. */
static void softmax_grad_check(const OpDesc *f, void *fb[], const char *key, int n, int h, bool causal,
                               float *dx, float *dy, uint64_t seed)
{
    const size_t e = (size_t)n * h;
    OpDesc b = softmax_of(PHASE_BWD_DATA, n, h, causal);
    b.u.softmax.accumulate = false;
    run(&b, (void *[]){dx, dy, fb[0]});
    FwdObj o = {.fwd = f, .bufs = fb, .nout = 1, .out = {0}, .r = {dy}, .n = {e}};
    assert_true(tu_grad_check(key, fb[1], e, dx, fwd_objective, &o, FD_SAMPLES, seed, FD_EPS, 1e-4, FD_RTOL));
}

static void softmax_case(int n, int h, float scale, bool causal, uint64_t seed)
{
    const size_t e = (size_t)n * h;
    float *x = tu_floats(e), *y = tu_floats(e), *dy = tu_floats(e), *dx = tu_floats(e);
    double *ry = tu_doubles(e), *rdx = tu_doubles(e), *ex = tu_doubles(e);
    tu_fill_uniform(x, e, -scale, scale, seed);
    tu_fill_uniform(dy, e, -1, 1, seed + 1);
    float *xr = causal ? causal_masked(x, n, h) : tu_dup(x, e);
    OpDesc f = softmax_of(PHASE_FWD, n, h, causal);
    char key[OP_KEY_MAX];
    op_key(&f, key);
    void *fb[] = {y, x};
    run(&f, fb);
    ref_softmax_forward(ry, xr, n, h);
    assert_true(tu_close(key, y, ry, e, 1e-7, 1e-5));
    expect_spot_ok(&f, fb, NULL);
    /* in place (y over x): the same values */
    float *xi = tu_dup(x, e);
    void *fi[] = {xi, xi};
    run(&f, fi);
    assert_true(tu_close_f("softmax in place", xi, y, e, 0, 0));
    ref_softmax_backward_data(rdx, dy, xr, n, h);
    for (int acc = 0; acc < 2; acc++) {
        OpDesc b = softmax_of(PHASE_BWD_DATA, n, h, causal);
        b.u.softmax.accumulate = acc;
        tu_fill_const(dx, e, 0.25f);
        float *dx0 = tu_dup(dx, e);
        void *bb[] = {dx, dy, y}, *bb0[] = {dx0, NULL, NULL};
        run(&b, bb);
        op_key(&b, key);
        for (size_t i = 0; i < e; i++)
            ex[i] = rdx[i] + (acc ? 0.25 : 0.0);
        assert_true(tu_close(key, dx, ex, e, 1e-6, 1e-5));
        expect_spot_ok(&b, bb, acc ? bb0 : NULL);
        free(dx0);
    }
    if (e <= 4096)
        softmax_grad_check(&f, fb, key, n, h, causal, dx, dy, seed + 2);
    for (size_t i = 0; i < e; i++)
        assert_true(isfinite(y[i]));
    free(x), free(y), free(dy), free(dx), free(ry), free(rdx), free(ex), free(xi), free(xr);
}

/* The key padding mask: S samples, each H heads x T queries over T keys (b-major rows),
 * the ids (T, S) time-major. Against the reference with the pads' keys (and, causal, the
 * future's) at -inf, a sample of no real key all 0, in place, the spot check, and the
 * backward (the plain one: y is 0 on the masked keys) against finite differences. */
static void softmax_padded_case(int S, int H, int T, bool causal, uint64_t seed)
{
    const int n = S * H * T, pad = 2;
    const size_t e = (size_t)n * T;
    float *x = tu_floats(e), *y = tu_floats(e), *dy = tu_floats(e), *dx = tu_floats(e);
    double *ry = tu_doubles(e);
    int32_t *ids = calloc((size_t)T * S, sizeof *ids);
    tu_fill_uniform(x, e, -3, 3, seed);
    tu_fill_uniform(dy, e, -1, 1, seed + 1);
    for (int b = 0; b < S; b++) /* sample b: b % (T + 1) pads at the end; the last: all pads */
        for (int j = 0; j < T; j++)
            ids[j * S + b] = b == S - 1 || j >= T - b % (T + 1) ? pad : 5 + j;
    float *xr = causal ? causal_masked(x, n, T) : tu_dup(x, e);
    for (int r = 0; r < n; r++)
        for (int j = 0; j < T; j++)
            if (ids[j * S + r / (H * T)] == pad)
                xr[(size_t)r * T + j] = -INFINITY;
    OpDesc f = op_softmax_padded(n, T, causal, S, pad);
    char key[OP_KEY_MAX];
    op_key(&f, key);
    void *fb[] = {y, x, ids};
    run(&f, fb);
    for (int r = 0; r < n; r++) {
        bool any = false;
        for (int j = 0; j < T; j++)
            any |= isfinite(xr[(size_t)r * T + j]);
        if (any)
            ref_softmax_forward(ry + (size_t)r * T, xr + (size_t)r * T, 1, T);
        else
            for (int j = 0; j < T; j++)
                ry[(size_t)r * T + j] = 0.0;
    }
    assert_true(tu_close(key, y, ry, e, 1e-7, 1e-5));
    expect_spot_ok(&f, fb, NULL);
    float *xi = tu_dup(x, e);
    run(&f, (void *[]){xi, xi, ids});
    assert_true(tu_close_f("padded softmax in place", xi, y, e, 0, 0));
    softmax_grad_check(&f, fb, key, n, T, causal, dx, dy, seed + 2);
    free(x), free(y), free(dy), free(dx), free(ry), free(xr), free(xi), free(ids);
}

static void test_softmax_padding_mask(void **state)
{
    (void)state;
    softmax_padded_case(4, 2, 6, false, 3400);
    softmax_padded_case(5, 3, 7, true, 3410);
    softmax_padded_case(16, 12, 64, false, 3420); /* OpenMP rows */
    OpDesc d = op_softmax_padded(4 * 2 * 6, 6, false, 4, 0), u = op_softmax(PHASE_FWD, 4 * 2 * 6, 6);
    assert_true(op_cost(&d).flops == op_cost(&u).flops && op_cost(&d).bytes == op_cost(&u).bytes + 4.0 * 6 * 4);
    char key[OP_KEY_MAX];
    op_key(&d, key);
    assert_string_equal(key, "softmax fwd n=48 h=6 acc=0 pad=0 samples=4");
    OpDesc bad;
    assert_false(op_key_parse("softmax fwd n=48 h=6 acc=0 pad=0 samples=5", &bad)); /* 48 rows in 5 samples */
    assert_false(op_key_parse("softmax bwd_data n=48 h=6 acc=1 pad=0 samples=4", &bad));
    assert_false(op_key_parse("softmax fwd n=48 h=6 acc=0 pad=-1 samples=4", &bad));
}

static void test_softmax(void **state)
{
    (void)state;
    softmax_case(5, 7, 3.0f, false, 3300);
    softmax_case(3, 50, 2.0f, false, 3310);
    softmax_case(96, 512, 4.0f, false, 3320);     /* OpenMP rows: attention weights */
    softmax_case(4, 10, 1000.0f, false, 3330);    /* huge logits: stable, no inf/NaN */
    softmax_case(2, 1, 1.0f, false, 3340);        /* one column: y = 1, dx = 0 */
    softmax_case(14, 7, 3.0f, true, 3350);        /* a decoder's mask: two blocks of 7 */
    softmax_case(1024, 128, 4.0f, true, 3360);    /* OpenMP rows, 8 heads of 128 tokens */
    softmax_case(3, 1, 1.0f, true, 3370);         /* one key: every query sees it */
    OpDesc d = op_softmax(PHASE_FWD, 96, 512);
    const double e = 96.0 * 512;
    assert_true(op_cost(&d).flops == 5 * e && op_cost(&d).bytes == 4 * 2 * e);
    d = op_softmax(PHASE_BWD_DATA, 96, 512);
    assert_true(op_cost(&d).flops == 5 * e && op_cost(&d).bytes == 4 * 4 * e);
    d.u.softmax.accumulate = false;
    assert_true(op_cost(&d).flops == 4 * e && op_cost(&d).bytes == 4 * 3 * e);
    /* the mask: n (h + 1) / 2 visible elements read and computed, every y written */
    d = op_softmax_causal(PHASE_FWD, 96 * 512, 512);
    const double ec = 96.0 * 512 * 512, v = 96.0 * 512 * 513 / 2;
    assert_true(op_cost(&d).flops == 5 * v && op_cost(&d).bytes == 4 * (v + ec));
    char key[OP_KEY_MAX];
    op_key(&d, key);
    assert_string_equal(key, "softmax fwd n=49152 h=512 acc=0 causal=1");
    OpDesc r;
    assert_true(op_key_parse(key, &r));
    assert_true(r.u.softmax.causal && r.u.softmax.n == 49152);
    /* a causal block is square: rows a multiple of the keys */
    assert_false(op_key_parse("softmax fwd n=10 h=4 acc=0 causal=1", &r));
    assert_false(op_key_parse("softmax fwd n=8 h=4 acc=0 causal=2", &r));
    assert_false(op_key_parse("softmax fwd n=8 h=4 acc=0 causal=0", &r));
}

/* Operands in each operator's domain: pow's base positive, div's divisor away from 0. */
static void binary_fill(BinaryKind op, float *a, float *b, size_t n, uint64_t seed)
{
    if (op == BIN_POW) {
        tu_fill_uniform(a, n, 0.5f, 2.0f, seed);
        tu_fill_uniform(b, n, -1.5f, 1.5f, seed + 1);
    } else {
        tu_fill_uniform(a, n, -2, 2, seed);
        if (op == BIN_DIV)
            tu_fill_margin(b, n, 0.5f, 2.0f, seed + 1);
        else
            tu_fill_uniform(b, n, -2, 2, seed + 1);
    }
}

static void binary_case(BinaryKind op, size_t count, uint64_t seed)
{
    float *a = tu_floats(count), *b = tu_floats(count), *y = tu_floats(count);
    float *dy = tu_floats(count), *da = tu_floats(count), *db = tu_floats(count);
    double *ry = tu_doubles(count), *rda = tu_doubles(count), *rdb = tu_doubles(count);
    double *ex = tu_doubles(count);
    binary_fill(op, a, b, count, seed);
    tu_fill_uniform(dy, count, -1, 1, seed + 2);
    OpDesc f = op_binary(PHASE_FWD, op, count);
    char key[OP_KEY_MAX];
    op_key(&f, key);
    void *fb[] = {y, a, b};
    run(&f, fb);
    ref_binary_forward(ry, a, b, op, count);
    assert_true(tu_close(key, y, ry, count, 1e-6, 1e-5));
    expect_spot_ok(&f, fb, NULL);
    ref_binary_backward_data(rda, rdb, dy, a, b, op, count);
    for (int acc = 0; acc < 2; acc++) {
        OpDesc bd = op_binary(PHASE_BWD_DATA, op, count);
        bd.u.binary.accumulate = acc;
        tu_fill_const(da, count, 0.25f);
        tu_fill_const(db, count, -0.5f);
        float *da0 = tu_dup(da, count), *db0 = tu_dup(db, count);
        void *bb[] = {da, db, dy, a, b}, *bb0[] = {da0, db0, NULL, NULL, NULL};
        run(&bd, bb);
        op_key(&bd, key);
        for (size_t i = 0; i < count; i++)
            ex[i] = rda[i] + (acc ? 0.25 : 0.0);
        assert_true(tu_close(key, da, ex, count, 1e-6, 1e-5));
        for (size_t i = 0; i < count; i++)
            ex[i] = rdb[i] + (acc ? -0.5 : 0.0);
        assert_true(tu_close(key, db, ex, count, 1e-6, 1e-5));
        expect_spot_ok(&bd, bb, acc ? bb0 : NULL);
        free(da0), free(db0);
    }
    if (count <= 4096) { /* L = sum (a op b) r, r = dy: da and db against finite differences */
        OpDesc bd = op_binary(PHASE_BWD_DATA, op, count);
        bd.u.binary.accumulate = false;
        void *bb[] = {da, db, dy, a, b};
        run(&bd, bb);
        FwdObj o = {.fwd = &f, .bufs = fb, .nout = 1, .out = {0}, .r = {dy}, .n = {count}};
        assert_true(tu_grad_check(key, a, count, da, fwd_objective, &o, FD_SAMPLES, seed + 3,
                                  FD_EPS, FD_ATOL, FD_RTOL));
        assert_true(tu_grad_check(key, b, count, db, fwd_objective, &o, FD_SAMPLES, seed + 4,
                                  FD_EPS, FD_ATOL, FD_RTOL));
    }
    /* y may alias a */
    run(&f, fb); /* y again from the unperturbed a and b */
    float *ai = tu_dup(a, count);
    void *fi[] = {ai, ai, b};
    run(&f, fi);
    assert_true(tu_close_f("binary in place", ai, y, count, 0, 0));
    free(a), free(b), free(y), free(dy), free(da), free(db), free(ry), free(rda), free(rdb);
    free(ex), free(ai);
}

static void scalar_case(BinaryKind op, size_t count, float s, uint64_t seed)
{
    float *a = tu_floats(count), *y = tu_floats(count), *dy = tu_floats(count), *da = tu_floats(count);
    double *ry = tu_doubles(count), *rda = tu_doubles(count), *ex = tu_doubles(count);
    if (op == BIN_POW)
        tu_fill_uniform(a, count, 0.5f, 2.0f, seed);
    else
        tu_fill_uniform(a, count, -2, 2, seed);
    tu_fill_uniform(dy, count, -1, 1, seed + 1);
    OpDesc f = op_scalar(PHASE_FWD, op, count, s);
    char key[OP_KEY_MAX];
    op_key(&f, key);
    void *fb[] = {y, a};
    run(&f, fb);
    ref_scalar_forward(ry, a, s, op, count);
    assert_true(tu_close(key, y, ry, count, 1e-6, 1e-5));
    expect_spot_ok(&f, fb, NULL);
    ref_scalar_backward_data(rda, dy, a, s, op, count);
    for (int acc = 0; acc < 2; acc++) {
        OpDesc bd = op_scalar(PHASE_BWD_DATA, op, count, s);
        bd.u.scalar.accumulate = acc;
        tu_fill_const(da, count, 0.25f);
        float *da0 = tu_dup(da, count);
        void *bb[] = {da, dy, a}, *bb0[] = {da0, NULL, NULL};
        run(&bd, bb);
        op_key(&bd, key);
        for (size_t i = 0; i < count; i++)
            ex[i] = rda[i] + (acc ? 0.25 : 0.0);
        assert_true(tu_close(key, da, ex, count, 1e-6, 1e-5));
        expect_spot_ok(&bd, bb, acc ? bb0 : NULL);
        free(da0);
    }
    if (count <= 4096) {
        OpDesc bd = op_scalar(PHASE_BWD_DATA, op, count, s);
        bd.u.scalar.accumulate = false;
        void *bb[] = {da, dy, a};
        run(&bd, bb);
        FwdObj o = {.fwd = &f, .bufs = fb, .nout = 1, .out = {0}, .r = {dy}, .n = {count}};
        assert_true(tu_grad_check(key, a, count, da, fwd_objective, &o, FD_SAMPLES, seed + 2,
                                  FD_EPS, FD_ATOL, FD_RTOL));
    }
    free(a), free(y), free(dy), free(da), free(ry), free(rda), free(ex);
}

static void test_binary_scalar(void **state)
{
    (void)state;
    static const float scalars[BIN_COUNT] = {0.75f, -1.5f, 2.5f, 3.0f}; /* add mul pow div */
    for (int op = 0; op < BIN_COUNT; op++) {
        binary_case((BinaryKind)op, 1000, 3400 + 10 * op);
        binary_case((BinaryKind)op, 70001, 3450 + 10 * op); /* OpenMP, ragged tail */
        scalar_case((BinaryKind)op, 1000, scalars[op], 3500 + 10 * op);
        scalar_case((BinaryKind)op, 70001, scalars[op], 3550 + 10 * op);
    }
    scalar_case(BIN_POW, 500, 0.5f, 3600); /* a square root, by the same kernel */
    scalar_case(BIN_POW, 500, -1.0f, 3610);
    /* costs: the conventions of kinds.c */
    OpDesc d = op_binary(PHASE_FWD, BIN_POW, 1000);
    assert_true(op_cost(&d).flops == 3000 && op_cost(&d).bytes == 12000);
    d = op_binary(PHASE_BWD_DATA, BIN_ADD, 1000); /* accumulates: da, db read and written */
    assert_true(op_cost(&d).flops == 2000 && op_cost(&d).bytes == 4 * 5000);
    d.u.binary.accumulate = false;
    assert_true(op_cost(&d).flops == 0 && op_cost(&d).bytes == 4 * 3000);
    d = op_binary(PHASE_BWD_DATA, BIN_DIV, 1000);
    d.u.binary.accumulate = false;
    assert_true(op_cost(&d).flops == 4000 && op_cost(&d).bytes == 4 * 5000);
    d = op_scalar(PHASE_FWD, BIN_MUL, 1000, 2.0f);
    assert_true(op_cost(&d).flops == 1000 && op_cost(&d).bytes == 8000);
    d = op_scalar(PHASE_BWD_DATA, BIN_POW, 1000, 2.0f);
    assert_true(op_cost(&d).flops == 6000 && op_cost(&d).bytes == 4 * 4000);
    OpBufInfo info[OP_MAX_BUFS];
    d = op_binary(PHASE_BWD_DATA, BIN_MUL, 10);
    assert_int_equal(op_buffer_info(&d, info), 5);
    assert_string_equal(info[1].name, "db");
    assert_int_equal(info[1].role, BUF_INOUT);
    assert_string_equal(info[4].name, "b");
    d = op_scalar(PHASE_BWD_DATA, BIN_MUL, 10, 2.0f);
    assert_int_equal(op_buffer_info(&d, info), 3);
    assert_string_equal(info[2].name, "a");
    d = op_act(PHASE_BWD_DATA, ACT_GELU, 10); /* GELU's backward reads x */
    assert_int_equal(op_buffer_info(&d, info), 3);
    assert_string_equal(info[2].name, "x");
    d = op_act(PHASE_FWD, ACT_GELU, 1000);
    assert_true(op_cost(&d).flops == 5000 && op_cost(&d).bytes == 8000);
    d = op_act(PHASE_BWD_DATA, ACT_GELU, 1000);
    assert_true(op_cost(&d).flops == 11000 && op_cost(&d).bytes == 12000);
}

/* ---------------------------------------------------------------------------------------
 * Keys are database keys: measurements are stored by them, so every key op_key prints
 * must stay byte-identical across refactorings. One descriptor of every kind, phase and
 * variant, with the key as spelled out when the table of kinds was introduced (the
 * transformer's kinds: when they were added).
 * ------------------------------------------------------------------------------------- */

static OpDesc kc_alpha(OpDesc d, float a)
{
    d.u.gemm.alpha = a;
    return d;
}

static OpDesc kc_bmm_alpha(OpDesc d, float a)
{
    d.u.bmm.alpha = a;
    return d;
}

static OpDesc kc_setacc(OpDesc d, bool acc)
{
    switch (d.kind) {
    case OP_CONV2D: d.u.conv.accumulate = acc; break;
    case OP_POOL2D: d.u.pool.accumulate = acc; break;
    case OP_BIAS: d.u.bias.accumulate = acc; break;
    case OP_BATCHNORM: d.u.bn.accumulate = acc; break;
    case OP_LRN: d.u.lrn.accumulate = acc; break;
    case OP_CHANNEL_COPY: d.u.chan.accumulate = acc; break;
    case OP_EMBEDDING: d.u.embed.accumulate = acc; break;
    case OP_LAYERNORM: d.u.ln.accumulate = acc; break;
    case OP_SOFTMAX: d.u.softmax.accumulate = acc; break;
    case OP_BINARY: d.u.binary.accumulate = acc; break;
    case OP_SCALAR: d.u.scalar.accumulate = acc; break;
    default: break;
    }
    return d;
}

static OpDesc kc_acc_off(OpDesc d) { return kc_setacc(d, false); }
static OpDesc kc_acc_on(OpDesc d) { return kc_setacc(d, true); }

static OpDesc kc_decay(OpDesc d, size_t n)
{
    op_update_set_decay(&d, n, 1e-4f);
    return d;
}

static OpDesc kc_batch0(OpDesc d)
{
    d.u.conv.n = 0;
    return d;
}

typedef struct {
    OpDesc d;
    const char *key;
} KeyCase;

static void test_keys_unchanged(void **state)
{
    (void)state;
    const KeyCase cases[] = {
        {op_gemm(PHASE_FWD, 60, 2000, 60483, false, false, 0.0f),
         "gemm m=60 n=2000 k=60483 ta=0 tb=0 beta=0"},
        {op_gemm(PHASE_BWD_DATA, 128, 4096, 1024, false, true, 0.0f),
         "gemm m=128 n=4096 k=1024 ta=0 tb=1 beta=0"},
        {op_gemm(PHASE_BWD_WEIGHTS, 1024, 4096, 128, true, false, 1.0f),
         "gemm m=1024 n=4096 k=128 ta=1 tb=0 beta=1"},
        {op_gemm(PHASE_FWD, 3, 4, 5, true, true, 0.5f),
         "gemm m=3 n=4 k=5 ta=1 tb=1 beta=0.5"},
        {kc_alpha(op_gemm(PHASE_FWD, 3, 4, 5, true, true, 0.5f), -0.75f),
         "gemm m=3 n=4 k=5 ta=1 tb=1 beta=0.5 alpha=-0.75"},
        {kc_alpha(op_gemm(PHASE_FWD, 7, 8, 9, false, false, 0.0f), 2.0f),
         "gemm m=7 n=8 k=9 ta=0 tb=0 beta=0 alpha=2"},
        {op_conv2d(PHASE_FWD, 128, 3, 227, 227, 64, 11, 11, 4, PAD_VALID, 1),
         "conv2d fwd n=128 c=3 h=227 w=227 k=64 r=11 s=11 sh=4 sw=4 p=0,0,0,0 g=1 acc=0"},
        {op_conv2d(PHASE_BWD_DATA, 2, 4, 8, 8, 6, 3, 3, 2, PAD_SAME, 2),
         "conv2d bwd_data n=2 c=4 h=8 w=8 k=6 r=3 s=3 sh=2 sw=2 p=0,0,1,1 g=2 acc=1"},
        {kc_acc_off(op_conv2d(PHASE_BWD_DATA, 2, 4, 8, 8, 6, 3, 3, 2, PAD_SAME, 2)),
         "conv2d bwd_data n=2 c=4 h=8 w=8 k=6 r=3 s=3 sh=2 sw=2 p=0,0,1,1 g=2 acc=0"},
        {op_conv2d(PHASE_BWD_WEIGHTS, 128, 3, 227, 227, 64, 11, 11, 4, PAD_VALID, 1),
         "conv2d bwd_weights n=128 c=3 h=227 w=227 k=64 r=11 s=11 sh=4 sw=4 p=0,0,0,0 g=1 acc=1"},
        {kc_acc_off(op_conv2d(PHASE_BWD_WEIGHTS, 32, 64, 56, 56, 64, 3, 3, 1, PAD_SAME, 1)),
         "conv2d bwd_weights n=32 c=64 h=56 w=56 k=64 r=3 s=3 sh=1 sw=1 p=1,1,1,1 g=1 acc=0"},
        {kc_acc_on(op_conv2d(PHASE_FWD, 1, 3, 9, 9, 4, 3, 3, 1, PAD_SAME, 1)),
         "conv2d fwd n=1 c=3 h=9 w=9 k=4 r=3 s=3 sh=1 sw=1 p=1,1,1,1 g=1 acc=0"},
        {op_conv2d_explicit(PHASE_BWD_DATA, 16, 1, 700, 161, 32, 5, 20, 2, 2, 3, 1, 1),
         "conv2d bwd_data n=16 c=1 h=700 w=161 k=32 r=5 s=20 sh=2 sw=2 p=3,1,3,1 g=1 acc=1"},
        {op_conv2d(PHASE_FWD, 1, 3, 12, 12, 4, 7, 7, 2, PAD_SAME, 1),
         "conv2d fwd n=1 c=3 h=12 w=12 k=4 r=7 s=7 sh=2 sw=2 p=2,2,3,3 g=1 acc=0"},
        {op_pool2d(PHASE_FWD, POOL_MAX, 128, 64, 112, 112, 3, 2, PAD_SAME),
         "pool2d fwd max n=128 c=64 h=112 w=112 r=3 s=3 sh=2 sw=2 p=0,0,1,1 acc=0"},
        {op_pool2d(PHASE_FWD, POOL_AVG, 2, 3, 7, 7, 3, 2, PAD_SAME),
         "pool2d fwd avg n=2 c=3 h=7 w=7 r=3 s=3 sh=2 sw=2 p=1,1,1,1 acc=0"},
        {op_pool2d(PHASE_BWD_DATA, POOL_MAX, 2, 3, 8, 8, 3, 2, PAD_SAME),
         "pool2d bwd_data max n=2 c=3 h=8 w=8 r=3 s=3 sh=2 sw=2 p=0,0,1,1 acc=1"},
        {kc_acc_off(op_pool2d(PHASE_BWD_DATA, POOL_AVG, 2, 1024, 7, 7, 7, 1, PAD_VALID)),
         "pool2d bwd_data avg n=2 c=1024 h=7 w=7 r=7 s=7 sh=1 sw=1 p=0,0,0,0 acc=0"},
        {op_pool2d_global(PHASE_FWD, POOL_MAX, 32, 100, 62, 1),
         "pool2d fwd max n=32 c=100 h=62 w=1 r=62 s=1 sh=1 sw=1 p=0,0,0,0 acc=0"},
        {op_pool2d_pads(PHASE_BWD_DATA, POOL_MAX, 1, 96, 55, 55, 3, 2, 0, 0, 1, 1),
         "pool2d bwd_data max n=1 c=96 h=55 w=55 r=3 s=3 sh=2 sw=2 p=0,0,1,1 acc=1"},
        {op_bias(PHASE_FWD, 128, 64, 3025),
         "bias fwd n=128 c=64 spatial=3025 acc=0"},
        {op_bias(PHASE_BWD_WEIGHTS, 128, 4096, 1),
         "bias bwd_weights n=128 c=4096 spatial=1 acc=1"},
        {kc_acc_off(op_bias(PHASE_BWD_WEIGHTS, 16, 64, 16)),
         "bias bwd_weights n=16 c=64 spatial=16 acc=0"},
        {op_act(PHASE_FWD, ACT_RELU, 12345),
         "act fwd relu count=12345"},
        {op_act(PHASE_FWD, ACT_SIGMOID, 1024),
         "act fwd sigmoid count=1024"},
        {op_act(PHASE_FWD, ACT_TANH, 1),
         "act fwd tanh count=1"},
        {op_act(PHASE_BWD_DATA, ACT_RELU, 4096),
         "act bwd_data relu count=4096"},
        {op_act(PHASE_BWD_DATA, ACT_SIGMOID, 7),
         "act bwd_data sigmoid count=7"},
        {op_act(PHASE_BWD_DATA, ACT_TANH, 65536),
         "act bwd_data tanh count=65536"},
        {op_act_in_place(PHASE_FWD, ACT_RELU, 12345),
         "act fwd relu count=12345 inplace=1"},
        {op_act_in_place(PHASE_FWD, ACT_SIGMOID, 100),
         "act fwd sigmoid count=100 inplace=1"},
        {op_act_in_place(PHASE_FWD, ACT_TANH, 100),
         "act fwd tanh count=100 inplace=1"},
        {op_act_in_place(PHASE_BWD_DATA, ACT_RELU, 100),
         "act bwd_data relu count=100 inplace=1"},
        {op_act_in_place(PHASE_BWD_DATA, ACT_SIGMOID, 100),
         "act bwd_data sigmoid count=100 inplace=1"},
        {op_act_in_place(PHASE_BWD_DATA, ACT_TANH, 3),
         "act bwd_data tanh count=3 inplace=1"},
        {op_softmax_xent(PHASE_FWD, 128, 1000),
         "softmax_xent fwd n=128 classes=1000"},
        {op_softmax_xent(PHASE_BWD_DATA, 1, 2),
         "softmax_xent bwd_data n=1 classes=2"},
        {op_sqerr(PHASE_FWD, 60, 60483, true),
         "sqerr fwd n=60 features=60483 mean=1"},
        {op_sqerr(PHASE_FWD, 4, 9, false),
         "sqerr fwd n=4 features=9 mean=0"},
        {op_sqerr(PHASE_BWD_DATA, 128, 1024, false),
         "sqerr bwd_data n=128 features=1024 mean=0"},
        {op_sqerr(PHASE_BWD_DATA, 4, 9, true),
         "sqerr bwd_data n=4 features=9 mean=1"},
        {op_lstm_cell(PHASE_FWD, 128, 1024, 1.0f),
         "lstm_cell fwd batch=128 hidden=1024"},
        {op_lstm_cell(PHASE_BWD_DATA, 16, 512, 1.0f),
         "lstm_cell bwd_data batch=16 hidden=512"},
        {op_sgd(61100840, 0.01f),
         "sgd count=61100840"},
        {kc_decay(op_sgd(1000, 0.1f), 1),
         "sgd count=1000 decay=1"},
        {op_rmsprop(8392704, 0.001f, 0.9f, 1e-7f),
         "rmsprop count=8392704"},
        {kc_decay(op_rmsprop(1000, 0.001f, 0.9f, 1e-7f), 999),
         "rmsprop count=1000 decay=999"},
        {op_momentum(25557032, 0.1f, 0.9f, false),
         "momentum count=25557032 nesterov=0"},
        {op_momentum(1000, 0.1f, 0.9f, true),
         "momentum count=1000 nesterov=1"},
        {kc_decay(op_momentum(25557032, 0.1f, 0.9f, true), 25000000),
         "momentum count=25557032 nesterov=1 decay=25000000"},
        {op_adam(1, 0.001f, 0.9f, 0.999f, 1e-7f),
         "adam count=1"},
        {kc_decay(op_adam(1000, 0.001f, 0.9f, 0.999f, 1e-7f), 1000),
         "adam count=1000 decay=1000"},
        {op_zero(PHASE_FWD, 5),
         "zero count=5"},
        {op_zero(PHASE_BWD_DATA, 4096),
         "zero count=4096"},
        {op_copy(PHASE_FWD, 1ull << 30),
         "copy count=1073741824"},
        {op_copy(PHASE_BWD_WEIGHTS, 77),
         "copy count=77"},
        {op_stream(STREAM_COPY, 20000000, 3.0f),
         "stream copy count=20000000"},
        {op_stream(STREAM_SCALE, 1, 3.0f),
         "stream scale count=1"},
        {op_stream(STREAM_ADD, 2, 3.0f),
         "stream add count=2"},
        {op_stream(STREAM_TRIAD, 3, 3.0f),
         "stream triad count=3"},
        {op_batchnorm(PHASE_FWD, 32, 256, 3136, 1e-3f, 0.99f, true),
         "batchnorm fwd n=32 c=256 spatial=3136 train=1 acc=0"},
        {op_batchnorm(PHASE_FWD, 32, 256, 3136, 1e-3f, 0.99f, false),
         "batchnorm fwd n=32 c=256 spatial=3136 train=0 acc=0"},
        {op_batchnorm(PHASE_BWD_WEIGHTS, 32, 2048, 1, 1e-5f, 0.9f, true),
         "batchnorm bwd_weights n=32 c=2048 spatial=1 train=1 acc=1"},
        {kc_acc_off(op_batchnorm(PHASE_BWD_WEIGHTS, 2, 3, 4, 1e-3f, 0.99f, true)),
         "batchnorm bwd_weights n=2 c=3 spatial=4 train=1 acc=0"},
        {op_batchnorm(PHASE_BWD_DATA, 128, 64, 12544, 1e-3f, 0.99f, true),
         "batchnorm bwd_data n=128 c=64 spatial=12544 train=1 acc=1"},
        {kc_acc_off(op_batchnorm(PHASE_BWD_DATA, 6, 5, 1, 1e-3f, 0.9f, true)),
         "batchnorm bwd_data n=6 c=5 spatial=1 train=1 acc=0"},
        {op_lrn(PHASE_FWD, 128, 96, 3025, 5, 1e-4f, 0.75f, 1.0f),
         "lrn fwd n=128 c=96 spatial=3025 size=5 acc=0"},
        {op_lrn(PHASE_BWD_DATA, 128, 256, 729, 5, 1e-4f, 0.75f, 2.0f),
         "lrn bwd_data n=128 c=256 spatial=729 size=5 acc=1"},
        {kc_acc_off(op_lrn(PHASE_BWD_DATA, 1, 1, 1, 1, 1.0f, 1.0f, 1.0f)),
         "lrn bwd_data n=1 c=1 spatial=1 size=1 acc=0"},
        {op_dropout(PHASE_FWD, 4096 * 128, 0.5f, 9u),
         "dropout fwd count=524288"},
        {op_dropout(PHASE_BWD_DATA, 7, 0.1f, 0u),
         "dropout bwd_data count=7"},
        {op_channel_copy(PHASE_FWD, 32, 256, 64, 192, 784),
         "channel_copy fwd n=32 c_dst=256 c_src=64 offset=192 spatial=784 acc=0"},
        {op_channel_copy(PHASE_BWD_DATA, 2, 7, 3, 2, 5),
         "channel_copy bwd_data n=2 c_dst=7 c_src=3 offset=2 spatial=5 acc=1"},
        {kc_acc_off(op_channel_copy(PHASE_BWD_DATA, 32, 256, 64, 192, 784)),
         "channel_copy bwd_data n=32 c_dst=256 c_src=64 offset=192 spatial=784 acc=0"},
        {op_axpby(PHASE_FWD, 25690112, 1.0f, 1.0f),
         "axpby count=25690112"},
        {op_axpby(PHASE_BWD_DATA, 3, -0.5f, 2.0f),
         "axpby count=3"},
        {op_embedding(PHASE_FWD, 64 * 400, 20000, 300),
         "embedding fwd n=25600 vocab=20000 dim=300 acc=0"},
        {op_embedding(PHASE_BWD_WEIGHTS, 20, 9, 4),
         "embedding bwd_weights n=20 vocab=9 dim=4 acc=1"},
        {kc_acc_off(op_embedding(PHASE_BWD_WEIGHTS, 64 * 400, 20000, 300)),
         "embedding bwd_weights n=25600 vocab=20000 dim=300 acc=0"},
        {op_kl_sparsity(PHASE_FWD, 10000, 25, 0.01f, 3.0f),
         "kl_sparsity fwd n=10000 units=25"},
        {op_kl_sparsity(PHASE_BWD_DATA, 1, 1, 0.5f, 0.0f),
         "kl_sparsity bwd_data n=1 units=1"},
        {op_shrink(PHASE_UPDATE, 1000, 0.1f),
         "shrink count=1000"},
        {op_shrink(PHASE_FWD, 100, 0.3f),
         "shrink count=100"},
        {op_norm1(PHASE_FWD, 123456789),
         "norm1 count=123456789"},
        {op_gru_cell(PHASE_FWD, 32, 2816, ACT_RELU),
         "gru_cell fwd relu batch=32 hidden=2816"},
        {op_gru_cell(PHASE_FWD, 16, 512, ACT_TANH),
         "gru_cell fwd tanh batch=16 hidden=512"},
        {op_gru_cell(PHASE_BWD_DATA, 32, 2816, ACT_RELU),
         "gru_cell bwd_data relu batch=32 hidden=2816"},
        {op_gru_cell(PHASE_BWD_DATA, 1, 1, ACT_TANH),
         "gru_cell bwd_data tanh batch=1 hidden=1"},
        {op_spmm(7680, 1500, 2560, 0.95),
         "spmm m=7680 n=1500 k=2560 nnz_row=128"},
        {op_spmm(1, 1, 1, 0.0),
         "spmm m=1 n=1 k=1 nnz_row=1"},
        {op_peak_fma(2, 1000),
         "peak_fma threads=2 fma=1152"},
        {op_peak_fma(1, 1L << 28),
         "peak_fma threads=1 fma=268435584"},
        {op_membw(MEMBW_READ, 2, 16000, 100),
         "membw read threads=2 bytes=16128 passes=100"},
        {op_membw(MEMBW_TRIAD, 1, 1u << 30, 1),
         "membw triad threads=1 bytes=1073741952 passes=1"},
        {op_membw(MEMBW_HANDOFF, 2, 1u << 20, 1),
         "membw handoff threads=2 bytes=1048704 passes=1"},
        {op_membw(MEMBW_CROSS, 2, 1u << 20, 1),
         "membw cross threads=2 bytes=1048704 passes=1"},
        {op_membw(MEMBW_SHARED, 2, 1u << 20, 1),
         "membw shared threads=2 bytes=1048704 passes=1"},
        {op_membw_retain(2, 4u << 20, 500),
         "membw retain threads=2 bytes=4194432 passes=1 idle_us=500"},
        {op_membw_retain(1, 192, MEMBW_IDLE_MAX_US),
         "membw retain threads=1 bytes=192 passes=1 idle_us=1000000"},
        {kc_batch0(op_conv2d(PHASE_FWD, 8, 3, 9, 9, 4, 3, 3, 1, PAD_SAME, 1)),
         "conv2d fwd n=0 c=3 h=9 w=9 k=4 r=3 s=3 sh=1 sw=1 p=1,1,1,1 g=1 acc=0"},
        {op_gemm_bias(PHASE_FWD, 64, 768, 3072, false, true),
         "gemm m=64 n=768 k=3072 ta=0 tb=1 beta=0 bias=1"},
        {kc_alpha(op_gemm_bias(PHASE_FWD, 3, 4, 5, true, false), 0.5f),
         "gemm m=3 n=4 k=5 ta=1 tb=0 beta=0 alpha=0.5 bias=1"},
        {op_act(PHASE_FWD, ACT_GELU, 4096),
         "act fwd gelu count=4096"},
        {op_act(PHASE_BWD_DATA, ACT_GELU, 3145728),
         "act bwd_data gelu count=3145728"},
        {op_bmm(PHASE_FWD, 96, 128, 128, 64, false, true, 0.0f),
         "bmm b=96 m=128 n=128 k=64 ta=0 tb=1 beta=0"},
        {op_bmm(PHASE_BWD_DATA, 96, 128, 64, 128, false, false, 1.0f),
         "bmm b=96 m=128 n=64 k=128 ta=0 tb=0 beta=1"},
        {op_bmm(PHASE_BWD_WEIGHTS, 96, 64, 128, 128, true, false, 0.0f),
         "bmm b=96 m=64 n=128 k=128 ta=1 tb=0 beta=0"},
        {kc_bmm_alpha(op_bmm(PHASE_FWD, 8, 16, 16, 32, false, true, 0.0f), 0.125f),
         "bmm b=8 m=16 n=16 k=32 ta=0 tb=1 beta=0 alpha=0.125"},
        {op_layernorm(PHASE_FWD, 4096, 768, 1e-5f),
         "layernorm fwd n=4096 h=768 acc=0"},
        {op_layernorm(PHASE_BWD_WEIGHTS, 4096, 768, 1e-5f),
         "layernorm bwd_weights n=4096 h=768 acc=1"},
        {op_layernorm(PHASE_BWD_DATA, 4096, 768, 1e-5f),
         "layernorm bwd_data n=4096 h=768 acc=1"},
        {kc_acc_off(op_layernorm(PHASE_BWD_DATA, 1, 1, 1e-12f)),
         "layernorm bwd_data n=1 h=1 acc=0"},
        {op_softmax(PHASE_FWD, 12288, 128),
         "softmax fwd n=12288 h=128 acc=0"},
        {op_softmax(PHASE_BWD_DATA, 12288, 128),
         "softmax bwd_data n=12288 h=128 acc=1"},
        {kc_acc_off(op_softmax(PHASE_BWD_DATA, 2, 3)),
         "softmax bwd_data n=2 h=3 acc=0"},
        {op_binary(PHASE_FWD, BIN_ADD, 3145728),
         "binary fwd add count=3145728 acc=0"},
        {op_binary(PHASE_FWD, BIN_MUL, 10),
         "binary fwd mul count=10 acc=0"},
        {op_binary(PHASE_FWD, BIN_POW, 1),
         "binary fwd pow count=1 acc=0"},
        {op_binary(PHASE_FWD, BIN_DIV, 65536),
         "binary fwd div count=65536 acc=0"},
        {op_binary(PHASE_BWD_DATA, BIN_ADD, 3145728),
         "binary bwd_data add count=3145728 acc=1"},
        {op_binary(PHASE_BWD_DATA, BIN_POW, 1000),
         "binary bwd_data pow count=1000 acc=1"},
        {kc_acc_off(op_binary(PHASE_BWD_DATA, BIN_MUL, 77)),
         "binary bwd_data mul count=77 acc=0"},
        {op_scalar(PHASE_FWD, BIN_ADD, 1000, 1.0f),
         "scalar fwd add count=1000 acc=0"},
        {op_scalar(PHASE_FWD, BIN_MUL, 1000, 0.125f),
         "scalar fwd mul count=1000 acc=0"},
        {op_scalar(PHASE_FWD, BIN_POW, 1000, 2.0f),
         "scalar fwd pow count=1000 acc=0"},
        {op_scalar(PHASE_FWD, BIN_DIV, 1000, 8.0f),
         "scalar fwd div count=1000 acc=0"},
        {op_scalar(PHASE_BWD_DATA, BIN_DIV, 4096, 8.0f),
         "scalar bwd_data div count=4096 acc=1"},
        {kc_acc_off(op_scalar(PHASE_BWD_DATA, BIN_POW, 5, 0.5f)),
         "scalar bwd_data pow count=5 acc=0"},
        {op_softmax_causal(PHASE_FWD, 12 * 1024, 1024),
         "softmax fwd n=12288 h=1024 acc=0 causal=1"},
        {op_bmm_strided(PHASE_FWD, 96, 1024, 1024, 64, false, true, 0.125f, 0.0f, (int[3]){18432, 18432, 0},
                        (size_t[3]){192, 192, 0}),
         "bmm b=96 m=1024 n=1024 k=64 ta=0 tb=1 beta=0 alpha=0.125 lda=18432 ldb=18432 ldc=0 sa=192 sb=192 sc=0"},
        {op_sumsq(PHASE_FWD, 124439808),
         "sumsq count=124439808"},
        {op_adamw(124439808, 6e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, 124318464),
         "adamw count=124439808 decay=124318464"},
        {op_transpose(PHASE_FWD, 8 * 768, 196),
         "transpose fwd rows=6144 cols=196"},
        {op_allreduce(PHASE_BWD_DATA, 1024 * 768, 2),
         "allreduce bwd_data count=786432 ranks=2"},
    };
    bool seen[OP_KIND_COUNT] = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char key[OP_KEY_MAX], again[OP_KEY_MAX];
        op_key(&cases[i].d, key);
        if (strcmp(key, cases[i].key) != 0) {
            fprintf(stderr, "  key changed: '%s', was '%s'\n", key, cases[i].key);
            fail();
        }
        seen[cases[i].d.kind] = true;
        OpDesc p;
        const bool normalised = strstr(key, " n=0 ") != NULL;
        if (op_key_parse(key, &p) == normalised) {
            fprintf(stderr, "  key '%s' %s\n", key, normalised ? "parses" : "does not parse");
            fail();
        }
        if (!normalised) {
            op_key(&p, again);
            assert_string_equal(again, key);
        }
    }
    for (int k = 0; k < OP_KIND_COUNT; k++) {
        if (!seen[k]) {
            fprintf(stderr, "  no key case of kind %s\n", op_kind_name((OpKind)k));
            fail();
        }
        OpKind back; /* every kind has its own name in the table */
        assert_true(op_kind_from_name(op_kind_name((OpKind)k), &back) && back == (OpKind)k);
    }
}

/* ---------------------------------------------------------------------------------------
 * Spot check: passes after a correct run, fails on one corrupted output element
 * ------------------------------------------------------------------------------------- */

static void spot_case(const OpDesc *d, uint64_t seed)
{
    OpBufInfo info[OP_MAX_BUFS];
    const int nb = op_buffer_info(d, info);
    void *bufs[OP_MAX_BUFS] = {0}, *before[OP_MAX_BUFS] = {0};
    size_t n[OP_MAX_BUFS];
    for (int i = 0; i < nb; i++) {
        n[i] = info[i].bytes / 4;
        float *f = tu_floats(n[i]);
        if (info[i].type == BUF_INT32)
            tu_fill_labels((int32_t *)f, n[i],
                           d->kind == OP_EMBEDDING ? d->u.embed.vocab
                           : d->kind == OP_DROPOUT ? 1000 : d->u.xent.classes, seed + i);
        else if ((d->kind == OP_RMSPROP && i == 1) || (d->kind == OP_ADAM && i == 2))
            tu_fill_uniform(f, n[i], 0, 1, seed + i); /* accumulators of squares >= 0 */
        else if (d->kind == OP_KL_SPARSITY) /* activations and their means in (0, 1) */
            tu_fill_uniform(f, n[i], 0.05f, 0.95f, seed + i);
        else if (d->kind == OP_BATCHNORM && !d->u.bn.training && i == 5)
            tu_fill_uniform(f, n[i], 0.5f, 2.0f, seed + i); /* running variance > 0 */
        else if ((d->kind == OP_BINARY && d->u.binary.op == BIN_POW && i == (d->phase == PHASE_FWD ? 1 : 3)) ||
                 (d->kind == OP_SCALAR && d->u.scalar.op == BIN_POW && i == (d->phase == PHASE_FWD ? 1 : 2)))
            tu_fill_uniform(f, n[i], 0.5f, 2.0f, seed + i); /* pow's base > 0 */
        else if (d->kind == OP_BINARY && d->u.binary.op == BIN_DIV && i == (d->phase == PHASE_FWD ? 2 : 4))
            tu_fill_margin(f, n[i], 0.5f, 2.0f, seed + i); /* a divisor away from 0 */
        else
            tu_fill_uniform(f, n[i], -1, 1, seed + i);
        bufs[i] = f;
    }
    if (d->kind == OP_POOL2D && d->phase == PHASE_BWD_DATA) { /* y must come from x */
        OpDesc f = with_phase(*d, PHASE_FWD, false);
        void *fb[] = {bufs[3], bufs[2]};
        run(&f, fb);
    }
    if (d->kind == OP_LRN && d->phase == PHASE_BWD_DATA) { /* y, scale > 0 come from x */
        OpDesc f = with_phase(*d, PHASE_FWD, false);
        void *fb[] = {bufs[3], bufs[4], bufs[2]};
        run(&f, fb);
    }
    for (int i = 0; i < nb; i++)
        if (info[i].role == BUF_INOUT)
            before[i] = tu_dup(bufs[i], n[i]);
    run(d, bufs);
    char key[OP_KEY_MAX];
    op_key(d, key);
    double err = -1;
    if (!op_spot_check(d, bufs, before, 30, 5, &err)) {
        fprintf(stderr, "  spot check of a correct run failed: '%s' (err %.3g)\n", key, err);
        fail();
    }
    /* corrupt one element of the first written buffer, where the check always looks
     * (index 0), and an interior one with an exhaustive check */
    int o = 0;
    while (info[o].role == BUF_IN)
        o++;
    float *out = bufs[o];
    const float keep = out[0];
    out[0] = keep + 0.5f + fabsf(keep);
    if (op_spot_check(d, bufs, before, 30, 5, &err)) {
        fprintf(stderr, "  corrupted first element not detected: '%s'\n", key);
        fail();
    }
    assert_true(err > 1.0);
    out[0] = keep;
    if (n[o] > 2 && n[o] < 100000) {
        const size_t mid = n[o] / 2 + 1;
        out[mid] += 0.5f + fabsf(out[mid]);
        if (op_spot_check(d, bufs, before, (int)n[o], 5, &err)) {
            fprintf(stderr, "  corrupted interior element not detected: '%s'\n", key);
            fail();
        }
    }
    for (int i = 0; i < nb; i++)
        free(bufs[i]), free(before[i]);
}

/* ALLREDUCE in a group of one (a process without MPI): y is x, out of place and in place;
 * a larger group's sum is checked by tests/mpi/equivalence.c */
static void test_allreduce_group_of_one(void **state)
{
    enum { N = 1000 };
    float x[N], y[N], z[N];
    for (int i = 0; i < N; i++)
        x[i] = z[i] = (float)i * 0.25f - 7.0f;
    OpDesc d = op_allreduce(PHASE_FWD, N, 1);
    run(&d, (void *[]){y, x});
    assert_memory_equal(y, x, sizeof x);
    run(&d, (void *[]){z, z});
    assert_memory_equal(z, x, sizeof x);
    OpCost c = op_cost(&d);
    assert_true(c.flops == 0 && c.bytes == 8.0 * N);
    assert_true(op_cost(&(OpDesc){.kind = OP_ALLREDUCE, .phase = PHASE_FWD, .u.allreduce = {N, 4}}).flops == 3.0 * N);
    OpDesc bad;
    assert_false(op_key_parse("allreduce fwd count=10 ranks=0", &bad));
    assert_false(op_key_parse("allreduce bwd_weights count=10 ranks=2", &bad));
}

/* The vocabulary-parallel pair in a group of one (rank 0's block, what a calibration
 * times): the loss over labels the block holds is the plain loss; a label of
 * another block is counted but gets no onehot; the table's block looks up zeros for the
 * ids it does not hold and adds nothing for them. The group's sums are tests/mpi's. */
static void test_vocabulary_parallel_group_of_one(void **state)
{
    enum { N = 4, K = 5, T = 9, V = 6, D = 3 };
    float logits[N * K], p0[N * K], p1[N * K], g0[N * K], g1[N * K], l0 = 0, l1 = 0;
    for (int i = 0; i < N * K; i++)
        logits[i] = 0.3f * (float)((i * 7) % 11) - 1.0f;
    int32_t local[N] = {0, 4, XENT_IGNORE, 2}, mixed[N] = {0, 7, XENT_IGNORE, 2};
    OpDesc f = op_softmax_xent(PHASE_FWD, N, K), b = op_softmax_xent(PHASE_BWD_DATA, N, K);
    OpDesc pf = op_softmax_xent_parallel(PHASE_FWD, N, K, 2, T), pb = op_softmax_xent_parallel(PHASE_BWD_DATA, N, K, 2, T);
    assert_true(op_workspace_bytes(&pf) == 3 * N * sizeof(float) && op_workspace_bytes(&pb) == 0);
    /* only the forward sums over the group: never timed by one rank alone */
    assert_true(op_communicates(&pf) && !op_communicates(&pb) && !op_communicates(&f));
    assert_true(op_communicates(&(OpDesc){.kind = OP_ALLREDUCE, .phase = PHASE_FWD, .u.allreduce = {8, 2}}));
    run(&f, (void *[]){&l0, p0, logits, local});
    run(&b, (void *[]){g0, p0, local});
    run(&pf, (void *[]){&l1, p1, logits, local});
    run(&pb, (void *[]){g1, p1, local});
    /* the row sums cross the group as floats: equal to a float's rounding */
    assert_float_equal(l1, l0, 1e-6 * fabs(l0));
    for (int i = 0; i < N * K; i++) {
        assert_float_equal(p1[i], p0[i], 1e-6 * p0[i]);
        assert_float_equal(g1[i], g0[i], 1e-6 * fabs(g0[i]) + 1e-9);
    }
    run(&pb, (void *[]){g1, p1, mixed}); /* row 1's label 7 is the other block's */
    for (int j = 0; j < K; j++)
        assert_float_equal(g1[K + j], p1[K + j] / 3.0f, 1e-7);
    char key[OP_KEY_MAX];
    op_key(&pf, key);
    assert_string_equal(key, "softmax_xent fwd n=4 classes=5 parts=2 total=9");
    OpCost c0 = op_cost(&f), c1 = op_cost(&pf);
    assert_true(c0.flops == c1.flops && c0.bytes == c1.bytes);
    OpDesc bad;
    assert_false(op_key_parse("softmax_xent fwd n=4 classes=5 parts=2 total=11", &bad)); /* more than 2 blocks */
    assert_false(op_key_parse("softmax_xent fwd n=4 classes=5 parts=2 total=5", &bad));  /* block 2 empty */
    assert_false(op_key_parse("softmax_xent fwd n=4 classes=5 parts=1 total=5", &bad));

    float W[V * D], y[N * D], dW[V * D];
    for (int i = 0; i < V * D; i++)
        W[i] = (float)i + 1.0f;
    int32_t ids[N] = {1, 6, 5, 11}; /* 6 and 11: rows of the next block */
    OpDesc e = op_embedding_part(PHASE_FWD, N, V, D), eb = op_embedding_part(PHASE_BWD_WEIGHTS, N, V, D);
    eb.u.embed.accumulate = false;
    run(&e, (void *[]){y, ids, W});
    for (int i = 0; i < N; i++)
        for (int j = 0; j < D; j++)
            assert_true(y[i * D + j] == (ids[i] < V ? W[ids[i] * D + j] : 0.0f));
    float dy[N * D];
    for (int i = 0; i < N * D; i++)
        dy[i] = 1.0f;
    run(&eb, (void *[]){dW, dy, ids});
    for (int r = 0; r < V; r++)
        for (int j = 0; j < D; j++)
            assert_true(dW[r * D + j] == (r == 1 || r == 5 ? 1.0f : 0.0f));
    op_key(&e, key);
    assert_string_equal(key, "embedding fwd n=4 vocab=6 dim=3 acc=0 part=1");
    OpDesc back;
    assert_true(op_key_parse(key, &back) && back.u.embed.part);
}

/* TRANSPOSE: y (cols, rows) = x^T, and the BWD_DATA transpose back restores x */
static void test_transpose(void **state)
{
    const int R = 37, C = 53;
    float *x = malloc(sizeof(float) * R * C), *y = malloc(sizeof(float) * R * C), *z = malloc(sizeof(float) * R * C);
    for (int i = 0; i < R * C; i++)
        x[i] = (float)i * 0.5f - 3.0f;
    OpDesc f = op_transpose(PHASE_FWD, R, C), b = op_transpose(PHASE_BWD_DATA, C, R);
    run(&f, (void *[]){y, x});
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            assert_true(y[j * R + i] == x[i * C + j]);
    run(&b, (void *[]){z, y});
    assert_memory_equal(z, x, sizeof(float) * R * C);
    OpCost c = op_cost(&f);
    assert_true(c.flops == 0 && c.bytes == 8.0 * R * C);
    free(x), free(y), free(z);
}

static void test_spot_check(void **state)
{
    (void)state;
    OpDesc cd = op_conv2d(PHASE_BWD_DATA, 2, 4, 8, 8, 6, 3, 3, 2, PAD_SAME, 2);
    OpDesc ga = op_gemm(PHASE_FWD, 9, 7, 5, true, false, 0.5f);
    ga.u.gemm.alpha = 2.0f;
    /* decayed updates: a prefix, an element that crosses it (spot_case corrupts index 0
     * and an interior element, both in the prefix here) */
    OpDesc dsgd = op_sgd(1000, 0.1f), drms = op_rmsprop(1000, 0.01f, 0.9f, 1e-7f);
    OpDesc dmom = op_momentum(1000, 0.1f, 0.9f, true);
    OpDesc dadam = op_adam(1000, 0.01f, 0.9f, 0.999f, 1e-7f);
    op_update_set_decay(&dsgd, 600, 0.5f);
    op_update_set_decay(&drms, 600, 0.5f);
    op_update_set_decay(&dmom, 600, 0.5f);
    op_update_set_decay(&dadam, 600, 0.5f);
    dadam.u.update.step = 3;
    OpDesc gbb = op_gemm_bias(PHASE_FWD, 9, 7, 5, true, false); /* with beta: C read too */
    gbb.u.gemm.beta = 0.5f;
    OpDesc bmb = op_bmm(PHASE_FWD, 2, 7, 3, 5, true, false, 0.5f);
    bmb.u.bmm.alpha = 2.0f;
    const OpDesc all[] = {
        op_gemm(PHASE_FWD, 13, 11, 40, false, true, 0.0f), ga,
        op_conv2d(PHASE_FWD, 2, 4, 8, 8, 6, 3, 3, 2, PAD_SAME, 2), cd,
        op_conv2d(PHASE_BWD_WEIGHTS, 2, 3, 7, 6, 4, 3, 2, 1, PAD_VALID, 1),
        op_conv2d(PHASE_FWD, 2, 4, 5, 5, 4, 1, 1, 1, PAD_SAME, 1),
        op_pool2d(PHASE_FWD, POOL_MAX, 2, 3, 8, 8, 3, 2, PAD_SAME),
        op_pool2d(PHASE_BWD_DATA, POOL_MAX, 2, 3, 8, 8, 3, 2, PAD_SAME),
        op_pool2d(PHASE_FWD, POOL_AVG, 2, 3, 7, 7, 3, 2, PAD_SAME),
        op_pool2d(PHASE_BWD_DATA, POOL_AVG, 2, 3, 7, 7, 3, 2, PAD_SAME),
        op_bias(PHASE_FWD, 2, 5, 9), op_bias(PHASE_BWD_WEIGHTS, 2, 5, 9),
        op_act(PHASE_FWD, ACT_RELU, 100), op_act(PHASE_FWD, ACT_SIGMOID, 100),
        op_act(PHASE_FWD, ACT_TANH, 100), op_act(PHASE_BWD_DATA, ACT_RELU, 100),
        op_act(PHASE_BWD_DATA, ACT_SIGMOID, 100), op_act(PHASE_BWD_DATA, ACT_TANH, 100),
        op_act_in_place(PHASE_FWD, ACT_RELU, 100), op_act_in_place(PHASE_BWD_DATA, ACT_RELU, 100),
        op_act_in_place(PHASE_FWD, ACT_SIGMOID, 100), op_act_in_place(PHASE_BWD_DATA, ACT_TANH, 100),
        op_softmax_xent(PHASE_FWD, 6, 10), op_softmax_xent(PHASE_BWD_DATA, 6, 10),
        op_sqerr(PHASE_FWD, 4, 9, true), op_sqerr(PHASE_FWD, 4, 9, false),
        op_sqerr(PHASE_BWD_DATA, 4, 9, true), op_sqerr(PHASE_BWD_DATA, 4, 9, false),
        op_lstm_cell(PHASE_FWD, 3, 7, 1.0f), op_lstm_cell(PHASE_BWD_DATA, 3, 7, 1.0f),
        op_sgd(1000, 0.1f), op_rmsprop(1000, 0.01f, 0.9f, 1e-7f),
        op_zero(PHASE_FWD, 100), op_copy(PHASE_FWD, 100),
        op_stream(STREAM_COPY, 100, 3.0f), op_stream(STREAM_SCALE, 100, 3.0f),
        op_stream(STREAM_ADD, 100, 3.0f), op_stream(STREAM_TRIAD, 100, 3.0f),
        op_act(PHASE_FWD, ACT_TANH, 200000), /* only first/last + samples checked */
        op_batchnorm(PHASE_FWD, 3, 4, 5, 1e-3f, 0.9f, true),
        op_batchnorm(PHASE_FWD, 3, 4, 5, 1e-3f, 0.9f, false),
        op_batchnorm(PHASE_BWD_WEIGHTS, 3, 4, 5, 1e-3f, 0.9f, true),
        op_batchnorm(PHASE_BWD_DATA, 3, 4, 5, 1e-3f, 0.9f, true),
        op_batchnorm(PHASE_FWD, 6, 5, 1, 1e-3f, 0.9f, true),
        op_lrn(PHASE_FWD, 2, 7, 9, 5, 0.5f, 0.75f, 2.0f),
        op_lrn(PHASE_BWD_DATA, 2, 7, 9, 5, 0.5f, 0.75f, 2.0f),
        op_dropout(PHASE_FWD, 300, 0.4f, 5u), op_dropout(PHASE_BWD_DATA, 300, 0.4f, 5u),
        op_channel_copy(PHASE_FWD, 2, 7, 3, 2, 5), op_channel_copy(PHASE_FWD, 2, 7, 3, 0, 5),
        op_channel_copy(PHASE_BWD_DATA, 2, 7, 3, 2, 5),
        op_axpby(PHASE_FWD, 100, 0.5f, -2.0f),
        op_transpose(PHASE_FWD, 6, 35), op_transpose(PHASE_BWD_DATA, 35, 6),
        op_allreduce(PHASE_FWD, 300, 1),
        op_embedding(PHASE_FWD, 20, 9, 4), op_embedding(PHASE_BWD_WEIGHTS, 20, 9, 4),
        op_kl_sparsity(PHASE_FWD, 8, 6, 0.1f, 3.0f),
        op_kl_sparsity(PHASE_BWD_DATA, 8, 6, 0.1f, 3.0f),
        op_shrink(PHASE_FWD, 100, 0.3f), op_norm1(PHASE_FWD, 100),
        op_momentum(1000, 0.1f, 0.9f, false), op_momentum(1000, 0.1f, 0.9f, true),
        op_adam(1000, 0.01f, 0.9f, 0.999f, 1e-7f), dsgd, drms, dmom, dadam,
        op_gemm_bias(PHASE_FWD, 13, 11, 40, false, true), gbb,
        op_bmm(PHASE_FWD, 3, 5, 4, 6, false, true, 0.0f), bmb,
        op_act(PHASE_FWD, ACT_GELU, 300), op_act(PHASE_BWD_DATA, ACT_GELU, 300),
        op_layernorm(PHASE_FWD, 6, 20, 1e-5f), op_layernorm(PHASE_BWD_WEIGHTS, 6, 20, 1e-5f),
        op_layernorm(PHASE_BWD_DATA, 6, 20, 1e-5f),
        op_softmax(PHASE_FWD, 6, 20), op_softmax(PHASE_BWD_DATA, 6, 20),
        op_binary(PHASE_FWD, BIN_ADD, 100), op_binary(PHASE_FWD, BIN_MUL, 100),
        op_binary(PHASE_FWD, BIN_POW, 100), op_binary(PHASE_FWD, BIN_DIV, 100),
        op_binary(PHASE_BWD_DATA, BIN_ADD, 100), op_binary(PHASE_BWD_DATA, BIN_MUL, 100),
        op_binary(PHASE_BWD_DATA, BIN_POW, 100), op_binary(PHASE_BWD_DATA, BIN_DIV, 100),
        op_scalar(PHASE_FWD, BIN_ADD, 100, 0.5f), op_scalar(PHASE_FWD, BIN_MUL, 100, -2.0f),
        op_scalar(PHASE_FWD, BIN_POW, 100, 1.5f), op_scalar(PHASE_FWD, BIN_DIV, 100, 3.0f),
        op_scalar(PHASE_BWD_DATA, BIN_ADD, 100, 0.5f), op_scalar(PHASE_BWD_DATA, BIN_MUL, 100, -2.0f),
        op_scalar(PHASE_BWD_DATA, BIN_POW, 100, 1.5f), op_scalar(PHASE_BWD_DATA, BIN_DIV, 100, 3.0f),
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        spot_case(&all[i], 1400 + 10 * i);
}

/* ---------------------------------------------------------------------------------------
 * The vectorisable math helpers against double (the accuracy vecmath.h promises)
 * ------------------------------------------------------------------------------------- */

static void test_vecmath_accuracy(void **state)
{
    (void)state;
    const double ulp = 5.9604644775390625e-8; /* 2^-24 */
    double es = 0, ee = 0, eg = 0, et = 0;
    for (uint32_t u = 0x00800000u; u < 0x7f000000u; u += 4099) { /* normal floats */
        const float a = vm_bits_to_float(u);
        es = fmax(es, fabs(vm_sqrt(a) - sqrt((double)a)) / sqrt((double)a));
    }
    for (double x = -87.0; x <= 88.0; x += 1.37e-3) {
        const float f = (float)x;
        ee = fmax(ee, fabs(vm_exp(f) - exp((double)f)) / exp((double)f));
    }
    for (double x = -30.0; x <= 30.0; x += 3.1e-4) {
        const float f = (float)x;
        const double s = 1.0 / (1.0 + exp(-(double)f)), t = tanh((double)f);
        eg = fmax(eg, fabs(vm_sigmoid(f) - s) / s);
        if (f != 0.0f)
            et = fmax(et, fabs(vm_tanh(f) - t) / fabs(t));
    }
    for (double x = 1e-30; x < 1.0; x *= 1.01) { /* tanh near 0 keeps relative accuracy */
        const float f = (float)x;
        et = fmax(et, fabs(vm_tanh(f) - tanh((double)f)) / tanh((double)f));
        et = fmax(et, fabs(vm_tanh(-f) + tanh((double)f)) / tanh((double)f));
    }
    /* log: error relative to max(|log x|, 1) over normal x from 1e-37 to 1e38, and plain
     * relative error on [0.5, 2), where log x is small and must keep its digits */
    double el = 0;
    for (double x = 1e-37; x < 1e38; x *= 1.0007) {
        const float f = (float)x;
        const double r = log((double)f);
        el = fmax(el, fabs(vm_log(f) - r) / fmax(fabs(r), 1.0));
    }
    for (double x = 0.5; x < 2.0; x += 1.1e-5) {
        const float f = (float)x;
        const double r = log((double)f);
        if (r != 0)
            el = fmax(el, fabs(vm_log(f) - r) / fabs(r));
    }
    /* the normal CDF and density (GELU), relative in both tails down to 1e-38 */
    double ec = 0, ep = 0;
    for (double x = -13.0; x <= 9.0; x += 1.3e-4) {
        const float f = (float)x;
        const double c = 0.5 * erfc(-(double)f / sqrt(2.0));
        const double pd = exp(-0.5 * (double)f * f) / sqrt(2.0 * M_PI);
        ec = fmax(ec, fabs(vm_normal_cdf(f) - c) / c);
        ep = fmax(ep, fabs(vm_normal_pdf(f) - pd) / pd);
    }
    if (ec > 10 * ulp || ep > 5 * ulp)
        fprintf(stderr, "  vecmath errors in ulp: normal cdf %.2f pdf %.2f\n", ec / ulp, ep / ulp);
    assert_true(ec <= 10 * ulp && ep <= 5 * ulp);
    assert_true(vm_normal_cdf(0.0f) == 0.5f && vm_normal_cdf(-0.0f) == 0.5f);
    assert_true(vm_normal_cdf(40.0f) == 1.0f && vm_normal_cdf(-40.0f) >= 0.0f);
    if (es > 4 * ulp || ee > 2 * ulp || eg > 3 * ulp || et > 3 * ulp || el > 2 * ulp)
        fprintf(stderr, "  vecmath errors in ulp: sqrt %.2f exp %.2f sigmoid %.2f tanh %.2f log %.2f\n",
                es / ulp, ee / ulp, eg / ulp, et / ulp, el / ulp);
    assert_true(es <= 4 * ulp && ee <= 2 * ulp && eg <= 3 * ulp && et <= 3 * ulp && el <= 2 * ulp);
    assert_true(vm_log(1.0f) == 0.0f);
    /* the ends: no inf or NaN where the kernels could meet them */
    assert_true(vm_sqrt(0.0f) == 0.0f);
    assert_true(isfinite(vm_exp(1000.0f)) && vm_exp(-1000.0f) > 0.0f);
    assert_true(vm_sigmoid(-1000.0f) >= 0.0f && vm_sigmoid(-1000.0f) < 1e-37f);
    assert_true(vm_sigmoid(1000.0f) == 1.0f);
    assert_true(vm_tanh(1000.0f) == 1.0f && vm_tanh(-1000.0f) == -1.0f && vm_tanh(0.0f) == 0.0f);
}

/* ---------------------------------------------------------------------------------------
 * Threads, library facts, programmer errors
 * ------------------------------------------------------------------------------------- */

/* The VmFlags of the mapping of this process that holds `addr` (/proc/self/smaps), into
 * flags; false where none does. */
static bool vma_flags(const void *addr, char *flags, size_t len)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return false;
    char line[512];
    bool inside = false, found = false;
    const uintptr_t a = (uintptr_t)addr;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = a >= lo && a < hi;
        else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            size_t n = strlen(line + 8);
            n = n < len ? n : len - 1;
            memcpy(flags, line + 8, n);
            flags[n] = '\0';
            found = true;
            break;
        }
    }
    fclose(f);
    return found;
}

/* A kernel buffer's huge-page advice ends with it: freed into the heap (where every buffer
 * goes once the mmap threshold is raised, as under mpirun), its range must not stay
 * advised, or the heap's later small objects fault whole 2 MiB pages. In a child process:
 * the threshold stays raised for good. Skipped where the kernel keeps no huge-page advice. */
static void test_buffer_free_takes_back_huge_page_advice(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        mallopt(M_MMAP_THRESHOLD, 1 << 30);
        mallopt(M_TRIM_THRESHOLD, 1 << 30);
        const size_t bytes = 8u << 20;
        void *keep = malloc(64); /* the heap's top stays above the buffer once it is freed */
        char *p = ops_buffer_alloc(bytes);
        void *above = malloc(64);
        char flags[256];
        if (!p || !keep || !above || !vma_flags(p + bytes / 2, flags, sizeof flags))
            _exit(3);
        if (!strstr(flags, " hg"))
            _exit(2); /* no THP advice kept by this kernel: nothing to take back */
        ops_buffer_free(p, bytes);
        if (!vma_flags(p + bytes / 2, flags, sizeof flags))
            _exit(4); /* the heap gave the range back: no advice left either */
        _exit(strstr(flags, " hg") ? 1 : strstr(flags, " nh") ? 0 : 5);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    const int code = WEXITSTATUS(status);
    if (code == 2 || code == 4)
        skip();
    assert_int_equal(code, 0);
}

static void test_threads_and_blas(void **state)
{
    (void)state;
    const int t0 = ops_get_threads();
    assert_true(t0 >= 1);
    assert_true(strlen(ops_blas_core()) > 0);
    assert_true(strlen(ops_blas_config()) > 0);
    /* results do not depend on the thread count beyond rounding */
    const OpDesc f = op_conv2d(PHASE_FWD, 2, 16, 24, 24, 8, 5, 5, 1, PAD_SAME, 1);
    const ConvDesc *v = &f.u.conv;
    const size_t nx = (size_t)v->n * v->c * v->h * v->w, ny = (size_t)v->n * v->k * 576;
    const size_t nw = (size_t)v->k * v->c * 25;
    float *x = tu_floats(nx), *w = tu_floats(nw), *y1 = tu_floats(ny), *y2 = tu_floats(ny);
    float *dx1 = tu_floats(nx), *dx2 = tu_floats(nx);
    tu_fill_uniform(x, nx, -1, 1, 1500);
    tu_fill_uniform(w, nw, -1, 1, 1501);
    OpDesc b = with_phase(f, PHASE_BWD_DATA, false);
    ops_set_threads(1);
    assert_int_equal(ops_get_threads(), 1);
    void *f1[] = {y1, x, w}, *b1[] = {dx1, y1, w};
    run(&f, f1);
    run(&b, b1);
    ops_set_threads(2);
    assert_int_equal(ops_get_threads(), 2);
    void *f2[] = {y2, x, w}, *b2[] = {dx2, y1, w};
    run(&f, f2);
    run(&b, b2);
    /* OpenBLAS blocks differently per thread count, so sums of 400 products (about 100
     * in sum|terms|) may differ in the last bits: an absolute tolerance of that scale */
    assert_true(tu_close_f("conv fwd 1 vs 2 threads", y2, y1, ny, 5e-5, 1e-5));
    assert_true(tu_close_f("conv bwd_data 1 vs 2 threads", dx2, dx1, nx, 5e-5, 1e-5));
    ops_set_threads(t0);
    free(x), free(w), free(y1), free(y2), free(dx1), free(dx2);
}

/* Runs fn in a child and expects it to abort (an always-on assert). */
static void expect_abort(void (*fn)(void), const char *what)
{
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGABRT, SIG_DFL);
        if (!freopen("/dev/null", "w", stderr))
            _exit(3);
        fn();
        _exit(0); /* returned: the assert did not fire */
    }
    int status = 0;
    assert_true(waitpid(pid, &status, 0) == pid);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT)) {
        fprintf(stderr, "  expected an abort: %s\n", what);
        fail();
    }
}

static void run_pool_bwd_weights(void)
{
    OpDesc d = op_pool2d(PHASE_FWD, POOL_MAX, 1, 1, 4, 4, 2, 2, PAD_VALID);
    d.phase = PHASE_BWD_WEIGHTS;
    float a[16], b[16];
    void *bufs[] = {a, b, a, b};
    op_run(&d, bufs, NULL);
}

static void make_bad_groups(void)
{
    (void)op_conv2d(PHASE_FWD, 1, 3, 8, 8, 4, 3, 3, 1, PAD_SAME, 2);
}

static void run_conv_without_workspace(void)
{
    OpDesc d = op_conv2d(PHASE_FWD, 1, 1, 4, 4, 1, 3, 3, 1, PAD_SAME, 1);
    float a[16], b[16], c[9];
    void *bufs[] = {a, b, c};
    op_run(&d, bufs, NULL);
}

static void run_null_buffer(void)
{
    OpDesc d = op_sgd(4, 0.1f);
    float w[4] = {0};
    void *bufs[] = {w, NULL};
    op_run(&d, bufs, NULL);
}

static void make_valid_too_small(void)
{
    (void)op_pool2d(PHASE_FWD, POOL_MAX, 1, 1, 2, 2, 3, 1, PAD_VALID);
}

static void make_gelu_in_place(void)
{
    (void)op_act_in_place(PHASE_FWD, ACT_GELU, 10);
}

static void make_scalar_div_zero(void)
{
    (void)op_scalar(PHASE_FWD, BIN_DIV, 10, 0.0f);
}

static void make_layernorm_eps0(void)
{
    (void)op_layernorm(PHASE_FWD, 2, 3, 0.0f);
}

static void make_softmax_bwd_weights(void)
{
    (void)op_softmax(PHASE_BWD_WEIGHTS, 2, 3);
}

static void make_lrn_even(void)
{
    (void)op_lrn(PHASE_FWD, 1, 4, 4, 4, 1e-4f, 0.75f, 1.0f);
}

static void make_channel_out_of_range(void)
{
    (void)op_channel_copy(PHASE_FWD, 1, 4, 3, 2, 1);
}

static void make_pool_pad_window(void)
{
    (void)op_pool2d_pads(PHASE_FWD, POOL_MAX, 1, 1, 6, 6, 3, 2, 0, 0, 3, 0);
}

static void make_bn_backward_inference(void)
{
    (void)op_batchnorm(PHASE_BWD_DATA, 1, 1, 4, 1e-3f, 0.99f, false);
}

static void run_adam_step0(void)
{
    OpDesc d = op_adam(4, 0.1f, 0.9f, 0.999f, 1e-7f);
    d.u.update.step = 0;
    float a[4] = {0}, b[4] = {0}, c[4] = {0}, g[4] = {0};
    void *bufs[] = {a, b, c, g};
    op_run(&d, bufs, NULL);
}

static void make_decay_too_long(void)
{
    OpDesc d = op_sgd(4, 0.1f);
    op_update_set_decay(&d, 5, 0.1f);
}

static void run_embedding_bad_id(void)
{
    OpDesc d = op_embedding(PHASE_FWD, 2, 3, 2);
    float y[4], W[6] = {0};
    int32_t ids[2] = {1, 3};
    void *bufs[] = {y, ids, W};
    op_run(&d, bufs, NULL);
}

static void make_dropout_rate_one(void)
{
    (void)op_dropout(PHASE_FWD, 4, 1.0f, 0u);
}

static void test_programmer_errors_abort(void **state)
{
    (void)state;
    expect_abort(make_lrn_even, "lrn with an even size");
    expect_abort(make_channel_out_of_range, "channel slice past c_dst");
    expect_abort(make_pool_pad_window, "pool pad as large as the window");
    expect_abort(make_bn_backward_inference, "batchnorm backward in inference mode");
    expect_abort(run_adam_step0, "adam at step 0");
    expect_abort(make_decay_too_long, "decay prefix longer than the buffer");
    expect_abort(run_embedding_bad_id, "embedding id out of range");
    expect_abort(make_dropout_rate_one, "dropout rate 1");
    expect_abort(run_pool_bwd_weights, "pool2d with bwd_weights");
    expect_abort(make_bad_groups, "conv2d groups not dividing c");
    expect_abort(run_conv_without_workspace, "conv2d without its workspace");
    expect_abort(run_null_buffer, "NULL buffer");
    expect_abort(make_valid_too_small, "VALID window larger than input");
    expect_abort(make_gelu_in_place, "gelu in place (its backward reads x)");
    expect_abort(make_scalar_div_zero, "division by the scalar 0");
    expect_abort(make_layernorm_eps0, "layer norm with eps 0");
    expect_abort(make_softmax_bwd_weights, "softmax with bwd_weights");
}

/* ---------------------------------------------------------------------------------------
 * GRU cell (DeepBench / cuDNN form), sparse GEMM, machine limits
 * ------------------------------------------------------------------------------------- */

static double sig_d(double x) { return 1.0 / (1.0 + exp(-x)); }

static void gru_case(int B, int H, ActKind act, bool fd, uint64_t seed)
{
    const size_t bh = (size_t)B * H;
    float *pre = tu_floats(3 * bh), *b = tu_floats(3 * (size_t)H), *hp = tu_floats(bh);
    float *h = tu_floats(bh), *a = tu_floats(4 * bh), *dh = tu_floats(bh);
    float *dpre = tu_floats(3 * bh), *dhp = tu_floats(bh);
    double *rh = tu_doubles(bh), *ra = tu_doubles(4 * bh), *rdpre = tu_doubles(3 * bh), *rdhp = tu_doubles(bh);
    tu_fill_uniform(pre, 3 * bh, -2, 2, seed);
    tu_fill_uniform(b, 3 * (size_t)H, -0.5f, 0.5f, seed + 1);
    tu_fill_uniform(hp, bh, -1, 1, seed + 2);
    tu_fill_uniform(dh, bh, -1, 1, seed + 3);
    tu_fill_const(h, bh, 99.0f); /* outputs are written, never accumulated */
    tu_fill_const(a, 4 * bh, 99.0f);
    tu_fill_const(dpre, 3 * bh, 99.0f);
    tu_fill_const(dhp, bh, 99.0f);
    const bool relu = act == ACT_RELU;
    /* the reference, straight from the formulas of ops.h in double */
    for (int r = 0; r < B; r++)
        for (int u = 0; u < H; u++) {
            const size_t i = (size_t)r * H + u, p = (size_t)r * 3 * H + u, q = (size_t)r * 4 * H + u;
            const double gr = sig_d((double)pre[p] + b[u]), gz = sig_d((double)pre[p + H] + b[u + H]);
            const double hn = (double)pre[p + 2 * H] + b[u + 2 * H], pn = gr * hn;
            const double n = relu ? (pn > 0 ? pn : 0) : tanh(pn);
            ra[q] = gr, ra[q + H] = gz, ra[q + 2 * H] = n, ra[q + 3 * H] = hn;
            rh[i] = (1 - gz) * n + gz * hp[i];
            const double dpn = relu ? (pn > 0 ? dh[i] * (1 - gz) : 0) : dh[i] * (1 - gz) * (1 - n * n);
            rdpre[p] = dpn * hn * gr * (1 - gr);
            rdpre[p + H] = dh[i] * (hp[i] - n) * gz * (1 - gz);
            rdpre[p + 2 * H] = dpn * gr;
            rdhp[i] = dh[i] * gz;
        }
    OpDesc f = op_gru_cell(PHASE_FWD, B, H, act), bk = op_gru_cell(PHASE_BWD_DATA, B, H, act);
    void *fb[] = {h, a, pre, hp, b};
    run(&f, fb);
    assert_true(tu_close("gru h_t", h, rh, bh, 1e-6, 1e-5));
    assert_true(tu_close("gru act", a, ra, 4 * bh, 1e-6, 1e-5));
    expect_spot_ok(&f, fb, NULL);
    void *bb[] = {dpre, dhp, dh, a, hp};
    run(&bk, bb);
    assert_true(tu_close("gru dpre", dpre, rdpre, 3 * bh, 1e-5, 1e-4));
    assert_true(tu_close("gru dh_prev", dhp, rdhp, bh, 1e-5, 1e-4));
    expect_spot_ok(&bk, bb, NULL);
    if (fd) {
        /* L = sum h_t dh: its gradient by pre is dpre; by h_prev, dh_prev (the direct path) */
        FwdObj o = {.fwd = &f, .bufs = fb, .nout = 1, .out = {0}, .r = {dh}, .n = {bh}};
        assert_true(tu_grad_check("gru dpre", pre, 3 * bh, dpre, fwd_objective, &o, 60, seed + 5, FD_EPS,
                                  FD_ATOL, FD_RTOL));
        assert_true(tu_grad_check("gru dh_prev", hp, bh, dhp, fwd_objective, &o, FD_SAMPLES, seed + 6,
                                  FD_EPS, FD_ATOL, FD_RTOL));
        /* the bias gradient is OP_BIAS BWD_WEIGHTS over dpre viewed as (B, 3H, 1) */
        float *db = tu_floats(3 * (size_t)H);
        OpDesc bw = op_bias(PHASE_BWD_WEIGHTS, B, 3 * H, 1);
        bw.u.bias.accumulate = false;
        void *bwb[] = {db, dpre};
        run(&bw, bwb);
        assert_true(tu_grad_check("gru db via bias", b, 3 * (size_t)H, db, fwd_objective, &o, FD_SAMPLES,
                                  seed + 7, FD_EPS, FD_ATOL, FD_RTOL));
        free(db);
    }
    free(pre), free(b), free(hp), free(h), free(a), free(dh), free(dpre), free(dhp);
    free(rh), free(ra), free(rdpre), free(rdhp);
}

static void test_gru_cell(void **state)
{
    (void)state;
    gru_case(3, 5, ACT_TANH, true, 3100);
    gru_case(2, 7, ACT_TANH, true, 3110);
    gru_case(4, 6, ACT_RELU, false, 3120);   /* DeepBench's ReLU: reference only (kinks) */
    gru_case(16, 700, ACT_RELU, false, 3130); /* OpenMP rows */
}

static void spmm_case(int m, int n, int k, double sparsity, uint64_t seed)
{
    OpDesc d = op_spmm(m, n, k, sparsity);
    const SpmmDesc *sd = &d.u.spmm;
    const size_t nnz = (size_t)m * (size_t)sd->nnz_per_row;
    int32_t *row_ptr = malloc(sizeof(int32_t) * ((size_t)m + 1)), *col = malloc(sizeof(int32_t) * nnz);
    assert_non_null(row_ptr);
    assert_non_null(col);
    spmm_make_pattern(row_ptr, col, sd, seed);
    /* the pattern: nnz_per_row sorted distinct columns in [0, k) per row */
    assert_int_equal(row_ptr[0], 0);
    for (int i = 0; i < m; i++) {
        assert_int_equal(row_ptr[i + 1] - row_ptr[i], sd->nnz_per_row);
        for (int32_t p = row_ptr[i]; p < row_ptr[i + 1]; p++) {
            assert_true(col[p] >= 0 && col[p] < k);
            if (p > row_ptr[i])
                assert_true(col[p] > col[p - 1]);
        }
    }
    float *v = tu_floats(nnz), *B = tu_floats((size_t)k * n), *C = tu_floats((size_t)m * n);
    double *ref = tu_doubles((size_t)m * n);
    tu_fill_uniform(v, nnz, -1, 1, seed + 1);
    tu_fill_uniform(B, (size_t)k * n, -1, 1, seed + 2);
    tu_fill_const(C, (size_t)m * n, 99.0f); /* written, not accumulated */
    for (int i = 0; i < m; i++)
        for (int32_t p = row_ptr[i]; p < row_ptr[i + 1]; p++)
            for (int j = 0; j < n; j++)
                ref[(size_t)i * n + j] += (double)v[p] * B[(size_t)col[p] * n + j];
    void *bufs[] = {C, v, col, row_ptr, B};
    char what[96];
    snprintf(what, sizeof what, "spmm %dx%dx%d sparsity %.2f", m, n, k, sparsity);
    const int t0 = ops_get_threads();
    for (int t = 1; t <= 2; t++) {
        ops_set_threads(t);
        run(&d, bufs);
        assert_true(tu_close(what, C, ref, (size_t)m * n, REF_ATOL, REF_RTOL));
        expect_spot_ok(&d, bufs, NULL);
    }
    ops_set_threads(t0);
    /* a column index out of range fails the check instead of being read */
    const int32_t saved = col[nnz - 1];
    col[nnz - 1] = k;
    double err;
    assert_false(op_spot_check(&d, bufs, NULL, (int)((size_t)m * n), 1, &err));
    col[nnz - 1] = saved;
    OpCost c = op_cost(&d);
    assert_true(c.flops == 2.0 * (double)nnz * n);
    free(row_ptr), free(col), free(v), free(B), free(C), free(ref);
}

static void test_spmm(void **state)
{
    (void)state;
    spmm_case(9, 1, 13, 0.7, 3200);       /* a sparse matrix-vector product */
    spmm_case(40, 1100, 50, 0.9, 3210);   /* C rows in two column blocks, the second short */
    spmm_case(300, 17, 64, 0.95, 3220);   /* 3 nonzeros a row; OpenMP rows */
    spmm_case(5, 4, 6, 0.0, 3230);        /* dense */
    spmm_case(3, 2, 1000, 0.9999, 3240);  /* the floor of one nonzero a row */
}

static void test_peak_and_membw(void **state)
{
    (void)state;
    for (int t = 1; t <= 2; t++) {
        OpDesc p = op_peak_fma(t, 100000);
        float out[2] = {7.0f, 7.0f};
        void *pb[] = {out};
        run(&p, pb);
        for (int i = 0; i < t; i++)
            assert_true(out[i] == 1.0f); /* the chains' fixed point */
        expect_spot_ok(&p, pb, NULL);
        assert_true(op_cost(&p).flops == 2.0 * 100032 * t && op_cost(&p).bytes == 0.0);

        OpDesc r = op_membw(MEMBW_READ, t, 192 * 37, 5);
        const size_t n = (size_t)t * 192 * 37 / 4;
        float *x = tu_floats(n), sums[2];
        tu_fill_uniform(x, n, -1, 1, 3300 + (uint64_t)t);
        void *rb[] = {sums, x};
        run(&r, rb);
        for (int i = 0; i < t; i++) {
            double ref = 0.0;
            for (size_t j = 0; j < n / (size_t)t; j++)
                ref += x[(size_t)i * (n / (size_t)t) + j];
            assert_true(fabs(sums[i] - 5.0 * ref) <= 1e-4 * 5.0 * (double)(n / (size_t)t));
        }
        expect_spot_ok(&r, rb, NULL);
        assert_true(op_cost(&r).bytes == 5.0 * 192 * 37 * t);

        OpDesc tr = op_membw(MEMBW_TRIAD, t, 192 * 11, 3);
        const size_t e = (size_t)t * 192 * 11 / 12;
        float *a = tu_floats(e), *b = tu_floats(e), *c = tu_floats(e);
        tu_fill_uniform(b, e, -1, 1, 3310);
        tu_fill_uniform(c, e, -1, 1, 3311);
        tu_fill_const(a, e, 99.0f);
        void *tb[] = {a, b, c};
        run(&tr, tb);
        for (size_t j = 0; j < e; j++)
            assert_true(fabsf(a[j] - (b[j] + 3.0f * c[j])) <= 1e-6f);
        expect_spot_ok(&tr, tb, NULL);
        a[e / 2] += 0.5f; /* a wrong element fails the check */
        double err;
        assert_false(op_spot_check(&tr, tb, NULL, (int)e, 1, &err));

        /* handoff: the producer negates each thread's slice; the read is READ's, once */
        OpDesc h = op_membw(MEMBW_HANDOFF, t, 192 * 37, 1);
        const float first = x[0], last = x[n - 1];
        membw_produce(x, &h.u.membw);
        assert_true(x[0] == -first && x[n - 1] == -last);
        run(&h, rb);
        for (int i = 0; i < t; i++) {
            double ref = 0.0;
            for (size_t j = 0; j < n / (size_t)t; j++)
                ref += x[(size_t)i * (n / (size_t)t) + j];
            assert_true(fabs(sums[i] - ref) <= 1e-4 * (double)(n / (size_t)t));
        }
        expect_spot_ok(&h, rb, NULL);
        sums[0] += 1.0f; /* a wrong sum fails the check */
        assert_false(op_spot_check(&h, rb, NULL, 1, 1, &err));
        assert_true(op_cost(&h).bytes == 192.0 * 37 * t);

        /* retain: the same read after the wait, which leaves the data as it was */
        OpDesc rt = op_membw_retain(t, 192 * 37, 200);
        membw_produce(x, &rt.u.membw);
        const float kept = x[n / 2];
        const double w0 = omp_get_wtime();
        membw_idle(&rt.u.membw);
        assert_true(omp_get_wtime() - w0 >= 200e-6);
        assert_true(x[n / 2] == kept);
        run(&rt, rb);
        expect_spot_ok(&rt, rb, NULL);
        sums[0] += 1.0f;
        assert_false(op_spot_check(&rt, rb, NULL, 1, 1, &err));

        /* cross: thread i sums the slice thread i+1 (mod t) wrote */
        if (t > 1) {
            OpDesc xc = op_membw(MEMBW_CROSS, t, 192 * 37, 1);
            membw_produce(x, &xc.u.membw);
            run(&xc, rb);
            const size_t per = n / (size_t)t;
            for (int i = 0; i < t; i++) {
                double ref = 0.0;
                for (size_t j = 0; j < per; j++)
                    ref += x[(size_t)((i + 1) % t) * per + j];
                assert_true(fabs(sums[i] - ref) <= 1e-4 * (double)per);
            }
            assert_true(fabs((double)sums[0] - (double)sums[1]) > 1e-3); /* the slices differ: a real test */
            expect_spot_ok(&xc, rb, NULL);
            sums[1] += 1.0f;
            assert_false(op_spot_check(&xc, rb, NULL, 1, 1, &err));

            /* shared: after both threads read the next one's slice, each thread rewrites
             * (negates) its own; out[t] is the sum of the slice as written */
            OpDesc sw = op_membw(MEMBW_SHARED, t, 192 * 37, 1);
            membw_produce(x, &sw.u.membw);
            membw_share(x, &sw.u.membw);
            float *kept_x = tu_floats(n);
            memcpy(kept_x, x, n * sizeof *x);
            run(&sw, rb);
            for (int i = 0; i < t; i++) {
                double ref = 0.0;
                for (size_t j = 0; j < per; j++) {
                    assert_true(x[(size_t)i * per + j] == -kept_x[(size_t)i * per + j]);
                    ref += x[(size_t)i * per + j];
                }
                assert_true(fabs(sums[i] - ref) <= 1e-4 * (double)per);
            }
            void *before[] = {NULL, kept_x}; /* the slices as they were: an in-out buffer */
            expect_spot_ok(&sw, rb, before);
            sums[0] += 1.0f;
            assert_false(op_spot_check(&sw, rb, before, 1, 1, &err));
            assert_true(op_cost(&sw).bytes == 192.0 * 37 * t);
            free(kept_x);
        }
        free(x), free(a), free(b), free(c);
    }
}

/* The kernels' parallel threshold in these tests: the product's default (512K elements)
 * would leave every OpenMP path of the small test shapes untested. */
enum { TEST_PAR_MIN = 32768 };

int main(void)
{
    ops_set_parallel_min(TEST_PAR_MIN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_vs_reference),
        cmocka_unit_test(test_conv_vs_reference),
        cmocka_unit_test(test_conv_large_vs_reference),
        cmocka_unit_test(test_conv_chunked_vs_reference),
        cmocka_unit_test(test_conv_rows_vs_reference),
        cmocka_unit_test(test_conv_workspace_slices),
        cmocka_unit_test(test_pool_global_vs_reference),
        cmocka_unit_test(test_gru_cell),
        cmocka_unit_test(test_spmm),
        cmocka_unit_test(test_peak_and_membw),
        cmocka_unit_test(test_conv_finite_differences),
        cmocka_unit_test(test_pool_vs_reference),
        cmocka_unit_test(test_pool_finite_differences),
        cmocka_unit_test(test_bias),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_softmax_xent),
        cmocka_unit_test(test_sqerr),
        cmocka_unit_test(test_lstm_cell),
        cmocka_unit_test(test_updates),
        cmocka_unit_test(test_batchnorm),
        cmocka_unit_test(test_batchnorm_running_stats),
        cmocka_unit_test(test_lrn),
        cmocka_unit_test(test_dropout),
        cmocka_unit_test(test_channel_copy),
        cmocka_unit_test(test_axpby),
        cmocka_unit_test(test_embedding),
        cmocka_unit_test(test_embedding_positions),
        cmocka_unit_test(test_kl_sparsity),
        cmocka_unit_test(test_shrink_norm1),
        cmocka_unit_test(test_optimizers_zoo),
        cmocka_unit_test(test_adamw_and_clipping),
        cmocka_unit_test(test_update_averages_ranks),
        cmocka_unit_test(test_sqerr_weight),
        cmocka_unit_test(test_pool_pads),
        cmocka_unit_test(test_memory_and_stream),
        cmocka_unit_test(test_tf_padding),
        cmocka_unit_test(test_costs),
        cmocka_unit_test(test_buffer_info),
        cmocka_unit_test(test_gemm_bias),
        cmocka_unit_test(test_bmm),
        cmocka_unit_test(test_bmm_strided),
        cmocka_unit_test(test_layernorm),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_binary_scalar),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_keys_unchanged),
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_allreduce_group_of_one),
        cmocka_unit_test(test_vocabulary_parallel_group_of_one),
        cmocka_unit_test(test_softmax_padding_mask),
        cmocka_unit_test(test_spot_check),
        cmocka_unit_test(test_vecmath_accuracy),
        cmocka_unit_test(test_buffer_free_takes_back_huge_page_advice),
        cmocka_unit_test(test_threads_and_blas),
        cmocka_unit_test(test_programmer_errors_abort),
    };
    return cmocka_run_group_tests_name("ops", tests, NULL, NULL);
}
