#pragma once

// Device helpers of the DeltaNet kernels: the scalar functions written as the CPU's ops
// (kernels/cpu/ops/ops.cpp) so both round alike, and warp sums.

#include <atomic>
#include <cstddef>
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

__device__ __forceinline__ float4 load4(const float* p)
{
    return *reinterpret_cast<const float4*>(p);
}

__device__ __forceinline__ void store4(float* p, float4 v)
{
    *reinterpret_cast<float4*>(p) = v;
}

// 16 bytes global -> shared without passing through registers (sm_80+), L2 only.
__device__ __forceinline__ void copyAsync16(float* shared, const float* global)
{
    const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address), "l"(global));
}

__device__ __forceinline__ void copyAsyncCommit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

__device__ __forceinline__ void copyAsyncWaitAll()
{
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

// Raises a kernel's dynamic shared memory limit to what it needs, once per kernel (a host
// call, not a stream operation, so it is done before any graph capture of the call).
template <typename Kernel>
cudaError_t allowSharedMemory(Kernel kernel, std::atomic<std::size_t>& allowed, std::size_t bytes)
{
    if (bytes <= 48 * 1024 || bytes <= allowed.load())
        return cudaSuccess;
    const cudaError_t err
        = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
    if (err == cudaSuccess)
        allowed.store(bytes);
    return err;
}

} // namespace cw::kernels::cuda::deltanet
