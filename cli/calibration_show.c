/* cli/calibration_show.c — `dlperf calibrate --show`: a calibration as people read it.
 * The machine's limits first (FMA peak on one and on all cores; read and triad bandwidth
 * of each memory level), then every family's achieved rates against them, DeepBench's RNN
 * rows composed from their measured time steps, and how well the fitted model built from
 * the calibration predicts its own points left out one at a time. --json gives the same as
 * one object; --csv the limits and the families' rates as one long table, a value a row.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "cli/calibration_show.h"
#include "microbench/mb.h"
#include "predictor/comm_model.h"
#include "predictor/predict.h"

typedef struct {
    MeasurementRow *m;
    int n, cap;
} Rows;

static int collect(const MeasurementRow *m, void *ctx)
{
    Rows *r = ctx;
    if (!m->validated || m->median_s <= 0)
        return 0;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 512;
        MeasurementRow *g = realloc(r->m, (size_t)r->cap * sizeof *g);
        if (!g)
            return 1;
        r->m = g;
    }
    r->m[r->n] = *m;
    r->m[r->n].samples = NULL;
    r->n++;
    return 0;
}

static const MeasurementRow *find_key(const Rows *r, const char *key)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->m[i].key, key) == 0)
            return &r->m[i];
    return NULL;
}

/* Memory levels: which one a per-thread working set of `ws` bytes lives in when `threads`
 * threads run (the shared L3 split between them), or LVL_NONE between the last-level
 * cache's share and DRAM: DRAM's figures come from working sets of at least 4x that cache
 * over all threads (STREAM's rule, the memory list's DRAM point), since the sizes in
 * between are partly cached, by how much depending on where the host put the threads. On
 * the 2-vCPU Zen 4 VM, whose host at times runs the two vCPUs on two dies with a 32 MiB L3
 * each, the 32 MiB-per-thread read was the best "DRAM" read at 103 GB/s, three times the
 * 64 MiB-per-thread point's (one calibration's roofline). */
enum { LVL_NONE = -1, LVL_L1, LVL_L2, LVL_L3, LVL_DRAM, LVL_COUNT };
static const char *const level_names[LVL_COUNT] = {"L1", "L2", "L3", "DRAM"};

static int level_of(size_t ws, int threads, const MbCaches *c)
{
    const int sharers = c->shared_cpus[2] > 1 ? (threads < c->shared_cpus[2] ? threads : c->shared_cpus[2]) : 1;
    if (c->bytes[0] && ws <= c->bytes[0])
        return LVL_L1;
    if (c->bytes[1] && ws <= c->bytes[1])
        return LVL_L2;
    if (c->bytes[2] && ws <= c->bytes[2] / (size_t)sharers)
        return LVL_L3;
    if (c->bytes[2] && ws < 4 * c->bytes[2] / (size_t)threads)
        return LVL_NONE;
    return LVL_DRAM;
}

typedef struct {
    double peak1, peak; /* GFLOP/s: one thread, all threads of the calibration */
    int threads;
    /* best GB/s per level: [kind][level] at all threads, and read at one thread */
    double bw[MEMBW_COUNT][LVL_COUNT], bw1[LVL_COUNT];
    size_t ws[LVL_COUNT]; /* working set (per thread) of the best all-thread read */
    /* the cross-core curve's samples in L3 (cross_spread): GB/s of the slowest of its
     * points' lower quartiles and of the fastest of their upper quartiles, and the largest
     * ratio of one point's quartiles (the same working set read faster or slower) */
    double cross_lo, cross_hi, cross_spread;
    double stream_triad;
    /* the same with the cores apart (2+ threads; 0: no pass apart): the EPYC VM's DRAM-bound
     * kernels ran about twice as fast apart (STREAM 46-50 GB/s against 30-33 near), each vCPU
     * on its own core complex with its own path to memory, so the near limit alone misleads */
    double read_apart[LVL_COUNT], stream_triad_apart;
} Limits;

static void limits_of(const Rows *r, int threads, const MbCaches *c, Limits *L)
{
    memset(L, 0, sizeof *L);
    L->threads = threads;
    for (int i = 0; i < r->n; i++) {
        const MeasurementRow *m = &r->m[i];
        OpDesc d;
        if (!op_key_parse(m->key, &d))
            continue;
        const double gflops = m->flops / m->median_s / 1e9, gbs = m->bytes / m->median_s / 1e9;
        if (d.kind == OP_PEAK_FMA) {
            if (d.u.peak.threads == 1)
                L->peak1 = fmax(L->peak1, gflops);
            if (d.u.peak.threads == threads)
                L->peak = fmax(L->peak, gflops);
        } else if (d.kind == OP_MEMBW) {
            const int lv = level_of(d.u.membw.bytes_per_thread, d.u.membw.threads, c);
            if (lv == LVL_NONE)
                continue;
            if (d.u.membw.threads == threads && gbs > L->bw[d.u.membw.kind][lv]) {
                L->bw[d.u.membw.kind][lv] = gbs;
                if (d.u.membw.kind == MEMBW_READ)
                    L->ws[lv] = d.u.membw.bytes_per_thread;
            }
            if (d.u.membw.threads == threads && d.u.membw.kind == MEMBW_READ && m->apart_s > 0)
                L->read_apart[lv] = fmax(L->read_apart[lv], m->bytes / m->apart_s / 1e9);
            if (d.u.membw.threads == 1 && d.u.membw.kind == MEMBW_READ && threads > 1)
                L->bw1[lv] = fmax(L->bw1[lv], gbs);
        } else if (d.kind == OP_STREAM && d.u.mem.kind == STREAM_TRIAD) {
            L->stream_triad = fmax(L->stream_triad, gbs);
            if (m->apart_s > 0)
                L->stream_triad_apart = fmax(L->stream_triad_apart, m->bytes / m->apart_s / 1e9);
        }
    }
    if (threads == 1)
        memcpy(L->bw1, L->bw[MEMBW_READ], sizeof L->bw1);
}

/* Compute-bound kinds are compared with the FMA peak, the others with DRAM bandwidth. */
static bool compute_kind(const char *kind)
{
    return strcmp(kind, "gemm") == 0 || strcmp(kind, "bmm") == 0 || strcmp(kind, "conv2d") == 0 ||
           strcmp(kind, "spmm") == 0;
}

/* The cache model's retention (cm_retention), as --show reports it: the share of its
 * warmth data written keeps after each of a few waits, per measured working set. */
enum { RETAIN_SETS = 4, RETAIN_WAITS = 4 };
static const double retain_wait_s[RETAIN_WAITS] = {0.5e-3, 1e-3, 4e-3, 16e-3};
typedef struct {
    int n;
    double ws[RETAIN_SETS];                  /* bytes over all threads */
    double kept[RETAIN_SETS][RETAIN_WAITS];  /* 0..1 */
} RetentionInfo;

/* The apart placement's prices (cm_set_apart): the kernels' apart-over-near ratio, over
 * every kernel timed both ways and per kind where 3 or more were. */
typedef struct {
    double all;                      /* the compute-bound kernels'; 0: none timed both ways */
    double kind[OP_KIND_COUNT];      /* 0: too few of the kind */
    double remote;                   /* a byte from the other core's cache over one from DRAM */
    int samples_probed, samples_apart; /* samples by the probes around each (0: not probed) */
} ApartInfo;

