/* predictor/device_price.c — an op's price on another device in the order of evidence
 * (device_price.h). */
#include "predictor/device_price.h"

#include "predictor/device_profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const SOURCE_NAMES[DP_SOURCE_COUNT] = {"exact",   "fitted",         "transfer",
                                                          "similar", "cpu-efficiency", "roofline"};

const char *dp_source_name(DevPriceSource s) { return s >= 0 && s < DP_SOURCE_COUNT ? SOURCE_NAMES[s] : "?"; }

double dp_cpu_band_factor(Precision prec)
{
    /* The largest measured / estimated step on an H200 with every op priced from this
     * CPU's efficiency (12-14 configurations per precision, host figures in): fp32 1.6,
     * tf32 2.4, bf16 4.0, rounded up. Tensor-core precisions are the least known: the
     * memory-bound ops (batch norm, pooling, layout transposes) take most of their step and
     * the CPU's efficiency says little of them. */
    switch (prec) {
    case PREC_TF32: return 3;
    case PREC_FP16:
    case PREC_BF16: return 4;
    default: return 2;
    }
}

void gpu_sheet_of(const DeviceSpec *d, Precision prec, GpuSheet *out)
{
    memset(out, 0, sizeof *out);
    out->peak_flops = prec == PREC_FP32 ? device_fp32_gemm_flops(d) : d->peak_flops[prec];
    out->bw_Bps = d->mem_Bps;
    out->l2_bytes = d->l2_bytes;
    out->sms = d->sm_count;
    out->byte_scale = precision_bytes(prec) / 4.0;
    out->tensor = prec == PREC_TF32 || prec == PREC_FP16 || prec == PREC_BF16;
}

struct DevicePricer {
    DeviceSpec dev;
    Precision prec;
    GpuSheet sheet;
    double feat[TF_COUNT];
    TransferPool *pool;
    DeviceEvidence *own; /* in the pool; NULL: none, or DP_NO_OWN */
    const CostModel *cpu;
    unsigned flags;
    double stream_eff; /* the device's streaming bandwidth share: own, or carried over; 0: not yet */
    DevicePricer *wide; /* at a precision other than fp32, the device at fp32: what prices its
                           memory-bound kernels (by their bytes) and the framework's fp32 work */
};

/* ---- the pool: every device with evidence at the precision, fitted (fits cached) ---- */

typedef struct {
    char names[256][48];
    int n;
    const char *precision;
} DeviceList;

static int list_device(const char *device, const char *precision, int calibrations, int measurements, void *ctx)
{
    DeviceList *l = ctx;
    (void)calibrations;
    if (strcmp(precision, l->precision) == 0 && measurements > 0 && l->n < 256)
        snprintf(l->names[l->n++], sizeof l->names[0], "%s", device);
    return 0;
}

typedef struct {
    char list[512];
} CalList;

static int append_id(const CalibrationRow *c, void *ctx)
{
    CalList *l = ctx;
    size_t n = strlen(l->list);
    snprintf(l->list + n, sizeof l->list - n, "%s%lld", n > 0 ? "," : "", (long long)c->id);
    return 0;
}

typedef struct {
    DeviceEvidence *ev;
    const char *want;
    int loaded, stale;
} FitLoad;

static int load_fit(const DeviceFitRow *r, void *ctx)
{
    FitLoad *l = ctx;
    if (strcmp(r->calibrations, l->want) != 0) {
        l->stale = 1;
        return 1;
    }
    GpuGroupFit f = {.points = r->points, .fit_err = r->fit_err, .band = r->band};
    snprintf(f.group, sizeof f.group, "%s", r->group);
    if (gpu_form_parse(r->form, &f.form) != 0) {
        l->stale = 1;
        return 1;
    }
    const int np = gpu_form_nparams(f.form);
    const char *s = r->params;
    for (int i = 0; i < np; i++) {
        char *end;
        f.p[i] = strtod(s, &end);
        if (end == s) {
            l->stale = 1;
            return 1;
        }
        s = end;
    }
    if (dev_ev_set_fit(l->ev, &f) != 0) {
        l->stale = 1;
        return 1;
    }
    l->loaded++;
    return 0;
}

