/* cli/cmd_predict.c — `dlperf predict MODEL`: iteration time per op and per layer, which
 * path priced each op and its uncertainty band, and memory per process against a memory
 * capacity (does it fit; the largest batch that does); stored in the database. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "cli/cli.h"
#include "predictor/machine_pricer.h"
#include "models/train.h"

typedef struct {
    int batch;
    bool all_ops, holdout;
    double device_memory; /* bytes; 0: this machine's available memory */
    int ranks;            /* data-parallel on this machine (mpirun -np ranks) */
    WhatIfOpts w;         /* --system and its options */
    bool whatif_option;   /* one of --nodes, --precision, --allreduce, --overlap given */
    const char *batches;  /* --batches LIST: the step and its memory at each batch */
} PredictOpts;

enum { OPT_BATCH = 1, OPT_OPS, OPT_HOLDOUT, OPT_DEVICE_MEMORY, OPT_RANKS, OPT_SYSTEM, OPT_NODES, OPT_PRECISION,
       OPT_ALLREDUCE, OPT_OVERLAP, OPT_PIPELINE, OPT_MICRO_BATCHES, OPT_SUMMA, OPT_NO_HOST, OPT_DEVICE, OPT_MODE, OPT_WITHOUT_OWN,
       OPT_NO_PROFILES, OPT_CSV, OPT_BATCHES, OPT_TP, OPT_PP, OPT_SP, OPT_RECOMPUTE, OPT_MICRO_BATCH, OPT_INTERLEAVE,
       OPT_ZERO1, OPT_SEARCH };
enum { MAX_BATCHES = 64 };

static int predict_option(Cli *cli, int id, const char *arg, void *ctx)
{
    PredictOpts *o = ctx;
    switch (id) {
    case OPT_BATCH: return cli_parse_int(cli, "--batch", arg, 1, 1 << 20, &o->batch);
    case OPT_CSV: o->w.csv = true; return 0;
    case OPT_BATCHES: o->batches = arg; return 0;
    case OPT_OPS: o->all_ops = true; return 0;
    case OPT_HOLDOUT: o->holdout = true; return 0;
    case OPT_DEVICE_MEMORY: return cli_parse_bytes(cli, "--device-memory", arg, &o->device_memory);
    case OPT_RANKS: return cli_parse_int(cli, "--ranks", arg, 1, 1 << 20, &o->ranks);
    case OPT_SYSTEM: o->w.system = arg; return 0;
    case OPT_DEVICE: o->w.device = arg; return 0;
    case OPT_WITHOUT_OWN: o->whatif_option = true; o->w.without_own = true; return 0;
    case OPT_NO_PROFILES: o->whatif_option = true; o->w.no_profiles = true; return 0;
    case OPT_MODE:
        o->whatif_option = true;
        if (strcmp(arg, "train") == 0)
            o->w.mode = PLAN_TRAIN;
        else if (strcmp(arg, "fwd-bwd") == 0)
            o->w.mode = PLAN_FWD_BWD;
        else if (strcmp(arg, "forward") == 0)
            o->w.mode = PLAN_INFERENCE;
        else
            return cli_error(cli, EXIT_USAGE, "--mode '%s': expected train (forward, backward, update), fwd-bwd "
                                              "(gradients only, as convnet-benchmarks times) or forward", arg);
        return 0;
    case OPT_NODES: o->whatif_option = true; return cli_parse_int(cli, "--nodes", arg, 1, 10000000, &o->w.nodes);
    case OPT_PRECISION: o->whatif_option = true; o->w.precision = arg; return 0;
    case OPT_ALLREDUCE: o->whatif_option = true; o->w.allreduce = arg; return 0;
    case OPT_OVERLAP: o->whatif_option = true; o->w.overlap = true; return 0;
    case OPT_NO_HOST: o->whatif_option = true; o->w.no_host = true; return 0;
    case OPT_PIPELINE: o->whatif_option = true; return cli_parse_int(cli, "--pipeline", arg, 1, 64, &o->w.pipeline);
    case OPT_MICRO_BATCHES:
        o->whatif_option = true;
        return cli_parse_int(cli, "--micro-batches", arg, 1, 1 << 20, &o->w.micro_batches);
    case OPT_SUMMA: o->whatif_option = true; return cli_parse_int(cli, "--summa", arg, 1, 1 << 30, &o->w.summa_n);
    case OPT_TP: o->w.parallel = true; return cli_parse_int(cli, "--tp", arg, 1, 1024, &o->w.tp);
    case OPT_PP: o->w.parallel = true; return cli_parse_int(cli, "--pp", arg, 1, 100000, &o->w.pp);
    case OPT_SP: o->w.parallel = true; o->w.sp = true; return 0;
    case OPT_RECOMPUTE: o->w.parallel = true; o->w.recompute = arg; return 0;
    case OPT_MICRO_BATCH:
        o->w.parallel = true;
        return cli_parse_int(cli, "--micro-batch", arg, 1, 1 << 20, &o->w.micro_batch);
    case OPT_INTERLEAVE: o->w.parallel = true; return cli_parse_int(cli, "--interleave", arg, 1, 64, &o->w.interleave);
    case OPT_ZERO1: o->w.parallel = true; o->w.zero1 = true; return 0;
    case OPT_SEARCH: o->w.parallel = true; o->w.search = true; return 0;
    }
    return EXIT_USAGE;
}

