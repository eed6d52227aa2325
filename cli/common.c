/* cli/common.c — what every command shares: common options, strict argument parsing
 * with one-line errors, database and machine set-up, and number formatting. */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "predictor/machine_pricer.h"
#include "microbench/mb.h"
#include "models/model_json.h"
#include "models/plan.h"
#include "models/transformer.h"
#include "ops/comm.h"
#include "ops/ops.h"

int cli_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    /* under mpirun the ranks on a node share its cores */
    long per_rank = n / comm_env_local_size();
    return per_rank > 0 ? (int)per_rank : 1;
}

int cli_error(const Cli *cli, int code, const char *fmt, ...)
{
    /* The line goes out in one write: under mpirun every rank may fail at once, and a
     * line written piecemeal interleaves with the others' and with mpirun's own. */
    char line[2048];
    int n;
    if (comm_env_size() > 1) /* which rank failed, in a job's merged stderr */
        n = snprintf(line, sizeof line, "dlperf %s (rank %d of %d): ", cli->cmd, comm_env_rank(),
                     comm_env_size());
    else
        n = snprintf(line, sizeof line, "dlperf %s: ", cli->cmd);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof line)
        n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n;
    if (len > sizeof line - 2) /* truncated: the newline still ends it */
        len = sizeof line - 2;
    line[len++] = '\n';
    fflush(stderr);
    for (size_t off = 0; off < len;) {
        ssize_t w = write(STDERR_FILENO, line + off, len - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    return code;
}

int cli_parse(Cli *cli, int argc, char **argv, const struct option *longopts, CliOptFn fn, void *ctx,
              const char *usage)
{
    opterr = 0; /* our messages, one line, naming the command */
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        int rc;
        if (c == '?' || c == ':') {
            const char *opt = argv[optind - 1];
            return c == ':' ? cli_error(cli, EXIT_USAGE, "option '%s' needs a value; see 'dlperf %s --help'", opt,
                                        cli->cmd)
                            : cli_error(cli, EXIT_USAGE, "unknown option '%s'; see 'dlperf %s --help'", opt,
                                        cli->cmd);
        }
        if (c >= OPT_DB && c <= OPT_NO_QUIRK)
            rc = cli_common_option(cli, c, optarg);
        else
            rc = fn(cli, c, optarg, ctx);
        if (rc == -1) {
            fputs(usage, stdout);
            return -1;
        }
        if (rc != 0)
            return rc;
    }
    /* Plans lay out per-thread workspace, so the kernels' thread count is set before any
     * plan is built. */
    ops_set_threads(cli->threads);
    return 0;
}

int cli_parse_int(const Cli *cli, const char *opt, const char *val, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (!*val || *end || errno == ERANGE || v < min || v > max)
        return cli_error(cli, EXIT_USAGE, "%s '%s': expected an integer from %ld to %ld", opt, val, min, max);
    *out = (int)v;
    return 0;
}

int cli_parse_bytes(const Cli *cli, const char *opt, const char *val, double *out)
{
    static const struct {
        const char *unit;
        double factor;
    } units[] = {{"", 1},           {"B", 1},         {"K", 0x1p10},   {"KiB", 0x1p10}, {"KB", 1e3},
                 {"M", 0x1p20},     {"MiB", 0x1p20},  {"MB", 1e6},     {"G", 0x1p30},   {"GiB", 0x1p30},
                 {"GB", 1e9},       {"T", 0x1p40},    {"TiB", 0x1p40}, {"TB", 1e12}};
    char *end;
    errno = 0;
    const double v = strtod(val, &end);
    if (end != val && errno == 0 && isfinite(v) && v > 0)
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strcmp(end, units[i].unit) == 0) {
                *out = v * units[i].factor;
                return 0;
            }
    return cli_error(cli, EXIT_USAGE, "%s '%s': expected a positive size such as 80GB, 16GiB or 512M (K, M, G, T "
                     "and KiB .. TiB are powers of 1024, KB .. TB powers of 1000)", opt, val);
}

int cli_common_option(Cli *cli, int id, const char *arg)
{
    switch (id) {
    case OPT_DB:
        if (!*arg)
            return cli_error(cli, EXIT_USAGE, "--db '': expected a file path");
        snprintf(cli->db_path, sizeof cli->db_path, "%s", arg);
        return 0;
    case OPT_JSON:
        cli->json = true;
        return 0;
    case OPT_THREADS: {
        /* More threads than cores only oversubscribes; allow up to 4x for experiments. */
        long max = 4L * cli_default_threads();
        if (cli_parse_int(cli, "--threads", arg, 1, max, &cli->threads) != 0)
            return EXIT_USAGE;
        cli->threads_given = true;
        return 0;
    }
    case OPT_HELP:
        return -1;
    case OPT_MODEL_FILE:
        cli->model_file = arg;
        return 0;
    case OPT_NO_QUIRK:
        cli->no_quirk = true;
        return 0;
    }
    return EXIT_USAGE;
}

