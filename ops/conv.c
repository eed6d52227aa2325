/* ops/conv.c — OP_CONV2D: im2col + sgemm per image and group (the Caffe scheme), all
 * three phases. A 1x1, stride-1, unpadded kernel needs no columns at all (the image is
 * its own column matrix).
 *
 * Threading: when the batch has at least as many images as there are threads, the
 * images are split among OpenMP threads, each running its own im2col and a
 * single-threaded sgemm on its share (backward-weights: a private weight-gradient
 * accumulator per thread, summed at the end in a fixed order, so results do not depend
 * on timing). One parallel region per op, no hand-over between OpenMP's and OpenBLAS's
 * thread pools inside it: alternating a serial/OpenMP im2col with a multi-threaded
 * sgemm per image made 2-thread steps vary by +-30% on a 2-core machine (the two pools'
 * idle threads compete for the cores), while per-thread images run at ~2x one thread.
 * Smaller batches fall back to one image at a time with a multi-threaded sgemm.
 * Workspace: one column matrix per thread, plus (threads - 1) weight-gradient
 * accumulators for backward-weights; see conv2d_workspace_floats.
 */
#include <omp.h>
#include <string.h>

#include <cblas.h>

#include "ops/kernels.h"

/* True when the input image is already the column matrix. */
bool conv2d_is_1x1(const ConvDesc *d)
{
    return d->r == 1 && d->s == 1 && d->stride_h == 1 && d->stride_w == 1 && d->pad_top == 0 &&
           d->pad_left == 0 && d->pad_bottom == 0 && d->pad_right == 0;
}

/* Threads that split the batch: the configured count when every thread gets an
 * image, else 1 (one image at a time, multi-threaded sgemm). */
static int conv_batch_threads(const ConvDesc *d)
{
    int t = ops_get_threads();
    return d->n >= t ? t : 1;
}

/* Floats of one column matrix (0 on the 1x1 path). */
static size_t conv_col_floats(const ConvDesc *d)
{
    if (conv2d_is_1x1(d))
        return 0;
    return (size_t)(d->c / d->groups) * (size_t)d->r * (size_t)d->s * (size_t)d->out_h *
           (size_t)d->out_w;
}

/* Floats of the weight tensor (k, c/g, r, s). */
static size_t conv_weight_floats(const ConvDesc *d)
{
    return (size_t)d->k * (size_t)(d->c / d->groups) * (size_t)d->r * (size_t)d->s;
}

/* Contract: the workspace the kernels need at the current thread count (ops_set_threads):
 * a column matrix per thread, and for backward-weights an accumulator per extra thread. */
size_t conv2d_workspace_floats(const ConvDesc *d, OpPhase phase)
{
    size_t t = (size_t)conv_batch_threads(d);
    size_t ws = t * conv_col_floats(d);
    if (phase == PHASE_BWD_WEIGHTS)
        ws += (t - 1) * conv_weight_floats(d);
    return ws;
}

/* Images [*lo, *hi) of the calling thread when nt threads split the batch. */
static void conv_my_images(const ConvDesc *d, int nt, int *lo, int *hi)
{
    int t = nt > 1 ? omp_get_thread_num() : 0;
    *lo = (int)((long)d->n * t / nt);
    *hi = (int)((long)d->n * (t + 1) / nt);
}

/* For kernel column kw, the output columns [*lo, *hi) whose input column
 * ow*stride - pad_left + kw lies inside the image; outside it the columns are padding. */
static void conv_valid_cols(const ConvDesc *d, int kw, int *lo, int *hi)
{
    const int sw = d->stride_w, off = kw - d->pad_left;
    /* smallest ow with ow*sw + off >= 0 */
    int a = off >= 0 ? 0 : (-off + sw - 1) / sw;
    /* largest ow with ow*sw + off <= w-1, plus one */
    int b = d->w - 1 - off < 0 ? 0 : (d->w - 1 - off) / sw + 1;
    if (b > d->out_w)
        b = d->out_w;
    if (a > b)
        a = b;
    *lo = a;
    *hi = b;
}

