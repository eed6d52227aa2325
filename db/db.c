/* db/db.c — opening, migrating and refusing databases, and the typed reads and writes.
 *
 * Every write of one logical record (a run with its steps and trace, a prediction with
 * its ops) is one transaction, so a crash never leaves half a record behind.
 */
#include "db/db.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/schema.h"

struct Db {
    sqlite3 *h;
    char path[4096];
    char err[512];
};

static int fail(Db *db, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(db->err, sizeof db->err, "%s: ", db->path);
    if (n < 0 || (size_t)n >= sizeof db->err)
        n = 0;
    vsnprintf(db->err + n, sizeof db->err - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static int fail_sqlite(Db *db, const char *what)
{
    /* the write that failed is rolled back: what was stored before stays */
    const int code = sqlite3_extended_errcode(db->h);
    if ((code & 0xff) == SQLITE_FULL || code == SQLITE_IOERR_WRITE || code == SQLITE_IOERR_FSYNC)
        return fail(db, "%s: %s: the disk is full or the file may not grow; free space or give --db another file",
                    what, sqlite3_errmsg(db->h));
    if ((code & 0xff) == SQLITE_READONLY)
        return fail(db, "%s: %s: the file or its directory is read-only; give --db a writable file", what,
                    sqlite3_errmsg(db->h));
    return fail(db, "%s: %s", what, sqlite3_errmsg(db->h));
}

const char *db_errmsg(const Db *db) { return db->err; }
const char *db_path(const Db *db) { return db->path; }

void db_now_iso(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void db_default_path(char *out, size_t n)
{
    const char *env = getenv("DLPERF_DB");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return;
    }
    const char *xdg = getenv("XDG_DATA_HOME");
    if (xdg && *xdg) {
        snprintf(out, n, "%s/dlperf/dlperf.db", xdg);
        return;
    }
    const char *home = getenv("HOME");
    snprintf(out, n, "%s/.local/share/dlperf/dlperf.db", home && *home ? home : ".");
}

/* mkdir -p of the directory part of path. */
static int make_parent_dirs(const char *path, char *err, size_t errlen)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "%s: cannot create directory %s: %s", path, dir, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create directory %s: %s", path, dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* Refuses, before SQLite ever touches it, a file that exists but is not a SQLite
 * database: sqlite3_open would happily "open" it and a later write could clobber it. */
static int check_existing_file(const char *path, bool *exists, char *err, size_t errlen)
{
    struct stat st;
    *exists = false;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "%s: cannot access: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file; --db needs a dlperf SQLite database file", path);
        return -1;
    }
    *exists = true;
    if (st.st_size == 0)
        return 0; /* an empty file is a new database to SQLite */
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    char head[16] = {0};
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    if (got != sizeof head || memcmp(head, "SQLite format 3", 16) != 0) {
        snprintf(err, errlen,
                 "%s: not a SQLite database (left untouched); --db needs a dlperf database file "
                 "or a new path", path);
        return -1;
    }
    return 0;
}

static int pragma_int(Db *db, const char *sql, int *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, sql);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        return fail_sqlite(db, sql);
    }
    *out = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return 0;
}

static int exec(Db *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fail(db, "%s", msg ? msg : sqlite3_errmsg(db->h));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int db_begin(Db *db) { return exec(db, "BEGIN IMMEDIATE"); }
int db_commit(Db *db) { return exec(db, "COMMIT"); }
int db_rollback(Db *db)
{
    if (sqlite3_get_autocommit(db->h))
        return 0;
    char keep[sizeof db->err];
    memcpy(keep, db->err, sizeof keep); /* keep the error that caused the rollback */
    int rc = exec(db, "ROLLBACK");
    memcpy(db->err, keep, sizeof keep);
    return rc;
}

/* Brings the schema to the latest version; refuses foreign and newer databases. */
static int migrate(Db *db)
{
    int app = 0, ver = 0, ntables = 0;
    if (db_begin(db) != 0)
        return -1;
    if (pragma_int(db, "PRAGMA application_id", &app) || pragma_int(db, "PRAGMA user_version", &ver) ||
        pragma_int(db, "SELECT count(*) FROM sqlite_master", &ntables))
        goto fail;
    if (app != DB_APPLICATION_ID && (app != 0 || ntables > 0)) {
        fail(db, "a SQLite database of another application (application_id %d, %d schema objects); "
                 "refusing to modify it; give --db a dlperf database or a new path", app, ntables);
        goto fail;
    }
    if (ver > db_schema_latest()) {
        fail(db, "written by a newer dlperf (schema version %d, this dlperf knows up to %d)", ver,
             db_schema_latest());
        goto fail;
    }
    for (int v = ver; v < db_schema_latest(); v++) {
        if (exec(db, db_schema_migration(v)) != 0) {
            char keep[sizeof db->err];
            memcpy(keep, db->err, sizeof keep);
            fail(db, "migration to schema version %d failed: %s", v + 1, keep);
            goto fail;
        }
    }
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d",
             DB_APPLICATION_ID, db_schema_latest());
    if (exec(db, sql) != 0 || db_commit(db) != 0)
        goto fail;
    return 0;
fail:
    db_rollback(db);
    return -1;
}

