/* models/model.h — the vocabulary a model is written in: layers, loss, optimizer, data.
 *
 * A ModelSpec is pure description (no buffers). plan_build() expands it, at a batch size,
 * into the training-step plan from which the profile, the step itself and the prediction
 * all come (models/plan.h). Zoo models (models/zoo*.c) and JSON model files
 * (models/model_json.c) produce the same ModelSpec.
 *
 * Layers form a DAG: each names its input layers by index (earlier layers only; -1 is the
 * model input). Tensors are NCHW per sample: (C, H, W), (features), or sequences
 * (T, features) stored time-major, i.e. (T, batch, features) in memory.
 */
#ifndef DLPERF_MODEL_H
#define DLPERF_MODEL_H

#include <stdbool.h>

#include "ops/ops.h"

enum { MODEL_NAME_MAX = 48, LAYER_NAME_MAX = 48, LAYER_MAX_INPUTS = 8 };

/* Per-sample tensor shape (the batch dimension is added by the plan).
 * rank 1: (features); rank 2: (time steps, features); rank 3: (C, H, W). */
typedef struct {
    int rank;
    int d[3];
} Shape;

typedef enum {
    LAYER_DENSE,      /* fully connected; flattens an image input; on a sequence, per step */
    LAYER_CONV2D,     /* convolution (+ bias) (+ activation) */
    LAYER_POOL2D,     /* max / average pooling, or global pooling */
    LAYER_LSTM,       /* one LSTM layer unrolled over the input's time steps */
    LAYER_RNN,        /* one plain (tanh) RNN layer, TF BasicRNNCell */
    LAYER_BATCHNORM,  /* batch normalisation (+ activation), per channel */
    LAYER_LRN,        /* local response normalisation across channels */
    LAYER_DROPOUT,    /* inverted dropout (identity at inference) */
    LAYER_CONCAT,     /* concatenation of image inputs along channels */
    LAYER_ADD,        /* element-wise sum of inputs (residual) (+ activation) */
    LAYER_ACTIVATION, /* a standalone activation */
    LAYER_FLATTEN,    /* (C, H, W) -> (C*H*W): a view, no work */
    LAYER_EMBEDDING,  /* integer ids (T) -> vectors, output (1, T, dim) */
    LAYER_SPARSITY,   /* identity that adds the sparse-autoencoder KL penalty on its input */
    LAYER_LAYERNORM,  /* layer normalisation over the features (per sample, per step) */
    LAYER_ATTENTION,  /* multi-head self-attention over a sequence: QKV, scores, context, projection */
    LAYER_POSITION,   /* adds a learned positional embedding to a sequence (GPT-2 wpe, BERT) */
    LAYER_TO_SEQUENCE, /* feature maps (C, H, W) -> the sequence (H W, C) of their positions (ViT) */
    LAYER_CLASS_TOKEN, /* prepends a learned token to a sequence: (T, D) -> (T + 1, D) (ViT, BERT's [CLS]) */
    LAYER_FIRST_STEP,  /* the sequence's first step: (T, D) -> (D) (the class token's output) */
    LAYER_TP_COPY,     /* tensor parallel, Megatron's f: the input as it is forward; backward the
                        * input's gradient summed over the tensor-parallel ranks (before a
                        * column-parallel layer, whose ranks each give part of it) */
    LAYER_TP_SUM,      /* tensor parallel, Megatron's g: forward the sum over the ranks of their
                        * partial outputs (after a row-parallel layer), plus the bias that layer
                        * leaves out; backward the gradient as it is */
    LAYER_KIND_COUNT
} LayerKind;

enum { ACTIVATION_NONE = -1 }; /* LayerSpec.act: no activation (linear) */

typedef enum {
    INIT_GLOROT_UNIFORM, /* Keras default: U(+-sqrt(6 / (fan_in + fan_out))) */
    INIT_HE_NORMAL,      /* N(0, 2 / fan_in) */
    INIT_UNIFORM,        /* U(+-init_scale) */
    INIT_NORMAL          /* N(0, init_scale) */
} InitKind;

