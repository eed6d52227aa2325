/* ops/ops.c — the framework half of the operation API: the public functions of ops.h
 * (cost, buffers, dispatch, keys, names) look an op's kind up in the table of kinds
 * (ops/kind.h; each kind's entry in ops/kinds.c) and call it; the shape-rule and key
 * helpers the kinds share; the thread/BLAS and memory facts. The arithmetic lives in the
 * kernel files (gemm.c, conv.c, ...).
 */
#include <cblas.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "ops/kind.h"

_Noreturn void ops_assert_fail(const char *expr, const char *file, int line,
                               const char *detail)
{
    fflush(stdout);
    fprintf(stderr, "%s:%d: ops assertion failed: %s%s%s\n", file, line, expr,
            detail ? ": " : "", detail ? detail : "");
    abort();
}

/* ---------------------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------------------- */

static const char *const PHASE_NAMES[PHASE_COUNT] = {"fwd", "bwd_data", "bwd_weights",
                                                     "update"};

const char *op_kind_name(OpKind k)
{
    return (k >= 0 && k < OP_KIND_COUNT) ? op_kind_info(k)->name : "?";
}

const char *op_phase_name(OpPhase p)
{
    return (p >= 0 && p < PHASE_COUNT) ? PHASE_NAMES[p] : "?";
}

bool op_kind_from_name(const char *name, OpKind *out)
{
    for (int k = 0; name && k < OP_KIND_COUNT; k++)
        if (strcmp(name, op_kind_info((OpKind)k)->name) == 0) {
            if (out)
                *out = (OpKind)k;
            return true;
        }
    return false;
}

/* ---------------------------------------------------------------------------------------
 * Validation: each kind's check says what is wrong with a descriptor. Constructors and
 * op_run treat a complaint as a programmer error (abort); op_key_parse treats it as bad
 * input.
 * ------------------------------------------------------------------------------------- */

bool ops_phase_in(OpPhase p, unsigned mask)
{
    return p >= 0 && p < PHASE_COUNT && (mask & (1u << p));
}

const char *ops_count_check(size_t count)
{
    if (count < 1 || (double)count > OPS_MAX_ELEMS)
        return "count must be in [1, 2^40]";
    return NULL;
}

const char *ops_desc_check(const OpDesc *d)
{
    if (!d || d->kind < 0 || d->kind >= OP_KIND_COUNT)
        return "unknown op kind";
    return op_kind_info(d->kind)->check(d);
}

void ops_desc_assert_valid(const OpDesc *d, const char *file, int line)
{
    const char *why = ops_desc_check(d);
    if (why)
        ops_assert_fail("descriptor valid", file, line, why);
}

/* ---------------------------------------------------------------------------------------
 * The three faces, through the table
 * ------------------------------------------------------------------------------------- */

OpCost op_cost(const OpDesc *d)
{
    DESC_ASSERT_VALID(d);
    return op_kind_info(d->kind)->cost(d);
}

double op_thread_imbalance(const OpDesc *d, int threads)
{
    const OpKindInfo *k = op_kind_info(d->kind);
    return k->thread_imbalance ? k->thread_imbalance(d, threads) : 1.0;
}

size_t op_workspace_bytes(const OpDesc *d)
{
    DESC_ASSERT_VALID(d);
    const OpKindInfo *k = op_kind_info(d->kind);
    return k->workspace ? k->workspace(d) : 0;
}

size_t op_workspace_slice_bytes(const OpDesc *d)
{
    DESC_ASSERT_VALID(d);
    const OpKindInfo *k = op_kind_info(d->kind);
    return k->workspace_slice ? k->workspace_slice(d) : 0;
}

void op_workspace_set_slice(OpDesc *d, size_t bytes)
{
    DESC_ASSERT_VALID(d);
    OPS_ASSERT(bytes % sizeof(float) == 0);
    const OpKindInfo *k = op_kind_info(d->kind);
    if (k->workspace_set_slice)
        k->workspace_set_slice(d, bytes);
}

size_t op_workspace_touched_bytes(const OpDesc *d)
{
    OpDesc packed = *d;
    op_workspace_set_slice(&packed, 0);
    return op_workspace_bytes(&packed);
}

OpBufInfo ops_buf_f(const char *name, size_t elems, BufRole role)
{
    return (OpBufInfo){.name = name, .bytes = elems * sizeof(float), .type = BUF_FLOAT,
                       .role = role};
}

OpBufInfo ops_buf_i32(const char *name, size_t elems)
{
    return (OpBufInfo){.name = name, .bytes = elems * sizeof(int32_t), .type = BUF_INT32,
                       .role = BUF_IN};
}

