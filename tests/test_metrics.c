/* tests/test_metrics.c — the figures of merit against hand-computed values with the
 * reference libraries' semantics: sklearn's macro/micro F1 (labels = classes in truth or
 * prediction), argmax ties, scipy's pearsonr on flattened matrices (exactly +-1 for an
 * affine relation, stable at a large offset), MSE, sklearn's r2_score and gmean. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "models/metrics.h"

#define assert_near(got, want, tol) assert_true(fabs((got) - (want)) <= (tol))

static void test_accuracy_argmax_ties(void **state)
{
    /* rows: a clear winner, a tie between 1 and 2 (the lower index wins), all equal
     * (index 0 wins), a NaN (numpy's argmax takes the first NaN) */
    const float scores[] = {
        0.1f, 0.7f, 0.2f,
        1.0f, 3.0f, 3.0f,
        5.0f, 5.0f, 5.0f,
        1.0f, NAN, 9.0f,
    };
    const int32_t right[] = {1, 1, 0, 1};
    const int32_t wrong[] = {2, 2, 1, 2};
    assert_near(metric_accuracy(scores, right, 4, 3), 1.0, 0);
    assert_near(metric_accuracy(scores, wrong, 4, 3), 0.0, 0);
    const int32_t half[] = {1, 2, 0, 0};
    assert_near(metric_accuracy(scores, half, 4, 3), 0.5, 0);
    assert_true(isnan(metric_accuracy(scores, right, 0, 3)));
}

static void test_f1_macro_micro(void **state)
{
    /* 6 classes declared; 4 and 5 never occur (sklearn ignores them), 3 is predicted but
     * absent from truth, 2 is in truth but never predicted.
     *   class 0: TP 1 (i0), FP 1 (i4), FN 1 (i1)  F1 = 2/(2+1+1) = 0.5
     *   class 1: TP 2 (i2,i3), FP 1 (i1), FN 0    F1 = 4/5 = 0.8
     *   class 2: TP 0, FN 2                       F1 = 0
     *   class 3: TP 0, FP 1                       F1 = 0
     * macro = (0.5 + 0.8) / 4 = 0.325, micro = accuracy = 3/6. */
    const int32_t truth[] = {0, 0, 1, 1, 2, 2};
    const int32_t pred[] = {0, 1, 1, 1, 0, 3};
    double macro, micro;
    metric_f1(pred, truth, 6, 6, &macro, &micro);
    assert_near(macro, 0.325, 1e-15);
    assert_near(micro, 0.5, 1e-15);

    /* all right: both 1; one class only */
    const int32_t same[] = {2, 2, 2};
    metric_f1(same, same, 3, 3, &macro, &micro);
    assert_near(macro, 1.0, 0);
    assert_near(micro, 1.0, 0);

    /* all wrong, disjoint sets: every class scores 0 */
    const int32_t t2[] = {0, 0}, p2[] = {1, 1};
    metric_f1(p2, t2, 2, 2, &macro, &micro);
    assert_near(macro, 0.0, 0);
    assert_near(micro, 0.0, 0);

    metric_f1(pred, truth, 0, 6, &macro, &micro);
    assert_true(isnan(macro) && isnan(micro));
}

