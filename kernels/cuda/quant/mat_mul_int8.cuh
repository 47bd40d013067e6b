#pragma once

// The integer products of 9..kIntMatMulMaxTokens token rows (decode steps of many sequences)
// on the int8 tensor cores, as templates instantiated per type in mat_mul_int8_*.cu.
//
// Why: above kMatVecMaxTokens rows the products used to dequantize every weight to bf16 in
// device memory and call cuBLAS (5.6 ms of a 32-sequence step's 20.8 under ncu: the bf16 copy
// is written and read again, 3.5x the quantized bytes), and dp4a passes of 8 rows were slower
// still (each pass decodes the weights again). Here the weights stay in their blocks: each
// unit (int_dot.cuh) is unpacked once into int8 words and one mma.sync m16n8k16 per 16 values
// and 8 token rows takes it against the activations quantized by quantizeRows, as llama.cpp's
// MMQ does. The integer sums are exact; each 16-value piece's sum is scaled by its weight
// scale and its activation block's scale, and the mins by the block's float sum, exactly the
// terms of the dp4a products (the float sums round in another order).
//
// A block owns 16 weight rows (one m16 tile); its four warps take every fourth pair of units
// of those rows and meet in a shared-memory sum in a fixed order: deterministic. In a warp,
// lane l unpacks unit (pair + l / 16) of row l % 16 into shared memory, then every lane reads
// its A fragments from there (rows g and g + 8, word c of each 16-value piece: no bank
// conflicts) and its B fragments straight from the activations (L1-resident: 64 KB at most).

#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/quant/int_dot.cuh"
#include "kernels/cuda/quant/mat_vec_int8.cuh"
#include "kernels/cuda/quant/quant_products.h"

#include <cstdint>

namespace cw::kernels::cuda::int_dot {

constexpr int kMmaWarps = 4;
constexpr int kMmaRows = 16;

// c += a (16 x 16 int8, row-major) . b (16 x 8 int8, column-major), s32 accumulation.
__device__ __forceinline__ void mmaS8(int (&c)[4], std::uint32_t a0, std::uint32_t a1, std::uint32_t b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
        "{%0, %1, %2, %3};\n"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a0), "r"(a1), "r"(b));
#else
    __trap(); // the build's architectures start at sm_80 (CW_CUDA_ARCHITECTURES)
#endif
}

// NT: tiles of 8 token rows (tokens <= 8 * NT; rows past `tokens` read the last, never stored).
template <TensorType Type, int NT>
__global__ void __launch_bounds__(32 * kMmaWarps) intMatMulMmaKernel(const IntMatVecGrid grid,
    std::int64_t cols, int tokens, const std::int8_t* __restrict__ xq,
    const float4* __restrict__ xs)
{
    using U = Unit<Type>;
    constexpr int kSlotsPerPiece = U::kPieceWords / 4; // 16-value slots of one piece
    constexpr int kSlots = U::kPieces * kSlotsPerPiece;
    constexpr bool kMins = Type == TensorType::Q4_0 || Type == TensorType::Q4_1
        || Type == TensorType::Q5_0 || Type == TensorType::Q5_1 || Type == TensorType::Q4_K
        || Type == TensorType::Q5_K;
    __shared__ __align__(16) std::uint32_t words[kMmaWarps][2][kSlots][kMmaRows][4];
    __shared__ float scales[kMmaWarps][2][U::kPieces][kMmaRows];
    __shared__ float mins[kMmaWarps][2][U::kPieces][kMmaRows];
    __shared__ float partial[kMmaWarps][NT * 8][kMmaRows + 1];

    std::int64_t first = 0;
    const quant_detail::IntMatVecTarget m = targetOfBlock(grid, first);
    const std::int64_t row0 = (std::int64_t(blockIdx.x) - first) * kMmaRows;
    const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
    // The block's weight rows into L2 while the kernel before still runs.
    if (threadIdx.x < kMmaRows && row0 + threadIdx.x < m.rows)
        prefetchRowL2(m.w, m.rowStride, row0 + threadIdx.x);
    chainedKernelEntry();

    const int g = lane >> 2, c = lane & 3;
    const int myRow = lane & 15, myHalf = lane >> 4;
    const std::uint8_t* rowPtr
        = m.w + std::size_t(row0 + myRow < m.rows ? row0 + myRow : m.rows - 1) * m.rowStride;
    const std::int64_t units = cols / U::kValues;
    const std::int64_t blocks = cols / 32;
    int bToken[NT], cToken[NT][2];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        bToken[nt] = min(nt * 8 + g, tokens - 1);
        cToken[nt][0] = min(nt * 8 + 2 * c, tokens - 1);
        cToken[nt][1] = min(nt * 8 + 2 * c + 1, tokens - 1);
    }
    float acc[NT][4];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i)
            acc[nt][i] = 0.0f;

    for (std::int64_t pair = 2 * warp; pair < units; pair += 2 * kMmaWarps) {
        const std::int64_t mine = pair + myHalf;
        if (mine < units) {
            U w;
            w.load(rowPtr, mine);
#pragma unroll
            for (int s = 0; s < kSlots; ++s)
                *reinterpret_cast<uint4*>(words[warp][myHalf][s][myRow])
                    = make_uint4(w.q[4 * s], w.q[4 * s + 1], w.q[4 * s + 2], w.q[4 * s + 3]);
#pragma unroll
            for (int i = 0; i < U::kPieces; ++i) {
                scales[warp][myHalf][i][myRow] = w.pieceScale(i);
                if constexpr (kMins)
                    mins[warp][myHalf][i][myRow] = w.pieceMin(i);
            }
        }
        __syncwarp();
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const std::int64_t u = pair + h;
            if (u >= units)
                break; // the whole warp
            const XSpan span = U::span(u);
#pragma unroll
            for (int i = 0; i < U::kPieces; ++i) {
                const std::int64_t block = span.block0 + i;
                int sums[NT][4];
#pragma unroll
                for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                    for (int j = 0; j < 4; ++j)
                        sums[nt][j] = 0;
#pragma unroll
                for (int sp = 0; sp < kSlotsPerPiece; ++sp) {
                    const int s = i * kSlotsPerPiece + sp;
                    const std::uint32_t a0 = words[warp][h][s][g][c];
                    const std::uint32_t a1 = words[warp][h][s][g + 8][c];
                    const std::int64_t at = 32 * block + span.offset + 16 * sp + 4 * c;
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt) {
                        const std::uint32_t b = __ldg(
                            reinterpret_cast<const std::uint32_t*>(xq + bToken[nt] * cols + at));
                        mmaS8(sums[nt], a0, a1, b);
                    }
                }
                const float w0 = scales[warp][h][i][g], w1 = scales[warp][h][i][g + 8];
                float m0 = 0.0f, m1 = 0.0f;
                if constexpr (kMins) {
                    m0 = mins[warp][h][i][g];
                    m1 = mins[warp][h][i][g + 8];
                }
#pragma unroll
                for (int nt = 0; nt < NT; ++nt) {
                    const float4 x0 = __ldg(xs + cToken[nt][0] * blocks + block);
                    const float4 x1 = __ldg(xs + cToken[nt][1] * blocks + block);
                    acc[nt][0] += float(sums[nt][0]) * (w0 * x0.x);
                    acc[nt][1] += float(sums[nt][1]) * (w0 * x1.x);
                    acc[nt][2] += float(sums[nt][2]) * (w1 * x0.x);
                    acc[nt][3] += float(sums[nt][3]) * (w1 * x1.x);
                    if constexpr (kMins) {
                        acc[nt][0] += m0 * x0.z;
                        acc[nt][1] += m0 * x1.z;
                        acc[nt][2] += m1 * x0.z;
                        acc[nt][3] += m1 * x1.z;
                    }
                }
            }
        }
        __syncwarp();
    }

