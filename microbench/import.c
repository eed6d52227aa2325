/* microbench/import.c — published and foreign measurements as device calibrations
 * (import.h). Each format's reader turns a CSV record into rows (a descriptor, its time,
 * precision, framework, scope and FILE:LINE); every file is read and checked before the
 * rows of each precision are merged by key and written as one calibration, all in one
 * transaction.
 */
#include "microbench/import.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "microbench/csv.h"
#include "ops/ops.h"

static const char *const FORMAT_NAMES[IMPORT_FORMAT_COUNT] = {"dlperf", "neusight", "deepbench", "cde"};

const char *import_format_name(ImportFormat f)
{
    return f >= 0 && f < IMPORT_FORMAT_COUNT ? FORMAT_NAMES[f] : "?";
}

int import_format_parse(const char *s, ImportFormat *out)
{
    for (int i = 0; i < IMPORT_FORMAT_COUNT; i++)
        if (strcmp(s, FORMAT_NAMES[i]) == 0) {
            *out = (ImportFormat)i;
            return 0;
        }
    return -1;
}

/* The precisions dlperf prices (predictor/system.h's names). */
static const char *const PRECISIONS[] = {"fp64", "fp32", "tf32", "fp16", "bf16"};

static bool precision_known(const char *p)
{
    for (size_t i = 0; i < sizeof PRECISIONS / sizeof PRECISIONS[0]; i++)
        if (strcmp(p, PRECISIONS[i]) == 0)
            return true;
    return false;
}

typedef ImportedRow Row;

typedef struct {
    Row *v;
    size_t n, cap;
} Rows;

/* Everything one record's reader needs. */
typedef struct {
    const ImportOptions *o;
    ImportSummary *s;
    Rows *rows;
    CsvReader *csv;
    const char *file;    /* the file's name as given */
    const char *base;    /* its last path component, for sources */
    ImportFormat format;
    int col[40];         /* column indices of the format's fields, -1 where absent */
    char *err;
    size_t errlen;
} Ctx;

static int fail(Ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(Ctx *c, const char *fmt, ...)
{
    int n = snprintf(c->err, c->errlen, "%s:%ld: ", c->file, c->csv->record_line);
    if (n < 0 || (size_t)n >= c->errlen)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *trim(const char *s, char *buf, size_t n)
{
    while (*s == ' ' || *s == '\t')
        s++;
    snprintf(buf, n, "%s", s);
    size_t l = strlen(buf);
    while (l > 0 && (buf[l - 1] == ' ' || buf[l - 1] == '\t'))
        buf[--l] = '\0';
    return buf;
}

/* The field of column `col` of the current record ("" where the record is short). */
static const char *field(const Ctx *c, int col)
{
    return col >= 0 && col < c->csv->nfields ? c->csv->field[col] : "";
}

static bool is_empty(const char *s)
{
    while (*s == ' ')
        s++;
    return *s == '\0';
}

/* An integer field in [lo, hi]; names the column on error. */
static int get_int(Ctx *c, int col, const char *name, long lo, long hi, long *out)
{
    char buf[64];
    const char *s = trim(field(c, col), buf, sizeof buf);
    char *end;
    errno = 0;
    double v = strtod(s, &end); /* "38.0": published files write some integers as floats */
    if (*s == '\0' || *end != '\0' || errno || v != floor(v) || v < (double)lo || v > (double)hi)
        return fail(c, "field '%s' = '%s': expected an integer from %ld to %ld", name, s, lo, hi);
    *out = (long)v;
    return 0;
}

/* A time in milliseconds (> 0, finite) into seconds; *present false where the field is
 * empty (or NaN, as pandas writes a missing value): a time the publication does not
 * give. */
static int get_ms(Ctx *c, int col, const char *name, double *out_s, bool *present)
{
    char buf[64];
    const char *s = trim(field(c, col), buf, sizeof buf);
    *present = false;
    if (*s == '\0' || strcasecmp(s, "nan") == 0)
        return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end != '\0' || errno || !isfinite(v) || v <= 0 || v > 3.6e6)
        return fail(c, "field '%s' = '%s': expected a time in milliseconds, > 0 and at most an hour", name, s);
    *out_s = v * 1e-3;
    *present = true;
    return 0;
}

static bool name_matches(const char *a, const char *b)
{
    char x[96], y[96];
    return strcasecmp(trim(a, x, sizeof x), trim(b, y, sizeof y)) == 0;
}

/* Whether the device column's value names the device being imported. */
static bool device_matches(const Ctx *c, const char *published)
{
    for (int i = 0; i < c->o->naliases; i++)
        if (name_matches(published, c->o->aliases[i]))
            return true;
    return name_matches(published, c->o->device);
}

static int push(Ctx *c, const OpDesc *d, const char *precision, double time_s, double min_s, double max_s,
                double stddev_s, int reps, const char *framework, const char *scope)
{
    if (c->o->precision && strcmp(precision, c->o->precision) != 0) {
        c->s->other_precision++;
        return 0;
    }
    Rows *r = c->rows;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 4096;
        Row *v = realloc(r->v, cap * sizeof *v);
        if (!v)
            return fail(c, "out of memory after %zu rows", r->n);
        r->v = v;
        r->cap = cap;
    }
    Row *w = &r->v[r->n++];
    memset(w, 0, sizeof *w);
    w->desc = *d;
    op_key(d, w->key);
    snprintf(w->precision, sizeof w->precision, "%s", precision);
    w->time_s = time_s;
    w->min_s = min_s > 0 ? min_s : time_s;
    w->max_s = max_s > 0 ? max_s : time_s;
    w->stddev_s = stddev_s;
    w->reps = reps > 0 ? reps : 1;
    snprintf(w->framework, sizeof w->framework, "%s", framework);
    snprintf(w->scope, sizeof w->scope, "%s", scope);
    snprintf(w->source, sizeof w->source, "%s:%ld", c->base, c->csv->record_line);
    w->nsources = 1;
    w->format = c->format;
    c->s->imported++;
    return 0;
}

/* ---- shapes: checked here, so that the descriptor constructors (which assert on a
 * programmer's error) only ever see valid ones ---- */

