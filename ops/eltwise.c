/* ops/eltwise.c — element-wise kernels: OP_BIAS, OP_ACT, OP_ZERO, OP_COPY, the STREAM
 * bandwidth kernels, OP_BINARY and OP_SCALAR. All are memory-bound on large tensors; they
 * run serially below ops_par_min elements and otherwise split the range over OpenMP
 * threads, each thread calling a vectorised (target-cloned) span function on its
 * contiguous part.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ops/kernels.h"
#include "ops/vecmath.h"

/* Contract: inside a parallel region, [*lo, *hi) is this thread's share of [0, n): equal
 * contiguous blocks (the static schedule), block starts rounded to 16 floats (a 64-byte
 * line) so two threads never write the same cache line. Outside a region: [0, n). */
void ops_span_split(size_t n, size_t *lo, size_t *hi)
{
    const size_t t = (size_t)omp_get_num_threads(), i = (size_t)omp_get_thread_num();
    size_t chunk = (n + t - 1) / t;
    chunk = (chunk + 15) & ~(size_t)15;
    size_t a = i * chunk, b = a + chunk;
    *lo = a < n ? a : n;
    *hi = b < n ? b : n;
}

/* ---- bias ---- */

OPS_TARGET_CLONES
static void bias_row_add(float *restrict y, const float *restrict b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] += b[i];
}

OPS_TARGET_CLONES
static void bias_plane_add(float *restrict y, float b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] += b;
}

/* Contract: y (n, c, spatial) += b (c) broadcast over n and spatial. */
void bias_forward(float *y, const float *b, const BiasDesc *d)
{
    OPS_ASSERT(y && b && d);
    const size_t n = (size_t)d->n, c = (size_t)d->c, sp = (size_t)d->spatial;
    const bool par = n * c * sp >= ops_par_min;
    if (sp == 1) {
        /* a dense layer's (n, c): one vector add per row */
#pragma omp parallel for schedule(static) if (par)
        for (size_t i = 0; i < n; i++)
            bias_row_add(y + i * c, b, c);
    } else {
#pragma omp parallel for schedule(static) if (par)
        for (size_t p = 0; p < n * c; p++)
            bias_plane_add(y + p * sp, b[p % c], sp);
    }
}

/* Sum of one plane in double: planes can be long (112*112) and the total runs over the
 * batch as well, so fp32 accumulation would lose digits the gradient check can see. */
OPS_TARGET_CLONES
static double bias_plane_sum(const float *restrict x, size_t n)
{
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return s;
}

/* Contract: db (c) = (accumulate ? db : 0) + sum over n and spatial of dy (n, c, spatial).
 * Threads split the channels, so each db element has one writer. */
void bias_backward_weights(float *db, const float *dy, const BiasDesc *d)
{
    OPS_ASSERT(db && dy && d);
    const size_t n = (size_t)d->n, c = (size_t)d->c, sp = (size_t)d->spatial;
    const bool par = n * c * sp >= ops_par_min;
    if (sp == 1) {
        /* (n, c) rows: walk rows in memory order, each thread owning a block of columns */
#pragma omp parallel if (par)
        {
            size_t lo, hi;
            ops_span_split(c, &lo, &hi);
            if (hi > lo) {
                if (!d->accumulate)
                    memset(db + lo, 0, sizeof(float) * (hi - lo));
                for (size_t i = 0; i < n; i++)
                    bias_row_add(db + lo, dy + i * c + lo, hi - lo);
            }
        }
    } else {
#pragma omp parallel for schedule(static) if (par)
        for (size_t ch = 0; ch < c; ch++) {
            double s = d->accumulate ? (double)db[ch] : 0.0;
            for (size_t i = 0; i < n; i++)
                s += bias_plane_sum(dy + (i * c + ch) * sp, sp);
            db[ch] = (float)s;
        }
    }
}

/* ---- activations (y may alias x, dx may alias dy: no restrict, same-index only) ---- */

OPS_TARGET_CLONES
static void act_relu_span(float *y, const float *x, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

/* vm_sigmoid / vm_tanh rather than libm: they vectorise (see vecmath.h) */
OPS_TARGET_CLONES
static void act_sigmoid_span(float *y, const float *x, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        y[i] = vm_sigmoid(x[i]);
}

OPS_TARGET_CLONES
static void act_tanh_span(float *y, const float *x, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        y[i] = vm_tanh(x[i]);
}

/* GELU, x Phi(x) (vecmath.h's normal CDF: no libm erf, which does not vectorise) */
OPS_TARGET_CLONES
static void act_gelu_span(float *y, const float *x, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] * vm_normal_cdf(x[i]);
}

