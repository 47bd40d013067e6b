// Row kernels: one block per row for the norms and argmax (a row of the hidden state or of
// the logits fits one block's loop), a grid-stride loop for the non-finite count.
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/ops/row_ops.h"
#include "kernels/cuda/quant/int8_rounding.cuh"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstdint>
#include <cuda_runtime.h>

namespace cw::kernels::cuda {
namespace {

constexpr int kRowThreads = 256;
constexpr int kArgmaxThreads = 256;
constexpr std::int64_t kArgmaxChunk = 8192; // values per block: not measured
constexpr std::int64_t kArgmaxMaxRows = 64; // rows a call may take: a limit, not tuned

struct ArgmaxPartial {
    float value;
    int index;
};

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

// sigmoid(dot(gateWeight, x)) over the block, summed as addGatedSharedExpertKernel sums it:
// strided fmaf per thread, warp sums, then the warps' sums in order (kRowThreads threads).
__device__ float sharedExpertGate(const float* x, const float* gateWeight, std::int64_t n)
{
    __shared__ float partial[kRowThreads / 32];
    float dot = 0.0f;
    for (std::int64_t c = threadIdx.x; c < n; c += kRowThreads)
        dot = fmaf(gateWeight[c], x[c], dot);
    dot = warpSum(dot);
    if (threadIdx.x % 32 == 0)
        partial[threadIdx.x / 32] = dot;
    __syncthreads();
    float sum = 0.0f;
    for (int w = 0; w < kRowThreads / 32; ++w)
        sum += partial[w];
    return 1.0f / (1.0f + expf(-sum)); // ops::sigmoid
}

__global__ void rmsNormRowsKernel(const float* x, std::int64_t xStride, const float* w,
    std::int64_t n, float eps, float* out, std::int64_t outStride)
{
    chainedKernelEntry();
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

__global__ void addRmsNormRowsKernel(float* hidden, const float* delta, const float* w,
    std::int64_t n, float eps, float* normed, GatedAddend addend)
{
    chainedKernelEntry();
    __shared__ float shared[32];
    const std::int64_t row = blockIdx.x;
    float* h = hidden + row * n;
    const float* d = delta ? delta + row * n : nullptr;
    const float gate = addend.x ? sharedExpertGate(addend.x + row * n, addend.gateWeight, n) : 0.0f;
    const float* down = addend.x ? addend.down + row * n : nullptr;
    float sum = 0.0f;
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        float v = h[i];
        if (d) {
            v += down ? fmaf(gate, down[i], d[i]) : d[i];
            h[i] = v;
        }
        sum += v * v;
    }
    const float scale = rmsScale(blockSum(sum, shared), n, eps);
    float* o = normed + row * n;
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x)
        o[i] = w ? h[i] * scale * w[i] : h[i] * scale;
}

// The same for rows that fit a block's registers: each thread keeps its V float4 of the row
// between the sum and the scaling (one read of hidden and delta, one write of each output).
// Quantize: the normed row also leaves as the integer products' int8 rows (row_ops.h); eight
// neighbouring lanes hold one 32-value block.
template <int V, bool Quantize>
__global__ void __launch_bounds__(kRowThreads) addRmsNormRowsVectorKernel(float* hidden,
    const float* delta, const float* w, std::int64_t n, float eps, float* normed,
    std::int8_t* quantized, float4* scales, GatedAddend addend, Int8Rows twoPlanes)
{
    const std::int64_t row = blockIdx.x;
    const int n4 = int(n / 4);
    // The weights before the wait for the kernel before: they are no kernel's output.
    const auto* w4 = reinterpret_cast<const float4*>(w);
    float4 wv[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
        const int i = int(threadIdx.x) + k * kRowThreads;
        wv[k] = w4 && i < n4 ? w4[i] : make_float4(1.0f, 1.0f, 1.0f, 1.0f);
    }
    if (addend.x && threadIdx.x == 0
        && (reinterpret_cast<std::uintptr_t>(addend.gateWeight) & 15) == 0)
        prefetchL2(addend.gateWeight, unsigned(n) * 4u);
    chainedKernelEntry();
    auto* h = reinterpret_cast<float4*>(hidden + row * n);
    const auto* d = delta ? reinterpret_cast<const float4*>(delta + row * n) : nullptr;
    const auto* down = addend.x ? reinterpret_cast<const float4*>(addend.down + row * n) : nullptr;
    // The row's loads are issued before the gate's reduction, so their latency hides behind it.
    float4 v[V], a[V], e[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
        const int i = int(threadIdx.x) + k * kRowThreads;
        v[k] = a[k] = e[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (i < n4) {
            v[k] = h[i];
            if (d)
                a[k] = d[i];
            if (down)
                e[k] = down[i];
        }
    }
    // The gate reads x before any of the row is written: x may be the normed output.
    const float gate = addend.x ? sharedExpertGate(addend.x + row * n, addend.gateWeight, n) : 0.0f;
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < V; ++k) {
        const int i = int(threadIdx.x) + k * kRowThreads;
        if (i < n4) {
            if (d) {
                float4 t = a[k];
                if (down)
                    t = make_float4(fmaf(gate, e[k].x, t.x), fmaf(gate, e[k].y, t.y),
                        fmaf(gate, e[k].z, t.z), fmaf(gate, e[k].w, t.w));
                v[k] = make_float4(v[k].x + t.x, v[k].y + t.y, v[k].z + t.z, v[k].w + t.w);
                h[i] = v[k];
            }
            sum += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
        }
    }
    __shared__ float shared[32];
    const float scale = rmsScale(blockSum(sum, shared), n, eps);
    auto* o = reinterpret_cast<float4*>(normed + row * n);
#pragma unroll
    for (int k = 0; k < V; ++k) {
        const int i = int(threadIdx.x) + k * kRowThreads;
        // n4 is a multiple of 32 when quantizing: whole warps skip, or none.
        if (i >= n4)
            continue;
        float4 r = make_float4(v[k].x * scale, v[k].y * scale, v[k].z * scale, v[k].w * scale);
        if (w4) {
            const float4 g = wv[k];
            r = make_float4(r.x * g.x, r.y * g.y, r.z * g.z, r.w * g.w);
        }
        o[i] = r;
        if constexpr (Quantize) {
            float amax = fmaxf(fmaxf(fabsf(r.x), fabsf(r.y)), fmaxf(fabsf(r.z), fabsf(r.w)));
            float blockSumValue = r.x + r.y + r.z + r.w;
            for (int m = 1; m < 8; m <<= 1) {
                amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, m));
                blockSumValue += __shfl_xor_sync(0xffffffffu, blockSumValue, m);
            }
            char4 packed;
            packed.x = std::int8_t(quantizeToInt8(r.x, amax));
            packed.y = std::int8_t(quantizeToInt8(r.y, amax));
            packed.z = std::int8_t(quantizeToInt8(r.z, amax));
            packed.w = std::int8_t(quantizeToInt8(r.w, amax));
            reinterpret_cast<char4*>(quantized + row * n)[i] = packed;
            if ((i & 7) == 0)
                scales[row * (n / 32) + i / 8]
                    = make_float4(amax / 127.0f, 0.0f, blockSumValue, 0.0f);
            if (twoPlanes.q) { // the same rows in two planes, as quantizeRows(planes 2) would
                const float d0 = amax / 127.0f;
                const float4 rest
                    = make_float4(planeRest(r.x, d0, packed.x), planeRest(r.y, d0, packed.y),
                        planeRest(r.z, d0, packed.z), planeRest(r.w, d0, packed.w));
                float amax1 = fmaxf(
                    fmaxf(fabsf(rest.x), fabsf(rest.y)), fmaxf(fabsf(rest.z), fabsf(rest.w)));
                for (int m = 1; m < 8; m <<= 1)
                    amax1 = fmaxf(amax1, __shfl_xor_sync(0xffffffffu, amax1, m));
                char4 second;
                second.x = std::int8_t(quantizeToInt8(rest.x, amax1));
                second.y = std::int8_t(quantizeToInt8(rest.y, amax1));
                second.z = std::int8_t(quantizeToInt8(rest.z, amax1));
                second.w = std::int8_t(quantizeToInt8(rest.w, amax1));
                std::int8_t* planes = twoPlanes.q + row * 2 * n;
                reinterpret_cast<char4*>(planes)[i] = packed;
                reinterpret_cast<char4*>(planes + n)[i] = second;
                if ((i & 7) == 0)
                    twoPlanes.s[row * (n / 32) + i / 8]
                        = make_float4(d0, amax1 / 127.0f, blockSumValue, 0.0f);
            }
        }
    }
}

