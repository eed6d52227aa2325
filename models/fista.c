/* models/fista.c — FISTA sparse coding (seed 002's third algorithm) as a plan of ops.
 *
 * Beck & Teboulle's FISTA for min_S 1/2 ||S D - X||^2 + lambda ||S||_1, with X (B, F) the
 * samples, D (K, F) a dictionary of unit-norm atoms and S (B, K) the codes. One plan
 * execution is one iteration:
 *     R = Y D - X;  G = R D^T                          (gradient at the extrapolated Y)
 *     S_prev = S;  S = shrink(Y - G / L, lambda / L)   (L = largest eigenvalue of D D^T)
 *     Y = S + beta_k (S - S_prev)                      (momentum on the last two iterates)
 * then the objective at S: 1/2 ||S D - X||^2 and ||S||_1. beta_k = (t_k - 1) / t_{k+1},
 * t_{k+1} = (1 + sqrt(1 + 4 t_k^2)) / 2, t_1 = 1, changes every iteration, so the runner
 * patches it (fista_before_step); L is known once D is initialised (fista_setup).
 */
#include "models/fista.h"

#include <assert.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_matrix.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/layers.h"

enum { F_S, F_PREV, F_Y, F_R, F_G, F_T, F_P, F_L1 };
#define F32 sizeof(float)

/* The workspace fista_setup takes for L: D D^T in floats (the GEMM's result), the same
 * in doubles for GSL's eigensolver, and its K eigenvalues. */
static size_t spectrum_doubles_at(int K) /* where the doubles start: after the floats, aligned */
{
    return ((size_t)K * K * F32 + sizeof(double) - 1) / sizeof(double) * sizeof(double);
}

static size_t spectrum_bytes(int K)
{
    return spectrum_doubles_at(K) + ((size_t)K * K + (size_t)K) * sizeof(double);
}

int fista_plan(const ModelSpec *m, int batch, Plan *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->model = m;
    p->batch = batch;
    p->mode = PLAN_TRAIN;
    p->update_op = -1;
    p->threads = ops_get_threads();
    int K = m->fista.atoms, F = shape_count(&m->input), B = batch;
    if (batch < 1 || K < 1 || F < 1 || !(m->fista.lambda >= 0)) {
        snprintf(err, errlen, "%s: FISTA needs batch >= 1, atoms >= 1 and lambda >= 0", m->name);
        return -1;
    }
    p->layers = calloc(1, sizeof *p->layers);
    assert(p->layers);
    p->nlayers = 1;
    PlanLayer *pl = &p->layers[0];
    snprintf(pl->name, sizeof pl->name, "fista");
    pl->kind = LAYER_DENSE; /* closest kind for reports: a (B,F) x (F,K) product */
    pl->in = m->input;
    pl->out = (Shape){.rank = 1, .d = {K}};
    pl->alias_of = -1;
    /* the dictionary is fixed during coding: state, initialised N(0,1) then normalised */
    pl->w = plan_add_tensor(p, 0, "kernel", (size_t)K * F, false, false, INIT_NORMAL, 1.0f, 0, F, K);
    p->input = plan_alloc(p, ARENA_INPUT, (size_t)B * F * F32);
    p->target = p->input;
    size_t sb = (size_t)B * K * F32, xb = (size_t)B * F * F32;
    BufRef S = plan_alloc(p, ARENA_ACT, sb), prev = plan_alloc(p, ARENA_ACT, sb), Y = plan_alloc(p, ARENA_ACT, sb);
    BufRef R = plan_alloc(p, ARENA_ACT, xb), G = plan_alloc(p, ARENA_ACT, sb), T = plan_alloc(p, ARENA_ACT, sb);
    BufRef P = plan_alloc(p, ARENA_ACT, xb);
    p->loss = plan_alloc(p, ARENA_ACT, F32);
    BufRef l1 = plan_alloc(p, ARENA_ACT, F32);
    BufRef refs[] = {S, prev, Y, R, G, T, P, l1};
    memcpy(pl->saved, refs, sizeof refs);
    pl->y = S;
    p->output = p->probs = S;
    BufRef D = pl->w, X = p->input;
    /* L and beta are placeholders until fista_setup / fista_before_step */
    plan_add(p, 0, op_copy(PHASE_FWD, (size_t)B * K), (BufRef[]){prev, S}, 2);
    plan_add(p, 0, op_gemm(PHASE_FWD, B, F, K, false, false, 0), (BufRef[]){R, Y, D}, 3);
    plan_add(p, 0, op_axpby(PHASE_FWD, (size_t)B * F, 1, -1), (BufRef[]){R, R, X}, 3);
    plan_add(p, 0, op_gemm(PHASE_BWD_DATA, B, K, F, false, true, 0), (BufRef[]){G, R, D}, 3);
    plan_add(p, 0, op_axpby(PHASE_FWD, (size_t)B * K, 1, -1), (BufRef[]){T, Y, G}, 3);
    plan_add(p, 0, op_shrink(PHASE_FWD, (size_t)B * K, 0), (BufRef[]){S, T}, 2);
    plan_add(p, 0, op_axpby(PHASE_FWD, (size_t)B * K, 1, -1), (BufRef[]){T, S, prev}, 3);
    plan_add(p, 0, op_axpby(PHASE_FWD, (size_t)B * K, 1, 0), (BufRef[]){Y, S, T}, 3);
    /* objective at S */
    plan_add(p, 0, op_gemm(PHASE_FWD, B, F, K, false, false, 0), (BufRef[]){P, S, D}, 3);
    OpDesc fit = op_sqerr(PHASE_FWD, B, F, false);
    fit.u.sqerr.weight = 0.5f;
    plan_add(p, 0, fit, (BufRef[]){p->loss, P, X}, 3);
    plan_add(p, 0, op_norm1(PHASE_FWD, (size_t)B * K), (BufRef[]){l1, S}, 2);
    pl->act_bytes = p->arena_bytes[ARENA_ACT];
    /* fista_setup finds L in the workspace, which no op of the step uses until then: the
     * process allocates it either way, so the plan (and the memory predicted) holds it */
    if (spectrum_bytes(K) > p->arena_bytes[ARENA_WS])
        p->arena_bytes[ARENA_WS] = spectrum_bytes(K);
    return 0;
}

