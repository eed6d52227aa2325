/* tests/test_system.c — spec sheets' architecture fields and the lookup of a device by the
 * name a published data set gives it: every name the NeuSight, DeepBench, CDE and
 * cnn-benchmarks files use finds its sheet, no alias sits on two built-in sheets, an unknown
 * name is DB_NOT_FOUND, and a database sheet answers before (and shadows) a built-in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "predictor/system.h"

/* The names as they appear in the public data files, and the sheet each belongs to. */
static const struct {
    const char *published, *sheet;
} published_names[] = {
    /* NeuSight: device names (file names of its collected data and device configs) */
    {"Tesla P4", "p4"},
    {"Tesla P100-PCIE-16GB", "p100-pcie-16gb"},
    {"Tesla T4", "t4"},
    {"Tesla V100-PCIE-32GB", "v100-pcie-32gb"},
    {"NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"},
    {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
    {"NVIDIA H100 80GB HBM3", "h100-sxm5"},
    {"NVIDIA L4", "l4"},
    /* DeepBench: its results workbooks DeepBench_NV_NAME.xlsx */
    {"NV_M40", "m40"},
    {"NV_TitanX", "titan-x-maxwell"},
    {"NV_1080Ti", "gtx-1080-ti"},
    {"NV_TitanX_Pascal", "titan-x-pascal"},
    {"NV_TitanXp", "titan-xp"},
    {"NV_P100", "p100-pcie-16gb"},
    {"NV_V100", "v100-sxm2-16gb"},
    {"NV_T4", "t4"},
    /* CDE (Justus et al. 2018): data folder names */
    {"K40", "k40"},
    {"k80", "k80"},
    {"M60", "m60"},
    {"1080ti", "gtx-1080-ti"},
    {"P100", "p100-pcie-16gb"},
    {"V100", "v100-sxm2-16gb"},
    /* cnn-benchmarks: gpu_name column */
    {"GeForce GTX 1080", "gtx-1080"},
    {"GeForce GTX 1080 Ti", "gtx-1080-ti"},
    {"GeForce GTX TITAN X", "titan-x-maxwell"},
    {"TITAN X", "titan-x-pascal"},
    /* the suite's reference system */
    {"K20X", "k20x"},
};

static void test_every_published_name_finds_its_sheet(void **state)
{
    char name[SPEC_NAME_MAX], err[512];
    for (size_t i = 0; i < sizeof published_names / sizeof published_names[0]; i++) {
        int rc = device_find_alias(NULL, published_names[i].published, name, err, sizeof err);
        if (rc != 0 || strcmp(name, published_names[i].sheet) != 0)
            fail_msg("'%s': rc %d, found '%s', expected '%s' (%s)", published_names[i].published, rc, name,
                     published_names[i].sheet, rc ? err : "");
        /* and the alias is on the sheet itself, not only matched by its name */
        DeviceSpec d;
        assert_int_equal(device_load(NULL, name, &d, err, sizeof err), 0);
        bool listed = false;
        for (int a = 0; a < d.naliases; a++)
            listed |= strcmp(d.aliases[a], published_names[i].published) == 0;
        if (!listed)
            fail_msg("'%s' is not in %s's aliases", published_names[i].published, name);
    }
}

static void test_lookup_ignores_case_and_surrounding_spaces(void **state)
{
    char name[SPEC_NAME_MAX], err[512];
    assert_int_equal(device_find_alias(NULL, "  tesla t4\t", name, err, sizeof err), 0);
    assert_string_equal(name, "t4");
    assert_int_equal(device_find_alias(NULL, "nv_titanxp", name, err, sizeof err), 0);
    assert_string_equal(name, "titan-xp");
    /* a sheet's own name is found too */
    assert_int_equal(device_find_alias(NULL, "A100-SXM4-80GB", name, err, sizeof err), 0);
    assert_string_equal(name, "a100-sxm4-80gb");
}

static void test_unknown_name_is_not_found(void **state)
{
    char name[SPEC_NAME_MAX], err[512];
    assert_int_equal(device_find_alias(NULL, "Tesla K10", name, err, sizeof err), DB_NOT_FOUND);
    assert_non_null(strstr(err, "'Tesla K10'"));
    assert_int_equal(device_find_alias(NULL, "   ", name, err, sizeof err), DB_NOT_FOUND);
    /* a name part of an alias is not the alias */
    assert_int_equal(device_find_alias(NULL, "Tesla", name, err, sizeof err), DB_NOT_FOUND);
    /* interconnects and systems have names, but are not devices */
    assert_int_equal(device_find_alias(NULL, "dgx-a100", name, err, sizeof err), DB_NOT_FOUND);
}

/* No alias (or sheet name) answers for two built-in device sheets, so a published name
 * means one device. */
static void test_builtin_aliases_are_unique(void **state)
{
    SpecEntry *e;
    int n;
    char err[512];
    assert_int_equal(spec_list(NULL, &e, &n, err, sizeof err), 0);
    enum { MAX = 512 };
    static char names[MAX][DEVICE_ALIAS_LEN], owner[MAX][SPEC_NAME_MAX];
    int k = 0, devices = 0;
    for (int i = 0; i < n; i++) {
        if (e[i].kind != SPEC_DEVICE)
            continue;
        DeviceSpec d;
        if (device_load(NULL, e[i].name, &d, err, sizeof err) != 0)
            fail_msg("%s", err);
        devices++;
        for (int a = -1; a < d.naliases; a++) {
            const char *s = a < 0 ? d.name : d.aliases[a];
            for (int j = 0; j < k; j++)
                if (strcasecmp(names[j], s) == 0 && strcmp(owner[j], d.name) != 0)
                    fail_msg("'%s' names both %s and %s", s, owner[j], d.name);
            assert_true(k < MAX);
            snprintf(names[k], sizeof names[k], "%s", s);
            snprintf(owner[k++], sizeof owner[k - 1], "%s", d.name);
        }
    }
    free(e);
    assert_true(devices >= 25);
}

static void test_architecture_fields_parse(void **state)
{
    DeviceSpec d;
    char err[512];
    assert_int_equal(device_load(NULL, "v100-pcie-32gb", &d, err, sizeof err), 0);
    assert_string_equal(d.arch, "volta");
    assert_float_equal(d.compute_capability, 7.0, 1e-12);
    assert_int_equal(d.sm_count, 80);
    assert_int_equal(d.fp32_lanes_per_sm, 64);
    assert_int_equal(d.fp32_lanes_shared_int32, 0);
    assert_float_equal(d.boost_clock_mhz, 1380, 1e-9);
    assert_float_equal(d.base_clock_mhz, 1245, 1e-9);
    assert_float_equal(d.l2_bytes, 6.0 * 1048576, 1e-6); /* MiB as vendors state L2 */
    assert_string_equal(d.memory_type, "HBM2");
    assert_float_equal(d.tdp_w, 250, 1e-9);
    assert_int_equal(d.naliases, 1);
    assert_string_equal(d.aliases[0], "Tesla V100-PCIE-32GB");
    /* Ada: half of the 128 lanes also issue INT32 */
    assert_int_equal(device_load(NULL, "l4", &d, err, sizeof err), 0);
    assert_int_equal(d.fp32_lanes_shared_int32, 64);
    assert_float_equal(d.l2_bytes, 48.0 * 1048576, 1e-6);
    /* a CPU carries no SM figures: absent is 0, and -1 for the shared lanes (0 is a value) */
    assert_int_equal(device_load(NULL, "epyc-9654", &d, err, sizeof err), 0);
    assert_string_equal(d.arch, "x86");
    assert_int_equal(d.sm_count, 0);
    assert_int_equal(d.fp32_lanes_shared_int32, -1);
    assert_float_equal(d.compute_capability, 0, 0);
}

/* The FP32 rate a GEMM can reach by the sheet: the peak where the SM issues twice its lanes'
 * worth of warp instructions a clock (Volta to GA100; Maxwell and Pascal with two dispatch
 * units a scheduler), the dedicated lanes' share where half are shared with INT32 (Ada), the
 * loop's FMA share where the SM issues exactly its lanes' worth (Hopper), and the sheet's
 * measured GEMM bound where it is lower still (Kepler: cuBLAS reaches 0.658 of a K40). */
static void test_fp32_gemm_flops_by_issue(void **state)
{
    (void)state;
    DeviceSpec d;
    char err[512];
    static const struct {
        const char *name;
        int issue;
        double share;
    } cases[] = {{"a100-pcie-40gb", 128, 1.0}, {"v100-pcie-32gb", 128, 1.0}, {"p100-pcie-16gb", 128, 1.0},
                 {"titan-xp", 256, 1.0},      {"k20x", 256, 0.658},         {"k40", 256, 0.658},
                 {"k80", 256, 0.658},         {"l4", 128, 0.5},
                 {"h100-sxm5", 128, 512.0 / 554.0}, {"h200-sxm", 128, 512.0 / 554.0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(device_load(NULL, cases[i].name, &d, err, sizeof err), 0);
        assert_int_equal(d.issue_lanes_per_sm, cases[i].issue);
        assert_float_equal(device_fp32_gemm_flops(&d) / d.peak_flops[PREC_FP32], cases[i].share, 1e-9);
    }
    /* a sheet without the field keeps its peak */
    assert_int_equal(device_load(NULL, "mi250x", &d, err, sizeof err), 0);
    assert_int_equal(d.issue_lanes_per_sm, 0);
    assert_float_equal(device_fp32_gemm_flops(&d), d.peak_flops[PREC_FP32], 0);
    /* the bound never raises a rate the issue slots already cap: the lower of the two holds */
    assert_int_equal(device_load(NULL, "h100-sxm5", &d, err, sizeof err), 0);
    d.fp32_gemm_bound = 0.95;
    assert_float_equal(device_fp32_gemm_flops(&d) / d.peak_flops[PREC_FP32], 512.0 / 554.0, 1e-9);
    d.fp32_gemm_bound = 0.5;
    assert_float_equal(device_fp32_gemm_flops(&d) / d.peak_flops[PREC_FP32], 0.5, 1e-9);
}

static const char *sheet_json = "{\"format\": \"dlperf-device\", \"version\": 1, \"name\": \"%s\", \"title\": \"T\", "
                                "\"kind\": \"gpu\", \"year\": 2024, \"peak_tflops\": {\"fp32\": 8}, \"memory_gb\": 16, "
                                "\"memory_gbs\": 320, %s\"sources\": {\"peak_tflops\": \"s\", \"memory_gb\": \"s\", "
                                "\"memory_gbs\": \"s\"%s}}";

/* A database sheet answers first; a database sheet of a built-in's name shadows it, aliases
 * and all. */
static void test_database_sheet_answers_first(void **state)
{
    char dir[] = "/tmp/dlperf-test-system-XXXXXX", path[256], err[512], name[SPEC_NAME_MAX], text[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/dlperf.db", dir);
    Db *db;
    assert_int_equal(db_open(path, &db, err, sizeof err), 0);

    snprintf(text, sizeof text, sheet_json, "my-t4", "\"aliases\": [\"Tesla T4\"], ", ", \"aliases\": \"mine\"");
    SpecKind kind;
    char valid_name[SPEC_NAME_MAX];
    assert_int_equal(spec_validate(db, text, "my-t4.json", &kind, valid_name, err, sizeof err), 0);
    assert_int_equal(db_spec_put(db, "my-t4", "device", text, "my-t4.json", false), 0);
    assert_int_equal(device_find_alias(db, "Tesla T4", name, err, sizeof err), 0);
    assert_string_equal(name, "my-t4");
    /* the built-ins still answer for the names the database does not hold */
    assert_int_equal(device_find_alias(db, "NV_T4", name, err, sizeof err), 0);
    assert_string_equal(name, "t4");

    /* a stored "p4" without aliases replaces the built-in p4: "Tesla P4" no longer answers */
    snprintf(text, sizeof text, sheet_json, "p4", "", "");
    assert_int_equal(db_spec_put(db, "p4", "device", text, "p4.json", false), 0);
    assert_int_equal(device_find_alias(db, "Tesla P4", name, err, sizeof err), DB_NOT_FOUND);
    assert_int_equal(device_find_alias(db, "p4", name, err, sizeof err), 0);
    assert_string_equal(name, "p4");

    db_close(db);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_published_name_finds_its_sheet),
        cmocka_unit_test(test_lookup_ignores_case_and_surrounding_spaces),
        cmocka_unit_test(test_unknown_name_is_not_found),
        cmocka_unit_test(test_builtin_aliases_are_unique),
        cmocka_unit_test(test_architecture_fields_parse),
        cmocka_unit_test(test_fp32_gemm_flops_by_issue),
        cmocka_unit_test(test_database_sheet_answers_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
