#pragma once

// Matrix-vector products for several token rows (the default choice: 4..8) on the tensor
// cores, at f32 accuracy.
//
// With f32 FMAs, 8 token rows cost 8 FMAs per weight value and every 4 weight rows re-read
// all the activations: far from the bandwidth bound. Here one warp owns 16 weight rows and
// runs mma.sync m16n8k8 (tf32 in, f32 accumulate) with the 8 token rows as the n dimension,
// so the activations are read once per 16 rows and the multiply-adds leave the FMA pipe.
// tf32 keeps 10 mantissa bits, so each operand is split into a tf32 high part and the rest
// (exact in f32) and three products are summed (hi*hi + hi*lo + lo*hi, as CUTLASS's 3xTF32):
// the error is about 2^-21 of each product, as f32.
//
// Lane (g = lane / 4, t = lane % 4) decodes 32-value chunk 4m + t of rows g and g + 8 for
// macro-block m (128 columns) and reads the activations of token row g at the same columns.
// The k dimension is permuted so that at each of the 16 k-steps the lane's k-slots t and
// t + 4 are two columns of its own chunk: A and B fragments then come from the same lane, and
// every column meets its activation exactly once. The 8 warps of a block split the
// macro-blocks of the same 16 rows and meet in shared memory at the end.

#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/quant/chunk_decode.cuh"
#include "kernels/cuda/quant/dequant.cuh"

#include <cstdint>
#include <type_traits>

namespace cw::kernels::cuda::quant_detail {

constexpr int kMmaWarps = 8;
constexpr int kMmaThreads = 32 * kMmaWarps;
constexpr int kMmaRows = 16;

__device__ __forceinline__ void splitTf32(float v, std::uint32_t& hi, std::uint32_t& lo)
{
    const std::uint32_t h = __float_as_uint(v) & 0xFFFFE000u;
    hi = h;
    lo = __float_as_uint(v - __uint_as_float(h));
}

__device__ __forceinline__ void mmaTf32(float (&c)[4], std::uint32_t a0, std::uint32_t a1,
    std::uint32_t a2, std::uint32_t a3, std::uint32_t b0, std::uint32_t b1)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}

// Values [8p, 8p + 8) of one chunk of a row, from its loaded Chunk (block types) or straight
// from the row (plain float types); zeros past the row's last chunk.
template <TensorType Type> struct PieceSource {
    std::conditional_t<kIsChunked<Type>, Chunk<Type>, int> chunk;
    const std::uint8_t* row;
    std::int64_t index;
    bool valid;

    __device__ __forceinline__ void load(const std::uint8_t* r, std::int64_t c, bool v)
    {
        row = r, index = c, valid = v;
        if constexpr (kIsChunked<Type>) {
            if (v)
                chunk.load(r, c);
        }
    }
    __device__ __forceinline__ void piece(int p, float out[8]) const
    {
        if (!valid) {
#pragma unroll
            for (int i = 0; i < 8; ++i)
                out[i] = 0.0f;
        } else if constexpr (kIsChunked<Type>) {
            chunk.template piece<false>(p, out);
        } else {
            dequant8<Type>(row, 4 * index + p, out);
        }
    }
};

// Needs cols % 32 == 0, rows 16-byte aligned, x rows 16-byte aligned.
template <TensorType Type, int T>
__global__ void __launch_bounds__(kMmaThreads) matVecMmaKernel(const std::uint8_t* __restrict__ w,
    std::size_t rowStride, std::int64_t rows, std::int64_t cols, const float* __restrict__ x,
    std::int64_t xStride, float* __restrict__ y, std::int64_t yStride)
{
    chainedKernelEntry();
    static_assert(T >= 1 && T <= 8, "the n dimension of the mma holds 8 token rows");
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const std::int64_t row0 = std::int64_t(blockIdx.x) * kMmaRows;
    const std::int64_t rowA = row0 + g < rows ? row0 + g : rows - 1;
    const std::int64_t rowB = row0 + g + 8 < rows ? row0 + g + 8 : rows - 1;
    const std::uint8_t* ptrA = w + std::size_t(rowA) * rowStride;
    const std::uint8_t* ptrB = w + std::size_t(rowB) * rowStride;
    const float* xRow = x + (g < T ? g : 0) * xStride;

    float acc[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
    const std::int64_t chunks = cols / 32;
    const std::int64_t macros = (chunks + 3) / 4;
    for (std::int64_t m = warp; m < macros; m += kMmaWarps) {
        const std::int64_t chunk = 4 * m + t;
        const bool valid = chunk < chunks;
        PieceSource<Type> sourceA, sourceB;
        sourceA.load(ptrA, chunk, valid);
        sourceB.load(ptrB, chunk, valid);
        const float* xChunk = xRow + 32 * chunk;
        const bool loadX = valid && g < T;
#pragma unroll
        for (int p = 0; p < 4; ++p) {
            float wa[8], wb[8], xv[8];
            sourceA.piece(p, wa);
            sourceB.piece(p, wb);
            const float4 x0 = loadX ? __ldg(reinterpret_cast<const float4*>(xChunk + 8 * p))
                                    : make_float4(0, 0, 0, 0);
            const float4 x1 = loadX ? __ldg(reinterpret_cast<const float4*>(xChunk + 8 * p) + 1)
                                    : make_float4(0, 0, 0, 0);
            xv[0] = x0.x, xv[1] = x0.y, xv[2] = x0.z, xv[3] = x0.w;
            xv[4] = x1.x, xv[5] = x1.y, xv[6] = x1.z, xv[7] = x1.w;
            // k-step (p, s): the lane's slots t and t + 4 are columns 8p + 2s and 8p + 2s + 1.
#pragma unroll
            for (int s = 0; s < 4; ++s) {
                std::uint32_t a0h, a0l, a1h, a1l, a2h, a2l, a3h, a3l, b0h, b0l, b1h, b1l;
                splitTf32(wa[2 * s], a0h, a0l); // row g, slot t
                splitTf32(wb[2 * s], a1h, a1l); // row g + 8, slot t
                splitTf32(wa[2 * s + 1], a2h, a2l); // row g, slot t + 4
                splitTf32(wb[2 * s + 1], a3h, a3l); // row g + 8, slot t + 4
                splitTf32(xv[2 * s], b0h, b0l); // token g, slot t
                splitTf32(xv[2 * s + 1], b1h, b1l); // token g, slot t + 4
                mmaTf32(acc, a0l, a1l, a2l, a3l, b0h, b1h);
                mmaTf32(acc, a0h, a1h, a2h, a3h, b0l, b1l);
                mmaTf32(acc, a0h, a1h, a2h, a3h, b0h, b1h);
            }
        }
    }

    // acc: rows g (0, 1) and g + 8 (2, 3), tokens 2t and 2t + 1.
    __shared__ float partial[kMmaWarps][kMmaRows][8];
    partial[warp][g][2 * t] = acc[0];
    partial[warp][g][2 * t + 1] = acc[1];
    partial[warp][g + 8][2 * t] = acc[2];
    partial[warp][g + 8][2 * t + 1] = acc[3];
    __syncthreads();
    if (threadIdx.x < kMmaRows * 8) {
        const int r = threadIdx.x >> 3, k = threadIdx.x & 7;
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < kMmaWarps; ++i)
            sum += partial[i][r][k];
        if (k < T && row0 + r < rows)
            y[k * yStride + row0 + r] = sum;
    }
}

} // namespace cw::kernels::cuda::quant_detail
