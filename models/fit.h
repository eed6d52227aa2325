/* models/fit.h — training to a result: epochs of shuffled batches over a data set,
 * evaluation on held-out data after every epoch, and the metrics the reference
 * implementations report (accuracy; P1B1's test correlation; P3B1's F1 scores; seed
 * 004's total execution time, total inference time and FLOP/s).
 *
 * Real data where it exists offline (Fashion-MNIST), else the model's seeded synthetic
 * generator with the original sample counts. Multi-task models (P3B1) train one epoch of
 * each task in turn, as the reference does, all tasks sharing one parameter buffer.
 */
#ifndef DLPERF_FIT_H
#define DLPERF_FIT_H

#include <stdint.h>

#include "models/model.h"

enum { FIT_MAX_METRICS = 16 };

typedef struct {
    char name[48];   /* "test_accuracy", "primary_site_f1_macro", "test_correlation", ... */
    double value;
} Metric;

typedef struct {
    int epochs;            /* >= 1 */
    int batch;             /* 0: the model's default */
    uint64_t seed;
    const char *data_dir;  /* Fashion-MNIST directory (NULL: $DLPERF_FASHION_MNIST or Debian's) */
    const char *save_path; /* weights file written after training (NULL: none) */
    const char *load_path; /* weights file to start from (NULL: fresh initialisation) */
    int max_samples;       /* synthetic data sets cut to at most this many rows each, training
                              and test (0: the model's counts): short runs for tests */
    /* data-parallel (under mpirun; nranks 0 or 1: one process): every rank trains its
     * share (batch / nranks samples) of each global batch of the same shuffled epoch, the
     * gradients summed over the ranks; rank 0 alone evaluates, saves and times inference */
    int rank, nranks;
    /* progress lines for people ("epoch 3/10: loss 0.31, test_accuracy 0.884, 52.1 s") */
    void (*progress)(const char *line, void *ctx);
    void *progress_ctx;
} FitOptions;

typedef struct {
    int epochs, batch;     /* batch: the global batch (over all ranks) */
    int batch_per_rank;
    long steps;            /* optimizer steps */
    int train_n, test_n;   /* samples per epoch (all tasks) and evaluated */
    double train_s;        /* training time over all epochs */
    double eval_s;         /* evaluation (validation) time over all epochs */
    double infer_s;        /* weights load + prediction over the test set (seed 004) */
    double load_s;         /* of which: loading the weights file */
    double flops;          /* FLOPs executed in training and evaluation */
    double step_median_s;  /* median optimizer step (data-parallel: rank 0's, allreduce included) */
    double allreduce_bytes;     /* data-parallel: the gradient buffer summed every step */
    double allreduce_median_s;  /* ... and the median time of that sum on rank 0 */
    double first_loss, last_loss; /* mean training loss of the first and the last epoch */
    Metric metrics[FIT_MAX_METRICS];
    int nmetrics;
    char data_source[300];
} FitResult;

/* Trains m as described above. Returns 0, or -1 with one line in err (data set missing,
 * memory, weights file refused, training diverged). Data-parallel: every rank must call it
 * (collective); the metrics, inference time and weights file are rank 0's. */
int fit_run(const ModelSpec *m, const FitOptions *o, FitResult *r, char *err, size_t errlen);

#endif
