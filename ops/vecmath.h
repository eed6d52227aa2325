/* ops/vecmath.h — sqrt, exp, log, sigmoid, tanh, and the normal CDF and density (GELU's),
 * for fp32 written as branch-free arithmetic, so the element-wise loops that use them
 * vectorise. Why not libm: the build keeps
 * -fmath-errno (no fast-math anywhere), under which GCC turns sqrtf into a call guarded by
 * an errno branch and never vectorises expf/tanhf; glibc's scalar tanhf then costs ~13 ns
 * and expf ~3 ns per element on the development machine, which made the LSTM cell and
 * RMSprop (0.3 G updates/s against 2.8 G/s for SGD) compute-bound by an order of magnitude.
 * Accuracy, measured against double on dense grids over the whole useful range (and
 * re-checked in tests/test_ops.c): sqrt 3.6 ulp (2.2e-7 relative), exp 1.3 ulp, sigmoid
 * 2.5 ulp, tanh 2.1 ulp, log 1.3 ulp (of max(|log x|, 1) over all normal x, and relative
 * on [0.5, 2)), normal CDF 8.5 ulp and density 3.5 ulp (relative, x in [-13, 9]). IEEE
 * special cases are not all honoured (see each function);
 * the callers do not need them.
 */
#ifndef DLPERF_OPS_VECMATH_H
#define DLPERF_OPS_VECMATH_H

#include <stdint.h>
#include <string.h>

