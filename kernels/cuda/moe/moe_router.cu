// Router softmax and top-k on the device, one warp per token row, computed as the CPU's
// ops::softmax (max, exp, a double sum, one float reciprocal) and ops::topK (largest first,
// ties keep the lower index) so the chosen experts agree with the CPU's.
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/moe/moe_experts.h"
#include "kernels/cuda/quant/mat_vec_kernels.cuh"

#include <climits>
#include <cmath>

namespace cw::kernels::cuda {
namespace {

constexpr int kRouterWarps = 4;
// The f32 matrix-vector kernel's rows per block for a router-sized matrix (under 2048 rows).
constexpr int kRouterRowsPerBlock = 2;

__device__ __forceinline__ float warpMax(float v)
{
    for (int off = 16; off > 0; off >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, off));
    return v;
}

__device__ __forceinline__ double warpSum(double v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xFFFFFFFFu, v, off);
    return v;
}

// Unsigned warp maximum (Max) or minimum: one redux instruction where the device has it.
template <bool Max> __device__ __forceinline__ unsigned warpExtremeUnsigned(unsigned v)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return Max ? __reduce_max_sync(0xFFFFFFFFu, v) : __reduce_min_sync(0xFFFFFFFFu, v);
#else
    for (int off = 16; off > 0; off >>= 1) {
        const unsigned other = __shfl_xor_sync(0xFFFFFFFFu, v, off);
        v = Max ? max(v, other) : min(v, other);
    }
    return v;
#endif
}

// As routerTopKRow below for up to 32 * PerLane experts, each lane's probabilities held in
// registers. A round of the top-k is two warp reductions on 32-bit keys (a probability's bits
// + 1, which order as the probabilities do since they are >= 0; 0 for a NaN, never taken):
// the largest key, then the lowest index holding it. The chosen experts, weights and
// sums are the shared-memory version's.
template <int PerLane>
__device__ __forceinline__ void routerTopKRowRegisters(
    const float* row, int experts, int k, bool renormalise, std::int32_t* rowIds, float* rowWeights)
{
    const int lane = int(threadIdx.x) % 32;
    float p[PerLane];
    float mx = -INFINITY;
#pragma unroll
    for (int c = 0; c < PerLane; ++c) {
        const int i = lane + 32 * c;
        p[c] = i < experts ? __ldcg(row + i) : 0.0f;
        if (i < experts)
            mx = fmaxf(mx, p[c]);
    }
    mx = warpMax(mx);
    double sum = 0.0;
#pragma unroll
    for (int c = 0; c < PerLane; ++c)
        if (lane + 32 * c < experts) {
            p[c] = expf(p[c] - mx);
            sum += p[c];
        }
    const float inv = float(1.0 / warpSum(sum));
    unsigned key[PerLane];
#pragma unroll
    for (int c = 0; c < PerLane; ++c) {
        key[c] = 0u;
        if (lane + 32 * c < experts) {
            p[c] *= inv;
            if (p[c] >= 0.0f) // false for a NaN, which the CPU's comparison never takes
                key[c] = __float_as_uint(p[c]) + 1u;
        }
    }
    // Round j takes the first expert after round j - 1's in the order (key descending, index
    // ascending): the keys are never rewritten (a write at a run-time index would put them in
    // local memory).
    float total = 0.0f;
    unsigned lastKey = ~0u, lastIndex = 0u;
    for (int j = 0; j < k; ++j) {
        unsigned best = 0u;
        int bestC = 0;
#pragma unroll
        for (int c = 0; c < PerLane; ++c) {
            const unsigned index = unsigned(lane + 32 * c);
            const bool after
                = key[c] < lastKey || (key[c] == lastKey && j > 0 && index > lastIndex);
            if (after && key[c] > best) { // ascending c: a tie keeps the lower index
                best = key[c];
                bestC = c;
            }
        }
        const unsigned top = warpExtremeUnsigned<true>(best);
        const unsigned index = warpExtremeUnsigned<false>(
            top != 0u && best == top ? unsigned(lane + 32 * bestC) : ~0u);
        int bestIndex = j; // only NaNs left: keep the ids valid
        float value = -INFINITY;
        if (top != 0u) {
            bestIndex = int(index);
            value = __uint_as_float(top - 1u);
            lastKey = top;
            lastIndex = index;
        }
        if (lane == 0) {
            rowIds[j] = bestIndex;
            rowWeights[j] = value;
        }
        total += value; // in descending order, as the CPU sums them
    }
    if (renormalise && lane == 0)
        for (int j = 0; j < k; ++j)
            rowWeights[j] = rowWeights[j] / total;
}

