// routedExperts on the device against the CPU's own arithmetic (dotRow on the same blocks,
// silu, the ascending-expert sum of moe_layer.cpp) for every block type, decode and grouped
// token counts, f32 and bf16 products, separate and fused gate_up stacks.
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/quant/dot.h"
#include "kernels/cuda/moe/moe_experts.h"
#include "kernels/cuda/moe/moe_paths.h"
#include "kernels/cuda/quant/mat_vec.h"
#include "tests/gpu/moe/moe_test_support.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <string>

namespace cw::moe_test {
namespace {

using kernels::cuda::DeviceExpertStack;
using kernels::cuda::DeviceScratch;
using kernels::cuda::GemmPrecision;

constexpr std::int64_t kExperts = 32, kHidden = 512, kFfn = 256;
constexpr int kK = 8;

// Host and device copies of one expert stack (experts x rows x cols of `type`).
struct HostStack {
    TensorType type;
    std::int64_t rows, cols;
    std::size_t rowStride;
    std::vector<std::uint8_t> bytes;
    const std::uint8_t* row(std::int64_t e, std::int64_t r) const
    {
        return bytes.data() + (std::size_t(e) * std::size_t(rows) + std::size_t(r)) * rowStride;
    }
};

HostStack randomStack(TensorType type, std::int64_t rows, std::int64_t cols, std::mt19937& rng)
{
    HostStack s { type, rows, cols, std::size_t(*kernels::rowBytes(type, std::uint64_t(cols))),
        {} };
    s.bytes = randomMatrix(type, kExperts * rows, cols, rng);
    return s;
}

DeviceExpertStack deviceStack(
    const HostStack& s, const DeviceBuffer& data, std::int64_t rowOffset, std::int64_t rows)
{
    DeviceExpertStack d;
    d.type = s.type;
    d.data = data.as<void>();
    d.expertStride = s.rowStride * std::size_t(s.rows);
    d.rowStride = s.rowStride;
    d.rowOffset = rowOffset;
    d.rows = rows;
    d.cols = s.cols;
    d.experts = kExperts;
    return d;
}

// k distinct experts per token, skewed towards low expert numbers so that some experts get
// many tokens (several tiles) and some none.
void randomChoices(
    std::int64_t tokens, std::mt19937& rng, std::vector<std::int32_t>& ids, std::vector<float>& w)
{
    ids.resize(std::size_t(tokens * kK));
    w.resize(ids.size());
    std::uniform_real_distribution<float> u(0.05f, 1.0f);
    for (std::int64_t t = 0; t < tokens; ++t) {
        std::vector<std::int32_t> all(kExperts);
        std::iota(all.begin(), all.end(), 0);
        for (int j = 0; j < kK; ++j) {
            std::uniform_int_distribution<int> pick(
                j, int(std::min<std::int64_t>(kExperts - 1, j + 12)));
            std::swap(all[std::size_t(j)], all[std::size_t(pick(rng))]);
        }
        std::shuffle(all.begin(), all.begin() + kK, rng);
        float sum = 0.0f;
        for (int j = 0; j < kK; ++j) {
            ids[std::size_t(t * kK + j)] = all[std::size_t(j)];
            w[std::size_t(t * kK + j)] = u(rng);
            sum += w[std::size_t(t * kK + j)];
        }
        for (int j = 0; j < kK; ++j)
            w[std::size_t(t * kK + j)] /= sum;
    }
}

// The CPU's routed experts (engine/models/moe_layer.cpp) on the same blocks.
std::vector<float> cpuExperts(const std::vector<float>& x, std::int64_t tokens,
    const std::vector<std::int32_t>& ids, const std::vector<float>& w, const HostStack& gate,
    std::int64_t gateOffset, const HostStack& up, std::int64_t upOffset, const HostStack& down)
{
    using kernels::quant::dotRow;
    std::vector<float> out(std::size_t(tokens * kHidden), 0.0f);
    std::vector<float> g(kFfn), u(kFfn);
    for (std::int64_t t = 0; t < tokens; ++t) {
        std::vector<std::pair<int, float>> chosen;
        for (int j = 0; j < kK; ++j)
            chosen.push_back({ ids[std::size_t(t * kK + j)], w[std::size_t(t * kK + j)] });
        std::sort(chosen.begin(), chosen.end());
        const float* xt = x.data() + t * kHidden;
        float* o = out.data() + t * kHidden;
        for (const auto& [e, weight] : chosen) {
            for (std::int64_t r = 0; r < kFfn; ++r) {
                g[std::size_t(r)] = dotRow(gate.type, gate.row(e, gateOffset + r), xt, kHidden);
                u[std::size_t(r)] = dotRow(up.type, up.row(e, upOffset + r), xt, kHidden);
            }
            kernels::ops::siluMul(u.data(), g.data(), kFfn);
            for (std::int64_t c = 0; c < kHidden; ++c)
                o[c] += weight * dotRow(down.type, down.row(e, c), u.data(), kFfn);
        }
    }
    return out;
}

struct Case {
    TensorType gateUp;
    TensorType down;
    bool fused = false; // one gate_up stack, up at rowOffset ffn
    TensorType up = TensorType::F32; // used when `mixed`
    bool mixed = false;
};

// Every way routedExperts can run: the dispatch of the contract, and each internal path.
enum class Path {
    Dispatch,
    DispatchF32,
    Decode,
    DecodeDirect,
    GroupedMatVec,
    TilesF32,
    TilesBf16,
    DecodeInt8
};
constexpr Path kPaths[] = { Path::Dispatch, Path::DispatchF32, Path::Decode, Path::DecodeDirect,
    Path::GroupedMatVec, Path::TilesF32, Path::TilesBf16, Path::DecodeInt8 };
const char* const kPathNames[]
    = { "dispatch", "dispatchF32", "decode", "direct", "matvec", "tilesF32", "tilesBf16", "int8" };

cudaError_t callPath(Path path, const float* px, std::int64_t tokens, const std::int32_t* pi,
    const float* pw, const DeviceExpertStack& gate, const DeviceExpertStack& up,
    const DeviceExpertStack& down, float* po, GemmPrecision precision, DeviceScratch s,
    cudaStream_t stream)
{
    namespace moe = kernels::cuda::moe;
    cudaError_t err = cudaSuccess;
    switch (path) {
    case Path::Dispatch:
    case Path::DispatchF32:
        err = kernels::cuda::routedExperts(px, tokens, pi, pw, kK, gate, up, down, po,
            path == Path::DispatchF32 ? GemmPrecision::Float32 : precision, s, nullptr, stream);
        break;
    case Path::Decode:
        err = moe::routedExpertsDecode(px, tokens, pi, pw, kK, gate, up, down, po, s, stream);
        break;
    case Path::DecodeDirect:
        err = moe::routedExpertsDecodeDirect(px, tokens, pi, pw, kK, gate, up, down, po, s, stream);
        break;
    case Path::GroupedMatVec:
        err = moe::routedExpertsGroupedMatVec(
            px, tokens, pi, pw, kK, gate, up, down, po, s, stream);
        break;
    case Path::DecodeInt8:
        err = moe::routedExpertsDecodeInt8(px, tokens, pi, pw, kK, gate, up, down, po, s, stream);
        break;
    case Path::TilesF32:
    case Path::TilesBf16:
        err = moe::routedExpertsGroupedTiles(px, tokens, pi, pw, kK, gate, up, down, po,
            path == Path::TilesBf16 ? GemmPrecision::BFloat16 : GemmPrecision::Float32, s, stream);
        break;
    }
    return err;
}

// Scratch for any path at this size (the contract's figure covers the path it dispatches to;
// the tests also run the grouped paths at decode sizes).
std::size_t scratchForEveryPath(
    std::int64_t tokens, const DeviceExpertStack& gate, const DeviceExpertStack& down)
{
    const std::size_t contract
        = kernels::cuda::routedExpertsScratchBytes(tokens, kK, gate, down, GemmPrecision::BFloat16);
    const std::size_t grouped = kernels::cuda::moe::groupedLayout(
        nullptr, tokens, kK, gate.experts, gate.rows, down.rows, false)
                                    .bytes;
    const std::size_t integer
        = kernels::cuda::moe::intDecodeScratchBytes(tokens, kK, gate.rows, gate.cols);
    return std::max({ contract, grouped, integer });
}

// Runs one path once; returns the output, or nothing where the path does not take these
// stacks (cudaErrorNotSupported) or a CUDA call failed (reported there).
std::vector<float> runDevice(const std::vector<float>& x, std::int64_t tokens,
    const std::vector<std::int32_t>& ids, const std::vector<float>& w,
    const DeviceExpertStack& gate, const DeviceExpertStack& up, const DeviceExpertStack& down,
    Path path, GemmPrecision precision = GemmPrecision::BFloat16)
{
    namespace moe = kernels::cuda::moe;
    auto dx = DeviceBuffer::of(x);
    auto dIds = DeviceBuffer::of(ids);
    auto dW = DeviceBuffer::of(w);
    DeviceBuffer out(std::size_t(tokens * kHidden) * sizeof(float));
    // The contract's own figure for the dispatch, so a short one shows.
    DeviceBuffer scratch(path == Path::Dispatch || path == Path::DispatchF32
            ? kernels::cuda::routedExpertsScratchBytes(tokens, kK, gate, down,
                path == Path::DispatchF32 ? GemmPrecision::Float32 : precision)
            : scratchForEveryPath(tokens, gate, down));
    EXPECT_TRUE(dx.ok() && dIds.ok() && dW.ok() && out.ok() && scratch.ok());
    const DeviceScratch s { scratch.as<std::byte>(), scratch.bytes() };
    const float* px = dx.as<float>();
    const auto* pi = dIds.as<std::int32_t>();
    const float* pw = dW.as<float>();
    float* po = out.as<float>();
    const cudaError_t err
        = callPath(path, px, tokens, pi, pw, gate, up, down, po, precision, s, nullptr);
    if (err == cudaErrorNotSupported && path != Path::Dispatch && path != Path::DispatchF32) {
        cudaGetLastError();
        return {};
    }
    EXPECT_EQ(err, cudaSuccess) << cudaGetErrorString(err) << " path " << kPathNames[int(path)];
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    if (err != cudaSuccess)
        return {};
    return out.download<float>();
}

class RoutedExpertsTest : public ::testing::Test {
protected:
    // Stacks are built once per type and shared by every token count.
    static const HostStack& stack(TensorType type, std::int64_t rows, std::int64_t cols, int seed)
    {
        static std::map<std::tuple<int, std::int64_t, std::int64_t, int>,
            std::unique_ptr<HostStack>>
            cache;
        auto& slot = cache[{ int(type), rows, cols, seed }];
        if (!slot) {
            std::mt19937 rng(1000 + unsigned(type) * 7 + unsigned(rows) + 100003u * unsigned(seed));
            slot = std::make_unique<HostStack>(randomStack(type, rows, cols, rng));
        }
        return *slot;
    }

