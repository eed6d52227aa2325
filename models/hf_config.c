/* models/hf_config.c — a HuggingFace config.json as a dlperf model (hf_config.h). */
#include "models/hf_config.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/zoo_build.h"

typedef struct {
    const char *source;
    char *err;
    size_t errlen;
} Reader;

static int fail(const Reader *r, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(const Reader *r, const char *field, const char *fmt, ...)
{
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->err)
        snprintf(r->err, r->errlen, "%s: %s%s%s%s", r->source, field ? "field \"" : "", field ? field : "",
                 field ? "\": " : "", msg);
    return -1;
}

/* The field's value as shown in an error (at most ~40 characters). */
static void shown(const cJSON *v, char *out, size_t n)
{
    char *s = v ? cJSON_PrintUnformatted(v) : NULL;
    snprintf(out, n, "%.40s%s", s ? s : "nothing", s && strlen(s) > 40 ? "..." : "");
    free(s);
}

/* An integer field in [lo, hi]: required, or dflt when absent (or null, where null_ok). */
static int get_int(const Reader *r, const cJSON *o, const char *name, bool required, int dflt, int lo, int hi,
                   int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!v || cJSON_IsNull(v)) {
        if (required)
            return fail(r, name, "missing; a %d to %d integer is required", lo, hi);
        *out = dflt;
        return 0;
    }
    char got[64];
    shown(v, got, sizeof got);
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return fail(r, name, "expected an integer from %d to %d, got %s", lo, hi, got);
    *out = (int)v->valuedouble;
    return 0;
}

/* A number field in [lo, hi] (dflt when absent). */
static int get_float(const Reader *r, const cJSON *o, const char *name, float dflt, double lo, double hi, float *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!v || cJSON_IsNull(v)) {
        *out = dflt;
        return 0;
    }
    char got[64];
    shown(v, got, sizeof got);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi))
        return fail(r, name, "expected a number from %g to %g, got %s", lo, hi, got);
    *out = (float)v->valuedouble;
    return 0;
}

static int get_bool(const Reader *r, const cJSON *o, const char *name, bool dflt, bool *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!v || cJSON_IsNull(v)) {
        *out = dflt;
        return 0;
    }
    char got[64];
    shown(v, got, sizeof got);
    if (!cJSON_IsBool(v))
        return fail(r, name, "expected true or false, got %s", got);
    *out = cJSON_IsTrue(v);
    return 0;
}

/* The MLP's activation: the GELUs (the tanh approximations do the exact form's work) or ReLU. */
static int get_act(const Reader *r, const cJSON *o, const char *name, const char *dflt, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    const char *s = v && cJSON_IsString(v) ? v->valuestring : v ? NULL : dflt;
    static const char *const gelus[] = {"gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh", "gelu_python"};
    for (size_t i = 0; s && i < sizeof gelus / sizeof *gelus; i++)
        if (strcmp(s, gelus[i]) == 0) {
            *out = ACT_GELU;
            return 0;
        }
    if (s && strcmp(s, "relu") == 0) {
        *out = ACT_RELU;
        return 0;
    }
    char got[64];
    shown(v, got, sizeof got);
    return fail(r, name, "%s: activations: gelu, gelu_new, gelu_fast, gelu_pytorch_tanh, relu", got);
}

