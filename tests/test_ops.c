/* tests/test_ops.c — unit and gradient-check tests of the ops/ layer: every kernel against
 * the naive double references in ref_ops.c, every backward against central finite
 * differences of its forward, keys, costs, TF padding, the spot check and the threading
 * knobs. Deterministic (fixed seeds) and fast (small shapes; a few cross OPS_PAR_MIN so
 * the OpenMP paths run too). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
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

/* The OpenMP im2col/col2im paths need more than OPS_PAR_MIN column elements. */
static void test_conv_large_vs_reference(void **state)
{
    (void)state;
    const ConvCase big = {2, 8, 20, 20, 6, 3, 3, 1, 1, 1, 0, 0, 2}; /* 4*9*400 = 14400/grp */
    const ConvCase big2 = {1, 16, 24, 24, 8, 5, 5, 1, 1, 1, 0, 0, 1}; /* 16*25*576 cols */
    conv_case_vs_reference(&big, 300);
    conv_case_vs_reference(&big2, 310);
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
} PoolCase;

static const PoolCase POOL_CASES[] = {
    {POOL_MAX, 2, 3, 8, 8, 3, 2, PAD_SAME},  /* even: pad 0/1 */
    {POOL_MAX, 2, 2, 9, 9, 3, 2, PAD_VALID},
    {POOL_AVG, 2, 3, 7, 7, 3, 2, PAD_SAME},  /* odd: pad 1/1 */
    {POOL_AVG, 1, 2, 5, 6, 3, 1, PAD_SAME},  /* stride 1 SAME */
    {POOL_MAX, 1, 3, 6, 6, 2, 2, PAD_VALID}, /* non-overlapping */
    {POOL_AVG, 2, 2, 7, 7, 2, 2, PAD_VALID}, /* drops the last row/column */
    {POOL_AVG, 1, 3, 8, 8, 3, 2, PAD_SAME},  /* asymmetric pad: counts at the border */
    {POOL_MAX, 2, 2, 4, 4, 3, 1, PAD_SAME},  /* inception pool branch */
    {POOL_MAX, 4, 16, 30, 30, 3, 2, PAD_VALID}, /* > OPS_PAR_MIN: OpenMP path */
    {POOL_AVG, 4, 16, 30, 30, 3, 2, PAD_SAME},
};