int db_open(const char *path, Db **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!path || !*path) {
        snprintf(err, errlen, "database path is empty; give --db FILE or set DLPERF_DB");
        return -1;
    }
    bool exists;
    if (check_existing_file(path, &exists, err, errlen) != 0)
        return -1;
    if (!exists && make_parent_dirs(path, err, errlen) != 0)
        return -1;
    Db *db = calloc(1, sizeof *db);
    if (!db) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    snprintf(db->path, sizeof db->path, "%s", path);
    if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: cannot open: %s", path, db->h ? sqlite3_errmsg(db->h) : "out of memory");
        db_close(db);
        return -1;
    }
    sqlite3_busy_timeout(db->h, 15000);
    /* WAL lets a calibration write while another dlperf reads; NORMAL sync is durable
     * across application crashes, which is what a measurement store needs. */
    int app = 0;
    if (pragma_int(db, "PRAGMA application_id", &app) != 0 ||
        exec(db, "PRAGMA foreign_keys = ON") != 0 || migrate(db) != 0 ||
        exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL") != 0) {
        const int code = sqlite3_errcode(db->h) & 0xff;
        if (code == SQLITE_READONLY || code == SQLITE_CANTOPEN)
            snprintf(err, errlen, "%s: cannot write the database (the file or its directory is read-only: SQLite "
                     "writes the file and its -wal and -shm files beside it); give --db a writable file", path);
        else if (code == SQLITE_FULL)
            snprintf(err, errlen, "%s: the disk is full (nothing was written); free space or give --db another "
                     "file", path);
        else
            snprintf(err, errlen, "%s", db->err);
        db_close(db);
        return -1;
    }
    *out = db;
    return 0;
}

void db_close(Db *db)
{
    if (!db)
        return;
    sqlite3_close_v2(db->h);
    free(db);
}

int db_schema_version(Db *db)
{
    int v = -1;
    pragma_int(db, "PRAGMA user_version", &v);
    return v;
}

/* ---- statement helpers: bind by position from a format string ---- */

/* fmt letters: i = int, I = int64_t, d = double, s = text (NULL allowed). */
static int prepare_bind(Db *db, sqlite3_stmt **st, const char *sql, const char *fmt, va_list ap)
{
    if (sqlite3_prepare_v2(db->h, sql, -1, st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    for (int i = 0; fmt[i]; i++) {
        int rc;
        switch (fmt[i]) {
        case 'i': rc = sqlite3_bind_int(*st, i + 1, va_arg(ap, int)); break;
        case 'I': rc = sqlite3_bind_int64(*st, i + 1, va_arg(ap, int64_t)); break;
        case 'd': rc = sqlite3_bind_double(*st, i + 1, va_arg(ap, double)); break;
        case 'N': { /* a double that may be missing: NaN is stored as NULL */
            const double v = va_arg(ap, double);
            rc = isnan(v) ? sqlite3_bind_null(*st, i + 1) : sqlite3_bind_double(*st, i + 1, v);
            break;
        }
        case 's': rc = sqlite3_bind_text(*st, i + 1, va_arg(ap, const char *), -1, SQLITE_TRANSIENT); break;
        default: rc = SQLITE_MISUSE; break;
        }
        if (rc != SQLITE_OK) {
            sqlite3_finalize(*st);
            *st = NULL;
            return fail_sqlite(db, "bind");
        }
    }
    return 0;
}

/* Executes one write statement; sets *rowid (if non-NULL) to the inserted row. */
static int run_stmt(Db *db, int64_t *rowid, const char *sql, const char *fmt, ...)
{
    sqlite3_stmt *st;
    va_list ap;
    va_start(ap, fmt);
    int rc = prepare_bind(db, &st, sql, fmt, ap);
    va_end(ap);
    if (rc != 0)
        return -1;
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return fail_sqlite(db, "write");
    if (rowid)
        *rowid = sqlite3_last_insert_rowid(db->h);
    return 0;
}

static void col_text(sqlite3_stmt *st, int col, char *out, size_t n)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    snprintf(out, n, "%s", t ? (const char *)t : "");
}

/* ---- machine ---- */

int db_machine_upsert(Db *db, MachineRow *m)
{
    char now[32];
    db_now_iso(now);
    /* The hostname and OS may change (containers); the hardware fingerprint does not. */
    if (run_stmt(db, NULL,
                 "INSERT INTO machine (fingerprint, cpu_model, cpu_flags, cores, mem_bytes, hostname,"
                 " os, first_seen) VALUES (?,?,?,?,?,?,?,?)"
                 " ON CONFLICT(fingerprint) DO UPDATE SET hostname = excluded.hostname, os = excluded.os",
                 "sssiIsss", m->fingerprint, m->cpu_model, m->cpu_flags, m->cores, m->mem_bytes,
                 m->hostname, m->os, now) != 0)
        return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, "SELECT id FROM machine WHERE fingerprint = ?", -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    sqlite3_bind_text(st, 1, m->fingerprint, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        m->id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : fail_sqlite(db, "machine lookup");
}

/* ---- calibration ---- */

int db_calibration_begin(Db *db, CalibrationRow *c)
{
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    db_now_iso(c->started_at);
    snprintf(c->status, sizeof c->status, "running");
    c->finished_at[0] = '\0';
    c->pid = (int64_t)getpid();
    const SoftwareInfo *s = &c->sw;
    return run_stmt(db, &c->id,
                    "INSERT INTO calibration (machine_id, mode, status, started_at, pid, hostname,"
                    " threads, ranks, blas_core, blas_config, blas_choice, compiler, git_commit,"
                    " mpi_library, rounds, llc_bytes, threading, runtime_rss_bytes, device, precision, source)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    "IsssIsiisssss" "siIsd" "sss", c->machine_id, c->mode, c->status, c->started_at, c->pid, host,
                    s->threads, s->ranks, s->blas_core, s->blas_config, s->blas_choice, s->compiler,
                    s->git_commit, s->mpi_library, c->rounds > 1 ? c->rounds : 1, c->llc_bytes, s->threading,
                    c->runtime_rss_bytes, c->device, c->precision[0] ? c->precision : "fp32", c->source);
}

int db_calibration_finish(Db *db, int64_t calibration_id, const char *status)
{
    char now[32];
    db_now_iso(now);
    return run_stmt(db, NULL, "UPDATE calibration SET status = ?, finished_at = ? WHERE id = ?", "ssI",
                    status, now, calibration_id);
}

int db_calibration_set_rtt(Db *db, int64_t calibration_id, double rtt_fastest_ns)
{
    return run_stmt(db, NULL, "UPDATE calibration SET rtt_fastest_ns = ? WHERE id = ?", "dI", rtt_fastest_ns,
                    calibration_id);
}

int db_calibration_sample_placement(Db *db, int64_t calibration_id, double far_ratio, int *probed, int *apart)
{
    static const char sql[] =
        "SELECT count(*), coalesce(sum(c.rtt_fastest_ns > 0 AND s.rtt_ns >= ? * c.rtt_fastest_ns), 0) FROM sample s"
        " JOIN measurement m ON m.id = s.measurement_id JOIN calibration c ON c.id = m.calibration_id"
        " WHERE m.calibration_id = ? AND s.rtt_ns > 0";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, sql);
    sqlite3_bind_double(st, 1, far_ratio);
    sqlite3_bind_int64(st, 2, calibration_id);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return fail_sqlite(db, sql);
    }
    *probed = sqlite3_column_int(st, 0);
    *apart = sqlite3_column_int(st, 1);
    sqlite3_finalize(st);
    return 0;
}

