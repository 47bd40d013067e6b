// What the expert cache (engine/backend/cuda/expert_cache.h) needs of the device: the routing
// counts it ranks experts by, and a probe of how fast the GPU reads mapped host memory, which
// its cost model weighs against bulk copies.
#include "kernels/cuda/moe/moe_experts.h"

namespace cw::kernels::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void countExpertChoicesKernel(
    const std::int32_t* ids, std::int64_t pairs, std::uint32_t* counts)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < pairs;
         i += stride)
        atomicAdd(&counts[ids[i]], 1u);
}

// Each thread sums 16-byte words a grid apart: every word is read once, many in flight.
__global__ void readBytesProbeKernel(const uint4* data, std::size_t words, std::uint32_t* sink)
{
    std::uint32_t sum = 0;
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
         i += stride) {
        const uint4 v = data[i];
        sum ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (sum == 0x9E3779B9u) // almost never: the loads cannot be optimised away
        atomicAdd(sink, sum);
}

} // namespace

cudaError_t countExpertChoices(
    const std::int32_t* ids, std::int64_t pairs, std::uint32_t* counts, cudaStream_t stream)
{
    if (pairs <= 0)
        return cudaSuccess;
    const int blocks = int(std::min<std::int64_t>((pairs + kThreads - 1) / kThreads, 64));
    countExpertChoicesKernel<<<blocks, kThreads, 0, stream>>>(ids, pairs, counts);
    return cudaGetLastError();
}

cudaError_t readBytesProbe(
    const void* data, std::size_t bytes, std::uint32_t* sink, cudaStream_t stream)
{
    if (bytes % 16 != 0 || reinterpret_cast<std::uintptr_t>(data) % 16 != 0)
        return cudaErrorInvalidValue;
    const std::size_t words = bytes / 16;
    if (words == 0)
        return cudaSuccess;
    // Enough warps on every SM to keep many host reads in flight (PCIe latency is microseconds).
    readBytesProbeKernel<<<1024, kThreads, 0, stream>>>(
        static_cast<const uint4*>(data), words, sink);
    return cudaGetLastError();
}

} // namespace cw::kernels::cuda
