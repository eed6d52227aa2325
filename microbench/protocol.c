/* microbench/protocol.c — the measurement protocol: clock and its resolution, sample
 * statistics (GSL), and mb_time_op, which allocates, fills, warms up, times and then
 * validates one operation descriptor (STREAM/OSU habit: validation outside the timed region).
 */
#include "microbench/mb.h"
#include "ops/comm.h"
#include "ops/kernels.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>     /* CLFLUSHOPT's feature bit */
#include <immintrin.h> /* _mm_clflushopt */
#endif

/* Buffers are aligned for AVX-512 loads and so that no two buffers share a cache line. */
enum { MB_ALIGN = 64 };

/* Buffers of at least this many values are filled by all threads (the values do not
 * depend on the thread count: each is a function of its index). */
enum { MB_FILL_CHUNK = 1 << 16 };

/* Points checked by op_spot_check besides the first and last element of each output. */
enum { MB_SPOT_SAMPLES = 64 };

/* Seed of the input data and of the spot check; fixed so calibrations are reproducible. */
static const uint64_t MB_SEED = 0x646c70657266ULL; /* "dlperf" */

/* Upper bound on `inner`: keeps a kernel that reports 0 s (broken clock) from spinning. */
static const long MB_INNER_MAX = 1L << 24;

const char *mb_mode_name(MbMode m)
{
    static const char *const names[MB_MODE_COUNT] = {"quick", "default", "full"};
    return m >= 0 && m < MB_MODE_COUNT ? names[m] : "?";
}

MbProtocol mb_protocol(MbMode mode)
{
    /* Sample counts and time targets are sized so that the quick lists finish well within
     * a minute and the default lists (some 1,800 kernels with the suite's model ops) within
     * 15 minutes on a 2-core machine (~150 GFLOP/s, ~15 GB/s): small kernels stop at the
     * time target or earlier once the confidence interval is tight (on a shared 2-core VM
     * a 2% interval took the 50-sample cap for half the model ops: 20 minutes); a kernel
     * that runs a quarter of a second or more per execution varies by a few % at most
     * between executions, so it is warmed up once and sampled long_min_reps times. The
     * time target counts the cache flush before each cold sample, which reads twice the
     * LLC: 17 ms on a Xeon VM with a 260 MiB L3, where a 0.2 s quick target let the 118
     * element-wise kernels take 25 s and --quick 54-61 s (0.12 s: 48-55 s). */
    MbProtocol p;
    if (mode == MB_QUICK) {
        p = (MbProtocol){.mode = "quick", .warmups = 1, .min_reps = 3, .max_reps = 10, .min_sample_s = 1e-3,
                         .target_s = 0.12, .ci_frac = 0.05, .long_s = 0.25, .long_min_reps = 2, .rounds = 1,
                         .catchup_split = MB_CATCHUP_SPLIT};
    } else {
        p = (MbProtocol){.mode = mb_mode_name(mode), .warmups = 2, .min_reps = 5, .max_reps = 25,
                         .min_sample_s = 2e-3, .target_s = 0.5, .ci_frac = 0.03, .long_s = 0.25,
                         .long_min_reps = 3, .rounds = 1, .catchup_split = MB_CATCHUP_SPLIT};
    }
    return p;
}

double mb_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double mb_timer_resolution_s(void)
{
    /* clock_getres reports the nominal tick (1 ns on Linux with a TSC), which says nothing
     * about the cost of reading the clock; the smallest nonzero difference between
     * consecutive reads is what a timed interval can actually resolve. Take the larger. */
    struct timespec res;
    double nominal = 0.0;
    if (clock_getres(CLOCK_MONOTONIC, &res) == 0)
        nominal = (double)res.tv_sec + 1e-9 * (double)res.tv_nsec;

    /* Bounded in count and in time: a coarse clock (jiffies in some VMs) would otherwise
     * make this loop take seconds. */
    double best = INFINITY;
    struct timespec t_start;
    clock_gettime(CLOCK_MONOTONIC, &t_start);
    for (int i = 0; i < 2000; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        do {
            clock_gettime(CLOCK_MONOTONIC, &b);
        } while (b.tv_sec == a.tv_sec && b.tv_nsec == a.tv_nsec);
        double d = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
        if (d > 0 && d < best)
            best = d;
        if ((double)(b.tv_sec - t_start.tv_sec) + 1e-9 * (double)(b.tv_nsec - t_start.tv_nsec) > 0.01)
            break;
    }
    if (!isfinite(best))
        best = 1e-6;
    return best > nominal ? best : nominal;
}

void mb_row_stats(MeasurementRow *m, double *samples, int n, int inner, double *scratch)
{
    /* statistics on a copy: samples[] keeps the time order (drift is visible in the db) */
    memcpy(scratch, samples, (size_t)n * sizeof *scratch);
    MbStats st;
    mb_stats(scratch, n, &st);
    m->reps = n;
    m->inner = inner;
    m->median_s = st.median;
    m->min_s = st.min;
    m->max_s = st.max;
    m->mean_s = st.mean;
    m->stddev_s = st.stddev;
    m->ci95_lo_s = st.ci95_lo;
    m->ci95_hi_s = st.ci95_hi;
    m->samples = samples;
    m->nsamples = n;
}

/* Whether mb_pass_median leaves sample i out: its pass or the sample itself marked. */
static bool sample_marked(int i, const int *round, const bool *pass_off, const bool *sample_off)
{
    return (pass_off && pass_off[round ? round[i] : 0]) || (sample_off && sample_off[i]);
}

/* The medians of the passes' samples into medians (MB_MAX_ROUNDS of them at most), as
 * mb_pass_median takes them; returns how many. */
