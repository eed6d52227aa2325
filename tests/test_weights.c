/* tests/test_weights.c — weights files on a hand-made plan (a conv layer and a batch-norm
 * layer with running statistics in ARENA_STATE): bit-exact round trip, the byte layout of
 * docs/weights-format.md, every refusal (other model, tensor count, tensor shape, version,
 * magic, each truncation, each single-bit flip, trailing bytes) leaving the destination
 * buffers untouched, and the path.tmp + rename behaviour of saves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "models/weights.h"

enum { PARAM_FLOATS = 80, STATE_FLOATS = 20 };

/* Two layers, six tensors; offsets 64-byte aligned as the plan lays them out, so the
 * arenas have padding the loader must not touch. */
typedef struct {
    ModelSpec model;
    PlanLayer layers[2];
    PlanParam params[6];
    Plan plan;
} TinyPlan;

static void tiny_plan(TinyPlan *t, const char *model_name)
{
    memset(t, 0, sizeof *t);
    snprintf(t->model.name, sizeof t->model.name, "%s", model_name);
    snprintf(t->layers[0].name, sizeof t->layers[0].name, "conv1");
    snprintf(t->layers[1].name, sizeof t->layers[1].name, "bn1");
    struct {
        int layer;
        const char *role;
        ArenaId arena;
        size_t offset, count;
    } spec[6] = {
        {0, "kernel", ARENA_PARAM, 0, 24},        {0, "bias", ARENA_PARAM, 128, 4},
        {1, "gamma", ARENA_PARAM, 192, 4},        {1, "beta", ARENA_PARAM, 256, 4},
        {1, "running_mean", ARENA_STATE, 0, 4},   {1, "running_var", ARENA_STATE, 64, 4},
    };
    for (int i = 0; i < 6; i++) {
        PlanParam *pp = &t->params[i];
        pp->layer = spec[i].layer;
        snprintf(pp->role, sizeof pp->role, "%s", spec[i].role);
        pp->ref = (BufRef){.arena = spec[i].arena, .offset = spec[i].offset, .bytes = spec[i].count * 4};
        pp->count = spec[i].count;
        pp->learnable = spec[i].arena == ARENA_PARAM;
    }
    t->plan.model = &t->model;
    t->plan.layers = t->layers;
    t->plan.nlayers = 2;
    t->plan.params = t->params;
    t->plan.nparams = 6;
}

/* Distinct values in every tensor element, with the awkward ones: -0, a denormal, inf, NaN. */
static void fill_values(float *params, float *st)
{
    for (int i = 0; i < PARAM_FLOATS; i++)
        params[i] = 0.25f * (float)i - 7.0f;
    params[1] = -0.0f;
    params[2] = 1e-45f;
    params[3] = INFINITY;
    params[4] = NAN;
    for (int i = 0; i < STATE_FLOATS; i++)
        st[i] = 100.0f + (float)i / 3.0f;
}

static char tmpdir[256];

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dlperf-test-weights-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

