#pragma once

// Full attention over the paged KV cache (kernels/cuda/cuda_step.h's PagedKv), for Qwen3
// (plain grouped-query attention) and Qwen3.5 (gated output, partial rotary embedding).
// The same formulas as the CPU's engine/models/layers.cpp attentionLayer.
//
// All functions enqueue on `stream`, never synchronise, never allocate, and return the launch
// error.

#include "kernels/cuda/cuda_step.h"

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>

namespace cw::kernels::cuda {

struct AttentionShape {
    std::int32_t heads = 0; // query heads nH
    std::int32_t kvHeads = 0; // nKv (nH % nKv == 0)
    std::int32_t headDim = 0; // hd
    std::int32_t ropeDim = 0; // rotary values per head (<= hd; the first ropeDim rotate)
    bool gated = false; // q rows hold [query hd][gate hd] per head
    float eps = 1e-6f; // q/k RMSNorm
    // Prefill on f32 FMA tiles instead of bf16 tensor cores: the reference the tests compare
    // (GemmPrecision::Float32); decode is f32 either way.
    bool exactPrefill = false;
};

// Per token row t (layout.rows rows):
//  - query head h: qAll[t] + h * (gated ? 2 hd : hd), hd values: RMSNorm with qNorm ([hd]),
//    then NeoX rotary (pairs (i, i + ropeDim/2), i < ropeDim/2, angle rowPos[t] * invFreq[i])
//    -> q[t][h] (q: [T][nH][hd]);
//  - key head h of k[t] ([T][kvWidth]): RMSNorm with kNorm, the same rotary; the result and
//    v[t] are stored in the cache of attention layer `layer` at position rowPos[t] of
//    sequence rowSeq[t] (block blockTables[seq][pos / blockTokens], slot pos % blockTokens).
// qAll rows are qAllStride floats apart.
cudaError_t attentionPrepare(const float* qAll, std::int64_t qAllStride, const float* k,
    const float* v, const float* qNorm, const float* kNorm, const float* invFreq,
    const AttentionShape& shape, const StepLayout& layout, PagedKv kv, int layer, float* q,
    cudaStream_t stream);

// Causal attention of every row's query heads q[t][h] against the cached keys and values of
// its sequence, positions [0, rowPos[t]] (KV head h / (nH / nKv)); scores scaled by `scale`.
// When `gate` is not null (gated output), head h of row t is multiplied element-wise by
// sigmoid(gate[t * gateStride + h * 2 * hd + i]) — pass qAll + hd and qAllStride.
// out: [T][nH * hd]. Decode steps (one token per sequence) split each sequence's keys over
// several blocks (flash-decoding) and combine; prefill steps tile queries and keys (bf16
// tensor cores, or f32 FMAs with shape.exactPrefill). Head sizes the kernels do not take
// (pagedAttentionTakesHeadDim) return cudaErrorNotSupported, other bad arguments
// cudaErrorInvalidValue.
cudaError_t pagedAttention(const float* q, const float* gate, std::int64_t gateStride,
    const AttentionShape& shape, float scale, const StepLayout& layout, PagedKv kv, int layer,
    float* out, DeviceScratch scratch, cudaStream_t stream);
// The head sizes the kernels take: multiples of 16 (the prefill tiles' k-steps) up to 256. The
// backend refuses other models at load with this, by name.
constexpr bool pagedAttentionTakesHeadDim(int headDim)
{
    return headDim > 0 && headDim % 16 == 0 && headDim <= 256;
}
// Scratch pagedAttention needs for `layout`; with less it returns cudaErrorInvalidValue.
// Decode steps: the splits' partial results, sequences x heads x splits x (hd + 2) floats
// (a few MB). Other steps: the keys and values the step's sequences see, staged as bf16 for
// the tensor cores, 2 x sequences x kvHeads x maxContext x (hd rounded up to 64, 128 or 256)
// x 2 bytes (56 MB for one 28k-token Qwen3.6 sequence): keep maxContext of prefill layouts
// near the real contexts. With shape.exactPrefill, other steps need none (f32 tiles read the
// cache itself).
std::size_t pagedAttentionScratchBytes(const AttentionShape& shape, const StepLayout& layout);

} // namespace cw::kernels::cuda
