/* models/transformer.c — a transformer's dimensions, and one tensor-parallel rank's share. */
#include "models/transformer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/plan.h"
#include "models/train.h"
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

/* ---- one rank's share for a real tensor-parallel run ---- */

/* The consumers of each layer, counted (the model input's are not). */
static int *consumer_counts(const ModelSpec *m, int *only)
{
    int *n = calloc((size_t)m->nlayers, sizeof *n);
    if (!n)
        return NULL;
    for (int i = 0; i < m->nlayers; i++)
        for (int k = 0; k < layer_ninputs(&m->layers[i]); k++) {
            const int src = m->layers[i].inputs[k];
            if (src >= 0) {
                n[src]++;
                only[src] = i;
            }
        }
    return n;
}

static LayerSpec tp_layer(LayerKind kind, int input, int ranks, bool bias, const char *base, const char *suffix)
{
    LayerSpec l = {.kind = kind, .act = ACTIVATION_NONE, .inputs = {input}};
    l.u.tp = (TensorParallelSpec){.ranks = ranks, .bias = bias};
    snprintf(l.name, sizeof l.name, "%.*s%s", (int)(sizeof l.name - strlen(suffix) - 1), base, suffix);
    return l;
}

int transformer_tensor_parallel(const ModelSpec *whole, int ranks, ModelSpec *out, char *err, size_t errlen)
{
    if (ranks < 1) {
        snprintf(err, errlen, "tensor parallel %d: must be >= 1", ranks);
        return -1;
    }
    if (whole->algorithm != ALGO_NETWORK || whole->nheads > 0 || whole->tp_whole) {
        snprintf(err, errlen, "%s: tensor parallelism splits one network of one head (not %s)", whole->name,
                 whole->tp_whole ? "a share already" : whole->nheads > 0 ? "a multi-task model" : "FISTA");
        return -1;
    }
    const int n = whole->nlayers;
    /* the vocabulary: an LM head (the last layer, dense, unactivated, under the softmax loss)
     * over as many classes as a trainable token embedding has rows (the one it is tied to, if
     * tied) splits with that embedding, Megatron's vocabulary-parallel pair */
    const LayerSpec *head = &whole->layers[n - 1];
    int vocab_emb = -1;
    if (whole->loss == LOSS_SOFTMAX_XENT && head->kind == LAYER_DENSE && head->act == ACTIVATION_NONE)
        for (int i = 0; i < n - 1; i++) {
            const LayerSpec *e = &whole->layers[i];
            if (e->kind == LAYER_EMBEDDING && !e->u.embed.frozen && e->u.embed.vocab == head->u.dense.units &&
                (!head->u.dense.tie || head->u.dense.tie == i + 1) && vocab_emb < 0)
                vocab_emb = i;
        }
    const int V = vocab_emb >= 0 ? head->u.dense.units : 0, block = (V + ranks - 1) / ranks;
    if (vocab_emb >= 0 && ranks > 1 && (ranks - 1) * block >= V) {
        snprintf(err, errlen, "%s: a vocabulary of %d cannot split over %d ranks (blocks of %d leave the last "
                 "rank none)", whole->name, V, ranks, block);
        return -1;
    }
    int *only = calloc((size_t)n, sizeof *only), *map = calloc((size_t)n, sizeof *map);
    int *users = consumer_counts(whole, only);
    /* at most three layers for each of the whole's */
    LayerSpec *L = calloc((size_t)3 * n, sizeof *L);
    int nl = 0, splits = 0, rc = -1;
    if (!only || !map || !users || !L) {
        snprintf(err, errlen, "%s: out of memory", whole->name);
        goto done;
    }
    int emb_at = -1; /* the split embedding's place in the share (its TP_SUM follows it) */
    for (int i = 0; i < n; i++) {
        const LayerSpec *l = &whole->layers[i];
        LayerSpec c = *l;
        for (int k = 0; k < layer_ninputs(l); k++)
            c.inputs[k] = l->inputs[k] < 0 ? l->inputs[k] : map[l->inputs[k]];
        if (c.kind == LAYER_DENSE && c.u.dense.tie)
            c.u.dense.tie = (c.u.dense.tie - 1 == vocab_emb ? emb_at : map[c.u.dense.tie - 1]) + 1;
        /* an MLP's first half: an activated dense layer feeding only an unactivated one */
        const bool first_half = l->kind == LAYER_DENSE && l->act != ACTIVATION_NONE && !l->u.dense.tie &&
                                users[i] == 1 && whole->layers[only[i]].kind == LAYER_DENSE &&
                                whole->layers[only[i]].act == ACTIVATION_NONE && !whole->layers[only[i]].u.dense.tie;
        const bool second_half = l->kind == LAYER_DENSE && l->inputs[0] >= 0 && !l->u.dense.tie &&
                                 l->act == ACTIVATION_NONE && whole->layers[l->inputs[0]].kind == LAYER_DENSE &&
                                 whole->layers[l->inputs[0]].act != ACTIVATION_NONE &&
                                 users[l->inputs[0]] == 1 && !whole->layers[l->inputs[0]].u.dense.tie;
        if (i == vocab_emb) { /* its block of rows; the group's sum makes the whole lookup */
            c.u.embed.vocab = block, c.u.embed.tp_split = true;
            emb_at = nl;
            L[nl++] = c;
            L[nl] = tp_layer(LAYER_TP_SUM, nl - 1, ranks, false, l->name, ".g");
            nl++;
            splits++;
        } else if (i == n - 1 && vocab_emb >= 0) { /* the head: its block of the classes */
            L[nl] = tp_layer(LAYER_TP_COPY, c.inputs[0], ranks, false, l->name, ".f");
            c.inputs[0] = nl++;
            c.u.dense.units = block, c.u.dense.tp_split = true;
            L[nl++] = c;
        } else if (l->kind == LAYER_ATTENTION) {
            if (l->u.attn.shards > 1 || l->u.attn.no_proj_bias || l->u.attn.heads % ranks != 0) {
                snprintf(err, errlen, "%s: layer '%s' cannot split over %d ranks (%d heads%s)", whole->name, l->name,
                         ranks, l->u.attn.heads, l->u.attn.shards > 1 ? ", a share already" : "");
                goto done;
            }
            L[nl] = tp_layer(LAYER_TP_COPY, c.inputs[0], ranks, false, l->name, ".f");
            c.inputs[0] = nl++;
            c.u.attn.shards = ranks, c.u.attn.no_proj_bias = true;
            L[nl++] = c;
            L[nl] = tp_layer(LAYER_TP_SUM, nl - 1, ranks, true, l->name, ".g");
            nl++;
            splits++;
        } else if (first_half) {
            if (l->u.dense.units % ranks != 0) {
                snprintf(err, errlen, "%s: layer '%s' (%d units) cannot split over %d ranks", whole->name, l->name,
                         l->u.dense.units, ranks);
                goto done;
            }
            L[nl] = tp_layer(LAYER_TP_COPY, c.inputs[0], ranks, false, l->name, ".f");
            c.inputs[0] = nl++;
            c.u.dense.units /= ranks, c.u.dense.tp_split = true;
            L[nl++] = c;
            splits++;
        } else if (second_half) {
            const bool bias = !c.u.dense.no_bias;
            c.u.dense.no_bias = true, c.u.dense.tp_split = true;
            L[nl++] = c;
            L[nl] = tp_layer(LAYER_TP_SUM, nl - 1, ranks, bias, l->name, ".g");
            nl++;
        } else {
            L[nl++] = c;
        }
        map[i] = nl - 1;
    }
    if (splits == 0) {
        snprintf(err, errlen, "%s has no attention layer or MLP to split over tensor-parallel ranks", whole->name);
        goto done;
    }
    *out = *whole;
    out->layers = L, out->nlayers = nl, out->tp_whole = whole, out->tp_ranks = ranks;
    out->tp_vocab = ranks > 1 ? V : 0;
    if (snprintf(out->name, sizeof out->name, "%s-tp%d", whole->name, ranks) >= (int)sizeof out->name) {
        snprintf(err, errlen, "%s: the name is too long for its share's ('%s-tp%d')", whole->name, whole->name, ranks);
        goto done;
    }
    L = NULL;
    rc = 0;
done:
    free(L);
    free(only);
    free(map);
    free(users);
    return rc;
}

