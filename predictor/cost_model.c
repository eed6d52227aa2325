/* predictor/cost_model.c — the per-op cost model built from one calibration: exact lookup,
 * batch scaling, and per-group local regression in log space (LOESS) bounded by the
 * roofline of the measured FMA peak and memory bandwidth. The paths are described in
 * predict.h; the fitted one in detail here.
 *
 * Fitted path. Every measurement of a group (an op kind, phase and variant: GEMM is one
 * group, its transposes are features) is a point (x, y): x = the op's features (logarithms
 * of the dimensions that set its speed, see features()), y = log(median time / work),
 * work = FLOPs for compute-bound kinds, bytes for the others: the logarithm of the op's
 * inverse efficiency. The price at x0 is work times exp of the value at x0 of a weighted
 * least-squares local quadratic (a slope and a curvature per feature) through the points,
 * Gaussian weights w_i = exp(-|x_i - x0|^2 / 2h^2) with distances in units of each
 * feature's standard deviation over the group. So it follows the efficiency curves
 * (skinny GEMMs, small feature maps, data in or out of cache) that one global formula
 * misses. Beyond the range the points span, the efficiency at the range's edge is kept
 * (large problems run as fast as the largest measured). The bandwidth h is chosen per
 * group by leave-one-out cross-validation (the least mean absolute error); the 68th
 * percentile of the leave-one-out errors (in log, i.e. relative) is the fitted price's
 * uncertainty band.
 * Prices are never below the roofline max(FLOPs / peak, bytes / bandwidth of the memory
 * level the op's data fits in). A group with too few points is priced by the roofline
 * times the median ratio (time / roofline) its kind, or else all kinds of its
 * boundness, achieved in the calibration.
 */
#include <assert.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predictor/comm_model.h"
#include "predictor/predict.h"

enum {
    MAX_BATCH_FIELDS = 3,
    MAX_FEAT = 7,         /* features per op */
    MIN_FIT_POINTS = 5,   /* a group with fewer is priced by the roofline ratio */
    LOO_MAX = 160,        /* bandwidth selection uses at most this many held-out points */
    MAX_CURVE = 64        /* points of the memory read-bandwidth curve */
};

/* Bandwidths tried by leave-one-out, in standard deviations of the features. */
static const double BANDWIDTHS[] = {0.25, 0.4, 0.6, 0.9, 1.4, 2.2, 3.5};
enum { NBANDWIDTHS = sizeof BANDWIDTHS / sizeof BANDWIDTHS[0] };

typedef struct {
    char key[OP_KEY_MAX];
    OpDesc desc;
    double median_s, lo_s, hi_s; /* lo/hi: the 95% CI moved onto the median */
    double warm_s;                /* the warm median of a kernel timed cold, else 0 */
    double apart_s;               /* the median of its passes with the cores apart, else 0 */
    bool apart_only;              /* every pass it was timed in was apart (or on one core): its
                                     times are the apart placement's until apart_build takes them
                                     to near (taken_near; once, however often cm_fit runs) */
    bool taken_near;
    double flops, bytes;
    double work;  /* FLOPs (compute-bound kinds) or bytes: what the efficiency is of */
    int group;
    int nfeat;
    double x[MAX_FEAT];
    char norm_key[MAX_BATCH_FIELDS][OP_KEY_MAX]; /* key with one batch-like field zeroed */
} Entry;

typedef struct {
    int group;
    OpKind kind;
    int n;            /* points */
    int *idx;         /* their entries */
    int nfeat;        /* features of the group */
    bool use[MAX_FEAT]; /* features that vary over the group (constant ones carry no information) */
    bool linear[MAX_FEAT]; /* no curvature term: 0/1 flags, and features of fewer than 4 values */
    double sd[MAX_FEAT];
    double lo[MAX_FEAT], hi[MAX_FEAT]; /* the range each feature spans over the points */
    double h;         /* chosen bandwidth */
    double rms;       /* leave-one-out error of log time: the 68th percentile of |error| (1 sigma) */
    double ylo, yhi;  /* the range of log(time / work) over the points */
    bool ok;
} Fit;

/* A bandwidth-by-working-set curve as the cache model reads it: seconds per byte by
 * log(working set per thread), increasing in x, interpolated by GSL (interp NULL: fewer
 * than 3 points). */
typedef struct {
    double logws[MAX_CURVE], s_per_byte[MAX_CURVE];
    gsl_interp *interp;
} Curve;

static void curve_free(Curve *c)
{
    if (c->interp)
        gsl_interp_free(c->interp);
    c->interp = NULL;
}

/* The retention of one working set (per thread): the share of its warmth (the cold-to-warm
 * speed-up) data written keeps after each measured wait, non-increasing in the wait, 1 at 0. */
enum { MAX_RETAIN_SETS = 8 };
typedef struct {
    double ws;
    double wait_s[MAX_CURVE], kept[MAX_CURVE];
    int n;
} Retention;

/* A point of the roofline's bandwidth envelope: bytes moved, bandwidth reached (B/s). */
typedef struct {
    double bytes, bw;
} EnvPoint;

struct CostModel {
    const CommModel *collectives; /* prices the sums inside a step (cm_set_collectives) */
    Entry *e;
    int n, cap;
    Fit *fits;
    int nfits;
    double peak_flops_s;  /* FMA peak at the calibration's threads, or the best GEMM rate */
    double peak_bytes_s;  /* best bandwidth measured by a memory-bound kernel */
    /* The roofline's bandwidth envelope (envelope_build): the memory-bound kernels' sizes in
     * bytes, largest first, each with the fastest bandwidth any kernel at least that large
     * achieved; what bandwidth_for adds to the read curve */
    EnvPoint *env;
    int nenv;
    int threads;          /* of the calibration's measurements (the FMA peak and read curve) */
    double curve_ws[MAX_CURVE], curve_bw[MAX_CURVE]; /* read bandwidth (B/s) by working set per thread */
    int ncurve;
    double handoff_ws[MAX_CURVE], handoff_bw[MAX_CURVE]; /* the same for data just written */
    int nhandoff;
    /* the cross-core reads (each thread reading what its neighbour wrote): no op is priced
     * from them; cm_measured_s gives their times to the drift check, which tells from them
     * how far apart the cores are now */
    double cross_ws[MAX_CURVE], cross_s[MAX_CURVE];
    double cross_apart_s[MAX_CURVE]; /* the same reads' times with the cores apart (0: none) */
    double cross_bytes[MAX_CURVE];   /* and the bytes each moves */
    int ncross;
    /* the retention samples (data written, read back idle_us later), as measured, and the
     * table cm_fit builds from them: per working set, the share of warmth kept by wait */
    double retain_ws[MAX_CURVE], retain_idle_s[MAX_CURVE], retain_s[MAX_CURVE];
    int nretain;
    Retention retention[MAX_RETAIN_SETS];
    int nretention;
    double handoff_startup_s; /* the handoff curve's region start-up (handoff_curve_build) */
    double llc_bytes;     /* the last-level cache the calibration flushed (0: unknown) */
    /* the read and handoff curves as time per byte by log(working set per thread), never
     * above a larger working set's (cm_fit): what cm_warmth interpolates; NULL without one */
    Curve read, handoff;
    bool fitted_only;     /* holdout: neither exact nor scaled prices */
    bool sorted;
    /* The apart placement (cm_set_apart). A compute-bound op costs its near price times its
     * kernel's apart-over-near ratio, measured (the kernel's own passes apart), else the
     * median ratio of its kind's kernels timed both ways, else of every compute-bound such
     * kernel (apart_kind[OP_KIND_COUNT]; 0 where nothing was timed both ways). A
     * memory-bound op is priced by the cache model instead: half of the warm bytes another
     * kind of op (split between the threads differently) left in cache are in the other
     * core's (pred_cache_fractions), read at remote_ratio times the cold time per byte (the
     * cross-core reads apart over the DRAM read; 1 where not measured). Set by cm_fit. */
    bool apart;
    double apart_kind[OP_KIND_COUNT + 1];
    double remote_ratio;
    /* The shared-write curve (membw shared: a thread rewriting its slice right after both
     * threads read it), near and apart: per working set per thread, the kernel's time
     * (near: 0 where every pass was apart; apart: 0 where none was) and bytes; and what
     * cm_fit makes of it, per placement: the seconds per byte such a write costs over the
     * read curve's at the same working set (the op's own write, which its kernel's time
     * holds), by log(working set per thread), at least 0 (shared_build) */
    double shared_ws[MAX_CURVE], shared_near_s[MAX_CURVE], shared_apart_s[MAX_CURVE], shared_bytes[MAX_CURVE];
    int nshared;
    double shared_logws[2][MAX_CURVE], shared_extra[2][MAX_CURVE]; /* [near, apart] */
    int nshared_extra[2];
    gsl_interp *shared_interp[2]; /* linear, where a placement has 2 points or more */
};

const char *price_source_name(PriceSource s)
{
    static const char *const names[] = {"exact", "scaled", "fitted", "roofline"};
    return names[s];
}

static bool compute_bound(OpKind k) { return k == OP_GEMM || k == OP_BMM || k == OP_CONV2D || k == OP_SPMM; }

