/* predictor/device_evidence.c — a device's own measurements, grouped and fitted
 * (device_evidence.h). */
#include "predictor/device_evidence.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    GpuShape s;
    double t, lo, hi;
    double resid;          /* log(measured / fitted), set by the fit */
    char key[OP_KEY_MAX];
} Point;

typedef struct {
    GpuGroupFit fit;
    bool fitted;
    int *idx;              /* its points */
    int n, cap;
} Group;

typedef struct {
    const char *key;
    int point;
} KeyRef;

struct DeviceEvidence {
    char device[48];
    GpuSheet sheet;
    Point *pts;
    int n, cap;
    Group *groups;
    int ngroups, gcap;
    GpuGroupFit *fits;     /* dev_ev_groups' view */
    KeyRef *keys;          /* sorted by key, for exact lookups (built by dev_ev_fit) */
    int nkeys;
    double stream_eff;     /* the median e_inf of its stream-form groups; 0: none */
};

DeviceEvidence *dev_ev_new(const char *device, const GpuSheet *h)
{
    DeviceEvidence *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    snprintf(e->device, sizeof e->device, "%s", device);
    e->sheet = *h;
    return e;
}

void dev_ev_free(DeviceEvidence *e)
{
    if (!e)
        return;
    for (int g = 0; g < e->ngroups; g++)
        free(e->groups[g].idx);
    free(e->groups);
    free(e->pts);
    free(e->fits);
    free(e->keys);
    free(e);
}

const char *dev_ev_device(const DeviceEvidence *e) { return e->device; }
const GpuSheet *dev_ev_sheet(const DeviceEvidence *e) { return &e->sheet; }
int dev_ev_points(const DeviceEvidence *e) { return e->n; }

void dev_ev_key(const OpDesc *d, char key[OP_KEY_MAX])
{
    OpDesc c = *d;
    switch (c.kind) {
    case OP_CONV2D:
        c.u.conv.accumulate = false;
        c.u.conv.ws_slice_floats = 0;
        break;
    case OP_POOL2D: c.u.pool.accumulate = false; break;
    case OP_BIAS: c.u.bias.accumulate = false; break;
    case OP_BATCHNORM: c.u.bn.accumulate = false; break;
    case OP_LRN: c.u.lrn.accumulate = false; break;
    case OP_CHANNEL_COPY: c.u.chan.accumulate = false; break;
    case OP_EMBEDDING: c.u.embed.accumulate = false; break;
    case OP_LAYERNORM: c.u.ln.accumulate = false; break;
    case OP_SOFTMAX: /* an eager framework masks the scores and softmaxes whole rows */
        c.u.softmax.accumulate = false;
        c.u.softmax.causal = false;
        break;
    case OP_BMM: /* a strided batched GEMM runs the packed one's kernel for its shape */
        c.u.bmm.lda = c.u.bmm.ldb = c.u.bmm.ldc = 0;
        c.u.bmm.stride_a = c.u.bmm.stride_b = c.u.bmm.stride_c = 0;
        break;
    case OP_BINARY: c.u.binary.accumulate = false; break;
    case OP_SCALAR: c.u.scalar.accumulate = false; break;
    default: break;
    }
    op_key(&c, key);
}

/* A framework-scope point's key: "@" before the op's (keys are far shorter than OP_KEY_MAX) */
static void at_key(char key[OP_KEY_MAX])
{
    const size_t n = strlen(key);
    if (n + 2 > OP_KEY_MAX)
        return;
    memmove(key + 1, key, n + 1);
    key[0] = '@';
}

static int find_group(const DeviceEvidence *e, const char *group)
{
    for (int g = 0; g < e->ngroups; g++)
        if (strcmp(e->groups[g].fit.group, group) == 0)
            return g;
    return -1;
}

static int add_group(DeviceEvidence *e, const char *group, GpuForm form)
{
    if (e->ngroups == e->gcap) {
        int cap = e->gcap ? 2 * e->gcap : 16;
        Group *g = realloc(e->groups, (size_t)cap * sizeof *g);
        if (!g)
            return -1;
        e->groups = g;
        e->gcap = cap;
    }
    Group *g = &e->groups[e->ngroups];
    memset(g, 0, sizeof *g);
    snprintf(g->fit.group, sizeof g->fit.group, "%s", group);
    g->fit.form = form;
    return e->ngroups++;
}

