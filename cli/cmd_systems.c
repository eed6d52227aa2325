/* cli/cmd_systems.c — `dlperf systems`: the spec sheets (devices, interconnects, systems)
 * predictions for machines that need not exist are made from.
 *   dlperf systems                 list them (built into the binary from systems/, and added)
 *   dlperf systems show NAME       every figure with its source
 *   dlperf systems add FILE        validate a spec sheet and store it in the database
 *   dlperf systems profile NAME... a device's evidence in the database as a compact profile
 * The list and show also as CSV (--csv): numbers in SI base units, the unit in the column name.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "predictor/device_price.h"
#include "predictor/device_profile.h"
#include "predictor/system.h"

enum { OPT_REPLACE = 1, OPT_NOTE, OPT_OUT_DIR, OPT_CSV, NOTES_MAX = 16 };

typedef struct {
    bool replace;
    bool csv; /* the list or show as CSV */
    const char *notes[NOTES_MAX];
    int nnotes;
    const char *out_dir;
} SystemsArgs;

static int systems_option(Cli *cli, int id, const char *arg, void *ctx)
{
    SystemsArgs *a = ctx;
    switch (id) {
    case OPT_REPLACE: a->replace = true; return 0;
    case OPT_NOTE:
        if (a->nnotes == NOTES_MAX)
            return cli_error(cli, EXIT_USAGE, "--note: at most %d", NOTES_MAX);
        if (!arg[0] || strlen(arg) > 400)
            return cli_error(cli, EXIT_USAGE, "--note: expected 1 to 400 characters");
        a->notes[a->nnotes++] = arg;
        return 0;
    case OPT_OUT_DIR: a->out_dir = arg; return 0;
    case OPT_CSV: a->csv = true; return 0;
    default: return EXIT_USAGE;
    }
}

/* ",v" for a figure the sheet gives, "," (an empty cell) for one it does not. */
static void csv_num(double v, bool given)
{
    if (given)
        printf(",%.9g", v);
    else
        putchar(',');
}

/* the columns every spec's CSV row starts with, the list's: name,kind,title,origin */
static void csv_spec(const char *name, SpecKind kind, const char *title, const char *origin)
{
    csv_field(stdout, name);
    printf(",%s,", spec_kind_name(kind));
    csv_field(stdout, title);
    putchar(',');
    csv_field(stdout, origin);
}

static int list(Cli *cli, Db *db, bool csv)
{
    SpecEntry *e;
    int n;
    char err[512];
    if (spec_list(db, &e, &n, err, sizeof err) != 0)
        return cli_error(cli, EXIT_FAIL, "%s", err);
    if (cli->json) {
        cJSON *arr = cJSON_CreateArray();
        for (int i = 0; i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", e[i].name);
            cJSON_AddStringToObject(o, "kind", spec_kind_name(e[i].kind));
            cJSON_AddStringToObject(o, "title", e[i].title);
            cJSON_AddStringToObject(o, "origin", e[i].origin);
            cJSON_AddItemToArray(arr, o);
        }
        json_print(arr);
    } else if (csv) {
        printf("name,kind,title,origin\n");
        for (int i = 0; i < n; i++) {
            csv_spec(e[i].name, e[i].kind, e[i].title, e[i].origin);
            putchar('\n');
        }
    } else {
        for (int k = SPEC_SYSTEM; k >= SPEC_DEVICE; k--) {
            printf("%s%ss:\n", k == SPEC_SYSTEM ? "" : "\n", spec_kind_name((SpecKind)k));
            for (int i = 0; i < n; i++)
                if (e[i].kind == (SpecKind)k)
                    printf("  %-24s %s%s\n", e[i].name, e[i].title,
                           strncmp(e[i].origin, "added", 5) == 0 ? "  (added)" : "");
        }
        printf("\n'dlperf systems show NAME' for the figures and their sources; 'dlperf predict MODEL --system "
               "NAME' and 'dlperf sweep' use them\n");
    }
    free(e);
    return EXIT_OK;
}

