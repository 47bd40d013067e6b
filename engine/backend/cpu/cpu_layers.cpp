#include "engine/backend/cpu/cpu_layers.h"

#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/quant/dot.h"
#include "kernels/cpu/quant/dot_q8k.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

namespace cw::engine {

namespace ops = kernels::ops;
namespace quant = kernels::quant;

bool usesQ8K(const StepContext& ctx, const WeightMatrix& w)
{
    return ctx.integerProducts && quant::hasQ8KDot(w.type) && w.cols % quant::kQK_K == 0;
}

const quant::BlockQ8K* quantizeRows(
    const float* x, std::int64_t rows, std::int64_t cols, std::vector<quant::BlockQ8K>& q)
{
    const std::int64_t blocks = cols / quant::kQK_K;
    q.resize(static_cast<std::size_t>(rows * blocks));
    for (std::int64_t t = 0; t < rows; ++t)
        quant::quantizeRowQ8K(x + t * cols, q.data() + t * blocks, cols);
    return q.data();
}

void linear(
    const StepContext& ctx, const WeightMatrix& w, const float* x, std::int64_t rows, float* y)
{
    kernels::ThreadPool* pool = ctx.pool;
    if (usesQ8K(ctx, w)) {
        const auto* xq = quantizeRows(x, rows, w.cols, ctx.workspace->quantized);
        quant::matMulQ8K(w.type, w.data, w.rowStride, w.rows, w.cols, xq, rows, y, pool);
    } else if (rows == 1) {
        quant::matVec(w.type, w.data, w.rowStride, w.rows, w.cols, x, y, pool);
    } else {
        quant::matMul(w.type, w.data, w.rowStride, w.rows, w.cols, x, rows, y, pool);
    }
}

void linearMany(const StepContext& ctx, std::span<const Projection> projections, const float* x,
    std::int64_t rows)
{
    if (projections.size() == 1) {
        linear(ctx, *projections[0].w, x, rows, projections[0].y);
        return;
    }
    if (rows != 1) {
        // A batch: each matrix gets its own region (rows x tokens is work enough), x is
        // quantized once for all of them.
        const quant::BlockQ8K* xq = nullptr;
        for (const auto& p : projections) {
            const WeightMatrix& w = *p.w;
            if (!usesQ8K(ctx, w)) {
                linear(ctx, w, x, rows, p.y);
                continue;
            }
            if (!xq)
                xq = quantizeRows(x, rows, w.cols, ctx.workspace->quantized);
            quant::matMulQ8K(w.type, w.data, w.rowStride, w.rows, w.cols, xq, rows, p.y, ctx.pool);
        }
        return;
    }
    std::vector<quant::BlockQ8K> xq;
    std::int64_t total = 0;
    for (const auto& p : projections) {
        if (usesQ8K(ctx, *p.w) && xq.empty())
            quantizeRows(x, 1, p.w->cols, xq);
        total += p.w->rows;
    }
    // The projections' rows laid end to end, split over the pool as one range.
    ctx.pool->parallelFor(
        total,
        [&](std::int64_t begin, std::int64_t end) {
            std::int64_t first = 0;
            for (const auto& p : projections) {
                const WeightMatrix& w = *p.w;
                const std::int64_t b = std::max(begin, first) - first;
                const std::int64_t e = std::min(end, first + w.rows) - first;
                first += w.rows;
                if (b >= e)
                    continue;
                if (usesQ8K(ctx, w)) {
                    quant::matVecRowsQ8K(
                        w.type, w.data, w.rowStride, w.cols, xq.data(), b, e, p.y + b);
                } else {
                    for (std::int64_t r = b; r < e; ++r)
                        p.y[r] = quant::dotRow(
                            w.type, w.data + std::size_t(r) * w.rowStride, x, w.cols);
                }
            }
        },
        16);
}

namespace {

// Pointers to the keys and values of one KV head for positions [0, count) of a sequence.
void gatherKv(CpuKvStore& kv, const std::vector<int>& blocks, int layer, std::int64_t headOffset,
    std::int64_t count, std::vector<const float*>& keys, std::vector<const float*>& values)
{
    keys.resize(std::size_t(count));
    values.resize(std::size_t(count));
    const int bt = kv.blockTokens();
    for (std::int64_t p = 0; p < count; ++p) {
        const int block = blocks[std::size_t(p / bt)];
        const int slot = int(p % bt);
        keys[std::size_t(p)] = kv.key(block, layer, slot) + headOffset;
        values[std::size_t(p)] = kv.value(block, layer, slot) + headOffset;
    }
}

} // namespace

void attentionLayer(const StepContext& ctx, const LayerWeights& layer, const float* x, float* out)
{
    const auto& hp = *ctx.hp;
    const auto& a = layer.attention;
    const std::int64_t T = ctx.rows, hd = hp.headDim, nH = hp.numHeads, nKv = hp.numKvHeads;
    const bool gated = hp.attentionOutputGate;
    const std::int64_t qRow = gated ? 2 * nH * hd : nH * hd;
    const std::int64_t kvDim = nKv * hd;
    const float eps = float(hp.rmsNormEps);
    auto& ws = *ctx.workspace;
    auto& qAll = ws.queryGate;
    auto& k = ws.keys;
    auto& v = ws.values;
    qAll.resize(static_cast<std::size_t>(T * qRow));
    k.resize(static_cast<std::size_t>(T * kvDim));
    v.resize(static_cast<std::size_t>(T * kvDim));
    PartTimer projectionTime(ctx.timers, StepPart::AttentionProjections);
    const Projection qkv[] = { { &a.q, qAll.data() }, { &a.k, k.data() }, { &a.v, v.data() } };
    linearMany(ctx, qkv, x, T);
    projectionTime.stop();
    PartTimer coreTime(ctx.timers, StepPart::AttentionCore);
    auto& q = ws.queries;
    q.resize(static_cast<std::size_t>(T * nH * hd));
    const float* invFreq = ctx.weights->ropeInvFreq.data();
    for (const auto& s : ctx.sequences) {
        for (std::int64_t i = 0; i < s.n; ++i) {
            const std::int64_t t = s.row0 + i, pos = s.pos0 + i;
            for (std::int64_t h = 0; h < nH; ++h) {
                const float* src = qAll.data() + t * qRow + h * (gated ? 2 * hd : hd);
                float* dst = q.data() + (t * nH + h) * hd;
                ops::rmsNorm(src, a.qNorm.data(), hd, eps, dst);
                ops::ropeNeox(dst, hp.ropeDim, invFreq, pos);
            }
            for (std::int64_t h = 0; h < nKv; ++h) {
                float* kh = k.data() + t * kvDim + h * hd;
                ops::rmsNorm(kh, a.kNorm.data(), hd, eps, kh);
                ops::ropeNeox(kh, hp.ropeDim, invFreq, pos);
            }
            const int bt = ctx.kv->blockTokens();
            const int block = (*s.kvBlocks)[std::size_t(pos / bt)];
            std::memcpy(ctx.kv->key(block, layer.cacheIndex, int(pos % bt)), k.data() + t * kvDim,
                std::size_t(kvDim) * sizeof(float));
            std::memcpy(ctx.kv->value(block, layer.cacheIndex, int(pos % bt)), v.data() + t * kvDim,
                std::size_t(kvDim) * sizeof(float));
        }
    }
    auto& attn = ws.attention;
    attn.resize(static_cast<std::size_t>(T * nH * hd));
    const std::int64_t groups = nH / nKv;
    const float scale = 1.0f / std::sqrt(float(hd));
    // Decoding (one new token per sequence): one job per sequence and KV head, whose cache
    // rows are gathered once and read once for the query heads that share them. Prefill: one
    // job per query head (more, larger jobs to spread over the threads).
    bool singleTokens = true;
    for (const auto& s : ctx.sequences)
        singleTokens = singleTokens && s.n == 1;
    const std::int64_t headsPerJob = singleTokens ? groups : 1;
    const std::int64_t jobsPerSequence = nH / headsPerJob;
    const std::int64_t jobs = std::int64_t(ctx.sequences.size()) * jobsPerSequence;
    ctx.pool->parallelFor(jobs, [&](std::int64_t begin, std::int64_t end) {
        std::vector<const float*> keys, values;
        std::vector<float> scratch;
        for (std::int64_t job = begin; job < end; ++job) {
            const auto& s = ctx.sequences[std::size_t(job / jobsPerSequence)];
            const std::int64_t h0 = (job % jobsPerSequence) * headsPerJob;
            const std::int64_t count = s.pos0 + s.n;
            gatherKv(
                *ctx.kv, *s.kvBlocks, layer.cacheIndex, (h0 / groups) * hd, count, keys, values);
            if (singleTokens) {
                scratch.resize(std::size_t(groups * count));
                ops::attentionSharedKv(q.data() + (s.row0 * nH + h0) * hd, hd, groups, keys.data(),
                    values.data(), count, hd, scale, attn.data() + (s.row0 * nH + h0) * hd, hd,
                    scratch.data());
                continue;
            }
            scratch.resize(std::size_t(count));
            ops::attentionHead(q.data() + (s.row0 * nH + h0) * hd, nH * hd, s.n, s.pos0,
                keys.data(), values.data(), count, hd, scale, attn.data() + (s.row0 * nH + h0) * hd,
                nH * hd, scratch.data());
        }
    });
    if (gated) {
        for (std::int64_t t = 0; t < T; ++t)
            for (std::int64_t h = 0; h < nH; ++h) {
                float* o = attn.data() + (t * nH + h) * hd;
                const float* g = qAll.data() + t * qRow + h * 2 * hd + hd;
                for (std::int64_t d = 0; d < hd; ++d)
                    o[d] *= ops::sigmoid(g[d]);
            }
    }
    coreTime.stop();
    PartTimer outputTime(ctx.timers, StepPart::AttentionProjections);
    linear(ctx, a.o, attn.data(), T, out);
}

void deltaNetLayer(const StepContext& ctx, const LayerWeights& layer, const float* x, float* out)
{
    const auto& hp = *ctx.hp;
    const auto& d = layer.deltaNet;
    const std::int64_t T = ctx.rows;
    const std::int64_t nK = hp.linearNumKeyHeads, nV = hp.linearNumValueHeads;
    const std::int64_t dk = hp.linearKeyHeadDim, dv = hp.linearValueHeadDim;
    const std::int64_t convDim = 2 * nK * dk + nV * dv, valueDim = nV * dv;
    const int kernel = int(hp.linearConvKernel);
    const bool tiled = ctx.conventions->deltaNetValueHeadsTiled;
    const float eps = float(hp.rmsNormEps);

    // Every element of these is written before it is read (projections, convolution, the
    // recurrence), so the workspace's vectors are reused as they are.
    auto& ws = *ctx.workspace;
    auto& qkv = ws.deltaQkv;
    auto& z = ws.deltaZ;
    auto& b = ws.deltaBeta;
    auto& a = ws.deltaAlpha;
    qkv.resize(std::size_t(T * convDim));
    z.resize(std::size_t(T * valueDim));
    b.resize(std::size_t(T * nV));
    a.resize(std::size_t(T * nV));
    PartTimer projectionTime(ctx.timers, StepPart::DeltaNetProjections);
    const Projection inputs[] = { { &d.qkv, qkv.data() }, { &d.z, z.data() }, { &d.beta, b.data() },
        { &d.alpha, a.data() } };
    linearMany(ctx, inputs, x, T);
    projectionTime.stop();
    PartTimer coreTime(ctx.timers, StepPart::DeltaNetCore);

    // The element-wise stages of a prompt chunk run on the pool too (channels, then tokens):
    // each is millions of exp(), and on one thread they held the other 15-63 idle. A decode
    // step's are too small to be worth a hand-off.
    auto spread = [&](std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& fn,
                      std::int64_t minChunk) {
        if (T >= 16)
            ctx.pool->parallelFor(n, fn, minChunk);
        else
            fn(0, n);
    };
    // The convolution runs on the pool at any T, in blocks of channels per sequence: even a
    // decode step's 8192 channels are ~15 us of vector work, worth the hand-off.
    auto& conv = ws.deltaConv;
    conv.resize(std::size_t(T * convDim));
    const int hist = kernel - 1;
    constexpr std::int64_t kConvBlock = 512;
    const std::int64_t convBlocks = (convDim + kConvBlock - 1) / kConvBlock;
    ctx.pool->parallelFor(
        std::int64_t(ctx.sequences.size()) * convBlocks, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t job = begin; job < end; ++job) {
                const auto& s = ctx.sequences[std::size_t(job / convBlocks)];
                const std::int64_t c0 = job % convBlocks * kConvBlock;
                const std::int64_t nc = std::min(kConvBlock, convDim - c0);
                ops::causalConv1dSilu(qkv.data() + s.row0 * convDim + c0, convDim, s.n, nc,
                    d.conv.data() + c0 * kernel, kernel, s.convState->data() + c0 * hist,
                    conv.data() + s.row0 * convDim + c0, convDim);
            }
        });
    spread(
        T,
        [&](std::int64_t t0, std::int64_t t1) {
            for (std::int64_t t = t0; t < t1; ++t) {
                float* row = conv.data() + t * convDim;
                for (std::int64_t h = 0; h < 2 * nK; ++h)
                    ops::l2Normalize(row + h * dk, dk, 1e-6f);
                for (std::int64_t j = 0; j < nV; ++j) {
                    const std::size_t i = std::size_t(t * nV + j);
                    a[i] = d.negA[std::size_t(j)]
                        * ops::softplus(a[i] + d.dtBias[std::size_t(j)]); // g
                    b[i] = ops::sigmoid(b[i]); // beta
                }
            }
        },
        4);

    auto& core = ws.deltaCore;
    core.resize(std::size_t(T * valueDim));
    const std::int64_t jobs = std::int64_t(ctx.sequences.size()) * nV;
    ctx.pool->parallelFor(jobs, [&](std::int64_t begin, std::int64_t end) {
        std::vector<float> g, beta;
        for (std::int64_t job = begin; job < end; ++job) {
            const auto& s = ctx.sequences[std::size_t(job / nV)];
            const std::int64_t j = job % nV;
            const std::int64_t kh = tiled ? j % nK : j / (nV / nK);
            g.resize(std::size_t(s.n));
            beta.resize(std::size_t(s.n));
            for (std::int64_t i = 0; i < s.n; ++i) {
                g[std::size_t(i)] = a[std::size_t((s.row0 + i) * nV + j)];
                beta[std::size_t(i)] = b[std::size_t((s.row0 + i) * nV + j)];
            }
            const float* base = conv.data() + s.row0 * convDim;
            const float* qh = base + kh * dk;
            const float* kk = base + nK * dk + kh * dk;
            const float* vv = base + 2 * nK * dk + j * dv;
            float* state = s.recurrentState->data() + j * dk * dv;
            float* o = core.data() + s.row0 * valueDim + j * dv;
            if (s.n == 1)
                ops::gatedDeltaRuleRecurrent(qh, kk, convDim, vv, convDim, g.data(), beta.data(),
                    s.n, dk, dv, state, o, valueDim);
            else
                ops::gatedDeltaRuleChunked(qh, kk, convDim, vv, convDim, g.data(), beta.data(), s.n,
                    dk, dv, state, o, valueDim);
        }
    });
    spread(
        T * nV,
        [&](std::int64_t begin, std::int64_t end) {
            ops::gatedRmsNorm(core.data() + begin * dv, z.data() + begin * dv, end - begin, dv,
                d.norm.data(), eps);
        },
        16);
    coreTime.stop();
    PartTimer outputTime(ctx.timers, StepPart::DeltaNetProjections);
    linear(ctx, d.out, core.data(), T, out);
}

} // namespace cw::engine
