/* cli/session.h — the steps `predict`, `run` and `validate` share: finding this
 * machine's calibration, pricing a plan, and a timed training run. */
#ifndef DLPERF_SESSION_H
#define DLPERF_SESSION_H

#include "cli/cli.h"
#include "models/plan.h"
#include "models/train.h"
#include "predictor/comm_model.h"
#include "predictor/predict.h"

/* Latest complete calibration of this machine at cli->threads and its cost model.
 * Prints the error (e.g. "no calibration ...; run dlperf calibrate") and returns nonzero. */
int session_calibration(const Cli *cli, Db *db, const MachineRow *m, CalibrationRow *cal, CostModel **cm);

/* Prices plan p; ops receives p->nops rows (caller frees). Error printed on failure. */
int session_predict(const Cli *cli, const CostModel *cm, const CalibrationRow *cal, const Plan *p,
                    PredictionRow *pred, OpTimeRow **ops);

/* The calibration a data-parallel job with local_ranks ranks on this node is priced from.
 * On an oversubscribed node (ranks x threads > cores): one measured by as many ranks as
 * fill the cores (calibrate under mpirun -np cores/threads), *over = local_ranks / those
 * (the time-sharing modelled, not measured). Else, or without one: one its ranks measured
 * at once (calibrate under mpirun -np local_ranks; *over = 1); else the one-process
 * calibration with *over = the oversubscription of the cores. */
int session_calibration_dp(const Cli *cli, Db *db, const MachineRow *m, int local_ranks, CalibrationRow *cal,
                           CostModel **cm, double *over);
/* Data-parallel on this machine: the plan (one rank's share of the batch) priced as
 * session_predict does (the update averages the summed gradients inside its own pass:
 * plan_average_ranks), times `over` (session_calibration_dp), plus the gradients' allreduce from the
 * communication model (pred->allreduce_s, included in iter_s; no overlap: dlperf's trainer
 * sums after backward by default), and the memory that allreduce holds on each rank
 * (pred->mem_comm, from the calibration's probes; 0 where none probed it; *probed_at, if
 * not NULL: the rank count whose probes gave it, comm_model_allreduce_scratch's). */
int session_predict_dp(const Cli *cli, const CostModel *cm, const CalibrationRow *cal, const CommModel *comm,
                       const Plan *p, int ranks, double over, PredictionRow *pred, OpTimeRow **ops,
                       int *probed_at);
/* local_ranks x threads / online cores, at least 1. */
double session_oversubscription(int local_ranks, int threads);

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
} RunResult;

/* Trains m at batch for warmup + steps steps (threads from cli), with a per-op trace if
 * asked. Prints the error and returns nonzero on failure (including "does not fit").
 * Under mpirun (comm_size() > 1) every rank calls it: it trains data-parallel with
 * `batch` samples per rank (row.batch is the global batch), a step's time is the slowest
 * rank's, and rank 0 receives every rank's time split (rank_times). `scaling` ("strong"
 * or "weak") and bucket_bytes (overlap) are recorded. */
int session_run(const Cli *cli, const ModelSpec *m, int batch, PlanMode mode, int warmup, int steps, bool trace,
                const MachineRow *machine, const char *scaling, size_t bucket_bytes, RunResult *out);
/* session_run with at least min_timed_s seconds of timed steps: after `steps` timed steps,
 * more until their times add up to min_timed_s (SESSION_MAX_STEPS timed steps at most).
 * A step of a few milliseconds timed 8 times is 20 ms of a shared machine: one burst of
 * contention sets its median (issue 4 saw a model at 1.8 and 3.6 ms in two runs). 0 s:
 * exactly `steps`. The data batches stay those `steps` asked for (the memory predicted). */
enum { SESSION_MAX_STEPS = 5000 };
int session_run_for(const Cli *cli, const ModelSpec *m, int batch, PlanMode mode, int warmup, int steps,
                    double min_timed_s, bool trace, const MachineRow *machine, const char *scaling,
                    size_t bucket_bytes, RunResult *out);