enum { DIM_MAX = 1 << 24 };
#define ELEMS_MAX 1.0995e12 /* 2^40 values, what a descriptor takes */

static int check_elems(Ctx *c, const char *what, double elems)
{
    if (elems > ELEMS_MAX)
        return fail(c, "%s has %.3g elements: at most %.3g", what, elems, ELEMS_MAX);
    return 0;
}

/* A convolution with explicit symmetric padding, the phase given; accumulate cleared: a
 * published backward time overwrites its gradient. */
static int conv_explicit(Ctx *c, OpPhase phase, long n, long ch, long h, long w, long k, long r, long s, long sh,
                         long sw, long ph, long pw, OpDesc *d)
{
    if (h + 2 * ph < r || w + 2 * pw < s)
        return fail(c, "a %ldx%ld filter is larger than the %ldx%ld input with padding %ld,%ld", r, s, h, w, ph,
                    pw);
    const double oh = (double)((h + 2 * ph - r) / sh + 1), ow = (double)((w + 2 * pw - s) / sw + 1);
    if (check_elems(c, "the input", (double)n * ch * h * w) || check_elems(c, "the output", (double)n * k * oh * ow) ||
        check_elems(c, "the filter", (double)k * ch * r * s) ||
        check_elems(c, "the unrolled input", (double)ch * r * s * oh * ow))
        return -1;
    *d = op_conv2d_explicit(phase, (int)n, (int)ch, (int)h, (int)w, (int)k, (int)r, (int)s, (int)sh, (int)sw, (int)ph,
                            (int)pw, 1);
    d->u.conv.accumulate = false;
    return 0;
}

/* ---- dlperf's own CSV (docs/import-format.md) ---- */

enum { D_KEY, D_PREC, D_TIME, D_MIN, D_MAX, D_STD, D_REPS, D_FRAMEWORK, D_SCOPE, D_DEVICE, D_NCOLS };
static const char *const D_NAMES[D_NCOLS] = {"key",       "precision", "time_ms", "min_ms", "max_ms",
                                             "stddev_ms", "reps",      "framework", "scope", "device"};

static int dlperf_header(Ctx *c)
{
    for (int i = 0; i < c->csv->nfields; i++) {
        char buf[64];
        const char *h = trim(c->csv->field[i], buf, sizeof buf);
        int j = 0;
        while (j < D_NCOLS && strcmp(h, D_NAMES[j]) != 0)
            j++;
        if (j == D_NCOLS)
            return fail(c, "unknown column '%s': dlperf's import CSV has key, precision, time_ms and optionally "
                           "min_ms, max_ms, stddev_ms, reps, framework, scope, device", h);
        if (c->col[j] >= 0)
            return fail(c, "column '%s' appears twice", h);
        c->col[j] = i;
    }
    for (int j = 0; j <= D_TIME; j++)
        if (c->col[j] < 0)
            return fail(c, "no column '%s': dlperf's import CSV needs key, precision and time_ms", D_NAMES[j]);
    return 0;
}

static int dlperf_record(Ctx *c)
{
    if (c->col[D_DEVICE] >= 0 && !is_empty(field(c, c->col[D_DEVICE])) &&
        !device_matches(c, field(c, c->col[D_DEVICE]))) {
        c->s->other_device++;
        return 0;
    }
    char key[OP_KEY_MAX + 8];
    trim(field(c, c->col[D_KEY]), key, sizeof key);
    OpDesc d;
    if (!op_key_parse(key, &d))
        return fail(c, "field 'key' = '%.80s': not an op key dlperf makes (`dlperf profile MODEL --ops --csv` "
                       "lists a model's)", key);
    char prec[16];
    trim(field(c, c->col[D_PREC]), prec, sizeof prec);
    if (!precision_known(prec))
        return fail(c, "field 'precision' = '%s': expected fp64, fp32, tf32, fp16 or bf16", prec);
    double t, lo = 0, hi = 0, sd = 0;
    bool have, h2;
    if (get_ms(c, c->col[D_TIME], "time_ms", &t, &have))
        return -1;
    if (!have) {
        c->s->no_time++;
        return 0;
    }
    if ((c->col[D_MIN] >= 0 && get_ms(c, c->col[D_MIN], "min_ms", &lo, &h2)) ||
        (c->col[D_MAX] >= 0 && get_ms(c, c->col[D_MAX], "max_ms", &hi, &h2)))
        return -1;
    if ((lo > 0 && lo > t * (1 + 1e-9)) || (hi > 0 && hi < t * (1 - 1e-9)))
        return fail(c, "min_ms, time_ms and max_ms must be in that order (%g, %g, %g ms)", lo * 1e3, t * 1e3,
                    hi * 1e3);
    if (c->col[D_STD] >= 0 && !is_empty(field(c, c->col[D_STD]))) {
        char buf[64], *end;
        const char *s = trim(field(c, c->col[D_STD]), buf, sizeof buf);
        sd = strtod(s, &end);
        if (*end != '\0' || !isfinite(sd) || sd < 0)
            return fail(c, "field 'stddev_ms' = '%s': expected milliseconds >= 0", s);
        sd *= 1e-3;
    }
    long reps = 1;
    if (c->col[D_REPS] >= 0 && !is_empty(field(c, c->col[D_REPS])) &&
        get_int(c, c->col[D_REPS], "reps", 1, 1000000000, &reps))
        return -1;
    char scope[16] = "kernel";
    if (c->col[D_SCOPE] >= 0 && !is_empty(field(c, c->col[D_SCOPE]))) {
        trim(field(c, c->col[D_SCOPE]), scope, sizeof scope);
        if (strcmp(scope, "kernel") != 0 && strcmp(scope, "framework") != 0)
            return fail(c, "field 'scope' = '%s': expected kernel (the device's time of the op's kernels) or "
                           "framework (a framework's call, its host time included)", scope);
    }
    char fw[96] = "";
    if (c->col[D_FRAMEWORK] >= 0)
        trim(field(c, c->col[D_FRAMEWORK]), fw, sizeof fw);
    return push(c, &d, prec, t, lo, hi, sd, (int)reps, fw, scope);
}

/* ---- NeuSight (sitar-lab/NeuSight dataset/) ---- */

