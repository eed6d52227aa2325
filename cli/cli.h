/* cli/cli.h — shared pieces of the `dlperf` command line: the command table entry,
 * options every command accepts, argument parsing with one-line errors, and output
 * formatting (tables with units for people, JSON for machines).
 */
#ifndef DLPERF_CLI_H
#define DLPERF_CLI_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "db/db.h"
#include "models/model.h"
#include "predictor/predict.h"
#include "predictor/system_pricer.h"
#include "verify/runner.h"

#define DLPERF_VERSION "0.1.0"

/* Options shared by all commands. */
typedef struct {
    const char *cmd;      /* command name, for messages */
    char db_path[4096];   /* --db, DLPERF_DB or the XDG default */
    bool json;            /* --json: machine-readable output on stdout */
    int threads;          /* --threads (default: online cores) */
    bool threads_given;
    char **argv;          /* the whole command line, for re-executing (blas_select) */
    const char *model_file; /* --model-file: a JSON model instead of a zoo name */
    bool no_quirk;          /* --no-quirk: zoo models without their reference quirk */
} Cli;

typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv, Cli *cli);
    const char *summary;
    const char *usage; /* full help text of the command */
} Command;

/* Exit codes: 0 ok, 1 runtime failure, 2 bad usage/input, 128 + the signal when interrupted
 * (cli/interrupt.h). */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* getopt_long ids of the common options; commands list them with CLI_COMMON_OPTIONS and
 * hand them to cli_common_option. */
enum { OPT_DB = 1000, OPT_JSON, OPT_THREADS, OPT_HELP, OPT_MODEL_FILE, OPT_NO_QUIRK };
/* for commands that take a model: --model-file FILE instead of a zoo name, and
 * --no-quirk for the zoo models that keep a reference implementation's quirk */
#define CLI_NO_QUIRK_OPTION {"no-quirk", no_argument, NULL, OPT_NO_QUIRK}
#define CLI_MODEL_FILE_OPTION {"model-file", required_argument, NULL, OPT_MODEL_FILE}, CLI_NO_QUIRK_OPTION
#define CLI_MODEL_FILE_HELP \
    "  --model-file F   a JSON model file (docs/model-format.md) instead of a zoo MODEL\n" CLI_NO_QUIRK_HELP
#define CLI_NO_QUIRK_HELP \
    "  --no-quirk       without the reference's quirk: the convnet-benchmarks models (alexnet-owt,\n" \
    "                   googlenet, overfeat, vgg11) keep a ReLU on their 1000-way output, as the\n" \
    "                   benchmark scripts do; this makes it linear (model NAME-no-quirk)\n"
#define CLI_COMMON_OPTIONS                                                                       \
    {"db", required_argument, NULL, OPT_DB}, {"json", no_argument, NULL, OPT_JSON},              \
        {"threads", required_argument, NULL, OPT_THREADS}, {"help", no_argument, NULL, OPT_HELP}
#define CLI_COMMON_HELP                                                                          \
    "  --db FILE        database (default $DLPERF_DB or $XDG_DATA_HOME/dlperf/dlperf.db)\n"     \
    "  --threads N      threads for BLAS and kernels (default: all online cores)\n"             \
    "  --json           machine-readable JSON on stdout\n"                                      \
    "  --help           this text\n"

/* Handles a common option; returns 0, or EXIT_USAGE after printing the error, or -1 for
 * --help (caller prints usage and exits 0). */
