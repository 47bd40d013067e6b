// Flash-decoding over the paged f32 cache: one block per (sequence, KV head, key split), the
// query heads of the KV group sharing every K/V row the block reads, then a kernel that
// merges the splits' partial softmax states (log-sum-exp) and applies the output gate.
//
// Inside a block, each warp takes groups of keys in turn. A lane holds a slice of the head
// dimension (16-byte loads, coalesced over the warp) of the group queries and of the output
// accumulators; a group's dot products are summed over the lanes with a transposing
// butterfly (a lane ends with whole scores instead of every lane with every score), and the
// probabilities go through a small per-warp shared table. f32 throughout: these results are
// compared with the CPU at 1e-5.
#include "kernels/cuda/async_copy.cuh"
#include "kernels/cuda/attention/attention_paths.h"
#include "kernels/cuda/attention/kv_rows.cuh"
#include "kernels/cuda/chained_launch.cuh"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cuda_runtime.h>

namespace cw::kernels::cuda::attention_detail {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
// The split bounds: not measured; chosen by reasoning.
constexpr int kMaxSplits = 128;
constexpr int kMinSplitKeys = 64; // at full capacity; fewer make the merge dearer than the work
constexpr unsigned kFull = 0xffffffffu;
constexpr int kMaxDevices = 64;
constexpr int kStages = 5; // groups of rows in flight per warp in the staged kernel (not measured)

std::atomic<bool> g_staged { true };

struct DecodeParams {
    const float* q;
    KvRows cache;
    const std::int32_t* seqRow0;
    const std::int32_t* seqTokens;
    const std::int32_t* rowPos;
    float* partO; // [S][nH][splits][hd], relative to partM
    float* partM; // [S][nH][splits] running max of the scaled scores
    float* partL; // [S][nH][splits] sum of exp(score - max)
    std::int32_t heads, kvHeads, headDim, group, headChunks, splits;
    float scale;
};

__device__ __forceinline__ float dot4(float4 a, float4 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}

// Sums d[] over the LANES lanes of a lane group (xor masks MASK, MASK/2, ..., 1). While more
// than one value is left a level halves them: each lane keeps one half and sends the other,
// so after log2(NV) levels a lane holds max(1, NV / LANES) whole sums (see reducedBase).
template <int COUNT, int MASK, int NV>
__device__ __forceinline__ void transposeReduce(float (&d)[NV], int lane)
{
    if constexpr (MASK > 0) {
        if constexpr (COUNT > 1) {
            constexpr int kHalf = COUNT / 2;
            const bool upper = (lane & MASK) != 0;
#pragma unroll
            for (int i = 0; i < kHalf; ++i) {
                const float send = upper ? d[i] : d[i + kHalf];
                const float keep = upper ? d[i + kHalf] : d[i];
                d[i] = keep + __shfl_xor_sync(kFull, send, MASK);
            }
            transposeReduce<kHalf, MASK / 2, NV>(d, lane);
        } else {
            d[0] += __shfl_xor_sync(kFull, d[0], MASK);
            transposeReduce<1, MASK / 2, NV>(d, lane);
        }
    }
}

// Index in the original d[] of the lane's d[0] after transposeReduce (d[i] is at + i).
template <int NV, int LANES> __device__ __forceinline__ int reducedBase(int sub)
{
    int base = 0;
#pragma unroll
    for (int mask = LANES / 2, half = NV / 2; mask > 0 && half > 0; mask >>= 1, half >>= 1)
        if (sub & mask)
            base += half;
    return base;
}

template <int VEC, int KU> __host__ __device__ constexpr int stageVectors()
{
    return KU * 2 * VEC * 32; // float4 of keys and values per warp and group
}

template <int VEC, int KU, bool STAGED> constexpr int decodeSharedBytes()
{
    return STAGED ? kWarps * kStages * stageVectors<VEC, KU>() * 16 : 0;
}

// LANES lanes share one key (LANES * VEC float4 cover the head dimension), a warp works on
// 32 / LANES keys at a time and each of them KU times per group; GT query heads per block.
// STAGED: each lane streams its slices of the next kStages - 1 groups into a shared ring with
// cp.async (more bytes in flight than registers allow); otherwise registers hold one group
// ahead.
template <int LANES, int VEC, int GT, int KU, bool STAGED>
__global__ void __launch_bounds__(kThreads) decodeSplitKernel(DecodeParams p)
{
    chainedKernelEntry();
    constexpr int kSlots = 32 / LANES;
    constexpr int kGroupKeys = kSlots * KU;
    constexpr int kValues = KU * GT;
    constexpr int kReduced = kValues > LANES ? kValues / LANES : 1;
    constexpr int kReplicas = kValues >= LANES ? 1 : LANES / kValues;
    constexpr int kWidth = LANES * VEC * 4; // >= headDim
    constexpr int kStageVectors = stageVectors<VEC, KU>();
    static_assert(GT * kWidth <= kStages * kStageVectors * 4, "a warp's output fits its ring");
    __shared__ float scores[kWarps][kGroupKeys][GT];
    __shared__ float alphas[kWarps][GT];
    __shared__ float warpM[kWarps][GT], warpL[kWarps][GT];
    // The warps' outputs: in static shared memory, or each in its own (drained) ring.
    __shared__ float4 registersO[STAGED ? 1 : kWarps * GT * kWidth / 4];
    extern __shared__ float4 rings[];
    auto warpOut = [&](int w) {
        return reinterpret_cast<float*>(
            STAGED ? rings + w * kStages * kStageVectors : registersO + w * GT * kWidth / 4);
    };

    const int seq = blockIdx.z;
    if (p.seqTokens[seq] < 1)
        return;
    const int split = blockIdx.x;
    const int kvHead = blockIdx.y / p.headChunks;
    const int h0 = kvHead * p.group + (blockIdx.y % p.headChunks) * GT;
    const int heads = min(GT, p.group - (h0 - kvHead * p.group));
    const int row = p.seqRow0[seq];
    const int length = p.rowPos[row] + 1;
    // The split's share of the current length (read here, so a replayed graph adapts).
    int per = (length + p.splits - 1) / p.splits;
    per = (per + kGroupKeys - 1) / kGroupKeys * kGroupKeys;
    const int begin = split * per;
    const int end = min(length, begin + per);

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int slot = lane / LANES, sub = lane % LANES;
    const int hd4 = p.headDim / 4;

    float4 q[GT][VEC], o[GT][VEC];
#pragma unroll
    for (int g = 0; g < GT; ++g)
#pragma unroll
        for (int v = 0; v < VEC; ++v) {
            const int i = sub + LANES * v;
            q[g][v] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (g < heads && i < hd4)
                q[g][v] = reinterpret_cast<const float4*>(
                    p.q + (std::int64_t(row) * p.heads + h0 + g) * p.headDim)[i];
            o[g][v] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
    float runM = -INFINITY, runL = 0.0f; // of head `lane` (lanes < GT)

    const float* headBase = p.cache.base + std::int64_t(kvHead) * p.headDim;
    const std::int64_t valueOffset = p.cache.valueOffset();
    float4 k[KU][VEC], vv[KU][VEC];
    auto load = [&](int first, float4(&kd)[KU][VEC], float4(&vd)[KU][VEC]) {
#pragma unroll
        for (int u = 0; u < KU; ++u) {
            const int key = first + slot * KU + u;
            const bool valid = key < end;
            const float* kr = headBase + (valid ? p.cache.keyOffset(seq, key) : 0);
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
                const int i = sub + LANES * v;
                kd[u][v] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                vd[u][v] = kd[u][v];
                if (valid && i < hd4) {
                    kd[u][v] = reinterpret_cast<const float4*>(kr)[i];
                    vd[u][v] = reinterpret_cast<const float4*>(kr + valueOffset)[i];
                }
            }
        }
    };

    float4* ring = rings + warp * kStages * kStageVectors;
    auto issue = [&](int stage, int first) {
        if (first < end) {
#pragma unroll
            for (int u = 0; u < KU; ++u) {
                const int key = first + slot * KU + u;
                const bool valid = key < end;
                const float* kr = headBase + (valid ? p.cache.keyOffset(seq, key) : 0);
#pragma unroll
                for (int v = 0; v < VEC; ++v) {
                    const int i = sub + LANES * v;
                    const bool ok = valid && i < hd4;
                    const float* src = kr + (ok ? 4 * i : 0);
                    float4* dst = ring + stage * kStageVectors + (u * 2 * VEC + v) * 32 + lane;
                    copyAsync16(dst, src, ok);
                    copyAsync16(dst + VEC * 32, src + (ok ? valueOffset : 0), ok);
                }
            }
        }
        commitAsync(); // an empty group past the end keeps the count of groups in step
    };

    const int step = kWarps * kGroupKeys;
    int first = begin + warp * kGroupKeys;
    if constexpr (STAGED) {
#pragma unroll
        for (int s = 0; s < kStages - 1; ++s)
            issue(s, first + s * step);
    } else if (first < end) {
        load(first, k, vv);
    }
    for (int j = 0; first < end; ++j, first += step) {
        float4 nk[KU][VEC], nv[KU][VEC];
        if constexpr (STAGED) {
            // The stage refilled here was read (and its values used) in the previous group.
            issue((j + kStages - 1) % kStages, first + (kStages - 1) * step);
            waitAsync<kStages - 1>(); // this lane's copies of group j have landed
            const float4* from = ring + (j % kStages) * kStageVectors + lane;
#pragma unroll
            for (int u = 0; u < KU; ++u)
#pragma unroll
                for (int v = 0; v < VEC; ++v) {
                    k[u][v] = from[(u * 2 * VEC + v) * 32];
                    vv[u][v] = from[(u * 2 * VEC + v) * 32 + VEC * 32];
                }
        } else {
            // The next group's rows are in flight while this one is computed.
            load(first + step, nk, nv);
        }

        float d[kValues];
#pragma unroll
        for (int u = 0; u < KU; ++u)
#pragma unroll
            for (int g = 0; g < GT; ++g) {
                float s = 0.0f;
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    s += dot4(q[g][v], k[u][v]);
                d[u * GT + g] = s;
            }
        transposeReduce<kValues, LANES / 2, kValues>(d, lane);
        __syncwarp(); // the previous group's probabilities are read
        if (sub % kReplicas == 0) {
            const int base = reducedBase<kValues, LANES>(sub);
#pragma unroll
            for (int r = 0; r < kReduced; ++r) {
                const int u = (base + r) / GT, g = (base + r) % GT;
                const int key = first + slot * KU + u;
                scores[warp][slot * KU + u][g] = key < end ? d[r] * p.scale : -INFINITY;
            }
        }
        __syncwarp();
        if (lane < GT) {
            // The group's first key is valid, so the new maximum is finite.
            float mx = runM;
#pragma unroll
            for (int j = 0; j < kGroupKeys; ++j)
                mx = fmaxf(mx, scores[warp][j][lane]);
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < kGroupKeys; ++j) {
                const float e = expf(scores[warp][j][lane] - mx);
                scores[warp][j][lane] = e;
                sum += e;
            }
            const float alpha = expf(runM - mx);
            runL = runL * alpha + sum;
            runM = mx;
            alphas[warp][lane] = alpha;
        }
        __syncwarp();
#pragma unroll
        for (int g = 0; g < GT; ++g) {
            const float a = alphas[warp][g];
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
                float4 acc = o[g][v];
                acc.x *= a;
                acc.y *= a;
                acc.z *= a;
                acc.w *= a;
#pragma unroll
                for (int u = 0; u < KU; ++u) {
                    const float pr = scores[warp][slot * KU + u][g];
                    acc.x += pr * vv[u][v].x;
                    acc.y += pr * vv[u][v].y;
                    acc.z += pr * vv[u][v].z;
                    acc.w += pr * vv[u][v].w;
                }
                o[g][v] = acc;
            }
        }
        if constexpr (!STAGED) {
#pragma unroll
            for (int u = 0; u < KU; ++u)
#pragma unroll
                for (int v = 0; v < VEC; ++v) {
                    k[u][v] = nk[u][v];
                    vv[u][v] = nv[u][v];
                }
        }
    }
    if constexpr (STAGED)
        waitAsync<0>(); // the copies past the end land before the ring holds the output

        // Lanes of different key slots hold the same dimensions of different keys.
