/* cli/blas_select.c — running OpenBLAS's fastest correct kernels on this CPU.
 *
 * Debian's OpenBLAS is built with DYNAMIC_ARCH and picks a core type from CPUID when it
 * loads; on some AVX-512 CPUs it picks its AVX2 ("Haswell") kernels although the AVX-512
 * ones ("SkylakeX", "Cooperlake") run SGEMM about twice as fast. The choice can only be
 * changed before the library initialises, through OPENBLAS_CORETYPE, so dlperf probes
 * each plausible core type in a child process (SGEMM timed and validated by the
 * microbenchmark protocol), caches the verdict per machine and library, and re-executes
 * itself with the winner. A user's OPENBLAS_CORETYPE is always respected. The choice and
 * how it was made are recorded with every calibration and run.
 *
 * dlperf links OpenBLAS's OpenMP build: GEMMs and the kernels share libgomp's pool. (With
 * the pthread build, OpenBLAS's workers spun for ~0.1 s after each GEMM on the cores the
 * next OpenMP op needed, and large element-wise ops in a step ran at one core's speed.)
 * libgomp's default wait (a bounded spin, 2-17 ms here, then sleep) keeps that one pool
 * hot between the regions of a step. Measured on a 2-vCPU VM after a serial gap of 0.2 /
 * 2 / 17 ms: a 64x256x64 SGEMM 20 / 28 / 157 us with the default spin and 56 / 123 / 146
 * us with OMP_WAIT_POLICY=PASSIVE; an 8.4M-parameter SGD 1.36 / 1.38 / 2.72 ms against
 * 2.63 / 2.71 / 2.58 ms: a sleeping vCPU takes milliseconds to wake. Only ranks that share
 * the node with other ranks of an MPI job get PASSIVE (the re-execution below sets it
 * unless the user chose a policy): their spinning workers would take the cores the other
 * ranks compute on. libgomp reads the policy only at start-up.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "microbench/mb.h"
#include "ops/comm.h"
#include "ops/ops.h"

enum { PROBE_N = 1536, MAX_CAND = 6, PROBE_ROUNDS = 2 };

const char *blas_choice(void)
{
    const char *c = getenv("DLPERF_BLAS_CHOICE");
    return c && *c ? c : "library default (not probed)";
}

/* The two SGEMMs the probe times: a large one on all threads (fully connected layers,
 * LSTM) and one image of a convolution on one thread (convolutions split the batch over
 * threads, each running single-threaded sgemm: AlexNet conv2's 192 x 729 x 1600). */
static double probe_gflops(const OpDesc *d, int threads, bool *ok)
{
    MbProtocol p = mb_protocol(MB_QUICK);
    p.min_reps = 5;
    p.max_reps = 5;
    MeasurementRow m;
    double samples[8];
    char err[256];
    if (mb_time_op(d, &p, threads, &m, samples, err, sizeof err) != 0 || !m.validated) {
        *ok = false;
        return 0;
    }
    return m.flops / m.min_s / 1e9;
}

/* The hidden child command: prints "<core> <GFLOP/s all threads> <GFLOP/s one thread> ok|wrong". */
int cmd_blas_probe(int argc, char **argv, Cli *cli)
{
    bool ok = true;
    OpDesc big = op_gemm(PHASE_FWD, PROBE_N, PROBE_N, PROBE_N, false, false, 0);
    OpDesc conv = op_gemm(PHASE_FWD, 192, 729, 1600, false, false, 0);
    double mt = probe_gflops(&big, cli->threads, &ok);
    double st = probe_gflops(&conv, 1, &ok);
    mb_release();
    printf("%s %.1f %.1f %s\n", ops_blas_core(), mt, st, ok ? "ok" : "wrong");
    return ok ? EXIT_OK : EXIT_FAIL;
}

/* Runs the probe with OPENBLAS_CORETYPE=core; false if it failed or computed wrong.
 * *mt, *st: GFLOP/s of the all-threads and the one-thread SGEMM. */
static bool probe(const char *core, char *actual, size_t n, double *mt, double *st)
{
    int fd[2];
    if (pipe(fd) != 0)
        return false;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return false;
    }
    if (pid == 0) {
        dup2(fd[1], STDOUT_FILENO);
        close(fd[0]);
        close(fd[1]);
        setenv("OPENBLAS_CORETYPE", core, 1);
        setenv("DLPERF_BLAS_CHOICE", "probe", 1);
        execl("/proc/self/exe", "dlperf", "__blas-probe", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char line[256] = "";
    FILE *f = fdopen(fd[0], "r");
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        fclose(f);
    } else {
        close(fd[0]);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    char name[64], verdict[16];
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        sscanf(line, "%63s %lf %lf %15s", name, mt, st, verdict) != 4)
        return false;
    snprintf(actual, n, "%s", name);
    return strcmp(verdict, "ok") == 0;
}

static void cache_path(char *out, size_t n)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(out, n, "%s/dlperf/blas-core", xdg);
    else
        snprintf(out, n, "%s/.cache/dlperf/blas-core", home && *home ? home : "/tmp");
}

/* Cache line: "<fingerprint>|<blas config>|<core>|<how it was chosen>". */
static bool cache_read(const char *key, char *core, size_t ncore, char *desc, size_t ndesc)
{
    char path[4096], line[1024];
    cache_path(path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool found = false;
    size_t klen = strlen(key);
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, key, klen) != 0 || line[klen] != '|')
            continue;
        char *c = line + klen + 1, *bar = strchr(c, '|');
        if (!bar)
            continue;
        *bar = '\0';
        snprintf(core, ncore, "%s", c);
        snprintf(desc, ndesc, "%s", bar + 1);
        found = true;
    }
    fclose(f);
    return found;
}

