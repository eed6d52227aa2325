/* predictor/predict.h — pricing op descriptors from a calibration, and the iteration-time
 * and memory prediction of a training-step plan.
 *
 * Each op is priced by the first path that applies:
 *   exact    — the calibration measured this very key: its median time;
 *   scaled   — it measured the same op at another batch size (the batch-like dimension of a
 *              GEMM, convolution, pooling, bias, loss, norm or cell op differs, nothing
 *              else): the nearest such measurement, scaled by the FLOP (or byte) ratio
 *              (a GEMM: by the fitted model's ratio between the two shapes, anchored on
 *              the measurement, since its efficiency depends on each dimension);
 *   fitted   — local linear regression in log space over every measurement of the same
 *              kind, phase and variant (LOESS, GSL least squares; cost_model.c says on
 *              which features), never below the roofline of the measured FMA peak and the
 *              bandwidth of the memory level the op's data fits in;
 *   roofline — a kind with too few measurements to fit: the roofline times the median
 *              ratio (time / roofline) the kind, or every kind of its boundness, achieved.
 * Each op is priced between its cold and warm times by how warm its bytes are when it
 * starts (the cache model, pred_cache_fractions): how much traffic since each byte's last
 * use, read against the calibration's bandwidth-by-working-set curve.
 * The uncertainty band of an op is its measurement's 95% CI (exact, scaled), the fit's
 * leave-one-out error (68th percentile; fitted), or roofline .. 2x (roofline); bands are summed as if
 * fully correlated. A holdout model (cm_holdout) drops every measurement that shares a
 * shape with given ops and prices by the fitted paths only: how well the model predicts
 * what it never saw.
 */
#ifndef DLPERF_PREDICT_H
#define DLPERF_PREDICT_H

#include "db/db.h"
#include "models/plan.h"
#include "ops/ops.h"

typedef enum { PRICE_EXACT, PRICE_SCALED, PRICE_FITTED, PRICE_ROOFLINE } PriceSource;

typedef struct {
    double time_s, lo_s, hi_s;
    PriceSource source;
} OpPrice;

typedef struct CostModel CostModel;

/* Loads every validated measurement of a calibration and fits the per-kind models.
 * Returns NULL with err set on failure. */
CostModel *cm_load(Db *db, int64_t calibration_id, char *err, size_t errlen);
/* For tests and in-memory use: an empty model, measurements added one by one, then fit. */
CostModel *cm_new(void);
void cm_add(CostModel *cm, const MeasurementRow *m);
void cm_fit(CostModel *cm);
void cm_free(CostModel *cm);
int cm_count(const CostModel *cm);
/* The calibration's median time of exactly this op (seconds), 0 if it was not measured
 * (or was left out by cm_holdout); also of the cross-core reads (membw cross) at the
 * calibration's threads, which price nothing. Requires cm_fit. */
double cm_measured_s(const CostModel *cm, const OpDesc *d);
/* Holdout: removes every measurement that shares a shape with one of ops[0..nops) (its key,
 * or its key at another batch) and prices by the fitted paths only from then on. Call
 * before cm_fit. Returns how many measurements were removed. */
int cm_holdout(CostModel *cm, const OpDesc *ops, int nops);

/* What a fit is: per group, the kind, phase and variant, its points, whether it is fitted
 * (else priced by the roofline ratio), the chosen bandwidth and the leave-one-out error of
 * log time (68th percentile of |error|). Fills out[0..max) and returns the number of
 * groups. */
typedef struct {
    OpKind kind;
    OpPhase phase;
    char variant[16]; /* activation, pooling kind, batch-norm mode, ... ("" if none) */
    int points;
    bool fitted;
    double bandwidth, loo_rms;
} CmFitInfo;
int cm_fit_summary(const CostModel *cm, CmFitInfo *out, int max);

/* The calibration's limits: the FMA peak (FLOP/s; the best GEMM rate if higher) and the
 * read bandwidth of the largest working set measured (DRAM, bytes/s). */
void cm_limits(const CostModel *cm, double *peak_flops_s, double *dram_bytes_s);

/* The sums over tensor-parallel ranks inside a step (OP_ALLREDUCE) are collectives, priced
 * from the machine's communication model once it is set here (a group of one is a copy);
 * without it they are refused, saying which calibration prices them. NULL unsets it. */
struct CommModel;
void cm_set_collectives(CostModel *cm, const struct CommModel *comm);

/* Prices one descriptor. Returns 0, or -1 if nothing in the calibration can price this
 * kind of op (err says which kind and what to calibrate). */
