/* tests/test_gpu.c — the GPU pricing of predictor/: the kernel forms, their fit, a device's
 * evidence (exact and fitted), the transfer between devices on a small synthetic set of
 * devices (each device's times made by the forms from one set of parameters in its own
 * sheet's units, so a transfer that works recovers a left-out device), and the order of
 * evidence (own, transfer, similar, this CPU's efficiency, roofline). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predictor/device_evidence.h"
#include "predictor/device_price.h"
#include "predictor/device_profile.h"
#include "predictor/device_transfer.h"
#include "predictor/framework.h"
#include "predictor/gpu_model.h"
#include "predictor/whatif.h"
#include "models/plan.h"
#include "models/zoo_build.h"
#include "tests/testutil.h"
#include "verify/evidence_check.h"

static GpuSheet sheet(double tflops, double gbs, int sms)
{
    return (GpuSheet){.peak_flops = tflops * 1e12, .bw_Bps = gbs * 1e9, .l2_bytes = 40.0 * 1048576, .sms = sms,
                      .byte_scale = 1.0};
}

/* the parameters every synthetic device's times are made with */
static void truth_params(GpuForm f, double *p)
{
    for (int i = 0; i < gpu_form_nparams(f); i++) {
        double lo, hi, start;
        gpu_param_bounds(f, i, &lo, &hi, &start);
        p[i] = start;
    }
    if (f == GF_TILES) {
        p[gpu_param_index(f, "u")] = 0.85;
        p[gpu_param_index(f, "s")] = 1.0; /* no power limit */
    }
}

/* The true parameters on sheet h: a tile's pipeline fill is a latency, so the reduction
 * steps it costs grow with the SM's rate (16 steps at 180 GFLOP/s per SM). */
static void truth_on(const GpuSheet *h, GpuForm f, double *p)
{
    truth_params(f, p);
    if (f == GF_TILES)
        p[gpu_param_index(f, "k0")] = 16.0 * (h->peak_flops / h->sms) / 180e9;
}

static double noisy(double t, TuRng *r) { return t * (1.0 + 0.02 * (tu_rng_uniform(r) - 0.5)); }

static void test_forms_are_sane(void **state)
{
    (void)state;
    const GpuSheet h = sheet(19.5, 1555, 108);
    double p[GPU_PARAMS_MAX];
    truth_params(GF_TILES, p);
    GpuShape s;
    double prev = 0;
    for (int n = 256; n <= 8192; n *= 2) { /* a larger GEMM takes longer, at most the peak's speed */
        const OpDesc d = op_gemm(PHASE_FWD, n, n, n, false, false, 0.0f);
        assert_true(gpu_shape(&d, 1.0, &s));
        assert_int_equal(s.form, GF_TILES);
        const double t = gpu_model_time(&s, &h, p);
        assert_true(t > prev);
        assert_true(t >= s.flops / h.peak_flops);
        prev = t;
    }
    /* one more tile row than the SMs hold makes a second wave */
    const OpDesc a = op_bmm(PHASE_FWD, 108, 128, 128, 1024, false, false, 0.0f);
    const OpDesc b = op_bmm(PHASE_FWD, 109, 128, 128, 1024, false, false, 0.0f);
    GpuShape sa, sb;
    gpu_shape(&a, 1.0, &sa);
    gpu_shape(&b, 1.0, &sb);
    assert_true(gpu_model_time(&sb, &h, p) > 1.5 * gpu_model_time(&sa, &h, p));
    /* a memory-bound op follows the bandwidth */
    double q[GPU_PARAMS_MAX];
    truth_params(GF_STREAM, q);
    const OpDesc e = op_binary(PHASE_FWD, BIN_ADD, (size_t)1 << 28);
    assert_true(gpu_shape(&e, 1.0, &s));
    assert_int_equal(s.form, GF_STREAM);
    const double te = gpu_model_time(&s, &h, q);
    assert_true(te > s.bytes / h.bw_Bps && te < 3 * s.bytes / h.bw_Bps);
    /* half precision moves half the bytes */
    GpuShape s2;
    gpu_shape(&e, 0.5, &s2);
    assert_true(fabs(s2.bytes - 0.5 * s.bytes) < 1.0);
    /* the microbenchmark-only kinds have no form */
    const OpDesc m = op_peak_fma(1, 192);
    assert_false(gpu_shape(&m, 1.0, &s));
}

/* times of a set of GEMMs and element-wise ops on sheet h, made by the forms at the true
 * parameters (the GEMMs' efficiency u), 2% noise */
static DeviceEvidence *synthetic_device_p(const char *name, const GpuSheet *h, uint64_t seed, bool stream_too, double u,
                                          double s_power)
{
    DeviceEvidence *e = dev_ev_new(name, h);
    TuRng r = tu_rng(seed);
    double p[GPU_PARAMS_MAX], q[GPU_PARAMS_MAX];
    truth_on(h, GF_TILES, p);
    p[gpu_param_index(GF_TILES, "u")] = u;
    p[gpu_param_index(GF_TILES, "s")] = s_power;
    truth_params(GF_STREAM, q);
    for (int i = 0; i < 300; i++) {
        const int m = 32 << tu_rng_below(&r, 7), n = 32 << tu_rng_below(&r, 7), k = 32 << tu_rng_below(&r, 7);
        const OpDesc d = op_gemm(PHASE_FWD, m, n, k, false, false, 0.0f);
        GpuShape s;
        gpu_shape(&d, 1.0, &s);
        assert_int_equal(dev_ev_add(e, &d, noisy(gpu_model_time(&s, h, p), &r), 0, 0, false), 0);
    }
    for (int i = 0; stream_too && i < 40; i++) {
        const OpDesc d = op_binary(PHASE_FWD, BIN_ADD, (size_t)1 << (10 + i % 18));
        GpuShape s;
        gpu_shape(&d, 1.0, &s);
        assert_int_equal(dev_ev_add(e, &d, noisy(gpu_model_time(&s, h, q), &r), 0, 0, false), 0);
    }
    dev_ev_fit(e);
    return e;
}

