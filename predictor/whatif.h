/* predictor/whatif.h — predictions for systems that exist only as spec sheets, and their
 * data-parallel scaling over nodes.
 *
 * How a device that is not this machine is priced: every op by device_price.h, from the
 * best evidence there is (the device's own measurements, other devices' carried over by
 * their sheets, a similar op's, and only last this machine's efficiency carried to the
 * device's roofline), and no less than the host's time for the op in the framework that
 * drives the device (an eager framework issues each op from Python through autograd;
 * where that takes longer than the kernel, the device waits):
 *     t_op     = max(t_device, host_op)      host_op: per conv/batch-norm op, or any other op
 *     step     = sum of t_op + host_step     (loss, zero_grad, the optimizer's call)
 * This machine's efficiency, where it is what prices an op: its time here against this
 * machine's roofline, e = max(FLOPs / peak, bytes / DRAM bandwidth) / t_here (at most 1),
 * carried to the device's roofline at the precision plus its launch overhead:
 *     t_device = max(FLOPs / peak_device[prec], bytes * bytes_per_value / 4 / bw_device) / e + launch
 * The host figures come from the device sheet, defaulting for a GPU to PyTorch eager as
 * measured (system.c); `--no-host` zeroes them (a compiled or graph-captured step).
 * The band runs from the device's roofline (every op at efficiency 1, with the host floor)
 * to the estimate times whatif_band_factor: a device's efficiency curve differs from this
 * CPU's (GPUs need large ops to fill their units; tensor cores reach their peak only on
 * suitable shapes; memory-bound ops dominate a tensor-core step), which this transfer
 * cannot know. Checked on a real H200 (docs/accuracy.md "Spec sheets against a real GPU"):
 * median error 28% fp32, 25% tf32, 39% bf16, mostly too fast. A calibrated device ("this
 * machine") is priced from its calibration with its own band.
 *
 * Data parallel over nodes: one rank per device, the gradients (at the precision's width)
 * summed by the chosen allreduce algorithm over the system's links (intra: per device;
 * inter: the node's injection bandwidth, nics_per_node x port); gamma (reduction) = 3 bytes
 * moved per byte reduced at the device's memory bandwidth.
 */
#ifndef DLPERF_WHATIF_H
#define DLPERF_WHATIF_H

#include "models/plan.h"
#include "predictor/comm_model.h"
#include "predictor/device_price.h"
#include "predictor/framework.h"
#include "predictor/predict.h"
#include "predictor/system.h"

typedef struct {
    double fwd_s, bwd_s, update_s; /* one device, one iteration at the plan's batch */
    double compute_s, lo_s, hi_s;  /* their sum and its band */
    double device_s;               /* the device's own busy time: the ops' device times without
                                      the host's floors (= compute_s on a calibrated device) */
    double mem_bytes;              /* the plan's memory per device */
    bool fits;                     /* mem_bytes <= the device's capacity */
    double roofline_s;             /* the device's roofline of the plan (every op at efficiency 1) */
    int priced_by[DP_SOURCE_COUNT];/* a device that is not this machine: its ops by what priced them */
    int host_bound;                /* ops whose host time exceeds their device time */
    double fw_s[FW_EFFECT_COUNT];  /* of the step, the framework's work (framework.h): its
                                      optimizer's passes, the autocast casts, the layout
                                      conversions */
    double fused_update_s;         /* the update ops as one fused pass each, for comparison */
} DeviceStep;

/* 0 if device d has a peak at prec (this machine: fp32 only), else -1 with err naming the
 * precisions it has. */
int whatif_check_precision(const DeviceSpec *d, Precision prec, char *err, size_t errlen);

/* The host's time per op of this kind on device d (0 for a calibrated device). */
double whatif_host_op_s(const DeviceSpec *d, OpKind kind);
/* The band's upper end over the estimate at this precision (uncalibrated devices). */
double whatif_band_factor(Precision prec);

/* Prices plan p on device d at precision prec: this machine (d->calibrated) from its cost
 * model cm, any other device from dp (device_price.h, opened for d at prec). Returns 0, or
 * -1 with err (an op nothing can price, a precision the device lacks). */
int whatif_device_step(const Plan *p, const CostModel *cm, DevicePricer *dp, const DeviceSpec *d, Precision prec,
                       const Framework *fw, DeviceStep *out, char *err, size_t errlen);
/* The same, with each op's device time in op_s[0..p->nops) (for per-layer splits). fw (NULL:
 * none, the kernels alone) is the framework that drives a device that is not this machine:
 * its optimizer's passes replace the update ops' fused price, its layout conversions are
 * added to the convolutions they surround, its autocast casts to the forward and backward. */
int whatif_device_ops(const Plan *p, const CostModel *cm, DevicePricer *dp, const DeviceSpec *d, Precision prec,
                      const Framework *fw, DeviceStep *out, double *op_s, char *err, size_t errlen);

/* The system's communication as CommParams (this machine's fitted links for the intra
 * part of a calibrated device when comm is given). */
CommParams whatif_comm_params(const SystemSpec *s, const CostModel *cm, Precision prec);
/* The default algorithm for a system: hierarchical with several devices per node, else ring. */
AllreduceAlgo whatif_default_algo(const SystemSpec *s);

typedef struct {
    int nodes, ranks, batch_per_rank, global_batch;
    double compute_s, allreduce_s, iter_s;
    double samples_per_s, epoch_s;
    double speedup, efficiency, comm_fraction; /* against one device */
    bool fits;
} ScalePoint;

/* One configuration: step = the per-device step at batch_per_rank, grad_bytes the
 * gradients (fp32 bytes; scaled by the precision), one device as the reference (t1 for
 * the speedup at the same per-device work: weak scaling; strong: t1 at the global batch).
 * epoch_samples 0: no epoch time. */
void whatif_scale_point(const SystemSpec *s, const CommParams *c, AllreduceAlgo a, Precision prec,
                        const DeviceStep *step, double grad_bytes, int nodes, int batch_per_rank, bool overlap,
                        double t1_per_sample, double epoch_samples, ScalePoint *out);

#endif
