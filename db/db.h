/* db/db.h — the dlperf SQLite database: schema with a migration chain, typed rows, and
 * the reads and writes the rest of the tool needs.
 *
 * One plain file (default $XDG_DATA_HOME/dlperf/dlperf.db; --db and DLPERF_DB override it)
 * in WAL mode with a busy timeout, so concurrent dlperf processes can write. db/ knows no
 * op or model internals: ops are stored by their canonical key string (ops/op_key).
 * A file that is not a SQLite database, or a SQLite database that is not dlperf's
 * (application_id), is refused and never written.
 *
 * Every function returning int returns 0 on success and -1 on error with a one-line
 * message in db_errmsg(db) that names the database path.
 */
#ifndef DLPERF_DB_H
#define DLPERF_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Db Db;

enum { DB_NOT_FOUND = 1 }; /* returned by lookups that found nothing (not an error) */
enum { MB_PASSES_MAX = 10 }; /* a calibration's passes over its lists at most (calibrate --rounds) */

/* ---- rows ---- */

typedef struct {
    int64_t id;
    char fingerprint[32]; /* hex hash of cpu model, flags, cores, memory: identifies the machine */
    char cpu_model[128];
    char cpu_flags[2048];
    int cores;             /* online logical CPUs */
    int64_t mem_bytes;     /* MemTotal */
    char hostname[128];
    char os[128];          /* uname sysname release machine */
} MachineRow;

/* The software side of a measurement: recorded with every calibration and every run. */
typedef struct {
    int threads;
    int ranks;
    char blas_core[32];    /* OpenBLAS core type in use, e.g. "SkylakeX" */
    char blas_config[256]; /* openblas_get_config() */
    char blas_choice[160]; /* how the core was chosen: "probed: SkylakeX 196 GF/s > Haswell 98", "user: OPENBLAS_CORETYPE" */
    char compiler[128];
    char git_commit[64];
    char mpi_library[128]; /* empty when not under MPI */
    char threading[160];   /* BLAS threading build and OpenMP wait policy, e.g. "OpenMP BLAS; wait
                              OMP_WAIT_POLICY=PASSIVE (set by dlperf: 2 ranks on this node)" */
} SoftwareInfo;

typedef struct {
    int64_t id;
    int64_t machine_id;
    char mode[16];    /* "quick" | "default" | "full"; "comm" | "comm-quick": MPI collectives */
    char status[16];  /* "running" | "complete" | "interrupted" */
    char started_at[32], finished_at[32]; /* ISO 8601 UTC */
    int64_t pid;      /* of the calibrating process, to detect a dead "running" one */
    int rounds;       /* passes over the kernel list, each kernel's samples pooled (>= 1) */
    int64_t llc_bytes; /* last-level cache one process can rely on (what the cold protocol
                          flushes, and what the predictor's cache model holds); 0: unknown */
    double runtime_rss_bytes; /* communication calibrations: the largest rank's resident
                                 memory before any buffer (libraries, MPI, BLAS); 0: not
                                 recorded (other calibrations, and those from before it) */
    double rtt_fastest_ns;    /* the near mark of its placement probes: a round trip of MB_FAR_RTT
                                 x it or more was apart. Between its threads, the split of their
                                 two modes / MB_FAR_RTT (microbench/rtt_modes.h; 0: one mode or
                                 not probed), or (comm) the node's first two ranks'; older
                                 calibrations stored the fastest round trip */
    SoftwareInfo sw;
    /* v25: a calibration of another device (dlperf import): the device's spec-sheet name
     * ('' for this machine), the precision its measurements ran at ("fp32", "tf32",
     * "fp16", "bf16"; this machine's are fp32) and what was imported ("neusight:
     * FILE, FILE"; '' for this machine's own) */
    char device[48];
    char precision[8];
    char source[512];
} CalibrationRow;

