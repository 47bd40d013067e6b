// The router's softmax and top-k, silu(gate) * x and the shared expert's sigmoid gate on the
// device against the CPU's ops.
#include "kernels/cpu/ops/ops.h"
#include "kernels/cuda/moe/moe_experts.h"
#include "kernels/cuda/quant/quant_products.h"
#include "tests/gpu/moe/moe_test_support.h"

#include <cstdio>

namespace cw::moe_test {
namespace {

void checkRouter(std::int64_t tokens, std::int64_t experts, int k, bool renormalise, bool ties)
{
    std::mt19937 rng(unsigned(tokens * 131 + experts + k));
    auto logits = randomFloats(std::size_t(tokens * experts), rng, 2.0f);
    if (ties) // a coarse grid: many equal logits, so equal probabilities
        for (auto& v : logits)
            v = std::round(v * 2.0f) / 2.0f;
    std::vector<std::int32_t> refIds(std::size_t(tokens * k));
    std::vector<float> refW(refIds.size());
    for (std::int64_t t = 0; t < tokens; ++t) {
        std::vector<float> p(logits.begin() + t * experts, logits.begin() + (t + 1) * experts);
        kernels::ops::softmax(p.data(), experts);
        std::vector<int> idx(static_cast<std::size_t>(k));
        kernels::ops::topK(p.data(), experts, k, idx.data(), refW.data() + t * k);
        float sum = 0.0f;
        for (int j = 0; j < k; ++j)
            sum += refW[std::size_t(t * k + j)];
        for (int j = 0; j < k; ++j) {
            refIds[std::size_t(t * k + j)] = idx[std::size_t(j)];
            if (renormalise)
                refW[std::size_t(t * k + j)] /= sum;
        }
    }
    auto dLogits = DeviceBuffer::of(logits);
    DeviceBuffer ids(refIds.size() * 4), w(refW.size() * 4);
    ASSERT_TRUE(dLogits.ok() && ids.ok() && w.ok());
    CW_CUDA_OK(kernels::cuda::routerTopK(dLogits.as<float>(), tokens, experts, k, renormalise,
        ids.as<std::int32_t>(), w.as<float>(), nullptr));
    CW_CUDA_OK(cudaDeviceSynchronize());
    const auto gotIds = ids.download<std::int32_t>();
    const auto gotW = w.download<float>();
    std::int64_t idMismatches = 0;
    for (std::size_t i = 0; i < refIds.size(); ++i)
        idMismatches += gotIds[i] != refIds[i];
    const ErrorFigures f = compare(gotW, refW);
    std::printf("routerTopK tokens %4lld experts %3lld k %d%s%s: id mismatches %lld, weights rel "
                "%.3g maxAbs %.3g\n",
        (long long)tokens, (long long)experts, k, renormalise ? " renormalised" : "",
        ties ? " ties" : "", (long long)idMismatches, f.relative, f.maxAbs);
    EXPECT_EQ(idMismatches, 0);
    EXPECT_LT(f.relative, 1e-5);
}

TEST(MoeRouter, routerTopKMatchesCpuSoftmaxAndTopK)
{
    for (const std::int64_t tokens : { 1, 3, 8, 40, 300 }) {
        checkRouter(tokens, 256, 8, true, false);
        checkRouter(tokens, 128, 8, false, false);
    }
    checkRouter(7, 60, 4, true, false);
    checkRouter(5, 512, 8, true, false); // over 256 experts: the shared-memory rows
}

TEST(MoeRouter, routerTopKTiesKeepTheLowerExpert)
{
    checkRouter(40, 256, 8, true, true);
    checkRouter(40, 16, 8, false, true);
    checkRouter(9, 384, 8, true, true);
}

// The decode router in one launch: the same logits, ids and weights, bit for bit, as linear()
// then routerTopK, for every decode size and both routers' expert counts, call after call on
// one counter (each call leaves it zero for the next).
TEST(MoeRouter, theFusedRouterEqualsTheProductThenTopK)
{
    for (const std::int64_t experts : { std::int64_t(256), std::int64_t(128) }) {
        const std::int64_t hidden = 2048;
        const int k = 8;
        std::mt19937 rng(static_cast<unsigned>(experts));
        const auto router = randomFloats(std::size_t(experts * hidden), rng, 0.05f);
        auto dRouter = DeviceBuffer::of(router);
        DeviceBuffer counter(sizeof(unsigned));
        ASSERT_TRUE(dRouter.ok() && counter.ok());
        CW_CUDA_OK(cudaMemset(counter.as<unsigned>(), 0, sizeof(unsigned)));
        kernels::cuda::DeviceMatrix m;
        m.type = TensorType::F32;
        m.data = dRouter.as<float>();
        m.rowStride = std::size_t(hidden) * sizeof(float);
        m.rows = experts;
        m.cols = hidden;
        for (std::int64_t tokens = 1; tokens <= kernels::cuda::kMatVecMaxTokens; ++tokens) {
            ASSERT_TRUE(kernels::cuda::routerFuses(m, tokens));
            const auto x = randomFloats(std::size_t(tokens * hidden), rng, 1.0f);
            auto dX = DeviceBuffer::of(x);
            DeviceBuffer logits[2] = { DeviceBuffer(std::size_t(tokens * experts) * 4),
                DeviceBuffer(std::size_t(tokens * experts) * 4) };
            DeviceBuffer ids[2] = { DeviceBuffer(std::size_t(tokens * k) * 4),
                DeviceBuffer(std::size_t(tokens * k) * 4) };
            DeviceBuffer w[2] = { DeviceBuffer(std::size_t(tokens * k) * 4),
                DeviceBuffer(std::size_t(tokens * k) * 4) };
            CW_CUDA_OK(
                kernels::cuda::linear(m, dX.as<float>(), hidden, tokens, logits[0].as<float>(),
                    experts, kernels::cuda::GemmPrecision::BFloat16, {}, nullptr, nullptr));
            CW_CUDA_OK(kernels::cuda::routerTopK(logits[0].as<float>(), tokens, experts, k, true,
                ids[0].as<std::int32_t>(), w[0].as<float>(), nullptr));
            CW_CUDA_OK(kernels::cuda::routerLogitsTopK(m, dX.as<float>(), hidden, tokens,
                logits[1].as<float>(), k, true, ids[1].as<std::int32_t>(), w[1].as<float>(),
                counter.as<unsigned>(), nullptr));
            CW_CUDA_OK(cudaDeviceSynchronize());
            EXPECT_EQ(logits[1].download<float>(), logits[0].download<float>()) << tokens;
            EXPECT_EQ(ids[1].download<std::int32_t>(), ids[0].download<std::int32_t>()) << tokens;
            EXPECT_EQ(w[1].download<float>(), w[0].download<float>()) << tokens;
            std::vector<unsigned> left(1);
            CW_CUDA_OK(cudaMemcpy(
                left.data(), counter.as<unsigned>(), sizeof(unsigned), cudaMemcpyDeviceToHost));
            EXPECT_EQ(left[0], 0u);
        }
    }
}

TEST(MoeRouter, siluMulMatchesCpu)
{
    std::mt19937 rng(5);
    const std::int64_t n = 3 * 512 + 17;
    auto x = randomFloats(std::size_t(n), rng, 3.0f);
    const auto gate = randomFloats(std::size_t(n), rng, 3.0f);
    auto dx = DeviceBuffer::of(x);
    auto dGate = DeviceBuffer::of(gate);
    CW_CUDA_OK(kernels::cuda::siluMul(dx.as<float>(), dGate.as<float>(), n, nullptr));
    CW_CUDA_OK(cudaDeviceSynchronize());
    kernels::ops::siluMul(x.data(), gate.data(), n);
    const ErrorFigures f = compare(dx.download<float>(), x);
    std::printf("siluMul n %lld rel %.3g maxAbs %.3g\n", (long long)n, f.relative, f.maxAbs);
    EXPECT_LT(f.relative, 1e-6);
}

TEST(MoeRouter, addGatedSharedExpertMatchesCpu)
{
    for (const std::int64_t tokens : { 1, 3, 40 }) {
        const std::int64_t hidden = 2048;
        std::mt19937 rng { unsigned(tokens) };
        const auto x = randomFloats(std::size_t(tokens * hidden), rng);
        const auto gateWeight = randomFloats(std::size_t(hidden), rng, 0.05f);
        const auto down = randomFloats(std::size_t(tokens * hidden), rng);
        auto out = randomFloats(std::size_t(tokens * hidden), rng);
        auto dx = DeviceBuffer::of(x);
        auto dGate = DeviceBuffer::of(gateWeight);
        auto dDown = DeviceBuffer::of(down);
        auto dOut = DeviceBuffer::of(out);
        CW_CUDA_OK(kernels::cuda::addGatedSharedExpert(dx.as<float>(), dGate.as<float>(),
            dDown.as<float>(), tokens, hidden, dOut.as<float>(), nullptr));
        CW_CUDA_OK(cudaDeviceSynchronize());
        for (std::int64_t t = 0; t < tokens; ++t) { // engine/models/moe_layer.cpp sharedExpert
            float dot = 0.0f;
            for (std::int64_t c = 0; c < hidden; ++c)
                dot += gateWeight[std::size_t(c)] * x[std::size_t(t * hidden + c)];
            const float s = kernels::ops::sigmoid(dot);
            for (std::int64_t c = 0; c < hidden; ++c)
                out[std::size_t(t * hidden + c)] += s * down[std::size_t(t * hidden + c)];
        }
        const ErrorFigures f = compare(dOut.download<float>(), out);
        std::printf("addGatedSharedExpert tokens %lld rel %.3g maxAbs %.3g\n", (long long)tokens,
            f.relative, f.maxAbs);
        EXPECT_LT(f.relative, 1e-6);
    }
}

} // namespace
} // namespace cw::moe_test
