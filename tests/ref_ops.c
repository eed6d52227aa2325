/* tests/ref_ops.c — naive double-precision references for the op kernels (ref_ops.h).
 * Written from the formulas in ops/ops.h, deliberately sharing no code with ops/. */
#include "tests/ref_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ref_gemm(double *c, const float *a, const float *b, const float *c0, const GemmDesc *d)
{
    const int m = d->m, n = d->n, k = d->k;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int p = 0; p < k; p++) {
                const double av = d->trans_a ? a[p * m + i] : a[i * k + p];
                const double bv = d->trans_b ? b[j * k + p] : b[p * n + j];
                s += av * bv;
            }
            c[i * n + j] = d->alpha * s + (d->beta != 0.0f ? d->beta * (double)c0[i * n + j] : 0.0);
        }
}

void ref_gemm_bias(double *c, const float *a, const float *b, const float *c0, const float *bias,
                   const GemmDesc *d)
{
    ref_gemm(c, a, b, c0, d);
    for (int i = 0; i < d->m; i++)
        for (int j = 0; j < d->n; j++)
            c[i * d->n + j] += bias[j];
}

void ref_bmm(double *c, const float *a, const float *b, const float *c0, const BmmDesc *d)
{
    const GemmDesc g = {.m = d->m, .n = d->n, .k = d->k, .trans_a = d->trans_a,
                        .trans_b = d->trans_b, .alpha = d->alpha, .beta = d->beta};
    const size_t sa = (size_t)d->m * d->k, sb = (size_t)d->k * d->n, sc = (size_t)d->m * d->n;
    for (int i = 0; i < d->batch; i++)
        ref_gemm(c + i * sc, a + i * sa, b + i * sb, c0 ? c0 + i * sc : NULL, &g);
}

/* Index helpers in the NCHW / KCRS layouts. */
#define X4(t, n, c, h, w, C, H, W) (t)[(((size_t)(n) * (C) + (c)) * (H) + (h)) * (W) + (w)]

void ref_conv_forward(double *y, const float *x, const float *w, const ConvDesc *d)
{
    const int cg = d->c / d->groups, kg = d->k / d->groups;
    for (int n = 0; n < d->n; n++)
        for (int k = 0; k < d->k; k++)
            for (int oh = 0; oh < d->out_h; oh++)
                for (int ow = 0; ow < d->out_w; ow++) {
                    const int g = k / kg;
                    double s = 0.0;
                    for (int c = 0; c < cg; c++)
                        for (int i = 0; i < d->r; i++)
                            for (int j = 0; j < d->s; j++) {
                                const int ih = oh * d->stride_h - d->pad_top + i;
                                const int iw = ow * d->stride_w - d->pad_left + j;
                                if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w)
                                    continue;
                                s += (double)X4(x, n, g * cg + c, ih, iw, d->c, d->h, d->w) *
                                     X4(w, k, c, i, j, cg, d->r, d->s);
                            }
                    X4(y, n, k, oh, ow, d->k, d->out_h, d->out_w) = s;
                }
}

/* The adjoints below scatter: each (output, tap) pair adds its product where the forward
 * read it from, the definition of the transpose. */
void ref_conv_backward_data(double *dx, const float *dy, const float *w, const ConvDesc *d)
{
    const int cg = d->c / d->groups, kg = d->k / d->groups;
    memset(dx, 0, sizeof(double) * (size_t)d->n * d->c * d->h * d->w);
    for (int n = 0; n < d->n; n++)
        for (int k = 0; k < d->k; k++)
            for (int oh = 0; oh < d->out_h; oh++)
                for (int ow = 0; ow < d->out_w; ow++) {
                    const int g = k / kg;
                    const double gy = X4(dy, n, k, oh, ow, d->k, d->out_h, d->out_w);
                    for (int c = 0; c < cg; c++)
                        for (int i = 0; i < d->r; i++)
                            for (int j = 0; j < d->s; j++) {
                                const int ih = oh * d->stride_h - d->pad_top + i;
                                const int iw = ow * d->stride_w - d->pad_left + j;
                                if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w)
                                    continue;
                                X4(dx, n, g * cg + c, ih, iw, d->c, d->h, d->w) +=
                                    gy * X4(w, k, c, i, j, cg, d->r, d->s);
                            }
                }
}

