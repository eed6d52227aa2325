/* models/train.h — really training a model: arenas allocated once from the plan,
 * parameters initialised, a seeded synthetic data set, and timed training steps.
 */
#ifndef DLPERF_TRAIN_H
#define DLPERF_TRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "models/plan.h"

typedef struct {
    Plan plan;
    void *base[ARENA_COUNT]; /* arena bases; base[ARENA_INPUT] moves through the data set */
    void *mem[ARENA_COUNT];  /* owned allocations */
    char *data;              /* nbatches consecutive copies of the input arena's layout */
    int nbatches;
    size_t batch_stride;     /* bytes between batches in `data` */
} Trainer;

/* Bytes a run allocates: every arena plus the data set of nbatches batches. */
double trainer_bytes_needed(const Plan *p, int nbatches);
/* Batches in the synthetic data set a run of `steps` steps cycles through. */
int trainer_data_batches(int steps);
/* 0 if a run of the plan with nbatches fits in the memory available now, else -1 with a
 * message naming what it needs (by category) and what is available. */
int trainer_check_memory(const Plan *p, int nbatches, char *err, size_t errlen);

/* Builds the plan, refuses (before allocating anything) if the run would not fit in the
 * memory available, allocates and zeroes the arenas, initialises parameters and
 * generates the data set. On error returns -1 with one line in err (which names the
 * memory needed and available when that is the reason). */
int trainer_init(Trainer *t, const ModelSpec *m, int batch, int nbatches, uint64_t seed, char *err,
                 size_t errlen);
void trainer_free(Trainer *t);

/* One training step (forward, backward, update) on batch `step % nbatches`. Returns the
 * loss of that batch before the update. op_time_s: per-op trace, or NULL. */
double trainer_step(Trainer *t, int step, double *op_time_s);

/* Initialises the parameter arena from the plan's parameter table (seeded). */
void params_init(const Plan *p, float *params, uint64_t seed);
/* Fills the data set (nbatches batches laid out like ARENA_INPUT, `stride` bytes apart). */
void data_generate(const Plan *p, char *data, int nbatches, size_t stride, uint64_t seed);

/* MemAvailable from /proc/meminfo (bytes), or -1 if unknown. */
double mem_available_bytes(void);
/* Peak resident set size of this process (VmHWM, bytes), or -1. */
double peak_rss_bytes(void);

#endif
