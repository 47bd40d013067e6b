// Prefill (and mixed) attention on tensor cores. The keys and values the step's sequences see
// are first staged from the paged f32 cache as contiguous bf16 rows in the scratch (a pass
// over the cache, ~1% of the attention time at 8k tokens), so the flash kernel streams them
// with cp.async and ldmatrix like any bf16 attention: bf16 mma.sync m16n8k16, f32
// accumulators and online softmax, one warp per 16 query rows, key tiles past a block's last
// query position never visited and those past a warp's rows skipped.
#include "kernels/cuda/async_copy.cuh"
#include "kernels/cuda/attention/attention_paths.h"
#include "kernels/cuda/attention/kv_rows.cuh"
#include "kernels/cuda/chained_launch.cuh"

#include <atomic>
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace cw::kernels::cuda::attention_detail {
namespace {

// Tile sizes: not measured; chosen by reasoning.
constexpr int kBlockM = 128; // query rows per block
constexpr int kBlockN = 64; // keys per tile
constexpr int kThreads = 256; // 8 warps of 16 query rows
constexpr int kStageRows = 32;

using Bf16 = __nv_bfloat16;

int paddedHeadDim(int headDim)
{
    return headDim <= 64 ? 64 : headDim <= 128 ? 128 : 256;
}

__device__ __forceinline__ std::uint32_t packBf16(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<std::uint32_t*>(&v);
}

__device__ __forceinline__ uint4 packBf16(float4 a, float4 b)
{
    return make_uint4(
        packBf16(a.x, a.y), packBf16(a.z, a.w), packBf16(b.x, b.y), packBf16(b.z, b.w));
}

__device__ __forceinline__ void loadMatrices(std::uint32_t (&r)[4], unsigned address)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

__device__ __forceinline__ void loadMatricesTransposed(std::uint32_t (&r)[4], unsigned address)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// c += a (16x16, row) * b (16x8, col), bf16 in, f32 accumulate.
__device__ __forceinline__ void mma(
    float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

struct StageParams {
    KvRows cache;
    const std::int32_t* seqTokens;
    const std::int32_t* seqPos0;
    Bf16* keys; // [S][kvHeads][maxContext][paddedDim]
    Bf16* values;
    std::int32_t kvHeads, headDim, paddedDim, maxContext;
};

__global__ void __launch_bounds__(kThreads) stageKvKernel(StageParams p)
{
    chainedKernelEntry();
    const int seq = blockIdx.z, kvHead = blockIdx.y;
    const int tokens = p.seqTokens[seq];
    if (tokens < 1)
        return;
    const int context = p.seqPos0[seq] + tokens;
    const int pos0 = blockIdx.x * kStageRows;
    if (pos0 >= context)
        return;
    const int chunks = p.paddedDim / 8;
    for (int e = threadIdx.x; e < kStageRows * chunks; e += kThreads) {
        const int pos = pos0 + e / chunks, c = e % chunks;
        if (pos >= context)
            break;
        uint4 key = make_uint4(0, 0, 0, 0), value = key;
        if (c * 8 < p.headDim) {
            const float* src = p.cache.base + p.cache.keyOffset(seq, pos)
                + std::int64_t(kvHead) * p.headDim + c * 8;
            const float4* k4 = reinterpret_cast<const float4*>(src);
            const float4* v4 = reinterpret_cast<const float4*>(src + p.cache.valueOffset());
            key = packBf16(k4[0], k4[1]);
            value = packBf16(v4[0], v4[1]);
        }
        const std::int64_t dst
            = ((std::int64_t(seq) * p.kvHeads + kvHead) * p.maxContext + pos) * p.paddedDim + c * 8;
        *reinterpret_cast<uint4*>(p.keys + dst) = key;
        *reinterpret_cast<uint4*>(p.values + dst) = value;
    }
}

struct FlashParams {
    const float* q;
    const float* gate;
    std::int64_t gateStride;
    float* out;
    const Bf16* keys;
    const Bf16* values;
    const std::int32_t* seqRow0;
    const std::int32_t* seqTokens;
    const std::int32_t* seqPos0;
    std::int32_t heads, kvHeads, headDim, maxContext;
    float scaleLog2; // scale * log2(e): the softmax runs on exp2
};

template <int D> constexpr int flashSharedBytes()
{
    return (kBlockM + 2 * kBlockN) * (D + 8) * int(sizeof(Bf16));
}

// Grid: (query head, query tile from the last, sequence). D: the padded head dimension;
// BLOCKS: blocks per multiprocessor the registers are capped for.
template <int D, int BLOCKS>
__global__ void __launch_bounds__(kThreads, BLOCKS) flashPrefillKernel(FlashParams p)
{
    chainedKernelEntry();
    // Rows padded by 16 bytes: the 8 rows an ldmatrix reads fall in distinct bank groups.
    constexpr int kStride = D + 8;
    constexpr int kChunks = D / 8; // 16-byte pieces of a row
    constexpr int kTilesS = kBlockN / 8; // n8 tiles of the scores
    constexpr int kTilesO = D / 8; // n8 tiles of the output
    extern __shared__ __align__(16) unsigned char sharedBytes[];
    Bf16* qs = reinterpret_cast<Bf16*>(sharedBytes);
    Bf16* ks = qs + kBlockM * kStride;
    Bf16* vs = ks + kBlockN * kStride;

    const int head = blockIdx.x;
    const int tile = gridDim.y - 1 - blockIdx.y; // the longest tiles first
    const int seq = blockIdx.z;
    const int tokens = p.seqTokens[seq];
    const int local0 = tile * kBlockM;
    if (local0 >= tokens)
        return;
    const int rows = min(kBlockM, tokens - local0);
    const int qFirst = p.seqPos0[seq] + local0;
    const int qLast = qFirst + rows - 1;
    const int context = p.seqPos0[seq] + tokens;
    const int keyTiles = qLast / kBlockN + 1;
    const int kvHead = head / (p.heads / p.kvHeads);
    const std::int64_t row0 = std::int64_t(p.seqRow0[seq]) + local0;
    const std::int64_t plane = (std::int64_t(seq) * p.kvHeads + kvHead) * p.maxContext * D;
    const Bf16* kg = p.keys + plane;
    const Bf16* vg = p.values + plane;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    for (int e = tid; e < kBlockM * kChunks; e += kThreads) {
        const int r = e / kChunks, c = e % kChunks;
        uint4 w = make_uint4(0, 0, 0, 0);
        if (r < rows && c * 8 < p.headDim) {
            const float4* src = reinterpret_cast<const float4*>(
                p.q + ((row0 + r) * p.heads + head) * p.headDim + c * 8);
            w = packBf16(src[0], src[1]);
        }
        *reinterpret_cast<uint4*>(qs + r * kStride + c * 8) = w;
    }
    auto loadTile = [&](Bf16* dst, const Bf16* src, int first) {
        for (int e = tid; e < kBlockN * kChunks; e += kThreads) {
            const int r = e / kChunks, c = e % kChunks;
            const bool valid = first + r < context;
            copyAsync16(dst + r * kStride + c * 8,
                valid ? src + std::int64_t(first + r) * D + c * 8 : src, valid);
        }
    };
    loadTile(ks, kg, 0);
    commitAsync();

    const int wRow0 = warp * 16;
    const bool warpHasRows = wRow0 < rows;
    const int wqMin = qFirst + wRow0; // position of the warp's first row
    const int wqMax = min(wqMin + 15, qLast);
    const int g = lane >> 2, tig = lane & 3;
    const unsigned qsAddress = unsigned(__cvta_generic_to_shared(qs));
    const unsigned ksAddress = unsigned(__cvta_generic_to_shared(ks));
    const unsigned vsAddress = unsigned(__cvta_generic_to_shared(vs));
    // Per-lane parts of the ldmatrix addresses (in elements).
    const int aOffset = (wRow0 + (lane & 15)) * kStride + (lane >> 4) * 8;
    const int bOffset = ((lane & 7) + ((lane >> 4) << 3)) * kStride + ((lane >> 3) & 1) * 8;
    const int vOffset = ((lane & 7) + ((lane >> 3) & 1) * 8) * kStride + (lane >> 4) * 8;

    float o[kTilesO][4];
#pragma unroll
    for (int n = 0; n < kTilesO; ++n)
        o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f; // rows g and g + 8

    for (int t = 0; t < keyTiles; ++t) {
        const int first = t * kBlockN;
        loadTile(vs, vg, first);
        commitAsync();
        waitAsync<1>(); // this tile's keys
        __syncthreads();
        const bool active = warpHasRows && first <= wqMax;
        std::uint32_t pa[kBlockN / 16][4];
        if (active) {
            float s[kTilesS][4];
#pragma unroll
            for (int n = 0; n < kTilesS; ++n)
                s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
                std::uint32_t a[4];
                loadMatrices(a, qsAddress + unsigned(aOffset + kk * 16) * 2);
#pragma unroll
                for (int j = 0; j < kBlockN / 16; ++j) {
                    std::uint32_t b[4];
                    loadMatrices(b, ksAddress + unsigned(bOffset + j * 16 * kStride + kk * 16) * 2);
                    mma(s[2 * j], a, b[0], b[1]);
                    mma(s[2 * j + 1], a, b[2], b[3]);
                }
            }
            if (first + kBlockN - 1 > wqMin) { // a key past some row's position
#pragma unroll
                for (int n = 0; n < kTilesS; ++n)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int key = first + n * 8 + tig * 2 + (e & 1);
                        if (key > wqMin + g + (e >> 1) * 8)
                            s[n][e] = -INFINITY;
                    }
            }
            // Every row sees key 0 in tile 0, so the maxima are finite from there on.
            float x0 = m0, x1 = m1;
#pragma unroll
            for (int n = 0; n < kTilesS; ++n) {
                x0 = fmaxf(x0, fmaxf(s[n][0], s[n][1]));
                x1 = fmaxf(x1, fmaxf(s[n][2], s[n][3]));
            }
#pragma unroll
            for (int mask = 1; mask <= 2; mask <<= 1) {
                x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, mask));
                x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, mask));
            }
            const float alpha0 = exp2f((m0 - x0) * p.scaleLog2);
            const float alpha1 = exp2f((m1 - x1) * p.scaleLog2);
            m0 = x0;
            m1 = x1;
            const float base0 = x0 * p.scaleLog2, base1 = x1 * p.scaleLog2;
            float sum0 = 0.0f, sum1 = 0.0f;
