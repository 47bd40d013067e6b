// The grouped expert products of larger batches: one launch per matrix for all experts. The
// grid runs over (weight-row tile, token tile) where token tiles are counted over all experts
// from the capacity tokens * k; a block finds its expert from the device's tile offsets and
// exits past the last tile, so nothing here needs the counts on the host.
//
// Weight tiles are decoded with dequant8 straight from the GGUF blocks into shared memory
// (never a dequantized copy of the experts in device memory). BFloat16: bf16 operands on the
// tensor cores (mma.sync m16n8k16, f32 accumulation). Float32: plain f32 FMA, the reference.
#include "kernels/cuda/async_copy.cuh"
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/moe/moe_expert_rows.cuh"
#include "kernels/cuda/moe/moe_paths.h"
#include "kernels/cuda/quant/chunk_decode.cuh"

#include <algorithm>
#include <cuda_bf16.h>

namespace cw::kernels::cuda::moe {
namespace {

struct GemmArgs {
    const float* x = nullptr; // gate/up, f32 tiles: the token rows [tokens][hidden]
    const std::uint16_t* xb = nullptr; // gate/up, bf16 tiles: the same rows in bf16
    const void* hidden = nullptr; // down: silu(gate) * up in sorted order, bf16 or f32
    DeviceExpertStack w0, w1; // gate and up, or down (w1 unused)
    const std::int32_t* offsets = nullptr;
    const std::int32_t* tileOffsets = nullptr;
    const std::int32_t* sortedPair = nullptr;
    int experts = 0;
    int k = 0;
    std::int64_t kDim = 0; // columns of the weight rows
    std::int64_t nDim = 0; // weight rows of one expert (ffn for gate/up, hidden for down)
    void* out = nullptr; // gate/up: hidden rows [pairs][ffn]; down: [pairs][hidden] f32
};

// The expert and sorted rows [row0, row0 + rows) of tile `tile`; false past the last tile.
__device__ __forceinline__ bool locateTile(
    const GemmArgs& a, int tile, int tileRows, int& e, int& row0, int& rows)
{
    if (tile >= a.tileOffsets[a.experts])
        return false;
    int lo = 0, hi = a.experts - 1; // the last expert whose first tile is <= tile
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (a.tileOffsets[mid] <= tile)
            lo = mid;
        else
            hi = mid - 1;
    }
    e = lo;
    row0 = a.offsets[e] + (tile - a.tileOffsets[e]) * tileRows;
    rows = min(tileRows, a.offsets[e + 1] - row0);
    return true;
}

// Weight row n of this block's tile: gate/up blocks hold half gate rows, half up rows. Rows
// past the matrix read its last row: they only reach output columns that are never stored.
template <bool GateUp>
__device__ __forceinline__ const std::uint8_t* tileWeightRow(
    const GemmArgs& a, int e, std::int64_t nTile, int n, int tileN)
{
    const std::int64_t r = nTile * (GateUp ? tileN / 2 : tileN) + (GateUp ? n % (tileN / 2) : n);
    return expertRow(GateUp && n >= tileN / 2 ? a.w1 : a.w0, e, r < a.nDim ? r : a.nDim - 1);
}

// --- bf16 tensor-core tiles ------------------------------------------------------------------

// k-steps of 64 values: each stage's tensor-core work (16 mma per warp and 16 values of k)
// then hides the next stage's loads and dequantization, and a block meets at half as many
// barriers as with 32. Two stages of A and B tiles: 72 KB of dynamic shared memory.
// Measured on the H200 (sm_90), 2026-12-02, 9e89cc6 (with other changes): 8,192-token prefill
// 17,100-17,327 -> 18,460-18,592 tok/s. The 128 x 128 tile: not measured.
constexpr int kBM = 128, kBN = 128, kBK = kTileStepBf16;
constexpr int kLd = kBK + 8; // padded row (144 bytes): ldmatrix rows fall in distinct banks
constexpr int kThreads = 256;
constexpr int kStageRows = kThreads / (kBK / 8); // rows one pass of 16-byte pieces covers
constexpr int kPieces = kBM / kStageRows; // 16-byte pieces of A per thread per stage
constexpr std::size_t kTileSharedBytes = std::size_t(2) * (kBM + kBN) * kLd * 2;
static_assert(kStageRows * kPieces == kBM, "the A copies cover the tile");
static_assert(2 * kBN == kThreads && kBK == 64, "two threads per weight row, a chunk each");

__device__ __forceinline__ std::uint32_t packBf16(float lo, float hi)
{
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&v);
}

