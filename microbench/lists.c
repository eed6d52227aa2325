/* microbench/lists.c — the shapes a calibration measures, per family and mode: the
 * machine's limits (FMA peak, each memory level's bandwidth), GEMM sweeps, DeepBench's
 * GEMM, convolution, RNN and sparse lists (deepbench.c) with seed 004's shapes, a generic
 * CNN's convolution / pooling / batch-norm layers, STREAM, element-wise / loss / optimizer
 * size sweeps, and a transformer's layers (attention's batched GEMMs, linear layers with
 * bias, layer norm, softmax, GELU, binary and tensor-scalar operators): the basis from
 * which the predictor fits its models for shapes it never measured.
 *
 * Modes: quick takes a few shapes of each family and no model ops (half a minute on 2
 * cores); default takes every DeepBench row up to DEFAULT_MAX_GFLOP per kernel (the rest
 * would add ~15 minutes of GEMMs at 150 GFLOP/s) and the full sweeps; full takes
 * DeepBench's complete lists. Seed 004's five DMM shapes are its own benchmark: every mode
 * but quick takes all five.
 *
 * Every list fills out[0..max) and returns how many descriptors it has in total, so a
 * caller may ask for the count first with (NULL, 0).
 */
#include "microbench/mb.h"

/* DeepBench rows above this many forward GFLOP per kernel are measured in full mode only:
 * the default takes 108 of the 160 GEMM rows and the convolution rows up to it. At 250
 * GFLOP (136 rows) the default calibration with the suite's model ops took 15.1 minutes on
 * 2 cores, at 150 (120 rows) 13.8 minutes with warm caches; timing memory-bound ops from cold
 * caches costs about a minute more, so 100. */
#define DEFAULT_MAX_GFLOP 100.0

/* Appends d when there is room; always counts it. */
static void list_push(OpDesc *out, int max, int *n, OpDesc d)
{
    if (out && *n < max)
        out[*n] = d;
    (*n)++;
}

/* ---- machine limits ---- */

int mb_list_peak(MbMode mode, int threads, OpDesc *out, int max)
{
    (void)mode;
    /* 2^27 FMAs per thread: ~3 ms at a core's 100 GFLOP/s, long against the clock and
     * short enough to repeat; one core, then every thread of the calibration */
    const long fma = 1L << 27;
    int n = 0;
    list_push(out, max, &n, op_peak_fma(1, fma));
    if (threads > 1)
        list_push(out, max, &n, op_peak_fma(threads, fma));
    return n;
}

/* Passes so that each thread moves about 32 MiB per execution: several ms even at L1
 * speed, one pass for a DRAM-sized working set. */
static long membw_passes(size_t bytes)
{
    const size_t traffic = (size_t)32 << 20;
    return bytes >= traffic ? 1 : (long)(traffic / bytes);
}

int mb_list_memory(MbMode mode, int threads, const MbCaches *c, OpDesc *out, int max)
{
    const size_t l1 = c->bytes[0] ? c->bytes[0] : (size_t)32 << 10;
    const size_t l2 = c->bytes[1] ? c->bytes[1] : (size_t)1 << 20;
    const size_t l3 = c->bytes[2] ? c->bytes[2] : l2;
    /* The working set per thread that sits in each level when `threads` threads run: half
     * of a private level (the rest holds the code's other lines), half of the thread's
     * share of a shared one, and 4x the last-level cache over all threads for DRAM
     * (STREAM's rule). */
    const int l3_sharers = c->shared_cpus[2] > 1 ? (threads < c->shared_cpus[2] ? threads : c->shared_cpus[2]) : 1;
    const size_t level[4] = {l1 / 2, l2 / 2, l3 / 2 / (size_t)l3_sharers, 4 * l3 / (size_t)threads};
    int n = 0;
    for (int i = 0; i < 4; i++) {
        list_push(out, max, &n, op_membw(MEMBW_READ, threads, level[i], membw_passes(level[i])));
        list_push(out, max, &n, op_membw(MEMBW_TRIAD, threads, level[i], membw_passes(level[i])));
        if (threads > 1) { /* one core alone: what a single-threaded kernel can draw */
            const size_t ws1 = i < 3 ? level[i] : 4 * l3;
            list_push(out, max, &n, op_membw(MEMBW_READ, 1, ws1, membw_passes(ws1)));
        }
    }
    if (mode != MB_QUICK) {
        /* the curve between the levels: every power of two from 4 KiB to 4x the LLC share */
        for (size_t ws = (size_t)4 << 10; ws <= 4 * l3 / (size_t)threads; ws *= 2)
            list_push(out, max, &n, op_membw(MEMBW_READ, threads, ws, membw_passes(ws)));
    }
    /* The handoff curve (data just written, read back; the cache model's reuse curve):
     * from 64 KiB per thread to twice the LLC over all threads (the calibration's flush:
     * beyond it nothing is left), by powers of two, or of four in quick mode. */
    for (size_t ws = (size_t)64 << 10; ws <= 2 * l3 / (size_t)threads; ws *= mode == MB_QUICK ? 4 : 2)
        list_push(out, max, &n, op_membw(MEMBW_HANDOFF, threads, ws, 1));
    /* The cross-core curve: the same, each thread reading the slice its neighbour wrote
     * (coherence traffic between the cores; on a VM, where the host placed the vCPUs).
     * A limit shown by --show; the predictor prices from the handoff curve alone. */
    for (size_t ws = (size_t)64 << 10; threads > 1 && ws <= 2 * l3 / (size_t)threads; ws *= mode == MB_QUICK ? 4 : 2)
        list_push(out, max, &n, op_membw(MEMBW_CROSS, threads, ws, 1));
    /* The retention curve: data just written, read back after a wait with the cores busy in
     * registers (no traffic of this process), for working sets in L2 and in the LLC: how much
     * of its warmth data keeps over the time between its uses in a step. On a dedicated
     * machine all of it; on the 2-vCPU EPYC VM (a standalone test) 1 MiB written by
     * both threads kept 60% after 1 ms and 10% after 5 ms, 12 MiB 93% and 35%: the host's
     * other tenants evict it, which the byte-distance reuse curve does not see. */
    static const long idle_us[] = {0, 250, 500, 1000, 2000, 4000, 8000, 16000};
    static const long quick_idle_us[] = {0, 500, 2000, 8000, 16000};
    const size_t retain_ws[] = {l2 / 2, l3 / 4 / (size_t)threads, l3 / 2 / (size_t)threads};
    const bool quick = mode == MB_QUICK;
    const int nsets = quick ? 2 : 3;
    const int nwaits = quick ? 5 : 8;
    for (int w = 0; w < nsets; w++)
        for (int k = 0; k < nwaits; k++)
            list_push(out, max, &n, op_membw_retain(threads, retain_ws[w], quick ? quick_idle_us[k] : idle_us[k]));
    /* The shared-write curve: every thread rewriting its slice right after both cores read
     * it, the cross curve's working sets (a limit shown by --show; on the 2-vCPU Zen 4 VM,
     * apart, x37 an own write: what an update pays over weights the other core's GEMMs
     * read; the cache model prices it, pred_shared_writes) */
    for (size_t ws = (size_t)64 << 10; threads > 1 && ws <= 2 * l3 / (size_t)threads; ws *= mode == MB_QUICK ? 4 : 2)
        list_push(out, max, &n, op_membw(MEMBW_SHARED, threads, ws, 1));
    return n;
}

