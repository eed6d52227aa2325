/* cli/cmd_sweep.c — predictions for spec-sheet systems: `dlperf predict MODEL --system NAME`
 * (one configuration, explained) and `dlperf sweep MODEL --system NAME --nodes LIST` (time
 * per epoch, speedup, efficiency and communication fraction over node counts: table, CSV,
 * JSON and an SVG plot drawn by gnuplot). How a device is priced: predictor/whatif.h.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "microbench/mb.h"
#include "predictor/parallel.h"
#include "predictor/system_pricer.h"


int whatif_open(Cli *cli, const WhatIfOpts *o, WhatIf *w)
{
    memset(w, 0, sizeof *w);
    char err[512];
    SystemPricerOpts so = {.mode = (PlanMode)o->mode, .no_host = o->no_host, .progress = cli_fitting_progress,
                           .ctx = (void *)cli->cmd,
                           .dp_flags = (o->without_own ? DP_NO_OWN : 0) | (o->no_profiles ? DP_NO_PROFILES : 0)};
    if (precision_parse(o->precision ? o->precision : "fp32", &so.prec) != 0)
        return cli_error(cli, EXIT_USAGE, "--precision '%s': expected fp32, fp16, bf16, tf32 or fp64", o->precision);
    if (o->allreduce && strcmp(o->allreduce, "all") == 0)
        w->all_algos = true;
    else if (o->allreduce) {
        if (allreduce_algo_parse(o->allreduce, &so.algo) != 0)
            return cli_error(cli, EXIT_USAGE, "--allreduce '%s': expected ring, tree, rec-doubling, rec-halving, "
                                              "hierarchical%s", o->allreduce, o->allow_all ? " or all" : "");
        so.algo_given = true;
    }
    if (w->all_algos && !o->allow_all)
        return cli_error(cli, EXIT_USAGE, "--allreduce all goes with sweep; predict takes one algorithm");
    if (!(w->db = cli_db_open(cli)))
        return EXIT_FAIL;
    SystemSpec sys = {0};
    if (o->device) { /* one device on its own: a system of one node of one device */
        if (device_load(w->db, o->device, &sys.device, err, sizeof err) != 0) {
            db_close(w->db);
            return cli_error(cli, EXIT_USAGE, "--device: %s", err);
        }
        snprintf(sys.name, sizeof sys.name, "%s", sys.device.name);
        snprintf(sys.title, sizeof sys.title, "one %.120s", sys.device.title);
        sys.devices_per_node = 1;
        sys.nics_per_node = 1;
    } else if (system_load(w->db, o->system, &sys, err, sizeof err) != 0) {
        db_close(w->db);
        return cli_error(cli, EXIT_USAGE, "--system: %s", err);
    }
    if (whatif_check_precision(&sys.device, so.prec, err, sizeof err) != 0) {
        db_close(w->db);
        return cli_error(cli, EXIT_USAGE, "%s", err);
    }
    if (cli_machine(cli, w->db, &w->machine)) {
        db_close(w->db);
        return EXIT_FAIL;
    }
    if (sys.device.calibrated) {
        if (cli_calibration(cli, w->db, &w->machine, &w->cal, &w->cm)) {
            db_close(w->db);
            return EXIT_FAIL;
        }
    } else {
        /* this machine's calibration, where there is one, prices only what no GPU evidence
         * does */
        const int found = db_calibration_latest(w->db, w->machine.id, cli->threads, &w->cal);
        if (found < 0) {
            db_close(w->db);
            return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(w->db));
        }
        if (found == 0 && !(w->cm = cm_load(w->db, w->cal.id, err, sizeof err))) {
            db_close(w->db);
            return cli_error(cli, EXIT_FAIL, "%s", err);
        }
        if (found != 0)
            w->cal.id = 0;
    }
    const int rc = sysp_open(w->db, &sys, w->cm, &so, &w->sp, err, sizeof err);
    if (rc != 0) {
        whatif_close(w);
        return cli_error(cli, rc == SYSP_USAGE ? EXIT_USAGE : EXIT_FAIL, "%s", err);
    }
    return 0;
}

void whatif_close(WhatIf *w)
{
    sysp_close(&w->sp);
    cm_free(w->cm);
    if (w->db)
        db_close(w->db);
    w->cm = NULL, w->db = NULL;
}

/* The per-device step at a batch (plan built and priced). */
static int device_step(Cli *cli, const WhatIf *w, const ModelSpec *m, int batch, DeviceStep *out, double *grad_bytes)
{
    char err[512];
    const int rc = sysp_step(&w->sp, m, batch, w->sp.mode, 0, out, grad_bytes, err, sizeof err);
    return rc ? cli_error(cli, rc == SYSP_USAGE ? EXIT_USAGE : EXIT_FAIL, "%s", err) : 0;
}

