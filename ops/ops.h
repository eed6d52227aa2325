/* ops/ops.h — the operation API shared by models, microbenchmarks and the predictor.
 *
 * Every operation has three faces that live together here (seed 002's "BLAS for deep
 * learning"):
 *   1. a descriptor  (OpDesc: kind + phase + shape parameters),
 *   2. a cost        (op_cost: FLOPs and compulsory bytes, from the descriptor alone),
 *   3. a kernel      (op_run: executes the descriptor on caller-provided buffers).
 * Models run kernels only through descriptors, microbenchmarks time the very same
 * descriptors, and the predictor prices them: what is measured is what the models run.
 *
 * Conventions
 *   - fp32, row-major, tensors NCHW; weights (K, C/groups, R, S); dense kernels (in, out).
 *   - Buffers are passed to op_run as an array `bufs[]` in a fixed order per kind:
 *     OUTPUTS FIRST, then inputs (see the table in op_buffer_info). Integer buffers are
 *     int32_t; everything else is float.
 *   - Backward ops ACCUMULATE into gradients when their `accumulate` flag (or GEMM beta)
 *     says so; with the flag cleared they overwrite. Zeroing is a separate op (OP_ZERO).
 *     The plan builder clears the flag for the first writer of a gradient in a step, so a
 *     training step never memsets gradient buffers it is about to overwrite.
 *   - No kernel allocates memory. Scratch space comes from `workspace`, sized by
 *     op_workspace_bytes(); it may be NULL when that is 0.
 *   - Kernels may use OpenMP internally but never call BLAS from inside a parallel region.
 */
#ifndef DLPERF_OPS_H
#define DLPERF_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { OP_MAX_BUFS = 8, OP_KEY_MAX = 160 };

typedef enum {
    OP_GEMM,         /* C = alpha*op(A)*op(B) + beta*C (+ bias rows) (OpenBLAS sgemm)    */
    OP_CONV2D,       /* 2-D convolution; phase = FWD, BWD_DATA or BWD_WEIGHTS            */
    OP_POOL2D,       /* max / average pooling; phase = FWD or BWD_DATA                   */
    OP_BIAS,         /* FWD: y[n,c,i] += b[c];  BWD_WEIGHTS: db[c] (+)= sum_{n,i} dy     */
    OP_ACT,          /* ReLU / sigmoid / tanh / GELU; FWD y = f(x); BWD_DATA dx = dy f'(.) */
    OP_SOFTMAX_XENT, /* softmax + cross-entropy, mean over the batch                     */
    OP_SQERR,        /* squared error: mean (MSE) or sum; FWD loss, BWD_DATA dpred        */
    OP_LSTM_CELL,    /* element-wise LSTM cell for one time step (the GEMMs are OP_GEMM)  */
    OP_SGD,          /* w -= lr * g                                                      */
    OP_RMSPROP,      /* Keras RMSprop: a = rho*a + (1-rho)*g^2; w -= lr*g/(sqrt(a)+eps)   */
    OP_ZERO,         /* x = 0                                                            */
    OP_COPY,         /* dst = src                                                        */
    OP_STREAM,       /* STREAM kernels copy/scale/add/triad (memory-bandwidth benchmark)  */
    /* ---- the model zoo's layers ---- */
    OP_BATCHNORM,    /* batch normalisation over (n, c, spatial) per channel               */
    OP_LRN,          /* local response normalisation across channels (Caffe / AlexNet)   */
    OP_DROPOUT,      /* inverted dropout with a counter-based mask                        */
    OP_CHANNEL_COPY, /* concat along channels: copy into / out of a channel slice         */
    OP_AXPBY,        /* y = alpha*a + beta*b (residual add, gradient accumulation, FISTA) */
    OP_EMBEDDING,    /* y = W[ids] rows; BWD_WEIGHTS scatter-adds into dW                 */
    OP_KL_SPARSITY,  /* sparse autoencoder penalty beta * sum_j KL(rho || mean_n a_nj)    */
    OP_SHRINK,       /* soft threshold sign(x) * max(|x| - t, 0) (FISTA)                 */
    OP_NORM1,        /* out[0] = sum |x| (FISTA's objective)                              */
    OP_MOMENTUM,     /* Keras SGD with momentum (optionally Nesterov)                     */
    OP_ADAM,         /* Keras Adam                                                       */
    /* ---- DeepBench's kernels and the machine's limits ---- */
    OP_GRU_CELL,     /* element-wise GRU cell for one time step (DeepBench/cuDNN form)     */
    OP_SPMM,         /* C = A * B with A sparse (CSR) and B, C dense (DeepBench sparse)    */
    OP_PEAK_FMA,     /* register-resident FMA chains: the compute roof (microbench only)  */
    OP_MEMBW,        /* read / triad sweeps of a working set: each memory level's bandwidth */
    /* ---- the transformer's building blocks (what published GPU per-op data measures) ---- */
    OP_BMM,          /* batched GEMM: C[b] = op(A[b]) op(B[b]) + beta C[b] (attention)    */
    OP_LAYERNORM,    /* layer normalisation over the last dimension of (n, h)             */
    OP_SOFTMAX,      /* softmax over the last dimension of (n, h) (attention weights)     */
    OP_BINARY,       /* y = a op b element-wise: add, mul, pow, div (same shapes)         */
    OP_SCALAR,       /* y = a op s with a scalar s: add, mul, pow, div                    */
    OP_SUMSQ,        /* out[0] = sum x^2 (the gradients' global norm, for clipping)       */
    OP_ADAMW,        /* PyTorch AdamW: decoupled weight decay, optional norm clipping     */
    OP_TRANSPOSE,    /* y (cols, rows) = x (rows, cols)^T (feature maps to a sequence)    */
    /* ---- collectives inside a step ---- */
    OP_ALLREDUCE,    /* y = the sum of x over the tensor-parallel group (Megatron's f, g) */
    OP_KIND_COUNT
} OpKind;

typedef enum {
    PHASE_FWD,
    PHASE_BWD_DATA,
    PHASE_BWD_WEIGHTS,
    PHASE_UPDATE,
    PHASE_COUNT
} OpPhase;

typedef enum { ACT_RELU, ACT_SIGMOID, ACT_TANH, ACT_GELU, ACT_COUNT } ActKind;
/* The element-wise operators of OP_BINARY and OP_SCALAR (names "add", "mul", "pow", "div"). */
typedef enum { BIN_ADD, BIN_MUL, BIN_POW, BIN_DIV, BIN_COUNT } BinaryKind;
typedef enum { POOL_MAX, POOL_AVG } PoolKind;
typedef enum { STREAM_COPY, STREAM_SCALE, STREAM_ADD, STREAM_TRIAD, STREAM_COUNT } StreamKind;
typedef enum { PAD_VALID, PAD_SAME } PadMode; /* TF semantics, see conv_desc_init */
typedef enum { MEMBW_READ, MEMBW_TRIAD, MEMBW_HANDOFF, MEMBW_CROSS, MEMBW_RETAIN, MEMBW_SHARED, MEMBW_COUNT } MembwKind;