enum { N_OP, N_LAT, N_DEV, N_TORCH, N_CUDNN, N_CUDA, N_B, N_M, N_N, N_K, N_H, N_CIN, N_COUT, N_KS, N_IN, N_STRIDE,
       N_PAD, N_NCOLS };
static const char *const N_NAMES[N_NCOLS] = {
    "OPName", "Latency", "Device", "Torch Version", "CUDNN Version", "CUDA Version", "B", "M", "N", "K", "H",
    "Input_Channel", "Output_Channel", "Kernel_Szie", "Input_Size", "Stride", "Padding"};

static int neusight_header(Ctx *c)
{
    for (int j = 0; j < N_NCOLS; j++)
        c->col[j] = csv_column(c->csv, N_NAMES[j]);
    for (int j = N_OP; j <= N_DEV; j++)
        if (c->col[j] < 0)
            return fail(c, "no column '%s': a NeuSight file has OPName, Latency, Device and the shape", N_NAMES[j]);
    return 0;
}

/* "PyTorch 2.1.0, CUDA 12.1, cuDNN 8.9.2" from "p2.1.0", "cu121", "8902". */
static void neusight_framework(const Ctx *c, char *out, size_t n)
{
    char t[32], cu[32], dnn[32];
    trim(field(c, c->col[N_TORCH]), t, sizeof t);
    trim(field(c, c->col[N_CUDA]), cu, sizeof cu);
    trim(field(c, c->col[N_CUDNN]), dnn, sizeof dnn);
    const char *tv = t[0] == 'p' ? t + 1 : t;
    char cuda[24] = "?";
    if (strncmp(cu, "cu", 2) == 0 && strlen(cu) >= 4 && strlen(cu) < 8)
        snprintf(cuda, sizeof cuda, "%.*s.%s", (int)strlen(cu + 2) - 1, cu + 2, cu + strlen(cu) - 1);
    char cudnn[24] = "?";
    long v = strtol(dnn, NULL, 10);
    if (v >= 1000)
        snprintf(cudnn, sizeof cudnn, "%ld.%ld.%ld", v / 1000, v % 1000 / 100, v % 100);
    snprintf(out, n, "PyTorch %s, CUDA %s, cuDNN %s", tv[0] ? tv : "?", cuda, cudnn);
}

static int neusight_record(Ctx *c)
{
    if (!device_matches(c, field(c, c->col[N_DEV]))) {
        c->s->other_device++;
        return 0;
    }
    char op[32];
    trim(field(c, c->col[N_OP]), op, sizeof op);
    double t;
    bool have;
    if (get_ms(c, c->col[N_LAT], "Latency", &t, &have))
        return -1;
    if (!have) {
        c->s->no_time++;
        return 0;
    }
    char fw[96];
    neusight_framework(c, fw, sizeof fw);
    OpDesc d;
    long B, M, N, K, H;
    if (strcmp(op, "bmm") == 0 || strcmp(op, "linear") == 0) {
        if (get_int(c, c->col[N_B], "B", 1, DIM_MAX, &B) || get_int(c, c->col[N_M], "M", 1, DIM_MAX, &M) ||
            get_int(c, c->col[N_N], "N", 1, DIM_MAX, &N) || get_int(c, c->col[N_K], "K", 1, DIM_MAX, &K))
            return -1;
        if (strcmp(op, "bmm") == 0) {
            /* torch.bmm of (B, M, N) and (B, N, K): B products (M x K) over N */
            if (check_elems(c, "an operand", (double)B * M * N) || check_elems(c, "an operand", (double)B * N * K) ||
                check_elems(c, "the output", (double)B * M * K))
                return -1;
            d = op_bmm(PHASE_FWD, (int)B, (int)M, (int)K, (int)N, false, false, 0.0f);
        } else {
            /* nn.Linear(N, K) over an input (B, M, N): one GEMM (B*M x K) over N with the
             * weight stored (K, N), plus its bias */
            if ((double)B * M > DIM_MAX)
                return fail(c, "B*M = %.0f rows: at most %d", (double)B * M, DIM_MAX);
            if (check_elems(c, "the input", (double)B * M * N) || check_elems(c, "the output", (double)B * M * K) ||
                check_elems(c, "the weight", (double)N * K))
                return -1;
            d = op_gemm_bias(PHASE_FWD, (int)(B * M), (int)K, (int)N, false, true);
        }
    } else if (strcmp(op, "conv") == 0) {
        long cin, cout, ks, in, st, pad;
        if (get_int(c, c->col[N_B], "B", 1, DIM_MAX, &B) ||
            get_int(c, c->col[N_CIN], "Input_Channel", 1, DIM_MAX, &cin) ||
            get_int(c, c->col[N_COUT], "Output_Channel", 1, DIM_MAX, &cout) ||
            get_int(c, c->col[N_KS], "Kernel_Szie", 1, 4096, &ks) ||
            get_int(c, c->col[N_IN], "Input_Size", 1, 1 << 16, &in) ||
            get_int(c, c->col[N_STRIDE], "Stride", 1, 4096, &st) || get_int(c, c->col[N_PAD], "Padding", 0, 4096, &pad))
            return -1;
        if (conv_explicit(c, PHASE_FWD, B, cin, in, in, cout, ks, ks, st, st, pad, pad, &d))
            return -1;
    } else {
        if (get_int(c, c->col[N_B], "B", 1, 1L << 30, &B) || get_int(c, c->col[N_H], "H", 1, 1L << 30, &H))
            return -1;
        const double count = (double)B * H;
        if (check_elems(c, "the tensor", count))
            return -1;
        static const struct {
            const char *name;
            int binary; /* 1 binary, 2 tensor-scalar, 0 activation */
            int which;
        } ELEM[] = {{"add", 1, BIN_ADD},  {"mul", 1, BIN_MUL},  {"pow", 1, BIN_POW},   {"div", 1, BIN_DIV},
                    {"addu", 2, BIN_ADD}, {"mulu", 2, BIN_MUL}, {"powu", 2, BIN_POW}, {"divu", 2, BIN_DIV},
                    {"relu", 0, ACT_RELU}, {"tanh", 0, ACT_TANH}, {"gelu", 0, ACT_GELU}};
        size_t e = 0;
        while (e < sizeof ELEM / sizeof ELEM[0] && strcmp(op, ELEM[e].name) != 0)
            e++;
        if (strcmp(op, "ln") == 0) {
            if (B > DIM_MAX || H > DIM_MAX)
                return fail(c, "layer norm over (%ld, %ld): each at most %d", B, H, DIM_MAX);
            d = op_layernorm(PHASE_FWD, (int)B, (int)H, 1e-5f);
        } else if (strcmp(op, "softmax") == 0) {
            if (B > DIM_MAX || H > DIM_MAX)
                return fail(c, "softmax over (%ld, %ld): each at most %d", B, H, DIM_MAX);
            d = op_softmax(PHASE_FWD, (int)B, (int)H);
        } else if (e < sizeof ELEM / sizeof ELEM[0]) {
            if (ELEM[e].binary == 1)
                d = op_binary(PHASE_FWD, (BinaryKind)ELEM[e].which, (size_t)count);
            else if (ELEM[e].binary == 2)
                d = op_scalar(PHASE_FWD, (BinaryKind)ELEM[e].which, (size_t)count, 2.0f);
            else
                d = op_act(PHASE_FWD, (ActKind)ELEM[e].which, (size_t)count);
        } else
            return fail(c, "field 'OPName' = '%s': expected bmm, linear, conv, add, mul, pow, div, addu, mulu, powu, "
                           "divu, relu, gelu, tanh, ln or softmax", op);
    }
    /* the mean of the 5 fastest of 25 runs (NeuSight's protocol): one figure, no spread */
    return push(c, &d, "fp32", t, 0, 0, 0, 5, fw, "kernel");
}

