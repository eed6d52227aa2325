/* verify/drift.c — the machine's speed now against its calibration. */
#include "verify/drift.h"

#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "microbench/mb.h"
#include "ops/comm.h"

int drift_measure_ops(int threads, const CostModel *cm, const OpDesc *refs, int nrefs, double slowdown, Drift *out,
                      char *err, size_t errlen)
{
    enum { MAX_REFS = 8 };
    if (nrefs > MAX_REFS)
        nrefs = MAX_REFS;
    /* the calibrated times (rank 0 holds the calibration; under mpirun every rank times the
     * same references at once, as the calibration's ranks measured together) */
    double calibrated[MAX_REFS] = {0};
    for (int i = 0; cm && i < nrefs; i++)
        calibrated[i] = cm_measured_s(cm, &refs[i]);
    if (comm_active() && comm_size() > 1)
        comm_bcast(calibrated, sizeof calibrated, 0);
    double logsum[2] = {0, 0};
    int n[2] = {0, 0};
    MbProtocol p = mb_protocol(MB_QUICK);
    double samples[64];
    for (int i = 0; i < nrefs; i++) {
        if (calibrated[i] <= 0)
            continue;
        MeasurementRow m;
        char why[256];
        if (mb_time_op(&refs[i], &p, threads, &m, samples, why, sizeof why) != 0) {
            snprintf(err, errlen, "drift reference: %s", why);
            return 1;
        }
        const int cls = drift_compute_kind(op_kind_name(refs[i].kind)) ? 0 : 1;
        logsum[cls] += log(m.median_s / (calibrated[i] * slowdown));
        n[cls]++;
    }
    mb_release();
    /* the run after this checks the node's available memory: no rank may still hold its
     * references' buffers (rank 0 also its spot-check copies) when another checks. Seen at
     * np=4 on 24 GiB: P1B1's update (2.7 GiB of parameters and gradients over the ranks)
     * left too little for its run. */
    if (comm_active() && comm_size() > 1) {
        malloc_trim(0); /* under mpirun freed heap stays mapped (ops/comm.c) */
        comm_barrier();
    }
    *out = (Drift){.compute = n[0] ? exp(logsum[0] / n[0]) : 1, .memory = n[1] ? exp(logsum[1] / n[1]) : 1,
                   .ncompute = n[0], .nmemory = n[1]};
    return 0;
}

/* The cross-core read the drift times: the calibration's curve point of the largest
 * working set per thread up to a quarter of the last-level cache over the threads (64 KiB
 * times a power of 4: a point of the default and of the quick list alike), so that it
 * stays in the cache and measures the cores' distance, not DRAM. */
static OpDesc cross_core_reference(int threads)
{
    const size_t share = mb_llc_bytes() / (4 * (size_t)threads);
    size_t ws = (size_t)64 << 10;
    while (ws * 4 <= share)
        ws *= 4;
    return op_membw(MEMBW_CROSS, threads, ws, 1);
}

double drift_cross_core(int threads, const CostModel *cm)
{
    if (threads < 2 || !cm || (comm_active() && comm_size() > 1))
        return 0;
    const OpDesc d = cross_core_reference(threads);
    const double calibrated = cm_measured_s(cm, &d);
    if (calibrated <= 0)
        return 0; /* a calibration without the memory family's cross-core curve */
    MbProtocol p = mb_protocol(MB_QUICK);
    double samples[64];
    MeasurementRow m;
    char err[256];
    const int rc = mb_time_op(&d, &p, threads, &m, samples, err, sizeof err);
    mb_release();
    return rc == 0 ? m.median_s / calibrated : 0;
}

double drift_core_share(int threads)
{
    if (threads < 2 || (comm_active() && comm_size() > 1))
        return 0;
    return mb_core_share(threads);
}

int drift_measure(int threads, const CostModel *cm, Drift *out, char *err, size_t errlen)
{
    /* shapes every calibration mode measures: gemm-sweep's 1024 square, cnn-sweep's 56x56x64
     * 3x3 at batch 32, eltwise's 2^22 element sweep points, cnn-sweep's batch norm */
    OpDesc conv = op_conv2d(PHASE_FWD, 32, 64, 56, 56, 64, 3, 3, 1, PAD_SAME, 1);
    const OpDesc refs[] = {
        op_gemm(PHASE_FWD, 1024, 1024, 1024, false, false, 0.0f), conv,
        op_act(PHASE_FWD, ACT_RELU, (size_t)1 << 22), op_copy(PHASE_FWD, (size_t)1 << 22),
        op_batchnorm(PHASE_FWD, 32, 64, 56 * 56, 1e-3f, 0.99f, true)};
    const int rc = drift_measure_ops(threads, cm, refs, (int)(sizeof refs / sizeof refs[0]), 1.0, out, err, errlen);
    if (rc == 0) {
        out->cross = drift_cross_core(threads, cm);
        out->share = drift_core_share(threads);
    }
    return rc;
}

bool drift_compute_kind(const char *kind)
{
    return strcmp(kind, "gemm") == 0 || strcmp(kind, "bmm") == 0 || strcmp(kind, "conv2d") == 0 ||
           strcmp(kind, "spmm") == 0;
}

double drift_adjusted_s(const Drift *d, const OpTimeRow *ops, int nops)
{
    double t = 0;
    for (int i = 0; i < nops; i++)
        t += ops[i].time_s * (drift_compute_kind(ops[i].kind) ? d->compute : d->memory);
    return t;
}