const ModelSpec *cli_model(const Cli *cli, const char *name)
{
    const ModelSpec *m = zoo_find(name);
    if (!m) {
        char names[1024]; /* every zoo name (27 now, about 330 characters) */
        zoo_names(names, sizeof names);
        cli_error(cli, EXIT_USAGE, "unknown model '%s'; known models: %s (see 'dlperf models')", name, names);
        return NULL;
    }
    if (cli->no_quirk) {
        const ModelSpec *plain = zoo_without_quirk(m);
        if (!plain) {
            char names[256];
            zoo_quirk_names(names, sizeof names);
            cli_error(cli, EXIT_USAGE, "--no-quirk: %s keeps no reference quirk; the models that do: %s", name,
                      names);
        }
        return plain;
    }
    return m;
}

/* The model file of this process, loaded once; it lives until exit as the zoo's models do,
 * and is freed then (a leak checker sees no loss). */
static ModelSpec *model_file_loaded;

static void model_file_free(void)
{
    model_free(model_file_loaded);
    model_file_loaded = NULL;
}

const ModelSpec *cli_model_file(const Cli *cli, char *err, size_t errlen)
{
    if (!model_file_loaded) {
        if (!(model_file_loaded = model_json_load(cli->model_file, err, errlen)))
            return NULL;
        atexit(model_file_free);
    }
    return model_file_loaded;
}

/* The shares this process built: their layers are freed at exit (a leak checker sees no loss). */
enum { TP_SHARES_MAX = 128 };
static ModelSpec tp_shares[TP_SHARES_MAX];
static int ntp_shares;

static void tp_shares_free(void)
{
    for (int i = 0; i < ntp_shares; i++)
        free((void *)tp_shares[i].layers);
    ntp_shares = 0;
}

const ModelSpec *cli_tp_share(const Cli *cli, const ModelSpec *m, int tp)
{
    char err[512];
    if (ntp_shares == TP_SHARES_MAX) {
        cli_error(cli, EXIT_USAGE, "--tp %d: at most %d models split in one command", tp, TP_SHARES_MAX);
        return NULL;
    }
    if (transformer_tensor_parallel(m, tp, &tp_shares[ntp_shares], err, sizeof err) != 0) {
        cli_error(cli, EXIT_USAGE, "--tp %d: %s", tp, err);
        return NULL;
    }
    if (ntp_shares++ == 0)
        atexit(tp_shares_free);
    return &tp_shares[ntp_shares - 1];
}

int cli_model_plan(const Cli *cli, int argc, char **argv, int batch, const ModelSpec **m, Plan *p)
{
    char err[512];
    if (cli->model_file) {
        if (optind != argc)
            return cli_error(cli, EXIT_USAGE, "give either a MODEL or --model-file, not both ('%s')", argv[optind]);
        if (cli->no_quirk)
            return cli_error(cli, EXIT_USAGE, "--no-quirk applies to zoo models; a model file says its own layers");
        const ModelSpec *loaded = cli_model_file(cli, err, sizeof err);
        if (!loaded)
            return cli_error(cli, EXIT_USAGE, "%s", err);
        *m = loaded;
    } else {
        if (optind != argc - 1)
            return cli_error(cli, EXIT_USAGE, "expected one MODEL (see 'dlperf models') or --model-file, got %d "
                             "operands", argc - optind);
        if (!(*m = cli_model(cli, argv[optind])))
            return EXIT_USAGE;
    }
    if (plan_build(*m, batch ? batch : (*m)->default_batch, p, err, sizeof err) != 0) {
        if (cli->model_file)
            return cli_error(cli, EXIT_USAGE, "%s: %s", cli->model_file, err);
        return cli_error(cli, EXIT_USAGE, "%s", err);
    }
    return 0;
}

Db *cli_db_open(const Cli *cli)
{
    Db *db;
    char err[1024];
    if (db_open(cli->db_path, &db, err, sizeof err) != 0) {
        cli_error(cli, EXIT_FAIL, "%s", err);
        return NULL;
    }
    return db;
}

int cli_machine(const Cli *cli, Db *db, MachineRow *m)
{
    mb_machine_detect(m);
    /* a calibration whose process is gone (killed, or its machine rebooted) is marked
     * interrupted by the next dlperf that looks at this machine */
    if (db_machine_upsert(db, m) != 0 || db_calibration_reap(db, m->id) != 0)
        return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    return 0;
}

