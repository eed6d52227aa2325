/* predictor/system_pricer.h — a spec-sheet system made ready to price models on: its
 * device's ops in the order of evidence (device_price.h; this machine's cost model where
 * the device is this machine), its links as communication parameters, the allreduce
 * algorithm and the host's share (whatif.h). What `predict --system`, `sweep` and `fom`
 * share, so that each prices a model the same way.
 */
#ifndef DLPERF_SYSTEM_PRICER_H
#define DLPERF_SYSTEM_PRICER_H

#include "db/db.h"
#include "models/plan.h"
#include "predictor/whatif.h"

typedef struct {
    Precision prec;
    PlanMode mode;       /* the step priced (PLAN_TRAIN: forward, backward, update) */
    unsigned dp_flags;   /* DP_NO_OWN, DP_NO_PROFILES (device_price.h) */
    bool no_host;        /* a compiled or graph-captured step: no host floor per op */
    bool algo_given;     /* else the system's default algorithm */
    AllreduceAlgo algo;
    void (*progress)(const char *device, int points, void *ctx); /* a device's evidence fitted */
    void *ctx;
} SystemPricerOpts;

typedef struct {
    SystemSpec sys;      /* the host figures zeroed with no_host */
    Precision prec;
    PlanMode mode;
    const CostModel *cm; /* this machine's calibration (borrowed; NULL: none) */
    DevicePricer *dp;    /* the device's pricer where it is not this machine */
    Precision evidence_prec; /* the precision of the GPU evidence dp prices from: prec, or
                              * fp16 for bf16 where no GPU has bf16 evidence and the device's
                              * two 16-bit peaks are one (the same tensor cores, the same bytes) */
    Framework fw;        /* what drives that device: PyTorch, eager unless no_host */
    CommParams comm;
    AllreduceAlgo algo;
} SystemPricer;

enum { SYSP_USAGE = -1, SYSP_FAIL = -2 };

/* Makes sys ready to price at o->prec. cm is this machine's cost model: required where the
 * device is this machine, else what prices the ops no GPU evidence does (may be NULL).
 * 0; SYSP_USAGE with err where the device has no peak at the precision; SYSP_FAIL where
 * nothing can price the device (no evidence at the precision and no cm) or the database
 * failed. */
int sysp_open(Db *db, const SystemSpec *sys, const CostModel *cm, const SystemPricerOpts *o, SystemPricer *out,
              char *err, size_t errlen);
void sysp_close(SystemPricer *sp);

/* One device's step of model m at batch in mode (the plan of output head `head`: 0 for a model
 * of one output), priced; grad_bytes (may be NULL) the gradients an allreduce sums (fp32
 * bytes). 0; SYSP_USAGE with err for a batch or head the model refuses; SYSP_FAIL for an op
 * nothing prices. */
int sysp_step(const SystemPricer *sp, const ModelSpec *m, int batch, PlanMode mode, int head, DeviceStep *out,
              double *grad_bytes, char *err, size_t errlen);

#endif
