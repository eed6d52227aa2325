/* ops/rows.c — OP_LAYERNORM and OP_SOFTMAX: reductions over the last dimension of (n, h),
 * one row at a time. Both are memory-bound: a row (h floats; a transformer's hidden size
 * or sequence length, tens of KB) is read from memory once and its second and third passes
 * find it in L1/L2.
 *
 * Threads split the rows (each row has one owner, so results do not depend on the thread
 * count); layer norm's weight gradients, sums over the rows, split the columns instead,
 * each thread walking every row over its own block of columns. Sums over a row or over the
 * rows are accumulated in double, in ROW_LANES independent lanes: one accumulator chain
 * made norm.c's statistics latency-bound (see BN_LANES there).
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "ops/kernels.h"
#include "ops/vecmath.h"

enum {
    ROW_LANES = 16,
    /* columns a thread sums over all rows at a time in the weight gradients: two double
     * accumulators per column on the stack (4 KiB) */
    LN_COL_BLOCK = 256
};

#define ROW_INLINE static inline __attribute__((always_inline))

/* sum of x[0..n) in double */
ROW_INLINE double row_sum(const float *restrict x, size_t n)
{
    double lane[ROW_LANES] = {0};
    size_t i = 0;
    for (; i + ROW_LANES <= n; i += ROW_LANES)
        for (size_t j = 0; j < ROW_LANES; j++)
            lane[j] += x[i + j];
    double s = 0.0;
    for (; i < n; i++)
        s += x[i];
    for (size_t j = 0; j < ROW_LANES; j++)
        s += lane[j];
    return s;
}

/* sum of (x - m)^2 in double */
ROW_INLINE double row_centred_sq(const float *restrict x, double m, size_t n)
{
    double lane[ROW_LANES] = {0};
    size_t i = 0;
    for (; i + ROW_LANES <= n; i += ROW_LANES)
        for (size_t j = 0; j < ROW_LANES; j++) {
            const double v = x[i + j] - m;
            lane[j] += v * v;
        }
    double s = 0.0;
    for (; i < n; i++) {
        const double v = x[i] - m;
        s += v * v;
    }
    for (size_t j = 0; j < ROW_LANES; j++)
        s += lane[j];
    return s;
}

/* sum of a * b in double */
ROW_INLINE double row_dot(const float *restrict a, const float *restrict b, size_t n)
{
    double lane[ROW_LANES] = {0};
    size_t i = 0;
    for (; i + ROW_LANES <= n; i += ROW_LANES)
        for (size_t j = 0; j < ROW_LANES; j++)
            lane[j] += (double)a[i + j] * b[i + j];
    double s = 0.0;
    for (; i < n; i++)
        s += (double)a[i] * b[i];
    for (size_t j = 0; j < ROW_LANES; j++)
        s += lane[j];
    return s;
}

/* ---------------------------------------------------------------------------------------
 * Layer normalisation
 * ------------------------------------------------------------------------------------- */

/* One row: the centred two-pass variance (no E[x^2] - E[x]^2 cancellation), then y. */
OPS_TARGET_CLONES
static void ln_row_forward(float *restrict y, float *restrict mean, float *restrict rstd,
                           const float *restrict x, const float *restrict gamma,
                           const float *restrict beta, size_t h, double eps)
{
    const double mu = row_sum(x, h) / (double)h;
    const double var = row_centred_sq(x, mu, h) / (double)h;
    const float m = (float)mu, r = (float)(1.0 / sqrt(var + eps));
    for (size_t j = 0; j < h; j++)
        y[j] = (x[j] - m) * r * gamma[j] + beta[j];
    *mean = m;
    *rstd = r;
}

/* Contract: per row of x (n, h): mean, biased variance, rstd = 1/sqrt(var + eps),
 * y = (x - mean) rstd gamma + beta; mean (n) and rstd (n) written. y must not alias x. */
void layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                       const float *beta, const LnDesc *d)
{
    OPS_ASSERT(y && mean && rstd && x && gamma && beta && d && d->n > 0 && d->h > 0);
    const size_t n = (size_t)d->n, h = (size_t)d->h;
#pragma omp parallel for schedule(static) if (n * h >= ops_par_min)
    for (size_t r = 0; r < n; r++)
        ln_row_forward(y + r * h, mean + r, rstd + r, x + r * h, gamma, beta, h, d->eps);
}

