/* models/dataset.c — real data sets: IDX files (read through zlib, gzip or plain), CANDLE
 * CSV files (streamed, parsed with strtod), batch gathers, GSL-seeded shuffles and the
 * validation split. The API and the error conventions are in models/dataset.h.
 */
#include "models/dataset.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <zlib.h>

/* Always-on assert (STYLE habit 5) for programmer errors: an index outside the data set
 * must abort with file:line, never become a silent out-of-bounds copy, NDEBUG or not. */
#define DS_ASSERT(cond) ((cond) ? (void)0 : ds_assert_fail(#cond, __FILE__, __LINE__))

static _Noreturn void ds_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

/* Elements per sample of a shape. models/model.h declares shape_count, but it lives with
 * the plan code; this file stays independent of it (it only needs the arithmetic). */
static size_t ds_shape_count(const Shape *s)
{
    size_t c = 1;
    for (int i = 0; i < s->rank; i++)
        c *= (size_t)s->d[i];
    return c;
}

void dataset_free(Dataset *ds)
{
    if (!ds)
        return;
    if (!ds->view) {
        free(ds->x);
        free(ds->t);
    }
    memset(ds, 0, sizeof *ds);
}

/* ---- IDX ---- */

enum { IDX_UBYTE = 0x08, IDX_CHUNK = 1 << 16 };

/* Reads up to len bytes (gzread takes an unsigned count, hence the loop). Returns the
 * bytes read, or -1 with err set when zlib reports an error (corrupt gzip data). */
static long long idx_read(gzFile f, const char *path, void *buf, size_t len, char *err,
                          size_t errlen)
{
    size_t done = 0;
    while (done < len) {
        size_t want = len - done > (1u << 30) ? (1u << 30) : len - done;
        int got = gzread(f, (char *)buf + done, (unsigned)want);
        if (got < 0) {
            int zerr;
            const char *msg = gzerror(f, &zerr);
            if (zerr == Z_ERRNO)
                snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
            else
                snprintf(err, errlen, "%s: corrupt gzip data: %s", path, msg);
            return -1;
        }
        if (got == 0)
            break;
        done += (size_t)got;
    }
    return (long long)done;
}

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Opens an IDX file and reads its header: magic 00 00 TYPE NDIMS, then NDIMS big-endian
 * u32 sizes. Checks that it is IDX, of unsigned bytes, with `ndims` dimensions, each in
 * [1, INT_MAX]. `what` names the expected content for messages ("images", "labels"). */
static int idx_open(const char *path, int ndims, const char *what, gzFile *out, uint32_t *dims,
                    char *err, size_t errlen)
{
    int rc = -1;
    unsigned char head[4 + 4 * 3];
    *out = NULL;
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, errno ? strerror(errno) : "out of memory");
        goto cleanup;
    }
    gzbuffer(f, 1 << 17); /* fewer, larger reads of the 26 MB training images */
    long long got = idx_read(f, path, head, 4, err, errlen);
    if (got < 0)
        goto cleanup;
    if (got < 4) {
        snprintf(err, errlen, "%s: not an IDX file (%lld bytes; IDX starts with a 4-byte magic number)",
                 path, got);
        goto cleanup;
    }
    if (head[0] != 0 || head[1] != 0) {
        snprintf(err, errlen, "%s: not an IDX file (magic 0x%08x; IDX magic numbers start with two zero bytes)",
                 path, (unsigned)be32(head));
        goto cleanup;
    }
    if (head[2] != IDX_UBYTE) {
        snprintf(err, errlen, "%s: IDX element type 0x%02x; %s must be unsigned bytes (0x08, magic 0x%08x)",
                 path, head[2], what, 0x800u | (unsigned)ndims);
        goto cleanup;
    }
    if (head[3] != ndims) {
        snprintf(err, errlen, "%s: IDX file with %d dimension(s); %s need %d (magic 0x%08x)", path, head[3],
                 what, ndims, 0x800u | (unsigned)ndims);
        goto cleanup;
    }
    got = idx_read(f, path, head + 4, 4 * (size_t)ndims, err, errlen);
    if (got < 0)
        goto cleanup;
    if (got < 4 * ndims) {
        snprintf(err, errlen, "%s: truncated IDX header (%lld of %d bytes)", path, got + 4, 4 + 4 * ndims);
        goto cleanup;
    }
    for (int i = 0; i < ndims; i++) {
        dims[i] = be32(head + 4 + 4 * i);
        if (dims[i] < 1 || dims[i] > INT_MAX) {
            snprintf(err, errlen, "%s: IDX dimension %d is %u; need 1..%d", path, i + 1, (unsigned)dims[i],
                     INT_MAX);
            goto cleanup;
        }
    }
    *out = f;
    f = NULL;
    rc = 0;
