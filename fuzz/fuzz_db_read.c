/* fuzz/fuzz_db_read.c — the database's typed reads (db/db.h) and the readers above them
 * (cost model, communication model, spec sheets, device evidence) over rows of any SQL type.
 *
 * A dlperf database is a file anyone can edit with sqlite3: its columns hold whatever was
 * written (SQLite's types are only affinities), so every reader must survive NULL, text in
 * a number column, blobs, NaN and infinities. Per input, the tables are emptied through a
 * second connection (foreign keys and CHECK constraints off there), filled with the rows
 * the input decodes to, and every reader runs over them through the Db handle.
 *
 * Input: rows, each a table byte then one value per column of that table:
 *   tag byte % 9: 0 NULL | 1 int8 | 2 a small id 1..4 | 3 int64 (8 bytes) | 4 double (8 raw
 *   bytes: any NaN) | 5 a special double (NaN, +-inf, -0, extremes) | 6 a word from the
 *   dictionary (statuses, modes, precisions, op keys, spec sheets, this host's name) |
 *   7 text (length byte, bytes) | 8 blob (length byte, bytes).
 * Seeds (FUZZ_WRITE_SEEDS): a calibration with measurements and samples, a communication
 * calibration, a device calibration, an added spec sheet, suite runs.
 */
#include "fuzz/fuzz_util.h"

#include <float.h>
#include <math.h>
#include <sqlite3.h>

#include "db/db.h"
#include "predictor/comm_model.h"
#include "predictor/device_evidence.h"
#include "predictor/device_price.h"
#include "predictor/predict.h"
#include "predictor/system.h"

typedef struct {
    const char *table;
    const char *cols[32];
} Table;

/* every column the readers read back (db/schema.c) */
static const Table TABLES[] = {
    {"machine", {"id", "fingerprint", "cpu_model", "cpu_flags", "cores", "mem_bytes", "hostname", "os",
                 "first_seen"}},
    {"calibration", {"id", "machine_id", "mode", "status", "started_at", "finished_at", "pid", "hostname",
                     "threads", "ranks", "blas_core", "blas_config", "blas_choice", "compiler", "git_commit",
                     "mpi_library", "rounds", "llc_bytes", "threading", "runtime_rss_bytes", "rtt_fastest_ns",
                     "device", "precision", "source"}},
    {"measurement", {"id", "calibration_id", "family", "key", "kind", "phase", "threads", "warmups", "reps",
                     "inner", "median_s", "min_s", "max_s", "mean_s", "stddev_s", "ci95_lo_s", "ci95_hi_s",
                     "flops", "bytes", "validated", "max_err", "warm_s", "far_passes", "shared_passes",
                     "pass_placement", "apart_s", "framework", "source", "scope"}},
    {"sample", {"measurement_id", "rep", "time_s", "round", "rtt_ns"}},
    {"comm_memory", {"calibration_id", "bytes", "scratch_bytes"}},
    {"system_spec", {"name", "kind", "json", "source", "added_at"}},
    {"suite_run", {"id", "machine_id", "started_at", "finished_at", "status", "pid", "mode", "run", "precision",
                   "threads", "git_commit", "blas_core", "overall_fom", "wall_s"}},
    {"suite_result", {"suite_id", "benchmark", "instances", "threads_per_instance", "batch", "time_s", "fwd_s",
                      "instance_times", "accuracy", "accuracy_name", "projected", "reference_s", "fom", "note"}},
    {"device_fit", {"device", "precision", "grp", "form", "params", "points", "fit_err", "band", "calibrations",
                    "created_at"}},
};
enum { NTABLES = sizeof TABLES / sizeof TABLES[0], ROWS_MAX = 64 };

