// Full attention (kernels/cuda/attention/paged_attention.h) against the CPU engine's steps:
// attentionPrepare (q/k RMSNorm, NeoX RoPE with partial rotary, the keys and values written
// into the paged cache) and pagedAttention's three paths (flash-decoding for one token per
// sequence, bf16 tensor-core prefill, f32 exact prefill) at head dims 16..256, groups of 1..8
// query heads per KV head, gated and plain output, and prompts of 1..4097 tokens.
#include "kernels/cpu/ops/ops.h"
#include "kernels/cuda/attention/attention_paths.h"
#include "kernels/cuda/attention/paged_attention.h"
#include "tests/gpu/attention/attention_test_support.h"
#include "tests/gpu/backend_ops/backend_ops.h"

#include <cmath>
#include <cstring>
#include <string>

namespace cw::backend_ops {
namespace {

namespace kc = kernels::cuda;
using kc::test::HostPagedKv;
using kc::test::StepSequence;

constexpr int kLayer = 1; // of the cache's two, so that layer offsets are exercised

struct Heads {
    int heads, kvHeads, headDim;
    bool gated;
    int blockTokens;
};

std::string headsText(const Heads& h)
{
    return std::to_string(h.heads) + "/" + std::to_string(h.kvHeads) + " heads dim "
        + std::to_string(h.headDim) + (h.gated ? " gated" : "") + " blocks of "
        + std::to_string(h.blockTokens);
}

std::string seqsText(const std::vector<StepSequence>& seqs)
{
    std::string s;
    for (const auto& q : seqs) {
        if (!s.empty())
            s += ",";
        s += std::to_string(q.tokens) + "@" + std::to_string(q.pos0);
    }
    return "seqs tokens@pos " + s;
}

// The CPU engine's attention core (engine/models/layers.cpp) on the host cache, one task per
// (sequence, KV head) on the pool.
std::vector<float> cpuAttention(const HostPagedKv& kv, const std::vector<StepSequence>& seqs,
    const Heads& c, const std::vector<float>& q, const std::vector<float>& gate,
    std::int64_t gateStride, float scale, kernels::ThreadPool* pool)
{
    const int nH = c.heads, hd = c.headDim, groups = c.heads / c.kvHeads;
    std::vector<int> row0;
    int rows = 0;
    for (const auto& s : seqs) {
        row0.push_back(rows);
        rows += s.tokens;
    }
    std::vector<float> out(std::size_t(rows) * nH * hd);
    // One task per (sequence, KV head, query head of the group): a decode row's group is one
    // attentionSharedKv call (its first task), a prefill chunk's heads one attentionHead each.
    const std::int64_t tasks = std::int64_t(seqs.size()) * c.kvHeads * groups;
    pool->parallelFor(tasks, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t task = begin; task < end; ++task) {
            const int s = int(task / (c.kvHeads * groups));
            const int kvh = int(task / groups % c.kvHeads), g = int(task % groups);
            const bool decode = seqs[std::size_t(s)].tokens == 1;
            if (decode && g > 0)
                continue;
            const int count = seqs[std::size_t(s)].pos0 + seqs[std::size_t(s)].tokens;
            std::vector<float> scratch(std::size_t(groups) * std::size_t(count));
            std::vector<const float*> keys(static_cast<std::size_t>(count)), values(keys.size());
            for (int j = 0; j < count; ++j) {
                keys[std::size_t(j)] = kv.data.data() + kv.keyIndex(s, kLayer, j) + kvh * hd;
                values[std::size_t(j)] = kv.data.data() + kv.valueIndex(s, kLayer, j) + kvh * hd;
            }
            const std::size_t at
                = (std::size_t(row0[std::size_t(s)]) * nH + std::size_t(kvh) * groups) * hd;
            if (decode) {
                kernels::ops::attentionSharedKv(q.data() + at, hd, groups, keys.data(),
                    values.data(), count, hd, scale, out.data() + at, hd, scratch.data());
                continue;
            }
            kernels::ops::attentionHead(q.data() + at + std::size_t(g) * hd, nH * hd,
                seqs[std::size_t(s)].tokens, seqs[std::size_t(s)].pos0, keys.data(), values.data(),
                count, hd, scale, out.data() + at + std::size_t(g) * hd, nH * hd, scratch.data());
        }
    });
    if (c.gated)
        for (int t = 0; t < rows; ++t)
            for (int h = 0; h < nH; ++h)
                for (int d = 0; d < hd; ++d)
                    out[(std::size_t(t) * nH + h) * hd + d] *= kernels::ops::sigmoid(
                        gate[std::size_t(t) * gateStride + std::size_t(h) * 2 * hd + hd + d]);
    return out;
}

