/* microbench/machine.c — what a measurement was taken on: the machine (CPU model and flags,
 * cores, memory, host, OS) with a fingerprint that identifies the hardware, the software
 * (BLAS core and build, compiler, threads), and the last-level cache size STREAM needs.
 */
#include "microbench/mb.h"
#include "ops/comm.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Copies the value of the first "key<spaces/tabs>: value" line of a /proc file whose key
 * is one of keys[] (in order of preference) into out; leaves out unchanged if none. */
static void proc_field(const char *path, const char *const keys[], int nkeys, char *out,
                       size_t outlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    /* cpuinfo flag lines are long (~1.5 KB on recent x86); a line longer than the buffer
     * is truncated, which only shortens the stored flags. */
    char line[8192];
    int best = nkeys;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        size_t klen = (size_t)(colon - line);
        while (klen > 0 && isspace((unsigned char)line[klen - 1]))
            klen--;
        for (int k = 0; k < best; k++) {
            if (strlen(keys[k]) == klen && strncmp(line, keys[k], klen) == 0) {
                char *v = colon + 1;
                while (*v && isspace((unsigned char)*v))
                    v++;
                size_t vlen = strcspn(v, "\n");
                while (vlen > 0 && isspace((unsigned char)v[vlen - 1]))
                    vlen--;
                snprintf(out, outlen, "%.*s", (int)vlen, v);
                best = k;
                break;
            }
        }
        if (best == 0)
            break;
    }
    fclose(f);
}

/* 64-bit FNV-1a: small, stable across platforms and versions, good enough to tell
 * machines apart (not a security hash). */
static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

void mb_machine_detect(MachineRow *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->cpu_model, sizeof m->cpu_model, "unknown");
    /* x86 names "model name" and "flags"; arm64 has no model name line but "Hardware" or
     * "CPU part", and calls its flags "Features". */
    static const char *const model_keys[] = {"model name", "Hardware", "cpu model", "CPU part"};
    static const char *const flag_keys[] = {"flags", "Features"};
    proc_field("/proc/cpuinfo", model_keys, 4, m->cpu_model, sizeof m->cpu_model);
    proc_field("/proc/cpuinfo", flag_keys, 2, m->cpu_flags, sizeof m->cpu_flags);

    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    m->cores = cores > 0 ? (int)cores : 1;

    char mem[64] = "";
    static const char *const mem_keys[] = {"MemTotal"};
    proc_field("/proc/meminfo", mem_keys, 1, mem, sizeof mem);
    m->mem_bytes = strtoll(mem, NULL, 10) * 1024; /* "24684084 kB" */

    if (gethostname(m->hostname, sizeof m->hostname) != 0)
        snprintf(m->hostname, sizeof m->hostname, "unknown");
    m->hostname[sizeof m->hostname - 1] = '\0';

    struct utsname u;
    if (uname(&u) == 0)
        snprintf(m->os, sizeof m->os, "%.40s %.60s %.20s", u.sysname, u.release, u.machine);
    else
        snprintf(m->os, sizeof m->os, "unknown");

    /* The fingerprint covers what determines kernel speed. Not the hostname: containers
     * and cloud instances get a new one on every start, and the same hardware must find
     * its earlier calibrations. Memory is rounded to GiB because MemTotal moves by a few
     * MiB between kernel versions and boots (reserved memory). */
    char buf[64];
    uint64_t h = 0xcbf29ce484222325ULL;
    h = fnv1a(h, m->cpu_model);
    h = fnv1a(h, "|");
    h = fnv1a(h, m->cpu_flags);
    snprintf(buf, sizeof buf, "|%d|%lld", m->cores,
             (long long)((m->mem_bytes + (1LL << 29)) >> 30));
    h = fnv1a(h, buf);
    snprintf(m->fingerprint, sizeof m->fingerprint, "%016llx", (unsigned long long)h);
}

void mb_software_detect(SoftwareInfo *sw, int threads)
{
    memset(sw, 0, sizeof *sw);
    sw->threads = threads;
    sw->ranks = comm_size();
    snprintf(sw->mpi_library, sizeof sw->mpi_library, "%s", comm_library());
    snprintf(sw->blas_core, sizeof sw->blas_core, "%s", ops_blas_core());
    snprintf(sw->blas_config, sizeof sw->blas_config, "%s", ops_blas_config());
    /* The wait policy libgomp read at start-up: dlperf sets PASSIVE for ranks sharing a
     * node (cli/blas_select.c says why and leaves its reason in DLPERF_OMP_WAIT_SET). */
    const char *policy = getenv("OMP_WAIT_POLICY"), *set_by = getenv("DLPERF_OMP_WAIT_SET");
    const char *spin = getenv("GOMP_SPINCOUNT");
    char wait[96];
    if (policy && *policy)
        snprintf(wait, sizeof wait, "OMP_WAIT_POLICY=%s (%s)", policy, set_by && *set_by ? set_by : "user");
    else
        snprintf(wait, sizeof wait, "libgomp default (spin, then sleep)");
    snprintf(sw->threading, sizeof sw->threading, "%s BLAS; wait %s%s%s", ops_blas_threading(), wait,
             spin && *spin ? "; GOMP_SPINCOUNT=" : "", spin && *spin ? spin : "");
#if defined(__clang__)
    snprintf(sw->compiler, sizeof sw->compiler, "clang %s", __clang_version__);
#elif defined(__GNUC__)
    snprintf(sw->compiler, sizeof sw->compiler, "gcc %s", __VERSION__);
#else
    snprintf(sw->compiler, sizeof sw->compiler, "unknown");
#endif
}

/* One line of a sysfs cache attribute of cpu0's cache index i into buf; false if absent. */
static bool cache_attr(int i, const char *name, char *buf, size_t len)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", i, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

/* "0-1,4" -> 3 */
static int cpu_list_count(const char *s)
{
    int n = 0;
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            break;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        n += (int)(b - a + 1);
        s = *end == ',' ? end + 1 : end;
    }
    return n > 0 ? n : 1;
}

void mb_cache_sizes(MbCaches *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < 16; i++) {
        char buf[256];
        if (!cache_attr(i, "level", buf, sizeof buf))
            continue;
        int level = atoi(buf);
        if (level < 1 || level > 3 || !cache_attr(i, "type", buf, sizeof buf) || strcmp(buf, "Instruction") == 0)
            continue;
        if (!cache_attr(i, "size", buf, sizeof buf))
            continue;
        char *end;
        unsigned long long v = strtoull(buf, &end, 10);
        v <<= *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
        int shared = cache_attr(i, "shared_cpu_list", buf, sizeof buf) ? cpu_list_count(buf) : 1;
        c->bytes[level - 1] = (size_t)v;
        c->shared_cpus[level - 1] = shared;
    }
}

size_t mb_llc_bytes(void)
{
    /* The largest cache of level >= 2 that cpu0 sees: on multi-CCX parts that is one
     * CCX's L3, which is the share a single process can rely on. */
    MbCaches c;
    mb_cache_sizes(&c);
    size_t best = c.bytes[1] > c.bytes[2] ? c.bytes[1] : c.bytes[2];
    return best ? best : (size_t)32 << 20;
}
