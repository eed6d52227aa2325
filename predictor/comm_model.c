/* predictor/comm_model.c — allreduce algorithms, their fit to the measured collectives,
 * and the data-parallel iteration (see comm_model.h). */
#include "predictor/comm_model.h"

#include <gsl/gsl_fit.h>
#include <gsl/gsl_interp.h>
#include <gsl/gsl_multifit.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const algo_names[AR_COUNT] = {"ring", "tree", "rec-doubling", "rec-halving", "hierarchical"};

const char *allreduce_algo_name(AllreduceAlgo a) { return a >= 0 && a < AR_COUNT ? algo_names[a] : "?"; }

int allreduce_algo_parse(const char *name, AllreduceAlgo *out)
{
    for (int i = 0; i < AR_COUNT; i++)
        if (strcmp(name, algo_names[i]) == 0) {
            *out = (AllreduceAlgo)i;
            return 0;
        }
    return -1;
}

static double log2_up(int p) { return ceil(log2((double)p) - 1e-12); }

/* The three coefficients of a flat algorithm: time = a alpha + b n/beta + c n gamma. */
static void flat_coeffs(AllreduceAlgo a, int p, double *ka, double *kb, double *kc)
{
    double lg = log2_up(p), f = (double)(p - 1) / p;
    switch (a) {
    case AR_TREE: *ka = 2 * lg, *kb = 2 * lg, *kc = lg; break;
    case AR_RECURSIVE_DOUBLING: *ka = lg, *kb = lg, *kc = lg; break;
    case AR_RECURSIVE_HALVING: *ka = 2 * lg, *kb = 2 * f, *kc = f; break;
    case AR_RING:
    default: *ka = 2.0 * (p - 1), *kb = 2 * f, *kc = f; break;
    }
}

static double flat_s(AllreduceAlgo a, double n, int p, const LinkParams *l)
{
    if (p <= 1)
        return 0;
    double ka, kb, kc;
    flat_coeffs(a, p, &ka, &kb, &kc);
    return ka * l->alpha_s + kb * n / l->beta_Bps + kc * n * l->gamma_sPB;
}

double allreduce_model_s(AllreduceAlgo a, double bytes, int p, const CommParams *c)
{
    if (p <= 1)
        return 0;
    int q = c->ranks_per_node < 1 ? 1 : c->ranks_per_node;
    if (q > p)
        q = p;
    if (a != AR_HIERARCHICAL) {
        if (p <= q) /* one node */
            return flat_s(a, bytes, p, &c->intra);
        LinkParams l = c->inter;
        if (q > 1 && a == AR_RING) {
            /* ranks placed node by node: one stream per node crosses a node boundary each
             * step, the other hops are inside nodes; a step lasts as long as its slowest hop */
            l.alpha_s = fmax(c->intra.alpha_s, c->inter.alpha_s);
            l.beta_Bps = fmin(c->intra.beta_Bps, c->inter.beta_Bps);
        } else if (q > 1) {
            l.beta_Bps = c->inter.beta_Bps / q; /* a node's ranks cross at once: they share its NICs */
        }
        return flat_s(a, bytes, p, &l);
    }
    const int nodes = (p + q - 1) / q;
    double t = 0;
    if (q > 1) { /* ring reduce-scatter and allgather inside the node: each (q-1) steps of n/q */
        const LinkParams *l = &c->intra;
        t += (q - 1) * (l->alpha_s + bytes / q / l->beta_Bps + bytes / q * l->gamma_sPB); /* reduce-scatter */
        t += (q - 1) * (l->alpha_s + bytes / q / l->beta_Bps);                              /* allgather */
    }
    /* then the q shards are allreduced between the nodes by q concurrent rings, which share
     * the node's injection bandwidth */
    LinkParams shared = c->inter;
    shared.beta_Bps = c->inter.beta_Bps / q;
    t += flat_s(AR_RING, bytes / q, nodes, &shared);
    return t;
}