int db_calibration_reap(Db *db, int64_t machine_id)
{
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h,
                           "SELECT id, pid, hostname FROM calibration WHERE machine_id = ? AND status = 'running'",
                           -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    sqlite3_bind_int64(st, 1, machine_id);
    int64_t dead[64];
    int ndead = 0;
    while (sqlite3_step(st) == SQLITE_ROW && ndead < 64) {
        int64_t id = sqlite3_column_int64(st, 0);
        pid_t pid = (pid_t)sqlite3_column_int64(st, 1);
        const char *h = (const char *)sqlite3_column_text(st, 2);
        /* Only a process on this host can be checked; one elsewhere may still be running. */
        bool same_host = h && strcmp(h, host) == 0;
        if (same_host && kill(pid, 0) != 0 && errno == ESRCH)
            dead[ndead++] = id;
    }
    sqlite3_finalize(st);
    for (int i = 0; i < ndead; i++)
        if (db_calibration_finish(db, dead[i], "interrupted") != 0)
            return -1;
    return 0;
}

static void read_sw(sqlite3_stmt *st, int col, SoftwareInfo *s)
{
    s->threads = sqlite3_column_int(st, col);
    s->ranks = sqlite3_column_int(st, col + 1);
    col_text(st, col + 2, s->blas_core, sizeof s->blas_core);
    col_text(st, col + 3, s->blas_config, sizeof s->blas_config);
    col_text(st, col + 4, s->blas_choice, sizeof s->blas_choice);
    col_text(st, col + 5, s->compiler, sizeof s->compiler);
    col_text(st, col + 6, s->git_commit, sizeof s->git_commit);
    col_text(st, col + 7, s->mpi_library, sizeof s->mpi_library);
    col_text(st, col + 8, s->threading, sizeof s->threading);
}

/* The first row of a calibration query binding (machine_id, n). */
static int calibration_lookup(Db *db, const char *where_order, int64_t machine_id, int n, CalibrationRow *out)
{
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT id, machine_id, mode, status, started_at, coalesce(finished_at,''), pid,"
             " threads, ranks, blas_core, blas_config, blas_choice, compiler, git_commit,"
             " mpi_library, threading, rounds, llc_bytes, runtime_rss_bytes, rtt_fastest_ns, device, precision,"
             " source FROM calibration %s",
             where_order);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    sqlite3_bind_int64(st, 1, machine_id);
    sqlite3_bind_int(st, 2, n);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        memset(out, 0, sizeof *out);
        out->id = sqlite3_column_int64(st, 0);
        out->machine_id = sqlite3_column_int64(st, 1);
        col_text(st, 2, out->mode, sizeof out->mode);
        col_text(st, 3, out->status, sizeof out->status);
        col_text(st, 4, out->started_at, sizeof out->started_at);
        col_text(st, 5, out->finished_at, sizeof out->finished_at);
        out->pid = sqlite3_column_int64(st, 6);
        read_sw(st, 7, &out->sw);
        out->rounds = sqlite3_column_int(st, 16);
        out->llc_bytes = sqlite3_column_int64(st, 17);
        out->runtime_rss_bytes = sqlite3_column_double(st, 18);
        out->rtt_fastest_ns = sqlite3_column_double(st, 19);
        col_text(st, 20, out->device, sizeof out->device);
        col_text(st, 21, out->precision, sizeof out->precision);
        col_text(st, 22, out->source, sizeof out->source);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return 0;
    if (rc == SQLITE_DONE)
        return DB_NOT_FOUND;
    return fail_sqlite(db, "calibration lookup");
}

int db_calibration_latest(Db *db, int64_t machine_id, int threads, CalibrationRow *out)
{
    return db_calibration_latest_ranks(db, machine_id, threads, 1, out);
}

int db_calibration_latest_ranks(Db *db, int64_t machine_id, int threads, int ranks, CalibrationRow *out)
{
    /* communication calibrations (mode comm, comm-quick) price no op */
    char where[256];
    snprintf(where, sizeof where,
             "WHERE machine_id = ? AND threads = ? AND ranks = %d AND status = 'complete'"
             " AND mode NOT LIKE 'comm%%' AND device = '' ORDER BY id DESC LIMIT 1",
             ranks);
    return calibration_lookup(db, where, machine_id, threads, out);
}

int db_calibration_get(Db *db, int64_t calibration_id, CalibrationRow *out)
{
    /* the lookup binds two parameters; this query uses the first (?2 = ?2: always true) */
    return calibration_lookup(db, "WHERE id = ?1 AND ?2 = ?2", calibration_id, 0, out);
}

int db_comm_calibration_latest(Db *db, int64_t machine_id, int ranks, CalibrationRow *out)
{
    /* ranks 0: any rank count, the largest (the most collective behaviour to fit) */
    return calibration_lookup(db,
                              "WHERE machine_id = ?1 AND (?2 = 0 OR ranks = ?2) AND status = 'complete'"
                              " AND mode LIKE 'comm%' ORDER BY ranks DESC, id DESC LIMIT 1",
                              machine_id, ranks, out);
}