/* Ops whose kernel and key do not depend on the training phase share one group
 * (op_kind_phaseless: GEMM and BMM, whose transposes are features; sparse GEMM; zero,
 * copy and axpby, one kernel whichever phase a plan puts them in — a residual's gradient
 * copy or sum is priced from the element-wise sweep's; the optimizers and the clipping
 * norm: their keys parse as one phase, the plan's ops may be in another); the others are
 * grouped by kind, phase and variant (activation and whether in place, pooling, STREAM or
 * memory kernel, batch-norm mode, GRU activation, the binary or tensor-scalar operator, a
 * convolution grouped or dense). */

static int group_of(const OpDesc *d)
{
    int sub = 0, phase = op_kind_phaseless(d->kind) ? 0 : (int)d->phase;
    if (d->kind == OP_ACT)
        sub = d->u.act.act + (d->u.act.in_place ? ACT_COUNT : 0);
    else if (d->kind == OP_POOL2D)
        sub = d->u.pool.kind;
    else if (d->kind == OP_STREAM)
        sub = d->u.mem.kind;
    else if (d->kind == OP_BATCHNORM)
        sub = d->u.bn.training;
    else if (d->kind == OP_GRU_CELL)
        sub = d->u.gru.act;
    else if (d->kind == OP_MEMBW)
        sub = d->u.membw.kind;
    else if (d->kind == OP_MOMENTUM)
        sub = d->u.update.nesterov;
    else if (d->kind == OP_BINARY)
        sub = d->u.binary.op;
    else if (d->kind == OP_SCALAR)
        sub = d->u.scalar.op;
    else if (d->kind == OP_CONV2D) /* a grouped kernel loops over its groups' small GEMMs */
        sub = d->u.conv.groups > 1;
    return (int)d->kind * 64 + phase * 8 + sub;
}

static double lg(double v) { return log(v > 1 ? v : 1); }

static double work_of(OpKind k, const OpCost *c)
{
    const double w = compute_bound(k) ? c->flops : c->bytes;
    return w > 0 ? w : fmax(c->flops, 1.0);
}

/* The work an op's time follows at `threads` threads: its busiest thread's (work_of times
 * op_thread_imbalance). VGG-16 at batch 3 on 2 threads runs each convolution's images 2
 * and 1, as long as batch 4 would: a fit of efficiency per FLOP priced them 14-27% low. */
static double busiest_work(const OpDesc *d, const OpCost *c, int threads)
{
    return work_of(d->kind, c) * op_thread_imbalance(d, threads);
}

/* The features of an op: what sets its speed besides its size, on log scales (binary flags
 * as 0/1). Compute-bound kinds: the dimensions of the GEMMs the kernel runs (a convolution
 * is im2col + a GEMM of k/g x (out_h*out_w) x (c/g*r*s) per image, plus the batch,
 * whether the image is its own column matrix and whether the kernel copies its windows
 * whole, as rows: op_conv_rows, a sentence CNN's, which the image convolutions' points do
 * not price); memory-bound kinds: the bytes moved and the shape's inner extent (the
 * contiguous run a kernel vectorises over). */
static int features(const OpDesc *d, double x[MAX_FEAT])
{
    const OpCost c = op_cost(d);
    switch (d->kind) {
    case OP_GEMM: {
        const GemmDesc *g = &d->u.gemm;
        x[0] = lg(g->m), x[1] = lg(g->n), x[2] = lg(g->k);
        x[3] = g->trans_a, x[4] = g->trans_b, x[5] = g->beta != 0.0f;
        x[6] = g->bias; /* constant, so unused, in a calibration without linear layers */
        return 7;
    }
    case OP_BMM: { /* the GEMM's features, with the batch of matrices */
        const BmmDesc *g = &d->u.bmm;
        x[0] = lg(g->m), x[1] = lg(g->n), x[2] = lg(g->k), x[3] = lg(g->batch);
        x[4] = g->trans_a, x[5] = g->trans_b, x[6] = g->beta != 0.0f;
        return 7;
    }
    case OP_CONV2D: {
        const ConvDesc *v = &d->u.conv;
        x[0] = lg(v->k / v->groups);
        x[1] = lg((double)v->out_h * v->out_w);
        x[2] = lg((double)(v->c / v->groups) * v->r * v->s);
        x[3] = lg(v->n);
        x[4] = v->r == 1 && v->s == 1 && v->stride_h == 1 && v->stride_w == 1;
        x[5] = lg(v->groups);
        x[6] = op_conv_rows(d);
        return 7;
    }
    case OP_SPMM:
        x[0] = lg(d->u.spmm.m), x[1] = lg(d->u.spmm.n), x[2] = lg(d->u.spmm.k), x[3] = lg(d->u.spmm.nnz_per_row);
        return 4;
    case OP_POOL2D: {
        const PoolDesc *p = &d->u.pool;
        x[0] = lg(c.bytes), x[1] = lg((double)p->win_h * p->win_w), x[2] = lg(p->stride_h);
        x[3] = lg((double)p->out_h * p->out_w), x[4] = p->accumulate;
        x[5] = op_pool_global(d); /* the planes reduced side by side (ops/pool.c) */
        return 6;
    }
    case OP_BIAS:
        x[0] = lg(c.bytes), x[1] = lg(d->u.bias.spatial), x[2] = d->u.bias.accumulate;
        return 3;
    case OP_BATCHNORM:
        x[0] = lg(c.bytes), x[1] = lg(d->u.bn.spatial), x[2] = lg(d->u.bn.c), x[3] = d->u.bn.accumulate;
        return 4;
    case OP_LRN:
        x[0] = lg(c.bytes), x[1] = lg(d->u.lrn.spatial), x[2] = lg(d->u.lrn.size), x[3] = d->u.lrn.accumulate;
        return 4;
    case OP_SOFTMAX_XENT:
        x[0] = lg(d->u.xent.n), x[1] = lg(d->u.xent.classes);
        return 2;
    case OP_LSTM_CELL:
        x[0] = lg(d->u.lstm.batch), x[1] = lg(d->u.lstm.hidden);
        return 2;
    case OP_GRU_CELL:
        x[0] = lg(d->u.gru.batch), x[1] = lg(d->u.gru.hidden);
        return 2;
    case OP_EMBEDDING: /* a positional lookup reads and writes its rows in order, not at random */
        x[0] = lg(d->u.embed.n), x[1] = lg(d->u.embed.dim), x[2] = lg(d->u.embed.vocab), x[3] = d->u.embed.accumulate;
        x[4] = d->u.embed.repeat > 0;
        return 5;
    case OP_KL_SPARSITY:
        x[0] = lg(d->u.kl.n), x[1] = lg(d->u.kl.units);
        return 2;
    case OP_CHANNEL_COPY:
        x[0] = lg(c.bytes), x[1] = lg(d->u.chan.spatial), x[2] = d->u.chan.accumulate;
        return 3;
    case OP_LAYERNORM: /* rows of h: the inner extent */
        x[0] = lg(c.bytes), x[1] = lg(d->u.ln.h), x[2] = d->u.ln.accumulate;
        return 3;
    case OP_SOFTMAX: /* the causal mask skips half the row and writes zeros in its place */
        x[0] = lg(c.bytes), x[1] = lg(d->u.softmax.h), x[2] = d->u.softmax.accumulate, x[3] = d->u.softmax.causal;
        return 4;
    case OP_BINARY:
        x[0] = lg(c.bytes), x[1] = d->u.binary.accumulate;
        return 2;
    case OP_SCALAR:
        x[0] = lg(c.bytes), x[1] = d->u.scalar.accumulate;
        return 2;
    case OP_SGD:
    case OP_RMSPROP:
    case OP_MOMENTUM:
    case OP_ADAM:
    case OP_ADAMW:
        /* decayed parameters do more FLOPs each (two, AdamW's one) */
        x[0] = lg(c.bytes), x[1] = (double)d->u.update.decay_count / (double)d->u.update.count;
        return 2;
    default: /* act, sqerr, zero, copy, stream, dropout, axpby, shrink, norm1, peak, membw */
        x[0] = lg(c.bytes > 0 ? c.bytes : c.flops);
        return 1;
    }
}

/* The fields of d that grow with the batch size (GEMM: whichever dimension it is). */
static int batch_fields(OpDesc *d, int *f[MAX_BATCH_FIELDS])
{
    switch (d->kind) {
    case OP_GEMM: f[0] = &d->u.gemm.m; f[1] = &d->u.gemm.n; f[2] = &d->u.gemm.k; return 3;
    case OP_CONV2D: f[0] = &d->u.conv.n; return 1;
    case OP_POOL2D: f[0] = &d->u.pool.n; return 1;
    case OP_BIAS: f[0] = &d->u.bias.n; return 1;
    case OP_SOFTMAX_XENT: f[0] = &d->u.xent.n; return 1;
    case OP_SQERR: f[0] = &d->u.sqerr.n; return 1;
    case OP_LSTM_CELL: f[0] = &d->u.lstm.batch; return 1;
    case OP_GRU_CELL: f[0] = &d->u.gru.batch; return 1;
    case OP_BATCHNORM: f[0] = &d->u.bn.n; return 1;
    case OP_LRN: f[0] = &d->u.lrn.n; return 1;
    case OP_CHANNEL_COPY: f[0] = &d->u.chan.n; return 1;
    case OP_EMBEDDING: f[0] = &d->u.embed.n; return 1;
    case OP_KL_SPARSITY: f[0] = &d->u.kl.n; return 1;
    case OP_BMM: f[0] = &d->u.bmm.batch; return 1; /* batch x heads */
    case OP_LAYERNORM: f[0] = &d->u.ln.n; return 1; /* tokens */
    case OP_SOFTMAX: f[0] = &d->u.softmax.n; return 1;
    default: return 0;
    }
}

