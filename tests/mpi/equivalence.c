/* tests/mpi/equivalence.c — data-parallel training is the training of the global batch,
 * and so is tensor-parallel training.
 *
 * Run under mpirun (tests/test_mpi.sh runs it with -np 2 and -np 4): every rank trains
 * its share of the batch data-parallel for a few steps while rank 0 also trains the same
 * model alone at the global batch. After each step the losses must agree, and after the
 * last step every rank's parameters must equal the single process's within float
 * tolerance (the ranks sum their shares' gradients in a different order than one GEMM
 * over the whole batch does); the same with the gradients summed in overlapped buckets.
 * Last, the job splits into tensor-parallel pairs (tp 2, data parallel over the pairs): a
 * small GPT's shares train against the whole model on one process, its gradients clipped
 * to a norm they exceed (so that the norm over the split tensors matters), and every rank's
 * share must end equal to its slice of the single process's parameters.
 * Prints "ok NAME" / "FAIL NAME: why" lines on rank 0.
 */
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/model_json.h"
#include "models/train.h"
#include "models/transformer.h"
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
    const DataParallel dp = {rank, nranks, nranks, bucket_bytes, 1}, one = {0, 1, 1, 0, 1};
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

/* A two-block GPT: causal attention of 4 heads, a GELU MLP, the LM head tied to the token
 * table of 17 rows (split 9 + 8 over two ranks, the second block padded); AdamW with its
 * gradients clipped to 0.05, below their norm. */
static const char tiny_gpt[] =
    "{\"format\": \"dlperf-model\", \"version\": 1, \"name\": \"tp-gpt\", \"input\": {\"shape\": [8, 1], \"ids\": true},"
    " \"layers\": ["
    "  {\"name\": \"wte\", \"type\": \"embedding\", \"input_dim\": 17, \"output_dim\": 16, \"trainable\": true,"
    "   \"kernel_initializer\": \"normal\", \"init_scale\": 0.3, \"inputs\": [\"input\"]},"
    "  {\"name\": \"wpe\", \"type\": \"position\", \"positions\": 8, \"kernel_initializer\": \"normal\", \"init_scale\": 0.3},"
    "  {\"name\": \"h0.ln_1\", \"type\": \"layernorm\"},"
    "  {\"name\": \"h0.attn\", \"type\": \"attention\", \"heads\": 4, \"causal\": true, \"kernel_initializer\": \"normal\", \"init_scale\": 0.3},"
    "  {\"name\": \"h0.res_1\", \"type\": \"add\", \"inputs\": [\"wpe\", \"h0.attn\"]},"
    "  {\"name\": \"h0.ln_2\", \"type\": \"layernorm\"},"
    "  {\"name\": \"h0.fc\", \"type\": \"dense\", \"units\": 64, \"activation\": \"gelu\", \"kernel_initializer\": \"normal\", \"init_scale\": 0.3},"
    "  {\"name\": \"h0.proj\", \"type\": \"dense\", \"units\": 16, \"kernel_initializer\": \"normal\", \"init_scale\": 0.3},"
    "  {\"name\": \"h0.res_2\", \"type\": \"add\", \"inputs\": [\"h0.res_1\", \"h0.proj\"]},"
    "  {\"name\": \"h1.ln_1\", \"type\": \"layernorm\"},"
    "  {\"name\": \"h1.attn\", \"type\": \"attention\", \"heads\": 4, \"causal\": true, \"kernel_initializer\": \"normal\", \"init_scale\": 0.3},"
    "  {\"name\": \"h1.res_1\", \"type\": \"add\", \"inputs\": [\"h0.res_2\", \"h1.attn\"]},"
    "  {\"name\": \"h1.ln_2\", \"type\": \"layernorm\"},"
    "  {\"name\": \"h1.fc\", \"type\": \"dense\", \"units\": 64, \"activation\": \"gelu\", \"kernel_initializer\": \"normal\", \"init_scale\": 0.3},"
    "  {\"name\": \"h1.proj\", \"type\": \"dense\", \"units\": 16, \"kernel_initializer\": \"normal\", \"init_scale\": 0.3},"
    "  {\"name\": \"h1.res_2\", \"type\": \"add\", \"inputs\": [\"h1.res_1\", \"h1.proj\"]},"
    "  {\"name\": \"ln_f\", \"type\": \"layernorm\"},"
    "  {\"name\": \"lm_head\", \"type\": \"dense\", \"units\": 17, \"use_bias\": false, \"tie\": \"wte\"}],"
    " \"loss\": \"softmax_cross_entropy\", \"classes\": 17,"
    " \"optimizer\": {\"type\": \"adamw\", \"lr\": 0.01, \"weight_decay\": 0.1, \"clip_norm\": 0.05},"
    " \"data\": \"tokens\", \"batch\": 8}";

/* The job in tensor-parallel pairs: each pair trains the GPT's shares data-parallel with the
 * other pairs; rank 0 also trains the whole model alone at the global batch. */
