/* models/zoo_build.h — a small builder the zoo writes its models with (internal).
 *
 * Each helper appends one layer and returns its index, so a network reads like the
 * Keras / Caffe definition it reproduces:
 *     int x = zb_conv(b, "conv1", IN, 64, 7, 2, PAD_SAME, ACT_RELU);
 *     x = zb_pool(b, "pool1", x, POOL_MAX, 3, 2, PAD_SAME);
 * IN (-1) is the model input.
 */
#ifndef DLPERF_ZOO_BUILD_H
#define DLPERF_ZOO_BUILD_H

#include "models/model.h"

enum { IN = -1, NOACT = ACTIVATION_NONE };

typedef struct {
    LayerSpec *layers;
    int n, cap;
    InitKind init; /* initializer of the kernels added next */
} Builder;

int zb_add(Builder *b, LayerSpec l);
/* printf-style layer names */
LayerSpec zb_layer(LayerKind kind, int input, int act, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

int zb_dense(Builder *b, const char *name, int in, int units, int act);
int zb_conv(Builder *b, const char *name, int in, int filters, int k, int stride, PadMode pad, int act);
/* explicit symmetric padding (Caffe / Keras ZeroPadding), optional groups and bias */
int zb_conv_pad(Builder *b, const char *name, int in, int filters, int k, int stride, int pad, int groups,
                bool bias, int act);
int zb_pool(Builder *b, const char *name, int in, PoolKind kind, int win, int stride, PadMode pad);
/* explicit symmetric padding, floor rounding (Keras ZeroPadding + VALID pooling) */
int zb_pool_pad(Builder *b, const char *name, int in, PoolKind kind, int win, int stride, int pad);
/* Caffe pooling: explicit padding and ceil rounding */
int zb_pool_caffe(Builder *b, const char *name, int in, PoolKind kind, int win, int stride, int pad);
int zb_global_pool(Builder *b, const char *name, int in, PoolKind kind);
int zb_bn(Builder *b, const char *name, int in, float eps, float momentum, int act);
int zb_lrn(Builder *b, const char *name, int in, int size, float alpha, float beta, float k);
int zb_dropout(Builder *b, const char *name, int in, float rate);
int zb_concat(Builder *b, const char *name, const int *inputs, int n);
int zb_add2(Builder *b, const char *name, int x, int y, int act);
int zb_act(Builder *b, const char *name, int in, int act);
int zb_flatten(Builder *b, const char *name, int in);
int zb_lstm(Builder *b, const char *name, int in, LayerKind kind, int hidden, bool last_only);
/* the transformer's layers; init N(0, scale) for their tables and kernels */
int zb_layernorm(Builder *b, const char *name, int in, float eps);
int zb_attention(Builder *b, const char *name, int in, int heads, bool causal, float dropout, float scale,
                 float proj_scale);
int zb_position(Builder *b, const char *name, int in, int positions, float scale);
/* BERT's token-type table of `types` rows, every token of type 0 */
int zb_token_types(Builder *b, const char *name, int in, int types, float scale);
/* a trainable token embedding of a time-major sequence of ids (T, 1), decayed or not */
int zb_token_embedding(Builder *b, const char *name, int vocab, int dim, float scale, bool decayed);
/* dense with a N(0, scale) kernel (whatever the builder's initializer) */
int zb_dense_normal(Builder *b, const char *name, int in, int units, int act, float scale);

/* Finishes m with the builder's layers (ownership passes to m; zoo models live for the
 * whole process). */
void zb_finish(Builder *b, ModelSpec *m);

#endif