static DeviceEvidence *synthetic_device_u(const char *name, const GpuSheet *h, uint64_t seed, bool stream_too, double u)
{
    return synthetic_device_p(name, h, seed, stream_too, u, 1.0);
}

static DeviceEvidence *synthetic_device(const char *name, const GpuSheet *h, uint64_t seed, bool stream_too)
{
    return synthetic_device_u(name, h, seed, stream_too, 0.85);
}

/* A synthetic device's sheet: an HBM2 board of 300 W, 5 us launches. */
static DeviceSpec synthetic_spec(const char *name, int year, int sms, double gbs, double l2_mib, double fp32_tflops)
{
    DeviceSpec dev = {.gpu = true, .year = year, .sm_count = sms, .mem_Bps = gbs * 1e9, .l2_bytes = l2_mib * 1048576,
                      .launch_s = 5e-6, .tdp_w = 300};
    snprintf(dev.name, sizeof dev.name, "%s", name);
    snprintf(dev.memory_type, sizeof dev.memory_type, "HBM2");
    dev.peak_flops[PREC_FP32] = fp32_tflops * 1e12;
    return dev;
}

static void test_own_evidence_exact_and_fitted(void **state)
{
    (void)state;
    const GpuSheet h = sheet(14, 900, 80);
    DeviceEvidence *e = synthetic_device("synth-a", &h, 7, true);
    const GpuGroupFit *g = dev_ev_group(e, "gemm");
    assert_non_null(g);
    assert_true(g->fit_err < 0.03); /* the forms recover their own times */
    /* a measured key is priced by its measurement */
    const OpDesc d = op_gemm(PHASE_FWD, 100, 200, 300, false, false, 0.0f);
    assert_int_equal(dev_ev_add(e, &d, 1.234e-3, 0, 0, false), 0);
    dev_ev_fit(e);
    double t, lo, hi;
    EvSource src;
    assert_int_equal(dev_ev_price(e, &d, false, &t, &lo, &hi, &src), 0);
    assert_int_equal(src, EV_EXACT);
    assert_true(fabs(t - 1.234e-3) < 1e-12 && lo <= t && t <= hi);
    /* a backward key is the same kernel whatever its accumulate flag says */
    char k1[OP_KEY_MAX], k2[OP_KEY_MAX];
    OpDesc c = op_conv2d(PHASE_BWD_DATA, 8, 16, 14, 14, 32, 3, 3, 1, PAD_SAME, 1), c2 = c;
    c2.u.conv.accumulate = false;
    dev_ev_key(&c, k1);
    dev_ev_key(&c2, k2);
    assert_string_equal(k1, k2);
    /* an unseen shape is fitted, within a few percent of the truth */
    const OpDesc u = op_gemm(PHASE_FWD, 1500, 700, 2500, false, false, 0.0f);
    assert_int_equal(dev_ev_price(e, &u, false, &t, &lo, &hi, &src), 0);
    assert_int_equal(src, EV_FITTED);
    double p[GPU_PARAMS_MAX];
    truth_on(&h, GF_TILES, p);
    GpuShape s;
    gpu_shape(&u, 1.0, &s);
    const double want = gpu_model_time(&s, &h, p);
    if (fabs(t / want - 1) > 0.05)
        fail_msg("unseen GEMM fitted %.4g s, truth %.4g s", t, want);
    /* a group the device never measured: not its evidence */
    const OpDesc ln = op_layernorm(PHASE_FWD, 1024, 768, 1e-5f);
    assert_int_equal(dev_ev_price(e, &ln, false, &t, &lo, &hi, &src), 1);
    dev_ev_free(e);
}

static void features_w(double tflops, double gbs, int sms, int year, double tdp_w, double f[TF_COUNT])
{
    DeviceSpec d = {.gpu = true, .year = year, .sm_count = sms, .mem_Bps = gbs * 1e9, .l2_bytes = 40.0 * 1048576,
                    .tdp_w = tdp_w};
    d.peak_flops[PREC_FP32] = tflops * 1e12;
    snprintf(d.memory_type, sizeof d.memory_type, "HBM2");
    transfer_features(&d, f);
}

static void features_of(double tflops, double gbs, int sms, int year, double f[TF_COUNT])
{
    features_w(tflops, gbs, sms, year, 300, f);
}

