/* cli/cmd_models.c — `dlperf models` and `dlperf profile`: what a model is, from the
 * same plan expansion that trains and predicts it. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "models/hf_config.h"
#include "models/model_json.h"
#include "models/plan.h"

typedef struct {
    const char *export_name, *output, *from_hf, *name;
    int context;
    bool csv;
} ModelsOpts;

enum { OPT_EXPORT = 1, OPT_OUTPUT, OPT_LIST_CSV, OPT_FROM_HF, OPT_NAME, OPT_CONTEXT };

static int models_option(Cli *cli, int id, const char *arg, void *ctx)
{
    ModelsOpts *o = ctx;
    switch (id) {
    case OPT_EXPORT: o->export_name = arg; return 0;
    case OPT_OUTPUT: o->output = arg; return 0;
    case OPT_LIST_CSV: o->csv = true; return 0;
    case OPT_FROM_HF: o->from_hf = arg; return 0;
    case OPT_NAME: o->name = arg; return 0;
    case OPT_CONTEXT: return cli_parse_int(cli, "--context", arg, 1, 1 << 20, &o->context);
    }
    return EXIT_USAGE;
}

/* Writes a model file's text to stdout, or to FILE via a temporary + rename so that an
 * existing file is never left half-written. Frees text. */
static int write_model_text(Cli *cli, char *text, const char *output)
{
    int rc = EXIT_OK;
    if (!output) {
        fputs(text, stdout);
        fputc('\n', stdout);
    } else {
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.tmp", output);
        FILE *f = fopen(tmp, "w");
        if (!f || fputs(text, f) < 0 || fputc('\n', f) < 0 || fclose(f) != 0 || rename(tmp, output) != 0) {
            rc = cli_error(cli, EXIT_FAIL, "--output %s: cannot write: %s", output, strerror(errno));
            remove(tmp);
        }
    }
    free(text);
    return rc;
}

/* Writes a zoo model as a JSON model file. */
static int export_model(Cli *cli, const char *name, const char *output)
{
    const ModelSpec *m = cli_model(cli, name);
    if (!m)
        return EXIT_USAGE;
    if (m->algorithm != ALGO_NETWORK)
        return cli_error(cli, EXIT_USAGE, "%s is an algorithm (%s), not a layer network: it has no model file", name,
                         m->title);
    char *text = model_json_export(m);
    if (!text)
        return cli_error(cli, EXIT_FAIL, "%s: cannot export (out of memory)", name);
    return write_model_text(cli, text, output);
}

/* A HuggingFace config.json written as a model file (models/hf_config.h). */
static int model_from_hf(Cli *cli, const ModelsOpts *o)
{
    FILE *f = fopen(o->from_hf, "rb");
    if (!f)
        return cli_error(cli, EXIT_USAGE, "--from-hf %s: cannot open: %s", o->from_hf, strerror(errno));
    enum { MAX_CONFIG = 1 << 20 }; /* a config is a few KB */
    char *text = malloc(MAX_CONFIG + 1);
    size_t n = text ? fread(text, 1, MAX_CONFIG + 1, f) : 0;
    const bool bad = !text || ferror(f) || n > MAX_CONFIG;
    fclose(f);
    if (bad) {
        free(text);
        return cli_error(cli, EXIT_USAGE, "--from-hf %s: unreadable or larger than %d bytes (a config.json is a few KB)",
                         o->from_hf, MAX_CONFIG);
    }
    text[n] = '\0';
    char err[512];
    ModelSpec *m = model_from_hf_config(text, o->from_hf, o->name, o->context, err, sizeof err);
    free(text);
    if (!m)
        return cli_error(cli, EXIT_USAGE, "%s", err);
    Plan p; /* the shapes the file alone cannot check (heads, positions) before writing it */
    if (plan_build(m, 1, &p, err, sizeof err) != 0) {
        model_free(m);
        return cli_error(cli, EXIT_USAGE, "--from-hf %s: %s", o->from_hf, err);
    }
    plan_free(&p);
    char *out = model_json_export(m);
    model_free(m);
    if (!out)
        return cli_error(cli, EXIT_FAIL, "--from-hf %s: cannot write the model (out of memory)", o->from_hf);
    return write_model_text(cli, out, o->output);
}

