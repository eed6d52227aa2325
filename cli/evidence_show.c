/* cli/evidence_show.c — `dlperf calibrate --show --device NAME`: what a device that is not
 * this machine has evidence for: its calibrations (imported or measured elsewhere), per op
 * kind, phase and precision the rows, shapes, times, scopes and frameworks, and the kernel
 * forms fitted to them (predictor/device_evidence.h). --csv: the evidence groups (op kind,
 * phase, precision), a row each.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/evidence_show.h"
#include "predictor/device_price.h"
#include "predictor/device_profile.h"

enum { KINDS_MAX = 64, FRAMEWORKS_MAX = 4 };

typedef struct {
    char kind[24], phase[16], precision[8];
    long rows;
    double flops_lo, flops_hi, t_lo, t_hi;
    char scopes[32];
    char frameworks[FRAMEWORKS_MAX][96];
    int nfw;
} KindStat;

typedef struct {
    KindStat k[KINDS_MAX];
    int n;
    const char *precision;
    long total;
} Stats;

static int add_measurement(const MeasurementRow *m, void *ctx)
{
    Stats *s = ctx;
    int i = 0;
    while (i < s->n && !(strcmp(s->k[i].kind, m->kind) == 0 && strcmp(s->k[i].phase, m->phase) == 0 &&
                         strcmp(s->k[i].precision, s->precision) == 0))
        i++;
    if (i == s->n) {
        if (s->n == KINDS_MAX)
            return 0;
        KindStat *k = &s->k[s->n++];
        memset(k, 0, sizeof *k);
        snprintf(k->kind, sizeof k->kind, "%s", m->kind);
        snprintf(k->phase, sizeof k->phase, "%s", m->phase);
        snprintf(k->precision, sizeof k->precision, "%s", s->precision);
        k->flops_lo = k->t_lo = INFINITY;
    }
    KindStat *k = &s->k[i];
    k->rows++;
    s->total++;
    k->flops_lo = fmin(k->flops_lo, m->flops), k->flops_hi = fmax(k->flops_hi, m->flops);
    k->t_lo = fmin(k->t_lo, m->median_s), k->t_hi = fmax(k->t_hi, m->median_s);
    if (m->scope[0] && !strstr(k->scopes, m->scope))
        snprintf(k->scopes + strlen(k->scopes), sizeof k->scopes - strlen(k->scopes), "%s%s", k->scopes[0] ? "," : "",
                 m->scope);
    int f = 0;
    while (f < k->nfw && strcmp(k->frameworks[f], m->framework) != 0)
        f++;
    if (f == k->nfw && k->nfw < FRAMEWORKS_MAX)
        snprintf(k->frameworks[k->nfw++], sizeof k->frameworks[0], "%s", m->framework);
    return 0;
}

typedef struct {
    Db *db;
    Stats *stats;
    cJSON *cals;
    int n;
    bool json;
    bool quiet; /* --csv: the calibrations counted, not printed */
} CalCtx;

static int show_calibration(const CalibrationRow *c, void *ctx)
{
    CalCtx *x = ctx;
    const long before = x->stats->total;
    x->stats->precision = c->precision;
    if (db_measurement_foreach(x->db, c->id, add_measurement, x->stats) != 0)
        return 1;
    const long rows = x->stats->total - before;
    if (x->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "id", (double)c->id);
        cJSON_AddStringToObject(o, "precision", c->precision);
        cJSON_AddStringToObject(o, "mode", c->mode);
        cJSON_AddStringToObject(o, "at", c->started_at);
        cJSON_AddStringToObject(o, "source", c->source);
        cJSON_AddNumberToObject(o, "measurements", (double)rows);
        cJSON_AddItemToArray(x->cals, o);
    } else if (!x->quiet) {
        char b[32];
        printf("  calibration %-4lld %-5s %s  %s measurements  %.120s%s\n", (long long)c->id, c->precision,
               c->started_at, fmt_count((double)rows, b, sizeof b), c->source, strlen(c->source) > 120 ? "..." : "");
    }
    x->n++;
    return 0;
}

typedef struct {
    cJSON *arr;
    bool json;
    int n;
} FitCtx;