/* ---- GEMM sweeps ---- */

int mb_list_gemm_sweep(MbMode mode, OpDesc *out, int max)
{
    /* Squares: 64 ... 4096 in steps of sqrt(2), plus sizes that are not powers of two
     * (100, 1000, 3000; 1536 = 3 * 512) where blocked BLAS kernels leave partial tiles. */
    static const int quick_sq[] = {128, 512, 1024, 2048};
    static const int default_sq[] = {64, 91, 100, 128, 181, 256, 362, 512, 724, 1000, 1024, 1448, 1536, 2048,
                                     2896, 3000, 4096};
    /* A grid over M, N, K (each dimension from skinny to large, in log steps): what the
     * fitted GEMM efficiency model is built from. Transposed operands on a coarser grid. */
    static const int quick_grid[] = {64, 512, 2048};
    static const int default_grid[] = {16, 64, 256, 1024, 4096};
    static const int trans_grid[] = {64, 1024, 4096};
    const bool quick = mode == MB_QUICK;
    const int *sq = quick ? quick_sq : default_sq;
    const int nsq = quick ? 4 : (int)(sizeof default_sq / sizeof *default_sq);
    const int *grid = quick ? quick_grid : default_grid;
    const int ng = quick ? 3 : (int)(sizeof default_grid / sizeof *default_grid);
    int n = 0;
    for (int i = 0; i < nsq; i++)
        list_push(out, max, &n, op_gemm(PHASE_FWD, sq[i], sq[i], sq[i], false, false, 0.0f));
    for (int a = 0; a < ng; a++)
        for (int b = 0; b < ng; b++)
            for (int k = 0; k < ng; k++)
                list_push(out, max, &n, op_gemm(PHASE_FWD, grid[a], grid[b], grid[k], false, false, 0.0f));
    if (!quick)
        for (int t = 1; t <= 2; t++)
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    for (int k = 0; k < 3; k++)
                        list_push(out, max, &n, op_gemm(PHASE_FWD, trans_grid[a], trans_grid[b], trans_grid[k],
                                                        t == 1, t == 2, 0.0f));
    /* A fully connected layer at a small batch (1 to 64): forward (m = batch), backward
     * data (m = batch, B transposed) and backward weights (k = batch, A transposed), each
     * with both layer widths from 1024 to 16384 (the grid stops at 16 and 4096). Such a
     * GEMM streams its large operand whatever the batch (OpenBLAS packs it, and with k
     * small writes C twice for beta = 0), so its time per FLOP grows as the batch shrinks;
     * the fit keeps the efficiency at the edge of what it saw, and from the grid's 16 alone
     * priced VGG's fully connected layers at batch 2-6 at a third of their time and P3B1's
     * 10-row GEMMs 20-40% low. */
    static const int batch_small[] = {1, 2, 4, 8, 16, 32, 64};
    static const int width[] = {1024, 4096, 16384};
    for (int s = 0; !quick && s < (int)(sizeof batch_small / sizeof *batch_small); s++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                const int bs = batch_small[s], w1 = width[a], w2 = width[b];
                if ((long)w1 * w2 > 1L << 26) /* at most 256 MiB of weights */
                    continue;
                list_push(out, max, &n, op_gemm(PHASE_FWD, bs, w1, w2, false, false, 0.0f));
                list_push(out, max, &n, op_gemm(PHASE_FWD, bs, w1, w2, false, true, 0.0f));
                list_push(out, max, &n, op_gemm(PHASE_FWD, w1, w2, bs, true, false, 0.0f));
            }
    return n;
}

