/* ops/comm.c — MPI, started only under an MPI launcher (see comm.h). */
#define _GNU_SOURCE /* sched_setaffinity and CPU_SET: the placement probe pins its pair */
#include "ops/comm.h"

#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static bool started;
static int my_rank, my_size = 1;
/* comm_split_tensor_parallel's groups (MPI_COMM_NULL before the split) */
static MPI_Comm tp_comm = MPI_COMM_NULL, dp_comm = MPI_COMM_NULL;
static int tp_size = 1, tp_rank, dp_size_split, dp_rank_split;

static void peer_teardown(void);

/* Largest count handed to one MPI call (MPI counts are int). */
enum { COMM_CHUNK = 1 << 30 };

/* ---- the job's watchdog ----
 * A rank that hangs (stopped, deadlocked, spinning in a kernel) leaves the others waiting
 * in their next collective forever, and mpirun with them. Each blocking call here marks
 * the time it began waiting; a thread checks once a second and ends the process (exit 1,
 * with one line naming the rank and the call) once a wait passes DLPERF_COMM_TIMEOUT
 * (default 600 s, far above any collective of a step; 0: no limit). mpirun then ends the
 * job: it ends every rank when one exits without finalizing. */
static double watch_timeout_s = 600;
/* Two relaxed atomic stores per call, no clock read: the comm benchmarks time calls of a
 * microsecond. The watchdog sees a wait that has not changed (same call number) for the
 * whole limit. */
static _Atomic unsigned long watch_calls;
static _Atomic int watch_waiting;
static const char *_Atomic watch_what;

static void watch_begin(const char *what)
{
    atomic_store_explicit(&watch_what, what, memory_order_relaxed);
    atomic_fetch_add_explicit(&watch_calls, 1, memory_order_relaxed);
    atomic_store_explicit(&watch_waiting, 1, memory_order_relaxed);
}

static void watch_end(void) { atomic_store_explicit(&watch_waiting, 0, memory_order_relaxed); }

static void *watchdog(void *arg)
{
    (void)arg;
    unsigned long last = 0;
    double stuck_s = 0;
    for (;;) {
        sleep(1);
        const unsigned long calls = atomic_load_explicit(&watch_calls, memory_order_relaxed);
        if (!atomic_load_explicit(&watch_waiting, memory_order_relaxed) || calls != last) {
            last = calls;
            stuck_s = 0;
            continue;
        }
        if ((stuck_s += 1) > watch_timeout_s) {
            fprintf(stderr, "dlperf: rank %d of %d: %s waited %.0f s for the other ranks (DLPERF_COMM_TIMEOUT=%g s): "
                    "a rank has hung or died; ending the job\n", my_rank, my_size,
                    atomic_load_explicit(&watch_what, memory_order_relaxed), stuck_s, watch_timeout_s);
            fflush(stderr);
            _exit(1);
        }
    }
    return NULL;
}

/* DLPERF_COMM_TIMEOUT: seconds, or 0 for none. 0, or -1 with err. */
static int watch_start(char *err, size_t errlen)
{
    const char *v = getenv("DLPERF_COMM_TIMEOUT");
    if (v && *v) {
        char *end;
        const double t = strtod(v, &end);
        if (end == v || *end || !(t >= 0) || t > 1e9) {
            snprintf(err, errlen, "DLPERF_COMM_TIMEOUT '%s': expected seconds a collective may wait for the other "
                     "ranks (a number >= 0; 0: no limit)", v);
            return -1;
        }
        watch_timeout_s = t;
    }
    if (watch_timeout_s == 0 || my_size < 2)
        return 0;
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    const int rc = pthread_create(&th, &at, watchdog, NULL);
    pthread_attr_destroy(&at);
    if (rc != 0) {
        snprintf(err, errlen, "could not start the collectives' watchdog thread: %s", strerror(rc));
        return -1;
    }
    return 0;
}

/* a blocking MPI call, watched */
#define WATCHED(what, call) \
    do {                     \
        watch_begin(what);   \
        call;                \
        watch_end();         \
    } while (0)

static int env_int(const char *const names[], int fallback)
{
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            return atoi(v);
    }
    return fallback;
}

bool comm_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE") ||
           getenv("MV2_COMM_WORLD_SIZE");
}

int comm_env_rank(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK", NULL};
    return env_int(names, 0);
}

