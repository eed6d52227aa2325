/* ops/check.c — op_spot_check: validates one executed op by recomputing sampled output
 * elements directly from the inputs in double (the STREAM habit: results are validated
 * after timing, outside the timed region). Each reference comes with a magnitude, the sum
 * of the absolute values of the terms that make it up (propagated through the nonlinear
 * functions to first order), so the tolerance scales with what fp32 could have lost:
 *   |got - ref| <= CHECK_ATOL + CHECK_RTOL * magnitude.
 * rtol = 1e-4 is far above fp32 rounding (6e-8 per operation; a dot product of k terms
 * typically loses sqrt(k) of those) and far below what a wrong index, a missing term or a
 * wrong formula produces; atol = 1e-6 covers underflow and values that are zero.
 */
#include <math.h>
#include <string.h>

#include "ops/kernels.h"

#define CHECK_ATOL 1e-6
#define CHECK_RTOL 1e-4

typedef struct {
    double worst; /* largest |got - ref| / (atol + rtol * mag) seen */
    bool ok;
} Check;

static void check_one(Check *c, double got, double ref, double mag)
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

/* ---- per-kind checks; f[] are the buffers after the run, b0[] the copies before ---- */

static void check_gemm(Check *ck, const GemmDesc *g, float *const f[], float *const b0[],
                       int samples, uint64_t seed)
{
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
        check_one(ck, C[idx], ref, mag);
    }
}

static void check_conv(Check *ck, OpPhase phase, const ConvDesc *v, float *const f[],
                       float *const b0[], int samples, uint64_t seed)
{
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

static void check_pool(Check *ck, OpPhase phase, const PoolDesc *p, float *const f[],
                       float *const b0[], int samples, uint64_t seed)
{
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

static void check_bias(Check *ck, OpPhase phase, const BiasDesc *b, float *const f[],
                       float *const b0[], int samples, uint64_t seed)
{
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

static void check_act(Check *ck, OpPhase phase, const ActDesc *a, float *const f[],
                      int samples, uint64_t seed)
{
    Sampler s = sampler_init(a->count, samples, seed);
    size_t idx;
    while (sampler_next(&s, &idx)) {
        if (phase == PHASE_FWD) {
            const double x = f[1][idx];
            double ref, mag;
            switch (a->act) {
            case ACT_RELU: ref = x > 0 ? x : 0.0; mag = fabs(ref); break;
            case ACT_SIGMOID: ref = sigmoid_d(x); mag = ref + fabs(x) * ref * (1.0 - ref); break;
            default: ref = tanh(x); mag = fabs(ref) + fabs(x) * (1.0 - ref * ref); break;
            }
            check_one(ck, f[0][idx], ref, mag);
        } else {
            const double dy = f[1][idx], y = f[2][idx];
            double ref, mag;
            switch (a->act) {
            case ACT_RELU: ref = y > 0 ? dy : 0.0; mag = fabs(ref); break;
            case ACT_SIGMOID: ref = dy * y * (1.0 - y); mag = fabs(dy * y) * (1.0 + fabs(y)); break;
            default: ref = dy * (1.0 - y * y); mag = fabs(dy) * (1.0 + y * y); break;
            }
            check_one(ck, f[0][idx], ref, mag);
        }
    }
}

static void check_xent(Check *ck, OpPhase phase, const XentDesc *x, void *const bufs[],
                       int samples, uint64_t seed)
{
    const size_t n = (size_t)x->n, K = (size_t)x->classes;
    size_t idx;
    if (phase == PHASE_FWD) {
        const float *loss = bufs[0], *probs = bufs[1], *logits = bufs[2];
        const int32_t *labels = bufs[3];
        double total = 0.0, mag = 0.0;
        for (size_t r = 0; r < n; r++) {
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
        }
        check_one(ck, loss[0], total / (double)n, mag / (double)n);
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
        const double f = (double)x->scale / (double)n;
        Sampler s = sampler_init(n * K, samples, seed);
        while (sampler_next(&s, &idx)) {
            const double one = (size_t)labels[idx / K] == idx % K ? 1.0 : 0.0;
            check_one(ck, dl[idx], f * (probs[idx] - one), fabs(f) * (probs[idx] + one));
        }
    }
}

static void check_sqerr(Check *ck, OpPhase phase, const SqErrDesc *q, float *const f[],
                        int samples, uint64_t seed)
{
    const size_t count = (size_t)q->n * (size_t)q->features;
    const double div = q->mean ? (double)count : 1.0;
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

static void check_lstm(Check *ck, OpPhase phase, const LstmCellDesc *l, float *const f[],
                       int samples, uint64_t seed)
{
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

static void check_update(Check *ck, OpKind kind, const UpdateDesc *u, float *const f[],
                         float *const b0[], int samples, uint64_t seed)
{
    Sampler s = sampler_init(u->count, samples, seed);
    size_t idx;
    const double lr = u->lr;
    while (sampler_next(&s, &idx)) {
        const double w0 = b0[0][idx];
        if (kind == OP_SGD) {
            const double g = f[1][idx];
            check_one(ck, f[0][idx], w0 - lr * g, fabs(w0) + fabs(lr * g));
        } else {
            const double a0 = b0[1][idx], g = f[2][idx];
            const double a = u->rho * a0 + (1.0 - u->rho) * g * g;
            const double am = fabs(u->rho * a0) + fabs((1.0 - u->rho) * g * g);
            const double step = lr * g / (sqrt(a) + u->eps);
            check_one(ck, f[1][idx], a, am);
            check_one(ck, f[0][idx], w0 - step, fabs(w0) + fabs(step));
        }
    }
}

static void check_mem(Check *ck, const OpDesc *d, float *const f[], int samples, uint64_t seed)
{
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
    float *f[OP_MAX_BUFS] = {0}, *b0[OP_MAX_BUFS] = {0};
    for (int i = 0; i < nb; i++) {
        f[i] = bufs[i];
        b0[i] = before ? before[i] : NULL;
    }
    Check ck = {.worst = 0.0, .ok = true};
    switch (d->kind) {
    case OP_GEMM: check_gemm(&ck, &d->u.gemm, f, b0, samples, seed); break;
    case OP_CONV2D: check_conv(&ck, d->phase, &d->u.conv, f, b0, samples, seed); break;
    case OP_POOL2D: check_pool(&ck, d->phase, &d->u.pool, f, b0, samples, seed); break;
    case OP_BIAS: check_bias(&ck, d->phase, &d->u.bias, f, b0, samples, seed); break;
    case OP_ACT: check_act(&ck, d->phase, &d->u.act, f, samples, seed); break;
    case OP_SOFTMAX_XENT: check_xent(&ck, d->phase, &d->u.xent, bufs, samples, seed); break;
    case OP_SQERR: check_sqerr(&ck, d->phase, &d->u.sqerr, f, samples, seed); break;
    case OP_LSTM_CELL: check_lstm(&ck, d->phase, &d->u.lstm, f, samples, seed); break;
    case OP_SGD:
    case OP_RMSPROP: check_update(&ck, d->kind, &d->u.update, f, b0, samples, seed); break;
    case OP_ZERO:
    case OP_COPY:
    case OP_STREAM: check_mem(&ck, d, f, samples, seed); break;
    default: OPS_ASSERT(!"unreachable op kind");
    }
    if (max_err)
        *max_err = ck.worst;
    return ck.ok;
}
