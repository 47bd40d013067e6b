// pagedAttention on the device against the CPU's attention over the same paged cache:
// decode (f32 flash-decoding, 1e-5), prefill and mixed steps (bf16 tensor cores, 1e-2; f32
// tiles with AttentionShape::exactPrefill, 1e-5).
#include "kernels/cpu/ops/ops.h"
#include "kernels/cuda/attention/attention_paths.h"
#include "kernels/cuda/attention/paged_attention.h"
#include "tests/gpu/attention/attention_test_support.h"

#include <cstdio>
#include <gtest/gtest.h>
#include <string>

namespace cw::kernels::cuda::test {
namespace {

constexpr int kLayer = 1; // of the cache's two, so that layer offsets are exercised

struct AttentionCase {
    int heads, kvHeads, headDim;
    bool gated;
    int blockTokens;
};

// Which kernel prefill and mixed steps take (decode steps are f32 either way).
enum class PrefillPath { TensorCores, ExactF32 };

std::string caseName(const AttentionCase& c)
{
    return std::to_string(c.heads) + "/" + std::to_string(c.kvHeads) + " heads, dim "
        + std::to_string(c.headDim) + (c.gated ? ", gated" : "") + ", blocks of "
        + std::to_string(c.blockTokens);
}

// The CPU engine's attention core (engine/models/layers.cpp) on the host cache.
std::vector<float> cpuAttention(const HostPagedKv& kv, const std::vector<StepSequence>& seqs,
    const AttentionCase& c, const std::vector<float>& q, const std::vector<float>& gate,
    std::int64_t gateStride, float scale)
{
    const int nH = c.heads, hd = c.headDim, groups = c.heads / c.kvHeads;
    int rows = 0;
    for (const auto& s : seqs)
        rows += s.tokens;
    std::vector<float> out(std::size_t(rows) * nH * hd);
    int row0 = 0;
    for (std::size_t s = 0; s < seqs.size(); ++s) {
        const int count = seqs[s].pos0 + seqs[s].tokens;
        std::vector<float> scratch(std::size_t(groups) * count);
        for (int kvh = 0; kvh < c.kvHeads; ++kvh) {
            std::vector<const float*> keys(static_cast<std::size_t>(count)), values(keys.size());
            for (int j = 0; j < count; ++j) {
                keys[std::size_t(j)] = kv.data.data() + kv.keyIndex(int(s), kLayer, j) + kvh * hd;
                values[std::size_t(j)]
                    = kv.data.data() + kv.valueIndex(int(s), kLayer, j) + kvh * hd;
            }
            const std::size_t at = (std::size_t(row0) * nH + std::size_t(kvh) * groups) * hd;
            if (seqs[s].tokens == 1) {
                ops::attentionSharedKv(q.data() + at, hd, groups, keys.data(), values.data(), count,
                    hd, scale, out.data() + at, hd, scratch.data());
                continue;
            }
            for (int g = 0; g < groups; ++g)
                ops::attentionHead(q.data() + at + std::size_t(g) * hd, nH * hd, seqs[s].tokens,
                    seqs[s].pos0, keys.data(), values.data(), count, hd, scale,
                    out.data() + at + std::size_t(g) * hd, nH * hd, scratch.data());
        }
        row0 += seqs[s].tokens;
    }
    if (c.gated)
        for (int t = 0; t < rows; ++t)
            for (int h = 0; h < nH; ++h)
                for (int d = 0; d < hd; ++d)
                    out[(std::size_t(t) * nH + h) * hd + d] *= ops::sigmoid(
                        gate[std::size_t(t) * gateStride + std::size_t(h) * 2 * hd + hd + d]);
    return out;
}

// Runs pagedAttention for `seqs` and returns its error against the CPU.
void checkAttention(const AttentionCase& c, const std::vector<StepSequence>& seqs, int maxContext,
    double tolerance, const char* what, std::uint32_t seed,
    PrefillPath path = PrefillPath::TensorCores)
{
    SCOPED_TRACE(std::string(what) + " " + caseName(c));
    std::mt19937 rng(seed);
    HostPagedKv kv;
    kv.build(seqs, c.kvHeads * c.headDim, c.blockTokens, maxContext, rng);
    DeviceStep step;
    CW_CUDA_OK(step.upload(seqs, kv, maxContext));
    const int hd = c.headDim, nH = c.heads;
    const auto q = randomVector(std::size_t(step.rows) * nH * hd, rng, -2.0f, 2.0f);
    // The gate sits in qAll rows, [query hd][gate hd] per head, rows padded by 8 floats.
    const std::int64_t gateStride = std::int64_t(nH) * 2 * hd + 8;
    const auto qAll
        = randomVector(std::size_t(step.rows) * std::size_t(gateStride), rng, -3.0f, 3.0f);
    const float scale = 1.0f / std::sqrt(float(hd));

    DeviceArray<float> dCache, dQ, dQAll, dOut;
    DeviceArray<std::byte> dScratch;
    CW_CUDA_OK(dCache.upload(kv.data));
    CW_CUDA_OK(dQ.upload(q));
    CW_CUDA_OK(dQAll.upload(qAll));
    CW_CUDA_OK(dOut.allocate(std::size_t(step.rows) * nH * hd));
    CW_CUDA_OK(dOut.poison());
    AttentionShape shape;
    shape.heads = nH;
    shape.kvHeads = c.kvHeads;
    shape.headDim = hd;
    shape.ropeDim = hd;
    shape.gated = c.gated;
    shape.exactPrefill = path == PrefillPath::ExactF32;
    const std::size_t scratchBytes = pagedAttentionScratchBytes(shape, step.layout);
    if (shape.exactPrefill && step.layout.maxTokensPerSequence > 1) {
        EXPECT_EQ(scratchBytes, 0u); // the f32 tiles read the cache itself
    }
    CW_CUDA_OK(dScratch.allocate(scratchBytes));
    CW_CUDA_OK(dScratch.poison());
    PagedKv pagedKv { dCache.get(), kv.layers, kv.blockTokens, kv.kvWidth };
    CW_CUDA_OK(
        pagedAttention(dQ.get(), c.gated ? dQAll.get() + hd : nullptr, gateStride, shape, scale,
            step.layout, pagedKv, kLayer, dOut.get(), { dScratch.get(), scratchBytes }, nullptr));
    CW_CUDA_OK(cudaDeviceSynchronize());
    std::vector<float> out;
    CW_CUDA_OK(dOut.download(out));

    const auto ref = cpuAttention(kv, seqs, c, q, qAll, gateStride, scale);
    const ErrorFigures f = compareVectors(out, ref);
    std::printf(
        "[%s %s] rows %d: relative %.3g, max abs %.3g, non-finite %lld (scratch %zu bytes)\n", what,
        caseName(c).c_str(), step.rows, f.relative, f.maxAbs, static_cast<long long>(f.nonFinite),
        scratchBytes);
    EXPECT_EQ(f.nonFinite, 0);
    EXPECT_LT(f.relative, tolerance);
}

std::vector<StepSequence> decodeSequences(std::initializer_list<int> lengths)
{
    std::vector<StepSequence> seqs;
    for (const int n : lengths)
        seqs.push_back({ n - 1, 1 });
    return seqs;
}

// The model shapes first, then small heads of the generic paths (head dims 16..64, groups of
// 1, 3 and 12 query heads, block sizes that are not powers of two).
const AttentionCase kModelCases[] = { { 16, 2, 256, true, 16 }, { 32, 4, 128, false, 16 } };
const AttentionCase kSmallCases[] = { { 4, 4, 64, false, 12 }, { 6, 2, 48, true, 16 },
    { 24, 2, 32, false, 8 }, { 2, 1, 16, false, 5 }, { 2, 2, 160, true, 16 } };

// Both decode kernels: K/V rows staged through shared memory (the default) and prefetched in
// registers.
template <typename Check> void forEachDecodeKernel(Check check)
{
    for (const bool staged : { true, false }) {
        attention_detail::useStagedDecode(staged);
        check(staged ? "decode, staged" : "decode, registers");
    }
    attention_detail::useStagedDecode(true);
}

TEST(PagedAttention, decodeMatchesCpuForModelShapes)
{
    forEachDecodeKernel([](const char* what) {
        for (const auto& c : kModelCases) {
            // The split count comes from the capacity (2048), the same for both length sets,
            // as when a captured graph replays at a later length.
            checkAttention(c, decodeSequences({ 1, 17, 300, 1000 }), 2048, 1e-5, what, 11);
            checkAttention(c, decodeSequences({ 2, 64, 777, 2048 }), 2048, 1e-5, what, 12);
        }
    });
}

TEST(PagedAttention, decodeMatchesCpuForSmallHeads)
{
    forEachDecodeKernel([](const char* what) {
        for (const auto& c : kSmallCases)
            checkAttention(c, decodeSequences({ 1, 17, 300, 1000 }), 1024, 1e-5, what, 13);
    });
}

TEST(PagedAttention, decodeOfOneSequenceUsesEverySplit)
{
    // One sequence: the most splits per sequence, most of them short.
    forEachDecodeKernel([](const char* what) {
        for (const auto& c : kModelCases)
            checkAttention(c, decodeSequences({ 5000 }), 8192, 1e-5, what, 14);
    });
}

const std::vector<StepSequence> kPrefillSequences
    = { { 0, 300 }, { 0, 17 }, { 700, 300 }, { 0, 1 } }; // contexts 300, 17, 1000, 1

TEST(PagedAttention, prefillMatchesCpuForModelShapes)
{
    for (const auto& c : kModelCases)
        checkAttention(c, kPrefillSequences, 1024, 1e-2, "prefill", 21);
}

TEST(PagedAttention, prefillMatchesCpuForSmallHeads)
{
    for (const auto& c : kSmallCases)
        checkAttention(c, kPrefillSequences, 1024, 1e-2, "prefill", 22);
}

TEST(PagedAttention, mixedStepMatchesCpu)
{
    // Two sequences decode (one token at positions 999 and 16) beside two prefill chunks, the
    // second of which attends to 250 cached positions.
    const std::vector<StepSequence> seqs = { { 999, 1 }, { 16, 1 }, { 0, 129 }, { 250, 50 } };
    for (const auto& c : kModelCases)
        checkAttention(c, seqs, 1024, 1e-2, "mixed", 31);
    checkAttention(kSmallCases[1], seqs, 1024, 1e-2, "mixed", 32);
}

// Exact prefill: head dims 16, 64, 128 and 256, gated and not, groups of 1, 2, 4 and 8 query
// heads (a block's rows are the group's heads of consecutive tokens), blocks of 5, 8, 12 and
// 16 positions.
const AttentionCase kExactCases[] = { { 16, 2, 256, true, 16 }, { 16, 2, 256, false, 16 },
    { 32, 4, 128, false, 16 }, { 8, 4, 128, true, 12 }, { 4, 4, 64, false, 12 },
    { 16, 4, 64, true, 16 }, { 2, 1, 16, false, 5 }, { 4, 2, 16, true, 8 } };

TEST(PagedAttention, exactPrefillOfPromptMatchesCpu)
{
    // A 700-token prompt alone, as the model's f32 reference mode runs it.
    const std::vector<StepSequence> prompt = { { 0, 700 } };
    for (const auto& c : kExactCases)
        checkAttention(c, prompt, 700, 1e-5, "exact prefill", 41, PrefillPath::ExactF32);
}

TEST(PagedAttention, exactPrefillOfChunksAfterCachedPositionsMatchesCpu)
{
    // Chunks that attend to earlier cached positions (300 after 700, 17 after 40: neither on a
    // tile boundary) beside a prompt of one tile and a key.
    const std::vector<StepSequence> seqs = { { 700, 300 }, { 40, 17 }, { 0, 65 } };
    for (const auto& c : kExactCases)
        checkAttention(c, seqs, 1024, 1e-5, "exact chunks", 42, PrefillPath::ExactF32);
}

TEST(PagedAttention, exactMixedStepMatchesCpu)
{
    // Two sequences decode (one token at positions 999 and 16) beside two prefill chunks, the
    // second of which attends to 250 cached positions.
    const std::vector<StepSequence> seqs = { { 999, 1 }, { 16, 1 }, { 0, 129 }, { 250, 50 } };
    for (const auto& c : kExactCases)
        checkAttention(c, seqs, 1024, 1e-5, "exact mixed", 43, PrefillPath::ExactF32);
}

TEST(PagedAttention, exactPrefillMatchesCpuForSmallHeads)
{
    // Head dims 48, 32 and 160 pad to 64 and 192; 12 query heads per KV head.
    for (const auto& c : kSmallCases)
        checkAttention(
            c, kPrefillSequences, 1024, 1e-5, "exact prefill", 44, PrefillPath::ExactF32);
}

TEST(PagedAttention, emptyStepDoesNothing)
{
    AttentionShape shape;
    shape.heads = 16;
    shape.kvHeads = 2;
    shape.headDim = 256;
    StepLayout layout;
    EXPECT_EQ(pagedAttentionScratchBytes(shape, layout), 0u);
    EXPECT_EQ(pagedAttention(nullptr, nullptr, 0, shape, 1.0f, layout, {}, 0, nullptr, {}, nullptr),
        cudaSuccess);
}

} // namespace
} // namespace cw::kernels::cuda::test
