#pragma once

// The matrix-vector kernels (1..kMatVecMaxTokens token rows, f32 activations), as templates
// instantiated per type in mat_vec_*.cu so the instantiations compile in parallel.
//
// Decode is memory-bound, so each weight byte is read once for all token rows. A block of
// 128 threads owns R consecutive weight rows (R = 2 or 4, so even 512-row matrices give the
// GPU a few hundred blocks) and walks their columns in tiles of 4096 values: the tile's bytes
// of the R rows are copied to shared memory with coalesced 16-byte cp.async (the next tile's
// copy in flight while this one is decoded), then each thread decodes one 32-value chunk of
// each row from shared memory (chunk_decode.cuh) and multiplies it with the activations of
// every token row. Going through shared memory keeps the global loads coalesced whatever the
// block size (18, 34, 110 or 210 bytes are not 16-byte multiples); the plain float types are
// read directly, 16 or 32 bytes per thread. A row's partial sums meet in a warp shuffle and a
// shared-memory sum over the four warps. For 4..8 token rows of block types the tensor-core
// kernel of mat_vec_mma.cuh is faster (launchMatVecT picks).

#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/quant/chunk_decode.cuh"
#include "kernels/cuda/quant/dequant.cuh"
#include "kernels/cuda/quant/mat_vec.h"
#include "kernels/cuda/quant/mat_vec_mma.cuh"
#include "kernels/cuda/quant/quant_products.h"

#include <cstdint>

namespace cw::kernels::cuda::quant_detail {

constexpr int kMvThreads = 128;
constexpr int kMvWarps = kMvThreads / 32;
constexpr int kMvTileValues = 32 * kMvThreads; // one 32-value chunk per thread and row

__device__ __forceinline__ void cpAsync16(void* smem, const void* gmem)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = unsigned(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
#else
    *reinterpret_cast<uint4*>(smem) = *reinterpret_cast<const uint4*>(gmem);
#endif
}

__device__ __forceinline__ void cpAsyncCommit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int N> __device__ __forceinline__ void cpAsyncWait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

// x[0..8) into v: two 16-byte loads when x is 16-byte aligned.
__device__ __forceinline__ void loadX8(const float* x, float v[8], bool vector)
{
    if (vector) {
        const float4 a = __ldg(reinterpret_cast<const float4*>(x));
        const float4 b = __ldg(reinterpret_cast<const float4*>(x) + 1);
        v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
        v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
    } else {
#pragma unroll
        for (int i = 0; i < 8; ++i)
            v[i] = __ldg(x + i);
    }
}

// Sums acc over the block and writes y[t][row0 + r].
template <int T, int R>
__device__ __forceinline__ void reduceAndStore(
    float (&acc)[R][T], std::int64_t row0, std::int64_t rows, float* y, std::int64_t yStride)
{
    __shared__ float partial[kMvWarps][R * T];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
        for (int t = 0; t < T; ++t) {
            float v = acc[r][t];
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                v += __shfl_xor_sync(0xffffffffu, v, o);
            if (lane == 0)
                partial[warp][r * T + t] = v;
        }
    }
    __syncthreads();
    if (threadIdx.x < R * T) {
        float sum = 0.0f;
#pragma unroll
        for (int w = 0; w < kMvWarps; ++w)
            sum += partial[w][threadIdx.x];
        const int r = threadIdx.x / T, t = threadIdx.x % T;
        if (row0 + r < rows)
            y[t * yStride + row0 + r] = sum;
    }
}

