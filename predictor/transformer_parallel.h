/* predictor/transformer_parallel.h — a transformer's training iteration and memory per GPU
 * under Megatron-LM's parallelism (Narayanan et al., SC'21; Korthikanti et al. 2022), on a
 * spec-sheet system, and the search for the fastest configuration that fits.
 *
 * G = nodes x devices per node GPUs hold t x p x d ranks:
 *   tensor parallel t    each block's heads and MLP columns split over t GPUs of one node;
 *                        two allreduces of the block's activations (b s h values) forward
 *                        and two backward, on the node's links, not overlapped. Sequence
 *                        parallel turns each into a reduce-scatter and an all-gather (the
 *                        same bytes) and runs the norms, dropouts and residual adds on s / t
 *                        tokens each. Outside the blocks: the vocabulary-parallel lookup's
 *                        sum (b s h values), the LM head's input gradient's (b s h) and the
 *                        loss's two small sums (b s and 2 b s fp32 values).
 *   pipeline parallel p  L / p blocks a stage (the embedding on the first, the final norm,
 *                        LM head and loss on the last); m = B / (b d) micro-batches in
 *                        1F1B order, each stage's blocks in v interleaved chunks. With W the
 *                        slowest stage's forward + backward of one micro-batch and x a send
 *                        of the boundary activations (b s h values, / t: Megatron's
 *                        scatter-gather) to the next stage:
 *                            pipeline = (m v + p - 1) (W / v + 2 x)
 *                        of which (p - 1) (W / v + 2 x) is the bubble (p = 1: m W).
 *   data parallel d      the replicas sum their gradients (fp32) after the pipeline flushes:
 *                        an allreduce, or with the distributed optimizer (ZeRO-1) a
 *                        reduce-scatter of them and an all-gather of the updated weights;
 *                        not overlapped. With p > 1 the first and last stages also sum the
 *                        tied word embedding's gradients.
 *   recomputation        none; selective (the attention core, QK^T, softmax, dropout and
 *                        the weights x V, re-run in the backward); full (each block's
 *                        forward and its tensor-parallel allreduces re-run).
 * The vocabulary is padded as Megatron pads it (tpar_padded_vocab). Each op of a block is priced at its sharded shape by the device pricer (device_price.h:
 * the GPU evidence first) from one tensor-parallel rank's share of the model
 * (models/transformer.h); the ranks' Megatron groups are laid out tensor-parallel fastest,
 * then data parallel, then pipeline, so a data-parallel group has min(d, G_node / t) ranks
 * in a node and all of a node's GPUs share its NICs.
 *
 * Memory per GPU (the fuller of the first and last stages): weights at the precision's
 * width; fp32 gradients; optimizer state (mixed precision: fp32 master weights and Adam's
 * two moments, 12 bytes a parameter, / d with the distributed optimizer); activations by
 * Korthikanti et al.'s count per block and micro-batch at b s h (16-bit values, 1-byte
 * dropout masks): 34 + 5 a s / h with dropout everywhere, of which 24 + 5 a s / h split
 * t ways, all of it with sequence parallel, the 5 a s / h of the attention core gone with
 * selective recomputation, 2 (the block's input) with full. The first stage holds p
 * micro-batches' in 1F1B (x (1 + (p - 1) / (p v)) interleaved), the last one and the
 * logits (fp32, s b V / t).
 */
#ifndef DLPERF_TRANSFORMER_PARALLEL_H
#define DLPERF_TRANSFORMER_PARALLEL_H

#include <stdbool.h>
#include <stddef.h>

#include "models/transformer.h"
#include "predictor/device_price.h"
#include "predictor/system_pricer.h"

typedef enum { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL, RECOMPUTE_COUNT } Recompute;
const char *recompute_name(Recompute r); /* "none", "selective", "full" */
int recompute_parse(const char *s, Recompute *out);

typedef struct {
    int tp, pp, dp;        /* dp 0: what the GPUs leave (G / (tp pp)) */
    int micro_batch;       /* b */
    int global_batch;      /* B = m b d */
    int interleave;        /* v model chunks per stage (1: plain 1F1B) */
    bool sp;               /* sequence parallel (with tp > 1) */
    bool dist_opt;         /* the distributed optimizer (ZeRO-1) */
    Recompute recompute;
} ParallelConfig;