/* One timed kernel (microbench protocol result). */
typedef struct {
    int64_t id;
    int64_t calibration_id;
    char family[24];        /* "gemm", "conv", "stream", "eltwise", "model-op", ... */
    char key[160];          /* ops/op_key canonical key */
    char kind[24];          /* op_kind_name */
    char phase[16];         /* op_phase_name */
    int threads;
    int warmups;
    int reps;               /* samples kept */
    int inner;              /* kernel executions per sample (for kernels near timer resolution) */
    double median_s, min_s, max_s, mean_s, stddev_s; /* per execution */
    double warm_s;          /* kernels timed from cold caches (or a fresh input): the median
                               with their data left in cache by the previous execution;
                               0 = not measured (compute-bound and bandwidth kernels) */
    double ci95_lo_s, ci95_hi_s;                      /* 95% CI of the mean (Student t) */
    double flops, bytes;    /* per execution, from op_cost */
    bool validated;         /* spot check passed outside the timed region */
    double max_err;         /* largest scaled error of the spot check */
    int far_passes;         /* passes timed with the threads' cores apart (microbench/placement.c),
                               which the median leaves out unless every pass was; 0: none, or
                               one thread */
    int shared_passes;      /* passes timed with both threads on one core (the round trip near,
                               the FMA probe x1.5 or more slower together than alone), left
                               out as far_passes are; counted where not far */
    char pass_placement[MB_PASSES_MAX + 1]; /* a letter a pass, in pass order: n near, a apart,
                                               s on one core, - not probed; "" before v17 */
    double apart_s;         /* the apart price: the median of the passes' medians of their apart
                               samples (before v22: of the apart passes'); 0: none apart */
    const double *samples;  /* reps per-execution times (seconds); written, not read back */
    const int *sample_rounds; /* the pass over the lists each sample came from (0-based);
                                 NULL: all from pass 0 */
    const double *sample_rtt_ns; /* v22: the round trip between the threads' cores around each
                                    sample, the slower probe (ns); NULL: not probed (one thread) */
    int nsamples;
    /* v25: measurements of other devices: the framework and libraries that timed it
     * ("PyTorch 2.1.0, CUDA 12.1, cuDNN 8.9.2"), where it came from (FILE:LINE, several
     * lines where one key was measured more than once) and what the time covers:
     * "kernel" (the device's time of the op's kernels, as CUDA events see it) or
     * "framework" (a framework's call, its host overhead included); all '' for this
     * machine's own measurements */
    char framework[96];
    char source[160];
    char scope[12];
} MeasurementRow;

typedef struct {
    int64_t id;
    int64_t machine_id;
    char model[48];
    int batch;
    int steps;        /* timed steps */
    int warmup_steps; /* excluded from the statistics */
    char status[16];  /* "complete" | "failed" */
    char started_at[32];
    SoftwareInfo sw;
    double median_s, min_s, max_s, mean_s, stddev_s; /* per iteration */
    double loss_first, loss_last;
    double planned_bytes;   /* memory the plan allocates (profile) */
    double peak_rss_bytes;  /* measured VmHWM */
    double baseline_rss_bytes; /* VmRSS before the run allocated anything: the runtime */
    bool traced;
    char mode[16];          /* "train" | "fwd_bwd" | "inference" */
    int epochs;             /* epoch training: epochs done; 0 for step runs */
    /* data-parallel runs (sw.ranks > 1); batch is the global batch */
    char scaling[8];        /* "none" (one process), "strong" or "weak" */
    int batch_per_rank;
    double allreduce_bytes; /* summed per step */
    double bucket_bytes;    /* 0: one allreduce after backward; else overlapped buckets */
    const struct RankTimeRow *rank_times; /* sw.ranks rows, written with the run */
    /* v19: where validate found the threads' cores before and after the run: "near",
     * "apart", "nearer" (than calibrated) or "one core" ("": not probed: one thread,
     * `run`, or before dlperf stored it), and the cross-core read over the calibration's,
     * the larger of before and after (0: not measured) */
    char placement[12];
    double cores_cross;
    /* v24: how long validate waited before the run for the cores to come near, the
     * calibration's placement (seconds; 0: near at once, not waited, or before dlperf
     * waited: cli/cmd_validate.c) */
    double placement_wait_s;
    /* v21: per step (warm-up first, as step_s), where the threads' cores were around it: the
     * round trip between them, the slower of the probes just before and just after (ns),
     * and the larger core share (mb_core_share); NULL: not probed */
    const double *step_rtt_ns, *step_core_share;
} RunRow;

