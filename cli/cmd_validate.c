/* cli/cmd_validate.c — `dlperf validate`: predict first, then run, then compare.
 *
 * For each model: the prediction from the full calibration (and with --holdout a second
 * one from the calibration without any shape of the models being validated, fitted model
 * only), then a traced training run, then per model the iteration-time errors and the
 * memory the run planned against its peak RSS, and over all models the error summary and
 * a per-op-kind table (which kinds the model misses, by how much). Predictions, runs and
 * validations are stored; the view validation_op holds every op's predicted and measured
 * time side by side.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "cli/session.h"
#include "cli/validate_device.h"
#include "microbench/mb.h"
#include "models/model_json.h"
#include "ops/comm.h"

/* --zoo validates every model at the batch whose training step is at most this many FLOPs
 * (the batch default calibrations measure the suite's model ops at). */
#define ZOO_STEP_MAX_FLOPS 300e9

typedef struct {
    int batch, steps, warmup;
    int rounds;        /* runs of each model, spread over the validation (one pass over the models each) */
    double min_time_s; /* timed steps continue until they add up to this */
    double wait_near_s; /* the most a round waits for the cores to come near (0: no wait) */
    bool holdout, trace, zoo, weak_scaling, scaling_given;
} ValidateOpts;

enum { OPT_BATCH = 1, OPT_STEPS, OPT_WARMUP, OPT_ROUNDS, OPT_HOLDOUT, OPT_TRACE, OPT_ZOO, OPT_SCALING, OPT_MIN_TIME,
       OPT_WAIT_NEAR, TOP_MISSES = 5, MAX_MODELS = 64 };

/* A duration option: seconds from 0 (zero_means says what 0 does, or "") to 3600. */
static int parse_seconds(const Cli *cli, const char *opt, const char *arg, const char *zero_means, double *out)
{
    char *end;
    errno = 0;
    const double v = strtod(arg, &end);
    if (end == arg || *end || errno || !(v >= 0 && v <= 3600))
        return cli_error(cli, EXIT_USAGE, "%s '%s': expected seconds from 0%s to 3600", opt, arg, zero_means);
    *out = v;
    return 0;
}

static int validate_option(Cli *cli, int id, const char *arg, void *ctx)
{
    ValidateOpts *o = ctx;
    switch (id) {
    case OPT_BATCH: return cli_parse_int(cli, "--batch", arg, 1, 1 << 20, &o->batch);
    case OPT_STEPS: return cli_parse_int(cli, "--steps", arg, 1, 1000000, &o->steps);
    case OPT_WARMUP: return cli_parse_int(cli, "--warmup", arg, 0, 100000, &o->warmup);
    case OPT_ROUNDS: return cli_parse_int(cli, "--rounds", arg, 1, MB_MAX_ROUNDS, &o->rounds);
    case OPT_MIN_TIME: return parse_seconds(cli, "--min-time", arg, "", &o->min_time_s);
    case OPT_WAIT_NEAR: return parse_seconds(cli, "--wait-near", arg, " (run at any placement)", &o->wait_near_s);
    case OPT_HOLDOUT: o->holdout = true; return 0;
    case OPT_TRACE: o->trace = true; return 0;
    case OPT_ZOO: o->zoo = true; return 0;
    case OPT_SCALING:
        if (strcmp(arg, "strong") != 0 && strcmp(arg, "weak") != 0)
            return cli_error(cli, EXIT_USAGE, "--scaling '%s': expected strong (--batch is the global batch) or "
                                              "weak (--batch per rank)", arg);
        o->weak_scaling = strcmp(arg, "weak") == 0;
        o->scaling_given = true;
        return 0;
    }
    return EXIT_USAGE;
}

/* A cross-core read this much slower than calibrated (or faster: a read whose every
 * calibration pass ran with the cores apart is priced apart, calibrate.c): the host has put
 * the cores at another distance than when calibrated (the EPYC VMs: x3.5-4.4 then, x0.9-1.2
 * otherwise). */
static const double FAR_CORES = 1.5;

/* Validate measures at the placement the calibration priced (the near one, where it saw
 * both). Before each round, where the probe finds the threads' cores apart (the Zen 4 VM's
 * host keeps the vCPUs apart for one to three minutes at a time: stop 39's zoo sets found
 * them apart around 68 of 109 and 45 of 96 runs, and P3B1 and FISTA ran 25-35% slower
 * there), the round waits, asleep, for them to come near again: at most --wait-near
 * seconds (default WAIT_NEAR_S), and all waits together at most the time the rounds have
 * taken so far plus WAIT_FLOOR_S (a validation at most about doubles; a short one can still
 * wait out one stretch). Near must hold at every probe for NEAR_HOLD_S before the round
 * starts: after a stretch apart the host often flips the cores back within seconds (stop
 * 40's set 2: sparse-ae's rounds that waited and found near ran apart, 2.6-2.8 ms a step
 * against 1.3 ms). A round whose wait ran out runs where the cores are and is classed by
 * its probes as every round is; the host can also move them during a run. */
static const double WAIT_NEAR_S = 120;
static const double WAIT_FLOOR_S = 30;
static const double NEAR_HOLD_S = 1.0;

typedef struct {
    double near_ns;  /* near's mark: the calibration's fastest round trip (0: none, no wait) */
    double run_s;    /* the rounds' time so far, waits excluded */
    double waited_s; /* the waits' time so far */
    int waits;       /* rounds that found the cores apart and waited */
    int ran_out;     /* of them, those that ran apart when the wait ran out */
} PlacementWait;

/* Runs of one model at most: its rounds, and as many again for a model whose every round
 * found the cores apart (extra_rounds). */
enum { MAX_RUNS = 2 * MB_MAX_ROUNDS };

/* ", round R/N" for the progress line when there are rounds, else "". */
static const char *round_label(char *buf, size_t len, int round, int rounds)
{
    buf[0] = 0;
    if (rounds > 1)
        snprintf(buf, len, ", round %d/%d", round + 1, rounds);
    return buf;
}

/* One model's validation: predictions (full, and holdout when asked), then its runs, one per
 * round, then the rows. */
typedef struct {
    RunResult run;
    Drift drift; /* measured just before the run */
} RoundRun;

typedef struct {
    const ModelSpec *m;
    int batch;
    PredictionRow prow[2];  /* [0] full calibration, [1] holdout */
    OpTimeRow *pred[2];
    int nops;
    RoundRun *round;        /* 2 * vo->rounds of them (extra_rounds); nrounds taken */
    int nrounds;
    ValidationRow v[2];
    const OpTimeRow *meas;  /* the representative round's per-op times (owned by its run) */
    double memory_bytes;    /* predicted process memory: the process before the run, and the plan */
    double peak_rss_bytes;  /* the representative run's */
    double cross_before, cross_after; /* its cross-core drift before and after (0: not measured) */
    /* the rounds by where the cores were: far (round_far: the cross-core read x FAR_CORES
     * or more, or x1/FAR_CORES or less, or both threads on one core, before or after the
     * run), near (neither), else not measured; the median of the near rounds' medians (0:
     * none) */
    int far_rounds, near_rounds;
    int one_core_rounds; /* of the far ones, those with both threads on one core */
    double near_measured_s;
    /* the apart placement: the prediction there ([h]; 0: not priced, one thread or a
     * calibration that timed nothing apart), the far rounds apart (not on one core) and
     * their medians' median (0: none), and per calibration the error with each round priced
     * at its own placement (NaN: not priced) */
    double apart_predicted_s[2];
    int apart_rounds;
    double apart_measured_s;
    double placed_error_pct[2];
    /* the timed steps of all its rounds by where the cores were around each step (the
     * probes between steps, step_placement): how many near, apart and on one core, the
     * pooled medians of the near and the apart steps (0: none), and per calibration the
     * median of the steps' errors with each priced at its own placement (one-core steps
     * not priced; NaN: no step probed) */
    int steps_near, steps_apart, steps_one_core;
    double steps_near_s, steps_apart_s;
    double steps_placed_error_pct[2];
} ModelResult;

static void model_result_free(ModelResult *r)
{
    free(r->pred[0]);
    free(r->pred[1]);
    for (int k = 0; k < r->nrounds; k++)
        run_result_free(&r->round[k].run);
    free(r->round);
}

/* Predict with each cost model given and store the predictions: before any run of the model. */
static int validate_predict(const Cli *cli, Db *db, const CalibrationRow *cal, CostModel *const cm[2],
                            const ValidateOpts *vo, ModelResult *res)
{
    Plan plan;
    char err[512];
    if (plan_build(res->m, res->batch, &plan, err, sizeof err) != 0)
        return cli_error(cli, EXIT_USAGE, "%s", err);
    res->nops = plan.nops;
    int rc = 0;
    for (int h = 0; h < 2 && rc == 0; h++) {
        if (!cm[h])
            continue;
        rc = session_predict(cli, cm[h], cal, &plan, &res->prow[h], &res->pred[h]);
        res->prow[h].holdout = h == 1;
        if (rc == 0) /* the same plan, the cores apart */
            res->apart_predicted_s[h] = pred_iteration_apart_s(&plan, cm[h], cli->threads);
        if (rc == 0 && db_prediction_insert(db, &res->prow[h], res->pred[h], plan.nops) != 0)
            rc = cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    }
    plan_free(&plan);
    if (rc == 0 && !(res->round = calloc(2 * (size_t)vo->rounds, sizeof *res->round)))
        rc = cli_error(cli, EXIT_FAIL, "out of memory for %d rounds", vo->rounds);
    return rc;
}

/* Whether round k's FMA probe found both threads on one core before or after its run. */
static bool round_one_core(const RoundRun *k)
{
    return k->drift.share >= MB_SHARED_CORE || k->drift.share_after >= MB_SHARED_CORE;
}

/* Whether round k of a model found the cores at another placement than the calibration's
 * before or after its run: at another distance (in practice apart), or both threads on one
 * core (false where not measured). */
static bool round_far(const RoundRun *k)
{
    const Drift *d = &k->drift;
    const double lo = 1 / FAR_CORES;
    const bool apart = d->cross > 0 && d->cross_after > 0 &&
                       (d->cross >= FAR_CORES || d->cross_after >= FAR_CORES || d->cross <= lo || d->cross_after <= lo);
    return apart || round_one_core(k);
}

/* Whether round k found the cores apart, on a core each: the cross-core read x FAR_CORES
 * or more before or after the run, and not on one core. */
static bool round_apart(const RoundRun *k)
{
    const Drift *d = &k->drift;
    return d->cross > 0 && d->cross_after > 0 && (d->cross >= FAR_CORES || d->cross_after >= FAR_CORES) &&
           !round_one_core(k);
}

/* Whether round k's placement was measured at all. */
static bool round_placed(const RoundRun *k)
{
    const Drift *d = &k->drift;
    return (d->cross > 0 && d->cross_after > 0) || (d->share > 0 && d->share_after > 0);
}

/* Before a round: where the probe finds the cores apart, waits for them to come near
 * (PlacementWait); the seconds waited (0: near at once, or no wait). */
