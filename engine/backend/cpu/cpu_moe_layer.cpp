// The MoE block: router softmax and top-k, the routed experts, the shared expert (Qwen3.5).
// A single token (decode) runs the selected experts' gate and up rows in one parallel region
// and their down rows, already weighted and summed, in a second; a batch groups its tokens
// per expert so each expert's weights are read once for all the tokens that chose it.
#include "engine/backend/cpu/cpu_layers.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/quant/dot.h"
#include "kernels/cpu/quant/dot_q8k.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace cw::engine {

namespace ops = kernels::ops;
namespace quant = kernels::quant;

namespace {

// y[r - begin] = row r of w times x for r in [begin, end) (xq: x as Q8_K when w takes it).
void rowsTimes(const StepContext& ctx, const WeightMatrix& w, const float* x,
    const quant::BlockQ8K* xq, std::int64_t begin, std::int64_t end, float* y)
{
    if (usesQ8K(ctx, w)) {
        quant::matVecRowsQ8K(w.type, w.data, w.rowStride, w.cols, xq, begin, end, y);
        return;
    }
    for (std::int64_t r = begin; r < end; ++r)
        y[r - begin] = quant::dotRow(w.type, w.data + std::size_t(r) * w.rowStride, x, w.cols);
}

std::vector<quant::BlockQ8K> quantized(const float* x, std::int64_t n, bool wanted)
{
    std::vector<quant::BlockQ8K> q;
    if (wanted) {
        q.resize(std::size_t(n / quant::kQK_K));
        quant::quantizeRowQ8K(x, q.data(), n);
    }
    return q;
}

} // namespace

void routedExpertsOneToken(const StepContext& ctx, const MoeWeights& m, const float* x,
    const std::vector<std::pair<int, float>>& chosen, float* out, const ExpertBases* bases)
{
    const auto& hp = *ctx.hp;
    const std::int64_t H = hp.hiddenSize, ffn = hp.expertFfnSize;
    const std::int64_t K = std::int64_t(chosen.size());
    auto expert = [](const ExpertStack& s, const std::vector<const std::byte*>* base, int e) {
        WeightMatrix w = s.expert(e);
        if (base)
            w.data = (*base)[std::size_t(e)] + w.rowStride * std::size_t(s.rowOffset);
        return w;
    };
    std::vector<WeightMatrix> gate, up, down;
    for (const auto& [e, w] : chosen) {
        gate.push_back(expert(m.gate, bases ? bases->gate : nullptr, e));
        up.push_back(expert(m.up, bases ? bases->up : nullptr, e));
        down.push_back(expert(m.down, bases ? bases->down : nullptr, e));
    }
    PartTimer gateUpTime(ctx.timers, StepPart::ExpertsGateUp);
    const auto xqGate = quantized(x, H, usesQ8K(ctx, gate[0]));
    const auto xqUp = usesQ8K(ctx, up[0]) == usesQ8K(ctx, gate[0])
        ? std::vector<quant::BlockQ8K> {}
        : quantized(x, H, usesQ8K(ctx, up[0]));
    const quant::BlockQ8K* xqU = xqUp.empty() ? xqGate.data() : xqUp.data();
    std::vector<float> g(static_cast<std::size_t>(K * ffn)), u(static_cast<std::size_t>(K * ffn));
    ctx.pool->parallelFor(
        K * ffn,
        [&](std::int64_t begin, std::int64_t end) {
            while (begin < end) {
                const std::int64_t k = begin / ffn, r0 = begin % ffn;
                const std::int64_t r1 = std::min(ffn, r0 + (end - begin));
                float* gk = g.data() + k * ffn;
                float* uk = u.data() + k * ffn;
                rowsTimes(ctx, gate[std::size_t(k)], x, xqGate.data(), r0, r1, gk + r0);
                rowsTimes(ctx, up[std::size_t(k)], x, xqU, r0, r1, uk + r0);
                ops::siluMul(uk + r0, gk + r0, r1 - r0);
                begin += r1 - r0;
            }
        },
        32);
    gateUpTime.stop();

    PartTimer downTime(ctx.timers, StepPart::ExpertsDown);
    std::vector<std::vector<quant::BlockQ8K>> hq;
    for (std::int64_t k = 0; k < K; ++k)
        hq.push_back(quantized(u.data() + k * ffn, ffn, usesQ8K(ctx, down[std::size_t(k)])));
    ctx.pool->parallelFor(
        H,
        [&](std::int64_t begin, std::int64_t end) {
            // Whole runs of each expert's rows (contiguous bytes, one stream at a time).
            float partial[256];
            for (std::int64_t c0 = begin; c0 < end; c0 += 256) {
                const std::int64_t c1 = std::min(end, c0 + 256);
                std::fill(out + c0, out + c1, 0.0f);
                for (std::int64_t k = 0; k < K; ++k) {
                    rowsTimes(ctx, down[std::size_t(k)], u.data() + k * ffn,
                        hq[std::size_t(k)].data(), c0, c1, partial);
                    const float w = chosen[std::size_t(k)].second;
                    for (std::int64_t c = c0; c < c1; ++c)
                        out[c] += w * partial[c - c0];
                }
            }
        },
        16);
}

