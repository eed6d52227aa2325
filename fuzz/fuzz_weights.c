/* fuzz/fuzz_weights.c — weights files (models/weights.h weights_load) for one small
 * hand-made plan: a conv layer and a batch-norm layer, six tensors, as tests/test_weights.c
 * builds it. Input: a mode byte, then the file. Mode bit 0 set: the harness appends the
 * file's CRC-32 itself, so that mutations get past the checksum to the copy pass. A refused
 * file must leave both destination buffers as they were. Seeds (FUZZ_WRITE_SEEDS): a file
 * weights_save wrote for the plan, in both modes, and truncations of it. */
#include "fuzz/fuzz_util.h"

#include <zlib.h>

#include "models/weights.h"

enum { PARAM_FLOATS = 80, STATE_FLOATS = 20 };

static ModelSpec model;
static PlanLayer layers[2];
static PlanParam params[6];
static Plan plan;
static char path[4200];

static void tiny_plan(void)
{
    snprintf(model.name, sizeof model.name, "fuzz-tiny");
    snprintf(layers[0].name, sizeof layers[0].name, "conv1");
    snprintf(layers[1].name, sizeof layers[1].name, "bn1");
    static const struct {
        int layer;
        const char *role;
        ArenaId arena;
        size_t offset, count;
    } spec[6] = {
        {0, "kernel", ARENA_PARAM, 0, 24},      {0, "bias", ARENA_PARAM, 128, 4},
        {1, "gamma", ARENA_PARAM, 192, 4},      {1, "beta", ARENA_PARAM, 256, 4},
        {1, "running_mean", ARENA_STATE, 0, 4}, {1, "running_var", ARENA_STATE, 64, 4},
    };
    for (int i = 0; i < 6; i++) {
        PlanParam *pp = &params[i];
        pp->layer = spec[i].layer;
        snprintf(pp->role, sizeof pp->role, "%s", spec[i].role);
        pp->ref = (BufRef){.arena = spec[i].arena, .offset = spec[i].offset, .bytes = spec[i].count * 4};
        pp->count = spec[i].count;
        pp->learnable = spec[i].arena == ARENA_PARAM;
    }
    plan.model = &model;
    plan.layers = layers;
    plan.nlayers = 2;
    plan.params = params;
    plan.nparams = 6;
}

static void write_seeds(const char *dir)
{
    float p[PARAM_FLOATS], s[STATE_FLOATS];
    for (int i = 0; i < PARAM_FLOATS; i++)
        p[i] = 0.25f * (float)i - 7.0f;
    for (int i = 0; i < STATE_FLOATS; i++)
        s[i] = 100.0f + (float)i / 3.0f;
    char err[512], file[4200];
    fuzz_path(file, sizeof file, fuzz_tmpdir(), "seed.wts");
    FUZZ_CHECK(weights_save(file, &plan, p, s, err, sizeof err) == 0, "%s", err);
    FILE *f = fopen(file, "rb");
    FUZZ_CHECK(f != NULL, "cannot read %s", file);
    unsigned char buf[4096 + 1];
    size_t n = fread(buf + 1, 1, sizeof buf - 1, f);
    fclose(f);
    FUZZ_CHECK(n == weights_file_bytes(&plan), "saved %zu bytes", n);
    buf[0] = 0; /* as it is, checksum included */
    fuzz_seed(dir, "saved", buf, n + 1);
    buf[0] = 1; /* without its checksum: the harness appends it */
    fuzz_seed(dir, "saved-crc-by-harness", buf, n + 1 - 4);
    static const size_t cuts[] = {9, 24, 60, 200};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "truncated-%zu", cuts[i]);
        buf[0] = 0;
        fuzz_seed(dir, name, buf, cuts[i] + 1);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    tiny_plan();
    const char *dir = fuzz_seed_dir();
    if (dir) {
        write_seeds(dir);
        exit(0);
    }
    fuzz_path(path, sizeof path, fuzz_tmpdir(), "input.wts");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const bool add_crc = data[0] & 1;
    data++, size--;
    unsigned char *file = malloc(size + 4);
    FUZZ_CHECK(file != NULL, "out of memory");
    if (size)
        memcpy(file, data, size);
    if (add_crc) {
        uint32_t c = (uint32_t)crc32_z(crc32_z(0L, Z_NULL, 0), file, size);
        file[size] = (unsigned char)c, file[size + 1] = (unsigned char)(c >> 8);
        file[size + 2] = (unsigned char)(c >> 16), file[size + 3] = (unsigned char)(c >> 24);
        size += 4;
    }
    fuzz_write_file(path, file, size);
    free(file);

    float p[PARAM_FLOATS], s[STATE_FLOATS], p0[PARAM_FLOATS], s0[STATE_FLOATS];
    for (int i = 0; i < PARAM_FLOATS; i++)
        p[i] = p0[i] = -1.5f - (float)i;
    for (int i = 0; i < STATE_FLOATS; i++)
        s[i] = s0[i] = 3.25f + (float)i;
    char err[512] = "";
    if (weights_load(path, &plan, p, s, err, sizeof err) != 0) {
        FUZZ_CHECK(err[0], "refused without a message");
        FUZZ_CHECK(memcmp(p, p0, sizeof p) == 0 && memcmp(s, s0, sizeof s) == 0,
                   "a refused file changed the destination buffers (%s)", err);
    }
    return 0;
}