int cm_price(const CostModel *cm, const OpDesc *d, OpPrice *out, char *err, size_t errlen);
/* The price of an op with the fraction `cached` (0..1) of its data in the last-level cache
 * when it starts: between the calibration's cold time (cached = 0; what cm_price gives)
 * and its warm time (1), linearly. Kinds timed warm only (compute-bound, pooling) and
 * calibrations before the cache model price the same either way. */
int cm_price_cached(const CostModel *cm, const OpDesc *d, double cached, OpPrice *out, char *err,
                    size_t errlen);
/* The same with the share `remote` (0..1 - cached) of its data in the other core's cache
 * (the apart placement, pred_cache_fractions): each such byte at cm_remote_ratio times a
 * cold one. Only kinds timed cold (memory-bound) move. */
int cm_price_placed(const CostModel *cm, const OpDesc *d, double cached, double remote, OpPrice *out, char *err,
                    size_t errlen);
/* The last-level cache (bytes) the calibration flushed for its cold times; 0 if it did not
 * record one. cm_set_llc: for tests and in-memory models, and a rank's share of the cache
 * where the node's ranks share it (session_calibration_dp). */
double cm_llc_bytes(const CostModel *cm);
void cm_set_llc(CostModel *cm, double llc_bytes);
/* The share (0..1) of the calibration's cold-to-warm speed-up that an op whose buffers
 * total `own` bytes keeps for a byte last touched `distance` bytes of traffic ago (own
 * included, so distance >= own). The calibration's warm time is the op run again on its
 * own data (distance = own); its cold time, from DRAM. From the read-bandwidth curve's
 * time per byte a(): (a(DRAM) - a(distance)) / (a(DRAM) - a(own)). So an op small enough
 * for L2 whose data comes back from L3 keeps only L3's part of its warm speed-up, not
 * all of it. Without a curve: 1 within the flushed cache, else 0. Never above 0 beyond it. */
double cm_warmth(const CostModel *cm, double own, double distance);
/* The share (0..1) of that warmth a byte at reuse distance `distance` still has after
 * wait_s seconds: the calibration's retention samples (data written, read back after a
 * wait with the cores computing in registers), interpolated between their working sets
 * and waits. 1 on a machine where nothing else evicts this process's data, and for
 * calibrations without the samples. */
double cm_retention(const CostModel *cm, double distance, double wait_s);
/* The working sets (bytes over all the calibration's threads) the retention was measured
 * at, smallest first: fills at most ws[0..max) and returns how many there are (0: none). */
int cm_retention_sets(const CostModel *cm, double *ws, int max);
/* The cores' placement a model prices at. A VM's host may run its vCPUs on cores that
 * share a cache (near) or not (apart), and move them every few minutes; a calibration
 * prices every kernel near (microbench/calibrate.c) and also stores the median of each
 * kernel's passes timed apart. cm_set_apart(cm, true) prices every op apart from then on:
 * its near price times its kernel's apart-over-near ratio where the kernel was timed both
 * ways, else the median ratio of its kind's kernels (cm_apart_ratio), else of every
 * kernel's. cm_has_apart: whether the calibration timed any kernel both ways (without,
 * apart prices equal near ones). A kernel repeated alone passes less data between the
 * cores than a step whose ops split their data differently from their producers, so a
 * step apart can run slower than its apart price (docs/accuracy.md). */
void cm_set_apart(CostModel *cm, bool apart);
bool cm_is_apart(const CostModel *cm);
bool cm_has_apart(const CostModel *cm);
/* A byte read from the other core's cache with the cores apart, over one read from DRAM:
 * the calibration's cross-core reads (each thread reading what its neighbour wrote) timed
 * apart, per byte, over the read curve's largest working set; 1 where not measured. */
double cm_remote_ratio(const CostModel *cm);
/* What a write costs, per byte, over the op's own write, where the other core's cache holds
 * the line (an op of the other split read or wrote it last and it is still cached): the
 * calibration's shared-write curve (membw shared) at the current placement (cm_set_apart;
 * the near one where nothing was timed apart), less the read curve's time per byte, at the
 * working set `bytes` over the calibration's threads. 0 without the curve (one thread, or
 * a calibration before it). */
double cm_shared_write_s(const CostModel *cm, double bytes);
/* The apart-over-near ratio of a kind's kernels (an OpKind), the median over those timed
 * both ways; 0 where fewer than 3 were (its ops then take every kernel's: kind -1, 0 where
 * none was). */