static double wait_until_near(const Cli *cli, const ValidateOpts *vo, PlacementWait *pw, const char *model)
{
    if (cli->threads < 2 || !(pw->near_ns > 0) || vo->wait_near_s <= 0)
        return 0;
    const double rtt = mb_core_rtt_ns(cli->threads);
    if (!(rtt >= MB_FAR_RTT * pw->near_ns))
        return 0;
    const double limit = fmin(vo->wait_near_s, WAIT_FLOOR_S + pw->run_s - pw->waited_s);
    if (limit < MB_NEAR_POLL_S)
        return 0; /* the validation's waits are spent */
    if (!cli->json)
        fprintf(stderr, "validate: %s: the cores are apart (round trip x%.1f the calibration's); waiting up to %.0f s "
                        "for them to come near...\n", model, rtt / pw->near_ns, limit);
    const double t0 = mb_now_s();
    const bool near = mb_wait_until_near(cli->threads, pw->near_ns, NEAR_HOLD_S, t0 + limit, NULL);
    const double waited = mb_now_s() - t0;
    pw->waited_s += waited;
    pw->waits++;
    pw->ran_out += !near;
    if (!cli->json)
        fprintf(stderr, near ? "validate: %s: near (for %.0f s at a stretch) after %.1f s\n"
                             : "validate: %s: not near for %.0f s at a stretch within %.1f s; running at this placement\n",
                model, NEAR_HOLD_S, waited);
    return waited;
}

/* One round: the machine's speed against the calibration, then a traced run, stored. */
static int validate_round(const Cli *cli, Db *db, const MachineRow *machine, const CostModel *cm,
                          const ValidateOpts *vo, PlacementWait *pw, ModelResult *res)
{
    RoundRun *r = &res->round[res->nrounds];
    const double waited_s = wait_until_near(cli, vo, pw, res->m->name);
    const double t0 = mb_now_s();
    r->drift = (Drift){.compute = 1, .memory = 1};
    int rc = session_drift(cli, cm, &r->drift);
    if (rc == 0)
        rc = session_run_for(cli, res->m, res->batch, PLAN_TRAIN, vo->warmup, vo->steps, vo->min_time_s, true, machine,
                             "strong", 0, &r->run);
    /* the cores' distance again after the run: a host that moves the vCPUs does so every
     * few seconds, and a run that spent part of its time far is reported far */
    if (rc == 0 && r->drift.cross > 0)
        r->drift.cross_after = session_cross_core_drift(cli, cm);
    if (rc == 0 && r->drift.share > 0)
        r->drift.share_after = session_core_share(cli);
    pw->run_s += mb_now_s() - t0;
    r->run.row.placement_wait_s = waited_s;
    if (rc == 0 && round_placed(r)) {
        snprintf(r->run.row.placement, sizeof r->run.row.placement, "%s",
                 round_one_core(r) ? "one core" : round_apart(r) ? "apart" : round_far(r) ? "nearer" : "near");
        r->run.row.cores_cross = fmax(r->drift.cross, r->drift.cross_after);
    }
    if (rc == 0 && db_run_insert(db, &r->run.row, r->run.step_s, r->run.loss, r->run.nsteps, r->run.ops, r->run.nops,
                                 NULL, 0) != 0)
        rc = cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    if (rc == 0)
        res->nrounds++;
    else
        run_result_free(&r->run);
    return rc;
}

/* A model with no more rounds at the calibration's placement than at another (the host
 * moved the vCPUs between cache domains during its runs, or kept them there past the waits)
 * is measured mostly or half at a placement the calibration did not price, and the median of
 * its rounds lands between the two: up to as many rounds again, one pass over such models at
 * a time (each waiting for near as every round does), until its near rounds outnumber the
 * others. Only where a round's placement was measured (two threads or more, a calibration
 * with the cross-core curve); in stop 27's zoo set three models of 24 had every round of
 * four apart, in stop 39's sets P3B1 and FISTA three of four (-35%, -28%). */
static bool mostly_far(const ModelResult *r)
{
    int far = 0, placed = 0;
    for (int k = 0; k < r->nrounds; k++)
        if (round_placed(&r->round[k])) {
            placed++;
            far += round_far(&r->round[k]);
        }
    return placed > 0 && far >= placed - far;
}

static int extra_rounds(const Cli *cli, Db *db, const MachineRow *machine, const CostModel *cm,
                        const ValidateOpts *vo, PlacementWait *pw, ModelResult *res, int nm)
{
    for (int extra = 0; extra < vo->rounds; extra++) {
        int wanted = 0;
        for (int i = 0; i < nm; i++) {
            ModelResult *r = &res[i];
            if (!mostly_far(r))
                continue;
            wanted++;
            if (!cli->json)
                fprintf(stderr, "validate: %s: as many runs or more so far with the cores at another placement as at "
                                "the calibration's; extra round %d of at most %d...\n",
                        r->m->name, extra + 1, vo->rounds);
            const int rc = validate_round(cli, db, machine, cm, vo, pw, r);
            if (rc != 0)
                return rc;
        }
        if (wanted == 0)
            break;
    }
    return 0;
}

/* Where the cores were around one step of a run, by the probes between steps
 * (session_run_for): both threads on one core (an FMA burst x MB_SHARED_CORE or more its
 * time on one), apart (a round trip MB_FAR_RTT times near_ns or more: the classes the
 * calibration prices its kernels' passes by, microbench/calibrate.c), or near. */
typedef enum { STEP_NOT_PROBED, STEP_NEAR, STEP_APART, STEP_ONE_CORE } StepPlacement;

static StepPlacement step_placement(const RunResult *run, int s, double near_ns)
{
    if (!run->step_rtt_ns || run->step_rtt_ns[s] <= 0 || near_ns <= 0)
        return STEP_NOT_PROBED;
    if (run->step_core_share[s] >= MB_SHARED_CORE)
        return STEP_ONE_CORE;
    return run->step_rtt_ns[s] >= MB_FAR_RTT * near_ns ? STEP_APART : STEP_NEAR;
}

/* The median of v[0..n) (0: none), sorting v in place. */
static double sorted_median(double *v, int n)
{
    if (n == 0)
        return 0;
    gsl_sort(v, 1, (size_t)n);
    return gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
}

/* The timed steps of a model's rounds by their placement: the counts, the pooled medians of
 * the near and apart steps, and per calibration the median of the steps' errors, each step
 * priced at its own placement (apart where the calibration prices that placement, else the
 * calibration's; one-core steps not priced: nothing prices two threads on one core).
 * near_ns: the calibration's fastest round trip, or 0 to take the fastest probe of these
 * runs (a calibration from before dlperf stored it). Pooled, not a median of the rounds'
 * medians: a round can be all near, all apart or half and half. */
static int validate_steps(ModelResult *res, double near_ns)
{
    if (near_ns <= 0) {
        near_ns = INFINITY;
        for (int k = 0; k < res->nrounds; k++)
            for (int s = 0; res->round[k].run.step_rtt_ns && s < res->round[k].run.nsteps; s++)
                if (res->round[k].run.step_rtt_ns[s] > 0)
                    near_ns = fmin(near_ns, res->round[k].run.step_rtt_ns[s]);
        if (!isfinite(near_ns))
            near_ns = 0;
    }
    size_t total = 0;
    for (int k = 0; k < res->nrounds; k++)
        total += (size_t)res->round[k].run.row.steps;
    double *near = malloc((total + 1) * sizeof *near), *apart = malloc((total + 1) * sizeof *apart);
    double *err = malloc((total + 1) * sizeof *err);
    if (!near || !apart || !err) {
        free(near), free(apart), free(err);
        return -1;
    }
    res->steps_near = res->steps_apart = res->steps_one_core = 0;
    for (int k = 0; k < res->nrounds; k++) {
        const RunResult *run = &res->round[k].run;
        for (int s = run->row.warmup_steps; s < run->nsteps; s++)
            switch (step_placement(run, s, near_ns)) {
            case STEP_NEAR: near[res->steps_near++] = run->step_s[s]; break;
            case STEP_APART: apart[res->steps_apart++] = run->step_s[s]; break;
            case STEP_ONE_CORE: res->steps_one_core++; break;
            case STEP_NOT_PROBED: break;
            }
    }
    for (int h = 0; h < 2; h++) {
        res->steps_placed_error_pct[h] = NAN;
        if (!res->pred[h])
            continue;
        const double apart_s = res->apart_predicted_s[h] > 0 ? res->apart_predicted_s[h] : res->prow[h].iter_s;
        int ne = 0;
        for (int i = 0; i < res->steps_near; i++)
            err[ne++] = 100 * (res->prow[h].iter_s - near[i]) / near[i];
        for (int i = 0; i < res->steps_apart; i++)
            err[ne++] = 100 * (apart_s - apart[i]) / apart[i];
        if (ne > 0)
            res->steps_placed_error_pct[h] = sorted_median(err, ne);
    }
    res->steps_near_s = sorted_median(near, res->steps_near);
    res->steps_apart_s = sorted_median(apart, res->steps_apart);
    free(near), free(apart), free(err);
    return 0;
}

/* The median of n rounds' medians, and the round nearest it (the representative). */
static int representative_round(const double *medians, int n, double *measured)
{
    double sorted[MAX_RUNS];
    memcpy(sorted, medians, (size_t)n * sizeof *medians);
    gsl_sort(sorted, 1, (size_t)n);
    *measured = gsl_stats_median_from_sorted_data(sorted, 1, (size_t)n);
    int rep = 0;
    for (int k = 1; k < n; k++)
        if (fabs(medians[k] - *measured) < fabs(medians[rep] - *measured))
            rep = k;
    return rep;
}

/* The measured time of a model run in several rounds spread over the validation: the median
 * of the rounds' medians (the calibration prices its kernels the same way), so that a
 * stretch of the shared machine's noise that catches one round does not set it. The
 * validation rows point at the representative round: the one whose median is nearest. */