static void test_transfer_recovers_a_left_out_device(void **state)
{
    (void)state;
    /* four devices whose times all follow the same parameters in their own sheet's units */
    static const struct {
        const char *name;
        double tflops, gbs;
        int sms, year;
    } devs[] = {{"synth-p", 9.3, 732, 56, 2016}, {"synth-v", 14, 900, 80, 2017}, {"synth-a", 19.5, 1555, 108, 2020},
                {"synth-h", 60, 3350, 132, 2022}};
    TransferPool *pool = tp_new();
    for (size_t i = 0; i < 3; i++) {
        const GpuSheet h = sheet(devs[i].tflops, devs[i].gbs, devs[i].sms);
        double f[TF_COUNT];
        features_of(devs[i].tflops, devs[i].gbs, devs[i].sms, devs[i].year, f);
        assert_int_equal(tp_add(pool, synthetic_device(devs[i].name, &h, 100 + i, true), f, ""), 0);
    }
    /* the fourth has no evidence: its GEMMs come from the other three's, carried by its sheet */
    const GpuSheet h4 = sheet(devs[3].tflops, devs[3].gbs, devs[3].sms);
    double f4[TF_COUNT];
    features_of(devs[3].tflops, devs[3].gbs, devs[3].sms, devs[3].year, f4);
    GpuGroupFit g;
    TransferInfo info;
    assert_int_equal(tp_params(pool, "gemm", f4, "", NULL, &g, &info), 0);
    assert_int_equal(info.sources, 3);
    assert_true(info.loo_err < 0.05); /* each of the three predicted from the other two */
    double p[GPU_PARAMS_MAX];
    truth_on(&h4, GF_TILES, p);
    TuRng r = tu_rng(5);
    double err = 0;
    for (int i = 0; i < 50; i++) {
        const OpDesc d = op_gemm(PHASE_FWD, 64 << tu_rng_below(&r, 6), 64 << tu_rng_below(&r, 6),
                                 64 << tu_rng_below(&r, 6), false, false, 0.0f);
        GpuShape s;
        gpu_shape(&d, 1.0, &s);
        err += fabs(gpu_model_time(&s, &h4, g.p) / gpu_model_time(&s, &h4, p) - 1);
    }
    if (err / 50 > 0.05)
        fail_msg("transferred GEMMs %.1f%% off the left-out device's truth", 100 * err / 50);
    /* leaving a device out: it is not among the sources, and its own fit is not used */
    assert_int_equal(tp_params(pool, "gemm", f4, "", "synth-a", &g, &info), 0);
    assert_int_equal(info.sources, 2);
    assert_string_not_equal(info.nearest, "synth-a");
    /* a group no device has */
    assert_int_equal(tp_params(pool, "layernorm fwd", f4, "", NULL, &g, &info), 1);
    tp_free(pool);
}

/* A target whose architecture the pool lacks learns its reach with each device's siblings
 * left out with it: two boards of one architecture predict each other well, which says
 * nothing of how well they predict another architecture, and the band says so. */
static void test_new_architecture_leaves_siblings_out(void **state)
{
    (void)state;
    static const struct {
        const char *name, *arch;
        double tflops, gbs, u;
        int sms, year;
    } devs[] = {{"synth-x1", "xarch", 11.0, 480, 0.85, 28, 2016}, {"synth-x2", "xarch", 12.1, 548, 0.85, 30, 2017},
                {"synth-y", "yarch", 14, 900, 0.55, 80, 2017}};
    TransferPool *pool = tp_new();
    for (size_t i = 0; i < 3; i++) {
        const GpuSheet h = sheet(devs[i].tflops, devs[i].gbs, devs[i].sms);
        double f[TF_COUNT];
        features_of(devs[i].tflops, devs[i].gbs, devs[i].sms, devs[i].year, f);
        assert_int_equal(tp_add(pool, synthetic_device_u(devs[i].name, &h, 500 + i, false, devs[i].u), f, devs[i].arch), 0);
    }
    double ft[TF_COUNT];
    features_of(11.5, 500, 29, 2017, ft);
    GpuGroupFit g;
    TransferInfo sibling, stranger;
    assert_int_equal(tp_params(pool, "gemm", ft, "xarch", NULL, &g, &sibling), 0);
    assert_int_equal(tp_params(pool, "gemm", ft, "zarch", NULL, &g, &stranger), 0);
    /* a board of a known architecture: each sibling predicted from the other, within a few % */
    /* a board of a known architecture: each device predicted from the other two (the
     * siblings from each other, within a few %; the third, 0.55 from 0.85, far off) */
    if (!(sibling.loo_err < 0.12))
        fail_msg("leave-one-device-out error %.1f%%, expected below 12%%", 100 * sibling.loo_err);
    /* a new one: each architecture predicted from the other's devices, 0.85 from 0.55 */
    if (!(stranger.loo_err > 2 * sibling.loo_err))
        fail_msg("leave-one-architecture-out error %.1f%%, expected above twice the %.1f%% among siblings",
                 100 * stranger.loo_err, 100 * sibling.loo_err);
    assert_true(g.band >= stranger.loo_err);
    tp_free(pool);
}

/* How a device throttles under a long GEMM is a matter of its board power: a 72 W target
 * whose other features are nearest a 300 W board takes its sustained rate from the 70 W
 * ones. */
