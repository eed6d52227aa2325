/* models/weights.c — saving and loading a plan's named tensors (models/weights.h; the
 * byte layout is in docs/weights-format.md). Saves go to path.tmp, fsync, rename; loads
 * verify the whole file (structure against the model, CRC-32 from zlib) before a second
 * pass copies it into the model's buffers.
 */
#include "models/weights.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

/* Always-on assert (STYLE habit 5): a plan whose tensors point outside their arena is a
 * programmer error and must abort with file:line, never write through a bad pointer. */
#define WTS_ASSERT(cond) ((cond) ? (void)0 : wts_assert_fail(#cond, __FILE__, __LINE__))

static _Noreturn void wts_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

static const unsigned char WTS_MAGIC[8] = {'D', 'L', 'P', 'F', 'W', 'T', 'S', '\0'};

enum { WTS_CHUNK_FLOATS = 1 << 18 }; /* data moves through a 1 MiB buffer */

static size_t name_len(const char *s, size_t cap)
{
    return strnlen(s, cap);
}

static const char *model_name(const Plan *p)
{
    WTS_ASSERT(p && p->model);
    return p->model->name;
}

/* The plan's tensor i: owner layer name, role, and where its floats are. */
static const char *tensor_layer(const Plan *p, int i)
{
    const PlanParam *pp = &p->params[i];
    WTS_ASSERT(pp->layer >= 0 && pp->layer < p->nlayers);
    return p->layers[pp->layer].name;
}

static char *tensor_data(const Plan *p, int i, const void *params_base, const void *state_base)
{
    const PlanParam *pp = &p->params[i];
    WTS_ASSERT(pp->ref.arena == ARENA_PARAM || pp->ref.arena == ARENA_STATE);
    WTS_ASSERT(pp->ref.bytes >= pp->count * sizeof(float));
    const void *base = pp->ref.arena == ARENA_PARAM ? params_base : state_base;
    WTS_ASSERT(base != NULL || pp->count == 0);
    return (char *)base + pp->ref.offset;
}

uint64_t weights_file_bytes(const Plan *p)
{
    uint64_t b = sizeof WTS_MAGIC + 4 + 4 + name_len(model_name(p), MODEL_NAME_MAX) + 4;
    for (int i = 0; i < p->nparams; i++) {
        const PlanParam *pp = &p->params[i];
        b += 4 + name_len(tensor_layer(p, i), LAYER_NAME_MAX) + 4 + name_len(pp->role, sizeof pp->role) + 8 +
             4 * (uint64_t)pp->count;
    }
    return b + 4;
}

