/* microbench/import.h — measurements made elsewhere, stored as calibrations of the device
 * they were made on (`dlperf import`).
 *
 * A GPU dlperf cannot run is priced from what was measured on it: a GPU timed with
 * tools/gpu_calibrate.py (dlperf's own CSV, docs/import-format.md) or per-op results
 * published by others. Every row becomes a measurement under the op key the predictor
 * prices (ops/op_key), with its precision, the framework and libraries that timed it, what
 * the time covers (the device's kernels, or a framework call with its host overhead) and
 * where it came from (FILE:LINE). The formats:
 *   dlperf     key,precision,time_ms[,min_ms,max_ms,stddev_ms,reps,framework,scope,device]
 *   neusight   NeuSight's per-operator files (sitar-lab/NeuSight dataset/): bmm, linear, conv,
 *              element-wise (add, mul, pow, div, addu, mulu, powu, divu, relu, gelu, tanh), ln,
 *              softmax; FP32 with TF32 off, PyTorch eager, CUDA events
 *   deepbench  DeepBench's training and inference results (baidu-research/DeepBench) as tidy
 *              CSV, one file per kernel family: GEMM (M,N,K,a_trans,b_trans,time_ms) and
 *              convolution (three phases per row); cuBLAS/cuDNN kernel times. Its RNN
 *              file (cell,hidden,N,T, forward and backward times) times whole recurrent
 *              layers, T steps of several kernels, which no op key holds: those rows are
 *              read for `dlperf validate --device` (ImportOptions.layers) and refused by
 *              the import
 *   cde        the TensorFlow layer benchmarks of Justus et al. 2018
 *              (CDECatapult/ml-performance-prediction): convolution and dense layers timed
 *              as session.run calls (framework scope); forward rows only, since a training
 *              row times a layer's forward, backward and update together, which is no op
 * All rows of all files are read and checked before anything is written; a bad row (a
 * field that does not parse, a shape no descriptor takes) refuses the whole import with
 * FILE:LINE, the field and what would be valid. Rows the predictor has no use for (another
 * device's, a precision dlperf does not price such as int8, a time left empty) are counted
 * and skipped, not refused. The rows of one precision become one calibration of the device,
 * all written in one transaction.
 */
#ifndef DLPERF_IMPORT_H
#define DLPERF_IMPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "db/db.h"
#include "microbench/mb.h"
#include "ops/ops.h"

typedef enum { IMPORT_DLPERF, IMPORT_NEUSIGHT, IMPORT_DEEPBENCH, IMPORT_CDE, IMPORT_FORMAT_COUNT } ImportFormat;
const char *import_format_name(ImportFormat f); /* "dlperf", "neusight", ... */
/* 0, or -1 if s names no format. */
int import_format_parse(const char *s, ImportFormat *out);

enum { IMPORT_ALIASES_MAX = 8, IMPORT_PRECISIONS = 5 };

typedef struct {
    const char *device;         /* the spec-sheet name the calibrations are stored under */
    const char *title;          /* the device's title (its machine row) */
    /* the names the files' device columns may give it (the sheet's name and aliases,
     * compared case-insensitively); rows naming another device are skipped */
    const char *aliases[IMPORT_ALIASES_MAX + 1];
    int naliases;
    ImportFormat format;
    bool format_given;          /* else detected from each file's header */
    const char *precision;      /* import only this precision ("fp32", ...); NULL: all */
    bool dry_run;               /* read and check everything, write nothing */
    bool layers;                /* read rows that time a whole layer (DeepBench's RNN) too:
                                 * for comparing predictions, never stored */
} ImportOptions;

typedef struct {
    int files;
    long rows;                  /* data rows read */
    long imported;              /* rows stored (duplicates of one key merged: measurements) */
    long measurements;
    long merged;                /* rows that repeated a key already read (merged into it) */
    long other_device;          /* skipped: another device's rows */
    long other_precision;       /* skipped: a precision dlperf does not price, or not asked for */
    long no_time;               /* skipped: no time given (the publication left it empty) */
    long out_of_scope;          /* skipped: rows that time no single op (CDE training rows) */
    int calibrations;
    int64_t calibration_id[IMPORT_PRECISIONS];
    char precision[IMPORT_PRECISIONS][8];
    long per_precision[IMPORT_PRECISIONS];
    char formats[64];           /* the formats read, comma-separated */
} ImportSummary;

/* One row as read (before rows of one key are merged). */
typedef struct {
    OpDesc desc;
    char key[OP_KEY_MAX];
    char precision[8];
    double time_s, min_s, max_s, stddev_s;
    int reps;
    char framework[96];
    char scope[12];
    char source[160];    /* FILE:LINE (merged rows: FILE:LINE,LINE,...) */
    int nsources;
    ImportFormat format;
    /* a row that times a whole recurrent layer: rnn.steps time steps of
     * mb_rnn_step_ops(&rnn), forward (rnn_phases bit 1), backward (bit 2) or both; desc is
     * its first step's first op. 0: a row of one op. */
    int rnn_phases;
    MbRnnShape rnn;
} ImportedRow;

/* Reads and checks files[0..nfiles) as import_files does, and gives their rows (malloc'd,
 * the caller frees; not merged) instead of storing them: what `dlperf validate --device
 * --against` compares predictions with. 0, or -1 with err. */
int import_read(const char *const *files, int nfiles, const ImportOptions *o, ImportedRow **rows, size_t *nrows,
                ImportSummary *s, void (*progress)(const char *file, long rows, void *ctx), void *ctx, char *err,
                size_t errlen);

/* Reads files[0..nfiles) and stores their rows as calibrations of o->device. Returns 0; -1
 * for bad input with err (one line: FILE:LINE, the field, what would be valid); -2 when the
 * database failed (err: its message); nothing written in either case. progress (may be NULL) is called after each file. */
int import_files(Db *db, const char *const *files, int nfiles, const ImportOptions *o, ImportSummary *s,
                 void (*progress)(const char *file, long rows, void *ctx), void *ctx, char *err, size_t errlen);

#endif