static void test_power_limit_carried_by_board_power(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        double tflops, gbs, tdp, s;
        int sms, year;
    } devs[] = {{"synth-lo1", 5.5, 192, 75, 0.55, 20, 2016}, {"synth-lo2", 8.1, 320, 70, 0.5, 40, 2018},
                {"synth-hi1", 14, 900, 250, 1.0, 80, 2017}, {"synth-hi2", 19.5, 1555, 250, 1.0, 108, 2020},
                {"synth-hi3", 9.3, 732, 250, 1.0, 56, 2016}};
    TransferPool *pool = tp_new();
    for (size_t i = 0; i < 5; i++) {
        const GpuSheet h = sheet(devs[i].tflops, devs[i].gbs, devs[i].sms);
        double f[TF_COUNT];
        features_w(devs[i].tflops, devs[i].gbs, devs[i].sms, devs[i].year, devs[i].tdp, f);
        assert_int_equal(tp_add(pool, synthetic_device_p(devs[i].name, &h, 700 + i, false, 0.85, devs[i].s), f, ""), 0);
    }
    /* the target: a 72 W card with a 250 W board's size and year */
    double ft[TF_COUNT];
    features_w(15, 300, 60, 2020, 72, ft);
    GpuGroupFit g;
    TransferInfo info;
    assert_int_equal(tp_params(pool, "gemm", ft, "", NULL, &g, &info), 0);
    const double s_power = g.p[gpu_param_index(GF_TILES, "s")];
    if (!(s_power < 0.7))
        fail_msg("a 72 W card's sustained fraction %.2f, expected that of the 70 W boards (0.5-0.55)", s_power);
    /* the same card at 250 W sustains its rate */
    features_w(15, 300, 60, 2020, 250, ft);
    assert_int_equal(tp_params(pool, "gemm", ft, "", NULL, &g, &info), 0);
    if (!(g.p[gpu_param_index(GF_TILES, "s")] > 0.85))
        fail_msg("a 250 W card's sustained fraction %.2f, expected near 1", g.p[gpu_param_index(GF_TILES, "s")]);
    tp_free(pool);
}

/* A profile keeps a device's fits: read back, it prices an unseen shape as the fit does and
 * takes part in the transfer with its sampled shapes; a bad field is named. */
static void test_profile_round_trip(void **state)
{
    (void)state;
    const GpuSheet h = sheet(19.5, 1555, 108);
    DeviceEvidence *e = synthetic_device("synth-a", &h, 11, true);
    const char *src[] = {"dlperf: synth.csv"}, *notes[] = {"a synthetic device"};
    ProfilePart part = {"fp32", e, src, 1};
    char err[512];
    char *text = profile_write("synth-a", &part, 1, notes, 1, "2026-12-02T00:00:00Z", err, sizeof err);
    assert_non_null(text);
    assert_null(strstr(text, "\"time")); /* fits and shapes, never a measured time */
    char name[48];
    assert_int_equal(profile_device(text, "p.json", name, err, sizeof err), 0);
    assert_string_equal(name, "synth-a");
    DeviceEvidence *back;
    assert_int_equal(profile_load(text, "p.json", "fp16", &h, &back, err, sizeof err), 1); /* no such precision */
    assert_int_equal(profile_load(text, "p.json", "fp32", &h, &back, err, sizeof err), 0);
    const GpuGroupFit *g1, *g2;
    const int n1 = dev_ev_groups(e, &g1);
    GpuGroupFit a[8];
    memcpy(a, g1, (size_t)n1 * sizeof *a);
    assert_int_equal(dev_ev_groups(back, &g2), n1);
    for (int i = 0; i < n1; i++) {
        const GpuGroupFit *b = dev_ev_group(back, a[i].group);
        assert_non_null(b);
        assert_int_equal(b->points, a[i].points);
        for (int k = 0; k < gpu_form_nparams(a[i].form); k++)
            assert_true(fabs(b->p[k] - a[i].p[k]) <= 1e-5 * fabs(a[i].p[k]) + 1e-12);
    }
    GpuShape *s;
    double *t;
    assert_true(dev_ev_group_points(back, "gemm", &s, &t) == PROFILE_SHAPES_MAX); /* sampled, timed by the fit */
    free(s), free(t);
    const OpDesc u = op_gemm(PHASE_FWD, 1500, 700, 2500, false, false, 0.0f);
    double t1, t2, lo, hi;
    EvSource src1, src2;
    assert_int_equal(dev_ev_price(e, &u, false, &t1, &lo, &hi, &src1), 0);
    assert_int_equal(dev_ev_price(back, &u, false, &t2, &lo, &hi, &src2), 0);
    assert_int_equal(src2, EV_FITTED);
    if (fabs(t2 / t1 - 1) > 0.03) /* the measured points' local correction is all it lacks */
        fail_msg("profile prices %.4g s, the evidence %.4g s", t2, t1);
    /* an exact key is not an exact price from a profile: it has no measured time */
    const OpDesc m = op_gemm(PHASE_FWD, 64, 64, 64, false, false, 0.0f);
    assert_int_equal(dev_ev_price(back, &m, false, &t2, &lo, &hi, &src2), 0);
    assert_int_equal(src2, EV_FITTED);
    dev_ev_free(back);
    /* bad fields, each named */
    static const struct {
        const char *from, *to, *want;
    } bad[] = {{"\"dlperf-device-profile\"", "\"dlperf-device\"", "\"format\" must be"},
               {"\"gm", "\"gm0", "\"kernel_model\""},
               {"\"form\":\t\"tiles\"", "\"form\":\t\"waves\"", "\"form\" must be tiles, stream or rows"},
               {"\"band\":\t", "\"band\":\t-", "\"fit_err\" and \"band\""}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *at = strstr(text, bad[i].from);
        assert_non_null(at);
        char *b = malloc(strlen(text) + 64);
        const size_t off = (size_t)(at - text);
        memcpy(b, text, off);
        strcpy(b + off, bad[i].to);
        strcat(b, at + strlen(bad[i].from));
        err[0] = 0;
        assert_int_equal(profile_load(b, "bad.json", "fp32", &h, &back, err, sizeof err), -1);
        if (!strstr(err, bad[i].want) || !strstr(err, "bad.json"))
            fail_msg("error '%s' does not say %s", err, bad[i].want);
        free(b);
    }
    assert_int_equal(profile_load("[1,2]", "x.json", "fp32", &h, &back, err, sizeof err), -1);
    free(text);
    dev_ev_free(e);
}

