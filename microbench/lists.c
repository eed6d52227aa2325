/* microbench/lists.c — the shapes a calibration measures: a square GEMM sweep, DeepBench's
 * training GEMM and convolution kernels (shared/reference/MODELS.md §6.4), STREAM, and an
 * element-wise size sweep from which the predictor fits its bandwidth model.
 *
 * Every list fills out[0..max) and returns how many descriptors it has in total, so a
 * caller may ask for the count first with (NULL, 0).
 */
#include "microbench/mb.h"


/* Appends d when there is room; always counts it. */
static void list_push(OpDesc *out, int max, int *n, OpDesc d)
{
    if (out && *n < max)
        out[*n] = d;
    (*n)++;
}

/* ---- square GEMM sweep ---- */

int mb_list_gemm_square(bool quick, OpDesc *out, int max)
{
    static const int quick_sizes[] = {128, 512, 1024, 2048};
    /* 64 ... 4096 in steps of sqrt(2) (rounded), plus sizes that are not powers of two or
     * their sqrt(2) neighbours (100, 1000, 3000 decimal; 1536 = 3 * 512), where blocked BLAS
     * kernels leave partial tiles: the fitted efficiency model must see both. */
    static const int default_sizes[] = {64,  91,   100,  128,  181,  256,  362,  512,  724,
                                        1000, 1024, 1448, 1536, 2048, 2896, 3000, 4096};
    const int *sizes = quick ? quick_sizes : default_sizes;
    int count = quick ? (int)(sizeof quick_sizes / sizeof *quick_sizes)
                      : (int)(sizeof default_sizes / sizeof *default_sizes);
    int n = 0;
    for (int i = 0; i < count; i++)
        list_push(out, max, &n, op_gemm(PHASE_FWD, sizes[i], sizes[i], sizes[i], false, false, 0.0f));
    return n;
}

/* ---- DeepBench GEMM training set ---- */

/* One row of DeepBench's gemm_problems.h training_set: C(M x N) = op(A)(M x K) op(B)(K x N),
 * 'T' = that operand is transposed. */
typedef struct {
    int m, n, k;
    char op_a, op_b;
} DbGemmRow;

/* Quick: eight rows that cover NN, TN and NT, square-ish, skinny (N = 32, 128) and the
 * very skinny M = 35 speech shape, each <= ~50 GFLOP. Row numbers are MODELS.md §6.4's. */
static const DbGemmRow gemm_quick[] = {
    {1760, 32, 1760, 'N', 'N'},   /* #2:   0.198 GFLOP */
    {1760, 7000, 1760, 'N', 'N'}, /* #5:  43.37  GFLOP */
    {1760, 128, 1760, 'T', 'N'},  /* #24:  0.793 GFLOP */
    {1760, 7133, 1760, 'N', 'T'}, /* #41: 44.19  GFLOP */
    {35, 8457, 1760, 'N', 'N'},   /* #46:  1.042 GFLOP */
    {7680, 128, 2560, 'N', 'N'},  /* #64:  5.033 GFLOP */
    {1024, 700, 512, 'N', 'N'},   /* #87:  0.734 GFLOP */
    {512, 16, 512, 'N', 'T'},     /* #139: 0.0084 GFLOP */
};

/* Default: 42 of the 160 rows, spread over every group of the table (DeepSpeech, speech
 * language models with K = 500000, attention/Transformer-like N = 24000 and 48000), every
 * transpose combination; rows above ~250 GFLOP (up to 2284) are left out so that the
 * default calibration stays within ~15 minutes on two cores (~2300 GFLOP in total here,
 * about 8 executions each). */