/* C(m x n) = alpha * op(A)(m x k) * op(B)(k x n) + beta * C, row-major, tightly packed.
 * trans_a: A is stored (k x m); trans_b: B is stored (n x k).
 * bias: C = alpha op(A) op(B) + beta C + bias, bias (n) added to every one of the m rows
 * (PyTorch's nn.Linear, addmm: the input (m, k), the weight stored (n, k), so trans_b = 1;
 * the kernel writes the bias into C and runs the GEMM with beta = 1 over it, as PyTorch's
 * addmm does). The bias's gradient is not a GEMM: it is OP_BIAS BWD_WEIGHTS over dC
 * (n = m, c = n, spatial = 1). */
typedef struct {
    int m, n, k;
    bool trans_a, trans_b;
    float alpha, beta;
    bool bias;
} GemmDesc;

/* batch independent GEMMs, each C[b] (m x n) = alpha * op(A[b]) op(B[b]) + beta * C[b], with
 * GEMM's conventions (row-major, trans_a: A[b] stored (k x m), trans_b: B[b] stored
 * (n x k)); the batch's matrices tightly packed one after the other (A (batch, m, k),
 * B (batch, k, n), C (batch, m, n)). Attention's QK^T and (weights)V at batch = batch *
 * heads. Like GEMM it runs the same kernel in every phase: the backward passes of
 * C = op(A) op(B) are BMMs with transposes (beta = 1 to accumulate into a gradient, 0 to
 * write it):
 *   dA:  trans_a = 0:  dA (m, k) = dC op(B)^T  -> op_bmm(p, batch, m, k, n, 0, !tb, beta)
 *                      with A <- dC, B <- B
 *        trans_a = 1:  dA (k, m) = op(B) dC^T  -> op_bmm(p, batch, k, m, n, tb, 1, beta)
 *                      with A <- B, B <- dC
 *   dB:  trans_b = 0:  dB (k, n) = op(A)^T dC  -> op_bmm(p, batch, k, n, m, !ta, 0, beta)
 *                      with A <- A, B <- dC
 *        trans_b = 1:  dB (n, k) = dC^T op(A)  -> op_bmm(p, batch, n, k, m, 1, ta, beta)
 *                      with A <- dC, B <- A
 * (the same recipe holds for OP_GEMM, batch 1). The kernel is a loop of sgemm calls, one
 * per matrix, each threaded by OpenBLAS.
 * Strided (cublasSgemmStridedBatched's parameters): lda, ldb, ldc are the row strides of
 * the stored matrices and stride_a, stride_b, stride_c the distances between consecutive
 * matrices, in elements; 0 means packed (the stored row length; the matrix size). A
 * decoder's attention reads its heads where the fused QKV projection wrote them and writes
 * its context where the output projection reads it, with no transposes (Megatron's
 * [s, b, heads * head_dim] layout): head i of a (T, batch, heads, 3 head_dim) buffer is a
 * (T, head_dim) matrix at offset 3 i head_dim with row stride 3 batch heads head_dim. The
 * C matrices must not overlap: each one a block past the previous (stride_c >= (m - 1)
 * ldc + n), or interleaved rows (stride_c >= n and (batch - 1) stride_c + n <= ldc). */
typedef struct {
    int batch, m, n, k;
    bool trans_a, trans_b;
    float alpha, beta;
    int lda, ldb, ldc;
    size_t stride_a, stride_b, stride_c;
} BmmDesc;

/* Convolution over x (n, c, h, w) with w (k, c/groups, r, s) giving y (n, k, out_h, out_w).
 * Padding may be asymmetric (TF "SAME" puts the extra pixel at the bottom/right).
 * accumulate: for BWD_DATA (dx) and BWD_WEIGHTS (dw) add into the output instead of
 * overwriting it; FWD always overwrites y. */
typedef struct {
    int n, c, h, w;
    int k, r, s;
    int stride_h, stride_w;
    int pad_top, pad_left, pad_bottom, pad_right;
    int groups;
    int out_h, out_w;
    bool accumulate;
    size_t ws_slice_floats; /* floats from one thread's workspace slice to the next; 0 (or
                               less than this op needs): packed. Not part of the key: a
                               plan sets it (op_workspace_set_slice), see ops/conv.c */
} ConvDesc;

/* Pooling over x (n, c, h, w) giving y (n, c, out_h, out_w). Max pooling ignores padded
 * cells; average pooling divides by the number of non-padded cells in the window (TF). */
typedef struct {
    PoolKind kind;
    int n, c, h, w;
    int win_h, win_w;
    int stride_h, stride_w;
    int pad_top, pad_left, pad_bottom, pad_right;
    int out_h, out_w;
    bool accumulate; /* BWD_DATA: add into dx */
} PoolDesc;

/* Bias over y viewed as (n, c, spatial): FWD y += b; BWD_WEIGHTS db (+)= sum over n, spatial. */
typedef struct {
    int n, c, spatial;
    bool accumulate;
} BiasDesc;

/* Element-wise activation over `count` values. FWD: y = f(x). BWD_DATA: dx = dy * f'(.),
 * written (never accumulated). The derivative of relu, sigmoid and tanh is taken from the
 * forward OUTPUT y (relu: y > 0); GELU's from the forward INPUT x, since x is not a
 * function of y. in_place: y overwrites x (FWD), dx overwrites dy (BWD_DATA) — one buffer
 * fewer, and half the memory traffic of a separate output (no write-allocate reads), so a
 * layer's fused activation is a different kernel from a separate one. GELU cannot run in
 * place (its backward needs the x the output would overwrite): the descriptor check
 * refuses it.
 * GELU is PyTorch's default nn.GELU, the exact erf form y = x * 0.5 * (1 + erf(x/sqrt(2)))
 * = x Phi(x), Phi the standard normal CDF; dx = dy * (Phi(x) + x phi(x)), phi the normal
 * density. Phi is computed from erfc of |x|/sqrt(2), so both tails keep their relative
 * accuracy (ops/vecmath.h). */
typedef struct {
    ActKind act;
    size_t count;
    bool in_place;
} ActDesc;

/* Softmax cross-entropy over logits (n, classes) with int32 labels (n).
 * FWD: loss = -(1/n) sum log softmax(logits)[label]; probs saved for BWD.
 * BWD_DATA: dlogits = scale * (probs - onehot(label)) / n, written.
 * A label of XENT_IGNORE (PyTorch's ignore_index, -100: a masked LM's unmasked positions)
 * scores nothing: the row adds no loss and gets a zero gradient, and n is the count of the
 * other rows (no rows counted: loss 0). Every row's probabilities are computed (the work
 * does not depend on the labels). */
enum { XENT_IGNORE = -100 };
/* parts > 1: vocabulary-parallel (Megatron's parallel cross-entropy). The logits are one
 * tensor-parallel rank's block of classes columns of a softmax over `total` classes split
 * over `parts` ranks: the rank's columns are the classes [rank * classes, rank * classes +
 * classes), those from `total` on padding (scored as absent: probability 0). The row's max
 * and its sum of exponentials (with the label's logit, found on the rank that holds it) are
 * summed over the group inside the op, so every rank computes the whole loss and its own
 * columns' probabilities and gradient. Labels are in [0, total). In a group of one the op
 * is the rank 0 block alone (what a calibration times). " parts=P total=V" ends the key. */
typedef struct {
    int n, classes;
    float scale;
    int parts, total;
} XentDesc;

