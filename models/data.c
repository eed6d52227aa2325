/* models/data.c — tensor initialisers and the seeded synthetic data sets.
 *
 * The suite's data sets (CANDLE expression profiles and pathology reports, ImageNet)
 * cannot be had offline, so each model gets a generator with the original per-sample
 * shape and value range (GSL's MT19937, seeded: the same seed gives the same bytes on
 * every machine). Each generator says what it imitates.
 */
#include <assert.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "models/dataset.h"
#include "models/train.h"

static gsl_rng *rng_new(uint64_t seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    assert(r);
    gsl_rng_set(r, (unsigned long)seed);
    return r;
}

/* The distribution of a kernel's or table's values. */
static double draw_kernel(gsl_rng *r, const PlanParam *pp)
{
    switch (pp->init) {
    case INIT_GLOROT_UNIFORM: { /* Keras default: U(-l, l), l = sqrt(6 / (fan_in + fan_out)) */
        const double l = sqrt(6.0 / (pp->fan_in + pp->fan_out));
        return gsl_ran_flat(r, -l, l);
    }
    case INIT_HE_NORMAL: /* N(0, 2 / fan_in): keeps ReLU activations at unit scale */
        return gsl_ran_gaussian_ziggurat(r, sqrt(2.0 / pp->fan_in));
    case INIT_UNIFORM: return gsl_ran_flat(r, -pp->init_scale, pp->init_scale);
    case INIT_NORMAL: return gsl_ran_gaussian_ziggurat(r, pp->init_scale);
    }
    return 0;
}

/* Drawn: kernels ("kernel", attention's "qkv_kernel" and "proj_kernel") and tables; the
 * others start from their fill value. */
static bool drawn(const PlanParam *pp)
{
    const size_t len = strlen(pp->role);
    return (len >= 6 && strcmp(pp->role + len - 6, "kernel") == 0) || strcmp(pp->role, "embeddings") == 0;
}

void params_draw(const Plan *p, uint64_t seed, ParamPut put, void *ctx)
{
    gsl_rng *r = rng_new(seed);
    for (int i = 0; i < p->nparams; i++) {
        const PlanParam *pp = &p->params[i];
        const bool draw = drawn(pp);
        for (size_t j = 0; j < pp->count; j++)
            put(i, j, draw ? (float)draw_kernel(r, pp) : pp->fill, ctx);
    }
    gsl_rng_free(r);
}

void params_init(const Plan *p, float *params, float *state, uint64_t seed)
{
    gsl_rng *r = rng_new(seed);
    for (int i = 0; i < p->nparams; i++) {
        const PlanParam *pp = &p->params[i];
        float *w = (pp->learnable ? params : state) + pp->ref.offset / sizeof(float);
        const bool draw = drawn(pp);
        for (size_t j = 0; j < pp->count; j++) /* params_draw's values, without a call each */
            w[j] = draw ? (float)draw_kernel(r, pp) : pp->fill;
    }
    gsl_rng_free(r);
}

/* P1B1 stand-in: expression rows in [0,1] (the reference min-max scales every column)
 * with the structure an autoencoder can learn: x = clamp(mean_j + U_i . V_j + noise),
 * rank 8, so the 600-unit bottleneck has something real to compress. */
static void gen_expression(gsl_rng *r, float *x, int rows, int features, const float *mean, const float *v)
{
    enum { RANK = 8 };
    for (int i = 0; i < rows; i++) {
        double u[RANK];
        for (int k = 0; k < RANK; k++)
            u[k] = gsl_ran_gaussian_ziggurat(r, 1.0);
        float *row = x + (size_t)i * features;
        for (int j = 0; j < features; j++) {
            double s = mean[j] + 0.02 * gsl_ran_gaussian_ziggurat(r, 1.0);
            for (int k = 0; k < RANK; k++)
                s += u[k] * v[(size_t)k * features + j];
            row[j] = (float)(s < 0 ? 0 : s > 1 ? 1 : s);
        }
    }
}

/* P3B1 / seed-002 stand-in: sparse non-negative feature vectors (about 70% zeros, values
 * up to ~0.7, as measured on P3B1's files) whose non-zero pattern depends on the class, so
 * a classifier has something to learn; labels balanced by construction (i mod classes). */
