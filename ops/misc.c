/* ops/misc.c — the small memory-bound ops of the model zoo: inverted dropout with a
 * counter-based mask, channel concatenation, y = alpha a + beta b, embedding lookup and its
 * scatter-add gradient, the sparse-autoencoder KL penalty, and FISTA's soft threshold and
 * L1 norm. Flat element-wise loops follow eltwise.c's pattern (a parallel region above
 * ops_par_min, each thread calling a target-cloned span function on its contiguous share).
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include <cblas.h>

#include "ops/comm.h"
#include "ops/kernels.h"

/* ---------------------------------------------------------------------------------------
 * Dropout
 * ------------------------------------------------------------------------------------- */

/* Elements i_lo .. i_lo + n - 1 (no wrap of the low 32 bits) with high word i_hi. */
OPS_TARGET_CLONES
static void dropout_span(float *y, float *restrict mask, const float *x, uint64_t key,
                         uint32_t i_lo, uint32_t i_hi, uint32_t threshold, float scale,
                         size_t n)
{
    /* y may alias x: same-index reads and writes only */
#pragma omp simd
    for (size_t j = 0; j < n; j++) {
        const uint32_t u = dropout_bits(key, i_lo + (uint32_t)j, i_hi);
        const float m = u >= threshold ? scale : 0.0f;
        mask[j] = m;
        y[j] = x[j] * m;
    }
}

OPS_TARGET_CLONES
static void mul_span(float *y, const float *a, const float *b, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] * b[i];
}

/* Contract: see kernels.h. The step counter is read, never advanced (the trainer does). */
void dropout_forward(float *y, float *mask, const float *x, const int32_t *step,
                     const DropoutDesc *d)
{
    OPS_ASSERT(y && mask && x && step && d && d->rate >= 0.0f && d->rate < 1.0f);
    const uint64_t key = dropout_key(d->seed, (uint32_t)step[0]);
    const uint32_t threshold = dropout_threshold(d->rate);
    const float scale = dropout_scale(d->rate);
    const size_t n = d->count;
#pragma omp parallel if (n >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(n, &lo, &hi);
        /* cut the share where the low 32 bits of the index wrap (only beyond 2^32) */
        while (lo < hi) {
            const size_t wrap = (lo | 0xFFFFFFFFull) + 1, end = hi < wrap ? hi : wrap;
            dropout_span(y + lo, mask + lo, x + lo, key, (uint32_t)lo, (uint32_t)(lo >> 32),
                         threshold, scale, end - lo);
            lo = end;
        }
    }
}

/* Contract: see kernels.h. */
void dropout_backward_data(float *dx, const float *dy, const float *mask, const DropoutDesc *d)
{
    OPS_ASSERT(dx && dy && mask && d);
    const size_t n = d->count;
#pragma omp parallel if (n >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(n, &lo, &hi);
        if (hi > lo)
            mul_span(dx + lo, dy + lo, mask + lo, hi - lo);
    }
}

/* ---------------------------------------------------------------------------------------
 * Channel concatenation: n rows of L = c_src * spatial contiguous floats on the x side,
 * each at its own stride on the y side; threads split the n*L elements evenly, whatever n.
 * ------------------------------------------------------------------------------------- */

OPS_TARGET_CLONES
static void add_span(float *restrict y, const float *restrict x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] += x[i];
}

/* dst row i (stride ds) (=|+=) src row i (stride ss) over the flat range [lo, hi) of (rows, L). */
static void rows_copy(float *dst, size_t ds, const float *src, size_t ss, size_t L, size_t lo,
                      size_t hi, bool add)
{
    while (lo < hi) {
        const size_t i = lo / L, j = lo % L, len = L - j < hi - lo ? L - j : hi - lo;
        float *dp = dst + i * ds + j;
        const float *sp = src + i * ss + j;
        if (add)
            add_span(dp, sp, len);
        else
            memcpy(dp, sp, len * sizeof(float));
        lo += len;
    }
}

