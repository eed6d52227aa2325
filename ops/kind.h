/* ops/kind.h — the table of op kinds, internal to ops/. Every OpKind has one OpKindInfo:
 * its name, shape rules, cost, buffers, kernel dispatch, key, key parsing and spot check
 * (ggml's habit: what an op is, in one entry). The public functions of ops.h (op_cost,
 * op_buffer_info, op_run, op_key, op_key_parse, op_spot_check, ...) look the kind up in
 * the table and call its entry.
 *
 * Where each part lives: ops/kinds.c holds one section per kind (constructors, shape
 * rules, cost, buffers, dispatch, key and parsing) and the table itself; the arithmetic
 * stays in the kernel files (gemm.c, conv.c, ...; BLIS's habit: framework apart from
 * kernels), and the spot checks, which recompute outputs in double and share a sampler,
 * in ops/check.c. A new kind is one section of kinds.c, its kernels, one spot check and
 * one table entry.
 */
#ifndef DLPERF_OPS_KIND_H
#define DLPERF_OPS_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/kernels.h"

/* Element counts are bounded far below SIZE_MAX/4 so byte sizes and index products can
 * never wrap, whatever a key string says; 2^40 floats is 4 TiB, beyond any real tensor. */
#define OPS_MAX_ELEMS 1099511627776.0

/* Phase masks for ops_phase_in. */
#define PH(p) (1u << (p))
#define PH_TRAIN (PH(PHASE_FWD) | PH(PHASE_BWD_DATA) | PH(PHASE_BWD_WEIGHTS))
#define PH_ANY 0xFu

/* ---- shape-rule helpers (ops.c) ---- */

/* True when p is a phase and in mask. */
bool ops_phase_in(OpPhase p, unsigned mask);
/* NULL when count is in [1, 2^40], else why not. */
const char *ops_count_check(size_t count);
/* NULL if d is valid (kind, phase and shape), else why not: the kind's check. */
const char *ops_desc_check(const OpDesc *d);
/* Aborts with file:line and the reason when d is not valid (a programmer error). */
void ops_desc_assert_valid(const OpDesc *d, const char *file, int line);
#define DESC_ASSERT_VALID(d) ops_desc_assert_valid((d), __FILE__, __LINE__)

/* A float buffer of `elems` elements. */
OpBufInfo ops_buf_f(const char *name, size_t elems, BufRole role);
/* An int32 input buffer of `elems` elements. */
OpBufInfo ops_buf_i32(const char *name, size_t elems);

/* ---- keys (ops.c) ---- */

/* Appends printf output to a key of length len (< 0 or >= OP_KEY_MAX: left as it is)
 * and returns the new length, as snprintf counts it. */
int ops_key_append(char out[OP_KEY_MAX], int len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A cursor over a key: each reader consumes " name=value" (or a bare word) and clears ok
 * on any mismatch, so a parse is a straight sequence of reads and one check at the end. */
typedef struct {
    const char *p;
    bool ok;
} KeyCursor;

void kc_lit(KeyCursor *kc, const char *lit);
/* True when the key continues with lit (nothing consumed). */
bool kc_next_is(const KeyCursor *kc, const char *lit);
/* " word" from a table; returns its index (0 when !ok). */
int kc_word(KeyCursor *kc, const char *const *table, int count);
/* " fwd" ... " update" */
OpPhase kc_phase(KeyCursor *kc);
/* " name=N": a decimal integer in [0, INT_MAX] (digits only) */
int kc_int(KeyCursor *kc, const char *name);
/* " name=N": a decimal integer in [0, 2^40] */
size_t kc_size(KeyCursor *kc, const char *name);
/* " name=V": a finite float */
float kc_float(KeyCursor *kc, const char *name);
/* " p=a,b,c,d" */
void kc_pads(KeyCursor *kc, int pad[4]);

/* ---- spot checks (check.c) ---- */

typedef struct {
    double worst; /* largest |got - ref| / (atol + rtol * mag) seen */
    bool ok;
} SpotCheck;

/* Recomputes sampled outputs of one executed d (bufs as op_run had them; before[i] the
 * copy of an in-out buffer taken before the run, else NULL) into ck; see op_spot_check. */
typedef void OpSpotFn(SpotCheck *ck, const OpDesc *d, void *const bufs[], float *const before[],
                      int samples, uint64_t seed);

OpSpotFn spot_check_gemm, spot_check_conv, spot_check_pool, spot_check_bias, spot_check_act,
    spot_check_xent, spot_check_sqerr, spot_check_lstm, spot_check_update, spot_check_mem,
    spot_check_batchnorm, spot_check_lrn, spot_check_dropout, spot_check_channel,
    spot_check_axpby, spot_check_embedding, spot_check_kl, spot_check_shrink_norm1,
    spot_check_gru, spot_check_spmm, spot_check_peak, spot_check_membw, spot_check_bmm,
    spot_check_layernorm, spot_check_softmax, spot_check_binary, spot_check_scalar, spot_check_transpose,
    spot_check_allreduce;

/* ---- the table ---- */

typedef struct {
    const char *name; /* the key's first word, op_kind_name */
    /* NULL if the descriptor (its phase and shape; the kind is known) is valid, else why
     * not. Constructors and op_run treat a complaint as a programmer error (abort),
     * op_key_parse as bad input. */
    const char *(*check)(const OpDesc *d);
    OpCost (*cost)(const OpDesc *d);
    /* fills info[] in the order run expects bufs[]; returns the count */
    int (*buffers)(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS]);
    /* calls the kernel; bufs[] and workspace already checked by op_run */
    void (*run)(const OpDesc *d, void *const bufs[], void *workspace);
    /* prints the key into out and returns its length (snprintf's count) */
    int (*key)(const OpDesc *d, char out[OP_KEY_MAX]);
    /* reads the fields after the kind's name into r (kind set, the rest zero); false, or
     * kc->ok cleared, when they are not this kind's. op_key_parse then checks that the
     * key ended, that r is valid and that r keys back to the very same string. */
    bool (*parse)(KeyCursor *kc, OpDesc *r);
    /* NULL, or whether the kind's own enums (activation, pool kind, ...) are in range:
     * op_key indexes name tables with them, on descriptors it does not otherwise check */
    bool (*enums_ok)(const OpDesc *d);
    OpSpotFn *spot;
    /* NULL for kinds without scratch space (see op_workspace_bytes and friends) */
    size_t (*workspace)(const OpDesc *d);
    size_t (*workspace_slice)(const OpDesc *d);
    void (*workspace_set_slice)(OpDesc *d, size_t bytes);
    /* NULL: the kernel splits finer than it matters (op_thread_imbalance 1) */
    double (*thread_imbalance)(const OpDesc *d, int threads);
    /* the kind runs one kernel in every phase and its key has no phase (op_kind_phaseless) */
    bool phaseless;
} OpKindInfo;

/* The entry of kind k (k a valid OpKind). */
const OpKindInfo *op_kind_info(OpKind k);

#endif
