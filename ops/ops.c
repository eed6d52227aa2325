/* ops/ops.c — the framework half of the operation API: descriptor constructors and
 * validation, the cost model, buffer tables, op_run dispatch, canonical text keys and the
 * thread/BLAS facts. The arithmetic lives in the kernel files (gemm.c, conv.c, ...).
 */
#include <cblas.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "ops/kernels.h"

_Noreturn void ops_assert_fail(const char *expr, const char *file, int line,
                               const char *detail)
{
    fflush(stdout);
    fprintf(stderr, "%s:%d: ops assertion failed: %s%s%s\n", file, line, expr,
            detail ? ": " : "", detail ? detail : "");
    abort();
}

/* ---------------------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------------------- */

static const char *const KIND_NAMES[OP_KIND_COUNT] = {
    [OP_GEMM] = "gemm",       [OP_CONV2D] = "conv2d",
    [OP_POOL2D] = "pool2d",   [OP_BIAS] = "bias",
    [OP_ACT] = "act",         [OP_SOFTMAX_XENT] = "softmax_xent",
    [OP_SQERR] = "sqerr",     [OP_LSTM_CELL] = "lstm_cell",
    [OP_SGD] = "sgd",         [OP_RMSPROP] = "rmsprop",
    [OP_ZERO] = "zero",       [OP_COPY] = "copy",
    [OP_STREAM] = "stream",
    [OP_BATCHNORM] = "batchnorm", [OP_LRN] = "lrn",
    [OP_DROPOUT] = "dropout", [OP_CHANNEL_COPY] = "channel_copy",
    [OP_AXPBY] = "axpby",     [OP_EMBEDDING] = "embedding",
    [OP_KL_SPARSITY] = "kl_sparsity", [OP_SHRINK] = "shrink",
    [OP_NORM1] = "norm1",     [OP_MOMENTUM] = "momentum",
    [OP_ADAM] = "adam",
    [OP_GRU_CELL] = "gru_cell", [OP_SPMM] = "spmm",
    [OP_PEAK_FMA] = "peak_fma", [OP_MEMBW] = "membw",
    [OP_BMM] = "bmm",         [OP_LAYERNORM] = "layernorm",
    [OP_SOFTMAX] = "softmax", [OP_BINARY] = "binary",
    [OP_SCALAR] = "scalar",
};
static const char *const PHASE_NAMES[PHASE_COUNT] = {"fwd", "bwd_data", "bwd_weights",
                                                     "update"};
static const char *const ACT_NAMES[ACT_COUNT] = {"relu", "sigmoid", "tanh", "gelu"};
static const char *const BINARY_NAMES[BIN_COUNT] = {"add", "mul", "pow", "div"};
static const char *const POOL_NAMES[2] = {"max", "avg"};
static const char *const STREAM_NAMES[STREAM_COUNT] = {"copy", "scale", "add", "triad"};
static const char *const MEMBW_NAMES[MEMBW_COUNT] = {"read", "triad", "handoff", "cross", "retain", "shared"};

const char *op_kind_name(OpKind k)
{
    return (k >= 0 && k < OP_KIND_COUNT) ? KIND_NAMES[k] : "?";
}

const char *op_phase_name(OpPhase p)
{
    return (p >= 0 && p < PHASE_COUNT) ? PHASE_NAMES[p] : "?";
}

const char *op_binary_name(BinaryKind b)
{
    return (b >= 0 && b < BIN_COUNT) ? BINARY_NAMES[b] : "?";
}

const char *op_act_name(ActKind a)
{
    return (a >= 0 && a < ACT_COUNT) ? ACT_NAMES[a] : "?";
}

bool op_kind_from_name(const char *name, OpKind *out)
{
    for (int k = 0; name && k < OP_KIND_COUNT; k++)
        if (strcmp(name, KIND_NAMES[k]) == 0) {
            if (out)
                *out = (OpKind)k;
            return true;
        }
    return false;
}

/* ---------------------------------------------------------------------------------------
 * Validation: one function says what is wrong with a descriptor. Constructors and op_run
 * treat a complaint as a programmer error (abort); op_key_parse treats it as bad input.
 * ------------------------------------------------------------------------------------- */

/* Element counts are bounded far below SIZE_MAX/4 so byte sizes and index products can
 * never wrap, whatever a key string says; 2^40 floats is 4 TiB, beyond any real tensor. */
#define OPS_MAX_ELEMS 1099511627776.0

static bool phase_in(OpPhase p, unsigned mask)
{
    return p >= 0 && p < PHASE_COUNT && (mask & (1u << p));
}
#define PH(p) (1u << (p))

static const char *conv_check(const ConvDesc *c)
{
    if (c->n < 1 || c->c < 1 || c->h < 1 || c->w < 1 || c->k < 1 || c->r < 1 || c->s < 1)
        return "conv2d: n, c, h, w, k, r, s must be >= 1";
    if (c->stride_h < 1 || c->stride_w < 1)
        return "conv2d: strides must be >= 1";
    if (c->pad_top < 0 || c->pad_left < 0 || c->pad_bottom < 0 || c->pad_right < 0)
        return "conv2d: paddings must be >= 0";
    if (c->groups < 1 || c->c % c->groups || c->k % c->groups)
        return "conv2d: groups must divide c and k";
    const double ph = (double)c->h + c->pad_top + c->pad_bottom;
    const double pw = (double)c->w + c->pad_left + c->pad_right;
    if (ph < c->r || pw < c->s || ph > INT_MAX / 2 || pw > INT_MAX / 2)
        return "conv2d: kernel larger than the padded input";
    if (c->out_h != (int)((ph - c->r) / c->stride_h) + 1 ||
        c->out_w != (int)((pw - c->s) / c->stride_w) + 1)
        return "conv2d: out_h/out_w inconsistent with size, kernel, stride and padding";
    const double cg = (double)(c->c / c->groups);
    const double ohw = (double)c->out_h * c->out_w;
    if (cg * c->r * c->s > INT_MAX || ohw > INT_MAX)
        return "conv2d: a GEMM dimension exceeds INT_MAX";
    if ((double)c->n * c->c * c->h * c->w > OPS_MAX_ELEMS ||
        (double)c->n * c->k * ohw > OPS_MAX_ELEMS || cg * c->r * c->s * ohw > OPS_MAX_ELEMS ||
        (double)c->k * cg * c->r * c->s > OPS_MAX_ELEMS)
        return "conv2d: tensor too large";
    return NULL;
}

static const char *pool_check(const PoolDesc *p)
{
    if (p->kind != POOL_MAX && p->kind != POOL_AVG)
        return "pool2d: kind must be max or avg";
    if (p->n < 1 || p->c < 1 || p->h < 1 || p->w < 1 || p->win_h < 1 || p->win_w < 1)
        return "pool2d: n, c, h, w and the window must be >= 1";
    if (p->stride_h < 1 || p->stride_w < 1)
        return "pool2d: strides must be >= 1";
    /* a pad as large as the window would allow windows made of padding only, which have
     * no max and no average */
    if (p->pad_top < 0 || p->pad_left < 0 || p->pad_bottom < 0 || p->pad_right < 0 ||
        p->pad_top >= p->win_h || p->pad_bottom >= p->win_h || p->pad_left >= p->win_w ||
        p->pad_right >= p->win_w)
        return "pool2d: paddings must be in [0, window)";
    const double ph = (double)p->h + p->pad_top + p->pad_bottom;
    const double pw = (double)p->w + p->pad_left + p->pad_right;
    if (ph < p->win_h || pw < p->win_w || ph > INT_MAX / 2 || pw > INT_MAX / 2)
        return "pool2d: window larger than the padded input";
    if (p->out_h != (int)((ph - p->win_h) / p->stride_h) + 1 ||
        p->out_w != (int)((pw - p->win_w) / p->stride_w) + 1)
        return "pool2d: out_h/out_w inconsistent with size, window, stride and padding";
    if ((double)p->n * p->c * p->h * p->w > OPS_MAX_ELEMS || (double)p->n * p->c > INT_MAX)
        return "pool2d: tensor too large";
    return NULL;
}

static const char *count_check(size_t count)
{
    if (count < 1 || (double)count > OPS_MAX_ELEMS)
        return "count must be in [1, 2^40]";
    return NULL;
}

/* (n, c, spatial) shapes of the normalisation layers */
static bool ncs_ok(int n, int c, int spatial)
{
    return n >= 1 && c >= 1 && spatial >= 1 && (double)n * c * spatial <= OPS_MAX_ELEMS;
}

static const char *update_check(const OpDesc *d)
{
    const UpdateDesc *u = &d->u.update;
    if (d->phase != PHASE_UPDATE)
        return "optimizer updates: phase must be update";
    const char *why = count_check(u->count);
    if (why)
        return why;
    if (u->decay_count > u->count)
        return "optimizer updates: decay_count must be <= count";
    if (!isfinite(u->l2))
        return "optimizer updates: l2 must be finite";
    if (u->grad_ranks < 0)
        return "optimizer updates: grad_ranks must be >= 0";
    if (d->kind == OP_ADAM) {
        if (u->step < 1)
            return "adam: step must be >= 1 (Keras counts from 1)";
        if (!(u->beta1 >= 0.0f && u->beta1 < 1.0f && u->beta2 >= 0.0f && u->beta2 < 1.0f))
            return "adam: beta1 and beta2 must be in [0, 1)";
        if (!(u->eps > 0.0f) || !isfinite(u->eps))
            return "adam: eps must be > 0 (zero gradients would give 0/0)";
    }
    return NULL;
}