static int validate_finish(const Cli *cli, Db *db, ModelResult *res, double rtt_near_ns)
{
    const int n = res->nrounds;
    double med[MAX_RUNS] = {0}, lo = INFINITY, hi = 0;
    for (int k = 0; k < n; k++) {
        med[k] = res->round[k].run.row.median_s;
        lo = fmin(lo, res->round[k].run.row.min_s);
        hi = fmax(hi, res->round[k].run.row.max_s);
    }
    double measured;
    const RoundRun *r = &res->round[representative_round(med, n, &measured)];
    /* The rounds at the calibration's placement of the cores, apart: a host that moves the
     * vCPUs between cache domains every few minutes gives a small model two speeds, and
     * the median of four rounds two and two apart is neither (sparse-ae on the Zen 4 VM:
     * 2.77, 1.28, 1.28, 2.56 ms, median 1.92, predicted 1.27). */
    double near_med[MAX_RUNS];
    res->far_rounds = res->near_rounds = res->one_core_rounds = 0;
    res->near_measured_s = 0;
    for (int k = 0; k < n; k++) {
        if (!round_placed(&res->round[k]))
            continue;
        if (round_far(&res->round[k])) {
            res->far_rounds++;
            res->one_core_rounds += round_one_core(&res->round[k]);
        } else
            near_med[res->near_rounds++] = med[k];
    }
    if (res->near_rounds > 0)
        representative_round(near_med, res->near_rounds, &res->near_measured_s);
    /* each round priced at its own placement: apart where it was apart and the calibration
     * prices that placement, else near; a round on one core is not priced (nothing prices
     * two threads on one core) */
    double apart_med[MAX_RUNS];
    res->apart_rounds = 0;
    res->apart_measured_s = 0;
    for (int k = 0; k < n; k++)
        if (round_placed(&res->round[k]) && round_apart(&res->round[k]))
            apart_med[res->apart_rounds++] = med[k];
    if (res->apart_rounds > 0)
        representative_round(apart_med, res->apart_rounds, &res->apart_measured_s);
    for (int h = 0; h < 2; h++) {
        double e[MAX_RUNS];
        int ne = 0;
        for (int k = 0; k < n && res->pred[h]; k++) {
            const RoundRun *rk = &res->round[k];
            if (round_placed(rk) && round_one_core(rk))
                continue;
            const bool apart = round_placed(rk) && round_apart(rk) && res->apart_predicted_s[h] > 0;
            const double pred = apart ? res->apart_predicted_s[h] : res->prow[h].iter_s;
            e[ne++] = 100 * (pred - med[k]) / med[k];
        }
        res->placed_error_pct[h] = NAN;
        if (ne > 0) {
            gsl_sort(e, 1, (size_t)ne);
            res->placed_error_pct[h] = gsl_stats_median_from_sorted_data(e, 1, (size_t)ne);
        }
    }
    if (validate_steps(res, rtt_near_ns) != 0)
        return cli_error(cli, EXIT_FAIL, "out of memory for %s's steps", res->m->name);
    for (int h = 0; h < 2; h++) {
        if (!res->pred[h])
            continue;
        ValidationRow *v = &res->v[h];
        memset(v, 0, sizeof *v);
        v->prediction_id = res->prow[h].id;
        v->run_id = r->run.row.id;
        snprintf(v->model, sizeof v->model, "%s", res->m->name);
        v->batch = res->batch;
        v->threads = cli->threads;
        v->holdout = h == 1;
        v->predicted_s = res->prow[h].iter_s;
        v->measured_s = measured;
        v->measured_min_s = lo;
        v->measured_max_s = hi;
        v->error_pct = 100 * (v->predicted_s - measured) / measured;
        v->drift_compute = r->drift.compute;
        v->drift_memory = r->drift.memory;
        v->drift_cross = fmax(r->drift.cross, r->drift.cross_after);
        v->adjusted_error_pct = 100 * (drift_adjusted_s(&r->drift, res->pred[h], res->nops) - measured) / measured;
        v->rounds = n;
        v->far_rounds = res->far_rounds;
        v->one_core_rounds = res->one_core_rounds;
        v->near_rounds = res->near_rounds;
        v->measured_near_s = res->near_measured_s;
        v->apart_rounds = res->apart_rounds;
        v->measured_apart_s = res->apart_measured_s;
        v->predicted_apart_s = res->apart_predicted_s[h];
        v->error_placed_pct = res->placed_error_pct[h];
        v->steps_near = res->steps_near;
        v->steps_apart = res->steps_apart;
        v->steps_one_core = res->steps_one_core;
        v->measured_steps_near_s = res->steps_near_s;
        v->measured_steps_apart_s = res->steps_apart_s;
        v->error_steps_placed_pct = res->steps_placed_error_pct[h];
        if (db_validation_insert(db, v) != 0)
            return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    }
    res->meas = r->run.ops;
    /* the process as it was when the run began (libraries, BLAS buffers, what earlier runs
     * left resident) and what the run's plan allocates */
    res->memory_bytes = r->run.row.baseline_rss_bytes + r->run.row.planned_bytes;
    res->peak_rss_bytes = r->run.row.peak_rss_bytes;
    res->cross_before = r->drift.cross, res->cross_after = r->drift.cross_after;
    return 0;
}

/* ---- data-parallel validation (under mpirun) ---- */

typedef struct {
    double iter_s, min_s, max_s; /* the slowest rank's medians */
    double compute_s, allreduce_s; /* each step's slowest rank, median over the steps */
    int64_t run_id;
    Drift drift; /* the model's reference ops just before the run, against the calibration */
    /* the gradients' allreduce timed alone just before and just after the run (seconds, the
     * slowest rank's median; 0: not measured) */
    double ar_before_s, ar_after_s;
    /* where the node's first two ranks ran: their round trip just before and just after
     * the run (ns; 0: not probed), over the fastest seen (the slower; 0: not probed), and
     * whether that made the run apart (MB_FAR_RTT or more) */
    double rtt_before_ns, rtt_after_ns, cores_ratio;
    bool apart;
    /* rank 0's process: predicted (its RSS when the run began, the plan's arenas as
     * allocated, the allreduce's scratch) and its peak RSS */
    double memory_bytes, peak_rss_bytes;
} DpRound;

typedef struct {
    const ModelSpec *m;
    int batch;          /* per rank */
    PredictionRow pred; /* per-rank compute (oversubscribed) + allreduce */
    DpRound round[MB_MAX_ROUNDS];
    int nrounds;
    int rep; /* the representative round: its median nearest the median of the rounds' medians */
    double meas_s, meas_min_s, meas_max_s, meas_compute_s, meas_allreduce_s; /* the representative round's */
    double memory_bytes, peak_rss_bytes;                                      /* the representative round's */
    Drift drift;                     /* the representative round's */
    double adjusted_error_pct;       /* the iteration's error with the compute scaled by drift */
    double ar_before, ar_after;      /* the representative round's allreduce references over the
                                      * prediction's allreduce (0: not measured) */
    double ar_drift;                 /* the slower of the two; 0 unless both were measured */
    double allreduce_apart_s;        /* the allreduce with the ranks apart (0: not priced) */
    int apart_rounds;                /* rounds whose ranks were apart */
    /* the representative round's allreduce priced at its placement (0: not probed), and
     * its iteration's and allreduce's errors so priced (NaN: not probed) */
    double placed_allreduce_s, placed_error_pct, placed_ar_error_pct;
    size_t grad_bytes;               /* the gradient buffer the step sums */
    OpDesc refs[2];                  /* drift references: the model's costliest exact compute and memory op */
    int nrefs;
    OpTimeRow *pops;                 /* rank 0: the prediction's ops (oversubscription applied) */
    int nops;
} DpResult;

/* A data-parallel validation's drift references: of the ops the calibration measured
 * exactly, the one with the largest predicted time in each drift class (compute-bound;
 * the rest). The calibration the prediction came from may hold none of session_drift's
 * fixed shapes (a calibration of the model's ops alone), but it holds these. Indices into
 * the plan, -1 where the class has none. */
static void dp_drift_refs(const OpTimeRow *ops, int nops, int idx[2])
{
    idx[0] = idx[1] = -1;
    for (int i = 0; i < nops; i++) {
        if (strcmp(ops[i].source, "exact") != 0)
            continue;
        const int cls = drift_compute_kind(ops[i].kind) ? 0 : 1;
        if (idx[cls] < 0 || ops[i].time_s > ops[idx[cls]].time_s)
            idx[cls] = i;
    }
}

/* The prediction with its compute scaled by the representative round's drift (the
 * allreduce as predicted: the step's own allreduce is what it is compared with). */
static double dp_adjusted_s(const DpResult *r)
{
    return r->pops ? drift_adjusted_s(&r->drift, r->pops, r->nops) + r->pred.allreduce_s : r->pred.iter_s;
}

/* The gradients' allreduce timed alone by every rank, in place and from cold caches as the
 * communication calibration times it: seconds, the slowest rank's median, or 0 where the
 * ranks' memory cannot hold it (said on stderr). Timed just before and just after each
 * run, it tells whether the ranks' communication ran at its calibrated speed then: at
 * np=2 on the 2-vCPU Zen 4 VM, P1B1's 932 MiB allreduce took 158-163 ms in steps within a
 * minute of calibrating at 158-160, and full validations that came later missed it by
 * 20-38% (stop 25): the host had moved the vCPUs in between. Every rank calls it. */
static double dp_allreduce_reference(const Cli *cli, size_t bytes)
{
    const MbCommKernel k = {MB_COMM_ALLREDUCE, bytes};
    const MbProtocol p = mb_protocol(MB_QUICK);
    double samples[64];
    MeasurementRow m;
    char err[256];
    const int rc = mb_time_comm(&k, &p, cli->threads, &m, samples, err, sizeof err);
    mb_release(); /* the flush buffer: the run checks the node's memory next */
    if (rc != 0) {
        if (comm_rank() == 0)
            fprintf(stderr, "validate: the allreduce reference (%zu bytes) not timed: %s\n", bytes, err);
        return 0;
    }
    return m.median_s;
}

/* The mark of near for the node's ranks: the fastest round trip the communication
 * calibration of `ranks` saw, or any probe of this validation's that was faster (a
 * calibration from before dlperf stored it has none). */
static double dp_rtt_near_ns(const CommModel *comm, int ranks, double probed_fastest_ns)
{
    const double cal = comm ? comm_model_rtt_fastest_ns(comm, ranks) : 0;
    return cal > 0 ? fmin(cal, probed_fastest_ns) : probed_fastest_ns;
}