void ref_conv_backward_weights(double *dw, const float *dy, const float *x, const ConvDesc *d)
{
    const int cg = d->c / d->groups, kg = d->k / d->groups;
    memset(dw, 0, sizeof(double) * (size_t)d->k * cg * d->r * d->s);
    for (int n = 0; n < d->n; n++)
        for (int k = 0; k < d->k; k++)
            for (int oh = 0; oh < d->out_h; oh++)
                for (int ow = 0; ow < d->out_w; ow++) {
                    const int g = k / kg;
                    const double gy = X4(dy, n, k, oh, ow, d->k, d->out_h, d->out_w);
                    for (int c = 0; c < cg; c++)
                        for (int i = 0; i < d->r; i++)
                            for (int j = 0; j < d->s; j++) {
                                const int ih = oh * d->stride_h - d->pad_top + i;
                                const int iw = ow * d->stride_w - d->pad_left + j;
                                if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w)
                                    continue;
                                X4(dw, k, c, i, j, cg, d->r, d->s) +=
                                    gy * X4(x, n, g * cg + c, ih, iw, d->c, d->h, d->w);
                            }
                }
}

/* Visits the in-image cells of the window of (oh, ow); returns the cell count. */
static int ref_pool_window(const PoolDesc *d, int oh, int ow, int *h0, int *h1, int *w0, int *w1)
{
    *h0 = oh * d->stride_h - d->pad_top;
    *w0 = ow * d->stride_w - d->pad_left;
    *h1 = *h0 + d->win_h;
    *w1 = *w0 + d->win_w;
    if (*h0 < 0) *h0 = 0;
    if (*w0 < 0) *w0 = 0;
    if (*h1 > d->h) *h1 = d->h;
    if (*w1 > d->w) *w1 = d->w;
    return (*h1 - *h0) * (*w1 - *w0);
}

void ref_pool_forward(double *y, const float *x, const PoolDesc *d)
{
    for (int p = 0; p < d->n * d->c; p++)
        for (int oh = 0; oh < d->out_h; oh++)
            for (int ow = 0; ow < d->out_w; ow++) {
                int h0, h1, w0, w1;
                const int cnt = ref_pool_window(d, oh, ow, &h0, &h1, &w0, &w1);
                double v = d->kind == POOL_MAX ? -INFINITY : 0.0;
                for (int i = h0; i < h1; i++)
                    for (int j = w0; j < w1; j++) {
                        const double t = X4(x, 0, p, i, j, 0, d->h, d->w);
                        v = d->kind == POOL_MAX ? fmax(v, t) : v + t;
                    }
                X4(y, 0, p, oh, ow, 0, d->out_h, d->out_w) = d->kind == POOL_MAX ? v : v / cnt;
            }
}

void ref_pool_backward_data(double *dx, const float *dy, const float *x, const PoolDesc *d)
{
    memset(dx, 0, sizeof(double) * (size_t)d->n * d->c * d->h * d->w);
    for (int p = 0; p < d->n * d->c; p++)
        for (int oh = 0; oh < d->out_h; oh++)
            for (int ow = 0; ow < d->out_w; ow++) {
                int h0, h1, w0, w1;
                const int cnt = ref_pool_window(d, oh, ow, &h0, &h1, &w0, &w1);
                const double g = X4(dy, 0, p, oh, ow, 0, d->out_h, d->out_w);
                if (d->kind == POOL_AVG) {
                    for (int i = h0; i < h1; i++)
                        for (int j = w0; j < w1; j++)
                            X4(dx, 0, p, i, j, 0, d->h, d->w) += g / cnt;
                } else {
                    int bi = h0, bj = w0;
                    for (int i = h0; i < h1; i++)
                        for (int j = w0; j < w1; j++)
                            if (X4(x, 0, p, i, j, 0, d->h, d->w) > X4(x, 0, p, bi, bj, 0, d->h, d->w))
                                bi = i, bj = j;
                    X4(dx, 0, p, bi, bj, 0, d->h, d->w) += g;
                }
            }
}

