/* cli/session.c — calibration lookup, prediction and timed runs shared by the commands. */
#include "cli/session.h"

#include <malloc.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "microbench/mb.h"
#include "models/train.h"
#include "ops/comm.h"

/* A calibration measured under another BLAS threading build prices ops at the other
 * build's speeds (the pthread build ran large element-wise ops in steps at one core's
 * speed): say so. Calibrations from before the record (threading '') are not judged. */
static void warn_threading(const CalibrationRow *cal)
{
    const char *now = ops_blas_threading();
    const size_t n = strlen(now);
    if (comm_rank() == 0 && cal->sw.threading[0] &&
        (strncmp(cal->sw.threading, now, n) != 0 || cal->sw.threading[n] != ' '))
        fprintf(stderr,
                "dlperf: warning: calibration %lld was measured with %s, this process runs %s BLAS: its prices "
                "may not hold; recalibrate\n",
                (long long)cal->id, cal->sw.threading, now);
}

int session_calibration(const Cli *cli, Db *db, const MachineRow *m, CalibrationRow *cal, CostModel **cm)
{
    int rc = db_calibration_latest(db, m->id, cli->threads, cal);
    if (rc == DB_NOT_FOUND)
        return cli_error(cli, EXIT_FAIL,
                         "no complete calibration of this machine at %d threads in %s; run 'dlperf calibrate%s' first",
                         cli->threads, cli->db_path, cli->threads_given ? " --threads N" : "");
    if (rc != 0)
        return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    warn_threading(cal);
    char err[512];
    *cm = cm_load(db, cal->id, err, sizeof err);
    if (!*cm)
        return cli_error(cli, EXIT_FAIL, "%s", err);
    return 0;
}

