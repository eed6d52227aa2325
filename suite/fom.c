/* suite/fom.c — the suite's FOMs predicted for a proposed system (fom.h). */
#include "suite/fom.h"

#include "models/model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A step priced: its time alone, band, device time and memory. */
typedef struct {
    double t, lo, hi, dev, mem;
    bool fits;
} Step;

static int step_of(const SystemPricer *sp, const ModelSpec *m, int batch, PlanMode mode, int head, Step *out,
                   DeviceStep *ds, double *grad_bytes, char *err, size_t errlen)
{
    DeviceStep s;
    if (sysp_step(sp, m, batch, mode, head, &s, grad_bytes, err, errlen) != 0)
        return -1;
    *out = (Step){s.compute_s, s.lo_s, s.hi_s, s.device_s, s.mem_bytes, s.fits};
    if (ds)
        *ds = s;
    return 0;
}

/* k instances sharing a device: the device runs their kernels one after another, each
 * one's host time overlapping the others' kernels (fom.h). */
static double shared_factor(const Step *s, int k)
{
    return k <= 1 || !(s->t > 0) ? 1.0 : fmax(1.0, k * s->dev / s->t);
}

static int devices_of(const SystemPricer *sp, const FomOptions *o, int *nodes)
{
    *nodes = o->nodes > 0 ? o->nodes : sp->sys.nodes > 0 ? sp->sys.nodes : 1;
    return *nodes * (sp->sys.devices_per_node > 0 ? sp->sys.devices_per_node : 1);
}

/* How many instances of memory `mem` the device holds (this machine: one, its own memory
 * being what the run has). */
static int fit_count(const SystemPricer *sp, double mem)
{
    if (sp->sys.device.calibrated)
        return 1;
    if (!(mem > 0) || sp->sys.device.mem_bytes <= 0)
        return 1;
    const double k = floor(sp->sys.device.mem_bytes / mem);
    return k < 1 ? 0 : k > 1e6 ? 1000000 : (int)k;
}

static void add_sources(FomBenchTime *out, const DeviceStep *ds)
{
    for (int k = 0; k < DP_SOURCE_COUNT; k++)
        out->priced_by[k] += ds->priced_by[k];
}

/* rows of a data set at batch b: the full batches' steps and the last partial one's, priced */
static int rows_time(const SystemPricer *sp, const ModelSpec *m, int b, PlanMode mode, int head, long rows, int k,
                     double *t, double *lo, double *hi, char *err, size_t errlen)
{
    const long full = rows / b, rest = rows % b;
    Step s;
    if (full > 0) {
        if (step_of(sp, m, b, mode, head, &s, NULL, NULL, err, errlen) != 0)
            return -1;
        const double f = shared_factor(&s, k);
        *t += full * s.t * f, *lo += full * s.lo * f, *hi += full * s.hi * f;
    }
    if (rest > 0) {
        if (step_of(sp, m, (int)rest, mode, head, &s, NULL, NULL, err, errlen) != 0)
            return -1;
        const double f = shared_factor(&s, k);
        *t += s.t * f, *lo += s.lo * f, *hi += s.hi * f;
    }
    return 0;
}

