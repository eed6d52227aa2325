/* ops/conv.c — OP_CONV2D: im2col + sgemm per chunk of images and group (the Caffe
 * scheme, with small feature maps batched), all three phases. A 1x1, stride-1, unpadded
 * kernel run one image at a time needs no columns at all (the image is its own column
 * matrix).
 *
 * Chunks: feature maps under CONV_TARGET_COLS/2 pixels put several images' columns side
 * by side in one GEMM (conv_chunk_images); the output side then goes through a matrix
 * of the chunk (gathered from dy, or scattered to y).
 *
 * Sequence convolutions (a text CNN's: one channel a group, the filter as wide as the
 * input) copy each output's window whole, as a row of a transposed column matrix
 * (conv2d_is_rows, chunk_rows); the GEMMs read it transposed.
 *
 * Threading: when the batch has at least as many images as there are threads, the
 * images are split among OpenMP threads, each running its own im2col and a
 * single-threaded sgemm on its share (backward-weights: a private weight-gradient
 * accumulator per thread, summed at the end in a fixed order, so results do not depend
 * on timing). One parallel region per op, no hand-over between OpenMP's and OpenBLAS's
 * thread pools inside it: alternating a serial/OpenMP im2col with a multi-threaded
 * sgemm per image made 2-thread steps vary by +-30% on a 2-core machine (the two pools'
 * idle threads compete for the cores), while per-thread images run at ~2x one thread.
 * Smaller batches fall back to one chunk at a time with a multi-threaded sgemm.
 * Workspace: one slice per thread, thread t's t slices in: its column and output-side
 * matrices and, for backward-weights, its weight-gradient accumulator. A plan lays every
 * convolution's slices the same distance apart (ConvDesc.ws_slice_floats, the plan's
 * largest slice), so a thread computes in the same addresses in every convolution of a
 * step. Packed, each op's own slices (a 3x3 layer's 4 MB, the 1x1 layer's 2 MB after it)
 * put thread 1's slice on lines thread 0 had just written: with the two cores on two
 * caches (the VM's "apart" placement) ResNet-152's bottleneck convolutions at batch 4 then
 * ran 17-38% slower in steps than alone (in-step traces and a harness timing one op after
 * the ops before it); evicting the workspace before the op, or nothing else, removed it.
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

/* True for a sequence convolution (Kim's sentence CNN: one input channel per group, the
 * filter as wide as the input, no padding): each output's receptive field is one run of
 * r*w floats of the input, so its column is a plain copy, taken as a row of a transposed
 * column matrix that the GEMMs read transposed. im2col's rows run along out_w, which is 1
 * here: it moved one float per inner loop (textcnn's convolutions, 480 x 60 floats an
 * image, ran at 52 GFLOP/s on 2 threads; copied as rows, 130-185 GFLOP/s, in zoo
 * validations). */
bool conv2d_is_rows(const ConvDesc *d)
{
    return d->c / d->groups == 1 && d->s == d->w && d->pad_top == 0 && d->pad_bottom == 0 && d->pad_left == 0 &&
           d->pad_right == 0 && !conv2d_is_1x1(d);
}

/* Threads that split the batch at `threads` threads: all of them when every thread gets an
 * image, else 1 (one image at a time, multi-threaded sgemm). */
static int conv_split_threads(const ConvDesc *d, int threads) { return threads > 1 && d->n >= threads ? threads : 1; }

static int conv_batch_threads(const ConvDesc *d) { return conv_split_threads(d, ops_get_threads()); }

double conv2d_thread_imbalance(const ConvDesc *d, int threads)
{
    const int nt = conv_split_threads(d, threads);
    const int per = (d->n + nt - 1) / nt; /* conv_my_images: some threads take one more */
    return (double)per * nt / d->n;
}

/* Columns one GEMM should have at least. A small feature map (7x7 .. 14x14) gives GEMMs
 * of only oh*ow = 49..196 columns, which run the BLAS kernel below its speed and repack
 * the weights for every image; placing several images' columns side by side makes one
 * GEMM of about this width. Measured (2-core Zen VM, OpenBLAS Haswell kernels, ResNet-50
 * batch 16, dlperf run --trace): the 7x7 and 14x14 convolutions of a step 1.67 s -> 1.58 s,
 * the 3x3 512-channel 7x7 ones 89-103 -> 110-121 GFLOP/s; larger maps are unchanged. */
enum { CONV_TARGET_COLS = 1024 };

/* Images per GEMM (a chunk): 1 for feature maps of at least half the target width,
 * else enough images for the target, at most one thread's share of the batch. */
