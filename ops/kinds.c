/* ops/kinds.c — the op kinds, one section each: constructors, shape rules, cost, buffers,
 * dispatch to the kernel, key and key parsing, in the order of OpKind; the table that
 * registers them (with their spot checks from check.c) at the end. The kernels are in
 * their own files (gemm.c, conv.c, ...), the public API's framework in ops.c.
 *
 * Cost conventions, for every kind (each section gives its own counts):
 * FLOPs: a multiply-add is 2; for the element-wise ops every add, multiply, divide,
 * compare/select, square root and transcendental (exp, tanh, log) counts 1, per element.
 * Bytes: compulsory traffic, each input read once and each output written once; a buffer
 * that is read and written (INOUT: GEMM C with beta != 0, in-place bias, accumulated
 * gradients, optimizer state, running statistics, the loss a penalty adds to) counts twice.
 *
 * Key conventions (ops.c, above op_key, has the rules; each section its fields and the
 * defaults its parser gives to what the key does not carry).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/comm.h"
#include "ops/kind.h"

static const double F = sizeof(float);

/* =======================================================================================
 * GEMM: C = alpha op(A) op(B) + beta C (+ bias) (gemm.c). One kernel in every phase: the
 * key has no phase and parses as fwd. FLOPs 2mnk, plus m*n for the bias; bytes A, B, C
 * (twice when read, beta != 0) and the bias (n). Key: m, n, k, ta, tb, beta, then alpha
 * when it is not 1 and " bias=1" with a bias (each absent otherwise, so the keys of GEMMs
 * without them are as they were; parsed as 1 and no bias).
 * ===================================================================================== */

OpDesc op_gemm(OpPhase phase, int m, int n, int k, bool trans_a, bool trans_b, float beta)
{
    OpDesc d = {.kind = OP_GEMM, .phase = phase};
    d.u.gemm = (GemmDesc){.m = m, .n = n, .k = k, .trans_a = trans_a, .trans_b = trans_b,
                          .alpha = 1.0f, .beta = beta};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_gemm_bias(OpPhase phase, int m, int n, int k, bool trans_a, bool trans_b)
{
    OpDesc d = op_gemm(phase, m, n, k, trans_a, trans_b, 0.0f);
    d.u.gemm.bias = true;
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *gemm_check(const OpDesc *d)
{
    const GemmDesc *g = &d->u.gemm;
    if (!ops_phase_in(d->phase, PH_TRAIN))
        return "gemm: phase must be fwd, bwd_data or bwd_weights";
    if (g->m < 1 || g->n < 1 || g->k < 1)
        return "gemm: m, n, k must be >= 1";
    if ((double)g->m * g->k > OPS_MAX_ELEMS || (double)g->k * g->n > OPS_MAX_ELEMS ||
        (double)g->m * g->n > OPS_MAX_ELEMS)
        return "gemm: matrix too large";
    if (!isfinite(g->alpha) || !isfinite(g->beta))
        return "gemm: alpha and beta must be finite";
    return NULL;
}

static OpCost gemm_cost(const OpDesc *d)
{
    const GemmDesc *g = &d->u.gemm;
    const double m = g->m, n = g->n, k = g->k;
    OpCost c = {.flops = 2.0 * m * n * k,
                .bytes = F * (m * k + k * n + m * n * (g->beta != 0.0f ? 2.0 : 1.0))};
    if (g->bias) {
        c.flops += m * n;
        c.bytes += F * n;
    }
    return c;
}

static int gemm_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const GemmDesc *g = &d->u.gemm;
    int n = 0;
    info[n++] = ops_buf_f("C", (size_t)g->m * (size_t)g->n, g->beta != 0.0f ? BUF_INOUT : BUF_OUT);
    info[n++] = ops_buf_f("A", (size_t)g->m * (size_t)g->k, BUF_IN);
    info[n++] = ops_buf_f("B", (size_t)g->k * (size_t)g->n, BUF_IN);
    if (g->bias)
        info[n++] = ops_buf_f("bias", (size_t)g->n, BUF_IN);
    return n;
}

static void gemm_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    if (d->u.gemm.bias)
        gemm_bias_run(bufs[0], bufs[1], bufs[2], bufs[3], &d->u.gemm);
    else
        gemm_run(bufs[0], bufs[1], bufs[2], &d->u.gemm);
}

static int gemm_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    const GemmDesc *g = &d->u.gemm;
    int len = snprintf(out, OP_KEY_MAX, "%s m=%d n=%d k=%d ta=%d tb=%d beta=%.9g",
                       op_kind_name(d->kind), g->m, g->n, g->k, (int)g->trans_a,
                       (int)g->trans_b, (double)g->beta);
    if (g->alpha != 1.0f)
        len = ops_key_append(out, len, " alpha=%.9g", (double)g->alpha);
    if (g->bias)
        len = ops_key_append(out, len, " bias=1");
    return len;
}

static bool gemm_parse(KeyCursor *kc, OpDesc *r)
{
    GemmDesc *g = &r->u.gemm;
    r->phase = PHASE_FWD;
    g->m = kc_int(kc, "m");
    g->n = kc_int(kc, "n");
    g->k = kc_int(kc, "k");
    const int ta = kc_int(kc, "ta"), tb = kc_int(kc, "tb");
    if (ta > 1 || tb > 1)
        return false;
    g->trans_a = ta;
    g->trans_b = tb;
    g->beta = kc_float(kc, "beta");
    g->alpha = 1.0f;
    if (kc_next_is(kc, " alpha="))
        g->alpha = kc_float(kc, "alpha");
    if (kc_next_is(kc, " bias=")) {
        if (kc_int(kc, "bias") != 1)
            return false;
        g->bias = true;
    }
    return true;
}

/* =======================================================================================
 * CONV2D (conv.c): FLOPs 2 per multiply-add of every output in every phase; bytes x, w
 * and y once in every phase (the im2col traffic is the implementation's, not the op's).
 * Key: phase, shape, strides, the four pads, groups and acc (0 for FWD, which ignores it).
 * Its workspace: one im2col slice per thread (ops/conv.c).
 * ===================================================================================== */

/* TF padding along one axis: output size and the (before, after) split; the odd pixel
 * of SAME goes after (bottom/right), as tf.nn.conv2d / max_pool do. */
static void tf_pad(PadMode pad, int in, int k, int stride, int *out, int *before, int *after)
{
    OPS_ASSERT(in >= 1 && k >= 1 && stride >= 1);
    OPS_ASSERT(pad == PAD_VALID || pad == PAD_SAME);
    if (pad == PAD_VALID) {
        OPS_ASSERT(in >= k); /* VALID with a kernel larger than the input has no output */
        *out = (in - k + stride) / stride; /* ceil((in - k + 1) / stride) */
        *before = *after = 0;
    } else {
        *out = (in + stride - 1) / stride; /* ceil(in / stride) */
        const long total = (long)(*out - 1) * stride + k - in;
        const int t = total > 0 ? (int)total : 0;
        *before = t / 2;
        *after = t - t / 2;
    }
}

OpDesc op_conv2d(OpPhase phase, int n, int c, int h, int w, int k, int r, int s, int stride,
                 PadMode pad, int groups)
{
    int oh, ow, pt, pb, pl, pr;
    tf_pad(pad, h, r, stride, &oh, &pt, &pb);
    tf_pad(pad, w, s, stride, &ow, &pl, &pr);
    OpDesc d = {.kind = OP_CONV2D, .phase = phase};
    d.u.conv = (ConvDesc){.n = n, .c = c, .h = h, .w = w, .k = k, .r = r, .s = s,
                          .stride_h = stride, .stride_w = stride, .pad_top = pt,
                          .pad_left = pl, .pad_bottom = pb, .pad_right = pr,
                          .groups = groups, .out_h = oh, .out_w = ow,
                          .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d); /* also checks that the floor formula agrees with TF's */
    return d;
}

OpDesc op_conv2d_explicit(OpPhase phase, int n, int c, int h, int w, int k, int r, int s,
                          int stride_h, int stride_w, int pad_h, int pad_w, int groups)
{
    OPS_ASSERT(stride_h >= 1 && stride_w >= 1);
    OpDesc d = {.kind = OP_CONV2D, .phase = phase};
    d.u.conv = (ConvDesc){.n = n, .c = c, .h = h, .w = w, .k = k, .r = r, .s = s,
                          .stride_h = stride_h, .stride_w = stride_w, .pad_top = pad_h,
                          .pad_left = pad_w, .pad_bottom = pad_h, .pad_right = pad_w,
                          .groups = groups,
                          .out_h = (h + 2 * pad_h - r) / stride_h + 1,
                          .out_w = (w + 2 * pad_w - s) / stride_w + 1,
                          .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *conv_check(const OpDesc *d)
{
    const ConvDesc *c = &d->u.conv;
    if (!ops_phase_in(d->phase, PH_TRAIN))
        return "conv2d: phase must be fwd, bwd_data or bwd_weights";
    if (c->n < 1 || c->c < 1 || c->h < 1 || c->w < 1 || c->k < 1 || c->r < 1 || c->s < 1)
        return "conv2d: n, c, h, w, k, r, s must be >= 1";
    if (c->stride_h < 1 || c->stride_w < 1)
        return "conv2d: strides must be >= 1";
    if (c->pad_top < 0 || c->pad_left < 0 || c->pad_bottom < 0 || c->pad_right < 0)
        return "conv2d: paddings must be >= 0";
    if (c->groups < 1 || c->c % c->groups || c->k % c->groups)
        return "conv2d: groups must divide c and k";
    const double ph = (double)c->h + c->pad_top + c->pad_bottom;
    const double pw = (double)c->w + c->pad_left + c->pad_right;
    if (ph < c->r || pw < c->s || ph > INT_MAX / 2 || pw > INT_MAX / 2)
        return "conv2d: kernel larger than the padded input";
    if (c->out_h != (int)((ph - c->r) / c->stride_h) + 1 ||
        c->out_w != (int)((pw - c->s) / c->stride_w) + 1)
        return "conv2d: out_h/out_w inconsistent with size, kernel, stride and padding";
    const double cg = (double)(c->c / c->groups);
    const double ohw = (double)c->out_h * c->out_w;
    if (cg * c->r * c->s > INT_MAX || ohw > INT_MAX)
        return "conv2d: a GEMM dimension exceeds INT_MAX";
    if ((double)c->n * c->c * c->h * c->w > OPS_MAX_ELEMS ||
        (double)c->n * c->k * ohw > OPS_MAX_ELEMS || cg * c->r * c->s * ohw > OPS_MAX_ELEMS ||
        (double)c->k * cg * c->r * c->s > OPS_MAX_ELEMS)
        return "conv2d: tensor too large";
    return NULL;
}

static OpCost conv_cost(const OpDesc *d)
{
    const ConvDesc *v = &d->u.conv;
    const double x = (double)v->n * v->c * v->h * v->w;
    const double w = (double)v->k * (v->c / v->groups) * v->r * v->s;
    const double y = (double)v->n * v->k * v->out_h * v->out_w;
    return (OpCost){.flops = 2.0 * y * (v->c / v->groups) * v->r * v->s, .bytes = F * (x + w + y)};
}

static int conv_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const ConvDesc *v = &d->u.conv;
    const size_t x = (size_t)v->n * (size_t)v->c * (size_t)v->h * (size_t)v->w;
    const size_t w = (size_t)v->k * (size_t)(v->c / v->groups) * (size_t)v->r * (size_t)v->s;
    const size_t y = (size_t)v->n * (size_t)v->k * (size_t)v->out_h * (size_t)v->out_w;
    const BufRole acc = v->accumulate ? BUF_INOUT : BUF_OUT;
    int n = 0;
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("y", y, BUF_OUT);
        info[n++] = ops_buf_f("x", x, BUF_IN);
        info[n++] = ops_buf_f("w", w, BUF_IN);
    } else if (d->phase == PHASE_BWD_DATA) {
        info[n++] = ops_buf_f("dx", x, acc);
        info[n++] = ops_buf_f("dy", y, BUF_IN);
        info[n++] = ops_buf_f("w", w, BUF_IN);
    } else {
        info[n++] = ops_buf_f("dw", w, acc);
        info[n++] = ops_buf_f("dy", y, BUF_IN);
        info[n++] = ops_buf_f("x", x, BUF_IN);
    }
    return n;
}

static void conv_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    float *const *f = (float *const *)bufs;
    if (d->phase == PHASE_FWD)
        conv2d_forward(f[0], f[1], f[2], &d->u.conv, ws);
    else if (d->phase == PHASE_BWD_DATA)
        conv2d_backward_data(f[0], f[1], f[2], &d->u.conv, ws);
    else
        conv2d_backward_weights(f[0], f[1], f[2], &d->u.conv, ws);
}

static int conv_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    const ConvDesc *v = &d->u.conv;
    return snprintf(out, OP_KEY_MAX,
                    "%s %s n=%d c=%d h=%d w=%d k=%d r=%d s=%d sh=%d sw=%d p=%d,%d,%d,%d "
                    "g=%d acc=%d",
                    op_kind_name(d->kind), op_phase_name(d->phase), v->n, v->c, v->h, v->w,
                    v->k, v->r, v->s, v->stride_h, v->stride_w, v->pad_top, v->pad_left,
                    v->pad_bottom, v->pad_right, v->groups,
                    d->phase != PHASE_FWD && v->accumulate);
}

static bool conv_parse(KeyCursor *kc, OpDesc *r)
{
    ConvDesc *v = &r->u.conv;
    r->phase = kc_phase(kc);
    v->n = kc_int(kc, "n");
    v->c = kc_int(kc, "c");
    v->h = kc_int(kc, "h");
    v->w = kc_int(kc, "w");
    v->k = kc_int(kc, "k");
    v->r = kc_int(kc, "r");
    v->s = kc_int(kc, "s");
    v->stride_h = kc_int(kc, "sh");
    v->stride_w = kc_int(kc, "sw");
    int p[4];
    kc_pads(kc, p);
    v->pad_top = p[0], v->pad_left = p[1], v->pad_bottom = p[2], v->pad_right = p[3];
    v->groups = kc_int(kc, "g");
    v->accumulate = kc_int(kc, "acc") != 0;
    if (!kc->ok || v->stride_h < 1 || v->stride_w < 1)
        return false;
    /* derived fields, in long arithmetic: the check rejects what does not fit */
    const long ph = (long)v->h + p[0] + p[2] - v->r, pw = (long)v->w + p[1] + p[3] - v->s;
    if (ph < 0 || pw < 0 || ph / v->stride_h + 1 > INT_MAX || pw / v->stride_w + 1 > INT_MAX)
        return false;
    v->out_h = (int)(ph / v->stride_h + 1);
    v->out_w = (int)(pw / v->stride_w + 1);
    return true;
}

static size_t conv_workspace(const OpDesc *d)
{
    return sizeof(float) * conv2d_workspace_floats(&d->u.conv, d->phase);
}

static size_t conv_workspace_slice(const OpDesc *d)
{
    return sizeof(float) * conv2d_slice_floats(&d->u.conv, d->phase);
}

static void conv_workspace_set_slice(OpDesc *d, size_t bytes)
{
    d->u.conv.ws_slice_floats = bytes / sizeof(float);
}

static double conv_thread_imbalance(const OpDesc *d, int threads)
{
    return conv2d_thread_imbalance(&d->u.conv, threads);
}

bool op_conv_rows(const OpDesc *d) { return d->kind == OP_CONV2D && conv2d_is_rows(&d->u.conv); }

/* =======================================================================================
 * POOL2D (pool.c): FLOPs win_h*win_w per output (compare or add; padding not subtracted)
 * in both phases; bytes x and y (fwd), dx (maybe read too), dy, x and, for max, y (bwd).
 * Key: phase, max|avg, shape, window, strides, pads, acc (0 for FWD).
 * ===================================================================================== */

static const char *const POOL_NAMES[2] = {"max", "avg"};