static void print_sources(const cJSON *o)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "sources");
    if (!cJSON_IsObject(s))
        return;
    printf("sources:\n");
    for (const cJSON *it = s->child; it; it = it->next)
        if (cJSON_IsString(it))
            printf("  %-20s %s\n", it->string, it->valuestring);
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
    if (cJSON_IsString(kind) && strcmp(kind->valuestring, "gpu") == 0 &&
        !cJSON_GetObjectItemCaseSensitive(o, "host_op_us"))
        printf("  %-20s %s\n", "host (default)",
               "PyTorch 2.11 eager as measured on an H200 machine's host (16-vCPU VM) by bench/gpu_whatif.py "
               "--chains: chains of tiny layers at two depths (docs/accuracy.md, 'Spec sheets against a real GPU'); "
               "a property of the host and framework, not of the GPU");
}

/* One spec's figures as a CSV header and row: the list's columns, then the kind's own (the
 * sheet's fields in SI base units; a figure the sheet leaves out is an empty cell). The
 * sources stay with the text and the JSON: a paragraph each, not a cell. */
static int show_csv(Cli *cli, Db *db, const char *name, SpecKind kind, const char *origin)
{
    char err[512];
    if (kind == SPEC_DEVICE) {
        DeviceSpec d;
        if (device_load(db, name, &d, err, sizeof err) != 0)
            return cli_error(cli, EXIT_FAIL, "%s", err);
        printf("name,kind,title,origin,device_kind,year");
        for (int p = 0; p < PREC_COUNT; p++)
            printf(",peak_%s_flops_per_s", precision_name((Precision)p));
        printf(",memory_bytes,mem_bw_bytes_per_s,memory_type,arch,compute_capability,sm_count,fp32_lanes_per_sm,"
               "fp32_lanes_shared_int32,issue_lanes_per_sm,fp32_gemm_flops_per_s,boost_clock_hz,base_clock_hz,l2_bytes,tdp_w,launch_overhead_s,host_op_s,"
               "host_conv_op_s,host_step_s,aliases\n");
        csv_spec(d.name, kind, d.title, origin);
        printf(",%s,%d", d.gpu ? "gpu" : "cpu", d.year);
        for (int p = 0; p < PREC_COUNT; p++)
            csv_num(d.peak_flops[p], d.peak_flops[p] > 0);
        csv_num(d.mem_bytes, true);
        csv_num(d.mem_Bps, true);
        putchar(',');
        csv_field(stdout, d.memory_type);
        putchar(',');
        csv_field(stdout, d.arch);
        if (d.compute_capability > 0) /* a version: 7.0, not 7 */
            printf(",%.1f", d.compute_capability);
        else
            putchar(',');
        csv_num(d.sm_count, d.sm_count > 0);
        csv_num(d.fp32_lanes_per_sm, d.fp32_lanes_per_sm > 0);
        csv_num(d.fp32_lanes_shared_int32, d.fp32_lanes_shared_int32 >= 0);
        csv_num(d.issue_lanes_per_sm, d.issue_lanes_per_sm > 0);
        csv_num(device_fp32_gemm_flops(&d), d.peak_flops[PREC_FP32] > 0);
        csv_num(d.boost_clock_mhz * 1e6, d.boost_clock_mhz > 0);
        csv_num(d.base_clock_mhz * 1e6, d.base_clock_mhz > 0);
        csv_num(d.l2_bytes, d.l2_bytes > 0);
        csv_num(d.tdp_w, d.tdp_w > 0);
        /* the priced figures, defaults included (a GPU's host: PyTorch eager as measured) */
        csv_num(d.launch_s, true);
        csv_num(d.host_op_s, true);
        csv_num(d.host_conv_op_s, true);
        csv_num(d.host_step_s, true);
        char aliases[DEVICE_ALIAS_MAX * (DEVICE_ALIAS_LEN + 2)] = "";
        for (int i = 0; i < d.naliases; i++)
            snprintf(aliases + strlen(aliases), sizeof aliases - strlen(aliases), "%s%s", i ? "; " : "", d.aliases[i]);
        putchar(',');
        csv_field(stdout, aliases);
        putchar('\n');
    } else if (kind == SPEC_INTERCONNECT) {
        LinkSpec l;
        if (link_load(db, name, &l, err, sizeof err) != 0)
            return cli_error(cli, EXIT_FAIL, "%s", err);
        printf("name,kind,title,origin,scope,bandwidth_bytes_per_s,latency_s\n");
        csv_spec(l.name, kind, l.title, origin);
        printf(",%s", l.intra ? "intra" : "inter");
        csv_num(l.beta_Bps, true);
        csv_num(l.alpha_s, true);
        putchar('\n');
    } else {
        SystemSpec y;
        if (system_load(db, name, &y, err, sizeof err) != 0)
            return cli_error(cli, EXIT_FAIL, "%s", err);
        printf("name,kind,title,origin,device,devices_per_node,intra,intra_bandwidth_bytes_per_s,intra_latency_s,"
               "inter,nics_per_node,inter_bandwidth_per_nic_bytes_per_s,inter_latency_s,nodes,"
               "node_peak_fp32_flops_per_s\n");
        csv_spec(y.name, kind, y.title, origin);
        putchar(',');
        csv_field(stdout, y.device.name);
        printf(",%d,", y.devices_per_node);
        csv_field(stdout, y.has_intra ? y.intra.name : "");
        csv_num(y.intra.beta_Bps, y.has_intra);
        csv_num(y.intra.alpha_s, y.has_intra);
        putchar(',');
        csv_field(stdout, y.inter.name);
        printf(",%d", y.nics_per_node);
        csv_num(y.inter.beta_Bps, true);
        csv_num(y.inter.alpha_s, true);
        csv_num(y.nodes, y.nodes > 0); /* 0: a building block, no size of its own */
        /* a calibrated device's peak is this machine's, in its calibration */
        csv_num(y.devices_per_node * y.device.peak_flops[PREC_FP32], !y.device.calibrated);
        putchar('\n');
    }
    return EXIT_OK;
}