/* ---- DeepBench GEMM training set and seed 004's DMM ---- */

/* Quick: eight rows (1-based as in MODELS.md) that cover NN, TN and NT, square-ish, skinny
 * (N = 32, 128) and the very skinny M = 35 speech shape, each <= ~50 GFLOP. */
static const int gemm_quick_rows[] = {2, 5, 24, 41, 46, 64, 87, 139};

bool mb_deepbench_gemm_in(MbMode mode, int i)
{
    if (i < 0 || i >= mb_deepbench_gemm_train_count)
        return false;
    if (mode == MB_QUICK) {
        for (size_t q = 0; q < sizeof gemm_quick_rows / sizeof *gemm_quick_rows; q++)
            if (gemm_quick_rows[q] == i + 1)
                return true;
        return false;
    }
    return mode == MB_FULL || mb_deepbench_gemm_train[i].gflop <= DEFAULT_MAX_GFLOP;
}

static OpDesc gemm_shape_desc(const MbGemmShape *g)
{
    /* DeepBench times alpha = beta = 1 in cuBLAS; beta = 0 here because that is what a
     * training step runs for a first writer, and the FLOP count (2MNK) is the same. */
    return op_gemm(PHASE_FWD, g->m, g->n, g->k, g->ta, g->tb, 0.0f);
}

int mb_list_gemm_deepbench(MbMode mode, OpDesc *out, int max)
{
    int n = 0;
    for (int i = 0; i < mb_deepbench_gemm_train_count; i++)
        if (mb_deepbench_gemm_in(mode, i))
            list_push(out, max, &n, gemm_shape_desc(&mb_deepbench_gemm_train[i]));
    if (mode != MB_QUICK)
        for (int i = 0; i < mb_seed004_dmm_count; i++) {
            const MbGemmShape *g = &mb_seed004_dmm[i];
            bool listed = false; /* four of the five are DeepBench rows too */
            for (int j = 0; j < mb_deepbench_gemm_train_count && !listed; j++) {
                const MbGemmShape *r = &mb_deepbench_gemm_train[j];
                listed = mb_deepbench_gemm_in(mode, j) && r->m == g->m && r->n == g->n && r->k == g->k &&
                         r->ta == g->ta && r->tb == g->tb;
            }
            if (!listed)
                list_push(out, max, &n, gemm_shape_desc(g));
        }
    return n;
}

/* ---- DeepBench convolution training set ---- */

/* Quick: a first layer (C = 1, 5x20 filter, stride 2: no backward-data), a 3x3 and a
 * strided 1x1 (ResNet projection). */
static const int conv_quick_rows[] = {1, 14, 40};

bool mb_deepbench_conv_in(MbMode mode, int i)
{
    if (i < 0 || i >= mb_deepbench_conv_train_count)
        return false;
    if (mode == MB_QUICK) {
        for (size_t q = 0; q < sizeof conv_quick_rows / sizeof *conv_quick_rows; q++)
            if (conv_quick_rows[q] == i + 1)
                return true;
        return false;
    }
    return mode == MB_FULL || mb_deepbench_conv_train[i].gflop <= DEFAULT_MAX_GFLOP;
}

OpDesc mb_conv_shape_desc(const MbConvShape *r, OpPhase phase)
{
    OpDesc d = op_conv2d_explicit(phase, r->n, r->c, r->h, r->w, r->k, r->r, r->s, r->stride_h, r->stride_w,
                                  r->pad_h, r->pad_w, 1);
    /* overwrite, not accumulate: DeepBench calls cuDNN with beta = 0, and a training
     * step's first writer of a gradient overwrites as well */
    d.u.conv.accumulate = false;
    return d;
}

int mb_list_conv_deepbench(MbMode mode, OpDesc *out, int max)
{
    static const OpPhase phases[] = {PHASE_FWD, PHASE_BWD_DATA, PHASE_BWD_WEIGHTS};
    int n = 0;
    for (int i = 0; i < mb_deepbench_conv_train_count; i++) {
        if (!mb_deepbench_conv_in(mode, i))
            continue;
        const MbConvShape *r = &mb_deepbench_conv_train[i];
        for (int p = 0; p < 3; p++) {
            /* DeepBench's result sheets mark backward-data N/A for first layers (C = 1 or
             * 3): no network computes the gradient of its input image. */
            if (phases[p] == PHASE_BWD_DATA && r->c <= 3)
                continue;
            list_push(out, max, &n, mb_conv_shape_desc(r, phases[p]));
        }
    }
    return n;
}

/* ---- DeepBench RNN training set, as per-step ops ---- */

