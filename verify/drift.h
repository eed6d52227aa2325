/* verify/drift.h — how fast this machine runs now against its calibration: a few of the
 * calibration's reference kernels timed again just before a run, and where the host has
 * put the threads' cores. A validation reports its errors with and without the drift.
 */
#ifndef DLPERF_DRIFT_H
#define DLPERF_DRIFT_H

#include <stdbool.h>
#include <stddef.h>

#include "db/db.h"
#include "ops/ops.h"
#include "predictor/predict.h"

/* How fast the machine runs now against the calibration, from a few reference kernels the
 * calibration measured (a 1024^3 SGEMM and a 3x3 convolution for compute-bound work; a
 * ReLU, a copy and a batch norm of a few MiB for memory-bound work), each timed again now
 * with the quick protocol: the ratios (now / calibrated) are the drift of each class, their
 * geometric means; 1 where no reference was calibrated. A shared machine changes speed with
 * its neighbours' load: a validation reports its errors with and without the drift. */
typedef struct {
    double compute, memory; /* time now / time calibrated */
    int ncompute, nmemory;  /* references that went into each */
    /* drift_measure, on more than one thread: a cross-core read (each thread reading the
     * L3-sized slice its neighbour has just written) now / calibrated. On a VM whose host
     * moves the vCPUs between cores that share a cache and cores that do not it swings by
     * 4x (the EPYC VMs), and with it every op that passes data between the cores: a 2-thread
     * P3B1 step took 7.4 ms with the cores far, 3.5 ms near, 4.8 ms on one thread. Not
     * folded into the adjusted error (which ops it slows, and by how much, is not known);
     * 0: not measured. cross_after: the same after the run (validate sets it) */
    double cross, cross_after;
    /* drift_measure, on more than one thread: an FMA burst on two threads over one
     * (mb_core_share): x2 where the host runs both vCPUs on one core, which the cross-core
     * read cannot tell from near; share_after: after the run (validate); 0: not measured */
    double share, share_after;
} Drift;
/* 0; else 1 with err (a reference that could not be timed). */
int drift_measure(int threads, const CostModel *cm, Drift *out, char *err, size_t errlen);
/* Drift.cross alone, timed now (0: one thread, under mpirun, or not calibrated). */
double drift_cross_core(int threads, const CostModel *cm);
/* Drift.share alone, probed now (0: one thread, or under mpirun). */
double drift_core_share(int threads);
/* The same over the given references (at most 8), each calibrated time multiplied by
 * slowdown (the cores' oversubscription a data-parallel prediction applies). Under mpirun
 * every rank calls it at once; rank 0 passes the calibration (the others NULL) and alone
 * gets a meaningful *out. */
int drift_measure_ops(int threads, const CostModel *cm, const OpDesc *refs, int nrefs, double slowdown, Drift *out,
                      char *err, size_t errlen);
/* The drift class of an op kind (op_kind_name): compute-bound (GEMM, convolution, sparse
 * GEMM) or memory-bound (the rest). */
bool drift_compute_kind(const char *kind);
/* The prediction with each op scaled by the drift of its class. */
double drift_adjusted_s(const Drift *d, const OpTimeRow *ops, int nops);

#endif
