/* models/model_json.c — reads and writes user model files (docs/model-format.md).
 *
 * Parsing is cJSON's; this file maps the JSON vocabulary onto ModelSpec, checks what the
 * JSON alone can decide (types, ranges, names, references, field combinations) and turns
 * every problem into one line naming the file, layer, field, value and what is valid.
 * Export writes the same vocabulary back, one layer per line, defaults left out.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "models/model_json.h"

#define FORMAT_NAME "dlperf-model"
#define FORMAT_VERSION 1
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- the file vocabulary --------------------------------------------------------------
 * The words users write are fixed here, indexed by the model.h enums, rather than taken
 * from layer_kind_name() and friends: display names may change, users' files must not. */

static const char *const kind_words[LAYER_KIND_COUNT] = {
    [LAYER_DENSE] = "dense",         [LAYER_CONV2D] = "conv2d",
    [LAYER_POOL2D] = "pool2d",       [LAYER_LSTM] = "lstm",
    [LAYER_RNN] = "rnn",             [LAYER_BATCHNORM] = "batchnorm",
    [LAYER_LRN] = "lrn",             [LAYER_DROPOUT] = "dropout",
    [LAYER_CONCAT] = "concat",       [LAYER_ADD] = "add",
    [LAYER_ACTIVATION] = "activation", [LAYER_FLATTEN] = "flatten",
    [LAYER_EMBEDDING] = "embedding", [LAYER_SPARSITY] = "sparsity",
    [LAYER_LAYERNORM] = "layernorm", [LAYER_ATTENTION] = "attention",
    [LAYER_POSITION] = "position",   [LAYER_TO_SEQUENCE] = "to_sequence",
    [LAYER_CLASS_TOKEN] = "class_token", [LAYER_FIRST_STEP] = "first_step",
};
static const char *const act_words[ACT_COUNT] = {
    [ACT_RELU] = "relu", [ACT_SIGMOID] = "sigmoid", [ACT_TANH] = "tanh", [ACT_GELU] = "gelu"};
static const char *const init_words[] = {
    [INIT_GLOROT_UNIFORM] = "glorot_uniform", [INIT_HE_NORMAL] = "he_normal",
    [INIT_UNIFORM] = "uniform", [INIT_NORMAL] = "normal"};
static const char *const pool_words[] = {[POOL_MAX] = "max", [POOL_AVG] = "avg"};
static const char *const loss_words[] = {
    [LOSS_SOFTMAX_XENT] = "softmax_cross_entropy", [LOSS_MSE] = "mse", [LOSS_SSE] = "sse",
    [LOSS_HALF_SSE_MEAN] = "half_sse_mean"};
/* OPT_MOMENTUM is written as Keras writes it: "sgd" with a "momentum" field. */
enum { OPTWORD_SGD, OPTWORD_RMSPROP, OPTWORD_ADAM, OPTWORD_ADAMW };
static const char *const opt_words[] = {"sgd", "rmsprop", "adam", "adamw"};
static const char *const sched_words[] = {
    [SCHED_CONSTANT] = "constant", [SCHED_STEP] = "step", [SCHED_WARMUP_STEP] = "warmup_step"};
static const char *const data_words[] = {
    [DATA_EXPRESSION] = "expression", [DATA_IMAGES] = "images", [DATA_SEQUENCE] = "sequence",
    [DATA_CLASSES] = "classes", [DATA_TOKENS] = "tokens", [DATA_FASHION_MNIST] = "fashion_mnist",
    [DATA_MASKED_TOKENS] = "masked_tokens", [DATA_TEXT_BYTES] = "text_bytes"};

/* Fields each layer type accepts (after the common ones). NULL-terminated. */
static const char *const common_fields[] = {"name", "type", "inputs", "comment", NULL};
static const char *const kind_fields[LAYER_KIND_COUNT][12] = {
    [LAYER_DENSE] = {"units", "activation", "use_bias", "kernel_initializer", "init_scale",
                     "weight_decay", "tie", "tp_split"},
    [LAYER_CONV2D] = {"filters", "kernel", "stride", "padding", "groups", "use_bias",
                      "activation", "kernel_initializer", "init_scale", "weight_decay"},
    [LAYER_POOL2D] = {"pool", "size", "stride", "padding", "ceil_mode", "global"},
    [LAYER_LSTM] = {"units", "return_sequences", "forget_bias", "kernel_initializer",
                    "init_scale", "weight_decay"},
    [LAYER_RNN] = {"units", "return_sequences", "kernel_initializer", "init_scale",
                   "weight_decay"},
    [LAYER_BATCHNORM] = {"epsilon", "momentum", "activation"},
    [LAYER_LRN] = {"size", "alpha", "beta", "k"},
    [LAYER_DROPOUT] = {"rate"},
    [LAYER_CONCAT] = {NULL},
    [LAYER_ADD] = {"activation"},
    [LAYER_ACTIVATION] = {"activation"},
    [LAYER_FLATTEN] = {NULL},
    [LAYER_EMBEDDING] = {"input_dim", "output_dim", "trainable", "kernel_initializer", "init_scale",
                         "weight_decay"},
    [LAYER_SPARSITY] = {"rho", "beta"},
    [LAYER_LAYERNORM] = {"epsilon"},
    [LAYER_ATTENTION] = {"heads", "causal", "dropout", "kernel_initializer", "init_scale",
                         "proj_init_scale", "weight_decay", "shards", "proj_bias", "pad_token_id"},
    [LAYER_POSITION] = {"positions", "token_types", "kernel_initializer", "init_scale", "weight_decay"},
    [LAYER_TO_SEQUENCE] = {NULL},
    [LAYER_CLASS_TOKEN] = {"kernel_initializer", "init_scale"},
    [LAYER_FIRST_STEP] = {NULL},
    [LAYER_TP_COPY] = {"ranks"},
    [LAYER_TP_SUM] = {"ranks", "use_bias"},
};
static const char *const model_fields[] = {
    "format", "version", "name", "title", "source", "family", "origin", "demo", "input",
    "layers", "loss", "classes", "heads", "autoencoder", "optimizer", "data", "batch", "epochs",
    "train_samples", "comment", NULL};
static const char *const head_fields[] = {"layer", "classes", "name", NULL};
static const char *const input_fields[] = {"shape", "ids", NULL};
static const char *const opt_fields[][8] = {
    [OPTWORD_SGD] = {"type", "lr", "momentum", "nesterov", "weight_decay", "schedule"},
    [OPTWORD_RMSPROP] = {"type", "lr", "rho", "epsilon", "weight_decay", "schedule"},
    [OPTWORD_ADAM] = {"type", "lr", "beta_1", "beta_2", "epsilon", "weight_decay", "schedule"},
    [OPTWORD_ADAMW] = {"type", "lr", "beta_1", "beta_2", "epsilon", "weight_decay", "clip_norm",
                       "schedule"},
};
static const char *const sched_fields[][6] = {
    [SCHED_CONSTANT] = {"type"},
    [SCHED_STEP] = {"type", "boundaries", "factors"},
    [SCHED_WARMUP_STEP] = {"type", "warmup_epochs", "warmup_from", "boundaries", "factors"},
};

/* Names Keras users type, and the field this format calls it (a hint in the error). */
static const char *const field_hints[][2] = {
    {"kernel_size", "kernel"}, {"strides", "stride"},        {"pool_size", "size"},
    {"learning_rate", "lr"},   {"input", "inputs"},          {"hidden", "units"},
    {"vocab", "input_dim"},    {"dim", "output_dim"},        {"beta1", "beta_1"},
    {"beta2", "beta_2"},       {"eps", "epsilon"},           {"ceil", "ceil_mode"},
    {"embeddings_initializer", "kernel_initializer"},        {"bias", "use_bias"},
};

/* Defaults (Keras' where Keras has one). Export leaves a field out when it equals these. */
#define DEFAULT_BATCH 32
#define DEFAULT_INIT_SCALE 0.05f /* Keras RandomUniform(-0.05, 0.05), RandomNormal(0.05) */
#define DEFAULT_FORGET_BIAS 1.0f /* TF BasicLSTMCell */
#define DEFAULT_BN_EPS 1e-3f
#define DEFAULT_BN_MOMENTUM 0.99f
#define DEFAULT_LRN_SIZE 5 /* Caffe AlexNet */
#define DEFAULT_LRN_ALPHA 1e-4f
#define DEFAULT_LRN_BETA 0.75f
#define DEFAULT_LRN_K 1.0f
#define DEFAULT_POOL_SIZE 2
#define DEFAULT_SPARSITY_RHO 0.01f /* UFLDL sparse autoencoder exercise */
#define DEFAULT_SPARSITY_BETA 3.0f
#define DEFAULT_SGD_LR 0.01f
#define DEFAULT_RMSPROP_LR 0.001f
#define DEFAULT_ADAM_LR 0.001f
#define DEFAULT_RHO 0.9f
#define DEFAULT_EPSILON 1e-7f /* Keras K.epsilon() */
#define DEFAULT_BETA_1 0.9f
#define DEFAULT_BETA_2 0.999f
#define DEFAULT_ADAMW_EPSILON 1e-8f /* torch.optim.AdamW */
#define DEFAULT_ADAMW_DECAY 0.01f
#define DEFAULT_LN_EPS 1e-5f        /* torch.nn.LayerNorm */
#define TEXT_FIELD_MAX 4096 /* title, source, family, origin, head names */

/* Kinds whose LayerSpec.act is used (model.h); others get ACTIVATION_NONE. */
static bool kind_has_act(LayerKind k)
{
    return k == LAYER_DENSE || k == LAYER_CONV2D || k == LAYER_BATCHNORM || k == LAYER_ADD ||
           k == LAYER_ACTIVATION;
}

/* Kinds with a weight kernel: init, init_scale and no_decay apply. */
static bool kind_has_kernel(LayerKind k)
{
    return k == LAYER_DENSE || k == LAYER_CONV2D || k == LAYER_LSTM || k == LAYER_RNN ||
           k == LAYER_EMBEDDING || k == LAYER_ATTENTION || k == LAYER_POSITION || k == LAYER_CLASS_TOKEN;
}

/* Keras' defaults: tables (Embedding) uniform, matrices glorot_uniform */
static InitKind kind_default_init(LayerKind k)
{
    return k == LAYER_EMBEDDING || k == LAYER_POSITION || k == LAYER_CLASS_TOKEN ? INIT_UNIFORM : INIT_GLOROT_UNIFORM;
}

/* Whether a kind's tensors are in the weight-decay prefix unless the file says: kernels
 * are (a Keras kernel_regularizer), an embedding table is not (Keras has none on it). */
static bool kind_default_decay(LayerKind k) { return k != LAYER_EMBEDDING; }

/* Index of s in names[0..n), or -1. */
static int name_find(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (names[i] && strcmp(names[i], s) == 0)
            return i;
    return -1;
}