    // The shipped model's mix on the device: a Q4_K gate stack (the tests use it for up too)
    // and a Q6_K down stack.
    struct ShippedMix {
        DeviceBuffer gateBytes, downBytes;
        DeviceExpertStack gate, down;
    };
    static ShippedMix shippedMix()
    {
        const HostStack& g = stack(TensorType::Q4_K, kFfn, kHidden, 0);
        const HostStack& d = stack(TensorType::Q6_K, kHidden, kFfn, 2);
        ShippedMix m { DeviceBuffer::of(g.bytes), DeviceBuffer::of(d.bytes), {}, {} };
        m.gate = deviceStack(g, m.gateBytes, 0, kFfn);
        m.down = deviceStack(d, m.downBytes, 0, kHidden);
        return m;
    }

    void check(const Case& c, const std::vector<std::int64_t>& tokenCounts)
    {
        const HostStack& gateHost = stack(c.gateUp, c.fused ? 2 * kFfn : kFfn, kHidden, 0);
        const HostStack& upUsed
            = c.fused ? gateHost : stack(c.mixed ? c.up : c.gateUp, kFfn, kHidden, 1);
        const HostStack& downHost = stack(c.down, kHidden, kFfn, 2);
        auto dGate = DeviceBuffer::of(gateHost.bytes);
        auto dUp = DeviceBuffer::of(upUsed.bytes);
        auto dDown = DeviceBuffer::of(downHost.bytes);
        ASSERT_TRUE(dGate.ok() && dUp.ok() && dDown.ok());
        const auto gate = deviceStack(gateHost, dGate, 0, kFfn);
        const auto up = deviceStack(upUsed, c.fused ? dGate : dUp, c.fused ? kFfn : 0, kFfn);
        const auto down = deviceStack(downHost, dDown, 0, kHidden);
        for (const std::int64_t tokens : tokenCounts) {
            std::mt19937 rng(unsigned(tokens) * 31 + unsigned(c.gateUp));
            const auto x = randomFloats(std::size_t(tokens * kHidden), rng);
            std::vector<std::int32_t> ids;
            std::vector<float> w;
            randomChoices(tokens, rng, ids, w);
            const auto ref
                = cpuExperts(x, tokens, ids, w, gateHost, 0, upUsed, c.fused ? kFfn : 0, downHost);
            std::string line;
            for (const Path path : kPaths) {
                const auto out = runDevice(x, tokens, ids, w, gate, up, down, path);
                if (out.empty()) {
                    // The integer path takes block types of one gate/up type only.
                    const bool intRefuses = path == Path::DecodeInt8
                        && (c.mixed
                            || kernels::tensorTypeTraits(std::uint32_t(c.gateUp))->blockSize == 1
                            || kernels::tensorTypeTraits(std::uint32_t(c.down))->blockSize == 1);
                    EXPECT_TRUE(c.mixed || intRefuses)
                        << kPathNames[int(path)] << " refused these stacks";
                    continue;
                }
                ASSERT_EQ(out.size(), ref.size());
                const ErrorFigures f = compare(out, ref);
                // bf16 tiles (the dispatch's choice above kGroupedMatVecMaxTokens) and the integer
                // products (two int8 planes of x and h; the dispatch takes them up to
                // kDecodeMaxTokens for block types): 1e-2 relative error against the CPU's f32
                // products; every f32 path 1e-5.
                const bool intTypes = !c.mixed
                    && kernels::tensorTypeTraits(std::uint32_t(c.gateUp))->blockSize > 1
                    && kernels::tensorTypeTraits(std::uint32_t(c.down))->blockSize > 1;
                const bool approximate = path == Path::TilesBf16 || path == Path::DecodeInt8
                    || (path == Path::Dispatch
                        && tokens > kernels::cuda::moe::kGroupedMatVecMaxTokens && !c.mixed)
                    || (path == Path::Dispatch && tokens <= kernels::cuda::moe::kDecodeMaxTokens
                        && intTypes);
                const double tolerance = approximate ? 1e-2 : 1e-5;
                char figure[96];
                std::snprintf(figure, sizeof figure, " %s %.2g (%.2g)", kPathNames[int(path)],
                    f.relative, f.maxAbs);
                line += figure;
                EXPECT_TRUE(f.finite) << kPathNames[int(path)];
                EXPECT_LT(f.relative, tolerance)
                    << "tokens " << tokens << " path " << kPathNames[int(path)];
            }
            std::printf("routedExperts %-6s/%-6s%s tokens %3lld rel (maxAbs):%s\n",
                kernels::tensorTypeTraits(std::uint32_t(c.gateUp))->name.data(),
                kernels::tensorTypeTraits(std::uint32_t(c.down))->name.data(),
                c.fused ? " fused" : (c.mixed ? " mixed" : "      "), (long long)tokens,
                line.c_str());
        }
    }
};

const std::vector<std::int64_t> kTokenCounts = { 1, 3, 8, 32, 40, 128, 129, 300 };

TEST_F(RoutedExpertsTest, matchesCpuForTheModelTypes)
{
    for (const TensorType t :
        { TensorType::Q4_K, TensorType::Q6_K, TensorType::Q8_0, TensorType::BF16, TensorType::F32,
            TensorType::Q5_K, TensorType::IQ4_XS, TensorType::F16 })
        check({ t, t }, kTokenCounts);
}

TEST_F(RoutedExpertsTest, matchesCpuForQwenMixQ4KGateUpQ6KDown)
{
    check({ TensorType::Q4_K, TensorType::Q6_K }, kTokenCounts);
}

TEST_F(RoutedExpertsTest, matchesCpuForTheRemainingTypes)
{
    for (const TensorType t : { TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,
             TensorType::Q5_1, TensorType::Q2_K, TensorType::Q3_K })
        check({ t, TensorType::Q8_0 }, { 1, 3, 8, 32, 40 });
    // Down of every remaining block type under the integer path (1, 8 and 32 tokens).
    for (const TensorType t : { TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,
             TensorType::Q5_1, TensorType::Q2_K, TensorType::Q3_K })
        check({ TensorType::Q4_K, t }, { 1, 8, 32 });
}

TEST_F(RoutedExpertsTest, readsTheUpHalfOfAFusedGateUpStack)
{
    check({ TensorType::Q4_K, TensorType::Q6_K, true }, kTokenCounts);
}

TEST_F(RoutedExpertsTest, acceptsGateAndUpOfDifferentTypes)
{
    check({ TensorType::Q4_K, TensorType::Q6_K, false, TensorType::Q5_K, true }, { 3, 40 });
}

// The same inputs twice give the same bits (no float atomics, a fixed combine order), and a
// captured graph replays the call exactly.
TEST_F(RoutedExpertsTest, isDeterministicAndReplaysFromACapturedGraph)
{
    const ShippedMix mix = shippedMix();
    const DeviceExpertStack& gate = mix.gate;
    const DeviceExpertStack& down = mix.down;
    // Each path is captured itself: the first H200 run captured the dispatch (tiles at 300
    // tokens) and compared it with the grouped mat-vec's bits, two different products.
    for (const auto& [tokens, path] : { std::pair { std::int64_t(8), Path::Decode },
             std::pair { std::int64_t(8), Path::DecodeInt8 },
             std::pair { std::int64_t(32), Path::DecodeInt8 },
             std::pair { std::int64_t(64), Path::Dispatch },
             std::pair { std::int64_t(300), Path::GroupedMatVec },
             std::pair { std::int64_t(300), Path::TilesBf16 } }) {
        std::mt19937 rng { unsigned(tokens) };
        const auto x = randomFloats(std::size_t(tokens * kHidden), rng);
        std::vector<std::int32_t> ids;
        std::vector<float> w;
        randomChoices(tokens, rng, ids, w);
        const auto first = runDevice(x, tokens, ids, w, gate, gate, down, path);
        const auto second = runDevice(x, tokens, ids, w, gate, gate, down, path);
        ASSERT_FALSE(first.empty());
        EXPECT_EQ(0, std::memcmp(first.data(), second.data(), first.size() * sizeof(float)));

        auto dx = DeviceBuffer::of(x);
        auto dIds = DeviceBuffer::of(ids);
        auto dW = DeviceBuffer::of(w);
        DeviceBuffer out(first.size() * sizeof(float));
        DeviceBuffer scratch(scratchForEveryPath(tokens, gate, down));
        cudaStream_t stream;
        CW_CUDA_OK(cudaStreamCreate(&stream));
        CW_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
        const cudaError_t err = callPath(path, dx.as<float>(), tokens, dIds.as<std::int32_t>(),
            dW.as<float>(), gate, gate, down, out.as<float>(), GemmPrecision::BFloat16,
            DeviceScratch { scratch.as<std::byte>(), scratch.bytes() }, stream);
        cudaGraph_t graph;
        CW_CUDA_OK(cudaStreamEndCapture(stream, &graph));
        ASSERT_EQ(err, cudaSuccess);
        cudaGraphExec_t exec;
        CW_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        CW_CUDA_OK(cudaGraphLaunch(exec, stream));
        CW_CUDA_OK(cudaStreamSynchronize(stream));
        const auto replayed = out.download<float>();
        EXPECT_EQ(0, std::memcmp(first.data(), replayed.data(), first.size() * sizeof(float)))
            << "tokens " << tokens << " path " << kPathNames[int(path)];
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        cudaStreamDestroy(stream);
    }
}

// The integer decode path handed x already in two planes gives the bits it gives quantizing x
// itself.
TEST_F(RoutedExpertsTest, xInTwoPlanesFromTheCallerGivesTheSameBits)
{
    namespace cuda = kernels::cuda;
    const ShippedMix mix = shippedMix();
    const DeviceExpertStack& gate = mix.gate;
    const DeviceExpertStack& down = mix.down;
    for (const std::int64_t tokens : { 1, 3, 8 }) {
        std::mt19937 rng { unsigned(100 + tokens) };
        const auto x = randomFloats(std::size_t(tokens * kHidden), rng);
        std::vector<std::int32_t> ids;
        std::vector<float> w;
        randomChoices(tokens, rng, ids, w);
        const auto plain = runDevice(x, tokens, ids, w, gate, gate, down, Path::DecodeInt8);
        ASSERT_FALSE(plain.empty());

        auto dx = DeviceBuffer::of(x);
        auto dIds = DeviceBuffer::of(ids);
        auto dW = DeviceBuffer::of(w);
        DeviceBuffer out(plain.size() * sizeof(float));
        DeviceBuffer scratch(scratchForEveryPath(tokens, gate, down));
        DeviceBuffer x2(cuda::expertInputRowsBytes(tokens, kHidden));
        cuda::quant_detail::QuantizedRows q;
        CW_CUDA_OK(cuda::quant_detail::quantizeRows(
            dx.as<float>(), kHidden, tokens, kHidden, 2, x2.as<std::byte>(), q, nullptr));
        cuda::ExpertDecodeAids aids;
        aids.x2 = cuda::expertInputRowsAt(x2.as<std::byte>(), tokens, kHidden);
        ASSERT_EQ(static_cast<const void*>(q.q), static_cast<const void*>(aids.x2.q));
        ASSERT_EQ(static_cast<const void*>(q.s), static_cast<const void*>(aids.x2.s));
        CW_CUDA_OK(cudaMemset(out.as<float>(), 0xFF, plain.size() * sizeof(float)));
        CW_CUDA_OK(cuda::moe::routedExpertsDecodeInt8(dx.as<float>(), tokens,
            dIds.as<std::int32_t>(), dW.as<float>(), kK, gate, gate, down, out.as<float>(),
            DeviceScratch { scratch.as<std::byte>(), scratch.bytes() }, nullptr, aids));
        CW_CUDA_OK(cudaDeviceSynchronize());
        const auto aided = out.download<float>();
        EXPECT_EQ(0, std::memcmp(plain.data(), aided.data(), plain.size() * sizeof(float)))
            << "tokens " << tokens;
    }
}

} // namespace
} // namespace cw::moe_test
