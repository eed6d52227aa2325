/* models/fit.c — epoch training with evaluation and the reference metrics (fit.h).
 *
 * One parameter/state buffer shared by every plan of the model (the training plan and
 * the inference plan of each head lay their parameters out identically); the other
 * arenas are sized for the largest plan and reused, since plans run one after another.
 * Batches are gathered from the data set through a fresh permutation every epoch; the
 * remainder of an epoch smaller than a batch is dropped (the plan has a fixed batch).
 * Data-parallel, every rank draws the same permutation and trains its slice of each global
 * batch (rank r: samples r*b .. (r+1)*b-1 of it), so the ranks together see the epoch one
 * process would; gradients are summed over the ranks before each update. Rank 0 evaluates
 * with its own batch-norm statistics (as Horovod and PyTorch DDP's default, which
 * broadcast rank 0's buffers) while the others wait.
 */
#include "models/fit.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "models/dataset.h"
#include "models/metrics.h"
#include "models/train.h"
#include "models/weights.h"
#include "ops/comm.h"

enum { ALIGN = 64 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void say(const FitOptions *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const FitOptions *o, const char *fmt, ...)
{
    if (!o->progress)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->progress(line, o->progress_ctx);
}

static void add_metric(FitResult *r, const char *name, double v)
{
    if (r->nmetrics == FIT_MAX_METRICS)
        return;
    snprintf(r->metrics[r->nmetrics].name, sizeof r->metrics[0].name, "%s", name);
    r->metrics[r->nmetrics++].value = v;
}

/* ---- data ---- */

typedef struct {
    Dataset train, test;
    int classes;
    const char *name; /* task name for multi-task models, else NULL */
} Task;

/* Makes a labelled data set the data set of an autoencoder: the target is the input. */
static void as_autoencoder_data(Dataset *ds)
{
    free(ds->t);
    ds->t = NULL;
    ds->target = TARGET_INPUT;
    ds->t_count = shape_count(&ds->shape);
}

static int load_task(const ModelSpec *m, int head, int batch, const FitOptions *o, Task *t, char *err, size_t n)
{
    memset(t, 0, sizeof *t);
    t->classes = m->nheads > 0 ? m->heads[head].classes : m->classes;
    t->name = m->nheads > 0 ? m->heads[head].name : NULL;
    if (m->data == DATA_FASHION_MNIST) {
        if (dataset_load_fashion_mnist(o->data_dir, true, &t->train, err, n) != 0 ||
            dataset_load_fashion_mnist(o->data_dir, false, &t->test, err, n) != 0)
            return -1;
        if (m->autoencoder) { /* the images are the targets; the labels are not used */
            as_autoencoder_data(&t->train);
            as_autoencoder_data(&t->test);
        }
        return 0;
    }
    if (m->data == DATA_TEXT_BYTES) { /* a byte-level LM on real text: the last tenth of it held out */
        if (m->classes != 256 || m->input.rank != 2 || !m->input_ids) {
            snprintf(err, n, "%s: text as bytes feeds a language model of 256 classes over a sequence of ids", m->name);
            return -1;
        }
        return dataset_load_text_bytes(o->data_dir, m->input.d[0], 0.1, &t->train, &t->test, err, n);
    }
    if (m->input.rank == 2) {
        snprintf(err, n, "%s: epoch training of sequence models is not supported; use --steps", m->name);
        return -1;
    }
    int ntrain = m->nheads > 0 ? m->heads[head].train_samples : m->train_samples;
    int ntest = m->nheads > 0 ? m->heads[head].test_samples : m->test_samples;
    if (ntrain <= 0)
        ntrain = 8 * batch;
    if (ntest <= 0)
        ntest = 2 * batch;
    if (o->max_samples > 0) {
        ntrain = ntrain < o->max_samples ? ntrain : o->max_samples;
        ntest = ntest < o->max_samples ? ntest : o->max_samples;
    }
    /* different seeds give disjoint train and test samples of the same distribution */
    if (data_synthetic(m, t->classes, ntrain, 0, o->seed + 101 * (uint64_t)head, &t->train, err, n) != 0 ||
        data_synthetic(m, t->classes, ntest, 0, o->seed + 101 * (uint64_t)head + 7, &t->test, err, n) != 0)
        return -1;
    return 0;
}

static void free_task(Task *t)
{
    dataset_free(&t->train);
    dataset_free(&t->test);
}

/* ---- memory: the largest of every arena over a set of plans ---- */

typedef struct {
    void *base[ARENA_COUNT];
    size_t bytes[ARENA_COUNT];
} Arenas;

static size_t round_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

/* processes: how many processes of this size the node's memory holds at once (the ranks
 * of a data-parallel run on it); allreduce: the job sums gradients, and each process also
 * holds the MPI library's temporaries, up to the gradient buffer (trainer_check_memory_shared) */
static int arenas_alloc(Arenas *a, Plan *plans, int nplans, double data_bytes, int processes, bool allreduce,
                        const char *model, char *err, size_t n)
{
    memset(a, 0, sizeof *a);
    double total = data_bytes;
    for (int k = 0; k < ARENA_COUNT; k++) {
        for (int i = 0; i < nplans; i++)
            if (plans[i].arena_bytes[k] > a->bytes[k])
                a->bytes[k] = plans[i].arena_bytes[k];
        total += (double)ops_buffer_footprint(round_up(a->bytes[k] ? a->bytes[k] : ALIGN));
    }
    const double scratch = allreduce ? (double)a->bytes[ARENA_GRAD] : 0;
    total += scratch;
    double avail = mem_available_bytes() / processes;
    if (avail > 0 && total > 0.9 * avail) {
        char comm[48] = "";
        if (allreduce)
            snprintf(comm, sizeof comm, ", allreduce up to %.2f GiB", scratch / 1073741824.0);
        snprintf(err, n, "%s: training needs %.2f GiB (model, activations, data set%s) but only %.2f GiB of "
                         "memory is available%s; use a smaller --batch", model, total / 1073741824.0,
                 comm,
                 avail / 1073741824.0, processes > 1 ? " per rank (the node's ranks share it)" : "");
        return -1;
    }
    for (int k = 0; k < ARENA_COUNT; k++) {
        size_t b = round_up(a->bytes[k] ? a->bytes[k] : ALIGN);
        a->base[k] = ops_buffer_alloc(b);
        if (!a->base[k]) {
            snprintf(err, n, "%s: cannot allocate %.2f GiB for %s", model, (double)b / 1073741824.0,
                     arena_name((ArenaId)k));
            return -1;
        }
        memset(a->base[k], 0, b);
    }
    return 0;
}

static void arenas_free(Arenas *a)
{
    for (int k = 0; k < ARENA_COUNT; k++)
        ops_buffer_free(a->base[k], round_up(a->bytes[k] ? a->bytes[k] : ALIGN));
    memset(a, 0, sizeof *a);
}

static double plan_total_flops(const Plan *p)
{
    double f[PHASE_COUNT], t = 0;
    plan_flops(p, f);
    for (int i = 0; i < PHASE_COUNT; i++)
        t += f[i];
    return t;
}

/* Copies samples idx[0..b) into the plan's input (and target) in the input arena. */
static void gather(const Plan *p, const Dataset *ds, const int *idx, void *const base[ARENA_COUNT])
{
    char *in = base[ARENA_INPUT];
    dataset_gather(ds, idx, p->batch, in + p->input.offset,
                   ds->target == TARGET_INPUT ? NULL : in + p->target.offset);
}

static float read_loss(const Plan *p, void *const base[ARENA_COUNT])
{
    float v;
    memcpy(&v, (char *)base[ARENA_ACT] + p->loss.offset, sizeof v);
    return v;
}

/* Runs the inference plan over the whole of ds; out (ds->n, width) receives the scores
 * (softmax probabilities or the output), returns the mean loss over the batches. The last
 * batch is completed with samples from the start; their results are ignored. */
static double evaluate(const Plan *p, const Dataset *ds, void *const base[ARENA_COUNT], float *out, int width)
{
    int B = p->batch, nb = (ds->n + B - 1) / B;
    int *idx = malloc((size_t)B * sizeof *idx);
    double loss = 0;
    for (int b = 0; b < nb; b++) {
        int have = ds->n - b * B < B ? ds->n - b * B : B;
        for (int i = 0; i < B; i++)
            idx[i] = i < have ? b * B + i : i % ds->n;
        gather(p, ds, idx, base);
        plan_exec(p, base, NULL);
        loss += read_loss(p, base) * have / (double)B;
        if (out)
            memcpy(out + (size_t)b * B * width, (char *)base[ARENA_ACT] + p->probs.offset,
                   (size_t)have * width * sizeof(float));
    }
    free(idx);
    return loss / ((double)ds->n / B);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Metrics of one task from its test-set scores. */
static void task_metrics(const ModelSpec *m, const Task *t, const float *scores, int width, bool multi,
                         double *f1s, int *nf1, FitResult *r)
{
    char name[48];
    const Dataset *ds = &t->test;
    if (m->loss == LOSS_SOFTMAX_XENT) {
        const int32_t *labels = ds->t;
        if (!multi) {
            add_metric(r, "test_accuracy", metric_accuracy(scores, labels, ds->n, width));
            return;
        }
        int32_t *pred = malloc((size_t)ds->n * sizeof *pred);
        for (int i = 0; i < ds->n; i++) {
            int best = 0;
            for (int c = 1; c < width; c++)
                if (scores[(size_t)i * width + c] > scores[(size_t)i * width + best])
                    best = c;
            pred[i] = best;
        }
        double macro, micro;
        metric_f1(pred, labels, ds->n, width, &macro, &micro);
        free(pred);
        snprintf(name, sizeof name, "%s_f1_macro", t->name);
        add_metric(r, name, macro);
        snprintf(name, sizeof name, "%s_f1_micro", t->name);
        add_metric(r, name, micro);
        f1s[(*nf1)++] = macro;
        f1s[(*nf1)++] = micro;
        return;
    }
    if (ds->target == TARGET_INPUT) { /* autoencoders: P1B1's evaluation on the test set */
        size_t n = (size_t)ds->n * width;
        add_metric(r, "test_mse", metric_mse(ds->x, scores, n));
        add_metric(r, "test_r2", metric_r2(ds->x, scores, ds->n, width));
        add_metric(r, "test_correlation", metric_pearson_flat(scores, ds->x, n));
    }
}

int fit_run(const ModelSpec *m, const FitOptions *o, FitResult *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    const int nranks = o->nranks > 1 ? o->nranks : 1, rank = nranks > 1 ? o->rank : 0;
    const int global = o->batch > 0 ? o->batch : m->default_batch;
    if (global % nranks != 0) {
        snprintf(err, errlen, "%s: global batch %d does not split evenly over %d ranks", m->name, global, nranks);
        return -1;
    }
    const int batch = global / nranks; /* the plans' batch: this rank's share */
    int nheads = m->nheads > 0 ? m->nheads : 1;
    bool multi = m->nheads > 0;
    Plan train[MODEL_MAX_HEADS], infer[MODEL_MAX_HEADS];
    Task tasks[MODEL_MAX_HEADS];
    memset(train, 0, sizeof train);
    memset(infer, 0, sizeof infer);
    memset(tasks, 0, sizeof tasks);
    Plan all[2 * MODEL_MAX_HEADS];
    Arenas ar = {0};
    float *scores = NULL;
    double *step_times = NULL, *sum_times = NULL;
    int *perm = NULL;
    int rc = -1;
    char tmp_weights[256] = "";

    double data_bytes = 0;
    for (int h = 0; h < nheads; h++) {
        if (plan_build_head(m, batch, PLAN_TRAIN, h, &train[h], err, errlen) != 0 ||
            plan_build_head(m, batch, PLAN_INFERENCE, h, &infer[h], err, errlen) != 0)
            goto done;
        if (nranks > 1)
            plan_average_ranks(&train[h], nranks);
        if (load_task(m, h, global, o, &tasks[h], err, errlen) != 0)
            goto done;
        if (tasks[h].train.n < global) {
            snprintf(err, errlen, "%s: batch %d is larger than the %d training samples", m->name, global,
                     tasks[h].train.n);
            goto done;
        }
        data_bytes += (double)(tasks[h].train.n + tasks[h].test.n) * shape_count(&m->input) * 4;
        all[2 * h] = train[h];
        all[2 * h + 1] = infer[h];
        r->train_n += tasks[h].train.n / global * global;
        r->test_n += tasks[h].test.n;
    }
    snprintf(r->data_source, sizeof r->data_source, "%s", tasks[0].train.source);
    if (arenas_alloc(&ar, all, 2 * nheads, data_bytes, nranks > 1 ? comm_env_local_size() : 1, nranks > 1, m->name,
                     err, errlen) != 0)
        goto done;
    if (o->load_path) {
        if (weights_load(o->load_path, &train[0], ar.base[ARENA_PARAM], ar.base[ARENA_STATE], err, errlen) != 0)
            goto done;
    } else {
        params_init(&train[0], ar.base[ARENA_PARAM], ar.base[ARENA_STATE], o->seed);
    }

    int max_test = 0, max_width = 0;
    long steps_per_epoch = 0;
    for (int h = 0; h < nheads; h++) {
        max_test = tasks[h].test.n > max_test ? tasks[h].test.n : max_test;
        int w = (int)(infer[h].probs.bytes / sizeof(float) / batch);
        max_width = w > max_width ? w : max_width;
        steps_per_epoch += tasks[h].train.n / global;
    }
    scores = malloc((size_t)max_test * max_width * sizeof *scores);
    step_times = malloc((size_t)o->epochs * steps_per_epoch * sizeof *step_times);
    sum_times = malloc((size_t)o->epochs * steps_per_epoch * sizeof *sum_times);
    int max_train = 0;
    for (int h = 0; h < nheads; h++)
        max_train = tasks[h].train.n > max_train ? tasks[h].train.n : max_train;
    perm = malloc((size_t)max_train * sizeof *perm);
    if (!scores || !step_times || !sum_times || !perm) {
        snprintf(err, errlen, "%s: out of memory for evaluation buffers", m->name);
        goto done;
    }
    r->batch = global;
    r->batch_per_rank = batch;
    r->allreduce_bytes = nranks > 1 ? (double)train[0].arena_bytes[ARENA_GRAD] : 0;
    if (rank == 0 && nranks > 1)
        say(o, "%s: %d epoch(s), global batch %d (%d per rank on %d ranks), %ld steps per epoch, data: %s",
            m->name, o->epochs, global, batch, nranks, steps_per_epoch, r->data_source);
    else if (rank == 0)
        say(o, "%s: %d epoch(s), batch %d, %ld steps per epoch, data: %s", m->name, o->epochs, batch,
            steps_per_epoch, r->data_source);

    for (int e = 0; e < o->epochs; e++) {
        double t0 = now_s(), epoch_loss = 0;
        long epoch_steps = 0;
        for (int h = 0; h < nheads; h++) {
            Plan *p = &train[h];
            const Dataset *ds = &tasks[h].train;
            /* (a head's plan updates only the parameters on its own path) */
            dataset_permutation(perm, ds->n, o->seed * 1000003u + (uint64_t)e * 31 + (uint64_t)h);
            for (int b = 0; b + global <= ds->n; b += global) {
                double s0 = now_s();
                gather(p, ds, perm + b + rank * batch, ar.base);
                plan_step_values(p, ar.base, r->steps, (double)steps_per_epoch);
                sum_times[r->steps] = plan_exec_data_parallel(p, ar.base, nranks);
                step_times[r->steps] = now_s() - s0;
                const float loss = ranks_mean_loss(read_loss(p, ar.base), nranks);
                if (!isfinite(loss)) {
                    char where[256];
                    if (!plan_find_nonfinite(p, ar.base, where, sizeof where))
                        snprintf(where, sizeof where, "every tensor is finite: the loss alone overflowed");
                    snprintf(err, errlen, "%s: the loss became %s in epoch %d, step %ld; training diverged: %s",
                             m->name, isnan(loss) ? "NaN" : "infinite", e + 1, r->steps + 1, where);
                    goto done;
                }
                epoch_loss += loss;
                epoch_steps++;
                r->steps++;
                r->flops += plan_total_flops(p) * nranks;
            }
        }
        r->train_s += now_s() - t0;
        epoch_loss /= epoch_steps > 0 ? epoch_steps : 1;
        if (e == 0)
            r->first_loss = epoch_loss;
        r->last_loss = epoch_loss;

        /* evaluation (the reference validates on the test set after every epoch) */
        double v0 = now_s();
        r->nmetrics = 0;
        double f1s[2 * MODEL_MAX_HEADS];
        int nf1 = 0;
        double test_loss = 0;
        for (int h = 0; rank == 0 && h < nheads; h++) {
            int width = (int)(infer[h].probs.bytes / sizeof(float) / batch);
            if (tasks[h].test.time_major) { /* a language model: its loss per step is the metric */
                const double l = evaluate(&infer[h], &tasks[h].test, ar.base, NULL, width);
                test_loss += l / nheads;
                add_metric(r, "test_bits_per_byte", l / log(2.0));
            } else {
                test_loss += evaluate(&infer[h], &tasks[h].test, ar.base, scores, width) / nheads;
                task_metrics(m, &tasks[h], scores, width, multi, f1s, &nf1, r);
            }
            r->flops += plan_total_flops(&infer[h]) * ((tasks[h].test.n + batch - 1) / batch);
        }
        if (rank == 0)
            add_metric(r, "test_loss", test_loss);
        if (nf1 > 0)
            add_metric(r, "f1_geomean", metric_geomean(f1s, nf1));
        if (nranks > 1)
            comm_barrier(); /* the next epoch starts together */
        r->eval_s += now_s() - v0;
        r->epochs = e + 1;
        char line[400];
        int used = snprintf(line, sizeof line, "epoch %d/%d: train loss %.5g", e + 1, o->epochs, epoch_loss);
        for (int i = 0; i < r->nmetrics && used < (int)sizeof line; i++)
            used += snprintf(line + used, sizeof line - (size_t)used, ", %s %.4f", r->metrics[i].name,
                             r->metrics[i].value);
        say(o, "%s (%.1f s train, %.1f s test)", line, now_s() - t0 - (now_s() - v0), now_s() - v0);
    }

    qsort(step_times, (size_t)r->steps, sizeof *step_times, cmp_double);
    r->step_median_s = r->steps ? step_times[r->steps / 2] : 0;
    qsort(sum_times, (size_t)r->steps, sizeof *sum_times, cmp_double);
    r->allreduce_median_s = r->steps ? sum_times[r->steps / 2] : 0;
    if (rank != 0) { /* rank 0 alone saves the weights and times inference */
        rc = 0;
        goto done;
    }

    /* Seed 004's total inference time: load the trained weights from their file, then
     * predict the whole test set. */
    const char *wpath = o->save_path;
    if (!wpath) {
        snprintf(tmp_weights, sizeof tmp_weights, "/tmp/dlperf-fit-%d.weights", (int)getpid());
        wpath = tmp_weights;
    }
    if (weights_save(wpath, &train[0], ar.base[ARENA_PARAM], ar.base[ARENA_STATE], err, errlen) != 0)
        goto done;
    double l0 = now_s();
    if (weights_load(wpath, &train[0], ar.base[ARENA_PARAM], ar.base[ARENA_STATE], err, errlen) != 0)
        goto done;
    r->load_s = now_s() - l0;
    for (int h = 0; h < nheads; h++) {
        int width = (int)(infer[h].probs.bytes / sizeof(float) / batch);
        evaluate(&infer[h], &tasks[h].test, ar.base, scores, width);
    }
    r->infer_s = now_s() - l0;
    rc = 0;
done:
    if (tmp_weights[0])
        unlink(tmp_weights);
    free(scores);
    free(step_times);
    free(sum_times);
    free(perm);
    arenas_free(&ar);
    for (int h = 0; h < nheads; h++) {
        plan_free(&train[h]);
        plan_free(&infer[h]);
        free_task(&tasks[h]);
    }
    return rc;
}
