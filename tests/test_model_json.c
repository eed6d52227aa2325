/* tests/test_model_json.c — JSON model files (models/model_json.c): every field of small
 * CNN, DAG, LSTM and embedding models lands where it should; export -> parse -> export is
 * exact (text and every field, zoo models included); every error class gives one line
 * naming the layer, field and value; file errors (missing, directory, empty, truncated,
 * binary, too large) name the path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/model_json.h"
#include "models/plan.h"

/* ---- helpers ------------------------------------------------------------------------ */

static const char *cnn_text =
    "{ \"format\": \"dlperf-model\", \"version\": 1,\n"
    "  \"name\": \"my-cnn\", \"title\": \"A small CNN\", \"family\": \"CNN\",\n"
    "  \"source\": \"tests/test_model_json.c\",\n"
    "  \"input\": {\"shape\": [3, 32, 32]},\n"
    "  \"layers\": [\n"
    "    {\"name\": \"conv1\", \"type\": \"conv2d\", \"filters\": 32, \"kernel\": [3, 3],\n"
    "     \"stride\": 1, \"padding\": \"same\", \"activation\": \"relu\"},\n"
    "    {\"name\": \"pool1\", \"type\": \"pool2d\", \"pool\": \"max\", \"size\": 2, \"stride\": 2},\n"
    "    {\"name\": \"conv2\", \"type\": \"conv2d\", \"filters\": 64, \"kernel\": [5, 3], \"stride\": 2,\n"
    "     \"padding\": [2, 1], \"use_bias\": false, \"kernel_initializer\": \"he_normal\"},\n"
    "    {\"type\": \"batchnorm\", \"activation\": \"relu\"},\n"
    "    {\"name\": \"pool2\", \"type\": \"pool2d\", \"pool\": \"avg\", \"size\": 3, \"stride\": 2,\n"
    "     \"padding\": 1, \"ceil_mode\": true},\n"
    "    {\"name\": \"flat\", \"type\": \"flatten\"},\n"
    "    {\"name\": \"drop\", \"type\": \"dropout\", \"rate\": 0.5},\n"
    "    {\"name\": \"fc\", \"type\": \"dense\", \"units\": 10, \"inputs\": [\"drop\"]}\n"
    "  ],\n"
    "  \"loss\": \"softmax_cross_entropy\", \"classes\": 10,\n"
    "  \"optimizer\": {\"type\": \"sgd\", \"lr\": 0.01, \"momentum\": 0.9, \"weight_decay\": 5e-5,\n"
    "                \"schedule\": {\"type\": \"step\", \"boundaries\": [30, 60], \"factors\": [0.1, 0.01]}},\n"
    "  \"data\": \"images\", \"batch\": 64, \"epochs\": 90, \"train_samples\": 50000 }\n";

/* Inception-like block and a residual: concat and add, references by name and "input". */
static const char *dag_text =
    "{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"dag\",\n"
    " \"input\": {\"shape\": [16, 8, 8]},\n"
    " \"layers\": [\n"
    "  {\"name\": \"a\", \"type\": \"conv2d\", \"filters\": 8, \"kernel\": 1, \"activation\": \"relu\"},\n"
    "  {\"name\": \"b\", \"type\": \"conv2d\", \"filters\": 8, \"kernel\": 3, \"padding\": \"same\",\n"
    "   \"inputs\": \"input\"},\n"
    "  {\"name\": \"c\", \"type\": \"pool2d\", \"size\": 3, \"stride\": 1, \"padding\": \"same\",\n"
    "   \"inputs\": [\"input\"]},\n"
    "  {\"name\": \"cat\", \"type\": \"concat\", \"inputs\": [\"a\", \"b\", \"c\"]},\n"
    "  {\"name\": \"proj\", \"type\": \"conv2d\", \"filters\": 32, \"kernel\": 1},\n"
    "  {\"name\": \"res\", \"type\": \"add\", \"inputs\": [\"proj\", \"cat\"], \"activation\": \"relu\"},\n"
    "  {\"name\": \"gap\", \"type\": \"pool2d\", \"pool\": \"avg\", \"global\": true},\n"
    "  {\"name\": \"out\", \"type\": \"dense\", \"units\": 5}\n"
    " ],\n"
    " \"loss\": \"softmax_cross_entropy\", \"classes\": 5,\n"
    " \"optimizer\": \"sgd\", \"data\": \"images\"}\n";

static const char *lstm_text =
    "{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"lstm-2\", \"family\": \"RNN\",\n"
    " \"input\": {\"shape\": [30, 64]},\n"
    " \"layers\": [\n"
    "  {\"name\": \"l1\", \"type\": \"lstm\", \"units\": 128, \"return_sequences\": true,\n"
    "   \"forget_bias\": 0},\n"
    "  {\"name\": \"r1\", \"type\": \"rnn\", \"units\": 32, \"kernel_initializer\": \"uniform\",\n"
    "   \"init_scale\": 0.08, \"weight_decay\": false},\n"
    "  {\"name\": \"out\", \"type\": \"dense\", \"units\": 16, \"activation\": \"sigmoid\"}\n"
    " ],\n"
    " \"loss\": \"sse\",\n"
    " \"optimizer\": {\"type\": \"rmsprop\", \"lr\": 0.002, \"rho\": 0.95, \"epsilon\": 1e-6},\n"
    " \"data\": \"sequence\", \"batch\": 128}\n";

/* TextCNN-like: token ids -> embedding -> convolution over (T, dim) -> global max pool. */
static const char *embed_text =
    "{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"text-cnn\",\n"
    " \"input\": {\"shape\": [50], \"ids\": true},\n"
    " \"layers\": [\n"
    "  {\"name\": \"emb\", \"type\": \"embedding\", \"input_dim\": 5000, \"output_dim\": 64},\n"
    "  {\"name\": \"conv\", \"type\": \"conv2d\", \"filters\": 100, \"kernel\": [3, 64],\n"
    "   \"activation\": \"relu\"},\n"
    "  {\"name\": \"pool\", \"type\": \"pool2d\", \"global\": true},\n"
    "  {\"name\": \"flat\", \"type\": \"flatten\"},\n"
    "  {\"name\": \"drop\", \"type\": \"dropout\", \"rate\": 0.5},\n"
    "  {\"name\": \"out\", \"type\": \"dense\", \"units\": 2}\n"
    " ],\n"
    " \"loss\": \"softmax_cross_entropy\", \"classes\": 2,\n"
    " \"optimizer\": {\"type\": \"adam\", \"schedule\": {\"type\": \"warmup_step\",\n"
    "   \"warmup_epochs\": 2, \"warmup_from\": 0.125}},\n"
    " \"data\": \"tokens\"}\n";

/* Every layer kind and every non-default field, for the round trip. */
static const char *sink_text =
    "{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"sink_1.0+x\",\n"
    " \"title\": \"Every field \\\"quoted\\\" \\u00e9\", \"source\": \"s\", \"family\": \"AE\",\n"
    " \"comment\": \"ignored\",\n"
    " \"input\": {\"shape\": [3, 16, 16]},\n"
    " \"layers\": [\n"
    "  {\"name\": \"c1\", \"type\": \"conv2d\", \"filters\": 8, \"kernel\": [3, 5], \"stride\": [2, 2],\n"
    "   \"padding\": [1, 2], \"groups\": 2, \"use_bias\": false, \"activation\": \"tanh\",\n"
    "   \"kernel_initializer\": \"he_normal\", \"weight_decay\": false, \"comment\": \"x\"},\n"
    "  {\"name\": \"bn1\", \"type\": \"batchnorm\", \"epsilon\": 1e-5, \"momentum\": 0.9,\n"
    "   \"activation\": \"relu\"},\n"
    "  {\"name\": \"lrn1\", \"type\": \"lrn\", \"size\": 3, \"alpha\": 2e-4, \"beta\": 0.5, \"k\": 2},\n"
    "  {\"name\": \"p1\", \"type\": \"pool2d\", \"pool\": \"avg\", \"size\": 3, \"stride\": 2,\n"
    "   \"padding\": 1, \"ceil_mode\": true},\n"
    "  {\"name\": \"c2\", \"type\": \"conv2d\", \"filters\": 8, \"kernel\": 1, \"padding\": \"same\",\n"
    "   \"kernel_initializer\": \"uniform\", \"init_scale\": 0.1},\n"
    "  {\"name\": \"c3\", \"type\": \"conv2d\", \"filters\": 8, \"kernel\": 1, \"inputs\": [\"p1\"],\n"
    "   \"kernel_initializer\": \"normal\", \"padding\": 0},\n"
    "  {\"name\": \"cat\", \"type\": \"concat\", \"inputs\": [\"c2\", \"c3\", \"c3\"]},\n"
    "  {\"name\": \"c4\", \"type\": \"conv2d\", \"filters\": 24, \"kernel\": 1, \"activation\": \"linear\"},\n"
    "  {\"name\": \"sum\", \"type\": \"add\", \"inputs\": [\"c4\", \"cat\"], \"activation\": \"sigmoid\"},\n"
    "  {\"name\": \"act\", \"type\": \"activation\", \"activation\": \"relu\"},\n"
    "  {\"name\": \"gp\", \"type\": \"pool2d\", \"pool\": \"avg\", \"global\": true},\n"
    "  {\"name\": \"fl\", \"type\": \"flatten\"},\n"
    "  {\"name\": \"d1\", \"type\": \"dense\", \"units\": 20, \"use_bias\": false,\n"
    "   \"activation\": null},\n"
    "  {\"name\": \"sp\", \"type\": \"sparsity\", \"rho\": 0.05, \"beta\": 0.5},\n"
    "  {\"name\": \"dr\", \"type\": \"dropout\", \"rate\": 0.25},\n"
    "  {\"type\": \"dense\", \"units\": 10, \"kernel_initializer\": \"glorot_uniform\"}\n"
    " ],\n"
    " \"loss\": \"softmax_cross_entropy\", \"classes\": 10,\n"
    " \"optimizer\": {\"type\": \"adam\", \"lr\": 3e-4, \"beta_1\": 0.8, \"beta_2\": 0.99,\n"
    "   \"epsilon\": 1e-8, \"weight_decay\": 1e-4,\n"
    "   \"schedule\": {\"type\": \"warmup_step\", \"warmup_epochs\": 5, \"warmup_from\": 0.1,\n"
    "     \"boundaries\": [30, 60.5, 80], \"factors\": [0.1, 0.01, 0.001]}},\n"
    " \"data\": \"images\", \"batch\": 16, \"epochs\": 90, \"train_samples\": 1281167}\n";

