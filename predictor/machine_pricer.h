/* predictor/machine_pricer.h — this machine made ready to price models on: which of its
 * calibrations prices a job (one process, or a data-parallel job's ranks on this node),
 * its cost model, and a plan priced from it. What `predict`, `validate`, `sweep`, `fom` and
 * `suite` share, so that each prices this machine the same way (system_pricer.h is the
 * same for a spec-sheet system).
 */
#ifndef DLPERF_MACHINE_PRICER_H
#define DLPERF_MACHINE_PRICER_H

#include "db/db.h"
#include "models/plan.h"
#include "predictor/comm_model.h"
#include "predictor/predict.h"

/* Latest complete calibration of this machine at `threads` and its cost model. 0; else 1
 * with err ("no complete calibration ...; run dlperf calibrate", a database error). A
 * calibration measured under another BLAS threading build than this process runs is
 * warned about on stderr (its prices may not hold). */
int machine_calibration(Db *db, const MachineRow *m, int threads, CalibrationRow *cal, CostModel **cm, char *err,
                        size_t errlen);

/* The calibration a data-parallel job with local_ranks ranks on this node is priced from.
 * On an oversubscribed node (ranks x threads > cores): one measured by as many ranks as
 * fill the cores (calibrate under mpirun -np cores/threads), *over = local_ranks / those
 * (the time-sharing modelled, not measured). Else, or without one: one its ranks measured
 * at once (calibrate under mpirun -np local_ranks; *over = 1); else the one-process
 * calibration with *over = the oversubscription of the cores. The cost model's last-level
 * cache is the ranks' share of it. 0; else 1 with err. */
int machine_calibration_dp(Db *db, const MachineRow *m, int threads, int local_ranks, CalibrationRow *cal,
                           CostModel **cm, double *over, char *err, size_t errlen);

/* Prices plan p; ops receives p->nops rows (caller frees). 0; else 1 with err. */
int machine_predict(const CostModel *cm, const CalibrationRow *cal, int threads, const Plan *p, PredictionRow *pred,
                    OpTimeRow **ops, char *err, size_t errlen);

/* Data-parallel on this machine: the plan (one rank's share of the batch; tensor parallel:
 * one rank's share of the model, its sums over the group priced as collectives where the
 * cost model has them, cm_set_collectives) priced as machine_predict does (the update
 * averages the summed gradients inside its own pass: plan_average_ranks), times `over`
 * (machine_calibration_dp), plus the gradients' allreduce over `ranks` (the data-parallel
 * group) from the communication model (pred->allreduce_s, included in iter_s; tensor
 * parallel: times `over`, as the groups sum at once; no overlap: dlperf's trainer sums
 * after backward by default), and the memory that allreduce holds on each rank
 * (pred->mem_comm, from the calibration's probes; 0 where none probed it; *probed_at, if
 * not NULL: the rank count whose probes gave it, comm_model_allreduce_scratch's). */
int machine_predict_dp(const CostModel *cm, const CalibrationRow *cal, int threads, const CommModel *comm,
                       const Plan *p, int ranks, double over, PredictionRow *pred, OpTimeRow **ops, int *probed_at,
                       char *err, size_t errlen);

/* local_ranks x threads / online cores, at least 1. */
double machine_oversubscription(int local_ranks, int threads);

/* The memory a dlperf process holds besides what a plan allocates: its libraries and the
 * BLAS library's packing buffers, measured once in this process (VmRSS after a GEMM large
 * enough to fill the buffers, its operands freed again). A run's peak RSS is this plus
 * what it allocates. */
double machine_runtime_bytes(void);

#endif
