// attentionPrepare on the device against the CPU engine's steps (ops::rmsNorm, then
// ops::ropeNeox, keys and values copied into the paged cache).
#include "kernels/cpu/ops/ops.h"
#include "kernels/cuda/attention/paged_attention.h"
#include "tests/gpu/attention/attention_test_support.h"

#include <cstdio>
#include <cstring>
#include <gtest/gtest.h>
#include <string>

namespace cw::kernels::cuda::test {
namespace {

struct PrepareCase {
    int heads, kvHeads, headDim, ropeDim;
    bool gated;
    int blockTokens;
};

void checkPrepare(const PrepareCase& c, std::uint32_t seed)
{
    SCOPED_TRACE(std::to_string(c.heads) + "/" + std::to_string(c.kvHeads) + " heads, dim "
        + std::to_string(c.headDim) + ", rope " + std::to_string(c.ropeDim));
    constexpr int kLayer = 1;
    // A prefill chunk, a chunk after 1000 cached positions and a decode row far out (its
    // rotation angles reach 3e4 radians).
    const std::vector<StepSequence> seqs = { { 0, 5 }, { 1000, 3 }, { 30000, 1 } };
    const int maxContext = 30016;
    std::mt19937 rng(seed);
    HostPagedKv kv;
    kv.build(seqs, c.kvHeads * c.headDim, c.blockTokens, maxContext, rng, true);
    DeviceStep step;
    CW_CUDA_OK(step.upload(seqs, kv, maxContext));
    const int T = step.rows, hd = c.headDim, nH = c.heads, nKv = c.kvHeads;
    const std::int64_t qAllStride = std::int64_t(nH) * (c.gated ? 2 : 1) * hd + 4;
    const auto qAll = randomVector(std::size_t(T) * std::size_t(qAllStride), rng, -2.0f, 2.0f);
    const auto k = randomVector(std::size_t(T) * nKv * hd, rng, -2.0f, 2.0f);
    const auto v = randomVector(std::size_t(T) * nKv * hd, rng);
    const auto qNorm = randomVector(std::size_t(hd), rng, 0.5f, 1.5f);
    const auto kNorm = randomVector(std::size_t(hd), rng, 0.5f, 1.5f);
    std::vector<float> invFreq(std::size_t(c.ropeDim / 2));
    ops::ropeInverseFrequencies(1e7, c.ropeDim, invFreq.data());
    const float eps = 1e-6f;

    DeviceArray<float> dCache, dQAll, dK, dV, dQNorm, dKNorm, dInvFreq, dQ;
    CW_CUDA_OK(dCache.upload(kv.data));
    CW_CUDA_OK(dQAll.upload(qAll));
    CW_CUDA_OK(dK.upload(k));
    CW_CUDA_OK(dV.upload(v));
    CW_CUDA_OK(dQNorm.upload(qNorm));
    CW_CUDA_OK(dKNorm.upload(kNorm));
    CW_CUDA_OK(dInvFreq.upload(invFreq));
    CW_CUDA_OK(dQ.allocate(std::size_t(T) * nH * hd));
    CW_CUDA_OK(dQ.poison());
    AttentionShape shape;
    shape.heads = nH;
    shape.kvHeads = nKv;
    shape.headDim = hd;
    shape.ropeDim = c.ropeDim;
    shape.gated = c.gated;
    shape.eps = eps;
    PagedKv pagedKv { dCache.get(), kv.layers, kv.blockTokens, kv.kvWidth };
    CW_CUDA_OK(attentionPrepare(dQAll.get(), qAllStride, dK.get(), dV.get(), dQNorm.get(),
        dKNorm.get(), dInvFreq.get(), shape, step.layout, pagedKv, kLayer, dQ.get(), nullptr));
    CW_CUDA_OK(cudaDeviceSynchronize());
    std::vector<float> q, cache;
    CW_CUDA_OK(dQ.download(q));
    CW_CUDA_OK(dCache.download(cache));

    // The CPU: engine/models/layers.cpp attentionLayer's loop over rows.
    std::vector<float> qRef(q.size()), cacheRef = kv.data, kTmp = k;
    std::vector<bool> written(cacheRef.size(), false);
    int t = 0;
    for (std::size_t s = 0; s < seqs.size(); ++s)
        for (int i = 0; i < seqs[s].tokens; ++i, ++t) {
            const int pos = seqs[s].pos0 + i;
            for (int h = 0; h < nH; ++h) {
                float* dst = qRef.data() + (std::size_t(t) * nH + h) * hd;
                ops::rmsNorm(qAll.data() + std::size_t(t) * qAllStride
                        + std::size_t(h) * (c.gated ? 2 : 1) * hd,
                    qNorm.data(), hd, eps, dst);
                ops::ropeNeox(dst, c.ropeDim, invFreq.data(), pos);
            }
            float* kt = kTmp.data() + std::size_t(t) * nKv * hd;
            for (int h = 0; h < nKv; ++h) {
                ops::rmsNorm(kt + h * hd, kNorm.data(), hd, eps, kt + h * hd);
                ops::ropeNeox(kt + h * hd, c.ropeDim, invFreq.data(), pos);
            }
            const std::size_t key = kv.keyIndex(int(s), kLayer, pos);
            const std::size_t value = kv.valueIndex(int(s), kLayer, pos);
            std::memcpy(cacheRef.data() + key, kt, std::size_t(nKv) * hd * sizeof(float));
            std::memcpy(cacheRef.data() + value, v.data() + std::size_t(t) * nKv * hd,
                std::size_t(nKv) * hd * sizeof(float));
            std::fill_n(written.begin() + std::ptrdiff_t(key), nKv * hd, true);
            std::fill_n(written.begin() + std::ptrdiff_t(value), nKv * hd, true);
        }

    const ErrorFigures fq = compareVectors(q, qRef);
    std::vector<float> rowsOut, rowsRef;
    std::int64_t untouchedChanged = 0;
    for (std::size_t i = 0; i < cache.size(); ++i) {
        if (written[i]) {
            rowsOut.push_back(cache[i]);
            rowsRef.push_back(cacheRef[i]);
        } else if (std::memcmp(&cache[i], &cacheRef[i], sizeof(float)) != 0) {
            ++untouchedChanged;
        }
    }
    const ErrorFigures fc = compareVectors(rowsOut, rowsRef);
    std::printf(
        "[prepare %d/%d heads, dim %d, rope %d] q: relative %.3g, max abs %.3g; cache rows: "
        "relative %.3g, max abs %.3g; other cache values changed: %lld\n",
        nH, nKv, hd, c.ropeDim, fq.relative, fq.maxAbs, fc.relative, fc.maxAbs,
        static_cast<long long>(untouchedChanged));
    EXPECT_LT(fq.relative, 1e-5);
    EXPECT_LT(fc.relative, 1e-5);
    EXPECT_EQ(untouchedChanged, 0);
}

TEST(AttentionPrepare, normsRotatesAndCachesLikeCpu)
{
    checkPrepare({ 16, 2, 256, 64, true, 16 }, 41); // Qwen3.6: partial rotary, gated rows
    checkPrepare({ 32, 4, 128, 128, false, 16 }, 42); // Qwen3
    checkPrepare({ 2, 1, 48, 16, false, 12 }, 43);
}

} // namespace
} // namespace cw::kernels::cuda::test
