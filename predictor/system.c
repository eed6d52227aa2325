/* predictor/system.c — spec sheets: parsing, validation (every bad field named with what
 * would be valid), lookup in the database and the built-ins. */
#include "predictor/system.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* generated from systems/ by scripts/embed-specs.sh */
extern const char *const dlperf_builtin_spec_paths[];
extern const char *const dlperf_builtin_specs[];
extern const int dlperf_builtin_spec_count;

static const char *const kind_names[SPEC_KIND_COUNT] = {"device", "interconnect", "system"};
static const char *const formats[SPEC_KIND_COUNT] = {"dlperf-device", "dlperf-interconnect", "dlperf-system"};
static const char *const prec_names[PREC_COUNT] = {"fp64", "fp32", "tf32", "fp16", "bf16"};

const char *spec_kind_name(SpecKind k) { return k >= 0 && k < SPEC_KIND_COUNT ? kind_names[k] : "?"; }
const char *precision_name(Precision p) { return p >= 0 && p < PREC_COUNT ? prec_names[p] : "?"; }

int precision_parse(const char *s, Precision *out)
{
    for (int i = 0; i < PREC_COUNT; i++)
        if (strcmp(s, prec_names[i]) == 0) {
            *out = (Precision)i;
            return 0;
        }
    return -1;
}

double precision_bytes(Precision p) { return p == PREC_FP64 ? 8 : p == PREC_FP16 || p == PREC_BF16 ? 2 : 4; }

/* ---- validation helpers: each sets err to "SOURCE: field "F": problem" ---- */

typedef struct {
    const char *source;
    char *err;
    size_t errlen;
} Ctx;

static int bad(Ctx *c, const char *field, const char *fmt, const char *detail)
{
    char what[768];
    snprintf(what, sizeof what, fmt, detail ? detail : "");
    snprintf(c->err, c->errlen, "%s: field \"%s\": %s", c->source, field, what);
    return -1;
}

static int check_fields(Ctx *c, const cJSON *o, const char *const allowed[])
{
    for (const cJSON *it = o->child; it; it = it->next) {
        for (const cJSON *before = o->child; before != it; before = before->next)
            if (strcmp(before->string, it->string) == 0) /* JSON allows it; a spec sheet must not */
                return bad(c, it->string, "given twice; give each field once", NULL);
        bool ok = false;
        for (int i = 0; allowed[i] && !ok; i++)
            ok = strcmp(it->string, allowed[i]) == 0;
        if (!ok) {
            char list[768] = "";
            for (int i = 0; allowed[i]; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", allowed[i]);
            snprintf(c->err, c->errlen, "%s: unknown field \"%s\"; fields: %s", c->source, it->string, list);
            return -1;
        }
    }
    return 0;
}

static int get_string(Ctx *c, const cJSON *o, const char *field, bool required, char *out, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    if (!v) {
        if (required)
            return bad(c, field, "missing; expected a string", NULL);
        out[0] = '\0';
        return 0;
    }
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return bad(c, field, "expected a non-empty string", NULL);
    if (strlen(v->valuestring) >= n) {
        char lim[32];
        snprintf(lim, sizeof lim, "%zu", n - 1);
        return bad(c, field, "longer than %s characters", lim);
    }
    snprintf(out, n, "%s", v->valuestring);
    return 0;
}

static int get_name(Ctx *c, const cJSON *o, const char *field, char out[SPEC_NAME_MAX])
{
    if (get_string(c, o, field, true, out, SPEC_NAME_MAX) != 0)
        return -1;
    for (const char *p = out; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
            return bad(c, field, "'%s': expected lowercase letters, digits and '-'", out);
    return 0;
}

/* A number in (lo, hi] (or [lo, hi] with inclusive_lo); def when absent and not required. */
static int get_number(Ctx *c, const cJSON *o, const char *field, bool required, double def, double lo,
                      bool inclusive_lo, double hi, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    char range[96];
    snprintf(range, sizeof range, "expected a number %s %g and <= %g", inclusive_lo ? ">=" : ">", lo, hi);
    if (!v) {
        if (required)
            return bad(c, field, "missing; %s", range);
        *out = def;
        return 0;
    }
    if (!cJSON_IsNumber(v) || !(inclusive_lo ? v->valuedouble >= lo : v->valuedouble > lo) || v->valuedouble > hi)
        return bad(c, field, "%s", range);
    *out = v->valuedouble;
    return 0;
}

static int get_int(Ctx *c, const cJSON *o, const char *field, bool required, int def, int lo, int hi, int *out)
{
    double d;
    if (get_number(c, o, field, required, def, lo, true, hi, &d) != 0)
        return -1;
    if (d != (int)d) {
        char r[64];
        snprintf(r, sizeof r, "%d..%d", lo, hi);
        return bad(c, field, "expected an integer in %s", r);
    }
    *out = (int)d;
    return 0;
}

/* An optional string that must be one of names (NULL-terminated); "" when absent. */
static int get_enum(Ctx *c, const cJSON *o, const char *field, const char *const names[], char *out, size_t n)
{
    if (get_string(c, o, field, false, out, n) != 0)
        return -1;
    if (!out[0])
        return 0;
    for (int i = 0; names[i]; i++)
        if (strcmp(out, names[i]) == 0)
            return 0;
    char list[256] = "";
    for (int i = 0; names[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
    char what[320];
    snprintf(what, sizeof what, "'%s': expected one of %s", out, list);
    return bad(c, field, "%s", what);
}

/* "sources": an object with a non-empty citation for each figure named. */
static int check_sources(Ctx *c, const cJSON *o, const char *const figures[])
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "sources");
    if (!cJSON_IsObject(s))
        return bad(c, "sources", "missing; expected an object citing the public source of every figure", NULL);
    for (int i = 0; figures[i]; i++) {
        if (!cJSON_GetObjectItemCaseSensitive(o, figures[i]))
            continue; /* an optional figure that is absent needs no source */
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, figures[i]);
        if (!cJSON_IsString(v) || !v->valuestring[0]) {
            char f[64];
            snprintf(f, sizeof f, "sources.%s", figures[i]);
            return bad(c, f, "missing; every figure cites its public source (title, publisher, year, URL)", NULL);
        }
    }
    return 0;
}

static int check_header(Ctx *c, const cJSON *o, SpecKind k)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "format");
    if (!cJSON_IsString(f) || strcmp(f->valuestring, formats[k]) != 0)
        return bad(c, "format", "expected \"%s\"", formats[k]);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "version");
    if (!cJSON_IsNumber(v) || v->valuedouble != 1)
        return bad(c, "version", "expected 1", NULL);
    return 0;
}