static int store_fits(Db *db, const DeviceEvidence *ev, const char *precision, const char *cals)
{
    const GpuGroupFit *g;
    const int n = dev_ev_groups(ev, &g);
    DeviceFitRow *rows = calloc((size_t)(n > 0 ? n : 1), sizeof *rows);
    if (!rows)
        return -1;
    for (int i = 0; i < n; i++) {
        DeviceFitRow *r = &rows[i];
        snprintf(r->group, sizeof r->group, "%s", g[i].group);
        snprintf(r->form, sizeof r->form, "%s", gpu_form_name(g[i].form));
        size_t l = 0;
        for (int k = 0; k < gpu_form_nparams(g[i].form); k++)
            l += (size_t)snprintf(r->params + l, sizeof r->params - l, "%s%.9g", k ? " " : "", g[i].p[k]);
        r->points = g[i].points;
        r->fit_err = g[i].fit_err;
        r->band = g[i].band;
        snprintf(r->calibrations, sizeof r->calibrations, "%s", cals);
    }
    const int rc = db_device_fits_put(db, dev_ev_device(ev), precision, rows, n);
    free(rows);
    return rc;
}

/* The device's evidence at the precision from the database, fitted (the fits cached there
 * and made again when its calibrations or the forms' version changed). 0 and *out (NULL:
 * none), or -1 with err. */
static int load_device(Db *db, const DeviceSpec *spec, Precision prec, void (*progress)(const char *, int, void *),
                       void *ctx, DeviceEvidence **out, char *err, size_t errlen)
{
    const char *pn = precision_name(prec);
    *out = NULL;
    GpuSheet sheet;
    gpu_sheet_of(spec, prec, &sheet);
    DeviceEvidence *ev = dev_ev_new(spec->name, &sheet);
    if (!ev) {
        snprintf(err, errlen, "out of memory loading the evidence of %s", spec->name);
        return -1;
    }
    const int pts = dev_ev_load(ev, db, pn, err, errlen);
    if (pts <= 0) {
        dev_ev_free(ev);
        return pts < 0 ? -1 : 0;
    }
    CalList cl = {""};
    snprintf(cl.list, sizeof cl.list, "%s:", GPU_MODEL_VERSION);
    if (db_device_calibrations(db, spec->name, pn, append_id, &cl) != 0) {
        dev_ev_free(ev);
        snprintf(err, errlen, "%s", db_errmsg(db));
        return -1;
    }
    FitLoad fl = {.ev = ev, .want = cl.list};
    if (db_device_fits_foreach(db, spec->name, pn, load_fit, &fl) != 0) {
        dev_ev_free(ev);
        snprintf(err, errlen, "%s", db_errmsg(db));
        return -1;
    }
    const GpuGroupFit *g;
    const bool fresh = !fl.stale && fl.loaded > 0 && fl.loaded == dev_ev_groups(ev, &g);
    if (!fresh) {
        if (progress)
            progress(spec->name, pts, ctx);
        DeviceEvidence *fitted = dev_ev_new(spec->name, &sheet); /* drop stale fits */
        if (!fitted) {
            dev_ev_free(ev);
            snprintf(err, errlen, "out of memory fitting %s", spec->name);
            return -1;
        }
        dev_ev_free(ev);
        ev = fitted;
        if (dev_ev_load(ev, db, pn, err, errlen) < 0) {
            dev_ev_free(ev);
            return -1;
        }
        dev_ev_fit(ev);
        if (store_fits(db, ev, pn, cl.list) != 0) {
            /* a read-only database still prices: the fit is made again next time */
        }
    } else
        dev_ev_fit(ev); /* the exact-key index */
    *out = ev;
    return 0;
}

DeviceEvidence *dp_device_evidence(Db *db, const DeviceSpec *dev, Precision prec,
                                   void (*progress)(const char *device, int points, void *ctx), void *ctx, char *err,
                                   size_t errlen)
{
    DeviceEvidence *ev = NULL;
    err[0] = 0;
    if (load_device(db, dev, prec, progress, ctx, &ev, err, errlen) != 0)
        return NULL;
    return ev;
}

