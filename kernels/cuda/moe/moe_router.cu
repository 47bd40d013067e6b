// Router softmax and top-k on the device, one warp per token row, computed as the CPU's
// ops::softmax (max, exp, a double sum, one float reciprocal) and ops::topK (largest first,
// ties keep the lower index) so the chosen experts agree with the CPU's.
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/moe/moe_experts.h"

#include <climits>
#include <cmath>

namespace cw::kernels::cuda {
namespace {

constexpr int kRouterWarps = 4;

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

__global__ void routerTopKKernel(const float* logits, std::int64_t tokens, int experts, int k,
    bool renormalise, std::int32_t* ids, float* weights)
{
    chainedKernelEntry();
    extern __shared__ float probabilities[];
    const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
    const std::int64_t t = std::int64_t(blockIdx.x) * kRouterWarps + warp;
    if (t >= tokens)
        return;
    float* p = probabilities + std::size_t(warp) * std::size_t(experts);
    const float* row = logits + t * experts;
    // Each lane owns the experts i with i % 32 == lane: only it reads or writes them.
    float mx = -INFINITY;
    for (int i = lane; i < experts; i += 32) {
        p[i] = row[i];
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

    std::int32_t* rowIds = ids + t * k;
    float* rowWeights = weights + t * k;
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

} // namespace cw::kernels::cuda
