/* cli/validate_device.c — `dlperf validate --device NAME FILE...`: every row of measurement
 * files of a device priced from the database's evidence and compared with what it measured
 * (verify/evidence_check.h); --without-own prices the device as if it had no evidence of its
 * own (from the other devices', carried over by the sheets).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/validate_device.h"
#include "verify/evidence_check.h"

enum { OPT_DEVICE = 1, OPT_FORMAT, OPT_PRECISION, OPT_WITHOUT_OWN, OPT_CSV, OPT_NO_PROFILES };

typedef struct {
    const char *device, *format, *precision, *csv;
    bool without_own, no_profiles;
} Args;

static int option(Cli *cli, int id, const char *arg, void *ctx)
{
    Args *a = ctx;
    (void)cli;
    switch (id) {
    case OPT_DEVICE: a->device = arg; return 0;
    case OPT_FORMAT: a->format = arg; return 0;
    case OPT_PRECISION: a->precision = arg; return 0;
    case OPT_WITHOUT_OWN: a->without_own = true; return 0;
    case OPT_NO_PROFILES: a->no_profiles = true; return 0;
    case OPT_CSV: a->csv = arg; return 0;
    default: return EXIT_USAGE;
    }
}

bool validate_device_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--device") == 0 || strncmp(argv[i], "--device=", 9) == 0)
            return true;
    return false;
}

int validate_device(Cli *cli, int argc, char **argv)
{
    static const struct option opts[] = {{"device", required_argument, NULL, OPT_DEVICE},
                                         {"format", required_argument, NULL, OPT_FORMAT},
                                         {"precision", required_argument, NULL, OPT_PRECISION},
                                         {"without-own", no_argument, NULL, OPT_WITHOUT_OWN},
                                         {"no-profiles", no_argument, NULL, OPT_NO_PROFILES},
                                         {"csv", required_argument, NULL, OPT_CSV},
                                         CLI_COMMON_OPTIONS,
                                         {0, 0, 0, 0}};
    Args a = {0};
    int rc = cli_parse(cli, argc, argv, opts, option, &a, command_usage("validate"));
    if (rc != 0)
        return rc < 0 ? EXIT_OK : rc;
    if (optind >= argc)
        return cli_error(cli, EXIT_USAGE, "--device NAME needs measurement FILEs to compare with (dlperf validate "
                                          "--device NAME FILE...)");
    ImportOptions o = {.device = a.device, .layers = true};
    if (a.format) {
        if (import_format_parse(a.format, &o.format) != 0)
            return cli_error(cli, EXIT_USAGE, "--format '%s': expected dlperf, neusight, deepbench or cde", a.format);
        o.format_given = true;
    }
    Precision prec = PREC_FP32;
    if (a.precision && precision_parse(a.precision, &prec) != 0)
        return cli_error(cli, EXIT_USAGE, "--precision '%s': expected fp64, fp32, tf32, fp16 or bf16", a.precision);
    o.precision = precision_name(prec);
    for (int i = optind; i < argc; i++)
        if (access(argv[i], R_OK) != 0)
            return cli_error(cli, EXIT_USAGE, "%s: cannot be read", argv[i]);
    Db *db = cli_db_open(cli);
    if (!db)
        return EXIT_FAIL;
    char err[1024];
    DeviceSpec dev;
    rc = device_load(db, a.device, &dev, err, sizeof err);
    if (rc != 0 || dev.calibrated) {
        db_close(db);
        return cli_error(cli, EXIT_USAGE, "--device %s: %s", a.device,
                         rc != 0 ? err : "this machine is validated by running models: dlperf validate MODEL");
    }
    o.title = dev.title;
    for (int i = 0; i < dev.naliases && o.naliases < IMPORT_ALIASES_MAX; i++)
        o.aliases[o.naliases++] = dev.aliases[i];
    ImportedRow *rows;
    size_t n;
    ImportSummary s;
    if (import_read((const char *const *)argv + optind, argc - optind, &o, &rows, &n, &s, NULL, NULL, err,
                    sizeof err) != 0) {
        db_close(db);
        return cli_error(cli, EXIT_USAGE, "%s", err);
    }
    const unsigned flags = (a.without_own ? DP_NO_OWN : 0) | (a.no_profiles ? DP_NO_PROFILES : 0);
    DevicePricer *p = dp_open(db, &dev, prec, NULL, flags, cli_fitting_progress, (void *)cli->cmd, err, sizeof err);
    if (!p) {
        free(rows);
        db_close(db);
        return cli_error(cli, EXIT_FAIL, "%s", err);
    }
    FILE *csv = NULL;
    if (a.csv && !(csv = fopen(a.csv, "w"))) {
        dp_free(p);
        free(rows);
        db_close(db);
        return cli_error(cli, EXIT_USAGE, "--csv %s: cannot be written", a.csv);
    }
    CheckResult r;
    rc = evidence_check(p, rows, n, &r, csv, err, sizeof err);
    const int pool = dp_pool_devices(p), own = dp_own_points(p);
    dp_free(p);
    free(rows);
    db_close(db);
    if (csv && fclose(csv) != 0 && rc == 0)
        return cli_error(cli, EXIT_FAIL, "--csv %s: write failed", a.csv);
    if (rc != 0)
        return cli_error(cli, EXIT_FAIL, "%s", err);
    if (cli->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "device", dev.name);
        cJSON_AddStringToObject(j, "precision", precision_name(prec));
        cJSON_AddBoolToObject(j, "without_own", a.without_own);
        cJSON_AddNumberToObject(j, "evidence_devices", pool);
        cJSON_AddNumberToObject(j, "own_measurements", own);
        cJSON_AddNumberToObject(j, "rows", r.rows);
        cJSON_AddNumberToObject(j, "mape_pct", r.mape);
        cJSON_AddNumberToObject(j, "median_ape_pct", r.median_ape);
        cJSON_AddNumberToObject(j, "p90_ape_pct", r.p90_ape);
        cJSON *cls = cJSON_AddArrayToObject(j, "classes");
        for (int c = 0; c < r.nclasses; c++) {
            cJSON *o2 = cJSON_CreateObject();
            cJSON_AddStringToObject(o2, "class", r.cls[c].name);
            cJSON_AddNumberToObject(o2, "rows", r.cls[c].rows);
            cJSON_AddNumberToObject(o2, "mape_pct", r.cls[c].mape);
            cJSON_AddNumberToObject(o2, "median_ape_pct", r.cls[c].median_ape);
            cJSON_AddNumberToObject(o2, "p90_ape_pct", r.cls[c].p90_ape);
            cJSON_AddNumberToObject(o2, "bias", r.cls[c].bias);
            cJSON *src = cJSON_AddObjectToObject(o2, "priced_by");
            for (int k = 0; k < DP_SOURCE_COUNT; k++)
                if (r.cls[c].by_source[k])
                    cJSON_AddNumberToObject(src, dp_source_name((DevPriceSource)k), r.cls[c].by_source[k]);
            cJSON_AddItemToArray(cls, o2);
        }
        json_print(j);
        return EXIT_OK;
    }
    printf("%s (%s) at %s: %d measured rows priced from the evidence of %d device%s%s%s\n", dev.name, dev.title,
           precision_name(prec), r.rows, pool, pool == 1 ? "" : "s",
           a.without_own ? ", its own left out" : "", own && !a.without_own ? "" : " (none of its own)");
    printf("\n%-20s %7s %9s %9s %9s %8s  %s\n", "# class", "rows", "MAPE", "median", "p90", "bias", "priced by");
    for (int c = 0; c < r.nclasses; c++) {
        const CheckClass *k = &r.cls[c];
        char by[160] = "";
        for (int q = 0; q < DP_SOURCE_COUNT; q++)
            if (k->by_source[q])
                snprintf(by + strlen(by), sizeof by - strlen(by), "%s%s %d", by[0] ? ", " : "",
                         dp_source_name((DevPriceSource)q), k->by_source[q]);
        printf("%-20s %7d %8.1f%% %8.1f%% %8.1f%% %7.2fx  %s\n", k->name, k->rows, k->mape, k->median_ape, k->p90_ape,
               k->bias, by);
    }
    printf("%-20s %7d %8.1f%% %8.1f%% %8.1f%%\n", "all", r.rows, r.mape, r.median_ape, r.p90_ape);
    printf("\n(MAPE: mean |predicted/measured - 1|; bias: the median predicted/measured)\n");
    return EXIT_OK;
}