static const char *nesterov_text =
    "{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"ae\",\n"
    " \"input\": {\"shape\": [784]},\n"
    " \"layers\": [{\"type\": \"dense\", \"units\": 196, \"activation\": \"sigmoid\"},\n"
    "  {\"type\": \"sparsity\"}, {\"type\": \"dense\", \"units\": 784, \"activation\": \"sigmoid\"}],\n"
    " \"loss\": \"half_sse_mean\", \"autoencoder\": true,\n"
    " \"optimizer\": {\"type\": \"sgd\", \"momentum\": 0, \"nesterov\": true, \"lr\": 0.1},\n"
    " \"data\": \"fashion_mnist\"}\n";

/* P3B1-like multi-task model: three heads on a shared trunk; autoencoder-free. */
static const char *heads_text =
    "{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"mt\", \"origin\": \"user\",\n"
    " \"demo\": true, \"input\": {\"shape\": [400]},\n"
    " \"layers\": [\n"
    "  {\"name\": \"shared\", \"type\": \"dense\", \"units\": 64, \"activation\": \"relu\"},\n"
    "  {\"name\": \"site_out\", \"type\": \"dense\", \"units\": 13},\n"
    "  {\"name\": \"side_out\", \"type\": \"dense\", \"units\": 2, \"inputs\": [\"shared\"]},\n"
    "  {\"name\": \"grade_out\", \"type\": \"dense\", \"units\": 4, \"inputs\": [\"shared\"]}\n"
    " ],\n"
    " \"loss\": \"softmax_cross_entropy\",\n"
    " \"heads\": [{\"layer\": \"site_out\", \"classes\": 13, \"name\": \"primary_site\"},\n"
    "           {\"layer\": \"side_out\", \"classes\": 2, \"name\": \"laterality\"},\n"
    "           {\"layer\": \"grade_out\", \"classes\": 4}],\n"
    " \"optimizer\": \"sgd\", \"data\": \"classes\", \"batch\": 10}\n";

static ModelSpec *parse_ok(const char *text)
{
    char err[512] = "";
    ModelSpec *m = model_json_parse(text, "t.json", err, sizeof err);
    if (!m)
        fail_msg("parse failed: %s", err);
    return m;
}

static int kind_has_act(LayerKind k)
{
    return k == LAYER_DENSE || k == LAYER_CONV2D || k == LAYER_BATCHNORM || k == LAYER_ADD ||
           k == LAYER_ACTIVATION;
}

static int kind_has_kernel(LayerKind k)
{
    return k == LAYER_DENSE || k == LAYER_CONV2D || k == LAYER_LSTM || k == LAYER_RNN ||
           k == LAYER_EMBEDDING;
}

static int str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

#define DIFF(cond, ...)                                 \
    do {                                                \
        if (cond) {                                     \
            snprintf(why, n, __VA_ARGS__);              \
            return false;                               \
        }                                               \
    } while (0)
