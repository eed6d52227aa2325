/* fuzz/fuzz_idx.c — IDX image and label files (models/dataset.h dataset_load_idx), plain or
 * gzip. Input: a big-endian u32 L, then L bytes of the image file (fewer if the input ends),
 * then the label file. Both are written to files in the process's scratch directory, loaded
 * and freed. Seeds: small valid pairs, plain and gzip, written by FUZZ_WRITE_SEEDS. */
#include "fuzz/fuzz_util.h"

#include <zlib.h>

#include "models/dataset.h"

static char images[4200], labels[4200];

/* bytes in a gzip member (malloc'd, *n its length) */
static unsigned char *gzip_bytes(const unsigned char *in, size_t len, size_t *n)
{
    z_stream z = {0};
    FUZZ_CHECK(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2");
    size_t cap = deflateBound(&z, (uLong)len);
    unsigned char *out = malloc(cap);
    FUZZ_CHECK(out != NULL, "out of memory");
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
    *n = z.total_out;
    deflateEnd(&z);
    return out;
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8),
    p[3] = (unsigned char)v;
}

/* one seed: [L][images][labels], each part gzipped or not */
static void seed_pair(const char *dir, const char *name, int n, int rows, int cols, bool gz_images, bool gz_labels)
{
    unsigned char img[16 + 4096], lab[8 + 256];
    size_t ni = 16 + (size_t)n * rows * cols, nl = 8 + (size_t)n;
    memcpy(img, "\0\0\x08\x03", 4);
    put_be32(img + 4, (uint32_t)n), put_be32(img + 8, (uint32_t)rows), put_be32(img + 12, (uint32_t)cols);
    for (size_t i = 16; i < ni; i++)
        img[i] = (unsigned char)(i * 37 % 256);
    memcpy(lab, "\0\0\x08\x01", 4);
    put_be32(lab + 4, (uint32_t)n);
    for (int i = 0; i < n; i++)
        lab[8 + i] = (unsigned char)(i % 10);
    size_t zi = ni, zl = nl;
    unsigned char *pi = gz_images ? gzip_bytes(img, ni, &zi) : img;
    unsigned char *pl = gz_labels ? gzip_bytes(lab, nl, &zl) : lab;
    unsigned char *all = malloc(4 + zi + zl);
    FUZZ_CHECK(all != NULL, "out of memory");
    put_be32(all, (uint32_t)zi);
    memcpy(all + 4, pi, zi);
    memcpy(all + 4 + zi, pl, zl);
    fuzz_seed(dir, name, all, 4 + zi + zl);
    free(all);
    if (pi != img)
        free(pi);
    if (pl != lab)
        free(pl);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *dir = fuzz_seed_dir();
    if (dir) {
        seed_pair(dir, "plain-3x4x5", 3, 4, 5, false, false);
        seed_pair(dir, "gzip-3x4x5", 3, 4, 5, true, true);
        seed_pair(dir, "mixed-2x3x3", 2, 3, 3, true, false);
        seed_pair(dir, "plain-10x2x7", 10, 2, 7, false, false);
        exit(0);
    }
    const char *tmp = fuzz_tmpdir();
    fuzz_path(images, sizeof images, tmp, "images-idx3-ubyte");
    fuzz_path(labels, sizeof labels, tmp, "labels-idx1-ubyte");
    return 0;
}

/* The loader allocates the pixels the header announces before it reads them (a gzip stream
 * has no length to check first): a 16-byte file may ask for up to 8 GiB, which malloc
 * refuses with a message or Linux grants lazily. Those allocations are not fuzzed here
 * (libFuzzer counts one over -malloc_limit_mb as a crash): inputs whose header, in the clear
 * or inflated, announces more than PIXELS_MAX pixels are skipped. */
enum { PIXELS_MAX = 1 << 22 };

static bool announces_too_much(const uint8_t *img, size_t n)
{
    unsigned char head[16];
    size_t have = 0;
    if (n >= 2 && img[0] == 0x1f && img[1] == 0x8b) {
        z_stream z = {0};
        FUZZ_CHECK(inflateInit2(&z, 15 + 32) == Z_OK, "inflateInit2");
        z.next_in = (Bytef *)img;
        z.avail_in = (uInt)n;
        z.next_out = head;
        z.avail_out = sizeof head;
        inflate(&z, Z_SYNC_FLUSH);
        have = sizeof head - z.avail_out;
        inflateEnd(&z);
    } else {
        have = n < sizeof head ? n : sizeof head;
        memcpy(head, img, have);
    }
    if (have < sizeof head)
        return false;
    double pixels = 1;
    for (int i = 0; i < 3; i++)
        pixels *= (double)((uint32_t)head[4 + 4 * i] << 24 | (uint32_t)head[5 + 4 * i] << 16 |
                           (uint32_t)head[6 + 4 * i] << 8 | head[7 + 4 * i]);
    return pixels > PIXELS_MAX;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    size_t l = (size_t)data[0] << 24 | (size_t)data[1] << 16 | (size_t)data[2] << 8 | data[3];
    data += 4, size -= 4;
    if (l > size)
        l = size;
    if (announces_too_much(data, l))
        return 0;
    fuzz_write_file(images, data, l);
    fuzz_write_file(labels, data + l, size - l);
    Dataset ds;
    char err[512] = "";
    if (dataset_load_idx(images, labels, &ds, err, sizeof err) == 0) {
        FUZZ_CHECK(ds.n >= 1 && ds.classes >= 1 && ds.classes <= 256, "n %d classes %d", ds.n, ds.classes);
        dataset_free(&ds);
    } else {
        FUZZ_CHECK(err[0], "refused without a message");
    }
    return 0;
}
