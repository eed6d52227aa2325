/* ops/optim.c — optimizer updates over one flat parameter buffer (STYLE habit 3: params,
 * grads and optimizer state share offsets, so an update is one loop). SGD, RMSprop, SGD
 * with (Nesterov) momentum and Adam exactly as Keras 2 computes them, with L2 weight decay
 * on a prefix of the buffer (layouts put the decayed kernels first), and PyTorch's AdamW
 * with its decoupled decay on that prefix; any of them with global-norm clipping.
 *
 * Each update has one element-wise body, written once as an always-inline function with a
 * compile-time `decay` flag and instantiated twice in target-cloned span functions: the
 * decayed prefix runs g + l2*w, the rest runs exactly the undecayed loop. Threads split
 * [0, count) with ops_span_split and cut their share at decay_count. A data-parallel
 * trainer's summed gradients are averaged inside the update (grad_ranks), not by a pass of
 * their own: that pass read and wrote P1B1's 977 MB of gradients once more every step.
 */
#include <math.h>

#include "ops/kernels.h"
#include "ops/vecmath.h"

#define OPT_INLINE static inline __attribute__((always_inline))

/* The gradient the update uses: L2 decay adds l2 * w (Keras' l2(wd) regularizer, l2 = 2 wd). */
OPT_INLINE float opt_grad(float g, float w, float l2, bool decay)
{
    return decay ? g + l2 * w : g;
}

/* ---- the element-wise bodies ---- */

OPT_INLINE void sgd_body(float *restrict w, const float *restrict g, float gs, float lr, float l2,
                         bool decay, size_t n)
{
    for (size_t i = 0; i < n; i++)
        w[i] -= lr * opt_grad(gs * g[i], w[i], l2, decay);
}

/* Keras 2 (keras/optimizers.py, RMSprop.get_updates):
 *   new_a = rho * a + (1 - rho) * square(g);  p - lr * g / (sqrt(new_a) + epsilon)
 * vm_sqrt, not sqrtf: under -fmath-errno GCC will not vectorise sqrtf, and the scalar
 * loop ran at a tenth of SGD's speed (compute-bound), see vecmath.h. */
OPT_INLINE void rmsprop_body(float *restrict w, float *restrict acc, const float *restrict g,
                             float gs, float lr, float rho, float eps, float l2, bool decay, size_t n)
{
    const float one_m_rho = 1.0f - rho;
    for (size_t i = 0; i < n; i++) {
        const float gi = opt_grad(gs * g[i], w[i], l2, decay);
        const float a = rho * acc[i] + one_m_rho * (gi * gi);
        acc[i] = a;
        w[i] -= lr * gi / (vm_sqrt(a) + eps);
    }
}

/* Keras 2 (SGD.get_updates with momentum):
 *   v = momentum * m - lr * g;  new_p = p + momentum * v - lr * g if nesterov else p + v */
OPT_INLINE void momentum_body(float *restrict w, float *restrict v, const float *restrict g,
                              float gs, float lr, float mom, bool nesterov, float l2, bool decay,
                              size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const float step = lr * opt_grad(gs * g[i], w[i], l2, decay);
        const float vi = mom * v[i] - step;
        v[i] = vi;
        w[i] += nesterov ? mom * vi - step : vi;
    }
}

/* Keras 2 (Adam.get_updates), lr_t computed once by the caller:
 *   m_t = beta_1 m + (1 - beta_1) g;  v_t = beta_2 v + (1 - beta_2) g^2;
 *   p_t = p - lr_t m_t / (sqrt(v_t) + epsilon) */
OPT_INLINE void adam_body(float *restrict w, float *restrict m, float *restrict v,
                          const float *restrict g, float gs, float lr_t, float b1, float b2, float eps,
                          float l2, bool decay, size_t n)
{
    const float omb1 = 1.0f - b1, omb2 = 1.0f - b2;
    for (size_t i = 0; i < n; i++) {
        const float gi = opt_grad(gs * g[i], w[i], l2, decay);
        const float mi = b1 * m[i] + omb1 * gi;
        const float vi = b2 * v[i] + omb2 * (gi * gi);
        m[i] = mi;
        v[i] = vi;
        w[i] -= lr_t * mi / (vm_sqrt(vi) + eps);
    }
}

/* PyTorch's AdamW (_single_tensor_adamw), with a = lr / (1 - beta1^t) and c = 1 / sqrt(1 -
 * beta2^t) computed once by the caller and the decoupled decay factor keep = 1 - lr wd:
 *   p *= keep;  m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2;
 *   p -= a m / (sqrt(v) c + eps) */