/* ---- the three kinds ---- */

bool device_host_floor(const DeviceSpec *d)
{
    return d->host_op_s > 0 || d->host_conv_op_s > 0 || d->host_step_s > 0;
}

/* The share of an FP32 GEMM's instruction stream that is FMAs, in the register-blocked loop
 * of the CUDA-core (SIMT) GEMMs cuBLAS and CUTLASS run: a thread holds an 8x8 block of the
 * output, so each step of the reduction issues 64 FFMAs and 4 LDS.128 (8 values of each
 * operand from shared memory); every 8 steps the tile's next slices come in (one LDG.128
 * and one STS.128 per operand and thread of a 256-thread 128x128 tile), a barrier or two
 * and the loop's address and counter updates: 512 FFMAs in about 554 instructions. */
static const double GEMM_FMA_SHARE = 512.0 / 554.0;

/* An SM reaches its FP32 peak only by issuing an FMA to every lane every clock. Where it
 * issues twice the lanes' worth of warp instructions a clock (Volta to Ampere GA100: four
 * schedulers of 32 threads a clock for 64 lanes; Maxwell and Pascal: two dispatch units a
 * scheduler), the loads and loop arithmetic take the spare slots and the FMAs run at the
 * peak. Where it issues exactly its lanes' worth (Hopper: 128 lanes, 4 x 32), every other
 * instruction takes a slot from the FMAs, and a GEMM runs at most at the loop's FMA share.
 * Found pricing NeuSight's H100 rows, whose largest GEMMs run at 0.82 of the sheet's peak
 * where the A100's reach 0.98 (docs/gpu-pricing.md). The lanes counted are the dedicated
 * ones where some are shared with INT32 (Ampere GA10x, Ada): their GEMMs reach 0.42 of
 * the full count's peak at best, and the shared half is left to the loop's other work.
 * Kepler's SMX has the slots but not the rate (a scheduler's second instruction must be an
 * independent one of the same warp): its sheets carry what cuBLAS measures, fp32_gemm_bound,
 * and device_fp32_gemm_flops takes the lower of the two. */
double device_fp32_issue_flops(const DeviceSpec *d)
{
    double peak = d->peak_flops[PREC_FP32];
    const int lanes = d->fp32_lanes_per_sm, shared = d->fp32_lanes_shared_int32;
    int counted = lanes;
    if (lanes > 0 && shared > 0 && shared < lanes) {
        counted = lanes - shared;
        peak *= (double)counted / lanes;
    }
    if (counted > 0 && d->issue_lanes_per_sm > 0) {
        const double cap = GEMM_FMA_SHARE * d->issue_lanes_per_sm / counted;
        if (cap < 1)
            peak *= cap;
    }
    return peak;
}

double device_fp32_gemm_flops(const DeviceSpec *d)
{
    const double issue = device_fp32_issue_flops(d), bound = d->fp32_gemm_bound * d->peak_flops[PREC_FP32];
    return d->fp32_gemm_bound > 0 && bound < issue ? bound : issue;
}

