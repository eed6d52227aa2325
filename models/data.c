/* models/data.c — parameter initialisers and the seeded synthetic data sets.
 *
 * The suite's data sets (CANDLE expression profiles, ImageNet) cannot be had offline, so
 * each model gets a generator with the original per-sample shape and value range (GSL's
 * MT19937, seeded: the same seed gives the same bytes on every machine).
 */
#include <assert.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "models/train.h"

static gsl_rng *rng_new(uint64_t seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    assert(r);
    gsl_rng_set(r, (unsigned long)seed);
    return r;
}

void params_init(const Plan *p, float *params, uint64_t seed)
{
    gsl_rng *r = rng_new(seed);
    for (int i = 0; i < p->nparams; i++) {
        const PlanParam *pp = &p->params[i];
        float *w = params + pp->ref.offset / sizeof(float);
        if (pp->is_bias) {
            memset(w, 0, pp->count * sizeof(float));
            continue;
        }
        switch (pp->init) {
        case INIT_GLOROT_UNIFORM: { /* Keras default: U(-l, l), l = sqrt(6 / (fan_in + fan_out)) */
            double l = sqrt(6.0 / (pp->fan_in + pp->fan_out));
            for (size_t j = 0; j < pp->count; j++)
                w[j] = (float)gsl_ran_flat(r, -l, l);
            break;
        }
        case INIT_HE_NORMAL: { /* N(0, 2 / fan_in): keeps ReLU activations at unit scale */
            double sd = sqrt(2.0 / pp->fan_in);
            for (size_t j = 0; j < pp->count; j++)
                w[j] = (float)gsl_ran_gaussian_ziggurat(r, sd);
            break;
        }
        case INIT_UNIFORM:
            for (size_t j = 0; j < pp->count; j++)
                w[j] = (float)gsl_ran_flat(r, -pp->init_scale, pp->init_scale);
            break;
        }
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

void data_generate(const Plan *p, char *data, int nbatches, size_t stride, uint64_t seed)
{
    const ModelSpec *m = p->model;
    gsl_rng *r = rng_new(seed);
    int per_sample = shape_count(&m->input), B = p->batch;
    float *mean = NULL, *v = NULL;
    if (m->data == DATA_EXPRESSION) {
        mean = malloc((size_t)per_sample * sizeof *mean);
        v = malloc((size_t)8 * per_sample * sizeof *v);
        assert(mean && v);
        for (int j = 0; j < per_sample; j++)
            mean[j] = (float)gsl_ran_flat(r, 0.2, 0.8);
        for (size_t j = 0; j < (size_t)8 * per_sample; j++)
            v[j] = (float)gsl_ran_gaussian_ziggurat(r, 0.04);
    }
    for (int b = 0; b < nbatches; b++) {
        char *base = data + (size_t)b * stride;
        float *x = (float *)(base + p->input.offset);
        size_t n = (size_t)B * per_sample;
        switch (m->data) {
        case DATA_EXPRESSION: /* the target is the input (autoencoder) */
            gen_expression(r, x, B, per_sample, mean, v);
            break;
        case DATA_IMAGES: { /* convnet-benchmarks: N(0, 0.1) pixels; labels uniform over classes */
            for (size_t i = 0; i < n; i++)
                x[i] = (float)gsl_ran_gaussian_ziggurat(r, 0.1);
            int32_t *labels = (int32_t *)(base + p->target.offset);
            for (int i = 0; i < B; i++)
                labels[i] = (int32_t)gsl_rng_uniform_int(r, (unsigned long)m->classes);
            break;
        }
        case DATA_SEQUENCE: { /* rnn-benchmarks: np.random.random inputs and targets */
            for (size_t i = 0; i < n; i++)
                x[i] = (float)gsl_rng_uniform(r);
            float *y = (float *)(base + p->target.offset);
            size_t ny = p->target.bytes / sizeof(float);
            for (size_t i = 0; i < ny; i++)
                y[i] = (float)gsl_rng_uniform(r);
            break;
        }
        }
    }
    free(mean);
    free(v);
    gsl_rng_free(r);
}