static void norm_key(const OpDesc *d, int field, char out[OP_KEY_MAX])
{
    OpDesc c = *d;
    int *f[MAX_BATCH_FIELDS];
    int n = batch_fields(&c, f);
    assert(field < n);
    *f[field] = 0;
    op_key(&c, out);
}

CostModel *cm_new(void)
{
    CostModel *cm = calloc(1, sizeof *cm);
    assert(cm);
    return cm;
}

static void fits_free(CostModel *cm)
{
    for (int i = 0; i < cm->nfits; i++)
        free(cm->fits[i].idx);
    free(cm->fits);
    cm->fits = NULL;
    cm->nfits = 0;
}

void cm_free(CostModel *cm)
{
    if (!cm)
        return;
    fits_free(cm);
    free(cm->env);
    curve_free(&cm->read);
    curve_free(&cm->handoff);
    for (int p = 0; p < 2; p++)
        if (cm->shared_interp[p])
            gsl_interp_free(cm->shared_interp[p]);
    free(cm->e);
    free(cm);
}

int cm_count(const CostModel *cm) { return cm->n; }

/* Whether every pass that timed m was apart (or on one core): it has no near time. */
static bool timed_apart_only(const MeasurementRow *m)
{
    /* (counts from the database: summed wide, whatever they hold) */
    return m->far_passes > 0 && (long long)m->far_passes + m->shared_passes >= (long long)strlen(m->pass_placement);
}

void cm_add(CostModel *cm, const MeasurementRow *m)
{
    OpDesc d;
    if (!m->validated || m->median_s <= 0 || !op_key_parse(m->key, &d))
        return; /* unvalidated or foreign rows never price anything */
    OpCost c = op_cost(&d);
    /* the machine's limits are not ops a model runs: they set the roofline */
    if (m->threads > 0)
        cm->threads = m->threads;
    if (d.kind == OP_PEAK_FMA) {
        if (d.u.peak.threads == m->threads) /* the roof of the calibration's thread count */
            cm->peak_flops_s = fmax(cm->peak_flops_s, c.flops / m->median_s);
        return;
    }
    if (d.kind == OP_MEMBW) {
        if (d.u.membw.kind == MEMBW_READ && d.u.membw.threads == m->threads && cm->ncurve < MAX_CURVE) {
            cm->curve_ws[cm->ncurve] = (double)d.u.membw.bytes_per_thread;
            cm->curve_bw[cm->ncurve++] = c.bytes / m->median_s;
        }
        if (d.u.membw.kind == MEMBW_HANDOFF && d.u.membw.threads == m->threads && cm->nhandoff < MAX_CURVE) {
            cm->handoff_ws[cm->nhandoff] = (double)d.u.membw.bytes_per_thread;
            cm->handoff_bw[cm->nhandoff++] = c.bytes / m->median_s;
        }
        if (d.u.membw.kind == MEMBW_RETAIN && d.u.membw.threads == m->threads && cm->nretain < MAX_CURVE) {
            cm->retain_ws[cm->nretain] = (double)d.u.membw.bytes_per_thread;
            cm->retain_idle_s[cm->nretain] = 1e-6 * (double)d.u.membw.idle_us;
            cm->retain_s[cm->nretain++] = m->median_s;
        }
        if (d.u.membw.kind == MEMBW_SHARED && d.u.membw.threads == m->threads && cm->nshared < MAX_CURVE) {
            cm->shared_ws[cm->nshared] = (double)d.u.membw.bytes_per_thread;
            cm->shared_near_s[cm->nshared] = timed_apart_only(m) ? 0 : m->median_s;
            cm->shared_apart_s[cm->nshared] = m->apart_s;
            cm->shared_bytes[cm->nshared++] = c.bytes;
        }
        if (d.u.membw.kind == MEMBW_CROSS && d.u.membw.threads == m->threads && cm->ncross < MAX_CURVE) {
            cm->cross_ws[cm->ncross] = (double)d.u.membw.bytes_per_thread;
            cm->cross_apart_s[cm->ncross] = m->apart_s;
            cm->cross_bytes[cm->ncross] = c.bytes;
            cm->cross_s[cm->ncross++] = m->median_s;
        }
        return;
    }
    if (cm->n == cm->cap) {
        cm->cap = cm->cap ? 2 * cm->cap : 256;
        cm->e = realloc(cm->e, (size_t)cm->cap * sizeof *cm->e);
        assert(cm->e);
    }
    Entry *e = &cm->e[cm->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->key, sizeof e->key, "%s", m->key);
    e->desc = d;
    e->median_s = m->median_s;
    /* warm data is never slower to reach than cold: a warm median above the cold one is a
     * slow stretch of the machine in the passes that timed it (P3B1's forward GEMM, 970 us
     * warm against 642 us cold in one zoo calibration, 487-500 us in its steps) */
    e->warm_s = m->warm_s > 0 ? fmin(m->warm_s, m->median_s) : 0;
    /* an apart price only where it differs from the near one: a kernel whose every pass
     * was apart tells nothing of the ratio, and its times are the apart placement's
     * (apart_build takes them to near) */
    e->apart_only = timed_apart_only(m);
    e->apart_s = m->apart_s > 0 && !e->apart_only ? m->apart_s : 0;
    e->lo_s = fmax(m->min_s, m->median_s - (m->mean_s - m->ci95_lo_s));
    e->hi_s = m->median_s + (m->ci95_hi_s - m->mean_s);
    e->flops = c.flops;
    e->bytes = c.bytes;
    e->work = busiest_work(&d, &c, cm->threads);
    e->group = group_of(&d);
    e->nfeat = features(&d, e->x);
    int *f[MAX_BATCH_FIELDS];
    int nf = batch_fields(&d, f);
    for (int i = 0; i < nf; i++)
        norm_key(&d, i, e->norm_key[i]);
    /* without a measured FMA peak, the best GEMM rate is the compute roof */
    if (d.kind == OP_GEMM && c.flops / m->median_s > cm->peak_flops_s)
        cm->peak_flops_s = c.flops / m->median_s;
    if (!compute_bound(d.kind)) /* the warm time too: a roofline floor must not exceed it */
        cm->peak_bytes_s = fmax(cm->peak_bytes_s, c.bytes / (e->warm_s > 0 ? fmin(e->warm_s, m->median_s) : m->median_s));
    cm->sorted = false;
}

/* Does e share a shape (its key, or its key with a batch-like field zeroed) with d? */
static bool same_shape(const Entry *e, const OpDesc *d)
{
    char k[OP_KEY_MAX];
    op_key(d, k);
    if (strcmp(k, e->key) == 0)
        return true;
    OpDesc c = *d;
    int *f[MAX_BATCH_FIELDS];
    int nf = batch_fields(&c, f);
    for (int i = 0; i < nf; i++) {
        norm_key(d, i, k);
        if (e->norm_key[i][0] && strcmp(k, e->norm_key[i]) == 0)
            return true;
    }
    return false;
}

int cm_holdout(CostModel *cm, const OpDesc *ops, int nops)
{
    int kept = 0, dropped = 0;
    for (int i = 0; i < cm->n; i++) {
        bool hit = false;
        for (int j = 0; j < nops && !hit; j++)
            hit = cm->e[i].desc.kind == ops[j].kind && same_shape(&cm->e[i], &ops[j]);
        if (hit)
            dropped++;
        else
            cm->e[kept++] = cm->e[i];
    }
    cm->n = kept;
    cm->fitted_only = true;
    cm->sorted = false;
    return dropped;
}

static int entry_cmp(const void *a, const void *b) { return strcmp(((const Entry *)a)->key, ((const Entry *)b)->key); }

/* ---- local regression ---- */

/* The weighted least-squares fit of log(time / work), centred at xc, through the fit's
 * points (skipping entry `skip`) with bandwidth h: intercept, a slope per used feature and
 * a curvature per non-flag feature (no cross terms), into c[] in that order; returns the
 * number of coefficients, 0 if no point carries weight, or -1 if the system is singular
 * (then c[0] is the weighted mean). Solved from the normal equations (at most 15 unknowns)
 * by Cholesky with a tiny ridge, which keeps features that happen to be constant near xc
 * from making the system singular. The bandwidth widens until the points that carry
 * weight are twice the unknowns. */
enum { MAX_TERMS = 1 + 2 * MAX_FEAT };

