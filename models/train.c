/* models/train.c — the trainer: memory check, one allocation per arena, initialisation,
 * and the training step (which is plan_exec on the arenas). */
#include "models/train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ALIGN = 64 };

static size_t round_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

double trainer_bytes_needed(const Plan *p, int nbatches)
{
    double total = 0;
    for (int a = 0; a < ARENA_COUNT; a++)
        if (a != ARENA_INPUT)
            total += (double)round_up(p->arena_bytes[a]);
    return total + (double)nbatches * (double)round_up(p->arena_bytes[ARENA_INPUT]);
}

static double read_proc_kb(const char *file, const char *field)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return -1;
    char line[256];
    size_t n = strlen(field);
    double v = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            v = strtod(line + n + 1, NULL) * 1024.0;
            break;
        }
    fclose(f);
    return v;
}

double mem_available_bytes(void) { return read_proc_kb("/proc/meminfo", "MemAvailable"); }
double peak_rss_bytes(void) { return read_proc_kb("/proc/self/status", "VmHWM"); }

static void *alloc_zeroed(size_t bytes)
{
    size_t n = round_up(bytes ? bytes : ALIGN);
    void *p = aligned_alloc(ALIGN, n);
    if (p)
        memset(p, 0, n); /* also faults the pages in now, not inside the first timed step */
    return p;
}

/* Enough batches that a short run does not train on one batch only, few enough that the
 * data set stays small next to the model. */
int trainer_data_batches(int steps) { return steps < 8 ? steps : 8; }

int trainer_check_memory(const Plan *p, int nbatches, char *err, size_t errlen)
{
    double need = trainer_bytes_needed(p, nbatches);
    double avail = mem_available_bytes();
    /* 10% headroom for the program, libraries and the kernel's own use */
    if (avail <= 0 || need <= 0.9 * avail)
        return 0;
    const size_t *ab = p->arena_bytes;
    const double gib = 1073741824.0;
    snprintf(err, errlen,
             "%s at batch %d needs %.2f GiB (parameters+gradients+optimizer %.2f, activations %.2f, "
             "workspace %.2f, data %.2f) but only %.2f GiB of memory is available; use a smaller --batch",
             p->model->name, p->batch, need / gib, (double)(ab[ARENA_PARAM] + ab[ARENA_GRAD] + ab[ARENA_OPT]) / gib,
             (double)(ab[ARENA_ACT] + ab[ARENA_ACTGRAD]) / gib, (double)ab[ARENA_WS] / gib,
             (double)nbatches * (double)ab[ARENA_INPUT] / gib, avail / gib);
    return -1;
}

int trainer_init(Trainer *t, const ModelSpec *m, int batch, int nbatches, uint64_t seed, char *err,
                 size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (plan_build(m, batch, &t->plan, err, errlen) != 0)
        return -1;
    if (trainer_check_memory(&t->plan, nbatches, err, errlen) != 0) {
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
    params_init(&t->plan, t->mem[ARENA_PARAM], seed);
    data_generate(&t->plan, t->data, nbatches, t->batch_stride, seed + 1);
    return 0;
}

void trainer_free(Trainer *t)
{
    for (int a = 0; a < ARENA_COUNT; a++)
        free(t->mem[a]);
    free(t->data);
    plan_free(&t->plan);
    memset(t, 0, sizeof *t);
}

double trainer_step(Trainer *t, int step, double *op_time_s)
{
    t->base[ARENA_INPUT] = t->data + (size_t)(step % t->nbatches) * t->batch_stride;
    plan_exec(&t->plan, t->base, op_time_s);
    float loss;
    memcpy(&loss, (char *)t->base[ARENA_ACT] + t->plan.loss.offset, sizeof loss);
    return loss;
}
