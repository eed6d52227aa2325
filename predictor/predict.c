/* predictor/predict.c — iteration time and memory of a training-step plan.
 *
 * Iteration time = sum of the priced ops of the plan (forward, loss, backward, update),
 * one after another as plan_exec runs them; memory = the plan's arenas, which are exactly
 * what `dlperf run` allocates (plus the data set it cycles through).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "predictor/predict.h"

#include "models/train.h"

void pred_memory(const Plan *p, PredictionRow *out)
{
    const size_t *a = p->arena_bytes;
    out->mem_params = (double)a[ARENA_PARAM];
    out->mem_grads = (double)a[ARENA_GRAD];
    out->mem_opt = (double)a[ARENA_OPT];
    out->mem_act = (double)(a[ARENA_ACT] + a[ARENA_ACTGRAD]);
    out->mem_ws = (double)a[ARENA_WS];
    out->mem_input = (double)a[ARENA_INPUT];
    out->mem_total = (double)plan_total_bytes(p);
}

void pred_op_row(const Plan *p, int i, double time_s, OpTimeRow *r)
{
    const PlanOp *o = &p->ops[i];
    memset(r, 0, sizeof *r);
    r->op_index = i;
    r->layer = o->layer;
    snprintf(r->layer_name, sizeof r->layer_name, "%s", plan_op_owner(p, i));
    op_key(&o->desc, r->key);
    snprintf(r->kind, sizeof r->kind, "%s", op_kind_name(o->desc.kind));
    snprintf(r->phase, sizeof r->phase, "%s", op_phase_name(o->desc.phase));
    r->time_s = time_s;
    r->flops = op_cost(&o->desc).flops;
}

/* ---- the cache model ----
 * How warm an op's bytes are when it starts. A byte of one of its buffers was last used
 * by some op before it in the step (or, wrapping around, in the previous step); the
 * traffic since then (everything the ops in between touched, workspace included, plus
 * this op's own bytes) is its reuse distance, and cm_warmth turns that into the share of
 * the calibration's cold-to-warm speed-up it keeps: all of it while the distance is no
 * more than the op's own bytes' (how the warm time was measured), less as the
 * calibration's handoff curve (data read back after that much was written) slows towards
 * DRAM, none from DRAM on.
 * Measured against the zoo (validate --zoo): with a plain capacity (a byte in
 * cache or not) and the warm time, batch norm, bias, activation backward and channel
 * copy ran 11-43% slower in steps than priced. Reuse is tracked per byte range,
 * not per buffer: an optimizer update over the whole parameter buffer finds the last
 * layer's weights (used just before it) warm and the first layer's (used a whole backward
 * pass earlier) not. Bytes are summed, not deduplicated (a buffer touched twice counts
 * twice), so the distance is an upper bound and the model errs towards cold. The input
 * batch is a new one every step: its first use in a step is cold. */
static double op_traffic(const PlanOp *o)
{
    /* the workspace too: a convolution's column matrices (up to a few MB per thread,
     * rewritten for every image) pass through the cache between its output and the next
     * op as surely as its buffers do; the lines it touches, not how far apart the plan
     * lays its threads' slices */
    double t = (double)op_workspace_touched_bytes(&o->desc);
    for (int k = 0; k < o->nbuf; k++)
        t += (double)o->buf[k].bytes;
    return t;
}

/* The parts of one buffer not yet found in an earlier op: at most CACHE_SPANS ranges
 * [lo, hi) in the buffer's arena. A range split beyond that is dropped (counted cold). */
enum { CACHE_SPANS = 32 };
typedef struct {
    size_t lo[CACHE_SPANS], hi[CACHE_SPANS];
    int n;
} Spans;