/* "a, b, c" into out (truncated to n). */
static void names_join(char *out, size_t n, const char *const *names, int count)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < count && names[i] && used < n; i++) {
        int w = snprintf(out + used, n - used, "%s%s", i ? ", " : "", names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* ---- error messages -------------------------------------------------------------------- */

typedef struct {
    const char *src;   /* file name that starts every message */
    char *err;
    size_t errlen;
    int layer;         /* 1-based layer being read, 0 outside the layers */
    const char *lname; /* its name once known and valid, else NULL */
    const char *path;  /* prefix of field names: "", "input.", "optimizer.", ... */
} Ctx;

/* Writes "src: [layer N 'name': ][field "path+field": ]message" to c->err as one line
 * (control characters from the input become '?'). Returns -1 for `return fail(...)`. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(const Ctx *c, const char *field, const char *fmt, ...);
static int fail(const Ctx *c, const char *field, const char *fmt, ...)
{
    char buf[1536];
    int used = snprintf(buf, sizeof buf, "%s: ", c->src);
    if (c->layer > 0 && used >= 0 && (size_t)used < sizeof buf) {
        if (c->lname)
            used += snprintf(buf + used, sizeof buf - (size_t)used, "layer %d '%s': ", c->layer,
                             c->lname);
        else
            used += snprintf(buf + used, sizeof buf - (size_t)used, "layer %d: ", c->layer);
    }
    if (field && used >= 0 && (size_t)used < sizeof buf)
        used += snprintf(buf + used, sizeof buf - (size_t)used, "field \"%s%s\": ", c->path,
                         field);
    if (used >= 0 && (size_t)used < sizeof buf) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf + used, sizeof buf - (size_t)used, fmt, ap);
        va_end(ap);
    }
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    snprintf(c->err, c->errlen, "%s", buf);
    return -1;
}

/* The value as the user wrote it (cJSON's compact form, escaped), cut to fit. */
static void json_show(const cJSON *v, char *out, size_t n)
{
    char *s = v ? cJSON_PrintUnformatted(v) : NULL;
    if (!s) {
        snprintf(out, n, "%s", !v ? "nothing" : cJSON_IsObject(v) ? "an object" : "a value");
        return;
    }
    if (strlen(s) > 60)
        snprintf(out, n, "%.57s...", s);
    else
        snprintf(out, n, "%s", s);
    free(s);
}

/* ---- typed field readers: 0 with *out set (the default when absent), or -1 with err -- */

/* Case-sensitive, as check_fields is: "Units" is an unknown field, not "units". */
static const cJSON *field_get(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* "a positive integer", "an integer from 0 to 8", ... for messages. */
static void int_desc(char *out, size_t n, int lo, int hi)
{
    if (lo == 1 && hi == INT_MAX)
        snprintf(out, n, "a positive integer");
    else if (lo == 0 && hi == INT_MAX)
        snprintf(out, n, "a non-negative integer");
    else if (hi == INT_MAX)
        snprintf(out, n, "an integer >= %d", lo);
    else
        snprintf(out, n, "an integer from %d to %d", lo, hi);
}

/* v is a whole number in [lo, hi] (32.0 counts, 2.5 does not): true with *out set. */
static bool json_int_in(const cJSON *v, int lo, int hi, int *out)
{
    if (!cJSON_IsNumber(v))
        return false;
    double d = v->valuedouble;
    if (!isfinite(d) || d != floor(d) || d < lo || d > hi)
        return false;
    *out = (int)d;
    return true;
}

/* An integer field in [lo, hi]; absent: dflt, or an error when required. */
static int get_int(const Ctx *c, const cJSON *obj, const char *key, bool required, int dflt,
                   int lo, int hi, int *out)
{
    char desc[64], got[96];
    const cJSON *v = field_get(obj, key);
    int_desc(desc, sizeof desc, lo, hi);
    if (!v) {
        if (required)
            return fail(c, NULL, "missing field \"%s%s\" (%s)", c->path, key, desc);
        *out = dflt;
        return 0;
    }
    if (!json_int_in(v, lo, hi, out)) {
        json_show(v, got, sizeof got);
        return fail(c, key, "expected %s, got %s", desc, got);
    }
    return 0;
}

typedef enum {
    RANGE_ANY,      /* any finite number */
    RANGE_POSITIVE, /* (0, inf) */
    RANGE_NONNEG,   /* [0, inf) */
    RANGE_RATE,     /* [0, 1) */
    RANGE_OPEN01,   /* (0, 1) */
    RANGE_CLOSED01  /* [0, 1] */
} Range;

static const char *range_desc(Range r)
{
    switch (r) {
    case RANGE_ANY: return "a number";
    case RANGE_POSITIVE: return "a positive number";
    case RANGE_NONNEG: return "a number >= 0";
    case RANGE_RATE: return "a number in [0, 1)";
    case RANGE_OPEN01: return "a number in (0, 1)";
    case RANGE_CLOSED01: return "a number in [0, 1]";
    }
    return "a number";
}

/* The range is checked on the float the spec will hold (1e-50 becomes 0: not positive). */
static bool json_float_in(const cJSON *v, Range r, float *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || fabs(v->valuedouble) > FLT_MAX)
        return false;
    float f = (float)v->valuedouble;
    bool ok = true;
    switch (r) {
    case RANGE_ANY: break;
    case RANGE_POSITIVE: ok = f > 0; break;
    case RANGE_NONNEG: ok = f >= 0; break;
    case RANGE_RATE: ok = f >= 0 && f < 1; break;
    case RANGE_OPEN01: ok = f > 0 && f < 1; break;
    case RANGE_CLOSED01: ok = f >= 0 && f <= 1; break;
    }
    if (ok)
        *out = f;
    return ok;
}

static int get_float(const Ctx *c, const cJSON *obj, const char *key, bool required,
                     float dflt, Range r, float *out)
{
    char got[96];
    const cJSON *v = field_get(obj, key);
    if (!v) {
        if (required)
            return fail(c, NULL, "missing field \"%s%s\" (%s)", c->path, key, range_desc(r));
        *out = dflt;
        return 0;
    }
    if (!json_float_in(v, r, out)) {
        json_show(v, got, sizeof got);
        return fail(c, key, "expected %s, got %s", range_desc(r), got);
    }
    return 0;
}

/* A true/false field (not 0/1); absent: dflt. */
static int get_bool(const Ctx *c, const cJSON *obj, const char *key, bool dflt, bool *out)
{
    char got[96];
    const cJSON *v = field_get(obj, key);
    if (!v) {
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsBool(v)) {
        json_show(v, got, sizeof got);
        return fail(c, key, "expected true or false, got %s", got);
    }
    *out = cJSON_IsTrue(v);
    return 0;
}

/* A string naming one of names[0..count) (what: "activation"; plural: "activations").
 * Absent: dflt, or an error when required. */
static int get_word(const Ctx *c, const cJSON *obj, const char *key, bool required, int dflt,
                    const char *const *names, int count, const char *what, const char *plural,
                    int *out)
{
    char list[512], got[96];
    const cJSON *v = field_get(obj, key);
    names_join(list, sizeof list, names, count);
    if (!v) {
        if (required)
            return fail(c, NULL, "missing field \"%s%s\" (%s: %s)", c->path, key, plural, list);
        *out = dflt;
        return 0;
    }
    json_show(v, got, sizeof got);
    if (!cJSON_IsString(v))
        return fail(c, key, "expected a string (%s: %s), got %s", plural, list, got);
    int i = name_find(names, count, v->valuestring);
    if (i < 0)
        return fail(c, key, "unknown %s %s; %s: %s", what, got, plural, list);
    *out = i;
    return 0;
}

/* A positive integer n (-> out = {n, n}) or [a, b] of positive integers (names2 names
 * them in messages: "height, width"). Absent: {dflt, dflt}, or an error when required. */
static int get_pair(const Ctx *c, const cJSON *obj, const char *key, bool required, int dflt,
                    const char *names2, int out[2])
{
    char got[96];
    const cJSON *v = field_get(obj, key);
    if (!v) {
        if (required)
            return fail(c, NULL, "missing field \"%s%s\" (a positive integer or [%s])", c->path,
                        key, names2);
        out[0] = out[1] = dflt;
        return 0;
    }
    if (json_int_in(v, 1, INT_MAX, &out[0])) {
        out[1] = out[0];
        return 0;
    }
    if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2 &&
        json_int_in(cJSON_GetArrayItem(v, 0), 1, INT_MAX, &out[0]) &&
        json_int_in(cJSON_GetArrayItem(v, 1), 1, INT_MAX, &out[1]))
        return 0;
    json_show(v, got, sizeof got);
    return fail(c, key, "expected a positive integer or [%s] of positive integers, got %s",
                names2, got);
}

/* Like get_pair, for dimensions the spec keeps as one number (stride, pool window). */
static int get_square(const Ctx *c, const cJSON *obj, const char *key, bool required, int dflt,
                      const char *what, int *out)
{
    int p[2];
    if (get_pair(c, obj, key, required, dflt, "height, width", p))
        return -1;
    if (p[0] != p[1])
        return fail(c, key, "[%d, %d]: only equal %s in height and width are supported", p[0],
                    p[1], what);
    *out = p[0];
    return 0;
}

/* "valid" | "same" | n | [ph, pw] (explicit symmetric padding, n >= 0). */
static int get_padding(const Ctx *c, const cJSON *obj, PadMode *pad, bool *explicit_pad,
                       int *pad_h, int *pad_w)
{
    char got[96];
    const cJSON *v = field_get(obj, "padding");
    *pad = PAD_VALID;
    *explicit_pad = false;
    *pad_h = *pad_w = 0;
    if (!v)
        return 0;
    if (cJSON_IsString(v) && strcmp(v->valuestring, "valid") == 0)
        return 0;
    if (cJSON_IsString(v) && strcmp(v->valuestring, "same") == 0) {
        *pad = PAD_SAME;
        return 0;
    }
    if (json_int_in(v, 0, INT_MAX, pad_h)) {
        *pad_w = *pad_h;
        *explicit_pad = true;
        return 0;
    }
    if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2 &&
        json_int_in(cJSON_GetArrayItem(v, 0), 0, INT_MAX, pad_h) &&
        json_int_in(cJSON_GetArrayItem(v, 1), 0, INT_MAX, pad_w)) {
        *explicit_pad = true;
        return 0;
    }
    json_show(v, got, sizeof got);
    return fail(c, "padding",
                "expected \"valid\", \"same\", a non-negative integer or [pad_h, pad_w], got %s",
                got);
}

/* An optional one-line string (title, source, family, origin, a head's name): an owned
 * copy, or NULL when absent. */