int comm_env_size(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", NULL};
    int n = env_int(names, 1);
    return n > 0 ? n : 1;
}

int comm_env_local_size(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "MV2_COMM_WORLD_LOCAL_SIZE",
                                        NULL};
    int n = env_int(names, 1);
    return n > 0 ? n : 1;
}

int comm_start(char *err, size_t errlen)
{
    if (started || !comm_launched())
        return 0;
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Init_thread failed (launched by mpirun, but MPI did not start)");
        return -1;
    }
    /* errors in collectives come back as codes we turn into a job abort, not a hang */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &my_size);
    started = true;
    return watch_start(err, errlen);
}

/* Open MPI's allreduce allocates a temporary the size of the message on every call. glibc
 * serves a block above its mmap threshold (which adapts, but never beyond 32 MiB) with a
 * fresh mmap and unmaps it on free, so every gradient sum of 32 MiB or more page-faulted a
 * new temporary: 4 ranks on 2 cores summing 33.6 MB took 80-87 ms against 22-23 ms with
 * the block kept in the heap (3 interleaved runs each, glibc 2.36, Open MPI 4.1.4). A
 * data-parallel framework allocates its communication buffers once; so does this. */
void comm_reuse_collective_buffers(void)
{
    if (!started || my_size < 2)
        return;
    mallopt(M_MMAP_THRESHOLD, 1 << 30); /* also stops the threshold adapting */
    mallopt(M_TRIM_THRESHOLD, 1 << 30); /* freed blocks at the heap's top stay mapped */
}

bool comm_active(void) { return started; }
int comm_rank(void) { return my_rank; }
int comm_size(void) { return my_size; }

int comm_finish(int rc)
{
    if (!started)
        return rc;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized)
        return rc;
    if (rc != 0 && my_size > 1) {
        fflush(stdout);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, rc);
    }
    peer_teardown();
    if (tp_comm != MPI_COMM_NULL) {
        MPI_Comm_free(&tp_comm);
        MPI_Comm_free(&dp_comm);
    }
    MPI_Finalize();
    return rc;
}

const char *comm_library(void)
{
    static char version[MPI_MAX_LIBRARY_VERSION_STRING];
    if (!version[0]) {
        int len = 0;
        MPI_Get_library_version(version, &len); /* allowed before MPI_Init */
        char *nl = strchr(version, '\n');
        if (nl)
            *nl = '\0';
        if (!version[0])
            snprintf(version, sizeof version, "unknown MPI");
    }
    return started ? version : "";
}

/* dst = op (sum, max) of src over comm's ranks, element by element, n floats in pieces of
 * at most COMM_CHUNK (MPI counts are int); in place where dst is src. */
static void reduce_f32_on(MPI_Comm comm, MPI_Op op, const char *what, const float *src, float *dst, size_t n)
{
    for (size_t off = 0; off < n; off += COMM_CHUNK) {
        size_t c = n - off < COMM_CHUNK ? n - off : COMM_CHUNK;
        WATCHED(what, MPI_Allreduce(src == dst ? MPI_IN_PLACE : (const void *)(src + off), dst + off, (int)c,
                                    MPI_FLOAT, op, comm));
    }
}

static void sum_f32_on(MPI_Comm comm, const char *what, const float *src, float *dst, size_t n)
{
    reduce_f32_on(comm, MPI_SUM, what, src, dst, n);
}

void comm_allreduce_sum_f32(float *buf, size_t n)
{
    if (started && my_size > 1)
        sum_f32_on(MPI_COMM_WORLD, "allreduce", buf, buf, n);
}

/* ---- tensor- and data-parallel groups ---- */

int comm_split_tensor_parallel(int tp, char *err, size_t errlen)
{
    if (tp < 1 || my_size % tp != 0) {
        snprintf(err, errlen, "tensor parallel %d must divide the job's %d ranks", tp, my_size);
        return -1;
    }
    if (tp_comm != MPI_COMM_NULL) {
        snprintf(err, errlen, "the job's ranks are split into tensor-parallel groups already");
        return -1;
    }
    if (!started || tp == 1)
        return 0;
    MPI_Comm_split(MPI_COMM_WORLD, my_rank / tp, my_rank % tp, &tp_comm);
    MPI_Comm_split(MPI_COMM_WORLD, my_rank % tp, my_rank / tp, &dp_comm);
    MPI_Comm_size(tp_comm, &tp_size);
    MPI_Comm_rank(tp_comm, &tp_rank);
    MPI_Comm_size(dp_comm, &dp_size_split);
    MPI_Comm_rank(dp_comm, &dp_rank_split);
    return 0;
}