void ref_bias_forward(double *y, const float *y0, const float *b, const BiasDesc *d)
{
    for (int n = 0; n < d->n; n++)
        for (int c = 0; c < d->c; c++)
            for (int i = 0; i < d->spatial; i++) {
                const size_t at = ((size_t)n * d->c + c) * d->spatial + i;
                y[at] = (double)y0[at] + b[c];
            }
}

void ref_bias_backward_weights(double *db, const float *dy, const BiasDesc *d)
{
    for (int c = 0; c < d->c; c++) {
        double s = 0.0;
        for (int n = 0; n < d->n; n++)
            for (int i = 0; i < d->spatial; i++)
                s += dy[((size_t)n * d->c + c) * d->spatial + i];
        db[c] = s;
    }
}

void ref_act_forward(double *y, const float *x, ActKind act, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const double v = x[i];
        if (act == ACT_GELU)
            y[i] = v * 0.5 * (1.0 + erf(v / sqrt(2.0)));
        else
            y[i] = act == ACT_RELU ? (v > 0 ? v : 0) : act == ACT_SIGMOID ? 1 / (1 + exp(-v)) : tanh(v);
    }
}

void ref_act_backward_data(double *dx, const float *dy, const float *y, ActKind act,
                           size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const double v = y[i];
        double d;
        if (act == ACT_GELU) /* v is x: d/dx x Phi(x) = Phi(x) + x phi(x) */
            d = 0.5 * (1.0 + erf(v / sqrt(2.0))) + v * exp(-0.5 * v * v) / sqrt(2.0 * M_PI);
        else
            d = act == ACT_RELU ? (v > 0) : act == ACT_SIGMOID ? v * (1 - v) : 1 - v * v;
        dx[i] = dy[i] * d;
    }
}

double ref_softmax_xent_forward(double *probs, const float *logits, const int32_t *labels,
                                int n, int classes)
{
    double loss = 0.0;
    int counted = 0;
    for (int r = 0; r < n; r++) {
        const float *l = logits + (size_t)r * classes;
        double m = l[0], s = 0.0;
        for (int j = 0; j < classes; j++)
            m = fmax(m, l[j]);
        for (int j = 0; j < classes; j++)
            s += exp(l[j] - m);
        for (int j = 0; j < classes; j++)
            probs[(size_t)r * classes + j] = exp(l[j] - m) / s;
        if (labels[r] == XENT_IGNORE) /* PyTorch's ignore_index */
            continue;
        loss += -(l[labels[r]] - m - log(s));
        counted++;
    }
    return counted ? loss / counted : 0.0;
}

void ref_softmax_xent_backward_data(double *dlogits, const float *probs,
                                    const int32_t *labels, const XentDesc *d)
{
    int counted = 0;
    for (int r = 0; r < d->n; r++)
        counted += labels[r] != XENT_IGNORE;
    for (int r = 0; r < d->n; r++)
        for (int j = 0; j < d->classes; j++) {
            const size_t at = (size_t)r * d->classes + j;
            dlogits[at] = labels[r] == XENT_IGNORE ? 0.0
                                                   : d->scale * (probs[at] - (labels[r] == j ? 1.0 : 0.0)) / counted;
        }
}

double ref_sqerr_forward(const float *pred, const float *target, const SqErrDesc *d)
{
    const size_t count = (size_t)d->n * d->features;
    double s = 0.0;
    for (size_t i = 0; i < count; i++)
        s += ((double)pred[i] - target[i]) * ((double)pred[i] - target[i]);
    return d->weight * (d->mean ? s / count : s);
}