int mb_rnn_step_ops(const MbRnnShape *r, bool backward, OpDesc *out, int max)
{
    static const int gates[] = {[MB_RNN_VANILLA] = 1, [MB_RNN_LSTM] = 4, [MB_RNN_GRU] = 3};
    const int H = r->hidden, N = r->batch, gH = gates[r->cell] * H;
    int n = 0;
    if (!backward) {
        /* pre (N, gH) = h_{t-1} (N, H) R (H, gH): the recurrent part only (DeepBench's
         * CUDNN_SKIP_INPUT) */
        list_push(out, max, &n, op_gemm(PHASE_FWD, N, gH, H, false, false, 0.0f));
        if (r->cell == MB_RNN_VANILLA) { /* h = relu(pre + b) */
            list_push(out, max, &n, op_bias(PHASE_FWD, N, H, 1));
            list_push(out, max, &n, op_act(PHASE_FWD, ACT_RELU, (size_t)N * (size_t)H));
        } else if (r->cell == MB_RNN_LSTM) {
            list_push(out, max, &n, op_lstm_cell(PHASE_FWD, N, H, 1.0f));
        } else {
            list_push(out, max, &n, op_gru_cell(PHASE_FWD, N, H, ACT_RELU));
        }
        return n;
    }
    if (r->cell == MB_RNN_VANILLA)
        list_push(out, max, &n, op_act(PHASE_BWD_DATA, ACT_RELU, (size_t)N * (size_t)H));
    else if (r->cell == MB_RNN_LSTM)
        list_push(out, max, &n, op_lstm_cell(PHASE_BWD_DATA, N, H, 1.0f));
    else
        list_push(out, max, &n, op_gru_cell(PHASE_BWD_DATA, N, H, ACT_RELU));
    /* dh_{t-1} (N, H) (+)= dpre (N, gH) R^T: the GRU's cell already wrote its direct
     * path (z * dh), so its GEMM accumulates */
    list_push(out, max, &n, op_gemm(PHASE_BWD_DATA, N, H, gH, false, true, r->cell == MB_RNN_GRU ? 1.0f : 0.0f));
    /* dR (H, gH) += h_{t-1}^T (H, N) dpre (N, gH), accumulated over the steps */
    list_push(out, max, &n, op_gemm(PHASE_BWD_WEIGHTS, H, gH, N, true, false, 1.0f));
    OpDesc db = op_bias(PHASE_BWD_WEIGHTS, N, gH, 1); /* db (gH) += sum over the batch */
    list_push(out, max, &n, db);
    return n;
}

/* Quick: one row of each cell at a moderate size. */
static const int rnn_quick_rows[] = {1, 26, 49};

bool mb_deepbench_rnn_in(MbMode mode, int i)
{
    if (i < 0 || i >= mb_deepbench_rnn_train_count)
        return false;
    if (mode == MB_QUICK) {
        for (size_t q = 0; q < sizeof rnn_quick_rows / sizeof *rnn_quick_rows; q++)
            if (rnn_quick_rows[q] == i + 1)
                return true;
        return false;
    }
    return true; /* a step of the largest row is 0.3% of the row: every row in default */
}

int mb_list_rnn_deepbench(MbMode mode, OpDesc *out, int max)
{
    int n = 0;
    for (int i = 0; i < mb_deepbench_rnn_train_count; i++) {
        if (!mb_deepbench_rnn_in(mode, i))
            continue;
        for (int b = 0; b <= 1; b++) {
            OpDesc step[8];
            int k = mb_rnn_step_ops(&mb_deepbench_rnn_train[i], b == 1, step, 8);
            for (int j = 0; j < k; j++)
                list_push(out, max, &n, step[j]);
        }
    }
    return n;
}

/* ---- sparse GEMM ---- */

int mb_list_sparse(MbMode mode, OpDesc *out, int max)
{
    int n = 0;
    for (int i = 0; i < mb_seed004_smm_count; i++) {
        const MbSparseShape *s = &mb_seed004_smm[i];
        if (mode != MB_QUICK || s->n <= 2) /* quick: the matrix-vector-like ones */
            list_push(out, max, &n, op_spmm(s->m, s->n, s->k, s->sparsity));
    }
    if (mode != MB_QUICK)
        for (int i = 0; i < mb_deepbench_sparse_count; i++) {
            const MbSparseShape *s = &mb_deepbench_sparse[i];
            list_push(out, max, &n, op_spmm(s->m, s->n, s->k, s->sparsity));
        }
    return n;
}

/* ---- STREAM ---- */

int mb_list_stream(MbMode mode, OpDesc *out, int max)
{
    /* STREAM's rule: each array at least 4x the largest cache, so no kernel runs from
     * cache. Rounded up to a whole MiB of floats. */
    size_t min_count = 4 * mb_llc_bytes() / sizeof(float);
    size_t count = (min_count + (1u << 18) - 1) / (1u << 18) * (1u << 18);
    int nsizes = mode == MB_QUICK ? 1 : 2;
    int n = 0;
    for (int sz = 0; sz < nsizes; sz++)
        for (int k = 0; k < STREAM_COUNT; k++)
            list_push(out, max, &n, op_stream((StreamKind)k, count << sz, 3.0f)); /* q = 3, STREAM's */
    return n;
}

/* ---- a generic CNN's layers: convolution, pooling and normalisation sweeps ---- */

/* The stages of a classification CNN, channels doubling as the feature map halves: the
 * basis of the fitted convolution, pooling and batch-norm models for layers never
 * measured (DeepBench's convolutions are mostly speech layers at batch 4-16). */
static const int cnn_stages[][2] = {{112, 32}, {56, 64}, {28, 128}, {14, 256}, {7, 512}}; /* side, channels */