/* ---- DeepBench (baidu-research/DeepBench results, tidy CSV) ---- */

enum { B_DEV, B_SUITE, B_PREC, B_FILE, B_SHEET, B_M, B_N, B_K, B_AT, B_BT, B_TIME, B_W, B_H, B_C, B_NN, B_KK, B_R,
       B_S, B_PH, B_PW, B_SV, B_SH, B_P, B_Q, B_FWD, B_BWDD, B_BWDF, B_CELL, B_HIDDEN, B_T, B_BWDW, B_BWD, B_TOTAL,
       B_NCOLS };
static const char *const B_NAMES[B_NCOLS] = {
    "device", "suite", "precision", "file", "sheet", "M",       "N",       "K",           "a_trans", "b_trans",
    "time_ms", "W",    "H",         "C",    "N",     "K",       "R",       "S",           "pad_h",   "pad_w",
    "stride_v", "stride_h", "P",    "Q",    "fwd_ms", "bwd_data_ms", "bwd_filter_ms", "cell", "hidden", "T",
    "bwd_weight_ms", "bwd_ms", "total_ms"};

static int deepbench_header(Ctx *c)
{
    for (int j = 0; j < B_NCOLS; j++)
        c->col[j] = csv_column(c->csv, B_NAMES[j]);
    for (int j = B_DEV; j <= B_PREC; j++)
        if (c->col[j] < 0)
            return fail(c, "no column '%s': a DeepBench results file has device, suite, precision and the kernel's "
                           "fields", B_NAMES[j]);
    if (c->col[B_CELL] >= 0) {
        if (!c->o->layers)
            return fail(c, "a DeepBench RNN file times whole recurrent layers (T steps of several kernels), which no "
                           "op key holds: import the GEMM and convolution files, and compare predictions with this "
                           "one (dlperf validate --device NAME FILE)");
        for (int j = B_HIDDEN; j <= B_T; j++)
            if (c->col[j] < 0)
                return fail(c, "no column '%s': a DeepBench RNN file has cell, hidden, N, T and the times",
                            B_NAMES[j]);
        if (c->col[B_NN] < 0)
            return fail(c, "no column 'N': a DeepBench RNN file has cell, hidden, N, T and the times");
        if (c->col[B_FWD] < 0 && c->col[B_BWD] < 0 && c->col[B_TOTAL] < 0)
            return fail(c, "none of fwd_ms, bwd_ms, total_ms: a DeepBench RNN file gives at least one time");
        return 0;
    }
    if (c->col[B_TIME] < 0 && c->col[B_FWD] < 0)
        return fail(c, "neither time_ms (GEMM) nor fwd_ms (convolution): not a DeepBench GEMM or convolution file");
    return 0;
}

/* DeepBench's precision column: "fp32", "fp16" or NULL (int8 and fp16 storage with fp32
 * math, which dlperf does not price). */
static const char *deepbench_precision(const char *p)
{
    if (strcmp(p, "Float") == 0 || strstr(p, "single precision"))
        return "fp32";
    if (strstr(p, "16 bit inputs, 16 bit multiplication"))
        return "fp16";
    return NULL;
}

/* A DeepBench RNN row (its training sheets): forward, backward (data and weights) and,
 * where the sheet gives only the sum, both; each a row of the layer's steps. */
