#pragma once

// The integer matrix-vector products (1..kMatVecMaxTokens token rows, activations quantized
// by quantizeRows), as templates instantiated per type in mat_vec_int8_*.cu.
//
// A block owns R consecutive weight rows; its threads split the row's units (int_dot.cuh),
// each unit read straight from device memory once for all token rows (a warp reads
// consecutive units: contiguous bytes), unpacked once, then dotted with every token row's
// int8 activations (which stay in L1/L2: a few KB). R grows with the token count so the
// activation loads are shared by more rows; the block has as many warps as the row has units
// (1..4), so short rows (2048 columns: 32-64 units) do not leave threads idle. Partial sums
// meet in warp shuffles and a shared-memory sum over the warps, in a fixed order: the results
// are deterministic.

#include "kernels/cuda/async_copy.cuh"
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/quant/int_dot.cuh"
#include "kernels/cuda/quant/mat_vec.h"

#include <cstdint>

namespace cw::kernels::cuda::int_dot {

constexpr int kMaxWarps = 4;

// acc[r][t] += this thread's units of row r . token row t, units first, first + step, ...
template <TensorType Type, int T, int R, int Planes>
__device__ __forceinline__ void accumulateUnits(const std::uint8_t* const (&rowPtr)[R],
    std::int64_t units, std::int64_t cols, const std::int8_t* __restrict__ xq,
    const float4* __restrict__ xs, float (&acc)[R][T], int first, int step)
{
    using U = Unit<Type>;
    using X = XWords<Type, Planes>;
    const std::int64_t blocks = cols / 32;
    for (std::int64_t u = first; u < units; u += step) {
        U w[R];
#pragma unroll
        for (int r = 0; r < R; ++r)
            w[r].load(rowPtr[r], u);
        const XSpan span = U::span(u);
#pragma unroll
        for (int t = 0; t < T; ++t) {
            float d[Planes][U::kPieces], sx[U::kPieces];
            X::loadScales(xs + t * blocks, span, d, sx);
#pragma unroll
            for (int p = 0; p < Planes; ++p) {
                std::uint32_t words[X::kWords];
                X::loadWords(xq + (std::int64_t(t) * Planes + p) * cols, span, words);
#pragma unroll
                for (int r = 0; r < R; ++r)
                    acc[r][t] += w[r].dot(words, d[p]);
            }
#pragma unroll
            for (int r = 0; r < R; ++r)
                acc[r][t] += w[r].minTerm(sx);
        }
    }
}

// total[i] = sum of v[i] over the block's threads (every thread calls it; blockDim.x a
// multiple of 32, at most 32 * kMaxWarps).
template <int N> __device__ __forceinline__ void blockSums(float (&v)[N], float (&total)[N])
{
    __shared__ float partial[kMaxWarps][N];
    const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
    const int warps = int(blockDim.x) >> 5;
#pragma unroll
    for (int i = 0; i < N; ++i) {
        float s = v[i];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            s += __shfl_xor_sync(0xFFFFFFFFu, s, o);
        if (lane == 0)
            partial[warp][i] = s;
    }
    __syncthreads();
    for (int i = int(threadIdx.x); i < N; i += int(blockDim.x)) {
        float s = 0.0f;
        for (int w = 0; w < warps; ++w)
            s += partial[w][i];
        total[i] = s;
    }
    __syncthreads();
}

// Warps for a row of `units` units: one unit per thread where the row is short, up to four
// warps (not measured; chosen by reasoning).
inline int warpsForUnits(std::int64_t units)
{
    const std::int64_t w = (units + 31) / 32;
    return int(w < 1 ? 1 : w > kMaxWarps ? kMaxWarps : w);
}

// The launch's matrices, each with the index of its first block (blocks of one matrix are
// consecutive, in target order).
struct IntMatVecGrid {
    quant_detail::IntMatVecTarget target[quant_detail::kMaxIntMatVecTargets];
    std::int64_t firstBlock[quant_detail::kMaxIntMatVecTargets];
    int count;
};

// The matrix this block works on, and that matrix's first block: unrolled selects, so the
// parameter array is never indexed at run time.
__device__ __forceinline__ quant_detail::IntMatVecTarget targetOfBlock(
    const IntMatVecGrid& grid, std::int64_t& first)
{
    quant_detail::IntMatVecTarget m = grid.target[0];
    first = 0;
#pragma unroll
    for (int j = 1; j < quant_detail::kMaxIntMatVecTargets; ++j)
        if (j < grid.count && std::int64_t(blockIdx.x) >= grid.firstBlock[j]) {
            m = grid.target[j];
            first = grid.firstBlock[j];
        }
    return m;
}

// Blocks of `rowsPerBlock` rows over every target, each target's blocks consecutive.
inline std::int64_t layOutGrid(
    const quant_detail::IntMatVecArgs& a, std::int64_t rowsPerBlock, IntMatVecGrid& grid)
{
    grid = {};
    std::int64_t blocks = 0;
    for (int j = 0; j < a.targetCount; ++j) {
        grid.target[j] = a.targets[j];
        grid.firstBlock[j] = blocks;
        blocks += (a.targets[j].rows + rowsPerBlock - 1) / rowsPerBlock;
    }
    grid.count = a.targetCount;
    return blocks;
}

template <TensorType Type, int T, int R>
__global__ void __launch_bounds__(32 * kMaxWarps) intMatVecKernel(const IntMatVecGrid grid,
    std::int64_t cols, const std::int8_t* __restrict__ xq, const float4* __restrict__ xs)
{
    std::int64_t first = 0;
    const quant_detail::IntMatVecTarget m = targetOfBlock(grid, first);
    const std::int64_t rows = m.rows;
    const std::int64_t row0 = (std::int64_t(blockIdx.x) - first) * R;
    // The block's weight rows into L2 while the kernel before still runs.
    if (threadIdx.x < R && row0 + threadIdx.x < rows)
        prefetchRowL2(m.w, m.rowStride, row0 + threadIdx.x);
    chainedKernelEntry();
    const std::uint8_t* rowPtr[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
        rowPtr[r] = m.w + std::size_t(row0 + r < rows ? row0 + r : rows - 1) * m.rowStride;
    float acc[R][T];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int t = 0; t < T; ++t)
            acc[r][t] = 0.0f;
    accumulateUnits<Type, T, R, 1>(
        rowPtr, cols / Unit<Type>::kValues, cols, xq, xs, acc, int(threadIdx.x), int(blockDim.x));
    float v[R * T];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int t = 0; t < T; ++t)
            v[r * T + t] = acc[r][t];
    __shared__ float total[R * T];
    blockSums<R * T>(v, total);
    for (int i = int(threadIdx.x); i < R * T; i += int(blockDim.x)) {
        const int r = i / T, t = i % T;
        if (row0 + r < rows)
            m.y[t * m.yStride + row0 + r] = total[i];
    }
}