/* Contract: see kernels.h. y outside the slice is not touched. */
void channel_copy_forward(float *y, const float *x, const ChannelDesc *d)
{
    OPS_ASSERT(y && x && d);
    const size_t sp = (size_t)d->spatial, L = (size_t)d->c_src * sp, total = (size_t)d->n * L;
#pragma omp parallel if (total >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(total, &lo, &hi);
        rows_copy(y + (size_t)d->offset * sp, (size_t)d->c_dst * sp, x, L, L, lo, hi, false);
    }
}

/* Contract: see kernels.h. */
void channel_copy_backward_data(float *dx, const float *dy, const ChannelDesc *d)
{
    OPS_ASSERT(dx && dy && d);
    const size_t sp = (size_t)d->spatial, L = (size_t)d->c_src * sp, total = (size_t)d->n * L;
#pragma omp parallel if (total >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(total, &lo, &hi);
        rows_copy(dx, L, dy + (size_t)d->offset * sp, (size_t)d->c_dst * sp, L, lo, hi,
                  d->accumulate);
    }
}

/* ---------------------------------------------------------------------------------------
 * y = alpha a + beta b
 * ------------------------------------------------------------------------------------- */

OPS_TARGET_CLONES
static void axpby_span(float *y, const float *a, const float *b, float alpha, float beta,
                       size_t n)
{
    /* y may alias a or b: same-index only */
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        y[i] = alpha * a[i] + beta * b[i];
}

/* Contract: see kernels.h. */
void axpby_run(float *y, const float *a, const float *b, const AxpbyDesc *d)
{
    OPS_ASSERT(y && a && b && d);
    const size_t n = d->count;
#pragma omp parallel if (n >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(n, &lo, &hi);
        if (hi > lo)
            axpby_span(y + lo, a + lo, b + lo, d->alpha, d->beta, hi - lo);
    }
}

/* ---------------------------------------------------------------------------------------
 * Embedding
 * ------------------------------------------------------------------------------------- */

/* Rows of W (dW) are visited in id order, i.e. at random: the hardware prefetchers cannot
 * guess the next row, so each row's lines are requested EMBED_AHEAD rows early (15-25%
 * faster gathers on TextCNN's 20000 x 300 table; random ids cost the scatter 2x over
 * sequential ones without it). */
enum { EMBED_AHEAD = 4 };

static inline void embed_prefetch_row(const float *row, size_t dim, int rw)
{
    for (size_t j = 0; j < dim; j += 16) /* one 64-byte line per 16 floats */
        if (rw)
            __builtin_prefetch(row + j, 1);
        else
            __builtin_prefetch(row + j, 0);
}

/* Row i's id: its token's, or its position in a time-major sequence of d->repeat samples. */
static inline int32_t embed_id(const int32_t *ids, int i, const EmbedDesc *d)
{
    return d->repeat > 0 ? i / d->repeat : ids[i];
}

/* The first id of the table's rows: this rank's block of a vocabulary-parallel table. */
static int32_t embed_first(const EmbedDesc *d) { return d->part ? (int32_t)comm_tp_rank() * d->vocab : 0; }

/* Contract: see kernels.h; ids out of [0, vocab) abort (they would read outside W). */
void embedding_forward(float *y, const int32_t *ids, const float *W, const EmbedDesc *d)
{
    OPS_ASSERT(y && (ids || d->repeat > 0) && W && d);
    const size_t dim = (size_t)d->dim;
    const int32_t first = embed_first(d);
#pragma omp parallel for schedule(static) if ((size_t)d->n * dim >= ops_par_min)
    for (int i = 0; i < d->n; i++) {
        const int32_t id = embed_id(ids, i, d) - first;
        if (d->part && (id < 0 || id >= d->vocab)) { /* another rank's row */
            OPS_ASSERT(id + first >= 0);
            memset(y + (size_t)i * dim, 0, dim * sizeof(float));
            continue;
        }
        OPS_ASSERT(id >= 0 && id < d->vocab);
        if (ids && i + EMBED_AHEAD < d->n) {
            const int32_t next = ids[i + EMBED_AHEAD] - first;
            if (next >= 0 && next < d->vocab) /* checked when its turn comes */
                embed_prefetch_row(W + (size_t)next * dim, dim, 0);
        }
        memcpy(y + (size_t)i * dim, W + (size_t)id * dim, dim * sizeof(float));
    }
}

