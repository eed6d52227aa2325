/* models/train.c — the trainer: memory check, one allocation per arena, initialisation,
 * and the training step (which is plan_exec on the arenas). */
#include "models/train.h"
#include "models/transformer.h"

#include "models/fista.h"
#include "ops/comm.h"

#include <assert.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ALIGN = 64 };

static size_t round_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

/* The size alloc_zeroed asks ops_buffer_alloc for: whole ALIGN blocks, one for nothing. */
static size_t buffer_bytes(size_t bytes) { return round_up(bytes ? bytes : ALIGN); }

/* What trainer_init allocates, as it occupies memory: one buffer per arena (alloc_zeroed)
 * and one for the data batches, each in whole pages (ops_buffer_footprint). */
double trainer_bytes_needed(const Plan *p, int nbatches)
{
    double total = 0;
    for (int a = 0; a < ARENA_COUNT; a++)
        if (a != ARENA_INPUT)
            total += (double)ops_buffer_footprint(buffer_bytes(p->arena_bytes[a]));
    return total + (double)ops_buffer_footprint(buffer_bytes(round_up(p->arena_bytes[ARENA_INPUT]) * (size_t)nbatches));
}

static void *alloc_zeroed(size_t bytes)
{
    size_t n = buffer_bytes(bytes);
    void *p = ops_buffer_alloc(n);
    if (p)
        memset(p, 0, n); /* also faults the pages in now, not inside the first timed step */
    return p;
}

/* Two batches, the one a step trains on and the next, as a training job's loader
 * double-buffers them: the memory a run holds for its data is then what a job of the
 * model holds, which predict counts (it held 8 until 2026-11-25, 67 MB more than the
 * model needs for alexnet-owt at 16 per rank). Steps alternate between them, so a run
 * never trains on one batch only. */
int trainer_data_batches(int steps) { return steps < TRAINER_DATA_BATCHES ? steps : TRAINER_DATA_BATCHES; }

int trainer_check_memory(const Plan *p, int nbatches, char *err, size_t errlen)
{
    return trainer_check_memory_shared(p, nbatches, 1, false, err, errlen);
}

int trainer_check_memory_shared(const Plan *p, int nbatches, int processes, bool allreduce, char *err,
                                size_t errlen)
{
    /* the MPI library's allreduce temporaries: up to the gradient buffer for Open MPI's
     * algorithms (recursive doubling and Rabenseifner copy it whole; the ring's blocks are
     * 1/P of it, two of them beyond 2 ranks); the communication calibration measures it */
    const double scratch = allreduce ? (double)p->arena_bytes[ARENA_GRAD] : 0;
    double need = (trainer_bytes_needed(p, nbatches) + scratch) * (processes > 1 ? processes : 1);
    double avail = mem_available_bytes();
    /* 10% headroom for the program, libraries and the kernel's own use */
    if (avail <= 0 || need <= 0.9 * avail)
        return 0;
    const size_t *ab = p->arena_bytes;
    const double gib = 1073741824.0;
    char comm[48] = "";
    if (allreduce)
        snprintf(comm, sizeof comm, ", allreduce up to %.2f", scratch / gib);
    snprintf(err, errlen,
             "%s at batch %d needs %.2f GiB (parameters+gradients+optimizer+state %.2f, activations %.2f, "
             "workspace %.2f, data %.2f%s)%s but only %.2f GiB of memory is available; use a smaller --batch",
             p->model->name, p->batch, need / gib, (double)(ab[ARENA_PARAM] + ab[ARENA_GRAD] + ab[ARENA_OPT] + ab[ARENA_STATE]) / gib,
             (double)(ab[ARENA_ACT] + ab[ARENA_ACTGRAD]) / gib, (double)ab[ARENA_WS] / gib,
             (double)nbatches * (double)ab[ARENA_INPUT] / gib, comm,
             processes > 1 ? " for the ranks on this node together" : "", avail / gib);
    return -1;
}

int trainer_init(Trainer *t, const ModelSpec *m, int batch, int nbatches, uint64_t seed, char *err,
                 size_t errlen)
{
    return trainer_init_mode(t, m, batch, PLAN_TRAIN, nbatches, seed, err, errlen);
}

