/* ops/comm.c — MPI, started only under an MPI launcher (see comm.h). */
#include "ops/comm.h"

#include <limits.h>
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool started;
static int my_rank, my_size = 1;

/* Largest count handed to one MPI call (MPI counts are int). */
enum { COMM_CHUNK = 1 << 30 };

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
    return 0;
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

void comm_allreduce_sum_f32(float *buf, size_t n)
{
    if (!started || my_size == 1)
        return;
    for (size_t off = 0; off < n; off += COMM_CHUNK) {
        size_t c = n - off < COMM_CHUNK ? n - off : COMM_CHUNK;
        MPI_Allreduce(MPI_IN_PLACE, buf + off, (int)c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
}

static MPI_Request pending[COMM_MAX_PENDING];
static int npending;

int comm_iallreduce_sum_f32(float *buf, size_t n)
{
    if (!started || my_size == 1)
        return 0;
    if (npending == COMM_MAX_PENDING || n > INT_MAX)
        return -1;
    MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &pending[npending++]);
    return 0;
}

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
        MPI_Waitall(npending, pending, MPI_STATUSES_IGNORE);
    npending = 0;
}

void comm_allreduce_sum_f64(double *v, int n)
{
    if (started && my_size > 1)
        MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

void comm_allreduce_max_f64(double *v, int n)
{
    if (started && my_size > 1)
        MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

void comm_gather_f64(const double *send, int n, double *recv)
{
    if (!started || my_size == 1) {
        if (recv)
            memcpy(recv, send, (size_t)n * sizeof *send);
        return;
    }
    MPI_Gather(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

void comm_bcast(void *buf, size_t bytes, int root)
{
    if (!started || my_size == 1)
        return;
    for (size_t off = 0; off < bytes; off += COMM_CHUNK) {
        size_t c = bytes - off < COMM_CHUNK ? bytes - off : COMM_CHUNK;
        MPI_Bcast((char *)buf + off, (int)c, MPI_BYTE, root, MPI_COMM_WORLD);
    }
}

void comm_barrier(void)
{
    if (started && my_size > 1)
        MPI_Barrier(MPI_COMM_WORLD);
}

void comm_allreduce_f32(const float *src, float *dst, size_t n)
{
    if (!started || my_size == 1) {
        memcpy(dst, src, n * sizeof *src);
        return;
    }
    for (size_t off = 0; off < n; off += COMM_CHUNK) {
        size_t c = n - off < COMM_CHUNK ? n - off : COMM_CHUNK;
        MPI_Allreduce(src + off, dst + off, (int)c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
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
            MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

double comm_wtime(void)
{
    if (started)
        return MPI_Wtime();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