void ref_sqerr_backward_data(double *dpred, const float *pred, const float *target,
                             const SqErrDesc *d)
{
    const size_t count = (size_t)d->n * d->features;
    for (size_t i = 0; i < count; i++)
        dpred[i] = d->scale * d->weight * 2.0 * ((double)pred[i] - target[i]) /
                   (d->mean ? (double)count : 1.0);
}

static double ref_sig(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

void ref_lstm_forward(double *c_t, double *h_t, double *act, const float *pre,
                      const float *c_prev, const float *b, const LstmCellDesc *d)
{
    const int H = d->hidden;
    for (int r = 0; r < d->batch; r++)
        for (int u = 0; u < H; u++) {
            const float *p = pre + (size_t)r * 4 * H;
            const double i = ref_sig((double)p[u] + b[u]);
            const double j = tanh((double)p[H + u] + b[H + u]);
            const double f = ref_sig((double)p[2 * H + u] + b[2 * H + u] + d->forget_bias);
            const double o = ref_sig((double)p[3 * H + u] + b[3 * H + u]);
            const double c = c_prev[(size_t)r * H + u] * f + i * j;
            c_t[(size_t)r * H + u] = c;
            h_t[(size_t)r * H + u] = tanh(c) * o;
            double *a = act + (size_t)r * 4 * H;
            a[u] = i, a[H + u] = j, a[2 * H + u] = f, a[3 * H + u] = o;
        }
}

void ref_lstm_backward_data(double *dpre, double *dc_prev, const float *dh_t,
                            const float *dc_t, const float *pre, const float *c_prev,
                            const float *b, const LstmCellDesc *d)
{
    const int H = d->hidden;
    for (int r = 0; r < d->batch; r++)
        for (int u = 0; u < H; u++) {
            const float *p = pre + (size_t)r * 4 * H;
            const size_t at = (size_t)r * H + u;
            const double i = ref_sig((double)p[u] + b[u]);
            const double j = tanh((double)p[H + u] + b[H + u]);
            const double f = ref_sig((double)p[2 * H + u] + b[2 * H + u] + d->forget_bias);
            const double o = ref_sig((double)p[3 * H + u] + b[3 * H + u]);
            const double c = c_prev[at] * f + i * j, tc = tanh(c);
            /* chain rule through h = tanh(c) o and c = c_prev f + i j */
            const double dc = dc_t[at] + dh_t[at] * o * (1 - tc * tc);
            double *g = dpre + (size_t)r * 4 * H;
            g[u] = dc * j * i * (1 - i);
            g[H + u] = dc * i * (1 - j * j);
            g[2 * H + u] = dc * c_prev[at] * f * (1 - f);
            g[3 * H + u] = dh_t[at] * tc * o * (1 - o);
            dc_prev[at] = dc * f;
        }
}

/* ---------------------------------------------------------------------------------------
 * Model-zoo ops
 * ------------------------------------------------------------------------------------- */

#define NCS(t, n, c, i, C, SP) (t)[((size_t)(n) * (C) + (c)) * (SP) + (i)]

void ref_batchnorm_forward_train(double *y, double *mean, double *invstd, double *run_mean,
                                 double *run_var, const float *x, const float *gamma,
                                 const float *beta, const float *run0_mean,
                                 const float *run0_var, const BnDesc *d)
{
    const int N = d->n, C = d->c, SP = d->spatial;
    const double m = (double)N * SP, eps = d->eps, mom = d->momentum;
    for (int c = 0; c < C; c++) {
        double mu = 0.0, var = 0.0;
        for (int n = 0; n < N; n++)
            for (int i = 0; i < SP; i++)
                mu += NCS(x, n, c, i, C, SP);
        mu /= m;
        for (int n = 0; n < N; n++) /* two passes: the textbook variance */
            for (int i = 0; i < SP; i++) {
                const double t = NCS(x, n, c, i, C, SP) - mu;
                var += t * t;
            }
        var /= m;
        const double inv = 1.0 / sqrt(var + eps);
        if (mean)
            mean[c] = mu;
        if (invstd)
            invstd[c] = inv;
        if (run_mean)
            run_mean[c] = mom * run0_mean[c] + (1.0 - mom) * mu;
        if (run_var)
            run_var[c] = mom * run0_var[c] +
                         (1.0 - mom) * var * (m > 1.0 + eps ? m / (m - 1.0 - eps) : 1.0);
        if (y)
            for (int n = 0; n < N; n++)
                for (int i = 0; i < SP; i++)
                    NCS(y, n, c, i, C, SP) =
                        gamma[c] * (NCS(x, n, c, i, C, SP) - mu) * inv + beta[c];
    }
}

void ref_batchnorm_forward_infer(double *y, const float *x, const float *gamma,
                                 const float *beta, const float *run_mean,
                                 const float *run_var, const BnDesc *d)
{
    const int N = d->n, C = d->c, SP = d->spatial;
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int i = 0; i < SP; i++)
                NCS(y, n, c, i, C, SP) = gamma[c] * (NCS(x, n, c, i, C, SP) - run_mean[c]) /
                                             sqrt((double)run_var[c] + d->eps) + beta[c];
}

