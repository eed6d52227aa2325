/* models/layers.c — the layer kinds: dense, conv2d, pool2d, LSTM.
 *
 * For each: shape inference with messages that name what was expected and what the
 * previous layer gives, the memory each lays out, and the ops it appends for forward and
 * backward. Backward op order follows the data dependencies: activation gradient first
 * (in place on dy), then bias and weight gradients, then the input gradient.
 */
#include "models/layers.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#define F32 sizeof(float)

/* Largest weight tensor of one layer (2^36 floats = 256 GiB): beyond it a model file is
 * surely wrong, and the kernels' index arithmetic stays far from overflow. */
#define MAX_WEIGHTS 68719476736.0

static int check_weights(double count, char *msg, size_t n)
{
    if (count <= MAX_WEIGHTS)
        return 0;
    snprintf(msg, n, "%.3g weights in one layer exceed the limit of %.3g", count, MAX_WEIGHTS);
    return -1;
}

const char *layer_kind_name(LayerKind k)
{
    static const char *const names[LAYER_KIND_COUNT] = {"dense", "conv2d", "pool2d", "lstm"};
    return (unsigned)k < LAYER_KIND_COUNT ? names[k] : "?";
}

static BufRef grad_of(BufRef param)
{
    param.arena = ARENA_GRAD;
    return param;
}

/* db = sum of dy over batch and spatial positions, overwriting: every parameter has one
 * producer of its gradient per step, so gradient buffers are never zeroed. */
static void emit_bias_grad(LayerCtx *c, BufRef b, BufRef dy, int n, int channels, int spatial)
{
    OpDesc d = op_bias(PHASE_BWD_WEIGHTS, n, channels, spatial);
    d.u.bias.accumulate = false;
    plan_add(c->plan, c->layer, d, (BufRef[]){grad_of(b), dy}, 2);
}

/* Output activation y and its gradient dy for the current layer. */
static void alloc_output(LayerCtx *c, size_t count)
{
    PlanLayer *pl = &c->plan->layers[c->layer];
    pl->y = plan_alloc(c->plan, ARENA_ACT, count * F32);
    pl->dy = plan_alloc(c->plan, ARENA_ACTGRAD, count * F32);
}

static void emit_act_forward(LayerCtx *c, const LayerSpec *l, BufRef y, size_t count)
{
    if (l->act != ACTIVATION_NONE)
        plan_add(c->plan, c->layer, op_act(PHASE_FWD, (ActKind)l->act, count), (BufRef[]){y, y}, 2);
}

/* dy <- dy * f'(y), in place: the gradient w.r.t. the pre-activation. */
static void emit_act_backward(LayerCtx *c, const LayerSpec *l, BufRef y, BufRef dy, size_t count)
{
    if (l->act != ACTIVATION_NONE)
        plan_add(c->plan, c->layer, op_act(PHASE_BWD_DATA, (ActKind)l->act, count), (BufRef[]){dy, dy, y}, 3);
}

/* ---- dense ---- */

static int dense_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    if (l->u.dense.units < 1) {
        snprintf(msg, n, "units %d: must be >= 1", l->u.dense.units);
        return -1;
    }
    if (in->rank == 2) {
        snprintf(msg, n, "a dense layer needs a flat or image input, previous layer gives a sequence");
        return -1;
    }
    *out = (Shape){.rank = 1, .d = {l->u.dense.units}};
    return check_weights((double)shape_count(in) * l->u.dense.units, msg, n);
}

static void dense_forward(LayerCtx *c, const LayerSpec *l)
{
    Plan *p = c->plan;
    PlanLayer *pl = &p->layers[c->layer];
    int in = shape_count(&pl->in), out = l->u.dense.units, B = c->batch;
    pl->w = plan_alloc(p, ARENA_PARAM, (size_t)in * out * F32); /* (in, out) */
    pl->b = plan_alloc(p, ARENA_PARAM, (size_t)out * F32);
    plan_add_param(p, c->layer, pl->w, (size_t)in * out, in, out, l->init, l->init_scale, false);
    plan_add_param(p, c->layer, pl->b, (size_t)out, in, out, l->init, 0, true);
    alloc_output(c, (size_t)B * out);
    /* y(B, out) = x(B, in) . W(in, out) + b */
    plan_add(p, c->layer, op_gemm(PHASE_FWD, B, out, in, false, false, 0), (BufRef[]){pl->y, c->x, pl->w}, 3);
    plan_add(p, c->layer, op_bias(PHASE_FWD, B, out, 1), (BufRef[]){pl->y, pl->b}, 2);
    emit_act_forward(c, l, pl->y, (size_t)B * out);
}