OPS_TARGET_CLONES
static void act_relu_grad_span(float *dx, const float *dy, const float *y, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

OPS_TARGET_CLONES
static void act_sigmoid_grad_span(float *dx, const float *dy, const float *y, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        dx[i] = dy[i] * (y[i] * (1.0f - y[i]));
}

OPS_TARGET_CLONES
static void act_tanh_grad_span(float *dx, const float *dy, const float *y, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        dx[i] = dy[i] * (1.0f - y[i] * y[i]);
}

/* d/dx x Phi(x) = Phi(x) + x phi(x), from the forward input x */
OPS_TARGET_CLONES
static void act_gelu_grad_span(float *dx, const float *dy, const float *x, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++) {
        const float v = x[i];
        dx[i] = dy[i] * (vm_normal_cdf(v) + v * vm_normal_pdf(v));
    }
}

/* Contract: y (count) = f(x); y may alias x. */
void act_forward(float *y, const float *x, const ActDesc *d)
{
    OPS_ASSERT(y && x && d && d->act >= 0 && d->act < ACT_COUNT);
    const size_t n = d->count;
#pragma omp parallel if (n >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(n, &lo, &hi);
        if (hi > lo) {
            switch (d->act) {
            case ACT_RELU: act_relu_span(y + lo, x + lo, hi - lo); break;
            case ACT_SIGMOID: act_sigmoid_span(y + lo, x + lo, hi - lo); break;
            case ACT_TANH: act_tanh_span(y + lo, x + lo, hi - lo); break;
            case ACT_GELU: act_gelu_span(y + lo, x + lo, hi - lo); break;
            default: break;
            }
        }
    }
}

/* Contract: dx (count) = dy * f'(.) from y, the forward output (relu: y > 0, sigmoid:
 * y(1-y), tanh: 1-y^2), or for GELU the forward input x (Phi(x) + x phi(x)), passed as y;
 * written, not accumulated; dx may alias dy. */
void act_backward_data(float *dx, const float *dy, const float *y, const ActDesc *d)
{
    OPS_ASSERT(dx && dy && y && d && d->act >= 0 && d->act < ACT_COUNT);
    const size_t n = d->count;
#pragma omp parallel if (n >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(n, &lo, &hi);
        if (hi > lo) {
            switch (d->act) {
            case ACT_RELU: act_relu_grad_span(dx + lo, dy + lo, y + lo, hi - lo); break;
            case ACT_SIGMOID: act_sigmoid_grad_span(dx + lo, dy + lo, y + lo, hi - lo); break;
            case ACT_TANH: act_tanh_grad_span(dx + lo, dy + lo, y + lo, hi - lo); break;
            case ACT_GELU: act_gelu_grad_span(dx + lo, dy + lo, y + lo, hi - lo); break;
            default: break;
            }
        }
    }
}

/* ---- memory ops ---- */

/* Contract: x (count) = 0. */
void mem_zero(float *x, size_t count)
{
    OPS_ASSERT(x || count == 0);
#pragma omp parallel if (count >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(count, &lo, &hi);
        if (hi > lo)
            memset(x + lo, 0, sizeof(float) * (hi - lo));
    }
}

/* Contract: dst (count) = src (count); the two must not overlap. */
void mem_copy(float *dst, const float *src, size_t count)
{
    OPS_ASSERT((dst && src) || count == 0);
#pragma omp parallel if (count >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(count, &lo, &hi);
        if (hi > lo)
            memcpy(dst + lo, src + lo, sizeof(float) * (hi - lo));
    }
}

/* ---- STREAM (McCalpin): the loops as in stream.c, so the rates are comparable ---- */

OPS_TARGET_CLONES
static void stream_copy_span(float *restrict c, const float *restrict a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        c[i] = a[i];
}

OPS_TARGET_CLONES
static void stream_scale_span(float *restrict b, const float *restrict c, float q, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = q * c[i];
}