/* Batch-norm layers: Caffe stores one scale-factor blob per BN besides mean and variance. */
static int bn_layers(const ModelSpec *m)
{
    int n = 0;
    for (int i = 0; i < m->nlayers; i++)
        n += m->layers[i].kind == LAYER_BATCHNORM;
    return n;
}

int cmd_models(int argc, char **argv, Cli *cli)
{
    static const struct option opts[] = {CLI_COMMON_OPTIONS, CLI_NO_QUIRK_OPTION,
                                         {"export", required_argument, NULL, OPT_EXPORT},
                                         {"output", required_argument, NULL, OPT_OUTPUT},
                                         {"csv", no_argument, NULL, OPT_LIST_CSV},
                                         {"from-hf", required_argument, NULL, OPT_FROM_HF},
                                         {"name", required_argument, NULL, OPT_NAME},
                                         {"context", required_argument, NULL, OPT_CONTEXT}, {0}};
    ModelsOpts mo = {0};
    int rc = cli_parse(cli, argc, argv, opts, models_option, &mo, command_usage(cli->cmd));
    if (rc)
        return rc;
    if (optind < argc)
        return cli_error(cli, EXIT_USAGE, "unexpected argument '%s'; 'dlperf models' takes no operands", argv[optind]);
    if (mo.from_hf && (mo.export_name || mo.csv || cli->json || cli->no_quirk))
        return cli_error(cli, EXIT_USAGE, "--from-hf writes a model file: not with --export, --csv, --json or --no-quirk");
    if ((mo.name || mo.context) && !mo.from_hf)
        return cli_error(cli, EXIT_USAGE, "--name and --context go with --from-hf CONFIG");
    if (mo.from_hf)
        return model_from_hf(cli, &mo);
    if (mo.output && !mo.export_name)
        return cli_error(cli, EXIT_USAGE, "--output goes with --export MODEL or --from-hf CONFIG");
    if (cli->no_quirk && !mo.export_name)
        return cli_error(cli, EXIT_USAGE, "--no-quirk goes with --export MODEL (the list shows every model)");
    if (mo.csv && (cli->json || mo.export_name))
        return cli_error(cli, EXIT_USAGE, "--csv lists the zoo: not with --json or --export");
    if (mo.export_name)
        return export_model(cli, mo.export_name, mo.output);
    cJSON *arr = cli->json ? cJSON_CreateArray() : NULL;
    if (mo.csv)
        printf("name,origin,type,params,params_stored,size_mib_fp32,fwd_macs_per_sample,fwd_flops_per_sample,"
               "default_batch,quirk,title\n");
    else if (!cli->json)
        printf("%-15s %-11s %-11s %13s %13s %9s %9s %9s %6s  %s\n", "# model", "origin", "type", "learnable",
               "stored", "MiB", "fwd GMAC", "fwd GFLOP", "batch", "description");
    for (int i = 0; i < zoo_count(); i++) {
        const ModelSpec *m = zoo_get(i);
        Plan p;
        char err[256];
        if (plan_build(m, 1, &p, err, sizeof err) != 0)
            return cli_error(cli, EXIT_FAIL, "%s", err);
        /* "stored": what a framework saves: learnable + BN running statistics, and for the
         * Caffe models one more scale-factor blob per BN (the Cookbook's counts) */
        bool caffe = m->origin && strcmp(m->origin, "cookbook") == 0;
        double stored = (double)(p.param_count + p.state_count) + (caffe ? bn_layers(m) : 0);
        double macs = plan_forward_macs_per_sample(&p);
        double mib = stored * 4 / 1048576.0;
        if (cli->json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", m->name);
            cJSON_AddStringToObject(o, "origin", m->origin ? m->origin : "");
            cJSON_AddStringToObject(o, "type", m->family ? m->family : "");
            cJSON_AddStringToObject(o, "title", m->title);
            cJSON_AddStringToObject(o, "source", m->source);
            cJSON_AddNumberToObject(o, "params", (double)p.param_count);
            cJSON_AddNumberToObject(o, "params_stored", stored);
            cJSON_AddStringToObject(o, "stored_convention", caffe ? "caffe blobs: learnable + BN mean, variance and "
                                                                    "scale factor"
                                                                  : "learnable + BN running mean and variance");
            cJSON_AddNumberToObject(o, "size_mib_fp32", mib);
            cJSON_AddNumberToObject(o, "fwd_macs_per_sample", macs);
            cJSON_AddNumberToObject(o, "fwd_flops_per_sample", 2 * macs);
            cJSON_AddNumberToObject(o, "default_batch", m->default_batch);
            if (m->quirk)
                cJSON_AddStringToObject(o, "quirk", m->quirk);
            else
                cJSON_AddNullToObject(o, "quirk");
            cJSON_AddItemToArray(arr, o);
        } else if (mo.csv) {
            csv_field(stdout, m->name);
            printf(",%s,%s,%lld,%.0f,%.6g,%.9g,%.9g,%d,%d,", m->origin ? m->origin : "", m->family ? m->family : "",
                   (long long)p.param_count, stored, mib, macs, 2 * macs, m->default_batch, m->quirk != NULL);
            csv_field(stdout, m->title);
            putchar('\n');
        } else {
            char pc[32], sc[32];
            printf("%-15s %-11s %-11s %13s %13s %9.1f %9.4f %9.4f %6d  %s\n", m->name, m->origin ? m->origin : "",
                   m->family ? m->family : "", fmt_count((double)p.param_count, pc, 32), fmt_count(stored, sc, 32), mib,
                   macs / 1e9, 2 * macs / 1e9, m->default_batch, m->title);
        }
        plan_free(&p);
    }
    if (cli->json) {
        json_print(arr);
    } else if (!mo.csv) {
        char quirky[256];
        zoo_quirk_names(quirky, sizeof quirky);
        printf("# learnable: trainable parameters. stored: + batch-norm running statistics (Keras' total), and for\n"
               "#   the Cookbook's Caffe models + 1 scale-factor blob per batch norm (Caffe's blob count, the\n"
               "#   Cookbook's convention); MiB: stored x 4 bytes. fwd: GEMM + convolution work per sample\n"
               "#   (not attention's batched GEMMs: 'dlperf profile' counts every op); GMAC counts a\n"
               "#   multiply-add once (the Cookbook's and ResNet paper's 'GFLOPs'), GFLOP twice.\n"
               "# quirk kept from the reference (--no-quirk removes it: a linear output layer): %s\n", quirky);
    }
    return EXIT_OK;
}

