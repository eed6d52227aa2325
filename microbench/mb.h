/* microbench/mb.h — the timing protocol, its statistics, the benchmark shape lists and
 * the calibration driver that stores every measurement in the database.
 *
 * Protocol (the STREAM / OSU habit, DESIGN.md): buffers allocated and filled once
 * (seeded), warm-up executions discarded, then repeated timed samples; kernels too short
 * for the timer are executed `inner` times per sample; min, median, mean, max, stddev and
 * a 95% confidence interval (GSL); rates from the analytical op_cost; the result is
 * validated with op_spot_check after timing, outside the timed region.
 */
#ifndef DLPERF_MB_H
#define DLPERF_MB_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "db/db.h"
#include "ops/ops.h"

/* How much to measure: quick (about a minute), default (within 15 minutes on a 2-core
 * machine), full (DeepBench's complete lists, however long they take here). */
typedef enum { MB_QUICK, MB_DEFAULT, MB_FULL, MB_MODE_COUNT } MbMode;
const char *mb_mode_name(MbMode m); /* "quick", "default", "full" */

/* The near catch-up's tie-break (MbProtocol.catchup_split; microbench/calibrate.c says why):
 * near passes more than this ratio apart get one more. */
#define MB_CATCHUP_SPLIT 1.15

typedef struct {
    const char *mode;     /* "quick" | "default" | "full" */
    int warmups;          /* executions discarded before timing */
    int min_reps;         /* samples always taken */
    int max_reps;         /* cap on samples */
    double min_sample_s;  /* a sample shorter than this batches `inner` executions */
    double target_s;      /* stop adding samples once min_reps are in and this much time was spent */
    double ci_frac;       /* ... or earlier, once the 95% CI half-width <= ci_frac * median */
    double long_s;        /* a kernel whose first execution takes at least this long ... */
    int long_min_reps;    /* ... is warmed up once and sampled at least this often */
    int rounds;           /* mb_calibrate: passes over the kernel list (1: one) */
    double catchup_split; /* mb_calibrate's near catch-up: one more near pass for a kernel whose
                             near passes, an even count, differ by more than this ratio
                             (mb_pass_split; 0: never; below 1: always) */
    double budget_s;      /* mb_calibrate: the whole calibration's time at most (0: none). Once
                             the kernels timed so far project the passes past it, each later
                             kernel samples for a shorter time (target_s down to a tenth; its
                             min_reps still taken), and the catch-up gets what is left */
} MbProtocol;

enum { MB_MAX_ROUNDS = MB_PASSES_MAX }; /* calibrate --rounds at most (db.h: each pass's placement is stored) */

MbProtocol mb_protocol(MbMode mode);

typedef struct {
    int n;
    double median, mean, min, max, stddev;
    double ci95_lo, ci95_hi; /* Student-t interval of the mean */
} MbStats;

/* Statistics of samples[0..n) (sorted in place) with GSL. n >= 1. */
void mb_stats(double *samples, int n, MbStats *out);

/* Fills m's sample count, statistics and sample pointer from samples[0..n) (time order
 * kept; scratch holds n doubles), executions per sample `inner`. */
void mb_row_stats(MeasurementRow *m, double *samples, int n, int inner, double *scratch);

/* The median of the per-pass medians of samples[0..n), sample i from pass round[i] in
 * [0, rounds) (round NULL: all from pass 0; passes without samples skipped; scratch holds
 * n doubles): a calibration in rounds prices a kernel by it, so that each pass has one
 * vote however many samples it took. With pass_off (NULL: none), the passes it marks (run
 * with the threads' cores at another placement than the calibration's: apart, or on one
 * core) are left out, and with sample_off (NULL: none) the samples it marks (taken at
 * another placement, by the probes around each sample); both unless that leaves no sample.
 * 0 if n is 0. */
double mb_pass_median(const double *samples, const int *round, int n, int rounds, const bool *pass_off,
                      const bool *sample_off, double *scratch);

/* The largest over the smallest of the same per-pass medians, the marked passes and
 * samples always left out (1 with fewer than two passes left): how far apart the passes a
 * price pools disagree (the calibration's near catch-up gives an even count of near passes
 * split by more than MbProtocol.catchup_split one more, so their median is not the mean of a fast
 * and a slow one). */
double mb_pass_split(const double *samples, const int *round, int n, int rounds, const bool *pass_off,
                     const bool *sample_off, double *scratch);

/* ---- where the kernel threads' cores are (placement.c) ---- */
/* The round trip of a cache line between OpenMP threads 0 and 1 now, in ns (the fastest of
 * three bursts of 64); 0 with fewer than 2 threads. */
