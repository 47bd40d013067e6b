// Prefill (and mixed) attention in f32 FMAs, for AttentionShape::exactPrefill: the reference
// mode the model compares with the CPU at ~1e-6, where the bf16 tensor-core kernel is ~2e-3
// off. Keys and values are read straight from the paged f32 cache (cp.async into shared
// memory), so it needs no scratch.
//
// A block takes 64 rows of one KV group of one sequence, a row being a (token, query head of
// the group) pair with the heads fastest: every K/V tile it stages serves all the heads of
// the group, and a one-token sequence of a mixed step fills `group` rows instead of one. It
// walks 64-key tiles up to its last row's position (later tiles are never visited). 256
// threads: a half-warp owns a quad of rows, each of its lanes 4 keys of the scores and
// D / 16 dims of the output, so a row's online softmax is a 16-lane shuffle and the thread
// that rescales an output row already holds its factor. Probabilities go through shared
// memory, transposed, so that one 16-byte load gives a key's weights for the four rows.
// Keys and values take turns in one buffer: head dim 256 then fits the 163 KB of sm_80 (not
// the 99 KB of sm_86/89, where head dims above 128 fail to launch).
#include "kernels/cuda/async_copy.cuh"
#include "kernels/cuda/attention/attention_paths.h"
#include "kernels/cuda/attention/kv_rows.cuh"
#include "kernels/cuda/chained_launch.cuh"

#include <cstdint>
#include <cuda_runtime.h>

namespace cw::kernels::cuda::attention_detail {
namespace {

// Tile sizes: not measured; chosen by reasoning.
constexpr int kRows = 64; // (token, head) rows per block
constexpr int kKeys = 64; // keys per tile
constexpr int kThreads = 256; // 16 row quads x 16 lanes
constexpr int kProbStride = kRows + 4; // floats per key of the transposed probabilities
constexpr unsigned kFull = 0xffffffffu;

// Head dims are padded with zeros to a multiple of 64: a lane's share of a row is then whole
// 16-byte vectors.
int paddedHeadDim(int headDim)
{
    return (headDim + 63) / 64 * 64;
}

struct ExactParams {
    const float* q;
    const float* gate;
    std::int64_t gateStride;
    float* out;
    KvRows cache;
    const std::int32_t* seqRow0;
    const std::int32_t* seqTokens;
    const std::int32_t* seqPos0;
    std::int32_t heads, headDim, group;
    float scale;
};

// Rows padded by 16 bytes (an odd number of 16-byte vectors): the 8 lanes of a 16-byte shared
// access phase that read 8 consecutive rows hit distinct banks.
template <int D> __host__ __device__ constexpr int rowStride()
{
    return D + 4;
}

template <int D> constexpr int exactSharedBytes()
{
    return ((kRows + kKeys) * rowStride<D>() + kKeys * kProbStride) * int(sizeof(float));
}

__device__ __forceinline__ void fma4(float4& acc, float w, const float4& v)
{
    acc.x = fmaf(w, v.x, acc.x);
    acc.y = fmaf(w, v.y, acc.y);
    acc.z = fmaf(w, v.z, acc.z);
    acc.w = fmaf(w, v.w, acc.w);
}

__device__ __forceinline__ float dotAdd(const float4& a, const float4& b, float acc)
{
    acc = fmaf(a.x, b.x, acc);
    acc = fmaf(a.y, b.y, acc);
    acc = fmaf(a.z, b.z, acc);
    return fmaf(a.w, b.w, acc);
}

// Grid: (KV head, row tile from the last, sequence). D: the padded head dimension; BLOCKS:
// blocks per multiprocessor the registers are capped for.
template <int D, int BLOCKS>
__global__ void __launch_bounds__(kThreads, BLOCKS) exactPrefillKernel(ExactParams p)
{
    chainedKernelEntry();
    constexpr int kStride = rowStride<D>();
    constexpr int kChunks = D / 4; // 16-byte vectors of a row
    constexpr int kLaneChunks = D / 64; // output vectors of a lane per row
    extern __shared__ float4 sharedVectors[];
    float* qs = reinterpret_cast<float*>(sharedVectors); // [kRows][kStride]
    float* kvs = qs + kRows * kStride; // [kKeys][kStride], keys then values
    float* ps = kvs + kKeys * kStride; // [kKeys][kProbStride]

    const int kvHead = blockIdx.x;
    const int tile = gridDim.y - 1 - blockIdx.y; // the longest tiles first
    const int seq = blockIdx.z;
    const int tokens = p.seqTokens[seq];
    const int rowCount = tokens * p.group;
    const int m0 = tile * kRows;
    if (tokens < 1 || m0 >= rowCount)
        return;
    const int pos0 = p.seqPos0[seq];
    const std::int64_t row0 = p.seqRow0[seq];
    const int lastPos = pos0 + (min(m0 + kRows, rowCount) - 1) / p.group;
    const int keyTiles = lastPos / kKeys + 1;
    const int tid = threadIdx.x, lane = tid & 31;
    const int tx = lane & 15; // keys tx + 16 j of a tile, output vectors tx + 16 c of a row
    const int quad = (tid >> 5) * 2 + (lane >> 4); // rows 4 quad .. 4 quad + 3

    for (int e = tid; e < kRows * kChunks; e += kThreads) {
        const int r = e / kChunks, c = e % kChunks;
        const int m = m0 + r;
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (m < rowCount && c * 4 < p.headDim) {
            const std::int64_t token = row0 + m / p.group;
            const int head = kvHead * p.group + m % p.group;
            v = reinterpret_cast<const float4*>(p.q + (token * p.heads + head) * p.headDim)[c];
        }
        *reinterpret_cast<float4*>(qs + r * kStride + c * 4) = v;
    }
    // Rows past the sequence (zero queries, never stored) take the block's first position:
    // every row then sees key 0 in tile 0 and its running maximum is finite from there on.
    int rowPos[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int m = m0 + quad * 4 + i;
        rowPos[i] = pos0 + (m < rowCount ? m : m0) / p.group;
    }

    const float* headBase = p.cache.base + std::int64_t(kvHead) * p.headDim;
    // Keys (plane 0) or values (plane valueOffset) of tile positions [first, first + kKeys)
    // into kvs; positions past lastPos (maybe without a block) and padding dims are zeros.
    auto stage = [&](int first, std::int64_t plane) {
        for (int e = tid; e < kKeys * kChunks; e += kThreads) {
            const int r = e / kChunks, c = e % kChunks;
            const int key = first + r;
            const bool valid = key <= lastPos && c * 4 < p.headDim;
            const float* src
                = valid ? headBase + p.cache.keyOffset(seq, key) + plane + c * 4 : p.cache.base;
            copyAsync16(kvs + r * kStride + c * 4, src, valid);
        }
        commitAsync();
        waitAsync<0>();
        __syncthreads();
    };

    float4 o[4][kLaneChunks];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int c = 0; c < kLaneChunks; ++c)
            o[i][c] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    // Running maximum of each row's scaled scores, and the lane's part of the sum of their
    // exponentials (the lanes of a row rescale theirs by the same factors).
    float rowMax[4], rowSum[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        rowMax[i] = -INFINITY;
        rowSum[i] = 0.0f;
    }

