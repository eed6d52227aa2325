/* models/layers.c — the layer kinds: what each checks, lays out and emits.
 *
 * For each kind: shape inference with messages that name what was expected and what the
 * previous layer gives; the parameters (named tensors), state and activations it lays
 * out; and the ops it appends for forward and backward. Backward op order follows the
 * data dependencies: activation gradient first (in place on dy), then parameter
 * gradients, then the input gradients (overwritten by their first writer, else added).
 */
#include "models/layers.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define F32 sizeof(float)

/* Largest weight tensor of one layer (2^36 floats = 256 GiB): beyond it a model file is
 * surely wrong, and the kernels' index arithmetic stays far from overflow. */
#define MAX_WEIGHTS 68719476736.0

static const char *const kind_names[LAYER_KIND_COUNT] = {
    "dense", "conv2d", "pool2d", "lstm", "rnn", "batchnorm", "lrn", "dropout",
    "concat", "add", "activation", "flatten", "embedding", "sparsity", "layernorm", "attention",
    "position", "to_sequence", "class_token", "first_step", "tp_copy", "tp_sum"};

const char *layer_kind_name(LayerKind k) { return (unsigned)k < LAYER_KIND_COUNT ? kind_names[k] : "?"; }

bool layer_kind_from_name(const char *name, LayerKind *out)
{
    for (int i = 0; i < LAYER_KIND_COUNT; i++)
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (LayerKind)i;
            return true;
        }
    return false;
}

static int check_weights(double count, char *msg, size_t n)
{
    if (count <= MAX_WEIGHTS)
        return 0;
    snprintf(msg, n, "%.3g weights in one layer exceed the limit of %.3g", count, MAX_WEIGHTS);
    return -1;
}

/* 0 if the input has `rank` dimensions, else -1 with "<what>; previous layer gives <shape>" */
static int want_rank(const Shape *in, int rank, const char *what, char *msg, size_t n)
{
    if (in->rank == rank)
        return 0;
    char got[48];
    shape_str(in, got, sizeof got);
    snprintf(msg, n, "%s; previous layer gives %s", what, got);
    return -1;
}

static int want_image(const Shape *in, char *msg, size_t n)
{
    return want_rank(in, 3, "expects a (C,H,W) input", msg, n);
}

/* ---- common emission helpers ---- */

static BufRef grad_of(BufRef param)
{
    param.arena = ARENA_GRAD;
    return param;
}

static PlanLayer *self(LayerCtx *c) { return &c->plan->layers[c->layer]; }
static bool training(const LayerCtx *c) { return c->mode != PLAN_INFERENCE; }

/* Output activation y and (when training) its gradient dy. */
static void alloc_output(LayerCtx *c, size_t count)
{
    PlanLayer *pl = self(c);
    pl->y = plan_alloc(c->plan, ARENA_ACT, count * F32);
    if (training(c))
        pl->dy = plan_alloc(c->plan, ARENA_ACTGRAD, count * F32);
}

/* The layer's output is its input's buffer (views: flatten, sparsity, inference dropout). */
static void alias_input(LayerCtx *c)
{
    PlanLayer *pl = self(c);
    int r = c->in_root[0];
    pl->alias_of = r;
    pl->y = c->x[0];
    if (r >= 0)
        pl->dy = c->plan->layers[r].dy;
}

static void emit_act_forward(LayerCtx *c, const LayerSpec *l, BufRef y, size_t count)
{
    if (l->act != ACTIVATION_NONE)
        plan_add(c->plan, c->layer, op_act_in_place(PHASE_FWD, (ActKind)l->act, count), (BufRef[]){y}, 1);
}

/* dy <- dy * f'(y), in place: the gradient w.r.t. the pre-activation. */
static void emit_act_backward(LayerCtx *c, const LayerSpec *l, BufRef y, BufRef dy, size_t count)
{
    if (l->act != ACTIVATION_NONE)
        plan_add(c->plan, c->layer, op_act_in_place(PHASE_BWD_DATA, (ActKind)l->act, count),
                 (BufRef[]){dy, y}, 2);
}

/* Whether the gradient of input k is accumulated (another consumer wrote it already);
 * marks it written. */
static bool take_dx(LayerCtx *c, bool *written, int k)
{
    int r = c->in_root[k];
    bool acc = written[r];
    written[r] = true;
    return acc;
}

/* Emits d, an op that can only write the gradient of input k (bufs[slot]); when another
 * consumer already wrote that gradient, d writes a scratch buffer that is then added. */
static void emit_dx_write(LayerCtx *c, bool *written, int k, OpDesc d, BufRef *bufs, int nbuf, int slot)
{
    if (!take_dx(c, written, k)) {
        bufs[slot] = c->dx[k];
        plan_add(c->plan, c->layer, d, bufs, nbuf);
        return;
    }
    BufRef tmp = plan_alloc(c->plan, ARENA_ACTGRAD, c->dx[k].bytes);
    bufs[slot] = tmp;
    plan_add(c->plan, c->layer, d, bufs, nbuf);
    plan_add(c->plan, c->layer, op_axpby(PHASE_BWD_DATA, c->dx[k].bytes / F32, 1, 1),
             (BufRef[]){c->dx[k], c->dx[k], tmp}, 3);
}

/* db = sum of dy over batch and spatial positions, overwriting: every parameter has one
 * producer of its gradient per step, so gradient buffers are never zeroed. */
static void emit_bias_grad(LayerCtx *c, BufRef b, BufRef dy, int n, int channels, int spatial)
{
    OpDesc d = op_bias(PHASE_BWD_WEIGHTS, n, channels, spatial);
    d.u.bias.accumulate = false;
    plan_add(c->plan, c->layer, d, (BufRef[]){grad_of(b), dy}, 2);
}

static BufRef add_kernel(LayerCtx *c, const LayerSpec *l, size_t count, int fan_in, int fan_out)
{
    return plan_add_tensor(c->plan, c->layer, "kernel", count, true, !l->no_decay, l->init, l->init_scale, 0,
                           fan_in, fan_out);
}

static BufRef add_fill(LayerCtx *c, const char *role, size_t count, bool learnable, float fill)
{
    return plan_add_tensor(c->plan, c->layer, role, count, learnable, false, INIT_UNIFORM, 0, fill, 0, 0);
}

/* The tensor just laid out is this rank's part of one split over the tensor-parallel ranks. */
static void mark_tp_split(LayerCtx *c) { c->plan->params[c->plan->nparams - 1].tp_split = true; }

/* ---- dense ---- */

static int dense_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    if (l->u.dense.units < 1) {
        snprintf(msg, n, "units %d: must be >= 1", l->u.dense.units);
        return -1;
    }
    /* on a sequence (T, F): the same dense layer at every step */
    if (in->rank == 2) {
        *out = (Shape){.rank = 2, .d = {in->d[0], l->u.dense.units}};
        return check_weights((double)in->d[1] * l->u.dense.units, msg, n);
    }
    *out = (Shape){.rank = 1, .d = {l->u.dense.units}};
    return check_weights((double)shape_count(in) * l->u.dense.units, msg, n);
}

static void dense_dims(const LayerCtx *c, const LayerSpec *l, int *rows, int *in)
{
    const Shape *s = &c->in_shape[0];
    *rows = s->rank == 2 ? c->batch * s->d[0] : c->batch;
    *in = s->rank == 2 ? s->d[1] : shape_count(s);
}

/* A tied layer's kernel is the embedding table (out, in): stored transposed. */
static bool dense_tied(const LayerSpec *l) { return l->u.dense.tie > 0; }

static void dense_forward(LayerCtx *c, const LayerSpec *l)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    int rows, in, out = l->u.dense.units;
    dense_dims(c, l, &rows, &in);
    const bool tied = dense_tied(l);
    pl->w = tied ? p->layers[l->u.dense.tie - 1].w : add_kernel(c, l, (size_t)in * out, in, out); /* (in, out) */
    if (l->u.dense.tp_split && !tied)
        mark_tp_split(c);
    if (!l->u.dense.no_bias) {
        pl->b = add_fill(c, "bias", (size_t)out, true, 0);
        if (l->u.dense.tp_split)
            mark_tp_split(c);
    }
    if (!c->active)
        return;
    const size_t count = (size_t)rows * out;
    alloc_output(c, count);
    /* GELU's backward reads its input: the pre-activation is kept apart (saved[0]) */
    const bool gelu = l->act == ACT_GELU;
    const BufRef pre = gelu ? (pl->saved[0] = plan_alloc(p, ARENA_ACT, count * F32)) : pl->y;
    /* y(rows, out) = x(rows, in) . W(in, out) + b; tied: x . E^T, E (out, in) */
    plan_add(p, c->layer, op_gemm(PHASE_FWD, rows, out, in, false, tied, 0), (BufRef[]){pre, c->x[0], pl->w}, 3);
    if (!l->u.dense.no_bias)
        plan_add(p, c->layer, op_bias(PHASE_FWD, rows, out, 1), (BufRef[]){pre, pl->b}, 2);
    if (gelu)
        plan_add(p, c->layer, op_act(PHASE_FWD, ACT_GELU, count), (BufRef[]){pl->y, pre}, 2);
    else
        emit_act_forward(c, l, pl->y, count);
}

