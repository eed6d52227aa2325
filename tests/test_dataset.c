/* tests/test_dataset.c — data sets: IDX files written here with zlib (gzip and plain) and
 * every way they can be wrong, Fashion-MNIST from a fake directory and, when Debian's
 * dataset-fashion-mnist is installed, the real one (counts per class); CANDLE CSV files
 * with and without header, skipped and label columns, and every refused cell or row; the
 * batch gather, the seeded permutation and the validation split. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "models/dataset.h"

static char tmpdir[256];

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dlperf-test-dataset-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static int teardown(void **state)
{
    remove_tree(tmpdir);
    return 0;
}

static void path_in(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
}

/* Writes len bytes through zlib: gzip compressed, or plain ("T": transparent). */
static void write_z(const char *path, bool gz, const void *data, size_t len)
{
    gzFile f = gzopen(path, gz ? "wb" : "wbT");
    assert_non_null(f);
    if (len)
        assert_int_equal(gzwrite(f, data, (unsigned)len), (int)len);
    assert_int_equal(gzclose(f), Z_OK);
}

static void write_raw(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void put_be32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)(v >> 24);
    b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8);
    b[3] = (unsigned char)v;
}

/* An IDX file in memory: magic, nd big-endian sizes, then n data bytes. Returns its length. */
static size_t idx_build(unsigned char *out, uint32_t magic, const uint32_t *dims, int nd,
                        const unsigned char *data, size_t n)
{
    put_be32(out, magic);
    for (int i = 0; i < nd; i++)
        put_be32(out + 4 + 4 * i, dims[i]);
    memcpy(out + 4 + 4 * nd, data, n);
    return 4 + 4 * (size_t)nd + n;
}

/* Three 2x3 images and their labels, as in the tests below. */
static const unsigned char PIXELS[18] = {0, 1, 2, 3, 4, 5, 10, 20, 30, 40, 50, 60, 128, 200, 250, 251, 254, 255};
static const unsigned char LABELS[3] = {2, 0, 7};

static void write_idx_pair(const char *img, const char *lbl, bool gz)
{
    unsigned char b[64];
    const uint32_t idims[3] = {3, 2, 3}, ldims[1] = {3};
    write_z(img, gz, b, idx_build(b, 0x803, idims, 3, PIXELS, 18));
    write_z(lbl, gz, b, idx_build(b, 0x801, ldims, 1, LABELS, 3));
}

static void test_idx_gzip_and_plain(void **state)
{
    for (int gz = 0; gz < 2; gz++) {
        char img[512], lbl[512], err[512] = "";
        path_in(img, sizeof img, gz ? "img.gz" : "img");
        path_in(lbl, sizeof lbl, gz ? "lbl.gz" : "lbl");
        write_idx_pair(img, lbl, gz);
        Dataset ds;
        if (dataset_load_idx(img, lbl, &ds, err, sizeof err) != 0)
            fail_msg("%s", err);
        assert_int_equal(ds.n, 3);
        assert_int_equal(ds.shape.rank, 3);
        assert_int_equal(ds.shape.d[0], 1);
        assert_int_equal(ds.shape.d[1], 2);
        assert_int_equal(ds.shape.d[2], 3);
        assert_int_equal(ds.x_type, DS_F32);
        assert_int_equal(ds.target, TARGET_CLASS);
        assert_int_equal(ds.t_count, 1);
        assert_int_equal(ds.classes, 8);
        assert_string_equal(ds.source, img);
        const float *x = ds.x;
        const int32_t *t = ds.t;
        for (int i = 0; i < 18; i++)
            assert_true(x[i] == (float)PIXELS[i] / 255.0f);
        assert_true(x[0] == 0.0f && x[17] == 1.0f);
        for (int i = 0; i < 3; i++)
            assert_int_equal(t[i], LABELS[i]);
        dataset_free(&ds);
        assert_null(ds.x);
        dataset_free(&ds); /* twice is harmless */
    }
}