int op_buffer_info(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    DESC_ASSERT_VALID(d);
    OPS_ASSERT(info);
    const int n = op_kind_info(d->kind)->buffers(d, info);
    OPS_ASSERT(n >= 1 && n <= OP_MAX_BUFS);
    return n;
}

void op_run(const OpDesc *d, void *const bufs[], void *workspace)
{
    DESC_ASSERT_VALID(d);
    OPS_ASSERT(bufs);
    OpBufInfo info[OP_MAX_BUFS];
    const int nb = op_buffer_info(d, info);
    for (int i = 0; i < nb; i++)
        if (!bufs[i])
            ops_assert_fail("bufs[i] != NULL", __FILE__, __LINE__, info[i].name);
    OPS_ASSERT(workspace || op_workspace_bytes(d) == 0);
    op_kind_info(d->kind)->run(d, bufs, workspace);
}

/* ---------------------------------------------------------------------------------------
 * Keys. One line of "name [phase] [variant] field=value ...", fields in a fixed order.
 * A key names what is executed, so it carries every field that changes the work
 * (shapes, transposes, beta, alpha when not 1, accumulate, activation, pool kind, mean)
 * and none that only changes values (lr, rho, eps, loss scale, forget bias, STREAM q):
 * those parse back as their usual defaults (each kind's section in kinds.c lists them).
 * Kinds that run the same code in every phase (GEMM, the optimizers, zero, copy, STREAM,
 * axpby, shrink, norm1) have no phase in their keys and parse as the phase their
 * constructor would give (fwd, update for optimizers). FWD keys print acc=0 whatever the
 * flag says: FWD ignores it. A field added to a kind later is printed only when it
 * differs from what keys meant before it existed (GEMM's alpha, an update's decay), so
 * the keys stored in databases keep their meaning.
 * ------------------------------------------------------------------------------------- */

int ops_key_append(char out[OP_KEY_MAX], int len, const char *fmt, ...)
{
    if (len < 0 || len >= OP_KEY_MAX)
        return len;
    va_list ap;
    va_start(ap, fmt);
    const int more = vsnprintf(out + len, (size_t)(OP_KEY_MAX - len), fmt, ap);
    va_end(ap);
    return more < 0 ? more : len + more;
}

/* Only the enums are checked (they index name tables), not the shape: callers may key a
 * normalised descriptor that would not run, e.g. the predictor's batch-free keys with
 * n = 0. Such keys do not parse back (op_key_parse accepts valid descriptors only). */
static bool key_enums_ok(const OpDesc *d)
{
    if (d->kind < 0 || d->kind >= OP_KIND_COUNT || d->phase < 0 || d->phase >= PHASE_COUNT)
        return false;
    const OpKindInfo *k = op_kind_info(d->kind);
    return !k->enums_ok || k->enums_ok(d);
}

void op_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    OPS_ASSERT(d && out);
    OPS_ASSERT(key_enums_ok(d));
    const int len = op_kind_info(d->kind)->key(d, out);
    /* the longest key (conv2d, every field at ten digits or negative) fits: about 150 */
    OPS_ASSERT(len > 0 && len < OP_KEY_MAX);
}

void kc_lit(KeyCursor *kc, const char *lit)
{
    const size_t n = strlen(lit);
    if (kc->ok && strncmp(kc->p, lit, n) == 0)
        kc->p += n;
    else
        kc->ok = false;
}

bool kc_next_is(const KeyCursor *kc, const char *lit)
{
    return kc->ok && strncmp(kc->p, lit, strlen(lit)) == 0;
}

int kc_word(KeyCursor *kc, const char *const *table, int count)
{
    kc_lit(kc, " ");
    if (!kc->ok)
        return 0;
    for (int i = 0; i < count; i++) {
        const size_t n = strlen(table[i]);
        if (strncmp(kc->p, table[i], n) == 0 && (kc->p[n] == ' ' || kc->p[n] == '\0')) {
            kc->p += n;
            return i;
        }
    }
    kc->ok = false;
    return 0;
}

OpPhase kc_phase(KeyCursor *kc)
{
    return (OpPhase)kc_word(kc, PHASE_NAMES, PHASE_COUNT);
}

/* A decimal integer in [0, max] (digits only; the canonical re-key rejects "007"). */
static long long kc_num(KeyCursor *kc, long long max)
{
    if (!kc->ok || *kc->p < '0' || *kc->p > '9') {
        kc->ok = false;
        return 0;
    }
    long long v = 0;
    while (*kc->p >= '0' && *kc->p <= '9') {
        v = v * 10 + (*kc->p++ - '0');
        if (v > max) {
            kc->ok = false;
            return 0;
        }
    }
    return v;
}

