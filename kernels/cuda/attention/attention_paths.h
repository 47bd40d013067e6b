#pragma once

// The ways pagedAttention() runs, one per file: flash-decoding for steps of one token per
// sequence (decode_attention.cu), tiled tensor-core attention for the rest
// (prefill_attention.cu), or tiled f32 attention for the rest when the shape asks for
// exactPrefill (exact_prefill_attention.cu). paged_attention.cu picks one.

#include "kernels/cuda/attention/paged_attention.h"

#include <cstddef>
#include <cuda_runtime_api.h>

namespace cw::kernels::cuda::attention_detail {

// Key splits per (sequence, KV head) of a decode step: from capacities only, so a captured
// graph replays at any length.
int decodeSplits(const AttentionShape& shape, const StepLayout& layout);
// Which decode kernel runs: K/V rows streamed through shared memory with cp.async (default),
// or prefetched one group ahead in registers. For the tests and the benchmark.
void useStagedDecode(bool staged);
std::size_t decodeScratchBytes(const AttentionShape& shape, const StepLayout& layout);
cudaError_t launchDecodeAttention(const float* q, const float* gate, std::int64_t gateStride,
    const AttentionShape& shape, float scale, const StepLayout& layout, PagedKv kv, int layer,
    float* out, DeviceScratch scratch, cudaStream_t stream);

// Prefill stages the keys and values of the step's sequences as bf16 in the scratch
// (capacity: sequences x kvHeads x maxContext rows of the head dim rounded up to 64, 128 or
// 256), then runs the flash-attention kernel on them.
// 0: the default occupancy; 1: one block per multiprocessor for head dims <= 128 too. For
// the benchmark.
void usePrefillBlocksPerSm(int blocks);
std::size_t prefillScratchBytes(const AttentionShape& shape, const StepLayout& layout);
cudaError_t launchPrefillAttention(const float* q, const float* gate, std::int64_t gateStride,
    const AttentionShape& shape, float scale, const StepLayout& layout, PagedKv kv, int layer,
    float* out, DeviceScratch scratch, cudaStream_t stream);

// Exact prefill reads the keys and values from the paged cache itself: no scratch.
cudaError_t launchExactPrefillAttention(const float* q, const float* gate, std::int64_t gateStride,
    const AttentionShape& shape, float scale, const StepLayout& layout, PagedKv kv, int layer,
    float* out, cudaStream_t stream);

} // namespace cw::kernels::cuda::attention_detail