/* Squared error between pred and target, both (n, features).
 * mean = true (Keras 'mse'): loss = weight * sum (pred-target)^2 / (n*features).
 * mean = false (summed, rnn-benchmarks): loss = weight * sum (pred-target)^2.
 * weight (default 1; UFLDL's autoencoder uses 1/(2n)) is not part of the key.
 * BWD_DATA: dpred = scale * d loss / d pred, written. */
typedef struct {
    int n, features;
    bool mean;
    float scale;
    float weight;
} SqErrDesc;

/* One LSTM time step (TensorFlow BasicLSTMCell: gates in the order i, j, f, o of the
 * pre-activation columns; forget bias added to f; no peepholes).
 *   c_t = c_{t-1} * sigmoid(f + b_f + forget_bias) + sigmoid(i + b_i) * tanh(j + b_j)
 *   h_t = tanh(c_t) * sigmoid(o + b_o)
 * pre is (batch, 4*hidden) = x_t W_x + h_{t-1} W_h, computed by OP_GEMM. */
typedef struct {
    int batch, hidden;
    float forget_bias;
} LstmCellDesc;

/* Optimizer updates over `count` parameters (one flat buffer).
 * L2 weight decay: for i < decay_count the gradient used is g_i + l2 * w_i (the buffer g
 * is not modified). Layouts put every decayed tensor (conv/dense kernels) first, so decay
 * is a prefix. Keras' kernel_regularizer l2(wd) adds wd*sum(w^2) to the loss: l2 = 2*wd.
 *   ADAMW     PyTorch's AdamW (Loshchilov & Hutter): the decay is decoupled from the
 *             gradient, w *= 1 - lr * weight_decay on the decay prefix (l2 unused), then
 *             m = beta1 m + (1-beta1) g;  v = beta2 v + (1-beta2) g^2;
 *             w -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 * Clipping (any update; clip > 0): g is scaled by min(1, clip / (norm + 1e-6)), norm =
 * sqrt(sumsq[0]) of all the gradients (torch.nn.utils.clip_grad_norm_), sumsq an extra
 * input (OP_SUMSQ over the gradient buffer writes it); with grad_ranks, of their mean. The
 * factor is folded into the update's read of g, as the mean over ranks is: no pass of its
 * own over the gradients. clip, like lr, is a value, not part of the key.
 *   SGD       w -= lr * g
 *   RMSPROP   a = rho*a + (1-rho)*g^2;  w -= lr * g / (sqrt(a) + eps)           (Keras 2)
 *   MOMENTUM  v = momentum*v - lr*g;  w += v, or w += momentum*v - lr*g if nesterov (Keras 2)
 *   ADAM      t = step (1-based); lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t);
 *             m = beta1*m + (1-beta1)*g;  v = beta2*v + (1-beta2)*g^2;
 *             w -= lr_t * m / (sqrt(v) + eps)                                      (Keras 2)
 * ADAM needs step >= 1, beta1 and beta2 in [0, 1) and eps > 0 (the zero gradients of
 * alignment padding would otherwise give 0/0).
 * lr, l2, momentum, rho, betas, eps and step are not part of the key (they do not change
 * the time); a trainer changes lr and step between steps (schedules). decay_count is
 * (decayed elements do more work), as is nesterov. */
typedef struct {
    size_t count;
    float lr;
    float rho, eps;       /* RMSprop, Adam (eps) */
    float momentum;       /* MOMENTUM */
    bool nesterov;        /* MOMENTUM */
    float beta1, beta2;   /* ADAM */
    long step;            /* ADAM: 1 for the first update */
    size_t decay_count;   /* first decay_count parameters get L2 decay */
    float l2;             /* gradient coefficient of the decay */
    int grad_ranks;       /* g is a sum over this many data-parallel ranks: the update uses
                           * g * (1/grad_ranks), their mean (folded in: no pass of its own
                           * over the gradients); 0 or 1: one process's g as it is */
    float weight_decay;   /* ADAMW: the decoupled decay on the prefix */
    float clip;           /* > 0: clip g to this global norm (reads sumsq); 0: no clipping */
} UpdateDesc;

/* Batch normalisation of x viewed as (n, c, spatial), per channel c.
 * Training (FWD, training = true): mean and biased variance over m = n*spatial; invstd =
 * 1/sqrt(var + eps); y = gamma * (x - mean) * invstd + beta; the running statistics are
 * updated as Keras 2 does: run = momentum * run + (1 - momentum) * batch, where the batch
 * variance for the running update is made unbiased with Keras' factor m / (m - (1 + eps))
 * (keras/layers/normalization.py; 1 when m = 1). Keras 2.2's TF backend also zero-debiases
 * the moving averages (extra hidden state); that is not reproduced.
 * Inference (FWD, training = false): y = gamma * (x - run_mean) / sqrt(run_var + eps) + beta.
 * BWD_WEIGHTS: dgamma = sum dy * xhat, dbeta = sum dy (xhat = (x - mean) * invstd).
 * BWD_DATA: dx = gamma * invstd / m * (m*dy - dbeta - xhat * dgamma), m = n*spatial; it
 * reads this step's dgamma and dbeta, so BWD_WEIGHTS must run first and must write (not
 * accumulate). accumulate: BWD_WEIGHTS adds into dgamma/dbeta, BWD_DATA into dx.
 * Backward phases need training = true (they differentiate through the batch statistics);
 * eps > 0, momentum in [0, 1]. */
typedef struct {
    int n, c, spatial;
    float eps, momentum;
    bool training;
    bool accumulate;
} BnDesc;

/* Local response normalisation across channels (Caffe ACROSS_CHANNELS, AlexNet):
 * scale_c = k + alpha/size * sum_{c' in window(c)} x_c'^2 (window of `size` channels
 * centred on c, clipped at the ends); y = x * scale^-beta. FWD saves scale.
 * BWD_DATA (accumulate into dx or overwrite), Caffe's formula:
 *   dx_c = dy_c scale_c^-beta
 *          - 2 alpha beta / size * x_c * sum_{c' in window(c)} dy_c' y_c' / scale_c'
 * size is odd (Caffe requires it; "centred" needs it) and at most 255; alpha >= 0; k >= 1e-30
 * (scale must be a normal positive float: it is raised to -beta through a log). */
typedef struct {
    int n, c, spatial;
    int size;
    float alpha, beta, k;
    bool accumulate;
} LrnDesc;

/* Inverted dropout over `count` values, rate in [0, 1): mask_i = 0 with probability
 * `rate`, else 1/(1-rate) (the fp32 value 1.0f / (1.0f - rate)); y = x * mask. The draw
 * for element i is a hash of (seed, step, i) (kernels.h: dropout_bits), where step is read
 * from the int32 counter buffer (the trainer advances it), so masks differ per step, are
 * reproducible, and do not depend on the thread count.
 * BWD_DATA: dx = dy * mask, written (dx may alias dy). y may alias x. */
typedef struct {
    size_t count;
    float rate;
    uint32_t seed;
} DropoutDesc;

/* Channel concatenation, one op per input: the input x (n, c_src, spatial) is the slice
 * [offset, offset + c_src) of y (n, c_dst, spatial).
 * FWD: y[:, offset:offset+c_src, :] = x (the rest of y untouched).
 * BWD_DATA: dx (+)= dy[:, offset:offset+c_src, :] (accumulate or overwrite). */
typedef struct {
    int n, c_dst, c_src, offset, spatial;
    bool accumulate;
} ChannelDesc;