int trainer_init_mode(Trainer *t, const ModelSpec *m, int batch, PlanMode mode, int nbatches, uint64_t seed,
                      char *err, size_t errlen)
{
    const DataParallel one = {0, 1, 1, 0, 1};
    return trainer_init_dp(t, m, batch, mode, nbatches, seed, &one, err, errlen);
}

/* Copies rows [first, first+n) of each of `blocks` blocks of `rows` rows of `row_bytes`
 * (time-major sequences are one block per step; everything else is one block). */
static void copy_rows(char *dst, const char *src, int blocks, int rows, int first, int n, size_t row_bytes)
{
    for (int b = 0; b < blocks; b++)
        memcpy(dst + (size_t)b * n * row_bytes, src + ((size_t)b * rows + first) * row_bytes, (size_t)n * row_bytes);
}

/* How one global batch is sliced into this rank's batch (data_generate_share). */
typedef struct {
    const Trainer *t;
    const Plan *gp;       /* the plan at the global batch: its input layout */
    int first;            /* this rank's first sample */
    int in_blocks;        /* input: (T, B, F) time-major for sequences, else sample-major */
    size_t in_row;
    bool own_target;      /* targets: one row per sample, or per sample and step (time-major) */
    int tgt_blocks;
    size_t tgt_row;
} ShareSlicer;

static void take_share(int b, const char *global_batch, void *ctx)
{
    const ShareSlicer *s = ctx;
    const Plan *lp = &s->t->plan, *gp = s->gp;
    char *lb = s->t->data + (size_t)b * s->t->batch_stride;
    copy_rows(lb + lp->input.offset, global_batch + gp->input.offset, s->in_blocks, gp->batch, s->first, lp->batch,
              s->in_row);
    if (s->own_target)
        copy_rows(lb + lp->target.offset, global_batch + gp->target.offset, s->tgt_blocks, gp->batch, s->first,
                  lp->batch, s->tgt_row);
}

/* This rank's share of the data set one process would train on at the global batch:
 * the global batches are generated (same seed, same order), one at a time, and each
 * sliced, so a rank holds one global batch beside its own data set, not all of them. */
static int data_generate_share(const Trainer *t, const DataParallel *dp, uint64_t seed, char *err, size_t errlen)
{
    const Plan *lp = &t->plan;
    const ModelSpec *m = lp->model;
    Plan gp;
    if (plan_build_mode(m, lp->batch * dp->nranks, lp->mode, &gp, err, errlen) != 0)
        return -1;
    const size_t gbytes = round_up(gp.arena_bytes[ARENA_INPUT]);
    char *g = malloc(gbytes);
    if (!g) {
        snprintf(err, errlen, "%s: cannot allocate %.2f GiB for a global batch to take this rank's share from",
                 m->name, (double)gbytes / 1073741824.0);
        plan_free(&gp);
        return -1;
    }
    ShareSlicer s = {.t = t, .gp = &gp, .first = dp->rank * lp->batch};
    s.in_blocks = m->input.rank == 2 ? m->input.d[0] : 1;
    s.in_row = lp->input.bytes / ((size_t)lp->batch * s.in_blocks);
    s.own_target = lp->target.offset != lp->input.offset;
    if (s.own_target) {
        const PlanLayer *last = &lp->layers[lp->nlayers - 1];
        for (int i = lp->nlayers - 1; i >= 0; i--) /* the scored output may not be the last layer */
            if (lp->layers[i].y.arena == lp->output.arena && lp->layers[i].y.offset == lp->output.offset) {
                last = &lp->layers[i];
                break;
            }
        s.tgt_blocks = last->out.rank == 2 ? last->out.d[0] : 1;
        s.tgt_row = lp->target.bytes / ((size_t)lp->batch * s.tgt_blocks);
    }
    data_generate_each(&gp, t->nbatches, seed, g, take_share, &s);
    free(g);
    plan_free(&gp);
    return 0;
}

/* The optimizer's own ops among those that close the plan (the others compute the
 * clipping norm: sums of squares and, tensor-parallel, their sum over the ranks). */
