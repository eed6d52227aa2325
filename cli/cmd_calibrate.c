/* cli/cmd_calibrate.c — `dlperf calibrate`: measure this machine into the database.
 *
 * The families, in the order they are measured: the machine's limits (FMA peak on one
 * and on all cores, the bandwidth of each memory level), every op of the chosen models'
 * training steps (what predictions of those models price exactly), then GEMM sweeps,
 * DeepBench's GEMM, convolution, RNN and sparse lists with seed 004's shapes, STREAM and
 * element-wise / layer-op sweeps (what the fitted models for unmeasured shapes are built
 * from).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/calibration_show.h"
#include "cli/evidence_show.h"
#include "models/model_json.h"
#include "cli/cli.h"
#include "cli/interrupt.h"
#include "cli/cli.h"
#include "predictor/machine_pricer.h"
#include "microbench/mb.h"
#include "models/plan.h"
#include "ops/comm.h"


typedef enum {
    FAM_PEAK, FAM_MEMORY, FAM_MODEL_OP, FAM_GEMM_SWEEP, FAM_GEMM_DEEPBENCH, FAM_CONV_DEEPBENCH,
    FAM_RNN_DEEPBENCH, FAM_SPARSE, FAM_CNN_SWEEP, FAM_STREAM, FAM_ELTWISE, FAM_TRANSFORMER, NFAMILIES
} Family;
static const char *const family_names[NFAMILIES] = {
    "peak", "memory", "model-op", "gemm-sweep", "gemm-deepbench", "conv-deepbench", "rnn-deepbench", "sparse",
    "cnn-sweep", "stream", "eltwise", "transformer"};
#define FAMILY_LIST "peak, memory, model-op, gemm-sweep, gemm-deepbench, conv-deepbench, rnn-deepbench, sparse, " \
                    "cnn-sweep, stream, eltwise, transformer"
enum { MAX_MODELS = 64 };
/* Default and full calibrations measure the models' ops at the batch whose training step
 * is at most this many FLOPs (plan_batch_within; the default batch for the small models,
 * e.g. 69 for AlexNet-OWT, 6 for VGG-11): what `validate --zoo` runs. */
#define CAL_STEP_MAX_FLOPS 300e9

typedef struct {
    MbMode mode;
    bool quick, full, show, verbose, any_measure_option;
    bool csv;                 /* --show --csv */
    bool comm;                /* --only comm: the MPI collectives, under mpirun */
    bool family[NFAMILIES];   /* measured families (--only) */
    const ModelSpec *models[MAX_MODELS]; /* --models, default: the whole zoo */
    int nmodels;
    int batch;                /* --batch for the model ops, default: each model's */
    int rounds;               /* --rounds: passes over the lists (default 1) */
    double budget_min;        /* --budget: minutes at most (-1: not given; 0: none) */
    int show_ranks;           /* --show --ranks N: the calibration N ranks measured at once (0: one process's) */
    const char *show_device;  /* --show --device NAME: the evidence of a device that is not this machine */
    int tp;                   /* --tp T: each model as one of T tensor-parallel ranks' shares */
} CalOpts;

enum { OPT_QUICK = 1, OPT_FULL, OPT_ONLY, OPT_MODELS, OPT_BATCH, OPT_SHOW, OPT_ROUNDS, OPT_RANKS, OPT_DEVICE, OPT_VERBOSE,
       OPT_CSV, OPT_BUDGET, OPT_TP };
/* The default calibration's bound on 2 cores, whatever the host: its kernels sample for a
 * shorter time where the host runs them slower than the protocol expects. */
#define CAL_DEFAULT_BUDGET_MIN 15

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
    if (strcmp(item, "comm") == 0) {
        c->o->comm = true;
        return 0;
    }
    for (int i = 0; i < NFAMILIES; i++)
        if (strcmp(item, family_names[i]) == 0) {
            c->o->family[i] = true;
            return 0;
        }
    return cli_error(c->cli, EXIT_USAGE, "--only '%s': unknown family; families: " FAMILY_LIST ", comm", item);
}

