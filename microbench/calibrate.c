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
 * probed before each kernel's first sample and after every sample (microbench/placement.c,
 * mb_time_op_probed). A sample either of whose probes took MB_FAR_RTT times the fastest
 * round trip the calibration has seen ran with the cores apart, and each kernel is priced
 * from its near samples, unless it has none: a price from one placement, not a mixture that
 * no step runs at (a pass all of whose samples were apart is an apart pass,
 * measurement.far_passes; before stop 35 the probes around the whole pass classed it, and a
 * pass the host moved the vCPUs in priced a mixture). Near, not whichever placement
 * prevailed: the prices of kernels timed apart do not add up to a step run apart, whose ops
 * pass their data between the cores where a kernel repeated on the same split does not.
 * Stop 28, a calibration priced from
 * its apart passes (65% of them): P3B1's step priced at 4.25 ms, its steps apart 7.4 ms;
 * one priced near: within 2.5% of the near steps of 21 of 24 models (stop 27). Classed at
 * the kernel's last pass, when the fastest round trip has been seen over rounds - 1 whole
 * passes at least. Near is not enough: the host at times runs both vCPUs on one core, where
 * the round trip reads near and a 2-thread kernel runs at one core's speed, so each pass is
 * also probed for that (mb_core_share) and such a pass (measurement.shared_passes) is left
 * out too: the price is the cores' at the calibration's placement, near and one each.
 * Each pass's class is stored (measurement.pass_placement, a letter a pass), and so is the
 * median of the passes' apart samples' medians (apart_s): the apart placement's price,
 * which the predictor applies as a ratio over the near one (predictor/cost_model.c,
 * cm_set_apart) where validate finds a run's cores apart.
 */
