/* fuzz/fuzz_import.c — measurement files (microbench/import.h) in the four formats
 * (dlperf, NeuSight, DeepBench, CDE). Input: an options byte, then the file. Options bits
 * 0-1: the format; bit 2: the format is given (else detected from the header); bit 3: read
 * whole-layer rows (DeepBench RNN) too; bit 4: import fp32 only. The file goes to the
 * process's scratch directory; import_read reads it for device "fuzz-gpu" (aliases of GPUs
 * the seeds name), and a file it accepts is also imported dry (import_files: the rows
 * merged by key, nothing written). Seeds: short excerpts of the published files in
 * ../shared/gpu_data and dlperf CSVs as tests/test_gpu.sh writes them (fuzz/make-seeds.sh). */
#include "fuzz/fuzz_util.h"

#include <math.h>

#include "microbench/import.h"

static char path[4200];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_path(path, sizeof path, fuzz_tmpdir(), "Tesla T4.csv");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const unsigned opt = data[0];
    fuzz_write_file(path, data + 1, size - 1);
    ImportOptions o = {.device = "fuzz-gpu",
                       .title = "a GPU under fuzzing",
                       .aliases = {"Tesla T4", "NV_V100", "Tesla P100-PCIE-16GB", "NVIDIA A100-PCIE-40GB", NULL},
                       .naliases = 4,
                       .format = (ImportFormat)(opt & 3),
                       .format_given = opt & 4,
                       .layers = opt & 8,
                       .precision = opt & 16 ? "fp32" : NULL,
                       .dry_run = true};
    const char *files[] = {path};
    ImportedRow *rows = NULL;
    size_t nrows = 0;
    ImportSummary s;
    char err[512] = "";
    if (import_read(files, 1, &o, &rows, &nrows, &s, NULL, NULL, err, sizeof err) == 0) {
        FUZZ_CHECK(nrows > 0 && rows, "accepted without rows");
        for (size_t i = 0; i < nrows; i++) {
            FUZZ_CHECK(memchr(rows[i].key, '\0', sizeof rows[i].key), "row %zu: key not terminated", i);
            FUZZ_CHECK(rows[i].time_s > 0 && rows[i].min_s > 0 && rows[i].max_s > 0 && isfinite(rows[i].time_s) &&
                           isfinite(rows[i].min_s) && isfinite(rows[i].max_s),
                       "row %zu (%s): time %g in [%g, %g]", i, rows[i].key, rows[i].time_s, rows[i].min_s,
                       rows[i].max_s);
        }
        free(rows);
        ImportSummary s2;
        FUZZ_CHECK(import_files(NULL, files, 1, &o, &s2, NULL, NULL, err, sizeof err) == 0,
                   "read, but the dry import refused: %s", err);
        FUZZ_CHECK(s2.measurements >= 1 && (size_t)s2.measurements <= nrows, "%ld measurements of %zu rows",
                   s2.measurements, nrows);
    } else {
        FUZZ_CHECK(err[0], "refused without a message");
    }
    return 0;
}
