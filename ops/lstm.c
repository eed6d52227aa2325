/* ops/lstm.c — the recurrent cells' element-wise parts (the matmuls by the weights are
 * OP_GEMMs before them).
 * OP_LSTM_CELL: one TensorFlow BasicLSTMCell step. Gate blocks in the pre-activation
 * columns are [i | j | f | o], each `hidden` wide; the bias is added here, the forget bias
 * on top of b_f; no peepholes, no cell clipping.
 * OP_GRU_CELL: one GRU step as DeepBench times it (cuDNN's GRU, recurrent part only):
 * blocks [r | z | n] of h_{t-1} R, the reset gate applied to the recurrent candidate term.
 */
#include "ops/kernels.h"
#include "ops/vecmath.h"

/* One row (one sequence of the batch) of the forward step; the per-unit loop vectorises
 * (vm_sigmoid / vm_tanh instead of libm, see vecmath.h). Outputs must not overlap inputs.
 * p, a (4H); b (4H); cp, c, h (H). */
OPS_TARGET_CLONES
static void lstm_row_forward(float *restrict c, float *restrict h, float *restrict a,
                             const float *restrict p, const float *restrict cp,
                             const float *restrict b, int H, float fb)
{
#pragma omp simd
    for (int u = 0; u < H; u++) {
        const float gi = vm_sigmoid(p[u] + b[u]);
        const float gj = vm_tanh(p[H + u] + b[H + u]);
        const float gf = vm_sigmoid(p[2 * H + u] + b[2 * H + u] + fb);
        const float go = vm_sigmoid(p[3 * H + u] + b[3 * H + u]);
        const float cn = cp[u] * gf + gi * gj;
        a[u] = gi;
        a[H + u] = gj;
        a[2 * H + u] = gf;
        a[3 * H + u] = go;
        c[u] = cn;
        h[u] = vm_tanh(cn) * go;
    }
}

/* Contract: with i, j, f, o the four gate blocks of pre (batch, 4H) plus b (4H):
 *   c_t = c_prev * sig(f + forget_bias) + sig(i) * tanh(j);  h_t = tanh(c_t) * sig(o);
 *   act (batch, 4H) = [sig(i), tanh(j), sig(f + forget_bias), sig(o)] for the backward. */
void lstm_cell_forward(float *c_t, float *h_t, float *act, const float *pre,
                       const float *c_prev, const float *b, const LstmCellDesc *d)
{
    OPS_ASSERT(c_t && h_t && act && pre && c_prev && b && d);
    const int B = d->batch, H = d->hidden;
#pragma omp parallel for schedule(static) if ((size_t)B * (size_t)H * 4 >= ops_par_min)
    for (int r = 0; r < B; r++) {
        const size_t o4 = (size_t)r * 4 * (size_t)H, o1 = (size_t)r * (size_t)H;
        lstm_row_forward(c_t + o1, h_t + o1, act + o4, pre + o4, c_prev + o1, b, H,
                         d->forget_bias);
    }
}

/* One row of the backward step. Same-index aliasing of dc_prev and dc_t is allowed (each
 * unit reads its inputs before writing), hence no restrict on those two. */
