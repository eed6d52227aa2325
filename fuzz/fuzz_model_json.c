/* fuzz/fuzz_model_json.c — model files (models/model_json.h): any text either parses or is
 * refused with a message; a parsed model exports to a text that parses again, and that
 * exports to the same text (the export is a fixed point). Seeds: every zoo model exported
 * (FUZZ_WRITE_SEEDS), docs/examples/ and bench/gpu-chains/ (fuzz/make-seeds.sh). */
#include "fuzz/fuzz_util.h"

#include "models/model.h"
#include "models/model_json.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *dir = fuzz_seed_dir();
    if (!dir)
        return 0;
    for (int i = 0; i < zoo_count(); i++) {
        const ModelSpec *m = zoo_get(i);
        char *text = model_json_export(m);
        if (!text) /* an algorithm without layers */
            continue;
        char name[96];
        snprintf(name, sizeof name, "zoo-%s.json", m->name);
        fuzz_seed(dir, name, text, strlen(text));
        free(text);
    }
    exit(0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    char err[512] = "";
    ModelSpec *m = model_json_parse(text, "fuzz", err, sizeof err);
    free(text);
    if (!m) {
        FUZZ_CHECK(err[0], "refused without a message");
        return 0;
    }
    char *out = model_json_export(m);
    if (out) {
        ModelSpec *again = model_json_parse(out, "export", err, sizeof err);
        FUZZ_CHECK(again != NULL, "the export does not parse back: %s\n--- export:\n%s", err, out);
        char *out2 = model_json_export(again);
        FUZZ_CHECK(out2 != NULL, "the re-parsed model does not export");
        FUZZ_CHECK(strcmp(out, out2) == 0, "export of the re-parse differs:\n--- first:\n%s\n--- second:\n%s", out,
                   out2);
        free(out2);
        model_free(again);
        free(out);
    }
    model_free(m);
    return 0;
}
