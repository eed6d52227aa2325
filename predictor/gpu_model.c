/* predictor/gpu_model.c — the GPU kernel forms and their fit (gpu_model.h). */
#include "predictor/gpu_model.h"

#include <gsl/gsl_multimin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const FORM_NAMES[GF_COUNT] = {"tiles", "stream", "rows"};

const char *gpu_form_name(GpuForm f) { return f >= 0 && f < GF_COUNT ? FORM_NAMES[f] : "?"; }

int gpu_form_parse(const char *s, GpuForm *out)
{
    for (int i = 0; i < GF_COUNT; i++)
        if (strcmp(s, FORM_NAMES[i]) == 0) {
            *out = (GpuForm)i;
            return 0;
        }
    return -1;
}

/* ---- parameters ---- */

typedef struct {
    const char *name;
    double lo, hi, start;
    bool log_scale; /* searched in log space: it spans decades */
} Param;

/* tiles: u, k0, t0, e_bw, gamma, w, s, tau */
static const Param TILES_P[] = {
    {"u", 0.03, 1.0, 0.8, false},       /* fraction of the peak a 128x128 tile sustains */
    {"k0", 0.0, 1024, 16, false},       /* reduction steps a tile spends filling its pipeline */
    {"t0", 1e-7, 5e-4, 8e-6, true},     /* launch and the op's fixed cost, seconds */
    {"e_bw", 0.05, 1.5, 0.7, false},    /* fraction of the bandwidth its traffic reaches */
    {"gamma", 0.0, 1.5, 0.3, false},    /* how a smaller tile's lower reuse costs speed */
    {"w", 1.0, 3.0, 1.5, false},        /* a Winograd kernel's compute saving (3x3, stride 1) */
    {"s", 0.15, 1.0, 0.9, false},       /* the rate a power-limited device sustains, of its boost rate */
    {"tau", 1e-4, 10.0, 0.01, true},    /* seconds of compute after which it has slowed halfway there */
};
/* stream: t0, e_inf, b_half, l2, u_c; rows: the same and h0 */
static const Param STREAM_P[] = {
    {"t0", 1e-7, 5e-4, 5e-6, true},     /* launch and fixed cost */
    {"e_inf", 0.05, 1.5, 0.8, false},   /* bandwidth fraction of a large op */
    {"b_half", 1e3, 1e10, 1e6, true},   /* bytes at which half of it is reached */
    {"l2", 1.0, 10.0, 1.5, false},      /* speed-up while the op's bytes fit the L2 */
    {"u_c", 0.005, 1.0, 0.2, true},     /* fraction of the peak its arithmetic reaches */
    {"h0", 0.0, 1e5, 32, false},        /* rows: the row length at which half the speed is lost */
};

static const Param *params_of(GpuForm f, int *n)
{
    switch (f) {
    case GF_TILES: *n = 8; return TILES_P;
    case GF_STREAM: *n = 5; return STREAM_P;
    case GF_ROWS: *n = 6; return STREAM_P;
    default: *n = 0; return NULL;
    }
}

int gpu_form_nparams(GpuForm f)
{
    int n;
    params_of(f, &n);
    return n;
}

bool gpu_param_is_power(GpuForm f, int i) { return f == GF_TILES && (i == 6 || i == 7); }
bool gpu_param_is_fill(GpuForm f, int i) { return f == GF_TILES && i == 1; }

int gpu_param_index(GpuForm f, const char *name)
{
    int n;
    const Param *p = params_of(f, &n);
    for (int i = 0; i < n; i++)
        if (strcmp(p[i].name, name) == 0)
            return i;
    return -1;
}

const char *gpu_param_name(GpuForm f, int i)
{
    int n;
    const Param *p = params_of(f, &n);
    return i >= 0 && i < n ? p[i].name : "?";
}

void gpu_param_bounds(GpuForm f, int i, double *lo, double *hi, double *start)
{
    int n;
    const Param *p = params_of(f, &n);
    if (i < 0 || i >= n) {
        *lo = *hi = *start = 0;
        return;
    }
    *lo = p[i].lo, *hi = p[i].hi, *start = p[i].start;
}

/* ---- shapes ---- */

static void group_name(GpuShape *s, const OpDesc *d, const char *variant)
{
    snprintf(s->group, sizeof s->group, "%s %s%s%s", op_kind_name(d->kind), op_phase_name(d->phase),
             variant && variant[0] ? " " : "", variant ? variant : "");
}