static bool is_optimizer(const OpDesc *d)
{
    return d->kind == OP_SGD || d->kind == OP_RMSPROP || d->kind == OP_MOMENTUM || d->kind == OP_ADAM ||
           d->kind == OP_ADAMW;
}

void plan_average_ranks(Plan *p, int nranks)
{
    for (int i = p->update_op; i >= 0 && i < p->nops; i++) { /* the update ops close the plan */
        OpDesc *d = &p->ops[i].desc;
        if (is_optimizer(d)) /* the norm is the summed gradients'; the update takes the mean's */
            d->u.update.grad_ranks = nranks;
    }
}

float ranks_mean_loss(float loss, int nranks)
{
    if (nranks <= 1)
        return loss;
    double l = loss;
    comm_allreduce_sum_f64(&l, 1);
    return (float)(l / nranks);
}

double plan_exec_data_parallel(const Plan *p, void *const base[ARENA_COUNT], int nranks)
{
    if (nranks <= 1 || p->mode == PLAN_INFERENCE) {
        plan_exec(p, base, NULL);
        return 0;
    }
    const int update = p->update_op >= 0 ? p->update_op : p->nops;
    const size_t floats = p->arena_bytes[ARENA_GRAD] / sizeof(float);
    plan_exec_range(p, base, 0, update, NULL);
    const double t0 = comm_wtime();
    comm_dp_allreduce_sum_f32(base[ARENA_GRAD], floats);
    const double sum_s = comm_wtime() - t0;
    assert(update == p->nops || p->ops[update].desc.u.update.grad_ranks == nranks); /* plan_average_ranks */
    plan_exec_range(p, base, update, p->nops, NULL);
    return sum_s;
}

static int bucket_cmp(const void *a, const void *b)
{
    const GradBucket *x = a, *y = b;
    return x->ready_op != y->ready_op ? (x->ready_op > y->ready_op) - (x->ready_op < y->ready_op)
                                      : (x->first > y->first) - (x->first < y->first);
}

/* Splits the gradient buffer into buckets of about bucket_bytes and finds, for each, the
 * last op before the update that writes into it: from then on its sum can start. */
static int grad_buckets(Trainer *t, size_t bucket_bytes)
{
    const Plan *p = &t->plan;
    const size_t total = p->arena_bytes[ARENA_GRAD] / sizeof(float);
    const size_t per = bucket_bytes / sizeof(float) > 0 ? bucket_bytes / sizeof(float) : 1;
    const int n = (int)((total + per - 1) / per);
    const int update = p->update_op >= 0 ? p->update_op : p->nops;
    t->buckets = calloc((size_t)(n > 0 ? n : 1), sizeof *t->buckets);
    if (!t->buckets)
        return -1;
    for (int k = 0; k < n; k++)
        t->buckets[k] = (GradBucket){(size_t)k * per, (size_t)k * per + per <= total ? per : total - (size_t)k * per, 0};
    for (int i = 0; i < update; i++)
        for (int b = 0; b < p->ops[i].nbuf; b++) {
            const BufRef *r = &p->ops[i].buf[b];
            if (r->arena != ARENA_GRAD || r->bytes == 0)
                continue;
            size_t lo = r->offset / sizeof(float) / per, hi = (r->offset + r->bytes - 1) / sizeof(float) / per;
            for (size_t k = lo; k <= hi && k < (size_t)n; k++)
                if (t->buckets[k].ready_op < i)
                    t->buckets[k].ready_op = i;
        }
    qsort(t->buckets, (size_t)n, sizeof *t->buckets, bucket_cmp);
    t->nbuckets = n;
    return 0;
}

/* A tensor-parallel rank's share starts from its part of the parameters the whole model
 * starts from at this seed: one process of the whole model and a tensor-parallel job of
 * its shares then train the same network. */
