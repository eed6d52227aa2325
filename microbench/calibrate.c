/* microbench/calibrate.c — the calibration driver: measures every descriptor of every
 * benchmark family once and stores each measurement as soon as it is taken, so an
 * interrupted calibration keeps what it measured.
 *
 * Rounds: on a shared machine contention comes in bursts of seconds to minutes; a kernel
 * measured within one burst carries it into every op it prices (two calibrations an hour
 * apart gave the same keys 0.34x..3.2x each other's time here). With p->rounds = R
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
 * mb_time_op_probed). Once the probes so far show two modes, near and apart
 * (microbench/rtt_modes.h: on a host that keeps the cores in one placement nothing is
 * classed, and the calibration says so), a sample either of whose probes took MB_FAR_RTT
 * times the near mark (the split between the modes) ran with the cores apart, and each kernel is priced
 * from its near samples, unless it has none: a price from one placement, not a mixture that
 * no step runs at (a pass all of whose samples were apart is an apart pass,
 * measurement.far_passes; classed by the probes around the whole pass instead, a pass the
 * host moved the vCPUs in priced a mixture). Near, not whichever placement prevailed: the
 * prices of kernels timed apart do not add up to a step run apart, whose ops pass their
 * data between the cores where a kernel repeated on the same split does not. A calibration
 * priced from its apart passes (65% of them): P3B1's step priced at 4.25 ms, its steps
 * apart 7.4 ms; one priced near: within 2.5% of the near steps of 21 of 24 models. Classed
 * at the kernel's last pass, when the fastest round trip has been seen over rounds - 1
 * whole passes at least. Near is not enough: the host at times runs both vCPUs on one core,
 * where the round trip reads near and a 2-thread kernel runs at one core's speed, so each
 * pass is also probed for that (mb_core_share) and such a pass (measurement.shared_passes)
 * is left out too: the price is the cores' at the calibration's placement, near and one
 * each. Each pass's class is stored (measurement.pass_placement, a letter a pass), and so
 * is the median of the passes' apart samples' medians (apart_s): the apart placement's
 * price, which the predictor applies as a ratio over the near one (predictor/cost_model.c,
 * cm_set_apart) where validate finds a run's cores apart.
 */
