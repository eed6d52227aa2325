/* tests/test_denormals.c — ops_flush_denormals (its own binary: it changes the process's
 * floating-point mode). After the call, a denormal operand counts as 0 on the calling
 * thread, in the kernels' OpenMP threads and in OpenBLAS's worker threads (libgomp's pool
 * with the OpenMP build dlperf links, started by the GEMM before the call here). Denormal
 * results cost ~25x per step on the Xeon VM this was written on (basic-lstm, 1 thread:
 * 29.4 s -> 1.15 s). */
#include <float.h>
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "ops/ops.h"
#include "tests/testutil.h"

/* C = A B with A all denormal (1e-39 < FLT_MIN) and B = 0.5: with DAZ every product is
 * 0, without it each is a denormal, computed ~150x slower (OpenBLAS 0.3.21 SkylakeX, this
 * VM: 1.64 s against 9.7 ms for 128x4096x2048). n large enough that OpenBLAS splits it
 * over its threads. Counts the nonzero results. */
static size_t denormal_gemm_nonzeros(int n)
{
    float *a = tu_floats((size_t)n * n), *b = tu_floats((size_t)n * n), *c = tu_floats((size_t)n * n);
    for (size_t i = 0; i < (size_t)n * n; i++)
        a[i] = 1e-39f, b[i] = 0.5f;
    OpDesc g = op_gemm(PHASE_FWD, n, n, n, false, false, 0.0f);
    void *bufs[] = {c, a, b};
    op_run(&g, bufs, NULL);
    size_t nz = 0;
    for (size_t i = 0; i < (size_t)n * n; i++)
        nz += c[i] != 0.0f;
    free(a), free(b), free(c);
    return nz;
}

static void test_denormals_flushed_on_every_thread(void **state)
{
    (void)state;
    ops_set_threads(2);
    /* before: OpenBLAS's workers exist already (the GEMM started them), and the
     * products are denormal, not zero */
    volatile float tiny = 1e-39f, half = 0.5f;
    assert_true(tiny * half > 0.0f);
    assert_true(denormal_gemm_nonzeros(512) > 0);

    ops_flush_denormals();
    assert_true(tiny * half == 0.0f); /* this thread */
    int omp_nonzero = 0;
#pragma omp parallel num_threads(2) reduction(+ : omp_nonzero)
    omp_nonzero += (tiny * half) != 0.0f; /* the kernels' OpenMP threads */
    assert_int_equal(omp_nonzero, 0);
    assert_int_equal(denormal_gemm_nonzeros(512), 0); /* OpenBLAS's threads too */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_denormals_flushed_on_every_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