// One token row, a warp per R consecutive weight rows (four warps a block): its lanes take the
// row's units lane, lane + 32, ..., and meet in one warp sum. Against a block per row, a
// quarter of the blocks (the whole grid of a 8192-row matrix is resident at once) and no
// block-wide barrier; the sums round in another order (the units of a lane first).
constexpr int kWarpRowWarps = 4;

template <TensorType Type, int R>
__global__ void __launch_bounds__(32 * kWarpRowWarps)
    intMatVecWarpRowsKernel(const IntMatVecGrid grid, std::int64_t cols,
        const std::int8_t* __restrict__ xq, const float4* __restrict__ xs)
{
    std::int64_t first = 0;
    const quant_detail::IntMatVecTarget m = targetOfBlock(grid, first);
    const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
    const std::int64_t row0 = ((std::int64_t(blockIdx.x) - first) * kWarpRowWarps + warp) * R;
    // The warp's weight rows into L2 while the kernel before still runs.
    if (lane < R && row0 + lane < m.rows)
        prefetchRowL2(m.w, m.rowStride, row0 + lane);
    chainedKernelEntry();
    if (row0 >= m.rows)
        return; // a whole warp: nothing below waits for the others
    const std::uint8_t* rowPtr[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
        rowPtr[r] = m.w + std::size_t(row0 + r < m.rows ? row0 + r : m.rows - 1) * m.rowStride;
    float acc[R][1];
#pragma unroll
    for (int r = 0; r < R; ++r)
        acc[r][0] = 0.0f;
    accumulateUnits<Type, 1, R, 1>(rowPtr, cols / Unit<Type>::kValues, cols, xq, xs, acc, lane, 32);
#pragma unroll
    for (int r = 0; r < R; ++r) {
        float v = acc[r][0];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
        if (lane == 0 && row0 + r < m.rows)
            m.y[row0 + r] = v;
    }
}

template <TensorType Type, int R>
cudaError_t launchIntMatVecWarpRows(const quant_detail::IntMatVecArgs& a)
{
    IntMatVecGrid grid;
    const std::int64_t blocks = layOutGrid(a, std::int64_t(kWarpRowWarps) * R, grid);
    launchChained(intMatVecWarpRowsKernel<Type, R>, dim3(unsigned(blocks)),
        dim3(32 * kWarpRowWarps), 0, a.stream, grid, a.cols, a.x.q, a.x.s);
    return cudaGetLastError();
}

// One token row, a warp per weight row as above, the row first staged in shared memory by
// cp.async issued before the kernel waits for the one before it. The weights never change
// during a step, so their loads overlap that kernel's tail instead of starting after it (the
// products are chains of small dependent kernels); and 16-byte copies replace the 2- and 4-byte
// unit loads that blocks of 210 or 34 bytes (Q6_K, Q8_0) allow, whose scattered sectors held
// the Q6_K LM head to ~1 TB/s in L1 wavefronts. The sums are the warp-row kernel's, in its
// order: the results are the same bits.
// kChunk: the copies' size, 16 bytes where every row is 16-byte aligned, else 8 or 4 (Q6_K
// rows of 512 values are 420 bytes apart); rowChunks of them per row, each warp's row at a
// 16-byte boundary of shared memory (rowSlot int4 apart).

// A warp's copies of its row into shared memory (issued, then committed by the caller).
template <int kChunk>
__device__ __forceinline__ void stageRow(
    const quant_detail::IntMatVecTarget& m, std::int64_t row, int rowChunks, int4* staged, int lane)
{
    const std::uint8_t* src = m.w + std::size_t(row) * m.rowStride;
    auto* dst = reinterpret_cast<std::uint8_t*>(staged);
    for (int i = lane; i < rowChunks; i += 32) {
        if constexpr (kChunk == 16)
            copyAsync16(dst + 16 * i, src + 16 * i, true);
        else
            copyAsyncSmall<kChunk>(dst + kChunk * i, src + kChunk * i);
    }
}

// The staged row's product with the activations, once its copies have landed.
template <TensorType Type>
__device__ __forceinline__ void stagedRowProduct(const quant_detail::IntMatVecTarget& m,
    std::int64_t row, std::int64_t cols, const int4* staged, const std::int8_t* __restrict__ xq,
    const float4* __restrict__ xs, int lane)
{
    const std::uint8_t* rowPtr[1] = { reinterpret_cast<const std::uint8_t*>(staged) };
    float acc[1][1] = { { 0.0f } };
    accumulateUnits<Type, 1, 1, 1>(rowPtr, cols / Unit<Type>::kValues, cols, xq, xs, acc, lane, 32);
    float v = acc[0][0];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
    if (lane == 0)
        m.y[row] = v;
}

// Blocks from firstBlockB on hold TypeB's rows (the targets of TypeA come first); a launch of
// one type has TypeA == TypeB. Two types share a launch where the K-quant mixes (_M files)
// keep some matrices applied to the same activations in Q6_K beside Q4_K or Q5_K ones: two
// launches were two kernels in the step's chain.
template <TensorType TypeA, TensorType TypeB, int kChunk>
__global__ void __launch_bounds__(32 * kWarpRowWarps) intMatVecStagedRowsKernel(
    const IntMatVecGrid grid, std::int64_t cols, int rowChunksA, int rowChunksB, int rowSlot,
    std::int64_t firstBlockB, const std::int8_t* __restrict__ xq, const float4* __restrict__ xs)
{
    extern __shared__ int4 stagedRows[];
    std::int64_t first = 0;
    const quant_detail::IntMatVecTarget m = targetOfBlock(grid, first);
    const bool typeB = std::int64_t(blockIdx.x) >= firstBlockB;
    const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
    const std::int64_t row = (std::int64_t(blockIdx.x) - first) * kWarpRowWarps + warp;
    const bool active = row < m.rows;
    int4* staged = stagedRows + warp * rowSlot;
    if (active)
        stageRow<kChunk>(m, row, typeB ? rowChunksB : rowChunksA, staged, lane);
    commitAsync();
    chainedKernelEntry(); // the activations are the previous kernel's output
    if (!active)
        return; // a whole warp
    waitAsync<0>();
    __syncwarp();
    if constexpr (TypeA == TypeB)
        stagedRowProduct<TypeA>(m, row, cols, staged, xq, xs, lane);
    else if (typeB)
        stagedRowProduct<TypeB>(m, row, cols, staged, xq, xs, lane);
    else
        stagedRowProduct<TypeA>(m, row, cols, staged, xq, xs, lane);
}

// targets [0, countA) of TypeA staged as sa says, the rest of TypeB as sb says, in copies of
// the smaller chunk (both rows are aligned to it), each warp's slot as large as the longer row.
template <TensorType TypeA, TensorType TypeB>
cudaError_t launchIntMatVecStaged(const quant_detail::IntMatVecArgs& a, int countA,
    const quant_detail::StagedRows& sa, const quant_detail::StagedRows& sb)
{
    IntMatVecGrid grid;
    const std::int64_t blocks = layOutGrid(a, kWarpRowWarps, grid);
    const std::int64_t firstBlockB = countA < a.targetCount ? grid.firstBlock[countA] : blocks;
    const int chunk = sa.chunk < sb.chunk ? sa.chunk : sb.chunk;
    const int rowSlot = int(((sa.bytes > sb.bytes ? sa.bytes : sb.bytes) + 15) / 16);
    const std::size_t sharedBytes = std::size_t(kWarpRowWarps) * std::size_t(rowSlot) * 16;
    auto launch = [&](auto kernel) {
        launchChained(kernel, dim3(unsigned(blocks)), dim3(32 * kWarpRowWarps), sharedBytes,
            a.stream, grid, a.cols, int((sa.bytes + chunk - 1) / chunk),
            int((sb.bytes + chunk - 1) / chunk), rowSlot, firstBlockB, a.x.q, a.x.s);
    };
    if (chunk == 16)
        launch(intMatVecStagedRowsKernel<TypeA, TypeB, 16>);
    else if (chunk == 8)
        launch(intMatVecStagedRowsKernel<TypeA, TypeB, 8>);
    else
        launch(intMatVecStagedRowsKernel<TypeA, TypeB, 4>);
    return cudaGetLastError();
}

// targets [0, countA) of TypeA, the rest of TypeB; false where the rows cannot be staged.
template <TensorType TypeA, TensorType TypeB>
bool launchIntMatVecStagedMixed(
    const quant_detail::IntMatVecArgs& a, int countA, cudaError_t& result)
{
    const quant_detail::StagedRows sa = quant_detail::stagedRows(TypeA, a.cols, a.targets, countA);
    const quant_detail::StagedRows sb
        = quant_detail::stagedRows(TypeB, a.cols, a.targets + countA, a.targetCount - countA);
    if (sa.bytes == 0 || sb.bytes == 0)
        return false;
    result = launchIntMatVecStaged<TypeA, TypeB>(a, countA, sa, sb);
    return true;
}

template <TensorType Type, int T, int R>
cudaError_t launchIntMatVecTR(const quant_detail::IntMatVecArgs& a)
{
    IntMatVecGrid grid;
    const std::int64_t blocks = layOutGrid(a, R, grid);
    const int threads = 32 * warpsForUnits(a.cols / Unit<Type>::kValues);
    launchChained(intMatVecKernel<Type, T, R>, dim3(unsigned(blocks)), dim3(threads), 0, a.stream,
        grid, a.cols, a.x.q, a.x.s);
    return cudaGetLastError();
}

// Rows per block: 1 for one token row (the most blocks, nothing to share); 2 for 2..3 rows;
// 4 from 4 rows on large matrices, where each activation load then serves four weight rows.
// The 4-row and 1024-row bounds: not measured; chosen by reasoning (only the one-row layouts
// were compared, on the H200: IntMatVecLayout, mat_vec.h).
template <TensorType Type, int T> cudaError_t launchIntMatVecT(const quant_detail::IntMatVecArgs& a)
{
    if constexpr (T == 1) {
        switch (quant_detail::intMatVecLayout()) {
        case quant_detail::IntMatVecLayout::StagedWarpRow:
            if (const quant_detail::StagedRows staged
                = quant_detail::stagedRows(Type, a.cols, a.targets, a.targetCount);
                staged.bytes > 0)
                return launchIntMatVecStaged<Type, Type>(a, a.targetCount, staged, staged);
            return launchIntMatVecWarpRows<Type, 1>(a);
        case quant_detail::IntMatVecLayout::WarpRow:
            return launchIntMatVecWarpRows<Type, 1>(a);
        case quant_detail::IntMatVecLayout::WarpTwoRows:
            return launchIntMatVecWarpRows<Type, 2>(a);
        default:
            return launchIntMatVecTR<Type, 1, 1>(a);
        }
    } else if constexpr (T <= 3)
        return launchIntMatVecTR<Type, T, 2>(a);
    else {
        std::int64_t rows = a.targets[0].rows; // the smallest matrix decides
        for (int j = 1; j < a.targetCount; ++j)
            rows = a.targets[j].rows < rows ? a.targets[j].rows : rows;
        return rows >= 1024 ? launchIntMatVecTR<Type, T, 4>(a) : launchIntMatVecTR<Type, T, 2>(a);
    }
}

} // namespace cw::kernels::cuda::int_dot

namespace cw::kernels::cuda::quant_detail {

template <TensorType Type> cudaError_t launchIntMatVec(const IntMatVecArgs& a)
{
    static_assert(int_dot::kHasUnit<Type>, "integer products serve the block types only");
    if (a.x.planes != 1 || a.targetCount < 1 || a.targetCount > kMaxIntMatVecTargets)
        return cudaErrorInvalidValue;
    switch (a.tokens) {
    case 1:
        return int_dot::launchIntMatVecT<Type, 1>(a);
    case 2:
        return int_dot::launchIntMatVecT<Type, 2>(a);
    case 3:
        return int_dot::launchIntMatVecT<Type, 3>(a);
    case 4:
        return int_dot::launchIntMatVecT<Type, 4>(a);
    case 5:
        return int_dot::launchIntMatVecT<Type, 5>(a);
    case 6:
        return int_dot::launchIntMatVecT<Type, 6>(a);
    case 7:
        return int_dot::launchIntMatVecT<Type, 7>(a);
    case 8:
        return int_dot::launchIntMatVecT<Type, 8>(a);
    default:
        return cudaErrorInvalidValue;
    }
}

} // namespace cw::kernels::cuda::quant_detail
