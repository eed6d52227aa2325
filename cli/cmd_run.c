/* cli/cmd_run.c — `dlperf run MODEL`: really train and time it, and store the run.
 *
 * Three ways to run:
 *   --steps N (default)   time training iterations on the model's synthetic batches
 *                         (--mode fwd-bwd / forward time gradients only / inference)
 *   --protocol convnet    the suite's timing protocol: 10 warm-up and 100 timed steps,
 *                         forward-only and forward-backward, mean and sd per batch (per
 *                         sample for recurrent models)
 *   --epochs N            train to a result on the model's data set (real Fashion-MNIST
 *                         where it applies), evaluating after every epoch, with the
 *                         reference metrics and seed 004's execution/inference times
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "predictor/machine_pricer.h"
#include "models/fit.h"
#include "models/plan.h"
#include "models/train.h"
#include "ops/comm.h"

typedef struct {
    int batch, steps, warmup, epochs;
    bool trace, convnet_protocol, steps_given, warmup_given, weak_scaling, overlap;
    int bucket_mib;
    int tp; /* tensor-parallel ranks (0: none) */
    PlanMode mode;
    const char *data_dir, *save, *load;
} RunOpts;

enum { OPT_BATCH = 1, OPT_STEPS, OPT_WARMUP, OPT_TRACE, OPT_EPOCHS, OPT_DATA_DIR, OPT_SAVE, OPT_LOAD, OPT_MODE,
       OPT_PROTOCOL, OPT_SCALING, OPT_OVERLAP, OPT_BUCKET_MIB, OPT_CSV, OPT_TP };

/* --csv: a timed run's steps, one row each, instead of the text */
static bool run_csv;

static int run_option(Cli *cli, int id, const char *arg, void *ctx)
{
    RunOpts *o = ctx;
    switch (id) {
    case OPT_BATCH: return cli_parse_int(cli, "--batch", arg, 1, 1 << 20, &o->batch);
    case OPT_STEPS: o->steps_given = true; return cli_parse_int(cli, "--steps", arg, 1, 1000000, &o->steps);
    case OPT_WARMUP: o->warmup_given = true; return cli_parse_int(cli, "--warmup", arg, 0, 100000, &o->warmup);
    case OPT_EPOCHS: return cli_parse_int(cli, "--epochs", arg, 1, 100000, &o->epochs);
    case OPT_TRACE: o->trace = true; return 0;
    case OPT_DATA_DIR: o->data_dir = arg; return 0;
    case OPT_SAVE: o->save = arg; return 0;
    case OPT_LOAD: o->load = arg; return 0;
    case OPT_MODE:
        if (strcmp(arg, "train") == 0)
            o->mode = PLAN_TRAIN;
        else if (strcmp(arg, "fwd-bwd") == 0)
            o->mode = PLAN_FWD_BWD;
        else if (strcmp(arg, "forward") == 0)
            o->mode = PLAN_INFERENCE;
        else
            return cli_error(cli, EXIT_USAGE, "--mode '%s': expected train, fwd-bwd or forward", arg);
        return 0;
    case OPT_OVERLAP: o->overlap = true; return 0;
    case OPT_CSV: run_csv = true; return 0;
    case OPT_BUCKET_MIB: return cli_parse_int(cli, "--bucket-mib", arg, 1, 4096, &o->bucket_mib);
    case OPT_TP: return cli_parse_int(cli, "--tp", arg, 1, 4096, &o->tp);
    case OPT_SCALING:
        if (strcmp(arg, "strong") != 0 && strcmp(arg, "weak") != 0)
            return cli_error(cli, EXIT_USAGE, "--scaling '%s': expected strong (--batch is the global batch) or "
                                              "weak (--batch per rank)", arg);
        o->weak_scaling = strcmp(arg, "weak") == 0;
        return 0;
    case OPT_PROTOCOL:
        if (strcmp(arg, "convnet") != 0)
            return cli_error(cli, EXIT_USAGE, "--protocol '%s': expected convnet", arg);
        o->convnet_protocol = true;
        return 0;
    }
    return EXIT_USAGE;
}