static void dense_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    int rows, in, out = l->u.dense.units;
    dense_dims(c, l, &rows, &in);
    const size_t count = (size_t)rows * out;
    /* g: the gradient of the pre-activation (dy itself but under GELU) */
    BufRef g = pl->dy;
    if (l->act == ACT_GELU) {
        g = plan_alloc(p, ARENA_ACTGRAD, count * F32);
        plan_add(p, c->layer, op_act(PHASE_BWD_DATA, ACT_GELU, count), (BufRef[]){g, pl->dy, pl->saved[0]}, 3);
    } else {
        emit_act_backward(c, l, pl->y, pl->dy, count);
    }
    if (!l->u.dense.no_bias)
        emit_bias_grad(c, pl->b, g, rows, out, 1);
    if (dense_tied(l)) {
        /* dE(out, in) = g^T . x, written first: the embedding's scatter-add adds to it (the
         * tying layer comes later, so its backward runs earlier); dx (+)= g . E */
        plan_add(p, c->layer, op_gemm(PHASE_BWD_WEIGHTS, out, in, rows, true, false, 0),
                 (BufRef[]){grad_of(pl->w), g, c->x[0]}, 3);
        if (c->need_dx[0])
            plan_add(p, c->layer, op_gemm(PHASE_BWD_DATA, rows, in, out, false, false, take_dx(c, written, 0) ? 1 : 0),
                     (BufRef[]){c->dx[0], g, pl->w}, 3);
        return;
    }
    /* dW(in, out) = x^T . g */
    plan_add(p, c->layer, op_gemm(PHASE_BWD_WEIGHTS, in, out, rows, true, false, 0),
             (BufRef[]){grad_of(pl->w), c->x[0], g}, 3);
    /* dx(rows, in) (+)= g . W^T */
    if (c->need_dx[0])
        plan_add(p, c->layer, op_gemm(PHASE_BWD_DATA, rows, in, out, false, true, take_dx(c, written, 0) ? 1 : 0),
                 (BufRef[]){c->dx[0], g, pl->w}, 3);
}

/* ---- conv2d ---- */

static OpDesc conv_desc(const LayerSpec *l, const Shape *in, int batch, OpPhase phase)
{
    const ConvSpec *s = &l->u.conv;
    if (s->explicit_pad)
        return op_conv2d_explicit(phase, batch, in->d[0], in->d[1], in->d[2], s->filters, s->kh, s->kw, s->stride,
                                  s->stride, s->pad_h, s->pad_w, s->groups);
    return op_conv2d(phase, batch, in->d[0], in->d[1], in->d[2], s->filters, s->kh, s->kw, s->stride, s->pad,
                     s->groups);
}

static int conv_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    const ConvSpec *s = &l->u.conv;
    if (want_image(in, msg, n))
        return -1;
    if (s->filters < 1 || s->kh < 1 || s->kw < 1 || s->stride < 1 || s->groups < 1) {
        snprintf(msg, n, "filters, kernel size, stride and groups must be >= 1");
        return -1;
    }
    if (s->explicit_pad && (s->pad_h < 0 || s->pad_w < 0 || s->pad_h >= s->kh || s->pad_w >= s->kw)) {
        snprintf(msg, n, "padding %dx%d must be >= 0 and smaller than the %dx%d kernel", s->pad_h, s->pad_w, s->kh,
                 s->kw);
        return -1;
    }
    if (in->d[0] % s->groups || s->filters % s->groups) {
        snprintf(msg, n, "groups %d must divide the %d input channels and the %d filters", s->groups, in->d[0],
                 s->filters);
        return -1;
    }
    int ph = s->explicit_pad ? 2 * s->pad_h : 0, pw = s->explicit_pad ? 2 * s->pad_w : 0;
    if ((s->pad == PAD_VALID || s->explicit_pad) && (s->kh > in->d[1] + ph || s->kw > in->d[2] + pw)) {
        snprintf(msg, n, "kernel %dx%d is larger than its %dx%d input (with padding)", s->kh, s->kw, in->d[1] + ph,
                 in->d[2] + pw);
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
    PlanLayer *pl = self(c);
    const ConvSpec *s = &l->u.conv;
    const Shape *in = &c->in_shape[0];
    int cin_g = in->d[0] / s->groups, spatial = pl->out.d[1] * pl->out.d[2], B = c->batch;
    size_t wcount = (size_t)s->filters * cin_g * s->kh * s->kw; /* (K, C/g, R, S) */
    pl->w = add_kernel(c, l, wcount, cin_g * s->kh * s->kw, s->filters / s->groups * s->kh * s->kw);
    if (!s->no_bias)
        pl->b = add_fill(c, "bias", (size_t)s->filters, true, 0);
    if (!c->active)
        return;
    size_t ycount = (size_t)B * s->filters * spatial;
    alloc_output(c, ycount);
    plan_add(p, c->layer, conv_desc(l, in, B, PHASE_FWD), (BufRef[]){pl->y, c->x[0], pl->w}, 3);
    if (!s->no_bias)
        plan_add(p, c->layer, op_bias(PHASE_FWD, B, s->filters, spatial), (BufRef[]){pl->y, pl->b}, 2);
    emit_act_forward(c, l, pl->y, ycount);
}

static void conv_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    const ConvSpec *s = &l->u.conv;
    const Shape *in = &c->in_shape[0];
    int spatial = pl->out.d[1] * pl->out.d[2], B = c->batch;
    emit_act_backward(c, l, pl->y, pl->dy, (size_t)B * s->filters * spatial);
    if (!s->no_bias)
        emit_bias_grad(c, pl->b, pl->dy, B, s->filters, spatial);
    OpDesc dw = conv_desc(l, in, B, PHASE_BWD_WEIGHTS);
    dw.u.conv.accumulate = false;
    plan_add(p, c->layer, dw, (BufRef[]){grad_of(pl->w), pl->dy, c->x[0]}, 3);
    if (c->need_dx[0]) {
        OpDesc dx = conv_desc(l, in, B, PHASE_BWD_DATA);
        dx.u.conv.accumulate = take_dx(c, written, 0);
        plan_add(p, c->layer, dx, (BufRef[]){c->dx[0], pl->dy, pl->w}, 3);
    }
}

/* ---- pool2d ---- */

/* Caffe rounds pooled sizes up, and drops a last window that would start in the padding;
 * the overhang becomes extra bottom/right padding. */
static int caffe_extra_pad(int in, int win, int stride, int pad)
{
    int out = (in + 2 * pad - win + stride - 1) / stride + 1;
    if ((out - 1) * stride >= in + pad)
        out--;
    int extra = (out - 1) * stride + win - (in + 2 * pad);
    return extra > 0 ? extra : 0;
}

static OpDesc pool_desc(const LayerSpec *l, const Shape *in, int batch, OpPhase phase)
{
    const PoolSpec *s = &l->u.pool;
    int C = in->d[0], H = in->d[1], W = in->d[2];
    if (s->global)
        return op_pool2d_global(phase, s->kind, batch, C, H, W);
    if (s->explicit_pad || s->ceil_mode) {
        int ph = s->explicit_pad ? s->pad_h : 0, pw = s->explicit_pad ? s->pad_w : 0;
        int eh = s->ceil_mode ? caffe_extra_pad(H, s->win, s->stride, ph) : 0;
        int ew = s->ceil_mode ? caffe_extra_pad(W, s->win, s->stride, pw) : 0;
        return op_pool2d_pads(phase, s->kind, batch, C, H, W, s->win, s->stride, ph, pw, ph + eh, pw + ew);
    }
    return op_pool2d(phase, s->kind, batch, C, H, W, s->win, s->stride, s->pad);
}

static int pool_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    const PoolSpec *s = &l->u.pool;
    if (want_image(in, msg, n))
        return -1;
    if (s->global) {
        *out = (Shape){.rank = 3, .d = {in->d[0], 1, 1}};
        return 0;
    }
    if (s->win < 1 || s->stride < 1) {
        snprintf(msg, n, "window and stride must be >= 1");
        return -1;
    }
    int ph = s->explicit_pad ? s->pad_h : 0, pw = s->explicit_pad ? s->pad_w : 0;
    if (s->explicit_pad && (ph < 0 || pw < 0 || ph >= s->win || pw >= s->win)) {
        snprintf(msg, n, "padding must be >= 0 and smaller than the window %d", s->win);
        return -1;
    }
    if ((s->pad == PAD_VALID || s->explicit_pad) && (s->win > in->d[1] + 2 * ph || s->win > in->d[2] + 2 * pw)) {
        snprintf(msg, n, "window %d is larger than its %dx%d input", s->win, in->d[1], in->d[2]);
        return -1;
    }
    OpDesc d = pool_desc(l, in, 1, PHASE_FWD);
    *out = (Shape){.rank = 3, .d = {in->d[0], d.u.pool.out_h, d.u.pool.out_w}};
    return 0;
}

static void pool_forward(LayerCtx *c, const LayerSpec *l)
{
    PlanLayer *pl = self(c);
    if (!c->active)
        return;
    alloc_output(c, (size_t)c->batch * shape_count(&pl->out));
    plan_add(c->plan, c->layer, pool_desc(l, &c->in_shape[0], c->batch, PHASE_FWD), (BufRef[]){pl->y, c->x[0]}, 2);
}

static void pool_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    PlanLayer *pl = self(c);
    if (!c->need_dx[0])
        return;
    OpDesc d = pool_desc(l, &c->in_shape[0], c->batch, PHASE_BWD_DATA);
    d.u.pool.accumulate = take_dx(c, written, 0);
    plan_add(c->plan, c->layer, d, (BufRef[]){c->dx[0], pl->dy, c->x[0], pl->y}, 4);
}

/* ---- recurrent: LSTM and plain RNN ----
 * Sequences are time-major: x is (T, B, F), so each step's input is one contiguous
 * (B, F) block. W is ((F + H), G*H) with G = 4 gates (LSTM) or 1 (RNN): rows [0, F)
 * multiply x_t, rows [F, F+H) multiply h_{t-1} — the single matmul of concat(x_t,
 * h_{t-1}) in TF's cells, split so the input projection of all T steps is one large GEMM.
 * Saved for backward: pre (T,B,GH), act (T,B,4H, LSTM), c (T+1,B,H, LSTM) and
 * h (T+1,B,H), with c_0 = h_0 = 0. */

