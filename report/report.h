/* report/report.h — `dlperf report`: one self-contained HTML page of what the database
 * holds, each figure an SVG drawn by gnuplot and kept beside the page with its data (CSV)
 * and its gnuplot script, so that a figure can be redrawn or its numbers read by machine.
 *
 * The figures and tables:
 *   roofline    this machine's latest calibration: every measured kernel's arithmetic
 *               intensity against its rate, under the measured peak and DRAM roofs
 *   validation  predicted against measured for every model validated here (the latest
 *               validation of each model, batch and thread count)
 *   op-kinds    where those models' time goes, by op kind (measured, from their traced runs)
 *   memory      their memory by category as predicted (parameters, gradients, optimizer
 *               state, activations, workspace, input batches)
 *   scaling     a model's predicted data-parallel scaling on a system (epoch time, efficiency)
 *   FOM         seed 000's figures of merit predicted for systems (suite/fom.h), and this
 *               machine's latest stored suite run
 *   evidence    the GPUs with evidence: the built-in profiles and the database's imports
 * A figure whose data the database lacks (no calibration, no validation yet) says so, with
 * the command that makes it, instead of an empty plot.
 */
#ifndef DLPERF_REPORT_H
#define DLPERF_REPORT_H

#include <stdint.h>

#include "db/db.h"

typedef struct {
    const char *out_dir;      /* created if missing */
    int64_t machine_id;       /* this machine */
    int threads;              /* the calibration read: this thread count's latest */
    const char *machine_title;
    const char *db_path;      /* named on the page */
    const char *system;       /* the scaling figure's system (default dgx-a100) */
    const char *model;        /* and model (default resnet50) */
    const char *const *fom_systems; /* NULL-terminated; default titan, summit, dgx-a100 */
    void (*progress)(const char *what, void *ctx);
    void *ctx;
} ReportOptions;

enum { REPORT_ITEMS_MAX = 8 };

typedef struct {
    int figures;              /* drawn */
    int missing;              /* replaced by a sentence: no data */
    char names[REPORT_ITEMS_MAX][24];   /* the figures drawn, in page order */
    char page[4200];          /* out_dir/index.html */
} ReportSummary;

/* Writes the page and every figure's CSV, gnuplot script and SVG into o->out_dir. 0, or -1
 * with err (the directory cannot be written, gnuplot missing or failing, the database). */
int report_write(Db *db, const ReportOptions *o, ReportSummary *s, char *err, size_t errlen);

#endif