static void apart_of(const CostModel *cm, ApartInfo *ai)
{
    ai->all = cm_apart_ratio(cm, -1);
    ai->remote = cm_remote_ratio(cm);
    for (int k = 0; k < OP_KIND_COUNT; k++)
        ai->kind[k] = cm_apart_ratio(cm, k);
}

static void retention_of(const CostModel *cm, RetentionInfo *ri)
{
    const int sets = cm_retention_sets(cm, ri->ws, RETAIN_SETS);
    ri->n = sets < RETAIN_SETS ? sets : RETAIN_SETS;
    for (int i = 0; i < ri->n; i++)
        for (int k = 0; k < RETAIN_WAITS; k++)
            ri->kept[i][k] = cm_retention(cm, ri->ws[i], retain_wait_s[k]);
}

typedef struct {
    char family[24], kind[24], phase[16];
    int n;
    double *rate; /* GFLOP/s (compute kinds) or GB/s */
} Group;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- the passes of a calibration in rounds ----
 * A shared machine has slow stretches of minutes: one pass of a zoo calibration here ran
 * the convolutions 1.4-2x slower than the next. Every pass measured every kernel, so each
 * kernel's median within a pass over its price (the median of the passes' medians), taken
 * over the kernels, is the machine's relative time in that pass. */
enum { MAX_PASSES = 10 };
#define PASS_SPREAD_NOTE 1.10 /* slowest over fastest pass beyond which the text says so */

typedef struct {
    int64_t id;
    int round;
    double t;
} Sample;

typedef struct {
    Sample *s;
    int n, cap;
} Samples;

static int collect_sample(int64_t id, int round, double t, void *ctx)
{
    Samples *S = ctx;
    if (S->n == S->cap) {
        S->cap = S->cap ? 2 * S->cap : 4096;
        Sample *g = realloc(S->s, (size_t)S->cap * sizeof *g);
        if (!g)
            return 1;
        S->s = g;
    }
    S->s[S->n++] = (Sample){id, round, t};
    return 0;
}

/* Walks the samples (by measurement id, as db_sample_foreach gives them) and the rows (in id
 * order) together: the next kernel of r with samples, its row in *m and its samples in *s.
 * Returns how many samples, 0 at the end. */
typedef struct {
    int a, j; /* the next sample, the row reached */
} SampleWalk;

static int walk_next(const Rows *r, const Samples *S, SampleWalk *w, const MeasurementRow **m, const Sample **s)
{
    while (w->a < S->n) {
        const int a = w->a;
        int b = a;
        while (b < S->n && S->s[b].id == S->s[a].id)
            b++;
        w->a = b;
        while (w->j < r->n && r->m[w->j].id < S->s[a].id)
            w->j++;
        if (w->j < r->n && r->m[w->j].id == S->s[a].id) {
            *m = &r->m[w->j];
            *s = &S->s[a];
            return b - a;
        }
    }
    return 0;
}

typedef struct {
    int passes;               /* 0: a calibration in one pass, nothing to say */
    int kernels;              /* kernels with samples in every pass */
    double rel[MAX_PASSES];   /* median over the kernels of (pass median / price) */
} PassSpeeds;

/* r: the calibration's measurements in id order (collect); S: its samples (collect_sample).
 * -1 with err on failure. */
static int pass_speeds(const CalibrationRow *cal, const Rows *r, const Samples *S, PassSpeeds *ps, char *err,
                       size_t errlen)
{
    memset(ps, 0, sizeof *ps);
    const int passes = cal->rounds < MAX_PASSES ? cal->rounds : MAX_PASSES;
    if (passes < 2 || r->n == 0)
        return 0;
    double *ratio[MAX_PASSES] = {0}, *buf = NULL;
    int rc = 0;
    if (S->n > 0) {
        buf = malloc((size_t)S->n * sizeof *buf);
        for (int k = 0; k < passes; k++)
            if (!(ratio[k] = malloc((size_t)r->n * sizeof *ratio[k])))
                rc = -1;
        if (!buf || rc != 0) {
            rc = -1;
            snprintf(err, errlen, "out of memory reading the samples of calibration %lld", (long long)cal->id);
        }
    }
    SampleWalk w = {0};
    const MeasurementRow *m;
    const Sample *smp;
    for (int ns; rc == 0 && (ns = walk_next(r, S, &w, &m, &smp)) > 0;) {
        double med[MAX_PASSES];
        bool every = true;
        for (int k = 0; k < passes && every; k++) {
            int n = 0;
            for (int q = 0; q < ns; q++)
                if (smp[q].round == k)
                    buf[n++] = smp[q].t;
            every = n > 0;
            if (every)
                med[k] = median_of(buf, n);
        }
        for (int k = 0; k < passes && every; k++)
            ratio[k][ps->kernels] = med[k] / m->median_s;
        ps->kernels += every;
    }
    if (rc == 0 && ps->kernels > 0) {
        ps->passes = passes;
        for (int k = 0; k < passes; k++)
            ps->rel[k] = median_of(ratio[k], ps->kernels);
    }
    for (int k = 0; k < passes; k++)
        free(ratio[k]);
    free(buf);
    return rc;
}

static double pass_spread(const PassSpeeds *ps)
{
    double lo = ps->rel[0], hi = ps->rel[0];
    for (int k = 1; k < ps->passes; k++)
        lo = fmin(lo, ps->rel[k]), hi = fmax(hi, ps->rel[k]);
    return lo > 0 ? hi / lo : 0;
}

/* ---- the cores' distance ----
 * The cross-core curve reads data another core has just written. On a VM whose host moves
 * the vCPUs between cache domains its samples are bimodal: on the 2-vCPU AMD EPYC VM a
 * standalone probe read 8 MB from the other core at 29-45 GB/s or 8-12 GB/s, and a cache
 * line's round trip took 62-104 ns or 394-540 ns, flipping every few seconds. So one
 * working set's samples spread: in a zoo calibration there, the L3 points' upper over
 * lower quartile was 1.4-2.8x (the handoff curve's, one core reading its own writes,
 * 1.1-1.6x). Quartiles, not the extremes: one preempted sample is no change of placement. */
#define CROSS_SPREAD_NOTE 2.0 /* a point's quartile ratio beyond which the text says so */

static int cross_spread(const CalibrationRow *cal, const Rows *r, const Samples *S, const MbCaches *c, Limits *L,
                        char *err, size_t errlen)
{
    L->cross_lo = L->cross_hi = L->cross_spread = 0;
    double *t = malloc((size_t)(S->n > 0 ? S->n : 1) * sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory reading the samples of calibration %lld", (long long)cal->id);
        return -1;
    }
    SampleWalk w = {0};
    const MeasurementRow *m;
    const Sample *smp;
    for (int n; (n = walk_next(r, S, &w, &m, &smp)) > 0;) {
        OpDesc d;
        if (!op_key_parse(m->key, &d) || d.kind != OP_MEMBW || d.u.membw.kind != MEMBW_CROSS ||
            d.u.membw.threads != L->threads || level_of(d.u.membw.bytes_per_thread, d.u.membw.threads, c) != LVL_L3)
            continue;
        for (int q = 0; q < n; q++)
            t[q] = smp[q].t;
        qsort(t, (size_t)n, sizeof *t, cmp_double);
        const double slow = m->bytes / gsl_stats_quantile_from_sorted_data(t, 1, (size_t)n, 0.75) / 1e9;
        const double fast = m->bytes / gsl_stats_quantile_from_sorted_data(t, 1, (size_t)n, 0.25) / 1e9;
        L->cross_lo = L->cross_lo > 0 ? fmin(L->cross_lo, slow) : slow;
        L->cross_hi = fmax(L->cross_hi, fast);
        L->cross_spread = fmax(L->cross_spread, fast / slow);
    }
    free(t);
    return 0;
}