static void test_pearson(void **state)
{
    /* a = (1 2 3 4), b = (2 4 5 9): deviations (-1.5 -.5 .5 1.5), (-3 -1 0 4),
     * cross 11, Sxx 5, Syy 26: r = 11 / sqrt(130). As a 2x2 matrix flattened: the same. */
    const float a[] = {1, 2, 3, 4}, b[] = {2, 4, 5, 9};
    assert_near(metric_pearson_flat(a, b, 4), 11.0 / sqrt(130.0), 1e-14);
    assert_near(metric_pearson_flat(b, a, 4), 11.0 / sqrt(130.0), 1e-14);

    /* an affine relation (exact in float) gives exactly +-1, never past it */
    enum { N = 1001 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *z = malloc(N * sizeof *z);
    assert_true(x && y && z);
    for (int i = 0; i < N; i++) {
        x[i] = 0.5f * (float)(i % 97) - 3.0f;
        y[i] = 3.0f * x[i] - 7.0f;
        z[i] = -0.25f * x[i] + 100.0f;
    }
    double r = metric_pearson_flat(x, y, N);
    assert_true(r <= 1.0 && r >= 1.0 - 1e-14);
    r = metric_pearson_flat(x, z, N);
    assert_true(r >= -1.0 && r <= -1.0 + 1e-14);

    /* constant vector and too few values: NaN, as scipy */
    for (int i = 0; i < N; i++)
        z[i] = 2.5f;
    assert_true(isnan(metric_pearson_flat(x, z, N)));
    assert_true(isnan(metric_pearson_flat(x, y, 1)));
    assert_true(isnan(metric_pearson_flat(x, y, 0)));
    free(x);
    free(y);
    free(z);
}

/* A large offset and many values: a naive sum-of-squares formula in float would lose
 * every digit; compare with a two-pass double reference. */
static void test_pearson_precision(void **state)
{
    enum { N = 2000000 };
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    assert_true(a && b);
    for (int i = 0; i < N; i++) {
        a[i] = 1000.0f + (float)(i % 7) * 0.125f;
        b[i] = 1000.0f + (float)(i % 7) * 0.125f + (float)((i % 3) - 1) * 0.0625f;
    }
    double ma = 0, mb = 0;
    for (int i = 0; i < N; i++) {
        ma += a[i];
        mb += b[i];
    }
    ma /= N;
    mb /= N;
    double sab = 0, saa = 0, sbb = 0;
    for (int i = 0; i < N; i++) {
        double da = a[i] - ma, db = b[i] - mb;
        sab += da * db;
        saa += da * da;
        sbb += db * db;
    }
    double want = sab / sqrt(saa * sbb);
    assert_true(want > 0.9 && want < 0.99);
    assert_near(metric_pearson_flat(a, b, N), want, 1e-9);
    free(a);
    free(b);
}

static void test_mse(void **state)
{
    const float a[] = {1, 2, 3}, b[] = {1, 0, 6};
    assert_near(metric_mse(a, b, 3), 13.0 / 3.0, 1e-15);
    assert_near(metric_mse(a, a, 3), 0.0, 0);
    assert_true(isnan(metric_mse(a, b, 0)));
}

static void test_r2(void **state)
{
    /* sklearn's r2_score docstring example, uniform average 0.936...:
     * column 0: truth (0.5 -1 7), SS_tot = 217/6, SS_res = 1.25 -> 1 - 15/434
     * column 1: truth (1 1 -6),   SS_tot = 294/9, SS_res = 3    -> 1 - 9/98 */
    const float yt[] = {0.5f, 1, -1, 1, 7, -6};
    const float yp[] = {0, 2, -1, 2, 8, -5};
    double want = 1.0 - (15.0 / 434.0 + 9.0 / 98.0) / 2.0;
    assert_near(metric_r2(yt, yp, 3, 2), want, 1e-12);
    assert_near(want, 0.9368, 1e-4);

    /* single column: sklearn's other docstring example, 3 -0.5 2 7 vs 2.5 0 2 8 -> 0.948... */
    const float t1[] = {3, -0.5f, 2, 7}, p1[] = {2.5f, 0, 2, 8};
    /* mean 2.875, SS_tot = 29.1875, SS_res = 1.5 */
    assert_near(metric_r2(t1, p1, 4, 1), 1.0 - 1.5 / 29.1875, 1e-12);

    /* force_finite: a constant truth column scores 1 if predicted exactly, else 0 */
    const float tc[] = {1, 2, 2, 2, 3, 2};
    const float pc_exact[] = {1, 2, 2, 2, 3, 2};
    const float pc_off[] = {1, 2.5f, 2, 2, 3, 2};
    assert_near(metric_r2(tc, pc_exact, 3, 2), 1.0, 0);
    assert_near(metric_r2(tc, pc_off, 3, 2), 0.5, 0); /* column 0 perfect, column 1: 0 */

    assert_true(isnan(metric_r2(yt, yp, 1, 2)));
}

static void test_geomean(void **state)
{
    const double v[] = {1, 4, 16};
    assert_near(metric_geomean(v, 3), 4.0, 1e-14);
    /* P3B1's FOM over six F1 values */
    const double f1[] = {0.9, 0.8, 0.7, 0.6, 0.5, 0.4};
    assert_near(metric_geomean(f1, 6), pow(0.9 * 0.8 * 0.7 * 0.6 * 0.5 * 0.4, 1.0 / 6.0), 1e-14);
    const double with_zero[] = {0.5, 0, 0.7};
    assert_near(metric_geomean(with_zero, 3), 0.0, 0);
    const double negative[] = {0.5, -0.1};
    assert_true(isnan(metric_geomean(negative, 2)));
    assert_true(isnan(metric_geomean(v, 0)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accuracy_argmax_ties),
        cmocka_unit_test(test_f1_macro_micro),
        cmocka_unit_test(test_pearson),
        cmocka_unit_test(test_pearson_precision),
        cmocka_unit_test(test_mse),
        cmocka_unit_test(test_r2),
        cmocka_unit_test(test_geomean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
