/* bench/allreduce_series.c — how steady one allreduce is on this host, minute by minute.
 *
 * A data-parallel prediction prices the gradients' allreduce from a communication
 * calibration taken minutes before the run. Whether "within 10%" can be shown at all
 * depends on how much the collective's own speed moves between two such moments, which
 * this measures with no dlperf code in the way: one buffer (advised for huge pages, as
 * dlperf's kernel buffers are), glibc's mmap and trim thresholds raised as
 * comm_reuse_collective_buffers raises them (the MPI library's temporaries reused), and
 * per sample: every rank reads 64 MiB (caches cold, as after backward), a barrier, one
 * in-place MPI_Allreduce of floats, the slowest rank's time. It prints one CSV line per
 * window (its samples' p10, median and p90) and a summary with the windows' medians'
 * spread, to stdout from rank 0.
 *
 *   mpicc -O2 bench/allreduce_series.c -o build/bench/allreduce_series   (or: make bench)
 *   mpirun -np 4 --oversubscribe build/bench/allreduce_series [BYTES [SECONDS [WINDOW_S [FLUSH]]]]
 *
 * Defaults: 33,570,816 bytes (basic-lstm's gradients), 60 s, 5 s windows, FLUSH `map` (the
 * 64 MiB read from a mapping of its own); `heap` reads a huge-page-advised heap block
 * instead (written out here rather than taken from ops_buffer_alloc, to keep dlperf's code
 * out), where dlperf's calibration has its flush buffer under mpirun. On the 2-vCPU EPYC
 * Zen 4 VM (docs/accuracy.md, "The collective alone, minute by minute" and "The flush
 * buffer out of the heap"): 20 s runs minutes apart moved by x1.14-1.58 at np=4 and
 * x1.20-1.24 at np=2, and the heap flush slowed the collective after it by 7-45% at np=4
 * and 19-54% at np=2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { MAX_SAMPLES = 1 << 20 };
static const size_t FLUSH_BYTES = (size_t)64 << 20; /* twice the 32 MiB L3 of the VMs measured */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* p-th quantile (0..1) of sorted v[0..n) by the nearest rank */
static double quantile(const double *v, int n, double p)
{
    int i = (int)(p * (n - 1) + 0.5);
    return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/* a number in [min, max] from arg, else -1 (rank 0 says why: every rank parses) */
static int parse_number(const char *arg, const char *what, double min, double max, const char *valid, int say,
                        double *out)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (!*arg || *end || errno || !(v >= min && v <= max)) {
        if (say)
            fprintf(stderr, "allreduce_series: %s '%s': give %s\n", what, arg, valid);
        return -1;
    }
    *out = v;
    return 0;
}

static void *buffer(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    return p;
}