/* Every rank trains; rank 0 predicts first and compares, stores and prints. */
static int validate_dp(Cli *cli, const ValidateOpts *vo, const ModelSpec *const *models, int nm)
{
    const int ranks = comm_env_size(), local = comm_env_local_size();
    DpResult res[MAX_MODELS];
    memset(res, 0, sizeof res);
    char err[512];
    for (int i = 0; i < nm; i++) {
        res[i].m = models[i];
        int b = vo->batch ? vo->batch : models[i]->default_batch;
        if (!vo->weak_scaling && b % ranks != 0)
            return cli_error(cli, EXIT_USAGE, "%s: batch %d does not split evenly over %d ranks; give --batch (a "
                             "multiple of %d) or --scaling weak", models[i]->name, b, ranks, ranks);
        res[i].batch = vo->weak_scaling ? b : b / ranks;
    }
    blas_select(cli);
    if (comm_start(err, sizeof err) != 0)
        return cli_error(cli, EXIT_FAIL, "%s", err);
    comm_reuse_collective_buffers();
    const bool root = comm_rank() == 0;
    Db *db = NULL;
    MachineRow machine = {0};
    CalibrationRow cal;
    CostModel *cm = NULL;
    CommModel *comm = NULL;
    double over = 1;
    if (root) {
        if (!(db = cli_db_open(cli)))
            return EXIT_FAIL;
        if (cli_machine(cli, db, &machine) || session_calibration_dp(cli, db, &machine, local, &cal, &cm, &over)) {
            db_close(db);
            return EXIT_FAIL;
        }
        if (!(comm = comm_model_load(db, machine.id, err, sizeof err))) {
            cm_free(cm);
            db_close(db);
            return cli_error(cli, EXIT_FAIL, "%s", err);
        }
    }
    const char *scaling = vo->weak_scaling ? "weak" : "strong";
    int rc = 0, predicted = 0;
    double rtt_fastest_ns = INFINITY; /* of this validation's probes */
    for (int round = 0; round < vo->rounds && rc == 0; round++)
        for (int i = 0; i < nm && rc == 0; i++) {
            DpResult *r = &res[i];
            if (root) {
                char of_rounds[32];
                fprintf(stderr, "validate: %s at batch %d (%d per rank x %d ranks, %d/%d%s): %straining %d+%d steps "
                                "(timed: at least %g s)...\n", r->m->name, r->batch * ranks, r->batch, ranks, i + 1, nm,
                        round_label(of_rounds, sizeof of_rounds, round, vo->rounds),
                        round == 0 ? "predicting, then " : "", vo->warmup, vo->steps, vo->min_time_s);
            }
            if (round == 0) {
                Plan plan;
                if (plan_build(r->m, r->batch, &plan, err, sizeof err) != 0) {
                    rc = cli_error(cli, EXIT_USAGE, "%s", err);
                    break;
                }
                int idx[2] = {-1, -1};
                if (root) {
                    rc = session_predict_dp(cli, cm, &cal, comm, &plan, ranks, over, &r->pred, &r->pops, NULL);
                    r->nops = plan.nops;
                    if (rc == 0 && db_prediction_insert(db, &r->pred, r->pops, plan.nops) != 0)
                        rc = cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
                    if (rc == 0)
                        dp_drift_refs(r->pops, r->nops, idx);
                    r->allreduce_apart_s = comm_model_allreduce_apart_s(comm, (double)plan.arena_bytes[ARENA_GRAD],
                                                                        ranks);
                }
                r->grad_bytes = plan.arena_bytes[ARENA_GRAD];
                comm_bcast(idx, sizeof idx, 0); /* every rank times the same references */
                for (int c = 0; c < 2; c++)
                    if (idx[c] >= 0)
                        r->refs[r->nrefs++] = plan.ops[idx[c]].desc;
                plan_free(&plan);
                if (rc)
                    break;
                predicted++;
            }
            Drift drift;
            if ((rc = session_drift_ops(cli, cm, r->refs, r->nrefs, over, &drift)))
                break;
            const double ar_before = dp_allreduce_reference(cli, r->grad_bytes);
            const double rtt_before = comm_peer_rtt_ns();
            RunResult run;
            if ((rc = session_run_for(cli, r->m, r->batch, PLAN_TRAIN, vo->warmup, vo->steps, vo->min_time_s, false,
                                      &machine, scaling, 0, &run)))
                break;
            const double rtt_after = comm_peer_rtt_ns();
            const double ar_after = dp_allreduce_reference(cli, r->grad_bytes);
            if (root) {
                DpRound *k = &r->round[r->nrounds];
                /* where the ranks ran, classed against the fastest round trip seen so far */
                if (rtt_before > 0 && rtt_after > 0) {
                    rtt_fastest_ns = fmin(rtt_fastest_ns, fmin(rtt_before, rtt_after));
                    k->rtt_before_ns = rtt_before, k->rtt_after_ns = rtt_after;
                    k->cores_ratio = fmax(rtt_before, rtt_after) / dp_rtt_near_ns(comm, ranks, rtt_fastest_ns);
                    k->apart = k->cores_ratio >= MB_FAR_RTT;
                    snprintf(run.row.placement, sizeof run.row.placement, "%s", k->apart ? "apart" : "near");
                    run.row.cores_cross = k->cores_ratio;
                }
                k->iter_s = run.row.median_s, k->min_s = run.row.min_s, k->max_s = run.row.max_s;
                /* the allreduce's share of a step is its slowest rank's: the one that left
                 * the barrier first waits for the last. The benchmark takes each sample's
                 * slowest rank and the median of those; so do these, step by step (not the
                 * slowest of the ranks' medians, which is lower where the ranks take turns) */
                k->allreduce_s = run.slowest.comm_s;
                k->compute_s = run.slowest.compute_s;
                if (db_run_insert(db, &run.row, run.step_s, run.loss, run.nsteps, NULL, 0, NULL, 0) != 0)
                    rc = cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
                k->run_id = run.row.id;
                k->drift = drift;
                k->ar_before_s = ar_before, k->ar_after_s = ar_after;
                k->memory_bytes = run.row.baseline_rss_bytes + run.row.planned_bytes + r->pred.mem_comm;
                k->peak_rss_bytes = run.row.peak_rss_bytes;
            }
            run_result_free(&run);
            if (rc == 0)
                r->nrounds++;
        }
    /* each model's representative round (its median nearest the median of its rounds'
     * medians) is its measurement: rows stored, models run at least once reported */
    int done = 0;
    for (int i = 0; root && i < predicted && res[i].nrounds > 0 && rc == 0; i++, done++) {
        DpResult *r = &res[i];
        double med[MB_MAX_ROUNDS];
        r->meas_min_s = INFINITY;
        for (int k = 0; k < r->nrounds; k++) {
            med[k] = r->round[k].iter_s;
            r->meas_min_s = fmin(r->meas_min_s, r->round[k].min_s);
            r->meas_max_s = fmax(r->meas_max_s, r->round[k].max_s);
        }
        const int rep = r->rep = representative_round(med, r->nrounds, &r->meas_s);
        r->meas_compute_s = r->round[rep].compute_s;
        r->meas_allreduce_s = r->round[rep].allreduce_s;
        r->memory_bytes = r->round[rep].memory_bytes;
        r->peak_rss_bytes = r->round[rep].peak_rss_bytes;
        r->drift = r->round[rep].drift;
        if (r->pred.allreduce_s > 0) {
            r->ar_before = r->round[rep].ar_before_s / r->pred.allreduce_s;
            r->ar_after = r->round[rep].ar_after_s / r->pred.allreduce_s;
        }
        r->ar_drift = r->ar_before > 0 && r->ar_after > 0 ? fmax(r->ar_before, r->ar_after) : 0;
        for (int k = 0; k < r->nrounds; k++)
            r->apart_rounds += r->round[k].apart;
        /* the representative run priced at its placement: apart where it was apart and the
         * communication calibration had passes apart, else near */
        const DpRound *rr = &r->round[rep];
        r->placed_error_pct = r->placed_ar_error_pct = NAN;
        if (rr->cores_ratio > 0) {
            r->placed_allreduce_s = rr->apart && r->allreduce_apart_s > 0 ? r->allreduce_apart_s : r->pred.allreduce_s;
            const double placed_iter = r->pred.iter_s - r->pred.allreduce_s + r->placed_allreduce_s;
            r->placed_error_pct = 100 * (placed_iter - r->meas_s) / r->meas_s;
            r->placed_ar_error_pct = 100 * (r->placed_allreduce_s - r->meas_allreduce_s) / r->meas_allreduce_s;
        }
        ValidationRow v = {.prediction_id = r->pred.id, .run_id = r->round[rep].run_id, .batch = r->batch * ranks,
                           .threads = cli->threads, .predicted_s = r->pred.iter_s, .measured_s = r->meas_s,
                           .measured_min_s = r->meas_min_s, .measured_max_s = r->meas_max_s,
                           .error_pct = 100 * (r->pred.iter_s - r->meas_s) / r->meas_s,
                           .drift_compute = r->drift.compute, .drift_memory = r->drift.memory, .ranks = ranks,
                           .predicted_allreduce_s = r->pred.allreduce_s,
                           .measured_allreduce_s = r->meas_allreduce_s,
                           .drift_allreduce = r->ar_drift, .rounds = r->nrounds,
                           .apart_rounds = r->apart_rounds,
                           .predicted_apart_s = r->allreduce_apart_s > 0
                                                    ? r->pred.iter_s - r->pred.allreduce_s + r->allreduce_apart_s
                                                    : 0,
                           .error_placed_pct = r->placed_error_pct,
                           .predicted_allreduce_placed_s = r->placed_allreduce_s,
                           .error_steps_placed_pct = NAN}; /* the ranks' steps are not probed */
        r->adjusted_error_pct = 100 * (dp_adjusted_s(r) - r->meas_s) / r->meas_s;
        v.adjusted_error_pct = r->adjusted_error_pct;
        snprintf(v.model, sizeof v.model, "%s", r->m->name);
        if (db_validation_insert(db, &v) != 0)
            rc = cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    }
    if (root && done > 0) {
        if (cli->json) {
            cJSON *arr = cJSON_CreateArray();
            for (int i = 0; i < done; i++) {
                const DpResult *r = &res[i];
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "model", r->m->name);
                cJSON_AddNumberToObject(o, "ranks", ranks);
                cJSON_AddStringToObject(o, "scaling", scaling);
                cJSON_AddNumberToObject(o, "batch", r->batch * ranks);
                cJSON_AddNumberToObject(o, "batch_per_rank", r->batch);
                cJSON_AddNumberToObject(o, "threads", cli->threads);
                cJSON_AddNumberToObject(o, "oversubscription", over);
                cJSON_AddNumberToObject(o, "calibration_id", (double)cal.id);
                cJSON_AddNumberToObject(o, "calibration_ranks", cal.sw.ranks);
                cJSON_AddNumberToObject(o, "predicted_s", r->pred.iter_s);
                cJSON_AddNumberToObject(o, "measured_s", r->meas_s);
                cJSON_AddNumberToObject(o, "error_pct", 100 * (r->pred.iter_s - r->meas_s) / r->meas_s);
                cJSON_AddNumberToObject(o, "predicted_compute_s", r->pred.iter_s - r->pred.allreduce_s);
                cJSON_AddNumberToObject(o, "measured_compute_s", r->meas_compute_s);
                cJSON_AddNumberToObject(o, "predicted_allreduce_s", r->pred.allreduce_s);
                cJSON_AddStringToObject(o, "allreduce_source", r->pred.allreduce_source);
                cJSON_AddNumberToObject(o, "measured_allreduce_s", r->meas_allreduce_s);
                cJSON_AddNumberToObject(o, "allreduce_error_pct",
                                        100 * (r->pred.allreduce_s - r->meas_allreduce_s) / r->meas_allreduce_s);
                cJSON_AddNumberToObject(o, "drift_compute", r->drift.compute);
                cJSON_AddNumberToObject(o, "drift_memory", r->drift.memory);
                cJSON_AddNumberToObject(o, "adjusted_error_pct", r->adjusted_error_pct);
                if (r->ar_drift > 0) { /* the slower, and each */
                    cJSON_AddNumberToObject(o, "drift_allreduce", r->ar_drift);
                    cJSON_AddNumberToObject(o, "drift_allreduce_before", r->ar_before);
                    cJSON_AddNumberToObject(o, "drift_allreduce_after", r->ar_after);
                } else {
                    cJSON_AddNullToObject(o, "drift_allreduce"); /* not measured */
                }
                cJSON_AddNumberToObject(o, "rounds", r->nrounds);
                cJSON_AddNumberToObject(o, "rounds_apart", r->apart_rounds);
                const DpRound *rr = &r->round[r->rep];
                if (rr->cores_ratio > 0) {
                    cJSON_AddStringToObject(o, "placement", rr->apart ? "apart" : "near");
                    cJSON_AddNumberToObject(o, "cores_ratio", rr->cores_ratio);
                    cJSON_AddNumberToObject(o, "rtt_before_ns", rr->rtt_before_ns);
                    cJSON_AddNumberToObject(o, "rtt_after_ns", rr->rtt_after_ns);
                    cJSON_AddNumberToObject(o, "predicted_allreduce_placed_s", r->placed_allreduce_s);
                    cJSON_AddNumberToObject(o, "allreduce_error_placed_pct", r->placed_ar_error_pct);
                    cJSON_AddNumberToObject(o, "error_placed_pct", r->placed_error_pct);
                } else {
                    cJSON_AddNullToObject(o, "placement"); /* not probed */
                }
                if (r->allreduce_apart_s > 0)
                    cJSON_AddNumberToObject(o, "predicted_allreduce_apart_s", r->allreduce_apart_s);
                else
                    cJSON_AddNullToObject(o, "predicted_allreduce_apart_s");
                cJSON_AddNumberToObject(o, "predicted_memory_bytes", r->memory_bytes);
                cJSON_AddNumberToObject(o, "predicted_allreduce_memory_bytes", r->pred.mem_comm);
                cJSON_AddNumberToObject(o, "peak_rss_bytes", r->peak_rss_bytes);
                cJSON_AddNumberToObject(o, "memory_error_pct",
                                        100 * (r->memory_bytes - r->peak_rss_bytes) / r->peak_rss_bytes);
                cJSON_AddItemToArray(arr, o);
            }
            json_print(arr);
        } else {
            char b[6][32];
            char how[96];
            if (cal.sw.ranks > 1 && over > 1)
                snprintf(how, sizeof how, "measured by %d ranks at once, one per core, slowed by the cores' "
                         "oversubscription", cal.sw.ranks);
            else
                snprintf(how, sizeof how, "%s", cal.sw.ranks > 1 ? "measured by as many ranks at once"
                                                : over > 1        ? "one process's, slowed by the cores' oversubscription"
                                                                  : "one process's");
            printf("data-parallel validation: %d ranks (%d on this node) x %d threads, %s scaling, compute from "
                   "calibration %lld (%s), allreduce from the communication calibration (%s)\n",
                   ranks, local, cli->threads, scaling, (long long)cal.id, how, comm_library());
            if (over > 1)
                printf("  oversubscription: %d ranks x %d threads on %ld cores = %.2f\n", local, cli->threads,
                       sysconf(_SC_NPROCESSORS_ONLN), over);
            printf("\n%-16s %6s %10s %10s %7s %10s %10s %7s %10s %10s %7s %11s  %14s %8s\n", "model", "batch",
                   "pred iter", "meas iter", "err", "pred comp", "meas comp", "err", "pred AR", "meas AR", "err",
                   "AR ref", "drift c / m", "adjusted");
            for (int i = 0; i < done; i++) {
                const DpResult *r = &res[i];
                double pc = r->pred.iter_s - r->pred.allreduce_s;
                char ref[32] = "-";
                if (r->ar_drift > 0)
                    snprintf(ref, sizeof ref, "x%.2f/%.2f", r->ar_before, r->ar_after);
                printf("%-16s %6d %10s %10s %+6.1f%% %10s %10s %+6.1f%% %10s %10s %+6.1f%% %11s  %+5.0f%% / %+4.0f%% "
                       "%+7.1f%%%s\n", r->m->name,
                       r->batch * ranks, fmt_time(r->pred.iter_s, b[0], 32), fmt_time(r->meas_s, b[1], 32),
                       100 * (r->pred.iter_s - r->meas_s) / r->meas_s, fmt_time(pc, b[2], 32),
                       fmt_time(r->meas_compute_s, b[3], 32), 100 * (pc - r->meas_compute_s) / r->meas_compute_s,
                       fmt_time(r->pred.allreduce_s, b[4], 32), fmt_time(r->meas_allreduce_s, b[5], 32),
                       100 * (r->pred.allreduce_s - r->meas_allreduce_s) / r->meas_allreduce_s, ref,
                       100 * (r->drift.compute - 1), 100 * (r->drift.memory - 1),
                       r->adjusted_error_pct,
                       strcmp(r->pred.allreduce_source, "fitted") == 0 ? " (AR fitted)" : "");
            }
            printf("\n%-16s %7s %12s %10s %10s %10s %7s %9s\n", "placement", "apart", "cores", "pred AR", "AR apart",
                   "AR placed", "err", "iter err");
            for (int i = 0; i < done; i++) {
                const DpResult *r = &res[i];
                const DpRound *rr = &r->round[r->rep];
                char apart[16], cores[24] = "-", ar_apart[32] = "-", placed[32] = "-", ar_err[16] = "-",
                     it_err[16] = "-";
                snprintf(apart, sizeof apart, "%d/%d", r->apart_rounds, r->nrounds);
                if (r->allreduce_apart_s > 0)
                    fmt_time(r->allreduce_apart_s, ar_apart, sizeof ar_apart);
                if (rr->cores_ratio > 0) {
                    snprintf(cores, sizeof cores, "%s x%.1f", rr->apart ? "apart" : "near", rr->cores_ratio);
                    fmt_time(r->placed_allreduce_s, placed, sizeof placed);
                    snprintf(ar_err, sizeof ar_err, "%+.1f%%", r->placed_ar_error_pct);
                    snprintf(it_err, sizeof it_err, "%+.1f%%", r->placed_error_pct);
                }
                printf("%-16s %7s %12s %10s %10s %10s %7s %9s\n", r->m->name, apart, cores,
                       fmt_time(r->pred.allreduce_s, b[0], 32), ar_apart, placed, ar_err, it_err);
            }
            printf("\n%-16s %10s %14s %10s %7s\n", "memory", "predicted", "of it allreduce", "peak RSS", "diff");
            for (int i = 0; i < done; i++) {
                const DpResult *r = &res[i];
                printf("%-16s %10s %14s %10s %+6.1f%%\n", r->m->name, fmt_bytes(r->memory_bytes, b[0], 32),
                       fmt_bytes(r->pred.mem_comm, b[1], 32), fmt_bytes(r->peak_rss_bytes, b[2], 32),
                       100 * (r->memory_bytes - r->peak_rss_bytes) / r->peak_rss_bytes);
            }
            printf("\niter: the slowest rank's step (median); comp: forward+backward+update, and AR: the gradients'\n"
                   "allreduce, each step's slowest rank (median over the steps, as the calibration's samples)\n"
                   "placement: where the node's first two ranks ran (a cache line's round trip between them just\n"
                   "before and after each run, the slower over the fastest seen; apart at x%.1f or more): the rounds\n"
                   "apart, the representative run's cores, the allreduce priced near (pred AR) and apart (from the\n"
                   "communication calibration's passes apart; - where it had none), and the run priced at its own\n"
                   "placement: its allreduce and iteration errors\n"
                   "AR ref: the same allreduce timed alone by every rank just before / just after the run, against\n"
                   "the prediction: near x1 the ranks communicated at their calibrated speed, and an AR error\n"
                   "beyond it is the model's; well away from x1 the host had changed under the run\n"
                   "drift c / m: the time of the model's costliest exactly calibrated GEMM or convolution / other op,\n"
                   "timed by every rank at once just before the run, against the calibration (times the\n"
                   "oversubscription); adjusted: the iteration's error with the compute scaled by them\n"
                   "memory: rank 0's process, predicted (its RSS when the run began, the plan's arenas as allocated,\n"
                   "and the MPI library's allreduce scratch probed by the communication calibration) against its peak RSS\n",
                   MB_FAR_RTT);
        }
    }
    for (int i = 0; i < nm; i++)
        free(res[i].pops);
    if (root) {
        cm_free(cm);
        comm_model_free(comm);
        db_close(db);
    }
    return rc;
}