/* Architectures and memory types a sheet may name (systems/README.md). */
static const char *const arch_names[] = {"kepler", "maxwell", "pascal", "volta", "turing", "ampere", "ada",
                                         "hopper", "blackwell", "cdna", "cdna2", "cdna3", "x86", NULL};
static const char *const memory_types[] = {"GDDR5", "GDDR5X", "GDDR6", "GDDR6X", "HBM", "HBM2",
                                           "HBM2e", "HBM3", "HBM3e", "DDR4", "DDR5", NULL};

/* NVIDIA compute capabilities each architecture shipped with (CUDA programming guide's
 * table); an architecture outside NVIDIA's has none. A capability that contradicts the
 * sheet's arch is a typo in one of them. */
static const struct {
    const char *arch;
    double lo, hi;
} cc_ranges[] = {{"kepler", 3.0, 3.7}, {"maxwell", 5.0, 5.3}, {"pascal", 6.0, 6.2}, {"volta", 7.0, 7.2},
                 {"turing", 7.5, 7.5}, {"ampere", 8.0, 8.7}, {"ada", 8.9, 8.9}, {"hopper", 9.0, 9.0},
                 {"blackwell", 10.0, 12.9}};

static int parse_aliases(Ctx *c, const cJSON *o, DeviceSpec *d)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "aliases");
    if (!a)
        return 0;
    char lim[96];
    snprintf(lim, sizeof lim, "expected an array of 1 to %d names, each 1 to %d characters", DEVICE_ALIAS_MAX,
             DEVICE_ALIAS_LEN - 1);
    const int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
    if (n < 1 || n > DEVICE_ALIAS_MAX)
        return bad(c, "aliases", "%s", lim);
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetArrayItem(a, i);
        if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= DEVICE_ALIAS_LEN)
            return bad(c, "aliases", "%s", lim);
        const char *s = v->valuestring;
        /* lookups ignore surrounding spaces, so an alias carrying them could never match */
        if (isspace((unsigned char)s[0]) || isspace((unsigned char)s[strlen(s) - 1]))
            return bad(c, "aliases", "'%s': no leading or trailing spaces", s);
        for (int j = 0; j < d->naliases; j++)
            if (strcasecmp(d->aliases[j], s) == 0)
                return bad(c, "aliases", "'%s' given twice (names compare case-insensitively)", s);
        snprintf(d->aliases[d->naliases++], DEVICE_ALIAS_LEN, "%s", s);
    }
    return 0;
}

/* The optional architecture fields; then, where the sheet gives SMs, lanes and clock, its
 * fp32 peak must follow from them. */
