/* predictor/device_profile.h — a device's evidence as a compact profile: per precision, each
 * group's fitted kernel-form parameters (gpu_model.h), its band and fit error, how many
 * measurements it was fitted to and a sample of their shapes (not their times), with the
 * sources the measurements came from. It is what a fresh clone knows of GPUs: the built-in
 * profiles (systems/profiles/NAME.json, compiled in) are derived by `dlperf systems profile`
 * from public measurements imported into a database, never the measurements themselves.
 *
 * Read back, a profile prices the device as its fits do (source "fitted", without the
 * correction near measured shapes that only measurements give) and takes part in carrying
 * evidence to other devices: its shapes stand in for its measurements when the transfer
 * learns its reach by leaving devices out, timed by its own fit (so its left-out error
 * counts how far the others' parameters are from its own, not its fit's own error).
 * Format: docs/gpu-pricing.md, "Profiles".
 */
#ifndef DLPERF_DEVICE_PROFILE_H
#define DLPERF_DEVICE_PROFILE_H

#include <stddef.h>

#include "predictor/device_evidence.h"

#define PROFILE_FORMAT "dlperf-device-profile"
enum { PROFILE_VERSION = 1, PROFILE_SHAPES_MAX = 32 };

/* One precision of a device's evidence for a profile: the fitted evidence and the sources
 * of its measurements (the imports' descriptions, one string each). */
typedef struct {
    const char *precision;
    const DeviceEvidence *ev;
    const char *const *sources;
    int nsources;
} ProfilePart;

/* The profile JSON (malloc'd, caller frees) of device `device` from parts[0..n): notes are
 * free-text provenance (the public repositories and commits), made_at an ISO time. NULL
 * with err (a part without fits, out of memory). */
char *profile_write(const char *device, const ProfilePart *parts, int n, const char *const *notes, int nnotes,
                    const char *made_at, char *err, size_t errlen);

/* The device a profile describes (into name[48]). 0, or -1 with err naming origin and the
 * field at fault. */
int profile_device(const char *json, const char *origin, char name[48], char *err, size_t errlen);

/* The profile's evidence at `precision` on sheet h: a DeviceEvidence with its fits and the
 * sampled shapes timed by them. 0 and *out; 1 if the profile has no such precision; -1
 * with err (the file's field at fault and what would be valid, or a kernel-model version
 * this dlperf does not price with). */
int profile_load(const char *json, const char *origin, const char *precision, const GpuSheet *h,
                 DeviceEvidence **out, char *err, size_t errlen);

/* The profiles compiled into the binary: count, and the i-th's text and path. */
int profile_builtin_count(void);
const char *profile_builtin(int i, const char **path);

#endif