double mb_core_rtt_ns(int threads);
/* A round trip this many times a calibration's near mark: the host has put the cores apart
 * (the EPYC VMs: x4-10 apart, x1-1.5 near). The mark is the split between the probes' two
 * modes / MB_FAR_RTT where they show two (microbench/rtt_modes.h), so the class boundary
 * is the split itself; none where they show one. */
#define MB_FAR_RTT 2.5
/* How much slower an FMA burst runs on threads 0 and 1 together than on thread 0 alone:
 * about 1 with a core each, about 2 where the host runs both on one core's two hardware
 * threads (which the round trip cannot tell from near); 0 with fewer than 2 threads. */
double mb_core_share(int threads);
/* A share this high or more: the threads were on one core. */
#define MB_SHARED_CORE 1.5
/* Waits, asleep between probes (MB_NEAR_POLL_S), until the round trip between the threads'
 * cores has been under MB_FAR_RTT x near_ns (the calibration's near mark) at every
 * probe for hold_s seconds (0: one near probe), or until deadline_s (mb_now_s's clock) or
 * *stop (NULL: none). True once near (at once where it already is and hold_s is 0); false
 * when the deadline or a stop came first, or with fewer than 2 threads or no near mark
 * (nothing to wait for). Used where a measurement must be taken at the placement the
 * calibration priced: the calibration's near catch-up, validate's rounds. */
bool mb_wait_until_near(int threads, double near_ns, double hold_s, double deadline_s,
                        volatile sig_atomic_t *stop);
#define MB_NEAR_POLL_S 0.2
/* Tests play a host that moves the cores: non-NULL members answer in place of the real
 * probes (mb_core_rtt_ns, mb_core_share). NULL in every program. */
typedef struct {
    double (*rtt_ns)(int threads);
    double (*share)(int threads);
} MbPlacementProbes;
extern MbPlacementProbes mb_placement_fake;

/* Smallest observable difference of CLOCK_MONOTONIC, measured (seconds). */
double mb_timer_resolution_s(void);
double mb_now_s(void);

/* Times one descriptor by the protocol and fills m (everything except id, family and
 * calibration_id; m->samples points into `samples`, which must hold p->max_reps doubles).
 * Returns 0, MB_DOES_NOT_FIT (nothing allocated: the kernel's buffers exceed this
 * process's share of the memory available, the node's ranks measuring together; err says
 * how much), or -1 with a message (allocation failure, validation failure). After a
 * validation failure m is complete with validated = false (evidence the caller may store);
 * after any other failure m->reps is 0. Under mpirun rank 0 alone checks the results (the
 * ranks compute the same thing on the same data); the others report validated. */
enum { MB_DOES_NOT_FIT = 2 };
/* Bytes one of `ranks` ranks measuring d together on a node needs: its buffers, a fresh
 * input's copy, and its share of rank 0's snapshots for the spot check (in-out buffers:
 * rank 0 alone checks). mb_time_op refuses a kernel (MB_DOES_NOT_FIT) above 90% of the
 * available memory's per-rank share. */
double mb_kernel_share_bytes(const OpDesc *d, int ranks);
int mb_time_op(const OpDesc *d, const MbProtocol *p, int threads, MeasurementRow *m,
               double *samples, char *err, size_t errlen);
/* mb_time_op, with the round trip between the threads' cores (mb_core_rtt_ns) probed before
 * the first sample and after each, outside the timed region: sample_rtt_ns[i] (p->max_reps
 * doubles) is the slower of the probes around sample i (ns), so that the caller can tell
 * the samples taken with the cores apart (the host of the EPYC VMs moves the vCPUs within a
 * kernel's pass; 0 on one thread). About 10 us a probe near, 60 us apart, against samples
 * of 2 ms or more. */
int mb_time_op_probed(const OpDesc *d, const MbProtocol *p, int threads, MeasurementRow *m, double *samples,
                      double *sample_rtt_ns, char *err, size_t errlen);
/* Evicts this process's data from every cache level: each kernel thread reads its part of
 * a buffer twice the last-level cache (allocated on first use; mb_release frees it).
 * mb_time_op does this before each sample of a memory-bound op that would otherwise stay
 * in cache (protocol.c says which), the communication benchmarks before each allreduce. */
void mb_flush_caches(void);
/* mb_time_op keeps its buffers for the next call (fresh multi-GiB buffers cost seconds of
 * page zeroing each); this frees them. mb_calibrate calls it when done. */
void mb_release(void);

/* ---- the machine's caches (sysfs) ---- */
typedef struct {
    size_t bytes[3];     /* L1 data, L2, L3 of cpu0; 0 if absent */
    int shared_cpus[3];  /* CPUs sharing each */
} MbCaches;
void mb_cache_sizes(MbCaches *c);

