/* tests/test_models.c — the model zoo and the plan: exact parameter counts and forward
 * multiply-adds from MODELS.md, whole-model gradients against central finite differences
 * (every layer kind, through the real training step), no gradient leaking from one step
 * into the next, training that lowers the loss, and shape errors that name the layer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/plan.h"
#include "models/train.h"

static void test_zoo_parameter_counts(void **state)
{
    /* MODELS.md 1.2, 3.1 and 4 */
    struct {
        const char *name;
        size_t params;
        double macs;
        double mac_tol;
    } want[] = {
        {"p1b1", 244397083, 244332000, 0.5},     /* exact multiply-adds */
        {"alexnet-owt", 61100840, 0.714e9, 0.0005e9}, /* 0.714 G (3 digits) */
        {"basic-lstm", 8392704, 30.0 * 2048 * 4096, 0.5},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const ModelSpec *m = zoo_find(want[i].name);
        assert_non_null(m);
        Plan p;
        char err[256];
        assert_int_equal(plan_build(m, 1, &p, err, sizeof err), 0);
        assert_int_equal(p.param_count, want[i].params);
        assert_true(fabs(plan_forward_macs_per_sample(&p) - want[i].macs) <= want[i].mac_tol);
        plan_free(&p);
    }
    assert_null(zoo_find("resnet-9000"));
}

static void test_alexnet_shapes(void **state)
{
    Plan p;
    char err[256];
    assert_int_equal(plan_build(zoo_find("alexnet-owt"), 2, &p, err, sizeof err), 0);
    /* MODELS.md 3.1: 55, 27, 27, 13, 13, 13, 13, 6 */
    int hw[] = {55, 27, 27, 13, 13, 13, 13, 6};
    for (int i = 0; i < 8; i++) {
        assert_int_equal(p.layers[i].out.d[1], hw[i]);
        assert_int_equal(p.layers[i].out.d[2], hw[i]);
    }
    assert_int_equal(shape_count(&p.layers[7].out), 9216);
    plan_free(&p);
}

/* ---- whole-model gradient check ---- */

static const LayerSpec conv_net[] = {
    {.kind = LAYER_CONV2D, .name = "c1", .input = -1, .act = ACT_TANH, .init = INIT_GLOROT_UNIFORM,
     .u.conv = {.filters = 4, .kh = 3, .kw = 3, .stride = 2, .pad = PAD_SAME, .groups = 1}},
    {.kind = LAYER_POOL2D, .name = "p1", .input = 0, .act = ACTIVATION_NONE,
     .u.pool = {.kind = POOL_AVG, .win = 2, .stride = 1, .pad = PAD_VALID}},
    {.kind = LAYER_CONV2D, .name = "c2", .input = 1, .act = ACT_SIGMOID, .init = INIT_GLOROT_UNIFORM,
     .u.conv = {.filters = 6, .kh = 2, .kw = 3, .stride = 1, .pad = PAD_VALID, .groups = 2}},
    {.kind = LAYER_DENSE, .name = "d1", .input = 2, .act = ACT_TANH, .init = INIT_GLOROT_UNIFORM, .u.dense = {.units = 5}},
    {.kind = LAYER_DENSE, .name = "out", .input = 3, .act = ACTIVATION_NONE, .init = INIT_GLOROT_UNIFORM,
     .u.dense = {.units = 3}},
};
static const ModelSpec conv_model = {.name = "tiny-conv", .input = {.rank = 3, .d = {3, 9, 8}}, .layers = conv_net,
                                     .nlayers = 5, .loss = LOSS_SOFTMAX_XENT, .classes = 3,
                                     .opt = {.kind = OPT_SGD, .lr = 0}, .data = DATA_IMAGES};

static const LayerSpec lstm_net[] = {
    {.kind = LAYER_LSTM, .name = "lstm", .input = -1, .act = ACTIVATION_NONE, .init = INIT_UNIFORM, .init_scale = 0.5f,
     .u.lstm = {.hidden = 6, .forget_bias = 1.0f, .last_only = true}},
};
static const ModelSpec lstm_model = {.name = "tiny-lstm", .input = {.rank = 2, .d = {4, 5}}, .layers = lstm_net,
                                     .nlayers = 1, .loss = LOSS_SSE, .opt = {.kind = OPT_SGD, .lr = 0},
                                     .data = DATA_SEQUENCE};