template <bool Quantize>
cudaError_t launchAddRmsNormVector(std::int64_t perThread, std::int64_t rows, float* hidden,
    const float* delta, const float* w, std::int64_t n, float eps, float* normed, std::int8_t* q,
    float4* s, GatedAddend addend, Int8Rows twoPlanes, cudaStream_t stream)
{
    const dim3 grid { unsigned(rows) }, block { unsigned(kRowThreads) };
    switch (perThread) {
    case 1:
        return launchChained(addRmsNormRowsVectorKernel<1, Quantize>, grid, block, 0, stream,
            hidden, delta, w, n, eps, normed, q, s, addend, twoPlanes);
    case 2:
        return launchChained(addRmsNormRowsVectorKernel<2, Quantize>, grid, block, 0, stream,
            hidden, delta, w, n, eps, normed, q, s, addend, twoPlanes);
    case 3:
        return launchChained(addRmsNormRowsVectorKernel<3, Quantize>, grid, block, 0, stream,
            hidden, delta, w, n, eps, normed, q, s, addend, twoPlanes);
    default:
        return launchChained(addRmsNormRowsVectorKernel<4, Quantize>, grid, block, 0, stream,
            hidden, delta, w, n, eps, normed, q, s, addend, twoPlanes);
    }
}

bool aligned16(const void* p)
{
    return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0;
}