typedef struct {
    int units;
    bool no_bias;
    bool tp_split;  /* one tensor-parallel rank's share of a larger layer (Megatron's column-
                     * or row-parallel linear): its kernel and bias are part of the whole
                     * layer's, so the gradients' global norm sums them over the ranks */
    int tie; /* 1 + the index of an embedding layer whose table (units, in) is this layer's
              * kernel, transposed (GPT-2's LM head is wte^T); 0: a kernel of its own */
} DenseSpec;

typedef struct {
    int filters;
    int kh, kw;
    int stride;
    PadMode pad;       /* VALID or TF SAME ... */
    bool explicit_pad; /* ... or symmetric explicit padding (Caffe, Keras ZeroPadding) */
    int pad_h, pad_w;
    int groups;
    bool no_bias;      /* conv followed by batch norm (Caffe ResNets) */
} ConvSpec;

typedef struct {
    PoolKind kind;
    int win;
    int stride;
    PadMode pad;
    bool explicit_pad; /* symmetric explicit padding ... */
    int pad_h, pad_w;
    bool ceil_mode;    /* ... with Caffe's ceil rounding of the output size */
    bool global;       /* window = the whole input, output (C, 1, 1) */
} PoolSpec;

typedef struct {
    int hidden;
    float forget_bias; /* LSTM: TF adds 1.0 to the forget gate */
    bool last_only;    /* output only h at the last step (rnn-benchmarks), else every step */
} RecurrentSpec;

typedef struct {
    float eps, momentum; /* Keras defaults 1e-3, 0.99 */
} BnSpec;

typedef struct {
    int size;
    float alpha, beta, k; /* Caffe AlexNet: 5, 1e-4, 0.75, 1 */
} LrnSpec;

typedef struct {
    float rate;
} DropoutSpec;

typedef struct {
    int vocab, dim;
    bool frozen;  /* pretrained, not trained ("static" word vectors): state, not a parameter */
    bool decayed; /* in the weight-decay prefix (GPT-2 decays every 2-D tensor; Keras none) */
    bool tp_split; /* one tensor-parallel rank's block of vocab rows of a larger table
                    * (vocabulary-parallel): ids outside the block look up zeros, and a
                    * TP_SUM after the layer adds the group's blocks into the whole lookup */
} EmbeddingSpec;

typedef struct {
    float eps; /* PyTorch nn.LayerNorm: 1e-5 */
} LayerNormSpec;

/* Self-attention over a sequence (T, D) (Vaswani et al.; GPT-2's attn, BERT's): heads
 * divides D. qkv = x Wqkv + b (Wqkv (D, 3D), its columns head by head [q k v], Megatron's
 * order, so each head's q, k and v are matrices at a fixed stride); per head softmax(q k^T
 * / sqrt(D / heads)) (causal: each step sees itself and earlier steps), dropout on those
 * weights, times v; the heads' contexts side by side, times Wproj (D, D) + b. */
typedef struct {
    int heads;
    bool causal;
    float dropout;         /* on the attention weights (GPT-2, BERT: 0.1; llm.c: 0) */
    float proj_init_scale; /* Wproj's N(0, s) (GPT-2: 0.02 / sqrt(2 layers)); 0: init_scale */
    int shards;            /* tensor parallel (Megatron's ParallelAttention): the layer is one of
                            * `shards` ranks, holding heads / shards heads: Wqkv's (D, 3D / shards)
                            * columns and Wproj's (D / shards, D) rows of them. Its output is
                            * that rank's partial sum, which the ranks' allreduce completes.
                            * 0 or 1: the whole layer */
    bool no_proj_bias;     /* the projection's bias is left out (a TP_SUM layer adds it after the
                            * ranks' sum: Megatron's row-parallel bias) */
    bool padding_mask;     /* the keys whose token (the model's input id at that step) is pad_id
                            * get no weight (HF's attention_mask of an encoder's padded batch) */
    int pad_id;
} AttentionSpec;

/* LAYER_TP_COPY, LAYER_TP_SUM: the tensor-parallel group's size, and (TP_SUM) whether a bias
 * of the output's width is added after the sum. */
typedef struct {
    int ranks;
    bool bias;
} TensorParallelSpec;

typedef struct {
    int positions;    /* rows of the table (GPT-2's n_positions 1024); a sequence uses its first T */
    bool token_types; /* BERT's token-type table instead: every step adds row 0 (single-segment
                       * inputs); `positions` is the number of types (2) */
} PositionSpec;

