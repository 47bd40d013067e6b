#pragma once

// Device-side addressing of the paged KV cache (kernels/cuda/cuda_step.h's PagedKv) for one
// attention layer, shared by the attention kernels of this folder.

#include "kernels/cuda/cuda_step.h"

#include <cstdint>
#include <cuda_runtime.h>

namespace cw::kernels::cuda::attention_detail {

struct KvRows {
    float* base = nullptr;
    std::int32_t layers = 0;
    std::int32_t blockTokens = 0;
    std::int32_t kvWidth = 0;
    std::int32_t layer = 0;
    std::int32_t blockShift = -1; // log2(blockTokens) when a power of two, else -1
    const std::int32_t* blockTables = nullptr;
    std::int32_t blocksPerSequence = 0;

    // Offset in floats of the key row of sequence `seq` at position `pos` (head 0); the value
    // row is valueOffset() floats further.
    __device__ std::int64_t keyOffset(int seq, int pos) const
    {
        int index, slot;
        if (blockShift >= 0) {
            index = pos >> blockShift;
            slot = pos & (blockTokens - 1);
        } else {
            index = pos / blockTokens;
            slot = pos - index * blockTokens;
        }
        const std::int64_t block = blockTables[std::int64_t(seq) * blocksPerSequence + index];
        return ((block * layers + layer) * 2) * blockTokens * std::int64_t(kvWidth)
            + std::int64_t(slot) * kvWidth;
    }
    __device__ std::int64_t valueOffset() const { return std::int64_t(blockTokens) * kvWidth; }
};

inline KvRows makeKvRows(const PagedKv& kv, int layer, const StepLayout& layout)
{
    KvRows rows;
    rows.base = kv.base;
    rows.layers = kv.layers;
    rows.blockTokens = kv.blockTokens;
    rows.kvWidth = kv.kvWidth;
    rows.layer = layer;
    if (kv.blockTokens > 0 && (kv.blockTokens & (kv.blockTokens - 1)) == 0) {
        int shift = 0;
        while ((1 << shift) < kv.blockTokens)
            ++shift;
        rows.blockShift = shift;
    }
    rows.blockTables = layout.blockTables;
    rows.blocksPerSequence = layout.blocksPerSequence;
    return rows;
}

} // namespace cw::kernels::cuda::attention_detail
