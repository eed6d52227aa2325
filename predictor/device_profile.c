/* predictor/device_profile.c — a device's evidence as a compact profile (device_profile.h). */
#include "predictor/device_profile.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a shape as the profile stores it: the fields every form reads */
enum { SHAPE_FIELDS = 9 };
static void shape_to_array(const GpuShape *s, double v[SHAPE_FIELDS])
{
    v[0] = s->b, v[1] = s->m, v[2] = s->n, v[3] = s->k, v[4] = s->winograd ? 1 : 0;
    v[5] = s->flops, v[6] = s->bytes, v[7] = s->rows, v[8] = s->row_len;
}

static cJSON *group_json(const DeviceEvidence *ev, const GpuGroupFit *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "group", g->group);
    cJSON_AddStringToObject(o, "form", gpu_form_name(g->form));
    cJSON *p = cJSON_AddObjectToObject(o, "params");
    for (int k = 0; k < gpu_form_nparams(g->form); k++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%.6g", g->p[k]); /* six digits: the fits are no finer */
        cJSON_AddNumberToObject(p, gpu_param_name(g->form, k), strtod(buf, NULL));
    }
    cJSON_AddNumberToObject(o, "points", g->points);
    cJSON_AddNumberToObject(o, "fit_err", round(g->fit_err * 1e4) / 1e4);
    cJSON_AddNumberToObject(o, "band", round(g->band * 1e4) / 1e4);
    GpuShape *s;
    double *t;
    const int n = dev_ev_group_points(ev, g->group, &s, &t);
    cJSON *a = cJSON_AddArrayToObject(o, "shapes");
    if (n > 0) { /* evenly over the points: the sample keeps their spread of sizes */
        const int take = n < PROFILE_SHAPES_MAX ? n : PROFILE_SHAPES_MAX;
        for (int i = 0; i < take; i++) {
            const GpuShape *x = &s[(int)((double)i * n / take)];
            double v[SHAPE_FIELDS];
            shape_to_array(x, v);
            cJSON *row = cJSON_CreateArray();
            for (int j = 0; j < SHAPE_FIELDS; j++) {
                char buf[32];
                snprintf(buf, sizeof buf, "%.6g", v[j]);
                cJSON_AddItemToArray(row, cJSON_CreateNumber(strtod(buf, NULL)));
            }
            cJSON_AddItemToArray(a, row);
        }
    }
    free(s), free(t);
    return o;
}

char *profile_write(const char *device, const ProfilePart *parts, int n, const char *const *notes, int nnotes,
                    const char *made_at, char *err, size_t errlen)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    cJSON_AddStringToObject(root, "format", PROFILE_FORMAT);
    cJSON_AddNumberToObject(root, "version", PROFILE_VERSION);
    cJSON_AddStringToObject(root, "device", device);
    cJSON_AddStringToObject(root, "kernel_model", GPU_MODEL_VERSION);
    cJSON_AddStringToObject(root, "made_at", made_at);
    cJSON_AddStringToObject(root, "made_by", "dlperf systems profile");
    cJSON *na = cJSON_AddArrayToObject(root, "notes");
    for (int i = 0; i < nnotes; i++)
        cJSON_AddItemToArray(na, cJSON_CreateString(notes[i]));
    cJSON *precs = cJSON_AddObjectToObject(root, "precisions");
    int written = 0;
    for (int i = 0; i < n; i++) {
        const GpuGroupFit *g;
        const int ng = dev_ev_groups(parts[i].ev, &g);
        if (ng <= 0)
            continue;
        cJSON *po = cJSON_AddObjectToObject(precs, parts[i].precision);
        cJSON *src = cJSON_AddArrayToObject(po, "sources");
        for (int k = 0; k < parts[i].nsources; k++)
            cJSON_AddItemToArray(src, cJSON_CreateString(parts[i].sources[k]));
        cJSON *ga = cJSON_AddArrayToObject(po, "groups");
        for (int k = 0; k < ng; k++) /* group_json leaves dev_ev_groups' view as it is */
            cJSON_AddItemToArray(ga, group_json(parts[i].ev, &g[k]));
        written++;
    }
    if (written == 0) {
        cJSON_Delete(root);
        snprintf(err, errlen, "%s has no fitted evidence to profile", device);
        return NULL;
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        snprintf(err, errlen, "out of memory");
    return text;
}