__device__ __forceinline__ void ldmatrixX4(std::uint32_t r[4], const void* smem)
{
    const auto address = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

__device__ __forceinline__ void mmaBf16(
    float c[4], const std::uint32_t a[4], std::uint32_t b0, std::uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint4 packBf16x8(const float w[8])
{
    return make_uint4(
        packBf16(w[0], w[1]), packBf16(w[2], w[3]), packBf16(w[4], w[5]), packBf16(w[6], w[7]));
}

// One thread's share of a k-step's weight tile: one 32-value chunk of one weight row. The
// block types keep the chunk's raw bytes (Chunk<Type>, decoded 8 values at a time after the
// tensor-core work, so the loads' latency hides behind it and a chunk's scales are worked out
// once for its 32 values); the plain float types are converted when loaded.
template <TensorType Type, bool Chunked = kIsChunked<Type>> struct TileChunk {
    Chunk<Type> chunk;
    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t c)
    {
        chunk.load(row, c);
    }
    __device__ __forceinline__ uint4 piece(int p) const
    {
        float w[8];
        chunk.template piece<false>(p, w);
        return packBf16x8(w);
    }
};
template <TensorType Type> struct TileChunk<Type, false> {
    uint4 packed[4];
    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t c)
    {
#pragma unroll
        for (int p = 0; p < 4; ++p) {
            float w[8];
            dequant8<Type>(row, 4 * c + p, w);
            packed[p] = packBf16x8(w);
        }
    }
    __device__ __forceinline__ uint4 piece(int p) const
    {
        return packed[p];
    }
};

// x rows in bf16 for the gate/up tiles (read by every weight-row tile of an expert: half the
// bytes of f32, converted once).
__global__ void toBf16Kernel(const float* __restrict__ x, std::int64_t n4, uint2* __restrict__ out)
{
    chainedKernelEntry();
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        const float4 v = reinterpret_cast<const float4*>(x)[i];
        out[i] = make_uint2(packBf16(v.x, v.y), packBf16(v.z, v.w));
    }
}

