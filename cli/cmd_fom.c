/* cli/cmd_fom.c — `dlperf fom --system NAME|FILE`: seed 000's figures of merit predicted for
 * a proposed system (suite/fom.h), against the seed's Titan table and against Titan as
 * dlperf prices it, with Titan's priced times beside the seed's.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "suite/fom.h"

enum { OPT_SYSTEM = 1, OPT_NODES, OPT_PER_DEVICE, OPT_PRECISION, OPT_NO_PROFILES, OPT_NO_HOST, OPT_CSV, OPT_OPTIMIZED,
       OPT_RESNET_ACCURACY };

typedef struct {
    const char *system, *precision;
    int nodes, per_device;
    bool no_profiles, no_host, csv, optimized;
    double resnet_accuracy; /* --resnet-accuracy (0: not given) */
} FomArgs;

static int fom_option(Cli *cli, int id, const char *arg, void *ctx)
{
    FomArgs *a = ctx;
    switch (id) {
    case OPT_SYSTEM: a->system = arg; return 0;
    case OPT_NODES: return cli_parse_int(cli, "--nodes", arg, 1, 10000000, &a->nodes);
    case OPT_PER_DEVICE: return cli_parse_int(cli, "--per-device", arg, 1, 4096, &a->per_device);
    case OPT_PRECISION: a->precision = arg; return 0;
    case OPT_NO_PROFILES: a->no_profiles = true; return 0;
    case OPT_NO_HOST: a->no_host = true; return 0;
    case OPT_CSV: a->csv = true; return 0;
    case OPT_OPTIMIZED: a->optimized = true; return 0;
    case OPT_RESNET_ACCURACY: {
        char *end;
        const double v = strtod(arg, &end);
        if (end == arg || *end || !(v >= SUITE_RESNET_REF_ACCURACY && v <= 100))
            return cli_error(cli, EXIT_USAGE, "--resnet-accuracy '%s': expected ResNet-50's top-1 accuracy in percent, "
                             "from %.1f (the least the optimized run may reach) to 100", arg, SUITE_RESNET_REF_ACCURACY);
        a->resnet_accuracy = v;
        return 0;
    }
    default: return EXIT_USAGE;
    }
}

/* A system by name, or from a sheet file (a path naming a readable file). */
static int load_system(Cli *cli, Db *db, const char *arg, SystemSpec *out)
{
    char err[1024];
    if (strchr(arg, '/') || (strlen(arg) > 5 && strcmp(arg + strlen(arg) - 5, ".json") == 0)) {
        FILE *f = fopen(arg, "rb");
        if (!f)
            return cli_error(cli, EXIT_USAGE, "--system %s: cannot be read (a system's name, 'dlperf systems', or "
                                              "its sheet's file)", arg);
        char *text = NULL;
        size_t n = 0, cap = 0;
        for (;;) {
            if (n + 4096 + 1 > cap) {
                cap = cap ? 2 * cap : 16384;
                if (cap > (16u << 20)) {
                    free(text);
                    fclose(f);
                    return cli_error(cli, EXIT_USAGE, "--system %s: larger than 16 MiB: not a system sheet", arg);
                }
                char *t = realloc(text, cap);
                if (!t) {
                    free(text);
                    fclose(f);
                    return cli_error(cli, EXIT_FAIL, "--system %s: out of memory", arg);
                }
                text = t;
            }
            const size_t r = fread(text + n, 1, 4096, f);
            n += r;
            if (r < 4096)
                break;
        }
        fclose(f);
        text[n] = '\0';
        const int rc = system_parse(db, text, arg, out, err, sizeof err);
        free(text);
        return rc ? cli_error(cli, EXIT_USAGE, "--system %s", err) : 0;
    }
    if (system_load(db, arg, out, err, sizeof err) != 0)
        return cli_error(cli, EXIT_USAGE, "--system: %s", err);
    return 0;
}

static void fom_progress(const char *what, void *ctx)
{
    (void)ctx;
    if (progress_enabled())
        fprintf(stderr, "dlperf fom: pricing %s\n", what);
}

static const char *fmt_fom(double v, char *buf, int n)
{
    if (!(v > 0))
        snprintf(buf, (size_t)n, "-");
    else
        snprintf(buf, (size_t)n, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : v >= 0.01 ? "%.3f" : "%.2e", v);
    return buf;
}

