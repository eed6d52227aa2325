/* ops/check.c — op_spot_check: validates one executed op by recomputing sampled output
 * elements directly from the inputs in double (the STREAM habit: results are validated
 * after timing, outside the timed region). Each reference comes with a magnitude, the sum
 * of the absolute values of the terms that make it up (propagated through the nonlinear
 * functions to first order), so the tolerance scales with what fp32 could have lost:
 *   |got - ref| <= CHECK_ATOL + CHECK_RTOL * magnitude.
 * rtol = 1e-4 is far above fp32 rounding (6e-8 per operation; a dot product of k terms
 * typically loses sqrt(k) of those) and far below what a wrong index, a missing term or a
 * wrong formula produces; atol = 1e-6 covers underflow and values that are zero.
 * One spot check per kind (spot_check_<kind>, the table's entry in kinds.c names it); they
 * share the sampler and the tolerance here.
 */
#include <math.h>
#include <string.h>

#include "ops/kind.h"

#define CHECK_ATOL 1e-6
#define CHECK_RTOL 1e-4

static void check_one(SpotCheck *c, double got, double ref, double mag)
{
    double e = fabs(got - ref) / (CHECK_ATOL + CHECK_RTOL * fabs(mag));
    if (!(e <= 1.0)) /* NaN fails too */
        c->ok = false;
    if (isnan(e))
        e = INFINITY;
    if (e > c->worst)
        c->worst = e;
}

/* Sample positions: every one when samples + 2 >= total, else position 0, the last
 * position (where off-by-one indexing shows) and `samples` uniform random ones. */
typedef struct {
    size_t total, count, i;
    uint64_t state;
} Sampler;

static Sampler sampler_init(size_t total, int samples, uint64_t seed)
{
    OPS_ASSERT(total >= 1 && samples >= 0);
    Sampler s = {.total = total, .i = 0, .state = seed};
    s.count = (size_t)samples + 2 >= total ? total : (size_t)samples + 2;
    return s;
}