OPT_INLINE void adamw_body(float *restrict w, float *restrict m, float *restrict v,
                           const float *restrict g, float gs, float a, float c, float b1, float b2,
                           float eps, float keep, bool decay, size_t n)
{
    const float omb1 = 1.0f - b1, omb2 = 1.0f - b2;
    for (size_t i = 0; i < n; i++) {
        const float gi = gs * g[i];
        const float mi = b1 * m[i] + omb1 * gi;
        const float vi = b2 * v[i] + omb2 * (gi * gi);
        m[i] = mi;
        v[i] = vi;
        const float wi = decay ? w[i] * keep : w[i];
        w[i] = wi - a * mi / (vm_sqrt(vi) * c + eps);
    }
}

/* ---- target-cloned spans: decayed and undecayed instances of each body ---- */

OPS_TARGET_CLONES
static void sgd_span(float *restrict w, const float *restrict g, float gs, float lr, size_t n)
{
    sgd_body(w, g, gs, lr, 0.0f, false, n);
}

OPS_TARGET_CLONES
static void sgd_decay_span(float *restrict w, const float *restrict g, float gs, float lr, float l2,
                           size_t n)
{
    sgd_body(w, g, gs, lr, l2, true, n);
}

OPS_TARGET_CLONES
static void rmsprop_span(float *restrict w, float *restrict acc, const float *restrict g, float gs,
                         float lr, float rho, float eps, size_t n)
{
    rmsprop_body(w, acc, g, gs, lr, rho, eps, 0.0f, false, n);
}

OPS_TARGET_CLONES
static void rmsprop_decay_span(float *restrict w, float *restrict acc, const float *restrict g, float gs,
                               float lr, float rho, float eps, float l2, size_t n)
{
    rmsprop_body(w, acc, g, gs, lr, rho, eps, l2, true, n);
}

/* nesterov is a run-time flag here but constant over the loop: GCC unswitches it */
OPS_TARGET_CLONES
static void momentum_span(float *restrict w, float *restrict v, const float *restrict g, float gs,
                          float lr, float mom, bool nesterov, size_t n)
{
    if (nesterov)
        momentum_body(w, v, g, gs, lr, mom, true, 0.0f, false, n);
    else
        momentum_body(w, v, g, gs, lr, mom, false, 0.0f, false, n);
}

OPS_TARGET_CLONES
static void momentum_decay_span(float *restrict w, float *restrict v, const float *restrict g, float gs,
                                float lr, float mom, bool nesterov, float l2, size_t n)
{
    if (nesterov)
        momentum_body(w, v, g, gs, lr, mom, true, l2, true, n);
    else
        momentum_body(w, v, g, gs, lr, mom, false, l2, true, n);
}

OPS_TARGET_CLONES
static void adam_span(float *restrict w, float *restrict m, float *restrict v,
                      const float *restrict g, float gs, float lr_t, float b1, float b2, float eps,
                      size_t n)
{
    adam_body(w, m, v, g, gs, lr_t, b1, b2, eps, 0.0f, false, n);
}

OPS_TARGET_CLONES
static void adam_decay_span(float *restrict w, float *restrict m, float *restrict v,
                            const float *restrict g, float gs, float lr_t, float b1, float b2, float eps,
                            float l2, size_t n)
{
    adam_body(w, m, v, g, gs, lr_t, b1, b2, eps, l2, true, n);
}

OPS_TARGET_CLONES
static void adamw_span(float *restrict w, float *restrict m, float *restrict v,
                       const float *restrict g, float gs, float a, float c, float b1, float b2,
                       float eps, size_t n)
{
    adamw_body(w, m, v, g, gs, a, c, b1, b2, eps, 1.0f, false, n);
}

OPS_TARGET_CLONES
static void adamw_decay_span(float *restrict w, float *restrict m, float *restrict v,
                             const float *restrict g, float gs, float a, float c, float b1, float b2,
                             float eps, float keep, size_t n)
{
    adamw_body(w, m, v, g, gs, a, c, b1, b2, eps, keep, true, n);
}

/* The factor on g: 1/P for a sum over P data-parallel ranks (their mean), computed as the
 * trainer's separate scaling pass did, so results are bit-identical to it; times the
 * clipping factor min(1, clip / (norm + 1e-6)) when clipping, norm that of the mean
 * (torch.nn.utils.clip_grad_norm_'s formula, in double). */
static float grad_scale(const UpdateDesc *d, const float *sumsq)
{
    const float mean = d->grad_ranks > 1 ? 1.0f / (float)d->grad_ranks : 1.0f;
    if (d->clip <= 0.0f)
        return mean;
    OPS_ASSERT(sumsq);
    const double norm = sqrt((double)sumsq[0]) * mean;
    const double k = (double)d->clip / (norm + 1e-6);
    return k < 1.0 ? (float)(mean * k) : mean;
}

/* This thread's share [lo, hi) of the update, cut at the decay prefix: [lo, mid) is
 * decayed, [mid, hi) is not. */
static void opt_share(const UpdateDesc *d, size_t *lo, size_t *mid, size_t *hi)
{
    ops_span_split(d->count, lo, hi);
    const size_t dc = d->decay_count < d->count ? d->decay_count : d->count;
    *mid = dc < *lo ? *lo : dc > *hi ? *hi : dc;
}

