#pragma once

// Chained launches (programmatic dependent launch, Hopper and newer): a kernel launched with
// launchChained may be scheduled while the kernel before it on the stream still runs; its
// blocks then wait at chainedKernelEntry() until that kernel has finished and its writes are
// visible. A decode step is hundreds of small dependent kernels, and this hides most of the
// launch latency between them (graph replays keep the chaining as programmatic edges).
//
// The contract: every kernel launched with launchChained calls chainedKernelEntry() before it
// writes device memory, and before it reads anything a kernel of the same step may write.
// Reads of what no kernel of the step writes (the weights, the step's row layout, copied in
// plainly before the step, a DeltaNet state only an earlier step wrote) may
// go out before it: they then overlap the kernel before. Kernels launched plainly (cuBLAS,
// memsets) keep the stream's full ordering, so mixing the two is safe. CW_CUDA_CHAINED=0 turns
// chaining off (A/B runs).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <utility>

namespace cw::kernels::cuda {

__device__ __forceinline__ void chainedKernelEntry()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // Wait for the kernel before this one, then let the next one be scheduled: its blocks
    // wait in turn, so at most one kernel runs ahead and none starves this one of SMs (all
    // of this kernel's blocks have started by the time the next is let in).
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Asks L2 for [p, p + bytes) and goes on without waiting (Hopper's bulk prefetch; nothing on
// older GPUs). p 16-byte aligned, bytes a multiple of 16. A chained kernel calls it on its
// weights before chainedKernelEntry(), so that they come from L2 once it may start.
__device__ __forceinline__ void prefetchL2(const void* p, unsigned bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#endif
}

// prefetchL2 of weight row `row` of a matrix whose rows are rowStride bytes apart from w; a
// no-op where the rows are not 16-byte aligned (the bulk prefetch's need).
__device__ __forceinline__ void prefetchRowL2(
    const std::uint8_t* w, std::size_t rowStride, std::int64_t row)
{
    if (rowStride % 16 == 0 && (reinterpret_cast<std::uintptr_t>(w) & 15) == 0)
        prefetchL2(w + std::size_t(row) * rowStride, unsigned(rowStride));
}

namespace chained_detail {
bool chainingAvailable(); // this device is sm_90+ and CW_CUDA_CHAINED is not 0
} // namespace chained_detail

template <typename... Params, typename... Args>
cudaError_t launchChained(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t sharedBytes,
    cudaStream_t stream, Args&&... args)
{
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config {};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = sharedBytes;
    config.stream = stream;
    config.attrs = attribute;
    config.numAttrs = chained_detail::chainingAvailable() ? 1 : 0;
    return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

} // namespace cw::kernels::cuda
