/* models/train.h — really training a model: arenas allocated once from the plan,
 * parameters initialised, a seeded synthetic data set, and timed training steps.
 */
#ifndef DLPERF_TRAIN_H
#define DLPERF_TRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "models/dataset.h"
#include "models/plan.h"

/* Data-parallel training: this process is rank `rank` of `nranks`, `local_ranks` of them
 * on this node (sharing its memory). {0, 1, 1}: one process. bucket_bytes 0: the gradients
 * are summed by one allreduce after backward; else in buckets of about that size, each
 * started (MPI_Iallreduce) as soon as the backward ops writing it are done and progressed
 * between the ops that follow (Horovod's tensor fusion and overlap). */
typedef struct {
    int rank, nranks, local_ranks;
    size_t bucket_bytes;
    /* tensor parallel (comm_split_tensor_parallel): the model is one of `tp` ranks' shares
     * (ModelSpec.tp_whole), rank and nranks are this process's place in the data-parallel
     * group and its size, local_ranks still every process on the node; 0 or 1: none */
    int tp;
} DataParallel;

/* A contiguous range of the gradient buffer summed by one non-blocking allreduce. */
typedef struct {
    size_t first, count; /* floats */
    int ready_op;        /* the last op of the step that writes into it */
} GradBucket;

/* Where the last step's time went on this rank (data-parallel runs). */
typedef struct {
    double compute_s; /* forward, backward and update ops (with buckets: and starting and
                         progressing their allreduces between the backward ops) */
    double wait_s;    /* in the barriers around the gradient sum: for the slowest rank
                         before it, for the last rank out of it after (0 with buckets:
                         there the wait is inside comm_s) */
    double comm_s;    /* the gradient allreduce; with buckets the part not hidden behind
                         backward (waiting for the last sums). The 1/P scaling is compute. */
} StepTimes;

typedef struct {
    Plan plan;
    void *base[ARENA_COUNT]; /* arena bases; base[ARENA_INPUT] moves through the data set */
    void *mem[ARENA_COUNT];  /* owned allocations */
    char *data;              /* nbatches consecutive copies of the input arena's layout */
    int nbatches;
    size_t batch_stride;     /* bytes between batches in `data` */
    long updates;            /* optimizer steps taken (Adam's t, the schedules' clock) */
    double fista_t;          /* FISTA's momentum sequence t_k */
    double steps_per_epoch;  /* for learning-rate schedules given in epochs */
    DataParallel dp;
    StepTimes last;          /* of the last trainer_step */
    GradBucket *buckets;     /* dp.bucket_bytes > 0: in the order they become ready */
    int nbuckets;
} Trainer;

/* Makes p's updates average gradients summed over `nranks` data-parallel ranks (g / P
 * inside the optimizer kernel, UpdateDesc.grad_ranks: no pass of its own over the
 * gradient buffer, which the predictor would have to price). */
void plan_average_ranks(Plan *p, int nranks);

/* Bytes a run allocates: every arena plus the data set of nbatches batches, each buffer
 * in whole pages as it occupies memory (huge pages round a 2.1 MiB arena to 4 MiB). */
double trainer_bytes_needed(const Plan *p, int nbatches);
/* Batches in the synthetic data set a run of `steps` steps cycles through: at most
 * TRAINER_DATA_BATCHES, the batch in use and the next. */
enum { TRAINER_DATA_BATCHES = 2 };
int trainer_data_batches(int steps);
/* 0 if a run of the plan with nbatches fits in the memory available now, else -1 with a
 * message naming what it needs (by category) and what is available. */
int trainer_check_memory(const Plan *p, int nbatches, char *err, size_t errlen);
/* The same when `processes` processes of this size share the node's memory; with
 * `allreduce` (a data-parallel training job) each also holds the MPI library's temporaries
 * for the gradients' sum, counted as the gradient buffer once more (their upper bound). */
int trainer_check_memory_shared(const Plan *p, int nbatches, int processes, bool allreduce, char *err,
                                size_t errlen);

/* Builds the plan, refuses (before allocating anything) if the run would not fit in the
 * memory available, allocates and zeroes the arenas, initialises parameters and
 * generates the data set. On error returns -1 with one line in err (which names the
 * memory needed and available when that is the reason). */
int trainer_init(Trainer *t, const ModelSpec *m, int batch, int nbatches, uint64_t seed, char *err,
                 size_t errlen);
