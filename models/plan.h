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
    ARENA_PARAM,   /* all learnable parameters, one buffer (the optimizer is one flat op);
                      the L2-decayed kernels first, so decay is a prefix */
    ARENA_GRAD,    /* parameter gradients, same offsets as ARENA_PARAM */
    ARENA_OPT,     /* optimizer state (RMSprop / momentum / Adam), same offsets, x1 or x2 */
    ARENA_STATE,   /* non-learned model state: batch-norm running statistics, dropout step */
    ARENA_ACT,     /* activations saved for backward, loss and probabilities */
    ARENA_ACTGRAD, /* gradients of activations */
    ARENA_WS,      /* scratch shared by all ops (they run one after another): the max */
    ARENA_INPUT,   /* one batch of input and targets; rebased to each batch of the data set */
    ARENA_COUNT
} ArenaId;

typedef enum {
    PLAN_TRAIN,     /* forward, loss, backward, optimizer update */
    PLAN_FWD_BWD,   /* forward, loss, backward: gradients only (convnet-benchmarks' timing) */
    PLAN_INFERENCE  /* forward and loss; batch norm uses running statistics, no dropout */
} PlanMode;

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

/* A named tensor of the model: a learnable parameter (ARENA_PARAM; its gradient is at the
 * same offset in ARENA_GRAD) or a piece of state (ARENA_STATE). Weights files store these. */
typedef struct {
    int layer;       /* owner */
    char role[16];   /* "kernel", "bias", "gamma", "beta", "running_mean", "running_var", "embeddings" */
    BufRef ref;
    size_t count;
    int fan_in, fan_out;
    InitKind init;   /* kernels; the others start from constants (fill) */
    float init_scale;
    float fill;      /* non-kernel tensors: initial value (bias 0, gamma 1, running_var 1) */
    bool learnable;  /* ARENA_PARAM (true) or ARENA_STATE */
    bool decayed;    /* in the L2-decay prefix */
    bool tp_split;   /* a tensor-parallel rank's part of a tensor split over the ranks (the
                      * others are whole on every rank) */
} PlanParam;

typedef struct {
    char name[LAYER_NAME_MAX];
    LayerKind kind;
    Shape in, out;     /* in: of the first input */
    size_t params;     /* learnable parameters */
    size_t state;      /* non-learned state values (batch-norm running statistics) */
    size_t act_bytes;  /* ACT + ACTGRAD bytes owned by the layer */
    int alias_of;      /* views (flatten, sparsity, inference dropout): the layer whose
                          output this one is; -1 otherwise */
    BufRef y, dy;      /* output activation and its gradient (per batch) */
    BufRef w, b;       /* main weights and bias/beta (gradients: same offsets in GRAD) */
    BufRef saved[8];   /* layer-specific buffers kept from forward for backward */
} PlanLayer;

typedef struct Plan {
    const ModelSpec *model;
    int batch;
    PlanMode mode;
    int threads;             /* kernel threads the workspace was sized for */
    PlanOp *ops;
    int nops, cap;
    PlanLayer *layers;
    int nlayers;
    PlanParam *params;
    int nparams;
    size_t arena_bytes[ARENA_COUNT];
    size_t param_count;      /* learnable parameters (excluding alignment padding) */
    size_t state_count;      /* non-learned state values */
    size_t decay_bytes;      /* the L2-decayed prefix of ARENA_PARAM */
    BufRef input, target;    /* in ARENA_INPUT; target == input for autoencoders */
    BufRef loss;             /* one float in ARENA_ACT */
    BufRef grad_sumsq;       /* one float in ARENA_ACT: the gradients' sum of squares (clipping) */
    BufRef output;           /* the last layer's output (logits / predictions) */
    BufRef probs;            /* softmax probabilities (softmax loss), else = output */
    BufRef step_counter;     /* int32 in ARENA_STATE, read by dropout; the trainer advances it */
    int update_op;           /* index of the first optimizer op (PLAN_TRAIN; they end the
                                plan: one, or one per parameter range of a task head), else -1 */
    int head;                /* the head this plan scores (multi-task models) */
    int classes;             /* of that head (softmax loss) */
    size_t param_head, param_tail; /* layout cursors while building (decayed / others) */
} Plan;

/* Expands `m` at `batch` for `mode`. Returns 0, or -1 with one line in err naming the
 * layer and the mismatch (e.g. "layer 3 'fc6': ...") or the size that does not fit in
 * memory arithmetic. The workspace is sized for the current ops_set_threads count. */
int plan_build_mode(const ModelSpec *m, int batch, PlanMode mode, Plan *p, char *err, size_t errlen);
/* plan_build_mode(..., PLAN_TRAIN, ...) */
int plan_build(const ModelSpec *m, int batch, Plan *p, char *err, size_t errlen);
/* For multi-task models: the plan of head `head` (0-based). Layers off the path to the
 * head emit no ops, but every plan of a model lays its parameters and state out
 * identically, so the heads' plans share one parameter buffer. */
int plan_build_head(const ModelSpec *m, int batch, PlanMode mode, int head, Plan *p, char *err,
                    size_t errlen);
void plan_free(Plan *p);

/* Total bytes of all arenas: what a run allocates besides the data set. */
size_t plan_total_bytes(const Plan *p);

/* The most bytes of the arenas in arena_mask (bit 1 << ArenaId) live at once over the step,
 * a buffer living from the first op that touches it to the last: what a framework whose
 * allocator frees each tensor after its last use holds (PyTorch's activations and their
 * gradients), where a run here keeps every buffer for the whole step. Buffers that overlap
 * (slices, views, in-place results) count as one. */
size_t plan_peak_live_bytes(const Plan *p, unsigned arena_mask);
const char *arena_name(ArenaId a);
const char *plan_mode_name(PlanMode m);

/* Runs every op of the plan in order. base[a] points at arena a. If op_time_s is not
 * NULL, the wall time of each op is stored there (trace). The kernels must run with the
 * thread count the plan was built for (workspace is per thread). */
void plan_exec(const Plan *p, void *const base[ARENA_COUNT], double *op_time_s);
/* Runs ops [first, end) (data-parallel training sums the gradients between the backward
 * pass and the update). op_time_s, if given, is indexed by op number as in plan_exec. */
void plan_exec_range(const Plan *p, void *const base[ARENA_COUNT], int first, int end, double *op_time_s);

/* Name of the layer that owns op i, or "(loss)" / "(update)" for model-level ops. */
const char *plan_op_owner(const Plan *p, int i);

/* FLOPs of the plan per phase (index OpPhase), and forward multiply-adds of the GEMM and
 * convolution ops per sample — the figure the literature quotes. */
void plan_flops(const Plan *p, double flops[PHASE_COUNT]);
double plan_forward_macs_per_sample(const Plan *p);

/* The largest batch, at most m's default, whose training step does at most max_flops
 * FLOPs (at least 1): the reduced batch at which the zoo is calibrated and validated on a
 * small machine. Returns -1 with err set if m does not expand. */
int plan_batch_within(const ModelSpec *m, double max_flops, char *err, size_t errlen);

#endif
