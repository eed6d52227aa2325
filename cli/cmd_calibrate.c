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

typedef struct {
    bool quick;
} CalOpts;

enum { OPT_QUICK = 1 };

static int cal_option(Cli *cli, int id, const char *arg, void *ctx)
{
    if (id == OPT_QUICK) {
        ((CalOpts *)ctx)->quick = true;
        return 0;
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

/* The ops of every zoo model's training step at its default batch. */
static OpDesc *zoo_ops(int *n, char *err, size_t errlen)
{
    OpDesc *ops = NULL;
    *n = 0;
    for (int i = 0; i < zoo_count(); i++) {
        const ModelSpec *m = zoo_get(i);
        Plan p;
        if (plan_build(m, m->default_batch, &p, err, errlen) != 0) {
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
    static const struct option opts[] = {CLI_COMMON_OPTIONS, {"quick", no_argument, NULL, OPT_QUICK}, {0}};
    CalOpts co = {0};
    int rc = cli_parse(cli, argc, argv, opts, cal_option, &co, command_usage(cli->cmd));
    if (rc)
        return rc;
    if (optind < argc)
        return cli_error(cli, EXIT_USAGE, "unexpected argument '%s'", argv[optind]);

    char err[1024];
    int nmodel;
    OpDesc *model_ops = zoo_ops(&nmodel, err, sizeof err);
    if (!model_ops)
        return cli_error(cli, EXIT_FAIL, "%s", err);
    enum { LIST_MAX = 1024 };
    static OpDesc sq[LIST_MAX], db_gemm[LIST_MAX], conv[LIST_MAX], stream[LIST_MAX], elt[LIST_MAX];
    MbFamily fams[] = {
        {"model-op", model_ops, nmodel},
        {"gemm-square", sq, mb_list_gemm_square(co.quick, sq, LIST_MAX)},
        {"gemm-deepbench", db_gemm, mb_list_gemm_deepbench(co.quick, db_gemm, LIST_MAX)},
        {"conv-deepbench", conv, mb_list_conv_extra(co.quick, conv, LIST_MAX)},
        {"stream", stream, mb_list_stream(co.quick, stream, LIST_MAX)},
        {"eltwise", elt, mb_list_eltwise(co.quick, elt, LIST_MAX)},
    };
    int nfams = (int)(sizeof fams / sizeof fams[0]);

    Db *db = cli_db_open(cli);
    if (!db) {
        free(model_ops);
        return EXIT_FAIL;
    }
    MachineRow machine;
    CalibrationRow cal = {0};
    if (cli_machine(cli, db, &machine) != 0 || db_calibration_reap(db, machine.id) != 0) {
        free(model_ops);
        db_close(db);
        return EXIT_FAIL;
    }
    cal.machine_id = machine.id;
    snprintf(cal.mode, sizeof cal.mode, "%s", co.quick ? "quick" : "default");
    cli_software(cli, &cal.sw);
    if (db_calibration_begin(db, &cal) != 0) {
        free(model_ops);
        db_close(db);
        return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
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
    free(model_ops);
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
