/* tests/ref_ops.h — naive reference implementations of the ops in double: the plainest
 * loops that say what each op means (no im2col, no BLAS, no OpenMP), so the kernels in
 * ops/ can be compared against something that shares none of their code. Gradients are
 * the pure values (no accumulate); tests add the prior contents themselves. */
#ifndef DLPERF_REF_OPS_H
#define DLPERF_REF_OPS_H

#include <stdint.h>

#include "ops/ops.h"

/* c (m, n) = alpha op(a) op(b) + beta c0 (c0 may be NULL when beta == 0) */
void ref_gemm(double *c, const float *a, const float *b, const float *c0, const GemmDesc *d);
/* the same plus bias (n) added to every row (d->bias) */
void ref_gemm_bias(double *c, const float *a, const float *b, const float *c0, const float *bias,
                   const GemmDesc *d);
/* batch GEMMs, c (batch, m, n) = alpha op(a) op(b) + beta c0 (c0 may be NULL when beta == 0) */
void ref_bmm(double *c, const float *a, const float *b, const float *c0, const BmmDesc *d);

/* y (n, k, oh, ow) from x (n, c, h, w) and w (k, c/g, r, s) */
void ref_conv_forward(double *y, const float *x, const float *w, const ConvDesc *d);
void ref_conv_backward_data(double *dx, const float *dy, const float *w, const ConvDesc *d);
void ref_conv_backward_weights(double *dw, const float *dy, const float *x, const ConvDesc *d);

void ref_pool_forward(double *y, const float *x, const PoolDesc *d);
/* max: gradient to the first (row-major) maximum of each window */
void ref_pool_backward_data(double *dx, const float *dy, const float *x, const PoolDesc *d);

void ref_bias_forward(double *y, const float *y0, const float *b, const BiasDesc *d);
void ref_bias_backward_weights(double *db, const float *dy, const BiasDesc *d);

/* gelu: x 0.5 (1 + erf(x / sqrt 2)), PyTorch's formula as written (libm's erf) */
void ref_act_forward(double *y, const float *x, ActKind act, size_t count);
/* y: the forward output, or for gelu the forward input x */
void ref_act_backward_data(double *dx, const float *dy, const float *y, ActKind act,
                           size_t count);

double ref_softmax_xent_forward(double *probs, const float *logits, const int32_t *labels,
                                int n, int classes);
void ref_softmax_xent_backward_data(double *dlogits, const float *probs,
                                    const int32_t *labels, const XentDesc *d);

double ref_sqerr_forward(const float *pred, const float *target, const SqErrDesc *d);
void ref_sqerr_backward_data(double *dpred, const float *pred, const float *target,
                             const SqErrDesc *d);

/* act as the kernel saves it: [sig(i), tanh(j), sig(f + fb), sig(o)] */
void ref_lstm_forward(double *c_t, double *h_t, double *act, const float *pre,
                      const float *c_prev, const float *b, const LstmCellDesc *d);
/* from the raw inputs (pre, b, c_prev), independent of the saved act */
void ref_lstm_backward_data(double *dpre, double *dc_prev, const float *dh_t,
                            const float *dc_t, const float *pre, const float *c_prev,
                            const float *b, const LstmCellDesc *d);

/* ---- model-zoo ops ---- */

/* Training forward from scratch: mean, biased var, y; run_* = Keras' moving averages of
 * run0_* (the variance made unbiased with m / (m - 1 - eps)). Any output may be NULL. */
void ref_batchnorm_forward_train(double *y, double *mean, double *invstd, double *run_mean,
                                 double *run_var, const float *x, const float *gamma,
                                 const float *beta, const float *run0_mean,
                                 const float *run0_var, const BnDesc *d);
void ref_batchnorm_forward_infer(double *y, const float *x, const float *gamma,
                                 const float *beta, const float *run_mean,
                                 const float *run_var, const BnDesc *d);
/* The gradients of L = sum y * dy through the batch statistics, from x alone (the textbook
 * chain rule, not the kernel's closed form): dx, dgamma, dbeta. */
void ref_batchnorm_backward(double *dx, double *dgamma, double *dbeta, const float *dy,
                            const float *x, const float *gamma, const BnDesc *d);

/* Caffe LRN: y, scale (either may be NULL) */
void ref_lrn_forward(double *y, double *scale, const float *x, const LrnDesc *d);
/* dx of L = sum y * dy, by the chain rule through every scale in x's windows */
void ref_lrn_backward_data(double *dx, const float *dy, const float *x, const LrnDesc *d);

void ref_channel_copy_forward(double *y, const float *y0, const float *x, const ChannelDesc *d);
void ref_channel_copy_backward_data(double *dx, const float *dy, const ChannelDesc *d);
void ref_embedding_forward(double *y, const int32_t *ids, const float *W, const EmbedDesc *d);
void ref_embedding_backward_weights(double *dW, const float *dy, const int32_t *ids,
                                    const EmbedDesc *d);
/* returns the penalty beta * sum KL; rho_hat (units) may be NULL */
double ref_kl_forward(double *rho_hat, const float *a, const KlDesc *d);
/* the added term of da (n, units), from a (through rho_hat) */
void ref_kl_backward_data(double *da, const float *a, const KlDesc *d);

void ref_axpby(double *y, const float *a, const float *b, const AxpbyDesc *d);
/* FISTA: sign(x) max(|x| - t, 0), and sum |x| */
void ref_shrink(double *y, const float *x, size_t count, double t);
double ref_norm1(const float *x, size_t count);

/* ---- the transformer's ops ---- */

/* per row of x (n, h): mean, biased var, rstd; y = (x - mean) rstd gamma + beta. Any of
 * y, mean, rstd may be NULL. */
void ref_layernorm_forward(double *y, double *mean, double *rstd, const float *x,
                           const float *gamma, const float *beta, const LnDesc *d);
/* The gradients of L = sum y * dy through each row's mean and variance, from x alone by
 * the textbook chain rule (dL/dvar, dL/dmean; not the kernel's closed form). */
void ref_layernorm_backward(double *dx, double *dgamma, double *dbeta, const float *dy,
                            const float *x, const float *gamma, const LnDesc *d);
/* y = softmax of each row of x (n, h) */
void ref_softmax_forward(double *y, const float *x, int n, int h);
/* dx = J^T dy per row with the Jacobian dy_i/dx_j = y_i (delta_ij - y_j), from x */
void ref_softmax_backward_data(double *dx, const float *dy, const float *x, int n, int h);
void ref_binary_forward(double *y, const float *a, const float *b, BinaryKind op, size_t count);
/* the pure gradients da, db of L = sum y * dy */
void ref_binary_backward_data(double *da, double *db, const float *dy, const float *a,
                              const float *b, BinaryKind op, size_t count);
void ref_scalar_forward(double *y, const float *a, double s, BinaryKind op, size_t count);
void ref_scalar_backward_data(double *da, const float *dy, const float *a, double s,
                              BinaryKind op, size_t count);

/* One optimizer step in double on double state; g' = g + l2 w for i < decay_count. */
void ref_update_step(OpKind kind, const UpdateDesc *u, double *w, double *s1, double *s2,
                     const float *g);

#endif