/* Expects dataset_load_idx to refuse, naming `named` and saying `want`, with *ds empty. */
static void expect_idx_refused(const char *img, const char *lbl, const char *named, const char *want)
{
    Dataset ds;
    char err[512] = "";
    int rc = dataset_load_idx(img, lbl, &ds, err, sizeof err);
    if (rc != -1 || !strstr(err, named) || !strstr(err, want))
        fail_msg("load %s + %s: rc %d, err '%s', wanted '%s' naming %s", img, lbl, rc, err, want, named);
    assert_null(ds.x);
    assert_null(ds.t);
    assert_int_equal(ds.n, 0);
}

static void test_idx_refusals(void **state)
{
    char img[512], lbl[512], bad[512];
    path_in(img, sizeof img, "good-img");
    path_in(lbl, sizeof lbl, "good-lbl.gz");
    write_idx_pair(img, lbl, false);
    write_idx_pair(img, lbl, true);
    path_in(bad, sizeof bad, "bad");
    unsigned char b[64];
    const uint32_t idims[3] = {3, 2, 3}, ldims[1] = {3};
    size_t n;

    expect_idx_refused("/nonexistent/images", lbl, "/nonexistent/images", "cannot open");
    write_raw(bad, "hello, world\n", 13);
    expect_idx_refused(bad, lbl, bad, "not an IDX file (magic 0x68656c6c");
    write_raw(bad, "", 0);
    expect_idx_refused(bad, lbl, bad, "not an IDX file (0 bytes");
    /* a label file given as images, and images as labels */
    expect_idx_refused(lbl, lbl, lbl, "1 dimension(s); images need 3 (magic 0x00000803)");
    expect_idx_refused(img, img, img, "3 dimension(s); labels need 1 (magic 0x00000801)");
    /* float elements (type 0x0D) */
    write_z(bad, true, b, idx_build(b, 0xD03, idims, 3, PIXELS, 18));
    expect_idx_refused(bad, lbl, bad, "element type 0x0d; images must be unsigned bytes");
    /* a header cut short, and a zero dimension */
    write_z(bad, false, b, idx_build(b, 0x803, idims, 1, PIXELS, 0));
    expect_idx_refused(bad, lbl, bad, "truncated IDX header (8 of 16 bytes)");
    const uint32_t zero[3] = {3, 0, 3};
    write_z(bad, false, b, idx_build(b, 0x803, zero, 3, PIXELS, 0));
    expect_idx_refused(bad, lbl, bad, "IDX dimension 2 is 0");
    /* two labels for three images */
    const uint32_t two[1] = {2};
    write_z(bad, true, b, idx_build(b, 0x801, two, 1, LABELS, 2));
    expect_idx_refused(img, bad, bad, "2 labels, but");
    /* truncated data, gzip and plain */
    for (int gz = 0; gz < 2; gz++) {
        write_z(bad, gz, b, idx_build(b, 0x803, idims, 3, PIXELS, 12));
        expect_idx_refused(bad, lbl, bad, "truncated: 12 of 18 pixel bytes (3 images of 2x3)");
        write_z(bad, gz, b, idx_build(b, 0x801, ldims, 1, LABELS, 2));
        expect_idx_refused(img, bad, bad, "truncated: 2 of 3 labels");
    }
    /* more data than the header says */
    n = idx_build(b, 0x803, idims, 3, PIXELS, 18);
    b[n] = 7;
    write_z(bad, true, b, n + 1);
    expect_idx_refused(bad, lbl, bad, "data continues after the 18 bytes the IDX header announces");

    /* a gzip file whose CRC-32 trailer does not match: zlib notices at the end */
    char gzp[512];
    path_in(gzp, sizeof gzp, "crc.gz");
    write_z(gzp, true, b, idx_build(b, 0x803, idims, 3, PIXELS, 18));
    FILE *f = fopen(gzp, "rb");
    assert_non_null(f);
    unsigned char z[256];
    size_t zn = fread(z, 1, sizeof z, f);
    fclose(f);
    assert_true(zn > 8 && zn < sizeof z);
    z[zn - 8] ^= 0xff; /* the trailer: CRC-32, then the length */
    write_raw(gzp, z, zn);
    expect_idx_refused(gzp, lbl, gzp, "corrupt gzip data");
}