static int show_fit(const DeviceFitRow *r, void *ctx)
{
    FitCtx *f = ctx;
    GpuForm form;
    if (gpu_form_parse(r->form, &form) != 0)
        return 0;
    double p[GPU_PARAMS_MAX] = {0};
    const char *s = r->params;
    const int np = gpu_form_nparams(form);
    for (int i = 0; i < np; i++) {
        char *end;
        p[i] = strtod(s, &end);
        s = end;
    }
    if (f->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "group", r->group);
        cJSON_AddStringToObject(o, "precision", r->precision);
        cJSON_AddStringToObject(o, "form", r->form);
        cJSON_AddNumberToObject(o, "points", r->points);
        cJSON_AddNumberToObject(o, "fit_err_pct", 100 * r->fit_err);
        cJSON_AddNumberToObject(o, "band_pct", 100 * r->band);
        cJSON *par = cJSON_AddObjectToObject(o, "params");
        for (int i = 0; i < np; i++)
            cJSON_AddNumberToObject(par, gpu_param_name(form, i), p[i]);
        cJSON_AddItemToArray(f->arr, o);
    } else {
        if (f->n++ == 0)
            printf("\nfitted kernel forms (predictor/gpu_model.h; t0 in us, b_half in bytes):\n"
                   "# %-26s %-5s %-7s %7s %8s %6s  parameters\n", "group", "prec", "form", "points", "fit err", "band");
        printf("  %-26s %-5s %-7s %7d %7.1f%% %5.1f%% ", r->group, r->precision, r->form, r->points, 100 * r->fit_err,
               100 * r->band);
        for (int i = 0; i < np; i++) {
            const char *name = gpu_param_name(form, i);
            if (strcmp(name, "t0") == 0)
                printf(" t0=%.1f", p[i] * 1e6);
            else
                printf(" %s=%.3g", name, p[i]);
        }
        printf("\n");
    }
    return 0;
}

typedef struct {
    char precs[8][8];
    int n;
    const char *device;
} PrecList;

static int list_prec(const char *device, const char *precision, int calibrations, int measurements, void *ctx)
{
    PrecList *l = ctx;
    (void)calibrations, (void)measurements;
    if (strcmp(device, l->device) == 0 && l->n < 8)
        snprintf(l->precs[l->n++], sizeof l->precs[0], "%s", precision);
    return 0;
}

/* What the device takes, per group, from the other devices' evidence at fp32 (its own
 * groups listed above): the parameters, the nearest source and the leave-one-out error. */
static void show_transferred(Db *db, const DeviceSpec *dev)
{
    char err[512];
    DevicePricer *p = dp_open(db, dev, PREC_FP32, NULL, 0, NULL, NULL, err, sizeof err);
    if (!p)
        return;
    char(*groups)[GPU_GROUP_MAX];
    int n;
    if (dp_pool_groups(p, &groups, &n) != 0) {
        dp_free(p);
        return;
    }
    int shown = 0;
    for (int i = 0; i < n; i++) {
        GpuGroupFit f;
        bool own;
        TransferInfo info;
        if (dp_group_params(p, groups[i], &f, &own, &info) != 0 || own || strstr(groups[i], "@framework"))
            continue;
        if (shown++ == 0)
            printf("\ncarried over from other devices' evidence at fp32 (predictor/device_transfer.h):\n"
                   "# %-26s %-7s %4s %-16s %6s %9s  parameters\n", "group", "form", "from", "nearest", "reach",
                   "LOO err");
        char reach[16];
        if (isinf(info.h))
            snprintf(reach, sizeof reach, "all");
        else
            snprintf(reach, sizeof reach, "%.1f", info.h);
        printf("  %-26s %-7s %4d %-16s %6s %8.1f%% ", groups[i], gpu_form_name(f.form), info.sources, info.nearest,
               reach, 100 * info.loo_err);
        for (int k = 0; k < gpu_form_nparams(f.form); k++) {
            const char *name = gpu_param_name(f.form, k);
            if (strcmp(name, "t0") == 0)
                printf(" t0=%.1f", f.p[k] * 1e6);
            else
                printf(" %s=%.3g", name, f.p[k]);
        }
        printf("\n");
    }
    free(groups);
    dp_free(p);
}

/* The device's built-in profile (device_profile.h), where it has one: per precision, its
 * groups' fits. JSON: into doc's "profile". Whether one was shown. */
