/* predictor/cost_model.c — the per-op cost model built from one calibration: exact
 * lookup, batch scaling, and per-kind least-squares fits bounded by the roofline (the
 * pricing paths are described in predict.h). */
#include <assert.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predictor/predict.h"

enum { MAX_BATCH_FIELDS = 3, MAX_COEF = 3 };

typedef struct {
    char key[OP_KEY_MAX];
    OpDesc desc;
    double median_s, lo_s, hi_s; /* lo/hi: the 95% CI moved onto the median */
    double flops, bytes;
    int group;
    char norm_key[MAX_BATCH_FIELDS][OP_KEY_MAX]; /* key with one batch-like field zeroed */
} Entry;

typedef struct {
    int group;
    int n;            /* points */
    bool ok;          /* fitted */
    bool use[MAX_COEF]; /* which of (1, flops, bytes) are in the model */
    double c[MAX_COEF];
    double rel_rms;   /* RMS relative residual */
} Fit;

struct CostModel {
    Entry *e;
    int n, cap;
    Fit *fits;
    int nfits;
    double peak_flops_s;  /* best GEMM rate measured */
    double peak_bytes_s;  /* best bandwidth measured by a memory-bound kernel */
    bool sorted;
};

const char *price_source_name(PriceSource s)
{
    static const char *const names[] = {"exact", "scaled", "fitted"};
    return names[s];
}

static bool compute_bound(OpKind k) { return k == OP_GEMM || k == OP_CONV2D; }

/* Ops whose kernel does not depend on the training phase share one group (GEMM); the
 * others are grouped by kind, phase and variant (activation, pooling or STREAM kind). */