static int show(Cli *cli, Db *db, const char *name, bool csv)
{
    SpecKind kind;
    char *text, origin[160], err[512];
    int rc = spec_find(db, name, &kind, &text, origin, sizeof origin, err, sizeof err);
    if (rc != 0)
        return cli_error(cli, rc == DB_NOT_FOUND ? EXIT_USAGE : EXIT_FAIL, "%s", err);
    if (csv) {
        free(text);
        return show_csv(cli, db, name, kind, origin);
    }
    cJSON *o = cJSON_Parse(text);
    if (cli->json) {
        cJSON_AddStringToObject(o, "origin", origin);
        free(text);
        json_print(o);
        return EXIT_OK;
    }
    free(text);
    char b[32];
    if (kind == SPEC_DEVICE) {
        DeviceSpec d;
        if (device_load(db, name, &d, err, sizeof err) != 0) {
            cJSON_Delete(o);
            return cli_error(cli, EXIT_FAIL, "%s", err);
        }
        printf("%s — %s (%s, %d; %s)\n", d.name, d.title, d.gpu ? "GPU" : "CPU", d.year, origin);
        printf("  peak       ");
        for (int p = 0; p < PREC_COUNT; p++)
            if (d.peak_flops[p] > 0)
                printf(" %s %.3g TFLOP/s ", precision_name((Precision)p), d.peak_flops[p] / 1e12);
        printf("\n  memory      %.0f GB%s%s at %.0f GB/s\n", d.mem_bytes / 1e9, d.memory_type[0] ? " " : "",
               d.memory_type, d.mem_Bps / 1e9);
        if (d.arch[0]) {
            printf("  arch        %s", d.arch);
            if (d.compute_capability > 0)
                printf(", compute capability %.1f", d.compute_capability);
            printf("\n");
        }
        if (d.sm_count) {
            /* AMD calls its SMs compute units */
            printf("  units       %d %s", d.sm_count, strncmp(d.arch, "cdna", 4) == 0 ? "CUs" : "SMs");
            if (d.fp32_lanes_per_sm)
                printf(" x %d FP32 lanes", d.fp32_lanes_per_sm);
            if (d.fp32_lanes_shared_int32 >= 0)
                printf(" (%d of them also issue INT32)", d.fp32_lanes_shared_int32);
            if (d.fp32_lanes_per_sm && d.boost_clock_mhz > 0)
                printf(" x 2 x %.0f MHz = %.2f TFLOP/s fp32", d.boost_clock_mhz,
                       d.sm_count * d.fp32_lanes_per_sm * 2 * d.boost_clock_mhz / 1e6);
            printf("\n");
        }
        if (device_fp32_gemm_flops(&d) < device_fp32_issue_flops(&d))
            printf("  gemm        a GEMM reaches at most %.3f of the fp32 peak (measured on the architecture; "
                   "sources.fp32_gemm_bound)\n",
                   d.fp32_gemm_bound);
        else if (d.issue_lanes_per_sm > 0 && d.peak_flops[PREC_FP32] > 0) {
            const double share = device_fp32_gemm_flops(&d) / d.peak_flops[PREC_FP32];
            printf("  issue       %d lanes a clock: a GEMM reaches at most %.2f of the fp32 peak", d.issue_lanes_per_sm,
                   share);
            if (d.fp32_lanes_shared_int32 > 0 && d.fp32_lanes_shared_int32 < d.fp32_lanes_per_sm)
                printf(" (its dedicated lanes)");
            else if (share >= 1)
                printf(" (the loads and loop take the spare slots)");
            printf("\n");
        }
        if (d.boost_clock_mhz > 0 || d.base_clock_mhz > 0) {
            printf("  clocks     ");
            if (d.boost_clock_mhz > 0)
                printf(" %.0f MHz boost", d.boost_clock_mhz);
            if (d.base_clock_mhz > 0)
                printf("%s %.0f MHz base", d.boost_clock_mhz > 0 ? "," : "", d.base_clock_mhz);
            printf("\n");
        }
        if (d.l2_bytes > 0)
            printf("  L2          %.2f MiB\n", d.l2_bytes / 1048576.0);
        if (d.tdp_w > 0)
            printf("  power       %.0f W limit (TDP)\n", d.tdp_w);
        if (d.naliases) {
            printf("  aliases    ");
            for (int i = 0; i < d.naliases; i++)
                printf(" \"%s\"%s", d.aliases[i], i + 1 < d.naliases ? "," : "");
            printf("\n");
        }
        printf("  launch      %.1f us per kernel\n", d.launch_s * 1e6);
        if (device_host_floor(&d))
            printf("  host        %.1f us per op, %.1f us per convolution or batch-norm op, %.0f us per step "
                   "(an eager framework's floor)\n", d.host_op_s * 1e6, d.host_conv_op_s * 1e6, d.host_step_s * 1e6);
        printf("  balance     %.0f FLOP per byte at fp32 (ops below it are memory-bound)\n",
               d.peak_flops[PREC_FP32] / d.mem_Bps);
    } else if (kind == SPEC_INTERCONNECT) {
        LinkSpec l;
        if (link_load(db, name, &l, err, sizeof err) != 0) {
            cJSON_Delete(o);
            return cli_error(cli, EXIT_FAIL, "%s", err);
        }
        printf("%s — %s (%s a node; %s)\n", l.name, l.title, l.intra ? "inside" : "between nodes, not inside",
               origin);
        printf("  bandwidth   %.2f GB/s per direction\n  latency     %.2f us\n", l.beta_Bps / 1e9, l.alpha_s * 1e6);
        printf("  a 100 MB message: %s (alpha + n/beta)\n", fmt_time(l.alpha_s + 1e8 / l.beta_Bps, b, 32));
    } else {
        SystemSpec s;
        if (system_load(db, name, &s, err, sizeof err) != 0) {
            cJSON_Delete(o);
            return cli_error(cli, EXIT_FAIL, "%s", err);
        }
        printf("%s — %s (%s)\n", s.name, s.title, origin);
        printf("  node        %d x %s (%s)\n", s.devices_per_node, s.device.name, s.device.title);
        if (s.has_intra)
            printf("  intra-node  %s: %.1f GB/s, %.2f us\n", s.intra.name, s.intra.beta_Bps / 1e9, s.intra.alpha_s * 1e6);
        printf("  inter-node  %d x %s: %.1f GB/s per node, %.2f us\n", s.nics_per_node, s.inter.name,
               s.nics_per_node * s.inter.beta_Bps / 1e9, s.inter.alpha_s * 1e6);
        if (s.nodes)
            printf("  nodes       %d (%d devices)\n", s.nodes, s.nodes * s.devices_per_node);
        if (!s.device.calibrated)
            printf("  peak        %.1f PFLOP/s fp32 per node\n", s.devices_per_node * s.device.peak_flops[PREC_FP32] / 1e15);
    }
    print_sources(o);
    cJSON_Delete(o);
    return EXIT_OK;
}