static cJSON *parse_checked(const char *json, const char *origin, char *err, size_t errlen)
{
    cJSON *root = cJSON_Parse(json);
    if (!root || !cJSON_IsObject(root)) {
        snprintf(err, errlen, "%s: not a JSON object (a device profile, docs/gpu-pricing.md)", origin);
        cJSON_Delete(root);
        return NULL;
    }
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "version");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "device");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(root, "kernel_model");
    if (!cJSON_IsString(f) || strcmp(f->valuestring, PROFILE_FORMAT) != 0)
        snprintf(err, errlen, "%s: \"format\" must be \"%s\"", origin, PROFILE_FORMAT);
    else if (!cJSON_IsNumber(v) || v->valueint != PROFILE_VERSION)
        snprintf(err, errlen, "%s: \"version\" must be %d", origin, PROFILE_VERSION);
    else if (!cJSON_IsString(d) || !d->valuestring[0] || strlen(d->valuestring) >= 48)
        snprintf(err, errlen, "%s: \"device\" must be a spec sheet's name (1-47 characters)", origin);
    else if (!cJSON_IsString(k) || strcmp(k->valuestring, GPU_MODEL_VERSION) != 0)
        snprintf(err, errlen, "%s: \"kernel_model\" is %s%s%s; this dlperf prices with %s: make the profile again "
                 "(dlperf systems profile)", origin, cJSON_IsString(k) ? "\"" : "", cJSON_IsString(k) ? k->valuestring : "missing",
                 cJSON_IsString(k) ? "\"" : "", GPU_MODEL_VERSION);
    else
        return root;
    cJSON_Delete(root);
    return NULL;
}

int profile_device(const char *json, const char *origin, char name[48], char *err, size_t errlen)
{
    cJSON *root = parse_checked(json, origin, err, errlen);
    if (!root)
        return -1;
    snprintf(name, 48, "%s", cJSON_GetObjectItemCaseSensitive(root, "device")->valuestring);
    cJSON_Delete(root);
    return 0;
}

static bool finite_number(const cJSON *x) { return cJSON_IsNumber(x) && isfinite(x->valuedouble); }