static int group_of(const OpDesc *d)
{
    int sub = 0, phase = d->kind == OP_GEMM ? 0 : (int)d->phase;
    if (d->kind == OP_ACT)
        sub = d->u.act.act;
    else if (d->kind == OP_POOL2D)
        sub = d->u.pool.kind;
    else if (d->kind == OP_STREAM)
        sub = d->u.mem.kind;
    else if (d->kind == OP_BATCHNORM)
        sub = d->u.bn.training;
    return (int)d->kind * 64 + phase * 8 + sub;
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
    case OP_BATCHNORM: f[0] = &d->u.bn.n; return 1;
    case OP_LRN: f[0] = &d->u.lrn.n; return 1;
    case OP_CHANNEL_COPY: f[0] = &d->u.chan.n; return 1;
    case OP_EMBEDDING: f[0] = &d->u.embed.n; return 1;
    case OP_KL_SPARSITY: f[0] = &d->u.kl.n; return 1;
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

void cm_free(CostModel *cm)
{
    if (!cm)
        return;
    free(cm->e);
    free(cm->fits);
    free(cm);
}

int cm_count(const CostModel *cm) { return cm->n; }

void cm_add(CostModel *cm, const MeasurementRow *m)
{
    OpDesc d;
    if (!m->validated || m->median_s <= 0 || !op_key_parse(m->key, &d))
        return; /* unvalidated or foreign rows never price anything */
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
    e->lo_s = fmax(m->min_s, m->median_s - (m->mean_s - m->ci95_lo_s));
    e->hi_s = m->median_s + (m->ci95_hi_s - m->mean_s);
    OpCost c = op_cost(&d);
    e->flops = c.flops;
    e->bytes = c.bytes;
    e->group = group_of(&d);
    int *f[MAX_BATCH_FIELDS];
    int nf = batch_fields(&d, f);
    for (int i = 0; i < nf; i++)
        norm_key(&d, i, e->norm_key[i]);
    if (d.kind == OP_GEMM && c.flops / m->median_s > cm->peak_flops_s)
        cm->peak_flops_s = c.flops / m->median_s;
    if (!compute_bound(d.kind) && c.bytes / m->median_s > cm->peak_bytes_s)
        cm->peak_bytes_s = c.bytes / m->median_s;
    cm->sorted = false;
}

static int entry_cmp(const void *a, const void *b) { return strcmp(((const Entry *)a)->key, ((const Entry *)b)->key); }

/* Weighted least squares of t over the chosen regressors, weights 1/t^2 so that the fit
 * minimises relative error (a 1 ms kernel matters as much as a 1 s one). Returns false
 * if there are too few points or the solve fails. */
static bool fit_once(const Entry *const *pts, int n, const bool use[MAX_COEF], double c[MAX_COEF])
{
    int p = 0;
    for (int j = 0; j < MAX_COEF; j++)
        p += use[j];
    if (p == 0 || n < p + 1)
        return false;
    gsl_matrix *X = gsl_matrix_alloc((size_t)n, (size_t)p);
    gsl_vector *y = gsl_vector_alloc((size_t)n), *w = gsl_vector_alloc((size_t)n), *cv = gsl_vector_alloc((size_t)p);
    gsl_matrix *cov = gsl_matrix_alloc((size_t)p, (size_t)p);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc((size_t)n, (size_t)p);
    for (int i = 0; i < n; i++) {
        double x[MAX_COEF] = {1.0, pts[i]->flops, pts[i]->bytes};
        int col = 0;
        for (int j = 0; j < MAX_COEF; j++)
            if (use[j])
                gsl_matrix_set(X, (size_t)i, (size_t)col++, x[j]);
        gsl_vector_set(y, (size_t)i, pts[i]->median_s);
        gsl_vector_set(w, (size_t)i, 1.0 / (pts[i]->median_s * pts[i]->median_s));
    }
    double chisq;
    bool ok = gsl_multifit_wlinear(X, w, y, cv, cov, &chisq, ws) == 0;
    int col = 0;
    for (int j = 0; j < MAX_COEF; j++)
        c[j] = use[j] ? gsl_vector_get(cv, (size_t)col++) : 0.0;
    gsl_multifit_linear_free(ws);
    gsl_matrix_free(cov);
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_vector_free(w);
    gsl_vector_free(cv);
    return ok;
}

static double fit_eval(const Fit *f, double flops, double bytes) { return f->c[0] + f->c[1] * flops + f->c[2] * bytes; }

static void fit_group(CostModel *cm, int group, Fit *f)
{
    const Entry **pts = malloc((size_t)cm->n * sizeof *pts);
    assert(pts);
    int n = 0;
    OpKind kind = OP_GEMM;
    for (int i = 0; i < cm->n; i++)
        if (cm->e[i].group == group) {
            pts[n++] = &cm->e[i];
            kind = cm->e[i].desc.kind;
        }
    memset(f, 0, sizeof *f);
    f->group = group;
    f->n = n;
    f->use[0] = true;
    f->use[1] = compute_bound(kind);
    f->use[2] = true;
    /* Active set: a negative coefficient would price bigger ops as cheaper; drop it and
     * refit until all are non-negative. */
    for (int iter = 0; iter < MAX_COEF; iter++) {
        if (!fit_once(pts, n, f->use, f->c))
            break;
        int neg = -1;
        for (int j = 0; j < MAX_COEF; j++)
            if (f->use[j] && f->c[j] < 0)
                neg = j;
        if (neg < 0) {
            f->ok = true;
            break;
        }
        f->use[neg] = false;
    }
    if (f->ok) {
        double ss = 0;
        for (int i = 0; i < n; i++) {
            double r = (fit_eval(f, pts[i]->flops, pts[i]->bytes) - pts[i]->median_s) / pts[i]->median_s;
            ss += r * r;
        }
        f->rel_rms = sqrt(ss / n);
    }
    free(pts);
}

void cm_fit(CostModel *cm)
{
    qsort(cm->e, (size_t)cm->n, sizeof *cm->e, entry_cmp);
    cm->sorted = true;
    free(cm->fits);
    cm->fits = NULL;
    cm->nfits = 0;
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
    cm_fit(cm);
    return cm;
}

static const Entry *find_exact(const CostModel *cm, const char *key)
{
    Entry probe;
    snprintf(probe.key, sizeof probe.key, "%s", key);
    return bsearch(&probe, cm->e, (size_t)cm->n, sizeof *cm->e, entry_cmp);
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
            double r = want.flops > 0 && e->flops > 0 ? want.flops / e->flops : want.bytes / e->bytes;
            double dist = fabs(log(r));
            if (dist < best_dist) {
                best_dist = dist;
                best = e;
                *ratio = r;
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

int cm_price(const CostModel *cm, const OpDesc *d, OpPrice *out, char *err, size_t errlen)
{
    assert(cm->sorted);
    char key[OP_KEY_MAX];
    op_key(d, key);
    const Entry *e = find_exact(cm, key);
    if (e) {
        *out = (OpPrice){.time_s = e->median_s, .lo_s = e->lo_s, .hi_s = e->hi_s, .source = PRICE_EXACT};
        return 0;
    }
    double ratio = 1;
    e = find_scaled(cm, d, &ratio);
    if (e) {
        *out = (OpPrice){.time_s = e->median_s * ratio, .lo_s = e->lo_s * ratio, .hi_s = e->hi_s * ratio,
                         .source = PRICE_SCALED};
        return 0;
    }
    OpCost c = op_cost(d);
    /* The roofline is a floor for any fitted price: nothing runs faster than the best
     * measured GEMM rate or bandwidth. */
    double roof = 0;
    if (cm->peak_flops_s > 0)
        roof = fmax(roof, c.flops / cm->peak_flops_s);
    if (cm->peak_bytes_s > 0)
        roof = fmax(roof, c.bytes / cm->peak_bytes_s);
    const Fit *f = find_fit(cm, group_of(d));
    if (f && f->ok) {
        double t = fmax(fit_eval(f, c.flops, c.bytes), roof);
        *out = (OpPrice){.time_s = t, .lo_s = t * (1 - fmin(f->rel_rms, 0.9)), .hi_s = t * (1 + f->rel_rms),
                         .source = PRICE_FITTED};
        return 0;
    }
    if (roof > 0 && ((c.flops == 0 || cm->peak_flops_s > 0) && (c.bytes == 0 || cm->peak_bytes_s > 0))) {
        /* Roofline alone: a lower bound, so the band only extends upwards (by 2x). */
        *out = (OpPrice){.time_s = roof, .lo_s = roof, .hi_s = 2 * roof, .source = PRICE_FITTED};
        return 0;
    }
    snprintf(err, errlen, "the calibration has nothing to price %s %s ops (no GEMM rate or bandwidth measured); "
                          "run dlperf calibrate", op_kind_name(d->kind), op_phase_name(d->phase));
    return -1;
}
