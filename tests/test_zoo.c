/* tests/test_zoo.c — every zoo model end to end: it really trains (the loss of one fixed
 * batch falls within a few steps, at a reduced batch), its JSON model file builds the
 * identical plan and trains to the identical losses, P3B1's heads share one parameter
 * layout, ResNet-50's Horovod learning-rate schedule, and what each plan mode contains. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/model_json.h"
#include "models/plan.h"
#include "models/train.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* |got - ref| <= atol + rtol * |ref| (STYLE habit 9) */
static bool close_to(double got, double ref, double atol, double rtol)
{
    return fabs(got - ref) <= atol + rtol * fabs(ref);
}

/* ---- every zoo model lowers the loss of a fixed batch ------------------------------
 *
 * The trainer gets one batch (nbatches 1) and every step trains on it again, so the loss
 * must fall: min(last 3 losses) < first loss. Batch: min(default, 4), with the exceptions
 * in the table; steps: the smallest count that held for seeds 1, 7 and 42 (except where
 * the table says), with room; the test uses TRAIN_SEED. Every step's loss must be finite. */

enum { TRAIN_SEED = 1, DEFAULT_STEPS = 5, MAX_STEPS = 40 };

typedef struct {
    const char *name;
    int batch; /* 0: min(default, 4) */
    int steps;
    const char *why;
    int context; /* > 0: a sequence model trained at this many steps (the reduced size) */
} TrainCase;

static const TrainCase train_cases[] = {
    /* ImageNet-size CNNs at batch 2 (time: vgg19 takes ~1.8 s a step at batch 2 on two
     * cores). One SGD step at lr 0.01 nearly fits two samples, so step 2 is already far
     * below step 1; later steps overshoot (losses of 30-130 at step 3 are normal here) and
     * the ReLU-output convnet-benchmarks models can die: vgg11's first step overshoots at
     * 3 of 8 seeds tried (3, 42, 2017 of 1, 2, 3, 5, 7, 11, 42, 2017) and its 1000 ReLU
     * logits then stay at ~0 (loss ~6.96 from step 3 on: 2017 and 42 fail this check, 3
     * passes by 2%); vgg19 at seed 42 reaches NaN at step 7. Only the first steps are
     * checked, before that chaos could depend on rounding. */
    {.name = "alexnet-owt", .batch = 2, .steps = 4, .why = "ImageNet size"},
    {.name = "googlenet", .batch = 2, .steps = 4, .why = "ImageNet size"},
    {.name = "overfeat", .batch = 2, .steps = 4, .why = "ImageNet size"},
    {.name = "vgg11", .batch = 2, .steps = 4, .why = "ImageNet size"},
    {.name = "vgg16", .batch = 2, .steps = 4, .why = "ImageNet size"},
    {.name = "vgg19", .batch = 2, .steps = 4, .why = "ImageNet size"},
    {.name = "alexnet", .batch = 2, .steps = 4, .why = "ImageNet size"},
    {.name = "resnet50", .batch = 2, .steps = 4, .why = "ImageNet size"},
    {.name = "resnet50-caffe", .batch = 2, .steps = 4, .why = "ImageNet size"},
    {.name = "resnet101", .batch = 2, .steps = 4, .why = "ImageNet size"},
    {.name = "resnet152", .batch = 2, .steps = 4, .why = "ImageNet size"},
    /* RMSprop's first steps on 244 M parameters overshoot (0.29 -> 2862 -> 14.6 -> 338 ->
     * 3.6 at seed 42) before the running average of g^2 catches up; below the start from
     * step 8-9 (seeds 1, 7, 42) */
    {.name = "p1b1", .batch = 0, .steps = 12, .why = "RMSprop spikes first"},
    /* lr 0.1 with momentum 0.95 from the first step (UFLDL's minFuncSGD runs the first 20
     * iterations at momentum 0.5): the loss climbs to ~30 and is back below the start
     * after 15-18 steps */
    {.name = "ufldl-cnn", .batch = 0, .steps = 20, .why = "momentum 0.95 overshoots first"},
    /* rnn-benchmarks' loss is the SUM of squared errors over batch and 1024 units with SGD
     * 0.01 (MODELS.md 4): a step moves the tanh pre-activations by ~lr * batch * |x|^2
     * (~13 at batch 4), which saturates the units; from batch 2 up the loss rises and
     * settles above its start (batch 4: 2240 -> 2490 after 40 steps; batch 2, seed 7:
     * 1073 -> ~1130). The gradients are right (finite differences, and lr 0.001 at batch 4
     * falls: test_rnn_batch4_smaller_lr); the reference's configuration only trains at
     * batch 1. */
    {.name = "rnn", .batch = 1, .steps = 4, .why = "summed loss: lr 0.01 too large from batch 2"},
    /* every parameter, at a reduced context (a step over 1024 tokens takes ~4.3 s for the
     * 124M model and ~13 s for the 355M one on two cores; the positions table is the same) */
    {.name = "gpt2", .batch = 1, .steps = 5, .why = "GPT-2 at context 256", .context = 256},
    {.name = "gpt2-medium", .batch = 1, .steps = 5, .why = "GPT-2 at context 128", .context = 128},
    {.name = "bert-base", .batch = 2, .steps = 5, .why = "BERT-base, 15% of 256 tokens scored"},
    {.name = "vit-b16", .batch = 2, .steps = 5, .why = "ImageNet size"},
};