double dp_iteration_s(const DpStep *s)
{
    if (s->overlap)
        return s->fwd_s + fmax(s->bwd_s, s->allreduce_s) + s->update_s;
    return s->fwd_s + s->bwd_s + s->allreduce_s + s->update_s;
}

/* ---- the calibrated model ---- */

enum { MAX_RANK_COUNTS = 8, MAX_POINTS = 256 };

typedef struct {
    int p;
    int n; /* allreduce points, sorted by bytes */
    double bytes[MAX_POINTS], s[MAX_POINTS];
    /* each point's band: its samples' 95% confidence interval moved onto the median, as the
     * cost model's exact prices take it (a calibration whose passes caught the node's
     * collectives at different speeds gives a wide one) */
    double lo[MAX_POINTS], hi[MAX_POINTS];
    /* each point's price with the node's ranks apart (measurement.apart_s; 0: no pass was),
     * and the calibration's fastest round trip between them (0: not probed) */
    double apart[MAX_POINTS];
    double rtt_fastest_ns;
    int nmem; /* allreduce memory probes, ascending bytes (db_comm_memory_foreach's order) */
    double mem_bytes[MAX_POINTS], mem_scratch[MAX_POINTS];
    double runtime_bytes; /* a rank's own resident memory before any buffer; 0: not recorded */
} RankCurve;

struct CommModel {
    RankCurve curves[MAX_RANK_COUNTS];
    int ncurves;
    double pp_bytes[MAX_POINTS * 2], pp_s[MAX_POINTS * 2]; /* ping-pong, one way, all calibrations */
    int npp;
    CommFitInfo info;
};

typedef struct {
    CommModel *cm;
    RankCurve *curve;
} LoadCtx;

static int load_row(const MeasurementRow *m, void *ctx)
{
    LoadCtx *c = ctx;
    if (!m->validated || m->median_s <= 0 || strcmp(m->family, "comm") != 0)
        return 0;
    if (strcmp(m->kind, "allreduce") == 0 && c->curve->n < MAX_POINTS) {
        RankCurve *k = c->curve;
        k->bytes[k->n] = m->bytes;
        k->s[k->n] = m->median_s;
        k->lo[k->n] = fmin(m->median_s, fmax(m->min_s, m->median_s - (m->mean_s - m->ci95_lo_s)));
        k->hi[k->n] = fmax(m->median_s, m->median_s + (m->ci95_hi_s - m->mean_s));
        k->apart[k->n] = m->apart_s;
        k->n++;
    } else if (strcmp(m->kind, "pingpong") == 0 && c->cm->npp < MAX_POINTS * 2 && m->bytes > 0) {
        c->cm->pp_bytes[c->cm->npp] = m->bytes;
        c->cm->pp_s[c->cm->npp++] = m->median_s;
    }
    return 0;
}

static int load_memory(double bytes, double scratch_bytes, void *ctx)
{
    RankCurve *c = ctx;
    if (c->nmem < MAX_POINTS && bytes > 0) {
        c->mem_bytes[c->nmem] = bytes;
        c->mem_scratch[c->nmem++] = scratch_bytes;
    }
    return 0;
}

