/* cli/cmd_validate.c — `dlperf validate`: predict first, then run, then compare. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/session.h"

typedef struct {
    int batch, steps, warmup;
} ValidateOpts;

enum { OPT_BATCH = 1, OPT_STEPS, OPT_WARMUP, TOP_MISSES = 5 };

static int validate_option(Cli *cli, int id, const char *arg, void *ctx)
{
    ValidateOpts *o = ctx;
    switch (id) {
    case OPT_BATCH: return cli_parse_int(cli, "--batch", arg, 1, 1 << 20, &o->batch);
    case OPT_STEPS: return cli_parse_int(cli, "--steps", arg, 1, 1000000, &o->steps);
    case OPT_WARMUP: return cli_parse_int(cli, "--warmup", arg, 0, 100000, &o->warmup);
    }
    return EXIT_USAGE;
}

typedef struct {
    ValidationRow v;
    OpGroup *groups;
    int ngroups;
} ModelResult;

/* Predict, run with a trace, store both and the comparison. */
static int validate_one(const Cli *cli, Db *db, const MachineRow *machine, const CalibrationRow *cal,
                        const CostModel *cm, const ModelSpec *m, const ValidateOpts *vo, ModelResult *res)
{
    int batch = vo->batch ? vo->batch : m->default_batch;
    Plan plan;
    char err[512];
    if (plan_build(m, batch, &plan, err, sizeof err) != 0)
        return cli_error(cli, EXIT_USAGE, "%s", err);
    PredictionRow pred;
    OpTimeRow *pops = NULL;
    int rc = session_predict(cli, cm, cal, &plan, &pred, &pops);
    if (rc == 0 && db_prediction_insert(db, &pred, pops, plan.nops) != 0)
        rc = cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    RunResult run = {0};
    if (rc == 0)
        rc = session_run(cli, m, batch, PLAN_TRAIN, vo->warmup, vo->steps, true, machine, &run);
    if (rc == 0 && db_run_insert(db, &run.row, run.step_s, run.loss, run.nsteps, run.ops, run.nops, NULL, 0) != 0)
        rc = cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    if (rc == 0) {
        ValidationRow *v = &res->v;
        memset(v, 0, sizeof *v);
        v->prediction_id = pred.id;
        v->run_id = run.row.id;
        snprintf(v->model, sizeof v->model, "%s", m->name);
        v->batch = batch;
        v->threads = cli->threads;
        v->predicted_s = pred.iter_s;
        v->measured_s = run.row.median_s;
        v->measured_min_s = run.row.min_s;
        v->measured_max_s = run.row.max_s;
        v->error_pct = 100 * (pred.iter_s - run.row.median_s) / run.row.median_s;
        if (db_validation_insert(db, v) != 0)
            rc = cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
        res->ngroups = op_groups(pops, run.ops, plan.nops, &res->groups);
    }
    run_result_free(&run);
    free(pops);
    plan_free(&plan);
    return rc;
}