static int get_text(const Ctx *c, const cJSON *obj, const char *key, const char **out)
{
    char got[96];
    const cJSON *v = field_get(obj, key);
    *out = NULL;
    if (!v)
        return 0;
    json_show(v, got, sizeof got);
    if (!cJSON_IsString(v))
        return fail(c, key, "expected a string, got %s", got);
    size_t len = strlen(v->valuestring);
    if (len > TEXT_FIELD_MAX)
        return fail(c, key, "%zu characters; at most %d", len, TEXT_FIELD_MAX);
    for (const char *p = v->valuestring; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return fail(c, key, "must be one line without control characters, got %s", got);
    char *s = malloc(len + 1);
    if (!s)
        return fail(c, key, "out of memory copying %zu bytes", len + 1);
    memcpy(s, v->valuestring, len + 1);
    *out = s;
    return 0;
}

/* Unknown or repeated fields of obj: an error listing the valid ones (lists: up to two
 * NULL-terminated name lists; what: "conv2d", "optimizer", ...). */
static int check_fields(const Ctx *c, const cJSON *obj, const char *const *a,
                        const char *const *b, const char *what)
{
    for (const cJSON *f = obj->child; f; f = f->next) {
        const char *k = f->string ? f->string : "";
        bool known = false;
        for (int i = 0; a && a[i] && !known; i++)
            known = strcmp(a[i], k) == 0;
        for (int i = 0; b && b[i] && !known; i++)
            known = strcmp(b[i], k) == 0;
        if (!known) {
            char list[512], hint[96] = "";
            size_t used = 0;
            list[0] = '\0';
            for (int l = 0; l < 2; l++)
                for (int i = 0; (l ? b : a) && (l ? b : a)[i] && used < sizeof list; i++) {
                    const char *nm = (l ? b : a)[i];
                    int w = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", nm);
                    used += w > 0 ? (size_t)w : 0;
                }
            for (int h = 0; h < COUNT(field_hints); h++) {
                if (strcmp(field_hints[h][0], k) != 0)
                    continue;
                bool valid = false;
                for (int i = 0; a && a[i]; i++)
                    valid |= strcmp(a[i], field_hints[h][1]) == 0;
                for (int i = 0; b && b[i]; i++)
                    valid |= strcmp(b[i], field_hints[h][1]) == 0;
                if (valid)
                    snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", field_hints[h][1]);
            }
            return fail(c, NULL, "unknown field \"%s%.64s\"%s; %s fields: %s", c->path, k, hint,
                        what, list);
        }
        for (const cJSON *g = obj->child; g != f; g = g->next)
            if (g->string && strcmp(g->string, k) == 0)
                return fail(c, k, "appears twice; give each field once");
    }
    return 0;
}

/* 0 if v is a JSON object, else an error showing what one looks like. */
static int expect_object(const Ctx *c, const cJSON *v, const char *field, const char *example)
{
    char got[96];
    if (cJSON_IsObject(v))
        return 0;
    json_show(v, got, sizeof got);
    return fail(c, field, "expected an object like %s, got %s", example, got);
}

/* ---- layer names: an open-addressing hash table (files may have 100000 layers) ------- */

typedef struct {
    int *slot; /* layer index, or -1 */
    size_t mask;
} NameTable;

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* An empty table for nlayers names (load <= 1/2); -1 when out of memory. */
static int names_init(NameTable *t, int nlayers)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)nlayers)
        cap *= 2;
    t->slot = malloc(cap * sizeof *t->slot);
    if (!t->slot)
        return -1;
    for (size_t i = 0; i < cap; i++)
        t->slot[i] = -1;
    t->mask = cap - 1;
    return 0;
}

/* Index of the layer called name among layers[], or -1. */
static int names_lookup(const NameTable *t, const LayerSpec *layers, const char *name)
{
    for (size_t i = name_hash(name) & t->mask;; i = (i + 1) & t->mask) {
        if (t->slot[i] < 0)
            return -1;
        if (strcmp(layers[t->slot[i]].name, name) == 0)
            return t->slot[i];
    }
}

/* Enters layers[idx].name (the caller checked it is not there yet). */
static void names_insert(NameTable *t, const LayerSpec *layers, int idx)
{
    size_t i = name_hash(layers[idx].name) & t->mask;
    while (t->slot[i] >= 0)
        i = (i + 1) & t->mask;
    t->slot[i] = idx;
}

/* ---- layers ------------------------------------------------------------------------- */

/* The name layer lj (index idx) gets: its "name", or "<type>_<idx+1>" like Keras. Empty
 * when neither is readable. Used to say where a forward reference points. */
static void json_layer_name(const cJSON *lj, int idx, char *out, size_t n)
{
    const cJSON *nm = field_get(lj, "name"), *ty = field_get(lj, "type");
    out[0] = '\0';
    if (cJSON_IsString(nm))
        snprintf(out, n, "%s", nm->valuestring);
    else if (!nm && cJSON_IsString(ty))
        snprintf(out, n, "%s_%d", ty->valuestring, idx + 1);
}

/* A valid layer name (1..LAYER_NAME_MAX-1 bytes, no control characters, not "input")
 * copied to out, or an error. */