/* y = gamma xhat + beta, xhat = (x - mu) / sqrt(var + eps):
 *   dbeta = sum g; dgamma = sum g xhat; dxhat = g gamma;
 *   dvar = sum dxhat (x - mu) * -1/2 (var + eps)^-3/2;
 *   dmu = sum dxhat * -inv + dvar * sum -2 (x - mu) / m;
 *   dx = dxhat inv + dvar 2 (x - mu) / m + dmu / m */
void ref_batchnorm_backward(double *dx, double *dgamma, double *dbeta, const float *dy,
                            const float *x, const float *gamma, const BnDesc *d)
{
    const int N = d->n, C = d->c, SP = d->spatial;
    const double m = (double)N * SP;
    for (int c = 0; c < C; c++) {
        double mu = 0.0, var = 0.0;
        for (int n = 0; n < N; n++)
            for (int i = 0; i < SP; i++)
                mu += NCS(x, n, c, i, C, SP);
        mu /= m;
        for (int n = 0; n < N; n++)
            for (int i = 0; i < SP; i++) {
                const double t = NCS(x, n, c, i, C, SP) - mu;
                var += t * t;
            }
        var /= m;
        const double iv = 1.0 / sqrt(var + d->eps);
        double db = 0.0, dg = 0.0, dvar = 0.0, dmu = 0.0, sxm = 0.0;
        for (int n = 0; n < N; n++)
            for (int i = 0; i < SP; i++) {
                const double g = NCS(dy, n, c, i, C, SP), xm = NCS(x, n, c, i, C, SP) - mu;
                db += g;
                dg += g * xm * iv;
                dvar += g * gamma[c] * xm * -0.5 * iv * iv * iv;
                dmu += g * gamma[c] * -iv;
                sxm += -2.0 * xm;
            }
        dmu += dvar * sxm / m;
        if (dgamma)
            dgamma[c] = dg;
        if (dbeta)
            dbeta[c] = db;
        if (dx)
            for (int n = 0; n < N; n++)
                for (int i = 0; i < SP; i++) {
                    const double g = NCS(dy, n, c, i, C, SP), xm = NCS(x, n, c, i, C, SP) - mu;
                    NCS(dx, n, c, i, C, SP) = g * gamma[c] * iv + dvar * 2.0 * xm / m + dmu / m;
                }
    }
}

static double lrn_scale_at(const float *x, const LrnDesc *d, int n, int c, int i)
{
    const int r = d->size / 2;
    double s = 0.0;
    for (int q = c - r; q <= c + r; q++)
        if (q >= 0 && q < d->c) {
            const double v = NCS(x, n, q, i, d->c, d->spatial);
            s += v * v;
        }
    return d->k + (double)d->alpha / d->size * s;
}