/* Every built-in profile reads, at every precision it has, and names a sheet of its own. */
static void test_builtin_profiles_load(void **state)
{
    (void)state;
    assert_true(profile_builtin_count() >= 1);
    for (int i = 0; i < profile_builtin_count(); i++) {
        const char *path, *text = profile_builtin(i, &path);
        char name[48], err[512];
        if (profile_device(text, path, name, err, sizeof err) != 0)
            fail_msg("%s", err);
        DeviceSpec d;
        if (device_load(NULL, name, &d, err, sizeof err) != 0)
            fail_msg("%s: device %s: %s", path, name, err);
        GpuSheet h;
        gpu_sheet_of(&d, PREC_FP32, &h);
        DeviceEvidence *ev;
        if (profile_load(text, path, "fp32", &h, &ev, err, sizeof err) < 0)
            fail_msg("%s", err);
        dev_ev_free(ev);
    }
}

/* The order of evidence through the device pricer: the device's own measurements first,
 * then other devices' of the op's group, then a similar group's, and with nothing of the
 * op's form, the roofline; leaving the device's own out prices it from the others. */
/* A pricer for the device e measured, alone in its pool: e on sheet(14, 900, 80), a 2017 board. */
static DevicePricer *pricer_of_one(DeviceEvidence *e, DeviceSpec *dev)
{
    TransferPool *pool = tp_new();
    double f[TF_COUNT];
    features_of(14, 900, 80, 2017, f);
    assert_int_equal(tp_add(pool, e, f, ""), 0);
    *dev = synthetic_spec(dev_ev_device(e), 2017, 80, 900, 40.0, 14);
    DevicePricer *p = dp_new(dev, PREC_FP32, pool, NULL, 0);
    assert_non_null(p);
    return p;
}

static void test_order_of_evidence(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        double tflops, gbs;
        int sms, year;
        bool stream;
    } devs[] = {{"synth-v", 14, 900, 80, 2017, true}, {"synth-a", 19.5, 1555, 108, 2020, true},
                {"synth-target", 60, 3350, 132, 2022, false}};
    TransferPool *pool = tp_new();
    for (size_t i = 0; i < 3; i++) {
        const GpuSheet h = sheet(devs[i].tflops, devs[i].gbs, devs[i].sms);
        double f[TF_COUNT];
        features_of(devs[i].tflops, devs[i].gbs, devs[i].sms, devs[i].year, f);
        assert_int_equal(tp_add(pool, synthetic_device(devs[i].name, &h, 300 + i, devs[i].stream), f, ""), 0);
    }
    DeviceSpec dev = synthetic_spec("synth-target", 2022, 132, 3350, 40.0, 60);
    char err[256];
    DevicePricer *p = dp_new(&dev, PREC_FP32, pool, NULL, 0);
    assert_non_null(p);
    assert_true(dp_has_evidence(p));
    DevPrice pr;
    const OpDesc g = op_gemm(PHASE_FWD, 1000, 1000, 1000, false, false, 0.0f);
    assert_int_equal(dp_price(p, &g, &pr, err, sizeof err), 0);
    assert_int_equal(pr.source, DP_FITTED); /* its own GEMMs */
    const OpDesc add = op_binary(PHASE_FWD, BIN_ADD, 1u << 24);
    assert_int_equal(dp_price(p, &add, &pr, err, sizeof err), 0);
    assert_int_equal(pr.source, DP_TRANSFER); /* no element-wise evidence of its own */
    const OpDesc mul = op_binary(PHASE_FWD, BIN_MUL, 1u << 24);
    assert_int_equal(dp_price(p, &mul, &pr, err, sizeof err), 0);
    assert_int_equal(pr.source, DP_SIMILAR); /* nobody measured a mul: priced like the add */
    assert_string_equal(pr.from, "binary fwd add");
    const OpDesc ln = op_layernorm(PHASE_FWD, 1024, 768, 1e-5f);
    assert_int_equal(dp_price(p, &ln, &pr, err, sizeof err), 0);
    assert_int_equal(pr.source, DP_ROOFLINE); /* no row reduction anywhere, no CPU calibration */
    assert_true(pr.hi_s >= 3.9 * pr.time_s);
    dp_free(p);
    /* its own left out: the GEMMs come from the other two */
    pool = tp_new();
    for (size_t i = 0; i < 3; i++) {
        const GpuSheet h = sheet(devs[i].tflops, devs[i].gbs, devs[i].sms);
        double f[TF_COUNT];
        features_of(devs[i].tflops, devs[i].gbs, devs[i].sms, devs[i].year, f);
        assert_int_equal(tp_add(pool, synthetic_device(devs[i].name, &h, 300 + i, devs[i].stream), f, ""), 0);
    }
    p = dp_new(&dev, PREC_FP32, pool, NULL, DP_NO_OWN);
    assert_int_equal(dp_price(p, &g, &pr, err, sizeof err), 0);
    assert_int_equal(pr.source, DP_TRANSFER);
    assert_string_not_equal(pr.from, "synth-target");
    dp_free(p);
}

