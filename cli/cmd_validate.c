/* cli/cmd_validate.c — `dlperf validate`: its arguments, the models it validates, and the
 * tables and JSON of the results; the validation itself is verify/validation.h's (with
 * --device, cli/validate_device.c: published GPU measurements against their prices).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "cli/validate_device.h"
#include "microbench/mb.h"
#include "models/model_json.h"
#include "ops/comm.h"
#include "predictor/machine_pricer.h"
#include "verify/validation.h"

/* --zoo validates every model at the batch whose training step is at most this many FLOPs
 * (the batch default calibrations measure the suite's model ops at). */
#define ZOO_STEP_MAX_FLOPS 300e9

/* validate's arguments: the engine's options, and the command line's own */
typedef struct {
    ValidationOpts run;
    bool zoo, scaling_given, csv;
    int tp; /* tensor-parallel ranks (0: none) */
} ValidateArgs;

enum { OPT_BATCH = 1, OPT_STEPS, OPT_WARMUP, OPT_ROUNDS, OPT_HOLDOUT, OPT_TRACE, OPT_ZOO, OPT_SCALING, OPT_MIN_TIME,
       OPT_WAIT_NEAR, OPT_CSV, OPT_TP, TOP_MISSES = 5, MAX_MODELS = VALIDATION_MAX_MODELS };

/* A duration option: seconds from 0 (zero_means says what 0 does, or "") to 3600. */
static int parse_seconds(const Cli *cli, const char *opt, const char *arg, const char *zero_means, double *out)
{
    char *end;
    errno = 0;
    const double v = strtod(arg, &end);
    if (end == arg || *end || errno || !(v >= 0 && v <= 3600))
        return cli_error(cli, EXIT_USAGE, "%s '%s': expected seconds from 0%s to 3600", opt, arg, zero_means);
    *out = v;
    return 0;
}

static int validate_option(Cli *cli, int id, const char *arg, void *ctx)
{
    ValidateArgs *a = ctx;
    ValidationOpts *o = &a->run;
    switch (id) {
    case OPT_BATCH: return cli_parse_int(cli, "--batch", arg, 1, 1 << 20, &o->batch);
    case OPT_STEPS: return cli_parse_int(cli, "--steps", arg, 1, 1000000, &o->steps);
    case OPT_WARMUP: return cli_parse_int(cli, "--warmup", arg, 0, 100000, &o->warmup);
    case OPT_ROUNDS: return cli_parse_int(cli, "--rounds", arg, 1, MB_MAX_ROUNDS, &o->rounds);
    case OPT_MIN_TIME: return parse_seconds(cli, "--min-time", arg, "", &o->min_time_s);
    case OPT_WAIT_NEAR: return parse_seconds(cli, "--wait-near", arg, " (run at any placement)", &o->wait_near_s);
    case OPT_HOLDOUT: o->holdout = true; return 0;
    case OPT_TRACE: o->trace = true; return 0;
    case OPT_ZOO: a->zoo = true; return 0;
    case OPT_CSV: a->csv = true; return 0;
    case OPT_TP: return cli_parse_int(cli, "--tp", arg, 1, 4096, &a->tp);
    case OPT_SCALING:
        if (strcmp(arg, "strong") != 0 && strcmp(arg, "weak") != 0)
            return cli_error(cli, EXIT_USAGE, "--scaling '%s': expected strong (--batch is the global batch) or "
                                              "weak (--batch per rank)", arg);
        o->weak_scaling = strcmp(arg, "weak") == 0;
        a->scaling_given = true;
        return 0;
    }
    return EXIT_USAGE;
}

/* A CSV cell: the number, or empty where it was not measured (NaN). */
static void csv_num(double v)
{
    if (isnan(v))
        printf(",");
    else
        printf(",%.9g", v);
}

/* --csv: one row per model and calibration (full; holdout), seconds and bytes. */
static void print_csv(const ModelValidation *res, int nm, const ValidationOpts *vo)
{
    printf("model,batch,calibration,validation_id,predicted_s,measured_median_s,measured_min_s,measured_max_s,"
           "error_pct,drift_compute,drift_memory,adjusted_error_pct,rounds,rounds_far,rounds_near,"
           "measured_near_s,error_near_pct,error_placed_pct,error_steps_placed_pct,predicted_memory_bytes,"
           "peak_rss_bytes,memory_error_pct\n");
    for (int i = 0; i < nm; i++)
        for (int h = 0; h <= (int)vo->holdout; h++) {
            const ModelValidation *r = &res[i];
            const ValidationRow *v = &r->v[h];
            const bool placed = r->far_rounds + r->near_rounds > 0;
            printf("%s,%d,%s,%lld", v->model, r->batch, h ? "holdout" : "full", (long long)v->id);
            csv_num(v->predicted_s), csv_num(v->measured_s);
            csv_num(v->measured_min_s), csv_num(v->measured_max_s);
            csv_num(v->error_pct), csv_num(v->drift_compute), csv_num(v->drift_memory);
            csv_num(v->adjusted_error_pct);
            printf(",%d", r->nrounds);
            csv_num(placed ? r->far_rounds : NAN), csv_num(placed ? r->near_rounds : NAN);
            csv_num(r->near_rounds > 0 ? r->near_measured_s : NAN);
            csv_num(r->near_rounds > 0 ? near_error_pct(r, h) : NAN);
            csv_num(r->placed_error_pct[h]), csv_num(r->steps_placed_error_pct[h]);
            csv_num(r->memory_bytes), csv_num(r->peak_rss_bytes);
            csv_num(100 * (r->memory_bytes - r->peak_rss_bytes) / r->peak_rss_bytes);
            printf("\n");
        }
}

/* --csv under mpirun: one row per model, the iteration and its compute and allreduce. */
static void print_dp_csv(const DpResult *res, int nm, int ranks, int tp, const char *scaling, int threads)
{
    printf("model,ranks,scaling,batch,batch_per_rank,threads,predicted_s,measured_s,error_pct,predicted_compute_s,"
           "measured_compute_s,predicted_allreduce_s,measured_allreduce_s,allreduce_error_pct,drift_compute,"
           "drift_memory,adjusted_error_pct,rounds,rounds_apart,placement,predicted_memory_bytes,peak_rss_bytes,"
           "memory_error_pct\n");
    for (int i = 0; i < nm; i++) {
        const DpResult *r = &res[i];
        const double pc = r->pred.iter_s - r->pred.allreduce_s;
        printf("%s,%d,%s,%d,%d,%d", r->m->name, ranks * tp, scaling, r->batch * ranks, r->batch, threads);
        csv_num(r->pred.iter_s), csv_num(r->meas_s);
        csv_num(100 * (r->pred.iter_s - r->meas_s) / r->meas_s);
        csv_num(pc), csv_num(r->meas_compute_s);
        csv_num(r->pred.allreduce_s), csv_num(r->meas_allreduce_s);
        csv_num(100 * (r->pred.allreduce_s - r->meas_allreduce_s) / r->meas_allreduce_s);
        csv_num(r->drift.compute), csv_num(r->drift.memory), csv_num(r->adjusted_error_pct);
        const DpRound *rr = &r->round[r->rep];
        printf(",%d,%d,%s", r->nrounds, r->apart_rounds, rr->cores_ratio > 0 ? (rr->apart ? "apart" : "near") : "");
        csv_num(r->memory_bytes), csv_num(r->peak_rss_bytes);
        csv_num(100 * (r->memory_bytes - r->peak_rss_bytes) / r->peak_rss_bytes);
        printf("\n");
    }
}

