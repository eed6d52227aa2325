/* models/model.h — the vocabulary a model is written in: layers, loss, optimizer, data.
 *
 * A ModelSpec is pure description (no buffers). plan_build() expands it, at a batch size,
 * into the training-step plan from which the profile, the step itself and the prediction
 * all come (models/plan.h). Zoo models (models/zoo.c) and, later, JSON model files produce
 * the same ModelSpec.
 */
#ifndef DLPERF_MODEL_H
#define DLPERF_MODEL_H

#include <stdbool.h>

#include "ops/ops.h"

enum { MODEL_NAME_MAX = 48, LAYER_NAME_MAX = 48 };

/* Per-sample tensor shape (the batch dimension is added by the plan).
 * rank 1: (features); rank 2: (time steps, features); rank 3: (C, H, W). */
typedef struct {
    int rank;
    int d[3];
} Shape;

typedef enum {
    LAYER_DENSE,  /* fully connected; flattens its input (a free view in NCHW order) */
    LAYER_CONV2D, /* convolution + bias + activation */
    LAYER_POOL2D, /* max / average pooling */
    LAYER_LSTM,   /* one LSTM layer unrolled over the input's time steps */
    LAYER_KIND_COUNT
} LayerKind;

enum { ACTIVATION_NONE = -1 }; /* LayerSpec.act: no activation (linear) */

typedef enum { INIT_GLOROT_UNIFORM, INIT_HE_NORMAL, INIT_UNIFORM } InitKind;

typedef struct {
    int units;
} DenseSpec;

typedef struct {
    int filters;
    int kh, kw;
    int stride;
    PadMode pad;
    int groups;
} ConvSpec;

typedef struct {
    PoolKind kind;
    int win;
    int stride;
    PadMode pad;
} PoolSpec;

typedef struct {
    int hidden;
    float forget_bias; /* TF BasicLSTMCell adds 1.0 to the forget gate */
    bool last_only;    /* output only h at the last step (rnn-benchmarks) */
} LstmSpec;

typedef struct {
    LayerKind kind;
    char name[LAYER_NAME_MAX];
    int input;      /* index of the producing layer; -1 = the model input */
    int act;        /* ActKind, or ACTIVATION_NONE (dense/conv only) */
    InitKind init;  /* weight initializer; biases start at zero */
    float init_scale; /* INIT_UNIFORM: weights ~ U(-scale, scale) */
    union {
        DenseSpec dense;
        ConvSpec conv;
        PoolSpec pool;
        LstmSpec lstm;
    } u;
} LayerSpec;

typedef enum {
    LOSS_SOFTMAX_XENT, /* integer labels, mean over the batch */
    LOSS_MSE,          /* mean over batch and features (Keras 'mse') */
    LOSS_SSE           /* summed squared error (rnn-benchmarks) */
} LossKind;

typedef enum { OPT_SGD, OPT_RMSPROP } OptKind;

typedef struct {
    OptKind kind;
    float lr;
    float rho, eps; /* RMSprop */
} OptSpec;

/* Seeded synthetic data with the original data set's shapes (the real data sets are not
 * available offline): documented per generator in models/data.c. */
typedef enum {
    DATA_EXPRESSION, /* P1B1: gene-expression-like rows in [0,1], low-rank + noise; target = input */
    DATA_IMAGES,     /* convnet-benchmarks: N(0, 0.1) pixels, uniform random class labels */
    DATA_SEQUENCE    /* rnn-benchmarks: U[0,1) inputs (T, B, F) and targets (B, H) */
} DataKind;

typedef struct {
    char name[MODEL_NAME_MAX]; /* CLI name: lower-case, hyphenated */
    const char *title;         /* one line for people */
    const char *source;        /* where the architecture comes from */
    Shape input;
    const LayerSpec *layers;
    int nlayers;
    LossKind loss;
    int classes;               /* LOSS_SOFTMAX_XENT */
    OptSpec opt;
    DataKind data;
    int default_batch;
} ModelSpec;

int shape_count(const Shape *s); /* elements per sample */
void shape_str(const Shape *s, char *out, int n);
const char *layer_kind_name(LayerKind k);

/* The zoo: lookup by CLI name (NULL if unknown) and the list of all models. */
const ModelSpec *zoo_find(const char *name);
int zoo_count(void);
const ModelSpec *zoo_get(int i);
/* "p1b1, alexnet-owt, basic-lstm" — for error messages. */
void zoo_names(char *out, int n);

#endif
