/* microbench/rtt_modes.h — where the host keeps the threads' cores, read from many round
 * trips (mb_core_rtt_ns) at once: two placements, near and apart, or one.
 *
 * A host that moves the vCPUs between cores near each other and cores apart shows two
 * modes of round trip, separated: the 2-vCPU EPYC VMs x1-1.5 near and x4-10 apart. A host
 * that does not shows one mode, with a tail; a rule that calls a round trip apart at a
 * ratio to the fastest one ever read acts on a single fast outlier there (a Xeon VM: one
 * probe at 0.4x the rest made 42,503 of 47,318 samples "apart" and stretched a calibration
 * to 3x its time). So the classes are acted on only once the probes show them: a second
 * peak of the round trips' density (in log space, bins of MB_RTT_BIN) at least
 * MB_RTT_MODES_RATIO times the first's position away, a valley between the two at most
 * MB_RTT_VALLEY of the lower peak, and each side at least MB_RTT_MODE_MIN probes and
 * MB_RTT_MODE_SHARE of them. The split is the valley's lowest point.
 */
#ifndef DLPERF_RTT_MODES_H
#define DLPERF_RTT_MODES_H

#include <stdbool.h>
#include <stddef.h>

#define MB_RTT_BIN 0.10         /* histogram bins, in ln(ns): about 10% wide */
#define MB_RTT_MODES_RATIO 2.0  /* the two peaks this far apart at least */
#define MB_RTT_VALLEY 0.25      /* the valley's density over the lower peak's, at most */
#define MB_RTT_MODE_SHARE 0.01  /* each mode this share of the probes at least */
enum { MB_RTT_MODES_MIN_PROBES = 16, MB_RTT_MODE_MIN = 4 };

typedef struct {
    int probes;         /* round trips read (positive, finite) */
    bool two_modes;     /* near and apart, separated as above */
    double near_ns;     /* the near mode's median (one mode: the median of all) */
    double apart_ns;    /* the apart mode's median (0: one mode) */
    double split_ns;    /* a round trip at or above this is apart (0: one mode) */
    double apart_share; /* of the probes, apart (0: one mode) */
    double valley;      /* the valley's density over the lower peak's (1: no second peak) */
    double p05_ns, p95_ns; /* the probes' 5th and 95th percentiles */
} MbRttModes;

/* The modes of rtt_ns[0..n) (values <= 0 or not finite are not probes). scratch holds n
 * doubles. Fewer than MB_RTT_MODES_MIN_PROBES probes: one mode. */
void mb_rtt_modes(const double *rtt_ns, int n, double *scratch, MbRttModes *out);

/* The near mark the placement rules take (a round trip of MB_FAR_RTT times it or more is
 * apart): split_ns / MB_FAR_RTT with two modes; 0 with one (nothing is apart, nothing is
 * waited for). */
double mb_rtt_near_mark(const MbRttModes *m);

/* One line for people: "two modes: near 92 ns, apart 610 ns (38% of 4,210 probes), split
 * at 240 ns" or "one mode: median 190 ns (5-95% 150-260 ns, 4,210 probes)...". */
void mb_rtt_modes_describe(const MbRttModes *m, char *out, size_t n);

#endif
