/* ops/norm.c — OP_BATCHNORM (per-channel batch normalisation, Keras semantics) and OP_LRN
 * (Caffe's cross-channel local response normalisation). Both are memory-bound.
 *
 * Batch norm threads split the channels: a channel's statistics are a sum over its n
 * planes, so each channel has one owner and no reduction crosses threads (the result does
 * not depend on the thread count). Channels go in blocks of about 4 MB (all images): the
 * training forward pass reads a block twice, statistics then normalisation, back to back,
 * so the second read comes from cache (ten channels of ResNet-50's 32x256x56x56, 128 of a
 * 7x7 map). Inside a block the images are the outer loop, so memory is walked in
 * contiguous runs of (block channels x plane), not plane by plane megabytes apart (small
 * planes ran at a third of the bandwidth that way). Sums are accumulated in double.
 * A (n, c) input (spatial 1, after a dense layer) has no planes: it is walked row by row
 * over blocks of columns instead, each thread owning whole blocks.
 *
 * LRN works on (image, block of spatial positions) units: every channel of one block,
 * window sums straight from the input (no running sum, which drifts in fp32), and the
 * backward window of dy*y/scale kept in a ring on the stack. A block is the whole plane
 * up to 4096 positions (AlexNet's 55x55, GoogLeNet's 56x56), so consecutive channels are
 * consecutive memory: with 816-wide blocks the rows were 3 KB runs 12 KB apart and the
 * forward pass stalled on every new row (prefetchers restart per run). pow(scale, -beta) is
 * exp(-beta log scale) with the vectorisable vm_exp / vm_log.
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "ops/kernels.h"
#include "ops/vecmath.h"

/* ---------------------------------------------------------------------------------------
 * Batch normalisation, planes (spatial > 1)
 * ------------------------------------------------------------------------------------- */

/* Lanes of the double accumulators below: 32 independent sums (four 512-bit or eight
 * 256-bit vectors per sum), so the adds are not one dependency chain. A single
 * `omp simd reduction` accumulator made the statistics pass latency-bound at ~6 G
 * values/s per core, below what memory delivers. Planes shorter than 4 * BN_LANES use
 * one chain: setting up and summing 64 lanes would cost more than a 7x7 plane. */
enum { BN_LANES = 32 };

#define BN_INLINE static inline __attribute__((always_inline))

/* sum x and sum x^2 of one plane, in double, added to *s1, *s2 */
BN_INLINE void bn_moments(const float *restrict x, size_t n, double *s1, double *s2)
{
    double ta = 0.0, tb = 0.0;
    if (n >= 4 * BN_LANES) {
        double a[BN_LANES] = {0}, b[BN_LANES] = {0};
        size_t i = 0;
        for (; i + BN_LANES <= n; i += BN_LANES)
            for (size_t j = 0; j < BN_LANES; j++) {
                const double v = x[i + j];
                a[j] += v;
                b[j] += v * v;
            }
        for (size_t j = 0; i + j < n; j++) {
            const double v = x[i + j];
            a[j] += v;
            b[j] += v * v;
        }
        for (size_t j = 0; j < BN_LANES; j++)
            ta += a[j], tb += b[j];
    } else {
#pragma omp simd reduction(+ : ta, tb)
        for (size_t i = 0; i < n; i++) {
            const double v = x[i];
            ta += v;
            tb += v * v;
        }
    }
    *s1 += ta;
    *s2 += tb;
}

/* sum dy and sum dy * (x - mean) of one plane, in double (lanes as above) */
BN_INLINE void bn_grad_sums(const float *restrict dy, const float *restrict x, double mean,
                            size_t n, double *sdy, double *sdyx)
{
    double ta = 0.0, tb = 0.0;
    if (n >= 4 * BN_LANES) {
        double a[BN_LANES] = {0}, b[BN_LANES] = {0};
        size_t i = 0;
        for (; i + BN_LANES <= n; i += BN_LANES)
            for (size_t j = 0; j < BN_LANES; j++) {
                const double g = dy[i + j];
                a[j] += g;
                b[j] += g * ((double)x[i + j] - mean);
            }
        for (size_t j = 0; i + j < n; j++) {
            const double g = dy[i + j];
            a[j] += g;
            b[j] += g * ((double)x[i + j] - mean);
        }
        for (size_t j = 0; j < BN_LANES; j++)
            ta += a[j], tb += b[j];
    } else {
#pragma omp simd reduction(+ : ta, tb)
        for (size_t i = 0; i < n; i++) {
            const double g = dy[i];
            ta += g;
            tb += g * ((double)x[i] - mean);
        }
    }
    *sdy += ta;
    *sdyx += tb;
}