/* y = alpha * a + beta * b over `count` values; y may alias a or b. b is read whatever
 * beta is (no BLAS-style beta == 0 shortcut), so the work never depends on the values. */
typedef struct {
    size_t count;
    float alpha, beta;
} AxpbyDesc;

/* Embedding lookup: ids (n) int32 in [0, vocab); W (vocab, dim).
 * FWD: y (n, dim) row i = W[ids[i]]. BWD_WEIGHTS: dW (+)= scatter-add of dy rows at ids
 * (dW cleared first unless accumulate).
 * repeat > 0: a learned positional table (GPT-2's wpe, BERT's position embeddings) over a
 * time-major sequence of `repeat` samples: row i reads W[i / repeat] and there is no ids
 * buffer (HF's wpe(position_ids), the ids being 0..T-1 for every sample); n a multiple of
 * repeat and n / repeat <= vocab. " pos=R" ends its key. */
/* part: a vocabulary-parallel table (Megatron's VocabParallelEmbedding): W is one
 * tensor-parallel rank's block of vocab rows of a larger table, the ids
 * [rank * vocab, rank * vocab + vocab); an id outside the block looks up zeros (forward) and
 * adds nothing (backward), and the group's sum of the ranks' outputs is the whole lookup.
 * Ids are >= 0. In a group of one the block is rank 0's. " part=1" ends the key. */
typedef struct {
    int n, vocab, dim;
    bool accumulate;
    int repeat;
    bool part;
} EmbedDesc;

/* Sparse-autoencoder penalty (UFLDL), rho in (0, 1), beta >= 0: a (n, units) are sigmoid
 * activations (rho_hat must stay inside (0, 1): the penalty is not clamped, as in UFLDL);
 * rho_hat_j = mean_n a_nj; penalty = beta * sum_j [rho log(rho/rho_hat_j) +
 * (1-rho) log((1-rho)/(1-rho_hat_j))].
 * FWD: loss[0] += penalty; rho_hat saved. BWD_DATA: da_nj += beta/n * (-rho/rho_hat_j +
 * (1-rho)/(1-rho_hat_j)) (added to the gradient the next layer wrote). */
typedef struct {
    int n, units;
    float rho, beta;
} KlDesc;

/* Layer normalisation over the last dimension of x (n, h) (PyTorch nn.LayerNorm over h):
 * per row, mean and biased variance over its h values, rstd = 1/sqrt(var + eps),
 * xhat = (x - mean) * rstd, y = xhat * gamma + beta with gamma, beta (h).
 * FWD writes y and saves mean (n) and rstd (n) for the backward passes.
 * BWD_WEIGHTS: dgamma (+)= sum over rows of dy * xhat, dbeta (+)= sum over rows of dy.
 * BWD_DATA: dx (+)= rstd * (g - mean_h(g) - xhat * mean_h(g * xhat)), g = dy * gamma (the
 * standard formula; it needs no dgamma, so the two backward phases run in either order).
 * accumulate: BWD_* add into their outputs (the constructor sets it for backward phases,
 * the plan clears it for a first writer); FWD always writes. eps > 0 is a value, not part
 * of the key (parsed as PyTorch's 1e-5). */
typedef struct {
    int n, h;
    float eps;
    bool accumulate;
} LnDesc;

/* Softmax over the last dimension of x (n, h), numerically stable (each row's max is
 * subtracted before exp). FWD: y = softmax(x) (y may alias x). BWD_DATA, from the forward
 * output y: dx (+)= y * (dy - sum_j dy_j y_j) per row (accumulate as for LnDesc).
 * causal: attention scores of a decoder (GPT), n a multiple of h: x is n/h blocks of
 * (h queries, h keys) and query i sees keys 0..i only. Row r softmaxes its first
 * r % h + 1 columns and writes 0 to the rest, so masked keys get no weight and no
 * gradient (dx there is written 0, or left as it is when accumulating); the masked
 * columns are neither read nor exponentiated, which is about half the work. " causal=1"
 * ends the key (unmasked keys are unchanged). */
/* samples > 0 (FWD): the key padding mask of an encoder's batch (HF's attention_mask, made
 * from the token ids): x's rows are `samples` equal groups, sample b's n / samples rows (its
 * heads' blocks of h queries over h keys), and a third buffer `ids` holds the model's token
 * ids, (h, samples) time-major; key j of sample b is padding where ids[j * samples + b] ==
 * pad_id and gets weight 0, as a causal mask's keys do (with causal too, both masks hold).
 * A row left without keys is all 0. The backward needs no mask: y is 0 there. " pad=ID
 * samples=B" ends the key. */
typedef struct {
    int n, h;
    bool accumulate;
    bool causal;
    int samples, pad_id;
} SoftmaxDesc;

/* Element-wise y = a op b over `count` values, a, b and y of the same shape (no
 * broadcast); y may alias a or b. BWD_DATA writes (or, with accumulate, adds) both
 * gradients from dy, a and b:
 *   add  da = dy,           db = dy              (a and b are not read)
 *   mul  da = dy * b,       db = dy * a
 *   div  da = dy / b,       db = -dy * a / b^2   (b != 0)
 *   pow  da = dy * b * a^(b-1),  db = dy * a^b * ln(a)
 * pow's domain is a > 0 (normal floats) in both phases: a^b is computed as exp(b ln a),
 * as its gradient with respect to b needs ln a anyway. */
typedef struct {
    BinaryKind op;
    size_t count;
    bool accumulate;
} BinaryDesc;

/* Element-wise y = a op s with a scalar s (PyTorch's tensor-scalar add, mul, pow, div) over
 * `count` values; y may alias a. BWD_DATA: da (+)= dy * d(a op s)/da: dy, dy * s, dy / s,
 * dy * s * a^(s-1) (pow: a > 0, as for OP_BINARY; div: s != 0). s is a value, not part of
 * the key: the kernel does the same work whatever s is (pow is exp(s ln a) for every s, no
 * special case for s = 2 or 0.5), so one measurement prices every scalar; keys parse
 * with s = 2. */
typedef struct {
    BinaryKind op;
    size_t count;
    float scalar;
    bool accumulate;
} ScalarDesc;

/* Memory ops and STREAM kernels over `count` floats. STREAM (McCalpin):
 * copy c = a; scale b = q*c; add c = a + b; triad a = b + q*c.
 * SHRINK: y = sign(x) * max(|x| - scalar, 0) (y may alias x). NORM1: out[0] = sum |x|.
 * SUMSQ: out[0] = sum x^2. */
typedef struct {
    StreamKind kind; /* OP_STREAM only */
    size_t count;
    float scalar;
} MemDesc;

/* One GRU time step as DeepBench times it (cuDNN's GRU with CUDNN_SKIP_INPUT: only the
 * recurrent part). pre (batch, 3*hidden) = h_{t-1} R, computed by OP_GEMM, columns in the
 * order r, z, n; b (3*hidden):
 *   r = sigmoid(pre_r + b_r), z = sigmoid(pre_z + b_z), hn = pre_n + b_n,
 *   n = act(r * hn)  (act: DeepBench's README uses ReLU; cuDNN's own GRU tanh),
 *   h_t = (1 - z) * n + z * h_{t-1}.
 * FWD saves act (batch, 4*hidden): r, z, n, hn.
 * BWD_DATA: dpre (batch, 3*hidden) and dh_prev = dh_t * z, both written (the recurrent
 * GEMM's dpre R^T is then added to dh_prev by OP_GEMM with beta = 1). */