void cli_software(const Cli *cli, SoftwareInfo *sw)
{
    mb_software_detect(sw, cli->threads);
    snprintf(sw->git_commit, sizeof sw->git_commit, "%s", dlperf_git_commit());
    snprintf(sw->blas_choice, sizeof sw->blas_choice, "%s", blas_choice());
}

int cli_calibration(const Cli *cli, Db *db, const MachineRow *m, CalibrationRow *cal, CostModel **cm)
{
    char err[1024];
    if (machine_calibration(db, m, cli->threads, cal, cm, err, sizeof err) != 0)
        return cli_error(cli, EXIT_FAIL, "%s", err);
    return 0;
}

RunEnv cli_run_env(const Cli *cli)
{
    /* a command that stops at its own checks (cli/interrupt.h) stops a run between steps */
    RunEnv env = {.threads = cli->threads, .progress = progress_enabled(), .stop = interrupt_flag()};
    cli_software(cli, &env.sw);
    return env;
}

void print_breakdown(const StepBreakdown *b, const char *whose)
{
    char t1[32], t2[32];
    const double rate = b->step_s > 0 ? b->flops / b->step_s : 0;
    if (b->peak_flops_s > 0)
        printf("\nachieved    %.1f GFLOP/s (%.3g GFLOP a step), %.1f%% of the measured peak %.1f GFLOP/s\n", rate / 1e9,
               b->flops / 1e9, 100 * rate / b->peak_flops_s, b->peak_flops_s / 1e9);
    else
        printf("\nachieved    %.1f GFLOP/s (%.3g GFLOP a step); no calibration: the peak is not known\n", rate / 1e9,
               b->flops / 1e9);
    if (b->peak_flops_s > 0 && b->dram_bytes_s > 0) {
        printf("bottleneck  %s — compute-bound: %d ops, %s (%.0f%%); memory-bound: %d ops, %s (%.0f%%)", b->bottleneck,
               b->compute_bound_ops, fmt_time(b->compute_bound_s, t1, 32), 100 * b->compute_bound_s / b->step_s,
               b->memory_bound_ops, fmt_time(b->memory_bound_s, t2, 32), 100 * b->memory_bound_s / b->step_s);
        if (b->comm_s > 0)
            printf(", allreduce %s (%.0f%%)", fmt_time(b->comm_s, t1, 32), 100 * b->comm_s / b->step_s);
        printf("\n            (an op is compute-bound where its FLOPs at the peak outlast its bytes at %.1f GB/s DRAM;\n"
               "            the input pipeline is not in a step: synthetic batches already in memory)\n",
               b->dram_bytes_s / 1e9);
    }
    printf("\n%-14s %-12s %5s %12s %7s  (%s)\n", "op kind", "phase", "ops", "time", "share", whose);
    for (int k = 0; k < b->nkinds; k++)
        printf("%-14s %-12s %5d %12s %6.1f%%\n", b->kinds[k].kind, b->kinds[k].phase, b->kinds[k].ops,
               fmt_time(b->kinds[k].time_s, t1, 32), 100 * b->kinds[k].time_s / b->step_s);
}

cJSON *breakdown_json(const StepBreakdown *b)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "step_s", b->step_s);
    cJSON_AddNumberToObject(o, "flops", b->flops);
    cJSON_AddNumberToObject(o, "achieved_flops_s", b->step_s > 0 ? b->flops / b->step_s : 0);
    if (b->peak_flops_s > 0) {
        cJSON_AddNumberToObject(o, "peak_flops_s", b->peak_flops_s);
        cJSON_AddNumberToObject(o, "fraction_of_peak", b->flops / b->step_s / b->peak_flops_s);
    } else {
        cJSON_AddNullToObject(o, "peak_flops_s");
        cJSON_AddNullToObject(o, "fraction_of_peak");
    }
    if (b->peak_flops_s > 0 && b->dram_bytes_s > 0) {
        cJSON_AddNumberToObject(o, "dram_bytes_s", b->dram_bytes_s);
        cJSON_AddNumberToObject(o, "compute_bound_s", b->compute_bound_s);
        cJSON_AddNumberToObject(o, "compute_bound_ops", b->compute_bound_ops);
        cJSON_AddNumberToObject(o, "memory_bound_s", b->memory_bound_s);
        cJSON_AddNumberToObject(o, "memory_bound_ops", b->memory_bound_ops);
        cJSON_AddStringToObject(o, "bottleneck", b->bottleneck);
    }
    cJSON_AddNumberToObject(o, "allreduce_s", b->comm_s);
    cJSON *arr = cJSON_AddArrayToObject(o, "by_kind");
    for (int k = 0; k < b->nkinds; k++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "kind", b->kinds[k].kind);
        cJSON_AddStringToObject(e, "phase", b->kinds[k].phase);
        cJSON_AddNumberToObject(e, "ops", b->kinds[k].ops);
        cJSON_AddNumberToObject(e, "time_s", b->kinds[k].time_s);
        cJSON_AddItemToArray(arr, e);
    }
    return o;
}