/* Columns [c0, c1) (at most LN_COL_BLOCK) of dgamma and dbeta over every row. */
OPS_TARGET_CLONES
static void ln_cols_backward_weights(float *restrict dgamma, float *restrict dbeta,
                                     const float *restrict dy, const float *restrict x,
                                     const float *restrict mean, const float *restrict rstd,
                                     size_t n, size_t h, size_t c0, size_t c1, bool acc)
{
    double dg[LN_COL_BLOCK], db[LN_COL_BLOCK];
    const size_t w = c1 - c0;
    for (size_t j = 0; j < w; j++)
        dg[j] = db[j] = 0.0;
    for (size_t r = 0; r < n; r++) {
        const float *xr = x + r * h + c0, *gr = dy + r * h + c0;
        const float m = mean[r], s = rstd[r];
        for (size_t j = 0; j < w; j++) {
            const float g = gr[j];
            dg[j] += (double)(g * ((xr[j] - m) * s));
            db[j] += g;
        }
    }
    for (size_t j = 0; j < w; j++) {
        dgamma[c0 + j] = (float)((acc ? (double)dgamma[c0 + j] : 0.0) + dg[j]);
        dbeta[c0 + j] = (float)((acc ? (double)dbeta[c0 + j] : 0.0) + db[j]);
    }
}

/* Contract: dgamma (h) (=|+=) sum over rows of dy xhat, dbeta (h) (=|+=) sum over rows of
 * dy, xhat = (x - mean) rstd. Threads split the columns: each element has one writer. */
void layernorm_backward_weights(float *dgamma, float *dbeta, const float *dy, const float *x,
                                const float *mean, const float *rstd, const LnDesc *d)
{
    OPS_ASSERT(dgamma && dbeta && dy && x && mean && rstd && d && d->n > 0 && d->h > 0);
    const size_t n = (size_t)d->n, h = (size_t)d->h;
#pragma omp parallel if (n * h >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(h, &lo, &hi);
        for (size_t c0 = lo; c0 < hi; c0 += LN_COL_BLOCK) {
            const size_t c1 = c0 + LN_COL_BLOCK < hi ? c0 + LN_COL_BLOCK : hi;
            ln_cols_backward_weights(dgamma, dbeta, dy, x, mean, rstd, n, h, c0, c1, d->accumulate);
        }
    }
}

/* One row: g = dy gamma; dx (=|+=) rstd (g - mean(g) - xhat mean(g xhat)). */
OPS_TARGET_CLONES
static void ln_row_backward_data(float *restrict dx, const float *restrict dy,
                                 const float *restrict x, const float *restrict gamma, float m,
                                 float s, size_t h, bool acc)
{
    double lane_g[ROW_LANES] = {0}, lane_gx[ROW_LANES] = {0};
    double sg = 0.0, sgx = 0.0;
    size_t j = 0;
    for (; j + ROW_LANES <= h; j += ROW_LANES)
        for (size_t l = 0; l < ROW_LANES; l++) {
            const float g = dy[j + l] * gamma[j + l], xh = (x[j + l] - m) * s;
            lane_g[l] += g;
            lane_gx[l] += (double)g * xh;
        }
    for (; j < h; j++) {
        const float g = dy[j] * gamma[j], xh = (x[j] - m) * s;
        sg += g;
        sgx += (double)g * xh;
    }
    for (size_t l = 0; l < ROW_LANES; l++)
        sg += lane_g[l], sgx += lane_gx[l];
    const float a = (float)(sg / (double)h), b = (float)(sgx / (double)h);
    if (acc) {
        for (size_t k = 0; k < h; k++)
            dx[k] += s * (dy[k] * gamma[k] - a - (x[k] - m) * s * b);
    } else {
        for (size_t k = 0; k < h; k++)
            dx[k] = s * (dy[k] * gamma[k] - a - (x[k] - m) * s * b);
    }
}

/* Contract: dx (n, h) (=|+=) the gradient of L through y = xhat gamma + beta and the row
 * statistics (LnDesc); dx must not alias the inputs. */
void layernorm_backward_data(float *dx, const float *dy, const float *x, const float *gamma,
                             const float *mean, const float *rstd, const LnDesc *d)
{
    OPS_ASSERT(dx && dy && x && gamma && mean && rstd && d && d->n > 0 && d->h > 0);
    const size_t n = (size_t)d->n, h = (size_t)d->h;
#pragma omp parallel for schedule(static) if (n * h >= ops_par_min)
    for (size_t r = 0; r < n; r++)
        ln_row_backward_data(dx + r * h, dy + r * h, x + r * h, gamma, mean[r], rstd[r], h,
                             d->accumulate);
}

/* ---------------------------------------------------------------------------------------
 * Softmax
 * ------------------------------------------------------------------------------------- */

