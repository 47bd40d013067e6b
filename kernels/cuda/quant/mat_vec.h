#pragma once

// The matrix-vector products' launch, split from their kernels (mat_vec_kernels.cuh) so that
// each mat_vec_*.cu instantiates the kernels of a few types.

#include "kernels/tensor_type.h"

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <vector_types.h>

namespace cw::kernels::cuda::quant_detail {

// Which matrix-vector kernels run. Auto: for GemmPrecision other than Float32, the integer
// products (mat_vec_int8.cuh) wherever they can run (block types, cols a multiple of 32,
// aligned rows, scratch for the quantized activations); otherwise, and always for Float32, the
// f32 kernels: the tensor-core kernel (mat_vec_mma.cuh) for block types at 4..8 token rows on
// matrices of 1024+ rows and 2048+ columns where its alignment needs are met (16-byte aligned
// rows and activations, cols a multiple of 32), the f32-FMA kernels otherwise. Simt and Mma
// force one f32 family (which turns the integer products off), Int8 forces the integer
// products where they can run (Float32 still keeps the f32 kernels: it is the tests'
// reference).
enum class MatVecKernel { Auto, Simt, Mma, Int8 };

struct MatVecArgs {
    const std::uint8_t* w;
    std::size_t rowStride;
    std::int64_t rows, cols;
    const float* x;
    std::int64_t xStride;
    std::int64_t tokens; // 1..kMatVecMaxTokens
    float* y;
    std::int64_t yStride;
    cudaStream_t stream;
    MatVecKernel kernel = MatVecKernel::Auto;
};

// Defined in mat_vec_kernels.cuh, instantiated per type in mat_vec_*.cu.
template <TensorType Type> cudaError_t launchMatVec(const MatVecArgs& a);

// Token rows quantized for the integer products (int_dot.cuh): `planes` int8 rows of cols
// values per token row at q (token t, plane p at q + (t * planes + p) * cols), then one float4
// {d0, d1, block sum, 0} per 32 values per token row at s (token t at s + t * cols / 32).
struct QuantizedRows {
    const std::int8_t* q = nullptr;
    const float4* s = nullptr;
    int planes = 1;
};

// One matrix of a launch of the integer products: rows of w (rowStride bytes apart) into
// y[t][r] (yStride floats apart).
struct IntMatVecTarget {
    const std::uint8_t* w = nullptr;
    std::size_t rowStride = 0;
    std::int64_t rows = 0;
    float* y = nullptr;
    std::int64_t yStride = 0;
};

// Matrices of one type and column count applied to the same activations share one launch
// (the attention's q and k, DeltaNet's input projections, the shared expert's gate and up):
// a launch costs more than the smaller of these products. Four: the most a layer shares
// (DeltaNet's qkv, z, beta, alpha); a limit of the launch's arguments, not tuned.
constexpr int kMaxIntMatVecTargets = 4;

struct IntMatVecArgs {
    IntMatVecTarget targets[kMaxIntMatVecTargets];
    int targetCount = 1;
    std::int64_t cols = 0;
    QuantizedRows x;
    std::int64_t tokens = 0; // 1..kMatVecMaxTokens (launchIntMatMul: ..kIntMatMulMaxTokens)
    cudaStream_t stream = nullptr;
};

// How a one-token integer product lays out its rows: a block per row, a warp per one or two
// rows, or a warp per row staged in shared memory before the kernel waits for its input
// (rows that fit; the others take a warp per row). CW_CUDA_INTMV=block|warp|warp2|staged pins
// it for the process (A/B runs of the benchmark); unset: the measured default
// (kernels/cuda/PERFORMANCE.md). Measured on the H200 (sm_90), 2026-12-02, batch-1 decode:
// staged 395.9/395.3 tok/s, warp rows 380.4/375.1 (an earlier call: block rows 327, warp 358-362).
enum class IntMatVecLayout { BlockRow, WarpRow, WarpTwoRows, StagedWarpRow };
IntMatVecLayout intMatVecLayout();
void setIntMatVecLayout(IntMatVecLayout layout); // tests: both layouts in one process

// Rows up to this many bytes are staged (four per block, within the 48 KB of shared memory a
// launch gets without opting in). A bound kept under that limit, not tuned (never measured).
constexpr std::int64_t kMaxStagedRowBytes = 8192;

// How the staged layout copies one row: `bytes` of it in copies of `chunk` bytes (16, 8 or
// 4: the largest that every target's rows are aligned to; a row's last copy may read into its
// stride's padding, never past it); bytes 0 where it cannot (rows over kMaxStagedRowBytes, or
// rows not even 4-byte aligned).
struct StagedRows {
    std::int64_t bytes = 0;
    int chunk = 16;
};
StagedRows stagedRows(
    TensorType type, std::int64_t cols, const IntMatVecTarget* targets, int count);

// Defined in mat_vec_int8.cuh, instantiated per block type in mat_vec_int8_*.cu.
template <TensorType Type> cudaError_t launchIntMatVec(const IntMatVecArgs& a);
// The same products for kMatVecMaxTokens < tokens <= kIntMatMulMaxTokens on the int8 tensor
// cores (mat_mul_int8.cuh, instantiated in mat_mul_int8_*.cu; every block type but Q2_K).
template <TensorType Type> cudaError_t launchIntMatMul(const IntMatVecArgs& a);

// One staged launch for one token row over matrices of two types, the first countFirst
// targets of type `first`, the rest of `second` (Q4_K, Q5_K and Q6_K, in any pair: the
// K-quant mixes); false, nothing launched, where the pair has no kernel or the rows cannot be
// staged (mat_vec_int8_mixed.cu).
bool launchIntMatVecTwoTypes(TensorType first, TensorType second, int countFirst,
    const IntMatVecArgs& a, cudaError_t& result);

// Bytes of QuantizedRows for rows x cols (q, then s at a 256-byte boundary).
std::size_t quantizedRowsBytes(std::int64_t rows, std::int64_t cols, int planes);
// Where quantizeRows lays such rows out at `at`, for a kernel that writes them itself.
QuantizedRows quantizedRowsAt(std::byte* at, std::int64_t rows, std::int64_t cols, int planes);

// Quantizes rows of x (xStride floats apart; cols a multiple of 32) into `at`
// (quantizedRowsBytes bytes, 256-byte aligned) and describes them in `out`.
cudaError_t quantizeRows(const float* x, std::int64_t xStride, std::int64_t rows, std::int64_t cols,
    int planes, std::byte* at, QuantizedRows& out, cudaStream_t stream);

// True where the integer products take a matrix of this type, column count, base address and
// row stride (block types; cols a multiple of 32; rows aligned as the unit loads need).
bool intDotSupports(TensorType type, std::int64_t cols, const void* data, std::size_t rowStride);

} // namespace cw::kernels::cuda::quant_detail