static int conv_chunk_images(const ConvDesc *d)
{
    const int ohw = d->out_h * d->out_w, nt = conv_batch_threads(d);
    if (ohw >= CONV_TARGET_COLS / 2)
        return 1;
    int chunk = (CONV_TARGET_COLS + ohw - 1) / ohw;
    int share = (d->n + nt - 1) / nt;
    return chunk < share ? chunk : (share > 0 ? share : 1);
}

/* Floats of one thread's column matrix: crs rows of (chunk * oh*ow) columns; 0 when a
 * 1x1 convolution runs one image at a time (the image is its own column matrix). */
static size_t conv_col_floats(const ConvDesc *d)
{
    const int chunk = conv_chunk_images(d);
    if (chunk == 1 && conv2d_is_1x1(d))
        return 0;
    return (size_t)(d->c / d->groups) * (size_t)d->r * (size_t)d->s * (size_t)chunk * (size_t)d->out_h *
           (size_t)d->out_w;
}

/* Floats of one thread's output-side matrix (k/g rows of chunk * oh*ow columns) that
 * gathers or scatters the chunk's images; 0 at one image per GEMM (the GEMM reads and
 * writes the tensor itself). */
static size_t conv_tmp_floats(const ConvDesc *d)
{
    const int chunk = conv_chunk_images(d);
    if (chunk == 1)
        return 0;
    return (size_t)(d->k / d->groups) * (size_t)chunk * (size_t)d->out_h * (size_t)d->out_w;
}

/* Floats of the weight tensor (k, c/g, r, s). */
static size_t conv_weight_floats(const ConvDesc *d)
{
    return (size_t)d->k * (size_t)(d->c / d->groups) * (size_t)d->r * (size_t)d->s;
}

/* Floats in a whole number of cache lines, so that no line lies in two threads' slices. */
static size_t conv_round_line(size_t floats)
{
    enum { LINE_FLOATS = 64 / sizeof(float) };
    return (floats + LINE_FLOATS - 1) / LINE_FLOATS * LINE_FLOATS;
}

/* Floats of one thread's slice this op needs: its column and output-side matrices and,
 * for backward-weights split over threads, its weight-gradient accumulator (thread 0
 * accumulates into dw itself, but the slices are alike). */
static size_t conv_own_slice_floats(const ConvDesc *d, OpPhase phase)
{
    size_t f = conv_col_floats(d) + conv_tmp_floats(d);
    if (phase == PHASE_BWD_WEIGHTS && conv_batch_threads(d) > 1)
        f += conv_weight_floats(d);
    return f ? conv_round_line(f) : 0;
}

/* Contract: floats from one thread's slice to the next at the current thread count: the
 * op's own need, or the plan's (d->ws_slice_floats) where that is larger. */
size_t conv2d_slice_floats(const ConvDesc *d, OpPhase phase)
{
    const size_t own = conv_own_slice_floats(d, phase);
    return own == 0 || d->ws_slice_floats < own ? own : d->ws_slice_floats;
}

/* Contract: the workspace the kernels need at the current thread count (ops_set_threads):
 * one slice per thread that computes (conv2d_slice_floats). */