static cJSON *value_json(const FomValue *v)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "fom", v->fom);
    cJSON_AddNumberToObject(o, "lo", v->lo);
    cJSON_AddNumberToObject(o, "hi", v->hi);
    return o;
}

static cJSON *time_json(const FomBenchTime *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "fits", t->fits);
    cJSON_AddNumberToObject(o, "batch_per_device", t->batch);
    cJSON_AddNumberToObject(o, "instances", t->instances);
    cJSON_AddNumberToObject(o, "instances_per_device", t->per_device);
    cJSON_AddNumberToObject(o, "instances_memory_holds_per_device", t->fit_per_device);
    cJSON_AddNumberToObject(o, "devices_per_instance", t->devices_per_instance);
    cJSON_AddNumberToObject(o, "time", t->time_s);
    cJSON_AddNumberToObject(o, "time_lo", t->lo_s);
    cJSON_AddNumberToObject(o, "time_hi", t->hi_s);
    cJSON_AddNumberToObject(o, "forward", t->fwd_s);
    cJSON_AddNumberToObject(o, "alone", t->alone_s);
    cJSON_AddNumberToObject(o, "memory_per_device_bytes", t->mem_bytes);
    cJSON *src = cJSON_AddObjectToObject(o, "ops_priced_by");
    for (int k = 0; k < DP_SOURCE_COUNT; k++)
        if (t->priced_by[k])
            cJSON_AddNumberToObject(src, dp_source_name((DevPriceSource)k), t->priced_by[k]);
    return o;
}

/* This machine's latest complete suite run, where one is stored (NULL: none). */
typedef struct {
    SuiteRunRow run;
    SuiteResultRow *rows;
    int n;
} Measured;

static const SuiteResultRow *measured_of(const Measured *h, const char *bench)
{
    for (int i = 0; h && i < h->n; i++)
        if (strcmp(h->rows[i].benchmark, bench) == 0)
            return &h->rows[i];
    return NULL;
}

static void print_json(const SystemPricer *sp, const FomOptions *fo, const FomResult *r, const Measured *here)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "system", sp->sys.name);
    cJSON_AddStringToObject(j, "device", sp->sys.device.name);
    cJSON_AddStringToObject(j, "precision", precision_name(sp->prec));
    cJSON_AddNumberToObject(j, "nodes", r->nodes);
    cJSON_AddNumberToObject(j, "devices", r->devices);
    cJSON_AddStringToObject(j, "run", fom_run_name(fo));
    if (fo->resnet_accuracy_pct > 0) {
        cJSON_AddNumberToObject(j, "resnet_accuracy_pct", fo->resnet_accuracy_pct);
        cJSON_AddNumberToObject(j, "resnet_accuracy_term", suite_resnet_accuracy_term(fo->resnet_accuracy_pct));
    } else {
        cJSON_AddNullToObject(j, "resnet_accuracy_pct"); /* the base run has no accuracy term */
    }
    cJSON_AddBoolToObject(j, "predicted", true);
    cJSON *bs = cJSON_AddArrayToObject(j, "benchmarks");
    for (int i = 0; i < SUITE_BENCHMARKS; i++) {
        const SuiteBenchmark *b = &suite_benchmarks[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "benchmark", b->name);
        cJSON_AddStringToObject(o, "model", b->model);
        cJSON_AddStringToObject(o, "group", suite_group_name(b->group));
        cJSON_AddStringToObject(o, "unit", suite_metric_unit(b->metric));
        cJSON_AddItemToObject(o, "proposed", time_json(&r->t[i]));
        cJSON_AddItemToObject(o, "titan_priced", time_json(&r->titan[i]));
        cJSON_AddBoolToObject(cJSON_GetObjectItem(o, "titan_priced"), "memory_estimate_exceeds_device",
                              r->titan[i].memory_short);
        if (b->titan_s > 0)
            cJSON_AddNumberToObject(o, "titan_seed", b->titan_s);
        else
            cJSON_AddNullToObject(o, "titan_seed");
        if (b->titan_fwd_s > 0)
            cJSON_AddNumberToObject(o, "titan_seed_forward", b->titan_fwd_s);
        cJSON_AddItemToObject(o, "fom_vs_seed", value_json(&r->seed[i]));
        cJSON_AddItemToObject(o, "fom_vs_titan_priced", value_json(&r->priced[i]));
        cJSON_AddItemToArray(bs, o);
    }
    cJSON *gs = cJSON_AddArrayToObject(j, "groups");
    for (int g = 0; g < SUITE_GROUP_COUNT; g++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "group", suite_group_name((SuiteGroup)g));
        cJSON_AddNumberToObject(o, "weight", suite_group_weight((SuiteGroup)g));
        cJSON_AddItemToObject(o, "fom_vs_seed", value_json(&r->seed_group[g]));
        cJSON_AddItemToObject(o, "fom_vs_titan_priced", value_json(&r->priced_group[g]));
        cJSON_AddItemToArray(gs, o);
    }
    cJSON_AddItemToObject(j, "overall_vs_seed", value_json(&r->seed_overall));
    cJSON_AddItemToObject(j, "overall_vs_titan_priced", value_json(&r->priced_overall));
    if (here) {
        cJSON *h = cJSON_AddObjectToObject(j, "this_machine_measured");
        cJSON_AddNumberToObject(h, "suite_run_id", (double)here->run.id);
        cJSON_AddStringToObject(h, "mode", here->run.mode);
        cJSON_AddBoolToObject(h, "valid_fom", strcmp(here->run.mode, "full") == 0);
        cJSON_AddStringToObject(h, "finished_at", here->run.finished_at);
        if (isfinite(here->run.overall_fom))
            cJSON_AddNumberToObject(h, "overall_fom", here->run.overall_fom);
        cJSON *hb = cJSON_AddArrayToObject(h, "benchmarks");
        for (int i = 0; i < here->n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "benchmark", here->rows[i].benchmark);
            cJSON_AddNumberToObject(o, "instances", here->rows[i].instances);
            cJSON_AddNumberToObject(o, "time_s", here->rows[i].time_s);
            cJSON_AddNumberToObject(o, "fom", here->rows[i].fom);
            cJSON_AddItemToArray(hb, o);
        }
    }
    json_print(j);
}

