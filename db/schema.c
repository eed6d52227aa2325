/* db/schema.c — the schema as a migration chain.
 *
 * migrations[i] takes a database from user_version i to i+1. A migration is only ever
 * appended, never edited: databases in the field have already run the old ones.
 */
#include "db/schema.h"

#include <stddef.h>

static const char *const migrations[] = {
    /* v1: machines, calibrations with their measurements and raw samples, runs with
     * per-step times and per-op traces, predictions with per-op prices, validations. */
    "CREATE TABLE machine ("
    "  id INTEGER PRIMARY KEY,"
    "  fingerprint TEXT NOT NULL UNIQUE,"
    "  cpu_model TEXT NOT NULL, cpu_flags TEXT NOT NULL, cores INTEGER NOT NULL,"
    "  mem_bytes INTEGER NOT NULL, hostname TEXT NOT NULL, os TEXT NOT NULL,"
    "  first_seen TEXT NOT NULL);"
    "CREATE TABLE calibration ("
    "  id INTEGER PRIMARY KEY,"
    "  machine_id INTEGER NOT NULL REFERENCES machine(id),"
    "  mode TEXT NOT NULL,"
    "  status TEXT NOT NULL CHECK (status IN ('running','complete','interrupted')),"
    "  started_at TEXT NOT NULL, finished_at TEXT, pid INTEGER NOT NULL, hostname TEXT NOT NULL,"
    "  threads INTEGER NOT NULL, ranks INTEGER NOT NULL,"
    "  blas_core TEXT NOT NULL, blas_config TEXT NOT NULL, blas_choice TEXT NOT NULL,"
    "  compiler TEXT NOT NULL, git_commit TEXT NOT NULL, mpi_library TEXT NOT NULL);"
    "CREATE INDEX calibration_by_machine ON calibration(machine_id, threads, status);"
    "CREATE TABLE measurement ("
    "  id INTEGER PRIMARY KEY,"
    "  calibration_id INTEGER NOT NULL REFERENCES calibration(id) ON DELETE CASCADE,"
    "  family TEXT NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL, phase TEXT NOT NULL,"
    "  threads INTEGER NOT NULL, warmups INTEGER NOT NULL, reps INTEGER NOT NULL,"
    "  inner INTEGER NOT NULL,"
    "  median_s REAL NOT NULL, min_s REAL NOT NULL, max_s REAL NOT NULL, mean_s REAL NOT NULL,"
    "  stddev_s REAL NOT NULL, ci95_lo_s REAL NOT NULL, ci95_hi_s REAL NOT NULL,"
    "  flops REAL NOT NULL, bytes REAL NOT NULL,"
    "  validated INTEGER NOT NULL, max_err REAL NOT NULL,"
    "  UNIQUE (calibration_id, key));"
    "CREATE TABLE sample ("
    "  measurement_id INTEGER NOT NULL REFERENCES measurement(id) ON DELETE CASCADE,"
    "  rep INTEGER NOT NULL, time_s REAL NOT NULL, PRIMARY KEY (measurement_id, rep))"
    "  WITHOUT ROWID;"
    "CREATE TABLE run ("
    "  id INTEGER PRIMARY KEY,"
    "  machine_id INTEGER NOT NULL REFERENCES machine(id),"
    "  model TEXT NOT NULL, batch INTEGER NOT NULL, steps INTEGER NOT NULL,"
    "  warmup_steps INTEGER NOT NULL, status TEXT NOT NULL, started_at TEXT NOT NULL,"
    "  threads INTEGER NOT NULL, ranks INTEGER NOT NULL,"
    "  blas_core TEXT NOT NULL, blas_config TEXT NOT NULL, blas_choice TEXT NOT NULL,"
    "  compiler TEXT NOT NULL, git_commit TEXT NOT NULL, mpi_library TEXT NOT NULL,"
    "  median_s REAL, min_s REAL, max_s REAL, mean_s REAL, stddev_s REAL,"
    "  loss_first REAL, loss_last REAL, planned_bytes REAL, peak_rss_bytes REAL,"
    "  traced INTEGER NOT NULL);"
    "CREATE TABLE run_step ("
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    "  step INTEGER NOT NULL, warmup INTEGER NOT NULL, time_s REAL NOT NULL, loss REAL,"
    "  PRIMARY KEY (run_id, step)) WITHOUT ROWID;"
    "CREATE TABLE run_op ("
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    "  op_index INTEGER NOT NULL, layer INTEGER NOT NULL, layer_name TEXT NOT NULL,"
    "  key TEXT NOT NULL, kind TEXT NOT NULL, phase TEXT NOT NULL,"
    "  time_s REAL NOT NULL, flops REAL NOT NULL,"
    "  PRIMARY KEY (run_id, op_index)) WITHOUT ROWID;"
    "CREATE TABLE prediction ("
    "  id INTEGER PRIMARY KEY,"
    "  calibration_id INTEGER NOT NULL REFERENCES calibration(id),"
    "  model TEXT NOT NULL, batch INTEGER NOT NULL, threads INTEGER NOT NULL,"
    "  created_at TEXT NOT NULL,"
    "  iter_s REAL NOT NULL, iter_lo_s REAL NOT NULL, iter_hi_s REAL NOT NULL,"
    "  fwd_s REAL NOT NULL, bwd_s REAL NOT NULL, update_s REAL NOT NULL,"
    "  mem_params REAL NOT NULL, mem_grads REAL NOT NULL, mem_opt REAL NOT NULL,"
    "  mem_act REAL NOT NULL, mem_ws REAL NOT NULL, mem_input REAL NOT NULL,"
    "  mem_total REAL NOT NULL,"
    "  n_exact INTEGER NOT NULL, n_scaled INTEGER NOT NULL, n_fitted INTEGER NOT NULL);"
    "CREATE TABLE prediction_op ("
    "  prediction_id INTEGER NOT NULL REFERENCES prediction(id) ON DELETE CASCADE,"
    "  op_index INTEGER NOT NULL, layer INTEGER NOT NULL, layer_name TEXT NOT NULL,"
    "  key TEXT NOT NULL, kind TEXT NOT NULL, phase TEXT NOT NULL,"
    "  time_s REAL NOT NULL, flops REAL NOT NULL, source TEXT NOT NULL,"
    "  PRIMARY KEY (prediction_id, op_index)) WITHOUT ROWID;"
    "CREATE TABLE validation ("
    "  id INTEGER PRIMARY KEY,"
    "  prediction_id INTEGER NOT NULL REFERENCES prediction(id),"
    "  run_id INTEGER NOT NULL REFERENCES run(id),"
    "  model TEXT NOT NULL, batch INTEGER NOT NULL, threads INTEGER NOT NULL,"
    "  created_at TEXT NOT NULL,"
    "  predicted_s REAL NOT NULL, measured_s REAL NOT NULL,"
    "  measured_min_s REAL NOT NULL, measured_max_s REAL NOT NULL, error_pct REAL NOT NULL);"
    /* Every measurement with the machine and software it was taken on, one row each:
     * what a user opening the file with sqlite3 wants to read. */
    "CREATE VIEW measurement_full AS"
    "  SELECT m.*, c.mode, c.status AS calibration_status, c.started_at,"
    "         c.blas_core, c.blas_config, c.blas_choice, c.compiler, c.git_commit,"
    "         c.mpi_library, c.ranks, h.fingerprint, h.cpu_model, h.cpu_flags, h.cores,"
    "         h.mem_bytes, h.hostname,"
    "         CASE WHEN m.median_s > 0 THEN m.flops / m.median_s / 1e9 END AS gflops,"
    "         CASE WHEN m.median_s > 0 THEN m.bytes / m.median_s / 1e9 END AS gbs"
    "  FROM measurement m JOIN calibration c ON c.id = m.calibration_id"
    "  JOIN machine h ON h.id = c.machine_id;",
    /* v2: runs record their plan mode (train / fwd_bwd / inference) and epochs, and the
     * metrics training produced (accuracy, F1, test correlation, seed 004's times). */
    "ALTER TABLE run ADD COLUMN mode TEXT NOT NULL DEFAULT 'train';"
    "ALTER TABLE run ADD COLUMN epochs INTEGER NOT NULL DEFAULT 0;"
    "CREATE TABLE run_metric ("
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    "  name TEXT NOT NULL, value REAL, PRIMARY KEY (run_id, name)) WITHOUT ROWID;",
    /* v3: per-op uncertainty bands of predictions; holdout predictions and validations
     * (priced without any measurement of the model's own shapes); a run's RSS before it
     * allocated (the runtime's share of its peak); the machine's drift against the
     * calibration at a validation and the error adjusted for it; the per-op comparison of a
     * validation as a view (prediction_op beside run_op). */
    "ALTER TABLE prediction_op ADD COLUMN lo_s REAL;"
    "ALTER TABLE prediction_op ADD COLUMN hi_s REAL;"
    "ALTER TABLE prediction ADD COLUMN holdout INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE validation ADD COLUMN holdout INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE run ADD COLUMN baseline_rss_bytes REAL;"
    "ALTER TABLE validation ADD COLUMN drift_compute REAL;"
    "ALTER TABLE validation ADD COLUMN drift_memory REAL;"
    "ALTER TABLE validation ADD COLUMN adjusted_error_pct REAL;"
    "CREATE VIEW validation_op AS"
    "  SELECT v.id AS validation_id, v.model, v.batch, v.holdout, p.op_index, p.layer_name, p.key, p.kind,"
    "         p.phase, p.source, p.time_s AS predicted_s, r.time_s AS measured_s,"
    "         CASE WHEN r.time_s > 0 THEN 100.0 * (p.time_s - r.time_s) / r.time_s END AS error_pct"
    "  FROM validation v JOIN prediction_op p ON p.prediction_id = v.prediction_id"
    "  JOIN run_op r ON r.run_id = v.run_id AND r.op_index = p.op_index;",
    /* v4: data-parallel runs: how the batch was split (strong: the global batch divided
     * over the ranks; weak: a fixed batch per rank), the bytes each step's gradient
     * allreduce sums, and per rank where a step's time went (medians over the timed
     * steps). run.batch stays the global batch; run.ranks is the job's size.
     * Predictions and validations of data-parallel jobs: their rank count and allreduce.
     * Spec sheets added by users. */
    "ALTER TABLE run ADD COLUMN scaling TEXT NOT NULL DEFAULT 'none';"
    "ALTER TABLE run ADD COLUMN batch_per_rank INTEGER;"
    "ALTER TABLE run ADD COLUMN allreduce_bytes REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE run ADD COLUMN bucket_bytes REAL NOT NULL DEFAULT 0;"
    "CREATE TABLE run_rank ("
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    "  rank INTEGER NOT NULL, hostname TEXT NOT NULL,"
    "  step_s REAL NOT NULL, compute_s REAL NOT NULL, wait_s REAL NOT NULL, allreduce_s REAL NOT NULL,"
    "  PRIMARY KEY (run_id, rank)) WITHOUT ROWID;"
    /* predictions and validations of data-parallel jobs: ranks, the predicted allreduce
     * (and how it was priced), and the measured one (the ranks' mean median) */
    "ALTER TABLE prediction ADD COLUMN ranks INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE prediction ADD COLUMN allreduce_s REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE prediction ADD COLUMN allreduce_source TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE validation ADD COLUMN ranks INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE validation ADD COLUMN predicted_allreduce_s REAL;"
    "ALTER TABLE validation ADD COLUMN measured_allreduce_s REAL;"
    /* spec sheets users added (dlperf systems add): devices, interconnects, systems, as
     * their validated JSON; the built-in ones live in the binary */
    "CREATE TABLE system_spec ("
    "  name TEXT PRIMARY KEY,"
    "  kind TEXT NOT NULL CHECK (kind IN ('device','interconnect','system')),"
    "  json TEXT NOT NULL, source TEXT NOT NULL, added_at TEXT NOT NULL);",
    /* v5: calibrations measured in rounds (each kernel once per pass over the list, its
     * samples pooled) */
    "ALTER TABLE calibration ADD COLUMN rounds INTEGER NOT NULL DEFAULT 1;",
    /* v6: the cache model. Memory-bound kernels timed cold also get a warm median (their
     * data left in cache by the previous execution); the calibration records the last-level
     * cache it flushed; a predicted op records the fraction of its bytes the predictor
     * found still in that cache. */
    "ALTER TABLE measurement ADD COLUMN warm_s REAL;"
    "ALTER TABLE calibration ADD COLUMN llc_bytes INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE prediction_op ADD COLUMN cached REAL;",
    /* v7: how the threads behaved, recorded with calibrations and runs: the OpenBLAS
     * build's threading (OpenMP or pthreads) and the OpenMP wait policy, which moved op
     * times by 2-5x between them on a 2-vCPU machine; '' for older rows */
    "ALTER TABLE calibration ADD COLUMN threading TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE run ADD COLUMN threading TEXT NOT NULL DEFAULT '';",
    /* v8: the pass over the lists (0-based) each sample of a calibration in rounds was
     * taken in, so that calibrate --show can tell a slow stretch of a shared machine that
     * one pass fell into (0 for older rows) */
    "ALTER TABLE sample ADD COLUMN round INTEGER NOT NULL DEFAULT 0;",
    /* v9: what an allreduce costs in memory. A communication calibration probes, per
     * buffer size, the resident memory one in-place allreduce adds to a rank (the MPI
     * library's temporaries: 116 MiB of alexnet-owt's 233 MiB gradients at 2 ranks on Open
     * MPI 4.1), which data-parallel predictions add to each rank's memory (mem_comm) */
    "CREATE TABLE comm_memory ("
    "  calibration_id INTEGER NOT NULL REFERENCES calibration(id) ON DELETE CASCADE,"
    "  bytes REAL NOT NULL, scratch_bytes REAL NOT NULL,"
    "  PRIMARY KEY (calibration_id, bytes)) WITHOUT ROWID;"
    "ALTER TABLE prediction ADD COLUMN mem_comm REAL NOT NULL DEFAULT 0;",
    /* v10: a communication calibration's rank's own resident memory before any buffer
     * (libraries, the MPI library and its shared-memory segments, BLAS buffers), the
     * largest rank's: what a data-parallel prediction of that many ranks counts as each
     * rank's runtime (0: not recorded: other calibrations, and those from before it) */
    "ALTER TABLE calibration ADD COLUMN runtime_rss_bytes REAL NOT NULL DEFAULT 0;",
    /* v11: how far apart the cores were at the run against the calibration: a cross-core
     * read (each thread reading what its neighbour just wrote) timed just before and just
     * after the run, the slower, over the calibration's time of the same read (0: not
     * measured: one thread, a data-parallel validation, a calibration without the
     * cross-core curve, or before dlperf measured it) */
    "ALTER TABLE validation ADD COLUMN drift_cross REAL NOT NULL DEFAULT 0;",
    /* v12: a data-parallel validation's gradients' allreduce timed alone by every rank
     * just before and just after the run, the slower, over the prediction's allreduce (0:
     * not measured: one process, a buffer the ranks' memory could not hold twice over, or
     * before dlperf measured it) */
    "ALTER TABLE validation ADD COLUMN drift_allreduce REAL NOT NULL DEFAULT 0;",
    /* v13: a validation's runs (rounds) by where the cores were: x1.5 or more farther apart
     * than at calibration before or after the run (far_rounds), or not (near_rounds; neither
     * where not measured), and the median of the near runs' medians (measured_near_s, 0:
     * none). A host that moves a VM's vCPUs between cache domains every few minutes gives
     * a small model two speeds; this is its time at the calibration's placement */
    "ALTER TABLE validation ADD COLUMN rounds INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE validation ADD COLUMN far_rounds INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE validation ADD COLUMN near_rounds INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE validation ADD COLUMN measured_near_s REAL NOT NULL DEFAULT 0;",
    /* v14: a kernel's passes timed with its threads' cores apart (a cache line's round trip
     * x2.5 or more the fastest the calibration saw, before or after the pass), which its
     * median leaves out unless every pass was (microbench/placement.c; 0: none, one thread,
     * or before dlperf probed) */
    "ALTER TABLE measurement ADD COLUMN far_passes INTEGER NOT NULL DEFAULT 0;",
    /* v15: a kernel's passes timed with both its threads on one core (an FMA burst on both
     * threads x1.5 or more its time on one, before or after the pass, with the round trip
     * near): left out of its median as the far passes are (microbench/placement.c) */
    "ALTER TABLE measurement ADD COLUMN shared_passes INTEGER NOT NULL DEFAULT 0;",
    /* v16: of a validation's far runs, those whose FMA probe found both threads on one core
     * before or after the run (0: none, not probed, or before dlperf probed) */
    "ALTER TABLE validation ADD COLUMN one_core_rounds INTEGER NOT NULL DEFAULT 0;",
    /* v17: where the cores were in each of a kernel's passes, a letter a pass in pass
     * order: n near (the calibration's placement), a apart, s both threads on one core, -
     * not probed (one thread, or before dlperf stored it); and the median of its apart
     * passes' medians (0: no pass apart): the price of the apart placement
     * (predictor/cost_model.c, cm_set_apart) */
    "ALTER TABLE measurement ADD COLUMN pass_placement TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE measurement ADD COLUMN apart_s REAL NOT NULL DEFAULT 0;",
    /* v18: a validation's runs with the cores apart (far, not on one core), their medians'
     * median (0: none), and the prediction at that placement (0: not priced: one thread,
     * or a calibration with no pass apart): each run is compared with the prediction at
     * its own placement as well as with the calibration's */
    "ALTER TABLE validation ADD COLUMN apart_rounds INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE validation ADD COLUMN measured_apart_s REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE validation ADD COLUMN predicted_apart_s REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE validation ADD COLUMN error_placed_pct REAL;",
    /* v19: a validation round's run, where its threads' cores were (near, apart, one core;
     * '' not probed) and the cross-core read over the calibration's (0: not measured) */
    "ALTER TABLE run ADD COLUMN placement TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE run ADD COLUMN cores_cross REAL NOT NULL DEFAULT 0;",
    /* v20: the fastest round trip of a cache line the calibration's placement probes saw
     * (ns): between its threads (compute), between the node's first two ranks (comm); the
     * near placement's mark, against which a pass or a run is classed apart (0: not probed,
     * or before dlperf stored it) */
    "ALTER TABLE calibration ADD COLUMN rtt_fastest_ns REAL NOT NULL DEFAULT 0;"
    /* and a data-parallel validation's allreduce priced at the placement its representative
     * run found the node's ranks in (the apart price where apart; 0: not priced) */
    "ALTER TABLE validation ADD COLUMN predicted_allreduce_placed_s REAL NOT NULL DEFAULT 0;",
    /* v21: where the cores were at each step. A host that moves the vCPUs every few seconds
     * moves them within a run too (fista's 2-s runs: 300 steps at 2.0 ms, 400 at 2.9 ms), so
     * probes before and after a run cannot say where its steps ran. A one-process run on two
     * threads or more probes the round trip between the threads after every step (and once
     * before the first): a step's rtt_ns is the slower of the probes around it, and its
     * core_share the larger FMA-burst ratio (both threads on one core at MB_SHARED_CORE or
     * more, microbench/placement.c; 0: not probed). A validation's steps classed by them,
     * apart against the calibration's fastest round trip: how many were near, apart and on one core,
     * their pooled medians (0: none), and the median of the steps' errors with each step
     * priced at its own placement (one-core steps not priced; NULL: not probed) */
    "ALTER TABLE run_step ADD COLUMN rtt_ns REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE run_step ADD COLUMN core_share REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE validation ADD COLUMN steps_near INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE validation ADD COLUMN steps_apart INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE validation ADD COLUMN steps_one_core INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE validation ADD COLUMN measured_steps_near_s REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE validation ADD COLUMN measured_steps_apart_s REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE validation ADD COLUMN error_steps_placed_pct REAL;",
    /* v22: where the cores were at each calibration sample: the round trip between the
     * threads probed before a kernel's first sample and after each, the slower of the two
     * around a sample (ns; 0: not probed, one thread or before dlperf probed). A kernel's
     * near price comes from its near samples, its apart price from its apart ones; a pass
     * is apart (pass_placement 'a') when every sample of it was (microbench/calibrate.c) */
    "ALTER TABLE sample ADD COLUMN rtt_ns REAL NOT NULL DEFAULT 0;",
    /* v23: the CPUs each rank of a data-parallel run was allowed (its affinity, as taskset
     * -c lists them; '' before dlperf stored it): whether the launcher bound the ranks,
     * which Open MPI does up to one rank a core and not beyond */
    "ALTER TABLE run_rank ADD COLUMN cpus TEXT NOT NULL DEFAULT '';",
    /* v24: how long validate waited before a round for the threads' cores to come near, the
     * placement the calibration priced (seconds; 0: near at once, no wait, or before dlperf
     * waited): the host keeps the vCPUs apart for minutes at a time */
    "ALTER TABLE run ADD COLUMN placement_wait_s REAL NOT NULL DEFAULT 0;",
    /* v25: calibrations of devices that are not this machine. Measurements made elsewhere
     * (a GPU timed by tools/gpu_calibrate.py, published per-op results imported with
     * `dlperf import`) are stored as a calibration of the device's spec sheet (device, ''
     * for this machine), one per precision, under the machine row 'device:NAME'; source
     * names the format and files. Each measurement says what framework and libraries
     * timed it, where it came from (file:line) and what its time covers (scope: 'kernel',
     * the device's time of the op's kernels; 'framework', a framework's call with its host
     * overhead; '' this machine's own protocol) */
    "ALTER TABLE calibration ADD COLUMN device TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE calibration ADD COLUMN precision TEXT NOT NULL DEFAULT 'fp32';"
    "ALTER TABLE calibration ADD COLUMN source TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE measurement ADD COLUMN framework TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE measurement ADD COLUMN source TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE measurement ADD COLUMN scope TEXT NOT NULL DEFAULT '';"
    "CREATE INDEX calibration_by_device ON calibration(device, precision, status);"
    /* and the fits of a device's evidence (predictor/device_evidence.h): per group of ops
     * the kernel form's parameters (space-separated numbers), the points fitted, the fit's
     * error and band, and the calibrations fitted (comma-separated ids: a fit is stale once
     * they differ from the device's complete calibrations) */
    "CREATE TABLE device_fit ("
    "  device TEXT NOT NULL, precision TEXT NOT NULL, grp TEXT NOT NULL, form TEXT NOT NULL,"
    "  params TEXT NOT NULL, points INTEGER NOT NULL, fit_err REAL NOT NULL, band REAL NOT NULL,"
    "  calibrations TEXT NOT NULL, created_at TEXT NOT NULL,"
    "  PRIMARY KEY (device, precision, grp)) WITHOUT ROWID;",
    /* v26: runs of seed 000's suite on this machine (`dlperf suite`): one row per run
     * (quick: not a valid FOM; status running until it finishes, so that a run that died is
     * never shown as a result) and one per benchmark: its instances at once, each one's
     * time (JSON array, in the benchmark's metric), the maximum, the forward time where
     * the benchmark has one, the accuracy reached and what it is, whether the time is a
     * projection (ResNet-50's 90 epochs from timed iterations), and its FOM */
    "CREATE TABLE suite_run ("
    "  id INTEGER PRIMARY KEY, machine_id INTEGER NOT NULL REFERENCES machine(id),"
    "  started_at TEXT NOT NULL, finished_at TEXT, status TEXT NOT NULL, pid INTEGER NOT NULL DEFAULT 0,"
    "  mode TEXT NOT NULL, run TEXT NOT NULL, precision TEXT NOT NULL, threads INTEGER NOT NULL,"
    "  git_commit TEXT NOT NULL DEFAULT '', blas_core TEXT NOT NULL DEFAULT '',"
    "  overall_fom REAL, wall_s REAL);"
    "CREATE TABLE suite_result ("
    "  suite_id INTEGER NOT NULL REFERENCES suite_run(id), benchmark TEXT NOT NULL,"
    "  instances INTEGER NOT NULL, threads_per_instance INTEGER NOT NULL, batch INTEGER NOT NULL,"
    "  time_s REAL NOT NULL, fwd_s REAL, instance_times TEXT NOT NULL,"
    "  accuracy REAL, accuracy_name TEXT NOT NULL DEFAULT '', projected INTEGER NOT NULL DEFAULT 0,"
    "  reference_s REAL, fom REAL NOT NULL, note TEXT NOT NULL DEFAULT '',"
    "  PRIMARY KEY (suite_id, benchmark));",
};

int db_schema_latest(void) { return (int)(sizeof migrations / sizeof migrations[0]); }

const char *db_schema_migration(int from_version)
{
    if (from_version < 0 || from_version >= db_schema_latest())
        return NULL;
    return migrations[from_version];
}