enum { REC_PRE, REC_ACT, REC_C, REC_H, REC_DPRE, REC_DC, REC_DH };

static int rec_gates(const LayerSpec *l) { return l->kind == LAYER_LSTM ? 4 : 1; }

static int rec_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    const RecurrentSpec *s = &l->u.rnn;
    if (want_rank(in, 2, "expects a (time steps, features) input", msg, n))
        return -1;
    if (s->hidden < 1) {
        snprintf(msg, n, "hidden %d: must be >= 1", s->hidden);
        return -1;
    }
    *out = s->last_only ? (Shape){.rank = 1, .d = {s->hidden}} : (Shape){.rank = 2, .d = {in->d[0], s->hidden}};
    return check_weights(((double)in->d[1] + s->hidden) * rec_gates(l) * s->hidden, msg, n);
}

static BufRef step_slice(BufRef b, int t, size_t step_bytes) { return buf_slice(b, (size_t)t * step_bytes, step_bytes); }

static void rec_forward(LayerCtx *c, const LayerSpec *l)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    const Shape *in = &c->in_shape[0];
    int T = in->d[0], F = in->d[1], H = l->u.rnn.hidden, B = c->batch, G = rec_gates(l);
    bool lstm = l->kind == LAYER_LSTM;
    size_t gb = (size_t)B * G * H * F32, hb = (size_t)B * H * F32;
    pl->w = add_kernel(c, l, (size_t)(F + H) * G * H, F + H, G * H);
    pl->b = add_fill(c, "bias", (size_t)G * H, true, 0);
    if (!c->active)
        return;
    BufRef wx = buf_slice(pl->w, 0, (size_t)F * G * H * F32);
    BufRef wh = buf_slice(pl->w, (size_t)F * G * H * F32, (size_t)H * G * H * F32);
    BufRef pre = plan_alloc(p, ARENA_ACT, (size_t)T * gb);
    BufRef hs = plan_alloc(p, ARENA_ACT, (size_t)(T + 1) * hb);
    BufRef act = {0}, cs = {0};
    if (lstm) {
        act = plan_alloc(p, ARENA_ACT, (size_t)T * gb);
        cs = plan_alloc(p, ARENA_ACT, (size_t)(T + 1) * hb);
    }
    pl->saved[REC_PRE] = pre;
    pl->saved[REC_ACT] = act;
    pl->saved[REC_C] = cs;
    pl->saved[REC_H] = hs;
    bool last = l->u.rnn.last_only;
    pl->y = last ? step_slice(hs, T, hb) : buf_slice(hs, hb, (size_t)T * hb);
    if (training(c)) {
        BufRef dh = plan_alloc(p, ARENA_ACTGRAD, (size_t)(T + 1) * hb);
        pl->saved[REC_DH] = dh;
        pl->saved[REC_DPRE] = plan_alloc(p, ARENA_ACTGRAD, (size_t)T * gb);
        if (lstm)
            pl->saved[REC_DC] = plan_alloc(p, ARENA_ACTGRAD, (size_t)(T + 1) * hb);
        pl->dy = last ? step_slice(dh, T, hb) : buf_slice(dh, hb, (size_t)T * hb);
    }

    /* pre(T*B, GH) = x(T*B, F) . W_x: the input projection of every step at once */
    plan_add(p, c->layer, op_gemm(PHASE_FWD, T * B, G * H, F, false, false, 0), (BufRef[]){pre, c->x[0], wx}, 3);
    for (int t = 1; t <= T; t++) {
        BufRef pre_t = step_slice(pre, t - 1, gb);
        /* pre_t += h_{t-1} . W_h (computed at t = 1 too, as TF does with h_0 = 0) */
        plan_add(p, c->layer, op_gemm(PHASE_FWD, B, G * H, H, false, false, 1),
                 (BufRef[]){pre_t, step_slice(hs, t - 1, hb), wh}, 3);
        if (lstm) {
            plan_add(p, c->layer, op_lstm_cell(PHASE_FWD, B, H, l->u.rnn.forget_bias),
                     (BufRef[]){step_slice(cs, t, hb), step_slice(hs, t, hb), step_slice(act, t - 1, gb), pre_t,
                                step_slice(cs, t - 1, hb), pl->b},
                     6);
        } else { /* TF BasicRNNCell: h_t = tanh(pre_t + b) */
            plan_add(p, c->layer, op_bias(PHASE_FWD, B, H, 1), (BufRef[]){pre_t, pl->b}, 2);
            plan_add(p, c->layer, op_act(PHASE_FWD, ACT_TANH, (size_t)B * H),
                     (BufRef[]){step_slice(hs, t, hb), pre_t}, 2);
        }
    }
}

static void rec_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    const Shape *in = &c->in_shape[0];
    int T = in->d[0], F = in->d[1], H = l->u.rnn.hidden, B = c->batch, G = rec_gates(l);
    bool lstm = l->kind == LAYER_LSTM;
    size_t gb = (size_t)B * G * H * F32, hb = (size_t)B * H * F32;
    BufRef wx = buf_slice(pl->w, 0, (size_t)F * G * H * F32);
    BufRef wh = buf_slice(pl->w, (size_t)F * G * H * F32, (size_t)H * G * H * F32);
    BufRef act = pl->saved[REC_ACT], cs = pl->saved[REC_C], hs = pl->saved[REC_H];
    BufRef dpre = pl->saved[REC_DPRE], dc = pl->saved[REC_DC], dh = pl->saved[REC_DH];
    /* With every step as output, dh_t already holds the consumer's gradient and the
     * recurrence adds to it; with the last step only, the recurrence writes it. */
    float rec_beta = l->u.rnn.last_only ? 0 : 1;

    if (lstm) /* nothing flows into c_T from a later step */
        plan_add(p, c->layer, op_zero(PHASE_BWD_DATA, (size_t)B * H), (BufRef[]){step_slice(dc, T, hb)}, 1);
    for (int t = T; t >= 1; t--) {
        BufRef dpre_t = step_slice(dpre, t - 1, gb);
        if (lstm)
            plan_add(p, c->layer, op_lstm_cell(PHASE_BWD_DATA, B, H, l->u.rnn.forget_bias),
                     (BufRef[]){dpre_t, step_slice(dc, t - 1, hb), step_slice(dh, t, hb), step_slice(dc, t, hb),
                                step_slice(act, t - 1, gb), step_slice(cs, t - 1, hb), step_slice(cs, t, hb)},
                     7);
        else /* dpre_t = dh_t * (1 - h_t^2) */
            plan_add(p, c->layer, op_act(PHASE_BWD_DATA, ACT_TANH, (size_t)B * H),
                     (BufRef[]){dpre_t, step_slice(dh, t, hb), step_slice(hs, t, hb)}, 3);
        /* dh_{t-1}(B, H) (+)= dpre_t . W_h^T */
        if (t > 1)
            plan_add(p, c->layer, op_gemm(PHASE_BWD_DATA, B, H, G * H, false, true, rec_beta),
                     (BufRef[]){step_slice(dh, t - 1, hb), dpre_t, wh}, 3);
    }
    /* Weight gradients of all steps at once: dW_x = X^T . dPre, dW_h = H_{0..T-1}^T . dPre */
    BufRef dwx = buf_slice(grad_of(pl->w), 0, wx.bytes);
    BufRef dwh = buf_slice(grad_of(pl->w), wx.bytes, wh.bytes);
    plan_add(p, c->layer, op_gemm(PHASE_BWD_WEIGHTS, F, G * H, T * B, true, false, 0),
             (BufRef[]){dwx, c->x[0], dpre}, 3);
    plan_add(p, c->layer, op_gemm(PHASE_BWD_WEIGHTS, H, G * H, T * B, true, false, 0),
             (BufRef[]){dwh, buf_slice(hs, 0, (size_t)T * hb), dpre}, 3);
    emit_bias_grad(c, pl->b, dpre, T * B, G * H, 1);
    if (c->need_dx[0])
        plan_add(p, c->layer, op_gemm(PHASE_BWD_DATA, T * B, F, G * H, false, true, take_dx(c, written, 0) ? 1 : 0),
                 (BufRef[]){c->dx[0], dpre, wx}, 3);
}

/* ---- batch normalisation ---- */

/* Per-channel view (n, c, spatial) of an image (C, H*W) or a vector (features, 1). */
static void bn_dims(const Shape *in, int *ch, int *spatial)
{
    *ch = in->rank == 3 ? in->d[0] : shape_count(in);
    *spatial = in->rank == 3 ? in->d[1] * in->d[2] : 1;
}

static int bn_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    if (in->rank == 2) {
        snprintf(msg, n, "batch normalisation of sequences is not supported");
        return -1;
    }
    if (!(l->u.bn.eps > 0) || !(l->u.bn.momentum >= 0 && l->u.bn.momentum < 1)) {
        snprintf(msg, n, "eps must be > 0 and momentum in [0, 1)");
        return -1;
    }
    *out = *in;
    return 0;
}

enum { BN_MEAN, BN_INVSTD, BN_RUN_MEAN, BN_RUN_VAR };