double cm_apart_ratio(const CostModel *cm, int kind);
const char *price_source_name(PriceSource s);

/* The cache model: for each op of the plan, how warm (0..1) its data is when it starts:
 * each byte weighted by cm_warmth at the traffic since its last use (predict.c says how
 * that is walked) and, given the ops' times op_s (else NULL), by cm_retention at the time
 * since then; the price goes from the cold time (0) to the warm one (1). cached has
 * p->nops entries. */
void pred_cache_fractions(const Plan *p, const CostModel *cm, const double *op_s, double *cached, double *remote);
/* Both: the ops priced by traffic alone give the times between uses, then the fractions
 * with retention. pred_iteration and the calibrated what-if device price with it. Returns
 * 0, or -1 with err set (an op nothing prices, out of memory). */
int pred_cache_model(const Plan *p, const CostModel *cm, double *cached, double *remote, double *shared, char *err,
                     size_t errlen);
/* For each op of the plan, the bytes it writes over lines the other core's cache holds
 * (predict.c says which), into shared[0..p->nops); op_s as for pred_cache_fractions. Each
 * costs cm_shared_write_s on top of the op's price. pred_cache_model fills it where given
 * shared (not NULL). */
void pred_shared_writes(const Plan *p, const CostModel *cm, const double *op_s, double *shared);
/* The seconds op i of the plan takes on top of its price for shared_bytes such bytes:
 * cm_shared_write_s at the bytes the op writes. */
double pred_shared_write_extra_s(const Plan *p, const CostModel *cm, int i, double shared_bytes);

/* Prediction of one training iteration of a plan. ops (if not NULL) receives one row per
 * plan entry (p->nops rows). Fills everything in *out except id, calibration_id,
 * created_at and threads. */
int pred_iteration(const Plan *p, const CostModel *cm, PredictionRow *out, OpTimeRow *ops, char *err,
                   size_t errlen);

/* The iteration time of a plan with the threads' cores apart (cm_set_apart, for the call
 * only); 0 where it is not priced: fewer than 2 threads, or a calibration that timed no
 * kernel both ways (cm_has_apart). */
double pred_iteration_apart_s(const Plan *p, CostModel *cm, int threads);

/* The row describing plan op i (layer, key, kind, phase, FLOPs) with time_s; the same
 * rows describe predictions and measured traces, so the two can be compared op by op. */
void pred_op_row(const Plan *p, int i, double time_s, OpTimeRow *r);

/* Memory of one process running the plan, by category (bytes). */
void pred_memory(const Plan *p, PredictionRow *out);

/* The largest batch (up to 2^20) whose plan fits in capacity_bytes (its arenas as a
 * training process of m allocates them, in whole pages), 0 if not even batch 1 fits, -1 with err set
 * if m does not expand. Plans are built at the current ops thread count. */
long pred_largest_batch(const ModelSpec *m, double capacity_bytes, char *err, size_t errlen);

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

/* Where a step's time goes, as seeds 001 and 004 ask of every run: its FLOP rate against
 * the measured peak, and its ops by what bounds them on their roofline (an op is
 * compute-bound where its FLOPs at the peak take longer than its compulsory bytes at the
 * DRAM bandwidth, else memory-bound), by op kind and by phase. ops: a prediction's or a
 * traced run's rows of plan p, in plan order. */
enum { BREAKDOWN_MAX_KINDS = 40 };
typedef struct {
    char kind[24], phase[16];
    int ops;
    double time_s;
} KindPhaseTime;
typedef struct {
    double ops_s;           /* the ops' times summed */
    double step_s;          /* the step (ops_s, or an iteration given with its communication) */
    double flops;           /* the step's */
    double peak_flops_s, dram_bytes_s; /* the limits classed against */
    double compute_bound_s, memory_bound_s; /* ops by their roofline bound */
    int compute_bound_ops, memory_bound_ops;
    double comm_s;          /* the gradients' allreduce (data-parallel), as given */
    const char *bottleneck; /* "compute-bound ops", "memory-bound ops" or "communication": the largest */
    KindPhaseTime kinds[BREAKDOWN_MAX_KINDS]; /* largest time first */
    int nkinds;
} StepBreakdown;
/* step_s: the iteration the shares are of (0: the ops' sum); comm_s: its allreduce (0:
 * none). peak and bandwidth: cm_limits's, or a device's sheet. */
void pred_breakdown(const Plan *p, const OpTimeRow *ops, double step_s, double comm_s, double peak_flops_s,
                    double dram_bytes_s, StepBreakdown *out);

#endif