/* ---- DeepBench's kernel lists (deepbench.c, MODELS.md 6.4) and seed 004's shapes ---- */
typedef struct {
    int m, n, k;
    bool ta, tb;
    double gflop; /* the table's 2MNK/1e9 */
} MbGemmShape;
typedef struct {
    int w, h, c, n, k, r, s, pad_h, pad_w, stride_h, stride_w; /* r: filter height, s: width */
    double gflop; /* the table's forward 2 N K C R S P Q / 1e9 */
} MbConvShape;
typedef enum { MB_RNN_VANILLA, MB_RNN_LSTM, MB_RNN_GRU } MbRnnCell;
typedef struct {
    int hidden, batch, steps;
    MbRnnCell cell;
    double gflop; /* the table's forward 2 g H^2 N T / 1e9, g = 1, 4, 3 */
} MbRnnShape;
typedef struct {
    int m, n, k;
    double sparsity; /* fraction of zeros of the M x K weight */
} MbSparseShape;
extern const MbGemmShape mb_deepbench_gemm_train[];
extern const int mb_deepbench_gemm_train_count;
extern const MbConvShape mb_deepbench_conv_train[];
extern const int mb_deepbench_conv_train_count;
extern const MbRnnShape mb_deepbench_rnn_train[];
extern const int mb_deepbench_rnn_train_count;
extern const MbSparseShape mb_deepbench_sparse[];
extern const int mb_deepbench_sparse_count;
extern const MbGemmShape mb_seed004_dmm[];
extern const int mb_seed004_dmm_count;
extern const MbSparseShape mb_seed004_smm[];
extern const int mb_seed004_smm_count;

/* The convolution descriptor of a DeepBench row in one phase (overwriting, as cuDNN's
 * beta = 0 and a step's first writer). */
OpDesc mb_conv_shape_desc(const MbConvShape *c, OpPhase phase);
/* The ops of one time step of a DeepBench RNN row as dlperf runs a recurrent layer: the
 * recurrent GEMM and the cell; in backward the cell's backward, the data and weight GEMMs
 * and the bias gradient. Fills out[0..max) and returns the count (at most 8). */
int mb_rnn_step_ops(const MbRnnShape *r, bool backward, OpDesc *out, int max);

/* ---- shape lists: each fills out[0..max) and returns how many it has in total (so a
 * caller may ask for the count first with (NULL, 0)) ---- */
int mb_list_peak(MbMode mode, int threads, OpDesc *out, int max);     /* FMA roof, 1 and all threads */
int mb_list_memory(MbMode mode, int threads, const MbCaches *c, OpDesc *out, int max); /* per level */
int mb_list_gemm_sweep(MbMode mode, OpDesc *out, int max);     /* squares, an M x N x K grid, transposes */
int mb_list_gemm_deepbench(MbMode mode, OpDesc *out, int max); /* DeepBench training + seed 004 DMM */
int mb_list_conv_deepbench(MbMode mode, OpDesc *out, int max); /* DeepBench training x 3 phases */
int mb_list_rnn_deepbench(MbMode mode, OpDesc *out, int max);  /* DeepBench RNN rows' step ops */
int mb_list_sparse(MbMode mode, OpDesc *out, int max);         /* DeepBench sparse + seed 004 SMM */
int mb_list_cnn_sweep(MbMode mode, OpDesc *out, int max);      /* a CNN's conv / pool / norm layers */
int mb_list_stream(MbMode mode, OpDesc *out, int max);         /* copy/scale/add/triad, arrays >= 4x LLC */
int mb_list_eltwise(MbMode mode, OpDesc *out, int max);        /* element-wise, losses, updates */
int mb_list_transformer(MbMode mode, OpDesc *out, int max);    /* attention BMMs, linear, norms, GELU, ops */
/* Whether a mode measures DeepBench row i (0-based) of each list, for reports. */
bool mb_deepbench_gemm_in(MbMode mode, int i);
bool mb_deepbench_conv_in(MbMode mode, int i);
bool mb_deepbench_rnn_in(MbMode mode, int i);

/* ---- calibration driver ---- */
typedef struct {
    const char *family; /* stored in measurement.family */
    const OpDesc *ops;
    int n;
    /* its kernels may be left out to keep a budget (MbProtocol.budget_s): a sweep the
     * fitted model learns from, not the limits or the ops a prediction prices exactly */
    bool optional;
} MbFamily;

typedef void (*MbProgress)(int done, int total, const char *family, const char *key,
                           double elapsed_s, void *ctx);