static void bn_forward(LayerCtx *c, const LayerSpec *l)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    int ch, sp, B = c->batch;
    bn_dims(&c->in_shape[0], &ch, &sp);
    pl->w = add_fill(c, "gamma", (size_t)ch, true, 1);
    pl->b = add_fill(c, "beta", (size_t)ch, true, 0);
    pl->saved[BN_RUN_MEAN] = add_fill(c, "running_mean", (size_t)ch, false, 0);
    pl->saved[BN_RUN_VAR] = add_fill(c, "running_var", (size_t)ch, false, 1);
    if (!c->active)
        return;
    size_t count = (size_t)B * ch * sp;
    alloc_output(c, count);
    const BnSpec *s = &l->u.bn;
    if (training(c)) {
        pl->saved[BN_MEAN] = plan_alloc(p, ARENA_ACT, (size_t)ch * F32);
        pl->saved[BN_INVSTD] = plan_alloc(p, ARENA_ACT, (size_t)ch * F32);
        plan_add(p, c->layer, op_batchnorm(PHASE_FWD, B, ch, sp, s->eps, s->momentum, true),
                 (BufRef[]){pl->y, pl->saved[BN_MEAN], pl->saved[BN_INVSTD], pl->saved[BN_RUN_MEAN],
                            pl->saved[BN_RUN_VAR], c->x[0], pl->w, pl->b},
                 8);
    } else {
        plan_add(p, c->layer, op_batchnorm(PHASE_FWD, B, ch, sp, s->eps, s->momentum, false),
                 (BufRef[]){pl->y, c->x[0], pl->w, pl->b, pl->saved[BN_RUN_MEAN], pl->saved[BN_RUN_VAR]}, 6);
    }
    emit_act_forward(c, l, pl->y, count);
}

static void bn_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    int ch, sp, B = c->batch;
    bn_dims(&c->in_shape[0], &ch, &sp);
    const BnSpec *s = &l->u.bn;
    emit_act_backward(c, l, pl->y, pl->dy, (size_t)B * ch * sp);
    /* dgamma, dbeta first: the data gradient reads them */
    OpDesc dw = op_batchnorm(PHASE_BWD_WEIGHTS, B, ch, sp, s->eps, s->momentum, true);
    dw.u.bn.accumulate = false;
    plan_add(p, c->layer, dw,
             (BufRef[]){grad_of(pl->w), grad_of(pl->b), pl->dy, c->x[0], pl->saved[BN_MEAN], pl->saved[BN_INVSTD]},
             6);
    if (c->need_dx[0]) {
        OpDesc dx = op_batchnorm(PHASE_BWD_DATA, B, ch, sp, s->eps, s->momentum, true);
        dx.u.bn.accumulate = take_dx(c, written, 0);
        plan_add(p, c->layer, dx,
                 (BufRef[]){c->dx[0], pl->dy, c->x[0], pl->w, pl->saved[BN_MEAN], pl->saved[BN_INVSTD],
                            grad_of(pl->w), grad_of(pl->b)},
                 8);
    }
}

/* ---- local response normalisation ---- */

static int lrn_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    if (want_image(in, msg, n))
        return -1;
    if (l->u.lrn.size < 1 || !(l->u.lrn.k > 0)) {
        snprintf(msg, n, "size must be >= 1 and k > 0");
        return -1;
    }
    *out = *in;
    return 0;
}

static OpDesc lrn_desc(const LayerSpec *l, const Shape *in, int batch, OpPhase phase)
{
    const LrnSpec *s = &l->u.lrn;
    return op_lrn(phase, batch, in->d[0], in->d[1] * in->d[2], s->size, s->alpha, s->beta, s->k);
}

static void lrn_forward(LayerCtx *c, const LayerSpec *l)
{
    PlanLayer *pl = self(c);
    if (!c->active)
        return;
    size_t count = (size_t)c->batch * shape_count(&pl->out);
    alloc_output(c, count);
    pl->saved[0] = plan_alloc(c->plan, ARENA_ACT, count * F32); /* scale */
    plan_add(c->plan, c->layer, lrn_desc(l, &c->in_shape[0], c->batch, PHASE_FWD),
             (BufRef[]){pl->y, pl->saved[0], c->x[0]}, 3);
}

static void lrn_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    PlanLayer *pl = self(c);
    if (!c->need_dx[0])
        return;
    OpDesc d = lrn_desc(l, &c->in_shape[0], c->batch, PHASE_BWD_DATA);
    d.u.lrn.accumulate = take_dx(c, written, 0);
    plan_add(c->plan, c->layer, d, (BufRef[]){c->dx[0], pl->dy, c->x[0], pl->y, pl->saved[0]}, 5);
}

/* ---- dropout ---- */

static int dropout_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    if (!(l->u.dropout.rate >= 0 && l->u.dropout.rate < 1)) {
        snprintf(msg, n, "rate %g: must be in [0, 1)", l->u.dropout.rate);
        return -1;
    }
    *out = *in;
    return 0;
}

static void dropout_forward(LayerCtx *c, const LayerSpec *l)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    if (!c->active)
        return;
    if (!training(c)) { /* identity at inference */
        alias_input(c);
        return;
    }
    size_t count = (size_t)c->batch * shape_count(&pl->out);
    alloc_output(c, count);
    pl->saved[0] = plan_alloc(p, ARENA_ACT, count * F32); /* mask */
    if (p->step_counter.bytes == 0)
        p->step_counter = plan_alloc(p, ARENA_STATE, sizeof(int32_t));
    /* each layer its own stream of masks */
    uint32_t seed = 0x9e3779b9u * (uint32_t)(c->layer + 1);
    plan_add(p, c->layer, op_dropout(PHASE_FWD, count, l->u.dropout.rate, seed),
             (BufRef[]){pl->y, pl->saved[0], c->x[0], p->step_counter}, 4);
}

static void dropout_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    PlanLayer *pl = self(c);
    if (!c->need_dx[0])
        return;
    size_t count = (size_t)c->batch * shape_count(&pl->out);
    BufRef bufs[3] = {{0}, pl->dy, pl->saved[0]};
    emit_dx_write(c, written, 0, op_dropout(PHASE_BWD_DATA, count, l->u.dropout.rate, 0), bufs, 3, 0);
}

/* ---- concat (channels) and add ---- */

/* Channels and spatial size of an image or a vector (as (features, 1)). */
static void chan_dims(const Shape *s, int *ch, int *spatial)
{
    *ch = s->rank == 3 ? s->d[0] : shape_count(s);
    *spatial = s->rank == 3 ? s->d[1] * s->d[2] : 1;
}

static int concat_infer(const LayerSpec *l, const Shape *in, int nin, Shape *out, char *msg, size_t n)
{
    if (nin < 2) {
        snprintf(msg, n, "concat needs at least 2 inputs, has %d", nin);
        return -1;
    }
    int total = 0;
    for (int k = 0; k < nin; k++) {
        char a[48], b[48];
        shape_str(&in[0], a, sizeof a);
        shape_str(&in[k], b, sizeof b);
        if (in[k].rank != in[0].rank || in[k].rank == 2 ||
            (in[k].rank == 3 && (in[k].d[1] != in[0].d[1] || in[k].d[2] != in[0].d[2]))) {
            snprintf(msg, n, "input %d gives %s, input 1 gives %s: concat needs images of one size (or vectors)",
                     k + 1, b, a);
            return -1;
        }
        int ch, sp;
        chan_dims(&in[k], &ch, &sp);
        total += ch;
    }
    *out = in[0];
    out->d[0] = total;
    return 0;
}

static void concat_forward(LayerCtx *c, const LayerSpec *l)
{
    PlanLayer *pl = self(c);
    if (!c->active)
        return;
    int C, sp;
    chan_dims(&pl->out, &C, &sp);
    alloc_output(c, (size_t)c->batch * C * sp);
    for (int k = 0, off = 0; k < c->nin; k++) {
        int ck, spk;
        chan_dims(&c->in_shape[k], &ck, &spk);
        plan_add(c->plan, c->layer, op_channel_copy(PHASE_FWD, c->batch, C, ck, off, sp), (BufRef[]){pl->y, c->x[k]},
                 2);
        off += ck;
    }
}

static void concat_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    PlanLayer *pl = self(c);
    int C, sp;
    chan_dims(&pl->out, &C, &sp);
    for (int k = 0, off = 0; k < c->nin; k++) {
        int ck, spk;
        chan_dims(&c->in_shape[k], &ck, &spk);
        if (c->need_dx[k]) {
            OpDesc d = op_channel_copy(PHASE_BWD_DATA, c->batch, C, ck, off, sp);
            d.u.chan.accumulate = take_dx(c, written, k);
            plan_add(c->plan, c->layer, d, (BufRef[]){c->dx[k], pl->dy}, 2);
        }
        off += ck;
    }
}

static int add_infer(const LayerSpec *l, const Shape *in, int nin, Shape *out, char *msg, size_t n)
{
    if (nin < 2) {
        snprintf(msg, n, "add needs at least 2 inputs, has %d", nin);
        return -1;
    }
    for (int k = 1; k < nin; k++)
        if (memcmp(&in[k], &in[0], sizeof in[0]) != 0) {
            char a[48], b[48];
            shape_str(&in[0], a, sizeof a);
            shape_str(&in[k], b, sizeof b);
            snprintf(msg, n, "input %d gives %s, input 1 gives %s: add needs equal shapes", k + 1, b, a);
            return -1;
        }
    *out = in[0];
    return 0;
}

static void add_forward(LayerCtx *c, const LayerSpec *l)
{
    PlanLayer *pl = self(c);
    if (!c->active)
        return;
    size_t count = (size_t)c->batch * shape_count(&pl->out);
    alloc_output(c, count);
    plan_add(c->plan, c->layer, op_axpby(PHASE_FWD, count, 1, 1), (BufRef[]){pl->y, c->x[0], c->x[1]}, 3);
    for (int k = 2; k < c->nin; k++)
        plan_add(c->plan, c->layer, op_axpby(PHASE_FWD, count, 1, 1), (BufRef[]){pl->y, pl->y, c->x[k]}, 3);
    emit_act_forward(c, l, pl->y, count);
}

