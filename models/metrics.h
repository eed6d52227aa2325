/* models/metrics.h — the figures of merit the reference implementations report, computed
 * as they compute them: Keras accuracy, sklearn's f1_score and r2_score, scipy's pearsonr
 * (P1B1's "test correlation") and gmean (P3B1's FOM over its six F1 values).
 *
 * All sums are accumulated in double. Matrices are row-major (n, cols). An undefined
 * value (no samples, zero variance) is NaN, as numpy/scipy return it, never a made-up 0.
 */
#ifndef DLPERF_METRICS_H
#define DLPERF_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* Fraction of rows whose argmax over scores (n, classes) equals labels[i]. Ties go to the
 * lowest index and a NaN score wins (numpy argmax). NaN for n == 0. */
double metric_accuracy(const float *scores, const int32_t *labels, int n, int classes);

/* sklearn f1_score(truth, pred, average='macro' / 'micro') for single-label classes in
 * [0, classes). Micro: 2 TP / (2 TP + FP + FN) over all classes (= accuracy). Macro: the
 * unweighted mean of per-class F1 = 2 TP / (2 TP + FP + FN) over the classes that occur in
 * truth or pred (sklearn's labels = unique(y_true ∪ y_pred)); a class with TP = 0 scores 0.
 * Both NaN for n == 0. A label outside [0, classes) aborts (programmer error). */
void metric_f1(const int32_t *pred, const int32_t *truth, int n, int classes, double *macro,
               double *micro);

/* scipy.stats.pearsonr(a.ravel(), b.ravel())[0]: one correlation over the n values of both
 * matrices, clipped to [-1, 1] as scipy does. NaN when n < 2 or a vector is constant. */
double metric_pearson_flat(const float *a, const float *b, size_t n);

/* Mean of (a[i] - b[i])^2 (Keras 'mse' over a flattened matrix). NaN for n == 0. */
double metric_mse(const float *a, const float *b, size_t n);

/* sklearn r2_score(y_true, y_pred) for (n, cols) matrices, multioutput='uniform_average':
 * the mean over columns of 1 - SS_res / SS_tot, where (force_finite) a constant column
 * scores 1 if predicted exactly and 0 otherwise. NaN for n < 2 (sklearn: not well-defined). */
double metric_r2(const float *y_true, const float *y_pred, int n, int cols);

/* scipy.stats.gmean: exp(mean(log v)). 0 if any v is 0, NaN if any is negative or n == 0. */
double metric_geomean(const double *v, int n);

#endif