typedef struct {
    float rho, beta; /* target mean activation, penalty weight */
} SparsitySpec;

typedef struct {
    LayerKind kind;
    char name[LAYER_NAME_MAX];
    int inputs[LAYER_MAX_INPUTS]; /* producing layers; -1 = the model input */
    int ninputs;                  /* 0 means 1 (inputs[0]) */
    int act;                      /* ActKind or ACTIVATION_NONE (dense, conv, bn, add, activation) */
    InitKind init;                /* weight initializer; biases and betas start at 0, gammas at 1 */
    float init_scale;             /* INIT_UNIFORM / INIT_NORMAL */
    bool no_decay;                /* exclude the kernel from L2 weight decay */
    union {
        DenseSpec dense;
        ConvSpec conv;
        PoolSpec pool;
        RecurrentSpec rnn;  /* LAYER_LSTM, LAYER_RNN */
        BnSpec bn;
        LrnSpec lrn;
        DropoutSpec dropout;
        EmbeddingSpec embed;
        SparsitySpec sparsity;
        LayerNormSpec ln;
        AttentionSpec attn;
        PositionSpec pos;
        TensorParallelSpec tp;
    } u;
} LayerSpec;

typedef enum {
    LOSS_SOFTMAX_XENT, /* integer labels, mean over the batch (per time step for sequences) */
    LOSS_MSE,          /* mean over batch and features (Keras 'mse') */
    LOSS_SSE,          /* summed squared error (rnn-benchmarks) */
    LOSS_HALF_SSE_MEAN /* sum of squared errors / (2 * batch) (UFLDL autoencoder) */
} LossKind;

typedef enum { OPT_SGD, OPT_MOMENTUM, OPT_RMSPROP, OPT_ADAM, OPT_ADAMW } OptKind;

typedef enum {
    SCHED_CONSTANT,
    SCHED_STEP,          /* lr * factor^k after each of the boundaries (epochs) */
    SCHED_WARMUP_STEP    /* Horovod/Goyal: linear warm-up from lr/size, then steps */
} SchedKind;

enum { SCHED_MAX_BOUNDARIES = 8 };

typedef struct {
    SchedKind kind;
    float warmup_epochs;                 /* SCHED_WARMUP_STEP */
    float warmup_from;                   /* warm-up starts at lr * warmup_from */
    int nboundaries;
    float boundaries[SCHED_MAX_BOUNDARIES]; /* epochs at which lr is multiplied ... */
    float factors[SCHED_MAX_BOUNDARIES];    /* ... by these (of the base lr) */
} ScheduleSpec;

typedef struct {
    OptKind kind;
    float lr;
    float rho, eps;      /* RMSprop; eps also Adam */
    float momentum;      /* MOMENTUM */
    bool nesterov;
    float beta1, beta2;  /* ADAM, ADAMW */
    float weight_decay;  /* Keras l2(wd) on kernels: adds wd * sum w^2 to the loss; ADAMW:
                          * PyTorch's decoupled decay of the decayed tensors */
    float clip_norm;     /* > 0: gradients clipped to this global norm (clip_grad_norm_) */
    ScheduleSpec schedule;
} OptSpec;

/* Where the samples come from: a seeded synthetic generator with the original data set's
 * shapes (the suite's data sets cannot be had offline), or a real data set. */
typedef enum {
    DATA_EXPRESSION,    /* P1B1: gene-expression-like rows in [0,1]; target = input */
    DATA_IMAGES,        /* convnet-benchmarks: N(0, 0.1) pixels, uniform random labels */
    DATA_SEQUENCE,      /* rnn-benchmarks: U[0,1) inputs (T, B, F) and targets (B, H) */
    DATA_CLASSES,       /* labelled vectors with class structure (P3B1-like, seed 002) */
    DATA_TOKENS,        /* integer token sequences with labels (TextCNN) */
    DATA_FASHION_MNIST, /* the real Fashion-MNIST (Debian dataset-fashion-mnist) */
    DATA_MASKED_TOKENS, /* a masked LM's batches (BERT): 15% of the positions scored, the rest
                         * labelled XENT_IGNORE; of the scored, 80% show the mask id (the
                         * vocabulary's last), 10% a random token, 10% their own */
    DATA_TEXT_BYTES     /* real text as bytes (a byte-level LM): windows of T bytes, each step
                         * labelled with the next byte (run --epochs; dataset.h). Timing runs
                         * take seeded token streams of the same shape */
} DataKind;