/* The cloned functions below take a run of consecutive planes, so a 7x7 map costs one
 * dispatch per image and block, not one per 49 values. */

/* s1[j], s2[j] += the moments of plane j of w consecutive planes of sp values at x */
OPS_TARGET_CLONES
static void bn_planes_moments(double *restrict s1, double *restrict s2, const float *restrict x,
                              size_t w, size_t sp)
{
    for (size_t j = 0; j < w; j++)
        bn_moments(x + j * sp, sp, &s1[j], &s2[j]);
}

/* plane j of w: y = (x - mean[j]) * scale[j] + shift[j] */
OPS_TARGET_CLONES
static void bn_planes_affine(float *restrict y, const float *restrict x,
                             const float *restrict mean, const float *restrict scale,
                             const float *restrict shift, size_t w, size_t sp)
{
    for (size_t j = 0; j < w; j++) {
        const float mu = mean[j], a = scale[j], b = shift[j];
        float *restrict yp = y + j * sp;
        const float *restrict xp = x + j * sp;
        for (size_t i = 0; i < sp; i++)
            yp[i] = (xp[i] - mu) * a + b;
    }
}

/* sdy[j], sdyx[j] += the gradient sums of plane j of w */
OPS_TARGET_CLONES
static void bn_planes_grad_sums(double *restrict sdy, double *restrict sdyx,
                                const float *restrict dy, const float *restrict x,
                                const float *restrict mean, size_t w, size_t sp)
{
    for (size_t j = 0; j < w; j++)
        bn_grad_sums(dy + j * sp, x + j * sp, mean[j], sp, &sdy[j], &sdyx[j]);
}

/* dx = a dy + b (x - mean) + c with A = gamma invstd:
 *   a = A, b = -A invstd dgamma / m, c = -A dbeta / m
 * (the contract's gamma invstd / m (m dy - dbeta - xhat dgamma) expanded). */
static void bn_channel_dx_coef(float gamma, float invstd, float dgamma, float dbeta, double m,
                               float *a, float *b, float *c)
{
    const double A = (double)gamma * invstd;
    *a = (float)A;
    *b = (float)(-A * invstd * dgamma / m);
    *c = (float)(-A * dbeta / m);
}

/* planes [p0, p1) of the n*c planes: dx (=|+=) a dy + b (x - mean) + c, per channel */
OPS_TARGET_CLONES
static void bn_planes_dx(float *restrict dx, const float *restrict dy, const float *restrict x,
                         size_t p0, size_t p1, size_t C, size_t sp, const float *gamma,
                         const float *mean, const float *invstd, const float *dgamma,
                         const float *dbeta, double m, bool acc)
{
    for (size_t p = p0; p < p1; p++) {
        const size_t ch = p % C, o = p * sp;
        float a, b, c;
        bn_channel_dx_coef(gamma[ch], invstd[ch], dgamma[ch], dbeta[ch], m, &a, &b, &c);
        const float mu = mean[ch];
        if (acc)
            for (size_t i = 0; i < sp; i++)
                dx[o + i] += a * dy[o + i] + b * (x[o + i] - mu) + c;
        else
            for (size_t i = 0; i < sp; i++)
                dx[o + i] = a * dy[o + i] + b * (x[o + i] - mu) + c;
    }
}

