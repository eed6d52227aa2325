/* models/plan.c — expansion of a model into the training-step plan: shape inference,
 * memory layout in arenas, and the op list (forward, loss, backward, update).
 *
 * Layers append their ops through the emitters in models/layers.c; this file owns the
 * order (forward in layer order, backward in reverse), the "first writer overwrites"
 * rule for gradients, and the single optimizer op over the whole parameter buffer.
 */
#include "models/plan.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/layers.h"

enum { ALIGN = 64 };

const char *arena_name(ArenaId a)
{
    static const char *const names[ARENA_COUNT] = {"params", "grads", "optimizer", "activations",
                                                   "activation-grads", "workspace", "input"};
    return (unsigned)a < ARENA_COUNT ? names[a] : "?";
}

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

/* Reserves `bytes` in arena a. Sizes were checked against overflow by the caller. */
BufRef plan_alloc(Plan *p, ArenaId a, size_t bytes)
{
    assert(a != ARENA_WS);
    size_t off = (p->arena_bytes[a] + ALIGN - 1) / ALIGN * ALIGN;
    p->arena_bytes[a] = off + bytes;
    return (BufRef){.arena = a, .offset = off, .bytes = bytes};
}

/* A view of part of an existing buffer. */
BufRef buf_slice(BufRef b, size_t offset, size_t bytes)
{
    assert(offset + bytes <= b.bytes);
    return (BufRef){.arena = b.arena, .offset = b.offset + offset, .bytes = bytes};
}

/* ---- op list ---- */

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

void plan_add_param(Plan *p, int layer, BufRef ref, size_t count, int fan_in, int fan_out,
                    InitKind init, float scale, bool is_bias)
{
    p->params = realloc(p->params, (size_t)(p->nparams + 1) * sizeof *p->params);
    assert(p->params);
    p->params[p->nparams++] = (PlanParam){.layer = layer, .ref = ref, .count = count, .fan_in = fan_in,
                                          .fan_out = fan_out, .init = init, .init_scale = scale,
                                          .is_bias = is_bias};
    p->param_count += count;
    p->layers[layer].params += count;
}

/* ---- building ---- */

static int err_layer(char *err, size_t n, int i, const LayerSpec *l, const char *msg)
{
    snprintf(err, n, "layer %d '%s': %s", i + 1, l->name, msg);
    return -1;
}

/* Largest batch-dependent tensor a plan may hold: 2^36 floats (256 GiB), far beyond one
 * process today and well inside the ops' own limit (2^40 elements), so an absurd batch is
 * refused with a message instead of tripping a kernel assertion or wrapping around. */
#define MAX_TENSOR_ELEMS 68719476736.0

/* Elements per sample of the largest tensor layer l keeps (input, output, and the LSTM's
 * per-step gate buffers). */
static double layer_elems_per_sample(const LayerSpec *l, const PlanLayer *pl)
{
    double e = fmax(shape_count(&pl->in), shape_count(&pl->out));
    if (l->kind == LAYER_LSTM)
        e = fmax(e, (double)pl->in.d[0] * 4.0 * l->u.lstm.hidden);
    return e;
}