/* col (cg*r*s, oh*ow) = the receptive fields of one image's group slice
 * x (cg, h, w); padded cells read as zero. Runs on the calling thread. */
static void conv_im2col(float *restrict col, const float *restrict x, const ConvDesc *d)
{
    const int cg = d->c / d->groups, r = d->r, s = d->s;
    const int h = d->h, w = d->w, oh = d->out_h, ow = d->out_w;
    const int sh = d->stride_h, sw = d->stride_w;
    const int rows = cg * r * s;
    const size_t ohw = (size_t)oh * (size_t)ow;
    for (int row = 0; row < rows; row++) {
        const int ch = row / (r * s), kh = (row / s) % r, kw = row % s;
        const float *xc = x + (size_t)ch * (size_t)h * (size_t)w;
        float *dst = col + (size_t)row * ohw;
        int lo, hi;
        conv_valid_cols(d, kw, &lo, &hi);
        const int off = kw - d->pad_left;
        for (int o = 0; o < oh; o++, dst += ow) {
            const int ih = o * sh - d->pad_top + kh;
            if (ih < 0 || ih >= h) {
                memset(dst, 0, sizeof(float) * (size_t)ow);
                continue;
            }
            const float *src = xc + (size_t)ih * (size_t)w;
            for (int q = 0; q < lo; q++)
                dst[q] = 0.0f;
            if (sw == 1) {
                /* a loop, not memcpy: rows are short (tens of floats), a call costs more */
#pragma omp simd
                for (int q = lo; q < hi; q++)
                    dst[q] = src[q + off];
            } else {
                for (int q = lo; q < hi; q++)
                    dst[q] = src[q * sw + off];
            }
            for (int q = hi; q < ow; q++)
                dst[q] = 0.0f;
        }
    }
}

/* x (cg, h, w) += col2im(col (cg*r*s, oh*ow)): the adjoint of conv_im2col; padded cells
 * are dropped. Runs on the calling thread. */
static void conv_col2im_add(float *restrict x, const float *restrict col, const ConvDesc *d)
{
    const int cg = d->c / d->groups, r = d->r, s = d->s;
    const int h = d->h, w = d->w, oh = d->out_h, ow = d->out_w;
    const int sh = d->stride_h, sw = d->stride_w;
    const size_t ohw = (size_t)oh * (size_t)ow;
    for (int ch = 0; ch < cg; ch++) {
        float *xc = x + (size_t)ch * (size_t)h * (size_t)w;
        for (int kh = 0; kh < r; kh++) {
            for (int kw = 0; kw < s; kw++) {
                const float *src = col + ((size_t)(ch * r + kh) * (size_t)s + (size_t)kw) * ohw;
                int lo, hi;
                conv_valid_cols(d, kw, &lo, &hi);
                const int off = kw - d->pad_left;
                for (int o = 0; o < oh; o++, src += ow) {
                    const int ih = o * sh - d->pad_top + kh;
                    if (ih < 0 || ih >= h)
                        continue;
                    float *dst = xc + (size_t)ih * (size_t)w;
                    if (sw == 1) {
#pragma omp simd
                        for (int q = lo; q < hi; q++)
                            dst[q + off] += src[q];
                    } else {
                        for (int q = lo; q < hi; q++)
                            dst[q * sw + off] += src[q];
                    }
                }
            }
        }
    }
}

/* The three phases on images [n0, n1) with the calling thread's column buffer. */