static int layer_named(const Plan *p, const char *name)
{
    for (int i = 0; i < p->nlayers; i++)
        if (strcmp(p->layers[i].name, name) == 0)
            return i;
    return -1;
}

/* The whole model's tensor a share's tensor is a part of: the same layer and role, but a
 * TP_SUM's bias, which is its row-parallel layer's (NAME.g holds NAME's bias, an
 * attention's proj_bias). */
static const PlanParam *whole_tensor(const Plan *share, const PlanParam *sp, const Plan *whole)
{
    char name[LAYER_NAME_MAX];
    const char *role = sp->role;
    snprintf(name, sizeof name, "%s", share->layers[sp->layer].name);
    if (share->layers[sp->layer].kind == LAYER_TP_SUM) {
        const size_t len = strlen(name);
        if (len < 2 || strcmp(name + len - 2, ".g") != 0)
            return NULL;
        name[len - 2] = '\0';
    }
    const int wl = layer_named(whole, name);
    if (wl < 0)
        return NULL;
    if (share->layers[sp->layer].kind == LAYER_TP_SUM && whole->layers[wl].kind == LAYER_ATTENTION)
        role = "proj_bias";
    for (int i = 0; i < whole->nparams; i++)
        if (whole->params[i].layer == wl && strcmp(whole->params[i].role, role) == 0)
            return &whole->params[i];
    return NULL;
}

