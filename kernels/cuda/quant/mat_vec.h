#pragma once

// The matrix-vector products' launch, split from their kernels (mat_vec_kernels.cuh) so that
// each mat_vec_*.cu instantiates the kernels of a few types.

#include "kernels/tensor_type.h"

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>

namespace cw::kernels::cuda::quant_detail {

// Which matrix-vector kernels run: Auto picks the tensor-core kernel (mat_vec_mma.cuh) for
// block types at 4..8 token rows on matrices of 1024+ rows where its alignment needs are met
// (16-byte aligned rows and activations, cols a multiple of 32), the f32-FMA kernels
// otherwise; Simt and Mma force one family where it can run (tests and the
// micro-benchmark compare them).
enum class MatVecKernel { Auto, Simt, Mma };

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

} // namespace cw::kernels::cuda::quant_detail