    for (int t = 0; t < keyTiles; ++t) {
        const int first = t * kKeys;
        stage(first, 0);
        float s[4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j)
                s[i][j] = 0.0f;
#pragma unroll 4
        for (int d = 0; d < D; d += 4) {
            float4 qv[4], kv[4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
                qv[i] = *reinterpret_cast<const float4*>(qs + (quad * 4 + i) * kStride + d);
#pragma unroll
            for (int j = 0; j < 4; ++j)
                kv[j] = *reinterpret_cast<const float4*>(kvs + (tx + 16 * j) * kStride + d);
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    s[i][j] = dotAdd(qv[i], kv[j], s[i][j]);
        }
        // Causal mask (which also covers the zero keys past lastPos), then the online softmax:
        // the same scaled scores and exponentials as the CPU's attentionHead.
        float alpha[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            float tileMax = -INFINITY;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int key = first + tx + 16 * j;
                s[i][j] = key <= rowPos[i] ? s[i][j] * p.scale : -INFINITY;
                tileMax = fmaxf(tileMax, s[i][j]);
            }
#pragma unroll
            for (int mask = 1; mask < 16; mask <<= 1)
                tileMax = fmaxf(tileMax, __shfl_xor_sync(kFull, tileMax, mask));
            const float newMax = fmaxf(rowMax[i], tileMax);
            alpha[i] = expf(rowMax[i] - newMax); // 0 on the first tile
            rowMax[i] = newMax;
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                s[i][j] = expf(s[i][j] - newMax);
                sum += s[i][j];
            }
            rowSum[i] = rowSum[i] * alpha[i] + sum;
        }
#pragma unroll
        for (int j = 0; j < 4; ++j)
            *reinterpret_cast<float4*>(ps + (tx + 16 * j) * kProbStride + quad * 4)
                = make_float4(s[0][j], s[1][j], s[2][j], s[3][j]);
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int c = 0; c < kLaneChunks; ++c) {
                o[i][c].x *= alpha[i];
                o[i][c].y *= alpha[i];
                o[i][c].z *= alpha[i];
                o[i][c].w *= alpha[i];
            }
        __syncthreads(); // every thread is done with the keys; the probabilities are written
        stage(first, p.cache.valueOffset());
        // Keys past lastPos weigh 0 for every row: not visited.
        const int keys = min(kKeys, lastPos + 1 - first);
#pragma unroll 4
        for (int j = 0; j < keys; ++j) {
            const float4 w = *reinterpret_cast<const float4*>(ps + j * kProbStride + quad * 4);
#pragma unroll
            for (int c = 0; c < kLaneChunks; ++c) {
                const float4 v
                    = *reinterpret_cast<const float4*>(kvs + j * kStride + (tx + 16 * c) * 4);
                fma4(o[0][c], w.x, v);
                fma4(o[1][c], w.y, v);
                fma4(o[2][c], w.z, v);
                fma4(o[3][c], w.w, v);
            }
        }
        __syncthreads(); // every thread is done with the values and probabilities
    }

