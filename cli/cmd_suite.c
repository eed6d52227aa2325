/* cli/cmd_suite.c — `dlperf suite`: seed 000's suite run on this machine under its rules,
 * its figures of merit computed and the run stored (`suite --show` shows it again).
 *
 * Each benchmark runs in throughput mode: N instances at once, each a process of its own
 * (`dlperf suite --instance NAME`, which runs one instance and prints its times as JSON),
 * N the most this machine holds: one per core at least one thread each, as many as its
 * available memory holds. An instance's times, as the suite defines them:
 *   convnets  forward and forward-backward per batch, the mean over 100 steps after 10
 *             warm-up steps (convnet-benchmarks' protocol);
 *   LSTM      the same per sample;
 *   CANDLE    the reference configuration's training run with its evaluation, and the
 *             accuracy reached (P1B1: the test correlation; P3B1: the geometric mean of
 *             its three tasks' macro and micro F1, the suite's "6 accuracy values");
 *   ResNet-50 timed iterations, and the 90 ImageNet epochs they project to (marked as
 *             projected: one instance, where the rule asks for 50 on 2% of a system each).
 * The FOMs are suite/rules.h's against the seed's Titan table; ResNet-50's against Titan as
 * dlperf prices it (the seed gives no time), scaled by its instances over the reference's 5
 * (the rule's factor 10 is 50 / 5). The data sets are the zoo's synthetic stand-ins, so the
 * seed's reference accuracies are not the criterion: the accuracy reached is recorded and
 * shown, and no run is refused for it. --quick: a test of the machinery in a few minutes (a
 * sixteenth of each batch, 2 timed steps; CANDLE one epoch of 4 batches), labelled as not a
 * valid FOM.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <sys/prctl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "predictor/machine_pricer.h"
#include "models/fit.h"
#include "models/plan.h"
#include "models/train.h"
#include "suite/fom.h"

extern char **environ;

enum { OPT_QUICK = 1, OPT_ONLY, OPT_INSTANCES, OPT_SHOW, OPT_INSTANCE, OPT_CSV, OPT_COMBINED };

typedef struct {
    bool quick, show, csv, combined;
    const char *only, *instance;
    int instances;
    long show_id;
} SuiteArgs;

static int suite_option(Cli *cli, int id, const char *arg, void *ctx)
{
    SuiteArgs *a = ctx;
    switch (id) {
    case OPT_QUICK: a->quick = true; return 0;
    case OPT_ONLY: a->only = arg; return 0;
    case OPT_INSTANCES: return cli_parse_int(cli, "--instances", arg, 1, 4096, &a->instances);
    case OPT_SHOW: a->show = true; return 0;
    case OPT_COMBINED: a->combined = true; return 0;
    case OPT_INSTANCE: a->instance = arg; return 0;
    case OPT_CSV: a->csv = true; return 0;
    default: return EXIT_USAGE;
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int quick_batch(const SuiteBenchmark *b, const ModelSpec *m, bool quick)
{
    return quick && b->group != SUITE_CANDLE ? (m->default_batch / 16 > 0 ? m->default_batch / 16 : 1)
                                             : m->default_batch;
}

/* ---- one instance (a child process): its times as one JSON object on stdout ---- */

static int steps_mean(const Cli *cli, const ModelSpec *m, int batch, PlanMode mode, int warmup, int steps,
                      double *mean_s, double *median_s)
{
    MachineRow machine = {0};
    RunResult r;
    const RunEnv env = cli_run_env(cli);
    char err[1024];
    if (run_train(&env, m, batch, mode, warmup, steps, false, &machine, "none", 0, &r, err, sizeof err)) {
        if (r.failed)
            run_result_free(&r);
        cli_error(cli, EXIT_FAIL, "%s", err);
        return -1;
    }
    *mean_s = r.row.mean_s;
    if (median_s)
        *median_s = r.row.median_s;
    run_result_free(&r);
    return 0;
}