/* One convolution (TF SAME padding) of `groups` groups in all three phases, gradients
 * overwritten as by a step's first writer; backward-data too: these are inner layers. */
static void conv3_push_groups(OpDesc *out, int max, int *n, int N, int C, int hw, int K, int r, int stride,
                              int groups)
{
    static const OpPhase phases[] = {PHASE_FWD, PHASE_BWD_DATA, PHASE_BWD_WEIGHTS};
    for (int p = 0; p < 3; p++) {
        OpDesc d = op_conv2d(phases[p], N, C, hw, hw, K, r, r, stride, PAD_SAME, groups);
        d.u.conv.accumulate = false;
        list_push(out, max, n, d);
    }
}

static void conv3_push(OpDesc *out, int max, int *n, int N, int C, int hw, int K, int r, int stride)
{
    conv3_push_groups(out, max, n, N, C, hw, K, r, stride, 1);
}

int mb_list_cnn_sweep(MbMode mode, OpDesc *out, int max)
{
    static const int batches[] = {4, 32};
    const bool quick = mode == MB_QUICK;
    int n = 0;
    /* quick: the middle three stages at batch 32 */
    for (int st = quick ? 1 : 0; st < (quick ? 4 : 5); st++) {
        const int hw = cnn_stages[st][0], C = cnn_stages[st][1];
        for (int b = quick ? 1 : 0; b < 2; b++) {
            const int N = batches[b];
            conv3_push(out, max, &n, N, C, hw, C, 3, 1);     /* 3x3, same width */
            conv3_push(out, max, &n, N, C, hw, 4 * C, 1, 1); /* 1x1 expansion (bottleneck) */
            conv3_push(out, max, &n, N, 4 * C, hw, C, 1, 1); /* 1x1 reduction */
            /* depthwise 3x3 (MobileNet's, a group per channel), and grouped 3x3 of 8 groups
             * (ResNeXt's, ShuffleNet's): the groups are a feature of the fitted model, which
             * prices nothing it has no measurement of near (predictor/cost_model.c) */
            conv3_push_groups(out, max, &n, N, C, hw, C, 3, 1, C);
            conv3_push_groups(out, max, &n, N, C, hw, C, 3, 2, C); /* depthwise, stride 2 */
            if (!quick) {
                conv3_push(out, max, &n, N, C, hw, 2 * C, 3, 2); /* 3x3 stride 2: the next stage */
                conv3_push(out, max, &n, N, C / 2, hw, C, 5, 1); /* 5x5 (inception) */
                conv3_push_groups(out, max, &n, N, C, hw, C, 3, 1, 8);
            }
        }
        /* pooling and normalisation at the stage's shape, batch 32 */
        const int N = 32, spatial = hw * hw;
        for (int k = 0; k <= 1; k++)
            for (int w = 2; w <= 3; w++) {
                const PoolKind pk = k ? POOL_AVG : POOL_MAX;
                list_push(out, max, &n, op_pool2d(PHASE_FWD, pk, N, C, hw, hw, w, 2, PAD_SAME));
                OpDesc pb = op_pool2d(PHASE_BWD_DATA, pk, N, C, hw, hw, w, 2, PAD_SAME);
                pb.u.pool.accumulate = false;
                list_push(out, max, &n, pb);
            }
        list_push(out, max, &n, op_batchnorm(PHASE_FWD, N, C, spatial, 1e-3f, 0.99f, true));
        list_push(out, max, &n, op_batchnorm(PHASE_FWD, N, C, spatial, 1e-3f, 0.99f, false));
        OpDesc bw = op_batchnorm(PHASE_BWD_WEIGHTS, N, C, spatial, 1e-3f, 0.99f, true);
        bw.u.bn.accumulate = false;
        list_push(out, max, &n, bw);
        OpDesc bd = op_batchnorm(PHASE_BWD_DATA, N, C, spatial, 1e-3f, 0.99f, true);
        bd.u.bn.accumulate = false;
        list_push(out, max, &n, bd);
        list_push(out, max, &n, op_lrn(PHASE_FWD, N, C, spatial, 5, 1e-4f, 0.75f, 1.0f));
        OpDesc lb = op_lrn(PHASE_BWD_DATA, N, C, spatial, 5, 1e-4f, 0.75f, 1.0f);
        lb.u.lrn.accumulate = false;
        list_push(out, max, &n, lb);
    }
    /* the last stages of a network that downsamples further (MobileNet's 4x4 and 2x2 maps
     * of 512-1024 channels, 8x8 of 256): their depthwise convolutions, whose time is the
     * groups' overhead more than their FLOPs, and batch norms; the fitted model prices no
     * shape far from those it measured */
    static const int late[][2] = {{8, 256}, {4, 512}, {2, 1024}}; /* side, channels */
    for (int l = 0; l < 3; l++) {
        const int N = 32, C = late[l][1], spatial = late[l][0] * late[l][0];
        conv3_push_groups(out, max, &n, N, C, late[l][0], C, 3, 1, C);
        list_push(out, max, &n, op_batchnorm(PHASE_FWD, N, C, spatial, 1e-3f, 0.99f, true));
        OpDesc bw = op_batchnorm(PHASE_BWD_WEIGHTS, N, C, spatial, 1e-3f, 0.99f, true);
        bw.u.bn.accumulate = false;
        list_push(out, max, &n, bw);
        OpDesc bd = op_batchnorm(PHASE_BWD_DATA, N, C, spatial, 1e-3f, 0.99f, true);
        bd.u.bn.accumulate = false;
        list_push(out, max, &n, bd);
    }
    /* a sentence CNN's convolutions (Kim 2014): one channel of word vectors, the filter as
     * wide as the vector, unpadded (ops/conv.c's row path), each followed by a max over
     * time; three (sequence, vector) sizes around the zoo's textcnn (64 x 96), filter
     * heights 2-7 */
    static const int seq_dim[][2] = {{32, 64}, {100, 128}, {50, 300}};
    static const int heights[] = {2, 3, 5, 7};
    for (int sd = quick ? 1 : 0; sd < (quick ? 2 : 3); sd++)
        for (int hi = quick ? 1 : 0; hi < (quick ? 2 : 4); hi++) {
            const int seq = seq_dim[sd][0], dim = seq_dim[sd][1], r = heights[hi];
            for (int p = 0; p < 3; p++) {
                static const OpPhase phases[] = {PHASE_FWD, PHASE_BWD_DATA, PHASE_BWD_WEIGHTS};
                OpDesc d = op_conv2d(phases[p], 32, 1, seq, dim, 100, r, dim, 1, PAD_VALID, 1);
                d.u.conv.accumulate = false;
                list_push(out, max, &n, d);
            }
            /* and its max over time, forward and backward */
            const int steps = seq - r + 1;
            list_push(out, max, &n, op_pool2d_global(PHASE_FWD, POOL_MAX, 32, 100, steps, 1));
            OpDesc pb = op_pool2d_global(PHASE_BWD_DATA, POOL_MAX, 32, 100, steps, 1);
            pb.u.pool.accumulate = false;
            list_push(out, max, &n, pb);
        }
    /* global average pooling of the last stage (ResNet, GoogLeNet; ops/pool.c's planes side
     * by side) */
    list_push(out, max, &n, op_pool2d(PHASE_FWD, POOL_AVG, 32, 512, 7, 7, 7, 1, PAD_VALID));
    OpDesc gb = op_pool2d(PHASE_BWD_DATA, POOL_AVG, 32, 512, 7, 7, 7, 1, PAD_VALID);
    gb.u.pool.accumulate = false;
    list_push(out, max, &n, gb);
    return n;
}

