/* ops/gemm.c — OP_GEMM and OP_BMM: thin, shape-checked wrappers over OpenBLAS cblas_sgemm.
 * Row-major; GEMMs tightly packed, so their leading dimensions follow from the shape
 * alone, BMMs packed or strided (BmmDesc); OpenBLAS threads do the GEMMs. The only OpenMP region here is the bias fill of a GEMM
 * with bias, which ends before the sgemm call (BLAS is never called from inside one).
 */
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

OPS_TARGET_CLONES
static void bias_row_set(float *restrict c, const float *restrict bias, size_t n)
{
    memcpy(c, bias, n * sizeof(float));
}

OPS_TARGET_CLONES
static void bias_row_scale_add(float *restrict c, const float *restrict bias, float beta, size_t n)
{
    for (size_t j = 0; j < n; j++)
        c[j] = beta * c[j] + bias[j];
}

/* Contract: c (m, n) = alpha op(a) op(b) + beta c + bias (n) on every row. The bias is
 * written into c first (scaled c plus bias where beta != 0; c is not read when beta == 0)
 * and the GEMM accumulates over it with beta = 1: one pass over c besides the GEMM's own,
 * as PyTorch's addmm does for nn.Linear. */
void gemm_bias_run(float *c, const float *a, const float *b, const float *bias, const GemmDesc *d)
{
    OPS_ASSERT(c && a && b && bias && d && d->bias);
    OPS_ASSERT(d->m > 0 && d->n > 0 && d->k > 0);
    const size_t m = (size_t)d->m, n = (size_t)d->n;
    const float beta = d->beta;
#pragma omp parallel for schedule(static) if (m * n >= ops_par_min)
    for (size_t i = 0; i < m; i++) {
        if (beta == 0.0f)
            bias_row_set(c + i * n, bias, n);
        else
            bias_row_scale_add(c + i * n, bias, beta, n);
    }
    GemmDesc g = *d;
    g.beta = 1.0f;
    gemm_run(c, a, b, &g);
}

/* Contract: for each of batch matrices, c[i] (m, n) = alpha op(a[i]) op(b[i]) + beta c[i],
 * matrix i of each at i times its stride, rows at its leading dimension (BmmDesc; packed
 * by default); gemm_run's conventions otherwise. One sgemm call per matrix, each threaded
 * by OpenBLAS: the kernel of OP_GEMM, so a packed BMM of batch 1 is that GEMM. */
void bmm_run(float *c, const float *a, const float *b, const BmmDesc *d)
{
    OPS_ASSERT(c && a && b && d);
    OPS_ASSERT(d->batch > 0 && d->m > 0 && d->n > 0 && d->k > 0);
    const BmmLayout l = bmm_layout(d);
    for (size_t i = 0; i < (size_t)d->batch; i++)
        cblas_sgemm(CblasRowMajor, d->trans_a ? CblasTrans : CblasNoTrans,
                    d->trans_b ? CblasTrans : CblasNoTrans, d->m, d->n, d->k, d->alpha,
                    a + i * l.sa, (int)l.lda, b + i * l.sb, (int)l.ldb, d->beta, c + i * l.sc,
                    (int)l.ldc);
}