static void print_csv(const SystemPricer *sp, const FomOptions *fo, const FomResult *r)
{
    const char *run = fom_run_name(fo);
    printf("system,device,precision,benchmark,group,unit,instances,per_device,batch,time,time_lo,time_hi,"
           "titan_seed,titan_priced,fom_vs_seed,fom_vs_seed_lo,fom_vs_seed_hi,fom_vs_titan_priced,run\n");
    for (int i = 0; i < SUITE_BENCHMARKS; i++) {
        const SuiteBenchmark *b = &suite_benchmarks[i];
        const FomBenchTime *t = &r->t[i];
        printf("%s,%s,%s,%s,%s,%s,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%s\n", sp->sys.name,
               sp->sys.device.name, precision_name(sp->prec), b->name, suite_group_name(b->group),
               suite_metric_unit(b->metric), t->instances, t->per_device, t->batch, t->time_s, t->lo_s, t->hi_s,
               b->titan_s, r->titan[i].time_s, r->seed[i].fom, r->seed[i].lo, r->seed[i].hi, r->priced[i].fom, run);
    }
    for (int g = 0; g < SUITE_GROUP_COUNT; g++)
        printf("%s,%s,%s,%s,%s,,,,,,,,,,%.6g,%.6g,%.6g,%.6g,%s\n", sp->sys.name, sp->sys.device.name,
               precision_name(sp->prec), "(group)", suite_group_name((SuiteGroup)g), r->seed_group[g].fom,
               r->seed_group[g].lo, r->seed_group[g].hi, r->priced_group[g].fom, run);
    printf("%s,%s,%s,(overall),,,,,,,,,,,%.6g,%.6g,%.6g,%.6g,%s\n", sp->sys.name, sp->sys.device.name,
           precision_name(sp->prec), r->seed_overall.fom, r->seed_overall.lo, r->seed_overall.hi,
           r->priced_overall.fom, run);
}

/* a time in the benchmark's unit, for people */
static const char *fmt_metric(const SuiteBenchmark *b, double s, char *buf, int n)
{
    if (!(s > 0))
        return snprintf(buf, (size_t)n, "-"), buf;
    char t[32];
    fmt_time(s, t, sizeof t);
    snprintf(buf, (size_t)n, "%s%s", t, b->metric == SUITE_BATCH_S ? "/batch" : b->metric == SUITE_SAMPLE_S ? "/sample" : "");
    return buf;
}