/* Where one rank's step time went (medians over a run's timed steps). */
typedef struct RankTimeRow {
    int rank;
    char hostname[64];
    char cpus[64]; /* the CPUs the rank was allowed, as taskset -c lists them ("" unknown) */
    double step_s, compute_s, wait_s, allreduce_s;
} RankTimeRow;

/* A named result of a run (test accuracy, F1, seed 004's total execution time, ...). */
typedef struct {
    char name[48];
    double value;
} MetricRow;

typedef struct {
    int op_index;   /* position in the training-step plan */
    int layer;      /* layer index, -1 for model-level ops (loss, update) */
    char layer_name[48];
    char key[160];
    char kind[24];
    char phase[16];
    double time_s;  /* runs: median measured; predictions: predicted */
    double flops;
    char source[16]; /* predictions: "exact" | "scaled" | "fitted" | "roofline"; runs: "" */
    double lo_s, hi_s; /* predictions: the op's uncertainty band */
    double cached;     /* predictions: fraction of the op's bytes the cache model finds in the
                          last-level cache (priced between cold and warm by it) */
} OpTimeRow;

typedef struct {
    int64_t id;
    int64_t calibration_id;
    char model[48];
    int batch;
    int threads;
    char created_at[32];
    double iter_s;          /* predicted time per training iteration */
    double iter_lo_s, iter_hi_s; /* band from measurement spread (min..max of per-op medians' CI) */
    double fwd_s, bwd_s, update_s;
    double mem_params, mem_grads, mem_opt, mem_act, mem_ws, mem_input, mem_total; /* bytes */
    int n_exact, n_scaled, n_fitted; /* ops priced by each path (roofline counts as fitted) */
    bool holdout;           /* priced without any measurement of the model's own shapes */
    /* data-parallel (ranks > 1): iter_s includes the gradients' allreduce; batch is per rank */
    int ranks;
    double allreduce_s;
    double allreduce_lo_s, allreduce_hi_s; /* its band (not stored: iter_lo_s and iter_hi_s hold it) */
    char allreduce_source[16]; /* "measured" (interpolated at this rank count) | "fitted" */
    double mem_comm;           /* bytes each rank holds for the allreduce (the MPI library's scratch) */
} PredictionRow;