static int deepbench_rnn_record(Ctx *c, const char *prec, const char *fw)
{
    char suite[16], cell[16];
    trim(field(c, c->col[B_SUITE]), suite, sizeof suite);
    trim(field(c, c->col[B_CELL]), cell, sizeof cell);
    static const char *const CELLS[] = {[MB_RNN_VANILLA] = "vanilla", [MB_RNN_LSTM] = "lstm", [MB_RNN_GRU] = "gru"};
    static const int GATES[] = {[MB_RNN_VANILLA] = 1, [MB_RNN_LSTM] = 4, [MB_RNN_GRU] = 3};
    int k = 0;
    while (k < 3 && strcmp(cell, CELLS[k]) != 0)
        k++;
    if (k == 3)
        return fail(c, "field 'cell' = '%s': expected vanilla, lstm or gru", cell);
    long H, N, T;
    if (get_int(c, c->col[B_HIDDEN], "hidden", 1, DIM_MAX, &H) || get_int(c, c->col[B_NN], "N", 1, DIM_MAX, &N) ||
        get_int(c, c->col[B_T], "T", 1, 1L << 20, &T))
        return -1;
    if (check_elems(c, "the recurrent weight", (double)GATES[k] * H * H) ||
        check_elems(c, "a step's gates", (double)GATES[k] * H * N))
        return -1;
    double t[5] = {0};
    bool have[5] = {false};
    const int cols[5] = {B_FWD, B_BWDD, B_BWDW, B_BWD, B_TOTAL};
    for (int j = 0; j < 5; j++) {
        char z[8];
        /* a sheet's total of empty cells (the T4's): no time, not a zero one */
        if (cols[j] == B_TOTAL && strcmp(trim(field(c, c->col[B_TOTAL]), z, sizeof z), "0") == 0)
            continue;
        if (c->col[cols[j]] >= 0 && get_ms(c, c->col[cols[j]], B_NAMES[cols[j]], &t[j], &have[j]))
            return -1;
    }
    /* The inference sheets' RNN rows carry the sparse kernels' section in their precision
     * field: which kernel they time is not certain, so only the training sheets are read. */
    if (strcmp(suite, "train") != 0 && strcmp(suite, "training") != 0) {
        c->s->out_of_scope++;
        return 0;
    }
    if (!prec) {
        c->s->other_precision++;
        return 0;
    }
    const double bwd = have[3] ? t[3] : have[1] && have[2] ? t[1] + t[2] : 0;
    int phases[3], n = 0;
    double time_s[3];
    if (have[0])
        phases[n] = 1, time_s[n++] = t[0];
    if (bwd > 0)
        phases[n] = 2, time_s[n++] = bwd;
    if (n == 0 && have[4]) /* the T4's sheet: the sum alone */
        phases[n] = 3, time_s[n++] = t[4];
    if (n == 0) {
        c->s->no_time++;
        return 0;
    }
    const MbRnnShape shape = {.hidden = (int)H, .batch = (int)N, .steps = (int)T, .cell = (MbRnnCell)k,
                              .gflop = 2.0 * GATES[k] * (double)H * H * N * T / 1e9};
    static const char *const PHASES[] = {"", "fwd", "bwd", "fwd+bwd"};
    for (int j = 0; j < n; j++) {
        OpDesc first[8];
        mb_rnn_step_ops(&shape, phases[j] == 2, first, 8);
        const size_t before = c->rows->n;
        if (push(c, &first[0], prec, time_s[j], 0, 0, 0, 1, fw, "kernel"))
            return -1;
        if (c->rows->n == before) /* another precision than the one asked for */
            continue;
        Row *w = &c->rows->v[c->rows->n - 1];
        w->rnn = shape;
        w->rnn_phases = phases[j];
        snprintf(w->key, sizeof w->key, "rnn_%s:hidden=%ld,batch=%ld,steps=%ld,phase=%s", CELLS[k], H, N, T,
                 PHASES[phases[j]]);
    }
    return 0;
}

static int deepbench_record(Ctx *c)
{
    if (!device_matches(c, field(c, c->col[B_DEV]))) {
        c->s->other_device++;
        return 0;
    }
    char pbuf[160];
    const char *prec = deepbench_precision(trim(field(c, c->col[B_PREC]), pbuf, sizeof pbuf));
    char fw[160];
    char sheet[48], xlsx[64];
    trim(field(c, c->col[B_SHEET]), sheet, sizeof sheet);
    trim(field(c, c->col[B_FILE]), xlsx, sizeof xlsx);
    const char *slash = strrchr(xlsx, '/');
    snprintf(fw, sizeof fw, "DeepBench (cuBLAS/cuDNN), %s '%s'", slash ? slash + 1 : xlsx, sheet);
    if (c->col[B_CELL] >= 0)
        return deepbench_rnn_record(c, prec, fw);
    if (c->col[B_TIME] >= 0) { /* GEMM */
        long M, N, K;
        if (get_int(c, c->col[B_M], "M", 1, DIM_MAX, &M) || get_int(c, c->col[B_N], "N", 1, DIM_MAX, &N) ||
            get_int(c, c->col[B_K], "K", 1, DIM_MAX, &K))
            return -1;
        char at[8], bt[8];
        trim(field(c, c->col[B_AT]), at, sizeof at);
        trim(field(c, c->col[B_BT]), bt, sizeof bt);
        if ((strcmp(at, "N") != 0 && strcmp(at, "T") != 0) || (strcmp(bt, "N") != 0 && strcmp(bt, "T") != 0))
            return fail(c, "fields 'a_trans', 'b_trans' = '%s', '%s': expected N or T", at, bt);
        double t;
        bool have;
        if (get_ms(c, c->col[B_TIME], "time_ms", &t, &have))
            return -1;
        if (!prec) {
            c->s->other_precision++;
            return 0;
        }
        if (!have) {
            c->s->no_time++;
            return 0;
        }
        if (check_elems(c, "an operand", (double)M * K) || check_elems(c, "an operand", (double)K * N) ||
            check_elems(c, "the output", (double)M * N))
            return -1;
        /* cuBLAS is column-major: C (M x N) = op(A) op(B) is, in dlperf's row-major terms,
         * C^T (N x M) = op(B)^T op(A)^T, the same kernel on the same memory */
        OpDesc d = op_gemm(PHASE_FWD, (int)N, (int)M, (int)K, strcmp(bt, "T") == 0, strcmp(at, "T") == 0, 0.0f);
        return push(c, &d, prec, t, 0, 0, 0, 1, fw, "kernel");
    }
    long W, H, C, N, K, R, S, ph, pw, sv, sh;
    if (get_int(c, c->col[B_W], "W", 1, 1 << 16, &W) || get_int(c, c->col[B_H], "H", 1, 1 << 16, &H) ||
        get_int(c, c->col[B_C], "C", 1, DIM_MAX, &C) || get_int(c, c->col[B_NN], "N", 1, DIM_MAX, &N) ||
        get_int(c, c->col[B_KK], "K", 1, DIM_MAX, &K) || get_int(c, c->col[B_R], "R", 1, 4096, &R) ||
        get_int(c, c->col[B_S], "S", 1, 4096, &S) || get_int(c, c->col[B_PH], "pad_h", 0, 4096, &ph) ||
        get_int(c, c->col[B_PW], "pad_w", 0, 4096, &pw) || get_int(c, c->col[B_SV], "stride_v", 1, 4096, &sv) ||
        get_int(c, c->col[B_SH], "stride_h", 1, 4096, &sh))
        return -1;
    OpDesc d;
    if (conv_explicit(c, PHASE_FWD, N, C, H, W, K, R, S, sv, sh, ph, pw, &d))
        return -1;
    /* DeepBench's P and Q are the output's width and height: a check that the fields were
     * read as DeepBench meant them. Some of its sheets give them in the other order, or
     * unrounded (their own arithmetic: 78.5 for an output of 79 rows): either order within
     * one is taken. */
    if (c->col[B_P] >= 0 && !is_empty(field(c, c->col[B_P])) && c->col[B_Q] >= 0 &&
        !is_empty(field(c, c->col[B_Q]))) {
        char pb[32], qb[32], *e1, *e2;
        trim(field(c, c->col[B_P]), pb, sizeof pb);
        trim(field(c, c->col[B_Q]), qb, sizeof qb);
        const double P = strtod(pb, &e1), Q = strtod(qb, &e2);
        if (*e1 || *e2 || !isfinite(P) || !isfinite(Q))
            return fail(c, "fields 'P', 'Q' = '%s', '%s': expected the output's width and height", pb, qb);
        const double ow = d.u.conv.out_w, oh = d.u.conv.out_h;
        const bool as_is = fabs(P - ow) <= 1 && fabs(Q - oh) <= 1, swapped = fabs(P - oh) <= 1 && fabs(Q - ow) <= 1;
        if (!as_is && !swapped)
            return fail(c, "P, Q = %s, %s but W, H, R, S, padding and strides give an output of %d x %d (width x "
                           "height)", pb, qb, d.u.conv.out_w, d.u.conv.out_h);
    }
    static const struct {
        int col;
        OpPhase phase;
        const char *name;
    } PH[] = {{B_FWD, PHASE_FWD, "fwd_ms"}, {B_BWDD, PHASE_BWD_DATA, "bwd_data_ms"},
              {B_BWDF, PHASE_BWD_WEIGHTS, "bwd_filter_ms"}};
    bool any = false;
    for (size_t i = 0; i < sizeof PH / sizeof PH[0]; i++) {
        if (c->col[PH[i].col] < 0)
            continue;
        double t;
        bool have;
        if (get_ms(c, c->col[PH[i].col], PH[i].name, &t, &have))
            return -1;
        if (!have)
            continue;
        any = true;
        if (!prec)
            continue;
        OpDesc p = d;
        p.phase = PH[i].phase;
        if (push(c, &p, prec, t, 0, 0, 0, 1, fw, "kernel"))
            return -1;
    }
    if (!prec)
        c->s->other_precision++;
    else if (!any)
        c->s->no_time++;
    return 0;
}