/* planes [p0, p1): y = (x - run_mean) * gamma / sqrt(run_var + eps) + beta */
OPS_TARGET_CLONES
static void bn_planes_infer(float *restrict y, const float *restrict x, size_t p0, size_t p1,
                            size_t C, size_t sp, const float *gamma, const float *beta,
                            const float *run_mean, const float *run_var, double eps)
{
    for (size_t p = p0; p < p1; p++) {
        const size_t ch = p % C, o = p * sp;
        const float a = (float)(gamma[ch] / sqrt((double)run_var[ch] + eps));
        const float mu = run_mean[ch], b = beta[ch];
        for (size_t i = 0; i < sp; i++)
            y[o + i] = (x[o + i] - mu) * a + b;
    }
}

/* ---------------------------------------------------------------------------------------
 * Batch normalisation, rows (spatial == 1): blocks of BN_COLS channels, row by row
 * ------------------------------------------------------------------------------------- */

enum { BN_COLS = 128 };

/* Columns per block of the rows path: at most BN_COLS, whole cache lines, and few enough
 * that every thread gets a block (a 64-unit dense layer would otherwise run serially). */
static size_t bn_row_cols(const BnDesc *d)
{
    const size_t t = (size_t)omp_get_max_threads();
    const size_t share = (((size_t)d->c + t - 1) / t + 15) & ~(size_t)15;
    return share < BN_COLS ? share : BN_COLS;
}

/* Bytes of one block of planes (all images) read twice by the training forward pass: the
 * second read comes from L3 (32 MB shared here). Longer contiguous runs beat an L2-sized
 * block: with 512 KB, ResNet-50's 56x56 planes went one channel (12.5 KB runs 3 MB apart)
 * per block and the pass ran 30% slower than with 4 MB (ten channels). */
enum { BN_BLOCK_BYTES = 4 * 1024 * 1024 };

/* Channels per block of the planes path: at least 1, at most BN_COLS (the accumulators
 * live on the stack), and few enough that every thread gets a block. */
static size_t bn_block_channels(const BnDesc *d)
{
    const size_t per = (size_t)d->n * (size_t)d->spatial * sizeof(float);
    const size_t t = (size_t)omp_get_max_threads(), share = ((size_t)d->c + t - 1) / t;
    size_t cb = BN_BLOCK_BYTES / per;
    cb = cb < 1 ? 1 : cb > BN_COLS ? BN_COLS : cb;
    return cb < share ? cb : share;
}

OPS_TARGET_CLONES
static void bn_row_moments(double *restrict s1, double *restrict s2, const float *restrict x,
                           size_t n)
{
    for (size_t j = 0; j < n; j++) {
        const double v = x[j];
        s1[j] += v;
        s2[j] += v * v;
    }
}

OPS_TARGET_CLONES
static void bn_row_affine(float *restrict y, const float *restrict x,
                          const float *restrict mean, const float *restrict scale,
                          const float *restrict shift, size_t n)
{
    for (size_t j = 0; j < n; j++)
        y[j] = (x[j] - mean[j]) * scale[j] + shift[j];
}

OPS_TARGET_CLONES
static void bn_row_grad_sums(double *restrict sdy, double *restrict sdyx,
                             const float *restrict dy, const float *restrict x,
                             const float *restrict mean, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        const double g = dy[j];
        sdy[j] += g;
        sdyx[j] += g * ((double)x[j] - (double)mean[j]);
    }
}

OPS_TARGET_CLONES
static void bn_row_dx(float *restrict dx, const float *restrict dy, const float *restrict x,
                      const float *restrict mean, const float *restrict a,
                      const float *restrict b, const float *restrict c, bool acc, size_t n)
{
    if (acc)
        for (size_t j = 0; j < n; j++)
            dx[j] += a[j] * dy[j] + b[j] * (x[j] - mean[j]) + c[j];
    else
        for (size_t j = 0; j < n; j++)
            dx[j] = a[j] * dy[j] + b[j] * (x[j] - mean[j]) + c[j];
}

/* ---------------------------------------------------------------------------------------
 * Batch normalisation, per-channel arithmetic shared by both layouts
 * ------------------------------------------------------------------------------------- */

/* From the channel's sums over m values: writes mean and invstd, updates the running
 * statistics (Keras: the variance for the moving average is made unbiased with
 * m / (m - (1 + eps))), and returns the affine map y = (x - mean) * scale + shift. */