cleanup:
    if (f)
        gzclose(f);
    return rc;
}

/* After the last expected byte: no more data allowed. Reading on also makes zlib check
 * the gzip trailer (CRC-32 and length), so a corrupted .gz is reported here. */
static int idx_expect_end(gzFile f, const char *path, size_t data_bytes, char *err, size_t errlen)
{
    unsigned char extra[256];
    long long got = idx_read(f, path, extra, sizeof extra, err, errlen);
    if (got < 0)
        return -1;
    if (got > 0) {
        snprintf(err, errlen, "%s: data continues after the %zu bytes the IDX header announces", path,
                 data_bytes);
        return -1;
    }
    return 0;
}

int dataset_load_idx(const char *images_path, const char *labels_path, Dataset *ds, char *err,
                     size_t errlen)
{
    int rc = -1;
    gzFile fi = NULL, fl = NULL;
    uint32_t idims[3], ldims[1];
    float *x = NULL;
    int32_t *t = NULL;
    unsigned char *buf = NULL;
    memset(ds, 0, sizeof *ds);

    if (idx_open(images_path, 3, "images", &fi, idims, err, errlen) != 0 ||
        idx_open(labels_path, 1, "labels", &fl, ldims, err, errlen) != 0)
        goto cleanup;
    if (ldims[0] != idims[0]) {
        snprintf(err, errlen, "%s: %u labels, but %s holds %u images", labels_path, (unsigned)ldims[0],
                 images_path, (unsigned)idims[0]);
        goto cleanup;
    }
    size_t n = idims[0], per = (size_t)idims[1] * idims[2];
    if (per > (size_t)INT_MAX || n > SIZE_MAX / sizeof(float) / per) {
        snprintf(err, errlen, "%s: %zu images of %ux%u pixels do not fit in memory arithmetic", images_path,
                 n, (unsigned)idims[1], (unsigned)idims[2]);
        goto cleanup;
    }
    size_t total = n * per;
    x = malloc(total * sizeof *x);
    t = malloc(n * sizeof *t);
    buf = malloc(IDX_CHUNK);
    if (!x || !t || !buf) {
        snprintf(err, errlen, "%s: cannot allocate %.1f MB for %zu images", images_path,
                 (double)(total * sizeof *x) / 1e6, n);
        goto cleanup;
    }

    for (size_t done = 0; done < total;) {
        size_t want = total - done < IDX_CHUNK ? total - done : IDX_CHUNK;
        long long got = idx_read(fi, images_path, buf, want, err, errlen);
        if (got < 0)
            goto cleanup;
        /* Keras' reference scaling: x.astype('float32') / 255, a float32 division. */
        for (long long i = 0; i < got; i++)
            x[done + (size_t)i] = (float)buf[i] / 255.0f;
        done += (size_t)got;
        if ((size_t)got < want) {
            snprintf(err, errlen, "%s: truncated: %zu of %zu pixel bytes (%zu images of %ux%u) after the header",
                     images_path, done, total, n, (unsigned)idims[1], (unsigned)idims[2]);
            goto cleanup;
        }
    }
    if (idx_expect_end(fi, images_path, total, err, errlen) != 0)
        goto cleanup;

    int32_t max_label = 0;
    for (size_t done = 0; done < n;) {
        size_t want = n - done < IDX_CHUNK ? n - done : IDX_CHUNK;
        long long got = idx_read(fl, labels_path, buf, want, err, errlen);
        if (got < 0)
            goto cleanup;
        /* Unsigned-byte labels (element type checked above) are always < 256. */
        for (long long i = 0; i < got; i++) {
            t[done + (size_t)i] = buf[i];
            if (buf[i] > max_label)
                max_label = buf[i];
        }
        done += (size_t)got;
        if ((size_t)got < want) {
            snprintf(err, errlen, "%s: truncated: %zu of %zu labels after the header", labels_path, done, n);
            goto cleanup;
        }
    }
    if (idx_expect_end(fl, labels_path, n, err, errlen) != 0)
        goto cleanup;

    ds->n = (int)n;
    ds->shape = (Shape){.rank = 3, .d = {1, (int)idims[1], (int)idims[2]}};
    ds->x_type = DS_F32;
    ds->x = x;
    ds->target = TARGET_CLASS;
    ds->t_count = 1;
    ds->t = t;
    ds->classes = max_label + 1;
    snprintf(ds->source, sizeof ds->source, "%s", images_path);
    x = NULL;
    t = NULL;
    rc = 0;
cleanup:
    if (fi)
        gzclose(fi);
    if (fl)
        gzclose(fl);
    free(x);
    free(t);
    free(buf);
    return rc;
}