/* ---- calibrations of other devices ---- */

int db_device_machine(Db *db, const char *device, const char *title, int64_t *machine_id)
{
    MachineRow m = {0};
    if (strlen(device) + strlen("device:") >= sizeof m.fingerprint)
        return fail(db, "device name '%s' is longer than %zu characters", device,
                    sizeof m.fingerprint - 1 - strlen("device:"));
    snprintf(m.fingerprint, sizeof m.fingerprint, "device:%s", device);
    snprintf(m.cpu_model, sizeof m.cpu_model, "%s", title && title[0] ? title : device);
    if (db_machine_upsert(db, &m) != 0)
        return -1;
    *machine_id = m.id;
    return 0;
}

int db_device_calibrations(Db *db, const char *device, const char *precision,
                           int (*fn)(const CalibrationRow *c, void *ctx), void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h,
                           "SELECT id FROM calibration WHERE device = ?1 AND status = 'complete'"
                           " AND (?2 IS NULL OR precision = ?2) ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    sqlite3_bind_text(st, 1, device, -1, SQLITE_TRANSIENT);
    if (precision)
        sqlite3_bind_text(st, 2, precision, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 2);
    /* the ids first: fn may query the database (its measurements) while this reads */
    int64_t *ids = NULL;
    int n = 0, cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            int64_t *grown = realloc(ids, (size_t)cap * sizeof *ids);
            if (!grown) {
                free(ids);
                sqlite3_finalize(st);
                return fail(db, "out of memory listing the calibrations of device %s", device);
            }
            ids = grown;
        }
        ids[n++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(ids);
        return fail_sqlite(db, "device calibration lookup");
    }
    int ret = 0;
    for (int i = 0; i < n; i++) {
        CalibrationRow c;
        if (db_calibration_get(db, ids[i], &c) != 0) {
            ret = -1;
            break;
        }
        if (fn(&c, ctx) != 0)
            break;
    }
    free(ids);
    return ret;
}

int db_device_fits_put(Db *db, const char *device, const char *precision, const DeviceFitRow *rows, int n)
{
    const bool own = sqlite3_get_autocommit(db->h) != 0;
    if (own && db_begin(db) != 0)
        return -1;
    char now[32];
    db_now_iso(now);
    if (run_stmt(db, NULL, "DELETE FROM device_fit WHERE device = ? AND precision = ?", "ss", device, precision) != 0)
        goto fail;
    for (int i = 0; i < n; i++) {
        const DeviceFitRow *r = &rows[i];
        if (run_stmt(db, NULL,
                     "INSERT INTO device_fit (device, precision, grp, form, params, points, fit_err, band,"
                     " calibrations, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                     "sssssiddss", device, precision, r->group, r->form, r->params, r->points, r->fit_err, r->band,
                     r->calibrations, now) != 0)
            goto fail;
    }
    if (own && db_commit(db) != 0)
        goto fail;
    return 0;
fail:
    if (own)
        db_rollback(db);
    return -1;
}