#include "microbench/mb.h"
#include "microbench/rtt_modes.h"
#include "ops/comm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Classes each sample of one kernel, and from them each pass r: a sample is apart when
 * either round trip around it (mb_time_op_probed) took MB_FAR_RTT times the fastest the
 * calibration saw, or more; a pass is apart when every sample of it was, else on one core
 * when its probes before or after found both threads on one core (a share of
 * MB_SHARED_CORE or more; the FMA burst is too long to run between samples), else at the
 * calibration's placement, near. Writes apart[i] per sample, a letter a pass to letters
 * (n, a, s: the measurement's pass_placement), and counts the passes apart and on one core
 * in *far and *shared. Samples, not passes: the host moves the vCPUs within a kernel's
 * pass too, and a pass classed by its end probes alone priced a mixture (fista's GEMM in
 * one calibration: its one near pass 592 us, against 516 us near in the calibration before
 * and 669 us apart in both). */
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

/* Near catch-up. A kernel's near price is the median of its near passes; on a host that
 * keeps the cores apart for minutes, many kernels end the scheduled passes with one near
 * pass or none (one zoo calibration at 3 passes: 1,334 of 2,812 kernels with one, 732
 * with none). One pass alone sets the price of the first, however slow a stretch it fell
 * in (ufldl-cnn's 9x9 convolution 4.66 ms from its one near pass, 3.8-4.0 ms in the steps and
 * the calibration before: the model priced 30% high); the second is taken to near by its
 * neighbours' apart/near ratio, which spreads from x1 to x2 over kernels of one size (P3B1's
 * k=10 GEMM, x2.9 apart, taken to near at x1.0: its step priced 42% high). So after the
 * scheduled passes, each kernel with fewer than CATCHUP_NEAR near passes is timed again,
 * one pass's share of samples a time, up to CATCHUP_MAX more passes, each started only
 * once the probe finds the cores near (waiting asleep while they are apart), within
 * CATCHUP_BUDGET of the scheduled passes' time (CATCHUP_MIN_S at least). Its samples are
 * classed as every pass's are: a catch-up pass the host moved the cores in is apart too.
 * Only with 2 threads or more (the placement is probed), 2 passes or more, and one process
 * (ranks calibrating together share the cores' placement and would have to agree on every
 * wait). */
enum { CATCHUP_NEAR = 2, CATCHUP_MAX = 2 };
/* A tie-break. Two near passes that disagree price the kernel at their mean: a slow stretch
 * of the host in one of them costs half its excess (one zoo calibration: 1,042 of
 * 2,809 kernels with two near passes or more had them over x1.15 apart; alexnet-owt's
 * 72x9216x4096 GEMM 48.1 and 77.7 ms, priced 64.2, 45.3 in the steps; its 5x5 convolution
 * 207 and 248 ms, priced 228, 185 in the steps: the model priced 13% high). So a kernel with
 * an even count of near passes whose medians differ by more than the protocol's
 * catchup_split (MB_CATCHUP_SPLIT) is timed once more near, in the same catch-up, and
 * priced by the median of the odd count. */
static const double CATCHUP_BUDGET = 0.5; /* of the scheduled passes' time: the short kernels and the tie-breaks */
static const double CATCHUP_MIN_S = 5;     /* a short calibration's budget: time to wait out a stretch apart */

/* What the passes over the lists keep per kernel (index i over all families' lists). */
typedef struct {
    MbProtocol pass; /* one pass's share of the sampling budget */
    int threads;
    int stride;      /* passes a kernel may have: the scheduled ones and its catch-ups */
    int pooled_max;  /* samples a kernel may pool: stride passes at most */
    double **pooled;      /* rounds > 1: each kernel's samples so far */
    int **pooled_round;   /* rounds > 1: the pass each of them came from */
    double **pooled_rtt;  /* rounds > 1, threads > 1: the round trip around each of them */
    int *npooled;
    double *warm_pooled;  /* rounds > 1: each kernel's warm median per pass (stride each) */
    /* threads > 1: per kernel and pass (stride each), the larger core share of the probes
     * just before and just after the pass (mb_core_share: both threads on one core) */
    double *pass_share;
    double *samples;      /* one pass's (max_reps) */
    double *sample_rtt;   /* threads > 1: one pass's, around each sample (max_reps) */
    bool *sample_mask;    /* threads > 1: price_by_placement's scratch (pooled_max) */
    double *scratch;      /* pooled_max */
    /* threads > 1: every round trip probed so far, and the near mark they give
     * (microbench/rtt_modes.h: 0 while they show one mode, when nothing is classed apart) */
    double *probes, *probe_scratch;
    int nprobes, probes_cap, marked_at;
    double near_mark;
} CalState;

/* Adds a pass's probes to the calibration's and, once they have grown by a tenth since
 * the last look (or at the end: force), reads their modes again. -1 when out of memory. */
static int add_probes(CalState *s, const double *rtt, int n, bool force)
{
    if (s->nprobes + n > s->probes_cap) {
        const int cap = 2 * (s->nprobes + n) + 1024;
        double *p = realloc(s->probes, (size_t)cap * sizeof *p), *q;
        if (p)
            s->probes = p;
        if (!p || !(q = realloc(s->probe_scratch, (size_t)cap * sizeof *q)))
            return -1;
        s->probe_scratch = q;
        s->probes_cap = cap;
    }
    for (int k = 0; k < n; k++)
        if (rtt[k] > 0)
            s->probes[s->nprobes++] = rtt[k];
    if (force || (s->nprobes >= MB_RTT_MODES_MIN_PROBES && s->nprobes >= s->marked_at + s->marked_at / 10 + 1)) {
        MbRttModes m;
        mb_rtt_modes(s->probes, s->nprobes, s->probe_scratch, &m);
        /* once two modes are seen the mark only falls, as the fastest round trip did: a
         * pass classed apart stays apart by every later mark */
        const double mark = mb_rtt_near_mark(&m);
        if (mark > 0)
            s->near_mark = s->near_mark > 0 ? fmin(s->near_mark, mark) : mark;
        s->marked_at = s->nprobes;
    }
    return 0;
}

/* Times kernel i's pass `round` (one pass's share of its samples) into m, probing the
 * cores' round trip around each sample and their core share around the pass. Returns
 * mb_time_op_probed's code. */
static int time_pass(CalState *s, const OpDesc *d, int i, int round, MeasurementRow *m, char *terr, size_t len)
{
    /* the round trip is probed around each sample (mb_time_op_probed); the core share, too
     * long a burst for that, around the pass */
    const double share_before = s->pass_share ? mb_core_share(s->threads) : 0;
    const int trc = mb_time_op_probed(d, &s->pass, s->threads, m, s->samples, s->pass_share ? s->sample_rtt : NULL,
                                      terr, len);
    if (s->pass_share) {
        s->pass_share[(size_t)i * (size_t)s->stride + (size_t)round] = fmax(share_before, mb_core_share(s->threads));
        if (trc == 0 && add_probes(s, s->sample_rtt, m->nsamples, false) != 0) {
            snprintf(terr, len, "out of memory for the round trips probed");
            m->reps = 0;
            return -1;
        }
    }
    return trc;
}

/* Adds the pass just timed (m) to kernel i's pooled samples as pass `round`. -1 when out
 * of memory. */
static int pool_pass(CalState *s, int i, const MeasurementRow *m, int round)
{
    if (!s->pooled[i]) {
        s->pooled[i] = malloc((size_t)s->pooled_max * sizeof *s->pooled[i]);
        s->pooled_round[i] = malloc((size_t)s->pooled_max * sizeof *s->pooled_round[i]);
        if (s->pass_share)
            s->pooled_rtt[i] = malloc((size_t)s->pooled_max * sizeof *s->pooled_rtt[i]);
    }
    if (!s->pooled[i] || !s->pooled_round[i] || (s->pass_share && !s->pooled_rtt[i]))
        return -1;
    memcpy(s->pooled[i] + s->npooled[i], m->samples, (size_t)m->nsamples * sizeof *m->samples);
    if (s->pass_share)
        memcpy(s->pooled_rtt[i] + s->npooled[i], s->sample_rtt, (size_t)m->nsamples * sizeof *s->sample_rtt);
    for (int k = 0; k < m->nsamples; k++)
        s->pooled_round[i][s->npooled[i] + k] = round;
    s->npooled[i] += m->nsamples;
    s->warm_pooled[(size_t)i * (size_t)s->stride + (size_t)round] = m->warm_s;
    return 0;
}

/* Kernel i's statistics and prices from its pooled samples of `passes` passes, into m (the
 * last pass's row: its descriptor's counts and validation stay). */
static void price_pooled(CalState *s, int i, MeasurementRow *m, int passes)
{
    const double *shares = s->pass_share ? s->pass_share + (size_t)i * (size_t)s->stride : NULL;
    mb_row_stats(m, s->pooled[i], s->npooled[i], m->inner, s->scratch);
    m->sample_rounds = s->pooled_round[i];
    m->sample_rtt_ns = shares ? s->pooled_rtt[i] : NULL;
    if (shares) /* the near and apart prices, sample by sample */
        price_by_placement(m, s->pooled[i], s->pooled_round[i], s->pooled_rtt[i], s->npooled[i], shares, passes,
                           s->near_mark, s->sample_mask, s->scratch);
    else
        m->median_s = mb_pass_median(s->pooled[i], s->pooled_round[i], s->npooled[i], passes, NULL, NULL, s->scratch);
    /* the passes' warm medians, pooled by their median (those at the calibration's
     * placement where there are any) */
    const double *warm = s->warm_pooled + (size_t)i * (size_t)s->stride;
    bool pass_off[MB_PASSES_MAX];
    passes_other_than(m->pass_placement, passes, 'n', pass_off);
    const bool all_off = m->far_passes + m->shared_passes == passes;
    int nwarm = 0;
    for (int r = 0; r < passes; r++)
        if (!shares || !pass_off[r] || all_off)
            s->scratch[nwarm++] = warm[r];
    MbStats st;
    mb_stats(s->scratch, nwarm, &st);
    m->warm_s = st.median;
}

/* Stores m as a row of calibration `cal` under `family`; 0, or -1 with err set. */
static int store_row(Db *db, MeasurementRow *m, int64_t cal, const char *family, char *err, size_t errlen)
{
    m->calibration_id = cal;
    snprintf(m->family, sizeof m->family, "%s", family);
    if (db_measurement_insert(db, m) == 0)
        return 0;
    snprintf(err, errlen, "storing %s: %s", m->key, db_errmsg(db));
    return -1;
}

static int near_passes(const MeasurementRow *m)
{
    int n = 0;
    for (const char *c = m->pass_placement; *c; c++)
        n += *c == 'n';
    return n;
}

/* How far kernel i's near passes disagree (mb_pass_split): each pass's median of its near
 * samples, the samples the near price takes. */
static double near_pass_split(const CalState *s, int i, const MeasurementRow *m)
{
    const int passes = (int)strlen(m->pass_placement);
    bool not_near_pass[MB_PASSES_MAX];
    passes_other_than(m->pass_placement, passes, 'n', not_near_pass);
    for (int j = 0; j < s->npooled[i]; j++) /* rounds > 1, threads > 1: every sample probed */
        s->sample_mask[j] = s->near_mark > 0 && s->pooled_rtt[i][j] >= MB_FAR_RTT * s->near_mark;
    return mb_pass_split(s->pooled[i], s->pooled_round[i], s->npooled[i], passes, not_near_pass, s->sample_mask,
                         s->scratch);
}

/* Whether kernel i, priced so far as m, takes another near pass in the catch-up: short of
 * CATCHUP_NEAR near passes, or an even count of them split by more than the protocol's
 * catchup_split. */
static bool needs_catch_up(const CalState *s, int i, const MeasurementRow *m)
{
    const int near = near_passes(m);
    return near < CATCHUP_NEAR || (near % 2 == 0 && s->pass.catchup_split > 0 &&
                                     near_pass_split(s, i, m) > s->pass.catchup_split);
}

int mb_calibrate(Db *db, int64_t calibration_id, const MbProtocol *p, int threads,
                 const MbFamily *fams, int nfams, MbProgress progress, void *progress_ctx,
                 volatile sig_atomic_t *stop, char *err, size_t errlen)
{
    int rc = -1;
    int total_in = 0;
    char (*keys)[OP_KEY_MAX] = NULL;
    bool *measure = NULL, *skipped = NULL; /* skipped: did not fit in memory */
    const int rounds = p->rounds > 1 ? p->rounds : 1;
    const bool catch_up = rounds > 1 && threads > 1 && comm_size() == 1;
    /* catch_up: the kernels whose scheduled passes left them short of near ones, each
     * with its row as priced after its last pass (pass_placement: a letter a pass so far;
     * "" for the others), stored once its catch-ups are done */
    MeasurementRow *pending = NULL;
    bool *budget_skip = NULL; /* kernels left out to keep the budget */
    const char **pending_family = NULL;
    CalState s = {.pass = *p, .threads = threads};
    s.stride = rounds + (catch_up ? (CATCHUP_MAX < MB_PASSES_MAX - rounds ? CATCHUP_MAX : MB_PASSES_MAX - rounds) : 0);
    if (rounds > 1) {
        s.pass.target_s = p->target_s / rounds;
        s.pass.min_reps = p->min_reps / rounds > 2 ? p->min_reps / rounds : 2;
        s.pass.max_reps = p->max_reps / rounds > s.pass.min_reps ? p->max_reps / rounds : s.pass.min_reps;
        s.pass.long_min_reps = p->long_min_reps / rounds > 1 ? p->long_min_reps / rounds : 1;
    }
    s.pooled_max = s.stride * s.pass.max_reps;

    for (int f = 0; f < nfams; f++)
        total_in += fams[f].n;
    if (total_in > 0) {
        keys = malloc((size_t)total_in * sizeof *keys);
        measure = malloc((size_t)total_in * sizeof *measure);
        skipped = calloc((size_t)total_in, sizeof *skipped);
    }
    s.samples = malloc((size_t)(p->max_reps > 0 ? p->max_reps : 1) * sizeof *s.samples);
    s.scratch = malloc((size_t)(s.pooled_max > 0 ? s.pooled_max : 1) * sizeof *s.scratch);
    if (rounds > 1 && total_in > 0) {
        s.pooled = calloc((size_t)total_in, sizeof *s.pooled);
        s.pooled_round = calloc((size_t)total_in, sizeof *s.pooled_round);
        s.npooled = calloc((size_t)total_in, sizeof *s.npooled);
        s.warm_pooled = calloc((size_t)total_in * (size_t)s.stride, sizeof *s.warm_pooled);
    }
    if (threads > 1 && total_in > 0 &&
        (!(s.pass_share = calloc((size_t)total_in * (size_t)s.stride, sizeof *s.pass_share)) ||
         !(s.sample_rtt = calloc((size_t)(p->max_reps > 0 ? p->max_reps : 1), sizeof *s.sample_rtt)) ||
         !(s.sample_mask = calloc((size_t)(s.pooled_max > 0 ? s.pooled_max : 1), sizeof *s.sample_mask)) ||
         (rounds > 1 && !(s.pooled_rtt = calloc((size_t)total_in, sizeof *s.pooled_rtt))) ||
         (catch_up && (!(pending = calloc((size_t)total_in, sizeof *pending)) ||
                       !(pending_family = calloc((size_t)total_in, sizeof *pending_family)))))) {
        snprintf(err, errlen, "out of memory for %d calibration keys", total_in);
        goto cleanup;
    }
    if ((total_in > 0 && (!keys || !measure || !skipped)) || !s.samples || !s.scratch ||
        (rounds > 1 && total_in > 0 && (!s.pooled || !s.pooled_round || !s.npooled || !s.warm_pooled))) {
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
    int done = 0, npending = 0, nsplit = 0; /* nsplit: of the pending, those for a tie-break */
    /* the budget: the scheduled passes get it all, less the catch-up's share where there is
     * one; shortened = kernels timed below the protocol's sampling time */
    const double pass_budget_s = p->budget_s > 0 ? p->budget_s / (catch_up ? 1 + CATCHUP_BUDGET : 1) : 0;
    const double full_target_s = s.pass.target_s;
    double scale = 1, least_scale = 1;
    int shortened = 0, left_out = 0;
    /* left out to keep the budget: at the shortest sampling the passes still project past
     * it, so kernels of the optional families are dropped, spread over the lists (each one
     * dropped shortens the projection the next one sees); all their passes */
    if (p->budget_s > 0 && total_in > 0)
        budget_skip = calloc((size_t)total_in, sizeof *budget_skip);
    if (p->budget_s > 0 && total_in > 0 && !budget_skip) {
        snprintf(err, errlen, "out of memory for %d calibration keys", total_in);
        goto cleanup;
    }
    for (int round = 0; round < rounds; round++) {
        for (int f = 0, i = 0; f < nfams; f++) {
            for (int j = 0; j < fams[f].n; j++, i++) {
                if (!measure[i])
                    continue;
                double stopping = stop && *stop ? 1 : 0;
                comm_allreduce_max_f64(&stopping, 1); /* under mpirun every rank stops together */
                if (stopping) {
                    rc = 1;
                    goto store_pending; /* what was measured is kept */
                }
                comm_barrier(); /* ranks measuring together start each kernel together */
                if (budget_skip && budget_skip[i]) {
                    done++;
                    continue;
                }
                if (pass_budget_s > 0 && done >= 3) {
                    /* the passes' projected end at the rate so far: the sampling time of the
                     * kernels left shrinks in proportion to the time they would overrun */
                    const double spent = mb_now_s() - start, left = (double)(total * rounds - done);
                    const double need = spent / done * left, have = pass_budget_s - spent;
                    const bool short_of_time = need > 0 && have < need;
                    scale = fmin(1, fmax(0.1, scale * (need > 0 ? fmax(have, 0) / need : 1)));
                    double drop = round == 0 && fams[f].optional && scale <= 0.1 && short_of_time ? 1 : 0;
                    comm_allreduce_max_f64(&scale, 1); /* the ranks sample alike */
                    comm_allreduce_max_f64(&drop, 1);
                    if (drop) {
                        budget_skip[i] = true;
                        left_out++;
                        done++;
                        if (progress)
                            progress(done, total * rounds, fams[f].family, keys[i], mb_now_s() - start, progress_ctx);
                        continue;
                    }
                    s.pass.target_s = full_target_s * scale;
                    least_scale = fmin(least_scale, scale);
                    shortened += scale < 1;
                }
                MeasurementRow m;
                char terr[256] = "";
                int trc = time_pass(&s, &fams[f].ops[j], i, round, &m, terr, sizeof terr);
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
                if (last && !s.pass_share) {
                    memset(m.pass_placement, '-', (size_t)rounds); /* one thread: no placement */
                    m.pass_placement[rounds] = '\0';
                }
                if (trc == 0 && rounds > 1) { /* pool this pass's samples; stored after the last */
                    if (pool_pass(&s, i, &m, round) != 0) {
                        snprintf(terr, sizeof terr, "out of memory pooling its samples");
                        m.reps = 0;
                        trc = -1;
                    } else if (last)
                        price_pooled(&s, i, &m, rounds);
                }
                if (trc == 0 && rounds == 1 && s.pass_share) { /* one pass: its samples by placement */
                    m.sample_rtt_ns = s.sample_rtt;
                    price_by_placement(&m, m.samples, NULL, s.sample_rtt, m.nsamples,
                                       s.pass_share + (size_t)i * (size_t)s.stride, 1, s.near_mark, s.sample_mask,
                                       s.scratch);
                }
                /* short of near passes: priced again after its catch-ups, stored then */
                const bool defer = trc == 0 && last && catch_up && needs_catch_up(&s, i, &m);
                if (defer) {
                    pending[i] = m;
                    pending_family[i] = fams[f].family;
                    npending++;
                    nsplit += near_passes(&m) >= CATCHUP_NEAR;
                }
                /* A kernel that was timed but computed wrong results is stored as evidence
                 * (validated = 0) and still fails the calibration: a wrong kernel must never
                 * price a prediction. Any other failure (out of memory) stores nothing. */
                bool timed_but_wrong = trc != 0 && m.reps > 0 && !m.validated;
                bool stored = true;
                if (((trc == 0 && last && !defer) || timed_but_wrong) && db) /* db: rank 0 (or the only process) */
                    stored = store_row(db, &m, calibration_id, fams[f].family, err, errlen) == 0;
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

    if (npending > 0) {
        double budget_s = fmax(CATCHUP_BUDGET * (mb_now_s() - start), CATCHUP_MIN_S);
        if (p->budget_s > 0) /* what the whole calibration's budget leaves */
            budget_s = fmin(budget_s, fmax(0, p->budget_s - (mb_now_s() - start)));
        const double deadline_s = mb_now_s() + budget_s;
        if (db)
            fprintf(stderr, "calibrate: %d kernels with fewer than %d passes at the near placement and %d whose near "
                            "passes differ by more than x%.2f: timed again while the cores are near, up to %d more "
                            "passes each, for %.0f s at most\n",
                    npending - nsplit, CATCHUP_NEAR, nsplit, p->catchup_split, s.stride - rounds, budget_s);
        int timed = 0;
        for (int c = rounds; c < s.stride && mb_now_s() < deadline_s; c++) {
            for (int f = 0, i = 0; f < nfams; f++) {
                for (int j = 0; j < fams[f].n; j++, i++) {
                    /* each round gives the kernels still short (or split) one more pass */
                    if ((int)strlen(pending[i].pass_placement) != c || !needs_catch_up(&s, i, &pending[i]))
                        continue;
                    if (stop && *stop) {
                        rc = 1;
                        goto store_pending;
                    }
                    /* no hold: the pass's probes around each sample leave out those taken apart */
                    if (!mb_wait_until_near(s.threads, s.near_mark, 0, deadline_s, stop))
                        continue; /* out of time (or stopping): the next kernels find it so too */
                    MeasurementRow m;
                    char terr[256] = "";
                    int trc = time_pass(&s, &fams[f].ops[j], i, c, &m, terr, sizeof terr);
                    if (trc == 0 && pool_pass(&s, i, &m, c) != 0) {
                        trc = -1;
                        snprintf(terr, sizeof terr, "out of memory pooling its samples");
                    }
                    if (trc != 0) { /* the kernel passed its scheduled passes: this is new */
                        char serr[256]; /* the kernel's error is the one to report */
                        if (m.reps > 0 && !m.validated && db) /* wrong results: stored as evidence */
                            store_row(db, &m, calibration_id, fams[f].family, serr, sizeof serr);
                        snprintf(err, errlen, "%s: %s", keys[i], terr);
                        rc = -1;
                        goto cleanup;
                    }
                    price_pooled(&s, i, &m, c + 1);
                    pending[i] = m;
                    timed++;
                    if (progress)
                        progress(timed, npending * (s.stride - rounds), "catch-up", keys[i], mb_now_s() - start,
                                 progress_ctx);
                }
            }
        }
        int short_left = 0, split_left = 0;
        for (int i = 0; i < total_in; i++)
            if (pending_family[i] && needs_catch_up(&s, i, &pending[i])) {
                short_left += near_passes(&pending[i]) < CATCHUP_NEAR;
                split_left += near_passes(&pending[i]) >= CATCHUP_NEAR;
            }
        if (db)
            fprintf(stderr, "calibrate: the near catch-up timed %d passes; of its %d kernels, %d are still short of %d "
                            "near passes and %d split by more than x%.2f\n",
                    timed, npending, short_left, CATCHUP_NEAR, split_left, p->catchup_split);
    }
    rc = 0;
    if (shortened > 0 && db)
        fprintf(stderr, "calibrate: to keep within the budget of %.1f s, %d kernel passes sampled for x%.2f-x1 of the "
                        "protocol's time (at least %d samples each)\n", p->budget_s, shortened, least_scale,
                s.pass.min_reps);
    if (left_out > 0 && db)
        fprintf(stderr, "calibrate: left out %d kernels of the sweeps to keep within the budget (their shapes are "
                        "priced by the fitted model)\n", left_out);
    if (p->budget_s > 0 && mb_now_s() - start > 1.05 * p->budget_s && db)
        fprintf(stderr, "calibrate: took %.0f s, past its budget of %.0f s: the kernels' warm-ups, checks and "
                        "minimum samples alone take longer on this host\n", mb_now_s() - start, p->budget_s);
store_pending:
    for (int i = 0; pending && db && i < total_in; i++)
        if (pending_family[i] && store_row(db, &pending[i], calibration_id, pending_family[i], err, errlen) != 0) {
            rc = -1;
            goto cleanup;
        }
    if (rc == 0 && s.pass_share) { /* the modes of all the calibration's probes, said and stored */
        MbRttModes modes;
        mb_rtt_modes(s.probes, s.nprobes, s.probe_scratch ? s.probe_scratch : s.scratch, &modes);
        char line[256];
        mb_rtt_modes_describe(&modes, line, sizeof line);
        if (db)
            fprintf(stderr, "calibrate: where the threads' cores were: %s\n", line);
        /* stored as said: the lowest mark the classes took where all the probes show two
         * modes, none where they show one (validate then waits for nothing) */
        const double mark = !modes.two_modes ? 0
                            : s.near_mark > 0 ? fmin(s.near_mark, mb_rtt_near_mark(&modes)) : mb_rtt_near_mark(&modes);
        if (db && db_calibration_set_rtt(db, calibration_id, mark) != 0) {
            snprintf(err, errlen, "storing the threads' near mark: %s", db_errmsg(db));
            rc = -1;
        }
    }

cleanup:
    mb_release();
    for (int i = 0; i < total_in; i++) {
        if (s.pooled)
            free(s.pooled[i]);
        if (s.pooled_round)
            free(s.pooled_round[i]);
        if (s.pooled_rtt)
            free(s.pooled_rtt[i]);
    }
    free(s.pooled);
    free(s.pooled_round);
    free(s.pooled_rtt);
    free(s.sample_rtt);
    free(s.sample_mask);
    free(s.npooled);
    free(s.warm_pooled);
    free(s.pass_share);
    free(pending);
    free(pending_family);
    free(keys);
    free(measure);
    free(skipped);
    free(s.samples);
    free(s.scratch);
    free(s.probes);
    free(s.probe_scratch);
    free(budget_skip);
    return rc;
}
