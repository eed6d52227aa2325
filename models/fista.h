/* models/fista.h — FISTA sparse coding as a plan (see fista.c). */
#ifndef DLPERF_FISTA_H
#define DLPERF_FISTA_H

#include "models/plan.h"

/* The plan of one FISTA iteration of model m (m->algorithm == ALGO_FISTA) at `batch`. */
int fista_plan(const ModelSpec *m, int batch, Plan *p, char *err, size_t errlen);
/* After the dictionary is initialised: normalises its atoms, computes the Lipschitz
 * constant L (largest eigenvalue of D D^T, GSL) and sets the step 1/L and threshold
 * lambda/L in the plan. */
int fista_setup(Plan *p, void *const base[ARENA_COUNT], double *lipschitz, char *err, size_t errlen);
/* Sets this iteration's momentum coefficient from t (t_1 = 1) and advances t. */
void fista_before_step(Plan *p, double *t);
/* 1/2 ||S D - X||^2 + lambda ||S||_1 after an iteration. */
double fista_objective(const Plan *p, void *const base[ARENA_COUNT]);

#endif