/* An op whose kind nobody measured, priced like another kind's rows group, streams at the
 * device's share: a softmax's row term (half speed at rows of hundreds of values) describes
 * a softmax's passes over its row, not a pooling window's four values. */
static void test_similar_rows_kind_streams(void **state)
{
    (void)state;
    const GpuSheet h = sheet(14, 900, 80);
    DeviceEvidence *e = synthetic_device("synth-rows", &h, 11, true);
    double q[GPU_PARAMS_MAX];
    truth_params(GF_ROWS, q);
    q[gpu_param_index(GF_ROWS, "h0")] = 500; /* a softmax's rows of 500 run at half speed */
    TuRng r = tu_rng(12);
    for (int i = 0; i < 60; i++) {
        const OpDesc d = op_softmax(PHASE_FWD, 64 << (i % 6), 64 << (i / 6 % 7));
        GpuShape s;
        gpu_shape(&d, 1.0, &s);
        assert_int_equal(dev_ev_add(e, &d, noisy(gpu_model_time(&s, &h, q), &r), 0, 0, false), 0);
    }
    dev_ev_fit(e);
    assert_true(dev_ev_group(e, "softmax fwd")->p[gpu_param_index(GF_ROWS, "h0")] > 100);
    DeviceSpec dev;
    DevicePricer *p = pricer_of_one(e, &dev);
    char err[256];
    DevPrice pr;
    const OpDesc pool2 = op_pool2d(PHASE_FWD, POOL_MAX, 64, 64, 56, 56, 2, 2, PAD_VALID);
    assert_int_equal(dp_price(p, &pool2, &pr, err, sizeof err), 0);
    assert_int_equal(pr.source, DP_SIMILAR);
    assert_string_equal(pr.from, "softmax fwd");
    const double stream_s = op_cost(&pool2).bytes / (dev.mem_Bps * dev_ev_stream_eff(e));
    assert_true(pr.time_s < 1.5 * stream_s + 1e-4); /* the window's 4 values would have cost x100 */
    dp_free(p);
}

/* A framework call nobody timed at framework scope is priced by its own group's kernels,
 * not by another phase of the kind that happens to hold more points (a TensorFlow forward
 * convolution priced like a data gradient). */
static void test_framework_call_priced_by_its_kernels(void **state)
{
    (void)state;
    const GpuSheet h = sheet(14, 900, 80);
    DeviceEvidence *e = dev_ev_new("synth-conv", &h);
    double p[GPU_PARAMS_MAX];
    truth_on(&h, GF_TILES, p);
    TuRng r = tu_rng(21);
    for (int i = 0; i < 60; i++) { /* more data-gradient points than forward ones */
        const OpPhase ph = i < 20 ? PHASE_FWD : PHASE_BWD_DATA;
        const OpDesc d = op_conv2d(ph, 8 << (i % 4), 16 << (i % 3), 14, 14, 32 << (i % 5), 3, 3, 1, PAD_SAME, 1);
        GpuShape s;
        gpu_shape(&d, 1.0, &s);
        const double t = gpu_model_time(&s, &h, p) * (ph == PHASE_FWD ? 1.0 : 3.0);
        assert_int_equal(dev_ev_add(e, &d, noisy(t, &r), 0, 0, false), 0);
    }
    dev_ev_fit(e);
    DeviceSpec dev;
    DevicePricer *pr_ = pricer_of_one(e, &dev);
    char err[256];
    DevPrice kern, call;
    const OpDesc fwd = op_conv2d(PHASE_FWD, 16, 32, 14, 14, 64, 3, 3, 1, PAD_SAME, 1);
    assert_int_equal(dp_price_scope(pr_, &fwd, false, &kern, err, sizeof err), 0);
    assert_int_equal(dp_price_scope(pr_, &fwd, true, &call, err, sizeof err), 0);
    assert_int_equal(call.source, DP_SIMILAR);
    assert_string_equal(call.from, "conv2d fwd");
    assert_float_equal(call.time_s, kern.time_s, 0.05 * kern.time_s); /* not the 3x slower phase */
    dp_free(pr_);
}

/* A row that times a whole recurrent layer (DeepBench's RNN) is priced as the layer runs:
 * each step's cell and GEMMs, and in backward the weight gradient of every step at once,
 * one GEMM over batch x steps rows, not one per step. */