#pragma unroll
            for (int n = 0; n < kTilesS; ++n) {
                s[n][0] = exp2f(s[n][0] * p.scaleLog2 - base0);
                s[n][1] = exp2f(s[n][1] * p.scaleLog2 - base0);
                s[n][2] = exp2f(s[n][2] * p.scaleLog2 - base1);
                s[n][3] = exp2f(s[n][3] * p.scaleLog2 - base1);
                sum0 += s[n][0] + s[n][1];
                sum1 += s[n][2] + s[n][3];
            }
            l0 = l0 * alpha0 + sum0;
            l1 = l1 * alpha1 + sum1;
#pragma unroll
            for (int n = 0; n < kTilesO; ++n) {
                o[n][0] *= alpha0;
                o[n][1] *= alpha0;
                o[n][2] *= alpha1;
                o[n][3] *= alpha1;
            }
            // The score accumulators of two n8 tiles are the A fragment of one k16 step.
#pragma unroll
            for (int kk = 0; kk < kBlockN / 16; ++kk) {
                pa[kk][0] = packBf16(s[2 * kk][0], s[2 * kk][1]);
                pa[kk][1] = packBf16(s[2 * kk][2], s[2 * kk][3]);
                pa[kk][2] = packBf16(s[2 * kk + 1][0], s[2 * kk + 1][1]);
                pa[kk][3] = packBf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);
            }
        }
        __syncthreads(); // every warp is done with the keys
        if (t + 1 < keyTiles) {
            loadTile(ks, kg, first + kBlockN);
            commitAsync();
            waitAsync<1>(); // this tile's values
        } else {
            waitAsync<0>();
        }
        __syncthreads();
        if (active) {
#pragma unroll
            for (int kk = 0; kk < kBlockN / 16; ++kk)
#pragma unroll
                for (int j = 0; j < D / 16; ++j) {
                    std::uint32_t b[4];
                    loadMatricesTransposed(
                        b, vsAddress + unsigned(vOffset + kk * 16 * kStride + j * 16) * 2);
                    mma(o[2 * j], pa[kk], b[0], b[1]);
                    mma(o[2 * j + 1], pa[kk], b[2], b[3]);
                }
        }
        __syncthreads(); // every warp is done with the values
    }