size_t conv2d_workspace_floats(const ConvDesc *d, OpPhase phase)
{
    return (size_t)conv_batch_threads(d) * conv2d_slice_floats(d, phase);
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

/* col (cg*r*s rows of stride ld, oh*ow columns each) = the receptive fields of one
 * image's group slice x (cg, h, w); padded cells read as zero. Runs on the calling
 * thread. */
static void conv_im2col(float *restrict col, size_t ld, const float *restrict x, const ConvDesc *d)
{
    const int cg = d->c / d->groups, r = d->r, s = d->s;
    const int h = d->h, w = d->w, oh = d->out_h, ow = d->out_w;
    const int sh = d->stride_h, sw = d->stride_w;
    const int rows = cg * r * s;
    for (int row = 0; row < rows; row++) {
        const int ch = row / (r * s), kh = (row / s) % r, kw = row % s;
        const float *xc = x + (size_t)ch * (size_t)h * (size_t)w;
        float *dst = col + (size_t)row * ld;
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

/* x (cg, h, w) += col2im(col (cg*r*s rows of stride ld)): the adjoint of conv_im2col;
 * padded cells are dropped. Runs on the calling thread. */
static void conv_col2im_add(float *restrict x, const float *restrict col, size_t ld, const ConvDesc *d)
{
    const int cg = d->c / d->groups, r = d->r, s = d->s;
    const int h = d->h, w = d->w, oh = d->out_h, ow = d->out_w;
    const int sh = d->stride_h, sw = d->stride_w;
    for (int ch = 0; ch < cg; ch++) {
        float *xc = x + (size_t)ch * (size_t)h * (size_t)w;
        for (int kh = 0; kh < r; kh++) {
            for (int kw = 0; kw < s; kw++) {
                const float *src = col + ((size_t)(ch * r + kh) * (size_t)s + (size_t)kw) * ld;
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

/* The output-side matrix of a chunk of nc images, (kg rows, nc * ohw columns), and the
 * tensor slices (kg, ohw) of each image's group gi: gather copies the slices of t
 * (n, k, oh, ow) into the matrix, scatter the other way. */
static void chunk_gather(float *restrict m, const float *restrict t, const ConvDesc *d, int n0, int nc, int gi)
{
    const int kg = d->k / d->groups, ohw = d->out_h * d->out_w;
    const size_t ld = (size_t)nc * (size_t)ohw;
    for (int j = 0; j < nc; j++) {
        const float *src = t + ((size_t)(n0 + j) * (size_t)d->k + (size_t)gi * (size_t)kg) * (size_t)ohw;
        for (int row = 0; row < kg; row++)
            memcpy(m + (size_t)row * ld + (size_t)j * ohw, src + (size_t)row * ohw, sizeof(float) * (size_t)ohw);
    }
}

static void chunk_scatter(float *restrict t, const float *restrict m, const ConvDesc *d, int n0, int nc, int gi)
{
    const int kg = d->k / d->groups, ohw = d->out_h * d->out_w;
    const size_t ld = (size_t)nc * (size_t)ohw;
    for (int j = 0; j < nc; j++) {
        float *dst = t + ((size_t)(n0 + j) * (size_t)d->k + (size_t)gi * (size_t)kg) * (size_t)ohw;
        for (int row = 0; row < kg; row++)
            memcpy(dst + (size_t)row * ohw, m + (size_t)row * ld + (size_t)j * ohw, sizeof(float) * (size_t)ohw);
    }
}

/* The column matrix of images [n0, n0 + nc) of group gi, (crs, nc * ohw): the image
 * itself for one unpadded 1x1 image, else im2col of each into col_ws. */
static const float *chunk_columns(const float *x, const ConvDesc *d, float *col_ws, int n0, int nc, int gi)
{
    const int cg = d->c / d->groups;
    const size_t hw = (size_t)d->h * (size_t)d->w, ohw = (size_t)d->out_h * (size_t)d->out_w;
    const float *x0 = x + ((size_t)n0 * (size_t)d->c + (size_t)gi * (size_t)cg) * hw;
    if (nc == 1 && conv2d_is_1x1(d))
        return x0;
    for (int j = 0; j < nc; j++)
        conv_im2col(col_ws + (size_t)j * ohw, (size_t)nc * ohw, x0 + (size_t)j * (size_t)d->c * hw, d);
    return col_ws;
}

/* The transposed column matrix of a sequence convolution's images [n0, n0 + nc) of group
 * gi (conv2d_is_rows), (nc * oh rows, r*w columns): row j*oh + o is image j's window at
 * output o. */
static const float *chunk_rows(const float *x, const ConvDesc *d, float *col_ws, int n0, int nc, int gi)
{
    const size_t hw = (size_t)d->h * (size_t)d->w, len = (size_t)d->r * (size_t)d->w;
    const size_t step = (size_t)d->stride_h * (size_t)d->w;
    for (int j = 0; j < nc; j++) {
        const float *xj = x + ((size_t)(n0 + j) * (size_t)d->c + (size_t)gi) * hw;
        float *dst = col_ws + (size_t)j * (size_t)d->out_h * len;
        for (int o = 0; o < d->out_h; o++, dst += len)
            memcpy(dst, xj + (size_t)o * step, sizeof(float) * len);
    }
    return col_ws;
}

/* x (h, w) += the windows' gradients, rows (oh, r*w) of image j: the adjoint of chunk_rows
 * (the windows overlap where stride_h < r, so they add). */
static void rows_add(float *restrict x, const float *restrict rows, const ConvDesc *d)
{
    const size_t len = (size_t)d->r * (size_t)d->w, step = (size_t)d->stride_h * (size_t)d->w;
    for (int o = 0; o < d->out_h; o++, rows += len) {
        float *dst = x + (size_t)o * step;
#pragma omp simd
        for (size_t q = 0; q < len; q++)
            dst[q] += rows[q];
    }
}

/* The three phases on images [n0, n1), chunk by chunk, with the calling thread's
 * column (col_ws) and output-side (tmp_ws) matrices. */

static void forward_images(float *y, const float *x, const float *w, const ConvDesc *d, float *col_ws,
                           float *tmp_ws, int n0, int n1)
{
    const int g = d->groups, cg = d->c / g, kg = d->k / g, chunk = conv_chunk_images(d);
    const int crs = cg * d->r * d->s, ohw = d->out_h * d->out_w;
    const bool rows = conv2d_is_rows(d);
    for (int n = n0; n < n1; n += chunk) {
        const int nc = n1 - n < chunk ? n1 - n : chunk, cols = nc * ohw;
        for (int gi = 0; gi < g; gi++) {
            const float *wg = w + (size_t)gi * (size_t)kg * (size_t)crs;
            float *out = nc == 1 ? y + ((size_t)n * (size_t)d->k + (size_t)gi * (size_t)kg) * (size_t)ohw : tmp_ws;
            if (rows) { /* out (kg, cols) = wg (kg, crs) * rows (cols, crs)^T */
                const float *rm = chunk_rows(x, d, col_ws, n, nc, gi);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kg, cols, crs, 1.0f, wg, crs, rm, crs, 0.0f,
                            out, cols);
            } else { /* out (kg, cols) = wg (kg, crs) * col (crs, cols) */
                const float *col = chunk_columns(x, d, col_ws, n, nc, gi);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kg, cols, crs, 1.0f, wg, crs, col, cols,
                            0.0f, out, cols);
            }
            if (nc > 1)
                chunk_scatter(y, tmp_ws, d, n, nc, gi);
        }
    }
}

static void backward_data_images(float *dx, const float *dy, const float *w, const ConvDesc *d,
                                  float *col_ws, float *tmp_ws, int n0, int n1)
{
    const bool direct = conv2d_is_1x1(d), rows = conv2d_is_rows(d);
    const int g = d->groups, cg = d->c / g, kg = d->k / g, chunk = conv_chunk_images(d);
    const int crs = cg * d->r * d->s, ohw = d->out_h * d->out_w;
    const size_t hw = (size_t)d->h * (size_t)d->w;
    for (int n = n0; n < n1; n += chunk) {
        const int nc = n1 - n < chunk ? n1 - n : chunk, cols = nc * ohw;
        for (int gi = 0; gi < g; gi++) {
            const float *wg = w + (size_t)gi * (size_t)kg * (size_t)crs;
            float *dx0 = dx + ((size_t)n * (size_t)d->c + (size_t)gi * (size_t)cg) * hw;
            const float *dyg = dy + ((size_t)n * (size_t)d->k + (size_t)gi * (size_t)kg) * (size_t)ohw;
            if (nc > 1) {
                chunk_gather(tmp_ws, dy, d, n, nc, gi);
                dyg = tmp_ws;
            }
            /* col (crs, cols) = wg^T (crs, kg) * dyg (kg, cols) */
            if (direct && nc == 1) {
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, crs, cols, kg, 1.0f, wg, crs, dyg, cols,
                            d->accumulate ? 1.0f : 0.0f, dx0, cols);
                continue;
            }
            if (rows) /* rows (cols, crs) = dyg^T (cols, kg) * wg (kg, crs) */
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, cols, crs, kg, 1.0f, dyg, cols, wg, crs, 0.0f,
                            col_ws, crs);
            else
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, crs, cols, kg, 1.0f, wg, crs, dyg, cols, 0.0f,
                            col_ws, cols);
            for (int j = 0; j < nc; j++) {
                float *dxj = dx0 + (size_t)j * (size_t)d->c * hw;
                if (!d->accumulate)
                    memset(dxj, 0, sizeof(float) * (size_t)cg * hw);
                if (rows)
                    rows_add(dxj, col_ws + (size_t)j * (size_t)ohw * (size_t)crs, d);
                else
                    conv_col2im_add(dxj, col_ws + (size_t)j * ohw, (size_t)cols, d);
            }
        }
    }
}

/* dw (+)= sum over images [n0, n1) of dy_n col(x_n)^T; the first chunk overwrites unless
 * `accumulate`. */
static void backward_weights_images(float *dw, const float *dy, const float *x, const ConvDesc *d,
                                    float *col_ws, float *tmp_ws, int n0, int n1, bool accumulate)
{
    const int g = d->groups, cg = d->c / g, kg = d->k / g, chunk = conv_chunk_images(d);
    const int crs = cg * d->r * d->s, ohw = d->out_h * d->out_w;
    const bool rows = conv2d_is_rows(d);
    if (n0 == n1 && !accumulate) /* a thread without images still owns its share: zero */
        memset(dw, 0, sizeof(float) * conv_weight_floats(d));
    for (int n = n0; n < n1; n += chunk) {
        const int nc = n1 - n < chunk ? n1 - n : chunk, cols = nc * ohw;
        const float beta = (n == n0 && !accumulate) ? 0.0f : 1.0f;
        for (int gi = 0; gi < g; gi++) {
            float *dwg = dw + (size_t)gi * (size_t)kg * (size_t)crs;
            const float *dyg = dy + ((size_t)n * (size_t)d->k + (size_t)gi * (size_t)kg) * (size_t)ohw;
            if (nc > 1) {
                chunk_gather(tmp_ws, dy, d, n, nc, gi);
                dyg = tmp_ws;
            }
            if (rows) { /* dwg (kg, crs) (+)= dyg (kg, cols) * rows (cols, crs) */
                const float *rm = chunk_rows(x, d, col_ws, n, nc, gi);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kg, crs, cols, 1.0f, dyg, cols, rm, crs,
                            beta, dwg, crs);
            } else { /* dwg (kg, crs) (+)= dyg (kg, cols) * col^T (cols, crs) */
                const float *col = chunk_columns(x, d, col_ws, n, nc, gi);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kg, crs, cols, 1.0f, dyg, cols, col, cols,
                            beta, dwg, crs);
            }
        }
    }
}