static void print_text(const SystemPricer *sp, const FomOptions *fo, const FomResult *r, const Measured *here)
{
    char b[8][40];
    (void)b;
    printf("seed 000's figures of merit on %s (%s), predicted: %d node%s x %d = %d devices (%s), %s, %s run\n",
           sp->sys.name, sp->sys.title, r->nodes, r->nodes == 1 ? "" : "s", sp->sys.devices_per_node, r->devices,
           sp->sys.device.name, precision_name(sp->prec), fom_run_name(fo));
    if (fo->resnet_accuracy_pct > 0)
        printf("optimized run: ResNet-50's FOM times the accuracy term %.4f, from a top-1 accuracy of %.2f%%%s\n",
               suite_resnet_accuracy_term(fo->resnet_accuracy_pct), fo->resnet_accuracy_pct,
               fo->resnet_accuracy_pct == SUITE_RESNET_REF_ACCURACY
                   ? " (assumed: the least the rules accept; a prediction reaches none; --resnet-accuracy)"
                   : " (--resnet-accuracy)");
    int src[DP_SOURCE_COUNT] = {0}, total = 0;
    for (int i = 0; i < SUITE_BENCHMARKS; i++)
        for (int k = 0; k < DP_SOURCE_COUNT; k++)
            src[k] += r->t[i].priced_by[k], total += r->t[i].priced_by[k];
    if (!sp->sys.device.calibrated && total > 0) {
        printf("ops priced:");
        for (int k = 0; k < DP_SOURCE_COUNT; k++)
            if (src[k])
                printf(" %s %.0f%%", dp_source_name((DevPriceSource)k), 100.0 * src[k] / total);
        printf(" (predictor/device_price.h)\n");
    }
    printf("\n%-10s %10s %6s %6s  %-44s %-16s %9s %9s\n", "# bench", "instances", "/dev", "batch",
           "time per instance (band)", "Titan (seed)", "FOM", "FOM(*)");
    for (int i = 0; i < SUITE_BENCHMARKS; i++) {
        const SuiteBenchmark *bm = &suite_benchmarks[i];
        const FomBenchTime *t = &r->t[i];
        char inst[40], per[16], band[160];
        if (!t->fits) {
            printf("%-10s %10s %6s %6d  does not fit a device (%s at batch %d)\n", bm->name, "0", "-", t->batch,
                   fmt_bytes(t->mem_bytes, b[0], 40), t->batch);
            continue;
        }
        snprintf(inst, sizeof inst, "%d", t->instances);
        if (bm->group == SUITE_RESNET)
            snprintf(per, sizeof per, "%d dev", t->devices_per_instance);
        else
            snprintf(per, sizeof per, "%d", t->per_device);
        snprintf(band, sizeof band, "%s (%s .. %s)", fmt_metric(bm, t->time_s, b[0], 40), fmt_time(t->lo_s, b[1], 40),
                 fmt_time(t->hi_s, b[2], 40));
        printf("%-10s %10s %6s %6d  %-44s %-16s %9s %9s\n", bm->name, inst, per, t->batch, band,
               bm->titan_s > 0 ? fmt_metric(bm, bm->titan_s, b[3], 40) : "(not given)",
               fmt_fom(r->seed[i].fom, b[4], 40), fmt_fom(r->priced[i].fom, b[5], 40));
    }
    printf("\n%-10s %6s  %-28s %s\n", "# group", "weight", "FOM (band)", "FOM(*)");
    for (int g = 0; g < SUITE_GROUP_COUNT; g++) {
        char band[160];
        snprintf(band, sizeof band, "%s (%s .. %s)", fmt_fom(r->seed_group[g].fom, b[0], 40),
                 fmt_fom(r->seed_group[g].lo, b[1], 40), fmt_fom(r->seed_group[g].hi, b[2], 40));
        printf("%-10s %6.0f  %-28s %s\n", suite_group_name((SuiteGroup)g), suite_group_weight((SuiteGroup)g), band,
               fmt_fom(r->priced_group[g].fom, b[3], 40));
    }
    char band[160];
    snprintf(band, sizeof band, "%s (%s .. %s)", fmt_fom(r->seed_overall.fom, b[0], 40),
             fmt_fom(r->seed_overall.lo, b[1], 40), fmt_fom(r->seed_overall.hi, b[2], 40));
    printf("%-10s %6s  %-28s %s\n", "overall", "", band, fmt_fom(r->priced_overall.fom, b[3], 40));
    printf("\nFOM: against the seed's Titan times (ResNet-50: against Titan as priced, the seed gives no time);\n"
           "FOM(*): against Titan as dlperf prices it, the same predictor on both sides: the comparable one where\n"
           "Titan's priced time is far from the seed's (below; the seed's CANDLE times include reading the data).\n"
           "Band: the prices'.\n"
           "CANDLE's times are the zoo's reference configuration, no accuracy criterion (a prediction reaches none);\n"
           "ResNet-50 trains 90 epochs, no validation passes or I/O (suite/fom.h).\n");
    if (here) {
        printf("\nbeside this machine, measured (suite run %lld, %s%s, %s):\n", (long long)here->run.id,
               here->run.mode, strcmp(here->run.mode, "full") == 0 ? "" : ": NOT a valid FOM", here->run.finished_at);
        printf("%-10s %10s %-26s %12s %14s\n", "# bench", "instances", "time here (max)", "FOM here",
               "predicted/here");
        for (int i = 0; i < SUITE_BENCHMARKS; i++) {
            const SuiteBenchmark *bm = &suite_benchmarks[i];
            const SuiteResultRow *x = measured_of(here, bm->name);
            if (!x)
                continue;
            char ratio[24] = "-";
            if (x->fom > 0 && r->seed[i].fom > 0)
                snprintf(ratio, sizeof ratio, "x%.3g", r->seed[i].fom / x->fom);
            printf("%-10s %10d %-26s %12s %14s\n", bm->name, x->instances, fmt_metric(bm, x->time_s, b[0], 40),
                   fmt_fom(x->fom, b[1], 40), ratio);
        }
        if (isfinite(here->run.overall_fom))
            printf("%-10s %10s %-26s %12s %14s\n", "overall", "", "", fmt_fom(here->run.overall_fom, b[0], 40),
                   r->seed_overall.fom > 0 && here->run.overall_fom > 0 ? (snprintf(b[1], 40, "x%.3g",
                   r->seed_overall.fom / here->run.overall_fom), b[1]) : "-");
    }
    printf("\nTitan as dlperf prices it (%s), one instance per K20X, against the seed's table:\n",
           sp->sys.device.calibrated ? "its sheet" : "the same evidence");
    printf("%-10s %-16s %-16s %-18s %-18s %8s\n", "# bench", "fwd (seed)", "fwd (priced)", "time (seed)",
           "time (priced)", "error");
    for (int i = 0; i < SUITE_BENCHMARKS; i++) {
        const SuiteBenchmark *bm = &suite_benchmarks[i];
        const FomBenchTime *t = &r->titan[i];
        char e[24] = "-";
        if (bm->titan_s > 0 && t->time_s > 0)
            snprintf(e, sizeof e, "%+.0f%%", 100 * (t->time_s / bm->titan_s - 1));
        printf("%-10s %-16s %-16s %-18s %-18s %8s\n", bm->name,
               bm->titan_fwd_s > 0 ? fmt_metric(bm, bm->titan_fwd_s, b[0], 40) : "-",
               t->fwd_s > 0 ? fmt_metric(bm, t->fwd_s, b[1], 40) : "-",
               bm->titan_s > 0 ? fmt_metric(bm, bm->titan_s, b[2], 40) : "(not given)",
               t->fits ? fmt_metric(bm, t->time_s, b[3], 40) : "does not fit", e);
        if (t->memory_short)
            printf("%-10s (priced though its memory, %s at batch %d, exceeds the K20X's: the reference ran it)\n", "",
                   fmt_bytes(t->mem_bytes, b[4], 40), t->batch);
    }
}

