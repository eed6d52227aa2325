/* models/hf_config.h — a HuggingFace config.json as a dlperf model.
 *
 * The configs of the models people size machines for (GPT-2, OPT and BERT; GPT-3's and
 * Megatron's shapes written as GPT-2 configs) describe the network fully: layers, width,
 * heads, MLP width, vocabulary, positions, activation, norms and dropout. This reads one
 * into a ModelSpec built by zb_transformer (models/zoo_build.h), the same builder as the
 * zoo's GPT-2 and BERT, so `dlperf models --from-hf` can write it as a model file that
 * profile, predict, sweep and (where it fits) run take.
 *
 * The trainer is not in a config: AdamW with GPT-3's settings (lr 6e-4, betas 0.9 / 0.95,
 * eps 1e-8, weight decay 0.1, gradients clipped to norm 1); BERT-family configs train as a
 * masked LM on masked_tokens data, the others as a causal LM on tokens.
 */
#ifndef DLPERF_HF_CONFIG_H
#define DLPERF_HF_CONFIG_H

#include <stddef.h>

#include "models/model.h"

/* Reads a config's JSON text. source names the file in errors and becomes the model's
 * source; name (NULL: the config's _name_or_path, its last part, else the file's name
 * without its extension) is the
 * model's name; context (0: the config's positions) the input's steps. Returns a ModelSpec
 * to free with model_free, or NULL with one line in err naming the source, the field and
 * what would be valid. */
ModelSpec *model_from_hf_config(const char *text, const char *source, const char *name, int context, char *err,
                                size_t errlen);

#endif