bool gpu_shape(const OpDesc *d, double byte_scale, GpuShape *s)
{
    memset(s, 0, sizeof *s);
    const OpCost c = op_cost(d);
    s->flops = c.flops;
    s->bytes = c.bytes * byte_scale;
    s->form = GF_STREAM;
    switch (d->kind) {
    case OP_GEMM: {
        const GemmDesc *g = &d->u.gemm;
        s->form = GF_TILES;
        snprintf(s->group, sizeof s->group, "gemm");
        s->b = 1, s->m = g->m, s->n = g->n, s->k = g->k;
        return true;
    }
    case OP_BMM: {
        const BmmDesc *g = &d->u.bmm;
        s->form = GF_TILES;
        snprintf(s->group, sizeof s->group, "bmm");
        s->b = g->batch, s->m = g->m, s->n = g->n, s->k = g->k;
        return true;
    }
    case OP_CONV2D: {
        const ConvDesc *v = &d->u.conv;
        const double g = v->groups, ohw = (double)v->out_h * v->out_w;
        s->form = GF_TILES;
        group_name(s, d, NULL);
        s->b = g;
        if (d->phase == PHASE_FWD)
            s->m = v->n * ohw, s->n = v->k / g, s->k = v->c / g * v->r * v->s;
        else if (d->phase == PHASE_BWD_DATA)
            s->m = (double)v->n * v->h * v->w, s->n = v->c / g, s->k = v->k / g * v->r * v->s;
        else
            s->m = v->k / g, s->n = v->c / g * v->r * v->s, s->k = v->n * ohw;
        s->winograd = v->r == 3 && v->s == 3 && v->stride_h == 1 && v->stride_w == 1 && d->phase != PHASE_BWD_WEIGHTS;
        return true;
    }
    case OP_LAYERNORM:
        s->form = GF_ROWS, s->rows = d->u.ln.n, s->row_len = d->u.ln.h;
        group_name(s, d, NULL);
        return true;
    case OP_SOFTMAX:
        s->form = GF_ROWS, s->rows = d->u.softmax.n, s->row_len = d->u.softmax.h;
        group_name(s, d, NULL);
        return true;
    case OP_SOFTMAX_XENT:
        s->form = GF_ROWS, s->rows = d->u.xent.n, s->row_len = d->u.xent.classes;
        group_name(s, d, NULL);
        return true;
    case OP_BATCHNORM:
        s->form = GF_ROWS, s->rows = d->u.bn.c, s->row_len = (double)d->u.bn.n * d->u.bn.spatial;
        group_name(s, d, d->u.bn.training ? "training" : "inference");
        return true;
    case OP_LRN:
        s->form = GF_ROWS, s->rows = (double)d->u.lrn.n * d->u.lrn.spatial, s->row_len = d->u.lrn.c;
        group_name(s, d, NULL);
        return true;
    case OP_POOL2D: {
        const PoolDesc *p = &d->u.pool;
        s->form = GF_ROWS;
        s->rows = (double)p->n * p->c * p->out_h * p->out_w, s->row_len = (double)p->win_h * p->win_w;
        group_name(s, d, p->kind == POOL_MAX ? "max" : "avg");
        return true;
    }
    case OP_BIAS:
        if (d->phase == PHASE_BWD_WEIGHTS) { /* a reduction over n and the spatial positions */
            s->form = GF_ROWS, s->rows = d->u.bias.c, s->row_len = (double)d->u.bias.n * d->u.bias.spatial;
        }
        group_name(s, d, NULL);
        return true;
    case OP_ACT: {
        char v[24];
        snprintf(v, sizeof v, "%s%s", op_act_name(d->u.act.act), d->u.act.in_place ? " inplace" : "");
        group_name(s, d, v);
        return true;
    }
    case OP_BINARY:
        group_name(s, d, op_binary_name(d->u.binary.op));
        return true;
    case OP_SCALAR:
        group_name(s, d, op_binary_name(d->u.scalar.op));
        return true;
    case OP_PEAK_FMA:
    case OP_MEMBW:
        return false;
    default:
        group_name(s, d, NULL);
        return true;
    }
}

/* ---- the forms ---- */

/* A power-limited device (a 70 W inference card) computes at its boost clock at first and
 * slows as it draws its limit: the rate falls from 1 towards s of it, halfway after tau
 * seconds of compute. A kernel of x seconds at the boost rate then takes the T with
 * T = x (1 + (1/s - 1) T / (T + tau)), the positive root of a quadratic. */