static int parse_device_arch(Ctx *c, const cJSON *o, DeviceSpec *d)
{
    double l2_mb;
    if (get_enum(c, o, "arch", arch_names, d->arch, sizeof d->arch) ||
        get_enum(c, o, "memory_type", memory_types, d->memory_type, sizeof d->memory_type) ||
        get_number(c, o, "compute_capability", false, 0, 1, true, 20, &d->compute_capability) ||
        get_int(c, o, "sm_count", false, 0, 1, 1024, &d->sm_count) ||
        get_number(c, o, "boost_clock_mhz", false, 0, 0, false, 10000, &d->boost_clock_mhz) ||
        get_number(c, o, "base_clock_mhz", false, 0, 0, false, 10000, &d->base_clock_mhz) ||
        get_int(c, o, "fp32_lanes_per_sm", false, 0, 1, 1024, &d->fp32_lanes_per_sm) ||
        get_int(c, o, "fp32_lanes_shared_int32", false, -1, 0, 1024, &d->fp32_lanes_shared_int32) ||
        get_int(c, o, "issue_lanes_per_sm", false, 0, 32, 4096, &d->issue_lanes_per_sm) ||
        get_number(c, o, "fp32_gemm_bound", false, 0, 0, false, 1, &d->fp32_gemm_bound) ||
        get_number(c, o, "l2_mb", false, 0, 0, false, 65536, &l2_mb) ||
        get_number(c, o, "tdp_w", false, 0, 0, false, 10000, &d->tdp_w) || parse_aliases(c, o, d))
        return -1;
    d->l2_bytes = l2_mb * 1048576.0; /* vendors' "MB" of cache are MiB */
    char v[320];
    if (d->compute_capability > 0) {
        if (!d->arch[0])
            return bad(c, "compute_capability", "needs \"arch\" (the capability belongs to an NVIDIA architecture)",
                       NULL);
        bool nvidia = false;
        for (size_t i = 0; i < sizeof cc_ranges / sizeof cc_ranges[0]; i++)
            if (strcmp(d->arch, cc_ranges[i].arch) == 0) {
                nvidia = true;
                /* capabilities are x.y: compare in tenths so 8.9 is not 8.8999 */
                long t = lround(d->compute_capability * 10);
                if (t < lround(cc_ranges[i].lo * 10) || t > lround(cc_ranges[i].hi * 10)) {
                    snprintf(v, sizeof v, "%g does not belong to %s; expected %.1f to %.1f", d->compute_capability,
                             d->arch, cc_ranges[i].lo, cc_ranges[i].hi);
                    return bad(c, "compute_capability", "%s", v);
                }
            }
        if (!nvidia)
            return bad(c, "compute_capability", "'%s' is not an NVIDIA architecture; give no compute capability",
                       d->arch);
    }
    if (d->base_clock_mhz > 0 && d->boost_clock_mhz > 0 && d->base_clock_mhz > d->boost_clock_mhz) {
        snprintf(v, sizeof v, "%g MHz is above boost_clock_mhz %g; expected base <= boost", d->base_clock_mhz,
                 d->boost_clock_mhz);
        return bad(c, "base_clock_mhz", "%s", v);
    }
    if (d->fp32_lanes_shared_int32 >= 0) {
        if (!d->fp32_lanes_per_sm)
            return bad(c, "fp32_lanes_shared_int32", "needs \"fp32_lanes_per_sm\" (it counts some of those lanes)",
                       NULL);
        if (d->fp32_lanes_shared_int32 > d->fp32_lanes_per_sm) {
            snprintf(v, sizeof v, "%d is more than fp32_lanes_per_sm %d; expected 0 to %d", d->fp32_lanes_shared_int32,
                     d->fp32_lanes_per_sm, d->fp32_lanes_per_sm);
            return bad(c, "fp32_lanes_shared_int32", "%s", v);
        }
    }
    if (d->issue_lanes_per_sm) {
        if (!d->fp32_lanes_per_sm)
            return bad(c, "issue_lanes_per_sm", "needs \"fp32_lanes_per_sm\" (the lanes it issues to)", NULL);
        if (d->issue_lanes_per_sm % 32) {
            snprintf(v, sizeof v, "%d is not a whole number of warps; expected schedulers x dispatch units x 32",
                     d->issue_lanes_per_sm);
            return bad(c, "issue_lanes_per_sm", "%s", v);
        }
    }
    /* A datasheet's peak is SMs x lanes x 2 (an FMA) x boost clock, rounded; 10% covers
     * the rounding and the few parts rated at a sustained rather than the top clock, and
     * catches a typo in any of the four figures. */
    if (d->sm_count && d->fp32_lanes_per_sm && d->boost_clock_mhz > 0) {
        const double want = (double)d->sm_count * d->fp32_lanes_per_sm * 2 * d->boost_clock_mhz * 1e6;
        const double got = d->peak_flops[PREC_FP32];
        if (fabs(got - want) > 0.10 * want) {
            snprintf(v, sizeof v,
                     "%.3g TFLOP/s is not within 10%% of sm_count x fp32_lanes_per_sm x 2 x boost_clock_mhz = "
                     "%d x %d x 2 x %g MHz = %.3g TFLOP/s; check the four figures",
                     got / 1e12, d->sm_count, d->fp32_lanes_per_sm, d->boost_clock_mhz, want / 1e12);
            return bad(c, "peak_tflops.fp32", "%s", v);
        }
    }
    return 0;
}