typedef struct {
    int batch, hidden;
    ActKind act; /* ACT_RELU or ACT_TANH */
} GruCellDesc;

/* C (m, n) = A (m, k) * B (k, n), A sparse in CSR with exactly nnz_per_row nonzeros in
 * every row (DeepBench's sparse kernels: a weight matrix of the given sparsity, the
 * fraction of zeros, times dense activations); B and C dense, row-major. The pattern's
 * column indices are sorted within a row (spmm_make_pattern builds a seeded one). */
typedef struct {
    int m, n, k;
    int nnz_per_row; /* = round(k * (1 - sparsity)), at least 1 */
} SpmmDesc;

/* The compute roof: each of `threads` OpenMP threads runs fma_per_thread fused
 * multiply-adds on independent register-resident accumulator chains (enough chains to
 * cover the FMA latency times the FMA ports of current x86 cores), widest vectors the CPU
 * has; out[t] receives thread t's accumulators summed. A multiple of PEAK_FMA_QUANTUM. */
typedef struct {
    int threads;
    long fma_per_thread;
} PeakDesc;

enum { PEAK_FMA_QUANTUM = 16 * 12 };

/* A memory level's bandwidth: each of `threads` threads runs `passes` passes over its own
 * working set of bytes_per_thread bytes. READ: out[t] = sum of every pass's sum of the
 * thread's slice of x (one read per element per pass). TRIAD: a = b + q*c over three
 * arrays of a third of the working set each (two reads, one write). A working set inside
 * L1, L2 or L3 measures that level; one beyond the last-level cache measures DRAM.
 * HANDOFF: READ's kernel, one pass (passes = 1), timed by the calibration right after
 * every thread has rewritten its slice (membw_produce, untimed): how fast an op reads
 * what the op before it wrote, by how much that was (the cache model's reuse curve).
 * CROSS: HANDOFF with the slices passed on: thread t reads thread (t+1) mod threads's
 * slice, just written by that thread (at least 2 threads): what an op finds that splits
 * its data differently from its producer, through the cores' coherence traffic.
 * RETAIN: HANDOFF with idle_us microseconds between the write and the read, every thread
 * computing in registers meanwhile (membw_idle, untimed): how much of the data is still in
 * the caches once that much time has passed without this process's own traffic (on a
 * shared host, the other tenants' traffic evicts it; the cache model's retention).
 * SHARED: a write over data another core holds: every thread rewrites its own slice
 * (x = -x; out[t] = the new slice's sum), timed right after every thread wrote its slice
 * and read the next thread's (membw_produce, membw_share, untimed), so that each line it
 * writes is held in two cores' caches (at least 2 threads, one pass): what an op pays to
 * write data an op of another split read (an update over weights both cores' GEMMs read).
 * On the 2-vCPU Zen 4 VM with the vCPUs apart, x37 an own write. */
typedef struct {
    MembwKind kind;
    int threads;
    size_t bytes_per_thread; /* a multiple of 192 (64-byte lines, three arrays) */
    long passes;
    long idle_us;            /* RETAIN: the wait before the read; 0 for the others */
} MembwDesc;

/* Out-of-place transpose of a row-major (rows, cols) matrix into (cols, rows): a batch of
 * feature maps (B, C, T) read as (B C, T) becomes the time-major sequence (T, B C) = (T, B, C)
 * (ViT's patches); its gradient is the transpose back (BWD_DATA, rows and cols swapped). */
typedef struct {
    int rows, cols;
} TransposeDesc;

/* The sum of `count` floats over the `ranks` ranks of this process's tensor-parallel group
 * (ops/comm.h), y = sum x, in place where y is x. Megatron's two conjugate operators are this
 * op in one phase each: g, after a row-parallel layer, sums the ranks' partial outputs in
 * the forward pass; f, before a column-parallel layer, sums the ranks' partial input
 * gradients in the backward pass. One rank: a copy. */
typedef struct {
    size_t count;
    int ranks;
} AllreduceDesc;

typedef struct {
    OpKind kind;
    OpPhase phase;
    union {
        GemmDesc gemm;
        ConvDesc conv;
        PoolDesc pool;
        BiasDesc bias;
        ActDesc act;
        XentDesc xent;
        SqErrDesc sqerr;
        LstmCellDesc lstm;
        UpdateDesc update;
        MemDesc mem;
        BnDesc bn;
        LrnDesc lrn;
        DropoutDesc dropout;
        ChannelDesc chan;
        AxpbyDesc axpby;
        EmbedDesc embed;
        KlDesc kl;
        GruCellDesc gru;
        SpmmDesc spmm;
        PeakDesc peak;
        MembwDesc membw;
        BmmDesc bmm;
        LnDesc ln;
        SoftmaxDesc softmax;
        BinaryDesc binary;
        ScalarDesc scalar;
        TransposeDesc transpose;
        AllreduceDesc allreduce;
    } u;
} OpDesc;

typedef struct {
    double flops; /* floating-point operations, a multiply-add counted as 2           */
    double bytes; /* compulsory bytes: each input read once, each output written once  */
} OpCost;

typedef enum { BUF_FLOAT, BUF_INT32 } BufType;
typedef enum { BUF_OUT, BUF_IN, BUF_INOUT } BufRole;

typedef struct {
    const char *name; /* "C", "x", "dw", ...                              */
    size_t bytes;
    BufType type;
    BufRole role;     /* INOUT: read and written (accumulate, in-place, update) */
} OpBufInfo;

/* ---- descriptor constructors (they fill derived fields; asserts on programmer error) ----
 * Backward-phase constructors (CONV2D BWD_DATA / BWD_WEIGHTS, POOL2D BWD_DATA, BIAS
 * BWD_WEIGHTS, and the model zoo's and the transformer's kinds that have the flag) set
 * accumulate = true (gradients accumulate, STYLE habit 1); the plan builder clears it for
 * the first writer. FWD descriptors have accumulate = false. */
OpDesc op_gemm(OpPhase phase, int m, int n, int k, bool trans_a, bool trans_b, float beta);
/* C (m, n) = op(A) op(B) + bias (n), beta 0: a linear layer's forward (GemmDesc.bias). */
OpDesc op_gemm_bias(OpPhase phase, int m, int n, int k, bool trans_a, bool trans_b);
/* batch GEMMs of (m, n, k) (BmmDesc); the dA/dB recipe is in BmmDesc's comment. */
OpDesc op_bmm(OpPhase phase, int batch, int m, int n, int k, bool trans_a, bool trans_b, float beta);
/* A strided BMM (BmmDesc): ld = {lda, ldb, ldc}, stride = {stride_a, stride_b, stride_c},
 * 0 packed; alpha scales op(A) op(B) (attention's 1/sqrt(head_dim)). */
OpDesc op_bmm_strided(OpPhase phase, int batch, int m, int n, int k, bool trans_a, bool trans_b,
                      float alpha, float beta, const int ld[3], const size_t stride[3]);
