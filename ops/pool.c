/* ops/pool.c — OP_POOL2D: max and average pooling, forward and backward-data, with TF
 * padding semantics (padded cells never win a max and are not counted by an average).
 * Each (image, channel) plane is independent, so planes are shared among OpenMP threads.
 */
#include <math.h>

#include "ops/kernels.h"

/* The window of output (o) along one axis, clipped to the image: [*lo, *hi). */
static inline void pool_window(int o, int stride, int pad, int win, int in, int *lo, int *hi)
{
    const int start = o * stride - pad;
    *lo = start < 0 ? 0 : start;
    *hi = start + win > in ? in : start + win;
}

/* The planes are walked cell-major: for one output row and a chunk of its columns, each
 * cell (i, j) of the window is visited for all the chunk's outputs at once, in a loop over
 * the output column that vectorises (omp simd). Walking output by output instead, a window
 * at a time, ran max-pool backward 2-3x slower, and at a speed that depended on the data:
 * its scan for the max's cell stopped at a place the branch predictor could not foresee
 * (googlenet's 3x3 stride-1 pool, 32x256x28x28: 44 ms on random inputs and 29 ms on
 * smooth ones, 14 ms cell-major on both, 2 threads). Each output still combines its cells
 * in the order the window-at-a-time loop did, so the results are the same bits. */
enum { POOL_CHUNK = 256 }; /* output columns per pass over the window's cells */

/* The output columns of [o0, o1) whose window holds input column ow * stride - pad + j. */
static inline void pool_cols(const PoolDesc *d, int j, int o0, int o1, int *lo, int *hi)
{
    const int first = d->pad_left - j;   /* ow * stride >= first */
    const int limit = d->w + first;      /* ow * stride < limit */
    int a = first > 0 ? (first + d->stride_w - 1) / d->stride_w : 0;
    int b = limit > 0 ? (limit + d->stride_w - 1) / d->stride_w : 0;
    *lo = a > o0 ? a : o0;
    *hi = b < o1 ? b : o1;
}

/* One plane: y (oh, ow) from x (h, w). */
static void pool_plane_forward(float *restrict y, const float *restrict x, const PoolDesc *d)
{
    float v[POOL_CHUNK];
    const int sw = d->stride_w;
    for (int oh = 0; oh < d->out_h; oh++) {
        int h0, h1;
        pool_window(oh, d->stride_h, d->pad_top, d->win_h, d->h, &h0, &h1);
        float *yr = y + (size_t)oh * d->out_w;
        for (int o0 = 0; o0 < d->out_w; o0 += POOL_CHUNK) {
            const int o1 = o0 + POOL_CHUNK < d->out_w ? o0 + POOL_CHUNK : d->out_w;
            const float init = d->kind == POOL_MAX ? -INFINITY : 0.0f;
            for (int ow = o0; ow < o1; ow++)
                v[ow - o0] = init;
            for (int i = h0; i < h1; i++)        /* row-major, as the window-at-a-time scan */
                for (int j = 0; j < d->win_w; j++) {
                    int lo, hi;
                    pool_cols(d, j, o0, o1, &lo, &hi);
                    const int cell0 = i * d->w + j - d->pad_left; /* + ow * sw: the cell */
                    if (d->kind == POOL_MAX) {
#pragma omp simd
                        for (int ow = lo; ow < hi; ow++)
                            v[ow - o0] = x[cell0 + ow * sw] > v[ow - o0] ? x[cell0 + ow * sw] : v[ow - o0];
                    } else {
#pragma omp simd
                        for (int ow = lo; ow < hi; ow++)
                            v[ow - o0] += x[cell0 + ow * sw];
                    }
                }
            for (int ow = o0; ow < o1; ow++) {
                float r = v[ow - o0];
                if (d->kind == POOL_AVG) {
                    int w0, w1;
                    pool_window(ow, sw, d->pad_left, d->win_w, d->w, &w0, &w1);
                    r /= (float)((h1 - h0) * (w1 - w0));
                }
                yr[ow] = r;
            }
        }
    }
}