static int tp_init(Trainer *t, const ModelSpec *m, const DataParallel *dp, uint64_t seed, char *err, size_t errlen)
{
    const int tp = dp->tp > 1 ? dp->tp : 1;
    if (m->tp_ranks != tp || comm_tp_size() != tp) {
        snprintf(err, errlen, "%s is a share of %d tensor-parallel ranks; this job's groups have %d (run it under "
                 "mpirun with --tp %d)", m->name, m->tp_ranks, comm_tp_size(), m->tp_ranks);
        return -1;
    }
    Plan whole; /* its tensor table only: nothing of the whole model is allocated */
    if (plan_build_mode(m->tp_whole, 1, PLAN_INFERENCE, &whole, err, errlen) != 0)
        return -1;
    const int rc = transformer_tp_init(&t->plan, t->mem[ARENA_PARAM], &whole, seed, comm_tp_rank(), err, errlen);
    plan_free(&whole);
    return rc;
}

int trainer_init_dp(Trainer *t, const ModelSpec *m, int batch, PlanMode mode, int nbatches, uint64_t seed,
                    const DataParallel *dp, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->dp = *dp;
    if (dp->nranks > 1 && m->algorithm == ALGO_FISTA) {
        snprintf(err, errlen, "%s: FISTA iterates on one batch of one process; it does not run data-parallel",
                 m->name);
        return -1;
    }
    if (plan_build_mode(m, batch, mode, &t->plan, err, errlen) != 0)
        return -1;
    if (trainer_check_memory_shared(&t->plan, nbatches, dp->local_ranks, dp->nranks > 1 && mode != PLAN_INFERENCE,
                                    err, errlen) != 0) {
        plan_free(&t->plan);
        return -1;
    }
    for (int a = 0; a < ARENA_COUNT; a++) {
        if (a == ARENA_INPUT)
            continue;
        t->mem[a] = alloc_zeroed(t->plan.arena_bytes[a]);
        if (!t->mem[a]) {
            snprintf(err, errlen, "%s at batch %d: cannot allocate %.2f GiB for %s", m->name, batch,
                     (double)t->plan.arena_bytes[a] / 1073741824.0, arena_name((ArenaId)a));
            trainer_free(t);
            return -1;
        }
        t->base[a] = t->mem[a];
    }
    t->nbatches = nbatches;
    t->batch_stride = round_up(t->plan.arena_bytes[ARENA_INPUT]);
    t->data = alloc_zeroed(t->batch_stride * (size_t)nbatches);
    if (!t->data) {
        snprintf(err, errlen, "%s at batch %d: cannot allocate %.2f GiB for the data set", m->name, batch,
                 (double)t->batch_stride * nbatches / 1073741824.0);
        trainer_free(t);
        return -1;
    }
    t->base[ARENA_INPUT] = t->data;
    for (int i = 0; i < t->plan.nops; i++) /* the plan's sums over the ranks need this job's groups */
        if (t->plan.ops[i].desc.kind == OP_ALLREDUCE && t->plan.ops[i].desc.u.allreduce.ranks != comm_tp_size()) {
            snprintf(err, errlen, "%s sums over %d tensor-parallel ranks; this job's groups have %d (run it under "
                     "mpirun with --tp %d)", m->name, t->plan.ops[i].desc.u.allreduce.ranks, comm_tp_size(),
                     t->plan.ops[i].desc.u.allreduce.ranks);
            trainer_free(t);
            return -1;
        }
    params_init(&t->plan, t->mem[ARENA_PARAM], t->mem[ARENA_STATE], seed);
    if (m->tp_whole && tp_init(t, m, dp, seed, err, errlen) != 0) { /* the learnable ones: slices */
        trainer_free(t);
        return -1;
    }
    if (m->algorithm == ALGO_FISTA) {
        double lipschitz;
        t->fista_t = 1;
        if (fista_setup(&t->plan, t->base, &lipschitz, err, errlen) != 0) {
            trainer_free(t);
            return -1;
        }
    }
    t->steps_per_epoch = m->train_samples > 0 ? (double)m->train_samples / batch : 0;
    if (dp->nranks > 1)
        plan_average_ranks(&t->plan, dp->nranks);
    if (dp->nranks > 1 && dp->bucket_bytes > 0 && mode != PLAN_INFERENCE && grad_buckets(t, dp->bucket_bytes) != 0) {
        snprintf(err, errlen, "%s: out of memory for the gradient buckets", m->name);
        trainer_free(t);
        return -1;
    }
    if (dp->nranks > 1) {
        if (data_generate_share(t, dp, seed + 1, err, errlen) != 0) {
            trainer_free(t);
            return -1;
        }
    } else {
        data_generate(&t->plan, t->data, nbatches, t->batch_stride, seed + 1);
    }
    return 0;
}