static void cache_write(const char *key, const char *core, const char *desc)
{
    char path[4096];
    cache_path(path, sizeof path);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "a"); /* best effort: without a cache the next run probes again */
    if (f) {
        fprintf(f, "%s|%s|%s\n", key, core, desc);
        fclose(f);
    }
}

static bool has_flag(const char *flags, const char *flag)
{
    size_t n = strlen(flag);
    for (const char *p = strstr(flags, flag); p; p = strstr(p + 1, flag))
        if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* Re-executes this program with the environment set up so far; returns only on failure. */
static void reexec(const Cli *cli, const char *why)
{
    execv("/proc/self/exe", cli->argv);
    fprintf(stderr, "dlperf: cannot re-execute to apply %s (%s); continuing without it\n", why, strerror(errno));
}

void blas_select(const Cli *cli)
{
    if (getenv("DLPERF_BLAS_CHOICE"))
        return; /* decided before the re-exec (or we are a probe) */
    if (strcmp(ops_blas_threading(), "OpenMP") != 0)
        fprintf(stderr,
                "dlperf: warning: the loaded OpenBLAS is not its OpenMP build (threads: %s; %s): its "
                "workers spin after each GEMM on the cores the kernels need, and a large element-wise op "
                "in a step runs at about one core's speed (check LD_LIBRARY_PATH)\n",
                ops_blas_threading(), ops_blas_config());
    bool set_omp = !getenv("OMP_WAIT_POLICY") && comm_env_local_size() > 1;
    if (set_omp) {
        setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
        char why[64]; /* for the record of the software (mb_software_detect) */
        snprintf(why, sizeof why, "set by dlperf: %d ranks on this node", comm_env_local_size());
        setenv("DLPERF_OMP_WAIT_SET", why, 1);
    }
    char desc[160];
    const char *user = getenv("OPENBLAS_CORETYPE");
    if (user && *user) {
        snprintf(desc, sizeof desc, "user: OPENBLAS_CORETYPE=%s", user);
        setenv("DLPERF_BLAS_CHOICE", desc, 1);
        if (set_omp)
            reexec(cli, "OMP_WAIT_POLICY=PASSIVE");
        return;
    }
    MachineRow m;
    mb_machine_detect(&m);
    char key[512], best[64], current[64];
    snprintf(current, sizeof current, "%s", ops_blas_core());
    snprintf(key, sizeof key, "%s|%s", m.fingerprint, ops_blas_config());
    for (char *p = key; *p; p++)
        if (*p == '\n')
            *p = ' ';
    if (!cache_read(key, best, sizeof best, desc, sizeof desc)) {
        const char *cand[MAX_CAND];
        int nc = 0;
        cand[nc++] = current;
        if (has_flag(m.cpu_flags, "avx512f") && has_flag(m.cpu_flags, "avx512bw") && has_flag(m.cpu_flags, "avx512vl"))
            cand[nc++] = "SkylakeX";
        if (has_flag(m.cpu_flags, "avx512_bf16"))
            cand[nc++] = "Cooperlake";
        if (has_flag(m.cpu_flags, "avx2") && has_flag(m.cpu_flags, "fma"))
            cand[nc++] = "Haswell";
        fprintf(stderr, "dlperf: choosing the OpenBLAS kernels for this CPU (once per machine)...\n");
        /* Candidates are probed in alternating rounds and keep their best rates, so a
         * slow moment of a shared machine does not decide. Score: geometric mean of the
         * all-threads and the one-thread SGEMM rate. */
        double mt[MAX_CAND] = {0}, st[MAX_CAND] = {0};
        bool usable[MAX_CAND] = {false};
        for (int round = 0; round < PROBE_ROUNDS; round++)
            for (int i = 0; i < nc; i++) {
                bool dup = false;
                for (int j = 0; j < i; j++)
                    dup |= strcmp(cand[i], cand[j]) == 0;
                char actual[64];
                double r_mt = 0, r_st = 0;
                if (dup || !probe(cand[i], actual, sizeof actual, &r_mt, &r_st) || strcmp(actual, cand[i]) != 0)
                    continue;
                usable[i] = true;
                mt[i] = r_mt > mt[i] ? r_mt : mt[i];
                st[i] = r_st > st[i] ? r_st : st[i];
            }
        int used = snprintf(desc, sizeof desc, "probed sgemm GFLOP/s (all threads, 1 thread):");
        int ibest = 0; /* cand[0] is the library's own choice */
        for (int i = 0; i < nc; i++) {
            if (!usable[i])
                continue;
            if (used < (int)sizeof desc)
                used += snprintf(desc + used, sizeof desc - (size_t)used, " %s %.0f,%.0f", cand[i], mt[i], st[i]);
            if (sqrt(mt[i] * st[i]) > sqrt(mt[ibest] * st[ibest]))
                ibest = i;
        }
        /* Within 5% is noise on a shared machine: then keep the library's own choice. */
        if (!usable[0] || sqrt(mt[ibest] * st[ibest]) > 1.05 * sqrt(mt[0] * st[0]))
            snprintf(best, sizeof best, "%s", cand[ibest]);
        else
            snprintf(best, sizeof best, "%s", current);
        if (used < (int)sizeof desc)
            snprintf(desc + used, sizeof desc - (size_t)used, " -> %s", best);
        cache_write(key, best, desc);
    }
    setenv("DLPERF_BLAS_CHOICE", desc, 1);
    if (strcmp(best, current) != 0)
        setenv("OPENBLAS_CORETYPE", best, 1);
    if (strcmp(best, current) != 0 || set_omp)
        reexec(cli, "the BLAS core and OpenMP wait policy");
}