/* Ops of the plan whose scalars change: (index in the op list). */
enum { OP_GRAD_STEP = 4, OP_SHRINK_IDX = 5, OP_MOMENTUM_IDX = 7 };

int fista_setup(Plan *p, void *const base[ARENA_COUNT], double *lipschitz, char *err, size_t errlen)
{
    const ModelSpec *m = p->model;
    int K = m->fista.atoms, F = shape_count(&m->input);
    float *D = (float *)((char *)base[ARENA_STATE] + p->layers[0].w.offset);
    for (int k = 0; k < K; k++) { /* unit-norm atoms */
        double n = 0;
        for (int j = 0; j < F; j++)
            n += (double)D[(size_t)k * F + j] * D[(size_t)k * F + j];
        float inv = n > 0 ? (float)(1.0 / sqrt(n)) : 0;
        for (int j = 0; j < F; j++)
            D[(size_t)k * F + j] *= inv;
    }
    /* L = largest eigenvalue of D D^T (K x K), the gradient's Lipschitz constant */
    /* in the plan's workspace (spectrum_bytes): D D^T, then as doubles, then eigenvalues */
    assert(p->arena_bytes[ARENA_WS] >= spectrum_bytes(K));
    float *ddt = base[ARENA_WS];
    double *dd = (double *)((char *)base[ARENA_WS] + spectrum_doubles_at(K));
    gsl_matrix_view a = gsl_matrix_view_array(dd, (size_t)K, (size_t)K);
    gsl_vector_view ev = gsl_vector_view_array(dd + (size_t)K * K, (size_t)K);
    gsl_eigen_symm_workspace *w = gsl_eigen_symm_alloc((size_t)K); /* 2K doubles */
    if (!w) {
        snprintf(err, errlen, "%s: out of memory for the dictionary's spectrum", m->name);
        return -1;
    }
    OpDesc g = op_gemm(PHASE_FWD, K, K, F, false, true, 0);
    void *bufs[] = {ddt, D, D};
    op_run(&g, bufs, NULL);
    for (size_t i = 0; i < (size_t)K * K; i++)
        dd[i] = ddt[i];
    gsl_eigen_symm(&a.matrix, &ev.vector, w);
    double L = gsl_vector_max(&ev.vector);
    gsl_eigen_symm_free(w);
    if (!(L > 0)) {
        snprintf(err, errlen, "%s: the dictionary's spectrum is empty", m->name);
        return -1;
    }
    p->ops[OP_GRAD_STEP].desc.u.axpby.beta = (float)(-1.0 / L);
    p->ops[OP_SHRINK_IDX].desc.u.mem.scalar = (float)(m->fista.lambda / L);
    *lipschitz = L;
    return 0;
}

void fista_before_step(Plan *p, double *t)
{
    double t_next = (1.0 + sqrt(1.0 + 4.0 * *t * *t)) / 2.0;
    p->ops[OP_MOMENTUM_IDX].desc.u.axpby.beta = (float)((*t - 1.0) / t_next);
    *t = t_next;
}

double fista_objective(const Plan *p, void *const base[ARENA_COUNT])
{
    float fit, l1;
    memcpy(&fit, (char *)base[ARENA_ACT] + p->loss.offset, sizeof fit);
    memcpy(&l1, (char *)base[ARENA_ACT] + p->layers[0].saved[F_L1].offset, sizeof l1);
    return (double)fit + p->model->fista.lambda * (double)l1;
}