static const DbGemmRow gemm_default[] = {
    {1760, 16, 1760, 'N', 'N'},     /* #1:   0.09912 GFLOP */
    {1760, 64, 1760, 'N', 'N'},     /* #3:   0.3965 */
    {1760, 7000, 1760, 'N', 'N'},   /* #5:  43.37 */
    {2048, 128, 2048, 'N', 'N'},    /* #9:   1.074 */
    {2048, 7000, 2048, 'N', 'N'},   /* #10: 58.72 */
    {2560, 7000, 2560, 'N', 'N'},   /* #15: 91.75 */
    {4096, 16, 4096, 'N', 'N'},     /* #16:  0.5369 */
    {4096, 128, 4096, 'N', 'N'},    /* #19:  4.295 */
    {4096, 7000, 4096, 'N', 'N'},   /* #20: 234.9 */
    {1760, 128, 1760, 'T', 'N'},    /* #24:  0.793 */
    {1760, 7000, 1760, 'T', 'N'},   /* #25: 43.37 */
    {2048, 128, 2048, 'T', 'N'},    /* #29:  1.074 */
    {2560, 7000, 2560, 'T', 'N'},   /* #35: 91.75 */
    {1760, 7133, 1760, 'N', 'T'},   /* #41: 44.19 */
    {2048, 7133, 2048, 'N', 'T'},   /* #42: 59.84 */
    {2560, 7133, 2560, 'N', 'T'},   /* #43: 93.49 */
    {5124, 9124, 1760, 'N', 'N'},   /* #45: 164.6 */
    {35, 8457, 1760, 'N', 'N'},     /* #46:  1.042 */
    {35, 8457, 4096, 'N', 'N'},     /* #52:  2.425 */
    {5124, 9124, 1760, 'T', 'N'},   /* #53: 164.6 */
    {7680, 128, 2560, 'N', 'N'},    /* #64:  5.033 */
    {7680, 128, 2560, 'T', 'N'},    /* #68:  5.033 */
    {3072, 128, 1024, 'N', 'N'},    /* #72:  0.8053 */
    {3072, 128, 1024, 'T', 'N'},    /* #76:  0.8053 */
    {3072, 7435, 1024, 'N', 'T'},   /* #77: 46.78 */
    {7680, 5481, 2560, 'N', 'T'},   /* #78: 215.5 */
    {512, 8, 500000, 'N', 'N'},     /* #79:  4.096 */
    {1024, 16, 500000, 'N', 'N'},   /* #82: 16.38 */
    {1024, 16, 500000, 'T', 'N'},   /* #86: 16.38 */
    {1024, 700, 512, 'N', 'N'},     /* #87:  0.734 */
    {3072, 24000, 1024, 'N', 'N'},  /* #93: 151 */
    {3072, 24000, 1024, 'T', 'N'},  /* #103: 151 */
    {8448, 32, 2816, 'N', 'N'},     /* #114: 1.523 */
    {6144, 32, 2048, 'T', 'N'},     /* #118: 0.8053 (K = 2048 since DeepBench d77b9eb) */
    {512, 24000, 2816, 'N', 'N'},   /* #121: 69.21 */
    {1024, 24000, 2048, 'N', 'N'},  /* #126: 100.7 */
    {512, 24000, 1536, 'T', 'N'},   /* #134: 37.75 */
    {512, 16, 512, 'N', 'T'},       /* #139: 0.008389 */
    {512, 48000, 2048, 'N', 'N'},   /* #142: 100.7 */
    {1024, 48000, 1536, 'N', 'N'},  /* #148: 151 */
    {1024, 48000, 1536, 'T', 'N'},  /* #158: 151 */
    {1024, 32, 512, 'N', 'T'},      /* #160: 0.03355 */
};

int mb_list_gemm_deepbench(bool quick, OpDesc *out, int max)
{
    const DbGemmRow *rows = quick ? gemm_quick : gemm_default;
    int count = quick ? (int)(sizeof gemm_quick / sizeof *gemm_quick)
                      : (int)(sizeof gemm_default / sizeof *gemm_default);
    int n = 0;
    for (int i = 0; i < count; i++) {
        const DbGemmRow *r = &rows[i];
        /* DeepBench times alpha = beta = 1 in cuBLAS; beta = 0 here because that is what
         * a training step runs for a first writer, and the FLOP count (2MNK) is the same. */
        list_push(out, max, &n,
                  op_gemm(PHASE_FWD, r->m, r->n, r->k, r->op_a == 'T', r->op_b == 'T', 0.0f));
    }
    return n;
}

