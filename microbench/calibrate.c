/* microbench/calibrate.c — the calibration driver: measures every descriptor of every
 * benchmark family once and stores each measurement as soon as it is taken, so an
 * interrupted calibration keeps what it measured.
 */
#include "microbench/mb.h"
#include "ops/comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mb_calibrate(Db *db, int64_t calibration_id, const MbProtocol *p, int threads,
                 const MbFamily *fams, int nfams, MbProgress progress, void *progress_ctx,
                 volatile sig_atomic_t *stop, char *err, size_t errlen)
{
    int rc = -1;
    int total_in = 0;
    char (*keys)[OP_KEY_MAX] = NULL;
    bool *measure = NULL;
    double *samples = NULL;

    for (int f = 0; f < nfams; f++)
        total_in += fams[f].n;
    if (total_in > 0) {
        keys = malloc((size_t)total_in * sizeof *keys);
        measure = malloc((size_t)total_in * sizeof *measure);
    }
    samples = malloc((size_t)(p->max_reps > 0 ? p->max_reps : 1) * sizeof *samples);
    if ((total_in > 0 && (!keys || !measure)) || !samples) {
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
            int trc = mb_time_op(&fams[f].ops[j], p, threads, &m, samples, terr, sizeof terr);
            /* A kernel that was timed but computed wrong results is stored as evidence
             * (validated = 0) and still fails the calibration: a wrong kernel must never
             * price a prediction. Any other failure (out of memory) stores nothing. */
            bool timed_but_wrong = trc != 0 && m.reps > 0 && !m.validated;
            bool stored = true;
            if ((trc == 0 || timed_but_wrong) && db) { /* db: rank 0 (or the only process) */
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
                progress(done, total, fams[f].family, keys[i], mb_now_s() - start, progress_ctx);
        }
    }
    rc = 0;

cleanup:
    mb_release();
    free(keys);
    free(measure);
    free(samples);
    return rc;
}
