/* ops/conv.c — OP_CONV2D: im2col + sgemm per image and group (the Caffe scheme), all
 * three phases. The workspace is one image's column matrix (C/g*R*S, OH*OW), so memory
 * stays bounded at any batch size; a 1x1, stride-1, unpadded kernel needs no columns at
 * all (the image is its own column matrix). OpenBLAS threads do the GEMMs.
 *
 * im2col/col2im run on OpenMP threads only when OMP_WAIT_POLICY=passive. With libgomp's
 * default policy its idle workers spin (pause loops, milliseconds) after every parallel
 * region, on the very cores the next per-image sgemm hands to OpenBLAS's own pthreads. On
 * the 2-core development machine that made AlexNet-OWT conv2 at batch 16 (64->192, 5x5
 * SAME, 27x27) run at 28 GFLOP/s in every phase with 2 threads; with the serial im2col it
 * runs at 160-180 GFLOP/s (its per-image sgemm alone: 180-195), OpenMP im2col under the
 * passive policy at 150-185. The serial im2col costs ~0.3 ms next to ~2.5 ms of GEMM per
 * image; on many-core machines, where that ratio grows, run with OMP_WAIT_POLICY=passive.
 */
#include <string.h>

#include <cblas.h>

#include "ops/kernels.h"

/* True when the input image is already the column matrix. */
bool conv2d_is_1x1(const ConvDesc *d)
{
    return d->r == 1 && d->s == 1 && d->stride_h == 1 && d->stride_w == 1 && d->pad_top == 0 &&
           d->pad_left == 0 && d->pad_bottom == 0 && d->pad_right == 0;
}

/* Floats of column buffer the kernels need (0 on the 1x1 path). */
size_t conv2d_workspace_floats(const ConvDesc *d)
{
    if (conv2d_is_1x1(d))
        return 0;
    return (size_t)(d->c / d->groups) * (size_t)d->r * (size_t)d->s * (size_t)d->out_h *
           (size_t)d->out_w;
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
 * x (cg, h, w); padded cells read as zero. Rows are independent, so (when OpenMP is safe
 * here, see the file header) they are shared among the threads in contiguous blocks. */
static void conv_im2col(float *restrict col, const float *restrict x, const ConvDesc *d)
{
    const int cg = d->c / d->groups, r = d->r, s = d->s;
    const int h = d->h, w = d->w, oh = d->out_h, ow = d->out_w;
    const int sh = d->stride_h, sw = d->stride_w;
    const int rows = cg * r * s;
    const size_t ohw = (size_t)oh * (size_t)ow;
    const bool par = ops_omp_idle_sleeps(); /* see the file header */
#pragma omp parallel for schedule(static) if ((size_t)rows * ohw >= OPS_PAR_MIN && par)
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
 * are dropped. Rows of one channel all add into that channel, so the threads split the
 * channels (not the rows) and never write the same cell. */
static void conv_col2im_add(float *restrict x, const float *restrict col, const ConvDesc *d)
{
    const int cg = d->c / d->groups, r = d->r, s = d->s;
    const int h = d->h, w = d->w, oh = d->out_h, ow = d->out_w;
    const int sh = d->stride_h, sw = d->stride_w;
    const size_t ohw = (size_t)oh * (size_t)ow;
    const bool par = ops_omp_idle_sleeps(); /* see the file header */
#pragma omp parallel for schedule(static) if ((size_t)cg * (size_t)r * (size_t)s * ohw >= OPS_PAR_MIN && par)
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

/* Contract: y (n, k, oh, ow) = conv(x (n, c, h, w), w (k, c/g, r, s)), overwritten.
 * ws: conv2d_workspace_floats(d) floats (unused on the 1x1 path). */
void conv2d_forward(float *y, const float *x, const float *w, const ConvDesc *d, float *ws)
{
    OPS_ASSERT(y && x && w && d);
    const bool direct = conv2d_is_1x1(d);
    OPS_ASSERT(direct || ws);
    const int g = d->groups, cg = d->c / g, kg = d->k / g;
    const int crs = cg * d->r * d->s, ohw = d->out_h * d->out_w;
    const size_t hw = (size_t)d->h * (size_t)d->w;
    for (int n = 0; n < d->n; n++) {
        for (int gi = 0; gi < g; gi++) {
            const float *xg = x + ((size_t)n * (size_t)d->c + (size_t)gi * (size_t)cg) * hw;
            const float *wg = w + (size_t)gi * (size_t)kg * (size_t)crs;
            float *yg = y + ((size_t)n * (size_t)d->k + (size_t)gi * (size_t)kg) * (size_t)ohw;
            const float *col = xg;
            if (!direct) {
                conv_im2col(ws, xg, d);
                col = ws;
            }
            /* yg (kg, ohw) = wg (kg, crs) * col (crs, ohw) */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kg, ohw, crs, 1.0f, wg, crs,
                        col, ohw, 0.0f, yg, ohw);
        }
    }
}

/* Contract: dx (n, c, h, w) = (accumulate ? dx : 0) + conv^T(dy (n, k, oh, ow), w).
 * The column gradient W^T dY goes to ws and is scattered back by col2im (which adds, so
 * each slice of dx is cleared first unless accumulating); on the 1x1 path the GEMM
 * writes dx directly with beta = accumulate. */
void conv2d_backward_data(float *dx, const float *dy, const float *w, const ConvDesc *d,
                          float *ws)
{
    OPS_ASSERT(dx && dy && w && d);
    const bool direct = conv2d_is_1x1(d);
    OPS_ASSERT(direct || ws);
    const int g = d->groups, cg = d->c / g, kg = d->k / g;
    const int crs = cg * d->r * d->s, ohw = d->out_h * d->out_w;
    const size_t hw = (size_t)d->h * (size_t)d->w;
    for (int n = 0; n < d->n; n++) {
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
                            crs, dyg, ohw, 0.0f, ws, ohw);
                /* cleared slice by slice, not in one parallel pass up front: an OpenMP
                 * region right before the GEMMs would cost more than it saves (header) */
                if (!d->accumulate)
                    memset(dxg, 0, sizeof(float) * (size_t)cg * hw);
                conv_col2im_add(dxg, ws, d);
            }
        }
    }
}