/* ---- summaries ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_abs(const double *v, int n)
{
    double *a = malloc((size_t)(n > 0 ? n : 1) * sizeof *a);
    for (int i = 0; i < n; i++)
        a[i] = fabs(v[i]);
    qsort(a, (size_t)n, sizeof *a, cmp_double);
    const double m = n == 0 ? 0 : n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
    free(a);
    return m;
}

/* Per op kind and phase over every validated model: how much of the measured time the
 * prediction missed (error of the sum) and the typical op's miss (median |op error|). */
typedef struct {
    char kind[24], phase[16];
    int ops;
    double measured_s, predicted_s[2];
    double *op_err[2];
    int nerr;
} KindRow;

static int kind_rows(const ModelResult *res, int nm, bool holdout, KindRow **out)
{
    int cap = 64, n = 0;
    KindRow *k = calloc((size_t)cap, sizeof *k);
    for (int r = 0; r < nm; r++)
        for (int i = 0; i < res[r].nops; i++) {
            const OpTimeRow *me = &res[r].meas[i];
            int j = 0;
            while (j < n && !(strcmp(k[j].kind, me->kind) == 0 && strcmp(k[j].phase, me->phase) == 0))
                j++;
            if (j == n) {
                if (n == cap) {
                    cap *= 2;
                    k = realloc(k, (size_t)cap * sizeof *k);
                    memset(k + n, 0, (size_t)(cap - n) * sizeof *k);
                }
                snprintf(k[n].kind, sizeof k[n].kind, "%s", me->kind);
                snprintf(k[n].phase, sizeof k[n].phase, "%s", me->phase);
                n++;
            }
            KindRow *row = &k[j];
            row->ops++;
            row->measured_s += me->time_s;
            for (int h = 0; h <= (int)holdout; h++) {
                row->predicted_s[h] += res[r].pred[h][i].time_s;
                row->op_err[h] = realloc(row->op_err[h], (size_t)row->ops * sizeof(double));
                row->op_err[h][row->ops - 1] =
                    me->time_s > 0 ? 100 * (res[r].pred[h][i].time_s - me->time_s) / me->time_s : 0;
            }
        }
    /* largest measured time first */
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && k[b].measured_s > k[b - 1].measured_s; b--) {
            KindRow t = k[b];
            k[b] = k[b - 1];
            k[b - 1] = t;
        }
    *out = k;
    return n;
}

static void kind_rows_free(KindRow *k, int n)
{
    for (int i = 0; i < n; i++)
        free(k[i].op_err[0]), free(k[i].op_err[1]);
    free(k);
}

/* The errors against each model's runs at the calibration's placement of the cores
 * (ModelResult.near_measured_s): over the models that had such a run, and over every model,
 * those without one by all their runs. */
typedef struct {
    int runs, far_runs;   /* runs whose cores were measured; of them far */
    int one_core_runs;    /* of the far runs, those with both threads on one core */
    int models;           /* models with a near run */
    double median_abs_pct, max_abs_pct; /* over those */
    const char *max_model;
    double every_median_abs_pct, every_max_abs_pct; /* over every model */
    const char *every_max_model;
} NearSummary;

static double near_error_pct(const ModelResult *r, int h)
{
    return 100 * (r->v[h].predicted_s - r->near_measured_s) / r->near_measured_s;
}

static NearSummary near_summary(const ModelResult *res, int nm, int h)
{
    NearSummary ns = {.max_model = "", .every_max_model = ""};
    double e[MAX_MODELS], every[MAX_MODELS];
    for (int i = 0; i < nm; i++) {
        ns.runs += res[i].far_rounds + res[i].near_rounds;
        ns.far_runs += res[i].far_rounds;
        ns.one_core_runs += res[i].one_core_rounds;
        every[i] = res[i].near_rounds > 0 ? near_error_pct(&res[i], h) : res[i].v[h].error_pct;
        if (fabs(every[i]) >= ns.every_max_abs_pct) {
            ns.every_max_abs_pct = fabs(every[i]);
            ns.every_max_model = res[i].v[0].model;
        }
        if (res[i].near_rounds == 0)
            continue;
        e[ns.models++] = every[i];
        if (fabs(every[i]) >= ns.max_abs_pct) {
            ns.max_abs_pct = fabs(every[i]);
            ns.max_model = res[i].v[0].model;
        }
    }
    ns.median_abs_pct = ns.models ? median_abs(e, ns.models) : 0;
    ns.every_median_abs_pct = nm ? median_abs(every, nm) : 0;
    return ns;
}