static int local_fit(const CostModel *cm, const Fit *f, const double *xc, int skip, double h, const int *cols,
                     int nf, double c[MAX_TERMS])
{
    int nq = 0;
    for (int q = 0; q < nf; q++)
        nq += !f->linear[cols[q]];
    const int p = 1 + nf + nq;
    double A[MAX_TERMS * MAX_TERMS];
    double sw = 0, sw2 = 0, wy = 0;
    for (int t = 0; t < 8; t++, h *= 1.6) {
        memset(A, 0, sizeof A);
        memset(c, 0, MAX_TERMS * sizeof *c);
        sw = sw2 = wy = 0;
        for (int i = 0; i < f->n; i++) {
            if (f->idx[i] == skip)
                continue;
            const Entry *e = &cm->e[f->idx[i]];
            double d2 = 0, z[MAX_TERMS];
            z[0] = 1;
            for (int q = 0, k = 1 + nf; q < nf; q++) {
                const int j = cols[q];
                const double u = (e->x[j] - xc[j]) / f->sd[j];
                d2 += u * u;
                z[q + 1] = u;
                if (!f->linear[j])
                    z[k++] = u * u;
            }
            const double w = exp(-0.5 * d2 / (h * h));
            if (w < 1e-12)
                continue;
            const double y = log(e->median_s / e->work);
            for (int r = 0; r < p; r++) {
                for (int s = 0; s <= r; s++)
                    A[r * p + s] += w * z[r] * z[s];
                c[r] += w * z[r] * y;
            }
            sw += w;
            sw2 += w * w;
            wy += w * y;
        }
        if (sw > 0 && sw * sw / sw2 >= 2.0 * p) /* effective points: (sum w)^2 / sum w^2 */
            break;
    }
    if (sw <= 0)
        return 0;
    for (int r = 0; r < p; r++)
        for (int s = 0; s < r; s++)
            A[s * p + r] = A[r * p + s];
    const double ridge = 1e-6 * A[0];
    for (int r = 1; r < p; r++)
        A[r * p + r] += ridge;
    gsl_matrix_view Av = gsl_matrix_view_array(A, (size_t)p, (size_t)p);
    gsl_vector_view cv = gsl_vector_view_array(c, (size_t)p);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int rc = gsl_linalg_cholesky_decomp1(&Av.matrix);
    if (rc == 0)
        rc = gsl_linalg_cholesky_svx(&Av.matrix, &cv.vector);
    gsl_set_error_handler(old);
    if (rc != 0 || !isfinite(c[0])) {
        c[0] = wy / sw;
        return -1;
    }
    return p;
}

/* log(time / work) at x0 by the fit with bandwidth h, skipping entry `skip`: the local
 * quadratic's value at x0 clamped into the range the points span (the curvature is not
 * extrapolated: beyond the edge, the edge's efficiency). False if no point carries
 * weight. */
/* Where a fit is evaluated for x0: x0 clamped into the range the points span, in xc, and
 * the features that vary over the group, in cols; returns how many those are. */
static int fit_centre(const Fit *f, const double *x0, double xc[MAX_FEAT], int cols[MAX_FEAT])
{
    int nf = 0;
    for (int j = 0; j < f->nfeat; j++) {
        xc[j] = x0[j];
        if (!f->use[j])
            continue;
        cols[nf++] = j;
        xc[j] = fmin(fmax(x0[j], f->lo[j]), f->hi[j]);
    }
    return nf;
}

static bool loess_at(const CostModel *cm, const Fit *f, const double *x0, int skip, double h, double *y0)
{
    int cols[MAX_FEAT] = {0};
    double xc[MAX_FEAT] = {0}, c[MAX_TERMS];
    const int nf = fit_centre(f, x0, xc, cols);
    if (local_fit(cm, f, xc, skip, h, cols, nf, c) == 0)
        return false;
    /* a local quadratic between sparse, noisy points can swing far beyond them (a holdout
     * of pooling once priced 3 ms ops at 46 s): no fitted efficiency is outside the range
     * the group's measurements span */
    *y0 = fmin(fmax(c[0], f->ylo), f->yhi);
    return true;
}

/* The warm-to-cold time ratio at x0: the Gaussian-weighted (bandwidth h, the fit's) mean
 * of log(warm / cold) over the group's points that were timed both ways; 1 if none
 * carries weight (the group was timed warm only: pooling, sparse GEMM). GEMM and
 * convolution mix both: those of low intensity are timed cold, the others warm, where the
 * cache changes little, so there a warm-only point counts as a ratio of 1 (a large GEMM's
 * neighbours are then large GEMMs, not the distant skinny ones). */
static double warm_ratio_at(const CostModel *cm, const Fit *f, const double *x0)
{
    int cols[MAX_FEAT] = {0};
    double xc[MAX_FEAT] = {0};
    const int nf = fit_centre(f, x0, xc, cols);
    double sw = 0, swy = 0;
    for (int i = 0; i < f->n; i++) {
        const Entry *e = &cm->e[f->idx[i]];
        if (e->warm_s <= 0 && !compute_bound(e->desc.kind)) /* sparse GEMM: warm only, all 1 */
            continue;
        double d2 = 0;
        for (int q = 0; q < nf; q++) {
            const double u = (e->x[cols[q]] - xc[cols[q]]) / f->sd[cols[q]];
            d2 += u * u;
        }
        const double w = exp(-0.5 * d2 / (f->h * f->h));
        sw += w;
        swy += w * log(e->warm_s > 0 ? e->warm_s / e->median_s : 1.0);
    }
    return sw > 1e-12 ? exp(swy / sw) : 1.0;
}

/* Leave-one-out errors of log(time / work) with bandwidth h at up to LOO_MAX points into
 * err (absolute values, sorted); returns how many. */
static int loo_errors(const CostModel *cm, const Fit *f, double h, double *err)
{
    const int step = f->n > LOO_MAX ? (f->n + LOO_MAX - 1) / LOO_MAX : 1;
    int n = 0;
    for (int i = 0; i < f->n; i += step) {
        const Entry *e = &cm->e[f->idx[i]];
        double y;
        if (loess_at(cm, f, e->x, f->idx[i], h, &y))
            err[n++] = fabs(y - log(e->median_s / e->work));
    }
    gsl_sort(err, 1, (size_t)n);
    return n;
}

static void fit_group(CostModel *cm, int group, Fit *f)
{
    memset(f, 0, sizeof *f);
    f->group = group;
    f->idx = malloc((size_t)cm->n * sizeof *f->idx);
    assert(f->idx);
    for (int i = 0; i < cm->n; i++)
        if (cm->e[i].group == group) {
            f->idx[f->n++] = i;
            f->kind = cm->e[i].desc.kind;
            f->nfeat = cm->e[i].nfeat;
        }
    if (f->n < MIN_FIT_POINTS)
        return;
    f->ylo = INFINITY, f->yhi = -INFINITY;
    for (int i = 0; i < f->n; i++) {
        const Entry *e = &cm->e[f->idx[i]];
        const double y = log(e->median_s / e->work);
        f->ylo = fmin(f->ylo, y);
        f->yhi = fmax(f->yhi, y);
    }
    double *col = malloc((size_t)f->n * sizeof *col);
    assert(col);
    for (int j = 0; j < f->nfeat; j++) {
        for (int i = 0; i < f->n; i++)
            col[i] = cm->e[f->idx[i]].x[j];
        f->sd[j] = gsl_stats_sd(col, 1, (size_t)f->n);
        gsl_stats_minmax(&f->lo[j], &f->hi[j], col, 1, (size_t)f->n);
        f->use[j] = f->sd[j] > 1e-9;
        /* a curvature needs at least four distinct values to be more than noise */
        gsl_sort(col, 1, (size_t)f->n);
        int distinct = f->n > 0;
        for (int i = 1; i < f->n; i++)
            distinct += col[i] > col[i - 1] + 1e-12;
        f->linear[j] = distinct < 4;
    }
    free(col);
    /* the bandwidth with the least mean |leave-one-out error| (robust to the odd noisy
     * point); the band is the 68th percentile of those errors */
    double *err = malloc((size_t)f->n * sizeof *err);
    assert(err);
    double best = INFINITY;
    for (int b = 0; b < NBANDWIDTHS; b++) {
        const int n = loo_errors(cm, f, BANDWIDTHS[b], err);
        if (n == 0)
            continue;
        const double mean = gsl_stats_mean(err, 1, (size_t)n);
        if (mean < best) {
            best = mean;
            f->h = BANDWIDTHS[b];
            f->rms = gsl_stats_quantile_from_sorted_data(err, 1, (size_t)n, 0.68);
        }
    }
    free(err);
    f->ok = isfinite(best);
}

/* Builds c from n measured points (working set per thread, B/s): each point never slower
 * than a larger working set's (a noisy point, or a small set's loop overhead, must not make
 * a level look slower than the one behind it; the same rule as bandwidth_for), points of
 * equal working set merged. */