/* One plane: dx (h, w) += the gradient of dy (oh, ow). */
static void pool_plane_backward(float *restrict dx, const float *restrict dy,
                                const float *restrict x, const float *restrict y,
                                const PoolDesc *d)
{
    float share[POOL_CHUNK];
    int at[POOL_CHUNK];
    const int sw = d->stride_w;
    for (int oh = 0; oh < d->out_h; oh++) {
        int h0, h1;
        pool_window(oh, d->stride_h, d->pad_top, d->win_h, d->h, &h0, &h1);
        const float *dyr = dy + (size_t)oh * d->out_w;
        for (int o0 = 0; o0 < d->out_w; o0 += POOL_CHUNK) {
            const int o1 = o0 + POOL_CHUNK < d->out_w ? o0 + POOL_CHUNK : d->out_w;
            if (d->kind == POOL_MAX) {
                /* The first cell (row-major) equal to the forward max takes the gradient, as
                 * the forward scan with '>' would have picked it: the cells are visited
                 * backwards and the last match kept. No match only when the window is all
                 * NaN (the forward max is then -inf): a diverged run should not abort here,
                 * its gradient is dropped. */
                const float *m = y + (size_t)oh * d->out_w;
                for (int ow = o0; ow < o1; ow++)
                    at[ow - o0] = -1;
                for (int i = h1 - 1; i >= h0; i--)
                    for (int j = d->win_w - 1; j >= 0; j--) {
                        int lo, hi;
                        pool_cols(d, j, o0, o1, &lo, &hi);
                        const int cell0 = i * d->w + j - d->pad_left; /* + ow * sw: the cell */
#pragma omp simd
                        for (int ow = lo; ow < hi; ow++)
                            at[ow - o0] = x[cell0 + ow * sw] == m[ow] ? cell0 + ow * sw : at[ow - o0];
                    }
                for (int ow = o0; ow < o1; ow++) /* in order: windows overlap */
                    if (at[ow - o0] >= 0)
                        dx[at[ow - o0]] += dyr[ow];
            } else {
                for (int ow = o0; ow < o1; ow++) {
                    int w0, w1;
                    pool_window(ow, sw, d->pad_left, d->win_w, d->w, &w0, &w1);
                    share[ow - o0] = dyr[ow] / (float)((h1 - h0) * (w1 - w0));
                }
                /* j downwards: a cell then takes its outputs' shares in their order */
                for (int i = h0; i < h1; i++)
                    for (int j = d->win_w - 1; j >= 0; j--) {
                        int lo, hi;
                        pool_cols(d, j, o0, o1, &lo, &hi);
                        const int cell0 = i * d->w + j - d->pad_left;
#pragma omp simd
                        for (int ow = lo; ow < hi; ow++)
                            dx[cell0 + ow * sw] += share[ow - o0];
                    }
            }
        }
    }
}

/* ---- global pooling: the window is the whole plane ----
 * ResNet's and GoogLeNet's average, a sentence CNN's max over time. The general loop
 * above finds, for every cell, the outputs whose windows hold it (two divisions a cell):
 * with one output a plane that is all it does, about 3 ns a cell (textcnn's max over 62
 * time steps, 50 x 128 planes: 1.2 ms forward, 1.3 ms backward). Here each plane is one
 * run of h*w floats; POOL_CHUNK planes are reduced side by side, cell by cell in the
 * general loop's row-major order (the same bits), so that the loop over the planes
 * vectorises. */
bool pool2d_is_global(const PoolDesc *d)
{
    return d->out_h == 1 && d->out_w == 1 && d->win_h == d->h && d->win_w == d->w && d->pad_top == 0 &&
           d->pad_left == 0 && d->pad_bottom == 0 && d->pad_right == 0;
}