static double total_flops(const Plan *p)
{
    double f[PHASE_COUNT], t = 0;
    plan_flops(p, f);
    for (int i = 0; i < PHASE_COUNT; i++)
        t += f[i];
    return t;
}

static void print_progress(const char *line, void *ctx) { fprintf(stderr, "run: %s\n", line); }

/* --epochs: train to a result and report the metrics. Under mpirun every rank trains
 * `batch` samples of each global batch; rank 0 stores and reports. */
static int run_epochs(Cli *cli, const ModelSpec *m, const RunOpts *ro, int batch, const char *scaling, Db *db,
                      const MachineRow *machine)
{
    const int ranks = comm_size(), rank = comm_rank();
    FitOptions fo = {.epochs = ro->epochs, .batch = batch * ranks, .seed = 2017, .data_dir = ro->data_dir,
                     .save_path = ro->save, .load_path = ro->load, .rank = rank, .nranks = ranks,
                     .progress = rank == 0 ? print_progress : NULL};
    FitResult fr;
    char err[1024];
    char started[32];
    db_now_iso(started);
    ops_set_threads(cli->threads);
    if (fit_run(m, &fo, &fr, err, sizeof err) != 0)
        return cli_error(cli, EXIT_FAIL, "%s", err);
    if (rank != 0)
        return EXIT_OK;
    /* seed 004's metrics: total execution time = training + validation over the epochs;
     * total inference time = loading the weights + predicting the test set */
    MetricRow metrics[FIT_MAX_METRICS + 4];
    int nm = 0;
    for (int i = 0; i < fr.nmetrics; i++) {
        snprintf(metrics[nm].name, sizeof metrics[nm].name, "%s", fr.metrics[i].name);
        metrics[nm++].value = fr.metrics[i].value;
    }
    double exec_s = fr.train_s + fr.eval_s;
    metrics[nm++] = (MetricRow){"total_execution_time_s", exec_s};
    metrics[nm++] = (MetricRow){"total_inference_time_s", fr.infer_s};
    metrics[nm++] = (MetricRow){"achieved_gflops", fr.flops / exec_s / 1e9};
    RunRow row = {.machine_id = machine->id, .batch = fr.batch, .steps = (int)fr.steps, .warmup_steps = 0,
                  .epochs = fr.epochs, .median_s = fr.step_median_s, .min_s = fr.step_median_s,
                  .max_s = fr.step_median_s, .mean_s = fr.train_s / (fr.steps ? fr.steps : 1),
                  .loss_first = fr.first_loss, .loss_last = fr.last_loss, .peak_rss_bytes = peak_rss_bytes(),
                  .batch_per_rank = fr.batch_per_rank, .allreduce_bytes = fr.allreduce_bytes};
    snprintf(row.scaling, sizeof row.scaling, "%s", ranks > 1 ? scaling : "none");
    snprintf(row.model, sizeof row.model, "%s", m->name);
    snprintf(row.status, sizeof row.status, "complete");
    snprintf(row.mode, sizeof row.mode, "train");
    snprintf(row.started_at, sizeof row.started_at, "%s", started);
    cli_software(cli, &row.sw);
    if (db_run_insert(db, &row, NULL, NULL, 0, NULL, 0, metrics, nm) != 0)
        return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    if (cli->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "run_id", (double)row.id);
        cJSON_AddStringToObject(o, "model", m->name);
        cJSON_AddNumberToObject(o, "batch", fr.batch);
        cJSON_AddNumberToObject(o, "epochs", fr.epochs);
        cJSON_AddNumberToObject(o, "steps", (double)fr.steps);
        cJSON_AddStringToObject(o, "data", fr.data_source);
        cJSON_AddNumberToObject(o, "train_s", fr.train_s);
        cJSON_AddNumberToObject(o, "eval_s", fr.eval_s);
        cJSON_AddNumberToObject(o, "step_median_s", fr.step_median_s);
        cJSON_AddNumberToObject(o, "loss_first_epoch", fr.first_loss);
        cJSON_AddNumberToObject(o, "loss_last_epoch", fr.last_loss);
        cJSON_AddNumberToObject(o, "weights_load_s", fr.load_s);
        cJSON_AddNumberToObject(o, "ranks", ranks);
        if (ranks > 1) {
            cJSON_AddStringToObject(o, "scaling", scaling);
            cJSON_AddNumberToObject(o, "batch_per_rank", fr.batch_per_rank);
            cJSON_AddNumberToObject(o, "allreduce_bytes", fr.allreduce_bytes);
            cJSON_AddNumberToObject(o, "allreduce_median_s", fr.allreduce_median_s);
        }
        cJSON *mo = cJSON_AddObjectToObject(o, "metrics");
        for (int i = 0; i < nm; i++)
            cJSON_AddNumberToObject(mo, metrics[i].name, metrics[i].value);
        json_print(o);
        return EXIT_OK;
    }
    char b1[32], b2[32], b3[32];
    printf("%s: %d epoch(s) at batch %d, %d threads, OpenBLAS %s — run %lld\n", m->name, fr.epochs, fr.batch,
           cli->threads, row.sw.blas_core, (long long)row.id);
    printf("  data                    %s\n", fr.data_source);
    if (ranks > 1)
        printf("  ranks                   %d, %s scaling: %d samples per rank; gradients %s summed in %s "
               "(median per step, rank 0)\n", ranks, scaling, fr.batch_per_rank, fmt_bytes(fr.allreduce_bytes, b1, 32),
               fmt_time(fr.allreduce_median_s, b2, 32));
    printf("  train loss              %.5g (first epoch) -> %.5g (last epoch), %ld steps, median %s/step\n",
           fr.first_loss, fr.last_loss, fr.steps, fmt_time(fr.step_median_s, b1, 32));
    for (int i = 0; i < fr.nmetrics; i++)
        printf("  %-23s %.4f\n", fr.metrics[i].name, fr.metrics[i].value);
    printf("  total execution time    %s (training %s + validation %s)\n", fmt_time(exec_s, b1, 32),
           fmt_time(fr.train_s, b2, 32), fmt_time(fr.eval_s, b3, 32));
    printf("  total inference time    %s (weights load %s + prediction of %d samples)\n",
           fmt_time(fr.infer_s, b1, 32), fmt_time(fr.load_s, b2, 32), fr.test_n);
    printf("  achieved                %.1f GFLOP/s over training and validation\n", fr.flops / exec_s / 1e9);
    if (ro->save)
        printf("  weights                 %s\n", ro->save);
    return EXIT_OK;
}

