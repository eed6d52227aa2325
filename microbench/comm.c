/* microbench/comm.c — the communication microbenchmarks (the OSU habit), run by every
 * rank of an MPI job: allreduce (in place, as training sums its gradients) over a size
 * sweep, DeepBench's all-reduce sizes and the chosen models' gradient sizes, broadcast, and
 * point-to-point latency/bandwidth (ping-pong between rank 0 and the last rank).
 *
 * Every sample starts after a barrier and is the slowest rank's time for `inner`
 * back-to-back collectives (allreduce: one, from cold caches) (MPI_MAX over the ranks), so all ranks hold identical samples
 * and take identical decisions (how many samples, when to stop): no rank can leave the
 * loop early and leave another waiting in a collective. The same protocol (warm-ups,
 * minimum and maximum samples, time target, CI target) as the compute kernels. Allreduce
 * results are validated (every rank contributes rank+1: the sum is P(P+1)/2 everywhere).
 * Rank 0 stores the rows.
 *
 * Placement, as the compute calibration's (calibrate.c): the node's first two ranks probe
 * where they run (comm_peer_rtt_ns) before and after each kernel's pass; where the probes
 * show two modes (microbench/rtt_modes.h), a pass whose slower probe reached the split
 * between them ran apart, and with one mode every pass is near. A kernel is
 * priced from its near passes (all of them where none was near), and its apart passes'
 * median is its apart price (measurement.apart_s), which validate applies to a run it
 * finds apart (predictor/comm_model.c, comm_model_allreduce_apart_s).
 */
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "microbench/mb.h"
#include "microbench/rtt_modes.h"
#include "ops/comm.h"

/* DeepBench's all-reduce sizes in float32 elements (all_reduce_problems.h, MODELS.md 6.4) */
static const size_t deepbench_allreduce_floats[] = {100000, 3097600, 4194304, 6553600, 16777217, 38360000, 64500000};

const char *mb_comm_kind_name(MbCommKind k)
{
    static const char *const names[] = {"allreduce", "bcast", "pingpong"};
    return names[k];
}

int mb_comm_list(MbMode mode, MbCommKernel *out, int max)
{
    /* sweep: 4 B .. 256 MiB by powers of 2 (quick: by powers of 4 to 16 MiB); DeepBench's
     * sizes for allreduce; point-to-point to 64 MiB (beyond, it is bandwidth only) */
    int n = 0;
    const int step = mode == MB_QUICK ? 2 : 1, top = mode == MB_QUICK ? 24 : 28;
#define ADD(KIND, BYTES)                                                                            \
    do {                                                                                            \
        if (n < max)                                                                                \
            out[n] = (MbCommKernel){KIND, (BYTES)};                                                 \
        n++;                                                                                        \
    } while (0)
    for (int e = 2; e <= top; e += step)
        ADD(MB_COMM_ALLREDUCE, (size_t)1 << e);
    for (size_t i = 0; i < sizeof deepbench_allreduce_floats / sizeof deepbench_allreduce_floats[0]; i++) {
        size_t bytes = deepbench_allreduce_floats[i] * 4;
        bool in_sweep = (bytes & (bytes - 1)) == 0; /* 4,194,304 floats = 16 MiB */
        if (!in_sweep && (mode != MB_QUICK || bytes <= ((size_t)1 << top)))
            ADD(MB_COMM_ALLREDUCE, bytes);
    }
    for (int e = 2; e <= top; e += 2 * step)
        ADD(MB_COMM_BCAST, (size_t)1 << e);
    for (int e = 0; e <= (top < 26 ? top : 26); e += step)
        ADD(MB_COMM_PINGPONG, (size_t)1 << e);
#undef ADD
    return n;
}

void mb_comm_key(const MbCommKernel *k, int ranks, char *out, size_t n)
{
    snprintf(out, n, "%s bytes=%zu ranks=%d", mb_comm_kind_name(k->kind), k->bytes, ranks);
}