static void test_rnn_layer_row(void **state)
{
    (void)state;
    TransferPool *pool = tp_new();
    const GpuSheet h = sheet(14, 900, 80);
    double f[TF_COUNT];
    features_of(14, 900, 80, 2017, f);
    assert_int_equal(tp_add(pool, synthetic_device("synth-v", &h, 300, true), f, ""), 0);
    DeviceSpec dev = synthetic_spec("synth-v", 2017, 80, 900, 6.0, 14);
    DevicePricer *p = dp_new(&dev, PREC_FP32, pool, NULL, 0);
    assert_non_null(p);
    const int H = 256, N = 16, T = 10;
    ImportedRow rows[2];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 2; i++) {
        rows[i].rnn = (MbRnnShape){.hidden = H, .batch = N, .steps = T, .cell = MB_RNN_LSTM};
        rows[i].rnn_phases = 1 << i;
        rows[i].time_s = 1e-3;
        snprintf(rows[i].scope, sizeof rows[i].scope, "kernel");
    }
    CheckResult r;
    char err[256];
    assert_int_equal(evidence_check(p, rows, 2, &r, NULL, err, sizeof err), 0);
    assert_int_equal(r.nclasses, 2);
    assert_string_equal(r.cls[0].name, "lstm fwd");
    assert_string_equal(r.cls[1].name, "lstm bwd");
    DevPrice q;
    double fwd = 0, bwd = 0, per_step_weights = 0;
    const OpDesc f_ops[] = {op_gemm(PHASE_FWD, N, 4 * H, H, false, false, 0.0f), op_lstm_cell(PHASE_FWD, N, H, 1.0f)};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(dp_price(p, &f_ops[i], &q, err, sizeof err), 0);
        fwd += T * q.time_s;
    }
    const OpDesc b_step[] = {op_lstm_cell(PHASE_BWD_DATA, N, H, 1.0f),
                             op_gemm(PHASE_BWD_DATA, N, H, 4 * H, false, true, 0.0f)};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(dp_price(p, &b_step[i], &q, err, sizeof err), 0);
        bwd += T * q.time_s;
    }
    per_step_weights = bwd;
    const OpDesc once[] = {op_gemm(PHASE_BWD_WEIGHTS, H, 4 * H, N * T, true, false, 0.0f),
                           op_bias(PHASE_BWD_WEIGHTS, N * T, 4 * H, 1)};
    const OpDesc each[] = {op_gemm(PHASE_BWD_WEIGHTS, H, 4 * H, N, true, false, 1.0f),
                           op_bias(PHASE_BWD_WEIGHTS, N, 4 * H, 1)};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(dp_price(p, &once[i], &q, err, sizeof err), 0);
        bwd += q.time_s;
        assert_int_equal(dp_price(p, &each[i], &q, err, sizeof err), 0);
        per_step_weights += T * q.time_s;
    }
    assert_true(fabs(r.cls[0].bias * 1e-3 / fwd - 1) < 1e-9);
    assert_true(fabs(r.cls[1].bias * 1e-3 / bwd - 1) < 1e-9);
    assert_true(per_step_weights > 1.05 * bwd); /* the check tells the two apart */
    dp_free(p);
}


/* The framework's passes are PyTorch's: their bytes per parameter against one fused pass. */
static void test_framework_passes(void **state)
{
    (void)state;
    const Framework fw = fw_pytorch(PREC_FP32, false);
    FwPass v[FW_PASSES_MAX];
    struct {
        OpDesc d;
        int passes;
        double arrays; /* fp32 arrays read or written per parameter, all passes */
    } cases[] = {
        {op_sgd(1000, 0.01f), 1, 3},
        {op_momentum(1000, 0.01f, 0.9f, false), 3, 8},
        {op_momentum(1000, 0.01f, 0.9f, true), 4, 11},
        {op_rmsprop(1000, 0.001f, 0.9f, 1e-7f), 5, 13},
        {op_adam(1000, 0.001f, 0.9f, 0.999f, 1e-7f), 7, 18},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int n = fw_update_passes(&fw, &cases[i].d, v);
        assert_int_equal(n, cases[i].passes);
        double bytes = 0;
        for (int k = 0; k < n; k++)
            bytes += v[k].bytes;
        assert_true(fabs(bytes - cases[i].arrays * 4 * 1000) < 1e-9);
        assert_true(bytes >= op_cost(&cases[i].d).bytes); /* never fewer than one fused pass */
    }
    OpDesc decayed = op_sgd(1000, 0.01f);
    op_update_set_decay(&decayed, 400, 1e-4f);
    assert_int_equal(fw_update_passes(&fw, &decayed, v), 2);
    assert_true(fabs(v[0].bytes - 3 * 4 * 400.0) < 1e-9);
    const OpDesc relu = op_act(PHASE_FWD, ACT_RELU, 1000);
    assert_int_equal(fw_update_passes(&fw, &relu, v), 0);

    /* layout conversions: none at fp32; at bf16 each call's three tensors, read and written */
    const OpDesc conv[3] = {op_conv2d(PHASE_FWD, 8, 16, 14, 14, 32, 3, 3, 1, PAD_SAME, 1),
                            op_conv2d(PHASE_BWD_DATA, 8, 16, 14, 14, 32, 3, 3, 1, PAD_SAME, 1),
                            op_conv2d(PHASE_BWD_WEIGHTS, 8, 16, 14, 14, 32, 3, 3, 1, PAD_SAME, 1)};
    const Framework bf = fw_pytorch(PREC_BF16, false), tf = fw_pytorch(PREC_TF32, true);
    const double x = 8.0 * 16 * 14 * 14, y = 8.0 * 32 * 14 * 14, w = 32.0 * 16 * 9;
    for (int ph = 0; ph < 3; ph++) {
        assert_int_equal(fw_conv_conversions(&fw, &conv[ph], PREC_FP32, v), 0);
        assert_int_equal(fw_conv_conversions(&bf, &conv[ph], PREC_BF16, v), 3);
        assert_true(fabs(v[0].bytes + v[1].bytes + v[2].bytes - 2 * 2 * (x + y + w)) < 1e-6);
        assert_int_equal(fw_conv_conversions(&tf, &conv[ph], PREC_TF32, v), 3);
        assert_true(fabs(v[0].bytes + v[1].bytes + v[2].bytes - 2 * 4 * (x + y + w)) < 1e-6);
    }
    assert_true(bf.autocast && !tf.autocast && tf.tensor_cores && !fw.tensor_cores && !tf.eager && fw.eager);

    /* autocast: the dense layers' weights cast forward, their gradients back */
    Plan p;
    char err[256];
    assert_int_equal(plan_build(zoo_find("p1b1"), 4, &p, err, sizeof err), 0);
    FwPass c[2];
    assert_int_equal(fw_autocast_casts(&fw, &p, PREC_FP32, &c[0], &c[1]), 0);
    assert_int_equal(fw_autocast_casts(&bf, &p, PREC_BF16, &c[0], &c[1]), 2);
    assert_true(fabs(c[0].count - (double)p.param_count) < 1); /* p1b1: dense layers only */
    assert_true(fabs(c[1].bytes - 6.0 * (double)p.param_count) < 8);
    plan_free(&p);
}