static int add_point(DeviceEvidence *e, const Point *pt);

int dev_ev_add(DeviceEvidence *e, const OpDesc *d, double time_s, double lo_s, double hi_s, bool framework)
{
    Point p = {.t = time_s, .lo = lo_s > 0 ? lo_s : time_s, .hi = hi_s > 0 ? hi_s : time_s};
    if (!(time_s > 0) || !gpu_shape(d, e->sheet.byte_scale, &p.s))
        return -1;
    dev_ev_key(d, p.key);
    if (framework) { /* a framework call's time is another kind of evidence than its kernels' */
        snprintf(p.s.group + strlen(p.s.group), sizeof p.s.group - strlen(p.s.group), " @framework");
        at_key(p.key);
    }
    return add_point(e, &p);
}

int dev_ev_add_shape(DeviceEvidence *e, const GpuShape *s, double time_s)
{
    Point p = {.s = *s, .t = time_s, .lo = time_s, .hi = time_s}; /* no key: never an exact price */
    if (!(time_s > 0))
        return -1;
    return add_point(e, &p);
}

static int add_point(DeviceEvidence *e, const Point *pt)
{
    const Point p = *pt;
    int g = find_group(e, p.s.group);
    if (g < 0 && (g = add_group(e, p.s.group, p.s.form)) < 0)
        return -1;
    Group *G = &e->groups[g];
    if (e->n == e->cap) {
        int cap = e->cap ? 2 * e->cap : 1024;
        Point *v = realloc(e->pts, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        e->pts = v;
        e->cap = cap;
    }
    if (G->n == G->cap) {
        int cap = G->cap ? 2 * G->cap : 256;
        int *v = realloc(G->idx, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        G->idx = v;
        G->cap = cap;
    }
    e->pts[e->n] = p;
    G->idx[G->n++] = e->n++;
    G->fitted = false;
    return 0;
}

typedef struct {
    DeviceEvidence *e;
    int added;
    char *err;
    size_t errlen;
} LoadCtx;

static int load_row(const MeasurementRow *m, void *ctx)
{
    LoadCtx *l = ctx;
    OpDesc d;
    if (!m->validated || !op_key_parse(m->key, &d))
        return 0; /* a key this dlperf no longer reads: not evidence */
    if (dev_ev_add(l->e, &d, m->median_s, m->min_s, m->max_s, strcmp(m->scope, "framework") == 0) == 0)
        l->added++;
    return 0;
}

typedef struct {
    int64_t ids[1024];
    int n;
} IdList;

static int collect_id(const CalibrationRow *c, void *ctx)
{
    IdList *l = ctx;
    if (l->n < (int)(sizeof l->ids / sizeof l->ids[0]))
        l->ids[l->n++] = c->id;
    return 0;
}

int dev_ev_load(DeviceEvidence *e, Db *db, const char *precision, char *err, size_t errlen)
{
    IdList ids = {.n = 0};
    if (db_device_calibrations(db, e->device, precision, collect_id, &ids) != 0) {
        snprintf(err, errlen, "%s", db_errmsg(db));
        return -1;
    }
    LoadCtx l = {.e = e, .err = err, .errlen = errlen};
    for (int i = 0; i < ids.n; i++)
        if (db_measurement_foreach(db, ids.ids[i], load_row, &l) != 0) {
            snprintf(err, errlen, "%s", db_errmsg(db));
            return -1;
        }
    return l.added;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_keyref(const void *a, const void *b) { return strcmp(((const KeyRef *)a)->key, ((const KeyRef *)b)->key); }

static void fit_group(DeviceEvidence *e, Group *G, const double *fixed)
{
    GpuShape *s = malloc((size_t)G->n * sizeof *s);
    double *t = malloc((size_t)G->n * sizeof *t), *err = malloc((size_t)G->n * sizeof *err);
    if (!s || !t || !err) {
        free(s), free(t), free(err);
        return;
    }
    for (int i = 0; i < G->n; i++) {
        s[i] = e->pts[G->idx[i]].s;
        t[i] = e->pts[G->idx[i]].t;
    }
    G->fit.fit_err = gpu_model_fit(s, t, G->n, &e->sheet, fixed, G->fit.p);
    G->fit.points = G->n;
    for (int i = 0; i < G->n; i++) {
        Point *p = &e->pts[G->idx[i]];
        const double m = gpu_model_time(&p->s, &e->sheet, G->fit.p);
        p->resid = log(p->t / m);
        err[i] = fabs(p->t / m - 1);
    }
    qsort(err, (size_t)G->n, sizeof *err, cmp_double);
    G->fit.band = err[(int)(0.68 * (G->n - 1))];
    G->fitted = true;
    free(s), free(t), free(err);
}

static void build_keys(DeviceEvidence *e)
{
    free(e->keys);
    e->keys = malloc((size_t)(e->n > 0 ? e->n : 1) * sizeof *e->keys);
    e->nkeys = 0;
    if (!e->keys)
        return;
    for (int i = 0; i < e->n; i++) /* framework-scope points keyed "@key"; a profile's none */
        if (e->pts[i].key[0])
            e->keys[e->nkeys++] = (KeyRef){e->pts[i].key, i};
    qsort(e->keys, (size_t)e->nkeys, sizeof *e->keys, cmp_keyref);
}

/* The median bandwidth share e_inf of the device's stream-form groups (its kernel-scope
 * element-wise ops): how much of its bandwidth a memory-bound kernel reaches on it. */
static double stream_eff_of(const DeviceEvidence *e)
{
    double v[256];
    int n = 0;
    const int k = gpu_param_index(GF_STREAM, "e_inf");
    for (int g = 0; g < e->ngroups && n < 256; g++)
        if (e->groups[g].fitted && e->groups[g].fit.form == GF_STREAM && !strstr(e->groups[g].fit.group, "@framework"))
            v[n++] = e->groups[g].fit.p[k];
    if (n == 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void dev_ev_fit(DeviceEvidence *e)
{
    /* the row reductions last: their bandwidth share is the device's streaming one (a
     * softmax reads and writes its rows as an element-wise op does), so that their own
     * parameters say what they cost beyond it (their arithmetic per element, short rows) */
    for (int g = 0; g < e->ngroups; g++)
        if (!e->groups[g].fitted && e->groups[g].n > 0 && e->groups[g].fit.form != GF_ROWS)
            fit_group(e, &e->groups[g], NULL);
    e->stream_eff = stream_eff_of(e);
    double fixed[GPU_PARAMS_MAX];
    for (int i = 0; i < GPU_PARAMS_MAX; i++)
        fixed[i] = NAN;
    if (e->stream_eff > 0)
        fixed[gpu_param_index(GF_ROWS, "e_inf")] = e->stream_eff;
    for (int g = 0; g < e->ngroups; g++)
        if (!e->groups[g].fitted && e->groups[g].n > 0 && e->groups[g].fit.form == GF_ROWS)
            fit_group(e, &e->groups[g], fixed);
    build_keys(e);
}

double dev_ev_stream_eff(const DeviceEvidence *e) { return e->stream_eff; }

int dev_ev_set_fit(DeviceEvidence *e, const GpuGroupFit *f)
{
    int g = find_group(e, f->group);
    if (g < 0 && (g = add_group(e, f->group, f->form)) < 0)
        return -1;
    e->groups[g].fit = *f;
    e->groups[g].fitted = true;
    /* the points keep residuals against these parameters */
    for (int i = 0; i < e->groups[g].n; i++) {
        Point *p = &e->pts[e->groups[g].idx[i]];
        p->resid = log(p->t / gpu_model_time(&p->s, &e->sheet, f->p));
    }
    return 0;
}

const GpuGroupFit *dev_ev_group(const DeviceEvidence *e, const char *group)
{
    const int g = find_group(e, group);
    return g >= 0 && e->groups[g].fitted ? &e->groups[g].fit : NULL;
}

int dev_ev_groups(const DeviceEvidence *e, const GpuGroupFit **out)
{
    DeviceEvidence *w = (DeviceEvidence *)e; /* the view is a cache */
    free(w->fits);
    w->fits = malloc((size_t)(e->ngroups > 0 ? e->ngroups : 1) * sizeof *w->fits);
    int n = 0;
    for (int g = 0; w->fits && g < e->ngroups; g++)
        if (e->groups[g].fitted)
            w->fits[n++] = e->groups[g].fit;
    *out = w->fits;
    return n;
}

int dev_ev_group_points(const DeviceEvidence *e, const char *group, GpuShape **s, double **t)
{
    *s = NULL, *t = NULL;
    const int g = find_group(e, group);
    if (g < 0 || e->groups[g].n == 0)
        return 0;
    const Group *G = &e->groups[g];
    *s = malloc((size_t)G->n * sizeof **s);
    *t = malloc((size_t)G->n * sizeof **t);
    if (!*s || !*t) {
        free(*s), free(*t);
        *s = NULL, *t = NULL;
        return -1;
    }
    for (int i = 0; i < G->n; i++) {
        (*s)[i] = e->pts[G->idx[i]].s;
        (*t)[i] = e->pts[G->idx[i]].t;
    }
    return G->n;
}

/* the log dimensions the nearest points are found by */
static int dims(const GpuShape *s, double x[4])
{
    switch (s->form) {
    case GF_TILES:
        x[0] = log(s->b), x[1] = log(s->m), x[2] = log(s->n), x[3] = log(s->k);
        return 4;
    case GF_ROWS:
        x[0] = log(s->rows > 0 ? s->rows : 1), x[1] = log(s->row_len > 0 ? s->row_len : 1);
        return 2;
    default:
        x[0] = log(s->bytes > 0 ? s->bytes : 1);
        return 1;
    }
}

int dev_ev_price(const DeviceEvidence *e, const OpDesc *d, bool framework, double *t, double *lo, double *hi,
                 EvSource *src)
{
    return dev_ev_price_at(e, d, e->sheet.byte_scale, framework, t, lo, hi, src);
}

int dev_ev_price_at(const DeviceEvidence *e, const OpDesc *d, double byte_scale, bool framework, double *t, double *lo,
                    double *hi, EvSource *src)
{
    GpuShape s;
    if (!gpu_shape(d, byte_scale, &s))
        return -1;
    if (framework)
        snprintf(s.group + strlen(s.group), sizeof s.group - strlen(s.group), " @framework");
    const int g = find_group(e, s.group);
    if (g < 0 || !e->groups[g].fitted)
        return 1;
    const Group *G = &e->groups[g];
    char key[OP_KEY_MAX];
    dev_ev_key(d, key);
    if (framework) {
        at_key(key);
    }
    if (e->keys && e->nkeys > 0 && byte_scale == e->sheet.byte_scale) { /* a key measured at this width */
        KeyRef probe = {key, 0};
        const KeyRef *k = bsearch(&probe, e->keys, (size_t)e->nkeys, sizeof *e->keys, cmp_keyref);
        if (k) {
            /* every measurement of the key (several calibrations may hold it): their median */
            const KeyRef *a = k, *b = k;
            while (a > e->keys && strcmp((a - 1)->key, key) == 0)
                a--;
            while (b + 1 < e->keys + e->nkeys && strcmp((b + 1)->key, key) == 0)
                b++;
            double v[64];
            int n = 0;
            double l = INFINITY, h = 0;
            for (const KeyRef *r = a; r <= b && n < 64; r++) {
                const Point *p = &e->pts[r->point];
                v[n++] = p->t;
                l = fmin(l, p->lo);
                h = fmax(h, p->hi);
            }
            qsort(v, (size_t)n, sizeof *v, cmp_double);
            *t = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
            *lo = fmin(l, *t * 0.97);
            *hi = fmax(h, *t * 1.03);
            *src = EV_EXACT;
            return 0;
        }
    }
    double m = gpu_model_time(&s, &e->sheet, G->fit.p);
    /* the nearest points' ratio, a Gaussian kernel of 0.35 in log units (a factor 1.4 per
     * dimension), shrunk towards 1 by one pseudo-point */
    const double sigma = 0.35, cut = 9 * sigma * sigma;
    double x[4], y[4], sw = 0, swr = 0;
    const int nd = dims(&s, x);
    for (int i = 0; i < G->n; i++) {
        const Point *p = &e->pts[G->idx[i]];
        dims(&p->s, y);
        double d2 = 0;
        for (int j = 0; j < nd; j++)
            d2 += (x[j] - y[j]) * (x[j] - y[j]);
        if (d2 > cut)
            continue;
        const double w = exp(-d2 / (2 * sigma * sigma));
        sw += w;
        swr += w * p->resid;
    }
    if (sw > 0)
        m *= exp(swr / (sw + 1.0));
    *t = m;
    *lo = m / (1 + G->fit.band);
    *hi = m * (1 + G->fit.band);
    *src = EV_FITTED;
    return 0;
}