/* The strided BMMs of self-attention over a time-major sequence (T, batch, heads * hd) whose
 * fused projection wrote qkv (T, batch, heads, 3 hd) (BmmDesc): the scores S = q k^T /
 * sqrt(hd) (batch heads, T, T) packed, the context W v written head by head into (T, batch,
 * heads * hd), and the backward's dW = dctx v^T, dv = W^T dctx, dq = dS k / sqrt(hd), dk =
 * dS^T q / sqrt(hd) into dqkv's columns. Operands: q, k, v and dq, dk, dv at float offsets
 * 0, hd, 2 hd of qkv and dqkv. What the layer runs and the calibration measures. */
enum { ATTN_SCORES, ATTN_CONTEXT, ATTN_D_WEIGHTS, ATTN_D_V, ATTN_D_Q, ATTN_D_K, ATTN_BMMS };
void op_attention_bmms(int batch, int heads, int T, int hd, OpDesc out[ATTN_BMMS]);
/* stride and padding per TF: VALID: out = ceil((in - k + 1) / stride), no padding;
 * SAME: out = ceil(in / stride), total pad = max((out-1)*stride + k - in, 0), the extra
 * pixel (odd total) at the bottom/right. */
OpDesc op_conv2d(OpPhase phase, int n, int c, int h, int w, int k, int r, int s,
                 int stride, PadMode pad, int groups);
/* Explicit symmetric padding (Caffe/DeepBench style): out = floor((in + 2p - k)/stride) + 1. */
OpDesc op_conv2d_explicit(OpPhase phase, int n, int c, int h, int w, int k, int r, int s,
                          int stride_h, int stride_w, int pad_h, int pad_w, int groups);
OpDesc op_pool2d(OpPhase phase, PoolKind kind, int n, int c, int h, int w, int win,
                 int stride, PadMode pad);
OpDesc op_bias(OpPhase phase, int n, int c, int spatial);
OpDesc op_act(OpPhase phase, ActKind act, size_t count);
/* y over x, dx over dy (ActDesc.in_place); ACT_GELU is refused (its backward reads x). */
OpDesc op_act_in_place(OpPhase phase, ActKind act, size_t count);
OpDesc op_softmax_xent(OpPhase phase, int n, int classes);
/* The vocabulary-parallel loss (XentDesc.parts): one rank's `classes` columns of `total`. */
OpDesc op_softmax_xent_parallel(OpPhase phase, int n, int classes, int parts, int total);
OpDesc op_sqerr(OpPhase phase, int n, int features, bool mean);
OpDesc op_lstm_cell(OpPhase phase, int batch, int hidden, float forget_bias);
OpDesc op_sgd(size_t count, float lr);
OpDesc op_rmsprop(size_t count, float lr, float rho, float eps);
OpDesc op_zero(OpPhase phase, size_t count);
OpDesc op_copy(OpPhase phase, size_t count);
OpDesc op_stream(StreamKind kind, size_t count, float scalar);
/* Pooling with explicit (possibly asymmetric) padding: Caffe's ceil-mode output is
 * expressed as extra bottom/right padding. out = (in + pads - win) / stride + 1. */
OpDesc op_pool2d_pads(OpPhase phase, PoolKind kind, int n, int c, int h, int w, int win, int stride,
                      int pad_top, int pad_left, int pad_bottom, int pad_right);
/* Global pooling: one window over each whole (h, w) plane, out 1x1 (ResNet's average, a
 * sentence CNN's max over time). */
OpDesc op_pool2d_global(OpPhase phase, PoolKind kind, int n, int c, int h, int w);
OpDesc op_momentum(size_t count, float lr, float momentum, bool nesterov);
OpDesc op_adam(size_t count, float lr, float beta1, float beta2, float eps);
/* Sets L2 decay on the first decay_count (<= count) parameters of any update descriptor.
 * l2 == 0 records decay_count = 0: no decay work, and the key of an undecayed update. */
void op_update_set_decay(OpDesc *d, size_t decay_count, float l2);
/* PyTorch AdamW over count parameters, the first decay_count decayed by weight_decay
 * (decoupled; 0 none). */
OpDesc op_adamw(size_t count, float lr, float beta1, float beta2, float eps, float weight_decay,
                size_t decay_count);
/* Clips an update's gradients to global norm max_norm (> 0; 0 turns clipping off): the
 * update then reads sumsq[0], the gradients' sum of squares (op_sumsq), after w, state, g. */
void op_update_set_clip(OpDesc *d, float max_norm);
/* out[0] = sum of x^2 over count floats, in double (phase-free: FWD). */
OpDesc op_sumsq(OpPhase phase, size_t count);
OpDesc op_batchnorm(OpPhase phase, int n, int c, int spatial, float eps, float momentum, bool training);
OpDesc op_lrn(OpPhase phase, int n, int c, int spatial, int size, float alpha, float beta, float k);
OpDesc op_dropout(OpPhase phase, size_t count, float rate, uint32_t seed);
OpDesc op_channel_copy(OpPhase phase, int n, int c_dst, int c_src, int offset, int spatial);
/* TRANSPOSE: y (cols, rows) = x (rows, cols)^T; phase FWD or BWD_DATA. Buffers: y, x. */
OpDesc op_transpose(OpPhase phase, int rows, int cols);
/* ALLREDUCE: y = the tensor-parallel group's sum of x (count floats over `ranks` ranks);
 * phase FWD, BWD_DATA or UPDATE (the gradients' global norm). Buffers: y, x (y may be x). */
OpDesc op_allreduce(OpPhase phase, size_t count, int ranks);
OpDesc op_axpby(OpPhase phase, size_t count, float alpha, float beta);
OpDesc op_embedding(OpPhase phase, int n, int vocab, int dim);
/* One rank's block of a vocabulary-parallel table (EmbedDesc.part). */
OpDesc op_embedding_part(OpPhase phase, int n, int vocab, int dim);
/* The positional lookup (EmbedDesc.repeat): n rows of `repeat` samples per position. */
OpDesc op_embedding_positions(OpPhase phase, int n, int repeat, int positions, int dim);
OpDesc op_kl_sparsity(OpPhase phase, int n, int units, float rho, float beta);
OpDesc op_shrink(OpPhase phase, size_t count, float threshold);
OpDesc op_norm1(OpPhase phase, size_t count);
OpDesc op_gru_cell(OpPhase phase, int batch, int hidden, ActKind act);
/* The transformer's kinds: phase FWD, BWD_DATA (and BWD_WEIGHTS for layer norm); backward
 * phases accumulate (accumulate = true), as the other kinds' backward constructors. */
OpDesc op_layernorm(OpPhase phase, int n, int h, float eps);
OpDesc op_softmax(OpPhase phase, int n, int h);
/* The decoder's masked softmax (SoftmaxDesc.causal): n/h blocks of h queries over h keys. */
OpDesc op_softmax_causal(OpPhase phase, int n, int h);
/* The forward under a key padding mask (SoftmaxDesc.samples), causal or not. */
OpDesc op_softmax_padded(int n, int h, bool causal, int samples, int pad_id);
OpDesc op_binary(OpPhase phase, BinaryKind op, size_t count);
OpDesc op_scalar(OpPhase phase, BinaryKind op, size_t count, float scalar);
/* sparsity in [0, 1): the fraction of zeros of A; nnz_per_row = max(1, round(k * (1 - s))). */
OpDesc op_spmm(int m, int n, int k, double sparsity);
/* fma_per_thread rounded up to a multiple of PEAK_FMA_QUANTUM. */
OpDesc op_peak_fma(int threads, long fma_per_thread);
/* bytes_per_thread rounded up to a multiple of 192; passes >= 1. */
OpDesc op_membw(MembwKind kind, int threads, size_t bytes_per_thread, long passes);
/* MEMBW_RETAIN: one read of data written idle_us (0 .. MEMBW_IDLE_MAX_US) microseconds ago. */
OpDesc op_membw_retain(int threads, size_t bytes_per_thread, long idle_us);
enum { MEMBW_IDLE_MAX_US = 1000000 };
/* A seeded CSR pattern for d (OP_SPMM): row_ptr (m + 1) and col_idx (m * nnz_per_row),
 * distinct sorted columns per row, spread uniformly. */