/* Forward and backward-data have the same shape of work: out = f(a, b) chunk by chunk. */
typedef void (*ConvImagesFn)(float *out, const float *a, const float *b, const ConvDesc *d, float *col_ws,
                             float *tmp_ws, int n0, int n1);

/* Runs fn over the batch: split among the threads when every thread gets an image (each
 * with its own matrices and single-threaded sgemm), else on the calling thread. */
static void conv_split_batch(ConvImagesFn fn, float *out, const float *a, const float *b, const ConvDesc *d,
                             float *ws)
{
    const int nt = conv_batch_threads(d);
    /* forward and backward-data need the same slice (no accumulator) */
    const size_t colf = conv_col_floats(d), slice = conv2d_slice_floats(d, PHASE_FWD);
    if (nt == 1) {
        fn(out, a, b, d, ws, ws ? ws + colf : NULL, 0, d->n);
        return;
    }
    ops_blas_serial_begin();
#pragma omp parallel num_threads(nt)
    {
        int lo, hi;
        conv_my_images(d, nt, &lo, &hi);
        float *mine = slice ? ws + (size_t)omp_get_thread_num() * slice : NULL;
        fn(out, a, b, d, mine, mine ? mine + colf : NULL, lo, hi);
    }
    ops_blas_serial_end();
}