enum { DICT_HOST = 0, DICT_SPEC_DEVICE = 1, DICT_SPEC_LINK = 2, DICT_SPEC_SYSTEM = 3 };
static const char *dict[] = {
    "(host)", "(device sheet)", "(interconnect sheet)", "(system sheet)", "", "complete", "running",
    "interrupted", "failed", "full", "quick", "default", "comm", "comm-quick", "import", "fp32", "fp16", "bf16",
    "tf32", "fp64", "int8", "device", "interconnect", "system", "kernel", "framework", "v100-pcie-32gb",
    "a100-pcie-40gb", "t4", "nvlink2", "dgx-a100", "fuzz-gpu", "gemm", "conv", "stream", "eltwise", "model-op",
    "fwd", "bwd_data", "bwd_weights", "update", "nnna", "s-an", "[1.5,2.5,3]", "[1e308,nan,-inf,", "[", "1,2,3",
    "base", "neusight", "deepbench", "linear", "power", "0.5 1e-6 3", "Tesla T4", "NV_V100",
    "gemm m=64 n=64 k=64 ta=0 tb=0 beta=0", "gemm m=512 n=512 k=512 ta=0 tb=1 beta=0",
    "gemm m=64 n=768 k=3072 ta=0 tb=1 beta=0 bias=1", "bmm b=96 m=128 n=128 k=64 ta=0 tb=1 beta=0",
    "conv2d fwd n=4 c=3 h=32 w=32 k=16 r=3 s=3 sh=1 sw=1 p=1,1,1,1 g=1 acc=0",
    "conv2d bwd_weights n=128 c=3 h=227 w=227 k=64 r=11 s=11 sh=4 sw=4 p=0,0,0,0 g=1 acc=1",
    "layernorm fwd n=4096 h=768 acc=0", "softmax bwd_data n=12288 h=128 acc=1", "act fwd gelu count=3145728",
    "binary bwd_data pow count=1000 acc=1", "scalar fwd mul count=1000 acc=0",
};
enum { NDICT = sizeof dict / sizeof dict[0] };

static char host[256];
static char *spec_text[3]; /* a built-in device, interconnect and system sheet */
static Db *db;
static sqlite3 *raw;
static sqlite3_stmt *insert[NTABLES];

typedef struct {
    const uint8_t *p;
    size_t n;
} In;

static unsigned next(In *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

static uint64_t next64(In *in)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | next(in);
    return v;
}

static void bind_value(sqlite3_stmt *st, int col, In *in)
{
    static const double special[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, DBL_MAX, -DBL_MAX, DBL_MIN, 5e-324,
                                     1e-300, 1e300, 0.5, 1e-3, 2147483648.0, 9.3e18, -9.3e18, 1e19, -1.0};
    const unsigned tag = next(in) % 9;
    switch (tag) {
    case 0: sqlite3_bind_null(st, col); break;
    case 1: sqlite3_bind_int(st, col, (int8_t)next(in)); break;
    case 2: sqlite3_bind_int(st, col, 1 + (int)(next(in) % 4)); break;
    case 3: sqlite3_bind_int64(st, col, (sqlite3_int64)next64(in)); break;
    case 4: {
        uint64_t bits = next64(in);
        double d;
        memcpy(&d, &bits, sizeof d);
        sqlite3_bind_double(st, col, d);
        break;
    }
    case 5: sqlite3_bind_double(st, col, special[next(in) % (sizeof special / sizeof special[0])]); break;
    case 6: {
        unsigned w = next(in) % NDICT;
        const char *s = w == DICT_HOST ? host : w <= DICT_SPEC_SYSTEM ? spec_text[w - 1] : dict[w];
        sqlite3_bind_text(st, col, s, -1, SQLITE_STATIC);
        break;
    }
    default: {
        unsigned len = next(in) % 64;
        if (len > in->n)
            len = (unsigned)in->n;
        if (tag == 7)
            sqlite3_bind_text(st, col, (const char *)in->p, (int)len, SQLITE_TRANSIENT);
        else
            sqlite3_bind_blob(st, col, in->p, (int)len, SQLITE_TRANSIENT);
        in->p += len, in->n -= len;
        break;
    }
    }
}

static void raw_exec(const char *sql)
{
    char *msg = NULL;
    FUZZ_CHECK(sqlite3_exec(raw, sql, NULL, NULL, &msg) == SQLITE_OK, "%s: %s", sql, msg ? msg : "?");
}