#pragma unroll
    for (int mask = 1; mask <= 2; mask <<= 1) {
        l0 += __shfl_xor_sync(0xffffffffu, l0, mask);
        l1 += __shfl_xor_sync(0xffffffffu, l1, mask);
    }
    if (!warpHasRows)
        return;
    const int hd = p.headDim;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int r = wRow0 + g + half * 8;
        if (r >= rows)
            continue;
        const std::int64_t t = row0 + r;
        const float inv = 1.0f / (half ? l1 : l0);
        float* dst = p.out + (t * p.heads + head) * hd;
        const float* gate
            = p.gate ? p.gate + t * p.gateStride + std::int64_t(head) * 2 * hd : nullptr;
#pragma unroll
        for (int n = 0; n < kTilesO; ++n) {
            const int d = n * 8 + tig * 2;
            if (d >= hd)
                continue;
            float2 v = make_float2(o[n][half * 2] * inv, o[n][half * 2 + 1] * inv);
            if (gate) {
                v.x *= 1.0f / (1.0f + expf(-gate[d]));
                v.y *= 1.0f / (1.0f + expf(-gate[d + 1]));
            }
            *reinterpret_cast<float2*>(dst + d) = v;
        }
    }
}

std::atomic<int> g_blocksPerSm { 0 };