typedef struct {
    int batch;
    bool layers, ops, csv;
} ProfileOpts;

enum { OPT_BATCH = 1, OPT_LAYERS, OPT_OPS, OPT_CSV };

static int profile_option(Cli *cli, int id, const char *arg, void *ctx)
{
    ProfileOpts *o = ctx;
    switch (id) {
    case OPT_BATCH: return cli_parse_int(cli, "--batch", arg, 1, 1 << 20, &o->batch);
    case OPT_LAYERS: o->layers = true; return 0;
    case OPT_OPS: o->ops = true; return 0;
    case OPT_CSV: o->csv = true; return 0;
    }
    return EXIT_USAGE;
}

/* The distinct op keys of a training step with how often each runs, its kind, phase, FLOPs
 * and bytes per execution: a table, JSON, or CSV with a key column for
 * tools/gpu_calibrate.py (dlperf's import keys). */
static int print_ops(const Cli *cli, const ModelSpec *m, const Plan *p, bool csv)
{
    typedef struct {
        char key[OP_KEY_MAX];
        int count, first;
    } Distinct;
    Distinct *d = calloc((size_t)(p->nops > 0 ? p->nops : 1), sizeof *d);
    if (!d)
        return cli_error(cli, EXIT_FAIL, "out of memory listing %d ops", p->nops);
    int n = 0;
    for (int i = 0; i < p->nops; i++) {
        char key[OP_KEY_MAX];
        op_key(&p->ops[i].desc, key);
        int j = 0;
        while (j < n && strcmp(d[j].key, key) != 0)
            j++;
        if (j == n) {
            snprintf(d[n].key, sizeof d[n].key, "%s", key);
            d[n++].first = i;
        }
        d[j].count++;
    }
    if (cli->json) {
        cJSON *arr = cJSON_CreateArray();
        for (int j = 0; j < n; j++) {
            const OpDesc *od = &p->ops[d[j].first].desc;
            const OpCost c = op_cost(od);
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "key", d[j].key);
            cJSON_AddStringToObject(o, "kind", op_kind_name(od->kind));
            cJSON_AddStringToObject(o, "phase", op_phase_name(od->phase));
            cJSON_AddNumberToObject(o, "count", d[j].count);
            cJSON_AddNumberToObject(o, "flops", c.flops);
            cJSON_AddNumberToObject(o, "bytes", c.bytes);
            cJSON_AddItemToArray(arr, o);
        }
        json_print(arr);
    } else if (csv) {
        printf("# %s at batch %d: %d ops a training step, %d distinct\nkey,kind,phase,count,flops,bytes\n", m->name,
               p->batch, p->nops, n);
        for (int j = 0; j < n; j++) {
            const OpDesc *od = &p->ops[d[j].first].desc;
            const OpCost c = op_cost(od);
            csv_field(stdout, d[j].key);
            printf(",%s,%s,%d,%.17g,%.17g\n", op_kind_name(od->kind), op_phase_name(od->phase), d[j].count, c.flops,
                   c.bytes);
        }
    } else {
        printf("%s at batch %d: %d ops a training step, %d distinct\n\n# %5s %12s %12s  key\n", m->name, p->batch,
               p->nops, n, "count", "GFLOP", "MB");
        for (int j = 0; j < n; j++) {
            const OpCost c = op_cost(&p->ops[d[j].first].desc);
            printf("  %5d %12.4f %12.3f  %s\n", d[j].count, c.flops / 1e9, c.bytes / 1e6, d[j].key);
        }
    }
    free(d);
    return EXIT_OK;
}

