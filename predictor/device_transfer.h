/* predictor/device_transfer.h — pricing an op on a device from other devices' evidence of
 * it, carried over by what their spec sheets say differs.
 *
 * The kernel forms (gpu_model.h) are written in each device's own units: its peak at the
 * precision, its bandwidth, its SMs and L2. A group's fitted parameters (an efficiency
 * against the peak, a fraction of the bandwidth, a launch time) therefore mean the same on
 * every GPU, and a device without evidence of the group takes the other devices' parameters,
 * averaged (in their search coordinates) with weights that fall with the distance between
 * the sheets: w = exp(-|f - f_d|^2 / 2h^2) over the features below, each in units of its
 * spread over the devices. How far the similarity reaches (h, from a narrow neighbourhood
 * to all devices alike) is learned per group by leaving each device out in turn: the h
 * whose transferred parameters predict the left-out devices' own measurements best (for a
 * device whose architecture no pool device shares, leaving out each device with its
 * architecture's siblings, as the target is, and counting most the left-out devices near
 * the target). That
 * error (the mean over the left-out devices of their mean |relative error|) is the
 * transfer's band.
 * Sheet features: log FP32 peak (GEMM-usable lanes), log memory bandwidth, log SMs, log L2,
 * HBM or not, the year, log board power (a 70 W card throttles where a 300 W one does not).
 * Two parameters carry over by what they depend on: a tile's pipeline fill, a latency
 * counted in reduction steps, is scaled by the target's FP32 rate per SM over the source's;
 * the power limit's parameters are averaged over log board power alone, with a reach of
 * their own learned with h.
 */
#ifndef DLPERF_DEVICE_TRANSFER_H
#define DLPERF_DEVICE_TRANSFER_H

#include "predictor/device_evidence.h"
#include "predictor/system.h"

enum { TF_POWER = 6, TF_COUNT = 7 }; /* TF_POWER: log board power, the last feature */

/* The sheet features of d (those it lacks are NAN: they do not count in distances). */
void transfer_features(const DeviceSpec *d, double feat[TF_COUNT]);

typedef struct TransferPool TransferPool;

TransferPool *tp_new(void);
/* Adds a device's evidence (fitted; owned by the pool from now on) with its features and
 * architecture (the sheet's "arch"; NULL or "" if unknown). */
int tp_add(TransferPool *p, DeviceEvidence *ev, const double feat[TF_COUNT], const char *arch);
void tp_free(TransferPool *p);
int tp_count(const TransferPool *p);
DeviceEvidence *tp_device(const TransferPool *p, int i);
/* The pool's evidence of the device named `name`, NULL if none. */
DeviceEvidence *tp_find(const TransferPool *p, const char *name);

typedef struct {
    int sources;     /* devices whose evidence of the group was averaged */
    double h;        /* the learned reach (feature spreads); INFINITY: all devices alike */
    double loo_err;  /* the learned h's leave-one-device-out error; 0 if fewer than 2 devices */
    char nearest[48];/* the source with the largest weight */
} TransferInfo;

/* The group's parameters for a device with features tf and architecture arch, from every
 * pool device that has a fit of it except `exclude` (NULL: none; the device priced as if it
 * had no evidence). The reach is learned without `exclude` too, leaving out whole
 * architectures when arch has no device in the pool. 0 and *out, *info; 1 if no device has
 * the group. */
int tp_params(TransferPool *p, const char *group, const double tf[TF_COUNT], const char *arch, const char *exclude,
              GpuGroupFit *out, TransferInfo *info);

#endif
