/* cli/cmd_import.c — `dlperf import FILE... --device NAME`: measurements made elsewhere (a
 * GPU timed with tools/gpu_calibrate.py, published per-op results) stored as calibrations of
 * that device (microbench/import.h), which predictions for systems of that device price
 * from.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "microbench/import.h"
#include "predictor/system.h"

enum { OPT_DEVICE = 1, OPT_FORMAT, OPT_PRECISION, OPT_DRY_RUN };

typedef struct {
    const char *device, *format, *precision;
    bool dry_run;
} ImportArgs;

static int import_option(Cli *cli, int id, const char *arg, void *ctx)
{
    ImportArgs *a = ctx;
    switch (id) {
    case OPT_DEVICE: a->device = arg; return 0;
    case OPT_FORMAT: a->format = arg; return 0;
    case OPT_PRECISION: a->precision = arg; return 0;
    case OPT_DRY_RUN: a->dry_run = true; return 0;
    default: return EXIT_USAGE;
    }
}

static void progress(const char *file, long rows, void *ctx)
{
    (void)ctx;
    if (progress_enabled())
        fprintf(stderr, "dlperf import: %s: %ld rows read\n", file, rows);
}

int cmd_import(int argc, char **argv, Cli *cli)
{
    static const struct option opts[] = {{"device", required_argument, NULL, OPT_DEVICE},
                                         {"format", required_argument, NULL, OPT_FORMAT},
                                         {"precision", required_argument, NULL, OPT_PRECISION},
                                         {"dry-run", no_argument, NULL, OPT_DRY_RUN},
                                         CLI_COMMON_OPTIONS,
                                         {0, 0, 0, 0}};
    ImportArgs a = {0};
    int rc = cli_parse(cli, argc, argv, opts, import_option, &a, command_usage("import"));
    if (rc != 0)
        return rc < 0 ? EXIT_OK : rc;
    if (optind >= argc)
        return cli_error(cli, EXIT_USAGE, "no FILE given: dlperf import FILE... --device NAME");
    if (!a.device)
        return cli_error(cli, EXIT_USAGE, "--device NAME is required: the spec sheet of the device the files measured "
                                          "('dlperf systems' lists the devices; 'dlperf systems add FILE' adds one)");
    ImportOptions o = {.device = a.device, .precision = a.precision, .dry_run = a.dry_run};
    if (a.format) {
        if (import_format_parse(a.format, &o.format) != 0)
            return cli_error(cli, EXIT_USAGE, "--format '%s': expected dlperf, neusight, deepbench or cde", a.format);
        o.format_given = true;
    }
    if (a.precision) {
        Precision p;
        if (precision_parse(a.precision, &p) != 0)
            return cli_error(cli, EXIT_USAGE, "--precision '%s': expected fp64, fp32, tf32, fp16 or bf16",
                             a.precision);
    }
    for (int i = optind; i < argc; i++)
        if (access(argv[i], R_OK) != 0)
            return cli_error(cli, EXIT_USAGE, "%s: cannot be read", argv[i]);
    interrupt_kept("nothing imported (an import is one transaction)");
    Db *db = cli_db_open(cli);
    if (!db)
        return EXIT_FAIL;
    char err[1024];
    DeviceSpec dev;
    rc = device_load(db, a.device, &dev, err, sizeof err);
    if (rc != 0) {
        db_close(db);
        return cli_error(cli, EXIT_USAGE,
                         "--device %s: %s ('dlperf systems' lists the devices; 'dlperf systems add FILE' adds a "
                         "sheet)", a.device, err);
    }
    if (dev.calibrated) {
        db_close(db);
        return cli_error(cli, EXIT_USAGE, "--device %s: this machine is calibrated with 'dlperf calibrate', not "
                                          "imported", a.device);
    }
    o.title = dev.title;
    for (int i = 0; i < dev.naliases && o.naliases < IMPORT_ALIASES_MAX; i++)
        o.aliases[o.naliases++] = dev.aliases[i];
    ImportSummary s;
    rc = import_files(db, (const char *const *)argv + optind, argc - optind, &o, &s, progress, NULL, err, sizeof err);
    if (rc == 0 && !a.dry_run)
        interrupt_kept("the import is stored (%d calibration%s)", s.calibrations, s.calibrations == 1 ? "" : "s");
    db_close(db);
    if (rc != 0)
        return cli_error(cli, rc == -1 ? EXIT_USAGE : EXIT_FAIL, "%s", err);
    if (cli->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "device", a.device);
        cJSON_AddStringToObject(j, "formats", s.formats);
        cJSON_AddBoolToObject(j, "dry_run", a.dry_run);
        cJSON_AddNumberToObject(j, "files", s.files);
        cJSON_AddNumberToObject(j, "rows", (double)s.rows);
        cJSON_AddNumberToObject(j, "measurements", (double)s.measurements);
        cJSON_AddNumberToObject(j, "merged_rows", (double)s.merged);
        cJSON *sk = cJSON_AddObjectToObject(j, "skipped");
        cJSON_AddNumberToObject(sk, "other_device", (double)s.other_device);
        cJSON_AddNumberToObject(sk, "other_precision", (double)s.other_precision);
        cJSON_AddNumberToObject(sk, "no_time", (double)s.no_time);
        cJSON_AddNumberToObject(sk, "no_single_op", (double)s.out_of_scope);
        cJSON *cals = cJSON_AddArrayToObject(j, "calibrations");
        for (int i = 0; i < s.calibrations; i++) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddNumberToObject(c, "id", (double)s.calibration_id[i]);
            cJSON_AddStringToObject(c, "precision", s.precision[i]);
            cJSON_AddNumberToObject(c, "measurements", (double)s.per_precision[i]);
            cJSON_AddItemToArray(cals, c);
        }
        json_print(j);
        return EXIT_OK;
    }
    printf("%s %ld measurements of %s (%s) from %d file%s (%s): %ld rows read", a.dry_run ? "checked" : "imported",
           s.measurements, a.device, dev.title, s.files, s.files == 1 ? "" : "s", s.formats, s.rows);
    if (s.merged)
        printf(", %ld repeating a key (merged: the median of their times)", s.merged);
    printf("\n");
    if (s.other_device || s.other_precision || s.no_time || s.out_of_scope)
        printf("skipped: %ld of other devices, %ld of precisions not imported, %ld without a time, %ld timing no "
               "single op\n", s.other_device, s.other_precision, s.no_time, s.out_of_scope);
    for (int i = 0; i < s.calibrations; i++)
        printf("  calibration %lld: %s, %ld measurements\n", (long long)s.calibration_id[i], s.precision[i],
               s.per_precision[i]);
    if (!a.dry_run)
        printf("'dlperf calibrate --show --device %s' lists its evidence\n", a.device);
    return EXIT_OK;
}