#pragma unroll
    for (int mask = LANES; mask < 32; mask <<= 1)
#pragma unroll
        for (int g = 0; g < GT; ++g)
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
                o[g][v].x += __shfl_xor_sync(kFull, o[g][v].x, mask);
                o[g][v].y += __shfl_xor_sync(kFull, o[g][v].y, mask);
                o[g][v].z += __shfl_xor_sync(kFull, o[g][v].z, mask);
                o[g][v].w += __shfl_xor_sync(kFull, o[g][v].w, mask);
            }
    if (slot == 0) {
#pragma unroll
        for (int g = 0; g < GT; ++g)
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
                const int i = sub + LANES * v;
                if (i < hd4)
                    reinterpret_cast<float4*>(warpOut(warp) + g * kWidth)[i] = o[g][v];
            }
    }
    if (lane < GT) {
        warpM[warp][lane] = runM;
        warpL[warp][lane] = runL;
    }
    __syncthreads();

    // Merge the warps; a warp (or the whole split) that saw no key has max -inf, weight 0.
    for (int e = threadIdx.x; e < heads * p.headDim; e += kThreads) {
        const int g = e / p.headDim, dim = e % p.headDim;
        float m = -INFINITY;
#pragma unroll
        for (int w = 0; w < kWarps; ++w)
            m = fmaxf(m, warpM[w][g]);
        float acc = 0.0f, l = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
            const float wm = warpM[w][g];
            const float weight = wm == -INFINITY ? 0.0f : expf(wm - m);
            acc += weight * warpOut(w)[g * kWidth + dim];
            l += weight * warpL[w][g];
        }
        const std::int64_t part = (std::int64_t(seq) * p.heads + h0 + g) * p.splits + split;
        p.partO[part * p.headDim + dim] = acc;
        if (dim == 0) {
            p.partM[part] = m;
            p.partL[part] = l;
        }
    }
}