/* Groups (family, kind, phase) in first-seen order; the limits families are shown above. */
static Group *groups_of(const Rows *r, int *ng)
{
    Group *g = calloc((size_t)r->n + 1, sizeof *g);
    if (!g)
        return NULL;
    int n = 0;
    for (int i = 0; i < r->n; i++) {
        const MeasurementRow *m = &r->m[i];
        if (strcmp(m->family, "peak") == 0 || strcmp(m->family, "memory") == 0)
            continue;
        int j = 0;
        while (j < n && !(strcmp(g[j].family, m->family) == 0 && strcmp(g[j].kind, m->kind) == 0 &&
                          strcmp(g[j].phase, m->phase) == 0))
            j++;
        if (j == n) {
            snprintf(g[n].family, sizeof g[n].family, "%s", m->family);
            snprintf(g[n].kind, sizeof g[n].kind, "%s", m->kind);
            snprintf(g[n].phase, sizeof g[n].phase, "%s", m->phase);
            g[n].rate = malloc((size_t)r->n * sizeof(double));
            if (!g[n].rate) {
                for (int k = 0; k < n; k++)
                    free(g[k].rate);
                free(g);
                return NULL;
            }
            n++;
        }
        g[j].rate[g[j].n++] = compute_kind(m->kind) ? m->flops / m->median_s / 1e9 : m->bytes / m->median_s / 1e9;
    }
    *ng = n;
    return g;
}

/* A DeepBench RNN row composed from its measured step ops: T x (sum of the step's ops). */
typedef struct {
    int row;
    const MbRnnShape *s;
    double fwd_s, bwd_s; /* whole sequence */
} RnnRow;

static bool rnn_row(const Rows *r, int i, RnnRow *out)
{
    const MbRnnShape *s = &mb_deepbench_rnn_train[i];
    double t[2] = {0, 0};
    for (int b = 0; b <= 1; b++) {
        OpDesc ops[8];
        const int k = mb_rnn_step_ops(s, b == 1, ops, 8);
        for (int j = 0; j < k; j++) {
            char key[OP_KEY_MAX];
            op_key(&ops[j], key);
            const MeasurementRow *m = find_key(r, key);
            if (!m)
                return false;
            t[b] += m->median_s;
        }
    }
    *out = (RnnRow){.row = i + 1, .s = s, .fwd_s = s->steps * t[0], .bwd_s = s->steps * t[1]};
    return true;
}

static const char *const cell_names[] = {"vanilla", "lstm", "gru"};

enum { MAX_FITS = 128 };

/* Kernels with passes timed while the host had the threads' cores at another placement
 * than the calibration's (calibrate.c): apart, or both threads on one core. */
typedef struct {
    int kernels, passes; /* kernels with a far pass; far passes in all */
    int shared_kernels, shared; /* the same for passes on one core */
    int all_off;         /* kernels whose every pass was at another placement */
    int all;             /* passes in all */
    int caught_up, caught_up_passes; /* kernels timed again in the near catch-up, their passes */
} OffPasses;

/* A kernel's passes: the scheduled ones, and its near catch-ups (microbench/calibrate.c). */
static OffPasses off_passes(const CalibrationRow *cal, const Rows *r)
{
    OffPasses f = {0};
    const int rounds = cal->rounds > 1 ? cal->rounds : 1;
    for (int i = 0; i < r->n; i++) {
        const MeasurementRow *m = &r->m[i];
        const int passes = m->pass_placement[0] ? (int)strlen(m->pass_placement) : rounds;
        f.all += passes;
        f.caught_up += passes > rounds;
        f.caught_up_passes += passes > rounds ? passes - rounds : 0;
        f.kernels += m->far_passes > 0;
        f.passes += m->far_passes;
        f.shared_kernels += m->shared_passes > 0;
        f.shared += m->shared_passes;
        f.all_off += m->far_passes + m->shared_passes >= passes;
    }
    return f;
}

/* The shared-write curve (membw shared) against the cross curve at the same working sets:
 * the medians over the working sets of each placement it was timed at (a kernel whose
 * passes were all apart has no near time). */
static void shared_write_text(const Rows *r)
{
    enum { MAXW = 64 };
    double v[2][2][MAXW]; /* [shared, cross][near, apart] GB/s */
    int n[2][2] = {{0}};
    for (int i = 0; i < r->n; i++) {
        OpDesc d;
        const MeasurementRow *m = &r->m[i];
        if (!op_key_parse(m->key, &d) || d.kind != OP_MEMBW ||
            (d.u.membw.kind != MEMBW_SHARED && d.u.membw.kind != MEMBW_CROSS))
            continue;
        const int c = d.u.membw.kind == MEMBW_CROSS;
        const bool all_apart = m->apart_s > 0 && m->apart_s == m->median_s;
        if (!all_apart && n[c][0] < MAXW)
            v[c][0][n[c][0]++] = m->bytes / m->median_s / 1e9;
        if (m->apart_s > 0 && n[c][1] < MAXW)
            v[c][1][n[c][1]++] = m->bytes / m->apart_s / 1e9;
    }
    if (n[0][0] + n[0][1] == 0)
        return;
    double med[2][2] = {{0}};
    for (int c = 0; c < 2; c++)
        for (int p = 0; p < 2; p++)
            if (n[c][p] > 0) {
                gsl_sort(v[c][p], 1, (size_t)n[c][p]);
                med[c][p] = gsl_stats_median_from_sorted_data(v[c][p], 1, (size_t)n[c][p]);
            }
    printf("  a write over data both cores' caches hold (the shared-write curve; medians over its working\n  sets):");
    static const char *const where[2] = {"near", "apart"};
    for (int p = 0; p < 2; p++)
        if (n[0][p] > 0) {
            printf(" %.1f GB/s %s", med[0][p], where[p]);
            if (med[1][p] > 0)
                printf(" (x%.1f a cross-core read's time)", med[1][p] / med[0][p]);
            printf(p == 0 && n[0][1] > 0 ? "," : "");
        }
    printf("\n  (priced: an op writing warm bytes an op of the other split left, as an update over weights\n"
           "  both cores' GEMMs read, pays it on half of them, near and apart)\n");
}

