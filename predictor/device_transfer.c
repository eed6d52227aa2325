/* predictor/device_transfer.c — other devices' evidence carried over by their sheets
 * (device_transfer.h). */
#include "predictor/device_transfer.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void transfer_features(const DeviceSpec *d, double f[TF_COUNT])
{
    /* Likeness is the build: lanes, clock and issue. A measured GEMM bound (Kepler's) is
     * what the rate reaches, not what the chip is like; in the features it moved the pool's
     * spreads and with them every other device's neighbours (DeepBench's M40 GEMMs carried
     * over 9% off became 19%). */
    const double peak = device_fp32_issue_flops(d);
    f[0] = peak > 0 ? log(peak) : NAN;
    f[1] = d->mem_Bps > 0 ? log(d->mem_Bps) : NAN;
    f[2] = d->sm_count > 0 ? log(d->sm_count) : NAN;
    f[3] = d->l2_bytes > 0 ? log(d->l2_bytes) : NAN;
    f[4] = d->memory_type[0] ? (strncmp(d->memory_type, "HBM", 3) == 0 ? 1.0 : 0.0) : NAN;
    f[5] = d->year > 0 ? d->year : NAN;
    f[TF_POWER] = d->tdp_w > 0 ? log(d->tdp_w) : NAN;
}

typedef struct {
    DeviceEvidence *ev;
    double feat[TF_COUNT];
    char arch[16];
} PoolDevice;

/* How a group's parameters carry over, learned per (group, device left out, whether the
 * target's architecture is in the pool): the reach of the similarity average and its
 * leave-out error. */
typedef struct {
    char group[GPU_GROUP_MAX], exclude[48];
    bool by_arch;
    double tf[TF_COUNT];
    double h, hp, err; /* the reach, the power parameters' reach, the leave-out error */
} Learned;

struct TransferPool {
    PoolDevice *dev;
    int n, cap;
    Learned *learned;
    int nlearned, lcap;
};

TransferPool *tp_new(void) { return calloc(1, sizeof(TransferPool)); }

int tp_add(TransferPool *p, DeviceEvidence *ev, const double feat[TF_COUNT], const char *arch)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 8;
        PoolDevice *v = realloc(p->dev, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        p->dev = v;
        p->cap = cap;
    }
    p->dev[p->n].ev = ev;
    memcpy(p->dev[p->n].feat, feat, sizeof p->dev[p->n].feat);
    snprintf(p->dev[p->n].arch, sizeof p->dev[p->n].arch, "%s", arch ? arch : "");
    p->n++;
    p->nlearned = 0; /* the reach is learned anew over the new set */
    return 0;
}

void tp_free(TransferPool *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n; i++)
        dev_ev_free(p->dev[i].ev);
    free(p->dev);
    free(p->learned);
    free(p);
}

int tp_count(const TransferPool *p) { return p->n; }
DeviceEvidence *tp_device(const TransferPool *p, int i) { return i >= 0 && i < p->n ? p->dev[i].ev : NULL; }

DeviceEvidence *tp_find(const TransferPool *p, const char *name)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(dev_ev_device(p->dev[i].ev), name) == 0)
            return p->dev[i].ev;
    return NULL;
}

/* each feature's spread over the pool's devices (1 where it does not vary) */
static void spreads(const TransferPool *p, double sd[TF_COUNT])
{
    for (int j = 0; j < TF_COUNT; j++) {
        double s = 0, s2 = 0;
        int n = 0;
        for (int i = 0; i < p->n; i++)
            if (isfinite(p->dev[i].feat[j])) {
                s += p->dev[i].feat[j];
                s2 += p->dev[i].feat[j] * p->dev[i].feat[j];
                n++;
            }
        const double var = n > 1 ? (s2 - s * s / n) / (n - 1) : 0;
        sd[j] = var > 1e-12 ? sqrt(var) : 1.0;
    }
}