static void curve_build(Curve *c, const double *ws, const double *bw, int n)
{
    curve_free(c);
    int order[MAX_CURVE];
    for (int i = 0; i < n; i++) /* by working set, largest first */
        order[i] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && ws[order[j]] > ws[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    double rev_x[MAX_CURVE], rev_y[MAX_CURVE], fastest_beyond = INFINITY;
    int m = 0;
    for (int k = 0; k < n; k++) {
        const int i = order[k];
        fastest_beyond = fmin(fastest_beyond, 1.0 / bw[i]);
        const double x = log(ws[i]);
        if (m > 0 && x >= rev_x[m - 1] - 1e-9) {
            rev_y[m - 1] = fastest_beyond; /* the same working set again: keep the faster */
            continue;
        }
        rev_x[m] = x;
        rev_y[m++] = fastest_beyond;
    }
    for (int k = 0; k < m; k++) /* gsl_interp wants x increasing */
        c->logws[k] = rev_x[m - 1 - k], c->s_per_byte[k] = rev_y[m - 1 - k];
    if (m < 3)
        return;
    c->interp = gsl_interp_alloc(gsl_interp_linear, (size_t)m);
    assert(c->interp);
    gsl_interp_init(c->interp, c->logws, c->s_per_byte, (size_t)m);
}

/* Seconds per byte of a working set of `bytes` over all `threads`; the curve's ends beyond
 * its range. */
static double curve_at(const Curve *c, double bytes, int threads)
{
    const size_t n = c->interp->size;
    const double x = log(fmax(bytes / (threads > 0 ? threads : 1), 1.0));
    if (x <= c->logws[0])
        return c->s_per_byte[0];
    if (x >= c->logws[n - 1])
        return c->s_per_byte[n - 1];
    return gsl_interp_eval(c->interp, c->logws, c->s_per_byte, x, NULL);
}

/* The handoff curve. Each of its points is one pass in one parallel region, so its time
 * holds the region's start-up, which the read curve's many passes per region do not: the
 * smallest working set's time (nearly all start-up) is taken off every point, and points
 * it is most of are dropped (the curve's rule that no level is slower than a larger one
 * covers them). Without that the L2-sized points read 40% slower than the read curve's
 * and the cache model priced a small model's step (fista, whole in L2) 8% high. */
static void handoff_curve_build(CostModel *cm)
{
    int smallest = 0;
    for (int i = 1; i < cm->nhandoff; i++)
        if (cm->handoff_ws[i] < cm->handoff_ws[smallest])
            smallest = i;
    const int threads = cm->threads > 0 ? cm->threads : 1;
    const double startup_s = cm->nhandoff > 0 ? cm->handoff_ws[smallest] * threads / cm->handoff_bw[smallest] : 0;
    cm->handoff_startup_s = startup_s;
    double ws[MAX_CURVE], bw[MAX_CURVE];
    int n = 0;
    for (int i = 0; i < cm->nhandoff; i++) {
        const double bytes = cm->handoff_ws[i] * threads, t = bytes / cm->handoff_bw[i];
        if (t - startup_s < 0.5 * t)
            continue;
        ws[n] = cm->handoff_ws[i];
        bw[n++] = bytes / (t - startup_s);
    }
    curve_build(&cm->handoff, ws, bw, n);
}

/* The retention table from the retention samples: per working set, each wait's read time
 * (less the region start-up the handoff curve found) as time per byte a(t), and the share
 * of the warmth kept (a(DRAM) - a(t)) / (a(DRAM) - a(0)), clamped to [0, 1] and made
 * non-increasing in the wait (a longer wait cannot leave more in the cache; what looks so
 * is noise). A working set without its wait-0 sample, or one DRAM-sized, is left out. */
typedef struct {
    double ws, wait_s, s;
} RetainSample;

static int retain_sample_cmp(const void *a, const void *b)
{
    const RetainSample *x = a, *y = b;
    if (x->ws != y->ws)
        return x->ws < y->ws ? -1 : 1;
    return (x->wait_s > y->wait_s) - (x->wait_s < y->wait_s);
}

static void retention_build(CostModel *cm)
{
    cm->nretention = 0;
    if (!cm->read.interp)
        return;
    RetainSample smp[MAX_CURVE];
    for (int i = 0; i < cm->nretain; i++)
        smp[i] = (RetainSample){cm->retain_ws[i], cm->retain_idle_s[i], cm->retain_s[i]};
    qsort(smp, (size_t)cm->nretain, sizeof *smp, retain_sample_cmp); /* by set, then by wait */
    const int threads = cm->threads > 0 ? cm->threads : 1;
    const double dram = cm->read.s_per_byte[cm->read.interp->size - 1];
    for (int i = 0, next; i < cm->nretain && cm->nretention < MAX_RETAIN_SETS; i = next) {
        for (next = i + 1; next < cm->nretain && smp[next].ws == smp[i].ws; next++)
            ;
        const double bytes = smp[i].ws * threads;
        const double at0 = fmax(smp[i].s - cm->handoff_startup_s, 0) / bytes;
        if (smp[i].wait_s != 0 || dram - at0 <= 1e-3 * dram)
            continue;
        Retention *R = &cm->retention[cm->nretention++];
        R->ws = smp[i].ws;
        R->n = 0;
        double lowest = 1.0;
        for (int j = i; j < next; j++) {
            const double a = fmax(smp[j].s - cm->handoff_startup_s, 0) / bytes;
            lowest = fmin(lowest, fmin(fmax((dram - a) / (dram - at0), 0.0), 1.0));
            R->wait_s[R->n] = smp[j].wait_s;
            R->kept[R->n++] = lowest;
        }
    }
}

/* One working set's share kept after `wait_s`: linear between the measured waits, the
 * longest one's beyond it. */
static double retention_at(const Retention *R, double wait_s)
{
    if (wait_s <= R->wait_s[0])
        return R->kept[0];
    for (int k = 1; k < R->n; k++)
        if (wait_s <= R->wait_s[k]) {
            const double f = (wait_s - R->wait_s[k - 1]) / (R->wait_s[k] - R->wait_s[k - 1]);
            return R->kept[k - 1] + f * (R->kept[k] - R->kept[k - 1]);
        }
    return R->kept[R->n - 1];
}

double cm_retention(const CostModel *cm, double distance, double wait_s)
{
    if (cm->nretention == 0 || wait_s <= 0)
        return 1.0;
    const double ws = distance / (cm->threads > 0 ? cm->threads : 1);
    const Retention *R = cm->retention;
    const int n = cm->nretention;
    if (ws <= R[0].ws)
        return retention_at(&R[0], wait_s);
    if (ws >= R[n - 1].ws)
        return retention_at(&R[n - 1], wait_s);
    int k = 1;
    while (ws > R[k].ws)
        k++;
    const double f = log(ws / R[k - 1].ws) / log(R[k].ws / R[k - 1].ws); /* the sets in log space */
    return (1 - f) * retention_at(&R[k - 1], wait_s) + f * retention_at(&R[k], wait_s);
}

int cm_retention_sets(const CostModel *cm, double *ws, int max)
{
    for (int r = 0; r < cm->nretention && r < max; r++)
        ws[r] = cm->retention[r].ws * (cm->threads > 0 ? cm->threads : 1);
    return cm->nretention;
}

double cm_warmth(const CostModel *cm, double own, double distance)
{
    if (cm->llc_bytes > 0 && distance > cm->llc_bytes)
        return 0; /* the calibration's cold times are for data beyond the cache it flushed */
    if (!cm->read.interp) /* no curve: a byte is in the cache or not */
        return cm->llc_bytes > 0 && distance <= cm->llc_bytes ? 1 : 0;
    /* a(own): the op's warm time, on its own data read again; a(distance): data written
     * that long ago (the handoff curve; a calibration without one: the read curve) */
    const Curve *reuse = cm->handoff.interp ? &cm->handoff : &cm->read;
    const double dram = cm->read.s_per_byte[cm->read.interp->size - 1];
    const double warm = curve_at(&cm->read, own, cm->threads);
    const double here = curve_at(reuse, fmax(distance, own), cm->threads);
    if (dram - warm <= 1e-3 * dram)
        return 0; /* the op's own data is DRAM-sized: its warm time is its cold one */
    return fmin(fmax((dram - here) / (dram - warm), 0.0), 1.0);
}

/* The apart placement's ratios (CostModel.apart_kind): per op kind, the median of
 * apart_s / median_s over the kind's kernels timed both near and apart; overall, over the
 * compute-bound ones. A kind needs APART_MIN_KERNELS such kernels, or its ops take the
 * overall ratio. And the remote read's cost (CostModel.remote_ratio). Memory-bound kinds'
 * ratios are not priced for a step apart: repeated alone, each thread on its own slice,
 * they ran faster apart (x0.6-0.95 on the EPYC VM, two last-level caches for one), while in
 * a step they read what other ops left in the other core's cache.
 *
 * A kernel timed apart in every pass is taken to near by the same ratios (its kind's,
 * else, compute-bound, the overall one), and its measured time becomes its apart price:
 * alone, as the calibration times it, a kernel apart ran at its kind's ratio of near. Left
 * at its apart time, it priced the near placement apart and the apart placement apart
 * twice over: in a zoo calibration on the EPYC VM (72% of passes apart) every one of rnn's
 * kernels was apart in all three passes; its step was priced 246 ms, its near runs took
 * 216-218 ms and its apart ones 243-265 ms, where the apart price said 274. */
enum { APART_MIN_KERNELS = 3, APART_NEIGHBOURS = 9 };

/* The apart/near ratio of the APART_NEIGHBOURS kernels of e's kind nearest it in size (log
 * of their work) among those timed both ways: the median of their ratios, or 0 with fewer
 * than that many. A kind's ratio follows size: in the same zoo calibration on the EPYC VM,
 * GEMMs of 10^7 FLOPs ran x1.8 apart, 10^9 x1.3, 10^11 x1.0 (medians by half decade). */
static double apart_ratio_near_size(const CostModel *cm, const Entry *e)
{
    double best_d[APART_NEIGHBOURS], best_r[APART_NEIGHBOURS];
    int n = 0;
    const double at = log(e->work);
    for (int i = 0; i < cm->n; i++) {
        const Entry *o = &cm->e[i];
        if (o->apart_s <= 0 || o->apart_only || o->desc.kind != e->desc.kind || o->work <= 0)
            continue;
        const double d = fabs(log(o->work) - at);
        /* keep the nearest APART_NEIGHBOURS, sorted by distance */
        int j = n < APART_NEIGHBOURS ? n++ : APART_NEIGHBOURS;
        if (j == APART_NEIGHBOURS && d >= best_d[APART_NEIGHBOURS - 1])
            continue;
        if (j == APART_NEIGHBOURS)
            j--;
        for (; j > 0 && best_d[j - 1] > d; j--)
            best_d[j] = best_d[j - 1], best_r[j] = best_r[j - 1];
        best_d[j] = d, best_r[j] = o->apart_s / o->median_s;
    }
    if (n < APART_NEIGHBOURS)
        return 0;
    gsl_sort(best_r, 1, APART_NEIGHBOURS);
    return gsl_stats_median_from_sorted_data(best_r, 1, APART_NEIGHBOURS);
}

static void apart_build(CostModel *cm)
{
    double *r = malloc((size_t)(cm->n > cm->ncross ? cm->n : cm->ncross + 1) * sizeof *r);
    assert(r);
    for (int k = 0; k <= OP_KIND_COUNT; k++) {
        int n = 0;
        for (int i = 0; i < cm->n; i++) {
            const Entry *e = &cm->e[i];
            if (e->apart_s > 0 && !e->apart_only &&
                (k == OP_KIND_COUNT ? compute_bound(e->desc.kind) : (int)e->desc.kind == k))
                r[n++] = e->apart_s / e->median_s;
        }
        cm->apart_kind[k] = 0;
        if (n >= (k == OP_KIND_COUNT ? 1 : APART_MIN_KERNELS)) {
            gsl_sort(r, 1, (size_t)n);
            cm->apart_kind[k] = gsl_stats_median_from_sorted_data(r, 1, (size_t)n);
        }
    }
    for (int i = 0; i < cm->n; i++) {
        Entry *e = &cm->e[i];
        const int k = (int)e->desc.kind;
        const double near_size = e->apart_only && !e->taken_near ? apart_ratio_near_size(cm, e) : 0;
        const double ratio = !e->apart_only || e->taken_near ? 0
                             : near_size > 0                 ? near_size
                             : cm->apart_kind[k] > 0         ? cm->apart_kind[k]
                             : compute_bound(e->desc.kind)    ? cm->apart_kind[OP_KIND_COUNT]
                                                              : 0;
        if (ratio > 0) {
            e->apart_s = e->median_s;
            e->median_s /= ratio, e->lo_s /= ratio, e->hi_s /= ratio, e->warm_s /= ratio;
            e->taken_near = true;
        }
    }
    /* a byte read from the other core's cache, apart, over one read from DRAM: the
     * cross-core reads' time per byte apart over the DRAM read's (the read curve's largest
     * working set) */
    cm->remote_ratio = 1;
    double dram_s_per_byte = 0, ws_max = 0;
    for (int i = 0; i < cm->ncurve; i++)
        if (cm->curve_ws[i] > ws_max)
            ws_max = cm->curve_ws[i], dram_s_per_byte = 1 / cm->curve_bw[i];
    int n = 0;
    for (int i = 0; i < cm->ncross && dram_s_per_byte > 0; i++)
        if (cm->cross_apart_s[i] > 0)
            r[n++] = cm->cross_apart_s[i] / cm->cross_bytes[i] / dram_s_per_byte;
    if (n > 0) {
        gsl_sort(r, 1, (size_t)n);
        cm->remote_ratio = gsl_stats_median_from_sorted_data(r, 1, (size_t)n);
    }
    free(r);
}

/* The shared-write extra per placement (CostModel.shared_extra): each working set's
 * shared write per byte, less the region start-up (one pass per parallel region, as the
 * handoff curve's points; handoff_curve_build measured it), less the read curve's time per
 * byte there; by working set (one measurement each in a calibration). */
static void shared_build(CostModel *cm)
{
    const int threads = cm->threads > 0 ? cm->threads : 1;
    for (int p = 0; p < 2; p++) {
        if (cm->shared_interp[p])
            gsl_interp_free(cm->shared_interp[p]);
        cm->shared_interp[p] = NULL;
        int n = 0;
        double *x = cm->shared_logws[p], *y = cm->shared_extra[p];
        for (int i = 0; i < cm->nshared && cm->read.interp; i++) {
            const double t = p == 0 ? cm->shared_near_s[i] : cm->shared_apart_s[i];
            if (t <= 0 || cm->shared_bytes[i] <= 0)
                continue;
            const double per_byte = fmax(t - cm->handoff_startup_s, 0) / cm->shared_bytes[i];
            const double own = curve_at(&cm->read, cm->shared_ws[i] * threads, threads);
            x[n] = log(cm->shared_ws[i]);
            y[n++] = fmax(per_byte - own, 0);
        }
        gsl_sort2(x, 1, y, 1, (size_t)n);
        cm->nshared_extra[p] = n;
        if (n >= 2) {
            cm->shared_interp[p] = gsl_interp_alloc(gsl_interp_linear, (size_t)n);
            assert(cm->shared_interp[p]);
            gsl_interp_init(cm->shared_interp[p], x, y, (size_t)n);
        }
    }
}

double cm_shared_write_s(const CostModel *cm, double bytes)
{
    int p = cm->apart ? 1 : 0;
    if (p == 1 && cm->nshared_extra[1] == 0)
        p = 0; /* nothing timed apart: the near extra, the least it costs */
    const int n = cm->nshared_extra[p];
    if (n == 0)
        return 0;
    const double *x = cm->shared_logws[p], *y = cm->shared_extra[p];
    const double at = log(fmax(bytes / (cm->threads > 0 ? cm->threads : 1), 1.0));
    if (at <= x[0])
        return y[0];
    if (at >= x[n - 1])
        return y[n - 1];
    return gsl_interp_eval(cm->shared_interp[p], x, y, at, NULL);
}

void cm_set_apart(CostModel *cm, bool apart) { cm->apart = apart; }

bool cm_has_apart(const CostModel *cm) { return cm->apart_kind[OP_KIND_COUNT] > 0; }

bool cm_is_apart(const CostModel *cm) { return cm->apart; }

double cm_remote_ratio(const CostModel *cm) { return cm->remote_ratio; }

double cm_apart_ratio(const CostModel *cm, int kind)
{
    return kind >= 0 && kind < OP_KIND_COUNT ? cm->apart_kind[kind] : cm->apart_kind[OP_KIND_COUNT];
}

/* The factor taking a near price of d to the apart one: 1 at the near placement. e: the
 * kernel that priced it, when one did (its own ratio where it was timed apart). */
static double apart_factor(const CostModel *cm, const OpDesc *d, const Entry *e)
{
    if (!cm->apart || !compute_bound(d->kind))
        return 1.0;
    if (e && e->apart_s > 0)
        return e->apart_s / e->median_s;
    if (cm->apart_kind[d->kind] > 0)
        return cm->apart_kind[d->kind];
    return cm_has_apart(cm) ? cm->apart_kind[OP_KIND_COUNT] : 1.0;
}

/* The bandwidth envelope of the roofline (bandwidth_for). The read curve alone is no bound
 * for kernels that read and write: on the Zen 4 VM its DRAM point was 33 GB/s while SGD and
 * Adam over 67M parameters moved their bytes at 51-56 GB/s, and the floor priced every
 * large update of a holdout 55-70% above what it measured. Each memory-bound kernel is a
 * bandwidth reached at its size (by its warm time where it has one: a floor must not
 * exceed a warm price). */
static int env_cmp(const void *a, const void *b)
{
    const double x = ((const EnvPoint *)a)->bytes, y = ((const EnvPoint *)b)->bytes;
    return (x < y) - (x > y); /* largest first */
}

static void envelope_build(CostModel *cm)
{
    free(cm->env);
    cm->env = malloc((size_t)(cm->n > 0 ? cm->n : 1) * sizeof *cm->env);
    assert(cm->env);
    int n = 0;
    for (int i = 0; i < cm->n; i++) {
        const Entry *e = &cm->e[i];
        if (!compute_bound(e->desc.kind) && e->bytes > 0 && e->median_s > 0)
            cm->env[n++] = (EnvPoint){e->bytes, e->bytes / (e->warm_s > 0 ? e->warm_s : e->median_s)};
    }
    qsort(cm->env, (size_t)n, sizeof *cm->env, env_cmp);
    for (int i = 1; i < n; i++) /* the fastest of every kernel at least this large */
        cm->env[i].bw = fmax(cm->env[i].bw, cm->env[i - 1].bw);
    cm->nenv = n;
}

void cm_fit(CostModel *cm)
{
    qsort(cm->e, (size_t)cm->n, sizeof *cm->e, entry_cmp);
    cm->sorted = true;
    fits_free(cm);
    /* the read-bandwidth curve, by working set */
    for (int i = 1; i < cm->ncurve; i++)
        for (int j = i; j > 0 && cm->curve_ws[j] < cm->curve_ws[j - 1]; j--) {
            double t = cm->curve_ws[j];
            cm->curve_ws[j] = cm->curve_ws[j - 1], cm->curve_ws[j - 1] = t;
            t = cm->curve_bw[j];
            cm->curve_bw[j] = cm->curve_bw[j - 1], cm->curve_bw[j - 1] = t;
        }
    curve_build(&cm->read, cm->curve_ws, cm->curve_bw, cm->ncurve);
    envelope_build(cm);
    handoff_curve_build(cm);
    retention_build(cm);
    apart_build(cm);
    shared_build(cm);
    for (int i = 0; i < cm->n; i++) {
        bool seen = false;
        for (int j = 0; j < cm->nfits && !seen; j++)
            seen = cm->fits[j].group == cm->e[i].group;
        if (seen)
            continue;
        cm->fits = realloc(cm->fits, (size_t)(cm->nfits + 1) * sizeof *cm->fits);
        assert(cm->fits);
        fit_group(cm, cm->e[i].group, &cm->fits[cm->nfits++]);
    }
}

static int add_row(const MeasurementRow *m, void *ctx)
{
    cm_add(ctx, m);
    return 0;
}

CostModel *cm_load(Db *db, int64_t calibration_id, char *err, size_t errlen)
{
    CostModel *cm = cm_new();
    if (db_measurement_foreach(db, calibration_id, add_row, cm) != 0) {
        snprintf(err, errlen, "%s", db_errmsg(db));
        cm_free(cm);
        return NULL;
    }
    if (cm->n == 0) {
        snprintf(err, errlen, "calibration %lld has no validated measurements; run dlperf calibrate",
                 (long long)calibration_id);
        cm_free(cm);
        return NULL;
    }
    CalibrationRow cal;
    if (db_calibration_get(db, calibration_id, &cal) == 0)
        cm->llc_bytes = (double)cal.llc_bytes;
    cm_fit(cm);
    return cm;
}

void cm_set_llc(CostModel *cm, double llc_bytes) { cm->llc_bytes = llc_bytes; }

double cm_llc_bytes(const CostModel *cm) { return cm->llc_bytes; }

static const Entry *find_exact(const CostModel *cm, const char *key)
{
    Entry probe;
    snprintf(probe.key, sizeof probe.key, "%s", key);
    return bsearch(&probe, cm->e, (size_t)cm->n, sizeof *cm->e, entry_cmp);
}

double cm_measured_s(const CostModel *cm, const OpDesc *d)
{
    assert(cm->sorted);
    if (d->kind == OP_MEMBW && d->u.membw.kind == MEMBW_CROSS) {
        for (int i = 0; i < cm->ncross; i++)
            if (cm->cross_ws[i] == (double)d->u.membw.bytes_per_thread && d->u.membw.threads == cm->threads)
                return cm->cross_s[i];
        return 0;
    }
    char key[OP_KEY_MAX];
    op_key(d, key);
    const Entry *e = find_exact(cm, key);
    return e ? e->median_s : 0;
}

/* Nearest measurement that differs only in one batch-like dimension. */
static const Entry *find_scaled(const CostModel *cm, const OpDesc *d, double *ratio)
{
    OpDesc c = *d;
    int *f[MAX_BATCH_FIELDS];
    int nf = batch_fields(&c, f);
    const Entry *best = NULL;
    double best_dist = INFINITY;
    OpCost want = op_cost(d);
    for (int i = 0; i < nf; i++) {
        char k[OP_KEY_MAX];
        norm_key(d, i, k);
        for (int j = 0; j < cm->n; j++) {
            const Entry *e = &cm->e[j];
            if (e->desc.kind != d->kind || strcmp(e->norm_key[i], k) != 0)
                continue;
            const double r = want.flops > 0 && e->flops > 0 ? want.flops / e->flops : want.bytes / e->bytes;
            const double dist = fabs(log(r));
            if (dist < best_dist) {
                best_dist = dist;
                best = e;
                /* a convolution's time follows its busiest thread's images */
                *ratio = r * op_thread_imbalance(d, cm->threads) / op_thread_imbalance(&e->desc, cm->threads);
            }
        }
    }
    return best;
}

static const Fit *find_fit(const CostModel *cm, int group)
{
    for (int i = 0; i < cm->nfits; i++)
        if (cm->fits[i].group == group)
            return &cm->fits[i];
    return NULL;
}

/* A GEMM priced from a measurement that differs in one dimension: the fitted model's time
 * ratio between the two shapes, anchored on the measurement, instead of the FLOP ratio. All
 * of m, n and k are batch-like, and a GEMM's efficiency depends on each: basic-lstm's
 * recurrent 16x4096x1024 GEMM, scaled linearly from the measured 128x4096x1024, was priced
 * at 0.53 ms where steps took 1.66 ms (it still reads the whole 16 MB weight matrix).
 * Convolutions and element-wise kinds keep the linear ratio: their batch dimension leaves
 * the per-item work alone. Without a fit for the group: `linear`. */
static double gemm_scale_ratio(const CostModel *cm, const OpDesc *d, const Entry *e, double linear)
{
    const Fit *f = find_fit(cm, group_of(d));
    double xd[MAX_FEAT], yd, ye;
    features(d, xd);
    if (!f || !f->ok || !loess_at(cm, f, xd, -1, f->h, &yd) || !loess_at(cm, f, e->x, -1, f->h, &ye))
        return linear;
    const OpCost c = op_cost(d);
    return busiest_work(d, &c, cm->threads) * exp(yd) / (e->work * exp(ye));
}

/* Memory bandwidth (B/s) an op whose data is `bytes` can at best draw: the measured read
 * bandwidth of the smallest working set in the curve that holds the op's share per thread
 * (the memory level it lives in); for an op that writes about as much as it reads (the
 * memory-bound kinds), also what a memory-bound kernel with at least as much
 * data achieved, whichever is faster (the envelope); without either, the best bandwidth
 * measured. An op four times the last-level cache or more streams from DRAM whatever its
 * size, so for it every kernel of that size counts: an update larger than any measured is
 * bounded by the DRAM rate the calibration's large updates reached. A GEMM or convolution
 * streams its large operand in and writes a small result: the read curve bounds it (the
 * envelope's faster mixed streams let a holdout price p3b1's 10-row GEMMs 20-40% low). */
static double bandwidth_for(const CostModel *cm, double bytes, OpKind kind)
{
    double bw = 0;
    if (cm->ncurve > 0) {
        const double per_thread = bytes / (cm->threads > 0 ? cm->threads : 1);
        for (int i = 0; i < cm->ncurve; i++) /* largest bandwidth of working sets at least this big */
            if (cm->curve_ws[i] >= per_thread)
                bw = fmax(bw, cm->curve_bw[i]);
        if (bw <= 0)
            bw = cm->curve_bw[cm->ncurve - 1];
    }
    if (!compute_bound(kind)) {
        const double at_least = cm->llc_bytes > 0 ? fmin(bytes, 4 * cm->llc_bytes) : bytes;
        int lo = 0, hi = cm->nenv; /* env falls in bytes: find the first entry below at_least */
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (cm->env[mid].bytes >= at_least)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0) /* the last entry at least at_least holds the fastest of them all */
            bw = fmax(bw, cm->env[lo - 1].bw);
    }
    return bw > 0 ? bw : cm->peak_bytes_s;
}

