/* tests/test_suite.c — seed 000's FOM rules (suite/rules.h) against the document's
 * definitions, worked by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "suite/rules.h"

static void test_reference_table(void **state)
{
    (void)state;
    /* the seed's "Reference timings and accuracy from Titan" */
    const SuiteBenchmark *b = suite_benchmark("p1b1");
    assert_non_null(b);
    assert_true(b->titan_s == 1886.4036 && b->titan_accuracy == 0.7808);
    b = suite_benchmark("vgg");
    assert_true(b->titan_s == 1.6375 && b->titan_fwd_s == 0.4264 && b->metric == SUITE_BATCH_S);
    b = suite_benchmark("lstm");
    assert_true(b->titan_s == 0.001411 && b->metric == SUITE_SAMPLE_S);
    assert_true(suite_benchmark("resnet50")->titan_s == 0); /* the document gives none */
    assert_null(suite_benchmark("bert"));
    int n[SUITE_GROUP_COUNT] = {0};
    for (int i = 0; i < SUITE_BENCHMARKS; i++)
        n[suite_benchmarks[i].group]++;
    assert_int_equal(n[SUITE_CANDLE], 2);
    assert_int_equal(n[SUITE_CONVNET], 4);
    assert_int_equal(n[SUITE_LSTM], 1);
    assert_int_equal(n[SUITE_RESNET], 1);
}

static void test_fom_arithmetic(void **state)
{
    (void)state;
    /* twice as fast with twice Titan's 14,000 instances: 2 x 2 */
    assert_true(fabs(suite_throughput_fom(1.0, 0.5, 28000) - 4.0) < 1e-12);
    assert_true(suite_throughput_fom(1.0, 0.5, 0) == 0);
    assert_true(suite_throughput_fom(1.0, 0, 100) == 0);
    /* ResNet: (t_ref / t) x 10, and the optimized run's accuracy term */
    assert_true(fabs(suite_resnet_fom(100, 50, 0) - 20) < 1e-12);
    assert_true(fabs(suite_resnet_accuracy_term(74.9) - 1) < 1e-12);
    assert_true(fabs(suite_resnet_accuracy_term(100) - 2) < 1e-12);
    const double x = (77.41 - 74.9) / 25.1; /* 0.1 */
    assert_true(fabs(suite_resnet_fom(100, 50, 77.41) - 20 * (1 + x * x * x)) < 1e-9);
    /* a group: the geometric mean; one benchmark that does not run makes it 0 */
    const double four[] = {1, 2, 4, 8};
    assert_true(fabs(suite_group_fom(four, 4) - pow(64, 0.25)) < 1e-12);
    const double with_zero[] = {1, 0, 4};
    assert_true(suite_group_fom(with_zero, 3) == 0);
    /* the overall: weights 5, 1, 2, 5 */
    const double g[SUITE_GROUP_COUNT] = {1, 13, 0, 0};
    assert_true(fabs(suite_overall_fom(g) - 18.0 / 13.0) < 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_table),
        cmocka_unit_test(test_fom_arithmetic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
