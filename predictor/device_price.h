/* predictor/device_price.h — the price of an op on a device that is not this machine, from
 * the best evidence there is, in this order:
 *   exact, fitted  the device's own measurements (device_evidence.h);
 *   transfer       other devices' evidence of the op's group, carried over by their sheets
 *                  (device_transfer.h);
 *   similar        the device's (or, transferred, other devices') evidence of a group of
 *                  the same kernel form — an activation priced like another activation —
 *                  for an op nothing measured; its band doubled;
 *   cpu-efficiency this machine's efficiency at the op carried to the device's roofline
 *                  (the CPU's calibration, whatif.h): only where no GPU evidence of any
 *                  group of the form exists;
 *   roofline       the device's roofline alone, nothing else known; band up to 4x.
 * Each price names its source and band. Evidence comes from the database (imported and
 * measured calibrations of devices, their fits cached there) and from the compact profiles
 * of built-in sheets (a fresh clone's evidence).
 */
#ifndef DLPERF_DEVICE_PRICE_H
#define DLPERF_DEVICE_PRICE_H

#include "db/db.h"
#include "ops/ops.h"
#include "predictor/device_transfer.h"
#include "predictor/gpu_model.h"
#include "predictor/predict.h"
#include "predictor/system.h"

typedef enum { DP_EXACT, DP_FITTED, DP_TRANSFER, DP_SIMILAR, DP_CPU, DP_ROOFLINE, DP_SOURCE_COUNT } DevPriceSource;
const char *dp_source_name(DevPriceSource s); /* "exact", "fitted", "transfer", "similar", "cpu-efficiency", "roofline" */

typedef struct {
    double time_s, lo_s, hi_s;
    DevPriceSource source;
    char group[GPU_GROUP_MAX];
    char from[GPU_GROUP_MAX]; /* transfer: the nearest source device; similar: the group used */
} DevPrice;

/* The band's upper end over a price from this CPU's efficiency, at a precision. */
double dp_cpu_band_factor(Precision prec);

/* The forms' view of a device's sheet at a precision (gpu_model.h): its peak (at fp32 the
 * lanes a GEMM can use), bandwidth, SMs, L2. */
void gpu_sheet_of(const DeviceSpec *d, Precision prec, GpuSheet *out);

typedef struct DevicePricer DevicePricer;

/* DP_NO_OWN: price as if the device had no evidence of its own; DP_NO_PROFILES: the
 * database's evidence only, not the built-in profiles (device_profile.h) */
enum { DP_NO_OWN = 1, DP_NO_PROFILES = 2 };

/* Prices ops on device dev at precision prec. cpu (may be NULL) is this machine's cost model
 * for the cpu-efficiency path. progress (may be NULL) is told of each device fitted (the
 * first prediction after an import fits its evidence; the fits are stored). NULL with err
 * on failure. */
DevicePricer *dp_open(Db *db, const DeviceSpec *dev, Precision prec, const CostModel *cpu, unsigned flags,
                      void (*progress)(const char *device, int points, void *ctx), void *ctx, char *err,
                      size_t errlen);
void dp_free(DevicePricer *p);
/* One device's evidence at the precision from the database alone, fitted as dp_open fits it
 * (the fits cached there). NULL with err empty: none; NULL with err: failure. */
DeviceEvidence *dp_device_evidence(Db *db, const DeviceSpec *dev, Precision prec,
                                   void (*progress)(const char *device, int points, void *ctx), void *ctx, char *err,
                                   size_t errlen);
/* The same over a pool built by the caller (owned from now on; NULL: an empty one): for
 * tests and in-memory use. */
DevicePricer *dp_new(const DeviceSpec *dev, Precision prec, TransferPool *pool, const CostModel *cpu, unsigned flags);
/* At a precision other than fp32, the device's fp32 pricer (owned from now on) that prices
 * its memory-bound kernels by their bytes and the framework's fp32 work; dp_open opens it. */
void dp_set_wide(DevicePricer *p, DevicePricer *wide);
/* Whether the device or others have evidence at its precision (else only the CPU's
 * efficiency or the roofline price it). */
bool dp_has_evidence(const DevicePricer *p);
/* The devices with evidence at the precision (the pool), and the target's own points. */
int dp_pool_devices(const DevicePricer *p);
int dp_own_points(const DevicePricer *p);
/* The device's own evidence (NULL: none, or DP_NO_OWN). */
const DeviceEvidence *dp_own_evidence(const DevicePricer *p);
/* The groups any pool device has fitted (groups[0..n), caller frees), and what the device
 * takes for one of them: its own fit (own true) or the other devices' carried over (info
 * says from where). 0, or 1 where neither exists. */
int dp_pool_groups(const DevicePricer *p, char (**groups)[GPU_GROUP_MAX], int *n);
int dp_group_params(DevicePricer *p, const char *group, GpuGroupFit *out, bool *own, TransferInfo *info);
/* Prices d. 0, or -1 with err (an op no form prices and no CPU calibration to fall back on). */
int dp_price(DevicePricer *p, const OpDesc *d, DevPrice *out, char *err, size_t errlen);
/* The same for a framework call's time (framework true: a framework's call with its host
 * overhead, priced from evidence of that scope, the "@framework" groups; where none exists,
 * as its kernels). */
int dp_price_scope(DevicePricer *p, const OpDesc *d, bool framework, DevPrice *out, char *err, size_t errlen);
/* An element-wise pass moving `bytes` (a framework's optimizer pass, cast or layout
 * conversion: framework.h), priced as the device's fp32 element-wise add of as many bytes
 * from GPU evidence, else at the device's bandwidth (band up to 4x). 0, or -1 with err. */
int dp_price_stream(DevicePricer *p, double bytes, DevPrice *out, char *err, size_t errlen);

#endif