static void print_placement(const CalibrationRow *cal, const Rows *r, const ApartInfo *ai)
{
    if (cal->sw.threads < 2)
        return;
    const OffPasses f = off_passes(cal, r);
    if (f.kernels == 0 && f.shared_kernels == 0) {
        printf("cores: every kernel's passes ran with the threads' cores as near as the fastest round trip seen,\n"
               "  a core each\n");
        return;
    }
    printf("cores: %d of %d passes (%d of %d kernels) ran with the threads' cores apart (a cache line's round\n"
           "  trip x%.1f or more the fastest seen: the host moved the vCPUs), %d (%d kernels) with both threads\n"
           "  on one core (FMA on two threads x%.1f or more its time on one); each kernel is priced from its\n"
           "  passes near and a core each, but %d kernels that had none are priced from all their passes (those\n"
           "  apart taken to near by the apart/near ratio of the kernels of their kind nearest in size)\n",
           f.passes, f.all, f.kernels, r->n, MB_FAR_RTT, f.shared, f.shared_kernels, MB_SHARED_CORE, f.all_off);
    if (f.caught_up > 0)
        printf("  near catch-up: %d kernels left short of near passes by the scheduled ones, or with an even\n"
               "  count of them split, were timed again while the cores were near (%d passes, counted above)\n",
               f.caught_up, f.caught_up_passes);
    if (ai->samples_probed > 0)
        printf("  probed around every sample: %d of %d samples apart; a pass counts apart when all its samples were,\n"
               "  and in the passes a core each a kernel's near price comes from its near samples, its apart price\n"
               "  from its apart ones\n",
               ai->samples_apart, ai->samples_probed);
    if (ai->all > 0) {
        printf("  apart, the kernels timed both ways took x%.2f their near time (compute-bound, median); by kind:",
               ai->all);
        int shown = 0;
        for (int k = 0; k < OP_KIND_COUNT; k++) {
            if (ai->kind[k] <= 0)
                continue;
            const char *sep = shown == 0 ? "\n   " : shown % 6 ? ", " : ",\n   "; /* six to a line */
            printf("%s%s x%.2f", sep, op_kind_name((OpKind)k), ai->kind[k]);
            shown++;
        }
        printf("\n  apart, a byte read from the other core's cache cost x%.2f one from DRAM. The apart placement's\n"
               "  price: compute-bound ops by their kernels' ratios; memory-bound ones by the cache model, half of\n"
               "  the bytes another split of op left them read from the other core (their kernels alone, each\n"
               "  thread on its own slice, are not that)\n", ai->remote);
    }
    shared_write_text(r);
}

/* Where the host put the threads' cores, in one line (--verbose: print_placement). */
static void placement_line(const CalibrationRow *cal, const Rows *r)
{
    if (cal->sw.threads < 2)
        return;
    const OffPasses f = off_passes(cal, r);
    if (f.kernels == 0 && f.shared_kernels == 0)
        printf("cores: every pass ran with the threads' cores near, a core each (--verbose: how it is probed)\n");
    else
        printf("cores: %d of %d passes ran with the threads' cores apart, %d with both on one core (the host "
               "moved the vCPUs);\n  --verbose: how each kernel is priced from them\n", f.passes, f.all, f.shared);
}