/* A traced run's step by where its time went (pred_breakdown), against this machine's
 * latest calibration's limits where there is one. */
static void print_run_breakdown(const Cli *cli, Db *db, const MachineRow *machine, const ModelSpec *m, int batch,
                                PlanMode mode, const RunResult *r)
{
    Plan p;
    char err[1024];
    if (plan_build_mode(m, r->row.batch_per_rank > 0 ? r->row.batch_per_rank : batch, mode, &p, err, sizeof err) != 0)
        return;
    double peak = 0, dram = 0;
    CalibrationRow cal;
    CostModel *cm = NULL;
    if (p.nops == r->nops && machine_calibration(db, machine, cli->threads, &cal, &cm, err, sizeof err) == 0)
        cm_limits(cm, &peak, &dram);
    if (p.nops == r->nops) {
        StepBreakdown b;
        pred_breakdown(&p, r->ops, r->row.median_s, 0, peak, dram, &b);
        print_breakdown(&b, "measured medians, a step's ops");
    }
    cm_free(cm);
    plan_free(&p);
}

/* Data-parallel runs: where each rank's step went, and the allreduce's rate. */
static void print_ranks(const RunResult *r)
{
    const RunRow *row = &r->row;
    char b1[32], b2[32], b3[32], b4[32];
    const int tp = comm_tp_size();
    if (tp > 1)
        printf("  ranks      %d: tensor parallel %d x data parallel %d, %s scaling: %d samples per group; %s\n"
               "             (the tensor-parallel sums are ops of the step: in its compute time)\n", row->sw.ranks,
               tp, row->sw.ranks / tp, row->scaling, row->batch_per_rank, row->sw.mpi_library);
    else
        printf("  ranks      %d, %s scaling: %d samples per rank; %s\n", row->sw.ranks, row->scaling,
               row->batch_per_rank, row->sw.mpi_library);
    double ar = 0;
    for (int i = 0; i < row->sw.ranks; i++)
        ar += row->rank_times[i].allreduce_s / row->sw.ranks;
    if (row->bucket_bytes > 0)
        printf("  allreduce  %s of gradients per step in buckets of %s overlapped with backward: %s median not "
               "hidden (mean over ranks)\n", fmt_bytes(row->allreduce_bytes, b1, 32), fmt_bytes(row->bucket_bytes, b3, 32),
               fmt_time(ar, b2, 32));
    else
        printf("  allreduce  %s of gradients per step, %s median (mean over ranks), %.2f GB/s algorithm bandwidth\n",
               fmt_bytes(row->allreduce_bytes, b1, 32), fmt_time(ar, b2, 32),
               ar > 0 ? row->allreduce_bytes / ar / 1e9 : 0);
    printf("\n  %4s %12s %12s %12s %12s   %-10s (medians over the timed steps; cpus: the CPUs the rank was "
           "allowed)\n", "rank", "step", "compute", "wait", "allreduce", "cpus");
    for (int i = 0; i < row->sw.ranks; i++) {
        const RankTimeRow *k = &row->rank_times[i];
        printf("  %4d %12s %12s %12s %12s   %s\n", k->rank, fmt_time(k->step_s, b1, 32),
               fmt_time(k->compute_s, b2, 32), fmt_time(k->wait_s, b3, 32), fmt_time(k->allreduce_s, b4, 32),
               k->cpus[0] ? k->cpus : "?");
    }
    /* what a step waits for: its slowest rank, which can change from step to step */
    printf("  %4s %12s %12s %12s %12s   (each step's slowest rank; median over the steps)\n", "max", "",
           fmt_time(r->slowest.compute_s, b2, 32), "", fmt_time(r->slowest.comm_s, b4, 32));
}