/* ---- DeepBench convolution training set ---- */

/* One row of DeepBench's conv_problems.h training_set, in ITS field order (final list
 * state): input W, H, C, batch N, K filters of width S and height R, pad_w, pad_h,
 * stride_w, stride_h. Kept in that order so rows can be compared with the source. */
typedef struct {
    int w, h, c, n, k, s, r, pad_w, pad_h, stride_w, stride_h;
} DbConvRow;

/* Quick: a first layer (C = 1, 20x5 filter, stride 2: no backward-data), a 3x3 and a
 * strided 1x1. Row numbers are MODELS.md §6.4's. */
static const DbConvRow conv_quick[] = {
    {700, 161, 1, 4, 32, 20, 5, 0, 0, 2, 2}, /* #1:  0.69 GFLOP fwd, DeepSpeech layer 1 */
    {54, 54, 64, 8, 64, 3, 3, 1, 1, 1, 1},   /* #14: 1.72 */
    {28, 28, 128, 8, 512, 1, 1, 0, 0, 2, 2}, /* #40: 0.21, ResNet projection */
};

/* Default: thirteen rows over speech (DeepSpeech), face recognition, VGG, GoogLeNet and
 * ResNet layers, including both asymmetric filters and the 1x1-with-pad-3 ResNet row. */
static const DbConvRow conv_default[] = {
    {700, 161, 1, 4, 32, 20, 5, 0, 0, 2, 2},  /* #1:   0.69 GFLOP fwd */
    {341, 79, 32, 4, 32, 10, 5, 0, 0, 2, 2},  /* #5:   2.58 */
    {108, 108, 3, 8, 64, 3, 3, 1, 1, 2, 2},   /* #13:  0.081 */
    {54, 54, 64, 8, 64, 3, 3, 1, 1, 1, 1},    /* #14:  1.72 */
    {112, 112, 64, 8, 128, 3, 3, 1, 1, 1, 1}, /* #19: 14.8 */
    {14, 14, 512, 8, 512, 3, 3, 1, 1, 1, 1},  /* #22:  7.40 */
    {224, 224, 3, 16, 64, 7, 7, 3, 3, 2, 2},  /* #30:  3.78 */
    {28, 28, 192, 16, 32, 5, 5, 2, 2, 1, 1},  /* #31:  3.85 */
    {14, 14, 512, 16, 192, 1, 1, 0, 0, 1, 1}, /* #34:  0.62 */
    {28, 28, 128, 8, 512, 1, 1, 0, 0, 2, 2},  /* #40:  0.21 */
    {7, 7, 2048, 8, 512, 1, 1, 3, 3, 2, 2},   /* #45:  0.82 */
    {350, 80, 64, 16, 64, 3, 3, 1, 1, 1, 1},  /* #56: 33.0 */
    {56, 56, 64, 8, 256, 1, 1, 0, 0, 1, 1},   /* #64:  0.82 */
};