static void dense_backward(LayerCtx *c, const LayerSpec *l)
{
    Plan *p = c->plan;
    PlanLayer *pl = &p->layers[c->layer];
    int in = shape_count(&pl->in), out = l->u.dense.units, B = c->batch;
    emit_act_backward(c, l, pl->y, pl->dy, (size_t)B * out);
    emit_bias_grad(c, pl->b, pl->dy, B, out, 1);
    /* dW(in, out) = x^T . dy */
    plan_add(p, c->layer, op_gemm(PHASE_BWD_WEIGHTS, in, out, B, true, false, 0),
             (BufRef[]){grad_of(pl->w), c->x, pl->dy}, 3);
    /* dx(B, in) (+)= dy . W^T */
    if (c->need_dx)
        plan_add(p, c->layer, op_gemm(PHASE_BWD_DATA, B, in, out, false, true, c->dx_accumulate ? 1 : 0),
                 (BufRef[]){c->dx, pl->dy, pl->w}, 3);
}

/* ---- conv2d ---- */

static OpDesc conv_desc(const LayerSpec *l, const Shape *in, int batch, OpPhase phase)
{
    const ConvSpec *s = &l->u.conv;
    return op_conv2d(phase, batch, in->d[0], in->d[1], in->d[2], s->filters, s->kh, s->kw, s->stride, s->pad,
                     s->groups);
}

static int conv_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    const ConvSpec *s = &l->u.conv;
    char got[48];
    shape_str(in, got, sizeof got);
    if (in->rank != 3) {
        snprintf(msg, n, "expects a (C,H,W) input, previous layer gives %s", got);
        return -1;
    }
    if (s->filters < 1 || s->kh < 1 || s->kw < 1 || s->stride < 1 || s->groups < 1) {
        snprintf(msg, n, "filters, kernel size, stride and groups must be >= 1");
        return -1;
    }
    if (in->d[0] % s->groups || s->filters % s->groups) {
        snprintf(msg, n, "groups %d must divide the %d input channels and the %d filters", s->groups,
                 in->d[0], s->filters);
        return -1;
    }
    if (s->pad == PAD_VALID && (s->kh > in->d[1] || s->kw > in->d[2])) {
        snprintf(msg, n, "kernel %dx%d is larger than its %dx%d input (VALID padding)", s->kh, s->kw,
                 in->d[1], in->d[2]);
        return -1;
    }
    if (check_weights((double)s->filters * in->d[0] / s->groups * s->kh * s->kw, msg, n))
        return -1;
    OpDesc d = conv_desc(l, in, 1, PHASE_FWD);
    *out = (Shape){.rank = 3, .d = {s->filters, d.u.conv.out_h, d.u.conv.out_w}};
    return 0;
}

static void conv_forward(LayerCtx *c, const LayerSpec *l)
{
    Plan *p = c->plan;
    PlanLayer *pl = &p->layers[c->layer];
    const ConvSpec *s = &l->u.conv;
    int cin_g = pl->in.d[0] / s->groups, spatial = pl->out.d[1] * pl->out.d[2], B = c->batch;
    size_t wcount = (size_t)s->filters * cin_g * s->kh * s->kw; /* (K, C/g, R, S) */
    pl->w = plan_alloc(p, ARENA_PARAM, wcount * F32);
    pl->b = plan_alloc(p, ARENA_PARAM, (size_t)s->filters * F32);
    int fan_in = cin_g * s->kh * s->kw, fan_out = s->filters / s->groups * s->kh * s->kw;
    plan_add_param(p, c->layer, pl->w, wcount, fan_in, fan_out, l->init, l->init_scale, false);
    plan_add_param(p, c->layer, pl->b, (size_t)s->filters, fan_in, fan_out, l->init, 0, true);
    size_t ycount = (size_t)B * s->filters * spatial;
    alloc_output(c, ycount);
    plan_add(p, c->layer, conv_desc(l, &pl->in, B, PHASE_FWD), (BufRef[]){pl->y, c->x, pl->w}, 3);
    plan_add(p, c->layer, op_bias(PHASE_FWD, B, s->filters, spatial), (BufRef[]){pl->y, pl->b}, 2);
    emit_act_forward(c, l, pl->y, ycount);
}

