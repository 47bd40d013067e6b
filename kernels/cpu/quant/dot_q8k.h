#pragma once

// Products of k-quant weights (Q4_K, Q5_K, Q6_K) with activations quantized to Q8_K: integer
// dot products per sub-block, scaled once per sub-block, as llama.cpp computes them. The
// result differs from the float-activation products of dot.h by the rounding of x to 8 bits
// (relative error about 0.2 % of max|x| per value, averaged over the row).

#include "kernels/cpu/quant/q8_k.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/tensor_type.h"

#include <cstddef>
#include <cstdint>

namespace cw::kernels::quant {

// The AVX-512 path takes the VNNI kernels where the CPU has them (the same values); off for
// a benchmark's A/B. Not thread-safe: tests, benchmarks and start-up.
void setQ8KVnni(bool on);

// True for the weight types these products handle.
bool hasQ8KDot(TensorType type);

// One row of `type` (n values, n a multiple of 256) dotted with n / 256 blocks of x.
float dotRowQ8K(TensorType type, const void* row, const BlockQ8K* x, std::int64_t n);

// Y = X * W^T: X is nTokens rows of cols / 256 blocks, Y is nTokens x rows (row stride rows).
// Rows are split over the pool; tokens are taken in tiles so a tile of weight rows and of
// activations stay in cache together.
void matMulQ8K(TensorType type, const void* weights, std::size_t rowStrideBytes, std::int64_t rows,
    std::int64_t cols, const BlockQ8K* x, std::int64_t nTokens, float* y, ThreadPool* pool);

// y[t * yStride + r] = W[r] . x[t] for rows [begin, end) and tokens [0, nTokens) (x: nTokens
// rows of cols / 256 blocks), on the calling thread; matMulQ8K's work, for callers that split
// the rows of several matrices over one parallel region.
void matMulRowsQ8K(TensorType type, const void* weights, std::size_t rowStrideBytes,
    std::int64_t cols, const BlockQ8K* x, std::int64_t nTokens, std::int64_t begin,
    std::int64_t end, float* y, std::int64_t yStride);

// y[r - begin] = W[r] . x for rows [begin, end) of one matrix (no threads); for callers that
// split several matrices over one parallel region.
void matVecRowsQ8K(TensorType type, const void* weights, std::size_t rowStrideBytes,
    std::int64_t cols, const BlockQ8K* x, std::int64_t begin, std::int64_t end, float* y);

} // namespace cw::kernels::quant
