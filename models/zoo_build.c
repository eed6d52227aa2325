/* models/zoo_build.c — the zoo's layer builder (see zoo_build.h). */
#include "models/zoo_build.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int zb_add(Builder *b, LayerSpec l)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->layers = realloc(b->layers, (size_t)b->cap * sizeof *b->layers);
        assert(b->layers); /* zoo models are a few hundred layers */
    }
    if (l.kind == LAYER_DENSE || l.kind == LAYER_CONV2D || l.kind == LAYER_LSTM || l.kind == LAYER_RNN)
        l.init = b->init;
    b->layers[b->n] = l;
    return b->n++;
}

int zb_layernorm(Builder *b, const char *name, int in, float eps)
{
    LayerSpec l = zb_layer(LAYER_LAYERNORM, in, NOACT, "%s", name);
    l.u.ln.eps = eps;
    return zb_add(b, l);
}

int zb_attention(Builder *b, const char *name, int in, int heads, bool causal, float dropout, float scale,
                 float proj_scale)
{
    LayerSpec l = zb_layer(LAYER_ATTENTION, in, NOACT, "%s", name);
    l.u.attn = (AttentionSpec){.heads = heads, .causal = causal, .dropout = dropout, .proj_init_scale = proj_scale};
    l.init = INIT_NORMAL;
    l.init_scale = scale;
    return zb_add(b, l);
}

int zb_position(Builder *b, const char *name, int in, int positions, float scale)
{
    LayerSpec l = zb_layer(LAYER_POSITION, in, NOACT, "%s", name);
    l.u.pos.positions = positions;
    l.init = INIT_NORMAL;
    l.init_scale = scale;
    return zb_add(b, l);
}

int zb_to_sequence(Builder *b, const char *name, int in)
{
    return zb_add(b, zb_layer(LAYER_TO_SEQUENCE, in, NOACT, "%s", name));
}

int zb_class_token(Builder *b, const char *name, int in, float scale)
{
    LayerSpec l = zb_layer(LAYER_CLASS_TOKEN, in, NOACT, "%s", name);
    l.init = INIT_NORMAL;
    l.init_scale = scale;
    return zb_add(b, l);
}

int zb_first_step(Builder *b, const char *name, int in)
{
    return zb_add(b, zb_layer(LAYER_FIRST_STEP, in, NOACT, "%s", name));
}

int zb_token_types(Builder *b, const char *name, int in, int types, float scale)
{
    LayerSpec l = zb_layer(LAYER_POSITION, in, NOACT, "%s", name);
    l.u.pos = (PositionSpec){.positions = types, .token_types = true};
    l.init = INIT_NORMAL;
    l.init_scale = scale;
    return zb_add(b, l);
}

int zb_token_embedding(Builder *b, const char *name, int vocab, int dim, float scale, bool decayed)
{
    LayerSpec l = zb_layer(LAYER_EMBEDDING, IN, NOACT, "%s", name);
    l.u.embed = (EmbeddingSpec){.vocab = vocab, .dim = dim, .decayed = decayed};
    l.init = INIT_NORMAL;
    l.init_scale = scale;
    return zb_add(b, l);
}

int zb_dense_normal(Builder *b, const char *name, int in, int units, int act, float scale)
{
    const InitKind keep = b->init;
    b->init = INIT_NORMAL;
    LayerSpec l = zb_layer(LAYER_DENSE, in, act, "%s", name);
    l.u.dense.units = units;
    l.init_scale = scale;
    const int i = zb_add(b, l);
    b->init = keep;
    return i;
}

/* dropout when the rate is not 0 */
static int maybe_dropout(Builder *b, const char *name, int in, float rate)
{
    return rate > 0 ? zb_dropout(b, name, in, rate) : in;
}

/* "<block><i>.<part>" in n (the layer helpers copy the name at once) */
static const char *block_name(char n[LAYER_NAME_MAX], const char *block, int i, const char *part)
{
    snprintf(n, LAYER_NAME_MAX, "%s%d.%s", block, i, part);
    return n;
}

/* GPT-2's block as HF names its parts */
#define GPT2_BLOCK_NAMES                                                                                     \
    {"ln_1", "attn", "attn.dropout", "res_1", "ln_2", "mlp.c_fc", "mlp.c_proj", "mlp.dropout", "res_2"}

