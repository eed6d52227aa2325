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

/* y (n, k, oh, ow) from x (n, c, h, w) and w (k, c/g, r, s) */
void ref_conv_forward(double *y, const float *x, const float *w, const ConvDesc *d);
void ref_conv_backward_data(double *dx, const float *dy, const float *w, const ConvDesc *d);
void ref_conv_backward_weights(double *dw, const float *dy, const float *x, const ConvDesc *d);

void ref_pool_forward(double *y, const float *x, const PoolDesc *d);
/* max: gradient to the first (row-major) maximum of each window */
void ref_pool_backward_data(double *dx, const float *dy, const float *x, const PoolDesc *d);

void ref_bias_forward(double *y, const float *y0, const float *b, const BiasDesc *d);
void ref_bias_backward_weights(double *db, const float *dy, const BiasDesc *d);

void ref_act_forward(double *y, const float *x, ActKind act, size_t count);
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

#endif