static void put_u32(unsigned char *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t get_u64(const unsigned char *b)
{
    return (uint64_t)get_u32(b) | (uint64_t)get_u32(b + 4) << 32;
}

/* ---- save ---- */

typedef struct {
    FILE *f;
    const char *path; /* the .tmp being written, for messages */
    uLong crc;
    bool failed;
    int errno_at_failure;
} WtsWriter;

static void w_bytes(WtsWriter *w, const void *data, size_t len)
{
    if (w->failed || len == 0)
        return;
    w->crc = crc32_z(w->crc, data, len);
    if (fwrite(data, 1, len, w->f) != len) {
        w->failed = true;
        w->errno_at_failure = errno;
    }
}

static void w_u32(WtsWriter *w, uint32_t v)
{
    unsigned char b[4];
    put_u32(b, v);
    w_bytes(w, b, 4);
}

static void w_str(WtsWriter *w, const char *s, size_t len)
{
    WTS_ASSERT(len <= WEIGHTS_NAME_MAX);
    w_u32(w, (uint32_t)len);
    w_bytes(w, s, len);
}

/* count floats as little-endian float32, through buf (the bytes go out the same on any host). */
static void w_floats(WtsWriter *w, const float *x, size_t count, unsigned char *buf)
{
    for (size_t done = 0; done < count && !w->failed;) {
        size_t k = count - done < WTS_CHUNK_FLOATS ? count - done : WTS_CHUNK_FLOATS;
        for (size_t i = 0; i < k; i++) {
            uint32_t u;
            memcpy(&u, &x[done + i], 4);
            put_u32(buf + 4 * i, u);
        }
        w_bytes(w, buf, 4 * k);
        done += k;
    }
}

int weights_save(const char *path, const Plan *p, const void *params_base, const void *state_base,
                 char *err, size_t errlen)
{
    int rc = -1;
    char *tmp = NULL;
    unsigned char *buf = NULL;
    WtsWriter w = {.crc = crc32_z(0L, Z_NULL, 0)};
    bool created = false;

    /* Every tensor's source is checked (assert) before path.tmp is created. */
    for (int i = 0; i < p->nparams; i++)
        (void)tensor_data(p, i, params_base, state_base);
    size_t plen = strlen(path);
    tmp = malloc(plen + 5);
    buf = malloc(4 * (size_t)WTS_CHUNK_FLOATS);
    if (!tmp || !buf) {
        snprintf(err, errlen, "%s: out of memory preparing the write", path);
        goto cleanup;
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    w.path = tmp;
    w.f = fopen(tmp, "wb");
    if (!w.f) {
        snprintf(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
        goto cleanup;
    }
    created = true;

    w_bytes(&w, WTS_MAGIC, sizeof WTS_MAGIC);
    w_u32(&w, WEIGHTS_FORMAT_VERSION);
    const char *mname = model_name(p);
    w_str(&w, mname, name_len(mname, MODEL_NAME_MAX));
    WTS_ASSERT(p->nparams >= 0);
    w_u32(&w, (uint32_t)p->nparams);
    for (int i = 0; i < p->nparams; i++) {
        const PlanParam *pp = &p->params[i];
        const char *layer = tensor_layer(p, i);
        const float *x = (const float *)tensor_data(p, i, params_base, state_base);
        unsigned char cnt[8];
        put_u32(cnt, (uint32_t)pp->count);
        put_u32(cnt + 4, (uint32_t)((uint64_t)pp->count >> 32));
        w_str(&w, layer, name_len(layer, LAYER_NAME_MAX));
        w_str(&w, pp->role, name_len(pp->role, sizeof pp->role));
        w_bytes(&w, cnt, 8);
        w_floats(&w, x, pp->count, buf);
    }
    unsigned char crc[4];
    put_u32(crc, (uint32_t)w.crc);
    w_bytes(&w, crc, 4); /* (updates w.crc too, which is no longer used) */
    if (!w.failed && fflush(w.f) != 0) {
        w.failed = true;
        w.errno_at_failure = errno;
    }
    /* On disk before the rename makes it visible: otherwise a power cut after the rename
     * could leave an empty or partial file under the real name. */
    if (!w.failed && fsync(fileno(w.f)) != 0) {
        w.failed = true;
        w.errno_at_failure = errno;
    }
    int closed = fclose(w.f);
    w.f = NULL;
    if (!w.failed && closed != 0) {
        w.failed = true;
        w.errno_at_failure = errno;
    }
    if (w.failed) {
        snprintf(err, errlen, "%s: cannot write: %s", tmp, strerror(w.errno_at_failure));
        goto cleanup;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: cannot rename %s to it: %s", path, tmp, strerror(errno));
        goto cleanup;
    }
    created = false; /* it is the real file now */
    rc = 0;
cleanup:
    if (w.f)
        fclose(w.f);
    if (created)
        remove(tmp);
    free(tmp);
    free(buf);
    return rc;
}

/* ---- load ---- */

typedef struct {
    FILE *f;
    const char *path;
    const Plan *p;
    uint64_t size;     /* of the file */
    uint64_t pos;      /* bytes consumed */
    uLong crc;         /* of the bytes consumed */
    unsigned char *buf;
    bool eof;          /* ran out of bytes */
    bool io_error;
    char *err;
    size_t errlen;
} WtsReader;

/* Reads len bytes into out (or only through the CRC when out is NULL). Returns false at
 * the end of the file or on a read error (r->eof / r->io_error say which). */
static bool r_bytes(WtsReader *r, void *out, size_t len)
{
    unsigned char *o = out;
    while (len > 0) {
        size_t k = len < 4 * (size_t)WTS_CHUNK_FLOATS ? len : 4 * (size_t)WTS_CHUNK_FLOATS;
        unsigned char *dst = o ? o : r->buf;
        size_t got = fread(dst, 1, k, r->f);
        r->crc = crc32_z(r->crc, dst, got);
        r->pos += got;
        if (got < k) {
            if (ferror(r->f)) {
                r->io_error = true;
                snprintf(r->err, r->errlen, "%s: cannot read: %s", r->path, strerror(errno));
            } else {
                r->eof = true;
            }
            return false;
        }
        len -= k;
        if (o)
            o += k;
    }
    return true;
}

static bool r_u32(WtsReader *r, uint32_t *v)
{
    unsigned char b[4];
    if (!r_bytes(r, b, 4))
        return false;
    *v = get_u32(b);
    return true;
}

/* A length-prefixed name into out[WEIGHTS_NAME_MAX + 1]. A length over the maximum is
 * corruption: reported at once (sets err, returns false with neither eof nor io_error). */
static bool r_str(WtsReader *r, const char *what, char *out)
{
    uint32_t len;
    if (!r_u32(r, &len))
        return false;
    if (len > WEIGHTS_NAME_MAX) {
        snprintf(r->err, r->errlen, "%s: corrupted: %s of %u bytes at byte %llu (at most %d)", r->path, what,
                 (unsigned)len, (unsigned long long)(r->pos - 4), WEIGHTS_NAME_MAX);
        return false;
    }
    if (!r_bytes(r, out, len))
        return false;
    out[len] = '\0';
    return true;
}

/* Reads count float32 values into dst (native floats), or only through the CRC if NULL. */
static bool r_floats(WtsReader *r, float *dst, uint64_t count)
{
    if (!dst)
        return r_bytes(r, NULL, 4 * count); /* 4 * count fits: count <= the model's */
    for (uint64_t done = 0; done < count;) {
        size_t k = count - done < WTS_CHUNK_FLOATS ? (size_t)(count - done) : WTS_CHUNK_FLOATS;
        if (!r_bytes(r, r->buf, 4 * k))
            return false;
        for (size_t i = 0; i < k; i++) {
            uint32_t u = get_u32(r->buf + 4 * i);
            memcpy(&dst[done + i], &u, 4);
        }
        done += k;
    }
    return true;
}

/* A name from the file as it may appear in a message: non-printable bytes become '?'. */
static const char *shown(char *out, const char *s)
{
    size_t i = 0;
    for (; s[i] && i < WEIGHTS_NAME_MAX; i++)
        out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    out[i] = '\0';
    return out;
}

/* One pass over the file. With params_base == state_base == NULL it only verifies: the
 * structure against the plan and the CRC, reading every byte. Otherwise (after a verify
 * pass succeeded, so the file is known to match) it copies each tensor into place.
 *
 * The file describes itself (lengths, counts), so the walk follows the file and notes the
 * first difference from the plan without stopping: a file that walks to a good CRC is
 * reported as another model's, one whose CRC fails as corrupted (a flipped bit in a name
 * is corruption, not another model), one that ends early as truncated when it is shorter
 * than this model's file and as corrupted when it is not. Returns 0 or -1 with err set. */
static int weights_pass(WtsReader *r, void *params_base, void *state_base)
{
    const Plan *p = r->p;
    bool copy = params_base || state_base;
    const char *mname = model_name(p);
    char mismatch[1024] = ""; /* the first difference from the plan; reported after the CRC */
    char name[WEIGHTS_NAME_MAX + 1], role[WEIGHTS_NAME_MAX + 1];
    char show1[WEIGHTS_NAME_MAX + 1], show2[WEIGHTS_NAME_MAX + 1];
    unsigned char magic[sizeof WTS_MAGIC];
    uint32_t version, ntensors;

    r->pos = 0;
    r->crc = crc32_z(0L, Z_NULL, 0);
    r->eof = r->io_error = false;
    rewind(r->f);

    if (!r_bytes(r, magic, sizeof magic) || memcmp(magic, WTS_MAGIC, sizeof magic) != 0) {
        if (!r->io_error)
            snprintf(r->err, r->errlen, "%s: not a dlperf weights file (no DLPFWTS magic at its start)", r->path);
        return -1;
    }
    if (!r_u32(r, &version))
        goto short_read;
    if (version == 0 || version > WEIGHTS_FORMAT_VERSION) {
        snprintf(r->err, r->errlen, "%s: weights format version %u; this dlperf reads version 1..%d%s", r->path,
                 (unsigned)version, WEIGHTS_FORMAT_VERSION,
                 version > WEIGHTS_FORMAT_VERSION ? " (written by a newer dlperf)" : "");
        return -1;
    }
    if (!r_str(r, "model name", name))
        goto short_read;
    if (strncmp(name, mname, MODEL_NAME_MAX) != 0)
        snprintf(mismatch, sizeof mismatch, "weights of '%s', model is '%s'", shown(show1, name), mname);
    if (!r_u32(r, &ntensors))
        goto short_read;
    if (!mismatch[0] && ntensors != (uint32_t)p->nparams)
        snprintf(mismatch, sizeof mismatch, "%u tensors in the file, model '%s' has %d", (unsigned)ntensors, mname,
                 p->nparams);

    for (uint32_t i = 0; i < ntensors; i++) {
        unsigned char cnt[8];
        if (!r_str(r, "layer name", name) || !r_str(r, "role", role) || !r_bytes(r, cnt, 8))
            goto short_read;
        uint64_t count = get_u64(cnt);
        const PlanParam *pp = i < (uint32_t)p->nparams ? &p->params[i] : NULL;
        if (!mismatch[0] && pp) {
            const char *layer = tensor_layer(p, (int)i);
            if (strncmp(name, layer, LAYER_NAME_MAX) != 0 || strncmp(role, pp->role, sizeof pp->role) != 0)
                snprintf(mismatch, sizeof mismatch, "tensor %u: file has '%s/%s', model has '%.*s/%.*s'",
                         (unsigned)i + 1, shown(show1, name), shown(show2, role), (int)LAYER_NAME_MAX, layer,
                         (int)sizeof pp->role, pp->role);
            else if (count != pp->count)
                snprintf(mismatch, sizeof mismatch, "tensor %u '%s/%s': file has %llu values, model needs %zu",
                         (unsigned)i + 1, name, role, (unsigned long long)count, pp->count);
        }
        /* Past a mismatch the count is the file's own: never try to read past its end. */
        if (mismatch[0] && count > (r->size - r->pos) / 4) {
            r->eof = true;
            goto short_read;
        }
        float *dst = copy ? (float *)tensor_data(p, (int)i, params_base, state_base) : NULL;
        if (!r_floats(r, dst, count))
            goto short_read;
    }
    uLong computed = r->crc;
    uint32_t stored;
    if (!r_u32(r, &stored))
        goto short_read;
    if (stored != (uint32_t)computed) {
        snprintf(r->err, r->errlen, "%s: corrupted: CRC-32 of the contents is %08lx, the file says %08x", r->path,
                 (unsigned long)computed, (unsigned)stored);
        return -1;
    }
    if (mismatch[0]) {
        snprintf(r->err, r->errlen, "%s: %s", r->path, mismatch);
        return -1;
    }
    if (r->pos != r->size) {
        snprintf(r->err, r->errlen, "%s: %llu bytes, a weights file of model '%s' has %llu: data after the checksum",
                 r->path, (unsigned long long)r->size, mname, (unsigned long long)r->pos);
        return -1;
    }
    return 0;

short_read:
    if (r->io_error || !r->eof)
        return -1; /* already reported: a read error, or a name length over the maximum */
    uint64_t want = weights_file_bytes(p);
    if (r->size >= want)
        snprintf(r->err, r->errlen, "%s: corrupted: its contents run past its end (%llu bytes)", r->path,
                 (unsigned long long)r->size);
    else if (mismatch[0])
        snprintf(r->err, r->errlen, "%s: %s (and the file ends early, at byte %llu)", r->path, mismatch,
                 (unsigned long long)r->size);
    else
        snprintf(r->err, r->errlen, "%s: truncated: %llu bytes, a weights file of model '%s' has %llu", r->path,
                 (unsigned long long)r->size, mname, (unsigned long long)want);
    return -1;
}

int weights_load(const char *path, const Plan *p, void *params_base, void *state_base, char *err,
                 size_t errlen)
{
    int rc = -1;
    WtsReader r = {.path = path, .p = p, .err = err, .errlen = errlen};
    struct stat st;

    /* Every tensor's destination is checked (assert) before anything is read. */
    for (int i = 0; i < p->nparams; i++)
        (void)tensor_data(p, i, params_base, state_base);
    r.buf = malloc(4 * (size_t)WTS_CHUNK_FLOATS);
    if (!r.buf) {
        snprintf(err, errlen, "%s: out of memory preparing the read", path);
        goto cleanup;
    }
    r.f = fopen(path, "rb");
    if (!r.f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        goto cleanup;
    }
    if (fstat(fileno(r.f), &st) != 0) {
        snprintf(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
        goto cleanup;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file; need a dlperf weights file", path);
        goto cleanup;
    }
    r.size = (uint64_t)st.st_size;
    if (weights_pass(&r, NULL, NULL) != 0)
        goto cleanup;
    uLong verified = r.crc;
    if (p->nparams > 0 && (weights_pass(&r, params_base, state_base) != 0 || r.crc != verified)) {
        snprintf(err, errlen, "%s: changed while being loaded; the model's tensors are now partly from it", path);
        goto cleanup;
    }
    rc = 0;
cleanup:
    if (r.f)
        fclose(r.f);
    free(r.buf);
    return rc;
}