static void explain_pricing(const WhatIf *w, const DeviceStep *step)
{
    const DeviceSpec *d = &w->sp.sys.device;
    if (d->calibrated) {
        printf("how it is priced: this machine's calibration %lld (%d threads), its own uncertainty band\n",
               (long long)w->cal.id, w->cal.sw.threads);
        return;
    }
    int total = 0;
    for (int k = 0; k < DP_SOURCE_COUNT; k++)
        total += step ? step->priced_by[k] : 0;
    printf("how it is priced (%s at %s, predictor/device_price.h):", d->name, precision_name(w->sp.prec));
    if (w->sp.evidence_prec != w->sp.prec)
        printf("\n  from GPU evidence at %s: no GPU has any at %s, and the device's %s and %s peaks are one",
               precision_name(w->sp.evidence_prec), precision_name(w->sp.prec), precision_name(w->sp.prec),
               precision_name(w->sp.evidence_prec));
    if (step && total > 0) {
        static const char *const what[DP_SOURCE_COUNT] = {
            "measured on it (exact)", "fitted to its measurements", "carried over from other GPUs' measurements",
            "priced like a similar op", "this CPU's efficiency on its roofline (calibration, flagged)",
            "its roofline alone (nothing measured)"};
        for (int k = 0; k < DP_SOURCE_COUNT; k++)
            if (step->priced_by[k])
                printf("\n  %4d of %d ops %s", step->priced_by[k], total, what[k]);
        printf("\n  (%d GPU%s with evidence at %s%s)", dp_pool_devices(w->sp.dp), dp_pool_devices(w->sp.dp) == 1 ? "" : "s",
               precision_name(w->sp.prec), dp_own_points(w->sp.dp) ? ", its own among them" : ", none of them this one");
    }
    if (device_host_floor(d))
        printf("\n  each op takes at least the host's time for it in an eager framework (%.1f us, %.1f us a\n"
               "  convolution or batch norm; %.0f us a step: the sheet's host figures, a GPU's default PyTorch\n"
               "  eager as measured; --no-host for a compiled step)%s", d->host_op_s * 1e6, d->host_conv_op_s * 1e6,
               d->host_step_s * 1e6, step && step->host_bound ? "" : "");
    else
        printf("\n  no host time (--no-host or the sheet's figures)");
    if (step && step->host_bound)
        printf(": %d ops host-bound", step->host_bound);
    char fw[256];
    fw_describe(&w->sp.fw, w->sp.prec, fw, sizeof fw);
    printf("\n  what it prices: %s", fw);
    if (step) {
        char b[FW_EFFECT_COUNT + 1][32];
        for (int e = 0; e < FW_EFFECT_COUNT; e++)
            fmt_time(step->fw_s[e], b[e], 32);
        fmt_time(step->fused_update_s, b[FW_EFFECT_COUNT], 32);
        printf("\n  the framework's work: its optimizer's passes %s (one fused pass: %s), autocast casts %s,\n"
               "  layout conversions %s",
               b[FW_OPTIMIZER], b[FW_EFFECT_COUNT], b[FW_CAST], b[FW_LAYOUT]);
    }
    printf("\n");
}

/* --pipeline S: the model's layers in S stages on S devices, micro-batches of batch / M. */
static int predict_pipeline(Cli *cli, const WhatIf *w, const ModelSpec *m, int batch, const WhatIfOpts *o)
{
    const int stages = o->pipeline, M = o->micro_batches > 0 ? o->micro_batches : 4 * o->pipeline;
    if (batch % M != 0)
        return cli_error(cli, EXIT_USAGE, "--micro-batches %d: the batch %d must split into equal micro-batches; "
                         "give a --batch that is a multiple of %d", M, batch, M);
    const int micro = batch / M;
    Plan p;
    char err[512];
    if (plan_build(m, micro, &p, err, sizeof err) != 0)
        return cli_error(cli, EXIT_USAGE, "%s", err);
    if (stages > p.nlayers) {
        int n = p.nlayers;
        plan_free(&p);
        return cli_error(cli, EXIT_USAGE, "--pipeline %d: %s has %d layers; at most that many stages", stages, m->name, n);
    }
    double *op_s = calloc((size_t)p.nops, sizeof *op_s), *layer_s = calloc((size_t)p.nlayers, sizeof *layer_s);
    double *out_bytes = calloc((size_t)p.nlayers, sizeof *out_bytes);
    DeviceStep step;
    int rc = whatif_device_ops(&p, w->cm, w->sp.dp, &w->sp.sys.device, w->sp.prec, &w->sp.fw, &step, op_s, err, sizeof err);
    if (rc) {
        free(op_s), free(layer_s), free(out_bytes);
        plan_free(&p);
        return cli_error(cli, EXIT_FAIL, "%s", err);
    }
    /* the step's own host time (loss, zero_grad, the optimizer's call; in step.compute_s) is
     * spent once an iteration, like the update: count it there, not per micro-batch */
    double update_s = w->sp.sys.device.host_step_s;
    for (int i = 0; i < p.nops; i++) {
        if (p.ops[i].desc.phase == PHASE_UPDATE)
            update_s += op_s[i];
        else /* the loss runs on the last stage */
            layer_s[p.ops[i].layer >= 0 ? p.ops[i].layer : p.nlayers - 1] += op_s[i];
    }
    for (int l = 0; l < p.nlayers; l++)
        out_bytes[l] = (double)p.layers[l].y.bytes * precision_bytes(w->sp.prec) / 4;
    const bool intra = stages <= w->sp.sys.devices_per_node && w->sp.sys.has_intra;
    const LinkParams link = {intra ? w->sp.sys.intra.alpha_s : w->sp.sys.inter.alpha_s,
                             intra ? w->sp.sys.intra.beta_Bps : w->sp.sys.inter.beta_Bps, 0};
    PipelineEstimate pe;
    pipeline_estimate(layer_s, out_bytes, p.nlayers, update_s, stages, M, &link, &pe);
    char b[4][32];
    if (cli->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "model", m->name);
        cJSON_AddStringToObject(j, "system", w->sp.sys.name);
        cJSON_AddStringToObject(j, "precision", precision_name(w->sp.prec));
        cJSON_AddNumberToObject(j, "stages", pe.stages);
        cJSON_AddNumberToObject(j, "micro_batches", M);
        cJSON_AddNumberToObject(j, "micro_batch", micro);
        cJSON_AddNumberToObject(j, "batch", batch);
        cJSON_AddNumberToObject(j, "slot_s", pe.slot_s);
        cJSON_AddNumberToObject(j, "transfer_s", pe.transfer_s);
        cJSON_AddNumberToObject(j, "iteration_s", pe.iter_s);
        cJSON_AddNumberToObject(j, "bubble_fraction", pe.bubble_fraction);
        cJSON_AddNumberToObject(j, "single_device_s", M * step.compute_s - (M - 1) * update_s);
        cJSON *st = cJSON_AddArrayToObject(j, "stage_s");
        for (int s = 0; s < pe.stages; s++)
            cJSON_AddItemToArray(st, cJSON_CreateNumber(pe.stage_s[s]));
        json_print(j);
    } else {
        printf("%s on %s, pipeline of %d stages (%s links), batch %d in %d micro-batches of %d, %s\n", m->name,
               w->sp.sys.name, pe.stages, intra ? w->sp.sys.intra.name : w->sp.sys.inter.name, batch, M, micro,
               precision_name(w->sp.prec));
        explain_pricing(w, &step);
        printf("\n%5s %-14s %-14s %12s %14s\n", "stage", "first layer", "last layer", "f+b / micro", "sends / micro");
        for (int s = 0; s < pe.stages; s++) {
            int end = s + 1 < pe.stages ? pe.first_layer[s + 1] : p.nlayers;
            printf("%5d %-14s %-14s %12s %14s\n", s, p.layers[pe.first_layer[s]].name, p.layers[end - 1].name,
                   fmt_time(pe.stage_s[s], b[0], 32), s + 1 < pe.stages ? fmt_bytes(pe.boundary_bytes[s], b[1], 32) : "-");
        }
        printf("\nslot         %s (slowest stage + boundary transfer %s)\n", fmt_time(pe.slot_s, b[0], 32),
               fmt_time(pe.transfer_s, b[1], 32));
        printf("iteration    %s = (%d micro-batches + %d - 1) slots + update %s; bubble %.1f%% of the slots\n",
               fmt_time(pe.iter_s, b[0], 32), M, pe.stages, fmt_time(pe.update_s, b[1], 32), 100 * pe.bubble_fraction);
        const double one = M * (step.compute_s - update_s) + update_s;
        printf("one device   %s for the same %d micro-batches: speedup %.2f on %d devices\n", fmt_time(one, b[0], 32),
               M, one / pe.iter_s, pe.stages);
    }
    free(op_s), free(layer_s), free(out_bytes);
    plan_free(&p);
    return EXIT_OK;
}