static int pass_medians(const double *samples, const int *round, int n, int rounds, const bool *pass_off,
                        const bool *sample_off, bool strict, double *scratch, double *medians)
{
    /* the marked passes and samples count only where there is no other (strict: never) */
    bool any_unmarked = strict;
    for (int i = 0; i < n && !any_unmarked; i++)
        any_unmarked = !sample_marked(i, round, pass_off, sample_off);
    int npass = 0;
    for (int r = 0; r < rounds && npass < MB_MAX_ROUNDS; r++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if ((round ? round[i] : 0) == r && !(any_unmarked && sample_marked(i, round, pass_off, sample_off)))
                scratch[k++] = samples[i];
        if (k == 0)
            continue;
        gsl_sort(scratch, 1, (size_t)k);
        medians[npass++] = gsl_stats_median_from_sorted_data(scratch, 1, (size_t)k);
    }
    return npass;
}

double mb_pass_median(const double *samples, const int *round, int n, int rounds, const bool *pass_off,
                      const bool *sample_off, double *scratch)
{
    double medians[MB_MAX_ROUNDS];
    const int npass = pass_medians(samples, round, n, rounds, pass_off, sample_off, false, scratch, medians);
    if (npass == 0)
        return 0;
    gsl_sort(medians, 1, (size_t)npass);
    return gsl_stats_median_from_sorted_data(medians, 1, (size_t)npass);
}

double mb_pass_split(const double *samples, const int *round, int n, int rounds, const bool *pass_off,
                     const bool *sample_off, double *scratch)
{
    double medians[MB_MAX_ROUNDS];
    const int npass = pass_medians(samples, round, n, rounds, pass_off, sample_off, true, scratch, medians);
    if (npass < 2)
        return 1;
    gsl_sort(medians, 1, (size_t)npass);
    return medians[0] > 0 ? medians[npass - 1] / medians[0] : 1;
}

void mb_stats(double *samples, int n, MbStats *out)
{
    if (n < 1) { /* programmer error (STYLE habit 5): always-on, with file:line */
        fprintf(stderr, "%s:%d: mb_stats: n = %d, need at least one sample\n", __FILE__, __LINE__, n);
        abort();
    }
    memset(out, 0, sizeof *out);
    gsl_sort(samples, 1, (size_t)n);
    out->n = n;
    out->min = samples[0];
    out->max = samples[n - 1];
    out->median = gsl_stats_median_from_sorted_data(samples, 1, (size_t)n);
    out->mean = gsl_stats_mean(samples, 1, (size_t)n);
    if (n > 1) {
        out->stddev = gsl_stats_sd(samples, 1, (size_t)n);
        /* Student t interval of the mean: mean +- t_{0.975, n-1} * s / sqrt(n). */
        double half = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * out->stddev / sqrt((double)n);
        out->ci95_lo = out->mean - half;
        out->ci95_hi = out->mean + half;
    } else {
        /* One sample has no spread estimate; a zero-width interval says "no information"
         * together with n = 1 rather than inventing one. */
        out->ci95_lo = out->ci95_hi = out->mean;
    }
}

/* ---- buffers ---- */

typedef struct {
    int n;
    OpBufInfo info[OP_MAX_BUFS];
    void *bufs[OP_MAX_BUFS];
    void *before[OP_MAX_BUFS]; /* snapshots of BUF_INOUT buffers for the spot check, and of
                                * a fresh input (rewritten before each sample) */
    size_t cap[OP_MAX_BUFS], before_cap[OP_MAX_BUFS]; /* allocated bytes */
    void *ws;
    size_t ws_cap;
} MbBuffers;

/* Blocks kept from one measurement to the next, so a calibration does not pay the
 * kernel for zeroing fresh pages of every multi-GiB buffer again (that was half of a
 * quick calibration). Best fit among free blocks; what the pool retains is capped at half
 * the memory available when it started, the largest blocks going back first. */
enum { MB_POOL_BLOCKS = 32 };
static struct {
    void *p;
    size_t cap;
} pool[MB_POOL_BLOCKS];
static int pool_n;
static double pool_budget; /* bytes; 0 = not yet set */

static double pool_bytes(void)
{
    double t = 0;
    for (int i = 0; i < pool_n; i++)
        t += (double)pool[i].cap;
    return t;
}

static void pool_drop(int i)
{
    ops_buffer_free(pool[i].p, pool[i].cap);
    pool[i] = pool[--pool_n];
}

static double mem_available(void)
{
    const double a = mem_available_bytes();
    return a > 0 ? a : 0; /* unknown: nothing is taken to fit */
}

/* A block of at least `bytes` (*cap: its real size), from the pool if one fits without
 * wasting more than 4x. A new block the machine cannot hold (with a tenth to spare) is
 * refused (NULL) after the idle pool was given back, rather than left to the OOM killer:
 * ranks calibrating together each allocate every kernel's buffers. */
static void *pool_take(size_t bytes, size_t *cap)
{
    int best = -1;
    for (int i = 0; i < pool_n; i++)
        if (pool[i].cap >= bytes && pool[i].cap / 4 <= bytes && (best < 0 || pool[i].cap < pool[best].cap))
            best = i;
    if (best >= 0) {
        void *p = pool[best].p;
        *cap = pool[best].cap;
        pool[best] = pool[--pool_n];
        return p;
    }
    *cap = bytes;
    double avail = mem_available();
    if (avail > 0 && (double)bytes > 0.9 * avail) {
        while (pool_n > 0)
            pool_drop(0);
        avail = mem_available();
        if (avail > 0 && (double)bytes > 0.9 * avail)
            return NULL;
    }
    return ops_buffer_alloc(bytes);
}

