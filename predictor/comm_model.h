/* predictor/comm_model.h — what communication costs: allreduce algorithms in the
 * alpha-beta-gamma model, their parameters fitted (GSL) from the communication
 * microbenchmarks or taken from a spec sheet, and data-parallel iteration time.
 *
 * For a message of n bytes over p ranks, with alpha the latency of one message, beta the
 * link bandwidth (bytes/s) and gamma the time to reduce one byte (Thakur, Rabenseifner &
 * Gropp 2005; seed 003 for the tree):
 *   ring                 2(p-1) alpha + 2 (p-1)/p n/beta + (p-1)/p n gamma
 *   binary tree          2 log2(p) (alpha + n/beta) + log2(p) n gamma   (seed 003: 2 w log2(p)/beta)
 *   recursive doubling   log2(p) (alpha + n/beta + n gamma)
 *   recursive halving    2 log2(p) alpha + 2 (p-1)/p n/beta + (p-1)/p n gamma   (Rabenseifner)
 *   hierarchical         ring reduce-scatter inside each node (q ranks per node, intra link),
 *                        ring allreduce of each n/q shard between the p/q nodes (q rings at
 *                        once sharing the node's injection bandwidth), ring allgather inside
 * Flat algorithms over several nodes: a ring's steps last as long as their slowest hop (one
 * stream per node crosses nodes); the others' cross-node steps share the node's NICs among
 * its q ranks. The inter link's beta is a node's injection bandwidth (NICs x port).
 * log2(p) is rounded up (the extra step of a non-power of two).
 */
#ifndef DLPERF_COMM_MODEL_H
#define DLPERF_COMM_MODEL_H

#include <stdbool.h>

#include "db/db.h"

typedef enum { AR_RING, AR_TREE, AR_RECURSIVE_DOUBLING, AR_RECURSIVE_HALVING, AR_HIERARCHICAL, AR_COUNT } AllreduceAlgo;

const char *allreduce_algo_name(AllreduceAlgo a); /* "ring", "tree", "rec-doubling", ... */
/* Parses a name as printed (and "best"); returns 0 or -1. */
int allreduce_algo_parse(const char *name, AllreduceAlgo *out);

typedef struct {
    double alpha_s;   /* latency of one message */
    double beta_Bps;  /* bandwidth of one link, bytes/s */
    double gamma_sPB; /* seconds to reduce one byte (sum of floats) */
} LinkParams;

typedef struct {
    LinkParams intra, inter; /* between ranks of one node (per rank); between nodes (per node) */
    int ranks_per_node;      /* q; 1 means every rank on its own node */
} CommParams;

/* Time of one allreduce of `bytes` over p ranks (0 for p <= 1). */
double allreduce_model_s(AllreduceAlgo a, double bytes, int p, const CommParams *c);

/* ---- calibrated: the machine's measured collectives ---- */
typedef struct CommModel CommModel;

/* Loads every communication calibration of the machine (each rank count's latest), fits
 * the ping-pong's alpha and beta (weighted least squares: relative errors), then for each
 * algorithm its allreduce alpha and gamma over all rank counts (beta kept from the
 * ping-pong) and ranks the algorithms by their fit error. Returns NULL with err set when
 * there is no communication calibration ("run mpirun -np P dlperf calibrate --only comm"). */
CommModel *comm_model_load(Db *db, int64_t machine_id, char *err, size_t errlen);
void comm_model_free(CommModel *cm);

typedef enum { COMM_MEASURED, COMM_FITTED } CommSource;
/* Allreduce time of `bytes` over p ranks of this machine: interpolated (log-log, Steffen)
 * in the measurements at p ranks when the calibration has p and the size lies in its range,
 * else the best-fitting algorithm's model. */
double comm_model_allreduce_s(const CommModel *cm, double bytes, int p, CommSource *source);
/* The same with the node's ranks apart (comm_peer_rtt_ns x MB_FAR_RTT its fastest or
 * more): the near curve times the apart/near ratio of the measured sizes that had passes
 * apart (comm_model.c says how it is spread over sizes); 0 where the calibration of p
 * ranks had no pass apart, or p was not calibrated. */