/* A collective's own buffers come straight from the kernel (mmap), not from the heap, and
 * go back to it when the collective is measured. Under mpirun the heap keeps every freed
 * block (comm_reuse_collective_buffers raises glibc's mmap and trim thresholds to 1 GiB, so
 * the MPI library's temporaries are reused as in training), and there the buffers of a
 * list of sizes, pass after pass, fragmented it: at np=4 on a 24 GiB node, alexnet-owt's,
 * basic-lstm's and P1B1's gradient sizes in 3 passes grew each rank past 4.7 GiB in the
 * second pass (2.9 GiB after the first) until the OOM killer ended the job. Outside the
 * heap, only the MPI library's temporaries stay in it, as in a training process whose
 * arenas are allocated once. */
static float *collective_buffer(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE); /* as ops_buffer_alloc advises a kernel's buffers */
#endif
    return p;
}

static void collective_buffer_free(float *p, size_t bytes)
{
    if (p)
        munmap(p, bytes);
}

/* One execution of the kernel; returns seconds spent (the ping-pong's half round trip,
 * which is how OSU reports latency). */
static void run_once(const MbCommKernel *k, float *src, float *dst, int iters)
{
    size_t nf = k->bytes / sizeof(float);
    switch (k->kind) {
    case MB_COMM_ALLREDUCE: /* in place, as training sums its gradient buffer */
        (void)src;
        for (int i = 0; i < iters; i++)
            comm_allreduce_sum_f32(dst, nf);
        break;
    case MB_COMM_BCAST:
        for (int i = 0; i < iters; i++)
            comm_bcast(dst, k->bytes, 0);
        break;
    case MB_COMM_PINGPONG:
        comm_pingpong(dst, k->bytes, comm_size() - 1, iters);
        break;
    }
}

/* The slowest rank's seconds per execution for `iters` executions. Allreduces start from
 * cold caches, as training's gradient sum does (backward's convolutions and GEMMs have
 * evicted most of the gradients by the time it starts): each allreduce sample is one
 * collective after every rank flushed its caches (untimed). */
static double sample(const MbCommKernel *k, float *src, float *dst, int iters)
{
    if (k->kind == MB_COMM_ALLREDUCE)
        mb_flush_caches();
    comm_barrier();
    double t0 = comm_wtime();
    run_once(k, src, dst, iters);
    double t = (comm_wtime() - t0) / iters;
    if (k->kind == MB_COMM_PINGPONG)
        t /= 2; /* one way */
    comm_allreduce_max_f64(&t, 1);
    return t;
}

/* Whether every rank can hold `need` bytes more: each checks its share of the memory
 * available (the node's ranks allocate at the same moment), and all learn the verdict,
 * so none allocates what the OOM killer would take back from another (pages count only
 * once touched: allocation itself never fails). 0 or MB_DOES_NOT_FIT with err. */
static int collective_fits(double need, char *err, size_t errlen)
{
    const int local = comm_env_local_size() > 0 ? comm_env_local_size() : 1;
    const double avail = mem_available_bytes();
    const double share = avail > 0 ? avail / local : INFINITY;
    double short_of = need > 0.9 * share ? 1 : 0;
    comm_allreduce_max_f64(&short_of, 1);
    if (short_of == 0)
        return 0;
    if (need > 0.9 * share)
        snprintf(err, errlen, "needs %.2f GiB; %.2f GiB available%s", need / 1073741824.0, share / 1073741824.0,
                 local > 1 ? " per rank (the node's ranks hold it at once)" : "");
    else
        snprintf(err, errlen, "needs %.2f GiB per rank, more than another rank has available", need / 1073741824.0);
    return MB_DOES_NOT_FIT;
}