/* ---- CDE (CDECatapult/ml-performance-prediction raw_data) ---- */

enum { C_BATCH, C_MAT, C_KS, C_CIN, C_COUT, C_STRIDE, C_PAD, C_PREC, C_OPT, C_MED, C_MIN, C_MAX, C_STD, C_DIN,
       C_DOUT, C_ACT, C_BIAS, C_NCOLS };
static const char *const C_NAMES[C_NCOLS] = {
    "batchsize", "matsize", "kernelsize", "channels_in", "channels_out", "strides", "padding", "precision", "optimizer",
    "timeUsed_median", "timeUsed_min", "timeUsed_max", "timeUsed_std", "dim_input", "dim_output", "activation_fct",
    "use_bias"};

static int cde_header(Ctx *c)
{
    for (int j = 0; j < C_NCOLS; j++)
        c->col[j] = csv_column(c->csv, C_NAMES[j]);
    const int need[] = {C_BATCH, C_PREC, C_OPT, C_MED};
    for (size_t j = 0; j < sizeof need / sizeof need[0]; j++)
        if (c->col[need[j]] < 0)
            return fail(c, "no column '%s': a CDE benchmark file has batchsize, precision, optimizer, timeUsed_median "
                           "and the layer's fields", C_NAMES[need[j]]);
    if (c->col[C_MAT] < 0 && c->col[C_DIN] < 0)
        return fail(c, "neither matsize (convolution) nor dim_input (dense): not a CDE benchmark file");
    return 0;
}