static const LayerSpec ae_net[] = {
    {.kind = LAYER_DENSE, .name = "enc", .input = -1, .act = ACT_SIGMOID, .init = INIT_GLOROT_UNIFORM, .u.dense = {.units = 4}},
    {.kind = LAYER_DENSE, .name = "dec", .input = 0, .act = ACTIVATION_NONE, .init = INIT_GLOROT_UNIFORM,
     .u.dense = {.units = 7}},
};
static const ModelSpec ae_model = {.name = "tiny-ae", .input = {.rank = 1, .d = {7}}, .layers = ae_net, .nlayers = 2,
                                   .loss = LOSS_MSE, .opt = {.kind = OPT_RMSPROP, .lr = 0, .rho = 0.9f, .eps = 1e-8f},
                                   .data = DATA_EXPRESSION};

/* Runs one step with lr = 0 (parameters unchanged) and returns the loss. */
static double loss_at(Trainer *t) { return trainer_step(t, 0, NULL); }

static void check_gradients(const ModelSpec *m, int batch)
{
    Trainer t;
    char err[512];
    assert_int_equal(trainer_init(&t, m, batch, 1, 7, err, sizeof err), 0);
    float *w = t.mem[ARENA_PARAM], *g = t.mem[ARENA_GRAD];
    size_t n = t.plan.arena_bytes[ARENA_PARAM] / sizeof(float);
    loss_at(&t);
    float *g1 = malloc(n * sizeof *g1);
    memcpy(g1, g, n * sizeof *g1);
    /* A second identical step must give identical gradients: nothing accumulates across
     * steps (every gradient's first writer overwrites). */
    loss_at(&t);
    for (size_t i = 0; i < n; i++)
        assert_float_equal(g[i], g1[i], 1e-6 * (1 + fabsf(g1[i])));
    double gmax = 0;
    for (size_t i = 0; i < n; i++)
        gmax = fmax(gmax, fabs(g1[i]));
    assert_true(gmax > 0);
    int checked = 0;
    for (int pi = 0; pi < t.plan.nparams; pi++) {
        const PlanParam *pp = &t.plan.params[pi];
        size_t base = pp->ref.offset / sizeof(float);
        for (size_t j = 0; j < pp->count; j += 1 + pp->count / 7) {
            float keep = w[base + j];
            const float eps = 1e-2f;
            w[base + j] = keep + eps;
            double lp = loss_at(&t);
            w[base + j] = keep - eps;
            double lm = loss_at(&t);
            w[base + j] = keep;
            double fd = (lp - lm) / (2.0 * eps), an = g1[base + j];
            if (fabs(fd - an) > 3e-2 * fabs(an) + 3e-3 * gmax)
                fail_msg("%s: param %d ('%s' %s) element %zu: analytic %.6g, finite difference %.6g", m->name, pi,
                         t.plan.layers[pp->layer].name, pp->is_bias ? "bias" : "weights", j, an, fd);
            checked++;
        }
    }
    assert_true(checked > 10);
    free(g1);
    trainer_free(&t);
}

static void test_gradcheck_conv_pool_dense(void **state) { check_gradients(&conv_model, 3); }
static void test_gradcheck_lstm(void **state) { check_gradients(&lstm_model, 3); }
static void test_gradcheck_autoencoder(void **state) { check_gradients(&ae_model, 4); }

static void check_training_lowers_loss(const ModelSpec *base, float lr, int steps)
{
    ModelSpec m = *base;
    m.opt.lr = lr;
    Trainer t;
    char err[512];
    assert_int_equal(trainer_init(&t, &m, 8, 1, 3, err, sizeof err), 0);
    double first = trainer_step(&t, 0, NULL), last = first;
    for (int s = 1; s < steps; s++)
        last = trainer_step(&t, s, NULL);
    if (!(last < 0.8 * first))
        fail_msg("%s: loss %.6g -> %.6g after %d steps", m.name, first, last, steps);
    trainer_free(&t);
}