static double sustained(double x, double s, double tau)
{
    if (s >= 1.0 || x <= 0)
        return x;
    const double a = 1.0 / s - 1.0, b = tau - x * (1.0 + a);
    return 0.5 * (-b + sqrt(b * b + 4.0 * x * tau));
}

static double tiles_time(const GpuShape *s, const GpuSheet *h, const double *p)
{
    static const int FP32_TILES[][2] = {{128, 128}, {128, 64}, {64, 128}, {64, 64}, {128, 32}, {32, 128}, {32, 32}};
    static const int TC_TILES[][2] = {{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}};
    const double u = p[0], k0 = p[1], t0 = p[2], e_bw = p[3], gamma = p[4], w = p[5];
    const double P = h->peak_flops, BW = h->bw_Bps * e_bw;
    const double sms = h->sms > 0 ? h->sms : 1;
    const int (*tiles)[2] = h->tensor ? TC_TILES : FP32_TILES;
    const int ntiles = h->tensor ? 6 : 7;
    const double value_bytes = 4.0 * h->byte_scale;
    double best = INFINITY;
    for (int t = 0; t < ntiles; t++) {
        const double tm = tiles[t][0], tn = tiles[t][1];
        const double ntile = s->b * ceil(s->m / tm) * ceil(s->n / tn);
        double ut = u * pow((tm * tn / (tm + tn)) / 64.0, gamma);
        if (ut > 1)
            ut = 1;
        const double per = fmax(1.0, 16384.0 / (tm * tn)); /* small tiles share an SM */
        const double slots = sms * per;
        const double tile_rate = P / sms * ut / per;       /* FLOP/s of one resident tile */
        for (int split = 1; split <= 64; split *= 2) {
            const double ks = ceil(s->k / split);
            if (split > 1 && ks < 32)
                break;
            const double waves = ceil(ntile * split / slots);
            double tc = waves * 2.0 * tm * tn * (ks + k0) / tile_rate;
            if (s->winograd)
                tc /= w;
            if (split > 1) /* partial sums written and reduced */
                tc += 2.0 * value_bytes * s->b * s->m * s->n * split / BW;
            if (tc < best)
                best = tc;
        }
    }
    return t0 + fmax(sustained(best, p[6], p[7]), s->bytes / BW);
}

static double stream_time(const GpuShape *s, const GpuSheet *h, const double *p, bool rows)
{
    const double t0 = p[0], e_inf = p[1], b_half = p[2], l2 = p[3], u_c = p[4];
    double e = e_inf * s->bytes / (s->bytes + b_half);
    if (h->l2_bytes > 0) { /* a smooth step from l2 inside the cache to 1 beyond it */
        const double x = s->bytes / h->l2_bytes;
        e *= 1.0 + (l2 - 1.0) / (1.0 + x * x * x * x);
    }
    if (rows && s->row_len > 0)
        e *= s->row_len / (s->row_len + p[5]);
    const double tm = s->bytes / (h->bw_Bps * e);
    const double tc = h->peak_flops > 0 ? s->flops / (h->peak_flops * u_c) : 0;
    return t0 + fmax(tm, tc);
}

double gpu_model_time(const GpuShape *s, const GpuSheet *h, const double *p)
{
    switch (s->form) {
    case GF_TILES: return tiles_time(s, h, p);
    case GF_STREAM: return stream_time(s, h, p, false);
    case GF_ROWS: return stream_time(s, h, p, true);
    default: return NAN;
    }
}

/* ---- the fit ---- */

typedef struct {
    const GpuShape *s;
    const double *logt;
    int n;
    const GpuSheet *h;
    GpuForm form;
    int np;
    const Param *par;
    int nfree;
    int free_idx[GPU_PARAMS_MAX]; /* the search coordinates' parameters */
    double base[GPU_PARAMS_MAX];  /* every parameter; the fixed ones keep these values */
} FitData;

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* the bounded parameter of an unbounded search coordinate */
static double from_search(const Param *q, double x)
{
    const double f = sigmoid(x);
    return q->log_scale ? exp(log(q->lo) + f * (log(q->hi) - log(q->lo))) : q->lo + f * (q->hi - q->lo);
}

static double to_search(const Param *q, double v)
{
    double f = q->log_scale ? (log(v) - log(q->lo)) / (log(q->hi) - log(q->lo)) : (v - q->lo) / (q->hi - q->lo);
    f = fmin(fmax(f, 1e-6), 1 - 1e-6);
    return log(f / (1 - f));
}

