// The mixture-of-experts entry points (kernels/cuda/moe) against the CPU's arithmetic
// (ops::softmax and ops::topK, dotRow on the same blocks, silu, the ascending-expert sum of
// engine/models/moe_layer.cpp): the router's softmax and top-k and its fused decode form, the
// routed experts through the dispatch and through each of its paths (decode, direct, int8,
// grouped mat-vec, grouped tiles) at 4..256 experts, top-1..10 and token counts across
// kDecodeMaxTokens (32) and kGroupedMatVecMaxTokens (128), the grouping of pairs
// by expert (gather) and the combine back into token rows (scatter), and the shared expert's
// gate.
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/quant/dequantize.h"
#include "kernels/cpu/quant/dot.h"
#include "kernels/cuda/moe/moe_experts.h"
#include "kernels/cuda/moe/moe_paths.h"
#include "kernels/cuda/ops/row_ops.h"
#include "tests/gpu/backend_ops/backend_ops.h"
#include "tests/gpu/quant/quant_test_support.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>

namespace cw::backend_ops {
namespace {

using kernels::TensorType;
using kernels::cuda::DeviceExpertStack;
namespace moe = kernels::cuda::moe;

const char* typeName(TensorType type)
{
    return kernels::cuda::test::typeName(type);
}

// The CPU router: softmax, top-k (ties to the lower index), optional renormalisation.
void cpuRouter(const std::vector<float>& logits, std::int64_t tokens, std::int64_t experts, int k,
    bool renormalise, std::vector<std::int32_t>& ids, std::vector<float>& weights,
    std::vector<float>* probabilities = nullptr)
{
    ids.assign(std::size_t(tokens * k), 0);
    weights.assign(ids.size(), 0.0f);
    if (probabilities)
        probabilities->assign(std::size_t(tokens * experts), 0.0f);
    std::vector<int> idx(static_cast<std::size_t>(k));
    for (std::int64_t t = 0; t < tokens; ++t) {
        std::vector<float> p(logits.begin() + t * experts, logits.begin() + (t + 1) * experts);
        kernels::ops::softmax(p.data(), experts);
        if (probabilities)
            std::copy(p.begin(), p.end(), probabilities->begin() + t * experts);
        kernels::ops::topK(p.data(), experts, k, idx.data(), weights.data() + t * k);
        float sum = 0.0f;
        for (int j = 0; j < k; ++j)
            sum += weights[std::size_t(t * k + j)];
        for (int j = 0; j < k; ++j) {
            ids[std::size_t(t * k + j)] = idx[std::size_t(j)];
            if (renormalise)
                weights[std::size_t(t * k + j)] /= sum;
        }
    }
}

void runRouterTopK(
    CaseContext& ctx, std::int64_t tokens, std::int64_t experts, int k, bool renormalise, bool ties)
{
    auto logits = randomFloats(std::size_t(tokens * experts), ctx.rng(), 2.0f);
    if (ties) // a coarse grid: many equal logits, so equal probabilities
        for (float& v : logits)
            v = std::round(v * 2.0f) / 2.0f;
    std::vector<std::int32_t> wantIds;
    std::vector<float> wantW;
    cpuRouter(logits, tokens, experts, k, renormalise, wantIds, wantW);
    auto dLogits = DeviceBuffer::of(logits);
    DeviceBuffer ids(wantIds.size() * 4), w(wantW.size() * 4);
    BO_CUDA_OK(dLogits.error());
    BO_CUDA_OK(ids.error());
    BO_CUDA_OK(w.error());
    auto launch = [&](cudaStream_t s) {
        return kernels::cuda::routerTopK(dLogits.get<float>(), tokens, experts, k, renormalise,
            ids.get<std::int32_t>(), w.get<float>(), s);
    };
    BO_CUDA_OK(launch(ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<std::int32_t> gotIds;
    std::vector<float> gotW;
    BO_CUDA_OK(ids.download(gotIds));
    BO_CUDA_OK(w.download(gotW));
    // The same logits: the same choices, ties to the lower expert, exactly.
    ctx.checkExact("ids", gotIds, wantIds, rowsOf(k, "token", "choice"));
    ctx.check("weights", gotW, wantW, { 1e-5, 1e-5 }, rowsOf(k, "token", "choice"));
    ctx.measure(4.0 * double(tokens) * double(experts + 2 * k), launch);
}

// The fused decode router: logits = router x (f32 router), then the top-k.
void runRouterLogitsTopK(
    CaseContext& ctx, std::int64_t tokens, std::int64_t experts, std::int64_t hidden, int k)
{
    const auto router
        = randomFloats(std::size_t(experts * hidden), ctx.rng(), 2.5f / std::sqrt(float(hidden)));
    const auto x = randomFloats(std::size_t(tokens * hidden), ctx.rng());
    auto dRouter = DeviceBuffer::of(router);
    auto dx = DeviceBuffer::of(x);
    DeviceBuffer counter(sizeof(unsigned)), logits(std::size_t(tokens * experts) * 4),
        ids(std::size_t(tokens * k) * 4), w(std::size_t(tokens * k) * 4);
    BO_CUDA_OK(dRouter.error());
    BO_CUDA_OK(cudaMemset(counter.get(), 0, sizeof(unsigned)));
    kernels::cuda::DeviceMatrix m { TensorType::F32, dRouter.get(), std::size_t(hidden) * 4,
        experts, hidden };
    if (!kernels::cuda::routerFuses(m, tokens)) {
        ctx.skip("routerFuses is false for this router (the dispatch takes linear + routerTopK)");
        return;
    }
    auto launch = [&](cudaStream_t s) {
        return kernels::cuda::routerLogitsTopK(m, dx.get<float>(), hidden, tokens,
            logits.get<float>(), k, true, ids.get<std::int32_t>(), w.get<float>(),
            counter.get<unsigned>(), s);
    };
    BO_CUDA_OK(launch(ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<float> wantLogits(std::size_t(tokens * experts));
    for (std::int64_t t = 0; t < tokens; ++t)
        kernels::quant::matVec(TensorType::F32, router.data(), std::size_t(hidden) * 4, experts,
            hidden, x.data() + t * hidden, wantLogits.data() + t * experts, nullptr);
    std::vector<std::int32_t> wantIds, gotIds;
    std::vector<float> wantW, gotW, gotLogits, probabilities;
    cpuRouter(wantLogits, tokens, experts, k, true, wantIds, wantW, &probabilities);
    BO_CUDA_OK(logits.download(gotLogits));
    BO_CUDA_OK(ids.download(gotIds));
    BO_CUDA_OK(w.download(gotW));
    ctx.check("logits", gotLogits, wantLogits, { 2e-5, 0.0 }, rowsOf(experts, "token", "expert"));
    // The logits differ from the CPU's by float rounding: a choice may differ only where the
    // CPU's probabilities of the two experts are equal within that rounding.
    for (std::size_t i = 0; i < gotIds.size(); ++i) {
        const std::int64_t t = std::int64_t(i) / k;
        const std::int32_t g = gotIds[i];
        if (g != wantIds[i] && g >= 0 && g < experts) {
            const float pg = probabilities[std::size_t(t * experts + g)];
            const float pw = probabilities[std::size_t(t * experts + wantIds[i])];
            if (std::fabs(pg - pw) <= 1e-5f * std::max(pg, pw))
                gotIds[i] = wantIds[i];
        }
    }
    ctx.checkExact("ids (near ties forgiven)", gotIds, wantIds, rowsOf(k, "token", "choice"));
    ctx.check("weights", gotW, wantW, { 1e-4, 0.0 }, rowsOf(k, "token", "choice"));
    std::vector<unsigned> left;
    BO_CUDA_OK(counter.download(left));
    ctx.checkExact("blocksDone counter left at zero", { std::int32_t(left[0]) }, { 0 });
    ctx.measure(4.0 * double(experts * hidden + tokens * (hidden + experts)), launch);
}

// Host and device copies of one expert stack.
struct Stack {
    TensorType type;
    std::int64_t experts = 0, rows = 0, cols = 0;
    std::size_t rowStride = 0;
    std::vector<std::uint8_t> host;
    DeviceBuffer device;
    const std::uint8_t* row(std::int64_t e, std::int64_t r) const
    {
        return host.data() + (std::size_t(e) * std::size_t(rows) + std::size_t(r)) * rowStride;
    }
    DeviceExpertStack onDevice() const
    {
        DeviceExpertStack d;
        d.type = type;
        d.data = device.get();
        d.expertStride = rowStride * std::size_t(rows);
        d.rowStride = rowStride;
        d.rows = rows;
        d.cols = cols;
        d.experts = experts;
        return d;
    }
};

Stack randomStack(
    TensorType type, std::int64_t experts, std::int64_t rows, std::int64_t cols, std::mt19937& rng)
{
    Stack s;
    s.type = type;
    s.experts = experts;
    s.rows = rows;
    s.cols = cols;
    s.rowStride = kernels::cuda::test::bytesPerRow(type, cols);
    s.host = kernels::cuda::test::randomMatrix(type, experts * rows, cols, s.rowStride, rng);
    s.device = DeviceBuffer::of(s.host);
    return s;
}

// The table visits the cases of one geometry one after another: one cached stack per role
// (gate, up, down) spares quantizing the same stack again for every token count.
const Stack& cachedStack(
    int role, TensorType type, std::int64_t experts, std::int64_t rows, std::int64_t cols)
{
    static std::unique_ptr<Stack> slots[3];
    std::unique_ptr<Stack>& slot = slots[role];
    if (!slot || slot->type != type || slot->experts != experts || slot->rows != rows
        || slot->cols != cols) {
        slot.reset();
        std::mt19937 rng(std::uint32_t(role * 1000003 + experts * 7919 + rows * 31 + cols)
            + std::uint32_t(type));
        slot = std::make_unique<Stack>(randomStack(type, experts, rows, cols, rng));
    }
    return *slot;
}

// k distinct experts per token, skewed towards low numbers (some experts get many tokens, and
// so several tiles, some none), with weights that sum to one.
void randomChoices(std::int64_t tokens, std::int64_t experts, int k, std::mt19937& rng,
    std::vector<std::int32_t>& ids, std::vector<float>& w)
{
    ids.resize(std::size_t(tokens * k));
    w.resize(ids.size());
    std::uniform_real_distribution<float> u(0.05f, 1.0f);
    std::vector<std::int32_t> all(static_cast<std::size_t>(experts));
    for (std::int64_t t = 0; t < tokens; ++t) {
        std::iota(all.begin(), all.end(), 0);
        for (int j = 0; j < k; ++j) {
            std::uniform_int_distribution<int> pick(
                j, int(std::min<std::int64_t>(experts - 1, j + 12)));
            std::swap(all[std::size_t(j)], all[std::size_t(pick(rng))]);
        }
        std::shuffle(all.begin(), all.begin() + k, rng);
        float sum = 0.0f;
        for (int j = 0; j < k; ++j) {
            ids[std::size_t(t * k + j)] = all[std::size_t(j)];
            w[std::size_t(t * k + j)] = u(rng);
            sum += w[std::size_t(t * k + j)];
        }
        for (int j = 0; j < k; ++j)
            w[std::size_t(t * k + j)] /= sum;
    }
}

std::vector<float> cpuExperts(const std::vector<float>& x, std::int64_t tokens, int k,
    const std::vector<std::int32_t>& ids, const std::vector<float>& w, const Stack& gate,
    const Stack& up, const Stack& down, kernels::ThreadPool* pool)
{
    using kernels::quant::dotRow;
    const std::int64_t hidden = gate.cols, ffn = gate.rows;
    std::vector<float> out(std::size_t(tokens * hidden), 0.0f);
    auto token = [&](std::int64_t t) {
        std::vector<float> g(static_cast<std::size_t>(ffn)), u(static_cast<std::size_t>(ffn));
        std::vector<std::pair<int, float>> chosen;
        for (int j = 0; j < k; ++j)
            chosen.push_back({ ids[std::size_t(t * k + j)], w[std::size_t(t * k + j)] });
        std::sort(chosen.begin(), chosen.end());
        const float* xt = x.data() + t * hidden;
        float* o = out.data() + t * hidden;
        for (const auto& [e, weight] : chosen) {
            for (std::int64_t r = 0; r < ffn; ++r) {
                g[std::size_t(r)] = dotRow(gate.type, gate.row(e, r), xt, hidden);
                u[std::size_t(r)] = dotRow(up.type, up.row(e, r), xt, hidden);
            }
            kernels::ops::siluMul(u.data(), g.data(), ffn);
            for (std::int64_t c = 0; c < hidden; ++c)
                o[c] += weight * dotRow(down.type, down.row(e, c), u.data(), ffn);
        }
    };
    if (pool)
        pool->parallelFor(tokens, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t t = begin; t < end; ++t)
                token(t);
        });
    else
        for (std::int64_t t = 0; t < tokens; ++t)
            token(t);
    return out;
}

enum class ExpertPath {
    Dispatch,
    Decode,
    DecodeDirect,
    DecodeInt8,
    GroupedMatVec,
    TilesF32,
    TilesBf16
};

const char* pathName(ExpertPath p)
{
    switch (p) {
    case ExpertPath::Dispatch:
        return "routedExperts";
    case ExpertPath::Decode:
        return "routedExpertsDecode";
    case ExpertPath::DecodeDirect:
        return "routedExpertsDecodeDirect";
    case ExpertPath::DecodeInt8:
        return "routedExpertsDecodeInt8";
    case ExpertPath::GroupedMatVec:
        return "routedExpertsGroupedMatVec";
    case ExpertPath::TilesF32:
        return "routedExpertsGroupedTiles";
    case ExpertPath::TilesBf16:
        return "routedExpertsGroupedTiles";
    }
    return "?";
}

struct ExpertCase {
    TensorType gateUp, down;
    std::int64_t experts, hidden, ffn;
    int k;
    std::int64_t tokens;
    ExpertPath path;
    GemmPrecision precision = GemmPrecision::Float32; // the dispatch's
};

void runExperts(CaseContext& ctx, const ExpertCase& c)
{
    const Stack& gate = cachedStack(0, c.gateUp, c.experts, c.ffn, c.hidden);
    const Stack& up = cachedStack(1, c.gateUp, c.experts, c.ffn, c.hidden);
    const Stack& down = cachedStack(2, c.down, c.experts, c.hidden, c.ffn);
    BO_CUDA_OK(gate.device.error());
    BO_CUDA_OK(up.device.error());
    BO_CUDA_OK(down.device.error());
    const auto x = randomFloats(std::size_t(c.tokens * c.hidden), ctx.rng());
    std::vector<std::int32_t> ids;
    std::vector<float> w;
    randomChoices(c.tokens, c.experts, c.k, ctx.rng(), ids, w);
    const auto want = cpuExperts(x, c.tokens, c.k, ids, w, gate, up, down, ctx.pool());

    const DeviceExpertStack g = gate.onDevice(), u = up.onDevice(), d = down.onDevice();
    std::size_t scratchBytes = kernels::cuda::routedExpertsScratchBytes(c.tokens, c.k, g, d,
        c.path == ExpertPath::Dispatch ? c.precision : GemmPrecision::BFloat16);
    if (c.path != ExpertPath::Dispatch) // the paths called one by one at any size
        scratchBytes = std::max({ scratchBytes,
            moe::groupedLayout(nullptr, c.tokens, c.k, c.experts, c.ffn, c.hidden, true).bytes,
            moe::groupedLayout(nullptr, c.tokens, c.k, c.experts, c.ffn, c.hidden, false).bytes,
            moe::intDecodeScratchBytes(c.tokens, c.k, c.ffn, c.hidden),
            moe::decodeScratchBytes(c.tokens, c.k, c.ffn) });
    auto dx = DeviceBuffer::of(x);
    auto dIds = DeviceBuffer::of(ids);
    auto dW = DeviceBuffer::of(w);
    DeviceBuffer out(want.size() * 4), scratch(scratchBytes);
    BO_CUDA_OK(dx.error());
    BO_CUDA_OK(out.error());
    BO_CUDA_OK(scratch.error());
    const float* px = dx.get<float>();
    const auto* pi = dIds.get<std::int32_t>();
    const float* pw = dW.get<float>();
    float* po = out.get<float>();
    auto launch = [&](cudaStream_t s) -> cudaError_t {
        const auto sc = scratch.scratch();
        switch (c.path) {
        case ExpertPath::Dispatch:
            return kernels::cuda::routedExperts(
                px, c.tokens, pi, pw, c.k, g, u, d, po, c.precision, sc, ctx.cublas(), s);
        case ExpertPath::Decode:
            return moe::routedExpertsDecode(px, c.tokens, pi, pw, c.k, g, u, d, po, sc, s);
        case ExpertPath::DecodeDirect:
            return moe::routedExpertsDecodeDirect(px, c.tokens, pi, pw, c.k, g, u, d, po, sc, s);
        case ExpertPath::DecodeInt8:
            return moe::routedExpertsDecodeInt8(px, c.tokens, pi, pw, c.k, g, u, d, po, sc, s);
        case ExpertPath::GroupedMatVec:
            return moe::routedExpertsGroupedMatVec(px, c.tokens, pi, pw, c.k, g, u, d, po, sc, s);
        case ExpertPath::TilesF32:
            return moe::routedExpertsGroupedTiles(
                px, c.tokens, pi, pw, c.k, g, u, d, po, GemmPrecision::Float32, sc, s);
        case ExpertPath::TilesBf16:
            return moe::routedExpertsGroupedTiles(
                px, c.tokens, pi, pw, c.k, g, u, d, po, GemmPrecision::BFloat16, sc, s);
        }
        return cudaErrorInvalidValue;
    };
    const cudaError_t e = launch(ctx.stream());
    if (e == cudaErrorNotSupported && c.path != ExpertPath::Dispatch) {
        cudaGetLastError();
        ctx.skip(
            std::string(pathName(c.path)) + " does not take these stacks (cudaErrorNotSupported)");
        return;
    }
    BO_CUDA_OK(e);
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<float> got;
    BO_CUDA_OK(out.download(got));
    // f32 paths: float rounding in another order. bf16 tiles and the int8 products (the
    // dispatch takes one of them at bf16 for most stacks): 1e-2 relative, as tests/gpu/moe.
    const bool approximate = c.path == ExpertPath::TilesBf16 || c.path == ExpertPath::DecodeInt8
        || (c.path == ExpertPath::Dispatch && c.precision != GemmPrecision::Float32);
    ctx.check("out", got, want, approximate ? Tolerance { 5e-2, 1.5e-2 } : Tolerance { 5e-5, 1e-5 },
        rowsOf(c.hidden, "token", "col"));
    const double weightBytes = double(std::min<std::int64_t>(c.experts, c.tokens * c.k))
        * (double(gate.rowStride + up.rowStride) * double(c.ffn)
            + double(down.rowStride) * double(c.hidden));
    ctx.measure(weightBytes + 8.0 * double(c.tokens * c.hidden), launch);
}

// The decode step's fused form: the norm before the MoE block writes its rows also in two int8
// planes (addRmsNormRowsQuantized's twoPlanes), and the integer expert path takes them
// (ExpertDecodeAids) instead of quantizing x itself; against the CPU's norm then experts.
void runAidedExperts(CaseContext& ctx, const ExpertCase& c)
{
    if (!kernels::cuda::addRmsNormQuantizes(c.hidden)) {
        ctx.skip("addRmsNormQuantizes(" + std::to_string(c.hidden) + ") is false");
        return;
    }
    const Stack& gate = cachedStack(0, c.gateUp, c.experts, c.ffn, c.hidden);
    const Stack& up = cachedStack(1, c.gateUp, c.experts, c.ffn, c.hidden);
    const Stack& down = cachedStack(2, c.down, c.experts, c.hidden, c.ffn);
    BO_CUDA_OK(gate.device.error());
    BO_CUDA_OK(down.device.error());
    const float eps = 1e-6f;
    const auto hidden = randomFloats(std::size_t(c.tokens * c.hidden), ctx.rng());
    const auto normWeight = uniformFloats(std::size_t(c.hidden), ctx.rng(), 0.5f, 1.5f);
    std::vector<float> normed(hidden.size());
    for (std::int64_t t = 0; t < c.tokens; ++t)
        kernels::ops::rmsNorm(hidden.data() + t * c.hidden, normWeight.data(), c.hidden, eps,
            normed.data() + t * c.hidden);
    std::vector<std::int32_t> ids;
    std::vector<float> w;
    randomChoices(c.tokens, c.experts, c.k, ctx.rng(), ids, w);
    const auto want = cpuExperts(normed, c.tokens, c.k, ids, w, gate, up, down, ctx.pool());

    const DeviceExpertStack g = gate.onDevice(), u = up.onDevice(), d = down.onDevice();
    auto dHidden = DeviceBuffer::of(hidden);
    auto dNormWeight = DeviceBuffer::of(normWeight);
    auto dIds = DeviceBuffer::of(ids);
    auto dW = DeviceBuffer::of(w);
    DeviceBuffer dNormed(hidden.size() * 4), q1(hidden.size()), s1(hidden.size() / 32 * 16),
        two(kernels::cuda::expertInputRowsBytes(c.tokens, c.hidden)),
        scratch(moe::intDecodeScratchBytes(c.tokens, c.k, c.ffn, c.hidden)), out(want.size() * 4);
    BO_CUDA_OK(scratch.error());
    BO_CUDA_OK(out.error());
    kernels::cuda::ExpertDecodeAids aids;
    aids.x2 = kernels::cuda::expertInputRowsAt(two.get<std::byte>(), c.tokens, c.hidden);
    auto launch = [&](cudaStream_t s) -> cudaError_t {
        const cudaError_t e = kernels::cuda::addRmsNormRowsQuantized(dHidden.get<float>(), nullptr,
            dNormWeight.get<float>(), c.tokens, c.hidden, eps, dNormed.get<float>(),
            { q1.get<std::int8_t>(), s1.get<float4>() }, s, {}, aids.x2);
        if (e != cudaSuccess)
            return e;
        return moe::routedExpertsDecodeInt8(dNormed.get<float>(), c.tokens,
            dIds.get<std::int32_t>(), dW.get<float>(), c.k, g, u, d, out.get<float>(),
            scratch.scratch(), s, aids);
    };
    const cudaError_t e = launch(ctx.stream());
    if (e == cudaErrorNotSupported) {
        cudaGetLastError();
        ctx.skip("routedExpertsDecodeInt8 does not take these stacks (cudaErrorNotSupported)");
        return;
    }
    BO_CUDA_OK(e);
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<float> got;
    BO_CUDA_OK(out.download(got));
    ctx.check("out", got, want, { 5e-2, 1.5e-2 }, rowsOf(c.hidden, "token", "col"));
}

std::string expertShape(const ExpertCase& c)
{
    std::string s = std::string(typeName(c.gateUp)) + "/" + typeName(c.down) + " experts "
        + std::to_string(c.experts) + " top-" + std::to_string(c.k) + " hidden "
        + std::to_string(c.hidden) + " ffn " + std::to_string(c.ffn) + " tokens "
        + std::to_string(c.tokens);
    if (c.path == ExpertPath::Dispatch)
        s += std::string(" ") + precisionName(c.precision);
    if (c.path == ExpertPath::TilesBf16)
        s += " bf16 tiles";
    if (c.path == ExpertPath::TilesF32)
        s += " f32 tiles";
    return s;
}

// groupPairsByExpert against a CPU count and scan, then combineExpertRows of random rows in
// that sorted order against the ascending-expert weighted sum.
void runGroupAndCombine(CaseContext& ctx, std::int64_t tokens, std::int64_t experts, int k,
    std::int64_t hidden, int tileRows)
{
    std::vector<std::int32_t> ids;
    std::vector<float> w;
    randomChoices(tokens, experts, k, ctx.rng(), ids, w);
    const std::int64_t pairs = tokens * k;
    const auto probe = moe::groupedLayout(nullptr, tokens, k, experts, 8, hidden, false);
    DeviceBuffer base(probe.bytes);
    BO_CUDA_OK(base.error());
    const auto layout
        = moe::groupedLayout(base.get<std::byte>(), tokens, k, experts, 8, hidden, false);
    auto dIds = DeviceBuffer::of(ids);
    auto dW = DeviceBuffer::of(w);
    BO_CUDA_OK(moe::groupPairsByExpert(
        dIds.get<std::int32_t>(), pairs, experts, tileRows, layout, ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    auto download = [&](const std::int32_t* p, std::size_t n) {
        std::vector<std::int32_t> v(n);
        EXPECT_EQ(cudaMemcpy(v.data(), p, n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        return v;
    };
    std::vector<std::int32_t> wantCounts(std::size_t(experts), 0), wantOffsets, wantTiles,
        wantActive;
    for (const std::int32_t id : ids)
        ++wantCounts[std::size_t(id)];
    std::int32_t offset = 0, tiles = 0;
    for (std::int64_t e = 0; e < experts; ++e) {
        wantOffsets.push_back(offset);
        wantTiles.push_back(tiles);
        if (wantCounts[std::size_t(e)] > 0)
            wantActive.push_back(std::int32_t(e));
        offset += wantCounts[std::size_t(e)];
        tiles += (wantCounts[std::size_t(e)] + tileRows - 1) / tileRows;
    }
    wantOffsets.push_back(offset);
    wantTiles.push_back(tiles);
    ctx.checkExact("counts", download(layout.counts, std::size_t(experts)), wantCounts,
        rowsOf(experts, "-", "expert"));
    ctx.checkExact("offsets", download(layout.offsets, std::size_t(experts + 1)), wantOffsets);
    ctx.checkExact(
        "tile offsets", download(layout.tileOffsets, std::size_t(experts + 1)), wantTiles);
    const auto activeCount = download(layout.activeCount, 1);
    ctx.checkExact("active count", activeCount, { std::int32_t(wantActive.size()) });
    ctx.checkExact("active experts", download(layout.activeExperts, wantActive.size()), wantActive);
    // Each expert's sorted range holds exactly its pairs (any order); pairPos inverts it.
    const auto sorted = download(layout.sortedPair, std::size_t(pairs));
    const auto pairPos = download(layout.pairPos, std::size_t(pairs));
    std::vector<std::int32_t> gotExpertOfPosition(static_cast<std::size_t>(pairs)),
        wantExpertOfPosition, inverse(static_cast<std::size_t>(pairs));
    for (std::int64_t e = 0; e < experts; ++e)
        for (int i = 0; i < wantCounts[std::size_t(e)]; ++i)
            wantExpertOfPosition.push_back(std::int32_t(e));
    for (std::int64_t p = 0; p < pairs; ++p) {
        const std::int32_t pair = sorted[std::size_t(p)];
        gotExpertOfPosition[std::size_t(p)]
            = pair >= 0 && pair < pairs ? ids[std::size_t(pair)] : -1;
        const std::int32_t pos = pairPos[std::size_t(p)];
        inverse[std::size_t(p)] = pos >= 0 && pos < pairs ? sorted[std::size_t(pos)] : -1;
    }
    std::vector<std::int32_t> identity(static_cast<std::size_t>(pairs));
    std::iota(identity.begin(), identity.end(), 0);
    ctx.checkExact("expert of each sorted position", gotExpertOfPosition, wantExpertOfPosition);
    ctx.checkExact("sortedPair[pairPos[p]] == p", inverse, identity);

    // The combine: down rows in sorted order, summed per token in ascending expert order
    // (read through the device's pairPos, which must be a permutation first).
    for (const std::int32_t pos : pairPos)
        if (pos < 0 || pos >= pairs)
            return; // reported by the sortedPair[pairPos[p]] check

    const auto rows = randomFloats(std::size_t(pairs * hidden), ctx.rng());
    BO_CUDA_OK(cudaMemcpy(layout.down, rows.data(), rows.size() * 4, cudaMemcpyHostToDevice));
    DeviceBuffer out(std::size_t(tokens * hidden) * 4);
    auto launch = [&](cudaStream_t s) {
        return moe::combineExpertRows(layout, tokens, k, dIds.get<std::int32_t>(), dW.get<float>(),
            hidden, out.get<float>(), s);
    };
    BO_CUDA_OK(launch(ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<float> got, want(std::size_t(tokens * hidden), 0.0f);
    BO_CUDA_OK(out.download(got));
    for (std::int64_t t = 0; t < tokens; ++t) {
        std::vector<std::pair<std::int32_t, int>> order;
        for (int j = 0; j < k; ++j)
            order.push_back({ ids[std::size_t(t * k + j)], j });
        std::sort(order.begin(), order.end());
        for (const auto& [e, j] : order) {
            const std::int32_t pos = pairPos[std::size_t(t * k + j)];
            const float weight = w[std::size_t(t * k + j)];
            for (std::int64_t c = 0; c < hidden; ++c)
                want[std::size_t(t * hidden + c)] += weight * rows[std::size_t(pos * hidden + c)];
        }
    }
    // The same products in the same order: equal up to contraction into FMAs.
    ctx.check("combined rows", got, want, { 1e-6, 0.0 }, rowsOf(hidden, "token", "col"));
    ctx.measure(4.0 * double(pairs * hidden + tokens * hidden), launch);
}

void runSharedExpert(CaseContext& ctx, std::int64_t tokens, std::int64_t hidden)
{
    const auto x = randomFloats(std::size_t(tokens * hidden), ctx.rng());
    const auto gateWeight = randomFloats(std::size_t(hidden), ctx.rng(), 0.05f);
    const auto down = randomFloats(std::size_t(tokens * hidden), ctx.rng());
    auto want = randomFloats(std::size_t(tokens * hidden), ctx.rng());
    auto dx = DeviceBuffer::of(x);
    auto dGate = DeviceBuffer::of(gateWeight);
    auto dDown = DeviceBuffer::of(down);
    auto dOut = DeviceBuffer::of(want);
    BO_CUDA_OK(dOut.error());
    BO_CUDA_OK(kernels::cuda::addGatedSharedExpert(dx.get<float>(), dGate.get<float>(),
        dDown.get<float>(), tokens, hidden, dOut.get<float>(), ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    for (std::int64_t t = 0; t < tokens; ++t) { // engine/models/moe_layer.cpp sharedExpert
        float dot = 0.0f;
        for (std::int64_t c = 0; c < hidden; ++c)
            dot += gateWeight[std::size_t(c)] * x[std::size_t(t * hidden + c)];
        const float s = kernels::ops::sigmoid(dot);
        for (std::int64_t c = 0; c < hidden; ++c)
            want[std::size_t(t * hidden + c)] += s * down[std::size_t(t * hidden + c)];
    }
    std::vector<float> got;
    BO_CUDA_OK(dOut.download(got));
    ctx.check("out", got, want, { 1e-5, 1e-6 }, rowsOf(hidden, "token", "col"));
    ctx.measure(4.0 * double(4 * tokens * hidden), [&](cudaStream_t s) {
        return kernels::cuda::addGatedSharedExpert(dx.get<float>(), dGate.get<float>(),
            dDown.get<float>(), tokens, hidden, dOut.get<float>(), s);
    });
}

void runSiluMul(CaseContext& ctx, std::int64_t n)
{
    auto x = randomFloats(std::size_t(n), ctx.rng(), 3.0f);
    const auto gate = randomFloats(std::size_t(n), ctx.rng(), 3.0f);
    auto dx = DeviceBuffer::of(x);
    auto dGate = DeviceBuffer::of(gate);
    BO_CUDA_OK(dx.error());
    BO_CUDA_OK(kernels::cuda::siluMul(dx.get<float>(), dGate.get<float>(), n, ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    kernels::ops::siluMul(x.data(), gate.data(), n);
    std::vector<float> got;
    BO_CUDA_OK(dx.download(got));
    ctx.check("x", got, x, { 1e-6, 1e-6 });
    ctx.measure(12.0 * double(n), [&](cudaStream_t s) {
        return kernels::cuda::siluMul(dx.get<float>(), dGate.get<float>(), n, s);
    });
}

} // namespace

void addMoeCases(CaseTable& table)
{
    // The router: 4..512 experts (over 256: the shared-memory rows), top-1..10, 1..300 tokens.
    for (const std::int64_t experts : { 4, 8, 60, 64, 128, 256, 257, 384, 512 })
        for (const int k : { 1, 2, 4, 8, 10 }) {
            if (k > experts)
                continue;
            for (const std::int64_t tokens : { 1, 3, 8, 9, 40, 300 })
                for (const bool renormalise : { true, false }) {
                    const bool quick = (tokens == 3 || tokens == 40) && renormalise
                        && (experts == 8 || experts == 256 || experts == 257) && (k == 2 || k == 8);
                    table.add("routerTopK",
                        "experts " + std::to_string(experts) + " top-" + std::to_string(k)
                            + " tokens " + std::to_string(tokens)
                            + (renormalise ? " renormalised" : ""),
                        quick, [=](CaseContext& ctx) {
                            runRouterTopK(ctx, tokens, experts, k, renormalise, false);
                        });
                }
        }
    for (const std::int64_t experts : { 16, 256, 384 })
        table.add("routerTopK", "experts " + std::to_string(experts) + " top-8 tokens 40 ties",
            experts == 16,
            [=](CaseContext& ctx) { runRouterTopK(ctx, 40, experts, 8, true, true); });
    // The fused decode router (f32, under 2048 experts), 1..8 tokens.
    for (const std::int64_t experts : { 4, 8, 64, 128, 256, 1000 })
        for (const std::int64_t hidden : { 64, 96, 256, 2048 })
            for (const std::int64_t tokens : { 1, 2, 5, 8 }) {
                const int k = int(std::min<std::int64_t>(experts, experts >= 64 ? 8 : 2));
                table.add("routerLogitsTopK",
                    "experts " + std::to_string(experts) + " hidden " + std::to_string(hidden)
                        + " top-" + std::to_string(k) + " tokens " + std::to_string(tokens),
                    (tokens == 1 || tokens == 5) && hidden == 96 && experts != 1000,
                    [=](CaseContext& ctx) {
                        runRouterLogitsTopK(ctx, tokens, experts, hidden, k);
                    });
            }

    // Routed experts. Geometries of the generated tiny models (hidden 64..256, small ffn: the
    // converter gives such rows Q8_0, Q5_0 or F16) and of the K-quant mixes (rows of 256).
    struct Geometry {
        TensorType gateUp, down;
        std::int64_t hidden, ffn;
    };
    const std::vector<Geometry> geometries { { TensorType::F32, TensorType::F32, 96, 32 },
        { TensorType::F32, TensorType::F32, 64, 64 }, { TensorType::F16, TensorType::F16, 128, 32 },
        { TensorType::BF16, TensorType::BF16, 96, 64 },
        { TensorType::Q8_0, TensorType::Q8_0, 96, 32 },
        { TensorType::Q8_0, TensorType::Q8_0, 256, 64 },
        { TensorType::Q5_0, TensorType::Q8_0, 128, 64 },
        { TensorType::Q4_K, TensorType::Q6_K, 256, 256 },
        { TensorType::Q5_K, TensorType::Q5_K, 256, 256 },
        { TensorType::Q6_K, TensorType::Q6_K, 512, 256 } };
    const std::vector<std::pair<std::int64_t, int>> routings { { 4, 1 }, { 8, 2 }, { 16, 4 },
        { 64, 8 }, { 64, 10 }, { 256, 8 } };
    const std::vector<std::int64_t> tokenCounts { 1, 3, 8, 9, 32, 33, 128, 129, 300, 647 };
    for (const Geometry& g : geometries)
        for (const auto& [experts, k] : routings)
            for (const std::int64_t tokens : tokenCounts) {
                if (experts * g.hidden * g.ffn > 256 * 256 * 256)
                    continue; // stacks that take longer to quantize than to test

                for (const GemmPrecision p : { GemmPrecision::Float32, GemmPrecision::BFloat16 }) {
                    const ExpertCase c { g.gateUp, g.down, experts, g.hidden, g.ffn, k, tokens,
                        ExpertPath::Dispatch, p };
                    const bool quick = (experts == 8 || experts == 64) && k != 10
                        && (tokens == 3 || tokens == 33 || tokens == 129)
                        && (g.gateUp == TensorType::F32 || g.gateUp == TensorType::Q8_0
                            || g.gateUp == TensorType::Q4_K);
                    table.add("routedExperts", expertShape(c), quick,
                        [c](CaseContext& ctx) { runExperts(ctx, c); });
                }
            }
    // Each path on its own, on every geometry, at sizes each serves and across its limits.
    const std::vector<std::pair<ExpertPath, std::vector<std::int64_t>>> paths {
        // 8,200 tokens at top-8: more pairs than a grid has rows (65,535), so the direct path
        // (the one stacks of two types take at any length) goes in slices.
        { ExpertPath::Decode, { 1, 8, 32 } }, { ExpertPath::DecodeDirect, { 1, 8, 33, 8200 } },
        { ExpertPath::DecodeInt8, { 1, 8, 32 } }, { ExpertPath::GroupedMatVec, { 9, 128, 129 } },
        { ExpertPath::TilesF32, { 33, 300 } }, { ExpertPath::TilesBf16, { 33, 300 } }
    };
    for (const Geometry& g : geometries)
        for (const auto& [path, counts] : paths)
            for (const std::int64_t tokens : counts) {
                if (tokens > 4096 && g.hidden > 128)
                    continue; // the CPU reference's time
                const ExpertCase c { g.gateUp, g.down, 64, g.hidden, g.ffn, 8, tokens, path };
                const bool quick = (tokens == counts.front() || tokens == 8200)
                    && g.gateUp == TensorType::Q8_0 && g.hidden == 96;
                table.add(pathName(path), expertShape(c), quick,
                    [c](CaseContext& ctx) { runExperts(ctx, c); });
            }
    // The norm's int8 planes handed to the integer decode path.
    for (const Geometry& g : geometries)
        for (const std::int64_t tokens : { 1, 3, 8 }) {
            if (g.hidden % 128 != 0)
                continue;
            const ExpertCase c { g.gateUp, g.down, 64, g.hidden, g.ffn, 8, tokens,
                ExpertPath::DecodeInt8 };
            table.add("routedExpertsDecodeInt8 (x from addRmsNormRowsQuantized)", expertShape(c),
                tokens == 3 && g.gateUp == TensorType::Q4_K,
                [c](CaseContext& ctx) { runAidedExperts(ctx, c); });
        }
    // Gather (pairs grouped by expert) and scatter (the combine).
    for (const std::int64_t experts : { 4, 8, 64, 256 })
        for (const int k : { 1, 2, 8, 10 }) {
            if (k > experts)
                continue;
            for (const std::int64_t tokens : { 1, 33, 647, 4097 })
                table.add("groupPairsByExpert + combineExpertRows",
                    "experts " + std::to_string(experts) + " top-" + std::to_string(k) + " tokens "
                        + std::to_string(tokens) + " hidden 96",
                    tokens == 647 && experts == 64 && k == 8,
                    [=](CaseContext& ctx) { runGroupAndCombine(ctx, tokens, experts, k, 96, 64); });
        }
    for (const std::int64_t tokens : { 1, 3, 40, 647 })
        for (const std::int64_t hidden : { 64, 96, 2048 })
            table.add("addGatedSharedExpert",
                "tokens " + std::to_string(tokens) + " hidden " + std::to_string(hidden),
                tokens == 3 && hidden == 96,
                [=](CaseContext& ctx) { runSharedExpert(ctx, tokens, hidden); });
    for (const std::int64_t n : { 1, 31, 1553, 3 * 512 + 17, 647 * 64 })
        table.add("siluMul", "n " + std::to_string(n), n == 1553,
            [=](CaseContext& ctx) { runSiluMul(ctx, n); });
}

} // namespace cw::backend_ops
