/* ops/gemm.c — OP_GEMM: a thin, shape-checked wrapper over OpenBLAS cblas_sgemm.
 * Row-major and tightly packed, so the leading dimensions follow from the shape alone;
 * OpenBLAS threads do the work (this file never opens an OpenMP region). */
#include <cblas.h>

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