/* A fake Fashion-MNIST directory: 28x28 images, labels as given, plain (gunzipped) names. */
static void write_fake_fashion(const char *dir, const char *split, int rows, unsigned char label0)
{
    static unsigned char b[16 + 2 * 28 * 28];
    unsigned char px[2 * 28 * 28];
    for (size_t i = 0; i < sizeof px; i++)
        px[i] = (unsigned char)(i * 7);
    const uint32_t idims[3] = {2, (uint32_t)rows, (uint32_t)rows}, ldims[1] = {2};
    const unsigned char labels[2] = {label0, 9};
    char path[600];
    snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte", dir, split);
    write_z(path, false, b, idx_build(b, 0x803, idims, 3, px, 2 * (size_t)rows * rows));
    snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte", dir, split);
    write_z(path, false, b, idx_build(b, 0x801, ldims, 1, labels, 2));
}

static void test_fashion_fake_dir(void **state)
{
    char dir[512], err[512] = "";
    path_in(dir, sizeof dir, "fashion");
    assert_int_equal(mkdir(dir, 0755), 0);
    write_fake_fashion(dir, "train", 28, 3);
    Dataset ds;
    if (dataset_load_fashion_mnist(dir, true, &ds, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(ds.n, 2);
    assert_int_equal(ds.classes, 10); /* labels 3 and 9 only, still ten classes */
    assert_non_null(strstr(ds.source, "fashion-mnist train"));
    dataset_free(&ds);

    /* NULL dir: $DLPERF_FASHION_MNIST */
    setenv("DLPERF_FASHION_MNIST", dir, 1);
    assert_int_equal(dataset_load_fashion_mnist(NULL, true, &ds, err, sizeof err), 0);
    dataset_free(&ds);
    unsetenv("DLPERF_FASHION_MNIST");

    /* no test split there: which file, and how to get it */
    assert_int_equal(dataset_load_fashion_mnist(dir, false, &ds, err, sizeof err), -1);
    assert_non_null(strstr(err, "t10k-images-idx3-ubyte.gz not found"));
    assert_non_null(strstr(err, "apt-get install dataset-fashion-mnist"));
    assert_non_null(strstr(err, "--data-dir"));
    assert_null(ds.x);

    /* not Fashion-MNIST: a label 12, or 4x4 images */
    write_fake_fashion(dir, "train", 28, 12);
    assert_int_equal(dataset_load_fashion_mnist(dir, true, &ds, err, sizeof err), -1);
    assert_non_null(strstr(err, "28x28 with labels 0..9"));
    assert_null(ds.x);
    write_fake_fashion(dir, "train", 4, 1);
    assert_int_equal(dataset_load_fashion_mnist(dir, true, &ds, err, sizeof err), -1);
    assert_non_null(strstr(err, "4x4 images"));
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check_real_split(bool train, int n, int per_class, int first_label)
{
    Dataset ds;
    char err[512];
    double t0 = now_s();
    if (dataset_load_fashion_mnist("/usr/share/datasets/fashion-mnist", train, &ds, err, sizeof err) != 0)
        fail_msg("%s", err);
    printf("# fashion-mnist %s: %d samples loaded in %.3f s\n", train ? "train" : "t10k", ds.n, now_s() - t0);
    assert_int_equal(ds.n, n);
    assert_int_equal(ds.shape.d[0], 1);
    assert_int_equal(ds.shape.d[1], 28);
    assert_int_equal(ds.shape.d[2], 28);
    assert_int_equal(ds.classes, 10);
    int count[10] = {0};
    const int32_t *t = ds.t;
    for (int i = 0; i < ds.n; i++) {
        assert_true(t[i] >= 0 && t[i] < 10);
        count[t[i]]++;
    }
    for (int c = 0; c < 10; c++)
        assert_int_equal(count[c], per_class);
    assert_int_equal(t[0], first_label);
    const float *x = ds.x;
    double sum = 0;
    float lo = 1, hi = 0;
    for (size_t i = 0; i < (size_t)ds.n * 784; i++) {
        sum += x[i];
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    assert_true(lo == 0.0f && hi == 1.0f);
    /* the published mean pixel of Fashion-MNIST is 0.286 (train) */
    double mean = sum / ((double)ds.n * 784);
    assert_true(mean > 0.28 && mean < 0.29);
    dataset_free(&ds);
}

static void test_fashion_real(void **state)
{
    struct stat st;
    if (stat("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", &st) != 0) {
        printf("# /usr/share/datasets/fashion-mnist absent (apt-get install dataset-fashion-mnist): skipped\n");
        skip();
    }
    /* the first image of both splits is an ankle boot (9) */
    check_real_split(true, 60000, 6000, 9);
    check_real_split(false, 10000, 1000, 9);
}

/* ---- CSV ---- */

static void write_text(const char *path, const char *s)
{
    write_raw(path, s, strlen(s));
}

static Dataset load_csv_ok(const char *text, int skip, int label)
{
    char path[512], err[512] = "";
    path_in(path, sizeof path, "ok.csv");
    write_text(path, text);
    Dataset ds;
    if (dataset_load_csv(path, skip, label, &ds, err, sizeof err) != 0)
        fail_msg("%s", err);
    return ds;
}

static void assert_floats(const float *got, const float *want, int n)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("value %d: got %.9g, want %.9g", i, got[i], want[i]);
}

static void test_csv_header_skip_autoencoder(void **state)
{
    /* P1B1: case_id, then gene expression columns; the target is the input */
    Dataset ds = load_csv_ok("case_id,g1,g2,g3\nTCGA-A1,0.1,0.25,1e-3\nTCGA-B2,1,-2.5,3\n", 1, -1);
    assert_int_equal(ds.n, 2);
    assert_int_equal(ds.shape.rank, 1);
    assert_int_equal(ds.shape.d[0], 3);
    assert_int_equal(ds.target, TARGET_INPUT);
    assert_int_equal(ds.t_count, 3);
    assert_null(ds.t);
    const float want[] = {0.1f, 0.25f, 1e-3f, 1, -2.5f, 3};
    assert_floats(ds.x, want, 6);
    dataset_free(&ds);
}

static void test_csv_label_column(void **state)
{
    /* a label column among the kept ones: taken out of x */
    Dataset ds = load_csv_ok("id,a,label,b\nr1,0.5,2,1.5\nr2,1e-3,0,-2\nr3,7,1.0,8\n", 1, 2);
    assert_int_equal(ds.n, 3);
    assert_int_equal(ds.shape.d[0], 2);
    assert_int_equal(ds.target, TARGET_CLASS);
    assert_int_equal(ds.t_count, 1);
    assert_int_equal(ds.classes, 3);
    const float want[] = {0.5f, 1.5f, 1e-3f, -2, 7, 8};
    assert_floats(ds.x, want, 6);
    const int32_t *t = ds.t;
    assert_int_equal(t[0], 2);
    assert_int_equal(t[1], 0);
    assert_int_equal(t[2], 1);
    dataset_free(&ds);
}

static void test_csv_no_header(void **state)
{
    /* P3B1 feature files: no header, the first row is data */
    Dataset ds = load_csv_ok("1,2,3\n4,5,6\n", 0, -1);
    assert_int_equal(ds.n, 2);
    assert_int_equal(ds.shape.d[0], 3);
    const float want[] = {1, 2, 3, 4, 5, 6};
    assert_floats(ds.x, want, 6);
    dataset_free(&ds);
    /* the skipped column does not decide: text ids with numbers after them are data */
    ds = load_csv_ok("A,1,2\nB,3,4", 1, -1);
    assert_int_equal(ds.n, 2);
    const float want2[] = {1, 2, 3, 4};
    assert_floats(ds.x, want2, 4);
    dataset_free(&ds);
}

/* Enough rows to grow the row storage several times (it starts at 64 rows). */
static void test_csv_many_rows(void **state)
{
    char path[512], err[512] = "";
    path_in(path, sizeof path, "many.csv");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "id,a,b,y\n");
    for (int i = 0; i < 1000; i++)
        fprintf(f, "r%d,%d,%g,%d\n", i, i, i * 0.5, i % 7);
    assert_int_equal(fclose(f), 0);
    Dataset ds;
    if (dataset_load_csv(path, 1, 3, &ds, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(ds.n, 1000);
    assert_int_equal(ds.classes, 7);
    const float *x = ds.x;
    const int32_t *t = ds.t;
    for (int i = 0; i < 1000; i++)
        assert_true(x[2 * i] == (float)i && x[2 * i + 1] == (float)(i * 0.5) && t[i] == i % 7);
    dataset_free(&ds);
}

static void test_csv_quotes_crlf_blank_lines(void **state)
{
    Dataset ds = load_csv_ok("\"case, id\",\"g \"\"1\"\"\",g2\r\n\r\n\"x,y\",\"0.5\",  2 \r\n\n\"z\",3,4\r\n\n", 1, -1);
    assert_int_equal(ds.n, 2);
    assert_int_equal(ds.shape.d[0], 2);
    const float want[] = {0.5f, 2, 3, 4};
    assert_floats(ds.x, want, 4);
    dataset_free(&ds);
}

static void expect_csv_refused(const char *text, int skip, int label, const char *want)
{
    char path[512], err[512] = "";
    path_in(path, sizeof path, "bad.csv");
    if (text)
        write_text(path, text);
    Dataset ds;
    int rc = dataset_load_csv(path, skip, label, &ds, err, sizeof err);
    if (rc != -1 || !strstr(err, path) || !strstr(err, want))
        fail_msg("csv %s: rc %d, err '%s', wanted '%s'", text ? text : "(none)", rc, err, want);
    assert_null(ds.x);
    assert_int_equal(ds.n, 0);
}

static void test_csv_refusals(void **state)
{
    const char *h = "id,a,b\n";
    char text[256];
    snprintf(text, sizeof text, "%sr1,1,2\nr2,abc,3\n", h);
    expect_csv_refused(text, 1, -1, "line 3, column 2: 'abc' is not a number");
    snprintf(text, sizeof text, "%sr1,1,2\nr2,4\n", h);
    expect_csv_refused(text, 1, -1, "line 3: 2 columns, the header has 3");
    snprintf(text, sizeof text, "%sr1,1,2,5\n", h);
    expect_csv_refused(text, 1, -1, "line 2: 4 columns, the header has 3");
    expect_csv_refused("1,2\n3,4,5\n", 0, -1, "line 2: 3 columns, the first row has 2");
    snprintf(text, sizeof text, "%sr1,,2\n", h);
    expect_csv_refused(text, 1, -1, "line 2, column 2: '' is empty");
    snprintf(text, sizeof text, "%sr1,1,2,\n", h);
    expect_csv_refused(text, 1, -1, "line 2: 4 columns");
    snprintf(text, sizeof text, "%sr1,nan,2\n", h);
    expect_csv_refused(text, 1, -1, "column 2: 'nan' is not a finite number");
    snprintf(text, sizeof text, "%sr1,1,1e50\n", h);
    expect_csv_refused(text, 1, -1, "column 3: '1e50' is out of float32 range");
    snprintf(text, sizeof text, "%sr1,1,2x\n", h);
    expect_csv_refused(text, 1, -1, "column 3: '2x' is not a number");
    snprintf(text, sizeof text, "%sr1,\"1,2\n", h);
    expect_csv_refused(text, 1, -1, "line 2, column 2: malformed quoted cell");
    /* labels */
    snprintf(text, sizeof text, "%sr1,1.5,2\n", h);
    expect_csv_refused(text, 1, 1, "line 2, column 2: label '1.5' is not a class number");
    snprintf(text, sizeof text, "%sr1,-1,2\n", h);
    expect_csv_refused(text, 1, 1, "label '-1' is not a class number");
    expect_csv_refused(h, 1, 3, "label column 3 is not one of the kept columns 1..2");
    expect_csv_refused(h, 1, 0, "label column 0 is not one of the kept columns 1..2");
    expect_csv_refused(h, 3, -1, "3 column(s); skipping 3 leaves no feature column");
    expect_csv_refused("id,label\nr,1\n", 1, 1, "skipping 1 and taking a label leaves no feature column");
    expect_csv_refused(h, -1, -1, "need skip_cols >= 0");
    expect_csv_refused(h, 0, -2, "need skip_cols >= 0 and label_col -1");
    /* nothing to load */
    expect_csv_refused(h, 1, -1, "no data rows after the header");
    expect_csv_refused("", 0, -1, "no data rows (empty file)");
    expect_csv_refused("\n\n", 0, -1, "no data rows (empty file)");
    char missing[512];
    path_in(missing, sizeof missing, "bad.csv");
    unlink(missing);
    expect_csv_refused(NULL, 0, -1, "cannot open");
}

/* ---- gather, permutation, split ---- */

static void test_gather(void **state)
{
    Dataset ds = load_csv_ok("id,a,b,y\nr0,0,1,0\nr1,10,11,1\nr2,20,21,2\n", 1, 3);
    const int idx[] = {2, 0, 2};
    float x[6];
    int32_t t[3];
    dataset_gather(&ds, idx, 3, x, t);
    const float want[] = {20, 21, 0, 1, 20, 21};
    assert_floats(x, want, 6);
    assert_int_equal(t[0], 2);
    assert_int_equal(t[1], 0);
    assert_int_equal(t[2], 2);
    dataset_free(&ds);

    /* autoencoder: no target buffer needed */
    ds = load_csv_ok("1,2\n3,4\n", 0, -1);
    const int one[] = {1};
    dataset_gather(&ds, one, 1, x, NULL);
    assert_true(x[0] == 3 && x[1] == 4);
    dataset_free(&ds);

    /* token ids with float vector targets, built by hand */
    int32_t ids[] = {5, 6, 7, 8, 9, 10};
    float vec[] = {0.5f, 1.5f, 2.5f};
    Dataset tok = {.n = 3, .shape = {.rank = 1, .d = {2}}, .x_type = DS_I32, .x = ids,
                   .target = TARGET_VECTOR, .t_count = 1, .t = vec, .view = true};
    int32_t xi[2];
    float tv[1];
    dataset_gather(&tok, one, 1, xi, tv);
    assert_int_equal(xi[0], 7);
    assert_int_equal(xi[1], 8);
    assert_true(tv[0] == 1.5f);
    dataset_free(&tok); /* a view: frees nothing (ids, vec are on the stack) */
}

static void test_permutation(void **state)
{
    enum { N = 1000 };
    int a[N], b[N], c[N], seen[N];
    dataset_permutation(a, N, 42);
    dataset_permutation(b, N, 42);
    dataset_permutation(c, N, 43);
    memset(seen, 0, sizeof seen);
    int fixed = 0;
    for (int i = 0; i < N; i++) {
        assert_true(a[i] >= 0 && a[i] < N);
        seen[a[i]]++;
        fixed += a[i] == i;
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(seen[i], 1);
    assert_memory_equal(a, b, sizeof a);      /* seeded */
    assert_memory_not_equal(a, c, sizeof a);  /* another seed, another order */
    assert_true(fixed < 20);                  /* shuffled: about 1 fixed point expected */
    /* pinned: GSL's MT19937 and gsl_ran_shuffle give this order on every machine, so a
     * seed names one training run's sample order anywhere */
    int ten[10];
    const int want[10] = {5, 0, 6, 2, 9, 4, 1, 8, 7, 3};
    dataset_permutation(ten, 10, 42);
    assert_memory_equal(ten, want, sizeof want);
    int one = -1;
    dataset_permutation(&one, 1, 7);
    assert_int_equal(one, 0);
    dataset_permutation(NULL, 0, 7);
}

static void test_split(void **state)
{
    Dataset ds = load_csv_ok("id,a,b,y\nr0,0,1,0\nr1,10,11,1\nr2,20,21,2\nr3,30,31,1\n", 1, 3);
    Dataset head, tail;
    char err[512];
    assert_int_equal(dataset_split(&ds, 1, &head, &tail, err, sizeof err), 0);
    assert_int_equal(head.n, 1);
    assert_int_equal(tail.n, 3);
    assert_true(head.view && tail.view);
    assert_ptr_equal(head.x, ds.x);
    assert_true(((const float *)tail.x)[0] == 10.0f);
    assert_int_equal(((const int32_t *)tail.t)[0], 1);
    assert_int_equal(tail.classes, 3);
    assert_non_null(strstr(tail.source, "[1, 4)"));
    /* a gather from the tail counts from its own first sample */
    const int idx[] = {2};
    float x[2];
    int32_t t[1];
    dataset_gather(&tail, idx, 1, x, t);
    assert_true(x[0] == 30 && x[1] == 31 && t[0] == 1);
    dataset_free(&head); /* views: nothing freed (ASan would see a double free) */
    dataset_free(&tail);

    assert_int_equal(dataset_split(&ds, 0, &head, &tail, err, sizeof err), 0);
    assert_int_equal(head.n, 0);
    assert_int_equal(tail.n, 4);
    assert_int_equal(dataset_split(&ds, 4, &head, &tail, err, sizeof err), 0);
    assert_int_equal(tail.n, 0);
    assert_int_equal(dataset_split(&ds, 5, &head, &tail, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot split off the first 5 samples of 4 (need 0..4)"));
    assert_int_equal(dataset_split(&ds, -1, &head, &tail, err, sizeof err), -1);
    dataset_free(&ds);
}

/* Text as bytes: a directory's regular files in name order (a link to one of them and a
 * hidden file skipped), windows of steps + 1 that share their boundary byte, the last tenth
 * (at least one window) held out, and the batch gathered time-major. */
static void test_text_bytes(void **state)
{
    char dir[300], a[320], b[320], link[320], hidden[320];
    path_in(dir, sizeof dir, "text");
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(a, sizeof a, "%s/b-second", dir);
    snprintf(b, sizeof b, "%s/a-first", dir);
    write_raw(b, "abcdefghij", 10);
    write_raw(a, "klmnopqrstu", 11); /* 21 bytes: (21 - 1) / 4 = 5 windows of 4 + 1 */
    snprintf(link, sizeof link, "%s/c-link", dir);
    assert_int_equal(symlink(b, link), 0);
    snprintf(hidden, sizeof hidden, "%s/.hidden", dir);
    write_raw(hidden, "zzzzzzzz", 8);
    Dataset tr, te;
    char err[512];
    assert_int_equal(dataset_load_text_bytes(dir, 4, 0.1, &tr, &te, err, sizeof err), 0);
    assert_int_equal(tr.n, 4);
    assert_int_equal(te.n, 1);
    assert_true(tr.time_major && tr.x_type == DS_I32 && tr.target == TARGET_CLASS && tr.t_count == 4);
    assert_int_equal(tr.classes, 256);
    const int32_t *x = tr.x, *t = tr.t;
    assert_int_equal(x[4], 'e'); /* window 1 starts where window 0's labels end */
    assert_int_equal(t[3], 'e');
    assert_int_equal(((const int32_t *)te.x)[0], 'q');
    assert_int_equal(((const int32_t *)te.t)[3], 'u');
    assert_non_null(strstr(tr.source, "21 bytes of 2 files"));
    /* time-major: step k of sample i at k * batch + i */
    int idx[2] = {2, 0};
    int32_t gx[8], gt[8];
    dataset_gather(&tr, idx, 2, gx, gt);
    assert_int_equal(gx[0], 'i');
    assert_int_equal(gx[1], 'a');
    assert_int_equal(gx[2], 'j');
    assert_int_equal(gt[7], 'e');
    dataset_free(&tr);
    dataset_free(&te);
    /* too little text, and a path that is not there */
    assert_int_equal(dataset_load_text_bytes(b, 8, 0.1, &tr, &te, err, sizeof err), -1);
    assert_non_null(strstr(err, "10 bytes in 1 file make 1 windows of 8 + 1 bytes"));
    path_in(a, sizeof a, "missing");
    assert_int_equal(dataset_load_text_bytes(a, 8, 0.1, &tr, &te, err, sizeof err), -1);
    assert_non_null(strstr(err, "No such file or directory"));
    assert_null(tr.x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idx_gzip_and_plain),
        cmocka_unit_test(test_idx_refusals),
        cmocka_unit_test(test_fashion_fake_dir),
        cmocka_unit_test(test_fashion_real),
        cmocka_unit_test(test_csv_header_skip_autoencoder),
        cmocka_unit_test(test_csv_label_column),
        cmocka_unit_test(test_csv_no_header),
        cmocka_unit_test(test_csv_many_rows),
        cmocka_unit_test(test_csv_quotes_crlf_blank_lines),
        cmocka_unit_test(test_csv_refusals),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_permutation),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_text_bytes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