static void conv_backward(LayerCtx *c, const LayerSpec *l)
{
    Plan *p = c->plan;
    PlanLayer *pl = &p->layers[c->layer];
    const ConvSpec *s = &l->u.conv;
    int spatial = pl->out.d[1] * pl->out.d[2], B = c->batch;
    emit_act_backward(c, l, pl->y, pl->dy, (size_t)B * s->filters * spatial);
    emit_bias_grad(c, pl->b, pl->dy, B, s->filters, spatial);
    OpDesc dw = conv_desc(l, &pl->in, B, PHASE_BWD_WEIGHTS);
    dw.u.conv.accumulate = false;
    plan_add(p, c->layer, dw, (BufRef[]){grad_of(pl->w), pl->dy, c->x}, 3);
    if (c->need_dx) {
        OpDesc dx = conv_desc(l, &pl->in, B, PHASE_BWD_DATA);
        dx.u.conv.accumulate = c->dx_accumulate;
        plan_add(p, c->layer, dx, (BufRef[]){c->dx, pl->dy, pl->w}, 3);
    }
}

/* ---- pool2d ---- */

static OpDesc pool_desc(const LayerSpec *l, const Shape *in, int batch, OpPhase phase)
{
    const PoolSpec *s = &l->u.pool;
    return op_pool2d(phase, s->kind, batch, in->d[0], in->d[1], in->d[2], s->win, s->stride, s->pad);
}

static int pool_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    const PoolSpec *s = &l->u.pool;
    char got[48];
    shape_str(in, got, sizeof got);
    if (in->rank != 3) {
        snprintf(msg, n, "expects a (C,H,W) input, previous layer gives %s", got);
        return -1;
    }
    if (s->win < 1 || s->stride < 1) {
        snprintf(msg, n, "window and stride must be >= 1");
        return -1;
    }
    if (s->pad == PAD_VALID && (s->win > in->d[1] || s->win > in->d[2])) {
        snprintf(msg, n, "window %d is larger than its %dx%d input (VALID padding)", s->win, in->d[1], in->d[2]);
        return -1;
    }
    OpDesc d = pool_desc(l, in, 1, PHASE_FWD);
    *out = (Shape){.rank = 3, .d = {in->d[0], d.u.pool.out_h, d.u.pool.out_w}};
    return 0;
}

static void pool_forward(LayerCtx *c, const LayerSpec *l)
{
    PlanLayer *pl = &c->plan->layers[c->layer];
    alloc_output(c, (size_t)c->batch * shape_count(&pl->out));
    plan_add(c->plan, c->layer, pool_desc(l, &pl->in, c->batch, PHASE_FWD), (BufRef[]){pl->y, c->x}, 2);
}

static void pool_backward(LayerCtx *c, const LayerSpec *l)
{
    PlanLayer *pl = &c->plan->layers[c->layer];
    if (!c->need_dx)
        return;
    OpDesc d = pool_desc(l, &pl->in, c->batch, PHASE_BWD_DATA);
    d.u.pool.accumulate = c->dx_accumulate;
    plan_add(c->plan, c->layer, d, (BufRef[]){c->dx, pl->dy, c->x, pl->y}, 4);
}

/* ---- LSTM ----
 * Sequences are time-major: x is (T, B, F), so each step's input is one contiguous
 * (B, F) block. W is ((F + H), 4H): rows [0, F) multiply x_t, rows [F, F+H) multiply
 * h_{t-1} — the single matmul of concat(x_t, h_{t-1}) in TF's BasicLSTMCell, split so
 * the input projection of all T steps is one large GEMM. Saved for backward:
 * pre (T,B,4H), act (T,B,4H), c (T+1,B,H) and h (T+1,B,H) with c_0 = h_0 = 0. */

enum { LSTM_PRE, LSTM_ACT, LSTM_C, LSTM_H, LSTM_DPRE, LSTM_DC, LSTM_DH };