int predict_summa(Cli *cli, const WhatIfOpts *o)
{
    Db *db = cli_db_open(cli);
    if (!db)
        return EXIT_FAIL;
    SystemSpec sys;
    char err[512];
    Precision prec = PREC_FP32;
    if (o->precision && precision_parse(o->precision, &prec) != 0) {
        db_close(db);
        return cli_error(cli, EXIT_USAGE, "--precision '%s': expected fp32, fp16, bf16, tf32 or fp64", o->precision);
    }
    if (system_load(db, o->system, &sys, err, sizeof err) != 0) {
        db_close(db);
        return cli_error(cli, EXIT_USAGE, "--system: %s", err);
    }
    db_close(db);
    if (sys.device.calibrated)
        return cli_error(cli, EXIT_USAGE, "--summa prices from a device's spec sheet; %s's device is this machine",
                         sys.name);
    if (whatif_check_precision(&sys.device, prec, err, sizeof err) != 0)
        return cli_error(cli, EXIT_USAGE, "%s", err);
    const int nodes = o->nodes > 0 ? o->nodes : 1, devices = nodes * sys.devices_per_node;
    const int p = (int)floor(sqrt((double)devices) + 1e-9);
    /* the link a device reads its blocks over: inside one node the intra link, else its share
     * of the node's NICs */
    const bool inside = devices <= sys.devices_per_node && sys.has_intra;
    const double beta = inside ? sys.intra.beta_Bps : sys.inter.beta_Bps * sys.nics_per_node / sys.devices_per_node;
    SummaEstimate e;
    summa_estimate(o->summa_n, p, sys.device.peak_flops[prec], beta, precision_bytes(prec), &e);
    char b[2][32];
    if (cli->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "system", sys.name);
        cJSON_AddNumberToObject(j, "n", o->summa_n);
        cJSON_AddNumberToObject(j, "grid", p);
        cJSON_AddNumberToObject(j, "devices", p * p);
        cJSON_AddStringToObject(j, "precision", precision_name(prec));
        cJSON_AddNumberToObject(j, "compute_s", e.compute_s);
        cJSON_AddNumberToObject(j, "data_s", e.data_s);
        cJSON_AddNumberToObject(j, "beta_available_Bps", beta);
        cJSON_AddNumberToObject(j, "beta_needed_Bps", e.beta_needed_Bps);
        cJSON_AddBoolToObject(j, "compute_bound", e.compute_bound);
        json_print(j);
        return EXIT_OK;
    }
    printf("SUMMA (seed 003): a %d x %d x %d %s matrix multiply on a %d x %d grid of %s (%d of the %d devices)\n",
           o->summa_n, o->summa_n, o->summa_n, precision_name(prec), p, p, sys.device.name, p * p, devices);
    printf("  compute    2n^3 / (p^2 gamma) = %s at %.1f TFLOP/s per device\n", fmt_time(e.compute_s, b[0], 32),
           sys.device.peak_flops[prec] / 1e12);
    printf("  data       2n^2 s / (p beta)  = %s over %s (%.1f GB/s per device)\n", fmt_time(e.data_s, b[1], 32),
           inside ? sys.intra.name : sys.inter.name, beta / 1e9);
    printf("  to stay compute-bound a device needs beta >= s p gamma / n = %.1f GB/s: %s\n", e.beta_needed_Bps / 1e9,
           e.compute_bound ? "it is compute-bound" : "it is BANDWIDTH-BOUND (grow n or the link)");
    return EXIT_OK;
}