void ref_lrn_forward(double *y, double *scale, const float *x, const LrnDesc *d)
{
    for (int n = 0; n < d->n; n++)
        for (int c = 0; c < d->c; c++)
            for (int i = 0; i < d->spatial; i++) {
                const double s = lrn_scale_at(x, d, n, c, i);
                if (scale)
                    NCS(scale, n, c, i, d->c, d->spatial) = s;
                if (y)
                    NCS(y, n, c, i, d->c, d->spatial) =
                        NCS(x, n, c, i, d->c, d->spatial) * pow(s, -(double)d->beta);
            }
}

/* y_c = x_c s_c^-b, s_c = k + a/size sum_{q in win(c)} x_q^2, so for x_j:
 *   dy_c/dx_j = [c == j] s_c^-b + x_c * -b s_c^(-b-1) * a/size * 2 x_j [j in win(c)] */
void ref_lrn_backward_data(double *dx, const float *dy, const float *x, const LrnDesc *d)
{
    const int r = d->size / 2, C = d->c, SP = d->spatial;
    const double b = d->beta, a = (double)d->alpha / d->size;
    for (int n = 0; n < d->n; n++)
        for (int j = 0; j < C; j++)
            for (int i = 0; i < SP; i++) {
                const double xj = NCS(x, n, j, i, C, SP);
                double g = NCS(dy, n, j, i, C, SP) * pow(lrn_scale_at(x, d, n, j, i), -b);
                for (int c = j - r; c <= j + r; c++) {
                    if (c < 0 || c >= C)
                        continue;
                    const double sc = lrn_scale_at(x, d, n, c, i);
                    g += NCS(dy, n, c, i, C, SP) * NCS(x, n, c, i, C, SP) * -b *
                         pow(sc, -b - 1.0) * a * 2.0 * xj;
                }
                NCS(dx, n, j, i, C, SP) = g;
            }
}

void ref_channel_copy_forward(double *y, const float *y0, const float *x, const ChannelDesc *d)
{
    for (int n = 0; n < d->n; n++)
        for (int c = 0; c < d->c_dst; c++)
            for (int i = 0; i < d->spatial; i++) {
                const bool in = c >= d->offset && c < d->offset + d->c_src;
                NCS(y, n, c, i, d->c_dst, d->spatial) =
                    in ? NCS(x, n, c - d->offset, i, d->c_src, d->spatial)
                       : NCS(y0, n, c, i, d->c_dst, d->spatial);
            }
}

void ref_channel_copy_backward_data(double *dx, const float *dy, const ChannelDesc *d)
{
    for (int n = 0; n < d->n; n++)
        for (int c = 0; c < d->c_src; c++)
            for (int i = 0; i < d->spatial; i++)
                NCS(dx, n, c, i, d->c_src, d->spatial) =
                    NCS(dy, n, c + d->offset, i, d->c_dst, d->spatial);
}

void ref_embedding_forward(double *y, const int32_t *ids, const float *W, const EmbedDesc *d)
{
    for (int i = 0; i < d->n; i++)
        for (int j = 0; j < d->dim; j++)
            y[(size_t)i * d->dim + j] = W[(size_t)ids[i] * d->dim + j];
}

void ref_embedding_backward_weights(double *dW, const float *dy, const int32_t *ids,
                                    const EmbedDesc *d)
{
    memset(dW, 0, sizeof(double) * (size_t)d->vocab * d->dim);
    for (int i = 0; i < d->n; i++)
        for (int j = 0; j < d->dim; j++)
            dW[(size_t)ids[i] * d->dim + j] += dy[(size_t)i * d->dim + j];
}

double ref_kl_forward(double *rho_hat, const float *a, const KlDesc *d)
{
    const double rho = d->rho;
    double pen = 0.0;
    for (int j = 0; j < d->units; j++) {
        double s = 0.0;
        for (int i = 0; i < d->n; i++)
            s += a[(size_t)i * d->units + j];
        const double rh = s / d->n;
        if (rho_hat)
            rho_hat[j] = rh;
        pen += rho * log(rho / rh) + (1.0 - rho) * log((1.0 - rho) / (1.0 - rh));
    }
    return d->beta * pen;
}