static int run_instance(Cli *cli, const SuiteBenchmark *b, bool quick)
{
    const ModelSpec *m = zoo_find(b->model);
    if (!m)
        return cli_error(cli, EXIT_FAIL, "internal: zoo model '%s' missing", b->model);
    /* quick: a sixteenth of the batch (CANDLE's own, over 4 batches): a test of the
     * machinery in a minute, not a measurement of the benchmark */
    const int batch = quick_batch(b, m, quick);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "benchmark", b->name);
    cJSON_AddNumberToObject(j, "batch", batch);
    cJSON_AddNumberToObject(j, "threads", cli->threads);
    const double t0 = now_s();
    if (b->group == SUITE_CONVNET || b->group == SUITE_LSTM) {
        const int warmup = quick ? 1 : 10, steps = quick ? 2 : 100;
        double fwd, fb;
        if (steps_mean(cli, m, batch, PLAN_INFERENCE, warmup, steps, &fwd, NULL) ||
            steps_mean(cli, m, batch, PLAN_FWD_BWD, warmup, steps, &fb, NULL)) {
            cJSON_Delete(j);
            return EXIT_FAIL;
        }
        const double per = b->metric == SUITE_SAMPLE_S ? 1.0 / batch : 1.0;
        cJSON_AddNumberToObject(j, "time_s", fb * per);
        cJSON_AddNumberToObject(j, "fwd_s", fwd * per);
        cJSON_AddNumberToObject(j, "steps", steps);
    } else if (b->group == SUITE_CANDLE) {
        FitOptions fo = {.epochs = quick ? 1 : (m->epochs > 0 ? m->epochs : 1), .seed = 2017,
                         .max_samples = quick ? 4 * m->default_batch : 0};
        FitResult r;
        char err[512];
        if (fit_run(m, &fo, &r, err, sizeof err) != 0) {
            cJSON_Delete(j);
            return cli_error(cli, EXIT_FAIL, "%s", err);
        }
        cJSON_AddNumberToObject(j, "time_s", r.train_s + r.eval_s);
        cJSON_AddNumberToObject(j, "epochs", r.epochs);
        double acc = NAN, logsum = 0;
        int nf1 = 0;
        const char *name = "";
        for (int i = 0; i < r.nmetrics; i++) {
            if (strcmp(r.metrics[i].name, "test_correlation") == 0)
                acc = r.metrics[i].value, name = "test correlation";
            else if (strstr(r.metrics[i].name, "_f1_") && r.metrics[i].value > 0)
                logsum += log(r.metrics[i].value), nf1++;
        }
        if (nf1 > 0)
            acc = exp(logsum / nf1), name = "geometric mean of the tasks' macro and micro F1";
        if (isfinite(acc)) {
            cJSON_AddNumberToObject(j, "accuracy", acc);
            cJSON_AddStringToObject(j, "accuracy_name", name);
        }
        cJSON_AddStringToObject(j, "data", r.data_source);
    } else { /* ResNet-50: timed iterations projected to 90 epochs */
        const int warmup = quick ? 1 : 2, steps = quick ? 2 : 10;
        double mean, median;
        if (steps_mean(cli, m, batch, PLAN_TRAIN, warmup, steps, &mean, &median)) {
            cJSON_Delete(j);
            return EXIT_FAIL;
        }
        const double iters = ceil((double)SUITE_IMAGENET_TRAIN / batch) * SUITE_RESNET_EPOCHS;
        cJSON_AddNumberToObject(j, "time_s", iters * median);
        cJSON_AddNumberToObject(j, "iteration_s", median);
        cJSON_AddNumberToObject(j, "steps", steps);
        cJSON_AddBoolToObject(j, "projected", true);
    }
    cJSON_AddNumberToObject(j, "wall_s", now_s() - t0);
    char *s = cJSON_PrintUnformatted(j);
    printf("%s\n", s ? s : "{}");
    free(s);
    cJSON_Delete(j);
    return EXIT_OK;
}

/* ---- the run: instances spawned, times collected ---- */

typedef struct {
    pid_t pid;
    FILE *out;
} Child;

/* How many instances of b this machine holds at once: a core each at least, and the
 * memory a run of it allocates (its plan's arenas and data batches; CANDLE's data set). */
static int instances_for(const SuiteBenchmark *b, bool quick, int cores, double *need_bytes)
{
    const ModelSpec *m = zoo_find(b->model);
    Plan p;
    char err[256];
    const PlanMode mode = b->group == SUITE_CONVNET || b->group == SUITE_LSTM ? PLAN_FWD_BWD : PLAN_TRAIN;
    double need = 0;
    if (m && plan_build_mode(m, quick_batch(b, m, quick), mode, &p, err, sizeof err) == 0) {
        need = trainer_bytes_needed(&p, trainer_data_batches(100));
        plan_free(&p);
    }
    if (m && b->group == SUITE_CANDLE) /* the data set, inputs and targets */
        need += 2.0 * 4.0 * shape_count(&m->input) * (double)(m->train_samples + m->test_samples);
    need += machine_runtime_bytes();
    *need_bytes = need;
    if (b->group == SUITE_RESNET)
        return 1;
    const double avail = mem_available_bytes();
    int n = cores;
    if (need > 0 && avail > 0 && floor(0.9 * avail / need) < n)
        n = (int)floor(0.9 * avail / need);
    return n < 1 ? 1 : n;
}

