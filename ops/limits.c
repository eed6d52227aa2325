/* ops/limits.c — the machine's limits that every other figure is compared with (the
 * roofline's two roofs), as microbenchmark-only ops:
 *   OP_PEAK_FMA  fused multiply-adds on register-resident chains, the widest vectors the
 *                CPU has, on 1 or all cores: the compute roof;
 *   OP_MEMBW     read and triad passes over a working set per thread: the bandwidth of
 *                the memory level that working set lives in (L1, L2, L3, DRAM).
 * Each thread works in one OpenMP region for the whole execution, so small working sets
 * (L1) are not swamped by fork/join costs.
 */
#include <omp.h>

#include "ops/kernels.h"

/* ---- peak FMA ----
 * 12 independent chains: an FMA has 4-5 cycles of latency and current x86 cores issue two
 * per cycle, so at least 8-10 chains are in flight; 12 vectors + 2 constants fit the 16
 * AVX2 registers. The constants are read through volatile so that the compiler cannot see
 * that 1.0 is the chains' fixed point (x = 0.75 x + 0.25) and fold the loop away. */

enum { PEAK_CHAINS = 12 };

#define PEAK_BODY(VT, LANES)                                                                   \
    volatile float vm = 0.75f, vc = 0.25f, vone = 1.0f;                                         \
    const VT m = (VT){0} + vm, c = (VT){0} + vc;                                               \
    VT a[PEAK_CHAINS];                                                                         \
    for (int j = 0; j < PEAK_CHAINS; j++)                                                      \
        a[j] = (VT){0} + vone;                                                                 \
    for (long i = 0; i < iters; i++) {                                                         \
        a[0] = a[0] * m + c; a[1] = a[1] * m + c; a[2] = a[2] * m + c; a[3] = a[3] * m + c;     \
        a[4] = a[4] * m + c; a[5] = a[5] * m + c; a[6] = a[6] * m + c; a[7] = a[7] * m + c;     \
        a[8] = a[8] * m + c; a[9] = a[9] * m + c; a[10] = a[10] * m + c; a[11] = a[11] * m + c; \
    }                                                                                          \
    double s = 0.0;                                                                            \
    for (int j = 0; j < PEAK_CHAINS; j++)                                                      \
        for (int l = 0; l < (LANES); l++)                                                      \
            s += a[j][l];                                                                      \
    return (float)(s / (PEAK_CHAINS * (LANES)));

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PEAK_X86 1
typedef float v16f __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));

__attribute__((target("avx512f"))) static float peak_avx512(long iters) { PEAK_BODY(v16f, 16) }
__attribute__((target("avx2,fma"))) static float peak_avx2(long iters) { PEAK_BODY(v8f, 8) }
#endif

/* Baseline x86-64 (SSE2, no FMA) or another CPU: 4-wide multiply-add chains. */
typedef float v4f __attribute__((vector_size(16)));
static float peak_generic(long iters) { PEAK_BODY(v4f, 4) }

/* Lanes of the variant peak_fma_run will use on this CPU. */
static int peak_lanes(void)
{
#ifdef PEAK_X86
    if (__builtin_cpu_supports("avx512f"))
        return 16;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return 8;
#endif
    return 4;
}

float peak_fma_here(long fma)
{
    OPS_ASSERT(fma % PEAK_FMA_QUANTUM == 0);
    const int lanes = peak_lanes();
    const long iters = fma / (PEAK_CHAINS * lanes);
#ifdef PEAK_X86
    if (lanes == 16)
        return peak_avx512(iters);
    if (lanes == 8)
        return peak_avx2(iters);
#endif
    return peak_generic(iters);
}

/* Contract: every thread runs fma_per_thread multiply-adds (as FMAs where the CPU has
 * them) and writes the mean of its accumulators, 1.0, to out[t]. */
void peak_fma_run(float *out, const PeakDesc *d)
{
    OPS_ASSERT(out && d && d->fma_per_thread % PEAK_FMA_QUANTUM == 0);
#pragma omp parallel num_threads(d->threads)
    out[omp_get_thread_num()] = peak_fma_here(d->fma_per_thread);
}

/* ---- memory bandwidth by working set ---- */

/* Sum of x[0..n), n a multiple of 48, in 48 independent float lanes (three AVX-512 or six
 * AVX2 accumulators: enough to hide the add latency so that only loads limit the rate),
 * then combined in double. Straight-line code over a48[] is what GCC's SLP vectoriser turns
 * into vector adds; a plain `s += x[i]` loop would not vectorise without -ffast-math. */