OpDesc op_pool2d(OpPhase phase, PoolKind kind, int n, int c, int h, int w, int win,
                 int stride, PadMode pad)
{
    int oh, ow, pt, pb, pl, pr;
    tf_pad(pad, h, win, stride, &oh, &pt, &pb);
    tf_pad(pad, w, win, stride, &ow, &pl, &pr);
    OpDesc d = {.kind = OP_POOL2D, .phase = phase};
    d.u.pool = (PoolDesc){.kind = kind, .n = n, .c = c, .h = h, .w = w, .win_h = win,
                          .win_w = win, .stride_h = stride, .stride_w = stride,
                          .pad_top = pt, .pad_left = pl, .pad_bottom = pb, .pad_right = pr,
                          .out_h = oh, .out_w = ow, .accumulate = phase == PHASE_BWD_DATA};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_pool2d_pads(OpPhase phase, PoolKind kind, int n, int c, int h, int w, int win,
                      int stride, int pad_top, int pad_left, int pad_bottom, int pad_right)
{
    OPS_ASSERT(win >= 1 && stride >= 1);
    /* long arithmetic, so that absurd pads fail the check instead of overflowing */
    const long ph = (long)h + pad_top + pad_bottom - win, pw = (long)w + pad_left + pad_right - win;
    OPS_ASSERT(ph >= 0 && pw >= 0 && ph / stride + 1 <= INT_MAX && pw / stride + 1 <= INT_MAX);
    OpDesc d = {.kind = OP_POOL2D, .phase = phase};
    d.u.pool = (PoolDesc){.kind = kind, .n = n, .c = c, .h = h, .w = w, .win_h = win,
                          .win_w = win, .stride_h = stride, .stride_w = stride,
                          .pad_top = pad_top, .pad_left = pad_left, .pad_bottom = pad_bottom,
                          .pad_right = pad_right, .out_h = (int)(ph / stride + 1),
                          .out_w = (int)(pw / stride + 1),
                          .accumulate = phase == PHASE_BWD_DATA};
    DESC_ASSERT_VALID(&d); /* pads in [0, window): no window made of padding only */
    return d;
}

OpDesc op_pool2d_global(OpPhase phase, PoolKind kind, int n, int c, int h, int w)
{
    OpDesc d = op_pool2d_pads(phase, kind, n, c, h, w, 1, 1, 0, 0, 0, 0);
    d.u.pool.win_h = h;
    d.u.pool.win_w = w;
    d.u.pool.out_h = d.u.pool.out_w = 1;
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *pool_check(const OpDesc *d)
{
    const PoolDesc *p = &d->u.pool;
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
        return "pool2d: phase must be fwd or bwd_data (pooling has no weights)";
    if (p->kind != POOL_MAX && p->kind != POOL_AVG)
        return "pool2d: kind must be max or avg";
    if (p->n < 1 || p->c < 1 || p->h < 1 || p->w < 1 || p->win_h < 1 || p->win_w < 1)
        return "pool2d: n, c, h, w and the window must be >= 1";
    if (p->stride_h < 1 || p->stride_w < 1)
        return "pool2d: strides must be >= 1";
    /* a pad as large as the window would allow windows made of padding only, which have
     * no max and no average */
    if (p->pad_top < 0 || p->pad_left < 0 || p->pad_bottom < 0 || p->pad_right < 0 ||
        p->pad_top >= p->win_h || p->pad_bottom >= p->win_h || p->pad_left >= p->win_w ||
        p->pad_right >= p->win_w)
        return "pool2d: paddings must be in [0, window)";
    const double ph = (double)p->h + p->pad_top + p->pad_bottom;
    const double pw = (double)p->w + p->pad_left + p->pad_right;
    if (ph < p->win_h || pw < p->win_w || ph > INT_MAX / 2 || pw > INT_MAX / 2)
        return "pool2d: window larger than the padded input";
    if (p->out_h != (int)((ph - p->win_h) / p->stride_h) + 1 ||
        p->out_w != (int)((pw - p->win_w) / p->stride_w) + 1)
        return "pool2d: out_h/out_w inconsistent with size, window, stride and padding";
    if ((double)p->n * p->c * p->h * p->w > OPS_MAX_ELEMS || (double)p->n * p->c > INT_MAX)
        return "pool2d: tensor too large";
    return NULL;
}

static OpCost pool_cost(const OpDesc *d)
{
    const PoolDesc *p = &d->u.pool;
    const double x = (double)p->n * p->c * p->h * p->w;
    const double y = (double)p->n * p->c * p->out_h * p->out_w;
    OpCost c = {.flops = y * p->win_h * p->win_w};
    if (d->phase == PHASE_FWD)
        c.bytes = F * (x + y);
    else /* dx (maybe read too), dy, x, and y for max */
        c.bytes = F * (x * (p->accumulate ? 2.0 : 1.0) + y + x + (p->kind == POOL_MAX ? y : 0.0));
    return c;
}

static int pool_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const PoolDesc *p = &d->u.pool;
    const size_t x = (size_t)p->n * (size_t)p->c * (size_t)p->h * (size_t)p->w;
    const size_t y = (size_t)p->n * (size_t)p->c * (size_t)p->out_h * (size_t)p->out_w;
    int n = 0;
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("y", y, BUF_OUT);
        info[n++] = ops_buf_f("x", x, BUF_IN);
    } else {
        info[n++] = ops_buf_f("dx", x, p->accumulate ? BUF_INOUT : BUF_OUT);
        info[n++] = ops_buf_f("dy", y, BUF_IN);
        info[n++] = ops_buf_f("x", x, BUF_IN);
        info[n++] = ops_buf_f("y", y, BUF_IN);
    }
    return n;
}

static void pool_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    float *const *f = (float *const *)bufs;
    if (d->phase == PHASE_FWD)
        pool2d_forward(f[0], f[1], &d->u.pool);
    else
        pool2d_backward_data(f[0], f[1], f[2], f[3], &d->u.pool);
}

static bool pool_enums_ok(const OpDesc *d)
{
    return d->u.pool.kind == POOL_MAX || d->u.pool.kind == POOL_AVG;
}

static int pool_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    const PoolDesc *p = &d->u.pool;
    return snprintf(out, OP_KEY_MAX,
                    "%s %s %s n=%d c=%d h=%d w=%d r=%d s=%d sh=%d sw=%d p=%d,%d,%d,%d acc=%d",
                    op_kind_name(d->kind), op_phase_name(d->phase), POOL_NAMES[p->kind], p->n,
                    p->c, p->h, p->w, p->win_h, p->win_w, p->stride_h, p->stride_w,
                    p->pad_top, p->pad_left, p->pad_bottom, p->pad_right,
                    d->phase != PHASE_FWD && p->accumulate);
}

static bool pool_parse(KeyCursor *kc, OpDesc *r)
{
    PoolDesc *q = &r->u.pool;
    r->phase = kc_phase(kc);
    q->kind = (PoolKind)kc_word(kc, POOL_NAMES, 2);
    q->n = kc_int(kc, "n");
    q->c = kc_int(kc, "c");
    q->h = kc_int(kc, "h");
    q->w = kc_int(kc, "w");
    q->win_h = kc_int(kc, "r");
    q->win_w = kc_int(kc, "s");
    q->stride_h = kc_int(kc, "sh");
    q->stride_w = kc_int(kc, "sw");
    int p[4];
    kc_pads(kc, p);
    q->pad_top = p[0], q->pad_left = p[1], q->pad_bottom = p[2], q->pad_right = p[3];
    q->accumulate = kc_int(kc, "acc") != 0;
    if (!kc->ok || q->stride_h < 1 || q->stride_w < 1)
        return false;
    const long ph = (long)q->h + p[0] + p[2] - q->win_h;
    const long pw = (long)q->w + p[1] + p[3] - q->win_w;
    if (ph < 0 || pw < 0 || ph / q->stride_h + 1 > INT_MAX || pw / q->stride_w + 1 > INT_MAX)
        return false;
    q->out_h = (int)(ph / q->stride_h + 1);
    q->out_w = (int)(pw / q->stride_w + 1);
    return true;
}

bool op_pool_global(const OpDesc *d) { return d->kind == OP_POOL2D && pool2d_is_global(&d->u.pool); }

bool op_communicates(const OpDesc *d)
{
    return d->kind == OP_ALLREDUCE || (d->kind == OP_SOFTMAX_XENT && d->phase == PHASE_FWD && d->u.xent.parts > 1);
}

/* =======================================================================================
 * BIAS (eltwise.c): FWD y += b, BWD_WEIGHTS db (+)= sums. FLOPs 1 per element of y / dy;
 * bytes y read and written and b (fwd), dy and db (twice when accumulating; bwd).
 * Key: phase, n, c, spatial, acc (0 for FWD).
 * ===================================================================================== */

OpDesc op_bias(OpPhase phase, int n, int c, int spatial)
{
    OpDesc d = {.kind = OP_BIAS, .phase = phase};
    d.u.bias = (BiasDesc){.n = n, .c = c, .spatial = spatial,
                          .accumulate = phase == PHASE_BWD_WEIGHTS};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *bias_check(const OpDesc *d)
{
    const BiasDesc *b = &d->u.bias;
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_WEIGHTS)))
        return "bias: phase must be fwd or bwd_weights (its data gradient is dy itself)";
    if (b->n < 1 || b->c < 1 || b->spatial < 1)
        return "bias: n, c, spatial must be >= 1";
    if ((double)b->n * b->c * b->spatial > OPS_MAX_ELEMS)
        return "bias: tensor too large";
    return NULL;
}

static OpCost bias_cost(const OpDesc *d)
{
    const BiasDesc *b = &d->u.bias;
    const double y = (double)b->n * b->c * b->spatial;
    OpCost c = {.flops = y};
    if (d->phase == PHASE_FWD)
        c.bytes = F * (2.0 * y + b->c);
    else
        c.bytes = F * (y + b->c * (b->accumulate ? 2.0 : 1.0));
    return c;
}

static int bias_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const BiasDesc *b = &d->u.bias;
    const size_t y = (size_t)b->n * (size_t)b->c * (size_t)b->spatial;
    int n = 0;
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("y", y, BUF_INOUT);
        info[n++] = ops_buf_f("b", (size_t)b->c, BUF_IN);
    } else {
        info[n++] = ops_buf_f("db", (size_t)b->c, b->accumulate ? BUF_INOUT : BUF_OUT);
        info[n++] = ops_buf_f("dy", y, BUF_IN);
    }
    return n;
}

static void bias_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    if (d->phase == PHASE_FWD)
        bias_forward(bufs[0], bufs[1], &d->u.bias);
    else
        bias_backward_weights(bufs[0], bufs[1], &d->u.bias);
}

static int bias_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    const BiasDesc *b = &d->u.bias;
    return snprintf(out, OP_KEY_MAX, "%s %s n=%d c=%d spatial=%d acc=%d", op_kind_name(d->kind),
                    op_phase_name(d->phase), b->n, b->c, b->spatial,
                    d->phase != PHASE_FWD && b->accumulate);
}

static bool bias_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = kc_phase(kc);
    r->u.bias.n = kc_int(kc, "n");
    r->u.bias.c = kc_int(kc, "c");
    r->u.bias.spatial = kc_int(kc, "spatial");
    r->u.bias.accumulate = kc_int(kc, "acc") != 0;
    return true;
}

/* =======================================================================================
 * ACT (eltwise.c): FLOPs per element fwd relu 1, sigmoid 4 (neg, exp, add, div), tanh 1,
 * gelu 5 (x/sqrt 2, erf, +1, *0.5, *x; erf counted once, as the other transcendentals);
 * bwd relu 1, sigmoid 3, tanh 3, gelu 11 (Phi(x) 4 as in the forward, phi(x) 4: square,
 * -1/2, exp, 1/sqrt(2 pi); x phi, the sum, times dy). Bytes x, y (fwd); dy, y (x for
 * gelu), dx (bwd); in place the same (the op's traffic, not what a separate output would
 * add). Key: phase, activation, count, and " inplace=1" for the fused in-place kernel
 * (absent otherwise).
 * ===================================================================================== */

static const char *const ACT_NAMES[ACT_COUNT] = {"relu", "sigmoid", "tanh", "gelu"};

const char *op_act_name(ActKind a)
{
    return (a >= 0 && a < ACT_COUNT) ? ACT_NAMES[a] : "?";
}

OpDesc op_act(OpPhase phase, ActKind act, size_t count)
{
    OpDesc d = {.kind = OP_ACT, .phase = phase};
    d.u.act = (ActDesc){.act = act, .count = count};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_act_in_place(OpPhase phase, ActKind act, size_t count)
{
    OpDesc d = op_act(phase, act, count);
    d.u.act.in_place = true;
    DESC_ASSERT_VALID(&d); /* GELU is never in place */
    return d;
}

static const char *act_check(const OpDesc *d)
{
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
        return "act: phase must be fwd or bwd_data";
    if (d->u.act.act < 0 || d->u.act.act >= ACT_COUNT)
        return "act: unknown activation";
    if (d->u.act.act == ACT_GELU && d->u.act.in_place)
        return "act: gelu cannot run in place (its backward reads the input x, which the "
               "output would overwrite)";
    return ops_count_check(d->u.act.count);
}

static OpCost act_cost(const OpDesc *d)
{
    static const double fwd[ACT_COUNT] = {1, 4, 1, 5}, bwd[ACT_COUNT] = {1, 3, 3, 11};
    const double n = (double)d->u.act.count;
    if (d->phase == PHASE_FWD)
        return (OpCost){.flops = fwd[d->u.act.act] * n, .bytes = F * 2.0 * n};
    return (OpCost){.flops = bwd[d->u.act.act] * n, .bytes = F * 3.0 * n};
}

static int act_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const size_t e = d->u.act.count;
    int n = 0;
    if (d->u.act.in_place) { /* y over x; dx over dy */
        info[n++] = ops_buf_f(d->phase == PHASE_FWD ? "y" : "dx", e, BUF_INOUT);
        if (d->phase != PHASE_FWD)
            info[n++] = ops_buf_f("y", e, BUF_IN);
    } else if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("y", e, BUF_OUT);
        info[n++] = ops_buf_f("x", e, BUF_IN);
    } else {
        info[n++] = ops_buf_f("dx", e, BUF_OUT);
        info[n++] = ops_buf_f("dy", e, BUF_IN);
        info[n++] = ops_buf_f(d->u.act.act == ACT_GELU ? "x" : "y", e, BUF_IN);
    }
    return n;
}

static void act_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    float *const *f = (float *const *)bufs;
    if (d->u.act.in_place && d->phase == PHASE_FWD)
        act_forward(f[0], f[0], &d->u.act);
    else if (d->u.act.in_place)
        act_backward_data(f[0], f[0], f[1], &d->u.act);
    else if (d->phase == PHASE_FWD)
        act_forward(f[0], f[1], &d->u.act);
    else
        act_backward_data(f[0], f[1], f[2], &d->u.act);
}

static bool act_enums_ok(const OpDesc *d)
{
    return d->u.act.act >= 0 && d->u.act.act < ACT_COUNT;
}

static int act_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    return snprintf(out, OP_KEY_MAX, "%s %s %s count=%zu%s", op_kind_name(d->kind),
                    op_phase_name(d->phase), ACT_NAMES[d->u.act.act], d->u.act.count,
                    d->u.act.in_place ? " inplace=1" : "");
}

static bool act_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = kc_phase(kc);
    r->u.act.act = (ActKind)kc_word(kc, ACT_NAMES, ACT_COUNT);
    r->u.act.count = kc_size(kc, "count");
    if (kc->ok && *kc->p == ' ') { /* keys of separate-output activations have no flag */
        if (kc_int(kc, "inplace") != 1)
            return false;
        r->u.act.in_place = true;
    }
    return true;
}

/* =======================================================================================
 * SOFTMAX_XENT (loss.c): FLOPs fwd 5 per logit (max, sub, exp, add, scale), bwd 2 (sub,
 * scale); bytes logits, probs, labels and the loss (fwd), probs, labels, dlogits (bwd).
 * Key: phase, n, classes; the loss scale is a value (parsed as 1); then " parts=P total=V"
 * for a vocabulary-parallel loss, priced as its own block of columns (its three sums of a
 * value or two a row over the group are the cost model's, as collectives).
 * ===================================================================================== */

OpDesc op_softmax_xent(OpPhase phase, int n, int classes)
{
    OpDesc d = {.kind = OP_SOFTMAX_XENT, .phase = phase};
    d.u.xent = (XentDesc){.n = n, .classes = classes, .scale = 1.0f};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_softmax_xent_parallel(OpPhase phase, int n, int classes, int parts, int total)
{
    OpDesc d = {.kind = OP_SOFTMAX_XENT, .phase = phase};
    d.u.xent = (XentDesc){.n = n, .classes = classes, .scale = 1.0f, .parts = parts, .total = total};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *xent_check(const OpDesc *d)
{
    const XentDesc *x = &d->u.xent;
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
        return "softmax_xent: phase must be fwd or bwd_data";
    if (x->n < 1 || x->classes < 1)
        return "softmax_xent: n and classes must be >= 1";
    if ((double)x->n * x->classes > OPS_MAX_ELEMS)
        return "softmax_xent: tensor too large";
    if (x->parts < 0 || (x->parts > 1 && ((double)(x->parts - 1) * x->classes >= x->total ||
                                          (double)x->parts * x->classes < x->total)))
        return "softmax_xent: parts P > 1 need total classes in ((P - 1) classes, P classes]";
    return NULL;
}

static OpCost xent_cost(const OpDesc *d)
{
    const double n = d->u.xent.n, e = n * d->u.xent.classes;
    if (d->phase == PHASE_FWD)
        return (OpCost){.flops = 5.0 * e, .bytes = F * (2.0 * e + n + 1.0)};
    return (OpCost){.flops = 2.0 * e, .bytes = F * (2.0 * e + n)};
}

static int xent_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const size_t rows = (size_t)d->u.xent.n, e = rows * (size_t)d->u.xent.classes;
    int n = 0;
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("loss", 1, BUF_OUT);
        info[n++] = ops_buf_f("probs", e, BUF_OUT);
        info[n++] = ops_buf_f("logits", e, BUF_IN);
    } else {
        info[n++] = ops_buf_f("dlogits", e, BUF_OUT);
        info[n++] = ops_buf_f("probs", e, BUF_IN);
    }
    info[n++] = ops_buf_i32("labels", rows);
    return n;
}

/* The parallel forward's row statistics: each row's max, then its sum and label logit. */
static size_t xent_workspace(const OpDesc *d)
{
    return d->phase == PHASE_FWD && d->u.xent.parts > 1 ? 3 * (size_t)d->u.xent.n * sizeof(float) : 0;
}

static void xent_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    if (d->phase == PHASE_FWD && d->u.xent.parts > 1)
        softmax_xent_forward_parallel(bufs[0], bufs[1], bufs[2], bufs[3], &d->u.xent, ws);
    else if (d->phase == PHASE_FWD)
        softmax_xent_forward(bufs[0], bufs[1], bufs[2], bufs[3], &d->u.xent);
    else
        softmax_xent_backward_data(bufs[0], bufs[1], bufs[2], &d->u.xent);
}