/* The errors with each round priced at its own placement (ModelResult.placed_error_pct):
 * over the models with a priced round. */
typedef struct {
    int models;            /* with a priced round */
    int apart_runs;        /* runs priced apart */
    double median_abs_pct, max_abs_pct;
    const char *max_model;
    bool priced;           /* the calibration prices the apart placement */
} PlacedSummary;

static PlacedSummary placed_summary(const ModelResult *res, int nm, int h)
{
    PlacedSummary ps = {.max_model = ""};
    double e[MAX_MODELS];
    for (int i = 0; i < nm; i++) {
        ps.priced |= res[i].apart_predicted_s[h] > 0;
        if (res[i].apart_predicted_s[h] > 0)
            ps.apart_runs += res[i].apart_rounds;
        if (isnan(res[i].placed_error_pct[h]))
            continue;
        e[ps.models++] = res[i].placed_error_pct[h];
        if (fabs(res[i].placed_error_pct[h]) >= ps.max_abs_pct) {
            ps.max_abs_pct = fabs(res[i].placed_error_pct[h]);
            ps.max_model = res[i].v[0].model;
        }
    }
    ps.median_abs_pct = ps.models ? median_abs(e, ps.models) : 0;
    return ps;
}

/* The errors step by step (validate_steps): each step priced at its own placement, and
 * the near steps' pooled median against the calibration's price; over the models with
 * probed steps. */
typedef struct {
    int near, apart, one_core; /* steps, over every model */
    int models;                /* with a priced step */
    double median_abs_pct, max_abs_pct;
    const char *max_model;
    int near_models;           /* with a near step */
    double near_median_abs_pct, near_max_abs_pct;
    const char *near_max_model;
} StepSummary;

static double steps_near_error_pct(const ModelResult *r, int h)
{
    return 100 * (r->v[h].predicted_s - r->steps_near_s) / r->steps_near_s;
}

static StepSummary step_summary(const ModelResult *res, int nm, int h)
{
    StepSummary ss = {.max_model = "", .near_max_model = ""};
    double e[MAX_MODELS], en[MAX_MODELS];
    for (int i = 0; i < nm; i++) {
        ss.near += res[i].steps_near;
        ss.apart += res[i].steps_apart;
        ss.one_core += res[i].steps_one_core;
        const double ep = res[i].steps_placed_error_pct[h];
        if (!isnan(ep)) {
            e[ss.models++] = ep;
            if (fabs(ep) >= ss.max_abs_pct) {
                ss.max_abs_pct = fabs(ep);
                ss.max_model = res[i].v[0].model;
            }
        }
        if (res[i].steps_near > 0) {
            const double n = steps_near_error_pct(&res[i], h);
            en[ss.near_models++] = n;
            if (fabs(n) >= ss.near_max_abs_pct) {
                ss.near_max_abs_pct = fabs(n);
                ss.near_max_model = res[i].v[0].model;
            }
        }
    }
    ss.median_abs_pct = ss.models ? median_abs(e, ss.models) : 0;
    ss.near_median_abs_pct = ss.near_models ? median_abs(en, ss.near_models) : 0;
    return ss;
}

static void print_text(const CalibrationRow *cal, const Cli *cli, const ModelResult *res, int nm,
                       const ValidateOpts *vo, const PlacementWait *pw)
{
    const bool H = vo->holdout;
    char b1[32], b2[32], b3[32], b4[32];
    printf("validation against calibration %lld (%s, %s), %d threads, OpenBLAS %s\n\n", (long long)cal->id,
           cal->mode, cal->started_at, cli->threads, cal->sw.blas_core);
    printf("%-16s %6s %11s %21s %11s %8s", "model", "batch", "measured", "(min .. max)", "predicted", "error");
    if (H)
        printf(" %11s %8s", "holdout", "error");
    printf(" %13s %9s", "drift c / m", "adjusted");
    if (H)
        printf(" %9s", "adj. hold");
    printf(" %9s %5s %7s %14s %7s %10s %10s %7s\n", "cores", "far", "placed", "steps n/a/1", "by step", "memory",
           "peak RSS", "diff");
    double err[2][MAX_MODELS], adj[2][MAX_MODELS];
    for (int i = 0; i < nm; i++) {
        const ValidationRow *v = &res[i].v[0];
        char range[48];
        snprintf(range, sizeof range, "(%s .. %s)", fmt_time(v->measured_min_s, b3, 32),
                 fmt_time(v->measured_max_s, b4, 32));
        printf("%-16s %6d %11s %21s %11s %+7.1f%%", v->model, v->batch, fmt_time(v->measured_s, b1, 32), range,
               fmt_time(v->predicted_s, b2, 32), v->error_pct);
        err[0][i] = v->error_pct;
        if (H) {
            printf(" %11s %+7.1f%%", fmt_time(res[i].v[1].predicted_s, b1, 32), res[i].v[1].error_pct);
            err[1][i] = res[i].v[1].error_pct;
        }
        printf(" %+5.0f%% / %+4.0f%% %+8.1f%%", 100 * (v->drift_compute - 1), 100 * (v->drift_memory - 1),
               v->adjusted_error_pct);
        adj[0][i] = v->adjusted_error_pct;
        if (H) {
            printf(" %+8.1f%%", res[i].v[1].adjusted_error_pct);
            adj[1][i] = res[i].v[1].adjusted_error_pct;
        }
        char cores[24] = "-", far[16] = "-";
        if (res[i].cross_before > 0)
            snprintf(cores, sizeof cores, "x%.1f/%.1f", res[i].cross_before, res[i].cross_after);
        if (res[i].far_rounds + res[i].near_rounds > 0)
            snprintf(far, sizeof far, "%d/%d", res[i].far_rounds, res[i].nrounds);
        char placed[16] = "-";
        if (!isnan(res[i].placed_error_pct[0]))
            snprintf(placed, sizeof placed, "%+.1f%%", res[i].placed_error_pct[0]);
        char steps[24] = "-", by_step[16] = "-";
        if (res[i].steps_near + res[i].steps_apart + res[i].steps_one_core > 0)
            snprintf(steps, sizeof steps, "%d/%d/%d", res[i].steps_near, res[i].steps_apart, res[i].steps_one_core);
        if (!isnan(res[i].steps_placed_error_pct[0]))
            snprintf(by_step, sizeof by_step, "%+.1f%%", res[i].steps_placed_error_pct[0]);
        printf(" %9s %5s %7s %14s %7s %10s %10s %+6.1f%%\n", cores, far, placed, steps, by_step,
               fmt_bytes(res[i].memory_bytes, b1, 32),
               fmt_bytes(res[i].peak_rss_bytes, b2, 32),
               100 * (res[i].memory_bytes - res[i].peak_rss_bytes) / res[i].peak_rss_bytes);
    }
    printf("# times per training iteration; error = (predicted - measured median) / measured median;\n"
           "# memory: predicted for the process (its RSS when the run began, and the profile's arenas and\n"
           "# data batches, which the run allocates) against the run's peak RSS\n");
    printf("# drift c / m: time of the reference kernels just before the run against the calibration,\n"
           "# compute-bound (GEMM, convolution) / memory-bound; adjusted: the error of the prediction scaled by them\n"
           "# cores: a cross-core read (each thread reading the slice its neighbour just wrote) before / after\n"
           "# the run against the calibration (the representative run's); well above x1 the host had put the\n"
           "# cores farther apart than when calibrated, and every op that passes data between them ran slower\n"
           "# (not adjusted for); far: the model's runs whose cores read x%.1f or more (or x%.2f or less)\n"
           "# before or after, or whose two threads shared one core (an FMA burst on both x%.1f or more its\n"
           "# time on one); placed: the median of the runs' errors, each run priced at its own placement\n"
           "# (apart where its cores read x%.1f or more, by the kernels' passes timed apart; else near; a run\n"
           "# on one core not priced)\n", FAR_CORES, 1 / FAR_CORES, MB_SHARED_CORE, FAR_CORES);
    printf("# steps n/a/1: the timed steps of all runs by where the cores were around each (probed between\n"
           "# steps): near, apart (a round trip x%.1f the calibration's fastest or more), on one core; by step:\n"
           "# the median of the steps' errors, each step priced at its own placement (one-core steps not priced)\n",
           MB_FAR_RTT);
    for (int h = 0; h <= (int)H; h++) {
        double mx = 0, mxa = 0;
        for (int i = 0; i < nm; i++) {
            mx = fmax(mx, fabs(err[h][i]));
            mxa = fmax(mxa, fabs(adj[h][i]));
        }
        printf("%s: median |error| %.1f%%, max |error| %.1f%% over %d models; drift-adjusted: median %.1f%%, "
               "max %.1f%%\n", h ? "holdout calibration (fitted model only)" : "full calibration",
               median_abs(err[h], nm), mx, nm, median_abs(adj[h], nm), mxa);
    }
    if (pw->waits > 0)
        printf("cores apart before %d run%s: waited %.0f s in all for them to come near (--wait-near %.0f s a run), "
               "%d ran apart when the wait ran out\n",
               pw->waits, pw->waits == 1 ? "" : "s", pw->waited_s, vo->wait_near_s, pw->ran_out);
    /* the errors at the calibration's placement of the cores: each model's median over its
     * runs whose cores were not farther apart (which misses the placement explains); a
     * model with no such run by all of them */
    for (int h = 0; h <= (int)H; h++) {
        const NearSummary ns = near_summary(res, nm, h);
        if (ns.far_runs == 0)
            break;
        if (h == 0)
            printf("cores x%.1f or more farther apart (or nearer) than at calibration, or on one core (before or after "
                   "the run), in %d of %d runs (%d on one core)\n", FAR_CORES, ns.far_runs, ns.runs, ns.one_core_runs);
        printf("%s at the calibration's placement (each model's runs with the cores as near as calibrated",
               h ? "holdout calibration" : "full calibration");
        if (ns.models < nm)
            printf("; all runs of the %d models with none", nm - ns.models);
        printf("): median |error| %.1f%%, max %.1f%% (%s) over %d models", ns.every_median_abs_pct,
               ns.every_max_abs_pct, ns.every_max_model, nm);
        if (h == 0 && ns.models < nm) {
            printf("; every run far:");
            for (int i = 0; i < nm; i++)
                if (res[i].near_rounds == 0 && res[i].far_rounds > 0)
                    printf(" %s", res[i].v[0].model);
        }
        printf("\n");
    }
    for (int h = 0; h <= (int)H; h++) {
        const PlacedSummary ps = placed_summary(res, nm, h);
        if (!ps.priced || ps.models == 0)
            break;
        printf("%s with each run priced at its own placement (%d runs apart): median |error| %.1f%%, max %.1f%% "
               "(%s) over %d models\n", h ? "holdout calibration" : "full calibration", ps.apart_runs,
               ps.median_abs_pct, ps.max_abs_pct, ps.max_model, ps.models);
    }
    for (int h = 0; h <= (int)H; h++) {
        const StepSummary ss = step_summary(res, nm, h);
        if (ss.models == 0)
            break;
        const char *name = h ? "holdout calibration" : "full calibration";
        if (h == 0)
            printf("steps probed between steps: %d near, %d apart, %d on one core\n", ss.near, ss.apart, ss.one_core);
        printf("%s with each step priced at its own placement: median |error| %.1f%%, max %.1f%% (%s) over %d "
               "models\n", name, ss.median_abs_pct, ss.max_abs_pct, ss.max_model, ss.models);
        if (ss.near_models > 0)
            printf("%s against the near steps (their pooled median): median |error| %.1f%%, max %.1f%% (%s) over %d "
                   "models\n", name, ss.near_median_abs_pct, ss.near_max_abs_pct, ss.near_max_model, ss.near_models);
    }
    KindRow *k;
    const int nk = kind_rows(res, nm, H, &k);
    printf("\nby op kind, over all models (error of the kind's total; median |error| of its ops)\n");
    printf("%-13s %-11s %5s %11s %11s %8s %9s", "kind", "phase", "ops", "measured", "predicted", "error", "op med");
    if (H)
        printf(" %11s %8s %9s", "holdout", "error", "op med");
    printf("\n");
    for (int i = 0; i < nk; i++) {
        printf("%-13s %-11s %5d %11s %11s %+7.1f%% %8.1f%%", k[i].kind, k[i].phase, k[i].ops,
               fmt_time(k[i].measured_s, b1, 32), fmt_time(k[i].predicted_s[0], b2, 32),
               100 * (k[i].predicted_s[0] - k[i].measured_s) / k[i].measured_s, median_abs(k[i].op_err[0], k[i].ops));
        if (H)
            printf(" %11s %+7.1f%% %8.1f%%", fmt_time(k[i].predicted_s[1], b1, 32),
                   100 * (k[i].predicted_s[1] - k[i].measured_s) / k[i].measured_s,
                   median_abs(k[i].op_err[1], k[i].ops));
        printf("\n");
    }
    kind_rows_free(k, nk);
    for (int i = 0; i < nm; i++) {
        for (int h = 0; h <= (int)H; h++) {
            OpGroup *g;
            const int ng = op_groups(res[i].pred[h], res[i].meas, res[i].nops, &g);
            const int show = vo->trace ? ng : (ng < TOP_MISSES ? ng : TOP_MISSES);
            printf("\n%s%s: %s, sorted by absolute miss\n", res[i].v[0].model, h ? " (holdout)" : "",
                   vo->trace ? "every op, predicted against measured" : "ops with the largest misses");
            printf("  %-14s %5s %12s %12s %8s  %-8s %s\n", "layer", "count", "predicted", "measured", "miss", "source",
                   "op");
            for (int j = 0; j < show; j++)
                printf("  %-14s %5d %12s %12s %+7.1f%%  %-8s %s\n", g[j].layer_name, g[j].count,
                       fmt_time(g[j].time_s, b1, 32), fmt_time(g[j].measured_s, b2, 32),
                       100 * (g[j].time_s - g[j].measured_s) / g[j].measured_s, g[j].source, g[j].key);
            free(g);
        }
    }
}