static int run_steps(Cli *cli, const ModelSpec *m, int batch, PlanMode mode, int warmup, int steps, bool trace,
                     const char *scaling, size_t bucket_bytes, Db *db, const MachineRow *machine, cJSON *json_out)
{
    char err[512];
    Plan probe;
    if (plan_build_mode(m, batch, mode, &probe, err, sizeof err) != 0)
        return cli_error(cli, EXIT_USAGE, "%s", err);
    const int ranks = comm_size(), tp = comm_tp_size();
    double flops = total_flops(&probe) * ranks; /* the job's: every rank's share */
    plan_free(&probe);
    if (m->tp_whole) { /* tensor parallel: the whole model's work, not its shares' (which each
                        * redo the parts every rank holds whole) */
        if (plan_build_mode(m->tp_whole, batch, mode, &probe, err, sizeof err) != 0)
            return cli_error(cli, EXIT_USAGE, "%s", err);
        flops = total_flops(&probe) * (ranks / tp);
        plan_free(&probe);
    }
    RunResult r;
    const RunEnv env = cli_run_env(cli);
    if (run_train(&env, m, batch, mode, warmup, steps, trace, machine, scaling, bucket_bytes, &r, err, sizeof err)) {
        if (r.failed) { /* diverged: the steps so far are stored, as a failed run */
            if (comm_rank() == 0 && db_run_insert(db, &r.row, r.step_s, r.loss, r.nsteps, NULL, 0, NULL, 0) == 0)
                fprintf(stderr, "dlperf run: run %lld stored as failed (%d steps)\n", (long long)r.row.id, r.nsteps);
            run_result_free(&r);
        }
        return cli_error(cli, EXIT_FAIL, "%s", err);
    }
    if (comm_rank() != 0) { /* rank 0 stores and reports the job */
        run_result_free(&r);
        return EXIT_OK;
    }
    batch = r.row.batch; /* from here: the job's global batch */
    int rc = EXIT_OK;
    if (db_run_insert(db, &r.row, r.step_s, r.loss, r.nsteps, r.ops, r.ops ? r.nops : 0, NULL, 0) != 0)
        rc = cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    else
        interrupt_kept("run %lld stored; a run still in progress is not", (long long)r.row.id);
    const RunRow *row = &r.row;
    /* recurrent benchmarks report time per sample (rnn-benchmarks) */
    bool per_sample = m->family && strcmp(m->family, "RNN") == 0;
    if (rc == EXIT_OK && json_out) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "run_id", (double)row->id);
        cJSON_AddStringToObject(o, "model", m->name);
        cJSON_AddStringToObject(o, "mode", plan_mode_name(mode));
        cJSON_AddNumberToObject(o, "batch", batch);
        cJSON_AddNumberToObject(o, "threads", cli->threads);
        cJSON_AddNumberToObject(o, "steps", steps);
        cJSON_AddNumberToObject(o, "warmup_steps", warmup);
        cJSON_AddNumberToObject(o, "median_s", row->median_s);
        cJSON_AddNumberToObject(o, "min_s", row->min_s);
        cJSON_AddNumberToObject(o, "max_s", row->max_s);
        cJSON_AddNumberToObject(o, "mean_s", row->mean_s);
        cJSON_AddNumberToObject(o, "stddev_s", row->stddev_s);
        if (per_sample)
            cJSON_AddNumberToObject(o, "mean_s_per_sample", row->mean_s / batch);
        cJSON_AddNumberToObject(o, "samples_per_s", batch / row->median_s);
        cJSON_AddNumberToObject(o, "gflops", flops / row->median_s / 1e9);
        cJSON_AddNumberToObject(o, "loss_first", row->loss_first);
        cJSON_AddNumberToObject(o, "loss_last", row->loss_last);
        cJSON_AddNumberToObject(o, "planned_bytes", row->planned_bytes);
        cJSON_AddNumberToObject(o, "peak_rss_bytes", row->peak_rss_bytes);
        cJSON_AddStringToObject(o, "blas_core", row->sw.blas_core);
        cJSON_AddStringToObject(o, "blas_choice", row->sw.blas_choice);
        cJSON_AddStringToObject(o, "threading", row->sw.threading);
        cJSON_AddNumberToObject(o, "ranks", ranks);
        if (ranks > 1) {
            cJSON_AddNumberToObject(o, "tensor_parallel", tp);
            cJSON_AddNumberToObject(o, "data_parallel", ranks / tp);
            cJSON_AddStringToObject(o, "scaling", row->scaling);
            cJSON_AddNumberToObject(o, "batch_per_rank", row->batch_per_rank);
            cJSON_AddStringToObject(o, "mpi_library", row->sw.mpi_library);
            cJSON_AddNumberToObject(o, "allreduce_bytes", row->allreduce_bytes);
            cJSON_AddNumberToObject(o, "bucket_bytes", row->bucket_bytes);
            cJSON *rk = cJSON_AddArrayToObject(o, "rank_times");
            for (int i = 0; i < ranks; i++) {
                const RankTimeRow *k = &row->rank_times[i];
                cJSON *x = cJSON_CreateObject();
                cJSON_AddNumberToObject(x, "rank", k->rank);
                cJSON_AddNumberToObject(x, "step_s", k->step_s);
                cJSON_AddNumberToObject(x, "compute_s", k->compute_s);
                cJSON_AddNumberToObject(x, "wait_s", k->wait_s);
                cJSON_AddNumberToObject(x, "allreduce_s", k->allreduce_s);
                cJSON_AddStringToObject(x, "hostname", k->hostname);
                cJSON_AddStringToObject(x, "cpus", k->cpus);
                cJSON_AddItemToArray(rk, x);
            }
            cJSON *sl = cJSON_AddObjectToObject(o, "slowest_rank"); /* step by step, median over steps */
            cJSON_AddNumberToObject(sl, "compute_s", r.slowest.compute_s);
            cJSON_AddNumberToObject(sl, "allreduce_s", r.slowest.comm_s);
        }
        cJSON *st = cJSON_AddArrayToObject(o, "step_s");
        cJSON *ls = cJSON_AddArrayToObject(o, m->algorithm == ALGO_FISTA ? "objective" : "loss");
        for (int i = 0; i < r.nsteps; i++) {
            cJSON_AddItemToArray(st, cJSON_CreateNumber(r.step_s[i]));
            cJSON_AddItemToArray(ls, cJSON_CreateNumber(r.loss[i]));
        }
        cJSON_AddItemToArray(json_out, o);
    } else if (rc == EXIT_OK && run_csv) {
        printf("run,model,mode,batch,threads,ranks,step,warmup,time_s,%s\n",
               m->algorithm == ALGO_FISTA ? "objective" : "loss");
        for (int i = 0; i < r.nsteps; i++)
            printf("%lld,%s,%s,%d,%d,%d,%d,%d,%.9g,%.9g\n", (long long)row->id, m->name, plan_mode_name(mode), batch,
                   cli->threads, ranks, i, i < warmup, r.step_s[i], r.loss[i]);
    } else if (rc == EXIT_OK) {
        char b1[32], b2[32], b3[32], b4[32], b5[32];
        char job[48] = "";
        if (ranks > 1)
            snprintf(job, sizeof job, " per rank x %d ranks", ranks);
        printf("%s %s at batch %d, %d threads%s, OpenBLAS %s — run %lld\n", m->name, plan_mode_name(mode), batch,
               cli->threads, job, row->sw.blas_core, (long long)row->id);
        printf("  iteration  %s median (min %s, max %s), mean %s sd %s over %d steps after %d warm-up\n",
               fmt_time(row->median_s, b1, 32), fmt_time(row->min_s, b2, 32), fmt_time(row->max_s, b3, 32),
               fmt_time(row->mean_s, b4, 32), fmt_time(row->stddev_s, b5, 32), steps, warmup);
        if (per_sample)
            printf("  per sample %s (mean / batch, as rnn-benchmarks reports)\n", fmt_time(row->mean_s / batch, b1, 32));
        printf("  throughput %.1f samples/s, %.1f GFLOP/s\n", batch / row->median_s, flops / row->median_s / 1e9);
        if (m->algorithm == ALGO_FISTA) { /* seed 002: the objective after every iteration */
            printf("  objective  1/2 ||S D - X||^2 + lambda ||S||_1 per iteration:\n");
            for (int i = 0; i < r.nsteps; i++)
                printf("%s%11.6g%s", i % 8 ? " " : "    ", r.loss[i], i % 8 == 7 || i == r.nsteps - 1 ? "\n" : "");
        } else {
            printf("  loss       %.6g (first step) -> %.6g (last step)\n", row->loss_first, row->loss_last);
        }
        printf("  memory     %s planned, %s peak RSS%s\n", fmt_bytes(row->planned_bytes, b1, 32),
               fmt_bytes(row->peak_rss_bytes, b2, 32),
               ranks > 1 ? " (rank 0's process; it also holds the MPI library's allreduce scratch, which\n"
                           "             the plan leaves out: 'mpirun ... dlperf validate' predicts it)" : "");
        if (ranks > 1)
            print_ranks(&r);
        if (r.ops) {
            OpGroup *g;
            int ng = op_groups(NULL, r.ops, r.nops, &g);
            printf("\n%-12s %5s %12s %9s  %s\n", "layer", "count", "time", "GFLOP/s", "op (measured medians)");
            for (int i = 0; i < ng && i < 15; i++)
                printf("%-12s %5d %12s %9.1f  %s\n", g[i].layer_name, g[i].count, fmt_time(g[i].time_s, b1, 32),
                       g[i].flops / g[i].time_s / 1e9, g[i].key);
            if (ng > 15)
                printf("%-12s %5d %12s\n", "(the rest)", ng - 15, "");
            free(g);
            print_run_breakdown(cli, db, machine, m, batch, mode, &r);
        }
    }
    run_result_free(&r);
    return rc;
}