static const TrainCase *train_case(const ModelSpec *m)
{
    for (size_t i = 0; i < sizeof train_cases / sizeof train_cases[0]; i++)
        if (strcmp(train_cases[i].name, m->name) == 0)
            return &train_cases[i];
    return NULL;
}

/* Trains m at `batch` on one fixed batch for `steps` steps; fills loss[0..steps). */
static void train_fixed_batch(const ModelSpec *m, int batch, int steps, uint64_t seed, double *loss)
{
    Trainer t;
    char err[512];
    if (trainer_init(&t, m, batch, 1, seed, err, sizeof err) != 0)
        fail_msg("%s at batch %d: %s", m->name, batch, err);
    for (int s = 0; s < steps; s++)
        loss[s] = trainer_step(&t, 0, NULL);
    trainer_free(&t);
}

static bool loss_fell(const double *loss, int steps)
{
    double last3 = fmin(loss[steps - 1], fmin(loss[steps - 2], loss[steps - 3]));
    return last3 < loss[0];
}

/* The model's JSON model file (export -> parse), or NULL for algorithms (FISTA has no
 * layers and no model file: 'models --export fista' refuses it). The caller frees it. */
static ModelSpec *model_from_its_file(const ModelSpec *m)
{
    if (m->algorithm != ALGO_NETWORK)
        return NULL;
    char err[512];
    char *text = model_json_export(m);
    assert_non_null(text);
    ModelSpec *f = model_json_parse(text, m->name, err, sizeof err);
    if (!f)
        fail_msg("%s: the exported model does not parse: %s", m->name, err);
    free(text);
    return f;
}

/* Also the second half of the JSON round trip (the plans are compared in
 * test_every_model_round_trips_through_json): the model read back from its file,
 * initialised with the same seed, trains to the same first two losses on the same
 * synthetic batch. Done here, at the batch of this test, so the large models are set up
 * once more rather than twice. */