double gpu_param_to_search(GpuForm f, int i, double v)
{
    int n;
    const Param *p = params_of(f, &n);
    return i >= 0 && i < n ? to_search(&p[i], v) : 0;
}

double gpu_param_from_search(GpuForm f, int i, double x)
{
    int n;
    const Param *p = params_of(f, &n);
    return i >= 0 && i < n ? from_search(&p[i], x) : 0;
}

static double loss(const gsl_vector *x, void *ctx)
{
    const FitData *f = ctx;
    double p[GPU_PARAMS_MAX];
    memcpy(p, f->base, sizeof p);
    for (int i = 0; x && i < f->nfree; i++)
        p[f->free_idx[i]] = from_search(&f->par[f->free_idx[i]], gsl_vector_get(x, (size_t)i));
    const double delta = 0.1; /* Huber: quadratic within 10%, linear beyond (outliers) */
    double sum = 0;
    for (int i = 0; i < f->n; i++) {
        const double r = log(gpu_model_time(&f->s[i], f->h, p)) - f->logt[i];
        const double a = fabs(r);
        sum += a <= delta ? 0.5 * r * r : delta * (a - 0.5 * delta);
    }
    return isfinite(sum) ? sum / f->n : 1e300;
}

static double minimise(FitData *f, double *p)
{
    memcpy(f->base, p, sizeof f->base);
    if (f->nfree == 0)
        return loss(NULL, f);
    gsl_vector *x = gsl_vector_alloc((size_t)f->nfree), *step = gsl_vector_alloc((size_t)f->nfree);
    for (int i = 0; i < f->nfree; i++) {
        gsl_vector_set(x, (size_t)i, to_search(&f->par[f->free_idx[i]], p[f->free_idx[i]]));
        gsl_vector_set(step, (size_t)i, 1.0);
    }
    gsl_multimin_function fn = {.n = (size_t)f->nfree, .f = loss, .params = f};
    gsl_multimin_fminimizer *m = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, (size_t)f->nfree);
    gsl_multimin_fminimizer_set(m, &fn, x, step);
    for (int it = 0; it < 4000; it++) {
        if (gsl_multimin_fminimizer_iterate(m) != 0)
            break;
        if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(m), 1e-5) == GSL_SUCCESS)
            break;
    }
    const double best = m->fval;
    for (int i = 0; i < f->nfree; i++)
        p[f->free_idx[i]] = from_search(&f->par[f->free_idx[i]], gsl_vector_get(m->x, (size_t)i));
    gsl_multimin_fminimizer_free(m);
    gsl_vector_free(x);
    gsl_vector_free(step);
    return best;
}

double gpu_model_fit(const GpuShape *s, const double *t, int n, const GpuSheet *h, const double *fixed, double *p)
{
    if (n <= 0)
        return -1;
    const GpuForm form = s[0].form;
    int np;
    const Param *par = params_of(form, &np);
    /* at most 4000 points in the search (every k-th: the shapes keep their spread); the
     * error is reported over all */
    enum { FIT_POINTS = 4000 };
    const int stride = n > FIT_POINTS ? (n + FIT_POINTS - 1) / FIT_POINTS : 1;
    const int m = (n + stride - 1) / stride;
    GpuShape *ss = malloc((size_t)m * sizeof *ss);
    double *lt = malloc((size_t)m * sizeof *lt);
    if (!ss || !lt) {
        free(ss);
        free(lt);
        return -1;
    }
    int k = 0;
    for (int i = 0; i < n && k < m; i += stride, k++) {
        ss[k] = s[i];
        lt[k] = log(t[i]);
    }
    FitData f = {.s = ss, .logt = lt, .n = k, .h = h, .form = form, .np = np, .par = par};
    for (int i = 0; i < np; i++) {
        const bool fix = fixed && !isnan(fixed[i]);
        p[i] = fix ? fixed[i] : par[i].start;
        if (!fix)
            f.free_idx[f.nfree++] = i;
    }
    double best = minimise(&f, p);
    /* restarts from the best point: the simplex shrinks onto a floor's edge */
    for (int r = 0; r < 2; r++) {
        double q[GPU_PARAMS_MAX];
        memcpy(q, p, sizeof q);
        const double v = minimise(&f, q);
        if (v < best - 1e-12) {
            best = v;
            memcpy(p, q, sizeof q);
        } else
            break;
    }
    free(ss);
    free(lt);
    double err = 0;
    for (int i = 0; i < n; i++)
        err += fabs(gpu_model_time(&s[i], h, p) / t[i] - 1);
    return err / n;
}