template <TensorType Type, int T, int R>
__global__ void __launch_bounds__(kMvThreads)
    matVecChunkedKernel(const std::uint8_t* __restrict__ w, std::size_t rowStride,
        std::int64_t rows, std::int64_t cols, const float* __restrict__ x, std::int64_t xStride,
        float* __restrict__ y, std::int64_t yStride, bool aligned16, bool xVector)
{
    chainedKernelEntry();
    constexpr int kBlockValues = BlockTraits<Type>::kValues,
                  kBlockBytes = BlockTraits<Type>::kBytes;
    constexpr int kTileBytes = kMvTileValues / kBlockValues * kBlockBytes;
    static_assert(kTileBytes % 16 == 0, "tiles must stay 16-byte aligned in shared memory");
    __shared__ __align__(16) std::uint8_t tile[2][R][kTileBytes];

    const std::int64_t row0 = std::int64_t(blockIdx.x) * R;
    const std::uint8_t* rowPtr[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
        rowPtr[r] = w + std::size_t(row0 + r < rows ? row0 + r : rows - 1) * rowStride;

    auto stage = [&](std::int64_t t, int buf) {
        const std::int64_t c0 = t * kMvTileValues;
        const std::int64_t values = cols - c0 < kMvTileValues ? cols - c0 : kMvTileValues;
        const int bytes = int(values / kBlockValues * kBlockBytes);
        const std::size_t offset = std::size_t(c0 / kBlockValues) * kBlockBytes;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const std::uint8_t* src = rowPtr[r] + offset;
            std::uint8_t* dst = tile[buf][r];
            int tail = 0;
            if (aligned16) {
                for (int i = 16 * threadIdx.x; i + 16 <= bytes; i += 16 * kMvThreads)
                    cpAsync16(dst + i, src + i);
                tail = bytes & ~15;
            }
            // Rows that are not 16-byte aligned (and the last bytes of a short tile) go two
            // bytes at a time: every block size is even.
            for (int i = tail + 2 * threadIdx.x; i < bytes; i += 2 * kMvThreads)
                *reinterpret_cast<std::uint16_t*>(dst + i)
                    = *reinterpret_cast<const std::uint16_t*>(src + i);
        }
        cpAsyncCommit();
    };

    float acc[R][T];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int t = 0; t < T; ++t)
            acc[r][t] = 0.0f;

    const std::int64_t tiles = (cols + kMvTileValues - 1) / kMvTileValues;
    stage(0, 0);
    for (std::int64_t t = 0; t < tiles; ++t) {
        const int buf = int(t & 1);
        if (t + 1 < tiles) {
            stage(t + 1, buf ^ 1);
            cpAsyncWait<1>();
        } else {
            cpAsyncWait<0>();
        }
        __syncthreads();
        const std::int64_t col = t * kMvTileValues + 32 * threadIdx.x;
        if (col < cols) {
            Chunk<Type> chunk[R];
#pragma unroll
            for (int r = 0; r < R; ++r)
                chunk[r].load(tile[buf][r], threadIdx.x);
#pragma unroll
            for (int p = 0; p < 4; ++p) {
                float xv[T][8];
#pragma unroll
                for (int k = 0; k < T; ++k)
                    loadX8(x + k * xStride + col + 8 * p, xv[k], xVector);
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    float wv[8];
                    chunk[r].template piece<false>(p, wv);
#pragma unroll
                    for (int k = 0; k < T; ++k)
#pragma unroll
                        for (int i = 0; i < 8; ++i)
                            acc[r][k] = fmaf(wv[i], xv[k][i], acc[r][k]);
                }
            }
        }
        __syncthreads(); // the next iteration's copy overwrites this buffer
    }
    reduceAndStore<T, R>(acc, row0, rows, y, yStride);
}

// F32, F16, BF16: each thread reads 8 values (16 or 32 bytes) of each row per step.
// One block's R rows of the product, kMvThreads threads (also the router's logits in
// moe_router.cu, which must round as this kernel does).
template <TensorType Type, int T, int R>
__device__ __forceinline__ void matVecFloatBlock(const std::uint8_t* __restrict__ w,
    std::size_t rowStride, std::int64_t rows, std::int64_t cols, const float* __restrict__ x,
    std::int64_t xStride, float* __restrict__ y, std::int64_t yStride, bool xVector)
{
    const std::int64_t row0 = std::int64_t(blockIdx.x) * R;
    const std::uint8_t* rowPtr[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
        rowPtr[r] = w + std::size_t(row0 + r < rows ? row0 + r : rows - 1) * rowStride;
    float acc[R][T];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int t = 0; t < T; ++t)
            acc[r][t] = 0.0f;

    const std::int64_t groups = cols / 8;
    for (std::int64_t g = threadIdx.x; g < groups; g += kMvThreads) {
        float wv[R][8];
#pragma unroll
        for (int r = 0; r < R; ++r)
            dequant8<Type>(rowPtr[r], g, wv[r]);
#pragma unroll
        for (int k = 0; k < T; ++k) {
            float xv[8];
            loadX8(x + k * xStride + 8 * g, xv, xVector);
#pragma unroll
            for (int r = 0; r < R; ++r)
#pragma unroll
                for (int i = 0; i < 8; ++i)
                    acc[r][k] = fmaf(wv[r][i], xv[i], acc[r][k]);
        }
    }
    for (std::int64_t c = 8 * groups + threadIdx.x; c < cols; c += kMvThreads) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            float v;
            if constexpr (Type == TensorType::F32)
                v = reinterpret_cast<const float*>(rowPtr[r])[c];
            else if constexpr (Type == TensorType::F16)
                v = detail::halfBits(reinterpret_cast<const std::uint16_t*>(rowPtr[r])[c]);
            else
                v = __uint_as_float(
                    std::uint32_t(reinterpret_cast<const std::uint16_t*>(rowPtr[r])[c]) << 16);
#pragma unroll
            for (int k = 0; k < T; ++k)
                acc[r][k] = fmaf(v, x[k * xStride + c], acc[r][k]);
        }
    }
    reduceAndStore<T, R>(acc, row0, rows, y, yStride);
}