/* A summary's error statistics over its models: the median and the largest |error|, and
 * the model of the largest. */
static void add_error_stats(cJSON *o, double median_abs_pct, double max_abs_pct, const char *max_model)
{
    cJSON_AddNumberToObject(o, "median_abs_error_pct", median_abs_pct);
    cJSON_AddNumberToObject(o, "max_abs_error_pct", max_abs_pct);
    cJSON_AddStringToObject(o, "max_model", max_model);
}

static cJSON *result_json(const ModelResult *res, int nm, const ValidateOpts *vo, const PlacementWait *pw)
{
    const bool H = vo->holdout;
    cJSON *doc = cJSON_CreateObject();
    cJSON *w = cJSON_AddObjectToObject(doc, "placement_wait");
    cJSON_AddNumberToObject(w, "max_per_run_s", vo->wait_near_s);
    cJSON_AddNumberToObject(w, "runs_waited", pw->waits);
    cJSON_AddNumberToObject(w, "waited_s", pw->waited_s);
    cJSON_AddNumberToObject(w, "runs_ran_out", pw->ran_out);
    cJSON *arr = cJSON_AddArrayToObject(doc, "models");
    double err[2][MAX_MODELS], adj[2][MAX_MODELS];
    for (int i = 0; i < nm; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", res[i].v[0].model);
        cJSON_AddNumberToObject(o, "batch", res[i].batch);
        cJSON_AddNumberToObject(o, "measured_median_s", res[i].v[0].measured_s);
        cJSON_AddNumberToObject(o, "measured_min_s", res[i].v[0].measured_min_s);
        cJSON_AddNumberToObject(o, "measured_max_s", res[i].v[0].measured_max_s);
        cJSON_AddNumberToObject(o, "predicted_memory_bytes", res[i].memory_bytes);
        cJSON_AddNumberToObject(o, "peak_rss_bytes", res[i].peak_rss_bytes);
        cJSON_AddNumberToObject(o, "rounds", res[i].nrounds);
        if (res[i].far_rounds + res[i].near_rounds > 0) {
            cJSON_AddNumberToObject(o, "rounds_far", res[i].far_rounds);
            cJSON_AddNumberToObject(o, "rounds_near", res[i].near_rounds);
            cJSON_AddNumberToObject(o, "rounds_one_core", res[i].one_core_rounds);
        } else {
            cJSON_AddNullToObject(o, "rounds_far"); /* the cores' distance not measured */
            cJSON_AddNullToObject(o, "rounds_near");
            cJSON_AddNullToObject(o, "rounds_one_core");
        }
        if (res[i].near_rounds > 0)
            cJSON_AddNumberToObject(o, "measured_near_s", res[i].near_measured_s);
        else
            cJSON_AddNullToObject(o, "measured_near_s");
        cJSON_AddNumberToObject(o, "steps_near", res[i].steps_near);
        cJSON_AddNumberToObject(o, "steps_apart", res[i].steps_apart);
        cJSON_AddNumberToObject(o, "steps_one_core", res[i].steps_one_core);
        if (res[i].steps_near > 0)
            cJSON_AddNumberToObject(o, "measured_steps_near_s", res[i].steps_near_s);
        else
            cJSON_AddNullToObject(o, "measured_steps_near_s");
        if (res[i].steps_apart > 0)
            cJSON_AddNumberToObject(o, "measured_steps_apart_s", res[i].steps_apart_s);
        else
            cJSON_AddNullToObject(o, "measured_steps_apart_s");
        cJSON_AddNumberToObject(o, "rounds_apart", res[i].apart_rounds);
        if (res[i].apart_rounds > 0)
            cJSON_AddNumberToObject(o, "measured_apart_s", res[i].apart_measured_s);
        else
            cJSON_AddNullToObject(o, "measured_apart_s");
        for (int h = 0; h <= (int)H; h++) {
            const ValidationRow *v = &res[i].v[h];
            cJSON *p = cJSON_AddObjectToObject(o, h ? "holdout" : "full");
            cJSON_AddNumberToObject(p, "validation_id", (double)v->id);
            cJSON_AddNumberToObject(p, "predicted_s", v->predicted_s);
            cJSON_AddNumberToObject(p, "error_pct", v->error_pct);
            cJSON_AddNumberToObject(p, "drift_compute", v->drift_compute);
            cJSON_AddNumberToObject(p, "drift_memory", v->drift_memory);
            cJSON_AddNumberToObject(p, "adjusted_error_pct", v->adjusted_error_pct);
            if (v->drift_cross > 0) { /* the larger of before and after the run */
                cJSON_AddNumberToObject(p, "drift_cross", v->drift_cross);
                cJSON_AddNumberToObject(p, "drift_cross_before", res[i].cross_before);
                cJSON_AddNumberToObject(p, "drift_cross_after", res[i].cross_after);
            } else {
                cJSON_AddNullToObject(p, "drift_cross"); /* not measured */
            }
            if (res[i].near_rounds > 0)
                cJSON_AddNumberToObject(p, "error_near_pct", near_error_pct(&res[i], h));
            else
                cJSON_AddNullToObject(p, "error_near_pct");
            if (res[i].apart_predicted_s[h] > 0)
                cJSON_AddNumberToObject(p, "predicted_apart_s", res[i].apart_predicted_s[h]);
            else
                cJSON_AddNullToObject(p, "predicted_apart_s"); /* one thread, or nothing timed apart */
            if (!isnan(res[i].placed_error_pct[h]))
                cJSON_AddNumberToObject(p, "error_placed_pct", res[i].placed_error_pct[h]);
            else
                cJSON_AddNullToObject(p, "error_placed_pct");
            if (!isnan(res[i].steps_placed_error_pct[h]))
                cJSON_AddNumberToObject(p, "error_steps_placed_pct", res[i].steps_placed_error_pct[h]);
            else
                cJSON_AddNullToObject(p, "error_steps_placed_pct");
            if (res[i].steps_near > 0)
                cJSON_AddNumberToObject(p, "error_steps_near_pct", steps_near_error_pct(&res[i], h));
            else
                cJSON_AddNullToObject(p, "error_steps_near_pct");
            err[h][i] = v->error_pct;
            adj[h][i] = v->adjusted_error_pct;
            OpGroup *g;
            const int ng = op_groups(res[i].pred[h], res[i].meas, res[i].nops, &g);
            const int show = vo->trace ? ng : (ng < TOP_MISSES ? ng : TOP_MISSES);
            cJSON *miss = cJSON_AddArrayToObject(p, vo->trace ? "ops" : "largest_misses");
            for (int j = 0; j < show; j++) {
                cJSON *mo = cJSON_CreateObject();
                cJSON_AddStringToObject(mo, "layer", g[j].layer_name);
                cJSON_AddStringToObject(mo, "op", g[j].key);
                cJSON_AddNumberToObject(mo, "count", g[j].count);
                cJSON_AddNumberToObject(mo, "predicted_s", g[j].time_s);
                cJSON_AddNumberToObject(mo, "measured_s", g[j].measured_s);
                cJSON_AddStringToObject(mo, "source", g[j].source);
                cJSON_AddItemToArray(miss, mo);
            }
            free(g);
        }
        cJSON_AddItemToArray(arr, o);
    }
    for (int h = 0; h <= (int)H; h++) {
        double mx = 0;
        for (int i = 0; i < nm; i++)
            mx = fmax(mx, fabs(err[h][i]));
        cJSON *s = cJSON_AddObjectToObject(doc, h ? "summary_holdout" : "summary_full");
        cJSON_AddNumberToObject(s, "models", nm);
        cJSON_AddNumberToObject(s, "median_abs_error_pct", median_abs(err[h], nm));
        cJSON_AddNumberToObject(s, "max_abs_error_pct", mx);
        double mxa = 0;
        for (int i = 0; i < nm; i++)
            mxa = fmax(mxa, fabs(adj[h][i]));
        cJSON_AddNumberToObject(s, "median_abs_adjusted_error_pct", median_abs(adj[h], nm));
        cJSON_AddNumberToObject(s, "max_abs_adjusted_error_pct", mxa);
        {
            const NearSummary ns = near_summary(res, nm, h);
            cJSON *n = cJSON_AddObjectToObject(s, "near_placement");
            cJSON_AddNumberToObject(n, "runs", ns.runs);
            cJSON_AddNumberToObject(n, "runs_far", ns.far_runs);
            cJSON_AddNumberToObject(n, "runs_one_core", ns.one_core_runs);
            cJSON_AddNumberToObject(n, "models", ns.models);
            if (ns.models > 0)
                add_error_stats(n, ns.median_abs_pct, ns.max_abs_pct, ns.max_model);
            /* every model: its near runs, or all of them where it had none */
            cJSON_AddNumberToObject(n, "every_model_median_abs_error_pct", ns.every_median_abs_pct);
            cJSON_AddNumberToObject(n, "every_model_max_abs_error_pct", ns.every_max_abs_pct);
            cJSON_AddStringToObject(n, "every_model_max_model", ns.every_max_model);
        }
        {
            const PlacedSummary ps = placed_summary(res, nm, h);
            cJSON *pl = cJSON_AddObjectToObject(s, "each_run_placed");
            cJSON_AddBoolToObject(pl, "apart_priced", ps.priced);
            cJSON_AddNumberToObject(pl, "runs_apart", ps.apart_runs);
            cJSON_AddNumberToObject(pl, "models", ps.models);
            if (ps.models > 0)
                add_error_stats(pl, ps.median_abs_pct, ps.max_abs_pct, ps.max_model);
        }
        {
            const StepSummary ss = step_summary(res, nm, h);
            cJSON *st = cJSON_AddObjectToObject(s, "each_step_placed");
            cJSON_AddNumberToObject(st, "steps_near", ss.near);
            cJSON_AddNumberToObject(st, "steps_apart", ss.apart);
            cJSON_AddNumberToObject(st, "steps_one_core", ss.one_core);
            cJSON_AddNumberToObject(st, "models", ss.models);
            if (ss.models > 0)
                add_error_stats(st, ss.median_abs_pct, ss.max_abs_pct, ss.max_model);
            cJSON *ns = cJSON_AddObjectToObject(s, "near_steps");
            cJSON_AddNumberToObject(ns, "models", ss.near_models);
            if (ss.near_models > 0)
                add_error_stats(ns, ss.near_median_abs_pct, ss.near_max_abs_pct, ss.near_max_model);
        }
    }
    KindRow *k;
    const int nk = kind_rows(res, nm, H, &k);
    cJSON *kinds = cJSON_AddArrayToObject(doc, "by_kind");
    for (int i = 0; i < nk; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kind", k[i].kind);
        cJSON_AddStringToObject(o, "phase", k[i].phase);
        cJSON_AddNumberToObject(o, "ops", k[i].ops);
        cJSON_AddNumberToObject(o, "measured_s", k[i].measured_s);
        cJSON_AddNumberToObject(o, "predicted_s", k[i].predicted_s[0]);
        cJSON_AddNumberToObject(o, "op_median_abs_error_pct", median_abs(k[i].op_err[0], k[i].ops));
        if (H) {
            cJSON_AddNumberToObject(o, "holdout_predicted_s", k[i].predicted_s[1]);
            cJSON_AddNumberToObject(o, "holdout_op_median_abs_error_pct", median_abs(k[i].op_err[1], k[i].ops));
        }
        cJSON_AddItemToArray(kinds, o);
    }
    kind_rows_free(k, nk);
    return doc;
}