OPS_TARGET_CLONES
static void stream_add_span(float *restrict c, const float *restrict a,
                            const float *restrict b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        c[i] = a[i] + b[i];
}

OPS_TARGET_CLONES
static void stream_triad_span(float *restrict a, const float *restrict b,
                              const float *restrict c, float q, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + q * c[i];
}

/* Contract: one STREAM kernel over (count) floats: copy c = a; scale b = q*c;
 * add c = a + b; triad a = b + q*c (q = d->scalar). The arrays must not overlap. */
void stream_run(float *a, float *b, float *c, const MemDesc *d)
{
    OPS_ASSERT(a && b && c && d && d->kind >= 0 && d->kind < STREAM_COUNT);
    const size_t n = d->count;
    const float q = d->scalar;
#pragma omp parallel if (n >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(n, &lo, &hi);
        if (hi > lo) {
            switch (d->kind) {
            case STREAM_COPY: stream_copy_span(c + lo, a + lo, hi - lo); break;
            case STREAM_SCALE: stream_scale_span(b + lo, c + lo, q, hi - lo); break;
            case STREAM_ADD: stream_add_span(c + lo, a + lo, b + lo, hi - lo); break;
            case STREAM_TRIAD: stream_triad_span(a + lo, b + lo, c + lo, q, hi - lo); break;
            default: break;
            }
        }
    }
}

/* ---- binary and tensor-scalar operators (y may alias a or b: same-index only) ----
 * pow is exp(b ln a) with vecmath's exp and log (a > 0): libm's powf does not vectorise. */

OPS_TARGET_CLONES
static void binary_span(float *y, const float *a, const float *b, size_t n, BinaryKind op)
{
    switch (op) {
    case BIN_ADD:
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            y[i] = a[i] + b[i];
        break;
    case BIN_MUL:
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            y[i] = a[i] * b[i];
        break;
    case BIN_DIV:
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            y[i] = a[i] / b[i];
        break;
    default:
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            y[i] = vm_exp(b[i] * vm_log(a[i]));
        break;
    }
}

/* Contract: y (count) = a op b element-wise. */
void binary_forward(float *y, const float *a, const float *b, const BinaryDesc *d)
{
    OPS_ASSERT(y && a && b && d && d->op >= 0 && d->op < BIN_COUNT);
    const size_t n = d->count;
#pragma omp parallel if (n >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(n, &lo, &hi);
        if (hi > lo)
            binary_span(y + lo, a + lo, b + lo, hi - lo, d->op);
    }
}

/* Both gradients of one operator, written (acc false) or added: two loops each, so the
 * written one never reads da and db (a read the op's compulsory bytes do not count). */
OPS_TARGET_CLONES
static void binary_grad_span(float *restrict da, float *restrict db, const float *restrict dy,
                             const float *restrict a, const float *restrict b, size_t n,
                             BinaryKind op, bool acc)
{
    switch (op) {
    case BIN_ADD:
        if (acc) {
#pragma omp simd
            for (size_t i = 0; i < n; i++) {
                da[i] += dy[i];
                db[i] += dy[i];
            }
        } else {
            memcpy(da, dy, n * sizeof(float));
            memcpy(db, dy, n * sizeof(float));
        }
        break;
    case BIN_MUL:
        if (acc) {
#pragma omp simd
            for (size_t i = 0; i < n; i++) {
                da[i] += dy[i] * b[i];
                db[i] += dy[i] * a[i];
            }
        } else {
#pragma omp simd
            for (size_t i = 0; i < n; i++) {
                da[i] = dy[i] * b[i];
                db[i] = dy[i] * a[i];
            }
        }
        break;
    case BIN_DIV: /* da = dy / b, db = -(dy / b) (a / b) */
        if (acc) {
#pragma omp simd
            for (size_t i = 0; i < n; i++) {
                const float q = dy[i] / b[i];
                da[i] += q;
                db[i] -= q * (a[i] / b[i]);
            }
        } else {
#pragma omp simd
            for (size_t i = 0; i < n; i++) {
                const float q = dy[i] / b[i];
                da[i] = q;
                db[i] = -q * (a[i] / b[i]);
            }
        }
        break;
    default: /* pow: y = a^b; da = dy b y / a, db = dy y ln a */
        if (acc) {
#pragma omp simd
            for (size_t i = 0; i < n; i++) {
                const float l = vm_log(a[i]), y = vm_exp(b[i] * l), g = dy[i] * y;
                da[i] += g * b[i] / a[i];
                db[i] += g * l;
            }
        } else {
#pragma omp simd
            for (size_t i = 0; i < n; i++) {
                const float l = vm_log(a[i]), y = vm_exp(b[i] * l), g = dy[i] * y;
                da[i] = g * b[i] / a[i];
                db[i] = g * l;
            }
        }
        break;
    }
}

