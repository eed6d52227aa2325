/* models/layers.h — per-layer shape inference and op emission (internal to models/).
 *
 * Each layer kind implements: infer (output shape, or a message saying what is wrong),
 * forward (lay out parameters, state and activations, append forward ops) and backward
 * (append backward ops). plan.c calls them in order and owns everything else.
 */
#ifndef DLPERF_LAYERS_H
#define DLPERF_LAYERS_H

#include "models/plan.h"

typedef struct {
    Plan *plan;
    const ModelSpec *model;
    int batch;
    PlanMode mode;
    int layer;           /* index of the layer being emitted */
    bool active;         /* on the path to the plan's head: emits ops (else layout only) */
    int nin;             /* inputs */
    BufRef x[LAYER_MAX_INPUTS];       /* input activations (batch) */
    Shape in_shape[LAYER_MAX_INPUTS];
    int in_root[LAYER_MAX_INPUTS];    /* layer owning each input's buffers (-1: model input) */
    /* backward only */
    bool need_dx[LAYER_MAX_INPUTS];   /* false for the model input: nobody needs its gradient */
    BufRef dx[LAYER_MAX_INPUTS];      /* gradient buffers of the inputs */
} LayerCtx;

int layer_infer(const ModelSpec *m, const LayerSpec *l, const Shape *in, int nin, Shape *out, char *msg, size_t n);
void layer_forward(LayerCtx *c, const LayerSpec *l);
/* dy_written[r]: the gradient buffer of layer r was written this step (first writer
 * overwrites, later ones accumulate); updated as gradients are written. */
void layer_backward(LayerCtx *c, const LayerSpec *l, bool *dy_written);
/* Appends the forward penalty op of layer i (sparsity) after the loss is computed. */
void layer_emit_penalty(LayerCtx *c, int i);

/* Plan building blocks used by the layers (defined in plan.c). */
BufRef plan_alloc(Plan *p, ArenaId a, size_t bytes);
BufRef buf_slice(BufRef b, size_t offset, size_t bytes);
void plan_add(Plan *p, int layer, OpDesc d, const BufRef *bufs, int nbuf);
/* Lays out a named tensor: learnable (ARENA_PARAM; decayed ones in the decay prefix) or
 * state (ARENA_STATE), and records it in the plan's tensor table. */
BufRef plan_add_tensor(Plan *p, int layer, const char *role, size_t count, bool learnable, bool decayed,
                       InitKind init, float scale, float fill, int fan_in, int fan_out);

#endif
