/* models/weights.h — weights files: every named tensor of a plan (learnable parameters in
 * ARENA_PARAM, state such as batch-norm running statistics in ARENA_STATE) saved to and
 * loaded from one checksummed file. The format is in docs/weights-format.md:
 *
 *   "DLPFWTS\0" | u32 version | str model | u32 tensors |
 *   tensors x (str layer | str role | u64 count | count x f32) | u32 CRC-32 of all before
 *
 * (little-endian; str = u32 byte length + bytes, no NUL, at most 255 bytes).
 */
#ifndef DLPERF_WEIGHTS_H
#define DLPERF_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include "models/plan.h"

enum { WEIGHTS_FORMAT_VERSION = 1, WEIGHTS_NAME_MAX = 255 };

/* Bytes of the weights file of plan p (what weights_save writes, what weights_load wants). */
uint64_t weights_file_bytes(const Plan *p);

/* Writes the tensors p->params[0..nparams) in order, each read from params_base (ARENA_PARAM)
 * or state_base (ARENA_STATE) + ref.offset, to path.tmp, flushes it to disk (fsync) and
 * renames it to path: a crash or a failed write never leaves a partial file under `path`,
 * and an old file there stays whole until the rename replaces it. Returns 0, or -1 with one
 * line in err naming the file (path.tmp is removed then). */
int weights_save(const char *path, const Plan *p, const void *params_base, const void *state_base,
                 char *err, size_t errlen);

/* Loads a file written by weights_save for a plan of the same model (any batch size or
 * mode: the tensors do not depend on them). Refuses, with one line naming the file, a file
 * that is not a weights file, a newer format version, another model's weights, another
 * tensor count, the first tensor whose layer, role or element count differs, a truncated
 * file (saying how many bytes a file for this model has), bytes after the checksum and a
 * checksum mismatch. The whole file is verified in a first pass before the second copies
 * the data: on any refusal params_base and state_base are left untouched. (Only a file
 * rewritten in place between the two passes, which weights_save never does, can leave them
 * partly loaded; that is reported too.) */
int weights_load(const char *path, const Plan *p, void *params_base, void *state_base, char *err,
                 size_t errlen);

#endif