/* up to max integers the query selects */
static int raw_ids(const char *sql, int64_t *out, int max)
{
    sqlite3_stmt *st;
    FUZZ_CHECK(sqlite3_prepare_v2(raw, sql, -1, &st, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(raw));
    int n = 0;
    while (n < max && sqlite3_step(st) == SQLITE_ROW)
        out[n++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* up to max texts (each < 64 bytes, NULL as "") */
static int raw_texts(const char *sql, char out[][64], int max)
{
    sqlite3_stmt *st;
    FUZZ_CHECK(sqlite3_prepare_v2(raw, sql, -1, &st, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(raw));
    int n = 0;
    while (n < max && sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        snprintf(out[n++], 64, "%s", t ? (const char *)t : "");
    }
    sqlite3_finalize(st);
    return n;
}

/* ---- callbacks: read every field (ASan sees a string that is not terminated) ---- */

static volatile size_t sink;

static int on_calibration(const CalibrationRow *c, void *ctx)
{
    (void)ctx;
    sink += strlen(c->mode) + strlen(c->status) + strlen(c->device) + strlen(c->precision) + strlen(c->source) +
            strlen(c->sw.blas_config) + strlen(c->sw.threading);
    return 0;
}

static int on_measurement(const MeasurementRow *m, void *ctx)
{
    (void)ctx;
    sink += strlen(m->family) + strlen(m->key) + strlen(m->kind) + strlen(m->phase) + strlen(m->pass_placement) +
            strlen(m->framework) + strlen(m->source) + strlen(m->scope);
    return 0;
}

static int on_sample(int64_t measurement_id, int round, double time_s, void *ctx)
{
    (void)ctx, (void)time_s;
    sink += (size_t)measurement_id + (size_t)round;
    return 0;
}

static int on_comm_memory(double bytes, double scratch, void *ctx)
{
    (void)ctx;
    sink += bytes > scratch;
    return 0;
}

static int on_fit(const DeviceFitRow *r, void *ctx)
{
    (void)ctx;
    sink += strlen(r->group) + strlen(r->form) + strlen(r->params) + strlen(r->calibrations);
    return 0;
}

static int on_evidence(const char *device, const char *precision, int cals, int ms, void *ctx)
{
    (void)ctx;
    sink += strlen(device) + strlen(precision) + (size_t)cals + (size_t)ms;
    return 0;
}

static int on_spec(const char *name, const char *kind, const char *source, void *ctx)
{
    (void)ctx; /* NULL where the column is NULL (the name: a TEXT PRIMARY KEY may be) */
    sink += (name ? strlen(name) : 0) + (kind ? strlen(kind) : 0) + (source ? strlen(source) : 0);
    return 0;
}

static void suite_rows(SuiteResultRow *rows, int n)
{
    for (int i = 0; i < n; i++)
        sink += strlen(rows[i].benchmark) + strlen(rows[i].accuracy_name) + strlen(rows[i].note);
    free(rows);
}

/* ---- setup ---- */

static char *builtin_text(const char *name)
{
    SpecKind k;
    char *text = NULL, origin[128], err[256];
    FUZZ_CHECK(spec_find(NULL, name, &k, &text, origin, sizeof origin, err, sizeof err) == 0, "%s", err);
    return text;
}

static void open_db(void)
{
    char path[4200], err[512];
    fuzz_path(path, sizeof path, fuzz_tmpdir(), "fuzz.db");
    FUZZ_CHECK(db_open(path, &db, err, sizeof err) == 0, "%s", err);
    FUZZ_CHECK(sqlite3_open_v2(path, &raw, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK, "open %s", path);
    sqlite3_busy_timeout(raw, 5000);
    raw_exec("PRAGMA foreign_keys = OFF; PRAGMA ignore_check_constraints = ON");
    for (int t = 0; t < NTABLES; t++) {
        char sql[2048], cols[1024] = "", qs[256] = "";
        for (int c = 0; TABLES[t].cols[c]; c++) {
            snprintf(cols + strlen(cols), sizeof cols - strlen(cols), "%s%s", c ? "," : "", TABLES[t].cols[c]);
            snprintf(qs + strlen(qs), sizeof qs - strlen(qs), "%s?", c ? "," : "");
        }
        snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO %s (%s) VALUES (%s)", TABLES[t].table, cols, qs);
        FUZZ_CHECK(sqlite3_prepare_v2(raw, sql, -1, &insert[t], NULL) == SQLITE_OK, "%s: %s", sql,
                   sqlite3_errmsg(raw));
    }
}

/* ---- seeds: the encoding written out ---- */

typedef struct {
    uint8_t b[4096];
    size_t n;
} Enc;

static void e_byte(Enc *e, unsigned v) { e->b[e->n++] = (uint8_t)v; }
static void e_null(Enc *e) { e_byte(e, 0); }
static void e_int(Enc *e, int v) { e_byte(e, 1), e_byte(e, (unsigned)(int8_t)v); }
static void e_id(Enc *e, int id) { e_byte(e, 2), e_byte(e, (unsigned)(id - 1)); }
static void e_real(Enc *e, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    e_byte(e, 4);
    for (int i = 7; i >= 0; i--)
        e_byte(e, (unsigned)(bits >> (8 * i)));
}
static void e_word(Enc *e, const char *w)
{
    for (unsigned i = 0; i < NDICT; i++)
        if (i > DICT_SPEC_SYSTEM && strcmp(dict[i], w) == 0) {
            e_byte(e, 6), e_byte(e, i);
            return;
        }
    FUZZ_CHECK(0, "'%s' is not in the dictionary", w);
}
static void e_dict(Enc *e, unsigned i) { e_byte(e, 6), e_byte(e, i); }
static void e_text(Enc *e, const char *s)
{
    e_byte(e, 7), e_byte(e, (unsigned)strlen(s));
    for (const char *p = s; *p; p++)
        e_byte(e, (unsigned char)*p);
}

static int table_index(const char *name)
{
    for (int t = 0; t < NTABLES; t++)
        if (strcmp(TABLES[t].table, name) == 0)
            return t;
    FUZZ_CHECK(0, "no table %s", name);
    return -1;
}

static void e_machine(Enc *e, int id)
{
    e_byte(e, (unsigned)table_index("machine"));
    e_id(e, id), e_text(e, id == 1 ? "abc123" : "device:fuzz-gpu"), e_text(e, "Fuzz CPU"), e_text(e, "fma avx2"),
        e_int(e, 2), e_real(e, 8e9), e_dict(e, DICT_HOST), e_text(e, "Linux"), e_text(e, "2026-01-01T00:00:00Z");
}

/* a calibration: id, machine, mode, status, threads, ranks, device, precision */
static void e_calibration(Enc *e, int id, int machine, const char *mode, const char *status, int threads, int ranks,
                          const char *device, const char *prec)
{
    e_byte(e, (unsigned)table_index("calibration"));
    e_id(e, id), e_id(e, machine), e_word(e, mode), e_word(e, status), e_text(e, "2026-01-01T00:00:00Z"),
        e_null(e), e_int(e, 99), e_dict(e, DICT_HOST), e_int(e, threads), e_int(e, ranks), e_text(e, "Haswell"),
        e_text(e, "OpenBLAS"), e_text(e, "probed"), e_text(e, "clang"), e_text(e, "abc"), e_text(e, ""),
        e_int(e, 1), e_real(e, 32e6), e_text(e, "OpenMP"), e_real(e, 0), e_real(e, 70), e_word(e, device),
        e_word(e, prec), e_text(e, "test");
}

static void e_measurement(Enc *e, int id, int cal, const char *key, double median_s)
{
    e_byte(e, (unsigned)table_index("measurement"));
    e_id(e, id), e_id(e, cal), e_word(e, "gemm"), e_word(e, key), e_word(e, "gemm"), e_word(e, "fwd"), e_int(e, 2),
        e_int(e, 1), e_int(e, 5), e_int(e, 1);
    for (int i = 0; i < 7; i++)
        e_real(e, median_s * (1 + 0.01 * i));
    e_real(e, 1e9), e_real(e, 1e7), e_int(e, 1), e_real(e, 0.01), e_null(e), e_int(e, 0), e_int(e, 0),
        e_word(e, "nnna"), e_real(e, 0), e_text(e, ""), e_text(e, ""), e_word(e, "kernel");
}

static void e_sample(Enc *e, int m, int rep, double t)
{
    e_byte(e, (unsigned)table_index("sample"));
    e_id(e, m), e_int(e, rep), e_real(e, t), e_int(e, 0), e_real(e, 80);
}

static void write_seeds(const char *dir)
{
    Enc e = {.n = 0};
    e_machine(&e, 1);
    e_calibration(&e, 1, 1, "quick", "complete", 2, 1, "", "fp32");
    e_measurement(&e, 1, 1, "gemm m=64 n=64 k=64 ta=0 tb=0 beta=0", 2e-5);
    e_measurement(&e, 2, 1, "gemm m=512 n=512 k=512 ta=0 tb=1 beta=0", 3e-3);
    e_measurement(&e, 3, 1, "conv2d fwd n=4 c=3 h=32 w=32 k=16 r=3 s=3 sh=1 sw=1 p=1,1,1,1 g=1 acc=0", 1e-3);
    for (int i = 0; i < 3; i++)
        e_sample(&e, 1, i, 2e-5 + 1e-7 * i);
    e_calibration(&e, 2, 1, "quick", "running", 2, 1, "", "fp32");
    fuzz_seed(dir, "calibration", e.b, e.n);

    e.n = 0;
    e_machine(&e, 1);
    e_calibration(&e, 1, 1, "comm", "complete", 1, 2, "", "fp32");
    e_byte(&e, (unsigned)table_index("comm_memory"));
    e_id(&e, 1), e_real(&e, 1 << 20), e_real(&e, 1 << 19);
    fuzz_seed(dir, "comm", e.b, e.n);

    e.n = 0;
    e_machine(&e, 2);
    e_calibration(&e, 1, 2, "import", "complete", 0, 1, "v100-pcie-32gb", "fp32");
    e_measurement(&e, 1, 1, "gemm m=512 n=512 k=512 ta=0 tb=1 beta=0", 1e-4);
    e_measurement(&e, 2, 1, "layernorm fwd n=4096 h=768 acc=0", 2e-5);
    e_byte(&e, (unsigned)table_index("device_fit"));
    e_word(&e, "v100-pcie-32gb"), e_word(&e, "fp32"), e_word(&e, "gemm"), e_word(&e, "power"),
        e_word(&e, "0.5 1e-6 3"), e_int(&e, 2), e_real(&e, 0.1), e_real(&e, 0.2), e_text(&e, "1"),
        e_text(&e, "2026-01-01T00:00:00Z");
    fuzz_seed(dir, "device", e.b, e.n);

    e.n = 0;
    e_byte(&e, (unsigned)table_index("system_spec"));
    e_word(&e, "t4"), e_word(&e, "device"), e_dict(&e, DICT_SPEC_DEVICE), e_text(&e, "x.json"),
        e_text(&e, "2026-01-01T00:00:00Z");
    e_byte(&e, (unsigned)table_index("system_spec"));
    e_word(&e, "dgx-a100"), e_word(&e, "system"), e_dict(&e, DICT_SPEC_SYSTEM), e_text(&e, "y.json"),
        e_text(&e, "2026-01-01T00:00:00Z");
    e_byte(&e, (unsigned)table_index("system_spec"));
    e_null(&e), e_word(&e, "device"), e_word(&e, "[1.5,2.5,3]"), e_text(&e, "z.json"), e_text(&e, "");
    fuzz_seed(dir, "specs", e.b, e.n);

    e.n = 0;
    e_machine(&e, 1);
    for (int r = 1; r <= 2; r++) {
        e_byte(&e, (unsigned)table_index("suite_run"));
        e_id(&e, r), e_id(&e, 1), e_text(&e, "2026-01-01T00:00:00Z"), e_null(&e), e_word(&e, "complete"),
            e_int(&e, 7), e_word(&e, "full"), e_word(&e, "base"), e_word(&e, "fp32"), e_int(&e, 2),
            e_text(&e, "abc"), e_text(&e, "Haswell"), e_real(&e, 1.5), e_real(&e, 30);
        e_byte(&e, (unsigned)table_index("suite_result"));
        e_id(&e, r), e_word(&e, r == 1 ? "linear" : "gemm"), e_int(&e, 2), e_int(&e, 1), e_int(&e, 32),
            e_real(&e, 2.5), e_null(&e), e_word(&e, "[1.5,2.5,3]"), e_null(&e), e_text(&e, "acc"), e_int(&e, 0),
            e_real(&e, 3), e_real(&e, 1.2), e_text(&e, "");
    }
    fuzz_seed(dir, "suite", e.b, e.n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    FUZZ_CHECK(gethostname(host, sizeof host - 1) == 0, "gethostname");
    spec_text[0] = builtin_text("t4");
    spec_text[1] = builtin_text("nvlink2");
    spec_text[2] = builtin_text("dgx-a100");
    const char *dir = fuzz_seed_dir();
    if (dir) {
        write_seeds(dir);
        exit(0);
    }
    open_db();
    return 0;
}

/* ---- one input ---- */

static void fill(In *in)
{
    raw_exec("BEGIN; DELETE FROM sample; DELETE FROM measurement; DELETE FROM comm_memory; DELETE FROM calibration;"
             " DELETE FROM machine; DELETE FROM system_spec; DELETE FROM suite_result; DELETE FROM suite_run;"
             " DELETE FROM device_fit");
    for (int rows = 0; in->n > 0 && rows < ROWS_MAX; rows++) {
        const int t = (int)(next(in) % NTABLES);
        sqlite3_stmt *st = insert[t];
        for (int c = 0; TABLES[t].cols[c]; c++)
            bind_value(st, c + 1, in);
        sqlite3_step(st); /* a constraint may refuse the row: NOT NULL, a key taken */
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    raw_exec("COMMIT");
}

/* A reader that fails must say why (err, or the Db's message). */
#define READ(call, errbuf)                                                                                      \
    do {                                                                                                        \
        (errbuf)[0] = '\0';                                                                                     \
        if ((call) < 0)                                                                                         \
            FUZZ_CHECK((errbuf)[0] || db_errmsg(db)[0], "%s failed without a message", #call);                \
    } while (0)

static void read_all(void)
{
    char err[512];
    int64_t cal[8], mach[6], suite[4], thr[4];
    char dev[4][64], prec[3][64], spec[6][64];
    const int ncal = raw_ids("SELECT id FROM calibration ORDER BY id", cal, 8);
    const int nmach = raw_ids("SELECT id FROM machine UNION SELECT machine_id FROM calibration UNION"
                              " SELECT machine_id FROM suite_run", mach, 6);
    const int nsuite = raw_ids("SELECT id FROM suite_run", suite, 4);
    int nthr = raw_ids("SELECT DISTINCT threads FROM calibration UNION SELECT threads FROM suite_run", thr, 4);
    const int ndev = raw_texts("SELECT DISTINCT device FROM calibration UNION SELECT device FROM device_fit", dev, 4);
    const int nprec = raw_texts("SELECT DISTINCT precision FROM calibration", prec, 3);
    const int nspec = raw_texts("SELECT name FROM system_spec", spec, 6);

    for (int i = 0; i < ncal; i++) {
        CalibrationRow c;
        READ(db_calibration_get(db, cal[i], &c), err);
        READ(db_measurement_foreach(db, cal[i], on_measurement, NULL), err);
        READ(db_sample_foreach(db, cal[i], on_sample, NULL), err);
        READ(db_comm_memory_foreach(db, cal[i], on_comm_memory, NULL), err);
        int probed, apart;
        READ(db_calibration_sample_placement(db, cal[i], 2.5, &probed, &apart), err);
        err[0] = '\0';
        CostModel *cm = cm_load(db, cal[i], err, sizeof err);
        if (cm) {
            OpDesc d;
            if (op_key_parse("gemm m=64 n=64 k=64 ta=0 tb=0 beta=0", &d))
                sink += cm_measured_s(cm, &d) > 0;
            cm_free(cm);
        } else {
            FUZZ_CHECK(err[0], "cm_load failed without a message");
        }
    }
    for (int i = 0; i < nmach; i++) {
        CalibrationRow c;
        for (int t = 0; t < (nthr ? nthr : 1); t++) {
            const int threads = nthr ? (int)thr[t] : 1;
            READ(db_calibration_latest(db, mach[i], threads, &c), err);
            READ(db_calibration_latest_ranks(db, mach[i], threads, 2, &c), err);
            SuiteResultRow *rows;
            int n;
            READ(db_suite_combined(db, mach[i], threads, &rows, &n), err);
            suite_rows(rows, n);
        }
        READ(db_comm_calibration_latest(db, mach[i], 0, &c), err);
        READ(db_calibration_reap(db, mach[i]), err);
        err[0] = '\0';
        CommModel *comm = comm_model_load(db, mach[i], err, sizeof err);
        if (comm) {
            CommSource src;
            sink += comm_model_allreduce_s(comm, 1 << 20, 2, &src) > 0;
            sink += comm_model_allreduce_apart_s(comm, 1 << 20, 2) > 0;
            comm_model_free(comm);
        } else {
            FUZZ_CHECK(err[0], "comm_model_load failed without a message");
        }
        SuiteRunRow r;
        SuiteResultRow *rows;
        int n;
        READ(db_suite_get(db, 0, mach[i], &r, &rows, &n), err);
        suite_rows(rows, n);
    }
    for (int i = 0; i < nsuite; i++) {
        SuiteRunRow r;
        SuiteResultRow *rows;
        int n;
        READ(db_suite_get(db, suite[i], 0, &r, &rows, &n), err);
        suite_rows(rows, n);
    }
    READ(db_device_evidence_foreach(db, on_evidence, NULL), err);
    for (int i = 0; i < ndev; i++) {
        READ(db_device_calibrations(db, dev[i], NULL, on_calibration, NULL), err);
        for (int p = 0; p < nprec; p++) {
            READ(db_device_calibrations(db, dev[i], prec[p], on_calibration, NULL), err);
            READ(db_device_fits_foreach(db, dev[i], prec[p], on_fit, NULL), err);
        }
        DeviceSpec d;
        err[0] = '\0';
        if (dev[i][0] && device_load(db, dev[i], &d, err, sizeof err) == 0) {
            err[0] = '\0';
            DeviceEvidence *ev = dp_device_evidence(db, &d, PREC_FP32, NULL, NULL, err, sizeof err);
            dev_ev_free(ev);
        }
    }
    READ(db_spec_foreach(db, on_spec, NULL), err);
    for (int i = 0; i < nspec; i++) {
        char kind[16], *json = NULL;
        READ(db_spec_get(db, spec[i], kind, &json), err);
        free(json);
        SpecKind k = SPEC_KIND_COUNT;
        char *text = NULL, origin[128];
        err[0] = '\0';
        if (spec_find(db, spec[i], &k, &text, origin, sizeof origin, err, sizeof err) == 0) {
            union {
                DeviceSpec d;
                LinkSpec l;
                SystemSpec s;
            } u;
            err[0] = '\0';
            int rc = k == SPEC_DEVICE ? device_load(db, spec[i], &u.d, err, sizeof err)
                     : k == SPEC_INTERCONNECT ? link_load(db, spec[i], &u.l, err, sizeof err)
                                              : system_load(db, spec[i], &u.s, err, sizeof err);
            FUZZ_CHECK(rc == 0 || err[0], "loading spec '%s' failed without a message", spec[i]);
        }
        free(text);
    }
    if (nspec == 0) /* these two parse every built-in sheet: only worth it where rows were added */
        return;
    SpecEntry *list = NULL;
    int n = 0;
    err[0] = '\0';
    FUZZ_CHECK(spec_list(db, &list, &n, err, sizeof err) == 0 || err[0], "spec_list failed without a message");
    free(list);
    char name[SPEC_NAME_MAX];
    err[0] = '\0';
    FUZZ_CHECK(device_find_alias(db, "Tesla T4", name, err, sizeof err) == 0 || err[0],
               "device_find_alias failed without a message");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    In in = {data, size};
    fill(&in);
    read_all();
    return 0;
}
