#pragma once

// Device helpers of the DeltaNet kernels: the scalar functions written as the CPU's ops
// (kernels/cpu/ops/ops.cpp) so both round alike, and warp sums.

#include <cuda_runtime.h>

namespace cw::kernels::cuda::deltanet {

__device__ __forceinline__ float siluF(float x)
{
    return x / (1.0f + expf(-x));
}

__device__ __forceinline__ float sigmoidF(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

// torch's softplus with threshold 20.
__device__ __forceinline__ float softplusF(float x)
{
    return x > 20.0f ? x : log1pf(expf(x));
}

__device__ __forceinline__ float warpSum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

} // namespace cw::kernels::cuda::deltanet