int comm_tp_size(void) { return tp_size; }
int comm_tp_rank(void) { return tp_rank; }
int comm_dp_size(void) { return tp_comm != MPI_COMM_NULL ? dp_size_split : my_size; }
int comm_dp_rank(void) { return tp_comm != MPI_COMM_NULL ? dp_rank_split : my_rank; }
static MPI_Comm grad_comm(void) { return dp_comm != MPI_COMM_NULL ? dp_comm : MPI_COMM_WORLD; }

void comm_tp_allreduce_f32(float *y, const float *x, size_t n)
{
    if (tp_size == 1) {
        if (y != x)
            memcpy(y, x, n * sizeof *y);
        return;
    }
    sum_f32_on(tp_comm, "tensor-parallel allreduce", x, y, n);
}

void comm_tp_allreduce_max_f32(float *buf, size_t n)
{
    if (tp_size > 1)
        reduce_f32_on(tp_comm, MPI_MAX, "tensor-parallel max", buf, buf, n);
}

void comm_dp_allreduce_sum_f32(float *buf, size_t n)
{
    if (started && comm_dp_size() > 1)
        sum_f32_on(grad_comm(), "allreduce", buf, buf, n);
}

static MPI_Request pending[COMM_MAX_PENDING];
static int npending;

static int iallreduce_on(MPI_Comm comm, int size, float *buf, size_t n)
{
    if (!started || size == 1)
        return 0;
    if (npending == COMM_MAX_PENDING || n > INT_MAX)
        return -1;
    MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, comm, &pending[npending++]);
    return 0;
}

int comm_iallreduce_sum_f32(float *buf, size_t n) { return iallreduce_on(MPI_COMM_WORLD, my_size, buf, n); }
int comm_dp_iallreduce_sum_f32(float *buf, size_t n) { return iallreduce_on(grad_comm(), comm_dp_size(), buf, n); }

void comm_progress(void)
{
    if (npending > 0) {
        int done;
        MPI_Testall(npending, pending, &done, MPI_STATUSES_IGNORE);
        if (done)
            npending = 0;
    }
}

void comm_wait_all(void)
{
    if (npending > 0)
        WATCHED("allreduce", MPI_Waitall(npending, pending, MPI_STATUSES_IGNORE));
    npending = 0;
}

void comm_allreduce_sum_f64(double *v, int n)
{
    if (started && my_size > 1)
        WATCHED("allreduce", MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
}

void comm_allreduce_max_f64(double *v, int n)
{
    if (started && my_size > 1)
        WATCHED("allreduce", MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
}

void comm_gather_f64(const double *send, int n, double *recv)
{
    if (!started || my_size == 1) {
        if (recv)
            memcpy(recv, send, (size_t)n * sizeof *send);
        return;
    }
    WATCHED("gather", MPI_Gather(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, MPI_COMM_WORLD));
}

void comm_gather_bytes(const void *send, int bytes, void *recv)
{
    if (!started || my_size == 1) {
        if (recv)
            memcpy(recv, send, (size_t)bytes);
        return;
    }
    WATCHED("gather", MPI_Gather(send, bytes, MPI_BYTE, recv, bytes, MPI_BYTE, 0, MPI_COMM_WORLD));
}

void comm_affinity_list(char *out, size_t n)
{
    cpu_set_t set;
    size_t len = 0;
    if (n == 0)
        return;
    out[0] = '\0';
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set))
            last++;
        char item[32]; /* as util-linux lists them: a range from three CPUs on */
        const char *sep = len ? "," : "";
        int k = last >= c + 2 ? snprintf(item, sizeof item, "%s%d-%d", sep, c, last)
                : last == c + 1 ? snprintf(item, sizeof item, "%s%d,%d", sep, c, last)
                                : snprintf(item, sizeof item, "%s%d", sep, c);
        if (len + (size_t)k + 4 > n) { /* keep room to say the list goes on */
            if (len + 4 <= n)
                memcpy(out + len, "...", 4);
            return;
        }
        memcpy(out + len, item, (size_t)k + 1);
        len += (size_t)k;
        c = last;
    }
}

