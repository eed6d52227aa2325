/* fuzz/fuzz_hf_config.c — HuggingFace configs (models/hf_config.h): any text is either read
 * into a model or refused with a one-line message naming the config; a model read exports
 * as a model file that reads back to the same model (it exports to the same text). Seeds: docs/examples/hf-configs/
 * and the configs of tests/test_hf_config.c (fuzz/corpus/hf_config/). */
#include "fuzz/fuzz_util.h"

#include "models/hf_config.h"
#include "models/model.h"
#include "models/model_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    char err[512] = "";
    ModelSpec *m = model_from_hf_config(text, "fuzz", NULL, 0, err, sizeof err);
    free(text);
    if (!m) {
        FUZZ_CHECK(strncmp(err, "fuzz: ", 6) == 0 && !strchr(err, '\n'), "refused without a one-line message: '%s'",
                   err);
        return 0;
    }
    char *out = model_json_export(m);
    FUZZ_CHECK(out != NULL, "a model read from a config does not export");
    ModelSpec *again = model_json_parse(out, "export", err, sizeof err);
    FUZZ_CHECK(again != NULL, "the export does not parse back: %s", err);
    /* the same model: its file exports to the same text (structs' padding may differ) */
    char *out2 = model_json_export(again);
    FUZZ_CHECK(out2 != NULL && again->nlayers == m->nlayers && strcmp(out, out2) == 0,
               "the model file does not read back to the config's model");
    free(out2);
    model_free(again);
    free(out);
    model_free(m);
    return 0;
}