static void print_text(const CalibrationRow *cal, const Rows *r, const PassSpeeds *ps, const Limits *L,
                       const MbCaches *c, const Group *g, int ng, const CmFitInfo *fits, int nfits,
                       const RetentionInfo *ri, const ApartInfo *ai, bool verbose)
{
    char by_ranks[48] = "";
    if (cal->sw.ranks > 1)
        snprintf(by_ranks, sizeof by_ranks, " per rank, %d ranks measuring at once", cal->sw.ranks);
    printf("calibration %lld (%s%s, %s .. %s, %s), %d threads%s, OpenBLAS %s (%s), %d kernels\n", (long long)cal->id,
           cal->mode, cal->rounds > 1 ? ", in rounds" : "", cal->started_at, cal->finished_at, cal->status,
           cal->sw.threads, by_ranks, cal->sw.blas_core, cal->sw.blas_choice, r->n);
    if (cal->sw.threading[0])
        printf("threading: %s\n", cal->sw.threading);
    if (ps->passes > 1) {
        printf("passes: each kernel's median in a pass over its price, median of %d kernels:", ps->kernels);
        for (int k = 0; k < ps->passes; k++)
            printf(" %s%.2f", k ? "/ " : "", ps->rel[k]);
        printf("\n");
        const double spread = pass_spread(ps);
        if (spread > PASS_SPREAD_NOTE)
            printf("  the machine ran at different speeds in different passes (slowest %.0f%% over fastest): "
                   "the prices pool them; a\n  run in a slow or fast stretch can fall outside the predicted "
                   "bands. Recalibrate when the machine is quiet for tighter prices\n", 100 * (spread - 1));
    }
    if (!verbose)
        placement_line(cal, r);
    printf("\nlimits\n");
    if (L->peak1 > 0)
        printf("  FMA peak       %8.1f GFLOP/s on 1 core, %8.1f GFLOP/s on %d threads\n", L->peak1, L->peak, L->threads);
    else
        printf("  FMA peak       not measured (calibrate --only peak)\n");
    printf("  %-6s %9s %14s %14s %14s %14s %14s\n", "memory", "cache", "read GB/s", "triad GB/s", "1-core read",
           "handoff GB/s", "cross-core");
    for (int lv = 0; lv < LVL_COUNT; lv++) {
        if (L->bw[MEMBW_READ][lv] <= 0 && L->bw1[lv] <= 0)
            continue;
        char cb[32] = "-";
        if (lv < 3 && c->bytes[lv])
            fmt_bytes((double)c->bytes[lv], cb, sizeof cb);
        char hb[32] = "-", xb[32] = "-"; /* the handoff curves start above L1 */
        if (L->bw[MEMBW_HANDOFF][lv] > 0)
            snprintf(hb, sizeof hb, "%.1f", L->bw[MEMBW_HANDOFF][lv]);
        if (L->bw[MEMBW_CROSS][lv] > 0)
            snprintf(xb, sizeof xb, "%.1f", L->bw[MEMBW_CROSS][lv]);
        printf("  %-6s %9s %14.1f %14.1f %14.1f %14s %14s\n", level_names[lv], cb, L->bw[MEMBW_READ][lv],
               L->bw[MEMBW_TRIAD][lv], L->bw1[lv], hb, xb);
    }
    if (verbose && L->bw[MEMBW_HANDOFF][LVL_L3] > 0)
        printf("  handoff: data every thread has just written, read back once, in steady state (what an "
               "op finds after its producer in every step; the cache model's reuse curve)\n");
    if (verbose && L->cross_hi > 0) {
        printf("  cross-core: the same, each thread reading what the next one wrote (L3 samples' quartiles "
               "%.1f to %.1f GB/s;\n  one working set's up to %.1fx apart)\n", L->cross_lo, L->cross_hi,
               L->cross_spread);
        if (L->cross_spread > CROSS_SPREAD_NOTE)
            printf("  the cores' distance changed during the calibration (on a VM: the host moving the vCPUs "
                   "between cache domains):\n  ops that pass data between cores and shared-memory MPI "
                   "collectives run faster or slower with it\n");
    }
    if (verbose && ri->n > 0) {
        printf("  retention: the share of its warmth data just written keeps after a wait with the cores busy in\n"
               "  registers (on a shared host, other tenants evict it; the cache model applies it to the time\n"
               "  between an op's uses of its data)\n");
        for (int i = 0; i < ri->n; i++) {
            char b[32];
            printf("    %10s:", fmt_bytes(ri->ws[i], b, sizeof b));
            for (int k = 0; k < RETAIN_WAITS; k++)
                printf("%s %3.0f%% after %g ms", k ? "," : "", 100 * ri->kept[i][k], 1e3 * retain_wait_s[k]);
            printf("\n");
        }
    }
    if (L->stream_triad > 0)
        printf("  STREAM triad (arrays 4x the last-level cache) %.1f GB/s\n", L->stream_triad);
    if (verbose && (L->read_apart[LVL_DRAM] > 0 || L->stream_triad_apart > 0)) {
        printf("  with the cores apart (their passes apart):");
        if (L->read_apart[LVL_DRAM] > 0)
            printf(" DRAM read %.1f GB/s (x%.2f near's)%s", L->read_apart[LVL_DRAM],
                   L->bw[MEMBW_READ][LVL_DRAM] > 0 ? L->read_apart[LVL_DRAM] / L->bw[MEMBW_READ][LVL_DRAM] : 0,
                   L->stream_triad_apart > 0 ? "," : "");
        if (L->stream_triad_apart > 0)
            printf(" STREAM triad %.1f GB/s (x%.2f near's)", L->stream_triad_apart,
                   L->stream_triad > 0 ? L->stream_triad_apart / L->stream_triad : 0);
        printf("\n  (on a VM whose host moves the vCPUs, each core complex apart may have its own path to memory)\n");
    }
    const double dram = L->bw[MEMBW_READ][LVL_DRAM] > 0 ? L->bw[MEMBW_READ][LVL_DRAM] : L->stream_triad;
    printf("\n%-15s %-13s %-11s %5s %27s %9s\n", "family", "kind", "phase", "n", "rate min / median / max",
           "of limit");
    for (int i = 0; i < ng; i++) {
        double lo = INFINITY, hi = 0;
        for (int k = 0; k < g[i].n; k++) {
            lo = fmin(lo, g[i].rate[k]);
            hi = fmax(hi, g[i].rate[k]);
        }
        const double med = median_of(g[i].rate, g[i].n);
        const bool comp = compute_kind(g[i].kind);
        const double limit = comp ? L->peak : dram;
        char pct[16] = "-";
        if (limit > 0)
            snprintf(pct, sizeof pct, "%.0f%%", 100 * med / limit);
        printf("%-15s %-13s %-11s %5d %8.1f / %7.1f / %7.1f %-6s %5s\n", g[i].family, g[i].kind, g[i].phase, g[i].n,
               lo, med, hi, comp ? "GFLOP/s" : "GB/s", pct);
    }
    printf("# of limit: median rate / FMA peak on %d threads (GEMM, BMM, convolution, sparse GEMM) or / DRAM read\n"
           "# bandwidth (memory-bound kinds; in-cache sizes may exceed 100%%)\n", L->threads);
    /* DeepBench RNN rows composed from their steps */
    int nr = 0;
    double rate[3][2][64];
    int nc[3] = {0, 0, 0};
    for (int i = 0; i < mb_deepbench_rnn_train_count; i++) {
        RnnRow rr;
        if (!rnn_row(r, i, &rr))
            continue;
        nr++;
        const int cell = rr.s->cell;
        if (nc[cell] < 64) {
            rate[cell][0][nc[cell]] = rr.s->gflop / rr.fwd_s;
            rate[cell][1][nc[cell]] = 2 * rr.s->gflop / rr.bwd_s; /* backward: data + weights, 2x fwd */
            nc[cell]++;
        }
    }
    if (nr > 0) {
        printf("\nDeepBench RNN rows composed from their measured time steps (%d rows; recurrent part, "
               "DeepBench's FLOPs)\n", nr);
        for (int cell = 0; cell < 3; cell++)
            if (nc[cell])
                printf("  %-8s %3d rows  forward median %7.1f GFLOP/s, backward median %7.1f GFLOP/s\n",
                       cell_names[cell], nc[cell], median_of(rate[cell][0], nc[cell]),
                       median_of(rate[cell][1], nc[cell]));
        printf("  (every row, sequence times included: --json)\n");
    }
    printf("\nfitted model (local regression per kind and phase over the calibration's points; its error on\n"
           "each point left out in turn, 68th percentile: how far it carries to shapes it did not see)\n");
    printf("  %-13s %-11s %-8s %6s %10s %10s\n", "kind", "phase", "variant", "points", "bandwidth", "LOO error");
    for (int i = 0; i < nfits && i < MAX_FITS; i++) {
        if (fits[i].fitted)
            printf("  %-13s %-11s %-8s %6d %10.2f %9.1f%%\n", op_kind_name(fits[i].kind), op_phase_name(fits[i].phase),
                   fits[i].variant, fits[i].points, fits[i].bandwidth, 100 * (exp(fits[i].loo_rms) - 1));
        else
            printf("  %-13s %-11s %-8s %6d %10s %10s\n", op_kind_name(fits[i].kind), op_phase_name(fits[i].phase),
                   fits[i].variant, fits[i].points, "-", "roofline");
    }
    if (verbose) {
        printf("\n");
        print_placement(cal, r, ai);
    } else {
        printf("\n(--verbose: where the host put the cores, the memory levels' definitions, retention; --json: all)\n");
    }
}