int zb_prenorm_block(Builder *b, const char *prefix, const PreNormBlock *k, int x)
{
    char n[LAYER_NAME_MAX];
#define PART(p) (snprintf(n, sizeof n, "%s%s", prefix, k->names.p), n)
    int h = zb_layernorm(b, PART(ln1), x, k->eps);
    h = zb_attention(b, PART(attn), h, k->heads, k->causal, k->attn_dropout, k->init, k->proj_init);
    b->layers[h].u.attn.shards = k->shards;
    h = maybe_dropout(b, PART(attn_drop), h, k->dropout);
    x = zb_add2(b, PART(res1), x, h, NOACT);
    h = zb_layernorm(b, PART(ln2), x, k->eps);
    h = zb_dense_normal(b, PART(fc), h, k->ffn, k->act, k->init);
    h = zb_dense_normal(b, PART(proj), h, k->width, NOACT, k->proj_init);
    h = maybe_dropout(b, PART(mlp_drop), h, k->dropout);
    return zb_add2(b, PART(res2), x, h, NOACT);
#undef PART
}

int zb_transformer(Builder *b, const TransformerShape *s)
{
    const bool bert = s->family == TF_BERT;
    const float sr = s->scale_residual ? s->init / sqrtf(2.0f * (float)s->layers) : s->init;
    const int tok = zb_token_embedding(b, bert ? "word_embeddings" : "wte", s->vocab, s->width, s->init, true);
    const int table = s->family == TF_OPT ? s->positions + 2 : s->positions;
    int x = zb_position(b, bert ? "position_embeddings" : "wpe", tok, table, s->init);
    if (bert) {
        x = zb_token_types(b, "token_type_embeddings", x, s->types, s->init);
        x = zb_layernorm(b, "embeddings.ln", x, s->eps);
    }
    x = maybe_dropout(b, bert ? "embeddings.dropout" : "drop", x, s->emb_dropout);
    char n[LAYER_NAME_MAX];
    for (int i = 0; i < s->layers; i++) {
        if (bert) {
            int h = zb_attention(b, block_name(n, "layer", i, "attention"), x, s->heads, s->causal, s->attn_dropout,
                                 s->init, sr);
            h = maybe_dropout(b, block_name(n, "layer", i, "attention.dropout"), h, s->dropout);
            h = zb_add2(b, block_name(n, "layer", i, "attention.res"), x, h, NOACT);
            x = zb_layernorm(b, block_name(n, "layer", i, "attention.ln"), h, s->eps);
            h = zb_dense_normal(b, block_name(n, "layer", i, "intermediate"), x, s->ffn, s->act, s->init);
            h = zb_dense_normal(b, block_name(n, "layer", i, "output"), h, s->width, NOACT, sr);
            h = maybe_dropout(b, block_name(n, "layer", i, "output.dropout"), h, s->dropout);
            h = zb_add2(b, block_name(n, "layer", i, "output.res"), x, h, NOACT);
            x = zb_layernorm(b, block_name(n, "layer", i, "output.ln"), h, s->eps);
            continue;
        }
        const PreNormBlock gpt = {.heads = s->heads, .ffn = s->ffn, .act = s->act, .width = s->width,
                                  .causal = s->causal, .eps = s->eps, .dropout = s->dropout,
                                  .attn_dropout = s->attn_dropout, .init = s->init, .proj_init = sr,
                                  .names = GPT2_BLOCK_NAMES};
        snprintf(n, sizeof n, "h%d.", i);
        x = zb_prenorm_block(b, n, &gpt, x);
    }
    LayerSpec head = zb_layer(LAYER_DENSE, x, NOACT, bert ? "cls.decoder" : "lm_head");
    if (bert) {
        x = zb_dense_normal(b, "cls.transform", x, s->width, s->act, s->init);
        x = zb_layernorm(b, "cls.transform.ln", x, s->eps);
        head.inputs[0] = x;
        head.u.dense = (DenseSpec){.units = s->vocab, .tie = tok + 1};
    } else {
        head.inputs[0] = zb_layernorm(b, "ln_f", x, s->eps);
        head.u.dense = (DenseSpec){.units = s->vocab, .no_bias = true, .tie = tok + 1};
    }
    return zb_add(b, head);
}

LayerSpec zb_layer(LayerKind kind, int input, int act, const char *fmt, ...)
{
    LayerSpec l;
    memset(&l, 0, sizeof l);
    l.kind = kind;
    l.inputs[0] = input;
    l.ninputs = 1;
    l.act = act;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l.name, sizeof l.name, fmt, ap);
    va_end(ap);
    return l;
}

int zb_dense(Builder *b, const char *name, int in, int units, int act)
{
    LayerSpec l = zb_layer(LAYER_DENSE, in, act, "%s", name);
    l.u.dense.units = units;
    return zb_add(b, l);
}

int zb_conv(Builder *b, const char *name, int in, int filters, int k, int stride, PadMode pad, int act)
{
    LayerSpec l = zb_layer(LAYER_CONV2D, in, act, "%s", name);
    l.u.conv = (ConvSpec){.filters = filters, .kh = k, .kw = k, .stride = stride, .pad = pad, .groups = 1};
    return zb_add(b, l);
}

