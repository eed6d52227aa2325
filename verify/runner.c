/* verify/runner.c — timed training runs, alone or data-parallel. */
#include "verify/runner.h"

#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "microbench/mb.h"
#include "ops/comm.h"
#include "predictor/predict.h"

int verify_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return code;
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

DataParallel run_data_parallel(size_t bucket_bytes)
{
    return (DataParallel){comm_dp_rank(), comm_dp_size(), comm_size() > 1 ? comm_env_local_size() : 1, bucket_bytes,
                          comm_tp_size()};
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

int run_train_for(const RunEnv *env, const ModelSpec *m, int batch, PlanMode mode, int warmup, int steps,
                  double min_timed_s, bool trace, const MachineRow *machine, const char *scaling,
                  size_t bucket_bytes, RunResult *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    ops_set_threads(env->threads);
    const DataParallel dp = run_data_parallel(bucket_bytes);
    const bool talk = env->progress && dp.rank == 0;
    Trainer t;
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
    if (trainer_init_dp(&t, m, batch, mode, nbatches, 2017, &dp, err, errlen) != 0) {
        if (talk)
            fputc('\n', stderr);
        return 1;
    }
    /* room for the most steps a minimum time can ask for; the trace grows as it goes */
    const int room = warmup + (min_timed_s > 0 && steps < RUN_MAX_STEPS ? RUN_MAX_STEPS : steps);
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
    const bool probe_cores = env->threads >= 2 && comm_size() == 1;
    double rtt_before_ns = 0, share_before = 0; /* the probes just before the step */
    if (probe_cores) {
        out->step_rtt_ns = calloc((size_t)room, sizeof *out->step_rtt_ns);
        out->step_core_share = calloc((size_t)room, sizeof *out->step_core_share);
    }
    int rc = 0;
    if (!out->step_s || !out->loss || (trace && !op_t) || !local_s || !split ||
        (probe_cores && (!out->step_rtt_ns || !out->step_core_share))) {
        rc = verify_fail(err, errlen, VERIFY_FAIL, "out of memory for %s's run", m->name);
        goto done;
    }
    RunRow *r = &out->row;
    db_now_iso(r->started_at);
    if (probe_cores) {
        rtt_before_ns = mb_core_rtt_ns(env->threads);
        share_before = mb_core_share(env->threads);
    }
    comm_barrier(); /* the ranks start the first step together */
    double timed_s = 0; /* the job's timed steps so far: the same on every rank */
    for (int s = 0;; s++) {
        /* a data-parallel job's ranks stop together or not at all: only one process checks */
        if (env->stop && *env->stop && comm_size() == 1) {
            out->interrupted = true;
            rc = verify_fail(err, errlen, VERIFY_FAIL, "%s interrupted before step %d", m->name, s + 1);
            goto done;
        }
        if (s == total) { /* the asked steps are done: more while short of the minimum time */
            if (timed_s >= min_timed_s || total == room)
                break;
            steps++, total++;
        }
        if (trace && s - warmup >= trace_cap) {
            trace_cap *= 2;
            double *grown = realloc(op_t, (size_t)trace_cap * (size_t)t.plan.nops * sizeof *op_t);
            if (!grown) {
                rc = verify_fail(err, errlen, VERIFY_FAIL, "out of memory for the trace of %d steps", trace_cap);
                goto done;
            }
            op_t = grown;
        }
        double *trace_row = trace && s >= warmup ? op_t + (size_t)(s - warmup) * t.plan.nops : NULL;
        double t0 = mb_now_s();
        out->loss[s] = trainer_step(&t, s, trace_row);
        local_s[s] = mb_now_s() - t0;
        if (probe_cores) { /* the probes after this step are the next one's before */
            const double rtt_after_ns = mb_core_rtt_ns(env->threads), share_after = mb_core_share(env->threads);
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
            /* the run stops here, named where the values went wrong, and is kept as failed */
            char where[256];
            if (!plan_find_nonfinite(&t.plan, t.base, where, sizeof where))
                snprintf(where, sizeof where, "every tensor is finite: the loss alone overflowed");
            verify_fail(err, errlen, VERIFY_FAIL, "%s: the loss became %s at step %d%s; training diverged: %s", m->name,
                 isnan(out->loss[s]) ? "NaN" : "infinite", s + 1, s < warmup ? " (warm-up)" : "", where);
            out->failed = true;
            total = s + 1;
            steps = total > warmup ? total - warmup : 0;
            break;
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
    snprintf(r->status, sizeof r->status, "%s", out->failed ? "failed" : "complete");
    r->sw = env->sw;
    MbStats st = {0};
    if (steps > 0) {
        double *timed = malloc((size_t)steps * sizeof *timed);
        if (!timed) {
            rc = verify_fail(err, errlen, VERIFY_FAIL, "out of memory for %s's run", m->name);
            goto done;
        }
        memcpy(timed, out->step_s + warmup, (size_t)steps * sizeof *timed);
        mb_stats(timed, steps, &st);
        free(timed);
    }
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
    if (out->failed) { /* every rank diverged at this step (the loss is their mean) */
        rc = VERIFY_FAIL;
        goto done;
    }
    if (comm_size() > 1 && gather_rank_times(local_s + warmup, split + warmup, steps, out) != 0) {
        rc = verify_fail(err, errlen, VERIFY_FAIL, "out of memory for %s's run", m->name);
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
            rc = verify_fail(err, errlen, VERIFY_FAIL, "out of memory for %s's run", m->name);
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
    if (rc && !out->failed)
        run_result_free(out);
    return rc;
}

int run_train(const RunEnv *env, const ModelSpec *m, int batch, PlanMode mode, int warmup, int steps, bool trace,
              const MachineRow *machine, const char *scaling, size_t bucket_bytes, RunResult *out, char *err,
              size_t errlen)
{
    return run_train_for(env, m, batch, mode, warmup, steps, 0.0, trace, machine, scaling, bucket_bytes, out, err,
                         errlen);
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