static int check_layer_name(const Ctx *c, const cJSON *v, char *out)
{
    char got[96];
    json_show(v, got, sizeof got);
    if (!cJSON_IsString(v))
        return fail(c, "name", "expected a string, got %s", got);
    size_t len = strlen(v->valuestring);
    if (len == 0 || len > LAYER_NAME_MAX - 1)
        return fail(c, "name", "%s has %zu characters; names have 1 to %d", got, len,
                    LAYER_NAME_MAX - 1);
    for (const char *p = v->valuestring; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return fail(c, "name", "%s contains a control character", got);
    if (strcmp(v->valuestring, "input") == 0)
        return fail(c, "name", "\"input\" is reserved for the model input; choose another name");
    memcpy(out, v->valuestring, len + 1);
    return 0;
}

/* "inputs": a layer name, or an array of 1..LAYER_MAX_INPUTS names; "input" is the model
 * input. Absent: the previous layer (the model input for the first). */
static int parse_inputs(const Ctx *c, const cJSON *lj, const cJSON *all, int idx,
                        LayerSpec *layers, const NameTable *t)
{
    LayerSpec *L = &layers[idx];
    const cJSON *v = field_get(lj, "inputs");
    char got[96];
    if (!v) {
        L->ninputs = 1;
        L->inputs[0] = idx - 1;
        return 0;
    }
    json_show(v, got, sizeof got);
    int n = cJSON_IsString(v) ? 1 : cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (n < 1)
        return fail(c, "inputs",
                    "expected a layer name or a list of 1 to %d layer names, got %s",
                    LAYER_MAX_INPUTS, got);
    if (n > LAYER_MAX_INPUTS)
        return fail(c, "inputs", "%d inputs; at most %d", n, LAYER_MAX_INPUTS);
    for (int i = 0; i < n; i++) {
        const cJSON *r = cJSON_IsString(v) ? v : cJSON_GetArrayItem(v, i);
        if (!cJSON_IsString(r)) {
            json_show(r, got, sizeof got);
            return fail(c, "inputs", "expected layer names (strings), got %s", got);
        }
        const char *ref = r->valuestring;
        int j = strcmp(ref, "input") == 0 ? -1 : names_lookup(t, layers, ref);
        if (j == -1 && strcmp(ref, "input") != 0) {
            json_show(r, got, sizeof got);
            if (strcmp(ref, L->name) == 0)
                return fail(c, "inputs", "%s is this layer; inputs must be earlier layers", got);
            char later[LAYER_NAME_MAX + 16];
            int k = idx + 1;
            for (const cJSON *o = cJSON_GetArrayItem(all, k); o; o = o->next, k++) {
                json_layer_name(o, k, later, sizeof later);
                if (strcmp(later, ref) == 0)
                    return fail(c, "inputs",
                                "layer %s is layer %d, after this one; inputs must be earlier "
                                "layers (or \"input\")",
                                got, k + 1);
            }
            return fail(c, "inputs",
                        "unknown layer %s; inputs name earlier layers or \"input\" (the model "
                        "input)",
                        got);
        }
        L->inputs[i] = j;
    }
    L->ninputs = n;
    return 0;
}

/* "kernel_initializer", "init_scale", "weight_decay" of a layer with a kernel. */
static int parse_weights(const Ctx *c, const cJSON *lj, LayerSpec *L)
{
    int init;
    bool decay;
    if (get_word(c, lj, "kernel_initializer", false, (int)kind_default_init(L->kind), init_words,
                 COUNT(init_words), "initializer", "initializers", &init))
        return -1;
    L->init = (InitKind)init;
    if (L->init == INIT_UNIFORM || L->init == INIT_NORMAL) {
        if (get_float(c, lj, "init_scale", false, DEFAULT_INIT_SCALE, RANGE_POSITIVE,
                      &L->init_scale))
            return -1;
    } else if (field_get(lj, "init_scale")) {
        return fail(c, "init_scale",
                    "only used with \"kernel_initializer\": \"uniform\" or \"normal\", not \"%s\"",
                    init_words[L->init]);
    }
    if (get_bool(c, lj, "weight_decay", kind_default_decay(L->kind), &decay))
        return -1;
    if (L->kind == LAYER_EMBEDDING)
        L->u.embed.decayed = decay;
    else
        L->no_decay = !decay;
    return 0;
}

/* "activation" into L->act: relu/sigmoid/tanh, or linear/null/absent = none (required,
 * and not linear, for an activation layer). */
static int parse_activation(const Ctx *c, const cJSON *lj, LayerSpec *L)
{
    static const char *const words[] = {"relu", "sigmoid", "tanh", "linear", "gelu"};
    const cJSON *v = field_get(lj, "activation");
    char got[96];
    L->act = ACTIVATION_NONE;
    if (!v || cJSON_IsNull(v)) {
        if (L->kind == LAYER_ACTIVATION)
            return fail(c, NULL, "missing field \"activation\" (relu, sigmoid or tanh)");
        return 0;
    }
    json_show(v, got, sizeof got);
    int i = cJSON_IsString(v) ? name_find(words, COUNT(words), v->valuestring) : -1;
    if (i < 0 && cJSON_IsString(v) && strcmp(v->valuestring, "softmax") == 0)
        return fail(c, "activation",
                    "unknown activation \"softmax\": the softmax is part of \"loss\": "
                    "\"softmax_cross_entropy\"; activations: relu, sigmoid, tanh, gelu, linear");
    if (i < 0)
        return fail(c, "activation", "unknown activation %s; activations: relu, sigmoid, tanh, "
                                     "gelu, linear (or null)",
                    got);
    if (i == 3 && L->kind == LAYER_ACTIVATION)
        return fail(c, "activation", "an activation layer needs relu, sigmoid, tanh or gelu, got %s",
                    got);
    static const int acts[] = {ACT_RELU, ACT_SIGMOID, ACT_TANH, ACTIVATION_NONE, ACT_GELU};
    L->act = acts[i];
    return 0;
}

/* conv2d fields; groups must divide filters (the input channels are the plan's). */
static int parse_conv(const Ctx *c, const cJSON *lj, ConvSpec *s)
{
    int k[2];
    bool bias;
    if (get_int(c, lj, "filters", true, 0, 1, INT_MAX, &s->filters) ||
        get_pair(c, lj, "kernel", true, 0, "height, width", k) ||
        get_square(c, lj, "stride", false, 1, "strides", &s->stride) ||
        get_padding(c, lj, &s->pad, &s->explicit_pad, &s->pad_h, &s->pad_w) ||
        get_int(c, lj, "groups", false, 1, 1, INT_MAX, &s->groups) ||
        get_bool(c, lj, "use_bias", true, &bias))
        return -1;
    s->kh = k[0];
    s->kw = k[1];
    s->no_bias = !bias;
    if (s->filters % s->groups)
        return fail(c, "groups", "%d groups must divide the %d filters", s->groups, s->filters);
    return 0;
}

/* pool2d fields: a window, or "global": true with none of size/stride/padding/ceil_mode. */
static int parse_pool(const Ctx *c, const cJSON *lj, PoolSpec *s)
{
    int kind;
    if (get_word(c, lj, "pool", false, POOL_MAX, pool_words, COUNT(pool_words), "pool kind",
                 "pool kinds", &kind) ||
        get_bool(c, lj, "global", false, &s->global))
        return -1;
    s->kind = (PoolKind)kind;
    if (s->global) {
        /* The window is the whole input; the spec keeps win = stride = 0. */
        static const char *const unused[] = {"size", "stride", "padding", "ceil_mode"};
        for (int i = 0; i < COUNT(unused); i++)
            if (field_get(lj, unused[i]))
                return fail(c, unused[i],
                            "not used with \"global\": true (the window is the whole input)");
        s->pad = PAD_VALID;
        return 0;
    }
    if (get_square(c, lj, "size", false, DEFAULT_POOL_SIZE, "window sizes", &s->win) ||
        get_square(c, lj, "stride", false, s->win, "strides", &s->stride) ||
        get_padding(c, lj, &s->pad, &s->explicit_pad, &s->pad_h, &s->pad_w) ||
        get_bool(c, lj, "ceil_mode", false, &s->ceil_mode))
        return -1;
    if (s->ceil_mode && s->pad == PAD_SAME)
        return fail(c, "ceil_mode",
                    "Caffe's ceil rounding goes with \"valid\" or explicit padding, not \"same\"");
    if (s->explicit_pad && (s->pad_h >= s->win || s->pad_w >= s->win))
        return fail(c, "padding", "[%d, %d] must be smaller than the window %d (Caffe)",
                    s->pad_h, s->pad_w, s->win);
    return 0;
}

/* lrn fields; the window is odd (centred on the channel, as in Caffe and TF). */
static int parse_lrn(const Ctx *c, const cJSON *lj, LrnSpec *s)
{
    if (get_int(c, lj, "size", false, DEFAULT_LRN_SIZE, 1, INT_MAX, &s->size) ||
        get_float(c, lj, "alpha", false, DEFAULT_LRN_ALPHA, RANGE_NONNEG, &s->alpha) ||
        get_float(c, lj, "beta", false, DEFAULT_LRN_BETA, RANGE_NONNEG, &s->beta) ||
        get_float(c, lj, "k", false, DEFAULT_LRN_K, RANGE_POSITIVE, &s->k))
        return -1;
    if (s->size % 2 == 0)
        return fail(c, "size", "expected an odd window (channels c-size/2 .. c+size/2), got %d",
                    s->size);
    return 0;
}

/* The fields of L->kind into the union member it uses; non-zero on error. */
static int parse_kind_fields(const Ctx *c, const cJSON *lj, LayerSpec *L)
{
    bool seq;
    switch (L->kind) {
    case LAYER_DENSE: {
        bool bias;
        if (get_int(c, lj, "units", true, 0, 1, INT_MAX, &L->u.dense.units) ||
            get_bool(c, lj, "use_bias", true, &bias) || get_bool(c, lj, "tp_split", false, &L->u.dense.tp_split))
            return -1;
        L->u.dense.no_bias = !bias;
        return 0;
    }
    case LAYER_CONV2D: return parse_conv(c, lj, &L->u.conv);
    case LAYER_POOL2D: return parse_pool(c, lj, &L->u.pool);
    case LAYER_LSTM:
    case LAYER_RNN:
        if (get_int(c, lj, "units", true, 0, 1, INT_MAX, &L->u.rnn.hidden) ||
            get_bool(c, lj, "return_sequences", false, &seq))
            return -1;
        L->u.rnn.last_only = !seq;
        if (L->kind == LAYER_LSTM)
            return get_float(c, lj, "forget_bias", false, DEFAULT_FORGET_BIAS, RANGE_ANY,
                             &L->u.rnn.forget_bias);
        return 0;
    case LAYER_BATCHNORM:
        return get_float(c, lj, "epsilon", false, DEFAULT_BN_EPS, RANGE_POSITIVE, &L->u.bn.eps) ||
               get_float(c, lj, "momentum", false, DEFAULT_BN_MOMENTUM, RANGE_RATE,
                         &L->u.bn.momentum);
    case LAYER_LRN: return parse_lrn(c, lj, &L->u.lrn);
    case LAYER_DROPOUT:
        return get_float(c, lj, "rate", true, 0, RANGE_RATE, &L->u.dropout.rate);
    case LAYER_EMBEDDING:
    {
        bool trainable = true; /* read below even when a field before it failed */
        int rc = get_int(c, lj, "input_dim", true, 0, 1, INT_MAX, &L->u.embed.vocab) ||
                 get_int(c, lj, "output_dim", true, 0, 1, INT_MAX, &L->u.embed.dim) ||
                 get_bool(c, lj, "trainable", true, &trainable);
        L->u.embed.frozen = !trainable;
        return rc;
    }
    case LAYER_SPARSITY:
        return get_float(c, lj, "rho", false, DEFAULT_SPARSITY_RHO, RANGE_OPEN01,
                         &L->u.sparsity.rho) ||
               get_float(c, lj, "beta", false, DEFAULT_SPARSITY_BETA, RANGE_NONNEG,
                         &L->u.sparsity.beta);
    case LAYER_LAYERNORM:
        return get_float(c, lj, "epsilon", false, DEFAULT_LN_EPS, RANGE_POSITIVE, &L->u.ln.eps);
    case LAYER_ATTENTION: {
        bool proj_bias = true;
        int pad = -1;
        int rc = get_int(c, lj, "heads", true, 0, 1, INT_MAX, &L->u.attn.heads) ||
                 get_bool(c, lj, "causal", false, &L->u.attn.causal) ||
                 get_float(c, lj, "dropout", false, 0, RANGE_RATE, &L->u.attn.dropout) ||
                 get_float(c, lj, "proj_init_scale", false, 0, RANGE_NONNEG, &L->u.attn.proj_init_scale) ||
                 get_int(c, lj, "shards", false, 0, 0, INT_MAX, &L->u.attn.shards) ||
                 get_bool(c, lj, "proj_bias", true, &proj_bias) ||
                 get_int(c, lj, "pad_token_id", false, -1, 0, INT_MAX, &pad);
        L->u.attn.no_proj_bias = !proj_bias;
        L->u.attn.padding_mask = pad >= 0, L->u.attn.pad_id = pad >= 0 ? pad : 0; /* as a built layer */
        return rc;
    }
    case LAYER_TP_COPY:
    case LAYER_TP_SUM: {
        bool bias = L->kind == LAYER_TP_SUM;
        int rc = get_int(c, lj, "ranks", true, 0, 1, INT_MAX, &L->u.tp.ranks) ||
                 (L->kind == LAYER_TP_SUM && get_bool(c, lj, "use_bias", true, &bias));
        L->u.tp.bias = L->kind == LAYER_TP_SUM && bias;
        return rc;
    }
    case LAYER_POSITION:
        return get_int(c, lj, "positions", true, 0, 1, INT_MAX, &L->u.pos.positions) ||
               get_bool(c, lj, "token_types", false, &L->u.pos.token_types);
    case LAYER_CONCAT:
    case LAYER_ADD:
    case LAYER_ACTIVATION:
    case LAYER_FLATTEN:
    case LAYER_TO_SEQUENCE:
    case LAYER_CLASS_TOKEN:
    case LAYER_FIRST_STEP:
    case LAYER_KIND_COUNT: return 0;
    }
    return 0;
}

/* Reads layer idx of the "layers" array into layers[idx] and enters its name in t.
 * input_ids: the model input is token ids (only an embedding may read it). */
static int parse_layer(Ctx *c, const cJSON *all, const cJSON *lj, int idx, LayerSpec *layers,
                       NameTable *t, bool input_ids)
{
    LayerSpec *L = &layers[idx];
    int kind;
    c->layer = idx + 1;
    c->lname = NULL;
    if (expect_object(c, lj, NULL, "{\"name\": \"fc1\", \"type\": \"dense\", \"units\": 10}"))
        return -1;
    const cJSON *nm = field_get(lj, "name");
    if (nm) {
        if (check_layer_name(c, nm, L->name))
            return -1;
        c->lname = L->name;
    }
    if (get_word(c, lj, "type", true, 0, kind_words, LAYER_KIND_COUNT, "type", "types", &kind))
        return -1;
    L->kind = (LayerKind)kind;
    if (!nm) {
        snprintf(L->name, sizeof L->name, "%s_%d", kind_words[kind], idx + 1);
        c->lname = L->name;
    }
    int dup = names_lookup(t, layers, L->name);
    if (dup >= 0)
        return fail(c, "name", "'%s' is taken: layer %d has the same name", L->name, dup + 1);
    if (check_fields(c, lj, common_fields, kind_fields[kind], kind_words[kind]))
        return -1;
    if (parse_inputs(c, lj, all, idx, layers, t))
        return -1;

    int n = L->ninputs;
    if ((L->kind == LAYER_CONCAT || L->kind == LAYER_ADD) && n < 2)
        return fail(c, "inputs", "%s needs at least 2 inputs, got %d; list them in \"inputs\"",
                    kind_words[kind], n);
    if (L->kind != LAYER_CONCAT && L->kind != LAYER_ADD && n != 1)
        return fail(c, "inputs", "%s takes one input, got %d", kind_words[kind], n);
    if (L->kind == LAYER_EMBEDDING && !input_ids)
        return fail(c, "type",
                    "an embedding reads token ids: give the model \"input\": {\"shape\": [T], "
                    "\"ids\": true}");
    if (L->kind == LAYER_EMBEDDING && L->inputs[0] != -1)
        return fail(c, "inputs", "an embedding reads the model input (\"input\"), not layer '%s'",
                    layers[L->inputs[0]].name);
    for (int i = 0; i < n && input_ids && L->kind != LAYER_EMBEDDING; i++)
        if (L->inputs[i] == -1)
            return fail(c, "inputs",
                        "the model input is token ids (\"ids\": true); only an embedding layer "
                        "reads it");

    L->act = ACTIVATION_NONE;
    if (kind_has_act(L->kind) && parse_activation(c, lj, L))
        return -1;
    if (parse_kind_fields(c, lj, L))
        return -1;
    const cJSON *tie = field_get(lj, "tie");
    if (tie) { /* the name of an earlier embedding whose table is this layer's kernel */
        char got[96];
        json_show(tie, got, sizeof got);
        const int j = cJSON_IsString(tie) ? names_lookup(t, layers, tie->valuestring) : -1;
        if (j < 0 || layers[j].kind != LAYER_EMBEDDING)
            return fail(c, "tie", "expected the name of an earlier embedding layer (its table becomes this "
                                  "layer's kernel, transposed), got %s", got);
        if (field_get(lj, "kernel_initializer") || field_get(lj, "init_scale") || field_get(lj, "weight_decay"))
            return fail(c, "tie", "a tied layer has no kernel of its own: kernel_initializer, init_scale and "
                                  "weight_decay are the embedding's");
        L->u.dense.tie = j + 1;
    }
    if (kind_has_kernel(L->kind) && !(L->kind == LAYER_DENSE && L->u.dense.tie > 0) && parse_weights(c, lj, L))
        return -1;
    names_insert(t, layers, idx);
    return 0;
}

/* ---- model-level sections -------------------------------------------------------------- */

/* "input": {"shape": [...], "ids": bool} into m->input and m->input_ids. */
static int parse_input(Ctx *c, const cJSON *root, ModelSpec *m)
{
    char got[96];
    const cJSON *in = field_get(root, "input");
    if (!in)
        return fail(c, NULL, "missing field \"input\" (like {\"shape\": [3, 32, 32]})");
    if (expect_object(c, in, "input", "{\"shape\": [3, 32, 32]}"))
        return -1;
    c->path = "input.";
    if (check_fields(c, in, input_fields, NULL, "input"))
        return -1;
    const cJSON *sh = field_get(in, "shape");
    if (!sh)
        return fail(c, NULL, "missing field \"input.shape\" ([features], [steps, features] or "
                             "[channels, height, width])");
    int n = cJSON_IsArray(sh) ? cJSON_GetArraySize(sh) : 0;
    bool ok = n >= 1 && n <= 3;
    for (int i = 0; ok && i < n; i++)
        ok = json_int_in(cJSON_GetArrayItem(sh, i), 1, INT_MAX, &m->input.d[i]);
    if (!ok) {
        json_show(sh, got, sizeof got);
        return fail(c, "shape",
                    "expected [features], [steps, features] or [channels, height, width] of "
                    "positive integers, got %s",
                    got);
    }
    m->input.rank = n;
    if (get_bool(c, in, "ids", false, &m->input_ids))
        return -1;
    if (m->input_ids && n != 1 && !(n == 2 && m->input.d[1] == 1))
        return fail(c, "ids", "token ids are a sequence: \"shape\" must be [T] (sample-major, a word image) or "
                              "[T, 1] (time-major, a transformer's), got rank %d", n);
    c->path = "";
    return 0;
}

/* optimizer.schedule into s (absent: constant). */
static int parse_schedule(Ctx *c, const cJSON *opt, ScheduleSpec *s)
{
    const cJSON *sj = field_get(opt, "schedule");
    int kind;
    char got[96];
    s->kind = SCHED_CONSTANT;
    if (!sj)
        return 0;
    if (expect_object(c, sj, "schedule",
                      "{\"type\": \"step\", \"boundaries\": [30, 60], \"factors\": [0.1, 0.01]}"))
        return -1;
    c->path = "optimizer.schedule.";
    if (get_word(c, sj, "type", true, 0, sched_words, COUNT(sched_words), "schedule",
                 "schedules", &kind))
        return -1;
    s->kind = (SchedKind)kind;
    if (check_fields(c, sj, sched_fields[kind], NULL, sched_words[kind]))
        return -1;
    if (s->kind == SCHED_CONSTANT)
        return 0;
    if (s->kind == SCHED_WARMUP_STEP &&
        (get_float(c, sj, "warmup_epochs", true, 0, RANGE_POSITIVE, &s->warmup_epochs) ||
         get_float(c, sj, "warmup_from", true, 0, RANGE_CLOSED01, &s->warmup_from)))
        return -1;

    const cJSON *bj = field_get(sj, "boundaries"), *fj = field_get(sj, "factors");
    if (s->kind == SCHED_WARMUP_STEP && !bj && !fj)
        return 0; /* warm-up, then the base lr */
    if (!bj)
        return fail(c, NULL, "missing field \"optimizer.schedule.boundaries\" (epochs, "
                             "increasing)");
    if (!fj)
        return fail(c, NULL, "missing field \"optimizer.schedule.factors\" (one per boundary)");
    int nb = cJSON_IsArray(bj) ? cJSON_GetArraySize(bj) : 0;
    bool ok = nb >= 1 && nb <= SCHED_MAX_BOUNDARIES;
    for (int i = 0; ok && i < nb; i++)
        ok = json_float_in(cJSON_GetArrayItem(bj, i), RANGE_POSITIVE, &s->boundaries[i]) &&
             (i == 0 || s->boundaries[i] > s->boundaries[i - 1]);
    if (!ok) {
        json_show(bj, got, sizeof got);
        return fail(c, "boundaries",
                    "expected 1 to %d increasing positive epochs, got %s", SCHED_MAX_BOUNDARIES,
                    got);
    }
    if (s->kind == SCHED_WARMUP_STEP && s->boundaries[0] < s->warmup_epochs)
        return fail(c, "boundaries", "the first boundary (epoch %g) falls inside the %g warm-up "
                                     "epochs",
                    (double)s->boundaries[0], (double)s->warmup_epochs);
    int nf = cJSON_IsArray(fj) ? cJSON_GetArraySize(fj) : 0;
    ok = nf == nb;
    for (int i = 0; ok && i < nf; i++)
        ok = json_float_in(cJSON_GetArrayItem(fj, i), RANGE_POSITIVE, &s->factors[i]);
    if (!ok) {
        json_show(fj, got, sizeof got);
        return fail(c, "factors",
                    "expected %d positive numbers (one per boundary: multiples of the base lr), "
                    "got %s",
                    nb, got);
    }
    s->nboundaries = nb;
    return 0;
}

/* "optimizer" (an object, or a type name for all defaults) into o. Only the fields of
 * its kind are set; the others stay 0. */
static int parse_optimizer(Ctx *c, const cJSON *root, OptSpec *o)
{
    const cJSON *oj = field_get(root, "optimizer");
    const cJSON *wrapped = NULL;
    int word, rc = -1;
    if (!oj)
        return fail(c, NULL, "missing field \"optimizer\" (like {\"type\": \"sgd\", \"lr\": "
                             "0.01}; types: sgd, rmsprop, adam, adamw)");
    /* "optimizer": "adam" is short for {"type": "adam"} (Keras' string form). */
    if (cJSON_IsString(oj)) {
        wrapped = cJSON_CreateObject();
        if (!wrapped || !cJSON_AddItemReferenceToObject((cJSON *)wrapped, "type", (cJSON *)oj))
            return fail(c, "optimizer", "out of memory");
        oj = wrapped;
    }
    if (expect_object(c, oj, "optimizer", "{\"type\": \"sgd\", \"lr\": 0.01}"))
        goto done;
    c->path = "optimizer.";
    if (get_word(c, oj, "type", true, 0, opt_words, COUNT(opt_words), "optimizer", "optimizers",
                 &word) ||
        check_fields(c, oj, opt_fields[word], NULL, opt_words[word]) ||
        get_float(c, oj, "weight_decay", false, 0, RANGE_NONNEG, &o->weight_decay))
        goto done;
    switch (word) {
    case OPTWORD_SGD:
        o->kind = field_get(oj, "momentum") ? OPT_MOMENTUM : OPT_SGD;
        if (get_float(c, oj, "lr", false, DEFAULT_SGD_LR, RANGE_POSITIVE, &o->lr) ||
            get_float(c, oj, "momentum", false, 0, RANGE_RATE, &o->momentum) ||
            get_bool(c, oj, "nesterov", false, &o->nesterov))
            goto done;
        if (o->nesterov && o->kind != OPT_MOMENTUM) {
            fail(c, "nesterov", "Nesterov momentum needs a \"momentum\" (like 0.9)");
            goto done;
        }
        break;
    case OPTWORD_RMSPROP:
        o->kind = OPT_RMSPROP;
        if (get_float(c, oj, "lr", false, DEFAULT_RMSPROP_LR, RANGE_POSITIVE, &o->lr) ||
            get_float(c, oj, "rho", false, DEFAULT_RHO, RANGE_RATE, &o->rho) ||
            get_float(c, oj, "epsilon", false, DEFAULT_EPSILON, RANGE_POSITIVE, &o->eps))
            goto done;
        break;
    case OPTWORD_ADAM:
        o->kind = OPT_ADAM;
        if (get_float(c, oj, "lr", false, DEFAULT_ADAM_LR, RANGE_POSITIVE, &o->lr) ||
            get_float(c, oj, "beta_1", false, DEFAULT_BETA_1, RANGE_RATE, &o->beta1) ||
            get_float(c, oj, "beta_2", false, DEFAULT_BETA_2, RANGE_RATE, &o->beta2) ||
            get_float(c, oj, "epsilon", false, DEFAULT_EPSILON, RANGE_POSITIVE, &o->eps))
            goto done;
        break;
    case OPTWORD_ADAMW: /* torch.optim.AdamW's defaults; weight_decay is its decoupled decay */
        o->kind = OPT_ADAMW;
        if (get_float(c, oj, "lr", false, DEFAULT_ADAM_LR, RANGE_POSITIVE, &o->lr) ||
            get_float(c, oj, "beta_1", false, DEFAULT_BETA_1, RANGE_RATE, &o->beta1) ||
            get_float(c, oj, "beta_2", false, DEFAULT_BETA_2, RANGE_RATE, &o->beta2) ||
            get_float(c, oj, "epsilon", false, DEFAULT_ADAMW_EPSILON, RANGE_POSITIVE, &o->eps) ||
            get_float(c, oj, "weight_decay", false, DEFAULT_ADAMW_DECAY, RANGE_NONNEG, &o->weight_decay) ||
            get_float(c, oj, "clip_norm", false, 0, RANGE_NONNEG, &o->clip_norm))
            goto done;
        break;
    }
    if (parse_schedule(c, oj, &o->schedule))
        goto done;
    c->path = "";
    rc = 0;
done:
    cJSON_Delete((cJSON *)wrapped); /* a reference: does not free the string it points to */
    return rc;
}

/* The required model "name" (a command-line word) into out (MODEL_NAME_MAX bytes). */
static int parse_model_name(const Ctx *c, const cJSON *root, char *out)
{
    char got[96];
    const cJSON *v = field_get(root, "name");
    if (!v)
        return fail(c, NULL, "missing field \"name\" (the model's name on the command line, "
                             "like \"my-cnn\")");
    json_show(v, got, sizeof got);
    if (!cJSON_IsString(v))
        return fail(c, "name", "expected a string, got %s", got);
    size_t len = strlen(v->valuestring);
    if (len == 0 || len > MODEL_NAME_MAX - 1)
        return fail(c, "name", "%s has %zu characters; model names have 1 to %d", got, len,
                    MODEL_NAME_MAX - 1);
    for (size_t i = 0; i < len; i++) {
        char ch = v->valuestring[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '_' || ch == '.' || ch == '+'))
            return fail(c, "name", "%s: character %zu is not allowed; use letters, digits, '-', "
                                   "'_', '.' and '+'",
                        got, i + 1);
    }
    memcpy(out, v->valuestring, len + 1);
    return 0;
}