/* dx_k (+)= dy, count floats: a copy for the first writer, an add for the later ones. */
static void emit_dx_pass(LayerCtx *c, bool *written, int k, BufRef dy, size_t count)
{
    if (take_dx(c, written, k))
        plan_add(c->plan, c->layer, op_axpby(PHASE_BWD_DATA, count, 1, 1), (BufRef[]){c->dx[k], c->dx[k], dy}, 3);
    else
        plan_add(c->plan, c->layer, op_copy(PHASE_BWD_DATA, count), (BufRef[]){c->dx[k], dy}, 2);
}

static void add_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    PlanLayer *pl = self(c);
    size_t count = (size_t)c->batch * shape_count(&pl->out);
    emit_act_backward(c, l, pl->y, pl->dy, count);
    for (int k = 0; k < c->nin; k++)
        if (c->need_dx[k])
            emit_dx_pass(c, written, k, pl->dy, count);
}

/* ---- activation, flatten ---- */

static int activation_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    if (l->act == ACTIVATION_NONE) {
        snprintf(msg, n, "an activation layer needs an activation (relu, sigmoid, tanh)");
        return -1;
    }
    *out = *in;
    return 0;
}

static void activation_forward(LayerCtx *c, const LayerSpec *l)
{
    PlanLayer *pl = self(c);
    if (!c->active)
        return;
    size_t count = (size_t)c->batch * shape_count(&pl->out);
    alloc_output(c, count);
    plan_add(c->plan, c->layer, op_act(PHASE_FWD, (ActKind)l->act, count), (BufRef[]){pl->y, c->x[0]}, 2);
}

static void activation_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    PlanLayer *pl = self(c);
    if (!c->need_dx[0])
        return;
    size_t count = (size_t)c->batch * shape_count(&pl->out);
    /* GELU's derivative is of its input; the others' of their output */
    BufRef bufs[3] = {{0}, pl->dy, l->act == ACT_GELU ? c->x[0] : pl->y};
    emit_dx_write(c, written, 0, op_act(PHASE_BWD_DATA, (ActKind)l->act, count), bufs, 3, 0);
}

static int flatten_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    if (in->rank == 2) {
        snprintf(msg, n, "flatten of a sequence is not supported");
        return -1;
    }
    *out = (Shape){.rank = 1, .d = {shape_count(in)}};
    return 0;
}

static void view_forward(LayerCtx *c, const LayerSpec *l)
{
    if (c->active)
        alias_input(c);
}

static void view_backward(LayerCtx *c, const LayerSpec *l, bool *written) {}

/* ---- embedding ---- */

static int embedding_infer(const ModelSpec *m, const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    const EmbeddingSpec *s = &l->u.embed;
    const bool sequence = in->rank == 2 && in->d[1] == 1;
    if (l->inputs[0] != -1 || !m->input_ids || (in->rank != 1 && !sequence)) {
        snprintf(msg, n, "an embedding reads the model's token ids: it must be the first layer of a model whose "
                         "input is ids (T), or a sequence of ids (T, 1)");
        return -1;
    }
    if (s->vocab < 1 || s->dim < 1) {
        snprintf(msg, n, "vocab and dim must be >= 1");
        return -1;
    }
    /* ids (T): an image (1, T, dim) for convolutions over the words (TextCNN); a sequence of
     * ids (T, 1), stored time-major: a sequence (T, dim) (transformers) */
    *out = sequence ? (Shape){.rank = 2, .d = {in->d[0], s->dim}} : (Shape){.rank = 3, .d = {1, in->d[0], s->dim}};
    return check_weights((double)s->vocab * s->dim, msg, n);
}

/* The table's lookup (FWD) or scatter-add (BWD_WEIGHTS): a vocabulary-parallel block's own. */
static OpDesc embedding_op(OpPhase phase, int rows, const EmbeddingSpec *s)
{
    return s->tp_split ? op_embedding_part(phase, rows, s->vocab, s->dim) : op_embedding(phase, rows, s->vocab, s->dim);
}

static void embedding_forward(LayerCtx *c, const LayerSpec *l)
{
    PlanLayer *pl = self(c);
    const EmbeddingSpec *s = &l->u.embed;
    int rows = c->batch * c->in_shape[0].d[0];
    /* Keras Embedding: uniform(-0.05, 0.05); a frozen table is state, not a parameter */
    pl->w = plan_add_tensor(c->plan, c->layer, "embeddings", (size_t)s->vocab * s->dim, !s->frozen,
                            s->decayed && !s->frozen,
                            l->init_scale > 0 ? l->init : INIT_UNIFORM, l->init_scale > 0 ? l->init_scale : 0.05f, 0,
                            s->vocab, s->dim);
    if (s->tp_split)
        mark_tp_split(c);
    if (!c->active)
        return;
    alloc_output(c, (size_t)rows * s->dim);
    plan_add(c->plan, c->layer, embedding_op(PHASE_FWD, rows, s), (BufRef[]){pl->y, c->x[0], pl->w}, 3);
    /* the output's gradient is never read: only a trainable table needs it */
}

static void embedding_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    PlanLayer *pl = self(c);
    const EmbeddingSpec *s = &l->u.embed;
    if (s->frozen)
        return;
    int rows = c->batch * c->in_shape[0].d[0];
    OpDesc d = embedding_op(PHASE_BWD_WEIGHTS, rows, s);
    /* a later dense layer whose kernel this table is (tied) wrote the gradient first */
    d.u.embed.accumulate = false;
    for (int j = c->layer + 1; j < c->model->nlayers; j++) {
        const LayerSpec *o = &c->model->layers[j];
        if (o->kind == LAYER_DENSE && o->u.dense.tie == c->layer + 1 && c->plan->layers[j].y.bytes > 0)
            d.u.embed.accumulate = true;
    }
    plan_add(c->plan, c->layer, d, (BufRef[]){grad_of(pl->w), pl->dy, c->x[0]}, 3);
}

/* ---- sparsity (a view that adds the KL penalty of its input's mean activation) ---- */

static int sparsity_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    const SparsitySpec *s = &l->u.sparsity;
    if (in->rank != 1) {
        snprintf(msg, n, "the sparsity penalty applies to a vector of (sigmoid) activations");
        return -1;
    }
    if (!(s->rho > 0 && s->rho < 1) || !(s->beta >= 0)) {
        snprintf(msg, n, "rho must be in (0, 1) and beta >= 0");
        return -1;
    }
    *out = *in;
    return 0;
}

static void sparsity_forward(LayerCtx *c, const LayerSpec *l)
{
    if (!c->active)
        return;
    alias_input(c);
    self(c)->saved[0] = plan_alloc(c->plan, ARENA_ACT, (size_t)shape_count(&c->in_shape[0]) * F32); /* rho_hat */
}

void layer_emit_penalty(LayerCtx *c, int i)
{
    const LayerSpec *l = &c->model->layers[i];
    PlanLayer *pl = &c->plan->layers[i];
    int units = shape_count(&pl->out);
    plan_add(c->plan, i, op_kl_sparsity(PHASE_FWD, c->batch, units, l->u.sparsity.rho, l->u.sparsity.beta),
             (BufRef[]){c->plan->loss, pl->saved[0], pl->y}, 3);
}

static void sparsity_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    PlanLayer *pl = self(c);
    int units = shape_count(&pl->out);
    /* adds to the gradient the consumers wrote into the viewed layer's dy */
    plan_add(c->plan, c->layer, op_kl_sparsity(PHASE_BWD_DATA, c->batch, units, l->u.sparsity.rho, l->u.sparsity.beta),
             (BufRef[]){pl->dy, pl->saved[0]}, 2);
}

/* ---- layer normalisation ---- */

static int layernorm_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    if (in->rank == 3) {
        snprintf(msg, n, "normalises the features of a sequence (T, F) or a vector (F), not a (C,H,W) image");
        return -1;
    }
    if (!(l->u.ln.eps > 0) || !isfinite(l->u.ln.eps)) {
        snprintf(msg, n, "eps %g: must be finite and > 0 (PyTorch: 1e-5)", l->u.ln.eps);
        return -1;
    }
    *out = *in;
    return 0;
}

/* rows of h features: every step of every sample, or every sample */
static void row_dims(const LayerCtx *c, int *rows, int *h)
{
    const Shape *s = &c->in_shape[0];
    *rows = s->rank == 2 ? c->batch * s->d[0] : c->batch;
    *h = s->rank == 2 ? s->d[1] : s->d[0];
}

static void layernorm_forward(LayerCtx *c, const LayerSpec *l)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    int rows, h;
    row_dims(c, &rows, &h);
    pl->w = add_fill(c, "gamma", (size_t)h, true, 1);
    pl->b = add_fill(c, "beta", (size_t)h, true, 0);
    if (!c->active)
        return;
    alloc_output(c, (size_t)rows * h);
    pl->saved[0] = plan_alloc(p, ARENA_ACT, (size_t)rows * F32); /* mean */
    pl->saved[1] = plan_alloc(p, ARENA_ACT, (size_t)rows * F32); /* rstd */
    plan_add(p, c->layer, op_layernorm(PHASE_FWD, rows, h, l->u.ln.eps),
             (BufRef[]){pl->y, pl->saved[0], pl->saved[1], c->x[0], pl->w, pl->b}, 6);
}