/* This process's place in a data-parallel job ({0, 1, 1} without MPI); bucket_bytes 0: one
 * allreduce after backward, else overlapped buckets (DataParallel). */
DataParallel session_dp(size_t bucket_bytes);
void run_result_free(RunResult *r);

/* How fast the machine runs now against the calibration, from a few reference kernels the
 * calibration measured (a 1024^3 SGEMM and a 3x3 convolution for compute-bound work; a
 * ReLU, a copy and a batch norm of a few MiB for memory-bound work), each timed again now
 * with the quick protocol: the ratios (now / calibrated) are the drift of each class, their
 * geometric means; 1 where no reference was calibrated. A shared machine changes speed with
 * its neighbours' load: a validation reports its errors with and without the drift. */
typedef struct {
    double compute, memory; /* time now / time calibrated */
    int ncompute, nmemory;  /* references that went into each */
    /* session_drift, on more than one thread: a cross-core read (each thread reading the
     * L3-sized slice its neighbour has just written) now / calibrated. On a VM whose host
     * moves the vCPUs between cores that share a cache and cores that do not it swings by
     * 4x (the EPYC VMs), and with it every op that passes data between the cores: a 2-thread
     * P3B1 step took 7.4 ms with the cores far, 3.5 ms near, 4.8 ms on one thread. Not
     * folded into the adjusted error (which ops it slows, and by how much, is not known);
     * 0: not measured. cross_after: the same after the run (validate sets it) */
    double cross, cross_after;
    /* session_drift, on more than one thread: an FMA burst on two threads over one
     * (mb_core_share): x2 where the host runs both vCPUs on one core, which the cross-core
     * read cannot tell from near; share_after: after the run (validate); 0: not measured */
    double share, share_after;
} Drift;
int session_drift(const Cli *cli, const CostModel *cm, Drift *out);
/* Drift.cross alone, timed now (0: one thread, under mpirun, or not calibrated). */
double session_cross_core_drift(const Cli *cli, const CostModel *cm);
/* Drift.share alone, probed now (0: one thread, or under mpirun). */
double session_core_share(const Cli *cli);
/* The same over the given references (at most 8), each calibrated time multiplied by
 * slowdown (the cores' oversubscription a data-parallel prediction applies). Under mpirun
 * every rank calls it at once; rank 0 passes the calibration (the others NULL) and alone
 * gets a meaningful *out. */
int session_drift_ops(const Cli *cli, const CostModel *cm, const OpDesc *refs, int nrefs, double slowdown,
                      Drift *out);
/* The drift class of an op kind (op_kind_name): compute-bound (GEMM, convolution, sparse
 * GEMM) or memory-bound (the rest). */
bool drift_compute_kind(const char *kind);
/* The prediction with each op scaled by the drift of its class. */
double drift_adjusted_s(const Drift *d, const OpTimeRow *ops, int nops);

/* The memory a dlperf process holds besides what a plan allocates: its libraries and the
 * BLAS library's packing buffers, measured once in this process (VmRSS after a GEMM large
 * enough to fill the buffers, its operands freed again). A run's peak RSS is this plus
 * what it allocates. */
double session_runtime_bytes(void);

/* Per-op rows aggregated over identical ops of a layer (the 30 LSTM steps become one
 * row with count 30), sorted by time, for the tables people read. */
typedef struct {
    char layer_name[48];
    char key[160];
    char source[16];
    int count;
    double time_s;     /* predicted (or measured when only one side is given) */
    double lo_s, hi_s; /* predicted: the uncertainty band (sums of the ops' bands) */
    double measured_s; /* validate: measured */
    double flops;
    double cached;     /* predicted: mean fraction of the ops' bytes in cache (cache model) */
} OpGroup;
int op_groups(const OpTimeRow *pred, const OpTimeRow *meas, int nops, OpGroup **out);

#endif
