/* predictor/whatif.c — pricing on spec-sheet devices and data-parallel scaling (whatif.h). */
#include "predictor/whatif.h"

#include "models/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double whatif_host_op_s(const DeviceSpec *d, OpKind kind)
{
    return kind == OP_CONV2D || kind == OP_BATCHNORM ? d->host_conv_op_s : d->host_op_s;
}

double whatif_band_factor(Precision prec) { return dp_cpu_band_factor(prec); }

int whatif_device_step(const Plan *p, const CostModel *cm, DevicePricer *dp, const DeviceSpec *d, Precision prec,
                       const Framework *fw, DeviceStep *out, char *err, size_t errlen)
{
    return whatif_device_ops(p, cm, dp, d, prec, fw, out, NULL, err, errlen);
}

/* The passes' time on the device, their band added to *lo and *hi. */
static int price_passes(DevicePricer *dp, const FwPass *v, int n, double *t, double *lo, double *hi, char *err,
                        size_t errlen)
{
    *t = *lo = *hi = 0;
    for (int i = 0; i < n; i++) {
        DevPrice pr;
        if (dp_price_stream(dp, v[i].bytes, &pr, err, errlen) != 0)
            return -1;
        *t += pr.time_s, *lo += pr.lo_s, *hi += pr.hi_s;
    }
    return 0;
}

int whatif_check_precision(const DeviceSpec *d, Precision prec, char *err, size_t errlen)
{
    if (d->calibrated && prec != PREC_FP32) {
        snprintf(err, errlen, "--precision %s: this machine is calibrated in fp32 only", precision_name(prec));
        return -1;
    }
    if (!d->calibrated && d->peak_flops[prec] <= 0) {
        char have[96] = "";
        for (int i = 0; i < PREC_COUNT; i++)
            if (d->peak_flops[i] > 0)
                snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", have[0] ? ", " : "",
                         precision_name((Precision)i));
        snprintf(err, errlen, "--precision %s: %s has no %s peak in its spec sheet; it has: %s", precision_name(prec),
                 d->name, precision_name(prec), have);
        return -1;
    }
    return 0;
}

int whatif_device_ops(const Plan *p, const CostModel *cm, DevicePricer *dp, const DeviceSpec *d, Precision prec,
                      const Framework *fw, DeviceStep *out, double *op_s, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (whatif_check_precision(d, prec, err, errlen) != 0)
        return -1;
    if ((d->calibrated && !cm) || (!d->calibrated && !dp)) {
        snprintf(err, errlen, "internal: %s priced without its %s", d->name,
                 d->calibrated ? "calibration" : "device pricer");
        return -1;
    }
    const double byte_scale = precision_bytes(prec) / 4.0;
    /* this machine: priced as `predict` prices it, with the cache model */
    double *cached = NULL, *shared = NULL; /* shared: the bytes written over the other core's lines */
    if (d->calibrated) {
        const size_t nslots = (size_t)(p->nops > 0 ? p->nops : 1);
        if (!(cached = calloc(2 * nslots, sizeof *cached))) {
            snprintf(err, errlen, "out of memory for the cache model of %d ops", p->nops);
            return -1;
        }
        shared = cached + nslots;
        if (pred_cache_model(p, cm, cached, NULL, shared, err, errlen) != 0) {
            free(cached);
            return -1;
        }
    }
    for (int i = 0; i < p->nops; i++) {
        const OpDesc *od = &p->ops[i].desc;
        double t, lo, hi, roof_dev = 0;
        if (d->calibrated) {
            OpPrice pr;
            if (cm_price_cached(cm, od, cached[i], &pr, err, errlen) != 0) {
                free(cached);
                return -1;
            }
            const double extra = pred_shared_write_extra_s(p, cm, i, shared[i]);
            pr.time_s += extra;
            t = pr.time_s, lo = pr.lo_s + extra, hi = pr.hi_s + extra;
            out->roofline_s += pr.time_s;
            out->device_s += pr.time_s;
        } else {
            DevPrice pr;
            if (dp_price(dp, od, &pr, err, errlen) != 0)
                return -1;
            const OpCost c = op_cost(od);
            roof_dev = fmax(d->peak_flops[prec] > 0 ? c.flops / d->peak_flops[prec] : 0,
                            d->mem_Bps > 0 ? c.bytes * byte_scale / d->mem_Bps : 0);
            /* the framework's work: its optimizer's passes replace the fused update; the
             * layout conversions add to the convolution they surround */
            FwPass v[FW_PASSES_MAX];
            const int nopt = fw ? fw_update_passes(fw, od, v) : 0;
            const int nv = nopt > 0 ? nopt : fw ? fw_conv_conversions(fw, od, prec, v) : 0;
            if (nv > 0) {
                double ft, fl, fh;
                if (price_passes(dp, v, nv, &ft, &fl, &fh, err, errlen) != 0)
                    return -1;
                out->fw_s[nopt > 0 ? FW_OPTIMIZER : FW_LAYOUT] += ft;
                if (nopt > 0) {
                    out->fused_update_s += pr.time_s;
                    pr.time_s = pr.lo_s = pr.hi_s = 0;
                }
                pr.time_s += ft, pr.lo_s += fl, pr.hi_s += fh;
            }
            const double host = whatif_host_op_s(d, od->kind);
            out->device_s += pr.time_s;
            t = fmax(pr.time_s, host);
            lo = fmax(pr.lo_s, host);
            hi = fmax(pr.hi_s, host);
            if (host > pr.time_s)
                out->host_bound++;
            out->priced_by[pr.source]++;
            out->roofline_s += roof_dev;
        }
        if (op_s)
            op_s[i] = t;
        out->compute_s += t, out->lo_s += lo, out->hi_s += hi;
        switch (od->phase) {
        case PHASE_FWD: out->fwd_s += t; break;
        case PHASE_UPDATE: out->update_s += t; break;
        default: out->bwd_s += t; break;
        }
    }
    free(cached);
    FwPass cast[2];
    const int ncast = fw && !d->calibrated ? fw_autocast_casts(fw, p, prec, &cast[0], &cast[1]) : 0;
    for (int i = 0; i < ncast; i++) { /* forward: weights to the precision; backward: gradients back */
        double ct, cl, ch;
        if (price_passes(dp, &cast[i], 1, &ct, &cl, &ch, err, errlen) != 0)
            return -1;
        out->fw_s[FW_CAST] += ct;
        out->device_s += ct;
        out->compute_s += ct, out->lo_s += cl, out->hi_s += ch;
        if (i == 0)
            out->fwd_s += ct;
        else
            out->bwd_s += ct;
    }
    /* the step's own host time: loss, zero_grad, the optimizer's call (0 on a calibrated device) */
    out->update_s += d->host_step_s;
    out->compute_s += d->host_step_s, out->lo_s += d->host_step_s, out->hi_s += d->host_step_s;
    /* memory: what the plan allocates, values at the precision's width (the optimizer's
     * master copy and state stay fp32 in mixed precision: parameters, optimizer state kept),
     * with the input batches a run holds (the one in use and the next, double-buffered). On
     * a device that is not this machine the framework frees each activation and activation
     * gradient after its last use: their peak live bytes, not the arenas a run here keeps. */
    const bool freed = !d->calibrated;
    double mem = freed ? (double)plan_peak_live_bytes(p, 1u << ARENA_ACT | 1u << ARENA_ACTGRAD) * byte_scale : 0;
    for (int a = 0; a < ARENA_COUNT; a++) {
        if (freed && (a == ARENA_ACT || a == ARENA_ACTGRAD))
            continue;
        double b = (double)p->arena_bytes[a];
        if (a == ARENA_ACT || a == ARENA_ACTGRAD || a == ARENA_WS || a == ARENA_INPUT ||
            (a == ARENA_GRAD && !(fw && fw->autocast))) /* autocast: fp32 gradients */
            b *= byte_scale;
        if (a == ARENA_INPUT)
            b *= TRAINER_DATA_BATCHES;
        mem += b;
    }
    if (ncast > 0) /* autocast's copies of the weights at the precision, kept for backward */
        mem += cast[0].count * precision_bytes(prec);
    out->mem_bytes = mem;
    out->fits = d->calibrated || mem <= d->mem_bytes;
    return 0;
}

