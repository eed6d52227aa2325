/* models/zoo.c — the built-in models, exactly as ../shared/reference/MODELS.md specifies
 * them (sections cited per model), built once on first use. Parameter counts and forward
 * multiply-adds are checked against MODELS.md by tests/test_models.c.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/zoo_build.h"

/* ---------------------------------------------------------------------------------------
 * CANDLE (suite, seed 000)
 * ------------------------------------------------------------------------------------- */

/* P1B1 version B (commit 3ebb850, MODELS.md 1.2): 60483 -> 2000 -> 600 -> 2000 -> 60483,
 * ReLU, linear output, MSE, RMSprop (lr 0.001, rho 0.9, eps 1e-8), batch 60, 1 epoch,
 * glorot_uniform, zero biases. 244,397,083 parameters. */
static void build_p1b1(Builder *b, ModelSpec *m)
{
    int x = zb_dense(b, "dense1", IN, 2000, ACT_RELU);
    x = zb_dense(b, "dense2", x, 600, ACT_RELU);
    x = zb_dense(b, "dense3", x, 2000, ACT_RELU);
    zb_dense(b, "output", x, 60483, NOACT);
    *m = (ModelSpec){.name = "p1b1", .title = "CANDLE P1B1 gene-expression autoencoder (version B)",
                     .source = "ECP-CANDLE/Benchmarks Pilot1/P1B1 @3ebb850; MODELS.md 1.2", .family = "AE",
                     .input = {1, {60483}}, .loss = LOSS_MSE, .autoencoder = true,
                     .opt = {.kind = OPT_RMSPROP, .lr = 0.001f, .rho = 0.9f, .eps = 1e-8f},
                     .data = DATA_EXPRESSION, .default_batch = 60, .epochs = 1, .train_samples = 2700,
                     .test_samples = 1000,
                     .origin = "suite", .demo = true};
}

/* P1B1 release version D (1cff3c8 ... HEAD, MODELS.md 1.2): 2000-600 with a 2-unit
 * latent code, ReLU (latent too), sigmoid output, MSE, Adam 0.001, batch 100, 100 epochs.
 * 244,400,085 parameters. */
static void build_p1b1_d(Builder *b, ModelSpec *m)
{
    int x = zb_dense(b, "dense1", IN, 2000, ACT_RELU);
    x = zb_dense(b, "dense2", x, 600, ACT_RELU);
    x = zb_dense(b, "latent", x, 2, ACT_RELU);
    x = zb_dense(b, "dense3", x, 600, ACT_RELU);
    x = zb_dense(b, "dense4", x, 2000, ACT_RELU);
    zb_dense(b, "output", x, 60483, ACT_SIGMOID);
    *m = (ModelSpec){.name = "p1b1-d", .title = "CANDLE P1B1 autoencoder, release version D (latent 2)",
                     .source = "ECP-CANDLE/Benchmarks Pilot1/P1B1 release; MODELS.md 1.2", .family = "AE",
                     .input = {1, {60483}}, .loss = LOSS_MSE, .autoencoder = true,
                     .opt = {.kind = OPT_ADAM, .lr = 0.001f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f},
                     .data = DATA_EXPRESSION, .default_batch = 100, .epochs = 100, .train_samples = 2700,
                     .test_samples = 1000,
                     .origin = "suite"};
}

/* P3B1 (MODELS.md 2.2): input 400 -> shared dense 1200 (ReLU) -> per task dense 1200,
 * dense 1200 (ReLU) -> softmax over 13 / 2 / 4 classes; SGD 0.01, batch 10, 10 epochs,
 * tasks trained one epoch each in turn. 9,151,219 unique parameters. */
static void build_p3b1(Builder *b, ModelSpec *m)
{
    static const char *const task[] = {"primary_site", "laterality", "grade"};
    static const int classes[] = {13, 2, 4};
    /* rows of every fold's training files and fold 0's test files (MODELS.md 2.1) */
    static const int train_rows[] = {3900, 600, 1200}, test_rows[] = {99, 86, 68};
    int shared = zb_dense(b, "shared", IN, 1200, ACT_RELU);
    *m = (ModelSpec){.name = "p3b1", .title = "CANDLE P3B1 multi-task classifier of pathology reports",
                     .source = "ECP-CANDLE/Benchmarks Pilot3/P3B1 (2017); MODELS.md 2.2", .family = "MLP",
                     .input = {1, {400}}, .loss = LOSS_SOFTMAX_XENT, .classes = 13,
                     .opt = {.kind = OPT_SGD, .lr = 0.01f}, .data = DATA_CLASSES, .default_batch = 10,
                     .epochs = 10, .train_samples = 3900, .nheads = 3, .origin = "suite"};
    for (int t = 0; t < 3; t++) {
        char name[LAYER_NAME_MAX];
        snprintf(name, sizeof name, "%s_1", task[t]);
        int x = zb_dense(b, name, shared, 1200, ACT_RELU);
        snprintf(name, sizeof name, "%s_2", task[t]);
        x = zb_dense(b, name, x, 1200, ACT_RELU);
        snprintf(name, sizeof name, "%s_out", task[t]);
        x = zb_dense(b, name, x, classes[t], NOACT);
        m->heads[t] = (HeadSpec){.layer = x, .classes = classes[t], .name = task[t], .train_samples = train_rows[t],
                                 .test_samples = test_rows[t]};
    }
}

/* ---------------------------------------------------------------------------------------
 * convnet-benchmarks (suite): every conv and FC layer has bias + ReLU, including the
 * 1000-way output (the benchmark's quirk, kept). The benchmark computes gradients without
 * an update; dlperf trains with plain SGD (lr 0.01). Its N(0, 0.1) initialisation
 * diverges once weights are updated; He-normal is used (time does not depend on values).
 * ------------------------------------------------------------------------------------- */

static ModelSpec convnet_spec(const char *name, const char *title, const char *source, int hw, int batch)
{
    ModelSpec m = {.title = title, .source = source, .family = "CNN", .origin = "suite", .input = {3, {3, hw, hw}},
                   .loss = LOSS_SOFTMAX_XENT, .classes = 1000, .opt = {.kind = OPT_SGD, .lr = 0.01f},
                   .data = DATA_IMAGES, .default_batch = batch};
    snprintf(m.name, sizeof m.name, "%s", name);
    return m;
}

/* The four convnet-benchmarks models: their output layer keeps the ReLU (quirk). */
static ModelSpec convnet_benchmark_spec(const char *name, const char *title, const char *source, int hw, int batch)
{
    ModelSpec m = convnet_spec(name, title, source, hw, batch);
    m.quirk = "ReLU on the 1000-way output layer, as convnet-benchmarks' scripts have it";
    return m;
}