static void check_tensor_parallel(int rank, int nranks)
{
    char err[512], name[160], why[256];
    const int tp = 2, dp_ranks = nranks / tp;
    ModelSpec *whole = model_json_parse(tiny_gpt, "equivalence", err, sizeof err);
    ModelSpec share;
    if (!whole || transformer_tensor_parallel(whole, tp, &share, err, sizeof err) != 0) {
        report(rank, false, "tp-gpt: the share builds", err);
        if (whole)
            model_free(whole);
        return;
    }
    if (comm_split_tensor_parallel(tp, err, sizeof err) != 0) {
        report(rank, false, "tp-gpt: the job splits into pairs", err);
        free((void *)share.layers);
        model_free(whole);
        return;
    }
    const LayerSpec *head = &share.layers[share.nlayers - 1];
    snprintf(why, sizeof why, "the share's head has %d classes of %d (vocabulary %d)", head->u.dense.units,
             whole->classes, share.tp_vocab);
    report(rank, head->u.dense.units == 9 && share.tp_vocab == 17, "tp-gpt: the vocabulary splits 9 + 8", why);
    const DataParallel dp = {comm_dp_rank(), dp_ranks, nranks, 0, tp}, one = {0, 1, 1, 0, 1};
    Trainer t, ref;
    int rc = trainer_init_dp(&t, &share, GLOBAL_BATCH / dp_ranks, PLAN_TRAIN, STEPS, 11, &dp, err, sizeof err);
    double rcs = rc;
    comm_allreduce_max_f64(&rcs, 1);
    snprintf(name, sizeof name, "tp-gpt: tp 2 x dp %d trainer starts", dp_ranks);
    report(rank, rcs == 0, name, err);
    if (rcs != 0) {
        free((void *)share.layers);
        model_free(whole);
        return;
    }
    bool have_ref = rank == 0 && trainer_init_dp(&ref, whole, GLOBAL_BATCH, PLAN_TRAIN, STEPS, 11, &one, err,
                                                 sizeof err) == 0;
    double worst_loss = 0, first_norm = 0;
    for (int s = 0; s < STEPS; s++) {
        double l = trainer_step(&t, s, NULL);
        if (have_ref) {
            double lr = trainer_step(&ref, s, NULL);
            worst_loss = fmax(worst_loss, fabs(l - lr) / fmax(fabs(lr), 1e-6));
            if (s == 0) {
                float sq;
                memcpy(&sq, (char *)ref.base[ARENA_ACT] + ref.plan.grad_sumsq.offset, sizeof sq);
                first_norm = sqrt(sq);
            }
        }
    }
    snprintf(name, sizeof name, "tp-gpt: tp 2 x dp %d step losses equal one process's at batch %d", dp_ranks,
             GLOBAL_BATCH);
    snprintf(why, sizeof why, "largest relative loss difference %.3g (limit 1e-4)", worst_loss);
    report(rank, have_ref && worst_loss < 1e-4, name, have_ref ? why : err);
    snprintf(why, sizeof why, "the first step's gradient norm %.3g", first_norm);
    report(rank, rank != 0 || first_norm > 0.05, "tp-gpt: the gradients were clipped", why);

    /* each rank's share against its slice of the single process's parameters */
    Plan wp;
    double worst[2] = {1, 0};
    if (plan_build_mode(whole, 1, PLAN_INFERENCE, &wp, err, sizeof err) == 0) {
        const size_t n = wp.arena_bytes[ARENA_PARAM] / sizeof(float), ns = t.plan.arena_bytes[ARENA_PARAM] / sizeof(float);
        float *want = calloc(n + 1, sizeof *want), *slice = calloc(ns + 1, sizeof *slice);
        if (have_ref)
            memcpy(want, ref.base[ARENA_PARAM], n * sizeof *want);
        comm_bcast(want, n * sizeof *want, 0);
        if (transformer_tp_slice(&t.plan, slice, &wp, want, comm_tp_rank(), err, sizeof err) == 0) {
            const float *mine = t.base[ARENA_PARAM];
            /* but the keys' biases: softmax does not change when every key moves by one vector,
             * so their gradient is zero but for rounding, which Adam scales up into steps of
             * either sign (per head [q k v], 4 values each) */
            double scale = 0, diff = 0;
            for (int q = 0; q < t.plan.nparams; q++) {
                const PlanParam *pp = &t.plan.params[q];
                const bool keys = strcmp(pp->role, "qkv_bias") == 0;
                for (size_t j = 0, at = pp->ref.offset / sizeof(float); j < pp->count; j++, at++) {
                    scale = fmax(scale, fabs(slice[at]));
                    if (!keys || (j / 4) % 3 != 1)
                        diff = fmax(diff, fabs((double)mine[at] - slice[at]));
                }
            }
            worst[0] = diff / fmax(scale, 1e-12);
        }
        free(want);
        free(slice);
        plan_free(&wp);
    }
    comm_allreduce_max_f64(worst, 1);
    snprintf(name, sizeof name, "tp-gpt: tp 2 x dp %d shares after %d steps equal one process's slices", dp_ranks,
             STEPS);
    snprintf(why, sizeof why, "largest difference %.3g of the largest weight (limit 1e-5)", worst[0]);
    report(rank, worst[0] < 1e-5, name, why);
    if (have_ref)
        trainer_free(&ref);
    trainer_free(&t);
    free((void *)share.layers);
    model_free(whole);
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
    if (nranks % 2 == 0)
        check_tensor_parallel(rank, nranks); /* last: it splits the job for good */
    double f = failures;
    comm_bcast(&f, sizeof f, 0);
    comm_finish(0); /* every rank knows the verdict: finalize, no job abort */
    return f > 0 ? 1 : 0;
}
