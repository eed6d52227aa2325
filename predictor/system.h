/* predictor/system.h — spec sheets of machines that need not exist: devices (peak FLOP/s
 * per precision, memory bandwidth and capacity), interconnects (bandwidth, latency) and
 * systems (nodes x devices per node x the links inside and between nodes), and "this
 * machine, calibrated" as a device.
 *
 * Specs are JSON (systems/README.md): built into the binary from systems/, or added by
 * users to the database (`dlperf systems add`), which shadows a built-in of the same name.
 * Every figure carries its public source.
 */
#ifndef DLPERF_SYSTEM_H
#define DLPERF_SYSTEM_H

#include <stdbool.h>

#include "db/db.h"

typedef enum { SPEC_DEVICE, SPEC_INTERCONNECT, SPEC_SYSTEM, SPEC_KIND_COUNT } SpecKind;
const char *spec_kind_name(SpecKind k); /* "device", "interconnect", "system" */

typedef enum { PREC_FP64, PREC_FP32, PREC_TF32, PREC_FP16, PREC_BF16, PREC_COUNT } Precision;
const char *precision_name(Precision p); /* "fp64", "fp32", ... */
int precision_parse(const char *s, Precision *out);
/* Bytes per value (fp16 and bf16 move half of fp32's bytes; tf32 is stored as fp32). */
double precision_bytes(Precision p);

enum { SPEC_NAME_MAX = 48, SPEC_TITLE_MAX = 128 };

typedef struct {
    char name[SPEC_NAME_MAX], title[SPEC_TITLE_MAX];
    bool gpu;
    bool calibrated;               /* this machine, priced from its calibration */
    int year;
    double peak_flops[PREC_COUNT]; /* FLOP/s; 0 where the device has no such rate */
    double mem_bytes, mem_Bps;     /* capacity, bandwidth */
    double launch_s;               /* per-kernel overhead (GPU launch), seconds */
    /* The host's time in the framework that drives the device (an eager framework's Python,
     * autograd and dispatch): per training step, per op, and per convolution or batch-norm
     * op, seconds. The device waits for the host where an op's host time exceeds its device
     * time (whatif.h). 0: not modelled (a CPU device runs its own ops). */
    double host_step_s, host_op_s, host_conv_op_s;
    /* What carries evidence from one GPU to another (device_transfer.h); 0 or "" where the
     * sheet does not give it. */
    char arch[16];                 /* "volta", "ampere", "ada", "hopper", ... */
    double compute_capability;
    int sm_count;                  /* streaming multiprocessors (compute units) */
    double boost_clock_mhz, base_clock_mhz;
    int fp32_lanes_per_sm;         /* FP32 FMA lanes per SM per clock */
    int fp32_lanes_shared_int32;   /* of those, the ones that issue INT32 too (GA10x, Ada) */
    double l2_bytes;
    char memory_type[16];          /* "HBM2", "GDDR6", ... */
    double tdp_w;
    char aliases[8][64];           /* the names published data sets give it */
    int naliases;
} DeviceSpec;

/* Whether d prices an eager framework's host time (any of its host figures above 0). */
bool device_host_floor(const DeviceSpec *d);

typedef struct {
    char name[SPEC_NAME_MAX], title[SPEC_TITLE_MAX];
    bool intra;                    /* inside a node (else between nodes) */
    double beta_Bps, alpha_s;      /* per direction per device / per port; one-way latency */
} LinkSpec;

typedef struct {
    char name[SPEC_NAME_MAX], title[SPEC_TITLE_MAX];
    DeviceSpec device;
    int devices_per_node;
    bool has_intra;
    LinkSpec intra, inter;
    int nics_per_node;
    int nodes;                     /* the real machine's size, 0 if it is a building block */
} SystemSpec;

/* Validates one spec sheet (any kind, from its "format" field); on error, one line naming
 * the source, the field and what would be valid. References (a system's device and
 * links) are checked against what db (may be NULL) and the built-ins hold. */
int spec_validate(Db *db, const char *text, const char *source, SpecKind *kind, char name[SPEC_NAME_MAX],
                  char *err, size_t errlen);

/* Finds a spec by name (database first, then built-in): its JSON (malloc'd) and where it
 * came from ("built-in systems/…" or "added"). 0, DB_NOT_FOUND, or -1 with err. */
int spec_find(Db *db, const char *name, SpecKind *kind, char **text, char *origin, size_t originlen, char *err,
              size_t errlen);

int device_load(Db *db, const char *name, DeviceSpec *out, char *err, size_t errlen);
int link_load(Db *db, const char *name, LinkSpec *out, char *err, size_t errlen);
/* A system, its device and links resolved. */
int system_load(Db *db, const char *name, SystemSpec *out, char *err, size_t errlen);

/* Every spec: built-ins and added ones (an added one shadowing a built-in is listed once,
 * as added). fn returns nonzero to stop. */
typedef struct {
    char name[SPEC_NAME_MAX], title[SPEC_TITLE_MAX], origin[96];
    SpecKind kind;
} SpecEntry;
int spec_list(Db *db, SpecEntry **out, int *n, char *err, size_t errlen);

#endif
