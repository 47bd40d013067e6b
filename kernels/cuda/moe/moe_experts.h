#pragma once

// The mixture-of-experts block on the device: router softmax and top-k, the routed experts
// (tokens grouped by expert so each expert's weights are read once per step), and the shared
// expert's sigmoid gate. No host round trip: expert choices stay in device memory.
//
// All functions enqueue on `stream`, never synchronise, never allocate, and return the launch
// error.

#include "kernels/cuda/cuda_step.h"
#include "kernels/cuda/quant/quant_products.h"
#include "kernels/tensor_type.h"

#include <cstddef>
#include <cstdint>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace cw::kernels::cuda {

// A stack of `experts` matrices in device memory: expert e's row r starts at
// data + e * expertStride + (rowOffset + r) * rowStride (rowOffset: the up half of a fused
// gate_up stack). With `expertData` (a device array of `experts` pointers) expert e starts at
// expertData[e] instead: a layer whose experts are partly cached on the GPU and partly read
// from mapped host memory (engine/backend/cuda/expert_cache.h); `data` then names the first
// cached expert, for the kernels' alignment checks.
struct DeviceExpertStack {
    TensorType type = TensorType::F32;
    const void* data = nullptr;
    const void* const* expertData = nullptr;
    std::size_t expertStride = 0; // bytes
    std::size_t rowStride = 0; // bytes
    std::int64_t rowOffset = 0;
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::int64_t experts = 0;
};

// Per token row t of logits [tokens][experts] (row stride experts): softmax over the experts,
// the k largest probabilities (ties keep the lower expert index, as the CPU's ops::topK), and
// their weights, divided by their sum when `renormalise`. ids/weights: [tokens][k], each
// row's ids in descending probability.
cudaError_t routerTopK(const float* logits, std::int64_t tokens, std::int64_t experts, int k,
    bool renormalise, std::int32_t* ids, float* weights, cudaStream_t stream);

// Decode steps (1..kMatVecMaxTokens rows, an f32 router of fewer than 2048 experts:
// routerFuses): logits = router x, then routerTopK, in one launch. The logits equal linear()'s.
// blocksDone: one device counter, zero before the first call; each call leaves it zero, so
// calls on one counter must not overlap.
bool routerFuses(const DeviceMatrix& router, std::int64_t tokens);
cudaError_t routerLogitsTopK(const DeviceMatrix& router, const float* x, std::int64_t xStride,
    std::int64_t tokens, float* logits, int k, bool renormalise, std::int32_t* ids, float* weights,
    unsigned* blocksDone, cudaStream_t stream);

// out[t] = sum_j weights[t][j] * down_e(silu(gate_e x[t]) * up_e x[t]) with e = ids[t][j],
// for t < tokens (x and out: [tokens][hidden], hidden = gate.cols = down.rows). out is
// overwritten. Decode-sized batches read only the chosen experts' rows; larger batches group
// the token rows per expert and run each expert's products on the tensor cores.
// What a decode step may hand the integer expert path to save it a launch: x already in two
// int8 planes, laid out as quantizeRows(planes 2) lays them out (the norm before the MoE block
// writes them). The results are the same bits as the path's own quantization of the same rows.
struct ExpertDecodeAids {
    Int8Rows x2; // q null: none
};
// The bytes of ExpertDecodeAids::x2 for `rows` token rows of `hidden` values, and its layout
// at `at` (256-byte aligned).
std::size_t expertInputRowsBytes(std::int64_t rows, std::int64_t hidden);
Int8Rows expertInputRowsAt(std::byte* at, std::int64_t rows, std::int64_t hidden);

cudaError_t routedExperts(const float* x, std::int64_t tokens, const std::int32_t* ids,
    const float* weights, int k, const DeviceExpertStack& gate, const DeviceExpertStack& up,
    const DeviceExpertStack& down, float* out, GemmPrecision precision, DeviceScratch scratch,
    cublasHandle_t cublas, cudaStream_t stream, const ExpertDecodeAids& aids = {});
// Whether routedExperts reads a chosen expert's rows once per (token, choice) pair at this
// many token rows (the decode kernels) rather than once per expert (the grouped products).
bool routedExpertsReadPerChoice(std::int64_t tokens);

std::size_t routedExpertsScratchBytes(std::int64_t tokens, int k, const DeviceExpertStack& gate,
    const DeviceExpertStack& down, GemmPrecision precision);

// out[t][c] += sigmoid(dot(gateWeight, x[t])) * down[t][c] for c < hidden: the shared
// expert's output behind its scalar gate (gateWeight: [hidden] f32).
cudaError_t addGatedSharedExpert(const float* x, const float* gateWeight, const float* down,
    std::int64_t tokens, std::int64_t hidden, float* out, cudaStream_t stream);

// counts[ids[i]] += 1 for i < pairs (the routing frequency the expert cache is ranked by).
cudaError_t countExpertChoices(
    const std::int32_t* ids, std::int64_t pairs, std::uint32_t* counts, cudaStream_t stream);

// Reads `bytes` (a multiple of 16) from `data` (device memory or mapped host memory) and
// leaves a checksum in *sink: timing it measures how fast the GPU reads that memory.
cudaError_t readBytesProbe(
    const void* data, std::size_t bytes, std::uint32_t* sink, cudaStream_t stream);

// In place, x[i] = silu(gate[i]) * x[i] for i < n.
cudaError_t siluMul(float* x, const float* gate, std::int64_t n, cudaStream_t stream);

} // namespace cw::kernels::cuda