/* Removes the arena range [lo, hi) from s; returns the bytes removed. */
static double spans_take(Spans *s, size_t lo, size_t hi)
{
    double taken = 0;
    Spans out = {.n = 0};
    for (int k = 0; k < s->n; k++) {
        const size_t a = s->lo[k], b = s->hi[k];
        if (hi <= a || b <= lo) { /* disjoint: kept */
            if (out.n < CACHE_SPANS)
                out.lo[out.n] = a, out.hi[out.n++] = b;
            continue;
        }
        const size_t ia = a > lo ? a : lo, ib = b < hi ? b : hi;
        taken += (double)(ib - ia);
        if (a < ia && out.n < CACHE_SPANS)
            out.lo[out.n] = a, out.hi[out.n++] = ia;
        if (ib < b && out.n < CACHE_SPANS)
            out.lo[out.n] = ib, out.hi[out.n++] = b;
    }
    *s = out;
    return taken;
}

/* Bytes of buffer b of op i (whose buffers total own bytes) found on the walk back, each
 * weighted by its warmth: cm_warmth at its reuse distance. Both ops stream through their
 * bytes, so a byte op q touched is, on average, followed by half of q's traffic, then the
 * ops in between, then half of op i's before op i reaches it: own/2 + between + q/2 (for
 * the calibration's warm time, op i again right after itself, exactly own). The walk goes
 * back to op i itself in the previous step, for bytes no other op uses, and stops where
 * nothing found could be warm any more. */
static bool blas_split(OpKind k) { return k == OP_GEMM || k == OP_BMM || k == OP_CONV2D || k == OP_SPMM; }

/* The apart placement (cm_is_apart): the two threads' cores on two caches. An op finds its
 * own bytes from the step before in its own core's cache (it splits them the same way each
 * step), and so does an op of the same split (element-wise ops over the same buffer each
 * take a contiguous share per thread), but of the bytes an op of the other split left (a
 * BLAS GEMM or convolution, which blocks its matrices its own way, before or after an
 * element-wise op) half are in the other core's cache. */
#define APART_REMOTE_SHARE 0.5

/* Adds to *remote the warm bytes in the other core's cache at the apart placement, and to
 * *other (where not NULL) the warm bytes an op of the other split left, at either
 * placement, times the same share: lines the other core's cache holds too, which a write
 * must take from it (pred_shared_writes). */
static double buffer_warm_bytes(const Plan *p, const CostModel *cm, const double *op_s, int i, const BufRef *b,
                                double own, double *remote, double *other)
{
    Spans left = {.lo = {b->offset}, .hi = {b->offset + b->bytes}, .n = 1};
    double between = 0, hit = 0, waited = op_s ? 0.5 * op_s[i] : 0;
    for (int back = 1; back <= p->nops && left.n > 0 && cm_warmth(cm, own, 0.5 * own + between) > 0; back++) {
        const int j = i - back;
        if (j < 0 && b->arena == ARENA_INPUT)
            break; /* last step's batch */
        const int qi = j >= 0 ? j : j + p->nops;
        const PlanOp *q = &p->ops[qi];
        const double distance = 0.5 * own + between + 0.5 * op_traffic(q);
        double warmth = cm_warmth(cm, own, distance);
        if (op_s) /* and what the time since then, without this process's traffic, evicted */
            warmth *= cm_retention(cm, distance, waited + 0.5 * op_s[qi]);
        const bool other_split = qi != i && blas_split(q->desc.kind) != blas_split(p->ops[i].desc.kind);
        const double away = cm_is_apart(cm) && other_split ? APART_REMOTE_SHARE : 0.0;
        for (int l = 0; l < q->nbuf; l++)
            if (q->buf[l].arena == b->arena && q->buf[l].bytes > 0) {
                const double found = warmth * spans_take(&left, q->buf[l].offset, q->buf[l].offset + q->buf[l].bytes);
                hit += (1 - away) * found;
                *remote += away * found;
                if (other && other_split)
                    *other += APART_REMOTE_SHARE * found;
            }
        between += op_traffic(q);
        if (op_s)
            waited += op_s[qi];
    }
    return hit;
}