static void layernorm_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    int rows, h;
    row_dims(c, &rows, &h);
    OpDesc dw = op_layernorm(PHASE_BWD_WEIGHTS, rows, h, l->u.ln.eps);
    dw.u.ln.accumulate = false;
    plan_add(p, c->layer, dw, (BufRef[]){grad_of(pl->w), grad_of(pl->b), pl->dy, c->x[0], pl->saved[0], pl->saved[1]},
             6);
    if (!c->need_dx[0])
        return;
    OpDesc dx = op_layernorm(PHASE_BWD_DATA, rows, h, l->u.ln.eps);
    dx.u.ln.accumulate = take_dx(c, written, 0);
    plan_add(p, c->layer, dx, (BufRef[]){c->dx[0], pl->dy, c->x[0], pl->w, pl->saved[0], pl->saved[1]}, 6);
}

/* ---- self-attention ----
 * On the time-major sequence (T, B, D) as it is stored: the fused projection writes qkv
 * (T, B, heads, 3 hd), so head i = b heads + h of sample b is three (T, hd) matrices at
 * 3 hd i, + hd and + 2 hd, rows 3 D B apart: strided BMMs read them in place, and the
 * context BMM writes each head's (T, hd) straight into (T, B, D) for the projection
 * (Megatron's layout; no transposes). Saved: 0 qkv, 1 the softmax's weights, 2 those
 * after dropout (= 1 without it), 3 the dropout mask, 4 the context; 5 and 6 are the
 * projection's kernel and bias (w and b are the QKV projection's). */

static int attention_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    const AttentionSpec *a = &l->u.attn;
    if (want_rank(in, 2, "attends over a sequence (T, D)", msg, n))
        return -1;
    if (a->heads < 1 || in->d[1] % a->heads != 0) {
        snprintf(msg, n, "heads %d: must be >= 1 and divide the width %d", a->heads, in->d[1]);
        return -1;
    }
    const int shards = a->shards > 1 ? a->shards : 1;
    if (a->shards < 0 || a->heads % shards != 0) {
        snprintf(msg, n, "shards %d: must be >= 1 and divide the heads %d", a->shards, a->heads);
        return -1;
    }
    if (!(a->dropout >= 0 && a->dropout < 1)) {
        snprintf(msg, n, "dropout %g: must be in [0, 1)", a->dropout);
        return -1;
    }
    if (!(a->proj_init_scale >= 0) || !isfinite(a->proj_init_scale)) {
        snprintf(msg, n, "proj_init_scale %g: must be finite and >= 0 (0: the layer's init_scale)", a->proj_init_scale);
        return -1;
    }
    *out = *in;
    return check_weights(4.0 * in->d[1] * in->d[1] / shards, msg, n);
}

typedef struct {
    int T, D, B, H, hd, BH, rows;
    int Dl;                   /* this shard's width: its H heads x hd (D without shards) */
    bool drop;                /* dropout on the weights (training only) */
    OpDesc bmm[ATTN_BMMS];    /* the strided BMMs (op_attention_bmms) */
} AttnDims;

static AttnDims attn_dims(const LayerCtx *c, const LayerSpec *l)
{
    AttnDims a;
    const int shards = l->u.attn.shards > 1 ? l->u.attn.shards : 1;
    a.T = c->in_shape[0].d[0], a.D = c->in_shape[0].d[1], a.B = c->batch;
    a.hd = a.D / l->u.attn.heads, a.H = l->u.attn.heads / shards, a.Dl = a.H * a.hd;
    a.BH = a.B * a.H, a.rows = a.T * a.B;
    a.drop = training(c) && l->u.attn.dropout > 0;
    op_attention_bmms(a.B, a.H, a.T, a.hd, a.bmm);
    return a;
}

/* b from float `from` to its end */
static BufRef tail(BufRef b, size_t from) { return buf_slice(b, from * F32, b.bytes - from * F32); }

static void attention_forward(LayerCtx *c, const LayerSpec *l)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    const AttnDims a = attn_dims(c, l);
    const size_t D = (size_t)a.D, Dl = (size_t)a.Dl, rows = (size_t)a.rows, weights = (size_t)a.BH * a.T * a.T;
    const bool split = l->u.attn.shards > 1, proj_bias = !l->u.attn.no_proj_bias;
    pl->w = plan_add_tensor(p, c->layer, "qkv_kernel", D * 3 * Dl, true, !l->no_decay, l->init, l->init_scale, 0,
                            a.D, 3 * a.Dl);
    if (split)
        mark_tp_split(c);
    pl->b = add_fill(c, "qkv_bias", 3 * Dl, true, 0);
    if (split)
        mark_tp_split(c);
    const float ps = l->u.attn.proj_init_scale > 0 ? l->u.attn.proj_init_scale : l->init_scale;
    pl->saved[5] = plan_add_tensor(p, c->layer, "proj_kernel", Dl * D, true, !l->no_decay, l->init, ps, 0, a.Dl, a.D);
    if (split)
        mark_tp_split(c);
    if (proj_bias)
        pl->saved[6] = add_fill(c, "proj_bias", D, true, 0);
    if (!c->active)
        return;
    alloc_output(c, rows * D);
    const BufRef qkv = pl->saved[0] = plan_alloc(p, ARENA_ACT, rows * 3 * Dl * F32);
    pl->saved[1] = plan_alloc(p, ARENA_ACT, weights * F32);
    pl->saved[2] = pl->saved[1];
    if (a.drop) {
        pl->saved[2] = plan_alloc(p, ARENA_ACT, weights * F32);
        pl->saved[3] = plan_alloc(p, ARENA_ACT, weights * F32);
    }
    pl->saved[4] = plan_alloc(p, ARENA_ACT, rows * Dl * F32);
    /* qkv (rows, 3 Dl) = x Wqkv + b */
    plan_add(p, c->layer, op_gemm(PHASE_FWD, a.rows, 3 * a.Dl, a.D, false, false, 0), (BufRef[]){qkv, c->x[0], pl->w},
             3);
    plan_add(p, c->layer, op_bias(PHASE_FWD, a.rows, 3 * a.Dl, 1), (BufRef[]){qkv, pl->b}, 2);
    /* scores (BH, T, T) = q k^T / sqrt(hd), then softmax in place */
    plan_add(p, c->layer, a.bmm[ATTN_SCORES], (BufRef[]){pl->saved[1], qkv, tail(qkv, (size_t)a.hd)}, 3);
    const int srows = a.BH * a.T;
    if (l->u.attn.padding_mask) /* the keys' token ids: the model input, (T, B) time-major */
        plan_add(p, c->layer, op_softmax_padded(srows, a.T, l->u.attn.causal, a.B, l->u.attn.pad_id),
                 (BufRef[]){pl->saved[1], pl->saved[1], p->input}, 3);
    else
        plan_add(p, c->layer,
                 l->u.attn.causal ? op_softmax_causal(PHASE_FWD, srows, a.T) : op_softmax(PHASE_FWD, srows, a.T),
                 (BufRef[]){pl->saved[1], pl->saved[1]}, 2);
    if (a.drop) {
        if (p->step_counter.bytes == 0)
            p->step_counter = plan_alloc(p, ARENA_STATE, sizeof(int32_t));
        uint32_t seed = 0x9e3779b9u * (uint32_t)(c->layer + 1);
        plan_add(p, c->layer, op_dropout(PHASE_FWD, weights, l->u.attn.dropout, seed),
                 (BufRef[]){pl->saved[2], pl->saved[3], pl->saved[1], p->step_counter}, 4);
    }
    /* context (T, B, Dl) = weights v, head by head into its columns */
    plan_add(p, c->layer, a.bmm[ATTN_CONTEXT], (BufRef[]){pl->saved[4], pl->saved[2], tail(qkv, 2 * (size_t)a.hd)}, 3);
    /* y = context Wproj + b */
    plan_add(p, c->layer, op_gemm(PHASE_FWD, a.rows, a.D, a.Dl, false, false, 0),
             (BufRef[]){pl->y, pl->saved[4], pl->saved[5]}, 3);
    if (proj_bias)
        plan_add(p, c->layer, op_bias(PHASE_FWD, a.rows, a.D, 1), (BufRef[]){pl->y, pl->saved[6]}, 2);
}

