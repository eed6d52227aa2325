/* microbench/calibrate.c — the calibration driver: measures every descriptor of every
 * benchmark family once and stores each measurement as soon as it is taken, so an
 * interrupted calibration keeps what it measured.
 *
 * Rounds: on a shared machine contention comes in bursts of seconds to minutes; a kernel
 * measured within one burst carries it into every op it prices (two calibrations an hour
 * apart gave the same keys 0.34x..3.2x each other's time here, issue 4). With p->rounds = R
 * the lists are measured in R passes, each taking 1/R of a kernel's sampling budget, and a
 * kernel's samples from all passes are pooled (its spread and CI), while its price is the
 * median of the passes' medians: each pass one vote. A pass in a burst samples longer
 * before its CI closes, so the pooled median followed it: in one zoo calibration a 0.65 ms
 * GEMM took 8 samples at 640-750 us in its first pass and 3 each at 414-425 us in the
 * other two, and the pooled median, 653 us, priced fista's step 16% high. Each sample
 * keeps its pass, so calibrate --show can tell a stretch of minutes that slowed a whole
 * pass (which no median passes by).
 *
 * Placement: with two threads or more, a cache line's round trip between the threads is
 * probed before and after each kernel's pass (microbench/placement.c). A pass either of
 * whose probes took MB_FAR_RTT times the fastest round trip the calibration has seen ran
 * with the cores apart (measurement.far_passes counts them), and each kernel is priced
 * from its near passes, unless it has none: a price from one placement, not a mixture that
 * no step runs at. Near, not whichever placement prevailed: the prices of kernels timed
 * apart do not add up to a step run apart, whose ops pass their data between the cores
 * where a kernel repeated on the same split does not. Stop 28, a calibration priced from
 * its apart passes (65% of them): P3B1's step priced at 4.25 ms, its steps apart 7.4 ms;
 * one priced near: within 2.5% of the near steps of 21 of 24 models (stop 27). Classed at
 * the kernel's last pass, when the fastest round trip has been seen over rounds - 1 whole
 * passes at least. Near is not enough: the host at times runs both vCPUs on one core, where
 * the round trip reads near and a 2-thread kernel runs at one core's speed, so each pass is
 * also probed for that (mb_core_share) and such a pass (measurement.shared_passes) is left
 * out too: the price is the cores' at the calibration's placement, near and one each.
 * Each pass's class is stored (measurement.pass_placement, a letter a pass), and so is the
 * median of the apart passes' medians (apart_s): the apart placement's price, which the
 * predictor applies as a ratio over the near one (predictor/cost_model.c, cm_set_apart)
 * where validate finds a run's cores apart.
 */
#include "microbench/mb.h"
#include "ops/comm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the cores were in each pass of one kernel, by its slower probes (placement.c). */
typedef struct {
    double rtt_ns; /* the round trip */
    double share;  /* FMA on two threads over one */
} PassProbe;

/* Classes each pass r of one kernel: apart (a round trip MB_FAR_RTT times the fastest the
 * calibration saw, or more), else on one core (a share of MB_SHARED_CORE or more), else at
 * the calibration's placement, near. Writes a letter a pass to letters (n, a, s: the
 * measurement's pass_placement) and counts the first two in *far and *shared. */
static void classify_passes(const PassProbe *probe, int rounds, double fastest, char *letters, int *far, int *shared)
{
    *far = *shared = 0;
    for (int r = 0; r < rounds; r++) {
        const bool apart = isfinite(fastest) && fastest > 0 && probe[r].rtt_ns >= MB_FAR_RTT * fastest;
        const bool one_core = !apart && probe[r].share >= MB_SHARED_CORE;
        letters[r] = apart ? 'a' : one_core ? 's' : 'n';
        *far += apart;
        *shared += one_core;
    }
    letters[rounds] = '\0';
}

/* The passes whose letter is not `keep`, marked for mb_pass_median to leave out. */
static void passes_other_than(const char *letters, int rounds, char keep, bool *off)
{
    for (int r = 0; r < rounds; r++)
        off[r] = letters[r] != keep;
}

/* Both probes, now. */
static PassProbe probe_now(int threads)
{
    return (PassProbe){mb_core_rtt_ns(threads), mb_core_share(threads)};
}