/* Does the plan fit in the capacity, and the largest batch that does. */
typedef struct {
    double capacity;
    const char *what; /* "--device-memory" or "this machine's available memory" */
    double allocated; /* the plan's arenas as a run allocates them: whole pages, its input batches */
    double runtime;   /* the process's own: libraries and BLAS buffers (measured) */
    int runtime_ranks; /* the rank count whose communication calibration measured it, with
                          MPI; 0: measured in this process, without MPI */
    double comm;      /* data-parallel: the MPI library's allreduce scratch (probed) */
    int comm_probed_at; /* the rank count whose probes gave it; 0: none probed */
    int ranks;
    bool fits;
    long largest_batch; /* 0: not even batch 1 */
} MemoryFit;

static void print_memory(const PredictionRow *p, const MemoryFit *f)
{
    char b[32], c[32];
    printf("\nmemory per process:\n");
    const char *names[] = {"parameters", "gradients", "optimizer state", "activations", "workspace", "input batch"};
    const double v[] = {p->mem_params, p->mem_grads, p->mem_opt, p->mem_act, p->mem_ws, p->mem_input};
    for (int i = 0; i < 5; i++)
        printf("  %-16s %12s\n", names[i], fmt_bytes(v[i], b, 32));
    printf("  %-16s %12s  (a run holds %d: the one in use and the next)\n", names[5], fmt_bytes(v[5], b, 32),
           TRAINER_DATA_BATCHES);
    printf("  %-16s %12s\n", "plan total", fmt_bytes(p->mem_total, b, 32));
    printf("  %-16s %12s  (each arena in whole pages, as a run allocates it)\n", "allocated",
           fmt_bytes(f->allocated, b, 32));
    if (f->runtime_ranks > 0)
        printf("  %-16s %12s  (libraries, MPI and BLAS buffers: a rank's, measured by the %d-rank communication "
               "calibration)\n", "runtime", fmt_bytes(f->runtime, b, 32), f->runtime_ranks);
    else
        printf("  %-16s %12s  (libraries and BLAS buffers, measured in this process%s)\n", "runtime",
               fmt_bytes(f->runtime, b, 32),
               f->ranks > 1 ? "; WITHOUT MPI: the communication calibration did not record a rank's" : "");
    if (f->ranks > 1) {
        char how[96];
        if (f->comm_probed_at == f->ranks)
            snprintf(how, sizeof how, "probed at %d ranks", f->ranks);
        else if (f->comm_probed_at > 0)
            snprintf(how, sizeof how, "probed at %d ranks; %d not probed", f->comm_probed_at, f->ranks);
        else
            snprintf(how, sizeof how, "NOT INCLUDED: the communication calibration did not probe it");
        printf("  %-16s %12s  (the MPI library's scratch for the gradients' allreduce, %s)\n", "allreduce",
               fmt_bytes(f->comm, b, 32), how);
    }
    printf("  %-16s %12s  %s %s (%s)\n", "process total", fmt_bytes(f->allocated + f->runtime + f->comm, b, 32),
           f->fits ? "fits in" : "DOES NOT FIT in", fmt_bytes(f->capacity, c, 32), f->what);
    if (f->largest_batch > 0)
        printf("  largest batch that fits: %ld\n", f->largest_batch);
    else
        printf("  not even batch 1 fits\n");
}

/* llc_bytes: the last-level cache the ops' warmth was counted in (a rank's share of the
 * node's under --ranks; 0: no cache model) */