int cmd_validate(int argc, char **argv, Cli *cli)
{
    static const struct option opts[] = {CLI_COMMON_OPTIONS, CLI_NO_QUIRK_OPTION,
                                         {"batch", required_argument, NULL, OPT_BATCH},
                                         {"steps", required_argument, NULL, OPT_STEPS},
                                         {"warmup", required_argument, NULL, OPT_WARMUP},
                                         {0}};
    ValidateOpts vo = {.steps = 5, .warmup = 1};
    int rc = cli_parse(cli, argc, argv, opts, validate_option, &vo, command_usage(cli->cmd));
    if (rc)
        return rc;
    const ModelSpec *models[64];
    int nm = 0;
    for (int i = optind; i < argc && nm < 64; i++)
        if (!(models[nm++] = cli_model(cli, argv[i])))
            return EXIT_USAGE;
    if (optind == argc) /* the main job's three models (quirk-free where they have one) */
        for (int i = 0; i < zoo_count() && nm < 64; i++)
            if (zoo_get(i)->demo) {
                const ModelSpec *plain = cli->no_quirk ? zoo_without_quirk(zoo_get(i)) : NULL;
                models[nm++] = plain ? plain : zoo_get(i);
            }

    blas_select(cli);
    Db *db = cli_db_open(cli);
    if (!db)
        return EXIT_FAIL;
    MachineRow machine;
    CalibrationRow cal;
    CostModel *cm = NULL;
    if (cli_machine(cli, db, &machine) || session_calibration(cli, db, &machine, &cal, &cm)) {
        db_close(db);
        return EXIT_FAIL;
    }
    ModelResult *res = calloc((size_t)nm, sizeof *res);
    int done = 0;
    for (; done < nm; done++) {
        if (!cli->json)
            fprintf(stderr, "validate: %s (%d/%d): predicting, then training %d+%d steps...\n", models[done]->name,
                    done + 1, nm, vo.warmup, vo.steps);
        rc = validate_one(cli, db, &machine, &cal, cm, models[done], &vo, &res[done]);
        if (rc)
            break;
    }
    cm_free(cm);
    db_close(db);
    if (cli->json) {
        cJSON *arr = cJSON_CreateArray();
        for (int i = 0; i < done; i++) {
            const ValidationRow *v = &res[i].v;
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "validation_id", (double)v->id);
            cJSON_AddStringToObject(o, "model", v->model);
            cJSON_AddNumberToObject(o, "batch", v->batch);
            cJSON_AddNumberToObject(o, "threads", v->threads);
            cJSON_AddNumberToObject(o, "predicted_s", v->predicted_s);
            cJSON_AddNumberToObject(o, "measured_median_s", v->measured_s);
            cJSON_AddNumberToObject(o, "measured_min_s", v->measured_min_s);
            cJSON_AddNumberToObject(o, "measured_max_s", v->measured_max_s);
            cJSON_AddNumberToObject(o, "error_pct", v->error_pct);
            cJSON *miss = cJSON_AddArrayToObject(o, "largest_misses");
            for (int j = 0; j < res[i].ngroups && j < TOP_MISSES; j++) {
                const OpGroup *g = &res[i].groups[j];
                cJSON *mo = cJSON_CreateObject();
                cJSON_AddStringToObject(mo, "layer", g->layer_name);
                cJSON_AddStringToObject(mo, "op", g->key);
                cJSON_AddNumberToObject(mo, "count", g->count);
                cJSON_AddNumberToObject(mo, "predicted_s", g->time_s);
                cJSON_AddNumberToObject(mo, "measured_s", g->measured_s);
                cJSON_AddStringToObject(mo, "source", g->source);
                cJSON_AddItemToArray(miss, mo);
            }
            cJSON_AddItemToArray(arr, o);
        }
        json_print(arr);
    } else if (done > 0) {
        char b1[32], b2[32], b3[32], b4[32];
        printf("validation against calibration %lld (%s, %s), %d threads, OpenBLAS %s\n\n", (long long)cal.id,
               cal.mode, cal.started_at, cli->threads, cal.sw.blas_core);
        printf("%-12s %6s %13s %13s %25s %8s\n", "model", "batch", "predicted", "measured", "(min .. max)", "error");
        for (int i = 0; i < done; i++) {
            const ValidationRow *v = &res[i].v;
            char range[64];
            snprintf(range, sizeof range, "(%s .. %s)", fmt_time(v->measured_min_s, b3, 32),
                     fmt_time(v->measured_max_s, b4, 32));
            printf("%-12s %6d %13s %13s %25s %+7.1f%%\n", v->model, v->batch, fmt_time(v->predicted_s, b1, 32),
                   fmt_time(v->measured_s, b2, 32), range, v->error_pct);
        }
        printf("# times per training iteration; error = (predicted - measured median) / measured median\n");
        for (int i = 0; i < done; i++) {
            printf("\n%s: ops with the largest misses\n", res[i].v.model);
            printf("  %-12s %5s %12s %12s %8s  %-7s %s\n", "layer", "count", "predicted", "measured", "miss",
                   "source", "op");
            for (int j = 0; j < res[i].ngroups && j < TOP_MISSES; j++) {
                const OpGroup *g = &res[i].groups[j];
                printf("  %-12s %5d %12s %12s %+7.1f%%  %-7s %s\n", g->layer_name, g->count,
                       fmt_time(g->time_s, b1, 32), fmt_time(g->measured_s, b2, 32),
                       100 * (g->time_s - g->measured_s) / g->measured_s, g->source, g->key);
            }
        }
    }
    for (int i = 0; i < nm; i++)
        free(res[i].groups);
    free(res);
    return rc;
}