static int xent_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    int len = snprintf(out, OP_KEY_MAX, "%s %s n=%d classes=%d", op_kind_name(d->kind), op_phase_name(d->phase),
                       d->u.xent.n, d->u.xent.classes);
    if (d->u.xent.parts > 1)
        len = ops_key_append(out, len, " parts=%d total=%d", d->u.xent.parts, d->u.xent.total);
    return len;
}

static bool xent_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = kc_phase(kc);
    r->u.xent.n = kc_int(kc, "n");
    r->u.xent.classes = kc_int(kc, "classes");
    r->u.xent.scale = 1.0f;
    if (kc_next_is(kc, " parts=")) {
        r->u.xent.parts = kc_int(kc, "parts");
        r->u.xent.total = kc_int(kc, "total");
        if (r->u.xent.parts < 2)
            return false;
    }
    return true;
}

/* =======================================================================================
 * SQERR (loss.c): FLOPs fwd 3 per element (sub, mul, add), bwd 2 (sub, scale); bytes
 * pred, target and the loss (fwd), pred, target, dpred (bwd). Key: phase, n, features,
 * mean; scale and weight are values (parsed as 1).
 * ===================================================================================== */

OpDesc op_sqerr(OpPhase phase, int n, int features, bool mean)
{
    OpDesc d = {.kind = OP_SQERR, .phase = phase};
    d.u.sqerr = (SqErrDesc){.n = n, .features = features, .mean = mean, .scale = 1.0f,
                            .weight = 1.0f};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *sqerr_check(const OpDesc *d)
{
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
        return "sqerr: phase must be fwd or bwd_data";
    if (d->u.sqerr.n < 1 || d->u.sqerr.features < 1)
        return "sqerr: n and features must be >= 1";
    if ((double)d->u.sqerr.n * d->u.sqerr.features > OPS_MAX_ELEMS)
        return "sqerr: tensor too large";
    /* also catches a descriptor built by hand before the field existed (weight 0) */
    if (!(d->u.sqerr.weight > 0.0f) || !isfinite(d->u.sqerr.weight))
        return "sqerr: weight must be finite and > 0";
    return NULL;
}

static OpCost sqerr_cost(const OpDesc *d)
{
    const double e = (double)d->u.sqerr.n * d->u.sqerr.features;
    return (OpCost){.flops = (d->phase == PHASE_FWD ? 3.0 : 2.0) * e,
                    .bytes = F * (d->phase == PHASE_FWD ? 2.0 * e + 1.0 : 3.0 * e)};
}

static int sqerr_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const size_t e = (size_t)d->u.sqerr.n * (size_t)d->u.sqerr.features;
    int n = 0;
    if (d->phase == PHASE_FWD)
        info[n++] = ops_buf_f("loss", 1, BUF_OUT);
    else
        info[n++] = ops_buf_f("dpred", e, BUF_OUT);
    info[n++] = ops_buf_f("pred", e, BUF_IN);
    info[n++] = ops_buf_f("target", e, BUF_IN);
    return n;
}

static void sqerr_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    if (d->phase == PHASE_FWD)
        sqerr_forward(bufs[0], bufs[1], bufs[2], &d->u.sqerr);
    else
        sqerr_backward_data(bufs[0], bufs[1], bufs[2], &d->u.sqerr);
}

static int sqerr_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    return snprintf(out, OP_KEY_MAX, "%s %s n=%d features=%d mean=%d", op_kind_name(d->kind),
                    op_phase_name(d->phase), d->u.sqerr.n, d->u.sqerr.features,
                    (int)d->u.sqerr.mean);
}

static bool sqerr_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = kc_phase(kc);
    r->u.sqerr.n = kc_int(kc, "n");
    r->u.sqerr.features = kc_int(kc, "features");
    r->u.sqerr.mean = kc_int(kc, "mean") != 0;
    r->u.sqerr.scale = 1.0f;
    r->u.sqerr.weight = 1.0f;
    return true;
}

/* =======================================================================================
 * LSTM_CELL (lstm.c): FLOPs 23 per (row, unit) in both phases (5 bias adds, 3 sigmoids at
 * 4, 2 tanh, 4 for c and h, and the mirror image); bytes pre 4, c_prev 1, c_t 1, h_t 1,
 * act 4 per (row, unit) and b (fwd), dh, dc, act 4, c_prev, c_t, dpre 4, dc_prev (bwd).
 * Key: phase, batch, hidden; the forget bias is a value (parsed as TF's 1).
 * ===================================================================================== */

OpDesc op_lstm_cell(OpPhase phase, int batch, int hidden, float forget_bias)
{
    OpDesc d = {.kind = OP_LSTM_CELL, .phase = phase};
    d.u.lstm = (LstmCellDesc){.batch = batch, .hidden = hidden, .forget_bias = forget_bias};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *lstm_check(const OpDesc *d)
{
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
        return "lstm_cell: phase must be fwd or bwd_data (dbias is an OP_BIAS)";
    if (d->u.lstm.batch < 1 || d->u.lstm.hidden < 1)
        return "lstm_cell: batch and hidden must be >= 1";
    if ((double)d->u.lstm.batch * d->u.lstm.hidden * 4 > OPS_MAX_ELEMS ||
        (double)d->u.lstm.hidden * 4 > INT_MAX)
        return "lstm_cell: tensor too large";
    return NULL;
}

static OpCost lstm_cost(const OpDesc *d)
{
    const double bh = (double)d->u.lstm.batch * d->u.lstm.hidden;
    OpCost c = {.flops = 23.0 * bh};
    if (d->phase == PHASE_FWD) /* pre 4, c_prev 1, b, c_t 1, h_t 1, act 4 */
        c.bytes = F * (11.0 * bh + 4.0 * d->u.lstm.hidden);
    else /* dh 1, dc 1, act 4, c_prev 1, c_t 1, dpre 4, dc_prev 1 */
        c.bytes = F * 13.0 * bh;
    return c;
}

static int lstm_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const size_t h = (size_t)d->u.lstm.hidden, bh = (size_t)d->u.lstm.batch * h;
    int n = 0;
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("c_t", bh, BUF_OUT);
        info[n++] = ops_buf_f("h_t", bh, BUF_OUT);
        info[n++] = ops_buf_f("act", 4 * bh, BUF_OUT);
        info[n++] = ops_buf_f("pre", 4 * bh, BUF_IN);
        info[n++] = ops_buf_f("c_prev", bh, BUF_IN);
        info[n++] = ops_buf_f("b", 4 * h, BUF_IN);
    } else {
        info[n++] = ops_buf_f("dpre", 4 * bh, BUF_OUT);
        info[n++] = ops_buf_f("dc_prev", bh, BUF_OUT);
        info[n++] = ops_buf_f("dh_t", bh, BUF_IN);
        info[n++] = ops_buf_f("dc_t", bh, BUF_IN);
        info[n++] = ops_buf_f("act", 4 * bh, BUF_IN);
        info[n++] = ops_buf_f("c_prev", bh, BUF_IN);
        info[n++] = ops_buf_f("c_t", bh, BUF_IN);
    }
    return n;
}

static void lstm_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    float *const *f = (float *const *)bufs;
    if (d->phase == PHASE_FWD)
        lstm_cell_forward(f[0], f[1], f[2], f[3], f[4], f[5], &d->u.lstm);
    else
        lstm_cell_backward_data(f[0], f[1], f[2], f[3], f[4], f[5], f[6], &d->u.lstm);
}

static int lstm_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    return snprintf(out, OP_KEY_MAX, "%s %s batch=%d hidden=%d", op_kind_name(d->kind),
                    op_phase_name(d->phase), d->u.lstm.batch, d->u.lstm.hidden);
}

static bool lstm_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = kc_phase(kc);
    r->u.lstm.batch = kc_int(kc, "batch");
    r->u.lstm.hidden = kc_int(kc, "hidden");
    r->u.lstm.forget_bias = 1.0f; /* TF BasicLSTMCell default */
    return true;
}

/* =======================================================================================
 * Optimizer updates SGD, RMSPROP, MOMENTUM, ADAM, ADAMW (optim.c): FLOPs per parameter
 * sgd 2, rmsprop 9, momentum 4 (nesterov 6), adam 12, adamw 13, plus per decayed parameter
 * 2 (the multiply-add g + l2 w) or 1 (adamw's w * keep); bytes w, g and the state (each
 * read and written), and a clipped update's sumsq. One kernel in every phase: keys have no
 * phase and parse as update. Key: count, nesterov= (momentum), and " decay=K" after them
 * when decay_count > 0 (decayed elements do more work; absent otherwise, so undecayed keys
 * stay as they were); clipping is a value (a factor folded into the read of g). Parsed:
 * the suite's Keras defaults (lr 0.01 for sgd and momentum, else 0.001; rmsprop rho 0.9
 * eps 1e-7; momentum 0.9; adam betas 0.9 0.999 eps 1e-7 step 1), decay l2 1e-4; adamw
 * PyTorch's (betas 0.9 0.999, eps 1e-8, weight decay 0.01, step 1).
 * ===================================================================================== */

OpDesc op_sgd(size_t count, float lr)
{
    OpDesc d = {.kind = OP_SGD, .phase = PHASE_UPDATE};
    d.u.update = (UpdateDesc){.count = count, .lr = lr};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_rmsprop(size_t count, float lr, float rho, float eps)
{
    OpDesc d = {.kind = OP_RMSPROP, .phase = PHASE_UPDATE};
    d.u.update = (UpdateDesc){.count = count, .lr = lr, .rho = rho, .eps = eps};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_momentum(size_t count, float lr, float momentum, bool nesterov)
{
    OpDesc d = {.kind = OP_MOMENTUM, .phase = PHASE_UPDATE};
    d.u.update = (UpdateDesc){.count = count, .lr = lr, .momentum = momentum,
                              .nesterov = nesterov};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_adam(size_t count, float lr, float beta1, float beta2, float eps)
{
    OpDesc d = {.kind = OP_ADAM, .phase = PHASE_UPDATE};
    d.u.update = (UpdateDesc){.count = count, .lr = lr, .beta1 = beta1, .beta2 = beta2,
                              .eps = eps, .step = 1};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_adamw(size_t count, float lr, float beta1, float beta2, float eps, float weight_decay,
                size_t decay_count)
{
    OpDesc d = {.kind = OP_ADAMW, .phase = PHASE_UPDATE};
    d.u.update = (UpdateDesc){.count = count, .lr = lr, .beta1 = beta1, .beta2 = beta2, .eps = eps,
                              .step = 1, .weight_decay = weight_decay,
                              .decay_count = weight_decay != 0.0f ? decay_count : 0};
    DESC_ASSERT_VALID(&d);
    return d;
}

void op_update_set_clip(OpDesc *d, float max_norm)
{
    OPS_ASSERT(d && d->phase == PHASE_UPDATE && max_norm >= 0.0f && isfinite(max_norm));
    d->u.update.clip = max_norm;
    DESC_ASSERT_VALID(d);
}

/* Contract: decay on [0, decay_count) with coefficient l2; l2 == 0 is no decay at all
 * (decay_count 0), so a model without weight decay keys and runs the undecayed update. */
void op_update_set_decay(OpDesc *d, size_t decay_count, float l2)
{
    OPS_ASSERT(d && (d->kind == OP_SGD || d->kind == OP_RMSPROP || d->kind == OP_MOMENTUM ||
                     d->kind == OP_ADAM)); /* AdamW's decay is decoupled: op_adamw */
    OPS_ASSERT(decay_count <= d->u.update.count && isfinite(l2));
    d->u.update.decay_count = l2 != 0.0f ? decay_count : 0;
    d->u.update.l2 = l2 != 0.0f ? l2 : 0.0f;
    DESC_ASSERT_VALID(d);
}

static const char *update_check(const OpDesc *d)
{
    const UpdateDesc *u = &d->u.update;
    if (d->phase != PHASE_UPDATE)
        return "optimizer updates: phase must be update";
    const char *why = ops_count_check(u->count);
    if (why)
        return why;
    if (u->decay_count > u->count)
        return "optimizer updates: decay_count must be <= count";
    if (!isfinite(u->l2))
        return "optimizer updates: l2 must be finite";
    if (u->grad_ranks < 0)
        return "optimizer updates: grad_ranks must be >= 0";
    if (!(u->clip >= 0.0f) || !isfinite(u->clip))
        return "optimizer updates: clip must be finite and >= 0 (0: no clipping)";
    if (d->kind == OP_ADAM || d->kind == OP_ADAMW) {
        if (u->step < 1)
            return "adam: step must be >= 1 (Keras and PyTorch count from 1)";
        if (!(u->beta1 >= 0.0f && u->beta1 < 1.0f && u->beta2 >= 0.0f && u->beta2 < 1.0f))
            return "adam: beta1 and beta2 must be in [0, 1)";
        if (!(u->eps > 0.0f) || !isfinite(u->eps))
            return "adam: eps must be > 0 (zero gradients would give 0/0)";
    }
    if (d->kind == OP_ADAMW) {
        if (!(u->weight_decay >= 0.0f) || !isfinite(u->weight_decay))
            return "adamw: weight_decay must be finite and >= 0";
        if (u->l2 != 0.0f)
            return "adamw: its decay is decoupled (weight_decay), not l2";
    } else if (u->weight_decay != 0.0f) {
        return "optimizer updates: weight_decay (decoupled) is AdamW's; the others take l2";
    }
    return NULL;
}

static OpCost update_cost(const OpDesc *d)
{
    const UpdateDesc *u = &d->u.update;
    /* flops and arrays (inout twice) per parameter */
    const bool adam = d->kind == OP_ADAM || d->kind == OP_ADAMW;
    const double per = d->kind == OP_SGD ? 2.0 : d->kind == OP_RMSPROP ? 9.0
                       : d->kind == OP_ADAM ? 12.0 : d->kind == OP_ADAMW ? 13.0
                       : u->nesterov ? 6.0 : 4.0;
    const double arrays = d->kind == OP_SGD ? 3.0 : adam ? 7.0 : 5.0;
    const double per_decayed = d->kind == OP_ADAMW ? 1.0 : 2.0;
    return (OpCost){.flops = per * (double)u->count + per_decayed * (double)u->decay_count,
                    .bytes = F * (arrays * (double)u->count + (u->clip > 0.0f ? 1.0 : 0.0))};
}

static int update_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const size_t e = d->u.update.count;
    int n = 0;
    info[n++] = ops_buf_f("w", e, BUF_INOUT);
    if (d->kind == OP_RMSPROP)
        info[n++] = ops_buf_f("acc", e, BUF_INOUT);
    else if (d->kind == OP_MOMENTUM)
        info[n++] = ops_buf_f("v", e, BUF_INOUT);
    else if (d->kind == OP_ADAM || d->kind == OP_ADAMW) {
        info[n++] = ops_buf_f("m", e, BUF_INOUT);
        info[n++] = ops_buf_f("v", e, BUF_INOUT);
    }
    info[n++] = ops_buf_f("g", e, BUF_IN);
    if (d->u.update.clip > 0.0f)
        info[n++] = ops_buf_f("sumsq", 1, BUF_IN);
    return n;
}

static void update_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    float *const *f = (float *const *)bufs;
    const UpdateDesc *u = &d->u.update;
    const bool clip = u->clip > 0.0f;
    switch (d->kind) {
    case OP_SGD: sgd_update(f[0], f[1], clip ? f[2] : NULL, u); break;
    case OP_RMSPROP: rmsprop_update(f[0], f[1], f[2], clip ? f[3] : NULL, u); break;
    case OP_MOMENTUM: momentum_update(f[0], f[1], f[2], clip ? f[3] : NULL, u); break;
    case OP_ADAMW: adamw_update(f[0], f[1], f[2], f[3], clip ? f[4] : NULL, u); break;
    default: adam_update(f[0], f[1], f[2], f[3], clip ? f[4] : NULL, u); break;
    }
}

static int update_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    int len = d->kind == OP_MOMENTUM
                  ? snprintf(out, OP_KEY_MAX, "%s count=%zu nesterov=%d", op_kind_name(d->kind),
                             d->u.update.count, (int)d->u.update.nesterov)
                  : snprintf(out, OP_KEY_MAX, "%s count=%zu", op_kind_name(d->kind),
                             d->u.update.count);
    if (d->u.update.decay_count > 0)
        len = ops_key_append(out, len, " decay=%zu", d->u.update.decay_count);
    return len;
}

static bool update_parse(KeyCursor *kc, OpDesc *r)
{
    /* Keras RMSprop and Adam defaults; lr is the SGD default of the suite's Keras models */
    UpdateDesc *u = &r->u.update;
    r->phase = PHASE_UPDATE;
    u->count = kc_size(kc, "count");
    u->lr = r->kind == OP_SGD || r->kind == OP_MOMENTUM ? 0.01f : 0.001f;
    if (r->kind == OP_RMSPROP) {
        u->rho = 0.9f;
        u->eps = 1e-7f;
    } else if (r->kind == OP_MOMENTUM) {
        u->momentum = 0.9f;
        const int nest = kc_int(kc, "nesterov");
        if (nest > 1)
            return false;
        u->nesterov = nest;
    } else if (r->kind == OP_ADAM || r->kind == OP_ADAMW) {
        u->beta1 = 0.9f;
        u->beta2 = 0.999f;
        u->eps = r->kind == OP_ADAM ? 1e-7f : 1e-8f;
        u->step = 1;
    }
    if (kc->ok && *kc->p == ' ') {
        u->decay_count = kc_size(kc, "decay");
        if (r->kind == OP_ADAMW)
            u->weight_decay = 0.01f;
        else
            u->l2 = 1e-4f;
    }
    return true;
}

/* =======================================================================================
 * ZERO, COPY (eltwise.c): x = 0 and dst = src, memset / memcpy in every phase (keys have
 * no phase and parse as fwd). FLOPs 0; bytes x (zero), src and dst (copy). Key: count.
 * ===================================================================================== */

OpDesc op_zero(OpPhase phase, size_t count)
{
    OpDesc d = {.kind = OP_ZERO, .phase = phase};
    d.u.mem = (MemDesc){.count = count};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_copy(OpPhase phase, size_t count)
{
    OpDesc d = {.kind = OP_COPY, .phase = phase};
    d.u.mem = (MemDesc){.count = count};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *zero_copy_check(const OpDesc *d)
{
    if (!ops_phase_in(d->phase, PH_ANY))
        return "zero/copy: unknown phase";
    return ops_count_check(d->u.mem.count);
}

static OpCost zero_copy_cost(const OpDesc *d)
{
    return (OpCost){.flops = 0.0,
                    .bytes = F * (d->kind == OP_COPY ? 2.0 : 1.0) * (double)d->u.mem.count};
}

static int zero_copy_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    int n = 0;
    if (d->kind == OP_ZERO) {
        info[n++] = ops_buf_f("x", d->u.mem.count, BUF_OUT);
    } else {
        info[n++] = ops_buf_f("dst", d->u.mem.count, BUF_OUT);
        info[n++] = ops_buf_f("src", d->u.mem.count, BUF_IN);
    }
    return n;
}

static void zero_copy_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    if (d->kind == OP_ZERO)
        mem_zero(bufs[0], d->u.mem.count);
    else
        mem_copy(bufs[0], bufs[1], d->u.mem.count);
}

/* the key of zero, copy, shrink and norm1: "name count=N" */
static int count_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    return snprintf(out, OP_KEY_MAX, "%s count=%zu", op_kind_name(d->kind), d->u.mem.count);
}

