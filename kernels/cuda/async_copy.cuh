#pragma once

// cp.async between global and shared memory, as the attention kernels and the staged integer
// mat-vec use it (each wrapper a compiler barrier for memory, so ordinary shared-memory
// accesses never move across it).

namespace cw::kernels::cuda {

// 16 bytes global -> shared without going through registers; zero-filled when !valid.
__device__ __forceinline__ void copyAsync16(void* shared, const void* global, bool valid)
{
    const unsigned address = unsigned(__cvta_generic_to_shared(shared));
    const int bytes = valid ? 16 : 0;
    asm volatile(
        "cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global), "r"(bytes)
        : "memory");
}

// 4 or 8 bytes global -> shared (through L1: cp.async.cg takes 16 bytes only).
template <int Bytes>
__device__ __forceinline__ void copyAsyncSmall(void* shared, const void* global)
{
    static_assert(Bytes == 4 || Bytes == 8, "cp.async.ca copies 4, 8 or 16 bytes");
    const unsigned address = unsigned(__cvta_generic_to_shared(shared));
    asm volatile(
        "cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(address), "l"(global), "n"(Bytes)
        : "memory");
}

__device__ __forceinline__ void commitAsync()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int PENDING> __device__ __forceinline__ void waitAsync()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

} // namespace cw::kernels::cuda
