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

/* One plane: y (oh, ow) from x (h, w). */
static void pool_plane_forward(float *restrict y, const float *restrict x, const PoolDesc *d)
{
    for (int oh = 0; oh < d->out_h; oh++) {
        int h0, h1;
        pool_window(oh, d->stride_h, d->pad_top, d->win_h, d->h, &h0, &h1);
        for (int ow = 0; ow < d->out_w; ow++) {
            int w0, w1;
            pool_window(ow, d->stride_w, d->pad_left, d->win_w, d->w, &w0, &w1);
            float v;
            if (d->kind == POOL_MAX) {
                v = -INFINITY;
                for (int i = h0; i < h1; i++)
                    for (int j = w0; j < w1; j++)
                        v = x[i * d->w + j] > v ? x[i * d->w + j] : v;
            } else {
                v = 0.0f;
                for (int i = h0; i < h1; i++)
                    for (int j = w0; j < w1; j++)
                        v += x[i * d->w + j];
                v /= (float)((h1 - h0) * (w1 - w0));
            }
            y[oh * d->out_w + ow] = v;
        }
    }
}

/* One plane: dx (h, w) += the gradient of dy (oh, ow). */
static void pool_plane_backward(float *restrict dx, const float *restrict dy,
                                const float *restrict x, const float *restrict y,
                                const PoolDesc *d)
{
    for (int oh = 0; oh < d->out_h; oh++) {
        int h0, h1;
        pool_window(oh, d->stride_h, d->pad_top, d->win_h, d->h, &h0, &h1);
        for (int ow = 0; ow < d->out_w; ow++) {
            int w0, w1;
            pool_window(ow, d->stride_w, d->pad_left, d->win_w, d->w, &w0, &w1);
            const float g = dy[oh * d->out_w + ow];
            if (d->kind == POOL_MAX) {
                /* the first cell (row-major) equal to the forward max takes the gradient,
                 * as the forward scan with '>' would have picked it */
                const float m = y[oh * d->out_w + ow];
                int at = -1;
                for (int i = h0; i < h1 && at < 0; i++)
                    for (int j = w0; j < w1; j++)
                        if (x[i * d->w + j] == m) {
                            at = i * d->w + j;
                            break;
                        }
                /* no match only when the window is all NaN (the forward max is then
                 * -inf): a diverged run should not abort here, its gradient is dropped */
                if (at >= 0)
                    dx[at] += g;
            } else {
                const float share = g / (float)((h1 - h0) * (w1 - w0));
                for (int i = h0; i < h1; i++)
                    for (int j = w0; j < w1; j++)
                        dx[i * d->w + j] += share;
            }
        }
    }
}

/* Contract: y (n, c, oh, ow) = pool(x (n, c, h, w)), overwritten. */
void pool2d_forward(float *y, const float *x, const PoolDesc *d)
{
    OPS_ASSERT(y && x && d);
    const int planes = d->n * d->c;
    const size_t hw = (size_t)d->h * (size_t)d->w, ohw = (size_t)d->out_h * (size_t)d->out_w;
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
#pragma omp parallel for schedule(static) if ((size_t)planes * hw >= ops_par_min)
    for (int p = 0; p < planes; p++) {
        float *dxp = dx + (size_t)p * hw;
        if (!d->accumulate)
            for (size_t i = 0; i < hw; i++)
                dxp[i] = 0.0f;
        pool_plane_backward(dxp, dy + (size_t)p * ohw, x + (size_t)p * hw,
                            y ? y + (size_t)p * ohw : NULL, d);
    }
}