template <int D, int BLOCKS>
cudaError_t launchFlashWith(const FlashParams& p, dim3 grid, cudaStream_t stream)
{
    constexpr int kBytes = flashSharedBytes<D>();
    const cudaError_t set = cudaFuncSetAttribute(
        flashPrefillKernel<D, BLOCKS>, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes);
    if (set != cudaSuccess)
        return set;
    launchChained(flashPrefillKernel<D, BLOCKS>, dim3(grid), dim3(kThreads), kBytes, stream, p);
    return cudaGetLastError();
}

// Head dims up to 128 fit two blocks per multiprocessor (registers capped at 128), unless
// usePrefillBlocksPerSm(1) asks for one with more registers. A fit, not tuned: no recorded
// measurement compares the two.
template <int D> cudaError_t launchFlash(const FlashParams& p, dim3 grid, cudaStream_t stream)
{
    if constexpr (D <= 128) {
        if (g_blocksPerSm.load(std::memory_order_relaxed) != 1)
            return launchFlashWith<D, 2>(p, grid, stream);
    }
    return launchFlashWith<D, 1>(p, grid, stream);
}

} // namespace

void usePrefillBlocksPerSm(int blocks)
{
    g_blocksPerSm.store(blocks, std::memory_order_relaxed);
}

std::size_t prefillScratchBytes(const AttentionShape& shape, const StepLayout& layout)
{
    return 2 * std::size_t(layout.sequences) * std::size_t(shape.kvHeads)
        * std::size_t(layout.maxContext) * std::size_t(paddedHeadDim(shape.headDim)) * sizeof(Bf16);
}

cudaError_t launchPrefillAttention(const float* q, const float* gate, std::int64_t gateStride,
    const AttentionShape& shape, float scale, const StepLayout& layout, PagedKv kv, int layer,
    float* out, DeviceScratch scratch, cudaStream_t stream)
{
    if (scratch.bytes < prefillScratchBytes(shape, layout) || shape.headDim % 16 != 0
        || (reinterpret_cast<std::uintptr_t>(scratch.data) & 15) != 0)
        return cudaErrorInvalidValue;
    const int padded = paddedHeadDim(shape.headDim);
    const std::size_t plane = std::size_t(layout.sequences) * shape.kvHeads
        * std::size_t(layout.maxContext) * std::size_t(padded);
    Bf16* keys = reinterpret_cast<Bf16*>(scratch.data);
    Bf16* values = keys + plane;

    StageParams stage;
    stage.cache = makeKvRows(kv, layer, layout);
    stage.seqTokens = layout.seqTokens;
    stage.seqPos0 = layout.seqPos0;
    stage.keys = keys;
    stage.values = values;
    stage.kvHeads = shape.kvHeads;
    stage.headDim = shape.headDim;
    stage.paddedDim = padded;
    stage.maxContext = layout.maxContext;
    const dim3 stageGrid(unsigned((layout.maxContext + kStageRows - 1) / kStageRows),
        unsigned(shape.kvHeads), unsigned(layout.sequences));
    launchChained(stageKvKernel, dim3(stageGrid), dim3(kThreads), 0, stream, stage);
    const cudaError_t staged = cudaGetLastError();
    if (staged != cudaSuccess)
        return staged;

    FlashParams p;
    p.q = q;
    p.gate = gate;
    p.gateStride = gateStride;
    p.out = out;
    p.keys = keys;
    p.values = values;
    p.seqRow0 = layout.seqRow0;
    p.seqTokens = layout.seqTokens;
    p.seqPos0 = layout.seqPos0;
    p.heads = shape.heads;
    p.kvHeads = shape.kvHeads;
    p.headDim = shape.headDim;
    p.maxContext = layout.maxContext;
    p.scaleLog2 = scale * 1.4426950408889634f;
    const dim3 grid(unsigned(shape.heads),
        unsigned((layout.maxTokensPerSequence + kBlockM - 1) / kBlockM),
        unsigned(layout.sequences));
    switch (padded) {
    case 64:
        return launchFlash<64>(p, grid, stream);
    case 128:
        return launchFlash<128>(p, grid, stream);
    default:
        return launchFlash<256>(p, grid, stream);
    }
}

} // namespace cw::kernels::cuda::attention_detail