/* The squared distance between two devices' features, in units of the pool's spreads (a
 * feature either lacks does not count). */
static double distance2(const double a[TF_COUNT], const double b[TF_COUNT], const double sd[TF_COUNT])
{
    double d2 = 0;
    for (int j = 0; j < TF_COUNT; j++)
        if (isfinite(a[j]) && isfinite(b[j])) {
            const double z = (a[j] - b[j]) / sd[j];
            d2 += z * z;
        }
    return d2;
}

/* Whether d is left out: named a or b, or of architecture arch (NULL or "": none). */
static bool skipped(const PoolDevice *d, const char *a, const char *b, const char *arch)
{
    const char *name = dev_ev_device(d->ev);
    return (a && strcmp(name, a) == 0) || (b && strcmp(name, b) == 0) ||
           (arch && arch[0] && strcmp(d->arch, arch) == 0);
}

/* A device's log board power, NAN if its sheet lacks it: what decides how far a long GEMM
 * throttles (power per peak FLOP separates nothing: the A100's 12.8 W/TFLOP is the P4's). */
static double board_power(const double f[TF_COUNT]) { return f[TF_POWER]; }

/* How many times faster an SM of the target (features t) computes than one of the source
 * (features f), 1 where a sheet lacks the peak or the SM count. A tile's pipeline fill is a
 * latency, much the same in nanoseconds on every GPU: the reduction steps it costs grow
 * with how fast the SM runs through them (an H100 SM, 128 lanes at 1.98 GHz, spends about
 * three times an A100 SM's steps filling it). */
static double sm_rate_ratio(const double t[TF_COUNT], const double f[TF_COUNT])
{
    if (!(isfinite(t[0]) && isfinite(t[2]) && isfinite(f[0]) && isfinite(f[2])))
        return 1.0;
    return exp((t[0] - t[2]) - (f[0] - f[2]));
}

/* The group's parameters from the pool's devices but a, b and those of architecture arch:
 * each parameter's similarity-weighted average (in its search coordinate) with reach h.
 * The tiles form's power parameters (the sustained fraction and how soon it is reached)
 * are a matter of board power, whatever else the sheets share: a 72 W Ada card throttles
 * like a 70 W Turing one, not like the 250 W Ampere board nearest it in the other features;
 * they are averaged with those weights times a Gaussian in board power of reach hp. A
 * pipeline fill carries over scaled by the SMs' rates (sm_rate_ratio). */
static int combine(const TransferPool *p, const char *group, const double tf[TF_COUNT], const char *a, const char *b,
                   const char *arch, double h, double hp, GpuGroupFit *out, TransferInfo *info)
{
    double sd[TF_COUNT];
    spreads(p, sd);
    enum { SRC_MAX = 64 };
    double w[SRC_MAX], wp[SRC_MAX], x[SRC_MAX][GPU_PARAMS_MAX], band = 0, sw = 0, swp = 0, wmax = -1;
    const double psd = sd[TF_POWER], ptarget = board_power(tf);
    int n = 0, np = 0;
    GpuForm form = GF_STREAM;
    for (int i = 0; i < p->n && n < SRC_MAX; i++) {
        if (skipped(&p->dev[i], a, b, arch))
            continue;
        const GpuGroupFit *g = dev_ev_group(p->dev[i].ev, group);
        if (!g)
            continue;
        const double d2 = distance2(tf, p->dev[i].feat, sd);
        const double wi = isinf(h) ? 1.0 : exp(-d2 / (2 * h * h));
        if (!(wi > 1e-300))
            continue;
        form = g->form;
        np = gpu_form_nparams(form);
        const double sm_ratio = sm_rate_ratio(tf, p->dev[i].feat);
        for (int k = 0; k < np; k++)
            x[n][k] = gpu_param_to_search(form, k, gpu_param_is_fill(form, k) ? g->p[k] * sm_ratio : g->p[k]);
        w[n] = wi;
        const double pd = board_power(p->dev[i].feat);
        if (isfinite(ptarget) && isfinite(pd) && !isinf(hp)) {
            const double z = (ptarget - pd) / psd;
            wp[n] = wi * exp(-z * z / (2 * hp * hp)) + 1e-300;
        } else {
            wp[n] = wi;
        }
        swp += wp[n];
        band += wi * g->band;
        sw += wi;
        if (info && wi > wmax) {
            wmax = wi;
            snprintf(info->nearest, sizeof info->nearest, "%s", dev_ev_device(p->dev[i].ev));
        }
        n++;
    }
    if (n == 0 || sw <= 0)
        return 1;
    memset(out, 0, sizeof *out);
    snprintf(out->group, sizeof out->group, "%s", group);
    out->form = form;
    for (int k = 0; k < np; k++) {
        const bool power = gpu_param_is_power(form, k) && swp > 0;
        double mean = 0;
        for (int i = 0; i < n; i++)
            mean += (power ? wp[i] : w[i]) * x[i][k];
        out->p[k] = gpu_param_from_search(form, k, mean / (power ? swp : sw));
    }
    out->band = band / sw;
    if (info)
        info->sources = n;
    return 0;
}