/* ---- Fashion-MNIST ---- */

static const char FASHION_DEFAULT_DIR[] = "/usr/share/datasets/fashion-mnist";

/* dir/NAME.gz if it exists, else dir/NAME if that exists; -1 naming the .gz otherwise. */
static int fashion_file(const char *dir, const char *name, char *out, size_t outlen, char *err,
                        size_t errlen)
{
    struct stat st;
    int len = snprintf(out, outlen, "%s/%s.gz", dir, name);
    if (len < 0 || (size_t)len >= outlen) {
        snprintf(err, errlen, "Fashion-MNIST directory path too long (%zu bytes): %s", strlen(dir), dir);
        return -1;
    }
    if (stat(out, &st) == 0)
        return 0;
    out[len - 3] = '\0'; /* without ".gz" */
    if (stat(out, &st) == 0)
        return 0;
    snprintf(err, errlen,
             "Fashion-MNIST: %s/%s.gz not found; `apt-get install dataset-fashion-mnist` provides it, "
             "or give --data-dir DIR (or set DLPERF_FASHION_MNIST) for a directory that holds it",
             dir, name);
    return -1;
}

int dataset_load_fashion_mnist(const char *dir, bool train, Dataset *ds, char *err, size_t errlen)
{
    char images[4096], labels[4096];
    memset(ds, 0, sizeof *ds);
    if (!dir || !*dir) {
        dir = getenv("DLPERF_FASHION_MNIST");
        if (!dir || !*dir)
            dir = FASHION_DEFAULT_DIR;
    }
    const char *split = train ? "train" : "t10k";
    char name[64];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", split);
    if (fashion_file(dir, name, images, sizeof images, err, errlen) != 0)
        return -1;
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", split);
    if (fashion_file(dir, name, labels, sizeof labels, err, errlen) != 0)
        return -1;
    if (dataset_load_idx(images, labels, ds, err, errlen) != 0)
        return -1;
    if (ds->shape.d[1] != 28 || ds->shape.d[2] != 28 || ds->classes > 10) {
        snprintf(err, errlen, "%s: %dx%d images with labels up to %d; Fashion-MNIST is 28x28 with labels 0..9",
                 images, ds->shape.d[1], ds->shape.d[2], ds->classes - 1);
        dataset_free(ds);
        return -1;
    }
    ds->classes = 10; /* a subset file without some label still has ten classes */
    snprintf(ds->source, sizeof ds->source, "fashion-mnist %s (%.200s)", split, dir);
    return 0;
}

/* ---- CSV ---- */

/* Splits the next cell off *cur in place and returns it NUL-terminated; *cur becomes NULL
 * after the last cell of the line. A double-quoted cell may hold commas and "" for a
 * quote (RFC 4180). Returns NULL for a malformed quoted cell. */
static char *csv_cell(char **cur)
{
    char *s = *cur;
    if (*s != '"') {
        char *comma = strchr(s, ',');
        if (comma) {
            *comma = '\0';
            *cur = comma + 1;
        } else {
            *cur = NULL;
        }
        return s;
    }
    char *r = s + 1, *w = s;
    for (;;) {
        if (*r == '\0')
            return NULL; /* unterminated quote */
        if (*r == '"') {
            if (r[1] == '"') {
                *w++ = '"';
                r += 2;
                continue;
            }
            r++;
            break;
        }
        *w++ = *r++;
    }
    *w = '\0';
    if (*r == ',')
        *cur = r + 1;
    else if (*r == '\0')
        *cur = NULL;
    else
        return NULL; /* text after the closing quote */
    return s;
}

typedef enum { CELL_OK, CELL_EMPTY, CELL_NOT_NUMBER, CELL_NOT_FINITE, CELL_RANGE } CellStatus;

