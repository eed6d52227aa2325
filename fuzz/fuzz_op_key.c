/* fuzz/fuzz_op_key.c — op keys (ops/ops.h op_key_parse), the database's and the import's
 * name of what was timed. A key that parses is canonical (op_key of the descriptor is the
 * key itself), parses again to a descriptor with the same key, and its descriptor can be
 * priced (op_cost, workspace and buffer sizes: what the cost model and the import compute
 * for every key they read). Seeds (FUZZ_WRITE_SEEDS): up to four keys of each kind from
 * the zoo's training plans and the calibration's kernel lists. */
#include "fuzz/fuzz_util.h"

#include "microbench/mb.h"
#include "models/model.h"
#include "models/plan.h"
#include "ops/ops.h"

enum { PER_KIND = 4 };

typedef struct {
    char key[OP_KIND_COUNT][PER_KIND][OP_KEY_MAX];
    int n[OP_KIND_COUNT];
} Seeds;

static void add(Seeds *s, const OpDesc *d)
{
    char k[OP_KEY_MAX];
    op_key(d, k);
    OpDesc back;
    if (d->kind < 0 || d->kind >= OP_KIND_COUNT || s->n[d->kind] >= PER_KIND || !op_key_parse(k, &back))
        return;
    for (int i = 0; i < s->n[d->kind]; i++)
        if (strcmp(s->key[d->kind][i], k) == 0)
            return;
    snprintf(s->key[d->kind][s->n[d->kind]++], OP_KEY_MAX, "%s", k);
}

static void write_seeds(const char *dir)
{
    static Seeds s;
    for (int i = 0; i < zoo_count(); i++) {
        Plan p;
        char err[256];
        if (plan_build(zoo_get(i), 2, &p, err, sizeof err) != 0)
            continue;
        for (int j = 0; j < p.nops; j++)
            add(&s, &p.ops[j].desc);
        plan_free(&p);
    }
    static OpDesc ops[20000];
    MbCaches c = {.bytes = {32 << 10, 1 << 20, 32 << 20}, .shared_cpus = {1, 1, 2}};
    int (*lists[])(MbMode, OpDesc *, int) = {mb_list_gemm_sweep, mb_list_gemm_deepbench, mb_list_conv_deepbench,
                                            mb_list_rnn_deepbench, mb_list_sparse, mb_list_cnn_sweep,
                                            mb_list_stream, mb_list_eltwise, mb_list_transformer};
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        int n = lists[l](MB_QUICK, ops, 20000);
        for (int j = 0; j < n && j < 20000; j++)
            add(&s, &ops[j]);
    }
    int n = mb_list_peak(MB_QUICK, 2, ops, 20000);
    for (int j = 0; j < n && j < 20000; j++)
        add(&s, &ops[j]);
    n = mb_list_memory(MB_QUICK, 2, &c, ops, 20000);
    for (int j = 0; j < n && j < 20000; j++)
        add(&s, &ops[j]);
    for (int k = 0; k < OP_KIND_COUNT; k++)
        for (int i = 0; i < s.n[k]; i++) {
            char name[64];
            snprintf(name, sizeof name, "%s-%d", op_kind_name((OpKind)k), i + 1);
            fuzz_seed(dir, name, s.key[k][i], strlen(s.key[k][i]));
        }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *dir = fuzz_seed_dir();
    if (dir) {
        write_seeds(dir);
        exit(0);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *key = fuzz_cstr(data, size);
    OpDesc d;
    if (op_key_parse(key, &d)) {
        char k1[OP_KEY_MAX], k2[OP_KEY_MAX];
        op_key(&d, k1);
        FUZZ_CHECK(strcmp(k1, key) == 0, "parsed '%s' but its key is '%s'", key, k1);
        OpDesc d2;
        FUZZ_CHECK(op_key_parse(k1, &d2), "'%s' does not parse again", k1);
        op_key(&d2, k2);
        FUZZ_CHECK(strcmp(k1, k2) == 0, "'%s' parses again to '%s'", k1, k2);
        const OpCost c = op_cost(&d);
        FUZZ_CHECK(c.flops >= 0 && c.bytes >= 0, "'%s': flops %g bytes %g", key, c.flops, c.bytes);
        (void)op_workspace_bytes(&d);
        (void)op_thread_imbalance(&d, 4);
        OpBufInfo info[OP_MAX_BUFS];
        FUZZ_CHECK(op_buffer_info(&d, info) <= OP_MAX_BUFS, "'%s': too many buffers", key);
    }
    free(key);
    return 0;
}