void cm_limits(const CostModel *cm, double *peak_flops_s, double *dram_bytes_s)
{
    *peak_flops_s = cm->peak_flops_s;
    double ws = -1, bw = cm->peak_bytes_s;
    for (int i = 0; i < cm->ncurve; i++) /* the largest working set measured: DRAM */
        if (cm->curve_ws[i] > ws)
            ws = cm->curve_ws[i], bw = cm->curve_bw[i];
    *dram_bytes_s = bw;
}

static double roofline(const CostModel *cm, const OpCost *c, OpKind kind)
{
    double roof = 0;
    if (cm->peak_flops_s > 0)
        roof = fmax(roof, c->flops / cm->peak_flops_s);
    const double bw = bandwidth_for(cm, c->bytes, kind);
    if (bw > 0)
        roof = fmax(roof, c->bytes / bw);
    return roof;
}

/* Median of time / roofline over the entries of kind `kind` (or, with kind < 0, of every
 * entry of the same boundness as `like`); 0 if none. */
static double median_roof_ratio(const CostModel *cm, int kind, OpKind like)
{
    double *r = malloc((size_t)(cm->n + 1) * sizeof *r);
    assert(r);
    int n = 0;
    for (int i = 0; i < cm->n; i++) {
        const Entry *e = &cm->e[i];
        if (kind >= 0 ? (int)e->desc.kind != kind : compute_bound(e->desc.kind) != compute_bound(like))
            continue;
        OpCost c = {e->flops, e->bytes};
        const double roof = roofline(cm, &c, e->desc.kind);
        if (roof > 0)
            r[n++] = e->median_s / roof;
    }
    double med = 0;
    if (n > 0) {
        for (int i = 1; i < n; i++) /* insertion sort: a few hundred at most, once per price */
            for (int j = i; j > 0 && r[j] < r[j - 1]; j--) {
                double t = r[j];
                r[j] = r[j - 1], r[j - 1] = t;
            }
        med = n % 2 ? r[n / 2] : 0.5 * (r[n / 2 - 1] + r[n / 2]);
    }
    free(r);
    return med;
}

