/* models/layers.h — per-layer shape inference and op emission (internal to models/).
 *
 * Each layer kind implements three things: infer (output shape, or a message saying what
 * is wrong), forward (lay out parameters/activations, append forward ops) and backward
 * (append backward ops). plan.c calls them in order and owns everything else.
 */
#ifndef DLPERF_LAYERS_H
#define DLPERF_LAYERS_H

#include "models/plan.h"

typedef struct {
    Plan *plan;
    int batch;
    int layer;          /* index of the layer being emitted */
    BufRef x;           /* the layer's input activation (batch) */
    /* backward only */
    bool need_dx;       /* false for the first layer: nobody needs d(input) */
    bool dx_accumulate; /* another consumer already wrote the input's gradient */
    BufRef dx;
} LayerCtx;

int layer_infer(const LayerSpec *l, const Shape *in, Shape *out, char *msg, size_t n);
void layer_forward(LayerCtx *c, const LayerSpec *l);
void layer_backward(LayerCtx *c, const LayerSpec *l);

/* Plan building blocks used by the layers (defined in plan.c). */
BufRef plan_alloc(Plan *p, ArenaId a, size_t bytes);
BufRef buf_slice(BufRef b, size_t offset, size_t bytes);
void plan_add(Plan *p, int layer, OpDesc d, const BufRef *bufs, int nbuf);
void plan_add_param(Plan *p, int layer, BufRef ref, size_t count, int fan_in, int fan_out,
                    InitKind init, float scale, bool is_bias);

#endif