static int parse_device(Ctx *c, const cJSON *o, DeviceSpec *d)
{
    static const char *const fields[] = {"format", "version", "name", "title", "kind", "year", "peak_tflops",
                                         "memory_gb", "memory_gbs", "launch_overhead_us", "host_step_us", "host_op_us",
                                         "host_conv_op_us", "arch", "compute_capability", "sm_count",
                                         "boost_clock_mhz", "base_clock_mhz", "fp32_lanes_per_sm",
                                         "fp32_lanes_shared_int32", "issue_lanes_per_sm", "fp32_gemm_bound", "l2_mb", "memory_type",
                                         "tdp_w", "aliases", "sources", "notes", NULL};
    static const char *const figures[] = {"peak_tflops", "memory_gb", "memory_gbs", "launch_overhead_us",
                                          "host_step_us", "host_op_us", "host_conv_op_us", "arch",
                                          "compute_capability", "sm_count", "boost_clock_mhz", "base_clock_mhz",
                                          "fp32_lanes_per_sm", "fp32_lanes_shared_int32", "issue_lanes_per_sm",
                                          "fp32_gemm_bound", "l2_mb", "memory_type", "tdp_w", "aliases", NULL};
    memset(d, 0, sizeof *d);
    char kind[16];
    if (check_header(c, o, SPEC_DEVICE) || check_fields(c, o, fields) || get_name(c, o, "name", d->name) ||
        get_string(c, o, "title", true, d->title, sizeof d->title) || get_string(c, o, "kind", true, kind, sizeof kind))
        return -1;
    if (strcmp(kind, "gpu") != 0 && strcmp(kind, "cpu") != 0)
        return bad(c, "kind", "'%s': expected \"gpu\" or \"cpu\"", kind);
    d->gpu = strcmp(kind, "gpu") == 0;
    double mem_gb, mem_gbs, launch_us, step_us, op_us, conv_op_us;
    /* A GPU's host figures default to PyTorch 2.11 eager as measured on an H200 machine's
     * host (16-vCPU VM) by bench/gpu_whatif.py --chains (docs/accuracy.md "Spec
     * sheets against a real GPU"): chains of 8 and 32 tiny layers, the slope over depth per
     * dlperf op of the layer, the rest of the step the intercept. Dense layers (GEMM, bias,
     * ReLU) 13.4 us per op; a conv + batch norm + ReLU block 289 us, 43.7 us per conv/BN op
     * once its two ReLU ops are taken out; the step 772 us (704 from the conv chain). */
    enum { GPU_HOST_STEP_US = 772 };
    static const double GPU_HOST_OP_US = 13.4, GPU_HOST_CONV_OP_US = 43.7;
    const bool gpu = d->gpu;
    if (get_int(c, o, "year", true, 0, 1990, 2100, &d->year) ||
        get_number(c, o, "memory_gb", true, 0, 0, false, 1e6, &mem_gb) ||
        get_number(c, o, "memory_gbs", true, 0, 0, false, 1e6, &mem_gbs) ||
        get_number(c, o, "launch_overhead_us", false, gpu ? 5 : 0, 0, true, 1e4, &launch_us) ||
        get_number(c, o, "host_step_us", false, gpu ? GPU_HOST_STEP_US : 0, 0, true, 1e6, &step_us) ||
        get_number(c, o, "host_op_us", false, gpu ? GPU_HOST_OP_US : 0, 0, true, 1e4, &op_us) ||
        get_number(c, o, "host_conv_op_us", false, gpu ? GPU_HOST_CONV_OP_US : 0, 0, true, 1e4, &conv_op_us))
        return -1;
    d->mem_bytes = mem_gb * 1e9;
    d->mem_Bps = mem_gbs * 1e9;
    d->launch_s = launch_us * 1e-6;
    d->host_step_s = step_us * 1e-6;
    d->host_op_s = op_us * 1e-6;
    d->host_conv_op_s = conv_op_us * 1e-6;
    const cJSON *pk = cJSON_GetObjectItemCaseSensitive(o, "peak_tflops");
    if (!cJSON_IsObject(pk))
        return bad(c, "peak_tflops", "missing; expected an object of TFLOP/s by precision (fp64, fp32, tf32, fp16, "
                                     "bf16), fp32 required", NULL);
    for (const cJSON *it = pk->child; it; it = it->next) {
        Precision p;
        char f[64];
        snprintf(f, sizeof f, "peak_tflops.%s", it->string);
        if (precision_parse(it->string, &p) != 0)
            return bad(c, f, "unknown precision; expected fp64, fp32, tf32, fp16 or bf16", NULL);
        if (!cJSON_IsNumber(it) || it->valuedouble <= 0 || it->valuedouble > 1e5)
            return bad(c, f, "expected TFLOP/s, a number > 0 and <= 100000", NULL);
        d->peak_flops[p] = it->valuedouble * 1e12;
    }
    if (d->peak_flops[PREC_FP32] <= 0)
        return bad(c, "peak_tflops.fp32", "missing; every device needs its fp32 peak", NULL);
    if (parse_device_arch(c, o, d) != 0)
        return -1;
    return check_sources(c, o, figures);
}

static int parse_link(Ctx *c, const cJSON *o, LinkSpec *l)
{
    static const char *const fields[] = {"format", "version", "name", "title", "scope", "bandwidth_gbs",
                                         "latency_us", "sources", "notes", NULL};
    static const char *const figures[] = {"bandwidth_gbs", "latency_us", NULL};
    memset(l, 0, sizeof *l);
    char scope[16];
    double gbs, us;
    if (check_header(c, o, SPEC_INTERCONNECT) || check_fields(c, o, fields) || get_name(c, o, "name", l->name) ||
        get_string(c, o, "title", true, l->title, sizeof l->title) ||
        get_string(c, o, "scope", true, scope, sizeof scope))
        return -1;
    if (strcmp(scope, "intra") != 0 && strcmp(scope, "inter") != 0)
        return bad(c, "scope", "'%s': expected \"intra\" (inside a node) or \"inter\" (between nodes)", scope);
    l->intra = strcmp(scope, "intra") == 0;
    if (get_number(c, o, "bandwidth_gbs", true, 0, 0, false, 1e5, &gbs) ||
        get_number(c, o, "latency_us", true, 0, 0, false, 1e5, &us))
        return -1;
    l->beta_Bps = gbs * 1e9;
    l->alpha_s = us * 1e-6;
    return check_sources(c, o, figures);
}