static int lstm_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    const LstmSpec *s = &l->u.lstm;
    char got[48];
    shape_str(in, got, sizeof got);
    if (in->rank != 2) {
        snprintf(msg, n, "expects a (time steps, features) input, previous layer gives %s", got);
        return -1;
    }
    if (s->hidden < 1) {
        snprintf(msg, n, "hidden %d: must be >= 1", s->hidden);
        return -1;
    }
    if (!s->last_only) {
        snprintf(msg, n, "only last-step output (last_only) is supported for LSTM layers");
        return -1;
    }
    *out = (Shape){.rank = 1, .d = {s->hidden}};
    return check_weights(((double)in->d[1] + s->hidden) * 4.0 * s->hidden, msg, n);
}

static BufRef step_slice(BufRef b, int t, size_t step_bytes) { return buf_slice(b, (size_t)t * step_bytes, step_bytes); }

static void lstm_forward(LayerCtx *c, const LayerSpec *l)
{
    Plan *p = c->plan;
    PlanLayer *pl = &p->layers[c->layer];
    int T = pl->in.d[0], F = pl->in.d[1], H = l->u.lstm.hidden, B = c->batch;
    size_t g4 = (size_t)B * 4 * H * F32, hb = (size_t)B * H * F32;
    pl->w = plan_alloc(p, ARENA_PARAM, (size_t)(F + H) * 4 * H * F32);
    pl->b = plan_alloc(p, ARENA_PARAM, (size_t)4 * H * F32);
    plan_add_param(p, c->layer, pl->w, (size_t)(F + H) * 4 * H, F + H, 4 * H, l->init, l->init_scale, false);
    plan_add_param(p, c->layer, pl->b, (size_t)4 * H, F + H, 4 * H, l->init, 0, true);
    BufRef wx = buf_slice(pl->w, 0, (size_t)F * 4 * H * F32);
    BufRef wh = buf_slice(pl->w, (size_t)F * 4 * H * F32, (size_t)H * 4 * H * F32);
    BufRef pre = plan_alloc(p, ARENA_ACT, (size_t)T * g4);
    BufRef act = plan_alloc(p, ARENA_ACT, (size_t)T * g4);
    BufRef cs = plan_alloc(p, ARENA_ACT, (size_t)(T + 1) * hb);
    BufRef hs = plan_alloc(p, ARENA_ACT, (size_t)(T + 1) * hb);
    BufRef dh = plan_alloc(p, ARENA_ACTGRAD, (size_t)(T + 1) * hb);
    pl->saved[LSTM_PRE] = pre;
    pl->saved[LSTM_ACT] = act;
    pl->saved[LSTM_C] = cs;
    pl->saved[LSTM_H] = hs;
    pl->saved[LSTM_DPRE] = plan_alloc(p, ARENA_ACTGRAD, (size_t)T * g4);
    pl->saved[LSTM_DC] = plan_alloc(p, ARENA_ACTGRAD, (size_t)(T + 1) * hb);
    pl->y = step_slice(hs, T, hb);
    pl->dy = step_slice(dh, T, hb);
    pl->saved[LSTM_DH] = dh;

    /* pre(T*B, 4H) = x(T*B, F) . W_x: the input projection of every step at once */
    plan_add(p, c->layer, op_gemm(PHASE_FWD, T * B, 4 * H, F, false, false, 0), (BufRef[]){pre, c->x, wx}, 3);
    for (int t = 1; t <= T; t++) {
        BufRef pre_t = step_slice(pre, t - 1, g4);
        /* pre_t += h_{t-1} . W_h (computed at t = 1 too, as TF does with h_0 = 0) */
        plan_add(p, c->layer, op_gemm(PHASE_FWD, B, 4 * H, H, false, false, 1),
                 (BufRef[]){pre_t, step_slice(hs, t - 1, hb), wh}, 3);
        plan_add(p, c->layer, op_lstm_cell(PHASE_FWD, B, H, l->u.lstm.forget_bias),
                 (BufRef[]){step_slice(cs, t, hb), step_slice(hs, t, hb), step_slice(act, t - 1, g4), pre_t,
                            step_slice(cs, t - 1, hb), pl->b},
                 6);
    }
}

