/* tests/test_hf_config.c — HuggingFace configs read as dlperf models: the published
 * parameter counts of GPT-2, OPT-1.3B and BERT (HF's, the tied table once), the zoo's own
 * GPT-2 and BERT-base from their configs, the model file round trip, and one line naming
 * the field for every config refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/hf_config.h"
#include "models/model_json.h"
#include "models/plan.h"
#include "models/zoo_build.h"

/* HF's gpt2 config (the fields that set the shape), dropout as given */
#define GPT2_CONFIG(drop)                                                                                          \
    "{\"model_type\": \"gpt2\", \"_name_or_path\": \"gpt2\", \"n_layer\": 12, \"n_embd\": 768, \"n_head\": 12, "  \
    "\"n_positions\": 1024, \"n_ctx\": 1024, \"vocab_size\": 50257, \"activation_function\": \"gelu_new\", "         \
    "\"layer_norm_epsilon\": 1e-05, \"resid_pdrop\": " drop ", \"embd_pdrop\": " drop ", \"attn_pdrop\": " drop     \
    ", \"initializer_range\": 0.02, \"n_inner\": null}"

static const char *const opt13 =
    "{\"_name_or_path\": \"facebook/opt-1.3b\", \"activation_function\": \"relu\", \"attention_dropout\": 0.0,"
    " \"do_layer_norm_before\": true, \"dropout\": 0.1, \"ffn_dim\": 8192, \"hidden_size\": 2048,"
    " \"max_position_embeddings\": 2048, \"model_type\": \"opt\", \"num_attention_heads\": 32,"
    " \"num_hidden_layers\": 24, \"vocab_size\": 50272, \"word_embed_proj_dim\": 2048}";

static const char *const bert_base =
    "{\"model_type\": \"bert\", \"hidden_size\": 768, \"num_hidden_layers\": 12, \"num_attention_heads\": 12,"
    " \"intermediate_size\": 3072, \"max_position_embeddings\": 512, \"type_vocab_size\": 2,"
    " \"vocab_size\": 30522, \"hidden_act\": \"gelu\", \"layer_norm_eps\": 1e-12,"
    " \"hidden_dropout_prob\": 0.1, \"attention_probs_dropout_prob\": 0.1}";

static ModelSpec *read_ok(const char *text, const char *name, int context)
{
    char err[512];
    ModelSpec *m = model_from_hf_config(text, "config.json", name, context, err, sizeof err);
    if (!m)
        fail_msg("refused: %s", err);
    return m;
}

static size_t params(const ModelSpec *m, int *nops)
{
    Plan p;
    char err[256];
    if (plan_build(m, 1, &p, err, sizeof err) != 0)
        fail_msg("%s: %s", m->name, err);
    size_t n = p.param_count;
    if (nops)
        *nops = p.nops;
    plan_free(&p);
    return n;
}

static void test_published_counts(void **state)
{
    (void)state;
    ModelSpec *g = read_ok(GPT2_CONFIG("0.1"), NULL, 0);
    assert_string_equal(g->name, "gpt2");
    assert_int_equal(params(g, NULL), 124439808);
    assert_true(g->input.d[0] == 1024 && g->data == DATA_TOKENS && g->opt.kind == OPT_ADAMW);
    ModelSpec *o = read_ok(opt13, NULL, 512);
    assert_string_equal(o->name, "opt-1.3b");
    assert_int_equal(params(o, NULL), 1315758080); /* HF's OPT-1.3B, positions + 2 rows */
    assert_int_equal(o->input.d[0], 512);
    ModelSpec *b = read_ok(bert_base, "bert", 128);
    assert_int_equal(params(b, NULL), 109514298); /* BertForMaskedLM */
    assert_int_equal(b->data, DATA_MASKED_TOKENS);
    model_free(g), model_free(o), model_free(b);
}

/* Without dropout, HF's gpt2 config is the zoo's gpt2 op for op; bert-base's is the zoo's. */
static void test_zoo_models_from_their_configs(void **state)
{
    (void)state;
    static const struct {
        const char *zoo, *config;
        int context;
    } cases[] = {{"gpt2", GPT2_CONFIG("0.0"), 0}, {"bert-base", bert_base, 128}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ModelSpec *m = read_ok(cases[i].config, NULL, cases[i].context);
        const ModelSpec *z = zoo_find(cases[i].zoo);
        Plan a, b;
        char err[256];
        assert_int_equal(plan_build(z, 2, &a, err, sizeof err), 0);
        assert_int_equal(plan_build(m, 2, &b, err, sizeof err), 0);
        assert_int_equal(a.nops, b.nops);
        assert_int_equal(a.param_count, b.param_count);
        for (int k = 0; k < a.nops; k++) {
            char ka[OP_KEY_MAX], kb[OP_KEY_MAX];
            op_key(&a.ops[k].desc, ka);
            op_key(&b.ops[k].desc, kb);
            assert_string_equal(ka, kb);
        }
        plan_free(&a), plan_free(&b);
        model_free(m);
    }
}

static void test_model_file_round_trip(void **state)
{
    (void)state;
    ModelSpec *m = read_ok(opt13, "opt", 256);
    char *text = model_json_export(m);
    assert_non_null(text);
    char err[512];
    ModelSpec *back = model_json_parse(text, "opt.json", err, sizeof err);
    if (!back)
        fail_msg("%s", err);
    assert_int_equal(back->nlayers, m->nlayers);
    assert_memory_equal(back->layers, m->layers, sizeof(LayerSpec) * (size_t)m->nlayers);
    assert_int_equal(params(back, NULL), 1315758080);
    free(text);
    model_free(back), model_free(m);
}