static cJSON *prediction_json(const PredictionRow *p, const OpTimeRow *ops, int nops, const Plan *plan,
                              const MemoryFit *f, double llc_bytes, double apart_s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "prediction_id", (double)p->id);
    cJSON_AddNumberToObject(o, "calibration_id", (double)p->calibration_id);
    cJSON_AddStringToObject(o, "model", p->model);
    cJSON_AddNumberToObject(o, "batch", p->batch);
    cJSON_AddNumberToObject(o, "threads", p->threads);
    cJSON_AddNumberToObject(o, "iteration_s", p->iter_s);
    cJSON_AddNumberToObject(o, "iteration_lo_s", p->iter_lo_s);
    cJSON_AddNumberToObject(o, "iteration_hi_s", p->iter_hi_s);
    cJSON_AddNumberToObject(o, "forward_s", p->fwd_s);
    cJSON_AddNumberToObject(o, "backward_s", p->bwd_s);
    cJSON_AddNumberToObject(o, "update_s", p->update_s);
    cJSON_AddNumberToObject(o, "samples_per_s", p->batch * (p->ranks > 1 ? p->ranks : 1) / p->iter_s);
    if (apart_s > 0) /* the threads' cores apart (predict.h, cm_set_apart) */
        cJSON_AddNumberToObject(o, "iteration_apart_s", apart_s);
    else
        cJSON_AddNullToObject(o, "iteration_apart_s"); /* one thread, ranks, or nothing timed apart */
    cJSON *src = cJSON_AddObjectToObject(o, "ops_priced");
    cJSON_AddNumberToObject(src, "exact", p->n_exact);
    cJSON_AddNumberToObject(src, "scaled", p->n_scaled);
    cJSON_AddNumberToObject(src, "fitted", p->n_fitted); /* roofline-priced ops included */
    cJSON *mem = cJSON_AddObjectToObject(o, "memory_bytes");
    cJSON_AddNumberToObject(mem, "parameters", p->mem_params);
    cJSON_AddNumberToObject(mem, "gradients", p->mem_grads);
    cJSON_AddNumberToObject(mem, "optimizer", p->mem_opt);
    cJSON_AddNumberToObject(mem, "activations", p->mem_act);
    cJSON_AddNumberToObject(mem, "workspace", p->mem_ws);
    cJSON_AddNumberToObject(mem, "input", p->mem_input);
    cJSON_AddNumberToObject(mem, "input_batches", TRAINER_DATA_BATCHES); /* in "allocated" */
    cJSON_AddNumberToObject(mem, "total", p->mem_total);
    cJSON_AddNumberToObject(mem, "allocated", f->allocated);
    cJSON_AddNumberToObject(mem, "runtime", f->runtime);
    cJSON_AddNumberToObject(mem, "runtime_measured_ranks", f->runtime_ranks); /* 0: this process, no MPI */
    if (f->ranks > 1) {
        cJSON_AddNumberToObject(mem, "allreduce", f->comm);
        cJSON_AddNumberToObject(mem, "allreduce_probed_ranks", f->comm_probed_at);
    }
    cJSON_AddNumberToObject(mem, "process_total", f->allocated + f->runtime + f->comm);
    cJSON_AddNumberToObject(mem, "capacity", f->capacity);
    cJSON_AddStringToObject(mem, "capacity_from", f->what);
    cJSON_AddBoolToObject(mem, "fits", f->fits);
    cJSON_AddNumberToObject(mem, "largest_batch", (double)f->largest_batch);
    cJSON_AddBoolToObject(o, "holdout", p->holdout);
    const int tp = plan->model->tp_ranks > 1 ? plan->model->tp_ranks : 1, dp = p->ranks > 1 ? p->ranks : 1;
    cJSON_AddNumberToObject(o, "ranks", dp * tp); /* the job's */
    cJSON_AddNumberToObject(o, "tensor_parallel", tp);
    cJSON_AddNumberToObject(o, "data_parallel", dp);
    cJSON_AddNumberToObject(o, "cache_bytes", llc_bytes);
    if (p->ranks > 1) {
        cJSON_AddNumberToObject(o, "allreduce_s", p->allreduce_s);
        cJSON_AddNumberToObject(o, "allreduce_lo_s", p->allreduce_lo_s);
        cJSON_AddNumberToObject(o, "allreduce_hi_s", p->allreduce_hi_s);
        cJSON_AddStringToObject(o, "allreduce_source", p->allreduce_source);
    }
    cJSON *layers = cJSON_AddArrayToObject(o, "layers");
    for (int l = -1; l < plan->nlayers; l++) {
        double t = 0;
        for (int i = 0; i < nops; i++)
            if (ops[i].layer == l)
                t += ops[i].time_s;
        cJSON *lo = cJSON_CreateObject();
        cJSON_AddStringToObject(lo, "name", l >= 0 ? plan->layers[l].name : "(loss+update)");
        cJSON_AddNumberToObject(lo, "time_s", t);
        cJSON_AddItemToArray(layers, lo);
    }
    cJSON *arr = cJSON_AddArrayToObject(o, "ops");
    for (int i = 0; i < nops; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "index", ops[i].op_index);
        cJSON_AddStringToObject(r, "layer", ops[i].layer_name);
        cJSON_AddStringToObject(r, "key", ops[i].key);
        cJSON_AddNumberToObject(r, "time_s", ops[i].time_s);
        cJSON_AddNumberToObject(r, "lo_s", ops[i].lo_s);
        cJSON_AddNumberToObject(r, "hi_s", ops[i].hi_s);
        cJSON_AddNumberToObject(r, "flops", ops[i].flops);
        cJSON_AddStringToObject(r, "source", ops[i].source);
        cJSON_AddNumberToObject(r, "cached", ops[i].cached);
        cJSON_AddItemToArray(arr, r);
    }
    return o;
}

