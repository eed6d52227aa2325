/* tests/testutil.c — seeded fillers, checked allocation, tolerance compares and a central
 * finite-difference gradient checker for the unit tests (see testutil.h). */
#include "tests/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TuRng tu_rng(uint64_t seed)
{
    return (TuRng){.state = seed * 0x2545F4914F6CDD1Dull + 0x9E3779B97F4A7C15ull};
}

/* splitmix64 */
uint64_t tu_rng_u64(TuRng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double tu_rng_uniform(TuRng *r)
{
    return (double)(tu_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
}

size_t tu_rng_below(TuRng *r, size_t n)
{
    return n ? (size_t)(tu_rng_u64(r) % n) : 0;
}

void tu_fill_uniform(float *x, size_t n, float lo, float hi, uint64_t seed)
{
    TuRng r = tu_rng(seed);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(lo + (hi - lo) * tu_rng_uniform(&r));
}

void tu_fill_margin(float *x, size_t n, float margin, float hi, uint64_t seed)
{
    TuRng r = tu_rng(seed);
    for (size_t i = 0; i < n; i++) {
        const double v = margin + (hi - margin) * tu_rng_uniform(&r);
        x[i] = (float)((tu_rng_u64(&r) & 1) ? v : -v);
    }
}

void tu_fill_distinct(float *x, size_t n, float lo, float step, uint64_t seed)
{
    TuRng r = tu_rng(seed);
    for (size_t i = 0; i < n; i++)
        x[i] = lo + step * (float)i;
    for (size_t i = n; i > 1; i--) { /* Fisher-Yates */
        const size_t j = tu_rng_below(&r, i);
        const float t = x[i - 1];
        x[i - 1] = x[j];
        x[j] = t;
    }
}

void tu_fill_const(float *x, size_t n, float v)
{
    for (size_t i = 0; i < n; i++)
        x[i] = v;
}

void tu_fill_labels(int32_t *labels, size_t n, int classes, uint64_t seed)
{
    TuRng r = tu_rng(seed);
    for (size_t i = 0; i < n; i++)
        labels[i] = (int32_t)tu_rng_below(&r, (size_t)classes);
}

static void *tu_calloc_at(size_t n, size_t size, const char *file, int line)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "%s:%d: out of memory allocating %zu x %zu bytes\n", file, line, n, size);
        abort();
    }
    return p;
}

float *tu_floats_at(size_t n, const char *file, int line)
{
    return tu_calloc_at(n, sizeof(float), file, line);
}

double *tu_doubles_at(size_t n, const char *file, int line)
{
    return tu_calloc_at(n, sizeof(double), file, line);
}

float *tu_dup(const float *x, size_t n)
{
    float *y = tu_floats(n);
    memcpy(y, x, n * sizeof(float));
    return y;
}

enum { TU_SHOW = 5 };

bool tu_close(const char *what, const float *got, const double *ref, size_t n, double atol,
              double rtol)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const double tol = atol + rtol * fabs(ref[i]);
        if (!(fabs((double)got[i] - ref[i]) <= tol)) {
            if (bad < TU_SHOW)
                fprintf(stderr, "  %s: index %zu got %.9g ref %.9g (|diff| %.3g > tol %.3g)\n",
                        what, i, (double)got[i], ref[i], fabs((double)got[i] - ref[i]), tol);
            bad++;
        }
    }
    if (bad)
        fprintf(stderr, "  %s: %zu of %zu elements out of tolerance\n", what, bad, n);
    return bad == 0;
}

bool tu_close_f(const char *what, const float *got, const float *ref, size_t n, double atol,
                double rtol)
{
    double *r = tu_doubles(n);
    for (size_t i = 0; i < n; i++)
        r[i] = ref[i];
    const bool ok = tu_close(what, got, r, n, atol, rtol);
    free(r);
    return ok;
}

bool tu_grad_check(const char *what, float *x, size_t n, const float *grad, TuObjective obj,
                   void *ctx, int samples, uint64_t seed, double eps, double atol,
                   double rtol)
{
    TuRng r = tu_rng(seed);
    const size_t count = (size_t)samples >= n ? n : (size_t)samples;
    size_t bad = 0;
    for (size_t s = 0; s < count; s++) {
        const size_t i = count == n ? s : tu_rng_below(&r, n);
        const float save = x[i];
        const float xp = (float)(save + eps), xm = (float)(save - eps);
        x[i] = xp;
        const double lp = obj(ctx);
        x[i] = xm;
        const double lm = obj(ctx);
        x[i] = save;
        const double fd = (lp - lm) / ((double)xp - (double)xm);
        const double tol = atol + rtol * fabs(fd);
        if (!(fabs((double)grad[i] - fd) <= tol)) {
            if (bad < TU_SHOW)
                fprintf(stderr, "  %s: index %zu analytic %.9g finite-diff %.9g (tol %.3g)\n",
                        what, i, (double)grad[i], fd, tol);
            bad++;
        }
    }
    if (bad)
        fprintf(stderr, "  %s: %zu of %zu sampled gradients out of tolerance\n", what, bad,
                count);
    return bad == 0;
}
