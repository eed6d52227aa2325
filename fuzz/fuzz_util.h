/* fuzz/fuzz_util.h — what the libFuzzer harnesses (fuzz/fuzz_*.c) share: a per-process
 * scratch directory for readers that take paths, writing an input to a file there, and the
 * seed-writing mode (FUZZ_WRITE_SEEDS=DIR: a harness's LLVMFuzzerInitialize writes the
 * seeds it can make itself into DIR and exits; fuzz/make-seeds.sh runs it).
 */
#ifndef DLPERF_FUZZ_UTIL_H
#define DLPERF_FUZZ_UTIL_H
#define _GNU_SOURCE 1 /* nftw's FTW_DEPTH / FTW_PHYS */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* not every harness uses every helper */
#define FUZZ_UNUSED __attribute__((unused))

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant or a failed harness step: a crash libFuzzer records (abort with why). */
#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant broken: ", __FILE__, __LINE__);                     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static char fuzz_dir[64];

FUZZ_UNUSED static int fuzz_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

FUZZ_UNUSED static void fuzz_rm_dir(void)
{
    if (fuzz_dir[0])
        nftw(fuzz_dir, fuzz_rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* The process's scratch directory (created once, removed at exit; a crash leaves it in $TMPDIR). */
FUZZ_UNUSED static const char *fuzz_tmpdir(void)
{
    if (!fuzz_dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%.40s/dlperf-fuzz-XXXXXX", t && *t ? t : "/tmp");
        FUZZ_CHECK(mkdtemp(fuzz_dir) != NULL, "mkdtemp %s failed", fuzz_dir);
        atexit(fuzz_rm_dir);
    }
    return fuzz_dir;
}

/* dir/name into out (size n). */
FUZZ_UNUSED static void fuzz_path(char *out, size_t n, const char *dir, const char *name)
{
    FUZZ_CHECK((size_t)snprintf(out, n, "%s/%s", dir, name) < n, "path too long");
}

/* Writes bytes to path (replacing it). */
FUZZ_UNUSED static void fuzz_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL, "cannot create %s", path);
    FUZZ_CHECK(size == 0 || fwrite(data, 1, size, f) == size, "cannot write %s", path);
    FUZZ_CHECK(fclose(f) == 0, "cannot write %s", path);
}

/* The seed directory when the harness runs in seed-writing mode, else NULL. */
FUZZ_UNUSED static const char *fuzz_seed_dir(void)
{
    const char *d = getenv("FUZZ_WRITE_SEEDS");
    return d && *d ? d : NULL;
}

/* Writes one seed DIR/name. */
FUZZ_UNUSED static void fuzz_seed(const char *dir, const char *name, const void *data, size_t size)
{
    char path[4096];
    fuzz_path(path, sizeof path, dir, name);
    fuzz_write_file(path, data, size);
}

/* The input as a NUL-terminated string (malloc'd): readers of text take C strings. */
FUZZ_UNUSED static char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    FUZZ_CHECK(s != NULL, "out of memory");
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}
#endif
