/* microbench/rtt_modes.c — two modes of round trip or one (microbench/rtt_modes.h). */
#include "microbench/rtt_modes.h"
#include "microbench/mb.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAX_BINS = 4096 };

static void one_mode(MbRttModes *m, const double *x, int n)
{
    m->two_modes = false;
    m->near_ns = n > 0 ? exp(gsl_stats_median_from_sorted_data(x, 1, (size_t)n)) : 0;
    m->apart_ns = m->split_ns = m->apart_share = 0;
    m->valley = 1;
}

void mb_rtt_modes(const double *rtt_ns, int n, double *scratch, MbRttModes *out)
{
    *out = (MbRttModes){0};
    int k = 0;
    for (int i = 0; i < n; i++)
        if (rtt_ns[i] > 0 && isfinite(rtt_ns[i]))
            scratch[k++] = log(rtt_ns[i]);
    double *x = scratch;
    out->probes = k;
    gsl_sort(x, 1, (size_t)k);
    if (k > 0) {
        out->p05_ns = exp(gsl_stats_quantile_from_sorted_data(x, 1, (size_t)k, 0.05));
        out->p95_ns = exp(gsl_stats_quantile_from_sorted_data(x, 1, (size_t)k, 0.95));
    }
    if (k < MB_RTT_MODES_MIN_PROBES) {
        one_mode(out, x, k);
        return;
    }
    const double lo = x[0];
    int nb = (int)floor((x[k - 1] - lo) / MB_RTT_BIN) + 1;
    if (nb > MAX_BINS)
        nb = MAX_BINS;
    double *count = calloc((size_t)nb * 2, sizeof *count);
    if (!count) {
        one_mode(out, x, k);
        return;
    }
    double *sm = count + nb;
    for (int i = 0; i < k; i++) {
        int b = (int)floor((x[i] - lo) / MB_RTT_BIN);
        count[b < nb ? b : nb - 1] += 1;
    }
    /* smoothed [1 2 1]/4: a mode split across a bin edge is still one peak */
    for (int b = 0; b < nb; b++)
        sm[b] = (2 * count[b] + (b > 0 ? count[b - 1] : 0) + (b + 1 < nb ? count[b + 1] : 0)) / 4;
    int p1 = 0;
    for (int b = 1; b < nb; b++)
        if (sm[b] > sm[p1])
            p1 = b;
    /* the second peak: the local maximum far enough from the first with the deepest valley
     * between them (its height over the valley, the prominence) */
    const int min_gap = (int)ceil(log(MB_RTT_MODES_RATIO) / MB_RTT_BIN);
    int p2 = -1, vbin = -1;
    double best = 0;
    for (int b = 0; b < nb; b++) {
        if (abs(b - p1) < min_gap || (b > 0 && sm[b - 1] > sm[b]) || (b + 1 < nb && sm[b + 1] > sm[b]))
            continue;
        const int a = b < p1 ? b : p1, z = b < p1 ? p1 : b;
        int v = a + 1;
        for (int c = a + 1; c < z; c++)
            if (sm[c] < sm[v])
                v = c;
        /* the middle of a flat valley floor */
        int v_end = v;
        while (v_end + 1 < z && sm[v_end + 1] == sm[v])
            v_end++;
        v = (v + v_end) / 2;
        if (sm[b] - sm[v] > best)
            best = sm[b] - sm[v], p2 = b, vbin = v;
    }
    if (p2 < 0) {
        free(count);
        one_mode(out, x, k);
        return;
    }
    const double lower_peak = fmin(sm[p1], sm[p2]);
    out->valley = lower_peak > 0 ? sm[vbin] / lower_peak : 1;
    const double split = lo + (vbin + 0.5) * MB_RTT_BIN;
    free(count);
    int below = 0;
    while (below < k && x[below] < split)
        below++;
    const int above = k - below;
    const double need = fmax(MB_RTT_MODE_MIN, MB_RTT_MODE_SHARE * k);
    if (out->valley > MB_RTT_VALLEY || below < need || above < need) {
        const double valley = out->valley;
        one_mode(out, x, k);
        out->valley = valley;
        return;
    }
    out->two_modes = true;
    out->near_ns = exp(gsl_stats_median_from_sorted_data(x, 1, (size_t)below));
    out->apart_ns = exp(gsl_stats_median_from_sorted_data(x + below, 1, (size_t)above));
    out->split_ns = exp(split);
    out->apart_share = (double)above / k;
}

double mb_rtt_near_mark(const MbRttModes *m) { return m->two_modes ? m->split_ns / MB_FAR_RTT : 0; }

void mb_rtt_modes_describe(const MbRttModes *m, char *out, size_t n)
{
    if (m->two_modes)
        snprintf(out, n, "two modes: near %.0f ns, apart %.0f ns (%.0f%% of %d probes), split at %.0f ns",
                 m->near_ns, m->apart_ns, 100 * m->apart_share, m->probes, m->split_ns);
    else if (m->probes < MB_RTT_MODES_MIN_PROBES)
        snprintf(out, n, "%d probes, too few to tell two placements (%d at least): none acted on", m->probes,
                 MB_RTT_MODES_MIN_PROBES);
    else
        snprintf(out, n, "one mode: median %.0f ns (5-95%% %.0f-%.0f ns, %d probes): no placement acted on",
                 m->near_ns, m->p05_ns, m->p95_ns, m->probes);
}
