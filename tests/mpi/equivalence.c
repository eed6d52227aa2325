/* tests/mpi/equivalence.c — data-parallel training is the training of the global batch.
 *
 * Run under mpirun (tests/test_mpi.sh runs it with -np 2 and -np 4): every rank trains
 * its share of the batch data-parallel for a few steps while rank 0 also trains the same
 * model alone at the global batch. After each step the losses must agree, and after the
 * last step every rank's parameters must equal the single process's within float
 * tolerance (the ranks sum their shares' gradients in a different order than one GEMM
 * over the whole batch does); the same with the gradients summed in overlapped buckets.
 * Prints "ok NAME" / "FAIL NAME: why" lines on rank 0.
 */
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/model_json.h"
#include "models/train.h"
#include "ops/comm.h"
#include "ops/ops.h"

/* No batch norm and no dropout: with those, ranks train equivalently, not identically. */
static const char *const models[] = {
    "{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"dp-cnn\", \"input\": {\"shape\": [3, 12, 12]},"
    " \"layers\": ["
    "  {\"name\": \"conv1\", \"type\": \"conv2d\", \"filters\": 8, \"kernel\": 3, \"padding\": \"same\", \"activation\": \"relu\"},"
    "  {\"name\": \"pool1\", \"type\": \"pool2d\", \"pool\": \"max\", \"size\": 2},"
    "  {\"name\": \"flat\", \"type\": \"flatten\"},"
    "  {\"name\": \"fc\", \"type\": \"dense\", \"units\": 10}],"
    " \"loss\": \"softmax_cross_entropy\", \"classes\": 10,"
    " \"optimizer\": {\"type\": \"sgd\", \"lr\": 0.05, \"momentum\": 0.9, \"weight_decay\": 1e-4},"
    " \"data\": \"images\", \"batch\": 8}",
    "{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"dp-lstm\", \"input\": {\"shape\": [5, 6]},"
    " \"layers\": ["
    "  {\"name\": \"lstm\", \"type\": \"lstm\", \"units\": 8, \"return_sequences\": true},"
    "  {\"name\": \"fc\", \"type\": \"dense\", \"units\": 3}],"
    " \"loss\": \"mse\", \"optimizer\": {\"type\": \"adam\", \"lr\": 0.01},"
    " \"data\": \"sequence\", \"batch\": 8}",
};

enum { STEPS = 6, GLOBAL_BATCH = 8 };

static int failures;

static void report(int rank, bool ok, const char *name, const char *why)
{
    if (rank != 0)
        return;
    if (ok)
        printf("ok %s\n", name);
    else
        printf("FAIL %s: %s\n", name, why);
    fflush(stdout);
    if (!ok)
        failures++;
}