/* Whether the group's form has power parameters (its reach for them is learned too). */
static bool power_form(const TransferPool *p, const char *group)
{
    for (int i = 0; i < p->n; i++) {
        const GpuGroupFit *g = dev_ev_group(p->dev[i].ev, group);
        if (g)
            for (int k = 0; k < gpu_form_nparams(g->form); k++)
                if (gpu_param_is_power(g->form, k))
                    return true;
    }
    return false;
}

static const double REACH[] = {0.5, 1.0, 2.0, 4.0, INFINITY};

/* How near the target a left-out device must be (feature spreads) for its error to count
 * when the target's architecture is new: a 2023 card's reach is learned on the devices
 * like it, not on the 2015 boards that outnumber them. 1 did best of 1, 2 and no weighting
 * on NeuSight's unseen devices and on DeepBench's and CDE's left-out ones
 * (docs/gpu-pricing.md). */
#define TARGET_NEIGHBOURHOOD 1.0

/* The mean |relative error| over the left-out devices (each its own mean over at most 1500
 * of its points) of the group's parameters carried to each from the others with reach h;
 * by_arch: from the other architectures' devices only, each left-out device's error
 * weighted by its nearness to the target's features tf. */
static double loo_error(const TransferPool *p, const char *group, const char *exclude, const int *idx, int nd,
                        bool by_arch, const double tf[TF_COUNT], double h, double hp)
{
    double total = 0, counted = 0;
    double sd[TF_COUNT];
    spreads(p, sd);
    for (int a = 0; a < nd; a++) {
        const PoolDevice *d = &p->dev[idx[a]];
        GpuGroupFit f;
        if (combine(p, group, d->feat, exclude, dev_ev_device(d->ev), by_arch ? d->arch : NULL, h, hp, &f, NULL) != 0)
            continue;
        GpuShape *s;
        double *t;
        const int n = dev_ev_group_points(d->ev, group, &s, &t);
        if (n <= 0)
            continue;
        const int stride = n > 1500 ? n / 1500 : 1;
        double e = 0;
        int m = 0;
        for (int i = 0; i < n; i += stride, m++)
            e += fabs(gpu_model_time(&s[i], dev_ev_sheet(d->ev), f.p) / t[i] - 1);
        free(s), free(t);
        const double wd = !by_arch ? 1.0 : exp(-distance2(tf, d->feat, sd) / (2 * TARGET_NEIGHBOURHOOD * TARGET_NEIGHBOURHOOD)) + 1e-9;
        total += wd * e / m;
        counted += wd;
    }
    return counted ? total / counted : INFINITY;
}

