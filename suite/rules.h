/* suite/rules.h — seed 000's deep-learning procurement suite: its benchmarks, the Titan
 * reference table, and its figures of merit (FOM), exactly as the suite defines them.
 *
 *   candle, convnets, LSTM (throughput mode): each benchmark runs as many instances at
 *     once as the system holds; its FOM is (t_titan / max_t) x (instances / 14,000), with
 *     t the benchmark's time (CANDLE: the run; convnets: forward-backward per batch over 100
 *     steps; LSTM: forward-backward per sample) and max_t the slowest instance's.
 *     CANDLE's FOM is the geometric mean of P1B1's and P3B1's, the convnets' that of the
 *     four networks'.
 *   ResNet-50: 50 instances, each on 2% of the system or less, each training 90 ImageNet
 *     epochs; FOM = (t_ref / max_t) x 10, t_ref the slowest of 5 instances on 20% of Titan;
 *     the optimized run multiplies by 1 + ((acc - 74.9) / (100 - 74.9))^3.
 *   overall: the weighted mean of the candle, convnet, LSTM and ResNet FOMs, weights 5, 1,
 *     2, 5, for the base and the optimized run apart.
 * The suite's document ends its reference table before ResNet-50's row: no t_ref is
 * given, so the ResNet FOM compares with Titan as dlperf prices it (stated wherever shown).
 */
#ifndef DLPERF_SUITE_RULES_H
#define DLPERF_SUITE_RULES_H

#include <stdbool.h>

typedef enum { SUITE_CANDLE, SUITE_CONVNET, SUITE_LSTM, SUITE_RESNET, SUITE_GROUP_COUNT } SuiteGroup;
const char *suite_group_name(SuiteGroup g); /* "candle", "convnet", "lstm", "resnet" */

/* What a benchmark's time is. */
typedef enum {
    SUITE_RUN_S,     /* CANDLE: the reference configuration's training run, evaluation included */
    SUITE_BATCH_S,   /* convnets: forward-backward per batch */
    SUITE_SAMPLE_S,  /* LSTM: forward-backward per sample */
    SUITE_EPOCHS_S   /* ResNet-50: 90 epochs of ImageNet's 1,281,167 training images */
} SuiteMetric;
const char *suite_metric_unit(SuiteMetric m); /* "s", "s/batch", "s/sample", "s" */

typedef struct {
    const char *name;        /* as the suite names it */
    const char *model;       /* the zoo model that runs it */
    SuiteGroup group;
    SuiteMetric metric;
    double titan_s;          /* the Titan reference (0: the suite gives none) */
    double titan_fwd_s;      /* forward alone (convnets, LSTM; 0: none) */
    double titan_accuracy;   /* CANDLE's reference accuracy (0: none) */
} SuiteBenchmark;

enum { SUITE_BENCHMARKS = 8 };
extern const SuiteBenchmark suite_benchmarks[SUITE_BENCHMARKS];
const SuiteBenchmark *suite_benchmark(const char *name);

#define SUITE_TITAN_INSTANCES 14000  /* the throughput benchmarks' instances on Titan */
#define SUITE_RESNET_INSTANCES 50    /* on the proposed system, each on <= 2% of it */
#define SUITE_RESNET_REF_INSTANCES 5 /* on 20% of Titan */
#define SUITE_RESNET_REF_SHARE 0.2
#define SUITE_RESNET_FACTOR 10.0     /* the additional instances the vendor runs */
#define SUITE_RESNET_EPOCHS 90
#define SUITE_IMAGENET_TRAIN 1281167
#define SUITE_RESNET_REF_ACCURACY 74.9

/* A throughput benchmark's FOM: (t_ref / t) x (instances / 14,000); 0 where t <= 0 or no
 * instance runs. */
double suite_throughput_fom(double t_ref, double t, int instances);
/* ResNet-50's: (t_ref / t) x 10, times the accuracy term where accuracy_pct > 0 (the
 * optimized run). */
double suite_resnet_fom(double t_ref, double t, double accuracy_pct);
/* The accuracy term of the optimized ResNet FOM: 1 + ((acc - 74.9) / (100 - 74.9))^3. */
double suite_resnet_accuracy_term(double accuracy_pct);
/* A group's FOM from its benchmarks' (the geometric mean; 0 if any is 0). */
double suite_group_fom(const double *fom, int n);
/* The overall FOM: the weighted mean (5, 1, 2, 5) of the four groups'. */
double suite_overall_fom(const double group[SUITE_GROUP_COUNT]);
double suite_group_weight(SuiteGroup g);

#endif