/* Contract: y (n, k, oh, ow) = conv(x (n, c, h, w), w (k, c/g, r, s)), overwritten.
 * ws: conv2d_workspace_floats(d, PHASE_FWD) floats (may be NULL when that is 0). */
void conv2d_forward(float *y, const float *x, const float *w, const ConvDesc *d, float *ws)
{
    OPS_ASSERT(y && x && w && d);
    OPS_ASSERT(ws || conv2d_workspace_floats(d, PHASE_FWD) == 0);
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
    OPS_ASSERT(ws || conv2d_workspace_floats(d, PHASE_BWD_DATA) == 0);
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
    const size_t colf = conv_col_floats(d), tmpf = conv_tmp_floats(d), wf = conv_weight_floats(d);
    OPS_ASSERT(ws || (nt == 1 && colf + tmpf == 0));
    if (nt == 1) {
        backward_weights_images(dw, dy, x, d, ws, ws ? ws + colf : NULL, 0, d->n, d->accumulate);
        return;
    }
    /* thread t's slice: column matrix | output-side matrix | accumulator (t > 0) */
    const size_t slice = conv2d_slice_floats(d, PHASE_BWD_WEIGHTS);
    ops_blas_serial_begin();
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num();
        int lo, hi;
        conv_my_images(d, nt, &lo, &hi);
        float *own = ws + (size_t)t * slice;
        float *mine = t == 0 ? dw : own + colf + tmpf;
        backward_weights_images(mine, dy, x, d, own, own + colf, lo, hi, t == 0 && d->accumulate);
#pragma omp barrier
        /* dw += partials, split by element; each element summed in thread order */
        size_t a, b;
        ops_span_split(wf, &a, &b);
        for (int p = 1; p < nt; p++) {
            const float *src = ws + (size_t)p * slice + colf + tmpf;
#pragma omp simd
            for (size_t i = a; i < b; i++)
                dw[i] += src[i];
        }
    }
    ops_blas_serial_end();
}