/* The vocabulary as Megatron pads it for tp ranks (--make-vocab-size-divisible-by 128, times
 * tp): each rank's embedding and LM head hold padded / tp rows. */
int tpar_padded_vocab(int vocab, int tp);

/* One tensor-parallel rank's share priced on the device for one micro-batch. */
typedef struct {
    int tp, micro_batch;
    double fwd_s[SHARD_PART_COUNT], bwd_s[SHARD_PART_COUNT]; /* embedding, one block, head + loss */
    double core_fwd_s;                 /* the block's attention core forward: what selective re-runs */
    double seq_fwd_s, seq_bwd_s;       /* the block's norms, dropouts and adds: what sequence parallel splits */
    double block_params, emb_params, head_params; /* of the share */
    double stream_s_per_byte;          /* the device's streaming pass (the optimizer's) */
    int priced_by[DP_SOURCE_COUNT];    /* the share's ops by what priced them */
    int ops;
} ShardCost;

/* Prices one rank's share at tp and micro-batch on sp's device (a GPU sheet, not this
 * machine). 0; SYSP_USAGE with err for a shape the model refuses; SYSP_FAIL. */
int tpar_price_shard(const SystemPricer *sp, const TransformerDims *d, int tp, int micro_batch, ShardCost *out,
                     char *err, size_t errlen);

typedef struct {
    ParallelConfig cfg;    /* as given, dp filled in */
    int gpus, nodes, micro_batches, layers_per_stage;
    /* one iteration, by where the time goes; they sum to iter_s */
    double compute_s;      /* the slowest stage's forward and backward of its m micro-batches */
    double recompute_s;    /* the forward re-run in the backward */
    double tp_comm_s;      /* tensor (and sequence) parallel collectives, exposed */
    double pp_comm_s;      /* the sends between stages outside the bubble */
    double bubble_s;       /* the pipeline's fill and drain, its sends included */
    double dp_comm_s;      /* gradients between replicas, and the tied embedding's */
    double optimizer_s;    /* the optimizer's pass over the rank's parameters (or its 1/d) */
    double iter_s;
    /* memory per GPU, bytes, of the fuller stage (first_stage_fuller: the first) */
    double weights_B, grads_B, optimizer_B, activations_B, total_B;
    bool first_stage_fuller, fits;
    double model_flops;    /* per iteration: 6 x (the matmuls' FLOPs per token) x tokens */
    double mfu;            /* model_flops / (iter_s x GPUs x the device's peak at the precision) */
    double tokens_per_s;
} ParallelEstimate;

/* Checks c against the model and the system's G = nodes x devices per node GPUs and fills
 * c->dp. 0, or -1 with err naming the option and what would be valid. */
int tpar_check(const TransformerDims *d, const SystemSpec *sys, int nodes, ParallelConfig *c, char *err, size_t errlen);

/* Activation bytes of one block for one micro-batch at the configuration (value_bytes: the
 * precision's width) as stored through the backward. */
double tpar_block_activation_bytes(const TransformerDims *d, const ParallelConfig *c, double value_bytes);

/* The estimate of a checked configuration from its share's cost (sc->tp == c->tp,
 * sc->micro_batch == c->micro_batch). */
void tpar_estimate(const TransformerDims *d, const SystemSpec *sys, Precision prec, int nodes,
                   const ParallelConfig *c, const ShardCost *sc, ParallelEstimate *out);

/* The fastest configuration that fits, over tp (dividing the heads, up to a node's
 * devices), pp (dividing the layers), micro-batches 1, 2, 4, 8, interleaving 1 to 4,
 * recomputation none, selective and full; sequence parallel with tp > 1, the distributed
 * optimizer with d > 1. *tried: configurations estimated, *fitting: of those, fitting.
 * 0 (best filled), 1 where none fits (best: the one needing the least memory), or
 * SYSP_USAGE / SYSP_FAIL with err. */
int tpar_search(const SystemPricer *sp, const TransformerDims *d, int nodes, int global_batch, ParallelEstimate *best,
                int *tried, int *fitting, char *err, size_t errlen);

#endif