static void check_model(const char *json, int rank, int nranks, size_t bucket_bytes)
{
    char err[512], name[160], why[256];
    ModelSpec *m = model_json_parse(json, "equivalence", err, sizeof err);
    if (!m) {
        snprintf(name, sizeof name, "model parses");
        report(rank, false, name, err);
        return;
    }
    const int local = GLOBAL_BATCH / nranks;
    const DataParallel dp = {rank, nranks, nranks, bucket_bytes}, one = {0, 1, 1, 0};
    char how[64] = "";
    if (bucket_bytes)
        snprintf(how, sizeof how, ", overlapped buckets of %zu B", bucket_bytes);
    Trainer t, ref;
    int rc = trainer_init_dp(&t, m, local, PLAN_TRAIN, STEPS, 11, &dp, err, sizeof err);
    snprintf(name, sizeof name, "%s: np=%d%s trainer starts", m->name, nranks, how);
    double rcs = rc;
    comm_allreduce_max_f64(&rcs, 1);
    report(rank, rcs == 0, name, err);
    if (rcs != 0) {
        model_free(m);
        return;
    }
    bool have_ref = rank == 0 && trainer_init_dp(&ref, m, GLOBAL_BATCH, PLAN_TRAIN, STEPS, 11, &one, err, sizeof err) == 0;
    double worst_loss = 0;
    for (int s = 0; s < STEPS; s++) {
        double l = trainer_step(&t, s, NULL);
        if (have_ref) {
            double lr = trainer_step(&ref, s, NULL);
            worst_loss = fmax(worst_loss, fabs(l - lr) / fmax(fabs(lr), 1e-6));
        }
    }
    snprintf(name, sizeof name, "%s: np=%d%s step losses equal one process's at batch %d", m->name, nranks, how,
             GLOBAL_BATCH);
    snprintf(why, sizeof why, "largest relative loss difference %.3g (limit 1e-4)", worst_loss);
    report(rank, have_ref && worst_loss < 1e-4, name, have_ref ? why : err);

    /* every rank's parameters against rank 0's single-process ones */
    size_t n = t.plan.arena_bytes[ARENA_PARAM] / sizeof(float);
    float *mine = t.base[ARENA_PARAM];
    float *want = malloc(n * sizeof *want);
    if (have_ref)
        memcpy(want, ref.base[ARENA_PARAM], n * sizeof *want);
    comm_bcast(want, n * sizeof *want, 0);
    double scale = 0, diff = 0, moved = 0;
    for (size_t i = 0; i < n; i++) {
        scale = fmax(scale, fabs(want[i]));
        diff = fmax(diff, fabs((double)mine[i] - want[i]));
    }
    double worst[2] = {diff / fmax(scale, 1e-12), 0};
    comm_allreduce_max_f64(worst, 1);
    snprintf(name, sizeof name, "%s: np=%d%s weights after %d steps equal one process's", m->name, nranks, how,
             STEPS);
    snprintf(why, sizeof why, "largest difference %.3g of the largest weight (limit 1e-5)", worst[0]);
    report(rank, worst[0] < 1e-5, name, why);
    /* and training moved them: the comparison is not of untouched initial values */
    if (have_ref) {
        Trainer fresh;
        if (trainer_init_dp(&fresh, m, GLOBAL_BATCH, PLAN_TRAIN, 1, 11, &one, err, sizeof err) == 0) {
            const float *w0 = fresh.base[ARENA_PARAM];
            for (size_t i = 0; i < n; i++)
                moved = fmax(moved, fabs((double)want[i] - w0[i]));
            trainer_free(&fresh);
        }
    }
    snprintf(name, sizeof name, "%s%s: training moved the weights", m->name, how);
    if (bucket_bytes) { /* more than one bucket, or the overlap was not exercised */
        snprintf(why, sizeof why, "%d bucket(s)", t.nbuckets);
        char bn[200];
        snprintf(bn, sizeof bn, "%s: np=%d gradients in several buckets", m->name, nranks);
        report(rank, t.nbuckets > 2, bn, why);
    }
    snprintf(why, sizeof why, "largest change %.3g", moved);
    report(rank, rank != 0 || moved > 1e-4, name, why);
    free(want);
    if (have_ref)
        trainer_free(&ref);
    trainer_free(&t);
    model_free(m);
}

/* Under a job, large blocks (Open MPI's allreduce temporaries) come from the heap once the
 * job asks for it: glibc's default serves 256 MiB with a fresh mmap (mallinfo2's hblkhd
 * grows), after comm_reuse_collective_buffers from the heap (it does not). */
static void check_collective_buffers(int rank)
{
#ifdef __SANITIZE_ADDRESS__
    /* AddressSanitizer serves every malloc itself: glibc's mmap threshold is not in play */
    if (rank == 0)
        printf("skip collective-buffers-in-heap: AddressSanitizer's allocator replaces glibc's\n");
    return;
#endif
    const size_t big = (size_t)256 << 20;
    size_t before = mallinfo2().hblkhd;
    void *volatile p = malloc(big); /* volatile: the compiler may not drop a malloc/free pair */
    const bool mapped_by_default = mallinfo2().hblkhd > before;
    free(p);
    comm_reuse_collective_buffers();
    before = mallinfo2().hblkhd;
    p = malloc(big);
    const bool from_heap = p && mallinfo2().hblkhd == before;
    free(p);
    report(rank, mapped_by_default && from_heap, "collective-buffers-in-heap",
           !mapped_by_default ? "glibc served 256 MiB from the heap before the call (MALLOC_* set?): nothing proven"
                              : "a 256 MiB block is still a fresh mmap after comm_reuse_collective_buffers");
}

int main(void)
{
    char err[256];
    if (!comm_launched()) {
        printf("FAIL equivalence: run me under mpirun (tests/test_mpi.sh does)\n");
        return 1;
    }
    if (comm_start(err, sizeof err) != 0) {
        printf("FAIL equivalence: %s\n", err);
        return 1;
    }
    ops_set_threads(1);
    const int rank = comm_rank(), nranks = comm_size();
    check_collective_buffers(rank);
    if (GLOBAL_BATCH % nranks != 0) {
        report(rank, false, "equivalence", "the rank count must divide the global batch 8");
        return comm_finish(1);
    }
    /* one allreduce after backward; and 1 KiB buckets overlapped with backward */
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        check_model(models[i], rank, nranks, 0);
        check_model(models[i], rank, nranks, 1024);
    }
    double f = failures;
    comm_bcast(&f, sizeof f, 0);
    comm_finish(0); /* every rank knows the verdict: finalize, no job abort */
    return f > 0 ? 1 : 0;
}