OPS_TARGET_CLONES
static void lstm_row_backward(float *restrict g, float *dcp, const float *restrict dh_t,
                              const float *dc_t, const float *restrict a,
                              const float *restrict c_prev, const float *restrict c_t, int H)
{
#pragma omp simd
    for (int u = 0; u < H; u++) {
        const float gi = a[u], gj = a[H + u], gf = a[2 * H + u], go = a[3 * H + u];
        const float tc = vm_tanh(c_t[u]);
        const float dh = dh_t[u];
        const float dc = dc_t[u] + dh * go * (1.0f - tc * tc);
        g[u] = dc * gj * gi * (1.0f - gi);
        g[H + u] = dc * gi * (1.0f - gj * gj);
        g[2 * H + u] = dc * c_prev[u] * gf * (1.0f - gf);
        g[3 * H + u] = dh * tc * go * (1.0f - go);
        dcp[u] = dc * gf;
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
#pragma omp parallel for schedule(static) if ((size_t)B * (size_t)H * 4 >= ops_par_min)
    for (int r = 0; r < B; r++) {
        const size_t o4 = (size_t)r * 4 * (size_t)H, o1 = (size_t)r * (size_t)H;
        lstm_row_backward(dpre + o4, dc_prev + o1, dh_t + o1, dc_t + o1, act + o4,
                          c_prev + o1, c_t + o1, H);
    }
}

/* One row of the GRU forward step. pre, b (3H); act (4H); hp, h (H). relu: act is ReLU,
 * else tanh. The two activations are two loops: a select between them inside one loop
 * kept it from vectorising (0.4 of the backward's speed). */
#define GRU_ROW_FORWARD_BODY(ACT)                                                                  \
    _Pragma("omp simd") for (int u = 0; u < H; u++)                                                \
    {                                                                                              \
        const float r = vm_sigmoid(p[u] + b[u]);                                                   \
        const float z = vm_sigmoid(p[H + u] + b[H + u]);                                           \
        const float hn = p[2 * H + u] + b[2 * H + u];                                              \
        const float n = ACT(r * hn);                                                               \
        a[u] = r;                                                                                  \
        a[H + u] = z;                                                                              \
        a[2 * H + u] = n;                                                                          \
        a[3 * H + u] = hn;                                                                         \
        h[u] = n + z * (hp[u] - n); /* (1 - z) n + z h_prev */                                    \
    }
#define GRU_RELU(x) ((x) > 0.0f ? (x) : 0.0f)

OPS_TARGET_CLONES
static void gru_row_forward(float *restrict h, float *restrict a, const float *restrict p,
                            const float *restrict hp, const float *restrict b, int H, bool relu)
{
    if (relu) {
        GRU_ROW_FORWARD_BODY(GRU_RELU)
    } else {
        GRU_ROW_FORWARD_BODY(vm_tanh)
    }
}

/* Contract: r = sig(pre_r + b_r), z = sig(pre_z + b_z), hn = pre_n + b_n,
 * n = act(r * hn), h_t = (1 - z) n + z h_prev; act (batch, 4H) = [r, z, n, hn]. */
void gru_cell_forward(float *h_t, float *act, const float *pre, const float *h_prev, const float *b,
                      const GruCellDesc *d)
{
    OPS_ASSERT(h_t && act && pre && h_prev && b && d);
    const int B = d->batch, H = d->hidden;
    const bool relu = d->act == ACT_RELU;
#pragma omp parallel for schedule(static) if ((size_t)B * (size_t)H * 4 >= ops_par_min)
    for (int r = 0; r < B; r++) {
        const size_t o1 = (size_t)r * (size_t)H;
        gru_row_forward(h_t + o1, act + 4 * o1, pre + 3 * o1, h_prev + o1, b, H, relu);
    }
}

/* One row of the GRU backward step. g (3H); dhp, dh, hp (H); a (4H). */
OPS_TARGET_CLONES
static void gru_row_backward(float *restrict g, float *restrict dhp, const float *restrict dh,
                             const float *restrict a, const float *restrict hp, int H, bool relu)
{
#pragma omp simd
    for (int u = 0; u < H; u++) {
        const float r = a[u], z = a[H + u], n = a[2 * H + u], hn = a[3 * H + u];
        const float dn = dh[u] * (1.0f - z);
        const float dpn = relu ? (n > 0.0f ? dn : 0.0f) : dn * (1.0f - n * n);
        g[u] = dpn * hn * r * (1.0f - r);
        g[H + u] = dh[u] * (hp[u] - n) * z * (1.0f - z);
        g[2 * H + u] = dpn * r;
        dhp[u] = dh[u] * z;
    }
}

/* Contract: with [r, z, n, hn] = act and dh = dh_t:
 *   dpre_n = dh (1 - z) act'(r hn) r,  dpre_r = dh (1 - z) act'(r hn) hn r (1 - r),
 *   dpre_z = dh (h_prev - n) z (1 - z),  dh_prev = dh z   (all written; act' from n). */
void gru_cell_backward(float *dpre, float *dh_prev, const float *dh_t, const float *act, const float *h_prev,
                       const GruCellDesc *d)
{
    OPS_ASSERT(dpre && dh_prev && dh_t && act && h_prev && d);
    const int B = d->batch, H = d->hidden;
    const bool relu = d->act == ACT_RELU;
#pragma omp parallel for schedule(static) if ((size_t)B * (size_t)H * 4 >= ops_par_min)
    for (int r = 0; r < B; r++) {
        const size_t o1 = (size_t)r * (size_t)H;
        gru_row_backward(dpre + 3 * o1, dh_prev + o1, dh_t + o1, act + 4 * o1, h_prev + o1, H, relu);
    }
}