static void pool_give(void *p, size_t cap)
{
    if (!p)
        return;
    if (pool_budget == 0) { /* half the memory, shared by the ranks calibrating together */
        double avail = mem_available();
        pool_budget = avail > 0 ? avail / 2 / comm_env_local_size() : 1e9;
    }
    if (pool_n == MB_POOL_BLOCKS) { /* drop the smallest: cheapest to make again */
        int small = 0;
        for (int i = 1; i < pool_n; i++)
            if (pool[i].cap < pool[small].cap)
                small = i;
        pool_drop(small);
    }
    pool[pool_n].p = p;
    pool[pool_n].cap = cap;
    pool_n++;
    while (pool_n > 0 && pool_bytes() > pool_budget) {
        int big = 0;
        for (int i = 1; i < pool_n; i++)
            if (pool[i].cap > pool[big].cap)
                big = i;
        pool_drop(big);
    }
}

/* ---- cold caches ----
 * Inside a training step a memory-bound op finds its operands where the ops before it left
 * them: mostly evicted by the convolutions and GEMMs in between. Repeating the op on the
 * same buffers keeps them in cache and measured element-wise work 20-60% faster than the
 * same keys inside steps (validate --zoo). So memory-bound kinds whose data would
 * fit in the last-level cache are timed one execution per sample, each after every thread
 * has read a buffer of twice the LLC (untimed): their operands start in DRAM, as in a step.
 * Compute-bound kinds (GEMM and batched GEMM, convolution, sparse GEMM, the FMA peak) and
 * the bandwidth benchmarks of each memory level (membw, STREAM) keep warm repetitions, and
 * so do pooling and LRN, which in steps run on activations the previous op just wrote. A
 * GEMM (or BMM) with a dimension as small as a small batch is memory-bound, though: below
 * GEMM_COLD_INTENSITY it is timed cold like the memory-bound kinds. Measured (alexnet-owt at 16 per rank, np=2
 * --threads 1, traced against a warm calibration): the fully connected layers'
 * weight-gradient GEMMs (4096x4096x16, 9216x4096x16, a 64-151 MB output written from
 * cold) ran 22-59% slower in steps than their warm repetitions, the GEMMs 12% in all; one
 * process alone, flushed, 4096x4096x16 took 9.2 ms against 7.6 ms warm.
 * Convolutions below CONV_COLD_INTENSITY are timed cold too. ResNet-152 at batch 4
 * (validate --zoo) ran its convolutions 6-9% slower in steps than their warm repetitions:
 * the largest miss of the zoo, 81 of its 146 ms. Flushed against warm, one process alone
 * (a standalone harness), the convolution keys of five zoo models cost a median penalty
 * that fell with intensity: +15% below 32 FLOPs per byte, +7% at 32-64, +6% at 64-128,
 * +3.5% at 128-256, +2.5% at 256-512, +1.4% at 512-1024. Above it (large DeepBench
 * convolutions, seconds each) the warm time stands. A convolution's cold sample evicts the
 * op's own data rather than flushing the whole cache (SAMPLE_EVICTED, below). */
enum { GEMM_COLD_INTENSITY = 16 }; /* FLOPs per byte moved; this VM's DRAM balance is ~9 */
enum { CONV_COLD_INTENSITY = 1024 };

static bool below_intensity(const OpDesc *d, double flops_per_byte)
{
    const OpCost c = op_cost(d);
    return c.bytes > 0 && c.flops < flops_per_byte * c.bytes;
}

/* ---- fresh inputs ----
 * An activation reads the tensor the op before it has just written (a convolution or GEMM
 * and its bias, a batch norm; in backward, the gradient the layer above produced): partly
 * still in the last-level cache, however large the tensor. Warm repetitions price it all
 * cached (or, beyond the cache, all from DRAM) and cold samples all from DRAM; both
 * over-priced ReLU in steps by 30-90% (validate --zoo). So an activation is timed
 * one execution per sample, each after the caches are flushed and its input written again
 * from a copy (untimed): the producer's write, as in a step. */
static int fresh_input(const OpDesc *d)
{
    if (d->kind == OP_ACT)
        return d->u.act.in_place ? 0 : 1; /* x (fwd) or dy (bwd): over the output in place */
    return -1;
}

/* ---- handoff ----
 * The membw handoff kernel times a read of data every thread has just written
 * (membw_produce, untimed): what the op after a producer finds in the caches. It is timed
 * in steady state, the way a training step reuses its arenas: the same addresses written
 * and read again sample after sample, with no flush in between, so the working set's own
 * traffic is all that passed since the last write. Measured on the 2-core AMD EPYC VM
 * (32 MiB L3; a standalone test, two runs): 8 MiB written and read back after a
 * flush (a first touch, which no step after the first sees) ran at 29-39 GB/s, the same
 * in steady state at 66-75, as fast as a working set read again (42-69); at 32 MiB and
 * beyond all three are DRAM's. */
typedef enum { SAMPLE_WARM, SAMPLE_COLD, SAMPLE_EVICTED, SAMPLE_FRESH, SAMPLE_HANDOFF } SampleKind;

static SampleKind sample_kind(const OpDesc *d, double bytes)
{
    if (fresh_input(d) >= 0)
        return SAMPLE_FRESH;
    if (d->kind == OP_MEMBW && (d->u.membw.kind == MEMBW_HANDOFF || d->u.membw.kind == MEMBW_CROSS ||
                                d->u.membw.kind == MEMBW_RETAIN || d->u.membw.kind == MEMBW_SHARED))
        return SAMPLE_HANDOFF; /* cross: the same production, read by the next thread; retain:
                                * later; shared: read by the next thread, then rewritten */
    switch (d->kind) {
    case OP_GEMM:
    case OP_BMM: /* a loop of GEMMs: the GEMM's rule */
        if (below_intensity(d, GEMM_COLD_INTENSITY))
            break; /* as the memory-bound kinds */
        return SAMPLE_WARM;
    case OP_CONV2D:
        return below_intensity(d, CONV_COLD_INTENSITY) && bytes < 2.0 * (double)mb_llc_bytes()
                   ? SAMPLE_EVICTED
                   : SAMPLE_WARM;
    case OP_SPMM: case OP_PEAK_FMA: case OP_MEMBW: case OP_STREAM:
    case OP_POOL2D: case OP_LRN:
        return SAMPLE_WARM;
    default:
        break;
    }
    return bytes < 2.0 * (double)mb_llc_bytes() ? SAMPLE_COLD : SAMPLE_WARM;
}