static void forward_images(float *y, const float *x, const float *w, const ConvDesc *d, float *col_ws,
                           int n0, int n1)
{
    const bool direct = conv2d_is_1x1(d);
    const int g = d->groups, cg = d->c / g, kg = d->k / g;
    const int crs = cg * d->r * d->s, ohw = d->out_h * d->out_w;
    const size_t hw = (size_t)d->h * (size_t)d->w;
    for (int n = n0; n < n1; n++) {
        for (int gi = 0; gi < g; gi++) {
            const float *xg = x + ((size_t)n * (size_t)d->c + (size_t)gi * (size_t)cg) * hw;
            const float *wg = w + (size_t)gi * (size_t)kg * (size_t)crs;
            float *yg = y + ((size_t)n * (size_t)d->k + (size_t)gi * (size_t)kg) * (size_t)ohw;
            const float *col = xg;
            if (!direct) {
                conv_im2col(col_ws, xg, d);
                col = col_ws;
            }
            /* yg (kg, ohw) = wg (kg, crs) * col (crs, ohw) */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kg, ohw, crs, 1.0f, wg, crs,
                        col, ohw, 0.0f, yg, ohw);
        }
    }
}

static void backward_data_images(float *dx, const float *dy, const float *w, const ConvDesc *d,
                                 float *col_ws, int n0, int n1)
{
    const bool direct = conv2d_is_1x1(d);
    const int g = d->groups, cg = d->c / g, kg = d->k / g;
    const int crs = cg * d->r * d->s, ohw = d->out_h * d->out_w;
    const size_t hw = (size_t)d->h * (size_t)d->w;
    for (int n = n0; n < n1; n++) {
        for (int gi = 0; gi < g; gi++) {
            float *dxg = dx + ((size_t)n * (size_t)d->c + (size_t)gi * (size_t)cg) * hw;
            const float *wg = w + (size_t)gi * (size_t)kg * (size_t)crs;
            const float *dyg = dy + ((size_t)n * (size_t)d->k + (size_t)gi * (size_t)kg) * (size_t)ohw;
            /* col (crs, ohw) = wg^T (crs, kg) * dyg (kg, ohw) */
            if (direct) {
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, crs, ohw, kg, 1.0f, wg,
                            crs, dyg, ohw, d->accumulate ? 1.0f : 0.0f, dxg, ohw);
            } else {
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, crs, ohw, kg, 1.0f, wg,
                            crs, dyg, ohw, 0.0f, col_ws, ohw);
                if (!d->accumulate)
                    memset(dxg, 0, sizeof(float) * (size_t)cg * hw);
                conv_col2im_add(dxg, col_ws, d);
            }
        }
    }
}

/* dw (+)= sum over images [n0, n1) of dy_n col(x_n)^T; the first image overwrites unless
 * `accumulate`. */
static void backward_weights_images(float *dw, const float *dy, const float *x, const ConvDesc *d,
                                    float *col_ws, int n0, int n1, bool accumulate)
{
    const bool direct = conv2d_is_1x1(d);
    const int g = d->groups, cg = d->c / g, kg = d->k / g;
    const int crs = cg * d->r * d->s, ohw = d->out_h * d->out_w;
    const size_t hw = (size_t)d->h * (size_t)d->w;
    if (n0 == n1 && !accumulate) /* a thread without images still owns its share: zero */
        memset(dw, 0, sizeof(float) * conv_weight_floats(d));
    for (int n = n0; n < n1; n++) {
        const float beta = (n == n0 && !accumulate) ? 0.0f : 1.0f;
        for (int gi = 0; gi < g; gi++) {
            const float *xg = x + ((size_t)n * (size_t)d->c + (size_t)gi * (size_t)cg) * hw;
            float *dwg = dw + (size_t)gi * (size_t)kg * (size_t)crs;
            const float *dyg = dy + ((size_t)n * (size_t)d->k + (size_t)gi * (size_t)kg) * (size_t)ohw;
            const float *col = xg;
            if (!direct) {
                conv_im2col(col_ws, xg, d);
                col = col_ws;
            }
            /* dwg (kg, crs) (+)= dyg (kg, ohw) * col^T (ohw, crs) */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kg, crs, ohw, 1.0f, dyg, ohw,
                        col, ohw, beta, dwg, crs);
        }
    }
}