static void test_training_lowers_loss(void **state)
{
    check_training_lowers_loss(&conv_model, 2.0f, 200);
    check_training_lowers_loss(&lstm_model, 0.02f, 40);
    check_training_lowers_loss(&ae_model, 0.01f, 40);
}

static void test_shape_errors_name_the_layer(void **state)
{
    LayerSpec bad[] = {
        {.kind = LAYER_DENSE, .name = "fc", .input = -1, .act = ACT_RELU, .u.dense = {.units = 10}},
        {.kind = LAYER_CONV2D, .name = "conv3", .input = 0, .act = ACT_RELU,
         .u.conv = {.filters = 4, .kh = 3, .kw = 3, .stride = 1, .pad = PAD_SAME, .groups = 1}},
    };
    ModelSpec m = {.name = "bad", .input = {.rank = 1, .d = {5}}, .layers = bad, .nlayers = 2, .loss = LOSS_MSE,
                   .data = DATA_SEQUENCE};
    Plan p;
    char err[256];
    assert_int_equal(plan_build(&m, 2, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "layer 2 'conv3'"));
    assert_non_null(strstr(err, "(C,H,W)"));

    LayerSpec groups[] = {{.kind = LAYER_CONV2D, .name = "g", .input = -1, .act = ACT_RELU,
                           .u.conv = {.filters = 4, .kh = 1, .kw = 1, .stride = 1, .pad = PAD_SAME, .groups = 3}}};
    ModelSpec mg = {.name = "bad", .input = {.rank = 3, .d = {6, 4, 4}}, .layers = groups, .nlayers = 1,
                    .loss = LOSS_MSE, .data = DATA_SEQUENCE};
    assert_int_equal(plan_build(&mg, 2, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "groups 3"));

    assert_int_equal(plan_build(zoo_find("p1b1"), 0, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "batch 0"));
    /* a batch whose sizes no machine could hold is refused by the size arithmetic */
    assert_int_equal(plan_build(zoo_find("p1b1"), 2000000000, &p, err, sizeof err), -1);
}

static void test_memory_refused_before_allocating(void **state)
{
    Trainer t;
    char err[512];
    /* 500,000 samples of P1B1 need ~240 GiB of activations */
    assert_int_equal(trainer_init(&t, zoo_find("p1b1"), 500000, 1, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "needs"));
    assert_non_null(strstr(err, "GiB"));
    assert_non_null(strstr(err, "available"));
}

static void test_plan_memory_is_what_run_allocates(void **state)
{
    const ModelSpec *m = zoo_find("alexnet-owt");
    Plan p;
    char err[256];
    assert_int_equal(plan_build(m, 4, &p, err, sizeof err), 0);
    /* the optimizer is one op over the whole parameter buffer; grads mirror params */
    assert_int_equal(p.arena_bytes[ARENA_GRAD], p.arena_bytes[ARENA_PARAM]);
    assert_int_equal(p.ops[p.nops - 1].desc.kind, OP_SGD);
    assert_int_equal(p.ops[p.nops - 1].desc.u.update.count * sizeof(float), p.arena_bytes[ARENA_PARAM]);
    assert_true(p.param_count * sizeof(float) <= p.arena_bytes[ARENA_PARAM]);
    double need = trainer_bytes_needed(&p, 1);
    assert_true(need >= (double)plan_total_bytes(&p));
    assert_true(need < (double)plan_total_bytes(&p) + ARENA_COUNT * 64);
    plan_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zoo_parameter_counts),
        cmocka_unit_test(test_alexnet_shapes),
        cmocka_unit_test(test_gradcheck_conv_pool_dense),
        cmocka_unit_test(test_gradcheck_lstm),
        cmocka_unit_test(test_gradcheck_autoencoder),
        cmocka_unit_test(test_training_lowers_loss),
        cmocka_unit_test(test_shape_errors_name_the_layer),
        cmocka_unit_test(test_memory_refused_before_allocating),
        cmocka_unit_test(test_plan_memory_is_what_run_allocates),
    };
    return cmocka_run_group_tests_name("models", tests, NULL, NULL);
}