int mb_calibrate(Db *db, int64_t calibration_id, const MbProtocol *p, int threads,
                 const MbFamily *fams, int nfams, MbProgress progress, void *progress_ctx,
                 volatile sig_atomic_t *stop, char *err, size_t errlen)
{
    int rc = -1;
    int total_in = 0;
    char (*keys)[OP_KEY_MAX] = NULL;
    bool *measure = NULL, *skipped = NULL; /* skipped: did not fit in memory */
    double *samples = NULL, *scratch = NULL;
    double **pooled = NULL; /* rounds > 1: each kernel's samples so far */
    int **pooled_round = NULL; /* rounds > 1: the pass each of them came from */
    int *npooled = NULL;
    double *warm_pooled = NULL; /* rounds > 1: each kernel's warm median per pass (rounds each) */
    const int rounds = p->rounds > 1 ? p->rounds : 1;
    PassProbe *pass_probe = NULL; /* threads > 1: each kernel's slower probes per pass (rounds each) */
    double rtt_fastest = INFINITY; /* the fastest round trip probed so far, ns */
    MbProtocol pass = *p; /* one pass's share of the sampling budget */
    if (rounds > 1) {
        pass.target_s = p->target_s / rounds;
        pass.min_reps = p->min_reps / rounds > 2 ? p->min_reps / rounds : 2;
        pass.max_reps = p->max_reps / rounds > pass.min_reps ? p->max_reps / rounds : pass.min_reps;
        pass.long_min_reps = p->long_min_reps / rounds > 1 ? p->long_min_reps / rounds : 1;
    }
    const int pooled_max = rounds * pass.max_reps;

    for (int f = 0; f < nfams; f++)
        total_in += fams[f].n;
    if (total_in > 0) {
        keys = malloc((size_t)total_in * sizeof *keys);
        measure = malloc((size_t)total_in * sizeof *measure);
        skipped = calloc((size_t)total_in, sizeof *skipped);
    }
    samples = malloc((size_t)(p->max_reps > 0 ? p->max_reps : 1) * sizeof *samples);
    scratch = malloc((size_t)(pooled_max > 0 ? pooled_max : 1) * sizeof *scratch);
    if (rounds > 1 && total_in > 0) {
        pooled = calloc((size_t)total_in, sizeof *pooled);
        pooled_round = calloc((size_t)total_in, sizeof *pooled_round);
        npooled = calloc((size_t)total_in, sizeof *npooled);
        warm_pooled = calloc((size_t)total_in * (size_t)rounds, sizeof *warm_pooled);
    }
    if (threads > 1 && total_in > 0 &&
        !(pass_probe = calloc((size_t)total_in * (size_t)rounds, sizeof *pass_probe))) {
        snprintf(err, errlen, "out of memory for %d calibration keys", total_in);
        goto cleanup;
    }
    if ((total_in > 0 && (!keys || !measure || !skipped)) || !samples || !scratch ||
        (rounds > 1 && total_in > 0 && (!pooled || !pooled_round || !npooled || !warm_pooled))) {
        snprintf(err, errlen, "out of memory for %d calibration keys", total_in);
        goto cleanup;
    }

    /* Deduplicate by key, first family wins (the database allows one row per key and
     * calibration). A quadratic scan: lists hold a few hundred descriptors, and it keeps
     * the first-wins order obvious. */
    int total = 0;
    for (int f = 0, i = 0; f < nfams; f++) {
        for (int j = 0; j < fams[f].n; j++, i++) {
            op_key(&fams[f].ops[j], keys[i]);
            measure[i] = true;
            for (int q = 0; q < i && measure[i]; q++)
                if (measure[q] && strcmp(keys[q], keys[i]) == 0)
                    measure[i] = false;
            total += measure[i];
        }
    }

    double start = mb_now_s();
    int done = 0;
    for (int round = 0; round < rounds; round++) {
        for (int f = 0, i = 0; f < nfams; f++) {
            for (int j = 0; j < fams[f].n; j++, i++) {
                if (!measure[i])
                    continue;
                double stopping = stop && *stop ? 1 : 0;
                comm_allreduce_max_f64(&stopping, 1); /* under mpirun every rank stops together */
                if (stopping) {
                    rc = 1;
                    goto cleanup;
                }
                comm_barrier(); /* ranks measuring together start each kernel together */
                MeasurementRow m;
                char terr[256] = "";
                const PassProbe before = probe_now(threads);
                int trc = mb_time_op(&fams[f].ops[j], &pass, threads, &m, samples, terr, sizeof terr);
                const PassProbe after = probe_now(threads);
                if (pass_probe) {
                    pass_probe[(size_t)i * (size_t)rounds + (size_t)round] =
                        (PassProbe){fmax(before.rtt_ns, after.rtt_ns), fmax(before.share, after.share)};
                    if (before.rtt_ns > 0)
                        rtt_fastest = fmin(rtt_fastest, fmin(before.rtt_ns, after.rtt_ns));
                }
                /* a kernel too large for the memory (per rank) is left out on every rank,
                 * with a warning: predictions price its key from the fitted model */
                double too_big = trc == MB_DOES_NOT_FIT ? 1 : 0;
                comm_allreduce_max_f64(&too_big, 1);
                if (too_big) {
                    if (!skipped[i] && db)
                        fprintf(stderr, "calibrate: left out %s: %s\n", keys[i],
                                trc == MB_DOES_NOT_FIT ? terr : "does not fit on another rank");
                    skipped[i] = true;
                    done++;
                    if (progress)
                        progress(done, total * rounds, fams[f].family, keys[i], mb_now_s() - start, progress_ctx);
                    continue;
                }
                const bool last = round == rounds - 1;
                bool pass_off[MB_MAX_ROUNDS] = {false}; /* at another placement than near, a core each */
                bool not_apart[MB_MAX_ROUNDS] = {false};
                if (pass_probe && last) {
                    classify_passes(pass_probe + (size_t)i * (size_t)rounds, rounds, rtt_fastest, m.pass_placement,
                                    &m.far_passes, &m.shared_passes);
                    passes_other_than(m.pass_placement, rounds, 'n', pass_off);
                    passes_other_than(m.pass_placement, rounds, 'a', not_apart);
                } else if (last) {
                    memset(m.pass_placement, '-', (size_t)rounds); /* one thread: no placement */
                    m.pass_placement[rounds] = '\0';
                }
                if (trc == 0 && rounds > 1) { /* pool this pass's samples; stored after the last */
                    if (!pooled[i]) {
                        pooled[i] = malloc((size_t)pooled_max * sizeof *pooled[i]);
                        pooled_round[i] = malloc((size_t)pooled_max * sizeof *pooled_round[i]);
                    }
                    if (!pooled[i] || !pooled_round[i]) {
                        snprintf(terr, sizeof terr, "out of memory pooling its samples");
                        m.reps = 0;
                        trc = -1;
                    } else {
                        memcpy(pooled[i] + npooled[i], m.samples, (size_t)m.nsamples * sizeof *m.samples);
                        for (int s = 0; s < m.nsamples; s++)
                            pooled_round[i][npooled[i] + s] = round;
                        npooled[i] += m.nsamples;
                        double *warm = warm_pooled + (size_t)i * (size_t)rounds;
                        warm[round] = m.warm_s;
                        if (last) {
                            mb_row_stats(&m, pooled[i], npooled[i], m.inner, scratch);
                            m.sample_rounds = pooled_round[i];
                            m.median_s = mb_pass_median(pooled[i], pooled_round[i], npooled[i], rounds, pass_off,
                                                        scratch);
                            /* the apart placement's price, from the apart passes alone */
                            if (m.far_passes > 0)
                                m.apart_s = mb_pass_median(pooled[i], pooled_round[i], npooled[i], rounds, not_apart,
                                                           scratch);
                            /* the passes' warm medians, pooled by their median (those at
                             * the calibration's placement where there are any) */
                            const bool all_off = m.far_passes + m.shared_passes == rounds;
                            int nwarm = 0;
                            for (int r = 0; r < rounds; r++)
                                if (!pass_off[r] || all_off)
                                    scratch[nwarm++] = warm[r];
                            MbStats st;
                            mb_stats(scratch, nwarm, &st);
                            m.warm_s = st.median;
                        }
                    }
                }
                if (trc == 0 && rounds == 1 && m.far_passes == 1)
                    m.apart_s = m.median_s; /* its one pass was apart */
                /* A kernel that was timed but computed wrong results is stored as evidence
                 * (validated = 0) and still fails the calibration: a wrong kernel must never
                 * price a prediction. Any other failure (out of memory) stores nothing. */
                bool timed_but_wrong = trc != 0 && m.reps > 0 && !m.validated;
                bool stored = true;
                if (((trc == 0 && last) || timed_but_wrong) && db) { /* db: rank 0 (or the only process) */
                    m.calibration_id = calibration_id;
                    snprintf(m.family, sizeof m.family, "%s", fams[f].family);
                    if (db_measurement_insert(db, &m) != 0) {
                        snprintf(err, errlen, "storing %s: %s", keys[i], db_errmsg(db));
                        stored = false;
                    }
                }
                double failed = trc != 0 || !stored ? 1 : 0; /* a failure on any rank stops them all */
                comm_allreduce_max_f64(&failed, 1);
                if (!stored)
                    goto cleanup;
                if (failed && trc == 0) {
                    snprintf(err, errlen, "another rank failed at %s", keys[i]);
                    goto cleanup;
                }
                if (trc != 0) {
                    if (timed_but_wrong)
                        snprintf(err, errlen, "%s", terr); /* names the key */
                    else
                        snprintf(err, errlen, "%s: %s", keys[i], terr);
                    goto cleanup;
                }
                done++;
                if (progress)
                    progress(done, total * rounds, fams[f].family, keys[i], mb_now_s() - start, progress_ctx);
            }
        }
    }
    rc = 0;
    if (db && isfinite(rtt_fastest) && db_calibration_set_rtt(db, calibration_id, rtt_fastest) != 0) {
        snprintf(err, errlen, "storing the threads' fastest round trip: %s", db_errmsg(db));
        rc = -1;
    }

cleanup:
    mb_release();
    for (int i = 0; i < total_in; i++) {
        if (pooled)
            free(pooled[i]);
        if (pooled_round)
            free(pooled_round[i]);
    }
    free(pooled);
    free(pooled_round);
    free(npooled);
    free(warm_pooled);
    free(pass_probe);
    free(keys);
    free(measure);
    free(skipped);
    free(samples);
    free(scratch);
    return rc;
}