static int resolve_link(Db *db, Ctx *c, const char *field, const char *name, bool intra, LinkSpec *out)
{
    char err[256];
    if (link_load(db, name, out, err, sizeof err) != 0)
        return bad(c, field, "%s", err);
    if (out->intra != intra)
        return bad(c, field, intra ? "'%s' links nodes; expected an interconnect with scope \"intra\""
                                   : "'%s' is inside a node; expected an interconnect with scope \"inter\"",
                   name);
    return 0;
}

static int parse_system(Db *db, Ctx *c, const cJSON *o, SystemSpec *s)
{
    static const char *const fields[] = {"format", "version", "name", "title", "device", "devices_per_node",
                                         "intra", "inter", "nics_per_node", "nodes", "sources", "notes", NULL};
    static const char *const figures[] = {"devices_per_node", "nics_per_node", "nodes", NULL};
    memset(s, 0, sizeof *s);
    char dev[SPEC_NAME_MAX], intra[SPEC_NAME_MAX], inter[SPEC_NAME_MAX], err[256];
    if (check_header(c, o, SPEC_SYSTEM) || check_fields(c, o, fields) || get_name(c, o, "name", s->name) ||
        get_string(c, o, "title", true, s->title, sizeof s->title) || get_name(c, o, "device", dev) ||
        get_int(c, o, "devices_per_node", true, 1, 1, 1024, &s->devices_per_node) ||
        get_int(c, o, "nics_per_node", false, 1, 1, 64, &s->nics_per_node) ||
        get_int(c, o, "nodes", false, 0, 1, 10000000, &s->nodes) ||
        get_string(c, o, "intra", false, intra, sizeof intra) || get_string(c, o, "inter", true, inter, sizeof inter))
        return -1;
    if (strcmp(dev, "calibrated") == 0) {
        s->device = (DeviceSpec){.calibrated = true, .gpu = false, .fp32_lanes_shared_int32 = -1};
        snprintf(s->device.name, sizeof s->device.name, "calibrated");
        snprintf(s->device.title, sizeof s->device.title, "this machine, as calibrated");
    } else if (device_load(db, dev, &s->device, err, sizeof err) != 0) {
        return bad(c, "device", "%s (or \"calibrated\": this machine)", err);
    }
    if (s->devices_per_node > 1 && !intra[0])
        return bad(c, "intra", "missing; %s devices per node need the interconnect between them", "several");
    if (intra[0]) {
        if (resolve_link(db, c, "intra", intra, true, &s->intra) != 0)
            return -1;
        s->has_intra = true;
    }
    if (resolve_link(db, c, "inter", inter, false, &s->inter) != 0)
        return -1;
    return check_sources(c, o, figures);
}

/* ---- lookup ---- */

static int kind_of(const cJSON *o, SpecKind *k)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "format");
    for (int i = 0; cJSON_IsString(f) && i < SPEC_KIND_COUNT; i++)
        if (strcmp(f->valuestring, formats[i]) == 0) {
            *k = (SpecKind)i;
            return 0;
        }
    return -1;
}

static int builtin_index(const char *name)
{
    for (int i = 0; i < dlperf_builtin_spec_count; i++) {
        cJSON *o = cJSON_Parse(dlperf_builtin_specs[i]);
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "name");
        bool hit = cJSON_IsString(n) && strcmp(n->valuestring, name) == 0;
        cJSON_Delete(o);
        if (hit)
            return i;
    }
    return -1;
}

int spec_find(Db *db, const char *name, SpecKind *kind, char **text, char *origin, size_t originlen, char *err,
              size_t errlen)
{
    *text = NULL;
    if (db) {
        char k[16];
        int rc = db_spec_get(db, name, k, text);
        if (rc < 0) {
            snprintf(err, errlen, "%s", db_errmsg(db));
            return -1;
        }
        if (rc == 0) {
            for (int i = 0; i < SPEC_KIND_COUNT; i++)
                if (strcmp(k, kind_names[i]) == 0)
                    *kind = (SpecKind)i;
            snprintf(origin, originlen, "added");
            return 0;
        }
    }
    int i = builtin_index(name);
    if (i < 0) {
        snprintf(err, errlen, "no spec sheet named '%s' (see 'dlperf systems')", name);
        return DB_NOT_FOUND;
    }
    cJSON *o = cJSON_Parse(dlperf_builtin_specs[i]);
    int rc = kind_of(o, kind);
    cJSON_Delete(o);
    if (rc != 0) {
        snprintf(err, errlen, "built-in %s: unknown format", dlperf_builtin_spec_paths[i]);
        return -1;
    }
    *text = strdup(dlperf_builtin_specs[i]);
    snprintf(origin, originlen, "built-in %s", dlperf_builtin_spec_paths[i]);
    return *text ? 0 : -1;
}