static void attention_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    const AttnDims a = attn_dims(c, l);
    const size_t Dl = (size_t)a.Dl, rows = (size_t)a.rows, weights = (size_t)a.BH * a.T * a.T;
    const size_t hd = (size_t)a.hd;
    const BufRef qkv = pl->saved[0];
    const BufRef dctx = plan_alloc(p, ARENA_ACTGRAD, rows * Dl * F32);
    const BufRef dqkv = plan_alloc(p, ARENA_ACTGRAD, rows * 3 * Dl * F32);
    const BufRef dw = plan_alloc(p, ARENA_ACTGRAD, weights * F32); /* of the weights (after dropout) */
    const BufRef ds = plan_alloc(p, ARENA_ACTGRAD, weights * F32); /* of the scores */
    /* the projection */
    if (!l->u.attn.no_proj_bias)
        emit_bias_grad(c, pl->saved[6], pl->dy, a.rows, a.D, 1);
    plan_add(p, c->layer, op_gemm(PHASE_BWD_WEIGHTS, a.Dl, a.D, a.rows, true, false, 0),
             (BufRef[]){grad_of(pl->saved[5]), pl->saved[4], pl->dy}, 3);
    plan_add(p, c->layer, op_gemm(PHASE_BWD_DATA, a.rows, a.Dl, a.D, false, true, 0),
             (BufRef[]){dctx, pl->dy, pl->saved[5]}, 3);
    /* context = W v: dW = dctx v^T; dv = W^T dctx, into dqkv's v columns */
    plan_add(p, c->layer, a.bmm[ATTN_D_WEIGHTS], (BufRef[]){dw, dctx, tail(qkv, 2 * hd)}, 3);
    plan_add(p, c->layer, a.bmm[ATTN_D_V], (BufRef[]){tail(dqkv, 2 * hd), pl->saved[2], dctx}, 3);
    if (a.drop) /* in place: dx may alias dy */
        plan_add(p, c->layer, op_dropout(PHASE_BWD_DATA, weights, l->u.attn.dropout, 0),
                 (BufRef[]){dw, dw, pl->saved[3]}, 3);
    const int srows = a.BH * a.T;
    OpDesc sm = l->u.attn.causal ? op_softmax_causal(PHASE_BWD_DATA, srows, a.T) : op_softmax(PHASE_BWD_DATA, srows, a.T);
    sm.u.softmax.accumulate = false;
    plan_add(p, c->layer, sm, (BufRef[]){ds, dw, pl->saved[1]}, 3);
    /* scores = q k^T / sqrt(hd): dq = ds k / sqrt(hd), dk = ds^T q / sqrt(hd), into their columns */
    plan_add(p, c->layer, a.bmm[ATTN_D_Q], (BufRef[]){dqkv, ds, tail(qkv, hd)}, 3);
    plan_add(p, c->layer, a.bmm[ATTN_D_K], (BufRef[]){tail(dqkv, hd), ds, qkv}, 3);
    /* the QKV projection */
    emit_bias_grad(c, pl->b, dqkv, a.rows, 3 * a.Dl, 1);
    plan_add(p, c->layer, op_gemm(PHASE_BWD_WEIGHTS, a.D, 3 * a.Dl, a.rows, true, false, 0),
             (BufRef[]){grad_of(pl->w), c->x[0], dqkv}, 3);
    if (c->need_dx[0])
        plan_add(p, c->layer,
                 op_gemm(PHASE_BWD_DATA, a.rows, a.D, 3 * a.Dl, false, true, take_dx(c, written, 0) ? 1 : 0),
                 (BufRef[]){c->dx[0], dqkv, pl->w}, 3);
}

/* ---- learned positional embedding (added to a sequence) ---- */

static int position_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    if (want_rank(in, 2, "adds positions to a sequence (T, D)", msg, n))
        return -1;
    if (l->u.pos.token_types && l->u.pos.positions < 1) {
        snprintf(msg, n, "token types %d: the table needs at least one row", l->u.pos.positions);
        return -1;
    }
    if (!l->u.pos.token_types && l->u.pos.positions < in->d[0]) {
        snprintf(msg, n, "positions %d: the table must have a row for each of the sequence's %d steps",
                 l->u.pos.positions, in->d[0]);
        return -1;
    }
    *out = *in;
    return check_weights((double)l->u.pos.positions * in->d[1], msg, n);
}

static void position_forward(LayerCtx *c, const LayerSpec *l)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    const int T = c->in_shape[0].d[0], D = c->in_shape[0].d[1], P = l->u.pos.positions, rows = c->batch * T;
    pl->w = plan_add_tensor(p, c->layer, "embeddings", (size_t)P * D, true, !l->no_decay, l->init, l->init_scale, 0,
                            P, D);
    if (!c->active)
        return;
    const size_t count = (size_t)rows * D;
    alloc_output(c, count);
    /* y = wpe[t] for every sample at step t, then y += x (HF: wpe(position_ids) + x); token
     * types: every row reads row 0 (repeat = all the rows) */
    const int repeat = l->u.pos.token_types ? rows : c->batch;
    plan_add(p, c->layer, op_embedding_positions(PHASE_FWD, rows, repeat, P, D), (BufRef[]){pl->y, pl->w}, 2);
    plan_add(p, c->layer, op_axpby(PHASE_FWD, count, 1, 1), (BufRef[]){pl->y, pl->y, c->x[0]}, 3);
}

static void position_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    const int T = c->in_shape[0].d[0], D = c->in_shape[0].d[1], P = l->u.pos.positions, rows = c->batch * T;
    OpDesc d = op_embedding_positions(PHASE_BWD_WEIGHTS, rows, l->u.pos.token_types ? rows : c->batch, P, D);
    d.u.embed.accumulate = false;
    plan_add(p, c->layer, d, (BufRef[]){grad_of(pl->w), pl->dy}, 2);
    if (c->need_dx[0])
        emit_dx_pass(c, written, 0, pl->dy, (size_t)rows * D);
}

/* ---- ViT's sequence layers ----
 * to_sequence: the feature maps of the batch (B, C, H W) read as a (B C, H W) matrix,
 * transposed into the time-major sequence (H W, B, C) every sequence layer reads.
 * class_token: rows [0, B) of the output are the learned token, the rest the input.
 * first_step: rows [0, B) of the time-major input. */

static int to_sequence_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    if (want_rank(in, 3, "turns feature maps (C, H, W) into a sequence", msg, n))
        return -1;
    *out = (Shape){2, {in->d[1] * in->d[2], in->d[0]}};
    return 0;
}

static void to_sequence_forward(LayerCtx *c, const LayerSpec *l)
{
    PlanLayer *pl = self(c);
    if (!c->active)
        return;
    const int T = pl->out.d[0], C = pl->out.d[1];
    alloc_output(c, (size_t)c->batch * T * C);
    plan_add(c->plan, c->layer, op_transpose(PHASE_FWD, c->batch * C, T), (BufRef[]){pl->y, c->x[0]}, 2);
}

static void to_sequence_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    PlanLayer *pl = self(c);
    if (!c->need_dx[0])
        return;
    const int T = pl->out.d[0], C = pl->out.d[1];
    BufRef bufs[2] = {{0}, pl->dy};
    emit_dx_write(c, written, 0, op_transpose(PHASE_BWD_DATA, T, c->batch * C), bufs, 2, 0);
}

static int class_token_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    if (want_rank(in, 2, "prepends a token to a sequence (T, D)", msg, n))
        return -1;
    *out = (Shape){2, {in->d[0] + 1, in->d[1]}};
    return check_weights(in->d[1], msg, n);
}

static void class_token_forward(LayerCtx *c, const LayerSpec *l)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    const int T = c->in_shape[0].d[0], D = c->in_shape[0].d[1], B = c->batch;
    pl->w = plan_add_tensor(p, c->layer, "token", (size_t)D, true, false, l->init, l->init_scale, 0, 1, D);
    if (!c->active)
        return;
    const size_t head = (size_t)B * D;
    alloc_output(c, head + (size_t)T * head);
    /* every sample's step 0 reads the token (one row, repeated B times), then the input */
    plan_add(p, c->layer, op_embedding_positions(PHASE_FWD, B, B, 1, D), (BufRef[]){buf_slice(pl->y, 0, head * F32), pl->w}, 2);
    plan_add(p, c->layer, op_copy(PHASE_FWD, (size_t)T * head),
             (BufRef[]){buf_slice(pl->y, head * F32, (size_t)T * head * F32), c->x[0]}, 2);
}

static void class_token_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    Plan *p = c->plan;
    PlanLayer *pl = self(c);
    const int T = c->in_shape[0].d[0], D = c->in_shape[0].d[1], B = c->batch;
    const size_t head = (size_t)B * D;
    OpDesc d = op_embedding_positions(PHASE_BWD_WEIGHTS, B, B, 1, D);
    d.u.embed.accumulate = false;
    plan_add(p, c->layer, d, (BufRef[]){grad_of(pl->w), buf_slice(pl->dy, 0, head * F32)}, 2);
    if (c->need_dx[0])
        emit_dx_pass(c, written, 0, buf_slice(pl->dy, head * F32, (size_t)T * head * F32), (size_t)T * head);
}

static int first_step_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    if (want_rank(in, 2, "takes the first step of a sequence (T, D)", msg, n))
        return -1;
    *out = (Shape){1, {in->d[1]}};
    return 0;
}

static void first_step_forward(LayerCtx *c, const LayerSpec *l)
{
    PlanLayer *pl = self(c);
    if (!c->active)
        return;
    const size_t head = (size_t)c->batch * c->in_shape[0].d[1];
    alloc_output(c, head);
    plan_add(c->plan, c->layer, op_copy(PHASE_FWD, head), (BufRef[]){pl->y, buf_slice(c->x[0], 0, head * F32)}, 2);
}

static void first_step_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    PlanLayer *pl = self(c);
    if (!c->need_dx[0])
        return;
    const size_t head = (size_t)c->batch * c->in_shape[0].d[1], all = head * (size_t)c->in_shape[0].d[0];
    const BufRef first = buf_slice(c->dx[0], 0, head * F32);
    if (take_dx(c, written, 0)) { /* add into the first step of what is there */
        plan_add(c->plan, c->layer, op_axpby(PHASE_BWD_DATA, head, 1, 1), (BufRef[]){first, first, pl->dy}, 3);
        return;
    }
    plan_add(c->plan, c->layer, op_zero(PHASE_BWD_DATA, all), (BufRef[]){c->dx[0]}, 1);
    plan_add(c->plan, c->layer, op_copy(PHASE_BWD_DATA, head), (BufRef[]){first, pl->dy}, 2);
}

/* ---- tensor parallel: Megatron's f and g ----
 * A column-parallel layer (attention's heads, the MLP's first half) reads the whole input
 * on every rank and gives each rank part of the input's gradient: TP_COPY before it is the
 * input itself forward (a view, no op) and sums those parts backward. A row-parallel layer
 * (attention's projection, the MLP's second half) gives each rank part of the output:
 * TP_SUM after it sums them forward, adds the bias the layer left out (so that it is added
 * once, not once a rank), and passes the gradient on as it is backward. */