/* The first non-finite value of a buffer: 0 none, 1 NaN, 2 an infinity. */
static int nonfinite(const void *const base[ARENA_COUNT], BufRef r)
{
    if (!base[r.arena] || r.bytes == 0)
        return 0;
    const float *v = (const float *)((const char *)base[r.arena] + r.offset);
    for (size_t i = 0; i < r.bytes / sizeof(float); i++)
        if (!isfinite(v[i]))
            return isnan(v[i]) ? 1 : 2;
    return 0;
}

bool plan_find_nonfinite(const Plan *p, void *const base_[ARENA_COUNT], char *where, size_t len)
{
    const void *const *base = (const void *const *)base_;
    static const char *what[] = {"", "NaN", "an infinity"};
    for (int l = 0; l < p->nlayers; l++) {
        const PlanLayer *L = &p->layers[l];
        int k;
        if (L->alias_of < 0 && (k = nonfinite(base, L->y)) != 0) {
            snprintf(where, len, "%s (%s): its output holds %s", L->name, layer_kind_name(L->kind), what[k]);
            return true;
        }
    }
    for (int l = p->nlayers - 1; l >= 0; l--) {
        const PlanLayer *L = &p->layers[l];
        int k;
        if (L->alias_of < 0 && (k = nonfinite(base, L->dy)) != 0) {
            snprintf(where, len, "%s (%s): the gradient of its output holds %s", L->name, layer_kind_name(L->kind),
                     what[k]);
            return true;
        }
    }
    for (int pass = 0; pass < 2; pass++) /* the gradients, then the values the update wrote */
        for (int i = 0; i < p->nparams; i++) {
            const PlanParam *q = &p->params[i];
            BufRef r = q->ref;
            if (pass == 0) {
                if (!q->learnable)
                    continue;
                r.arena = ARENA_GRAD;
            }
            const int k = nonfinite(base, r);
            if (k != 0) {
                snprintf(where, len, "%s (%s): %s %s holds %s", p->layers[q->layer].name,
                         layer_kind_name(p->layers[q->layer].kind), pass == 0 ? "the gradient of its" : "its",
                         q->role, what[k]);
                return true;
            }
        }
    return false;
}

void trainer_free(Trainer *t)
{
    for (int a = 0; a < ARENA_COUNT; a++) /* NULL (the input arena, a failed init): a no-op */
        ops_buffer_free(t->mem[a], buffer_bytes(t->plan.arena_bytes[a]));
    ops_buffer_free(t->data, buffer_bytes(t->batch_stride * (size_t)t->nbatches));
    free(t->buckets);
    plan_free(&t->plan);
    memset(t, 0, sizeof *t);
}

double schedule_lr(const OptSpec *o, double epoch)
{
    const ScheduleSpec *s = &o->schedule;
    double lr = o->lr;
    if (s->kind == SCHED_CONSTANT)
        return lr;
    if (s->kind == SCHED_WARMUP_STEP && epoch < s->warmup_epochs) /* linear from lr*from to lr */
        return lr * (s->warmup_from + (1.0 - s->warmup_from) * epoch / s->warmup_epochs);
    double f = 1.0;
    for (int i = 0; i < s->nboundaries; i++)
        if (epoch >= s->boundaries[i])
            f = s->factors[i];
    return lr * f;
}

void plan_step_values(Plan *p, void *const base[ARENA_COUNT], long updates, double steps_per_epoch)
{
    double epoch = steps_per_epoch > 0 ? (double)updates / steps_per_epoch : 0;
    for (int i = p->update_op; i >= 0 && i < p->nops; i++) { /* the update ops close the plan */
        if (!is_optimizer(&p->ops[i].desc)) /* the clipping norm: no lr, no step */
            continue;
        UpdateDesc *u = &p->ops[i].desc.u.update;
        u->lr = (float)schedule_lr(&p->model->opt, epoch);
        u->step = updates + 1;
    }
    if (p->step_counter.bytes) {
        int32_t c = (int32_t)updates;
        memcpy((char *)base[ARENA_STATE] + p->step_counter.offset, &c, sizeof c);
    }
}

