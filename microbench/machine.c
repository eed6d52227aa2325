/* microbench/machine.c — what a measurement was taken on: the machine (CPU model and flags,
 * cores, memory, host, OS) with a fingerprint that identifies the hardware, the software
 * (BLAS core and build, compiler, threads), and the last-level cache size STREAM needs.
 */
#include "microbench/mb.h"

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
    sw->ranks = 1;
    snprintf(sw->blas_core, sizeof sw->blas_core, "%s", ops_blas_core());
    snprintf(sw->blas_config, sizeof sw->blas_config, "%s", ops_blas_config());
#if defined(__clang__)
    snprintf(sw->compiler, sizeof sw->compiler, "clang %s", __clang_version__);
#elif defined(__GNUC__)
    snprintf(sw->compiler, sizeof sw->compiler, "gcc %s", __VERSION__);
#else
    snprintf(sw->compiler, sizeof sw->compiler, "unknown");
#endif
}

size_t mb_llc_bytes(void)
{
    /* The largest unified/data cache of level >= 2 that cpu0 sees: on multi-CCX parts
     * that is one CCX's L3, which is the share a single process can rely on. */
    size_t best = 0;
    for (int i = 0; i < 16; i++) {
        char path[128], buf[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        int level = 0;
        if (fscanf(f, "%d", &level) != 1)
            level = 0;
        fclose(f);
        if (level < 2)
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(buf, sizeof buf, f)) {
            char *end;
            unsigned long long v = strtoull(buf, &end, 10);
            if (*end == 'K')
                v <<= 10;
            else if (*end == 'M')
                v <<= 20;
            else if (*end == 'G')
                v <<= 30;
            if (v > best)
                best = (size_t)v;
        }
        fclose(f);
    }
    return best ? best : (size_t)32 << 20;
}