static uint64_t *flush_buf;
static size_t flush_words;
static volatile uint64_t flush_sink; /* keeps the flush's reads from being optimised away */

void mb_flush_caches(void)
{
    if (!flush_buf) {
        flush_words = 2 * mb_llc_bytes() / sizeof(uint64_t);
        flush_buf = ops_buffer_alloc(flush_words * sizeof(uint64_t));
        if (!flush_buf)
            return;
        for (size_t i = 0; i < flush_words; i++)
            flush_buf[i] = i;
    }
    uint64_t sum = 0;
    /* every thread reads its part: each core's L1/L2 and the shared L3 lose the op's data */
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (size_t i = 0; i < flush_words; i += 8)
        sum += flush_buf[i];
    flush_sink = sum;
}

/* ---- evicting one op's data ----
 * A cold sample wants the op's operands in DRAM. Reading twice the LLC (mb_flush_caches)
 * does that for everything, in 17-20 ms on the 260 MiB-L3 Xeon VM this was written on:
 * with ~7 cold samples of each of the default calibration's 664 convolutions, 80-90 s of
 * its 15 minutes. CLFLUSHOPT over the op's own buffers and workspace costs what the op's
 * data costs: 0.2-3 ms for the zoo's convolutions (4-100 MB). It also evicts more surely:
 * over 62 of the zoo's convolution keys the median penalty against warm was +7.0% after
 * it and +4.9% after the read flush, whose reads leave some of the op's lines in a cache
 * that does not replace in strict LRU order. Kept for convolutions, whose time is far
 * above a TLB refill: the small memory-bound ops pay for their TLB and instruction-cache
 * misses in steps, which only the full flush reproduces, and small GEMMs timed both ways
 * differed by tens of % either way. CLFLUSH, the x86-64 baseline, is ordered and took
 * 10-170 ms for the same keys: without CLFLUSHOPT (and off x86) the full flush stands. */
#if defined(__x86_64__) && defined(__GNUC__)
static bool have_clflushopt(void)
{
    static int known = -1;
    if (known < 0) {
        unsigned a, b, c, d;
        known = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23)); /* CPUID.7.0:EBX.CLFLUSHOPT */
    }
    return known;
}

__attribute__((target("clflushopt"))) static void evict_range(const void *p, size_t bytes)
{
    const uintptr_t first = (uintptr_t)p & ~(uintptr_t)(MB_ALIGN - 1);
    const uintptr_t end = (uintptr_t)p + bytes;
    const long lines = (long)((end - first + MB_ALIGN - 1) / MB_ALIGN);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < lines; i++)
        _mm_clflushopt((void *)(first + (uintptr_t)i * MB_ALIGN));
    _mm_sfence(); /* the flushes complete before the timed op starts */
}
#endif

/* The op's buffers and workspace out of every cache level (the full flush where the CPU
 * cannot). */
static void evict_op_data(const MbBuffers *b)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (have_clflushopt()) {
        for (int i = 0; i < b->n; i++)
            evict_range(b->bufs[i], b->info[i].bytes);
        if (b->ws)
            evict_range(b->ws, b->ws_cap);
        return;
    }
#endif
    mb_flush_caches();
}

void mb_release(void)
{
    while (pool_n > 0)
        pool_drop(0);
    ops_buffer_free(flush_buf, flush_words * sizeof(uint64_t));
    flush_buf = NULL;
}

static void buffers_free(MbBuffers *b)
{
    for (int i = 0; i < OP_MAX_BUFS; i++) {
        pool_give(b->bufs[i], b->cap[i]);
        pool_give(b->before[i], b->before_cap[i]);
        b->bufs[i] = b->before[i] = NULL;
    }
    pool_give(b->ws, b->ws_cap);
    b->ws = NULL;
}

static size_t round_up(size_t bytes)
{
    /* aligned_alloc wants a multiple of the alignment; 0-byte buffers still get a line. */
    size_t r = (bytes + MB_ALIGN - 1) / MB_ALIGN * MB_ALIGN;
    return r ? r : MB_ALIGN;
}

/* Value range of float buffer i of d: inputs a kernel of this kind would see in training,
 * so that no path (NaN, denormal, saturation) is timed that training would not take. */