/* One group of the profile into ev: its fit, and its shapes timed by it. */
static int load_group(const cJSON *go, int gi, const char *origin, const char *precision, DeviceEvidence *ev,
                      char *err, size_t errlen)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(go, "group");
    const cJSON *form = cJSON_GetObjectItemCaseSensitive(go, "form");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(go, "params");
    const cJSON *points = cJSON_GetObjectItemCaseSensitive(go, "points");
    const cJSON *fit_err = cJSON_GetObjectItemCaseSensitive(go, "fit_err");
    const cJSON *band = cJSON_GetObjectItemCaseSensitive(go, "band");
    const cJSON *shapes = cJSON_GetObjectItemCaseSensitive(go, "shapes");
    GpuGroupFit f = {.points = 0};
    const char *at = "";
    if (!cJSON_IsString(name) || !name->valuestring[0] || strlen(name->valuestring) >= GPU_GROUP_MAX)
        at = "\"group\" must be a group name (1-47 characters)";
    else if (!cJSON_IsString(form) || gpu_form_parse(form->valuestring, &f.form) != 0)
        at = "\"form\" must be tiles, stream or rows";
    else if (!cJSON_IsObject(params))
        at = "\"params\" must be an object of the form's parameters";
    else if (!finite_number(points) || points->valuedouble < 1)
        at = "\"points\" must be a count of at least 1";
    else if (!finite_number(fit_err) || fit_err->valuedouble < 0 || !finite_number(band) || band->valuedouble < 0)
        at = "\"fit_err\" and \"band\" must be fractions >= 0";
    else if (!cJSON_IsArray(shapes) || cJSON_GetArraySize(shapes) < 1)
        at = "\"shapes\" must be a non-empty array of shapes";
    if (at[0]) {
        snprintf(err, errlen, "%s: precisions.%s.groups[%d]: %s", origin, precision, gi, at);
        return -1;
    }
    snprintf(f.group, sizeof f.group, "%s", name->valuestring);
    for (int k = 0; k < gpu_form_nparams(f.form); k++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(params, gpu_param_name(f.form, k));
        double lo, hi, start;
        gpu_param_bounds(f.form, k, &lo, &hi, &start);
        if (!finite_number(x) || x->valuedouble < lo * (1 - 1e-6) || x->valuedouble > hi * (1 + 1e-6)) {
            snprintf(err, errlen, "%s: precisions.%s.groups[%d] (%s): params.%s must be a number in [%g, %g]", origin,
                     precision, gi, f.group, gpu_param_name(f.form, k), lo, hi);
            return -1;
        }
        f.p[k] = x->valuedouble;
    }
    f.points = points->valueint;
    f.fit_err = fit_err->valuedouble;
    f.band = band->valuedouble;
    int si = 0;
    for (const cJSON *row = shapes->child; row; row = row->next, si++) {
        double v[SHAPE_FIELDS];
        bool ok = cJSON_IsArray(row) && cJSON_GetArraySize(row) == SHAPE_FIELDS;
        int j = 0;
        for (const cJSON *x = ok ? row->child : NULL; x; x = x->next, j++)
            if (!finite_number(x) || x->valuedouble < 0)
                ok = false;
            else
                v[j] = x->valuedouble;
        if (!ok) {
            snprintf(err, errlen, "%s: precisions.%s.groups[%d] (%s): shapes[%d] must be %d numbers >= 0 (b, m, n, k, "
                     "winograd, flops, bytes, rows, row_len)", origin, precision, gi, f.group, si, SHAPE_FIELDS);
            return -1;
        }
        GpuShape s = {.form = f.form, .b = v[0], .m = v[1], .n = v[2], .k = v[3], .winograd = v[4] != 0,
                      .flops = v[5], .bytes = v[6], .rows = v[7], .row_len = v[8]};
        snprintf(s.group, sizeof s.group, "%s", f.group);
        const double t = gpu_model_time(&s, dev_ev_sheet(ev), f.p);
        if (!(t > 0) || !isfinite(t) || dev_ev_add_shape(ev, &s, t) != 0) {
            snprintf(err, errlen, "%s: precisions.%s.groups[%d] (%s): shapes[%d] has no time on %s's sheet", origin,
                     precision, gi, f.group, si, dev_ev_device(ev));
            return -1;
        }
    }
    if (dev_ev_set_fit(ev, &f) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

int profile_load(const char *json, const char *origin, const char *precision, const GpuSheet *h,
                 DeviceEvidence **out, char *err, size_t errlen)
{
    *out = NULL;
    cJSON *root = parse_checked(json, origin, err, errlen);
    if (!root)
        return -1;
    const cJSON *precs = cJSON_GetObjectItemCaseSensitive(root, "precisions");
    if (!cJSON_IsObject(precs)) {
        snprintf(err, errlen, "%s: \"precisions\" must be an object (fp32, tf32, fp16, bf16: each its groups)", origin);
        cJSON_Delete(root);
        return -1;
    }
    const cJSON *po = cJSON_GetObjectItemCaseSensitive(precs, precision);
    if (!po) {
        cJSON_Delete(root);
        return 1;
    }
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(po, "groups");
    if (!cJSON_IsArray(groups) || cJSON_GetArraySize(groups) < 1) {
        snprintf(err, errlen, "%s: precisions.%s.groups must be a non-empty array", origin, precision);
        cJSON_Delete(root);
        return -1;
    }
    DeviceEvidence *ev = dev_ev_new(cJSON_GetObjectItemCaseSensitive(root, "device")->valuestring, h);
    if (!ev) {
        snprintf(err, errlen, "out of memory");
        cJSON_Delete(root);
        return -1;
    }
    int gi = 0;
    for (const cJSON *go = groups->child; go; go = go->next, gi++)
        if (!cJSON_IsObject(go) || load_group(go, gi, origin, precision, ev, err, errlen) != 0) {
            if (!cJSON_IsObject(go))
                snprintf(err, errlen, "%s: precisions.%s.groups[%d] must be an object", origin, precision, gi);
            dev_ev_free(ev);
            cJSON_Delete(root);
            return -1;
        }
    cJSON_Delete(root);
    dev_ev_fit(ev); /* every group already fitted: the streaming share and the index only */
    *out = ev;
    return 0;
}

extern const char *const dlperf_builtin_profile_paths[];
extern const char *const dlperf_builtin_profiles[];
extern const int dlperf_builtin_profile_count;

int profile_builtin_count(void) { return dlperf_builtin_profile_count; }

const char *profile_builtin(int i, const char **path)
{
    if (i < 0 || i >= dlperf_builtin_profile_count)
        return NULL;
    if (path)
        *path = dlperf_builtin_profile_paths[i];
    return dlperf_builtin_profiles[i];
}