/* The same for a plan mode: PLAN_FWD_BWD (gradients, no update) and PLAN_INFERENCE time
 * what convnet-benchmarks calls forward-backward and forward. */
int trainer_init_mode(Trainer *t, const ModelSpec *m, int batch, PlanMode mode, int nbatches, uint64_t seed,
                      char *err, size_t errlen);
/* Data-parallel: `batch` is this rank's share; the ranks' shares together are the global
 * batch (rank r holds samples r*batch .. (r+1)*batch-1 of every global batch of the same
 * synthetic data set one process would train on). Every rank starts from the same
 * parameters (same seed); trainer_step sums the gradients over the ranks (one
 * MPI_Allreduce over the gradient buffer, the Horovod pattern) and divides by the rank
 * count before the update, so the update is that of the global batch. Batch norm
 * statistics stay per rank (as Horovod's, without synchronised batch norm) and dropout
 * masks are drawn per rank, so models with those layers train equivalently, not
 * identically. All ranks must call it (collective). */
int trainer_init_dp(Trainer *t, const ModelSpec *m, int batch, PlanMode mode, int nbatches, uint64_t seed,
                    const DataParallel *dp, char *err, size_t errlen);
void trainer_free(Trainer *t);
/* After a step whose loss is not finite: the first tensor holding a NaN or an infinity, in
 * the order the step wrote them (the layers' outputs forward, their gradients backward,
 * then the parameters' gradients and the parameters), named in where ("conv3 (conv2d):
 * its output holds NaN"). false where every tensor is finite (the loss alone overflowed). */
bool plan_find_nonfinite(const Plan *p, void *const base[ARENA_COUNT], char *where, size_t len);

/* One training step (forward, backward, update) on batch `step % nbatches`. Returns the
 * loss of that batch before the update (data-parallel: the mean over the ranks; t->last
 * says where this rank's time went). op_time_s: per-op trace, or NULL. Before the
 * plan runs, the optimizer op gets this step's learning rate (schedule) and step number,
 * and the dropout counter advances. */
double trainer_step(Trainer *t, int step, double *op_time_s);

/* One training step of plan p (its per-step values set) on the batch in base's input
 * arena. nranks > 1: data-parallel — forward and backward, the gradients summed over the
 * ranks (one MPI_Allreduce), then the update, which averages them (p marked by
 * plan_average_ranks); returns the seconds the sum took (0 for one process). All ranks
 * must call it (collective). */
double plan_exec_data_parallel(const Plan *p, void *const base[ARENA_COUNT], int nranks);

/* Data-parallel: the global batch's loss, the mean of the ranks' losses (collective);
 * one process: loss itself. */
float ranks_mean_loss(float loss, int nranks);

/* The learning rate of the schedule at a (fractional) epoch. */
double schedule_lr(const OptSpec *o, double epoch);
/* Prepares the plan's per-step values: update op lr/step from the schedule at `updates`
 * steps done, dropout counter = updates. */
void plan_step_values(Plan *p, void *const base[ARENA_COUNT], long updates, double steps_per_epoch);

/* Initialises the parameters and state from the plan's tensor table (seeded). */
void params_init(const Plan *p, float *params, float *state, uint64_t seed);
/* The same values, one at a time: put(i, j, v, ctx) gets value j of tensor p->params[i], in
 * params_init's order (a tensor-parallel rank keeps its slices of a whole model's values
 * without holding the whole model). */
typedef void (*ParamPut)(int tensor, size_t j, float v, void *ctx);
void params_draw(const Plan *p, uint64_t seed, ParamPut put, void *ctx);
/* Fills the data set (nbatches batches laid out like ARENA_INPUT, `stride` bytes apart). */
void data_generate(const Plan *p, char *data, int nbatches, size_t stride, uint64_t seed);
/* The same batches, one at a time: each generated into `batch` (one batch's bytes) and
 * handed to take(b, batch, ctx) before the next overwrites it. */
void data_generate_each(const Plan *p, int nbatches, uint64_t seed, char *batch,
                        void (*take)(int b, const char *batch, void *ctx), void *ctx);
/* A synthetic data set of n samples with the model's input shape and target kind, from
 * the model's generator (for epoch training of models whose real data is not offline).
 * Classes are assigned in turn starting at first_class (balanced). */
int data_synthetic(const ModelSpec *m, int classes, int n, int first_class, uint64_t seed, Dataset *ds,
                   char *err, size_t errlen);

#endif