/* --batches: how the step's time and memory grow with the batch, one row per batch (not
 * stored: a scan, not a prediction to validate). */
static int predict_batches(const Cli *cli, const ModelSpec *m, const CostModel *cm, const CalibrationRow *cal,
                           const int *batches, int nb, double capacity, bool csv)
{
    double peak = 0, dram = 0;
    cm_limits(cm, &peak, &dram);
    const double runtime = machine_runtime_bytes();
    cJSON *arr = cli->json ? cJSON_CreateArray() : NULL;
    if (csv)
        printf("model,batch,threads,calibration,iteration_s,per_sample_s,samples_per_s,flops_per_s,fraction_of_peak,"
               "bottleneck,model_state_bytes,activations_bytes,process_bytes,capacity_bytes,fits\n");
    else if (!cli->json)
        printf("%s on this machine, %d threads, calibration %lld: the step and its memory by batch\n\n"
               "%7s %12s %12s %12s %9s %6s  %-18s %11s %11s %11s  %s\n", m->name, cli->threads, (long long)cal->id,
               "batch", "iteration", "per sample", "samples/s", "GFLOP/s", "peak", "bottleneck", "weights+", "activ.",
               "process", "fits");
    for (int i = 0; i < nb; i++) {
        Plan p;
        char err[1024];
        if (plan_build(m, batches[i], &p, err, sizeof err) != 0) {
            cJSON_Delete(arr);
            return cli_error(cli, EXIT_USAGE, "%s", err);
        }
        PredictionRow pred;
        OpTimeRow *ops = NULL;
        if (machine_predict(cm, cal, cli->threads, &p, &pred, &ops, err, sizeof err) != 0) {
            plan_free(&p);
            cJSON_Delete(arr);
            return cli_error(cli, EXIT_FAIL, "%s", err);
        }
        StepBreakdown b;
        pred_breakdown(&p, ops, pred.iter_s, 0, peak, dram, &b);
        const double state = pred.mem_params + pred.mem_grads + pred.mem_opt;
        const double total = trainer_bytes_needed(&p, TRAINER_DATA_BATCHES) + runtime;
        const bool fits = total <= capacity;
        const double rate = b.flops / pred.iter_s;
        if (arr) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "batch", batches[i]);
            cJSON_AddNumberToObject(o, "iteration_s", pred.iter_s);
            cJSON_AddNumberToObject(o, "per_sample_s", pred.iter_s / batches[i]);
            cJSON_AddNumberToObject(o, "flops_per_s", rate);
            cJSON_AddNumberToObject(o, "fraction_of_peak", peak > 0 ? rate / peak : 0);
            cJSON_AddStringToObject(o, "bottleneck", b.bottleneck);
            cJSON_AddNumberToObject(o, "model_state_bytes", state);
            cJSON_AddNumberToObject(o, "activations_bytes", pred.mem_act);
            cJSON_AddNumberToObject(o, "process_bytes", total);
            cJSON_AddBoolToObject(o, "fits", fits);
            cJSON_AddItemToArray(arr, o);
        } else if (csv) {
            printf("%s,%d,%d,%lld,%.9g,%.9g,%.9g,%.9g,%.4g,%s,%.0f,%.0f,%.0f,%.0f,%d\n", m->name, batches[i],
                   cli->threads, (long long)cal->id, pred.iter_s, pred.iter_s / batches[i], batches[i] / pred.iter_s,
                   rate, peak > 0 ? rate / peak : 0, b.bottleneck, state, pred.mem_act, total, capacity, fits);
        } else {
            char t[3][32], s[3][32];
            printf("%7d %12s %12s %12.1f %9.1f %5.1f%%  %-18s %11s %11s %11s  %s\n", batches[i],
                   fmt_time(pred.iter_s, t[0], 32), fmt_time(pred.iter_s / batches[i], t[1], 32),
                   batches[i] / pred.iter_s, rate / 1e9, peak > 0 ? 100 * rate / peak : 0, b.bottleneck,
                   fmt_bytes(state, s[0], 32), fmt_bytes(pred.mem_act, s[1], 32), fmt_bytes(total, s[2], 32),
                   fits ? "yes" : "NO");
        }
        free(ops);
        plan_free(&p);
    }
    if (arr)
        json_print(arr);
    else if (!csv) {
        char c[32];
        printf("\n# weights+: parameters, gradients and optimizer state; activ.: activations; process: the run's\n"
               "# arenas, two input batches and the runtime, against %s; peak: of the measured FMA peak\n",
               fmt_bytes(capacity, c, 32));
    }
    return EXIT_OK;
}

