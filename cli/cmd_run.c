/* cli/cmd_run.c — `dlperf run MODEL`: really train, time the iterations, store the run. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/session.h"
#include "models/plan.h"
#include "models/train.h"

typedef struct {
    int batch, steps, warmup;
    bool trace;
} RunOpts;

enum { OPT_BATCH = 1, OPT_STEPS, OPT_WARMUP, OPT_TRACE };

static int run_option(Cli *cli, int id, const char *arg, void *ctx)
{
    RunOpts *o = ctx;
    switch (id) {
    case OPT_BATCH: return cli_parse_int(cli, "--batch", arg, 1, 1 << 20, &o->batch);
    case OPT_STEPS: return cli_parse_int(cli, "--steps", arg, 1, 1000000, &o->steps);
    case OPT_WARMUP: return cli_parse_int(cli, "--warmup", arg, 0, 100000, &o->warmup);
    case OPT_TRACE: o->trace = true; return 0;
    }
    return EXIT_USAGE;
}

int cmd_run(int argc, char **argv, Cli *cli)
{
    static const struct option opts[] = {CLI_COMMON_OPTIONS,
                                         {"batch", required_argument, NULL, OPT_BATCH},
                                         {"steps", required_argument, NULL, OPT_STEPS},
                                         {"warmup", required_argument, NULL, OPT_WARMUP},
                                         {"trace", no_argument, NULL, OPT_TRACE},
                                         {0}};
    RunOpts ro = {.steps = 10, .warmup = 2};
    int rc = cli_parse(cli, argc, argv, opts, run_option, &ro, command_usage(cli->cmd));
    if (rc)
        return rc;
    const ModelSpec *m;
    Plan probe; /* the run builds its own; this one answers "does it fit" before anything else */
    if ((rc = cli_model_plan(cli, argc, argv, ro.batch, &m, &probe)))
        return rc;
    const int batch = probe.batch;
    char err[512];
    double flops[PHASE_COUNT], total_flops = 0;
    plan_flops(&probe, flops);
    for (int ph = 0; ph < PHASE_COUNT; ph++)
        total_flops += flops[ph];
    /* Refuse a run that cannot fit before anything else happens. */
    if (trainer_check_memory(&probe, trainer_data_batches(ro.warmup + ro.steps), err, sizeof err) != 0) {
        plan_free(&probe);
        return cli_error(cli, EXIT_FAIL, "%s", err);
    }
    plan_free(&probe);
    blas_select(cli);

    Db *db = cli_db_open(cli);
    if (!db)
        return EXIT_FAIL;
    MachineRow machine;
    RunResult r;
    if (cli_machine(cli, db, &machine) || session_run(cli, m, batch, ro.warmup, ro.steps, ro.trace, &machine, &r)) {
        db_close(db);
        return EXIT_FAIL;
    }
    rc = EXIT_OK;
    if (db_run_insert(db, &r.row, r.step_s, r.loss, r.nsteps, r.ops, r.ops ? r.nops : 0) != 0)
        rc = cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    db_close(db);
    const RunRow *row = &r.row;
    if (rc == EXIT_OK && cli->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "run_id", (double)row->id);
        cJSON_AddStringToObject(o, "model", m->name);
        cJSON_AddNumberToObject(o, "batch", batch);
        cJSON_AddNumberToObject(o, "threads", cli->threads);
        cJSON_AddNumberToObject(o, "steps", ro.steps);
        cJSON_AddNumberToObject(o, "warmup_steps", ro.warmup);
        cJSON_AddNumberToObject(o, "median_s", row->median_s);
        cJSON_AddNumberToObject(o, "min_s", row->min_s);
        cJSON_AddNumberToObject(o, "max_s", row->max_s);
        cJSON_AddNumberToObject(o, "mean_s", row->mean_s);
        cJSON_AddNumberToObject(o, "stddev_s", row->stddev_s);
        cJSON_AddNumberToObject(o, "samples_per_s", batch / row->median_s);
        cJSON_AddNumberToObject(o, "gflops", total_flops / row->median_s / 1e9);
        cJSON_AddNumberToObject(o, "loss_first", row->loss_first);
        cJSON_AddNumberToObject(o, "loss_last", row->loss_last);
        cJSON_AddNumberToObject(o, "planned_bytes", row->planned_bytes);
        cJSON_AddNumberToObject(o, "peak_rss_bytes", row->peak_rss_bytes);
        cJSON_AddStringToObject(o, "blas_core", row->sw.blas_core);
        cJSON_AddStringToObject(o, "blas_choice", row->sw.blas_choice);
        cJSON *steps = cJSON_AddArrayToObject(o, "step_s");
        for (int i = 0; i < r.nsteps; i++)
            cJSON_AddItemToArray(steps, cJSON_CreateNumber(r.step_s[i]));
        json_print(o);
    } else if (rc == EXIT_OK) {
        char b1[32], b2[32], b3[32];
        printf("%s at batch %d, %d threads, OpenBLAS %s — run %lld\n", m->name, batch, cli->threads,
               row->sw.blas_core, (long long)row->id);
        printf("  iteration  %s median (min %s, max %s) over %d steps after %d warm-up\n",
               fmt_time(row->median_s, b1, 32), fmt_time(row->min_s, b2, 32), fmt_time(row->max_s, b3, 32),
               ro.steps, ro.warmup);
        printf("  throughput %.1f samples/s, %.1f GFLOP/s\n", batch / row->median_s, total_flops / row->median_s / 1e9);
        printf("  loss       %.6g (first step) -> %.6g (last step)\n", row->loss_first, row->loss_last);
        printf("  memory     %s planned, %s peak RSS\n", fmt_bytes(row->planned_bytes, b1, 32),
               fmt_bytes(row->peak_rss_bytes, b2, 32));
        if (r.ops) {
            OpGroup *g;
            int ng = op_groups(NULL, r.ops, r.nops, &g);
            printf("\n%-12s %5s %12s %9s  %s\n", "layer", "count", "time", "GFLOP/s", "op (measured medians)");
            for (int i = 0; i < ng && i < 15; i++)
                printf("%-12s %5d %12s %9.1f  %s\n", g[i].layer_name, g[i].count, fmt_time(g[i].time_s, b1, 32),
                       g[i].flops / g[i].time_s / 1e9, g[i].key);
            free(g);
        }
    }
    run_result_free(&r);
    return rc;
}