static cJSON *json_doc(const CalibrationRow *cal, const Rows *r, const PassSpeeds *ps, const Limits *L,
                       const MbCaches *c, const Group *g, int ng, const CmFitInfo *fits, int nfits,
                       const RetentionInfo *ri, const ApartInfo *ai)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "calibration_id", (double)cal->id);
    cJSON_AddStringToObject(o, "mode", cal->mode);
    cJSON_AddNumberToObject(o, "rounds", cal->rounds > 1 ? cal->rounds : 1);
    cJSON_AddStringToObject(o, "status", cal->status);
    cJSON_AddStringToObject(o, "started_at", cal->started_at);
    cJSON_AddStringToObject(o, "finished_at", cal->finished_at);
    cJSON_AddNumberToObject(o, "threads", cal->sw.threads);
    cJSON_AddNumberToObject(o, "ranks", cal->sw.ranks > 1 ? cal->sw.ranks : 1);
    cJSON_AddStringToObject(o, "blas_core", cal->sw.blas_core);
    cJSON_AddStringToObject(o, "blas_choice", cal->sw.blas_choice);
    cJSON_AddStringToObject(o, "threading", cal->sw.threading);
    cJSON_AddNumberToObject(o, "kernels", r->n);
    if (ps->passes > 1) { /* calibrations in rounds: the machine's relative time in each pass */
        cJSON *pa = cJSON_AddObjectToObject(o, "passes");
        cJSON_AddNumberToObject(pa, "kernels", ps->kernels);
        cJSON_AddItemToObject(pa, "relative_time", cJSON_CreateDoubleArray(ps->rel, ps->passes));
        cJSON_AddNumberToObject(pa, "slowest_over_fastest", pass_spread(ps));
    }
    if (cal->sw.threads > 1) { /* passes at another placement, left out of the prices */
        const OffPasses f = off_passes(cal, r);
        cJSON *fp = cJSON_AddObjectToObject(o, "cores_apart");
        cJSON_AddNumberToObject(fp, "round_trip_ratio", MB_FAR_RTT);
        cJSON_AddNumberToObject(fp, "kernels", f.kernels);
        cJSON_AddNumberToObject(fp, "passes", f.passes);
        cJSON_AddNumberToObject(fp, "passes_in_all", f.all);
        cJSON_AddNumberToObject(fp, "samples_probed", ai->samples_probed); /* 0: probed per pass only */
        cJSON_AddNumberToObject(fp, "samples", ai->samples_apart); /* of samples_probed */
        cJSON *sc = cJSON_AddObjectToObject(o, "cores_shared");
        cJSON_AddNumberToObject(sc, "fma_ratio", MB_SHARED_CORE);
        cJSON_AddNumberToObject(sc, "kernels", f.shared_kernels);
        cJSON_AddNumberToObject(sc, "passes", f.shared);
        /* kernels with no pass near and a core each, priced from all their passes */
        cJSON_AddNumberToObject(o, "kernels_every_pass_off", f.all_off);
        cJSON *cu = cJSON_AddObjectToObject(o, "near_catch_up"); /* passes after the scheduled ones */
        cJSON_AddNumberToObject(cu, "kernels", f.caught_up);
        cJSON_AddNumberToObject(cu, "passes", f.caught_up_passes);
        /* the kernels timed both ways: apart over near, the median (null: none) */
        if (ai->all > 0) {
            cJSON_AddNumberToObject(fp, "apart_over_near", ai->all);
            cJSON_AddNumberToObject(fp, "remote_over_dram", ai->remote);
            cJSON *by = cJSON_AddObjectToObject(fp, "apart_over_near_by_kind");
            for (int k = 0; k < OP_KIND_COUNT; k++)
                if (ai->kind[k] > 0)
                    cJSON_AddNumberToObject(by, op_kind_name((OpKind)k), ai->kind[k]);
        } else {
            cJSON_AddNullToObject(fp, "apart_over_near");
        }
    }
    cJSON *lim = cJSON_AddObjectToObject(o, "limits");
    cJSON_AddNumberToObject(lim, "fma_peak_1core_gflops", L->peak1);
    cJSON_AddNumberToObject(lim, "fma_peak_gflops", L->peak);
    cJSON_AddNumberToObject(lim, "stream_triad_gbs", L->stream_triad);
    if (L->stream_triad_apart > 0)
        cJSON_AddNumberToObject(lim, "stream_triad_apart_gbs", L->stream_triad_apart);
    cJSON_AddNumberToObject(lim, "cross_core_l3_quartile_lo_gbs", L->cross_lo);
    cJSON_AddNumberToObject(lim, "cross_core_l3_quartile_hi_gbs", L->cross_hi);
    cJSON_AddNumberToObject(lim, "cross_core_l3_quartile_ratio", L->cross_spread);
    cJSON *levels = cJSON_AddArrayToObject(lim, "memory");
    for (int lv = 0; lv < LVL_COUNT; lv++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "level", level_names[lv]);
        cJSON_AddNumberToObject(e, "cache_bytes", lv < 3 ? (double)c->bytes[lv] : 0);
        cJSON_AddNumberToObject(e, "working_set_bytes_per_thread", (double)L->ws[lv]);
        cJSON_AddNumberToObject(e, "read_gbs", L->bw[MEMBW_READ][lv]);
        if (L->read_apart[lv] > 0)
            cJSON_AddNumberToObject(e, "read_apart_gbs", L->read_apart[lv]);
        cJSON_AddNumberToObject(e, "triad_gbs", L->bw[MEMBW_TRIAD][lv]);
        cJSON_AddNumberToObject(e, "read_1core_gbs", L->bw1[lv]);
        cJSON_AddNumberToObject(e, "handoff_gbs", L->bw[MEMBW_HANDOFF][lv]);
        cJSON_AddNumberToObject(e, "cross_core_gbs", L->bw[MEMBW_CROSS][lv]);
        cJSON_AddItemToArray(levels, e);
    }
    static const struct {
        const char *name;
        MembwKind kind;
    } curves[] = {{"read_curve", MEMBW_READ},
                  {"handoff_curve", MEMBW_HANDOFF},
                  {"cross_core_curve", MEMBW_CROSS},
                  {"shared_write_curve", MEMBW_SHARED}};
    for (size_t k = 0; k < sizeof curves / sizeof curves[0]; k++) {
        cJSON *curve = cJSON_AddArrayToObject(lim, curves[k].name);
        for (int i = 0; i < r->n; i++) {
            OpDesc d;
            if (!op_key_parse(r->m[i].key, &d) || d.kind != OP_MEMBW || d.u.membw.kind != curves[k].kind)
                continue;
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "threads", d.u.membw.threads);
            cJSON_AddNumberToObject(e, "working_set_bytes_per_thread", (double)d.u.membw.bytes_per_thread);
            cJSON_AddNumberToObject(e, "gbs", r->m[i].bytes / r->m[i].median_s / 1e9);
            if (r->m[i].apart_s > 0) /* its passes with the cores apart */
                cJSON_AddNumberToObject(e, "apart_gbs", r->m[i].bytes / r->m[i].apart_s / 1e9);
            cJSON_AddItemToArray(curve, e);
        }
    }
    cJSON *ret = cJSON_AddArrayToObject(lim, "retention");
    for (int i = 0; i < ri->n; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "working_set_bytes", ri->ws[i]);
        cJSON *kept = cJSON_AddArrayToObject(e, "kept");
        for (int k = 0; k < RETAIN_WAITS; k++) {
            cJSON *w = cJSON_CreateObject();
            cJSON_AddNumberToObject(w, "wait_s", retain_wait_s[k]);
            cJSON_AddNumberToObject(w, "share", ri->kept[i][k]);
            cJSON_AddItemToArray(kept, w);
        }
        cJSON_AddItemToArray(ret, e);
    }
    cJSON *fams = cJSON_AddArrayToObject(o, "families");
    for (int i = 0; i < ng; i++) {
        cJSON *e = cJSON_CreateObject();
        const bool comp = compute_kind(g[i].kind);
        cJSON_AddStringToObject(e, "family", g[i].family);
        cJSON_AddStringToObject(e, "kind", g[i].kind);
        cJSON_AddStringToObject(e, "phase", g[i].phase);
        cJSON_AddNumberToObject(e, "kernels", g[i].n);
        cJSON_AddStringToObject(e, "unit", comp ? "GFLOP/s" : "GB/s");
        const double med = median_of(g[i].rate, g[i].n);
        cJSON_AddNumberToObject(e, "min", g[i].rate[0]);
        cJSON_AddNumberToObject(e, "median", med);
        cJSON_AddNumberToObject(e, "max", g[i].rate[g[i].n - 1]);
        const double dram = L->bw[MEMBW_READ][LVL_DRAM] > 0 ? L->bw[MEMBW_READ][LVL_DRAM] : L->stream_triad;
        const double limit = comp ? L->peak : dram;
        if (limit > 0)
            cJSON_AddNumberToObject(e, "median_fraction_of_limit", med / limit);
        cJSON_AddItemToArray(fams, e);
    }
    cJSON *rnn = cJSON_AddArrayToObject(o, "deepbench_rnn");
    for (int i = 0; i < mb_deepbench_rnn_train_count; i++) {
        RnnRow rr;
        if (!rnn_row(r, i, &rr))
            continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "row", rr.row);
        cJSON_AddStringToObject(e, "cell", cell_names[rr.s->cell]);
        cJSON_AddNumberToObject(e, "hidden", rr.s->hidden);
        cJSON_AddNumberToObject(e, "batch", rr.s->batch);
        cJSON_AddNumberToObject(e, "steps", rr.s->steps);
        cJSON_AddNumberToObject(e, "fwd_s", rr.fwd_s);
        cJSON_AddNumberToObject(e, "bwd_s", rr.bwd_s);
        cJSON_AddNumberToObject(e, "fwd_gflops", rr.s->gflop / rr.fwd_s);
        cJSON_AddItemToArray(rnn, e);
    }
    cJSON *fa = cJSON_AddArrayToObject(o, "fits");
    for (int i = 0; i < nfits && i < MAX_FITS; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "kind", op_kind_name(fits[i].kind));
        cJSON_AddStringToObject(e, "phase", op_phase_name(fits[i].phase));
        cJSON_AddStringToObject(e, "variant", fits[i].variant);
        cJSON_AddNumberToObject(e, "points", fits[i].points);
        cJSON_AddBoolToObject(e, "fitted", fits[i].fitted);
        cJSON_AddNumberToObject(e, "bandwidth", fits[i].bandwidth);
        cJSON_AddNumberToObject(e, "loo_error_log_p68", fits[i].loo_rms);
        cJSON_AddItemToArray(fa, e);
    }
    return o;
}