int mb_time_comm(const MbCommKernel *k, const MbProtocol *p, int threads, MeasurementRow *m, double *samples,
                 char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    const int ranks = comm_size();
    size_t nf = k->bytes / sizeof(float) ? k->bytes / sizeof(float) : 1;
    const size_t buf_bytes = nf * sizeof(float);
    /* a source and a destination; an allreduce's temporaries up to its buffer once more
     * (the most Open MPI's algorithms take: recursive doubling copies it whole) */
    if (collective_fits((k->kind == MB_COMM_ALLREDUCE ? 3.0 : 2.0) * (double)buf_bytes, err, errlen))
        return MB_DOES_NOT_FIT;
    float *src = collective_buffer(buf_bytes), *dst = collective_buffer(buf_bytes);
    /* every rank learns whether any failed: one that returned alone would leave the others
     * waiting in the collective */
    double failed = !src || !dst ? 1 : 0;
    comm_allreduce_max_f64(&failed, 1);
    if (failed > 0) {
        collective_buffer_free(src, buf_bytes), collective_buffer_free(dst, buf_bytes);
        snprintf(err, errlen, "cannot allocate 2 x %zu bytes%s", k->bytes,
                 src && dst ? " on another rank" : "");
        return -1;
    }
    for (size_t i = 0; i < nf; i++) /* repeated in-place sums grow (to inf: no slower on x86) */
        src[i] = dst[i] = (float)(comm_rank() + 1);
    /* warm-up: also sizes the inner count so a sample lasts min_sample_s */
    double first = sample(k, src, dst, 1);
    int warm = first >= p->long_s ? 1 : p->warmups;
    for (int w = 1; w < warm; w++)
        first = fmin(first, sample(k, src, dst, 1));
    int inner = 1;
    if (first < p->min_sample_s && k->kind != MB_COMM_ALLREDUCE) /* allreduce: one per (cold) sample */
        inner = (int)fmin(100000, ceil(p->min_sample_s / fmax(first, 1e-9)));
    /* every rank computes inner from the same (MPI_MAX) samples: identical */
    int min_reps = first >= p->long_s ? p->long_min_reps : p->min_reps;
    int n = 0;
    double spent = 0;
    MbStats st = {0};
    while (n < p->max_reps) {
        double s = sample(k, src, dst, inner);
        samples[n++] = s;
        spent += s * inner;
        if (n < min_reps)
            continue;
        double sorted[256];
        memcpy(sorted, samples, (size_t)n * sizeof *sorted);
        mb_stats(sorted, n, &st);
        if (spent >= p->target_s || (st.ci95_hi - st.ci95_lo) / 2 <= p->ci_frac * st.median)
            break;
    }
    /* validation, outside the timed samples: allreduce sums rank+1 over the ranks */
    bool ok = true;
    double max_err = 0;
    if (k->kind == MB_COMM_ALLREDUCE) {
        memcpy(dst, src, nf * sizeof *dst);
        comm_allreduce_sum_f32(dst, nf);
        const double want = ranks * (ranks + 1) / 2.0;
        for (size_t i = 0; i < nf; i += 1 + nf / 4096)
            max_err = fmax(max_err, fabs(dst[i] - want) / want);
        ok = max_err == 0;
        double bad = ok ? 0 : 1;
        comm_allreduce_max_f64(&bad, 1);
        ok = bad == 0;
    }
    collective_buffer_free(src, buf_bytes);
    collective_buffer_free(dst, buf_bytes);
    mb_comm_key(k, ranks, m->key, sizeof m->key);
    snprintf(m->kind, sizeof m->kind, "%s", mb_comm_kind_name(k->kind));
    snprintf(m->phase, sizeof m->phase, "comm");
    m->threads = threads;
    m->warmups = warm;
    double scratch[256];
    mb_row_stats(m, samples, n, inner, scratch);
    m->bytes = (double)k->bytes;
    m->flops = k->kind == MB_COMM_ALLREDUCE ? (double)nf * (ranks - 1) / ranks : 0; /* each rank's adds */
    m->validated = ok;
    m->max_err = max_err;
    if (!ok) {
        snprintf(err, errlen, "%s: wrong sum (relative error %.3g)", m->key, max_err);
        return -1;
    }
    return 0;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* What an allreduce costs in memory beside its buffer: the MPI library's temporaries
 * (Open MPI 4.1's ring holds a block of bytes/P, two for P > 2), which stay resident in a
 * training process because comm_reuse_collective_buffers keeps freed blocks in the heap.
 * Each size starts from a trimmed heap (malloc_trim returns every free page, so nothing an
 * earlier size left resident is reused), its buffer allocated and touched; the growth of
 * the RSS through one in-place allreduce is the scratch; the largest rank's is taken (a
 * rooted algorithm's root holds more). Measured after the timed list, so it cannot change
 * the heap the timings saw. */
int mb_comm_scratch_probe(const size_t *bytes, int n, size_t *sorted, double *scratch, char *err, size_t errlen)
{
    memcpy(sorted, bytes, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_size);
    int m = 0;
    for (int i = 0; i < n; i++) /* unique, whole floats */
        if (sorted[i] >= sizeof(float) && (m == 0 || sorted[i] / sizeof(float) * sizeof(float) != sorted[m - 1]))
            sorted[m++] = sorted[i] / sizeof(float) * sizeof(float);
    int probed = 0;
    for (int i = 0; i < m; i++) {
        const size_t nf = sorted[i] / sizeof(float);
        char why[160];
        if (collective_fits(2.0 * (double)sorted[i], why, sizeof why)) { /* the buffer and its scratch */
            if (comm_rank() == 0)
                fprintf(stderr, "calibrate: allreduce memory probe of %zu bytes left out: %s\n", sorted[i], why);
            continue;
        }
        malloc_trim(0);
        float *buf = ops_buffer_alloc(sorted[i]);
        double failed = buf ? 0 : 1;
        comm_allreduce_max_f64(&failed, 1);
        if (failed) {
            ops_buffer_free(buf, sorted[i]);
            snprintf(err, errlen, "allreduce memory probe: cannot allocate %zu bytes on %s", sorted[i],
                     buf ? "another rank" : "this rank");
            return -1;
        }
        for (size_t k = 0; k < nf; k++)
            buf[k] = 1.0f;
        comm_barrier();
        const double before = current_rss_bytes();
        comm_allreduce_sum_f32(buf, nf);
        double grown = fmax(current_rss_bytes() - before, 0);
        ops_buffer_free(buf, sorted[i]);
        comm_allreduce_max_f64(&grown, 1);
        sorted[probed] = sorted[i];
        scratch[probed++] = grown;
    }
    malloc_trim(0);
    return probed;
}

/* Classes each pass of one kernel by its slower probe: a apart (MB_FAR_RTT times the near
 * mark or more; none with a mark of 0: one mode), n near, - not probed. */
static void classify_comm_passes(const double *rtt_ns, int rounds, double near_mark, char *letters)
{
    for (int r = 0; r < rounds; r++)
        letters[r] = rtt_ns[r] <= 0 ? '-' : near_mark > 0 && rtt_ns[r] >= MB_FAR_RTT * near_mark ? 'a' : 'n';
    letters[rounds] = '\0';
}

int mb_calibrate_comm(Db *db, int64_t calibration_id, MbMode mode, int rounds, int threads,
                      const size_t *model_bytes, int nmodel, MbProgress progress, void *progress_ctx,
                      volatile sig_atomic_t *stop, char *err, size_t errlen)
{
    const MbProtocol p = mb_protocol(mode);
    if (rounds < 1)
        rounds = 1;
    /* in rounds, each pass over the list takes a 1/rounds share of a kernel's samples and
     * time, and the kernel is priced by the median of the passes' medians (as the compute
     * families): a collective whose speed has modes minutes apart (the EPYC VM's 32 MiB
     * allreduce at 2 ranks: about 9 ms or 14-21 ms) is then priced by its usual one */
    MbProtocol pass = p;
    pass.max_reps = rounds > 1 ? (p.max_reps + rounds - 1) / rounds : p.max_reps;
    if (pass.max_reps < p.min_reps)
        pass.max_reps = p.min_reps;
    pass.target_s = p.target_s / rounds;
    const int per_kernel = pass.max_reps * rounds; /* samples a kernel can take over the passes */
    const int nlist = mb_comm_list(mode, NULL, 0);
    MbCommKernel *list = calloc((size_t)(nlist + nmodel), sizeof *list);
    double *samples = calloc((size_t)p.max_reps + 1, sizeof *samples);
    double *taken = calloc((size_t)(nlist + nmodel) * per_kernel, sizeof *taken);
    int *taken_round = calloc((size_t)(nlist + nmodel) * per_kernel, sizeof *taken_round);
    int *ntaken = calloc((size_t)(nlist + nmodel), sizeof *ntaken);
    bool *skipped = calloc((size_t)(nlist + nmodel), sizeof *skipped);
    MeasurementRow *rows = calloc((size_t)(nlist + nmodel), sizeof *rows);
    double *scratch = calloc((size_t)per_kernel, sizeof *scratch);
    if (!list || !samples || !taken || !taken_round || !ntaken || !skipped || !rows || !scratch) {
        free(list), free(samples), free(taken), free(taken_round), free(ntaken), free(skipped), free(rows),
            free(scratch);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* The models' gradient sizes first, measured as they are summed, by processes as fresh
     * as a training job's: after the sweep's 256 MiB collectives the same process measured
     * basic-lstm's 33.6 MB allreduce at 44-58 ms (np=4, 6 runs) while training summed it in
     * 37-39 ms and a process that had run only the quick list up to 16 MiB measured 33.5 ms. */
    int nfirst = 0;
    for (int i = 0; i < nmodel; i++) {
        const size_t bytes = model_bytes[i] / sizeof(float) * sizeof(float);
        bool have = bytes == 0;
        for (int j = 0; j < nfirst && !have; j++)
            have = list[j].bytes == bytes;
        if (!have)
            list[nfirst++] = (MbCommKernel){MB_COMM_ALLREDUCE, bytes};
    }
    int total = nfirst;
    MbCommKernel *sweep = list + nfirst;
    mb_comm_list(mode, sweep, nlist);
    for (int i = 0; i < nlist; i++) { /* the sweep, without the sizes already measured */
        bool have = false;
        for (int j = 0; j < nfirst && !have; j++)
            have = sweep[i].kind == MB_COMM_ALLREDUCE && list[j].bytes == sweep[i].bytes;
        if (!have)
            list[total++] = sweep[i];
    }
    /* each kernel's slower placement probe per pass (0: not probed: one rank a node) */
    double *pass_rtt = calloc((size_t)total * (size_t)rounds, sizeof *pass_rtt);
    if (!pass_rtt) {
        free(list), free(samples), free(taken), free(taken_round), free(ntaken), free(skipped), free(rows),
            free(scratch);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const double t0 = mb_now_s();
    int rc = 0;
    for (int r = 0; r < rounds && rc == 0; r++)
        for (int i = 0; i < total; i++) {
            /* an interrupt reaches the ranks at different moments: stop together */
            double stopping = *stop ? 1 : 0;
            comm_allreduce_max_f64(&stopping, 1);
            if (stopping) {
                rc = 1;
                break;
            }
            char key[160];
            mb_comm_key(&list[i], comm_size(), key, sizeof key);
            if (progress && comm_rank() == 0)
                progress(r * total + i, rounds * total, "comm", key, mb_now_s() - t0, progress_ctx);
            char terr[256];
            const double rtt_before = comm_peer_rtt_ns();
            int trc = mb_time_comm(&list[i], &pass, threads, &rows[i], samples, terr, sizeof terr);
            const double rtt_after = comm_peer_rtt_ns();
            if (rtt_before > 0 && rtt_after > 0) {
                pass_rtt[(size_t)i * (size_t)rounds + (size_t)r] = fmax(rtt_before, rtt_after);
            }
            if (trc == MB_DOES_NOT_FIT) { /* every rank got the verdict: left out, never stored */
                if (r == 0 && comm_rank() == 0)
                    fprintf(stderr, "calibrate: left out %s: %s\n", key, terr);
                skipped[i] = true;
                continue;
            }
            for (int k = 0; trc == 0 && k < rows[i].reps && ntaken[i] < per_kernel; k++, ntaken[i]++) {
                taken[(size_t)i * per_kernel + ntaken[i]] = samples[k];
                taken_round[(size_t)i * per_kernel + ntaken[i]] = r;
            }
            double failed = trc != 0 ? 1 : 0; /* a failure anywhere stops every rank */
            comm_allreduce_max_f64(&failed, 1);
            if (trc != 0)
                snprintf(err, errlen, "%s", terr);
            else if (failed)
                snprintf(err, errlen, "another rank failed at %s", key);
            if (failed) {
                rc = -1;
                break;
            }
        }
    /* the allreduce's memory at the models' gradient sizes and from 1 MiB to the list's
     * largest by powers of 4 */
    enum { MAX_PROBES = 64 };
    size_t probe_bytes[MAX_PROBES], probe_sorted[MAX_PROBES];
    double probe_scratch[MAX_PROBES];
    int nprobe = 0;
    for (int i = 0; i < nmodel && nprobe < MAX_PROBES; i++)
        if (model_bytes[i] > 0)
            probe_bytes[nprobe++] = model_bytes[i];
    for (int e = 20; e <= (mode == MB_QUICK ? 24 : 28) && nprobe < MAX_PROBES; e += 2)
        probe_bytes[nprobe++] = (size_t)1 << e;
    if (rc == 0) {
        if (progress && comm_rank() == 0)
            progress(rounds * total, rounds * total, "comm", "allreduce memory", mb_now_s() - t0, progress_ctx);
        nprobe = mb_comm_scratch_probe(probe_bytes, nprobe, probe_sorted, probe_scratch, err, errlen);
        if (nprobe < 0)
            rc = -1;
    }
    for (int i = 0; i < nprobe && rc == 0 && comm_rank() == 0; i++)
        if (db_comm_memory_insert(db, calibration_id, (double)probe_sorted[i], probe_scratch[i]) != 0) {
            snprintf(err, errlen, "storing the allreduce memory of %zu bytes: %s", probe_sorted[i], db_errmsg(db));
            rc = -1;
        }
    /* where the pair's cores were: the modes of every pass's probes (microbench/rtt_modes.h;
     * one mode: every pass near) */
    double near_mark = 0;
    if (rc == 0 && comm_rank() == 0) {
        double *mode_scratch = malloc(((size_t)total * (size_t)rounds + 1) * sizeof *mode_scratch);
        if (mode_scratch) {
            MbRttModes modes;
            mb_rtt_modes(pass_rtt, total * rounds, mode_scratch, &modes);
            near_mark = mb_rtt_near_mark(&modes);
            free(mode_scratch);
        } else {
            snprintf(err, errlen, "out of memory for the ranks' round trips");
            rc = -1;
        }
    }
    /* every pass done: each kernel's row from all its samples, priced by the passes' medians */
    for (int i = 0; i < total && rc == 0 && comm_rank() == 0; i++) {
        if (skipped[i])
            continue;
        MeasurementRow *m = &rows[i];
        double *mine = taken + (size_t)i * per_kernel;
        const int *mine_round = taken_round + (size_t)i * per_kernel;
        mb_row_stats(m, mine, ntaken[i], m->inner, scratch);
        bool not_near[MB_MAX_ROUNDS], not_apart[MB_MAX_ROUNDS];
        classify_comm_passes(pass_rtt + (size_t)i * (size_t)rounds, rounds, near_mark, m->pass_placement);
        for (int k = 0; k < rounds; k++) {
            not_near[k] = m->pass_placement[k] == 'a';
            not_apart[k] = m->pass_placement[k] != 'a';
            m->far_passes += m->pass_placement[k] == 'a';
        }
        m->median_s = mb_pass_median(mine, mine_round, ntaken[i], rounds, not_near, NULL, scratch);
        if (m->far_passes > 0)
            m->apart_s = mb_pass_median(mine, mine_round, ntaken[i], rounds, not_apart, NULL, scratch);
        m->sample_rounds = mine_round;
        m->calibration_id = calibration_id;
        snprintf(m->family, sizeof m->family, "comm");
        if (db_measurement_insert(db, m) != 0) {
            snprintf(err, errlen, "storing %s: %s", m->key, db_errmsg(db));
            rc = -1;
        }
    }
    if (rc == 0 && comm_rank() == 0 && db_calibration_set_rtt(db, calibration_id, near_mark) != 0) {
        snprintf(err, errlen, "storing the ranks' near mark: %s", db_errmsg(db));
        rc = -1;
    }
    if (progress && comm_rank() == 0 && rc == 0)
        progress(rounds * total, rounds * total, "comm", "", mb_now_s() - t0, progress_ctx);
    free(pass_rtt);
    free(list), free(samples), free(taken), free(taken_round), free(ntaken), free(skipped), free(rows),
        free(scratch);
    return rc;
}