void spmm_make_pattern(int32_t *row_ptr, int32_t *col_idx, const SpmmDesc *d, uint64_t seed);

/* ---- the three faces ---- */

/* FLOPs and compulsory bytes of one execution. */
OpCost op_cost(const OpDesc *d);

/* Scratch bytes op_run needs for this descriptor (0 if none). */
size_t op_workspace_bytes(const OpDesc *d);
/* Bytes of the slice of that workspace one thread uses (0 if none): each thread computes
 * in its own slice, thread t's starting t slices in. */
size_t op_workspace_slice_bytes(const OpDesc *d);
/* Lays d's per-thread slices `bytes` apart (at least op_workspace_slice_bytes(d)). A plan
 * gives every op its largest slice, so that thread t's slice starts at the same address in
 * every op and stays in that thread's caches (see ops/conv.c); op_workspace_bytes grows
 * to match. */
void op_workspace_set_slice(OpDesc *d, size_t bytes);
/* Workspace bytes the op's threads touch: their own slices, however far apart a plan lays
 * them (what passes through the caches, what a layer needs). */
size_t op_workspace_touched_bytes(const OpDesc *d);

/* The busiest thread's share of an execution's work at `threads` threads over an even
 * share (>= 1): what splitting into whole pieces costs. A convolution gives each thread
 * whole images (batch 3 on 2 threads: 2 images on one, 4/3); the other kernels split finer
 * than it matters (1). */
double op_thread_imbalance(const OpDesc *d, int threads);

/* True for a convolution whose kernel copies each output's window whole, as a row, where
 * the others run im2col (a sentence CNN's: one channel a group, the filter as wide as the
 * input, unpadded; ops/conv.c): the cost model fits the two apart. */
bool op_conv_rows(const OpDesc *d);
/* True for a pooling whose window is the whole plane (ops/pool.c reduces the planes side
 * by side): the cost model fits it apart from the windowed poolings. */
bool op_pool_global(const OpDesc *d);
/* True for an op that exchanges data with the other ranks of its tensor-parallel group
 * (an allreduce; the vocabulary-parallel loss's forward): every rank of the group must run
 * it together, so it is never timed by one rank alone once the group is split. */
bool op_communicates(const OpDesc *d);

/* Fills info[0..n) in the order op_run expects bufs[] and returns n (<= OP_MAX_BUFS).
 *   GEMM              C(inout if beta!=0) | A | B            (bias: C | A | B | bias(n))
 *   CONV2D  FWD       y | x | w
 *           BWD_DATA  dx | dy | w
 *           BWD_W     dw | dy | x
 *   POOL2D  FWD       y | x
 *           BWD_DATA  dx | dy | x | y
 *   BIAS    FWD       y(inout) | b
 *           BWD_W     db | dy
 *   ACT     FWD       y | x            (y may alias x)
 *           BWD_DATA  dx | dy | y      (dx may alias dy)
 *           GELU BWD_DATA  dx | dy | x (the forward INPUT; GELU is never in place)
 *   SOFTMAX_XENT FWD  loss[1] | probs | logits | labels(int32)
 *           BWD_DATA  dlogits | probs | labels(int32)
 *   SQERR   FWD       loss[1] | pred | target
 *           BWD_DATA  dpred | pred | target
 *   LSTM_CELL FWD     c_t | h_t | act(4H saved: sig(i), tanh(j), sig(f), sig(o)) | pre | c_prev | b
 *           BWD_DATA  dpre | dc_prev | dh_t | dc_t | act | c_prev | c_t
 *   SGD               w(inout) | g
 *   RMSPROP           w(inout) | acc(inout) | g
 *   ZERO              x
 *   COPY              dst | src
 *   STREAM            a | b | c        (roles depend on the kind; all three always passed)
 *   BATCHNORM FWD training   y | mean(c) | invstd(c) | run_mean(c, inout) | run_var(c, inout)
 *                            | x | gamma(c) | beta(c)
 *           FWD inference    y | x | gamma | beta | run_mean | run_var
 *           BWD_WEIGHTS      dgamma | dbeta | dy | x | mean | invstd
 *           BWD_DATA         dx | dy | x | gamma | mean | invstd | dgamma | dbeta
 *   LRN     FWD       y | scale | x
 *           BWD_DATA  dx | dy | x | y | scale
 *   DROPOUT FWD       y | mask | x | step(int32, 1)     (y may alias x)
 *           BWD_DATA  dx | dy | mask                    (dx may alias dy)
 *   CHANNEL_COPY FWD  y(inout: (n, c_dst, spatial)) | x(n, c_src, spatial)
 *           BWD_DATA  dx(n, c_src, spatial) | dy(n, c_dst, spatial)
 *   AXPBY             y | a | b                         (y may alias a or b)
 *   EMBEDDING FWD     y(n, dim) | ids(int32 n) | W(vocab, dim)
 *           BWD_W     dW(vocab, dim) | dy(n, dim) | ids(int32 n)
 *   KL_SPARSITY FWD   loss[1](inout) | rho_hat(units) | a(n, units)
 *           BWD_DATA  da(inout) | rho_hat
 *   SHRINK            y | x                             (y may alias x)
 *   NORM1             out[1] | x
 *   MOMENTUM          w(inout) | v(inout) | g
 *   ADAM              w(inout) | m(inout) | v(inout) | g
 *   GRU_CELL FWD      h_t | act(4H saved: r, z, n, hn) | pre | h_prev | b
 *           BWD_DATA  dpre | dh_prev | dh_t | act | h_prev
 *   SPMM              C(m, n) | values(m * nnz_per_row) | col_idx(int32) | row_ptr(int32 m+1)
 *                     | B(k, n)
 *   PEAK_FMA          out(threads)
 *   MEMBW   READ      out(threads) | x(threads * bytes_per_thread / 4)
 *           TRIAD     a | b | c    (each threads * bytes_per_thread / 12 floats)
 *   BMM               C(batch, m, n; inout if beta!=0) | A(batch, ...) | B(batch, ...)
 *   LAYERNORM FWD     y(n, h) | mean(n) | rstd(n) | x(n, h) | gamma(h) | beta(h)
 *           BWD_W     dgamma(h) | dbeta(h) | dy(n, h) | x(n, h) | mean(n) | rstd(n)
 *           BWD_DATA  dx(n, h) | dy(n, h) | x(n, h) | gamma(h) | mean(n) | rstd(n)
 *   SOFTMAX FWD       y(n, h) | x(n, h)                 (y may alias x)
 *           BWD_DATA  dx | dy | y
 *   BINARY  FWD       y | a | b                         (y may alias a or b)
 *           BWD_DATA  da | db | dy | a | b
 *   SCALAR  FWD       y | a                             (y may alias a)
 *           BWD_DATA  da | dy | a
 */
