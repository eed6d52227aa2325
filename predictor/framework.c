/* predictor/framework.c — the work a framework adds around a step's kernels (framework.h). */
#include "predictor/framework.h"

#include <stdio.h>
#include <string.h>

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

/* torch.optim's passes (single-tensor and foreach alike), in fp32 arrays read or written
 * per parameter */
static const double SGD_PASSES[] = {3};          /* param.add_(grad, alpha=-lr) */
static const double MOMENTUM_PASSES[] = {2, 3, 3}; /* buf.mul_(momentum), buf.add_(grad),
                                                      param.add_(buf, alpha=-lr) */
static const double NESTEROV_PASSES[] = {2, 3, 3, 3}; /* ... grad.add_(buf, alpha=momentum) too */
static const double RMSPROP_PASSES[] = {2, 3, 2, 2, 4}; /* square_avg.mul_(alpha),
                                                          square_avg.addcmul_(grad, grad),
                                                          avg = square_avg.sqrt(), avg.add_(eps),
                                                          param.addcdiv_(grad, avg) */
static const double ADAM_PASSES[] = {3, 2, 3, 2, 2, 2, 4}; /* exp_avg.lerp_(grad),
                                                            exp_avg_sq.mul_(beta2),
                                                            exp_avg_sq.addcmul_(grad, grad),
                                                            denom = exp_avg_sq.sqrt(),
                                                            denom.div_(bias_correction2_sqrt),
                                                            denom.add_(eps),
                                                            param.addcdiv_(exp_avg, denom) */

int fw_update_passes(const Framework *f, const OpDesc *d, FwPass out[FW_PASSES_MAX])
{
    (void)f;
    const double *arrays;
    int n;
#define PASSES(t) (arrays = (t), n = (int)(sizeof(t) / sizeof(t)[0]))
    switch (d->kind) {
    case OP_SGD: PASSES(SGD_PASSES); break;
    case OP_MOMENTUM:
        if (d->u.update.nesterov)
            PASSES(NESTEROV_PASSES);
        else
            PASSES(MOMENTUM_PASSES);
        break;
    case OP_RMSPROP: PASSES(RMSPROP_PASSES); break;
    case OP_ADAM:
    case OP_ADAMW: PASSES(ADAM_PASSES); break;
    default: return 0;
    }
#undef PASSES
    const UpdateDesc *u = &d->u.update;
    int k = 0;
    if (u->clip > 0) /* clip_grad_norm_'s g.mul_(clip_coef) (its norms are the plan's sumsq op) */
        out[k++] = (FwPass){.bytes = 2 * 4.0 * (double)u->count, .count = (double)u->count};
    if (u->decay_count > 0 && d->kind == OP_ADAMW) /* param.mul_(1 - lr * weight_decay) */
        out[k++] = (FwPass){.bytes = 2 * 4.0 * (double)u->decay_count, .count = (double)u->decay_count};
    else if (u->decay_count > 0) /* grad = grad.add(param, alpha=wd) over the decayed parameters */
        out[k++] = (FwPass){.bytes = 3 * 4.0 * (double)u->decay_count, .count = (double)u->decay_count};
    for (int i = 0; i < n; i++)
        out[k++] = (FwPass){.bytes = arrays[i] * 4.0 * (double)u->count, .count = (double)u->count};
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
    const double t[3] = {d->phase == PHASE_BWD_DATA ? y : x, d->phase == PHASE_BWD_WEIGHTS ? y : w,
                         d->phase == PHASE_FWD ? y : d->phase == PHASE_BWD_DATA ? x : w};
    for (int i = 0; i < 3; i++)
        out[i] = (FwPass){.bytes = 2 * width * t[i], .count = t[i]};
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
    fwd[0] = (FwPass){.bytes = (4 + width) * n, .count = n}; /* the weights to the precision */
    if (p->mode == PLAN_INFERENCE)
        return 1;
    bwd[0] = (FwPass){.bytes = (4 + width) * n, .count = n}; /* their gradients to fp32 */
    return 2;
}