/* The first column at or after j whose address in row starts a 64-byte line (or dim). */
static size_t line_col(const float *row, size_t j, size_t dim)
{
    const size_t off = ((uintptr_t)(row + j) / sizeof(float)) % 16;
    const size_t c = j + (off ? 16 - off : 0);
    return c < dim ? c : dim;
}

/* Contract: see kernels.h. Thread k of t owns the columns of each dW row from the line
 * boundary at or after k*dim/t to the one at or after (k+1)*dim/t, and walks every row in
 * order, so repeated ids add in row order whatever the thread count: deterministic and
 * race-free. The cut is per row at a line boundary because rows (dim * 4 bytes) are not
 * line-aligned in general: a fixed column cut made both threads write the same line of
 * every row, and two threads ran 2.5x slower than one. */
void embedding_backward_weights(float *dW, const float *dy, const int32_t *ids,
                                const EmbedDesc *d)
{
    OPS_ASSERT(dW && dy && (ids || d->repeat > 0) && d);
    const size_t dim = (size_t)d->dim;
    const int32_t first = embed_first(d);
    if (!d->accumulate)
        mem_zero(dW, (size_t)d->vocab * dim);
#pragma omp parallel if ((size_t)d->n * dim >= ops_par_min)
    {
        const size_t t = (size_t)omp_get_num_threads(), k = (size_t)omp_get_thread_num();
        for (int i = 0; i < d->n; i++) {
            const int32_t id = embed_id(ids, i, d) - first;
            if (d->part && (id < 0 || id >= d->vocab)) /* another rank's row */
                continue;
            OPS_ASSERT(id >= 0 && id < d->vocab);
            if (ids && i + EMBED_AHEAD < d->n) { /* positions run in order: prefetchers see them */
                /* exactly this thread's lines of a later row: a prefetch-for-write of the
                 * neighbour's boundary line would steal it every row */
                const int32_t next = ids[i + EMBED_AHEAD] - first;
                if (next >= 0 && next < d->vocab) {
                    const float *nrow = dW + (size_t)next * dim;
                    const size_t nlo = k == 0 ? 0 : line_col(nrow, k * dim / t, dim);
                    const size_t nhi = k + 1 == t ? dim : line_col(nrow, (k + 1) * dim / t, dim);
                    if (nhi > nlo)
                        embed_prefetch_row(nrow + nlo, nhi - nlo, 1);
                }
            }
            float *row = dW + (size_t)id * dim;
            const size_t lo = k == 0 ? 0 : line_col(row, k * dim / t, dim);
            const size_t hi = k + 1 == t ? dim : line_col(row, (k + 1) * dim / t, dim);
            if (hi > lo)
                add_span(row + lo, dy + (size_t)i * dim + lo, hi - lo);
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * Sparse-autoencoder KL penalty (UFLDL sparseAutoencoderCost)
 * ------------------------------------------------------------------------------------- */

enum { KL_COLS = 256 };

OPS_TARGET_CLONES
static void col_sums(double *restrict s, const float *restrict a, size_t n)
{
    for (size_t j = 0; j < n; j++)
        s[j] += a[j];
}

/* Contract: see kernels.h. Column blocks split over threads (at most KL_COLS wide, and
 * narrow enough that every thread gets one: UFLDL's 196 units were one serial block); the
 * penalty is summed in double from the double means. */
void kl_sparsity_forward(float *loss, float *rho_hat, const float *a, const KlDesc *d)
{
    OPS_ASSERT(loss && rho_hat && a && d);
    const size_t N = (size_t)d->n, U = (size_t)d->units, t = (size_t)omp_get_max_threads();
    size_t cb = ((U + t - 1) / t + 15) & ~(size_t)15; /* whole cache lines per block */
    cb = cb > KL_COLS ? KL_COLS : cb;
    const size_t nblk = (U + cb - 1) / cb;
    const double rho = d->rho;
    double penalty = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : penalty) if (N * U >= ops_par_min)
    for (size_t blk = 0; blk < nblk; blk++) {
        const size_t j0 = blk * cb, w = U - j0 < cb ? U - j0 : cb;
        double s[KL_COLS] = {0};
        for (size_t i = 0; i < N; i++)
            col_sums(s, a + i * U + j0, w);
        for (size_t j = 0; j < w; j++) {
            const double rh = s[j] / (double)N;
            rho_hat[j0 + j] = (float)rh;
            penalty += rho * log(rho / rh) + (1.0 - rho) * log((1.0 - rho) / (1.0 - rh));
        }
    }
    loss[0] = (float)((double)loss[0] + (double)d->beta * penalty);
}

OPS_TARGET_CLONES
static void row_add(float *restrict y, const float *restrict b, size_t n)
{
    for (size_t j = 0; j < n; j++)
        y[j] += b[j];
}

/* Contract: see kernels.h. Threads split the rows; each computes the per-unit term of a
 * column block itself (a few divisions per unit, negligible next to n rows). */
void kl_sparsity_backward_data(float *da, const float *rho_hat, const KlDesc *d)
{
    OPS_ASSERT(da && rho_hat && d);
    const size_t N = (size_t)d->n, U = (size_t)d->units;
    const double rho = d->rho, f = (double)d->beta / (double)N;
#pragma omp parallel if (N * U >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(N, &lo, &hi);
        float t[KL_COLS];
        for (size_t j0 = 0; j0 < U && hi > lo; j0 += KL_COLS) {
            const size_t w = U - j0 < KL_COLS ? U - j0 : KL_COLS;
            for (size_t j = 0; j < w; j++) {
                const double rh = rho_hat[j0 + j];
                t[j] = (float)(f * (-rho / rh + (1.0 - rho) / (1.0 - rh)));
            }
            for (size_t i = lo; i < hi; i++)
                row_add(da + i * U + j0, t, w);
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * FISTA helpers
 * ------------------------------------------------------------------------------------- */

OPS_TARGET_CLONES
static void shrink_span(float *y, const float *x, float t, size_t n)
{
    /* y may alias x */
#pragma omp simd
    for (size_t i = 0; i < n; i++) {
        const float m = fabsf(x[i]) - t;
        y[i] = copysignf(m > 0.0f ? m : 0.0f, x[i]);
    }
}

/* Contract: see kernels.h. */
void shrink_run(float *y, const float *x, const MemDesc *d)
{
    OPS_ASSERT(y && x && d);
    const size_t n = d->count;
#pragma omp parallel if (n >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(n, &lo, &hi);
        if (hi > lo)
            shrink_span(y + lo, x + lo, d->scalar, hi - lo);
    }
}

OPS_TARGET_CLONES
static double abs_sum_span(const float *restrict x, size_t n)
{
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (size_t i = 0; i < n; i++)
        s += fabsf(x[i]);
    return s;
}

/* sum over threads of span(x's share) for every thread's share of x (n floats), in double;
 * OpenMP's reduction adds the per-thread partial sums, so the last bits depend on the
 * thread count. */
static double parallel_sum(const float *x, size_t n, double (*span)(const float *restrict, size_t))
{
    double total = 0.0;
#pragma omp parallel reduction(+ : total) if (n >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(n, &lo, &hi);
        if (hi > lo)
            total += span(x + lo, hi - lo);
    }
    return total;
}

/* Contract: see kernels.h. */
void norm1_run(float *out, const float *x, const MemDesc *d)
{
    OPS_ASSERT(out && x && d);
    out[0] = (float)parallel_sum(x, d->count, abs_sum_span);
}

OPS_TARGET_CLONES
static double sq_sum_span(const float *restrict x, size_t n)
{
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (size_t i = 0; i < n; i++)
        s += (double)x[i] * x[i];
    return s;
}

/* Contract: see kernels.h. As norm1_run, the last bits depend on the thread count. */
void sumsq_run(float *out, const float *x, const MemDesc *d)
{
    OPS_ASSERT(out && x && d);
    out[0] = (float)parallel_sum(x, d->count, sq_sum_span);
}

void transpose_run(float *y, const float *x, const TransposeDesc *d)
{
    /* OpenBLAS's out-of-place matrix copy, transposed (its blocked kernel) */
    cblas_somatcopy(CblasRowMajor, CblasTrans, d->rows, d->cols, 1.0f, x, d->cols, y, d->rows);
}