/* Finds `name`, checks it is of kind `want`, and parses it with the kind's parser. */
static int load_kind(Db *db, const char *name, SpecKind want, void *out, char *err, size_t errlen)
{
    SpecKind k = SPEC_DEVICE;
    char *text, origin[160];
    if (spec_find(db, name, &k, &text, origin, sizeof origin, err, errlen) != 0)
        return -1;
    if (k != want) {
        snprintf(err, errlen, "'%s' is a %s spec, not a %s (see 'dlperf systems')", name, kind_names[k],
                 kind_names[want]);
        free(text);
        return -1;
    }
    cJSON *o = cJSON_Parse(text);
    free(text);
    char src[256];
    snprintf(src, sizeof src, "%s (%s)", name, origin);
    Ctx c = {src, err, errlen};
    int rc = -1;
    if (!o)
        snprintf(err, errlen, "%s: not valid JSON", src);
    else if (want == SPEC_DEVICE)
        rc = parse_device(&c, o, out);
    else if (want == SPEC_INTERCONNECT)
        rc = parse_link(&c, o, out);
    else
        rc = parse_system(db, &c, o, out);
    cJSON_Delete(o);
    return rc;
}

int device_load(Db *db, const char *name, DeviceSpec *out, char *err, size_t errlen)
{
    return load_kind(db, name, SPEC_DEVICE, out, err, errlen);
}

/* Whether sheet JSON `o` is a device called `want` by name or alias (want trimmed). */
static bool device_answers_to(const cJSON *o, const char *want)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "format");
    if (!cJSON_IsString(f) || strcmp(f->valuestring, formats[SPEC_DEVICE]) != 0)
        return false;
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (cJSON_IsString(n) && strcasecmp(n->valuestring, want) == 0)
        return true;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "aliases");
    const cJSON *it;
    cJSON_ArrayForEach(it, a)
        if (cJSON_IsString(it) && strcasecmp(it->valuestring, want) == 0)
            return true;
    return false;
}

typedef struct {
    Db *db;
    const char *want;
    char *found;    /* SPEC_NAME_MAX */
    bool hit, failed;
} AliasCtx;

static int alias_in_stored(const char *name, const char *kind, const char *source, void *ctx)
{
    AliasCtx *a = ctx;
    if (strcmp(kind, kind_names[SPEC_DEVICE]) != 0)
        return 0;
    char k[16], *text = NULL;
    const int rc = db_spec_get(a->db, name, k, &text);
    if (rc < 0) {
        a->failed = true;
        return 1;
    }
    if (rc == DB_NOT_FOUND) /* a row its name cannot find (NULL, a blob, a NUL inside): no sheet */
        return 0;
    cJSON *o = cJSON_Parse(text);
    free(text);
    if (o && device_answers_to(o, a->want)) {
        snprintf(a->found, SPEC_NAME_MAX, "%s", name);
        a->hit = true;
    }
    cJSON_Delete(o);
    return a->hit;
}

int device_find_alias(Db *db, const char *published_name, char name[SPEC_NAME_MAX], char *err, size_t errlen)
{
    char want[256];
    while (isspace((unsigned char)*published_name))
        published_name++;
    snprintf(want, sizeof want, "%s", published_name);
    for (size_t n = strlen(want); n > 0 && isspace((unsigned char)want[n - 1]); n--)
        want[n - 1] = '\0';
    name[0] = '\0';
    if (db) {
        AliasCtx a = {db, want, name, false, false};
        if (db_spec_foreach(db, alias_in_stored, &a) != 0 || a.failed) {
            snprintf(err, errlen, "%s", db_errmsg(db));
            return -1;
        }
        if (a.hit)
            return 0;
    }
    for (int i = 0; want[0] && i < dlperf_builtin_spec_count; i++) {
        cJSON *o = cJSON_Parse(dlperf_builtin_specs[i]);
        bool hit = o && device_answers_to(o, want);
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "name");
        if (hit && cJSON_IsString(n)) {
            /* a database sheet of the same name shadows this one, and did not answer */
            char k[16], *text = NULL;
            int rc = db ? db_spec_get(db, n->valuestring, k, &text) : DB_NOT_FOUND;
            free(text);
            if (rc < 0) {
                snprintf(err, errlen, "%s", db_errmsg(db));
                cJSON_Delete(o);
                return -1;
            }
            if (rc == DB_NOT_FOUND) {
                snprintf(name, SPEC_NAME_MAX, "%s", n->valuestring);
                cJSON_Delete(o);
                return 0;
            }
        }
        cJSON_Delete(o);
    }
    snprintf(err, errlen, "no device sheet is named or aliased '%s' (see 'dlperf systems')", want);
    return DB_NOT_FOUND;
}

int link_load(Db *db, const char *name, LinkSpec *out, char *err, size_t errlen)
{
    return load_kind(db, name, SPEC_INTERCONNECT, out, err, errlen);
}

