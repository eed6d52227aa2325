/* tests/test_parallel.c — model parallelism: seed 003's SUMMA example (n = 2000, 15 TFLOP/s:
 * p = 10 needs 300 GB/s, p = 1 30 GB/s) and the pipeline model (balanced stages, the bubble,
 * boundary transfers, uneven layers, the limits). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>

#include "predictor/parallel.h"

static void test_summa_seed003(void **state)
{
    SummaEstimate e;
    summa_estimate(2000, 10, 15e12, 300e9, 4, &e);
    assert_float_equal(e.beta_needed_Bps, 300e9, 1);
    assert_float_equal(e.compute_s, 2 * 8e9 / (100 * 15e12), 1e-15);
    assert_float_equal(e.data_s, 2 * 4e6 * 4 / (10 * 300e9), 1e-15);
    assert_true(e.compute_bound); /* exactly at the limit */
    summa_estimate(2000, 1, 15e12, 30e9, 4, &e);
    assert_float_equal(e.beta_needed_Bps, 30e9, 1);
    summa_estimate(2000, 10, 15e12, 100e9, 4, &e);
    assert_false(e.compute_bound);
    assert_true(e.data_s > e.compute_s);
}

static void test_pipeline_balanced(void **state)
{
    double t[8], out[8];
    for (int i = 0; i < 8; i++)
        t[i] = 1e-3, out[i] = 1e6;
    LinkParams link = {.alpha_s = 1e-6, .beta_Bps = 1e10};
    PipelineEstimate p;
    assert_int_equal(pipeline_estimate(t, out, 8, 4e-3, 4, 8, &link, &p), 0);
    assert_int_equal(p.stages, 4);
    for (int s = 0; s < 4; s++) {
        assert_int_equal(p.first_layer[s], 2 * s);
        assert_float_equal(p.stage_s[s], 2e-3, 1e-12);
    }
    assert_float_equal(p.transfer_s, 2 * (1e-6 + 1e-4), 1e-12);
    assert_float_equal(p.bubble_fraction, 3.0 / 11, 1e-12);
    assert_float_equal(p.iter_s, 11 * (2e-3 + p.transfer_s) + 1e-3, 1e-12);
    /* one stage: no bubble, no transfer, the whole model per micro-batch */
    assert_int_equal(pipeline_estimate(t, out, 8, 4e-3, 1, 8, &link, &p), 0);
    assert_float_equal(p.bubble_fraction, 0, 0);
    assert_float_equal(p.iter_s, 8 * 8e-3 + 4e-3, 1e-12);
    /* more micro-batches shrink the bubble */
    PipelineEstimate a, b;
    pipeline_estimate(t, out, 8, 0, 4, 4, &link, &a);
    pipeline_estimate(t, out, 8, 0, 4, 32, &link, &b);
    assert_true(b.bubble_fraction < a.bubble_fraction);
}

static void test_pipeline_uneven(void **state)
{
    /* one heavy layer: it gets a stage to itself and bounds the slot */
    double t[6] = {1, 1, 6, 1, 1, 1}, out[6] = {0};
    LinkParams link = {.alpha_s = 0, .beta_Bps = 1e12};
    PipelineEstimate p;
    assert_int_equal(pipeline_estimate(t, out, 6, 0, 3, 4, &link, &p), 0);
    assert_int_equal(p.stages, 3);
    double slowest = 0;
    for (int s = 0; s < 3; s++)
        slowest = fmax(slowest, p.stage_s[s]);
    assert_float_equal(slowest, 6, 1e-9);
    assert_int_equal(pipeline_estimate(t, out, 6, 0, 7, 4, &link, &p), -1); /* more stages than layers */
    assert_int_equal(pipeline_estimate(t, out, 6, 0, 0, 4, &link, &p), -1);
    /* stages are always asked-for count when layers allow: 6 even layers, 6 stages */
    double e[6] = {1, 1, 1, 1, 1, 1};
    assert_int_equal(pipeline_estimate(e, out, 6, 0, 6, 2, &link, &p), 0);
    assert_int_equal(p.stages, 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summa_seed003),
        cmocka_unit_test(test_pipeline_balanced),
        cmocka_unit_test(test_pipeline_uneven),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
