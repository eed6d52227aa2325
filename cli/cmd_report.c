/* cli/cmd_report.c — `dlperf report --out DIR`: the HTML page of what the database holds
 * (report/report.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "report/report.h"

enum { OPT_OUT = 1, OPT_SYSTEM, OPT_MODEL };

typedef struct {
    const char *out, *system, *model;
} ReportArgs;

static int report_option(Cli *cli, int id, const char *arg, void *ctx)
{
    ReportArgs *a = ctx;
    (void)cli;
    switch (id) {
    case OPT_OUT: a->out = arg; return 0;
    case OPT_SYSTEM: a->system = arg; return 0;
    case OPT_MODEL: a->model = arg; return 0;
    default: return EXIT_USAGE;
    }
}

static void report_progress(const char *what, void *ctx)
{
    (void)ctx;
    if (progress_enabled())
        fprintf(stderr, "dlperf report: %s\n", what);
}

int cmd_report(int argc, char **argv, Cli *cli)
{
    static const struct option opts[] = {{"out", required_argument, NULL, OPT_OUT},
                                         {"system", required_argument, NULL, OPT_SYSTEM},
                                         {"model", required_argument, NULL, OPT_MODEL},
                                         CLI_COMMON_OPTIONS,
                                         {0, 0, 0, 0}};
    ReportArgs a = {0};
    int rc = cli_parse(cli, argc, argv, opts, report_option, &a, command_usage("report"));
    if (rc != 0)
        return rc < 0 ? EXIT_OK : rc;
    if (optind < argc)
        return cli_error(cli, EXIT_USAGE, "unexpected argument '%s': dlperf report --out DIR", argv[optind]);
    if (!a.out)
        return cli_error(cli, EXIT_USAGE, "--out DIR is required: the folder the page and its figures go to");
    if (a.model && !zoo_find(a.model))
        return cli_error(cli, EXIT_USAGE, "--model '%s': not a zoo model ('dlperf models' lists them)", a.model);
    Db *db = cli_db_open(cli);
    if (!db)
        return EXIT_FAIL;
    MachineRow machine;
    if (cli_machine(cli, db, &machine)) {
        db_close(db);
        return EXIT_FAIL;
    }
    char title[320], err[1024];
    snprintf(title, sizeof title, "%s (%d cores), %d threads", machine.cpu_model, machine.cores, cli->threads);
    ReportOptions o = {.out_dir = a.out, .machine_id = machine.id, .threads = cli->threads, .machine_title = title,
                       .db_path = cli->db_path, .system = a.system, .model = a.model, .progress = report_progress};
    ReportSummary s;
    rc = report_write(db, &o, &s, err, sizeof err);
    db_close(db);
    if (rc != 0)
        return cli_error(cli, EXIT_FAIL, "%s", err);
    if (cli->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "page", s.page);
        cJSON *f = cJSON_AddArrayToObject(j, "figures");
        for (int i = 0; i < s.figures && i < REPORT_ITEMS_MAX; i++)
            cJSON_AddItemToArray(f, cJSON_CreateString(s.names[i]));
        cJSON_AddNumberToObject(j, "figures_without_data", s.missing);
        json_print(j);
        return EXIT_OK;
    }
    printf("wrote %s: %d figure%s", s.page, s.figures, s.figures == 1 ? "" : "s");
    for (int i = 0; i < s.figures && i < REPORT_ITEMS_MAX; i++)
        printf("%s%s", i ? ", " : " (", s.names[i]);
    printf("%s", s.figures ? ")" : "");
    if (s.missing)
        printf("; %d without data (the page says what makes them)", s.missing);
    printf(", each with its CSV and gnuplot script beside it\n");
    return EXIT_OK;
}
