/* predictor/machine_pricer.c — this machine's calibration chosen for a job, and plans
 * priced from it. */
#include "predictor/machine_pricer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops/comm.h"
#include "ops/kernels.h"

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return 1;
}

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

static int online_cores(void)
{
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int machine_calibration(Db *db, const MachineRow *m, int threads, CalibrationRow *cal, CostModel **cm, char *err,
                        size_t errlen)
{
    int rc = db_calibration_latest(db, m->id, threads, cal);
    if (rc == DB_NOT_FOUND)
    {
        char opt[32] = "";
        if (threads != online_cores())
            snprintf(opt, sizeof opt, " --threads %d", threads);
        return fail(err, errlen, "no complete calibration of this machine at %d threads in %s; run 'dlperf calibrate%s' "
                    "first", threads, db_path(db), opt);
    }
    if (rc != 0)
        return fail(err, errlen, "%s", db_errmsg(db));
    warn_threading(cal);
    *cm = cm_load(db, cal->id, err, errlen);
    return *cm ? 0 : 1;
}

int machine_calibration_dp(Db *db, const MachineRow *m, int threads, int local_ranks, CalibrationRow *cal,
                           CostModel **cm, double *over, char *err, size_t errlen)
{
    /* An oversubscribed node time-shares its cores, and a calibration measured by as many
     * ranks mis-times it: a kernel shorter than a time slice mostly runs between
     * preemptions (alexnet-owt's 1.8 ms GEMMs ran 7 ms in steps at np=4 on 2 cores), and
     * the ranks that finish their samples first leave the others alone on the cores (a
     * convolution's samples ranged from 36 to 78 ms). So the per-rank speed is taken
     * with one rank per core (the node full, not oversubscribed) and shared out. */
    const int cores = online_cores(), full = cores / threads;
    const bool oversubscribed = (long)local_ranks * threads > cores;
    int rc = DB_NOT_FOUND;
    if (oversubscribed && full > 1) {
        rc = db_calibration_latest_ranks(db, m->id, threads, full, cal);
        if (rc == 0)
            *over = (double)local_ranks / full;
    }
    if (rc == DB_NOT_FOUND && local_ranks > 1) {
        rc = db_calibration_latest_ranks(db, m->id, threads, local_ranks, cal);
        if (rc == 0)
            *over = 1; /* measured as the job runs */
    }
    if (rc < 0)
        return fail(err, errlen, "%s", db_errmsg(db));
    if (rc == DB_NOT_FOUND) { /* one process's speeds, the cores shared out */
        *over = machine_oversubscription(local_ranks, threads);
        if (machine_calibration(db, m, threads, cal, cm, err, errlen))
            return 1;
    } else {
        warn_threading(cal);
        if (!(*cm = cm_load(db, cal->id, err, errlen)))
            return 1;
    }
    /* The node's ranks run the same ops at about the same time, each on its own data, in
     * one last-level cache: what a rank wrote is still cached after a reuse distance of its
     * share of it, not of the whole (cm_warmth). The kernels' own cold and warm times were
     * measured as the job runs them, so only the share changes. basic-lstm at 16 per rank:
     * its compute priced 341 ms at np=2 and 683 ms at np=4 with the whole 32 MiB,
     * 352 and 705 ms with the share, measured 362 and 770 ms. */
    if (local_ranks > 1 && cm_llc_bytes(*cm) > 0)
        cm_set_llc(*cm, cm_llc_bytes(*cm) / local_ranks);
    return 0;
}

int machine_predict(const CostModel *cm, const CalibrationRow *cal, int threads, const Plan *p, PredictionRow *pred,
                    OpTimeRow **ops, char *err, size_t errlen)
{
    memset(pred, 0, sizeof *pred);
    *ops = calloc((size_t)p->nops, sizeof **ops);
    if (!*ops)
        return fail(err, errlen, "out of memory for %d ops' prices", p->nops);
    if (pred_iteration(p, cm, pred, *ops, err, errlen) != 0) {
        free(*ops);
        *ops = NULL;
        return 1;
    }
    pred->calibration_id = cal->id;
    pred->threads = threads;
    return 0;
}

double machine_oversubscription(int local_ranks, int threads)
{
    double f = (double)local_ranks * threads / (double)online_cores();
    return f > 1 ? f : 1;
}

int machine_predict_dp(const CostModel *cm, const CalibrationRow *cal, int threads, const CommModel *comm,
                       const Plan *p, int ranks, double over, PredictionRow *pred, OpTimeRow **ops, int *probed_at,
                       char *err, size_t errlen)
{
    if (machine_predict(cm, cal, threads, p, pred, ops, err, errlen))
        return 1;
    pred->ranks = ranks;
    const double f = over;
    pred->iter_s *= f, pred->iter_lo_s *= f, pred->iter_hi_s *= f;
    pred->fwd_s *= f, pred->bwd_s *= f, pred->update_s *= f;
    for (int i = 0; i < p->nops; i++) {
        (*ops)[i].time_s *= f;
        (*ops)[i].lo_s *= f;
        (*ops)[i].hi_s *= f;
    }
    if (ranks <= 1)
        return 0;
    CommSource src;
    pred->allreduce_s = comm_model_allreduce_s(comm, (double)p->arena_bytes[ARENA_GRAD], ranks, &src);
    snprintf(pred->allreduce_source, sizeof pred->allreduce_source, "%s",
             src == COMM_MEASURED ? "measured" : "fitted");
    comm_model_allreduce_band(comm, (double)p->arena_bytes[ARENA_GRAD], ranks, &pred->allreduce_lo_s,
                              &pred->allreduce_hi_s);
    /* tensor parallel: the data-parallel groups (one per rank of a tensor-parallel group) sum
     * at once, each calibrated alone; on oversubscribed cores they share them as the
     * compute does */
    if (p->model->tp_ranks > 1)
        pred->allreduce_s *= f, pred->allreduce_lo_s *= f, pred->allreduce_hi_s *= f;
    pred->iter_s += pred->allreduce_s;
    pred->iter_lo_s += pred->allreduce_lo_s;
    pred->iter_hi_s += pred->allreduce_hi_s;
    int probed;
    pred->mem_comm = comm_model_allreduce_scratch(comm, (double)p->arena_bytes[ARENA_GRAD], ranks, &probed);
    if (probed_at)
        *probed_at = probed;
    return 0;
}

double machine_runtime_bytes(void)
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