/* Under mpirun: every rank trains; rank 0 predicts first, compares, stores and prints. */
static int validate_dp(Cli *cli, const ValidationOpts *vo, bool csv, const ModelSpec *const *models, int nm, int tp)
{
    /* tensor parallel: each group of tp ranks trains a copy of the model split tp ways,
     * and the copies are the data-parallel ranks */
    const int ranks = comm_env_size() / tp, local = comm_env_local_size();
    DpResult res[VALIDATION_MAX_MODELS];
    char err[1024];
    const ModelSpec *run_models[VALIDATION_MAX_MODELS];
    for (int i = 0; i < nm; i++)
        if (!(run_models[i] = tp > 1 ? cli_tp_share(cli, models[i], tp) : models[i]))
            return EXIT_USAGE;
    if (validation_dp_setup(run_models, nm, vo, ranks, res, err, sizeof err) != 0)
        return cli_error(cli, EXIT_USAGE, "%s", err);
    blas_select(cli);
    if (comm_start(err, sizeof err) != 0 || comm_split_tensor_parallel(tp, err, sizeof err) != 0)
        return cli_error(cli, EXIT_FAIL, "%s", err);
    comm_reuse_collective_buffers();
    const bool root = comm_rank() == 0;
    Db *db = NULL;
    MachineRow machine = {0};
    CalibrationRow cal;
    CostModel *cm = NULL;
    CommModel *comm = NULL;
    double over = 1;
    if (root) {
        if (!(db = cli_db_open(cli)))
            return EXIT_FAIL;
        if (cli_machine(cli, db, &machine) != 0) {
            db_close(db);
            return EXIT_FAIL;
        }
        if (machine_calibration_dp(db, &machine, cli->threads, local, &cal, &cm, &over, err, sizeof err) != 0) {
            db_close(db);
            return cli_error(cli, EXIT_FAIL, "%s", err);
        }
        if (!(comm = comm_model_load(db, machine.id, err, sizeof err))) {
            cm_free(cm);
            db_close(db);
            return cli_error(cli, EXIT_FAIL, "%s", err);
        }
        cm_set_collectives(cm, comm); /* the sums over tensor-parallel groups */
    }
    const RunEnv env = cli_run_env(cli);
    const char *scaling = vo->weak_scaling ? "weak" : "strong";
    int done = 0;
    int rc = validation_dp_run(&env, db, &machine, &cal, cm, comm, over, vo, res, nm, &done, err, sizeof err);
    if (rc != 0)
        cli_error(cli, rc, "%s", err);
    if (root && done > 0) {
        if (csv) {
            print_dp_csv(res, done, ranks, tp, scaling, cli->threads);
        } else if (cli->json) {
            cJSON *arr = cJSON_CreateArray();
            for (int i = 0; i < done; i++) {
                const DpResult *r = &res[i];
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "model", r->m->name);
                cJSON_AddNumberToObject(o, "ranks", ranks * tp);
                cJSON_AddNumberToObject(o, "tensor_parallel", tp);
                cJSON_AddNumberToObject(o, "data_parallel", ranks);
                cJSON_AddStringToObject(o, "scaling", scaling);
                cJSON_AddNumberToObject(o, "batch", r->batch * ranks);
                cJSON_AddNumberToObject(o, "batch_per_rank", r->batch);
                cJSON_AddNumberToObject(o, "threads", cli->threads);
                cJSON_AddNumberToObject(o, "oversubscription", over);
                cJSON_AddNumberToObject(o, "calibration_id", (double)cal.id);
                cJSON_AddNumberToObject(o, "calibration_ranks", cal.sw.ranks);
                cJSON_AddNumberToObject(o, "predicted_s", r->pred.iter_s);
                cJSON_AddNumberToObject(o, "measured_s", r->meas_s);
                cJSON_AddNumberToObject(o, "error_pct", 100 * (r->pred.iter_s - r->meas_s) / r->meas_s);
                cJSON_AddNumberToObject(o, "predicted_compute_s", r->pred.iter_s - r->pred.allreduce_s);
                cJSON_AddNumberToObject(o, "measured_compute_s", r->meas_compute_s);
                cJSON_AddNumberToObject(o, "predicted_allreduce_s", r->pred.allreduce_s);
                cJSON_AddStringToObject(o, "allreduce_source", r->pred.allreduce_source);
                cJSON_AddNumberToObject(o, "measured_allreduce_s", r->meas_allreduce_s);
                cJSON_AddNumberToObject(o, "allreduce_error_pct",
                                        100 * (r->pred.allreduce_s - r->meas_allreduce_s) / r->meas_allreduce_s);
                cJSON_AddNumberToObject(o, "drift_compute", r->drift.compute);
                cJSON_AddNumberToObject(o, "drift_memory", r->drift.memory);
                cJSON_AddNumberToObject(o, "adjusted_error_pct", r->adjusted_error_pct);
                if (r->ar_drift > 0) { /* the slower, and each */
                    cJSON_AddNumberToObject(o, "drift_allreduce", r->ar_drift);
                    cJSON_AddNumberToObject(o, "drift_allreduce_before", r->ar_before);
                    cJSON_AddNumberToObject(o, "drift_allreduce_after", r->ar_after);
                } else {
                    cJSON_AddNullToObject(o, "drift_allreduce"); /* not measured */
                }
                cJSON_AddNumberToObject(o, "rounds", r->nrounds);
                cJSON_AddNumberToObject(o, "rounds_apart", r->apart_rounds);
                const DpRound *rr = &r->round[r->rep];
                if (rr->cores_ratio > 0) {
                    cJSON_AddStringToObject(o, "placement", rr->apart ? "apart" : "near");
                    cJSON_AddNumberToObject(o, "cores_ratio", rr->cores_ratio);
                    cJSON_AddNumberToObject(o, "rtt_before_ns", rr->rtt_before_ns);
                    cJSON_AddNumberToObject(o, "rtt_after_ns", rr->rtt_after_ns);
                    cJSON_AddNumberToObject(o, "predicted_allreduce_placed_s", r->placed_allreduce_s);
                    cJSON_AddNumberToObject(o, "allreduce_error_placed_pct", r->placed_ar_error_pct);
                    cJSON_AddNumberToObject(o, "error_placed_pct", r->placed_error_pct);
                } else {
                    cJSON_AddNullToObject(o, "placement"); /* not probed */
                }
                if (r->allreduce_apart_s > 0)
                    cJSON_AddNumberToObject(o, "predicted_allreduce_apart_s", r->allreduce_apart_s);
                else
                    cJSON_AddNullToObject(o, "predicted_allreduce_apart_s");
                cJSON_AddNumberToObject(o, "predicted_memory_bytes", r->memory_bytes);
                cJSON_AddNumberToObject(o, "predicted_allreduce_memory_bytes", r->pred.mem_comm);
                cJSON_AddNumberToObject(o, "peak_rss_bytes", r->peak_rss_bytes);
                cJSON_AddNumberToObject(o, "memory_error_pct",
                                        100 * (r->memory_bytes - r->peak_rss_bytes) / r->peak_rss_bytes);
                cJSON_AddItemToArray(arr, o);
            }
            json_print(arr);
        } else {
            char b[6][32];
            char how[96];
            if (cal.sw.ranks > 1 && over > 1)
                snprintf(how, sizeof how, "measured by %d ranks at once, one per core, slowed by the cores' "
                         "oversubscription", cal.sw.ranks);
            else
                snprintf(how, sizeof how, "%s", cal.sw.ranks > 1 ? "measured by as many ranks at once"
                                                : over > 1        ? "one process's, slowed by the cores' oversubscription"
                                                                  : "one process's");
            if (tp > 1)
                printf("tensor-parallel validation: tensor parallel %d x data parallel %d (%d ranks, %d on this "
                       "node) x %d threads, %s scaling, compute from calibration %lld (%s), the group's sums and the "
                       "gradients' allreduce from the communication calibration (%s)\n", tp, ranks, ranks * tp,
                       local, cli->threads, scaling, (long long)cal.id, how, comm_library());
            else
                printf("data-parallel validation: %d ranks (%d on this node) x %d threads, %s scaling, compute from "
                       "calibration %lld (%s), allreduce from the communication calibration (%s)\n",
                       ranks, local, cli->threads, scaling, (long long)cal.id, how, comm_library());
            if (over > 1)
                printf("  oversubscription: %d ranks x %d threads on %ld cores = %.2f\n", local, cli->threads,
                       sysconf(_SC_NPROCESSORS_ONLN), over);
            printf("\n%-16s %6s %10s %10s %7s %10s %10s %7s %10s %10s %7s %11s  %14s %8s\n", "model", "batch",
                   "pred iter", "meas iter", "err", "pred comp", "meas comp", "err", "pred AR", "meas AR", "err",
                   "AR ref", "drift c / m", "adjusted");
            for (int i = 0; i < done; i++) {
                const DpResult *r = &res[i];
                double pc = r->pred.iter_s - r->pred.allreduce_s;
                char ref[32] = "-";
                if (r->ar_drift > 0)
                    snprintf(ref, sizeof ref, "x%.2f/%.2f", r->ar_before, r->ar_after);
                printf("%-16s %6d %10s %10s %+6.1f%% %10s %10s %+6.1f%% %10s %10s %+6.1f%% %11s  %+5.0f%% / %+4.0f%% "
                       "%+7.1f%%%s\n", r->m->name,
                       r->batch * ranks, fmt_time(r->pred.iter_s, b[0], 32), fmt_time(r->meas_s, b[1], 32),
                       100 * (r->pred.iter_s - r->meas_s) / r->meas_s, fmt_time(pc, b[2], 32),
                       fmt_time(r->meas_compute_s, b[3], 32), 100 * (pc - r->meas_compute_s) / r->meas_compute_s,
                       fmt_time(r->pred.allreduce_s, b[4], 32), fmt_time(r->meas_allreduce_s, b[5], 32),
                       100 * (r->pred.allreduce_s - r->meas_allreduce_s) / r->meas_allreduce_s, ref,
                       100 * (r->drift.compute - 1), 100 * (r->drift.memory - 1),
                       r->adjusted_error_pct,
                       strcmp(r->pred.allreduce_source, "fitted") == 0 ? " (AR fitted)" : "");
            }
            printf("\n%-16s %7s %12s %10s %10s %10s %7s %9s\n", "placement", "apart", "cores", "pred AR", "AR apart",
                   "AR placed", "err", "iter err");
            for (int i = 0; i < done; i++) {
                const DpResult *r = &res[i];
                const DpRound *rr = &r->round[r->rep];
                char apart[16], cores[24] = "-", ar_apart[32] = "-", placed[32] = "-", ar_err[16] = "-",
                     it_err[16] = "-";
                snprintf(apart, sizeof apart, "%d/%d", r->apart_rounds, r->nrounds);
                if (r->allreduce_apart_s > 0)
                    fmt_time(r->allreduce_apart_s, ar_apart, sizeof ar_apart);
                if (rr->cores_ratio > 0) {
                    snprintf(cores, sizeof cores, "%s x%.1f", rr->apart ? "apart" : "near", rr->cores_ratio);
                    fmt_time(r->placed_allreduce_s, placed, sizeof placed);
                    snprintf(ar_err, sizeof ar_err, "%+.1f%%", r->placed_ar_error_pct);
                    snprintf(it_err, sizeof it_err, "%+.1f%%", r->placed_error_pct);
                }
                printf("%-16s %7s %12s %10s %10s %10s %7s %9s\n", r->m->name, apart, cores,
                       fmt_time(r->pred.allreduce_s, b[0], 32), ar_apart, placed, ar_err, it_err);
            }
            printf("\n%-16s %10s %14s %10s %7s\n", "memory", "predicted", "of it allreduce", "peak RSS", "diff");
            for (int i = 0; i < done; i++) {
                const DpResult *r = &res[i];
                printf("%-16s %10s %14s %10s %+6.1f%%\n", r->m->name, fmt_bytes(r->memory_bytes, b[0], 32),
                       fmt_bytes(r->pred.mem_comm, b[1], 32), fmt_bytes(r->peak_rss_bytes, b[2], 32),
                       100 * (r->memory_bytes - r->peak_rss_bytes) / r->peak_rss_bytes);
            }
            printf("\niter: the slowest rank's step (median); comp: forward+backward+update, and AR: the gradients'\n"
                   "allreduce, each step's slowest rank (median over the steps, as the calibration's samples)\n"
                   "placement: where the node's first two ranks ran (a cache line's round trip between them just\n"
                   "before and after each run, the slower over the fastest seen; apart at x%.1f or more): the rounds\n"
                   "apart, the representative run's cores, the allreduce priced near (pred AR) and apart (from the\n"
                   "communication calibration's passes apart; - where it had none), and the run priced at its own\n"
                   "placement: its allreduce and iteration errors\n"
                   "AR ref: the same allreduce timed alone by every rank just before / just after the run, against\n"
                   "the prediction: near x1 the ranks communicated at their calibrated speed, and an AR error\n"
                   "beyond it is the model's; well away from x1 the host had changed under the run\n"
                   "drift c / m: the time of the model's costliest exactly calibrated GEMM or convolution / other op,\n"
                   "timed by every rank at once just before the run, against the calibration (times the\n"
                   "oversubscription); adjusted: the iteration's error with the compute scaled by them\n"
                   "memory: rank 0's process, predicted (its RSS when the run began, the plan's arenas as allocated,\n"
                   "and the MPI library's allreduce scratch probed by the communication calibration) against its peak RSS\n",
                   MB_FAR_RTT);
        }
    }
    for (int i = 0; i < nm; i++)
        dp_result_free(&res[i]);
    if (root) {
        cm_free(cm);
        comm_model_free(comm);
        db_close(db);
    }
    return rc;
}

