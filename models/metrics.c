/* models/metrics.c — accuracy, F1, Pearson correlation, MSE, R^2 and geometric mean with
 * the semantics of the Keras / sklearn / scipy calls the reference scripts make (see
 * models/metrics.h). Statistics over whole vectors come from GSL.
 */
#include "models/metrics.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_statistics_float.h>

/* Always-on assert (STYLE habit 5): a label outside [0, classes) is a caller bug that
 * must not index past the count arrays, NDEBUG or not. */
#define METRIC_ASSERT(cond) ((cond) ? (void)0 : metric_assert_fail(#cond, __FILE__, __LINE__))

static _Noreturn void metric_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

double metric_accuracy(const float *scores, const int32_t *labels, int n, int classes)
{
    METRIC_ASSERT(n >= 0 && classes >= 1);
    if (n == 0)
        return NAN;
    long correct = 0;
    for (int i = 0; i < n; i++) {
        const float *s = scores + (size_t)i * (size_t)classes;
        int best = 0;
        if (!isnan(s[0]))
            for (int c = 1; c < classes; c++) {
                if (isnan(s[c])) { /* numpy's argmax: the first NaN is the maximum */
                    best = c;
                    break;
                }
                if (s[c] > s[best]) /* strict: a tie keeps the lower index */
                    best = c;
            }
        correct += best == labels[i];
    }
    return (double)correct / n;
}

void metric_f1(const int32_t *pred, const int32_t *truth, int n, int classes, double *macro,
               double *micro)
{
    METRIC_ASSERT(n >= 0 && classes >= 1);
    if (n == 0) {
        *macro = *micro = NAN;
        return;
    }
    /* Per class: tp, in_pred (= TP + FP), in_truth (= TP + FN). */
    long *cnt = calloc((size_t)classes * 3, sizeof *cnt);
    if (!cnt) { /* out of memory in a function that cannot fail: say where, and stop */
        fprintf(stderr, "%s:%d: out of memory counting %d classes\n", __FILE__, __LINE__, classes);
        abort();
    }
    long *tp = cnt, *in_pred = cnt + classes, *in_truth = cnt + 2 * (size_t)classes;
    for (int i = 0; i < n; i++) {
        METRIC_ASSERT(pred[i] >= 0 && pred[i] < classes && truth[i] >= 0 && truth[i] < classes);
        in_pred[pred[i]]++;
        in_truth[truth[i]]++;
        tp[pred[i]] += pred[i] == truth[i];
    }
    long tp_all = 0;
    double f1_sum = 0;
    int present = 0;
    for (int c = 0; c < classes; c++) {
        if (in_pred[c] == 0 && in_truth[c] == 0)
            continue; /* sklearn only scores labels seen in y_true or y_pred */
        present++;
        tp_all += tp[c];
        /* 2PR / (P + R) = 2TP / (2TP + FP + FN), and 0 when TP = 0 (sklearn's zero_division). */
        f1_sum += 2.0 * tp[c] / (double)(in_pred[c] + in_truth[c]);
    }
    /* Single-label: sum FP = sum FN = n - TP, so micro F1 = 2TP / (2TP + 2(n - TP)) = TP / n. */
    *micro = (double)tp_all / n;
    *macro = f1_sum / present;
    free(cnt);
}

double metric_pearson_flat(const float *a, const float *b, size_t n)
{
    if (n < 2)
        return NAN;
    /* GSL accumulates Welford's updates in long double: no cancellation over 60 million
     * values (P1B1's validation matrix). A constant vector gives 0/0 = NaN, like scipy. */
    double r = gsl_stats_float_correlation(a, 1, b, 1, n);
    if (isnan(r))
        return r;
    return r > 1.0 ? 1.0 : r < -1.0 ? -1.0 : r; /* scipy clips rounding overshoot */
}

double metric_mse(const float *a, const float *b, size_t n)
{
    if (n == 0)
        return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)b[i];
        s += d * d;
    }
    return s / (double)n;
}

double metric_r2(const float *y_true, const float *y_pred, int n, int cols)
{
    METRIC_ASSERT(n >= 0 && cols >= 1);
    if (n < 2)
        return NAN;
    double sum = 0;
    size_t stride = (size_t)cols;
    for (int j = 0; j < cols; j++) {
        const float *yt = y_true + j, *yp = y_pred + j;
        double mean = gsl_stats_float_mean(yt, stride, (size_t)n);
        double ss_tot = gsl_stats_float_tss_m(yt, stride, (size_t)n, mean);
        double ss_res = 0;
        for (int i = 0; i < n; i++) {
            double d = (double)yt[(size_t)i * stride] - (double)yp[(size_t)i * stride];
            ss_res += d * d;
        }
        /* sklearn's force_finite: a constant column is 1 when predicted exactly, else 0. */
        if (ss_tot == 0)
            sum += ss_res == 0 ? 1.0 : 0.0;
        else
            sum += ss_res == 0 ? 1.0 : 1.0 - ss_res / ss_tot;
    }
    return sum / cols;
}

double metric_geomean(const double *v, int n)
{
    if (n <= 0)
        return NAN;
    double log_sum = 0;
    bool zero = false, inf = false;
    for (int i = 0; i < n; i++) {
        if (isnan(v[i]) || v[i] < 0)
            return NAN; /* scipy: log of a negative number */
        if (v[i] == 0)
            zero = true; /* log 0 = -inf, exp(-inf) = 0 */
        else
            log_sum += log(v[i]);
        inf = inf || isinf(v[i]);
    }
    if (zero)
        return inf ? NAN : 0.0; /* scipy: -inf + inf = NaN */
    return exp(log_sum / n);
}