static int throughput_time(const SystemPricer *sp, const ModelSpec *m, const SuiteBenchmark *b, const FomOptions *o,
                           int devices, FomBenchTime *out, char *err, size_t errlen)
{
    const int batch = m->default_batch;
    const PlanMode mode = b->metric == SUITE_RUN_S ? PLAN_TRAIN : PLAN_FWD_BWD;
    Step s;
    DeviceStep ds;
    if (step_of(sp, m, batch, mode, 0, &s, &ds, NULL, err, errlen) != 0)
        return -1;
    add_sources(out, &ds);
    out->batch = batch;
    out->mem_bytes = s.mem;
    out->fits = s.fits;
    out->fit_per_device = s.fits ? fit_count(sp, s.mem) : 0;
    if (o->reference && (!out->fits || out->fit_per_device < 1)) {
        /* the reference ran it: a memory estimate above the device's is the estimate's
         * error, not a reason to leave the reference out */
        out->memory_short = true;
        out->fits = true;
        out->fit_per_device = 1;
    }
    if (!out->fits || out->fit_per_device < 1)
        return 0;
    int k = o->reference ? 1 : o->per_device;
    if (k <= 0) /* the most that pay: until the device is busy */
        k = s.dev > 0 ? (int)fmin(1e6, floor(s.t / s.dev)) : 1;
    if (k < 1)
        k = 1;
    if (k > out->fit_per_device)
        k = out->fit_per_device;
    out->per_device = k;
    out->instances = k * devices;
    out->devices_per_instance = 1;
    if (b->metric == SUITE_RUN_S) {
        const int heads = m->nheads > 0 ? m->nheads : 1;
        const int epochs = m->epochs > 0 ? m->epochs : 1;
        double t = 0, lo = 0, hi = 0, alone = 0, alo = 0, ahi = 0;
        for (int h = 0; h < heads; h++) {
            const long train = m->nheads > 0 ? m->heads[h].train_samples : m->train_samples;
            const long test = m->nheads > 0 ? m->heads[h].test_samples : m->test_samples;
            double e[6] = {0}; /* one epoch of the head's rows: shared and alone, with bands */
            if (rows_time(sp, m, batch, PLAN_TRAIN, h, train, k, &e[0], &e[1], &e[2], err, errlen) != 0 ||
                rows_time(sp, m, batch, PLAN_TRAIN, h, train, 1, &e[3], &e[4], &e[5], err, errlen) != 0)
                return -1;
            t += epochs * e[0], lo += epochs * e[1], hi += epochs * e[2], alone += epochs * e[3];
            if (test > 0 && (rows_time(sp, m, batch, PLAN_INFERENCE, h, test, k, &t, &lo, &hi, err, errlen) != 0 ||
                             rows_time(sp, m, batch, PLAN_INFERENCE, h, test, 1, &alone, &alo, &ahi, err, errlen) != 0))
                return -1;
        }
        out->time_s = t, out->lo_s = lo, out->hi_s = hi, out->alone_s = alone;
        return 0;
    }
    const double f = shared_factor(&s, k), per = b->metric == SUITE_SAMPLE_S ? 1.0 / batch : 1.0;
    out->time_s = s.t * f * per, out->lo_s = s.lo * f * per, out->hi_s = s.hi * f * per;
    out->alone_s = s.t * per;
    Step fw;
    if (step_of(sp, m, batch, PLAN_INFERENCE, 0, &fw, NULL, NULL, err, errlen) != 0)
        return -1;
    out->fwd_s = fw.t * shared_factor(&fw, k) * per;
    return 0;
}

static int resnet_time(const SystemPricer *sp, const ModelSpec *m, const FomOptions *o, int devices,
                       FomBenchTime *out, char *err, size_t errlen)
{
    int per_device = 1, g;
    if (o->reference) { /* 5 instances on 20% of the system */
        out->instances = SUITE_RESNET_REF_INSTANCES;
        g = (int)floor(devices * SUITE_RESNET_REF_SHARE / SUITE_RESNET_REF_INSTANCES);
        if (g < 1)
            g = 1;
    } else {
        out->instances = SUITE_RESNET_INSTANCES;
        g = devices / SUITE_RESNET_INSTANCES; /* each on 2% of the system or less */
        if (g < 1) {
            g = 1;
            per_device = (SUITE_RESNET_INSTANCES + devices - 1) / devices;
        }
    }
    /* the instance's own system: g devices, inside one node or over whole nodes */
    SystemSpec s2 = sp->sys;
    const int dpn = sp->sys.devices_per_node > 0 ? sp->sys.devices_per_node : 1;
    int nodes = 1;
    if (g <= dpn)
        s2.devices_per_node = g;
    else {
        nodes = g / dpn;
        g = nodes * dpn;
    }
    s2.nodes = nodes;
    out->devices_per_instance = g;
    out->per_device = per_device;
    /* the zoo's batch per device, halved until per_device instances fit a device */
    int batch = m->default_batch;
    Step s;
    DeviceStep ds;
    double grad_bytes = 0;
    for (;;) {
        if (step_of(sp, m, batch, PLAN_TRAIN, 0, &s, &ds, &grad_bytes, err, errlen) != 0)
            return -1;
        out->fit_per_device = s.fits ? fit_count(sp, s.mem) : 0;
        if ((s.fits && out->fit_per_device >= per_device) || batch == 1)
            break;
        batch /= 2;
    }
    add_sources(out, &ds);
    out->batch = batch;
    out->mem_bytes = s.mem;
    out->fits = s.fits && out->fit_per_device >= per_device;
    if (!out->fits) {
        out->instances = 0;
        return 0;
    }
    const CommParams comm = whatif_comm_params(&s2, sp->cm, sp->prec);
    ScalePoint pt;
    whatif_scale_point(&s2, &comm, whatif_default_algo(&s2), sp->prec, &ds, grad_bytes, nodes, batch, false, 0,
                       SUITE_IMAGENET_TRAIN, &pt);
    /* instances sharing a device: its busy time bounds the iteration */
    const double f = per_device > 1 && pt.iter_s > 0 ? fmax(1.0, per_device * s.dev / pt.iter_s) : 1.0;
    const double epochs_s = SUITE_RESNET_EPOCHS * pt.epoch_s;
    out->alone_s = epochs_s;
    out->time_s = epochs_s * f;
    /* the band: the step's, the allreduce as priced */
    const double ar = pt.iter_s - s.t;
    const double iters = SUITE_RESNET_EPOCHS * (double)SUITE_IMAGENET_TRAIN / pt.global_batch;
    out->lo_s = iters * (s.lo + fmax(0, ar)) * f;
    out->hi_s = iters * (s.hi + fmax(0, ar)) * f;
    return 0;
}