static void test_every_model_lowers_the_loss(void **state)
{
    enum { FILE_STEPS = 2 };
    int failures = 0;
    double total = 0;
    for (int i = 0; i < zoo_count(); i++) {
        const ModelSpec *zm = zoo_get(i);
        const TrainCase *c = train_case(zm);
        ModelSpec reduced = *zm;
        if (c && c->context > 0) {
            assert_true(zm->input.rank == 2 && c->context < zm->input.d[0]);
            reduced.input.d[0] = c->context;
        }
        const ModelSpec *m = &reduced;
        int batch = c && c->batch ? c->batch : (m->default_batch < 4 ? m->default_batch : 4);
        int steps = c ? c->steps : DEFAULT_STEPS;
        assert_true(steps >= 4 && steps <= MAX_STEPS); /* 4: the last three exclude the first */
        double loss[MAX_STEPS], t0 = now_s();
        train_fixed_batch(m, batch, steps, TRAIN_SEED, loss);
        double dt = now_s() - t0, dt_file = 0;
        bool finite = true;
        for (int s = 0; s < steps; s++)
            finite = finite && isfinite(loss[s]);
        bool ok = finite && loss_fell(loss, steps);
        ModelSpec *f = model_from_its_file(m);
        double lf[FILE_STEPS];
        int differs = -1; /* the first step whose loss differs */
        if (f) {
            double t1 = now_s();
            train_fixed_batch(f, batch, FILE_STEPS, TRAIN_SEED, lf);
            /* the same computation: identical, up to a reduction order that could differ */
            for (int s = FILE_STEPS - 1; s >= 0; s--)
                if (!close_to(lf[s], loss[s], 0, 1e-6))
                    differs = s;
            model_free(f);
            dt_file = now_s() - t1;
        }
        fprintf(stderr, "zoo-train %-16s batch %d, %2d steps %6.2f s (+ model file %5.2f s): loss %.6g -> "
                "min(last 3) %.6g%s%s%s\n", m->name, batch, steps, dt, dt_file, loss[0],
                fmin(loss[steps - 1], fmin(loss[steps - 2], loss[steps - 3])), c ? "  [" : "", c ? c->why : "",
                c ? "]" : "");
        if (!ok) {
            fprintf(stderr, "  FAILED, losses:");
            for (int s = 0; s < steps; s++)
                fprintf(stderr, " %.6g", loss[s]);
            fprintf(stderr, "\n");
            failures++;
        }
        if (differs >= 0)
            fail_msg("%s: step %d loss %.9g from the zoo, %.9g from its model file", m->name, differs + 1,
                     loss[differs], lf[differs]);
        total += dt + dt_file;
    }
    fprintf(stderr, "zoo-train: %d models in %.1f s (with the model-file runs)\n", zoo_count(), total);
    if (failures)
        fail_msg("%d model(s) did not lower the loss of a fixed batch (see the lines above)", failures);
}

/* The companion of the rnn row above: at batch 4 the gradient is a descent direction; only
 * the reference's step size is too large for a summed loss over more than one sample. */
static void test_rnn_batch4_smaller_lr(void **state)
{
    ModelSpec m = *zoo_find("rnn");
    m.opt.lr /= 10;
    double loss[6];
    train_fixed_batch(&m, 4, 6, TRAIN_SEED, loss);
    for (int s = 1; s < 6; s++)
        if (!(loss[s] < loss[0]))
            fail_msg("rnn at batch 4, lr %g: step %d loss %.6g is not below the first %.6g", m.opt.lr, s + 1,
                     loss[s], loss[0]);
}

/* ---- JSON model files: export -> parse builds the same plan and trains identically --- */

static void plans_identical(const char *name, const Plan *a, const Plan *b)
{
    if (a->param_count != b->param_count || a->state_count != b->state_count || a->nops != b->nops ||
        a->nlayers != b->nlayers || a->nparams != b->nparams || a->decay_bytes != b->decay_bytes)
        fail_msg("%s: params %zu/%zu, state %zu/%zu, ops %d/%d, layers %d/%d, tensors %d/%d, decay %zu/%zu "
                 "(zoo/file)", name, a->param_count, b->param_count, a->state_count, b->state_count, a->nops,
                 b->nops, a->nlayers, b->nlayers, a->nparams, b->nparams, a->decay_bytes, b->decay_bytes);
    for (int k = 0; k < ARENA_COUNT; k++)
        if (a->arena_bytes[k] != b->arena_bytes[k])
            fail_msg("%s: arena %s %zu bytes from the zoo, %zu from the file", name, arena_name((ArenaId)k),
                     a->arena_bytes[k], b->arena_bytes[k]);
    for (int i = 0; i < a->nops; i++) {
        char ka[OP_KEY_MAX], kb[OP_KEY_MAX];
        op_key(&a->ops[i].desc, ka);
        op_key(&b->ops[i].desc, kb);
        if (strcmp(ka, kb) != 0)
            fail_msg("%s: op %d is '%s' from the zoo, '%s' from the file", name, i, ka, kb);
        const PlanOp *x = &a->ops[i], *y = &b->ops[i];
        if (x->layer != y->layer || x->nbuf != y->nbuf)
            fail_msg("%s: op %d '%s': layer %d/%d, %d/%d buffers", name, i, ka, x->layer, y->layer, x->nbuf, y->nbuf);
        for (int j = 0; j < x->nbuf; j++)
            if (x->buf[j].arena != y->buf[j].arena || x->buf[j].offset != y->buf[j].offset ||
                x->buf[j].bytes != y->buf[j].bytes)
                fail_msg("%s: op %d '%s' buffer %d differs", name, i, ka, j);
    }
    for (int i = 0; i < a->nparams; i++) {
        const PlanParam *x = &a->params[i], *y = &b->params[i];
        if (x->layer != y->layer || strcmp(x->role, y->role) != 0 || x->ref.arena != y->ref.arena ||
            x->ref.offset != y->ref.offset || x->count != y->count || x->init != y->init ||
            x->fan_in != y->fan_in || x->fan_out != y->fan_out || x->init_scale != y->init_scale ||
            x->fill != y->fill || x->decayed != y->decayed)
            fail_msg("%s: tensor %d (%s of layer %d) differs", name, i, x->role, x->layer);
    }
}