static int tp_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n)
{
    if (l->u.tp.ranks < 1) {
        snprintf(msg, n, "ranks %d: the tensor-parallel group's size must be >= 1", l->u.tp.ranks);
        return -1;
    }
    if (in->rank != 1 && in->rank != 2) {
        snprintf(msg, n, "takes features (F) or a sequence (T, F), got a rank-%d input", in->rank);
        return -1;
    }
    if (l->kind == LAYER_TP_COPY && l->u.tp.bias) {
        snprintf(msg, n, "a tp_copy layer has no bias (tp_sum adds the row-parallel layer's)");
        return -1;
    }
    *out = *in;
    return 0;
}

/* rows and width of a layer's (batch of) features or sequences */
static void tp_dims(const LayerCtx *c, int *rows, int *width)
{
    const Shape *s = &c->in_shape[0];
    *width = s->rank == 2 ? s->d[1] : s->d[0];
    *rows = s->rank == 2 ? c->batch * s->d[0] : c->batch;
}

static void tp_copy_forward(LayerCtx *c, const LayerSpec *l)
{
    PlanLayer *pl = self(c);
    if (!c->active)
        return;
    /* y is x; the gradient has a buffer of its own, where the column-parallel layer's
     * part goes before the sum */
    pl->y = c->x[0];
    if (training(c)) {
        int rows, width;
        tp_dims(c, &rows, &width);
        pl->dy = plan_alloc(c->plan, ARENA_ACTGRAD, (size_t)rows * width * F32);
    }
}

static void tp_copy_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    PlanLayer *pl = self(c);
    if (!c->need_dx[0])
        return;
    int rows, width;
    tp_dims(c, &rows, &width);
    BufRef bufs[2] = {{0}, pl->dy};
    emit_dx_write(c, written, 0, op_allreduce(PHASE_BWD_DATA, (size_t)rows * width, l->u.tp.ranks), bufs, 2, 0);
}

static void tp_sum_forward(LayerCtx *c, const LayerSpec *l)
{
    PlanLayer *pl = self(c);
    int rows, width;
    tp_dims(c, &rows, &width);
    if (l->u.tp.bias)
        pl->b = add_fill(c, "bias", (size_t)width, true, 0);
    if (!c->active)
        return;
    alloc_output(c, (size_t)rows * width);
    plan_add(c->plan, c->layer, op_allreduce(PHASE_FWD, (size_t)rows * width, l->u.tp.ranks),
             (BufRef[]){pl->y, c->x[0]}, 2);
    if (l->u.tp.bias)
        plan_add(c->plan, c->layer, op_bias(PHASE_FWD, rows, width, 1), (BufRef[]){pl->y, pl->b}, 2);
}

static void tp_sum_backward(LayerCtx *c, const LayerSpec *l, bool *written)
{
    PlanLayer *pl = self(c);
    int rows, width;
    tp_dims(c, &rows, &width);
    if (l->u.tp.bias)
        emit_bias_grad(c, pl->b, pl->dy, rows, width, 1);
    if (c->need_dx[0])
        emit_dx_pass(c, written, 0, pl->dy, (size_t)rows * width);
}

/* ---- dispatch ---- */

typedef struct {
    int (*infer1)(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n); /* one-input kinds */
    void (*forward)(LayerCtx *c, const LayerSpec *l);
    void (*backward)(LayerCtx *c, const LayerSpec *l, bool *written);
} LayerImpl;

static const LayerImpl impls[LAYER_KIND_COUNT] = {
    [LAYER_DENSE] = {dense_infer, dense_forward, dense_backward},
    [LAYER_CONV2D] = {conv_infer, conv_forward, conv_backward},
    [LAYER_POOL2D] = {pool_infer, pool_forward, pool_backward},
    [LAYER_LSTM] = {rec_infer, rec_forward, rec_backward},
    [LAYER_RNN] = {rec_infer, rec_forward, rec_backward},
    [LAYER_BATCHNORM] = {bn_infer, bn_forward, bn_backward},
    [LAYER_LRN] = {lrn_infer, lrn_forward, lrn_backward},
    [LAYER_DROPOUT] = {dropout_infer, dropout_forward, dropout_backward},
    [LAYER_CONCAT] = {NULL, concat_forward, concat_backward},
    [LAYER_ADD] = {NULL, add_forward, add_backward},
    [LAYER_ACTIVATION] = {activation_infer, activation_forward, activation_backward},
    [LAYER_FLATTEN] = {flatten_infer, view_forward, view_backward},
    [LAYER_EMBEDDING] = {NULL, embedding_forward, embedding_backward},
    [LAYER_SPARSITY] = {sparsity_infer, sparsity_forward, sparsity_backward},
    [LAYER_LAYERNORM] = {layernorm_infer, layernorm_forward, layernorm_backward},
    [LAYER_ATTENTION] = {attention_infer, attention_forward, attention_backward},
    [LAYER_POSITION] = {position_infer, position_forward, position_backward},
    [LAYER_TO_SEQUENCE] = {to_sequence_infer, to_sequence_forward, to_sequence_backward},
    [LAYER_CLASS_TOKEN] = {class_token_infer, class_token_forward, class_token_backward},
    [LAYER_FIRST_STEP] = {first_step_infer, first_step_forward, first_step_backward},
    [LAYER_TP_COPY] = {tp_infer, tp_copy_forward, tp_copy_backward},
    [LAYER_TP_SUM] = {tp_infer, tp_sum_forward, tp_sum_backward},
};

/* A dense layer's tie: an earlier embedding whose table (vocab, dim) is (units, in). */
static int check_tie(const ModelSpec *m, const LayerSpec *l, const Shape *in, char *msg, size_t n)
{
    const int t = l->u.dense.tie - 1;
    int self_index = (int)(l - m->layers);
    if (t < 0 || t >= self_index || m->layers[t].kind != LAYER_EMBEDDING || m->layers[t].u.embed.frozen) {
        snprintf(msg, n, "tie %d: must name an earlier, trainable embedding layer", l->u.dense.tie);
        return -1;
    }
    const EmbeddingSpec *e = &m->layers[t].u.embed;
    const int width = in->rank == 2 ? in->d[1] : shape_count(in);
    if (e->vocab != l->u.dense.units || e->dim != width) {
        snprintf(msg, n, "tied to '%s' (%d x %d): needs units %d and inputs of width %d, has %d and %d",
                 m->layers[t].name, e->vocab, e->dim, e->vocab, e->dim, l->u.dense.units, width);
        return -1;
    }
    return 0;
}

/* An attention's padding mask reads the model's token ids, one a step of its sequence. */
static int check_padding(const ModelSpec *m, const LayerSpec *l, const Shape *in, char *msg, size_t n)
{
    const int vocab = m->layers[0].kind == LAYER_EMBEDDING ? m->layers[0].u.embed.vocab : 0;
    if (!m->input_ids || m->input.rank != 2 || m->input.d[1] != 1 || in->rank != 2 || m->input.d[0] != in->d[0]) {
        snprintf(msg, n, "pad_token_id: a padding mask reads the model's token ids, a sequence [T, 1] as long as "
                         "the attention's");
        return -1;
    }
    if (l->u.attn.pad_id < 0 || (vocab > 0 && l->u.attn.pad_id >= vocab)) {
        snprintf(msg, n, "pad_token_id %d: must be a token id, in [0, %d)", l->u.attn.pad_id, vocab);
        return -1;
    }
    if (m->data == DATA_MASKED_TOKENS && l->u.attn.pad_id == vocab - 1) {
        snprintf(msg, n, "pad_token_id %d: a masked LM's data show [MASK] as the vocabulary's last id; pad with "
                         "another, in [0, %d)", l->u.attn.pad_id, vocab - 1);
        return -1;
    }
    return 0;
}

int layer_infer(const ModelSpec *m, const LayerSpec *l, const Shape *in, int nin, Shape *out, char *msg, size_t n)
{
    if ((unsigned)l->kind >= LAYER_KIND_COUNT) {
        snprintf(msg, n, "unknown layer kind %d", (int)l->kind);
        return -1;
    }
    if (l->act != ACTIVATION_NONE && (l->act < 0 || l->act >= ACT_COUNT)) {
        snprintf(msg, n, "unknown activation %d", l->act);
        return -1;
    }
    if (l->act == ACT_GELU && l->kind != LAYER_DENSE && l->kind != LAYER_ACTIVATION) {
        snprintf(msg, n, "gelu: its backward reads its input, which a %s layer overwrites in place; put it on a "
                         "dense layer or an activation layer", layer_kind_name(l->kind));
        return -1;
    }
    switch (l->kind) {
    case LAYER_CONCAT: return concat_infer(l, in, nin, out, msg, n);
    case LAYER_ADD: return add_infer(l, in, nin, out, msg, n);
    case LAYER_EMBEDDING: return embedding_infer(m, l, in, out, msg, n);
    default:
        if (nin != 1) {
            snprintf(msg, n, "a %s layer takes 1 input, has %d", layer_kind_name(l->kind), nin);
            return -1;
        }
        if (m->input_ids && l->inputs[0] == -1) {
            snprintf(msg, n, "the model input is token ids: only an embedding layer can read it");
            return -1;
        }
        if (l->kind == LAYER_DENSE && l->u.dense.tie != 0 && check_tie(m, l, in, msg, n) != 0)
            return -1;
        if (l->kind == LAYER_ATTENTION && l->u.attn.padding_mask && check_padding(m, l, in, msg, n) != 0)
            return -1;
        return impls[l->kind].infer1(l, in, out, msg, n);
    }
}

void layer_forward(LayerCtx *c, const LayerSpec *l) { impls[l->kind].forward(c, l); }
void layer_backward(LayerCtx *c, const LayerSpec *l, bool *written) { impls[l->kind].backward(c, l, written); }
