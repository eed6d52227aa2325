/* ops/optim.c — optimizer updates over one flat parameter buffer (STYLE habit 3: params,
 * grads and optimizer state share offsets, so an update is one loop). SGD without
 * momentum and RMSprop exactly as Keras 2 computes it.
 */
#include "ops/kernels.h"
#include "ops/vecmath.h"

OPS_TARGET_CLONES
static void sgd_span(float *restrict w, const float *restrict g, float lr, size_t n)
{
    for (size_t i = 0; i < n; i++)
        w[i] -= lr * g[i];
}

/* Keras 2 (keras/optimizers.py, RMSprop.get_updates):
 *   new_a = rho * a + (1 - rho) * square(g);  p - lr * g / (sqrt(new_a) + epsilon)
 * vm_sqrt, not sqrtf: under -fmath-errno GCC will not vectorise sqrtf, and the scalar
 * loop ran at a tenth of SGD's speed (compute-bound), see vecmath.h. */
OPS_TARGET_CLONES
static void rmsprop_span(float *restrict w, float *restrict acc, const float *restrict g,
                         float lr, float rho, float eps, size_t n)
{
    const float one_m_rho = 1.0f - rho;
    for (size_t i = 0; i < n; i++) {
        const float a = rho * acc[i] + one_m_rho * (g[i] * g[i]);
        acc[i] = a;
        w[i] -= lr * g[i] / (vm_sqrt(a) + eps);
    }
}

/* Contract: w (count) -= lr * g (count). */
void sgd_update(float *w, const float *g, const UpdateDesc *d)
{
    OPS_ASSERT(w && g && d);
    const size_t n = d->count;
#pragma omp parallel if (n >= OPS_PAR_MIN)
    {
        size_t lo, hi;
        ops_span_split(n, &lo, &hi);
        if (hi > lo)
            sgd_span(w + lo, g + lo, d->lr, hi - lo);
    }
}

/* Contract: acc = rho*acc + (1-rho)*g^2; w -= lr * g / (sqrt(acc) + eps), all (count). */
void rmsprop_update(float *w, float *acc, const float *g, const UpdateDesc *d)
{
    OPS_ASSERT(w && acc && g && d);
    const size_t n = d->count;
#pragma omp parallel if (n >= OPS_PAR_MIN)
    {
        size_t lo, hi;
        ops_span_split(n, &lo, &hi);
        if (hi > lo)
            rmsprop_span(w + lo, acc + lo, g + lo, d->lr, d->rho, d->eps, hi - lo);
    }
}