static void fill_range(const OpDesc *d, int i, float *lo, float *hi, bool *relu_clamp)
{
    *lo = -1.0f;
    *hi = 1.0f;
    *relu_clamp = false;
    switch (d->kind) {
    case OP_RMSPROP:
        if (i == 1) { /* the accumulator of squared gradients is positive */
            *lo = 0.1f;
            *hi = 1.0f;
        }
        break;
    case OP_ACT:
        if (d->phase == PHASE_BWD_DATA && i == (d->u.act.in_place ? 1 : 2)) { /* y: an output of the activation */
            if (d->u.act.act == ACT_SIGMOID) {
                *lo = 0.01f;
                *hi = 0.99f;
            } else if (d->u.act.act == ACT_TANH) {
                *lo = -0.99f;
                *hi = 0.99f;
            } else if (d->u.act.act == ACT_RELU) {
                *relu_clamp = true; /* half zeros, as after a real ReLU */
            } /* GELU's backward reads its input x: any value */
        }
        break;
    case OP_SOFTMAX_XENT:
        if (d->phase == PHASE_BWD_DATA && i == 1) { /* probabilities */
            *lo = 0.0f;
            *hi = 1.0f;
        }
        break;
    case OP_LSTM_CELL:
        if (d->phase == PHASE_BWD_DATA && i == 4) { /* saved gate activations */
            *lo = 0.0f;
            *hi = 1.0f;
        }
        break;
    case OP_BATCHNORM:
        /* variances and inverse standard deviations are positive: training forward's
         * run_var (4), inference's run_var (5), backward's invstd (5) */
        if ((d->u.bn.training && d->phase == PHASE_FWD && i == 4) || (!d->u.bn.training && i == 5) ||
            (d->phase != PHASE_FWD && i == 5)) {
            *lo = 0.5f;
            *hi = 1.5f;
        }
        break;
    case OP_KL_SPARSITY: /* sigmoid activations and their means lie in (0, 1) */
        if ((d->phase == PHASE_FWD && i == 2) || (d->phase == PHASE_BWD_DATA && i == 1)) {
            *lo = 0.01f;
            *hi = 0.99f;
        }
        break;
    case OP_GRU_CELL:
        if (d->phase == PHASE_BWD_DATA && i == 3) { /* saved r, z, n, hn: gate values */
            *lo = 0.0f;
            *hi = 1.0f;
        }
        break;
    case OP_ADAM:
    case OP_ADAMW:
        if (i == 2) { /* second moments are non-negative */
            *lo = 0.0f;
            *hi = 1.0f;
        }
        break;
    case OP_LAYERNORM:
        if (d->phase != PHASE_FWD && i == 5) { /* saved rstd, positive */
            *lo = 0.5f;
            *hi = 1.5f;
        }
        break;
    case OP_SOFTMAX:
        if (d->phase == PHASE_BWD_DATA && i == 2) { /* the forward's probabilities */
            *lo = 0.0f;
            *hi = 1.0f;
        }
        break;
    case OP_BINARY: /* pow's base positive, div's divisor away from 0 */
        if ((d->u.binary.op == BIN_POW && i == (d->phase == PHASE_FWD ? 1 : 3)) ||
            (d->u.binary.op == BIN_DIV && i == (d->phase == PHASE_FWD ? 2 : 4))) {
            *lo = 0.5f;
            *hi = 1.5f;
        }
        break;
    case OP_SCALAR:
        if (d->u.scalar.op == BIN_POW && i == (d->phase == PHASE_FWD ? 1 : 2)) {
            *lo = 0.5f;
            *hi = 1.5f;
        }
        break;
    default:
        break;
    }
}

/* Values of int32 buffer i: class labels, token ids below the vocabulary, or a counter. */
static unsigned long int_range(const OpDesc *d)
{
    if (d->kind == OP_SOFTMAX_XENT && d->u.xent.classes > 0)
        return (unsigned long)d->u.xent.classes;
    if (d->kind == OP_EMBEDDING && d->u.embed.vocab > 0)
        return (unsigned long)d->u.embed.vocab;
    return 1000; /* dropout's step counter: any step */
}

/* Value j of the stream `seed`: a counter-based generator (splitmix64's finaliser of
 * seed + j), so any element can be drawn independently of the others, by any thread, in a
 * loop the compiler vectorises. A GSL generator (sequential state behind a function
 * pointer) made the fills of P1B1's gigabyte buffers a quarter of a quick calibration. */