#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        partial[warp][nt * 8 + 2 * c][g] = acc[nt][0];
        partial[warp][nt * 8 + 2 * c + 1][g] = acc[nt][1];
        partial[warp][nt * 8 + 2 * c][g + 8] = acc[nt][2];
        partial[warp][nt * 8 + 2 * c + 1][g + 8] = acc[nt][3];
    }
    __syncthreads();
    for (int i = int(threadIdx.x); i < tokens * kMmaRows; i += int(blockDim.x)) {
        const int t = i / kMmaRows, r = i % kMmaRows;
        if (row0 + r >= m.rows)
            continue;
        float v = partial[0][t][r];
#pragma unroll
        for (int w = 1; w < kMmaWarps; ++w)
            v += partial[w][t][r];
        m.y[std::int64_t(t) * m.yStride + row0 + r] = v;
    }
}

template <TensorType Type, int NT> cudaError_t launchIntMatMulNT(const quant_detail::IntMatVecArgs& a)
{
    IntMatVecGrid grid;
    const std::int64_t blocks = layOutGrid(a, kMmaRows, grid);
    launchChained(intMatMulMmaKernel<Type, NT>, dim3(unsigned(blocks)), dim3(32 * kMmaWarps), 0,
        a.stream, grid, a.cols, int(a.tokens), a.x.q, a.x.s);
    return cudaGetLastError();
}

} // namespace cw::kernels::cuda::int_dot

namespace cw::kernels::cuda::quant_detail {

// Token tiles of 16, 32 or 64 rows: the counts between pay a partly empty tile, against
// twice the kernels to compile per type. The smallest tile that holds the rows: a limit of the
// kernels, not tuned.
template <TensorType Type> cudaError_t launchIntMatMul(const IntMatVecArgs& a)
{
    static_assert(int_dot::kHasMmaUnit<Type>, "tensor-core integer products of this type");
    if (a.x.planes != 1 || a.targetCount < 1 || a.targetCount > kMaxIntMatVecTargets
        || a.tokens <= kMatVecMaxTokens || a.tokens > kIntMatMulMaxTokens)
        return cudaErrorInvalidValue;
    if (a.tokens <= 16)
        return int_dot::launchIntMatMulNT<Type, 2>(a);
    if (a.tokens <= 32)
        return int_dot::launchIntMatMulNT<Type, 4>(a);
    return int_dot::launchIntMatMulNT<Type, 8>(a);
}

} // namespace cw::kernels::cuda::quant_detail