/* ---- element-wise, loss and update sweeps ---- */

/* The memory-bound ops of a training step at one size; the predictor fits time(bytes) per
 * kind from the sweep, from overhead-bound (2^8 floats = 1 KiB) through in-cache to far
 * out of cache (2^26 = 256 MiB). */
static void eltwise_push_size(OpDesc *out, int max, int *n, size_t count)
{
    /* relu, sigmoid and tanh, a separate activation layer and one fused (GELU, never in
     * place, has its own sweep with the transformer's ops) */
    static const ActKind acts[] = {ACT_RELU, ACT_SIGMOID, ACT_TANH};
    for (size_t i = 0; i < sizeof acts / sizeof *acts; i++) {
        const ActKind a = acts[i];
        list_push(out, max, n, op_act(PHASE_FWD, a, count));
        list_push(out, max, n, op_act(PHASE_BWD_DATA, a, count));
        list_push(out, max, n, op_act_in_place(PHASE_FWD, a, count));
        list_push(out, max, n, op_act_in_place(PHASE_BWD_DATA, a, count));
    }
    /* Bias over (n=16, c=64, spatial): spatial is the contiguous run, as in NCHW conv
     * outputs; 2^14 floats gives spatial = 16, 2^26 gives 65536; below 2^10 fewer channels
     * of one value each (a dense layer's bias). */
    const int bn = 16, spatial = count >= 1024 ? (int)(count / 1024) : 1;
    const int bc = (int)(count / (size_t)(bn * spatial));
    list_push(out, max, n, op_bias(PHASE_FWD, bn, bc, spatial));
    OpDesc db = op_bias(PHASE_BWD_WEIGHTS, bn, bc, spatial);
    db.u.bias.accumulate = false; /* a step's first writer overwrites */
    list_push(out, max, n, db);
    /* Learning rates are small so that repeated timed updates keep the weights finite;
     * the other constants are Keras' defaults. */
    list_push(out, max, n, op_sgd(count, 1e-4f));
    list_push(out, max, n, op_rmsprop(count, 1e-4f, 0.9f, 1e-7f));
    list_push(out, max, n, op_momentum(count, 1e-4f, 0.9f, false));
    list_push(out, max, n, op_adam(count, 1e-4f, 0.9f, 0.999f, 1e-7f));
    list_push(out, max, n, op_adamw(count, 1e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, count));
    list_push(out, max, n, op_sumsq(PHASE_UPDATE, count)); /* the clipping norm */
    list_push(out, max, n, op_zero(PHASE_FWD, count));
    list_push(out, max, n, op_copy(PHASE_FWD, count));
    list_push(out, max, n, op_axpby(PHASE_FWD, count, 1.0f, 1.0f));
    list_push(out, max, n, op_dropout(PHASE_FWD, count, 0.5f, 1u));
    list_push(out, max, n, op_dropout(PHASE_BWD_DATA, count, 0.5f, 1u));
}

