#pragma once

// Products of weight matrices stored in their GGUF block layouts (uploaded to the device as
// they are in the file, never expanded) with f32 activations on the device. Every type the
// CPU reads: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,
// IQ4_XS. The dequantization formulas are ggml's (the CPU's kernels/cpu/quant/dequantize.cpp),
// so a block means on the device exactly what it means on the CPU.
//
// All functions enqueue on `stream`, never synchronise, never allocate, and return the launch
// error (cudaSuccess when every launch was accepted).

#include "kernels/cuda/cuda_step.h"
#include "kernels/tensor_type.h"

#include <cstddef>
#include <cstdint>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <vector_types.h>

namespace cw::kernels::cuda {

// A row-major matrix in device memory: `rows` rows of `cols` values of `type`, rowStride
// bytes apart.
struct DeviceMatrix {
    TensorType type = TensorType::F32;
    const void* data = nullptr;
    std::size_t rowStride = 0;
    std::int64_t rows = 0;
    std::int64_t cols = 0;
};

bool supportsMatrixType(TensorType type);

// How prefill products (many token rows) use the tensor cores. The weights are dequantized
// tile by tile (or into scratch) to the operand type; accumulation is always f32.
enum class GemmPrecision {
    Float32, // plain f32 FMA (slowest; the reference for tests)
    TensorFloat32, // tf32 operands
    BFloat16, // bf16 operands (fastest)
};

// Token rows at or under this count take the matrix-vector path: every weight row is read
// once for all of them, from device memory, at close to full bandwidth. Tuned on the H200
// (sm_90): a card with less bandwidth per SM may want another. (Most other thresholds in
// kernels/cuda were not measured; each says which it is.)
constexpr std::int64_t kMatVecMaxTokens = 8;

// Above it and up to this count (decode steps of many sequences), dequantized weights and
// cuBLAS, as above it, except matrices of 65,536 rows and more (the LM head), which take the
// int8 tensor-core products (mat_mul_int8.cuh, block types other than Q2_K): 8 % faster at 32
// sequences on the H200. CW_CUDA_INTMM=1 sends every matrix to them (slower), =0 none. The
// 64 itself is the largest token tile of those kernels (a limit; the H200 figure is the rows').
constexpr std::int64_t kIntMatMulMaxTokens = 64;

// y[t][r] = sum_c w[r][c] * x[t][c] for t < tokens, r < w.rows. x rows are xStride floats
// apart, y rows yStride floats apart. Any token count: up to kMatVecMaxTokens the
// matrix-vector kernels, up to kIntMatMulMaxTokens the integer tensor-core products where the
// type has them, above that dequantized weights and cuBLAS (needs `scratch` of
// linearScratchBytes bytes and the cuBLAS handle, which must be bound to `stream`).
cudaError_t linear(const DeviceMatrix& w, const float* x, std::int64_t xStride, std::int64_t tokens,
    float* y, std::int64_t yStride, GemmPrecision precision, DeviceScratch scratch,
    cublasHandle_t cublas, cudaStream_t stream);
std::size_t linearScratchBytes(const DeviceMatrix& w, std::int64_t tokens, GemmPrecision precision);
// The most token rows whose products with w take the integer kernels on its quantized blocks
// (kIntMatMulMaxTokens or kMatVecMaxTokens), 0 where none serve it (float types, Float32).
std::int64_t integerProductMaxTokens(const DeviceMatrix& w, GemmPrecision precision);

// One input, several matrices of the same column count: outputs[i].y = x W_i^T, each as
// linear() computes it. On the integer matrix-vector path x is quantized once for all of
// them (or taken from `quantized`: the same rows as Int8Rows, cuda_step.h) and matrices of one type
// share a launch; scratch: the largest linearScratchBytes of the matrices.
struct LinearOutput {
    const DeviceMatrix* w = nullptr;
    float* y = nullptr;
    std::int64_t yStride = 0;
};
constexpr int kMaxFanOut = 8;
cudaError_t linearFanOut(const LinearOutput* outputs, int count, const float* x,
    std::int64_t xStride, std::int64_t tokens, const Int8Rows* quantized, GemmPrecision precision,
    DeviceScratch scratch, cublasHandle_t cublas, cudaStream_t stream);

// out[i][c] = w[ids[i]][c] for i < count (an embedding lookup); ids on the device.
cudaError_t gatherRows(const DeviceMatrix& w, const std::int32_t* ids, std::int64_t count,
    float* out, cudaStream_t stream);

// Dequantizes rows [0, w.rows) of w to bf16 (out: rows x cols, row-major) or f32.
cudaError_t dequantizeToBf16(const DeviceMatrix& w, std::uint16_t* out, cudaStream_t stream);
cudaError_t dequantizeToF32(const DeviceMatrix& w, float* out, cudaStream_t stream);

} // namespace cw::kernels::cuda
