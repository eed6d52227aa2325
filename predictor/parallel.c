/* predictor/parallel.c — SUMMA and pipeline-parallel estimates (parallel.h). */
#include "predictor/parallel.h"

#include <math.h>
#include <string.h>

void summa_estimate(double n, int p, double gamma_flops, double beta_Bps, double bytes_per_value, SummaEstimate *out)
{
    out->compute_s = 2 * n * n * n / ((double)p * p * gamma_flops);
    out->data_s = 2 * n * n * bytes_per_value / ((double)p * beta_Bps);
    out->beta_needed_Bps = bytes_per_value * p * gamma_flops / n;
    out->compute_bound = out->data_s <= out->compute_s;
}

/* Contiguous stages whose sums stay within `bound`: the count needed, first layers filled. */
static int stages_within(const double *t, int n, double bound, int *first, int max)
{
    int s = 0;
    double acc = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0 || acc + t[i] > bound) {
            if (s == max)
                return max + 1;
            first[s++] = i;
            acc = 0;
        }
        acc += t[i];
    }
    return s;
}

int pipeline_estimate(const double *layer_s, const double *layer_out_bytes, int nlayers, double update_s, int stages,
                      int micro_batches, const LinkParams *link, PipelineEstimate *out)
{
    memset(out, 0, sizeof *out);
    if (stages < 1 || stages > 64 || stages > nlayers || micro_batches < 1)
        return -1;
    /* the smallest bound on a stage's time that `stages` contiguous stages can keep:
     * bisection between the largest layer and the whole */
    double lo = 0, hi = 0;
    for (int i = 0; i < nlayers; i++) {
        lo = fmax(lo, layer_s[i]);
        hi += layer_s[i];
    }
    int first[65];
    for (int it = 0; it < 100 && hi - lo > 1e-12 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (stages_within(layer_s, nlayers, mid, first, stages) <= stages)
            hi = mid;
        else
            lo = mid;
    }
    int used = stages_within(layer_s, nlayers, hi, first, stages);
    /* fewer stages than asked fit the bound: split the longest stages further so every
     * device has work (a stage of one layer cannot split) */
    while (used < stages) {
        int best = -1, span = 1;
        for (int s = 0; s < used; s++) {
            int end = s + 1 < used ? first[s + 1] : nlayers;
            if (end - first[s] > span)
                span = end - first[s], best = s;
        }
        if (best < 0)
            break;
        memmove(&first[best + 2], &first[best + 1], (size_t)(used - best - 1) * sizeof *first);
        first[best + 1] = first[best] + span / 2;
        used++;
    }
    out->stages = used;
    out->micro_batches = micro_batches;
    double slowest = 0, transfer = 0;
    for (int s = 0; s < used; s++) {
        int end = s + 1 < used ? first[s + 1] : nlayers;
        out->first_layer[s] = first[s];
        for (int i = first[s]; i < end; i++)
            out->stage_s[s] += layer_s[i];
        slowest = fmax(slowest, out->stage_s[s]);
        if (s + 1 < used) { /* activations forward, their gradients back */
            out->boundary_bytes[s] = layer_out_bytes[end - 1];
            transfer = fmax(transfer, 2 * (link->alpha_s + out->boundary_bytes[s] / link->beta_Bps));
        }
    }
    out->transfer_s = transfer;
    out->slot_s = slowest + transfer;
    out->update_s = update_s / used;
    out->iter_s = (micro_batches + used - 1) * out->slot_s + out->update_s;
    out->bubble_fraction = (double)(used - 1) / (micro_batches + used - 1);
    return 0;
}