/* One row: y = exp(x - max) / sum; y may alias x (every pass reads x[j] before it writes
 * y[j], or only y). */
OPS_TARGET_CLONES
static void softmax_row_forward(float *y, const float *x, size_t h)
{
    float mx = x[0];
    for (size_t j = 1; j < h; j++)
        mx = x[j] > mx ? x[j] : mx;
#pragma omp simd
    for (size_t j = 0; j < h; j++)
        y[j] = vm_exp(x[j] - mx);
    const float inv = (float)(1.0 / row_sum(y, h));
#pragma omp simd
    for (size_t j = 0; j < h; j++)
        y[j] *= inv;
}

/* The columns row r of d softmaxes: all, or under the causal mask its first r % h + 1. */
static inline size_t softmax_visible(const SoftmaxDesc *d, size_t r)
{
    return d->causal ? r % (size_t)d->h + 1 : (size_t)d->h;
}

/* Contract: y (n, h) = softmax of each row of x (n, h), the row's max subtracted first (no
 * overflow whatever x is); under the causal mask the row's masked columns are written 0
 * (and not read). y may alias x. */
void softmax_forward(float *y, const float *x, const SoftmaxDesc *d)
{
    OPS_ASSERT(y && x && d && d->n > 0 && d->h > 0);
    const size_t n = (size_t)d->n, h = (size_t)d->h;
#pragma omp parallel for schedule(static) if (n * h >= ops_par_min)
    for (size_t r = 0; r < n; r++) {
        const size_t v = softmax_visible(d, r);
        softmax_row_forward(y + r * h, x + r * h, v);
        if (v < h)
            memset(y + r * h + v, 0, (h - v) * sizeof(float));
    }
}

/* Contract: as softmax_forward, each row over the keys its sample's ids do not mark as
 * padding (and, causal, its first r % h + 1); masked keys get 0, a row with none left is
 * all 0. y may alias x. */
void softmax_forward_padded(float *y, const float *x, const int32_t *ids, const SoftmaxDesc *d)
{
    OPS_ASSERT(y && x && ids && d && d->n > 0 && d->h > 0 && d->samples > 0);
    const size_t n = (size_t)d->n, h = (size_t)d->h, S = (size_t)d->samples, per = n / S;
#pragma omp parallel for schedule(static) if (n * h >= ops_par_min)
    for (size_t r = 0; r < n; r++) {
        const size_t v = softmax_visible(d, r), b = r / per;
        const float *xr = x + r * h;
        float *yr = y + r * h;
        float m = -INFINITY;
        for (size_t j = 0; j < v; j++)
            if (ids[j * S + b] != d->pad_id && xr[j] > m)
                m = xr[j];
        double s = 0.0;
        for (size_t j = 0; j < v; j++) {
            const bool key = ids[j * S + b] != d->pad_id;
            yr[j] = key ? expf(xr[j] - m) : 0.0f;
            s += yr[j];
        }
        if (v < h)
            memset(yr + v, 0, (h - v) * sizeof(float));
        const float inv = s > 0.0 ? (float)(1.0 / s) : 0.0f; /* no key left: all 0 */
        for (size_t j = 0; j < v; j++)
            yr[j] *= inv;
    }
}

OPS_TARGET_CLONES
static void softmax_row_backward(float *restrict dx, const float *restrict dy,
                                 const float *restrict y, size_t h, bool acc)
{
    const float dot = (float)row_dot(dy, y, h);
    if (acc) {
#pragma omp simd
        for (size_t j = 0; j < h; j++)
            dx[j] += y[j] * (dy[j] - dot);
    } else {
#pragma omp simd
        for (size_t j = 0; j < h; j++)
            dx[j] = y[j] * (dy[j] - dot);
    }
}

/* Contract: dx (n, h) (=|+=) y * (dy - sum_j dy_j y_j) per row, y the forward output; the
 * causal mask's columns (y = 0 there) get dx = 0, or keep dx when accumulating. dx must
 * not alias the inputs. */
void softmax_backward_data(float *dx, const float *dy, const float *y, const SoftmaxDesc *d)
{
    OPS_ASSERT(dx && dy && y && d && d->n > 0 && d->h > 0);
    const size_t n = (size_t)d->n, h = (size_t)d->h;
#pragma omp parallel for schedule(static) if (n * h >= ops_par_min)
    for (size_t r = 0; r < n; r++) {
        const size_t v = softmax_visible(d, r);
        softmax_row_backward(dx + r * h, dy + r * h, y + r * h, v, d->accumulate);
        if (v < h && !d->accumulate)
            memset(dx + r * h + v, 0, (h - v) * sizeof(float));
    }
}
