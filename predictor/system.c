/* predictor/system.c — spec sheets: parsing, validation (every bad field named with what
 * would be valid), lookup in the database and the built-ins. */
#include "predictor/system.h"

#include <cjson/cJSON.h>
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
            char list[512] = "";
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

/* The fields that carry evidence between devices (device_transfer.h): architecture, SMs,
 * clocks, FP32 lanes, L2, memory type, power, and the names published data give the part.
 * All optional; each checked against a plausible range. */
static int parse_device_shape(Ctx *c, const cJSON *o, DeviceSpec *d)
{
    static const char *const ARCHS[] = {"kepler", "maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper",
                                        "blackwell", "cdna", "cdna2", "cdna3", "x86", NULL};
    static const char *const MEMORIES[] = {"GDDR5", "GDDR5X", "GDDR6", "GDDR6X", "HBM", "HBM2", "HBM2e",
                                           "HBM3", "HBM3e", "DDR4", "DDR5", NULL};
    double l2_mb;
    if (get_string(c, o, "arch", false, d->arch, sizeof d->arch) ||
        get_number(c, o, "compute_capability", false, 0, 1.0, true, 20.0, &d->compute_capability) ||
        get_int(c, o, "sm_count", false, 0, 1, 100000, &d->sm_count) ||
        get_number(c, o, "boost_clock_mhz", false, 0, 50, true, 10000, &d->boost_clock_mhz) ||
        get_number(c, o, "base_clock_mhz", false, 0, 50, true, 10000, &d->base_clock_mhz) ||
        get_int(c, o, "fp32_lanes_per_sm", false, 0, 1, 4096, &d->fp32_lanes_per_sm) ||
        get_int(c, o, "fp32_lanes_shared_int32", false, 0, 0, 4096, &d->fp32_lanes_shared_int32) ||
        get_number(c, o, "l2_mb", false, 0, 0, false, 65536, &l2_mb) ||
        get_string(c, o, "memory_type", false, d->memory_type, sizeof d->memory_type) ||
        get_number(c, o, "tdp_w", false, 0, 1, true, 100000, &d->tdp_w))
        return -1;
    if (cJSON_GetObjectItemCaseSensitive(o, "compute_capability") && d->compute_capability < 1.0)
        return bad(c, "compute_capability", "expected a number >= 1 and <= 20 (e.g. 8.0)", NULL);
    d->l2_bytes = l2_mb * 1048576.0; /* vendors state L2 in binary megabytes */
    if (d->arch[0]) {
        int i = 0;
        while (ARCHS[i] && strcmp(ARCHS[i], d->arch) != 0)
            i++;
        if (!ARCHS[i])
            return bad(c, "arch", "'%s': expected kepler, maxwell, pascal, volta, turing, ampere, ada, hopper, "
                                  "blackwell, cdna, cdna2, cdna3 or x86", d->arch);
    }
    if (d->memory_type[0]) {
        int i = 0;
        while (MEMORIES[i] && strcmp(MEMORIES[i], d->memory_type) != 0)
            i++;
        if (!MEMORIES[i])
            return bad(c, "memory_type", "'%s': expected GDDR5, GDDR5X, GDDR6, GDDR6X, HBM, HBM2, HBM2e, HBM3, "
                                         "HBM3e, DDR4 or DDR5", d->memory_type);
    }
    if (d->fp32_lanes_shared_int32 > 0 && d->fp32_lanes_per_sm > 0 &&
        d->fp32_lanes_shared_int32 > d->fp32_lanes_per_sm)
        return bad(c, "fp32_lanes_shared_int32", "more than fp32_lanes_per_sm", NULL);
    /* a typo in SMs, lanes or clock shows as a peak the three do not make */
    if (d->sm_count > 0 && d->fp32_lanes_per_sm > 0 && d->boost_clock_mhz > 0) {
        const double made = 2.0 * d->sm_count * d->fp32_lanes_per_sm * d->boost_clock_mhz * 1e6;
        const double peak = d->peak_flops[PREC_FP32];
        if (fabs(made / peak - 1) > 0.10) {
            char why[192];
            snprintf(why, sizeof why,
                     "sm_count %d x fp32_lanes_per_sm %d x 2 x boost_clock_mhz %.0f = %.2f TFLOP/s, not within 10%% "
                     "of peak_tflops.fp32 %.2f", d->sm_count, d->fp32_lanes_per_sm, d->boost_clock_mhz, made / 1e12,
                     peak / 1e12);
            return bad(c, "sm_count", "%s", why);
        }
    }
    const cJSON *al = cJSON_GetObjectItemCaseSensitive(o, "aliases");
    if (al) {
        if (!cJSON_IsArray(al) || cJSON_GetArraySize(al) > 8)
            return bad(c, "aliases", "expected an array of at most 8 names (as published data sets spell the "
                                     "device)", NULL);
        for (const cJSON *it = al->child; it; it = it->next) {
            if (!cJSON_IsString(it) || !it->valuestring[0] || strlen(it->valuestring) >= sizeof d->aliases[0])
                return bad(c, "aliases", "each alias is a non-empty string of at most 63 characters", NULL);
            for (int j = 0; j < d->naliases; j++)
                if (strcasecmp(d->aliases[j], it->valuestring) == 0)
                    return bad(c, "aliases", "'%s' appears twice", it->valuestring);
            snprintf(d->aliases[d->naliases++], sizeof d->aliases[0], "%s", it->valuestring);
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
                                         "fp32_lanes_shared_int32", "l2_mb", "memory_type", "tdp_w", "aliases",
                                         "sources", "notes", NULL};
    static const char *const figures[] = {"peak_tflops", "memory_gb", "memory_gbs", "launch_overhead_us",
                                          "host_step_us", "host_op_us", "host_conv_op_us", "arch",
                                          "compute_capability", "sm_count", "boost_clock_mhz", "base_clock_mhz",
                                          "fp32_lanes_per_sm", "fp32_lanes_shared_int32", "l2_mb", "memory_type",
                                          "tdp_w", NULL};
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
     * host (16-vCPU VM) by bench/gpu_whatif.py --chains (stop 34, docs/accuracy.md "Spec
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
    if (parse_device_shape(c, o, d) != 0)
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
        s->device = (DeviceSpec){.calibrated = true, .gpu = false};
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

int link_load(Db *db, const char *name, LinkSpec *out, char *err, size_t errlen)
{
    return load_kind(db, name, SPEC_INTERCONNECT, out, err, errlen);
}

int system_load(Db *db, const char *name, SystemSpec *out, char *err, size_t errlen)
{
    return load_kind(db, name, SPEC_SYSTEM, out, err, errlen);
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