/* export -> parse -> plan at batch 2: the same plan, op for op and byte for byte. */
static void test_every_model_round_trips_through_json(void **state)
{
    int checked = 0;
    for (int i = 0; i < zoo_count(); i++) {
        const ModelSpec *m = zoo_get(i);
        ModelSpec *f = model_from_its_file(m);
        if (!f)
            continue;
        char err[512];
        Plan a, b;
        if (plan_build(m, 2, &a, err, sizeof err) != 0)
            fail_msg("%s: %s", m->name, err);
        if (plan_build(f, 2, &b, err, sizeof err) != 0)
            fail_msg("%s from its model file: %s", m->name, err);
        plans_identical(m->name, &a, &b);
        plan_free(&a);
        plan_free(&b);
        model_free(f);
        checked++;
    }
    assert_true(checked >= zoo_count() - 1); /* all but FISTA */
}

/* ---- P3B1: three heads, one parameter layout ---------------------------------------- */

static void test_p3b1_heads_share_parameters(void **state)
{
    const ModelSpec *m = zoo_find("p3b1");
    assert_non_null(m);
    assert_int_equal(m->nheads, 3);
    static const int classes[] = {13, 2, 4};
    Plan p[3];
    char err[512];
    for (int h = 0; h < 3; h++) {
        if (plan_build_head(m, 2, PLAN_TRAIN, h, &p[h], err, sizeof err) != 0)
            fail_msg("p3b1 head %d: %s", h, err);
        assert_int_equal(p[h].head, h);
        assert_int_equal(p[h].classes, classes[h]);
        /* the scored layer is the head's own, with the task's classes */
        const PlanLayer *out = &p[h].layers[m->heads[h].layer];
        assert_int_equal(m->heads[h].classes, classes[h]);
        assert_int_equal(out->out.rank, 1);
        assert_int_equal(out->out.d[0], classes[h]);
        assert_int_equal(p[h].output.bytes, 2 * classes[h] * sizeof(float));
        assert_int_equal(p[h].output.offset, out->y.offset);
    }
    for (int h = 1; h < 3; h++) {
        assert_int_equal(p[h].nparams, p[0].nparams);
        assert_int_equal(p[h].param_count, p[0].param_count);
        assert_int_equal(p[h].arena_bytes[ARENA_PARAM], p[0].arena_bytes[ARENA_PARAM]);
        assert_int_equal(p[h].arena_bytes[ARENA_STATE], p[0].arena_bytes[ARENA_STATE]);
        for (int i = 0; i < p[0].nparams; i++) {
            const PlanParam *x = &p[0].params[i], *y = &p[h].params[i];
            if (x->layer != y->layer || strcmp(x->role, y->role) != 0 || x->ref.arena != y->ref.arena ||
                x->ref.offset != y->ref.offset || x->ref.bytes != y->ref.bytes || x->count != y->count)
                fail_msg("p3b1: tensor %d (%s of layer %d) at %zu (%zu bytes) in head 0, at %zu (%zu) in head %d",
                         i, x->role, x->layer, x->ref.offset, x->ref.bytes, y->ref.offset, y->ref.bytes, h);
        }
    }
    /* 9,151,219 unique parameters over the three towers (MODELS.md 2.2) */
    assert_int_equal(p[0].param_count, 9151219);
    for (int h = 0; h < 3; h++)
        plan_free(&p[h]);
}

/* ---- ResNet-50: the Horovod schedule ------------------------------------------------ */

