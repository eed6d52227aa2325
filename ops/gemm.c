/* ops/gemm.c — OP_GEMM and OP_BMM: thin, shape-checked wrappers over OpenBLAS cblas_sgemm.
 * Row-major and tightly packed, so the leading dimensions follow from the shape alone;
 * OpenBLAS threads do the work (this file never opens an OpenMP region, so a batched GEMM
 * is a loop of threaded GEMMs: OpenBLAS must not be called from inside one). */
#include <cblas.h>
#include <string.h>

#include "ops/kernels.h"

/* Contract: c (m, n) = alpha * op(a) * op(b) + beta * c with a stored (m, k), or (k, m)
 * when trans_a, and b stored (k, n), or (n, k) when trans_b. With beta == 0, c is not read
 * (BLAS semantics), so it may hold garbage (NaN included). */
void gemm_run(float *c, const float *a, const float *b, const GemmDesc *d)
{
    OPS_ASSERT(c && a && b && d);
    OPS_ASSERT(d->m > 0 && d->n > 0 && d->k > 0);
    const int lda = d->trans_a ? d->m : d->k;
    const int ldb = d->trans_b ? d->k : d->n;
    cblas_sgemm(CblasRowMajor, d->trans_a ? CblasTrans : CblasNoTrans,
                d->trans_b ? CblasTrans : CblasNoTrans, d->m, d->n, d->k, d->alpha, a, lda,
                b, ldb, d->beta, c, d->n);
}

/* Contract: c (m, n) = op(a) op(b) + bias (n) added to every row: the bias broadcast into
 * c first, then the product added with beta = 1 (addmm's own order). */
void gemm_bias_run(float *c, const float *a, const float *b, const float *bias, const GemmDesc *d)
{
    OPS_ASSERT(c && a && b && bias && d && d->bias);
    const size_t m = (size_t)d->m, n = (size_t)d->n;
    for (size_t i = 0; i < m; i++)
        memcpy(c + i * n, bias, n * sizeof *c);
    GemmDesc g = *d;
    g.beta = 1.0f;
    gemm_run(c, a, b, &g);
}

/* Contract: for i < batch, c[i] (m, n) = alpha * op(a[i]) op(b[i]) + beta * c[i], matrix i
 * of each operand at i times its size (gemm_run's conventions for each). */
void bmm_run(float *c, const float *a, const float *b, const BmmDesc *d)
{
    OPS_ASSERT(c && a && b && d && d->batch > 0);
    const GemmDesc g = {.m = d->m, .n = d->n, .k = d->k, .trans_a = d->trans_a, .trans_b = d->trans_b,
                        .alpha = d->alpha, .beta = d->beta};
    const size_t sa = (size_t)d->m * (size_t)d->k, sb = (size_t)d->k * (size_t)d->n, sc = (size_t)d->m * (size_t)d->n;
    for (size_t i = 0; i < (size_t)d->batch; i++)
        gemm_run(c + i * sc, a + i * sa, b + i * sb, &g);
}