// One block per (head, sequence). The splits' states are read by one thread each and reduced
// over the block, and each thread then sums one float4 of the head's output over a share of
// the splits, several loads in flight: a serial loop over the splits (64 at a short context)
// made this kernel a chain of dependent L2 round trips.
__device__ __forceinline__ float warpMax(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(kFull, v, o));
    return v;
}

__device__ __forceinline__ float warpSum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(kFull, v, o);
    return v;
}

__global__ void __launch_bounds__(kThreads)
    decodeCombineKernel(DecodeParams p, const float* gate, std::int64_t gateStride, float* out)
{
    static_assert(kThreads >= kMaxSplits, "a thread per split");
    chainedKernelEntry();
    __shared__ float weights[kMaxSplits];
    __shared__ float warpValues[kWarps];
    __shared__ float4 partial[kThreads];
    const int h = blockIdx.x, seq = blockIdx.y;
    if (p.seqTokens[seq] < 1)
        return;
    const int tid = int(threadIdx.x), lane = tid & 31, warp = tid >> 5;
    const std::int64_t part0 = (std::int64_t(seq) * p.heads + h) * p.splits;
    const float sm = tid < p.splits ? p.partM[part0 + tid] : -INFINITY;
    const float sl = tid < p.splits ? p.partL[part0 + tid] : 0.0f;
    float v = warpMax(sm);
    if (lane == 0)
        warpValues[warp] = v;
    __syncthreads();
    float m = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
        m = fmaxf(m, warpValues[w]);
    const float weight = sm == -INFINITY ? 0.0f : expf(sm - m);
    if (tid < kMaxSplits)
        weights[tid] = weight;
    v = warpSum(weight * sl);
    __syncthreads(); // every thread has read the maxima
    if (lane == 0)
        warpValues[warp] = v;
    __syncthreads();
    float total = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
        total += warpValues[w];
    const float inv = 1.0f / total;

    // Threads split the head's float4 columns, and where they are fewer than the threads,
    // the splits too (groups of threads, each a share of the splits, summed after).
    const int hd = p.headDim, hd4 = hd / 4;
    const bool columnsFit = hd4 <= kThreads;
    const int groups = columnsFit ? kThreads / hd4 : 1;
    const int group = columnsFit ? tid / hd4 : 0;
    const auto* partO = reinterpret_cast<const float4*>(p.partO);
    const std::int64_t row = p.seqRow0[seq];
    auto finish = [&](int c, float4 acc) {
        const float r[4] = { acc.x * inv, acc.y * inv, acc.z * inv, acc.w * inv };
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int dim = 4 * c + i;
            float value = r[i];
            if (gate)
                value *= 1.0f
                    / (1.0f + expf(-gate[row * gateStride + std::int64_t(h) * 2 * hd + dim]));
            out[(row * p.heads + h) * hd + dim] = value;
        }
    };
    if (group < groups) {
        for (int c = columnsFit ? tid % hd4 : tid; c < hd4; c += columnsFit ? hd4 : kThreads) {
            float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 8
            for (int s = group; s < p.splits; s += groups) {
                const float w = weights[s];
                const float4 o = partO[(part0 + s) * hd4 + c];
                acc.x += w * o.x;
                acc.y += w * o.y;
                acc.z += w * o.z;
                acc.w += w * o.w;
            }
            if (groups == 1)
                finish(c, acc);
            else
                partial[tid] = acc;
        }
    }
    if (groups == 1)
        return;
    __syncthreads();
    if (tid < hd4) {
        float4 acc = partial[tid];
        for (int g = 1; g < groups; ++g) {
            const float4 o = partial[g * hd4 + tid];
            acc.x += o.x;
            acc.y += o.y;
            acc.z += o.z;
            acc.w += o.w;
        }
        finish(tid, acc);
    }
}