static int model_item(const char *item, void *ctx)
{
    ItemCtx *c = ctx;
    if (strcmp(item, "zoo") == 0 || strcmp(item, "suite") == 0) { /* every zoo (suite) model */
        for (int i = 0; i < zoo_count(); i++) {
            const ModelSpec *m = zoo_get(i);
            if (strcmp(item, "zoo") == 0 || (m->origin && strcmp(m->origin, "suite") == 0)) {
                if (c->o->nmodels == MAX_MODELS)
                    return cli_error(c->cli, EXIT_USAGE, "--models: at most %d models", MAX_MODELS);
                c->o->models[c->o->nmodels++] = m;
            }
        }
        return 0;
    }
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
    if (id == OPT_TP) {
        o->any_measure_option = true;
        return cli_parse_int(cli, "--tp", arg, 1, 4096, &o->tp);
    }
    ItemCtx ic = {cli, o};
    o->any_measure_option |=
        id != OPT_SHOW && id != OPT_RANKS && id != OPT_DEVICE && id != OPT_VERBOSE && id != OPT_CSV;
    switch (id) {
    case OPT_SHOW: o->show = true; return 0;
    case OPT_VERBOSE: o->verbose = true; return 0;
    case OPT_CSV: o->csv = true; return 0;
    case OPT_DEVICE: o->show_device = arg; return 0;
    case OPT_RANKS: return cli_parse_int(cli, "--ranks", arg, 1, 1 << 20, &o->show_ranks);
    case OPT_QUICK: o->quick = true; return 0;
    case OPT_FULL: o->full = true; return 0;
    case OPT_ONLY: return each_item(arg, only_item, &ic) ? EXIT_USAGE : 0;
    case OPT_MODELS: return each_item(arg, model_item, &ic) ? EXIT_USAGE : 0;
    case OPT_BATCH: return cli_parse_int(cli, "--batch", arg, 1, 1 << 20, &o->batch);
    case OPT_ROUNDS: return cli_parse_int(cli, "--rounds", arg, 1, MB_MAX_ROUNDS, &o->rounds);
    case OPT_BUDGET: {
        char *end;
        const double v = strtod(arg, &end);
        if (end == arg || *end || !(v >= 0) || v > 7 * 24 * 60)
            return cli_error(cli, EXIT_USAGE, "--budget '%s': expected minutes, a number from 0 (no budget) to 10080",
                             arg);
        o->budget_min = v;
        return 0;
    }
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

/* --tp: each model as one tensor-parallel rank's share (its ops at the shapes a rank runs;
 * its sums over the group are collectives, which --only comm measures). */
static int replace_by_shares(Cli *cli, CalOpts *o)
{
    for (int i = 0; i < o->nmodels; i++)
        if (o->models[i]->tp_ranks <= 1 && !(o->models[i] = cli_tp_share(cli, o->models[i], o->tp)))
            return EXIT_USAGE;
    return 0;
}

/* The ops of the chosen models' training steps. */
static OpDesc *model_ops(const CalOpts *o, int *n, char *err, size_t errlen)
{
    OpDesc *ops = NULL;
    *n = 0;
    for (int i = 0; i < o->nmodels; i++) {
        const ModelSpec *m = o->models[i];
        Plan p;
        int batch = o->batch ? o->batch : m->default_batch;
        if (!o->batch && o->mode != MB_QUICK && (batch = plan_batch_within(m, CAL_STEP_MAX_FLOPS, err, errlen)) < 0) {
            free(ops);
            return NULL;
        }
        if (plan_build(m, batch, &p, err, errlen) != 0) {
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
        for (int j = 0; j < p.nops; j++) { /* each on its own workspace slices: the plan's
                                              spacing changes where they lie, not the time */
            if (p.ops[j].desc.kind == OP_ALLREDUCE) /* a collective: --only comm measures those */
                continue;
            ops[*n] = p.ops[j].desc;
            op_workspace_set_slice(&ops[(*n)++], 0);
        }
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

/* --show: the latest complete calibration of this machine at --threads, measured by one
 * process or (--ranks N, N > 1) by N ranks at once under mpirun, as data-parallel
 * predictions use it. */
static int show_latest(Cli *cli, int ranks, bool verbose, bool csv)
{
    Db *db = cli_db_open(cli);
    if (!db)
        return EXIT_FAIL;
    MachineRow machine;
    CalibrationRow cal;
    int rc = cli_machine(cli, db, &machine);
    if (rc == 0) {
        int found = db_calibration_latest_ranks(db, machine.id, cli->threads, ranks, &cal);
        if (found == DB_NOT_FOUND && ranks > 1)
            rc = cli_error(cli, EXIT_FAIL, "%s has no complete calibration of this machine measured by %d ranks at %d "
                           "threads per rank; run mpirun -np %d dlperf calibrate --threads %d", cli->db_path, ranks,
                           cli->threads, ranks, cli->threads);
        else if (found == DB_NOT_FOUND)
            rc = cli_error(cli, EXIT_FAIL, "%s has no complete calibration of this machine at %d threads; run "
                           "dlperf calibrate", cli->db_path, cli->threads);
        else if (found != 0)
            rc = cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
        else
            rc = calibration_show(cli, db, &cal, verbose, csv);
    }
    db_close(db);
    return rc;
}

/* After the measuring loop (rc: 0 done, 1 interrupted, -1 failed with err): marks the
 * calibration complete or interrupted (db: rank 0 or the only process; other ranks pass
 * NULL and just get the exit code) and, unless it completed, closes db and reports. */
static int finish_calibration(const Cli *cli, Db *db, int64_t id, int rc, double elapsed, const char *err)
{
    if (!db)
        return rc == 0 ? EXIT_OK : rc > 0 ? interrupt_exit_code() : EXIT_FAIL;
    if (db_calibration_finish(db, id, rc == 0 ? "complete" : "interrupted") != 0) {
        cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
        db_close(db);
        return EXIT_FAIL;
    }
    if (rc == 0)
        return EXIT_OK;
    db_close(db);
    if (rc > 0)
        return cli_error(cli, interrupt_exit_code(), "interrupted by %s after %.0f s; calibration %lld is marked "
                         "interrupted: its measurements so far are kept in the database, never used for a "
                         "prediction", interrupt_signal_name(interrupt_requested()), elapsed, (long long)id);
    return cli_error(cli, EXIT_FAIL, "%s (calibration %lld marked interrupted)", err, (long long)id);
}

/* An OSU-style table of a communication calibration (rank 0). */
static int print_comm_row(const MeasurementRow *m, void *ctx)
{
    char b1[32], b2[32];
    const char *kind = ctx;
    if (strcmp(m->kind, kind) != 0)
        return 0;
    double gbs = m->median_s > 0 ? m->bytes / m->median_s / 1e9 : 0;
    printf("  %-10s %12s %12s %10.3f GB/s%s\n", m->kind, fmt_bytes(m->bytes, b1, 32), fmt_time(m->median_s, b2, 32),
           gbs, m->validated ? "" : "  (not validated)");
    return 0;
}

/* The allreduce memory probes: the text table, or into a JSON array. */
static int print_comm_memory(double bytes, double scratch_bytes, void *ctx)
{
    char b1[32], b2[32];
    if (ctx) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "bytes", bytes);
        cJSON_AddNumberToObject(o, "scratch_bytes", scratch_bytes);
        cJSON_AddItemToArray(ctx, o);
    } else {
        printf("  %-10s %12s %12s %9.2f x the buffer\n", "allreduce", fmt_bytes(bytes, b1, 32),
               fmt_bytes(scratch_bytes, b2, 32), scratch_bytes / bytes);
    }
    return 0;
}

/* On stderr, how a calibration in rounds samples (nothing for one pass). */
static void announce_rounds(int rounds, const char *each, const char *list)
{
    if (rounds > 1)
        fprintf(stderr, "calibrate: %d rounds: every %s measured once per pass over the %s, a 1/%d share of its "
                        "samples each time, priced by the median of the passes' medians\n", rounds, each, list, rounds);
}

/* A rank's own resident memory, MPI started and BLAS warmed, before any buffer; the
 * largest rank's. It holds the MPI library and its shared-memory segments, which
 * data-parallel predictions of that many ranks count per rank: Open MPI 4.1, 2 ranks on
 * the Zen 4 VM, 16.7 MiB, against 12 MiB for a process without MPI and 19.5 MiB at the
 * start of a run (whose rank 0 also holds the database connection and the model). */
static double rank_runtime_rss(void)
{
    double bytes = machine_runtime_bytes();
    comm_allreduce_max_f64(&bytes, 1);
    return bytes;
}

/* --only comm under mpirun: every rank measures, rank 0 stores. */
static int calibrate_comm(Cli *cli, const CalOpts *co)
{
    if (comm_env_size() < 2)
        return cli_error(cli, EXIT_USAGE, "--only comm measures MPI collectives between processes: run it under "
                                          "mpirun -np P (P >= 2), e.g. mpirun -np 2 dlperf calibrate --only comm");
    blas_select(cli);
    char err[512];
    if (comm_start(err, sizeof err) != 0)
        return cli_error(cli, EXIT_FAIL, "%s", err);
    /* before the heap keeps freed blocks, so the warm-up GEMM's buffers leave the RSS
     * (measured after, it read 29 MiB) */
    const double runtime_rss = rank_runtime_rss();
    comm_reuse_collective_buffers();
    Db *db = NULL;
    CalibrationRow cal = {0};
    if (comm_rank() == 0) {
        MachineRow machine;
        if (!(db = cli_db_open(cli)))
            return EXIT_FAIL;
        if (cli_machine(cli, db, &machine) != 0) {
            db_close(db);
            return EXIT_FAIL;
        }
        cal.machine_id = machine.id;
        snprintf(cal.mode, sizeof cal.mode, "%s", co->mode == MB_QUICK ? "comm-quick" : "comm");
        cal.rounds = co->rounds;
        cal.runtime_rss_bytes = runtime_rss;
        cli_software(cli, &cal.sw);
        if (db_calibration_begin(db, &cal) != 0) {
            cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
            db_close(db);
            return EXIT_FAIL;
        }
        fprintf(stderr, "calibrate: communication, %d ranks, %s, database %s\n", comm_size(), cal.sw.mpi_library,
                cli->db_path);
    }
    interrupt_flag_on_signal("calibrate");
    /* --models: each model's gradient buffer, the message its data-parallel training sums */
    size_t grad_bytes[MAX_MODELS];
    for (int i = 0; i < co->nmodels; i++) {
        Plan p;
        if (plan_build(co->models[i], 1, &p, err, sizeof err) != 0) {
            if (db)
                db_close(db);
            return cli_error(cli, EXIT_USAGE, "%s", err);
        }
        grad_bytes[i] = p.arena_bytes[ARENA_GRAD];
        plan_free(&p);
    }
    Progress pr = {.t0 = mb_now_s(), .tty = progress_enabled()};
    if (comm_rank() == 0)
        announce_rounds(co->rounds, "collective", "list");
    int rc = mb_calibrate_comm(db, cal.id, co->mode, co->rounds, cli->threads, grad_bytes, co->nmodels, progress, &pr,
                               interrupt_flag(), err, sizeof err);
    double elapsed = mb_now_s() - pr.t0;
    if (comm_rank() != 0)
        return finish_calibration(cli, NULL, 0, rc, elapsed, err);
    if ((rc = finish_calibration(cli, db, cal.id, rc, elapsed, err)) != EXIT_OK)
        return rc;
    if (cli->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "calibration_id", (double)cal.id);
        cJSON_AddStringToObject(o, "mode", cal.mode);
        cJSON_AddNumberToObject(o, "ranks", comm_size());
        cJSON_AddStringToObject(o, "mpi_library", cal.sw.mpi_library);
        cJSON_AddNumberToObject(o, "elapsed_s", elapsed);
        db_comm_memory_foreach(db, cal.id, print_comm_memory, cJSON_AddArrayToObject(o, "allreduce_memory"));
        json_print(o);
    } else {
        printf("calibration %lld complete: communication between %d ranks in %.1f s (%s)\n", (long long)cal.id,
               comm_size(), elapsed, cal.sw.mpi_library);
        printf("  %-10s %12s %12s %15s   (medians; time per collective, ping-pong one way)\n", "op", "size", "time",
               "bytes/time");
        static const char *const kinds[] = {"pingpong", "bcast", "allreduce"};
        for (int k = 0; k < 3; k++)
            db_measurement_foreach(db, cal.id, print_comm_row, (void *)kinds[k]);
        printf("\n  %-10s %12s %12s   (each rank's resident memory grown by one in-place allreduce: the MPI "
               "library's scratch, the largest rank's)\n", "memory", "buffer", "scratch");
        db_comm_memory_foreach(db, cal.id, print_comm_memory, NULL);
    }
    db_close(db);
    return EXIT_OK;
}

int cmd_calibrate(int argc, char **argv, Cli *cli)
{
    static const struct option opts[] = {CLI_COMMON_OPTIONS,
                                         CLI_MODEL_FILE_OPTION,
                                         {"quick", no_argument, NULL, OPT_QUICK},
                                         {"full", no_argument, NULL, OPT_FULL},
                                         {"show", no_argument, NULL, OPT_SHOW},
                                         {"only", required_argument, NULL, OPT_ONLY},
                                         {"models", required_argument, NULL, OPT_MODELS},
                                         {"batch", required_argument, NULL, OPT_BATCH},
                                         {"rounds", required_argument, NULL, OPT_ROUNDS},
                                         {"budget", required_argument, NULL, OPT_BUDGET},
                                         {"ranks", required_argument, NULL, OPT_RANKS},
                                         {"device", required_argument, NULL, OPT_DEVICE},
                                         {"verbose", no_argument, NULL, OPT_VERBOSE},
                                         {"csv", no_argument, NULL, OPT_CSV},
                                         {"tp", required_argument, NULL, OPT_TP},
                                         {0}};
    CalOpts co = {.rounds = 1, .budget_min = -1};
    int rc = cli_parse(cli, argc, argv, opts, cal_option, &co, command_usage(cli->cmd));
    if (rc)
        return rc;
    if (optind < argc)
        return cli_error(cli, EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
    if (co.csv && cli->json)
        return cli_error(cli, EXIT_USAGE, "--csv and --json are two formats; choose one");
    if (co.csv && !co.show)
        return cli_error(cli, EXIT_USAGE, "--csv goes with --show (a calibration or, with --device, a device's evidence "
                                          "as CSV)");
    if (co.show && comm_env_size() > 1)
        return cli_error(cli, EXIT_USAGE, "--show prints; run it on one process, without mpirun");
    if (co.verbose && (!co.show || co.show_device))
        return cli_error(cli, EXIT_USAGE, "--verbose goes with --show (this machine's calibration): the placement "
                                          "detail");
    if (co.show_device && !co.show)
        return cli_error(cli, EXIT_USAGE, "--device goes with --show (the evidence of a device that is not this "
                                          "machine); 'dlperf import FILE... --device NAME' stores measurements of one");
    if (co.show && co.show_device) {
        if (co.any_measure_option || co.show_ranks)
            return cli_error(cli, EXIT_USAGE, "--show --device prints a device's evidence; it measures nothing");
        Db *db = cli_db_open(cli);
        if (!db)
            return EXIT_FAIL;
        rc = evidence_show(cli, db, co.show_device, co.csv);
        db_close(db);
        return rc;
    }
    if (co.show)
        return co.any_measure_option
                   ? cli_error(cli, EXIT_USAGE, "--show prints the latest calibration; it measures nothing, so "
                                                "--quick, --full, --only, --models, --batch and --rounds do not go with it")
                   : show_latest(cli, co.show_ranks > 0 ? co.show_ranks : 1, co.verbose, co.csv);
    if (co.show_ranks)
        return cli_error(cli, EXIT_USAGE, "--ranks picks the calibration --show prints; under mpirun a calibration "
                                          "is measured by the job's ranks");
    if (co.quick && co.full)
        return cli_error(cli, EXIT_USAGE, "--quick and --full are two different modes; choose one");
    co.mode = co.quick ? MB_QUICK : co.full ? MB_FULL : MB_DEFAULT;
    bool any = false;
    for (int i = 0; i < NFAMILIES; i++)
        any |= co.family[i];
    if (co.comm && co.batch)
        return cli_error(cli, EXIT_USAGE, "--batch does not go with --only comm: a model's gradient buffer, the "
                                          "allreduce --models adds, is the same at every batch");
    if (co.comm && any)
        return cli_error(cli, EXIT_USAGE, "--only comm measures communication alone (every rank at once; with "
                                          "--models, their gradients' allreduce); calibrate the other families in a "
                                          "separate run");
    if (co.tp > 1 && co.nmodels == 0 && !cli->model_file)
        return cli_error(cli, EXIT_USAGE, "--tp %d splits the models named by --models or --model-file; name them",
                         co.tp);
    if (co.tp > 1 && !cli->model_file && replace_by_shares(cli, &co) != 0)
        return EXIT_USAGE;
    if (co.comm)
        return calibrate_comm(cli, &co);
    any = false;
    for (int i = 0; i < NFAMILIES; i++)
        any |= co.family[i];
    for (int i = 0; i < NFAMILIES && !any; i++)
        co.family[i] = true;
    if (cli->model_file) { /* a model file's ops, beside --models' */
        char e2[1024];
        const ModelSpec *loaded = cli_model_file(cli, e2, sizeof e2);
        if (!loaded)
            return cli_error(cli, EXIT_USAGE, "%s", e2);
        if (co.nmodels == MAX_MODELS)
            return cli_error(cli, EXIT_USAGE, "--models and --model-file: at most %d models", MAX_MODELS);
        co.models[co.nmodels++] = loaded;
        if (co.tp > 1 && replace_by_shares(cli, &co) != 0)
            return EXIT_USAGE;
    }
    /* by default the main job's three models (quick) or the suite's models */
    /* model ops: the named models; by default the suite's, except in quick mode, which
     * measures the machine and the fit's basis only (the suite's model ops alone take
     * minutes; name models with --models to add theirs) */
    for (int i = 0, none = co.nmodels == 0 && !co.quick; none && i < zoo_count(); i++) {
        const ModelSpec *m = zoo_get(i);
        if (m->origin && strcmp(m->origin, "suite") == 0)
            co.models[co.nmodels++] = m;
    }

    blas_select(cli);
    char err[1024];
    int nmodel;
    OpDesc *mops = model_ops(&co, &nmodel, err, sizeof err);
    if (!mops && co.nmodels > 0)
        return cli_error(cli, EXIT_USAGE, "%s", err);
    enum { LIST_MAX = 2048 };
    static OpDesc lists[NFAMILIES][LIST_MAX];
    MbCaches caches;
    mb_cache_sizes(&caches);
    const MbMode mode = co.mode;
    const int counts[NFAMILIES] = {
        [FAM_PEAK] = mb_list_peak(mode, cli->threads, lists[FAM_PEAK], LIST_MAX),
        [FAM_MEMORY] = mb_list_memory(mode, cli->threads, &caches, lists[FAM_MEMORY], LIST_MAX),
        [FAM_MODEL_OP] = 0,
        [FAM_GEMM_SWEEP] = mb_list_gemm_sweep(mode, lists[FAM_GEMM_SWEEP], LIST_MAX),
        [FAM_GEMM_DEEPBENCH] = mb_list_gemm_deepbench(mode, lists[FAM_GEMM_DEEPBENCH], LIST_MAX),
        [FAM_CONV_DEEPBENCH] = mb_list_conv_deepbench(mode, lists[FAM_CONV_DEEPBENCH], LIST_MAX),
        [FAM_RNN_DEEPBENCH] = mb_list_rnn_deepbench(mode, lists[FAM_RNN_DEEPBENCH], LIST_MAX),
        [FAM_SPARSE] = mb_list_sparse(mode, lists[FAM_SPARSE], LIST_MAX),
        [FAM_CNN_SWEEP] = mb_list_cnn_sweep(mode, lists[FAM_CNN_SWEEP], LIST_MAX),
        [FAM_STREAM] = mb_list_stream(mode, lists[FAM_STREAM], LIST_MAX),
        [FAM_ELTWISE] = mb_list_eltwise(mode, lists[FAM_ELTWISE], LIST_MAX),
        [FAM_TRANSFORMER] = mb_list_transformer(mode, lists[FAM_TRANSFORMER], LIST_MAX),
    };
    MbFamily fams[NFAMILIES];
    int nfams = 0;
    for (int i = 0; i < NFAMILIES; i++) {
        if (!co.family[i])
            continue;
        /* a list longer than LIST_MAX is a programmer error: the lists are fixed tables */
        if (counts[i] > LIST_MAX) {
            free(mops);
            return cli_error(cli, EXIT_FAIL, "internal: family %s has %d shapes, more than %d", family_names[i],
                             counts[i], LIST_MAX);
        }
        /* the limits and the models' own ops are kept whatever the budget; the sweeps the
         * fitted model learns from may be thinned to keep it */
        const bool optional = i != FAM_PEAK && i != FAM_MEMORY && i != FAM_MODEL_OP && i != FAM_STREAM;
        fams[nfams++] = i == FAM_MODEL_OP ? (MbFamily){family_names[i], mops, nmodel, false}
                                          : (MbFamily){family_names[i], lists[i], counts[i], optional};
    }

    /* Under mpirun every rank measures the same kernels at the same time: the speeds one
     * rank of a job with that many ranks per node sees (shared memory bandwidth, caches,
     * and time-shared cores when ranks x threads exceed them). Rank 0 stores. */
    if (comm_start(err, sizeof err) != 0) {
        free(mops);
        return cli_error(cli, EXIT_FAIL, "%s", err);
    }
    const bool root = comm_rank() == 0;
    Db *db = NULL;
    MachineRow machine;
    CalibrationRow cal = {0};
    if (root) {
        if (!(db = cli_db_open(cli))) {
            free(mops);
            return EXIT_FAIL;
        }
        if (cli_machine(cli, db, &machine) != 0) {
            free(mops);
            db_close(db);
            return EXIT_FAIL;
        }
        cal.machine_id = machine.id;
        snprintf(cal.mode, sizeof cal.mode, "%s", mb_mode_name(co.mode));
        cal.rounds = co.rounds;
        cal.llc_bytes = (int64_t)mb_llc_bytes();
        cli_software(cli, &cal.sw);
        if (db_calibration_begin(db, &cal) != 0) {
            free(mops);
            cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
            db_close(db);
            return EXIT_FAIL;
        }
        fprintf(stderr, "calibrate: %s mode, %d threads, OpenBLAS %s (%s), %s, database %s\n", cal.mode,
                cli->threads, cal.sw.blas_core, cal.sw.blas_choice, cal.sw.threading, cli->db_path);
        announce_rounds(cal.rounds, "kernel", "lists");
        if (comm_size() > 1)
            fprintf(stderr, "calibrate: %d ranks measure every kernel at the same time (the speeds a rank of a "
                            "%d-rank job on this node sees); rank 0 stores\n", comm_size(), comm_size());
    }

    interrupt_flag_on_signal("calibrate");
    MbProtocol proto = mb_protocol(co.mode);
    proto.rounds = co.rounds;
    /* the default calibration is bounded; one that asks for more (--full, --rounds) is not,
     * unless --budget says so */
    const double budget_min = co.budget_min >= 0 ? co.budget_min
                              : co.mode == MB_DEFAULT && co.rounds == 1 ? CAL_DEFAULT_BUDGET_MIN : 0;
    proto.budget_s = 60 * budget_min;
    if (root && budget_min > 0)
        fprintf(stderr, "calibrate: at most %g min (--budget): where the host runs the kernels slower than the "
                        "protocol expects, the later ones sample for less time\n", budget_min);
    Progress pr = {.t0 = mb_now_s(), .tty = progress_enabled()};
    rc = mb_calibrate(db, cal.id, &proto, cli->threads, fams, nfams, root ? progress : NULL, &pr, interrupt_flag(), err,
                      sizeof err);
    double elapsed = mb_now_s() - pr.t0;
    free(mops);
    if (!root)
        return finish_calibration(cli, NULL, 0, rc, elapsed, err);
    if ((rc = finish_calibration(cli, db, cal.id, rc, elapsed, err)) != EXIT_OK)
        return rc;
    Summary s = {0};
    db_measurement_foreach(db, cal.id, summarize, &s);
    db_close(db);
    if (cli->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "calibration_id", (double)cal.id);
        cJSON_AddStringToObject(o, "mode", cal.mode);
        cJSON_AddNumberToObject(o, "threads", cli->threads);
        cJSON_AddNumberToObject(o, "ranks", comm_size());
        cJSON_AddNumberToObject(o, "rounds", cal.rounds);
        cJSON_AddStringToObject(o, "blas_core", cal.sw.blas_core);
        cJSON_AddStringToObject(o, "blas_choice", cal.sw.blas_choice);
        cJSON_AddStringToObject(o, "threading", cal.sw.threading);
        cJSON_AddNumberToObject(o, "measurements", s.n);
        cJSON_AddNumberToObject(o, "elapsed_s", elapsed);
        if (s.best_gemm_gflops > 0) /* null: not measured (--only) */
            cJSON_AddNumberToObject(o, "best_gemm_gflops", s.best_gemm_gflops);
        else
            cJSON_AddNullToObject(o, "best_gemm_gflops");
        if (s.triad_gbs > 0)
            cJSON_AddNumberToObject(o, "stream_triad_gbs", s.triad_gbs);
        else
            cJSON_AddNullToObject(o, "stream_triad_gbs");
        json_print(o);
    } else {
        char rounds[32] = "";
        if (cal.rounds > 1)
            snprintf(rounds, sizeof rounds, ", %d rounds", cal.rounds);
        printf("calibration %lld complete: %d kernels measured in %.1f s (%s mode%s, %d threads, OpenBLAS %s)%s\n",
               (long long)cal.id, s.n, elapsed, cal.mode, rounds, cli->threads, cal.sw.blas_core,
               comm_size() > 1 ? ", every kernel by all ranks at once" : "");
        if (s.best_gemm_gflops > 0) /* a partial calibration (--only) may have neither */
            printf("  best SGEMM        %8.1f GFLOP/s\n", s.best_gemm_gflops);
        if (s.triad_gbs > 0)
            printf("  STREAM triad      %8.1f GB/s\n", s.triad_gbs);
    }
    return EXIT_OK;
}
