#pragma once

#include "kernels/cpu/thread_pool.h"
#include "kernels/tensor_type.h"

#include <cstddef>
#include <cstdint>

namespace cw::kernels::quant {

// y[r] = sum_c W[r][c] * x[c] for r in [0, rows). Row r of W starts at
// weights + r * rowStrideBytes and holds `cols` values of `type` (cols a whole number of
// blocks). Works on the quantized blocks directly (one block at a time, never a float copy of
// the matrix). Types with fast paths: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K; the others
// dequantize one block at a time. pool may be null (single thread).
void matVec(TensorType type, const void* weights, std::size_t rowStrideBytes, std::int64_t rows,
    std::int64_t cols, const float* x, float* y, ThreadPool* pool);

// Y = X * W^T for a small batch: X is nTokens x cols (row-major, row stride cols), Y is
// nTokens x rows (row stride rows). Each weight block is decoded once for all tokens.
void matMul(TensorType type, const void* weights, std::size_t rowStrideBytes, std::int64_t rows,
    std::int64_t cols, const float* x, std::int64_t nTokens, float* y, ThreadPool* pool);

// Dot product of one quantized row (n values) with x.
float dotRow(TensorType type, const void* row, const float* x, std::int64_t n);

// Which implementation runs: AVX2+FMA+F16C when the CPU has them (checked at run time), else
// portable C++; Avx512 is Avx2 plus 512-bit versions of the kernels that have one (the
// integer k-quant products). Tests force each path.
enum class CpuKernelPath { Portable, Avx2, Avx512 };
CpuKernelPath activeCpuKernelPath();
bool cpuSupportsAvx2();
bool cpuSupportsAvx512(); // AVX-512 F and BW, besides AVX2
// Forces a path (falls back to the best the CPU has). Not thread-safe: tests and start-up.
void setCpuKernelPath(CpuKernelPath path);
// The path the CPU's features select (what runs unless a test forced another).
CpuKernelPath detectedCpuKernelPath();

} // namespace cw::kernels::quant