static void gen_classes(gsl_rng *r, float *x, int32_t *labels, int rows, int features, int classes, int first)
{
    for (int i = 0; i < rows; i++) {
        int c = (first + i) % (classes > 0 ? classes : 1);
        if (labels)
            labels[i] = c;
        float *row = x + (size_t)i * features;
        for (int j = 0; j < features; j++) {
            /* each class prefers a band of features: higher odds of a non-zero there */
            bool band = classes > 0 && (j * classes / features) == c;
            double p_nonzero = band ? 0.6 : 0.25;
            row[j] = gsl_rng_uniform(r) < p_nonzero ? (float)gsl_ran_flat(r, 0.05, 0.7) : 0.0f;
        }
    }
}

/* The vocabulary of a token model: the rows of its first (embedding) layer. */
static int token_vocab(const ModelSpec *m)
{
    if (m->tp_whole) /* a tensor-parallel share reads the whole model's tokens */
        m = m->tp_whole;
    return m->layers[0].kind == LAYER_EMBEDDING ? m->layers[0].u.embed.vocab : 2;
}

/* A token uniform over the vocabulary, or with a pad id (>= 0) over the others: drawn from
 * vocab - 1 values, those from the pad id on moved up by one. */
static int32_t draw_token(gsl_rng *r, int vocab, int pad)
{
    if (pad < 0)
        return (int32_t)gsl_rng_uniform_int(r, (unsigned long)vocab);
    const int32_t t = (int32_t)gsl_rng_uniform_int(r, (unsigned long)(vocab - 1));
    return t >= pad ? t + 1 : t;
}

/* The token id an attention's padding mask masks (the first such layer's), or -1. */
static int pad_id_of(const ModelSpec *m)
{
    for (int i = 0; i < m->nlayers; i++)
        if (m->layers[i].kind == LAYER_ATTENTION && m->layers[i].u.attn.padding_mask)
            return m->layers[i].u.attn.pad_id;
    return -1;
}

/* A masked LM's batch of B sequences of T steps, time-major (ids[t * B + b]), as BERT
 * masks them (model.h). With a pad id (a model whose attention masks padding): each
 * sequence is L steps long, L uniform in [ceil(T / 2), T], and padded to T with the pad
 * id, unscored; no other token is the pad id. */
static void gen_masked_tokens(gsl_rng *r, int32_t *ids, int32_t *labels, int B, int T, int vocab, int pad)
{
    int32_t *len = NULL;
    if (pad >= 0) {
        len = malloc((size_t)B * sizeof *len);
        assert(len);
        for (int b = 0; b < B; b++)
            len[b] = (T + 1) / 2 + (int32_t)gsl_rng_uniform_int(r, (unsigned long)(T - (T + 1) / 2 + 1));
    }
    for (size_t i = 0; i < (size_t)B * T; i++) {
        labels[i] = XENT_IGNORE;
        if (len && (int)(i / (size_t)B) >= len[i % (size_t)B]) {
            ids[i] = pad;
            continue;
        }
        const int32_t token = draw_token(r, vocab, pad);
        ids[i] = token;
        if (gsl_rng_uniform(r) >= 0.15)
            continue;
        labels[i] = token;
        const double u = gsl_rng_uniform(r);
        ids[i] = u < 0.8 ? vocab - 1 : u < 0.9 ? draw_token(r, vocab, pad) : token;
    }
    free(len);
}

/* Token sequences with a learnable class signal: sample i has class (first_class + i) mod
 * classes, and each of its words comes, with odds 0.3, from that class's band of the
 * vocabulary, otherwise uniformly from all of it. */
static void gen_tokens(gsl_rng *r, int32_t *ids, int32_t *labels, int n, int per, int vocab, int classes,
                       int first_class)
{
    int band = classes > 0 ? vocab / classes : vocab;
    for (int i = 0; i < n; i++) {
        int c = classes > 0 ? (first_class + i) % classes : 0;
        labels[i] = c;
        for (int j = 0; j < per; j++) {
            bool in_band = band > 0 && gsl_rng_uniform(r) < 0.3;
            ids[(size_t)i * per + j] = in_band ? (int32_t)(c * band + (int)gsl_rng_uniform_int(r, (unsigned long)band))
                                               : (int32_t)gsl_rng_uniform_int(r, (unsigned long)vocab);
        }
    }
}

