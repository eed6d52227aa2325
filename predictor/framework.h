/* predictor/framework.h — the work a framework adds around a step's kernels on a GPU, as
 * the framework launches it (what the device then runs, priced by device_price.h like any
 * other memory-bound kernel):
 *
 *   optimizer passes  PyTorch's optimizers (torch.optim, single-tensor and foreach alike)
 *                     update in unfused element-wise passes: RMSprop 5 (square_avg.mul_,
 *                     .addcmul_, sqrt, .add_(eps), param.addcdiv_: 13 arrays read or written
 *                     per parameter, where one fused pass moves 5), Adam 7 (18 arrays), SGD
 *                     with momentum 3 (8; Nesterov 4, 11), plain SGD 1 (3); weight decay one
 *                     more over the decayed parameters (3). Always fp32: the master weights
 *                     and the optimizer's state stay fp32 in mixed precision.
 *   autocast casts    mixed precision (bf16/fp16 autocast, fp32 weights): every weight a
 *                     GEMM or convolution uses is cast to the precision once a step (read 4
 *                     bytes, write 2) and its gradient, produced at the precision, cast back
 *                     to accumulate into the fp32 .grad (read 2, write 4).
 *   layout            a framework that keeps activations NCHW (PyTorch's default) around
 *   conversions       tensor-core convolutions (tf32, bf16, fp16): cuDNN's kernels there are
 *                     NHWC, so each convolution call (forward, data and weight gradient)
 *                     converts its two inputs to NHWC and its output back, each read and
 *                     written once at the precision's width; a 1x1 stride-1 convolution, a
 *                     GEMM over the activations as they lie, converts nothing.
 *
 * These are facts of the framework's code, checked against the kernels a profiler lists
 * for PyTorch 2.11 on an H200 (docs/gpu-pricing.md, "What the framework adds"): RMSprop's
 * five kernels per parameter tensor, the casts' copy kernels, the nchwToNhwc/nhwcToNchw
 * kernels around each convolution call.
 */
#ifndef DLPERF_FRAMEWORK_H
#define DLPERF_FRAMEWORK_H

#include <stdbool.h>

#include "models/plan.h"
#include "ops/ops.h"
#include "predictor/system.h"

enum { FW_PASSES_MAX = 10 };

/* One element-wise pass: `bytes` read and written over `count` values. */
typedef struct {
    double bytes;
    double count;
} FwPass;

typedef enum { FW_OPTIMIZER, FW_CAST, FW_LAYOUT, FW_EFFECT_COUNT } FwEffect;

/* What a prediction prices: the framework, eager or graph-captured, the precision's form. */
typedef struct {
    const char *name;   /* "PyTorch" */
    bool eager;         /* each op issued from the host (a host floor per op); false: a
                           captured or compiled step (no floor; the same kernels) */
    bool autocast;      /* mixed precision with fp32 weights and optimizer (bf16, fp16) */
    bool tensor_cores;  /* GEMMs and convolutions on tensor cores (tf32, bf16, fp16) */
    bool nchw;          /* activations kept NCHW: layout conversions around tensor-core convs */
} Framework;

/* PyTorch at prec, eager unless graph (--no-host). */
Framework fw_pytorch(Precision prec, bool graph);
/* One line: "PyTorch eager, bf16 autocast (fp32 weights and optimizer), ..." */
void fw_describe(const Framework *f, Precision prec, char *out, size_t outlen);

/* The passes the framework runs for update op d (OP_SGD, OP_RMSPROP, OP_MOMENTUM, OP_ADAM, OP_ADAMW),
 * fp32: their count (0 for any other op). */
int fw_update_passes(const Framework *f, const OpDesc *d, FwPass out[FW_PASSES_MAX]);
/* The layout conversions around convolution call d at prec (0 passes where f runs it in its
 * own layout): their count. */
int fw_conv_conversions(const Framework *f, const OpDesc *d, Precision prec, FwPass out[FW_PASSES_MAX]);
/* The autocast casts of a step of plan p: forward (weights to prec) and backward (their
 * gradients to fp32), as one pass each over every cast weight; their count (0 without
 * autocast or in a plan without an update). */
int fw_autocast_casts(const Framework *f, const Plan *p, Precision prec, FwPass fwd[1], FwPass bwd[1]);

#endif