/* Contract: w (count) -= lr * g' (count), g' = g / grad_ranks, plus l2 w on the decay
 * prefix (the g' of every update below). */
void sgd_update(float *w, const float *g, const float *sumsq, const UpdateDesc *d)
{
    OPS_ASSERT(w && g && d);
    const float gs = grad_scale(d, sumsq);
#pragma omp parallel if (d->count >= ops_par_min)
    {
        size_t lo, mid, hi;
        opt_share(d, &lo, &mid, &hi);
        if (mid > lo)
            sgd_decay_span(w + lo, g + lo, gs, d->lr, d->l2, mid - lo);
        if (hi > mid)
            sgd_span(w + mid, g + mid, gs, d->lr, hi - mid);
    }
}

/* Contract: acc = rho*acc + (1-rho)*g'^2; w -= lr * g' / (sqrt(acc) + eps), all (count). */
void rmsprop_update(float *w, float *acc, const float *g, const float *sumsq, const UpdateDesc *d)
{
    OPS_ASSERT(w && acc && g && d);
    const float gs = grad_scale(d, sumsq);
#pragma omp parallel if (d->count >= ops_par_min)
    {
        size_t lo, mid, hi;
        opt_share(d, &lo, &mid, &hi);
        if (mid > lo)
            rmsprop_decay_span(w + lo, acc + lo, g + lo, gs, d->lr, d->rho, d->eps, d->l2,
                               mid - lo);
        if (hi > mid)
            rmsprop_span(w + mid, acc + mid, g + mid, gs, d->lr, d->rho, d->eps, hi - mid);
    }
}

/* Contract: v = momentum*v - lr*g'; w += v, or w += momentum*v - lr*g' (nesterov). */
void momentum_update(float *w, float *v, const float *g, const float *sumsq, const UpdateDesc *d)
{
    OPS_ASSERT(w && v && g && d);
    const float gs = grad_scale(d, sumsq);
#pragma omp parallel if (d->count >= ops_par_min)
    {
        size_t lo, mid, hi;
        opt_share(d, &lo, &mid, &hi);
        if (mid > lo)
            momentum_decay_span(w + lo, v + lo, g + lo, gs, d->lr, d->momentum, d->nesterov,
                                d->l2, mid - lo);
        if (hi > mid)
            momentum_span(w + mid, v + mid, g + mid, gs, d->lr, d->momentum, d->nesterov,
                          hi - mid);
    }
}

/* Contract: with t = step >= 1, lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t) (in double);
 * m = beta1 m + (1-beta1) g'; v = beta2 v + (1-beta2) g'^2; w -= lr_t m / (sqrt(v) + eps). */
void adam_update(float *w, float *m, float *v, const float *g, const float *sumsq, const UpdateDesc *d)
{
    OPS_ASSERT(w && m && v && g && d && d->step >= 1);
    const double t = (double)d->step;
    const float lr_t = (float)(d->lr * sqrt(1.0 - pow(d->beta2, t)) / (1.0 - pow(d->beta1, t)));
    const float gs = grad_scale(d, sumsq);
#pragma omp parallel if (d->count >= ops_par_min)
    {
        size_t lo, mid, hi;
        opt_share(d, &lo, &mid, &hi);
        if (mid > lo)
            adam_decay_span(w + lo, m + lo, v + lo, g + lo, gs, lr_t, d->beta1, d->beta2, d->eps,
                            d->l2, mid - lo);
        if (hi > mid)
            adam_span(w + mid, m + mid, v + mid, g + mid, gs, lr_t, d->beta1, d->beta2, d->eps,
                      hi - mid);
    }
}

/* Contract: PyTorch AdamW with t = step >= 1 (adamw_body; the bias corrections in double):
 * the decay prefix is first scaled by 1 - lr weight_decay, then every parameter takes the
 * Adam step with g' (the mean over ranks, clipped). */
void adamw_update(float *w, float *m, float *v, const float *g, const float *sumsq, const UpdateDesc *d)
{
    OPS_ASSERT(w && m && v && g && d && d->step >= 1);
    const double t = (double)d->step;
    const float a = (float)(d->lr / (1.0 - pow(d->beta1, t)));
    const float c = (float)(1.0 / sqrt(1.0 - pow(d->beta2, t)));
    const float keep = (float)(1.0 - (double)d->lr * d->weight_decay);
    const float gs = grad_scale(d, sumsq);
#pragma omp parallel if (d->count >= ops_par_min)
    {
        size_t lo, mid, hi;
        opt_share(d, &lo, &mid, &hi);
        if (mid > lo)
            adamw_decay_span(w + lo, m + lo, v + lo, g + lo, gs, a, c, d->beta1, d->beta2, d->eps,
                             keep, mid - lo);
        if (hi > mid)
            adamw_span(w + mid, m + mid, v + mid, g + mid, gs, a, c, d->beta1, d->beta2, d->eps,
                       hi - mid);
    }
}