int fom_bench_time(const SystemPricer *sp, const SuiteBenchmark *b, const FomOptions *o, FomBenchTime *out,
                   char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->b = b;
    const ModelSpec *m = zoo_find(b->model);
    if (!m) {
        snprintf(err, errlen, "internal: the suite's %s runs zoo model '%s', which the zoo lacks", b->name, b->model);
        return -1;
    }
    int nodes;
    const int devices = devices_of(sp, o, &nodes);
    const int rc = b->group == SUITE_RESNET ? resnet_time(sp, m, o, devices, out, err, errlen)
                                            : throughput_time(sp, m, b, o, devices, out, err, errlen);
    if (rc != 0) {
        char why[400];
        snprintf(why, sizeof why, "%s", err);
        snprintf(err, errlen, "%s (%s) on %s: %s", b->name, b->model, sp->sys.name, why);
    }
    return rc;
}

const char *fom_run_name(const FomOptions *o)
{
    return o->resnet_accuracy_pct > 0 ? "optimized" : "base";
}

static FomValue fom_of(const SuiteBenchmark *b, const FomBenchTime *t, double ref_s, double accuracy_pct)
{
    if (!t->fits || t->instances <= 0 || !(ref_s > 0))
        return (FomValue){0, 0, 0};
    if (b->group == SUITE_RESNET)
        return (FomValue){suite_resnet_fom(ref_s, t->time_s, accuracy_pct),
                          suite_resnet_fom(ref_s, t->hi_s, accuracy_pct),
                          suite_resnet_fom(ref_s, t->lo_s, accuracy_pct)};
    return (FomValue){suite_throughput_fom(ref_s, t->time_s, t->instances),
                      suite_throughput_fom(ref_s, t->hi_s, t->instances),
                      suite_throughput_fom(ref_s, t->lo_s, t->instances)};
}

static void groups(const FomValue *bench, FomValue *group, FomValue *overall)
{
    double g[3][SUITE_GROUP_COUNT];
    for (int k = 0; k < SUITE_GROUP_COUNT; k++) {
        double v[3][SUITE_BENCHMARKS];
        int n = 0;
        for (int i = 0; i < SUITE_BENCHMARKS; i++)
            if (suite_benchmarks[i].group == (SuiteGroup)k) {
                v[0][n] = bench[i].fom, v[1][n] = bench[i].lo, v[2][n] = bench[i].hi;
                n++;
            }
        for (int j = 0; j < 3; j++)
            g[j][k] = suite_group_fom(v[j], n);
        group[k] = (FomValue){g[0][k], g[1][k], g[2][k]};
    }
    *overall = (FomValue){suite_overall_fom(g[0]), suite_overall_fom(g[1]), suite_overall_fom(g[2])};
}

int fom_predict(const SystemPricer *sp, const SystemPricer *titan, const FomOptions *o, FomResult *out,
                void (*progress)(const char *what, void *ctx), void *ctx, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->devices = devices_of(sp, o, &out->nodes);
    const FomOptions ref = {.reference = true};
    for (int i = 0; i < SUITE_BENCHMARKS; i++) {
        const SuiteBenchmark *b = &suite_benchmarks[i];
        if (progress)
            progress(b->name, ctx);
        if (fom_bench_time(sp, b, o, &out->t[i], err, errlen) != 0 ||
            fom_bench_time(titan, b, &ref, &out->titan[i], err, errlen) != 0)
            return -1;
        const double priced_ref = out->titan[i].fits ? out->titan[i].time_s : 0;
        out->seed[i] = fom_of(b, &out->t[i], b->group == SUITE_RESNET ? priced_ref : b->titan_s,
                              o->resnet_accuracy_pct);
        out->priced[i] = fom_of(b, &out->t[i], priced_ref, o->resnet_accuracy_pct);
    }
    groups(out->seed, out->seed_group, &out->seed_overall);
    groups(out->priced, out->priced_group, &out->priced_overall);
    return 0;
}