/* splitmix64: tiny, seedable, good enough to pick positions */
static uint64_t sampler_rand(Sampler *s)
{
    uint64_t z = (s->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static bool sampler_next(Sampler *s, size_t *idx)
{
    if (s->i >= s->count)
        return false;
    if (s->count == s->total)
        *idx = s->i;
    else if (s->i == 0)
        *idx = 0;
    else if (s->i == 1)
        *idx = s->total - 1;
    else
        *idx = (size_t)(sampler_rand(s) % s->total);
    s->i++;
    return true;
}

static double sigmoid_d(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* the standard normal CDF and density, for GELU */
static double normal_cdf_d(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

static double normal_pdf_d(double x)
{
    return exp(-0.5 * x * x) / sqrt(2.0 * M_PI);
}

/* ---- per-kind checks (OpSpotFn, kind.h); f[] are the buffers after the run, b0[] the
 * copies before ---- */

void spot_check_gemm(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                     int samples, uint64_t seed)
{
    const GemmDesc *g = &op->u.gemm;
    float *const *f = (float *const *)bufs;
    const float *C = f[0], *A = f[1], *B = f[2];
    Sampler s = sampler_init((size_t)g->m * (size_t)g->n, samples, seed);
    size_t idx;
    while (sampler_next(&s, &idx)) {
        const size_t i = idx / (size_t)g->n, j = idx % (size_t)g->n;
        double acc = 0.0, mag = 0.0;
        for (size_t p = 0; p < (size_t)g->k; p++) {
            const double a = g->trans_a ? A[p * (size_t)g->m + i] : A[i * (size_t)g->k + p];
            const double b = g->trans_b ? B[j * (size_t)g->k + p] : B[p * (size_t)g->n + j];
            acc += a * b;
            mag += fabs(a * b);
        }
        double ref = (double)g->alpha * acc;
        mag *= fabs((double)g->alpha);
        if (g->beta != 0.0f) {
            ref += (double)g->beta * b0[0][idx];
            mag += fabs((double)g->beta * b0[0][idx]);
        }
        if (g->bias) {
            ref += f[3][j];
            mag += fabs(f[3][j]);
        }
        check_one(ck, C[idx], ref, mag);
    }
}

void spot_check_conv(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                     int samples, uint64_t seed)
{
    const OpPhase phase = op->phase;
    const ConvDesc *v = &op->u.conv;
    float *const *f = (float *const *)bufs;
    const int cg = v->c / v->groups, kg = v->k / v->groups;
    const size_t C = (size_t)v->c, H = (size_t)v->h, W = (size_t)v->w, K = (size_t)v->k;
    const size_t OH = (size_t)v->out_h, OW = (size_t)v->out_w;
    const size_t R = (size_t)v->r, S = (size_t)v->s;
    size_t idx;
    if (phase == PHASE_FWD) {
        const float *y = f[0], *x = f[1], *w = f[2];
        Sampler s = sampler_init((size_t)v->n * K * OH * OW, samples, seed);
        while (sampler_next(&s, &idx)) {
            const size_t ow = idx % OW, oh = idx / OW % OH, k = idx / (OW * OH) % K;
            const size_t n = idx / (OW * OH * K), g = k / (size_t)kg;
            double acc = 0.0, mag = 0.0;
            for (size_t c = 0; c < (size_t)cg; c++)
                for (size_t kh = 0; kh < R; kh++)
                    for (size_t kw = 0; kw < S; kw++) {
                        const long ih = (long)(oh * (size_t)v->stride_h + kh) - v->pad_top;
                        const long iw = (long)(ow * (size_t)v->stride_w + kw) - v->pad_left;
                        if (ih < 0 || iw < 0 || ih >= (long)H || iw >= (long)W)
                            continue;
                        const double t =
                            (double)x[((n * C + g * (size_t)cg + c) * H + (size_t)ih) * W + (size_t)iw] *
                            w[((k * (size_t)cg + c) * R + kh) * S + kw];
                        acc += t;
                        mag += fabs(t);
                    }
            check_one(ck, y[idx], acc, mag);
        }
    } else if (phase == PHASE_BWD_DATA) {
        const float *dx = f[0], *dy = f[1], *w = f[2];
        Sampler s = sampler_init((size_t)v->n * C * H * W, samples, seed);
        while (sampler_next(&s, &idx)) {
            const size_t iw = idx % W, ih = idx / W % H, c = idx / (W * H) % C;
            const size_t n = idx / (W * H * C), g = c / (size_t)cg, cc = c % (size_t)cg;
            double acc = v->accumulate ? b0[0][idx] : 0.0, mag = fabs(acc);
            for (size_t k = g * (size_t)kg; k < (g + 1) * (size_t)kg; k++)
                for (size_t kh = 0; kh < R; kh++)
                    for (size_t kw = 0; kw < S; kw++) {
                        const long th = (long)ih + v->pad_top - (long)kh;
                        const long tw = (long)iw + v->pad_left - (long)kw;
                        if (th < 0 || tw < 0 || th % v->stride_h || tw % v->stride_w)
                            continue;
                        const size_t oh = (size_t)(th / v->stride_h), ow = (size_t)(tw / v->stride_w);
                        if (oh >= OH || ow >= OW)
                            continue;
                        const double t = (double)dy[((n * K + k) * OH + oh) * OW + ow] *
                                         w[((k * (size_t)cg + cc) * R + kh) * S + kw];
                        acc += t;
                        mag += fabs(t);
                    }
            check_one(ck, dx[idx], acc, mag);
        }
    } else {
        const float *dw = f[0], *dy = f[1], *x = f[2];
        Sampler s = sampler_init(K * (size_t)cg * R * S, samples, seed);
        while (sampler_next(&s, &idx)) {
            const size_t kw = idx % S, kh = idx / S % R, cc = idx / (S * R) % (size_t)cg;
            const size_t k = idx / (S * R * (size_t)cg), g = k / (size_t)kg;
            double acc = v->accumulate ? b0[0][idx] : 0.0, mag = fabs(acc);
            for (size_t n = 0; n < (size_t)v->n; n++)
                for (size_t oh = 0; oh < OH; oh++)
                    for (size_t ow = 0; ow < OW; ow++) {
                        const long ih = (long)(oh * (size_t)v->stride_h + kh) - v->pad_top;
                        const long iw = (long)(ow * (size_t)v->stride_w + kw) - v->pad_left;
                        if (ih < 0 || iw < 0 || ih >= (long)H || iw >= (long)W)
                            continue;
                        const double t =
                            (double)dy[((n * K + k) * OH + oh) * OW + ow] *
                            x[((n * C + g * (size_t)cg + cc) * H + (size_t)ih) * W + (size_t)iw];
                        acc += t;
                        mag += fabs(t);
                    }
            check_one(ck, dw[idx], acc, mag);
        }
    }
}

/* The window of output (oh, ow) clipped to the image. */
static void pool_win(const PoolDesc *p, size_t oh, size_t ow, long *h0, long *h1, long *w0,
                     long *w1)
{
    const long sh = (long)oh * p->stride_h - p->pad_top, sw = (long)ow * p->stride_w - p->pad_left;
    *h0 = sh < 0 ? 0 : sh;
    *h1 = sh + p->win_h > p->h ? p->h : sh + p->win_h;
    *w0 = sw < 0 ? 0 : sw;
    *w1 = sw + p->win_w > p->w ? p->w : sw + p->win_w;
}

void spot_check_pool(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                     int samples, uint64_t seed)
{
    const OpPhase phase = op->phase;
    const PoolDesc *p = &op->u.pool;
    float *const *f = (float *const *)bufs;
    const size_t H = (size_t)p->h, W = (size_t)p->w, OH = (size_t)p->out_h, OW = (size_t)p->out_w;
    size_t idx;
    if (phase == PHASE_FWD) {
        const float *y = f[0], *x = f[1];
        Sampler s = sampler_init((size_t)p->n * (size_t)p->c * OH * OW, samples, seed);
        while (sampler_next(&s, &idx)) {
            const size_t plane = idx / (OH * OW), oh = idx / OW % OH, ow = idx % OW;
            const float *xp = x + plane * H * W;
            long h0, h1, w0, w1;
            pool_win(p, oh, ow, &h0, &h1, &w0, &w1);
            double ref = p->kind == POOL_MAX ? -INFINITY : 0.0, mag = 0.0;
            for (long i = h0; i < h1; i++)
                for (long j = w0; j < w1; j++) {
                    const double v = xp[(size_t)i * W + (size_t)j];
                    if (p->kind == POOL_MAX)
                        ref = v > ref ? v : ref;
                    else
                        ref += v;
                    mag += fabs(v);
                }
            const double cnt = (double)((h1 - h0) * (w1 - w0));
            if (p->kind == POOL_AVG)
                ref /= cnt;
            check_one(ck, y[idx], ref, p->kind == POOL_MAX ? fabs(ref) : mag / cnt);
        }
    } else {
        const float *dx = f[0], *dy = f[1], *x = f[2], *y = f[3];
        Sampler s = sampler_init((size_t)p->n * (size_t)p->c * H * W, samples, seed);
        while (sampler_next(&s, &idx)) {
            const size_t plane = idx / (H * W), ih = idx / W % H, iw = idx % W;
            const float *xp = x + plane * H * W;
            double ref = p->accumulate ? b0[0][idx] : 0.0, mag = fabs(ref);
            /* every output whose window covers (ih, iw) */
            for (size_t oh = 0; oh < OH; oh++)
                for (size_t ow = 0; ow < OW; ow++) {
                    long h0, h1, w0, w1;
                    pool_win(p, oh, ow, &h0, &h1, &w0, &w1);
                    if ((long)ih < h0 || (long)ih >= h1 || (long)iw < w0 || (long)iw >= w1)
                        continue;
                    const size_t o = plane * OH * OW + oh * OW + ow;
                    double t;
                    if (p->kind == POOL_AVG) {
                        t = dy[o] / (double)((h1 - h0) * (w1 - w0));
                    } else {
                        long at = -1; /* first cell equal to the max, as documented */
                        for (long i = h0; i < h1 && at < 0; i++)
                            for (long j = w0; j < w1; j++)
                                if (xp[(size_t)i * W + (size_t)j] == y[o]) {
                                    at = i * (long)W + j;
                                    break;
                                }
                        t = at == (long)(ih * W + iw) ? dy[o] : 0.0;
                    }
                    ref += t;
                    mag += fabs(t);
                }
            check_one(ck, dx[idx], ref, mag);
        }
    }
}

void spot_check_bias(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                     int samples, uint64_t seed)
{
    const OpPhase phase = op->phase;
    const BiasDesc *b = &op->u.bias;
    float *const *f = (float *const *)bufs;
    const size_t C = (size_t)b->c, SP = (size_t)b->spatial;
    size_t idx;
    if (phase == PHASE_FWD) {
        Sampler s = sampler_init((size_t)b->n * C * SP, samples, seed);
        while (sampler_next(&s, &idx)) {
            const double y0 = b0[0][idx], bb = f[1][idx / SP % C];
            check_one(ck, f[0][idx], y0 + bb, fabs(y0) + fabs(bb));
        }
    } else {
        const float *dy = f[1];
        Sampler s = sampler_init(C, samples, seed);
        while (sampler_next(&s, &idx)) {
            double ref = b->accumulate ? b0[0][idx] : 0.0, mag = fabs(ref);
            for (size_t n = 0; n < (size_t)b->n; n++)
                for (size_t i = 0; i < SP; i++) {
                    const double t = dy[(n * C + idx) * SP + i];
                    ref += t;
                    mag += fabs(t);
                }
            check_one(ck, f[0][idx], ref, mag);
        }
    }
}

void spot_check_act(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                    int samples, uint64_t seed)
{
    const OpPhase phase = op->phase;
    const ActDesc *a = &op->u.act;
    float *const *f = (float *const *)bufs;
    /* in place, the input (x, dy) is buffer 0 as it was before the run */
    const float *in = a->in_place ? b0[0] : f[1], *y_saved = a->in_place ? f[1] : f[2];
    Sampler s = sampler_init(a->count, samples, seed);
    size_t idx;
    while (sampler_next(&s, &idx)) {
        if (phase == PHASE_FWD) {
            const double x = in[idx];
            double ref, mag;
            switch (a->act) {
            case ACT_RELU: ref = x > 0 ? x : 0.0; mag = fabs(ref); break;
            case ACT_SIGMOID: ref = sigmoid_d(x); mag = ref + fabs(x) * ref * (1.0 - ref); break;
            case ACT_GELU: {
                const double p = normal_cdf_d(x);
                ref = x * p;
                mag = fabs(ref) + fabs(x) * fabs(p + x * normal_pdf_d(x));
                break;
            }
            default: ref = tanh(x); mag = fabs(ref) + fabs(x) * (1.0 - ref * ref); break;
            }
            check_one(ck, f[0][idx], ref, mag);
        } else {
            const double dy = in[idx], y = y_saved[idx]; /* gelu: x */
            double ref, mag;
            switch (a->act) {
            case ACT_RELU: ref = y > 0 ? dy : 0.0; mag = fabs(ref); break;
            case ACT_GELU: { /* d/dx (Phi + x phi) = phi (2 - x^2): the error x's rounding makes */
                const double p = normal_cdf_d(y), q = y * normal_pdf_d(y);
                ref = dy * (p + q);
                mag = fabs(dy) * (p + fabs(q) + fabs(y) * normal_pdf_d(y) * fabs(2.0 - y * y));
                break;
            }
            case ACT_SIGMOID: ref = dy * y * (1.0 - y); mag = fabs(dy * y) * (1.0 + fabs(y)); break;
            default: ref = dy * (1.0 - y * y); mag = fabs(dy) * (1.0 + y * y); break;
            }
            check_one(ck, f[0][idx], ref, mag);
        }
    }
}

void spot_check_xent(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                     int samples, uint64_t seed)
{
    const OpPhase phase = op->phase;
    const XentDesc *x = &op->u.xent;
    const size_t n = (size_t)x->n, K = (size_t)x->classes;
    size_t idx;
    if (phase == PHASE_FWD) {
        const float *loss = bufs[0], *probs = bufs[1], *logits = bufs[2];
        const int32_t *labels = bufs[3];
        double total = 0.0, mag = 0.0;
        size_t counted = 0;
        for (size_t r = 0; r < n; r++) {
            if (labels[r] == XENT_IGNORE)
                continue;
            const float *l = logits + r * K;
            double m = l[0], s = 0.0;
            for (size_t j = 1; j < K; j++)
                m = l[j] > m ? l[j] : m;
            for (size_t j = 0; j < K; j++)
                s += exp(l[j] - m);
            OPS_ASSERT(labels[r] >= 0 && (size_t)labels[r] < K);
            const double lse = m + log(s);
            total += lse - l[labels[r]];
            mag += fabs(lse) + fabs((double)l[labels[r]]);
            counted++;
        }
        const double c = counted ? (double)counted : 1.0;
        check_one(ck, loss[0], total / c, mag / c);
        Sampler s = sampler_init(n * K, samples, seed);
        while (sampler_next(&s, &idx)) {
            const float *l = logits + idx / K * K;
            double m = l[0], sum = 0.0;
            for (size_t j = 1; j < K; j++)
                m = l[j] > m ? l[j] : m;
            for (size_t j = 0; j < K; j++)
                sum += exp(l[j] - m);
            const double ref = exp(logits[idx] - m) / sum;
            check_one(ck, probs[idx], ref, ref);
        }
    } else {
        const float *dl = bufs[0], *probs = bufs[1];
        const int32_t *labels = bufs[2];
        size_t counted = 0;
        for (size_t r = 0; r < n; r++)
            counted += labels[r] != XENT_IGNORE;
        const double f = counted ? (double)x->scale / (double)counted : 0.0;
        Sampler s = sampler_init(n * K, samples, seed);
        while (sampler_next(&s, &idx)) {
            const int32_t y = labels[idx / K];
            const double one = y != XENT_IGNORE && (size_t)y == idx % K ? 1.0 : 0.0;
            const double fr = y == XENT_IGNORE ? 0.0 : f;
            check_one(ck, dl[idx], fr * (probs[idx] - one), fabs(fr) * (probs[idx] + one));
        }
    }
}

void spot_check_sqerr(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                      int samples, uint64_t seed)
{
    const OpPhase phase = op->phase;
    const SqErrDesc *q = &op->u.sqerr;
    float *const *f = (float *const *)bufs;
    const size_t count = (size_t)q->n * (size_t)q->features;
    const double div = (q->mean ? (double)count : 1.0) / (double)q->weight;
    const float *pred = f[1], *target = f[2];
    if (phase == PHASE_FWD) {
        double s = 0.0;
        for (size_t i = 0; i < count; i++) {
            const double e = (double)pred[i] - target[i];
            s += e * e;
        }
        check_one(ck, f[0][0], s / div, s / div);
    } else {
        Sampler sm = sampler_init(count, samples, seed);
        size_t idx;
        const double k = 2.0 * q->scale / div;
        while (sampler_next(&sm, &idx))
            check_one(ck, f[0][idx], k * ((double)pred[idx] - target[idx]),
                      fabs(k) * (fabs(pred[idx]) + fabs(target[idx])));
    }
}

void spot_check_lstm(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                     int samples, uint64_t seed)
{
    const OpPhase phase = op->phase;
    const LstmCellDesc *l = &op->u.lstm;
    float *const *f = (float *const *)bufs;
    const size_t H = (size_t)l->hidden;
    Sampler s = sampler_init((size_t)l->batch * H, samples, seed);
    size_t idx;
    while (sampler_next(&s, &idx)) {
        const size_t r = idx / H, u = idx % H, a4 = r * 4 * H + u;
        if (phase == PHASE_FWD) {
            const float *c_t = f[0], *h_t = f[1], *act = f[2], *pre = f[3], *cp = f[4], *b = f[5];
            double z[4], zm[4], g[4], gm[4];
            for (int q = 0; q < 4; q++) {
                z[q] = (double)pre[a4 + (size_t)q * H] + b[u + (size_t)q * H];
                zm[q] = fabs(pre[a4 + (size_t)q * H]) + fabs(b[u + (size_t)q * H]);
            }
            z[2] += l->forget_bias;
            zm[2] += fabs(l->forget_bias);
            for (int q = 0; q < 4; q++) {
                if (q == 1) {
                    g[q] = tanh(z[q]);
                    gm[q] = fabs(g[q]) + zm[q] * (1.0 - g[q] * g[q]);
                } else {
                    g[q] = sigmoid_d(z[q]);
                    gm[q] = g[q] + zm[q] * g[q] * (1.0 - g[q]);
                }
                check_one(ck, act[a4 + (size_t)q * H], g[q], gm[q]);
            }
            const double c = cp[idx] * g[2] + g[0] * g[1];
            const double cm = fabs(cp[idx]) * gm[2] + gm[0] * gm[1];
            const double tc = tanh(c);
            check_one(ck, c_t[idx], c, cm);
            check_one(ck, h_t[idx], tc * g[3], fabs(tc) * gm[3] + cm * (1.0 - tc * tc) * g[3]);
        } else {
            const float *dpre = f[0], *dcp = f[1], *dh_t = f[2], *dc_t = f[3], *act = f[4];
            const float *c_prev = f[5], *c_t = f[6];
            const double gi = act[a4], gj = act[a4 + H], gf = act[a4 + 2 * H], go = act[a4 + 3 * H];
            const double tc = tanh(c_t[idx]), dh = dh_t[idx], cp = c_prev[idx];
            /* magnitudes: a - b counts |a| + |b|, so 1 - x^2 counts 1 + x^2 */
            const double dc = dc_t[idx] + dh * go * (1.0 - tc * tc);
            const double dcm = fabs(dc_t[idx]) + fabs(dh * go) * (1.0 + tc * tc + fabs(c_t[idx]));
            check_one(ck, dpre[a4], dc * gj * gi * (1.0 - gi), dcm * fabs(gj) * gi * (1.0 + gi));
            check_one(ck, dpre[a4 + H], dc * gi * (1.0 - gj * gj), dcm * gi * (1.0 + gj * gj));
            check_one(ck, dpre[a4 + 2 * H], dc * cp * gf * (1.0 - gf),
                      dcm * fabs(cp) * gf * (1.0 + gf));
            check_one(ck, dpre[a4 + 3 * H], dh * tc * go * (1.0 - go),
                      fabs(dh) * (fabs(tc) + fabs(c_t[idx])) * go * (1.0 + go));
            check_one(ck, dcp[idx], dc * gf, dcm * gf);
        }
    }
}

/* The decay prefix is checked on its own as well: its last element and, when sampling,
 * as many samples inside it as outside, so a prefix off by one or not applied shows. */
void spot_check_update(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                       int samples, uint64_t seed)
{
    const OpKind kind = op->kind;
    const UpdateDesc *u = &op->u.update;
    float *const *f = (float *const *)bufs;
    const double lr = u->lr;
    const bool adamw = kind == OP_ADAMW;
    const size_t ng = kind == OP_SGD ? 1 : kind == OP_ADAM || adamw ? 3 : 2; /* index of g */
    double lr_t = lr, bc1 = 1.0, bc2 = 1.0;
    if (kind == OP_ADAM || adamw) {
        const double t = (double)u->step;
        bc1 = 1.0 - pow(u->beta1, t), bc2 = 1.0 - pow(u->beta2, t);
        lr_t = lr * sqrt(bc2) / bc1;
    }
    /* the mean over ranks, in float as the kernel has it, then the clipping factor */
    const float mean = u->grad_ranks > 1 ? 1.0f / (float)u->grad_ranks : 1.0f;
    double gs = mean;
    if (u->clip > 0.0f) {
        const double norm = sqrt((double)f[ng + 1][0]) * mean;
        gs = fmin(1.0, u->clip / (norm + 1e-6)) * mean;
    }
    for (int part = 0; part < 2; part++) {
        /* part 0: the whole buffer; part 1: the decay prefix (when there is one) */
        const size_t total = part == 0 ? u->count : u->decay_count;
        if (total == 0)
            continue;
        Sampler s = sampler_init(total, samples, seed + (uint64_t)part);
        size_t idx;
        while (sampler_next(&s, &idx)) {
            const double w0 = b0[0][idx], graw = gs * f[ng][idx];
            const bool dec = idx < u->decay_count;
            const double g = dec && !adamw ? graw + (double)u->l2 * w0 : graw;
            const double gm = dec && !adamw ? fabs(graw) + fabs((double)u->l2 * w0) : fabs(graw);
            if (kind == OP_SGD) {
                check_one(ck, f[0][idx], w0 - lr * g, fabs(w0) + fabs(lr) * gm);
            } else if (kind == OP_RMSPROP) {
                const double a0 = b0[1][idx];
                const double a = u->rho * a0 + (1.0 - u->rho) * g * g;
                const double am = fabs(u->rho * a0) + fabs((1.0 - u->rho)) * gm * gm;
                const double step = lr * g / (sqrt(a) + u->eps);
                check_one(ck, f[1][idx], a, am);
                /* a is a sum of squares (no cancellation): only g's terms matter */
                check_one(ck, f[0][idx], w0 - step, fabs(w0) + fabs(lr) * gm / (sqrt(a) + u->eps));
            } else if (kind == OP_MOMENTUM) {
                const double v0 = b0[1][idx], mom = u->momentum;
                const double v = mom * v0 - lr * g, vm = fabs(mom * v0) + fabs(lr) * gm;
                check_one(ck, f[1][idx], v, vm);
                if (u->nesterov)
                    check_one(ck, f[0][idx], w0 + mom * v - lr * g,
                              fabs(w0) + fabs(mom) * vm + fabs(lr) * gm);
                else
                    check_one(ck, f[0][idx], w0 + v, fabs(w0) + vm);
            } else {
                const double m0 = b0[1][idx], v0 = b0[2][idx];
                const double m = u->beta1 * m0 + (1.0 - u->beta1) * g;
                const double mm = fabs(u->beta1 * m0) + (1.0 - u->beta1) * gm;
                const double v = u->beta2 * v0 + (1.0 - u->beta2) * g * g;
                const double vm = fabs(u->beta2 * v0) + (1.0 - u->beta2) * gm * gm;
                check_one(ck, f[1][idx], m, mm);
                check_one(ck, f[2][idx], v, vm);
                if (adamw) { /* PyTorch's form: decay first, eps outside the corrected root */
                    const double keep = dec ? 1.0 - lr * (double)u->weight_decay : 1.0;
                    const double den = sqrt(v) / sqrt(bc2) + u->eps;
                    const double step = lr / bc1 * m / den;
                    check_one(ck, f[0][idx], w0 * keep - step, fabs(w0) + fabs(lr / bc1) * mm / den);
                } else {
                    const double den = sqrt(v) + u->eps;
                    const double step = lr_t * m / den;
                    /* v is a sum of squares (no cancellation): m's terms set the magnitude */
                    check_one(ck, f[0][idx], w0 - step, fabs(w0) + fabs(lr_t) * mm / den);
                }
            }
        }
    }
}

/* ---- model-zoo kinds ---- */

/* Channel statistics in double over the channel's n*spatial values. */
static void bn_ref_stats(const BnDesc *b, const float *x, size_t ch, double *mean, double *var,
                         double *meansq)
{
    const size_t C = (size_t)b->c, SP = (size_t)b->spatial;
    double s1 = 0.0, s2 = 0.0;
    for (size_t n = 0; n < (size_t)b->n; n++)
        for (size_t i = 0; i < SP; i++) {
            const double v = x[(n * C + ch) * SP + i];
            s1 += v;
            s2 += v * v;
        }
    const double m = (double)b->n * (double)SP;
    *mean = s1 / m;
    *meansq = s2 / m;
    *var = fmax(*meansq - *mean * *mean, 0.0);
}

void spot_check_batchnorm(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                          int samples, uint64_t seed)
{
    const OpPhase phase = op->phase;
    const BnDesc *b = &op->u.bn;
    float *const *f = (float *const *)bufs;
    const size_t C = (size_t)b->c, SP = (size_t)b->spatial;
    const size_t e = (size_t)b->n * C * SP;
    const double m = (double)b->n * (double)SP, eps = b->eps;
    size_t idx;
    if (phase == PHASE_FWD && b->training) {
        const float *y = f[0], *mean = f[1], *invstd = f[2], *x = f[5], *gamma = f[6], *beta = f[7];
        Sampler s = sampler_init(C, samples, seed);
        while (sampler_next(&s, &idx)) {
            double mu, var, msq;
            bn_ref_stats(b, x, idx, &mu, &var, &msq);
            const double inv = 1.0 / sqrt(var + eps);
            check_one(ck, mean[idx], mu, sqrt(msq)); /* sum|x|/m <= sqrt(mean of squares) */
            check_one(ck, invstd[idx], inv, 0.5 * inv * (msq + mu * mu + eps) / (var + eps));
            const double unbias = m > 1.0 + eps ? m / (m - (1.0 + eps)) : 1.0;
            const double mom = b->momentum, rm0 = b0[3][idx], rv0 = b0[4][idx];
            check_one(ck, f[3][idx], mom * rm0 + (1.0 - mom) * mu,
                      fabs(mom * rm0) + (1.0 - mom) * sqrt(msq));
            check_one(ck, f[4][idx], mom * rv0 + (1.0 - mom) * var * unbias,
                      fabs(mom * rv0) + (1.0 - mom) * (msq + mu * mu) * unbias);
        }
        Sampler sy = sampler_init(e, samples, seed + 1);
        while (sampler_next(&sy, &idx)) {
            const size_t ch = idx / SP % C;
            double mu, var, msq;
            bn_ref_stats(b, x, ch, &mu, &var, &msq);
            const double a = (double)gamma[ch] / sqrt(var + eps);
            check_one(ck, y[idx], a * ((double)x[idx] - mu) + beta[ch],
                      fabs(a) * (fabs(x[idx]) + fabs(mu) + sqrt(msq)) + fabs(beta[ch]));
        }
    } else if (phase == PHASE_FWD) {
        const float *y = f[0], *x = f[1], *gamma = f[2], *beta = f[3], *rm = f[4], *rv = f[5];
        Sampler s = sampler_init(e, samples, seed);
        while (sampler_next(&s, &idx)) {
            const size_t ch = idx / SP % C;
            const double a = (double)gamma[ch] / sqrt((double)rv[ch] + eps);
            check_one(ck, y[idx], a * ((double)x[idx] - rm[ch]) + beta[ch],
                      fabs(a) * (fabs(x[idx]) + fabs(rm[ch])) + fabs(beta[ch]));
        }
    } else if (phase == PHASE_BWD_WEIGHTS) {
        const float *dy = f[2], *x = f[3], *mean = f[4], *invstd = f[5];
        Sampler s = sampler_init(C, samples, seed);
        while (sampler_next(&s, &idx)) {
            double dg = b->accumulate ? b0[0][idx] : 0.0, dgm = fabs(dg);
            double db = b->accumulate ? b0[1][idx] : 0.0, dbm = fabs(db);
            for (size_t n = 0; n < (size_t)b->n; n++)
                for (size_t i = 0; i < SP; i++) {
                    const size_t o = (n * C + idx) * SP + i;
                    const double t = (double)dy[o] * ((double)x[o] - mean[idx]) * invstd[idx];
                    dg += t;
                    dgm += fabs((double)dy[o] * invstd[idx]) * (fabs(x[o]) + fabs(mean[idx]));
                    db += dy[o];
                    dbm += fabs(dy[o]);
                }
            check_one(ck, f[0][idx], dg, dgm);
            check_one(ck, f[1][idx], db, dbm);
        }
    } else {
        const float *dx = f[0], *dy = f[1], *x = f[2], *gamma = f[3], *mean = f[4];
        const float *invstd = f[5], *dgamma = f[6], *dbeta = f[7];
        Sampler s = sampler_init(e, samples, seed);
        while (sampler_next(&s, &idx)) {
            const size_t ch = idx / SP % C;
            const double A = (double)gamma[ch] * invstd[ch] / m;
            const double xhat = ((double)x[idx] - mean[ch]) * invstd[ch];
            const double xhm = (fabs(x[idx]) + fabs(mean[ch])) * invstd[ch];
            const double prior = b->accumulate ? b0[0][idx] : 0.0;
            const double ref = prior + A * (m * dy[idx] - dbeta[ch] - xhat * dgamma[ch]);
            const double mag = fabs(prior) + fabs(A) * (m * fabs(dy[idx]) + fabs(dbeta[ch]) +
                                                        xhm * fabs(dgamma[ch]));
            check_one(ck, dx[idx], ref, mag);
        }
    }
}

void spot_check_lrn(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                    int samples, uint64_t seed)
{
    const OpPhase phase = op->phase;
    const LrnDesc *l = &op->u.lrn;
    float *const *f = (float *const *)bufs;
    const size_t C = (size_t)l->c, SP = (size_t)l->spatial;
    const int r = l->size / 2;
    const double coef = (double)l->alpha / l->size, beta = l->beta;
    Sampler s = sampler_init((size_t)l->n * C * SP, samples, seed);
    size_t idx;
    while (sampler_next(&s, &idx)) {
        const size_t i = idx % SP, c = idx / SP % C, n = idx / (SP * C);
        const long lo = (long)c - r < 0 ? 0 : (long)c - r;
        const long hi = (long)c + r >= (long)C ? (long)C - 1 : (long)c + r;
        if (phase == PHASE_FWD) {
            const float *y = f[0], *scale = f[1], *x = f[2];
            double sum = 0.0;
            for (long q = lo; q <= hi; q++) {
                const double v = x[(n * C + (size_t)q) * SP + i];
                sum += v * v;
            }
            const double sc = l->k + coef * sum, p = pow(sc, -beta);
            check_one(ck, scale[idx], sc, sc);
            /* pow through log and exp: the exponent's error scales with |beta log sc| */
            check_one(ck, y[idx], x[idx] * p, fabs(x[idx] * p) * (1.0 + fabs(beta * log(sc))));
        } else {
            const float *dx = f[0], *dy = f[1], *x = f[2], *y = f[3], *scale = f[4];
            double sum = 0.0, summ = 0.0;
            for (long q = lo; q <= hi; q++) {
                const size_t o = (n * C + (size_t)q) * SP + i;
                const double t = (double)dy[o] * y[o] / scale[o];
                sum += t;
                summ += fabs(t);
            }
            const double p = pow((double)scale[idx], -beta), k2 = 2.0 * coef * beta;
            const double prior = l->accumulate ? b0[0][idx] : 0.0;
            const double ref = prior + dy[idx] * p - k2 * x[idx] * sum;
            const double mag = fabs(prior) +
                               fabs(dy[idx] * p) * (1.0 + fabs(beta * log(scale[idx]))) +
                               fabs(k2 * x[idx]) * summ;
            check_one(ck, dx[idx], ref, mag);
        }
    }
}

/* The mask is recomputed from (seed, step, i) exactly and must be 0 or 1/(1-rate). */
void spot_check_dropout(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                        int samples, uint64_t seed)
{
    const OpPhase phase = op->phase;
    const DropoutDesc *d = &op->u.dropout;
    Sampler s = sampler_init(d->count, samples, seed);
    size_t idx;
    if (phase == PHASE_FWD) {
        const float *y = bufs[0], *mask = bufs[1], *x = bufs[2];
        const int32_t *step = bufs[3];
        const uint64_t key = dropout_key(d->seed, (uint32_t)step[0]);
        const uint32_t threshold = dropout_threshold(d->rate);
        const double scale = dropout_scale(d->rate);
        while (sampler_next(&s, &idx)) {
            const bool keep = dropout_bits(key, (uint32_t)idx, (uint32_t)(idx >> 32)) >= threshold;
            const double mref = keep ? scale : 0.0;
            check_one(ck, mask[idx], mref, mref);
            check_one(ck, y[idx], (double)x[idx] * mref, fabs((double)x[idx] * mref));
        }
    } else {
        const float *dx = bufs[0], *dy = bufs[1], *mask = bufs[2];
        while (sampler_next(&s, &idx)) {
            const double ref = (double)dy[idx] * mask[idx];
            check_one(ck, dx[idx], ref, fabs(ref));
        }
    }
}

void spot_check_channel(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                        int samples, uint64_t seed)
{
    const OpPhase phase = op->phase;
    const ChannelDesc *c = &op->u.chan;
    float *const *f = (float *const *)bufs;
    const size_t SP = (size_t)c->spatial, CD = (size_t)c->c_dst, CS = (size_t)c->c_src;
    size_t idx;
    if (phase == PHASE_FWD) {
        /* every sampled y element: the slice holds x, the rest what it held before */
        Sampler s = sampler_init((size_t)c->n * CD * SP, samples, seed);
        while (sampler_next(&s, &idx)) {
            const size_t i = idx % SP, ch = idx / SP % CD, n = idx / (SP * CD);
            double ref = b0[0][idx];
            if (ch >= (size_t)c->offset && ch < (size_t)c->offset + CS)
                ref = f[1][(n * CS + ch - (size_t)c->offset) * SP + i];
            check_one(ck, f[0][idx], ref, fabs(ref));
        }
    } else {
        Sampler s = sampler_init((size_t)c->n * CS * SP, samples, seed);
        while (sampler_next(&s, &idx)) {
            const size_t i = idx % SP, ch = idx / SP % CS, n = idx / (SP * CS);
            const double g = f[1][(n * CD + ch + (size_t)c->offset) * SP + i];
            const double prior = c->accumulate ? b0[0][idx] : 0.0;
            check_one(ck, f[0][idx], prior + g, fabs(prior) + fabs(g));
        }
    }
}

void spot_check_axpby(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                      int samples, uint64_t seed)
{
    const AxpbyDesc *a = &op->u.axpby;
    float *const *f = (float *const *)bufs;
    Sampler s = sampler_init(a->count, samples, seed);
    size_t idx;
    while (sampler_next(&s, &idx)) {
        const double ta = (double)a->alpha * f[1][idx], tb = (double)a->beta * f[2][idx];
        check_one(ck, f[0][idx], ta + tb, fabs(ta) + fabs(tb));
    }
}

void spot_check_embedding(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                          int samples, uint64_t seed)
{
    const OpPhase phase = op->phase;
    const EmbedDesc *e = &op->u.embed;
    const size_t D = (size_t)e->dim;
    size_t idx;
    const bool pos = e->repeat > 0; /* ids i / repeat, no buffer */
    if (phase == PHASE_FWD) {
        const float *y = bufs[0], *W = bufs[pos ? 1 : 2];
        const int32_t *ids = pos ? NULL : bufs[1];
        Sampler s = sampler_init((size_t)e->n * D, samples, seed);
        while (sampler_next(&s, &idx)) {
            const int32_t id = pos ? (int32_t)(idx / D / (size_t)e->repeat) : ids[idx / D];
            OPS_ASSERT(id >= 0 && id < e->vocab);
            const double ref = W[(size_t)id * D + idx % D];
            check_one(ck, y[idx], ref, fabs(ref));
        }
    } else {
        const float *dW = bufs[0], *dy = bufs[1];
        const int32_t *ids = pos ? NULL : bufs[2];
        Sampler s = sampler_init((size_t)e->vocab * D, samples, seed);
        while (sampler_next(&s, &idx)) {
            const size_t v = idx / D, j = idx % D;
            double ref = e->accumulate ? b0[0][idx] : 0.0, mag = fabs(ref);
            for (size_t i = 0; i < (size_t)e->n; i++)
                if ((pos ? i / (size_t)e->repeat : (size_t)ids[i]) == v) {
                    ref += dy[i * D + j];
                    mag += fabs(dy[i * D + j]);
                }
            check_one(ck, dW[idx], ref, mag);
        }
    }
}

void spot_check_kl(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                   int samples, uint64_t seed)
{
    const OpPhase phase = op->phase;
    const KlDesc *k = &op->u.kl;
    float *const *f = (float *const *)bufs;
    const size_t N = (size_t)k->n, U = (size_t)k->units;
    const double rho = k->rho, beta = k->beta;
    size_t idx;
    if (phase == PHASE_FWD) {
        const float *a = f[2];
        double pen = 0.0, penm = 0.0;
        for (size_t j = 0; j < U; j++) {
            double s = 0.0;
            for (size_t i = 0; i < N; i++)
                s += a[i * U + j];
            const double rh = s / (double)N;
            const double t1 = rho * log(rho / rh), t2 = (1.0 - rho) * log((1.0 - rho) / (1.0 - rh));
            pen += t1 + t2;
            /* log's argument carries the mean's rounding: d t/d rh ~ rho/rh, (1-rho)/(1-rh) */
            penm += fabs(t1) + fabs(t2) + rho + (1.0 - rho) * rh / (1.0 - rh);
        }
        const double l0 = b0[0][0];
        check_one(ck, f[0][0], l0 + beta * pen, fabs(l0) + beta * penm);
        Sampler s = sampler_init(U, samples, seed);
        while (sampler_next(&s, &idx)) {
            double sum = 0.0, mag = 0.0;
            for (size_t i = 0; i < N; i++) {
                sum += a[i * U + idx];
                mag += fabs(a[i * U + idx]);
            }
            check_one(ck, f[1][idx], sum / (double)N, mag / (double)N);
        }
    } else {
        const float *rho_hat = f[1];
        Sampler s = sampler_init(N * U, samples, seed);
        while (sampler_next(&s, &idx)) {
            const double rh = rho_hat[idx % U], d0 = b0[0][idx];
            const double t1 = -rho / rh, t2 = (1.0 - rho) / (1.0 - rh);
            const double fct = beta / (double)N;
            check_one(ck, f[0][idx], d0 + fct * (t1 + t2), fabs(d0) + fct * (fabs(t1) + fabs(t2)));
        }
    }
}

void spot_check_shrink_norm1(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                             int samples, uint64_t seed)
{
    const OpDesc *d = op;
    float *const *f = (float *const *)bufs;
    const size_t n = d->u.mem.count;
    if (d->kind == OP_NORM1 || d->kind == OP_SUMSQ) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += d->kind == OP_NORM1 ? fabs(f[1][i]) : (double)f[1][i] * f[1][i];
        check_one(ck, f[0][0], s, s);
        return;
    }
    Sampler s = sampler_init(n, samples, seed);
    size_t idx;
    const double t = d->u.mem.scalar;
    while (sampler_next(&s, &idx)) {
        const double x = f[1][idx], m = fabs(x) - t;
        const double ref = m > 0.0 ? copysign(m, x) : 0.0;
        check_one(ck, f[0][idx], ref, fabs(x) + t);
    }
}

void spot_check_mem(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                    int samples, uint64_t seed)
{
    const OpDesc *d = op;
    float *const *f = (float *const *)bufs;
    Sampler s = sampler_init(d->u.mem.count, samples, seed);
    size_t idx;
    const double q = d->u.mem.scalar;
    while (sampler_next(&s, &idx)) {
        if (d->kind == OP_ZERO) {
            check_one(ck, f[0][idx], 0.0, 0.0);
        } else if (d->kind == OP_COPY) {
            check_one(ck, f[0][idx], f[1][idx], fabs(f[1][idx]));
        } else {
            const double a = f[0][idx], b = f[1][idx], c = f[2][idx];
            switch (d->u.mem.kind) {
            case STREAM_COPY: check_one(ck, c, a, fabs(a)); break;
            case STREAM_SCALE: check_one(ck, b, q * c, fabs(q * c)); break;
            case STREAM_ADD: check_one(ck, c, a + b, fabs(a) + fabs(b)); break;
            default: check_one(ck, a, b + q * c, fabs(b) + fabs(q * c)); break;
            }
        }
    }
}

void spot_check_gru(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                    int samples, uint64_t seed)
{
    const OpPhase phase = op->phase;
    const GruCellDesc *g = &op->u.gru;
    float *const *f = (float *const *)bufs;
    const size_t H = (size_t)g->hidden;
    const bool relu = g->act == ACT_RELU;
    Sampler s = sampler_init((size_t)g->batch * H, samples, seed);
    size_t idx;
    while (sampler_next(&s, &idx)) {
        const size_t row = idx / H, u = idx % H, a4 = row * 4 * H + u, p3 = row * 3 * H + u;
        if (phase == PHASE_FWD) {
            const float *h_t = f[0], *act = f[1], *pre = f[2], *hp = f[3], *b = f[4];
            const double zr = (double)pre[p3] + b[u], zz = (double)pre[p3 + H] + b[u + H];
            const double mr = fabs(pre[p3]) + fabs(b[u]), mz = fabs(pre[p3 + H]) + fabs(b[u + H]);
            const double r = sigmoid_d(zr), z = sigmoid_d(zz);
            const double rm = r + mr * r * (1.0 - r), zm = z + mz * z * (1.0 - z);
            const double hn = (double)pre[p3 + 2 * H] + b[u + 2 * H];
            const double hnm = fabs(pre[p3 + 2 * H]) + fabs(b[u + 2 * H]);
            const double pn = r * hn, pnm = rm * hnm;
            const double n = relu ? (pn > 0.0 ? pn : 0.0) : tanh(pn);
            const double nm = relu ? pnm : fabs(n) + pnm * (1.0 - n * n);
            check_one(ck, act[a4], r, rm);
            check_one(ck, act[a4 + H], z, zm);
            /* ReLU's kink: a pre-activation within rounding of 0 may land on either side */
            if (!relu || fabs(pn) > 1e-5 * pnm)
                check_one(ck, act[a4 + 2 * H], n, nm);
            check_one(ck, act[a4 + 3 * H], hn, hnm);
            check_one(ck, h_t[idx], n + z * (hp[idx] - n), nm + zm * (fabs(hp[idx]) + nm));
        } else {
            const float *dpre = f[0], *dhp = f[1], *dh_t = f[2], *act = f[3], *hp = f[4];
            const double r = act[a4], z = act[a4 + H], n = act[a4 + 2 * H], hn = act[a4 + 3 * H];
            const double dh = dh_t[idx];
            const double dn = dh * (1.0 - z), dnm = fabs(dh) * (1.0 + z);
            const double dpn = relu ? (n > 0.0 ? dn : 0.0) : dn * (1.0 - n * n);
            const double dpnm = relu ? dnm : dnm * (1.0 + n * n);
            check_one(ck, dpre[p3], dpn * hn * r * (1.0 - r), dpnm * fabs(hn) * r * (1.0 + r));
            check_one(ck, dpre[p3 + H], dh * (hp[idx] - n) * z * (1.0 - z),
                      fabs(dh) * (fabs(hp[idx]) + fabs(n)) * z * (1.0 + z));
            check_one(ck, dpre[p3 + 2 * H], dpn * r, dpnm * r);
            check_one(ck, dhp[idx], dh * z, fabs(dh) * z);
        }
    }
}

/* Sampled elements of C recomputed from the CSR arrays, whose structure is checked too
 * (monotone row pointers, columns in range): a corrupt pattern must fail, not crash. */
void spot_check_spmm(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                     int samples, uint64_t seed)
{
    const SpmmDesc *d = &op->u.spmm;
    const float *c = bufs[0], *values = bufs[1], *b = bufs[4];
    const int32_t *col = bufs[2], *row_ptr = bufs[3];
    const size_t n = (size_t)d->n, nnz = (size_t)d->m * (size_t)d->nnz_per_row;
    if (row_ptr[0] != 0 || (size_t)row_ptr[d->m] != nnz) {
        check_one(ck, NAN, 0.0, 0.0);
        return;
    }
    Sampler s = sampler_init((size_t)d->m * n, samples, seed);
    size_t idx;
    while (sampler_next(&s, &idx)) {
        const size_t i = idx / n, j = idx % n;
        if (row_ptr[i] > row_ptr[i + 1] || (size_t)row_ptr[i + 1] > nnz) {
            check_one(ck, NAN, 0.0, 0.0);
            return;
        }
        double ref = 0.0, mag = 0.0;
        for (int32_t p = row_ptr[i]; p < row_ptr[i + 1]; p++) {
            if (col[p] < 0 || col[p] >= d->k) {
                check_one(ck, NAN, 0.0, 0.0);
                return;
            }
            const double t = (double)values[p] * b[(size_t)col[p] * n + j];
            ref += t;
            mag += fabs(t);
        }
        check_one(ck, c[idx], ref, mag);
    }
}

/* Every thread's accumulators end at the chains' fixed point, 1. */
void spot_check_peak(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                     int samples, uint64_t seed)
{
    const PeakDesc *d = &op->u.peak;
    float *const *f = (float *const *)bufs;
    for (int t = 0; t < d->threads; t++)
        check_one(ck, f[0][t], 1.0, 1.0);
}

/* READ's family: out[t] is the sum of the slice thread t read (SHARED: its own, as it
 * left it); TRIAD: sampled elements recomputed. */
void spot_check_membw(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                      int samples, uint64_t seed)
{
    const MembwDesc *d = &op->u.membw;
    float *const *f = (float *const *)bufs;
    if (d->kind != MEMBW_TRIAD) {
        const size_t n = d->bytes_per_thread / sizeof(float);
        for (int t = 0; t < d->threads; t++) {
            const size_t slice = (size_t)membw_slice(d, t);
            double sum = 0.0, mag = 0.0;
            for (size_t i = 0; i < n; i++) {
                sum += f[1][slice * n + i];
                mag += fabs(f[1][slice * n + i]);
            }
            check_one(ck, f[0][t], sum * (double)d->passes, mag * (double)d->passes);
        }
        return;
    }
    const size_t total = (size_t)d->threads * d->bytes_per_thread / (3 * sizeof(float));
    Sampler s = sampler_init(total, samples, seed);
    size_t idx;
    while (sampler_next(&s, &idx))
        check_one(ck, f[0][idx], f[1][idx] + 3.0 * f[2][idx], fabs(f[1][idx]) + 3.0 * fabs(f[2][idx]));
}

/* ---- the transformer's kinds ---- */

void spot_check_bmm(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                    int samples, uint64_t seed)
{
    const BmmDesc *g = &op->u.bmm;
    float *const *f = (float *const *)bufs;
    const size_t M = (size_t)g->m, N = (size_t)g->n, K = (size_t)g->k;
    const BmmLayout l = bmm_layout(g);
    Sampler s = sampler_init((size_t)g->batch * M * N, samples, seed);
    size_t idx;
    while (sampler_next(&s, &idx)) {
        const size_t bi = idx / (M * N), i = idx / N % M, j = idx % N;
        const float *A = f[1] + bi * l.sa, *B = f[2] + bi * l.sb;
        double acc = 0.0, mag = 0.0;
        for (size_t p = 0; p < K; p++) {
            const double a = g->trans_a ? A[p * l.lda + i] : A[i * l.lda + p];
            const double b = g->trans_b ? B[j * l.ldb + p] : B[p * l.ldb + j];
            acc += a * b;
            mag += fabs(a * b);
        }
        const size_t at = bi * l.sc + i * l.ldc + j; /* C's element in its buffer */
        double ref = (double)g->alpha * acc;
        mag *= fabs((double)g->alpha);
        if (g->beta != 0.0f) {
            ref += (double)g->beta * b0[0][at];
            mag += fabs((double)g->beta * b0[0][at]);
        }
        check_one(ck, f[0][at], ref, mag);
    }
}

/* Row statistics in double: mean, biased variance and the mean of squares. */
static void ln_ref_stats(const float *x, size_t h, double *mean, double *var, double *meansq)
{
    double s1 = 0.0, s2 = 0.0;
    for (size_t j = 0; j < h; j++) {
        s1 += x[j];
        s2 += (double)x[j] * x[j];
    }
    *mean = s1 / (double)h;
    *meansq = s2 / (double)h;
    double c = 0.0;
    for (size_t j = 0; j < h; j++)
        c += (x[j] - *mean) * (x[j] - *mean);
    *var = c / (double)h;
}

void spot_check_layernorm(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                          int samples, uint64_t seed)
{
    const LnDesc *l = &op->u.ln;
    float *const *f = (float *const *)bufs;
    const size_t N = (size_t)l->n, H = (size_t)l->h;
    const double eps = l->eps;
    size_t idx;
    if (op->phase == PHASE_FWD) {
        const float *y = f[0], *mean = f[1], *rstd = f[2], *x = f[3], *gamma = f[4], *beta = f[5];
        Sampler s = sampler_init(N, samples, seed);
        while (sampler_next(&s, &idx)) {
            double mu, var, msq;
            ln_ref_stats(x + idx * H, H, &mu, &var, &msq);
            const double r = 1.0 / sqrt(var + eps);
            check_one(ck, mean[idx], mu, sqrt(msq)); /* sum|x|/h <= sqrt(mean of squares) */
            check_one(ck, rstd[idx], r, 0.5 * r * (msq + mu * mu + eps) / (var + eps));
        }
        Sampler sy = sampler_init(N * H, samples, seed + 1);
        while (sampler_next(&sy, &idx)) {
            const size_t row = idx / H, j = idx % H;
            double mu, var, msq;
            ln_ref_stats(x + row * H, H, &mu, &var, &msq);
            const double a = (double)gamma[j] / sqrt(var + eps);
            check_one(ck, y[idx], a * ((double)x[idx] - mu) + beta[j],
                      fabs(a) * (fabs(x[idx]) + fabs(mu) + sqrt(msq)) + fabs(beta[j]));
        }
    } else if (op->phase == PHASE_BWD_WEIGHTS) {
        const float *dy = f[2], *x = f[3], *mean = f[4], *rstd = f[5];
        Sampler s = sampler_init(H, samples, seed);
        while (sampler_next(&s, &idx)) {
            double dg = l->accumulate ? b0[0][idx] : 0.0, dgm = fabs(dg);
            double db = l->accumulate ? b0[1][idx] : 0.0, dbm = fabs(db);
            for (size_t r = 0; r < N; r++) {
                const size_t o = r * H + idx;
                dg += (double)dy[o] * ((double)x[o] - mean[r]) * rstd[r];
                dgm += fabs((double)dy[o] * rstd[r]) * (fabs(x[o]) + fabs(mean[r]));
                db += dy[o];
                dbm += fabs(dy[o]);
            }
            check_one(ck, f[0][idx], dg, dgm);
            check_one(ck, f[1][idx], db, dbm);
        }
    } else {
        const float *dx = f[0], *dy = f[1], *x = f[2], *gamma = f[3], *mean = f[4], *rstd = f[5];
        Sampler s = sampler_init(N * H, samples, seed);
        while (sampler_next(&s, &idx)) {
            const size_t row = idx / H, j = idx % H;
            const double m = mean[row], r = rstd[row];
            double sg = 0.0, sgm = 0.0, sgx = 0.0, sgxm = 0.0;
            for (size_t q = 0; q < H; q++) {
                const double g = (double)dy[row * H + q] * gamma[q];
                const double xh = ((double)x[row * H + q] - m) * r;
                sg += g;
                sgm += fabs(g);
                sgx += g * xh;
                sgxm += fabs(g) * (fabs(x[row * H + q]) + fabs(m)) * r;
            }
            const double g = (double)dy[idx] * gamma[j], xh = ((double)x[idx] - m) * r;
            const double xhm = (fabs(x[idx]) + fabs(m)) * r;
            const double prior = l->accumulate ? b0[0][idx] : 0.0;
            const double ref = prior + r * (g - sg / (double)H - xh * sgx / (double)H);
            const double mag = fabs(prior) + r * (fabs(g) + sgm / (double)H + xhm * sgxm / (double)H);
            check_one(ck, dx[idx], ref, mag);
        }
    }
}

void spot_check_softmax(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                        int samples, uint64_t seed)
{
    const SoftmaxDesc *m = &op->u.softmax;
    float *const *f = (float *const *)bufs;
    const size_t H = (size_t)m->h;
    Sampler s = sampler_init((size_t)m->n * H, samples, seed);
    size_t idx;
    /* a padding mask's keys: sample b's key j is padding where its id is the pad id */
    const int32_t *ids = op->phase == PHASE_FWD && m->samples > 0 ? bufs[2] : NULL;
    const size_t S = ids ? (size_t)m->samples : 1, per = (size_t)m->n / S;
#define KEY_OF(row, j) (!ids || ids[(j) * S + (row) / per] != m->pad_id)
    while (sampler_next(&s, &idx)) {
        const size_t row = idx / H, col = idx % H;
        const size_t V = m->causal ? row % H + 1 : H; /* the row's visible columns */
        if (col >= V || !KEY_OF(row, col)) { /* masked: no weight, no gradient */
            const double prior = op->phase != PHASE_FWD && m->accumulate ? b0[0][idx] : 0.0;
            check_one(ck, f[0][idx], prior, fabs(prior));
            continue;
        }
        if (op->phase == PHASE_FWD) {
            const float *x = f[1] + row * H;
            double mx = -INFINITY, sum = 0.0;
            for (size_t j = 0; j < V; j++)
                if (KEY_OF(row, j))
                    mx = x[j] > mx ? x[j] : mx;
            for (size_t j = 0; j < V; j++)
                if (KEY_OF(row, j))
                    sum += exp(x[j] - mx);
            const double ref = exp(f[1][idx] - mx) / sum;
            /* exp's argument carries the rounding of x - max: relative error ~ |x - max| ulp */
            check_one(ck, f[0][idx], ref, ref * (1.0 + fabs(f[1][idx] - mx)));
        } else {
            const float *dy = f[1] + row * H, *y = f[2] + row * H;
            double dot = 0.0, dotm = 0.0;
            for (size_t j = 0; j < V; j++) {
                dot += (double)dy[j] * y[j];
                dotm += fabs((double)dy[j] * y[j]);
            }
            const double prior = m->accumulate ? b0[0][idx] : 0.0;
            const double yy = f[2][idx], g = f[1][idx];
            check_one(ck, f[0][idx], prior + yy * (g - dot), fabs(prior) + fabs(yy) * (fabs(g) + dotm));
        }
    }
#undef KEY_OF
}

/* a op b in double, with the magnitude of its rounding (pow: exp(b ln a), whose error
 * scales with |b ln a|) */
static double binary_ref(BinaryKind op, double a, double b, double *mag)
{
    switch (op) {
    case BIN_ADD: *mag = fabs(a) + fabs(b); return a + b;
    case BIN_MUL: *mag = fabs(a * b); return a * b;
    case BIN_DIV: *mag = fabs(a / b); return a / b;
    default: {
        const double y = pow(a, b);
        *mag = fabs(y) * (1.0 + fabs(b * log(a)));
        return y;
    }
    }
}

/* Both gradients of a op b from dy, in double, with their magnitudes. */
static void binary_grad_ref(BinaryKind op, double dy, double a, double b, double *da, double *db,
                            double *dam, double *dbm)
{
    switch (op) {
    case BIN_ADD:
        *da = *db = dy;
        *dam = *dbm = fabs(dy);
        break;
    case BIN_MUL:
        *da = dy * b, *db = dy * a;
        *dam = fabs(*da), *dbm = fabs(*db);
        break;
    case BIN_DIV:
        *da = dy / b, *db = -dy * a / (b * b);
        *dam = fabs(*da), *dbm = fabs(*db);
        break;
    default: {
        const double y = pow(a, b), l = log(a), e = 1.0 + fabs(b * l);
        *da = dy * b * y / a, *db = dy * y * l;
        /* ln a near 0 (a near 1) has an absolute, not a relative, error: |dy y| */
        *dam = fabs(*da) * e, *dbm = fabs(*db) * e + fabs(dy * y);
        break;
    }
    }
}

void spot_check_binary(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                       int samples, uint64_t seed)
{
    const BinaryDesc *d = &op->u.binary;
    float *const *f = (float *const *)bufs;
    Sampler s = sampler_init(d->count, samples, seed);
    size_t idx;
    while (sampler_next(&s, &idx)) {
        if (op->phase == PHASE_FWD) {
            double mag;
            const double ref = binary_ref(d->op, f[1][idx], f[2][idx], &mag);
            check_one(ck, f[0][idx], ref, mag);
        } else {
            double da, db, dam, dbm;
            binary_grad_ref(d->op, f[2][idx], f[3][idx], f[4][idx], &da, &db, &dam, &dbm);
            const double pa = d->accumulate ? b0[0][idx] : 0.0, pb = d->accumulate ? b0[1][idx] : 0.0;
            check_one(ck, f[0][idx], pa + da, fabs(pa) + dam);
            check_one(ck, f[1][idx], pb + db, fabs(pb) + dbm);
        }
    }
}

void spot_check_scalar(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[],
                       int samples, uint64_t seed)
{
    const ScalarDesc *d = &op->u.scalar;
    float *const *f = (float *const *)bufs;
    const double sc = d->scalar;
    Sampler s = sampler_init(d->count, samples, seed);
    size_t idx;
    while (sampler_next(&s, &idx)) {
        if (op->phase == PHASE_FWD) {
            double mag;
            const double ref = binary_ref(d->op, f[1][idx], sc, &mag);
            check_one(ck, f[0][idx], ref, mag);
        } else {
            const double dy = f[1][idx], a = f[2][idx];
            double g, mag;
            switch (d->op) {
            case BIN_ADD: g = dy; mag = fabs(g); break;
            case BIN_MUL: g = dy * sc; mag = fabs(g); break;
            case BIN_DIV: g = dy / sc; mag = fabs(g); break;
            default:
                g = dy * sc * pow(a, sc - 1.0);
                mag = fabs(g) * (1.0 + fabs((sc - 1.0) * log(a)));
                break;
            }
            const double prior = d->accumulate ? b0[0][idx] : 0.0;
            check_one(ck, f[0][idx], prior + g, fabs(prior) + mag);
        }
    }
}

bool op_spot_check(const OpDesc *d, void *const bufs[], void *const before[], int samples,
                   uint64_t seed, double *max_err)
{
    OPS_ASSERT(d && bufs && samples >= 0);
    OpBufInfo info[OP_MAX_BUFS];
    const int nb = op_buffer_info(d, info); /* also asserts d is valid */
    for (int i = 0; i < nb; i++) {
        OPS_ASSERT(bufs[i]);
        if (info[i].role == BUF_INOUT)
            OPS_ASSERT(before && before[i]); /* the state before the run is an input */
        /* an output written over an input leaves nothing to recompute from */
        for (int j = 0; j < nb; j++)
            if (j != i && info[i].role != BUF_IN && info[j].role == BUF_IN)
                OPS_ASSERT(bufs[i] != bufs[j]);
    }
    /* the checks see OP_MAX_BUFS entries, NULL past the kind's own: the caller's bufs[]
     * may hold just its nb (a check may name a buffer another phase has, unread) */
    void *all[OP_MAX_BUFS] = {0};
    float *b0[OP_MAX_BUFS] = {0};
    for (int i = 0; i < nb; i++) {
        all[i] = bufs[i];
        b0[i] = before ? before[i] : NULL;
    }
    SpotCheck ck = {.worst = 0.0, .ok = true};
    op_kind_info(d->kind)->spot(&ck, d, all, b0, samples, seed);
    if (max_err)
        *max_err = ck.worst;
    return ck.ok;
}

void spot_check_transpose(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[], int samples,
                          uint64_t seed)
{
    (void)b0;
    const TransposeDesc *t = &op->u.transpose;
    float *const *f = (float *const *)bufs;
    Sampler s = sampler_init((size_t)t->rows * (size_t)t->cols, samples, seed);
    size_t idx;
    while (sampler_next(&s, &idx)) { /* y[j][i] = x[i][j] */
        const size_t j = idx / (size_t)t->rows, i = idx % (size_t)t->rows;
        const double ref = f[1][i * (size_t)t->cols + j];
        check_one(ck, f[0][idx], ref, fabs(ref));
    }
}

/* A group of one: y is x. In a larger group the other terms of the sum live on the other
 * ranks, so only the run as a whole can check it: test_mpi.sh trains tensor-parallel jobs
 * against one process's losses. */
void spot_check_allreduce(SpotCheck *ck, const OpDesc *op, void *const bufs[], float *const b0[], int samples,
                          uint64_t seed)
{
    const AllreduceDesc *a = &op->u.allreduce;
    if (a->ranks > 1)
        return;
    float *const *f = (float *const *)bufs;
    const float *x = bufs[0] == bufs[1] && b0[1] ? b0[1] : f[1];
    Sampler s = sampler_init(a->count, samples, seed);
    size_t idx;
    while (sampler_next(&s, &idx))
        check_one(ck, f[0][idx], x[idx], fabs(x[idx]));
}