static void test_resnet50_schedule(void **state)
{
    const ModelSpec *m = zoo_find("resnet50");
    assert_non_null(m);
    const OptSpec *o = &m->opt;
    const double lr = 0.0125, rtol = 1e-6; /* the constants are floats: 6e-8 relative */
    assert_int_equal(o->schedule.kind, SCHED_WARMUP_STEP);
    assert_true(close_to(o->lr, lr, 0, rtol));
    /* One worker: Horovod warms up from lr / size = lr, so the warm-up is flat. */
    static const struct {
        double epoch, factor;
    } want[] = {
        {0, 1},     {2.5, 1},   {4.999, 1}, {5, 1},     {17, 1},     {29.999, 1}, {30, 0.1},   {45, 0.1},
        {59.999, 0.1}, {60, 0.01}, {79.999, 0.01}, {80, 0.001}, {89.999, 0.001}, {90, 0.001}, {200, 0.001},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        double got = schedule_lr(o, want[i].epoch);
        if (!close_to(got, lr * want[i].factor, 0, rtol))
            fail_msg("resnet50 lr at epoch %g: %.9g, want %.9g", want[i].epoch, got, lr * want[i].factor);
    }
    /* Eight workers (warm-up from lr / 8): linear in the epoch over 5 epochs, then the
     * same steps. */
    OptSpec w = *o;
    w.schedule.warmup_from = 0.125f;
    for (int k = 0; k <= 20; k++) {
        double e = 0.25 * k, got = schedule_lr(&w, e);
        double ref = lr * (0.125 + 0.875 * e / 5.0);
        if (!close_to(got, ref, 0, rtol))
            fail_msg("warm-up from lr/8 at epoch %g: %.9g, want %.9g", e, got, ref);
    }
    assert_true(close_to(schedule_lr(&w, 0), lr / 8, 0, rtol));
    assert_true(close_to(schedule_lr(&w, 4.999), lr * (0.125 + 0.875 * 4.999 / 5), 0, rtol));
    assert_true(close_to(schedule_lr(&w, 5), lr, 0, rtol));
    assert_true(close_to(schedule_lr(&w, 30), lr * 0.1, 0, rtol));
    assert_true(close_to(schedule_lr(&w, 60), lr * 0.01, 0, rtol));
    assert_true(close_to(schedule_lr(&w, 80), lr * 0.001, 0, rtol));

    /* The trainer's clock: the update op gets the rate of the epoch `updates` steps make. */
    Plan p;
    char err[512];
    assert_int_equal(plan_build(m, 2, &p, err, sizeof err), 0);
    assert_int_equal(p.step_counter.bytes, 0); /* no dropout: no state is written */
    void *base[ARENA_COUNT] = {0};
    const double spe = 1000; /* steps per epoch */
    static const struct {
        long updates;
        double factor;
    } at[] = {{0, 1}, {29999, 1}, {30000, 0.1}, {60000, 0.01}, {80000, 0.001}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        plan_step_values(&p, base, at[i].updates, spe);
        const UpdateDesc *u = &p.ops[p.update_op].desc.u.update;
        if (!close_to(u->lr, lr * at[i].factor, 0, rtol) || u->step != at[i].updates + 1)
            fail_msg("after %ld updates: lr %.9g step %ld, want %.9g and %ld", at[i].updates, u->lr, u->step,
                     lr * at[i].factor, at[i].updates + 1);
    }
    plan_free(&p);
}

/* ---- plan modes ---------------------------------------------------------------------- */

static int count_phase(const Plan *p, OpPhase ph)
{
    int n = 0;
    for (int i = 0; i < p->nops; i++)
        n += p->ops[i].desc.phase == ph;
    return n;
}

/* Batch norm normalises with the batch statistics in training plans, with the running
 * statistics in the inference plan. */
static void check_bn_training(const Plan *p, bool training)
{
    int n = 0;
    for (int i = 0; i < p->nops; i++)
        if (p->ops[i].desc.kind == OP_BATCHNORM && p->ops[i].desc.phase == PHASE_FWD) {
            assert_int_equal(p->ops[i].desc.u.bn.training, training);
            n++;
        }
    assert_int_equal(n, 53); /* ResNet-50: 53 batch-norm layers */
}