/* strtod over the whole cell (surrounding blanks allowed), as float32. */
static CellStatus csv_number(const char *s, double *out)
{
    char *end;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '\0')
        return CELL_EMPTY;
    double v = strtod(s, &end);
    if (end == s)
        return CELL_NOT_NUMBER;
    while (*end == ' ' || *end == '\t')
        end++;
    if (*end != '\0')
        return CELL_NOT_NUMBER;
    if (!isfinite(v))
        return CELL_NOT_FINITE;
    if (fabs(v) > 3.4028234663852886e38) /* FLT_MAX: the value would become inf as float32 */
        return CELL_RANGE;
    *out = v;
    return CELL_OK;
}

static const char *cell_status_text(CellStatus s)
{
    switch (s) {
    case CELL_EMPTY: return "is empty; need a number";
    case CELL_NOT_NUMBER: return "is not a number";
    case CELL_NOT_FINITE: return "is not a finite number";
    case CELL_RANGE: return "is out of float32 range";
    case CELL_OK: break;
    }
    return "is fine";
}

/* Strips the line end ("\n" or "\r\n") in place; returns the remaining length. */
static size_t csv_chomp(char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = '\0';
    return len;
}

/* Cells in a line, quotes respected (destroys the line). -1 if a quoted cell is malformed. */
static int csv_count_cells(char *line)
{
    int c = 0;
    for (char *cur = line; cur;) {
        if (!csv_cell(&cur))
            return -1;
        c++;
    }
    return c;
}

/* Is every kept cell (column >= skip_cols) of this line a number? (Header detection;
 * destroys the line.) */
static bool csv_all_numeric(char *line, int skip_cols)
{
    int col = 0;
    for (char *cur = line; cur; col++) {
        char *cell = csv_cell(&cur);
        double v;
        if (!cell)
            return false;
        if (col >= skip_cols && csv_number(cell, &v) != CELL_OK)
            return false;
    }
    return true;
}

/* Grows the row storage (geometrically: appending is amortised O(1), and glibc's realloc
 * of a large block moves pages with mremap instead of copying). */
static int csv_reserve(float **x, int32_t **t, bool labels, size_t *cap, size_t rows, size_t features,
                       const char *path, char *err, size_t errlen)
{
    if (rows < *cap)
        return 0;
    size_t want = *cap ? *cap + *cap / 2 : 64;
    if (want > (size_t)INT_MAX)
        want = (size_t)INT_MAX;
    if (rows >= want || want > SIZE_MAX / sizeof(float) / features) {
        snprintf(err, errlen, "%s: more than %zu rows of %zu values do not fit in memory arithmetic", path, rows,
                 features);
        return -1;
    }
    float *nx = realloc(*x, want * features * sizeof *nx);
    if (!nx) {
        snprintf(err, errlen, "%s: cannot allocate %.1f MB for %zu rows of %zu values", path,
                 (double)(want * features * sizeof *nx) / 1e6, want, features);
        return -1;
    }
    *x = nx;
    if (labels) {
        int32_t *nt = realloc(*t, want * sizeof *nt);
        if (!nt) {
            snprintf(err, errlen, "%s: cannot allocate labels for %zu rows", path, want);
            return -1;
        }
        *t = nt;
    }
    *cap = want;
    return 0;
}