template <TensorType Type, bool GateUp>
__global__ void __launch_bounds__(kThreads, 2) bf16TileKernel(GemmArgs a)
{
    chainedKernelEntry();
    extern __shared__ __align__(16) std::uint16_t tileShared[];
    auto sA = reinterpret_cast<std::uint16_t(*)[kBM][kLd]>(tileShared);
    auto sB = reinterpret_cast<std::uint16_t(*)[kBN][kLd]>(tileShared + 2 * kBM * kLd);
    int e, row0, rows;
    if (!locateTile(a, int(blockIdx.y), kBM, e, row0, rows))
        return;
    const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
    const int wm = warp / 4, wn = warp % 4; // 2 x 4 warps, each 64 token rows x 32 weight rows
    const std::int64_t nTile = blockIdx.x;
    const int piece = tid % (kBK / 8); // which 8 values of the k-step this thread moves

    // A sources, bf16 rows: gate/up the token rows gathered by pair, down the hidden rows
    // (already in sorted order), held as 32-bit offsets, -1 past the tile (pointers here
    // spilled; usesBf16Tiles keeps the shapes whose offsets fit). B: thread t decodes chunk
    // t % 2 of each k-step of weight row t / 2 (gate/up: rows under kBN / 2 are gate rows).
    const std::uint16_t* aBase = GateUp ? a.xb : static_cast<const std::uint16_t*>(a.hidden);
    int aOff[kPieces];
#pragma unroll
    for (int i = 0; i < kPieces; ++i) {
        const int m = tid / (kBK / 8) + kStageRows * i;
        aOff[i] = -1;
        if (m < rows) {
            const std::int64_t pos = row0 + m;
            aOff[i] = int((GateUp ? std::int64_t(a.sortedPair[pos] / a.k) : pos) * a.kDim);
        }
    }
    const int bRow = tid / 2, bHalf = tid % 2;
    const std::uint8_t* bSource = tileWeightRow<GateUp>(a, e, nTile, bRow, kBN);
    const int kTiles = int(a.kDim / kBK);

    // Zero-filled past the last k-step, so the loop below has no branch around its copies.
    auto copyA = [&](int kt, int buf) {
        const bool inRange = kt < kTiles;
#pragma unroll
        for (int i = 0; i < kPieces; ++i) {
            const int r = tid / (kBK / 8) + kStageRows * i;
            const bool valid = inRange && aOff[i] >= 0;
            const std::uint16_t* src = aBase + (valid ? aOff[i] + kt * kBK + piece * 8 : 0);
            copyAsync16(&sA[buf][r][piece * 8], src, valid);
        }
        commitAsync();
    };
    auto storeB = [&](int buf, const TileChunk<Type>& c) {
#pragma unroll
        for (int p = 0; p < 4; ++p)
            *reinterpret_cast<uint4*>(&sB[buf][bRow][bHalf * 32 + p * 8]) = c.piece(p);
    };

    float acc[4][4][4] = {};
    // Gate/up warps hold 16 gate rows and the same 16 up rows, so silu(gate) * up pairs up in
    // registers.
    const int nBase0 = GateUp ? wn * 16 : wn * 32;
    const int nBase1 = GateUp ? kBN / 2 + wn * 16 : wn * 32 + 16;
    TileChunk<Type> next;
    copyA(0, 0);
    next.load(bSource, bHalf);
    storeB(0, next);
    waitAsync<0>();
    __syncthreads();
    // Each step: the next k-step's A copies and raw B bytes are issued, this step's tensor-core
    // work runs while they arrive, then the B chunk is decoded into the other buffer (the last
    // step decodes its own chunk again, into a buffer nothing reads).
    for (int kt = 0; kt < kTiles; ++kt) {
        const int buf = kt & 1;
        copyA(kt + 1, buf ^ 1); // buf ^ 1 was last read before the barrier ending kt - 1
        next.load(bSource, 2 * min(kt + 1, kTiles - 1) + bHalf);
#pragma unroll
        for (int kk = 0; kk < kBK; kk += 16) {
            std::uint32_t af[4][4], bf[2][4];
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
                ldmatrixX4(af[mi], &sA[buf][wm * 64 + mi * 16 + (lane & 15)][kk + (lane >> 4) * 8]);
            const int bn = (lane & 7) + ((lane >> 4) << 3), bk = kk + ((lane >> 3) & 1) * 8;
            ldmatrixX4(bf[0], &sB[buf][nBase0 + bn][bk]);
            ldmatrixX4(bf[1], &sB[buf][nBase1 + bn][bk]);
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int ni = 0; ni < 4; ++ni)
                    mmaBf16(acc[mi][ni], af[mi], bf[ni >> 1][(ni & 1) * 2],
                        bf[ni >> 1][(ni & 1) * 2 + 1]);
        }
        storeB(buf ^ 1, next);
        waitAsync<0>();
        __syncthreads();
    }

    // C fragments: rows lane / 4 and + 8, columns 2 * (lane % 4) and + 1 of each 16 x 8 tile.
