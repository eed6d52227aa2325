/* verify/validation.h — `validate`'s engine: predict first, then run, then compare.
 *
 * For each model: the prediction from the full calibration (and with holdout a second one
 * from the calibration without any shape of the models being validated, fitted model
 * only), then traced training runs in rounds spread over the validation (a model's rounds
 * minutes apart, each just after the machine's drift against its calibration is timed),
 * then per model the iteration-time errors, where the host had the threads' cores, and the
 * memory the run planned against its peak RSS; over all models the error summaries and the
 * per-op-kind table. Predictions, runs and validations are stored (the view validation_op
 * holds every op's predicted and measured time side by side). Under mpirun the same for a
 * data-parallel job: every rank trains, rank 0 predicts, compares and stores.
 */
#ifndef DLPERF_VALIDATION_H
#define DLPERF_VALIDATION_H

#include <stdbool.h>
#include <stdint.h>

#include "db/db.h"
#include "microbench/mb.h"
#include "predictor/comm_model.h"
#include "predictor/predict.h"
#include "verify/drift.h"
#include "verify/runner.h"

enum { VALIDATION_MAX_MODELS = 64 };
/* A cross-core read this much slower than calibrated (or faster: a read whose every
 * calibration pass ran with the cores apart is priced apart, calibrate.c): the host has put
 * the cores at another distance than when calibrated (the EPYC VMs: x3.5-4.4 then, x0.9-1.2
 * otherwise). */
#define VALIDATION_FAR_CORES 1.5
/* the default of the most a round waits for the cores to come near (seconds), and what all
 * waits together may take beyond the rounds' own time (validation.c says why) */
#define VALIDATION_WAIT_NEAR_S 120.0
#define VALIDATION_WAIT_FLOOR_S 30.0

typedef struct {
    int batch, steps, warmup; /* batch 0: each model's (ModelValidation.batch decides) */
    int rounds;        /* runs of each model, spread over the validation (one pass over the models each) */
    double min_time_s; /* timed steps continue until they add up to this */
    double wait_near_s; /* the most a round waits for the cores to come near (0: no wait) */
    bool holdout, trace, weak_scaling;
    bool quiet;        /* no notes on stderr (the command prints JSON) */
    /* called after each validation row is stored (may be NULL): what an interrupted
     * validation has kept */
    void (*stored)(const ValidationRow *v, void *ctx);
    void *stored_ctx;
} ValidationOpts;

/* The waits for the cores to come near before each round (validation.c says why). */
typedef struct {
    double near_ns;  /* near's mark: the calibration's fastest round trip (0: none, no wait) */
    double run_s;    /* the rounds' time so far, waits excluded */
    double waited_s; /* the waits' time so far */
    int waits;       /* rounds that found the cores apart and waited */
    int ran_out;     /* of them, those that ran apart when the wait ran out */
} PlacementWait;

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
    /* the rounds by where the cores were: far (round_far: the cross-core read x VALIDATION_FAR_CORES
     * or more, or x1/VALIDATION_FAR_CORES or less, or both threads on one core, before or after the
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
} ModelValidation;

/* ---- data-parallel validation (under mpirun) ---- */

/* One run of a data-parallel validation (rank 0's record of it). */
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

/* One model's data-parallel validation. */
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

/* One process: validates res[0..nm) (each with m and batch set) against calibration cal:
 * cm[0] its cost model, cm[1] the holdout one or NULL. Round 1 predicts each model just
 * before its first run; every round is one pass over the models; then extra rounds for
 * models measured mostly at another placement of the cores; then each model's rows. pw
 * receives the waits. *done: the models with results (a failed round leaves the models
 * before it reported). 0; else VERIFY_FAIL or VERIFY_USAGE with err. */
int validation_run(const RunEnv *env, Db *db, const MachineRow *machine, const CalibrationRow *cal,
                   CostModel *const cm[2], const ValidationOpts *vo, ModelValidation *res, int nm, PlacementWait *pw,
                   int *done, char *err, size_t errlen);
void model_validation_free(ModelValidation *r);

/* The holdout cost model: calibration cal without any measurement that shares a shape with
 * the models' steps (at their batches), refitted. *dropped: the measurements left out. NULL
 * with err on failure. */
CostModel *validation_holdout_model(Db *db, const CalibrationRow *cal, const ModelValidation *res, int nm,
                                    int *dropped, char *err, size_t errlen);

/* Under mpirun (every rank calls it): res[i].m = models[i] and its per-rank batch from vo
 * (strong scaling: the global batch must split evenly). VERIFY_USAGE with err otherwise. */
int validation_dp_setup(const ModelSpec *const *models, int nm, const ValidationOpts *vo, int ranks, DpResult *res,
                        char *err, size_t errlen);
/* Every rank trains res[0..nm); rank 0 (db, cal, cm and comm given; NULL elsewhere)
 * predicts first, compares and stores. over: the cores' oversubscription the prediction
 * applies (machine_calibration_dp). *done (rank 0): the models with results. */
int validation_dp_run(const RunEnv *env, Db *db, const MachineRow *machine, const CalibrationRow *cal,
                      const CostModel *cm, const CommModel *comm, double over, const ValidationOpts *vo, DpResult *res,
                      int nm, int *done, char *err, size_t errlen);
void dp_result_free(DpResult *r);
/* The prediction with its compute scaled by the representative round's drift (the
 * allreduce as predicted). */
double dp_adjusted_s(const DpResult *r);

/* ---- summaries over the validated models ---- */

/* The median of |v[i]| (0: n = 0). */
double median_abs(const double *v, int n);

/* Per op kind and phase over every validated model: how much of the measured time the
 * prediction missed (error of the sum) and the typical op's miss (median |op error|). */
typedef struct {
    char kind[24], phase[16];
    int ops;
    double measured_s, predicted_s[2];
    double *op_err[2];
    int nerr;
} KindRow;

/* The errors against each model's runs at the calibration's placement of the cores
 * (ModelValidation.near_measured_s): over the models that had such a run, and over every model,
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

/* The errors with each round priced at its own placement (ModelValidation.placed_error_pct):
 * over the models with a priced round. */
typedef struct {
    int models;            /* with a priced round */
    int apart_runs;        /* runs priced apart */
    double median_abs_pct, max_abs_pct;
    const char *max_model;
    bool priced;           /* the calibration prices the apart placement */
} PlacedSummary;

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

/* The per-kind-and-phase rows of res[0..nm), largest measured time first (holdout: the
 * second prediction too); *out freed with kind_rows_free. */
int kind_rows(const ModelValidation *res, int nm, bool holdout, KindRow **out);
void kind_rows_free(KindRow *k, int n);
/* A model's error against its runs at the calibration's placement (calibration h). */
double near_error_pct(const ModelValidation *r, int h);
NearSummary near_summary(const ModelValidation *res, int nm, int h);
PlacedSummary placed_summary(const ModelValidation *res, int nm, int h);
/* A model's error against the pooled median of its near steps (calibration h). */
double steps_near_error_pct(const ModelValidation *r, int h);
StepSummary step_summary(const ModelValidation *res, int nm, int h);

#endif
