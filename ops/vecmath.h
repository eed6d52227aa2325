/* ops/vecmath.h — sqrt, exp, log, sigmoid and tanh for fp32 written as branch-free arithmetic,
 * so the element-wise loops that use them vectorise. Why not libm: the build keeps
 * -fmath-errno (no fast-math anywhere), under which GCC turns sqrtf into a call guarded by
 * an errno branch and never vectorises expf/tanhf; glibc's scalar tanhf then costs ~13 ns
 * and expf ~3 ns per element on the development machine, which made the LSTM cell and
 * RMSprop (0.3 G updates/s against 2.8 G/s for SGD) compute-bound by an order of magnitude.
 * Accuracy, measured against double on dense grids over the whole useful range (and
 * re-checked in tests/test_ops.c): sqrt 3.6 ulp (2.2e-7 relative), exp 1.3 ulp, sigmoid
 * 2.5 ulp, tanh 2.1 ulp, log 1.3 ulp (of max(|log x|, 1) over all normal x, and relative
 * on [0.5, 2)). IEEE special cases are not all honoured (see each function);
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

/* erf(x) by Abramowitz and Stegun 7.1.26: 1 - t (a1 + t (a2 + ...)) exp(-x^2) with
 * t = 1 / (1 + p |x|), the sign put back; absolute error below 1.5e-7 (and exp's own), which
 * is what GELU's 1 + erf needs (it is never relative to a tiny erf). */
static inline float vm_erf(float x)
{
    const float ax = __builtin_fabsf(x);
    const float t = 1.0f / (1.0f + 0.3275911f * ax);
    float p = 1.061405429f;
    p = p * t - 1.453152027f;
    p = p * t + 1.421413741f;
    p = p * t - 0.284496736f;
    p = p * t + 0.254829592f;
    const float r = 1.0f - p * t * vm_exp(-ax * ax);
    return __builtin_copysignf(r, x);
}

#endif
