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
// portable C++. Tests force each path.
enum class CpuKernelPath { Portable, Avx2 };
CpuKernelPath activeCpuKernelPath();
bool cpuSupportsAvx2();
// Forces a path (Avx2 is ignored where the CPU lacks it). Not thread-safe: tests and start-up.
void setCpuKernelPath(CpuKernelPath path);

} // namespace cw::kernels::quant