int mb_list_conv_extra(bool quick, OpDesc *out, int max)
{
    const DbConvRow *rows = quick ? conv_quick : conv_default;
    int count = quick ? (int)(sizeof conv_quick / sizeof *conv_quick)
                      : (int)(sizeof conv_default / sizeof *conv_default);
    static const OpPhase phases[] = {PHASE_FWD, PHASE_BWD_DATA, PHASE_BWD_WEIGHTS};
    int n = 0;
    for (int i = 0; i < count; i++) {
        const DbConvRow *r = &rows[i];
        for (int p = 0; p < 3; p++) {
            /* DeepBench's result sheets mark backward-data N/A for first layers (C = 1 or
             * 3): no network computes the gradient of its input image. */
            if (phases[p] == PHASE_BWD_DATA && r->c <= 3)
                continue;
            OpDesc d = op_conv2d_explicit(phases[p], r->n, r->c, r->h, r->w, r->k, r->r, r->s,
                                          r->stride_h, r->stride_w, r->pad_h, r->pad_w, 1);
            /* Overwrite, not accumulate: DeepBench calls cuDNN with beta = 0, and a training
             * step's first writer of a gradient overwrites as well. */
            d.u.conv.accumulate = false;
            list_push(out, max, &n, d);
        }
    }
    return n;
}

/* ---- STREAM ---- */

int mb_list_stream(bool quick, OpDesc *out, int max)
{
    /* STREAM's rule: each array at least 4x the largest cache, so no kernel runs from
     * cache. Rounded up to a whole MiB of floats. */
    size_t min_count = 4 * mb_llc_bytes() / sizeof(float);
    size_t count = (min_count + (1u << 18) - 1) / (1u << 18) * (1u << 18);
    int nsizes = quick ? 1 : 2;
    int n = 0;
    for (int sz = 0; sz < nsizes; sz++)
        for (int k = 0; k < STREAM_COUNT; k++)
            list_push(out, max, &n, op_stream((StreamKind)k, count << sz, 3.0f)); /* q = 3, STREAM's */
    return n;
}

/* ---- element-wise size sweep ---- */

/* The memory-bound ops of a training step at one size; the predictor fits time(bytes) per
 * kind from the sweep, from in-cache (2^14 floats = 64 KiB) to far out of cache (2^26 =
 * 256 MiB). */
static void eltwise_push_size(OpDesc *out, int max, int *n, size_t count)
{
    for (int a = 0; a < ACT_COUNT; a++) {
        list_push(out, max, n, op_act(PHASE_FWD, (ActKind)a, count));
        list_push(out, max, n, op_act(PHASE_BWD_DATA, (ActKind)a, count));
    }
    /* Bias over (n=16, c=64, spatial): spatial is the contiguous run, as in NCHW conv
     * outputs; 2^14 floats gives spatial = 16, 2^26 gives 65536. */
    int bn = 16, bc = 64;
    int spatial = (int)(count / (size_t)(bn * bc));
    list_push(out, max, n, op_bias(PHASE_FWD, bn, bc, spatial));
    OpDesc db = op_bias(PHASE_BWD_WEIGHTS, bn, bc, spatial);
    db.u.bias.accumulate = false; /* a step's first writer overwrites */
    list_push(out, max, n, db);
    /* Learning rates are small so that repeated timed updates keep the weights finite;
     * rho and eps are Keras' RMSprop defaults. */
    list_push(out, max, n, op_sgd(count, 1e-4f));
    list_push(out, max, n, op_rmsprop(count, 1e-4f, 0.9f, 1e-7f));
    list_push(out, max, n, op_zero(PHASE_FWD, count));
    list_push(out, max, n, op_copy(PHASE_FWD, count));
}

int mb_list_eltwise(bool quick, OpDesc *out, int max)
{
    /* default: every power of 4 from 2^14 to 2^26. quick: one size per level of the memory
     * hierarchy (L2, shared L3, DRAM), stopping at 2^24 (64 MiB per buffer, beyond the
     * last-level cache): 2^26 only costs time, since out of cache the time is linear. */
    static const int quick_exp[] = {14, 18, 22, 24};
    int n = 0;
    if (quick) {
        for (size_t i = 0; i < sizeof quick_exp / sizeof *quick_exp; i++)
            eltwise_push_size(out, max, &n, (size_t)1 << quick_exp[i]);
    } else {
        for (int e = 14; e <= 26; e += 2)
            eltwise_push_size(out, max, &n, (size_t)1 << e);
    }
    return n;
}