/* NULL if d is valid (shape and phase), else why not. */
static const char *desc_check(const OpDesc *d)
{
    if (!d || d->kind < 0 || d->kind >= OP_KIND_COUNT)
        return "unknown op kind";
    const unsigned TRAIN = PH(PHASE_FWD) | PH(PHASE_BWD_DATA) | PH(PHASE_BWD_WEIGHTS);
    switch (d->kind) {
    case OP_GEMM: {
        const GemmDesc *g = &d->u.gemm;
        if (!phase_in(d->phase, TRAIN))
            return "gemm: phase must be fwd, bwd_data or bwd_weights";
        if (g->m < 1 || g->n < 1 || g->k < 1)
            return "gemm: m, n, k must be >= 1";
        if ((double)g->m * g->k > OPS_MAX_ELEMS || (double)g->k * g->n > OPS_MAX_ELEMS ||
            (double)g->m * g->n > OPS_MAX_ELEMS)
            return "gemm: matrix too large";
        if (!isfinite(g->alpha) || !isfinite(g->beta))
            return "gemm: alpha and beta must be finite";
        if (g->bias && (g->alpha != 1.0f || g->beta != 0.0f))
            return "gemm: a GEMM with bias has alpha 1 and beta 0 (nn.Linear)";
        return NULL;
    }
    case OP_BMM: {
        const BmmDesc *g = &d->u.bmm;
        if (!phase_in(d->phase, TRAIN))
            return "bmm: phase must be fwd, bwd_data or bwd_weights";
        if (g->batch < 1 || g->m < 1 || g->n < 1 || g->k < 1)
            return "bmm: batch, m, n, k must be >= 1";
        if ((double)g->batch * g->m * g->k > OPS_MAX_ELEMS || (double)g->batch * g->k * g->n > OPS_MAX_ELEMS ||
            (double)g->batch * g->m * g->n > OPS_MAX_ELEMS)
            return "bmm: matrices too large";
        if (!isfinite(g->alpha) || !isfinite(g->beta))
            return "bmm: alpha and beta must be finite";
        return NULL;
    }
    case OP_LAYERNORM: {
        const LayerNormDesc *l = &d->u.ln;
        if (!phase_in(d->phase, TRAIN))
            return "layernorm: phase must be fwd, bwd_data or bwd_weights";
        if (l->n < 1 || l->h < 1 || (double)l->n * l->h > OPS_MAX_ELEMS)
            return "layernorm: n and h must be >= 1 (and the tensor at most 2^40)";
        if (!(l->eps > 0.0f) || !isfinite(l->eps))
            return "layernorm: eps must be finite and > 0";
        return NULL;
    }
    case OP_SOFTMAX: {
        const SoftmaxDesc *m = &d->u.softmax;
        if (!phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
            return "softmax: phase must be fwd or bwd_data";
        if (m->n < 1 || m->h < 1 || (double)m->n * m->h > OPS_MAX_ELEMS)
            return "softmax: n and h must be >= 1 (and the tensor at most 2^40)";
        return NULL;
    }
    case OP_BINARY:
    case OP_SCALAR: {
        const BinaryDesc *b = &d->u.binary;
        if (!phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
            return "binary/scalar: phase must be fwd or bwd_data";
        if (b->op < 0 || b->op >= BIN_COUNT)
            return "binary/scalar: op must be add, mul, pow or div";
        if (d->kind == OP_SCALAR && !isfinite(b->scalar))
            return "scalar: the scalar must be finite";
        return count_check(b->count);
    }
    case OP_CONV2D:
        if (!phase_in(d->phase, TRAIN))
            return "conv2d: phase must be fwd, bwd_data or bwd_weights";
        return conv_check(&d->u.conv);
    case OP_POOL2D:
        if (!phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
            return "pool2d: phase must be fwd or bwd_data (pooling has no weights)";
        return pool_check(&d->u.pool);
    case OP_BIAS: {
        const BiasDesc *b = &d->u.bias;
        if (!phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_WEIGHTS)))
            return "bias: phase must be fwd or bwd_weights (its data gradient is dy itself)";
        if (b->n < 1 || b->c < 1 || b->spatial < 1)
            return "bias: n, c, spatial must be >= 1";
        if ((double)b->n * b->c * b->spatial > OPS_MAX_ELEMS)
            return "bias: tensor too large";
        return NULL;
    }
    case OP_ACT:
        if (!phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
            return "act: phase must be fwd or bwd_data";
        if (d->u.act.act < 0 || d->u.act.act >= ACT_COUNT)
            return "act: unknown activation";
        if (d->u.act.act == ACT_GELU && d->u.act.in_place)
            return "act: GELU is never in place (its backward reads the forward input)";
        return count_check(d->u.act.count);
    case OP_SOFTMAX_XENT:
        if (!phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
            return "softmax_xent: phase must be fwd or bwd_data";
        if (d->u.xent.n < 1 || d->u.xent.classes < 1)
            return "softmax_xent: n and classes must be >= 1";
        if ((double)d->u.xent.n * d->u.xent.classes > OPS_MAX_ELEMS)
            return "softmax_xent: tensor too large";
        return NULL;
    case OP_SQERR:
        if (!phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
            return "sqerr: phase must be fwd or bwd_data";
        if (d->u.sqerr.n < 1 || d->u.sqerr.features < 1)
            return "sqerr: n and features must be >= 1";
        if ((double)d->u.sqerr.n * d->u.sqerr.features > OPS_MAX_ELEMS)
            return "sqerr: tensor too large";
        /* also catches a descriptor built by hand before the field existed (weight 0) */
        if (!(d->u.sqerr.weight > 0.0f) || !isfinite(d->u.sqerr.weight))
            return "sqerr: weight must be finite and > 0";
        return NULL;
    case OP_LSTM_CELL:
        if (!phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
            return "lstm_cell: phase must be fwd or bwd_data (dbias is an OP_BIAS)";
        if (d->u.lstm.batch < 1 || d->u.lstm.hidden < 1)
            return "lstm_cell: batch and hidden must be >= 1";
        if ((double)d->u.lstm.batch * d->u.lstm.hidden * 4 > OPS_MAX_ELEMS ||
            (double)d->u.lstm.hidden * 4 > INT_MAX)
            return "lstm_cell: tensor too large";
        return NULL;
    case OP_SGD:
    case OP_RMSPROP:
    case OP_MOMENTUM:
    case OP_ADAM:
        return update_check(d);
    case OP_ZERO:
    case OP_COPY:
        if (!phase_in(d->phase, 0xFu))
            return "zero/copy: unknown phase";
        return count_check(d->u.mem.count);
    case OP_STREAM:
        if (d->phase != PHASE_FWD)
            return "stream: phase must be fwd";
        if (d->u.mem.kind < 0 || d->u.mem.kind >= STREAM_COUNT)
            return "stream: unknown kernel";
        return count_check(d->u.mem.count);
    case OP_BATCHNORM: {
        const BnDesc *b = &d->u.bn;
        if (!phase_in(d->phase, TRAIN))
            return "batchnorm: phase must be fwd, bwd_data or bwd_weights";
        if (!ncs_ok(b->n, b->c, b->spatial))
            return "batchnorm: n, c, spatial must be >= 1 (and the tensor at most 2^40)";
        if (!(b->eps > 0.0f) || !isfinite(b->eps))
            return "batchnorm: eps must be finite and > 0";
        if (!(b->momentum >= 0.0f && b->momentum <= 1.0f))
            return "batchnorm: momentum must be in [0, 1]";
        if (d->phase != PHASE_FWD && !b->training)
            return "batchnorm: backward phases need training = true (they differentiate "
                   "through the batch statistics)";
        return NULL;
    }
    case OP_LRN: {
        const LrnDesc *l = &d->u.lrn;
        if (!phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
            return "lrn: phase must be fwd or bwd_data";
        if (!ncs_ok(l->n, l->c, l->spatial))
            return "lrn: n, c, spatial must be >= 1 (and the tensor at most 2^40)";
        if (l->size < 1 || l->size > 255 || l->size % 2 == 0)
            return "lrn: size must be odd and in [1, 255] (Caffe: odd local_size)";
        if (!(l->alpha >= 0.0f) || !isfinite(l->alpha) || !isfinite(l->beta))
            return "lrn: alpha must be finite and >= 0, beta finite";
        if (!(l->k >= 1e-30f) || !isfinite(l->k))
            return "lrn: k must be finite and >= 1e-30 (scale >= k is raised to -beta)";
        return NULL;
    }
    case OP_DROPOUT:
        if (!phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
            return "dropout: phase must be fwd or bwd_data";
        if (!(d->u.dropout.rate >= 0.0f && d->u.dropout.rate < 1.0f))
            return "dropout: rate must be in [0, 1)";
        return count_check(d->u.dropout.count);
    case OP_CHANNEL_COPY: {
        const ChannelDesc *c = &d->u.chan;
        if (!phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
            return "channel_copy: phase must be fwd or bwd_data";
        if (c->n < 1 || c->c_dst < 1 || c->c_src < 1 || c->spatial < 1)
            return "channel_copy: n, c_dst, c_src, spatial must be >= 1";
        if (c->offset < 0 || (long)c->offset + c->c_src > c->c_dst)
            return "channel_copy: the slice [offset, offset + c_src) must lie in [0, c_dst)";
        if ((double)c->n * c->c_dst * c->spatial > OPS_MAX_ELEMS)
            return "channel_copy: tensor too large";
        return NULL;
    }
    case OP_AXPBY:
        if (!phase_in(d->phase, 0xFu))
            return "axpby: unknown phase";
        if (!isfinite(d->u.axpby.alpha) || !isfinite(d->u.axpby.beta))
            return "axpby: alpha and beta must be finite";
        return count_check(d->u.axpby.count);
    case OP_EMBEDDING: {
        const EmbedDesc *e = &d->u.embed;
        if (!phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_WEIGHTS)))
            return "embedding: phase must be fwd or bwd_weights (ids have no gradient)";
        if (e->n < 1 || e->vocab < 1 || e->dim < 1)
            return "embedding: n, vocab, dim must be >= 1";
        if ((double)e->n * e->dim > OPS_MAX_ELEMS || (double)e->vocab * e->dim > OPS_MAX_ELEMS)
            return "embedding: tensor too large";
        return NULL;
    }
    case OP_KL_SPARSITY: {
        const KlDesc *k = &d->u.kl;
        if (!phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
            return "kl_sparsity: phase must be fwd or bwd_data";
        if (k->n < 1 || k->units < 1 || (double)k->n * k->units > OPS_MAX_ELEMS)
            return "kl_sparsity: n and units must be >= 1";
        if (!(k->rho > 0.0f && k->rho < 1.0f) || !(k->beta >= 0.0f) || !isfinite(k->beta))
            return "kl_sparsity: rho must be in (0, 1) and beta finite and >= 0";
        return NULL;
    }
    case OP_SHRINK:
        if (!phase_in(d->phase, 0xFu))
            return "shrink: unknown phase";
        if (!(d->u.mem.scalar >= 0.0f) || !isfinite(d->u.mem.scalar))
            return "shrink: the threshold must be finite and >= 0";
        return count_check(d->u.mem.count);
    case OP_NORM1:
        if (!phase_in(d->phase, 0xFu))
            return "norm1: unknown phase";
        return count_check(d->u.mem.count);
    case OP_GRU_CELL: {
        const GruCellDesc *g = &d->u.gru;
        if (!phase_in(d->phase, PH(PHASE_FWD) | PH(PHASE_BWD_DATA)))
            return "gru_cell: phase must be fwd or bwd_data (dbias is an OP_BIAS)";
        if (g->batch < 1 || g->hidden < 1)
            return "gru_cell: batch and hidden must be >= 1";
        if (g->act != ACT_RELU && g->act != ACT_TANH)
            return "gru_cell: act must be relu or tanh";
        if ((double)g->batch * g->hidden * 4 > OPS_MAX_ELEMS || (double)g->hidden * 4 > INT_MAX)
            return "gru_cell: tensor too large";
        return NULL;
    }
    case OP_SPMM: {
        const SpmmDesc *m = &d->u.spmm;
        if (d->phase != PHASE_FWD)
            return "spmm: phase must be fwd";
        if (m->m < 1 || m->n < 1 || m->k < 1)
            return "spmm: m, n, k must be >= 1";
        if (m->nnz_per_row < 1 || m->nnz_per_row > m->k)
            return "spmm: nnz_per_row must be in [1, k]";
        if ((double)m->m * m->nnz_per_row > INT_MAX || (double)m->m * m->n > OPS_MAX_ELEMS ||
            (double)m->k * m->n > OPS_MAX_ELEMS)
            return "spmm: matrix too large (CSR indices are int32)";
        return NULL;
    }
    case OP_PEAK_FMA:
        if (d->phase != PHASE_FWD)
            return "peak_fma: phase must be fwd";
        if (d->u.peak.threads < 1 || d->u.peak.threads > 4096)
            return "peak_fma: threads must be in [1, 4096]";
        if (d->u.peak.fma_per_thread < PEAK_FMA_QUANTUM || d->u.peak.fma_per_thread % PEAK_FMA_QUANTUM != 0)
            return "peak_fma: fma_per_thread must be a positive multiple of PEAK_FMA_QUANTUM";
        return NULL;
    case OP_MEMBW: {
        const MembwDesc *b = &d->u.membw;
        if (d->phase != PHASE_FWD)
            return "membw: phase must be fwd";
        if (b->kind < 0 || b->kind >= MEMBW_COUNT)
            return "membw: unknown kernel";
        if (b->threads < 1 || b->threads > 4096)
            return "membw: threads must be in [1, 4096]";
        if (b->bytes_per_thread < 192 || b->bytes_per_thread % 192 != 0 || b->passes < 1)
            return "membw: bytes_per_thread must be a positive multiple of 192 and passes >= 1";
        if ((b->kind == MEMBW_HANDOFF || b->kind == MEMBW_CROSS || b->kind == MEMBW_RETAIN ||
             b->kind == MEMBW_SHARED) && b->passes != 1)
            return "membw: handoff, cross, retain and shared run once (passes = 1)";
        if (b->kind == MEMBW_RETAIN ? b->idle_us < 0 || b->idle_us > MEMBW_IDLE_MAX_US : b->idle_us != 0)
            return "membw: idle_us must be in [0, 1000000] for retain, 0 for the others";
        if ((b->kind == MEMBW_CROSS || b->kind == MEMBW_SHARED) && b->threads < 2)
            return "membw: cross and shared need another thread's core (threads >= 2)";
        if ((double)b->bytes_per_thread * b->threads / 4 > OPS_MAX_ELEMS)
            return "membw: working set too large";
        return NULL;
    }
    default:
        return "unknown op kind";
    }
}

const char *op_desc_check(const OpDesc *d) { return desc_check(d); }

static void desc_assert_valid(const OpDesc *d, const char *file, int line)
{
    const char *why = desc_check(d);
    if (why)
        ops_assert_fail("descriptor valid", file, line, why);
}
#define DESC_ASSERT_VALID(d) desc_assert_valid((d), __FILE__, __LINE__)

/* ---------------------------------------------------------------------------------------
 * Constructors
 * ------------------------------------------------------------------------------------- */

OpDesc op_gemm(OpPhase phase, int m, int n, int k, bool trans_a, bool trans_b, float beta)
{
    OpDesc d = {.kind = OP_GEMM, .phase = phase};
    d.u.gemm = (GemmDesc){.m = m, .n = n, .k = k, .trans_a = trans_a, .trans_b = trans_b,
                          .alpha = 1.0f, .beta = beta};
    DESC_ASSERT_VALID(&d);
    return d;
}

/* TF padding along one axis: output size and the (before, after) split; the odd pixel
 * of SAME goes after (bottom/right), as tf.nn.conv2d / max_pool do. */
static void tf_pad(PadMode pad, int in, int k, int stride, int *out, int *before, int *after)
{
    OPS_ASSERT(in >= 1 && k >= 1 && stride >= 1);
    OPS_ASSERT(pad == PAD_VALID || pad == PAD_SAME);
    if (pad == PAD_VALID) {
        OPS_ASSERT(in >= k); /* VALID with a kernel larger than the input has no output */
        *out = (in - k + stride) / stride; /* ceil((in - k + 1) / stride) */
        *before = *after = 0;
    } else {
        *out = (in + stride - 1) / stride; /* ceil(in / stride) */
        const long total = (long)(*out - 1) * stride + k - in;
        const int t = total > 0 ? (int)total : 0;
        *before = t / 2;
        *after = t - t / 2;
    }
}

OpDesc op_conv2d(OpPhase phase, int n, int c, int h, int w, int k, int r, int s, int stride,
                 PadMode pad, int groups)
{
    int oh, ow, pt, pb, pl, pr;
    tf_pad(pad, h, r, stride, &oh, &pt, &pb);
    tf_pad(pad, w, s, stride, &ow, &pl, &pr);
    OpDesc d = {.kind = OP_CONV2D, .phase = phase};
    d.u.conv = (ConvDesc){.n = n, .c = c, .h = h, .w = w, .k = k, .r = r, .s = s,
                          .stride_h = stride, .stride_w = stride, .pad_top = pt,
                          .pad_left = pl, .pad_bottom = pb, .pad_right = pr,
                          .groups = groups, .out_h = oh, .out_w = ow,
                          .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d); /* also checks that the floor formula agrees with TF's */
    return d;
}

OpDesc op_conv2d_explicit(OpPhase phase, int n, int c, int h, int w, int k, int r, int s,
                          int stride_h, int stride_w, int pad_h, int pad_w, int groups)
{
    OPS_ASSERT(stride_h >= 1 && stride_w >= 1);
    OpDesc d = {.kind = OP_CONV2D, .phase = phase};
    d.u.conv = (ConvDesc){.n = n, .c = c, .h = h, .w = w, .k = k, .r = r, .s = s,
                          .stride_h = stride_h, .stride_w = stride_w, .pad_top = pad_h,
                          .pad_left = pad_w, .pad_bottom = pad_h, .pad_right = pad_w,
                          .groups = groups,
                          .out_h = (h + 2 * pad_h - r) / stride_h + 1,
                          .out_w = (w + 2 * pad_w - s) / stride_w + 1,
                          .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_pool2d(OpPhase phase, PoolKind kind, int n, int c, int h, int w, int win,
                 int stride, PadMode pad)
{
    int oh, ow, pt, pb, pl, pr;
    tf_pad(pad, h, win, stride, &oh, &pt, &pb);
    tf_pad(pad, w, win, stride, &ow, &pl, &pr);
    OpDesc d = {.kind = OP_POOL2D, .phase = phase};
    d.u.pool = (PoolDesc){.kind = kind, .n = n, .c = c, .h = h, .w = w, .win_h = win,
                          .win_w = win, .stride_h = stride, .stride_w = stride,
                          .pad_top = pt, .pad_left = pl, .pad_bottom = pb, .pad_right = pr,
                          .out_h = oh, .out_w = ow, .accumulate = phase == PHASE_BWD_DATA};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_bias(OpPhase phase, int n, int c, int spatial)
{
    OpDesc d = {.kind = OP_BIAS, .phase = phase};
    d.u.bias = (BiasDesc){.n = n, .c = c, .spatial = spatial,
                          .accumulate = phase == PHASE_BWD_WEIGHTS};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_act(OpPhase phase, ActKind act, size_t count)
{
    OpDesc d = {.kind = OP_ACT, .phase = phase};
    d.u.act = (ActDesc){.act = act, .count = count};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_act_in_place(OpPhase phase, ActKind act, size_t count)
{
    OpDesc d = op_act(phase, act, count);
    d.u.act.in_place = true;
    return d;
}

OpDesc op_softmax_xent(OpPhase phase, int n, int classes)
{
    OpDesc d = {.kind = OP_SOFTMAX_XENT, .phase = phase};
    d.u.xent = (XentDesc){.n = n, .classes = classes, .scale = 1.0f};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_sqerr(OpPhase phase, int n, int features, bool mean)
{
    OpDesc d = {.kind = OP_SQERR, .phase = phase};
    d.u.sqerr = (SqErrDesc){.n = n, .features = features, .mean = mean, .scale = 1.0f,
                            .weight = 1.0f};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_lstm_cell(OpPhase phase, int batch, int hidden, float forget_bias)
{
    OpDesc d = {.kind = OP_LSTM_CELL, .phase = phase};
    d.u.lstm = (LstmCellDesc){.batch = batch, .hidden = hidden, .forget_bias = forget_bias};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_sgd(size_t count, float lr)
{
    OpDesc d = {.kind = OP_SGD, .phase = PHASE_UPDATE};
    d.u.update = (UpdateDesc){.count = count, .lr = lr};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_rmsprop(size_t count, float lr, float rho, float eps)
{
    OpDesc d = {.kind = OP_RMSPROP, .phase = PHASE_UPDATE};
    d.u.update = (UpdateDesc){.count = count, .lr = lr, .rho = rho, .eps = eps};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_zero(OpPhase phase, size_t count)
{
    OpDesc d = {.kind = OP_ZERO, .phase = phase};
    d.u.mem = (MemDesc){.count = count};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_copy(OpPhase phase, size_t count)
{
    OpDesc d = {.kind = OP_COPY, .phase = phase};
    d.u.mem = (MemDesc){.count = count};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_stream(StreamKind kind, size_t count, float scalar)
{
    OpDesc d = {.kind = OP_STREAM, .phase = PHASE_FWD};
    d.u.mem = (MemDesc){.kind = kind, .count = count, .scalar = scalar};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_pool2d_pads(OpPhase phase, PoolKind kind, int n, int c, int h, int w, int win,
                      int stride, int pad_top, int pad_left, int pad_bottom, int pad_right)
{
    OPS_ASSERT(win >= 1 && stride >= 1);
    /* long arithmetic, so that absurd pads fail the check instead of overflowing */
    const long ph = (long)h + pad_top + pad_bottom - win, pw = (long)w + pad_left + pad_right - win;
    OPS_ASSERT(ph >= 0 && pw >= 0 && ph / stride + 1 <= INT_MAX && pw / stride + 1 <= INT_MAX);
    OpDesc d = {.kind = OP_POOL2D, .phase = phase};
    d.u.pool = (PoolDesc){.kind = kind, .n = n, .c = c, .h = h, .w = w, .win_h = win,
                          .win_w = win, .stride_h = stride, .stride_w = stride,
                          .pad_top = pad_top, .pad_left = pad_left, .pad_bottom = pad_bottom,
                          .pad_right = pad_right, .out_h = (int)(ph / stride + 1),
                          .out_w = (int)(pw / stride + 1),
                          .accumulate = phase == PHASE_BWD_DATA};
    DESC_ASSERT_VALID(&d); /* pads in [0, window): no window made of padding only */
    return d;
}

OpDesc op_pool2d_global(OpPhase phase, PoolKind kind, int n, int c, int h, int w)
{
    OpDesc d = op_pool2d_pads(phase, kind, n, c, h, w, 1, 1, 0, 0, 0, 0);
    d.u.pool.win_h = h;
    d.u.pool.win_w = w;
    d.u.pool.out_h = d.u.pool.out_w = 1;
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_momentum(size_t count, float lr, float momentum, bool nesterov)
{
    OpDesc d = {.kind = OP_MOMENTUM, .phase = PHASE_UPDATE};
    d.u.update = (UpdateDesc){.count = count, .lr = lr, .momentum = momentum,
                              .nesterov = nesterov};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_adam(size_t count, float lr, float beta1, float beta2, float eps)
{
    OpDesc d = {.kind = OP_ADAM, .phase = PHASE_UPDATE};
    d.u.update = (UpdateDesc){.count = count, .lr = lr, .beta1 = beta1, .beta2 = beta2,
                              .eps = eps, .step = 1};
    DESC_ASSERT_VALID(&d);
    return d;
}

/* Contract: decay on [0, decay_count) with coefficient l2; l2 == 0 is no decay at all
 * (decay_count 0), so a model without weight decay keys and runs the undecayed update. */
void op_update_set_decay(OpDesc *d, size_t decay_count, float l2)
{
    OPS_ASSERT(d && (d->kind == OP_SGD || d->kind == OP_RMSPROP || d->kind == OP_MOMENTUM ||
                     d->kind == OP_ADAM));
    OPS_ASSERT(decay_count <= d->u.update.count && isfinite(l2));
    d->u.update.decay_count = l2 != 0.0f ? decay_count : 0;
    d->u.update.l2 = l2 != 0.0f ? l2 : 0.0f;
    DESC_ASSERT_VALID(d);
}

OpDesc op_batchnorm(OpPhase phase, int n, int c, int spatial, float eps, float momentum,
                    bool training)
{
    OpDesc d = {.kind = OP_BATCHNORM, .phase = phase};
    d.u.bn = (BnDesc){.n = n, .c = c, .spatial = spatial, .eps = eps, .momentum = momentum,
                      .training = training, .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_lrn(OpPhase phase, int n, int c, int spatial, int size, float alpha, float beta,
              float k)
{
    OpDesc d = {.kind = OP_LRN, .phase = phase};
    d.u.lrn = (LrnDesc){.n = n, .c = c, .spatial = spatial, .size = size, .alpha = alpha,
                        .beta = beta, .k = k, .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_dropout(OpPhase phase, size_t count, float rate, uint32_t seed)
{
    OpDesc d = {.kind = OP_DROPOUT, .phase = phase};
    d.u.dropout = (DropoutDesc){.count = count, .rate = rate, .seed = seed};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_channel_copy(OpPhase phase, int n, int c_dst, int c_src, int offset, int spatial)
{
    OpDesc d = {.kind = OP_CHANNEL_COPY, .phase = phase};
    d.u.chan = (ChannelDesc){.n = n, .c_dst = c_dst, .c_src = c_src, .offset = offset,
                             .spatial = spatial, .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_axpby(OpPhase phase, size_t count, float alpha, float beta)
{
    OpDesc d = {.kind = OP_AXPBY, .phase = phase};
    d.u.axpby = (AxpbyDesc){.count = count, .alpha = alpha, .beta = beta};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_embedding(OpPhase phase, int n, int vocab, int dim)
{
    OpDesc d = {.kind = OP_EMBEDDING, .phase = phase};
    d.u.embed = (EmbedDesc){.n = n, .vocab = vocab, .dim = dim,
                            .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_kl_sparsity(OpPhase phase, int n, int units, float rho, float beta)
{
    OpDesc d = {.kind = OP_KL_SPARSITY, .phase = phase};
    d.u.kl = (KlDesc){.n = n, .units = units, .rho = rho, .beta = beta};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_shrink(OpPhase phase, size_t count, float threshold)
{
    OpDesc d = {.kind = OP_SHRINK, .phase = phase};
    d.u.mem = (MemDesc){.count = count, .scalar = threshold};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_norm1(OpPhase phase, size_t count)
{
    OpDesc d = {.kind = OP_NORM1, .phase = phase};
    d.u.mem = (MemDesc){.count = count};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_gru_cell(OpPhase phase, int batch, int hidden, ActKind act)
{
    OpDesc d = {.kind = OP_GRU_CELL, .phase = phase};
    d.u.gru = (GruCellDesc){.batch = batch, .hidden = hidden, .act = act};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_spmm(int m, int n, int k, double sparsity)
{
    OPS_ASSERT(sparsity >= 0.0 && sparsity < 1.0);
    long nnz = lround((double)k * (1.0 - sparsity));
    OpDesc d = {.kind = OP_SPMM, .phase = PHASE_FWD};
    d.u.spmm = (SpmmDesc){.m = m, .n = n, .k = k, .nnz_per_row = (int)(nnz < 1 ? 1 : nnz)};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_peak_fma(int threads, long fma_per_thread)
{
    OpDesc d = {.kind = OP_PEAK_FMA, .phase = PHASE_FWD};
    long q = (fma_per_thread + PEAK_FMA_QUANTUM - 1) / PEAK_FMA_QUANTUM;
    d.u.peak = (PeakDesc){.threads = threads, .fma_per_thread = (q < 1 ? 1 : q) * PEAK_FMA_QUANTUM};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_membw(MembwKind kind, int threads, size_t bytes_per_thread, long passes)
{
    OpDesc d = {.kind = OP_MEMBW, .phase = PHASE_FWD};
    size_t b = (bytes_per_thread + 191) / 192 * 192;
    d.u.membw = (MembwDesc){.kind = kind, .threads = threads, .bytes_per_thread = b < 192 ? 192 : b,
                            .passes = passes};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_membw_retain(int threads, size_t bytes_per_thread, long idle_us)
{
    OpDesc d = op_membw(MEMBW_RETAIN, threads, bytes_per_thread, 1);
    d.u.membw.idle_us = idle_us;
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_gemm_bias(OpPhase phase, int m, int n, int k, bool trans_a, bool trans_b)
{
    OpDesc d = {.kind = OP_GEMM, .phase = phase};
    d.u.gemm = (GemmDesc){.m = m, .n = n, .k = k, .trans_a = trans_a, .trans_b = trans_b, .alpha = 1.0f,
                          .beta = 0.0f, .bias = true};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_bmm(OpPhase phase, int batch, int m, int n, int k, bool trans_a, bool trans_b, float beta)
{
    OpDesc d = {.kind = OP_BMM, .phase = phase};
    d.u.bmm = (BmmDesc){.batch = batch, .m = m, .n = n, .k = k, .trans_a = trans_a, .trans_b = trans_b,
                        .alpha = 1.0f, .beta = beta};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_layernorm(OpPhase phase, int n, int h, float eps)
{
    OpDesc d = {.kind = OP_LAYERNORM, .phase = phase};
    d.u.ln = (LayerNormDesc){.n = n, .h = h, .eps = eps, .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_softmax(OpPhase phase, int n, int h)
{
    OpDesc d = {.kind = OP_SOFTMAX, .phase = phase};
    d.u.softmax = (SoftmaxDesc){.n = n, .h = h, .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_binary(OpPhase phase, BinaryKind op, size_t count)
{
    OpDesc d = {.kind = OP_BINARY, .phase = phase};
    d.u.binary = (BinaryDesc){.op = op, .count = count, .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

OpDesc op_scalar(OpPhase phase, BinaryKind op, size_t count, float scalar)
{
    OpDesc d = {.kind = OP_SCALAR, .phase = phase};
    d.u.binary = (BinaryDesc){.op = op, .count = count, .scalar = scalar, .accumulate = phase != PHASE_FWD};
    DESC_ASSERT_VALID(&d);
    return d;
}

/* ---------------------------------------------------------------------------------------
 * Cost
 *
 * FLOPs: a multiply-add is 2; for the element-wise ops every add, multiply, divide,
 * compare/select, square root and transcendental (exp, tanh, log) counts 1, per element:
 *   pool    fwd and bwd: win_h*win_w per output (compare or add; padding not subtracted)
 *   bias    fwd and bwd_weights: 1 per element of y / dy
 *   act     fwd relu 1, sigmoid 4 (neg, exp, add, div), tanh 1;
 *           bwd relu 1, sigmoid 3, tanh 3
 *   softmax_xent fwd 5 per logit (max, sub, exp, add, scale); bwd 2 (sub, scale)
 *   sqerr   fwd 3 per element (sub, mul, add); bwd 2 (sub, scale)
 *   lstm_cell fwd 23 per (row, unit) (5 bias adds, 3 sigmoids at 4, 2 tanh, 4 for c and h)
 *             bwd 23 per (row, unit)
 *   sgd 2, rmsprop 9, momentum 4 (nesterov 6), adam 12 per parameter, plus 2 (the
 *           multiply-add g + l2 w) per decayed parameter;
 *   zero, copy 0; STREAM copy 0, scale 1, add 1, triad 2.
 *   batchnorm (per element of x; the per-channel arithmetic is O(c) and ignored)
 *           fwd training 6 (sum, sum of squares as a multiply-add, then subtract the mean
 *           and a multiply-add), fwd inference 3, bwd_weights 4 (sum dy, subtract, multiply-
 *           add), bwd_data 5 (subtract, two multiply-adds), +1 when accumulating
 *   lrn     fwd 2*size + 6 per element (size multiply-adds for the window of squares, 2 for
 *           k + alpha/size * sum, pow as log, multiply, exp: 3, times x: 1);
 *           bwd size + 9 (dy*y/scale 2, size window adds, pow 3, dy*pow 1, the multiply
 *           by 2*alpha*beta/size * x 2, subtract 1), +1 when accumulating
 *   dropout fwd 2 (compare, multiply; the integer hash is not floating point), bwd 1
 *   channel_copy 0 (1 per element when accumulating); axpby 3; embedding fwd 0, bwd 1 per
 *           element of dy; kl_sparsity fwd 1 per element of a (column sums) + 12 per unit
 *           (two logs, divisions), bwd 1 per element + 6 per unit; shrink 3 (abs, subtract,
 *           max); norm1 2 (abs, add).
 *   gru_cell fwd 15 per (row, unit) (3 bias adds, 2 sigmoids at 4, r*hn, act 1, h 3);
 *            bwd 15 (the mirror image)
 *   spmm    2 per nonzero of A per column of B; peak_fma 2 per FMA;
 *   membw   read, handoff and cross 1 per element per pass (the add), triad 2.
 *   gemm with bias: + 1 per element of C (the add); bmm 2 per multiply-add as GEMM
 *   act gelu fwd 8 (x/sqrt2, erf as 4: its polynomial and exp counted as a transcendental
 *           plus 3, the 1+, halving and the product), bwd 12 (erf, exp(-x^2/2), the
 *           products and the sum)
 *   layernorm fwd 7 per element (sum, sum of squares as a multiply-add, subtract, times
 *           rstd, multiply-add with gamma and beta), bwd_data 9 (g = dy*gamma, two sums,
 *           the xhat terms), bwd_weights 4 (dy*xhat as a multiply-add, xhat 2), +1 when
 *           accumulating
 *   softmax fwd 4 (max, subtract, exp, scale), bwd 4 (the dot product as a multiply-add,
 *           subtract, multiply), +1 when accumulating
 *   binary / scalar fwd add, mul, div 1, pow 3 (exp of b log a: log, multiply, exp);
 *           bwd add 0, mul 2, div 5 (dy/b; -dy*a/b^2 4), pow 8 (pow 3, ln 1, 4 products),
 *           scalar bwd add 0, mul 1, div 1, pow 5; +1 per gradient when accumulating
 * Bytes: compulsory traffic, each input read once and each output written once; a buffer
 * that is read and written (INOUT: GEMM C with beta != 0, in-place bias, accumulated
 * gradients, optimizer state, running statistics, the loss a penalty adds to) counts twice.
 * Convolution counts x, w, y once in every phase (the im2col traffic is the
 * implementation's, not the op's); likewise batch norm training counts x once although the
 * kernel reads it twice (statistics, then normalisation; the second read mostly from
 * cache). Channel copy counts the slice it writes and x, not the rest of y. Embedding
 * bwd_weights counts dy, the ids and either all of dW written (overwrite: it is cleared) or
 * the min(n, vocab) rows it reads and writes (accumulate). STREAM counts per its
 * convention: copy/scale 2 arrays, add/triad 3 arrays. SPMM counts the CSR arrays (values,
 * column indices, row pointers), B and C once; peak_fma no bytes; membw every byte of the
 * working set once per pass (read, handoff, cross) or each array once per pass (triad), times the
 * threads.
 * GEMM with bias adds the bias vector; BMM counts each operand once as GEMM does.
 * Layer norm, softmax, binary and scalar count their tensors once, the per-row statistics
 * (mean, rstd) and gamma/beta too; an accumulated gradient twice.
 * ------------------------------------------------------------------------------------- */

OpCost op_cost(const OpDesc *d)
{
    DESC_ASSERT_VALID(d);
    const double F = sizeof(float);
    OpCost c = {0.0, 0.0};
    switch (d->kind) {
    case OP_GEMM: {
        const GemmDesc *g = &d->u.gemm;
        const double m = g->m, n = g->n, k = g->k;
        c.flops = 2.0 * m * n * k;
        c.bytes = F * (m * k + k * n + m * n * (g->beta != 0.0f ? 2.0 : 1.0));
        if (g->bias) {
            c.flops += m * n;
            c.bytes += F * n;
        }
        break;
    }
    case OP_BMM: {
        const BmmDesc *g = &d->u.bmm;
        const double b = g->batch, m = g->m, n = g->n, k = g->k;
        c.flops = 2.0 * b * m * n * k;
        c.bytes = F * b * (m * k + k * n + m * n * (g->beta != 0.0f ? 2.0 : 1.0));
        break;
    }
    case OP_LAYERNORM: {
        const LayerNormDesc *l = &d->u.ln;
        const double e = (double)l->n * l->h, rows = l->n, h = l->h, acc = l->accumulate ? 1.0 : 0.0;
        if (d->phase == PHASE_FWD) { /* x; y; gamma, beta; mean, rstd */
            c.flops = 7.0 * e;
            c.bytes = F * (2.0 * e + 2.0 * h + 2.0 * rows);
        } else if (d->phase == PHASE_BWD_DATA) { /* dy, x, (dx read); dx; gamma; mean, rstd */
            c.flops = (9.0 + acc) * e;
            c.bytes = F * ((3.0 + acc) * e + h + 2.0 * rows);
        } else { /* dy, x; mean, rstd; dgamma, dbeta (read too when accumulating) */
            c.flops = (4.0 + acc) * e;
            c.bytes = F * (2.0 * e + 2.0 * rows + 2.0 * (1.0 + acc) * h);
        }
        break;
    }
    case OP_SOFTMAX: {
        const SoftmaxDesc *m = &d->u.softmax;
        const double e = (double)m->n * m->h, acc = m->accumulate ? 1.0 : 0.0;
        if (d->phase == PHASE_FWD) {
            c.flops = 4.0 * e;
            c.bytes = F * 2.0 * e;
        } else {
            c.flops = (4.0 + acc) * e;
            c.bytes = F * (3.0 + acc) * e;
        }
        break;
    }
    case OP_BINARY:
    case OP_SCALAR: {
        static const double fwd[BIN_COUNT] = {1, 1, 3, 1}, bwd2[BIN_COUNT] = {0, 2, 8, 5},
                            bwd1[BIN_COUNT] = {0, 1, 5, 1};
        const BinaryDesc *b = &d->u.binary;
        const double e = (double)b->count, acc = b->accumulate ? 1.0 : 0.0;
        const bool two = d->kind == OP_BINARY;
        if (d->phase == PHASE_FWD) {
            c.flops = fwd[b->op] * e;
            c.bytes = F * (two ? 3.0 : 2.0) * e;
        } else if (two) { /* dy, a, b; da, db (read too when accumulating) */
            c.flops = (bwd2[b->op] + 2.0 * acc) * e;
            c.bytes = F * (3.0 + 2.0 * (1.0 + acc)) * e;
        } else { /* dy, a; da */
            c.flops = (bwd1[b->op] + acc) * e;
            c.bytes = F * (2.0 + 1.0 + acc) * e;
        }
        break;
    }
    case OP_CONV2D: {
        const ConvDesc *v = &d->u.conv;
        const double x = (double)v->n * v->c * v->h * v->w;
        const double w = (double)v->k * (v->c / v->groups) * v->r * v->s;
        const double y = (double)v->n * v->k * v->out_h * v->out_w;
        c.flops = 2.0 * y * (v->c / v->groups) * v->r * v->s;
        c.bytes = F * (x + w + y);
        break;
    }
    case OP_POOL2D: {
        const PoolDesc *p = &d->u.pool;
        const double x = (double)p->n * p->c * p->h * p->w;
        const double y = (double)p->n * p->c * p->out_h * p->out_w;
        c.flops = y * p->win_h * p->win_w;
        if (d->phase == PHASE_FWD)
            c.bytes = F * (x + y);
        else /* dx (maybe read too), dy, x, and y for max */
            c.bytes = F * (x * (p->accumulate ? 2.0 : 1.0) + y + x +
                           (p->kind == POOL_MAX ? y : 0.0));
        break;
    }
    case OP_BIAS: {
        const BiasDesc *b = &d->u.bias;
        const double y = (double)b->n * b->c * b->spatial;
        c.flops = y;
        if (d->phase == PHASE_FWD)
            c.bytes = F * (2.0 * y + b->c);
        else
            c.bytes = F * (y + b->c * (b->accumulate ? 2.0 : 1.0));
        break;
    }
    case OP_ACT: {
        static const double fwd[ACT_COUNT] = {1, 4, 1, 8}, bwd[ACT_COUNT] = {1, 3, 3, 12};
        const double n = (double)d->u.act.count;
        if (d->phase == PHASE_FWD) {
            c.flops = fwd[d->u.act.act] * n;
            c.bytes = F * 2.0 * n;
        } else {
            c.flops = bwd[d->u.act.act] * n;
            c.bytes = F * 3.0 * n;
        }
        break;
    }
    case OP_SOFTMAX_XENT: {
        const double n = d->u.xent.n, e = n * d->u.xent.classes;
        if (d->phase == PHASE_FWD) {
            c.flops = 5.0 * e;
            c.bytes = F * (2.0 * e + n + 1.0);
        } else {
            c.flops = 2.0 * e;
            c.bytes = F * (2.0 * e + n);
        }
        break;
    }
    case OP_SQERR: {
        const double e = (double)d->u.sqerr.n * d->u.sqerr.features;
        c.flops = (d->phase == PHASE_FWD ? 3.0 : 2.0) * e;
        c.bytes = F * (d->phase == PHASE_FWD ? 2.0 * e + 1.0 : 3.0 * e);
        break;
    }
    case OP_LSTM_CELL: {
        const double bh = (double)d->u.lstm.batch * d->u.lstm.hidden;
        c.flops = 23.0 * bh;
        if (d->phase == PHASE_FWD) /* pre 4, c_prev 1, b, c_t 1, h_t 1, act 4 */
            c.bytes = F * (11.0 * bh + 4.0 * d->u.lstm.hidden);
        else /* dh 1, dc 1, act 4, c_prev 1, c_t 1, dpre 4, dc_prev 1 */
            c.bytes = F * 13.0 * bh;
        break;
    }
    case OP_SGD:
    case OP_RMSPROP:
    case OP_MOMENTUM:
    case OP_ADAM: {
        const UpdateDesc *u = &d->u.update;
        /* flops and arrays (inout twice) per parameter */
        const double per = d->kind == OP_SGD ? 2.0 : d->kind == OP_RMSPROP ? 9.0
                           : d->kind == OP_ADAM ? 12.0 : u->nesterov ? 6.0 : 4.0;
        const double arrays = d->kind == OP_SGD ? 3.0 : d->kind == OP_ADAM ? 7.0 : 5.0;
        c.flops = per * (double)u->count + 2.0 * (double)u->decay_count;
        c.bytes = F * arrays * (double)u->count;
        break;
    }
    case OP_ZERO:
        c.bytes = F * (double)d->u.mem.count;
        break;
    case OP_COPY:
        c.bytes = F * 2.0 * (double)d->u.mem.count;
        break;
    case OP_STREAM: {
        static const double flops[STREAM_COUNT] = {0, 1, 1, 2}, arrays[STREAM_COUNT] = {2, 2, 3, 3};
        const double n = (double)d->u.mem.count;
        c.flops = flops[d->u.mem.kind] * n;
        c.bytes = F * arrays[d->u.mem.kind] * n;
        break;
    }
    case OP_BATCHNORM: {
        const BnDesc *b = &d->u.bn;
        const double e = (double)b->n * b->c * b->spatial, ch = b->c;
        const double acc = b->accumulate ? 2.0 : 1.0;
        if (d->phase == PHASE_FWD && b->training) {
            /* x, y; gamma, beta, mean, invstd; running mean and variance read and written */
            c.flops = 6.0 * e;
            c.bytes = F * (2.0 * e + 8.0 * ch);
        } else if (d->phase == PHASE_FWD) {
            c.flops = 3.0 * e;
            c.bytes = F * (2.0 * e + 4.0 * ch);
        } else if (d->phase == PHASE_BWD_WEIGHTS) {
            c.flops = 4.0 * e;
            c.bytes = F * (2.0 * e + 2.0 * ch + 2.0 * acc * ch);
        } else {
            c.flops = (b->accumulate ? 6.0 : 5.0) * e;
            c.bytes = F * ((1.0 + acc) * e + e + 6.0 * ch);
        }
        break;
    }
    case OP_LRN: {
        const LrnDesc *l = &d->u.lrn;
        const double e = (double)l->n * l->c * l->spatial;
        if (d->phase == PHASE_FWD) {
            c.flops = (2.0 * l->size + 6.0) * e;
            c.bytes = F * 3.0 * e; /* x; y, scale */
        } else {
            c.flops = (l->size + (l->accumulate ? 10.0 : 9.0)) * e;
            c.bytes = F * (l->accumulate ? 6.0 : 5.0) * e; /* dx; dy, x, y, scale */
        }
        break;
    }
    case OP_DROPOUT: {
        const double e = (double)d->u.dropout.count;
        c.flops = (d->phase == PHASE_FWD ? 2.0 : 1.0) * e;
        c.bytes = F * 3.0 * e + (d->phase == PHASE_FWD ? sizeof(int32_t) : 0.0);
        break;
    }
    case OP_CHANNEL_COPY: {
        const ChannelDesc *ch = &d->u.chan;
        const double e = (double)ch->n * ch->c_src * ch->spatial;
        const bool acc = d->phase != PHASE_FWD && ch->accumulate;
        c.flops = acc ? e : 0.0;
        c.bytes = F * (acc ? 3.0 : 2.0) * e;
        break;
    }
    case OP_AXPBY:
        c.flops = 3.0 * (double)d->u.axpby.count;
        c.bytes = F * 3.0 * (double)d->u.axpby.count;
        break;
    case OP_EMBEDDING: {
        const EmbedDesc *e = &d->u.embed;
        const double rows = (double)e->n * e->dim, ids = sizeof(int32_t) * (double)e->n;
        if (d->phase == PHASE_FWD) {
            c.bytes = F * 2.0 * rows + ids;
        } else {
            const double touched = (double)(e->n < e->vocab ? e->n : e->vocab) * e->dim;
            c.flops = rows;
            const double dw = e->accumulate ? 2.0 * touched : (double)e->vocab * e->dim;
            c.bytes = F * (rows + dw) + ids;
        }
        break;
    }
    case OP_KL_SPARSITY: {
        const double e = (double)d->u.kl.n * d->u.kl.units, u = d->u.kl.units;
        if (d->phase == PHASE_FWD) {
            c.flops = e + 12.0 * u;
            c.bytes = F * (e + u + 2.0); /* a; rho_hat; loss read and written */
        } else {
            c.flops = e + 6.0 * u;
            c.bytes = F * (2.0 * e + u); /* da read and written; rho_hat */
        }
        break;
    }
    case OP_SHRINK:
        c.flops = 3.0 * (double)d->u.mem.count;
        c.bytes = F * 2.0 * (double)d->u.mem.count;
        break;
    case OP_NORM1:
        c.flops = 2.0 * (double)d->u.mem.count;
        c.bytes = F * ((double)d->u.mem.count + 1.0);
        break;
    case OP_GRU_CELL: {
        const double e = (double)d->u.gru.batch * d->u.gru.hidden;
        c.flops = 15.0 * e;
        /* fwd: pre (3), h_prev, b (per unit, ignored) in; h, act (4) out.
         * bwd: dh, act (4), h_prev in; dpre (3), dh_prev out */
        c.bytes = F * (d->phase == PHASE_FWD ? 9.0 : 10.0) * e;
        break;
    }
    case OP_SPMM: {
        const SpmmDesc *m = &d->u.spmm;
        const double nnz = (double)m->m * m->nnz_per_row;
        c.flops = 2.0 * nnz * m->n;
        c.bytes = F * (2.0 * nnz + (m->m + 1.0) + (double)m->k * m->n + (double)m->m * m->n);
        break;
    }
    case OP_PEAK_FMA:
        c.flops = 2.0 * (double)d->u.peak.fma_per_thread * d->u.peak.threads;
        break;
    case OP_MEMBW: {
        const MembwDesc *b = &d->u.membw;
        const double total = (double)b->bytes_per_thread * b->threads * (double)b->passes;
        c.bytes = total;
        c.flops = (b->kind == MEMBW_TRIAD ? 2.0 / 3.0 : 1.0) * total / F; /* triad: 2 per a third */
        break;
    }
    default:
        break;
    }
    return c;
}

double op_thread_imbalance(const OpDesc *d, int threads)
{
    return d->kind == OP_CONV2D ? conv2d_thread_imbalance(&d->u.conv, threads) : 1.0;
}

bool op_conv_rows(const OpDesc *d) { return d->kind == OP_CONV2D && conv2d_is_rows(&d->u.conv); }

bool op_pool_global(const OpDesc *d) { return d->kind == OP_POOL2D && pool2d_is_global(&d->u.pool); }

size_t op_workspace_bytes(const OpDesc *d)
{
    DESC_ASSERT_VALID(d);
    if (d->kind == OP_CONV2D)
        return sizeof(float) * conv2d_workspace_floats(&d->u.conv, d->phase);
    return 0;
}

size_t op_workspace_slice_bytes(const OpDesc *d)
{
    DESC_ASSERT_VALID(d);
    if (d->kind == OP_CONV2D)
        return sizeof(float) * conv2d_slice_floats(&d->u.conv, d->phase);
    return 0;
}

void op_workspace_set_slice(OpDesc *d, size_t bytes)
{
    DESC_ASSERT_VALID(d);
    OPS_ASSERT(bytes % sizeof(float) == 0);
    if (d->kind == OP_CONV2D)
        d->u.conv.ws_slice_floats = bytes / sizeof(float);
}

size_t op_workspace_touched_bytes(const OpDesc *d)
{
    OpDesc packed = *d;
    op_workspace_set_slice(&packed, 0);
    return op_workspace_bytes(&packed);
}

/* ---------------------------------------------------------------------------------------
 * Buffers
 * ------------------------------------------------------------------------------------- */

static OpBufInfo buf_f(const char *name, size_t elems, BufRole role)
{
    return (OpBufInfo){.name = name, .bytes = elems * sizeof(float), .type = BUF_FLOAT,
                       .role = role};
}

int op_buffer_info(const OpDesc *d, OpBufInfo info[OP_MAX_BUFS])
{
    DESC_ASSERT_VALID(d);
    OPS_ASSERT(info);
    int n = 0;
    switch (d->kind) {
    case OP_GEMM: {
        const GemmDesc *g = &d->u.gemm;
        info[n++] = buf_f("C", (size_t)g->m * (size_t)g->n, g->beta != 0.0f ? BUF_INOUT : BUF_OUT);
        info[n++] = buf_f("A", (size_t)g->m * (size_t)g->k, BUF_IN);
        info[n++] = buf_f("B", (size_t)g->k * (size_t)g->n, BUF_IN);
        if (g->bias)
            info[n++] = buf_f("bias", (size_t)g->n, BUF_IN);
        break;
    }
    case OP_BMM: {
        const BmmDesc *g = &d->u.bmm;
        const size_t b = (size_t)g->batch;
        info[n++] = buf_f("C", b * (size_t)g->m * (size_t)g->n, g->beta != 0.0f ? BUF_INOUT : BUF_OUT);
        info[n++] = buf_f("A", b * (size_t)g->m * (size_t)g->k, BUF_IN);
        info[n++] = buf_f("B", b * (size_t)g->k * (size_t)g->n, BUF_IN);
        break;
    }
    case OP_LAYERNORM: {
        const LayerNormDesc *l = &d->u.ln;
        const size_t e = (size_t)l->n * (size_t)l->h, rows = (size_t)l->n, h = (size_t)l->h;
        const BufRole acc = l->accumulate ? BUF_INOUT : BUF_OUT;
        if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("y", e, BUF_OUT);
            info[n++] = buf_f("mean", rows, BUF_OUT);
            info[n++] = buf_f("rstd", rows, BUF_OUT);
            info[n++] = buf_f("x", e, BUF_IN);
            info[n++] = buf_f("gamma", h, BUF_IN);
            info[n++] = buf_f("beta", h, BUF_IN);
        } else if (d->phase == PHASE_BWD_WEIGHTS) {
            info[n++] = buf_f("dgamma", h, acc);
            info[n++] = buf_f("dbeta", h, acc);
            info[n++] = buf_f("dy", e, BUF_IN);
            info[n++] = buf_f("x", e, BUF_IN);
            info[n++] = buf_f("mean", rows, BUF_IN);
            info[n++] = buf_f("rstd", rows, BUF_IN);
        } else {
            info[n++] = buf_f("dx", e, acc);
            info[n++] = buf_f("dy", e, BUF_IN);
            info[n++] = buf_f("x", e, BUF_IN);
            info[n++] = buf_f("gamma", h, BUF_IN);
            info[n++] = buf_f("mean", rows, BUF_IN);
            info[n++] = buf_f("rstd", rows, BUF_IN);
        }
        break;
    }
    case OP_SOFTMAX: {
        const size_t e = (size_t)d->u.softmax.n * (size_t)d->u.softmax.h;
        if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("y", e, BUF_OUT);
            info[n++] = buf_f("x", e, BUF_IN);
        } else {
            info[n++] = buf_f("dx", e, d->u.softmax.accumulate ? BUF_INOUT : BUF_OUT);
            info[n++] = buf_f("dy", e, BUF_IN);
            info[n++] = buf_f("y", e, BUF_IN);
        }
        break;
    }
    case OP_BINARY:
    case OP_SCALAR: {
        const BinaryDesc *b = &d->u.binary;
        const BufRole acc = b->accumulate ? BUF_INOUT : BUF_OUT;
        if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("y", b->count, BUF_OUT);
            info[n++] = buf_f("a", b->count, BUF_IN);
            if (d->kind == OP_BINARY)
                info[n++] = buf_f("b", b->count, BUF_IN);
        } else {
            info[n++] = buf_f("da", b->count, acc);
            if (d->kind == OP_BINARY)
                info[n++] = buf_f("db", b->count, acc);
            info[n++] = buf_f("dy", b->count, BUF_IN);
            info[n++] = buf_f("a", b->count, BUF_IN);
            if (d->kind == OP_BINARY)
                info[n++] = buf_f("b", b->count, BUF_IN);
        }
        break;
    }
    case OP_CONV2D: {
        const ConvDesc *v = &d->u.conv;
        const size_t x = (size_t)v->n * (size_t)v->c * (size_t)v->h * (size_t)v->w;
        const size_t w = (size_t)v->k * (size_t)(v->c / v->groups) * (size_t)v->r * (size_t)v->s;
        const size_t y = (size_t)v->n * (size_t)v->k * (size_t)v->out_h * (size_t)v->out_w;
        const BufRole acc = v->accumulate ? BUF_INOUT : BUF_OUT;
        if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("y", y, BUF_OUT);
            info[n++] = buf_f("x", x, BUF_IN);
            info[n++] = buf_f("w", w, BUF_IN);
        } else if (d->phase == PHASE_BWD_DATA) {
            info[n++] = buf_f("dx", x, acc);
            info[n++] = buf_f("dy", y, BUF_IN);
            info[n++] = buf_f("w", w, BUF_IN);
        } else {
            info[n++] = buf_f("dw", w, acc);
            info[n++] = buf_f("dy", y, BUF_IN);
            info[n++] = buf_f("x", x, BUF_IN);
        }
        break;
    }
    case OP_POOL2D: {
        const PoolDesc *p = &d->u.pool;
        const size_t x = (size_t)p->n * (size_t)p->c * (size_t)p->h * (size_t)p->w;
        const size_t y = (size_t)p->n * (size_t)p->c * (size_t)p->out_h * (size_t)p->out_w;
        if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("y", y, BUF_OUT);
            info[n++] = buf_f("x", x, BUF_IN);
        } else {
            info[n++] = buf_f("dx", x, p->accumulate ? BUF_INOUT : BUF_OUT);
            info[n++] = buf_f("dy", y, BUF_IN);
            info[n++] = buf_f("x", x, BUF_IN);
            info[n++] = buf_f("y", y, BUF_IN);
        }
        break;
    }
    case OP_BIAS: {
        const BiasDesc *b = &d->u.bias;
        const size_t y = (size_t)b->n * (size_t)b->c * (size_t)b->spatial;
        if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("y", y, BUF_INOUT);
            info[n++] = buf_f("b", (size_t)b->c, BUF_IN);
        } else {
            info[n++] = buf_f("db", (size_t)b->c, b->accumulate ? BUF_INOUT : BUF_OUT);
            info[n++] = buf_f("dy", y, BUF_IN);
        }
        break;
    }
    case OP_ACT:
        if (d->u.act.in_place) { /* y over x; dx over dy */
            info[n++] = buf_f(d->phase == PHASE_FWD ? "y" : "dx", d->u.act.count, BUF_INOUT);
            if (d->phase != PHASE_FWD)
                info[n++] = buf_f("y", d->u.act.count, BUF_IN);
        } else if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("y", d->u.act.count, BUF_OUT);
            info[n++] = buf_f("x", d->u.act.count, BUF_IN);
        } else {
            info[n++] = buf_f("dx", d->u.act.count, BUF_OUT);
            info[n++] = buf_f("dy", d->u.act.count, BUF_IN);
            info[n++] = buf_f(d->u.act.act == ACT_GELU ? "x" : "y", d->u.act.count, BUF_IN);
        }
        break;
    case OP_SOFTMAX_XENT: {
        const size_t rows = (size_t)d->u.xent.n, e = rows * (size_t)d->u.xent.classes;
        const OpBufInfo labels = {.name = "labels", .bytes = rows * sizeof(int32_t),
                                  .type = BUF_INT32, .role = BUF_IN};
        if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("loss", 1, BUF_OUT);
            info[n++] = buf_f("probs", e, BUF_OUT);
            info[n++] = buf_f("logits", e, BUF_IN);
        } else {
            info[n++] = buf_f("dlogits", e, BUF_OUT);
            info[n++] = buf_f("probs", e, BUF_IN);
        }
        info[n++] = labels;
        break;
    }
    case OP_SQERR: {
        const size_t e = (size_t)d->u.sqerr.n * (size_t)d->u.sqerr.features;
        if (d->phase == PHASE_FWD)
            info[n++] = buf_f("loss", 1, BUF_OUT);
        else
            info[n++] = buf_f("dpred", e, BUF_OUT);
        info[n++] = buf_f("pred", e, BUF_IN);
        info[n++] = buf_f("target", e, BUF_IN);
        break;
    }
    case OP_LSTM_CELL: {
        const size_t h = (size_t)d->u.lstm.hidden, bh = (size_t)d->u.lstm.batch * h;
        if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("c_t", bh, BUF_OUT);
            info[n++] = buf_f("h_t", bh, BUF_OUT);
            info[n++] = buf_f("act", 4 * bh, BUF_OUT);
            info[n++] = buf_f("pre", 4 * bh, BUF_IN);
            info[n++] = buf_f("c_prev", bh, BUF_IN);
            info[n++] = buf_f("b", 4 * h, BUF_IN);
        } else {
            info[n++] = buf_f("dpre", 4 * bh, BUF_OUT);
            info[n++] = buf_f("dc_prev", bh, BUF_OUT);
            info[n++] = buf_f("dh_t", bh, BUF_IN);
            info[n++] = buf_f("dc_t", bh, BUF_IN);
            info[n++] = buf_f("act", 4 * bh, BUF_IN);
            info[n++] = buf_f("c_prev", bh, BUF_IN);
            info[n++] = buf_f("c_t", bh, BUF_IN);
        }
        break;
    }
    case OP_SGD:
        info[n++] = buf_f("w", d->u.update.count, BUF_INOUT);
        info[n++] = buf_f("g", d->u.update.count, BUF_IN);
        break;
    case OP_RMSPROP:
        info[n++] = buf_f("w", d->u.update.count, BUF_INOUT);
        info[n++] = buf_f("acc", d->u.update.count, BUF_INOUT);
        info[n++] = buf_f("g", d->u.update.count, BUF_IN);
        break;
    case OP_MOMENTUM:
        info[n++] = buf_f("w", d->u.update.count, BUF_INOUT);
        info[n++] = buf_f("v", d->u.update.count, BUF_INOUT);
        info[n++] = buf_f("g", d->u.update.count, BUF_IN);
        break;
    case OP_ADAM:
        info[n++] = buf_f("w", d->u.update.count, BUF_INOUT);
        info[n++] = buf_f("m", d->u.update.count, BUF_INOUT);
        info[n++] = buf_f("v", d->u.update.count, BUF_INOUT);
        info[n++] = buf_f("g", d->u.update.count, BUF_IN);
        break;
    case OP_ZERO:
        info[n++] = buf_f("x", d->u.mem.count, BUF_OUT);
        break;
    case OP_COPY:
        info[n++] = buf_f("dst", d->u.mem.count, BUF_OUT);
        info[n++] = buf_f("src", d->u.mem.count, BUF_IN);
        break;
    case OP_STREAM: {
        /* the one array a kernel writes is OUT; an array it does not touch is listed as
         * IN (it is still passed, so one allocation serves all four kernels) */
        static const int written[STREAM_COUNT] = {2, 1, 2, 0}; /* c, b, c, a */
        static const char *const names[3] = {"a", "b", "c"};
        for (int i = 0; i < 3; i++)
            info[n++] = buf_f(names[i], d->u.mem.count,
                              i == written[d->u.mem.kind] ? BUF_OUT : BUF_IN);
        break;
    }
    case OP_BATCHNORM: {
        const BnDesc *b = &d->u.bn;
        const size_t e = (size_t)b->n * (size_t)b->c * (size_t)b->spatial, c = (size_t)b->c;
        const BufRole acc = b->accumulate ? BUF_INOUT : BUF_OUT;
        if (d->phase == PHASE_FWD && b->training) {
            info[n++] = buf_f("y", e, BUF_OUT);
            info[n++] = buf_f("mean", c, BUF_OUT);
            info[n++] = buf_f("invstd", c, BUF_OUT);
            info[n++] = buf_f("run_mean", c, BUF_INOUT);
            info[n++] = buf_f("run_var", c, BUF_INOUT);
            info[n++] = buf_f("x", e, BUF_IN);
            info[n++] = buf_f("gamma", c, BUF_IN);
            info[n++] = buf_f("beta", c, BUF_IN);
        } else if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("y", e, BUF_OUT);
            info[n++] = buf_f("x", e, BUF_IN);
            info[n++] = buf_f("gamma", c, BUF_IN);
            info[n++] = buf_f("beta", c, BUF_IN);
            info[n++] = buf_f("run_mean", c, BUF_IN);
            info[n++] = buf_f("run_var", c, BUF_IN);
        } else if (d->phase == PHASE_BWD_WEIGHTS) {
            info[n++] = buf_f("dgamma", c, acc);
            info[n++] = buf_f("dbeta", c, acc);
            info[n++] = buf_f("dy", e, BUF_IN);
            info[n++] = buf_f("x", e, BUF_IN);
            info[n++] = buf_f("mean", c, BUF_IN);
            info[n++] = buf_f("invstd", c, BUF_IN);
        } else {
            info[n++] = buf_f("dx", e, acc);
            info[n++] = buf_f("dy", e, BUF_IN);
            info[n++] = buf_f("x", e, BUF_IN);
            info[n++] = buf_f("gamma", c, BUF_IN);
            info[n++] = buf_f("mean", c, BUF_IN);
            info[n++] = buf_f("invstd", c, BUF_IN);
            info[n++] = buf_f("dgamma", c, BUF_IN);
            info[n++] = buf_f("dbeta", c, BUF_IN);
        }
        break;
    }
    case OP_LRN: {
        const LrnDesc *l = &d->u.lrn;
        const size_t e = (size_t)l->n * (size_t)l->c * (size_t)l->spatial;
        if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("y", e, BUF_OUT);
            info[n++] = buf_f("scale", e, BUF_OUT);
            info[n++] = buf_f("x", e, BUF_IN);
        } else {
            info[n++] = buf_f("dx", e, l->accumulate ? BUF_INOUT : BUF_OUT);
            info[n++] = buf_f("dy", e, BUF_IN);
            info[n++] = buf_f("x", e, BUF_IN);
            info[n++] = buf_f("y", e, BUF_IN);
            info[n++] = buf_f("scale", e, BUF_IN);
        }
        break;
    }
    case OP_DROPOUT: {
        const size_t e = d->u.dropout.count;
        if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("y", e, BUF_OUT);
            info[n++] = buf_f("mask", e, BUF_OUT);
            info[n++] = buf_f("x", e, BUF_IN);
            info[n++] = (OpBufInfo){.name = "step", .bytes = sizeof(int32_t),
                                    .type = BUF_INT32, .role = BUF_IN};
        } else {
            info[n++] = buf_f("dx", e, BUF_OUT);
            info[n++] = buf_f("dy", e, BUF_IN);
            info[n++] = buf_f("mask", e, BUF_IN);
        }
        break;
    }
    case OP_CHANNEL_COPY: {
        const ChannelDesc *ch = &d->u.chan;
        const size_t big = (size_t)ch->n * (size_t)ch->c_dst * (size_t)ch->spatial;
        const size_t small = (size_t)ch->n * (size_t)ch->c_src * (size_t)ch->spatial;
        if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("y", big, BUF_INOUT); /* the rest of y is kept */
            info[n++] = buf_f("x", small, BUF_IN);
        } else {
            info[n++] = buf_f("dx", small, ch->accumulate ? BUF_INOUT : BUF_OUT);
            info[n++] = buf_f("dy", big, BUF_IN);
        }
        break;
    }
    case OP_AXPBY:
        info[n++] = buf_f("y", d->u.axpby.count, BUF_OUT);
        info[n++] = buf_f("a", d->u.axpby.count, BUF_IN);
        info[n++] = buf_f("b", d->u.axpby.count, BUF_IN);
        break;
    case OP_EMBEDDING: {
        const EmbedDesc *e = &d->u.embed;
        const size_t rows = (size_t)e->n * (size_t)e->dim, w = (size_t)e->vocab * (size_t)e->dim;
        const OpBufInfo ids = {.name = "ids", .bytes = (size_t)e->n * sizeof(int32_t),
                               .type = BUF_INT32, .role = BUF_IN};
        if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("y", rows, BUF_OUT);
            info[n++] = ids;
            info[n++] = buf_f("W", w, BUF_IN);
        } else {
            info[n++] = buf_f("dW", w, e->accumulate ? BUF_INOUT : BUF_OUT);
            info[n++] = buf_f("dy", rows, BUF_IN);
            info[n++] = ids;
        }
        break;
    }
    case OP_KL_SPARSITY: {
        const size_t e = (size_t)d->u.kl.n * (size_t)d->u.kl.units, u = (size_t)d->u.kl.units;
        if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("loss", 1, BUF_INOUT);
            info[n++] = buf_f("rho_hat", u, BUF_OUT);
            info[n++] = buf_f("a", e, BUF_IN);
        } else {
            info[n++] = buf_f("da", e, BUF_INOUT);
            info[n++] = buf_f("rho_hat", u, BUF_IN);
        }
        break;
    }
    case OP_SHRINK:
        info[n++] = buf_f("y", d->u.mem.count, BUF_OUT);
        info[n++] = buf_f("x", d->u.mem.count, BUF_IN);
        break;
    case OP_NORM1:
        info[n++] = buf_f("out", 1, BUF_OUT);
        info[n++] = buf_f("x", d->u.mem.count, BUF_IN);
        break;
    case OP_GRU_CELL: {
        const size_t e = (size_t)d->u.gru.batch * (size_t)d->u.gru.hidden, h = (size_t)d->u.gru.hidden;
        if (d->phase == PHASE_FWD) {
            info[n++] = buf_f("h_t", e, BUF_OUT);
            info[n++] = buf_f("act", 4 * e, BUF_OUT);
            info[n++] = buf_f("pre", 3 * e, BUF_IN);
            info[n++] = buf_f("h_prev", e, BUF_IN);
            info[n++] = buf_f("b", 3 * h, BUF_IN);
        } else {
            info[n++] = buf_f("dpre", 3 * e, BUF_OUT);
            info[n++] = buf_f("dh_prev", e, BUF_OUT);
            info[n++] = buf_f("dh_t", e, BUF_IN);
            info[n++] = buf_f("act", 4 * e, BUF_IN);
            info[n++] = buf_f("h_prev", e, BUF_IN);
        }
        break;
    }
    case OP_SPMM: {
        const SpmmDesc *m = &d->u.spmm;
        const size_t nnz = (size_t)m->m * (size_t)m->nnz_per_row;
        info[n++] = buf_f("C", (size_t)m->m * (size_t)m->n, BUF_OUT);
        info[n++] = buf_f("values", nnz, BUF_IN);
        info[n++] = (OpBufInfo){.name = "col_idx", .bytes = nnz * sizeof(int32_t), .type = BUF_INT32,
                                .role = BUF_IN};
        info[n++] = (OpBufInfo){.name = "row_ptr", .bytes = ((size_t)m->m + 1) * sizeof(int32_t),
                                .type = BUF_INT32, .role = BUF_IN};
        info[n++] = buf_f("B", (size_t)m->k * (size_t)m->n, BUF_IN);
        break;
    }
    case OP_PEAK_FMA:
        info[n++] = buf_f("out", (size_t)d->u.peak.threads, BUF_OUT);
        break;
    case OP_MEMBW: {
        const MembwDesc *b = &d->u.membw;
        const size_t t = (size_t)b->threads;
        if (b->kind != MEMBW_TRIAD) {
            info[n++] = buf_f("out", t, BUF_OUT);
            info[n++] = buf_f("x", t * b->bytes_per_thread / sizeof(float),
                              b->kind == MEMBW_SHARED ? BUF_INOUT : BUF_IN); /* shared: rewritten */
        } else {
            const size_t each = t * b->bytes_per_thread / (3 * sizeof(float));
            info[n++] = buf_f("a", each, BUF_OUT);
            info[n++] = buf_f("b", each, BUF_IN);
            info[n++] = buf_f("c", each, BUF_IN);
        }
        break;
    }
    default:
        break;
    }
    OPS_ASSERT(n <= OP_MAX_BUFS);
    return n;
}

/* ---------------------------------------------------------------------------------------
 * Dispatch
 * ------------------------------------------------------------------------------------- */

void op_run(const OpDesc *d, void *const bufs[], void *workspace)
{
    DESC_ASSERT_VALID(d);
    OPS_ASSERT(bufs);
    OpBufInfo info[OP_MAX_BUFS];
    const int nb = op_buffer_info(d, info);
    for (int i = 0; i < nb; i++)
        if (!bufs[i])
            ops_assert_fail("bufs[i] != NULL", __FILE__, __LINE__, info[i].name);
    OPS_ASSERT(workspace || op_workspace_bytes(d) == 0);
    float *const *f = (float *const *)bufs;
    float *ws = workspace;
    switch (d->kind) {
    case OP_GEMM:
        if (d->u.gemm.bias)
            gemm_bias_run(f[0], f[1], f[2], f[3], &d->u.gemm);
        else
            gemm_run(f[0], f[1], f[2], &d->u.gemm);
        break;
    case OP_BMM:
        bmm_run(f[0], f[1], f[2], &d->u.bmm);
        break;
    case OP_LAYERNORM:
        if (d->phase == PHASE_FWD)
            layernorm_forward(f[0], f[1], f[2], f[3], f[4], f[5], &d->u.ln);
        else if (d->phase == PHASE_BWD_WEIGHTS)
            layernorm_backward_weights(f[0], f[1], f[2], f[3], f[4], f[5], &d->u.ln);
        else
            layernorm_backward_data(f[0], f[1], f[2], f[3], f[4], f[5], &d->u.ln);
        break;
    case OP_SOFTMAX:
        if (d->phase == PHASE_FWD)
            softmax_forward(f[0], f[1], &d->u.softmax);
        else
            softmax_backward_data(f[0], f[1], f[2], &d->u.softmax);
        break;
    case OP_BINARY:
        if (d->phase == PHASE_FWD)
            binary_forward(f[0], f[1], f[2], &d->u.binary);
        else
            binary_backward_data(f[0], f[1], f[2], f[3], f[4], &d->u.binary);
        break;
    case OP_SCALAR:
        if (d->phase == PHASE_FWD)
            scalar_forward(f[0], f[1], &d->u.binary);
        else
            scalar_backward_data(f[0], f[1], f[2], &d->u.binary);
        break;
    case OP_CONV2D:
        if (d->phase == PHASE_FWD)
            conv2d_forward(f[0], f[1], f[2], &d->u.conv, ws);
        else if (d->phase == PHASE_BWD_DATA)
            conv2d_backward_data(f[0], f[1], f[2], &d->u.conv, ws);
        else
            conv2d_backward_weights(f[0], f[1], f[2], &d->u.conv, ws);
        break;
    case OP_POOL2D:
        if (d->phase == PHASE_FWD)
            pool2d_forward(f[0], f[1], &d->u.pool);
        else
            pool2d_backward_data(f[0], f[1], f[2], f[3], &d->u.pool);
        break;
    case OP_BIAS:
        if (d->phase == PHASE_FWD)
            bias_forward(f[0], f[1], &d->u.bias);
        else
            bias_backward_weights(f[0], f[1], &d->u.bias);
        break;
    case OP_ACT:
        if (d->u.act.in_place && d->phase == PHASE_FWD)
            act_forward(f[0], f[0], &d->u.act);
        else if (d->u.act.in_place)
            act_backward_data(f[0], f[0], f[1], &d->u.act);
        else if (d->phase == PHASE_FWD)
            act_forward(f[0], f[1], &d->u.act);
        else
            act_backward_data(f[0], f[1], f[2], &d->u.act);
        break;
    case OP_SOFTMAX_XENT:
        if (d->phase == PHASE_FWD)
            softmax_xent_forward(f[0], f[1], f[2], (const int32_t *)bufs[3], &d->u.xent);
        else
            softmax_xent_backward_data(f[0], f[1], (const int32_t *)bufs[2], &d->u.xent);
        break;
    case OP_SQERR:
        if (d->phase == PHASE_FWD)
            sqerr_forward(f[0], f[1], f[2], &d->u.sqerr);
        else
            sqerr_backward_data(f[0], f[1], f[2], &d->u.sqerr);
        break;
    case OP_LSTM_CELL:
        if (d->phase == PHASE_FWD)
            lstm_cell_forward(f[0], f[1], f[2], f[3], f[4], f[5], &d->u.lstm);
        else
            lstm_cell_backward_data(f[0], f[1], f[2], f[3], f[4], f[5], f[6], &d->u.lstm);
        break;
    case OP_SGD:
        sgd_update(f[0], f[1], &d->u.update);
        break;
    case OP_RMSPROP:
        rmsprop_update(f[0], f[1], f[2], &d->u.update);
        break;
    case OP_ZERO:
        mem_zero(f[0], d->u.mem.count);
        break;
    case OP_COPY:
        mem_copy(f[0], f[1], d->u.mem.count);
        break;
    case OP_STREAM:
        stream_run(f[0], f[1], f[2], &d->u.mem);
        break;
    case OP_MOMENTUM:
        momentum_update(f[0], f[1], f[2], &d->u.update);
        break;
    case OP_ADAM:
        adam_update(f[0], f[1], f[2], f[3], &d->u.update);
        break;
    case OP_BATCHNORM:
        if (d->phase == PHASE_FWD && d->u.bn.training)
            batchnorm_forward_train(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], &d->u.bn);
        else if (d->phase == PHASE_FWD)
            batchnorm_forward_infer(f[0], f[1], f[2], f[3], f[4], f[5], &d->u.bn);
        else if (d->phase == PHASE_BWD_WEIGHTS)
            batchnorm_backward_weights(f[0], f[1], f[2], f[3], f[4], f[5], &d->u.bn);
        else
            batchnorm_backward_data(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], &d->u.bn);
        break;
    case OP_LRN:
        if (d->phase == PHASE_FWD)
            lrn_forward(f[0], f[1], f[2], &d->u.lrn);
        else
            lrn_backward_data(f[0], f[1], f[2], f[3], f[4], &d->u.lrn);
        break;
    case OP_DROPOUT:
        if (d->phase == PHASE_FWD)
            dropout_forward(f[0], f[1], f[2], (const int32_t *)bufs[3], &d->u.dropout);
        else
            dropout_backward_data(f[0], f[1], f[2], &d->u.dropout);
        break;
    case OP_CHANNEL_COPY:
        if (d->phase == PHASE_FWD)
            channel_copy_forward(f[0], f[1], &d->u.chan);
        else
            channel_copy_backward_data(f[0], f[1], &d->u.chan);
        break;
    case OP_AXPBY:
        axpby_run(f[0], f[1], f[2], &d->u.axpby);
        break;
    case OP_EMBEDDING:
        if (d->phase == PHASE_FWD)
            embedding_forward(f[0], (const int32_t *)bufs[1], f[2], &d->u.embed);
        else
            embedding_backward_weights(f[0], f[1], (const int32_t *)bufs[2], &d->u.embed);
        break;
    case OP_KL_SPARSITY:
        if (d->phase == PHASE_FWD)
            kl_sparsity_forward(f[0], f[1], f[2], &d->u.kl);
        else
            kl_sparsity_backward_data(f[0], f[1], &d->u.kl);
        break;
    case OP_SHRINK:
        shrink_run(f[0], f[1], &d->u.mem);
        break;
    case OP_NORM1:
        norm1_run(f[0], f[1], &d->u.mem);
        break;
    case OP_GRU_CELL:
        if (d->phase == PHASE_FWD)
            gru_cell_forward(f[0], f[1], f[2], f[3], f[4], &d->u.gru);
        else
            gru_cell_backward(f[0], f[1], f[2], f[3], f[4], &d->u.gru);
        break;
    case OP_SPMM:
        spmm_run(f[0], f[1], (const int32_t *)bufs[2], (const int32_t *)bufs[3], f[4], &d->u.spmm);
        break;
    case OP_PEAK_FMA:
        peak_fma_run(f[0], &d->u.peak);
        break;
    case OP_MEMBW:
        if (d->u.membw.kind == MEMBW_TRIAD)
            membw_triad_run(f[0], f[1], f[2], &d->u.membw);
        else if (d->u.membw.kind == MEMBW_SHARED)
            membw_shared_write_run(f[0], f[1], &d->u.membw);
        else
            membw_read_run(f[0], f[1], &d->u.membw);
        break;
    default:
        OPS_ASSERT(!"unreachable op kind");
    }
}

/* ---------------------------------------------------------------------------------------
 * Keys. One line of "name [phase] [variant] field=value ...", fields in a fixed order.
 * A key names what is executed, so it carries every field that changes the work
 * (shapes, transposes, beta, alpha when not 1, accumulate, activation, pool kind, mean)
 * and none that only changes values (lr, rho, eps, loss scale, forget bias, STREAM q):
 * those parse back as their usual defaults. GEMM, the optimizers, zero, copy and STREAM
 * run the same code in every phase, so their keys have no phase and parse as the phase
 * their constructor would give (fwd for gemm/zero/copy/stream, update for optimizers).
 * FWD keys of conv/pool/bias print acc=0 whatever the flag says: FWD ignores it.
 * The model-zoo kinds follow the same rules: batchnorm keys carry train= (training and
 * inference forward are different kernels) and acc=; lrn, channel_copy and embedding acc=;
 * dropout its phase (the forward hashes, the backward multiplies). axpby, shrink and norm1
 * run the same code in every phase (no phase in the key, parsed as fwd); their alpha, beta
 * and threshold are values. Updates print " decay=K" after the count when decay_count > 0
 * (decayed elements do more work; absent otherwise, so undecayed keys are unchanged) and
 * momentum prints nesterov=. Defaults on parsing: batchnorm eps 1e-3 momentum 0.99 (Keras),
 * lrn alpha 1e-4 beta 0.75 k 1 (Caffe AlexNet), dropout rate 0.5 seed 0, axpby 1 and 1,
 * kl rho 0.01 beta 3 (UFLDL), shrink threshold 0.1, momentum lr 0.01 momentum 0.9, adam
 * lr 0.001 betas 0.9 0.999 eps 1e-7 step 1 (Keras), decay l2 1e-4.
 * ------------------------------------------------------------------------------------- */

/* Only the enums are checked (they index name tables), not the shape: callers may key a
 * normalised descriptor that would not run, e.g. the predictor's batch-free keys with
 * n = 0. Such keys do not parse back (op_key_parse accepts valid descriptors only). */
static bool key_enums_ok(const OpDesc *d)
{
    if (d->kind < 0 || d->kind >= OP_KIND_COUNT || d->phase < 0 || d->phase >= PHASE_COUNT)
        return false;
    if (d->kind == OP_ACT)
        return d->u.act.act >= 0 && d->u.act.act < ACT_COUNT;
    if (d->kind == OP_POOL2D)
        return d->u.pool.kind == POOL_MAX || d->u.pool.kind == POOL_AVG;
    if (d->kind == OP_STREAM)
        return d->u.mem.kind >= 0 && d->u.mem.kind < STREAM_COUNT;
    if (d->kind == OP_GRU_CELL)
        return d->u.gru.act >= 0 && d->u.gru.act < ACT_COUNT;
    if (d->kind == OP_MEMBW)
        return d->u.membw.kind >= 0 && d->u.membw.kind < MEMBW_COUNT;
    if (d->kind == OP_BINARY || d->kind == OP_SCALAR)
        return d->u.binary.op >= 0 && d->u.binary.op < BIN_COUNT;
    return true;
}

void op_key(const OpDesc *d, char out[OP_KEY_MAX])
{
    OPS_ASSERT(d && out);
    OPS_ASSERT(key_enums_ok(d));
    const char *kn = KIND_NAMES[d->kind], *ph = PHASE_NAMES[d->phase];
    int len = 0;
    switch (d->kind) {
    case OP_GEMM: {
        const GemmDesc *g = &d->u.gemm;
        len = snprintf(out, OP_KEY_MAX, "%s m=%d n=%d k=%d ta=%d tb=%d beta=%.9g", kn, g->m,
                       g->n, g->k, (int)g->trans_a, (int)g->trans_b, (double)g->beta);
        if (g->alpha != 1.0f && len > 0 && len < OP_KEY_MAX)
            len += snprintf(out + len, (size_t)(OP_KEY_MAX - len), " alpha=%.9g",
                            (double)g->alpha);
        if (g->bias && len > 0 && len < OP_KEY_MAX) /* absent otherwise: GEMM keys unchanged */
            len += snprintf(out + len, (size_t)(OP_KEY_MAX - len), " bias=1");
        break;
    }
    case OP_BMM: {
        const BmmDesc *g = &d->u.bmm;
        len = snprintf(out, OP_KEY_MAX, "%s b=%d m=%d n=%d k=%d ta=%d tb=%d beta=%.9g", kn, g->batch, g->m, g->n,
                       g->k, (int)g->trans_a, (int)g->trans_b, (double)g->beta);
        if (g->alpha != 1.0f && len > 0 && len < OP_KEY_MAX)
            len += snprintf(out + len, (size_t)(OP_KEY_MAX - len), " alpha=%.9g", (double)g->alpha);
        break;
    }
    case OP_LAYERNORM:
        len = snprintf(out, OP_KEY_MAX, "%s %s n=%d h=%d acc=%d", kn, ph, d->u.ln.n, d->u.ln.h,
                       d->phase != PHASE_FWD && d->u.ln.accumulate);
        break;
    case OP_SOFTMAX:
        len = snprintf(out, OP_KEY_MAX, "%s %s n=%d h=%d acc=%d", kn, ph, d->u.softmax.n, d->u.softmax.h,
                       d->phase != PHASE_FWD && d->u.softmax.accumulate);
        break;
    case OP_BINARY:
    case OP_SCALAR:
        len = snprintf(out, OP_KEY_MAX, "%s %s %s count=%zu acc=%d", kn, ph, BINARY_NAMES[d->u.binary.op],
                       d->u.binary.count, d->phase != PHASE_FWD && d->u.binary.accumulate);
        break;
    case OP_CONV2D: {
        const ConvDesc *v = &d->u.conv;
        len = snprintf(out, OP_KEY_MAX,
                       "%s %s n=%d c=%d h=%d w=%d k=%d r=%d s=%d sh=%d sw=%d p=%d,%d,%d,%d "
                       "g=%d acc=%d",
                       kn, ph, v->n, v->c, v->h, v->w, v->k, v->r, v->s, v->stride_h,
                       v->stride_w, v->pad_top, v->pad_left, v->pad_bottom, v->pad_right,
                       v->groups, d->phase != PHASE_FWD && v->accumulate);
        break;
    }
    case OP_POOL2D: {
        const PoolDesc *p = &d->u.pool;
        len = snprintf(out, OP_KEY_MAX,
                       "%s %s %s n=%d c=%d h=%d w=%d r=%d s=%d sh=%d sw=%d p=%d,%d,%d,%d acc=%d",
                       kn, ph, POOL_NAMES[p->kind], p->n, p->c, p->h, p->w, p->win_h, p->win_w,
                       p->stride_h, p->stride_w, p->pad_top, p->pad_left, p->pad_bottom,
                       p->pad_right, d->phase != PHASE_FWD && p->accumulate);
        break;
    }
    case OP_BIAS: {
        const BiasDesc *b = &d->u.bias;
        len = snprintf(out, OP_KEY_MAX, "%s %s n=%d c=%d spatial=%d acc=%d", kn, ph, b->n,
                       b->c, b->spatial, d->phase != PHASE_FWD && b->accumulate);
        break;
    }
    case OP_ACT:
        len = snprintf(out, OP_KEY_MAX, "%s %s %s count=%zu%s", kn, ph, ACT_NAMES[d->u.act.act],
                       d->u.act.count, d->u.act.in_place ? " inplace=1" : "");
        break;
    case OP_SOFTMAX_XENT:
        len = snprintf(out, OP_KEY_MAX, "%s %s n=%d classes=%d", kn, ph, d->u.xent.n,
                       d->u.xent.classes);
        break;
    case OP_SQERR:
        len = snprintf(out, OP_KEY_MAX, "%s %s n=%d features=%d mean=%d", kn, ph,
                       d->u.sqerr.n, d->u.sqerr.features, (int)d->u.sqerr.mean);
        break;
    case OP_LSTM_CELL:
        len = snprintf(out, OP_KEY_MAX, "%s %s batch=%d hidden=%d", kn, ph, d->u.lstm.batch,
                       d->u.lstm.hidden);
        break;
    case OP_SGD:
    case OP_RMSPROP:
        len = snprintf(out, OP_KEY_MAX, "%s count=%zu", kn, d->u.update.count);
        break;
    case OP_ZERO:
    case OP_COPY:
        len = snprintf(out, OP_KEY_MAX, "%s count=%zu", kn, d->u.mem.count);
        break;
    case OP_STREAM:
        len = snprintf(out, OP_KEY_MAX, "%s %s count=%zu", kn, STREAM_NAMES[d->u.mem.kind],
                       d->u.mem.count);
        break;
    case OP_MOMENTUM:
        len = snprintf(out, OP_KEY_MAX, "%s count=%zu nesterov=%d", kn, d->u.update.count,
                       (int)d->u.update.nesterov);
        break;
    case OP_ADAM:
        len = snprintf(out, OP_KEY_MAX, "%s count=%zu", kn, d->u.update.count);
        break;
    case OP_BATCHNORM: {
        const BnDesc *b = &d->u.bn;
        len = snprintf(out, OP_KEY_MAX, "%s %s n=%d c=%d spatial=%d train=%d acc=%d", kn, ph,
                       b->n, b->c, b->spatial, (int)b->training,
                       d->phase != PHASE_FWD && b->accumulate);
        break;
    }
    case OP_LRN: {
        const LrnDesc *l = &d->u.lrn;
        len = snprintf(out, OP_KEY_MAX, "%s %s n=%d c=%d spatial=%d size=%d acc=%d", kn, ph,
                       l->n, l->c, l->spatial, l->size, d->phase != PHASE_FWD && l->accumulate);
        break;
    }
    case OP_DROPOUT:
        len = snprintf(out, OP_KEY_MAX, "%s %s count=%zu", kn, ph, d->u.dropout.count);
        break;
    case OP_CHANNEL_COPY: {
        const ChannelDesc *c = &d->u.chan;
        len = snprintf(out, OP_KEY_MAX, "%s %s n=%d c_dst=%d c_src=%d offset=%d spatial=%d acc=%d",
                       kn, ph, c->n, c->c_dst, c->c_src, c->offset, c->spatial,
                       d->phase != PHASE_FWD && c->accumulate);
        break;
    }
    case OP_AXPBY:
        len = snprintf(out, OP_KEY_MAX, "%s count=%zu", kn, d->u.axpby.count);
        break;
    case OP_EMBEDDING: {
        const EmbedDesc *e = &d->u.embed;
        len = snprintf(out, OP_KEY_MAX, "%s %s n=%d vocab=%d dim=%d acc=%d", kn, ph, e->n,
                       e->vocab, e->dim, d->phase != PHASE_FWD && e->accumulate);
        break;
    }
    case OP_KL_SPARSITY:
        len = snprintf(out, OP_KEY_MAX, "%s %s n=%d units=%d", kn, ph, d->u.kl.n,
                       d->u.kl.units);
        break;
    case OP_SHRINK:
    case OP_NORM1:
        len = snprintf(out, OP_KEY_MAX, "%s count=%zu", kn, d->u.mem.count);
        break;
    case OP_GRU_CELL:
        len = snprintf(out, OP_KEY_MAX, "%s %s %s batch=%d hidden=%d", kn, ph, ACT_NAMES[d->u.gru.act],
                       d->u.gru.batch, d->u.gru.hidden);
        break;
    case OP_SPMM:
        len = snprintf(out, OP_KEY_MAX, "%s m=%d n=%d k=%d nnz_row=%d", kn, d->u.spmm.m, d->u.spmm.n,
                       d->u.spmm.k, d->u.spmm.nnz_per_row);
        break;
    case OP_PEAK_FMA:
        len = snprintf(out, OP_KEY_MAX, "%s threads=%d fma=%ld", kn, d->u.peak.threads,
                       d->u.peak.fma_per_thread);
        break;
    case OP_MEMBW:
        len = snprintf(out, OP_KEY_MAX, "%s %s threads=%d bytes=%zu passes=%ld", kn,
                       MEMBW_NAMES[d->u.membw.kind], d->u.membw.threads, d->u.membw.bytes_per_thread,
                       d->u.membw.passes);
        if (d->u.membw.kind == MEMBW_RETAIN && len > 0 && len < OP_KEY_MAX)
            len += snprintf(out + len, OP_KEY_MAX - (size_t)len, " idle_us=%ld", d->u.membw.idle_us);
        break;
    default:
        break;
    }
    const bool update = d->kind == OP_SGD || d->kind == OP_RMSPROP || d->kind == OP_MOMENTUM ||
                        d->kind == OP_ADAM;
    if (update && d->u.update.decay_count > 0 && len > 0 && len < OP_KEY_MAX)
        len += snprintf(out + len, (size_t)(OP_KEY_MAX - len), " decay=%zu",
                        d->u.update.decay_count);
    /* the longest key (conv2d, every field at ten digits or negative) fits: about 150 */
    OPS_ASSERT(len > 0 && len < OP_KEY_MAX);
}

/* A cursor over a key: each reader consumes " name=value" (or a bare word) and clears ok
 * on any mismatch, so a parse is a straight sequence of reads and one check at the end. */
typedef struct {
    const char *p;
    bool ok;
} KeyCursor;

static void kc_lit(KeyCursor *kc, const char *lit)
{
    const size_t n = strlen(lit);
    if (kc->ok && strncmp(kc->p, lit, n) == 0)
        kc->p += n;
    else
        kc->ok = false;
}

/* " word" from a table; returns its index (0 when !ok). */
static int kc_word(KeyCursor *kc, const char *const *table, int count)
{
    kc_lit(kc, " ");
    if (!kc->ok)
        return 0;
    for (int i = 0; i < count; i++) {
        const size_t n = strlen(table[i]);
        if (strncmp(kc->p, table[i], n) == 0 && (kc->p[n] == ' ' || kc->p[n] == '\0')) {
            kc->p += n;
            return i;
        }
    }
    kc->ok = false;
    return 0;
}

/* A decimal integer in [0, max] (digits only; the canonical re-key rejects "007"). */
static long long kc_num(KeyCursor *kc, long long max)
{
    if (!kc->ok || *kc->p < '0' || *kc->p > '9') {
        kc->ok = false;
        return 0;
    }
    long long v = 0;
    while (*kc->p >= '0' && *kc->p <= '9') {
        v = v * 10 + (*kc->p++ - '0');
        if (v > max) {
            kc->ok = false;
            return 0;
        }
    }
    return v;
}

static int kc_int(KeyCursor *kc, const char *name)
{
    kc_lit(kc, " ");
    kc_lit(kc, name);
    kc_lit(kc, "=");
    return (int)kc_num(kc, INT_MAX);
}

static size_t kc_size(KeyCursor *kc, const char *name)
{
    kc_lit(kc, " ");
    kc_lit(kc, name);
    kc_lit(kc, "=");
    return (size_t)kc_num(kc, (long long)OPS_MAX_ELEMS);
}

static float kc_float(KeyCursor *kc, const char *name)
{
    kc_lit(kc, " ");
    kc_lit(kc, name);
    kc_lit(kc, "=");
    if (!kc->ok)
        return 0.0f;
    char *end;
    errno = 0;
    const float v = strtof(kc->p, &end);
    if (end == kc->p || errno == ERANGE || !isfinite(v))
        kc->ok = false;
    else
        kc->p = end;
    return v;
}

/* " p=a,b,c,d" */
static void kc_pads(KeyCursor *kc, int pad[4])
{
    kc_lit(kc, " p=");
    for (int i = 0; i < 4; i++) {
        if (i)
            kc_lit(kc, ",");
        pad[i] = (int)kc_num(kc, INT_MAX);
    }
}

bool op_key_parse(const char *key, OpDesc *d)
{
    if (!key || !d || strlen(key) >= OP_KEY_MAX)
        return false;
    OpDesc r;
    memset(&r, 0, sizeof r);
    KeyCursor kc = {.p = key, .ok = true};
    char kind[16];
    const size_t kl = strcspn(key, " ");
    if (kl == 0 || kl >= sizeof kind)
        return false;
    memcpy(kind, key, kl);
    kind[kl] = '\0';
    kc.p += kl;
    if (!op_kind_from_name(kind, &r.kind))
        return false;
    switch (r.kind) {
    case OP_GEMM: {
        GemmDesc *g = &r.u.gemm;
        r.phase = PHASE_FWD;
        g->m = kc_int(&kc, "m");
        g->n = kc_int(&kc, "n");
        g->k = kc_int(&kc, "k");
        const int ta = kc_int(&kc, "ta"), tb = kc_int(&kc, "tb");
        if (ta > 1 || tb > 1)
            return false;
        g->trans_a = ta;
        g->trans_b = tb;
        g->beta = kc_float(&kc, "beta");
        g->alpha = 1.0f;
        if (kc.ok && strncmp(kc.p, " alpha=", 7) == 0)
            g->alpha = kc_float(&kc, "alpha");
        if (kc.ok && *kc.p == ' ') {
            if (kc_int(&kc, "bias") != 1)
                return false;
            g->bias = true;
        }
        break;
    }
    case OP_BMM: {
        BmmDesc *g = &r.u.bmm;
        r.phase = PHASE_FWD;
        g->batch = kc_int(&kc, "b");
        g->m = kc_int(&kc, "m");
        g->n = kc_int(&kc, "n");
        g->k = kc_int(&kc, "k");
        const int ta = kc_int(&kc, "ta"), tb = kc_int(&kc, "tb");
        if (ta > 1 || tb > 1)
            return false;
        g->trans_a = ta;
        g->trans_b = tb;
        g->beta = kc_float(&kc, "beta");
        g->alpha = 1.0f;
        if (kc.ok && *kc.p == ' ')
            g->alpha = kc_float(&kc, "alpha");
        break;
    }
    case OP_LAYERNORM:
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        r.u.ln.n = kc_int(&kc, "n");
        r.u.ln.h = kc_int(&kc, "h");
        r.u.ln.accumulate = kc_int(&kc, "acc") != 0;
        r.u.ln.eps = 1e-5f; /* PyTorch's nn.LayerNorm default */
        break;
    case OP_SOFTMAX:
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        r.u.softmax.n = kc_int(&kc, "n");
        r.u.softmax.h = kc_int(&kc, "h");
        r.u.softmax.accumulate = kc_int(&kc, "acc") != 0;
        break;
    case OP_BINARY:
    case OP_SCALAR:
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        r.u.binary.op = (BinaryKind)kc_word(&kc, BINARY_NAMES, BIN_COUNT);
        r.u.binary.count = kc_size(&kc, "count");
        r.u.binary.accumulate = kc_int(&kc, "acc") != 0;
        r.u.binary.scalar = 2.0f;
        break;
    case OP_CONV2D: {
        ConvDesc *v = &r.u.conv;
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        v->n = kc_int(&kc, "n");
        v->c = kc_int(&kc, "c");
        v->h = kc_int(&kc, "h");
        v->w = kc_int(&kc, "w");
        v->k = kc_int(&kc, "k");
        v->r = kc_int(&kc, "r");
        v->s = kc_int(&kc, "s");
        v->stride_h = kc_int(&kc, "sh");
        v->stride_w = kc_int(&kc, "sw");
        int p[4];
        kc_pads(&kc, p);
        v->pad_top = p[0], v->pad_left = p[1], v->pad_bottom = p[2], v->pad_right = p[3];
        v->groups = kc_int(&kc, "g");
        v->accumulate = kc_int(&kc, "acc") != 0;
        if (!kc.ok || v->stride_h < 1 || v->stride_w < 1)
            return false;
        /* derived fields, in long arithmetic: the check below rejects what does not fit */
        const long ph = (long)v->h + p[0] + p[2] - v->r, pw = (long)v->w + p[1] + p[3] - v->s;
        if (ph < 0 || pw < 0 || ph / v->stride_h + 1 > INT_MAX || pw / v->stride_w + 1 > INT_MAX)
            return false;
        v->out_h = (int)(ph / v->stride_h + 1);
        v->out_w = (int)(pw / v->stride_w + 1);
        break;
    }
    case OP_POOL2D: {
        PoolDesc *q = &r.u.pool;
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        q->kind = (PoolKind)kc_word(&kc, POOL_NAMES, 2);
        q->n = kc_int(&kc, "n");
        q->c = kc_int(&kc, "c");
        q->h = kc_int(&kc, "h");
        q->w = kc_int(&kc, "w");
        q->win_h = kc_int(&kc, "r");
        q->win_w = kc_int(&kc, "s");
        q->stride_h = kc_int(&kc, "sh");
        q->stride_w = kc_int(&kc, "sw");
        int p[4];
        kc_pads(&kc, p);
        q->pad_top = p[0], q->pad_left = p[1], q->pad_bottom = p[2], q->pad_right = p[3];
        q->accumulate = kc_int(&kc, "acc") != 0;
        if (!kc.ok || q->stride_h < 1 || q->stride_w < 1)
            return false;
        const long ph = (long)q->h + p[0] + p[2] - q->win_h;
        const long pw = (long)q->w + p[1] + p[3] - q->win_w;
        if (ph < 0 || pw < 0 || ph / q->stride_h + 1 > INT_MAX || pw / q->stride_w + 1 > INT_MAX)
            return false;
        q->out_h = (int)(ph / q->stride_h + 1);
        q->out_w = (int)(pw / q->stride_w + 1);
        break;
    }
    case OP_BIAS:
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        r.u.bias.n = kc_int(&kc, "n");
        r.u.bias.c = kc_int(&kc, "c");
        r.u.bias.spatial = kc_int(&kc, "spatial");
        r.u.bias.accumulate = kc_int(&kc, "acc") != 0;
        break;
    case OP_ACT:
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        r.u.act.act = (ActKind)kc_word(&kc, ACT_NAMES, ACT_COUNT);
        r.u.act.count = kc_size(&kc, "count");
        if (kc.ok && *kc.p == ' ') { /* keys of separate-output activations have no flag */
            if (kc_int(&kc, "inplace") != 1)
                return false;
            r.u.act.in_place = true;
        }
        break;
    case OP_SOFTMAX_XENT:
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        r.u.xent.n = kc_int(&kc, "n");
        r.u.xent.classes = kc_int(&kc, "classes");
        r.u.xent.scale = 1.0f;
        break;
    case OP_SQERR:
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        r.u.sqerr.n = kc_int(&kc, "n");
        r.u.sqerr.features = kc_int(&kc, "features");
        r.u.sqerr.mean = kc_int(&kc, "mean") != 0;
        r.u.sqerr.scale = 1.0f;
        r.u.sqerr.weight = 1.0f;
        break;
    case OP_LSTM_CELL:
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        r.u.lstm.batch = kc_int(&kc, "batch");
        r.u.lstm.hidden = kc_int(&kc, "hidden");
        r.u.lstm.forget_bias = 1.0f; /* TF BasicLSTMCell default */
        break;
    case OP_SGD:
    case OP_RMSPROP:
    case OP_MOMENTUM:
    case OP_ADAM: {
        /* Keras RMSprop and Adam defaults; lr is the SGD default of the suite's Keras models */
        UpdateDesc *u = &r.u.update;
        r.phase = PHASE_UPDATE;
        u->count = kc_size(&kc, "count");
        u->lr = r.kind == OP_SGD || r.kind == OP_MOMENTUM ? 0.01f : 0.001f;
        if (r.kind == OP_RMSPROP) {
            u->rho = 0.9f;
            u->eps = 1e-7f;
        } else if (r.kind == OP_MOMENTUM) {
            u->momentum = 0.9f;
            const int nest = kc_int(&kc, "nesterov");
            if (nest > 1)
                return false;
            u->nesterov = nest;
        } else if (r.kind == OP_ADAM) {
            u->beta1 = 0.9f;
            u->beta2 = 0.999f;
            u->eps = 1e-7f;
            u->step = 1;
        }
        if (kc.ok && *kc.p == ' ') {
            u->decay_count = kc_size(&kc, "decay");
            u->l2 = 1e-4f;
        }
        break;
    }
    case OP_ZERO:
    case OP_COPY:
        r.phase = PHASE_FWD;
        r.u.mem.count = kc_size(&kc, "count");
        break;
    case OP_STREAM:
        r.phase = PHASE_FWD;
        r.u.mem.kind = (StreamKind)kc_word(&kc, STREAM_NAMES, STREAM_COUNT);
        r.u.mem.count = kc_size(&kc, "count");
        r.u.mem.scalar = 3.0f; /* stream.c's scalar */
        break;
    case OP_BATCHNORM: {
        BnDesc *b = &r.u.bn;
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        b->n = kc_int(&kc, "n");
        b->c = kc_int(&kc, "c");
        b->spatial = kc_int(&kc, "spatial");
        const int train = kc_int(&kc, "train"), acc = kc_int(&kc, "acc");
        if (train > 1 || acc > 1)
            return false;
        b->training = train;
        b->accumulate = acc;
        b->eps = 1e-3f;
        b->momentum = 0.99f;
        break;
    }
    case OP_LRN: {
        LrnDesc *l = &r.u.lrn;
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        l->n = kc_int(&kc, "n");
        l->c = kc_int(&kc, "c");
        l->spatial = kc_int(&kc, "spatial");
        l->size = kc_int(&kc, "size");
        l->accumulate = kc_int(&kc, "acc") != 0;
        l->alpha = 1e-4f;
        l->beta = 0.75f;
        l->k = 1.0f;
        break;
    }
    case OP_DROPOUT:
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        r.u.dropout.count = kc_size(&kc, "count");
        r.u.dropout.rate = 0.5f;
        break;
    case OP_CHANNEL_COPY: {
        ChannelDesc *c = &r.u.chan;
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        c->n = kc_int(&kc, "n");
        c->c_dst = kc_int(&kc, "c_dst");
        c->c_src = kc_int(&kc, "c_src");
        c->offset = kc_int(&kc, "offset");
        c->spatial = kc_int(&kc, "spatial");
        c->accumulate = kc_int(&kc, "acc") != 0;
        break;
    }
    case OP_AXPBY:
        r.phase = PHASE_FWD;
        r.u.axpby.count = kc_size(&kc, "count");
        r.u.axpby.alpha = r.u.axpby.beta = 1.0f;
        break;
    case OP_EMBEDDING: {
        EmbedDesc *e = &r.u.embed;
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        e->n = kc_int(&kc, "n");
        e->vocab = kc_int(&kc, "vocab");
        e->dim = kc_int(&kc, "dim");
        e->accumulate = kc_int(&kc, "acc") != 0;
        break;
    }
    case OP_KL_SPARSITY:
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        r.u.kl.n = kc_int(&kc, "n");
        r.u.kl.units = kc_int(&kc, "units");
        r.u.kl.rho = 0.01f;
        r.u.kl.beta = 3.0f;
        break;
    case OP_SHRINK:
    case OP_NORM1:
        r.phase = PHASE_FWD;
        r.u.mem.count = kc_size(&kc, "count");
        r.u.mem.scalar = r.kind == OP_SHRINK ? 0.1f : 0.0f;
        break;
    case OP_GRU_CELL:
        r.phase = (OpPhase)kc_word(&kc, PHASE_NAMES, PHASE_COUNT);
        r.u.gru.act = (ActKind)kc_word(&kc, ACT_NAMES, ACT_COUNT);
        r.u.gru.batch = kc_int(&kc, "batch");
        r.u.gru.hidden = kc_int(&kc, "hidden");
        break;
    case OP_SPMM:
        r.phase = PHASE_FWD;
        r.u.spmm.m = kc_int(&kc, "m");
        r.u.spmm.n = kc_int(&kc, "n");
        r.u.spmm.k = kc_int(&kc, "k");
        r.u.spmm.nnz_per_row = kc_int(&kc, "nnz_row");
        break;
    case OP_PEAK_FMA:
        r.phase = PHASE_FWD;
        r.u.peak.threads = kc_int(&kc, "threads");
        r.u.peak.fma_per_thread = (long)kc_size(&kc, "fma");
        break;
    case OP_MEMBW:
        r.phase = PHASE_FWD;
        r.u.membw.kind = (MembwKind)kc_word(&kc, MEMBW_NAMES, MEMBW_COUNT);
        r.u.membw.threads = kc_int(&kc, "threads");
        r.u.membw.bytes_per_thread = kc_size(&kc, "bytes");
        r.u.membw.passes = (long)kc_size(&kc, "passes");
        if (r.u.membw.kind == MEMBW_RETAIN)
            r.u.membw.idle_us = (long)kc_size(&kc, "idle_us");
        break;
    default:
        return false;
    }
    if (!kc.ok || *kc.p != '\0' || desc_check(&r) != NULL)
        return false;
    /* canonical form only: the key must be exactly what op_key prints for the result */
    char again[OP_KEY_MAX];
    op_key(&r, again);
    if (strcmp(again, key) != 0)
        return false;
    *d = r;
    return true;
}

/* ---------------------------------------------------------------------------------------
 * Library facts
 * ------------------------------------------------------------------------------------- */

enum { HUGE_PAGE_BYTES = 2 << 20 };

/* The bytes ops_buffer_alloc takes for a buffer of `bytes`: whole huge pages from 2 MiB. */
static size_t buffer_span(size_t bytes)
{
    const size_t align = bytes >= HUGE_PAGE_BYTES ? HUGE_PAGE_BYTES : 64;
    return (bytes + align - 1) / align * align;
}

void *ops_buffer_alloc(size_t bytes)
{
    const size_t n = buffer_span(bytes);
    void *p = aligned_alloc(n >= HUGE_PAGE_BYTES ? HUGE_PAGE_BYTES : 64, n ? n : 64);
#ifdef MADV_HUGEPAGE
    if (p && n >= HUGE_PAGE_BYTES)
        (void)madvise(p, n, MADV_HUGEPAGE); /* advice only: without THP, 4 KiB pages */
#endif
    return p;
}

void ops_buffer_free(void *p, size_t bytes)
{
    if (!p)
        return;
#ifdef MADV_NOHUGEPAGE
    const size_t n = buffer_span(bytes);
    if (n >= HUGE_PAGE_BYTES)
        (void)madvise(p, n, MADV_NOHUGEPAGE);
#endif
    free(p);
}

/* Whether madvise(MADV_HUGEPAGE) gets huge pages: THP's mode is "[always]" or
 * "[madvise]" (the bracketed one is in force), not "[never]" or absent. Read once. */
static bool huge_pages_granted(void)
{
    static int granted = -1;
    if (granted < 0) {
        char mode[128] = "";
        FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
        if (f) {
            if (!fgets(mode, sizeof mode, f))
                mode[0] = '\0';
            fclose(f);
        }
        granted = strstr(mode, "[always]") || strstr(mode, "[madvise]");
    }
    return granted;
}

size_t ops_buffer_footprint(size_t bytes)
{
    const long base = sysconf(_SC_PAGESIZE);
    const size_t page = bytes >= HUGE_PAGE_BYTES && huge_pages_granted() ? HUGE_PAGE_BYTES
                        : base > 0                                        ? (size_t)base
                                                                          : 4096;
    return (bytes + page - 1) / page * page;
}

static double read_proc_kb(const char *file, const char *field)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return -1;
    char line[256];
    size_t n = strlen(field);
    double v = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            v = strtod(line + n + 1, NULL) * 1024.0;
            break;
        }
    fclose(f);
    return v;
}

static double mem_available_set = 0; /* > 0: mem_available_override's */
void mem_available_override(double bytes) { mem_available_set = bytes; }
double mem_available_bytes(void)
{
    return mem_available_set > 0 ? mem_available_set : read_proc_kb("/proc/meminfo", "MemAvailable");
}
double peak_rss_bytes(void) { return read_proc_kb("/proc/self/status", "VmHWM"); }
double current_rss_bytes(void) { return read_proc_kb("/proc/self/status", "VmRSS"); }

void peak_rss_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

/* Contract: from now on OpenBLAS GEMMs and the kernels' OpenMP regions (started from the
 * calling thread) use `threads` threads. */
static int ops_threads = 0; /* 0: not set yet, OpenBLAS's own default applies */

void ops_set_threads(int threads)
{
    OPS_ASSERT(threads >= 1);
    ops_threads = threads;
    openblas_set_num_threads(threads);
    omp_set_num_threads(threads);
}

/* Why 512K elements, not the few thousand a fork/join's cost on an idle machine suggests:
 * measured when the tool ran OpenMP with OMP_WAIT_POLICY=PASSIVE (it linked OpenBLAS's
 * pthread build then, whose workers spinning libgomp ones starved), so each parallel region
 * woke a sleeping worker, and on this 2-vCPU VM that costs 20-100 us, more the longer the
 * vCPU was idle. (Single processes now keep libgomp's default spin, cli/blas_select.c; a
 * lower threshold may pay there, not measured yet.) Measured with the kernels here,
 * median microseconds, serial vs 2 threads (back to back / right after a threaded SGEMM /
 * caches flushed first):
 *   axpby    65,536   9 / 13 / 60   vs  29 / 34 / 110
 *   relu    524,288  59 / 81 / 149  vs  54 / 77 / 155
 *   relu  1,048,576 170 / 170 / 301 vs 194 / 173 / 234
 *   tanh    262,144 121 / 123 / 219 vs 126 / 129 / 195
 *   tanh    524,288 240 / 241 / 389 vs 249 / 252 / 282
 * Below 512K threads gain nothing in steps and the wake-up is a cost that depends on
 * what the other core did last, which the calibration cannot reproduce: with the old
 * 32K threshold a 65,536-float copy was timed at 77 us in calibration and 17-46 us in
 * FISTA's steps. Serial, both see 8-12 us. */
size_t ops_par_min = OPS_PAR_MIN_DEFAULT;

void ops_set_parallel_min(size_t elements) { ops_par_min = elements; }

/* OpenBLAS's pthreads build stops its worker threads with this (its fork handler); the
 * next threaded call starts them again from the calling thread. (The OpenMP build has it
 * too and only frees its buffers there.) Weak: a BLAS without it still links. */
extern int blas_thread_shutdown_(void) __attribute__((weak));

void ops_flush_denormals(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(_mm_getcsr() | 0x8040); /* FTZ (bit 15): results; DAZ (bit 6): inputs */
    /* New threads inherit this thread's MXCSR; OpenBLAS's started in its library
     * constructor, before main, with the default one: restart them from here. */
    if (blas_thread_shutdown_)
        (void)blas_thread_shutdown_();
    /* libgomp keeps its pool's threads, which OpenBLAS's OpenMP build also computes on:
     * those a region (a GEMM, a kernel) started before this call set them each here. */
    const unsigned mxcsr = _mm_getcsr();
#pragma omp parallel
    _mm_setcsr(mxcsr);
#endif
}

/* The thread count the kernels use: set by ops_set_threads, else OpenBLAS's default as
 * first seen (kept, since kernels change OpenBLAS's count for a while; see conv.c). */
int ops_get_threads(void)
{
    if (ops_threads == 0)
        ops_threads = openblas_get_num_threads();
    return ops_threads;
}

/* Kernels that split work among OpenMP threads, each calling sgemm, make those calls
 * single-threaded for the duration (the call runs on the calling thread, concurrently
 * with the others; OpenBLAS supports that). Called outside parallel regions only. */
void ops_blas_serial_begin(void) { openblas_set_num_threads(1); }
void ops_blas_serial_end(void) { openblas_set_num_threads(ops_get_threads()); }

const char *ops_blas_core(void)
{
    const char *s = openblas_get_corename();
    return s ? s : "unknown";
}

const char *ops_blas_config(void)
{
    const char *s = openblas_get_config();
    return s ? s : "unknown";
}

const char *ops_blas_threading(void)
{
    switch (openblas_get_parallel()) {
    case 0: return "sequential";
    case 1: return "pthreads";
    case 2: return "OpenMP";
    default: return "unknown";
    }
}
