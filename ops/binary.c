/* ops/binary.c — element-wise arithmetic: OP_BINARY (y = a op b) and OP_SCALAR (y = a op s),
 * forward and their gradients. Memory-bound like the activations: serial below ops_par_min
 * elements, else each OpenMP thread runs a vectorised span over its contiguous block.
 * pow is exp(b ln a) (vecmath.h), for a > 0. A gradient that is written, not accumulated,
 * is never read (it may hold garbage); the accumulate test is loop-invariant, so the
 * compiler keeps two loops rather than a select per element.
 */
#include <stdbool.h>

#include "ops/kernels.h"
#include "ops/vecmath.h"

OPS_TARGET_CLONES
static void binary_span(float *restrict y, const float *restrict a, const float *restrict b, size_t n,
                        BinaryKind op)
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
    case BIN_POW:
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            y[i] = vm_exp(b[i] * vm_log(a[i]));
        break;
    default: break;
    }
}

/* da, db (=|+=) the two partial derivatives times dy */
OPS_TARGET_CLONES
static void binary_grad_span(float *restrict da, float *restrict db, const float *restrict dy,
                             const float *restrict a, const float *restrict b, size_t n, BinaryKind op, bool acc)
{
    switch (op) {
    case BIN_ADD:
#pragma omp simd
        for (size_t i = 0; i < n; i++) {
            da[i] = acc ? da[i] + (dy[i]) : (dy[i]);
            db[i] = acc ? db[i] + (dy[i]) : (dy[i]);
        }
        break;
    case BIN_MUL:
#pragma omp simd
        for (size_t i = 0; i < n; i++) {
            da[i] = acc ? da[i] + (dy[i] * b[i]) : (dy[i] * b[i]);
            db[i] = acc ? db[i] + (dy[i] * a[i]) : (dy[i] * a[i]);
        }
        break;
    case BIN_DIV:
#pragma omp simd
        for (size_t i = 0; i < n; i++) {
            const float q = dy[i] / b[i];
            da[i] = acc ? da[i] + (q) : (q);
            db[i] = acc ? db[i] - (q * a[i] / b[i]) : -(q * a[i] / b[i]);
        }
        break;
    case BIN_POW:
#pragma omp simd
        for (size_t i = 0; i < n; i++) {
            const float la = vm_log(a[i]), p = vm_exp(b[i] * la);
            da[i] = acc ? da[i] + (dy[i] * b[i] * p / a[i]) : (dy[i] * b[i] * p / a[i]);
            db[i] = acc ? db[i] + (dy[i] * p * la) : (dy[i] * p * la);
        }
        break;
    default: break;
    }
}

OPS_TARGET_CLONES
static void scalar_span(float *restrict y, const float *restrict a, float s, size_t n, BinaryKind op)
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
    case BIN_DIV:
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            y[i] = a[i] / s;
        break;
    case BIN_POW:
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            y[i] = vm_exp(s * vm_log(a[i]));
        break;
    default: break;
    }
}

OPS_TARGET_CLONES
static void scalar_grad_span(float *restrict da, const float *restrict dy, const float *restrict a, float s,
                             size_t n, BinaryKind op, bool acc)
{
    switch (op) {
    case BIN_ADD:
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            da[i] = acc ? da[i] + (dy[i]) : (dy[i]);
        break;
    case BIN_MUL:
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            da[i] = acc ? da[i] + (dy[i] * s) : (dy[i] * s);
        break;
    case BIN_DIV:
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            da[i] = acc ? da[i] + (dy[i] / s) : (dy[i] / s);
        break;
    case BIN_POW:
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            da[i] = acc ? da[i] + (dy[i] * s * vm_exp((s - 1.0f) * vm_log(a[i]))) : (dy[i] * s * vm_exp((s - 1.0f) * vm_log(a[i])));
        break;
    default: break;
    }
}

/* Contract: y (count) = a op b. */
void binary_forward(float *y, const float *a, const float *b, const BinaryDesc *d)
{
    OPS_ASSERT(y && a && b && d);
#pragma omp parallel if (d->count >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(d->count, &lo, &hi);
        if (hi > lo)
            binary_span(y + lo, a + lo, b + lo, hi - lo, d->op);
    }
}

/* Contract: da, db (count) (=|+=) dy times d(a op b)/da, d(a op b)/db. */
void binary_backward_data(float *da, float *db, const float *dy, const float *a, const float *b,
                          const BinaryDesc *d)
{
    OPS_ASSERT(da && db && dy && a && b && d);
#pragma omp parallel if (d->count >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(d->count, &lo, &hi);
        if (hi > lo)
            binary_grad_span(da + lo, db + lo, dy + lo, a + lo, b + lo, hi - lo, d->op, d->accumulate);
    }
}

/* Contract: y (count) = a op scalar. */
void scalar_forward(float *y, const float *a, const BinaryDesc *d)
{
    OPS_ASSERT(y && a && d);
#pragma omp parallel if (d->count >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(d->count, &lo, &hi);
        if (hi > lo)
            scalar_span(y + lo, a + lo, d->scalar, hi - lo, d->op);
    }
}

/* Contract: da (count) (=|+=) dy times d(a op scalar)/da. */
void scalar_backward_data(float *da, const float *dy, const float *a, const BinaryDesc *d)
{
    OPS_ASSERT(da && dy && a && d);
#pragma omp parallel if (d->count >= ops_par_min)
    {
        size_t lo, hi;
        ops_span_split(d->count, &lo, &hi);
        if (hi > lo)
            scalar_grad_span(da + lo, dy + lo, a + lo, d->scalar, hi - lo, d->op, d->accumulate);
    }
}
