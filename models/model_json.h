/* models/model_json.h — user model files: a JSON text <-> ModelSpec (models/model.h).
 *
 * The format (docs/model-format.md) names layers and their inputs by layer name, uses
 * Keras' field names where Keras has one, and leaves out fields at their defaults. Every
 * rejected file gets ONE line naming the file, the layer (1-based index and name), the
 * field, what was given and what would be valid. Shapes are not checked here: plan_build()
 * does that and names the layer; everything the JSON alone can decide is checked here.
 *
 *     char err[512];
 *     ModelSpec *m = model_json_load("my-cnn.json", err, sizeof err);
 *     if (!m) { fprintf(stderr, "%s\n", err); return 1; }
 *     ...plan_build(m, batch, ...)...
 *     model_free(m);
 */
#ifndef DLPERF_MODEL_JSON_H
#define DLPERF_MODEL_JSON_H

#include <stddef.h>

#include "models/model.h"

enum {
    MODEL_JSON_MAX_BYTES = 16 << 20, /* larger files are refused (a model is KBs) */
    MODEL_JSON_MAX_LAYERS = 100000
};

/* Parses a model file's text (NUL-terminated). source_name (a path, or NULL for "model")
 * starts every error message. Returns a ModelSpec the caller owns (free with model_free),
 * or NULL with one line in err (errlen bytes; err may be NULL). */
ModelSpec *model_json_parse(const char *text, const char *source_name, char *err, size_t errlen);

/* Reads and parses the file at path. File errors name the path: missing, unreadable, a
 * directory, empty, larger than MODEL_JSON_MAX_BYTES, a NUL byte, not JSON (with
 * line:column). NULL with one line in err on any error. */
ModelSpec *model_json_load(const char *path, char *err, size_t errlen);

/* Frees a ModelSpec from model_json_parse / model_json_load: the struct, its layers, its
 * title/source/family/origin strings and head names. Never pass a zoo model. NULL: no-op. */
void model_free(ModelSpec *m);

/* A malloc'd JSON text (one layer per line) that model_json_parse turns back into an
 * equal ModelSpec: every field the layer kind, loss, optimizer and schedule use, exactly
 * (floats are written with the fewest digits that read back as the same float). Fields
 * at their defaults are left out. m must be valid (as model_json_parse would accept it;
 * otherwise the text may not parse back). NULL when out of memory, or when m is an
 * algorithm without layers (FISTA), which has no model file. */
char *model_json_export(const ModelSpec *m);

#endif