double trainer_step(Trainer *t, int step, double *op_time_s)
{
    /* FISTA codes one fixed set of samples: its iterations all see batch 0 */
    int b = t->plan.model->algorithm == ALGO_FISTA ? 0 : step % t->nbatches;
    t->base[ARENA_INPUT] = t->data + (size_t)b * t->batch_stride;
    plan_step_values(&t->plan, t->base, t->updates, t->steps_per_epoch);
    if (t->plan.model->algorithm == ALGO_FISTA) { /* an iteration, not a training step */
        fista_before_step(&t->plan, &t->fista_t);
        plan_exec(&t->plan, t->base, op_time_s);
        t->updates++;
        return fista_objective(&t->plan, t->base);
    }
    const Plan *p = &t->plan;
    if (t->nbuckets > 0) { /* each bucket's sum starts when backward has written it */
        const int update = p->update_op >= 0 ? p->update_op : p->nops;
        float *g = t->base[ARENA_GRAD];
        int next = 0;
        double t0 = comm_wtime();
        for (int i = 0; i < update; i++) {
            plan_exec_range(p, t->base, i, i + 1, op_time_s);
            while (next < t->nbuckets && t->buckets[next].ready_op <= i) {
                const GradBucket *bk = &t->buckets[next++];
                if (comm_dp_iallreduce_sum_f32(g + bk->first, bk->count) != 0) { /* too many in flight */
                    comm_wait_all();
                    comm_dp_iallreduce_sum_f32(g + bk->first, bk->count);
                }
            }
            comm_progress();
        }
        double t1 = comm_wtime();
        comm_wait_all();
        double t2 = comm_wtime();
        plan_exec_range(p, t->base, update, p->nops, op_time_s);
        t->last = (StepTimes){.compute_s = (t1 - t0) + (comm_wtime() - t2), .wait_s = 0, .comm_s = t2 - t1};
    } else if (t->dp.nranks == 1 || p->mode == PLAN_INFERENCE) {
        double t0 = comm_wtime();
        plan_exec(p, t->base, op_time_s);
        t->last = (StepTimes){.compute_s = comm_wtime() - t0};
    } else { /* forward and backward; sum the gradients over the ranks; update */
        /* A barrier on each side of the sum keeps the step's phases apart, so each rank's
         * allreduce time is the collective's, as the calibration times it. The first one
         * takes the ranks' imbalance (the wait); the second stops the first ranks out of
         * the sum from starting their update on cores the others still need: measured at
         * np=4 on 2 cores (P1B1, batch 16 per rank), without it ~200 ms of update moved
         * into the slowest rank's allreduce (compute 1.11-1.15 s, allreduce 0.95-0.97 s;
         * with it 1.33-1.36 s and 0.78-0.88 s; the step 2.15-2.27 s either way). */
        int update = p->update_op >= 0 ? p->update_op : p->nops;
        double t0 = comm_wtime();
        plan_exec_range(p, t->base, 0, update, op_time_s);
        double t1 = comm_wtime();
        comm_barrier();
        double t2 = comm_wtime();
        comm_dp_allreduce_sum_f32(t->base[ARENA_GRAD], p->arena_bytes[ARENA_GRAD] / sizeof(float));
        double t3 = comm_wtime();
        comm_barrier();
        double t4 = comm_wtime();
        plan_exec_range(p, t->base, update, p->nops, op_time_s);
        t->last = (StepTimes){.compute_s = (t1 - t0) + (comm_wtime() - t4), .wait_s = (t2 - t1) + (t4 - t3),
                              .comm_s = t3 - t2};
    }
    t->updates++;
    float loss;
    memcpy(&loss, (char *)t->base[ARENA_ACT] + p->loss.offset, sizeof loss);
    /* every rank of a tensor-parallel group has the whole loss: the mean over all ranks */
    return ranks_mean_loss(loss, t->dp.nranks * (t->dp.tp > 1 ? t->dp.tp : 1));
}