void comm_bcast(void *buf, size_t bytes, int root)
{
    if (!started || my_size == 1)
        return;
    for (size_t off = 0; off < bytes; off += COMM_CHUNK) {
        size_t c = bytes - off < COMM_CHUNK ? bytes - off : COMM_CHUNK;
        WATCHED("broadcast", MPI_Bcast((char *)buf + off, (int)c, MPI_BYTE, root, MPI_COMM_WORLD));
    }
}

void comm_barrier(void)
{
    if (started && my_size > 1)
        WATCHED("barrier", MPI_Barrier(MPI_COMM_WORLD));
}

void comm_allreduce_f32(const float *src, float *dst, size_t n)
{
    if (!started || my_size == 1) {
        memcpy(dst, src, n * sizeof *src);
        return;
    }
    sum_f32_on(MPI_COMM_WORLD, "allreduce", src, dst, n);
}

double comm_pingpong(void *buf, size_t bytes, int peer, int iters)
{
    if (!started || my_size == 1 || peer <= 0 || peer >= my_size || bytes > INT_MAX)
        return 0;
    if (my_rank != 0 && my_rank != peer)
        return 0;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (my_rank == 0) {
            WATCHED("send", MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
            WATCHED("receive", MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            WATCHED("receive", MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            WATCHED("send", MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD));
        }
    }
    return MPI_Wtime() - t0;
}

/* ---- where the node's ranks run (comm_peer_rtt_ns) ----
 * Why: with one thread per rank, the 2-vCPU EPYC VMs' shared-memory allreduce ran 17-27%
 * faster with the host's vCPUs apart (each its own L3) than near, and the communication
 * calibration's passes and a validation's runs fell in either (docs/accuracy.md):
 * the same probe as microbench/placement.c's between two threads, here between two
 * processes. The window, its communicators and the line are made at the first call. */
enum { PEER_BURSTS = 5, PEER_TRIPS = 64 };
static const double PEER_DEADLINE_S = 2e-3;

typedef struct {
    _Alignas(64) atomic_long turn; /* rank 0 of the node takes turns 0, 2, 4, ..., rank 1 the odd */
    _Alignas(64) atomic_int abandoned;
} PeerLine;

static MPI_Comm node_comm = MPI_COMM_NULL, pair_comm = MPI_COMM_NULL;
static MPI_Win peer_win = MPI_WIN_NULL;
static PeerLine *peer_line;
static int node_rank, node_size;

static void peer_setup(void)
{
    if (node_comm != MPI_COMM_NULL)
        return;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    MPI_Comm_rank(node_comm, &node_rank);
    MPI_Comm_size(node_comm, &node_size);
    MPI_Comm_split(node_comm, node_rank < 2 ? 0 : MPI_UNDEFINED, node_rank, &pair_comm);
    /* Open MPI's segment starts past a header (seen at an address ending in 0x108), not on
     * the line PeerLine's members must sit on: one line more is asked for and the line is
     * placed at the first 64-byte boundary. Every rank maps the segment page-aligned, so the
     * boundary falls at the same offset for all of them. */
    void *base = NULL;
    const MPI_Aint want = (MPI_Aint)(sizeof(PeerLine) + _Alignof(PeerLine));
    MPI_Win_allocate_shared(node_rank == 0 ? want : 0, 1, MPI_INFO_NULL, node_comm, &base, &peer_win);
    MPI_Aint bytes;
    int unit;
    MPI_Win_shared_query(peer_win, 0, &bytes, &unit, &base); /* node rank 0's segment, mapped here */
    const uintptr_t at = (uintptr_t)base, align = _Alignof(PeerLine);
    peer_line = (PeerLine *)(void *)((at + align - 1) / align * align);
}

static void peer_teardown(void)
{
    if (peer_win != MPI_WIN_NULL)
        MPI_Win_free(&peer_win);
    if (pair_comm != MPI_COMM_NULL)
        MPI_Comm_free(&pair_comm);
    if (node_comm != MPI_COMM_NULL)
        MPI_Comm_free(&node_comm);
}

/* Node ranks 0 and 1: seconds per round trip of one burst (on rank 0), or 0 if abandoned
 * past the deadline (a partner not running) or on rank 1. */
static double peer_burst(void)
{
    WATCHED("barrier", MPI_Barrier(pair_comm)); /* both done with the last burst */
    if (node_rank == 0) {
        atomic_store(&peer_line->turn, 0);
        atomic_store(&peer_line->abandoned, 0);
    }
    WATCHED("barrier", MPI_Barrier(pair_comm)); /* the line reset, seen by both */
    const double t0 = MPI_Wtime();
    for (long turn = node_rank; turn <= 2L * PEER_TRIPS; turn += 2) { /* rank 0 also waits for the last return */
        long spins = 0;
        while (atomic_load_explicit(&peer_line->turn, memory_order_acquire) != turn) {
            if (atomic_load_explicit(&peer_line->abandoned, memory_order_relaxed))
                return 0;
            if (++spins % 1024 == 0 && MPI_Wtime() - t0 > PEER_DEADLINE_S) {
                atomic_store(&peer_line->abandoned, 1);
                return 0;
            }
        }
        if (turn < 2L * PEER_TRIPS)
            atomic_store_explicit(&peer_line->turn, turn + 1, memory_order_release);
    }
    return node_rank == 0 ? (MPI_Wtime() - t0) / PEER_TRIPS : 0;
}

/* Node ranks 0 and 1: each pinned to a CPU of its own for the probe (rank 0 its first
 * allowed CPU, rank 1 its first other one), their masks kept in *saved; false, and nothing
 * changed, where they cannot be (rank 1 allowed only rank 0's CPU). Unpinned, more ranks
 * than cores left the pair on one CPU through every burst: a data-parallel set at np=4 on
 * the 2-vCPU EPYC VM read a round trip at the deadline, x660 the fastest. */
static bool peer_pin(cpu_set_t *saved)
{
    int cpu0 = -1, mine = -1;
    const bool have = sched_getaffinity(0, sizeof *saved, saved) == 0;
    for (int c = 0; have && c < CPU_SETSIZE && mine < 0; c++)
        if (CPU_ISSET(c, saved) && node_rank == 0)
            mine = c;
    if (node_rank == 0)
        cpu0 = mine;
    WATCHED("broadcast", MPI_Bcast(&cpu0, 1, MPI_INT, 0, pair_comm));
    for (int c = 0; node_rank == 1 && have && cpu0 >= 0 && c < CPU_SETSIZE && mine < 0; c++)
        if (CPU_ISSET(c, saved) && c != cpu0)
            mine = c;
    cpu_set_t one;
    CPU_ZERO(&one);
    if (mine >= 0)
        CPU_SET(mine, &one);
    int ok = mine >= 0 ? 1 : 0;
    WATCHED("allreduce", MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, pair_comm));
    if (ok && sched_setaffinity(0, sizeof one, &one) != 0)
        ok = 0;
    int both = ok;
    WATCHED("allreduce", MPI_Allreduce(MPI_IN_PLACE, &both, 1, MPI_INT, MPI_MIN, pair_comm));
    if (ok && !both)
        sched_setaffinity(0, sizeof *saved, saved); /* the other could not: back as it was */
    return both;
}