static size_t ceil_div(size_t a, int t) { return (a + (size_t)t - 1) / (size_t)t; }

/* Where a share's tensor lies in the whole model's (tp_places). */
typedef enum { PLACE_NONE, PLACE_WHOLE, PLACE_COLUMNS, PLACE_BLOCK } PlaceKind;
typedef struct {
    const PlanParam *sp; /* the share's tensor, NULL: the rank holds none of it */
    PlaceKind how;
} Place;

/* For each tensor of the whole model, the share's tensor that holds part of it (or all). 0,
 * or -1 with err naming a share tensor with no counterpart. */
static int tp_places(const Plan *share, const Plan *whole, Place *places, char *err, size_t errlen)
{
    const int t = share->model->tp_ranks > 1 ? share->model->tp_ranks : 1;
    for (int i = 0; i < whole->nparams; i++)
        places[i] = (Place){NULL, PLACE_NONE};
    for (int i = 0; i < share->nparams; i++) {
        const PlanParam *sp = &share->params[i];
        if (!sp->learnable)
            continue;
        const PlanParam *w = whole_tensor(share, sp, whole);
        if (!w) {
            snprintf(err, errlen, "%s: tensor %s of layer '%s' has no counterpart in %s", share->model->name, sp->role,
                     share->layers[sp->layer].name, whole->model->name);
            return -1;
        }
        PlaceKind how = PLACE_NONE;
        if (!sp->tp_split && sp->count == w->count)
            how = PLACE_WHOLE;
        else if (sp->tp_split && sp->fan_in > 0 && sp->fan_in == w->fan_in &&
                 (size_t)sp->fan_out == ceil_div((size_t)w->fan_out, t))
            how = PLACE_COLUMNS; /* (in, out) row-major: this rank's block of columns in every row (an
                                  * untied LM head's last block padded) */
        else if (sp->tp_split && (sp->fan_in == 0 ? sp->count == ceil_div(w->count, t)
                                                   : (size_t)sp->fan_in == ceil_div((size_t)w->fan_in, t) &&
                                                         sp->fan_out == w->fan_out))
            how = PLACE_BLOCK; /* a row-parallel kernel's block of rows, a column-parallel bias's block, a
                                * vocabulary-parallel table's rows or head bias (the last block padded) */
        if (how == PLACE_NONE) {
            snprintf(err, errlen, "%s: tensor %s of layer '%s' (%zu values) is no part of %zu over %d ranks",
                     share->model->name, sp->role, share->layers[sp->layer].name, sp->count, w->count, t);
            return -1;
        }
        places[w - whole->params] = (Place){sp, how};
    }
    return 0;
}