#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int mask = 1; mask < 16; mask <<= 1)
            rowSum[i] += __shfl_xor_sync(kFull, rowSum[i], mask);
    const int hd = p.headDim;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int m = m0 + quad * 4 + i;
        if (m >= rowCount)
            continue;
        const std::int64_t token = row0 + m / p.group;
        const int head = kvHead * p.group + m % p.group;
        const float inv = 1.0f / rowSum[i];
        float* dst = p.out + (token * p.heads + head) * hd;
        const float* gate
            = p.gate ? p.gate + token * p.gateStride + std::int64_t(head) * 2 * hd : nullptr;
#pragma unroll
        for (int c = 0; c < kLaneChunks; ++c) {
            const int d = (tx + 16 * c) * 4;
            if (d >= hd)
                continue;
            float4 v
                = make_float4(o[i][c].x * inv, o[i][c].y * inv, o[i][c].z * inv, o[i][c].w * inv);
            if (gate) { // as the tensor-core kernel applies it
                v.x *= 1.0f / (1.0f + expf(-gate[d]));
                v.y *= 1.0f / (1.0f + expf(-gate[d + 1]));
                v.z *= 1.0f / (1.0f + expf(-gate[d + 2]));
                v.w *= 1.0f / (1.0f + expf(-gate[d + 3]));
            }
            *reinterpret_cast<float4*>(dst + d) = v;
        }
    }
}

template <int D> cudaError_t launchExact(const ExactParams& p, dim3 grid, cudaStream_t stream)
{
    // Up to head dim 128 two blocks fit a multiprocessor's shared memory; registers are
    // capped to match. A limit of the kernel, not tuned.
    constexpr int kBlocks = D <= 128 ? 2 : 1;
    constexpr int kBytes = exactSharedBytes<D>();
    const cudaError_t set = cudaFuncSetAttribute(
        exactPrefillKernel<D, kBlocks>, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes);
    if (set != cudaSuccess)
        return set;
    launchChained(exactPrefillKernel<D, kBlocks>, dim3(grid), dim3(kThreads), kBytes, stream, p);
    return cudaGetLastError();
}

} // namespace

cudaError_t launchExactPrefillAttention(const float* q, const float* gate, std::int64_t gateStride,
    const AttentionShape& shape, float scale, const StepLayout& layout, PagedKv kv, int layer,
    float* out, cudaStream_t stream)
{
    if (shape.headDim % 16 != 0 || shape.headDim > 256)
        return cudaErrorInvalidValue;
    ExactParams p;
    p.q = q;
    p.gate = gate;
    p.gateStride = gateStride;
    p.out = out;
    p.cache = makeKvRows(kv, layer, layout);
    p.seqRow0 = layout.seqRow0;
    p.seqTokens = layout.seqTokens;
    p.seqPos0 = layout.seqPos0;
    p.heads = shape.heads;
    p.headDim = shape.headDim;
    p.group = shape.heads / shape.kvHeads;
    p.scale = scale;
    const std::int64_t tiles
        = (std::int64_t(layout.maxTokensPerSequence) * p.group + kRows - 1) / kRows;
    if (tiles > 65535 || layout.sequences > 65535)
        return cudaErrorInvalidValue;
    const dim3 grid(unsigned(shape.kvHeads), unsigned(tiles), unsigned(layout.sequences));
    switch (paddedHeadDim(shape.headDim)) {
    case 64:
        return launchExact<64>(p, grid, stream);
    case 128:
        return launchExact<128>(p, grid, stream);
    case 192:
        return launchExact<192>(p, grid, stream);
    default:
        return launchExact<256>(p, grid, stream);
    }
}

} // namespace cw::kernels::cuda::attention_detail