/* Models that are not layer networks: their plan is built by their own expansion.
 * FISTA (Beck & Teboulle 2009; seed 002): sparse codes S of samples X over a dictionary D
 * (atoms x features, unit-norm rows), minimising 1/2 ||S D - X||^2 + lambda ||S||_1; one
 * plan execution is one FISTA iteration (gradient step from the extrapolated point,
 * shrinkage, momentum on the last two iterates) followed by the objective. */
typedef enum { ALGO_NETWORK, ALGO_FISTA } Algorithm;

typedef struct {
    int atoms;
    float lambda;
} FistaSpec;

/* An output of a multi-task model (P3B1): the layer whose output is scored and its
 * number of classes. Plans are built for one head at a time (plan_build_head); they all
 * share one parameter layout. */
typedef struct {
    int layer;
    int classes;
    const char *name;
    int train_samples, test_samples; /* of the head's own data set (P3B1's tasks differ) */
} HeadSpec;

enum { MODEL_MAX_HEADS = 4 };

typedef struct ModelSpec {
    char name[MODEL_NAME_MAX]; /* CLI name: lower-case, hyphenated */
    const char *title;         /* one line for people */
    const char *source;        /* where the architecture comes from */
    const char *family;        /* "CNN", "RNN", "MLP", "AE" (the Cookbook's type column), "Transformer" */
    const char *origin;        /* "suite" (seed 000), "cookbook" (003), "ufldl" (002), "hwbench" (004),
                                * "transformer" (the models machines are bought to train today) */
    bool demo;                 /* one of the three models the main job calibrates and validates */
    const char *quirk;         /* a reference implementation's quirk kept in the model (NULL: none):
                                * the convnet-benchmarks' ReLU on the output layer; zoo_without_quirk */
    Shape input;
    bool input_ids;            /* the input is int32 token ids (embedding models) */
    bool autoencoder;          /* the target is the input */
    const LayerSpec *layers;
    int nlayers;
    LossKind loss;
    int classes;               /* LOSS_SOFTMAX_XENT */
    HeadSpec heads[MODEL_MAX_HEADS]; /* multi-task models; nheads 0: the last layer */
    int nheads;
    OptSpec opt;
    DataKind data;
    int default_batch;
    int epochs;                /* of the reference run configuration (0: not defined) */
    int train_samples;         /* data set size of the reference run (0: not defined) */
    int test_samples;          /* held-out samples the reference evaluates */
    Algorithm algorithm;       /* ALGO_NETWORK for every layer model */
    FistaSpec fista;
    /* one tensor-parallel rank's share of a model (transformer_tensor_parallel): the whole
     * model it is a share of, whose initial parameters each rank slices its own from, and
     * the ranks it is split over; NULL and 0 otherwise */
    const struct ModelSpec *tp_whole;
    int tp_ranks;
    /* the whole vocabulary when the LM head's columns are split over the tensor-parallel
     * group (each rank's ceil(classes / tp_ranks), the last one's padded): the loss is then
     * the vocabulary-parallel cross-entropy; 0 otherwise */
    int tp_vocab;
} ModelSpec;

/* Inputs of layer l (count, and the i-th; ninputs 0 means one input). */
int layer_ninputs(const LayerSpec *l);
int shape_count(const Shape *s); /* elements per sample */
void shape_str(const Shape *s, char *out, int n);
const char *layer_kind_name(LayerKind k);
bool layer_kind_from_name(const char *name, LayerKind *out);

/* The zoo: lookup by CLI name (NULL if unknown) and the list of all models. */
const ModelSpec *zoo_find(const char *name);
int zoo_count(void);
const ModelSpec *zoo_get(int i);
/* "p1b1, alexnet-owt, ..." — for error messages. */
void zoo_names(char *out, int n);
/* A zoo model with its reference quirk removed (the output layer linear), named
 * "NAME-no-quirk"; NULL if m has no quirk. Built once, lives until the process ends. */
const ModelSpec *zoo_without_quirk(const ModelSpec *m);
/* "alexnet-owt, ..." — the zoo models that have a quirk, for error messages. */
void zoo_quirk_names(char *out, int n);

#endif