static void print_text(const CalibrationRow *cal, const Cli *cli, const ModelValidation *res, int nm,
                       const ValidationOpts *vo, const PlacementWait *pw)
{
    const bool H = vo->holdout;
    char b1[32], b2[32], b3[32], b4[32];
    printf("validation against calibration %lld (%s, %s), %d threads, OpenBLAS %s\n\n", (long long)cal->id,
           cal->mode, cal->started_at, cli->threads, cal->sw.blas_core);
    printf("%-16s %6s %11s %21s %11s %8s", "model", "batch", "measured", "(min .. max)", "predicted", "error");
    if (H)
        printf(" %11s %8s", "holdout", "error");
    printf(" %13s %9s", "drift c / m", "adjusted");
    if (H)
        printf(" %9s", "adj. hold");
    printf(" %9s %5s %7s %14s %7s %10s %10s %7s\n", "cores", "far", "placed", "steps n/a/1", "by step", "memory",
           "peak RSS", "diff");
    double err[2][MAX_MODELS], adj[2][MAX_MODELS];
    for (int i = 0; i < nm; i++) {
        const ValidationRow *v = &res[i].v[0];
        char range[48];
        snprintf(range, sizeof range, "(%s .. %s)", fmt_time(v->measured_min_s, b3, 32),
                 fmt_time(v->measured_max_s, b4, 32));
        printf("%-16s %6d %11s %21s %11s %+7.1f%%", v->model, v->batch, fmt_time(v->measured_s, b1, 32), range,
               fmt_time(v->predicted_s, b2, 32), v->error_pct);
        err[0][i] = v->error_pct;
        if (H) {
            printf(" %11s %+7.1f%%", fmt_time(res[i].v[1].predicted_s, b1, 32), res[i].v[1].error_pct);
            err[1][i] = res[i].v[1].error_pct;
        }
        printf(" %+5.0f%% / %+4.0f%% %+8.1f%%", 100 * (v->drift_compute - 1), 100 * (v->drift_memory - 1),
               v->adjusted_error_pct);
        adj[0][i] = v->adjusted_error_pct;
        if (H) {
            printf(" %+8.1f%%", res[i].v[1].adjusted_error_pct);
            adj[1][i] = res[i].v[1].adjusted_error_pct;
        }
        char cores[24] = "-", far[16] = "-";
        if (res[i].cross_before > 0)
            snprintf(cores, sizeof cores, "x%.1f/%.1f", res[i].cross_before, res[i].cross_after);
        if (res[i].far_rounds + res[i].near_rounds > 0)
            snprintf(far, sizeof far, "%d/%d", res[i].far_rounds, res[i].nrounds);
        char placed[16] = "-";
        if (!isnan(res[i].placed_error_pct[0]))
            snprintf(placed, sizeof placed, "%+.1f%%", res[i].placed_error_pct[0]);
        char steps[24] = "-", by_step[16] = "-";
        if (res[i].steps_near + res[i].steps_apart + res[i].steps_one_core > 0)
            snprintf(steps, sizeof steps, "%d/%d/%d", res[i].steps_near, res[i].steps_apart, res[i].steps_one_core);
        if (!isnan(res[i].steps_placed_error_pct[0]))
            snprintf(by_step, sizeof by_step, "%+.1f%%", res[i].steps_placed_error_pct[0]);
        printf(" %9s %5s %7s %14s %7s %10s %10s %+6.1f%%\n", cores, far, placed, steps, by_step,
               fmt_bytes(res[i].memory_bytes, b1, 32),
               fmt_bytes(res[i].peak_rss_bytes, b2, 32),
               100 * (res[i].memory_bytes - res[i].peak_rss_bytes) / res[i].peak_rss_bytes);
    }
    printf("# times per training iteration; error = (predicted - measured median) / measured median;\n"
           "# memory: predicted for the process (its RSS when the run began, and the profile's arenas and\n"
           "# data batches, which the run allocates) against the run's peak RSS\n");
    printf("# drift c / m: time of the reference kernels just before the run against the calibration,\n"
           "# compute-bound (GEMM, convolution) / memory-bound; adjusted: the error of the prediction scaled by them\n"
           "# cores: a cross-core read (each thread reading the slice its neighbour just wrote) before / after\n"
           "# the run against the calibration (the representative run's); well above x1 the host had put the\n"
           "# cores farther apart than when calibrated, and every op that passes data between them ran slower\n"
           "# (not adjusted for); far: the model's runs whose cores read x%.1f or more (or x%.2f or less)\n"
           "# before or after, or whose two threads shared one core (an FMA burst on both x%.1f or more its\n"
           "# time on one); placed: the median of the runs' errors, each run priced at its own placement\n"
           "# (apart where its cores read x%.1f or more, by the kernels' passes timed apart; else near; a run\n"
           "# on one core not priced)\n", VALIDATION_FAR_CORES, 1 / VALIDATION_FAR_CORES, MB_SHARED_CORE, VALIDATION_FAR_CORES);
    printf("# steps n/a/1: the timed steps of all runs by where the cores were around each (probed between\n"
           "# steps): near, apart (a round trip x%.1f the calibration's fastest or more), on one core; by step:\n"
           "# the median of the steps' errors, each step priced at its own placement (one-core steps not priced)\n",
           MB_FAR_RTT);
    for (int h = 0; h <= (int)H; h++) {
        double mx = 0, mxa = 0;
        for (int i = 0; i < nm; i++) {
            mx = fmax(mx, fabs(err[h][i]));
            mxa = fmax(mxa, fabs(adj[h][i]));
        }
        printf("%s: median |error| %.1f%%, max |error| %.1f%% over %d models; drift-adjusted: median %.1f%%, "
               "max %.1f%%\n", h ? "holdout calibration (fitted model only)" : "full calibration",
               median_abs(err[h], nm), mx, nm, median_abs(adj[h], nm), mxa);
    }
    if (pw->waits > 0)
        printf("cores apart before %d run%s: waited %.0f s in all for them to come near (--wait-near %.0f s a run), "
               "%d ran apart when the wait ran out\n",
               pw->waits, pw->waits == 1 ? "" : "s", pw->waited_s, vo->wait_near_s, pw->ran_out);
    /* the errors at the calibration's placement of the cores: each model's median over its
     * runs whose cores were not farther apart (which misses the placement explains); a
     * model with no such run by all of them */
    for (int h = 0; h <= (int)H; h++) {
        const NearSummary ns = near_summary(res, nm, h);
        if (ns.far_runs == 0)
            break;
        if (h == 0)
            printf("cores x%.1f or more farther apart (or nearer) than at calibration, or on one core (before or after "
                   "the run), in %d of %d runs (%d on one core)\n", VALIDATION_FAR_CORES, ns.far_runs, ns.runs, ns.one_core_runs);
        printf("%s at the calibration's placement (each model's runs with the cores as near as calibrated",
               h ? "holdout calibration" : "full calibration");
        if (ns.models < nm)
            printf("; all runs of the %d models with none", nm - ns.models);
        printf("): median |error| %.1f%%, max %.1f%% (%s) over %d models", ns.every_median_abs_pct,
               ns.every_max_abs_pct, ns.every_max_model, nm);
        if (h == 0 && ns.models < nm) {
            printf("; every run far:");
            for (int i = 0; i < nm; i++)
                if (res[i].near_rounds == 0 && res[i].far_rounds > 0)
                    printf(" %s", res[i].v[0].model);
        }
        printf("\n");
    }
    for (int h = 0; h <= (int)H; h++) {
        const PlacedSummary ps = placed_summary(res, nm, h);
        if (!ps.priced || ps.models == 0)
            break;
        printf("%s with each run priced at its own placement (%d runs apart): median |error| %.1f%%, max %.1f%% "
               "(%s) over %d models\n", h ? "holdout calibration" : "full calibration", ps.apart_runs,
               ps.median_abs_pct, ps.max_abs_pct, ps.max_model, ps.models);
    }
    for (int h = 0; h <= (int)H; h++) {
        const StepSummary ss = step_summary(res, nm, h);
        if (ss.models == 0)
            break;
        const char *name = h ? "holdout calibration" : "full calibration";
        if (h == 0)
            printf("steps probed between steps: %d near, %d apart, %d on one core\n", ss.near, ss.apart, ss.one_core);
        printf("%s with each step priced at its own placement: median |error| %.1f%%, max %.1f%% (%s) over %d "
               "models\n", name, ss.median_abs_pct, ss.max_abs_pct, ss.max_model, ss.models);
        if (ss.near_models > 0)
            printf("%s against the near steps (their pooled median): median |error| %.1f%%, max %.1f%% (%s) over %d "
                   "models\n", name, ss.near_median_abs_pct, ss.near_max_abs_pct, ss.near_max_model, ss.near_models);
    }
    KindRow *k;
    const int nk = kind_rows(res, nm, H, &k);
    printf("\nby op kind, over all models (error of the kind's total; median |error| of its ops)\n");
    printf("%-13s %-11s %5s %11s %11s %8s %9s", "kind", "phase", "ops", "measured", "predicted", "error", "op med");
    if (H)
        printf(" %11s %8s %9s", "holdout", "error", "op med");
    printf("\n");
    for (int i = 0; i < nk; i++) {
        printf("%-13s %-11s %5d %11s %11s %+7.1f%% %8.1f%%", k[i].kind, k[i].phase, k[i].ops,
               fmt_time(k[i].measured_s, b1, 32), fmt_time(k[i].predicted_s[0], b2, 32),
               100 * (k[i].predicted_s[0] - k[i].measured_s) / k[i].measured_s, median_abs(k[i].op_err[0], k[i].ops));
        if (H)
            printf(" %11s %+7.1f%% %8.1f%%", fmt_time(k[i].predicted_s[1], b1, 32),
                   100 * (k[i].predicted_s[1] - k[i].measured_s) / k[i].measured_s,
                   median_abs(k[i].op_err[1], k[i].ops));
        printf("\n");
    }
    kind_rows_free(k, nk);
    for (int i = 0; i < nm; i++) {
        for (int h = 0; h <= (int)H; h++) {
            OpGroup *g;
            const int ng = op_groups(res[i].pred[h], res[i].meas, res[i].nops, &g);
            const int show = vo->trace ? ng : (ng < TOP_MISSES ? ng : TOP_MISSES);
            printf("\n%s%s: %s, sorted by absolute miss\n", res[i].v[0].model, h ? " (holdout)" : "",
                   vo->trace ? "every op, predicted against measured" : "ops with the largest misses");
            printf("  %-14s %5s %12s %12s %8s  %-8s %s\n", "layer", "count", "predicted", "measured", "miss", "source",
                   "op");
            for (int j = 0; j < show; j++)
                printf("  %-14s %5d %12s %12s %+7.1f%%  %-8s %s\n", g[j].layer_name, g[j].count,
                       fmt_time(g[j].time_s, b1, 32), fmt_time(g[j].measured_s, b2, 32),
                       100 * (g[j].time_s - g[j].measured_s) / g[j].measured_s, g[j].source, g[j].key);
            free(g);
        }
    }
}

