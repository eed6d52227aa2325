/* ops/lstm.c — OP_LSTM_CELL: the element-wise part of one TensorFlow BasicLSTMCell step
 * (the matmul of [x_t, h_{t-1}] by the weights is an OP_GEMM before it). Gate blocks in
 * the pre-activation columns are [i | j | f | o], each `hidden` wide; the bias is added
 * here, the forget bias on top of b_f; no peepholes, no cell clipping.
 */
#include <math.h>

#include "ops/kernels.h"

static inline float lstm_sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

/* Contract: with i, j, f, o the four gate blocks of pre (batch, 4H) plus b (4H):
 *   c_t = c_prev * sig(f + forget_bias) + sig(i) * tanh(j);  h_t = tanh(c_t) * sig(o);
 *   act (batch, 4H) = [sig(i), tanh(j), sig(f + forget_bias), sig(o)] for the backward. */
void lstm_cell_forward(float *c_t, float *h_t, float *act, const float *pre,
                       const float *c_prev, const float *b, const LstmCellDesc *d)
{
    OPS_ASSERT(c_t && h_t && act && pre && c_prev && b && d);
    const int B = d->batch, H = d->hidden;
    const float fb = d->forget_bias;
#pragma omp parallel for schedule(static) if ((size_t)B * (size_t)H * 4 >= OPS_PAR_MIN)
    for (int r = 0; r < B; r++) {
        const float *p = pre + (size_t)r * 4 * (size_t)H;
        float *a = act + (size_t)r * 4 * (size_t)H;
        const float *cp = c_prev + (size_t)r * (size_t)H;
        float *c = c_t + (size_t)r * (size_t)H;
        float *h = h_t + (size_t)r * (size_t)H;
        for (int u = 0; u < H; u++) {
            const float gi = lstm_sigmoid(p[u] + b[u]);
            const float gj = tanhf(p[H + u] + b[H + u]);
            const float gf = lstm_sigmoid(p[2 * H + u] + b[2 * H + u] + fb);
            const float go = lstm_sigmoid(p[3 * H + u] + b[3 * H + u]);
            const float cn = cp[u] * gf + gi * gj;
            a[u] = gi;
            a[H + u] = gj;
            a[2 * H + u] = gf;
            a[3 * H + u] = go;
            c[u] = cn;
            h[u] = tanhf(cn) * go;
        }
    }
}

/* Contract: given dh_t, dc_t (batch, H) (dc_t: gradient reaching c_t from step t+1),
 * the saved act and c_prev, c_t, writes
 *   dc      = dc_t + dh_t * sig(o) * (1 - tanh(c_t)^2)
 *   dpre    = [dc*tanh(j)*i(1-i), dc*sig(i)*(1-tanh(j)^2), dc*c_prev*f(1-f),
 *              dh_t*tanh(c_t)*o(1-o)]          (also the bias gradient of the row)
 *   dc_prev = dc * sig(f).
 * Each (row, unit) reads all its inputs before writing, so dc_prev may alias dc_t. */
void lstm_cell_backward_data(float *dpre, float *dc_prev, const float *dh_t,
                             const float *dc_t, const float *act, const float *c_prev,
                             const float *c_t, const LstmCellDesc *d)
{
    OPS_ASSERT(dpre && dc_prev && dh_t && dc_t && act && c_prev && c_t && d);
    const int B = d->batch, H = d->hidden;
#pragma omp parallel for schedule(static) if ((size_t)B * (size_t)H * 4 >= OPS_PAR_MIN)
    for (int r = 0; r < B; r++) {
        const size_t o4 = (size_t)r * 4 * (size_t)H, o1 = (size_t)r * (size_t)H;
        const float *a = act + o4;
        float *g = dpre + o4;
        for (int u = 0; u < H; u++) {
            const float gi = a[u], gj = a[H + u], gf = a[2 * H + u], go = a[3 * H + u];
            const float tc = tanhf(c_t[o1 + u]);
            const float dh = dh_t[o1 + u];
            const float dc = dc_t[o1 + u] + dh * go * (1.0f - tc * tc);
            const float cp = c_prev[o1 + u];
            g[u] = dc * gj * gi * (1.0f - gi);
            g[H + u] = dc * gi * (1.0f - gj * gj);
            g[2 * H + u] = dc * cp * gf * (1.0f - gf);
            g[3 * H + u] = dh * tc * go * (1.0f - go);
            dc_prev[o1 + u] = dc * gf;
        }
    }
}
