// Row kernels: one block per row for the norms and argmax (a row of the hidden state or of
// the logits fits one block's loop), a grid-stride loop for the non-finite count.
#include "kernels/cuda/ops/row_ops.h"

#include <cfloat>
#include <climits>
#include <cstdint>
#include <cuda_runtime.h>

namespace cw::kernels::cuda {
namespace {

constexpr int kRowThreads = 256;
constexpr int kArgmaxThreads = 1024;

__device__ float warpSum(float v)
{
    for (int m = 16; m > 0; m >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, m);
    return v;
}

// Sum over the block; every thread gets the result. `shared` holds 32 floats.
__device__ float blockSum(float v, float* shared)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warpSum(v);
    __syncthreads(); // `shared` may still be read from a previous call
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    const int warps = (blockDim.x + 31) >> 5;
    v = lane < warps ? shared[lane] : 0.0f;
    return warpSum(v);
}

// ops::rmsNorm computes the scale in double from the sum of squares; so do we, from an f32
// sum (the rounding of the sum is the only difference, ~1e-7 relative).
__device__ float rmsScale(float sumSquares, std::int64_t n, float eps)
{
    return float(1.0 / sqrt(double(sumSquares) / double(n) + double(eps)));
}

__global__ void rmsNormRowsKernel(const float* x, std::int64_t xStride, const float* w,
    std::int64_t n, float eps, float* out, std::int64_t outStride)
{
    __shared__ float shared[32];
    const float* xr = x + std::int64_t(blockIdx.x) * xStride;
    float* o = out + std::int64_t(blockIdx.x) * outStride;
    float sum = 0.0f;
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x)
        sum += xr[i] * xr[i];
    const float scale = rmsScale(blockSum(sum, shared), n, eps);
    // Each thread rewrites only the values it read, after every read (blockSum syncs): out
    // may alias x.
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x)
        o[i] = w ? xr[i] * scale * w[i] : xr[i] * scale;
}

__global__ void addRmsNormRowsKernel(
    float* hidden, const float* delta, const float* w, std::int64_t n, float eps, float* normed)
{
    __shared__ float shared[32];
    const std::int64_t row = blockIdx.x;
    float* h = hidden + row * n;
    const float* d = delta ? delta + row * n : nullptr;
    float sum = 0.0f;
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        float v = h[i];
        if (d) {
            v += d[i];
            h[i] = v;
        }
        sum += v * v;
    }
    const float scale = rmsScale(blockSum(sum, shared), n, eps);
    float* o = normed + row * n;
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x)
        o[i] = w ? h[i] * scale * w[i] : h[i] * scale;
}

__global__ void gatherRowsKernel(
    const float* x, const std::int32_t* rows, std::int64_t n, float* out)
{
    const float* src = x + std::int64_t(rows[blockIdx.x]) * n;
    float* dst = out + std::int64_t(blockIdx.x) * n;
    const bool vectors = n % 4 == 0 && (reinterpret_cast<std::uintptr_t>(x) & 15) == 0
        && (reinterpret_cast<std::uintptr_t>(out) & 15) == 0;
    if (vectors) {
        const auto* s4 = reinterpret_cast<const float4*>(src);
        auto* d4 = reinterpret_cast<float4*>(dst);
        for (std::int64_t i = threadIdx.x; i < n / 4; i += blockDim.x)
            d4[i] = s4[i];
        return;
    }
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x)
        dst[i] = src[i];
}

__global__ void countNonFiniteKernel(const float* x, std::int64_t n, int* count)
{
    int local = 0;
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        local += (__float_as_uint(x[i]) & 0x7f800000u) == 0x7f800000u;
    for (int m = 16; m > 0; m >>= 1)
        local += __shfl_xor_sync(0xffffffffu, local, m);
    if ((threadIdx.x & 31) == 0 && local)
        atomicAdd(count, local);
}

// (value, index) order of the argmax: larger value first, then lower index. NaN never wins.
__device__ bool better(float v, int i, float bestV, int bestI)
{
    return v > bestV || (v == bestV && i < bestI);
}

__global__ void argmaxRowsKernel(const float* x, std::int64_t n, std::int32_t* index, float* value)
{
    __shared__ float sv[32];
    __shared__ int si[32];
    const float* row = x + std::int64_t(blockIdx.x) * n;
    float bestV = -INFINITY;
    int bestI = INT_MAX;
    // Each thread scans its indices in increasing order, so a strict > keeps the lowest index
    // among its equal values; the reductions below break ties by index.
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        const float v = row[i];
        if (better(v, int(i), bestV, bestI)) {
            bestV = v;
            bestI = int(i);
        }
    }
    for (int m = 16; m > 0; m >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, bestV, m);
        const int oi = __shfl_xor_sync(0xffffffffu, bestI, m);
        if (better(ov, oi, bestV, bestI)) {
            bestV = ov;
            bestI = oi;
        }
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        sv[warp] = bestV;
        si[warp] = bestI;
    }
    __syncthreads();
    if (warp != 0)
        return;
    const int warps = blockDim.x >> 5;
    bestV = lane < warps ? sv[lane] : -INFINITY;
    bestI = lane < warps ? si[lane] : INT_MAX;
    for (int m = 16; m > 0; m >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, bestV, m);
        const int oi = __shfl_xor_sync(0xffffffffu, bestI, m);
        if (better(ov, oi, bestV, bestI)) {
            bestV = ov;
            bestI = oi;
        }
    }
    if (lane == 0) {
        // A row of NaNs only: index 0, as a host loop starting from x[0] would report.
        const bool none = bestI == INT_MAX;
        index[blockIdx.x] = none ? 0 : bestI;
        value[blockIdx.x] = none ? row[0] : bestV;
    }
}

} // namespace

cudaError_t rmsNormRows(const float* x, std::int64_t xStride, const float* w, std::int64_t rows,
    std::int64_t n, float eps, float* out, std::int64_t outStride, cudaStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    rmsNormRowsKernel<<<unsigned(rows), kRowThreads, 0, stream>>>(
        x, xStride, w, n, eps, out, outStride);
    return cudaGetLastError();
}

cudaError_t addRmsNormRows(float* hidden, const float* delta, const float* w, std::int64_t rows,
    std::int64_t n, float eps, float* normed, cudaStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    addRmsNormRowsKernel<<<unsigned(rows), kRowThreads, 0, stream>>>(
        hidden, delta, w, n, eps, normed);
    return cudaGetLastError();
}

cudaError_t gatherF32Rows(const float* x, const std::int32_t* rows, std::int64_t count,
    std::int64_t n, float* out, cudaStream_t stream)
{
    if (count <= 0 || n <= 0)
        return cudaSuccess;
    gatherRowsKernel<<<unsigned(count), kRowThreads, 0, stream>>>(x, rows, n, out);
    return cudaGetLastError();
}

cudaError_t countNonFinite(const float* x, std::int64_t n, int* count, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    const std::int64_t blocks = (n + kRowThreads * 8 - 1) / (kRowThreads * 8);
    countNonFiniteKernel<<<unsigned(blocks < 1024 ? blocks : 1024), kRowThreads, 0, stream>>>(
        x, n, count);
    return cudaGetLastError();
}

cudaError_t argmaxRows(const float* x, std::int64_t rows, std::int64_t n, std::int32_t* index,
    float* value, cudaStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    argmaxRowsKernel<<<unsigned(rows), kArgmaxThreads, 0, stream>>>(x, n, index, value);
    return cudaGetLastError();
}

} // namespace cw::kernels::cuda