#define SAME(field) DIFF(a->field != b->field, "%s differs", #field)
#define LSAME(field) \
    DIFF(x->field != y->field, "layer %d '%s': %s differs", i + 1, x->name, #field)

/* Two layers equal in every field their kind uses (the union member, act where the kind
 * has one, init/no_decay where it has a kernel, init_scale for uniform/normal). */
static bool layer_equal(const LayerSpec *x, const LayerSpec *y, int i, char *why, size_t n)
{
    LSAME(kind);
    DIFF(strcmp(x->name, y->name) != 0, "layer %d: name '%s' vs '%s'", i + 1, x->name, y->name);
    int nx = x->ninputs ? x->ninputs : 1, ny = y->ninputs ? y->ninputs : 1;
    DIFF(nx != ny, "layer %d: %d vs %d inputs", i + 1, nx, ny);
    for (int k = 0; k < nx; k++)
        LSAME(inputs[k]);
    if (kind_has_act(x->kind))
        LSAME(act);
    if (kind_has_kernel(x->kind)) {
        LSAME(init);
        LSAME(no_decay);
        if (x->init == INIT_UNIFORM || x->init == INIT_NORMAL)
            LSAME(init_scale);
    }
    switch (x->kind) {
    case LAYER_DENSE: LSAME(u.dense.units); LSAME(u.dense.no_bias); break;
    case LAYER_CONV2D:
        LSAME(u.conv.filters); LSAME(u.conv.kh); LSAME(u.conv.kw); LSAME(u.conv.stride);
        LSAME(u.conv.explicit_pad); LSAME(u.conv.groups); LSAME(u.conv.no_bias);
        if (x->u.conv.explicit_pad) {
            LSAME(u.conv.pad_h); LSAME(u.conv.pad_w);
        } else {
            LSAME(u.conv.pad);
        }
        break;
    case LAYER_POOL2D:
        LSAME(u.pool.kind); LSAME(u.pool.global);
        if (!x->u.pool.global) {
            LSAME(u.pool.win); LSAME(u.pool.stride); LSAME(u.pool.explicit_pad);
            LSAME(u.pool.ceil_mode);
            if (x->u.pool.explicit_pad) {
                LSAME(u.pool.pad_h); LSAME(u.pool.pad_w);
            } else {
                LSAME(u.pool.pad);
            }
        }
        break;
    case LAYER_LSTM: LSAME(u.rnn.forget_bias); /* fall through */
    case LAYER_RNN: LSAME(u.rnn.hidden); LSAME(u.rnn.last_only); break;
    case LAYER_BATCHNORM: LSAME(u.bn.eps); LSAME(u.bn.momentum); break;
    case LAYER_LRN:
        LSAME(u.lrn.size); LSAME(u.lrn.alpha); LSAME(u.lrn.beta); LSAME(u.lrn.k);
        break;
    case LAYER_DROPOUT: LSAME(u.dropout.rate); break;
    case LAYER_EMBEDDING: LSAME(u.embed.vocab); LSAME(u.embed.dim); break;
    case LAYER_SPARSITY: LSAME(u.sparsity.rho); LSAME(u.sparsity.beta); break;
    default: break;
    }
    return true;
}

/* a and b describe the same model: every field the format carries. why: the first
 * difference. */
static bool spec_equal(const ModelSpec *a, const ModelSpec *b, char *why, size_t n)
{
    DIFF(strcmp(a->name, b->name) != 0, "name '%s' vs '%s'", a->name, b->name);
    DIFF(!str_eq(a->title, b->title), "title differs");
    DIFF(!str_eq(a->source, b->source), "source differs");
    DIFF(!str_eq(a->family, b->family), "family differs");
    DIFF(!str_eq(a->origin, b->origin), "origin differs");
    SAME(demo);
    SAME(autoencoder);
    SAME(nheads);
    for (int i = 0; i < a->nheads; i++) {
        SAME(heads[i].layer);
        SAME(heads[i].classes);
        DIFF(!str_eq(a->heads[i].name, b->heads[i].name), "heads[%d].name differs", i);
    }
    SAME(input.rank);
    for (int i = 0; i < a->input.rank; i++)
        SAME(input.d[i]);
    SAME(input_ids);
    SAME(nlayers);
    SAME(loss);
    if (a->loss == LOSS_SOFTMAX_XENT)
        SAME(classes);
    SAME(data);
    SAME(default_batch);
    SAME(epochs);
    SAME(train_samples);
    SAME(opt.kind);
    SAME(opt.lr);
    SAME(opt.weight_decay);
    if (a->opt.kind == OPT_MOMENTUM) {
        SAME(opt.momentum);
        SAME(opt.nesterov);
    }
    if (a->opt.kind == OPT_RMSPROP) {
        SAME(opt.rho);
        SAME(opt.eps);
    }
    if (a->opt.kind == OPT_ADAM) {
        SAME(opt.beta1);
        SAME(opt.beta2);
        SAME(opt.eps);
    }
    SAME(opt.schedule.kind);
    if (a->opt.schedule.kind == SCHED_WARMUP_STEP) {
        SAME(opt.schedule.warmup_epochs);
        SAME(opt.schedule.warmup_from);
    }
    if (a->opt.schedule.kind != SCHED_CONSTANT) {
        SAME(opt.schedule.nboundaries);
        for (int i = 0; i < a->opt.schedule.nboundaries; i++) {
            SAME(opt.schedule.boundaries[i]);
            SAME(opt.schedule.factors[i]);
        }
    }
    for (int i = 0; i < a->nlayers; i++)
        if (!layer_equal(&a->layers[i], &b->layers[i], i, why, n))
            return false;
    return true;
}

/* export -> parse -> export: the texts are identical and the specs equal field by field
 * (and byte for byte when both came from the parser: nothing the format drops). */
static void check_round_trip(const ModelSpec *m0, bool from_parser)
{
    char why[256] = "", err[512] = "";
    char *t1 = model_json_export(m0);
    assert_non_null(t1);
    ModelSpec *m1 = model_json_parse(t1, "export-1", err, sizeof err);
    if (!m1)
        fail_msg("%s: exported text does not parse: %s\n%s", m0->name, err, t1);
    if (!spec_equal(m0, m1, why, sizeof why))
        fail_msg("%s: export -> parse changed the model: %s\n%s", m0->name, why, t1);
    char *t2 = model_json_export(m1);
    assert_non_null(t2);
    if (strcmp(t1, t2) != 0)
        fail_msg("%s: second export differs:\n%s\n---\n%s", m0->name, t1, t2);
    if (from_parser) {
        assert_memory_equal(m0->layers, m1->layers, (size_t)m0->nlayers * sizeof *m0->layers);
        assert_memory_equal(&m0->opt, &m1->opt, sizeof m0->opt);
    }
    free(t1);
    free(t2);
    model_free(m1);
}

/* Parses text (source "my.json"), which must fail with one line containing every needle. */
static void expect_error_at(const char *text, const char *const *needles, int line)
{
    char err[1024] = "";
    ModelSpec *m = model_json_parse(text, "my.json", err, sizeof err);
    if (m) {
        model_free(m);
        fail_msg("line %d: parsed, expected an error", line);
    }
    if (strncmp(err, "my.json", 7) != 0)
        fail_msg("line %d: error does not start with the file name: %s", line, err);
    if (strchr(err, '\n'))
        fail_msg("line %d: error is more than one line: %s", line, err);
    for (int i = 0; needles[i]; i++)
        if (!strstr(err, needles[i]))
            fail_msg("line %d: error lacks [%s]: %s", line, needles[i], err);
}
#define EXPECT_ERR(text, ...) expect_error_at((text), (const char *const[]){__VA_ARGS__, NULL}, __LINE__)

/* A model whose layers (JSON list body) and extra top-level fields are given. */
static char *model_with(const char *layers, const char *top)
{
    static char buf[8192];
    snprintf(buf, sizeof buf,
             "{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"t\",\n"
             " \"input\": {\"shape\": [3, 8, 8]},\n \"layers\": [%s]%s%s}",
             layers, *top == '\0' || *top == ',' ? "" : ", ", top);
    return buf;
}
#define TAIL "\"loss\": \"mse\", \"optimizer\": \"sgd\", \"data\": \"images\""
#define LAYERS(l) model_with((l), TAIL)

/* ---- valid models: every field in its place -------------------------------------------- */

static void test_parse_cnn(void **state)
{
    ModelSpec *m = parse_ok(cnn_text);
    assert_string_equal(m->name, "my-cnn");
    assert_string_equal(m->title, "A small CNN");
    assert_string_equal(m->family, "CNN");
    assert_string_equal(m->source, "tests/test_model_json.c");
    assert_int_equal(m->input.rank, 3);
    assert_int_equal(m->input.d[0], 3);
    assert_int_equal(m->input.d[1], 32);
    assert_int_equal(m->input.d[2], 32);
    assert_false(m->input_ids);
    assert_int_equal(m->nlayers, 8);

    const LayerSpec *L = m->layers;
    assert_int_equal(L[0].kind, LAYER_CONV2D);
    assert_string_equal(L[0].name, "conv1");
    assert_int_equal(L[0].ninputs, 1);
    assert_int_equal(L[0].inputs[0], -1);
    assert_int_equal(L[0].u.conv.filters, 32);
    assert_int_equal(L[0].u.conv.kh, 3);
    assert_int_equal(L[0].u.conv.kw, 3);
    assert_int_equal(L[0].u.conv.stride, 1);
    assert_int_equal(L[0].u.conv.pad, PAD_SAME);
    assert_false(L[0].u.conv.explicit_pad);
    assert_int_equal(L[0].u.conv.groups, 1);
    assert_false(L[0].u.conv.no_bias);
    assert_int_equal(L[0].act, ACT_RELU);
    assert_int_equal(L[0].init, INIT_GLOROT_UNIFORM);
    assert_false(L[0].no_decay);

    assert_int_equal(L[1].kind, LAYER_POOL2D);
    assert_int_equal(L[1].inputs[0], 0);
    assert_int_equal(L[1].u.pool.kind, POOL_MAX);
    assert_int_equal(L[1].u.pool.win, 2);
    assert_int_equal(L[1].u.pool.stride, 2);
    assert_int_equal(L[1].u.pool.pad, PAD_VALID);
    assert_false(L[1].u.pool.ceil_mode);
    assert_false(L[1].u.pool.global);
    assert_int_equal(L[1].act, ACTIVATION_NONE);

    assert_int_equal(L[2].u.conv.filters, 64);
    assert_int_equal(L[2].u.conv.kh, 5);
    assert_int_equal(L[2].u.conv.kw, 3);
    assert_int_equal(L[2].u.conv.stride, 2);
    assert_true(L[2].u.conv.explicit_pad);
    assert_int_equal(L[2].u.conv.pad_h, 2);
    assert_int_equal(L[2].u.conv.pad_w, 1);
    assert_true(L[2].u.conv.no_bias);
    assert_int_equal(L[2].act, ACTIVATION_NONE);
    assert_int_equal(L[2].init, INIT_HE_NORMAL);

    assert_int_equal(L[3].kind, LAYER_BATCHNORM);
    assert_string_equal(L[3].name, "batchnorm_4"); /* Keras-style default name */
    assert_int_equal(L[3].act, ACT_RELU);
    assert_true(L[3].u.bn.eps == 1e-3f);
    assert_true(L[3].u.bn.momentum == 0.99f);

    assert_int_equal(L[4].u.pool.kind, POOL_AVG);
    assert_int_equal(L[4].u.pool.win, 3);
    assert_true(L[4].u.pool.explicit_pad);
    assert_int_equal(L[4].u.pool.pad_h, 1);
    assert_int_equal(L[4].u.pool.pad_w, 1);
    assert_true(L[4].u.pool.ceil_mode);

    assert_int_equal(L[5].kind, LAYER_FLATTEN);
    assert_int_equal(L[6].kind, LAYER_DROPOUT);
    assert_true(L[6].u.dropout.rate == 0.5f);
    assert_int_equal(L[7].kind, LAYER_DENSE);
    assert_int_equal(L[7].inputs[0], 6);
    assert_int_equal(L[7].u.dense.units, 10);
    assert_false(L[7].u.dense.no_bias);

    assert_int_equal(m->loss, LOSS_SOFTMAX_XENT);
    assert_int_equal(m->classes, 10);
    assert_int_equal(m->opt.kind, OPT_MOMENTUM);
    assert_true(m->opt.lr == 0.01f);
    assert_true(m->opt.momentum == 0.9f);
    assert_false(m->opt.nesterov);
    assert_true(m->opt.weight_decay == 5e-5f);
    assert_int_equal(m->opt.schedule.kind, SCHED_STEP);
    assert_int_equal(m->opt.schedule.nboundaries, 2);
    assert_true(m->opt.schedule.boundaries[0] == 30.0f);
    assert_true(m->opt.schedule.boundaries[1] == 60.0f);
    assert_true(m->opt.schedule.factors[0] == 0.1f);
    assert_true(m->opt.schedule.factors[1] == 0.01f);
    assert_int_equal(m->data, DATA_IMAGES);
    assert_int_equal(m->default_batch, 64);
    assert_int_equal(m->epochs, 90);
    assert_int_equal(m->train_samples, 50000);
    model_free(m);
}

static void test_parse_dag(void **state)
{
    ModelSpec *m = parse_ok(dag_text);
    const LayerSpec *L = m->layers;
    assert_int_equal(m->nlayers, 8);
    assert_int_equal(L[0].inputs[0], -1);
    assert_int_equal(L[1].ninputs, 1);
    assert_int_equal(L[1].inputs[0], -1); /* "inputs": "input" (a single name) */
    assert_int_equal(L[2].inputs[0], -1);
    assert_int_equal(L[2].u.pool.pad, PAD_SAME);
    assert_int_equal(L[3].kind, LAYER_CONCAT);
    assert_int_equal(L[3].ninputs, 3);
    assert_int_equal(L[3].inputs[0], 0);
    assert_int_equal(L[3].inputs[1], 1);
    assert_int_equal(L[3].inputs[2], 2);
    assert_int_equal(L[3].act, ACTIVATION_NONE);
    assert_int_equal(L[4].inputs[0], 3);
    assert_int_equal(L[5].kind, LAYER_ADD);
    assert_int_equal(L[5].ninputs, 2);
    assert_int_equal(L[5].inputs[0], 4);
    assert_int_equal(L[5].inputs[1], 3);
    assert_int_equal(L[5].act, ACT_RELU);
    assert_int_equal(L[6].kind, LAYER_POOL2D);
    assert_true(L[6].u.pool.global);
    assert_int_equal(L[6].u.pool.kind, POOL_AVG);
    assert_int_equal(L[6].u.pool.win, 0);
    assert_int_equal(L[7].inputs[0], 6);
    /* "optimizer": "sgd" and the defaults */
    assert_int_equal(m->opt.kind, OPT_SGD);
    assert_true(m->opt.lr == 0.01f);
    assert_true(m->opt.weight_decay == 0.0f);
    assert_int_equal(m->opt.schedule.kind, SCHED_CONSTANT);
    assert_int_equal(m->default_batch, 32);
    assert_int_equal(m->epochs, 0);
    assert_int_equal(m->train_samples, 0);
    assert_null(m->title);
    assert_null(m->source);
    assert_null(m->family);
    model_free(m);
}

static void test_parse_lstm(void **state)
{
    ModelSpec *m = parse_ok(lstm_text);
    const LayerSpec *L = m->layers;
    assert_int_equal(m->input.rank, 2);
    assert_int_equal(m->input.d[0], 30);
    assert_int_equal(m->input.d[1], 64);
    assert_int_equal(L[0].kind, LAYER_LSTM);
    assert_int_equal(L[0].u.rnn.hidden, 128);
    assert_false(L[0].u.rnn.last_only);
    assert_true(L[0].u.rnn.forget_bias == 0.0f);
    assert_int_equal(L[0].init, INIT_GLOROT_UNIFORM);
    assert_int_equal(L[0].act, ACTIVATION_NONE);
    assert_int_equal(L[1].kind, LAYER_RNN);
    assert_int_equal(L[1].u.rnn.hidden, 32);
    assert_true(L[1].u.rnn.last_only); /* Keras: return_sequences defaults to false */
    assert_int_equal(L[1].init, INIT_UNIFORM);
    assert_true(L[1].init_scale == 0.08f);
    assert_true(L[1].no_decay);
    assert_int_equal(L[2].act, ACT_SIGMOID);
    assert_int_equal(m->loss, LOSS_SSE);
    assert_int_equal(m->classes, 0);
    assert_int_equal(m->opt.kind, OPT_RMSPROP);
    assert_true(m->opt.lr == 0.002f);
    assert_true(m->opt.rho == 0.95f);
    assert_true(m->opt.eps == 1e-6f);
    assert_int_equal(m->data, DATA_SEQUENCE);
    assert_string_equal(m->family, "RNN");
    model_free(m);

    /* defaults: forget bias 1 (TF BasicLSTMCell), last step only, RMSprop Keras values */
    m = parse_ok(model_with("{\"type\": \"lstm\", \"units\": 8}",
                            "\"loss\": \"sse\", \"optimizer\": \"rmsprop\", \"data\": \"sequence\""));
    assert_true(m->layers[0].u.rnn.forget_bias == 1.0f);
    assert_true(m->layers[0].u.rnn.last_only);
    assert_string_equal(m->layers[0].name, "lstm_1");
    assert_true(m->opt.lr == 0.001f);
    assert_true(m->opt.rho == 0.9f);
    assert_true(m->opt.eps == 1e-7f);
    model_free(m);
}

static void test_parse_embedding(void **state)
{
    ModelSpec *m = parse_ok(embed_text);
    const LayerSpec *L = m->layers;
    assert_true(m->input_ids);
    assert_int_equal(m->input.rank, 1);
    assert_int_equal(m->input.d[0], 50);
    assert_int_equal(L[0].kind, LAYER_EMBEDDING);
    assert_int_equal(L[0].inputs[0], -1);
    assert_int_equal(L[0].u.embed.vocab, 5000);
    assert_int_equal(L[0].u.embed.dim, 64);
    assert_int_equal(L[0].init, INIT_UNIFORM); /* Keras' embeddings_initializer */
    assert_true(L[0].init_scale == 0.05f);
    assert_int_equal(L[1].u.conv.kh, 3);
    assert_int_equal(L[1].u.conv.kw, 64);
    assert_true(L[2].u.pool.global);
    assert_int_equal(L[2].u.pool.kind, POOL_MAX);
    assert_int_equal(m->data, DATA_TOKENS);
    assert_int_equal(m->opt.kind, OPT_ADAM);
    assert_true(m->opt.lr == 0.001f);
    assert_true(m->opt.beta1 == 0.9f);
    assert_true(m->opt.beta2 == 0.999f);
    assert_true(m->opt.eps == 1e-7f);
    assert_int_equal(m->opt.schedule.kind, SCHED_WARMUP_STEP);
    assert_true(m->opt.schedule.warmup_epochs == 2.0f);
    assert_true(m->opt.schedule.warmup_from == 0.125f);
    assert_int_equal(m->opt.schedule.nboundaries, 0);
    model_free(m);
}

static void test_parse_heads(void **state)
{
    ModelSpec *m = parse_ok(heads_text);
    assert_string_equal(m->origin, "user");
    assert_true(m->demo);
    assert_false(m->autoencoder);
    assert_int_equal(m->nheads, 3);
    assert_int_equal(m->heads[0].layer, 1);
    assert_int_equal(m->heads[0].classes, 13);
    assert_string_equal(m->heads[0].name, "primary_site");
    assert_int_equal(m->heads[1].layer, 2);
    assert_int_equal(m->heads[1].classes, 2);
    assert_string_equal(m->heads[1].name, "laterality");
    assert_int_equal(m->heads[2].layer, 3);
    assert_int_equal(m->heads[2].classes, 4);
    assert_null(m->heads[2].name);
    assert_int_equal(m->classes, 13); /* the first head's, when "classes" is left out */
    assert_int_equal(m->layers[2].inputs[0], 0);
    assert_int_equal(m->data, DATA_CLASSES);
    model_free(m);
}

static void test_parse_misc(void **state)
{
    /* sgd with a "momentum" key (even 0) is momentum SGD; Nesterov; BOM; the AE losses */
    char buf[4096];
    snprintf(buf, sizeof buf, "\xEF\xBB\xBF%s", nesterov_text);
    ModelSpec *m = parse_ok(buf);
    assert_int_equal(m->opt.kind, OPT_MOMENTUM);
    assert_true(m->opt.momentum == 0.0f);
    assert_true(m->opt.nesterov);
    assert_int_equal(m->loss, LOSS_HALF_SSE_MEAN);
    assert_true(m->autoencoder);
    assert_int_equal(m->data, DATA_FASHION_MNIST);
    assert_int_equal(m->layers[1].kind, LAYER_SPARSITY);
    assert_true(m->layers[1].u.sparsity.rho == 0.01f);
    assert_true(m->layers[1].u.sparsity.beta == 3.0f);
    model_free(m);

    /* LRN defaults are Caffe AlexNet's; conv stride as [s, s]; padding 0 stays explicit */
    m = parse_ok(LAYERS("{\"type\": \"lrn\"}, {\"type\": \"conv2d\", \"filters\": 4, "
                        "\"kernel\": 3, \"stride\": [2, 2], \"padding\": 0}"));
    assert_int_equal(m->layers[0].u.lrn.size, 5);
    assert_true(m->layers[0].u.lrn.alpha == 1e-4f);
    assert_true(m->layers[0].u.lrn.beta == 0.75f);
    assert_true(m->layers[0].u.lrn.k == 1.0f);
    assert_int_equal(m->layers[1].u.conv.stride, 2);
    assert_true(m->layers[1].u.conv.explicit_pad);
    assert_int_equal(m->layers[1].u.conv.pad_h, 0);
    model_free(m);

    /* err may be NULL or tiny */
    assert_null(model_json_parse("{", "x", NULL, 0));
    char tiny[8];
    assert_null(model_json_parse("{", "a-long-file-name.json", tiny, sizeof tiny));
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
    model_free(NULL);
}

/* ---- round trip ---------------------------------------------------------------------- */

static void test_round_trip(void **state)
{
    const char *texts[] = {cnn_text,  dag_text,      lstm_text, embed_text,
                           sink_text, nesterov_text, heads_text};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        ModelSpec *m = parse_ok(texts[i]);
        check_round_trip(m, true);
        model_free(m);
    }
}