static bool zero_copy_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = PHASE_FWD;
    r->u.mem.count = kc_size(kc, "count");
    return true;
}

/* =======================================================================================
 * STREAM (eltwise.c), McCalpin's kernels: FLOPs copy 0, scale 1, add 1, triad 2 per
 * element; bytes per STREAM's convention (copy/scale 2 arrays, add/triad 3). Phase fwd
 * only (not in the key). Key: kernel, count; q is a value (parsed as stream.c's 3).
 * ===================================================================================== */

static const char *const STREAM_NAMES[STREAM_COUNT] = {"copy", "scale", "add", "triad"};

OpDesc op_stream(StreamKind kind, size_t count, float scalar)
{
    OpDesc d = {.kind = OP_STREAM, .phase = PHASE_FWD};
    d.u.mem = (MemDesc){.kind = kind, .count = count, .scalar = scalar};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *stream_check(const OpDesc *d)
{
    if (d->phase != PHASE_FWD)
        return "stream: phase must be fwd";
    if (d->u.mem.kind < 0 || d->u.mem.kind >= STREAM_COUNT)
        return "stream: unknown kernel";
    return ops_count_check(d->u.mem.count);
}

static OpCost stream_cost(const OpDesc *d)
{
    static const double flops[STREAM_COUNT] = {0, 1, 1, 2}, arrays[STREAM_COUNT] = {2, 2, 3, 3};
    const double n = (double)d->u.mem.count;
    return (OpCost){.flops = flops[d->u.mem.kind] * n, .bytes = F * arrays[d->u.mem.kind] * n};
}

static int stream_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    /* the one array a kernel writes is OUT; an array it does not touch is listed as IN (it
     * is still passed, so one allocation serves all four kernels) */
    static const int written[STREAM_COUNT] = {2, 1, 2, 0}; /* c, b, c, a */
    static const char *const names[3] = {"a", "b", "c"};
    int n = 0;
    for (int i = 0; i < 3; i++)
        info[n++] = ops_buf_f(names[i], d->u.mem.count, i == written[d->u.mem.kind] ? BUF_OUT : BUF_IN);
    return n;
}

static void stream_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    stream_run(bufs[0], bufs[1], bufs[2], &d->u.mem);
}

static bool stream_enums_ok(const OpDesc *d)
{
    return d->u.mem.kind >= 0 && d->u.mem.kind < STREAM_COUNT;
}

static int stream_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    return snprintf(out, OP_KEY_MAX, "%s %s count=%zu", op_kind_name(d->kind),
                    STREAM_NAMES[d->u.mem.kind], d->u.mem.count);
}

static bool stream_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = PHASE_FWD;
    r->u.mem.kind = (StreamKind)kc_word(kc, STREAM_NAMES, STREAM_COUNT);
    r->u.mem.count = kc_size(kc, "count");
    r->u.mem.scalar = 3.0f; /* stream.c's scalar */
    return true;
}

/* =======================================================================================
 * BATCHNORM (norm.c). FLOPs per element of x (the per-channel arithmetic is O(c) and
 * ignored): fwd training 6 (sum, sum of squares as a multiply-add, then subtract the mean
 * and a multiply-add), fwd inference 3, bwd_weights 4 (sum dy, subtract, multiply-add),
 * bwd_data 5 (subtract, two multiply-adds), +1 when accumulating. Bytes: training counts
 * x once although the kernel reads it twice (statistics, then normalisation; the second
 * read mostly from cache). Key: phase, shape, train= (training and inference forward are
 * different kernels), acc= (0 for FWD). Parsed: Keras' eps 1e-3, momentum 0.99.
 * ===================================================================================== */

/* (n, c, spatial) shapes of the normalisation layers */
static bool ncs_ok(int n, int c, int spatial)
{
    return n >= 1 && c >= 1 && spatial >= 1 && (double)n * c * spatial <= OPS_MAX_ELEMS;
}

OpDesc op_batchnorm(OpPhase phase, int n, int c, int spatial, float eps, float momentum,
                    bool training)
{
    OpDesc d = {.kind = OP_BATCHNORM, .phase = phase};
    d.u.bn = (BnDesc){.n = n, .c = c, .spatial = spatial, .eps = eps, .momentum = momentum,
                      .training = training, .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *bn_check(const OpDesc *d)
{
    const BnDesc *b = &d->u.bn;
    if (!ops_phase_in(d->phase, PH_TRAIN))
        return "batchnorm: phase must be fwd, bwd_data or bwd_weights";
    if (!ncs_ok(b->n, b->c, b->spatial))
        return "batchnorm: n, c, spatial must be >= 1 (and the tensor at most 2^40)";
    if (!(b->eps > 0.0f) || !isfinite(b->eps))
        return "batchnorm: eps must be finite and > 0";
    if (!(b->momentum >= 0.0f && b->momentum <= 1.0f))
        return "batchnorm: momentum must be in [0, 1]";
    if (d->phase != PHASE_FWD && !b->training)
        return "batchnorm: backward phases need training = true (they differentiate "
               "through the batch statistics)";
    return NULL;
}

static OpCost bn_cost(const OpDesc *d)
{
    const BnDesc *b = &d->u.bn;
    const double e = (double)b->n * b->c * b->spatial, ch = b->c;
    const double acc = b->accumulate ? 2.0 : 1.0;
    if (d->phase == PHASE_FWD && b->training) /* x, y; gamma, beta, mean, invstd; running
                                                  mean and variance read and written */
        return (OpCost){.flops = 6.0 * e, .bytes = F * (2.0 * e + 8.0 * ch)};
    if (d->phase == PHASE_FWD)
        return (OpCost){.flops = 3.0 * e, .bytes = F * (2.0 * e + 4.0 * ch)};
    if (d->phase == PHASE_BWD_WEIGHTS)
        return (OpCost){.flops = 4.0 * e, .bytes = F * (2.0 * e + 2.0 * ch + 2.0 * acc * ch)};
    return (OpCost){.flops = (b->accumulate ? 6.0 : 5.0) * e,
                    .bytes = F * ((1.0 + acc) * e + e + 6.0 * ch)};
}

static int bn_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const BnDesc *b = &d->u.bn;
    const size_t e = (size_t)b->n * (size_t)b->c * (size_t)b->spatial, c = (size_t)b->c;
    const BufRole acc = b->accumulate ? BUF_INOUT : BUF_OUT;
    int n = 0;
    if (d->phase == PHASE_FWD && b->training) {
        info[n++] = ops_buf_f("y", e, BUF_OUT);
        info[n++] = ops_buf_f("mean", c, BUF_OUT);
        info[n++] = ops_buf_f("invstd", c, BUF_OUT);
        info[n++] = ops_buf_f("run_mean", c, BUF_INOUT);
        info[n++] = ops_buf_f("run_var", c, BUF_INOUT);
        info[n++] = ops_buf_f("x", e, BUF_IN);
        info[n++] = ops_buf_f("gamma", c, BUF_IN);
        info[n++] = ops_buf_f("beta", c, BUF_IN);
    } else if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("y", e, BUF_OUT);
        info[n++] = ops_buf_f("x", e, BUF_IN);
        info[n++] = ops_buf_f("gamma", c, BUF_IN);
        info[n++] = ops_buf_f("beta", c, BUF_IN);
        info[n++] = ops_buf_f("run_mean", c, BUF_IN);
        info[n++] = ops_buf_f("run_var", c, BUF_IN);
    } else if (d->phase == PHASE_BWD_WEIGHTS) {
        info[n++] = ops_buf_f("dgamma", c, acc);
        info[n++] = ops_buf_f("dbeta", c, acc);
        info[n++] = ops_buf_f("dy", e, BUF_IN);
        info[n++] = ops_buf_f("x", e, BUF_IN);
        info[n++] = ops_buf_f("mean", c, BUF_IN);
        info[n++] = ops_buf_f("invstd", c, BUF_IN);
    } else {
        info[n++] = ops_buf_f("dx", e, acc);
        info[n++] = ops_buf_f("dy", e, BUF_IN);
        info[n++] = ops_buf_f("x", e, BUF_IN);
        info[n++] = ops_buf_f("gamma", c, BUF_IN);
        info[n++] = ops_buf_f("mean", c, BUF_IN);
        info[n++] = ops_buf_f("invstd", c, BUF_IN);
        info[n++] = ops_buf_f("dgamma", c, BUF_IN);
        info[n++] = ops_buf_f("dbeta", c, BUF_IN);
    }
    return n;
}

static void bn_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    float *const *f = (float *const *)bufs;
    if (d->phase == PHASE_FWD && d->u.bn.training)
        batchnorm_forward_train(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], &d->u.bn);
    else if (d->phase == PHASE_FWD)
        batchnorm_forward_infer(f[0], f[1], f[2], f[3], f[4], f[5], &d->u.bn);
    else if (d->phase == PHASE_BWD_WEIGHTS)
        batchnorm_backward_weights(f[0], f[1], f[2], f[3], f[4], f[5], &d->u.bn);
    else
        batchnorm_backward_data(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], &d->u.bn);
}

static int bn_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    const BnDesc *b = &d->u.bn;
    return snprintf(out, OP_KEY_MAX, "%s %s n=%d c=%d spatial=%d train=%d acc=%d",
                    op_kind_name(d->kind), op_phase_name(d->phase), b->n, b->c, b->spatial,
                    (int)b->training, d->phase != PHASE_FWD && b->accumulate);
}

static bool bn_parse(KeyCursor *kc, OpDesc *r)
{
    BnDesc *b = &r->u.bn;
    r->phase = kc_phase(kc);
    b->n = kc_int(kc, "n");
    b->c = kc_int(kc, "c");
    b->spatial = kc_int(kc, "spatial");
    const int train = kc_int(kc, "train"), acc = kc_int(kc, "acc");
    if (train > 1 || acc > 1)
        return false;
    b->training = train;
    b->accumulate = acc;
    b->eps = 1e-3f;
    b->momentum = 0.99f;
    return true;
}

/* =======================================================================================
 * LRN (norm.c). FLOPs per element fwd 2*size + 6 (size multiply-adds for the window of
 * squares, 2 for k + alpha/size * sum, pow as log, multiply, exp: 3, times x: 1); bwd
 * size + 9 (dy*y/scale 2, size window adds, pow 3, dy*pow 1, the multiply by
 * 2*alpha*beta/size * x 2, subtract 1), +1 when accumulating. Key: phase, shape, size,
 * acc (0 for FWD). Parsed: Caffe AlexNet's alpha 1e-4, beta 0.75, k 1.
 * ===================================================================================== */

OpDesc op_lrn(OpPhase phase, int n, int c, int spatial, int size, float alpha, float beta,
              float k)
{
    OpDesc d = {.kind = OP_LRN, .phase = phase};
    d.u.lrn = (LrnDesc){.n = n, .c = c, .spatial = spatial, .size = size, .alpha = alpha,
                        .beta = beta, .k = k, .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *lrn_check(const OpDesc *d)
{
    const LrnDesc *l = &d->u.lrn;
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
        return "lrn: phase must be fwd or bwd_data";
    if (!ncs_ok(l->n, l->c, l->spatial))
        return "lrn: n, c, spatial must be >= 1 (and the tensor at most 2^40)";
    if (l->size < 1 || l->size > 255 || l->size % 2 == 0)
        return "lrn: size must be odd and in [1, 255] (Caffe: odd local_size)";
    if (!(l->alpha >= 0.0f) || !isfinite(l->alpha) || !isfinite(l->beta))
        return "lrn: alpha must be finite and >= 0, beta finite";
    if (!(l->k >= 1e-30f) || !isfinite(l->k))
        return "lrn: k must be finite and >= 1e-30 (scale >= k is raised to -beta)";
    return NULL;
}

static OpCost lrn_cost(const OpDesc *d)
{
    const LrnDesc *l = &d->u.lrn;
    const double e = (double)l->n * l->c * l->spatial;
    if (d->phase == PHASE_FWD) /* x; y, scale */
        return (OpCost){.flops = (2.0 * l->size + 6.0) * e, .bytes = F * 3.0 * e};
    /* dx; dy, x, y, scale */
    return (OpCost){.flops = (l->size + (l->accumulate ? 10.0 : 9.0)) * e,
                    .bytes = F * (l->accumulate ? 6.0 : 5.0) * e};
}

static int lrn_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const LrnDesc *l = &d->u.lrn;
    const size_t e = (size_t)l->n * (size_t)l->c * (size_t)l->spatial;
    int n = 0;
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("y", e, BUF_OUT);
        info[n++] = ops_buf_f("scale", e, BUF_OUT);
        info[n++] = ops_buf_f("x", e, BUF_IN);
    } else {
        info[n++] = ops_buf_f("dx", e, l->accumulate ? BUF_INOUT : BUF_OUT);
        info[n++] = ops_buf_f("dy", e, BUF_IN);
        info[n++] = ops_buf_f("x", e, BUF_IN);
        info[n++] = ops_buf_f("y", e, BUF_IN);
        info[n++] = ops_buf_f("scale", e, BUF_IN);
    }
    return n;
}

static void lrn_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    float *const *f = (float *const *)bufs;
    if (d->phase == PHASE_FWD)
        lrn_forward(f[0], f[1], f[2], &d->u.lrn);
    else
        lrn_backward_data(f[0], f[1], f[2], f[3], f[4], &d->u.lrn);
}

static int lrn_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    const LrnDesc *l = &d->u.lrn;
    return snprintf(out, OP_KEY_MAX, "%s %s n=%d c=%d spatial=%d size=%d acc=%d",
                    op_kind_name(d->kind), op_phase_name(d->phase), l->n, l->c, l->spatial,
                    l->size, d->phase != PHASE_FWD && l->accumulate);
}

static bool lrn_parse(KeyCursor *kc, OpDesc *r)
{
    LrnDesc *l = &r->u.lrn;
    r->phase = kc_phase(kc);
    l->n = kc_int(kc, "n");
    l->c = kc_int(kc, "c");
    l->spatial = kc_int(kc, "spatial");
    l->size = kc_int(kc, "size");
    l->accumulate = kc_int(kc, "acc") != 0;
    l->alpha = 1e-4f;
    l->beta = 0.75f;
    l->k = 1.0f;
    return true;
}

/* =======================================================================================
 * DROPOUT (misc.c): FLOPs fwd 2 per element (compare, multiply; the integer hash is not
 * floating point), bwd 1; bytes x, y, mask (and the step counter, fwd). Key: phase (the
 * forward hashes, the backward multiplies), count. Parsed: rate 0.5, seed 0.
 * ===================================================================================== */

OpDesc op_dropout(OpPhase phase, size_t count, float rate, uint32_t seed)
{
    OpDesc d = {.kind = OP_DROPOUT, .phase = phase};
    d.u.dropout = (DropoutDesc){.count = count, .rate = rate, .seed = seed};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *drop_check(const OpDesc *d)
{
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
        return "dropout: phase must be fwd or bwd_data";
    if (!(d->u.dropout.rate >= 0.0f && d->u.dropout.rate < 1.0f))
        return "dropout: rate must be in [0, 1)";
    return ops_count_check(d->u.dropout.count);
}

static OpCost drop_cost(const OpDesc *d)
{
    const double e = (double)d->u.dropout.count;
    return (OpCost){.flops = (d->phase == PHASE_FWD ? 2.0 : 1.0) * e,
                    .bytes = F * 3.0 * e + (d->phase == PHASE_FWD ? sizeof(int32_t) : 0.0)};
}

static int drop_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const size_t e = d->u.dropout.count;
    int n = 0;
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("y", e, BUF_OUT);
        info[n++] = ops_buf_f("mask", e, BUF_OUT);
        info[n++] = ops_buf_f("x", e, BUF_IN);
        info[n++] = ops_buf_i32("step", 1);
    } else {
        info[n++] = ops_buf_f("dx", e, BUF_OUT);
        info[n++] = ops_buf_f("dy", e, BUF_IN);
        info[n++] = ops_buf_f("mask", e, BUF_IN);
    }
    return n;
}

