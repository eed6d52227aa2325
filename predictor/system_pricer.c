/* predictor/system_pricer.c — a system ready to price models on (system_pricer.h). */
#include "predictor/system_pricer.h"

#include <stdio.h>
#include <string.h>

int sysp_open(Db *db, const SystemSpec *sys, const CostModel *cm, const SystemPricerOpts *o, SystemPricer *out,
              char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->sys = *sys;
    out->prec = o->prec;
    out->mode = o->mode;
    out->cm = cm;
    if (whatif_check_precision(&out->sys.device, o->prec, err, errlen) != 0)
        return SYSP_USAGE;
    if (out->sys.device.calibrated && !cm) {
        snprintf(err, errlen, "%s is this machine: its calibration prices it (dlperf calibrate)", sys->device.name);
        return SYSP_FAIL;
    }
    if (!out->sys.device.calibrated) {
        if (!(out->dp = dp_open(db, &out->sys.device, o->prec, cm, o->dp_flags, o->progress, o->ctx, err, errlen)))
            return SYSP_FAIL;
        out->evidence_prec = o->prec;
        const double *peak = out->sys.device.peak_flops;
        if (!dp_has_evidence(out->dp) && o->prec == PREC_BF16 && peak[PREC_FP16] > 0 &&
            peak[PREC_FP16] == peak[PREC_BF16]) {
            /* bf16 and fp16 run on the same tensor cores at one rate and move the same bytes:
             * the fp16 evidence prices bf16 where no GPU has bf16 evidence */
            DevicePricer *half = dp_open(db, &out->sys.device, PREC_FP16, cm, o->dp_flags, o->progress, o->ctx, err,
                                         errlen);
            if (!half) {
                sysp_close(out);
                return SYSP_FAIL;
            }
            if (dp_has_evidence(half)) {
                dp_free(out->dp);
                out->dp = half;
                out->evidence_prec = PREC_FP16;
            } else
                dp_free(half);
        }
        if (!dp_has_evidence(out->dp) && !cm) {
            snprintf(err, errlen,
                     "%s: nothing prices %s at %s: no GPU measurements at that precision (dlperf import FILE... "
                     "--device NAME; README, 'GPU evidence') and no calibration of this machine whose efficiency "
                     "could stand in (dlperf calibrate)",
                     sys->name, sys->device.name, precision_name(o->prec));
            sysp_close(out);
            return SYSP_FAIL;
        }
    }
    if (o->no_host) /* the device never waits for the host */
        out->sys.device.host_step_s = out->sys.device.host_op_s = out->sys.device.host_conv_op_s = 0;
    out->fw = fw_pytorch(o->prec, o->no_host);
    out->algo = o->algo_given ? o->algo : whatif_default_algo(&out->sys);
    out->comm = whatif_comm_params(&out->sys, cm, o->prec);
    return 0;
}

void sysp_close(SystemPricer *sp)
{
    dp_free(sp->dp);
    sp->dp = NULL;
}

int sysp_step(const SystemPricer *sp, const ModelSpec *m, int batch, PlanMode mode, int head, DeviceStep *out,
              double *grad_bytes, char *err, size_t errlen)
{
    Plan p;
    if (plan_build_head(m, batch, mode, head, &p, err, errlen) != 0)
        return SYSP_USAGE;
    const int rc = whatif_device_step(&p, sp->cm, sp->dp, &sp->sys.device, sp->prec, &sp->fw, out, err, errlen) ? SYSP_FAIL : 0;
    if (grad_bytes)
        *grad_bytes = (double)p.arena_bytes[ARENA_GRAD];
    plan_free(&p);
    return rc;
}