static int online_cores(void)
{
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int session_calibration_dp(const Cli *cli, Db *db, const MachineRow *m, int local_ranks, CalibrationRow *cal,
                           CostModel **cm, double *over)
{
    /* An oversubscribed node time-shares its cores, and a calibration measured by as many
     * ranks mis-times it: a kernel shorter than a time slice mostly runs between
     * preemptions (alexnet-owt's 1.8 ms GEMMs ran 7 ms in steps at np=4 on 2 cores), and
     * the ranks that finish their samples first leave the others alone on the cores (a
     * convolution's samples ranged from 36 to 78 ms). So the per-rank speed is taken
     * with one rank per core (the node full, not oversubscribed) and shared out. */
    const int cores = online_cores(), full = cores / cli->threads;
    const bool oversubscribed = (long)local_ranks * cli->threads > cores;
    int rc = DB_NOT_FOUND;
    if (oversubscribed && full > 1) {
        rc = db_calibration_latest_ranks(db, m->id, cli->threads, full, cal);
        if (rc == 0)
            *over = (double)local_ranks / full;
    }
    if (rc == DB_NOT_FOUND && local_ranks > 1) {
        rc = db_calibration_latest_ranks(db, m->id, cli->threads, local_ranks, cal);
        if (rc == 0)
            *over = 1; /* measured as the job runs */
    }
    if (rc < 0)
        return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    if (rc == DB_NOT_FOUND) { /* one process's speeds, the cores shared out */
        *over = session_oversubscription(local_ranks, cli->threads);
        if (session_calibration(cli, db, m, cal, cm))
            return EXIT_FAIL;
    } else {
        warn_threading(cal);
        char err[512];
        *cm = cm_load(db, cal->id, err, sizeof err);
        if (!*cm)
            return cli_error(cli, EXIT_FAIL, "%s", err);
    }
    /* The node's ranks run the same ops at about the same time, each on its own data, in
     * one last-level cache: what a rank wrote is still cached after a reuse distance of its
     * share of it, not of the whole (cm_warmth). The kernels' own cold and warm times were
     * measured as the job runs them, so only the share changes. basic-lstm at 16 per rank,
     * stop 29: its compute priced 341 ms at np=2 and 683 ms at np=4 with the whole 32 MiB,
     * 352 and 705 ms with the share, measured 362 and 770 ms. */
    if (local_ranks > 1 && cm_llc_bytes(*cm) > 0)
        cm_set_llc(*cm, cm_llc_bytes(*cm) / local_ranks);
    return 0;
}

int session_predict(const Cli *cli, const CostModel *cm, const CalibrationRow *cal, const Plan *p,
                    PredictionRow *pred, OpTimeRow **ops)
{
    memset(pred, 0, sizeof *pred);
    *ops = calloc((size_t)p->nops, sizeof **ops);
    if (!*ops)
        return cli_error(cli, EXIT_FAIL, "out of memory");
    char err[512];
    if (pred_iteration(p, cm, pred, *ops, err, sizeof err) != 0) {
        free(*ops);
        *ops = NULL;
        return cli_error(cli, EXIT_FAIL, "%s", err);
    }
    pred->calibration_id = cal->id;
    pred->threads = cli->threads;
    return 0;
}

double session_oversubscription(int local_ranks, int threads)
{
    double f = (double)local_ranks * threads / (double)online_cores();
    return f > 1 ? f : 1;
}

int session_predict_dp(const Cli *cli, const CostModel *cm, const CalibrationRow *cal, const CommModel *comm,
                       const Plan *p, int ranks, double over, PredictionRow *pred, OpTimeRow **ops, int *probed_at)
{
    if (session_predict(cli, cm, cal, p, pred, ops))
        return EXIT_FAIL;
    pred->ranks = ranks;
    if (ranks <= 1)
        return 0;
    const double f = over;
    pred->iter_s *= f, pred->iter_lo_s *= f, pred->iter_hi_s *= f;
    pred->fwd_s *= f, pred->bwd_s *= f, pred->update_s *= f;
    for (int i = 0; i < p->nops; i++) {
        (*ops)[i].time_s *= f;
        (*ops)[i].lo_s *= f;
        (*ops)[i].hi_s *= f;
    }
    CommSource src;
    pred->allreduce_s = comm_model_allreduce_s(comm, (double)p->arena_bytes[ARENA_GRAD], ranks, &src);
    snprintf(pred->allreduce_source, sizeof pred->allreduce_source, "%s",
             src == COMM_MEASURED ? "measured" : "fitted");
    comm_model_allreduce_band(comm, (double)p->arena_bytes[ARENA_GRAD], ranks, &pred->allreduce_lo_s,
                              &pred->allreduce_hi_s);
    pred->iter_s += pred->allreduce_s;
    pred->iter_lo_s += pred->allreduce_lo_s;
    pred->iter_hi_s += pred->allreduce_hi_s;
    int probed;
    pred->mem_comm = comm_model_allreduce_scratch(comm, (double)p->arena_bytes[ARENA_GRAD], ranks, &probed);
    if (probed_at)
        *probed_at = probed;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

DataParallel session_dp(size_t bucket_bytes)
{
    return (DataParallel){comm_rank(), comm_size(), comm_size() > 1 ? comm_env_local_size() : 1, bucket_bytes};
}

/* Data-parallel: rank 0 gets every rank's step, compute, wait and allreduce time of every
 * timed step, and derives each rank's medians (rank_times) and, step by step, the slowest
 * rank's compute and allreduce (their medians over the steps: RunResult.slowest). The two
 * differ where the ranks' times vary from step to step (an oversubscribed node's time
 * slices): the maximum of the ranks' medians is below the median of the steps' maxima, and
 * the communication calibration prices each sample by its slowest rank, so only the second
 * compares with it. */
enum { STEP_SERIES = 4 }; /* per rank, each `steps` long: step, compute, wait, allreduce */

static int gather_rank_times(const double *step, const StepTimes *st, int steps, RunResult *out)
{
    const int n = comm_size();
    const bool root = comm_rank() == 0;
    const size_t per = STEP_SERIES * (size_t)steps;
    double *mine = malloc(per * sizeof *mine), *v = malloc((size_t)steps * sizeof *v);
    double *all = root ? malloc((size_t)n * per * sizeof *all) : NULL;
    RankTimeRow *rows = root ? calloc((size_t)n, sizeof *rows) : NULL;
    typedef struct { /* where each rank ran: its host and the CPUs it was allowed */
        char hostname[64], cpus[64];
    } Where;
    Where *where = root ? calloc((size_t)n, sizeof *where) : NULL;
    double fail = !mine || !v || (root && (!all || !rows || !where));
    comm_allreduce_max_f64(&fail, 1); /* every rank takes part in the gathers, or none */
    if (fail > 0) {
        free(mine), free(v), free(all), free(rows), free(where);
        return -1;
    }
    for (int s = 0; s < steps; s++) {
        mine[s] = step[s];
        mine[steps + s] = st[s].compute_s;
        mine[2 * steps + s] = st[s].wait_s;
        mine[3 * steps + s] = st[s].comm_s;
    }
    comm_gather_f64(mine, (int)per, all);
    free(mine);
    Where here;
    memset(&here, 0, sizeof here);
    if (gethostname(here.hostname, sizeof here.hostname - 1) != 0)
        snprintf(here.hostname, sizeof here.hostname, "unknown");
    comm_affinity_list(here.cpus, sizeof here.cpus);
    comm_gather_bytes(&here, (int)sizeof here, where);
    if (root) {
        double med[STEP_SERIES];
        for (int r = 0; r < n; r++) {
            for (int f = 0; f < STEP_SERIES; f++) {
                memcpy(v, all + (size_t)r * per + (size_t)f * steps, (size_t)steps * sizeof *v);
                med[f] = median_of(v, steps);
            }
            rows[r] = (RankTimeRow){.rank = r, .step_s = med[0], .compute_s = med[1], .wait_s = med[2],
                                    .allreduce_s = med[3]};
            snprintf(rows[r].hostname, sizeof rows[r].hostname, "%s", where[r].hostname);
            snprintf(rows[r].cpus, sizeof rows[r].cpus, "%s", where[r].cpus);
        }
        for (int f = 1; f < STEP_SERIES; f++) { /* each step's slowest rank, median over the steps */
            for (int s = 0; s < steps; s++) {
                v[s] = 0;
                for (int r = 0; r < n; r++)
                    v[s] = fmax(v[s], all[(size_t)r * per + (size_t)f * steps + s]);
            }
            med[f] = median_of(v, steps);
        }
        out->slowest = (StepTimes){.compute_s = med[1], .wait_s = med[2], .comm_s = med[3]};
        out->rank_times = rows;
    }
    free(v), free(all), free(where);
    return 0;
}

int session_run(const Cli *cli, const ModelSpec *m, int batch, PlanMode mode, int warmup, int steps, bool trace,
                const MachineRow *machine, const char *scaling, size_t bucket_bytes, RunResult *out)
{
    return session_run_for(cli, m, batch, mode, warmup, steps, 0.0, trace, machine, scaling, bucket_bytes, out);
}

int session_run_for(const Cli *cli, const ModelSpec *m, int batch, PlanMode mode, int warmup, int steps,
                    double min_timed_s, bool trace, const MachineRow *machine, const char *scaling,
                    size_t bucket_bytes, RunResult *out)
{
    memset(out, 0, sizeof *out);
    ops_set_threads(cli->threads);
    const DataParallel dp = session_dp(bucket_bytes);
    const bool talk = progress_enabled() && dp.rank == 0;
    Trainer t;
    char err[1024];
    int total = warmup + steps;
    int nbatches = trainer_data_batches(total);
    /* the runtime's share of the peak: libraries and whatever earlier work in this process
     * left resident; the peak is this run's own. Heap that earlier work freed goes back to
     * the system first: left resident, it counted in the baseline and then served part of
     * the run's allocations without the RSS growing (validate --zoo over-predicted the
     * ~100 MiB models by 9-13% so) */
    malloc_trim(0);
    peak_rss_reset();
    const double baseline_rss = current_rss_bytes();
    if (talk)
        fprintf(stderr, "run: %s batch %d: allocating and initialising...", m->name, batch * dp.nranks);
    if (trainer_init_dp(&t, m, batch, mode, nbatches, 2017, &dp, err, sizeof err) != 0) {
        if (talk)
            fputc('\n', stderr);
        return cli_error(cli, EXIT_FAIL, "%s", err);
    }
    /* room for the most steps a minimum time can ask for; the trace grows as it goes */
    const int room = warmup + (min_timed_s > 0 && steps < SESSION_MAX_STEPS ? SESSION_MAX_STEPS : steps);
    int trace_cap = steps; /* steps op_t holds */
    out->nops = t.plan.nops;
    out->step_s = calloc((size_t)room, sizeof *out->step_s);
    out->loss = calloc((size_t)room, sizeof *out->loss);
    double *op_t = trace ? calloc((size_t)trace_cap * (size_t)t.plan.nops, sizeof *op_t) : NULL;
    double *local_s = calloc((size_t)room, sizeof *local_s);
    StepTimes *split = calloc((size_t)room, sizeof *split);
    /* Where the threads' cores are, probed after every step and once before the first,
     * outside the timed region (the round trip 10 us near, 60 us apart; the core share
     * 140 us): the host of the EPYC VMs moves the vCPUs within a run, and a small model's
     * steps run 1.5-2x slower apart or on one core (microbench/placement.c). One process
     * only: a data-parallel job's ranks are probed around the run instead. */
    const bool probe_cores = cli->threads >= 2 && dp.nranks == 1;
    double rtt_before_ns = 0, share_before = 0; /* the probes just before the step */
    if (probe_cores) {
        out->step_rtt_ns = calloc((size_t)room, sizeof *out->step_rtt_ns);
        out->step_core_share = calloc((size_t)room, sizeof *out->step_core_share);
    }
    int rc = 0;
    if (!out->step_s || !out->loss || (trace && !op_t) || !local_s || !split ||
        (probe_cores && (!out->step_rtt_ns || !out->step_core_share))) {
        rc = cli_error(cli, EXIT_FAIL, "out of memory");
        goto done;
    }
    RunRow *r = &out->row;
    db_now_iso(r->started_at);
    if (probe_cores) {
        rtt_before_ns = mb_core_rtt_ns(cli->threads);
        share_before = mb_core_share(cli->threads);
    }
    comm_barrier(); /* the ranks start the first step together */
    double timed_s = 0; /* the job's timed steps so far: the same on every rank */
    for (int s = 0;; s++) {
        if (s == total) { /* the asked steps are done: more while short of the minimum time */
            if (timed_s >= min_timed_s || total == room)
                break;
            steps++, total++;
        }
        if (trace && s - warmup >= trace_cap) {
            trace_cap *= 2;
            double *grown = realloc(op_t, (size_t)trace_cap * (size_t)t.plan.nops * sizeof *op_t);
            if (!grown) {
                rc = cli_error(cli, EXIT_FAIL, "out of memory for the trace of %d steps", trace_cap);
                goto done;
            }
            op_t = grown;
        }
        double *trace_row = trace && s >= warmup ? op_t + (size_t)(s - warmup) * t.plan.nops : NULL;
        double t0 = mb_now_s();
        out->loss[s] = trainer_step(&t, s, trace_row);
        local_s[s] = mb_now_s() - t0;
        if (probe_cores) { /* the probes after this step are the next one's before */
            const double rtt_after_ns = mb_core_rtt_ns(cli->threads), share_after = mb_core_share(cli->threads);
            out->step_rtt_ns[s] = fmax(rtt_before_ns, rtt_after_ns);
            out->step_core_share[s] = fmax(share_before, share_after);
            rtt_before_ns = rtt_after_ns, share_before = share_after;
        }
        split[s] = t.last;
        out->step_s[s] = local_s[s];
        comm_allreduce_max_f64(&out->step_s[s], 1); /* the job's step: its slowest rank's */
        if (s >= warmup)
            timed_s += out->step_s[s];
        if (talk)
            fprintf(stderr, "\r\033[Krun: %s batch %d: step %d/%d%s %.3f s, loss %.6g", m->name, batch * dp.nranks,
                    s + 1, total, s < warmup ? " (warm-up)" : "", out->step_s[s], out->loss[s]);
        if (!isfinite(out->loss[s])) { /* the same on every rank: the loss is the ranks' mean */
            if (talk)
                fputc('\n', stderr);
            rc = cli_error(cli, EXIT_FAIL, "%s: loss became %g at step %d; training diverged", m->name, out->loss[s],
                           s + 1);
            goto done;
        }
    }
    if (talk)
        fputc('\n', stderr);
    out->nsteps = total;

    snprintf(r->model, sizeof r->model, "%s", m->name);
    r->machine_id = machine->id;
    r->batch = batch * dp.nranks;
    r->batch_per_rank = batch;
    snprintf(r->scaling, sizeof r->scaling, "%s", dp.nranks > 1 ? scaling : "none");
    r->bucket_bytes = dp.nranks > 1 ? (double)bucket_bytes : 0;
    r->allreduce_bytes = dp.nranks > 1 && mode != PLAN_INFERENCE ? (double)t.plan.arena_bytes[ARENA_GRAD] : 0;
    r->steps = steps;
    r->warmup_steps = warmup;
    snprintf(r->status, sizeof r->status, "complete");
    cli_software(cli, &r->sw);
    double *timed = malloc((size_t)steps * sizeof *timed);
    memcpy(timed, out->step_s + warmup, (size_t)steps * sizeof *timed);
    MbStats st;
    mb_stats(timed, steps, &st);
    free(timed);
    r->median_s = st.median;
    r->min_s = st.min;
    r->max_s = st.max;
    r->mean_s = st.mean;
    r->stddev_s = st.stddev;
    r->loss_first = out->loss[0];
    r->loss_last = out->loss[total - 1];
    r->planned_bytes = trainer_bytes_needed(&t.plan, nbatches);
    r->peak_rss_bytes = peak_rss_bytes();
    r->baseline_rss_bytes = baseline_rss;
    r->traced = trace;
    snprintf(r->mode, sizeof r->mode, "%s", plan_mode_name(mode));
    if (dp.nranks > 1 && gather_rank_times(local_s + warmup, split + warmup, steps, out) != 0) {
        rc = cli_error(cli, EXIT_FAIL, "out of memory");
        goto done;
    }
    r->rank_times = out->rank_times;
    r->step_rtt_ns = out->step_rtt_ns;
    r->step_core_share = out->step_core_share;
    if (trace) {
        out->ops = calloc((size_t)t.plan.nops, sizeof *out->ops);
        double *col = malloc((size_t)steps * sizeof *col);
        if (!out->ops || !col) {
            free(col);
            rc = cli_error(cli, EXIT_FAIL, "out of memory");
            goto done;
        }
        for (int i = 0; i < t.plan.nops; i++) {
            for (int s = 0; s < steps; s++)
                col[s] = op_t[(size_t)s * t.plan.nops + i];
            pred_op_row(&t.plan, i, median_of(col, steps), &out->ops[i]);
        }
        free(col);
    }

done:
    free(op_t), free(local_s), free(split);
    trainer_free(&t);
    if (rc)
        run_result_free(out);
    return rc;
}

void run_result_free(RunResult *r)
{
    free(r->step_s);
    free(r->loss);
    free(r->ops);
    free(r->rank_times);
    free(r->step_rtt_ns);
    free(r->step_core_share);
    memset(r, 0, sizeof *r);
}

static int group_cmp(const void *a, const void *b)
{
    const OpGroup *x = a, *y = b;
    double dx = x->measured_s >= 0 ? fabs(x->time_s - x->measured_s) : x->time_s;
    double dy = y->measured_s >= 0 ? fabs(y->time_s - y->measured_s) : y->time_s;
    return (dx < dy) - (dx > dy);
}

int op_groups(const OpTimeRow *pred, const OpTimeRow *meas, int nops, OpGroup **out)
{
    OpGroup *g = calloc((size_t)nops, sizeof *g);
    int n = 0;
    for (int i = 0; i < nops; i++) {
        const OpTimeRow *o = pred ? &pred[i] : &meas[i];
        int j = 0;
        while (j < n && !(strcmp(g[j].key, o->key) == 0 && strcmp(g[j].layer_name, o->layer_name) == 0))
            j++;
        if (j == n) {
            snprintf(g[n].layer_name, sizeof g[n].layer_name, "%s", o->layer_name);
            snprintf(g[n].key, sizeof g[n].key, "%s", o->key);
            snprintf(g[n].source, sizeof g[n].source, "%s", o->source);
            g[n].measured_s = pred && meas ? 0 : -1;
            n++;
        }
        g[j].count++;
        g[j].time_s += o->time_s;
        g[j].lo_s += o->lo_s;
        g[j].hi_s += o->hi_s;
        g[j].flops += o->flops;
        g[j].cached += (o->cached - g[j].cached) / g[j].count; /* running mean */
        if (pred && meas)
            g[j].measured_s += meas[i].time_s;
    }
    qsort(g, (size_t)n, sizeof *g, group_cmp);
    *out = g;
    return n;
}

double session_runtime_bytes(void)
{
    static double runtime = -1;
    if (runtime >= 0)
        return runtime;
    enum { N = 1024 }; /* larger than OpenBLAS's packing blocks in every dimension */
    const size_t bytes = sizeof(float) * N * N;
    float *a = ops_buffer_alloc(bytes), *b = ops_buffer_alloc(bytes), *c = ops_buffer_alloc(bytes);
    if (a && b && c) {
        memset(a, 0, bytes);
        memset(b, 0, bytes);
        const OpDesc g = op_gemm(PHASE_FWD, N, N, N, false, false, 0.0f);
        void *bufs[] = {c, a, b};
        op_run(&g, bufs, NULL);
    }
    /* above the mmap threshold (one process): their pages leave the RSS */
    ops_buffer_free(a, bytes), ops_buffer_free(b, bytes), ops_buffer_free(c, bytes);
    runtime = current_rss_bytes();
    return runtime;
}

int session_drift_ops(const Cli *cli, const CostModel *cm, const OpDesc *refs, int nrefs, double slowdown,
                      Drift *out)
{
    enum { MAX_REFS = 8 };
    if (nrefs > MAX_REFS)
        nrefs = MAX_REFS;
    /* the calibrated times (rank 0 holds the calibration; under mpirun every rank times the
     * same references at once, as the calibration's ranks measured together) */
    double calibrated[MAX_REFS] = {0};
    for (int i = 0; cm && i < nrefs; i++)
        calibrated[i] = cm_measured_s(cm, &refs[i]);
    if (comm_active() && comm_size() > 1)
        comm_bcast(calibrated, sizeof calibrated, 0);
    double logsum[2] = {0, 0};
    int n[2] = {0, 0};
    MbProtocol p = mb_protocol(MB_QUICK);
    double samples[64];
    for (int i = 0; i < nrefs; i++) {
        if (calibrated[i] <= 0)
            continue;
        MeasurementRow m;
        char err[256];
        if (mb_time_op(&refs[i], &p, cli->threads, &m, samples, err, sizeof err) != 0)
            return cli_error(cli, EXIT_FAIL, "drift reference: %s", err);
        const int cls = drift_compute_kind(op_kind_name(refs[i].kind)) ? 0 : 1;
        logsum[cls] += log(m.median_s / (calibrated[i] * slowdown));
        n[cls]++;
    }
    mb_release();
    /* the run after this checks the node's available memory: no rank may still hold its
     * references' buffers (rank 0 also its spot-check copies) when another checks. Seen at
     * np=4 on 24 GiB: P1B1's update (2.7 GiB of parameters and gradients over the ranks)
     * left too little for its run. */
    if (comm_active() && comm_size() > 1) {
        malloc_trim(0); /* under mpirun freed heap stays mapped (ops/comm.c) */
        comm_barrier();
    }
    *out = (Drift){.compute = n[0] ? exp(logsum[0] / n[0]) : 1, .memory = n[1] ? exp(logsum[1] / n[1]) : 1,
                   .ncompute = n[0], .nmemory = n[1]};
    return 0;
}

/* The cross-core read the drift times: the calibration's curve point of the largest
 * working set per thread up to a quarter of the last-level cache over the threads (64 KiB
 * times a power of 4: a point of the default and of the quick list alike), so that it
 * stays in the cache and measures the cores' distance, not DRAM. */
static OpDesc cross_core_reference(int threads)
{
    const size_t share = mb_llc_bytes() / (4 * (size_t)threads);
    size_t ws = (size_t)64 << 10;
    while (ws * 4 <= share)
        ws *= 4;
    return op_membw(MEMBW_CROSS, threads, ws, 1);
}

double session_cross_core_drift(const Cli *cli, const CostModel *cm)
{
    if (cli->threads < 2 || !cm || (comm_active() && comm_size() > 1))
        return 0;
    const OpDesc d = cross_core_reference(cli->threads);
    const double calibrated = cm_measured_s(cm, &d);
    if (calibrated <= 0)
        return 0; /* a calibration without the memory family's cross-core curve */
    MbProtocol p = mb_protocol(MB_QUICK);
    double samples[64];
    MeasurementRow m;
    char err[256];
    const int rc = mb_time_op(&d, &p, cli->threads, &m, samples, err, sizeof err);
    mb_release();
    return rc == 0 ? m.median_s / calibrated : 0;
}

double session_core_share(const Cli *cli)
{
    if (cli->threads < 2 || (comm_active() && comm_size() > 1))
        return 0;
    return mb_core_share(cli->threads);
}

int session_drift(const Cli *cli, const CostModel *cm, Drift *out)
{
    /* shapes every calibration mode measures: gemm-sweep's 1024 square, cnn-sweep's 56x56x64
     * 3x3 at batch 32, eltwise's 2^22 element sweep points, cnn-sweep's batch norm */
    OpDesc conv = op_conv2d(PHASE_FWD, 32, 64, 56, 56, 64, 3, 3, 1, PAD_SAME, 1);
    const OpDesc refs[] = {
        op_gemm(PHASE_FWD, 1024, 1024, 1024, false, false, 0.0f), conv,
        op_act(PHASE_FWD, ACT_RELU, (size_t)1 << 22), op_copy(PHASE_FWD, (size_t)1 << 22),
        op_batchnorm(PHASE_FWD, 32, 64, 56 * 56, 1e-3f, 0.99f, true)};
    const int rc = session_drift_ops(cli, cm, refs, (int)(sizeof refs / sizeof refs[0]), 1.0, out);
    if (rc == 0) {
        out->cross = session_cross_core_drift(cli, cm);
        out->share = session_core_share(cli);
    }
    return rc;
}

bool drift_compute_kind(const char *kind)
{
    return strcmp(kind, "gemm") == 0 || strcmp(kind, "bmm") == 0 || strcmp(kind, "conv2d") == 0 ||
           strcmp(kind, "spmm") == 0;
}

double drift_adjusted_s(const Drift *d, const OpTimeRow *ops, int nops)
{
    double t = 0;
    for (int i = 0; i < nops; i++)
        t += ops[i].time_s * (drift_compute_kind(ops[i].kind) ? d->compute : d->memory);
    return t;
}
