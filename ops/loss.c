/* ops/loss.c — the two training losses: softmax cross-entropy (classification, mean over
 * the batch as tf.losses / Keras do) and squared error (Keras 'mse' or the summed form of
 * rnn-benchmarks). The loss value is accumulated in double; gradients are written (never
 * accumulated) and carry a caller-chosen scale (e.g. 1/ranks for data parallelism).
 */
#include <math.h>

#include "ops/comm.h"
#include "ops/kernels.h"

/* The first class of this rank's columns, and how many of them are classes (not padding). */
static int xent_first(const XentDesc *d) { return d->parts > 1 ? comm_tp_rank() * d->classes : 0; }
static int xent_valid(const XentDesc *d)
{
    const int left = d->parts > 1 ? d->total - xent_first(d) : d->classes;
    return left < d->classes ? left : d->classes;
}

/* Rows whose label counts (not XENT_IGNORE); a label out of [0, classes) aborts. */
static int counted_rows(const int32_t *labels, int n, int k)
{
    int c = 0;
    for (int r = 0; r < n; r++) {
        OPS_ASSERT(labels[r] == XENT_IGNORE || (labels[r] >= 0 && labels[r] < k));
        c += labels[r] != XENT_IGNORE;
    }
    return c;
}

/* Contract: for each row r of logits (n, classes): probs[r] = softmax(logits[r]);
 * loss[0] = -(1/c) sum_r log probs[r][labels[r]] over the c rows whose label is not
 * XENT_IGNORE (0 when there are none). Numerically stable (the row max is subtracted
 * before exp); the log-probability comes from log-sum-exp, not log(probs), so a tiny
 * probability does not turn into -inf. */
void softmax_xent_forward(float *loss, float *probs, const float *logits,
                          const int32_t *labels, const XentDesc *d)
{
    OPS_ASSERT(loss && probs && logits && labels && d);
    const int n = d->n, k = d->classes;
    const int counted = counted_rows(labels, n, k);
    double total = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : total) if ((size_t)n * (size_t)k >= ops_par_min)
    for (int r = 0; r < n; r++) {
        const float *l = logits + (size_t)r * (size_t)k;
        float *p = probs + (size_t)r * (size_t)k;
        const int32_t y = labels[r];
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
        if (y != XENT_IGNORE)
            total += log(s) - (double)(l[y] - m);
    }
    loss[0] = counted > 0 ? (float)(total / counted) : 0.0f;
}

/* Contract: as softmax_xent_forward over the `total` classes of which logits hold this
 * rank's block (XentDesc.parts; the group is comm_tp_size() ranks, or this one alone); the
 * loss is the whole softmax's on every rank, probs this rank's columns of it (0 on
 * padding). Three passes over the block with two sums over the group between them: the
 * rows' max (MPI max), then their sums of exponentials and label logits (one MPI sum of
 * 2n values, a label's logit coming from the rank that holds its column). */
void softmax_xent_forward_parallel(float *loss, float *probs, const float *logits, const int32_t *labels,
                                   const XentDesc *d, float *ws)
{
    OPS_ASSERT(loss && probs && logits && labels && d && ws && d->parts > 1);
    OPS_ASSERT(comm_tp_size() == 1 || comm_tp_size() == d->parts);
    const int n = d->n, k = d->classes, first = xent_first(d), valid = xent_valid(d);
    OPS_ASSERT(valid >= 1);
    const int counted = counted_rows(labels, n, d->total);
    float *rmax = ws, *sums = ws + n; /* sums: n sums of exponentials, then n label logits */
#pragma omp parallel for schedule(static) if ((size_t)n * (size_t)k >= ops_par_min)
    for (int r = 0; r < n; r++) {
        const float *l = logits + (size_t)r * (size_t)k;
        float m = l[0];
        for (int j = 1; j < valid; j++)
            m = l[j] > m ? l[j] : m;
        rmax[r] = m;
    }
    comm_tp_allreduce_max_f32(rmax, (size_t)n);
#pragma omp parallel for schedule(static) if ((size_t)n * (size_t)k >= ops_par_min)
    for (int r = 0; r < n; r++) {
        const float *l = logits + (size_t)r * (size_t)k;
        float *p = probs + (size_t)r * (size_t)k;
        const float m = rmax[r];
        double s = 0.0;
        for (int j = 0; j < valid; j++) {
            p[j] = expf(l[j] - m);
            s += p[j];
        }
        for (int j = valid; j < k; j++)
            p[j] = 0.0f;
        sums[r] = (float)s;
        const int32_t y = labels[r];
        sums[n + r] = y != XENT_IGNORE && y >= first && y < first + valid ? l[y - first] - m : 0.0f;
    }
    comm_tp_allreduce_f32(sums, sums, 2 * (size_t)n);
    double total = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : total) if ((size_t)n * (size_t)k >= ops_par_min)
    for (int r = 0; r < n; r++) {
        float *p = probs + (size_t)r * (size_t)k;
        const float inv = 1.0f / sums[r];
        for (int j = 0; j < valid; j++)
            p[j] *= inv;
        if (labels[r] != XENT_IGNORE)
            total += log((double)sums[r]) - (double)sums[n + r];
    }
    loss[0] = counted > 0 ? (float)(total / counted) : 0.0f;
}

/* Contract: dlogits (n, classes) = scale * (probs - onehot(labels)) / c, c the counted
 * rows (as the forward's); an ignored row's gradient is 0; under parts the onehot's column
 * only on the rank that holds it. Written. */
void softmax_xent_backward_data(float *dlogits, const float *probs, const int32_t *labels,
                                const XentDesc *d)
{
    OPS_ASSERT(dlogits && probs && labels && d);
    const int n = d->n, k = d->classes, first = xent_first(d);
    const int counted = counted_rows(labels, n, d->parts > 1 ? d->total : k);
    const float f = counted > 0 ? d->scale / (float)counted : 0.0f;
#pragma omp parallel for schedule(static) if ((size_t)n * (size_t)k >= ops_par_min)
    for (int r = 0; r < n; r++) {
        const float *p = probs + (size_t)r * (size_t)k;
        float *g = dlogits + (size_t)r * (size_t)k;
        const int32_t y = labels[r];
        const float fr = y == XENT_IGNORE ? 0.0f : f;
#pragma omp simd
        for (int j = 0; j < k; j++)
            g[j] = fr * p[j];
        if (y != XENT_IGNORE && y >= first && y < first + k)
            g[y - first] = fr * (p[y - first] - 1.0f);
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