int predict_on_system(Cli *cli, const ModelSpec *m, int batch, const WhatIfOpts *o)
{
    WhatIf w;
    int rc = whatif_open(cli, o, &w);
    if (rc)
        return rc;
    if (o->parallel) {
        rc = predict_transformer_parallel(cli, &w, m, batch, o);
        whatif_close(&w);
        return rc;
    }
    if (o->pipeline > 0) {
        rc = predict_pipeline(cli, &w, m, batch, o);
        whatif_close(&w);
        return rc;
    }
    const int nodes = o->nodes > 0 ? o->nodes : 1;
    DeviceStep step, one;
    double grad_bytes;
    if ((rc = device_step(cli, &w, m, batch, &step, &grad_bytes))) {
        whatif_close(&w);
        return rc;
    }
    one = step;
    ScalePoint pt;
    const double epoch = m->train_samples > 0 ? m->train_samples : 0;
    whatif_scale_point(&w.sp.sys, &w.sp.comm, w.sp.algo, w.sp.prec, &step, grad_bytes, nodes, batch, o->overlap,
                       one.compute_s / batch, epoch, &pt);
    const double ar_bytes = grad_bytes * precision_bytes(w.sp.prec) / 4;
    if (cli->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "model", m->name);
        cJSON_AddStringToObject(j, "system", w.sp.sys.name);
        cJSON_AddStringToObject(j, "device", w.sp.sys.device.name);
        cJSON_AddStringToObject(j, "precision", precision_name(w.sp.prec));
        cJSON_AddNumberToObject(j, "nodes", nodes);
        cJSON_AddNumberToObject(j, "ranks", pt.ranks);
        cJSON_AddNumberToObject(j, "batch_per_device", batch);
        cJSON_AddNumberToObject(j, "global_batch", pt.global_batch);
        cJSON_AddNumberToObject(j, "compute_s", step.compute_s);
        cJSON_AddNumberToObject(j, "compute_lo_s", step.lo_s);
        cJSON_AddNumberToObject(j, "compute_hi_s", step.hi_s);
        cJSON_AddNumberToObject(j, "device_roofline_s", step.roofline_s);
        cJSON_AddNumberToObject(j, "host_op_s", w.sp.sys.device.host_op_s);
        cJSON_AddNumberToObject(j, "host_conv_op_s", w.sp.sys.device.host_conv_op_s);
        cJSON_AddNumberToObject(j, "host_step_s", w.sp.sys.device.host_step_s);
        if (!w.sp.sys.device.calibrated) {
            char fw[256];
            fw_describe(&w.sp.fw, w.sp.prec, fw, sizeof fw);
            cJSON *f = cJSON_AddObjectToObject(j, "framework");
            cJSON_AddStringToObject(f, "name", w.sp.fw.name);
            cJSON_AddBoolToObject(f, "eager", w.sp.fw.eager);
            cJSON_AddBoolToObject(f, "autocast", w.sp.fw.autocast);
            cJSON_AddStringToObject(f, "prices", fw);
            cJSON_AddNumberToObject(f, "optimizer_passes_s", step.fw_s[FW_OPTIMIZER]);
            cJSON_AddNumberToObject(f, "optimizer_fused_s", step.fused_update_s);
            cJSON_AddNumberToObject(f, "autocast_casts_s", step.fw_s[FW_CAST]);
            cJSON_AddNumberToObject(f, "layout_conversions_s", step.fw_s[FW_LAYOUT]);
        }
        cJSON_AddStringToObject(j, "allreduce", allreduce_algo_name(w.sp.algo));
        cJSON_AddNumberToObject(j, "allreduce_bytes", ar_bytes);
        cJSON_AddNumberToObject(j, "allreduce_s", pt.allreduce_s);
        cJSON_AddBoolToObject(j, "overlap", o->overlap);
        cJSON_AddNumberToObject(j, "iteration_s", pt.iter_s);
        cJSON_AddNumberToObject(j, "samples_per_s", pt.samples_per_s);
        cJSON_AddNumberToObject(j, "epoch_s", pt.epoch_s);
        cJSON_AddNumberToObject(j, "scaling_efficiency", pt.efficiency);
        cJSON_AddNumberToObject(j, "memory_per_device_bytes", step.mem_bytes);
        cJSON_AddBoolToObject(j, "fits", step.fits);
        if (!w.sp.sys.device.calibrated) {
            cJSON_AddStringToObject(j, "evidence_precision", precision_name(w.sp.evidence_prec));
            cJSON *src = cJSON_AddObjectToObject(j, "ops_priced_by");
            for (int k = 0; k < DP_SOURCE_COUNT; k++)
                if (step.priced_by[k])
                    cJSON_AddNumberToObject(src, dp_source_name((DevPriceSource)k), step.priced_by[k]);
        }
        cJSON_AddNumberToObject(j, "calibration_id", (double)w.cal.id);
        json_print(j);
        whatif_close(&w);
        return EXIT_OK;
    }
    if (o->csv) {
        printf("model,system,device,precision,nodes,ranks,batch_per_device,global_batch,compute_s,compute_lo_s,"
               "compute_hi_s,device_s,forward_s,backward_s,update_s,allreduce,allreduce_bytes,allreduce_s,iteration_s,"
               "samples_per_s,epoch_s,scaling_efficiency,memory_per_device_bytes,fits,optimizer_passes_s,autocast_casts_s,"
               "layout_conversions_s\n");
        printf("%s,%s,%s,%s,%d,%d,%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%.9g,%d,"
               "%.9g,%.9g,%.9g\n",
               m->name, w.sp.sys.name, w.sp.sys.device.name, precision_name(w.sp.prec), nodes, pt.ranks, batch,
               pt.global_batch, step.compute_s, step.lo_s, step.hi_s, step.device_s, step.fwd_s, step.bwd_s,
               step.update_s, allreduce_algo_name(w.sp.algo), ar_bytes, pt.allreduce_s, pt.iter_s, pt.samples_per_s,
               pt.epoch_s, pt.efficiency, step.mem_bytes, step.fits ? 1 : 0, step.fw_s[FW_OPTIMIZER],
               step.fw_s[FW_CAST], step.fw_s[FW_LAYOUT]);
        whatif_close(&w);
        return EXIT_OK;
    }
    char b[6][32];
    printf("%s on %s (%s): %d node(s) x %d = %d devices, %s, batch %d per device (global %d)\n", m->name, w.sp.sys.name,
           w.sp.sys.title, nodes, w.sp.sys.devices_per_node, pt.ranks, precision_name(w.sp.prec), batch, pt.global_batch);
    explain_pricing(&w, &step);
    printf("\nper device   %s per iteration (band %s .. %s): forward %s, backward %s, update %s\n",
           fmt_time(step.compute_s, b[0], 32), fmt_time(step.lo_s, b[1], 32), fmt_time(step.hi_s, b[2], 32),
           fmt_time(step.fwd_s, b[3], 32), fmt_time(step.bwd_s, b[4], 32), fmt_time(step.update_s, b[5], 32));
    if (!w.sp.sys.device.calibrated)
        printf("             the device's roofline: %s (%.0f%% of the estimate)\n", fmt_time(step.roofline_s, b[0], 32),
               100 * step.roofline_s / step.compute_s);
    printf("memory       %s per device%s\n", fmt_bytes(step.mem_bytes, b[0], 32),
           w.sp.sys.device.calibrated ? "" : step.fits ? " — fits" : " — DOES NOT FIT");
    if (pt.ranks > 1) {
        printf("allreduce    %s of gradients, %s over %s%s%d x %s: %s%s\n", fmt_bytes(ar_bytes, b[0], 32),
               allreduce_algo_name(w.sp.algo), w.sp.sys.has_intra ? w.sp.sys.intra.name : "", w.sp.sys.has_intra ? " and " : "",
               w.sp.sys.nics_per_node, w.sp.sys.inter.name, fmt_time(pt.allreduce_s, b[1], 32),
               o->overlap ? ", overlapped with backward" : ", after backward (no overlap)");
    }
    printf("iteration    %s, %.1f samples/s", fmt_time(pt.iter_s, b[0], 32), pt.samples_per_s);
    if (pt.ranks > 1)
        printf(", scaling efficiency %.1f%%, communication %.1f%% of the iteration", 100 * pt.efficiency,
               100 * pt.comm_fraction);
    printf("\n");
    if (pt.epoch_s > 0)
        printf("epoch        %s (%.0f samples)\n", fmt_time(pt.epoch_s, b[0], 32), epoch);
    whatif_close(&w);
    return EXIT_OK;
}