static void test_export_format(void **state)
{
    ModelSpec *m = parse_ok(cnn_text);
    char *t = model_json_export(m);
    assert_non_null(t);
    /* one layer per line, defaults left out, floats in their short form */
    assert_non_null(strstr(t, "\n    {\"name\": \"conv1\", \"type\": \"conv2d\", \"filters\": 32, "
                              "\"kernel\": 3, \"padding\": \"same\", \"activation\": \"relu\"},\n"));
    assert_non_null(strstr(t, "{\"name\": \"pool1\", \"type\": \"pool2d\", \"size\": 2},"));
    assert_non_null(strstr(t, "\"lr\": 0.01,"));
    assert_non_null(strstr(t, "\"factors\": [0.1, 0.01]"));
    assert_null(strstr(t, "\"inputs\"")); /* every layer reads the previous one */
    free(t);
    model_free(m);

    /* a spec the format cannot say: NULL, not a wrong file */
    m = parse_ok(dag_text);
    ((LayerSpec *)m->layers)[3].inputs[1] = 5; /* a later layer */
    assert_null(model_json_export(m));
    model_free(m);
}

/* A spec written the way models/zoo.c writes them: ninputs 0 (one input), no act on layers
 * without one (0 = relu there, unused), init unset on layers without weights. */
static const LayerSpec handwritten_layers[] = {
    {.kind = LAYER_CONV2D, .name = "conv1", .inputs = {-1}, .act = ACT_RELU, .init = INIT_HE_NORMAL,
     .u.conv = {.filters = 64, .kh = 7, .kw = 7, .stride = 2, .explicit_pad = true, .pad_h = 3,
                .pad_w = 3, .groups = 1, .no_bias = true}},
    {.kind = LAYER_BATCHNORM, .name = "bn1", .inputs = {0}, .act = ACT_RELU,
     .u.bn = {.eps = 1e-5f, .momentum = 0.9f}},
    {.kind = LAYER_POOL2D, .name = "pool1", .inputs = {1},
     .u.pool = {.kind = POOL_MAX, .win = 3, .stride = 2, .explicit_pad = true, .pad_h = 1,
                .pad_w = 1, .ceil_mode = true}},
    {.kind = LAYER_CONV2D, .name = "branch2a", .inputs = {2}, .act = ACTIVATION_NONE,
     .u.conv = {.filters = 64, .kh = 1, .kw = 1, .stride = 1, .pad = PAD_VALID, .groups = 1}},
    {.kind = LAYER_ADD, .name = "res2a", .inputs = {3, 2}, .ninputs = 2, .act = ACT_RELU},
    {.kind = LAYER_POOL2D, .name = "pool5", .inputs = {4}, .u.pool = {.kind = POOL_AVG, .global = true}},
    {.kind = LAYER_DENSE, .name = "fc1000", .inputs = {5}, .act = ACTIVATION_NONE,
     .init = INIT_NORMAL, .init_scale = 0.01f, .no_decay = true, .u.dense = {.units = 1000}},
};
static const ModelSpec handwritten = {
    .name = "resnet-ish",
    .title = "hand-written like the zoo",
    .origin = "cookbook",
    .demo = true,
    .input = {.rank = 3, .d = {3, 224, 224}},
    .layers = handwritten_layers,
    .nlayers = (int)(sizeof handwritten_layers / sizeof handwritten_layers[0]),
    .loss = LOSS_SOFTMAX_XENT,
    .classes = 1000,
    .opt = {.kind = OPT_MOMENTUM, .lr = 0.1f, .momentum = 0.9f, .weight_decay = 5e-5f,
            .schedule = {.kind = SCHED_WARMUP_STEP, .warmup_epochs = 5, .warmup_from = 0.125f,
                         .nboundaries = 3, .boundaries = {30, 60, 80},
                         .factors = {0.1f, 0.01f, 0.001f}}},
    .data = DATA_IMAGES,
    .default_batch = 32,
    .epochs = 90,
};

static const LayerSpec handwritten_mt_layers[] = {
    {.kind = LAYER_DENSE, .name = "shared", .inputs = {-1}, .act = ACT_RELU, .u.dense = {.units = 8}},
    {.kind = LAYER_DENSE, .name = "a_out", .inputs = {0}, .act = ACTIVATION_NONE, .u.dense = {.units = 3}},
    {.kind = LAYER_DENSE, .name = "b_out", .inputs = {0}, .act = ACTIVATION_NONE, .u.dense = {.units = 5}},
};
static const ModelSpec handwritten_mt = {
    .name = "mt",
    .input = {.rank = 1, .d = {16}},
    .layers = handwritten_mt_layers,
    .nlayers = 3,
    .loss = LOSS_SOFTMAX_XENT,
    .classes = 7, /* differs from the first head's: written out */
    .heads = {{.layer = 2, .classes = 5, .name = "b"}, {.layer = 1, .classes = 3}},
    .nheads = 2,
    .opt = {.kind = OPT_SGD, .lr = 0.01f},
    .data = DATA_CLASSES,
    .default_batch = 10,
};
static const ModelSpec handwritten_ae = {
    .name = "ae",
    .input = {.rank = 1, .d = {16}},
    .layers = handwritten_mt_layers,
    .nlayers = 1,
    .loss = LOSS_MSE,
    .autoencoder = true,
    .opt = {.kind = OPT_RMSPROP, .lr = 0.001f, .rho = 0.9f, .eps = 1e-8f},
    .data = DATA_EXPRESSION,
    .default_batch = 60,
};

