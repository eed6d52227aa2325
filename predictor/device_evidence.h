/* predictor/device_evidence.h — pricing an op on a device from that device's own
 * measurements (its calibrations: imported or measured with tools/gpu_calibrate.py), or
 * from the compact profile its spec sheet carries.
 *
 * The measurements are grouped as gpu_model.h groups them (the ops that share a kernel
 * form's parameters), each group's parameters fitted to its points. An op is priced:
 *   exact   — its key (accumulate flags cleared: a GPU kernel's time does not depend on
 *             them) was measured: the median of its measurements;
 *   fitted  — the group's form at the fitted parameters, times the geometric mean of the
 *             measured-over-fitted ratios of the group's nearest points (a Gaussian kernel
 *             over the log of the shape's dimensions, weighed against one pseudo-point at
 *             ratio 1: near measured shapes the correction is theirs, far from them the form
 *             alone prices).
 * The band of a fitted price is the 68th percentile of the group's relative fit errors
 * either side; of an exact one, its measurement's spread.
 */
#ifndef DLPERF_DEVICE_EVIDENCE_H
#define DLPERF_DEVICE_EVIDENCE_H

#include <stdbool.h>

#include "db/db.h"
#include "ops/ops.h"
#include "predictor/gpu_model.h"

typedef struct {
    char group[GPU_GROUP_MAX];
    GpuForm form;
    double p[GPU_PARAMS_MAX];
    int points;
    double fit_err; /* mean |relative error| over its points */
    double band;    /* 68th percentile of |relative error| */
} GpuGroupFit;

typedef struct DeviceEvidence DeviceEvidence;

typedef enum { EV_EXACT, EV_FITTED } EvSource;

/* An empty evidence set of the device named `device` on sheet h. */
DeviceEvidence *dev_ev_new(const char *device, const GpuSheet *h);
void dev_ev_free(DeviceEvidence *e);
const char *dev_ev_device(const DeviceEvidence *e);
const GpuSheet *dev_ev_sheet(const DeviceEvidence *e);
/* Adds one measurement (seconds; lo/hi its spread, 0 if unknown). framework: a time that
 * includes a framework's host overhead (scope "framework"). 0, or -1 (out of memory, or
 * an op no form describes: nothing added). */
int dev_ev_add(DeviceEvidence *e, const OpDesc *d, double time_s, double lo_s, double hi_s, bool framework);
/* Adds a point by its shape alone (s->group names its group), with no op key: a profile's
 * sampled shape timed by its fit (device_profile.h). 0, or -1. */
int dev_ev_add_shape(DeviceEvidence *e, const GpuShape *s, double time_s);
/* Adds every measurement of the device's complete calibrations at `precision`; returns
 * how many, or -1 with err. */
int dev_ev_load(DeviceEvidence *e, Db *db, const char *precision, char *err, size_t errlen);
/* Fits every group with points: the stream-form groups first, then the row reductions with
 * their bandwidth share set to the device's streaming one (dev_ev_stream_eff). */
void dev_ev_fit(DeviceEvidence *e);
/* The median bandwidth share (e_inf) of the device's element-wise groups, 0 if it has none. */
double dev_ev_stream_eff(const DeviceEvidence *e);
/* Sets a group's parameters directly (from a stored fit or a sheet's profile) instead of
 * fitting them. 0, or -1 if out of memory. */
int dev_ev_set_fit(DeviceEvidence *e, const GpuGroupFit *f);
int dev_ev_points(const DeviceEvidence *e);
/* The fit of a group, NULL if the device has none. */
const GpuGroupFit *dev_ev_group(const DeviceEvidence *e, const char *group);
/* All its fitted groups: *out points into e (valid until the next add/fit). */
int dev_ev_groups(const DeviceEvidence *e, const GpuGroupFit **out);
/* Copies of the group's measured points, shapes and times (the caller frees both): their
 * count, 0 if none, -1 out of memory. */
int dev_ev_group_points(const DeviceEvidence *e, const char *group, GpuShape **s, double **t);
/* Prices d: its kernels' time, or with framework a framework call's (the "@framework"
 * groups, from evidence of that scope). 0 and *t, *lo, *hi, *src; 1 if the device has no fit
 * of d's group; -1 for an op no form describes. */
int dev_ev_price(const DeviceEvidence *e, const OpDesc *d, bool framework, double *t, double *lo, double *hi,
                 EvSource *src);
/* The key a device's measurement of d is stored under: d's with the accumulate flags, the
 * workspace layout and a BMM's strides cleared (they do not change a GPU kernel's time),
 * and a causal softmax keyed as the whole row an eager framework softmaxes. */
void dev_ev_key(const OpDesc *d, char key[OP_KEY_MAX]);
/* dev_ev_price for d's values at another width (byte_scale: bytes per value over fp32's 4):
 * a memory-bound kernel at bf16 priced from its fp32 evidence by the bytes it moves. An
 * exact key counts only at the evidence's own width. */
int dev_ev_price_at(const DeviceEvidence *e, const OpDesc *d, double byte_scale, bool framework, double *t, double *lo,
                    double *hi, EvSource *src);

#endif