/* --csv: what the text leads with, the limits and the families' rates, as one long ("tidy")
 * table, since the two differ in shape: a row per value, named by section (limits, family),
 * name (the limit, or the family), the family's kind and phase, the memory level and the
 * threads it was measured on, the quantity (best for a limit; kernels, min, median, max and
 * median_fraction_of_limit for a family) and the unit (FLOP/s, B/s, B, or empty for a count
 * or ratio). Rates in SI base units; a figure the calibration did not measure has no row.
 * g's rates are sorted. */
static void csv_row(const CalibrationRow *cal, const char *section, const char *name, const char *kind,
                    const char *phase, const char *level, int threads, const char *quantity, double value,
                    const char *unit)
{
    printf("%lld,%s,", (long long)cal->id, section);
    csv_field(stdout, name);
    putchar(',');
    csv_field(stdout, kind);
    putchar(',');
    csv_field(stdout, phase);
    printf(",%s,", level);
    if (threads > 0)
        printf("%d", threads);
    printf(",%s,%.9g,%s\n", quantity, value, unit);
}

static void print_csv(const CalibrationRow *cal, const Limits *L, const MbCaches *c, const Group *g, int ng)
{
    const int T = L->threads;
    printf("calibration_id,section,name,kind,phase,level,threads,quantity,value,unit\n");
    if (L->peak1 > 0)
        csv_row(cal, "limits", "fma_peak", "", "", "", 1, "best", 1e9 * L->peak1, "FLOP/s");
    if (L->peak > 0 && T != 1) /* on one thread it is the row above */
        csv_row(cal, "limits", "fma_peak", "", "", "", T, "best", 1e9 * L->peak, "FLOP/s");
    static const struct {
        const char *name;
        MembwKind kind;
    } curves[] = {{"read", MEMBW_READ}, {"triad", MEMBW_TRIAD}, {"handoff", MEMBW_HANDOFF}, {"cross_core", MEMBW_CROSS}};
    for (int lv = 0; lv < LVL_COUNT; lv++) {
        if (L->bw[MEMBW_READ][lv] <= 0 && L->bw1[lv] <= 0) /* the levels the text shows */
            continue;
        if (lv < 3 && c->bytes[lv])
            csv_row(cal, "limits", "cache", "", "", level_names[lv], 0, "size", (double)c->bytes[lv], "B");
        for (size_t k = 0; k < sizeof curves / sizeof curves[0]; k++)
            if (L->bw[curves[k].kind][lv] > 0)
                csv_row(cal, "limits", curves[k].name, "", "", level_names[lv], T, "best",
                        1e9 * L->bw[curves[k].kind][lv], "B/s");
        if (T > 1 && L->bw1[lv] > 0)
            csv_row(cal, "limits", "read", "", "", level_names[lv], 1, "best", 1e9 * L->bw1[lv], "B/s");
        if (L->read_apart[lv] > 0)
            csv_row(cal, "limits", "read_apart", "", "", level_names[lv], T, "best", 1e9 * L->read_apart[lv], "B/s");
    }
    if (L->stream_triad > 0)
        csv_row(cal, "limits", "stream_triad", "", "", "", T, "best", 1e9 * L->stream_triad, "B/s");
    if (L->stream_triad_apart > 0)
        csv_row(cal, "limits", "stream_triad_apart", "", "", "", T, "best", 1e9 * L->stream_triad_apart, "B/s");
    const double dram = L->bw[MEMBW_READ][LVL_DRAM] > 0 ? L->bw[MEMBW_READ][LVL_DRAM] : L->stream_triad;
    for (int i = 0; i < ng; i++) {
        const bool comp = compute_kind(g[i].kind);
        const char *unit = comp ? "FLOP/s" : "B/s";
        const double med = median_of(g[i].rate, g[i].n), limit = comp ? L->peak : dram;
        csv_row(cal, "family", g[i].family, g[i].kind, g[i].phase, "", T, "kernels", g[i].n, "");
        csv_row(cal, "family", g[i].family, g[i].kind, g[i].phase, "", T, "min", 1e9 * g[i].rate[0], unit);
        csv_row(cal, "family", g[i].family, g[i].kind, g[i].phase, "", T, "median", 1e9 * med, unit);
        csv_row(cal, "family", g[i].family, g[i].kind, g[i].phase, "", T, "max", 1e9 * g[i].rate[g[i].n - 1], unit);
        if (limit > 0)
            csv_row(cal, "family", g[i].family, g[i].kind, g[i].phase, "", T, "median_fraction_of_limit", med / limit,
                    "");
    }
}

/* The communication calibrations of the machine, as fitted (comm_model.h): people read the
 * ping-pong's latency and bandwidth and how well each allreduce algorithm explains the
 * measured allreduce. */
