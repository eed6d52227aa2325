/* models/transformer.h — a transformer model seen as its shape, and one tensor-parallel
 * rank's share of it.
 *
 * What the parallel predictor (predictor/transformer_parallel.h) needs of a model: its
 * blocks' dimensions read back from the layers (any model zb_transformer, a HuggingFace
 * config or a model file of the same layers builds), and a small model that is exactly
 * what one of t tensor-parallel ranks computes for one block (Megatron's column- and
 * row-parallel splits: its heads, its MLP columns), with the vocabulary-parallel
 * embedding and LM head, so that the device pricer prices each op at its sharded shape.
 */
#ifndef DLPERF_TRANSFORMER_H
#define DLPERF_TRANSFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/model.h"
#include "models/plan.h"

typedef struct {
    int layers, hidden, heads, ffn, vocab, seq;
    bool causal;
    int act;                    /* the MLP's activation */
    float attn_dropout, dropout; /* on the attention weights; on the blocks' residual branches */
    double params;              /* the model's learnable parameters */
    OptKind opt;
} TransformerDims;

/* Reads m's transformer dimensions: the blocks are its attention layers (all of one shape),
 * the width their input's, the MLP the dense layer with an activation after the first
 * attention, the vocabulary the classes, the sequence the input's steps. 0, or -1 with err
 * naming the model and what is missing. */
int transformer_dims(const ModelSpec *m, TransformerDims *out, char *err, size_t errlen);

/* The share of one of `shards` tensor-parallel ranks, as a model of three parts whose
 * layers are named "emb.*" (the vocabulary-parallel token embedding of vocab / shards rows
 * and the positions), "blk.*" (one pre-norm block: norm, the attention's heads / shards
 * heads, dropout, residual add, norm, the MLP's ffn / shards columns and rows, dropout,
 * residual add) and "head.*" (the final norm and the LM head's vocab / shards columns; the
 * loss over those columns). shards must divide heads, ffn and vocab. 0, or -1 with err. The
 * layers are malloc'd (free m->layers). */
int transformer_shard_model(const TransformerDims *d, int shards, ModelSpec *m, char *err, size_t errlen);

/* One rank's share of a whole model trained tensor-parallel over `ranks` ranks (Megatron-LM's
 * splits, Shoeybi et al. 2019), as a model every rank of the group builds alike:
 *   - each attention layer holds heads / ranks heads (AttentionSpec.shards) between a TP_COPY
 *     before it and a TP_SUM after it, which adds the projection's bias after the sum;
 *   - each MLP, a dense layer with an activation whose one consumer is a dense layer without
 *     one, splits the first by its columns (units / ranks) after a TP_COPY and the second by
 *     its rows, its bias moved into a TP_SUM after it;
 *   - a language model's vocabulary splits too (Megatron's vocabulary-parallel pair): the
 *     token embedding the LM head is tied to (or, untied, the one of as many rows as the head
 *     has classes) holds ceil(vocab / ranks) rows, a TP_SUM after it adding the ranks'
 *     lookups, and the head, after a TP_COPY, those rows' classes (the last rank's block
 *     padded); the loss is then the vocabulary-parallel cross-entropy (ModelSpec.tp_vocab);
 *   - everything else (positions, norms, residual adds, a classifier's head) is whole on
 *     every rank.
 * The share keeps the whole model's
 * layer names (a TP_COPY is named NAME.f, a TP_SUM NAME.g) and points at it (tp_whole), so
 * that each rank starts from its slices of the whole model's initial parameters
 * (transformer_tp_slice). 0, or -1 with err naming the layer that does not split; the
 * layers are malloc'd (free out->layers). */
int transformer_tensor_parallel(const ModelSpec *whole, int ranks, ModelSpec *out, char *err, size_t errlen);

/* Copies into `params` (the share's ARENA_PARAM) this rank's part of every learnable tensor of
 * `whole` (a plan of share->model->tp_whole) as its values wp hold them: whole tensors as they
 * are, split ones as the rank's columns (a column-parallel kernel, its bias) or rows (a
 * row-parallel kernel). 0, or -1 with err naming a tensor with no counterpart. */
int transformer_tp_slice(const Plan *share, float *params, const Plan *whole, const float *wp, int rank, char *err,
                         size_t errlen);
/* The same slices of the whole model's initial values at `seed` (params_init's), drawn one
 * at a time: a rank never holds the whole model. */
int transformer_tp_init(const Plan *share, float *params, const Plan *whole, uint64_t seed, int rank, char *err,
                        size_t errlen);

typedef enum { SHARD_EMBEDDING, SHARD_BLOCK, SHARD_HEAD, SHARD_PART_COUNT } ShardPart;
/* Which part a layer of the shard model belongs to (by its name's prefix). */
ShardPart transformer_shard_part(const LayerSpec *l);

#endif