static void bn_channel_stats(float *mean, float *invstd, float *run_mean, float *run_var,
                             double s1, double s2, double m, float gamma, float beta,
                             const BnDesc *d, float *scale, float *shift)
{
    const double mu = s1 / m;
    double var = s2 / m - mu * mu; /* in double: cancellation costs nothing visible */
    var = var > 0.0 ? var : 0.0;
    const double inv = 1.0 / sqrt(var + (double)d->eps);
    *mean = (float)mu;
    *invstd = (float)inv;
    const double unbias = m > 1.0 + (double)d->eps ? m / (m - (1.0 + (double)d->eps)) : 1.0;
    const double mom = d->momentum;
    *run_mean = (float)(mom * *run_mean + (1.0 - mom) * mu);
    *run_var = (float)(mom * *run_var + (1.0 - mom) * var * unbias);
    *scale = (float)(gamma * inv);
    *shift = beta;
}

/* Contract: see kernels.h. Channels split over threads (planes) or column blocks (rows). */
void batchnorm_forward_train(float *y, float *mean, float *invstd, float *run_mean,
                             float *run_var, const float *x, const float *gamma,
                             const float *beta, const BnDesc *d)
{
    OPS_ASSERT(y && mean && invstd && run_mean && run_var && x && gamma && beta && d);
    const size_t N = (size_t)d->n, C = (size_t)d->c, SP = (size_t)d->spatial;
    const double m = (double)N * (double)SP;
    const bool par = N * C * SP >= ops_par_min;
    if (SP > 1) {
        const size_t cb = bn_block_channels(d), nblk = (C + cb - 1) / cb;
#pragma omp parallel for schedule(static) if (par)
        for (size_t blk = 0; blk < nblk; blk++) {
            const size_t c0 = blk * cb, w = C - c0 < cb ? C - c0 : cb;
            double s1[BN_COLS] = {0}, s2[BN_COLS] = {0};
            float scale[BN_COLS], shift[BN_COLS];
            for (size_t i = 0; i < N; i++)
                bn_planes_moments(s1, s2, x + (i * C + c0) * SP, w, SP);
            for (size_t j = 0; j < w; j++)
                bn_channel_stats(&mean[c0 + j], &invstd[c0 + j], &run_mean[c0 + j],
                                 &run_var[c0 + j], s1[j], s2[j], m, gamma[c0 + j],
                                 beta[c0 + j], d, &scale[j], &shift[j]);
            for (size_t i = 0; i < N; i++) {
                const size_t o = (i * C + c0) * SP;
                bn_planes_affine(y + o, x + o, mean + c0, scale, shift, w, SP);
            }
        }
    } else {
        const size_t cw = bn_row_cols(d), nblk = (C + cw - 1) / cw;
#pragma omp parallel for schedule(static) if (par)
        for (size_t blk = 0; blk < nblk; blk++) {
            const size_t j0 = blk * cw, w = C - j0 < cw ? C - j0 : cw;
            double s1[BN_COLS] = {0}, s2[BN_COLS] = {0};
            float scale[BN_COLS], shift[BN_COLS];
            for (size_t i = 0; i < N; i++)
                bn_row_moments(s1, s2, x + i * C + j0, w);
            for (size_t j = 0; j < w; j++)
                bn_channel_stats(&mean[j0 + j], &invstd[j0 + j], &run_mean[j0 + j],
                                 &run_var[j0 + j], s1[j], s2[j], m, gamma[j0 + j],
                                 beta[j0 + j], d, &scale[j], &shift[j]);
            for (size_t i = 0; i < N; i++)
                bn_row_affine(y + i * C + j0, x + i * C + j0, mean + j0, scale, shift, w);
        }
    }
}