typedef struct {
    int64_t id;
    int64_t prediction_id;
    int64_t run_id;
    char model[48];
    int batch;
    int threads;
    char created_at[32];
    double predicted_s, measured_s, measured_min_s, measured_max_s;
    double error_pct; /* 100 * (predicted - measured) / measured */
    bool holdout;     /* against a holdout prediction */
    /* the machine's speed at the run against the calibration (reference kernels timed just
     * before it: time now / calibrated, compute-bound and memory-bound), and the error of
     * the prediction scaled by them */
    double drift_compute, drift_memory, adjusted_error_pct;
    /* a cross-core read's time over the calibration's, the slower of just before and just
     * after the run (> 1: the cores were farther apart, as a VM's host may place its
     * vCPUs); 0: not measured */
    double drift_cross;
    /* the model's runs (rounds), those whose cores were x1.5 or more farther apart than
     * at calibration before or after the run, or on one core (far), and those whose cores
     * were not (near; neither where not measured), and the median of the near runs'
     * medians (0: none). one_core_rounds (v16): of the far runs, those whose FMA probe
     * found both threads on one core */
    int rounds, far_rounds, near_rounds, one_core_rounds;
    double measured_near_s;
    /* v18: the far runs with the cores apart (not on one core), the median of their
     * medians (0: none), the prediction at the apart placement (0: not priced), and the
     * error with each run priced at its own placement (NaN: not priced; stored NULL) */
    int apart_rounds;
    double measured_apart_s, predicted_apart_s, error_placed_pct;
    /* data-parallel validations (ranks > 1; batch is the global batch) */
    int ranks;
    double predicted_allreduce_s, measured_allreduce_s;
    /* the gradients' allreduce timed alone by every rank, the slower of just before and
     * just after the run, over the prediction's (> 1: the ranks' communication was slower
     * than calibrated when the run ran); 0: not measured */
    double drift_allreduce;
    /* v20: the allreduce priced at the placement the run found the node's ranks in (its
     * apart price where they were apart and the calibration has one, else the near one); 0:
     * not probed */
    double predicted_allreduce_placed_s;
    /* v21: the timed steps of the model's runs by where the cores were around each step
     * (RunRow.step_rtt_ns against the calibration's fastest round trip, step_core_share):
     * near, apart and one-core counts, their pooled medians (0: none), and the median of the steps' errors, each
     * step priced at its own placement (NaN: not probed; stored NULL) */
    int steps_near, steps_apart, steps_one_core;
    double measured_steps_near_s, measured_steps_apart_s, error_steps_placed_pct;
} ValidationRow;

/* ---- opening ---- */

/* The path dlperf uses when --db is not given: $DLPERF_DB, else
 * $XDG_DATA_HOME/dlperf/dlperf.db, else $HOME/.local/share/dlperf/dlperf.db. */
void db_default_path(char *out, size_t n);

/* Opens (creating the file and its directory if needed) and migrates to the current
 * schema. Refuses a file that is not SQLite or belongs to another application, and a
 * database from a newer dlperf. On failure *out is NULL and err holds one line. */
int db_open(const char *path, Db **out, char *err, size_t errlen);
void db_close(Db *db);
const char *db_errmsg(const Db *db);
const char *db_path(const Db *db);
int db_schema_version(Db *db);
int db_begin(Db *db);   /* BEGIN IMMEDIATE */
int db_commit(Db *db);
int db_rollback(Db *db);

/* ---- machine ---- */
/* Finds the machine by fingerprint or inserts it; sets m->id. */
int db_machine_upsert(Db *db, MachineRow *m);

/* ---- calibration ---- */
/* Inserts with status "running" and started_at = now; sets c->id. */
int db_calibration_begin(Db *db, CalibrationRow *c);
/* Sets status ("complete" or "interrupted") and finished_at = now. */
int db_calibration_finish(Db *db, int64_t calibration_id, const char *status);
/* Records the fastest round trip the calibration's placement probes saw (ns). */
int db_calibration_set_rtt(Db *db, int64_t calibration_id, double rtt_fastest_ns);
/* Of a calibration's samples probed for where the threads' cores were (sample.rtt_ns > 0),
 * how many, and how many ran apart: a round trip far_ratio times the calibration's fastest
 * or more (0 and 0 for a calibration from before v22, or on one thread). */
int db_calibration_sample_placement(Db *db, int64_t calibration_id, double far_ratio, int *probed, int *apart);
/* The calibration with this id; DB_NOT_FOUND if there is none. */
int db_calibration_get(Db *db, int64_t calibration_id, CalibrationRow *out);
/* Marks "running" calibrations of this machine whose process is gone as "interrupted". */
int db_calibration_reap(Db *db, int64_t machine_id);
/* Latest complete calibration of the machine at this thread count, measured by one process
 * (ranks 1): 0, DB_NOT_FOUND or -1. */
