#pragma once

// The matrix-vector products' launch, split from their kernels (mat_vec_kernels.cuh) so that
// each mat_vec_*.cu instantiates the kernels of a few types.

#include "kernels/tensor_type.h"

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>

namespace cw::kernels::cuda::quant_detail {

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
};

// Defined in mat_vec_kernels.cuh, instantiated per type in mat_vec_*.cu.
template <TensorType Type> cudaError_t launchMatVec(const MatVecArgs& a);

} // namespace cw::kernels::cuda::quant_detail