static inline float vm_bits_to_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t vm_float_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* sqrt(a) for a >= 0 (RMSprop's accumulator): the classic bit-level estimate of
 * 1/sqrt(a) (3.4% error) refined by three Newton steps, then a * (1/sqrt(a)). a = 0 gives
 * exactly 0. Subnormal a is inaccurate (it is then far below any RMSprop epsilon); negative
 * or NaN a gives garbage instead of NaN. */
static inline float vm_sqrt(float a)
{
    float y = vm_bits_to_float(0x5f375a86u - (vm_float_to_bits(a) >> 1));
    const float h = 0.5f * a;
    y = y * (1.5f - h * y * y);
    y = y * (1.5f - h * y * y);
    y = y * (1.5f - h * y * y);
    return a * y;
}

/* exp(x), Cephes expf: x = n ln2 + r with |r| <= ln2/2, e^r by a degree-6 polynomial,
 * 2^n put into the exponent bits. x is clamped to [-87.3, 88], which keeps n in the
 * normal exponent range [-126, 127], so the result is never inf or subnormal (exp of a
 * large argument saturates at ~1.65e38, of a very negative one at ~1.2e-38). NaN gives a
 * finite garbage value. Round-to-nearest of x/ln2 uses the 1.5*2^23 trick (no floorf,
 * which SSE2 cannot vectorise).
 * The clamps are integer minima of the bit pattern: as signed integers the bits order
 * x >= 0 numerically (and every x < 0 below them), as unsigned they order x < 0 by
 * magnitude (and every x >= 0 below them). A float compare-and-select here would become a
 * branch that GCC, under -ftrapping-math, refuses to if-convert for SSE/AVX2. */
static inline float vm_exp(float x)
{
    int32_t ix = (int32_t)vm_float_to_bits(x);
    ix = ix < 0x42b00000 ? ix : 0x42b00000;            /* min(x, 88) */
    uint32_t ux = (uint32_t)ix;
    ux = ux < 0xc2ae999au ? ux : 0xc2ae999au;          /* max(x, -87.3) */
    x = vm_bits_to_float(ux);
    const float shift = 12582912.0f; /* 1.5 * 2^23 */
    const float n = (x * 1.44269504088896341f + shift) - shift;
    /* ln 2 split in two so n * ln2_hi is exact */
    const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const float er = p * (r * r) + r + 1.0f;
    return er * vm_bits_to_float((uint32_t)((int32_t)n + 127) << 23);
}

/* log(x) for normal x > 0 (LRN's scale >= k > 0), the Cephes logf scheme in musl's
 * branch-free reduction: x = 2^e * m with m in [sqrt(1/2), sqrt(2)) found by integer
 * arithmetic on the bits (no frexpf), log(1 + f) for f = m - 1 by Cephes' degree-8
 * polynomial, and e*ln2 added with ln2 split in two. Zero, negative, subnormal, inf or
 * NaN x gives a finite garbage value. */
static inline float vm_log(float x)
{
    uint32_t ix = vm_float_to_bits(x) + (0x3f800000u - 0x3f3504f3u);
    const float e = (float)((int32_t)(ix >> 23) - 127);
    const float f = vm_bits_to_float((ix & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
    const float z = f * f;
    float p = 7.0376836292e-2f;
    p = p * f - 1.1514610310e-1f;
    p = p * f + 1.1676998740e-1f;
    p = p * f - 1.2420140846e-1f;
    p = p * f + 1.4249322787e-1f;
    p = p * f - 1.6668057665e-1f;
    p = p * f + 2.0000714765e-1f;
    p = p * f - 2.4999993993e-1f;
    p = p * f + 3.3333331174e-1f;
    float y = f * z * p;
    y += e * -2.12194440e-4f;
    y += -0.5f * z;
    return f + y + e * 0.693359375f;
}

/* 1 / (1 + exp(-x)); saturates to ~3e-39 below x = -88 and to 1 above x = 17. */
static inline float vm_sigmoid(float x)
{
    return 1.0f / (1.0f + vm_exp(-x));
}

/* tanh(x): for |x| < 0.625 the Cephes odd polynomial x + x^3 P(x^2) (no cancellation
 * near 0), elsewhere 1 - 2/(exp(2|x|) + 1) with the sign put back; both are computed and
 * one is selected by a bit mask, which keeps the loop branch-free.
 * Saturates to +-1 beyond |x| ~ 9. */
static inline float vm_tanh(float x)
{
    const float ax = __builtin_fabsf(x);
    const float z = x * x;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    const float small = x + x * z * p;
    const float big = __builtin_copysignf(1.0f - 2.0f / (vm_exp(2.0f * ax) + 1.0f), x);
    /* a bitwise blend, not ?: on floats, which GCC would turn back into a branch around
     * the division (see vm_exp) */
    const uint32_t use_small = (uint32_t)0 - (uint32_t)((int32_t)vm_float_to_bits(ax) < 0x3f200000);
    return vm_bits_to_float((vm_float_to_bits(small) & use_small) |
                            (vm_float_to_bits(big) & ~use_small));
}

/* exp(c - scale t^2) for t >= 0 and scale 1 or 1/2, without rounding t^2 in float (at
 * t^2 / 2 = 40 its ulp, 3.8e-6, is 64 ulp of the result): t is split into th, its leading
 * 12 significant bits (a mask of the bits, which no multiply-add contraction can undo),
 * and tl = t - th, so th^2 is exact, and the result is exp(-scale th^2) times
 * exp(c - scale (2 th + tl) tl): two exps of exact or small arguments. */
static inline float vm_exp_neg_sq(float t, float scale, float c)
{
    const float th = vm_bits_to_float(vm_float_to_bits(t) & 0xfffff000u), tl = t - th;
    return vm_exp(-(th * th) * scale) * vm_exp(c - (2.0f * th + tl) * tl * scale);
}

/* erfc(a / sqrt 2) for a >= 0, by Numerical Recipes' erfcc (2nd ed., section 6.2; a
 * Chebyshev fit with fractional error below 1.2e-7 for every z >= 0, 1.05e-7 the largest on
 * a 1e-4 grid over [0, 9] against libm in double): z = a / sqrt 2, t = 1/(1 + z/2),
 * erfc(z) = t exp(-z^2 + P(t)), with z^2 = a^2 / 2 taken from a itself (vm_exp_neg_sq), as
 * rounding z alone costs 2 z^2 ulp of the result. Relative accuracy holds in the tail,
 * where 1 - erf would cancel, until the result falls below vm_exp's floor (~1e-38, a
 * beyond ~13). */
static inline float vm_erfc_over_sqrt2(float a)
{
    const float t = 1.0f / (1.0f + 0.35355339059327376f * a);
    float p = 0.17087277f;
    p = p * t - 0.82215223f;
    p = p * t + 1.48851587f;
    p = p * t - 1.13520398f;
    p = p * t + 0.27886807f;
    p = p * t - 0.18628806f;
    p = p * t + 0.09678418f;
    p = p * t + 0.37409196f;
    p = p * t + 1.00002368f;
    p = p * t - 1.26551223f;
    return t * vm_exp_neg_sq(a, 0.5f, p);
}

/* Phi(x) = 0.5 (1 + erf(x / sqrt 2)), the standard normal CDF, as 0.5 erfc(|x| / sqrt 2)
 * for x < 0 and 1 - that for x >= 0: relative accuracy in the lower tail (GELU's x Phi(x)
 * for negative x), absolute near 1. The two are blended by the sign bit (see vm_tanh). */
static inline float vm_normal_cdf(float x)
{
    const float half_erfc = 0.5f * vm_erfc_over_sqrt2(__builtin_fabsf(x));
    const float upper = 1.0f - half_erfc;
    const uint32_t neg = (uint32_t)0 - (vm_float_to_bits(x) >> 31);
    return vm_bits_to_float((vm_float_to_bits(half_erfc) & neg) | (vm_float_to_bits(upper) & ~neg));
}

/* phi(x) = exp(-x^2 / 2) / sqrt(2 pi), the standard normal density. */
static inline float vm_normal_pdf(float x)
{
    return 0.39894228040143268f * vm_exp_neg_sq(__builtin_fabsf(x), 0.5f, 0.0f);
}

#endif