/* The config's shape into s; the family from model_type. */
static int read_shape(const Reader *r, const cJSON *c, TransformerShape *s)
{
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(c, "model_type");
    char got[64];
    shown(mt, got, sizeof got);
    if (!mt || !cJSON_IsString(mt) ||
        (strcmp(mt->valuestring, "gpt2") != 0 && strcmp(mt->valuestring, "opt") != 0 &&
         strcmp(mt->valuestring, "bert") != 0))
        return fail(r, "model_type", "%s: families read: gpt2, opt, bert (GPT-3's and Megatron's shapes as gpt2 "
                                     "configs)", got);
    /* bounds no real model nears (GPT-3 175B: 96 layers; Megatron 1T: 128), so that a
     * config's numbers cannot ask for a network no machine could lay out */
    const int big = 1 << 20, deep = 4096;
    bool tied = true;
    if (strcmp(mt->valuestring, "gpt2") == 0) {
        s->family = TF_GPT2;
        s->causal = s->scale_residual = true;
        int inner = 0;
        if (get_int(r, c, "n_layer", true, 0, 1, deep, &s->layers) || get_int(r, c, "n_embd", true, 0, 1, big, &s->width) ||
            get_int(r, c, "n_head", true, 0, 1, big, &s->heads) || get_int(r, c, "vocab_size", true, 0, 2, 1 << 30, &s->vocab) ||
            get_int(r, c, "n_inner", false, 0, 1, 1 << 30, &inner) ||
            get_act(r, c, "activation_function", "gelu_new", &s->act) ||
            get_float(r, c, "layer_norm_epsilon", 1e-5f, 1e-30, 1, &s->eps) ||
            get_float(r, c, "resid_pdrop", 0.1f, 0, 0.999, &s->dropout) ||
            get_float(r, c, "embd_pdrop", 0.1f, 0, 0.999, &s->emb_dropout) ||
            get_float(r, c, "attn_pdrop", 0.1f, 0, 0.999, &s->attn_dropout) ||
            get_float(r, c, "initializer_range", 0.02f, 1e-9, 10, &s->init))
            return -1;
        s->ffn = inner ? inner : 4 * s->width;
        const bool ctx = cJSON_GetObjectItemCaseSensitive(c, "n_positions") != NULL;
        if (get_int(r, c, ctx ? "n_positions" : "n_ctx", true, 0, 1, big, &s->positions))
            return -1;
    } else if (strcmp(mt->valuestring, "opt") == 0) {
        s->family = TF_OPT;
        s->causal = true;
        bool before = true;
        int proj = 0;
        if (get_int(r, c, "num_hidden_layers", true, 0, 1, deep, &s->layers) ||
            get_int(r, c, "hidden_size", true, 0, 1, big, &s->width) ||
            get_int(r, c, "num_attention_heads", true, 0, 1, big, &s->heads) ||
            get_int(r, c, "ffn_dim", true, 0, 1, 1 << 30, &s->ffn) ||
            get_int(r, c, "vocab_size", true, 0, 2, 1 << 30, &s->vocab) ||
            get_int(r, c, "max_position_embeddings", true, 0, 1, big, &s->positions) ||
            get_act(r, c, "activation_function", "relu", &s->act) ||
            get_bool(r, c, "do_layer_norm_before", true, &before) ||
            get_int(r, c, "word_embed_proj_dim", false, s->width, 1, big, &proj) ||
            get_float(r, c, "dropout", 0.1f, 0, 0.999, &s->dropout) ||
            get_float(r, c, "attention_dropout", 0.0f, 0, 0.999, &s->attn_dropout) ||
            get_float(r, c, "init_std", 0.02f, 1e-9, 10, &s->init))
            return -1;
        if (!before)
            return fail(r, "do_layer_norm_before", "false (OPT-350m's post-norm blocks) is not modelled");
        if (proj != s->width)
            return fail(r, "word_embed_proj_dim", "%d differs from hidden_size %d: OPT's project_in/out is not "
                                                  "modelled", proj, s->width);
        s->emb_dropout = s->dropout;
        s->eps = 1e-5f;
    } else {
        s->family = TF_BERT;
        if (get_int(r, c, "num_hidden_layers", true, 0, 1, deep, &s->layers) ||
            get_int(r, c, "hidden_size", true, 0, 1, big, &s->width) ||
            get_int(r, c, "num_attention_heads", true, 0, 1, big, &s->heads) ||
            get_int(r, c, "intermediate_size", true, 0, 1, 1 << 30, &s->ffn) ||
            get_int(r, c, "vocab_size", true, 0, 2, 1 << 30, &s->vocab) ||
            get_int(r, c, "max_position_embeddings", true, 0, 1, big, &s->positions) ||
            get_int(r, c, "type_vocab_size", false, 2, 1, big, &s->types) ||
            get_act(r, c, "hidden_act", "gelu", &s->act) ||
            get_float(r, c, "layer_norm_eps", 1e-12f, 1e-30, 1, &s->eps) ||
            get_float(r, c, "hidden_dropout_prob", 0.1f, 0, 0.999, &s->dropout) ||
            get_float(r, c, "attention_probs_dropout_prob", 0.1f, 0, 0.999, &s->attn_dropout) ||
            get_float(r, c, "initializer_range", 0.02f, 1e-9, 10, &s->init))
            return -1;
        s->emb_dropout = s->dropout;
    }
    if (get_bool(r, c, "tie_word_embeddings", true, &tied))
        return -1;
    if (!tied)
        return fail(r, "tie_word_embeddings", "false: a head with a table of its own is not modelled (these "
                                              "families tie it)");
    if (s->width % s->heads != 0)
        return fail(r, s->family == TF_GPT2 ? "n_head" : "num_attention_heads", "%d does not divide the width %d",
                    s->heads, s->width);
    return 0;
}

