/* ops/loss.c — the two training losses: softmax cross-entropy (classification, mean over
 * the batch as tf.losses / Keras do) and squared error (Keras 'mse' or the summed form of
 * rnn-benchmarks). The loss value is accumulated in double; gradients are written (never
 * accumulated) and carry a caller-chosen scale (e.g. 1/ranks for data parallelism).
 */
#include <math.h>

#include "ops/kernels.h"

/* Contract: for each row r of logits (n, classes): probs[r] = softmax(logits[r]);
 * loss[0] = -(1/n) sum_r log probs[r][labels[r]]. Numerically stable (the row max is
 * subtracted before exp); the log-probability comes from log-sum-exp, not log(probs),
 * so a tiny probability does not turn into -inf. */
void softmax_xent_forward(float *loss, float *probs, const float *logits,
                          const int32_t *labels, const XentDesc *d)
{
    OPS_ASSERT(loss && probs && logits && labels && d);
    const int n = d->n, k = d->classes;
    double total = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : total) if ((size_t)n * (size_t)k >= ops_par_min)
    for (int r = 0; r < n; r++) {
        const float *l = logits + (size_t)r * (size_t)k;
        float *p = probs + (size_t)r * (size_t)k;
        const int32_t y = labels[r];
        OPS_ASSERT(y >= 0 && y < k);
        float m = l[0];
        for (int j = 1; j < k; j++)
            m = l[j] > m ? l[j] : m;
        double s = 0.0;
        for (int j = 0; j < k; j++) {
            p[j] = expf(l[j] - m);
            s += p[j];
        }
        const float inv = (float)(1.0 / s);
        for (int j = 0; j < k; j++)
            p[j] *= inv;
        total += log(s) - (double)(l[y] - m);
    }
    loss[0] = (float)(total / n);
}

/* Contract: dlogits (n, classes) = scale * (probs - onehot(labels)) / n, written. */
void softmax_xent_backward_data(float *dlogits, const float *probs, const int32_t *labels,
                                const XentDesc *d)
{
    OPS_ASSERT(dlogits && probs && labels && d);
    const int n = d->n, k = d->classes;
    const float f = d->scale / (float)n;
#pragma omp parallel for schedule(static) if ((size_t)n * (size_t)k >= ops_par_min)
    for (int r = 0; r < n; r++) {
        const float *p = probs + (size_t)r * (size_t)k;
        float *g = dlogits + (size_t)r * (size_t)k;
        const int32_t y = labels[r];
        OPS_ASSERT(y >= 0 && y < k);
#pragma omp simd
        for (int j = 0; j < k; j++)
            g[j] = f * p[j];
        g[y] = f * (p[y] - 1.0f);
    }
}

/* Contract: loss[0] = weight * sum (pred - target)^2, divided by n*features when d->mean. */
void sqerr_forward(float *loss, const float *pred, const float *target, const SqErrDesc *d)
{
    OPS_ASSERT(loss && pred && target && d);
    const size_t count = (size_t)d->n * (size_t)d->features;
    double s = 0.0;
#pragma omp parallel for simd schedule(static) reduction(+ : s) if (count >= ops_par_min)
    for (size_t i = 0; i < count; i++) {
        const double e = (double)pred[i] - (double)target[i];
        s += e * e;
    }
    loss[0] = (float)((double)d->weight * (d->mean ? s / (double)count : s));
}

/* Contract: dpred = scale * weight * 2 (pred - target), divided by n*features when
 * d->mean; written. */
void sqerr_backward_data(float *dpred, const float *pred, const float *target,
                         const SqErrDesc *d)
{
    OPS_ASSERT(dpred && pred && target && d);
    const size_t count = (size_t)d->n * (size_t)d->features;
    const float f = (float)(2.0 * d->scale * d->weight / (d->mean ? (double)count : 1.0));
#pragma omp parallel for simd schedule(static) if (count >= ops_par_min)
    for (size_t i = 0; i < count; i++)
        dpred[i] = f * (pred[i] - target[i]);
}