int db_calibration_latest(Db *db, int64_t machine_id, int threads, CalibrationRow *out);
/* The same measured by `ranks` processes of an MPI job at once (each rank ran the same
 * kernels at the same time: the speeds one rank of such a job sees). */
int db_calibration_latest_ranks(Db *db, int64_t machine_id, int threads, int ranks, CalibrationRow *out);
/* Latest complete communication calibration (mode "comm" / "comm-quick", measured under
 * mpirun) of the machine with `ranks` ranks, or with the most ranks if ranks is 0. */
int db_comm_calibration_latest(Db *db, int64_t machine_id, int ranks, CalibrationRow *out);
/* Inserts a measurement and its samples: in a transaction of its own, or inside the
 * caller's (db_begin) when one is open, so that an import commits all its rows or none. */
int db_measurement_insert(Db *db, MeasurementRow *m);

/* ---- calibrations of other devices (dlperf import) ---- */
/* The machine row a device's calibrations belong to (fingerprint "device:NAME", the
 * device's title as its model), inserted if new; sets *machine_id. */
int db_device_machine(Db *db, const char *device, const char *title, int64_t *machine_id);
/* Calls fn for every complete calibration of the device (precision NULL: any), oldest
 * first; fn returns nonzero to stop. */
int db_device_calibrations(Db *db, const char *device, const char *precision,
                           int (*fn)(const CalibrationRow *c, void *ctx), void *ctx);
/* A fit of one group of a device's evidence (predictor/device_evidence.h). */
typedef struct {
    char device[48], precision[8], group[48], form[12];
    char params[256];       /* the form's parameters, space-separated */
    int points;
    double fit_err, band;   /* mean |relative error| over its points; its band (relative) */
    char calibrations[512]; /* the calibration ids fitted, comma-separated */
} DeviceFitRow;
/* Replaces every fit of (device, precision) by rows[0..n), in one transaction. */
int db_device_fits_put(Db *db, const char *device, const char *precision, const DeviceFitRow *rows, int n);
/* Calls fn for every stored fit of (device, precision), by group. */
int db_device_fits_foreach(Db *db, const char *device, const char *precision,
                           int (*fn)(const DeviceFitRow *r, void *ctx), void *ctx);
/* Calls fn once per device and precision with complete calibrations: how many
 * calibrations and measurements it holds, by device name. */
int db_device_evidence_foreach(Db *db,
                               int (*fn)(const char *device, const char *precision, int calibrations,
                                         int measurements, void *ctx),
                               void *ctx);
/* Calls fn for every measurement of the calibration (samples not loaded). fn returns
 * nonzero to stop. */
int db_measurement_foreach(Db *db, int64_t calibration_id,
                           int (*fn)(const MeasurementRow *m, void *ctx), void *ctx);
/* A communication calibration's allreduce memory: the resident bytes one in-place
 * allreduce of `bytes` added to a rank (the MPI library's temporaries). The foreach calls
 * fn in ascending size; fn returns nonzero to stop. */
int db_comm_memory_insert(Db *db, int64_t calibration_id, double bytes, double scratch_bytes);
int db_comm_memory_foreach(Db *db, int64_t calibration_id, int (*fn)(double bytes, double scratch_bytes, void *ctx),
                           void *ctx);
/* Calls fn for every raw sample of the calibration's measurements (per-execution seconds
 * and the pass over the lists it came from), by measurement id, then in time order; fn
 * returns nonzero to stop. */
int db_sample_foreach(Db *db, int64_t calibration_id,
                      int (*fn)(int64_t measurement_id, int round, double time_s, void *ctx), void *ctx);

/* ---- spec sheets added by users (systems add) ---- */
/* Stores (or, with replace, replaces) a validated spec; DB_EXISTS if the name is taken and
 * !replace. kind: "device" | "interconnect" | "system". */