static void sort_curve(RankCurve *c)
{
    for (int i = 1; i < c->n; i++)
        for (int j = i; j > 0 && c->bytes[j] < c->bytes[j - 1]; j--) {
            double b = c->bytes[j], s = c->s[j], lo = c->lo[j], hi = c->hi[j], ap = c->apart[j];
            c->bytes[j] = c->bytes[j - 1], c->s[j] = c->s[j - 1], c->lo[j] = c->lo[j - 1], c->hi[j] = c->hi[j - 1];
            c->apart[j] = c->apart[j - 1];
            c->bytes[j - 1] = b, c->s[j - 1] = s, c->lo[j - 1] = lo, c->hi[j - 1] = hi, c->apart[j - 1] = ap;
        }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Ping-pong: one-way time = alpha + n / beta, least squares on relative errors. */
static void fit_p2p(CommModel *cm)
{
    CommFitInfo *in = &cm->info;
    int n = cm->npp;
    if (n < 2) {
        in->p2p_alpha_s = 1e-6, in->p2p_beta_Bps = 1e10;
        return;
    }
    double *w = malloc((size_t)n * sizeof *w), c0, c1, cov00, cov01, cov11, chisq;
    for (int i = 0; i < n; i++)
        w[i] = 1.0 / (cm->pp_s[i] * cm->pp_s[i]);
    gsl_fit_wlinear(cm->pp_bytes, 1, w, 1, cm->pp_s, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &chisq);
    in->p2p_alpha_s = fmax(c0, 1e-9);
    in->p2p_beta_Bps = c1 > 0 ? 1.0 / c1 : 1e12;
    for (int i = 0; i < n; i++)
        w[i] = fabs(in->p2p_alpha_s + cm->pp_bytes[i] / in->p2p_beta_Bps - cm->pp_s[i]) / cm->pp_s[i];
    in->p2p_median_rel_err = median(w, n);
    free(w);
}

/* One flat algorithm over every allreduce point of every rank count: beta from the
 * ping-pong, alpha and gamma (both >= 0) by weighted least squares. */
static void fit_algo(const CommModel *cm, AllreduceAlgo a, CommAlgoFit *out)
{
    const double beta = cm->info.p2p_beta_Bps;
    int n = 0;
    for (int c = 0; c < cm->ncurves; c++)
        n += cm->curves[c].n;
    out->algo = a;
    if (n < 2) {
        out->alpha_s = cm->info.p2p_alpha_s, out->gamma_sPB = 0, out->median_rel_err = INFINITY;
        return;
    }
    gsl_matrix *X = gsl_matrix_alloc((size_t)n, 2);
    gsl_vector *y = gsl_vector_alloc((size_t)n), *w = gsl_vector_alloc((size_t)n), *coef = gsl_vector_alloc(2);
    gsl_matrix *cov = gsl_matrix_alloc(2, 2);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc((size_t)n, 2);
    int i = 0;
    for (int c = 0; c < cm->ncurves; c++) {
        const RankCurve *rc = &cm->curves[c];
        double ka, kb, kc;
        flat_coeffs(a, rc->p, &ka, &kb, &kc);
        for (int k = 0; k < rc->n; k++, i++) {
            gsl_matrix_set(X, (size_t)i, 0, ka);
            gsl_matrix_set(X, (size_t)i, 1, kc * rc->bytes[k]);
            gsl_vector_set(y, (size_t)i, rc->s[k] - kb * rc->bytes[k] / beta);
            gsl_vector_set(w, (size_t)i, 1.0 / (rc->s[k] * rc->s[k]));
        }
    }
    double chisq;
    gsl_multifit_wlinear(X, w, y, coef, cov, &chisq, ws);
    out->alpha_s = fmax(gsl_vector_get(coef, 0), 0);
    out->gamma_sPB = fmax(gsl_vector_get(coef, 1), 0);
    double *err = malloc((size_t)n * sizeof *err);
    LinkParams l = {out->alpha_s, beta, out->gamma_sPB};
    i = 0;
    for (int c = 0; c < cm->ncurves; c++)
        for (int k = 0; k < cm->curves[c].n; k++)
            err[i++] = fabs(flat_s(a, cm->curves[c].bytes[k], cm->curves[c].p, &l) - cm->curves[c].s[k]) /
                       cm->curves[c].s[k];
    out->median_rel_err = median(err, n);
    free(err);
    gsl_multifit_linear_free(ws);
    gsl_matrix_free(X), gsl_matrix_free(cov);
    gsl_vector_free(y), gsl_vector_free(w), gsl_vector_free(coef);
}

/* The rank counts (>= 2, whole, ascending) of the machine's complete communication
 * calibrations: looked up, not counted up to the largest (a database that says 2^31 ranks
 * would take 2^31 queries). */
typedef struct {
    int *p;
    int n, cap;
} RankCounts;

static int add_rank_count(int ncols, const double *num, const char *const *text, void *ctx)
{
    (void)text;
    RankCounts *r = ctx;
    const double v = num[0];
    if (ncols < 1 || !(v >= 2 && v <= INT_MAX) || v != floor(v) || (r->n > 0 && (int)v <= r->p[r->n - 1]))
        return 0;
    if (r->n == r->cap) {
        int *grown = realloc(r->p, (size_t)(r->cap = r->cap ? 2 * r->cap : 16) * sizeof *grown);
        if (!grown)
            return 1;
        r->p = grown;
    }
    r->p[r->n++] = (int)v;
    return 0;
}

CommModel *comm_model_load(Db *db, int64_t machine_id, char *err, size_t errlen)
{
    CalibrationRow most;
    int rc = db_comm_calibration_latest(db, machine_id, 0, &most);
    if (rc == DB_NOT_FOUND) {
        snprintf(err, errlen, "no communication calibration of this machine; run 'mpirun -np P dlperf calibrate "
                              "--only comm' (P: the rank count to predict, at least 2)");
        return NULL;
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s", db_errmsg(db));
        return NULL;
    }
    CommModel *cm = calloc(1, sizeof *cm);
    if (!cm) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(cm->info.mpi_library, sizeof cm->info.mpi_library, "%s", most.sw.mpi_library);
    RankCounts counts = {0};
    if (db_rows(db,
                "SELECT DISTINCT ranks FROM calibration WHERE machine_id = ? AND status = 'complete'"
                " AND mode LIKE 'comm%' ORDER BY ranks",
                add_rank_count, &counts, "I", machine_id) != 0) {
        snprintf(err, errlen, "%s", db_errmsg(db));
        free(counts.p);
        free(cm);
        return NULL;
    }
    for (int i = 0; i < counts.n && cm->ncurves < MAX_RANK_COUNTS; i++) {
        const int p = counts.p[i];
        CalibrationRow cal;
        if (db_comm_calibration_latest(db, machine_id, p, &cal) != 0)
            continue;
        RankCurve *c = &cm->curves[cm->ncurves];
        c->p = p;
        c->runtime_bytes = cal.runtime_rss_bytes;
        c->rtt_fastest_ns = cal.rtt_fastest_ns;
        LoadCtx lc = {cm, c};
        if (db_measurement_foreach(db, cal.id, load_row, &lc) != 0 ||
            db_comm_memory_foreach(db, cal.id, load_memory, c) != 0) {
            snprintf(err, errlen, "%s", db_errmsg(db));
            free(counts.p);
            free(cm);
            return NULL;
        }
        if (c->n == 0)
            continue;
        sort_curve(c);
        cm->info.ranks[cm->ncurves] = p;
        cm->info.mem_probes[cm->ncurves] = c->nmem;
        if (c->nmem > 0) {
            cm->info.mem_largest_bytes[cm->ncurves] = c->mem_bytes[c->nmem - 1];
            cm->info.mem_largest_scratch[cm->ncurves] = c->mem_scratch[c->nmem - 1];
        }
        cm->info.rank_runtime_bytes[cm->ncurves] = c->runtime_bytes;
        cm->info.rtt_fastest_ns[cm->ncurves] = c->rtt_fastest_ns;
        double ratios[MAX_POINTS];
        int nr = 0;
        for (int k = 0; k < c->n; k++)
            if (c->apart[k] > 0)
                ratios[nr++] = c->apart[k] / c->s[k];
        cm->info.apart_points[cm->ncurves] = nr;
        cm->info.apart_over_near[cm->ncurves] = median(ratios, nr);
        cm->info.points += c->n;
        cm->ncurves++;
    }
    free(counts.p);
    cm->info.nranks = cm->ncurves;
    if (cm->ncurves == 0) {
        snprintf(err, errlen, "the communication calibrations of this machine hold no validated allreduce");
        free(cm);
        return NULL;
    }
    fit_p2p(cm);
    for (int a = 0; a < AR_COUNT - 1; a++)
        fit_algo(cm, (AllreduceAlgo)a, &cm->info.algos[a]);
    for (int i = 1; i < AR_COUNT - 1; i++) /* best (smallest median error) first */
        for (int j = i; j > 0 && cm->info.algos[j].median_rel_err < cm->info.algos[j - 1].median_rel_err; j--) {
            CommAlgoFit t = cm->info.algos[j];
            cm->info.algos[j] = cm->info.algos[j - 1];
            cm->info.algos[j - 1] = t;
        }
    return cm;
}

void comm_model_free(CommModel *cm) { free(cm); }

void comm_model_info(const CommModel *cm, CommFitInfo *out) { *out = cm->info; }

CommParams comm_model_params(const CommModel *cm, AllreduceAlgo *best)
{
    const CommAlgoFit *b = &cm->info.algos[0];
    if (best)
        *best = b->algo;
    LinkParams l = {b->alpha_s, cm->info.p2p_beta_Bps, b->gamma_sPB};
    return (CommParams){.intra = l, .inter = l, .ranks_per_node = 1 << 30};
}

static double best_model_s(const CommModel *cm, double bytes, int p)
{
    AllreduceAlgo a;
    CommParams c = comm_model_params(cm, &a);
    return allreduce_model_s(a, bytes, p, &c);
}

/* One of a measured curve's series (its medians, or their band's ends) at `bytes`:
 * log-log Steffen interpolation inside the measured sizes; outside them the nearest end's
 * value scaled by the best-fitting model. */
static double curve_eval(const CommModel *cm, const RankCurve *c, const double *y, double bytes)
{
    const int p = c->p;
    if (bytes <= c->bytes[0])
        return y[0] * best_model_s(cm, bytes, p) / best_model_s(cm, c->bytes[0], p);
    if (bytes >= c->bytes[c->n - 1])
        return y[c->n - 1] * best_model_s(cm, bytes, p) / best_model_s(cm, c->bytes[c->n - 1], p);
    double lx[MAX_POINTS], ly[MAX_POINTS];
    for (int i = 0; i < c->n; i++)
        lx[i] = log(c->bytes[i]), ly[i] = log(y[i]);
    gsl_interp *in = gsl_interp_alloc(c->n >= 3 ? gsl_interp_steffen : gsl_interp_linear, (size_t)c->n);
    gsl_interp_accel *acc = gsl_interp_accel_alloc();
    gsl_interp_init(in, lx, ly, (size_t)c->n);
    double t = exp(gsl_interp_eval(in, lx, ly, log(bytes), acc));
    gsl_interp_accel_free(acc);
    gsl_interp_free(in);
    return t;
}

static const RankCurve *measured_curve(const CommModel *cm, int p)
{
    const RankCurve *c = NULL;
    for (int i = 0; i < cm->ncurves; i++)
        if (cm->curves[i].p == p)
            c = &cm->curves[i];
    return c && c->n >= 2 ? c : NULL;
}

double comm_model_allreduce_s(const CommModel *cm, double bytes, int p, CommSource *source)
{
    if (p <= 1 || bytes <= 0) {
        if (source)
            *source = COMM_MEASURED;
        return 0;
    }
    const RankCurve *c = measured_curve(cm, p);
    if (source)
        *source = c ? COMM_MEASURED : COMM_FITTED;
    return c ? curve_eval(cm, c, c->s, bytes) : best_model_s(cm, bytes, p);
}

/* The apart placement's price is the near curve times the apart/near ratio of the sizes
 * that had passes apart, interpolated linearly in log(bytes) between them and held at
 * the nearest one beyond: where ranks share a node, the ratio follows the message's size
 * (what fits one last-level cache or two), not its absolute time. */
double comm_model_allreduce_apart_s(const CommModel *cm, double bytes, int p)
{
    const RankCurve *c = p > 1 && bytes > 0 ? measured_curve(cm, p) : NULL;
    if (!c)
        return 0;
    double lx[MAX_POINTS], ratio[MAX_POINTS];
    int n = 0;
    for (int i = 0; i < c->n; i++)
        if (c->apart[i] > 0 && c->s[i] > 0) {
            lx[n] = log(c->bytes[i]);
            ratio[n++] = c->apart[i] / c->s[i];
        }
    if (n == 0)
        return 0;
    const double x = log(bytes);
    double r = x <= lx[0] ? ratio[0] : ratio[n - 1];
    for (int i = 1; i < n; i++)
        if (x > lx[i - 1] && x <= lx[i]) {
            const double f = (x - lx[i - 1]) / (lx[i] - lx[i - 1]);
            r = ratio[i - 1] + f * (ratio[i] - ratio[i - 1]);
        }
    return r * curve_eval(cm, c, c->s, bytes);
}

double comm_model_rtt_fastest_ns(const CommModel *cm, int p)
{
    const RankCurve *c = measured_curve(cm, p);
    return c ? c->rtt_fastest_ns : 0;
}

void comm_model_allreduce_band(const CommModel *cm, double bytes, int p, double *lo, double *hi)
{
    const double t = comm_model_allreduce_s(cm, bytes, p, NULL);
    const RankCurve *c = p > 1 && bytes > 0 ? measured_curve(cm, p) : NULL;
    *lo = c ? fmin(t, curve_eval(cm, c, c->lo, bytes)) : t;
    *hi = c ? fmax(t, curve_eval(cm, c, c->hi, bytes)) : t;
}

static bool has_memory_probes(const RankCurve *k) { return k->nmem > 0; }
static bool has_runtime(const RankCurve *k) { return k->runtime_bytes > 0; }

/* The rank count whose calibration prices p ranks' memory: among those that measured it
 * (has), p's own, else the nearest below, else the nearest above; NULL if none did. */
static const RankCurve *nearest_curve(const CommModel *cm, int p, bool (*has)(const RankCurve *))
{
    const RankCurve *below = NULL, *above = NULL;
    for (int i = 0; i < cm->ncurves; i++) {
        const RankCurve *k = &cm->curves[i];
        if (!has(k))
            continue;
        if (k->p <= p && (!below || k->p > below->p))
            below = k;
        if (k->p > p && (!above || k->p < above->p))
            above = k;
    }
    return below ? below : above;
}

double comm_model_allreduce_scratch(const CommModel *cm, double bytes, int p, int *probed_at)
{
    *probed_at = 0;
    const RankCurve *c = p > 1 && bytes > 0 ? nearest_curve(cm, p, has_memory_probes) : NULL;
    if (!c)
        return 0;
    *probed_at = c->p;
    const int n = c->nmem;
    if (n == 1 || bytes <= c->mem_bytes[0])
        return c->mem_scratch[0] * bytes / c->mem_bytes[0];
    if (bytes >= c->mem_bytes[n - 1])
        return c->mem_scratch[n - 1] * bytes / c->mem_bytes[n - 1];
    gsl_interp *in = gsl_interp_alloc(gsl_interp_linear, (size_t)n);
    gsl_interp_accel *acc = gsl_interp_accel_alloc();
    gsl_interp_init(in, c->mem_bytes, c->mem_scratch, (size_t)n);
    const double s = gsl_interp_eval(in, c->mem_bytes, c->mem_scratch, bytes, acc);
    gsl_interp_accel_free(acc);
    gsl_interp_free(in);
    return s;
}

double comm_model_rank_runtime(const CommModel *cm, int p, int *measured_at)
{
    const RankCurve *c = p > 1 ? nearest_curve(cm, p, has_runtime) : NULL;
    *measured_at = c ? c->p : 0;
    return c ? c->runtime_bytes : 0;
}