static bool show_profile(const DeviceSpec *dev, bool superseded, cJSON *doc)
{
    static const Precision precs[] = {PREC_FP32, PREC_TF32, PREC_FP16, PREC_BF16};
    for (int i = 0; i < profile_builtin_count(); i++) {
        const char *path, *text = profile_builtin(i, &path);
        char name[48], err[512];
        if (profile_device(text, path, name, err, sizeof err) != 0 || strcmp(name, dev->name) != 0)
            continue;
        cJSON *pj = doc ? cJSON_AddObjectToObject(doc, "profile") : NULL;
        if (pj) {
            cJSON_AddStringToObject(pj, "path", path);
            cJSON_AddBoolToObject(pj, "superseded_by_database", superseded);
        }
        if (!doc)
            printf("\nbuilt-in profile %s (fitted from public measurements; %s):\n", path,
                   superseded ? "the database's own measurements of it are used instead" : "what it is priced from");
        for (size_t k = 0; k < sizeof precs / sizeof precs[0]; k++) {
            GpuSheet h;
            gpu_sheet_of(dev, precs[k], &h);
            DeviceEvidence *ev;
            if (profile_load(text, path, precision_name(precs[k]), &h, &ev, err, sizeof err) != 0)
                continue;
            const GpuGroupFit *g;
            const int n = dev_ev_groups(ev, &g);
            cJSON *arr = pj ? cJSON_AddArrayToObject(pj, precision_name(precs[k])) : NULL;
            if (!doc)
                printf("# %-5s %-30s %-7s %9s %8s\n", "prec", "group", "form", "points", "band");
            for (int j = 0; j < n; j++) {
                if (arr) {
                    cJSON *o = cJSON_CreateObject();
                    cJSON_AddStringToObject(o, "group", g[j].group);
                    cJSON_AddStringToObject(o, "form", gpu_form_name(g[j].form));
                    cJSON_AddNumberToObject(o, "points", g[j].points);
                    cJSON_AddNumberToObject(o, "band", g[j].band);
                    cJSON_AddItemToArray(arr, o);
                } else {
                    printf("  %-5s %-30s %-7s %9d %7.1f%%\n", precision_name(precs[k]), g[j].group,
                           gpu_form_name(g[j].form), g[j].points, 100 * g[j].band);
                }
            }
            dev_ev_free(ev);
        }
        return true;
    }
    return false;
}

/* --csv: a row per evidence group (op kind, phase, precision) with the JSON's fields; the
 * scopes and frameworks, lists, as one field each ("; " between frameworks). */
static void print_csv(const DeviceSpec *dev, const Stats *stats)
{
    printf("device,kind,phase,precision,rows,flops_min,flops_max,time_min_s,time_max_s,scope,frameworks\n");
    for (int i = 0; i < stats->n; i++) {
        const KindStat *k = &stats->k[i];
        char fw[FRAMEWORKS_MAX * 100] = "";
        for (int f = 0; f < k->nfw; f++)
            snprintf(fw + strlen(fw), sizeof fw - strlen(fw), "%s%s", f ? "; " : "", k->frameworks[f]);
        csv_field(stdout, dev->name);
        printf(",%s,%s,%s,%ld,%.9g,%.9g,%.9g,%.9g,", k->kind, k->phase, k->precision, k->rows, k->flops_lo, k->flops_hi,
               k->t_lo, k->t_hi);
        csv_field(stdout, k->scopes);
        putchar(',');
        csv_field(stdout, fw);
        putchar('\n');
    }
}