// Softmax and top-k of one token's logits by one warp; p: the warp's `experts` floats of
// shared memory (used above 256 experts only). The logits are read through L2 (another block
// of the fused router kernel may have written them). 256: 8 registers a lane, a limit, not tuned.
__device__ __forceinline__ void routerTopKRow(const float* row, int experts, int k,
    bool renormalise, std::int32_t* rowIds, float* rowWeights, float* p)
{
    if (experts <= 256)
        return routerTopKRowRegisters<8>(row, experts, k, renormalise, rowIds, rowWeights);
    const int lane = int(threadIdx.x) % 32;
    // Each lane owns the experts i with i % 32 == lane: only it reads or writes them.
    float mx = -INFINITY;
    for (int i = lane; i < experts; i += 32) {
        p[i] = __ldcg(row + i);
        mx = fmaxf(mx, p[i]);
    }
    mx = warpMax(mx);
    double sum = 0.0;
    for (int i = lane; i < experts; i += 32) {
        p[i] = expf(p[i] - mx);
        sum += p[i];
    }
    const float inv = float(1.0 / warpSum(sum));
    for (int i = lane; i < experts; i += 32)
        p[i] *= inv;

    float total = 0.0f;
    for (int j = 0; j < k; ++j) {
        float best = -INFINITY;
        int bestIndex = INT_MAX;
        for (int i = lane; i < experts; i += 32) {
            if (p[i] > best) { // ascending i: a tie keeps the lower index
                best = p[i];
                bestIndex = i;
            }
        }
        for (int off = 16; off > 0; off >>= 1) {
            const float v = __shfl_xor_sync(0xFFFFFFFFu, best, off);
            const int i = __shfl_xor_sync(0xFFFFFFFFu, bestIndex, off);
            if (v > best || (v == best && i < bestIndex)) {
                best = v;
                bestIndex = i;
            }
        }
        if (bestIndex == INT_MAX) // only NaNs left: keep the ids valid
            bestIndex = j;
        if (lane == 0) {
            rowIds[j] = bestIndex;
            rowWeights[j] = best;
        }
        total += best; // in descending order, as the CPU sums them
        // Probabilities are >= 0: a taken expert is never chosen again.
        if (bestIndex % 32 == lane)
            p[bestIndex] = -1.0f;
    }
    if (renormalise && lane == 0)
        for (int j = 0; j < k; ++j)
            rowWeights[j] = rowWeights[j] / total;
}

__global__ void routerTopKKernel(const float* logits, std::int64_t tokens, int experts, int k,
    bool renormalise, std::int32_t* ids, float* weights)
{
    chainedKernelEntry();
    extern __shared__ float probabilities[];
    const int warp = int(threadIdx.x) / 32;
    const std::int64_t t = std::int64_t(blockIdx.x) * kRouterWarps + warp;
    if (t >= tokens)
        return;
    routerTopKRow(logits + t * experts, experts, k, renormalise, ids + t * k, weights + t * k,
        probabilities + std::size_t(warp) * std::size_t(experts));
}

// Decode steps: the router's product (the f32 matrix-vector kernel's own blocks, so the logits
// round as linear() rounds them) and, in the last of its blocks to finish, the softmax and
// top-k of every token: one launch where there were two, on the step's critical path.
template <int T>
__global__ void __launch_bounds__(quant_detail::kMvThreads) routerFusedKernel(
    const std::uint8_t* __restrict__ w, std::size_t rowStride, int experts, std::int64_t cols,
    const float* __restrict__ x, std::int64_t xStride, bool xVector, float* logits, int k,
    bool renormalise, std::int32_t* ids, float* weights, unsigned* blocksDone)
{
    // The block's weight rows into L2 while the kernel before still runs.
    if (const std::int64_t row = std::int64_t(blockIdx.x) * kRouterRowsPerBlock + threadIdx.x;
        threadIdx.x < kRouterRowsPerBlock && row < experts)
        prefetchRowL2(w, rowStride, row);
    chainedKernelEntry();
    extern __shared__ float probabilities[];
    __shared__ bool last;
    quant_detail::matVecFloatBlock<TensorType::F32, T, kRouterRowsPerBlock>(
        w, rowStride, experts, cols, x, xStride, logits, experts, xVector);
    __threadfence(); // this block's logits are visible before its count
    __syncthreads();
    if (threadIdx.x == 0)
        last = atomicAdd(blocksDone, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last)
        return;
    __threadfence(); // the other blocks' logits are read after their counts
    const int warp = int(threadIdx.x) / 32;
    for (int t = warp; t < T; t += quant_detail::kMvWarps)
        routerTopKRow(logits + std::size_t(t) * experts, experts, k, renormalise, ids + t * k,
            weights + t * k, probabilities + std::size_t(warp) * std::size_t(experts));
    if (threadIdx.x == 0)
        *blocksDone = 0; // for the next layer's router
}

