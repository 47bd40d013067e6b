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

// One token through its selected experts, given in ascending expert order with their
// weights; out[H] = sum_k weight_k * down_k(silu(gate_k x) * up_k x).
void expertsForOneToken(const StepContext& ctx, const MoeWeights& m, const float* x,
    const std::vector<std::pair<int, float>>& chosen, float* out)
{
    const auto& hp = *ctx.hp;
    const std::int64_t H = hp.hiddenSize, ffn = hp.expertFfnSize;
    const std::int64_t K = std::int64_t(chosen.size());
    std::vector<WeightMatrix> gate, up, down;
    for (const auto& [e, w] : chosen) {
        gate.push_back(m.gate.expert(e));
        up.push_back(m.up.expert(e));
        down.push_back(m.down.expert(e));
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

// Tokens grouped per expert: each expert's matrices are read once for its tokens.
void expertsForBatch(const StepContext& ctx, const MoeWeights& m, const float* x,
    const std::vector<std::vector<std::pair<std::int64_t, float>>>& perExpert, float* out)
{
    const auto& hp = *ctx.hp;
    const std::int64_t T = ctx.rows, H = hp.hiddenSize, ffn = hp.expertFfnSize;
    std::fill(out, out + T * H, 0.0f);
    auto& xe = ctx.workspace->expertInput;
    auto& gate = ctx.workspace->expertGate;
    auto& up = ctx.workspace->expertUp;
    auto& down = ctx.workspace->expertDown;
    for (std::int64_t e = 0; e < std::int64_t(perExpert.size()); ++e) {
        const auto& list = perExpert[std::size_t(e)];
        if (list.empty())
            continue;
        const std::int64_t n = std::int64_t(list.size());
        PartTimer gateUpTime(ctx.timers, StepPart::ExpertsGateUp);
        xe.resize(std::size_t(n * H));
        for (std::int64_t i = 0; i < n; ++i)
            std::memcpy(xe.data() + i * H, x + list[std::size_t(i)].first * H,
                std::size_t(H) * sizeof(float));
        gate.resize(std::size_t(n * ffn));
        up.resize(std::size_t(n * ffn));
        down.resize(std::size_t(n * H));
        const WeightMatrix gateE = m.gate.expert(e), upE = m.up.expert(e);
        const Projection gateUp[] = { { &gateE, gate.data() }, { &upE, up.data() } };
        linearMany(ctx, gateUp, xe.data(), n);
        ops::siluMul(up.data(), gate.data(), n * ffn);
        gateUpTime.stop();
        PartTimer downTime(ctx.timers, StepPart::ExpertsDown);
        linear(ctx, m.down.expert(e), up.data(), n, down.data());
        for (std::int64_t i = 0; i < n; ++i) {
            float* o = out + list[std::size_t(i)].first * H;
            const float w = list[std::size_t(i)].second;
            const float* dn = down.data() + i * H;
            for (std::int64_t c = 0; c < H; ++c)
                o[c] += w * dn[c];
        }
    }
}

void sharedExpert(const StepContext& ctx, const MoeWeights& m, const float* x, float* out)
{
    PartTimer time(ctx.timers, StepPart::SharedExpert);
    const auto& hp = *ctx.hp;
    const std::int64_t T = ctx.rows, H = hp.hiddenSize, sh = m.sharedUp.rows;
    std::vector<float> gate(static_cast<std::size_t>(T * sh)), up(static_cast<std::size_t>(T * sh)),
        down(static_cast<std::size_t>(T * H));
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

void moeLayer(
    const StepContext& ctx, const LayerWeights& layer, bool renormalise, const float* x, float* out)
{
    const auto& hp = *ctx.hp;
    const auto& m = layer.moe;
    const std::int64_t T = ctx.rows, E = hp.numExperts;
    const int K = int(hp.numExpertsPerToken);
    PartTimer routerTime(ctx.timers, StepPart::Router);
    std::vector<float> logits(static_cast<std::size_t>(T * E));
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
        expertsForOneToken(ctx, m, x, chosen, out);
    } else {
        expertsForBatch(ctx, m, x, perExpert, out);
    }
    if (m.hasShared())
        sharedExpert(ctx, m, x, out);
}

} // namespace cw::engine