/* Contract: da, db (count) (=|+=) the gradients of y = a op b given dy (ops.h, BinaryDesc);
 * da and db must not overlap each other or the inputs. */
void binary_backward_data(float *da, float *db, const float *dy, const float *a, const float *b,
                          const BinaryDesc *d)
{
    OPS_ASSERT(da && db && dy && a && b && d && d->op >= 0 && d->op < BIN_COUNT);
    const size_t n = d->count;
#pragma omp parallel if (n >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(n, &lo, &hi);
        if (hi > lo)
            binary_grad_span(da + lo, db + lo, dy + lo, a + lo, b + lo, hi - lo, d->op, d->accumulate);
    }
}

OPS_TARGET_CLONES
static void scalar_span(float *y, const float *a, float s, size_t n, BinaryKind op)
{
    switch (op) {
    case BIN_ADD:
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            y[i] = a[i] + s;
        break;
    case BIN_MUL:
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            y[i] = a[i] * s;
        break;
    case BIN_DIV: /* a true division, as PyTorch's a / s (not a * (1/s): other rounding) */
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            y[i] = a[i] / s;
        break;
    default:
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            y[i] = vm_exp(s * vm_log(a[i]));
        break;
    }
}

/* Contract: y (count) = a op s element-wise. */
void scalar_forward(float *y, const float *a, const ScalarDesc *d)
{
    OPS_ASSERT(y && a && d && d->op >= 0 && d->op < BIN_COUNT);
    const size_t n = d->count;
#pragma omp parallel if (n >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(n, &lo, &hi);
        if (hi > lo)
            scalar_span(y + lo, a + lo, d->scalar, hi - lo, d->op);
    }
}

OPS_TARGET_CLONES
static void scalar_grad_span(float *restrict da, const float *restrict dy, const float *restrict a,
                             float s, size_t n, BinaryKind op, bool acc)
{
    switch (op) {
    case BIN_ADD:
        if (acc) {
#pragma omp simd
            for (size_t i = 0; i < n; i++)
                da[i] += dy[i];
        } else {
            memcpy(da, dy, n * sizeof(float));
        }
        break;
    case BIN_MUL:
        if (acc) {
#pragma omp simd
            for (size_t i = 0; i < n; i++)
                da[i] += dy[i] * s;
        } else {
#pragma omp simd
            for (size_t i = 0; i < n; i++)
                da[i] = dy[i] * s;
        }
        break;
    case BIN_DIV:
        if (acc) {
#pragma omp simd
            for (size_t i = 0; i < n; i++)
                da[i] += dy[i] / s;
        } else {
#pragma omp simd
            for (size_t i = 0; i < n; i++)
                da[i] = dy[i] / s;
        }
        break;
    default: { /* pow: da = dy s a^(s-1) */
        const float s1 = s - 1.0f;
        if (acc) {
#pragma omp simd
            for (size_t i = 0; i < n; i++)
                da[i] += dy[i] * s * vm_exp(s1 * vm_log(a[i]));
        } else {
#pragma omp simd
            for (size_t i = 0; i < n; i++)
                da[i] = dy[i] * s * vm_exp(s1 * vm_log(a[i]));
        }
        break;
    }
    }
}

/* Contract: da (count) (=|+=) dy * d(a op s)/da (ops.h, ScalarDesc); da must not overlap
 * the inputs. */
void scalar_backward_data(float *da, const float *dy, const float *a, const ScalarDesc *d)
{
    OPS_ASSERT(da && dy && a && d && d->op >= 0 && d->op < BIN_COUNT);
    const size_t n = d->count;
#pragma omp parallel if (n >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(n, &lo, &hi);
        if (hi > lo)
            scalar_grad_span(da + lo, dy + lo, a + lo, d->scalar, hi - lo, d->op, d->accumulate);
    }
}
