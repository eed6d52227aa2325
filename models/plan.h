/* models/plan.h — the training-step plan: one expansion of a model at a batch size.
 *
 * plan_build() turns a ModelSpec into a flat list of op descriptors (forward, backward,
 * update) whose buffers are (arena, offset) references. From this one expansion come
 *   - the profile: parameters, FLOPs per phase, bytes per arena (= what `run` allocates),
 *   - the training step: plan_exec() runs the list in order on the allocated arenas,
 *   - the prediction: the predictor prices every entry.
 * All memory is laid out here, once; nothing is allocated inside a step (STYLE habit 4).
 */
#ifndef DLPERF_PLAN_H
#define DLPERF_PLAN_H

#include <stddef.h>

#include "models/model.h"
#include "ops/ops.h"

typedef enum {
    ARENA_PARAM,   /* all learnable parameters, one buffer (the optimizer is one flat op) */
    ARENA_GRAD,    /* parameter gradients, same offsets as ARENA_PARAM */
    ARENA_OPT,     /* optimizer state (RMSprop accumulators), same offsets */
    ARENA_ACT,     /* activations saved for backward, loss and probabilities */
    ARENA_ACTGRAD, /* gradients of activations */
    ARENA_WS,      /* scratch shared by all ops (they run one after another): the max */
    ARENA_INPUT,   /* one batch of input and targets; rebased to each batch of the data set */
    ARENA_COUNT
} ArenaId;

typedef struct {
    ArenaId arena;
    size_t offset; /* bytes from the arena base, 64-byte aligned */
    size_t bytes;
} BufRef;

typedef struct {
    OpDesc desc;
    BufRef buf[OP_MAX_BUFS];
    int nbuf;
    int layer; /* index into Plan.layers, or -1 for model-level ops (loss, update) */
} PlanOp;

typedef struct {
    int layer;       /* owner */
    BufRef ref;      /* in ARENA_PARAM (and at the same offset in GRAD / OPT) */
    size_t count;
    int fan_in, fan_out;
    InitKind init;   /* biases: zero */
    float init_scale;
    bool is_bias;
} PlanParam;

typedef struct {
    char name[LAYER_NAME_MAX];
    LayerKind kind;
    Shape in, out;
    size_t params;     /* learnable parameters */
    size_t act_bytes;  /* ACT + ACTGRAD bytes owned by the layer */
    BufRef y, dy;      /* output activation and its gradient (per batch) */
    BufRef w, b;       /* weights and bias in ARENA_PARAM (gradients: same offsets in GRAD) */
    BufRef saved[8];   /* layer-specific buffers kept from forward for backward */
} PlanLayer;

typedef struct Plan {
    const ModelSpec *model;
    int batch;
    int threads;             /* kernel threads the workspace was sized for */
    PlanOp *ops;
    int nops, cap;
    PlanLayer *layers;
    int nlayers;
    PlanParam *params;
    int nparams;
    size_t arena_bytes[ARENA_COUNT];
    size_t param_count;      /* learnable parameters (excluding alignment padding) */
    BufRef input, target;    /* in ARENA_INPUT; target == input for autoencoders */
    BufRef loss;             /* one float in ARENA_ACT */
} Plan;

/* Expands `m` at `batch`. Returns 0, or -1 with one line in err naming the layer and the
 * mismatch (e.g. "layer 3 'fc6': ...") or the size that does not fit in memory arithmetic. */
int plan_build(const ModelSpec *m, int batch, Plan *p, char *err, size_t errlen);
void plan_free(Plan *p);

/* Total bytes of all arenas: what a run allocates besides the data set. */
size_t plan_total_bytes(const Plan *p);
const char *arena_name(ArenaId a);

/* Runs every op of the plan in order. base[a] points at arena a. If op_time_s is not
 * NULL, the wall time of each op is stored there (trace). The kernels must run with the
 * thread count the plan was built for (workspace is per thread). */
void plan_exec(const Plan *p, void *const base[ARENA_COUNT], double *op_time_s);

/* Name of the layer that owns op i, or "(loss)" / "(update)" for model-level ops. */
const char *plan_op_owner(const Plan *p, int i);

/* FLOPs of the plan per phase (index OpPhase), and forward FLOPs of the GEMM/conv ops
 * (multiply-adds x 2) per sample — the figure the literature quotes. */
void plan_flops(const Plan *p, double flops[PHASE_COUNT]);
double plan_forward_macs_per_sample(const Plan *p);

#endif