static void drop_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    if (d->phase == PHASE_FWD)
        dropout_forward(bufs[0], bufs[1], bufs[2], bufs[3], &d->u.dropout);
    else
        dropout_backward_data(bufs[0], bufs[1], bufs[2], &d->u.dropout);
}

static int drop_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    return snprintf(out, OP_KEY_MAX, "%s %s count=%zu", op_kind_name(d->kind),
                    op_phase_name(d->phase), d->u.dropout.count);
}

static bool drop_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = kc_phase(kc);
    r->u.dropout.count = kc_size(kc, "count");
    r->u.dropout.rate = 0.5f;
    return true;
}

/* =======================================================================================
 * CHANNEL_COPY (misc.c): FLOPs 0 (1 per element when accumulating); bytes the slice it
 * writes and x, not the rest of y. Key: phase, shape, offset, acc (0 for FWD).
 * ===================================================================================== */

OpDesc op_channel_copy(OpPhase phase, int n, int c_dst, int c_src, int offset, int spatial)
{
    OpDesc d = {.kind = OP_CHANNEL_COPY, .phase = phase};
    d.u.chan = (ChannelDesc){.n = n, .c_dst = c_dst, .c_src = c_src, .offset = offset,
                             .spatial = spatial, .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *chan_check(const OpDesc *d)
{
    const ChannelDesc *c = &d->u.chan;
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
        return "channel_copy: phase must be fwd or bwd_data";
    if (c->n < 1 || c->c_dst < 1 || c->c_src < 1 || c->spatial < 1)
        return "channel_copy: n, c_dst, c_src, spatial must be >= 1";
    if (c->offset < 0 || (long)c->offset + c->c_src > c->c_dst)
        return "channel_copy: the slice [offset, offset + c_src) must lie in [0, c_dst)";
    if ((double)c->n * c->c_dst * c->spatial > OPS_MAX_ELEMS)
        return "channel_copy: tensor too large";
    return NULL;
}

static OpCost chan_cost(const OpDesc *d)
{
    const ChannelDesc *ch = &d->u.chan;
    const double e = (double)ch->n * ch->c_src * ch->spatial;
    const bool acc = d->phase != PHASE_FWD && ch->accumulate;
    return (OpCost){.flops = acc ? e : 0.0, .bytes = F * (acc ? 3.0 : 2.0) * e};
}

static int chan_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const ChannelDesc *ch = &d->u.chan;
    const size_t big = (size_t)ch->n * (size_t)ch->c_dst * (size_t)ch->spatial;
    const size_t small = (size_t)ch->n * (size_t)ch->c_src * (size_t)ch->spatial;
    int n = 0;
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("y", big, BUF_INOUT); /* the rest of y is kept */
        info[n++] = ops_buf_f("x", small, BUF_IN);
    } else {
        info[n++] = ops_buf_f("dx", small, ch->accumulate ? BUF_INOUT : BUF_OUT);
        info[n++] = ops_buf_f("dy", big, BUF_IN);
    }
    return n;
}

static void chan_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    if (d->phase == PHASE_FWD)
        channel_copy_forward(bufs[0], bufs[1], &d->u.chan);
    else
        channel_copy_backward_data(bufs[0], bufs[1], &d->u.chan);
}

static int chan_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    const ChannelDesc *c = &d->u.chan;
    return snprintf(out, OP_KEY_MAX, "%s %s n=%d c_dst=%d c_src=%d offset=%d spatial=%d acc=%d",
                    op_kind_name(d->kind), op_phase_name(d->phase), c->n, c->c_dst, c->c_src,
                    c->offset, c->spatial, d->phase != PHASE_FWD && c->accumulate);
}

static bool chan_parse(KeyCursor *kc, OpDesc *r)
{
    ChannelDesc *c = &r->u.chan;
    r->phase = kc_phase(kc);
    c->n = kc_int(kc, "n");
    c->c_dst = kc_int(kc, "c_dst");
    c->c_src = kc_int(kc, "c_src");
    c->offset = kc_int(kc, "offset");
    c->spatial = kc_int(kc, "spatial");
    c->accumulate = kc_int(kc, "acc") != 0;
    return true;
}

/* =======================================================================================
 * TRANSPOSE (misc.c): FLOPs 0; bytes x read and y written. Key: phase, rows, cols.
 * ===================================================================================== */

OpDesc op_transpose(OpPhase phase, int rows, int cols)
{
    OpDesc d = {.kind = OP_TRANSPOSE, .phase = phase};
    d.u.transpose = (TransposeDesc){.rows = rows, .cols = cols};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *transpose_check(const OpDesc *d)
{
    const TransposeDesc *t = &d->u.transpose;
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
        return "transpose: phase must be fwd or bwd_data";
    if (t->rows < 1 || t->cols < 1)
        return "transpose: rows and cols must be >= 1";
    if ((double)t->rows * t->cols > OPS_MAX_ELEMS)
        return "transpose: tensor too large";
    return NULL;
}

static OpCost transpose_cost(const OpDesc *d)
{
    return (OpCost){.flops = 0, .bytes = F * 2.0 * (double)d->u.transpose.rows * (double)d->u.transpose.cols};
}

static int transpose_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const size_t n = (size_t)d->u.transpose.rows * (size_t)d->u.transpose.cols;
    info[0] = ops_buf_f("y", n, BUF_OUT);
    info[1] = ops_buf_f("x", n, BUF_IN);
    return 2;
}

static void transpose_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    transpose_run(bufs[0], bufs[1], &d->u.transpose);
}

static int transpose_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    return snprintf(out, OP_KEY_MAX, "%s %s rows=%d cols=%d", op_kind_name(d->kind), op_phase_name(d->phase),
                    d->u.transpose.rows, d->u.transpose.cols);
}

static bool transpose_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = kc_phase(kc);
    r->u.transpose.rows = kc_int(kc, "rows");
    r->u.transpose.cols = kc_int(kc, "cols");
    return true;
}

/* =======================================================================================
 * ALLREDUCE (comm.c): the tensor-parallel group's sum. FLOPs (ranks - 1) adds per element;
 * bytes x read and y written here (the links' traffic is the communication model's to
 * price, not the memory roofline's). Key: phase, count, ranks.
 * ===================================================================================== */

OpDesc op_allreduce(OpPhase phase, size_t count, int ranks)
{
    OpDesc d = {.kind = OP_ALLREDUCE, .phase = phase};
    d.u.allreduce = (AllreduceDesc){.count = count, .ranks = ranks};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *allreduce_check(const OpDesc *d)
{
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA) | PH(PHASE_UPDATE)))
        return "allreduce: phase must be fwd, bwd_data or update";
    if (d->u.allreduce.ranks < 1)
        return "allreduce: ranks must be >= 1";
    return ops_count_check(d->u.allreduce.count);
}

static OpCost allreduce_cost(const OpDesc *d)
{
    const double e = (double)d->u.allreduce.count;
    return (OpCost){.flops = (d->u.allreduce.ranks - 1.0) * e, .bytes = F * 2.0 * e};
}

static int allreduce_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    info[0] = ops_buf_f("y", d->u.allreduce.count, BUF_OUT);
    info[1] = ops_buf_f("x", d->u.allreduce.count, BUF_IN);
    return 2;
}

static void allreduce_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    /* the plan was built for this group's size: trainer_init checks it before any step */
    OPS_ASSERT(d->u.allreduce.ranks == comm_tp_size());
    comm_tp_allreduce_f32(bufs[0], bufs[1], d->u.allreduce.count);
}

static int allreduce_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    return snprintf(out, OP_KEY_MAX, "%s %s count=%zu ranks=%d", op_kind_name(d->kind), op_phase_name(d->phase),
                    d->u.allreduce.count, d->u.allreduce.ranks);
}

static bool allreduce_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = kc_phase(kc);
    r->u.allreduce.count = kc_size(kc, "count");
    r->u.allreduce.ranks = kc_int(kc, "ranks");
    return true;
}

/* =======================================================================================
 * AXPBY (misc.c): y = alpha a + beta b; FLOPs 3, bytes 3 arrays per element. One kernel
 * in every phase (no phase in the key, parsed as fwd); alpha and beta are values (parsed
 * as 1 and 1). Key: count.
 * ===================================================================================== */

OpDesc op_axpby(OpPhase phase, size_t count, float alpha, float beta)
{
    OpDesc d = {.kind = OP_AXPBY, .phase = phase};
    d.u.axpby = (AxpbyDesc){.count = count, .alpha = alpha, .beta = beta};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *axpby_check(const OpDesc *d)
{
    if (!ops_phase_in(d->phase, PH_ANY))
        return "axpby: unknown phase";
    if (!isfinite(d->u.axpby.alpha) || !isfinite(d->u.axpby.beta))
        return "axpby: alpha and beta must be finite";
    return ops_count_check(d->u.axpby.count);
}

static OpCost axpby_cost(const OpDesc *d)
{
    return (OpCost){.flops = 3.0 * (double)d->u.axpby.count,
                    .bytes = F * 3.0 * (double)d->u.axpby.count};
}

static int axpby_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    int n = 0;
    info[n++] = ops_buf_f("y", d->u.axpby.count, BUF_OUT);
    info[n++] = ops_buf_f("a", d->u.axpby.count, BUF_IN);
    info[n++] = ops_buf_f("b", d->u.axpby.count, BUF_IN);
    return n;
}

static void axpby_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    axpby_run(bufs[0], bufs[1], bufs[2], &d->u.axpby);
}

static int axpby_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    return snprintf(out, OP_KEY_MAX, "%s count=%zu", op_kind_name(d->kind), d->u.axpby.count);
}

static bool axpby_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = PHASE_FWD;
    r->u.axpby.count = kc_size(kc, "count");
    r->u.axpby.alpha = r->u.axpby.beta = 1.0f;
    return true;
}

/* =======================================================================================
 * EMBEDDING (misc.c): FLOPs fwd 0, bwd 1 per element of dy; bytes the rows and ids (fwd);
 * dy, the ids and either all of dW written (overwrite: it is cleared) or the min(n, vocab)
 * rows it reads and writes (accumulate; bwd); a positional lookup has no ids and touches
 * n / repeat rows. Key: phase, n, vocab, dim, acc (0 for FWD), then " pos=R" for a
 * positional lookup, " part=1" for a vocabulary-parallel block (priced as a whole lookup:
 * the rows it does not hold are written as zeros).
 * ===================================================================================== */

OpDesc op_embedding(OpPhase phase, int n, int vocab, int dim)
{
    OpDesc d = {.kind = OP_EMBEDDING, .phase = phase};
    d.u.embed = (EmbedDesc){.n = n, .vocab = vocab, .dim = dim,
                            .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_embedding_part(OpPhase phase, int n, int vocab, int dim)
{
    OpDesc d = op_embedding(phase, n, vocab, dim);
    d.u.embed.part = true;
    return d;
}

OpDesc op_embedding_positions(OpPhase phase, int n, int repeat, int positions, int dim)
{
    OpDesc d = {.kind = OP_EMBEDDING, .phase = phase};
    d.u.embed = (EmbedDesc){.n = n, .vocab = positions, .dim = dim,
                            .accumulate = phase != PHASE_FWD, .repeat = repeat};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *embed_check(const OpDesc *d)
{
    const EmbedDesc *e = &d->u.embed;
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_WEIGHTS)))
        return "embedding: phase must be fwd or bwd_weights (ids have no gradient)";
    if (e->n < 1 || e->vocab < 1 || e->dim < 1)
        return "embedding: n, vocab, dim must be >= 1";
    if ((double)e->n * e->dim > OPS_MAX_ELEMS || (double)e->vocab * e->dim > OPS_MAX_ELEMS)
        return "embedding: tensor too large";
    if (e->repeat < 0 || (e->repeat > 0 && (e->n % e->repeat != 0 || e->n / e->repeat > e->vocab)))
        return "embedding: positions need n a multiple of repeat and n / repeat <= the table's rows";
    if (e->part && e->repeat > 0)
        return "embedding: a positional lookup is not vocabulary-parallel";
    return NULL;
}

static OpCost embed_cost(const OpDesc *d)
{
    const EmbedDesc *e = &d->u.embed;
    const double rows = (double)e->n * e->dim, ids = e->repeat > 0 ? 0.0 : sizeof(int32_t) * (double)e->n;
    if (d->phase == PHASE_FWD)
        return (OpCost){.flops = 0.0, .bytes = F * 2.0 * rows + ids};
    const double distinct = e->repeat > 0 ? (double)(e->n / e->repeat) : (double)(e->n < e->vocab ? e->n : e->vocab);
    const double touched = distinct * e->dim;
    const double dw = e->accumulate ? 2.0 * touched : (double)e->vocab * e->dim;
    return (OpCost){.flops = rows, .bytes = F * (rows + dw) + ids};
}

static int embed_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const EmbedDesc *e = &d->u.embed;
    const size_t rows = (size_t)e->n * (size_t)e->dim, w = (size_t)e->vocab * (size_t)e->dim;
    int n = 0;
    /* a positional lookup has no ids buffer */
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("y", rows, BUF_OUT);
        if (e->repeat == 0)
            info[n++] = ops_buf_i32("ids", (size_t)e->n);
        info[n++] = ops_buf_f("W", w, BUF_IN);
    } else {
        info[n++] = ops_buf_f("dW", w, e->accumulate ? BUF_INOUT : BUF_OUT);
        info[n++] = ops_buf_f("dy", rows, BUF_IN);
        if (e->repeat == 0)
            info[n++] = ops_buf_i32("ids", (size_t)e->n);
    }
    return n;
}

static void embed_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    const bool pos = d->u.embed.repeat > 0;
    if (d->phase == PHASE_FWD)
        embedding_forward(bufs[0], pos ? NULL : bufs[1], bufs[pos ? 1 : 2], &d->u.embed);
    else
        embedding_backward_weights(bufs[0], bufs[1], pos ? NULL : bufs[2], &d->u.embed);
}

static int embed_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    const EmbedDesc *e = &d->u.embed;
    int len = snprintf(out, OP_KEY_MAX, "%s %s n=%d vocab=%d dim=%d acc=%d", op_kind_name(d->kind),
                       op_phase_name(d->phase), e->n, e->vocab, e->dim,
                       d->phase != PHASE_FWD && e->accumulate);
    if (e->repeat > 0)
        len = ops_key_append(out, len, " pos=%d", e->repeat);
    if (e->part)
        len = ops_key_append(out, len, " part=1");
    return len;
}

static bool embed_parse(KeyCursor *kc, OpDesc *r)
{
    EmbedDesc *e = &r->u.embed;
    r->phase = kc_phase(kc);
    e->n = kc_int(kc, "n");
    e->vocab = kc_int(kc, "vocab");
    e->dim = kc_int(kc, "dim");
    const int acc = kc_int(kc, "acc");
    if (acc > 1)
        return false;
    e->accumulate = acc;
    if (kc_next_is(kc, " pos=")) {
        e->repeat = kc_int(kc, "pos");
        if (e->repeat < 1)
            return false;
    }
    if (kc_next_is(kc, " part=")) {
        if (kc_int(kc, "part") != 1)
            return false;
        e->part = true;
    }
    return true;
}

/* =======================================================================================
 * KL_SPARSITY (misc.c): FLOPs fwd 1 per element of a (column sums) + 12 per unit (two
 * logs, divisions), bwd 1 per element + 6 per unit; bytes a, rho_hat and the loss read
 * and written (fwd), da read and written and rho_hat (bwd). Key: phase, n, units.
 * Parsed: UFLDL's rho 0.01, beta 3.
 * ===================================================================================== */

OpDesc op_kl_sparsity(OpPhase phase, int n, int units, float rho, float beta)
{
    OpDesc d = {.kind = OP_KL_SPARSITY, .phase = phase};
    d.u.kl = (KlDesc){.n = n, .units = units, .rho = rho, .beta = beta};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *kl_check(const OpDesc *d)
{
    const KlDesc *k = &d->u.kl;
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
        return "kl_sparsity: phase must be fwd or bwd_data";
    if (k->n < 1 || k->units < 1 || (double)k->n * k->units > OPS_MAX_ELEMS)
        return "kl_sparsity: n and units must be >= 1";
    if (!(k->rho > 0.0f && k->rho < 1.0f) || !(k->beta >= 0.0f) || !isfinite(k->beta))
        return "kl_sparsity: rho must be in (0, 1) and beta finite and >= 0";
    return NULL;
}

static OpCost kl_cost(const OpDesc *d)
{
    const double e = (double)d->u.kl.n * d->u.kl.units, u = d->u.kl.units;
    if (d->phase == PHASE_FWD) /* a; rho_hat; loss read and written */
        return (OpCost){.flops = e + 12.0 * u, .bytes = F * (e + u + 2.0)};
    return (OpCost){.flops = e + 6.0 * u, .bytes = F * (2.0 * e + u)}; /* da twice; rho_hat */
}

static int kl_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const size_t e = (size_t)d->u.kl.n * (size_t)d->u.kl.units, u = (size_t)d->u.kl.units;
    int n = 0;
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("loss", 1, BUF_INOUT);
        info[n++] = ops_buf_f("rho_hat", u, BUF_OUT);
        info[n++] = ops_buf_f("a", e, BUF_IN);
    } else {
        info[n++] = ops_buf_f("da", e, BUF_INOUT);
        info[n++] = ops_buf_f("rho_hat", u, BUF_IN);
    }
    return n;
}

