/* predictor/parallel.h — model parallelism: seed 003's SUMMA estimate for a distributed
 * matrix multiply, and pipeline parallelism with micro-batches and its bubble.
 *
 * SUMMA (van de Geijn & Watts; seed 003): an n x n x n multiply on a p x p grid of devices
 * of gamma FLOP/s, each reading its blocks over a link of beta bytes/s:
 *     T_compute = 2 n^3 / (p^2 gamma),   T_data = 2 n^2 s / (p beta)   (s bytes per value)
 * The device stays compute-bound while T_data <= T_compute, i.e. beta >= s p gamma / n
 * (seed 003's example: n = 2000, 15 TFLOP/s, fp32: p = 10 needs 300 GB/s, p = 1 30 GB/s).
 *
 * Pipeline (GPipe schedule): the layers split into S contiguous stages balanced by time,
 * the mini-batch into M micro-batches; every slot lasts as long as the slowest stage's
 * forward + backward of one micro-batch plus sending its boundary activations forward and
 * their gradients back; M + S - 1 slots, then each stage updates its own parameters:
 *     T = (M + S - 1) (max_stage (f + b) + transfer) + update / S,
 *     bubble = (S - 1) / (M + S - 1) of the slots.
 */
#ifndef DLPERF_PARALLEL_H
#define DLPERF_PARALLEL_H

#include "predictor/comm_model.h"

typedef struct {
    double compute_s, data_s;
    double beta_needed_Bps; /* to stay compute-bound */
    bool compute_bound;     /* data_s <= compute_s */
} SummaEstimate;

/* p: the grid's side (p^2 devices). */
void summa_estimate(double n, int p, double gamma_flops, double beta_Bps, double bytes_per_value, SummaEstimate *out);

typedef struct {
    int stages, micro_batches;
    int first_layer[64];     /* stage s holds layers first_layer[s] .. first_layer[s+1]-1 */
    double stage_s[64];      /* forward + backward of one micro-batch per stage */
    double boundary_bytes[64]; /* activations leaving stage s per micro-batch */
    double slot_s, transfer_s, update_s;
    double iter_s, bubble_fraction;
} PipelineEstimate;

/* layer_s[i]: forward + backward seconds of layer i at the micro-batch; layer_out_bytes[i]:
 * its output per micro-batch; update_s: the whole optimizer update. Stages are contiguous
 * and minimise the slowest stage (exact, by binary search over the bound). Returns 0, or
 * -1 if stages < 1, > 64 or > nlayers. */
int pipeline_estimate(const double *layer_s, const double *layer_out_bytes, int nlayers, double update_s, int stages,
                      int micro_batches, const LinkParams *link, PipelineEstimate *out);

#endif