static void test_resnet50_plan_modes(void **state)
{
    const ModelSpec *m = zoo_find("resnet50");
    char err[512];
    Plan inf, fb, tr;
    assert_int_equal(plan_build_mode(m, 2, PLAN_INFERENCE, &inf, err, sizeof err), 0);
    assert_int_equal(plan_build_mode(m, 2, PLAN_FWD_BWD, &fb, err, sizeof err), 0);
    assert_int_equal(plan_build_mode(m, 2, PLAN_TRAIN, &tr, err, sizeof err), 0);
    assert_int_equal(inf.mode, PLAN_INFERENCE);
    assert_int_equal(fb.mode, PLAN_FWD_BWD);
    assert_int_equal(tr.mode, PLAN_TRAIN);

    /* inference: forward and loss only, no activation gradients */
    assert_int_equal(count_phase(&inf, PHASE_BWD_DATA), 0);
    assert_int_equal(count_phase(&inf, PHASE_BWD_WEIGHTS), 0);
    assert_int_equal(count_phase(&inf, PHASE_UPDATE), 0);
    assert_int_equal(inf.update_op, -1);
    assert_int_equal(inf.arena_bytes[ARENA_ACTGRAD], 0);
    assert_true(count_phase(&inf, PHASE_FWD) > 0);
    check_bn_training(&inf, false);

    /* forward-backward: gradients, no update */
    assert_true(count_phase(&fb, PHASE_BWD_DATA) > 0);
    assert_true(count_phase(&fb, PHASE_BWD_WEIGHTS) > 0);
    assert_int_equal(count_phase(&fb, PHASE_UPDATE), 0);
    assert_int_equal(fb.update_op, -1);
    assert_true(fb.arena_bytes[ARENA_ACTGRAD] > 0);
    assert_int_equal(fb.arena_bytes[ARENA_GRAD], fb.arena_bytes[ARENA_PARAM]);
    check_bn_training(&fb, true);

    /* train: the same and exactly one update, momentum with L2 on the conv/dense kernels */
    assert_int_equal(count_phase(&tr, PHASE_BWD_DATA), count_phase(&fb, PHASE_BWD_DATA));
    assert_int_equal(count_phase(&tr, PHASE_BWD_WEIGHTS), count_phase(&fb, PHASE_BWD_WEIGHTS));
    assert_int_equal(count_phase(&tr, PHASE_UPDATE), 1);
    assert_int_equal(tr.nops, fb.nops + 1);
    assert_true(tr.update_op >= 0 && tr.update_op < tr.nops);
    const OpDesc *u = &tr.ops[tr.update_op].desc;
    assert_int_equal(u->phase, PHASE_UPDATE);
    assert_int_equal(u->kind, OP_MOMENTUM);
    assert_int_equal(u->u.update.count * sizeof(float), tr.arena_bytes[ARENA_PARAM]);
    assert_true(close_to(u->u.update.momentum, 0.9, 0, 1e-6));
    assert_true(close_to(u->u.update.l2, 2 * 5e-5, 0, 1e-6)); /* d/dw of wd * w^2 */
    size_t decayed = 0;
    int kernels = 0;
    for (int i = 0; i < tr.nparams; i++) {
        const PlanParam *pp = &tr.params[i];
        LayerKind k = tr.layers[pp->layer].kind;
        bool kernel = strcmp(pp->role, "kernel") == 0 && (k == LAYER_CONV2D || k == LAYER_DENSE);
        if (pp->decayed != kernel)
            fail_msg("resnet50: %s of %s is %sdecayed", pp->role, tr.layers[pp->layer].name,
                     pp->decayed ? "" : "not ");
        if (pp->decayed) {
            decayed += pp->count;
            kernels++;
            /* the decayed kernels are the prefix of the parameter buffer */
            assert_true(pp->ref.offset + pp->ref.bytes <= tr.decay_bytes);
        } else if (pp->learnable) {
            assert_true(pp->ref.offset >= tr.decay_bytes);
        }
    }
    assert_int_equal(kernels, 54); /* 53 convolutions and fc1000 */
    if (u->u.update.decay_count != decayed)
        fail_msg("resnet50: momentum decays %zu values, the conv and dense kernels hold %zu", u->u.update.decay_count,
                 decayed);
    plan_free(&inf);
    plan_free(&fb);
    plan_free(&tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet50_schedule),
        cmocka_unit_test(test_resnet50_plan_modes),
        cmocka_unit_test(test_p3b1_heads_share_parameters),
        cmocka_unit_test(test_every_model_round_trips_through_json),
        cmocka_unit_test(test_rnn_batch4_smaller_lr),
        cmocka_unit_test(test_every_model_lowers_the_loss),
    };
    return cmocka_run_group_tests_name("zoo", tests, NULL, NULL);
}