int plan_build(const ModelSpec *m, int batch, Plan *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->model = m;
    p->batch = batch;
    p->threads = ops_get_threads();
    if (batch < 1) {
        snprintf(err, errlen, "batch %d: must be a positive integer", batch);
        return -1;
    }
    p->layers = calloc((size_t)m->nlayers, sizeof *p->layers);
    assert(p->layers);
    p->nlayers = m->nlayers;

    /* Shapes first: every mismatch is reported before anything is laid out. */
    for (int i = 0; i < m->nlayers; i++) {
        const LayerSpec *l = &m->layers[i];
        if (l->input < -1 || l->input >= i) {
            char msg[96];
            snprintf(msg, sizeof msg, "input %d must name an earlier layer (or -1 for the model input)",
                     l->input);
            plan_free(p);
            return err_layer(err, errlen, i, l, msg);
        }
        PlanLayer *pl = &p->layers[i];
        snprintf(pl->name, sizeof pl->name, "%s", l->name);
        pl->kind = l->kind;
        pl->in = l->input < 0 ? m->input : p->layers[l->input].out;
        char msg[256];
        if (layer_infer(l, &pl->in, &pl->out, msg, sizeof msg) != 0) {
            plan_free(p);
            return err_layer(err, errlen, i, l, msg);
        }
        if (layer_elems_per_sample(l, pl) * batch > MAX_TENSOR_ELEMS) {
            snprintf(err, errlen, "batch %d: layer %d '%s' would hold a tensor of %.3g floats, more than "
                     "the %.3g a process can address here; use a smaller batch", batch, i + 1, l->name,
                     layer_elems_per_sample(l, pl) * batch, MAX_TENSOR_ELEMS);
            plan_free(p);
            return -1;
        }
    }
    const PlanLayer *last = &p->layers[m->nlayers - 1];
    if (m->loss == LOSS_SOFTMAX_XENT && (last->out.rank != 1 || last->out.d[0] != m->classes)) {
        snprintf(err, errlen, "model '%s': softmax loss over %d classes, last layer '%s' gives %d values",
                 m->name, m->classes, last->name, shape_count(&last->out));
        plan_free(p);
        return -1;
    }

    /* Input batch and targets. */
    size_t in_count = (size_t)shape_count(&m->input) * (size_t)batch;
    p->input = plan_alloc(p, ARENA_INPUT, in_count * sizeof(float));
    size_t out_count = (size_t)shape_count(&last->out) * (size_t)batch;
    if (m->loss == LOSS_SOFTMAX_XENT)
        p->target = plan_alloc(p, ARENA_INPUT, (size_t)batch * sizeof(int32_t));
    else if (m->data == DATA_EXPRESSION) /* autoencoder: the target is the input */
        p->target = p->input;
    else
        p->target = plan_alloc(p, ARENA_INPUT, out_count * sizeof(float));

    /* Forward: each layer lays out its parameters and activations and emits its ops. */
    LayerCtx ctx = {.plan = p, .batch = batch};
    for (int i = 0; i < m->nlayers; i++) {
        const LayerSpec *l = &m->layers[i];
        ctx.layer = i;
        ctx.x = l->input < 0 ? p->input : p->layers[l->input].y;
        size_t before = p->arena_bytes[ARENA_ACT] + p->arena_bytes[ARENA_ACTGRAD];
        layer_forward(&ctx, l);
        p->layers[i].act_bytes = p->arena_bytes[ARENA_ACT] + p->arena_bytes[ARENA_ACTGRAD] - before;
    }

    /* Loss: forward value, then the gradient that starts backward (written, not added). */
    p->loss = plan_alloc(p, ARENA_ACT, sizeof(float));
    int n_out = shape_count(&last->out);
    if (m->loss == LOSS_SOFTMAX_XENT) {
        BufRef probs = plan_alloc(p, ARENA_ACT, out_count * sizeof(float));
        plan_add(p, -1, op_softmax_xent(PHASE_FWD, batch, m->classes),
                 (BufRef[]){p->loss, probs, last->y, p->target}, 4);
        plan_add(p, -1, op_softmax_xent(PHASE_BWD_DATA, batch, m->classes),
                 (BufRef[]){last->dy, probs, p->target}, 3);
    } else {
        bool mean = m->loss == LOSS_MSE;
        plan_add(p, -1, op_sqerr(PHASE_FWD, batch, n_out, mean), (BufRef[]){p->loss, last->y, p->target}, 3);
        plan_add(p, -1, op_sqerr(PHASE_BWD_DATA, batch, n_out, mean),
                 (BufRef[]){last->dy, last->y, p->target}, 3);
    }

    /* Backward in reverse layer order. A layer's input gradient is overwritten by its first
     * writer and accumulated by later ones (needed once layers have several consumers). */
    bool *dy_written = calloc((size_t)m->nlayers, sizeof *dy_written);
    assert(dy_written);
    dy_written[m->nlayers - 1] = true;
    for (int i = m->nlayers - 1; i >= 0; i--) {
        const LayerSpec *l = &m->layers[i];
        if (!dy_written[i]) {
            free(dy_written);
            char msg[96];
            snprintf(msg, sizeof msg, "output is used by no later layer (dead branch)");
            plan_free(p);
            return err_layer(err, errlen, i, l, msg);
        }
        ctx.layer = i;
        ctx.x = l->input < 0 ? p->input : p->layers[l->input].y;
        ctx.need_dx = l->input >= 0;
        ctx.dx_accumulate = l->input >= 0 && dy_written[l->input];
        ctx.dx = l->input >= 0 ? p->layers[l->input].dy : (BufRef){0};
        layer_backward(&ctx, l);
        if (l->input >= 0)
            dy_written[l->input] = true;
    }
    free(dy_written);

    /* Update: one flat op over the one parameter buffer (alignment padding included; its
     * gradient is zero). The optimizer state lives at the same offsets. */
    size_t nparam_floats = p->arena_bytes[ARENA_PARAM] / sizeof(float);
    p->arena_bytes[ARENA_GRAD] = p->arena_bytes[ARENA_PARAM];
    BufRef w = {.arena = ARENA_PARAM, .offset = 0, .bytes = nparam_floats * sizeof(float)};
    BufRef g = {.arena = ARENA_GRAD, .offset = 0, .bytes = w.bytes};
    if (m->opt.kind == OPT_RMSPROP) {
        p->arena_bytes[ARENA_OPT] = w.bytes;
        BufRef a = {.arena = ARENA_OPT, .offset = 0, .bytes = w.bytes};
        plan_add(p, -1, op_rmsprop(nparam_floats, m->opt.lr, m->opt.rho, m->opt.eps), (BufRef[]){w, a, g}, 3);
    } else {
        plan_add(p, -1, op_sgd(nparam_floats, m->opt.lr), (BufRef[]){w, g}, 2);
    }
    return 0;
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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void plan_exec(const Plan *p, void *const base[ARENA_COUNT], double *op_time_s)
{
    assert(ops_get_threads() == p->threads); /* else per-thread workspace would overflow */
    void *bufs[OP_MAX_BUFS];
    for (int i = 0; i < p->nops; i++) {
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