int kc_int(KeyCursor *kc, const char *name)
{
    kc_lit(kc, " ");
    kc_lit(kc, name);
    kc_lit(kc, "=");
    return (int)kc_num(kc, INT_MAX);
}

size_t kc_size(KeyCursor *kc, const char *name)
{
    kc_lit(kc, " ");
    kc_lit(kc, name);
    kc_lit(kc, "=");
    return (size_t)kc_num(kc, (long long)OPS_MAX_ELEMS);
}

float kc_float(KeyCursor *kc, const char *name)
{
    kc_lit(kc, " ");
    kc_lit(kc, name);
    kc_lit(kc, "=");
    if (!kc->ok)
        return 0.0f;
    char *end;
    errno = 0;
    const float v = strtof(kc->p, &end);
    if (end == kc->p || errno == ERANGE || !isfinite(v))
        kc->ok = false;
    else
        kc->p = end;
    return v;
}

void kc_pads(KeyCursor *kc, int pad[4])
{
    kc_lit(kc, " p=");
    for (int i = 0; i < 4; i++) {
        if (i)
            kc_lit(kc, ",");
        pad[i] = (int)kc_num(kc, INT_MAX);
    }
}

bool op_key_parse(const char *key, OpDesc *d)
{
    if (!key || !d || strlen(key) >= OP_KEY_MAX)
        return false;
    OpDesc r;
    memset(&r, 0, sizeof r);
    KeyCursor kc = {.p = key, .ok = true};
    char kind[16];
    const size_t kl = strcspn(key, " ");
    if (kl == 0 || kl >= sizeof kind)
        return false;
    memcpy(kind, key, kl);
    kind[kl] = '\0';
    kc.p += kl;
    if (!op_kind_from_name(kind, &r.kind))
        return false;
    if (!op_kind_info(r.kind)->parse(&kc, &r))
        return false;
    if (!kc.ok || *kc.p != '\0' || ops_desc_check(&r) != NULL)
        return false;
    /* canonical form only: the key must be exactly what op_key prints for the result */
    char again[OP_KEY_MAX];
    op_key(&r, again);
    if (strcmp(again, key) != 0)
        return false;
    *d = r;
    return true;
}

/* ---------------------------------------------------------------------------------------
 * Library facts
 * ------------------------------------------------------------------------------------- */

enum { HUGE_PAGE_BYTES = 2 << 20 };

/* The bytes ops_buffer_alloc takes for a buffer of `bytes`: whole huge pages from 2 MiB. */
static size_t buffer_span(size_t bytes)
{
    const size_t align = bytes >= HUGE_PAGE_BYTES ? HUGE_PAGE_BYTES : 64;
    return (bytes + align - 1) / align * align;
}

void *ops_buffer_alloc(size_t bytes)
{
    const size_t n = buffer_span(bytes);
    void *p = aligned_alloc(n >= HUGE_PAGE_BYTES ? HUGE_PAGE_BYTES : 64, n ? n : 64);
#ifdef MADV_HUGEPAGE
    if (p && n >= HUGE_PAGE_BYTES)
        (void)madvise(p, n, MADV_HUGEPAGE); /* advice only: without THP, 4 KiB pages */
#endif
    return p;
}

void ops_buffer_free(void *p, size_t bytes)
{
    if (!p)
        return;
#ifdef MADV_NOHUGEPAGE
    const size_t n = buffer_span(bytes);
    if (n >= HUGE_PAGE_BYTES)
        (void)madvise(p, n, MADV_NOHUGEPAGE);
#endif
    free(p);
}

/* Whether madvise(MADV_HUGEPAGE) gets huge pages: THP's mode is "[always]" or
 * "[madvise]" (the bracketed one is in force), not "[never]" or absent. Read once. */
static bool huge_pages_granted(void)
{
    static int granted = -1;
    if (granted < 0) {
        char mode[128] = "";
        FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
        if (f) {
            if (!fgets(mode, sizeof mode, f))
                mode[0] = '\0';
            fclose(f);
        }
        granted = strstr(mode, "[always]") || strstr(mode, "[madvise]");
    }
    return granted;
}

size_t ops_buffer_footprint(size_t bytes)
{
    const long base = sysconf(_SC_PAGESIZE);
    const size_t page = bytes >= HUGE_PAGE_BYTES && huge_pages_granted() ? HUGE_PAGE_BYTES
                        : base > 0                                        ? (size_t)base
                                                                          : 4096;
    return (bytes + page - 1) / page * page;
}

static double read_proc_kb(const char *file, const char *field)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return -1;
    char line[256];
    size_t n = strlen(field);
    double v = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            v = strtod(line + n + 1, NULL) * 1024.0;
            break;
        }
    fclose(f);
    return v;
}