#include "microbench/mb.h"
#include "ops/comm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Classes each sample of one kernel, and from them each pass r: a sample is apart when
 * either round trip around it (mb_time_op_probed) took MB_FAR_RTT times the fastest the
 * calibration saw, or more; a pass is apart when every sample of it was, else on one core
 * when its probes before or after found both threads on one core (a share of
 * MB_SHARED_CORE or more; the FMA burst is too long to run between samples), else at the
 * calibration's placement, near. Writes apart[i] per sample, a letter a pass to letters
 * (n, a, s: the measurement's pass_placement), and counts the passes apart and on one core
 * in *far and *shared. Samples, not passes: the host moves the vCPUs within a kernel's
 * pass too, and a pass classed by its end probes alone priced a mixture (stop 35's fista
 * GEMM: its one near pass 592 us, against 516 us near in the calibration before and 669 us
 * apart in both). */
static void classify_samples(const double *rtt_ns, const int *round, int n, const double *pass_share, int rounds,
                             double fastest, bool *apart, char *letters, int *far, int *shared)
{
    bool has_near[MB_MAX_ROUNDS] = {false};
    for (int i = 0; i < n; i++) {
        apart[i] = isfinite(fastest) && fastest > 0 && rtt_ns[i] >= MB_FAR_RTT * fastest;
        if (!apart[i])
            has_near[round ? round[i] : 0] = true;
    }
    *far = *shared = 0;
    for (int r = 0; r < rounds; r++) {
        const bool pass_apart = !has_near[r];
        const bool one_core = !pass_apart && pass_share[r] >= MB_SHARED_CORE;
        letters[r] = pass_apart ? 'a' : one_core ? 's' : 'n';
        *far += pass_apart;
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

/* A kernel's prices from its samples (n of them; round NULL: one pass) by where the cores
 * were: the near price from the near samples of the passes at the calibration's placement
 * (all samples where there is none: a kernel timed apart in every pass, which the predictor
 * takes to near by its kind's ratio), the apart price from the apart samples of the passes
 * not on one core (0: none). */
static void price_by_placement(MeasurementRow *m, const double *samples, const int *round, const double *rtt_ns,
                               int n, const double *pass_share, int rounds, double fastest, bool *apart,
                               double *scratch)
{
    classify_samples(rtt_ns, round, n, pass_share, rounds, fastest, apart, m->pass_placement, &m->far_passes,
                     &m->shared_passes);
    bool not_near_pass[MB_MAX_ROUNDS], one_core_pass[MB_MAX_ROUNDS];
    passes_other_than(m->pass_placement, rounds, 'n', not_near_pass);
    int apart_samples = 0;
    for (int r = 0; r < rounds; r++)
        one_core_pass[r] = m->pass_placement[r] == 's';
    for (int i = 0; i < n; i++)
        apart_samples += apart[i] && !one_core_pass[round ? round[i] : 0];
    m->median_s = mb_pass_median(samples, round, n, rounds, not_near_pass, apart, scratch);
    m->apart_s = 0;
    if (apart_samples > 0) {
        for (int i = 0; i < n; i++) /* from here on: not apart */
            apart[i] = !apart[i];
        m->apart_s = mb_pass_median(samples, round, n, rounds, one_core_pass, apart, scratch);
    }
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
    double **pooled_rtt = NULL; /* rounds > 1, threads > 1: the round trip around each of them */
    double *sample_rtt = NULL;  /* threads > 1: one pass's, around each sample (max_reps) */
    bool *sample_mask = NULL;   /* threads > 1: price_by_placement's scratch (pooled_max) */
    int *npooled = NULL;
    double *warm_pooled = NULL; /* rounds > 1: each kernel's warm median per pass (rounds each) */
    const int rounds = p->rounds > 1 ? p->rounds : 1;
    /* threads > 1: per kernel and pass (rounds each), the larger core share of the probes
     * just before and just after the pass (mb_core_share: both threads on one core) */
    double *pass_share = NULL;
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
        (!(pass_share = calloc((size_t)total_in * (size_t)rounds, sizeof *pass_share)) ||
         !(sample_rtt = calloc((size_t)(p->max_reps > 0 ? p->max_reps : 1), sizeof *sample_rtt)) ||
         !(sample_mask = calloc((size_t)(pooled_max > 0 ? pooled_max : 1), sizeof *sample_mask)) ||
         (rounds > 1 && !(pooled_rtt = calloc((size_t)total_in, sizeof *pooled_rtt))))) {
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
                /* the round trip is probed around each sample (mb_time_op_probed); the core
                 * share, too long a burst for that, around the pass */
                const double share_before = pass_share ? mb_core_share(threads) : 0;
                int trc = mb_time_op_probed(&fams[f].ops[j], &pass, threads, &m, samples,
                                            pass_share ? sample_rtt : NULL, terr, sizeof terr);
                if (pass_share) {
                    pass_share[(size_t)i * (size_t)rounds + (size_t)round] = fmax(share_before, mb_core_share(threads));
                    for (int s = 0; trc == 0 && s < m.nsamples; s++)
                        if (sample_rtt[s] > 0)
                            rtt_fastest = fmin(rtt_fastest, sample_rtt[s]);
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
                const double *shares = pass_share ? pass_share + (size_t)i * (size_t)rounds : NULL;
                if (last && !shares) {
                    memset(m.pass_placement, '-', (size_t)rounds); /* one thread: no placement */
                    m.pass_placement[rounds] = '\0';
                }
                if (trc == 0 && rounds > 1) { /* pool this pass's samples; stored after the last */
                    if (!pooled[i]) {
                        pooled[i] = malloc((size_t)pooled_max * sizeof *pooled[i]);
                        pooled_round[i] = malloc((size_t)pooled_max * sizeof *pooled_round[i]);
                        if (shares)
                            pooled_rtt[i] = malloc((size_t)pooled_max * sizeof *pooled_rtt[i]);
                    }
                    if (!pooled[i] || !pooled_round[i] || (shares && !pooled_rtt[i])) {
                        snprintf(terr, sizeof terr, "out of memory pooling its samples");
                        m.reps = 0;
                        trc = -1;
                    } else {
                        memcpy(pooled[i] + npooled[i], m.samples, (size_t)m.nsamples * sizeof *m.samples);
                        if (shares)
                            memcpy(pooled_rtt[i] + npooled[i], sample_rtt, (size_t)m.nsamples * sizeof *sample_rtt);
                        for (int s = 0; s < m.nsamples; s++)
                            pooled_round[i][npooled[i] + s] = round;
                        npooled[i] += m.nsamples;
                        double *warm = warm_pooled + (size_t)i * (size_t)rounds;
                        warm[round] = m.warm_s;
                        if (last) {
                            mb_row_stats(&m, pooled[i], npooled[i], m.inner, scratch);
                            m.sample_rounds = pooled_round[i];
                            m.sample_rtt_ns = shares ? pooled_rtt[i] : NULL;
                            if (shares) /* the near and apart prices, sample by sample */
                                price_by_placement(&m, pooled[i], pooled_round[i], pooled_rtt[i], npooled[i], shares,
                                                   rounds, rtt_fastest, sample_mask, scratch);
                            else
                                m.median_s = mb_pass_median(pooled[i], pooled_round[i], npooled[i], rounds, NULL,
                                                            NULL, scratch);
                            /* the passes' warm medians, pooled by their median (those at
                             * the calibration's placement where there are any) */
                            bool pass_off[MB_MAX_ROUNDS];
                            passes_other_than(m.pass_placement, rounds, 'n', pass_off);
                            const bool all_off = m.far_passes + m.shared_passes == rounds;
                            int nwarm = 0;
                            for (int r = 0; r < rounds; r++)
                                if (!shares || !pass_off[r] || all_off)
                                    scratch[nwarm++] = warm[r];
                            MbStats st;
                            mb_stats(scratch, nwarm, &st);
                            m.warm_s = st.median;
                        }
                    }
                }
                if (trc == 0 && rounds == 1 && shares) { /* one pass: its samples by placement */
                    m.sample_rtt_ns = sample_rtt;
                    price_by_placement(&m, m.samples, NULL, sample_rtt, m.nsamples, shares, 1, rtt_fastest, sample_mask,
                                       scratch);
                }
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
        if (pooled_rtt)
            free(pooled_rtt[i]);
    }
    free(pooled);
    free(pooled_round);
    free(pooled_rtt);
    free(sample_rtt);
    free(sample_mask);
    free(npooled);
    free(warm_pooled);
    free(pass_share);
    free(keys);
    free(measure);
    free(skipped);
    free(samples);
    free(scratch);
    return rc;
}