__global__ void gatherRowsKernel(
    const float* x, const std::int32_t* rows, std::int64_t n, float* out)
{
    chainedKernelEntry();
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
    chainedKernelEntry();
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

// Scans x[r][first, last) into this block's best (value, index); every thread gets it.
__device__ void blockBest(
    const float* row, std::int64_t first, std::int64_t last, float& bestV, int& bestI)
{
    __shared__ float sv[32];
    __shared__ int si[32];
    bestV = -INFINITY;
    bestI = INT_MAX;
    // Each thread scans its indices in increasing order, so a strict > keeps the lowest index
    // among its equal values; the reductions below break ties by index.
    for (std::int64_t i = first + threadIdx.x; i < last; i += blockDim.x) {
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
    __syncthreads();
    if (lane == 0) {
        sv[warp] = bestV;
        si[warp] = bestI;
    }
    __syncthreads();
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
}

// Grid (chunks, rows): each block takes kArgmaxChunk values of a row and leaves its best in
// `partial`; the row's last block to finish (a counter per row) reduces the partials in chunk
// order, writes the answer and resets the counter for the next call.
__global__ void argmaxRowsKernel(const float* x, std::int64_t n, std::int32_t* index, float* value,
    ArgmaxPartial* partial, unsigned* counter)
{
    chainedKernelEntry();
    const std::int64_t rowIndex = blockIdx.y;
    const float* row = x + rowIndex * n;
    const std::int64_t first = std::int64_t(blockIdx.x) * kArgmaxChunk;
    const std::int64_t last = first + kArgmaxChunk < n ? first + kArgmaxChunk : n;
    float bestV;
    int bestI;
    blockBest(row, first, last, bestV, bestI);
    __shared__ bool lastBlock;
    ArgmaxPartial* mine = partial + rowIndex * gridDim.x;
    if (threadIdx.x == 0) {
        mine[blockIdx.x] = { bestV, bestI };
        __threadfence();
        lastBlock = atomicAdd(counter + rowIndex, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!lastBlock || threadIdx.x != 0)
        return;
    __threadfence();
    bestV = -INFINITY;
    bestI = INT_MAX;
    for (unsigned c = 0; c < gridDim.x; ++c) {
        // Past L1: other blocks wrote these.
        const float v = __ldcg(&mine[c].value);
        const int i = __ldcg(&mine[c].index);
        if (better(v, i, bestV, bestI)) {
            bestV = v;
            bestI = i;
        }
    }
    // A row of NaNs only: index 0, as a host loop starting from x[0] would report.
    const bool none = bestI == INT_MAX;
    index[rowIndex] = none ? 0 : bestI;
    value[rowIndex] = none ? row[0] : bestV;
    counter[rowIndex] = 0;
}

__global__ void addInPlaceKernel(float* y, const float* x, std::int64_t n)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] += x[i];
}

} // namespace

cudaError_t addInPlace(float* y, const float* x, std::int64_t n, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    const int blocks = int(std::min<std::int64_t>((n + 255) / 256, 1024));
    addInPlaceKernel<<<blocks, 256, 0, stream>>>(y, x, n);
    return cudaGetLastError();
}

cudaError_t rmsNormRows(const float* x, std::int64_t xStride, const float* w, std::int64_t rows,
    std::int64_t n, float eps, float* out, std::int64_t outStride, cudaStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    launchChained(rmsNormRowsKernel, dim3(unsigned(rows)), dim3(kRowThreads), 0, stream, x, xStride,
        w, n, eps, out, outStride);
    return cudaGetLastError();
}