/* The shared writes. A write to a line another core's cache holds waits for that copy to
 * be invalidated: on the Zen 4 VM, a thread rewriting its slice right after both threads
 * read it took x3.6-3.8 a cross-core read's time near and x10-x37 an own write's apart (the
 * shared-write curve), where the calibration times every op's write on lines only its own
 * core holds (run again on its own data, or flushed). In a step the lines an op of the
 * other split left are such lines: an SGD update over weights the GEMMs of both threads
 * read, a weight-gradient GEMM over the gradient the update read, an element-wise op in
 * place over a GEMM's output. Of the warm bytes found the same share as for the apart
 * reads (APART_REMOTE_SHARE), at both placements.
 *
 * One walk back per buffer gives all three: the warm share (cached), the apart
 * placement's share in the other core (remote) and, of the buffers the op writes, the
 * bytes the other split left (shared); each output may be NULL. */
static void cache_walk(const Plan *p, const CostModel *cm, const double *op_s, double *cached, double *remote,
                       double *shared)
{
    for (int i = 0; i < p->nops; i++) {
        const PlanOp *o = &p->ops[i];
        const double own = op_traffic(o);
        OpBufInfo info[OP_MAX_BUFS];
        const int ninfo = shared ? op_buffer_info(&o->desc, info) : 0;
        double total = 0, hit = 0, away = 0, other = 0;
        for (int k = 0; k < o->nbuf; k++) {
            const BufRef *b = &o->buf[k];
            total += (double)b->bytes;
            const bool written = k < ninfo && info[k].role != BUF_IN;
            if (b->bytes > 0)
                hit += buffer_warm_bytes(p, cm, op_s, i, b, own, &away, written ? &other : NULL);
        }
        if (cached)
            cached[i] = total > 0 ? hit / total : 0.0;
        if (remote)
            remote[i] = total > 0 ? away / total : 0.0;
        if (shared)
            shared[i] = other;
    }
}

void pred_cache_fractions(const Plan *p, const CostModel *cm, const double *op_s, double *cached, double *remote)
{
    cache_walk(p, cm, op_s, cached, remote, NULL);
}

void pred_shared_writes(const Plan *p, const CostModel *cm, const double *op_s, double *shared)
{
    cache_walk(p, cm, op_s, NULL, NULL, shared);
}

/* The bytes op o writes (its OUT and INOUT buffers): the working set its shared writes are
 * priced at. */
static double op_written_bytes(const PlanOp *o)
{
    OpBufInfo info[OP_MAX_BUFS];
    const int ninfo = op_buffer_info(&o->desc, info);
    double w = 0;
    for (int k = 0; k < o->nbuf && k < ninfo; k++)
        if (info[k].role != BUF_IN)
            w += (double)o->buf[k].bytes;
    return w;
}

double pred_shared_write_extra_s(const Plan *p, const CostModel *cm, int i, double shared_bytes)
{
    return shared_bytes > 0 ? shared_bytes * cm_shared_write_s(cm, op_written_bytes(&p->ops[i])) : 0;
}

int pred_cache_model(const Plan *p, const CostModel *cm, double *cached, double *remote, double *shared, char *err,
                     size_t errlen)
{
    double *op_s = malloc((size_t)(p->nops > 0 ? p->nops : 1) * sizeof *op_s);
    if (!op_s) {
        snprintf(err, errlen, "out of memory for the cache model of %d ops", p->nops);
        return -1;
    }
    /* the times between uses from the prices by traffic alone: retention only lowers a
     * price, and a second pass would move the waits by a small share of a small share */
    const bool retention = cm_retention_sets(cm, NULL, 0) > 0;
    cache_walk(p, cm, NULL, cached, remote, retention ? NULL : shared);
    if (!retention) { /* nothing more to do */
        free(op_s);
        return 0;
    }
    for (int i = 0; i < p->nops; i++) {
        OpPrice pr;
        if (cm_price_placed(cm, &p->ops[i].desc, cached[i], remote ? remote[i] : 0.0, &pr, err, errlen) != 0) {
            free(op_s);
            return -1;
        }
        op_s[i] = pr.time_s;
    }
    cache_walk(p, cm, op_s, cached, remote, shared);
    free(op_s);
    return 0;
}