/* Removes everything in tmpdir (files and the directories the tests make), then it. */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[512];
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

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    unsigned char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void write_all(const char *path, const void *b, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void test_round_trip(void **state)
{
    TinyPlan t;
    tiny_plan(&t, "tiny-bn");
    float params[PARAM_FLOATS], st[STATE_FLOATS], p2[PARAM_FLOATS], s2[STATE_FLOATS];
    fill_values(params, st);
    char path[512], err[512] = "", tmp[600];
    path_in(path, sizeof path, "tiny.wts");
    assert_int_equal(weights_save(path, &t.plan, params, st, err, sizeof err), 0);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_false(file_exists(tmp));

    size_t len;
    unsigned char *b = read_all(path, &len);
    assert_int_equal(len, weights_file_bytes(&t.plan));
    /* 8 + 4 + (4 + 7) + 4 + tensors (4 + 5 + 4 + 6 + 8 + 96, ...) + 4 */
    assert_int_equal(len, 8 + 4 + 11 + 4 + (4 + 5 + 4 + 6 + 8 + 96) + (4 + 5 + 4 + 4 + 8 + 16) +
                              (4 + 3 + 4 + 5 + 8 + 16) + (4 + 3 + 4 + 4 + 8 + 16) +
                              (4 + 3 + 4 + 12 + 8 + 16) + (4 + 3 + 4 + 11 + 8 + 16) + 4);
    /* the layout of docs/weights-format.md, little-endian */
    assert_memory_equal(b, "DLPFWTS\0", 8);
    assert_memory_equal(b + 8, "\x01\0\0\0" "\x07\0\0\0" "tiny-bn" "\x06\0\0\0", 4 + 4 + 7 + 4);
    assert_memory_equal(b + 27, "\x05\0\0\0" "conv1" "\x06\0\0\0" "kernel" "\x18\0\0\0\0\0\0\0", 4 + 5 + 4 + 6 + 8);
    uint32_t u;
    memcpy(&u, &params[0], 4);
    const unsigned char first[4] = {(unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16),
                                    (unsigned char)(u >> 24)};
    assert_memory_equal(b + 27 + 27, first, 4);
    uLong crc = crc32_z(crc32_z(0, Z_NULL, 0), b, len - 4);
    assert_int_equal(b[len - 4] | b[len - 3] << 8 | b[len - 2] << 16 | (uint32_t)b[len - 1] << 24, (uint32_t)crc);
    free(b);

    /* into buffers whose padding holds a sentinel: tensors bit-exact, padding untouched */
    memset(p2, 0x5a, sizeof p2);
    memset(s2, 0x5a, sizeof s2);
    assert_int_equal(weights_load(path, &t.plan, p2, s2, err, sizeof err), 0);
    for (int i = 0; i < 6; i++) {
        const PlanParam *pp = &t.params[i];
        const float *src = (pp->ref.arena == ARENA_PARAM ? params : st) + pp->ref.offset / 4;
        const float *dst = (pp->ref.arena == ARENA_PARAM ? p2 : s2) + pp->ref.offset / 4;
        assert_memory_equal(dst, src, pp->count * 4);
    }
    const unsigned char pad[4] = {0x5a, 0x5a, 0x5a, 0x5a};
    assert_memory_equal(&p2[24], pad, 4); /* between kernel (0..23) and bias (32..35) */
    assert_memory_equal(&p2[70], pad, 4); /* after beta (64..67) */
    assert_memory_equal(&s2[8], pad, 4);  /* between the running statistics */

    /* saving again over it replaces it whole */
    params[10] = 42.0f;
    assert_int_equal(weights_save(path, &t.plan, params, st, err, sizeof err), 0);
    assert_int_equal(weights_load(path, &t.plan, p2, s2, err, sizeof err), 0);
    assert_true(p2[10] == 42.0f);
    assert_false(file_exists(tmp));
}

/* Loads `path` into sentinel-filled buffers, expects a refusal whose message names the
 * file and contains `want`, and checks not one destination byte changed. */
static void expect_refused(const char *path, const Plan *p, const char *want)
{
    float p2[PARAM_FLOATS], s2[STATE_FLOATS];
    unsigned char before_p[sizeof p2], before_s[sizeof s2];
    memset(p2, 0x5a, sizeof p2);
    memset(s2, 0xa5, sizeof s2);
    memcpy(before_p, p2, sizeof p2);
    memcpy(before_s, s2, sizeof s2);
    char err[512] = "";
    int rc = weights_load(path, p, p2, s2, err, sizeof err);
    if (rc != -1 || !strstr(err, path) || (want && !strstr(err, want)))
        fail_msg("load of %s: rc %d, err '%s', wanted '%s'", path, rc, err, want ? want : "(any)");
    assert_memory_equal(p2, before_p, sizeof p2);
    assert_memory_equal(s2, before_s, sizeof s2);
    assert_null(strchr(err, '\n'));
}

static void save_plan(const char *path, const Plan *p)
{
    float params[PARAM_FLOATS], st[STATE_FLOATS];
    fill_values(params, st);
    char err[512];
    if (weights_save(path, p, params, st, err, sizeof err) != 0)
        fail_msg("save %s: %s", path, err);
}

static void test_refuses_other_models(void **state)
{
    TinyPlan t, other;
    tiny_plan(&t, "tiny-bn");
    char path[512];

    tiny_plan(&other, "vgg11");
    path_in(path, sizeof path, "vgg11.wts");
    save_plan(path, &other.plan);
    expect_refused(path, &t.plan, "weights of 'vgg11', model is 'tiny-bn'");

    tiny_plan(&other, "tiny-bn");
    other.plan.nparams = 5;
    path_in(path, sizeof path, "five.wts");
    save_plan(path, &other.plan);
    expect_refused(path, &t.plan, "5 tensors in the file, model 'tiny-bn' has 6");

    tiny_plan(&other, "tiny-bn");
    other.params[2].count = 3;
    path_in(path, sizeof path, "count.wts");
    save_plan(path, &other.plan);
    expect_refused(path, &t.plan, "tensor 3 'bn1/gamma': file has 3 values, model needs 4");

    tiny_plan(&other, "tiny-bn");
    snprintf(other.params[3].role, sizeof other.params[3].role, "bias");
    path_in(path, sizeof path, "role.wts");
    save_plan(path, &other.plan);
    expect_refused(path, &t.plan, "tensor 4: file has 'bn1/bias', model has 'bn1/beta'");

    tiny_plan(&other, "tiny-bn");
    other.params[4].layer = 0;
    path_in(path, sizeof path, "layer.wts");
    save_plan(path, &other.plan);
    expect_refused(path, &t.plan, "tensor 5: file has 'conv1/running_mean', model has 'bn1/running_mean'");
}

static void test_refuses_bad_files(void **state)
{
    TinyPlan t;
    tiny_plan(&t, "tiny-bn");
    char path[512], bad[512], msg[512];
    path_in(path, sizeof path, "good.wts");
    save_plan(path, &t.plan);
    size_t len;
    unsigned char *b = read_all(path, &len);
    path_in(bad, sizeof bad, "bad.wts");

    path_in(msg, sizeof msg, "missing.wts");
    expect_refused(msg, &t.plan, "cannot open");
    expect_refused(tmpdir, &t.plan, "not a regular file");

    write_all(bad, "hello, world\n", 13);
    expect_refused(bad, &t.plan, "not a dlperf weights file");
    write_all(bad, "", 0);
    expect_refused(bad, &t.plan, "not a dlperf weights file");

    /* a newer format version is refused before anything else is read */
    unsigned char *c = malloc(len + 1);
    assert_non_null(c);
    memcpy(c, b, len);
    c[8] = 2;
    write_all(bad, c, len);
    expect_refused(bad, &t.plan, "weights format version 2; this dlperf reads version 1..1 (written by a newer dlperf)");

    /* every truncation: before the version it is not a weights file, after it the message
     * says how long this model's file is */
    for (size_t cut = 0; cut < len; cut++) {
        write_all(bad, b, cut);
        if (cut < 8) {
            expect_refused(bad, &t.plan, "not a dlperf weights file");
        } else {
            snprintf(msg, sizeof msg, "truncated: %zu bytes, a weights file of model 'tiny-bn' has %zu", cut, len);
            expect_refused(bad, &t.plan, msg);
        }
    }

    /* a flipped data bit: the checksum */
    memcpy(c, b, len);
    c[len > 20 ? len - 20 : 0] ^= 0x10; /* inside the last tensor's data */
    write_all(bad, c, len);
    expect_refused(bad, &t.plan, "corrupted: CRC-32");
    /* ... and every single-bit flip anywhere is refused, whatever it hits */
    for (size_t i = 0; i < len; i++) {
        memcpy(c, b, len);
        c[i] ^= (unsigned char)(1u << (i % 8));
        write_all(bad, c, len);
        expect_refused(bad, &t.plan, NULL);
    }

    /* bytes after the checksum */
    memcpy(c, b, len);
    c[len] = 'x';
    write_all(bad, c, len + 1);
    snprintf(msg, sizeof msg, "%zu bytes, a weights file of model 'tiny-bn' has %zu: data after the checksum",
             len + 1, len);
    expect_refused(bad, &t.plan, msg);

    /* the good file still loads (the refusals were the files, not the loader) */
    float p2[PARAM_FLOATS], s2[STATE_FLOATS];
    char err[512];
    assert_int_equal(weights_load(path, &t.plan, p2, s2, err, sizeof err), 0);
    free(b);
    free(c);
}

static void test_save_tmp_and_rename(void **state)
{
    TinyPlan t;
    tiny_plan(&t, "tiny-bn");
    float params[PARAM_FLOATS], st[STATE_FLOATS];
    fill_values(params, st);
    char path[512], tmp[600], err[512];
    path_in(path, sizeof path, "model.wts");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);

    /* a stale path.tmp from an earlier crash is simply replaced */
    write_all(tmp, "half a file", 11);
    assert_int_equal(weights_save(path, &t.plan, params, st, err, sizeof err), 0);
    assert_false(file_exists(tmp));
    size_t len;
    unsigned char *good = read_all(path, &len);

    /* path.tmp cannot be created (a directory is in the way): refused, the old file whole */
    assert_int_equal(mkdir(tmp, 0755), 0);
    params[0] = 12345.0f;
    err[0] = '\0';
    assert_int_equal(weights_save(path, &t.plan, params, st, err, sizeof err), -1);
    assert_non_null(strstr(err, ".tmp"));
    size_t len2;
    unsigned char *now = read_all(path, &len2);
    assert_int_equal(len2, len);
    assert_memory_equal(now, good, len);
    free(now);
    assert_int_equal(rmdir(tmp), 0);

    /* the rename fails (the real name is a non-empty directory): refused, no .tmp left */
    char dirpath[512], inside[600];
    path_in(dirpath, sizeof dirpath, "isdir.wts");
    assert_int_equal(mkdir(dirpath, 0755), 0);
    snprintf(inside, sizeof inside, "%s/keep", dirpath);
    write_all(inside, "k", 1);
    err[0] = '\0';
    assert_int_equal(weights_save(dirpath, &t.plan, params, st, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot rename"));
    snprintf(tmp, sizeof tmp, "%s.tmp", dirpath);
    assert_false(file_exists(tmp));

    /* a directory that does not exist */
    path_in(dirpath, sizeof dirpath, "no/such/dir/x.wts");
    err[0] = '\0';
    assert_int_equal(weights_save(dirpath, &t.plan, params, st, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot create"));
    free(good);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refuses_other_models),
        cmocka_unit_test(test_refuses_bad_files),
        cmocka_unit_test(test_save_tmp_and_rename),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