/* Per-layer FLOPs by phase, and the largest workspace any of the layer's ops needs. */
static void layer_costs(const Plan *p, int layer, double flops[PHASE_COUNT], size_t *ws)
{
    for (int ph = 0; ph < PHASE_COUNT; ph++)
        flops[ph] = 0;
    *ws = 0;
    for (int i = 0; i < p->nops; i++) {
        const PlanOp *o = &p->ops[i];
        if (o->layer != layer)
            continue;
        flops[o->desc.phase] += op_cost(&o->desc).flops;
        size_t w = op_workspace_touched_bytes(&o->desc);
        if (w > *ws)
            *ws = w;
    }
}

int cmd_profile(int argc, char **argv, Cli *cli)
{
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS, CLI_MODEL_FILE_OPTION, {"batch", required_argument, NULL, OPT_BATCH},
        {"layers", no_argument, NULL, OPT_LAYERS}, {"ops", no_argument, NULL, OPT_OPS},
        {"csv", no_argument, NULL, OPT_CSV}, {0}};
    ProfileOpts po = {0};
    int rc = cli_parse(cli, argc, argv, opts, profile_option, &po, command_usage(cli->cmd));
    if (rc)
        return rc;
    if (po.csv && !po.ops)
        return cli_error(cli, EXIT_USAGE, "--csv lists the step's ops: give --ops with it");
    if (po.csv && cli->json)
        return cli_error(cli, EXIT_USAGE, "--csv and --json are two formats; choose one");
    const ModelSpec *m;
    Plan p;
    if ((rc = cli_model_plan(cli, argc, argv, po.batch, &m, &p)))
        return rc;
    const int batch = p.batch;
    if (po.ops) { /* the step's distinct ops: what tools/gpu_calibrate.py times on a GPU */
        rc = print_ops(cli, m, &p, po.csv);
        plan_free(&p);
        return rc;
    }
    double flops[PHASE_COUNT];
    plan_flops(&p, flops);
    double total_flops = 0;
    for (int ph = 0; ph < PHASE_COUNT; ph++)
        total_flops += flops[ph];
    if (cli->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", m->name);
        cJSON_AddNumberToObject(o, "batch", batch);
        cJSON_AddNumberToObject(o, "params", (double)p.param_count);
        cJSON_AddNumberToObject(o, "fwd_macs_per_sample", plan_forward_macs_per_sample(&p));
        cJSON *fl = cJSON_AddObjectToObject(o, "flops_per_iteration");
        for (int ph = 0; ph < PHASE_COUNT; ph++)
            cJSON_AddNumberToObject(fl, op_phase_name((OpPhase)ph), flops[ph]);
        cJSON_AddNumberToObject(fl, "total", total_flops);
        cJSON *mem = cJSON_AddObjectToObject(o, "memory_bytes");
        for (int a = 0; a < ARENA_COUNT; a++)
            cJSON_AddNumberToObject(mem, arena_name((ArenaId)a), (double)p.arena_bytes[a]);
        cJSON_AddNumberToObject(mem, "total", (double)plan_total_bytes(&p));
        cJSON_AddNumberToObject(o, "ops_per_iteration", p.nops);
        if (po.layers) {
            cJSON *ls = cJSON_AddArrayToObject(o, "layers");
            for (int i = 0; i < p.nlayers; i++) {
                const PlanLayer *l = &p.layers[i];
                double lf[PHASE_COUNT];
                size_t ws;
                layer_costs(&p, i, lf, &ws);
                char shape[48];
                shape_str(&l->out, shape, sizeof shape);
                cJSON *lo = cJSON_CreateObject();
                cJSON_AddStringToObject(lo, "name", l->name);
                cJSON_AddStringToObject(lo, "kind", layer_kind_name(l->kind));
                cJSON_AddStringToObject(lo, "output_shape", shape);
                cJSON_AddNumberToObject(lo, "params", (double)l->params);
                for (int ph = 0; ph < PHASE_UPDATE; ph++)
                    cJSON_AddNumberToObject(lo, op_phase_name((OpPhase)ph), lf[ph]);
                cJSON_AddNumberToObject(lo, "activation_bytes", (double)l->act_bytes);
                cJSON_AddNumberToObject(lo, "workspace_bytes", (double)ws);
                cJSON_AddItemToArray(ls, lo);
            }
        }
        json_print(o);
        plan_free(&p);
        return EXIT_OK;
    }
    char b1[32], b2[32];
    if (m->title && m->title[0])
        printf("%s — %s\n", m->name, m->title);
    else
        printf("%s\n", m->name);
    if (m->source && m->source[0]) /* a model file need not say where its architecture is from */
        printf("source: %s\n", m->source);
    printf("batch %d, %s parameters, %d ops per training iteration\n", batch,
           fmt_count((double)p.param_count, b1, 32), p.nops);
    printf("\nFLOPs per iteration (a multiply-add = 2):\n");
    for (int ph = 0; ph < PHASE_COUNT; ph++)
        printf("  %-12s %10.2f GFLOP\n", op_phase_name((OpPhase)ph), flops[ph] / 1e9);
    printf("  %-12s %10.2f GFLOP   (forward %.4f GMAC per sample)\n", "total", total_flops / 1e9,
           plan_forward_macs_per_sample(&p) / 1e9);
    printf("\nmemory per process:\n");
    for (int a = 0; a < ARENA_COUNT; a++)
        printf("  %-17s %12s\n", arena_name((ArenaId)a), fmt_bytes((double)p.arena_bytes[a], b1, 32));
    printf("  %-17s %12s\n", "total", fmt_bytes((double)plan_total_bytes(&p), b2, 32));
    if (po.layers) {
        printf("\n%-4s %-10s %-8s %-14s %13s %11s %11s %11s %11s %11s\n", "#", "layer", "kind", "output", "params",
               "fwd GFLOP", "bwd-d GFLOP", "bwd-w GFLOP", "act MiB", "ws MiB");
        for (int i = 0; i < p.nlayers; i++) {
            const PlanLayer *l = &p.layers[i];
            double lf[PHASE_COUNT];
            size_t ws;
            layer_costs(&p, i, lf, &ws);
            char shape[48];
            shape_str(&l->out, shape, sizeof shape);
            printf("%-4d %-10s %-8s %-14s %13s %11.3f %11.3f %11.3f %11.1f %11.1f\n", i + 1, l->name,
                   layer_kind_name(l->kind), shape, fmt_count((double)l->params, b1, 32), lf[PHASE_FWD] / 1e9,
                   lf[PHASE_BWD_DATA] / 1e9, lf[PHASE_BWD_WEIGHTS] / 1e9, (double)l->act_bytes / 1048576.0,
                   (double)ws / 1048576.0);
        }
        printf("# act: activations and their gradients laid out per layer (batch %d); ws: largest scratch\n", batch);
    }
    plan_free(&p);
    return EXIT_OK;
}