static double mem_available_set = 0; /* > 0: mem_available_override's */
void mem_available_override(double bytes) { mem_available_set = bytes; }
double mem_available_bytes(void)
{
    return mem_available_set > 0 ? mem_available_set : read_proc_kb("/proc/meminfo", "MemAvailable");
}
double peak_rss_bytes(void) { return read_proc_kb("/proc/self/status", "VmHWM"); }
double current_rss_bytes(void) { return read_proc_kb("/proc/self/status", "VmRSS"); }

void peak_rss_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

/* Contract: from now on OpenBLAS GEMMs and the kernels' OpenMP regions (started from the
 * calling thread) use `threads` threads. */
static int ops_threads = 0; /* 0: not set yet, OpenBLAS's own default applies */

void ops_set_threads(int threads)
{
    OPS_ASSERT(threads >= 1);
    ops_threads = threads;
    openblas_set_num_threads(threads);
    omp_set_num_threads(threads);
}

/* Why 512K elements, not the few thousand a fork/join's cost on an idle machine suggests:
 * measured when the tool ran OpenMP with OMP_WAIT_POLICY=PASSIVE (it linked OpenBLAS's
 * pthread build then, whose workers spinning libgomp ones starved), so each parallel region
 * woke a sleeping worker, and on this 2-vCPU VM that costs 20-100 us, more the longer the
 * vCPU was idle. (Single processes now keep libgomp's default spin, cli/blas_select.c; a
 * lower threshold may pay there, not measured yet.) Measured with the kernels here,
 * median microseconds, serial vs 2 threads (back to back / right after a threaded SGEMM /
 * caches flushed first):
 *   axpby    65,536   9 / 13 / 60   vs  29 / 34 / 110
 *   relu    524,288  59 / 81 / 149  vs  54 / 77 / 155
 *   relu  1,048,576 170 / 170 / 301 vs 194 / 173 / 234
 *   tanh    262,144 121 / 123 / 219 vs 126 / 129 / 195
 *   tanh    524,288 240 / 241 / 389 vs 249 / 252 / 282
 * Below 512K threads gain nothing in steps and the wake-up is a cost that depends on
 * what the other core did last, which the calibration cannot reproduce: with the old
 * 32K threshold a 65,536-float copy was timed at 77 us in calibration and 17-46 us in
 * FISTA's steps. Serial, both see 8-12 us. */
size_t ops_par_min = OPS_PAR_MIN_DEFAULT;

void ops_set_parallel_min(size_t elements) { ops_par_min = elements; }

/* OpenBLAS's pthreads build stops its worker threads with this (its fork handler); the
 * next threaded call starts them again from the calling thread. (The OpenMP build has it
 * too and only frees its buffers there.) Weak: a BLAS without it still links. */
extern int blas_thread_shutdown_(void) __attribute__((weak));

void ops_flush_denormals(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(_mm_getcsr() | 0x8040); /* FTZ (bit 15): results; DAZ (bit 6): inputs */
    /* New threads inherit this thread's MXCSR; OpenBLAS's started in its library
     * constructor, before main, with the default one: restart them from here. */
    if (blas_thread_shutdown_)
        (void)blas_thread_shutdown_();
    /* libgomp keeps its pool's threads, which OpenBLAS's OpenMP build also computes on:
     * those a region (a GEMM, a kernel) started before this call set them each here. */
    const unsigned mxcsr = _mm_getcsr();
#pragma omp parallel
    _mm_setcsr(mxcsr);
#endif
}

/* The thread count the kernels use: set by ops_set_threads, else OpenBLAS's default as
 * first seen (kept, since kernels change OpenBLAS's count for a while; see conv.c). */
int ops_get_threads(void)
{
    if (ops_threads == 0)
        ops_threads = openblas_get_num_threads();
    return ops_threads;
}

/* Kernels that split work among OpenMP threads, each calling sgemm, make those calls
 * single-threaded for the duration (the call runs on the calling thread, concurrently
 * with the others; OpenBLAS supports that). Called outside parallel regions only. */
void ops_blas_serial_begin(void) { openblas_set_num_threads(1); }
void ops_blas_serial_end(void) { openblas_set_num_threads(ops_get_threads()); }

const char *ops_blas_core(void)
{
    const char *s = openblas_get_corename();
    return s ? s : "unknown";
}

const char *ops_blas_config(void)
{
    const char *s = openblas_get_config();
    return s ? s : "unknown";
}

const char *ops_blas_threading(void)
{
    switch (openblas_get_parallel()) {
    case 0: return "sequential";
    case 1: return "pthreads";
    case 2: return "OpenMP";
    default: return "unknown";
    }
}