int zb_conv_pad(Builder *b, const char *name, int in, int filters, int k, int stride, int pad, int groups,
                bool bias, int act)
{
    LayerSpec l = zb_layer(LAYER_CONV2D, in, act, "%s", name);
    l.u.conv = (ConvSpec){.filters = filters, .kh = k, .kw = k, .stride = stride, .explicit_pad = true,
                          .pad_h = pad, .pad_w = pad, .groups = groups, .no_bias = !bias};
    return zb_add(b, l);
}

int zb_pool(Builder *b, const char *name, int in, PoolKind kind, int win, int stride, PadMode pad)
{
    LayerSpec l = zb_layer(LAYER_POOL2D, in, NOACT, "%s", name);
    l.u.pool = (PoolSpec){.kind = kind, .win = win, .stride = stride, .pad = pad};
    return zb_add(b, l);
}

int zb_pool_pad(Builder *b, const char *name, int in, PoolKind kind, int win, int stride, int pad)
{
    LayerSpec l = zb_layer(LAYER_POOL2D, in, NOACT, "%s", name);
    l.u.pool = (PoolSpec){.kind = kind, .win = win, .stride = stride, .explicit_pad = true, .pad_h = pad,
                          .pad_w = pad};
    return zb_add(b, l);
}

int zb_pool_caffe(Builder *b, const char *name, int in, PoolKind kind, int win, int stride, int pad)
{
    LayerSpec l = zb_layer(LAYER_POOL2D, in, NOACT, "%s", name);
    l.u.pool = (PoolSpec){.kind = kind, .win = win, .stride = stride, .explicit_pad = pad > 0, .pad_h = pad,
                          .pad_w = pad, .ceil_mode = true};
    return zb_add(b, l);
}

int zb_global_pool(Builder *b, const char *name, int in, PoolKind kind)
{
    LayerSpec l = zb_layer(LAYER_POOL2D, in, NOACT, "%s", name);
    l.u.pool = (PoolSpec){.kind = kind, .global = true};
    return zb_add(b, l);
}

int zb_bn(Builder *b, const char *name, int in, float eps, float momentum, int act)
{
    LayerSpec l = zb_layer(LAYER_BATCHNORM, in, act, "%s", name);
    l.u.bn = (BnSpec){.eps = eps, .momentum = momentum};
    return zb_add(b, l);
}

int zb_lrn(Builder *b, const char *name, int in, int size, float alpha, float beta, float k)
{
    LayerSpec l = zb_layer(LAYER_LRN, in, NOACT, "%s", name);
    l.u.lrn = (LrnSpec){.size = size, .alpha = alpha, .beta = beta, .k = k};
    return zb_add(b, l);
}

int zb_dropout(Builder *b, const char *name, int in, float rate)
{
    LayerSpec l = zb_layer(LAYER_DROPOUT, in, NOACT, "%s", name);
    l.u.dropout.rate = rate;
    return zb_add(b, l);
}

int zb_concat(Builder *b, const char *name, const int *inputs, int n)
{
    assert(n >= 2 && n <= LAYER_MAX_INPUTS);
    LayerSpec l = zb_layer(LAYER_CONCAT, inputs[0], NOACT, "%s", name);
    memcpy(l.inputs, inputs, (size_t)n * sizeof *inputs);
    l.ninputs = n;
    return zb_add(b, l);
}

int zb_add2(Builder *b, const char *name, int x, int y, int act)
{
    LayerSpec l = zb_layer(LAYER_ADD, x, act, "%s", name);
    l.inputs[1] = y;
    l.ninputs = 2;
    return zb_add(b, l);
}

int zb_act(Builder *b, const char *name, int in, int act)
{
    return zb_add(b, zb_layer(LAYER_ACTIVATION, in, act, "%s", name));
}

int zb_flatten(Builder *b, const char *name, int in)
{
    return zb_add(b, zb_layer(LAYER_FLATTEN, in, NOACT, "%s", name));
}

int zb_lstm(Builder *b, const char *name, int in, LayerKind kind, int hidden, bool last_only)
{
    LayerSpec l = zb_layer(kind, in, NOACT, "%s", name);
    l.u.rnn = (RecurrentSpec){.hidden = hidden, .forget_bias = kind == LAYER_LSTM ? 1.0f : 0, .last_only = last_only};
    return zb_add(b, l);
}

void zb_finish(Builder *b, ModelSpec *m)
{
    m->layers = b->layers;
    m->nlayers = b->n;
    b->layers = NULL;
    b->n = b->cap = 0;
}