/* Learns how far the similarity reaches for the group, leaving each device out in turn:
 * the reach (and, for a form with power parameters, their reach in board power: the pair
 * on the grid) whose average predicts the left-out devices' own measurements best. The
 * left-out device stands for the target, so when no pool device shares the target's
 * architecture its siblings leave with it (a pool with three GP102 boards otherwise learns
 * the narrow reach that suits siblings, and a new architecture then takes one neighbour's
 * parameters), and the left-out devices near the target count most. (A line in one sheet
 * feature per parameter was tried too, learned the same way: with NeuSight's five training
 * devices it won on the left-out devices and lost on the unseen ones, a line through too
 * few points; docs/gpu-pricing.md.) */
static void learn(TransferPool *p, const char *group, const char *exclude, const double tf[TF_COUNT], Learned *L)
{
    int idx[64], nd = 0;
    for (int i = 0; i < p->n && nd < 64; i++)
        if (!skipped(&p->dev[i], exclude, NULL, NULL) && dev_ev_group(p->dev[i].ev, group))
            idx[nd++] = i;
    L->h = INFINITY;
    L->hp = INFINITY;
    L->err = 0;
    if (nd < 2)
        return;
    double best = INFINITY;
    const size_t nq = power_form(p, group) ? sizeof REACH / sizeof REACH[0] : 1;
    for (size_t r = 0; r < sizeof REACH / sizeof REACH[0]; r++) {
        for (size_t q = 0; q < nq; q++) {
            const double e = loo_error(p, group, exclude, idx, nd, L->by_arch, tf, REACH[r], REACH[q]);
            if (e < best) {
                best = e;
                L->h = REACH[r];
                L->hp = REACH[q];
            }
        }
    }
    L->err = isfinite(best) ? best : 0;
}

/* Whether a pool device (but exclude) with evidence of the group is of architecture arch. */
static bool arch_in_pool(const TransferPool *p, const char *group, const char *arch, const char *exclude)
{
    if (!arch || !arch[0])
        return false;
    for (int i = 0; i < p->n; i++)
        if (!skipped(&p->dev[i], exclude, NULL, NULL) && strcmp(p->dev[i].arch, arch) == 0 &&
            dev_ev_group(p->dev[i].ev, group))
            return true;
    return false;
}

int tp_params(TransferPool *p, const char *group, const double tf[TF_COUNT], const char *arch, const char *exclude,
              GpuGroupFit *out, TransferInfo *info)
{
    TransferInfo local;
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    const char *ex = exclude ? exclude : "";
    const bool by_arch = !arch_in_pool(p, group, arch, exclude);
    int l = 0;
    while (l < p->nlearned && !(strcmp(p->learned[l].group, group) == 0 && strcmp(p->learned[l].exclude, ex) == 0 &&
                                p->learned[l].by_arch == by_arch && memcmp(p->learned[l].tf, tf, sizeof p->learned[l].tf) == 0))
        l++;
    if (l == p->nlearned) {
        if (p->nlearned == p->lcap) {
            int cap = p->lcap ? 2 * p->lcap : 32;
            Learned *v = realloc(p->learned, (size_t)cap * sizeof *v);
            if (!v)
                return -1;
            p->learned = v;
            p->lcap = cap;
        }
        Learned *L = &p->learned[p->nlearned++];
        snprintf(L->group, sizeof L->group, "%s", group);
        snprintf(L->exclude, sizeof L->exclude, "%s", ex);
        L->by_arch = by_arch;
        memcpy(L->tf, tf, sizeof L->tf);
        learn(p, group, exclude, tf, L);
    }
    const Learned *L = &p->learned[l];
    if (combine(p, group, tf, exclude, NULL, NULL, L->h, L->hp, out, info) != 0)
        return 1;
    info->h = L->h;
    info->loo_err = L->err;
    if (L->err > out->band)
        out->band = L->err;
    return 0;
}