static void lstm_backward(LayerCtx *c, const LayerSpec *l)
{
    Plan *p = c->plan;
    PlanLayer *pl = &p->layers[c->layer];
    int T = pl->in.d[0], F = pl->in.d[1], H = l->u.lstm.hidden, B = c->batch;
    size_t g4 = (size_t)B * 4 * H * F32, hb = (size_t)B * H * F32;
    BufRef wx = buf_slice(pl->w, 0, (size_t)F * 4 * H * F32);
    BufRef wh = buf_slice(pl->w, (size_t)F * 4 * H * F32, (size_t)H * 4 * H * F32);
    BufRef act = pl->saved[LSTM_ACT], cs = pl->saved[LSTM_C], hs = pl->saved[LSTM_H];
    BufRef dpre = pl->saved[LSTM_DPRE], dc = pl->saved[LSTM_DC], dh = pl->saved[LSTM_DH];

    /* Nothing flows into c_T from a later step. */
    plan_add(p, c->layer, op_zero(PHASE_BWD_DATA, (size_t)B * H), (BufRef[]){step_slice(dc, T, hb)}, 1);
    for (int t = T; t >= 1; t--) {
        BufRef dpre_t = step_slice(dpre, t - 1, g4);
        plan_add(p, c->layer, op_lstm_cell(PHASE_BWD_DATA, B, H, l->u.lstm.forget_bias),
                 (BufRef[]){dpre_t, step_slice(dc, t - 1, hb), step_slice(dh, t, hb), step_slice(dc, t, hb),
                            step_slice(act, t - 1, g4), step_slice(cs, t - 1, hb), step_slice(cs, t, hb)},
                 7);
        /* dh_{t-1}(B, H) = dpre_t . W_h^T: only the recurrence feeds h_{t-1} (last-step output) */
        if (t > 1)
            plan_add(p, c->layer, op_gemm(PHASE_BWD_DATA, B, H, 4 * H, false, true, 0),
                     (BufRef[]){step_slice(dh, t - 1, hb), dpre_t, wh}, 3);
    }
    /* Weight gradients of all steps at once: dW_x = X^T . dPre, dW_h = H_{0..T-1}^T . dPre */
    BufRef dwx = buf_slice(grad_of(pl->w), 0, wx.bytes);
    BufRef dwh = buf_slice(grad_of(pl->w), wx.bytes, wh.bytes);
    plan_add(p, c->layer, op_gemm(PHASE_BWD_WEIGHTS, F, 4 * H, T * B, true, false, 0), (BufRef[]){dwx, c->x, dpre}, 3);
    plan_add(p, c->layer, op_gemm(PHASE_BWD_WEIGHTS, H, 4 * H, T * B, true, false, 0),
             (BufRef[]){dwh, buf_slice(hs, 0, (size_t)T * hb), dpre}, 3);
    emit_bias_grad(c, pl->b, dpre, T * B, 4 * H, 1);
    if (c->need_dx)
        plan_add(p, c->layer, op_gemm(PHASE_BWD_DATA, T * B, F, 4 * H, false, true, c->dx_accumulate ? 1 : 0),
                 (BufRef[]){c->dx, dpre, wx}, 3);
}

/* ---- dispatch ---- */

typedef struct {
    int (*infer)(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n);
    void (*forward)(LayerCtx *c, const LayerSpec *l);
    void (*backward)(LayerCtx *c, const LayerSpec *l);
} LayerImpl;

static const LayerImpl impls[LAYER_KIND_COUNT] = {
    [LAYER_DENSE] = {dense_infer, dense_forward, dense_backward},
    [LAYER_CONV2D] = {conv_infer, conv_forward, conv_backward},
    [LAYER_POOL2D] = {pool_infer, pool_forward, pool_backward},
    [LAYER_LSTM] = {lstm_infer, lstm_forward, lstm_backward},
};

int layer_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    if ((unsigned)l->kind >= LAYER_KIND_COUNT) {
        snprintf(msg, n, "unknown layer kind %d", (int)l->kind);
        return -1;
    }
    if (l->act != ACTIVATION_NONE && (l->act < 0 || l->act >= ACT_COUNT)) {
        snprintf(msg, n, "unknown activation %d", l->act);
        return -1;
    }
    return impls[l->kind].infer(l, in, out, msg, n);
}

void layer_forward(LayerCtx *c, const LayerSpec *l) { impls[l->kind].forward(c, l); }
void layer_backward(LayerCtx *c, const LayerSpec *l) { impls[l->kind].backward(c, l); }