OPS_TARGET_CLONES
static double read_span(const float *restrict x, size_t n)
{
    float a[48] = {0};
    for (size_t i = 0; i < n; i += 48)
        for (int j = 0; j < 48; j++)
            a[j] += x[i + (size_t)j];
    double s = 0.0;
    for (int j = 0; j < 48; j++)
        s += a[j];
    return s;
}

OPS_TARGET_CLONES
static void triad_span(float *restrict a, const float *restrict b, const float *restrict c, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + 3.0f * c[i];
}

int membw_slice(const MembwDesc *d, int t)
{
    return d->kind == MEMBW_CROSS ? (t + 1) % d->threads : t;
}

/* Contract: out[t] = sum over `passes` passes of slice membw_slice(d, t) of x (CROSS: the
 * next thread's), each pass summed in float lanes and the passes added in double. */
void membw_read_run(float *out, const float *x, const MembwDesc *d)
{
    OPS_ASSERT(out && x && d && d->kind != MEMBW_TRIAD);
    const size_t n = d->bytes_per_thread / sizeof(float); /* a multiple of 48 */
#pragma omp parallel num_threads(d->threads)
    {
        const int t = omp_get_thread_num();
        const float *mine = x + (size_t)membw_slice(d, t) * n;
        double total = 0.0;
        for (long p = 0; p < d->passes; p++) {
            total += read_span(mine, n);
            /* each pass must really load again: nothing may be hoisted out of this loop */
            __asm__ __volatile__("" ::: "memory");
        }
        out[t] = (float)total;
    }
}

/* Contract: x = -x over each thread's slice, by that thread: it leaves the slice written
 * (dirty) in the caches the way an op's output is when the next op reads it. Negation
 * keeps the values (and the read's check) bounded however often it runs. */
void membw_produce(float *x, const MembwDesc *d)
{
    OPS_ASSERT(x && d && d->kind != MEMBW_TRIAD);
    const size_t n = d->bytes_per_thread / sizeof(float);
#pragma omp parallel num_threads(d->threads)
    {
        float *mine = x + (size_t)omp_get_thread_num() * n;
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            mine[i] = -mine[i];
    }
}

void membw_share(const float *x, const MembwDesc *d)
{
    OPS_ASSERT(x && d && d->threads >= 2);
    const size_t n = d->bytes_per_thread / sizeof(float);
    volatile double sink = 0.0; /* the reads must happen */
#pragma omp parallel num_threads(d->threads)
    {
        const int t = omp_get_thread_num();
        const double s = read_span(x + (size_t)((t + 1) % d->threads) * n, n);
#pragma omp atomic
        sink += s;
    }
    (void)sink;
}

/* Contract: x = -x over each thread's own slice, by that thread; out[t] = the sum of the
 * slice as written, in the same pass (no second read to time). */
void membw_shared_write_run(float *out, float *x, const MembwDesc *d)
{
    OPS_ASSERT(out && x && d && d->kind == MEMBW_SHARED);
    const size_t n = d->bytes_per_thread / sizeof(float);
#pragma omp parallel num_threads(d->threads)
    {
        const int t = omp_get_thread_num();
        float *mine = x + (size_t)t * n;
        double s = 0.0;
#pragma omp simd reduction(+ : s)
        for (size_t i = 0; i < n; i++) {
            const float v = -mine[i];
            mine[i] = v;
            s += v;
        }
        out[t] = (float)s;
    }
}

void membw_idle(const MembwDesc *d)
{
    OPS_ASSERT(d && d->idle_us >= 0);
    const double until = omp_get_wtime() + 1e-6 * (double)d->idle_us;
#pragma omp parallel num_threads(d->threads)
    while (omp_get_wtime() < until)
        (void)peak_fma_here(64 * PEAK_FMA_QUANTUM); /* ~1 us a chunk */
}

/* Contract: a = b + 3 c over each thread's slice of the three arrays, `passes` times. */
void membw_triad_run(float *a, const float *b, const float *c, const MembwDesc *d)
{
    OPS_ASSERT(a && b && c && d && d->kind == MEMBW_TRIAD);
    const size_t n = d->bytes_per_thread / (3 * sizeof(float)); /* a multiple of 16 */
#pragma omp parallel num_threads(d->threads)
    {
        const size_t off = (size_t)omp_get_thread_num() * n;
        for (long p = 0; p < d->passes; p++) {
            triad_span(a + off, b + off, c + off, n);
            __asm__ __volatile__("" ::: "memory");
        }
    }
}
