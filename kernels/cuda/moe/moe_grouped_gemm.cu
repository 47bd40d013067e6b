// The grouped expert products of larger batches: one launch per matrix for all experts. The
// grid runs over (weight-row tile, token tile) where token tiles are counted over all experts
// from the capacity tokens * k; a block finds its expert from the device's tile offsets and
// exits past the last tile, so nothing here needs the counts on the host.
//
// Weight tiles are decoded with dequant8 straight from the GGUF blocks into shared memory
// (never a dequantized copy of the experts in device memory). BFloat16: bf16 operands on the
// tensor cores (mma.sync m16n8k16, f32 accumulation). Float32: plain f32 FMA, the reference.
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/moe/moe_expert_rows.cuh"
#include "kernels/cuda/moe/moe_paths.h"
#include "kernels/cuda/quant/dequant.cuh"

#include <cuda_bf16.h>

namespace cw::kernels::cuda::moe {
namespace {

struct GemmArgs {
    const float* x = nullptr; // gate/up: the token rows [tokens][hidden]
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

// Weight row n of this block's tile: gate/up blocks hold half gate rows, half up rows.
template <bool GateUp>
__device__ __forceinline__ const std::uint8_t* tileWeightRow(
    const GemmArgs& a, int e, std::int64_t nTile, int n, int tileN)
{
    std::int64_t r = nTile * (GateUp ? tileN / 2 : tileN) + (GateUp ? n % (tileN / 2) : n);
    if (r >= a.nDim)
        return nullptr;
    return expertRow(GateUp && n >= tileN / 2 ? a.w1 : a.w0, e, r);
}

// --- bf16 tensor-core tiles ------------------------------------------------------------------

constexpr int kBM = 128, kBN = 128, kBK = 32;
constexpr int kLd = kBK + 8; // padded row (80 bytes): ldmatrix rows fall in distinct banks
constexpr int kThreads = 256;

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

// One k-step of staged operands in registers (loaded while the previous step computes).
struct Bf16Stage {
    uint4 a[2]; // four f32 x values packed to bf16 per .x/.y (gate/up) or 8 bf16 (down)
    uint4 b[2];
};

template <TensorType Type, bool GateUp>
__global__ void __launch_bounds__(kThreads, 2) bf16TileKernel(GemmArgs a)
{
    chainedKernelEntry();
    __shared__ __align__(16) std::uint16_t sA[2][kBM][kLd];
    __shared__ __align__(16) std::uint16_t sB[2][kBN][kLd];
    int e, row0, rows;
    if (!locateTile(a, int(blockIdx.y), kBM, e, row0, rows))
        return;
    const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
    const int wm = warp / 4, wn = warp % 4; // 2 x 4 warps, each 64 token rows x 32 weight rows
    const std::int64_t nTile = blockIdx.x;

    // A sources: gate/up reads 4 rows of 8 float4 (x rows gathered by token); down reads 2
    // rows of 4 uint4 (bf16 hidden rows, already in sorted order).
    const void* aRow[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int m = GateUp ? (tid >> 3) + 32 * i : (tid >> 2) + 64 * (i & 1);
        aRow[i] = nullptr;
        if (m < rows && (GateUp || i < 2)) {
            const std::int64_t pos = row0 + m;
            if constexpr (GateUp)
                aRow[i] = a.x + std::int64_t(a.sortedPair[pos] / a.k) * a.kDim;
            else
                aRow[i] = static_cast<const std::uint16_t*>(a.hidden) + pos * a.kDim;
        }
    }
    const std::uint8_t* bRow[2];
#pragma unroll
    for (int i = 0; i < 2; ++i)
        bRow[i] = tileWeightRow<GateUp>(a, e, nTile, (tid >> 2) + 64 * i, kBN);

    auto load = [&](int kt, Bf16Stage& s) {
        if constexpr (GateUp) {
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                if (aRow[i])
                    v = reinterpret_cast<const float4*>(
                        static_cast<const float*>(aRow[i]) + kt * kBK)[tid & 7];
                const std::uint32_t lo = packBf16(v.x, v.y), hi = packBf16(v.z, v.w);
                if (i % 2 == 0) {
                    s.a[i / 2].x = lo;
                    s.a[i / 2].y = hi;
                } else {
                    s.a[i / 2].z = lo;
                    s.a[i / 2].w = hi;
                }
            }
        } else {
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                s.a[i] = make_uint4(0, 0, 0, 0);
                if (aRow[i])
                    s.a[i] = reinterpret_cast<const uint4*>(
                        static_cast<const std::uint16_t*>(aRow[i]) + kt * kBK)[tid & 3];
            }
        }
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            float w[8] = {};
            if (bRow[i])
                dequant8<Type>(bRow[i], std::int64_t(kt) * (kBK / 8) + (tid & 3), w);
            s.b[i] = make_uint4(packBf16(w[0], w[1]), packBf16(w[2], w[3]), packBf16(w[4], w[5]),
                packBf16(w[6], w[7]));
        }
    };
    auto store = [&](int buf, const Bf16Stage& s) {
        if constexpr (GateUp) {
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int m = (tid >> 3) + 32 * i;
                const uint2 v = i % 2 == 0 ? make_uint2(s.a[i / 2].x, s.a[i / 2].y)
                                           : make_uint2(s.a[i / 2].z, s.a[i / 2].w);
                *reinterpret_cast<uint2*>(&sA[buf][m][(tid & 7) * 4]) = v;
            }
        } else {
#pragma unroll
            for (int i = 0; i < 2; ++i)
                *reinterpret_cast<uint4*>(&sA[buf][(tid >> 2) + 64 * i][(tid & 3) * 8]) = s.a[i];
        }
#pragma unroll
        for (int i = 0; i < 2; ++i)
            *reinterpret_cast<uint4*>(&sB[buf][(tid >> 2) + 64 * i][(tid & 3) * 8]) = s.b[i];
    };

    float acc[4][4][4] = {};
    // Gate/up warps hold 16 gate rows and the same 16 up rows, so silu(gate) * up pairs up in
    // registers.
    const int nBase0 = GateUp ? wn * 16 : wn * 32;
    const int nBase1 = GateUp ? kBN / 2 + wn * 16 : wn * 32 + 16;
    const int kTiles = int(a.kDim / kBK);
    Bf16Stage stage;
    load(0, stage);
    store(0, stage);
    __syncthreads();
    for (int kt = 0; kt < kTiles; ++kt) {
        const int buf = kt & 1;
        if (kt + 1 < kTiles)
            load(kt + 1, stage);
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
        if (kt + 1 < kTiles)
            store(buf ^ 1, stage);
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
            float w[8] = {};
            const int g = tid & 3;
            if (bRow)
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
        if (bf16)
            launchChained(
                bf16TileKernel<Type, GateUp>, dim3(grid), dim3(kThreads), 0, stream, args);
        else
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
    if (gate.type != up.type || gate.cols % kBK != 0)
        return cudaErrorNotSupported;
    GemmArgs a = tileArgs(layout, int(gate.experts), k);
    a.x = x;
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
    if (down.cols % kBK != 0)
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
