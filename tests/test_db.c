/* tests/test_db.c — the database: creation and migration, refusal of foreign files
 * (never modified), round trips of calibrations and measurements, transactional
 * run/prediction records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/db.h"

static char tmpdir[256];

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dlperf-test-db-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    return 0;
}

static int teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    return system(cmd);
}

static void path_in_tmp(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", tmpdir, name); }

static long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static int count_rows(const char *path, const char *sql)
{
    sqlite3 *h;
    assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return n;
}

static void test_create_in_new_directory_and_migrate(void **state)
{
    char path[512], err[512];
    path_in_tmp(path, sizeof path, "a/b/c/dlperf.db");
    Db *db;
    assert_int_equal(db_open(path, &db, err, sizeof err), 0);
    assert_true(db_schema_version(db) >= 1);
    int v = db_schema_version(db);
    db_close(db);
    /* reopening is idempotent */
    assert_int_equal(db_open(path, &db, err, sizeof err), 0);
    assert_int_equal(db_schema_version(db), v);
    db_close(db);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM sqlite_master WHERE name='measurement'"), 1);
}

static void test_refuses_non_sqlite_file_untouched(void **state)
{
    char path[512], err[512];
    path_in_tmp(path, sizeof path, "notes.txt");
    FILE *f = fopen(path, "w");
    fputs("these are my notes, not a database\n", f);
    fclose(f);
    long before = file_size(path);
    Db *db;
    assert_int_equal(db_open(path, &db, err, sizeof err), -1);
    assert_null(db);
    assert_non_null(strstr(err, "not a SQLite database"));
    assert_non_null(strstr(err, path));
    assert_int_equal(file_size(path), before);
    f = fopen(path, "r");
    char line[64];
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "these are my notes, not a database\n");
}

static void test_refuses_foreign_sqlite_database(void **state)
{
    char path[512], err[512];
    path_in_tmp(path, sizeof path, "other.db");
    sqlite3 *h;
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "CREATE TABLE customers(id, name); INSERT INTO customers VALUES (1,'x')",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    Db *db;
    assert_int_equal(db_open(path, &db, err, sizeof err), -1);
    assert_non_null(strstr(err, "another application"));
    assert_int_equal(count_rows(path, "SELECT count(*) FROM sqlite_master"), 1);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM customers"), 1);
}

