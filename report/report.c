/* report/report.c — the HTML report and its figures (report.h). */
#include "report/report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "models/model.h"
#include "predictor/device_profile.h"
#include "predictor/predict.h"
#include "predictor/system_pricer.h"
#include "suite/fom.h"

typedef struct {
    Db *db;
    const ReportOptions *o;
    ReportSummary *s;
    FILE *html;
    char *err;
    size_t errlen;
} Rep;

static int failf(Rep *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int failf(Rep *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static void progress(Rep *r, const char *what)
{
    if (r->o->progress)
        r->o->progress(what, r->o->ctx);
}

static FILE *open_in(Rep *r, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", r->o->out_dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        failf(r, "%s: cannot be written: %s", path, strerror(errno));
    return f;
}

/* HTML text, escaped */
static void esc(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
}

/* Runs `gnuplot NAME.gp` in the output folder (the script names its files relative to it,
 * so the folder can be moved and the figure redrawn there). */
static int run_gnuplot(Rep *r, const char *name)
{
    char script[64];
    snprintf(script, sizeof script, "%s.gp", name);
    const pid_t pid = fork();
    if (pid < 0)
        return failf(r, "cannot start gnuplot: %s", strerror(errno));
    if (pid == 0) {
        if (chdir(r->o->out_dir) != 0)
            _exit(126);
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return failf(r, "gnuplot failed on %s/%s (exit %d%s)", r->o->out_dir, script,
                     WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                     WIFEXITED(st) && WEXITSTATUS(st) == 127 ? ": is gnuplot-nox installed?" : "");
    return 0;
}

/* The SVG gnuplot drew, inline in the page (its XML prolog dropped). */
static int embed_svg(Rep *r, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.svg", r->o->out_dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return failf(r, "%s: gnuplot wrote no figure", path);
    char line[8192];
    bool started = false;
    while (fgets(line, sizeof line, f)) {
        if (!started) {
            char *svg = strstr(line, "<svg");
            if (!svg)
                continue;
            started = true;
            fputs(svg, r->html);
            continue;
        }
        fputs(line, r->html);
    }
    fclose(f);
    return started ? 0 : failf(r, "%s: no <svg> element", path);
}

static void gp_header(FILE *g, const char *name, const char *title)
{
    fprintf(g, "# %s.gp: draws %s.svg from %s.csv (gnuplot %s.gp)\n", name, name, name, name);
    char id[32];
    snprintf(id, sizeof id, "%s", name);
    for (char *c = id; *c; c++) /* gnuplot's SVG name: alphanumerics and _ */
        if (*c == '-')
            *c = '_';
    fprintf(g, "set terminal svg size 900,520 dynamic enhanced font 'sans,11' name '%s'\n", id);
    fprintf(g, "set output '%s.svg'\nset datafile separator ','\nset key autotitle columnhead noenhanced\n", name);
    fprintf(g, "set termoption noenhanced\n");
    fprintf(g, "set title \"%s\"\nset grid\n", title);
}

/* Opens a figure's section; its figure follows, then figure_end. */
static void section(Rep *r, const char *name, const char *heading, const char *what)
{
    fprintf(r->html, "<section id=\"%s\">\n<h2>", name);
    esc(r->html, heading);
    fprintf(r->html, "</h2>\n<p>");
    esc(r->html, what);
    fprintf(r->html, "</p>\n");
}

static int figure_end(Rep *r, const char *name, const char *caption)
{
    fprintf(r->html, "<figure class=\"figure\" data-figure=\"%s\">\n", name);
    if (run_gnuplot(r, name) != 0 || embed_svg(r, name) != 0)
        return -1;
    fprintf(r->html, "<figcaption>");
    esc(r->html, caption);
    fprintf(r->html, " <a href=\"%s.csv\">data (CSV)</a> · <a href=\"%s.gp\">gnuplot script</a> · "
                     "<a href=\"%s.svg\">SVG</a></figcaption>\n</figure>\n</section>\n", name, name, name);
    if (r->s->figures < REPORT_ITEMS_MAX)
        snprintf(r->s->names[r->s->figures], sizeof r->s->names[0], "%s", name);
    r->s->figures++;
    return 0;
}

static void no_data(Rep *r, const char *why)
{
    fprintf(r->html, "<p class=\"missing\">");
    esc(r->html, why);
    fprintf(r->html, "</p>\n</section>\n");
    r->s->missing++;
}

/* ---- roofline ---- */

typedef struct {
    FILE *f;
    int n;
    char kinds[16][24];
    int nkinds;
} Rows;

static int roof_row(int nc, const double *num, const char *const *text, void *ctx)
{
    Rows *x = ctx;
    (void)nc;
    fprintf(x->f, "%s,%.6g,%.6g\n", text[0], num[1] / num[2], num[1] / num[3] / 1e9);
    x->n++;
    int k = 0;
    while (k < x->nkinds && strcmp(x->kinds[k], text[0]) != 0)
        k++;
    if (k == x->nkinds && x->nkinds < 16)
        snprintf(x->kinds[x->nkinds++], sizeof x->kinds[0], "%s", text[0]);
    return 0;
}

static int roofline(Rep *r)
{
    progress(r, "roofline");
    section(r, "roofline", "This machine's roofline",
            "Every kernel of this machine's latest calibration: arithmetic intensity (FLOPs per compulsory byte) "
            "against its median rate, under the roofs the calibration measured (peak FMA rate and DRAM read "
            "bandwidth). Kernels above the bandwidth roof ran from cache.");
    CalibrationRow cal;
    const int found = db_calibration_latest(r->db, r->o->machine_id, r->o->threads, &cal);
    if (found < 0)
        return failf(r, "%s", db_errmsg(r->db));
    if (found != 0) {
        char why[200];
        snprintf(why, sizeof why, "No complete calibration of this machine at %d threads: dlperf calibrate makes one.",
                 r->o->threads);
        no_data(r, why);
        return 0;
    }
    CostModel *cm = cm_load(r->db, cal.id, r->err, r->errlen);
    if (!cm)
        return -1;
    double peak, bw;
    cm_limits(cm, &peak, &bw);
    cm_free(cm);
    FILE *f = open_in(r, "roofline.csv");
    if (!f)
        return -1;
    fprintf(f, "kind,intensity_flop_per_byte,gflops\n");
    Rows x = {.f = f};
    const int rc = db_rows(r->db,
                           "SELECT kind, flops, bytes, median_s FROM measurement WHERE calibration_id = ? AND flops > 0"
                           " AND bytes > 0 AND median_s > 0 ORDER BY kind",
                           roof_row, &x, "I", cal.id);
    fclose(f);
    if (rc != 0)
        return failf(r, "%s", db_errmsg(r->db));
    FILE *g = open_in(r, "roofline.gp");
    if (!g)
        return -1;
    char title[200];
    snprintf(title, sizeof title, "calibration %lld (%s, %d threads): %d kernels", (long long)cal.id, cal.mode,
             cal.sw.threads, x.n);
    gp_header(g, "roofline", title);
    fprintf(g, "set logscale xy\nset xlabel 'FLOPs per byte'\nset ylabel 'GFLOP/s'\nset key outside right\n");
    fprintf(g, "peak = %.6g\nbw = %.6g\nroof(x) = (bw * x < peak ? bw * x : peak)\n", peak / 1e9, bw / 1e9);
    fprintf(g, "plot ");
    for (int k = 0; k < x.nkinds; k++)
        fprintf(g, "'roofline.csv' using 2:(strcol(1) eq '%s' ? $3 : 1/0) with points pt %d ps 0.55 lc %d title '%s', ",
                x.kinds[k], k < 8 ? 7 : 5, k % 8 + 1, x.kinds[k]); /* 8 colours, then squares */
    fprintf(g, "roof(x) with lines lw 2 lc rgb 'black' title sprintf('roof: %%.0f GFLOP/s, %%.1f GB/s', peak, bw)\n");
    fclose(g);
    char cap[200];
    snprintf(cap, sizeof cap, "Peak %.1f GFLOP/s, DRAM %.1f GB/s, from calibration %lld (%s).", peak / 1e9, bw / 1e9,
             (long long)cal.id, cal.started_at);
    return figure_end(r, "roofline", cap);
}

/* ---- validations ---- */

static const char *LATEST_VALIDATIONS =
    "SELECT v.id FROM validation v JOIN run r ON r.id = v.run_id WHERE r.machine_id = ? AND v.holdout = 0"
    " AND v.ranks = 1 AND v.id IN (SELECT max(id) FROM validation GROUP BY model, batch, threads, holdout, ranks)";

static int plain_row(int nc, const double *num, const char *const *text, void *ctx)
{
    Rows *x = ctx;
    for (int c = 0; c < nc; c++) {
        if (c)
            fputc(',', x->f);
        if (isnan(num[c]))
            fprintf(x->f, "%s", text[c]);
        else
            fprintf(x->f, "%.6g", num[c]);
    }
    fputc('\n', x->f);
    x->n++;
    return 0;
}

static int validation(Rep *r)
{
    progress(r, "validation");
    section(r, "validation", "Predicted against measured",
            "Every model validated on this machine (dlperf validate): the predicted iteration time against the "
            "measured median, the latest validation of each model, batch and thread count.");
    FILE *f = open_in(r, "validation.csv");
    if (!f)
        return -1;
    fprintf(f, "model,batch,threads,predicted_s,measured_s,measured_min_s,measured_max_s,error_pct\n");
    Rows x = {.f = f};
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT model, batch, threads, predicted_s, measured_s, measured_min_s, measured_max_s, error_pct"
             " FROM validation WHERE id IN (%s) ORDER BY model",
             LATEST_VALIDATIONS);
    const int rc = db_rows(r->db, sql, plain_row, &x, "I", r->o->machine_id);
    fclose(f);
    if (rc != 0)
        return failf(r, "%s", db_errmsg(r->db));
    if (x.n == 0) {
        no_data(r, "No validation on this machine yet: dlperf validate MODEL... makes them.");
        return 0;
    }
    FILE *g = open_in(r, "validation.gp");
    if (!g)
        return -1;
    char title[96];
    snprintf(title, sizeof title, "%d validations", x.n);
    gp_header(g, "validation", title);
    fprintf(g, "set logscale xy\nset xlabel 'measured (s per iteration)'\nset ylabel 'predicted (s)'\n"
               "set key top left\nset size ratio -1\n");
    fprintf(g, "plot x with lines lc rgb 'black' title 'predicted = measured', "
               "1.1*x with lines dt 2 lc rgb 'gray' title '+-10%%', 0.9*x with lines dt 2 lc rgb 'gray' notitle, "
               "'validation.csv' using 5:4:6:7 with xerrorbars pt 7 ps 0.7 title 'model (measured min..max)', "
               "'validation.csv' using 5:4:1 with labels offset 0.8,0.6 font ',8' left notitle\n");
    fclose(g);
    return figure_end(r, "validation", "Points on the diagonal are exact; the dashed lines are +-10%.");
}

/* ---- op kinds and memory of the validated models ---- */

enum { KINDS_NAMED = 11 }; /* the kinds drawn apart; the rest as "other" */

typedef struct {
    char model[32][48];
    int nmodels;
    char kind[KINDS_NAMED + 1][24];
    int nkinds;
    bool other;
    double t[32][KINDS_NAMED + 1];
} Matrix;

static int matrix_row(int nc, const double *num, const char *const *text, void *ctx)
{
    Matrix *m = ctx;
    (void)nc;
    int i = 0;
    while (i < m->nmodels && strcmp(m->model[i], text[0]) != 0)
        i++;
    if (i == m->nmodels) {
        if (m->nmodels == 32)
            return 0;
        snprintf(m->model[m->nmodels++], sizeof m->model[0], "%s", text[0]);
    }
    int k = 0;
    while (k < m->nkinds && strcmp(m->kind[k], text[1]) != 0)
        k++;
    if (k == m->nkinds) {
        if (m->nkinds < KINDS_NAMED)
            snprintf(m->kind[m->nkinds++], sizeof m->kind[0], "%s", text[1]);
        else
            k = KINDS_NAMED, m->other = true;
    }
    m->t[i][k] += isnan(num[2]) ? 0 : num[2];
    return 0;
}

static int op_kinds(Rep *r)
{
    progress(r, "op kinds");
    section(r, "op-kinds", "Where the time goes, by op kind",
            "The validated models' measured step (their traced runs: each op timed), as shares of the step by "
            "op kind.");
    Matrix m = {0};
    char sql[1400];
    snprintf(sql, sizeof sql,
             "SELECT v.model || ' @' || v.batch, o.kind, sum(o.time_s) FROM run_op o JOIN validation v ON v.run_id = "
             "o.run_id WHERE v.id IN (%s) GROUP BY v.id, o.kind ORDER BY v.model, sum(o.time_s) DESC",
             LATEST_VALIDATIONS);
    if (db_rows(r->db, sql, matrix_row, &m, "I", r->o->machine_id) != 0)
        return failf(r, "%s", db_errmsg(r->db));
    if (m.nmodels == 0) {
        no_data(r, "No traced run of a validated model: dlperf validate MODEL traces its runs.");
        return 0;
    }
    if (m.other)
        snprintf(m.kind[KINDS_NAMED], sizeof m.kind[0], "other");
    const int nk = m.other ? KINDS_NAMED + 1 : m.nkinds;
    FILE *f = open_in(r, "op-kinds.csv");
    if (!f)
        return -1;
    fprintf(f, "model");
    for (int k = 0; k < nk; k++)
        fprintf(f, ",%s", m.kind[k]);
    fprintf(f, "\n");
    for (int i = 0; i < m.nmodels; i++) {
        double sum = 0;
        for (int k = 0; k < nk; k++)
            sum += m.t[i][k];
        fprintf(f, "%s", m.model[i]);
        for (int k = 0; k < nk; k++)
            fprintf(f, ",%.6g", sum > 0 ? 100 * m.t[i][k] / sum : 0);
        fprintf(f, "\n");
    }
    fclose(f);
    FILE *g = open_in(r, "op-kinds.gp");
    if (!g)
        return -1;
    gp_header(g, "op-kinds", "share of the measured step by op kind");
    fprintf(g, "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.85 border -1\n"
               "set boxwidth 0.7\nset ylabel '%% of the step'\nset yrange [0:100]\nset key outside right\n"
               "set xtics rotate by -30\nplot for [i=2:%d] 'op-kinds.csv' using i:xtic(1)\n", nk + 1);
    fclose(g);
    return figure_end(r, "op-kinds", "Percent of each model's traced step.");
}

static int memory(Rep *r)
{
    progress(r, "memory");
    section(r, "memory", "Memory by category",
            "The validated models' memory per process as predicted (the plan's arenas), by category.");
    FILE *f = open_in(r, "memory.csv");
    if (!f)
        return -1;
    fprintf(f, "model,parameters,gradients,optimizer state,activations,workspace,input batches\n");
    Rows x = {.f = f};
    char sql[1400];
    snprintf(sql, sizeof sql,
             "SELECT p.model || ' @' || p.batch, p.mem_params / 1073741824.0, p.mem_grads / 1073741824.0,"
             " p.mem_opt / 1073741824.0, p.mem_act / 1073741824.0, p.mem_ws / 1073741824.0,"
             " 2 * p.mem_input / 1073741824.0 FROM prediction p JOIN validation v ON v.prediction_id = p.id"
             " WHERE v.id IN (%s) ORDER BY p.model",
             LATEST_VALIDATIONS);
    const int rc = db_rows(r->db, sql, plain_row, &x, "I", r->o->machine_id);
    fclose(f);
    if (rc != 0)
        return failf(r, "%s", db_errmsg(r->db));
    if (x.n == 0) {
        no_data(r, "No validated model: dlperf validate MODEL... makes them.");
        return 0;
    }
    FILE *g = open_in(r, "memory.gp");
    if (!g)
        return -1;
    gp_header(g, "memory", "memory per process by category");
    fprintf(g, "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.85 border -1\n"
               "set boxwidth 0.7\nset ylabel 'GiB'\nset key outside right\nset xtics rotate by -30\n"
               "plot for [i=2:7] 'memory.csv' using i:xtic(1)\n");
    fclose(g);
    return figure_end(r, "memory", "GiB; the input batches counted twice (the one in use and the next).");
}

/* ---- a model's predicted scaling on a system ---- */

static int scaling(Rep *r)
{
    const char *sysname = r->o->system ? r->o->system : "dgx-a100";
    const char *model = r->o->model ? r->o->model : "resnet50";
    progress(r, "scaling");
    char what[300];
    snprintf(what, sizeof what,
             "%s trained data parallel on %s (predicted, fp32, the model's batch per device): epoch time and scaling "
             "efficiency over node counts.",
             model, sysname);
    section(r, "scaling", "Predicted scaling", what);
    const ModelSpec *m = zoo_find(model);
    SystemSpec sys;
    char e[512];
    if (!m)
        return failf(r, "--model '%s': not a zoo model ('dlperf models')", model);
    if (system_load(r->db, sysname, &sys, e, sizeof e) != 0)
        return failf(r, "--system: %s", e);
    SystemPricerOpts so = {.prec = PREC_FP32, .mode = PLAN_TRAIN};
    SystemPricer sp;
    if (sysp_open(r->db, &sys, NULL, &so, &sp, e, sizeof e) != 0) {
        char why[600];
        snprintf(why, sizeof why, "Not priced: %s", e);
        no_data(r, why);
        return 0;
    }
    DeviceStep step;
    double grad = 0;
    if (sysp_step(&sp, m, m->default_batch, PLAN_TRAIN, 0, &step, &grad, e, sizeof e) != 0) {
        sysp_close(&sp);
        return failf(r, "%s on %s: %s", model, sysname, e);
    }
    FILE *f = open_in(r, "scaling.csv");
    if (!f) {
        sysp_close(&sp);
        return -1;
    }
    fprintf(f, "nodes,devices,epoch_s,iteration_s,speedup,efficiency,communication_fraction\n");
    const double samples = m->train_samples > 0 ? m->train_samples : 0;
    for (int nodes = 1; nodes <= 1024; nodes *= 2) {
        ScalePoint pt;
        whatif_scale_point(&sp.sys, &sp.comm, sp.algo, sp.prec, &step, grad, nodes, m->default_batch, false,
                           step.compute_s / m->default_batch, samples, &pt);
        fprintf(f, "%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g\n", nodes, pt.ranks, pt.epoch_s, pt.iter_s, pt.speedup,
                pt.efficiency, pt.comm_fraction);
    }
    fclose(f);
    sysp_close(&sp);
    FILE *g = open_in(r, "scaling.gp");
    if (!g)
        return -1;
    char title[160];
    snprintf(title, sizeof title, "%s on %s (%d x %s per node)", model, sysname, sys.devices_per_node, sys.device.name);
    gp_header(g, "scaling", title);
    fprintf(g, "set logscale x 2\nset xlabel 'nodes'\nset logscale y\nset ylabel '%s'\nset y2label 'scaling "
               "efficiency'\nset y2range [0:1.05]\nset y2tics\nset ytics nomirror\nset key bottom left\n"
               "plot 'scaling.csv' using 1:%d with linespoints axes x1y1, 'scaling.csv' using 1:6 with linespoints "
               "axes x1y2\n",
            samples > 0 ? "epoch (s)" : "iteration (s)", samples > 0 ? 3 : 4);
    fclose(g);
    return figure_end(r, "scaling", "Predicted; the allreduce after backward, no overlap.");
}

/* ---- tables ---- */

static int fom_table(Rep *r)
{
    progress(r, "figures of merit");
    fprintf(r->html, "<section id=\"fom\">\n<h2>Seed 000's figures of merit</h2>\n<p>Predicted for proposed "
                     "systems (dlperf fom), against the seed's Titan table; FOM(*) against Titan as dlperf prices "
                     "it (docs/suite.md).</p>\n<table data-table=\"fom\">\n<tr><th>system</th><th>devices</th>"
                     "<th>candle</th><th>convnet</th><th>LSTM</th><th>ResNet-50</th><th>overall (band)</th>"
                     "<th>overall (*)</th></tr>\n");
    static const char *const DEFAULT[] = {"titan", "summit", "dgx-a100", NULL};
    const char *const *names = r->o->fom_systems ? r->o->fom_systems : DEFAULT;
    SystemSpec titan;
    char e[512];
    if (system_load(r->db, "titan", &titan, e, sizeof e) != 0)
        return failf(r, "%s", e);
    SystemPricerOpts so = {.prec = PREC_FP32, .mode = PLAN_TRAIN};
    SystemPricer tp;
    const bool have_titan = sysp_open(r->db, &titan, NULL, &so, &tp, e, sizeof e) == 0;
    FomResult *res = malloc(sizeof *res);
    if (!res)
        return failf(r, "out of memory");
    for (int i = 0; names[i] && have_titan; i++) {
        SystemSpec sys;
        SystemPricer sp;
        if (system_load(r->db, names[i], &sys, e, sizeof e) != 0 || sysp_open(r->db, &sys, NULL, &so, &sp, e, sizeof e)) {
            fprintf(r->html, "<tr><td>%s</td><td colspan=\"7\">", names[i]);
            esc(r->html, e);
            fprintf(r->html, "</td></tr>\n");
            continue;
        }
        const FomOptions fo = {0};
        if (fom_predict(&sp, &tp, &fo, res, NULL, NULL, e, sizeof e) != 0) {
            sysp_close(&sp);
            free(res);
            sysp_close(&tp);
            return failf(r, "%s", e);
        }
        fprintf(r->html, "<tr><td>%s</td><td>%d</td>", names[i], res->devices);
        for (int g = 0; g < SUITE_GROUP_COUNT; g++)
            fprintf(r->html, "<td>%.4g</td>", res->seed_group[g].fom);
        fprintf(r->html, "<td>%.4g (%.4g .. %.4g)</td><td>%.4g</td></tr>\n", res->seed_overall.fom,
                res->seed_overall.lo, res->seed_overall.hi, res->priced_overall.fom);
        sysp_close(&sp);
    }
    free(res);
    if (have_titan)
        sysp_close(&tp);
    fprintf(r->html, "</table>\n");
    SuiteRunRow run;
    SuiteResultRow *rows;
    int n;
    const int rc = db_suite_get(r->db, 0, r->o->machine_id, &run, &rows, &n);
    if (rc == 0) {
        fprintf(r->html, "<p>This machine, measured: suite run %lld (%s%s), ", (long long)run.id, run.mode,
                strcmp(run.mode, "full") == 0 ? "" : ", not a valid FOM");
        if (isfinite(run.overall_fom))
            fprintf(r->html, "overall FOM %.4g.</p>\n", run.overall_fom);
        else
            fprintf(r->html, "%d benchmarks (no overall: not every group ran).</p>\n", n);
        fprintf(r->html, "<table data-table=\"suite\">\n<tr><th>benchmark</th><th>instances</th><th>time (s)</th>"
                         "<th>FOM</th></tr>\n");
        for (int i = 0; i < n; i++)
            fprintf(r->html, "<tr><td>%s</td><td>%d</td><td>%.5g%s</td><td>%.4g</td></tr>\n", rows[i].benchmark,
                    rows[i].instances, rows[i].time_s, rows[i].projected ? " (projected)" : "", rows[i].fom);
        fprintf(r->html, "</table>\n");
        free(rows);
    } else if (rc == DB_NOT_FOUND) {
        fprintf(r->html, "<p class=\"missing\">No suite run of this machine stored: dlperf suite runs one.</p>\n");
    } else {
        return failf(r, "%s", db_errmsg(r->db));
    }
    fprintf(r->html, "</section>\n");
    return 0;
}

static int evidence_row(const char *device, const char *precision, int calibrations, int measurements, void *ctx)
{
    Rep *r = ctx;
    fprintf(r->html, "<tr><td>%s</td><td>%s</td><td>this database: %d calibration%s, %d measurements</td></tr>\n",
            device, precision, calibrations, calibrations == 1 ? "" : "s", measurements);
    return 0;
}

static int evidence_table(Rep *r)
{
    progress(r, "evidence");
    fprintf(r->html, "<section id=\"evidence\">\n<h2>GPUs with evidence</h2>\n<p>What prices a GPU (docs/gpu-pricing.md):"
                     " a device's own measurements, imported into this database or in a built-in profile; the others"
                     " are priced from these, carried over by their spec sheets.</p>\n<table data-table=\"evidence\">\n"
                     "<tr><th>device</th><th>precision</th><th>evidence</th></tr>\n");
    for (int i = 0; i < profile_builtin_count(); i++) {
        const char *path;
        const char *text = profile_builtin(i, &path);
        char name[48], e[256];
        if (profile_device(text, path, name, e, sizeof e) != 0)
            continue;
        fprintf(r->html, "<tr><td>%s</td><td>fp32</td><td>built-in profile (%s)</td></tr>\n", name, path);
    }
    if (db_device_evidence_foreach(r->db, evidence_row, r) != 0)
        return failf(r, "%s", db_errmsg(r->db));
    fprintf(r->html, "</table>\n</section>\n");
    return 0;
}

int report_write(Db *db, const ReportOptions *o, ReportSummary *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (mkdir(o->out_dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "--out %s: cannot be created: %s", o->out_dir, strerror(errno));
        return -1;
    }
    Rep r = {.db = db, .o = o, .s = s, .err = err, .errlen = errlen};
    snprintf(s->page, sizeof s->page, "%s/index.html", o->out_dir);
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s/.index.html.tmp", o->out_dir);
    if (!(r.html = fopen(tmp, "w"))) {
        snprintf(err, errlen, "--out %s: cannot be written: %s", o->out_dir, strerror(errno));
        return -1;
    }
    char now[32];
    db_now_iso(now);
    fprintf(r.html, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>dlperf report</title>\n"
                    "<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}"
                    "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}"
                    "td:first-child,th:first-child{text-align:left}figure{margin:1em 0}figcaption{font-size:90%%}"
                    ".missing{color:#a40}</style>\n</head>\n<body>\n<h1>dlperf report</h1>\n<p>");
    esc(r.html, o->machine_title ? o->machine_title : "this machine");
    fprintf(r.html, ", database ");
    esc(r.html, o->db_path ? o->db_path : "");
    fprintf(r.html, ", written %s.</p>\n", now);
    int rc = roofline(&r);
    if (rc == 0)
        rc = validation(&r);
    if (rc == 0)
        rc = op_kinds(&r);
    if (rc == 0)
        rc = memory(&r);
    if (rc == 0)
        rc = scaling(&r);
    if (rc == 0)
        rc = fom_table(&r);
    if (rc == 0)
        rc = evidence_table(&r);
    fprintf(r.html, "</body>\n</html>\n");
    if (fclose(r.html) != 0 && rc == 0)
        rc = -1, snprintf(err, errlen, "%s: write failed", tmp);
    if (rc == 0 && rename(tmp, s->page) != 0) {
        snprintf(err, errlen, "%s: cannot be written: %s", s->page, strerror(errno));
        rc = -1;
    }
    if (rc != 0)
        remove(tmp);
    return rc;
}