static int cde_record(Ctx *c)
{
    long batch, prec, opt;
    if (get_int(c, c->col[C_BATCH], "batchsize", 1, DIM_MAX, &batch) ||
        get_int(c, c->col[C_PREC], "precision", 16, 32, &prec) || get_int(c, c->col[C_OPT], "optimizer", 0, 6, &opt))
        return -1;
    if (prec != 32 && prec != 16)
        return fail(c, "field 'precision' = %ld: expected 16 or 32", prec);
    double t, lo = 0, hi = 0, sd = 0;
    bool have, h2;
    if (get_ms(c, c->col[C_MED], "timeUsed_median", &t, &have))
        return -1;
    if ((c->col[C_MIN] >= 0 && get_ms(c, c->col[C_MIN], "timeUsed_min", &lo, &h2)) ||
        (c->col[C_MAX] >= 0 && get_ms(c, c->col[C_MAX], "timeUsed_max", &hi, &h2)))
        return -1;
    if (c->col[C_STD] >= 0 && !is_empty(field(c, c->col[C_STD]))) {
        char buf[64], *end;
        const char *s = trim(field(c, c->col[C_STD]), buf, sizeof buf);
        sd = strtod(s, &end);
        if (*end != '\0' || !(sd >= 0) || !isfinite(sd))
            sd = 0;
        sd *= 1e-3;
    }
    OpDesc d;
    if (c->col[C_MAT] >= 0) {
        long mat, ks, cin, cout, st, pad;
        if (get_int(c, c->col[C_MAT], "matsize", 1, 1 << 16, &mat) ||
            get_int(c, c->col[C_KS], "kernelsize", 1, 4096, &ks) ||
            get_int(c, c->col[C_CIN], "channels_in", 1, DIM_MAX, &cin) ||
            get_int(c, c->col[C_COUT], "channels_out", 1, DIM_MAX, &cout) ||
            get_int(c, c->col[C_STRIDE], "strides", 1, 4096, &st) || get_int(c, c->col[C_PAD], "padding", 0, 1, &pad))
            return -1;
        if (!pad && ks > mat)
            return fail(c, "a %ld-wide kernel over a %ld-wide input with VALID padding (padding 0) has no output", ks,
                        mat);
        if (check_elems(c, "the input", (double)batch * cin * mat * mat) ||
            check_elems(c, "the output", (double)batch * cout * mat * mat) ||
            check_elems(c, "the unrolled input", (double)cin * ks * ks * mat * mat))
            return -1;
        /* CDE's benchmark: padding 1 is TensorFlow's SAME, 0 VALID */
        d = op_conv2d(PHASE_FWD, (int)batch, (int)cin, (int)mat, (int)mat, (int)cout, (int)ks, (int)ks, (int)st,
                      pad ? PAD_SAME : PAD_VALID, 1);
    } else {
        long din, dout;
        if (get_int(c, c->col[C_DIN], "dim_input", 1, DIM_MAX, &din) ||
            get_int(c, c->col[C_DOUT], "dim_output", 1, DIM_MAX, &dout))
            return -1;
        if (check_elems(c, "the weight", (double)din * dout))
            return -1;
        /* tf.layers.dense: x (batch, in) W (in, out) + b */
        d = op_gemm_bias(PHASE_FWD, (int)batch, (int)dout, (int)din, false, false);
    }
    if (opt != 0) { /* forward, backward and an optimizer's update of the layer: no one op */
        c->s->out_of_scope++;
        return 0;
    }
    if (!have) { /* out of GPU memory in the benchmark (NaN) */
        c->s->no_time++;
        return 0;
    }
    /* the median of 5 repetitions of a 50-iteration mean, TensorFlow 1.x session.run
     * with the layer's bias and activation, its host overhead included */
    return push(c, &d, prec == 32 ? "fp32" : "fp16", t, lo, hi, sd, 5,
                "TensorFlow 1.x session.run (layer with bias and activation)", "framework");
}

/* ---- the import ---- */

static int detect(Ctx *c, ImportFormat *f)
{
    if (csv_column(c->csv, "key") >= 0 && csv_column(c->csv, "time_ms") >= 0)
        *f = IMPORT_DLPERF;
    else if (csv_column(c->csv, "OPName") >= 0 && csv_column(c->csv, "Latency") >= 0)
        *f = IMPORT_NEUSIGHT;
    else if (csv_column(c->csv, "device") >= 0 && csv_column(c->csv, "suite") >= 0)
        *f = IMPORT_DEEPBENCH;
    else if (csv_column(c->csv, "timeUsed_median") >= 0)
        *f = IMPORT_CDE;
    else
        return fail(c, "the header names no format dlperf reads (dlperf, neusight, deepbench, cde; "
                       "docs/import-format.md); give --format");
    return 0;
}

static int read_file(Ctx *c, void (*progress)(const char *, long, void *), void *pctx)
{
    CsvReader csv;
    if (csv_open(&csv, c->file, c->err, c->errlen) != 0)
        return -1;
    c->csv = &csv;
    const char *slash = strrchr(c->file, '/');
    c->base = slash ? slash + 1 : c->file;
    int rc, header_done = 0;
    long rows = 0;
    while ((rc = csv_next(&csv, c->err, c->errlen)) == 1) {
        if (csv.nfields >= 1 && csv.field[0][0] == '#') /* comments */
            continue;
        if (!header_done) {
            for (int j = 0; j < (int)(sizeof c->col / sizeof c->col[0]); j++)
                c->col[j] = -1;
            ImportFormat f = c->o->format;
            if (!c->o->format_given && detect(c, &f) != 0)
                goto fail;
            c->format = f;
            static int (*const HEADER[IMPORT_FORMAT_COUNT])(Ctx *) = {dlperf_header, neusight_header,
                                                                      deepbench_header, cde_header};
            if (HEADER[f](c) != 0)
                goto fail;
            const char *name = import_format_name(f);
            if (!strstr(c->s->formats, name))
                snprintf(c->s->formats + strlen(c->s->formats), sizeof c->s->formats - strlen(c->s->formats),
                         "%s%s", c->s->formats[0] ? "," : "", name);
            header_done = 1;
            continue;
        }
        static int (*const RECORD[IMPORT_FORMAT_COUNT])(Ctx *) = {dlperf_record, neusight_record, deepbench_record,
                                                                  cde_record};
        rows++;
        c->s->rows++;
        if (RECORD[c->format](c) != 0)
            goto fail;
    }
    if (rc < 0)
        goto fail;
    if (!header_done) {
        snprintf(c->err, c->errlen, "%s: empty: no header and no rows", c->file);
        goto fail;
    }
    csv_close(&csv);
    c->csv = NULL;
    if (progress)
        progress(c->file, rows, pctx);
    return 0;
fail:
    csv_close(&csv);
    c->csv = NULL;
    return -1;
}

static int row_cmp(const void *a, const void *b)
{
    const Row *x = a, *y = b;
    int c = strcmp(x->precision, y->precision);
    return c ? c : strcmp(x->key, y->key);
}