enum class AttentionPath { Decode, TensorCores, Exact };

// The kernels' own switches (attention_paths.h): decode K/V rows prefetched in registers
// instead of staged through shared memory; prefill at one block per multiprocessor.
enum class Variant { Default, DecodeInRegisters, PrefillOneBlockPerSm };

void runAttention(CaseContext& ctx, const Heads& c, const std::vector<StepSequence>& seqs,
    int maxContext, AttentionPath path, Variant variant = Variant::Default)
{
    struct Restore {
        ~Restore()
        {
            kc::attention_detail::useStagedDecode(true);
            kc::attention_detail::usePrefillBlocksPerSm(0);
        }
    } restore;
    kc::attention_detail::useStagedDecode(variant != Variant::DecodeInRegisters);
    kc::attention_detail::usePrefillBlocksPerSm(variant == Variant::PrefillOneBlockPerSm ? 1 : 0);
    HostPagedKv kv;
    kv.build(seqs, c.kvHeads * c.headDim, c.blockTokens, maxContext, ctx.rng());
    kc::test::DeviceStep step;
    BO_CUDA_OK(step.upload(seqs, kv, maxContext));
    const int hd = c.headDim, nH = c.heads;
    const auto q = uniformFloats(std::size_t(step.rows) * nH * hd, ctx.rng(), -2.0f, 2.0f);
    // The gate sits in qAll rows, [query hd][gate hd] per head, rows padded by 8 floats.
    const std::int64_t gateStride = std::int64_t(nH) * 2 * hd + 8;
    const auto qAll
        = uniformFloats(std::size_t(step.rows) * std::size_t(gateStride), ctx.rng(), -3.0f, 3.0f);
    const float scale = 1.0f / std::sqrt(float(hd));
    auto dCache = DeviceBuffer::of(kv.data);
    auto dQ = DeviceBuffer::of(q);
    auto dQAll = DeviceBuffer::of(qAll);
    DeviceBuffer dOut(std::size_t(step.rows) * nH * hd * 4);
    BO_CUDA_OK(dCache.error());
    BO_CUDA_OK(dOut.error());
    kc::AttentionShape shape;
    shape.heads = nH;
    shape.kvHeads = c.kvHeads;
    shape.headDim = hd;
    shape.ropeDim = hd;
    shape.gated = c.gated;
    shape.exactPrefill = path == AttentionPath::Exact;
    const std::size_t scratchBytes = kc::pagedAttentionScratchBytes(shape, step.layout);
    DeviceBuffer scratch(scratchBytes);
    BO_CUDA_OK(scratch.error());
    const kc::PagedKv paged { dCache.get<float>(), kv.layers, kv.blockTokens, kv.kvWidth };
    auto launch = [&](cudaStream_t s) {
        return kc::pagedAttention(dQ.get<float>(), c.gated ? dQAll.get<float>() + hd : nullptr,
            gateStride, shape, scale, step.layout, paged, kLayer, dOut.get<float>(),
            scratch.scratch(), s);
    };
    const cudaError_t launched = launch(ctx.stream());
    if (launched == cudaErrorNotSupported && !kc::pagedAttentionTakesHeadDim(hd)) {
        // Refused by name, as the backend refuses such a model at load (cuda_backend.cpp).
        cudaGetLastError();
        ctx.skip("head dim " + std::to_string(hd)
            + " refused (cudaErrorNotSupported): the "
              "kernels take multiples of 16 up to 256");
        return;
    }
    BO_CUDA_OK(launched);
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<float> got;
    BO_CUDA_OK(dOut.download(got));
    const auto want = cpuAttention(kv, seqs, c, q, qAll, gateStride, scale, ctx.pool());
    // f32 paths (decode, exact prefill): 1e-5 relative as tests/gpu/attention; bf16 tensor
    // cores: 1e-2 relative.
    const Tolerance tolerance
        = path == AttentionPath::TensorCores ? Tolerance { 4e-2, 1e-2 } : Tolerance { 5e-5, 1e-5 };
    ctx.check("out", got, want, tolerance, [nH, hd](std::size_t i) {
        const std::size_t row = i / std::size_t(nH * hd), rest = i % std::size_t(nH * hd);
        return "row " + std::to_string(row) + ", head " + std::to_string(rest / std::size_t(hd))
            + ", value " + std::to_string(rest % std::size_t(hd));
    });
    double keys = 0;
    for (const auto& s : seqs)
        keys += double(s.pos0 + s.tokens);
    ctx.measure(8.0 * keys * double(kv.kvWidth) + 8.0 * double(step.rows) * nH * hd, launch);
}

