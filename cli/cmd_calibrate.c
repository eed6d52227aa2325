/* cli/cmd_calibrate.c — `dlperf calibrate`: measure this machine into the database.
 *
 * The families, in the order they are measured: every op of every zoo model's training
 * step at its default batch (what predictions of those models price exactly), then GEMM
 * sweeps, DeepBench's GEMM and convolution shapes, STREAM bandwidth and element-wise
 * size sweeps (what the fitted models for unmeasured shapes are built from).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "microbench/mb.h"
#include "models/plan.h"

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { stop_requested = sig; }

static const char *const family_names[] = {"model-op", "gemm-square", "gemm-deepbench", "conv-deepbench",
                                           "stream", "eltwise"};
enum { NFAMILIES = sizeof family_names / sizeof family_names[0], MAX_MODELS = 64 };

typedef struct {
    bool quick;
    bool family[NFAMILIES];   /* measured families (--only) */
    const ModelSpec *models[MAX_MODELS]; /* --models, default: the whole zoo */
    int nmodels;
    int batch;                /* --batch for the model ops, default: each model's */
} CalOpts;

enum { OPT_QUICK = 1, OPT_ONLY, OPT_MODELS, OPT_BATCH };

/* Splits a comma-separated list, calling fn on each item; stops at the first error. */
static int each_item(const char *list, int (*fn)(const char *item, void *ctx), void *ctx)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save))
        if (fn(it, ctx) != 0)
            return -1;
    return 0;
}

typedef struct {
    Cli *cli;
    CalOpts *o;
} ItemCtx;

static int only_item(const char *item, void *ctx)
{
    ItemCtx *c = ctx;
    for (int i = 0; i < NFAMILIES; i++)
        if (strcmp(item, family_names[i]) == 0) {
            c->o->family[i] = true;
            return 0;
        }
    return cli_error(c->cli, EXIT_USAGE,
                     "--only '%s': unknown family; families: model-op, gemm-square, gemm-deepbench, "
                     "conv-deepbench, stream, eltwise", item);
}

static int model_item(const char *item, void *ctx)
{
    ItemCtx *c = ctx;
    const ModelSpec *m = cli_model(c->cli, item);
    if (!m)
        return -1;
    if (c->o->nmodels == MAX_MODELS)
        return cli_error(c->cli, EXIT_USAGE, "--models: at most %d models", MAX_MODELS);
    c->o->models[c->o->nmodels++] = m;
    return 0;
}

static int cal_option(Cli *cli, int id, const char *arg, void *ctx)
{
    CalOpts *o = ctx;
    ItemCtx ic = {cli, o};
    switch (id) {
    case OPT_QUICK: o->quick = true; return 0;
    case OPT_ONLY: return each_item(arg, only_item, &ic) ? EXIT_USAGE : 0;
    case OPT_MODELS: return each_item(arg, model_item, &ic) ? EXIT_USAGE : 0;
    case OPT_BATCH: return cli_parse_int(cli, "--batch", arg, 1, 1 << 20, &o->batch);
    }
    return EXIT_USAGE;
}

typedef struct {
    double t0;
    char family[24];
    bool tty;
} Progress;

static void progress(int done, int total, const char *family, const char *key, double elapsed_s, void *ctx)
{
    Progress *pr = ctx;
    if (pr->tty) {
        fprintf(stderr, "\r\033[K[%4d/%4d] %6.1f s  %-10s %.60s", done, total, mb_now_s() - pr->t0, family, key);
        if (done == total)
            fputc('\n', stderr);
    } else if (strcmp(pr->family, family) != 0) {
        fprintf(stderr, "calibrate: [%d/%d] %s ... (%.0f s so far)\n", done, total, family, mb_now_s() - pr->t0);
        snprintf(pr->family, sizeof pr->family, "%s", family);
    }
}

/* The ops of the chosen models' training steps. */
static OpDesc *model_ops(const CalOpts *o, int *n, char *err, size_t errlen)
{
    OpDesc *ops = NULL;
    *n = 0;
    for (int i = 0; i < o->nmodels; i++) {
        const ModelSpec *m = o->models[i];
        Plan p;
        if (plan_build(m, o->batch ? o->batch : m->default_batch, &p, err, errlen) != 0) {
            free(ops);
            return NULL;
        }
        OpDesc *grown = realloc(ops, (size_t)(*n + p.nops) * sizeof *ops);
        if (!grown) {
            snprintf(err, errlen, "out of memory");
            plan_free(&p);
            free(ops);
            return NULL;
        }
        ops = grown;
        for (int j = 0; j < p.nops; j++)
            ops[(*n)++] = p.ops[j].desc;
        plan_free(&p);
    }
    return ops;
}

typedef struct {
    double best_gemm_gflops, triad_gbs;
    int n;
} Summary;

static int summarize(const MeasurementRow *m, void *ctx)
{
    Summary *s = ctx;
    s->n++;
    if (strcmp(m->kind, "gemm") == 0 && m->flops / m->median_s / 1e9 > s->best_gemm_gflops)
        s->best_gemm_gflops = m->flops / m->median_s / 1e9;
    if (strncmp(m->key, "stream triad", 12) == 0 && m->bytes / m->median_s / 1e9 > s->triad_gbs)
        s->triad_gbs = m->bytes / m->median_s / 1e9;
    return 0;
}