int dataset_load_csv(const char *path, int skip_cols, int label_col, Dataset *ds, char *err,
                     size_t errlen)
{
    int rc = -1;
    FILE *f = NULL;
    char *line = NULL, *copy = NULL;
    size_t line_cap = 0, copy_cap = 0;
    float *x = NULL;
    int32_t *t = NULL;
    size_t rows = 0, cap = 0, features = 0;
    int ncols = 0, max_label = -1;
    long lineno = 0;
    bool labels = label_col != -1, header = false;
    memset(ds, 0, sizeof *ds);

    if (skip_cols < 0 || label_col < -1) {
        snprintf(err, errlen, "%s: skip_cols %d, label_col %d; need skip_cols >= 0 and label_col -1 (none) or a "
                 "column >= skip_cols", path, skip_cols, label_col);
        goto cleanup;
    }
    f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        goto cleanup;
    }

    ssize_t len;
    while ((len = getline(&line, &line_cap, f)) >= 0) {
        lineno++;
        if (csv_chomp(line, (size_t)len) == 0)
            continue; /* blank line (pandas skips them too) */

        if (ncols == 0) { /* the first line: column count, header or data */
            if ((size_t)len + 1 > copy_cap) {
                char *nc = realloc(copy, (size_t)len + 1);
                if (!nc) {
                    snprintf(err, errlen, "%s: line %ld: cannot allocate %zd bytes", path, lineno, len + 1);
                    goto cleanup;
                }
                copy = nc;
                copy_cap = (size_t)len + 1;
            }
            strcpy(copy, line);
            ncols = csv_count_cells(copy);
            if (ncols < 0) {
                snprintf(err, errlen, "%s: line %ld: malformed quoted cell", path, lineno);
                goto cleanup;
            }
            int kept = ncols - skip_cols - (labels ? 1 : 0);
            if (labels && (label_col < skip_cols || label_col >= ncols)) {
                snprintf(err, errlen, "%s: label column %d is not one of the kept columns %d..%d (0-based; the "
                         "file has %d, the first %d skipped)", path, label_col, skip_cols, ncols - 1, ncols,
                         skip_cols);
                goto cleanup;
            }
            if (kept < 1) {
                snprintf(err, errlen, "%s: %d column(s); skipping %d%s leaves no feature column", path, ncols,
                         skip_cols, labels ? " and taking a label" : "");
                goto cleanup;
            }
            features = (size_t)kept;
            strcpy(copy, line);
            header = !csv_all_numeric(copy, skip_cols);
            if (header)
                continue;
        }

        if (csv_reserve(&x, &t, labels, &cap, rows, features, path, err, errlen) != 0)
            goto cleanup;
        float *xr = x + rows * features;
        int col = 0;
        size_t feat = 0;
        for (char *cur = line; cur; col++) {
            char *cell = csv_cell(&cur);
            if (!cell) {
                snprintf(err, errlen, "%s: line %ld, column %d: malformed quoted cell", path, lineno, col + 1);
                goto cleanup;
            }
            if (col >= ncols) {
                int have = col + 1;
                while (cur && csv_cell(&cur))
                    have++;
                snprintf(err, errlen, "%s: line %ld: %d columns, %s has %d", path, lineno, have,
                         header ? "the header" : "the first row", ncols);
                goto cleanup;
            }
            if (col < skip_cols)
                continue;
            double v;
            CellStatus st = csv_number(cell, &v);
            if (st != CELL_OK) {
                snprintf(err, errlen, "%s: line %ld, column %d: '%.40s' %s", path, lineno, col + 1, cell,
                         cell_status_text(st));
                goto cleanup;
            }
            if (col == label_col) {
                if (v < 0 || v != floor(v) || v >= (double)INT_MAX) {
                    snprintf(err, errlen, "%s: line %ld, column %d: label '%.40s' is not a class number (need an "
                             "integer >= 0)", path, lineno, col + 1, cell);
                    goto cleanup;
                }
                t[rows] = (int32_t)v;
                if (t[rows] > max_label)
                    max_label = t[rows];
            } else {
                xr[feat++] = (float)v;
            }
        }
        if (col < ncols) {
            snprintf(err, errlen, "%s: line %ld: %d columns, %s has %d", path, lineno, col,
                     header ? "the header" : "the first row", ncols);
            goto cleanup;
        }
        rows++;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error after line %ld: %s", path, lineno, strerror(errno));
        goto cleanup;
    }
    if (rows == 0) {
        snprintf(err, errlen, "%s: no data rows%s", path, header ? " after the header" : " (empty file)");
        goto cleanup;
    }
    /* Give back the growth slack; a failed shrink keeps the larger block, which is fine. */
    float *nx = realloc(x, rows * features * sizeof *x);
    if (nx)
        x = nx;

    ds->n = (int)rows;
    ds->shape = (Shape){.rank = 1, .d = {(int)features}};
    ds->x_type = DS_F32;
    ds->x = x;
    if (labels) {
        int32_t *nt = realloc(t, rows * sizeof *t);
        if (nt)
            t = nt;
        ds->target = TARGET_CLASS;
        ds->t_count = 1;
        ds->t = t;
        ds->classes = max_label + 1;
    } else {
        ds->target = TARGET_INPUT;
        ds->t_count = (int)features;
    }
    snprintf(ds->source, sizeof ds->source, "%s", path);
    x = NULL;
    t = NULL;
    rc = 0;
cleanup:
    if (f)
        fclose(f);
    free(line);
    free(copy);
    free(x);
    free(t);
    return rc;
}