static void test_round_trip_handwritten(void **state)
{
    check_round_trip(&handwritten, false);
    check_round_trip(&handwritten_mt, false);
    check_round_trip(&handwritten_ae, false);
}

/* Every zoo model exports to a file that reads back as the same model. Without a
 * compiled zoo (tests built against a stub) there are none. */
static void test_round_trip_zoo(void **state)
{
    for (int i = 0; i < zoo_count(); i++) {
        const ModelSpec *z = zoo_get(i);
        assert_non_null(z);
        if (z->algorithm == ALGO_FISTA) { /* an algorithm, not a layer network: no model file */
            assert_null(model_json_export(z));
            continue;
        }
        check_round_trip(z, false);
    }
}

/* ---- errors: one line naming the layer, the field, the value, what is valid ------------ */

static void test_error_example_message(void **state)
{
    char err[512];
    const char *text = model_with(
        "{\"type\": \"dense\", \"units\": 4}, {\"type\": \"dense\", \"units\": 4}, "
        "{\"type\": \"dense\", \"units\": 4}, {\"type\": \"dense\", \"units\": 4}, "
        "{\"type\": \"dense\", \"units\": 4}, {\"type\": \"dense\", \"units\": 4}, "
        "{\"name\": \"conv3\", \"type\": \"conv2d\", \"filters\": -3, \"kernel\": 3}",
        TAIL);
    assert_null(model_json_parse(text, "my.json", err, sizeof err));
    assert_string_equal(err,
                        "my.json: layer 7 'conv3': field \"filters\": expected a positive "
                        "integer, got -3");
}

static void test_error_unknown_type(void **state)
{
    EXPECT_ERR(LAYERS("{\"type\": \"dense\", \"units\": 3}, {\"name\": \"x\", \"type\": \"conv3d\"}"),
               "layer 2 'x'", "field \"type\"", "unknown type \"conv3d\"",
               "types: dense, conv2d, pool2d, lstm, rnn, batchnorm, lrn, dropout, concat, add, "
               "activation, flatten, embedding, sparsity");
    EXPECT_ERR(LAYERS("{\"name\": \"x\"}"), "layer 1 'x'", "missing field \"type\"", "types: dense");
    EXPECT_ERR(LAYERS("{\"type\": 3}"), "layer 1:", "field \"type\"", "expected a string", "got 3");
}

static void test_error_unknown_field(void **state)
{
    EXPECT_ERR(LAYERS("{\"name\": \"c\", \"type\": \"conv2d\", \"filters\": 3, \"kernel\": 3, "
                      "\"filter\": 4}"),
               "layer 1 'c'", "unknown field \"filter\"",
               "conv2d fields: name, type, inputs, comment, filters, kernel, stride, padding, "
               "groups, use_bias, activation, kernel_initializer, init_scale, weight_decay");
    EXPECT_ERR(LAYERS("{\"name\": \"c\", \"type\": \"conv2d\", \"filters\": 3, \"kernel_size\": 3}"),
               "unknown field \"kernel_size\" (did you mean \"kernel\"?)");
    EXPECT_ERR(LAYERS("{\"name\": \"p\", \"type\": \"pool2d\", \"units\": 3}"),
               "layer 1 'p'", "unknown field \"units\"", "pool2d fields:", "ceil_mode, global");
    EXPECT_ERR(LAYERS("{\"type\": \"dense\", \"units\": 3, \"units\": 4}"), "field \"units\"",
               "appears twice");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}", TAIL ", \"lossfn\": 1"),
               "unknown field \"lossfn\"", "model fields: format, version, name");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"mse\", \"optimizer\": {\"type\": \"adam\", "
                          "\"learning_rate\": 0.1}, \"data\": \"images\""),
               "unknown field \"optimizer.learning_rate\" (did you mean \"lr\"?)",
               "adam fields: type, lr, beta_1, beta_2, epsilon, weight_decay, schedule");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"mse\", \"optimizer\": {\"type\": \"sgd\", \"rho\": 0.9}, "
                          "\"data\": \"images\""),
               "unknown field \"optimizer.rho\"", "sgd fields: type, lr, momentum, nesterov");
}

static void test_error_json_types(void **state)
{
    EXPECT_ERR(LAYERS("{\"name\": \"d\", \"type\": \"dense\", \"units\": \"32\"}"), "layer 1 'd'",
               "field \"units\"", "expected a positive integer, got \"32\"");
    EXPECT_ERR(LAYERS("{\"name\": \"d\", \"type\": \"dense\", \"units\": 2.5}"),
               "expected a positive integer, got 2.5");
    EXPECT_ERR(LAYERS("{\"name\": \"d\", \"type\": \"dense\", \"units\": 3, \"use_bias\": 0}"),
               "field \"use_bias\"", "expected true or false, got 0");
    EXPECT_ERR(LAYERS("{\"name\": \"c\", \"type\": \"conv2d\", \"filters\": 3, \"kernel\": [3]}"),
               "field \"kernel\"", "[height, width]", "got [3]");
    EXPECT_ERR(LAYERS("[1]"), "layer 1:", "expected an object", "got [1]");
    EXPECT_ERR("{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"n\", "
               "\"input\": {\"shape\": [4]}, \"layers\": 3}",
               "field \"layers\"", "expected a list of layer objects, got 3");
    EXPECT_ERR("[1, 2]", "expected an object", "got [1,2]");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"mse\", \"optimizer\": 0.1, \"data\": \"images\""),
               "field \"optimizer\"", "expected an object", "got 0.1");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}", TAIL ", \"title\": [\"x\"]"),
               "field \"title\"", "expected a string");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}", TAIL ", \"title\": \"two\\nlines\""),
               "field \"title\"", "one line");
}

static void test_error_missing_fields(void **state)
{
    EXPECT_ERR(LAYERS("{\"name\": \"d\", \"type\": \"dense\"}"), "layer 1 'd'",
               "missing field \"units\" (a positive integer)");
    EXPECT_ERR(LAYERS("{\"name\": \"c\", \"type\": \"conv2d\", \"kernel\": 3}"),
               "missing field \"filters\"");
    EXPECT_ERR(LAYERS("{\"name\": \"r\", \"type\": \"dropout\"}"), "layer 1 'r'",
               "missing field \"rate\"");
    EXPECT_ERR(LAYERS("{\"name\": \"e\", \"type\": \"activation\"}"),
               "missing field \"activation\" (relu, sigmoid or tanh)");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}", "\"optimizer\": \"sgd\", \"data\": \"images\""),
               "missing field \"loss\"", "losses: softmax_cross_entropy, mse, sse, half_sse_mean");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}", "\"loss\": \"mse\", \"data\": \"images\""),
               "missing field \"optimizer\"");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}", "\"loss\": \"mse\", \"optimizer\": \"sgd\""),
               "missing field \"data\"", "expression, images, sequence, classes, tokens, "
                                         "fashion_mnist");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"softmax_cross_entropy\", \"optimizer\": \"sgd\", "
                          "\"data\": \"images\""),
               "missing field \"classes\"");
    EXPECT_ERR("{\"version\": 1}", "missing field \"format\"", "\"dlperf-model\"");
    EXPECT_ERR("{\"format\": \"dlperf-model\", \"version\": 1}", "missing field \"name\"");
    EXPECT_ERR("{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"n\"}",
               "missing field \"input\"");
    EXPECT_ERR("{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"n\", \"input\": {}}",
               "missing field \"input.shape\"");
    EXPECT_ERR("{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"n\", "
               "\"input\": {\"shape\": [4]}}",
               "missing field \"layers\"");
}

static void test_error_ranges(void **state)
{
    EXPECT_ERR(LAYERS("{\"name\": \"r\", \"type\": \"dropout\", \"rate\": 1}"), "layer 1 'r'",
               "field \"rate\"", "expected a number in [0, 1), got 1");
    EXPECT_ERR(LAYERS("{\"name\": \"b\", \"type\": \"batchnorm\", \"momentum\": -0.1}"),
               "field \"momentum\"", "[0, 1)", "got -0.1");
    EXPECT_ERR(LAYERS("{\"name\": \"b\", \"type\": \"batchnorm\", \"epsilon\": 0}"),
               "field \"epsilon\"", "expected a positive number, got 0");
    EXPECT_ERR(LAYERS("{\"name\": \"s\", \"type\": \"sparsity\", \"rho\": 1}"),
               "field \"rho\"", "(0, 1)");
    EXPECT_ERR(LAYERS("{\"name\": \"n\", \"type\": \"lrn\", \"size\": 4}"), "layer 1 'n'",
               "field \"size\"", "odd", "got 4");
    EXPECT_ERR(LAYERS("{\"name\": \"c\", \"type\": \"conv2d\", \"filters\": 10, \"kernel\": 3, "
                      "\"groups\": 3}"),
               "field \"groups\"", "3 groups must divide the 10 filters");
    EXPECT_ERR(LAYERS("{\"name\": \"c\", \"type\": \"conv2d\", \"filters\": 10, \"kernel\": 3, "
                      "\"stride\": [1, 2]}"),
               "field \"stride\"", "[1, 2]", "only equal strides");
    EXPECT_ERR(LAYERS("{\"name\": \"c\", \"type\": \"conv2d\", \"filters\": 10, \"kernel\": 3, "
                      "\"padding\": -1}"),
               "field \"padding\"", "\"valid\", \"same\", a non-negative integer or [pad_h, pad_w]",
               "got -1");
    EXPECT_ERR(LAYERS("{\"name\": \"p\", \"type\": \"pool2d\", \"size\": 2, \"padding\": 2}"),
               "field \"padding\"", "smaller than the window 2");
    EXPECT_ERR(LAYERS("{\"name\": \"d\", \"type\": \"dense\", \"units\": 1e12}"),
               "expected a positive integer, got 1000000000000");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}", TAIL ", \"batch\": 0"), "field \"batch\"",
               "expected a positive integer, got 0");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"mse\", \"optimizer\": {\"type\": \"sgd\", \"lr\": 1e-50}, "
                          "\"data\": \"images\""),
               "field \"optimizer.lr\"", "expected a positive number, got 1e-50");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"softmax_cross_entropy\", \"classes\": 1, "
                          "\"optimizer\": \"sgd\", \"data\": \"images\""),
               "field \"classes\"", "expected an integer >= 2, got 1");
    EXPECT_ERR("{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"n\", "
               "\"input\": {\"shape\": [3, 0, 4]}}",
               "field \"input.shape\"", "positive integers", "got [3,0,4]");
    EXPECT_ERR("{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"n\", "
               "\"input\": {\"shape\": [1, 2, 3, 4]}}",
               "field \"input.shape\"");
}

