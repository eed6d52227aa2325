/* models/zoo.c — the built-in models, exactly as ../shared/reference/MODELS.md specifies
 * them (sections cited per model). Parameter counts are checked by tests/test_models.c.
 */
#include <stdio.h>
#include <string.h>

#include "models/model.h"

#define NLAYERS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* CANDLE P1B1, version B (commit 3ebb850, MODELS.md §1.2): dense autoencoder
 * 60483 -> 2000 -> 600 -> 2000 -> 60483, ReLU hidden, linear output, MSE, RMSprop
 * (lr 0.001, rho 0.9, eps 1e-8), batch 60, glorot_uniform weights, zero biases.
 * 244,397,083 parameters. */
#define DENSE(nm, in, n, a) \
    {.kind = LAYER_DENSE, .name = nm, .input = in, .act = a, .init = INIT_GLOROT_UNIFORM, .u.dense = {.units = n}}
static const LayerSpec p1b1_layers[] = {
    DENSE("dense1", -1, 2000, ACT_RELU),
    DENSE("dense2", 0, 600, ACT_RELU),
    DENSE("dense3", 1, 2000, ACT_RELU),
    DENSE("output", 2, 60483, ACTIVATION_NONE),
};

/* convnet-benchmarks AlexNet "One weird trick" (MODELS.md §3.1): 227x227x3, batch 128.
 * Every conv and FC layer has bias + ReLU, including the 1000-way output (the
 * benchmark's quirk, kept). The benchmark computes gradients without an update; dlperf
 * trains, so a plain SGD update (lr 0.01) is added. The benchmark's N(0, 0.1) weight
 * initialisation diverges once weights are updated; He-normal is used instead (time per
 * step does not depend on the values). 61,100,840 parameters. */
#define CONV(nm, in, k, r, st, pd) \
    {.kind = LAYER_CONV2D, .name = nm, .input = in, .act = ACT_RELU, .init = INIT_HE_NORMAL, \
     .u.conv = {.filters = k, .kh = r, .kw = r, .stride = st, .pad = pd, .groups = 1}}
#define MAXPOOL(nm, in, w, st, pd) \
    {.kind = LAYER_POOL2D, .name = nm, .input = in, .act = ACTIVATION_NONE, \
     .u.pool = {.kind = POOL_MAX, .win = w, .stride = st, .pad = pd}}
#define FC(nm, in, n) \
    {.kind = LAYER_DENSE, .name = nm, .input = in, .act = ACT_RELU, .init = INIT_HE_NORMAL, .u.dense = {.units = n}}
static const LayerSpec alexnet_owt_layers[] = {
    CONV("conv1", -1, 64, 11, 4, PAD_VALID),
    MAXPOOL("pool1", 0, 3, 2, PAD_VALID),
    CONV("conv2", 1, 192, 5, 1, PAD_SAME),
    MAXPOOL("pool2", 2, 3, 2, PAD_VALID),
    CONV("conv3", 3, 384, 3, 1, PAD_SAME),
    CONV("conv4", 4, 256, 3, 1, PAD_SAME),
    CONV("conv5", 5, 256, 3, 1, PAD_SAME),
    MAXPOOL("pool5", 6, 3, 2, PAD_VALID),
    FC("fc6", 7, 4096),
    FC("fc7", 8, 4096),
    FC("fc8", 9, 1000),
};

/* rnn-benchmarks basic_lstm (MODELS.md §4): `rnn.py -n basic_lstm -b 128 -l 1024 -s 30`.
 * One BasicLSTMCell layer (forget bias 1.0), input size = hidden = 1024, 30 steps, loss =
 * summed squared error of h at the last step against a U[0,1) target, SGD lr 0.01.
 * Weights glorot_uniform (TF's default initializer for the cell's matrix is assumed).
 * 4H(2H) + 4H = 8,392,704 parameters. */
static const LayerSpec basic_lstm_layers[] = {
    {.kind = LAYER_LSTM, .name = "lstm", .input = -1, .act = ACTIVATION_NONE, .init = INIT_GLOROT_UNIFORM,
     .u.lstm = {.hidden = 1024, .forget_bias = 1.0f, .last_only = true}},
};

static const ModelSpec zoo[] = {
    {.name = "p1b1",
     .title = "CANDLE P1B1 gene-expression autoencoder (version B)",
     .source = "ECP-CANDLE/Benchmarks Pilot1/P1B1 @3ebb850; MODELS.md 1.2",
     .input = {.rank = 1, .d = {60483}},
     .layers = p1b1_layers,
     .nlayers = NLAYERS(p1b1_layers),
     .loss = LOSS_MSE,
     .opt = {.kind = OPT_RMSPROP, .lr = 0.001f, .rho = 0.9f, .eps = 1e-8f},
     .data = DATA_EXPRESSION,
     .default_batch = 60},
    {.name = "alexnet-owt",
     .title = "AlexNet 'one weird trick' (convnet-benchmarks)",
     .source = "soumith/convnet-benchmarks tensorflow/benchmark_alexnet.py; MODELS.md 3.1",
     .input = {.rank = 3, .d = {3, 227, 227}},
     .layers = alexnet_owt_layers,
     .nlayers = NLAYERS(alexnet_owt_layers),
     .loss = LOSS_SOFTMAX_XENT,
     .classes = 1000,
     .opt = {.kind = OPT_SGD, .lr = 0.01f},
     .data = DATA_IMAGES,
     .default_batch = 128},
    {.name = "basic-lstm",
     .title = "rnn-benchmarks basic_lstm, hidden 1024, 30 steps",
     .source = "glample/rnn-benchmarks tensorflow/rnn.py; MODELS.md 4",
     .input = {.rank = 2, .d = {30, 1024}},
     .layers = basic_lstm_layers,
     .nlayers = NLAYERS(basic_lstm_layers),
     .loss = LOSS_SSE,
     .opt = {.kind = OPT_SGD, .lr = 0.01f},
     .data = DATA_SEQUENCE,
     .default_batch = 128},
};

int zoo_count(void) { return NLAYERS(zoo); }

const ModelSpec *zoo_get(int i) { return i >= 0 && i < zoo_count() ? &zoo[i] : NULL; }

const ModelSpec *zoo_find(const char *name)
{
    for (int i = 0; i < zoo_count(); i++)
        if (strcmp(zoo[i].name, name) == 0)
            return &zoo[i];
    return NULL;
}

void zoo_names(char *out, int n)
{
    int used = 0;
    out[0] = '\0';
    for (int i = 0; i < zoo_count() && used < n; i++)
        used += snprintf(out + used, (size_t)(n - used), "%s%s", i ? ", " : "", zoo[i].name);
}