/* Forward and backward-data have the same shape of work: out = f(a, b) image by image. */
typedef void (*ConvImagesFn)(float *out, const float *a, const float *b, const ConvDesc *d, float *col_ws,
                             int n0, int n1);

/* Runs fn over the batch: split among the threads when every thread gets an image (each
 * with its own column buffer and single-threaded sgemm), else on the calling thread. */
static void conv_split_batch(ConvImagesFn fn, float *out, const float *a, const float *b, const ConvDesc *d,
                             float *ws)
{
    const int nt = conv_batch_threads(d);
    const size_t colf = conv_col_floats(d);
    if (nt == 1) {
        fn(out, a, b, d, ws, 0, d->n);
        return;
    }
    ops_blas_serial_begin();
#pragma omp parallel num_threads(nt)
    {
        int lo, hi;
        conv_my_images(d, nt, &lo, &hi);
        fn(out, a, b, d, ws ? ws + (size_t)omp_get_thread_num() * colf : NULL, lo, hi);
    }
    ops_blas_serial_end();
}

/* Contract: y (n, k, oh, ow) = conv(x (n, c, h, w), w (k, c/g, r, s)), overwritten.
 * ws: conv2d_workspace_floats(d, PHASE_FWD) floats (may be NULL when that is 0). */
void conv2d_forward(float *y, const float *x, const float *w, const ConvDesc *d, float *ws)
{
    OPS_ASSERT(y && x && w && d);
    OPS_ASSERT(conv2d_is_1x1(d) || ws);
    conv_split_batch(forward_images, y, x, w, d, ws);
}

/* Contract: dx (n, c, h, w) = (accumulate ? dx : 0) + conv^T(dy (n, k, oh, ow), w).
 * The column gradient W^T dY goes to the thread's column buffer and is scattered back by
 * col2im (which adds, so each image of dx is cleared first unless accumulating); on the
 * 1x1 path the GEMM writes dx directly with beta = accumulate. */
void conv2d_backward_data(float *dx, const float *dy, const float *w, const ConvDesc *d,
                          float *ws)
{
    OPS_ASSERT(dx && dy && w && d);
    OPS_ASSERT(conv2d_is_1x1(d) || ws);
    conv_split_batch(backward_data_images, dx, dy, w, d, ws);
}

/* Contract: dw (k, c/g, r, s) = (accumulate ? dw : 0) + sum_n dy_n (k, oh*ow) col(x_n)^T.
 * Thread 0 accumulates into dw itself, thread t > 0 into its own buffer after the column
 * buffers in ws; the buffers are then added to dw in thread order. */
void conv2d_backward_weights(float *dw, const float *dy, const float *x, const ConvDesc *d,
                             float *ws)
{
    OPS_ASSERT(dw && dy && x && d);
    const int nt = conv_batch_threads(d);
    const size_t colf = conv_col_floats(d), wf = conv_weight_floats(d);
    OPS_ASSERT(ws || (nt == 1 && conv2d_is_1x1(d)));
    if (nt == 1) {
        backward_weights_images(dw, dy, x, d, ws, 0, d->n, d->accumulate);
        return;
    }
    float *partial = ws + (size_t)nt * colf; /* (nt - 1) x wf */
    ops_blas_serial_begin();
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num();
        int lo, hi;
        conv_my_images(d, nt, &lo, &hi);
        float *mine = t == 0 ? dw : partial + (size_t)(t - 1) * wf;
        backward_weights_images(mine, dy, x, d, colf ? ws + (size_t)t * colf : NULL, lo, hi,
                                t == 0 && d->accumulate);
#pragma omp barrier
        /* dw += partials, split by element; each element summed in thread order */
        size_t a, b;
        ops_span_split(wf, &a, &b);
        for (int p = 0; p < nt - 1; p++) {
            const float *src = partial + (size_t)p * wf;
#pragma omp simd
            for (size_t i = a; i < b; i++)
                dw[i] += src[i];
        }
    }
    ops_blas_serial_end();
}