static int spawn_instance(const Cli *cli, const SuiteBenchmark *b, bool quick, int threads, Child *c)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    char th[16];
    snprintf(th, sizeof th, "%d", threads);
    char *argv[] = {"dlperf", "suite", "--instance", (char *)b->name, "--threads", th, quick ? "--quick" : NULL, NULL};
    const int rc = posix_spawn(&c->pid, "/proc/self/exe", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    (void)cli;
    if (rc != 0) {
        close(fd[0]);
        errno = rc;
        return -1;
    }
    c->out = fdopen(fd[0], "r");
    return c->out ? 0 : -1;
}

/* Runs n instances of b at once; fills the stored row's times (the maximum across them) and
 * the accuracy (the slowest instance's). 0, or -1 with err. */
static int run_benchmark(const Cli *cli, const SuiteBenchmark *b, bool quick, int n, int threads,
                         SuiteResultRow *row, char *err, size_t errlen)
{
    Child *c = calloc((size_t)n, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory for %d instances", n);
        return -1;
    }
    int started = 0;
    for (; started < n && !interrupt_requested(); started++) {
        if (spawn_instance(cli, b, quick, threads, &c[started]) != 0) {
            snprintf(err, errlen, "%s: could not start instance %d: %s", b->name, started + 1, strerror(errno));
            break;
        }
        /* a signal now reaches the instance through the handler; one that came before it
         * was registered is passed on here */
        interrupt_forward_to(started, c[started].pid);
        if (interrupt_requested())
            kill(c[started].pid, interrupt_requested());
    }
    int failed = started < n ? 1 : 0;
    row->time_s = 0;
    row->fwd_s = NAN;
    row->accuracy = NAN;
    for (int i = 0; i < started; i++) {
        char line[8192] = "";
        const bool got = fgets(line, sizeof line, c[i].out) != NULL;
        fclose(c[i].out);
        int status = 0;
        while (waitpid(c[i].pid, &status, 0) < 0 && errno == EINTR)
            ;
        interrupt_forward_to(i, 0);
        cJSON *j = got ? cJSON_Parse(line) : NULL;
        const cJSON *t = j ? cJSON_GetObjectItem(j, "time_s") : NULL;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !cJSON_IsNumber(t)) {
            if (!failed)
                snprintf(err, errlen, "%s: instance %d of %d failed (%s; its error is above)", b->name, i + 1, n,
                         WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no result");
            failed = 1;
            cJSON_Delete(j);
            continue;
        }
        if (i < SUITE_TIMES_MAX)
            row->instance_s[i] = t->valuedouble;
        if (t->valuedouble >= row->time_s) { /* the slowest instance's figures */
            row->time_s = t->valuedouble;
            const cJSON *f = cJSON_GetObjectItem(j, "fwd_s"), *a = cJSON_GetObjectItem(j, "accuracy"),
                        *an = cJSON_GetObjectItem(j, "accuracy_name");
            if (cJSON_IsNumber(f))
                row->fwd_s = fmax(isnan(row->fwd_s) ? 0 : row->fwd_s, f->valuedouble);
            if (cJSON_IsNumber(a))
                row->accuracy = a->valuedouble;
            if (cJSON_IsString(an))
                snprintf(row->accuracy_name, sizeof row->accuracy_name, "%s", an->valuestring);
            row->projected = cJSON_IsTrue(cJSON_GetObjectItem(j, "projected"));
            const cJSON *bt = cJSON_GetObjectItem(j, "batch");
            if (cJSON_IsNumber(bt))
                row->batch = bt->valueint;
        }
        cJSON_Delete(j);
    }
    free(c);
    return failed ? -1 : 0;
}