int cmd_fom(int argc, char **argv, Cli *cli)
{
    static const struct option opts[] = {{"system", required_argument, NULL, OPT_SYSTEM},
                                         {"nodes", required_argument, NULL, OPT_NODES},
                                         {"per-device", required_argument, NULL, OPT_PER_DEVICE},
                                         {"precision", required_argument, NULL, OPT_PRECISION},
                                         {"no-profiles", no_argument, NULL, OPT_NO_PROFILES},
                                         {"no-host", no_argument, NULL, OPT_NO_HOST},
                                         {"csv", no_argument, NULL, OPT_CSV},
                                         {"optimized", no_argument, NULL, OPT_OPTIMIZED},
                                         {"resnet-accuracy", required_argument, NULL, OPT_RESNET_ACCURACY},
                                         CLI_COMMON_OPTIONS,
                                         {0, 0, 0, 0}};
    FomArgs a = {0};
    int rc = cli_parse(cli, argc, argv, opts, fom_option, &a, command_usage("fom"));
    if (rc != 0)
        return rc < 0 ? EXIT_OK : rc;
    if (optind < argc)
        return cli_error(cli, EXIT_USAGE, "unexpected argument '%s': dlperf fom --system NAME|FILE", argv[optind]);
    if (!a.system)
        return cli_error(cli, EXIT_USAGE, "--system NAME|FILE is required: the proposed system ('dlperf systems' "
                                          "lists them; a system sheet's file works too)");
    if (a.csv && cli->json)
        return cli_error(cli, EXIT_USAGE, "--csv and --json: one output format at a time");
    SystemPricerOpts so = {.mode = PLAN_TRAIN, .no_host = a.no_host, .progress = cli_fitting_progress,
                           .ctx = (void *)cli->cmd, .dp_flags = a.no_profiles ? DP_NO_PROFILES : 0};
    if (precision_parse(a.precision ? a.precision : "fp32", &so.prec) != 0)
        return cli_error(cli, EXIT_USAGE, "--precision '%s': expected fp32, fp16, bf16, tf32 or fp64", a.precision);
    Db *db = cli_db_open(cli);
    if (!db)
        return EXIT_FAIL;
    SystemSpec sys, titan;
    char err[1024];
    if ((rc = load_system(cli, db, a.system, &sys)) != 0) {
        db_close(db);
        return rc;
    }
    if (system_load(db, "titan", &titan, err, sizeof err) != 0) {
        db_close(db);
        return cli_error(cli, EXIT_FAIL, "the reference system: %s", err);
    }
    MachineRow machine;
    CalibrationRow cal;
    CostModel *cm = NULL;
    if (cli_machine(cli, db, &machine)) {
        db_close(db);
        return EXIT_FAIL;
    }
    if (sys.device.calibrated) {
        if (cli_calibration(cli, db, &machine, &cal, &cm)) {
            db_close(db);
            return EXIT_FAIL;
        }
    } else {
        /* this machine's calibration prices only what no GPU evidence does */
        const int found = db_calibration_latest(db, machine.id, cli->threads, &cal);
        if (found < 0) {
            db_close(db);
            return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
        }
        if (found == 0 && !(cm = cm_load(db, cal.id, err, sizeof err))) {
            db_close(db);
            return cli_error(cli, EXIT_FAIL, "%s", err);
        }
    }
    SystemPricer sp, tp;
    if ((rc = sysp_open(db, &sys, cm, &so, &sp, err, sizeof err)) != 0) {
        cm_free(cm);
        db_close(db);
        return cli_error(cli, rc == SYSP_USAGE ? EXIT_USAGE : EXIT_FAIL, "%s", err);
    }
    SystemPricerOpts to = so;
    to.prec = PREC_FP32; /* the reference ran in single precision */
    if ((rc = sysp_open(db, &titan, cm, &to, &tp, err, sizeof err)) != 0) {
        sysp_close(&sp);
        cm_free(cm);
        db_close(db);
        return cli_error(cli, EXIT_FAIL, "the reference system: %s", err);
    }
    /* The base run is the reference code at single precision as the suite ships it (an eager
     * framework's step); anything else is the optimized run, whose ResNet-50 FOM takes the
     * accuracy term. */
    const bool optimized = a.optimized || a.resnet_accuracy > 0 || so.prec != PREC_FP32 || a.no_host;
    FomOptions fo = {.nodes = a.nodes, .per_device = a.per_device,
                     .resnet_accuracy_pct = !optimized ? 0 : a.resnet_accuracy > 0 ? a.resnet_accuracy
                                                                                   : SUITE_RESNET_REF_ACCURACY};
    FomResult *r = malloc(sizeof *r);
    rc = r ? fom_predict(&sp, &tp, &fo, r, fom_progress, NULL, err, sizeof err) : -1;
    if (!r)
        snprintf(err, sizeof err, "out of memory");
    Measured here = {0};
    const bool have = rc == 0 && db_suite_get(db, 0, machine.id, &here.run, &here.rows, &here.n) == 0;
    if (rc == 0) {
        if (cli->json)
            print_json(&sp, &fo, r, have ? &here : NULL);
        else if (a.csv)
            print_csv(&sp, &fo, r);
        else
            print_text(&sp, &fo, r, have ? &here : NULL);
    }
    free(here.rows);
    free(r);
    sysp_close(&tp);
    sysp_close(&sp);
    cm_free(cm);
    db_close(db);
    return rc ? cli_error(cli, EXIT_FAIL, "%s", err) : EXIT_OK;
}