CommParams whatif_comm_params(const SystemSpec *s, const CostModel *cm, Precision prec)
{
    double peak, bw = s->device.mem_Bps;
    if (s->device.calibrated)
        cm_limits(cm, &peak, &bw);
    const double gamma = bw > 0 ? 3.0 / bw : 0; /* read two operands, write one, per byte reduced */
    CommParams c = {.ranks_per_node = s->devices_per_node};
    if (s->has_intra)
        c.intra = (LinkParams){s->intra.alpha_s, s->intra.beta_Bps, gamma};
    else
        c.intra = (LinkParams){s->inter.alpha_s, s->inter.beta_Bps * s->nics_per_node, gamma};
    c.inter = (LinkParams){s->inter.alpha_s, s->inter.beta_Bps * s->nics_per_node, gamma};
    (void)prec;
    return c;
}

AllreduceAlgo whatif_default_algo(const SystemSpec *s) { return s->devices_per_node > 1 ? AR_HIERARCHICAL : AR_RING; }

void whatif_scale_point(const SystemSpec *s, const CommParams *c, AllreduceAlgo a, Precision prec,
                        const DeviceStep *step, double grad_bytes, int nodes, int batch_per_rank, bool overlap,
                        double t1_per_sample, double epoch_samples, ScalePoint *out)
{
    memset(out, 0, sizeof *out);
    const int ranks = nodes * s->devices_per_node;
    out->nodes = nodes;
    out->ranks = ranks;
    out->batch_per_rank = batch_per_rank;
    out->global_batch = batch_per_rank * ranks;
    out->compute_s = step->compute_s;
    out->allreduce_s = allreduce_model_s(a, grad_bytes * precision_bytes(prec) / 4.0, ranks, c);
    DpStep dp = {step->fwd_s, step->bwd_s, step->update_s, out->allreduce_s, overlap};
    out->iter_s = dp_iteration_s(&dp);
    out->samples_per_s = out->global_batch / out->iter_s;
    out->epoch_s = epoch_samples > 0 ? epoch_samples / out->samples_per_s : 0;
    out->speedup = t1_per_sample > 0 ? out->samples_per_s * t1_per_sample : 0;
    out->efficiency = out->speedup / ranks;
    out->comm_fraction = fmax(0, (out->iter_s - step->compute_s) / out->iter_s); /* the part not hidden */
    out->fits = step->fits;
}