/* Where value j of whole tensor w goes in the rank's share (an index into the share's
 * tensor), or false where another rank holds it. */
static bool place_of(const Place *pl, const PlanParam *w, size_t j, int rank, size_t *dest)
{
    const PlanParam *sp = pl->sp;
    switch (pl->how) {
    case PLACE_WHOLE: *dest = j; return true;
    case PLACE_COLUMNS: {
        const size_t row = j / (size_t)w->fan_out, col = j % (size_t)w->fan_out, first = (size_t)rank * sp->fan_out;
        if (col < first || col >= first + (size_t)sp->fan_out)
            return false;
        *dest = row * (size_t)sp->fan_out + (col - first);
        return true;
    }
    case PLACE_BLOCK:
        if (j < (size_t)rank * sp->count || j >= (size_t)(rank + 1) * sp->count)
            return false;
        *dest = j - (size_t)rank * sp->count;
        return true;
    case PLACE_NONE: break;
    }
    return false;
}

/* What a rank keeps of the whole model's values: each value j of whole tensor i, handed to
 * keep_mine, goes to its place in the rank's share or nowhere. */
typedef struct {
    const Plan *whole;
    Place *places;
    float *params;
    int rank;
} Keeper;

static void keep_mine(int tensor, size_t j, float v, void *ctx)
{
    const Keeper *k = ctx;
    const Place *pl = &k->places[tensor];
    size_t at;
    if (pl->sp && place_of(pl, &k->whole->params[tensor], j, k->rank, &at))
        k->params[pl->sp->ref.offset / sizeof(float) + at] = v;
}

static int keeper_init(Keeper *k, const Plan *share, float *params, const Plan *whole, int rank, char *err,
                       size_t errlen)
{
    *k = (Keeper){whole, malloc((size_t)(whole->nparams > 0 ? whole->nparams : 1) * sizeof *k->places), params, rank};
    if (!k->places) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (tp_places(share, whole, k->places, err, errlen) != 0) {
        free(k->places);
        return -1;
    }
    /* what no whole tensor fills (a vocabulary block's padding) starts at zero */
    for (int i = 0; i < share->nparams; i++)
        if (share->params[i].learnable)
            memset(params + share->params[i].ref.offset / sizeof(float), 0, share->params[i].count * sizeof(float));
    return 0;
}

int transformer_tp_slice(const Plan *share, float *params, const Plan *whole, const float *wp, int rank, char *err,
                         size_t errlen)
{
    Keeper k;
    if (keeper_init(&k, share, params, whole, rank, err, errlen) != 0)
        return -1;
    for (int i = 0; i < whole->nparams; i++)
        for (size_t j = 0; k.places[i].sp && j < whole->params[i].count; j++)
            keep_mine(i, j, wp[whole->params[i].ref.offset / sizeof(float) + j], &k);
    free(k.places);
    return 0;
}

int transformer_tp_init(const Plan *share, float *params, const Plan *whole, uint64_t seed, int rank, char *err,
                        size_t errlen)
{
    Keeper k;
    if (keeper_init(&k, share, params, whole, rank, err, errlen) != 0)
        return -1;
    params_draw(whole, seed, keep_mine, &k);
    free(k.places);
    return 0;
}
