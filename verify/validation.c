/* verify/validation.c — predictions against timed runs, one process or data-parallel. */
#include "verify/validation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "microbench/rtt_modes.h"
#include "ops/comm.h"
#include "predictor/machine_pricer.h"


/* Validate measures at the placement the calibration priced (the near one, where it saw
 * both). Before each round, where the probe finds the threads' cores apart (the Zen 4 VM's
 * host keeps the vCPUs apart for one to three minutes at a time: two zoo validations found
 * them apart around 68 of 109 and 45 of 96 runs, and P3B1 and FISTA ran 25-35% slower
 * there), the round waits, asleep, for them to come near again: at most --wait-near
 * seconds (default VALIDATION_WAIT_NEAR_S), and all waits together at most the time the rounds have
 * taken so far plus VALIDATION_WAIT_FLOOR_S (a validation at most about doubles; a short one can still
 * wait out one stretch). Near must hold at every probe for NEAR_HOLD_S before the round
 * starts: after a stretch apart the host often flips the cores back within seconds (one zoo
 * validation: sparse-ae's rounds that waited and found near ran apart, 2.6-2.8 ms a step
 * against 1.3 ms). A round whose wait ran out runs where the cores are and is classed by
 * its probes as every round is; the host can also move them during a run. */
static const double NEAR_HOLD_S = 1.0;

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

void model_validation_free(ModelValidation *r)
{
    free(r->pred[0]);
    free(r->pred[1]);
    for (int k = 0; k < r->nrounds; k++)
        run_result_free(&r->round[k].run);
    free(r->round);
}

/* Predict with each cost model given and store the predictions: before any run of the model. */
static int validate_predict(const RunEnv *env, Db *db, const CalibrationRow *cal, CostModel *const cm[2],
                            const ValidationOpts *vo, ModelValidation *res, char *err, size_t errlen)
{
    Plan plan;
    if (plan_build(res->m, res->batch, &plan, err, errlen) != 0)
        return VERIFY_USAGE;
    res->nops = plan.nops;
    int rc = 0;
    for (int h = 0; h < 2 && rc == 0; h++) {
        if (!cm[h])
            continue;
        rc = machine_predict(cm[h], cal, env->threads, &plan, &res->prow[h], &res->pred[h], err, errlen);
        res->prow[h].holdout = h == 1;
        if (rc == 0) /* the same plan, the cores apart */
            res->apart_predicted_s[h] = pred_iteration_apart_s(&plan, cm[h], env->threads);
        if (rc == 0 && db_prediction_insert(db, &res->prow[h], res->pred[h], plan.nops) != 0)
            rc = verify_fail(err, errlen, VERIFY_FAIL, "%s", db_errmsg(db));
    }
    plan_free(&plan);
    if (rc == 0 && !(res->round = calloc(2 * (size_t)vo->rounds, sizeof *res->round)))
        rc = verify_fail(err, errlen, VERIFY_FAIL, "out of memory for %d rounds", vo->rounds);
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
    const double lo = 1 / VALIDATION_FAR_CORES;
    const bool apart = d->cross > 0 && d->cross_after > 0 &&
                       (d->cross >= VALIDATION_FAR_CORES || d->cross_after >= VALIDATION_FAR_CORES || d->cross <= lo || d->cross_after <= lo);
    return apart || round_one_core(k);
}

/* Whether round k found the cores apart, on a core each: the cross-core read x VALIDATION_FAR_CORES
 * or more before or after the run, and not on one core. */