// Cached per device: a decode step asks on every call, graph capture included.
int multiprocessors()
{
    static std::atomic<int> known[kMaxDevices];
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
        cudaGetLastError();
        return 108;
    }
    if (device < kMaxDevices && known[device].load(std::memory_order_relaxed) > 0)
        return known[device].load(std::memory_order_relaxed);
    int count = 0;
    if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
        cudaGetLastError();
        return 108;
    }
    if (device < kMaxDevices)
        known[device].store(count, std::memory_order_relaxed);
    return count;
}

// The smallest instantiated tile that holds the KV group's query heads (up to 8): a limit of
// the kernels, not tuned.
int headGroupTile(int group)
{
    return group <= 1 ? 1 : group <= 2 ? 2 : group <= 4 ? 4 : 8;
}

template <int LANES, int VEC, int GT, int KU>
cudaError_t launchSplit(bool staged, dim3 grid, const DecodeParams& p, cudaStream_t stream)
{
    if (!staged) {
        launchChained(
            decodeSplitKernel<LANES, VEC, GT, KU, false>, dim3(grid), dim3(kThreads), 0, stream, p);
        return cudaGetLastError();
    }
    constexpr int kBytes = decodeSharedBytes<VEC, KU, true>();
    // Not a stream operation: allowed while a graph is being captured.
    const cudaError_t set = cudaFuncSetAttribute(decodeSplitKernel<LANES, VEC, GT, KU, true>,
        cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes);
    if (set != cudaSuccess)
        return set;
    launchChained(
        decodeSplitKernel<LANES, VEC, GT, KU, true>, dim3(grid), dim3(kThreads), kBytes, stream, p);
    return cudaGetLastError();
}