void ref_kl_backward_data(double *da, const float *a, const KlDesc *d)
{
    const double rho = d->rho;
    for (int j = 0; j < d->units; j++) {
        double s = 0.0;
        for (int i = 0; i < d->n; i++)
            s += a[(size_t)i * d->units + j];
        const double rh = s / d->n;
        const double t = d->beta / d->n * (-rho / rh + (1.0 - rho) / (1.0 - rh));
        for (int i = 0; i < d->n; i++)
            da[(size_t)i * d->units + j] = t;
    }
}

void ref_axpby(double *y, const float *a, const float *b, const AxpbyDesc *d)
{
    for (size_t i = 0; i < d->count; i++)
        y[i] = (double)d->alpha * a[i] + (double)d->beta * b[i];
}

void ref_shrink(double *y, const float *x, size_t count, double t)
{
    for (size_t i = 0; i < count; i++) {
        const double m = fabs(x[i]) - t;
        y[i] = m > 0.0 ? (x[i] < 0 ? -m : m) : 0.0;
    }
}

double ref_norm1(const float *x, size_t count)
{
    double s = 0.0;
    for (size_t i = 0; i < count; i++)
        s += fabs(x[i]);
    return s;
}

void ref_update_step(OpKind kind, const UpdateDesc *u, double *w, double *s1, double *s2,
                     const float *g)
{
    const double lr = u->lr;
    for (size_t i = 0; i < u->count; i++) {
        const double gi = g[i] + (i < u->decay_count ? (double)u->l2 * w[i] : 0.0);
        switch (kind) {
        case OP_SGD:
            w[i] -= lr * gi;
            break;
        case OP_RMSPROP:
            s1[i] = u->rho * s1[i] + (1.0 - u->rho) * gi * gi;
            w[i] -= lr * gi / (sqrt(s1[i]) + u->eps);
            break;
        case OP_MOMENTUM: {
            const double v = u->momentum * s1[i] - lr * gi;
            s1[i] = v;
            w[i] += u->nesterov ? u->momentum * v - lr * gi : v;
            break;
        }
        case OP_ADAM: {
            const double t = (double)u->step;
            const double lr_t = lr * sqrt(1.0 - pow(u->beta2, t)) / (1.0 - pow(u->beta1, t));
            s1[i] = u->beta1 * s1[i] + (1.0 - u->beta1) * gi;
            s2[i] = u->beta2 * s2[i] + (1.0 - u->beta2) * gi * gi;
            w[i] -= lr_t * s1[i] / (sqrt(s2[i]) + u->eps);
            break;
        }
        default:
            break;
        }
    }
}

/* ---- the transformer's ops ---- */

void ref_layernorm_forward(double *y, double *mean, double *rstd, const float *x,
                           const float *gamma, const float *beta, const LnDesc *d)
{
    const int h = d->h;
    for (int r = 0; r < d->n; r++) {
        const float *xr = x + (size_t)r * h;
        double mu = 0.0, var = 0.0;
        for (int j = 0; j < h; j++)
            mu += xr[j];
        mu /= h;
        for (int j = 0; j < h; j++)
            var += (xr[j] - mu) * (xr[j] - mu);
        var /= h;
        const double rs = 1.0 / sqrt(var + d->eps);
        if (mean)
            mean[r] = mu;
        if (rstd)
            rstd[r] = rs;
        if (y)
            for (int j = 0; j < h; j++)
                y[(size_t)r * h + j] = (xr[j] - mu) * rs * gamma[j] + beta[j];
    }
}