/* Contract: dw (k, c/g, r, s) = (accumulate ? dw : 0) + sum_n dy_n (k, oh*ow) col(x_n)^T.
 * The first image's GEMM takes beta from the accumulate flag, later ones beta = 1, so dw
 * is never cleared separately. */
void conv2d_backward_weights(float *dw, const float *dy, const float *x, const ConvDesc *d,
                             float *ws)
{
    OPS_ASSERT(dw && dy && x && d);
    const bool direct = conv2d_is_1x1(d);
    OPS_ASSERT(direct || ws);
    const int g = d->groups, cg = d->c / g, kg = d->k / g;
    const int crs = cg * d->r * d->s, ohw = d->out_h * d->out_w;
    const size_t hw = (size_t)d->h * (size_t)d->w;
    for (int n = 0; n < d->n; n++) {
        const float beta = (n == 0 && !d->accumulate) ? 0.0f : 1.0f;
        for (int gi = 0; gi < g; gi++) {
            const float *xg = x + ((size_t)n * (size_t)d->c + (size_t)gi * (size_t)cg) * hw;
            float *dwg = dw + (size_t)gi * (size_t)kg * (size_t)crs;
            const float *dyg = dy + ((size_t)n * (size_t)d->k + (size_t)gi * (size_t)kg) * (size_t)ohw;
            const float *col = xg;
            if (!direct) {
                conv_im2col(ws, xg, d);
                col = ws;
            }
            /* dwg (kg, crs) (+)= dyg (kg, ohw) * col^T (ohw, crs) */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kg, crs, ohw, 1.0f, dyg, ohw,
                        col, ohw, beta, dwg, crs);
        }
    }
}