/* Titan's ResNet-50 as dlperf prices it: 5 instances on 20% of it (suite/fom.h). */
static double titan_resnet_s(const Cli *cli, Db *db, char *err, size_t errlen)
{
    SystemSpec titan;
    if (system_load(db, "titan", &titan, err, errlen) != 0)
        return -1;
    SystemPricerOpts so = {.prec = PREC_FP32, .mode = PLAN_TRAIN, .progress = cli_fitting_progress,
                           .ctx = (void *)cli->cmd};
    SystemPricer sp;
    if (sysp_open(db, &titan, NULL, &so, &sp, err, errlen) != 0)
        return -1;
    FomBenchTime t;
    const FomOptions ref = {.reference = true};
    const int rc = fom_bench_time(&sp, suite_benchmark("resnet50"), &ref, &t, err, errlen);
    sysp_close(&sp);
    return rc == 0 && t.fits ? t.time_s : -1;
}

/* A group's FOM from the stored rows (the geometric mean of its benchmarks'); false when
 * not all of its benchmarks ran (*ran of *want did). */
static bool group_fom_of(const SuiteResultRow *rows, int n, SuiteGroup k, double *out, int *ran, int *want)
{
    double v[SUITE_BENCHMARKS];
    int m = 0, w = 0;
    for (int i = 0; i < SUITE_BENCHMARKS; i++)
        if (suite_benchmarks[i].group == k) {
            w++;
            for (int j = 0; j < n; j++)
                if (strcmp(rows[j].benchmark, suite_benchmarks[i].name) == 0)
                    v[m++] = rows[j].fom;
        }
    *out = m == w ? suite_group_fom(v, m) : NAN;
    *ran = m, *want = w;
    return m == w;
}

/* The overall FOM of rows where every group has all its benchmarks, else NaN. */
static double overall_fom_of(const SuiteResultRow *rows, int n)
{
    double g[SUITE_GROUP_COUNT];
    for (int k = 0; k < SUITE_GROUP_COUNT; k++) {
        int m, want;
        if (!group_fom_of(rows, n, (SuiteGroup)k, &g[k], &m, &want))
            return NAN;
    }
    return suite_overall_fom(g);
}

static void print_run(const SuiteRunRow *r, const SuiteResultRow *rows, int n, const MachineRow *machine)
{
    char b[6][40];
    if (r->id > 0) {
        printf("seed 000's suite on this machine (%s, %d cores), run %lld, %s%s, %s, %d threads, OpenBLAS %s\n",
               machine->cpu_model, machine->cores, (long long)r->id, r->mode,
               strcmp(r->mode, "quick") == 0 ? " (a short run: NOT a valid FOM)" : "", r->precision, r->threads,
               r->blas_core);
        printf("started %s, %s%s%s\n\n", r->started_at, r->status, r->finished_at[0] ? " at " : "", r->finished_at);
    } else {
        printf("seed 000's suite on this machine (%s, %d cores), combined: each benchmark's latest result of the full\n"
               "protocol at %d threads, from the runs in the last column\n\n", machine->cpu_model, machine->cores,
               r->threads);
    }
    printf("%-10s %9s %7s %6s  %-24s %-18s %-18s %9s %5s\n", "# bench", "instances", "threads", "batch", "time (max)",
           "forward (max)", "Titan (seed)", "FOM", "run");
    for (int i = 0; i < n; i++) {
        const SuiteResultRow *x = &rows[i];
        const SuiteBenchmark *bm = suite_benchmark(x->benchmark);
        const char *unit = bm && bm->metric == SUITE_BATCH_S ? "/batch" : bm && bm->metric == SUITE_SAMPLE_S ? "/sample" : "";
        char t[48], f[48], ref[48];
        snprintf(t, sizeof t, "%s%s%s", fmt_time(x->time_s, b[0], 40), unit, x->projected ? " (projected)" : "");
        if (isfinite(x->fwd_s))
            snprintf(f, sizeof f, "%s%s", fmt_time(x->fwd_s, b[1], 40), unit);
        else
            snprintf(f, sizeof f, "-");
        if (isfinite(x->reference_s))
            snprintf(ref, sizeof ref, "%s%s%s", fmt_time(x->reference_s, b[2], 40), unit,
                     bm && bm->titan_s > 0 ? "" : " (priced)");
        else
            snprintf(ref, sizeof ref, "-");
        printf("%-10s %9d %7d %6d  %-24s %-18s %-18s %9.4g %5lld\n", x->benchmark, x->instances,
               x->threads_per_instance, x->batch, t, f, ref, x->fom, (long long)x->suite_id);
        if (isfinite(x->accuracy))
            printf("%-10s   %s %.4f (the seed's %.4f is on its real data; these are synthetic stand-ins)\n", "",
                   x->accuracy_name, x->accuracy, bm ? bm->titan_accuracy : 0);
        if (x->note[0])
            printf("%-10s   %s\n", "", x->note);
    }
    double g[SUITE_GROUP_COUNT];
    bool all = true;
    printf("\n%-10s %6s %9s\n", "# group", "weight", "FOM");
    for (int k = 0; k < SUITE_GROUP_COUNT; k++) {
        int m, want;
        const bool ran = group_fom_of(rows, n, (SuiteGroup)k, &g[k], &m, &want);
        all = all && ran;
        if (ran)
            printf("%-10s %6.0f %9.4g\n", suite_group_name((SuiteGroup)k), suite_group_weight((SuiteGroup)k), g[k]);
        else
            printf("%-10s %6.0f %9s  (%d of its %d benchmarks run)\n", suite_group_name((SuiteGroup)k),
                   suite_group_weight((SuiteGroup)k), "-", m, want);
    }
    if (all)
        printf("%-10s %6s %9.4g%s\n", "overall", "", suite_overall_fom(g),
               strcmp(r->mode, "quick") == 0 ? "  (quick: not a valid FOM)" : "");
    if (isfinite(r->wall_s))
        printf("\nthe run took %s\n", fmt_time(r->wall_s, b[3], 40));
}