/* A summary's error statistics over its models: the median and the largest |error|, and
 * the model of the largest. */
static void add_error_stats(cJSON *o, double median_abs_pct, double max_abs_pct, const char *max_model)
{
    cJSON_AddNumberToObject(o, "median_abs_error_pct", median_abs_pct);
    cJSON_AddNumberToObject(o, "max_abs_error_pct", max_abs_pct);
    cJSON_AddStringToObject(o, "max_model", max_model);
}

static cJSON *result_json(const ModelValidation *res, int nm, const ValidationOpts *vo, const PlacementWait *pw)
{
    const bool H = vo->holdout;
    cJSON *doc = cJSON_CreateObject();
    cJSON *w = cJSON_AddObjectToObject(doc, "placement_wait");
    cJSON_AddNumberToObject(w, "max_per_run_s", vo->wait_near_s);
    cJSON_AddNumberToObject(w, "runs_waited", pw->waits);
    cJSON_AddNumberToObject(w, "waited_s", pw->waited_s);
    cJSON_AddNumberToObject(w, "runs_ran_out", pw->ran_out);
    cJSON *arr = cJSON_AddArrayToObject(doc, "models");
    double err[2][MAX_MODELS], adj[2][MAX_MODELS];
    for (int i = 0; i < nm; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", res[i].v[0].model);
        cJSON_AddNumberToObject(o, "batch", res[i].batch);
        cJSON_AddNumberToObject(o, "measured_median_s", res[i].v[0].measured_s);
        cJSON_AddNumberToObject(o, "measured_min_s", res[i].v[0].measured_min_s);
        cJSON_AddNumberToObject(o, "measured_max_s", res[i].v[0].measured_max_s);
        cJSON_AddNumberToObject(o, "predicted_memory_bytes", res[i].memory_bytes);
        cJSON_AddNumberToObject(o, "peak_rss_bytes", res[i].peak_rss_bytes);
        cJSON_AddNumberToObject(o, "rounds", res[i].nrounds);
        if (res[i].far_rounds + res[i].near_rounds > 0) {
            cJSON_AddNumberToObject(o, "rounds_far", res[i].far_rounds);
            cJSON_AddNumberToObject(o, "rounds_near", res[i].near_rounds);
            cJSON_AddNumberToObject(o, "rounds_one_core", res[i].one_core_rounds);
        } else {
            cJSON_AddNullToObject(o, "rounds_far"); /* the cores' distance not measured */
            cJSON_AddNullToObject(o, "rounds_near");
            cJSON_AddNullToObject(o, "rounds_one_core");
        }
        if (res[i].near_rounds > 0)
            cJSON_AddNumberToObject(o, "measured_near_s", res[i].near_measured_s);
        else
            cJSON_AddNullToObject(o, "measured_near_s");
        cJSON_AddNumberToObject(o, "steps_near", res[i].steps_near);
        cJSON_AddNumberToObject(o, "steps_apart", res[i].steps_apart);
        cJSON_AddNumberToObject(o, "steps_one_core", res[i].steps_one_core);
        if (res[i].steps_near > 0)
            cJSON_AddNumberToObject(o, "measured_steps_near_s", res[i].steps_near_s);
        else
            cJSON_AddNullToObject(o, "measured_steps_near_s");
        if (res[i].steps_apart > 0)
            cJSON_AddNumberToObject(o, "measured_steps_apart_s", res[i].steps_apart_s);
        else
            cJSON_AddNullToObject(o, "measured_steps_apart_s");
        cJSON_AddNumberToObject(o, "rounds_apart", res[i].apart_rounds);
        if (res[i].apart_rounds > 0)
            cJSON_AddNumberToObject(o, "measured_apart_s", res[i].apart_measured_s);
        else
            cJSON_AddNullToObject(o, "measured_apart_s");
        for (int h = 0; h <= (int)H; h++) {
            const ValidationRow *v = &res[i].v[h];
            cJSON *p = cJSON_AddObjectToObject(o, h ? "holdout" : "full");
            cJSON_AddNumberToObject(p, "validation_id", (double)v->id);
            cJSON_AddNumberToObject(p, "predicted_s", v->predicted_s);
            cJSON_AddNumberToObject(p, "error_pct", v->error_pct);
            cJSON_AddNumberToObject(p, "drift_compute", v->drift_compute);
            cJSON_AddNumberToObject(p, "drift_memory", v->drift_memory);
            cJSON_AddNumberToObject(p, "adjusted_error_pct", v->adjusted_error_pct);
            if (v->drift_cross > 0) { /* the larger of before and after the run */
                cJSON_AddNumberToObject(p, "drift_cross", v->drift_cross);
                cJSON_AddNumberToObject(p, "drift_cross_before", res[i].cross_before);
                cJSON_AddNumberToObject(p, "drift_cross_after", res[i].cross_after);
            } else {
                cJSON_AddNullToObject(p, "drift_cross"); /* not measured */
            }
            if (res[i].near_rounds > 0)
                cJSON_AddNumberToObject(p, "error_near_pct", near_error_pct(&res[i], h));
            else
                cJSON_AddNullToObject(p, "error_near_pct");
            if (res[i].apart_predicted_s[h] > 0)
                cJSON_AddNumberToObject(p, "predicted_apart_s", res[i].apart_predicted_s[h]);
            else
                cJSON_AddNullToObject(p, "predicted_apart_s"); /* one thread, or nothing timed apart */
            if (!isnan(res[i].placed_error_pct[h]))
                cJSON_AddNumberToObject(p, "error_placed_pct", res[i].placed_error_pct[h]);
            else
                cJSON_AddNullToObject(p, "error_placed_pct");
            if (!isnan(res[i].steps_placed_error_pct[h]))
                cJSON_AddNumberToObject(p, "error_steps_placed_pct", res[i].steps_placed_error_pct[h]);
            else
                cJSON_AddNullToObject(p, "error_steps_placed_pct");
            if (res[i].steps_near > 0)
                cJSON_AddNumberToObject(p, "error_steps_near_pct", steps_near_error_pct(&res[i], h));
            else
                cJSON_AddNullToObject(p, "error_steps_near_pct");
            err[h][i] = v->error_pct;
            adj[h][i] = v->adjusted_error_pct;
            OpGroup *g;
            const int ng = op_groups(res[i].pred[h], res[i].meas, res[i].nops, &g);
            const int show = vo->trace ? ng : (ng < TOP_MISSES ? ng : TOP_MISSES);
            cJSON *miss = cJSON_AddArrayToObject(p, vo->trace ? "ops" : "largest_misses");
            for (int j = 0; j < show; j++) {
                cJSON *mo = cJSON_CreateObject();
                cJSON_AddStringToObject(mo, "layer", g[j].layer_name);
                cJSON_AddStringToObject(mo, "op", g[j].key);
                cJSON_AddNumberToObject(mo, "count", g[j].count);
                cJSON_AddNumberToObject(mo, "predicted_s", g[j].time_s);
                cJSON_AddNumberToObject(mo, "measured_s", g[j].measured_s);
                cJSON_AddStringToObject(mo, "source", g[j].source);
                cJSON_AddItemToArray(miss, mo);
            }
            free(g);
        }
        cJSON_AddItemToArray(arr, o);
    }
    for (int h = 0; h <= (int)H; h++) {
        double mx = 0;
        for (int i = 0; i < nm; i++)
            mx = fmax(mx, fabs(err[h][i]));
        cJSON *s = cJSON_AddObjectToObject(doc, h ? "summary_holdout" : "summary_full");
        cJSON_AddNumberToObject(s, "models", nm);
        cJSON_AddNumberToObject(s, "median_abs_error_pct", median_abs(err[h], nm));
        cJSON_AddNumberToObject(s, "max_abs_error_pct", mx);
        double mxa = 0;
        for (int i = 0; i < nm; i++)
            mxa = fmax(mxa, fabs(adj[h][i]));
        cJSON_AddNumberToObject(s, "median_abs_adjusted_error_pct", median_abs(adj[h], nm));
        cJSON_AddNumberToObject(s, "max_abs_adjusted_error_pct", mxa);
        {
            const NearSummary ns = near_summary(res, nm, h);
            cJSON *n = cJSON_AddObjectToObject(s, "near_placement");
            cJSON_AddNumberToObject(n, "runs", ns.runs);
            cJSON_AddNumberToObject(n, "runs_far", ns.far_runs);
            cJSON_AddNumberToObject(n, "runs_one_core", ns.one_core_runs);
            cJSON_AddNumberToObject(n, "models", ns.models);
            if (ns.models > 0)
                add_error_stats(n, ns.median_abs_pct, ns.max_abs_pct, ns.max_model);
            /* every model: its near runs, or all of them where it had none */
            cJSON_AddNumberToObject(n, "every_model_median_abs_error_pct", ns.every_median_abs_pct);
            cJSON_AddNumberToObject(n, "every_model_max_abs_error_pct", ns.every_max_abs_pct);
            cJSON_AddStringToObject(n, "every_model_max_model", ns.every_max_model);
        }
        {
            const PlacedSummary ps = placed_summary(res, nm, h);
            cJSON *pl = cJSON_AddObjectToObject(s, "each_run_placed");
            cJSON_AddBoolToObject(pl, "apart_priced", ps.priced);
            cJSON_AddNumberToObject(pl, "runs_apart", ps.apart_runs);
            cJSON_AddNumberToObject(pl, "models", ps.models);
            if (ps.models > 0)
                add_error_stats(pl, ps.median_abs_pct, ps.max_abs_pct, ps.max_model);
        }
        {
            const StepSummary ss = step_summary(res, nm, h);
            cJSON *st = cJSON_AddObjectToObject(s, "each_step_placed");
            cJSON_AddNumberToObject(st, "steps_near", ss.near);
            cJSON_AddNumberToObject(st, "steps_apart", ss.apart);
            cJSON_AddNumberToObject(st, "steps_one_core", ss.one_core);
            cJSON_AddNumberToObject(st, "models", ss.models);
            if (ss.models > 0)
                add_error_stats(st, ss.median_abs_pct, ss.max_abs_pct, ss.max_model);
            cJSON *ns = cJSON_AddObjectToObject(s, "near_steps");
            cJSON_AddNumberToObject(ns, "models", ss.near_models);
            if (ss.near_models > 0)
                add_error_stats(ns, ss.near_median_abs_pct, ss.near_max_abs_pct, ss.near_max_model);
        }
    }
    KindRow *k;
    const int nk = kind_rows(res, nm, H, &k);
    cJSON *kinds = cJSON_AddArrayToObject(doc, "by_kind");
    for (int i = 0; i < nk; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kind", k[i].kind);
        cJSON_AddStringToObject(o, "phase", k[i].phase);
        cJSON_AddNumberToObject(o, "ops", k[i].ops);
        cJSON_AddNumberToObject(o, "measured_s", k[i].measured_s);
        cJSON_AddNumberToObject(o, "predicted_s", k[i].predicted_s[0]);
        cJSON_AddNumberToObject(o, "op_median_abs_error_pct", median_abs(k[i].op_err[0], k[i].ops));
        if (H) {
            cJSON_AddNumberToObject(o, "holdout_predicted_s", k[i].predicted_s[1]);
            cJSON_AddNumberToObject(o, "holdout_op_median_abs_error_pct", median_abs(k[i].op_err[1], k[i].ops));
        }
        cJSON_AddItemToArray(kinds, o);
    }
    kind_rows_free(k, nk);
    return doc;
}