int cli_common_option(Cli *cli, int id, const char *arg);
/* One-line error on stderr: "dlperf CMD: message". Returns EXIT_USAGE or EXIT_FAIL as given. */
int cli_error(const Cli *cli, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Parses argv with getopt_long (long options only): common options are handled here,
 * the others passed to fn(cli, id, arg, ctx) which returns 0 or an exit code. Returns 0
 * with optind at the first operand, -1 after printing usage for --help, or an exit code
 * after printing a one-line error. */
typedef int (*CliOptFn)(Cli *cli, int id, const char *arg, void *ctx);
struct option;
int cli_parse(Cli *cli, int argc, char **argv, const struct option *longopts, CliOptFn fn, void *ctx,
              const char *usage);
/* Strict integer option in [min, max]: "--batch 'x': expected an integer from 1 to 65536". */
int cli_parse_int(const Cli *cli, const char *opt, const char *val, long min, long max, int *out);
/* A list of counts from 1 to `most` (what: "node count", "batch"): "1,2,4,...,4096" (the
 * pattern of the two before '...' continued: doubling, or a constant step), "1-64" (every
 * count), or a plain list; at most max of them. The count, or -1 after a one-line error
 * naming opt. */
int cli_parse_counts(const Cli *cli, const char *opt, const char *what, const char *spec, int *out, int max,
                     long most);
/* A size in bytes: a number with an optional unit, binary K, M, G, T or KiB .. TiB, decimal
 * KB .. TB ("80GB", "16GiB", "512M"); "--device-memory 'x': expected ..." otherwise. */
int cli_parse_bytes(const Cli *cli, const char *opt, const char *val, double *out);
/* Model by CLI name (its quirk-free variant under --no-quirk), or an error listing the
 * valid names. */
const ModelSpec *cli_model(const Cli *cli, const char *name);
/* The single MODEL operand of a command (argv[optind], nothing after it) — or the model
 * of --model-file, with no operand — and its plan at `batch` (0: the model's default).
 * Prints the error and returns an exit code, or 0. */
struct Plan;
int cli_model_plan(const Cli *cli, int argc, char **argv, int batch, const ModelSpec **m, struct Plan *p);
/* The --model-file model, loaded once (it lives until exit, as the zoo's); NULL with err. */
const ModelSpec *cli_model_file(const Cli *cli, char *err, size_t errlen);
/* One of tp tensor-parallel ranks' share of m (transformer_tensor_parallel), living until
 * exit as the zoo's models do; NULL with the error printed ("--tp T: ...") where m does not
 * split so. */
const ModelSpec *cli_tp_share(const Cli *cli, const ModelSpec *m, int tp);
/* Opens the database at cli->db_path (error printed on failure). */
Db *cli_db_open(const Cli *cli);
/* Records this machine (fingerprint) in the database; sets *machine_id. */
int cli_machine(const Cli *cli, Db *db, MachineRow *m);
/* Fills the software side of a measurement: threads, BLAS core and how it was chosen,
 * compiler, git commit. */
void cli_software(const Cli *cli, SoftwareInfo *sw);
/* This machine's latest complete calibration at cli->threads and its cost model
 * (machine_calibration); prints the error and returns EXIT_FAIL. */
int cli_calibration(const Cli *cli, Db *db, const MachineRow *m, CalibrationRow *cal, CostModel **cm);
/* What a run of this command runs with: its threads, progress where stderr is a terminal,
 * and the software record (cli_software). */
RunEnv cli_run_env(const Cli *cli);
/* Online cores (the default thread count). */
int cli_default_threads(void);

/* ---- output ---- */
/* Human-readable numbers with units into a caller buffer (returned). */
const char *fmt_time(double s, char *buf, int n);   /* "12.3 ms" */
const char *fmt_bytes(double b, char *buf, int n);  /* "1.23 GiB" */
const char *fmt_count(double v, char *buf, int n);  /* "244,397,083" */
/* Where a step's time goes (pred_breakdown), for people: the FLOP rate against the
 * measured peak, the bottleneck, and the time by op kind and phase ("predicted" or
 * "measured" says whose times); and as a JSON object. */
void print_breakdown(const StepBreakdown *b, const char *whose);
cJSON *breakdown_json(const StepBreakdown *b);
/* Prints a cJSON document on stdout and frees it. */
void json_print(cJSON *doc);
/* One CSV field (RFC 4180): s as it is, or in double quotes with its quotes doubled where it
 * holds a comma, a quote, a line break or leading or trailing space. NULL writes an empty field. */
void csv_field(FILE *f, const char *s);
/* True if stderr is a terminal (progress is drawn only there). */
bool progress_enabled(void);
/* The GPU pricer's progress callback (dp_open, dp_device_evidence): a device's evidence being
 * fitted, on stderr where progress is shown; ctx: the command's name ("predict", ...). */
void cli_fitting_progress(const char *device, int points, void *ctx);

/* ---- BLAS kernel choice (cli/blas_select.c) ---- */
/* Makes sure OpenBLAS runs its fastest correct core type on this CPU, re-executing the
 * process with OPENBLAS_CORETYPE set if needed. Commands that run kernels call it after
 * their arguments are validated and before the first BLAS call. */
void blas_select(const Cli *cli);
/* How the core in use was chosen, for the records ("probed: ...", "user: ..."). */
const char *blas_choice(void);
/* The hidden probe command run in child processes. */
int cmd_blas_probe(int argc, char **argv, Cli *cli);

const char *dlperf_git_commit(void);
/* The --help text of a command (from the command table in cli/main.c). */
const char *command_usage(const char *name);

/* ---- commands ---- */
int cmd_models(int argc, char **argv, Cli *cli);
int cmd_profile(int argc, char **argv, Cli *cli);
int cmd_calibrate(int argc, char **argv, Cli *cli);
int cmd_predict(int argc, char **argv, Cli *cli);
int cmd_systems(int argc, char **argv, Cli *cli);
int cmd_sweep(int argc, char **argv, Cli *cli);
int cmd_fom(int argc, char **argv, Cli *cli);
int cmd_suite(int argc, char **argv, Cli *cli);
int cmd_report(int argc, char **argv, Cli *cli);

/* What-if options shared by predict --system and sweep (cli/cmd_sweep.c). */
typedef struct {
    const char *system;    /* spec-sheet system name */
    const char *device;    /* or one device of a sheet, on its own (no network) */
    int mode;              /* PlanMode of the step priced (PLAN_TRAIN by default) */
    bool without_own;      /* price the device as if it had no evidence of its own */
    bool no_profiles;      /* the database's GPU evidence only, not the built-in profiles */
    const char *precision; /* fp32 (default), fp16, bf16, tf32, fp64 */
    const char *allreduce; /* algorithm name (default: the system's), "all" for sweep */
    bool allow_all;
    bool overlap;          /* allreduce in buckets during backward */
    bool no_host;          /* the device time alone: no host floor per op (a compiled step) */
    int nodes;             /* predict: node count (default 1) */
    int pipeline;          /* predict: pipeline stages (model parallel), 0: data parallel */
    int micro_batches;     /* of the pipeline (default: the stages x 4) */
    int summa_n;           /* predict --summa N: a distributed N x N x N GEMM (seed 003) */
    bool csv;              /* predict: CSV on stdout */
    /* predict: a transformer under Megatron-style parallelism (predictor/transformer_parallel.h) */
    bool parallel;         /* any of the options below given (--tp, --pp, ... --search) */
    int tp, pp, micro_batch, interleave;
    bool sp, zero1, search;
    const char *recompute;
} WhatIfOpts;
/* predict --summa N --system NAME: seed 003's SUMMA estimate on the system's devices. */
int predict_summa(Cli *cli, const WhatIfOpts *o);
/* predict MODEL --system NAME: one configuration on a spec-sheet system, explained. */
int predict_on_system(Cli *cli, const ModelSpec *m, int batch, const WhatIfOpts *o);

/* What every what-if command needs: the database, this machine's calibration where one
 * is used (for this machine; for another device only what no GPU evidence prices), and the
 * system made ready to price (predictor/system_pricer.h). */
typedef struct {
    Db *db;
    MachineRow machine;
    CalibrationRow cal; /* id 0: none used */
    CostModel *cm;
    SystemPricer sp;
    bool all_algos;
} WhatIf;
int whatif_open(Cli *cli, const WhatIfOpts *o, WhatIf *w);
void whatif_close(WhatIf *w);
/* predict MODEL --system NAME --tp T --pp P | --search: the transformer's iteration and
 * memory per GPU under tensor, sequence, pipeline and data parallelism (cli/predict_parallel.c);
 * batch is the global batch. */
int predict_transformer_parallel(Cli *cli, const WhatIf *w, const ModelSpec *m, int batch, const WhatIfOpts *o);
int cmd_run(int argc, char **argv, Cli *cli);
int cmd_validate(int argc, char **argv, Cli *cli);
int cmd_import(int argc, char **argv, Cli *cli);

#endif
