/* ops/kernels.h — the typed kernels behind op_run, one free function per op and phase.
 *
 * Signatures follow one habit (llm.c): outputs first, then inputs, then the descriptor,
 * then scratch. Shapes are in the comments; all tensors are fp32 row-major NCHW unless
 * said otherwise. Callers outside ops/ should go through op_run (which checks the
 * descriptor); these are exposed for tests and for the few callers that want the typed
 * form. No kernel allocates; OpenMP is used inside, BLAS never from a parallel region.
 */
#ifndef DLPERF_OPS_KERNELS_H
#define DLPERF_OPS_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "ops/ops.h"

/* Always-on assert (STYLE habit 5): programmer errors abort with file:line whatever
 * NDEBUG says; a wrong shape or a NULL buffer must never become silent memory corruption. */
#define OPS_ASSERT(cond) \
    ((cond) ? (void)0 : ops_assert_fail(#cond, __FILE__, __LINE__, NULL))
_Noreturn void ops_assert_fail(const char *expr, const char *file, int line,
                               const char *detail);

/* Element counts below this run serially (ops_set_parallel_min; default
 * OPS_PAR_MIN_DEFAULT, see ops.c). Read by every OpenMP region's `if` clause. */
extern size_t ops_par_min;

/* The Makefile builds ops/ for baseline x86-64 (no -march), so the loops that are worth
 * vectorising wider are compiled three times and picked at load time (ifunc). OpenMP
 * outlines parallel bodies into functions that do not inherit the attribute, hence the
 * pattern: a parallel region splits the range, a cloned "span" function does the loop. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define OPS_TARGET_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define OPS_TARGET_CLONES
#endif

/* Make OpenBLAS calls single-threaded while OpenMP threads each call sgemm (conv.c);
 * outside parallel regions only. end restores the ops_set_threads count. */
void ops_blas_serial_begin(void);
void ops_blas_serial_end(void);

/* Splits [0, n) evenly over the threads of the enclosing parallel region (the static
 * schedule, by hand, so each thread can call a vectorised span kernel on its part). */
void ops_span_split(size_t n, size_t *lo, size_t *hi);

/* ---- GEMM (gemm.c) ---- */
/* c (m, n) = alpha * op(a) * op(b) + beta * c; a (m, k) or (k, m) if trans_a;
 * b (k, n) or (n, k) if trans_b; tightly packed. */
void gemm_run(float *c, const float *a, const float *b, const GemmDesc *d);
/* the same plus bias (n) on every row of c (d->bias) */
void gemm_bias_run(float *c, const float *a, const float *b, const float *bias, const GemmDesc *d);
/* batch GEMMs: c (batch, m, n), a (batch, m, k) or (batch, k, m), b (batch, k, n) or
 * (batch, n, k), each matrix as gemm_run's */
void bmm_run(float *c, const float *a, const float *b, const BmmDesc *d);

/* A BMM's effective layout: the row strides and matrix strides with 0 resolved to packed. */
typedef struct {
    size_t lda, ldb, ldc;
    size_t sa, sb, sc;
} BmmLayout;

static inline BmmLayout bmm_layout(const BmmDesc *d)
{
    const size_t m = (size_t)d->m, n = (size_t)d->n, k = (size_t)d->k;
    BmmLayout l;
    l.lda = d->lda ? (size_t)d->lda : d->trans_a ? m : k;
    l.ldb = d->ldb ? (size_t)d->ldb : d->trans_b ? k : n;
    l.ldc = d->ldc ? (size_t)d->ldc : n;
    l.sa = d->stride_a ? d->stride_a : m * k;
    l.sb = d->stride_b ? d->stride_b : k * n;
    l.sc = d->stride_c ? d->stride_c : m * n;
    return l;
}

/* Elements a strided batch of `batch` stored (rows, cols) matrices spans from the first. */
static inline size_t bmm_extent(size_t batch, size_t rows, size_t cols, size_t ld, size_t stride)
{
    return (batch - 1) * stride + (rows - 1) * ld + cols;
}

/* ---- convolution (conv.c), im2col + sgemm per image and group (Caffe) ----
 * x (n, c, h, w); w (k, c/groups, r, s); y (n, k, out_h, out_w);
 * ws: one image's column buffer (c/groups * r * s, out_h * out_w), NULL on the 1x1 path. */
bool conv2d_is_1x1(const ConvDesc *d);
/* A sequence convolution, its columns copied as rows (one channel a group, the filter as
 * wide as the input, no padding). */
bool conv2d_is_rows(const ConvDesc *d);
/* op_thread_imbalance of a convolution (conv_batch_threads' split). */
double conv2d_thread_imbalance(const ConvDesc *d, int threads);
size_t conv2d_workspace_floats(const ConvDesc *d, OpPhase phase);
size_t conv2d_slice_floats(const ConvDesc *d, OpPhase phase);
void conv2d_forward(float *y, const float *x, const float *w, const ConvDesc *d, float *ws);
/* dx (=|+=) conv^T(dy, w) */
void conv2d_backward_data(float *dx, const float *dy, const float *w, const ConvDesc *d,
                          float *ws);
/* dw (=|+=) sum over images of dy_n * col(x_n)^T */
void conv2d_backward_weights(float *dw, const float *dy, const float *x, const ConvDesc *d,
                             float *ws);

/* ---- pooling (pool.c) ---- x, dx (n, c, h, w); y, dy (n, c, out_h, out_w) */
void pool2d_forward(float *y, const float *x, const PoolDesc *d);
/* True where the window is the whole plane (out 1x1, unpadded): the planes are reduced
 * side by side instead of window by window. */
bool pool2d_is_global(const PoolDesc *d);
/* Max: the gradient goes to the first window position where x == y (recomputed, so no
 * index buffer); avg: dy / (number of non-padded cells) to every non-padded cell. */
void pool2d_backward_data(float *dx, const float *dy, const float *x, const float *y,
                          const PoolDesc *d);

/* ---- element-wise (eltwise.c) ---- */
/* y (n, c, spatial) += b (c) */
void bias_forward(float *y, const float *b, const BiasDesc *d);
/* db (c) (=|+=) sum over n, spatial of dy (n, c, spatial) */
void bias_backward_weights(float *db, const float *dy, const BiasDesc *d);
/* y (count) = f(x (count)); y may alias x */
void act_forward(float *y, const float *x, const ActDesc *d);
/* dx (count) = dy * f'(.), from the forward output y (GELU: the forward input x, passed
 * as y); dx may alias dy */
void act_backward_data(float *dx, const float *dy, const float *y, const ActDesc *d);
void mem_zero(float *x, size_t count);
void mem_copy(float *dst, const float *src, size_t count);
/* STREAM: copy c = a; scale b = q*c; add c = a + b; triad a = b + q*c (each (count)) */
void stream_run(float *a, float *b, float *c, const MemDesc *d);
/* y (count) = a op b; y may alias a or b */
void binary_forward(float *y, const float *a, const float *b, const BinaryDesc *d);
/* da, db (count) (=|+=) the gradients of a op b from dy (BinaryDesc) */
void binary_backward_data(float *da, float *db, const float *dy, const float *a, const float *b,
                          const BinaryDesc *d);
/* y (count) = a op d->scalar; y may alias a */
void scalar_forward(float *y, const float *a, const ScalarDesc *d);
/* da (count) (=|+=) dy d(a op s)/da */
void scalar_backward_data(float *da, const float *dy, const float *a, const ScalarDesc *d);

/* ---- losses (loss.c) ---- */
/* loss[1] = mean over rows of -log softmax(logits)[label]; probs, logits (n, classes);
 * labels (n) int32 in [0, classes) */
void softmax_xent_forward(float *loss, float *probs, const float *logits,
                          const int32_t *labels, const XentDesc *d);
/* The vocabulary-parallel forward (XentDesc.parts): logits, probs (n, classes) this rank's
 * columns; labels (n) in [0, total); the loss over every rank's columns; ws 3n floats.
 * Sums over the tensor-parallel group (ops/comm.h). */
void softmax_xent_forward_parallel(float *loss, float *probs, const float *logits, const int32_t *labels,
                                   const XentDesc *d, float *ws);
/* dlogits (n, classes) = scale * (probs - onehot(labels)) / n (parts: the onehot's column
 * where this rank holds it) */
void softmax_xent_backward_data(float *dlogits, const float *probs, const int32_t *labels,
                                const XentDesc *d);
/* loss[1] = weight * sum (pred - target)^2 [/ (n*features) if mean]; pred, target (n, features) */
void sqerr_forward(float *loss, const float *pred, const float *target, const SqErrDesc *d);
/* dpred (n, features) = scale * weight * 2 (pred - target) [/ (n*features) if mean] */
void sqerr_backward_data(float *dpred, const float *pred, const float *target,
                         const SqErrDesc *d);

/* ---- LSTM cell (lstm.c), TF BasicLSTMCell, gate blocks [i | j | f | o] ----
 * pre, act, dpre (batch, 4*hidden); b (4*hidden); c_prev, c_t, h_t, dh_t, dc_t,
 * dc_prev (batch, hidden). act saves [sig(i), tanh(j), sig(f), sig(o)]. */
void lstm_cell_forward(float *c_t, float *h_t, float *act, const float *pre,
                       const float *c_prev, const float *b, const LstmCellDesc *d);
/* dc_t: gradient reaching c_t from step t+1 (zeros at the last step). Each element reads
 * its inputs before writing its outputs, so dc_prev may alias dc_t. */
void lstm_cell_backward_data(float *dpre, float *dc_prev, const float *dh_t,
                             const float *dc_t, const float *act, const float *c_prev,
                             const float *c_t, const LstmCellDesc *d);

/* ---- GRU cell (lstm.c), DeepBench/cuDNN form, blocks [r | z | n] ----
 * pre, dpre (batch, 3*hidden); b (3*hidden); act (batch, 4*hidden) = [r, z, n, hn];
 * h_prev, h_t, dh_t, dh_prev (batch, hidden). Outputs must not alias inputs. */
void gru_cell_forward(float *h_t, float *act, const float *pre, const float *h_prev, const float *b,
                      const GruCellDesc *d);
void gru_cell_backward(float *dpre, float *dh_prev, const float *dh_t, const float *act, const float *h_prev,
                       const GruCellDesc *d);

/* ---- sparse GEMM (spmm.c) ----
 * c (m, n) = A (m, k) b (k, n), A in CSR: row_ptr (m + 1), col_idx and values (nnz). */
void spmm_run(float *c, const float *values, const int32_t *col_idx, const int32_t *row_ptr, const float *b,
              const SpmmDesc *d);

/* ---- machine limits (limits.c), microbenchmarks only ---- */
/* out (threads): each thread's FMA chains, averaged (1.0 when the kernel ran correctly) */
void peak_fma_run(float *out, const PeakDesc *d);
/* The same chains on the calling thread alone: fma (a multiple of PEAK_FMA_QUANTUM)
 * multiply-adds; returns the accumulators' mean, 1.0 (the placement probe times it) */
float peak_fma_here(long fma);
/* The slice of x thread t reads: its own, or (CROSS) the next thread's */
int membw_slice(const MembwDesc *d, int t);
/* out (threads): thread t's sum over passes of slice membw_slice(d, t) of x (threads slices
 * of bytes_per_thread / 4 floats), accumulated in double */
void membw_read_run(float *out, const float *x, const MembwDesc *d);
/* x = -x over each thread's slice (READ's layout): the producer before a handoff sample */
void membw_produce(float *x, const MembwDesc *d);
/* Every thread reads the next thread's slice (READ's layout), untimed: before a SHARED
 * sample, so that every line is held by two cores */
void membw_share(const float *x, const MembwDesc *d);
/* SHARED: x = -x over each thread's own slice, out[t] = the new slice's sum (in double) */
void membw_shared_write_run(float *out, float *x, const MembwDesc *d);
/* Every thread computes in registers (FMA chains, no memory traffic) for d->idle_us
 * microseconds: the wait of a MEMBW_RETAIN sample, with the cores busy as in a step. */
void membw_idle(const MembwDesc *d);
/* a = b + 3 c over each thread's slice (threads slices of bytes_per_thread / 12), passes times */
void membw_triad_run(float *a, const float *b, const float *c, const MembwDesc *d);

/* ---- optimizer updates (optim.c), each over (count) ----
 * For i < d->decay_count the gradient used is g[i] + l2 * w[i] (g itself is not written);
 * sumsq: the gradients' sum of squares when d->clip > 0 (else unread, may be NULL). */
void sgd_update(float *w, const float *g, const float *sumsq, const UpdateDesc *d);
/* Keras 2 RMSprop: acc = rho*acc + (1-rho)*g^2; w -= lr * g / (sqrt(acc) + eps) */
void rmsprop_update(float *w, float *acc, const float *g, const float *sumsq, const UpdateDesc *d);
/* Keras 2 SGD with momentum: v = momentum*v - lr*g; w += v (nesterov: w += momentum*v - lr*g) */
void momentum_update(float *w, float *v, const float *g, const float *sumsq, const UpdateDesc *d);
/* Keras 2 Adam with t = d->step: m, v moments; w -= lr_t * m / (sqrt(v) + eps) */
void adam_update(float *w, float *m, float *v, const float *g, const float *sumsq, const UpdateDesc *d);
/* PyTorch AdamW with t = d->step: decoupled decay on the prefix, then the Adam step with
 * bias-corrected moments (UpdateDesc) */
void adamw_update(float *w, float *m, float *v, const float *g, const float *sumsq, const UpdateDesc *d);

/* ---- normalisation (norm.c) ---- all tensors (n, c, spatial); per-channel vectors (c) */
/* Training: y = gamma (x - mean) invstd + beta with this batch's statistics, which are
 * written to mean and invstd and folded into run_mean / run_var (Keras). */
void batchnorm_forward_train(float *y, float *mean, float *invstd, float *run_mean,
                             float *run_var, const float *x, const float *gamma,
                             const float *beta, const BnDesc *d);
/* Inference: y = gamma (x - run_mean) / sqrt(run_var + eps) + beta */
void batchnorm_forward_infer(float *y, const float *x, const float *gamma, const float *beta,
                             const float *run_mean, const float *run_var, const BnDesc *d);
/* dgamma (=|+=) sum dy (x - mean) invstd; dbeta (=|+=) sum dy */
void batchnorm_backward_weights(float *dgamma, float *dbeta, const float *dy, const float *x,
                                const float *mean, const float *invstd, const BnDesc *d);
/* dx (=|+=) gamma invstd / m (m dy - dbeta - xhat dgamma), dgamma/dbeta of this step */
void batchnorm_backward_data(float *dx, const float *dy, const float *x, const float *gamma,
                             const float *mean, const float *invstd, const float *dgamma,
                             const float *dbeta, const BnDesc *d);
/* Caffe cross-channel LRN: scale = k + alpha/size sum_window x^2; y = x scale^-beta */
void lrn_forward(float *y, float *scale, const float *x, const LrnDesc *d);
/* dx (=|+=) dy scale^-beta - 2 alpha beta / size x sum_window dy y / scale */
void lrn_backward_data(float *dx, const float *dy, const float *x, const float *y,
                       const float *scale, const LrnDesc *d);

/* ---- layer norm and softmax over the last dimension (rows.c) ----
 * x, y, dx, dy (n, h); gamma, beta, dgamma, dbeta (h); mean, rstd (n) */
void layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                       const float *beta, const LnDesc *d);
/* dgamma (=|+=) sum dy xhat, dbeta (=|+=) sum dy over the rows */
void layernorm_backward_weights(float *dgamma, float *dbeta, const float *dy, const float *x,
                                const float *mean, const float *rstd, const LnDesc *d);
/* dx (=|+=) rstd (g - mean(g) - xhat mean(g xhat)), g = dy gamma, per row */
void layernorm_backward_data(float *dx, const float *dy, const float *x, const float *gamma,
                             const float *mean, const float *rstd, const LnDesc *d);
/* y = softmax(x) per row; y may alias x */
void softmax_forward(float *y, const float *x, const SoftmaxDesc *d);
/* the same under a key padding mask (SoftmaxDesc.samples): ids (h, samples) the token ids */
void softmax_forward_padded(float *y, const float *x, const int32_t *ids, const SoftmaxDesc *d);
/* dx (=|+=) y (dy - sum_j dy_j y_j) per row */
void softmax_backward_data(float *dx, const float *dy, const float *y, const SoftmaxDesc *d);

/* ---- dropout, concatenation, embedding, penalties, FISTA helpers (misc.c) ---- */

/* Dropout's counter-based draw, shared by the kernel and op_spot_check. The key mixes
 * (seed, step) once per call (splitmix64's finaliser); element i is then two rounds of
 * Wellons' lowbias32 integer hash, keyed by the two halves of the key, over the low and
 * high 32 bits of i. 32-bit lanes keep the loop vectorisable on AVX2 (no 64-bit
 * multiply); the draw of i depends on (seed, step, i) only, never on the thread count. */
static inline uint64_t dropout_key(uint32_t seed, uint32_t step)
{
    uint64_t z = ((uint64_t)seed << 32 | step) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint32_t dropout_mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* The 32-bit draw of element i: uniform over [0, 2^32). */
static inline uint32_t dropout_bits(uint64_t key, uint32_t i_lo, uint32_t i_hi)
{
    return dropout_mix32(dropout_mix32(i_lo ^ (uint32_t)key) ^ (uint32_t)(key >> 32) ^ i_hi);
}

/* Element i is dropped when its draw is below rate * 2^32 (rate in [0, 1)). */
static inline uint32_t dropout_threshold(float rate)
{
    return (uint32_t)((double)rate * 4294967296.0);
}

static inline float dropout_scale(float rate)
{
    return 1.0f / (1.0f - rate);
}

/* mask (count) = 0 or 1/(1-rate) from the draw of (seed, *step, i); y (count) = x * mask.
 * y may alias x. */
void dropout_forward(float *y, float *mask, const float *x, const int32_t *step,
                     const DropoutDesc *d);
/* dx (count) = dy * mask; dx may alias dy */
void dropout_backward_data(float *dx, const float *dy, const float *mask, const DropoutDesc *d);
/* y (n, c_dst, sp)[:, offset:offset+c_src, :] = x (n, c_src, sp) */
void channel_copy_forward(float *y, const float *x, const ChannelDesc *d);
/* dx (n, c_src, sp) (=|+=) dy (n, c_dst, sp)[:, offset:offset+c_src, :] */
void channel_copy_backward_data(float *dx, const float *dy, const ChannelDesc *d);
/* y (count) = alpha a + beta b; y may alias a or b */
void axpby_run(float *y, const float *a, const float *b, const AxpbyDesc *d);
/* y (n, dim) row i = W (vocab, dim) row ids[i] (or i / repeat: ids NULL) */
void embedding_forward(float *y, const int32_t *ids, const float *W, const EmbedDesc *d);
/* dW (vocab, dim) (=|+=) scatter-add of dy (n, dim) rows at ids (n) (or i / repeat: ids NULL) */
void embedding_backward_weights(float *dW, const float *dy, const int32_t *ids,
                                const EmbedDesc *d);
/* rho_hat (units) = column means of a (n, units); loss[0] += beta sum_j KL(rho || rho_hat_j) */
void kl_sparsity_forward(float *loss, float *rho_hat, const float *a, const KlDesc *d);
/* da (n, units) += beta/n (-rho/rho_hat_j + (1-rho)/(1-rho_hat_j)) */
void kl_sparsity_backward_data(float *da, const float *rho_hat, const KlDesc *d);
/* y (count) = sign(x) max(|x| - d->scalar, 0); y may alias x */
void shrink_run(float *y, const float *x, const MemDesc *d);
/* out[0] = sum |x (count)| */
void norm1_run(float *out, const float *x, const MemDesc *d);
/* out[0] = sum of x^2 over d->count, summed in double */
void sumsq_run(float *out, const float *x, const MemDesc *d);
/* y (cols, rows) = x (rows, cols)^T */
void transpose_run(float *y, const float *x, const TransposeDesc *d);

#endif