template <int LANES, int VEC, int KU>
cudaError_t launchSplits(int gt, bool staged, dim3 grid, const DecodeParams& p, cudaStream_t stream)
{
    switch (gt) {
    case 1:
        return launchSplit<LANES, VEC, 1, KU>(staged, grid, p, stream);
    case 2:
        return launchSplit<LANES, VEC, 2, KU>(staged, grid, p, stream);
    case 4:
        return launchSplit<LANES, VEC, 4, KU>(staged, grid, p, stream);
    default:
        return launchSplit<LANES, VEC, 8, KU>(staged, grid, p, stream);
    }
}

} // namespace

void useStagedDecode(bool staged)
{
    g_staged.store(staged, std::memory_order_relaxed);
}

int decodeSplits(const AttentionShape& shape, const StepLayout& layout)
{
    const int group = shape.heads / shape.kvHeads;
    const int gt = headGroupTile(group);
    const std::int64_t pairs
        = std::int64_t(layout.sequences) * shape.kvHeads * ((group + gt - 1) / gt);
    // Enough blocks for several waves, so the last wave's tail stays short (8 per SM: not
    // measured; chosen by reasoning).
    const std::int64_t target = 8 * std::int64_t(multiprocessors());
    std::int64_t splits = (target + pairs - 1) / std::max<std::int64_t>(pairs, 1);
    splits
        = std::min<std::int64_t>(splits, (layout.maxContext + kMinSplitKeys - 1) / kMinSplitKeys);
    return int(std::clamp<std::int64_t>(splits, 1, kMaxSplits));
}