static bool round_apart(const RoundRun *k)
{
    const Drift *d = &k->drift;
    return d->cross > 0 && d->cross_after > 0 && (d->cross >= VALIDATION_FAR_CORES || d->cross_after >= VALIDATION_FAR_CORES) &&
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
static double wait_until_near(const RunEnv *env, const ValidationOpts *vo, PlacementWait *pw, const char *model)
{
    if (env->threads < 2 || !(pw->near_ns > 0) || vo->wait_near_s <= 0)
        return 0;
    const double rtt = mb_core_rtt_ns(env->threads);
    if (!(rtt >= MB_FAR_RTT * pw->near_ns))
        return 0;
    const double limit = fmin(vo->wait_near_s, VALIDATION_WAIT_FLOOR_S + pw->run_s - pw->waited_s);
    if (limit < MB_NEAR_POLL_S)
        return 0; /* the validation's waits are spent */
    if (!vo->quiet)
        fprintf(stderr, "validate: %s: the cores are apart (round trip x%.1f the calibration's); waiting up to %.0f s "
                        "for them to come near...\n", model, rtt / pw->near_ns, limit);
    const double t0 = mb_now_s();
    const bool near = mb_wait_until_near(env->threads, pw->near_ns, NEAR_HOLD_S, t0 + limit, NULL);
    const double waited = mb_now_s() - t0;
    pw->waited_s += waited;
    pw->waits++;
    pw->ran_out += !near;
    if (!vo->quiet)
        fprintf(stderr, near ? "validate: %s: near (for %.0f s at a stretch) after %.1f s\n"
                             : "validate: %s: not near for %.0f s at a stretch within %.1f s; running at this placement\n",
                model, NEAR_HOLD_S, waited);
    return waited;
}

/* One round: the machine's speed against the calibration, then a traced run, stored. */
static int validate_round(const RunEnv *env, Db *db, const MachineRow *machine, const CostModel *cm,
                          const ValidationOpts *vo, PlacementWait *pw, ModelValidation *res, char *err, size_t errlen)
{
    RoundRun *r = &res->round[res->nrounds];
    const double waited_s = wait_until_near(env, vo, pw, res->m->name);
    const double t0 = mb_now_s();
    r->drift = (Drift){.compute = 1, .memory = 1};
    int rc = drift_measure(env->threads, cm, &r->drift, err, errlen);
    if (rc == 0)
        rc = run_train_for(env, res->m, res->batch, PLAN_TRAIN, vo->warmup, vo->steps, vo->min_time_s, true, machine,
                             "strong", 0, &r->run, err, errlen);
    /* the cores' distance again after the run: a host that moves the vCPUs does so every
     * few seconds, and a run that spent part of its time far is reported far */
    if (rc == 0 && r->drift.cross > 0)
        r->drift.cross_after = drift_cross_core(env->threads, cm);
    if (rc == 0 && r->drift.share > 0)
        r->drift.share_after = drift_core_share(env->threads);
    pw->run_s += mb_now_s() - t0;
    r->run.row.placement_wait_s = waited_s;
    if (rc == 0 && round_placed(r)) {
        snprintf(r->run.row.placement, sizeof r->run.row.placement, "%s",
                 round_one_core(r) ? "one core" : round_apart(r) ? "apart" : round_far(r) ? "nearer" : "near");
        r->run.row.cores_cross = fmax(r->drift.cross, r->drift.cross_after);
    }
    if (rc == 0 && db_run_insert(db, &r->run.row, r->run.step_s, r->run.loss, r->run.nsteps, r->run.ops, r->run.nops,
                                 NULL, 0) != 0)
        rc = verify_fail(err, errlen, VERIFY_FAIL, "%s", db_errmsg(db));
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
 * with the cross-core curve); in one zoo validation three models of 24 had every round of
 * four apart, in two others P3B1 and FISTA three of four (-35%, -28%). */
static bool mostly_far(const ModelValidation *r)
{
    int far = 0, placed = 0;
    for (int k = 0; k < r->nrounds; k++)
        if (round_placed(&r->round[k])) {
            placed++;
            far += round_far(&r->round[k]);
        }
    return placed > 0 && far >= placed - far;
}

static int extra_rounds(const RunEnv *env, Db *db, const MachineRow *machine, const CostModel *cm,
                        const ValidationOpts *vo, PlacementWait *pw, ModelValidation *res, int nm, char *err,
                        size_t errlen)
{
    for (int extra = 0; extra < vo->rounds; extra++) {
        int wanted = 0;
        for (int i = 0; i < nm; i++) {
            ModelValidation *r = &res[i];
            if (!mostly_far(r))
                continue;
            wanted++;
            if (!vo->quiet)
                fprintf(stderr, "validate: %s: as many runs or more so far with the cores at another placement as at "
                                "the calibration's; extra round %d of at most %d...\n",
                        r->m->name, extra + 1, vo->rounds);
            const int rc = validate_round(env, db, machine, cm, vo, pw, r, err, errlen);
            if (rc != 0)
                return rc;
        }
        if (wanted == 0)
            break;
    }
    return 0;
}

/* Where the cores were around one step of a run, by the probes between steps
 * (run_train_for): both threads on one core (an FMA burst x MB_SHARED_CORE or more its
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
 * near_ns: the calibration's near mark, or 0 (its probes showed one mode, or it stored
 * none) to read these runs' own probes: their two modes' split, or with one mode every
 * probed step near. Pooled, not a median of the rounds'
 * medians: a round can be all near, all apart or half and half. */
static int validate_steps(ModelValidation *res, double near_ns)
{
    if (near_ns <= 0) { /* these runs' own probes: two modes, or every probed step near */
        int n = 0;
        for (int k = 0; k < res->nrounds; k++)
            n += res->round[k].run.step_rtt_ns ? res->round[k].run.nsteps : 0;
        double *rtt = malloc(((size_t)n + 1) * 2 * sizeof *rtt);
        if (!rtt)
            return -1;
        int m = 0;
        for (int k = 0; k < res->nrounds; k++)
            for (int s = 0; res->round[k].run.step_rtt_ns && s < res->round[k].run.nsteps; s++)
                rtt[m++] = res->round[k].run.step_rtt_ns[s];
        MbRttModes modes;
        mb_rtt_modes(rtt, m, rtt + n + 1, &modes);
        free(rtt);
        near_ns = modes.two_modes ? mb_rtt_near_mark(&modes) : modes.probes > 0 ? INFINITY : 0;
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
static int validate_finish(const RunEnv *env, Db *db, const ValidationOpts *vo, ModelValidation *res,
                           double rtt_near_ns, char *err, size_t errlen)
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
        return verify_fail(err, errlen, VERIFY_FAIL, "out of memory for %s's steps", res->m->name);
    for (int h = 0; h < 2; h++) {
        if (!res->pred[h])
            continue;
        ValidationRow *v = &res->v[h];
        memset(v, 0, sizeof *v);
        v->prediction_id = res->prow[h].id;
        v->run_id = r->run.row.id;
        snprintf(v->model, sizeof v->model, "%s", res->m->name);
        v->batch = res->batch;
        v->threads = env->threads;
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
            return verify_fail(err, errlen, VERIFY_FAIL, "%s", db_errmsg(db));
        if (vo->stored)
            vo->stored(v, vo->stored_ctx);
    }
    res->meas = r->run.ops;
    /* the process as it was when the run began (libraries, BLAS buffers, what earlier runs
     * left resident) and what the run's plan allocates */
    res->memory_bytes = r->run.row.baseline_rss_bytes + r->run.row.planned_bytes;
    res->peak_rss_bytes = r->run.row.peak_rss_bytes;
    res->cross_before = r->drift.cross, res->cross_after = r->drift.cross_after;
    return 0;
}


int validation_run(const RunEnv *env, Db *db, const MachineRow *machine, const CalibrationRow *cal,
                   CostModel *const cm[2], const ValidationOpts *vo, ModelValidation *res, int nm, PlacementWait *pw,
                   int *done, char *err, size_t errlen)
{
    *done = 0;
    *pw = (PlacementWait){.near_ns = cal->rtt_fastest_ns};
    machine_runtime_bytes(); /* the BLAS buffers allocated before the first run, as for all later ones */
    int rc = 0, predicted = 0;
    for (int round = 0; round < vo->rounds && rc == 0; round++)
        for (int i = 0; i < nm && rc == 0; i++) {
            ModelValidation *r = &res[i];
            char of_rounds[32];
            if (!vo->quiet)
                fprintf(stderr, "validate: %s at batch %d (%d/%d%s): %straining %d+%d steps (timed: at least %g s)...\n",
                        r->m->name, r->batch, i + 1, nm, round_label(of_rounds, sizeof of_rounds, round, vo->rounds),
                        round == 0 ? "predicting, then " : "", vo->warmup, vo->steps, vo->min_time_s);
            if (round == 0) {
                if ((rc = validate_predict(env, db, cal, cm, vo, r, err, errlen)))
                    break;
                predicted++;
            }
            rc = validate_round(env, db, machine, cm[0], vo, pw, r, err, errlen);
        }
    if (rc == 0)
        rc = extra_rounds(env, db, machine, cm[0], vo, pw, res, predicted, err, errlen);
    /* models run at least once are reported (a failed round leaves its model's earlier ones) */
    for (int i = 0; i < predicted; i++) {
        if (res[i].nrounds == 0)
            break;
        char why[512];
        const int frc = validate_finish(env, db, vo, &res[i], cal->rtt_fastest_ns, why, sizeof why);
        if (frc != 0) {
            if (rc == 0)
                snprintf(err, errlen, "%s", why), rc = frc;
            break;
        }
        (*done)++;
    }
    return rc;
}

CostModel *validation_holdout_model(Db *db, const CalibrationRow *cal, const ModelValidation *res, int nm,
                                    int *dropped, char *err, size_t errlen)
{
    OpDesc *descs = NULL;
    int nd = 0;
    for (int i = 0; i < nm; i++) {
        Plan p;
        if (plan_build(res[i].m, res[i].batch, &p, err, errlen) != 0) {
            free(descs);
            return NULL;
        }
        OpDesc *grown = realloc(descs, (size_t)(nd + p.nops) * sizeof *descs);
        if (!grown) {
            plan_free(&p);
            free(descs);
            verify_fail(err, errlen, VERIFY_FAIL, "out of memory for the holdout's shapes");
            return NULL;
        }
        descs = grown;
        for (int j = 0; j < p.nops; j++)
            descs[nd++] = p.ops[j].desc;
        plan_free(&p);
    }
    CostModel *cm = cm_load(db, cal->id, err, errlen);
    if (cm) {
        *dropped = cm_holdout(cm, descs, nd);
        cm_fit(cm);
    }
    free(descs);
    return cm;
}

/* ---- data-parallel validation (under mpirun) ---- */

/* A data-parallel validation's drift references: of the ops the calibration measured
 * exactly, the one with the largest predicted time in each drift class (compute-bound;
 * the rest). The calibration the prediction came from may hold none of drift_measure's
 * fixed shapes (a calibration of the model's ops alone), but it holds these. Indices into
 * the plan, -1 where the class has none. */
static void dp_drift_refs(const Plan *plan, const OpTimeRow *ops, int nops, int idx[2])
{
    idx[0] = idx[1] = -1;
    for (int i = 0; i < nops; i++) {
        /* an op that sums over the tensor-parallel group runs only with the group: timed by
         * each rank on its own, the ranks' repetitions would not meet */
        if (strcmp(ops[i].source, "exact") != 0 || op_communicates(&plan->ops[i].desc))
            continue;
        const int cls = drift_compute_kind(ops[i].kind) ? 0 : 1;
        if (idx[cls] < 0 || ops[i].time_s > ops[idx[cls]].time_s)
            idx[cls] = i;
    }
}

/* The prediction with its compute scaled by the representative round's drift (the
 * allreduce as predicted: the step's own allreduce is what it is compared with). */
double dp_adjusted_s(const DpResult *r)
{
    return r->pops ? drift_adjusted_s(&r->drift, r->pops, r->nops) + r->pred.allreduce_s : r->pred.iter_s;
}

/* The gradients' allreduce timed alone by every rank, in place and from cold caches as the
 * communication calibration times it: seconds, the slowest rank's median, or 0 where the
 * ranks' memory cannot hold it (said on stderr). Timed just before and just after each
 * run, it tells whether the ranks' communication ran at its calibrated speed then: at
 * np=2 on the 2-vCPU Zen 4 VM, P1B1's 932 MiB allreduce took 158-163 ms in steps within a
 * minute of calibrating at 158-160, and full validations that came later missed it by
 * 20-38%: the host had moved the vCPUs in between. Every rank calls it. */
static double dp_allreduce_reference(const RunEnv *env, size_t bytes)
{
    const MbCommKernel k = {MB_COMM_ALLREDUCE, bytes};
    const MbProtocol p = mb_protocol(MB_QUICK);
    double samples[64];
    MeasurementRow m;
    char err[256];
    const int rc = mb_time_comm(&k, &p, env->threads, &m, samples, err, sizeof err);
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

int validation_dp_setup(const ModelSpec *const *models, int nm, const ValidationOpts *vo, int ranks, DpResult *res,
                        char *err, size_t errlen)
{
    memset(res, 0, (size_t)nm * sizeof *res);
    for (int i = 0; i < nm; i++) {
        res[i].m = models[i];
        int b = vo->batch ? vo->batch : models[i]->default_batch;
        if (!vo->weak_scaling && b % ranks != 0)
            return verify_fail(err, errlen, VERIFY_USAGE, "%s: batch %d does not split evenly over %d ranks; give --batch (a "
                        "multiple of %d) or --scaling weak", models[i]->name, b, ranks, ranks);
        res[i].batch = vo->weak_scaling ? b : b / ranks;
    }
    return 0;
}

void dp_result_free(DpResult *r)
{
    free(r->pops);
    r->pops = NULL;
}

int validation_dp_run(const RunEnv *env, Db *db, const MachineRow *machine, const CalibrationRow *cal,
                      const CostModel *cm, const CommModel *comm, double over, const ValidationOpts *vo, DpResult *res,
                      int nm, int *done_out, char *err, size_t errlen)
{
    /* tensor parallel: each group of comm_tp_size() ranks trains one copy (res[i].m a share)
     * and `ranks` counts the copies, the data-parallel group the gradients are summed over */
    const int ranks = comm_dp_size(), tp = comm_tp_size();
    const bool root = comm_rank() == 0;
    const char *scaling = vo->weak_scaling ? "weak" : "strong";
    int rc = 0, predicted = 0;
    double rtt_fastest_ns = INFINITY; /* of this validation's probes */
    for (int round = 0; round < vo->rounds && rc == 0; round++)
        for (int i = 0; i < nm && rc == 0; i++) {
            DpResult *r = &res[i];
            if (root) {
                char of_rounds[32];
                fprintf(stderr, "validate: %s at batch %d (%d per %s x %d, %d/%d%s): %straining %d+%d steps "
                                "(timed: at least %g s)...\n", r->m->name, r->batch * ranks, r->batch,
                        tp > 1 ? "tensor-parallel group" : "rank", ranks, i + 1, nm,
                        round_label(of_rounds, sizeof of_rounds, round, vo->rounds),
                        round == 0 ? "predicting, then " : "", vo->warmup, vo->steps, vo->min_time_s);
            }
            if (round == 0) {
                Plan plan;
                if (plan_build(r->m, r->batch, &plan, err, errlen) != 0) {
                    rc = VERIFY_USAGE;
                    break;
                }
                int idx[2] = {-1, -1};
                if (root) {
                    rc = machine_predict_dp(cm, cal, env->threads, comm, &plan, ranks, over, &r->pred, &r->pops, NULL, err, errlen);
                    r->nops = plan.nops;
                    if (rc == 0 && db_prediction_insert(db, &r->pred, r->pops, plan.nops) != 0)
                        rc = verify_fail(err, errlen, VERIFY_FAIL, "%s", db_errmsg(db));
                    if (rc == 0)
                        dp_drift_refs(&plan, r->pops, r->nops, idx);
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
            if ((rc = drift_measure_ops(env->threads, cm, r->refs, r->nrefs, over, &drift, err, errlen)))
                break;
            /* the reference times the whole job's allreduce: not the data-parallel groups' sum
             * under tensor parallelism */
            const double ar_before = tp > 1 ? 0 : dp_allreduce_reference(env, r->grad_bytes);
            const double rtt_before = comm_peer_rtt_ns();
            RunResult run;
            if ((rc = run_train_for(env, r->m, r->batch, PLAN_TRAIN, vo->warmup, vo->steps, vo->min_time_s, false,
                                      machine, scaling, 0, &run, err, errlen))) {
                if (run.failed)
                    run_result_free(&run);
                break;
            }
            const double rtt_after = comm_peer_rtt_ns();
            const double ar_after = tp > 1 ? 0 : dp_allreduce_reference(env, r->grad_bytes);
            if (root) {
                DpRound *k = &r->round[r->nrounds];
                /* where the ranks ran, classed against the fastest round trip seen so far */
                if (rtt_before > 0 && rtt_after > 0) {
                    rtt_fastest_ns = fmin(rtt_fastest_ns, fmin(rtt_before, rtt_after));
                    k->rtt_before_ns = rtt_before, k->rtt_after_ns = rtt_after;
                    k->cores_ratio = fmax(rtt_before, rtt_after) / dp_rtt_near_ns(comm, comm_size(), rtt_fastest_ns);
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
                    rc = verify_fail(err, errlen, VERIFY_FAIL, "%s", db_errmsg(db));
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
                           .threads = env->threads, .predicted_s = r->pred.iter_s, .measured_s = r->meas_s,
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
            rc = verify_fail(err, errlen, VERIFY_FAIL, "%s", db_errmsg(db));
        else if (vo->stored)
            vo->stored(&v, vo->stored_ctx);
    }
    *done_out = done;
    return rc;
}

/* ---- summaries ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median_abs(const double *v, int n)
{
    double *a = malloc((size_t)(n > 0 ? n : 1) * sizeof *a);
    for (int i = 0; i < n; i++)
        a[i] = fabs(v[i]);
    qsort(a, (size_t)n, sizeof *a, cmp_double);
    const double m = n == 0 ? 0 : n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
    free(a);
    return m;
}


int kind_rows(const ModelValidation *res, int nm, bool holdout, KindRow **out)
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

void kind_rows_free(KindRow *k, int n)
{
    for (int i = 0; i < n; i++)
        free(k[i].op_err[0]), free(k[i].op_err[1]);
    free(k);
}


double near_error_pct(const ModelValidation *r, int h)
{
    return 100 * (r->v[h].predicted_s - r->near_measured_s) / r->near_measured_s;
}

NearSummary near_summary(const ModelValidation *res, int nm, int h)
{
    NearSummary ns = {.max_model = "", .every_max_model = ""};
    double e[VALIDATION_MAX_MODELS], every[VALIDATION_MAX_MODELS];
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


PlacedSummary placed_summary(const ModelValidation *res, int nm, int h)
{
    PlacedSummary ps = {.max_model = ""};
    double e[VALIDATION_MAX_MODELS];
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


double steps_near_error_pct(const ModelValidation *r, int h)
{
    return 100 * (r->v[h].predicted_s - r->steps_near_s) / r->steps_near_s;
}

StepSummary step_summary(const ModelValidation *res, int nm, int h)
{
    StepSummary ss = {.max_model = "", .near_max_model = ""};
    double e[VALIDATION_MAX_MODELS], en[VALIDATION_MAX_MODELS];
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