/* Prints the window's quantiles; adds its median to medians[] while it has room. */
static void report_window(double *w, int n, double start_s, double *medians, int *nmed, int cap)
{
    if (n == 0)
        return;
    qsort(w, (size_t)n, sizeof *w, cmp_double);
    const double med = quantile(w, n, 0.5);
    printf("%.1f,%d,%.3f,%.3f,%.3f\n", start_s, n, 1e3 * quantile(w, n, 0.1), 1e3 * med, 1e3 * quantile(w, n, 0.9));
    fflush(stdout);
    if (*nmed < cap)
        medians[(*nmed)++] = med;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double bytes_d = 33570816, seconds = 60, window_s = 5;
    const int say = rank == 0;
    int bad = argc > 5, heap = 0;
    if (bad && say)
        fprintf(stderr, "allreduce_series: usage: allreduce_series [BYTES [SECONDS [WINDOW_S [map|heap]]]]\n");
    if (!bad && argc > 1)
        bad = parse_number(argv[1], "BYTES", 4, 4.0 * 2147483647.0,
                           "a byte count from 4 to 8589934588 (one MPI count of floats), e.g. 33570816", say, &bytes_d);
    if (!bad && argc > 2)
        bad = parse_number(argv[2], "SECONDS", 1e-3, 86400, "seconds to run, e.g. 60", say, &seconds);
    if (!bad && argc > 3)
        bad = parse_number(argv[3], "WINDOW_S", 0.1, 86400, "seconds a window (0.1 or more), e.g. 5", say, &window_s);
    if (!bad && argc > 4) {
        heap = strcmp(argv[4], "heap") == 0;
        bad = !heap && strcmp(argv[4], "map") != 0;
        if (bad && say)
            fprintf(stderr, "allreduce_series: FLUSH '%s': give map or heap\n", argv[4]);
    }
    if (bad) {
        MPI_Finalize();
        return 2;
    }
    mallopt(M_MMAP_THRESHOLD, 1 << 30); /* as ops/comm.c: the MPI library's temporaries reused */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    const size_t n = (size_t)bytes_d / sizeof(float);
    float *buf = buffer(n * sizeof(float));
    /* heap: aligned and advised as ops_buffer_alloc does it (huge pages either way) */
    unsigned long *flush = heap ? aligned_alloc((size_t)2 << 20, FLUSH_BYTES) : buffer(FLUSH_BYTES);
    if (heap && flush)
        (void)madvise(flush, FLUSH_BYTES, MADV_HUGEPAGE);
    int failed = !buf || !flush, any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_failed) {
        if (rank == 0)
            fprintf(stderr, "allreduce_series: cannot map %.0f + %zu bytes on some rank\n", bytes_d, FLUSH_BYTES);
        MPI_Finalize();
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        buf[i] = 1.0f; /* repeated sums grow to inf: no slower on x86 */
    const size_t words = FLUSH_BYTES / sizeof *flush;
    for (size_t i = 0; i < words; i++)
        flush[i] = i;
    double *window = rank == 0 ? malloc(MAX_SAMPLES * sizeof *window) : NULL;
    const int cap = (int)(seconds / window_s) + 2;
    double *medians = rank == 0 ? malloc((size_t)cap * sizeof *medians) : NULL;
    if (rank == 0 && (!window || !medians)) {
        fprintf(stderr, "allreduce_series: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) {
        printf("# %.0f-byte in-place MPI_Allreduce (float sum), %d ranks, %.0f s in %.0f s windows, flush from "
               "the %s; times in ms\n", bytes_d, size, seconds, window_s, heap ? "heap" : "mapping");
        printf("window_start_s,samples,p10_ms,median_ms,p90_ms\n");
    }
    volatile unsigned long sink = 0;
    const double t_start = MPI_Wtime();
    double w_start = 0;
    int nw = 0, nmed = 0;
    for (;;) {
        double elapsed = MPI_Wtime() - t_start;
        MPI_Bcast(&elapsed, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); /* rank 0's clock decides for all */
        if (rank == 0 && (elapsed - w_start >= window_s || elapsed >= seconds || nw == MAX_SAMPLES)) {
            report_window(window, nw, w_start, medians, &nmed, cap);
            nw = 0;
            w_start = elapsed;
        }
        if (elapsed >= seconds)
            break;
        unsigned long s = 0;
        for (size_t i = 0; i < words; i += 8) /* a line each: every level loses the buffer */
            s += flush[i];
        sink += s;
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double t = MPI_Wtime() - t0, slowest = 0;
        MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            window[nw++] = slowest;
    }
    if (rank == 0 && nmed > 0) {
        qsort(medians, (size_t)nmed, sizeof *medians, cmp_double);
        printf("# windows' medians: %.3f to %.3f ms (x%.2f) over %d windows\n", 1e3 * medians[0],
               1e3 * medians[nmed - 1], medians[nmed - 1] / medians[0], nmed);
    }
    free(window);
    free(medians);
    munmap(buf, n * sizeof(float));
    if (heap)
        free(flush);
    else
        munmap(flush, FLUSH_BYTES);
    MPI_Finalize();
    return 0;
}