template <TensorType Type, int T, int R>
__global__ void __launch_bounds__(kMvThreads) matVecFloatKernel(const std::uint8_t* __restrict__ w,
    std::size_t rowStride, std::int64_t rows, std::int64_t cols, const float* __restrict__ x,
    std::int64_t xStride, float* __restrict__ y, std::int64_t yStride, bool xVector)
{
    chainedKernelEntry();
    matVecFloatBlock<Type, T, R>(w, rowStride, rows, cols, x, xStride, y, yStride, xVector);
}

template <TensorType Type, int T, int R> cudaError_t launchMatVecTR(const MatVecArgs& a)
{
    const unsigned blocks = unsigned((a.rows + R - 1) / R);
    const bool xVector = (reinterpret_cast<std::uintptr_t>(a.x) & 15) == 0 && a.xStride % 4 == 0;
    if constexpr (kIsChunked<Type>) {
        const bool aligned16
            = (reinterpret_cast<std::uintptr_t>(a.w) & 15) == 0 && a.rowStride % 16 == 0;
        launchChained(matVecChunkedKernel<Type, T, R>, dim3(blocks), dim3(kMvThreads), 0, a.stream,
            a.w, a.rowStride, a.rows, a.cols, a.x, a.xStride, a.y, a.yStride, aligned16, xVector);
    } else {
        launchChained(matVecFloatKernel<Type, T, R>, dim3(blocks), dim3(kMvThreads), 0, a.stream,
            a.w, a.rowStride, a.rows, a.cols, a.x, a.xStride, a.y, a.yStride, xVector);
    }
    return cudaGetLastError();
}

// Rows per block: 4 reuses each activation load over more rows; 2 keeps small matrices
// spread over the 132 SMs. The 2048-row bound: not measured; chosen by reasoning for the H200.
inline int matVecRowsPerBlock(std::int64_t rows)
{
    return rows >= 2048 ? 4 : 2;
}

template <TensorType Type, int T> cudaError_t launchMatVecT(const MatVecArgs& a)
{
    const bool aligned = (reinterpret_cast<std::uintptr_t>(a.w) & 15) == 0 && a.rowStride % 16 == 0
        && (reinterpret_cast<std::uintptr_t>(a.x) & 15) == 0 && a.xStride % 4 == 0
        && a.cols % 32 == 0;
    // Measured on the H200 (tests/gpu/quant/quant_bench.cpp): the tensor-core kernel wins
    // for block types from about 4 token rows on matrices of 1024+ rows (2048x8192 q4_K at 8
    // rows: 356 against 171 GB/s); below that, and for the plain float types, the f32-FMA
    // kernels are faster (q4_K at 1 row: 832 against 370 GB/s).
    // Only on the shapes measured and verified there (2048+ columns): the tiny models' logit
    // rows (256 columns, one super-block per row) are left to the f32-FMA kernels.
    const bool autoMma = kIsChunked<Type> && T >= 4 && a.rows >= 1024 && a.cols >= 2048;
    const bool mma
        = aligned && (a.kernel == MatVecKernel::Mma || (a.kernel == MatVecKernel::Auto && autoMma));
    if (mma) {
        const unsigned blocks = unsigned((a.rows + kMmaRows - 1) / kMmaRows);
        launchChained(matVecMmaKernel<Type, T>, dim3(blocks), dim3(kMmaThreads), 0, a.stream, a.w,
            a.rowStride, a.rows, a.cols, a.x, a.xStride, a.y, a.yStride);
        return cudaGetLastError();
    }
    return matVecRowsPerBlock(a.rows) == 4 ? launchMatVecTR<Type, T, 4>(a)
                                           : launchMatVecTR<Type, T, 2>(a);
}

template <TensorType Type> cudaError_t launchMatVec(const MatVecArgs& a)
{
    switch (a.tokens) {
    case 1:
        return launchMatVecT<Type, 1>(a);
    case 2:
        return launchMatVecT<Type, 2>(a);
    case 3:
        return launchMatVecT<Type, 3>(a);
    case 4:
        return launchMatVecT<Type, 4>(a);
    case 5:
        return launchMatVecT<Type, 5>(a);
    case 6:
        return launchMatVecT<Type, 6>(a);
    case 7:
        return launchMatVecT<Type, 7>(a);
    case 8:
        return launchMatVecT<Type, 8>(a);
    default:
        return cudaErrorInvalidValue;
    }
}

} // namespace cw::kernels::cuda::quant_detail