int pred_iteration(const Plan *p, const CostModel *cm, PredictionRow *out, OpTimeRow *ops, char *err,
                   size_t errlen)
{
    snprintf(out->model, sizeof out->model, "%s", p->model->name);
    out->batch = p->batch;
    out->iter_s = out->iter_lo_s = out->iter_hi_s = 0;
    out->fwd_s = out->bwd_s = out->update_s = 0;
    out->n_exact = out->n_scaled = out->n_fitted = 0;
    /* cached[0..nops), then remote[0..nops) (the apart placement's bytes in the other
     * core), then shared[0..nops) (the bytes each op writes over lines the other core holds) */
    const size_t nslots = (size_t)(p->nops > 0 ? p->nops : 1);
    double *cached = calloc(3 * nslots, sizeof *cached);
    if (!cached) {
        snprintf(err, errlen, "out of memory for the cache model of %d ops", p->nops);
        return -1;
    }
    double *remote = cached + nslots, *shared = cached + 2 * nslots;
    if (pred_cache_model(p, cm, cached, remote, shared, err, errlen) != 0) {
        free(cached);
        return -1;
    }
    for (int i = 0; i < p->nops; i++) {
        const PlanOp *o = &p->ops[i];
        OpPrice pr;
        if (cm_price_placed(cm, &o->desc, cached[i], remote[i], &pr, err, errlen) != 0) {
            free(cached);
            return -1;
        }
        /* its writes over the other core's lines, on top of its kernel's */
        const double extra = pred_shared_write_extra_s(p, cm, i, shared[i]);
        pr.time_s += extra, pr.lo_s += extra, pr.hi_s += extra;
        out->iter_s += pr.time_s;
        out->iter_lo_s += pr.lo_s;
        out->iter_hi_s += pr.hi_s;
        switch (o->desc.phase) {
        case PHASE_FWD: out->fwd_s += pr.time_s; break;
        case PHASE_UPDATE: out->update_s += pr.time_s; break;
        default: out->bwd_s += pr.time_s; break;
        }
        /* the roofline path is a fit too (a one-parameter one): the database counts three */
        int *count[] = {&out->n_exact, &out->n_scaled, &out->n_fitted, &out->n_fitted};
        (*count[pr.source])++;
        if (ops) {
            pred_op_row(p, i, pr.time_s, &ops[i]);
            snprintf(ops[i].source, sizeof ops[i].source, "%s", price_source_name(pr.source));
            ops[i].lo_s = pr.lo_s;
            ops[i].hi_s = pr.hi_s;
            ops[i].cached = cached[i];
        }
    }
    free(cached);
    pred_memory(p, out);
    return 0;
}

double pred_iteration_apart_s(const Plan *p, CostModel *cm, int threads)
{
    if (threads < 2 || !cm_has_apart(cm))
        return 0;
    PredictionRow apart;
    char err[512];
    cm_set_apart(cm, true);
    const int rc = pred_iteration(p, cm, &apart, NULL, err, sizeof err);
    cm_set_apart(cm, false);
    return rc == 0 ? apart.iter_s : 0;
}

/* What a run at `batch` allocates (trainer_bytes_needed, its input batches), or INFINITY
 * where the plan cannot be built (a batch so large that a tensor's size overflows the
 * plan's arithmetic does not fit anywhere). */
static double plan_bytes_at(const ModelSpec *m, long batch)
{
    Plan p;
    char err[256];
    if (plan_build(m, (int)batch, &p, err, sizeof err) != 0)
        return INFINITY;
    const double b = trainer_bytes_needed(&p, TRAINER_DATA_BATCHES);
    plan_free(&p);
    return b;
}