/* The timing runs' generator: one random stream over the batches in order, so a batch's
 * values depend on every batch before it. */
typedef struct {
    gsl_rng *r;
    float *mean, *v; /* DATA_EXPRESSION: the features' means and the samples' basis */
} DataGen;

static void datagen_init(DataGen *g, const Plan *p, uint64_t seed)
{
    const ModelSpec *m = p->model;
    const int per_sample = shape_count(&m->input);
    memset(g, 0, sizeof *g);
    g->r = rng_new(seed);
    if (m->data == DATA_EXPRESSION) {
        g->mean = malloc((size_t)per_sample * sizeof *g->mean);
        g->v = malloc((size_t)8 * per_sample * sizeof *g->v);
        assert(g->mean && g->v);
        for (int j = 0; j < per_sample; j++)
            g->mean[j] = (float)gsl_ran_flat(g->r, 0.2, 0.8);
        for (size_t j = 0; j < (size_t)8 * per_sample; j++)
            g->v[j] = (float)gsl_ran_gaussian_ziggurat(g->r, 0.04);
    }
}

static void datagen_free(DataGen *g)
{
    free(g->mean);
    free(g->v);
    gsl_rng_free(g->r);
}

/* Batch b (the b-th of the stream) into base, laid out like ARENA_INPUT. */
static void datagen_batch(DataGen *g, const Plan *p, char *base, int b)
{
    const ModelSpec *m = p->model;
    gsl_rng *r = g->r;
    const int B = p->batch;
    const size_t n = (size_t)B * shape_count(&m->input);
    const bool class_target = m->loss == LOSS_SOFTMAX_XENT;
    float *x = (float *)(base + p->input.offset);
    int32_t *labels = class_target ? (int32_t *)(base + p->target.offset) : NULL;
    size_t nlabels = class_target ? p->target.bytes / sizeof(int32_t) : 0;
    switch (m->data) {
    case DATA_EXPRESSION: /* the target is the input (autoencoder) */
        gen_expression(r, x, B, shape_count(&m->input), g->mean, g->v);
        break;
    case DATA_CLASSES:
        gen_classes(r, x, labels, B, shape_count(&m->input), class_target ? p->classes : 0, b * B);
        break;
    case DATA_TOKENS: /* token ids, uniform over the vocabulary of the first layer */
    case DATA_TEXT_BYTES: { /* timing runs of a byte-level LM: the same shape, seeded bytes */
        int vocab = token_vocab(m);
        int32_t *ids = (int32_t *)x;
        for (size_t i = 0; i < n; i++)
            ids[i] = (int32_t)gsl_rng_uniform_int(r, (unsigned long)vocab);
        break;
    }
    case DATA_MASKED_TOKENS: /* BERT's masking of uniform token streams (model.h) */
        assert(labels && nlabels == n);
        gen_masked_tokens(r, (int32_t *)x, labels, B, (int)(n / (size_t)B), token_vocab(m), pad_id_of(m));
        break;
    case DATA_SEQUENCE: /* rnn-benchmarks: np.random.random inputs */
        for (size_t i = 0; i < n; i++)
            x[i] = (float)gsl_rng_uniform(r);
        break;
    case DATA_IMAGES: /* convnet-benchmarks: N(0, 0.1) pixels */
    case DATA_FASHION_MNIST: /* timing runs of the real-data models: same shape, synthetic values */
    default:
        for (size_t i = 0; i < n; i++)
            x[i] = (float)gsl_ran_gaussian_ziggurat(r, 0.1);
        break;
    }
    if (labels && m->data != DATA_CLASSES && m->data != DATA_MASKED_TOKENS) /* uniform random classes */
        for (size_t i = 0; i < nlabels; i++)
            labels[i] = (int32_t)gsl_rng_uniform_int(r, (unsigned long)p->classes);
    if (!class_target && p->target.offset != p->input.offset) { /* vector targets: U[0,1) */
        float *y = (float *)(base + p->target.offset);
        for (size_t i = 0; i < p->target.bytes / sizeof(float); i++)
            y[i] = (float)gsl_rng_uniform(r);
    }
}

