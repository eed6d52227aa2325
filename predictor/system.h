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
enum { DEVICE_ALIAS_MAX = 8, DEVICE_ALIAS_LEN = 64 }; /* aliases per sheet; bytes per alias, NUL included */

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
    /* What carries measurements from one GPU to another: the architecture and the figures
     * the peaks come from. All optional in a sheet; an absent one is "" or 0, except
     * fp32_lanes_shared_int32, where 0 is a value (dedicated FP32 lanes) and -1 is absent. */
    char arch[16];                 /* "kepler" ... "blackwell", "cdna".."cdna3", "x86" */
    double compute_capability;     /* NVIDIA's major.minor, e.g. 7.0 */
    int sm_count;                  /* streaming multiprocessors / compute units enabled */
    double boost_clock_mhz, base_clock_mhz;
    int fp32_lanes_per_sm;         /* FP32 FMA lanes per SM per clock ("CUDA cores per SM") */
    int fp32_lanes_shared_int32;   /* of those, lanes that issue FP32 or INT32 (-1: not given) */
    int issue_lanes_per_sm;        /* lanes' worth of warp instructions an SM issues per clock
                                    * (schedulers x dispatch units x 32; 0: not given) */
    double fp32_gemm_bound;        /* the share of the FP32 peak the best GEMM reaches on the
                                    * architecture, measured (the vendor's BLAS) or bounded by a
                                    * published analysis, where the issue slots allow more
                                    * (0: not given) */
    double l2_bytes;               /* the sheet's l2_mb x 1048576 (vendors state L2 in MiB) */
    char memory_type[16];          /* "GDDR5" ... "HBM3e", "DDR4", "DDR5" */
    double tdp_w;                  /* board power limit, W */
    char aliases[DEVICE_ALIAS_MAX][DEVICE_ALIAS_LEN]; /* names published data sets use for it */
    int naliases;
} DeviceSpec;

/* Whether d prices an eager framework's host time (any of its host figures above 0). */
bool device_host_floor(const DeviceSpec *d);

/* The FP32 rate a GEMM on d's CUDA cores can reach by its build, FLOP/s: the fp32 peak, on
 * the dedicated lanes only where some lanes are shared with INT32, and capped where the SM
 * cannot issue anything but FMAs at that rate (system.c says why). 0 where the sheet has no
 * fp32 peak. */
double device_fp32_issue_flops(const DeviceSpec *d);

/* The FP32 rate GEMMs are priced against: device_fp32_issue_flops, or the sheet's
 * fp32_gemm_bound of the peak where that is lower. */
double device_fp32_gemm_flops(const DeviceSpec *d);

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
/* The device whose name or one of whose aliases equals published_name (a data set's name
 * for a GPU, e.g. "Tesla V100-PCIE-32GB" or "NV_TitanXp"), compared case-insensitively
 * with surrounding spaces ignored; database sheets first, then the built-ins a database
 * sheet does not shadow. Its name goes to `name`. 0, DB_NOT_FOUND (err says so), or -1. */
int device_find_alias(Db *db, const char *published_name, char name[SPEC_NAME_MAX], char *err, size_t errlen);
int link_load(Db *db, const char *name, LinkSpec *out, char *err, size_t errlen);
/* A system, its device and links resolved. */
int system_load(Db *db, const char *name, SystemSpec *out, char *err, size_t errlen);
/* A system from a sheet's text (a file not added to any database), its device and links
 * resolved from db and the built-ins; errors name source. 0, or -1 with err. */
int system_parse(Db *db, const char *text, const char *source, SystemSpec *out, char *err, size_t errlen);

/* Every spec: built-ins and added ones (an added one shadowing a built-in is listed once,
 * as added). fn returns nonzero to stop. */
typedef struct {
    char name[SPEC_NAME_MAX], title[SPEC_TITLE_MAX], origin[96];
    SpecKind kind;
} SpecEntry;
int spec_list(Db *db, SpecEntry **out, int *n, char *err, size_t errlen);

#endif
