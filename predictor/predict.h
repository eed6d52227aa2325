/* predictor/predict.h — pricing op descriptors from a calibration, and the iteration-time
 * and memory prediction of a training-step plan.
 *
 * Each op is priced by the first path that applies:
 *   exact  — the calibration measured this very key: its median time;
 *   scaled — it measured the same op at another batch size (the batch-like dimension of a
 *            GEMM, convolution, pooling, bias, loss or LSTM-cell op differs, nothing else):
 *            the nearest such measurement, scaled by the FLOP (or byte) ratio;
 *   fitted — a cost model fitted with GSL weighted least squares over every measurement
 *            of the same kind and phase: t = c0 + c1*FLOPs + c2*bytes (compute-bound kinds)
 *            or t = c0 + c2*bytes (memory-bound kinds), coefficients >= 0, relative error
 *            minimised; with too few points, the roofline max(FLOPs/peak, bytes/bandwidth)
 *            of the calibration's best GEMM rate and best STREAM bandwidth.
 * The uncertainty band of an op is its measurement's 95% CI (exact, scaled) or the
 * fit's RMS relative residual (fitted); bands are summed as if fully correlated.
 */
#ifndef DLPERF_PREDICT_H
#define DLPERF_PREDICT_H

#include "db/db.h"
#include "models/plan.h"
#include "ops/ops.h"

typedef enum { PRICE_EXACT, PRICE_SCALED, PRICE_FITTED } PriceSource;

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

/* Prices one descriptor. Returns 0, or -1 if nothing in the calibration can price this
 * kind of op (err says which kind and what to calibrate). */
int cm_price(const CostModel *cm, const OpDesc *d, OpPrice *out, char *err, size_t errlen);
const char *price_source_name(PriceSource s);

/* Prediction of one training iteration of a plan. ops (if not NULL) receives one row per
 * plan entry (p->nops rows). Fills everything in *out except id, calibration_id,
 * created_at and threads. */
int pred_iteration(const Plan *p, const CostModel *cm, PredictionRow *out, OpTimeRow *ops, char *err,
                   size_t errlen);

/* The row describing plan op i (layer, key, kind, phase, FLOPs) with time_s; the same
 * rows describe predictions and measured traces, so the two can be compared op by op. */
void pred_op_row(const Plan *p, int i, double time_s, OpTimeRow *r);

/* Memory of one process running the plan, by category (bytes). */
void pred_memory(const Plan *p, PredictionRow *out);

#endif