int op_buffer_info(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS]);

/* Executes d. bufs[] as listed above; workspace at least op_workspace_bytes(d). */
void op_run(const OpDesc *d, void *const bufs[], void *workspace);

/* ---- validation (microbenchmarks check a timed kernel outside the timed region) ---- */

/* After one op_run(d, bufs, ...) recomputes `samples` randomly chosen output elements (seeded
 * by `seed`; every element when samples >= the output size) plus the first and last element
 * of each output, directly in double from the inputs, and compares them with what the kernel
 * wrote: |got - ref| <= atol + rtol * sum|terms| (atol = 1e-6, rtol = 1e-4; sum|terms| is the
 * sum of the magnitudes of the terms that make up the element). Loss outputs are recomputed
 * in full. before[i] must hold a copy of bufs[i] taken before the run for every BUF_INOUT
 * buffer and may be NULL otherwise; outputs must not alias inputs. *max_err (if not NULL)
 * receives the largest |got - ref| / (atol + rtol * sum|terms|); true when all are <= 1. */
bool op_spot_check(const OpDesc *d, void *const bufs[], void *const before[], int samples,
                   uint64_t seed, double *max_err);

/* ---- naming, used as database keys and in tables ---- */

/* Canonical key of what is timed, e.g. "gemm m=60 n=2000 k=60483 ta=0 tb=0 beta=0" or
 * "conv2d bwd_weights n=128 c=3 h=227 w=227 k=64 r=11 s=11 sh=4 sw=4 p=0,0,0,0 g=1 acc=1";
 * the transformer's kinds: "gemm m=64 n=768 k=3072 ta=0 tb=1 beta=0 bias=1",
 * "bmm b=96 m=128 n=128 k=64 ta=0 tb=1 beta=0", "layernorm fwd n=4096 h=768 acc=0",
 * "softmax bwd_data n=12288 h=128 acc=1", "act fwd gelu count=3145728",
 * "binary bwd_data pow count=1000 acc=1", "scalar fwd mul count=1000 acc=0".
 * Two descriptors with the same key run the same kernel on the same sizes. Only the enums
 * are checked, not the shape, so a normalised descriptor (e.g. batch 0) can be keyed; such
 * a key does not parse back. */
void op_key(const OpDesc *d, char out[OP_KEY_MAX]);
/* Parses a key produced by op_key back into a descriptor; false if malformed. */
bool op_key_parse(const char *key, OpDesc *d);

const char *op_kind_name(OpKind k);   /* "gemm", "conv2d", ...  */
/* The kind runs one kernel whatever the phase, and its key carries no phase (it parses as
 * the constructor's phase): GEMM, BMM, the optimizers, zero, copy, STREAM, axpby, shrink,
 * norm1, sumsq, SpMM and the limit kernels. A plan may put such an op in any phase; its
 * measurements are the same whichever phase measured them. */
bool op_kind_phaseless(OpKind k);
const char *op_phase_name(OpPhase p); /* "fwd", "bwd_data", "bwd_weights", "update" */
const char *op_act_name(ActKind a);   /* "relu", "sigmoid", "tanh", "gelu" */
const char *op_binary_name(BinaryKind b); /* "add", "mul", "pow", "div" */
bool op_kind_from_name(const char *name, OpKind *out);

/* ---- library facts ---- */

/* A buffer for kernels (ops_buffer_free it): 64-byte aligned, and for 2 MiB and more
 * aligned to 2 MiB and advised to use transparent huge pages. First touches of 4 KiB pages
 * cost ~6 us each in a VM (a 1 GiB buffer: 1.5 s), and big tensors on 4 KiB pages time
 * differently (TLB misses): calibration and training allocate alike, so both see the same
 * pages. NULL if out of memory. */
void *ops_buffer_alloc(size_t bytes);
/* Frees a buffer ops_buffer_alloc gave for `bytes` (the same size; NULL is a no-op), its
 * huge-page advice taken back first. The advice belongs to the address range, not the
 * allocation: where the buffer came from the heap (under mpirun, always:
 * comm_reuse_collective_buffers), a plain free() left it on the freed range, and whatever
 * the allocator later placed there (small objects, the MPI library's allreduce
 * temporaries) faulted whole 2 MiB pages once malloc_trim had released it: basic-lstm
 * validated at np=2 after alexnet-owt in one process peaked 16 MiB above its prediction
 * (-10.2%), and 1.2% above it with the advice taken back. */
void ops_buffer_free(void *p, size_t bytes);

/* The memory a buffer of `bytes` from ops_buffer_alloc occupies once all of it is
 * touched: whole 2 MiB pages for one of 2 MiB and more while the kernel grants
 * transparent huge pages to advised memory (THP "always" or "madvise"), else whole base
 * pages. A 2.1 MiB arena so holds 4 MiB: the zoo's small models' runs peaked 9-19% above
 * their arenas' bytes (validate, FISTA: 2.6 MiB over its 8.1 MiB of arenas). */
size_t ops_buffer_footprint(size_t bytes);

/* ---- this process's memory, as the kernel counts it ---- */

/* MemAvailable from /proc/meminfo (bytes), or -1 if unknown; the override instead, once
 * set. */
double mem_available_bytes(void);
/* Take `bytes` (> 0) as the memory available from now on: every fit check (calibration
 * kernels, collectives, runs, predictions) then sizes against a smaller node, as
 * DLPERF_MEM_AVAILABLE asks (cli/main.c). */
void mem_available_override(double bytes);
/* Peak resident set size of this process (VmHWM, bytes), or -1. */
double peak_rss_bytes(void);
/* VmRSS of this process now (bytes), 0 if unknown. */
double current_rss_bytes(void);
/* Resets this process's peak RSS (VmHWM) to its current RSS (Linux clear_refs 5), so that
 * the peak of one run is not that of an earlier one in the same process. */
void peak_rss_reset(void);

/* Denormal floats are flushed to zero, as results (FTZ) and as inputs (DAZ), on this
 * thread, the OpenMP pool's threads, and every compute thread started from it afterwards
 * (the pthread build's OpenBLAS workers are restarted so they inherit it), as
 * TensorFlow's thread pools do. On this Xeon VM the LSTM benchmarks' gradients decay
 * into denormals and a basic-lstm step took 29.4 s instead of 1.2 s (1 thread; same
 * losses). Call before any kernel runs. */
void ops_flush_denormals(void);

/* Sets the thread count of both OpenBLAS and the OpenMP regions in the kernels. */
void ops_set_threads(int threads);
int ops_get_threads(void);
/* Kernels split loops of at least this many elements over the OpenMP threads and run
 * smaller ones serially (see ops.c for the measurement behind the default). Tests lower
 * it to exercise the parallel paths on small shapes (results agree up to the rounding
 * of parallel sums). */
enum { OPS_PAR_MIN_DEFAULT = 1 << 19 };
void ops_set_parallel_min(size_t elements);
/* OpenBLAS core type in use ("SkylakeX", "Haswell", ...) and its configuration string. */
const char *ops_blas_core(void);
const char *ops_blas_config(void);
/* How the loaded OpenBLAS runs its threads: "OpenMP" (the build dlperf links: GEMMs and
 * kernels share one pool), "pthreads" (its own workers, which keep spinning after each
 * GEMM), "sequential" or "unknown". */
const char *ops_blas_threading(void);

#endif