int cmd_calibrate(int argc, char **argv, Cli *cli)
{
    static const struct option opts[] = {CLI_COMMON_OPTIONS,
                                         {"quick", no_argument, NULL, OPT_QUICK},
                                         {"only", required_argument, NULL, OPT_ONLY},
                                         {"models", required_argument, NULL, OPT_MODELS},
                                         {"batch", required_argument, NULL, OPT_BATCH},
                                         {0}};
    CalOpts co = {0};
    int rc = cli_parse(cli, argc, argv, opts, cal_option, &co, command_usage(cli->cmd));
    if (rc)
        return rc;
    if (optind < argc)
        return cli_error(cli, EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
    bool any = false;
    for (int i = 0; i < NFAMILIES; i++)
        any |= co.family[i];
    for (int i = 0; i < NFAMILIES && !any; i++)
        co.family[i] = true;
    /* by default the main job's three models (quick) or the suite's models */
    for (int i = 0; co.nmodels == 0 && i < zoo_count(); i++) {
        const ModelSpec *m = zoo_get(i);
        bool suite = m->origin && strcmp(m->origin, "suite") == 0;
        if (co.quick ? m->demo : suite)
            co.models[co.nmodels++] = m;
    }

    blas_select(cli);
    char err[1024];
    int nmodel;
    OpDesc *mops = model_ops(&co, &nmodel, err, sizeof err);
    if (!mops)
        return cli_error(cli, EXIT_USAGE, "%s", err);
    enum { LIST_MAX = 1024 };
    static OpDesc sq[LIST_MAX], db_gemm[LIST_MAX], conv[LIST_MAX], stream[LIST_MAX], elt[LIST_MAX];
    const MbFamily all[NFAMILIES] = {
        {family_names[0], mops, nmodel},
        {family_names[1], sq, mb_list_gemm_square(co.quick, sq, LIST_MAX)},
        {family_names[2], db_gemm, mb_list_gemm_deepbench(co.quick, db_gemm, LIST_MAX)},
        {family_names[3], conv, mb_list_conv_extra(co.quick, conv, LIST_MAX)},
        {family_names[4], stream, mb_list_stream(co.quick, stream, LIST_MAX)},
        {family_names[5], elt, mb_list_eltwise(co.quick, elt, LIST_MAX)},
    };
    MbFamily fams[NFAMILIES];
    int nfams = 0;
    for (int i = 0; i < NFAMILIES; i++)
        if (co.family[i])
            fams[nfams++] = all[i];

    Db *db = cli_db_open(cli);
    if (!db) {
        free(mops);
        return EXIT_FAIL;
    }
    MachineRow machine;
    CalibrationRow cal = {0};
    if (cli_machine(cli, db, &machine) != 0 || db_calibration_reap(db, machine.id) != 0) {
        free(mops);
        db_close(db);
        return EXIT_FAIL;
    }
    cal.machine_id = machine.id;
    snprintf(cal.mode, sizeof cal.mode, "%s", co.quick ? "quick" : "default");
    cli_software(cli, &cal.sw);
    if (db_calibration_begin(db, &cal) != 0) {
        free(mops);
        cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
        db_close(db);
        return EXIT_FAIL;
    }
    fprintf(stderr, "calibrate: %s mode, %d threads, OpenBLAS %s (%s), database %s\n", cal.mode, cli->threads,
            cal.sw.blas_core, cal.sw.blas_choice, cli->db_path);

    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    MbProtocol proto = mb_protocol(co.quick);
    Progress pr = {.t0 = mb_now_s(), .tty = progress_enabled()};
    rc = mb_calibrate(db, cal.id, &proto, cli->threads, fams, nfams, progress, &pr, &stop_requested, err, sizeof err);
    double elapsed = mb_now_s() - pr.t0;
    free(mops);
    const char *status = rc == 0 ? "complete" : "interrupted";
    if (db_calibration_finish(db, cal.id, status) != 0) {
        cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
        db_close(db);
        return EXIT_FAIL;
    }
    if (rc != 0) {
        db_close(db);
        if (rc > 0)
            return cli_error(cli, EXIT_INTERRUPTED, "interrupted after %.0f s; calibration %lld is marked "
                             "interrupted and will not be used", elapsed, (long long)cal.id);
        return cli_error(cli, EXIT_FAIL, "%s (calibration %lld marked interrupted)", err, (long long)cal.id);
    }
    Summary s = {0};
    db_measurement_foreach(db, cal.id, summarize, &s);
    db_close(db);
    if (cli->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "calibration_id", (double)cal.id);
        cJSON_AddStringToObject(o, "mode", cal.mode);
        cJSON_AddNumberToObject(o, "threads", cli->threads);
        cJSON_AddStringToObject(o, "blas_core", cal.sw.blas_core);
        cJSON_AddStringToObject(o, "blas_choice", cal.sw.blas_choice);
        cJSON_AddNumberToObject(o, "measurements", s.n);
        cJSON_AddNumberToObject(o, "elapsed_s", elapsed);
        cJSON_AddNumberToObject(o, "best_gemm_gflops", s.best_gemm_gflops);
        cJSON_AddNumberToObject(o, "stream_triad_gbs", s.triad_gbs);
        json_print(o);
    } else {
        printf("calibration %lld complete: %d kernels measured in %.1f s (%s mode, %d threads, OpenBLAS %s)\n",
               (long long)cal.id, s.n, elapsed, cal.mode, cli->threads, cal.sw.blas_core);
        printf("  best SGEMM        %8.1f GFLOP/s\n", s.best_gemm_gflops);
        printf("  STREAM triad      %8.1f GB/s\n", s.triad_gbs);
    }
    return EXIT_OK;
}