/* Contract: see kernels.h. Parallel over (image, channel) planes, or rows. */
void batchnorm_forward_infer(float *y, const float *x, const float *gamma, const float *beta,
                             const float *run_mean, const float *run_var, const BnDesc *d)
{
    OPS_ASSERT(y && x && gamma && beta && run_mean && run_var && d);
    const size_t N = (size_t)d->n, C = (size_t)d->c, SP = (size_t)d->spatial;
    const bool par = N * C * SP >= ops_par_min;
    if (SP > 1) {
#pragma omp parallel if (par)
        {
            size_t lo, hi;
            ops_span_split(N * C, &lo, &hi);
            bn_planes_infer(y, x, lo, hi, C, SP, gamma, beta, run_mean, run_var, d->eps);
        }
    } else {
        const size_t cw = bn_row_cols(d), nblk = (C + cw - 1) / cw;
#pragma omp parallel for schedule(static) if (par)
        for (size_t blk = 0; blk < nblk; blk++) {
            const size_t j0 = blk * cw, w = C - j0 < cw ? C - j0 : cw;
            float scale[BN_COLS];
            for (size_t j = 0; j < w; j++)
                scale[j] = (float)(gamma[j0 + j] / sqrt((double)run_var[j0 + j] + d->eps));
            for (size_t i = 0; i < N; i++)
                bn_row_affine(y + i * C + j0, x + i * C + j0, run_mean + j0, scale, beta + j0, w);
        }
    }
}

/* Contract: see kernels.h. One owner per channel (or column block). */
void batchnorm_backward_weights(float *dgamma, float *dbeta, const float *dy, const float *x,
                                const float *mean, const float *invstd, const BnDesc *d)
{
    OPS_ASSERT(dgamma && dbeta && dy && x && mean && invstd && d);
    const size_t N = (size_t)d->n, C = (size_t)d->c, SP = (size_t)d->spatial;
    const bool par = N * C * SP >= ops_par_min;
    if (SP > 1) {
        const size_t cb = bn_block_channels(d), nblk = (C + cb - 1) / cb;
#pragma omp parallel for schedule(static) if (par)
        for (size_t blk = 0; blk < nblk; blk++) {
            const size_t c0 = blk * cb, w = C - c0 < cb ? C - c0 : cb;
            double sdy[BN_COLS] = {0}, sdyx[BN_COLS] = {0};
            for (size_t i = 0; i < N; i++) {
                const size_t o = (i * C + c0) * SP;
                bn_planes_grad_sums(sdy, sdyx, dy + o, x + o, mean + c0, w, SP);
            }
            for (size_t j = 0; j < w; j++) {
                const size_t ch = c0 + j;
                const double dg = sdyx[j] * invstd[ch];
                dgamma[ch] = (float)(d->accumulate ? dgamma[ch] + dg : dg);
                dbeta[ch] = (float)(d->accumulate ? dbeta[ch] + sdy[j] : sdy[j]);
            }
        }
    } else {
        const size_t cw = bn_row_cols(d), nblk = (C + cw - 1) / cw;
#pragma omp parallel for schedule(static) if (par)
        for (size_t blk = 0; blk < nblk; blk++) {
            const size_t j0 = blk * cw, w = C - j0 < cw ? C - j0 : cw;
            double sdy[BN_COLS] = {0}, sdyx[BN_COLS] = {0};
            for (size_t i = 0; i < N; i++)
                bn_row_grad_sums(sdy, sdyx, dy + i * C + j0, x + i * C + j0, mean + j0, w);
            for (size_t j = 0; j < w; j++) {
                const double dg = sdyx[j] * invstd[j0 + j];
                dgamma[j0 + j] = (float)(d->accumulate ? dgamma[j0 + j] + dg : dg);
                dbeta[j0 + j] = (float)(d->accumulate ? dbeta[j0 + j] + sdy[j] : sdy[j]);
            }
        }
    }
}