/* AlexNet "one weird trick" (MODELS.md 3.1): 227x227, batch 128. 61,100,840 parameters. */
static void build_alexnet_owt(Builder *b, ModelSpec *m)
{
    b->init = INIT_HE_NORMAL;
    int x = zb_conv(b, "conv1", IN, 64, 11, 4, PAD_VALID, ACT_RELU);
    x = zb_pool(b, "pool1", x, POOL_MAX, 3, 2, PAD_VALID);
    x = zb_conv(b, "conv2", x, 192, 5, 1, PAD_SAME, ACT_RELU);
    x = zb_pool(b, "pool2", x, POOL_MAX, 3, 2, PAD_VALID);
    x = zb_conv(b, "conv3", x, 384, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_conv(b, "conv4", x, 256, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_conv(b, "conv5", x, 256, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_pool(b, "pool5", x, POOL_MAX, 3, 2, PAD_VALID);
    x = zb_dense(b, "fc6", x, 4096, ACT_RELU);
    x = zb_dense(b, "fc7", x, 4096, ACT_RELU);
    zb_dense(b, "fc8", x, 1000, ACT_RELU);
    *m = convnet_benchmark_spec("alexnet-owt", "AlexNet 'one weird trick' (convnet-benchmarks)",
                      "soumith/convnet-benchmarks tensorflow/benchmark_alexnet.py; MODELS.md 3.1", 227, 128);
    m->demo = true;
}

/* Overfeat "fast" (MODELS.md 3.2): 231x231, batch 128. 145,920,872 parameters. */
static void build_overfeat(Builder *b, ModelSpec *m)
{
    b->init = INIT_HE_NORMAL;
    int x = zb_conv(b, "conv1", IN, 96, 11, 4, PAD_VALID, ACT_RELU);
    x = zb_pool(b, "pool1", x, POOL_MAX, 2, 2, PAD_VALID);
    x = zb_conv(b, "conv2", x, 256, 5, 1, PAD_VALID, ACT_RELU);
    x = zb_pool(b, "pool2", x, POOL_MAX, 2, 2, PAD_VALID);
    x = zb_conv(b, "conv3", x, 512, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_conv(b, "conv4", x, 1024, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_conv(b, "conv5", x, 1024, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_pool(b, "pool5", x, POOL_MAX, 2, 2, PAD_VALID);
    x = zb_dense(b, "fc6", x, 3072, ACT_RELU);
    x = zb_dense(b, "fc7", x, 4096, ACT_RELU);
    zb_dense(b, "fc8", x, 1000, ACT_RELU);
    *m = convnet_benchmark_spec("overfeat", "Overfeat 'fast' (convnet-benchmarks)",
                      "soumith/convnet-benchmarks tensorflow/benchmark_overfeat.py; MODELS.md 3.2", 231, 128);
}

/* VGG "model A" (VGG-11) as convnet-benchmarks builds it (MODELS.md 3.3): all 3x3 SAME
 * convs, 2x2/2 pools, batch 64. 132,863,336 parameters. */
static void build_vgg11(Builder *b, ModelSpec *m)
{
    static const int plan[] = {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};
    b->init = INIT_HE_NORMAL;
    int x = IN, conv = 0, pool = 0;
    for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++) {
        char name[16];
        if (plan[i]) {
            snprintf(name, sizeof name, "conv%d", ++conv);
            x = zb_conv(b, name, x, plan[i], 3, 1, PAD_SAME, ACT_RELU);
        } else {
            snprintf(name, sizeof name, "pool%d", ++pool);
            x = zb_pool(b, name, x, POOL_MAX, 2, 2, PAD_VALID);
        }
    }
    x = zb_dense(b, "fc6", x, 4096, ACT_RELU);
    x = zb_dense(b, "fc7", x, 4096, ACT_RELU);
    zb_dense(b, "fc8", x, 1000, ACT_RELU);
    *m = convnet_benchmark_spec("vgg11", "VGG model A (VGG-11), convnet-benchmarks",
                      "soumith/convnet-benchmarks tensorflow/benchmark_vgg.py; MODELS.md 3.3", 224, 64);
}

/* One inception module (MODELS.md 3.4): four branches concatenated in the order
 * [1x1, 3x3, 5x5, pool-proj]; every conv ReLU and TF SAME. */
static int inception(Builder *b, const char *name, int in, int c1, int r3, int c3, int r5, int c5, int pp)
{
    char n[LAYER_NAME_MAX];
    int br[4];
    snprintf(n, sizeof n, "%s_1x1", name);
    br[0] = zb_conv(b, n, in, c1, 1, 1, PAD_SAME, ACT_RELU);
    snprintf(n, sizeof n, "%s_3x3_reduce", name);
    br[1] = zb_conv(b, n, in, r3, 1, 1, PAD_SAME, ACT_RELU);
    snprintf(n, sizeof n, "%s_3x3", name);
    br[1] = zb_conv(b, n, br[1], c3, 3, 1, PAD_SAME, ACT_RELU);
    snprintf(n, sizeof n, "%s_5x5_reduce", name);
    br[2] = zb_conv(b, n, in, r5, 1, 1, PAD_SAME, ACT_RELU);
    snprintf(n, sizeof n, "%s_5x5", name);
    br[2] = zb_conv(b, n, br[2], c5, 5, 1, PAD_SAME, ACT_RELU);
    snprintf(n, sizeof n, "%s_pool", name);
    br[3] = zb_pool(b, n, in, POOL_MAX, 3, 1, PAD_SAME);
    snprintf(n, sizeof n, "%s_pool_proj", name);
    br[3] = zb_conv(b, n, br[3], pp, 1, 1, PAD_SAME, ACT_RELU);
    snprintf(n, sizeof n, "%s_output", name);
    return zb_concat(b, n, br, 4);
}

/* GoogLeNet v1 as convnet-benchmarks builds it (MODELS.md 3.4): no LRN, no auxiliary
 * classifiers, no dropout; batch 128. 6,998,552 parameters (= BVLC GoogLeNet without the
 * auxiliary heads), 1.583 G multiply-adds per image. */
static void build_googlenet(Builder *b, ModelSpec *m)
{
    b->init = INIT_HE_NORMAL;
    int x = zb_conv(b, "conv1", IN, 64, 7, 2, PAD_SAME, ACT_RELU);
    x = zb_pool(b, "pool1", x, POOL_MAX, 3, 2, PAD_SAME);
    x = zb_conv(b, "conv2", x, 64, 1, 1, PAD_SAME, ACT_RELU);
    x = zb_conv(b, "conv3", x, 192, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_pool(b, "pool3", x, POOL_MAX, 3, 2, PAD_SAME);
    x = inception(b, "inception_3a", x, 64, 96, 128, 16, 32, 32);
    x = inception(b, "inception_3b", x, 128, 128, 192, 32, 96, 64);
    x = zb_pool(b, "pool4", x, POOL_MAX, 3, 2, PAD_SAME);
    x = inception(b, "inception_4a", x, 192, 96, 208, 16, 48, 64);
    x = inception(b, "inception_4b", x, 160, 112, 224, 24, 64, 64);
    x = inception(b, "inception_4c", x, 128, 128, 256, 24, 64, 64);
    x = inception(b, "inception_4d", x, 112, 144, 288, 32, 64, 64);
    x = inception(b, "inception_4e", x, 256, 160, 320, 32, 128, 128);
    x = zb_pool(b, "pool5", x, POOL_MAX, 3, 2, PAD_SAME);
    x = inception(b, "inception_5a", x, 256, 160, 320, 32, 128, 128);
    x = inception(b, "inception_5b", x, 384, 192, 384, 48, 128, 128);
    x = zb_pool(b, "pool6", x, POOL_AVG, 7, 1, PAD_VALID);
    zb_dense(b, "fc", x, 1000, ACT_RELU);
    *m = convnet_benchmark_spec("googlenet", "GoogLeNet v1 (convnet-benchmarks; Cookbook's GoogleNet)",
                      "soumith/convnet-benchmarks tensorflow/benchmark_googlenet.py; MODELS.md 3.4", 224, 128);
}

/* ---------------------------------------------------------------------------------------
 * The Cookbook's Caffe models (seed 003; counts in MODELS.md 7.2): Caffe deploy
 * definitions, conv padding explicit, pooling with Caffe's ceil rounding, softmax output.
 * ------------------------------------------------------------------------------------- */

static ModelSpec caffe_spec(const char *name, const char *title, const char *source, int hw, int batch)
{
    ModelSpec m = convnet_spec(name, title, source, hw, batch);
    m.origin = "cookbook";
    return m;
}

/* BVLC AlexNet with groups 2 in conv2/4/5 and LRN (DLBS bvlc_alexnet @ 2017-11, the
 * Cookbook's AlexNet): 60,965,224 parameters, 0.724 G multiply-adds. Dropout 0.5 after
 * fc6 and fc7 (train_val). */
static void build_alexnet(Builder *b, ModelSpec *m)
{
    b->init = INIT_HE_NORMAL;
    int x = zb_conv_pad(b, "conv1", IN, 96, 11, 4, 0, 1, true, ACT_RELU);
    x = zb_lrn(b, "norm1", x, 5, 1e-4f, 0.75f, 1.0f);
    x = zb_pool_caffe(b, "pool1", x, POOL_MAX, 3, 2, 0);
    x = zb_conv_pad(b, "conv2", x, 256, 5, 1, 2, 2, true, ACT_RELU);
    x = zb_lrn(b, "norm2", x, 5, 1e-4f, 0.75f, 1.0f);
    x = zb_pool_caffe(b, "pool2", x, POOL_MAX, 3, 2, 0);
    x = zb_conv_pad(b, "conv3", x, 384, 3, 1, 1, 1, true, ACT_RELU);
    x = zb_conv_pad(b, "conv4", x, 384, 3, 1, 1, 2, true, ACT_RELU);
    x = zb_conv_pad(b, "conv5", x, 256, 3, 1, 1, 2, true, ACT_RELU);
    x = zb_pool_caffe(b, "pool5", x, POOL_MAX, 3, 2, 0);
    x = zb_dense(b, "fc6", x, 4096, ACT_RELU);
    x = zb_dropout(b, "drop6", x, 0.5f);
    x = zb_dense(b, "fc7", x, 4096, ACT_RELU);
    x = zb_dropout(b, "drop7", x, 0.5f);
    zb_dense(b, "fc8", x, 1000, NOACT);
    *m = caffe_spec("alexnet", "AlexNet, BVLC grouped with LRN (the Cookbook's AlexNet)",
                    "BVLC/caffe models/bvlc_alexnet, DLBS @ 2017-11; MODELS.md 7.2", 227, 128);
}

/* VGG-16 (D) and VGG-19 (E), Simonyan & Zisserman / Caffe VGG_ILSVRC: 3x3 pad-1 convs,
 * 2x2/2 pools, fc 4096 (dropout 0.5) x2, fc 1000. 138,357,544 and 143,667,240 parameters. */
static void build_vgg(Builder *b, ModelSpec *m, const int *convs_per_stage, const char *name, const char *title)
{
    static const int width[] = {64, 128, 256, 512, 512};
    b->init = INIT_HE_NORMAL;
    int x = IN;
    for (int s = 0; s < 5; s++) {
        for (int i = 0; i < convs_per_stage[s]; i++) {
            char n[32];
            snprintf(n, sizeof n, "conv%d_%d", s + 1, i + 1);
            x = zb_conv_pad(b, n, x, width[s], 3, 1, 1, 1, true, ACT_RELU);
        }
        char n[16];
        snprintf(n, sizeof n, "pool%d", s + 1);
        x = zb_pool_caffe(b, n, x, POOL_MAX, 2, 2, 0);
    }
    x = zb_dense(b, "fc6", x, 4096, ACT_RELU);
    x = zb_dropout(b, "drop6", x, 0.5f);
    x = zb_dense(b, "fc7", x, 4096, ACT_RELU);
    x = zb_dropout(b, "drop7", x, 0.5f);
    zb_dense(b, "fc8", x, 1000, NOACT);
    *m = caffe_spec(name, title, "Simonyan & Zisserman 2014, Caffe VGG_ILSVRC deploy; MODELS.md 7.1/7.2", 224, 64);
}

static void build_vgg16(Builder *b, ModelSpec *m)
{
    static const int stages[] = {2, 2, 3, 3, 3};
    build_vgg(b, m, stages, "vgg16", "VGG-16 (model D)");
}

static void build_vgg19(Builder *b, ModelSpec *m)
{
    static const int stages[] = {2, 2, 4, 4, 4};
    build_vgg(b, m, stages, "vgg19", "VGG-19 (model E)");
}

/* ---------------------------------------------------------------------------------------
 * ResNets. Bottleneck blocks [1x1, 3x3, 1x1 (x4 width)] with batch norm after every conv;
 * stride 2 on the first 1x1 of the first block of stages 3-5 and on its 1x1 projection
 * shortcut (ResNet v1 as in Keras applications and Kaiming He's prototxts).
 * ------------------------------------------------------------------------------------- */

typedef struct {
    bool conv_bias;      /* Keras: every conv has a bias; Caffe: none ... */
    bool conv1_bias;     /* ... except conv1 in ResNet-50's prototxt (not in 101/152's) */
    float bn_eps, bn_momentum;
} ResNetStyle;

static int conv_bn(Builder *b, const ResNetStyle *st, const char *conv, const char *bn, int in, int filters, int k,
                   int stride, int act)
{
    int x = zb_conv_pad(b, conv, in, filters, k, stride, k / 2, 1, st->conv_bias, NOACT);
    return zb_bn(b, bn, x, st->bn_eps, st->bn_momentum, act);
}

/* One bottleneck block; `stage`/`block` give Keras/Caffe names like res3a_branch2b. */
static int bottleneck(Builder *b, const ResNetStyle *st, int in, int stage, char block, int width, int stride,
                      bool project)
{
    char c[LAYER_NAME_MAX], n[LAYER_NAME_MAX];
    int shortcut = in;
    if (project) {
        snprintf(c, sizeof c, "res%d%c_branch1", stage, block);
        snprintf(n, sizeof n, "bn%d%c_branch1", stage, block);
        shortcut = conv_bn(b, st, c, n, in, 4 * width, 1, stride, NOACT);
    }
    snprintf(c, sizeof c, "res%d%c_branch2a", stage, block);
    snprintf(n, sizeof n, "bn%d%c_branch2a", stage, block);
    int x = conv_bn(b, st, c, n, in, width, 1, stride, ACT_RELU);
    snprintf(c, sizeof c, "res%d%c_branch2b", stage, block);
    snprintf(n, sizeof n, "bn%d%c_branch2b", stage, block);
    x = conv_bn(b, st, c, n, x, width, 3, 1, ACT_RELU);
    snprintf(c, sizeof c, "res%d%c_branch2c", stage, block);
    snprintf(n, sizeof n, "bn%d%c_branch2c", stage, block);
    x = conv_bn(b, st, c, n, x, 4 * width, 1, 1, NOACT);
    snprintf(n, sizeof n, "res%d%c", stage, block);
    return zb_add2(b, n, x, shortcut, ACT_RELU);
}

static void build_resnet(Builder *b, const ResNetStyle *st, const int blocks[4])
{
    b->init = INIT_HE_NORMAL;
    int x = zb_conv_pad(b, "conv1", IN, 64, 7, 2, 3, 1, st->conv_bias || st->conv1_bias, NOACT);
    x = zb_bn(b, "bn_conv1", x, st->bn_eps, st->bn_momentum, ACT_RELU);
    /* Keras pads by 1 before a VALID 3x3/2 pool (ZeroPadding: after the ReLU, a padded 0
     * never wins a max), Caffe rounds up instead: both give 56x56 */
    x = st->conv_bias ? zb_pool_pad(b, "pool1", x, POOL_MAX, 3, 2, 1) : zb_pool_caffe(b, "pool1", x, POOL_MAX, 3, 2, 0);
    for (int s = 0; s < 4; s++) {
        int width = 64 << s;
        for (int i = 0; i < blocks[s]; i++) {
            /* Caffe names blocks beyond 'c' in deep stages b1, b2, ...; letters serve here */
            char block = (char)(i < 26 ? 'a' + i : 'A' + i - 26);
            x = bottleneck(b, st, x, s + 2, block, width, i == 0 && s > 0 ? 2 : 1, i == 0);
        }
    }
    x = zb_global_pool(b, "pool5", x, POOL_AVG);
    zb_dense(b, "fc1000", x, 1000, NOACT);
}

/* Keras applications ResNet50 (MODELS.md 5.1) with the Horovod example's training
 * configuration (5.2): batch 32 per worker, SGD momentum 0.9, lr 0.0125 per worker,
 * L2 5e-5 on conv/dense kernels, BN momentum 0.9 / eps 1e-5, 5 warm-up epochs then x0.1
 * at 30, 60, 80 of 90 epochs. 25,583,592 trainable + 53,120 BN statistics = 25,636,712. */
static void build_resnet50(Builder *b, ModelSpec *m)
{
    static const int blocks[] = {3, 4, 6, 3};
    ResNetStyle st = {.conv_bias = true, .conv1_bias = true, .bn_eps = 1e-5f, .bn_momentum = 0.9f};
    build_resnet(b, &st, blocks);
    *m = convnet_spec("resnet50", "ResNet-50, Keras applications, Horovod training configuration",
                      "keras-applications resnet50.py; horovod keras_imagenet_resnet50.py; MODELS.md 5", 224, 32);
    m->opt = (OptSpec){.kind = OPT_MOMENTUM, .lr = 0.0125f, .momentum = 0.9f, .weight_decay = 5e-5f,
                       .schedule = {.kind = SCHED_WARMUP_STEP, .warmup_epochs = 5, .warmup_from = 1.0f,
                                    .nboundaries = 3, .boundaries = {30, 60, 80}, .factors = {0.1f, 0.01f, 0.001f}}};
    m->epochs = 90;
    m->train_samples = 1281167;
}

/* Kaiming He's deploy prototxts (the Cookbook's ResNets, MODELS.md 7.2): BN + Scale after
 * every conv, no conv bias — except conv1 of ResNet-50 (the counts differ by those 64). */
static void build_resnet_caffe(Builder *b, ModelSpec *m, const int blocks[4], const char *name, const char *title)
{
    ResNetStyle st = {.conv_bias = false, .conv1_bias = blocks[2] == 6, .bn_eps = 1e-5f, .bn_momentum = 0.9f};
    build_resnet(b, &st, blocks);
    *m = caffe_spec(name, title, "KaimingHe/deep-residual-networks prototxt; MODELS.md 7.2", 224, 32);
    m->opt = (OptSpec){.kind = OPT_MOMENTUM, .lr = 0.1f, .momentum = 0.9f, .weight_decay = 5e-5f};
}

static void build_resnet50_caffe(Builder *b, ModelSpec *m)
{
    static const int blocks[] = {3, 4, 6, 3};
    build_resnet_caffe(b, m, blocks, "resnet50-caffe", "ResNet-50, Caffe deploy (the Cookbook's ResNet50)");
}

static void build_resnet101(Builder *b, ModelSpec *m)
{
    static const int blocks[] = {3, 4, 23, 3};
    build_resnet_caffe(b, m, blocks, "resnet101", "ResNet-101, Caffe deploy");
}

static void build_resnet152(Builder *b, ModelSpec *m)
{
    static const int blocks[] = {3, 8, 36, 3};
    build_resnet_caffe(b, m, blocks, "resnet152", "ResNet-152, Caffe deploy");
}

/* ---------------------------------------------------------------------------------------
 * rnn-benchmarks (suite, MODELS.md 4): `rnn.py -n {basic_lstm,lstm,rnn} -b 128 -l 1024
 * -s 30`: one recurrent layer, input size = hidden = 1024, 30 steps, loss = summed squared
 * error of h at the last step against a U[0,1) target, SGD 0.01; glorot_uniform weights
 * (TF's default initializer for the cell's matrix is assumed).
 * ------------------------------------------------------------------------------------- */

static void rnn_bench(Builder *b, ModelSpec *m, LayerKind kind, const char *name, const char *title)
{
    zb_lstm(b, kind == LAYER_LSTM ? "lstm" : "rnn", IN, kind, 1024, true);
    *m = (ModelSpec){.title = title, .source = "glample/rnn-benchmarks tensorflow/rnn.py; MODELS.md 4",
                     .family = "RNN", .origin = "suite", .input = {2, {30, 1024}}, .loss = LOSS_SSE,
                     .opt = {.kind = OPT_SGD, .lr = 0.01f}, .data = DATA_SEQUENCE, .default_batch = 128};
    snprintf(m->name, sizeof m->name, "%s", name);
}

/* BasicLSTMCell (forget bias 1.0): 4H(2H) + 4H = 8,392,704 parameters. */
static void build_basic_lstm(Builder *b, ModelSpec *m)
{
    rnn_bench(b, m, LAYER_LSTM, "basic-lstm", "rnn-benchmarks basic_lstm, hidden 1024, 30 steps");
    m->demo = true;
}

/* LSTMCell without peepholes or projection computes what BasicLSTMCell computes (TF's
 * defaults); kept as its own benchmark entry as rnn-benchmarks has it. */
static void build_lstm(Builder *b, ModelSpec *m)
{
    rnn_bench(b, m, LAYER_LSTM, "lstm", "rnn-benchmarks lstm (LSTMCell), hidden 1024, 30 steps");
}

/* BasicRNNCell: h = tanh([x, h] W + b), H(2H) + H = 2,098,176 parameters. */
static void build_rnn(Builder *b, ModelSpec *m)
{
    rnn_bench(b, m, LAYER_RNN, "rnn", "rnn-benchmarks rnn (BasicRNNCell, tanh), hidden 1024, 30 steps");
}

/* ---------------------------------------------------------------------------------------
 * The Cookbook's other two rows (seed 003)
 * ------------------------------------------------------------------------------------- */

/* "Eng Acoustic Model": DLBS defines it (eng_acoustic_model.py) as 5 fully connected
 * layers of 2048 with ReLU over a 540-value input (stacked speech features) and an
 * 8192-way softmax; the Cookbook's table calls it an RNN. 34,678,784 parameters,
 * 0.035 G multiply-adds per sample, as the table gives. */
static void build_eng_acoustic(Builder *b, ModelSpec *m)
{
    int x = IN;
    for (int i = 0; i < 5; i++) {
        char n[16];
        snprintf(n, sizeof n, "fc%d", i + 1);
        x = zb_dense(b, n, x, 2048, ACT_RELU);
    }
    zb_dense(b, "output", x, 8192, NOACT);
    *m = (ModelSpec){.name = "eng-acoustic", .title = "English acoustic model (Cookbook; DLBS: 5 x FC 2048)",
                     .source = "HewlettPackard/dlcookbook-dlbs eng_acoustic_model.py; seed 003 table",
                     .family = "MLP", .origin = "cookbook", .input = {1, {540}}, .loss = LOSS_SOFTMAX_XENT,
                     .classes = 8192, .opt = {.kind = OPT_SGD, .lr = 0.01f}, .data = DATA_IMAGES,
                     .default_batch = 256};
}

/* TextCNN: the Cookbook gives only its size (151,690 parameters, 0.009 GFLOPs); DLBS has
 * no definition. This is Kim's (2014) CNN-static constructed to that size exactly:
 * 64 tokens of frozen 96-wide word vectors (vocabulary 20,000, not counted, as pretrained
 * vectors are not trained), filter widths 3, 4, 5 with 128 filters each, max-over-time
 * pooling, dropout 0.5, 10 classes: 128*(3+4+5)*96 + 3*128 + 384*10 + 10 = 151,690
 * parameters and 8.97 M multiply-adds per sample. */
static void build_textcnn(Builder *b, ModelSpec *m)
{
    LayerSpec e = zb_layer(LAYER_EMBEDDING, IN, NOACT, "embedding");
    e.u.embed = (EmbeddingSpec){.vocab = 20000, .dim = 96, .frozen = true};
    int emb = zb_add(b, e);
    int branch[3];
    for (int i = 0; i < 3; i++) {
        int w = 3 + i;
        LayerSpec c = zb_layer(LAYER_CONV2D, emb, ACT_RELU, "conv%d", w);
        c.u.conv = (ConvSpec){.filters = 128, .kh = w, .kw = 96, .stride = 1, .pad = PAD_VALID, .groups = 1};
        int x = zb_add(b, c);
        char n[16];
        snprintf(n, sizeof n, "maxpool%d", w);
        branch[i] = zb_global_pool(b, n, x, POOL_MAX);
    }
    int x = zb_concat(b, "concat", branch, 3);
    x = zb_flatten(b, "flatten", x);
    x = zb_dropout(b, "dropout", x, 0.5f);
    zb_dense(b, "output", x, 10, NOACT);
    *m = (ModelSpec){.name = "textcnn", .title = "TextCNN (Kim 2014, CNN-static) at the Cookbook's size",
                     .source = "Kim 2014; size from seed 003's table (architecture constructed)", .family = "CNN",
                     .origin = "cookbook", .input = {1, {64}}, .input_ids = true, .loss = LOSS_SOFTMAX_XENT,
                     .classes = 10, .opt = {.kind = OPT_ADAM, .lr = 0.001f, .beta1 = 0.9f, .beta2 = 0.999f,
                                            .eps = 1e-7f},
                     .data = DATA_TOKENS, .default_batch = 50};
}

/* ---------------------------------------------------------------------------------------
 * Seed 002's algorithms (UFLDL tutorial exercises), on the real Fashion-MNIST in place of
 * MNIST / natural-image patches (not available offline).
 * ------------------------------------------------------------------------------------- */

/* Sparse autoencoder (UFLDL "self-taught learning" on 28x28 digits): 784 -> 196 sigmoid
 * -> 784 sigmoid; cost = sum of squared errors / (2m) + lambda/2 * sum W^2 (lambda 3e-3)
 * + beta * sum KL(rho || rho_hat) (rho 0.1, beta 3). UFLDL minimises with L-BFGS; dlperf
 * uses Adam. */
static void build_sparse_ae(Builder *b, ModelSpec *m)
{
    int x = zb_dense(b, "hidden", IN, 196, ACT_SIGMOID);
    LayerSpec sp = zb_layer(LAYER_SPARSITY, x, NOACT, "sparsity");
    sp.u.sparsity = (SparsitySpec){.rho = 0.1f, .beta = 3.0f};
    x = zb_add(b, sp);
    zb_dense(b, "output", x, 784, ACT_SIGMOID);
    *m = (ModelSpec){.name = "sparse-ae", .title = "Sparse autoencoder (UFLDL), Fashion-MNIST",
                     .source = "UFLDL tutorial sparseAutoencoderCost; seed 002", .family = "AE", .origin = "ufldl",
                     .input = {3, {1, 28, 28}}, .loss = LOSS_HALF_SSE_MEAN, .autoencoder = true,
                     .opt = {.kind = OPT_ADAM, .lr = 0.001f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                             .weight_decay = 1.5e-3f},
                     .data = DATA_FASHION_MNIST, .default_batch = 100, .epochs = 10, .train_samples = 60000,
                     .test_samples = 10000};
}

/* UFLDL CNN exercise (cnnTrain.m): 20 filters 9x9 (sigmoid), 2x2 mean pooling, softmax
 * over 10 classes; SGD with momentum 0.95, lr 0.1, minibatch 256, 3 epochs, weight decay
 * 1e-4. */
static void build_ufldl_cnn(Builder *b, ModelSpec *m)
{
    int x = zb_conv(b, "conv", IN, 20, 9, 1, PAD_VALID, ACT_SIGMOID);
    x = zb_pool(b, "meanpool", x, POOL_AVG, 2, 2, PAD_VALID);
    zb_dense(b, "softmax", x, 10, NOACT);
    *m = (ModelSpec){.name = "ufldl-cnn", .title = "UFLDL convolutional network (conv, mean pool, softmax)",
                     .source = "UFLDL tutorial cnnTrain.m; seed 002", .family = "CNN", .origin = "ufldl",
                     .input = {3, {1, 28, 28}}, .loss = LOSS_SOFTMAX_XENT, .classes = 10,
                     .opt = {.kind = OPT_MOMENTUM, .lr = 0.1f, .momentum = 0.95f, .weight_decay = 5e-5f},
                     .data = DATA_FASHION_MNIST, .default_batch = 256, .epochs = 3, .train_samples = 60000,
                     .test_samples = 10000};
}

/* FISTA sparse coding (seed 002): codes of 28x28 images over 256 random unit-norm atoms,
 * lambda 0.1; one step = one FISTA iteration, whose objective `run` reports. */
static void build_fista(Builder *b, ModelSpec *m)
{
    *m = (ModelSpec){.name = "fista", .title = "FISTA sparse coding, 256 atoms, lambda 0.1",
                     .source = "Beck & Teboulle 2009; UFLDL sparse coding; seed 002", .family = "SC",
                     .origin = "ufldl", .input = {3, {1, 28, 28}}, .algorithm = ALGO_FISTA, .loss = LOSS_SSE,
                     .fista = {.atoms = 256, .lambda = 0.1f}, .data = DATA_FASHION_MNIST, .default_batch = 256,
                     .autoencoder = true};
}

/* ---------------------------------------------------------------------------------------
 * Seed 004's hardware benchmark on Fashion-MNIST
 * ------------------------------------------------------------------------------------- */

/* "A simple model containing only convolution layers and pooling layers": four 3x3
 * convolutions in two pooled stages, and a 7x7 convolution as the classifier (no dense
 * layer). Adam 0.001, batch 64; the benchmark's reference run is 100 epochs. */
static void build_fmnist_convpool(Builder *b, ModelSpec *m)
{
    b->init = INIT_HE_NORMAL;
    int x = zb_conv(b, "conv1", IN, 32, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_conv(b, "conv2", x, 32, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_pool(b, "pool1", x, POOL_MAX, 2, 2, PAD_VALID);
    x = zb_conv(b, "conv3", x, 64, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_conv(b, "conv4", x, 64, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_pool(b, "pool2", x, POOL_MAX, 2, 2, PAD_VALID);
    b->init = INIT_GLOROT_UNIFORM;
    x = zb_conv(b, "classifier", x, 10, 7, 1, PAD_VALID, NOACT);
    zb_flatten(b, "flatten", x);
    *m = (ModelSpec){.name = "fmnist-convpool", .title = "Convolution-and-pooling-only model, Fashion-MNIST",
                     .source = "Aalto hardware benchmark (seed 004), Convolve2D", .family = "CNN",
                     .origin = "hwbench", .input = {3, {1, 28, 28}}, .loss = LOSS_SOFTMAX_XENT, .classes = 10,
                     .opt = {.kind = OPT_ADAM, .lr = 0.001f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-7f},
                     .data = DATA_FASHION_MNIST, .default_batch = 64, .epochs = 100, .train_samples = 60000,
                     .test_samples = 10000};
}

/* A small VGG-style network for Fashion-MNIST (seed 004's VGG-family model at this data
 * set's size): two stages of two 3x3 convolutions, dense 256, dropout 0.5, softmax. */
static void build_fmnist_vgg(Builder *b, ModelSpec *m)
{
    b->init = INIT_HE_NORMAL;
    int x = zb_conv(b, "conv1_1", IN, 32, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_conv(b, "conv1_2", x, 32, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_pool(b, "pool1", x, POOL_MAX, 2, 2, PAD_VALID);
    x = zb_conv(b, "conv2_1", x, 64, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_conv(b, "conv2_2", x, 64, 3, 1, PAD_SAME, ACT_RELU);
    x = zb_pool(b, "pool2", x, POOL_MAX, 2, 2, PAD_VALID);
    x = zb_dense(b, "fc1", x, 256, ACT_RELU);
    x = zb_dropout(b, "dropout", x, 0.5f);
    b->init = INIT_GLOROT_UNIFORM;
    zb_dense(b, "output", x, 10, NOACT);
    *m = (ModelSpec){.name = "fmnist-vgg", .title = "Small VGG-style model, Fashion-MNIST",
                     .source = "Aalto hardware benchmark (seed 004), VGG-style model A at 28x28", .family = "CNN",
                     .origin = "hwbench", .input = {3, {1, 28, 28}}, .loss = LOSS_SOFTMAX_XENT, .classes = 10,
                     .opt = {.kind = OPT_ADAM, .lr = 0.001f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-7f},
                     .data = DATA_FASHION_MNIST, .default_batch = 64, .epochs = 100, .train_samples = 60000,
                     .test_samples = 10000};
}

/* ---------------------------------------------------------------------------------------
 * Transformers
 * ------------------------------------------------------------------------------------- */

/* A GPT-2 decoder (Radford et al. 2019; HF GPT2LMHeadModel, llm.c): token and learned
 * position embeddings, `layers` pre-norm blocks x + attn(ln(x)), x + mlp(ln(x)) with a
 * causal attention of `heads` heads and a 4x GELU MLP, a final layer norm and the LM head
 * tied to the token table (no bias). Initialised as llm.c does: N(0, 0.02), the residual
 * projections N(0, 0.02 / sqrt(2 layers)); every 2-D tensor decayed (llm.c). The GELU is
 * the exact erf form (GPT-2 uses the tanh approximation: the same work). No dropout
 * (llm.c's configuration; HF's defaults are 0.1). Parameters, tied table once:
 * V D + P D + layers (12 D^2 + 13 D) + 2 D. */
static void build_gpt(Builder *b, int layers, int D, int heads, int context, int vocab)
{
    zb_transformer(b, &(TransformerShape){.family = TF_GPT2, .layers = layers, .width = D, .heads = heads,
                                          .ffn = 4 * D, .vocab = vocab, .positions = context, .act = ACT_GELU,
                                          .eps = 1e-5f, .init = 0.02f, .scale_residual = true, .causal = true});
}

/* GPT-2's trainer as llm.c runs it (train_gpt2.cu's GPT-2 124M reproduction): AdamW lr
 * 6e-4, betas 0.9 / 0.95, eps 1e-8, weight decay 0.1, gradients clipped to norm 1. */
static const OptSpec GPT2_ADAMW = {.kind = OPT_ADAMW, .lr = 6e-4f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f,
                                   .weight_decay = 0.1f, .clip_norm = 1.0f};

/* GPT-2 124M (HF "gpt2", llm.c's configuration): 12 layers, 768 wide, 12 heads, context
 * 1024, vocabulary 50257. 124,439,808 parameters (HF's count: the LM head tied, the
 * vocabulary unpadded; llm.c pads it to 50304 for its kernels: 124,475,904). */
static void build_gpt2(Builder *b, ModelSpec *m)
{
    build_gpt(b, 12, 768, 12, 1024, 50257);
    *m = (ModelSpec){.name = "gpt2", .title = "GPT-2 124M decoder (llm.c's configuration)",
                     .source = "Radford et al. 2019; HF gpt2 config; karpathy/llm.c train_gpt2", .family = "Transformer",
                     .origin = "transformer", .input = {2, {1024, 1}}, .input_ids = true,
                     .loss = LOSS_SOFTMAX_XENT, .classes = 50257, .opt = GPT2_ADAMW, .data = DATA_TOKENS,
                     .default_batch = 4};
}

/* GPT-2 medium (HF "gpt2-medium"): 24 layers, 1024 wide, 16 heads, context 1024,
 * vocabulary 50257; 354,823,168 parameters (HF's count, the head tied). Trained as the
 * 124M model (llm.c's GPT-2 350M run uses the same optimizer settings but lr 3e-4). */
static void build_gpt2_medium(Builder *b, ModelSpec *m)
{
    build_gpt(b, 24, 1024, 16, 1024, 50257);
    OptSpec o = GPT2_ADAMW;
    o.lr = 3e-4f;
    *m = (ModelSpec){.name = "gpt2-medium", .title = "GPT-2 355M decoder (HF gpt2-medium)",
                     .source = "Radford et al. 2019; HF gpt2-medium config; karpathy/llm.c", .family = "Transformer",
                     .origin = "transformer", .input = {2, {1024, 1}}, .input_ids = true,
                     .loss = LOSS_SOFTMAX_XENT, .classes = 50257, .opt = o, .data = DATA_TOKENS,
                     .default_batch = 2};
}

/* BERT-base with its masked-LM head (Devlin et al. 2019; HF BertForMaskedLM,
 * bert-base-uncased): word, position (512) and token-type (2) embeddings summed, layer norm
 * and dropout; 12 post-norm blocks ln(x + drop(attn(x))), ln(x + drop(mlp(x))) with 12
 * bidirectional heads and a 4x GELU MLP; the head: dense + GELU, layer norm, and the
 * decoder tied to the word table with a bias of its own. Layer norms eps 1e-12, dropout
 * 0.1 (attention weights too), weights N(0, 0.02), every 2-D tensor decayed. 109,514,298
 * parameters (HF's count for BertForMaskedLM: no pooler). Pretraining's phase 1: 128
 * tokens, 15% of them masked; AdamW lr 1e-4, betas 0.9 / 0.999, eps 1e-6, weight decay
 * 0.01, gradients clipped to norm 1 (the reference's TF optimizer; its warm-up and linear
 * decay of the lr are not modelled: the work does not depend on the lr). Every token is
 * of type 0 (single-segment inputs, no next-sentence task). */
static void build_bert_base(Builder *b, ModelSpec *m)
{
    const int vocab = 30522;
    zb_transformer(b, &(TransformerShape){.family = TF_BERT, .layers = 12, .width = 768, .heads = 12, .ffn = 3072,
                                          .vocab = vocab, .positions = 512, .types = 2, .act = ACT_GELU,
                                          .eps = 1e-12f, .dropout = 0.1f, .attn_dropout = 0.1f, .emb_dropout = 0.1f,
                                          .init = 0.02f});
    *m = (ModelSpec){.name = "bert-base", .title = "BERT-base with its masked-LM head (phase 1: 128 tokens)",
                     .source = "Devlin et al. 2019; HF bert-base-uncased, BertForMaskedLM", .family = "Transformer",
                     .origin = "transformer", .input = {2, {128, 1}}, .input_ids = true,
                     .loss = LOSS_SOFTMAX_XENT, .classes = vocab,
                     .opt = {.kind = OPT_ADAMW, .lr = 1e-4f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-6f,
                             .weight_decay = 0.01f, .clip_norm = 1.0f},
                     .data = DATA_MASKED_TOKENS, .default_batch = 32};
}

/* A byte-level GPT on real text (nanoGPT's character-level recipe, train_shakespeare_char,
 * made smaller for two cores: 4 layers, 256 wide, 4 heads, context 128, where the recipe has
 * 6, 384, 6 and 256): GPT-2's blocks over the 256 byte values, dropout 0.1, AdamW lr 1e-3,
 * betas 0.9 / 0.99, weight decay 0.1, gradients clipped to norm 1. `run gpt-bytes --epochs
 * N` trains it on the text Debian ships in every system (/usr/share/common-licenses, 241 kB:
 * the licence texts), or on --data-dir FILE|DIR, and reports the held-out tenth's bits per
 * byte; timing runs take seeded bytes of the same shape. 3,257,856 parameters. */
static void build_gpt_bytes(Builder *b, ModelSpec *m)
{
    zb_transformer(b, &(TransformerShape){.family = TF_GPT2, .layers = 4, .width = 256, .heads = 4, .ffn = 1024,
                                          .vocab = 256, .positions = 128, .act = ACT_GELU, .eps = 1e-5f,
                                          .dropout = 0.1f, .attn_dropout = 0.1f, .emb_dropout = 0.1f,
                                          .init = 0.02f, .scale_residual = true, .causal = true});
    *m = (ModelSpec){.name = "gpt-bytes", .title = "byte-level GPT on real text (Debian's licence texts)",
                     .source = "karpathy/nanoGPT train_shakespeare_char, smaller; GPT-2's blocks", .family = "Transformer",
                     .origin = "transformer", .input = {2, {128, 1}}, .input_ids = true,
                     .loss = LOSS_SOFTMAX_XENT, .classes = 256,
                     .opt = {.kind = OPT_ADAMW, .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.99f, .eps = 1e-8f,
                             .weight_decay = 0.1f, .clip_norm = 1.0f},
                     .data = DATA_TEXT_BYTES, .default_batch = 32, .epochs = 5};
}

/* ViT-B/16 (Dosovitskiy et al. 2021; timm vit_base_patch16_224): the 224 x 224 image cut into
 * 16 x 16 patches by a 16-stride convolution to 768 channels, its 196 positions as a
 * sequence, a learned class token prepended and 197 learned positions added; 12 pre-norm
 * blocks x + attn(ln(x)), x + mlp(ln(x)) with 12 bidirectional heads and a 3072-wide GELU
 * MLP, layer norms eps 1e-6, no dropout (timm's default); the final norm, the class
 * token's output, a 1000-way head. 86,567,656 parameters (timm's count). Trained as DeiT
 * trains it on ImageNet-1k (Touvron et al. 2021): AdamW lr 5e-4 x batch / 512 (1e-3 at
 * 1024), betas 0.9 / 0.999, weight decay 0.05 on the kernels (not on norms, biases, the
 * positions or the class token); its warm-up, cosine decay and augmentations are not
 * modelled. Kernels and tables N(0, 0.02). Synthetic images stand in for ImageNet. */
static void build_vit_b16(Builder *b, ModelSpec *m)
{
    const int D = 768, heads = 12, layers = 12, patch = 16;
    const float init = 0.02f, eps = 1e-6f;
    b->init = INIT_NORMAL;
    LayerSpec pe = zb_layer(LAYER_CONV2D, IN, NOACT, "patch_embed");
    pe.u.conv = (ConvSpec){.filters = D, .kh = patch, .kw = patch, .stride = patch, .pad = PAD_VALID, .groups = 1};
    pe.init_scale = init;
    int x = zb_add(b, pe);
    x = zb_to_sequence(b, "patches", x);
    x = zb_class_token(b, "cls_token", x, init);
    x = zb_position(b, "pos_embed", x, 197, init);
    b->layers[x].no_decay = true;
    const PreNormBlock blk = {.heads = heads, .ffn = 4 * D, .act = ACT_GELU, .width = D, .eps = eps, .init = init,
                              .proj_init = init,
                              .names = {"norm1", "attn", "attn.dropout", "res_1", "norm2", "mlp.fc1", "mlp.fc2",
                                        "mlp.dropout", "res_2"}};
    char n[LAYER_NAME_MAX];
    for (int i = 0; i < layers; i++) {
        snprintf(n, sizeof n, "blocks%d.", i);
        x = zb_prenorm_block(b, n, &blk, x);
    }
    x = zb_layernorm(b, "norm", x, eps);
    x = zb_first_step(b, "cls_out", x);
    zb_dense_normal(b, "head", x, 1000, NOACT, init);
    *m = (ModelSpec){.name = "vit-b16", .title = "ViT-B/16 image classifier (224 x 224, 1000 classes)",
                     .source = "Dosovitskiy et al. 2021; timm vit_base_patch16_224; DeiT's training (Touvron et al. 2021)",
                     .family = "Transformer", .origin = "transformer", .input = {3, {3, 224, 224}},
                     .loss = LOSS_SOFTMAX_XENT, .classes = 1000,
                     .opt = {.kind = OPT_ADAMW, .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                             .weight_decay = 0.05f},
                     .data = DATA_IMAGES, .default_batch = 8};
}

/* ---------------------------------------------------------------------------------------
 * The table
 * ------------------------------------------------------------------------------------- */

typedef void (*BuildFn)(Builder *b, ModelSpec *m);

static const BuildFn builders[] = {
    build_p1b1, build_p1b1_d, build_p3b1, build_alexnet_owt, build_googlenet, build_overfeat, build_vgg11,
    build_basic_lstm, build_lstm, build_rnn, build_resnet50, build_alexnet, build_vgg16, build_vgg19,
    build_resnet50_caffe, build_resnet101, build_resnet152, build_textcnn, build_eng_acoustic, build_sparse_ae,
    build_ufldl_cnn, build_fista, build_fmnist_convpool, build_fmnist_vgg, build_gpt2, build_gpt2_medium,
    build_bert_base, build_vit_b16, build_gpt_bytes,
};
enum { NMODELS = sizeof builders / sizeof builders[0] };

static ModelSpec zoo[NMODELS];
static bool built[NMODELS];

int zoo_count(void) { return NMODELS; }

const ModelSpec *zoo_get(int i)
{
    if (i < 0 || i >= NMODELS)
        return NULL;
    if (!built[i]) {
        Builder b = {.init = INIT_GLOROT_UNIFORM};
        builders[i](&b, &zoo[i]);
        zb_finish(&b, &zoo[i]);
        built[i] = true;
    }
    return &zoo[i];
}

const ModelSpec *zoo_find(const char *name)
{
    for (int i = 0; i < NMODELS; i++)
        if (strcmp(zoo_get(i)->name, name) == 0)
            return zoo_get(i);
    return NULL;
}

/* Quirk-free variants, built on first use from the zoo model of the same index. */
static ModelSpec without_quirk[NMODELS];
static bool without_quirk_built[NMODELS];

const ModelSpec *zoo_without_quirk(const ModelSpec *m)
{
    const int i = (int)(m - zoo);
    if (i < 0 || i >= NMODELS || !m->quirk)
        return NULL;
    if (!without_quirk_built[i]) {
        ModelSpec *v = &without_quirk[i];
        *v = *m;
        LayerSpec *layers = malloc(sizeof *layers * (size_t)m->nlayers);
        assert(layers);
        memcpy(layers, m->layers, sizeof *layers * (size_t)m->nlayers);
        /* the only quirk the zoo keeps: an activation on the output layer */
        assert(layers[m->nlayers - 1].act != ACTIVATION_NONE);
        layers[m->nlayers - 1].act = ACTIVATION_NONE;
        v->layers = layers;
        v->quirk = NULL;
        v->demo = false;
        snprintf(v->name, sizeof v->name, "%.*s-no-quirk", MODEL_NAME_MAX - 10, m->name);
        without_quirk_built[i] = true;
    }
    return &without_quirk[i];
}

void zoo_quirk_names(char *out, int n)
{
    int used = 0;
    out[0] = '\0';
    for (int i = 0; i < NMODELS && used < n; i++)
        if (zoo_get(i)->quirk)
            used += snprintf(out + used, (size_t)(n - used), "%s%s", used ? ", " : "", zoo_get(i)->name);
}

void zoo_names(char *out, int n)
{
    int used = 0;
    out[0] = '\0';
    for (int i = 0; i < NMODELS && used < n; i++)
        used += snprintf(out + used, (size_t)(n - used), "%s%s", i ? ", " : "", zoo_get(i)->name);
}