static void kl_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    if (d->phase == PHASE_FWD)
        kl_sparsity_forward(bufs[0], bufs[1], bufs[2], &d->u.kl);
    else
        kl_sparsity_backward_data(bufs[0], bufs[1], &d->u.kl);
}

static int kl_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    return snprintf(out, OP_KEY_MAX, "%s %s n=%d units=%d", op_kind_name(d->kind),
                    op_phase_name(d->phase), d->u.kl.n, d->u.kl.units);
}

static bool kl_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = kc_phase(kc);
    r->u.kl.n = kc_int(kc, "n");
    r->u.kl.units = kc_int(kc, "units");
    r->u.kl.rho = 0.01f;
    r->u.kl.beta = 3.0f;
    return true;
}

/* =======================================================================================
 * SHRINK, NORM1 (misc.c), FISTA's, and SUMSQ, the gradients' norm for clipping: FLOPs
 * shrink 3 per element (abs, subtract, max), norm1 and sumsq 2 (abs or square, add); bytes
 * x and y (shrink), x and the result (norm1, sumsq). One kernel in every phase (no phase
 * in the key, parsed as fwd); the threshold is a value (parsed as 0.1). Key: count.
 * ===================================================================================== */

OpDesc op_shrink(OpPhase phase, size_t count, float threshold)
{
    OpDesc d = {.kind = OP_SHRINK, .phase = phase};
    d.u.mem = (MemDesc){.count = count, .scalar = threshold};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_norm1(OpPhase phase, size_t count)
{
    OpDesc d = {.kind = OP_NORM1, .phase = phase};
    d.u.mem = (MemDesc){.count = count};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *shrink_check(const OpDesc *d)
{
    if (!ops_phase_in(d->phase, PH_ANY))
        return "shrink: unknown phase";
    if (!(d->u.mem.scalar >= 0.0f) || !isfinite(d->u.mem.scalar))
        return "shrink: the threshold must be finite and >= 0";
    return ops_count_check(d->u.mem.count);
}

OpDesc op_sumsq(OpPhase phase, size_t count)
{
    OpDesc d = {.kind = OP_SUMSQ, .phase = phase};
    d.u.mem = (MemDesc){.count = count};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *norm1_check(const OpDesc *d)
{
    if (!ops_phase_in(d->phase, PH_ANY))
        return d->kind == OP_SUMSQ ? "sumsq: unknown phase" : "norm1: unknown phase";
    return ops_count_check(d->u.mem.count);
}

static OpCost shrink_norm1_cost(const OpDesc *d)
{
    const double e = (double)d->u.mem.count;
    if (d->kind == OP_SHRINK)
        return (OpCost){.flops = 3.0 * e, .bytes = F * 2.0 * e};
    return (OpCost){.flops = 2.0 * e, .bytes = F * (e + 1.0)};
}

static int shrink_norm1_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    int n = 0;
    info[n++] = d->kind == OP_SHRINK ? ops_buf_f("y", d->u.mem.count, BUF_OUT)
                                     : ops_buf_f("out", 1, BUF_OUT);
    info[n++] = ops_buf_f("x", d->u.mem.count, BUF_IN);
    return n;
}

static void shrink_norm1_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    if (d->kind == OP_SHRINK)
        shrink_run(bufs[0], bufs[1], &d->u.mem);
    else if (d->kind == OP_SUMSQ)
        sumsq_run(bufs[0], bufs[1], &d->u.mem);
    else
        norm1_run(bufs[0], bufs[1], &d->u.mem);
}

static bool shrink_norm1_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = PHASE_FWD;
    r->u.mem.count = kc_size(kc, "count");
    r->u.mem.scalar = r->kind == OP_SHRINK ? 0.1f : 0.0f;
    return true;
}

/* =======================================================================================
 * GRU_CELL (lstm.c): FLOPs 15 per (row, unit) in both phases (3 bias adds, 2 sigmoids at
 * 4, r*hn, act 1, h 3; the mirror image); bytes fwd pre (3), h_prev, h, act (4) per
 * (row, unit) (b, per unit, ignored); bwd dh, act (4), h_prev, dpre (3), dh_prev.
 * Key: phase, activation, batch, hidden.
 * ===================================================================================== */

OpDesc op_gru_cell(OpPhase phase, int batch, int hidden, ActKind act)
{
    OpDesc d = {.kind = OP_GRU_CELL, .phase = phase};
    d.u.gru = (GruCellDesc){.batch = batch, .hidden = hidden, .act = act};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *gru_check(const OpDesc *d)
{
    const GruCellDesc *g = &d->u.gru;
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
        return "gru_cell: phase must be fwd or bwd_data (dbias is an OP_BIAS)";
    if (g->batch < 1 || g->hidden < 1)
        return "gru_cell: batch and hidden must be >= 1";
    if (g->act != ACT_RELU && g->act != ACT_TANH)
        return "gru_cell: act must be relu or tanh";
    if ((double)g->batch * g->hidden * 4 > OPS_MAX_ELEMS || (double)g->hidden * 4 > INT_MAX)
        return "gru_cell: tensor too large";
    return NULL;
}

static OpCost gru_cost(const OpDesc *d)
{
    const double e = (double)d->u.gru.batch * d->u.gru.hidden;
    return (OpCost){.flops = 15.0 * e, .bytes = F * (d->phase == PHASE_FWD ? 9.0 : 10.0) * e};
}

static int gru_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const size_t e = (size_t)d->u.gru.batch * (size_t)d->u.gru.hidden, h = (size_t)d->u.gru.hidden;
    int n = 0;
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("h_t", e, BUF_OUT);
        info[n++] = ops_buf_f("act", 4 * e, BUF_OUT);
        info[n++] = ops_buf_f("pre", 3 * e, BUF_IN);
        info[n++] = ops_buf_f("h_prev", e, BUF_IN);
        info[n++] = ops_buf_f("b", 3 * h, BUF_IN);
    } else {
        info[n++] = ops_buf_f("dpre", 3 * e, BUF_OUT);
        info[n++] = ops_buf_f("dh_prev", e, BUF_OUT);
        info[n++] = ops_buf_f("dh_t", e, BUF_IN);
        info[n++] = ops_buf_f("act", 4 * e, BUF_IN);
        info[n++] = ops_buf_f("h_prev", e, BUF_IN);
    }
    return n;
}

static void gru_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    float *const *f = (float *const *)bufs;
    if (d->phase == PHASE_FWD)
        gru_cell_forward(f[0], f[1], f[2], f[3], f[4], &d->u.gru);
    else
        gru_cell_backward(f[0], f[1], f[2], f[3], f[4], &d->u.gru);
}

static bool gru_enums_ok(const OpDesc *d)
{
    return d->u.gru.act >= 0 && d->u.gru.act < ACT_COUNT;
}

static int gru_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    return snprintf(out, OP_KEY_MAX, "%s %s %s batch=%d hidden=%d", op_kind_name(d->kind),
                    op_phase_name(d->phase), ACT_NAMES[d->u.gru.act], d->u.gru.batch,
                    d->u.gru.hidden);
}

static bool gru_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = kc_phase(kc);
    r->u.gru.act = (ActKind)kc_word(kc, ACT_NAMES, ACT_COUNT);
    r->u.gru.batch = kc_int(kc, "batch");
    r->u.gru.hidden = kc_int(kc, "hidden");
    return true;
}

/* =======================================================================================
 * SPMM (spmm.c): FLOPs 2 per nonzero of A per column of B; bytes the CSR arrays (values,
 * column indices, row pointers), B and C once. Phase fwd only (not in the key).
 * Key: m, n, k, nnz_row.
 * ===================================================================================== */

OpDesc op_spmm(int m, int n, int k, double sparsity)
{
    OPS_ASSERT(sparsity >= 0.0 && sparsity < 1.0);
    long nnz = lround((double)k * (1.0 - sparsity));
    OpDesc d = {.kind = OP_SPMM, .phase = PHASE_FWD};
    d.u.spmm = (SpmmDesc){.m = m, .n = n, .k = k, .nnz_per_row = (int)(nnz < 1 ? 1 : nnz)};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *spmm_check(const OpDesc *d)
{
    const SpmmDesc *m = &d->u.spmm;
    if (d->phase != PHASE_FWD)
        return "spmm: phase must be fwd";
    if (m->m < 1 || m->n < 1 || m->k < 1)
        return "spmm: m, n, k must be >= 1";
    if (m->nnz_per_row < 1 || m->nnz_per_row > m->k)
        return "spmm: nnz_per_row must be in [1, k]";
    if ((double)m->m * m->nnz_per_row > INT_MAX || (double)m->m * m->n > OPS_MAX_ELEMS ||
        (double)m->k * m->n > OPS_MAX_ELEMS)
        return "spmm: matrix too large (CSR indices are int32)";
    return NULL;
}

static OpCost spmm_cost(const OpDesc *d)
{
    const SpmmDesc *m = &d->u.spmm;
    const double nnz = (double)m->m * m->nnz_per_row;
    return (OpCost){.flops = 2.0 * nnz * m->n,
                    .bytes = F * (2.0 * nnz + (m->m + 1.0) + (double)m->k * m->n +
                                  (double)m->m * m->n)};
}

static int spmm_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const SpmmDesc *m = &d->u.spmm;
    const size_t nnz = (size_t)m->m * (size_t)m->nnz_per_row;
    int n = 0;
    info[n++] = ops_buf_f("C", (size_t)m->m * (size_t)m->n, BUF_OUT);
    info[n++] = ops_buf_f("values", nnz, BUF_IN);
    info[n++] = ops_buf_i32("col_idx", nnz);
    info[n++] = ops_buf_i32("row_ptr", (size_t)m->m + 1);
    info[n++] = ops_buf_f("B", (size_t)m->k * (size_t)m->n, BUF_IN);
    return n;
}

static void spmm_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    spmm_run(bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], &d->u.spmm);
}

static int spmm_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    return snprintf(out, OP_KEY_MAX, "%s m=%d n=%d k=%d nnz_row=%d", op_kind_name(d->kind),
                    d->u.spmm.m, d->u.spmm.n, d->u.spmm.k, d->u.spmm.nnz_per_row);
}

static bool spmm_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = PHASE_FWD;
    r->u.spmm.m = kc_int(kc, "m");
    r->u.spmm.n = kc_int(kc, "n");
    r->u.spmm.k = kc_int(kc, "k");
    r->u.spmm.nnz_per_row = kc_int(kc, "nnz_row");
    return true;
}

/* =======================================================================================
 * PEAK_FMA (limits.c), microbenchmarks only: FLOPs 2 per FMA, no bytes. Phase fwd only
 * (not in the key). Key: threads, fma (per thread).
 * ===================================================================================== */

OpDesc op_peak_fma(int threads, long fma_per_thread)
{
    OpDesc d = {.kind = OP_PEAK_FMA, .phase = PHASE_FWD};
    long q = (fma_per_thread + PEAK_FMA_QUANTUM - 1) / PEAK_FMA_QUANTUM;
    d.u.peak = (PeakDesc){.threads = threads, .fma_per_thread = (q < 1 ? 1 : q) * PEAK_FMA_QUANTUM};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *peak_check(const OpDesc *d)
{
    if (d->phase != PHASE_FWD)
        return "peak_fma: phase must be fwd";
    if (d->u.peak.threads < 1 || d->u.peak.threads > 4096)
        return "peak_fma: threads must be in [1, 4096]";
    if (d->u.peak.fma_per_thread < PEAK_FMA_QUANTUM || d->u.peak.fma_per_thread % PEAK_FMA_QUANTUM != 0)
        return "peak_fma: fma_per_thread must be a positive multiple of PEAK_FMA_QUANTUM";
    return NULL;
}

static OpCost peak_cost(const OpDesc *d)
{
    return (OpCost){.flops = 2.0 * (double)d->u.peak.fma_per_thread * d->u.peak.threads};
}

static int peak_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    info[0] = ops_buf_f("out", (size_t)d->u.peak.threads, BUF_OUT);
    return 1;
}

static void peak_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    peak_fma_run(bufs[0], &d->u.peak);
}

static int peak_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    return snprintf(out, OP_KEY_MAX, "%s threads=%d fma=%ld", op_kind_name(d->kind),
                    d->u.peak.threads, d->u.peak.fma_per_thread);
}

static bool peak_parse(KeyCursor *kc, OpDesc *r)
{
    r->phase = PHASE_FWD;
    r->u.peak.threads = kc_int(kc, "threads");
    r->u.peak.fma_per_thread = (long)kc_size(kc, "fma");
    return true;
}

/* =======================================================================================
 * MEMBW (limits.c), microbenchmarks only: FLOPs read, handoff, cross, retain and shared 1
 * per element per pass (the add), triad 2 per element of a third; bytes every byte of the
 * working set once per pass (read family) or each array once per pass (triad), times the
 * threads. Phase fwd only (not in the key). Key: kernel, threads, bytes, passes, and
 * idle_us for retain (only it carries it).
 * ===================================================================================== */

static const char *const MEMBW_NAMES[MEMBW_COUNT] = {"read", "triad", "handoff", "cross", "retain", "shared"};

OpDesc op_membw(MembwKind kind, int threads, size_t bytes_per_thread, long passes)
{
    OpDesc d = {.kind = OP_MEMBW, .phase = PHASE_FWD};
    size_t b = (bytes_per_thread + 191) / 192 * 192;
    d.u.membw = (MembwDesc){.kind = kind, .threads = threads, .bytes_per_thread = b < 192 ? 192 : b,
                            .passes = passes};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_membw_retain(int threads, size_t bytes_per_thread, long idle_us)
{
    OpDesc d = op_membw(MEMBW_RETAIN, threads, bytes_per_thread, 1);
    d.u.membw.idle_us = idle_us;
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *membw_check(const OpDesc *d)
{
    const MembwDesc *b = &d->u.membw;
    if (d->phase != PHASE_FWD)
        return "membw: phase must be fwd";
    if (b->kind < 0 || b->kind >= MEMBW_COUNT)
        return "membw: unknown kernel";
    if (b->threads < 1 || b->threads > 4096)
        return "membw: threads must be in [1, 4096]";
    if (b->bytes_per_thread < 192 || b->bytes_per_thread % 192 != 0 || b->passes < 1)
        return "membw: bytes_per_thread must be a positive multiple of 192 and passes >= 1";
    if ((b->kind == MEMBW_HANDOFF || b->kind == MEMBW_CROSS || b->kind == MEMBW_RETAIN ||
         b->kind == MEMBW_SHARED) && b->passes != 1)
        return "membw: handoff, cross, retain and shared run once (passes = 1)";
    if (b->kind == MEMBW_RETAIN ? b->idle_us < 0 || b->idle_us > MEMBW_IDLE_MAX_US : b->idle_us != 0)
        return "membw: idle_us must be in [0, 1000000] for retain, 0 for the others";
    if ((b->kind == MEMBW_CROSS || b->kind == MEMBW_SHARED) && b->threads < 2)
        return "membw: cross and shared need another thread's core (threads >= 2)";
    if ((double)b->bytes_per_thread * b->threads / 4 > OPS_MAX_ELEMS)
        return "membw: working set too large";
    return NULL;
}

static OpCost membw_cost(const OpDesc *d)
{
    const MembwDesc *b = &d->u.membw;
    const double total = (double)b->bytes_per_thread * b->threads * (double)b->passes;
    /* triad: 2 per a third */
    return (OpCost){.flops = (b->kind == MEMBW_TRIAD ? 2.0 / 3.0 : 1.0) * total / F, .bytes = total};
}

static int membw_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const MembwDesc *b = &d->u.membw;
    const size_t t = (size_t)b->threads;
    int n = 0;
    if (b->kind != MEMBW_TRIAD) {
        info[n++] = ops_buf_f("out", t, BUF_OUT);
        info[n++] = ops_buf_f("x", t * b->bytes_per_thread / sizeof(float),
                              b->kind == MEMBW_SHARED ? BUF_INOUT : BUF_IN); /* shared: rewritten */
    } else {
        const size_t each = t * b->bytes_per_thread / (3 * sizeof(float));
        info[n++] = ops_buf_f("a", each, BUF_OUT);
        info[n++] = ops_buf_f("b", each, BUF_IN);
        info[n++] = ops_buf_f("c", each, BUF_IN);
    }
    return n;
}

static void membw_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    float *const *f = (float *const *)bufs;
    if (d->u.membw.kind == MEMBW_TRIAD)
        membw_triad_run(f[0], f[1], f[2], &d->u.membw);
    else if (d->u.membw.kind == MEMBW_SHARED)
        membw_shared_write_run(f[0], f[1], &d->u.membw);
    else
        membw_read_run(f[0], f[1], &d->u.membw);
}

static bool membw_enums_ok(const OpDesc *d)
{
    return d->u.membw.kind >= 0 && d->u.membw.kind < MEMBW_COUNT;
}

static int membw_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    const MembwDesc *b = &d->u.membw;
    int len = snprintf(out, OP_KEY_MAX, "%s %s threads=%d bytes=%zu passes=%ld",
                       op_kind_name(d->kind), MEMBW_NAMES[b->kind], b->threads,
                       b->bytes_per_thread, b->passes);
    if (b->kind == MEMBW_RETAIN)
        len = ops_key_append(out, len, " idle_us=%ld", b->idle_us);
    return len;
}