/* y[q] = pool of plane q of x, for the nb <= POOL_CHUNK planes of one chunk. */
static void pool_global_forward(float *restrict y, const float *restrict x, const PoolDesc *d, int nb)
{
    const size_t hw = (size_t)d->h * (size_t)d->w;
    float v[POOL_CHUNK];
    for (int q = 0; q < nb; q++)
        v[q] = d->kind == POOL_MAX ? -INFINITY : 0.0f;
    for (size_t i = 0; i < hw; i++) {
        if (d->kind == POOL_MAX) {
#pragma omp simd
            for (int q = 0; q < nb; q++)
                v[q] = x[(size_t)q * hw + i] > v[q] ? x[(size_t)q * hw + i] : v[q];
        } else {
#pragma omp simd
            for (int q = 0; q < nb; q++)
                v[q] += x[(size_t)q * hw + i];
        }
    }
    for (int q = 0; q < nb; q++)
        y[q] = d->kind == POOL_AVG ? v[q] / (float)hw : v[q];
}

/* One plane: dx (h, w) += the gradient of its output dy. Max gives it to the first cell
 * (row-major) equal to the forward max m, as the general loop does (none when the plane
 * was all NaN); average spreads it evenly. */
static void pool_global_backward(float *restrict dx, float dy, const float *restrict x, float m,
                                 const PoolDesc *d)
{
    const size_t hw = (size_t)d->h * (size_t)d->w;
    if (d->kind == POOL_MAX) {
        for (size_t i = 0; i < hw; i++)
            if (x[i] == m) {
                dx[i] += dy;
                return;
            }
        return;
    }
    const float share = dy / (float)hw;
#pragma omp simd
    for (size_t i = 0; i < hw; i++)
        dx[i] += share;
}

/* Contract: y (n, c, oh, ow) = pool(x (n, c, h, w)), overwritten. */
void pool2d_forward(float *y, const float *x, const PoolDesc *d)
{
    OPS_ASSERT(y && x && d);
    const int planes = d->n * d->c;
    const size_t hw = (size_t)d->h * (size_t)d->w, ohw = (size_t)d->out_h * (size_t)d->out_w;
    if (pool2d_is_global(d)) {
        const int chunks = (planes + POOL_CHUNK - 1) / POOL_CHUNK;
#pragma omp parallel for schedule(static) if ((size_t)planes * hw >= ops_par_min)
        for (int c = 0; c < chunks; c++) {
            const int p0 = c * POOL_CHUNK, nb = planes - p0 < POOL_CHUNK ? planes - p0 : POOL_CHUNK;
            pool_global_forward(y + p0, x + (size_t)p0 * hw, d, nb);
        }
        return;
    }
#pragma omp parallel for schedule(static) if ((size_t)planes * hw >= ops_par_min)
    for (int p = 0; p < planes; p++)
        pool_plane_forward(y + (size_t)p * ohw, x + (size_t)p * hw, d);
}

/* Contract: dx (n, c, h, w) = (accumulate ? dx : 0) + pool'(dy (n, c, oh, ow)), with the
 * max positions recomputed from x and the forward output y. */
void pool2d_backward_data(float *dx, const float *dy, const float *x, const float *y,
                          const PoolDesc *d)
{
    OPS_ASSERT(dx && dy && x && (y || d->kind != POOL_MAX) && d);
    const int planes = d->n * d->c;
    const size_t hw = (size_t)d->h * (size_t)d->w, ohw = (size_t)d->out_h * (size_t)d->out_w;
    const bool global = pool2d_is_global(d);
#pragma omp parallel for schedule(static) if ((size_t)planes * hw >= ops_par_min)
    for (int p = 0; p < planes; p++) {
        float *dxp = dx + (size_t)p * hw;
        if (!d->accumulate)
            for (size_t i = 0; i < hw; i++)
                dxp[i] = 0.0f;
        if (global) {
            pool_global_backward(dxp, dy[p], x + (size_t)p * hw, y ? y[p] : 0.0f, d);
            continue;
        }
        pool_plane_backward(dxp, dy + (size_t)p * ohw, x + (size_t)p * hw,
                            y ? y + (size_t)p * ohw : NULL, d);
    }
}
