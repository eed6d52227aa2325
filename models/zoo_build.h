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
/* ViT's: feature maps (C, H, W) to the sequence (H W, C); a learned token prepended, N(0,
 * scale); the sequence's first step */
int zb_to_sequence(Builder *b, const char *name, int in);
int zb_class_token(Builder *b, const char *name, int in, float scale);
int zb_first_step(Builder *b, const char *name, int in);
/* BERT's token-type table of `types` rows, every token of type 0 */
int zb_token_types(Builder *b, const char *name, int in, int types, float scale);
/* a trainable token embedding of a time-major sequence of ids (T, 1), decayed or not */
int zb_token_embedding(Builder *b, const char *name, int vocab, int dim, float scale, bool decayed);
/* dense with a N(0, scale) kernel (whatever the builder's initializer) */
int zb_dense_normal(Builder *b, const char *name, int in, int units, int act, float scale);

/* One pre-norm transformer block, x + drop(attn(ln(x))), x + drop(mlp(ln(x))) (GPT-2's,
 * ViT's, one tensor-parallel rank's share), its layers named prefix + the part's name (a
 * dropout only where its rate is > 0). Returns the block's output. */
typedef struct {
    const char *ln1, *attn, *attn_drop, *res1, *ln2, *fc, *proj, *mlp_drop, *res2;
} PreNormNames;
typedef struct {
    int heads, shards, ffn, act, width;
    bool causal;
    float eps, dropout, attn_dropout, init, proj_init;
    PreNormNames names;
} PreNormBlock;
int zb_prenorm_block(Builder *b, const char *prefix, const PreNormBlock *blk, int x);

/* A transformer as HF's configs describe one. Three families:
 *   TF_GPT2: pre-norm blocks x + drop(attn(ln(x))), x + drop(mlp(ln(x))), a final norm,
 *            the LM head tied to the token table (no bias); layers named as HF's GPT-2
 *            (wte, wpe, h<i>.ln_1, h<i>.attn, ...);
 *   TF_OPT:  GPT-2's blocks; the positions table `positions + 2` rows (OPT's offset);
 *   TF_BERT: post-norm blocks ln(x + drop(attn(x))), ln(x + drop(mlp(x))) after the
 *            embeddings' norm and dropout, token types, and the masked-LM head (dense + act,
 *            norm, the decoder tied with a bias of its own). */
typedef enum { TF_GPT2, TF_OPT, TF_BERT } TransformerFamily;

typedef struct {
    TransformerFamily family;
    int layers, width, heads, ffn, vocab, positions;
    int types;                   /* BERT's token-type rows */
    int act;                     /* the MLP's (and BERT's head's) activation */
    float eps;                   /* layer norms */
    float dropout, attn_dropout; /* residual branches; attention weights */
    float emb_dropout;           /* after the embeddings (GPT-2's embd_pdrop; BERT's and OPT's
                                  * are their dropout) */
    float init;                  /* N(0, init) for kernels and tables */
    bool scale_residual;         /* GPT-2: the residual projections N(0, init / sqrt(2 layers)) */
    bool causal;
} TransformerShape;

/* Appends the whole network (the token embedding first); returns its output layer. */
int zb_transformer(Builder *b, const TransformerShape *s);

/* Finishes m with the builder's layers (ownership passes to m; zoo models live for the
 * whole process). */
void zb_finish(Builder *b, ModelSpec *m);

#endif