double comm_model_allreduce_apart_s(const CommModel *cm, double bytes, int p);
/* The near mark of the round trips between the node's ranks that the calibration of p
 * ranks probed (ns; older calibrations: the fastest); 0 where not probed, not calibrated
 * or the probes showed one mode. */
double comm_model_rtt_fastest_ns(const CommModel *cm, int p);
/* Its band: where measured, the measurements' own bands (each the samples' 95% confidence
 * interval moved onto the median) interpolated the same way; fitted, none (lo = hi = the
 * time). */
void comm_model_allreduce_band(const CommModel *cm, double bytes, int p, double *lo, double *hi);

/* The resident bytes one allreduce of `bytes` over p ranks adds to each rank (the MPI
 * library's temporaries), from the communication calibrations' memory probes: linear
 * between the probed sizes, in proportion beyond them. At a rank count not probed, the
 * nearest probed one below (a ring's scratch, 2 blocks of bytes/p, shrinks as p grows: an
 * upper bound), else above. *probed_at: the rank count it came from; 0 (and 0 returned)
 * when no calibration probed memory (those before dlperf measured it). */
double comm_model_allreduce_scratch(const CommModel *cm, double bytes, int p, int *probed_at);

/* A rank's own resident memory in a job of p ranks on this node (libraries, the MPI
 * library and its shared-memory segments, BLAS buffers), as the communication calibration
 * of p ranks measured it, else of the nearest rank count below (the segments grow with
 * the ranks: a lower bound), else above. *measured_at: the rank count it came from; 0
 * (and 0 returned) when no calibration recorded it (those from before dlperf did). */
double comm_model_rank_runtime(const CommModel *cm, int p, int *measured_at);

typedef struct {
    AllreduceAlgo algo;
    double alpha_s, gamma_sPB;
    double median_rel_err; /* |model - measured| / measured over all allreduce points */
} CommAlgoFit;
typedef struct {
    int nranks;          /* rank counts calibrated */
    int ranks[8];
    int points;          /* allreduce measurements */
    double p2p_alpha_s, p2p_beta_Bps, p2p_median_rel_err;
    CommAlgoFit algos[AR_COUNT - 1]; /* flat algorithms (not hierarchical), best first */
    /* the allreduce memory probes of each rank count (ranks[i]): how many sizes, and the
     * largest size's buffer and scratch bytes (0 probes: a calibration from before them) */
    int mem_probes[8];
    double mem_largest_bytes[8], mem_largest_scratch[8];
    double rank_runtime_bytes[8]; /* a rank's own memory before any buffer; 0: not recorded */
    /* where the node's ranks ran (comm_peer_rtt_ns): the fastest round trip the calibration
     * probed (0: not probed), the allreduce sizes with passes apart, and the median of
     * their apart/near ratios (0: none) */
    double rtt_fastest_ns[8];
    int apart_points[8];
    double apart_over_near[8];
    char mpi_library[128];
} CommFitInfo;
void comm_model_info(const CommModel *cm, CommFitInfo *out);
/* This machine as CommParams (one node: intra = inter = the fitted link) for what-if use. */
CommParams comm_model_params(const CommModel *cm, AllreduceAlgo *best);

/* ---- data-parallel iteration ---- */
typedef struct {
    double fwd_s, bwd_s, update_s; /* one rank's compute at its share of the batch */
    double allreduce_s;            /* the gradients' allreduce */
    bool overlap;                  /* allreduce in buckets during backward (Horovod) */
} DpStep;
/* Iteration time: without overlap fwd + bwd + allreduce + update; with overlap the
 * allreduce hides behind backward as far as it lasts: fwd + max(bwd, allreduce) + update
 * (an upper bound on overlap: the last bucket's allreduce cannot hide). */
double dp_iteration_s(const DpStep *s);

#endif