static inline uint64_t fill_bits(uint64_t seed, uint64_t j)
{
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (j + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Fills buffer i with seeded values: floats uniform in its fill_range, integers uniform
 * below int_range. Every value is drawn: filling by tiling one drawn chunk over the buffer
 * was faster, but made RMSprop over P1B1's 244M parameters time 20% faster than on drawn
 * (or real) values, for reasons not understood; a measurement must not depend on such
 * artefacts. */
static int buffer_fill(const OpDesc *d, MbBuffers *b, int i, uint64_t seed)
{
    const OpBufInfo *bi = &b->info[i];
    const size_t count = bi->bytes / 4; /* float and int32 are both 4 bytes */
    float lo, hi;
    bool relu_clamp;
    fill_range(d, i, &lo, &hi, &relu_clamp);
    const uint64_t classes = int_range(d);
    if (bi->type == BUF_INT32) {
        /* labels, token ids or a step counter: any value in [0, classes) */
        int32_t *p = b->bufs[i];
#pragma omp parallel for schedule(static) if (count >= MB_FILL_CHUNK)
        for (size_t j = 0; j < count; j++)
            p[j] = (int32_t)(fill_bits(seed, j) % classes);
    } else {
        float *p = b->bufs[i];
        const float scale = (hi - lo) / 16777216.0f; /* 24 random bits: every float step of [0, 1) */
#pragma omp parallel for schedule(static) if (count >= MB_FILL_CHUNK)
        for (size_t j = 0; j < count; j++) {
            const float v = lo + scale * (float)(fill_bits(seed, j) >> 40);
            p[j] = relu_clamp && v < 0.0f ? 0.0f : v;
        }
    }
    return 0;
}

/* Fills every buffer (outputs too: accumulating and in-place kernels read them), or with
 * written_only just those a kernel writes: op_run never writes a BUF_IN buffer, so after
 * timing only those have drifted, and refilling 256 MiB inputs twice would double the
 * set-up cost of the large element-wise kernels. For max pooling backward the saved
 * forward output y must be the max of x's windows, so it is computed by the forward
 * kernel rather than drawn at random. */
static int buffers_fill(const OpDesc *d, MbBuffers *b, bool written_only)
{
    for (int i = 0; i < b->n; i++) {
        if (written_only && b->info[i].role == BUF_IN)
            continue;
        if (buffer_fill(d, b, i, MB_SEED + 7919u * (uint64_t)i) != 0)
            return -1;
    }
    if (!written_only && d->kind == OP_POOL2D && d->phase == PHASE_BWD_DATA) {
        OpDesc fwd = *d;
        fwd.phase = PHASE_FWD;
        fwd.u.pool.accumulate = false;
        void *fb[OP_MAX_BUFS] = {b->bufs[3], b->bufs[2]}; /* y | x */
        op_run(&fwd, fb, b->ws);
    }
    /* a sparse matrix's structure is a CSR pattern, not random integers */
    if (!written_only && d->kind == OP_SPMM)
        spmm_make_pattern(b->bufs[3], b->bufs[2], &d->u.spmm, MB_SEED);
    /* LRN backward reads the forward's output and scale: computed, not drawn */
    if (!written_only && d->kind == OP_LRN && d->phase == PHASE_BWD_DATA) {
        OpDesc fwd = *d;
        fwd.phase = PHASE_FWD;
        fwd.u.lrn.accumulate = false;
        void *fb[OP_MAX_BUFS] = {b->bufs[3], b->bufs[4], b->bufs[2]}; /* y | scale | x */
        op_run(&fwd, fb, b->ws);
    }
    return 0;
}

static size_t workspace_bytes(const OpDesc *d)
{
    size_t ws = op_workspace_bytes(d);
    if (d->kind == OP_POOL2D && d->phase == PHASE_BWD_DATA) { /* the forward runs first */
        OpDesc fwd = *d;
        fwd.phase = PHASE_FWD;
        size_t wf = op_workspace_bytes(&fwd);
        ws = wf > ws ? wf : ws;
    }
    return ws;
}

/* Every buffer, snapshot and workspace the kernel needs, in bytes. */
/* ---- who checks the results ----
 * The ranks of a node measure the same kernel on the same seeded data, so one of them
 * checking the results is as good as all: the checking rank (rank 0, which stores the
 * rows; the only process without mpirun) keeps a snapshot of every in-out buffer for its
 * spot check, the others do not. Snapshots on every rank left P1B1's 244M-parameter
 * RMSprop update (4.55 GiB with snapshots, 2.73 without) unmeasured at np=4, priced at
 * 688 ms by the fit where training runs it in 487 ms. */
static bool checks_results(void) { return comm_rank() == 0; }

/* Buffers that keep a copy: an in-out buffer on the checking rank (the state before the
 * run, for the spot check) and a fresh input (written again before each sample). */
static bool keeps_snapshot(const OpDesc *d, const OpBufInfo *info, int i, bool checking)
{
    return (checking && info[i].role == BUF_INOUT) || i == fresh_input(d);
}

/* This rank's share of the bytes the node's ranks allocate for the kernel together: its
 * own buffers and fresh-input copies, and the checking rank's snapshots spread over the
 * ranks (they are one rank's, not every rank's). */
double mb_kernel_share_bytes(const OpDesc *d, int ranks)
{
    OpBufInfo info[OP_MAX_BUFS];
    const int n = op_buffer_info(d, info);
    double total = (double)round_up(workspace_bytes(d));
    for (int i = 0; i < n; i++) {
        const double sz = (double)round_up(info[i].bytes);
        total += sz;
        if (keeps_snapshot(d, info, i, false))
            total += sz;
        else if (keeps_snapshot(d, info, i, true))
            total += sz / (ranks > 1 ? ranks : 1);
    }
    return total;
}

/* 0, or MB_DOES_NOT_FIT when the kernel's buffers exceed this process's share of the
 * memory: what is available divided by the ranks on this node, which allocate the same
 * buffers at the same moment; the idle pool is given back first where that share is too
 * small. Pages are only counted once they are touched, so a check per buffer as it is
 * allocated would pass on every rank and leave the filling to the OOM killer (np=4
 * calibrations of P1B1's 0.9 GiB updates died so). The pool counts as available only once
 * it is given back: counted while kept, two ranks each held ~5.7 GiB of idle pool plus new
 * buffers sized against it, and an np=2 calibration of 23 GiB died at 12.4 GiB on rank 0. */
static int buffers_fit(const OpDesc *d, char *err, size_t errlen)
{
    const double ranks = comm_env_local_size(), need = mb_kernel_share_bytes(d, (int)ranks);
    double share = mem_available() / ranks;
    if (need <= 0.9 * share)
        return 0;
    while (pool_n > 0)
        pool_drop(0);
    share = mem_available() / ranks;
    if (need <= 0.9 * share)
        return 0;
    snprintf(err, errlen, "needs %.2f GiB of buffers; %.2f GiB available%s", need / 1073741824.0,
             share / 1073741824.0, ranks > 1 ? " per rank (the node's ranks measure together)" : "");
    return MB_DOES_NOT_FIT;
}

static int buffers_alloc(const OpDesc *d, MbBuffers *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    b->n = op_buffer_info(d, b->info);
    for (int i = 0; i < b->n; i++) {
        size_t sz = round_up(b->info[i].bytes);
        const bool snapshot = keeps_snapshot(d, b->info, i, checks_results());
        b->bufs[i] = pool_take(sz, &b->cap[i]);
        if (b->bufs[i] && snapshot)
            b->before[i] = pool_take(sz, &b->before_cap[i]);
        if (!b->bufs[i] || (snapshot && !b->before[i])) {
            snprintf(err, errlen, "out of memory allocating buffer %s (%.2f GiB; %.2f GiB available%s)",
                     b->info[i].name, b->info[i].bytes / 1073741824.0, mem_available() / 1073741824.0,
                     comm_env_local_size() > 1 ? ", shared by the ranks on this node" : "");
            return -1;
        }
    }
    const size_t ws = workspace_bytes(d);
    if (ws > 0) {
        b->ws = pool_take(round_up(ws), &b->ws_cap);
        if (!b->ws) {
            snprintf(err, errlen, "out of memory allocating workspace (%zu bytes)", ws);
            return -1;
        }
    }
    return 0;
}

/* ---- timing ---- */

/* Caches as a sample of this kind starts: left as the last sample left them (warm), flushed
 * (cold), the op's own data evicted (evicted), flushed and then the fresh input written
 * (fresh), or the working set rewritten by every thread, unflushed (handoff). */
static void prepare_sample(const OpDesc *d, SampleKind kind, MbBuffers *b, int fresh)
{
    if (kind == SAMPLE_WARM)
        return;
    if (kind == SAMPLE_EVICTED) {
        evict_op_data(b);
        return;
    }
    if (kind == SAMPLE_HANDOFF) {
        membw_produce(b->bufs[1], &d->u.membw);
        if (d->u.membw.kind == MEMBW_SHARED)
            membw_share(b->bufs[1], &d->u.membw);
        if (d->u.membw.idle_us > 0)
            membw_idle(&d->u.membw);
        return;
    }
    mb_flush_caches();
    if (kind == SAMPLE_FRESH)
        memcpy(b->bufs[fresh], b->before[fresh], b->info[fresh].bytes);
}

/* Seconds taken by `inner` back-to-back executions. */
static double time_inner(const OpDesc *d, MbBuffers *b, long inner)
{
    double t0 = mb_now_s();
    for (long i = 0; i < inner; i++)
        op_run(d, b->bufs, b->ws);
    return mb_now_s() - t0;
}

/* ---- warm prices of cold-timed kernels ----
 * A memory-bound op whose data another op touched a moment ago (a bias on the tensor the
 * GEMM just wrote, a whole step of a small model) finds it in the last-level cache, and
 * the cold protocol over-prices it: 2-5x for the small models' ops, and ~10 us for an op
 * of a few hundred floats, which cold pays in TLB and instruction-cache misses (validate
 * --zoo). So a kernel timed cold or fresh is also timed warm: one execution per sample
 * right after the previous one (a fresh input is written again, untimed, before each: an
 * in-place backward activation repeated would decay into denormals). The predictor's cache
 * model prices each op between the two by how much of its data is still in the cache at
 * that point of the step. No warm-up: the last cold sample has just run the op, leaving
 * its data where an execution leaves it. GEMMs and convolutions, whose times vary little,
 * take MB_WARM_MIN_SAMPLES warm samples; the others stop early, after as many, once they
 * add up to a tenth of the sampling time target: with the convolutions timed cold as well,
 * nine warm executions of each and a flush before each cold sample took the default
 * calibration from 685 s to 925 s.
 *
 * Settling: one execution after a cold sample does not leave a working set of megabytes
 * where a step leaves it. On the Zen 4 VM (32 MiB L3, a victim cache of the cores' L2s),
 * SGD over 2.1M and 3.4M parameters (25, 41 MB moved) ran after a flush at 182-278 and
 * 282-490 us, then 112-147 and 231-293, and settled only at the fourth or fifth execution
 * (90-96, 160-250 us); the calibration's three warm samples caught the second to fourth
 * (234, 474 us) and P3B1's update, 266 us in its near steps, was priced 629. So
 * a memory-bound kernel whose data is within twice the last-level cache runs
 * MB_WARM_SETTLE untimed executions before its warm samples; GEMMs and convolutions (whose
 * arithmetic hides the transient) and long kernels (DRAM-sized) do not. */
enum { MB_WARM_SAMPLES = 9, MB_WARM_MIN_SAMPLES = 3, MB_WARM_SETTLE = 3 };

static double time_warm(const OpDesc *d, MbBuffers *b, int fresh, int settle, int samples, const MbProtocol *p,
                        double *scratch)
{
    int n = p->max_reps < samples ? p->max_reps : samples;
    if (n < 1)
        n = 1;
    for (int i = 0; i < settle; i++) {
        if (fresh >= 0)
            memcpy(b->bufs[fresh], b->before[fresh], b->info[fresh].bytes);
        (void)time_inner(d, b, 1);
    }
    double *t = scratch; /* max_reps long */
    double spent = 0;
    for (int i = 0; i < n; i++) {
        if (fresh >= 0)
            memcpy(b->bufs[fresh], b->before[fresh], b->info[fresh].bytes);
        const double s = time_inner(d, b, 1);
        t[i] = s;
        spent += s;
        if (i + 1 >= MB_WARM_MIN_SAMPLES && spent >= 0.1 * p->target_s) {
            n = i + 1;
            break;
        }
    }
    MbStats st;
    mb_stats(t, n, &st);
    return st.median;
}

int mb_time_op(const OpDesc *d, const MbProtocol *p, int threads, MeasurementRow *m,
               double *samples, char *err, size_t errlen)
{
    return mb_time_op_probed(d, p, threads, m, samples, NULL, err, errlen);
}

int mb_time_op_probed(const OpDesc *d, const MbProtocol *p, int threads, MeasurementRow *m, double *samples,
                      double *sample_rtt_ns, char *err, size_t errlen)
{
    int rc = -1;
    MbBuffers b;
    double *sorted = NULL;
    memset(&b, 0, sizeof b);
    memset(m, 0, sizeof *m);
    op_key(d, m->key);
    snprintf(m->kind, sizeof m->kind, "%s", op_kind_name(d->kind));
    snprintf(m->phase, sizeof m->phase, "%s", op_phase_name(d->phase));
    m->threads = threads;
    m->warmups = p->warmups > 1 ? p->warmups : 1; /* at least one: it sizes `inner` */
    OpCost cost = op_cost(d);
    m->flops = cost.flops;
    m->bytes = cost.bytes;

    if (p->min_reps < 1 || p->max_reps < p->min_reps) {
        snprintf(err, errlen, "bad protocol: min_reps %d, max_reps %d (need 1 <= min <= max)",
                 p->min_reps, p->max_reps);
        goto cleanup;
    }
    sorted = malloc((size_t)p->max_reps * sizeof *sorted);
    if (!sorted) {
        snprintf(err, errlen, "out of memory allocating %d samples", p->max_reps);
        goto cleanup;
    }
    ops_set_threads(threads);
    if ((rc = buffers_fit(d, err, errlen)) != 0)
        goto cleanup;
    rc = -1;
    if (buffers_alloc(d, &b, err, errlen) != 0)
        goto cleanup;
    if (buffers_fill(d, &b, false) != 0) {
        snprintf(err, errlen, "out of memory allocating a random number generator");
        goto cleanup;
    }

    /* Warm-ups (discarded): page faults, OpenBLAS thread start-up, caches. The fastest of
     * them estimates one execution, which sizes `inner`. */
    const SampleKind kind = sample_kind(d, cost.bytes);
    const int fresh = fresh_input(d);
    if (kind == SAMPLE_FRESH)
        memcpy(b.before[fresh], b.bufs[fresh], b.info[fresh].bytes);
    double t_one = INFINITY;
    int min_reps = p->min_reps;
    for (int i = 0; i < p->warmups || i < 1; i++) {
        prepare_sample(d, kind, &b, fresh);
        double t = time_inner(d, &b, 1);
        if (t < t_one)
            t_one = t;
        if (p->long_s > 0 && t >= p->long_s) { /* one warm-up is plenty for a long kernel */
            m->warmups = i + 1;
            if (p->long_min_reps < min_reps)
                min_reps = p->long_min_reps;
            break;
        }
    }
    /* A sample must be long against the clock's resolution (1000x keeps the quantisation
     * error at 0.1%) and against p->min_sample_s. */
    double res = mb_timer_resolution_s();
    double min_sample = p->min_sample_s > 1000.0 * res ? p->min_sample_s : 1000.0 * res;
    long inner = 1;
    if (t_one < min_sample && kind == SAMPLE_WARM) { /* else one execution per sample */
        /* The warm-up estimate of a tiny kernel is inflated by the first run's cold caches,
         * so confirm with full batches (also discarded) until one is long enough. */
        double per = t_one > res ? t_one : res;
        for (int tries = 0; tries < 8; tries++) {
            double want = ceil(1.2 * min_sample / per);
            inner = want > (double)MB_INNER_MAX ? MB_INNER_MAX : (long)want;
            if (inner < 1)
                inner = 1;
            double t = time_inner(d, &b, inner);
            if (t >= min_sample || inner == MB_INNER_MAX)
                break;
            per = t > 0.0 ? t / (double)inner : per / 2.0;
        }
    }

    /* Timed samples. */
    int reps = 0;
    double start = mb_now_s();
    MbStats st;
    double rtt_before = sample_rtt_ns ? mb_core_rtt_ns(threads) : 0;
    for (;;) {
        prepare_sample(d, kind, &b, fresh);
        samples[reps] = time_inner(d, &b, inner) / (double)inner;
        if (sample_rtt_ns) {
            const double rtt_after = mb_core_rtt_ns(threads);
            sample_rtt_ns[reps] = fmax(rtt_before, rtt_after);
            rtt_before = rtt_after;
        }
        reps++;
        if (reps >= p->max_reps)
            break;
        if (reps < min_reps)
            continue;
        if (mb_now_s() - start >= p->target_s)
            break;
        memcpy(sorted, samples, (size_t)reps * sizeof *sorted);
        mb_stats(sorted, reps, &st);
        if (0.5 * (st.ci95_hi - st.ci95_lo) <= p->ci_frac * st.median)
            break;
    }
    mb_row_stats(m, samples, reps, (int)inner, sorted);
    if (kind == SAMPLE_COLD || kind == SAMPLE_EVICTED || kind == SAMPLE_FRESH) {
        /* a long kernel varies little: as few warm samples as its cold ones; so do GEMMs
         * and convolutions, at the minimum; in rounds, each pass takes its share */
        const bool long_kernel = p->long_s > 0 && t_one >= p->long_s;
        const bool compute_kernel = d->kind == OP_GEMM || d->kind == OP_BMM || d->kind == OP_CONV2D;
        const int share = MB_WARM_SAMPLES / (p->rounds > 1 ? p->rounds : 1);
        const int n = long_kernel                                     ? p->long_min_reps
                      : compute_kernel || share < MB_WARM_MIN_SAMPLES ? MB_WARM_MIN_SAMPLES
                                                                      : share;
        const bool settles = !compute_kernel && !long_kernel && cost.bytes <= 2.0 * (double)mb_llc_bytes();
        m->warm_s = time_warm(d, &b, fresh, settles ? MB_WARM_SETTLE : 0, n, p, sorted);
    }

    /* Validation, outside the timed region, by the checking rank (the others computed the
     * same thing on the same data; a wrong result there stops them all through the
     * caller's failure vote). Timing may have let accumulating and in-place buffers drift,
     * so start again from fresh values (the same seeds as before timing). */
    if (!checks_results()) {
        m->validated = true;
        rc = 0;
        goto cleanup;
    }
    if (buffers_fill(d, &b, true) != 0) {
        snprintf(err, errlen, "out of memory allocating a random number generator");
        m->reps = 0; /* not a validation failure: nothing for the caller to store */
        goto cleanup;
    }
    for (int i = 0; i < b.n; i++)
        if (b.before[i])
            memcpy(b.before[i], b.bufs[i], b.info[i].bytes);
    op_run(d, b.bufs, b.ws);
    double max_err = 0.0;
    m->validated = op_spot_check(d, b.bufs, b.before, MB_SPOT_SAMPLES, MB_SEED, &max_err);
    m->max_err = max_err;
    if (!m->validated) {
        snprintf(err, errlen, "%s: spot check failed (max scaled error %.3g > 1)", m->key,
                 max_err);
        goto cleanup;
    }
    rc = 0;

cleanup:
    buffers_free(&b);
    free(sorted);
    return rc;
}