static double median3(double *v, int n)
{
    for (int i = 1; i < n; i++) /* insertion sort: a key is measured a handful of times */
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Merges rows of one (precision, key) into the first: the median of their times, the
 * extremes, the repetitions summed, the sources listed. Returns the merged count. */
static size_t merge(Rows *r, long *merged)
{
    if (r->n == 0)
        return 0;
    qsort(r->v, r->n, sizeof *r->v, row_cmp);
    size_t out = 0;
    for (size_t i = 0; i < r->n;) {
        size_t j = i + 1;
        while (j < r->n && row_cmp(&r->v[i], &r->v[j]) == 0)
            j++;
        Row m = r->v[i];
        if (j - i > 1) {
            double *t = malloc((j - i) * sizeof *t);
            int nt = 0;
            for (size_t k = i; k < j; k++) {
                if (t)
                    t[nt++] = r->v[k].time_s;
                if (k > i) {
                    m.min_s = fmin(m.min_s, r->v[k].min_s);
                    m.max_s = fmax(m.max_s, r->v[k].max_s);
                    m.reps += r->v[k].reps;
                    size_t l = strlen(m.source);
                    const char *line = strrchr(r->v[k].source, ':');
                    if (m.nsources < 6 && line && l + strlen(line) < sizeof m.source - 12)
                        snprintf(m.source + l, sizeof m.source - l, ",%s", line + 1);
                    m.nsources++;
                }
            }
            if (t) {
                m.time_s = median3(t, nt);
                free(t);
            }
            if (m.nsources > 6) {
                size_t l = strlen(m.source);
                snprintf(m.source + l, sizeof m.source - l, " (+%d more)", m.nsources - 6);
            }
            *merged += (long)(j - i - 1);
        }
        r->v[out++] = m;
        i = j;
    }
    r->n = out;
    return out;
}

static int write_rows(Db *db, const ImportOptions *o, const char *const *files, int nfiles, Rows *rows,
                      ImportSummary *s, char *err, size_t errlen)
{
    int64_t machine_id;
    if (db_begin(db) != 0)
        goto db_fail;
    if (db_device_machine(db, o->device, o->title, &machine_id) != 0)
        goto rollback;
    for (size_t i = 0; i < rows->n;) {
        size_t j = i;
        while (j < rows->n && strcmp(rows->v[j].precision, rows->v[i].precision) == 0)
            j++;
        CalibrationRow cal = {.machine_id = machine_id, .rounds = 1};
        snprintf(cal.mode, sizeof cal.mode, "import");
        snprintf(cal.device, sizeof cal.device, "%s", o->device);
        snprintf(cal.precision, sizeof cal.precision, "%s", rows->v[i].precision);
        cal.sw.ranks = 1;
        size_t l = (size_t)snprintf(cal.source, sizeof cal.source, "%s:", s->formats);
        for (int f = 0; f < nfiles && l < sizeof cal.source; f++)
            l += (size_t)snprintf(cal.source + l, sizeof cal.source - l, " %s", files[f]);
        if (db_calibration_begin(db, &cal) != 0)
            goto rollback;
        for (size_t k = i; k < j; k++) {
            const Row *r = &rows->v[k];
            const OpCost cost = op_cost(&r->desc);
            MeasurementRow m = {.calibration_id = cal.id, .reps = r->reps, .inner = 1, .median_s = r->time_s,
                                .min_s = r->min_s, .max_s = r->max_s, .mean_s = r->time_s, .stddev_s = r->stddev_s,
                                .ci95_lo_s = r->min_s, .ci95_hi_s = r->max_s, .flops = cost.flops,
                                .bytes = cost.bytes, .validated = true};
            snprintf(m.family, sizeof m.family, "%s", import_format_name(r->format));
            snprintf(m.key, sizeof m.key, "%s", r->key);
            snprintf(m.kind, sizeof m.kind, "%s", op_kind_name(r->desc.kind));
            snprintf(m.phase, sizeof m.phase, "%s", op_phase_name(r->desc.phase));
            snprintf(m.framework, sizeof m.framework, "%s", r->framework);
            snprintf(m.source, sizeof m.source, "%s", r->source);
            snprintf(m.scope, sizeof m.scope, "%s", r->scope);
            if (db_measurement_insert(db, &m) != 0)
                goto rollback;
        }
        if (db_calibration_finish(db, cal.id, "complete") != 0)
            goto rollback;
        for (int p = 0; p < s->calibrations; p++)
            if (strcmp(s->precision[p], cal.precision) == 0)
                s->calibration_id[p] = cal.id;
        i = j;
    }
    if (db_commit(db) != 0)
        goto rollback;
    return 0;
rollback:
    snprintf(err, errlen, "%s (nothing imported)", db_errmsg(db));
    db_rollback(db);
    return -2;
db_fail:
    snprintf(err, errlen, "%s", db_errmsg(db));
    return -2;
}

int import_read(const char *const *files, int nfiles, const ImportOptions *o, ImportedRow **out, size_t *nout,
                ImportSummary *s, void (*progress)(const char *file, long rows, void *ctx), void *pctx, char *err,
                size_t errlen)
{
    memset(s, 0, sizeof *s);
    Rows rows = {0};
    Ctx c = {.o = o, .s = s, .rows = &rows, .err = err, .errlen = errlen};
    for (int f = 0; f < nfiles; f++) {
        c.file = files[f];
        if (read_file(&c, progress, pctx) != 0) {
            free(rows.v);
            return -1;
        }
        s->files++;
    }
    if (rows.n == 0) {
        snprintf(err, errlen,
                 "no row of %s to import: %ld rows read, %ld of other devices, %ld of other precisions, %ld without "
                 "a time, %ld of no single op (is --device the device the files measured?)",
                 o->device, s->rows, s->other_device, s->other_precision, s->no_time, s->out_of_scope);
        free(rows.v);
        return -1;
    }
    *out = rows.v;
    *nout = rows.n;
    return 0;
}

int import_files(Db *db, const char *const *files, int nfiles, const ImportOptions *o, ImportSummary *s,
                 void (*progress)(const char *file, long rows, void *ctx), void *pctx, char *err, size_t errlen)
{
    Rows rows = {0};
    if (import_read(files, nfiles, o, &rows.v, &rows.n, s, progress, pctx, err, errlen) != 0)
        return -1;
    rows.cap = rows.n;
    s->measurements = (long)merge(&rows, &s->merged);
    for (size_t i = 0; i < rows.n;) { /* per precision: one calibration each */
        size_t j = i;
        while (j < rows.n && strcmp(rows.v[j].precision, rows.v[i].precision) == 0)
            j++;
        if (s->calibrations < IMPORT_PRECISIONS) {
            snprintf(s->precision[s->calibrations], sizeof s->precision[0], "%s", rows.v[i].precision);
            s->per_precision[s->calibrations++] = (long)(j - i);
        }
        i = j;
    }
    int rc = o->dry_run ? 0 : write_rows(db, o, files, nfiles, &rows, s, err, errlen);
    free(rows.v);
    return rc;
}