int mb_list_eltwise(MbMode mode, OpDesc *out, int max)
{
    /* default: every power of 4 from 2^8 to 2^26. quick: one size per level of the memory
     * hierarchy (fork/join overhead, L1, L2, shared L3, DRAM), stopping at 2^24 (64 MiB per
     * buffer, beyond the last-level cache): 2^26 only costs time, since out of cache the
     * time is linear. */
    static const int quick_exp[] = {10, 14, 18, 22, 24};
    static const int classes[] = {10, 1000};
    int n = 0;
    if (mode == MB_QUICK) {
        for (size_t i = 0; i < sizeof quick_exp / sizeof *quick_exp; i++)
            eltwise_push_size(out, max, &n, (size_t)1 << quick_exp[i]);
    } else {
        for (int e = 8; e <= 26; e += 2)
            eltwise_push_size(out, max, &n, (size_t)1 << e);
    }
    for (int b = 32; b <= (mode == MB_QUICK ? 32 : 512); b *= 4)
        for (int c = 0; c < 2; c++) {
            list_push(out, max, &n, op_softmax_xent(PHASE_FWD, b, classes[c]));
            list_push(out, max, &n, op_softmax_xent(PHASE_BWD_DATA, b, classes[c]));
        }
    return n;
}

/* ---- a transformer's layers ---- */

/* A backward op as a step's first writer runs it: gradients overwritten. */
static OpDesc written(OpDesc d)
{
    if (d.kind == OP_LAYERNORM)
        d.u.ln.accumulate = false;
    else if (d.kind == OP_SOFTMAX)
        d.u.softmax.accumulate = false;
    else if (d.kind == OP_BINARY)
        d.u.binary.accumulate = false;
    else if (d.kind == OP_SCALAR)
        d.u.scalar.accumulate = false;
    return d;
}

/* The three BMMs of one attention head group (batch = batch x heads, seq, head_dim): the
 * scores Q K^T (seq, seq, hd; K stored (seq, hd), so tb), the weighted values P V (seq,
 * hd, seq), and the transposed-A product of the backward passes (dK = dS^T Q, dV = P^T dO:
 * (seq, hd, seq), ta); the others of the backward are these shapes again (BmmDesc). Listed
 * as fwd, as the GEMM sweeps are: one kernel in every phase, keyed without one. */
static void attention_push(OpDesc *out, int max, int *n, int batch, int seq, int hd)
{
    list_push(out, max, n, op_bmm(PHASE_FWD, batch, seq, seq, hd, false, true, 0.0f));
    list_push(out, max, n, op_bmm(PHASE_FWD, batch, seq, hd, seq, false, false, 0.0f));
    list_push(out, max, n, op_bmm(PHASE_FWD, batch, seq, hd, seq, true, false, 0.0f));
}

/* The element-wise and row ops at `count` elements of (tokens, hidden): layer norm in its
 * three phases and softmax's two over rows of h; GELU, and every binary and tensor-scalar
 * operator, forward and backward. */
static void transformer_push_size(OpDesc *out, int max, int *n, size_t count, int h, bool quick)
{
    const int rows = (int)(count / (size_t)h);
    list_push(out, max, n, op_layernorm(PHASE_FWD, rows, h, 1e-5f));
    list_push(out, max, n, written(op_layernorm(PHASE_BWD_DATA, rows, h, 1e-5f)));
    list_push(out, max, n, written(op_layernorm(PHASE_BWD_WEIGHTS, rows, h, 1e-5f)));
    list_push(out, max, n, op_act(PHASE_FWD, ACT_GELU, count));
    list_push(out, max, n, op_act(PHASE_BWD_DATA, ACT_GELU, count));
    /* quick: the residual add and the attention scale; the default every operator */
    for (int op = 0; op < BIN_COUNT; op++) {
        if (quick && op != BIN_ADD)
            continue;
        list_push(out, max, n, op_binary(PHASE_FWD, (BinaryKind)op, count));
        list_push(out, max, n, written(op_binary(PHASE_BWD_DATA, (BinaryKind)op, count)));
    }
    for (int op = 0; op < BIN_COUNT; op++) {
        if (quick && op != BIN_MUL)
            continue;
        /* values only (ScalarDesc): attention's scale by 1/sqrt(64), a square, a + 1 */
        const float s = op == BIN_POW ? 2.0f : op == BIN_ADD ? 1.0f : op == BIN_MUL ? 0.125f : 8.0f;
        list_push(out, max, n, op_scalar(PHASE_FWD, (BinaryKind)op, count, s));
        list_push(out, max, n, written(op_scalar(PHASE_BWD_DATA, (BinaryKind)op, count, s)));
    }
}

/* A decoder's attention as its layer runs it (op_attention_bmms): the six strided BMMs
 * over the fused QKV buffer, the causal softmax both ways, at batch x heads x T x hd. */
static void decoder_attention_push(OpDesc *out, int max, int *n, int batch, int heads, int T, int hd)
{
    OpDesc b[ATTN_BMMS];
    op_attention_bmms(batch, heads, T, hd, b);
    for (int i = 0; i < ATTN_BMMS; i++)
        list_push(out, max, n, b[i]);
    list_push(out, max, n, op_softmax_causal(PHASE_FWD, batch * heads * T, T));
    list_push(out, max, n, written(op_softmax_causal(PHASE_BWD_DATA, batch * heads * T, T)));
}