/* "layers" into a new m->layers / m->nlayers (set only on success). */
static int parse_layers(Ctx *c, const cJSON *root, ModelSpec *m)
{
    char got[96];
    int rc = -1;
    NameTable t = {0};
    LayerSpec *layers = NULL;
    const cJSON *arr = field_get(root, "layers");
    if (!arr)
        return fail(c, NULL, "missing field \"layers\" (a list of layer objects)");
    int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : -1;
    json_show(arr, got, sizeof got);
    if (n < 0)
        return fail(c, "layers", "expected a list of layer objects, got %s", got);
    if (n == 0)
        return fail(c, "layers", "the list is empty; a model needs at least one layer");
    if (n > MODEL_JSON_MAX_LAYERS)
        return fail(c, "layers", "%d layers; at most %d", n, MODEL_JSON_MAX_LAYERS);
    layers = calloc((size_t)n, sizeof *layers);
    if (!layers || names_init(&t, n)) {
        fail(c, "layers", "out of memory for %d layers", n);
        goto done;
    }
    int i = 0;
    for (const cJSON *lj = arr->child; lj; lj = lj->next, i++)
        if (parse_layer(c, arr, lj, i, layers, &t, m->input_ids))
            goto done;
    c->layer = 0;
    c->lname = NULL;
    m->layers = layers;
    m->nlayers = n;
    layers = NULL;
    rc = 0;
done:
    free(layers);
    free(t.slot);
    return rc;
}

