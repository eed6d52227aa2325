/* models/transformer.c — a transformer's dimensions, and one tensor-parallel rank's share. */
#include "models/transformer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/plan.h"
#include "models/zoo_build.h"

int transformer_dims(const ModelSpec *m, TransformerDims *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int first = -1;
    for (int i = 0; i < m->nlayers; i++) {
        const LayerSpec *l = &m->layers[i];
        if (l->kind != LAYER_ATTENTION)
            continue;
        if (first < 0) {
            first = i;
            out->heads = l->u.attn.heads, out->causal = l->u.attn.causal, out->attn_dropout = l->u.attn.dropout;
        } else if (l->u.attn.heads != out->heads || l->u.attn.causal != out->causal) {
            snprintf(err, errlen, "%s: its attention layers differ (%s); the parallel prediction takes blocks of "
                     "one shape", m->name, l->name);
            return -1;
        }
        out->layers++;
    }
    if (first < 0 || !m->input_ids || m->input.rank != 2 || m->loss != LOSS_SOFTMAX_XENT) {
        snprintf(err, errlen, "%s is not a transformer language model (attention blocks over a sequence of token "
                 "ids, scored over a vocabulary); tensor and pipeline parallelism price those", m->name);
        return -1;
    }
    for (int i = 0; i < m->nlayers && !out->hidden; i++)
        if (m->layers[i].kind == LAYER_EMBEDDING)
            out->hidden = m->layers[i].u.embed.dim;
    for (int i = first + 1; i < m->nlayers && !out->ffn; i++) {
        const LayerSpec *l = &m->layers[i];
        if (l->kind == LAYER_DROPOUT && out->dropout == 0)
            out->dropout = l->u.dropout.rate;
        if (l->kind == LAYER_DENSE && l->act != ACTIVATION_NONE)
            out->ffn = l->u.dense.units, out->act = l->act;
    }
    if (!out->hidden || !out->ffn) {
        snprintf(err, errlen, "%s: no %s found; the parallel prediction needs a token embedding and an MLP after "
                 "each attention", m->name, out->hidden ? "MLP (a dense layer with an activation)" : "token embedding");
        return -1;
    }
    out->vocab = m->classes, out->seq = m->input.d[0], out->opt = m->opt.kind;
    Plan p;
    if (plan_build(m, 1, &p, err, errlen) != 0)
        return -1;
    out->params = (double)p.param_count;
    plan_free(&p);
    return 0;
}

static int must_divide(const char *what, int n, int shards, char *err, size_t errlen)
{
    if (n % shards == 0)
        return 0;
    snprintf(err, errlen, "tensor parallel %d must divide the %s (%d)", shards, what, n);
    return -1;
}

int transformer_shard_model(const TransformerDims *d, int shards, ModelSpec *m, char *err, size_t errlen)
{
    if (shards < 1) {
        snprintf(err, errlen, "tensor parallel %d: must be >= 1", shards);
        return -1;
    }
    if (must_divide("heads", d->heads, shards, err, errlen) || must_divide("MLP width", d->ffn, shards, err, errlen) ||
        must_divide("vocabulary", d->vocab, shards, err, errlen))
        return -1;
    Builder b = {.init = INIT_NORMAL};
    const float eps = 1e-5f, init = 0.02f;
    const int V = d->vocab / shards;
    int x = zb_token_embedding(&b, "emb.tokens", V, d->hidden, init, true);
    x = zb_position(&b, "emb.positions", x, d->seq, init);
    if (d->dropout > 0)
        x = zb_dropout(&b, "emb.dropout", x, d->dropout);
    const PreNormBlock blk = {.heads = d->heads, .shards = shards, .ffn = d->ffn / shards, .act = d->act,
                              .width = d->hidden, .causal = d->causal, .eps = eps, .dropout = d->dropout,
                              .attn_dropout = d->attn_dropout, .init = init, .proj_init = init,
                              .names = {"ln_1", "attn", "attn.dropout", "res_1", "ln_2", "mlp.fc", "mlp.proj",
                                        "mlp.dropout", "res_2"}};
    x = zb_prenorm_block(&b, "blk.", &blk, x);
    x = zb_layernorm(&b, "head.ln_f", x, eps);
    LayerSpec head = zb_layer(LAYER_DENSE, x, NOACT, "head.lm");
    head.u.dense = (DenseSpec){.units = V, .no_bias = true};
    head.init = INIT_NORMAL, head.init_scale = init;
    zb_add(&b, head);
    *m = (ModelSpec){.title = "one tensor-parallel rank's share of a transformer", .family = "Transformer",
                     .origin = "transformer", .input = {2, {d->seq, 1}}, .input_ids = true,
                     .loss = LOSS_SOFTMAX_XENT, .classes = V, .data = DATA_TOKENS, .default_batch = 1,
                     .opt = {.kind = d->opt == OPT_ADAMW ? OPT_ADAMW : OPT_ADAM, .lr = 1e-4f, .beta1 = 0.9f,
                             .beta2 = 0.95f, .eps = 1e-8f}};
    snprintf(m->name, sizeof m->name, "shard-of-%d", shards);
    zb_finish(&b, m);
    return 0;
}

ShardPart transformer_shard_part(const LayerSpec *l)
{
    return strncmp(l->name, "emb.", 4) == 0 ? SHARD_EMBEDDING : strncmp(l->name, "blk.", 4) == 0 ? SHARD_BLOCK : SHARD_HEAD;
}