#pragma unroll
    for (int mi = 0; mi < 4; ++mi) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int m = wm * 64 + mi * 16 + (lane >> 2) + half * 8;
            if (m >= rows)
                continue;
            const std::int64_t pos = row0 + m;
            if constexpr (GateUp) {
#pragma unroll
                for (int ni = 0; ni < 2; ++ni) {
                    const std::int64_t col = nTile * (kBN / 2) + wn * 16 + ni * 8 + (lane & 3) * 2;
                    if (col >= a.nDim)
                        continue;
                    const float* g = &acc[mi][ni][half * 2];
                    const float* u = &acc[mi][ni + 2][half * 2];
                    *reinterpret_cast<std::uint32_t*>(
                        static_cast<std::uint16_t*>(a.out) + pos * a.nDim + col)
                        = packBf16(u[0] * silu(g[0]), u[1] * silu(g[1]));
                }
            } else {
#pragma unroll
                for (int ni = 0; ni < 4; ++ni) {
                    const std::int64_t col = nTile * kBN + wn * 32 + ni * 8 + (lane & 3) * 2;
                    if (col >= a.nDim)
                        continue;
                    *reinterpret_cast<float2*>(static_cast<float*>(a.out) + pos * a.nDim + col)
                        = make_float2(acc[mi][ni][half * 2], acc[mi][ni][half * 2 + 1]);
                }
            }
        }
    }
}

// --- f32 FMA tiles (the reference path) ---------------------------------------------------------

// Tile sizes not measured (the path serves Float32 and shapes the bf16 tiles cannot take).
constexpr int kFM = 64, kFN = 64, kFK = 32;

template <TensorType Type, bool GateUp>
__global__ void __launch_bounds__(kThreads) f32TileKernel(GemmArgs a)
{
    chainedKernelEntry();
    __shared__ __align__(16) float sA[kFK][kFM + 4]; // k-major: a thread reads 4 rows at once
    __shared__ __align__(16) float sB[kFK][kFN + 4];
    int e, row0, rows;
    if (!locateTile(a, int(blockIdx.y), kFM, e, row0, rows))
        return;
    const int tid = int(threadIdx.x);
    const int tm = tid >> 4, tn = tid & 15; // 4 token rows x 4 weight rows per thread
    const std::int64_t nTile = blockIdx.x;
    const float* aRow[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int m = (tid >> 3) + 32 * i;
        aRow[i] = nullptr;
        if (m < rows) {
            const std::int64_t pos = row0 + m;
            aRow[i] = GateUp ? a.x + std::int64_t(a.sortedPair[pos] / a.k) * a.kDim
                             : static_cast<const float*>(a.hidden) + pos * a.kDim;
        }
    }
    const std::uint8_t* bRow = tileWeightRow<GateUp>(a, e, nTile, tid >> 2, kFN);
    // Gate/up: weight rows 2 tn, 2 tn + 1 of the gate half and the same of the up half.
    int col[4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
        col[j] = GateUp ? (j / 2) * (kFN / 2) + tn * 2 + (j & 1) : tn * 4 + j;

    float acc[4][4] = {};
    for (std::int64_t k0 = 0; k0 < a.kDim; k0 += kFK) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int m = (tid >> 3) + 32 * i, q = tid & 7;
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (aRow[i])
                v = reinterpret_cast<const float4*>(aRow[i] + k0)[q];
            sA[q * 4 + 0][m] = v.x;
            sA[q * 4 + 1][m] = v.y;
            sA[q * 4 + 2][m] = v.z;
            sA[q * 4 + 3][m] = v.w;
        }
        {
            float w[8];
            const int g = tid & 3;
            dequant8<Type>(bRow, k0 / 8 + g, w);
#pragma unroll
            for (int c = 0; c < 8; ++c)
                sB[g * 8 + c][tid >> 2] = w[c];
        }
        __syncthreads();
#pragma unroll 8
        for (int kk = 0; kk < kFK; ++kk) {
            const float4 av = *reinterpret_cast<const float4*>(&sA[kk][tm * 4]);
            const float am[4] = { av.x, av.y, av.z, av.w };
            float bv[4];
#pragma unroll
            for (int j = 0; j < 4; ++j)
                bv[j] = sB[kk][col[j]];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    acc[i][j] = fmaf(am[i], bv[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int m = tm * 4 + i;
        if (m >= rows)
            continue;
        float* outRow = static_cast<float*>(a.out) + std::int64_t(row0 + m) * a.nDim;
        if constexpr (GateUp) {
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const std::int64_t f = nTile * (kFN / 2) + tn * 2 + j;
                if (f < a.nDim)
                    outRow[f] = acc[i][j + 2] * silu(acc[i][j]);
            }
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const std::int64_t c = nTile * kFN + tn * 4 + j;
                if (c < a.nDim)
                    outRow[c] = acc[i][j];
            }
        }
    }
}