/* A model name from the config's _name_or_path ("facebook/opt-1.3b" -> "opt-1.3b"), else
 * the config file's name without its extension, characters outside a model name's set as
 * '-'. */
static void name_from(const cJSON *c, const char *source, char out[MODEL_NAME_MAX])
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(c, "_name_or_path");
    const bool named = p && cJSON_IsString(p) && *p->valuestring;
    const char *s = named ? p->valuestring : source;
    const char *slash = strrchr(s, '/');
    s = slash && slash[1] ? slash + 1 : s;
    snprintf(out, MODEL_NAME_MAX, "%s", *s ? s : "hf-model");
    char *dot = named ? NULL : strrchr(out, '.');
    if (dot && dot != out)
        *dot = '\0';
    for (char *q = out; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '-' ||
              *q == '_' || *q == '.' || *q == '+'))
            *q = '-';
}

static char *dup_str(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (d)
        strcpy(d, s);
    return d;
}

ModelSpec *model_from_hf_config(const char *text, const char *source, const char *name, int context, char *err,
                                size_t errlen)
{
    const Reader r = {.source = source ? source : "config", .err = err, .errlen = errlen};
    cJSON *c = cJSON_Parse(text);
    if (!c || !cJSON_IsObject(c)) {
        cJSON_Delete(c);
        fail(&r, NULL, "not a JSON object (a HuggingFace config.json)");
        return NULL;
    }
    TransformerShape s = {0};
    ModelSpec *m = NULL;
    if (read_shape(&r, c, &s) != 0)
        goto done;
    if (context < 0 || context > s.positions) {
        fail(&r, NULL, "context %d: the model has positions for 1 to %d steps", context, s.positions);
        goto done;
    }
    m = calloc(1, sizeof *m);
    if (!m) {
        fail(&r, NULL, "out of memory");
        goto done;
    }
    if (name)
        snprintf(m->name, sizeof m->name, "%s", name);
    else
        name_from(c, r.source, m->name);
    Builder b = {.init = INIT_GLOROT_UNIFORM};
    zb_transformer(&b, &s);
    zb_finish(&b, m);
    const bool bert = s.family == TF_BERT;
    static const char *const fam[] = {[TF_GPT2] = "GPT-2", [TF_OPT] = "OPT", [TF_BERT] = "BERT masked-LM"};
    char title[256];
    snprintf(title, sizeof title, "%s from a HuggingFace config: %d layers, %d wide, %d heads, MLP %d, vocabulary %d",
             fam[s.family], s.layers, s.width, s.heads, s.ffn, s.vocab);
    m->title = dup_str(title);
    m->source = dup_str(r.source);
    m->family = dup_str("Transformer");
    m->origin = dup_str("hf-config");
    m->input = (Shape){.rank = 2, .d = {context ? context : s.positions, 1}};
    m->input_ids = true;
    m->loss = LOSS_SOFTMAX_XENT;
    m->classes = s.vocab;
    m->opt = (OptSpec){.kind = OPT_ADAMW, .lr = 6e-4f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f,
                       .weight_decay = 0.1f, .clip_norm = 1.0f};
    m->data = bert ? DATA_MASKED_TOKENS : DATA_TOKENS;
    m->default_batch = 1;
    if (!m->title || !m->source || !m->family || !m->origin) {
        fail(&r, NULL, "out of memory");
        free((void *)m->layers), free((void *)m->title), free((void *)m->source), free((void *)m->family),
            free((void *)m->origin), free(m);
        m = NULL;
    }
done:
    cJSON_Delete(c);
    return m;
}