static int load_pool(DevicePricer *p, Db *db, void (*progress)(const char *, int, void *), void *ctx, char *err,
                     size_t errlen)
{
    DeviceList l = {.n = 0, .precision = precision_name(p->prec)};
    if (db_device_evidence_foreach(db, list_device, &l) != 0) {
        snprintf(err, errlen, "%s", db_errmsg(db));
        return -1;
    }
    for (int i = 0; i < l.n; i++) {
        DeviceSpec spec;
        char e2[512];
        if (device_load(db, l.names[i], &spec, e2, sizeof e2) != 0)
            continue; /* evidence of a device whose sheet is gone: nothing to carry it by */
        DeviceEvidence *ev;
        if (load_device(db, &spec, p->prec, progress, ctx, &ev, err, errlen) != 0)
            return -1;
        if (!ev)
            continue;
        double feat[TF_COUNT];
        transfer_features(&spec, feat);
        if (tp_add(p->pool, ev, feat, spec.arch) != 0) {
            dev_ev_free(ev);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

/* The built-in profiles of devices the database has no evidence of at the precision: a fresh
 * clone's evidence (a database's own measurements of a device replace its profile). A
 * profile that does not load (its sheet is gone, a kernel model this dlperf does not price
 * with) is left out: the built-in profiles are checked by the tests. */
static int load_profiles(DevicePricer *p, Db *db, char *err, size_t errlen)
{
    const char *prec = precision_name(p->prec);
    for (int i = 0; i < profile_builtin_count(); i++) {
        const char *path, *text = profile_builtin(i, &path);
        char name[48], e2[512];
        DeviceSpec spec;
        if (profile_device(text, path, name, e2, sizeof e2) != 0 || tp_find(p->pool, name) ||
            device_load(db, name, &spec, e2, sizeof e2) != 0)
            continue;
        GpuSheet sheet;
        gpu_sheet_of(&spec, p->prec, &sheet);
        DeviceEvidence *ev;
        if (profile_load(text, path, prec, &sheet, &ev, e2, sizeof e2) != 0)
            continue;
        double feat[TF_COUNT];
        transfer_features(&spec, feat);
        if (tp_add(p->pool, ev, feat, spec.arch) != 0) {
            dev_ev_free(ev);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

DevicePricer *dp_new(const DeviceSpec *dev, Precision prec, TransferPool *pool, const CostModel *cpu, unsigned flags)
{
    DevicePricer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->pool = pool ? pool : tp_new();
    if (!p->pool) {
        free(p);
        return NULL;
    }
    p->dev = *dev;
    p->prec = prec;
    p->cpu = cpu;
    p->flags = flags;
    gpu_sheet_of(dev, prec, &p->sheet);
    transfer_features(dev, p->feat);
    if (!(flags & DP_NO_OWN))
        p->own = tp_find(p->pool, dev->name);
    return p;
}

DevicePricer *dp_open(Db *db, const DeviceSpec *dev, Precision prec, const CostModel *cpu, unsigned flags,
                      void (*progress)(const char *device, int points, void *ctx), void *ctx, char *err,
                      size_t errlen)
{
    DevicePricer *p = dp_new(dev, prec, NULL, cpu, flags);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if ((db && load_pool(p, db, progress, ctx, err, errlen) != 0) ||
        (!(flags & DP_NO_PROFILES) && load_profiles(p, db, err, errlen) != 0)) {
        dp_free(p);
        return NULL;
    }
    if (!(flags & DP_NO_OWN))
        p->own = tp_find(p->pool, dev->name);
    if (prec != PREC_FP32 && dev->peak_flops[PREC_FP32] > 0 &&
        !(p->wide = dp_open(db, dev, PREC_FP32, cpu, flags, progress, ctx, err, errlen))) {
        dp_free(p);
        return NULL;
    }
    return p;
}

void dp_free(DevicePricer *p)
{
    if (!p)
        return;
    dp_free(p->wide);
    tp_free(p->pool);
    free(p);
}

bool dp_has_evidence(const DevicePricer *p)
{
    if (p->own)
        return true;
    for (int i = 0; i < tp_count(p->pool); i++)
        if (strcmp(dev_ev_device(tp_device(p->pool, i)), p->dev.name) != 0)
            return true;
    return false;
}

int dp_pool_devices(const DevicePricer *p) { return tp_count(p->pool); }
int dp_own_points(const DevicePricer *p) { return p->own ? dev_ev_points(p->own) : 0; }
const DeviceEvidence *dp_own_evidence(const DevicePricer *p) { return p->own; }

static const char *exclude_of(const DevicePricer *p) { return p->flags & DP_NO_OWN ? p->dev.name : NULL; }

int dp_pool_groups(const DevicePricer *p, char (**groups)[GPU_GROUP_MAX], int *n)
{
    int cap = 0;
    *groups = NULL;
    *n = 0;
    for (int i = 0; i < tp_count(p->pool); i++) {
        const GpuGroupFit *g;
        const int m = dev_ev_groups(tp_device(p->pool, i), &g);
        for (int j = 0; j < m; j++) {
            int k = 0;
            while (k < *n && strcmp((*groups)[k], g[j].group) != 0)
                k++;
            if (k < *n)
                continue;
            if (*n == cap) {
                cap = cap ? 2 * cap : 32;
                char(*v)[GPU_GROUP_MAX] = realloc(*groups, (size_t)cap * sizeof *v);
                if (!v) {
                    free(*groups);
                    *groups = NULL;
                    *n = 0;
                    return -1;
                }
                *groups = v;
            }
            snprintf((*groups)[(*n)++], GPU_GROUP_MAX, "%s", g[j].group);
        }
    }
    return 0;
}

int dp_group_params(DevicePricer *p, const char *group, GpuGroupFit *out, bool *own, TransferInfo *info)
{
    memset(info, 0, sizeof *info);
    const GpuGroupFit *f = p->own ? dev_ev_group(p->own, group) : NULL;
    if (f) {
        *out = *f;
        *own = true;
        return 0;
    }
    *own = false;
    return tp_params(p->pool, group, p->feat, p->dev.arch, exclude_of(p), out, info) == 0 ? 0 : 1;
}

static void first_word(const char *s, char *out, size_t n)
{
    size_t l = strcspn(s, " ");
    snprintf(out, n, "%.*s", (int)l, s);
}

/* The device's streaming bandwidth share: its own element-wise groups' where it has them,
 * else the median of what other devices' element-wise groups carry over to it. */
static double target_stream_eff(DevicePricer *p)
{
    if (p->stream_eff > 0)
        return p->stream_eff;
    if (p->own && dev_ev_stream_eff(p->own) > 0)
        return p->stream_eff = dev_ev_stream_eff(p->own);
    char(*groups)[GPU_GROUP_MAX];
    int n;
    if (dp_pool_groups(p, &groups, &n) != 0)
        return 0;
    double v[256];
    int m = 0;
    const int k = gpu_param_index(GF_STREAM, "e_inf");
    for (int i = 0; i < n && m < 256; i++) {
        GpuGroupFit f;
        TransferInfo info;
        if (strstr(groups[i], "@framework") || tp_params(p->pool, groups[i], p->feat, p->dev.arch, exclude_of(p), &f, &info) != 0 ||
            f.form != GF_STREAM)
            continue;
        v[m++] = f.p[k];
    }
    free(groups);
    if (m == 0)
        return 0;
    for (int i = 1; i < m; i++) /* insertion sort: a few dozen groups */
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            const double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return p->stream_eff = m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

/* How near a candidate group is to the op's: its own group at kernel scope (a framework call
 * nobody timed is priced by its kernels), then the same op kind, then any of the form. */
static int group_rank(const char *want, const char *kind, const char *cand)
{
    const char *fw = strstr(want, " @framework");
    const size_t base = fw ? (size_t)(fw - want) : strlen(want);
    if (strlen(cand) == base && strncmp(cand, want, base) == 0)
        return 2;
    char k2[GPU_GROUP_MAX];
    first_word(cand, k2, sizeof k2);
    return strcmp(kind, k2) == 0 ? 1 : 0;
}

/* A group of the same form to price an op of a group nothing measured: the device's own
 * (the nearest by group_rank, then the most points), else the nearest the most devices have. */
static bool similar_group(const DevicePricer *p, const GpuShape *s, char out[GPU_GROUP_MAX], bool *own)
{
    char kind[GPU_GROUP_MAX];
    first_word(s->group, kind, sizeof kind);
    int best = -1, best_rank = -1;
    if (p->own) {
        const GpuGroupFit *g;
        const int n = dev_ev_groups(p->own, &g);
        for (int i = 0; i < n; i++) {
            if (g[i].form != s->form || strstr(g[i].group, "@framework"))
                continue;
            const int rank = group_rank(s->group, kind, g[i].group);
            if (rank > best_rank || (rank == best_rank && g[i].points > best)) {
                best = g[i].points;
                best_rank = rank;
                snprintf(out, GPU_GROUP_MAX, "%s", g[i].group);
            }
        }
        if (best >= 0) {
            *own = true;
            return true;
        }
    }
    /* the pool: count the devices holding each candidate group */
    for (int i = 0; i < tp_count(p->pool); i++) {
        const DeviceEvidence *ev = tp_device(p->pool, i);
        if (exclude_of(p) && strcmp(dev_ev_device(ev), exclude_of(p)) == 0)
            continue;
        const GpuGroupFit *g;
        const int n = dev_ev_groups(ev, &g);
        for (int j = 0; j < n; j++) {
            if (g[j].form != s->form || strstr(g[j].group, "@framework"))
                continue;
            int holders = 0;
            for (int k = 0; k < tp_count(p->pool); k++)
                if (dev_ev_group(tp_device(p->pool, k), g[j].group))
                    holders++;
            const int rank = group_rank(s->group, kind, g[j].group);
            if (rank > best_rank || (rank == best_rank && holders > best)) {
                best = holders;
                best_rank = rank;
                snprintf(out, GPU_GROUP_MAX, "%s", g[j].group);
            }
        }
    }
    *own = false;
    return best >= 0;
}

int dp_price(DevicePricer *p, const OpDesc *d, DevPrice *out, char *err, size_t errlen)
{
    return dp_price_scope(p, d, false, out, err, errlen);
}

/* The GPU evidence's price of d with its values byte_scale wide: 0, or 1 where no GPU
 * evidence prices it. */
static int price_by_evidence(DevicePricer *p, const OpDesc *d, double byte_scale, bool framework, DevPrice *out)
{
    memset(out, 0, sizeof *out);
    GpuShape s;
    const bool described = gpu_shape(d, byte_scale, &s);
    if (described && framework)
        snprintf(s.group + strlen(s.group), sizeof s.group - strlen(s.group), " @framework");
    if (described)
        snprintf(out->group, sizeof out->group, "%s", s.group);
    /* the device's own evidence */
    if (described && p->own) {
        EvSource src;
        if (dev_ev_price_at(p->own, d, byte_scale, framework, &out->time_s, &out->lo_s, &out->hi_s, &src) == 0) {
            out->source = src == EV_EXACT ? DP_EXACT : DP_FITTED;
            return 0;
        }
    }
    /* other devices' evidence of the group */
    if (described && p->sheet.peak_flops > 0 && p->sheet.bw_Bps > 0) {
        GpuGroupFit f;
        TransferInfo info;
        if (tp_params(p->pool, s.group, p->feat, p->dev.arch, exclude_of(p), &f, &info) == 0 &&
            (s.form != GF_TILES || p->sheet.sms > 0)) {
            if (s.form == GF_ROWS && target_stream_eff(p) > 0) /* fitted against the device's own */
                f.p[gpu_param_index(GF_ROWS, "e_inf")] = target_stream_eff(p);
            out->time_s = gpu_model_time(&s, &p->sheet, f.p);
            out->lo_s = out->time_s / (1 + f.band);
            out->hi_s = out->time_s * (1 + f.band);
            out->source = DP_TRANSFER;
            snprintf(out->from, sizeof out->from, "%s", info.nearest);
            return 0;
        }
        /* a group of the same form */
        char g[GPU_GROUP_MAX];
        bool own;
        if (similar_group(p, &s, g, &own) && (s.form != GF_TILES || p->sheet.sms > 0)) {
            const GpuGroupFit *gf = own ? dev_ev_group(p->own, g) : NULL;
            if (!gf && tp_params(p->pool, g, p->feat, p->dev.arch, exclude_of(p), &f, &info) == 0)
                gf = &f;
            if (gf) {
                double q[GPU_PARAMS_MAX];
                memcpy(q, gf->p, sizeof q);
                /* A rows group's row term is its own kind's work per row (a softmax's passes
                 * over its row, against its length): a pooling window of 4 values priced by a
                 * softmax's half-speed length of hundreds ran at a hundredth of the bandwidth.
                 * Another kind's rows stream at the device's share. */
                char kind[GPU_GROUP_MAX], k2[GPU_GROUP_MAX];
                first_word(s.group, kind, sizeof kind);
                first_word(g, k2, sizeof k2);
                if (s.form == GF_ROWS && strcmp(kind, k2) != 0) {
                    q[gpu_param_index(GF_ROWS, "h0")] = 0;
                    if (target_stream_eff(p) > 0)
                        q[gpu_param_index(GF_ROWS, "e_inf")] = target_stream_eff(p);
                }
                out->time_s = gpu_model_time(&s, &p->sheet, q);
                const double band = 2 * (gf->band > 0.1 ? gf->band : 0.1);
                out->lo_s = out->time_s / (1 + band);
                out->hi_s = out->time_s * (1 + band);
                out->source = DP_SIMILAR;
                snprintf(out->from, sizeof out->from, "%s", g);
                return 0;
            }
        }
    }
    return 1;
}

int dp_price_scope(DevicePricer *p, const OpDesc *d, bool framework, DevPrice *out, char *err, size_t errlen)
{
    if (price_by_evidence(p, d, p->sheet.byte_scale, framework, out) == 0)
        return 0;
    /* A memory-bound kernel does the same at any precision but for the bytes it moves (a
     * tf32 step's element-wise ops are fp32 kernels): the fp32 evidence prices it at this
     * width. GEMMs and convolutions are not: their rate is the precision's. */
    GpuShape s;
    DevPrice wide;
    if (p->wide && gpu_shape(d, p->sheet.byte_scale, &s) && (s.form == GF_STREAM || s.form == GF_ROWS) &&
        price_by_evidence(p->wide, d, p->sheet.byte_scale, framework, &wide) == 0) {
        *out = wide;
        snprintf(out->from + strlen(out->from), sizeof out->from - strlen(out->from), "%sfp32 evidence",
                 out->from[0] ? ", " : "");
        return 0;
    }
    const OpCost c = op_cost(d);
    const double byte_scale = p->sheet.byte_scale;
    const double peak = p->dev.peak_flops[p->prec];
    const double roof = fmax(peak > 0 ? c.flops / peak : 0, p->dev.mem_Bps > 0 ? c.bytes * byte_scale / p->dev.mem_Bps : 0);
    /* this machine's efficiency at the op, carried to the device's roofline */
    if (p->cpu) {
        OpPrice pr;
        char e2[256];
        if (cm_price_cached(p->cpu, d, 0.0, &pr, e2, sizeof e2) == 0) {
            double peak_here, bw_here;
            cm_limits(p->cpu, &peak_here, &bw_here);
            const double roof_here =
                fmax(peak_here > 0 ? c.flops / peak_here : 0, bw_here > 0 ? c.bytes / bw_here : 0);
            const double eff = pr.time_s > 0 && roof_here > 0 ? fmin(1.0, roof_here / pr.time_s) : 1.0;
            out->time_s = roof / eff + p->dev.launch_s;
            out->lo_s = roof + p->dev.launch_s;
            out->hi_s = dp_cpu_band_factor(p->prec) * out->time_s;
            out->source = DP_CPU;
            return 0;
        }
    }
    if (!(roof > 0)) {
        snprintf(err, errlen, "%s: no evidence prices this op on %s and its roofline is 0", op_kind_name(d->kind),
                 p->dev.name);
        return -1;
    }
    out->time_s = roof + p->dev.launch_s;
    out->lo_s = out->time_s;
    out->hi_s = 4 * out->time_s;
    out->source = DP_ROOFLINE;
    return 0;
}

int dp_price_stream(DevicePricer *p, double bytes, DevPrice *out, char *err, size_t errlen)
{
    DevicePricer *w = p->wide ? p->wide : p;
    /* an fp32 element-wise add of as many bytes (three arrays of `values`) */
    const double values = fmax(1.0, round(bytes / 12.0));
    const OpDesc d = op_binary(PHASE_FWD, BIN_ADD, (size_t)values);
    if (dp_price_scope(w, &d, false, out, err, errlen) != 0)
        return -1;
    if (out->source == DP_CPU || out->source == DP_ROOFLINE) {
        /* No GPU evidence of streaming: the bytes at the device's bandwidth. This CPU's
         * efficiency at an add of 10^8 values says nothing of a GPU's copy engine. */
        out->time_s = (w->dev.mem_Bps > 0 ? bytes / w->dev.mem_Bps : 0) + w->dev.launch_s;
        out->lo_s = out->time_s;
        out->hi_s = 4 * out->time_s;
        out->source = DP_ROOFLINE;
    }
    return 0;
}

void dp_set_wide(DevicePricer *p, DevicePricer *wide)
{
    dp_free(p->wide);
    p->wide = wide;
}