static bool membw_parse(KeyCursor *kc, OpDesc *r)
{
    MembwDesc *b = &r->u.membw;
    r->phase = PHASE_FWD;
    b->kind = (MembwKind)kc_word(kc, MEMBW_NAMES, MEMBW_COUNT);
    b->threads = kc_int(kc, "threads");
    b->bytes_per_thread = kc_size(kc, "bytes");
    b->passes = (long)kc_size(kc, "passes");
    if (b->kind == MEMBW_RETAIN)
        b->idle_us = (long)kc_size(kc, "idle_us");
    return true;
}

/* =======================================================================================
 * BMM (gemm.c): batch GEMMs of GEMM's conventions. One kernel in every phase (its
 * backward passes are BMMs with transposes, BmmDesc): no phase in the key, parsed as fwd.
 * FLOPs 2 batch m n k; bytes batch (A, B, C, C again when read: beta != 0), whatever the
 * strides. Key: b (the batch), m, n, k, ta, tb, beta, and alpha when it is not 1 (as
 * GEMM's), then the strides of a strided BMM as " lda= ldb= ldc= sa= sb= sc=" (0:
 * packed); a packed BMM's key ends before them.
 * ===================================================================================== */

OpDesc op_bmm(OpPhase phase, int batch, int m, int n, int k, bool trans_a, bool trans_b, float beta)
{
    return op_bmm_strided(phase, batch, m, n, k, trans_a, trans_b, 1.0f, beta, (int[3]){0, 0, 0},
                          (size_t[3]){0, 0, 0});
}

OpDesc op_bmm_strided(OpPhase phase, int batch, int m, int n, int k, bool trans_a, bool trans_b,
                      float alpha, float beta, const int ld[3], const size_t stride[3])
{
    OpDesc d = {.kind = OP_BMM, .phase = phase};
    d.u.bmm = (BmmDesc){.batch = batch, .m = m, .n = n, .k = k, .trans_a = trans_a,
                        .trans_b = trans_b, .alpha = alpha, .beta = beta,
                        .lda = ld[0], .ldb = ld[1], .ldc = ld[2],
                        .stride_a = stride[0], .stride_b = stride[1], .stride_c = stride[2]};
    DESC_ASSERT_VALID(&d);
    return d;
}

void op_attention_bmms(int batch, int heads, int T, int hd, OpDesc out[ATTN_BMMS])
{
    const int BH = batch * heads, D = heads * hd, ld3 = 3 * D * batch, ld1 = D * batch;
    const size_t s3 = 3 * (size_t)hd, s1 = (size_t)hd;
    const float alpha = (float)(1.0 / sqrt((double)hd));
    out[ATTN_SCORES] = op_bmm_strided(PHASE_FWD, BH, T, T, hd, false, true, alpha, 0, (int[3]){ld3, ld3, 0},
                                      (size_t[3]){s3, s3, 0});
    out[ATTN_CONTEXT] = op_bmm_strided(PHASE_FWD, BH, T, hd, T, false, false, 1.0f, 0, (int[3]){0, ld3, ld1},
                                       (size_t[3]){0, s3, s1});
    out[ATTN_D_WEIGHTS] = op_bmm_strided(PHASE_BWD_DATA, BH, T, T, hd, false, true, 1.0f, 0, (int[3]){ld1, ld3, 0},
                                         (size_t[3]){s1, s3, 0});
    out[ATTN_D_V] = op_bmm_strided(PHASE_BWD_DATA, BH, T, hd, T, true, false, 1.0f, 0, (int[3]){0, ld1, ld3},
                                   (size_t[3]){0, s1, s3});
    out[ATTN_D_Q] = op_bmm_strided(PHASE_BWD_DATA, BH, T, hd, T, false, false, alpha, 0, (int[3]){0, ld3, ld3},
                                   (size_t[3]){0, s3, s3});
    out[ATTN_D_K] = op_bmm_strided(PHASE_BWD_DATA, BH, T, hd, T, true, false, alpha, 0, (int[3]){0, ld3, ld3},
                                   (size_t[3]){0, s3, s3});
}

static bool bmm_strided(const BmmDesc *g)
{
    return g->lda || g->ldb || g->ldc || g->stride_a || g->stride_b || g->stride_c;
}

static const char *bmm_check(const OpDesc *d)
{
    const BmmDesc *g = &d->u.bmm;
    if (!ops_phase_in(d->phase, PH_TRAIN))
        return "bmm: phase must be fwd, bwd_data or bwd_weights";
    if (g->batch < 1 || g->m < 1 || g->n < 1 || g->k < 1)
        return "bmm: batch, m, n, k must be >= 1";
    const double b = g->batch;
    if (b * g->m * g->k > OPS_MAX_ELEMS || b * g->k * g->n > OPS_MAX_ELEMS ||
        b * g->m * g->n > OPS_MAX_ELEMS)
        return "bmm: matrices too large";
    if (!isfinite(g->alpha) || !isfinite(g->beta))
        return "bmm: alpha and beta must be finite";
    if (g->lda < 0 || g->ldb < 0 || g->ldc < 0)
        return "bmm: leading dimensions must be >= 0 (0: packed)";
    const BmmLayout l = bmm_layout(g);
    const size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k;
    if (l.lda < (g->trans_a ? m : k) || l.ldb < (g->trans_b ? k : n) || l.ldc < n)
        return "bmm: a leading dimension is shorter than the stored row";
    /* extents in double first: a key's strides may be anything up to 2^40 */
    const double bt = g->batch - 1.0;
    const double ea = bt * l.sa + (g->trans_a ? k - 1.0 : m - 1.0) * l.lda + (g->trans_a ? m : k);
    const double eb = bt * l.sb + (g->trans_b ? n - 1.0 : k - 1.0) * l.ldb + (g->trans_b ? k : n);
    const double ec = bt * l.sc + (m - 1.0) * l.ldc + n;
    if (ea > OPS_MAX_ELEMS || eb > OPS_MAX_ELEMS || ec > OPS_MAX_ELEMS)
        return "bmm: strided matrices span too much";
    const bool blocks = l.sc >= (m - 1) * l.ldc + n;
    const bool interleaved = l.sc >= n && (size_t)(g->batch - 1) * l.sc + n <= l.ldc;
    if (g->batch > 1 && !blocks && !interleaved)
        return "bmm: the C matrices overlap (stride_c and ldc)";
    return NULL;
}

static OpCost bmm_cost(const OpDesc *d)
{
    const BmmDesc *g = &d->u.bmm;
    const double b = g->batch, m = g->m, n = g->n, k = g->k;
    return (OpCost){.flops = 2.0 * b * m * n * k,
                    .bytes = F * b * (m * k + k * n + m * n * (g->beta != 0.0f ? 2.0 : 1.0))};
}

static int bmm_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const BmmDesc *g = &d->u.bmm;
    const BmmLayout l = bmm_layout(g);
    const size_t b = (size_t)g->batch, m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k;
    int nb = 0;
    info[nb++] = ops_buf_f("C", bmm_extent(b, m, n, l.ldc, l.sc), g->beta != 0.0f ? BUF_INOUT : BUF_OUT);
    info[nb++] = ops_buf_f("A", g->trans_a ? bmm_extent(b, k, m, l.lda, l.sa) : bmm_extent(b, m, k, l.lda, l.sa),
                           BUF_IN);
    info[nb++] = ops_buf_f("B", g->trans_b ? bmm_extent(b, n, k, l.ldb, l.sb) : bmm_extent(b, k, n, l.ldb, l.sb),
                           BUF_IN);
    return nb;
}

static void bmm_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    bmm_run(bufs[0], bufs[1], bufs[2], &d->u.bmm);
}

static int bmm_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    const BmmDesc *g = &d->u.bmm;
    int len = snprintf(out, OP_KEY_MAX, "%s b=%d m=%d n=%d k=%d ta=%d tb=%d beta=%.9g",
                       op_kind_name(d->kind), g->batch, g->m, g->n, g->k, (int)g->trans_a,
                       (int)g->trans_b, (double)g->beta);
    if (g->alpha != 1.0f)
        len = ops_key_append(out, len, " alpha=%.9g", (double)g->alpha);
    if (bmm_strided(g))
        len = ops_key_append(out, len, " lda=%d ldb=%d ldc=%d sa=%zu sb=%zu sc=%zu", g->lda, g->ldb,
                             g->ldc, g->stride_a, g->stride_b, g->stride_c);
    return len;
}

static bool bmm_parse(KeyCursor *kc, OpDesc *r)
{
    BmmDesc *g = &r->u.bmm;
    r->phase = PHASE_FWD;
    g->batch = kc_int(kc, "b");
    g->m = kc_int(kc, "m");
    g->n = kc_int(kc, "n");
    g->k = kc_int(kc, "k");
    const int ta = kc_int(kc, "ta"), tb = kc_int(kc, "tb");
    if (ta > 1 || tb > 1)
        return false;
    g->trans_a = ta;
    g->trans_b = tb;
    g->beta = kc_float(kc, "beta");
    g->alpha = 1.0f;
    if (kc_next_is(kc, " alpha="))
        g->alpha = kc_float(kc, "alpha");
    if (kc_next_is(kc, " lda=")) {
        g->lda = kc_int(kc, "lda");
        g->ldb = kc_int(kc, "ldb");
        g->ldc = kc_int(kc, "ldc");
        g->stride_a = kc_size(kc, "sa");
        g->stride_b = kc_size(kc, "sb");
        g->stride_c = kc_size(kc, "sc");
        if (!bmm_strided(g)) /* a packed BMM keys without them */
            return false;
    }
    return true;
}

/* =======================================================================================
 * LAYERNORM (rows.c). FLOPs per element of x (the per-row arithmetic is O(n) and ignored):
 * fwd 8 (the sum 1; the centred sum of squares: subtract, multiply-add 3; y: subtract,
 * multiply, multiply-add 4); bwd_weights 5 (xhat: subtract, multiply; dy xhat summed as
 * a multiply-add; dy summed); bwd_data 10 (g = dy gamma 1, xhat 2, sum g 1, sum g xhat as a
 * multiply-add 2, dx: subtract, multiply-add, times rstd 4), +1 when accumulating.
 * Bytes: x once in every phase although the kernels read each row two or three times (the
 * later passes from cache); y, dx, dgamma, dbeta written (read too when accumulating),
 * gamma and beta (h) and mean, rstd (n). Key: phase, n, h, acc (0 for FWD); eps is a
 * value (parsed as PyTorch's 1e-5).
 * ===================================================================================== */

OpDesc op_layernorm(OpPhase phase, int n, int h, float eps)
{
    OpDesc d = {.kind = OP_LAYERNORM, .phase = phase};
    d.u.ln = (LnDesc){.n = n, .h = h, .eps = eps, .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *ln_check(const OpDesc *d)
{
    const LnDesc *l = &d->u.ln;
    if (!ops_phase_in(d->phase, PH_TRAIN))
        return "layernorm: phase must be fwd, bwd_data or bwd_weights";
    if (l->n < 1 || l->h < 1 || (double)l->n * l->h > OPS_MAX_ELEMS)
        return "layernorm: n and h must be >= 1 (and the tensor at most 2^40)";
    if (!(l->eps > 0.0f) || !isfinite(l->eps))
        return "layernorm: eps must be finite and > 0";
    return NULL;
}

static OpCost ln_cost(const OpDesc *d)
{
    const LnDesc *l = &d->u.ln;
    const double e = (double)l->n * l->h, rows = l->n, h = l->h;
    const double acc = l->accumulate ? 2.0 : 1.0;
    if (d->phase == PHASE_FWD) /* x; y; gamma, beta; mean, rstd */
        return (OpCost){.flops = 8.0 * e, .bytes = F * (2.0 * e + 2.0 * h + 2.0 * rows)};
    if (d->phase == PHASE_BWD_WEIGHTS) /* dy, x; mean, rstd; dgamma, dbeta */
        return (OpCost){.flops = 5.0 * e, .bytes = F * (2.0 * e + 2.0 * rows + 2.0 * acc * h)};
    /* dx; dy, x; gamma; mean, rstd */
    return (OpCost){.flops = (l->accumulate ? 11.0 : 10.0) * e,
                    .bytes = F * (acc * e + 2.0 * e + h + 2.0 * rows)};
}

static int ln_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const LnDesc *l = &d->u.ln;
    const size_t e = (size_t)l->n * (size_t)l->h, rows = (size_t)l->n, h = (size_t)l->h;
    const BufRole acc = l->accumulate ? BUF_INOUT : BUF_OUT;
    int n = 0;
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("y", e, BUF_OUT);
        info[n++] = ops_buf_f("mean", rows, BUF_OUT);
        info[n++] = ops_buf_f("rstd", rows, BUF_OUT);
        info[n++] = ops_buf_f("x", e, BUF_IN);
        info[n++] = ops_buf_f("gamma", h, BUF_IN);
        info[n++] = ops_buf_f("beta", h, BUF_IN);
    } else if (d->phase == PHASE_BWD_WEIGHTS) {
        info[n++] = ops_buf_f("dgamma", h, acc);
        info[n++] = ops_buf_f("dbeta", h, acc);
        info[n++] = ops_buf_f("dy", e, BUF_IN);
        info[n++] = ops_buf_f("x", e, BUF_IN);
        info[n++] = ops_buf_f("mean", rows, BUF_IN);
        info[n++] = ops_buf_f("rstd", rows, BUF_IN);
    } else {
        info[n++] = ops_buf_f("dx", e, acc);
        info[n++] = ops_buf_f("dy", e, BUF_IN);
        info[n++] = ops_buf_f("x", e, BUF_IN);
        info[n++] = ops_buf_f("gamma", h, BUF_IN);
        info[n++] = ops_buf_f("mean", rows, BUF_IN);
        info[n++] = ops_buf_f("rstd", rows, BUF_IN);
    }
    return n;
}

static void ln_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    float *const *f = (float *const *)bufs;
    if (d->phase == PHASE_FWD)
        layernorm_forward(f[0], f[1], f[2], f[3], f[4], f[5], &d->u.ln);
    else if (d->phase == PHASE_BWD_WEIGHTS)
        layernorm_backward_weights(f[0], f[1], f[2], f[3], f[4], f[5], &d->u.ln);
    else
        layernorm_backward_data(f[0], f[1], f[2], f[3], f[4], f[5], &d->u.ln);
}

static int ln_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    const LnDesc *l = &d->u.ln;
    return snprintf(out, OP_KEY_MAX, "%s %s n=%d h=%d acc=%d", op_kind_name(d->kind),
                    op_phase_name(d->phase), l->n, l->h, d->phase != PHASE_FWD && l->accumulate);
}

static bool ln_parse(KeyCursor *kc, OpDesc *r)
{
    LnDesc *l = &r->u.ln;
    r->phase = kc_phase(kc);
    l->n = kc_int(kc, "n");
    l->h = kc_int(kc, "h");
    const int acc = kc_int(kc, "acc");
    if (acc > 1)
        return false;
    l->accumulate = acc;
    l->eps = 1e-5f;
    return true;
}

/* =======================================================================================
 * SOFTMAX (rows.c). FLOPs per element fwd 5 (max, subtract, exp, sum, scale), bwd 4 (the
 * row's dot as a multiply-add, subtract, multiply), +1 when accumulating; bytes x and y
 * (fwd), dy, y and dx (read too when accumulating; bwd). Under the causal mask the FLOPs
 * and the reads count the visible elements only, n (h + 1) / 2, and the writes of the
 * masked zeros count too (fwd's y, bwd's dx when not accumulating). A padding mask adds
 * the ids it reads. Key: phase, n, h, acc (0 for FWD), then " causal=1" when masked, then
 * " pad=ID samples=B" under a padding mask.
 * ===================================================================================== */

OpDesc op_softmax(OpPhase phase, int n, int h)
{
    OpDesc d = {.kind = OP_SOFTMAX, .phase = phase};
    d.u.softmax = (SoftmaxDesc){.n = n, .h = h, .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_softmax_padded(int n, int h, bool causal, int samples, int pad_id)
{
    OpDesc d = {.kind = OP_SOFTMAX, .phase = PHASE_FWD};
    d.u.softmax = (SoftmaxDesc){.n = n, .h = h, .causal = causal, .samples = samples, .pad_id = pad_id};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_softmax_causal(OpPhase phase, int n, int h)
{
    OpDesc d = {.kind = OP_SOFTMAX, .phase = phase};
    d.u.softmax = (SoftmaxDesc){.n = n, .h = h, .accumulate = phase != PHASE_FWD, .causal = true};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *softmax_check(const OpDesc *d)
{
    const SoftmaxDesc *m = &d->u.softmax;
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
        return "softmax: phase must be fwd or bwd_data";
    if (m->n < 1 || m->h < 1 || (double)m->n * m->h > OPS_MAX_ELEMS)
        return "softmax: n and h must be >= 1 (and the tensor at most 2^40)";
    if (m->causal && m->n % m->h != 0)
        return "softmax: causal rows n must be a multiple of h (blocks of h queries over h keys)";
    if (m->samples < 0 || (m->samples > 0 && (d->phase != PHASE_FWD || m->pad_id < 0 || m->n % m->samples != 0 ||
                                              (m->n / m->samples) % m->h != 0)))
        return "softmax: a padding mask is the forward's, over samples whose rows are blocks of h (pad id >= 0)";
    return NULL;
}

static OpCost softmax_cost(const OpDesc *d)
{
    const SoftmaxDesc *m = &d->u.softmax;
    const double e = (double)m->n * m->h;
    const double v = m->causal ? (double)m->n * (m->h + 1) / 2.0 : e; /* visible elements */
    if (d->phase == PHASE_FWD) /* a padding mask reads the ids (and is charged the keys it masks) */
        return (OpCost){.flops = 5.0 * v, .bytes = F * (v + e) + 4.0 * m->h * m->samples};
    if (m->accumulate)
        return (OpCost){.flops = 5.0 * v, .bytes = F * 4.0 * v};
    return (OpCost){.flops = 4.0 * v, .bytes = F * (2.0 * v + e)};
}

static int softmax_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const SoftmaxDesc *m = &d->u.softmax;
    const size_t e = (size_t)m->n * (size_t)m->h;
    int n = 0;
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("y", e, BUF_OUT);
        info[n++] = ops_buf_f("x", e, BUF_IN);
        if (m->samples > 0)
            info[n++] = ops_buf_i32("ids", (size_t)m->h * (size_t)m->samples);
    } else {
        info[n++] = ops_buf_f("dx", e, m->accumulate ? BUF_INOUT : BUF_OUT);
        info[n++] = ops_buf_f("dy", e, BUF_IN);
        info[n++] = ops_buf_f("y", e, BUF_IN);
    }
    return n;
}

static void softmax_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    if (d->phase == PHASE_FWD && d->u.softmax.samples > 0)
        softmax_forward_padded(bufs[0], bufs[1], bufs[2], &d->u.softmax);
    else if (d->phase == PHASE_FWD)
        softmax_forward(bufs[0], bufs[1], &d->u.softmax);
    else
        softmax_backward_data(bufs[0], bufs[1], bufs[2], &d->u.softmax);
}

static int softmax_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    const SoftmaxDesc *m = &d->u.softmax;
    int len = snprintf(out, OP_KEY_MAX, "%s %s n=%d h=%d acc=%d", op_kind_name(d->kind),
                       op_phase_name(d->phase), m->n, m->h, d->phase != PHASE_FWD && m->accumulate);
    if (m->causal)
        len = ops_key_append(out, len, " causal=1");
    if (m->samples > 0)
        len = ops_key_append(out, len, " pad=%d samples=%d", m->pad_id, m->samples);
    return len;
}