int cmd_run(int argc, char **argv, Cli *cli)
{
    static const struct option opts[] = {CLI_COMMON_OPTIONS,
                                         CLI_MODEL_FILE_OPTION,
                                         {"batch", required_argument, NULL, OPT_BATCH},
                                         {"steps", required_argument, NULL, OPT_STEPS},
                                         {"warmup", required_argument, NULL, OPT_WARMUP},
                                         {"trace", no_argument, NULL, OPT_TRACE},
                                         {"epochs", required_argument, NULL, OPT_EPOCHS},
                                         {"data-dir", required_argument, NULL, OPT_DATA_DIR},
                                         {"save", required_argument, NULL, OPT_SAVE},
                                         {"load", required_argument, NULL, OPT_LOAD},
                                         {"mode", required_argument, NULL, OPT_MODE},
                                         {"protocol", required_argument, NULL, OPT_PROTOCOL},
                                         {"scaling", required_argument, NULL, OPT_SCALING},
                                         {"overlap", no_argument, NULL, OPT_OVERLAP},
                                         {"bucket-mib", required_argument, NULL, OPT_BUCKET_MIB},
                                         {"csv", no_argument, NULL, OPT_CSV},
                                         {"tp", required_argument, NULL, OPT_TP},
                                         {0}};
    RunOpts ro = {.steps = 10, .warmup = 2, .mode = PLAN_TRAIN};
    int rc = cli_parse(cli, argc, argv, opts, run_option, &ro, command_usage(cli->cmd));
    if (rc)
        return rc;
    if (run_csv && (cli->json || ro.epochs || ro.convnet_protocol))
        return cli_error(cli, EXIT_USAGE, "--csv lists a timed run's steps: not with --json, --epochs or --protocol");
    if (ro.epochs && (ro.steps_given || ro.convnet_protocol || ro.mode != PLAN_TRAIN || ro.trace))
        return cli_error(cli, EXIT_USAGE, "--epochs trains to a result; it does not combine with --steps, --mode, "
                                          "--protocol or --trace");
    if (!ro.epochs && (ro.data_dir || ro.save || ro.load))
        return cli_error(cli, EXIT_USAGE, "--data-dir, --save and --load go with --epochs");
    if (ro.convnet_protocol && ro.mode != PLAN_TRAIN)
        return cli_error(cli, EXIT_USAGE, "--protocol convnet times forward and fwd-bwd itself; drop --mode");
    if (ro.convnet_protocol) { /* convnet-benchmarks: 10 burn-in steps, 100 timed */
        if (!ro.warmup_given)
            ro.warmup = 10;
        if (!ro.steps_given)
            ro.steps = 100;
    }
    /* under mpirun: data-parallel over the job's ranks (MPI starts after the BLAS choice,
     * which may re-execute this process), or over its groups of --tp ranks, each group
     * training one copy of the model split tensor-parallel */
    const int job = comm_env_size(), tp = ro.tp > 1 ? ro.tp : 1;
    if (tp > 1 && job % tp != 0)
        return cli_error(cli, EXIT_USAGE, "--tp %d: must divide the job's %d ranks (mpirun -np P, P a multiple of "
                                          "%d)", tp, job, tp);
    if (tp > 1 && (ro.epochs || ro.convnet_protocol))
        return cli_error(cli, EXIT_USAGE, "--tp times training steps (--steps); not with --epochs or --protocol");
    const int ranks = job / tp; /* data-parallel ranks */
    if ((ro.overlap || ro.bucket_mib) && ranks < 2)
        return cli_error(cli, EXIT_USAGE, "--overlap and --bucket-mib shape the gradients' allreduce of a "
                                          "data-parallel run: run under mpirun -np P");
    if (ro.bucket_mib && !ro.overlap)
        return cli_error(cli, EXIT_USAGE, "--bucket-mib goes with --overlap");
    /* Horovod's default fusion buffer: 64 MiB */
    const size_t bucket_bytes = ro.overlap ? (size_t)(ro.bucket_mib ? ro.bucket_mib : 64) << 20 : 0;
    if (ranks > 1 && ro.epochs && ro.overlap)
        return cli_error(cli, EXIT_USAGE, "--overlap times overlapped buckets in --steps runs; --epochs sums the "
                                          "gradients with one allreduce per step");
    if (ranks > 1 && ro.batch && !ro.weak_scaling && ro.batch % ranks != 0)
        return cli_error(cli, EXIT_USAGE,
                         "--batch %d: strong scaling splits the global batch over the %d ranks; give a multiple "
                         "of %d, or --scaling weak for %d samples per rank", ro.batch, ranks, ranks, ro.batch);
    const ModelSpec *m;
    Plan probe; /* answers "does it fit" before anything else */
    if ((rc = cli_model_plan(cli, argc, argv, ro.batch, &m, &probe)))
        return rc;
    int batch = probe.batch; /* per rank from here */
    if (tp > 1) {
        char terr[512];
        plan_free(&probe);
        if (!(m = cli_tp_share(cli, m, tp)))
            return EXIT_USAGE;
        if (plan_build_mode(m, batch, ro.mode, &probe, terr, sizeof terr) != 0)
            return cli_error(cli, EXIT_USAGE, "%s", terr);
    }
    if (ranks > 1 && !ro.weak_scaling) {
        if (batch % ranks != 0 || batch < ranks) {
            plan_free(&probe);
            return cli_error(cli, EXIT_USAGE,
                             "%s: its default batch %d does not split evenly over %d ranks; give --batch (a "
                             "multiple of %d) or --scaling weak", m->name, batch, ranks, ranks);
        }
        batch /= ranks;
        char perr[512];
        plan_free(&probe);
        if (plan_build_mode(m, batch, ro.mode, &probe, perr, sizeof perr) != 0)
            return cli_error(cli, EXIT_USAGE, "%s", perr);
    }
    if (ro.epochs && m->algorithm == ALGO_FISTA) {
        plan_free(&probe);
        return cli_error(cli, EXIT_USAGE,
                         "%s: FISTA solves the sparse codes of one batch by iterations; run it with --steps, "
                         "not --epochs", m->name);
    }
    char err[512];
    if (!ro.epochs && trainer_check_memory_shared(&probe, trainer_data_batches(ro.warmup + ro.steps),
                                                  job > 1 ? comm_env_local_size() : 1,
                                                  ranks > 1 && ro.mode != PLAN_INFERENCE, err, sizeof err) != 0) {
        plan_free(&probe);
        return cli_error(cli, EXIT_FAIL, "%s", err);
    }
    plan_free(&probe);
    blas_select(cli);
    if (comm_start(err, sizeof err) != 0 || comm_split_tensor_parallel(tp, err, sizeof err) != 0)
        return cli_error(cli, EXIT_FAIL, "%s", err);
    comm_reuse_collective_buffers();

    /* only rank 0 touches the database */
    Db *db = NULL;
    MachineRow machine = {0};
    if (comm_rank() == 0) {
        if (!(db = cli_db_open(cli)))
            return EXIT_FAIL;
        if (cli_machine(cli, db, &machine)) {
            db_close(db);
            return EXIT_FAIL;
        }
    }
    const char *scaling = ro.weak_scaling ? "weak" : "strong";
    cJSON *arr = cli->json ? cJSON_CreateArray() : NULL;
    if (ro.epochs) {
        cJSON_Delete(arr); /* run_epochs prints its own JSON object */
        arr = NULL;
        rc = run_epochs(cli, m, &ro, batch, scaling, db, &machine);
    } else if (ro.convnet_protocol) {
        rc = run_steps(cli, m, batch, PLAN_INFERENCE, ro.warmup, ro.steps, ro.trace, scaling, bucket_bytes, db, &machine, arr);
        if (rc == EXIT_OK)
            rc = run_steps(cli, m, batch, PLAN_FWD_BWD, ro.warmup, ro.steps, ro.trace, scaling, bucket_bytes, db, &machine, arr);
    } else {
        rc = run_steps(cli, m, batch, ro.mode, ro.warmup, ro.steps, ro.trace, scaling, bucket_bytes, db, &machine, arr);
    }
    if (arr && (rc != EXIT_OK || comm_rank() != 0)) {
        cJSON_Delete(arr);
    } else if (arr) {
        /* one run: its object; the protocol's two runs: the array */
        if (cJSON_GetArraySize(arr) == 1) {
            cJSON *one = cJSON_DetachItemFromArray(arr, 0);
            cJSON_Delete(arr);
            json_print(one);
        } else {
            json_print(arr);
        }
    }
    if (db)
        db_close(db);
    return rc;
}