/* "heads": [{"layer": "task1_out", "classes": 13, "name": "task1"}, ...] (multi-task
 * classifiers, P3B1): 1..MODEL_MAX_HEADS outputs, each a distinct layer. */
static int parse_heads(Ctx *c, const cJSON *root, ModelSpec *m)
{
    char got[96], field[32];
    const cJSON *hj = field_get(root, "heads");
    if (!hj)
        return 0;
    int n = cJSON_IsArray(hj) ? cJSON_GetArraySize(hj) : 0;
    if (n < 1 || n > MODEL_MAX_HEADS) {
        json_show(hj, got, sizeof got);
        return fail(c, "heads", "expected a list of 1 to %d heads like {\"layer\": \"out1\", "
                                "\"classes\": 10, \"name\": \"task1\"}, got %s",
                    MODEL_MAX_HEADS, got);
    }
    if (m->loss != LOSS_SOFTMAX_XENT)
        return fail(c, "heads", "heads are classifiers: \"loss\" must be "
                                "\"softmax_cross_entropy\", not \"%s\"",
                    loss_words[m->loss]);
    for (int i = 0; i < n; i++) {
        const cJSON *h = cJSON_GetArrayItem(hj, i);
        HeadSpec *hs = &m->heads[i];
        snprintf(field, sizeof field, "heads[%d]", i + 1);
        if (expect_object(c, h, field, "{\"layer\": \"out1\", \"classes\": 10}"))
            return -1;
        snprintf(field, sizeof field, "heads[%d].", i + 1);
        c->path = field;
        if (check_fields(c, h, head_fields, NULL, "head") ||
            get_int(c, h, "classes", true, 0, 2, INT_MAX, &hs->classes) ||
            get_text(c, h, "name", &hs->name))
            return -1;
        m->nheads = i + 1; /* from here on model_free frees the name */
        const cJSON *lj = field_get(h, "layer");
        if (!lj)
            return fail(c, NULL, "missing field \"%slayer\" (the name of the output layer)",
                        c->path);
        json_show(lj, got, sizeof got);
        hs->layer = -1;
        for (int k = 0; cJSON_IsString(lj) && k < m->nlayers && hs->layer < 0; k++)
            if (strcmp(m->layers[k].name, lj->valuestring) == 0)
                hs->layer = k;
        if (hs->layer < 0)
            return fail(c, "layer", "expected the name of a layer, got %s", got);
        for (int k = 0; k < i; k++)
            if (m->heads[k].layer == hs->layer)
                return fail(c, "layer", "%s is already head %d", got, k + 1);
        c->path = "";
    }
    return 0;
}

/* The whole document into m (zeroed by the caller). On error m may hold partly read
 * parts, all owned by m: model_free releases them. */
static int parse_model(Ctx *c, const cJSON *root, ModelSpec *m)
{
    char got[96];
    int loss, data, version;
    if (expect_object(c, root, NULL,
                      "{\"format\": \"" FORMAT_NAME "\", \"version\": 1, \"name\": ...}") ||
        check_fields(c, root, model_fields, NULL, "model"))
        return -1;
    const cJSON *fmt = field_get(root, "format");
    if (!fmt)
        return fail(c, NULL, "missing field \"format\": a model file starts with "
                             "{\"format\": \"" FORMAT_NAME "\", \"version\": 1, ...");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, FORMAT_NAME) != 0) {
        json_show(fmt, got, sizeof got);
        return fail(c, "format", "expected \"" FORMAT_NAME "\", got %s", got);
    }
    if (get_int(c, root, "version", true, 0, 1, INT_MAX, &version))
        return -1;
    if (version != FORMAT_VERSION)
        return fail(c, "version", "version %d is not supported; this dlperf reads version %d",
                    version, FORMAT_VERSION);
    if (parse_model_name(c, root, m->name) || get_text(c, root, "title", &m->title) ||
        get_text(c, root, "source", &m->source) || get_text(c, root, "family", &m->family) ||
        get_text(c, root, "origin", &m->origin) || get_bool(c, root, "demo", false, &m->demo) ||
        parse_input(c, root, m) || parse_layers(c, root, m))
        return -1;

    if (get_word(c, root, "loss", true, 0, loss_words, COUNT(loss_words), "loss", "losses",
                 &loss))
        return -1;
    m->loss = (LossKind)loss;
    if (parse_heads(c, root, m))
        return -1;
    if (m->loss == LOSS_SOFTMAX_XENT) {
        /* With heads, the model's classes default to the first head's. */
        if (get_int(c, root, "classes", m->nheads == 0, m->nheads ? m->heads[0].classes : 0, 2,
                    INT_MAX, &m->classes))
            return -1;
    } else if (field_get(root, "classes")) {
        return fail(c, "classes", "only used with \"loss\": \"softmax_cross_entropy\", not \"%s\"",
                    loss_words[loss]);
    }
    if (get_bool(c, root, "autoencoder", false, &m->autoencoder))
        return -1;
    if (m->autoencoder && m->loss == LOSS_SOFTMAX_XENT)
        return fail(c, "autoencoder", "an autoencoder's target is its input: use \"loss\": "
                                      "\"mse\", \"sse\" or \"half_sse_mean\"");
    if (parse_optimizer(c, root, &m->opt))
        return -1;
    if (get_word(c, root, "data", true, 0, data_words, COUNT(data_words), "data kind",
                 "data kinds", &data))
        return -1;
    m->data = (DataKind)data;
    const bool tokens = m->data == DATA_TOKENS || m->data == DATA_MASKED_TOKENS || m->data == DATA_TEXT_BYTES;
    if (tokens && !m->input_ids)
        return fail(c, "data", "\"%s\" are token ids: set \"input\": {\"shape\": [T], "
                               "\"ids\": true}", data_words[data]);
    if (!tokens && m->input_ids)
        return fail(c, "data", "\"input\" is token ids (\"ids\": true), which only \"data\": "
                               "\"tokens\", \"masked_tokens\" or \"text_bytes\" provides; got \"%s\"",
                    data_words[data]);
    if (m->data == DATA_TEXT_BYTES && (m->loss != LOSS_SOFTMAX_XENT || m->input.rank != 2 || m->classes != 256))
        return fail(c, "data", "\"text_bytes\" trains a byte-level LM: a sequence of ids ([T, 1]), "
                               "\"loss\": \"softmax_cross_entropy\" and \"classes\": 256");
    if (m->data == DATA_MASKED_TOKENS && (m->loss != LOSS_SOFTMAX_XENT || m->input.rank != 2))
        return fail(c, "data", "\"masked_tokens\" scores a masked LM: a sequence of ids ([T, 1]) and "
                               "\"loss\": \"softmax_cross_entropy\" over the vocabulary");
    return get_int(c, root, "batch", false, DEFAULT_BATCH, 1, INT_MAX, &m->default_batch) ||
           get_int(c, root, "epochs", false, 0, 1, INT_MAX, &m->epochs) ||
           get_int(c, root, "train_samples", false, 0, 1, INT_MAX, &m->train_samples);
}