long pred_largest_batch(const ModelSpec *m, double capacity_bytes, char *err, size_t errlen)
{
    Plan p;
    if (plan_build(m, 1, &p, err, errlen) != 0)
        return -1;
    plan_free(&p);
    if (plan_bytes_at(m, 1) > capacity_bytes)
        return 0;
    /* memory grows with the batch: double until it does not fit, then bisect */
    long lo = 1, hi = 2;
    const long cap = 1L << 20;
    while (hi <= cap && plan_bytes_at(m, hi) <= capacity_bytes) {
        lo = hi;
        hi *= 2;
    }
    if (hi > cap)
        return cap;
    while (hi - lo > 1) {
        const long mid = lo + (hi - lo) / 2;
        if (plan_bytes_at(m, mid) <= capacity_bytes)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static int group_cmp(const void *a, const void *b)
{
    const OpGroup *x = a, *y = b;
    double dx = x->measured_s >= 0 ? fabs(x->time_s - x->measured_s) : x->time_s;
    double dy = y->measured_s >= 0 ? fabs(y->time_s - y->measured_s) : y->time_s;
    return (dx < dy) - (dx > dy);
}

int op_groups(const OpTimeRow *pred, const OpTimeRow *meas, int nops, OpGroup **out)
{
    OpGroup *g = calloc((size_t)nops, sizeof *g);
    int n = 0;
    for (int i = 0; i < nops; i++) {
        const OpTimeRow *o = pred ? &pred[i] : &meas[i];
        int j = 0;
        while (j < n && !(strcmp(g[j].key, o->key) == 0 && strcmp(g[j].layer_name, o->layer_name) == 0))
            j++;
        if (j == n) {
            snprintf(g[n].layer_name, sizeof g[n].layer_name, "%s", o->layer_name);
            snprintf(g[n].key, sizeof g[n].key, "%s", o->key);
            snprintf(g[n].source, sizeof g[n].source, "%s", o->source);
            g[n].measured_s = pred && meas ? 0 : -1;
            n++;
        }
        g[j].count++;
        g[j].time_s += o->time_s;
        g[j].lo_s += o->lo_s;
        g[j].hi_s += o->hi_s;
        g[j].flops += o->flops;
        g[j].cached += (o->cached - g[j].cached) / g[j].count; /* running mean */
        if (pred && meas)
            g[j].measured_s += meas[i].time_s;
    }
    qsort(g, (size_t)n, sizeof *g, group_cmp);
    *out = g;
    return n;
}

void pred_breakdown(const Plan *p, const OpTimeRow *ops, double step_s, double comm_s, double peak_flops_s,
                    double dram_bytes_s, StepBreakdown *out)
{
    memset(out, 0, sizeof *out);
    out->peak_flops_s = peak_flops_s, out->dram_bytes_s = dram_bytes_s, out->comm_s = comm_s;
    for (int i = 0; i < p->nops; i++) {
        const OpCost c = op_cost(&p->ops[i].desc);
        const double t = ops[i].time_s;
        out->ops_s += t;
        out->flops += c.flops;
        const bool compute = peak_flops_s > 0 && dram_bytes_s > 0 && c.flops / peak_flops_s >= c.bytes / dram_bytes_s;
        if (compute)
            out->compute_bound_s += t, out->compute_bound_ops++;
        else
            out->memory_bound_s += t, out->memory_bound_ops++;
        int k = 0;
        while (k < out->nkinds && !(strcmp(out->kinds[k].kind, ops[i].kind) == 0 &&
                                    strcmp(out->kinds[k].phase, ops[i].phase) == 0))
            k++;
        if (k == out->nkinds) {
            if (k == BREAKDOWN_MAX_KINDS)
                continue; /* more kinds than any plan has: the rest are in the totals only */
            snprintf(out->kinds[k].kind, sizeof out->kinds[k].kind, "%s", ops[i].kind);
            snprintf(out->kinds[k].phase, sizeof out->kinds[k].phase, "%s", ops[i].phase);
            out->nkinds++;
        }
        out->kinds[k].ops++;
        out->kinds[k].time_s += t;
    }
    for (int a = 1; a < out->nkinds; a++) /* largest time first */
        for (int b = a; b > 0 && out->kinds[b].time_s > out->kinds[b - 1].time_s; b--) {
            const KindPhaseTime t = out->kinds[b];
            out->kinds[b] = out->kinds[b - 1];
            out->kinds[b - 1] = t;
        }
    out->step_s = step_s > 0 ? step_s : out->ops_s + comm_s;
    out->bottleneck = out->compute_bound_s >= out->memory_bound_s ? "compute-bound ops" : "memory-bound ops";
    if (comm_s > fmax(out->compute_bound_s, out->memory_bound_s))
        out->bottleneck = "communication";
}