/* ---- batches, shuffles, splits ---- */

void dataset_gather(const Dataset *ds, const int *idx, int b, void *x_out, void *t_out)
{
    /* Both x types and both target types are 4-byte values. */
    size_t x_bytes = ds_shape_count(&ds->shape) * 4;
    size_t t_bytes = ds->target == TARGET_INPUT ? 0 : (size_t)ds->t_count * 4;
    DS_ASSERT(b >= 0 && (b == 0 || (idx && x_out)));
    DS_ASSERT(t_bytes == 0 || b == 0 || (t_out && ds->t));
    for (int i = 0; i < b; i++) {
        DS_ASSERT(idx[i] >= 0 && idx[i] < ds->n);
        size_t s = (size_t)idx[i];
        if (ds->time_major) { /* step t of sample i at t * b + i, for x and the labels */
            const uint32_t *x = (const uint32_t *)((const char *)ds->x + s * x_bytes);
            const uint32_t *t = t_bytes ? (const uint32_t *)((const char *)ds->t + s * t_bytes) : NULL;
            for (size_t k = 0; k < x_bytes / 4; k++)
                ((uint32_t *)x_out)[k * (size_t)b + (size_t)i] = x[k];
            for (size_t k = 0; t && k < t_bytes / 4; k++)
                ((uint32_t *)t_out)[k * (size_t)b + (size_t)i] = t[k];
            continue;
        }
        memcpy((char *)x_out + (size_t)i * x_bytes, (const char *)ds->x + s * x_bytes, x_bytes);
        if (t_bytes)
            memcpy((char *)t_out + (size_t)i * t_bytes, (const char *)ds->t + s * t_bytes, t_bytes);
    }
}

/* ---- text as bytes ---- */

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Appends the file's bytes to *buf (*len used, *cap allocated). 0, or -1 with err. */
static int append_file(const char *path, unsigned char **buf, size_t *len, size_t *cap, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    for (;;) {
        if (*cap - *len < 65536) {
            size_t ncap = *cap ? 2 * *cap : 1 << 20;
            unsigned char *nb = realloc(*buf, ncap);
            if (!nb) {
                fclose(f);
                snprintf(err, errlen, "%s: out of memory reading it", path);
                return -1;
            }
            *buf = nb, *cap = ncap;
        }
        size_t got = fread(*buf + *len, 1, *cap - *len, f);
        *len += got;
        if (got == 0)
            break;
    }
    const int bad = ferror(f);
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "%s: read error", path);
        return -1;
    }
    return 0;
}

static int read_text(const char *path, unsigned char **buf, size_t *len, int *files, char *err, size_t errlen)
{
    struct stat st;
    size_t cap = 0;
    *buf = NULL, *len = 0, *files = 0;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: %s (a text file, or a directory of them)", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        *files = 1;
        return append_file(path, buf, len, &cap, err, errlen);
    }
    DIR *d = opendir(path);
    if (!d) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    int n = 0, ncap = 0, rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char full[4096];
        struct stat ls;
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        if (e->d_name[0] == '.' || lstat(full, &ls) != 0 || !S_ISREG(ls.st_mode))
            continue; /* links (another name of a file already read), directories, hidden */
        if (n == ncap) {
            ncap = ncap ? 2 * ncap : 64;
            char **nn = realloc(names, (size_t)ncap * sizeof *nn);
            if (!nn) {
                rc = -1;
                break;
            }
            names = nn;
        }
        if (!(names[n] = strdup(e->d_name))) {
            rc = -1;
            break;
        }
        n++;
    }
    closedir(d);
    if (rc != 0)
        snprintf(err, errlen, "%s: out of memory listing it", path);
    if (rc == 0 && names)
        qsort(names, (size_t)n, sizeof *names, name_cmp);
    for (int i = 0; rc == 0 && i < n; i++) {
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, names[i]);
        rc = append_file(full, buf, len, &cap, err, errlen);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    *files = n;
    if (rc != 0) {
        free(*buf);
        *buf = NULL, *len = 0;
    }
    return rc;
}