/* ---- sweep ---- */

/* Strong scaling meets one per-device batch per node count. Up to EXACT_BATCHES distinct
 * batches are each priced (a plan built and priced: milliseconds); beyond, the powers of two
 * between the smallest and largest and those two are priced and the others interpolated in
 * log(batch)-log(time) (memory linearly): a step's time is a smooth function of its batch
 * between neighbouring powers of two. */
enum { EXACT_BATCHES = 32 };

typedef struct {
    int n;
    int *batch;       /* sorted */
    DeviceStep *step;
} StepCurve;

static int curve_add(Cli *cli, const WhatIf *w, const ModelSpec *m, StepCurve *c, int b)
{
    for (int i = 0; i < c->n; i++)
        if (c->batch[i] == b)
            return 0;
    DeviceStep st;
    double gb;
    int rc = device_step(cli, w, m, b, &st, &gb);
    if (rc)
        return rc;
    int i = c->n++;
    while (i > 0 && c->batch[i - 1] > b) {
        c->batch[i] = c->batch[i - 1];
        c->step[i] = c->step[i - 1];
        i--;
    }
    c->batch[i] = b;
    c->step[i] = st;
    return 0;
}

static double log_interp(double x0, double y0, double x1, double y1, double x)
{
    if (y0 <= 0 || y1 <= 0)
        return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    return exp(log(y0) + (log(y1) - log(y0)) * (log(x) - log(x0)) / (log(x1) - log(x0)));
}

/* The step at batch b: priced, or interpolated between the priced neighbours. */
static DeviceStep curve_at(const StepCurve *c, const DeviceSpec *d, int b, bool *interpolated)
{
    int hi = 0;
    while (hi < c->n - 1 && c->batch[hi] < b)
        hi++;
    *interpolated = c->batch[hi] != b;
    if (!*interpolated || hi == 0)
        return c->step[hi];
    const DeviceStep *p = &c->step[hi - 1], *q = &c->step[hi];
    const double x0 = c->batch[hi - 1], x1 = c->batch[hi];
    DeviceStep r;
    r.fwd_s = log_interp(x0, p->fwd_s, x1, q->fwd_s, b);
    r.bwd_s = log_interp(x0, p->bwd_s, x1, q->bwd_s, b);
    r.update_s = log_interp(x0, p->update_s, x1, q->update_s, b);
    r.compute_s = r.fwd_s + r.bwd_s + r.update_s;
    r.lo_s = log_interp(x0, p->lo_s, x1, q->lo_s, b);
    r.hi_s = log_interp(x0, p->hi_s, x1, q->hi_s, b);
    r.roofline_s = log_interp(x0, p->roofline_s, x1, q->roofline_s, b);
    r.mem_bytes = p->mem_bytes + (q->mem_bytes - p->mem_bytes) * (b - x0) / (x1 - x0);
    r.fits = d->calibrated || r.mem_bytes <= d->mem_bytes;
    return r;
}