double comm_peer_rtt_ns(void)
{
    if (!started || my_size < 2)
        return 0;
    peer_setup();
    double rtt_ns = 0;
    if (node_size >= 2 && node_rank < 2) {
        cpu_set_t saved;
        const bool pinned = peer_pin(&saved);
        double best = INFINITY;
        for (int b = 0; b < PEER_BURSTS; b++) {
            const double t = peer_burst();
            if (t > 0)
                best = fmin(best, t);
        }
        if (pinned)
            sched_setaffinity(0, sizeof saved, &saved);
        if (node_rank == 0)
            rtt_ns = 1e9 * (isfinite(best) ? best : PEER_DEADLINE_S / PEER_TRIPS);
    }
    /* the node's other ranks wait asleep, leaving the cores to the pair: spinning in a
     * barrier, two of them on a 2-core node would take the pair's cores */
    MPI_Request req;
    MPI_Ibarrier(node_comm, &req);
    watch_begin("barrier");
    for (int done = 0; MPI_Test(&req, &done, MPI_STATUS_IGNORE), !done;)
        if (node_rank >= 2)
            nanosleep(&(struct timespec){.tv_nsec = 200000}, NULL);
    watch_end();
    WATCHED("allreduce", MPI_Allreduce(MPI_IN_PLACE, &rtt_ns, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    return rtt_ns;
}

double comm_wtime(void)
{
    if (started)
        return MPI_Wtime();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
