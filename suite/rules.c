/* suite/rules.c — seed 000's benchmarks, Titan reference table and FOM rules (rules.h). */
#include "suite/rules.h"

#include <math.h>
#include <string.h>

static const char *const GROUP_NAMES[SUITE_GROUP_COUNT] = {"candle", "convnet", "lstm", "resnet"};
/* seed 000, "Computing the FOM": the overall FOM's weights, candle, convnet, RNN, ResNet */
static const double GROUP_WEIGHTS[SUITE_GROUP_COUNT] = {5.0, 1.0, 2.0, 5.0};

const char *suite_group_name(SuiteGroup g) { return g >= 0 && g < SUITE_GROUP_COUNT ? GROUP_NAMES[g] : "?"; }
double suite_group_weight(SuiteGroup g) { return g >= 0 && g < SUITE_GROUP_COUNT ? GROUP_WEIGHTS[g] : 0; }

const char *suite_metric_unit(SuiteMetric m)
{
    switch (m) {
    case SUITE_BATCH_S: return "s/batch";
    case SUITE_SAMPLE_S: return "s/sample";
    default: return "s";
    }
}

/* seed 000, "Reference timings and accuracy from Titan" (14,000 instances on Titan's
 * K20X nodes): CANDLE's run time and accuracy, the convnets' forward and forward-backward
 * seconds per batch across 100 steps, the LSTM's seconds per sample. The convnets and the
 * LSTM are convnet-benchmarks' and rnn-benchmarks' models (MODELS.md 3, 4): AlexNet "one
 * weird trick" and Overfeat "fast" at batch 128, GoogLeNet v1 at 128, VGG model A at 64,
 * the LSTM (hidden 1024, 30 steps) at 128. ResNet-50's row is not in the document. */
const SuiteBenchmark suite_benchmarks[SUITE_BENCHMARKS] = {
    {"p1b1", "p1b1", SUITE_CANDLE, SUITE_RUN_S, 1886.4036, 0, 0.7808},
    {"p3b1", "p3b1", SUITE_CANDLE, SUITE_RUN_S, 52.1051, 0, 0.5637},
    {"alexnet", "alexnet-owt", SUITE_CONVNET, SUITE_BATCH_S, 0.2116, 0.0715, 0},
    {"googlenet", "googlenet", SUITE_CONVNET, SUITE_BATCH_S, 1.1633, 0.3428, 0},
    {"overfeat", "overfeat", SUITE_CONVNET, SUITE_BATCH_S, 0.6434, 0.2112, 0},
    {"vgg", "vgg11", SUITE_CONVNET, SUITE_BATCH_S, 1.6375, 0.4264, 0},
    {"lstm", "lstm", SUITE_LSTM, SUITE_SAMPLE_S, 0.001411, 0.0005268, 0},
    {"resnet50", "resnet50", SUITE_RESNET, SUITE_EPOCHS_S, 0, 0, 0},
};

const SuiteBenchmark *suite_benchmark(const char *name)
{
    for (int i = 0; i < SUITE_BENCHMARKS; i++)
        if (strcmp(suite_benchmarks[i].name, name) == 0)
            return &suite_benchmarks[i];
    return NULL;
}

double suite_throughput_fom(double t_ref, double t, int instances)
{
    if (!(t > 0) || !(t_ref > 0) || instances <= 0)
        return 0;
    return t_ref / t * ((double)instances / SUITE_TITAN_INSTANCES);
}

double suite_resnet_accuracy_term(double accuracy_pct)
{
    const double x = (accuracy_pct - SUITE_RESNET_REF_ACCURACY) / (100.0 - SUITE_RESNET_REF_ACCURACY);
    return 1.0 + x * x * x;
}

double suite_resnet_fom(double t_ref, double t, double accuracy_pct)
{
    if (!(t > 0) || !(t_ref > 0))
        return 0;
    double f = t_ref / t * SUITE_RESNET_FACTOR;
    if (accuracy_pct > 0)
        f *= suite_resnet_accuracy_term(accuracy_pct);
    return f;
}

double suite_group_fom(const double *fom, int n)
{
    if (n <= 0)
        return 0;
    double s = 0;
    for (int i = 0; i < n; i++) {
        if (!(fom[i] > 0))
            return 0;
        s += log(fom[i]);
    }
    return exp(s / n);
}

double suite_overall_fom(const double group[SUITE_GROUP_COUNT])
{
    double s = 0, w = 0;
    for (int g = 0; g < SUITE_GROUP_COUNT; g++) {
        s += GROUP_WEIGHTS[g] * group[g];
        w += GROUP_WEIGHTS[g];
    }
    return s / w;
}