/* What an interrupted validation has kept: the validations stored so far (each with its
 * prediction and run), said by the exit line (cli/interrupt.h). */
typedef struct {
    int n;
    long long first, last;
    char models[256];
} StoredSoFar;

static void on_stored(const ValidationRow *v, void *ctx)
{
    StoredSoFar *k = ctx;
    if (k->n++ == 0)
        k->first = (long long)v->id;
    k->last = (long long)v->id;
    const size_t used = strlen(k->models);
    if (!strstr(k->models, v->model) && used + strlen(v->model) + 3 < sizeof k->models)
        snprintf(k->models + used, sizeof k->models - used, "%s%s", used ? ", " : "", v->model);
    char ids[64];
    if (k->first == k->last)
        snprintf(ids, sizeof ids, "id %lld", k->first);
    else
        snprintf(ids, sizeof ids, "ids %lld-%lld", k->first, k->last);
    interrupt_kept("%d validation%s stored (%s: %s) with their predictions and runs; the model in progress is "
                   "not", k->n, k->n == 1 ? "" : "s", ids, k->models);
}

int cmd_validate(int argc, char **argv, Cli *cli)
{
    if (validate_device_wanted(argc, argv))
        return validate_device(cli, argc, argv);
    static const struct option opts[] = {CLI_COMMON_OPTIONS, CLI_MODEL_FILE_OPTION,
                                         {"batch", required_argument, NULL, OPT_BATCH},
                                         {"steps", required_argument, NULL, OPT_STEPS},
                                         {"warmup", required_argument, NULL, OPT_WARMUP},
                                         {"rounds", required_argument, NULL, OPT_ROUNDS},
                                         {"min-time", required_argument, NULL, OPT_MIN_TIME},
                                         {"wait-near", required_argument, NULL, OPT_WAIT_NEAR},
                                         {"holdout", no_argument, NULL, OPT_HOLDOUT},
                                         {"trace", no_argument, NULL, OPT_TRACE},
                                         {"zoo", no_argument, NULL, OPT_ZOO},
                                         {"scaling", required_argument, NULL, OPT_SCALING},
                                         {"csv", no_argument, NULL, OPT_CSV},
                                         {"tp", required_argument, NULL, OPT_TP},
                                         {0}};
    ValidateArgs args = {.run = {.steps = 5, .warmup = 1, .rounds = 1, .min_time_s = 2.0,
                                 .wait_near_s = VALIDATION_WAIT_NEAR_S}};
    int rc = cli_parse(cli, argc, argv, opts, validate_option, &args, command_usage(cli->cmd));
    if (rc)
        return rc;
    if (args.csv && cli->json)
        return cli_error(cli, EXIT_USAGE, "--csv and --json are two formats; choose one");
    ValidationOpts vo = args.run;
    vo.quiet = cli->json;
    static StoredSoFar stored;
    vo.stored = on_stored;
    vo.stored_ctx = &stored;
    if (args.zoo && optind < argc)
        return cli_error(cli, EXIT_USAGE, "--zoo validates every model; give either --zoo or model names ('%s')",
                         argv[optind]);
    const bool dp = comm_env_size() > 1;
    if (args.tp > 1 && (!dp || comm_env_size() % args.tp != 0))
        return cli_error(cli, EXIT_USAGE, "--tp %d: must divide the job's %d ranks (mpirun -np P, P a multiple of %d)",
                         args.tp, comm_env_size(), args.tp);
    if (dp && (args.zoo || vo.holdout || vo.trace))
        return cli_error(cli, EXIT_USAGE, "under mpirun, validate compares data-parallel runs of named models; "
                                          "--zoo, --holdout and --trace are for one process");
    if (!dp && args.scaling_given)
        return cli_error(cli, EXIT_USAGE, "--scaling applies to data-parallel runs: run validate under mpirun -np P");
    ModelValidation res[MAX_MODELS];
    memset(res, 0, sizeof res);
    int nm = 0;
    for (int i = optind; i < argc; i++) {
        if (nm == MAX_MODELS)
            return cli_error(cli, EXIT_USAGE, "at most %d models in one validation", MAX_MODELS);
        if (!(res[nm++].m = cli_model(cli, argv[i])))
            return EXIT_USAGE;
    }
    if (cli->model_file) { /* a model file, beside the named models */
        if (args.zoo)
            return cli_error(cli, EXIT_USAGE, "--zoo validates the zoo; give --model-file without it");
        char e2[1024];
        const ModelSpec *loaded = cli_model_file(cli, e2, sizeof e2);
        if (!loaded)
            return cli_error(cli, EXIT_USAGE, "%s", e2);
        if (nm == MAX_MODELS)
            return cli_error(cli, EXIT_USAGE, "at most %d models in one validation", MAX_MODELS);
        res[nm++].m = loaded;
    }
    for (int i = 0; optind == argc && !cli->model_file && i < zoo_count() && nm < MAX_MODELS; i++) {
        const ModelSpec *m = zoo_get(i);
        if (args.zoo || m->demo) { /* the whole zoo, or the main job's three models */
            const ModelSpec *plain = cli->no_quirk ? zoo_without_quirk(m) : NULL;
            res[nm++].m = plain ? plain : m;
        }
    }
    char err[512];
    if (dp) {
        const ModelSpec *models[MAX_MODELS];
        for (int i = 0; i < nm; i++)
            models[i] = res[i].m;
        return validate_dp(cli, &vo, args.csv, models, nm, args.tp > 1 ? args.tp : 1);
    }
    for (int i = 0; i < nm; i++) {
        res[i].batch = vo.batch ? vo.batch : res[i].m->default_batch;
        if (!vo.batch && args.zoo && (res[i].batch = plan_batch_within(res[i].m, ZOO_STEP_MAX_FLOPS, err, sizeof err)) < 0)
            return cli_error(cli, EXIT_USAGE, "%s", err);
    }

    blas_select(cli);
    Db *db = cli_db_open(cli);
    if (!db)
        return EXIT_FAIL;
    MachineRow machine;
    CalibrationRow cal;
    CostModel *cm[2] = {NULL, NULL};
    if (cli_machine(cli, db, &machine) || cli_calibration(cli, db, &machine, &cal, &cm[0])) {
        db_close(db);
        return EXIT_FAIL;
    }
    if (vo.holdout) { /* the same calibration without any shape of any model being validated */
        int dropped = 0;
        if (!(cm[1] = validation_holdout_model(db, &cal, res, nm, &dropped, err, sizeof err))) {
            cm_free(cm[0]);
            db_close(db);
            return cli_error(cli, EXIT_FAIL, "%s", err);
        }
        if (!cli->json)
            fprintf(stderr, "validate: holdout calibration: %d of calibration %lld's measurements share a shape "
                            "with these models and are left out\n", dropped, (long long)cal.id);
    }
    const RunEnv env = cli_run_env(cli);
    PlacementWait pw;
    int done = 0;
    /* a signal stops the validation before the next step: the models whose rounds ran
     * are validated and stored, the one in progress is not */
    interrupt_flag_on_signal("validate");
    if (!vo.quiet) { /* how long, up front: the timed steps' floor and the waits' ceiling */
        const int runs = nm * vo.rounds;
        const double timed = runs * vo.min_time_s;
        if (cal.rtt_fastest_ns > 0 && vo.wait_near_s > 0)
            fprintf(stderr, "validate: %d run%s (up to %d where a model's first ran at another placement), each timing "
                            "at least %g s of steps (%g s in all); waits for the cores to come near: up to %g s "
                            "before a run, all together no longer than the runs plus %g s\n", runs,
                    runs == 1 ? "" : "s", 2 * runs, vo.min_time_s, timed, vo.wait_near_s, VALIDATION_WAIT_FLOOR_S);
        else
            fprintf(stderr, "validate: %d run%s, each timing at least %g s of steps (%g s in all); no wait for the "
                            "cores (%s)\n", runs, runs == 1 ? "" : "s", vo.min_time_s, timed,
                    cal.rtt_fastest_ns > 0 ? "--wait-near 0" : "the calibration saw them in one placement");
    }
    rc = validation_run(&env, db, &machine, &cal, cm, &vo, res, nm, &pw, &done, err, sizeof err);
    if (interrupt_requested())
        rc = cli_error(cli, interrupt_exit_code(), "interrupted by %s; %s",
                       interrupt_signal_name(interrupt_requested()), interrupt_kept_text());
    else if (rc != 0)
        cli_error(cli, rc, "%s", err);
    cm_free(cm[0]);
    cm_free(cm[1]);
    db_close(db);
    if (done > 0) {
        if (cli->json)
            json_print(result_json(res, done, &vo, &pw));
        else if (args.csv)
            print_csv(res, done, &vo);
        else
            print_text(&cal, cli, res, done, &vo, &pw);
    }
    for (int i = 0; i < nm; i++)
        model_validation_free(&res[i]);
    return rc;
}