static bool softmax_parse(KeyCursor *kc, OpDesc *r)
{
    SoftmaxDesc *m = &r->u.softmax;
    r->phase = kc_phase(kc);
    m->n = kc_int(kc, "n");
    m->h = kc_int(kc, "h");
    const int acc = kc_int(kc, "acc");
    if (acc > 1)
        return false;
    m->accumulate = acc;
    if (kc_next_is(kc, " causal=")) {
        if (kc_int(kc, "causal") != 1)
            return false;
        m->causal = true;
    }
    if (kc_next_is(kc, " pad=")) {
        m->pad_id = kc_int(kc, "pad");
        m->samples = kc_int(kc, "samples");
        if (m->samples < 1)
            return false;
    }
    return true;
}

/* =======================================================================================
 * BINARY and SCALAR (eltwise.c): y = a op b, y = a op s. FLOPs per element: fwd add, mul,
 * div 1, pow 3 (log, multiply, exp). Binary bwd: add 0 (two copies), mul 2, div 4 (dy/b,
 * a/b, their product, negated), pow 7 (log, multiply, exp; dy y; times b, over a; dy y
 * ln a); scalar bwd: add 0 (a copy), mul 1, div 1, pow 5 (log, s - 1 times it, exp, two
 * multiplies); +2 (binary) or +1 (scalar) when accumulating. Bytes: binary fwd a, b, y;
 * bwd dy, da, db, and a and b except for add; scalar fwd a, y; bwd dy, da, and a for pow;
 * da and db read too when accumulating. Key: phase, operator, count, acc (0 for FWD); the
 * scalar is a value (ScalarDesc), parsed as 2.
 * ===================================================================================== */

static const char *const BIN_NAMES[BIN_COUNT] = {"add", "mul", "pow", "div"};

const char *op_binary_name(BinaryKind b)
{
    return (b >= 0 && b < BIN_COUNT) ? BIN_NAMES[b] : "?";
}

OpDesc op_binary(OpPhase phase, BinaryKind op, size_t count)
{
    OpDesc d = {.kind = OP_BINARY, .phase = phase};
    d.u.binary = (BinaryDesc){.op = op, .count = count, .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_scalar(OpPhase phase, BinaryKind op, size_t count, float scalar)
{
    OpDesc d = {.kind = OP_SCALAR, .phase = phase};
    d.u.scalar = (ScalarDesc){.op = op, .count = count, .scalar = scalar,
                              .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

static const char *binary_check(const OpDesc *d)
{
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
        return "binary: phase must be fwd or bwd_data";
    if (d->u.binary.op < 0 || d->u.binary.op >= BIN_COUNT)
        return "binary: unknown operator";
    return ops_count_check(d->u.binary.count);
}

static const char *scalar_check(const OpDesc *d)
{
    const ScalarDesc *s = &d->u.scalar;
    if (!ops_phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
        return "scalar: phase must be fwd or bwd_data";
    if (s->op < 0 || s->op >= BIN_COUNT)
        return "scalar: unknown operator";
    if (!isfinite(s->scalar) || (s->op == BIN_DIV && s->scalar == 0.0f))
        return "scalar: the scalar must be finite (and not 0 for div)";
    return ops_count_check(s->count);
}

static OpCost binary_cost(const OpDesc *d)
{
    static const double fwd[BIN_COUNT] = {1, 1, 3, 1}, bwd[BIN_COUNT] = {0, 2, 7, 4};
    const BinaryDesc *b = &d->u.binary;
    const double e = (double)b->count;
    if (d->phase == PHASE_FWD)
        return (OpCost){.flops = fwd[b->op] * e, .bytes = F * 3.0 * e};
    const double acc = b->accumulate ? 2.0 : 0.0;
    return (OpCost){.flops = (bwd[b->op] + acc) * e,
                    .bytes = F * ((b->op == BIN_ADD ? 3.0 : 5.0) + acc) * e};
}

static OpCost scalar_cost(const OpDesc *d)
{
    static const double fwd[BIN_COUNT] = {1, 1, 3, 1}, bwd[BIN_COUNT] = {0, 1, 5, 1};
    const ScalarDesc *s = &d->u.scalar;
    const double e = (double)s->count;
    if (d->phase == PHASE_FWD)
        return (OpCost){.flops = fwd[s->op] * e, .bytes = F * 2.0 * e};
    const double acc = s->accumulate ? 1.0 : 0.0;
    return (OpCost){.flops = (bwd[s->op] + acc) * e,
                    .bytes = F * ((s->op == BIN_POW ? 3.0 : 2.0) + acc) * e};
}

static int binary_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const size_t e = d->u.binary.count;
    const BufRole acc = d->u.binary.accumulate ? BUF_INOUT : BUF_OUT;
    int n = 0;
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("y", e, BUF_OUT);
    } else {
        info[n++] = ops_buf_f("da", e, acc);
        info[n++] = ops_buf_f("db", e, acc);
        info[n++] = ops_buf_f("dy", e, BUF_IN);
    }
    info[n++] = ops_buf_f("a", e, BUF_IN);
    info[n++] = ops_buf_f("b", e, BUF_IN);
    return n;
}

static int scalar_buffers(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    const size_t e = d->u.scalar.count;
    int n = 0;
    if (d->phase == PHASE_FWD) {
        info[n++] = ops_buf_f("y", e, BUF_OUT);
    } else {
        info[n++] = ops_buf_f("da", e, d->u.scalar.accumulate ? BUF_INOUT : BUF_OUT);
        info[n++] = ops_buf_f("dy", e, BUF_IN);
    }
    info[n++] = ops_buf_f("a", e, BUF_IN);
    return n;
}

static void binary_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    if (d->phase == PHASE_FWD)
        binary_forward(bufs[0], bufs[1], bufs[2], &d->u.binary);
    else
        binary_backward_data(bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], &d->u.binary);
}

static void scalar_exec(const OpDesc *d, void *const bufs[], void *ws)
{
    (void)ws;
    if (d->phase == PHASE_FWD)
        scalar_forward(bufs[0], bufs[1], &d->u.scalar);
    else
        scalar_backward_data(bufs[0], bufs[1], bufs[2], &d->u.scalar);
}

static bool binary_enums_ok(const OpDesc *d)
{
    return d->u.binary.op >= 0 && d->u.binary.op < BIN_COUNT;
}

static bool scalar_enums_ok(const OpDesc *d)
{
    return d->u.scalar.op >= 0 && d->u.scalar.op < BIN_COUNT;
}

static int binary_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    const BinaryDesc *b = &d->u.binary;
    return snprintf(out, OP_KEY_MAX, "%s %s %s count=%zu acc=%d", op_kind_name(d->kind),
                    op_phase_name(d->phase), BIN_NAMES[b->op], b->count,
                    d->phase != PHASE_FWD && b->accumulate);
}

static int scalar_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    const ScalarDesc *s = &d->u.scalar;
    return snprintf(out, OP_KEY_MAX, "%s %s %s count=%zu acc=%d", op_kind_name(d->kind),
                    op_phase_name(d->phase), BIN_NAMES[s->op], s->count,
                    d->phase != PHASE_FWD && s->accumulate);
}

static bool binary_parse(KeyCursor *kc, OpDesc *r)
{
    BinaryDesc *b = &r->u.binary;
    r->phase = kc_phase(kc);
    b->op = (BinaryKind)kc_word(kc, BIN_NAMES, BIN_COUNT);
    b->count = kc_size(kc, "count");
    const int acc = kc_int(kc, "acc");
    if (acc > 1)
        return false;
    b->accumulate = acc;
    return true;
}

static bool scalar_parse(KeyCursor *kc, OpDesc *r)
{
    ScalarDesc *s = &r->u.scalar;
    r->phase = kc_phase(kc);
    s->op = (BinaryKind)kc_word(kc, BIN_NAMES, BIN_COUNT);
    s->count = kc_size(kc, "count");
    const int acc = kc_int(kc, "acc");
    if (acc > 1)
        return false;
    s->accumulate = acc;
    s->scalar = 2.0f;
    return true;
}

/* =======================================================================================
 * The table
 * ===================================================================================== */

#define KIND_FIELDS(nm, pre, spotfn)                                                        \
    .name = nm, .check = pre##_check, .cost = pre##_cost, .buffers = pre##_buffers,         \
    .run = pre##_exec, .key = pre##_key, .parse = pre##_parse, .spot = spotfn
#define KIND_ENTRY(nm, pre, spotfn) {KIND_FIELDS(nm, pre, spotfn)}

static const OpKindInfo KINDS[OP_KIND_COUNT] = {
    [OP_GEMM] = {KIND_FIELDS("gemm", gemm, spot_check_gemm), .phaseless = true},
    [OP_CONV2D] = {.name = "conv2d", .check = conv_check, .cost = conv_cost,
                   .buffers = conv_buffers, .run = conv_exec, .key = conv_key,
                   .parse = conv_parse, .spot = spot_check_conv,
                   .workspace = conv_workspace, .workspace_slice = conv_workspace_slice,
                   .workspace_set_slice = conv_workspace_set_slice,
                   .thread_imbalance = conv_thread_imbalance},
    [OP_POOL2D] = {.name = "pool2d", .check = pool_check, .cost = pool_cost,
                   .buffers = pool_buffers, .run = pool_exec, .key = pool_key,
                   .parse = pool_parse, .enums_ok = pool_enums_ok, .spot = spot_check_pool},
    [OP_BIAS] = KIND_ENTRY("bias", bias, spot_check_bias),
    [OP_ACT] = {.name = "act", .check = act_check, .cost = act_cost, .buffers = act_buffers,
                .run = act_exec, .key = act_key, .parse = act_parse,
                .enums_ok = act_enums_ok, .spot = spot_check_act},
    [OP_SOFTMAX_XENT] = {KIND_FIELDS("softmax_xent", xent, spot_check_xent), .workspace = xent_workspace},
    [OP_SQERR] = KIND_ENTRY("sqerr", sqerr, spot_check_sqerr),
    [OP_LSTM_CELL] = KIND_ENTRY("lstm_cell", lstm, spot_check_lstm),
    [OP_SGD] = {KIND_FIELDS("sgd", update, spot_check_update), .phaseless = true},
    [OP_RMSPROP] = {KIND_FIELDS("rmsprop", update, spot_check_update), .phaseless = true},
    [OP_ZERO] = {.name = "zero", .check = zero_copy_check, .cost = zero_copy_cost,
                 .buffers = zero_copy_buffers, .run = zero_copy_exec, .key = count_key,
                 .parse = zero_copy_parse, .spot = spot_check_mem,
                 .phaseless = true},
    [OP_COPY] = {.name = "copy", .check = zero_copy_check, .cost = zero_copy_cost,
                 .buffers = zero_copy_buffers, .run = zero_copy_exec, .key = count_key,
                 .parse = zero_copy_parse, .spot = spot_check_mem,
                 .phaseless = true},
    [OP_STREAM] = {.name = "stream", .check = stream_check, .cost = stream_cost,
                   .buffers = stream_buffers, .run = stream_exec, .key = stream_key,
                   .parse = stream_parse, .enums_ok = stream_enums_ok, .spot = spot_check_mem,
                 .phaseless = true},
    [OP_BATCHNORM] = KIND_ENTRY("batchnorm", bn, spot_check_batchnorm),
    [OP_LRN] = KIND_ENTRY("lrn", lrn, spot_check_lrn),
    [OP_DROPOUT] = KIND_ENTRY("dropout", drop, spot_check_dropout),
    [OP_CHANNEL_COPY] = KIND_ENTRY("channel_copy", chan, spot_check_channel),
    [OP_AXPBY] = {KIND_FIELDS("axpby", axpby, spot_check_axpby), .phaseless = true},
    [OP_EMBEDDING] = KIND_ENTRY("embedding", embed, spot_check_embedding),
    [OP_KL_SPARSITY] = KIND_ENTRY("kl_sparsity", kl, spot_check_kl),
    [OP_SHRINK] = {.name = "shrink", .check = shrink_check, .cost = shrink_norm1_cost,
                   .buffers = shrink_norm1_buffers, .run = shrink_norm1_exec, .key = count_key,
                   .parse = shrink_norm1_parse, .spot = spot_check_shrink_norm1,
                 .phaseless = true},
    [OP_NORM1] = {.name = "norm1", .check = norm1_check, .cost = shrink_norm1_cost,
                  .buffers = shrink_norm1_buffers, .run = shrink_norm1_exec, .key = count_key,
                  .parse = shrink_norm1_parse, .spot = spot_check_shrink_norm1,
                 .phaseless = true},
    [OP_MOMENTUM] = {KIND_FIELDS("momentum", update, spot_check_update), .phaseless = true},
    [OP_ADAM] = {KIND_FIELDS("adam", update, spot_check_update), .phaseless = true},
    [OP_GRU_CELL] = {.name = "gru_cell", .check = gru_check, .cost = gru_cost,
                     .buffers = gru_buffers, .run = gru_exec, .key = gru_key,
                     .parse = gru_parse, .enums_ok = gru_enums_ok, .spot = spot_check_gru},
    [OP_SPMM] = {KIND_FIELDS("spmm", spmm, spot_check_spmm), .phaseless = true},
    [OP_PEAK_FMA] = {KIND_FIELDS("peak_fma", peak, spot_check_peak), .phaseless = true},
    [OP_MEMBW] = {.name = "membw", .check = membw_check, .cost = membw_cost,
                  .buffers = membw_buffers, .run = membw_exec, .key = membw_key,
                  .parse = membw_parse, .enums_ok = membw_enums_ok, .spot = spot_check_membw,
                 .phaseless = true},
    [OP_BMM] = {KIND_FIELDS("bmm", bmm, spot_check_bmm), .phaseless = true},
    [OP_LAYERNORM] = KIND_ENTRY("layernorm", ln, spot_check_layernorm),
    [OP_SOFTMAX] = KIND_ENTRY("softmax", softmax, spot_check_softmax),
    [OP_BINARY] = {.name = "binary", .check = binary_check, .cost = binary_cost,
                   .buffers = binary_buffers, .run = binary_exec, .key = binary_key,
                   .parse = binary_parse, .enums_ok = binary_enums_ok, .spot = spot_check_binary},
    [OP_SCALAR] = {.name = "scalar", .check = scalar_check, .cost = scalar_cost,
                   .buffers = scalar_buffers, .run = scalar_exec, .key = scalar_key,
                   .parse = scalar_parse, .enums_ok = scalar_enums_ok, .spot = spot_check_scalar},
    [OP_SUMSQ] = {.name = "sumsq", .check = norm1_check, .cost = shrink_norm1_cost,
                  .buffers = shrink_norm1_buffers, .run = shrink_norm1_exec, .key = count_key,
                  .parse = shrink_norm1_parse, .spot = spot_check_shrink_norm1,
                 .phaseless = true},
    [OP_ADAMW] = {KIND_FIELDS("adamw", update, spot_check_update), .phaseless = true},
    [OP_TRANSPOSE] = KIND_ENTRY("transpose", transpose, spot_check_transpose),
    [OP_ALLREDUCE] = KIND_ENTRY("allreduce", allreduce, spot_check_allreduce),
};

bool op_kind_phaseless(OpKind k) { return op_kind_info(k)->phaseless; }

/* Contract: k is an OpKind below OP_KIND_COUNT; its entry is complete (the table has one
 * for every kind: test_ops checks every kind's name, key and parse). */
const OpKindInfo *op_kind_info(OpKind k)
{
    OPS_ASSERT(k >= 0 && k < OP_KIND_COUNT);
    const OpKindInfo *info = &KINDS[k];
    OPS_ASSERT(info->name && info->check && info->cost && info->buffers && info->run &&
               info->key && info->parse && info->spot);
    return info;
}