static void test_refuses_directory(void **state)
{
    char err[512];
    Db *db;
    assert_int_equal(db_open(tmpdir, &db, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a regular file"));
}

static void test_refuses_newer_schema(void **state)
{
    char path[512], err[512];
    path_in_tmp(path, sizeof path, "newer.db");
    Db *db;
    assert_int_equal(db_open(path, &db, err, sizeof err), 0);
    db_close(db);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "PRAGMA user_version = 999", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    assert_int_equal(db_open(path, &db, err, sizeof err), -1);
    assert_non_null(strstr(err, "newer dlperf"));
}

static int count_cb(const MeasurementRow *m, void *ctx)
{
    int *n = ctx;
    assert_string_equal(m->family, "gemm");
    assert_true(m->validated);
    assert_float_equal(m->median_s, 0.5 + *n, 1e-12);
    assert_float_equal(m->warm_s, *n == 1 ? 0.25 : 0.0, 1e-12); /* stored only where measured */
    assert_string_equal(m->pass_placement, *n == 1 ? "nan" : ""); /* each pass's placement */
    assert_float_equal(m->apart_s, *n == 1 ? 1.75 : 0.0, 1e-12);
    (*n)++;
    return 0;
}

static void test_calibration_round_trip(void **state)
{
    char path[512], err[512];
    path_in_tmp(path, sizeof path, "cal.db");
    Db *db;
    assert_int_equal(db_open(path, &db, err, sizeof err), 0);
    MachineRow m = {.cores = 2, .mem_bytes = 1 << 30};
    snprintf(m.fingerprint, sizeof m.fingerprint, "abc123");
    snprintf(m.cpu_model, sizeof m.cpu_model, "Test CPU");
    assert_int_equal(db_machine_upsert(db, &m), 0);
    int64_t mid = m.id;
    assert_int_equal(db_machine_upsert(db, &m), 0);
    assert_int_equal(m.id, mid);

    CalibrationRow c = {.machine_id = mid, .llc_bytes = 32 << 20, .sw = {.threads = 2, .ranks = 1}};
    snprintf(c.mode, sizeof c.mode, "quick");
    snprintf(c.sw.blas_core, sizeof c.sw.blas_core, "SkylakeX");
    snprintf(c.sw.threading, sizeof c.sw.threading, "OpenMP BLAS; wait libgomp default (spin, then sleep)");
    assert_int_equal(db_calibration_begin(db, &c), 0);
    CalibrationRow got;
    /* a running calibration is never "latest complete" */
    assert_int_equal(db_calibration_latest(db, mid, 2, &got), DB_NOT_FOUND);

    double samples[3] = {0.4, 0.5, 0.6};
    for (int i = 0; i < 3; i++) {
        MeasurementRow r = {.calibration_id = c.id, .threads = 2, .reps = 3, .inner = 1,
                            .median_s = 0.5 + i, .warm_s = i == 1 ? 0.25 : 0, .validated = true,
                            .samples = samples, .nsamples = 3};
        snprintf(r.family, sizeof r.family, "gemm");
        snprintf(r.key, sizeof r.key, "gemm m=%d n=1 k=1 ta=0 tb=0 beta=0", i + 1);
        if (i == 1) { /* timed in three passes, the second with the cores apart */
            snprintf(r.pass_placement, sizeof r.pass_placement, "nan");
            r.far_passes = 1;
            r.apart_s = 1.75;
        }
        assert_int_equal(db_measurement_insert(db, &r), 0);
    }
    /* the same key twice in one calibration is refused (UNIQUE) and leaves no samples */
    MeasurementRow dup = {.calibration_id = c.id, .samples = samples, .nsamples = 3};
    snprintf(dup.key, sizeof dup.key, "gemm m=1 n=1 k=1 ta=0 tb=0 beta=0");
    assert_int_equal(db_measurement_insert(db, &dup), -1);
    assert_int_equal(db_calibration_finish(db, c.id, "complete"), 0);
    assert_int_equal(db_calibration_latest(db, mid, 2, &got), 0);
    assert_int_equal(got.id, c.id);
    assert_string_equal(got.sw.blas_core, "SkylakeX");
    assert_string_equal(got.sw.threading, c.sw.threading);
    CalibrationRow by_id;
    assert_int_equal(db_calibration_get(db, c.id, &by_id), 0);
    assert_int_equal(by_id.llc_bytes, 32 << 20);
    assert_int_equal(db_calibration_get(db, c.id + 100, &by_id), DB_NOT_FOUND);
    assert_int_equal(db_calibration_latest(db, mid, 1, &got), DB_NOT_FOUND);
    int n = 0;
    assert_int_equal(db_measurement_foreach(db, c.id, count_cb, &n), 0);
    assert_int_equal(n, 3);
    db_close(db);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM sample"), 9);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM measurement_full WHERE cpu_model='Test CPU'"), 3);
}

