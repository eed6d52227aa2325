/* predictor/framework.c — the work a framework adds around a step's kernels (framework.h). */
#include "predictor/framework.h"

#include <stdio.h>
#include <string.h>

const char *fw_effect_name(FwEffect e)
{
    switch (e) {
    case FW_OPTIMIZER: return "optimizer passes";
    case FW_CAST: return "autocast casts";
    case FW_LAYOUT: return "layout conversions";
    default: return "?";
    }
}

Framework fw_pytorch(Precision prec, bool graph)
{
    const bool half = prec == PREC_BF16 || prec == PREC_FP16;
    return (Framework){.name = "PyTorch",
                       .eager = !graph,
                       .autocast = half,
                       .tensor_cores = half || prec == PREC_TF32,
                       .nchw = true};
}

void fw_describe(const Framework *f, Precision prec, char *out, size_t outlen)
{
    const char *form = f->autocast ? " autocast (fp32 weights and optimizer)"
                       : prec == PREC_TF32 ? " (tf32 GEMMs and convolutions, fp32 tensors)"
                                           : "";
    snprintf(out, outlen, "%s %s, %s%s; optimizer as its unfused passes%s%s", f->name,
             f->eager ? "eager (a host floor per op)" : "graph-captured (no host floor, the same kernels)",
             precision_name(prec), form, f->autocast ? ", weight casts" : "",
             f->nchw && f->tensor_cores ? ", NCHW<->NHWC conversions around convolutions" : "");
}

static void pass(FwPass *p, double arrays, double count, const char *what)
{
    *p = (FwPass){.bytes = arrays * 4.0 * count, .count = count, .what = what};
}

int fw_update_passes(const Framework *f, const OpDesc *d, FwPass out[FW_PASSES_MAX])
{
    (void)f;
    const UpdateDesc *u = &d->u.update;
    const double n = (double)u->count;
    int k = 0;
    if (d->kind != OP_SGD && d->kind != OP_RMSPROP && d->kind != OP_MOMENTUM && d->kind != OP_ADAM)
        return 0;
    if (u->decay_count > 0) /* grad = grad + wd * param over the decayed parameters */
        pass(&out[k++], 3, (double)u->decay_count, "grad.add(param, alpha=wd)");
    switch (d->kind) {
    case OP_SGD:
        pass(&out[k++], 3, n, "param.add_(grad, alpha=-lr)");
        break;
    case OP_MOMENTUM:
        pass(&out[k++], 2, n, "buf.mul_(momentum)");
        pass(&out[k++], 3, n, "buf.add_(grad)");
        if (u->nesterov)
            pass(&out[k++], 3, n, "grad.add_(buf, alpha=momentum)");
        pass(&out[k++], 3, n, "param.add_(buf, alpha=-lr)");
        break;
    case OP_RMSPROP:
        pass(&out[k++], 2, n, "square_avg.mul_(alpha)");
        pass(&out[k++], 3, n, "square_avg.addcmul_(grad, grad)");
        pass(&out[k++], 2, n, "avg = square_avg.sqrt()");
        pass(&out[k++], 2, n, "avg.add_(eps)");
        pass(&out[k++], 4, n, "param.addcdiv_(grad, avg)");
        break;
    default: /* OP_ADAM */
        pass(&out[k++], 3, n, "exp_avg.lerp_(grad)");
        pass(&out[k++], 2, n, "exp_avg_sq.mul_(beta2)");
        pass(&out[k++], 3, n, "exp_avg_sq.addcmul_(grad, grad)");
        pass(&out[k++], 2, n, "denom = exp_avg_sq.sqrt()");
        pass(&out[k++], 2, n, "denom.div_(bias_correction2_sqrt)");
        pass(&out[k++], 2, n, "denom.add_(eps)");
        pass(&out[k++], 4, n, "param.addcdiv_(exp_avg, denom)");
        break;
    }
    return k;
}

int fw_conv_conversions(const Framework *f, const OpDesc *d, Precision prec, FwPass out[FW_PASSES_MAX])
{
    if (d->kind != OP_CONV2D || !f->nchw || !f->tensor_cores)
        return 0;
    const ConvDesc *v = &d->u.conv;
    /* a 1x1 stride-1 convolution is a GEMM over the NCHW activations as they lie */
    if (v->r == 1 && v->s == 1 && v->stride_h == 1 && v->stride_w == 1)
        return 0;
    const double x = (double)v->n * v->c * v->h * v->w;
    const double y = (double)v->n * v->k * v->out_h * v->out_w;
    const double w = (double)v->k * (v->c / v->groups) * v->r * v->s;
    const double width = precision_bytes(prec);
    /* forward: x and w in, y out; data gradient: dy and w in, dx out; weight gradient: x
     * and dy in, dw out. Each tensor read in one layout and written in the other. */
    double in1, in2, o;
    const char *a, *b, *c;
    if (d->phase == PHASE_FWD)
        in1 = x, in2 = w, o = y, a = "x to nhwc", b = "w to nhwc", c = "y to nchw";
    else if (d->phase == PHASE_BWD_DATA)
        in1 = y, in2 = w, o = x, a = "dy to nhwc", b = "w to nhwc", c = "dx to nchw";
    else
        in1 = x, in2 = y, o = w, a = "x to nhwc", b = "dy to nhwc", c = "dw to nchw";
    out[0] = (FwPass){.bytes = 2 * width * in1, .count = in1, .what = a};
    out[1] = (FwPass){.bytes = 2 * width * in2, .count = in2, .what = b};
    out[2] = (FwPass){.bytes = 2 * width * o, .count = o, .what = c};
    return 3;
}

int fw_autocast_casts(const Framework *f, const Plan *p, Precision prec, FwPass fwd[1], FwPass bwd[1])
{
    if (!f->autocast)
        return 0;
    double n = 0; /* the weights GEMMs and convolutions take: kernels and biases of those layers */
    for (int i = 0; i < p->nparams; i++) {
        const PlanParam *q = &p->params[i];
        if (!q->learnable || q->layer < 0 || q->layer >= p->nlayers)
            continue;
        const LayerKind k = p->layers[q->layer].kind;
        if (k == LAYER_DENSE || k == LAYER_CONV2D || k == LAYER_LSTM || k == LAYER_RNN)
            n += (double)q->count;
    }
    if (!(n > 0))
        return 0;
    const double width = precision_bytes(prec);
    fwd[0] = (FwPass){.bytes = (4 + width) * n, .count = n, .what = "weights cast to the precision"};
    if (p->mode == PLAN_INFERENCE)
        return 1;
    bwd[0] = (FwPass){.bytes = (4 + width) * n, .count = n, .what = "weight gradients cast to fp32"};
    return 2;
}