namespace {

// y[t * yStride + r] = row r of w times token t's input for rows [begin, end) and n tokens
// (x: n rows of w.cols floats; xq: the same rows as Q8_K, used when w takes it).
void rowsTimesTokens(const StepContext& ctx, const WeightMatrix& w, const float* x,
    const quant::BlockQ8K* xq, std::int64_t n, std::int64_t begin, std::int64_t end, float* y,
    std::int64_t yStride)
{
    if (usesQ8K(ctx, w)) {
        quant::matMulRowsQ8K(w.type, w.data, w.rowStride, w.cols, xq, n, begin, end, y, yStride);
        return;
    }
    for (std::int64_t r = begin; r < end; ++r)
        for (std::int64_t t = 0; t < n; ++t)
            y[t * yStride + r] = quant::dotRow(
                w.type, w.data + std::size_t(r) * w.rowStride, x + t * w.cols, w.cols);
}

// Calls fn(group, r0, r1) for the pieces of [begin, end) in a range laid out as `groups`
// runs of `rows` rows each.
template <typename Fn>
void forGroupRows(std::int64_t begin, std::int64_t end, std::int64_t rows, Fn&& fn)
{
    while (begin < end) {
        const std::int64_t g = begin / rows, r0 = begin % rows;
        const std::int64_t r1 = std::min(rows, r0 + (end - begin));
        fn(g, r0, r1);
        begin += r1 - r0;
    }
}

// Tokens grouped per expert, each expert's matrices read once for all the tokens that chose
// it, and every stage one parallel region over all experts' rows: gate and up (with the
// SiLU), then down, then each token's weighted sum in ascending expert order (the order of
// the single-token path, so the sums round alike). A region per expert, as before, left most
// of 16-64 threads waiting on matrices of a few hundred rows.
void expertsForBatch(const StepContext& ctx, const MoeWeights& m, const float* x,
    const std::vector<std::vector<std::pair<std::int64_t, float>>>& perExpert, float* out)
{
    const auto& hp = *ctx.hp;
    const std::int64_t T = ctx.rows, H = hp.hiddenSize, ffn = hp.expertFfnSize;
    auto& ws = *ctx.workspace;

    // The (expert, token) pairs, expert-major; a group is one expert's run of pairs.
    struct Group {
        std::int64_t expert, first, count;
    };
    std::vector<Group> groups;
    std::vector<std::int64_t> pairToken;
    std::vector<float> pairWeight;
    for (std::int64_t e = 0; e < std::int64_t(perExpert.size()); ++e) {
        const auto& list = perExpert[std::size_t(e)];
        if (list.empty())
            continue;
        groups.push_back({ e, std::int64_t(pairToken.size()), std::int64_t(list.size()) });
        for (const auto& [t, w] : list) {
            pairToken.push_back(t);
            pairWeight.push_back(w);
        }
    }
    if (groups.empty()) {
        std::fill(out, out + T * H, 0.0f);
        return;
    }
    const std::int64_t P = std::int64_t(pairToken.size());
    const std::int64_t G = std::int64_t(groups.size());
    // Each token's pairs in ascending expert order (pairs are expert-major).
    std::vector<std::int64_t> tokenStart(std::size_t(T + 1), 0);
    std::vector<std::int64_t> tokenPairs(static_cast<std::size_t>(P));
    for (std::int64_t p = 0; p < P; ++p)
        ++tokenStart[std::size_t(pairToken[std::size_t(p)] + 1)];
    for (std::int64_t t = 0; t < T; ++t)
        tokenStart[std::size_t(t + 1)] += tokenStart[std::size_t(t)];
    {
        std::vector<std::int64_t> fill(tokenStart.begin(), tokenStart.end() - 1);
        for (std::int64_t p = 0; p < P; ++p)
            tokenPairs[std::size_t(fill[std::size_t(pairToken[std::size_t(p)])]++)] = p;
    }

    const WeightMatrix gate0 = m.gate.expert(groups[0].expert), up0 = m.up.expert(groups[0].expert);
    const WeightMatrix down0 = m.down.expert(groups[0].expert);
    const bool gateQ = usesQ8K(ctx, gate0), upQ = usesQ8K(ctx, up0), downQ = usesQ8K(ctx, down0);
    const std::int64_t hBlocks = H / quant::kQK_K, fBlocks = ffn / quant::kQK_K;

    PartTimer gateUpTime(ctx.timers, StepPart::ExpertsGateUp);
    // Inputs per pair: as Q8_K (each token quantized once) and, for float products, as floats.
    auto& xe = ws.expertInput;
    auto& xeq = ws.expertInputQ8K;
    if (gateQ || upQ) {
        const quant::BlockQ8K* xq = quantizeRows(x, T, H, ws.quantized);
        xeq.resize(std::size_t(P * hBlocks));
        for (std::int64_t p = 0; p < P; ++p)
            std::memcpy(xeq.data() + p * hBlocks, xq + pairToken[std::size_t(p)] * hBlocks,
                std::size_t(hBlocks) * sizeof(quant::BlockQ8K));
    }
    if (!gateQ || !upQ) {
        xe.resize(std::size_t(P * H));
        for (std::int64_t p = 0; p < P; ++p)
            std::memcpy(xe.data() + p * H, x + pairToken[std::size_t(p)] * H,
                std::size_t(H) * sizeof(float));
    }
    auto& gate = ws.expertGate;
    auto& up = ws.expertUp;
    auto& down = ws.expertDown;
    gate.resize(std::size_t(P * ffn));
    up.resize(std::size_t(P * ffn));
    ctx.pool->parallelFor(
        G * ffn,
        [&](std::int64_t begin, std::int64_t end) {
            forGroupRows(begin, end, ffn, [&](std::int64_t g, std::int64_t r0, std::int64_t r1) {
                const Group& grp = groups[std::size_t(g)];
                const float* xf = xe.empty() ? nullptr : xe.data() + grp.first * H;
                const quant::BlockQ8K* xq
                    = xeq.empty() ? nullptr : xeq.data() + grp.first * hBlocks;
                float* gg = gate.data() + grp.first * ffn;
                float* uu = up.data() + grp.first * ffn;
                rowsTimesTokens(ctx, m.gate.expert(grp.expert), xf, xq, grp.count, r0, r1, gg, ffn);
                rowsTimesTokens(ctx, m.up.expert(grp.expert), xf, xq, grp.count, r0, r1, uu, ffn);
                for (std::int64_t i = 0; i < grp.count; ++i)
                    ops::siluMul(uu + i * ffn + r0, gg + i * ffn + r0, r1 - r0);
            });
        },
        16);
    gateUpTime.stop();

    PartTimer downTime(ctx.timers, StepPart::ExpertsDown);
    auto& hq = ws.expertHiddenQ8K;
    if (downQ) {
        hq.resize(std::size_t(P * fBlocks));
        ctx.pool->parallelFor(
            P,
            [&](std::int64_t begin, std::int64_t end) {
                for (std::int64_t p = begin; p < end; ++p)
                    quant::quantizeRowQ8K(up.data() + p * ffn, hq.data() + p * fBlocks, ffn);
            },
            16);
    }
    down.resize(std::size_t(P * H));
    ctx.pool->parallelFor(
        G * H,
        [&](std::int64_t begin, std::int64_t end) {
            forGroupRows(begin, end, H, [&](std::int64_t g, std::int64_t r0, std::int64_t r1) {
                const Group& grp = groups[std::size_t(g)];
                rowsTimesTokens(ctx, m.down.expert(grp.expert), up.data() + grp.first * ffn,
                    hq.empty() ? nullptr : hq.data() + grp.first * fBlocks, grp.count, r0, r1,
                    down.data() + grp.first * H, H);
            });
        },
        16);
    ctx.pool->parallelFor(
        T,
        [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t t = begin; t < end; ++t) {
                float* o = out + t * H;
                std::fill(o, o + H, 0.0f);
                for (std::int64_t i = tokenStart[std::size_t(t)];
                     i < tokenStart[std::size_t(t + 1)]; ++i) {
                    const std::int64_t p = tokenPairs[std::size_t(i)];
                    const float w = pairWeight[std::size_t(p)];
                    const float* dn = down.data() + p * H;
                    for (std::int64_t c = 0; c < H; ++c)
                        o[c] += w * dn[c];
                }
            }
        },
        4);
}