int system_load(Db *db, const char *name, SystemSpec *out, char *err, size_t errlen)
{
    return load_kind(db, name, SPEC_SYSTEM, out, err, errlen);
}

int system_parse(Db *db, const char *text, const char *source, SystemSpec *out, char *err, size_t errlen)
{
    Ctx c = {source, err, errlen};
    cJSON *o = cJSON_Parse(text);
    SpecKind k;
    int rc = -1;
    if (!o || !cJSON_IsObject(o))
        snprintf(err, errlen, "%s: not a JSON object", source);
    else if (kind_of(o, &k) != 0 || k != SPEC_SYSTEM)
        rc = bad(&c, "format", "expected \"dlperf-system\" (a system: nodes of a device and their links)", NULL);
    else
        rc = parse_system(db, &c, o, out);
    cJSON_Delete(o);
    return rc;
}

int spec_validate(Db *db, const char *text, const char *source, SpecKind *kind, char name[SPEC_NAME_MAX], char *err,
                  size_t errlen)
{
    Ctx c = {source, err, errlen};
    cJSON *o = cJSON_Parse(text);
    if (!o || !cJSON_IsObject(o)) {
        const char *at = cJSON_GetErrorPtr();
        snprintf(err, errlen, "%s: not a JSON object%s%.20s%s", source, at && *at ? " (near '" : "",
                 at && *at ? at : "", at && *at ? "')" : "");
        cJSON_Delete(o);
        return -1;
    }
    int rc;
    if (kind_of(o, kind) != 0) {
        rc = bad(&c, "format", "expected \"dlperf-device\", \"dlperf-interconnect\" or \"dlperf-system\"", NULL);
    } else {
        union {
            DeviceSpec d;
            LinkSpec l;
            SystemSpec s;
        } u;
        rc = *kind == SPEC_DEVICE ? parse_device(&c, o, &u.d)
             : *kind == SPEC_INTERCONNECT ? parse_link(&c, o, &u.l)
                                          : parse_system(db, &c, o, &u.s);
        if (rc == 0)
            snprintf(name, SPEC_NAME_MAX, "%s", *kind == SPEC_DEVICE ? u.d.name
                                                : *kind == SPEC_INTERCONNECT ? u.l.name : u.s.name);
    }
    cJSON_Delete(o);
    return rc;
}

/* ---- listing ---- */

typedef struct {
    SpecEntry *e;
    int n, cap;
} List;

static SpecEntry *push(List *l)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 32;
        SpecEntry *p = realloc(l->e, (size_t)l->cap * sizeof *p);
        if (!p)
            return NULL;
        l->e = p;
    }
    return memset(&l->e[l->n++], 0, sizeof(SpecEntry));
}

static int title_of(const char *text, char *title, size_t n, SpecKind *k)
{
    cJSON *o = cJSON_Parse(text);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "title");
    snprintf(title, n, "%s", cJSON_IsString(t) ? t->valuestring : "");
    int rc = kind_of(o, k);
    cJSON_Delete(o);
    return rc;
}

typedef struct {
    Db *db;
    List *l;
} AddedCtx;

static int add_stored(const char *name, const char *kind, const char *source, void *ctx)
{
    AddedCtx *a = ctx;
    SpecEntry *e = push(a->l);
    if (!e)
        return 1;
    snprintf(e->name, sizeof e->name, "%s", name);
    snprintf(e->origin, sizeof e->origin, "added from %.80s", source);
    char k[16], *text = NULL;
    if (db_spec_get(a->db, name, k, &text) == 0)
        title_of(text, e->title, sizeof e->title, &e->kind);
    free(text);
    return 0;
}

int spec_list(Db *db, SpecEntry **out, int *n, char *err, size_t errlen)
{
    List l = {0};
    if (db) {
        AddedCtx a = {db, &l};
        if (db_spec_foreach(db, add_stored, &a) != 0) {
            snprintf(err, errlen, "%s", db_errmsg(db));
            free(l.e);
            return -1;
        }
    }
    const int added = l.n;
    for (int i = 0; i < dlperf_builtin_spec_count; i++) {
        cJSON *o = cJSON_Parse(dlperf_builtin_specs[i]);
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
        bool shadowed = false;
        for (int j = 0; cJSON_IsString(nm) && j < added; j++)
            shadowed |= strcmp(l.e[j].name, nm->valuestring) == 0;
        if (cJSON_IsString(nm) && !shadowed) {
            SpecEntry *e = push(&l);
            if (e) {
                snprintf(e->name, sizeof e->name, "%s", nm->valuestring);
                snprintf(e->origin, sizeof e->origin, "built-in %s", dlperf_builtin_spec_paths[i]);
                title_of(dlperf_builtin_specs[i], e->title, sizeof e->title, &e->kind);
            }
        }
        cJSON_Delete(o);
    }
    *out = l.e;
    *n = l.n;
    return 0;
}
