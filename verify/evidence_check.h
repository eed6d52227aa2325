/* verify/evidence_check.h — predicting measurements that were not used: every row of a
 * measurement file (dlperf's CSV, NeuSight's, DeepBench's, CDE's) priced on its device from
 * the database's evidence, in the order of evidence (predictor/device_price.h), and compared
 * with what it measured (`dlperf validate --device NAME --against FILE...`).
 *
 * With DP_NO_OWN the device is priced as if it had no evidence of its own: its rows come
 * from the other devices' evidence carried over by the sheets (leave one device out). The
 * errors are reported by op class (the kinds the publications report apart: BMM, FC, the
 * element-wise ops, softmax, layer norm, each convolution phase, ...) and by the source
 * that priced each row. A row that times a whole recurrent layer (DeepBench's RNN) is its
 * steps times the ops of one step as dlperf runs a recurrent layer (mb_rnn_step_ops), each
 * priced as a kernel; its class is the cell and phase ("lstm fwd").
 */
#ifndef DLPERF_EVIDENCE_CHECK_H
#define DLPERF_EVIDENCE_CHECK_H

#include <stdio.h>

#include "microbench/import.h"
#include "predictor/device_price.h"

enum { CHECK_CLASSES_MAX = 24 };

typedef struct {
    char name[24];        /* "bmm", "fc", "elementwise", "softmax", "layernorm", "conv2d fwd", ... */
    int rows;
    double mape;          /* mean |predicted / measured - 1|, percent */
    double median_ape, p90_ape;
    double bias;          /* median predicted / measured */
    int by_source[DP_SOURCE_COUNT];
} CheckClass;

typedef struct {
    int rows;
    double mape, median_ape, p90_ape;
    int nclasses;
    CheckClass cls[CHECK_CLASSES_MAX];
} CheckResult;

/* The op class a row is reported under. */
const char *check_class_of(const OpDesc *d);

/* Prices rows[0..n) with p and fills out; csv (may be NULL) receives one line per row:
 * source,class,key,measured_ms,predicted_ms,error_pct,priced_by,from. 0, or -1 with err. */
int evidence_check(DevicePricer *p, const ImportedRow *rows, size_t n, CheckResult *out, FILE *csv, char *err,
                   size_t errlen);

#endif
