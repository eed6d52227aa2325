/* tests/testutil.h — small helpers shared by the unit tests: a seeded RNG and array
 * fillers (so every test is deterministic), checked allocation, and a tolerance compare
 * that prints got/ref/index for the first failures instead of a bare "false". */
#ifndef DLPERF_TESTUTIL_H
#define DLPERF_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t state;
} TuRng;

TuRng tu_rng(uint64_t seed);
uint64_t tu_rng_u64(TuRng *r);
double tu_rng_uniform(TuRng *r); /* [0, 1) */
size_t tu_rng_below(TuRng *r, size_t n); /* [0, n) */

/* x[i] uniform in [lo, hi). */
void tu_fill_uniform(float *x, size_t n, float lo, float hi, uint64_t seed);
/* x[i] uniform in [margin, hi) with a random sign: keeps values away from a kink at 0. */
void tu_fill_margin(float *x, size_t n, float margin, float hi, uint64_t seed);
/* x = a random permutation of lo, lo+step, ..., lo+(n-1)*step: all distinct, every two
 * at least `step` apart (max-pool gradient checks need a unique, stable argmax). */
void tu_fill_distinct(float *x, size_t n, float lo, float step, uint64_t seed);
void tu_fill_const(float *x, size_t n, float v);
/* labels[i] uniform in [0, classes). */
void tu_fill_labels(int32_t *labels, size_t n, int classes, uint64_t seed);

/* Checked allocation (aborts with file:line and the size asked for); zero-filled. */
#define tu_floats(n) tu_floats_at((n), __FILE__, __LINE__)
#define tu_doubles(n) tu_doubles_at((n), __FILE__, __LINE__)
float *tu_floats_at(size_t n, const char *file, int line);
double *tu_doubles_at(size_t n, const char *file, int line);
float *tu_dup(const float *x, size_t n);

/* true when |got[i] - ref[i]| <= atol + rtol * |ref[i]| for all i; otherwise prints
 * "what: index i got G ref R" for the first few failures and the count, returns false. */
bool tu_close(const char *what, const float *got, const double *ref, size_t n, double atol,
              double rtol);
bool tu_close_f(const char *what, const float *got, const float *ref, size_t n, double atol,
                double rtol);

/* Central finite differences of a scalar objective (STYLE habit 9). For `samples` sampled
 * indices i of x (all when samples >= n) compares grad[i] with
 * (L(x + eps e_i) - L(x - eps e_i)) / (x_i^+ - x_i^-), the perturbed values as stored in
 * fp32; obj(ctx) must recompute L in double from the current x. Restores x. */
typedef double (*TuObjective)(void *ctx);
bool tu_grad_check(const char *what, float *x, size_t n, const float *grad, TuObjective obj,
                   void *ctx, int samples, uint64_t seed, double eps, double atol,
                   double rtol);

#endif