static void print_run_json(const SuiteRunRow *r, const SuiteResultRow *rows, int n)
{
    cJSON *j = cJSON_CreateObject();
    if (r->id > 0)
        cJSON_AddNumberToObject(j, "suite_run_id", (double)r->id);
    else
        cJSON_AddNullToObject(j, "suite_run_id"); /* combined: each benchmark names its run */
    cJSON_AddStringToObject(j, "mode", r->mode);
    cJSON_AddBoolToObject(j, "valid_fom", strcmp(r->mode, "full") == 0);
    cJSON_AddStringToObject(j, "run", r->run);
    cJSON_AddStringToObject(j, "precision", r->precision);
    cJSON_AddStringToObject(j, "status", r->status);
    cJSON_AddStringToObject(j, "started_at", r->started_at);
    cJSON_AddStringToObject(j, "finished_at", r->finished_at);
    cJSON_AddNumberToObject(j, "threads", r->threads);
    if (isfinite(r->wall_s))
        cJSON_AddNumberToObject(j, "wall_s", r->wall_s);
    if (isfinite(r->overall_fom))
        cJSON_AddNumberToObject(j, "overall_fom", r->overall_fom);
    cJSON *bs = cJSON_AddArrayToObject(j, "benchmarks");
    for (int i = 0; i < n; i++) {
        const SuiteResultRow *x = &rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "benchmark", x->benchmark);
        cJSON_AddNumberToObject(o, "suite_run_id", (double)x->suite_id);
        cJSON_AddNumberToObject(o, "instances", x->instances);
        cJSON_AddNumberToObject(o, "threads_per_instance", x->threads_per_instance);
        cJSON_AddNumberToObject(o, "batch", x->batch);
        cJSON_AddNumberToObject(o, "time_s", x->time_s);
        cJSON *it = cJSON_AddArrayToObject(o, "instance_time_s");
        for (int k = 0; k < x->instances && k < SUITE_TIMES_MAX; k++)
            cJSON_AddItemToArray(it, cJSON_CreateNumber(x->instance_s[k]));
        if (isfinite(x->fwd_s))
            cJSON_AddNumberToObject(o, "fwd_s", x->fwd_s);
        if (isfinite(x->accuracy)) {
            cJSON_AddNumberToObject(o, "accuracy", x->accuracy);
            cJSON_AddStringToObject(o, "accuracy_name", x->accuracy_name);
        }
        cJSON_AddBoolToObject(o, "projected", x->projected);
        if (isfinite(x->reference_s))
            cJSON_AddNumberToObject(o, "reference_s", x->reference_s);
        cJSON_AddNumberToObject(o, "fom", x->fom);
        cJSON_AddItemToArray(bs, o);
    }
    json_print(j);
}

