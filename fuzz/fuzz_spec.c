/* fuzz/fuzz_spec.c — spec sheets (predictor/system.h): spec_validate on any text (a
 * device, interconnect or system sheet, by its "format" field), and system_parse on those
 * that validate as a system (its device and links resolved from the built-ins). A refusal
 * has a message. Seeds: every sheet in systems/ but the profiles (fuzz/make-seeds.sh). */
#include "fuzz/fuzz_util.h"

#include "predictor/system.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    char err[512] = "", name[SPEC_NAME_MAX];
    SpecKind kind = SPEC_KIND_COUNT;
    int rc = spec_validate(NULL, text, "fuzz", &kind, name, err, sizeof err);
    if (rc != 0) {
        FUZZ_CHECK(err[0], "refused without a message");
    } else {
        FUZZ_CHECK(kind >= 0 && kind < SPEC_KIND_COUNT, "kind %d", (int)kind);
        FUZZ_CHECK(memchr(name, '\0', sizeof name) != NULL, "name not terminated");
        if (kind == SPEC_SYSTEM) {
            SystemSpec sys;
            err[0] = '\0';
            if (system_parse(NULL, text, "fuzz", &sys, err, sizeof err) != 0)
                FUZZ_CHECK(err[0], "refused without a message");
        }
    }
    free(text);
    return 0;
}