/* On a device with fp32 evidence only, a bf16 step's memory-bound ops are priced from that
 * evidence by the bytes they move, its optimizer stays fp32 as PyTorch's passes, and its
 * autocast casts are priced. */
static void test_framework_on_a_step(void **state)
{
    (void)state;
    const GpuSheet h = sheet(14, 900, 80);
    TransferPool *pool = tp_new();
    double f[TF_COUNT];
    features_of(14, 900, 80, 2017, f);
    assert_int_equal(tp_add(pool, synthetic_device("synth-fw", &h, 21, true), f, ""), 0);
    DeviceSpec dev = synthetic_spec("synth-fw", 2017, 80, 900, 6.0, 14);
    dev.peak_flops[PREC_BF16] = 112e12;
    DevicePricer *p32 = dp_new(&dev, PREC_FP32, pool, NULL, 0);
    DevicePricer *p16 = dp_new(&dev, PREC_BF16, tp_new(), NULL, 0);
    char err[256];
    DevPrice a, b;
    const OpDesc add = op_binary(PHASE_FWD, BIN_ADD, (size_t)1 << 26);
    /* without fp32 evidence to fall back on: the roofline */
    assert_int_equal(dp_price(p16, &add, &b, err, sizeof err), 0);
    assert_int_equal(b.source, DP_ROOFLINE);
    dp_set_wide(p16, p32);
    assert_int_equal(dp_price(p16, &add, &b, err, sizeof err), 0);
    assert_int_equal(b.source, DP_FITTED);
    assert_non_null(strstr(b.from, "fp32 evidence"));
    const OpDesc half = op_binary(PHASE_FWD, BIN_ADD, (size_t)1 << 25); /* the same bytes at fp32 */
    assert_int_equal(dp_price(p32, &half, &a, err, sizeof err), 0);
    assert_true(fabs(b.time_s / a.time_s - 1) < 0.05);
    /* a GEMM at bf16 is not priced from fp32 evidence */
    const OpDesc g = op_gemm(PHASE_FWD, 1024, 1024, 1024, false, false, 0.0f);
    assert_int_equal(dp_price(p16, &g, &b, err, sizeof err), 0);
    assert_int_equal(b.source, DP_ROOFLINE);

    /* a step: the update as PyTorch's RMSprop passes at fp32, the casts priced */
    Plan pl;
    assert_int_equal(plan_build(zoo_find("p1b1"), 8, &pl, err, sizeof err), 0);
    const Framework fw = fw_pytorch(PREC_BF16, true);
    DeviceStep with, without;
    assert_int_equal(whatif_device_step(&pl, NULL, p16, &dev, PREC_BF16, &fw, &with, err, sizeof err), 0);
    assert_int_equal(whatif_device_step(&pl, NULL, p16, &dev, PREC_BF16, NULL, &without, err, sizeof err), 0);
    DevPrice u;
    assert_int_equal(dp_price_stream(p16, 13 * 4.0 * (double)pl.param_count, &u, err, sizeof err), 0);
    assert_true(fabs(with.fw_s[FW_OPTIMIZER] / u.time_s - 1) < 0.1); /* five passes ~ 13 arrays at once */
    assert_true(with.fw_s[FW_CAST] > 0 && without.fw_s[FW_CAST] == 0 && with.fw_s[FW_LAYOUT] == 0);
    assert_true(with.update_s > 2 * without.update_s); /* fp32 and 13 arrays, not bf16 and 5 */
    assert_true(fabs(with.compute_s - without.compute_s -
                     (with.update_s - without.update_s + with.fw_s[FW_CAST])) < 1e-9 + 1e-6 * with.compute_s);
    plan_free(&pl);
    dp_free(p16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms_are_sane),
        cmocka_unit_test(test_framework_passes),
        cmocka_unit_test(test_framework_on_a_step),
        cmocka_unit_test(test_rnn_layer_row),
        cmocka_unit_test(test_own_evidence_exact_and_fitted),
        cmocka_unit_test(test_transfer_recovers_a_left_out_device),
        cmocka_unit_test(test_new_architecture_leaves_siblings_out),
        cmocka_unit_test(test_power_limit_carried_by_board_power),
        cmocka_unit_test(test_profile_round_trip),
        cmocka_unit_test(test_builtin_profiles_load),
        cmocka_unit_test(test_order_of_evidence),
        cmocka_unit_test(test_similar_rows_kind_streams),
        cmocka_unit_test(test_framework_call_priced_by_its_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
