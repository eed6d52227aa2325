/* cli/predict_parallel.c — `dlperf predict MODEL --system NAME --nodes N --tp T --pp P` and
 * `--search`: a transformer's training iteration and memory per GPU under Megatron-style
 * parallelism (predictor/transformer_parallel.h), printed as where the time goes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "predictor/transformer_parallel.h"

static void add_estimate(cJSON *j, const ParallelEstimate *e)
{
    const ParallelConfig *c = &e->cfg;
    cJSON_AddNumberToObject(j, "gpus", e->gpus);
    cJSON_AddNumberToObject(j, "nodes", e->nodes);
    cJSON_AddNumberToObject(j, "tp", c->tp);
    cJSON_AddNumberToObject(j, "pp", c->pp);
    cJSON_AddNumberToObject(j, "dp", c->dp);
    cJSON_AddBoolToObject(j, "sequence_parallel", c->sp);
    cJSON_AddStringToObject(j, "recompute", recompute_name(c->recompute));
    cJSON_AddNumberToObject(j, "interleave", c->interleave);
    cJSON_AddBoolToObject(j, "distributed_optimizer", c->dist_opt);
    cJSON_AddNumberToObject(j, "global_batch", c->global_batch);
    cJSON_AddNumberToObject(j, "micro_batch", c->micro_batch);
    cJSON_AddNumberToObject(j, "micro_batches", e->micro_batches);
    cJSON_AddNumberToObject(j, "blocks_per_stage", e->layers_per_stage);
    cJSON_AddNumberToObject(j, "iteration_s", e->iter_s);
    cJSON *t = cJSON_AddObjectToObject(j, "time_s");
    cJSON_AddNumberToObject(t, "compute", e->compute_s);
    cJSON_AddNumberToObject(t, "recompute", e->recompute_s);
    cJSON_AddNumberToObject(t, "tp_comm", e->tp_comm_s);
    cJSON_AddNumberToObject(t, "pp_comm", e->pp_comm_s);
    cJSON_AddNumberToObject(t, "bubble", e->bubble_s);
    cJSON_AddNumberToObject(t, "dp_comm", e->dp_comm_s);
    cJSON_AddNumberToObject(t, "optimizer", e->optimizer_s);
    cJSON *m = cJSON_AddObjectToObject(j, "memory_per_gpu_bytes");
    cJSON_AddStringToObject(m, "stage", e->first_stage_fuller ? "first" : "last");
    cJSON_AddNumberToObject(m, "weights", e->weights_B);
    cJSON_AddNumberToObject(m, "gradients", e->grads_B);
    cJSON_AddNumberToObject(m, "optimizer_state", e->optimizer_B);
    cJSON_AddNumberToObject(m, "activations", e->activations_B);
    cJSON_AddNumberToObject(m, "total", e->total_B);
    cJSON_AddBoolToObject(j, "fits", e->fits);
    cJSON_AddNumberToObject(j, "model_flops", e->model_flops);
    cJSON_AddNumberToObject(j, "mfu", e->mfu);
    cJSON_AddNumberToObject(j, "tokens_per_s", e->tokens_per_s);
}

static const char *const csv_header =
    "model,system,precision,gpus,tp,pp,dp,sequence_parallel,recompute,interleave,distributed_optimizer,global_batch,"
    "micro_batch,iteration_s,compute_s,recompute_s,tp_comm_s,pp_comm_s,bubble_s,dp_comm_s,optimizer_s,"
    "weights_bytes,gradients_bytes,optimizer_bytes,activations_bytes,total_bytes,fits,mfu,tokens_per_s\n";

static void csv_row(const char *model, const WhatIf *w, const ParallelEstimate *e)
{
    const ParallelConfig *c = &e->cfg;
    csv_field(stdout, model);
    printf(",");
    csv_field(stdout, w->sp.sys.name);
    printf(",%s,%d,%d,%d,%d,%d,%s,%d,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.0f,%.0f,%.0f,%.0f,%.0f,%d,%.4f,"
           "%.6g\n",
           precision_name(w->sp.prec), e->gpus, c->tp, c->pp, c->dp, c->sp, recompute_name(c->recompute), c->interleave,
           c->dist_opt, c->global_batch, c->micro_batch, e->iter_s, e->compute_s, e->recompute_s, e->tp_comm_s,
           e->pp_comm_s, e->bubble_s, e->dp_comm_s, e->optimizer_s, e->weights_B, e->grads_B, e->optimizer_B,
           e->activations_B, e->total_B, e->fits, e->mfu, e->tokens_per_s);
}

static void print_estimate(const ModelSpec *m, const TransformerDims *d, const WhatIf *w, const ParallelEstimate *e,
                           const ShardCost *sc)
{
    const ParallelConfig *c = &e->cfg;
    char b[4][32];
    printf("%s on %s: %d node%s, %d GPUs (%s), %s\n", m->name, w->sp.sys.name, e->nodes, e->nodes == 1 ? "" : "s",
           e->gpus, w->sp.sys.device.name, precision_name(w->sp.prec));
    printf("  %.4g B parameters: %d blocks, width %d, %d heads, MLP %d, vocabulary %d, sequence %d\n", d->params / 1e9,
           d->layers, d->hidden, d->heads, d->ffn, d->vocab, d->seq);
    printf("  tensor %d x pipeline %d x data %d; sequence parallel %s; recomputation %s; %s; %s optimizer\n", c->tp,
           c->pp, c->dp, c->sp ? "on" : "off", recompute_name(c->recompute),
           c->interleave > 1 ? "interleaved schedule" : "1F1B schedule", c->dist_opt ? "distributed (ZeRO-1)" : "replicated");
    if (c->interleave > 1)
        printf("  %d chunks a stage\n", c->interleave);
    printf("  global batch %d = %d micro-batches of %d x %d replicas; %d blocks a stage\n", c->global_batch,
           e->micro_batches, c->micro_batch, c->dp, e->layers_per_stage);
    if (sc) {
        int total = 0;
        for (int k = 0; k < DP_SOURCE_COUNT; k++)
            total += sc->priced_by[k];
        printf("  one rank's share priced op by op (predictor/device_price.h):");
        for (int k = 0; k < DP_SOURCE_COUNT; k++)
            if (sc->priced_by[k])
                printf(" %d %s", sc->priced_by[k], dp_source_name((DevPriceSource)k));
        printf(" of %d ops", total);
        if (w->sp.evidence_prec != w->sp.prec)
            printf(" (GPU evidence at %s: none at %s, and the two peaks are one)", precision_name(w->sp.evidence_prec),
                   precision_name(w->sp.prec));
        printf("\n");
    }
    printf("\niteration %s: %.1f%% of the peak in model FLOPs (MFU), %.0f tokens/s\n", fmt_time(e->iter_s, b[0], 32),
           100 * e->mfu, e->tokens_per_s);
    const char *names[] = {"compute (forward, backward)", "recomputation", "tensor-parallel collectives",
                           "pipeline sends", "pipeline bubble", "data-parallel gradients", "optimizer"};
    const double v[] = {e->compute_s, e->recompute_s, e->tp_comm_s, e->pp_comm_s, e->bubble_s, e->dp_comm_s,
                        e->optimizer_s};
    for (int i = 0; i < 7; i++)
        printf("  %-28s %10s  %5.1f%%\n", names[i], fmt_time(v[i], b[0], 32), e->iter_s > 0 ? 100 * v[i] / e->iter_s : 0);
    printf("\nmemory per GPU (the %s stage's, the fuller):\n", e->first_stage_fuller ? "first" : "last");
    const char *mn[] = {"weights", "gradients (fp32)", "optimizer state", "activations"};
    const double mv[] = {e->weights_B, e->grads_B, e->optimizer_B, e->activations_B};
    for (int i = 0; i < 4; i++)
        printf("  %-28s %10s\n", mn[i], fmt_bytes(mv[i], b[0], 32));
    printf("  %-28s %10s  %s %s\n", "total", fmt_bytes(e->total_B, b[0], 32), e->fits ? "fits in" : "DOES NOT FIT in",
           fmt_bytes(w->sp.sys.device.mem_bytes, b[1], 32));
}

int predict_transformer_parallel(Cli *cli, const WhatIf *w, const ModelSpec *m, int batch, const WhatIfOpts *o)
{
    TransformerDims d;
    char err[512];
    if (transformer_dims(m, &d, err, sizeof err) != 0)
        return cli_error(cli, EXIT_USAGE, "%s", err);
    if (w->sp.sys.device.calibrated)
        return cli_error(cli, EXIT_USAGE, "--tp, --pp and --search price a spec-sheet GPU system; %s's device is this "
                         "machine", w->sp.sys.name);
    const int nodes = o->nodes > 0 ? o->nodes : 1;
    ParallelEstimate e;
    ShardCost sc;
    bool have_sc = false;
    int tried = 0, fitting = 0;
    if (o->search) {
        const int rc = tpar_search(&w->sp, &d, nodes, batch, &e, &tried, &fitting, err, sizeof err);
        if (rc < 0)
            return cli_error(cli, rc == SYSP_USAGE ? EXIT_USAGE : EXIT_FAIL, "%s", err);
    } else {
        ParallelConfig c = {.tp = o->tp ? o->tp : 1, .pp = o->pp ? o->pp : 1, .micro_batch = o->micro_batch ? o->micro_batch : 1,
                            .global_batch = batch, .interleave = o->interleave ? o->interleave : 1, .sp = o->sp,
                            .dist_opt = o->zero1};
        if (o->recompute && recompute_parse(o->recompute, &c.recompute) != 0)
            return cli_error(cli, EXIT_USAGE, "--recompute '%s': expected none, selective or full", o->recompute);
        if (o->sp && c.tp == 1)
            return cli_error(cli, EXIT_USAGE, "--sp (sequence parallel) splits along the tensor-parallel ranks: give --tp > 1");
        if (tpar_check(&d, &w->sp.sys, nodes, &c, err, sizeof err) != 0)
            return cli_error(cli, EXIT_USAGE, "%s", err);
        if (o->zero1 && c.dp == 1)
            return cli_error(cli, EXIT_USAGE, "--zero1 splits the optimizer over the data-parallel replicas; "
                             "%d GPUs / (tp %d x pp %d) leave one", nodes * w->sp.sys.devices_per_node, c.tp, c.pp);
        const int rc = tpar_price_shard(&w->sp, &d, c.tp, c.micro_batch, &sc, err, sizeof err);
        if (rc != 0)
            return cli_error(cli, rc == SYSP_USAGE ? EXIT_USAGE : EXIT_FAIL, "%s", err);
        have_sc = true;
        tpar_estimate(&d, &w->sp.sys, w->sp.prec, nodes, &c, &sc, &e);
    }
    if (o->csv) {
        fputs(csv_header, stdout);
        csv_row(m->name, w, &e);
        return EXIT_OK;
    }
    if (cli->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "model", m->name);
        cJSON_AddStringToObject(j, "system", w->sp.sys.name);
        cJSON_AddStringToObject(j, "device", w->sp.sys.device.name);
        cJSON_AddStringToObject(j, "precision", precision_name(w->sp.prec));
        cJSON_AddStringToObject(j, "evidence_precision", precision_name(w->sp.evidence_prec));
        cJSON_AddNumberToObject(j, "parameters", d.params);
        if (o->search) {
            cJSON_AddNumberToObject(j, "configurations_tried", tried);
            cJSON_AddNumberToObject(j, "configurations_fitting", fitting);
        }
        add_estimate(j, &e);
        json_print(j);
        return EXIT_OK;
    }
    if (o->search) {
        printf("searched %d configurations of tensor, pipeline and data parallelism, micro-batch, interleaving and "
               "recomputation; %d fit\n", tried, fitting);
        printf(fitting ? "the fastest that fits:\n\n" : "NONE FITS; the one needing the least memory:\n\n");
    }
    print_estimate(m, &d, w, &e, have_sc ? &sc : NULL);
    return EXIT_OK;
}
