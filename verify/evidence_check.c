/* verify/evidence_check.c — measured rows against their predictions (evidence_check.h). */
#include "verify/evidence_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *check_class_of(const OpDesc *d)
{
    switch (d->kind) {
    case OP_BMM: return "bmm";
    case OP_GEMM: return d->u.gemm.bias ? "fc" : "gemm";
    case OP_ACT:
    case OP_BINARY:
    case OP_SCALAR: return "elementwise";
    case OP_SOFTMAX: return "softmax";
    case OP_LAYERNORM: return "layernorm";
    case OP_CONV2D:
        return d->phase == PHASE_FWD ? "conv2d fwd" : d->phase == PHASE_BWD_DATA ? "conv2d bwd_data"
                                                                                 : "conv2d bwd_weights";
    default: return op_kind_name(d->kind);
    }
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(double *v, int n, double q)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    const double pos = q * (n - 1);
    const int i = (int)pos;
    return i + 1 < n ? v[i] + (pos - i) * (v[i + 1] - v[i]) : v[i];
}

static const char *const RNN_CELLS[] = {[MB_RNN_VANILLA] = "vanilla", [MB_RNN_LSTM] = "lstm", [MB_RNN_GRU] = "gru"};

/* A recurrent layer's row, priced as cuDNN runs the layer and as dlperf's recurrent layer
 * does (models/layers.c): each step's recurrent GEMM and cell; in backward each step's
 * cell backward and data GEMM, then the weight and bias gradients of all steps at once (one
 * GEMM over the N*T rows, not T of them). Each op priced as a kernel (DeepBench times
 * cuDNN's calls back to back). The row's source is the one that priced the largest share;
 * its band the sum of its ops'. */
static int price_rnn_row(DevicePricer *p, const ImportedRow *r, DevPrice *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    double share[DP_SOURCE_COUNT] = {0}, top = -1;
    for (int b = 0; b <= 1; b++) {
        if (!(r->rnn_phases & (1 << b)))
            continue;
        OpDesc ops[8];
        const int k = mb_rnn_step_ops(&r->rnn, b == 1, ops, 8);
        for (int j = 0; j < k; j++) {
            int times = r->rnn.steps;
            if (ops[j].phase == PHASE_BWD_WEIGHTS) { /* the whole sequence's gradient, once */
                times = 1;
                if (ops[j].kind == OP_GEMM)
                    ops[j].u.gemm.k *= r->rnn.steps, ops[j].u.gemm.beta = 0;
                else if (ops[j].kind == OP_BIAS)
                    ops[j].u.bias.n *= r->rnn.steps;
            }
            DevPrice q;
            if (dp_price_scope(p, &ops[j], false, &q, err, errlen) != 0)
                return -1;
            out->time_s += times * q.time_s;
            out->lo_s += times * q.lo_s;
            out->hi_s += times * q.hi_s;
            share[q.source] += times * q.time_s;
            if (share[q.source] > top) {
                top = share[q.source];
                out->source = q.source;
                memcpy(out->group, q.group, sizeof out->group);
                memcpy(out->from, q.from, sizeof out->from);
            }
        }
    }
    return 0;
}

int evidence_check(DevicePricer *p, const ImportedRow *rows, size_t n, CheckResult *out, FILE *csv, char *err,
                   size_t errlen)
{
    memset(out, 0, sizeof *out);
    double *ape = malloc((n > 0 ? n : 1) * sizeof *ape), *ratio = malloc((n > 0 ? n : 1) * sizeof *ratio);
    int *cls = malloc((n > 0 ? n : 1) * sizeof *cls);
    if (!ape || !ratio || !cls) {
        free(ape), free(ratio), free(cls);
        snprintf(err, errlen, "out of memory for %zu rows", n);
        return -1;
    }
    if (csv)
        fprintf(csv, "source,class,key,measured_ms,predicted_ms,error_pct,priced_by,from\n");
    for (size_t i = 0; i < n; i++) {
        DevPrice pr;
        char layer_class[24];
        const char *name;
        if (rows[i].rnn_phases) {
            if (price_rnn_row(p, &rows[i], &pr, err, errlen) != 0) {
                free(ape), free(ratio), free(cls);
                return -1;
            }
            snprintf(layer_class, sizeof layer_class, "%s %s", RNN_CELLS[rows[i].rnn.cell],
                     rows[i].rnn_phases == 1 ? "fwd" : rows[i].rnn_phases == 2 ? "bwd" : "fwd+bwd");
            name = layer_class;
        } else {
            /* a framework call's time (CDE's session.run) against evidence of that scope */
            if (dp_price_scope(p, &rows[i].desc, strcmp(rows[i].scope, "framework") == 0, &pr, err, errlen) != 0) {
                free(ape), free(ratio), free(cls);
                return -1;
            }
            name = check_class_of(&rows[i].desc);
        }
        int c = 0;
        while (c < out->nclasses && strcmp(out->cls[c].name, name) != 0)
            c++;
        if (c == out->nclasses) {
            if (out->nclasses == CHECK_CLASSES_MAX)
                c = CHECK_CLASSES_MAX - 1; /* the last class takes the rest */
            else
                snprintf(out->cls[out->nclasses++].name, sizeof out->cls[0].name, "%s", name);
        }
        cls[i] = c;
        out->cls[c].rows++;
        out->cls[c].by_source[pr.source]++;
        ratio[i] = pr.time_s / rows[i].time_s;
        ape[i] = 100 * fabs(ratio[i] - 1);
        if (csv)
            fprintf(csv, "%s,%s,\"%s\",%.6g,%.6g,%.2f,%s,%s\n", rows[i].source, name, rows[i].key,
                    rows[i].time_s * 1e3, pr.time_s * 1e3, 100 * (ratio[i] - 1), dp_source_name(pr.source), pr.from);
    }
    double *v = malloc((n > 0 ? n : 1) * sizeof *v);
    if (!v) {
        free(ape), free(ratio), free(cls);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int c = 0; c < out->nclasses; c++) {
        CheckClass *k = &out->cls[c];
        int m = 0;
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            if (cls[i] == c) {
                v[m++] = ape[i];
                sum += ape[i];
            }
        k->mape = m ? sum / m : 0;
        k->median_ape = quantile(v, m, 0.5);
        k->p90_ape = quantile(v, m, 0.9);
        m = 0;
        for (size_t i = 0; i < n; i++)
            if (cls[i] == c)
                v[m++] = ratio[i];
        k->bias = quantile(v, m, 0.5);
    }
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = ape[i];
        sum += ape[i];
    }
    out->rows = (int)n;
    out->mape = n ? sum / (double)n : 0;
    out->median_ape = quantile(v, (int)n, 0.5);
    out->p90_ape = quantile(v, (int)n, 0.9);
    free(v), free(ape), free(ratio), free(cls);
    return 0;
}
