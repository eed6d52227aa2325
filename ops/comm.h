/* ops/comm.h — the one place dlperf talks MPI: the data-parallel gradient sum, the
 * tensor-parallel groups and their sums inside a step, the collectives the communication
 * microbenchmarks time, and the job-wide error exit.
 *
 * The same binary runs on one process or under mpirun. MPI is started only when the
 * process was launched by an MPI launcher (OpenMPI, PMIx or PMI variables in the
 * environment): a plain `dlperf ...` never initialises MPI, so it cannot fail or slow
 * down because of it, and reports one rank. comm_start() is called late, by the commands
 * that need the job (after the BLAS choice, which may re-execute the process).
 *
 * Only the main thread calls MPI (MPI_THREAD_FUNNELED); kernels keep their OpenMP threads.
 */
#ifndef DLPERF_COMM_H
#define DLPERF_COMM_H

#include <stdbool.h>
#include <stddef.h>

/* True if an MPI launcher started this process (whether or not MPI is initialised yet). */
bool comm_launched(void);
/* Launcher's view before MPI starts: this process's rank, the job's size and the number
 * of ranks on this node (1, 1, 1 without a launcher). */
int comm_env_rank(void);
int comm_env_size(void);
int comm_env_local_size(void);

/* Initialises MPI if launched by mpirun (idempotent). Returns 0, or -1 with err set. */
int comm_start(char *err, size_t errlen);
/* Under a job of more than one rank: large blocks come from the heap and stay there, so a
 * collective's temporaries are reused from one call to the next (comm.c says why). Called
 * by training and the communication benchmark, which must see the same allocator; not by
 * compute calibrations, whose gigabyte buffers should go back to the system when freed. */
void comm_reuse_collective_buffers(void);
bool comm_active(void);
int comm_rank(void); /* 0 without MPI */
int comm_size(void); /* 1 without MPI */
/* Ends the job: MPI_Finalize after success; after a failure under MPI, MPI_Abort with the
 * code, so that ranks waiting in a collective for the failed one do not hang. Returns rc. */
int comm_finish(int rc);

/* The MPI library's version string ("" without MPI). */
const char *comm_library(void);

/* Sums n floats over all ranks, in place (MPI_Allreduce, MPI_SUM; counts above INT_MAX in
 * pieces). No-op on one rank. */
void comm_allreduce_sum_f32(float *buf, size_t n);

/* Tensor parallelism (Megatron-LM's layout): the job's ranks in groups of `tp` consecutive
 * ranks, each group one copy of the model split tp ways (consecutive, so that a group's
 * ranks share a node and its fast links); the ranks at the same place in every group form
 * a data-parallel group, over which the gradients are summed. Before the split (and
 * without MPI) the tensor-parallel group is this rank alone and the data-parallel group
 * the whole job. Collective; once per job. 0, or -1 with err (tp does not divide the
 * ranks). */
int comm_split_tensor_parallel(int tp, char *err, size_t errlen);
int comm_tp_size(void);
int comm_tp_rank(void);
int comm_dp_size(void);
int comm_dp_rank(void);
/* y = the tensor-parallel group's sum of x, n floats (y may be x: in place); a copy in a
 * group of one. */
void comm_tp_allreduce_f32(float *y, const float *x, size_t n);
/* buf = the tensor-parallel group's element-wise max, n floats in place (nothing in a group
 * of one). */
void comm_tp_allreduce_max_f32(float *buf, size_t n);
/* The gradients' sums of a training step: comm_allreduce_sum_f32 and
 * comm_iallreduce_sum_f32 over the data-parallel group. */
void comm_dp_allreduce_sum_f32(float *buf, size_t n);
int comm_dp_iallreduce_sum_f32(float *buf, size_t n);
/* Non-blocking in-place sum of n floats (MPI_Iallreduce; n <= INT_MAX): the Horovod
 * pattern starts each gradient bucket's sum as soon as backward has produced it. Returns 0,
 * or -1 if too many are in flight (COMM_MAX_PENDING). comm_progress lets MPI advance them
 * (MPI_Testall: without a progress thread, MPI moves data only inside MPI calls);
 * comm_wait_all completes them all. */
enum { COMM_MAX_PENDING = 1024 };
int comm_iallreduce_sum_f32(float *buf, size_t n);
void comm_progress(void);
void comm_wait_all(void);
/* In-place reductions of a few doubles (statistics, step times). */
void comm_allreduce_sum_f64(double *v, int n);
void comm_allreduce_max_f64(double *v, int n);
/* Rank 0 receives every rank's n doubles (rank-major in recv, size*n); others pass NULL. */
void comm_gather_f64(const double *send, int n, double *recv);
/* Rank 0 receives every rank's `bytes` bytes (rank-major in recv); others pass NULL. */
void comm_gather_bytes(const void *send, int bytes, void *recv);
/* The CPUs this process may run on, as taskset -c lists them ("0", "0,1", "0-3,8"); ""
 * where the system does not say. Under mpirun: whether and where the launcher bound the
 * rank (Open MPI binds ranks to cores up to one a core, and leaves more ranks than cores
 * unbound: each allowed every CPU). */
void comm_affinity_list(char *out, size_t n);
void comm_bcast(void *buf, size_t bytes, int root);
void comm_barrier(void);

/* For the microbenchmarks: MPI_Allreduce of n floats from src into dst (sum), and
 * MPI_Bcast of n bytes from rank 0. */
void comm_allreduce_f32(const float *src, float *dst, size_t n);
/* Ping-pong between rank 0 and rank `peer` (other ranks return at once): rank 0 sends
 * `bytes` and waits for them back, `iters` times. Returns rank 0's elapsed seconds. */
double comm_pingpong(void *buf, size_t bytes, int peer, int iters);
/* Where the node's ranks run, now: the round trip (ns) of a cache line passed back and
 * forth between the node's first two ranks through a shared-memory window, the fastest of
 * a few bursts, while the node's other ranks wait asleep. The same every rank (the largest
 * over the nodes); 0 without MPI or with one rank on each node. Collective: every rank
 * calls it. Near (the ranks' cores share a last-level cache) about 0.1 us on the EPYC VMs,
 * apart 0.3-0.5 us; a partner that is not running (more ranks than cores) reads as at
 * least the burst's deadline per trip. */
double comm_peer_rtt_ns(void);
/* Time on a clock all ranks agree on closely enough for intervals (MPI_Wtime or
 * CLOCK_MONOTONIC). */
double comm_wtime(void);

#endif