template <int T>
cudaError_t launchRouterFused(const DeviceMatrix& router, const float* x, std::int64_t xStride,
    float* logits, int k, bool renormalise, std::int32_t* ids, float* weights, unsigned* blocksDone,
    cudaStream_t stream)
{
    const unsigned blocks = unsigned((router.rows + kRouterRowsPerBlock - 1) / kRouterRowsPerBlock);
    const bool xVector = (reinterpret_cast<std::uintptr_t>(x) & 15) == 0 && xStride % 4 == 0;
    const std::size_t shared
        = std::size_t(quant_detail::kMvWarps) * std::size_t(router.rows) * sizeof(float);
    launchChained(routerFusedKernel<T>, dim3(blocks), dim3(quant_detail::kMvThreads), shared,
        stream, static_cast<const std::uint8_t*>(router.data), router.rowStride, int(router.rows),
        router.cols, x, xStride, xVector, logits, k, renormalise, ids, weights, blocksDone);
    return cudaGetLastError();
}

} // namespace

cudaError_t routerTopK(const float* logits, std::int64_t tokens, std::int64_t experts, int k,
    bool renormalise, std::int32_t* ids, float* weights, cudaStream_t stream)
{
    if (tokens <= 0)
        return cudaSuccess;
    if (k <= 0 || k > experts)
        return cudaErrorInvalidValue;
    const std::size_t shared = std::size_t(kRouterWarps) * std::size_t(experts) * sizeof(float);
    if (shared > 48 * 1024)
        return cudaErrorInvalidValue;
    const unsigned blocks = unsigned((tokens + kRouterWarps - 1) / kRouterWarps);
    launchChained(routerTopKKernel, dim3(blocks), dim3(kRouterWarps * 32), shared, stream, logits,
        tokens, int(experts), k, renormalise, ids, weights);
    return cudaGetLastError();
}

bool routerFuses(const DeviceMatrix& router, std::int64_t tokens)
{
    // Only where linear() would run the same f32 matrix-vector blocks (2 rows each): the bounds
    // follow linear()'s and the 48 KB of shared memory, limits, not tuned here.
    return router.type == TensorType::F32 && tokens >= 1 && tokens <= kMatVecMaxTokens
        && router.rows < 2048 && router.rows * quant_detail::kMvWarps * 4 <= 48 * 1024
        && router.data != nullptr;
}

cudaError_t routerLogitsTopK(const DeviceMatrix& router, const float* x, std::int64_t xStride,
    std::int64_t tokens, float* logits, int k, bool renormalise, std::int32_t* ids, float* weights,
    unsigned* blocksDone, cudaStream_t stream)
{
    if (!routerFuses(router, tokens) || k <= 0 || k > router.rows || !blocksDone)
        return cudaErrorInvalidValue;
    switch (tokens) {
    case 1:
        return launchRouterFused<1>(
            router, x, xStride, logits, k, renormalise, ids, weights, blocksDone, stream);
    case 2:
        return launchRouterFused<2>(
            router, x, xStride, logits, k, renormalise, ids, weights, blocksDone, stream);
    case 3:
        return launchRouterFused<3>(
            router, x, xStride, logits, k, renormalise, ids, weights, blocksDone, stream);
    case 4:
        return launchRouterFused<4>(
            router, x, xStride, logits, k, renormalise, ids, weights, blocksDone, stream);
    case 5:
        return launchRouterFused<5>(
            router, x, xStride, logits, k, renormalise, ids, weights, blocksDone, stream);
    case 6:
        return launchRouterFused<6>(
            router, x, xStride, logits, k, renormalise, ids, weights, blocksDone, stream);
    case 7:
        return launchRouterFused<7>(
            router, x, xStride, logits, k, renormalise, ids, weights, blocksDone, stream);
    default:
        return launchRouterFused<8>(
            router, x, xStride, logits, k, renormalise, ids, weights, blocksDone, stream);
    }
}

} // namespace cw::kernels::cuda