static void test_reap_dead_running_calibration(void **state)
{
    char path[512], err[512];
    path_in_tmp(path, sizeof path, "reap.db");
    Db *db;
    assert_int_equal(db_open(path, &db, err, sizeof err), 0);
    MachineRow m = {.cores = 1};
    snprintf(m.fingerprint, sizeof m.fingerprint, "f");
    assert_int_equal(db_machine_upsert(db, &m), 0);
    CalibrationRow c = {.machine_id = m.id};
    assert_int_equal(db_calibration_begin(db, &c), 0);
    /* our own pid is alive: not reaped */
    assert_int_equal(db_calibration_reap(db, m.id), 0);
    db_close(db);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM calibration WHERE status='running'"), 1);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    /* pid 2^22+1 is above the default pid_max: certainly not running */
    assert_int_equal(sqlite3_exec(h, "UPDATE calibration SET pid = 4194305", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    assert_int_equal(db_open(path, &db, err, sizeof err), 0);
    assert_int_equal(db_calibration_reap(db, m.id), 0);
    db_close(db);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM calibration WHERE status='interrupted'"), 1);
}

static void test_run_and_prediction_records(void **state)
{
    char path[512], err[512];
    path_in_tmp(path, sizeof path, "run.db");
    Db *db;
    assert_int_equal(db_open(path, &db, err, sizeof err), 0);
    MachineRow m = {.cores = 1};
    snprintf(m.fingerprint, sizeof m.fingerprint, "r");
    assert_int_equal(db_machine_upsert(db, &m), 0);
    RunRow r = {.machine_id = m.id, .batch = 4, .steps = 3, .warmup_steps = 1, .traced = true};
    snprintf(r.model, sizeof r.model, "p1b1");
    snprintf(r.status, sizeof r.status, "complete");
    double step_s[4] = {1, 2, 3, 4}, loss[4] = {4, 3, 2, 1};
    OpTimeRow ops[2] = {{.op_index = 0, .layer = 0, .time_s = 0.1}, {.op_index = 1, .layer = -1, .time_s = 0.2}};
    MetricRow metrics[2] = {{"test_accuracy", 0.91}, {"total_execution_time_s", 12.5}};
    assert_int_equal(db_run_insert(db, &r, step_s, loss, 4, ops, 2, metrics, 2), 0);
    assert_true(r.id > 0);
    CalibrationRow c = {.machine_id = m.id};
    assert_int_equal(db_calibration_begin(db, &c), 0);
    PredictionRow p = {.calibration_id = c.id, .batch = 4, .iter_s = 1.5};
    snprintf(p.model, sizeof p.model, "p1b1");
    snprintf(ops[0].source, sizeof ops[0].source, "exact");
    assert_int_equal(db_prediction_insert(db, &p, ops, 2), 0);
    ValidationRow v = {.prediction_id = p.id, .run_id = r.id, .predicted_s = 1.5, .measured_s = 1.4,
                       .error_placed_pct = NAN}; /* no run priced at its placement: stored NULL */
    assert_int_equal(db_validation_insert(db, &v), 0);
    v.apart_rounds = 2, v.measured_apart_s = 2.8, v.predicted_apart_s = 1.8, v.error_placed_pct = -12.5;
    assert_int_equal(db_validation_insert(db, &v), 0);
    db_close(db);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM run_step WHERE warmup=1"), 1);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM run_op"), 2);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM prediction_op WHERE source='exact'"), 1);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM validation"), 2);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM validation WHERE error_placed_pct IS NULL"), 1);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM validation WHERE error_placed_pct = -12.5"
                                      " AND apart_rounds = 2 AND predicted_apart_s = 1.8 AND measured_apart_s = 2.8"), 1);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM run_metric WHERE name='test_accuracy' AND value > 0.9"), 1);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM run WHERE mode='train'"), 1);
}

static void test_default_path_env(void **state)
{
    char out[512];
    setenv("DLPERF_DB", "/x/y.db", 1);
    db_default_path(out, sizeof out);
    assert_string_equal(out, "/x/y.db");
    unsetenv("DLPERF_DB");
    setenv("XDG_DATA_HOME", "/data", 1);
    db_default_path(out, sizeof out);
    assert_string_equal(out, "/data/dlperf/dlperf.db");
    unsetenv("XDG_DATA_HOME");
    setenv("HOME", "/home/u", 1);
    db_default_path(out, sizeof out);
    assert_string_equal(out, "/home/u/.local/share/dlperf/dlperf.db");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_in_new_directory_and_migrate),
        cmocka_unit_test(test_refuses_non_sqlite_file_untouched),
        cmocka_unit_test(test_refuses_foreign_sqlite_database),
        cmocka_unit_test(test_refuses_directory),
        cmocka_unit_test(test_refuses_newer_schema),
        cmocka_unit_test(test_calibration_round_trip),
        cmocka_unit_test(test_reap_dead_running_calibration),
        cmocka_unit_test(test_run_and_prediction_records),
        cmocka_unit_test(test_default_path_env),
    };
    return cmocka_run_group_tests_name("db", tests, setup, teardown);
}