int mb_list_transformer(MbMode mode, OpDesc *out, int max)
{
    const bool quick = mode == MB_QUICK, full = mode == MB_FULL;
    int n = 0;
    /* a GPT-2 decoder's attention (12 heads of 64) at 256 and 1024 tokens, and its
     * positional lookup (wpe) both ways */
    decoder_attention_push(out, max, &n, 1, 12, quick ? 256 : 1024, 64);
    if (!quick) {
        decoder_attention_push(out, max, &n, 4, 12, 256, 64);
        decoder_attention_push(out, max, &n, 1, 16, 1024, 64);
    }
    list_push(out, max, &n, op_embedding_positions(PHASE_FWD, 4 * 1024, 4, 1024, 768));
    OpDesc wpe = op_embedding_positions(PHASE_BWD_WEIGHTS, 4 * 1024, 4, 1024, 768);
    wpe.u.embed.accumulate = false;
    list_push(out, max, &n, wpe);
    /* a language model's loss over its vocabulary (BERT's 30522, GPT-2's 50257) and its
     * optimizer over a hundred million parameters and more, beyond the element-wise sweep's
     * largest (1000 classes, 2^26 elements) */
    static const int vocab[] = {30522, 50257};
    for (int v = 0; !quick && v < 2; v++)
        for (int rows = 512; rows <= 2048; rows *= 4) {
            list_push(out, max, &n, op_softmax_xent(PHASE_FWD, rows, vocab[v]));
            list_push(out, max, &n, op_softmax_xent(PHASE_BWD_DATA, rows, vocab[v]));
        }
    if (!quick) {
        const size_t big = (size_t)1 << 27;
        list_push(out, max, &n, op_adamw(big, 1e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, big));
        list_push(out, max, &n, op_sumsq(PHASE_UPDATE, big));
    }
    /* attention at BERT's head size 64 and an LLM's 128: (batch x heads, seq, head_dim) */
    static const int attn[][3] = {{24, 128, 64}, {96, 128, 64}, {12, 512, 64}, {48, 512, 64},
                                  {32, 256, 128}, {8, 1024, 128}, {16, 2048, 64}};
    const int nattn = quick ? 1 : full ? 7 : 6;
    for (int i = 0; i < nattn; i++)
        attention_push(out, max, &n, attn[i][0], attn[i][1], attn[i][2]);
    /* linear layers with bias (nn.Linear: weights stored (out, in)): the projections
     * (hidden -> hidden), the feed-forward's (hidden -> 4 hidden) and (4 hidden -> hidden)
     * at BERT-base's 768 and BERT-large's 1024, for 128 .. 2048 tokens */
    static const int tokens[] = {128, 512, 2048};
    static const int widths[][2] = {{768, 768}, {768, 3072}, {3072, 768}, {1024, 1024}, {1024, 4096},
                                    {4096, 1024}};
    for (int t = quick ? 1 : 0; t < (quick ? 2 : 3); t++)
        for (int w = 0; w < (quick ? 2 : 6); w++)
            list_push(out, max, &n, op_gemm_bias(PHASE_FWD, tokens[t], widths[w][1], widths[w][0], false, true));
    /* Element-wise and row ops of (tokens, hidden) from 64K to 64M elements (256 KiB to
     * 256 MiB a tensor: in cache to far out of it), hidden 1024; the default every power of
     * 4, full every power of 2, quick one in L2, one beyond the LLC */
    static const int quick_exp[] = {16, 22};
    if (quick) {
        for (size_t i = 0; i < sizeof quick_exp / sizeof *quick_exp; i++)
            transformer_push_size(out, max, &n, (size_t)1 << quick_exp[i], 1024, true);
    } else {
        for (int e = 16; e <= 26; e += full ? 1 : 2)
            transformer_push_size(out, max, &n, (size_t)1 << e, 1024, false);
    }
    /* the row length: layer norm over BERT-base's 768 and an LLM's 4096; softmax over
     * attention rows of 128 .. 2048 (the sequence), 4M elements each */
    const size_t mid = (size_t)1 << 22;
    static const int ln_h[] = {768, 4096};
    for (int i = 0; !quick && i < 2; i++) {
        const int rows = (int)(mid / (size_t)ln_h[i]);
        list_push(out, max, &n, op_layernorm(PHASE_FWD, rows, ln_h[i], 1e-5f));
        list_push(out, max, &n, written(op_layernorm(PHASE_BWD_DATA, rows, ln_h[i], 1e-5f)));
        list_push(out, max, &n, written(op_layernorm(PHASE_BWD_WEIGHTS, rows, ln_h[i], 1e-5f)));
    }
    static const int sm_h[] = {128, 512, 2048};
    if (quick) {
        list_push(out, max, &n, op_softmax(PHASE_FWD, 24 * 128, 128));
        list_push(out, max, &n, written(op_softmax(PHASE_BWD_DATA, 24 * 128, 128)));
    } else {
        for (int i = 0; i < 3; i++)
            for (int e = 16; e <= 26; e += full ? 1 : 2) {
                if (i > 0 && (size_t)1 << e != mid) /* other lengths at one size */
                    continue;
                const int rows = (int)(((size_t)1 << e) / (size_t)sm_h[i]);
                list_push(out, max, &n, op_softmax(PHASE_FWD, rows, sm_h[i]));
                list_push(out, max, &n, written(op_softmax(PHASE_BWD_DATA, rows, sm_h[i])));
            }
    }
    return n;
}
