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

#include "db/db.h"
#include "ops/ops.h"

typedef struct {
    const char *mode;     /* "quick" | "default" */
    int warmups;          /* executions discarded before timing */
    int min_reps;         /* samples always taken */
    int max_reps;         /* cap on samples */
    double min_sample_s;  /* a sample shorter than this batches `inner` executions */
    double target_s;      /* stop adding samples once min_reps are in and this much time was spent */
    double ci_frac;       /* ... or earlier, once the 95% CI half-width <= ci_frac * median */
} MbProtocol;

MbProtocol mb_protocol(bool quick);

typedef struct {
    int n;
    double median, mean, min, max, stddev;
    double ci95_lo, ci95_hi; /* Student-t interval of the mean */
} MbStats;

/* Statistics of samples[0..n) (sorted in place) with GSL. n >= 1. */
void mb_stats(double *samples, int n, MbStats *out);

/* Smallest observable difference of CLOCK_MONOTONIC, measured (seconds). */
double mb_timer_resolution_s(void);
double mb_now_s(void);

/* Times one descriptor by the protocol and fills m (everything except id, family and
 * calibration_id; m->samples points into `samples`, which must hold p->max_reps doubles).
 * Returns 0, or -1 with a message (allocation failure, validation failure). After a
 * validation failure m is complete with validated = false (evidence the caller may store);
 * after any other failure m->reps is 0. */
int mb_time_op(const OpDesc *d, const MbProtocol *p, int threads, MeasurementRow *m,
               double *samples, char *err, size_t errlen);
/* mb_time_op keeps its buffers for the next call (fresh multi-GiB buffers cost seconds of
 * page zeroing each); this frees them. mb_calibrate calls it when done. */
void mb_release(void);

/* ---- shape lists: each fills out[0..max) and returns the count ---- */
int mb_list_gemm_square(bool quick, OpDesc *out, int max);    /* square sweep, NN        */
int mb_list_gemm_deepbench(bool quick, OpDesc *out, int max); /* DeepBench training subset */
int mb_list_conv_extra(bool quick, OpDesc *out, int max);     /* DeepBench conv subset x 3 phases */
int mb_list_stream(bool quick, OpDesc *out, int max);         /* copy/scale/add/triad, arrays >= 4x LLC */
int mb_list_eltwise(bool quick, OpDesc *out, int max);        /* act/bias/update/zero/copy size sweep */

/* ---- calibration driver ---- */
typedef struct {
    const char *family; /* stored in measurement.family */
    const OpDesc *ops;
    int n;
} MbFamily;

typedef void (*MbProgress)(int done, int total, const char *family, const char *key,
                           double elapsed_s, void *ctx);

/* Measures every descriptor of every family once (duplicate keys across families are
 * measured once, under the first family that lists them) and inserts each measurement
 * into calibration `calibration_id` as soon as it is taken. Returns 0 when all were
 * measured, 1 when *stop became nonzero (interrupted; what was measured is kept), -1 on
 * error with err set. */
int mb_calibrate(Db *db, int64_t calibration_id, const MbProtocol *p, int threads,
                 const MbFamily *fams, int nfams, MbProgress progress, void *progress_ctx,
                 volatile sig_atomic_t *stop, char *err, size_t errlen);

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
