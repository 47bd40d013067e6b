#pragma once

// What every CUDA kernel family of a forward step shares: the layout of the step's token rows
// over its sequences, as device arrays, and scratch memory handed in by the caller. Plain C++
// (no CUDA syntax) so the engine's C++ code can fill it; kernels read it on the device.
//
// Graph capture: a decode step is captured once per batch-size bucket and replayed. Kernels
// must therefore read every per-step length (positions, sequence lengths, block tables) from
// these device arrays, and size their grids only from the host fields marked "capacity"
// below, never from current lengths. Blocks whose work lies past a sequence's current length
// return early.

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <vector_types.h>

namespace cw::kernels::cuda {

// Scratch device memory lent to one call; the call may use all of it and keeps nothing.
struct DeviceScratch {
    std::byte* data = nullptr;
    std::size_t bytes = 0;
};

// Token rows quantized for the integer matrix-vector products (quant_products.h): int8 values
// [rows][cols] at q and, per 32 values, one float4 {d, 0, sum of the f32 values, 0} at s (row
// r's at s + r * cols / 32); value = d * q. A kernel that makes a product's input may write it
// so too (the residual RMSNorm), and the product then needs no quantization of its own.
struct Int8Rows {
    std::int8_t* q = nullptr;
    float4* s = nullptr;
};

// The token rows of one step. Row r belongs to sequence rowSeq[r] at position rowPos[r];
// sequence s owns rows [seqRow0[s], seqRow0[s] + seqTokens[s]) at positions
// [seqPos0[s], seqPos0[s] + seqTokens[s]). Rows of one sequence are consecutive and in order.
struct StepLayout {
    // Host-known sizes (fixed for a captured graph).
    std::int32_t rows = 0; // T: token rows in the step
    std::int32_t sequences = 0; // S
    std::int32_t maxTokensPerSequence = 0; // capacity: >= every seqTokens[s] (1 in decode)
    std::int32_t maxContext = 0; // capacity: >= every seqPos0[s] + seqTokens[s]
    std::int32_t blocksPerSequence = 0; // row stride of blockTables (>= maxContext / blockTokens)
    // Device arrays.
    const std::int32_t* tokens = nullptr; // [T] token ids
    const std::int32_t* rowSeq = nullptr; // [T]
    const std::int32_t* rowPos = nullptr; // [T]
    const std::int32_t* seqRow0 = nullptr; // [S]
    const std::int32_t* seqTokens = nullptr; // [S]
    const std::int32_t* seqPos0 = nullptr; // [S]
    const std::int32_t* blockTables = nullptr; // [S][blocksPerSequence] KV block ids
    const std::int32_t* stateSlots = nullptr; // [S] recurrent-state slot of each sequence
};

// The paged KV cache of all attention layers: maxBlocks blocks, each holding blockTokens
// positions of keys and values for every attention layer, f32, laid out exactly as the CPU's
// KvCachePool: block b, layer l, slot s, key at
//   base + ((b * layers + l) * 2 + 0) * blockTokens * kvWidth + s * kvWidth
// and the value at the same place with + 1 instead of + 0. kvWidth = numKvHeads * headDim;
// head h of a row is values [h * headDim, (h + 1) * headDim).
struct PagedKv {
    float* base = nullptr;
    std::int32_t layers = 0;
    std::int32_t blockTokens = 0;
    std::int32_t kvWidth = 0;
};

} // namespace cw::kernels::cuda