std::size_t decodeScratchBytes(const AttentionShape& shape, const StepLayout& layout)
{
    const std::size_t parts
        = std::size_t(layout.sequences) * shape.heads * std::size_t(decodeSplits(shape, layout));
    return parts * (std::size_t(shape.headDim) + 2) * sizeof(float);
}

cudaError_t launchDecodeAttention(const float* q, const float* gate, std::int64_t gateStride,
    const AttentionShape& shape, float scale, const StepLayout& layout, PagedKv kv, int layer,
    float* out, DeviceScratch scratch, cudaStream_t stream)
{
    if (scratch.bytes < decodeScratchBytes(shape, layout) || shape.headDim % 4 != 0)
        return cudaErrorInvalidValue;
    const int group = shape.heads / shape.kvHeads;
    const int gt = headGroupTile(group);
    DecodeParams p;
    p.q = q;
    p.cache = makeKvRows(kv, layer, layout);
    p.seqRow0 = layout.seqRow0;
    p.seqTokens = layout.seqTokens;
    p.rowPos = layout.rowPos;
    p.heads = shape.heads;
    p.kvHeads = shape.kvHeads;
    p.headDim = shape.headDim;
    p.group = group;
    p.headChunks = (group + gt - 1) / gt;
    p.splits = decodeSplits(shape, layout);
    p.scale = scale;
    const std::size_t parts = std::size_t(layout.sequences) * shape.heads * p.splits;
    p.partO = reinterpret_cast<float*>(scratch.data);
    p.partM = p.partO + parts * shape.headDim;
    p.partL = p.partM + parts;

    const dim3 grid(
        unsigned(p.splits), unsigned(shape.kvHeads * p.headChunks), unsigned(layout.sequences));
    const int hd4 = shape.headDim / 4;
    const bool staged = g_staged.load(std::memory_order_relaxed);
    cudaError_t launched;
    // Lanes x vectors cover the head dim (a limit); the key unroll (the last argument) was not
    // measured: chosen by reasoning.
    if (hd4 > 32)
        launched = launchSplits<32, 2, 2>(gt, staged, grid, p, stream);
    else if (hd4 > 16)
        launched = launchSplits<32, 1, 4>(gt, staged, grid, p, stream);
    else if (hd4 > 8)
        launched = launchSplits<16, 1, 2>(gt, staged, grid, p, stream);
    else if (hd4 > 4)
        launched = launchSplits<8, 1, 2>(gt, staged, grid, p, stream);
    else
        launched = launchSplits<4, 1, 2>(gt, staged, grid, p, stream);
    if (launched != cudaSuccess)
        return launched;
    launchChained(decodeCombineKernel,
        dim3(dim3(unsigned(shape.heads), unsigned(layout.sequences))), dim3(kThreads), 0, stream, p,
        gate, gateStride, out);
    return cudaGetLastError();
}

} // namespace cw::kernels::cuda::attention_detail
