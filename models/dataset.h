/* models/dataset.h — real data sets in memory: IDX (MNIST, Fashion-MNIST) and CANDLE CSV
 * files loaded into one Dataset, the batch gather that fills the input arena, seeded
 * shuffles and the validation split.
 *
 * A Dataset holds n samples of x (float32 or int32 token ids, per-sample `shape`) and their
 * targets: none (autoencoder: the target is x), an int32 class label, or a float vector.
 * Everything is row-major, sample after sample, so sample i of x starts at
 * i * shape_count(shape) elements and a batch is a gather of whole rows.
 *
 * Errors are one line in `err` naming the file and what was wrong ("path: line 17,
 * column 4: 'abc' is not a number"); line and column numbers count from 1 like an
 * editor's. Loaders return 0, or -1 with *ds left empty (nothing to free).
 */
#ifndef DLPERF_DATASET_H
#define DLPERF_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/model.h"

typedef enum { DS_F32, DS_I32 } DsType;

typedef enum {
    TARGET_INPUT,  /* autoencoder: the target is x itself (t is NULL) */
    TARGET_CLASS,  /* one int32 label per sample, 0 <= label < classes */
    TARGET_VECTOR  /* t_count floats per sample */
} TargetKind;

typedef struct {
    int n;                  /* samples */
    Shape shape;            /* per-sample shape of x */
    DsType x_type;          /* DS_F32 or DS_I32 (token ids) */
    void *x;                /* (n, shape_count(shape)) values */
    TargetKind target;
    int t_count;            /* target values per sample: 1 for a class, shape_count(shape)
                               for TARGET_INPUT (the target is x), else the vector length */
    void *t;                /* (n, t_count) int32 labels or floats; NULL for TARGET_INPUT */
    int classes;            /* TARGET_CLASS: labels are in [0, classes) */
    char source[256];       /* where it came from, for reports */
    bool time_major;        /* a sequence's steps: dataset_gather writes the batch time-major,
                               step t of sample b at t * batch + b, as the plan lays out a
                               sequence of token ids and its per-step labels */
    bool view;              /* x and t point into another Dataset's buffers (dataset_split):
                               dataset_free does not free them, and that Dataset must
                               outlive this one */
} Dataset;

/* Loads an IDX image file (magic 0x00000803: unsigned bytes, dimensions n, rows, cols) and
 * its IDX label file (0x00000801: unsigned bytes, dimension n). Either may be gzip
 * compressed or plain (zlib reads both). Pixels become floats in [0, 1] (byte / 255),
 * shape (1, rows, cols); labels int32, classes = the largest label + 1. Refuses a file
 * that is not IDX, the wrong element type or dimension count, a label count that is not
 * the image count, truncated data and bytes after the data. */
int dataset_load_idx(const char *images_path, const char *labels_path, Dataset *ds, char *err,
                     size_t errlen);

/* Fashion-MNIST (classes 10, 28x28) from `dir`, or when dir is NULL from
 * $DLPERF_FASHION_MNIST or else /usr/share/datasets/fashion-mnist (Debian's
 * dataset-fashion-mnist). train: train-*-ubyte (60000 samples), else t10k-*-ubyte (10000).
 * Each file is looked for as NAME.gz, then as NAME (gunzipped). */
int dataset_load_fashion_mnist(const char *dir, bool train, Dataset *ds, char *err, size_t errlen);

/* Real text as bytes for a byte-level language model: `path` is a file, or a directory whose
 * regular files (not links, not subdirectories) are read in name order and joined; when
 * path is NULL, Debian's /usr/share/common-licenses (base-files: on every Debian system).
 * The bytes are cut into windows of steps + 1: x the first `steps` bytes as int32 ids (shape
 * (steps, 1)), the labels the `steps` bytes after each (t_count = steps, classes 256),
 * time-major. The last test_share of the windows (at least one) are the test set, the rest
 * the training set; both are refused when the text holds fewer than two windows. */
int dataset_load_text_bytes(const char *path, int steps, double test_share, Dataset *train, Dataset *test,
                            char *err, size_t errlen);
#define TEXT_BYTES_DEFAULT_PATH "/usr/share/common-licenses"

/* Loads a CANDLE-style CSV file of numbers, streamed line by line (the P1B1 files are
 * about 700 MB; only the parsed floats are kept). The first row is a header unless all of
 * its kept cells (those from column skip_cols on) are numbers, as in P3B1's feature files.
 * The first skip_cols columns are dropped (P1B1's case_id). label_col (a 0-based column
 * of the file, >= skip_cols) is an integer class label taken out of x (TARGET_CLASS,
 * classes = the largest label + 1); label_col -1 means no label (TARGET_INPUT). x is
 * float32 with shape (features). Cells may be double-quoted; blank lines are skipped;
 * empty cells, non-numbers, NaN/inf and rows with another column count are refused. */
int dataset_load_csv(const char *path, int skip_cols, int label_col, Dataset *ds, char *err,
                     size_t errlen);

/* Frees what the loaders allocated (nothing for a view) and empties *ds. Safe on an empty
 * (zeroed) Dataset and twice in a row. */
void dataset_free(Dataset *ds);

/* Copies samples idx[0..b) into caller buffers: x_out (b, shape_count(shape)) of x_type,
 * t_out (b, t_count) int32 or float; t_out is not touched (may be NULL) for TARGET_INPUT.
 * An index outside [0, n) is a programmer error (abort with file:line). */
void dataset_gather(const Dataset *ds, const int *idx, int b, void *x_out, void *t_out);

/* perm = a random permutation of 0..n-1: gsl_ran_shuffle driven by MT19937 seeded with
 * `seed`, so a seed gives the same order on every machine. As gsl_rng_set does for
 * MT19937, seed 0 means GSL's default seed 4357. */
void dataset_permutation(int *perm, int n, uint64_t seed);

/* Splits into the first first_n samples (head) and the rest (tail), as CANDLE takes its
 * validation rows from the top. Both are views into ds (no copy: a 700 MB data set is not
 * doubled): ds must outlive them, dataset_free on them frees nothing, and ds is freed
 * once, itself. 0 <= first_n <= n; either part may be empty. */
int dataset_split(const Dataset *ds, int first_n, Dataset *head, Dataset *tail, char *err,
                  size_t errlen);

#endif