/* Contract: see kernels.h. Parallel over planes, or rows. */
void batchnorm_backward_data(float *dx, const float *dy, const float *x, const float *gamma,
                             const float *mean, const float *invstd, const float *dgamma,
                             const float *dbeta, const BnDesc *d)
{
    OPS_ASSERT(dx && dy && x && gamma && mean && invstd && dgamma && dbeta && d);
    const size_t N = (size_t)d->n, C = (size_t)d->c, SP = (size_t)d->spatial;
    const double m = (double)N * (double)SP;
    const bool par = N * C * SP >= ops_par_min;
    if (SP > 1) {
#pragma omp parallel if (par)
        {
            size_t lo, hi;
            ops_span_split(N * C, &lo, &hi);
            bn_planes_dx(dx, dy, x, lo, hi, C, SP, gamma, mean, invstd, dgamma, dbeta, m,
                         d->accumulate);
        }
    } else {
        const size_t cw = bn_row_cols(d), nblk = (C + cw - 1) / cw;
#pragma omp parallel for schedule(static) if (par)
        for (size_t blk = 0; blk < nblk; blk++) {
            const size_t j0 = blk * cw, w = C - j0 < cw ? C - j0 : cw;
            float a[BN_COLS], b[BN_COLS], c[BN_COLS];
            for (size_t j = 0; j < w; j++)
                bn_channel_dx_coef(gamma[j0 + j], invstd[j0 + j], dgamma[j0 + j], dbeta[j0 + j],
                                   m, &a[j], &b[j], &c[j]);
            for (size_t i = 0; i < N; i++)
                bn_row_dx(dx + i * C + j0, dy + i * C + j0, x + i * C + j0, mean + j0, a, b, c,
                          d->accumulate, w);
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * Local response normalisation
 * ------------------------------------------------------------------------------------- */

/* Stack use per thread: the backward ring (size rows of the block width, 64 KB) and the
 * window accumulator (one row, 16 KB); thread stacks are megabytes. */
enum { LRN_RING_FLOATS = 16384, LRN_ROW_FLOATS = 4096 };

/* Spatial positions per unit: the whole plane when the ring can hold `size` rows of it. */
static size_t lrn_block_width(const LrnDesc *d)
{
    size_t b = (size_t)(LRN_RING_FLOATS / d->size) & ~(size_t)15;
    b = b > LRN_ROW_FLOATS ? LRN_ROW_FLOATS : b; /* size <= 255 keeps b >= 64 */
    return b < (size_t)d->spatial ? b : (size_t)d->spatial;
}

/* Window rows are added by separate (cloned, never inlined) functions: open-coded in the
 * channel loop, GCC's unroll-and-jam (-O3) fused two rows of the window and then left the
 * backward window sum scalar, a third of that kernel's time. A call per row of ~3000
 * values costs nothing. */
OPS_TARGET_CLONES
static void lrn_row_add_sq(float *restrict acc, const float *restrict x, size_t n)
{
    for (size_t j = 0; j < n; j++)
        acc[j] += x[j] * x[j];
}

OPS_TARGET_CLONES
static void lrn_row_add(float *restrict acc, const float *restrict r, size_t n)
{
    for (size_t j = 0; j < n; j++)
        acc[j] += r[j];
}

/* One image's block [s0, s0 + bw) of every channel; pointers at the image's start. */
OPS_TARGET_CLONES
static void lrn_forward_unit(float *restrict y, float *restrict scale, const float *restrict x,
                             const LrnDesc *d, size_t s0, size_t bw)
{
    const int C = d->c, r = d->size / 2;
    const size_t SP = (size_t)d->spatial;
    const float coef = d->alpha / (float)d->size, k = d->k, nbeta = -d->beta;
    float acc[LRN_ROW_FLOATS];
    for (int c = 0; c < C; c++) {
        const int lo = c - r < 0 ? 0 : c - r, hi = c + r >= C ? C - 1 : c + r;
        memset(acc, 0, bw * sizeof(float));
        for (int q = lo; q <= hi; q++)
            lrn_row_add_sq(acc, x + (size_t)q * SP + s0, bw);
        const float *xc = x + (size_t)c * SP + s0;
        float *yc = y + (size_t)c * SP + s0, *sc = scale + (size_t)c * SP + s0;
        for (size_t j = 0; j < bw; j++) {
            const float s = k + coef * acc[j];
            sc[j] = s;
            yc[j] = xc[j] * vm_exp(nbeta * vm_log(s));
        }
    }
}

/* ring row of channel q: dy y / scale */
static inline void lrn_ratio_row(float *restrict row, const float *restrict dy,
                                 const float *restrict y, const float *restrict scale,
                                 size_t bw)
{
    for (size_t j = 0; j < bw; j++)
        row[j] = dy[j] * y[j] / scale[j];
}

OPS_TARGET_CLONES
static void lrn_backward_unit(float *restrict dx, const float *restrict dy,
                              const float *restrict x, const float *restrict y,
                              const float *restrict scale, const LrnDesc *d, size_t s0,
                              size_t bw)
{
    const int C = d->c, r = d->size / 2, size = d->size;
    const size_t SP = (size_t)d->spatial;
    const float nbeta = -d->beta, k2 = 2.0f * d->alpha * d->beta / (float)d->size;
    float ring[LRN_RING_FLOATS]; /* rows c' in [c - r, c + r] at (c' mod size) * bw */
    float acc[LRN_ROW_FLOATS];
    for (int q = 0; q <= r && q < C; q++) {
        const size_t o = (size_t)q * SP + s0;
        lrn_ratio_row(ring + (size_t)(q % size) * bw, dy + o, y + o, scale + o, bw);
    }
    for (int c = 0; c < C; c++) {
        if (c > 0 && c + r < C) {
            const size_t o = (size_t)(c + r) * SP + s0;
            lrn_ratio_row(ring + (size_t)((c + r) % size) * bw, dy + o, y + o, scale + o, bw);
        }
        const int lo = c - r < 0 ? 0 : c - r, hi = c + r >= C ? C - 1 : c + r;
        memset(acc, 0, bw * sizeof(float));
        for (int q = lo; q <= hi; q++)
            lrn_row_add(acc, ring + (size_t)(q % size) * bw, bw);
        const size_t o = (size_t)c * SP + s0;
        const float *dyc = dy + o, *xc = x + o, *sc = scale + o;
        float *dxc = dx + o;
        if (d->accumulate)
            for (size_t j = 0; j < bw; j++)
                dxc[j] += dyc[j] * vm_exp(nbeta * vm_log(sc[j])) - k2 * xc[j] * acc[j];
        else
            for (size_t j = 0; j < bw; j++)
                dxc[j] = dyc[j] * vm_exp(nbeta * vm_log(sc[j])) - k2 * xc[j] * acc[j];
    }
}

/* Contract: see kernels.h. Units (image, spatial block) split over threads. */
void lrn_forward(float *y, float *scale, const float *x, const LrnDesc *d)
{
    OPS_ASSERT(y && scale && x && d && d->size >= 1 && d->size % 2 == 1);
    const size_t C = (size_t)d->c, SP = (size_t)d->spatial, bw = lrn_block_width(d);
    const size_t nb = (SP + bw - 1) / bw, units = (size_t)d->n * nb;
#pragma omp parallel for schedule(static) if ((size_t)d->n * C * SP >= ops_par_min)
    for (size_t u = 0; u < units; u++) {
        const size_t img = u / nb, s0 = u % nb * bw, w = SP - s0 < bw ? SP - s0 : bw;
        const size_t o = img * C * SP;
        lrn_forward_unit(y + o, scale + o, x + o, d, s0, w);
    }
}

/* Contract: see kernels.h. */
void lrn_backward_data(float *dx, const float *dy, const float *x, const float *y,
                       const float *scale, const LrnDesc *d)
{
    OPS_ASSERT(dx && dy && x && y && scale && d && d->size >= 1 && d->size % 2 == 1);
    const size_t C = (size_t)d->c, SP = (size_t)d->spatial, bw = lrn_block_width(d);
    const size_t nb = (SP + bw - 1) / bw, units = (size_t)d->n * nb;
#pragma omp parallel for schedule(static) if ((size_t)d->n * C * SP >= ops_par_min)
    for (size_t u = 0; u < units; u++) {
        const size_t img = u / nb, s0 = u % nb * bw, w = SP - s0 < bw ? SP - s0 : bw;
        const size_t o = img * C * SP;
        lrn_backward_unit(dx + o, dy + o, x + o, y + o, scale + o, d, s0, w);
    }
}