static void pool_case_vs_reference(const PoolCase *pc, uint64_t seed)
{
    const OpDesc f = op_pool2d(PHASE_FWD, pc->kind, pc->n, pc->c, pc->h, pc->w, pc->win,
                               pc->stride, pc->pad);
    const PoolDesc *p = &f.u.pool;
    const size_t nx = (size_t)p->n * p->c * p->h * p->w;
    const size_t ny = (size_t)p->n * p->c * p->out_h * p->out_w;
    float *x = tu_floats(nx), *y = tu_floats(ny), *dy = tu_floats(ny), *dx = tu_floats(nx);
    double *ry = tu_doubles(ny), *rx = tu_doubles(nx), *ex = tu_doubles(nx);
    tu_fill_uniform(x, nx, -1, 1, seed);
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
    /* in place gives the same */
    float *xi = tu_dup(x, count);
    void *fi[] = {xi, xi};
    run(&f, fi);
    assert_true(tu_close_f("act fwd in place", xi, y, count, 0, 0));

    op_key(&b, key);
    void *bb[] = {dx, dy, y};
    run(&b, bb);
    ref_act_backward_data(ref, dy, y, a, count);
    assert_true(tu_close(key, dx, ref, count, 1e-6, 1e-5));
    expect_spot_ok(&b, bb, NULL);
    float *dyi = tu_dup(dy, count);
    void *bi[] = {dyi, dyi, y};
    run(&b, bi);
    assert_true(tu_close_f("act bwd in place", dyi, dx, count, 0, 0));

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

static void xent_case(int n, int classes, float logit_scale, uint64_t seed)
{
    const size_t e = (size_t)n * classes;
    float *logits = tu_floats(e), *probs = tu_floats(e), *dl = tu_floats(e), loss = 0;
    int32_t *labels = calloc((size_t)n, sizeof *labels);
    assert_non_null(labels);
    double *rp = tu_doubles(e), *rd = tu_doubles(e);
    tu_fill_uniform(logits, e, -logit_scale, logit_scale, seed);
    tu_fill_labels(labels, (size_t)n, classes, seed + 1);
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
    xent_case(5, 7, 3.0f, 900);
    xent_case(64, 1000, 5.0f, 910);  /* OpenMP rows */
    xent_case(4, 10, 1000.0f, 920);  /* huge logits: stable, no inf/NaN */
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
        assert_true(tu_close_f("stream triad", a, e, n, 0, 0));
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
    /* workspace: one image's columns per thread that splits the batch, none on the 1x1
     * path; backward-weights adds a weight-gradient accumulator per extra thread */
    const int t0 = ops_get_threads();
    ops_set_threads(2);
    d = op_conv2d(PHASE_FWD, 16, 64, 27, 27, 192, 5, 5, 1, PAD_SAME, 1);
    assert_int_equal(op_workspace_bytes(&d), 2 * 4 * 64 * 25 * 729);
    d = op_conv2d(PHASE_BWD_WEIGHTS, 16, 64, 27, 27, 192, 5, 5, 1, PAD_SAME, 1);
    assert_int_equal(op_workspace_bytes(&d), 2 * 4 * 64 * 25 * 729 + 4 * 192 * 64 * 25);
    d = op_conv2d(PHASE_BWD_DATA, 16, 64, 27, 27, 192, 1, 1, 1, PAD_SAME, 1);
    assert_int_equal(op_workspace_bytes(&d), 0);
    d = op_conv2d(PHASE_FWD, 1, 4, 8, 8, 4, 3, 3, 1, PAD_SAME, 2); /* batch 1: one thread's */
    assert_int_equal(op_workspace_bytes(&d), 4 * 2 * 9 * 64);
    ops_set_threads(1);
    d = op_conv2d(PHASE_FWD, 16, 64, 27, 27, 192, 5, 5, 1, PAD_SAME, 1);
    assert_int_equal(op_workspace_bytes(&d), 4 * 64 * 25 * 729);
    ops_set_threads(t0);
    d = op_pool2d(PHASE_FWD, POOL_MAX, 1, 64, 112, 112, 3, 2, PAD_SAME);
    assert_int_equal(op_workspace_bytes(&d), 0);
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
                    p.u.gemm.alpha == d->u.gemm.alpha);
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
        assert_true(p.phase == PHASE_UPDATE && p.u.update.count == d->u.update.count);
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
    const OpDesc all[] = {
        g, ga, cw, cd,
        op_gemm(PHASE_FWD, 1, 1, 1, false, true, 1.0f),
        op_conv2d(PHASE_FWD, 1, 3, 224, 224, 64, 7, 7, 2, PAD_SAME, 1),
        op_conv2d_explicit(PHASE_BWD_DATA, 16, 1, 700, 161, 32, 5, 20, 2, 2, 3, 1, 1),
        op_pool2d(PHASE_FWD, POOL_MAX, 128, 64, 112, 112, 3, 2, PAD_SAME),
        op_pool2d(PHASE_BWD_DATA, POOL_AVG, 2, 1024, 7, 7, 7, 1, PAD_VALID),
        op_bias(PHASE_FWD, 128, 64, 3025), op_bias(PHASE_BWD_WEIGHTS, 128, 4096, 1),
        op_act(PHASE_FWD, ACT_RELU, 12345), op_act(PHASE_BWD_DATA, ACT_SIGMOID, 7),
        op_act(PHASE_BWD_DATA, ACT_TANH, 1),
        op_softmax_xent(PHASE_FWD, 128, 1000), op_softmax_xent(PHASE_BWD_DATA, 1, 2),
        op_sqerr(PHASE_FWD, 60, 60483, true), op_sqerr(PHASE_BWD_DATA, 128, 1024, false),
        op_lstm_cell(PHASE_FWD, 128, 1024, 1.0f), op_lstm_cell(PHASE_BWD_DATA, 16, 512, 1.0f),
        op_sgd(61100840, 0.01f), op_rmsprop(8392704, 0.001f, 0.9f, 1e-7f),
        op_zero(PHASE_FWD, 5), op_copy(PHASE_FWD, 1ull << 30),
        op_stream(STREAM_COPY, 20000000, 3.0f), op_stream(STREAM_SCALE, 1, 3.0f),
        op_stream(STREAM_ADD, 2, 3.0f), op_stream(STREAM_TRIAD, 3, 3.0f),
    };
    bool seen[OP_KIND_COUNT] = {0};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        key_roundtrip(&all[i]);
        seen[all[i].kind] = true;
    }
    for (int k = 0; k < OP_KIND_COUNT; k++)
        assert_true(seen[k]); /* every kind covered */

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
        "bias bwd_data n=1 c=1 spatial=1 acc=0", "act fwd gelu count=3",
        "act bwd_weights relu count=3", "act fwd relu count=0", "sgd count=18446744073709551616",
        "stream fwd triad count=3", "stream triad count=3 q=3", "zero count=5x",
        "lstm_cell fwd batch=1", "sqerr fwd n=1 features=1 mean=2",
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
            tu_fill_labels((int32_t *)f, n[i], d->u.xent.classes, seed + i);
        else if (d->kind == OP_RMSPROP && i == 1)
            tu_fill_uniform(f, n[i], 0, 1, seed + i); /* acc >= 0 */
        else
            tu_fill_uniform(f, n[i], -1, 1, seed + i);
        bufs[i] = f;
    }
    if (d->kind == OP_POOL2D && d->phase == PHASE_BWD_DATA) { /* y must come from x */
        OpDesc f = with_phase(*d, PHASE_FWD, false);
        void *fb[] = {bufs[3], bufs[2]};
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

static void test_spot_check(void **state)
{
    (void)state;
    OpDesc cd = op_conv2d(PHASE_BWD_DATA, 2, 4, 8, 8, 6, 3, 3, 2, PAD_SAME, 2);
    OpDesc ga = op_gemm(PHASE_FWD, 9, 7, 5, true, false, 0.5f);
    ga.u.gemm.alpha = 2.0f;
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
        op_softmax_xent(PHASE_FWD, 6, 10), op_softmax_xent(PHASE_BWD_DATA, 6, 10),
        op_sqerr(PHASE_FWD, 4, 9, true), op_sqerr(PHASE_FWD, 4, 9, false),
        op_sqerr(PHASE_BWD_DATA, 4, 9, true), op_sqerr(PHASE_BWD_DATA, 4, 9, false),
        op_lstm_cell(PHASE_FWD, 3, 7, 1.0f), op_lstm_cell(PHASE_BWD_DATA, 3, 7, 1.0f),
        op_sgd(1000, 0.1f), op_rmsprop(1000, 0.01f, 0.9f, 1e-7f),
        op_zero(PHASE_FWD, 100), op_copy(PHASE_FWD, 100),
        op_stream(STREAM_COPY, 100, 3.0f), op_stream(STREAM_SCALE, 100, 3.0f),
        op_stream(STREAM_ADD, 100, 3.0f), op_stream(STREAM_TRIAD, 100, 3.0f),
        op_act(PHASE_FWD, ACT_TANH, 200000), /* only first/last + samples checked */
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
    if (es > 4 * ulp || ee > 2 * ulp || eg > 3 * ulp || et > 3 * ulp)
        fprintf(stderr, "  vecmath relative errors in ulp: sqrt %.2f exp %.2f sigmoid %.2f tanh %.2f\n",
                es / ulp, ee / ulp, eg / ulp, et / ulp);
    assert_true(es <= 4 * ulp && ee <= 2 * ulp && eg <= 3 * ulp && et <= 3 * ulp);
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

static void test_programmer_errors_abort(void **state)
{
    (void)state;
    expect_abort(run_pool_bwd_weights, "pool2d with bwd_weights");
    expect_abort(make_bad_groups, "conv2d groups not dividing c");
    expect_abort(run_conv_without_workspace, "conv2d without its workspace");
    expect_abort(run_null_buffer, "NULL buffer");
    expect_abort(make_valid_too_small, "VALID window larger than input");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_vs_reference),
        cmocka_unit_test(test_conv_vs_reference),
        cmocka_unit_test(test_conv_large_vs_reference),
        cmocka_unit_test(test_conv_finite_differences),
        cmocka_unit_test(test_pool_vs_reference),
        cmocka_unit_test(test_pool_finite_differences),
        cmocka_unit_test(test_bias),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_softmax_xent),
        cmocka_unit_test(test_sqerr),
        cmocka_unit_test(test_lstm_cell),
        cmocka_unit_test(test_updates),
        cmocka_unit_test(test_memory_and_stream),
        cmocka_unit_test(test_tf_padding),
        cmocka_unit_test(test_costs),
        cmocka_unit_test(test_buffer_info),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_spot_check),
        cmocka_unit_test(test_vecmath_accuracy),
        cmocka_unit_test(test_threads_and_blas),
        cmocka_unit_test(test_programmer_errors_abort),
    };
    return cmocka_run_group_tests_name("ops", tests, NULL, NULL);
}
