#pragma once

// What the attention tests share: device arrays, a host paged KV cache with random contents
// and a shuffled block table, the step layout uploaded to the device, and error figures.

#include "kernels/cuda/cuda_step.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <numeric>
#include <random>
#include <vector>

#define CW_CUDA_OK(expr)                                                                           \
    do {                                                                                           \
        const cudaError_t cwStatus = (expr);                                                       \
        ASSERT_EQ(cwStatus, cudaSuccess) << #expr << ": " << cudaGetErrorString(cwStatus);         \
    } while (0)

namespace cw::kernels::cuda::test {

template <typename T> class DeviceArray {
public:
    DeviceArray() = default;
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    ~DeviceArray() { cudaFree(m_data); }

    cudaError_t allocate(std::size_t count)
    {
        cudaFree(m_data);
        m_data = nullptr;
        m_count = count;
        return cudaMalloc(
            reinterpret_cast<void**>(&m_data), std::max<std::size_t>(count, 1) * sizeof(T));
    }
    cudaError_t upload(const std::vector<T>& host)
    {
        const cudaError_t status = allocate(host.size());
        if (status != cudaSuccess)
            return status;
        return cudaMemcpy(m_data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
    }
    cudaError_t download(std::vector<T>& host) const
    {
        host.resize(m_count);
        return cudaMemcpy(host.data(), m_data, m_count * sizeof(T), cudaMemcpyDeviceToHost);
    }
    // Fills with NaN bytes (0xff), so values a kernel fails to write stand out.
    cudaError_t poison() { return cudaMemset(m_data, 0xff, m_count * sizeof(T)); }
    T* get() const { return m_data; }
    std::size_t size() const { return m_count; }

private:
    T* m_data = nullptr;
    std::size_t m_count = 0;
};

inline std::vector<float> randomVector(
    std::size_t n, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f)
{
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v)
        x = dist(rng);
    return v;
}

struct ErrorFigures {
    double relative = 0.0; // ||out - ref|| / ||ref||
    double maxAbs = 0.0;
    std::int64_t nonFinite = 0;
};

inline ErrorFigures compareVectors(const std::vector<float>& out, const std::vector<float>& ref)
{
    ErrorFigures f;
    double diff = 0.0, norm = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        if (!std::isfinite(out[i])) {
            ++f.nonFinite;
            continue;
        }
        const double d = double(out[i]) - double(ref[i]);
        diff += d * d;
        norm += double(ref[i]) * double(ref[i]);
        f.maxAbs = std::max(f.maxAbs, std::fabs(d));
    }
    f.relative = norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
    if (f.nonFinite)
        f.relative = INFINITY;
    return f;
}

// A sequence of a step: `tokens` rows at positions [pos0, pos0 + tokens).
struct StepSequence {
    int pos0 = 0;
    int tokens = 1;
};

// Host paged cache in the CPU's KvCachePool layout, random contents, each sequence's blocks
// drawn from a shuffled pool so that none are contiguous; unused table entries are -1. With
// `rowsOnly`, only the blocks of the step's own rows exist (enough for attentionPrepare).
struct HostPagedKv {
    int layers = 2;
    int blockTokens = 16;
    int kvWidth = 0;
    int blocksPerSequence = 0;
    std::int64_t maxBlocks = 0;
    std::vector<float> data;
    std::vector<std::int32_t> blockTables;

    void build(const std::vector<StepSequence>& seqs, int width, int tokensPerBlock, int maxContext,
        std::mt19937& rng, bool rowsOnly = false)
    {
        kvWidth = width;
        blockTokens = tokensPerBlock;
        blocksPerSequence = (maxContext + blockTokens - 1) / blockTokens;
        auto firstBlock
            = [&](const StepSequence& s) { return rowsOnly ? s.pos0 / blockTokens : 0; };
        auto endBlock = [&](const StepSequence& s) {
            return (s.pos0 + s.tokens + blockTokens - 1) / blockTokens;
        };
        std::int64_t needed = 0;
        for (const auto& s : seqs)
            needed += endBlock(s) - firstBlock(s);
        maxBlocks = needed + 3;
        std::vector<std::int32_t> ids(static_cast<std::size_t>(maxBlocks));
        std::iota(ids.begin(), ids.end(), 0);
        std::shuffle(ids.begin(), ids.end(), rng);
        blockTables.assign(seqs.size() * std::size_t(blocksPerSequence), -1);
        std::size_t next = 0;
        for (std::size_t s = 0; s < seqs.size(); ++s) {
            for (int b = firstBlock(seqs[s]); b < endBlock(seqs[s]); ++b)
                blockTables[s * std::size_t(blocksPerSequence) + std::size_t(b)] = ids[next++];
        }
        data = randomVector(std::size_t(maxBlocks) * layers * 2 * blockTokens * kvWidth, rng);
    }
    std::size_t keyIndex(int seq, int layer, int pos) const
    {
        const std::int64_t block
            = blockTables[std::size_t(seq) * blocksPerSequence + pos / blockTokens];
        return std::size_t(((block * layers + layer) * 2) * blockTokens * kvWidth
            + std::int64_t(pos % blockTokens) * kvWidth);
    }
    std::size_t valueIndex(int seq, int layer, int pos) const
    {
        return keyIndex(seq, layer, pos) + std::size_t(blockTokens) * kvWidth;
    }
};

// The device arrays of a StepLayout.
struct DeviceStep {
    DeviceArray<std::int32_t> tokens, rowSeq, rowPos, seqRow0, seqTokens, seqPos0, blockTables,
        slots;
    StepLayout layout;
    int rows = 0;

    cudaError_t upload(const std::vector<StepSequence>& seqs, const HostPagedKv& kv, int maxContext)
    {
        std::vector<std::int32_t> hRowSeq, hRowPos, hRow0, hTokens, hPos0, hSlots;
        int maxTokens = 0;
        for (std::size_t s = 0; s < seqs.size(); ++s) {
            hRow0.push_back(std::int32_t(hRowSeq.size()));
            hTokens.push_back(seqs[s].tokens);
            hPos0.push_back(seqs[s].pos0);
            hSlots.push_back(std::int32_t(s));
            maxTokens = std::max(maxTokens, seqs[s].tokens);
            for (int i = 0; i < seqs[s].tokens; ++i) {
                hRowSeq.push_back(std::int32_t(s));
                hRowPos.push_back(seqs[s].pos0 + i);
            }
        }
        rows = int(hRowSeq.size());
        const std::vector<std::int32_t> hTok(hRowSeq.size(), 7);
        for (auto [array, host] : { std::pair { &tokens, &hTok }, { &rowSeq, &hRowSeq },
                 { &rowPos, &hRowPos }, { &seqRow0, &hRow0 }, { &seqTokens, &hTokens },
                 { &seqPos0, &hPos0 }, { &blockTables, &kv.blockTables }, { &slots, &hSlots } }) {
            const cudaError_t status = array->upload(*host);
            if (status != cudaSuccess)
                return status;
        }
        layout.rows = rows;
        layout.sequences = int(seqs.size());
        layout.maxTokensPerSequence = maxTokens;
        layout.maxContext = maxContext;
        layout.blocksPerSequence = kv.blocksPerSequence;
        layout.tokens = tokens.get();
        layout.rowSeq = rowSeq.get();
        layout.rowPos = rowPos.get();
        layout.seqRow0 = seqRow0.get();
        layout.seqTokens = seqTokens.get();
        layout.seqPos0 = seqPos0.get();
        layout.blockTables = blockTables.get();
        layout.stateSlots = slots.get();
        return cudaSuccess;
    }
};

} // namespace cw::kernels::cuda::test
