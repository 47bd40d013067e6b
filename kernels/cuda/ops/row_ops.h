#pragma once

// Row-wise element kernels of the forward pass on f32 device rows. All functions enqueue on
// `stream`, never synchronise, never allocate, and return the launch error.

#include "kernels/cuda/cuda_step.h"

#include <cstdint>
#include <cuda_runtime_api.h>

namespace cw::kernels::cuda {

// y[i] += x[i] for i < n (the host experts' sums into the routed experts' output).
cudaError_t addInPlace(float* y, const float* x, std::int64_t n, cudaStream_t stream);

// out[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w (w: [n], may be null) for r < rows; rows of n
// values, xStride / outStride floats apart. out may alias x. Same formula as ops::rmsNorm.
cudaError_t rmsNormRows(const float* x, std::int64_t xStride, const float* w, std::int64_t rows,
    std::int64_t n, float eps, float* out, std::int64_t outStride, cudaStream_t stream);

// The shared expert's output behind its scalar gate, added to a residual step's delta by the
// norm that follows the MoE block: delta[r] + sigmoid(dot(gateWeight, x[r])) * down[r], the
// sum addGatedSharedExpert (moe_experts.h) would have written first, in the same arithmetic.
// x may be the norm's own output rows (each row's gate is read before its row is written).
struct GatedAddend {
    const float* x = nullptr; // null: no addend
    const float* gateWeight = nullptr;
    const float* down = nullptr;
};

// The residual step between blocks: hidden[r] += delta[r] (skipped when delta is null), then
// normed[r] = rmsNorm(hidden[r]) * w. Rows of n values, contiguous.
cudaError_t addRmsNormRows(float* hidden, const float* delta, const float* w, std::int64_t rows,
    std::int64_t n, float eps, float* normed, cudaStream_t stream, GatedAddend addend = {});

// addRmsNormRows that also writes the normed rows as Int8Rows (cuda_step.h; 16-byte aligned
// pointers; n a
// multiple of 128 and at most 4096: addRmsNormQuantizes(n)), so the products that read them
// need no quantization of their own.
bool addRmsNormQuantizes(std::int64_t n);
// twoPlanes (optional): the normed rows also in two int8 planes, laid out as quantizeRows
// (planes 2) lays them out, for the routed experts' integer products (ExpertDecodeAids).
cudaError_t addRmsNormRowsQuantized(float* hidden, const float* delta, const float* w,
    std::int64_t rows, std::int64_t n, float eps, float* normed, Int8Rows quantized,
    cudaStream_t stream, GatedAddend addend = {}, Int8Rows twoPlanes = {});

// Gathers rows: out[i] = x[rows[i]] (rows of n values, contiguous); `rows` on the device.
cudaError_t gatherF32Rows(const float* x, const std::int32_t* rows, std::int64_t count,
    std::int64_t n, float* out, cudaStream_t stream);

// Adds the number of non-finite values among x[0, n) to *count (device int, not reset).
cudaError_t countNonFinite(const float* x, std::int64_t n, int* count, cudaStream_t stream);

// For each row r < rows: index[r] = the index of the largest of x[r][0, n) (the lowest index
// among equals), value[r] = that value. For greedy decoding without copying the logits.
// `workspace`: argmaxWorkspaceBytes(rows, n) bytes of device memory that are zero before the
// first call; every call leaves them zero (so calls on one workspace must not overlap); a
// workspace sized for rows serves every call of up to rows rows (at most 64).
std::size_t argmaxWorkspaceBytes(std::int64_t rows, std::int64_t n);
cudaError_t argmaxRows(const float* x, std::int64_t rows, std::int64_t n, std::int32_t* index,
    float* value, void* workspace, cudaStream_t stream);

} // namespace cw::kernels::cuda