static void print_run_csv(const SuiteRunRow *r, const SuiteResultRow *rows, int n)
{
    printf("suite_run,mode,benchmark,unit,instances,threads_per_instance,batch,time,forward,projected,accuracy,"
           "accuracy_name,reference,fom\n");
    for (int i = 0; i < n; i++) {
        const SuiteResultRow *x = &rows[i];
        const SuiteBenchmark *bm = suite_benchmark(x->benchmark);
        printf("%lld,%s,%s,%s,%d,%d,%d,%.9g,", (long long)x->suite_id, r->mode, x->benchmark,
               bm ? suite_metric_unit(bm->metric) : "s", x->instances, x->threads_per_instance, x->batch, x->time_s);
        if (isfinite(x->fwd_s))
            printf("%.9g", x->fwd_s);
        printf(",%d,", x->projected ? 1 : 0);
        if (isfinite(x->accuracy))
            printf("%.6g", x->accuracy);
        putchar(',');
        csv_field(stdout, x->accuracy_name);
        putchar(',');
        if (isfinite(x->reference_s))
            printf("%.9g", x->reference_s);
        printf(",%.9g\n", x->fom);
    }
    if (isfinite(r->overall_fom))
    {
        char id[24] = "combined";
        if (r->id > 0)
            snprintf(id, sizeof id, "%lld", (long long)r->id);
        printf("%s,%s,(overall),,,,,,,,,,,%.9g\n", id, r->mode, r->overall_fom);
    }
}

static void print_any(const Cli *cli, bool csv, const SuiteRunRow *r, const SuiteResultRow *rows, int n,
                      const MachineRow *machine)
{
    if (cli->json)
        print_run_json(r, rows, n);
    else if (csv)
        print_run_csv(r, rows, n);
    else
        print_run(r, rows, n, machine);
}

static int suite_order(const void *a, const void *b)
{
    const SuiteBenchmark *x = suite_benchmark(((const SuiteResultRow *)a)->benchmark),
                         *y = suite_benchmark(((const SuiteResultRow *)b)->benchmark);
    const long i = x ? x - suite_benchmarks : SUITE_BENCHMARKS, j = y ? y - suite_benchmarks : SUITE_BENCHMARKS;
    return (i > j) - (i < j);
}

/* Stored run id (0: this machine's latest complete one) into r and rows; an exit code. */
static int load_run(Cli *cli, Db *db, const MachineRow *machine, long id, SuiteRunRow *r, SuiteResultRow **rows,
                    int *n)
{
    const int rc = db_suite_get(db, id, machine->id, r, rows, n);
    if (rc == DB_NOT_FOUND && id > 0)
        return cli_error(cli, EXIT_USAGE, "no suite run %ld in %s", id, cli->db_path);
    if (rc == DB_NOT_FOUND)
        return cli_error(cli, EXIT_USAGE, "no complete suite run of this machine in %s (dlperf suite runs one)",
                         cli->db_path);
    if (rc != 0)
        return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    if (strcmp(r->status, "running") == 0 && r->pid > 0 && kill((pid_t)r->pid, 0) != 0)
        snprintf(r->status, sizeof r->status, "interrupted");
    return EXIT_OK;
}

/* --combined: each benchmark's latest full-protocol result on this machine, whichever run
 * it came from, so that a suite too long for one sitting is run in parts (--only) and
 * scored whole; r describes them as one run (id 0). An exit code. */
static int load_combined(Cli *cli, Db *db, const MachineRow *machine, SuiteRunRow *r, SuiteResultRow **rows, int *n)
{
    if (db_suite_combined(db, machine->id, cli->threads, rows, n) != 0)
        return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    if (*n == 0) {
        free(*rows);
        *rows = NULL;
        return cli_error(cli, EXIT_USAGE, "no complete full-protocol suite result of this machine at %d threads in %s "
                         "(dlperf suite [--only B,...] runs them; --quick ones do not count)", cli->threads,
                         cli->db_path);
    }
    qsort(*rows, (size_t)*n, sizeof **rows, suite_order);
    *r = (SuiteRunRow){.threads = cli->threads, .overall_fom = overall_fom_of(*rows, *n), .wall_s = NAN};
    snprintf(r->mode, sizeof r->mode, "full");
    snprintf(r->run, sizeof r->run, "base");
    snprintf(r->precision, sizeof r->precision, "fp32");
    snprintf(r->status, sizeof r->status, "combined");
    return EXIT_OK;
}

static int show(Cli *cli, long id, bool combined, bool csv)
{
    Db *db = cli_db_open(cli);
    if (!db)
        return EXIT_FAIL;
    MachineRow machine;
    SuiteRunRow r;
    SuiteResultRow *rows = NULL;
    int n = 0, rc = cli_machine(cli, db, &machine) ? EXIT_FAIL : EXIT_OK;
    if (rc == EXIT_OK)
        rc = combined ? load_combined(cli, db, &machine, &r, &rows, &n)
                      : load_run(cli, db, &machine, id, &r, &rows, &n);
    db_close(db);
    if (rc == EXIT_OK)
        print_any(cli, csv, &r, rows, n, &machine);
    free(rows);
    return rc;
}