int cm_price(const CostModel *cm, const OpDesc *d, OpPrice *out, char *err, size_t errlen)
{
    return cm_price_cached(cm, d, 0.0, out, err, errlen);
}

/* The factor that takes a cold price to one with `cached` of the op's data in cache and
 * `remote` of it in the other core's (the apart placement; 0 otherwise): linear between
 * the cold time (1) and the warm one (warm_over_cold), a remote byte at remote_ratio times
 * a cold one. A kernel timed warm only (compute-bound) has no cold time to move from. */
static double cache_factor(const CostModel *cm, double cached, double remote, double warm_over_cold)
{
    const double remote_extra = warm_over_cold < 1.0 ? remote * (cm->remote_ratio - 1.0) : 0.0;
    return 1.0 - cached + cached * warm_over_cold + remote_extra;
}

/* A measurement's warm time over its cold one; 1 for kernels timed warm only. */
static double entry_warm_ratio(const Entry *e) { return e->warm_s > 0 ? e->warm_s / e->median_s : 1.0; }

int cm_price_cached(const CostModel *cm, const OpDesc *d, double cached, OpPrice *out, char *err,
                    size_t errlen)
{
    return cm_price_placed(cm, d, cached, 0.0, out, err, errlen);
}

void cm_set_collectives(CostModel *cm, const CommModel *comm) { cm->collectives = comm; }

