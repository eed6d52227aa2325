/* ops/spmm.c — OP_SPMM: a sparse (CSR) matrix times a dense one, DeepBench's sparse GEMM
 * (a pruned weight matrix times dense activations), and the seeded CSR pattern the
 * microbenchmarks and tests use. OpenBLAS has no sparse routines; this is the row-wise
 * scheme (each nonzero a_ij adds a_ij * B[j, :] to C[i, :]) over column blocks of B that
 * stay in the last-level cache.
 */
#include <string.h>

#include "ops/kernels.h"

/* B and C are cut into column blocks that fit in the shared last-level cache together
 * (B's block: k rows of `w` columns, at most SPMM_BLOCK_BYTES), and the rows of A sweep
 * over one block at a time: every nonzero a_ij then reads its B row block from cache, where
 * whole-row sweeps read B from DRAM once per nonzero (DeepBench's 10752 x 3584 weight at
 * 90% sparsity times a 3584 x 6000 B: 5.3 s at 9 GFLOP/s on 2 cores). */
enum { SPMM_BLOCK_BYTES = 8 << 20, SPMM_MIN_COLS = 64 };

/* c[0..n) += v * b[0..n) */
OPS_TARGET_CLONES
static void spmm_axpy(float *restrict c, float v, const float *restrict b, int n)
{
#pragma omp simd
    for (int j = 0; j < n; j++)
        c[j] += v * b[j];
}

/* Contract: c (m, n) = A b with A (m, k) given by row_ptr (m + 1), col_idx and values
 * (row_ptr[m] of each), column indices in [0, k); b (k, n). c is overwritten. */
void spmm_run(float *c, const float *values, const int32_t *col_idx, const int32_t *row_ptr, const float *b,
              const SpmmDesc *d)
{
    OPS_ASSERT(c && values && col_idx && row_ptr && b && d);
    const int m = d->m, n = d->n;
    const bool par = (size_t)m * (size_t)d->nnz_per_row * (size_t)n >= ops_par_min;
    if (n == 1) { /* a sparse matrix-vector product: one dot product per row */
#pragma omp parallel for schedule(static) if (par)
        for (int i = 0; i < m; i++) {
            float s = 0.0f;
            for (int32_t p = row_ptr[i]; p < row_ptr[i + 1]; p++)
                s += values[p] * b[col_idx[p]];
            c[i] = s;
        }
        return;
    }
    /* block width: B's block within SPMM_BLOCK_BYTES, a multiple of 16 floats */
    long w = SPMM_BLOCK_BYTES / ((long)d->k * (long)sizeof(float));
    w = w < SPMM_MIN_COLS ? SPMM_MIN_COLS : w / 16 * 16;
    const int width = w >= n ? n : (int)w, nblocks = (n + width - 1) / width;
    /* (block, row) pairs in block order: the threads sweep one block of B together */
#pragma omp parallel for collapse(2) schedule(dynamic, 16) if (par)
    for (int blk = 0; blk < nblocks; blk++)
        for (int i = 0; i < m; i++) {
            const int j0 = blk * width, cols = n - j0 < width ? n - j0 : width;
            float *ci = c + (size_t)i * (size_t)n + (size_t)j0;
            memset(ci, 0, sizeof(float) * (size_t)cols);
            for (int32_t p = row_ptr[i]; p < row_ptr[i + 1]; p++)
                spmm_axpy(ci, values[p], b + (size_t)col_idx[p] * (size_t)n + (size_t)j0, cols);
        }
}

/* splitmix64 step: a small seedable generator for the pattern (no GSL in ops/). */
static uint64_t pattern_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Contract: row i's nonzeros are nnz_per_row distinct columns in increasing order, one in
 * each of nnz_per_row equal strides of [0, k) at a seeded offset within its stride: spread
 * over the whole row as a pruned weight matrix's are, and reproducible from the seed. */
void spmm_make_pattern(int32_t *row_ptr, int32_t *col_idx, const SpmmDesc *d, uint64_t seed)
{
    OPS_ASSERT(row_ptr && col_idx && d && d->nnz_per_row >= 1 && d->nnz_per_row <= d->k);
    const int q = d->nnz_per_row, k = d->k;
    for (int i = 0; i <= d->m; i++)
        row_ptr[i] = (int32_t)((int64_t)i * q);
    uint64_t state = seed;
    for (int i = 0; i < d->m; i++) {
        int32_t *col = col_idx + (size_t)i * (size_t)q;
        for (int j = 0; j < q; j++) {
            /* stride j covers [floor(j k / q), floor((j + 1) k / q)), never empty as q <= k */
            const int64_t lo = (int64_t)j * k / q, hi = (int64_t)(j + 1) * k / q;
            col[j] = (int32_t)(lo + (int64_t)(pattern_rand(&state) % (uint64_t)(hi - lo)));
        }
    }
}