int cmd_suite(int argc, char **argv, Cli *cli)
{
    static const struct option opts[] = {{"quick", no_argument, NULL, OPT_QUICK},
                                         {"only", required_argument, NULL, OPT_ONLY},
                                         {"instances", required_argument, NULL, OPT_INSTANCES},
                                         {"show", no_argument, NULL, OPT_SHOW},
                                         {"combined", no_argument, NULL, OPT_COMBINED},
                                         {"instance", required_argument, NULL, OPT_INSTANCE},
                                         {"csv", no_argument, NULL, OPT_CSV},
                                         CLI_COMMON_OPTIONS,
                                         {0, 0, 0, 0}};
    SuiteArgs a = {0};
    int rc = cli_parse(cli, argc, argv, opts, suite_option, &a, command_usage("suite"));
    if (rc != 0)
        return rc < 0 ? EXIT_OK : rc;
    if (a.csv && cli->json)
        return cli_error(cli, EXIT_USAGE, "--csv and --json: one output format at a time");
    if (a.instance) { /* one instance, for the parent that spawned it */
        /* it ends with its parent (killed with SIGKILL, no handler to stop it): no orphan
         * keeps a core busy; and one whose parent is already gone stops now */
        const pid_t parent = getppid();
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            return cli_error(cli, EXIT_FAIL, "the suite that started this instance has ended");
        interrupt_kept("an instance stores nothing: its suite keeps what it reported");
        const SuiteBenchmark *b = suite_benchmark(a.instance);
        if (!b)
            return cli_error(cli, EXIT_USAGE, "--instance '%s': no such benchmark", a.instance);
        return run_instance(cli, b, a.quick);
    }
    if (a.combined && (!a.show || optind < argc))
        return cli_error(cli, EXIT_USAGE, "--combined goes with --show (and no run ID): each benchmark's latest result");
    if (a.combined)
        return show(cli, 0, true, a.csv);
    if (a.show) {
        if (optind < argc) {
            char *end;
            const long id = strtol(argv[optind], &end, 10);
            if (*end || id < 1)
                return cli_error(cli, EXIT_USAGE, "--show '%s': expected a suite run id (a positive integer)",
                                 argv[optind]);
            return show(cli, id, false, a.csv);
        }
        return show(cli, 0, false, a.csv);
    }
    if (optind < argc)
        return cli_error(cli, EXIT_USAGE, "unexpected argument '%s' (dlperf suite [--quick] [--only B,...])",
                         argv[optind]);
    bool want[SUITE_BENCHMARKS];
    for (int i = 0; i < SUITE_BENCHMARKS; i++)
        want[i] = a.only == NULL;
    if (a.only) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", a.only);
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            const SuiteBenchmark *b = suite_benchmark(tok);
            if (!b)
                return cli_error(cli, EXIT_USAGE, "--only '%s': expected p1b1, p3b1, alexnet, googlenet, overfeat, "
                                                  "vgg, lstm or resnet50", tok);
            want[b - suite_benchmarks] = true;
        }
    }
    Db *db = cli_db_open(cli);
    if (!db)
        return EXIT_FAIL;
    MachineRow machine;
    if (cli_machine(cli, db, &machine)) {
        db_close(db);
        return EXIT_FAIL;
    }
    char err[1024];
    double resnet_ref = NAN;
    if (want[SUITE_BENCHMARKS - 1]) {
        const double t = titan_resnet_s(cli, db, err, sizeof err);
        if (t > 0)
            resnet_ref = t;
        else
            fprintf(stderr, "dlperf suite: Titan's ResNet-50 cannot be priced (%s): its FOM is left out\n", err);
    }
    SoftwareInfo sw;
    cli_software(cli, &sw);
    SuiteRunRow run = {.machine_id = machine.id, .pid = getpid(), .threads = cli->threads, .overall_fom = NAN,
                       .wall_s = NAN};
    snprintf(run.mode, sizeof run.mode, "%s", a.quick ? "quick" : "full");
    snprintf(run.run, sizeof run.run, "base");
    snprintf(run.precision, sizeof run.precision, "fp32");
    snprintf(run.git_commit, sizeof run.git_commit, "%s", sw.git_commit);
    snprintf(run.blas_core, sizeof run.blas_core, "%s", sw.blas_core);
    if (db_suite_begin(db, &run) != 0) {
        cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
        db_close(db);
        return EXIT_FAIL;
    }
    /* from here a signal stops the suite between instances: its row is marked, the
     * benchmarks done are kept */
    interrupt_flag_on_signal("suite");
    const double t0 = now_s();
    SuiteResultRow rows[SUITE_BENCHMARKS];
    int n = 0;
    rc = EXIT_OK;
    for (int i = 0; i < SUITE_BENCHMARKS && rc == EXIT_OK; i++) {
        if (!want[i])
            continue;
        const SuiteBenchmark *b = &suite_benchmarks[i];
        double need;
        int inst = instances_for(b, a.quick, cli->threads, &need);
        if (a.instances > 0 && b->group != SUITE_RESNET)
            inst = a.instances;
        const int threads = inst >= cli->threads ? 1 : cli->threads / inst;
        char nb[32];
        fprintf(stderr, "dlperf suite: %s: %d instance%s at once, %d thread%s each (%s each)...\n", b->name, inst,
                inst == 1 ? "" : "s", threads, threads == 1 ? "" : "s", fmt_bytes(need, nb, sizeof nb));
        SuiteResultRow *x = &rows[n];
        memset(x, 0, sizeof *x);
        snprintf(x->benchmark, sizeof x->benchmark, "%s", b->name);
        x->instances = inst;
        x->threads_per_instance = threads;
        const double tb = now_s();
        if (run_benchmark(cli, b, a.quick, inst, threads, x, err, sizeof err) != 0 || interrupt_requested()) {
            rc = interrupt_requested() ? interrupt_exit_code() : cli_error(cli, EXIT_FAIL, "%s", err);
            break;
        }
        if (b->group == SUITE_RESNET) {
            x->reference_s = resnet_ref;
            /* the rule's factor 10 is its 50 instances over the reference's 5 */
            x->fom = isfinite(resnet_ref) && x->time_s > 0
                         ? resnet_ref / x->time_s * ((double)inst / SUITE_RESNET_REF_INSTANCES) : 0;
            snprintf(x->note, sizeof x->note, "projected from timed iterations; %d instance, where the rule asks 50 "
                     "on 2%% of a system each: FOM x %d/5, not x 10", inst, inst);
        } else {
            x->reference_s = b->titan_s;
            x->fom = suite_throughput_fom(b->titan_s, x->time_s, inst);
        }
        if (db_suite_result_insert(db, run.id, x) != 0) {
            rc = cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
            break;
        }
        char tt[32];
        fprintf(stderr, "dlperf suite: %s done in %s\n", b->name, fmt_time(now_s() - tb, tt, sizeof tt));
        n++;
    }
    /* the overall FOM where every group ran */
    double g[SUITE_GROUP_COUNT], overall = NAN;
    bool all = rc == EXIT_OK;
    for (int k = 0; k < SUITE_GROUP_COUNT && all; k++) {
        int m, wanted;
        all = group_fom_of(rows, n, (SuiteGroup)k, &g[k], &m, &wanted);
    }
    if (all)
        overall = suite_overall_fom(g);
    run.wall_s = now_s() - t0;
    const char *status = rc == EXIT_OK ? "complete" : interrupt_requested() ? "interrupted" : "failed";
    if (db_suite_finish(db, run.id, status, overall, run.wall_s) != 0 && rc == EXIT_OK)
        rc = cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    if (interrupt_requested() && rc != EXIT_OK) {
        char kept[256] = "";
        for (int i = 0; i < n; i++)
            snprintf(kept + strlen(kept), sizeof kept - strlen(kept), "%s%s", i ? ", " : "", rows[i].benchmark);
        rc = cli_error(cli, interrupt_exit_code(), "interrupted by %s after %.0f s; suite run %lld is marked interrupted, "
                  "%d benchmark result%s kept%s%s%s (dlperf suite --show %lld)", interrupt_signal_name(interrupt_requested()),
                  run.wall_s, (long long)run.id, n, n == 1 ? "" : "s", n ? " (" : "", kept, n ? ")" : "", (long long)run.id);
    }
    if (rc == EXIT_OK) {
        SuiteRunRow stored;
        SuiteResultRow *srows;
        int sn;
        if (db_suite_get(db, run.id, machine.id, &stored, &srows, &sn) == 0) {
            print_any(cli, a.csv, &stored, srows, sn, &machine);
            free(srows);
        }
    }
    db_close(db);
    return rc;
}