static void test_error_enums(void **state)
{
    EXPECT_ERR(LAYERS("{\"name\": \"d\", \"type\": \"dense\", \"units\": 3, \"activation\": \"swish\"}"),
               "layer 1 'd'", "field \"activation\"", "unknown activation \"swish\"",
               "relu, sigmoid, tanh, gelu, linear");
    EXPECT_ERR(LAYERS("{\"name\": \"d\", \"type\": \"dense\", \"units\": 3, \"activation\": \"softmax\"}"),
               "softmax_cross_entropy");
    EXPECT_ERR(LAYERS("{\"name\": \"a\", \"type\": \"activation\", \"activation\": \"linear\"}"),
               "layer 1 'a'", "needs relu, sigmoid, tanh or gelu");
    EXPECT_ERR(LAYERS("{\"name\": \"p\", \"type\": \"pool2d\", \"pool\": \"min\"}"),
               "field \"pool\"", "unknown pool kind \"min\"", "pool kinds: max, avg");
    EXPECT_ERR(LAYERS("{\"name\": \"c\", \"type\": \"conv2d\", \"filters\": 1, \"kernel\": 1, "
                      "\"padding\": \"full\"}"),
               "field \"padding\"", "got \"full\"");
    EXPECT_ERR(LAYERS("{\"name\": \"d\", \"type\": \"dense\", \"units\": 3, "
                      "\"kernel_initializer\": \"orthogonal\"}"),
               "field \"kernel_initializer\"", "unknown initializer \"orthogonal\"",
               "glorot_uniform, he_normal, uniform, normal");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"hinge\", \"optimizer\": \"sgd\", \"data\": \"images\""),
               "field \"loss\"", "unknown loss \"hinge\"", "losses: softmax_cross_entropy");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"mse\", \"optimizer\": \"adagrad\", \"data\": \"images\""),
               "field \"optimizer.type\"", "unknown optimizer \"adagrad\"",
               "optimizers: sgd, rmsprop, adam");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"mse\", \"optimizer\": \"sgd\", \"data\": \"cifar\""),
               "field \"data\"", "unknown data kind \"cifar\"", "images");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"mse\", \"optimizer\": {\"type\": \"sgd\", \"schedule\": "
                          "{\"type\": \"cosine\"}}, \"data\": \"images\""),
               "field \"optimizer.schedule.type\"", "unknown schedule \"cosine\"",
               "constant, step, warmup_step");
    EXPECT_ERR("{\"format\": \"keras\"}", "field \"format\"", "expected \"dlperf-model\"",
               "got \"keras\"");
    EXPECT_ERR("{\"format\": \"dlperf-model\", \"version\": 2}", "field \"version\"",
               "version 2 is not supported", "reads version 1");
}

static void test_error_inputs(void **state)
{
    EXPECT_ERR(LAYERS("{\"name\": \"a\", \"type\": \"flatten\"}, "
                      "{\"name\": \"b\", \"type\": \"dense\", \"units\": 3, \"inputs\": [\"zz\"]}"),
               "layer 2 'b'", "field \"inputs\"", "unknown layer \"zz\"");
    EXPECT_ERR(LAYERS("{\"name\": \"a\", \"type\": \"flatten\", \"inputs\": [\"c\"]}, "
                      "{\"name\": \"b\", \"type\": \"flatten\"}, "
                      "{\"name\": \"c\", \"type\": \"flatten\"}"),
               "layer 1 'a'", "layer \"c\" is layer 3, after this one", "earlier layers");
    EXPECT_ERR(LAYERS("{\"name\": \"a\", \"type\": \"flatten\", \"inputs\": \"a\"}"),
               "layer 1 'a'", "\"a\" is this layer");
    EXPECT_ERR(LAYERS("{\"name\": \"a\", \"type\": \"flatten\"}, "
                      "{\"name\": \"x\", \"type\": \"concat\", \"inputs\": "
                      "[\"a\", \"a\", \"a\", \"a\", \"a\", \"a\", \"a\", \"a\", \"a\"]}"),
               "layer 2 'x'", "9 inputs; at most 8");
    EXPECT_ERR(LAYERS("{\"name\": \"a\", \"type\": \"flatten\"}, {\"name\": \"x\", \"type\": \"concat\"}"),
               "layer 2 'x'", "concat needs at least 2 inputs, got 1");
    EXPECT_ERR(LAYERS("{\"name\": \"a\", \"type\": \"flatten\"}, "
                      "{\"name\": \"x\", \"type\": \"add\", \"inputs\": [\"a\"]}"),
               "add needs at least 2 inputs, got 1");
    EXPECT_ERR(LAYERS("{\"name\": \"a\", \"type\": \"flatten\"}, "
                      "{\"name\": \"x\", \"type\": \"dense\", \"units\": 2, \"inputs\": [\"a\", \"input\"]}"),
               "layer 2 'x'", "dense takes one input, got 2");
    EXPECT_ERR(LAYERS("{\"name\": \"x\", \"type\": \"dense\", \"units\": 2, \"inputs\": []}"),
               "field \"inputs\"", "got []");
    EXPECT_ERR(LAYERS("{\"name\": \"x\", \"type\": \"dense\", \"units\": 2, \"inputs\": [1]}"),
               "field \"inputs\"", "expected layer names (strings), got 1");
}

static void test_error_names(void **state)
{
    EXPECT_ERR(LAYERS("{\"name\": \"a\", \"type\": \"flatten\"}, {\"name\": \"a\", \"type\": \"flatten\"}"),
               "layer 2 'a'", "field \"name\"", "'a' is taken: layer 1 has the same name");
    EXPECT_ERR(LAYERS("{\"type\": \"flatten\"}, {\"name\": \"flatten_1\", \"type\": \"flatten\"}"),
               "layer 2 'flatten_1'", "layer 1 has the same name");
    EXPECT_ERR(LAYERS("{\"name\": \"input\", \"type\": \"flatten\"}"), "layer 1:",
               "\"input\" is reserved");
    EXPECT_ERR(LAYERS("{\"name\": \"\", \"type\": \"flatten\"}"), "layer 1:", "names have 1 to 47");
    EXPECT_ERR(LAYERS("{\"name\": \"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz\", "
                      "\"type\": \"flatten\"}"),
               "layer 1:", "field \"name\"", "has 52 characters; names have 1 to 47");
    EXPECT_ERR(LAYERS("{\"name\": \"a\\nb\", \"type\": \"flatten\"}"), "control character");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          TAIL ", \"name\": \"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz\""),
               "field \"name\"", "appears twice");
    EXPECT_ERR("{\"format\": \"dlperf-model\", \"version\": 1, "
               "\"name\": \"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz\"}",
               "field \"name\"", "52 characters; model names have 1 to 47");
    EXPECT_ERR("{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"my cnn\"}",
               "field \"name\"", "character 3 is not allowed");
}

static void test_error_combinations(void **state)
{
    EXPECT_ERR(LAYERS("{\"name\": \"d\", \"type\": \"dense\", \"units\": 3, \"init_scale\": 0.1}"),
               "layer 1 'd'", "field \"init_scale\"", "only used with", "not \"glorot_uniform\"");
    EXPECT_ERR(LAYERS("{\"name\": \"g\", \"type\": \"pool2d\", \"global\": true, \"size\": 2}"),
               "layer 1 'g'", "field \"size\"", "not used with \"global\": true");
    EXPECT_ERR(LAYERS("{\"name\": \"p\", \"type\": \"pool2d\", \"padding\": \"same\", "
                      "\"ceil_mode\": true}"),
               "field \"ceil_mode\"", "not \"same\"");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}", TAIL ", \"classes\": 10"),
               "field \"classes\"", "only used with \"loss\": \"softmax_cross_entropy\", not \"mse\"");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"mse\", \"optimizer\": {\"type\": \"sgd\", \"nesterov\": true}, "
                          "\"data\": \"images\""),
               "field \"optimizer.nesterov\"", "needs a \"momentum\"");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"mse\", \"optimizer\": {\"type\": \"sgd\", \"schedule\": "
                          "{\"type\": \"step\", \"boundaries\": [30, 60], \"factors\": [0.1]}}, "
                          "\"data\": \"images\""),
               "field \"optimizer.schedule.factors\"", "expected 2 positive numbers", "got [0.1]");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"mse\", \"optimizer\": {\"type\": \"sgd\", \"schedule\": "
                          "{\"type\": \"step\", \"boundaries\": [60, 30], \"factors\": [0.1, 0.01]}}, "
                          "\"data\": \"images\""),
               "field \"optimizer.schedule.boundaries\"", "increasing", "got [60,30]");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"mse\", \"optimizer\": {\"type\": \"sgd\", \"schedule\": "
                          "{\"type\": \"step\", \"factors\": [0.1]}}, \"data\": \"images\""),
               "missing field \"optimizer.schedule.boundaries\"");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"mse\", \"optimizer\": {\"type\": \"sgd\", \"schedule\": "
                          "{\"type\": \"warmup_step\", \"warmup_epochs\": 5, \"warmup_from\": 0.1, "
                          "\"boundaries\": [3], \"factors\": [0.1]}}, \"data\": \"images\""),
               "field \"optimizer.schedule.boundaries\"", "inside the 5 warm-up epochs");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"mse\", \"optimizer\": {\"type\": \"sgd\", \"schedule\": "
                          "{\"type\": \"constant\", \"factors\": [0.1]}}, \"data\": \"images\""),
               "unknown field \"optimizer.schedule.factors\"", "constant fields: type");
    /* token ids: embedding <-> "ids" <-> "tokens" */
    EXPECT_ERR(LAYERS("{\"name\": \"e\", \"type\": \"embedding\", \"input_dim\": 10, \"output_dim\": 4}"),
               "layer 1 'e'", "field \"type\"", "\"ids\": true");
    const char *ids = "{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"t\", "
                      "\"input\": {\"shape\": [5], \"ids\": true}, \"layers\": [%s], "
                      "\"loss\": \"mse\", \"optimizer\": \"sgd\", \"data\": \"%s\"}";
    char buf[1024];
    snprintf(buf, sizeof buf, ids, "{\"name\": \"d\", \"type\": \"dense\", \"units\": 3}", "tokens");
    EXPECT_ERR(buf, "layer 1 'd'", "field \"inputs\"", "only an embedding layer reads it");
    snprintf(buf, sizeof buf, ids,
             "{\"name\": \"e\", \"type\": \"embedding\", \"input_dim\": 9, \"output_dim\": 4}, "
             "{\"name\": \"e2\", \"type\": \"embedding\", \"input_dim\": 9, \"output_dim\": 4}",
             "tokens");
    EXPECT_ERR(buf, "layer 2 'e2'", "reads the model input (\"input\"), not layer 'e'");
    snprintf(buf, sizeof buf, ids,
             "{\"name\": \"e\", \"type\": \"embedding\", \"input_dim\": 9, \"output_dim\": 4}",
             "images");
    EXPECT_ERR(buf, "field \"data\"", "only \"data\": \"tokens\", \"masked_tokens\" or \"text_bytes\" provides; got \"images\"");
    EXPECT_ERR(model_with("{\"type\": \"flatten\"}",
                          "\"loss\": \"mse\", \"optimizer\": \"sgd\", \"data\": \"tokens\""),
               "field \"data\"", "\"ids\": true");
    EXPECT_ERR("{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"n\", "
               "\"input\": {\"shape\": [3, 4], \"ids\": true}}",
               "field \"input.ids\"", "must be [T] (sample-major, a word image) or [T, 1]", "got rank 2");
}