int evidence_show(Cli *cli, Db *db, const char *device, bool csv)
{
    char err[1024];
    DeviceSpec dev;
    int rc = device_load(db, device, &dev, err, sizeof err);
    if (rc != 0)
        return cli_error(cli, rc == DB_NOT_FOUND ? EXIT_USAGE : EXIT_FAIL, "--device %s: %s", device, err);
    if (dev.calibrated)
        return cli_error(cli, EXIT_USAGE, "--device %s is this machine: dlperf calibrate --show", device);
    PrecList pl = {.n = 0, .device = dev.name};
    if (db_device_evidence_foreach(db, list_prec, &pl) != 0)
        return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    Stats *stats = calloc(1, sizeof *stats);
    if (!stats)
        return cli_error(cli, EXIT_FAIL, "out of memory");
    cJSON *doc = cli->json ? cJSON_CreateObject() : NULL;
    CalCtx cc = {.db = db, .stats = stats, .json = cli->json, .quiet = csv,
                 .cals = doc ? cJSON_AddArrayToObject(doc, "calibrations") : NULL};
    if (!cli->json && !csv)
        printf("%s — %s: evidence in %s\n", dev.name, dev.title, db_path(db));
    for (int i = 0; i < pl.n; i++)
        if (db_device_calibrations(db, dev.name, pl.precs[i], show_calibration, &cc) != 0) {
            free(stats);
            cJSON_Delete(doc);
            return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
        }
    const bool has_profile = !csv && show_profile(&dev, cc.n > 0, doc);
    if (cc.n == 0 && !cli->json && !csv && !has_profile)
        printf("  no calibration of %s: 'dlperf import FILE... --device %s' stores measurements of it; its "
               "predictions come from other devices' evidence carried over by the sheets\n", dev.name, dev.name);
    /* the fits, made now where the evidence changed since the last */
    for (int i = 0; i < pl.n; i++) {
        Precision prec;
        if (precision_parse(pl.precs[i], &prec) != 0)
            continue;
        DevicePricer *p = dp_open(db, &dev, prec, NULL, DP_NO_PROFILES, cli_fitting_progress, (void *)cli->cmd,
                                  err, sizeof err); /* fits the database's evidence only */
        dp_free(p);
    }
    if (csv) {
        print_csv(&dev, stats);
        free(stats);
        return EXIT_OK;
    }
    if (cli->json) {
        cJSON *kinds = cJSON_AddArrayToObject(doc, "evidence");
        for (int i = 0; i < stats->n; i++) {
            const KindStat *k = &stats->k[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "kind", k->kind);
            cJSON_AddStringToObject(o, "phase", k->phase);
            cJSON_AddStringToObject(o, "precision", k->precision);
            cJSON_AddNumberToObject(o, "rows", (double)k->rows);
            cJSON_AddNumberToObject(o, "flops_min", k->flops_lo);
            cJSON_AddNumberToObject(o, "flops_max", k->flops_hi);
            cJSON_AddNumberToObject(o, "time_min_s", k->t_lo);
            cJSON_AddNumberToObject(o, "time_max_s", k->t_hi);
            cJSON_AddStringToObject(o, "scope", k->scopes);
            cJSON *fw = cJSON_AddArrayToObject(o, "frameworks");
            for (int f = 0; f < k->nfw; f++)
                cJSON_AddItemToArray(fw, cJSON_CreateString(k->frameworks[f]));
            cJSON_AddItemToArray(kinds, o);
        }
        FitCtx fc = {.arr = cJSON_AddArrayToObject(doc, "fits"), .json = true};
        for (int i = 0; i < pl.n; i++)
            db_device_fits_foreach(db, dev.name, pl.precs[i], show_fit, &fc);
        cJSON_AddStringToObject(doc, "device", dev.name);
        json_print(doc);
        free(stats);
        return EXIT_OK;
    }
    if (stats->n > 0) {
        printf("\n# %-13s %-12s %-5s %8s %21s %21s  %-9s %s\n", "kind", "phase", "prec", "rows", "GFLOP (min .. max)",
               "time (min .. max)", "scope", "frameworks");
        for (int i = 0; i < stats->n; i++) {
            const KindStat *k = &stats->k[i];
            char a[32], b[32], c[32];
            printf("  %-13s %-12s %-5s %8s %9.3g .. %-9.3g %9s .. %-9s  %-9s %s%s\n", k->kind, k->phase, k->precision,
                   fmt_count((double)k->rows, a, sizeof a), k->flops_lo / 1e9, k->flops_hi / 1e9,
                   fmt_time(k->t_lo, b, sizeof b), fmt_time(k->t_hi, c, sizeof c), k->scopes,
                   k->nfw ? k->frameworks[0] : "", k->nfw > 1 ? " (and others)" : "");
        }
    }
    FitCtx fc = {.json = false};
    for (int i = 0; i < pl.n; i++)
        db_device_fits_foreach(db, dev.name, pl.precs[i], show_fit, &fc);
    show_transferred(db, &dev);
    free(stats);
    return EXIT_OK;
}