void ref_layernorm_backward(double *dx, double *dgamma, double *dbeta, const float *dy,
                            const float *x, const float *gamma, const LnDesc *d)
{
    const int h = d->h;
    for (int j = 0; j < h; j++)
        dgamma[j] = dbeta[j] = 0.0;
    for (int r = 0; r < d->n; r++) {
        const float *xr = x + (size_t)r * h, *gr = dy + (size_t)r * h;
        double mu = 0.0, var = 0.0;
        for (int j = 0; j < h; j++)
            mu += xr[j];
        mu /= h;
        for (int j = 0; j < h; j++)
            var += (xr[j] - mu) * (xr[j] - mu);
        var /= h;
        const double rs = 1.0 / sqrt(var + d->eps);
        /* y = xhat gamma + beta; xhat = (x - mu) (var + eps)^-1/2 */
        double dvar = 0.0, dmu = 0.0, sum_c = 0.0;
        for (int j = 0; j < h; j++) {
            const double g = (double)gr[j] * gamma[j]; /* dL/dxhat_j */
            dgamma[j] += gr[j] * (xr[j] - mu) * rs;
            dbeta[j] += gr[j];
            dvar += g * (xr[j] - mu) * -0.5 * rs * rs * rs;
            dmu += -g * rs;
            sum_c += xr[j] - mu;
        }
        dmu += dvar * -2.0 * sum_c / h;
        for (int j = 0; j < h; j++)
            dx[(size_t)r * h + j] =
                (double)gr[j] * gamma[j] * rs + dvar * 2.0 * (xr[j] - mu) / h + dmu / h;
    }
}

void ref_softmax_forward(double *y, const float *x, int n, int h)
{
    for (int r = 0; r < n; r++) {
        const float *xr = x + (size_t)r * h;
        double mx = xr[0], s = 0.0;
        for (int j = 1; j < h; j++)
            mx = xr[j] > mx ? xr[j] : mx;
        for (int j = 0; j < h; j++)
            s += exp(xr[j] - mx);
        for (int j = 0; j < h; j++)
            y[(size_t)r * h + j] = exp(xr[j] - mx) / s;
    }
}

void ref_softmax_backward_data(double *dx, const float *dy, const float *x, int n, int h)
{
    double *y = malloc(sizeof(double) * (size_t)h);
    if (!y)
        abort();
    for (int r = 0; r < n; r++) {
        ref_softmax_forward(y, x + (size_t)r * h, 1, h);
        for (int j = 0; j < h; j++) {
            double s = 0.0;
            for (int i = 0; i < h; i++)
                s += (double)dy[(size_t)r * h + i] * y[i] * ((i == j) - y[j]);
            dx[(size_t)r * h + j] = s;
        }
    }
    free(y);
}

static double ref_apply(BinaryKind op, double a, double b)
{
    switch (op) {
    case BIN_ADD: return a + b;
    case BIN_MUL: return a * b;
    case BIN_DIV: return a / b;
    default: return pow(a, b);
    }
}

void ref_binary_forward(double *y, const float *a, const float *b, BinaryKind op, size_t count)
{
    for (size_t i = 0; i < count; i++)
        y[i] = ref_apply(op, a[i], b[i]);
}

void ref_binary_backward_data(double *da, double *db, const float *dy, const float *a,
                              const float *b, BinaryKind op, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const double g = dy[i], x = a[i], z = b[i];
        switch (op) {
        case BIN_ADD: da[i] = g, db[i] = g; break;
        case BIN_MUL: da[i] = g * z, db[i] = g * x; break;
        case BIN_DIV: da[i] = g / z, db[i] = -g * x / (z * z); break;
        default: da[i] = g * z * pow(x, z - 1.0), db[i] = g * pow(x, z) * log(x); break;
        }
    }
}

void ref_scalar_forward(double *y, const float *a, double s, BinaryKind op, size_t count)
{
    for (size_t i = 0; i < count; i++)
        y[i] = ref_apply(op, a[i], s);
}

void ref_scalar_backward_data(double *da, const float *dy, const float *a, double s,
                              BinaryKind op, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const double g = dy[i];
        switch (op) {
        case BIN_ADD: da[i] = g; break;
        case BIN_MUL: da[i] = g * s; break;
        case BIN_DIV: da[i] = g / s; break;
        default: da[i] = g * s * pow(a[i], s - 1.0); break;
        }
    }
}