/* A small GPT as a model file: the transformer's layers, a tied head and AdamW. */
static const char *const gpt_text =
    "{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"mini-gpt\",\n"
    " \"input\": {\"shape\": [16, 1], \"ids\": true},\n"
    " \"layers\": [\n"
    "  {\"name\": \"wte\", \"type\": \"embedding\", \"input_dim\": 100, \"output_dim\": 32, \"weight_decay\": true,\n"
    "   \"kernel_initializer\": \"normal\", \"init_scale\": 0.02},\n"
    "  {\"name\": \"wpe\", \"type\": \"position\", \"positions\": 64, \"kernel_initializer\": \"normal\",\n"
    "   \"init_scale\": 0.02},\n"
    "  {\"name\": \"ln_1\", \"type\": \"layernorm\"},\n"
    "  {\"name\": \"attn\", \"type\": \"attention\", \"heads\": 4, \"causal\": true, \"dropout\": 0.1},\n"
    "  {\"name\": \"res_1\", \"type\": \"add\", \"inputs\": [\"wpe\", \"attn\"]},\n"
    "  {\"name\": \"ln_2\", \"type\": \"layernorm\", \"epsilon\": 1e-6},\n"
    "  {\"name\": \"fc\", \"type\": \"dense\", \"units\": 128, \"activation\": \"gelu\"},\n"
    "  {\"name\": \"proj\", \"type\": \"dense\", \"units\": 32},\n"
    "  {\"name\": \"res_2\", \"type\": \"add\", \"inputs\": [\"res_1\", \"proj\"]},\n"
    "  {\"name\": \"ln_f\", \"type\": \"layernorm\"},\n"
    "  {\"name\": \"head\", \"type\": \"dense\", \"units\": 100, \"use_bias\": false, \"tie\": \"wte\"}],\n"
    " \"loss\": \"softmax_cross_entropy\", \"classes\": 100,\n"
    " \"optimizer\": {\"type\": \"adamw\", \"lr\": 6e-4, \"beta_2\": 0.95, \"weight_decay\": 0.1, \"clip_norm\": 1.0},\n"
    " \"data\": \"tokens\", \"batch\": 2}";

static void test_parse_transformer(void **state)
{
    ModelSpec *m = parse_ok(gpt_text);
    assert_true(m->input_ids && m->input.rank == 2 && m->input.d[1] == 1);
    assert_int_equal(m->layers[0].kind, LAYER_EMBEDDING);
    assert_true(m->layers[0].u.embed.decayed);
    assert_int_equal(m->layers[1].kind, LAYER_POSITION);
    assert_int_equal(m->layers[1].u.pos.positions, 64);
    assert_true(m->layers[2].kind == LAYER_LAYERNORM && m->layers[2].u.ln.eps == 1e-5f);
    assert_true(m->layers[5].u.ln.eps == 1e-6f);
    const AttentionSpec *a = &m->layers[3].u.attn;
    assert_true(a->heads == 4 && a->causal && a->dropout == 0.1f);
    assert_int_equal(m->layers[6].act, ACT_GELU);
    assert_int_equal(m->layers[10].u.dense.tie, 1);
    assert_true(m->opt.kind == OPT_ADAMW && m->opt.weight_decay == 0.1f && m->opt.clip_norm == 1.0f &&
                m->opt.beta2 == 0.95f && m->opt.eps == 1e-8f);
    Plan p;
    char err[256];
    assert_int_equal(plan_build(m, 2, &p, err, sizeof err), 0);
    /* 100*32 + 64*32 + 4*32 (norms) + (32*96 + 96 + 32*32 + 32) + (32*128 + 128 + 128*32 + 32) + 2*32 (ln_f),
     * the head tied */
    assert_int_equal(p.param_count, 3200 + 2048 + 128 + 4224 + 8352 + 64);
    plan_free(&p);
    /* and back: the exported file parses to the same model */
    char *text = model_json_export(m);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"tie\": \"wte\""));
    ModelSpec *back = parse_ok(text);
    assert_memory_equal(back->layers, m->layers, sizeof(LayerSpec) * (size_t)m->nlayers);
    assert_memory_equal(&back->opt, &m->opt, sizeof m->opt);
    free(text);
    model_free(back);
    model_free(m);
    /* a padding mask: its softmax reads the token ids, and the file says it again */
    char buf[4096];
    const char *at = strstr(gpt_text, "\"causal\": true,");
    snprintf(buf, sizeof buf, "%.*s\"pad_token_id\": 0, %s", (int)(at - gpt_text), gpt_text, at);
    m = parse_ok(buf);
    assert_true(m->layers[3].u.attn.padding_mask && m->layers[3].u.attn.pad_id == 0);
    assert_int_equal(plan_build(m, 2, &p, err, sizeof err), 0);
    int padded = 0;
    for (int i = 0; i < p.nops; i++)
        padded += p.ops[i].desc.kind == OP_SOFTMAX && p.ops[i].desc.u.softmax.samples == 2;
    assert_int_equal(padded, 1);
    plan_free(&p);
    text = model_json_export(m);
    assert_non_null(strstr(text, "\"pad_token_id\": 0"));
    back = parse_ok(text);
    assert_memory_equal(back->layers, m->layers, sizeof(LayerSpec) * (size_t)m->nlayers);
    free(text);
    model_free(back);
    model_free(m);
}

static void test_error_transformer(void **state)
{
    static const char *const seq = "{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"t\",\n"
                                   " \"input\": {\"shape\": [8, 1], \"ids\": true},\n"
                                   " \"layers\": [{\"name\": \"e\", \"type\": \"embedding\", \"input_dim\": 9, "
                                   "\"output_dim\": 8}, %s],\n"
                                   " \"loss\": \"softmax_cross_entropy\", \"classes\": 9, \"optimizer\": %s, "
                                   "\"data\": \"tokens\"}";
    char buf[2048];
    snprintf(buf, sizeof buf, seq, "{\"name\": \"a\", \"type\": \"attention\"}", "\"adamw\"");
    EXPECT_ERR(buf, "layer 2 'a'", "\"heads\"");
    snprintf(buf, sizeof buf, seq, "{\"name\": \"a\", \"type\": \"attention\", \"heads\": 2, \"dropout\": 1.5}",
             "\"adamw\"");
    EXPECT_ERR(buf, "layer 2 'a'", "field \"dropout\"");
    snprintf(buf, sizeof buf, seq, "{\"name\": \"d\", \"type\": \"dense\", \"units\": 9}, "
                                   "{\"name\": \"h\", \"type\": \"dense\", \"units\": 9, \"tie\": \"d\"}", "\"adamw\"");
    EXPECT_ERR(buf, "layer 3 'h'", "field \"tie\"", "earlier embedding layer", "got \"d\"");
    snprintf(buf, sizeof buf, seq, "{\"name\": \"h\", \"type\": \"dense\", \"units\": 9, \"tie\": \"e\", "
                                   "\"init_scale\": 0.1}", "\"adamw\"");
    EXPECT_ERR(buf, "layer 2 'h'", "no kernel of its own");
    snprintf(buf, sizeof buf, seq, "{\"name\": \"p\", \"type\": \"position\"}", "\"adamw\"");
    EXPECT_ERR(buf, "layer 2 'p'", "\"positions\"");
    snprintf(buf, sizeof buf, seq, "{\"name\": \"n\", \"type\": \"layernorm\", \"epsilon\": 0}", "\"adamw\"");
    EXPECT_ERR(buf, "layer 2 'n'", "field \"epsilon\"");
    snprintf(buf, sizeof buf, seq, "{\"name\": \"n\", \"type\": \"layernorm\"}",
             "{\"type\": \"adamw\", \"clip_norm\": -1}");
    EXPECT_ERR(buf, "field \"optimizer.clip_norm\"");
    snprintf(buf, sizeof buf, seq, "{\"name\": \"n\", \"type\": \"layernorm\"}",
             "{\"type\": \"adam\", \"clip_norm\": 1}");
    EXPECT_ERR(buf, "clip_norm");
}