/* docs/examples/hf-configs: HuggingFace's configs of GPT-2 large, BERT-large and OPT-1.3B
 * with their published counts; the larger models' shapes from their papers, and their
 * counts by Megatron's formula 12 l h^2 (1 + 13 / (12 h) + (V + s) / (12 l h)) */
static void test_example_configs(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        size_t params;
    } cases[] = {{"docs/examples/hf-configs/gpt2-large.json", 774030080ULL},
                 {"docs/examples/hf-configs/bert-large.json", 335174458ULL},
                 {"docs/examples/hf-configs/opt-1.3b.json", 1315758080ULL},
                 {"docs/examples/hf-configs/gpt3-2.7b.json", 2651553280ULL},
                 {"docs/examples/hf-configs/gpt3-175b.json", 174604259328ULL},
                 {"docs/examples/hf-configs/megatron-22b.json", 22074273792ULL},
                 {"docs/examples/hf-configs/megatron-530b.json", 529600819200ULL},
                 {"docs/examples/hf-configs/megatron-1t.json", 1008038758400ULL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *f = fopen(cases[i].file, "rb");
        if (!f)
            fail_msg("%s: cannot open (the tests run from the repository's root)", cases[i].file);
        char text[4096];
        const size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        char err[512];
        ModelSpec *m = model_from_hf_config(text, cases[i].file, NULL, 0, err, sizeof err);
        if (!m)
            fail_msg("%s", err);
        const size_t got = params(m, NULL);
        if (got != cases[i].params)
            fail_msg("%s: %zu parameters, want %zu", cases[i].file, got, cases[i].params);
        model_free(m);
    }
}

static void expect_refused(const char *text, int context, const char *const *needles)
{
    char err[512] = "";
    ModelSpec *m = model_from_hf_config(text, "cfg.json", NULL, context, err, sizeof err);
    if (m) {
        model_free(m);
        fail_msg("accepted: %s", text);
    }
    assert_non_null(strstr(err, "cfg.json: "));
    assert_null(strchr(err, '\n'));
    for (int i = 0; needles[i]; i++)
        if (!strstr(err, needles[i]))
            fail_msg("error lacks [%s]: %s", needles[i], err);
}
#define REFUSED(text, context, ...) expect_refused((text), (context), (const char *const[]){__VA_ARGS__, NULL})

static void test_refused(void **state)
{
    (void)state;
    REFUSED("[1, 2]", 0, "not a JSON object");
    REFUSED("{\"model_type\": \"llama\"}", 0, "field \"model_type\"", "\"llama\"", "gpt2, opt, bert");
    REFUSED("{\"model_type\": \"gpt2\", \"n_embd\": 768}", 0, "field \"n_layer\"", "missing");
    REFUSED("{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_embd\": 10, \"n_head\": 3, \"n_positions\": 8, "
            "\"vocab_size\": 9}", 0, "field \"n_head\"", "3 does not divide the width 10");
    REFUSED("{\"model_type\": \"gpt2\", \"n_layer\": 2.5, \"n_embd\": 8, \"n_head\": 2, \"n_positions\": 8, "
            "\"vocab_size\": 9}", 0, "field \"n_layer\"", "got 2.5");
    REFUSED("{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_embd\": 8, \"n_head\": 2, \"n_positions\": 8, "
            "\"vocab_size\": 9, \"activation_function\": \"swish\"}", 0, "field \"activation_function\"", "relu");
    REFUSED("{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_embd\": 8, \"n_head\": 2, \"n_positions\": 8, "
            "\"vocab_size\": 9, \"tie_word_embeddings\": false}", 0, "field \"tie_word_embeddings\"", "not modelled");
    REFUSED(GPT2_CONFIG("0.1"), 2048, "context 2048", "1 to 1024");
    REFUSED("{\"model_type\": \"opt\", \"num_hidden_layers\": 2, \"hidden_size\": 512, \"num_attention_heads\": 8,"
            " \"ffn_dim\": 2048, \"max_position_embeddings\": 16, \"vocab_size\": 9, \"word_embed_proj_dim\": 256}",
            0, "field \"word_embed_proj_dim\"", "project_in/out");
    REFUSED("{\"model_type\": \"opt\", \"num_hidden_layers\": 2, \"hidden_size\": 512, \"num_attention_heads\": 8,"
            " \"ffn_dim\": 2048, \"max_position_embeddings\": 16, \"vocab_size\": 9, \"do_layer_norm_before\": false}",
            0, "field \"do_layer_norm_before\"", "post-norm");
    REFUSED("{\"model_type\": \"bert\", \"hidden_size\": 8, \"num_hidden_layers\": 1, \"num_attention_heads\": 2,"
            " \"intermediate_size\": 16, \"max_position_embeddings\": 8, \"vocab_size\": 9,"
            " \"hidden_dropout_prob\": 1.5}", 0, "field \"hidden_dropout_prob\"", "got 1.5");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_counts),
        cmocka_unit_test(test_zoo_models_from_their_configs),
        cmocka_unit_test(test_model_file_round_trip),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_example_configs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