/* cJSON stopped at `end` inside text: "src:LINE:COL: not valid JSON ..." (1-based, bytes). */
static int json_syntax_error(const Ctx *c, const char *text, const char *end)
{
    int line = 1, col = 1;
    if (!end)
        end = text + strlen(text);
    for (const char *p = text; p < end && *p; p++) {
        if (*p == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    Ctx at = *c;
    char src[512];
    snprintf(src, sizeof src, "%s:%d:%d", c->src, line, col);
    at.src = src;
    if (!*end)
        return fail(&at, NULL, "not valid JSON: the text ends too early (a truncated file?)");
    char near[24];
    int k = 0;
    for (; k < 20 && end[k] && end[k] != '\n'; k++)
        near[k] = ((unsigned char)end[k] < 0x20 || (unsigned char)end[k] >= 0x7f) ? '?' : end[k];
    near[k] = '\0';
    return fail(&at, NULL, "not valid JSON: parsing stopped at '%s'", near);
}

ModelSpec *model_json_parse(const char *text, const char *source_name, char *err, size_t errlen)
{
    char scratch[2];
    Ctx c = {.src = source_name ? source_name : "model", .err = err, .errlen = errlen,
             .path = ""};
    cJSON *root = NULL;
    ModelSpec *m = NULL;
    int rc = -1;
    if (!err || errlen == 0) {
        c.err = scratch;
        c.errlen = sizeof scratch;
    }
    c.err[0] = '\0';
    if (!text) {
        fail(&c, NULL, "no text");
        goto done;
    }
    if ((unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
        (unsigned char)text[2] == 0xBF)
        text += 3; /* a UTF-8 byte-order mark, as some Windows editors write */
    if (text[strspn(text, " \t\r\n")] == '\0') {
        fail(&c, NULL, "empty: no JSON model in it (see docs/model-format.md)");
        goto done;
    }
    const char *end = NULL;
    root = cJSON_ParseWithOpts(text, &end, true);
    if (!root) {
        json_syntax_error(&c, text, end ? end : cJSON_GetErrorPtr());
        goto done;
    }
    m = calloc(1, sizeof *m);
    if (!m) {
        fail(&c, NULL, "out of memory");
        goto done;
    }
    if (parse_model(&c, root, m))
        goto done;
    rc = 0;
done:
    cJSON_Delete(root);
    if (rc) {
        model_free(m);
        m = NULL;
    }
    return m;
}

ModelSpec *model_json_load(const char *path, char *err, size_t errlen)
{
    char scratch[2];
    Ctx c = {.src = path ? path : "(null)", .err = err, .errlen = errlen, .path = ""};
    FILE *f = NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    ModelSpec *m = NULL;
    struct stat st;
    if (!err || errlen == 0) {
        c.err = scratch;
        c.errlen = sizeof scratch;
    }
    if (!path) {
        fail(&c, NULL, "no path given");
        goto done;
    }
    f = fopen(path, "rb");
    if (!f) {
        fail(&c, NULL, "cannot open: %s", strerror(errno));
        goto done;
    }
    if (fstat(fileno(f), &st) != 0) {
        fail(&c, NULL, "cannot stat: %s", strerror(errno));
        goto done;
    }
    if (S_ISDIR(st.st_mode)) {
        fail(&c, NULL, "is a directory; expected a JSON model file");
        goto done;
    }
    if (S_ISREG(st.st_mode) && st.st_size > MODEL_JSON_MAX_BYTES) {
        fail(&c, NULL, "%lld bytes; model files are limited to %d MiB", (long long)st.st_size,
             MODEL_JSON_MAX_BYTES >> 20);
        goto done;
    }
    /* Read to EOF rather than trusting st_size: pipes and /dev/stdin have none. */
    for (;;) {
        if (len + 1 >= cap) {
            size_t ncap = cap ? 2 * cap : 65536;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                fail(&c, NULL, "out of memory reading %zu bytes", ncap);
                goto done;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (len > MODEL_JSON_MAX_BYTES) {
            fail(&c, NULL, "more than %d MiB; model files are limited to that",
                 MODEL_JSON_MAX_BYTES >> 20);
            goto done;
        }
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        fail(&c, NULL, "cannot read: %s", strerror(errno));
        goto done;
    }
    buf[len] = '\0';
    if (len == 0) {
        fail(&c, NULL, "empty file; expected a JSON model (see docs/model-format.md)");
        goto done;
    }
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        fail(&c, NULL, "byte %zu is NUL: not a text file (a model file is JSON text)",
             (size_t)(nul - buf) + 1);
        goto done;
    }
    m = model_json_parse(buf, path, c.err, c.errlen);
done:
    if (f)
        fclose(f);
    free(buf);
    return m;
}

void model_free(ModelSpec *m)
{
    if (!m)
        return;
    /* The const in ModelSpec is for zoo models; these were malloc'd by the parser. */
    free((void *)m->layers);
    free((void *)m->title);
    free((void *)m->source);
    free((void *)m->family);
    free((void *)m->origin);
    for (int i = 0; i < m->nheads && i < MODEL_MAX_HEADS; i++)
        free((void *)m->heads[i].name);
    free(m);
}

/* ---- export ------------------------------------------------------------------------- */

/* The double whose shortest decimal form reads back (as the parser reads it: strtod, then
 * float) as f. Writing (double)f would give 0.0099999997764825821 for 0.01f. */
static double float_for_json(float f)
{
    char buf[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, (double)f);
        double d = strtod(buf, NULL);
        if ((float)d == f)
            return d;
    }
    return (double)f;
}

/* All adders return false when out of memory (cJSON returns NULL). */
static bool add_int(cJSON *o, const char *k, int v)
{
    return cJSON_AddNumberToObject(o, k, v) != NULL;
}

static bool add_float(cJSON *o, const char *k, float v)
{
    return cJSON_AddNumberToObject(o, k, float_for_json(v)) != NULL;
}

/* A NULL v (an enum value with no word) fails like an allocation. */
static bool add_str(cJSON *o, const char *k, const char *v)
{
    return v && cJSON_AddStringToObject(o, k, v) != NULL;
}

static bool add_bool(cJSON *o, const char *k, bool v)
{
    return cJSON_AddBoolToObject(o, k, v) != NULL;
}

/* n (a == b) or [a, b]. */
static bool add_pair(cJSON *o, const char *k, int a, int b)
{
    if (a == b)
        return add_int(o, k, a);
    int v[2] = {a, b};
    cJSON *arr = cJSON_CreateIntArray(v, 2);
    if (arr && cJSON_AddItemToObject(o, k, arr))
        return true;
    cJSON_Delete(arr);
    return false;
}

static bool add_floats(cJSON *o, const char *k, const float *v, int n)
{
    cJSON *arr = cJSON_AddArrayToObject(o, k);
    for (int i = 0; arr && i < n; i++) {
        cJSON *x = cJSON_CreateNumber(float_for_json(v[i]));
        if (!x || !cJSON_AddItemToArray(arr, x)) {
            cJSON_Delete(x);
            return false;
        }
    }
    return arr != NULL;
}

/* The file's word for enum value v, or NULL when v is out of range (export fails). */
static const char *word_of(const char *const *words, int count, int v)
{
    return v >= 0 && v < count ? words[v] : NULL;
}

/* "padding" unless "valid" (the default); false for an unknown PadMode. */
static bool add_padding(cJSON *o, PadMode pad, bool explicit_pad, int ph, int pw)
{
    if (explicit_pad)
        return add_pair(o, "padding", ph, pw);
    if (pad == PAD_SAME)
        return add_str(o, "padding", "same");
    return pad == PAD_VALID;
}

/* kernel_initializer / init_scale / weight_decay where they differ from the defaults. */
static bool add_weights(cJSON *o, const LayerSpec *L)
{
    if (L->init != kind_default_init(L->kind) &&
        !add_str(o, "kernel_initializer", word_of(init_words, COUNT(init_words), L->init)))
        return false;
    if ((L->init == INIT_UNIFORM || L->init == INIT_NORMAL) &&
        L->init_scale != DEFAULT_INIT_SCALE && !add_float(o, "init_scale", L->init_scale))
        return false;
    if (L->kind == LAYER_EMBEDDING)
        return !L->u.embed.decayed || add_bool(o, "weight_decay", true);
    return !L->no_decay || add_bool(o, "weight_decay", false);
}

/* "activation" unless none (an activation layer must have one). */
static bool add_activation(cJSON *o, const LayerSpec *L)
{
    if (L->act == ACTIVATION_NONE)
        return L->kind != LAYER_ACTIVATION;
    return add_str(o, "activation", word_of(act_words, ACT_COUNT, L->act));
}

/* The union member L->kind uses, defaults left out (units, filters, kernel, size, rate
 * and the embedding sizes are always written: they are what a reader looks for). */
static bool add_kind_fields(cJSON *o, const LayerSpec *L)
{
    switch (L->kind) {
    case LAYER_DENSE:
        return add_int(o, "units", L->u.dense.units) &&
               (!L->u.dense.no_bias || add_bool(o, "use_bias", false)) &&
               (!L->u.dense.tp_split || add_bool(o, "tp_split", true));
    case LAYER_CONV2D: {
        const ConvSpec *s = &L->u.conv;
        return add_int(o, "filters", s->filters) && add_pair(o, "kernel", s->kh, s->kw) &&
               (s->stride == 1 || add_int(o, "stride", s->stride)) &&
               add_padding(o, s->pad, s->explicit_pad, s->pad_h, s->pad_w) &&
               (s->groups == 1 || add_int(o, "groups", s->groups)) &&
               (!s->no_bias || add_bool(o, "use_bias", false));
    }
    case LAYER_POOL2D: {
        const PoolSpec *s = &L->u.pool;
        if (s->kind != POOL_MAX && !add_str(o, "pool", word_of(pool_words, COUNT(pool_words),
                                                                s->kind)))
            return false;
        if (s->global)
            return add_bool(o, "global", true);
        return add_int(o, "size", s->win) && (s->stride == s->win || add_int(o, "stride", s->stride)) &&
               add_padding(o, s->pad, s->explicit_pad, s->pad_h, s->pad_w) &&
               (!s->ceil_mode || add_bool(o, "ceil_mode", true));
    }
    case LAYER_LSTM:
    case LAYER_RNN:
        return add_int(o, "units", L->u.rnn.hidden) &&
               (L->u.rnn.last_only || add_bool(o, "return_sequences", true)) &&
               (L->kind != LAYER_LSTM || L->u.rnn.forget_bias == DEFAULT_FORGET_BIAS ||
                add_float(o, "forget_bias", L->u.rnn.forget_bias));
    case LAYER_BATCHNORM:
        return (L->u.bn.eps == DEFAULT_BN_EPS || add_float(o, "epsilon", L->u.bn.eps)) &&
               (L->u.bn.momentum == DEFAULT_BN_MOMENTUM ||
                add_float(o, "momentum", L->u.bn.momentum));
    case LAYER_LRN: {
        const LrnSpec *s = &L->u.lrn;
        return (s->size == DEFAULT_LRN_SIZE || add_int(o, "size", s->size)) &&
               (s->alpha == DEFAULT_LRN_ALPHA || add_float(o, "alpha", s->alpha)) &&
               (s->beta == DEFAULT_LRN_BETA || add_float(o, "beta", s->beta)) &&
               (s->k == DEFAULT_LRN_K || add_float(o, "k", s->k));
    }
    case LAYER_DROPOUT: return add_float(o, "rate", L->u.dropout.rate);
    case LAYER_EMBEDDING:
        return add_int(o, "input_dim", L->u.embed.vocab) && add_int(o, "output_dim", L->u.embed.dim) &&
               (!L->u.embed.frozen || cJSON_AddFalseToObject(o, "trainable"));
    case LAYER_SPARSITY:
        return (L->u.sparsity.rho == DEFAULT_SPARSITY_RHO ||
                add_float(o, "rho", L->u.sparsity.rho)) &&
               (L->u.sparsity.beta == DEFAULT_SPARSITY_BETA ||
                add_float(o, "beta", L->u.sparsity.beta));
    case LAYER_LAYERNORM:
        return L->u.ln.eps == DEFAULT_LN_EPS || add_float(o, "epsilon", L->u.ln.eps);
    case LAYER_ATTENTION:
        return add_int(o, "heads", L->u.attn.heads) && (!L->u.attn.causal || add_bool(o, "causal", true)) &&
               (L->u.attn.dropout == 0 || add_float(o, "dropout", L->u.attn.dropout)) &&
               (L->u.attn.proj_init_scale == 0 || add_float(o, "proj_init_scale", L->u.attn.proj_init_scale)) &&
               (L->u.attn.shards <= 1 || add_int(o, "shards", L->u.attn.shards)) &&
               (!L->u.attn.no_proj_bias || add_bool(o, "proj_bias", false)) &&
               (!L->u.attn.padding_mask || add_int(o, "pad_token_id", L->u.attn.pad_id));
    case LAYER_TP_COPY: return add_int(o, "ranks", L->u.tp.ranks);
    case LAYER_TP_SUM:
        return add_int(o, "ranks", L->u.tp.ranks) && (L->u.tp.bias || add_bool(o, "use_bias", false));
    case LAYER_POSITION:
        return add_int(o, "positions", L->u.pos.positions) &&
               (!L->u.pos.token_types || add_bool(o, "token_types", true));
    case LAYER_CONCAT:
    case LAYER_ADD:
    case LAYER_ACTIVATION:
    case LAYER_FLATTEN:
    case LAYER_TO_SEQUENCE:
    case LAYER_CLASS_TOKEN:
    case LAYER_FIRST_STEP: return true;
    case LAYER_KIND_COUNT: return false;
    }
    return false;
}

/* Layer i as a JSON object, or NULL (out of memory, or a value the format cannot say). */
static cJSON *layer_to_json(const ModelSpec *m, int i)
{
    const LayerSpec *L = &m->layers[i];
    cJSON *o = cJSON_CreateObject();
    if (!o || !add_str(o, "name", L->name) ||
        !add_str(o, "type", word_of(kind_words, LAYER_KIND_COUNT, (int)L->kind)))
        goto fail;
    int n = L->ninputs > 0 ? L->ninputs : 1;
    if (n > LAYER_MAX_INPUTS)
        goto fail;
    if (!(n == 1 && L->inputs[0] == i - 1)) {
        cJSON *arr = cJSON_AddArrayToObject(o, "inputs");
        if (!arr)
            goto fail;
        for (int k = 0; k < n; k++) {
            int j = L->inputs[k];
            if (j < -1 || j >= i)
                goto fail;
            cJSON *s = cJSON_CreateString(j < 0 ? "input" : m->layers[j].name);
            if (!s || !cJSON_AddItemToArray(arr, s)) {
                cJSON_Delete(s);
                goto fail;
            }
        }
    }
    const bool tied = L->kind == LAYER_DENSE && L->u.dense.tie > 0;
    if (tied && (L->u.dense.tie - 1 >= i || !add_str(o, "tie", m->layers[L->u.dense.tie - 1].name)))
        goto fail;
    if (!add_kind_fields(o, L) || (kind_has_act(L->kind) && !add_activation(o, L)) ||
        (kind_has_kernel(L->kind) && !tied && !add_weights(o, L)))
        goto fail;
    return o;
fail:
    cJSON_Delete(o);
    return NULL;
}

/* The optimizer object (the fields of its kind, and a non-constant schedule), or NULL. */
static cJSON *optimizer_to_json(const OptSpec *op)
{
    cJSON *o = cJSON_CreateObject();
    const ScheduleSpec *s = &op->schedule;
    bool ok = o != NULL;
    switch (op->kind) {
    case OPT_SGD:
    case OPT_MOMENTUM:
        ok = ok && add_str(o, "type", "sgd") && add_float(o, "lr", op->lr);
        if (op->kind == OPT_MOMENTUM)
            ok = ok && add_float(o, "momentum", op->momentum) &&
                 (!op->nesterov || add_bool(o, "nesterov", true));
        break;
    case OPT_RMSPROP:
        ok = ok && add_str(o, "type", "rmsprop") && add_float(o, "lr", op->lr) &&
             (op->rho == DEFAULT_RHO || add_float(o, "rho", op->rho)) &&
             (op->eps == DEFAULT_EPSILON || add_float(o, "epsilon", op->eps));
        break;
    case OPT_ADAM:
        ok = ok && add_str(o, "type", "adam") && add_float(o, "lr", op->lr) &&
             (op->beta1 == DEFAULT_BETA_1 || add_float(o, "beta_1", op->beta1)) &&
             (op->beta2 == DEFAULT_BETA_2 || add_float(o, "beta_2", op->beta2)) &&
             (op->eps == DEFAULT_EPSILON || add_float(o, "epsilon", op->eps));
        break;
    case OPT_ADAMW:
        ok = ok && add_str(o, "type", "adamw") && add_float(o, "lr", op->lr) &&
             (op->beta1 == DEFAULT_BETA_1 || add_float(o, "beta_1", op->beta1)) &&
             (op->beta2 == DEFAULT_BETA_2 || add_float(o, "beta_2", op->beta2)) &&
             (op->eps == DEFAULT_ADAMW_EPSILON || add_float(o, "epsilon", op->eps)) &&
             (op->clip_norm == 0 || add_float(o, "clip_norm", op->clip_norm)) &&
             add_float(o, "weight_decay", op->weight_decay); /* its default is not 0 */
        break;
    default: ok = false;
    }
    ok = ok && (op->kind == OPT_ADAMW || op->weight_decay == 0 || add_float(o, "weight_decay", op->weight_decay));
    if (ok && s->kind != SCHED_CONSTANT) {
        cJSON *sj = cJSON_AddObjectToObject(o, "schedule");
        ok = sj && s->nboundaries >= 0 && s->nboundaries <= SCHED_MAX_BOUNDARIES &&
             add_str(sj, "type", word_of(sched_words, COUNT(sched_words), s->kind));
        if (ok && s->kind == SCHED_WARMUP_STEP)
            ok = add_float(sj, "warmup_epochs", s->warmup_epochs) &&
                 add_float(sj, "warmup_from", s->warmup_from);
        if (ok && s->nboundaries > 0)
            ok = add_floats(sj, "boundaries", s->boundaries, s->nboundaries) &&
                 add_floats(sj, "factors", s->factors, s->nboundaries);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* A growing string; oom latches. */
typedef struct {
    char *p;
    size_t len, cap;
    bool oom;
} StrBuf;

/* Appends s; on allocation failure sets b->oom and keeps what it had. */
static void sb_add(StrBuf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

/* item on one line with ", " and ": " separators (cJSON's compact form has none; its
 * pretty form spreads each layer over a dozen lines). Leaves are printed by cJSON. */
static void sb_add_compact(StrBuf *b, const cJSON *item)
{
    if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
        bool obj = cJSON_IsObject(item);
        sb_add(b, obj ? "{" : "[");
        for (const cJSON *ch = item->child; ch; ch = ch->next) {
            if (ch != item->child)
                sb_add(b, ", ");
            if (obj) {
                sb_add(b, "\"");
                sb_add(b, ch->string); /* our own keys: plain identifiers */
                sb_add(b, "\": ");
            }
            sb_add_compact(b, ch);
        }
        sb_add(b, obj ? "}" : "]");
        return;
    }
    char *s = cJSON_PrintUnformatted(item);
    if (!s) {
        b->oom = true;
        return;
    }
    sb_add(b, s);
    free(s);
}

char *model_json_export(const ModelSpec *m)
{
    cJSON *root = cJSON_CreateObject();
    StrBuf b = {0};
    char *out = NULL;
    bool ok = root && m->nlayers >= 1 && m->input.rank >= 1 && m->input.rank <= 3;
    ok = ok && add_str(root, "format", FORMAT_NAME) && add_int(root, "version", FORMAT_VERSION) &&
         add_str(root, "name", m->name) && (!m->title || add_str(root, "title", m->title)) &&
         (!m->source || add_str(root, "source", m->source)) &&
         (!m->family || add_str(root, "family", m->family)) &&
         (!m->origin || add_str(root, "origin", m->origin)) &&
         (!m->demo || add_bool(root, "demo", true));
    cJSON *in = ok ? cJSON_AddObjectToObject(root, "input") : NULL;
    cJSON *shape = in ? cJSON_CreateIntArray(m->input.d, m->input.rank) : NULL;
    if (shape && !cJSON_AddItemToObject(in, "shape", shape)) {
        cJSON_Delete(shape);
        shape = NULL;
    }
    ok = ok && shape && (!m->input_ids || add_bool(in, "ids", true));
    cJSON *layers = ok ? cJSON_AddArrayToObject(root, "layers") : NULL;
    ok = ok && layers;
    for (int i = 0; ok && i < m->nlayers; i++) {
        cJSON *l = layer_to_json(m, i);
        ok = l && cJSON_AddItemToArray(layers, l);
        if (!ok)
            cJSON_Delete(l);
    }
    ok = ok && add_str(root, "loss", word_of(loss_words, COUNT(loss_words), m->loss)) &&
         (m->loss != LOSS_SOFTMAX_XENT ||
          (m->nheads > 0 && m->classes == m->heads[0].classes) ||
          add_int(root, "classes", m->classes)) &&
         m->nheads >= 0 && m->nheads <= MODEL_MAX_HEADS;
    cJSON *heads = ok && m->nheads > 0 ? cJSON_AddArrayToObject(root, "heads") : NULL;
    ok = ok && (m->nheads == 0 || heads);
    for (int i = 0; ok && i < m->nheads; i++) {
        const HeadSpec *h = &m->heads[i];
        cJSON *hj = cJSON_CreateObject();
        ok = hj && cJSON_AddItemToArray(heads, hj);
        if (!ok) {
            cJSON_Delete(hj);
            break;
        }
        ok = h->layer >= 0 && h->layer < m->nlayers &&
             add_str(hj, "layer", m->layers[h->layer].name) && add_int(hj, "classes", h->classes) &&
             (!h->name || add_str(hj, "name", h->name));
    }
    ok = ok && (!m->autoencoder || add_bool(root, "autoencoder", true));
    cJSON *opt = ok ? optimizer_to_json(&m->opt) : NULL;
    if (opt && !cJSON_AddItemToObject(root, "optimizer", opt)) {
        cJSON_Delete(opt);
        opt = NULL;
    }
    ok = ok && opt;
    ok = ok && add_str(root, "data", word_of(data_words, COUNT(data_words), m->data)) &&
         add_int(root, "batch", m->default_batch) &&
         (m->epochs == 0 || add_int(root, "epochs", m->epochs)) &&
         (m->train_samples == 0 || add_int(root, "train_samples", m->train_samples));
    if (!ok)
        goto done;

    /* One top-level field per line; lists of objects (layers, heads) one element a line. */
    sb_add(&b, "{\n");
    for (const cJSON *f = root->child; f; f = f->next) {
        sb_add(&b, "  \"");
        sb_add(&b, f->string);
        sb_add(&b, "\": ");
        if (cJSON_IsArray(f) && cJSON_IsObject(f->child)) {
            sb_add(&b, "[\n");
            for (const cJSON *l = f->child; l; l = l->next) {
                sb_add(&b, "    ");
                sb_add_compact(&b, l);
                sb_add(&b, l->next ? ",\n" : "\n");
            }
            sb_add(&b, "  ]");
        } else {
            sb_add_compact(&b, f);
        }
        sb_add(&b, f->next ? ",\n" : "\n");
    }
    sb_add(&b, "}\n");
    if (!b.oom) {
        out = b.p;
        b.p = NULL;
    }
done:
    free(b.p);
    cJSON_Delete(root);
    return out;
}