int cli_parse_counts(const Cli *cli, const char *opt, const char *what, const char *spec, int *out, int max,
                     long most)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    int n = 0;
    bool pending = false; /* a "..." waits for its end */
    for (char *save = NULL, *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        if (strcmp(it, "...") == 0) {
            if (n < 2 || pending) {
                cli_error(cli, EXIT_USAGE, "%s '%s': '...' continues the two counts before it, e.g. 1,2,4,...,64", opt,
                          spec);
                return -1;
            }
            pending = true;
            continue;
        }
        char *end;
        long a = strtol(it, &end, 10), b = a;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        if (end == it || *end || a < 1 || b < a || b > most) {
            cli_error(cli, EXIT_USAGE, "%s '%s': '%s' is not a %s from 1 to %ld (or a range A-B)", opt, spec, it, what,
                      most);
            return -1;
        }
        if (pending) { /* continue the two counts before '...': a ratio, else a step */
            const long x1 = out[n - 1], x0 = out[n - 2];
            const bool geometric = x1 % x0 == 0 && x1 / x0 >= 2;
            if (!geometric && x1 <= x0) {
                cli_error(cli, EXIT_USAGE, "%s '%s': the counts before '...' must grow", opt, spec);
                return -1;
            }
            for (long x = geometric ? x1 * (x1 / x0) : x1 + (x1 - x0); x < a && n < max;
                 x = geometric ? x * (x1 / x0) : x + (x1 - x0))
                out[n++] = (int)x;
            pending = false;
        }
        for (long v = a; v <= b && n < max; v++)
            out[n++] = (int)v;
    }
    if (pending) {
        cli_error(cli, EXIT_USAGE, "%s '%s': '...' needs a last count after it", opt, spec);
        return -1;
    }
    if (n == 0) {
        cli_error(cli, EXIT_USAGE, "%s '%s': no %s", opt, spec, what);
        return -1;
    }
    return n;
}

const char *fmt_time(double s, char *buf, int n)
{
    if (s < 0)
        snprintf(buf, (size_t)n, "-");
    else if (s >= 2 * 86400.0) /* a run of days: the seconds say nothing to people */
        snprintf(buf, (size_t)n, "%.1f days", s / 86400);
    else if (s >= 4 * 3600.0)
        snprintf(buf, (size_t)n, "%.1f h", s / 3600);
    else if (s >= 100)
        snprintf(buf, (size_t)n, "%.0f s", s);
    else if (s >= 1)
        snprintf(buf, (size_t)n, "%.3f s", s);
    else if (s >= 1e-3)
        snprintf(buf, (size_t)n, "%.2f ms", s * 1e3);
    else
        snprintf(buf, (size_t)n, "%.1f us", s * 1e6);
    return buf;
}

const char *fmt_bytes(double b, char *buf, int n)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    snprintf(buf, (size_t)n, u ? "%.2f %s" : "%.0f %s", b, unit[u]);
    return buf;
}

const char *fmt_count(double v, char *buf, int n)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%.0f", v);
    int len = (int)strlen(digits), o = 0;
    for (int i = 0; i < len && o < n - 1; i++) {
        if (i > 0 && (len - i) % 3 == 0 && digits[i - 1] != '-' && o < n - 2)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

void json_print(cJSON *doc)
{
    char *s = cJSON_Print(doc);
    if (s) {
        puts(s);
        free(s);
    }
    cJSON_Delete(doc);
}

void csv_field(FILE *f, const char *s)
{
    if (!s)
        return;
    const size_t n = strlen(s);
    /* spaces at either end are kept by RFC 4180 but trimmed by some readers: quoted, they survive */
    if (!strpbrk(s, ",\"\r\n") && !(n && (s[0] == ' ' || s[n - 1] == ' '))) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

bool progress_enabled(void) { return isatty(STDERR_FILENO) && comm_env_rank() == 0; }

void cli_fitting_progress(const char *device, int points, void *ctx)
{
    if (progress_enabled())
        fprintf(stderr, "dlperf %s: fitting the evidence of %s (%d measurements; stored for next time)\n",
                (const char *)ctx, device, points);
}
