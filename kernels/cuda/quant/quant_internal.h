#pragma once

// What the files of kernels/cuda/quant share beyond the public contract (plain C++: the tests
// include it too).

#include "kernels/cuda/quant/mat_vec.h"
#include "kernels/cuda/quant/quant_products.h"

#include <cstdint>
#include <cuda_runtime_api.h>

namespace cw::kernels::cuda::quant_detail {

// Rows [row0, row0 + count) of w dequantized to bf16 (bf16 = true) or f32, written
// row-major with `cols` values per row at out.
cudaError_t dequantizeRows(const DeviceMatrix& w, std::int64_t row0, std::int64_t count, void* out,
    bool bf16, cudaStream_t stream);

// As dequantizeToF32, but through the 32-value chunk decoders the matrix-vector products use
// (kernels/cuda/quant/chunk_decode.cuh), in their exact mode: lets the tests check those bit
// for bit. Block types only (cudaErrorInvalidValue for F32/F16/BF16).
cudaError_t dequantizeChunksToF32(const DeviceMatrix& w, float* out, cudaStream_t stream);

// Forces a matrix-vector kernel family for the calls that follow (process-wide; tests and
// benchmarks only, not thread-safe).
void setMatVecKernel(MatVecKernel kernel);
// Sends every matrix with the int8 tensor-core products to them at 9..kIntMatMulMaxTokens rows
// (as CW_CUDA_INTMM=1), or back to the environment's setting (linear.cu); process-wide, tests
// only.
void setIntMatMulForAll(bool all);

// The matrix-vector products (1..kMatVecMaxTokens token rows).
cudaError_t matVec(const DeviceMatrix& w, const float* x, std::int64_t xStride, std::int64_t tokens,
    float* y, std::int64_t yStride, cudaStream_t stream);

// The integer matrix-vector products (mat_vec_int8.cuh). usesIntMatVec is the one place that
// decides between them and the f32 kernels (precision, the MatVecKernel switch, type, shape,
// alignment); intMatVec quantizes x into scratch (intMatVecScratchBytes) and runs them;
// intMatVecQuantized runs them on rows already quantized by quantizeRows (several matrices
// applied to the same x then quantize it once).
bool usesIntMatVec(const DeviceMatrix& w, std::int64_t tokens, GemmPrecision precision);
std::size_t intMatVecScratchBytes(const DeviceMatrix& w, std::int64_t tokens);
cudaError_t intMatVec(const DeviceMatrix& w, const float* x, std::int64_t xStride,
    std::int64_t tokens, float* y, std::int64_t yStride, DeviceScratch scratch,
    cudaStream_t stream);
cudaError_t intMatVecQuantized(const DeviceMatrix& w, const QuantizedRows& x, std::int64_t tokens,
    float* y, std::int64_t yStride, cudaStream_t stream);

// f32 rows (stride xStride floats) to packed bf16 rows of `cols` values.
cudaError_t convertToBf16(const float* x, std::int64_t xStride, std::int64_t rows,
    std::int64_t cols, std::uint16_t* out, cudaStream_t stream);

} // namespace cw::kernels::cuda::quant_detail