static char *read_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open", path);
        return NULL;
    }
    enum { MAX = 1 << 20 };
    char *buf = malloc(MAX + 1);
    size_t n = buf ? fread(buf, 1, MAX + 1, f) : 0;
    fclose(f);
    if (!buf || n > MAX) {
        free(buf);
        snprintf(err, errlen, "%s: larger than 1 MiB; a spec sheet is a small JSON file", path);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

static int add(Cli *cli, Db *db, const char *path, bool replace)
{
    char err[1024], name[SPEC_NAME_MAX];
    char *text = read_file(path, err, sizeof err);
    if (!text)
        return cli_error(cli, EXIT_USAGE, "%s", err);
    SpecKind kind;
    if (spec_validate(db, text, path, &kind, name, err, sizeof err) != 0) {
        free(text);
        return cli_error(cli, EXIT_USAGE, "%s", err);
    }
    int rc = db_spec_put(db, name, spec_kind_name(kind), text, path, replace);
    free(text);
    if (rc == DB_EXISTS)
        return cli_error(cli, EXIT_USAGE, "%s: a spec named '%s' was already added; --replace replaces it", path, name);
    if (rc != 0)
        return cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
    if (cli->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", name);
        cJSON_AddStringToObject(o, "kind", spec_kind_name(kind));
        json_print(o);
    } else {
        printf("added %s '%s' from %s to %s\n", spec_kind_name(kind), name, path, cli->db_path);
    }
    return EXIT_OK;
}

typedef struct {
    char *v[64];
    int n;
} Sources;

static int add_source(const CalibrationRow *c, void *ctx)
{
    Sources *s = ctx;
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i], c->source) == 0)
            return 0;
    if (s->n < 64 && c->source[0])
        s->v[s->n++] = strdup(c->source);
    return 0;
}