typedef struct {
    WhatIfOpts w;
    int batch, global_batch;
    const char *nodes;
    bool csv;
    const char *plot;
} SweepOpts;

enum { OPT_SYSTEM = 1, OPT_NODES, OPT_BATCH, OPT_GLOBAL_BATCH, OPT_PRECISION, OPT_ALLREDUCE, OPT_OVERLAP, OPT_NO_HOST, OPT_CSV,
       OPT_PLOT, OPT_NO_PROFILES };

static int sweep_option(Cli *cli, int id, const char *arg, void *ctx)
{
    SweepOpts *o = ctx;
    switch (id) {
    case OPT_SYSTEM: o->w.system = arg; return 0;
    case OPT_NODES: o->nodes = arg; return 0;
    case OPT_BATCH: return cli_parse_int(cli, "--batch", arg, 1, 1 << 20, &o->batch);
    case OPT_GLOBAL_BATCH: return cli_parse_int(cli, "--global-batch", arg, 1, 1 << 30, &o->global_batch);
    case OPT_PRECISION: o->w.precision = arg; return 0;
    case OPT_ALLREDUCE: o->w.allreduce = arg; return 0;
    case OPT_OVERLAP: o->w.overlap = true; return 0;
    case OPT_NO_HOST: o->w.no_host = true; return 0;
    case OPT_CSV: o->csv = true; return 0;
    case OPT_PLOT: o->plot = arg; return 0;
    case OPT_NO_PROFILES: o->w.no_profiles = true; return 0;
    }
    return EXIT_USAGE;
}

enum { MAX_NODE_COUNTS = 1 << 16 };

static int plot_svg(Cli *cli, const char *path, const char *model, const WhatIf *w, const ScalePoint *pts, int n,
                    const int *algo_of, int nalgos, const AllreduceAlgo *algos, bool weak)
{
    char data[] = "/tmp/dlperf-sweep-XXXXXX";
    int fd = mkstemp(data);
    if (fd < 0)
        return cli_error(cli, EXIT_FAIL, "--plot: cannot create a temporary data file");
    FILE *f = fdopen(fd, "w");
    for (int a = 0; a < nalgos; a++) { /* one gnuplot data block per algorithm */
        for (int i = 0; i < n; i++)
            if (algo_of[i] == a)
                fprintf(f, "%d %.9g %.9g %.9g %.9g %.9g\n", pts[i].nodes, pts[i].epoch_s > 0 ? pts[i].epoch_s : pts[i].iter_s,
                        pts[i].speedup, pts[i].efficiency, pts[i].comm_fraction, (double)pts[i].ranks);
        fprintf(f, "\n\n");
    }
    fclose(f);
    FILE *g = popen("gnuplot 2>&1", "w");
    if (!g) {
        remove(data);
        return cli_error(cli, EXIT_FAIL, "--plot: cannot run gnuplot (install gnuplot-nox)");
    }
    const bool epoch = pts[0].epoch_s > 0;
    const size_t len = strlen(path);
    if (len > 4 && strcmp(path + len - 4, ".png") == 0) /* else SVG */
        fprintf(g, "set terminal png size 1100,800 enhanced font 'sans,10'\n");
    else
        fprintf(g, "set terminal svg size 1100,800 dynamic enhanced font 'sans,11'\n");
    fprintf(g, "set output '%s'\n", path);
    fprintf(g, "set multiplot layout 2,2 title '%s on %s (%d x %s per node), %s, %s scaling, %s'\n", model,
            w->sp.sys.name, w->sp.sys.devices_per_node, w->sp.sys.device.name, precision_name(w->sp.prec), weak ? "weak" : "strong",
            "predicted by dlperf");
    fprintf(g, "set logscale x 2\nset grid\nset key top left\nset xlabel 'nodes'\n");
    const char *cols[4][3] = {{"2", epoch ? "time per epoch (s)" : "time per iteration (s)", "y"},
                              {"3", "speedup over one device", "y"},
                              {"4", "scaling efficiency", ""},
                              {"5", "communication fraction of the iteration", ""}};
    for (int c = 0; c < 4; c++) {
        fprintf(g, "%s\nset ylabel '%s'\n", cols[c][2][0] ? "set logscale y" : "unset logscale y", cols[c][1]);
        if (c >= 2)
            fprintf(g, "set yrange [0:1.05]\n");
        else
            fprintf(g, "set autoscale y\n");
        fprintf(g, "set key %s left box opaque\n", c == 2 ? "bottom" : "top"); /* away from the curves */
        fprintf(g, "plot ");
        for (int a = 0; a < nalgos; a++)
            fprintf(g, "%s'%s' index %d using 1:%s with linespoints title '%s'", a ? ", " : "", data, a, cols[c][0],
                    allreduce_algo_name(algos[a]));
        if (c == 1)
            fprintf(g, ", '%s' index 0 using 1:6 with lines dashtype 2 title 'ideal (devices)'", data);
        fprintf(g, "\n");
    }
    fprintf(g, "unset multiplot\n");
    int st = pclose(g);
    remove(data);
    if (st != 0)
        return cli_error(cli, EXIT_FAIL, "--plot: gnuplot failed (exit %d; is gnuplot-nox installed?)", st);
    return 0;
}