int cmd_predict(int argc, char **argv, Cli *cli)
{
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS, CLI_MODEL_FILE_OPTION, {"batch", required_argument, NULL, OPT_BATCH},
        {"ops", no_argument, NULL, OPT_OPS}, {"holdout", no_argument, NULL, OPT_HOLDOUT},
        {"device-memory", required_argument, NULL, OPT_DEVICE_MEMORY}, {"ranks", required_argument, NULL, OPT_RANKS},
        {"system", required_argument, NULL, OPT_SYSTEM}, {"nodes", required_argument, NULL, OPT_NODES},
        {"precision", required_argument, NULL, OPT_PRECISION}, {"allreduce", required_argument, NULL, OPT_ALLREDUCE},
        {"overlap", no_argument, NULL, OPT_OVERLAP}, {"pipeline", required_argument, NULL, OPT_PIPELINE},
        {"micro-batches", required_argument, NULL, OPT_MICRO_BATCHES}, {"summa", required_argument, NULL, OPT_SUMMA},
        {"no-host", no_argument, NULL, OPT_NO_HOST}, {"device", required_argument, NULL, OPT_DEVICE},
        {"mode", required_argument, NULL, OPT_MODE}, {"without-own", no_argument, NULL, OPT_WITHOUT_OWN},
        {"csv", no_argument, NULL, OPT_CSV}, {"batches", required_argument, NULL, OPT_BATCHES},
        {"no-profiles", no_argument, NULL, OPT_NO_PROFILES}, {"tp", required_argument, NULL, OPT_TP},
        {"pp", required_argument, NULL, OPT_PP}, {"sp", no_argument, NULL, OPT_SP},
        {"recompute", required_argument, NULL, OPT_RECOMPUTE}, {"micro-batch", required_argument, NULL, OPT_MICRO_BATCH},
        {"interleave", required_argument, NULL, OPT_INTERLEAVE}, {"zero1", no_argument, NULL, OPT_ZERO1},
        {"search", no_argument, NULL, OPT_SEARCH}, {0}};
    PredictOpts po = {0};
    int rc = cli_parse(cli, argc, argv, opts, predict_option, &po, command_usage(cli->cmd));
    if (rc)
        return rc;
    if (po.w.system && po.w.device)
        return cli_error(cli, EXIT_USAGE, "--system and --device: a system of devices, or one device; choose one");
    if (po.w.device && (po.w.nodes > 1 || po.w.allreduce || po.w.overlap || po.w.pipeline || po.w.summa_n))
        return cli_error(cli, EXIT_USAGE, "--device prices one device on its own; --nodes, --allreduce, --overlap, "
                                          "--pipeline and --summa need a --system");
    if (po.whatif_option && !po.w.system && !po.w.device)
        return cli_error(cli, EXIT_USAGE, "--nodes, --precision, --allreduce, --overlap, --no-host, --pipeline, --summa, "
                                          "--mode, --without-own and --no-profiles describe a spec-sheet system: give --system NAME or --device NAME "
                                          "(see 'dlperf systems')");
    if (po.w.micro_batches && !po.w.pipeline)
        return cli_error(cli, EXIT_USAGE, "--micro-batches goes with --pipeline S");
    if (po.w.pipeline && (po.w.nodes > 1 || po.w.overlap || po.w.allreduce))
        return cli_error(cli, EXIT_USAGE, "--pipeline S puts the model on S devices; --nodes, --overlap and "
                                          "--allreduce describe data parallelism");
    /* --ranks P --tp T without a system: this machine's tensor-parallel job (run --tp) */
    const bool only_tp = po.w.tp && !po.w.pp && !po.w.sp && !po.w.recompute && !po.w.micro_batch && !po.w.interleave &&
                         !po.w.zero1 && !po.w.search;
    int here_tp = 1;
    if (po.w.parallel && !po.w.system && !po.w.device && po.ranks && only_tp) {
        if (po.ranks % po.w.tp != 0)
            return cli_error(cli, EXIT_USAGE, "--tp %d: must divide --ranks %d (the job's ranks, as mpirun -np gives "
                             "them)", po.w.tp, po.ranks);
        here_tp = po.w.tp, po.w.parallel = false;
    }
    if (po.w.parallel) {
        if (!po.w.system)
            return cli_error(cli, EXIT_USAGE, "--tp, --pp, --sp, --recompute, --micro-batch, --interleave, --zero1 and "
                                              "--search place a transformer on a spec-sheet system: give --system NAME "
                                              "(this machine: --ranks P --tp T)");
        if (po.w.pipeline || po.w.overlap || po.w.allreduce || po.w.summa_n || po.w.mode)
            return cli_error(cli, EXIT_USAGE, "--tp/--pp/--search is Megatron-style parallelism; --pipeline, "
                                              "--overlap, --allreduce, --summa and --mode do not go with it");
        if (po.w.search && (po.w.tp || po.w.pp || po.w.sp || po.w.recompute || po.w.micro_batch || po.w.interleave ||
                            po.w.zero1))
            return cli_error(cli, EXIT_USAGE, "--search chooses tp, pp, sequence parallelism, recomputation, the "
                                              "micro-batch, interleaving and the optimizer itself; give only "
                                              "--nodes and --batch with it");
        if (!po.batch)
            return cli_error(cli, EXIT_USAGE, "--tp/--pp/--search: give the global batch (--batch N, sequences an "
                                              "iteration)");
    }
    if (po.w.csv && cli->json)
        return cli_error(cli, EXIT_USAGE, "--csv and --json: one output format at a time");
    if (po.w.csv && (po.w.summa_n || po.w.pipeline))
        return cli_error(cli, EXIT_USAGE, "--csv goes with a model's prediction, not --summa or --pipeline");
    if (po.w.summa_n) { /* a distributed GEMM, no model */
        if (optind != argc || cli->model_file || po.w.pipeline || po.batch)
            return cli_error(cli, EXIT_USAGE, "--summa N estimates an N x N x N GEMM on the system; give no MODEL, "
                                              "--batch or --pipeline with it");
        return predict_summa(cli, &po.w);
    }
    if ((po.w.system || po.w.device) && (po.ranks || po.holdout || po.device_memory > 0 || po.all_ops))
        return cli_error(cli, EXIT_USAGE, "--system predicts a spec-sheet system; --ranks, --holdout, "
                                          "--device-memory and --ops are for this machine");
    int batches[MAX_BATCHES], nb = 0;
    if (po.batches) {
        if (po.batch || po.ranks || po.holdout || po.all_ops || po.w.system || po.w.device)
            return cli_error(cli, EXIT_USAGE, "--batches LIST scans this machine's step over batch sizes; --batch, "
                                              "--ranks, --holdout, --ops, --system and --device do not go with it");
        if ((nb = cli_parse_counts(cli, "--batches", "batch", po.batches, batches, MAX_BATCHES, 1 << 20)) < 0)
            return EXIT_USAGE;
    }
    const ModelSpec *m;
    Plan plan;
    /* a parallel prediction's batch is the global batch: the model is planned at one sequence
     * here, its shares at the micro-batch */
    if ((rc = cli_model_plan(cli, argc, argv, po.w.parallel ? 1 : nb ? batches[0] : po.batch, &m, &plan)))
        return rc;
    if (po.w.parallel) {
        plan_free(&plan);
        return predict_on_system(cli, m, po.batch, &po.w);
    }
    if (here_tp > 1) { /* one rank's share */
        char terr[512];
        const int b = plan.batch;
        plan_free(&plan);
        if (!(m = cli_tp_share(cli, m, here_tp)))
            return EXIT_USAGE;
        if (plan_build(m, b, &plan, terr, sizeof terr) != 0)
            return cli_error(cli, EXIT_USAGE, "%s", terr);
    }
    const int batch = plan.batch;
    if (po.w.system || po.w.device) { /* batch: per device */
        plan_free(&plan);
        return predict_on_system(cli, m, batch, &po.w);
    }
    if (po.ranks > 1 && po.holdout)
        return plan_free(&plan), cli_error(cli, EXIT_USAGE, "--ranks and --holdout: choose one");
    Db *db = cli_db_open(cli);
    if (!db) {
        plan_free(&plan);
        return EXIT_FAIL;
    }
    MachineRow machine;
    CalibrationRow cal;
    CostModel *cm = NULL;
    PredictionRow pred;
    OpTimeRow *ops = NULL;
    rc = EXIT_FAIL;
    double over = 1;
    char err[1024];
    if (cli_machine(cli, db, &machine))
        goto done;
    if (po.ranks > 1 ? machine_calibration_dp(db, &machine, cli->threads, po.ranks, &cal, &cm, &over, err, sizeof err)
                     : machine_calibration(db, &machine, cli->threads, &cal, &cm, err, sizeof err)) {
        cli_error(cli, EXIT_FAIL, "%s", err);
        goto done;
    }
    if (nb > 0) {
        double capacity = po.device_memory > 0 ? po.device_memory : mem_available_bytes();
        rc = predict_batches(cli, m, cm, &cal, batches, nb, capacity, po.w.csv);
        goto done;
    }
    if (po.holdout) { /* price as if none of this model's shapes had been measured */
        OpDesc *descs = malloc((size_t)plan.nops * sizeof *descs);
        if (!descs) {
            cli_error(cli, EXIT_FAIL, "out of memory");
            goto done;
        }
        for (int i = 0; i < plan.nops; i++)
            descs[i] = plan.ops[i].desc;
        cm_holdout(cm, descs, plan.nops);
        cm_fit(cm);
        free(descs);
    }
    CommModel *comm = NULL;
    int comm_probed_at = 0, runtime_ranks = 0;
    double rank_runtime = 0;
    if (po.ranks > 1) { /* --batch is each rank's share (tensor parallel: each group's); ranks on
                         * this node time-share its cores */
        if (!(comm = comm_model_load(db, machine.id, err, sizeof err))) {
            cli_error(cli, EXIT_FAIL, "%s", err);
            goto done;
        }
        cm_set_collectives(cm, comm); /* a share's sums over its group */
        rc = machine_predict_dp(cm, &cal, cli->threads, comm, &plan, po.ranks / here_tp, over, &pred, &ops,
                                &comm_probed_at, err, sizeof err);
        rank_runtime = comm_model_rank_runtime(comm, po.ranks, &runtime_ranks);
        cm_set_collectives(cm, NULL);
        comm_model_free(comm);
        if (rc) {
            cli_error(cli, EXIT_FAIL, "%s", err);
            goto done;
        }
        rc = EXIT_FAIL;
    } else if (machine_predict(cm, &cal, cli->threads, &plan, &pred, &ops, err, sizeof err)) {
        cli_error(cli, EXIT_FAIL, "%s", err);
        goto done;
    }
    pred.holdout = po.holdout;
    MemoryFit fit = {.capacity = po.device_memory, .what = "--device-memory"};
    char share[64];
    if (fit.capacity <= 0) { /* ranks on this machine share it */
        fit.capacity = mem_available_bytes() / (po.ranks > 1 ? po.ranks : 1);
        snprintf(share, sizeof share, "%s%s",
                 getenv("DLPERF_MEM_AVAILABLE") ? "DLPERF_MEM_AVAILABLE" : "available on this machine now",
                 po.ranks > 1 ? ", a rank's share" : "");
        fit.what = share;
    }
    fit.allocated = trainer_bytes_needed(&plan, TRAINER_DATA_BATCHES);
    fit.runtime = runtime_ranks > 0 ? rank_runtime : machine_runtime_bytes();
    fit.runtime_ranks = runtime_ranks;
    fit.ranks = po.ranks, fit.comm = pred.mem_comm, fit.comm_probed_at = comm_probed_at;
    fit.fits = fit.allocated + fit.runtime + fit.comm <= fit.capacity;
    { /* the allreduce's scratch follows the gradients, which no batch changes */
        fit.largest_batch = pred_largest_batch(m, fit.capacity - fit.runtime - fit.comm, err, sizeof err);
        if (fit.largest_batch < 0) {
            cli_error(cli, EXIT_FAIL, "%s", err);
            goto done;
        }
    }
    if (db_prediction_insert(db, &pred, ops, plan.nops) != 0) {
        cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
        goto done;
    }
    /* the same step with the threads' cores apart, where the calibration timed kernels so:
     * a VM's host may move its vCPUs between cores that share a cache and cores that do not */
    const double apart_s = po.ranks <= 1 ? pred_iteration_apart_s(&plan, cm, cli->threads) : 0;
    rc = EXIT_OK;
    double peak = 0, dram = 0;
    cm_limits(cm, &peak, &dram);
    StepBreakdown brk;
    pred_breakdown(&plan, ops, pred.iter_s, pred.allreduce_s, peak, dram, &brk);
    if (cli->json) {
        cJSON *doc = prediction_json(&pred, ops, plan.nops, &plan, &fit, cm_llc_bytes(cm), apart_s);
        cJSON_AddItemToObject(doc, "breakdown", breakdown_json(&brk));
        json_print(doc);
        goto done;
    }
    if (po.w.csv) { /* every op of the step: what priced it, its band */
        printf("prediction,model,batch,threads,op,layer,key,time_s,lo_s,hi_s,flops,source,cached\n");
        for (int i = 0; i < plan.nops; i++) { /* names from a model file may hold commas or quotes */
            printf("%lld,", (long long)pred.id);
            csv_field(stdout, m->name);
            printf(",%d,%d,%d,", batch, cli->threads, ops[i].op_index);
            csv_field(stdout, ops[i].layer_name);
            putchar(',');
            csv_field(stdout, ops[i].key);
            printf(",%.9g,%.9g,%.9g,%.9g,%s,%.4g\n", ops[i].time_s, ops[i].lo_s, ops[i].hi_s, ops[i].flops,
                   ops[i].source, ops[i].cached);
        }
        goto done;
    }
    char b1[32], b2[32], b3[32];
    printf("%s at batch %d, %d threads — %sprediction %lld from calibration %lld (%s, %s, OpenBLAS %s)\n", m->name,
           batch, cli->threads, po.holdout ? "holdout " : "", (long long)pred.id, (long long)cal.id, cal.mode,
           cal.started_at, cal.sw.blas_core);
    printf("\niteration   %s  (band %s .. %s)   %.1f samples/s\n", fmt_time(pred.iter_s, b1, 32),
           fmt_time(pred.iter_lo_s, b2, 32), fmt_time(pred.iter_hi_s, b3, 32),
           batch * (po.ranks > 1 ? po.ranks / here_tp : 1) / pred.iter_s);
    if (apart_s > 0)
        printf("  with the threads' cores apart (the host moved the vCPUs onto cores that share no cache, as it did\n"
               "  in some calibration passes): %s (x%.2f), from the kernels' times apart and the data the ops pass\n"
               "  between the cores (half of what the other split left, read and written across; a guess at\n"
               "  the split: on a 2-vCPU VM small models' steps apart ran up to 37%% slower than this)\n",
               fmt_time(apart_s, b1, 32), apart_s / pred.iter_s);
    if (po.ranks > 1) {
        char how[64] = "";
        if (cal.sw.ranks > 1)
            snprintf(how, sizeof how, "; compute measured by %d ranks at once%s", cal.sw.ranks,
                     over > 1 ? ", one per core" : "");
        if (here_tp > 1)
            printf("  tensor parallel %d x data parallel %d: %d ranks on this machine, %d per group (global batch "
                   "%d), the group's sums priced from the %d-rank collectives%s\n", here_tp, po.ranks / here_tp,
                   po.ranks, batch, batch * (po.ranks / here_tp), here_tp, how);
        else
            printf("  data-parallel: %d ranks on this machine, %d per rank (global batch %d)%s\n", po.ranks, batch,
                   batch * po.ranks, how);
        if (over > 1)
            printf("  compute slowed %.2fx: %d ranks x %d threads share %ld cores\n", over, po.ranks, cli->threads,
                   sysconf(_SC_NPROCESSORS_ONLN));
        char band[96] = "";
        if (pred.allreduce_hi_s > pred.allreduce_lo_s) {
            char lo[32], hi[32];
            snprintf(band, sizeof band, ", band %s .. %s", fmt_time(pred.allreduce_lo_s, lo, 32),
                     fmt_time(pred.allreduce_hi_s, hi, 32));
        }
        printf("  allreduce %s of gradients: %s (%s%s)\n", fmt_bytes((double)plan.arena_bytes[ARENA_GRAD], b1, 32),
               fmt_time(pred.allreduce_s, b2, 32),
               strcmp(pred.allreduce_source, "measured") == 0 ? "interpolated in the communication calibration"
                                                               : "the fitted algorithm model: this rank count was not calibrated",
               band);
    }
    printf("  forward   %s\n  backward  %s\n  update    %s\n", fmt_time(pred.fwd_s, b1, 32),
           fmt_time(pred.bwd_s, b2, 32), fmt_time(pred.update_s, b3, 32));
    int nroof = 0;
    for (int i = 0; i < plan.nops; i++)
        nroof += strcmp(ops[i].source, "roofline") == 0;
    printf("  ops priced: %d exact, %d scaled from another batch, %d fitted, %d by the roofline alone%s\n",
           pred.n_exact, pred.n_scaled, pred.n_fitted - nroof, nroof,
           po.holdout ? " (holdout: the model's own shapes left out)" : "");

    print_breakdown(&brk, "predicted");
    printf("\n%-14s %12s %7s\n", "layer", "time", "share");
    for (int l = -1; l < plan.nlayers; l++) {
        double t = 0;
        for (int i = 0; i < plan.nops; i++)
            if (ops[i].layer == l)
                t += ops[i].time_s;
        printf("%-14s %12s %6.1f%%\n", l >= 0 ? plan.layers[l].name : "(loss+update)", fmt_time(t, b1, 32),
               100 * t / pred.iter_s);
    }
    OpGroup *g;
    int ng = op_groups(ops, NULL, plan.nops, &g);
    int show = po.all_ops ? ng : (ng < 15 ? ng : 15);
    printf("\n%-12s %5s %12s %15s %9s %7s  %-8s %s\n", "layer", "count", "time", "band", "GFLOP/s", "cached",
           "source", "op");
    for (int i = 0; i < show; i++) {
        char band[32];
        snprintf(band, sizeof band, "%+.0f%% .. %+.0f%%", 100 * (g[i].lo_s / g[i].time_s - 1),
                 100 * (g[i].hi_s / g[i].time_s - 1));
        printf("%-12s %5d %12s %15s %9.1f %6.0f%%  %-8s %s\n", g[i].layer_name, g[i].count,
               fmt_time(g[i].time_s, b1, 32), band, g[i].flops / g[i].time_s / 1e9, 100 * g[i].cached, g[i].source,
               g[i].key);
    }
    if (cm_llc_bytes(cm) > 0)
        printf("# cached: how warm the op's data is when it starts, 0 (from DRAM: the calibration's cold time) to "
               "100%% (as warm as when the calibration ran it again on its own data: its warm time); each byte "
               "weighted by how fast the calibration read data written that much traffic before (its handoff "
               "curve), within %s of last-level cache%s\n", fmt_bytes(cm_llc_bytes(cm), b1, 32),
               po.ranks > 1 ? " (a rank's share of what the calibration flushed)" : " (what the calibration flushed)");
    else
        printf("# cached: none; the calibration predates the cache model (every op priced from cold caches)\n");
    if (show < ng)
        printf("... %d more op groups (--ops lists all)\n", ng - show);
    free(g);
    print_memory(&pred, &fit);
done:
    free(ops);
    cm_free(cm);
    db_close(db);
    plan_free(&plan);
    return rc;
}