/* The device's evidence in the database, every precision, as a profile: to DIR/NAME.json,
 * or standard output. */
static int profile_one(Cli *cli, Db *db, const char *name, const SystemsArgs *a)
{
    DeviceSpec spec;
    char err[1024];
    if (device_load(db, name, &spec, err, sizeof err) != 0)
        return cli_error(cli, EXIT_USAGE, "%s", err);
    static const Precision precs[] = {PREC_FP32, PREC_TF32, PREC_FP16, PREC_BF16};
    enum { NP = sizeof precs / sizeof precs[0] };
    DeviceEvidence *ev[NP] = {NULL};
    Sources src[NP];
    ProfilePart parts[NP];
    int n = 0, rc = EXIT_OK;
    memset(src, 0, sizeof src);
    for (int i = 0; i < NP && rc == EXIT_OK; i++) {
        if (!(ev[i] = dp_device_evidence(db, &spec, precs[i], cli_fitting_progress, (void *)cli->cmd, err,
                                         sizeof err))) {
            if (err[0])
                rc = cli_error(cli, EXIT_FAIL, "%s", err);
            continue;
        }
        if (db_device_calibrations(db, spec.name, precision_name(precs[i]), add_source, &src[i]) != 0) {
            rc = cli_error(cli, EXIT_FAIL, "%s", db_errmsg(db));
            break;
        }
        parts[n++] = (ProfilePart){precision_name(precs[i]), ev[i], (const char *const *)src[i].v, src[i].n};
    }
    char *text = NULL;
    if (rc == EXIT_OK && n == 0)
        rc = cli_error(cli, EXIT_USAGE, "%s: no measurements of it in %s to profile ('dlperf import FILE... --device "
                       "%s' stores them)", spec.name, cli->db_path, spec.name);
    if (rc == EXIT_OK) {
        char now[32];
        db_now_iso(now);
        if (!(text = profile_write(spec.name, parts, n, a->notes, a->nnotes, now, err, sizeof err)))
            rc = cli_error(cli, EXIT_FAIL, "%s", err);
    }
    if (rc == EXIT_OK && a->out_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.json", a->out_dir, spec.name);
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "w");
        if (!f || fputs(text, f) < 0 || fputc('\n', f) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
            rc = cli_error(cli, EXIT_FAIL, "--out-dir: cannot write %s (a writable directory is needed)", path);
            remove(tmp);
        } else if (!cli->json) {
            printf("%s: %s, precisions", path, spec.name);
            for (int i = 0; i < n; i++) {
                const GpuGroupFit *g;
                const int ng = dev_ev_groups(parts[i].ev, &g);
                printf("%s %s (%d groups from %d measurements)", i ? "," : "", parts[i].precision, ng,
                       dev_ev_points(parts[i].ev));
            }
            printf("\n");
        }
    } else if (rc == EXIT_OK) {
        printf("%s\n", text);
    }
    free(text);
    for (int i = 0; i < NP; i++) {
        dev_ev_free(ev[i]);
        for (int k = 0; k < src[i].n; k++)
            free(src[i].v[k]);
    }
    return rc;
}