/* Shapes a file can state but no plan can build: each refused with the layer named. */
static void test_transformer_shapes_refused(void **state)
{
    static const struct {
        const char *from, *to, *needle;
    } cases[] = {
        {"\"heads\": 4,", "\"heads\": 5,", "heads 5: must be >= 1 and divide the width 32"},
        {"\"positions\": 64,", "\"positions\": 8,", "positions 8: the table must have a row for each of the sequence's 16"},
        {"\"causal\": true,", "\"causal\": true, \"pad_token_id\": 100,", "pad_token_id 100: must be a token id, in [0, 100)"},
        {"\"units\": 100, \"use_bias\": false, \"tie\": \"wte\"", "\"units\": 99, \"use_bias\": false, \"tie\": \"wte\"",
         "tied to 'wte' (100 x 32)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[4096];
        const char *at = strstr(gpt_text, cases[i].from);
        assert_non_null(at);
        snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - gpt_text), gpt_text, cases[i].to, at + strlen(cases[i].from));
        if (strstr(cases[i].to, "99"))
            *strstr(buf, "\"classes\": 100") = '\0', strcat(buf, "\"classes\": 99, \"optimizer\": \"adamw\", \"data\": \"tokens\"}");
        ModelSpec *m = parse_ok(buf);
        Plan p;
        char err[512];
        assert_int_equal(plan_build(m, 2, &p, err, sizeof err), -1);
        if (!strstr(err, cases[i].needle))
            fail_msg("case %zu: error lacks [%s]: %s", i, cases[i].needle, err);
        model_free(m);
    }
}

static void test_error_heads(void **state)
{
    const char *fmt = "{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"t\", "
                      "\"input\": {\"shape\": [4]}, \"layers\": [{\"name\": \"o1\", "
                      "\"type\": \"dense\", \"units\": 3}, {\"name\": \"o2\", \"type\": "
                      "\"dense\", \"units\": 2, \"inputs\": \"input\"}], %s, "
                      "\"optimizer\": \"sgd\", \"data\": \"classes\"}";
    char buf[1024];
#define HEADS(x) (snprintf(buf, sizeof buf, fmt, (x)), buf)
    EXPECT_ERR(HEADS("\"loss\": \"softmax_cross_entropy\", \"heads\": [{\"layer\": \"o3\", "
                     "\"classes\": 3}]"),
               "field \"heads[1].layer\"", "expected the name of a layer, got \"o3\"");
    EXPECT_ERR(HEADS("\"loss\": \"softmax_cross_entropy\", \"heads\": [{\"layer\": \"o1\", "
                     "\"classes\": 3}, {\"layer\": \"o1\", \"classes\": 3}]"),
               "field \"heads[2].layer\"", "\"o1\" is already head 1");
    EXPECT_ERR(HEADS("\"loss\": \"softmax_cross_entropy\", \"heads\": [{\"layer\": \"o1\"}]"),
               "missing field \"heads[1].classes\"");
    EXPECT_ERR(HEADS("\"loss\": \"softmax_cross_entropy\", \"heads\": [{\"classes\": 3}]"),
               "missing field \"heads[1].layer\"");
    EXPECT_ERR(HEADS("\"loss\": \"softmax_cross_entropy\", \"heads\": [{\"layer\": \"o1\", "
                     "\"classes\": 3, \"units\": 3}]"),
               "unknown field \"heads[1].units\"", "head fields: layer, classes, name");
    EXPECT_ERR(HEADS("\"loss\": \"softmax_cross_entropy\", \"heads\": []"), "field \"heads\"",
               "1 to 4 heads");
    EXPECT_ERR(HEADS("\"loss\": \"softmax_cross_entropy\", \"heads\": [3]"),
               "field \"heads[1]\"", "expected an object", "got 3");
    EXPECT_ERR(HEADS("\"loss\": \"mse\", \"heads\": [{\"layer\": \"o1\", \"classes\": 3}]"),
               "field \"heads\"", "heads are classifiers", "not \"mse\"");
    EXPECT_ERR(HEADS("\"loss\": \"softmax_cross_entropy\", \"classes\": 3, \"autoencoder\": true"),
               "field \"autoencoder\"", "target is its input");
    EXPECT_ERR(HEADS("\"loss\": \"mse\", \"autoencoder\": 1"), "field \"autoencoder\"",
               "expected true or false, got 1");
#undef HEADS
}

static void test_error_limits(void **state)
{
    EXPECT_ERR(LAYERS(""), "field \"layers\"", "needs at least one layer");
    /* MODEL_JSON_MAX_LAYERS + 1 layers are refused before any is read */
    size_t n = MODEL_JSON_MAX_LAYERS + 1, cap = n * 3 + 512;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t len = (size_t)snprintf(text, cap, "{\"format\": \"dlperf-model\", \"version\": 1, "
                                             "\"name\": \"big\", \"input\": {\"shape\": [3]}, "
                                             "\"layers\": [");
    for (size_t i = 0; i < n; i++) {
        memcpy(text + len, i ? ",{}" : "{}", i ? 3 : 2);
        len += i ? 3 : 2;
    }
    snprintf(text + len, cap - len, "]}");
    EXPECT_ERR(text, "field \"layers\"", "100001 layers; at most 100000");
    free(text);
}

static void test_error_json_syntax(void **state)
{
    EXPECT_ERR("{\"format\": \"dlperf-model\",\n \"version\": 1,\n \"name\": \"x\" \"input\": {}}",
               "my.json:3:14: not valid JSON", "stopped at '\"input\"");
    EXPECT_ERR("{\"format\": \"dlperf-model\",\n \"version\": ",
               "my.json:2:13: not valid JSON: the text ends too early");
    EXPECT_ERR("{\"a\": 1} trailing", "my.json:1:10: not valid JSON", "'trailing'");
    EXPECT_ERR("", "my.json: empty");
    EXPECT_ERR(" \n\t ", "my.json: empty");
    EXPECT_ERR("{\"a\": 1, /* comment */ \"b\": 2}", "my.json:1:11: not valid JSON");
}

/* Every prefix of a valid file, and every byte replaced by a few troublemakers: a model or
 * one line of error, never a crash (run under ASan by make asan). */
static void test_error_mutations(void **state)
{
    static const char subst[] = {'\0', '"', '}', ']', ',', '-', '9', 'x', '\n', (char)0xff};
    const char *texts[] = {cnn_text, sink_text, heads_text};
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
        size_t len = strlen(texts[t]);
        char *buf = malloc(len + 1);
        char err[1024];
        assert_non_null(buf);
        for (size_t i = 0; i < len; i++) {
            for (size_t k = 0; k <= sizeof subst; k++) {
                memcpy(buf, texts[t], len + 1);
                if (k == sizeof subst)
                    buf[i] = '\0'; /* the prefix */
                else
                    buf[i] = subst[k];
                err[0] = '\0';
                ModelSpec *m = model_json_parse(buf, "my.json", err, sizeof err);
                if (m) {
                    model_free(m);
                    continue;
                }
                if (strncmp(err, "my.json", 7) != 0 || strchr(err, '\n'))
                    fail_msg("byte %zu -> %d: bad message: %s", i, subst[k % sizeof subst], err);
            }
        }
        free(buf);
    }
}

/* ---- files ---------------------------------------------------------------------------- */

static char tmpdir[64];

static int files_setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dlperf-model-json-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int files_teardown(void **state)
{
    static const char *names[] = {"ok.json", "trunc.json", "empty.json", "bin.json", "bin2.json",
                                  "big.json"};
    char p[128];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", tmpdir, names[i]);
        unlink(p);
    }
    return rmdir(tmpdir);
}

static const char *write_file(const char *name, const void *data, size_t len)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    return path;
}

/* load(path) fails with one line that starts with path and contains needle. */
static void expect_load_error(const char *path, const char *needle)
{
    char err[1024] = "";
    ModelSpec *m = model_json_load(path, err, sizeof err);
    if (m) {
        model_free(m);
        fail_msg("%s: loaded, expected an error", path);
    }
    if (strncmp(err, path, strlen(path)) != 0 || strchr(err, '\n') || !strstr(err, needle))
        fail_msg("%s: expected one line with the path and [%s], got: %s", path, needle, err);
}

static void test_files(void **state)
{
    char err[512], p[128];
    const char *path = write_file("ok.json", cnn_text, strlen(cnn_text));
    ModelSpec *m = model_json_load(path, err, sizeof err);
    if (!m)
        fail_msg("%s", err);
    assert_string_equal(m->name, "my-cnn");
    model_free(m);

    /* the file cut in the middle of a layer */
    path = write_file("trunc.json", cnn_text, 300);
    expect_load_error(path, "not valid JSON: the text ends too early (a truncated file?)");
    path = write_file("empty.json", "", 0);
    expect_load_error(path, ": empty file");
    static const unsigned char bin[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0xff, 0xfe};
    path = write_file("bin.json", bin, sizeof bin);
    expect_load_error(path, ": byte 8 is NUL: not a text file");
    static const unsigned char bin2[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0xff};
    path = write_file("bin2.json", bin2, sizeof bin2);
    expect_load_error(path, ":1:1: not valid JSON: parsing stopped at '?PNG");
    expect_load_error(tmpdir, ": is a directory; expected a JSON model file");
    snprintf(p, sizeof p, "%s/missing.json", tmpdir);
    expect_load_error(p, ": cannot open: No such file or directory");

    /* above the size limit: refused by its size, without reading it (a sparse file) */
    snprintf(p, sizeof p, "%s/big.json", tmpdir);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)MODEL_JSON_MAX_BYTES + 1), 0);
    fclose(f);
    expect_load_error(p, "16777217 bytes; model files are limited to 16 MiB");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_cnn),
        cmocka_unit_test(test_parse_transformer),
        cmocka_unit_test(test_error_transformer),
        cmocka_unit_test(test_transformer_shapes_refused),
        cmocka_unit_test(test_parse_dag),
        cmocka_unit_test(test_parse_lstm),
        cmocka_unit_test(test_parse_embedding),
        cmocka_unit_test(test_parse_heads),
        cmocka_unit_test(test_parse_misc),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_export_format),
        cmocka_unit_test(test_round_trip_handwritten),
        cmocka_unit_test(test_round_trip_zoo),
        cmocka_unit_test(test_error_example_message),
        cmocka_unit_test(test_error_unknown_type),
        cmocka_unit_test(test_error_unknown_field),
        cmocka_unit_test(test_error_json_types),
        cmocka_unit_test(test_error_missing_fields),
        cmocka_unit_test(test_error_ranges),
        cmocka_unit_test(test_error_enums),
        cmocka_unit_test(test_error_inputs),
        cmocka_unit_test(test_error_names),
        cmocka_unit_test(test_error_combinations),
        cmocka_unit_test(test_error_heads),
        cmocka_unit_test(test_error_limits),
        cmocka_unit_test(test_error_json_syntax),
        cmocka_unit_test(test_error_mutations),
        cmocka_unit_test_setup_teardown(test_files, files_setup, files_teardown),
    };
    return cmocka_run_group_tests_name("model_json", tests, NULL, NULL);
}