void sharedExpert(const StepContext& ctx, const MoeWeights& m, const float* x, float* out)
{
    PartTimer time(ctx.timers, StepPart::SharedExpert);
    const auto& hp = *ctx.hp;
    const std::int64_t T = ctx.rows, H = hp.hiddenSize, sh = m.sharedUp.rows;
    auto& ws = *ctx.workspace;
    auto& gate = ws.sharedGate;
    auto& up = ws.sharedUp;
    auto& down = ws.sharedDown;
    gate.resize(std::size_t(T * sh));
    up.resize(std::size_t(T * sh));
    down.resize(std::size_t(T * H));
    const Projection gateUp[] = { { &m.sharedGateProj, gate.data() }, { &m.sharedUp, up.data() } };
    linearMany(ctx, gateUp, x, T);
    ops::siluMul(up.data(), gate.data(), T * sh);
    linear(ctx, m.sharedDown, up.data(), T, down.data());
    for (std::int64_t t = 0; t < T; ++t) {
        const float* xt = x + t * H;
        float dot = 0.0f;
        for (std::int64_t c = 0; c < H; ++c)
            dot += m.sharedGate[std::size_t(c)] * xt[c];
        const float w = ops::sigmoid(dot);
        float* o = out + t * H;
        const float* dn = down.data() + t * H;
        for (std::int64_t c = 0; c < H; ++c)
            o[c] += w * dn[c];
    }
}

} // namespace

