/* predictor/gpu_model.h — what decides an op's time on a GPU, as a few parameters per group
 * of ops: the kernel model that a device's own evidence fits (device_evidence.h) and that
 * carries evidence from one device to another (device_transfer.h).
 *
 * The forms, each in units of the device's spec sheet so that a parameter means the same
 * on every GPU (an efficiency against its peak or bandwidth, a latency in seconds):
 *   tiles   GEMM-like ops (GEMM, batched GEMM, convolutions as implicit GEMMs): the output
 *           is cut into tiles (cuBLAS's 128x128 down to 32x32), the tiles run in waves over
 *           the SMs, a thin output splits the reduction over several tiles (split-K) and
 *           adds a pass over the partial sums; the fastest tiling is the library's choice.
 *           t = t0 + max(waves * tile_time, bytes / (BW * e_bw)); tile_time is the tile's
 *           FLOPs (its reduction length plus a fill k0) at the SM's share of the peak times
 *           u * (tile reuse)^gamma; convolutions a cuDNN Winograd kernel may run (3x3, stride
 *           1) divide their compute by w; a power-limited device sustains only s of that rate,
 *           approached over tau seconds of compute (a long GEMM on a 70 W card runs slower
 *           per FLOP than a short one).
 *   stream  element-wise and other memory-bound ops: t = t0 + max(bytes / (BW * e(bytes)),
 *           FLOPs / (peak * u)), e rising to e_inf as the op fills the device (half at b_half
 *           bytes) and l2 times higher while the op's bytes fit in the L2 cache (timed in a
 *           loop, they stay there).
 *   rows    row-wise reductions (layer norm, softmax, batch norm, pooling, LRN, a loss): the
 *           stream form, its bandwidth times h / (h + h0) for rows of h values (a short row
 *           leaves a thread block's lanes idle).
 * The peak is the sheet's at the precision; at fp32 on GPUs whose FP32 lanes are half
 * shared with INT32 (Ampere GA10x, Ada), the dedicated lanes' rate: a GEMM's address and
 * loop arithmetic occupies the shared ones (an assumption, stated in docs/gpu-pricing.md).
 */
#ifndef DLPERF_GPU_MODEL_H
#define DLPERF_GPU_MODEL_H

#include <stdbool.h>

#include "ops/ops.h"

typedef enum { GF_TILES, GF_STREAM, GF_ROWS, GF_COUNT } GpuForm;
const char *gpu_form_name(GpuForm f); /* "tiles", "stream", "rows" */
int gpu_form_parse(const char *s, GpuForm *out);

enum { GPU_PARAMS_MAX = 8, GPU_GROUP_MAX = 48 };
/* The forms' version: fits stored under another are made again (device_price.c). */
#define GPU_MODEL_VERSION "gm4"

/* What the forms read of a device's sheet, at one precision. */
typedef struct {
    double peak_flops;  /* FLOP/s at the precision (GEMM-usable lanes, see above) */
    double bw_Bps;      /* memory bandwidth */
    double l2_bytes;    /* 0: unknown (no L2 term) */
    int sms;            /* streaming multiprocessors; 0: unknown (the tiles form needs it) */
    double byte_scale;  /* bytes per value over fp32's 4 (fp16/bf16: 0.5) */
    bool tensor;        /* tensor-core precision: larger tiles */
} GpuSheet;

/* An op as the forms see it. */
typedef struct {
    GpuForm form;
    char group[GPU_GROUP_MAX]; /* the ops that share parameters: "gemm", "bmm", "conv2d fwd",
                                  "act fwd relu", "layernorm fwd", ... */
    double b, m, n, k;         /* tiles: batch, output rows, output columns, reduction */
    bool winograd;             /* tiles: a 3x3 stride-1 convolution (fwd or bwd_data) */
    double flops, bytes;       /* op_cost, bytes at the precision */
    double rows, row_len;      /* rows form: rows and their length */
} GpuShape;

/* Describes d for the forms (bytes at byte_scale). False for an op no form describes
 * (microbenchmark-only kinds). */
bool gpu_shape(const OpDesc *d, double byte_scale, GpuShape *out);

/* The form's parameters: count, names, bounds and a starting point. */
int gpu_form_nparams(GpuForm f);
const char *gpu_param_name(GpuForm f, int i);
void gpu_param_bounds(GpuForm f, int i, double *lo, double *hi, double *start);

/* A parameter mapped to and from an unbounded search coordinate (logit of its place
 * between its bounds, in log space for those that span decades): where parameters are
 * searched, and where devices' parameters are averaged (device_transfer.h). */
double gpu_param_to_search(GpuForm f, int i, double v);
double gpu_param_from_search(GpuForm f, int i, double x);

/* The form's time (seconds) of shape s on sheet h with parameters p. */
double gpu_model_time(const GpuShape *s, const GpuSheet *h, const double *p);

/* Fits the parameters of one group to n observed times (seconds) of shapes s[] on sheet h:
 * the parameters that minimise a robust (Huber, 10%) loss of the log time ratio, within
 * their bounds (GSL's Nelder-Mead simplex: the tiling's floors make the time piecewise).
 * fixed (may be NULL) holds parameters not to fit (NAN for those to fit). Fills p and
 * returns the mean absolute relative error of the fit over the points; -1 if n is 0. */
double gpu_model_fit(const GpuShape *s, const double *t, int n, const GpuSheet *h, const double *fixed, double *p);
/* The index of the parameter named `name` in form f, -1 if none. */
int gpu_param_index(GpuForm f, const char *name);
/* Whether parameter i of form f describes the power limit (tiles: s and tau). */
bool gpu_param_is_power(GpuForm f, int i);
/* Whether parameter i of form f is a pipeline fill counted in reduction steps (tiles: k0). */
bool gpu_param_is_fill(GpuForm f, int i);

#endif