/* Measures every descriptor of every family once (duplicate keys across families are
 * measured once, under the first family that lists them) and inserts each measurement
 * into calibration `calibration_id` as soon as it is taken. With p->rounds > 1 the lists
 * are measured in that many passes, each kernel's sampling budget split over them; its
 * samples are pooled and stored after the last pass; with 2 threads or more on one process,
 * a kernel left with fewer than two passes at the near placement is timed again while the
 * cores are near, in up to two more passes within about a third of the passes' time (the
 * near catch-up, calibrate.c), and stored after. A kernel whose buffers do not fit
 * in the memory (mb_time_op's MB_DOES_NOT_FIT, on any rank) is left out with a warning on
 * stderr, not measured and not stored. Under mpirun every rank calls
 * it with the same lists: the ranks start each kernel together (a barrier) and measure it
 * at the same time, rank 0 stores (db NULL on the others), and a stop or a failure on any
 * rank ends all of them. Returns 0 when all were
 * measured, 1 when *stop became nonzero (interrupted; what was measured is kept), -1 on
 * error with err set. */
int mb_calibrate(Db *db, int64_t calibration_id, const MbProtocol *p, int threads,
                 const MbFamily *fams, int nfams, MbProgress progress, void *progress_ctx,
                 volatile sig_atomic_t *stop, char *err, size_t errlen);

/* ---- communication (microbench/comm.c; every rank of an MPI job calls these) ---- */
typedef enum { MB_COMM_ALLREDUCE, MB_COMM_BCAST, MB_COMM_PINGPONG } MbCommKind;
typedef struct {
    MbCommKind kind;
    size_t bytes; /* message size (allreduce: float32 elements x 4) */
} MbCommKernel;
const char *mb_comm_kind_name(MbCommKind k); /* "allreduce", "bcast", "pingpong" */
/* The sizes a mode measures: allreduce 4 B .. 256 MiB by powers of 2 and DeepBench's
 * all-reduce sizes, broadcast, ping-pong (quick: coarser, to 16 MiB). Returns the count. */
int mb_comm_list(MbMode mode, MbCommKernel *out, int max);
/* "allreduce bytes=4194304 ranks=2": the measurement key */
void mb_comm_key(const MbCommKernel *k, int ranks, char *out, size_t n);
/* Times one kernel on all ranks (collective); samples hold p->max_reps doubles. The
 * row's median_s is seconds per collective (ping-pong: one way), bytes the message size.
 * Returns 0, MB_DOES_NOT_FIT on every rank (nothing allocated) when a rank's share of the
 * node's available memory cannot hold its buffers (and an allreduce's temporaries), or
 * -1 with err. */
int mb_time_comm(const MbCommKernel *k, const MbProtocol *p, int threads, MeasurementRow *m, double *samples,
                 char *err, size_t errlen);
/* Measures the mode's list and an allreduce of each of model_bytes[0..nmodel) (the models'
 * gradient buffers) on all ranks, in `rounds` passes over the list (each a 1/rounds share
 * of a kernel's samples; priced by the passes' medians); rank 0 stores each row, once
 * every pass is done, in calibration `calibration_id` (db may be NULL on the other ranks). Returns 0, 1 if interrupted (on any rank), -1 with
 * err on failure (on any rank). */
int mb_calibrate_comm(Db *db, int64_t calibration_id, MbMode mode, int rounds, int threads,
                      const size_t *model_bytes, int nmodel, MbProgress progress, void *progress_ctx,
                      volatile sig_atomic_t *stop, char *err, size_t errlen);

/* The resident memory an in-place allreduce of each size adds to a rank (the MPI library's
 * temporaries; the largest rank's), every rank calling: sizes (n of them) are sorted,
 * made whole floats and unique into sorted[], their scratch bytes into scratch[]; a size
 * whose buffer and scratch the ranks' memory cannot hold is left out (warned on stderr).
 * Returns the count probed, or -1 with err set (on every rank). */
int mb_comm_scratch_probe(const size_t *bytes, int n, size_t *sorted, double *scratch, char *err, size_t errlen);

/* ---- fingerprints ---- */
/* CPU model and flags (/proc/cpuinfo), online cores, MemTotal, hostname, uname; the
 * fingerprint hashes what identifies the hardware (not the hostname). */
void mb_machine_detect(MachineRow *m);
/* threads, BLAS core and config, compiler (__VERSION__). git_commit, blas_choice and
 * mpi_library are left for the caller. */
void mb_software_detect(SoftwareInfo *sw, int threads);
/* Last-level cache size in bytes (sysfs), or 32 MiB if unknown. */
size_t mb_llc_bytes(void);

#endif