cudaError_t addRmsNormRows(float* hidden, const float* delta, const float* w, std::int64_t rows,
    std::int64_t n, float eps, float* normed, cudaStream_t stream, GatedAddend addend)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    if (addend.x && (!delta || !addend.gateWeight || !addend.down))
        return cudaErrorInvalidValue;
    // The vector kernel takes up to 4 float4 a thread (n <= 4096): a limit of it, not tuned.
    const std::int64_t perThread = (n / 4 + kRowThreads - 1) / kRowThreads;
    if (n % 4 == 0 && perThread <= 4 && aligned16(hidden) && aligned16(delta) && aligned16(w)
        && aligned16(normed) && aligned16(addend.down))
        return launchAddRmsNormVector<false>(perThread, rows, hidden, delta, w, n, eps, normed,
            nullptr, nullptr, addend, Int8Rows {}, stream);
    return launchChained(addRmsNormRowsKernel, dim3(unsigned(rows)), dim3(kRowThreads), 0, stream,
        hidden, delta, w, n, eps, normed, addend);
}

bool addRmsNormQuantizes(std::int64_t n)
{
    // Whole warps of valid float4 (the block shuffles use every lane), V <= 4.
    return n > 0 && n % 128 == 0 && n <= 16 * kRowThreads;
}

cudaError_t addRmsNormRowsQuantized(float* hidden, const float* delta, const float* w,
    std::int64_t rows, std::int64_t n, float eps, float* normed, Int8Rows quantized,
    cudaStream_t stream, GatedAddend addend, Int8Rows twoPlanes)
{
    if (rows <= 0)
        return cudaSuccess;
    if (!addRmsNormQuantizes(n) || !quantized.q || !quantized.s || !aligned16(hidden)
        || !aligned16(delta) || !aligned16(w) || !aligned16(normed) || !aligned16(quantized.q)
        || !aligned16(quantized.s) || !aligned16(addend.down) || !aligned16(twoPlanes.q)
        || !aligned16(twoPlanes.s) || (twoPlanes.q != nullptr) != (twoPlanes.s != nullptr))
        return cudaErrorInvalidValue;
    if (addend.x && (!delta || !addend.gateWeight || !addend.down))
        return cudaErrorInvalidValue;
    const std::int64_t perThread = (n / 4 + kRowThreads - 1) / kRowThreads;
    return launchAddRmsNormVector<true>(perThread, rows, hidden, delta, w, n, eps, normed,
        quantized.q, quantized.s, addend, twoPlanes, stream);
}

cudaError_t gatherF32Rows(const float* x, const std::int32_t* rows, std::int64_t count,
    std::int64_t n, float* out, cudaStream_t stream)
{
    if (count <= 0 || n <= 0)
        return cudaSuccess;
    launchChained(
        gatherRowsKernel, dim3(unsigned(count)), dim3(kRowThreads), 0, stream, x, rows, n, out);
    return cudaGetLastError();
}

cudaError_t countNonFinite(const float* x, std::int64_t n, int* count, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    const std::int64_t blocks = (n + kRowThreads * 8 - 1) / (kRowThreads * 8);
    launchChained(countNonFiniteKernel, dim3(unsigned(blocks < 1024 ? blocks : 1024)),
        dim3(kRowThreads), 0, stream, x, n, count);
    return cudaGetLastError();
}

// The workspace: kArgmaxMaxRows counters, then the partials. The counters' place must not
// depend on a call's row count: calls of different counts share one workspace, and partials
// written over another call's counters would leave them non-zero.
std::size_t argmaxWorkspaceBytes(std::int64_t rows, std::int64_t n)
{
    const std::int64_t chunks = (n + kArgmaxChunk - 1) / kArgmaxChunk;
    return kArgmaxMaxRows * sizeof(unsigned)
        + std::size_t(rows) * std::size_t(chunks) * sizeof(ArgmaxPartial);
}

cudaError_t argmaxRows(const float* x, std::int64_t rows, std::int64_t n, std::int32_t* index,
    float* value, void* workspace, cudaStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return cudaSuccess;
    if (!workspace || n > INT_MAX || rows > kArgmaxMaxRows)
        return cudaErrorInvalidValue;
    const std::int64_t chunks = (n + kArgmaxChunk - 1) / kArgmaxChunk;
    auto* counter = static_cast<unsigned*>(workspace);
    auto* partial = reinterpret_cast<ArgmaxPartial*>(counter + kArgmaxMaxRows);
    return launchChained(argmaxRowsKernel, dim3(unsigned(chunks), unsigned(rows)),
        dim3(kArgmaxThreads), 0, stream, x, n, index, value, partial, counter);
}

} // namespace cw::kernels::cuda