/* windows [first, first + n) of the text as a time-major byte data set */
static int text_windows(const unsigned char *text, int steps, int first, int n, Dataset *ds, char *err,
                        size_t errlen)
{
    memset(ds, 0, sizeof *ds);
    int32_t *x = malloc((size_t)n * steps * sizeof *x), *t = malloc((size_t)n * steps * sizeof *t);
    if (!x || !t) {
        free(x), free(t);
        snprintf(err, errlen, "out of memory for %d windows of %d bytes", n, steps);
        return -1;
    }
    for (int w = 0; w < n; w++) {
        const unsigned char *p = text + (size_t)(first + w) * steps;
        for (int k = 0; k < steps; k++) {
            x[(size_t)w * steps + k] = p[k];
            t[(size_t)w * steps + k] = p[k + 1];
        }
    }
    *ds = (Dataset){.n = n, .shape = {2, {steps, 1}}, .x_type = DS_I32, .x = x, .target = TARGET_CLASS,
                    .t_count = steps, .t = t, .classes = 256, .time_major = true};
    return 0;
}

int dataset_load_text_bytes(const char *path, int steps, double test_share, Dataset *train, Dataset *test,
                            char *err, size_t errlen)
{
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    if (!path || !*path)
        path = TEXT_BYTES_DEFAULT_PATH;
    unsigned char *text;
    size_t len;
    int files;
    if (steps < 1 || read_text(path, &text, &len, &files, err, errlen) != 0) {
        if (steps < 1)
            snprintf(err, errlen, "%s: windows of %d bytes: must be >= 1", path, steps);
        return -1;
    }
    /* windows of steps + 1 bytes that overlap by one: the last byte of one is the first
     * input of the next */
    const size_t windows = len > (size_t)steps ? (len - 1) / (size_t)steps : 0;
    if (windows < 2 || windows > INT_MAX) {
        snprintf(err, errlen, "%s: %zu bytes in %d file%s make %zu windows of %d + 1 bytes; a training and a "
                 "test set need at least 2", path, len, files, files == 1 ? "" : "s", windows, steps);
        free(text);
        return -1;
    }
    int ntest = (int)((double)windows * test_share);
    ntest = ntest < 1 ? 1 : ntest >= (int)windows ? (int)windows - 1 : ntest;
    const int ntrain = (int)windows - ntest;
    int rc = text_windows(text, steps, 0, ntrain, train, err, errlen);
    if (rc == 0 && (rc = text_windows(text, steps, ntrain, ntest, test, err, errlen)) != 0)
        dataset_free(train);
    free(text);
    if (rc == 0) {
        snprintf(train->source, sizeof train->source, "%.200s: %zu bytes of %d file%s, train", path, len, files,
                 files == 1 ? "" : "s");
        snprintf(test->source, sizeof test->source, "%.200s: %zu bytes of %d file%s, test", path, len, files,
                 files == 1 ? "" : "s");
    }
    return rc;
}

void dataset_permutation(int *perm, int n, uint64_t seed)
{
    DS_ASSERT(n >= 0 && (n == 0 || perm));
    for (int i = 0; i < n; i++)
        perm[i] = i;
    if (n < 2)
        return;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) { /* out of memory in a function that cannot fail: say where, and stop */
        fprintf(stderr, "%s:%d: out of memory allocating a random number generator\n", __FILE__, __LINE__);
        abort();
    }
    gsl_rng_set(r, (unsigned long)seed);
    gsl_ran_shuffle(r, perm, (size_t)n, sizeof *perm);
    gsl_rng_free(r);
}

int dataset_split(const Dataset *ds, int first_n, Dataset *head, Dataset *tail, char *err, size_t errlen)
{
    if (first_n < 0 || first_n > ds->n) {
        snprintf(err, errlen, "%s: cannot split off the first %d samples of %d (need 0..%d)", ds->source,
                 first_n, ds->n, ds->n);
        return -1;
    }
    size_t x_bytes = ds_shape_count(&ds->shape) * 4;
    size_t t_bytes = ds->t ? (size_t)ds->t_count * 4 : 0;
    *head = *ds;
    head->n = first_n;
    head->view = true;
    snprintf(head->source, sizeof head->source, "%.200s [0, %d)", ds->source, first_n);
    *tail = *ds;
    tail->n = ds->n - first_n;
    tail->view = true;
    if (ds->x)
        tail->x = (char *)ds->x + (size_t)first_n * x_bytes;
    if (ds->t)
        tail->t = (char *)ds->t + (size_t)first_n * t_bytes;
    snprintf(tail->source, sizeof tail->source, "%.200s [%d, %d)", ds->source, first_n, ds->n);
    return 0;
}