int cmd_validate(int argc, char **argv, Cli *cli)
{
    if (validate_device_wanted(argc, argv))
        return validate_device(cli, argc, argv);
    static const struct option opts[] = {CLI_COMMON_OPTIONS, CLI_MODEL_FILE_OPTION,
                                         {"batch", required_argument, NULL, OPT_BATCH},
                                         {"steps", required_argument, NULL, OPT_STEPS},
                                         {"warmup", required_argument, NULL, OPT_WARMUP},
                                         {"rounds", required_argument, NULL, OPT_ROUNDS},
                                         {"min-time", required_argument, NULL, OPT_MIN_TIME},
                                         {"wait-near", required_argument, NULL, OPT_WAIT_NEAR},
                                         {"holdout", no_argument, NULL, OPT_HOLDOUT},
                                         {"trace", no_argument, NULL, OPT_TRACE},
                                         {"zoo", no_argument, NULL, OPT_ZOO},
                                         {"scaling", required_argument, NULL, OPT_SCALING},
                                         {0}};
    ValidateOpts vo = {.steps = 5, .warmup = 1, .rounds = 1, .min_time_s = 2.0, .wait_near_s = WAIT_NEAR_S};
    int rc = cli_parse(cli, argc, argv, opts, validate_option, &vo, command_usage(cli->cmd));
    if (rc)
        return rc;
    if (vo.zoo && optind < argc)
        return cli_error(cli, EXIT_USAGE, "--zoo validates every model; give either --zoo or model names ('%s')",
                         argv[optind]);
    const bool dp = comm_env_size() > 1;
    if (dp && (vo.zoo || vo.holdout || vo.trace))
        return cli_error(cli, EXIT_USAGE, "under mpirun, validate compares data-parallel runs of named models; "
                                          "--zoo, --holdout and --trace are for one process");
    if (!dp && vo.scaling_given)
        return cli_error(cli, EXIT_USAGE, "--scaling applies to data-parallel runs: run validate under mpirun -np P");
    ModelResult res[MAX_MODELS];
    memset(res, 0, sizeof res);
    int nm = 0;
    for (int i = optind; i < argc; i++) {
        if (nm == MAX_MODELS)
            return cli_error(cli, EXIT_USAGE, "at most %d models in one validation", MAX_MODELS);
        if (!(res[nm++].m = cli_model(cli, argv[i])))
            return EXIT_USAGE;
    }
    if (cli->model_file) { /* a model file, beside the named models */
        if (vo.zoo)
            return cli_error(cli, EXIT_USAGE, "--zoo validates the zoo; give --model-file without it");
        char e2[1024];
        ModelSpec *loaded = model_json_load(cli->model_file, e2, sizeof e2); /* lives until exit, as the zoo */
        if (!loaded)
            return cli_error(cli, EXIT_USAGE, "%s", e2);
        if (nm == MAX_MODELS)
            return cli_error(cli, EXIT_USAGE, "at most %d models in one validation", MAX_MODELS);
        res[nm++].m = loaded;
    }
    for (int i = 0; optind == argc && !cli->model_file && i < zoo_count() && nm < MAX_MODELS; i++) {
        const ModelSpec *m = zoo_get(i);
        if (vo.zoo || m->demo) { /* the whole zoo, or the main job's three models */
            const ModelSpec *plain = cli->no_quirk ? zoo_without_quirk(m) : NULL;
            res[nm++].m = plain ? plain : m;
        }
    }
    char err[512];
    if (dp) {
        const ModelSpec *models[MAX_MODELS];
        for (int i = 0; i < nm; i++)
            models[i] = res[i].m;
        return validate_dp(cli, &vo, models, nm);
    }
    for (int i = 0; i < nm; i++) {
        res[i].batch = vo.batch ? vo.batch : res[i].m->default_batch;
        if (!vo.batch && vo.zoo && (res[i].batch = plan_batch_within(res[i].m, ZOO_STEP_MAX_FLOPS, err, sizeof err)) < 0)
            return cli_error(cli, EXIT_USAGE, "%s", err);
    }

    blas_select(cli);
    Db *db = cli_db_open(cli);
    if (!db)
        return EXIT_FAIL;
    MachineRow machine;
    CalibrationRow cal;
    CostModel *cm[2] = {NULL, NULL};
    if (cli_machine(cli, db, &machine) || session_calibration(cli, db, &machine, &cal, &cm[0])) {
        db_close(db);
        return EXIT_FAIL;
    }
    if (vo.holdout) {
        /* the same calibration without any shape of any model being validated */
        OpDesc *descs = NULL;
        int nd = 0;
        for (int i = 0; i < nm; i++) {
            Plan p;
            if (plan_build(res[i].m, res[i].batch, &p, err, sizeof err) != 0) {
                free(descs);
                cm_free(cm[0]);
                db_close(db);
                return cli_error(cli, EXIT_USAGE, "%s", err);
            }
            descs = realloc(descs, (size_t)(nd + p.nops) * sizeof *descs);
            for (int j = 0; j < p.nops; j++)
                descs[nd++] = p.ops[j].desc;
            plan_free(&p);
        }
        cm[1] = cm_load(db, cal.id, err, sizeof err);
        if (cm[1]) {
            const int dropped = cm_holdout(cm[1], descs, nd);
            cm_fit(cm[1]);
            if (!cli->json)
                fprintf(stderr, "validate: holdout calibration: %d of calibration %lld's measurements share a shape "
                                "with these models and are left out\n", dropped, (long long)cal.id);
        }
        free(descs);
        if (!cm[1]) {
            cm_free(cm[0]);
            db_close(db);
            return cli_error(cli, EXIT_FAIL, "%s", err);
        }
    }
    session_runtime_bytes(); /* the BLAS buffers allocated before the first run, as for all later ones */
    /* Round 1 predicts each model just before its first run; every round is one pass over
     * the models, so a model's rounds are minutes apart. */
    int predicted = 0;
    PlacementWait pw = {.near_ns = cal.rtt_fastest_ns};
    for (int round = 0; round < vo.rounds && rc == 0; round++)
        for (int i = 0; i < nm && rc == 0; i++) {
            ModelResult *r = &res[i];
            char of_rounds[32];
            if (!cli->json)
                fprintf(stderr, "validate: %s at batch %d (%d/%d%s): %straining %d+%d steps (timed: at least %g s)...\n",
                        r->m->name, r->batch, i + 1, nm, round_label(of_rounds, sizeof of_rounds, round, vo.rounds),
                        round == 0 ? "predicting, then " : "", vo.warmup, vo.steps, vo.min_time_s);
            if (round == 0) {
                if ((rc = validate_predict(cli, db, &cal, cm, &vo, r)))
                    break;
                predicted++;
            }
            rc = validate_round(cli, db, &machine, cm[0], &vo, &pw, r);
        }
    if (rc == 0)
        rc = extra_rounds(cli, db, &machine, cm[0], &vo, &pw, res, predicted);
    /* models run at least once are reported (a failed round leaves its model's earlier ones) */
    int done = 0;
    for (int i = 0; i < predicted; i++) {
        if (res[i].nrounds == 0)
            break;
        if (validate_finish(cli, db, &res[i], cal.rtt_fastest_ns) != 0) {
            rc = EXIT_FAIL;
            break;
        }
        done++;
    }
    cm_free(cm[0]);
    cm_free(cm[1]);
    db_close(db);
    if (done > 0) {
        if (cli->json)
            json_print(result_json(res, done, &vo, &pw));
        else
            print_text(&cal, cli, res, done, &vo, &pw);
    }
    for (int i = 0; i < nm; i++)
        model_result_free(&res[i]);
    return rc;
}