static void comm_text(const CommFitInfo *in)
{
    printf("\ncommunication (%d allreduce points over", in->points);
    for (int i = 0; i < in->nranks; i++)
        printf(" %s%d", i ? "+ " : "", in->ranks[i]);
    printf(" ranks; %s)\n", in->mpi_library);
    printf("  ping-pong  latency %.2f us, bandwidth %.2f GB/s (fit alpha + n/beta, median error %.1f%%)\n",
           in->p2p_alpha_s * 1e6, in->p2p_beta_Bps / 1e9, 100 * in->p2p_median_rel_err);
    printf("  allreduce  %-13s %10s %14s %12s   (beta from the ping-pong; best first)\n", "algorithm", "alpha",
           "gamma", "median err");
    for (int a = 0; a < AR_COUNT - 1; a++)
        printf("             %-13s %7.2f us %9.3f ns/B %11.1f%%\n", allreduce_algo_name(in->algos[a].algo),
               in->algos[a].alpha_s * 1e6, in->algos[a].gamma_sPB * 1e9, 100 * in->algos[a].median_rel_err);
    printf("  allreduce memory (each rank's, beside its buffer: the MPI library's scratch)\n");
    for (int i = 0; i < in->nranks; i++) {
        char b1[32], b2[32];
        if (in->mem_probes[i] == 0)
            printf("             %d ranks: not probed (a calibration from before the probe)\n", in->ranks[i]);
        else
            printf("             %d ranks: %s at %s (%.2f of the buffer), %d sizes probed\n", in->ranks[i],
                   fmt_bytes(in->mem_largest_scratch[i], b1, 32), fmt_bytes(in->mem_largest_bytes[i], b2, 32),
                   in->mem_largest_scratch[i] / in->mem_largest_bytes[i], in->mem_probes[i]);
    }
    printf("  placement (where the node's first two ranks ran: a cache line's round trip between them before\n"
           "  and after each collective's pass; apart at x%.1f the near mark or more, where the probes show\n"
           "  two modes)\n", MB_FAR_RTT);
    for (int i = 0; i < in->nranks; i++) {
        if (in->rtt_fastest_ns[i] <= 0)
            printf("             %d ranks: one placement (or not probed): no pass classed apart\n", in->ranks[i]);
        else if (in->apart_points[i] == 0)
            printf("             %d ranks: near mark %.0f ns; no allreduce pass apart\n", in->ranks[i],
                   in->rtt_fastest_ns[i]);
        else
            printf("             %d ranks: near mark %.0f ns; %d allreduce sizes with passes apart, "
                   "apart/near median x%.2f\n", in->ranks[i], in->rtt_fastest_ns[i], in->apart_points[i],
                   in->apart_over_near[i]);
    }
    printf("  a rank's own memory (libraries, MPI and BLAS buffers, before any buffer of its job)\n");
    for (int i = 0; i < in->nranks; i++) {
        char b[32];
        if (in->rank_runtime_bytes[i] > 0)
            printf("             %d ranks: %s\n", in->ranks[i], fmt_bytes(in->rank_runtime_bytes[i], b, 32));
        else
            printf("             %d ranks: not recorded (a calibration from before dlperf recorded it)\n",
                   in->ranks[i]);
    }
}

static cJSON *comm_json(const CommFitInfo *in)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "mpi_library", in->mpi_library);
    cJSON *rk = cJSON_AddArrayToObject(o, "ranks");
    for (int i = 0; i < in->nranks; i++)
        cJSON_AddItemToArray(rk, cJSON_CreateNumber(in->ranks[i]));
    cJSON_AddNumberToObject(o, "allreduce_points", in->points);
    cJSON_AddNumberToObject(o, "p2p_alpha_s", in->p2p_alpha_s);
    cJSON_AddNumberToObject(o, "p2p_beta_Bps", in->p2p_beta_Bps);
    cJSON *al = cJSON_AddArrayToObject(o, "allreduce_fits");
    for (int a = 0; a < AR_COUNT - 1; a++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "algorithm", allreduce_algo_name(in->algos[a].algo));
        cJSON_AddNumberToObject(x, "alpha_s", in->algos[a].alpha_s);
        cJSON_AddNumberToObject(x, "gamma_s_per_byte", in->algos[a].gamma_sPB);
        cJSON_AddNumberToObject(x, "median_rel_err", in->algos[a].median_rel_err);
        cJSON_AddItemToArray(al, x);
    }
    cJSON *mem = cJSON_AddArrayToObject(o, "allreduce_memory");
    for (int i = 0; i < in->nranks; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "ranks", in->ranks[i]);
        cJSON_AddNumberToObject(x, "probes", in->mem_probes[i]);
        cJSON_AddNumberToObject(x, "largest_bytes", in->mem_largest_bytes[i]);
        cJSON_AddNumberToObject(x, "largest_scratch_bytes", in->mem_largest_scratch[i]);
        cJSON_AddNumberToObject(x, "rank_runtime_bytes", in->rank_runtime_bytes[i]); /* 0: not recorded */
        cJSON_AddItemToArray(mem, x);
    }
    cJSON *pl = cJSON_AddArrayToObject(o, "placement");
    for (int i = 0; i < in->nranks; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "ranks", in->ranks[i]);
        cJSON_AddNumberToObject(x, "rtt_fastest_ns", in->rtt_fastest_ns[i]); /* 0: not probed */
        cJSON_AddNumberToObject(x, "allreduce_sizes_apart", in->apart_points[i]);
        if (in->apart_points[i] > 0)
            cJSON_AddNumberToObject(x, "apart_over_near", in->apart_over_near[i]);
        else
            cJSON_AddNullToObject(x, "apart_over_near");
        cJSON_AddItemToArray(pl, x);
    }
    return o;
}

int calibration_show(const Cli *cli, Db *db, const CalibrationRow *cal, bool verbose, bool csv)
{
    Rows r = {0};
    if (db_measurement_foreach(db, cal->id, collect, &r) != 0) {
        free(r.m);
        return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    }
    MbCaches c;
    mb_cache_sizes(&c);
    Limits L;
    limits_of(&r, cal->sw.threads, &c, &L);
    char err[512];
    PassSpeeds ps;
    Samples S = {0}; /* every raw sample, read once: the passes' speeds and the cross-core spread */
    if (db_sample_foreach(db, cal->id, collect_sample, &S) != 0) {
        free(r.m), free(S.s);
        return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    }
    const int rc_samples = pass_speeds(cal, &r, &S, &ps, err, sizeof err) != 0 ||
                           cross_spread(cal, &r, &S, &c, &L, err, sizeof err) != 0;
    free(S.s);
    if (rc_samples) {
        free(r.m);
        return cli_error(cli, EXIT_FAIL, "%s", err);
    }
    int ng = 0;
    Group *g = groups_of(&r, &ng);
    if (!g) {
        free(r.m);
        return cli_error(cli, EXIT_FAIL, "out of memory summarising calibration %lld", (long long)cal->id);
    }
    CmFitInfo fits[MAX_FITS];
    int nfits = 0;
    RetentionInfo ri = {.n = 0};
    ApartInfo ai = {.all = 0};
    CostModel *cm = cm_load(db, cal->id, err, sizeof err);
    if (cm) {
        nfits = cm_fit_summary(cm, fits, MAX_FITS);
        retention_of(cm, &ri);
        apart_of(cm, &ai);
        cm_free(cm);
    }
    if (db_calibration_sample_placement(db, cal->id, MB_FAR_RTT, &ai.samples_probed, &ai.samples_apart) != 0) {
        for (int i = 0; i < ng; i++)
            free(g[i].rate);
        free(g);
        free(r.m);
        return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    }
    CommFitInfo comm;
    CommModel *cmm = comm_model_load(db, cal->machine_id, err, sizeof err); /* none: no section */
    if (cmm) {
        comm_model_info(cmm, &comm);
        comm_model_free(cmm);
    }
    if (cli->json || csv) /* the JSON's and CSV's min/max read the sorted rates: sort once here */
        for (int i = 0; i < ng; i++)
            qsort(g[i].rate, (size_t)g[i].n, sizeof(double), cmp_double);
    if (csv) {
        print_csv(cal, &L, &c, g, ng);
    } else if (cli->json) {
        cJSON *doc = json_doc(cal, &r, &ps, &L, &c, g, ng, fits, nfits, &ri, &ai);
        if (cmm)
            cJSON_AddItemToObject(doc, "communication", comm_json(&comm));
        json_print(doc);
    } else {
        print_text(cal, &r, &ps, &L, &c, g, ng, fits, nfits, &ri, &ai, verbose);
        if (cmm)
            comm_text(&comm);
    }
    for (int i = 0; i < ng; i++)
        free(g[i].rate);
    free(g);
    free(r.m);
    return EXIT_OK;
}