// attentionPrepare against ops::rmsNorm then ops::ropeNeox per head, and the cache rows.
void runPrepare(CaseContext& ctx, const Heads& c, int ropeDim, double theta,
    const std::vector<StepSequence>& seqs, int maxContext)
{
    HostPagedKv kv;
    kv.build(seqs, c.kvHeads * c.headDim, c.blockTokens, maxContext, ctx.rng(), true);
    kc::test::DeviceStep step;
    BO_CUDA_OK(step.upload(seqs, kv, maxContext));
    const int T = step.rows, hd = c.headDim, nH = c.heads, nKv = c.kvHeads;
    const std::int64_t qAllStride = std::int64_t(nH) * (c.gated ? 2 : 1) * hd + 4;
    const auto qAll = uniformFloats(std::size_t(T) * std::size_t(qAllStride), ctx.rng(), -2, 2);
    const auto k = uniformFloats(std::size_t(T) * nKv * hd, ctx.rng(), -2, 2);
    const auto v = uniformFloats(std::size_t(T) * nKv * hd, ctx.rng(), -1, 1);
    const auto qNorm = uniformFloats(std::size_t(hd), ctx.rng(), 0.5f, 1.5f);
    const auto kNorm = uniformFloats(std::size_t(hd), ctx.rng(), 0.5f, 1.5f);
    std::vector<float> invFreq(std::size_t(ropeDim / 2));
    kernels::ops::ropeInverseFrequencies(theta, ropeDim, invFreq.data());
    const float eps = 1e-6f;
    auto dCache = DeviceBuffer::of(kv.data);
    auto dQAll = DeviceBuffer::of(qAll);
    auto dK = DeviceBuffer::of(k);
    auto dV = DeviceBuffer::of(v);
    auto dQNorm = DeviceBuffer::of(qNorm);
    auto dKNorm = DeviceBuffer::of(kNorm);
    auto dInvFreq = DeviceBuffer::of(invFreq);
    DeviceBuffer dQ(std::size_t(T) * nH * hd * 4);
    BO_CUDA_OK(dCache.error());
    BO_CUDA_OK(dQ.error());
    kc::AttentionShape shape;
    shape.heads = nH;
    shape.kvHeads = nKv;
    shape.headDim = hd;
    shape.ropeDim = ropeDim;
    shape.gated = c.gated;
    shape.eps = eps;
    const kc::PagedKv paged { dCache.get<float>(), kv.layers, kv.blockTokens, kv.kvWidth };
    auto launch = [&](cudaStream_t s) {
        return kc::attentionPrepare(dQAll.get<float>(), qAllStride, dK.get<float>(),
            dV.get<float>(), dQNorm.get<float>(), dKNorm.get<float>(), dInvFreq.get<float>(), shape,
            step.layout, paged, kLayer, dQ.get<float>(), s);
    };
    BO_CUDA_OK(launch(ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<float> q, cache;
    BO_CUDA_OK(dQ.download(q));
    BO_CUDA_OK(dCache.download(cache));

    std::vector<float> qRef(q.size()), cacheRef = kv.data, kTmp = k;
    std::vector<bool> written(cacheRef.size(), false);
    int t = 0;
    for (std::size_t s = 0; s < seqs.size(); ++s)
        for (int i = 0; i < seqs[s].tokens; ++i, ++t) {
            const int pos = seqs[s].pos0 + i;
            for (int h = 0; h < nH; ++h) {
                float* dst = qRef.data() + (std::size_t(t) * nH + h) * hd;
                kernels::ops::rmsNorm(qAll.data() + std::size_t(t) * qAllStride
                        + std::size_t(h) * (c.gated ? 2 : 1) * hd,
                    qNorm.data(), hd, eps, dst);
                kernels::ops::ropeNeox(dst, ropeDim, invFreq.data(), pos);
            }
            float* kt = kTmp.data() + std::size_t(t) * nKv * hd;
            for (int h = 0; h < nKv; ++h) {
                kernels::ops::rmsNorm(kt + h * hd, kNorm.data(), hd, eps, kt + h * hd);
                kernels::ops::ropeNeox(kt + h * hd, ropeDim, invFreq.data(), pos);
            }
            const std::size_t key = kv.keyIndex(int(s), kLayer, pos);
            const std::size_t value = kv.valueIndex(int(s), kLayer, pos);
            std::memcpy(cacheRef.data() + key, kt, std::size_t(nKv) * hd * sizeof(float));
            std::memcpy(cacheRef.data() + value, v.data() + std::size_t(t) * nKv * hd,
                std::size_t(nKv) * hd * sizeof(float));
            std::fill_n(written.begin() + std::ptrdiff_t(key), nKv * hd, true);
            std::fill_n(written.begin() + std::ptrdiff_t(value), nKv * hd, true);
        }
    // Rotations at positions up to 30,000 (angles of 3e4 radians): sincos of large arguments
    // in f32 on both sides, 1e-5 relative as tests/gpu/attention.
    ctx.check("q", q, qRef, { 1e-4, 1e-5 }, [nH, hd](std::size_t i) {
        const std::size_t row = i / std::size_t(nH * hd), rest = i % std::size_t(nH * hd);
        return "row " + std::to_string(row) + ", head " + std::to_string(rest / std::size_t(hd))
            + ", value " + std::to_string(rest % std::size_t(hd));
    });
    std::vector<float> rowsGot, rowsWant, untouchedGot, untouchedWant;
    for (std::size_t i = 0; i < cache.size(); ++i) {
        if (written[i]) {
            rowsGot.push_back(cache[i]);
            rowsWant.push_back(cacheRef[i]);
        } else {
            untouchedGot.push_back(cache[i]);
            untouchedWant.push_back(cacheRef[i]);
        }
    }
    ctx.check("cached k and v rows", rowsGot, rowsWant, { 1e-4, 1e-5 });
    ctx.check(
        "cache outside the step's rows (unchanged)", untouchedGot, untouchedWant, { 0.0, 0.0 });
    ctx.measure(
        4.0 * double(T) * double(qAllStride + 2 * nKv * hd + nH * hd + 2 * nKv * hd), launch);
}

int contextOf(const std::vector<StepSequence>& seqs)
{
    int most = 1;
    for (const auto& s : seqs)
        most = std::max(most, s.pos0 + s.tokens);
    return most;
}

} // namespace

void addAttentionCases(CaseTable& table)
{
    // Head dims 16..256 (and 40, not a multiple of 16: transformers takes any), groups of 1, 2,
    // 3, 4 and 8 query heads per KV head, blocks of 16 (the engine's) and 5 (no power of two).
    const std::vector<Heads> heads { { 4, 2, 16, false, 16 }, { 2, 1, 16, true, 5 },
        { 4, 4, 32, false, 16 }, { 6, 2, 32, true, 16 }, { 4, 1, 64, true, 16 },
        { 8, 2, 64, false, 5 }, { 8, 1, 128, false, 16 }, { 4, 4, 128, true, 16 },
        { 16, 2, 256, true, 16 }, { 2, 2, 256, false, 5 }, { 4, 2, 40, false, 16 } };
    const std::vector<int> prompts { 1, 2, 63, 64, 65, 511, 647, 1000, 2049, 4097 };
    for (const Heads& h : heads) {
        // Head dims that are not a multiple of 16 only in the full table: the prefill kernels
        // refuse them (cudaErrorInvalidValue) today, which the full table shows.
        const bool small = h.heads * h.headDim <= 256 && h.headDim % 16 == 0;
        // Decode: one token per sequence, contexts that straddle the splits; the split count
        // comes from the capacity (maxContext).
        for (const auto& lengths : std::vector<std::vector<int>> {
                 { 1 }, { 2, 64, 65 }, { 1, 63, 511, 647 }, { 1000, 2049 }, { 4097 } }) {
            std::vector<StepSequence> seqs;
            for (int n : lengths)
                seqs.push_back({ n - 1, 1 });
            for (const int capacity : { contextOf(seqs), 8192 })
                table.add("pagedAttention (decode)",
                    headsText(h) + " " + seqsText(seqs) + " capacity " + std::to_string(capacity),
                    capacity == 8192 && lengths.size() == 4 && h.headDim % 16 == 0,
                    [h, seqs, capacity](CaseContext& ctx) {
                        runAttention(ctx, h, seqs, capacity, AttentionPath::Decode);
                    });
        }
        // Prefill of one prompt, at each length, both prefill paths.
        for (const int n : prompts) {
            if (n > 1000 && h.heads * h.headDim > 1024)
                continue; // the CPU reference of the longest prompts on the widest heads
            const std::vector<StepSequence> seqs { { 0, n } };
            for (const AttentionPath path : { AttentionPath::TensorCores, AttentionPath::Exact })
                table.add(path == AttentionPath::Exact ? "pagedAttention (exact prefill)"
                                                       : "pagedAttention (bf16 prefill)",
                    headsText(h) + " prompt " + std::to_string(n),
                    (n == 647 && h.headDim % 16 == 0) || (n == 65 && small),
                    [h, seqs, n, path](CaseContext& ctx) { runAttention(ctx, h, seqs, n, path); });
        }
        // Mixed steps: decode rows beside prefill chunks after cached positions.
        const std::vector<StepSequence> mixed { { 999, 1 }, { 16, 1 }, { 0, 129 }, { 250, 50 },
            { 511, 136 } };
        for (const AttentionPath path : { AttentionPath::TensorCores, AttentionPath::Exact })
            table.add(path == AttentionPath::Exact ? "pagedAttention (exact prefill)"
                                                   : "pagedAttention (bf16 prefill)",
                headsText(h) + " mixed " + seqsText(mixed), small,
                [h, mixed, path](CaseContext& ctx) { runAttention(ctx, h, mixed, 1024, path); });
        // The decode kernel with K/V rows in registers, the prefill at one block per SM.
        for (const auto& lengths :
            std::vector<std::vector<int>> { { 1, 63, 511, 647 }, { 2049, 4097 } }) {
            std::vector<StepSequence> seqs;
            for (int n : lengths)
                seqs.push_back({ n - 1, 1 });
            table.add("pagedAttention (decode, registers)", headsText(h) + " " + seqsText(seqs),
                lengths.size() == 4 && h.headDim % 16 == 0, [h, seqs](CaseContext& ctx) {
                    runAttention(
                        ctx, h, seqs, 8192, AttentionPath::Decode, Variant::DecodeInRegisters);
                });
        }
        table.add("pagedAttention (bf16 prefill, 1 block/SM)", headsText(h) + " prompt 647", false,
            [h](CaseContext& ctx) {
                runAttention(ctx, h, { { 0, 647 } }, 647, AttentionPath::TensorCores,
                    Variant::PrefillOneBlockPerSm);
            });
        // RoPE and the q/k norms: full and partial rotary (1/2, 1/4), rope theta 1e4..1e7,
        // rows of a prompt, of a chunk after 1,000 cached positions and of a decode at 30,000.
        for (const int divisor : { 1, 2, 4 }) {
            const int ropeDim = h.headDim / divisor;
            if (ropeDim < 2 || ropeDim % 2)
                continue;
            for (const double theta : { 1e4, 1e6, 1e7 })
                table.add("attentionPrepare (norms + RoPE)",
                    headsText(h) + " rope " + std::to_string(ropeDim) + " theta "
                        + std::to_string(int(theta)),
                    divisor == 4 && theta == 1e7 && h.headDim % 16 == 0,
                    [h, ropeDim, theta](CaseContext& ctx) {
                        runPrepare(
                            ctx, h, ropeDim, theta, { { 0, 5 }, { 1000, 3 }, { 30000, 1 } }, 30016);
                    });
        }
        table.add("attentionPrepare (norms + RoPE)", headsText(h) + " prompt 647", small,
            [h](CaseContext& ctx) {
                runPrepare(ctx, h, h.headDim / 4 >= 2 ? h.headDim / 4 : h.headDim, 1e7,
                    { { 0, 647 } }, 647);
            });
    }
}

} // namespace cw::backend_ops