/* A sum over the tensor-parallel group: the machine's measured collective of that many
 * ranks (comm_model_allreduce_s: measured where calibrated at that size, else the best
 * algorithm's fit), not a kernel of the compute calibration. */
static int price_collective(const CostModel *cm, const OpDesc *d, OpPrice *out, char *err, size_t errlen)
{
    const AllreduceDesc *a = &d->u.allreduce;
    if (a->ranks <= 1) { /* a copy */
        const OpDesc c = op_copy(d->phase, a->count);
        return cm_price_placed(cm, &c, 0, 0, out, err, errlen);
    }
    if (!cm->collectives) {
        snprintf(err, errlen, "the step sums over %d tensor-parallel ranks: that is priced from this machine's "
                 "collectives (mpirun -np %d dlperf calibrate --only comm)", a->ranks, a->ranks);
        return -1;
    }
    const double bytes = (double)a->count * sizeof(float);
    CommSource src;
    const double t = comm_model_allreduce_s(cm->collectives, bytes, a->ranks, &src);
    double lo, hi;
    comm_model_allreduce_band(cm->collectives, bytes, a->ranks, &lo, &hi);
    *out = (OpPrice){.time_s = t, .lo_s = lo, .hi_s = hi, .source = src == COMM_MEASURED ? PRICE_EXACT : PRICE_FITTED};
    return 0;
}

static int price_kernel(const CostModel *cm, const OpDesc *d, double cached, double remote, OpPrice *out, char *err,
                        size_t errlen);

/* The vocabulary-parallel loss's two sums over the group inside the op (its rows' max, then
 * their sums and label logits: n and 2n values), priced as the group's collectives of
 * those sizes; nothing in a group of one or where no collectives are set. */
static int add_group_sums(const CostModel *cm, const OpDesc *d, OpPrice *out, char *err, size_t errlen)
{
    const XentDesc *x = &d->u.xent;
    if (d->kind != OP_SOFTMAX_XENT || d->phase != PHASE_FWD || x->parts <= 1 || !cm->collectives)
        return 0;
    for (int k = 1; k <= 2; k++) {
        const OpDesc sum = op_allreduce(PHASE_FWD, (size_t)k * (size_t)x->n, x->parts);
        OpPrice p;
        if (price_collective(cm, &sum, &p, err, errlen) != 0)
            return -1;
        out->time_s += p.time_s, out->lo_s += p.lo_s, out->hi_s += p.hi_s;
    }
    return 0;
}

int cm_price_placed(const CostModel *cm, const OpDesc *d, double cached, double remote, OpPrice *out, char *err,
                    size_t errlen)
{
    assert(cm->sorted);
    if (d->kind == OP_ALLREDUCE)
        return price_collective(cm, d, out, err, errlen);
    if (price_kernel(cm, d, cached, remote, out, err, errlen) != 0)
        return -1;
    return add_group_sums(cm, d, out, err, errlen);
}

static int price_kernel(const CostModel *cm, const OpDesc *d, double cached, double remote, OpPrice *out, char *err,
                        size_t errlen)
{
    cached = fmin(fmax(cached, 0.0), 1.0);
    remote = fmin(fmax(remote, 0.0), 1.0 - cached);
    char key[OP_KEY_MAX];
    op_key(d, key);
    if (!cm->fitted_only) {
        const Entry *e = find_exact(cm, key);
        if (e) {
            const double k = cache_factor(cm, cached, remote, entry_warm_ratio(e)) * apart_factor(cm, d, e);
            *out = (OpPrice){.time_s = e->median_s * k, .lo_s = e->lo_s * k, .hi_s = e->hi_s * k,
                             .source = PRICE_EXACT};
            return 0;
        }
        double ratio = 1;
        e = find_scaled(cm, d, &ratio);
        if (e && d->kind == OP_GEMM)
            ratio = gemm_scale_ratio(cm, d, e, ratio);
        if (e) {
            ratio *= cache_factor(cm, cached, remote, entry_warm_ratio(e)) * apart_factor(cm, d, e);
            *out = (OpPrice){.time_s = e->median_s * ratio, .lo_s = e->lo_s * ratio, .hi_s = e->hi_s * ratio,
                             .source = PRICE_SCALED};
            return 0;
        }
    }
    const OpCost c = op_cost(d);
    /* The roofline is a floor for any fitted price: nothing runs faster than the measured
     * FMA peak or the bandwidth of the memory level its data fits in. */
    const double roof = roofline(cm, &c, d->kind);
    const Fit *f = find_fit(cm, group_of(d));
    double x[MAX_FEAT], y;
    features(d, x);
    if (f && f->ok && loess_at(cm, f, x, -1, f->h, &y)) {
        const double k = cached + remote > 0 ? cache_factor(cm, cached, remote, warm_ratio_at(cm, f, x)) : 1.0;
        const double t = fmax(busiest_work(d, &c, cm->threads) * exp(y) * k, roof);
        const double a = apart_factor(cm, d, NULL); /* the roofline is the near placement's floor */
        *out = (OpPrice){.time_s = t * a, .lo_s = fmax(t * exp(-f->rms), roof) * a, .hi_s = t * exp(f->rms) * a,
                         .source = PRICE_FITTED};
        return 0;
    }
    /* a rate for every resource the op uses, or the roofline would ignore one */
    const bool priced =
        (c.flops == 0 || cm->peak_flops_s > 0) && (c.bytes == 0 || bandwidth_for(cm, c.bytes, d->kind) > 0);
    if (roof > 0 && priced) {
        /* no fit for this group: the roofline times what this kind (or any kind of the
         * same boundness) achieved relative to it; a wide band */
        double ratio = median_roof_ratio(cm, (int)d->kind, d->kind);
        if (ratio <= 0)
            ratio = median_roof_ratio(cm, -1, d->kind);
        const double a = apart_factor(cm, d, NULL);
        const double t = roof * (ratio > 1 ? ratio : 1) * a;
        *out = (OpPrice){.time_s = t, .lo_s = roof * a, .hi_s = 2 * t, .source = PRICE_ROOFLINE};
        return 0;
    }
    snprintf(err, errlen, "the calibration has nothing to price %s %s ops (no FMA peak, GEMM rate or bandwidth "
                          "measured); run dlperf calibrate", op_kind_name(d->kind), op_phase_name(d->phase));
    return -1;
}

int cm_fit_summary(const CostModel *cm, CmFitInfo *out, int max)
{
    int n = 0;
    for (int i = 0; i < cm->nfits; i++) {
        const Fit *f = &cm->fits[i];
        if (n < max) {
            const Entry *e = &cm->e[f->idx[0]];
            out[n] = (CmFitInfo){.kind = e->desc.kind, .phase = e->desc.phase, .points = f->n, .fitted = f->ok,
                                 .bandwidth = f->h, .loo_rms = f->ok ? f->rms : 0};
            const OpDesc *d = &e->desc; /* the variant group_of splits on */
            const char *v = d->kind == OP_ACT ? op_act_name(d->u.act.act)
                            : d->kind == OP_POOL2D ? (d->u.pool.kind == POOL_MAX ? "max" : "avg")
                            : d->kind == OP_BATCHNORM ? (d->u.bn.training ? "train" : "infer")
                            : d->kind == OP_GRU_CELL ? op_act_name(d->u.gru.act)
                            : d->kind == OP_MOMENTUM && d->u.update.nesterov ? "nesterov"
                            : d->kind == OP_BINARY ? op_binary_name(d->u.binary.op)
                            : d->kind == OP_SCALAR ? op_binary_name(d->u.scalar.op)
                            : d->kind == OP_CONV2D && d->u.conv.groups > 1 ? "grouped" : "";
            snprintf(out[n].variant, sizeof out[n].variant, "%s", v);
            if (f->n == 0)
                out[n].points = 0;
        }
        n++;
    }
    return n;
}