void moeLayer(const StepContext& ctx, const LayerWeights& layer, bool renormalise, const float* x,
    float* out, ExpertLoad* load, int layerIndex)
{
    const auto& hp = *ctx.hp;
    const auto& m = layer.moe;
    const std::int64_t T = ctx.rows, E = hp.numExperts;
    const int K = int(hp.numExpertsPerToken);
    PartTimer routerTime(ctx.timers, StepPart::Router);
    auto& logits = ctx.workspace->routerLogits;
    logits.resize(std::size_t(T * E));
    linear(ctx, m.router, x, T, logits.data());
    std::vector<std::vector<std::pair<std::int64_t, float>>> perExpert(static_cast<std::size_t>(E));
    std::vector<int> idx(static_cast<std::size_t>(K));
    std::vector<float> val(static_cast<std::size_t>(K));
    for (std::int64_t t = 0; t < T; ++t) {
        float* p = logits.data() + t * E;
        ops::softmax(p, E);
        ops::topK(p, E, K, idx.data(), val.data());
        float sum = 0.0f;
        for (int i = 0; i < K; ++i)
            sum += val[std::size_t(i)];
        if (load)
            for (int i = 0; i < K; ++i)
                load->add(layerIndex, idx[std::size_t(i)]);
        for (int i = 0; i < K; ++i)
            perExpert[std::size_t(idx[std::size_t(i)])].push_back(
                { t, renormalise ? val[std::size_t(i)] / sum : val[std::size_t(i)] });
    }
    routerTime.stop();
    if (T == 1) {
        // Ascending expert order: the same sum, term by term, as the batched path.
        std::vector<std::pair<int, float>> chosen;
        for (std::int64_t e = 0; e < E; ++e)
            if (!perExpert[std::size_t(e)].empty())
                chosen.push_back({ int(e), perExpert[std::size_t(e)][0].second });
        routedExpertsOneToken(ctx, m, x, chosen, out);
    } else {
        expertsForBatch(ctx, m, x, perExpert, out);
    }
    if (m.hasShared())
        sharedExpert(ctx, m, x, out);
}

} // namespace cw::engine
