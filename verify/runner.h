/* verify/runner.h — a timed training run of a model on this machine, as `run`,
 * `validate` and `suite` take it: the whole memory allocated before the first step, warm-up
 * steps apart, a per-op trace if asked, where the threads' cores were around each step,
 * and under mpirun every rank's times.
 */
#ifndef DLPERF_RUNNER_H
#define DLPERF_RUNNER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "db/db.h"
#include "models/model.h"
#include "models/plan.h"
#include "models/train.h"

/* What the verify functions return besides 0, with their message in err: a failure
 * (1) or an input they refuse (2), the values the command line exits with. */
enum { VERIFY_FAIL = 1, VERIFY_USAGE = 2 };
/* Writes the message into err and returns code. */
int verify_fail(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* What a run is run with and recorded with. */
typedef struct {
    int threads;     /* for BLAS and the kernels */
    bool progress;   /* a progress line on stderr (rank 0 of a terminal) */
    SoftwareInfo sw; /* stored with the run: threads, BLAS core and its choice, compiler, commit */
    /* set (by a signal handler) to stop a run before its next step: the run fails with
     * RunResult.interrupted (may be NULL) */
    volatile sig_atomic_t *stop;
} RunEnv;

typedef struct {
    RunRow row;
    double *step_s, *loss; /* warm-up steps first; data-parallel: the slowest rank's */
    int nsteps;            /* warm-up + timed */
    OpTimeRow *ops;        /* traced runs: per-op median over the timed steps (rank 0's) */
    int nops;
    RankTimeRow *rank_times; /* data-parallel, on rank 0: one row per rank */
    /* data-parallel, on rank 0: the median over the timed steps of each step's slowest
     * rank's compute_s, wait_s and comm_s: the critical path's shares of a step, and the
     * statistic the communication calibration takes (a sample's slowest rank) */
    StepTimes slowest;
    /* one process on two threads or more: per step (as step_s), where the threads' cores
     * were around it: the round trip between them, the slower of the probes just before and
     * just after (ns), and the larger core share (mb_core_share); row.step_rtt_ns and
     * row.step_core_share point here; NULL otherwise */
    double *step_rtt_ns, *step_core_share;
    /* the loss became NaN or infinite: the run stopped at that step, err names the first
     * tensor that went wrong, row.status is "failed" with the steps so far (row.steps the
     * timed ones; the last step's loss the non-finite one); the caller stores it if it
     * keeps runs, and frees it */
    bool failed;
    bool interrupted; /* env->stop was set: the run stopped before a step (nothing kept) */
} RunResult;

/* Trains m at batch for warmup + steps steps on env's threads, with a per-op trace if
 * asked. 0; else 1 with err (a batch that does not fit, memory, a loss that became NaN or
 * infinite: then out->failed, out kept).
 * Under mpirun (comm_size() > 1) every rank calls it: it trains data-parallel with
 * `batch` samples per rank (row.batch is the global batch), a step's time is the slowest
 * rank's, and rank 0 receives every rank's time split (rank_times). `scaling` ("strong"
 * or "weak") and bucket_bytes (overlap) are recorded. */
int run_train(const RunEnv *env, const ModelSpec *m, int batch, PlanMode mode, int warmup, int steps, bool trace,
              const MachineRow *machine, const char *scaling, size_t bucket_bytes, RunResult *out, char *err,
              size_t errlen);
/* run_train with at least min_timed_s seconds of timed steps: after `steps` timed steps,
 * more until their times add up to min_timed_s (RUN_MAX_STEPS timed steps at most).
 * A step of a few milliseconds timed 8 times is 20 ms of a shared machine: one burst of
 * contention sets its median (a model ran at 1.8 and 3.6 ms in two runs). 0 s:
 * exactly `steps`. The data batches stay those `steps` asked for (the memory predicted). */
enum { RUN_MAX_STEPS = 5000 };
int run_train_for(const RunEnv *env, const ModelSpec *m, int batch, PlanMode mode, int warmup, int steps,
                  double min_timed_s, bool trace, const MachineRow *machine, const char *scaling,
                  size_t bucket_bytes, RunResult *out, char *err, size_t errlen);
/* This process's place in a data-parallel job ({0, 1, 1} without MPI); bucket_bytes 0: one
 * allreduce after backward, else overlapped buckets (DataParallel). */
DataParallel run_data_parallel(size_t bucket_bytes);
void run_result_free(RunResult *r);

#endif