int db_device_fits_foreach(Db *db, const char *device, const char *precision,
                           int (*fn)(const DeviceFitRow *r, void *ctx), void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h,
                           "SELECT grp, form, params, points, fit_err, band, calibrations FROM device_fit"
                           " WHERE device = ? AND precision = ? ORDER BY grp",
                           -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    sqlite3_bind_text(st, 1, device, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, precision, -1, SQLITE_TRANSIENT);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        DeviceFitRow r = {0};
        snprintf(r.device, sizeof r.device, "%s", device);
        snprintf(r.precision, sizeof r.precision, "%s", precision);
        col_text(st, 0, r.group, sizeof r.group);
        col_text(st, 1, r.form, sizeof r.form);
        col_text(st, 2, r.params, sizeof r.params);
        r.points = sqlite3_column_int(st, 3);
        r.fit_err = sqlite3_column_double(st, 4);
        r.band = sqlite3_column_double(st, 5);
        col_text(st, 6, r.calibrations, sizeof r.calibrations);
        if (fn(&r, ctx) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail_sqlite(db, "device fit read");
}

int db_device_evidence_foreach(Db *db,
                               int (*fn)(const char *device, const char *precision, int calibrations,
                                         int measurements, void *ctx),
                               void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h,
                           "SELECT c.device, c.precision, count(DISTINCT c.id), count(m.id)"
                           " FROM calibration c LEFT JOIN measurement m ON m.calibration_id = c.id"
                           " WHERE c.device != '' AND c.status = 'complete'"
                           " GROUP BY c.device, c.precision ORDER BY c.device, c.precision",
                           -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char device[48], precision[8];
        col_text(st, 0, device, sizeof device);
        col_text(st, 1, precision, sizeof precision);
        if (fn(device, precision, sqlite3_column_int(st, 2), sqlite3_column_int(st, 3), ctx) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail_sqlite(db, "device evidence read");
}

int db_measurement_insert(Db *db, MeasurementRow *m)
{
    const bool own = sqlite3_get_autocommit(db->h) != 0; /* else inside the caller's transaction */
    if (own && db_begin(db) != 0)
        return -1;
    if (run_stmt(db, &m->id,
                 "INSERT INTO measurement (calibration_id, family, key, kind, phase, threads, warmups,"
                 " reps, inner, median_s, min_s, max_s, mean_s, stddev_s, ci95_lo_s, ci95_hi_s, flops,"
                 " bytes, validated, max_err, warm_s, far_passes, shared_passes, pass_placement, apart_s,"
                 " framework, source, scope)"
                 " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                 "Issssiiiiddddddddd" "iddii" "sd" "sss", m->calibration_id, m->family, m->key, m->kind, m->phase,
                 m->threads, m->warmups, m->reps, m->inner, m->median_s, m->min_s, m->max_s, m->mean_s,
                 m->stddev_s, m->ci95_lo_s, m->ci95_hi_s, m->flops, m->bytes, (int)m->validated,
                 m->max_err, m->warm_s, m->far_passes, m->shared_passes, m->pass_placement, m->apart_s,
                 m->framework, m->source, m->scope) != 0)
        goto fail;
    for (int i = 0; m->samples && i < m->nsamples; i++)
        if (run_stmt(db, NULL, "INSERT INTO sample (measurement_id, rep, time_s, round, rtt_ns) VALUES (?,?,?,?,?)",
                     "Iidid", m->id, i, m->samples[i], m->sample_rounds ? m->sample_rounds[i] : 0,
                     m->sample_rtt_ns ? m->sample_rtt_ns[i] : 0.0) != 0)
            goto fail;
    if (own && db_commit(db) != 0)
        goto fail;
    return 0;
fail:
    if (own)
        db_rollback(db);
    return -1;
}

int db_measurement_foreach(Db *db, int64_t calibration_id,
                           int (*fn)(const MeasurementRow *m, void *ctx), void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h,
                           "SELECT id, family, key, kind, phase, threads, warmups, reps, inner, median_s,"
                           " min_s, max_s, mean_s, stddev_s, ci95_lo_s, ci95_hi_s, flops, bytes,"
                           " validated, max_err, coalesce(warm_s, 0), far_passes, shared_passes,"
                           " pass_placement, apart_s, framework, source, scope"
                           " FROM measurement"
                           " WHERE calibration_id = ? ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    sqlite3_bind_int64(st, 1, calibration_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        MeasurementRow m = {0};
        m.id = sqlite3_column_int64(st, 0);
        m.calibration_id = calibration_id;
        col_text(st, 1, m.family, sizeof m.family);
        col_text(st, 2, m.key, sizeof m.key);
        col_text(st, 3, m.kind, sizeof m.kind);
        col_text(st, 4, m.phase, sizeof m.phase);
        m.threads = sqlite3_column_int(st, 5);
        m.warmups = sqlite3_column_int(st, 6);
        m.reps = sqlite3_column_int(st, 7);
        m.inner = sqlite3_column_int(st, 8);
        double *d[] = {&m.median_s, &m.min_s, &m.max_s, &m.mean_s, &m.stddev_s,
                       &m.ci95_lo_s, &m.ci95_hi_s, &m.flops, &m.bytes};
        for (int i = 0; i < 9; i++)
            *d[i] = sqlite3_column_double(st, 9 + i);
        m.validated = sqlite3_column_int(st, 18) != 0;
        m.max_err = sqlite3_column_double(st, 19);
        m.warm_s = sqlite3_column_double(st, 20);
        m.far_passes = sqlite3_column_int(st, 21);
        m.shared_passes = sqlite3_column_int(st, 22);
        col_text(st, 23, m.pass_placement, sizeof m.pass_placement);
        m.apart_s = sqlite3_column_double(st, 24);
        col_text(st, 25, m.framework, sizeof m.framework);
        col_text(st, 26, m.source, sizeof m.source);
        col_text(st, 27, m.scope, sizeof m.scope);
        if (fn(&m, ctx) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail_sqlite(db, "measurement read");
}

int db_sample_foreach(Db *db, int64_t calibration_id,
                      int (*fn)(int64_t measurement_id, int round, double time_s, void *ctx), void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h,
                           "SELECT s.measurement_id, s.round, s.time_s FROM sample s"
                           " JOIN measurement m ON m.id = s.measurement_id"
                           " WHERE m.calibration_id = ? ORDER BY s.measurement_id, s.rep",
                           -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    sqlite3_bind_int64(st, 1, calibration_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (fn(sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1), sqlite3_column_double(st, 2), ctx) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail_sqlite(db, "sample read");
}

int db_comm_memory_insert(Db *db, int64_t calibration_id, double bytes, double scratch_bytes)
{
    return run_stmt(db, NULL, "INSERT INTO comm_memory (calibration_id, bytes, scratch_bytes) VALUES (?,?,?)", "Idd",
                    calibration_id, bytes, scratch_bytes);
}

int db_comm_memory_foreach(Db *db, int64_t calibration_id, int (*fn)(double bytes, double scratch_bytes, void *ctx),
                           void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h,
                           "SELECT bytes, scratch_bytes FROM comm_memory WHERE calibration_id = ? ORDER BY bytes",
                           -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    sqlite3_bind_int64(st, 1, calibration_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (fn(sqlite3_column_double(st, 0), sqlite3_column_double(st, 1), ctx) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail_sqlite(db, "comm_memory read");
}

/* ---- runs, predictions, validations ---- */

static int insert_op_rows(Db *db, const char *table, int64_t owner, const OpTimeRow *ops, int nops)
{
    char sql[256];
    bool pred = strcmp(table, "prediction_op") == 0;
    snprintf(sql, sizeof sql,
             "INSERT INTO %s (%s, op_index, layer, layer_name, key, kind, phase, time_s, flops%s)"
             " VALUES (?,?,?,?,?,?,?,?,?%s)",
             table, pred ? "prediction_id" : "run_id", pred ? ", source, lo_s, hi_s, cached" : "",
             pred ? ",?,?,?,?" : "");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    for (int i = 0; i < nops; i++) {
        const OpTimeRow *o = &ops[i];
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, owner);
        sqlite3_bind_int(st, 2, o->op_index);
        sqlite3_bind_int(st, 3, o->layer);
        sqlite3_bind_text(st, 4, o->layer_name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, o->key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 6, o->kind, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 7, o->phase, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 8, o->time_s);
        sqlite3_bind_double(st, 9, o->flops);
        if (pred) {
            sqlite3_bind_text(st, 10, o->source, -1, SQLITE_STATIC);
            sqlite3_bind_double(st, 11, o->lo_s);
            sqlite3_bind_double(st, 12, o->hi_s);
            sqlite3_bind_double(st, 13, o->cached);
        }
        if (sqlite3_step(st) != SQLITE_DONE) {
            sqlite3_finalize(st);
            return fail_sqlite(db, table);
        }
    }
    sqlite3_finalize(st);
    return 0;
}

int db_run_insert(Db *db, RunRow *r, const double *step_s, const double *loss, int nsteps,
                  const OpTimeRow *ops, int nops, const MetricRow *metrics, int nmetrics)
{
    const SoftwareInfo *s = &r->sw;
    if (db_begin(db) != 0)
        return -1;
    if (run_stmt(db, &r->id,
                 "INSERT INTO run (machine_id, model, batch, steps, warmup_steps, status, started_at,"
                 " threads, ranks, blas_core, blas_config, blas_choice, compiler, git_commit, mpi_library,"
                 " median_s, min_s, max_s, mean_s, stddev_s, loss_first, loss_last, planned_bytes,"
                 " peak_rss_bytes, traced, mode, epochs, baseline_rss_bytes, scaling, batch_per_rank,"
                 " allreduce_bytes, bucket_bytes, threading, placement, cores_cross, placement_wait_s)"
                 " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                 "Isiiissiissssss" "ddddddddd" "isid" "sidds" "sdd", r->machine_id, r->model, r->batch, r->steps,
                 r->warmup_steps, r->status, r->started_at, s->threads, s->ranks, s->blas_core,
                 s->blas_config, s->blas_choice, s->compiler, s->git_commit, s->mpi_library, r->median_s,
                 r->min_s, r->max_s, r->mean_s, r->stddev_s, r->loss_first, r->loss_last,
                 r->planned_bytes, r->peak_rss_bytes, (int)r->traced, r->mode[0] ? r->mode : "train",
                 r->epochs, r->baseline_rss_bytes, r->scaling[0] ? r->scaling : "none",
                 r->batch_per_rank > 0 ? r->batch_per_rank : r->batch, r->allreduce_bytes, r->bucket_bytes,
                 s->threading, r->placement, r->cores_cross, r->placement_wait_s) != 0)
        goto fail;
    for (int i = 0; r->rank_times && i < s->ranks; i++) {
        const RankTimeRow *k = &r->rank_times[i];
        if (run_stmt(db, NULL,
                     "INSERT INTO run_rank (run_id, rank, hostname, step_s, compute_s, wait_s, allreduce_s, cpus)"
                     " VALUES (?,?,?,?,?,?,?,?)",
                     "Iisdddds", r->id, k->rank, k->hostname, k->step_s, k->compute_s, k->wait_s, k->allreduce_s,
                     k->cpus) != 0)
            goto fail;
    }
    for (int i = 0; i < nsteps; i++)
        if (run_stmt(db, NULL,
                     "INSERT INTO run_step (run_id, step, warmup, time_s, loss, rtt_ns, core_share)"
                     " VALUES (?,?,?,?,?,?,?)",
                     "Iiidddd", r->id, i, (int)(i < r->warmup_steps), step_s[i], loss ? loss[i] : 0.0,
                     r->step_rtt_ns ? r->step_rtt_ns[i] : 0.0, r->step_core_share ? r->step_core_share[i] : 0.0) != 0)
            goto fail;
    if (ops && insert_op_rows(db, "run_op", r->id, ops, nops) != 0)
        goto fail;
    for (int i = 0; i < nmetrics; i++)
        if (run_stmt(db, NULL, "INSERT INTO run_metric (run_id, name, value) VALUES (?,?,?)", "Isd", r->id,
                     metrics[i].name, metrics[i].value) != 0)
            goto fail;
    if (db_commit(db) != 0)
        goto fail;
    return 0;
fail:
    db_rollback(db);
    return -1;
}

int db_prediction_insert(Db *db, PredictionRow *p, const OpTimeRow *ops, int nops)
{
    db_now_iso(p->created_at);
    if (db_begin(db) != 0)
        return -1;
    if (run_stmt(db, &p->id,
                 "INSERT INTO prediction (calibration_id, model, batch, threads, created_at, iter_s,"
                 " iter_lo_s, iter_hi_s, fwd_s, bwd_s, update_s, mem_params, mem_grads, mem_opt, mem_act,"
                 " mem_ws, mem_input, mem_total, n_exact, n_scaled, n_fitted, holdout, ranks, allreduce_s,"
                 " allreduce_source, mem_comm)"
                 " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                 "Isiis" "dddddd" "ddddddd" "iiii" "idsd", p->calibration_id, p->model, p->batch, p->threads,
                 p->created_at, p->iter_s, p->iter_lo_s, p->iter_hi_s, p->fwd_s, p->bwd_s, p->update_s,
                 p->mem_params, p->mem_grads, p->mem_opt, p->mem_act, p->mem_ws, p->mem_input,
                 p->mem_total, p->n_exact, p->n_scaled, p->n_fitted, (int)p->holdout, p->ranks > 1 ? p->ranks : 1,
                 p->allreduce_s, p->allreduce_source, p->mem_comm) != 0)
        goto fail;
    if (ops && insert_op_rows(db, "prediction_op", p->id, ops, nops) != 0)
        goto fail;
    if (db_commit(db) != 0)
        goto fail;
    return 0;
fail:
    db_rollback(db);
    return -1;
}

int db_validation_insert(Db *db, ValidationRow *v)
{
    db_now_iso(v->created_at);
    return run_stmt(db, &v->id,
                    "INSERT INTO validation (prediction_id, run_id, model, batch, threads, created_at,"
                    " predicted_s, measured_s, measured_min_s, measured_max_s, error_pct, holdout,"
                    " drift_compute, drift_memory, adjusted_error_pct, ranks, predicted_allreduce_s,"
                    " measured_allreduce_s, drift_cross, drift_allreduce, rounds, far_rounds, near_rounds, measured_near_s,"
                    " one_core_rounds, apart_rounds, measured_apart_s, predicted_apart_s, error_placed_pct,"
                    " predicted_allreduce_placed_s, steps_near, steps_apart, steps_one_core, measured_steps_near_s,"
                    " measured_steps_apart_s, error_steps_placed_pct)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    "IIsiisdddddiddd" "idddd" "iiidi" "iddNd" "iiiddN", v->prediction_id, v->run_id, v->model,
                    v->batch, v->threads, v->created_at, v->predicted_s, v->measured_s, v->measured_min_s, v->measured_max_s,
                    v->error_pct, (int)v->holdout, v->drift_compute, v->drift_memory, v->adjusted_error_pct,
                    v->ranks > 1 ? v->ranks : 1, v->predicted_allreduce_s, v->measured_allreduce_s,
                    v->drift_cross, v->drift_allreduce, v->rounds > 0 ? v->rounds : 1, v->far_rounds,
                    v->near_rounds, v->measured_near_s, v->one_core_rounds, v->apart_rounds, v->measured_apart_s,
                    v->predicted_apart_s, v->error_placed_pct, v->predicted_allreduce_placed_s, v->steps_near,
                    v->steps_apart, v->steps_one_core, v->measured_steps_near_s, v->measured_steps_apart_s,
                    v->error_steps_placed_pct);
}

/* ---- spec sheets ---- */

int db_spec_put(Db *db, const char *name, const char *kind, const char *json, const char *source, bool replace)
{
    char now[32];
    db_now_iso(now);
    if (!replace) {
        char k[16];
        char *old = NULL;
        int rc = db_spec_get(db, name, k, &old);
        free(old);
        if (rc == 0)
            return DB_EXISTS;
        if (rc < 0)
            return -1;
    }
    return run_stmt(db, NULL,
                    "INSERT OR REPLACE INTO system_spec (name, kind, json, source, added_at) VALUES (?,?,?,?,?)",
                    "sssss", name, kind, json, source, now);
}

int db_spec_get(Db *db, const char *name, char kind[16], char **json)
{
    sqlite3_stmt *st;
    *json = NULL;
    if (sqlite3_prepare_v2(db->h, "SELECT kind, json FROM system_spec WHERE name = ?", -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        col_text(st, 0, kind, 16);
        const char *j = (const char *)sqlite3_column_text(st, 1);
        *json = strdup(j ? j : "");
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return *json ? 0 : -1;
    if (rc == SQLITE_DONE)
        return DB_NOT_FOUND;
    return fail_sqlite(db, "spec lookup");
}

int db_spec_foreach(Db *db, int (*fn)(const char *name, const char *kind, const char *source, void *ctx), void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, "SELECT name, kind, source FROM system_spec ORDER BY kind, name", -1, &st, NULL) !=
        SQLITE_OK)
        return fail_sqlite(db, "prepare");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (fn((const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
               (const char *)sqlite3_column_text(st, 2), ctx) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail_sqlite(db, "spec list");
}

/* ---- suite runs ---- */

int db_suite_begin(Db *db, SuiteRunRow *r)
{
    db_now_iso(r->started_at);
    snprintf(r->status, sizeof r->status, "running");
    return run_stmt(db, &r->id,
                    "INSERT INTO suite_run (machine_id, started_at, status, pid, mode, run, precision, threads,"
                    " git_commit, blas_core) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    "IssIsssiss", r->machine_id, r->started_at, r->status, r->pid, r->mode, r->run, r->precision,
                    r->threads, r->git_commit, r->blas_core);
}

int db_suite_result_insert(Db *db, int64_t suite_id, const SuiteResultRow *b)
{
    char times[SUITE_TIMES_MAX * 24 + 4];
    size_t l = (size_t)snprintf(times, sizeof times, "[");
    for (int i = 0; i < b->instances && i < SUITE_TIMES_MAX; i++)
        l += (size_t)snprintf(times + l, sizeof times - l, "%s%.9g", i ? "," : "", b->instance_s[i]);
    snprintf(times + l, sizeof times - l, "]");
    return run_stmt(db, NULL,
                    "INSERT INTO suite_result (suite_id, benchmark, instances, threads_per_instance, batch, time_s,"
                    " fwd_s, instance_times, accuracy, accuracy_name, projected, reference_s, fom, note)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    "IsiiidNsNsiNds", suite_id, b->benchmark, b->instances, b->threads_per_instance, b->batch,
                    b->time_s, b->fwd_s, times, b->accuracy, b->accuracy_name, b->projected ? 1 : 0, b->reference_s,
                    b->fom, b->note);
}

int db_suite_finish(Db *db, int64_t suite_id, const char *status, double overall_fom, double wall_s)
{
    char now[32];
    db_now_iso(now);
    return run_stmt(db, NULL, "UPDATE suite_run SET status = ?, finished_at = ?, overall_fom = ?, wall_s = ? WHERE id = ?",
                    "ssNdI", status, now, overall_fom, wall_s, suite_id);
}

static double col_num(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

/* The suite_result rows st selects (benchmark .. note, then suite_id), finalizing st. */
static int suite_results_read(Db *db, sqlite3_stmt *st, SuiteResultRow **rows, int *n)
{
    int rc, cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            SuiteResultRow *v = realloc(*rows, (size_t)cap * sizeof *v);
            if (!v) {
                sqlite3_finalize(st);
                free(*rows);
                *rows = NULL;
                return fail_sqlite(db, "out of memory");
            }
            *rows = v;
        }
        SuiteResultRow *b = &(*rows)[(*n)++];
        memset(b, 0, sizeof *b);
        b->suite_id = sqlite3_column_int64(st, 13);
        col_text(st, 0, b->benchmark, sizeof b->benchmark);
        b->instances = sqlite3_column_int(st, 1);
        b->threads_per_instance = sqlite3_column_int(st, 2);
        b->batch = sqlite3_column_int(st, 3);
        b->time_s = sqlite3_column_double(st, 4);
        b->fwd_s = col_num(st, 5);
        const unsigned char *t = sqlite3_column_text(st, 6);
        for (int i = 0; t && *t && i < SUITE_TIMES_MAX;) {
            while (*t == '[' || *t == ',' || *t == ' ')
                t++;
            if (*t == ']' || !*t)
                break;
            char *end;
            b->instance_s[i++] = strtod((const char *)t, &end);
            if (end == (const char *)t)
                break;
            t = (const unsigned char *)end;
        }
        b->accuracy = col_num(st, 7);
        col_text(st, 8, b->accuracy_name, sizeof b->accuracy_name);
        b->projected = sqlite3_column_int(st, 9) != 0;
        b->reference_s = col_num(st, 10);
        b->fom = sqlite3_column_double(st, 11);
        col_text(st, 12, b->note, sizeof b->note);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail_sqlite(db, "suite result read");
}

int db_suite_get(Db *db, int64_t id, int64_t machine_id, SuiteRunRow *r, SuiteResultRow **rows, int *n)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *st;
    const char *sql = id > 0 ? "SELECT id, machine_id, started_at, finished_at, status, pid, mode, run, precision,"
                               " threads, git_commit, blas_core, overall_fom, wall_s FROM suite_run WHERE id = ?"
                             : "SELECT id, machine_id, started_at, finished_at, status, pid, mode, run, precision,"
                               " threads, git_commit, blas_core, overall_fom, wall_s FROM suite_run"
                               " WHERE machine_id = ? AND status = 'complete' ORDER BY id DESC LIMIT 1";
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    sqlite3_bind_int64(st, 1, id > 0 ? id : machine_id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        return rc == SQLITE_DONE ? DB_NOT_FOUND : fail_sqlite(db, "suite run read");
    }
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    r->machine_id = sqlite3_column_int64(st, 1);
    col_text(st, 2, r->started_at, sizeof r->started_at);
    col_text(st, 3, r->finished_at, sizeof r->finished_at);
    col_text(st, 4, r->status, sizeof r->status);
    r->pid = sqlite3_column_int64(st, 5);
    col_text(st, 6, r->mode, sizeof r->mode);
    col_text(st, 7, r->run, sizeof r->run);
    col_text(st, 8, r->precision, sizeof r->precision);
    r->threads = sqlite3_column_int(st, 9);
    col_text(st, 10, r->git_commit, sizeof r->git_commit);
    col_text(st, 11, r->blas_core, sizeof r->blas_core);
    r->overall_fom = col_num(st, 12);
    r->wall_s = col_num(st, 13);
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(db->h,
                           "SELECT benchmark, instances, threads_per_instance, batch, time_s, fwd_s, instance_times,"
                           " accuracy, accuracy_name, projected, reference_s, fom, note, suite_id FROM suite_result"
                           " WHERE suite_id = ? ORDER BY rowid",
                           -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    sqlite3_bind_int64(st, 1, r->id);
    return suite_results_read(db, st, rows, n);
}

int db_suite_combined(Db *db, int64_t machine_id, int threads, SuiteResultRow **rows, int *n)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *st;
    /* the latest per benchmark: the highest run id among the eligible runs that hold it */
    if (sqlite3_prepare_v2(db->h,
                           "SELECT r.benchmark, r.instances, r.threads_per_instance, r.batch, r.time_s, r.fwd_s,"
                           " r.instance_times, r.accuracy, r.accuracy_name, r.projected, r.reference_s, r.fom, r.note,"
                           " r.suite_id FROM suite_result r JOIN suite_run s ON s.id = r.suite_id"
                           " WHERE s.machine_id = ?1 AND s.threads = ?2 AND s.mode = 'full' AND s.status = 'complete'"
                           " AND r.suite_id = (SELECT max(s2.id) FROM suite_result r2 JOIN suite_run s2"
                           "   ON s2.id = r2.suite_id WHERE r2.benchmark = r.benchmark AND s2.machine_id = ?1"
                           "   AND s2.threads = ?2 AND s2.mode = 'full' AND s2.status = 'complete')"
                           " ORDER BY r.suite_id, r.rowid",
                           -1, &st, NULL) != SQLITE_OK)
        return fail_sqlite(db, "prepare");
    sqlite3_bind_int64(st, 1, machine_id);
    sqlite3_bind_int(st, 2, threads);
    return suite_results_read(db, st, rows, n);
}

int db_rows(Db *db, const char *sql, int (*fn)(int ncols, const double *num, const char *const *text, void *ctx),
            void *ctx, const char *fmt, ...)
{
    sqlite3_stmt *st;
    va_list ap;
    va_start(ap, fmt);
    int rc = prepare_bind(db, &st, sql, fmt, ap);
    va_end(ap);
    if (rc != 0)
        return -1;
    if (!sqlite3_stmt_readonly(st)) {
        sqlite3_finalize(st);
        snprintf(db->err, sizeof db->err, "%.400s: a report query must only read", db->path);
        return -1;
    }
    enum { COLS = 32 };
    const int n = sqlite3_column_count(st) < COLS ? sqlite3_column_count(st) : COLS;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        double num[COLS];
        const char *text[COLS];
        for (int c = 0; c < n; c++) {
            const int t = sqlite3_column_type(st, c);
            num[c] = t == SQLITE_INTEGER || t == SQLITE_FLOAT ? sqlite3_column_double(st, c) : NAN;
            const unsigned char *x = sqlite3_column_text(st, c);
            text[c] = x ? (const char *)x : "";
        }
        if (fn(n, num, text, ctx) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail_sqlite(db, "report query");
}