int cmd_sweep(int argc, char **argv, Cli *cli)
{
    static const struct option opts[] = {CLI_COMMON_OPTIONS,
                                         CLI_MODEL_FILE_OPTION,
                                         {"system", required_argument, NULL, OPT_SYSTEM},
                                         {"nodes", required_argument, NULL, OPT_NODES},
                                         {"batch", required_argument, NULL, OPT_BATCH},
                                         {"global-batch", required_argument, NULL, OPT_GLOBAL_BATCH},
                                         {"precision", required_argument, NULL, OPT_PRECISION},
                                         {"allreduce", required_argument, NULL, OPT_ALLREDUCE},
                                         {"overlap", no_argument, NULL, OPT_OVERLAP},
                                         {"no-host", no_argument, NULL, OPT_NO_HOST},
                                         {"csv", no_argument, NULL, OPT_CSV},
                                         {"plot", required_argument, NULL, OPT_PLOT},
                                         {"no-profiles", no_argument, NULL, OPT_NO_PROFILES},
                                         {0}};
    SweepOpts so = {.w.allow_all = true};
    int rc = cli_parse(cli, argc, argv, opts, sweep_option, &so, command_usage(cli->cmd));
    if (rc)
        return rc;
    if (!so.w.system)
        return cli_error(cli, EXIT_USAGE, "--system NAME is required (see 'dlperf systems')");
    if (so.batch && so.global_batch)
        return cli_error(cli, EXIT_USAGE, "--batch (per device: weak scaling) and --global-batch (strong scaling) "
                                          "are two ways to scale; choose one");
    if (cli->json && so.csv)
        return cli_error(cli, EXIT_USAGE, "--json and --csv are two output formats; choose one");
    int *nodes = malloc(MAX_NODE_COUNTS * sizeof *nodes);
    int nn = cli_parse_counts(cli, "--nodes", "node count", so.nodes ? so.nodes : "1,2,4,...,4096", nodes,
                              MAX_NODE_COUNTS, 10000000);
    if (nn < 0) {
        free(nodes);
        return EXIT_USAGE;
    }
    const ModelSpec *m;
    Plan probe;
    if ((rc = cli_model_plan(cli, argc, argv, so.batch, &m, &probe))) {
        free(nodes);
        return rc;
    }
    const int batch = probe.batch;
    plan_free(&probe);
    WhatIf w;
    if ((rc = whatif_open(cli, &so.w, &w))) {
        free(nodes);
        return rc;
    }
    AllreduceAlgo algos[AR_COUNT];
    int nalgos = 0;
    if (w.all_algos)
        for (int a = 0; a < AR_COUNT; a++)
            algos[nalgos++] = (AllreduceAlgo)a;
    else
        algos[nalgos++] = w.sp.algo;
    const bool weak = so.global_batch == 0;
    const double epoch = m->train_samples > 0 ? m->train_samples : 0;
    /* one device at the per-device batch (weak) or at the global batch (strong): the
     * reference for speedup */
    DeviceStep ref;
    double grad_bytes;
    int ref_batch = weak ? batch : so.global_batch;
    if ((rc = device_step(cli, &w, m, ref_batch, &ref, &grad_bytes))) {
        whatif_close(&w);
        free(nodes);
        return rc;
    }
    const double t1_per_sample = ref.compute_s / ref_batch;
    ScalePoint *pts = calloc((size_t)nn * nalgos, sizeof *pts);
    int *algo_of = calloc((size_t)nn * nalgos, sizeof *algo_of);
    int np = 0, ninterp = 0;
    const double t0 = mb_now_s();
    /* the per-device steps: weak scaling one (the reference); strong one per batch met */
    StepCurve curve = {0, calloc((size_t)nn + 64, sizeof(int)), calloc((size_t)nn + 64, sizeof(DeviceStep))};
    if (weak) {
        curve.batch[0] = batch, curve.step[0] = ref, curve.n = 1;
    } else {
        int *distinct = calloc((size_t)nn, sizeof *distinct), nd = 0, bmin = 1 << 30, bmax = 0;
        for (int i = 0; i < nn; i++) {
            int b = so.global_batch / (nodes[i] * w.sp.sys.devices_per_node);
            bool seen = b < 1;
            for (int j = 0; j < nd && !seen; j++)
                seen = distinct[j] == b;
            if (!seen) {
                distinct[nd++] = b;
                bmin = b < bmin ? b : bmin;
                bmax = b > bmax ? b : bmax;
            }
        }
        if (nd <= EXACT_BATCHES) {
            for (int j = 0; j < nd && rc == 0; j++)
                rc = curve_add(cli, &w, m, &curve, distinct[j]);
        } else if (nd > 0) {
            rc = curve_add(cli, &w, m, &curve, bmin);
            for (long b = 1; b < bmax && rc == 0; b *= 2)
                if (b > bmin)
                    rc = curve_add(cli, &w, m, &curve, (int)b);
            if (rc == 0)
                rc = curve_add(cli, &w, m, &curve, bmax);
        }
        free(distinct);
    }
    for (int i = 0; i < nn && rc == 0; i++) {
        int ranks = nodes[i] * w.sp.sys.devices_per_node;
        int b = weak ? batch : so.global_batch / ranks;
        if (b < 1)
            continue; /* fewer samples than devices: not a configuration */
        bool interp;
        DeviceStep step = curve_at(&curve, &w.sp.sys.device, b, &interp);
        ninterp += interp;
        for (int a = 0; a < nalgos; a++) {
            whatif_scale_point(&w.sp.sys, &w.sp.comm, algos[a], w.sp.prec, &step, grad_bytes, nodes[i], b, so.w.overlap,
                               t1_per_sample, epoch, &pts[np]);
            algo_of[np++] = a;
        }
    }
    const double eval_s = mb_now_s() - t0;
    if (rc == 0 && np == 0)
        rc = cli_error(cli, EXIT_USAGE, "--global-batch %d is smaller than the devices of every node count given",
                       so.global_batch);
    const int npriced = curve.n;
    free(curve.batch);
    free(curve.step);
    if (rc == 0 && !cli->json)
        fprintf(stderr, "sweep: %d configurations evaluated in %.3f s (%.0f per second); %d per-device batch(es) "
                        "priced, %d node counts' batches interpolated between them\n",
                np, eval_s, np / fmax(eval_s, 1e-9), npriced, ninterp);
    if (rc == 0 && so.plot)
        rc = plot_svg(cli, so.plot, m->name, &w, pts, np, algo_of, nalgos, algos, weak);
    if (rc == 0 && cli->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", m->name);
        cJSON_AddStringToObject(o, "system", w.sp.sys.name);
        cJSON_AddStringToObject(o, "device", w.sp.sys.device.name);
        cJSON_AddStringToObject(o, "precision", precision_name(w.sp.prec));
        cJSON_AddStringToObject(o, "scaling", weak ? "weak" : "strong");
        cJSON_AddBoolToObject(o, "overlap", so.w.overlap);
        cJSON_AddNumberToObject(o, "configurations", np);
        cJSON_AddNumberToObject(o, "evaluation_s", eval_s);
        cJSON_AddNumberToObject(o, "configurations_per_s", np / fmax(eval_s, 1e-9));
        cJSON_AddNumberToObject(o, "batches_priced", npriced);
        cJSON_AddNumberToObject(o, "batches_interpolated", ninterp);
        cJSON *arr = cJSON_AddArrayToObject(o, "points");
        for (int i = 0; i < np; i++) {
            const ScalePoint *p = &pts[i];
            cJSON *r = cJSON_CreateObject();
            cJSON_AddNumberToObject(r, "nodes", p->nodes);
            cJSON_AddNumberToObject(r, "devices", p->ranks);
            cJSON_AddStringToObject(r, "allreduce", allreduce_algo_name(algos[algo_of[i]]));
            cJSON_AddNumberToObject(r, "batch_per_device", p->batch_per_rank);
            cJSON_AddNumberToObject(r, "global_batch", p->global_batch);
            cJSON_AddNumberToObject(r, "compute_s", p->compute_s);
            cJSON_AddNumberToObject(r, "allreduce_s", p->allreduce_s);
            cJSON_AddNumberToObject(r, "iteration_s", p->iter_s);
            cJSON_AddNumberToObject(r, "samples_per_s", p->samples_per_s);
            cJSON_AddNumberToObject(r, "epoch_s", p->epoch_s);
            cJSON_AddNumberToObject(r, "speedup", p->speedup);
            cJSON_AddNumberToObject(r, "efficiency", p->efficiency);
            cJSON_AddNumberToObject(r, "comm_fraction", p->comm_fraction);
            cJSON_AddBoolToObject(r, "fits", p->fits);
            cJSON_AddItemToArray(arr, r);
        }
        json_print(o);
    } else if (rc == 0 && so.csv) {
        printf("model,system,precision,scaling,allreduce,nodes,devices,batch_per_device,global_batch,compute_s,"
               "allreduce_s,iteration_s,samples_per_s,epoch_s,speedup,efficiency,comm_fraction,fits\n");
        for (int i = 0; i < np; i++) {
            const ScalePoint *p = &pts[i];
            printf("%s,%s,%s,%s,%s,%d,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d\n", m->name, w.sp.sys.name,
                   precision_name(w.sp.prec), weak ? "weak" : "strong", allreduce_algo_name(algos[algo_of[i]]), p->nodes,
                   p->ranks, p->batch_per_rank, p->global_batch, p->compute_s, p->allreduce_s, p->iter_s,
                   p->samples_per_s, p->epoch_s, p->speedup, p->efficiency, p->comm_fraction, p->fits);
        }
    } else if (rc == 0) {
        char b[4][32];
        printf("%s on %s: %d x %s per node, %s, %s scaling (%s), gradients %s\n", m->name, w.sp.sys.name,
               w.sp.sys.devices_per_node, w.sp.sys.device.name, precision_name(w.sp.prec), weak ? "weak" : "strong",
               weak ? "batch per device fixed" : "global batch split over the devices",
               so.w.overlap ? "overlapped with backward" : "summed after backward");
        explain_pricing(&w, &ref);
        printf("\n%7s %8s %-13s %7s %10s %10s %10s %12s %9s %6s %6s\n", "nodes", "devices", "allreduce", "batch/dev",
               "compute", "allreduce", "iteration", epoch ? "epoch" : "samples/s", "speedup", "eff", "comm");
        for (int i = 0; i < np; i++) {
            const ScalePoint *p = &pts[i];
            char last[32];
            if (epoch)
                fmt_time(p->epoch_s, last, 32);
            else
                snprintf(last, sizeof last, "%.1f", p->samples_per_s);
            printf("%7d %8d %-13s %7d %10s %10s %10s %12s %9.1f %5.1f%% %5.1f%%%s\n", p->nodes, p->ranks,
                   allreduce_algo_name(algos[algo_of[i]]), p->batch_per_rank, fmt_time(p->compute_s, b[0], 32),
                   fmt_time(p->allreduce_s, b[1], 32), fmt_time(p->iter_s, b[2], 32), last, p->speedup,
                   100 * p->efficiency, 100 * p->comm_fraction, p->fits ? "" : "  does not fit");
        }
        if (w.sp.sys.nodes && nodes[nn - 1] > w.sp.sys.nodes)
            printf("(%s has %d nodes; larger counts are hypothetical)\n", w.sp.sys.name, w.sp.sys.nodes);
        if (so.plot)
            printf("plot: %s\n", so.plot);
    }
    free(pts);
    free(algo_of);
    free(nodes);
    whatif_close(&w);
    return rc;
}