void data_generate(const Plan *p, char *data, int nbatches, size_t stride, uint64_t seed)
{
    DataGen g;
    datagen_init(&g, p, seed);
    for (int b = 0; b < nbatches; b++)
        datagen_batch(&g, p, data + (size_t)b * stride, b);
    datagen_free(&g);
}

void data_generate_each(const Plan *p, int nbatches, uint64_t seed, char *batch,
                        void (*take)(int b, const char *batch, void *ctx), void *ctx)
{
    DataGen g;
    datagen_init(&g, p, seed);
    for (int b = 0; b < nbatches; b++) {
        datagen_batch(&g, p, batch, b);
        take(b, batch, ctx);
    }
    datagen_free(&g);
}

/* ---- synthetic data sets for epoch training (fit.c) ---- */

int data_synthetic(const ModelSpec *m, int classes, int n, int first_class, uint64_t seed, Dataset *ds,
                   char *err, size_t errlen)
{
    memset(ds, 0, sizeof *ds);
    int per = shape_count(&m->input);
    ds->n = n;
    ds->shape = m->input;
    ds->x_type = m->input_ids ? DS_I32 : DS_F32;
    ds->x = malloc((size_t)n * per * sizeof(float));
    bool labels = m->loss == LOSS_SOFTMAX_XENT;
    ds->target = m->autoencoder ? TARGET_INPUT : labels ? TARGET_CLASS : TARGET_VECTOR;
    ds->classes = classes;
    if (!ds->x) {
        snprintf(err, errlen, "%s: cannot allocate %.2f GiB for a synthetic data set of %d samples", m->name,
                 (double)n * per * 4 / 1073741824.0, n);
        return -1;
    }
    if (m->data == DATA_MASKED_TOKENS || (m->input_ids && m->input.rank == 2)) {
        free(ds->x);
        ds->x = NULL;
        snprintf(err, errlen, "%s: a language model trains on its token stream (dlperf run --steps), not on a "
                              "data set of epochs", m->name);
        return -1;
    }
    gsl_rng *r = rng_new(seed);
    switch (m->data) {
    case DATA_EXPRESSION: {
        float *mean = malloc((size_t)per * sizeof *mean), *v = malloc((size_t)8 * per * sizeof *v);
        assert(mean && v);
        gsl_rng *rs = rng_new(seed ^ 0x5eed); /* the structure is shared by train and test sets */
        for (int j = 0; j < per; j++)
            mean[j] = (float)gsl_ran_flat(rs, 0.2, 0.8);
        for (size_t j = 0; j < (size_t)8 * per; j++)
            v[j] = (float)gsl_ran_gaussian_ziggurat(rs, 0.04);
        gsl_rng_free(rs);
        gen_expression(r, ds->x, n, per, mean, v);
        free(mean);
        free(v);
        break;
    }
    case DATA_CLASSES:
        ds->t_count = 1;
        ds->t = malloc((size_t)n * sizeof(int32_t));
        assert(ds->t);
        gen_classes(r, ds->x, ds->t, n, per, classes, first_class);
        break;
    case DATA_TOKENS: { /* sentences whose class shows in which words they use */
        ds->t_count = 1;
        ds->t = malloc((size_t)n * sizeof(int32_t));
        assert(ds->t);
        gen_tokens(r, (int32_t *)ds->x, ds->t, n, per, token_vocab(m), classes, first_class);
        break;
    }
    default: {
        float *x = ds->x;
        for (size_t i = 0; i < (size_t)n * per; i++)
            x[i] = (float)gsl_ran_gaussian_ziggurat(r, 0.1);
        if (labels) {
            ds->t_count = 1;
            ds->t = malloc((size_t)n * sizeof(int32_t));
            assert(ds->t);
            for (int i = 0; i < n; i++)
                ((int32_t *)ds->t)[i] = (int32_t)gsl_rng_uniform_int(r, (unsigned long)classes);
        }
        break;
    }
    }
    if (ds->target == TARGET_INPUT)
        ds->t_count = per;
    snprintf(ds->source, sizeof ds->source, "synthetic (%s generator, seed %llu, %d samples)", m->name,
             (unsigned long long)seed, n);
    gsl_rng_free(r);
    return 0;
}