template <bool GateUp> struct TileLaunch {
    const GemmArgs& args;
    bool bf16;
    std::int64_t pairs;
    cudaStream_t stream;
    template <TensorType Type> void operator()() const
    {
        const int tileRows = bf16 ? kBM : kFM, tileN = bf16 ? kBN : kFN;
        const int rowsPerTile = GateUp ? tileN / 2 : tileN;
        const dim3 grid(unsigned((args.nDim + rowsPerTile - 1) / rowsPerTile),
            unsigned(maxTiles(pairs, args.experts, tileRows)));
        if (bf16) {
            // A host call, not a stream operation (fine inside a graph capture too).
            if (cudaFuncSetAttribute(bf16TileKernel<Type, GateUp>,
                    cudaFuncAttributeMaxDynamicSharedMemorySize, int(kTileSharedBytes))
                != cudaSuccess)
                return;
            launchChained(bf16TileKernel<Type, GateUp>, dim3(grid), dim3(kThreads),
                kTileSharedBytes, stream, args);
        } else
            launchChained(f32TileKernel<Type, GateUp>, dim3(grid), dim3(kThreads), 0, stream, args);
    }
};

GemmArgs tileArgs(const GroupedLayout& layout, int experts, int k)
{
    GemmArgs a;
    a.offsets = layout.offsets;
    a.tileOffsets = layout.tileOffsets;
    a.sortedPair = layout.sortedPair;
    a.experts = experts;
    a.k = k;
    return a;
}

} // namespace

cudaError_t groupedGateUp(const float* x, std::int64_t tokens, int k, const DeviceExpertStack& gate,
    const DeviceExpertStack& up, const GroupedLayout& layout, bool bf16, cudaStream_t stream)
{
    if (gate.type != up.type || gate.cols % (bf16 ? kBK : kFK) != 0 || (bf16 && !layout.xb))
        return cudaErrorNotSupported;
    GemmArgs a = tileArgs(layout, int(gate.experts), k);
    a.x = x;
    if (bf16) {
        const std::int64_t n4 = tokens * gate.cols / 4;
        const int blocks = int(std::min<std::int64_t>((n4 + 255) / 256, 4096));
        launchChained(toBf16Kernel, dim3(blocks), dim3(256), 0, stream, x, n4,
            reinterpret_cast<uint2*>(layout.xb));
        a.xb = layout.xb;
    }
    a.w0 = gate;
    a.w1 = up;
    a.kDim = gate.cols;
    a.nDim = gate.rows;
    a.out = layout.hidden;
    if (!dispatchMatrixType(gate.type, TileLaunch<true> { a, bf16, tokens * k, stream }))
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

cudaError_t groupedDown(std::int64_t tokens, int k, const DeviceExpertStack& down,
    const GroupedLayout& layout, bool bf16, cudaStream_t stream)
{
    if (down.cols % (bf16 ? kBK : kFK) != 0)
        return cudaErrorNotSupported;
    GemmArgs a = tileArgs(layout, int(down.experts), k);
    a.hidden = layout.hidden;
    a.w0 = down;
    a.kDim = down.cols;
    a.nDim = down.rows;
    a.out = layout.down;
    if (!dispatchMatrixType(down.type, TileLaunch<false> { a, bf16, tokens * k, stream }))
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

} // namespace cw::kernels::cuda::moe
