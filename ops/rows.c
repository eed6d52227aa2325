/* ops/rows.c — the transformer's row-wise kernels over x (n, h): OP_LAYERNORM and the
 * standalone OP_SOFTMAX. Rows are independent: split over the OpenMP threads (above
 * ops_par_min elements), each row's sums in double (a row of thousands of values in fp32
 * loses digits the gradient check sees); layer norm's weight gradients are column sums,
 * split by columns so each has one writer.
 */
#include <math.h>
#include <string.h>

#include "ops/kernels.h"
#include "ops/vecmath.h"

/* ---- layer norm ---- */

/* Contract: mean (n), rstd (n) of each row of x; y = (x - mean) * rstd * gamma + beta. */
void layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *gamma, const float *beta,
                       const LayerNormDesc *d)
{
    OPS_ASSERT(y && mean && rstd && x && gamma && beta && d);
    const size_t n = (size_t)d->n, h = (size_t)d->h;
#pragma omp parallel for schedule(static) if (n * h >= ops_par_min)
    for (size_t i = 0; i < n; i++) {
        const float *xr = x + i * h;
        double s = 0, s2 = 0;
        for (size_t j = 0; j < h; j++) {
            s += xr[j];
            s2 += (double)xr[j] * xr[j];
        }
        const double mu = s / (double)h;
        double var = s2 / (double)h - mu * mu;
        if (var < 0)
            var = 0;
        const float r = (float)(1.0 / sqrt(var + d->eps)), m = (float)mu;
        mean[i] = m;
        rstd[i] = r;
        float *yr = y + i * h;
        for (size_t j = 0; j < h; j++)
            yr[j] = (xr[j] - m) * r * gamma[j] + beta[j];
    }
}

/* Contract: dgamma (h) (=|+=) sum_i dy * xhat, dbeta (h) (=|+=) sum_i dy; xhat from x and
 * the forward's mean and rstd. */
void layernorm_backward_weights(float *dgamma, float *dbeta, const float *dy, const float *x, const float *mean,
                                const float *rstd, const LayerNormDesc *d)
{
    OPS_ASSERT(dgamma && dbeta && dy && x && mean && rstd && d);
    const size_t n = (size_t)d->n, h = (size_t)d->h;
#pragma omp parallel if (n * h >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(h, &lo, &hi);
        for (size_t j = lo; j < hi; j++) {
            double g = d->accumulate ? dgamma[j] : 0.0, b = d->accumulate ? dbeta[j] : 0.0;
            for (size_t i = 0; i < n; i++) {
                const double v = dy[i * h + j];
                g += v * ((double)x[i * h + j] - mean[i]) * rstd[i];
                b += v;
            }
            dgamma[j] = (float)g;
            dbeta[j] = (float)b;
        }
    }
}

/* Contract: dx (=|+=) rstd * (g - mean_j g - xhat * mean_j(g xhat)), g = dy * gamma. */
void layernorm_backward_data(float *dx, const float *dy, const float *x, const float *gamma, const float *mean,
                             const float *rstd, const LayerNormDesc *d)
{
    OPS_ASSERT(dx && dy && x && gamma && mean && rstd && d);
    const size_t n = (size_t)d->n, h = (size_t)d->h;
#pragma omp parallel for schedule(static) if (n * h >= ops_par_min)
    for (size_t i = 0; i < n; i++) {
        const float *dyr = dy + i * h, *xr = x + i * h;
        const double m = mean[i], r = rstd[i];
        double sg = 0, sgx = 0;
        for (size_t j = 0; j < h; j++) {
            const double g = (double)dyr[j] * gamma[j];
            sg += g;
            sgx += g * (xr[j] - m) * r;
        }
        sg /= (double)h;
        sgx /= (double)h;
        float *dxr = dx + i * h;
        for (size_t j = 0; j < h; j++) {
            const double g = (double)dyr[j] * gamma[j], xhat = (xr[j] - m) * r;
            const float v = (float)(r * (g - sg - xhat * sgx));
            dxr[j] = d->accumulate ? dxr[j] + v : v;
        }
    }
}

/* ---- softmax ---- */

OPS_TARGET_CLONES
static void softmax_row(float *restrict y, const float *restrict x, size_t h)
{
    float mx = x[0];
    for (size_t j = 1; j < h; j++)
        mx = x[j] > mx ? x[j] : mx;
    double s = 0;
    for (size_t j = 0; j < h; j++) {
        y[j] = vm_exp(x[j] - mx);
        s += y[j];
    }
    const float inv = (float)(1.0 / s);
    for (size_t j = 0; j < h; j++)
        y[j] *= inv;
}

/* Contract: y (n, h) = the softmax of each row of x, its max subtracted first. */
void softmax_forward(float *y, const float *x, const SoftmaxDesc *d)
{
    OPS_ASSERT(y && x && d);
    const size_t n = (size_t)d->n, h = (size_t)d->h;
#pragma omp parallel for schedule(static) if (n * h >= ops_par_min)
    for (size_t i = 0; i < n; i++)
        softmax_row(y + i * h, x + i * h, h);
}

/* Contract: dx (=|+=) y * (dy - sum_j dy_j y_j), row by row. */
void softmax_backward_data(float *dx, const float *dy, const float *y, const SoftmaxDesc *d)
{
    OPS_ASSERT(dx && dy && y && d);
    const size_t n = (size_t)d->n, h = (size_t)d->h;
#pragma omp parallel for schedule(static) if (n * h >= ops_par_min)
    for (size_t i = 0; i < n; i++) {
        const float *dyr = dy + i * h, *yr = y + i * h;
        double dot = 0;
        for (size_t j = 0; j < h; j++)
            dot += (double)dyr[j] * yr[j];
        float *dxr = dx + i * h;
        const float t = (float)dot;
        for (size_t j = 0; j < h; j++) {
            const float v = yr[j] * (dyr[j] - t);
            dxr[j] = d->accumulate ? dxr[j] + v : v;
        }
    }
}
