// Grouping of (token, choice) pairs by expert on the device, and the deterministic combine of
// the experts' rows back into token rows. One block does the grouping: it needs a count, a
// scan over the experts and a scatter, and the pairs of a step (tokens * k, 64 Ki for an
// 8192-token prompt) pass through shared-memory counters in a few microseconds.
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/moe/moe_paths.h"

namespace cw::kernels::cuda::moe {
namespace {

constexpr int kGroupThreads = 1024;
constexpr int kCombineThreads = 256;
constexpr int kMaxCombineK = 64;

__global__ void __launch_bounds__(kGroupThreads) groupKernel(const std::int32_t* ids,
    std::int64_t pairs, int experts, int tileRows, std::int32_t* counts, std::int32_t* offsets,
    std::int32_t* tileOffsets, std::int32_t* activeExperts, std::int32_t* activeCount,
    std::int32_t* sortedPair, std::int32_t* pairPos)
{
    chainedKernelEntry();
    extern __shared__ std::int32_t shared[];
    std::int32_t* count = shared;
    std::int32_t* cursor = shared + experts;
    for (int e = threadIdx.x; e < experts; e += kGroupThreads)
        count[e] = 0;
    __syncthreads();
    for (std::int64_t p = threadIdx.x; p < pairs; p += kGroupThreads)
        atomicAdd(&count[ids[p]], 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        std::int32_t offset = 0, tiles = 0, active = 0;
        for (int e = 0; e < experts; ++e) {
            if (count[e] > 0)
                activeExperts[active++] = e;
            offsets[e] = offset;
            tileOffsets[e] = tiles;
            counts[e] = count[e];
            cursor[e] = offset;
            offset += count[e];
            tiles += (count[e] + tileRows - 1) / tileRows;
        }
        offsets[experts] = offset;
        tileOffsets[experts] = tiles;
        *activeCount = active;
    }
    __syncthreads();
    // The order inside an expert does not matter: each row's products depend on that row only.
    for (std::int64_t p = threadIdx.x; p < pairs; p += kGroupThreads) {
        const std::int32_t pos = atomicAdd(&cursor[ids[p]], 1);
        sortedPair[pos] = std::int32_t(p);
        pairPos[p] = pos;
    }
}

// One block per token row: its k rows summed in ascending expert order (the CPU's order),
// four values per thread at a time.
__global__ void __launch_bounds__(kCombineThreads)
    combineKernel(const float* down, std::int64_t hidden, const std::int32_t* ids,
        const float* weights, const std::int32_t* pairPos, int k, float* out)
{
    chainedKernelEntry();
    __shared__ std::int32_t rowOf[kMaxCombineK];
    __shared__ float weightOf[kMaxCombineK];
    const std::int64_t t = blockIdx.x;
    if (threadIdx.x < k) {
        const int j = int(threadIdx.x);
        const std::int32_t e = ids[t * k + j];
        int rank = 0;
        for (int i = 0; i < k; ++i) {
            const std::int32_t other = ids[t * k + i];
            rank += other < e || (other == e && i < j);
        }
        rowOf[rank] = pairPos[t * k + j];
        weightOf[rank] = weights[t * k + j];
    }
    __syncthreads();
    float4* o = reinterpret_cast<float4*>(out + t * hidden);
    for (std::int64_t c = threadIdx.x; c < hidden / 4; c += kCombineThreads) {
        float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int s = 0; s < k; ++s) {
            const float4 v
                = reinterpret_cast<const float4*>(down + std::int64_t(rowOf[s]) * hidden)[c];
            const float w = weightOf[s];
            acc.x += w * v.x;
            acc.y += w * v.y;
            acc.z += w * v.z;
            acc.w += w * v.w;
        }
        o[c] = acc;
    }
}

} // namespace

cudaError_t groupPairsByExpert(const std::int32_t* ids, std::int64_t pairs, std::int64_t experts,
    int tileRows, const GroupedLayout& layout, cudaStream_t stream)
{
    const std::size_t shared = 2 * std::size_t(experts) * sizeof(std::int32_t);
    if (shared > 48 * 1024)
        return cudaErrorInvalidValue;
    launchChained(groupKernel, dim3(1), dim3(kGroupThreads), shared, stream, ids, pairs,
        int(experts), tileRows, layout.counts, layout.offsets, layout.tileOffsets,
        layout.activeExperts, layout.activeCount, layout.sortedPair, layout.pairPos);
    return cudaGetLastError();
}

cudaError_t combineExpertRows(const GroupedLayout& layout, std::int64_t tokens, int k,
    const std::int32_t* ids, const float* weights, std::int64_t hidden, float* out,
    cudaStream_t stream)
{
    if (k > kMaxCombineK || hidden % 4 != 0)
        return cudaErrorInvalidValue;
    launchChained(combineKernel, dim3(unsigned(tokens)), dim3(kCombineThreads), 0, stream,
        layout.down, hidden, ids, weights, layout.pairPos, k, out);
    return cudaGetLastError();
}

} // namespace cw::kernels::cuda::moe