int cmd_systems(int argc, char **argv, Cli *cli)
{
    static const struct option opts[] = {CLI_COMMON_OPTIONS,
                                         {"replace", no_argument, NULL, OPT_REPLACE},
                                         {"note", required_argument, NULL, OPT_NOTE},
                                         {"out-dir", required_argument, NULL, OPT_OUT_DIR},
                                         {"csv", no_argument, NULL, OPT_CSV},
                                         {0}};
    SystemsArgs a = {.replace = false};
    int rc = cli_parse(cli, argc, argv, opts, systems_option, &a, command_usage(cli->cmd));
    if (rc)
        return rc;
    const char *verb = optind < argc ? argv[optind] : "list";
    const int nargs = argc - optind - (optind < argc);
    const bool profile = strcmp(verb, "profile") == 0;
    if (strcmp(verb, "list") == 0 && nargs != 0)
        return cli_error(cli, EXIT_USAGE, "'systems' takes no more arguments ('%s')", argv[optind + 1]);
    if ((strcmp(verb, "show") == 0 || strcmp(verb, "add") == 0) && nargs != 1)
        return cli_error(cli, EXIT_USAGE, "'systems %s' takes one %s", verb,
                         verb[0] == 's' ? "NAME (see 'dlperf systems')" : "FILE (a JSON spec sheet, systems/README.md)");
    if (profile && (nargs < 1 || (nargs > 1 && !a.out_dir)))
        return cli_error(cli, EXIT_USAGE, "'systems profile' takes a device NAME (several with --out-dir DIR)");
    if (strcmp(verb, "list") != 0 && strcmp(verb, "show") != 0 && strcmp(verb, "add") != 0 && !profile)
        return cli_error(cli, EXIT_USAGE, "'%s': expected show NAME, add FILE, profile NAME..., or nothing (the list)",
                         verb);
    if (a.replace && strcmp(verb, "add") != 0)
        return cli_error(cli, EXIT_USAGE, "--replace goes with 'systems add FILE'");
    if ((a.nnotes || a.out_dir) && !profile)
        return cli_error(cli, EXIT_USAGE, "--note and --out-dir go with 'systems profile NAME...'");
    if (a.csv && cli->json)
        return cli_error(cli, EXIT_USAGE, "--csv and --json are two formats; choose one");
    if (a.csv && (profile || strcmp(verb, "add") == 0))
        return cli_error(cli, EXIT_USAGE, "--csv goes with the list and 'systems show NAME' ('%s' %s)", verb,
                         profile ? "writes a JSON profile" : "stores a sheet");
    Db *db = cli_db_open(cli);
    if (!db)
        return EXIT_FAIL;
    if (strcmp(verb, "list") == 0)
        rc = list(cli, db, a.csv);
    else if (strcmp(verb, "show") == 0)
        rc = show(cli, db, argv[optind + 1], a.csv);
    else if (profile)
        for (int i = optind + 1; i < argc && rc == EXIT_OK; i++)
            rc = profile_one(cli, db, argv[i], &a);
    else
        rc = add(cli, db, argv[optind + 1], a.replace);
    db_close(db);
    return rc;
}
