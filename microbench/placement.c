/* microbench/placement.c — how far apart the kernel threads' cores are, now: the round trip
 * of a cache line passed back and forth between OpenMP threads 0 and 1.
 *
 * Why: the 2-vCPU EPYC VMs this was written on have a host that moves the vCPUs between
 * cores sharing an L3 and cores that do not, every few seconds to minutes. A pinned probe
 * measured the round trip at 62-104 ns or 394-540 ns, in two modes (docs/accuracy.md), and
 * every op that passes data between the threads (a parallel op's barriers and halves) runs
 * at the speed of the mode of the moment: a small model's 2-thread step takes 2-3x longer
 * apart. A calibration that priced a kernel from passes taken in both modes priced it at a
 * mixture that no step ever runs at (P3B1's step, calibrated twice, 3.63 and 4.61 ms; its
 * steps took 3.5-3.8 ms near and 6.8-7.6 ms apart). The calibration therefore probes before
 * and after each kernel's pass and prices the kernel from its passes with the cores near
 * (microbench/calibrate.c).
 *
 * The probe: three bursts of 64 round trips, the fastest burst's mean: about 10 us near,
 * 60 us apart. A partner thread that is not running (the machine oversubscribed) would
 * make a spin-wait last a scheduler slice; a burst past PROBE_DEADLINE_S is abandoned and
 * the probe reports at least the deadline's share per trip: not near, whatever the cores.
 *
 * Near is not always a core each. The same host at times runs both vCPUs on one core's two
 * hardware threads, where a cache line passes between them as fast as near (53-64 ns) but
 * every 2-thread kernel runs at one core's speed: a peak pass of one zoo calibration
 * took 4.6 ms against 2.3 ms and the round trip called it near. mb_core_share tells that
 * state by speed instead: on the Zen 4 VM, 360 probes over two minutes read x1.00
 * to x1.05 with a core each and x1.99-2.00 shared, in episodes of 2-3 s.
 */
#include "microbench/mb.h"
#include "ops/kernels.h"

#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <time.h>

enum { PROBE_BURSTS = 3, PROBE_TRIPS = 64 };
static const double PROBE_DEADLINE_S = 2e-3;

/* One cache line each, so that the turn's line is the only one passed between the cores. */
static _Alignas(64) atomic_long probe_turn;
static _Alignas(64) atomic_int probe_abandoned;

/* Seconds per round trip of one burst, or 0 if it was abandoned (or the team had one
 * thread). Thread 0 takes turns 0, 2, 4, ...; thread 1 turns 1, 3, 5, ... */
static double probe_burst(void)
{
    atomic_store(&probe_turn, 0);
    atomic_store(&probe_abandoned, 0);
    double per_trip = 0;
#pragma omp parallel num_threads(2)
    if (omp_get_num_threads() == 2) {
        const long me = omp_get_thread_num();
#pragma omp barrier
        const double t0 = mb_now_s();
        /* thread 0 also waits for the last turn's return (turn 2 * PROBE_TRIPS) */
        for (long turn = me; turn <= 2L * PROBE_TRIPS; turn += 2) {
            long spins = 0;
            while (atomic_load_explicit(&probe_turn, memory_order_acquire) != turn) {
                if (atomic_load_explicit(&probe_abandoned, memory_order_relaxed))
                    goto done;
                if (me == 0 && ++spins % 1024 == 0 && mb_now_s() - t0 > PROBE_DEADLINE_S)
                    atomic_store(&probe_abandoned, 1);
            }
            if (turn < 2L * PROBE_TRIPS)
                atomic_store_explicit(&probe_turn, turn + 1, memory_order_release);
        }
        if (me == 0)
            per_trip = (mb_now_s() - t0) / PROBE_TRIPS;
    done:;
    }
    return per_trip;
}

MbPlacementProbes mb_placement_fake;

double mb_core_rtt_ns(int threads)
{
    if (threads < 2)
        return 0;
    if (mb_placement_fake.rtt_ns)
        return mb_placement_fake.rtt_ns(threads);
    double best = INFINITY;
    bool ran = false;
    for (int b = 0; b < PROBE_BURSTS; b++) {
        const double t = probe_burst();
        if (t > 0 && t < best)
            best = t;
        ran = ran || t > 0 || atomic_load(&probe_abandoned);
    }
    if (!ran)
        return 0; /* a team of one thread (OMP_THREAD_LIMIT): nothing to measure */
    return isfinite(best) ? 1e9 * best : 1e9 * PROBE_DEADLINE_S / PROBE_TRIPS;
}

bool mb_wait_until_near(int threads, double near_ns, double hold_s, double deadline_s,
                        volatile sig_atomic_t *stop)
{
    if (threads < 2 || !(near_ns > 0))
        return false;
    double near_since = -1; /* when the probes' current run of near readings began (-1: none) */
    for (;;) {
        const double rtt = mb_core_rtt_ns(threads);
        const double now = mb_now_s();
        if (rtt > 0 && rtt < MB_FAR_RTT * near_ns) {
            if (near_since < 0)
                near_since = now;
            if (now - near_since >= hold_s)
                return true;
        } else {
            near_since = -1;
        }
        if (now + MB_NEAR_POLL_S >= deadline_s || (stop && *stop))
            return false;
        const struct timespec ts = {0, (long)(MB_NEAR_POLL_S * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* ---- whether the two threads have a core each ----
 * Thread 0 runs SHARE_FMA multiply-adds alone (thread 1 waiting at a barrier), then both
 * run them at once, each timing its own; the slower thread's time over the lone time, the
 * fastest of SHARE_BURSTS of each. FMA chains in registers: no memory level, no cache line
 * between the threads, only the cores' arithmetic. */
enum { SHARE_BURSTS = 2 };
static const long SHARE_FMA = PEAK_FMA_QUANTUM * 10000L; /* about 35 us on a Zen 4 core */

double mb_core_share(int threads)
{
    if (threads < 2)
        return 0;
    if (mb_placement_fake.share)
        return mb_placement_fake.share(threads);
    double alone = INFINITY, together = INFINITY;
    double pair_s[2] = {0, 0};
    volatile float sink = 0; /* the chains' result, so the bursts are kept */
#pragma omp parallel num_threads(2)
    if (omp_get_num_threads() == 2) {
        const int me = omp_get_thread_num();
        for (int b = 0; b < SHARE_BURSTS; b++) {
#pragma omp barrier
            if (me == 0) {
                const double t0 = mb_now_s();
                sink = peak_fma_here(SHARE_FMA);
                alone = fmin(alone, mb_now_s() - t0);
            }
#pragma omp barrier
            const double t0 = mb_now_s();
            const float v = peak_fma_here(SHARE_FMA);
            pair_s[me] = mb_now_s() - t0;
#pragma omp barrier
            if (me == 0) {
                together = fmin(together, fmax(pair_s[0], pair_s[1]));
                sink = v;
            }
        }
    }
    (void)sink;
    return isfinite(alone) && isfinite(together) && alone > 0 ? together / alone : 0;
}