enum { DB_EXISTS = 2 };
int db_spec_put(Db *db, const char *name, const char *kind, const char *json, const char *source, bool replace);
/* The JSON (malloc'd, caller frees) and kind of a stored spec: 0, DB_NOT_FOUND or -1. */
int db_spec_get(Db *db, const char *name, char kind[16], char **json);
/* fn(name, kind, source, ctx) for every stored spec, by name. */
int db_spec_foreach(Db *db, int (*fn)(const char *name, const char *kind, const char *source, void *ctx), void *ctx);

/* ---- runs, predictions, validations ---- */
/* Inserts the run, its per-step times (step_s[0..nsteps), loss[0..nsteps), warm-up steps
 * included and flagged) and, when ops != NULL, its per-op trace. Sets r->id. */
int db_run_insert(Db *db, RunRow *r, const double *step_s, const double *loss, int nsteps,
                  const OpTimeRow *ops, int nops, const MetricRow *metrics, int nmetrics);
int db_prediction_insert(Db *db, PredictionRow *p, const OpTimeRow *ops, int nops);
int db_validation_insert(Db *db, ValidationRow *v);

/* ---- suite runs (seed 000's benchmarks on this machine) ---- */
typedef struct {
    int64_t id, machine_id;
    char started_at[32], finished_at[32];
    char status[16];       /* "running" | "complete" | "failed" */
    int64_t pid;
    char mode[8];          /* "full" | "quick" (not a valid FOM) */
    char run[12];          /* "base" */
    char precision[8];
    int threads;
    char git_commit[64], blas_core[32];
    double overall_fom;    /* NaN until complete */
    double wall_s;
} SuiteRunRow;
enum { SUITE_TIMES_MAX = 64 };
typedef struct {
    int64_t suite_id;      /* the run it belongs to */
    char benchmark[24];
    int instances, threads_per_instance, batch;
    double time_s;         /* the maximum across instances, in the benchmark's metric */
    double fwd_s;          /* NaN: none */
    double instance_s[SUITE_TIMES_MAX];
    double accuracy;       /* NaN: none */
    char accuracy_name[48];
    bool projected;
    double reference_s;    /* what the FOM compares with (NaN: none) */
    double fom;
    char note[160];
} SuiteResultRow;
/* Inserts a running suite run; sets r->id and r->started_at. */
int db_suite_begin(Db *db, SuiteRunRow *r);
int db_suite_result_insert(Db *db, int64_t suite_id, const SuiteResultRow *b);
/* Marks it complete (or failed) with its overall FOM and wall time. */
int db_suite_finish(Db *db, int64_t suite_id, const char *status, double overall_fom, double wall_s);
/* A stored run (id 0: this machine's latest complete one) and its results (malloc'd,
 * caller frees). 0, DB_NOT_FOUND or -1. */
int db_suite_get(Db *db, int64_t id, int64_t machine_id, SuiteRunRow *r, SuiteResultRow **rows, int *n);
/* Each benchmark's latest result from this machine's complete full-protocol runs at
 * `threads` (the runs may differ: a benchmark run with --only, another later), in the
 * suite's order; rows malloc'd. 0 (n may be 0) or -1. */
int db_suite_combined(Db *db, int64_t machine_id, int threads, SuiteResultRow **rows, int *n);

/* ---- reading for reports ---- */
/* Runs one read-only query (SELECT), its parameters bound from fmt as run_stmt's ("i", "I",
 * "d", "s"), and calls fn for each row with the columns as numbers (NaN where NULL or not a
 * number) and as text ("" where NULL); fn returns nonzero to stop. For the report's
 * aggregates, whose SQL belongs with the figure that draws them. */
int db_rows(Db *db, const char *sql, int (*fn)(int ncols, const double *num, const char *const *text, void *ctx),
            void *ctx, const char *fmt, ...);

/* Current time as ISO 8601 UTC ("2026-11-22T10:00:00Z"). */
void db_now_iso(char out[32]);

#endif
