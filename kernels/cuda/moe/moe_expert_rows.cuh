#pragma once

// Device helpers shared by the MoE kernels.

#include "kernels/cuda/moe/moe_experts.h"
#include "kernels/cuda/quant/dequant.cuh"

#include <cstdint>

namespace cw::kernels::cuda::moe {

// Row r of expert e of a stack (rowOffset: the up half of a fused gate_up stack).
__device__ __forceinline__ const std::uint8_t* expertRow(
    const DeviceExpertStack& s, std::int64_t e, std::int64_t r)
{
    const std::uint8_t* base = s.expertData
        ? static_cast<const std::uint8_t*>(s.expertData[e])
        : static_cast<const std::uint8_t*>(s.data) + std::size_t(e) * s.expertStride;
    return base + std::size_t(s.rowOffset + r) * s.rowStride;
}

// As ops::silu, so the device rounds where the CPU does.
__device__ __forceinline__ float silu(float x)
{
    return x / (1.0f + expf(-x));
}

__device__ __forceinline__ float warpSum(float v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xFFFFFFFFu, v, off);
    return v;
}

// 16 bytes from a 16-byte aligned global address into shared memory, of which only the
// first srcBytes are read (the rest is zero-filled): the last chunk of a row never reads past
// the row.
__device__ __forceinline__ void cpAsync16(void* smem, const void* gmem, int srcBytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const auto s = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
    asm volatile(
        "cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(srcBytes));
#else
    for (int i = 0; i < 16; ++i)
        static_cast<std::uint8_t*>(smem)[i]
            = i < srcBytes ? static_cast<const std::uint8_t*>(gmem)[i] : 0;
#endif
}

__device__ __forceinline__ void cpAsyncWaitAll()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::);
#endif
}

// Bytes of a row of `cols` values of Type.
template <TensorType Type>
__host__ __device__ __forceinline__ std::size_t rowBytesOf(std::int64_t cols)
{
    return std::size_t(cols / BlockTraits<Type>::kValues) * std::size_t(BlockTraits<Type>::kBytes);
}

// Bytes of one shared-memory slot holding a row of rowBytes copied in aligned 16-byte chunks
// (the row keeps its address modulo 16, which dequant8's loads rely on).
inline __host__ __device__ int stagedSlotBytes(std::size_t rowBytes)
{
    return int((rowBytes + 15) / 16 + 1) * 16;
}

// Copies `rows` rows (row i starts at rowAt(i), rowBytes long) into shared slots, all chunks
// in flight together. Returns nothing; the row's bytes then start at
// slots + i * slotBytes + (rowAt(i) & 15). The caller waits (cpAsyncWaitAll + barrier).
template <class RowAt>
__device__ __forceinline__ void stageRows(
    std::uint8_t* slots, int slotBytes, int rows, std::size_t rowBytes, RowAt rowAt)
{
    const int chunks = slotBytes / 16;
    for (int idx = int(threadIdx.x); idx < rows * chunks; idx += int(blockDim.x)) {
        const int i = idx / chunks, j = idx % chunks;
        const std::uint8_t* row = rowAt(i);
        const std::uint8_t* aligned = reinterpret_cast<const std::uint8_t*>(
            reinterpret_cast<std::uintptr_t>(row) & ~std::uintptr_t(15));
        const std::uint8_t* chunk = aligned + 16 * j;
        const std::ptrdiff_t left = row + rowBytes - chunk;
        if (left > 0)
            cpAsync16(
                slots + std::size_t(i) * slotBytes + 16 * j, chunk, left < 16 ? int(left) : 16);
    }
}

__device__ __forceinline__ const std::uint8_t* stagedRow(
    const std::uint8_t* slots, int slotBytes, int i, const std::uint8_t* row)
{
    return slots + std::size_t(i) * slotBytes + (reinterpret_cast<std::uintptr_t>(row) & 15);
}

} // namespace cw::kernels::cuda::moe
