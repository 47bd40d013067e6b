// Sampling on the device: one block walks one row of logits. The cuts of top-k and top-p are
// found by bisection over the 32-bit order key of the logits (the largest key whose count, or
// mass, of tokens at or above it still reaches the cut), so nothing is sorted and the cut
// lands on a logit exactly; the draw is an inclusive scan of the survivors' weights in id
// order. See kernels/token_draw.h for the semantics and ops::drawToken for the reference.
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/ops/token_draw.h"

#include <cfloat>
#include <climits>
#include <cstdint>
#include <cuda_runtime.h>

namespace cw::kernels::cuda {
namespace {

constexpr int kDrawThreads = 1024;
constexpr int kWarps = kDrawThreads / 32;

// Keys that order floats as numbers (NaN excluded by the callers): larger value, larger key.
__device__ __forceinline__ unsigned orderKey(float v)
{
    const unsigned b = __float_as_uint(v);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__device__ __forceinline__ bool usable(float l)
{
    return l > -INFINITY; // false for NaN
}

__device__ __forceinline__ float valueOf(float l)
{
    return l == INFINITY ? FLT_MAX : l;
}

template <typename T, typename Op> __device__ T blockReduce(T v, Op op, T* shared)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int m = 16; m > 0; m >>= 1)
        v = op(v, __shfl_xor_sync(0xffffffffu, v, m));
    __syncthreads(); // `shared` may still be read from the previous call
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    v = shared[lane < kWarps ? lane : 0];
    for (int m = 16; m > 0; m >>= 1)
        v = op(v, __shfl_xor_sync(0xffffffffu, v, m));
    return v;
}

struct Sum {
    template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct Max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
    __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};

struct Row {
    const float* x;
    std::int64_t n;
    float top; // the largest usable value
    float invT;
    float minP;
    __device__ float weight(float v) const { return expf((v - top) * invT); }
    // Whether logit l survives the cut at key `cut` (and min-p).
    __device__ bool kept(float l, unsigned cut) const
    {
        if (!usable(l))
            return false;
        const float v = valueOf(l);
        return orderKey(v) >= cut && (minP <= 0.0f || weight(v) >= minP);
    }
};

// The largest key k in [lo, hi] with enough(k): enough is true at lo and falls as k grows.
template <typename Enough>
__device__ unsigned largestKeyWith(unsigned lo, unsigned hi, Enough enough)
{
    while (lo < hi) {
        const unsigned mid = lo + (hi - lo + 1) / 2;
        if (enough(mid))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

__global__ void __launch_bounds__(kDrawThreads)
    drawTokensKernel(const float* x, std::int64_t n, const TokenDraw* draws, std::int32_t* ids)
{
    __shared__ float sharedF[kWarps];
    __shared__ int sharedI[kWarps];
    __shared__ float scan[kWarps];
    __shared__ int chosen;
    const TokenDraw d = draws[blockIdx.x];
    chainedKernelEntry();
    if (!drawsAToken(d))
        return;
    const float* row = x + std::int64_t(blockIdx.x) * n;
    float top = -FLT_MAX;
    int count = 0;
    for (std::int64_t i = threadIdx.x; i < n; i += kDrawThreads) {
        const float l = row[i];
        if (usable(l)) {
            ++count;
            top = fmaxf(top, valueOf(l));
        }
    }
    top = blockReduce(top, Max {}, sharedF);
    count = blockReduce(count, Sum {}, sharedI);
    if (count <= 1) { // none: -1; one: the argmax already written is that token
        if (count == 0 && threadIdx.x == 0)
            ids[blockIdx.x] = -1;
        return;
    }
    const Row r { row, n, top, 1.0f / d.temperature, d.minP };
    const unsigned topKey = orderKey(top);
    unsigned cut = orderKey(-FLT_MAX);
    auto countFrom = [&](unsigned key) {
        int c = 0;
        for (std::int64_t i = threadIdx.x; i < n; i += kDrawThreads) {
            const float l = row[i];
            c += usable(l) && orderKey(valueOf(l)) >= key ? 1 : 0;
        }
        return blockReduce(c, Sum {}, sharedI);
    };
    auto massFrom = [&](unsigned key) {
        float m = 0.0f;
        for (std::int64_t i = threadIdx.x; i < n; i += kDrawThreads) {
            const float l = row[i];
            if (usable(l) && orderKey(valueOf(l)) >= key)
                m += r.weight(valueOf(l));
        }
        return blockReduce(m, Sum {}, sharedF);
    };
    if (d.topK > 0 && d.topK < count)
        cut = largestKeyWith(cut, topKey, [&](unsigned k) { return countFrom(k) >= d.topK; });
    if (d.topP < 1.0f) {
        const float need = d.topP * massFrom(cut);
        cut = largestKeyWith(cut, topKey, [&](unsigned k) { return massFrom(k) >= need; });
    }
    // The draw: each thread's contiguous chunk summed in id order, an inclusive scan of the
    // chunks, and the chunk that holds u * total walked again in the same order.
    const std::int64_t chunk = (n + kDrawThreads - 1) / kDrawThreads;
    const std::int64_t begin = std::int64_t(threadIdx.x) * chunk;
    const std::int64_t end = begin + chunk < n ? begin + chunk : n;
    float own = 0.0f;
    int lastKept = -1;
    for (std::int64_t i = begin; i < end; ++i) {
        const float l = row[i];
        if (r.kept(l, cut)) {
            own += r.weight(valueOf(l));
            lastKept = int(i);
        }
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float inclusive = own;
    for (int o = 1; o < 32; o <<= 1) {
        const float up = __shfl_up_sync(0xffffffffu, inclusive, o);
        if (lane >= o)
            inclusive += up;
    }
    if (threadIdx.x == 0)
        chosen = INT_MAX;
    if (lane == 31)
        scan[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        float w = scan[lane];
        for (int o = 1; o < 32; o <<= 1) {
            const float up = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o)
                w += up;
        }
        scan[lane] = w; // inclusive over warps
    }
    __syncthreads();
    const float before = (warp > 0 ? scan[warp - 1] : 0.0f) + inclusive - own;
    const float total = scan[kWarps - 1];
    const float target = d.u * total;
    if (own > 0.0f && target >= before && target < before + own) {
        const float local = target - before;
        float cum = 0.0f;
        int pick = lastKept;
        for (std::int64_t i = begin; i < end; ++i) {
            const float l = row[i];
            if (r.kept(l, cut)) {
                cum += r.weight(valueOf(l));
                if (local < cum) {
                    pick = int(i);
                    break;
                }
            }
        }
        atomicMin(&chosen, pick);
    }
    const int last = blockReduce(lastKept, Max {}, sharedI); // also orders `chosen` before
    if (threadIdx.x == 0)
        ids[blockIdx.x] = chosen != INT_MAX ? chosen : last;
}

} // namespace

cudaError_t drawTokens(const float* x, std::int64_t rows, std::int64_t n, const TokenDraw* draws,
    std::int32_t* ids, cudaStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    if (n > INT_MAX || rows > INT_MAX)
        return cudaErrorInvalidValue;
    return launchChained(
        drawTokensKernel, dim3(unsigned(rows)), dim3(kDrawThreads), 0, stream, x, n, draws, ids);
}

} // namespace cw::kernels::cuda
