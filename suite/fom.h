/* suite/fom.h — seed 000's figures of merit predicted for a proposed system (`dlperf fom`):
 * how many instances of each benchmark the system runs at once, each instance's time from
 * the predictor (its ops priced from the best evidence there is, predictor/device_price.h),
 * and the FOMs of suite/rules.h, with a band from the prices' bands.
 *
 * How instances are placed:
 *   throughput benchmarks (CANDLE, convnets, LSTM): at the benchmark's own batch on one
 *     device each, k instances sharing a device where its memory holds k. Instances on one
 *     GPU share it as separate processes do: the device runs their kernels one after
 *     another, each process's host time overlaps the others' kernels, so a step takes
 *     max(t_alone, k x t_device), t_device the step's device time without the host's floors.
 *     k is given (--per-device) or, by default, the most that pay: min(what memory holds,
 *     floor(t_alone / t_device)); beyond that the device is busy and another instance adds
 *     as much time as work. A host core per instance is assumed.
 *   ResNet-50: 50 instances, each data parallel over floor(devices / 50) devices (2% of the
 *     system); on a system of fewer than 50 devices, ceil(50 / devices) share each device.
 *     Each trains 90 epochs of ImageNet at the zoo's batch per device (halved until it
 *     fits), its gradients summed after backward by the system's allreduce; training only
 *     (no validation passes, no input pipeline or I/O, which the suite counts).
 *   CANDLE: the zoo's reference configuration (epochs, training rows, the evaluation of the
 *     test rows; P3B1's three tasks one epoch each in turn), the last partial batch priced
 *     at its own size. The suite's reference accuracy is not a criterion here: a
 *     prediction reaches no accuracy.
 * Against what: the seed's Titan table, and Titan as dlperf prices it (the same predictor
 * on both sides, so the errors it makes on both cancel where they are alike; the ResNet
 * reference, which the seed does not give, is always the priced one).
 */
#ifndef DLPERF_SUITE_FOM_H
#define DLPERF_SUITE_FOM_H

#include "predictor/system_pricer.h"
#include "suite/rules.h"

typedef struct {
    int nodes;          /* the system's nodes; 0: the sheet's (a building block's: 1) */
    int per_device;     /* throughput instances per device; 0: as many as pay (above) */
    bool reference;     /* price the way the reference ran: ResNet's 5 instances on 20% of
                           the system, one throughput instance per device */
    /* the optimized run (seed 000: other code, frameworks or a reduced precision, the
     * accuracy within the rules): ResNet-50's top-1 accuracy in percent that its FOM's
     * accuracy term takes (at least SUITE_RESNET_REF_ACCURACY); 0: the base run, no term.
     * A prediction reaches no accuracy: the value is the user's, or the minimum the rules
     * accept (term 1). */
    double resnet_accuracy_pct;
} FomOptions;

typedef struct {
    const SuiteBenchmark *b;
    bool fits;                 /* an instance fits a device at its batch */
    bool memory_short;         /* the reference: priced though the memory estimate exceeds
                                  the device's (the reference ran it) */
    int batch;                 /* per device */
    int instances;             /* concurrent across the system */
    int per_device;            /* instances sharing a device */
    int fit_per_device;        /* how many the device's memory holds */
    int devices_per_instance;  /* ResNet: the devices of one data-parallel instance */
    double time_s, lo_s, hi_s; /* one instance, in the benchmark's metric */
    double fwd_s;              /* forward alone, the same unit (convnets, LSTM; 0: none) */
    double alone_s;            /* the metric of an instance alone on its device */
    double mem_bytes;          /* one instance's memory per device */
    int priced_by[DP_SOURCE_COUNT];
} FomBenchTime;

typedef struct {
    double fom, lo, hi;
} FomValue;

typedef struct {
    int nodes, devices;
    FomBenchTime t[SUITE_BENCHMARKS];
    FomBenchTime titan[SUITE_BENCHMARKS];   /* Titan as priced, run as the reference ran */
    FomValue seed[SUITE_BENCHMARKS];        /* against the seed's Titan times (ResNet: priced) */
    FomValue priced[SUITE_BENCHMARKS];      /* against Titan as priced */
    FomValue seed_group[SUITE_GROUP_COUNT], priced_group[SUITE_GROUP_COUNT];
    FomValue seed_overall, priced_overall;
} FomResult;

/* One benchmark on sp's system. 0, or -1 with err (an op nothing prices, a model that
 * does not build). A benchmark that does not fit a device is 0 with fits false. */
int fom_bench_time(const SystemPricer *sp, const SuiteBenchmark *b, const FomOptions *o, FomBenchTime *out,
                   char *err, size_t errlen);

/* Every benchmark on sp's system and on titan's (Titan's sheet, priced as the reference
 * ran), and the FOMs. progress (may be NULL) is told of each benchmark priced. 0, or -1. */
/* "optimized" where o asks for the optimized run's accuracy term, else "base". */
const char *fom_run_name(const FomOptions *o);

int fom_predict(const SystemPricer *sp, const SystemPricer *titan, const FomOptions *o, FomResult *out,
                void (*progress)(const char *what, void *ctx), void *ctx, char *err, size_t errlen);

#endif
