// Matrix-vector products of the experts with their rows staged in shared memory: a block
// copies the weight rows it owns with coalesced 16-byte cp.async (every chunk in flight at
// once, so one memory latency per block), then each warp decodes its row from shared memory
// with dequant8 and multiplies it with the token rows. Plain f32 FMA, each row's dot product
// summed in the same order whatever the path, so decode and grouped results agree bit for bit.
//
// Decode (blockIdx.y = one (token, choice) pair): gate/up into h[pair], then a down kernel
// that sums the token's choices in ascending expert order straight into out. Measured on the
// H200 no faster than moe_decode.cu's direct reads (31.3 vs 30.1 us for one token: decode is
// bound by dequant8's arithmetic, not by the loads), so routedExperts does not take it; it
// stays as the tested alternative for a cheaper decoder.
// Grouped (blockIdx.y = one active expert, capacity min(experts, pairs)): the expert's rows are
// read once for all its pairs (tokens in chunks of kTokenChunk), into the sorted hidden and
// down rows that combineExpertRows then sums per token.
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/moe/moe_expert_rows.cuh"
#include "kernels/cuda/moe/moe_paths.h"
#include "kernels/cuda/quant/dequant.cuh"

namespace cw::kernels::cuda::moe {
namespace {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kRowsPerBlock = kWarps; // one row per warp (gate/up: a gate and an up row)
constexpr int kDownRowsDecode = 4; // decode down: k choices x 4 rows per block
constexpr int kMaxK = 64; // a limit of the kernels (their per-choice shared arrays), not tuned
constexpr int kTokenChunk = 4; // not measured; chosen by reasoning
// Rows are staged where they fit (under the 48 KB a launch gets without opting in, beside the
// static arrays): a limit of the kernels, not tuned.
constexpr int kMaxStagedBytes = 40 * 1024;

// Where a block's pairs are: `count` sorted positions from `first`.
struct PairRange {
    int expert = 0;
    int first = 0;
    int count = 0;
};

struct GroupArrays {
    const std::int32_t* offsets = nullptr;
    const std::int32_t* activeExperts = nullptr;
    const std::int32_t* activeCount = nullptr;
    const std::int32_t* sortedPair = nullptr;
};

template <bool Grouped>
__device__ __forceinline__ bool blockPairs(
    const std::int32_t* ids, const GroupArrays& g, PairRange& r)
{
    if constexpr (Grouped) {
        if (int(blockIdx.y) >= *g.activeCount)
            return false;
        r.expert = g.activeExperts[blockIdx.y];
        r.first = g.offsets[r.expert];
        r.count = g.offsets[r.expert + 1] - r.first;
    } else {
        r.first = int(blockIdx.y);
        r.expert = ids[r.first];
        r.count = 1;
    }
    return true;
}

__device__ __forceinline__ void load8(const float* x, float v[8])
{
    const float4 a = reinterpret_cast<const float4*>(x)[0];
    const float4 b = reinterpret_cast<const float4*>(x)[1];
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
    v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}

// h[i][r] = silu(gate_e row r . x[token(i)]) * (up_e row r . x[token(i)]) for the block's
// pairs i (decode: h indexed by pair; grouped: by sorted position).
template <TensorType Type, bool Grouped, bool Staged>
__global__ void __launch_bounds__(kThreads)
    gateUpKernel(const float* x, const std::int32_t* ids, int k, GroupArrays groups,
        DeviceExpertStack gate, DeviceExpertStack up, float* h, int slotBytes)
{
    chainedKernelEntry();
    extern __shared__ __align__(16) std::uint8_t slots[];
    constexpr int kChunk = Grouped ? kTokenChunk : 1;
    PairRange pr;
    if (!blockPairs<Grouped>(ids, groups, pr))
        return;
    const std::int64_t ffn = gate.rows, hidden = gate.cols;
    const std::int64_t r0 = std::int64_t(blockIdx.x) * kRowsPerBlock;
    const int rows = int(ffn - r0 < kRowsPerBlock ? ffn - r0 : kRowsPerBlock);
    const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
    auto rowAt = [&](int i) {
        return i < rows ? expertRow(gate, pr.expert, r0 + i)
                        : expertRow(up, pr.expert, r0 + i - rows);
    };
    if constexpr (Staged) {
        stageRows(slots, slotBytes, 2 * rows, rowBytesOf<Type>(hidden), rowAt);
        cpAsyncWaitAll();
        __syncthreads();
    }
    if (warp >= rows)
        return;
    const std::uint8_t* gateRow = rowAt(warp);
    const std::uint8_t* upRow = rowAt(rows + warp);
    if constexpr (Staged) {
        gateRow = stagedRow(slots, slotBytes, warp, gateRow);
        upRow = stagedRow(slots, slotBytes, rows + warp, upRow);
    }
    const int nGroups = int(hidden / 8);
    for (int c0 = 0; c0 < pr.count; c0 += kChunk) {
        const int n = pr.count - c0 < kChunk ? pr.count - c0 : kChunk;
        const float* xt[kChunk];
#pragma unroll
        for (int t = 0; t < kChunk; ++t) {
            const int i = pr.first + c0 + (t < n ? t : 0);
            const int pair = Grouped ? groups.sortedPair[i] : i;
            xt[t] = x + std::int64_t(pair / k) * hidden;
        }
        float g[kChunk] = {}, u[kChunk] = {};
#pragma unroll 2
        for (int q = lane; q < nGroups; q += 32) {
            float wg[8], wu[8];
            dequant8<Type>(gateRow, q, wg);
            dequant8<Type>(upRow, q, wu);
#pragma unroll
            for (int t = 0; t < kChunk; ++t) {
                if (t < n) {
                    float xv[8];
                    load8(xt[t] + 8 * q, xv);
#pragma unroll
                    for (int c = 0; c < 8; ++c) {
                        g[t] = fmaf(wg[c], xv[c], g[t]);
                        u[t] = fmaf(wu[c], xv[c], u[t]);
                    }
                }
            }
        }
#pragma unroll
        for (int t = 0; t < kChunk; ++t) {
            if (t < n) {
                const float gs = warpSum(g[t]), us = warpSum(u[t]);
                if (lane == 0)
                    h[std::int64_t(pr.first + c0 + t) * ffn + r0 + warp] = us * silu(gs);
            }
        }
    }
}

// Grouped down: d[i][c] = down_e row c . h[i] for the expert's sorted positions i.
template <TensorType Type, bool Staged>
__global__ void __launch_bounds__(kThreads) groupedDownKernel(
    const float* h, GroupArrays groups, DeviceExpertStack down, float* d, int slotBytes)
{
    chainedKernelEntry();
    extern __shared__ __align__(16) std::uint8_t slots[];
    PairRange pr;
    if (!blockPairs<true>(nullptr, groups, pr))
        return;
    const std::int64_t hidden = down.rows, ffn = down.cols;
    const std::int64_t c0 = std::int64_t(blockIdx.x) * kRowsPerBlock;
    const int rows = int(hidden - c0 < kRowsPerBlock ? hidden - c0 : kRowsPerBlock);
    const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
    auto rowAt = [&](int i) { return expertRow(down, pr.expert, c0 + i); };
    if constexpr (Staged) {
        stageRows(slots, slotBytes, rows, rowBytesOf<Type>(ffn), rowAt);
        cpAsyncWaitAll();
        __syncthreads();
    }
    if (warp >= rows)
        return;
    const std::uint8_t* row = rowAt(warp);
    if constexpr (Staged)
        row = stagedRow(slots, slotBytes, warp, row);
    const int nGroups = int(ffn / 8);
    for (int i0 = 0; i0 < pr.count; i0 += kTokenChunk) {
        const int n = pr.count - i0 < kTokenChunk ? pr.count - i0 : kTokenChunk;
        const float* ht[kTokenChunk];
#pragma unroll
        for (int t = 0; t < kTokenChunk; ++t)
            ht[t] = h + std::int64_t(pr.first + i0 + (t < n ? t : 0)) * ffn;
        float acc[kTokenChunk] = {};
#pragma unroll 2
        for (int q = lane; q < nGroups; q += 32) {
            float w[8];
            dequant8<Type>(row, q, w);
#pragma unroll
            for (int t = 0; t < kTokenChunk; ++t) {
                if (t < n) {
                    float hv[8];
                    load8(ht[t] + 8 * q, hv);
#pragma unroll
                    for (int c = 0; c < 8; ++c)
                        acc[t] = fmaf(w[c], hv[c], acc[t]);
                }
            }
        }
#pragma unroll
        for (int t = 0; t < kTokenChunk; ++t) {
            if (t < n) {
                const float v = warpSum(acc[t]);
                if (lane == 0)
                    d[std::int64_t(pr.first + i0 + t) * hidden + c0 + warp] = v;
            }
        }
    }
}

// Decode down: block (rows c0.., token t). out[t][c] = sum over t's choices in ascending
// expert order of weight * (down_e row c . h[pair]).
template <TensorType Type, bool Staged>
__global__ void __launch_bounds__(kThreads)
    decodeDownKernel(const float* h, const std::int32_t* ids, const float* weights, int k,
        DeviceExpertStack down, float* out, int slotBytes)
{
    chainedKernelEntry();
    extern __shared__ __align__(16) std::uint8_t slots[];
    __shared__ int choice[kMaxK]; // choice j of t at each ascending-expert rank
    __shared__ float partial[kMaxK][kDownRowsDecode];
    const std::int64_t t = blockIdx.y, hidden = down.rows, ffn = down.cols;
    const std::int64_t c0 = std::int64_t(blockIdx.x) * kDownRowsDecode;
    const int rows = int(hidden - c0 < kDownRowsDecode ? hidden - c0 : kDownRowsDecode);
    if (int(threadIdx.x) < k) {
        const int j = int(threadIdx.x);
        const std::int32_t e = ids[t * k + j];
        int rank = 0;
        for (int i = 0; i < k; ++i) {
            const std::int32_t other = ids[t * k + i];
            rank += other < e || (other == e && i < j);
        }
        choice[rank] = j;
    }
    __syncthreads();
    // Item i: rank i / kDownRowsDecode, row i % kDownRowsDecode.
    auto rowAt = [&](int i) {
        const int r = i % kDownRowsDecode;
        return expertRow(down, ids[t * k + choice[i / kDownRowsDecode]], c0 + (r < rows ? r : 0));
    };
    const int items = k * kDownRowsDecode;
    if constexpr (Staged) {
        stageRows(slots, slotBytes, items, rowBytesOf<Type>(ffn), rowAt);
        cpAsyncWaitAll();
        __syncthreads();
    }
    const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
    const int nGroups = int(ffn / 8);
    for (int i = warp; i < items; i += kWarps) {
        const std::uint8_t* row = rowAt(i);
        if constexpr (Staged)
            row = stagedRow(slots, slotBytes, i, row);
        const float* hp = h + (t * k + choice[i / kDownRowsDecode]) * ffn;
        float acc = 0.0f;
#pragma unroll 2
        for (int q = lane; q < nGroups; q += 32) {
            float w[8], hv[8];
            dequant8<Type>(row, q, w);
            load8(hp + 8 * q, hv);
#pragma unroll
            for (int c = 0; c < 8; ++c)
                acc = fmaf(w[c], hv[c], acc);
        }
        acc = warpSum(acc);
        if (lane == 0)
            partial[i / kDownRowsDecode][i % kDownRowsDecode] = acc;
    }
    __syncthreads();
    if (int(threadIdx.x) < rows) {
        float acc = 0.0f;
        for (int s = 0; s < k; ++s)
            acc += weights[t * k + choice[s]] * partial[s][threadIdx.x];
        out[t * hidden + c0 + threadIdx.x] = acc;
    }
}

bool fits(std::size_t bytes)
{
    return bytes <= std::size_t(kMaxStagedBytes);
}

template <bool Grouped> struct GateUpLaunch {
    const float* x;
    const std::int32_t* ids;
    int k;
    GroupArrays groups;
    const DeviceExpertStack& gate;
    const DeviceExpertStack& up;
    float* h;
    unsigned blocksY;
    cudaStream_t stream;
    template <TensorType Type> void operator()() const
    {
        const int slot = stagedSlotBytes(rowBytesOf<Type>(gate.cols));
        const std::size_t smem = std::size_t(2 * kRowsPerBlock) * std::size_t(slot);
        const dim3 grid(unsigned((gate.rows + kRowsPerBlock - 1) / kRowsPerBlock), blocksY);
        if (fits(smem))
            launchChained(gateUpKernel<Type, Grouped, true>, dim3(grid), dim3(kThreads), smem,
                stream, x, ids, k, groups, gate, up, h, slot);
        else
            launchChained(gateUpKernel<Type, Grouped, false>, dim3(grid), dim3(kThreads), 0, stream,
                x, ids, k, groups, gate, up, h, slot);
    }
};

struct GroupedDownLaunch {
    const float* h;
    GroupArrays groups;
    const DeviceExpertStack& down;
    float* d;
    unsigned blocksY;
    cudaStream_t stream;
    template <TensorType Type> void operator()() const
    {
        const int slot = stagedSlotBytes(rowBytesOf<Type>(down.cols));
        const std::size_t smem = std::size_t(kRowsPerBlock) * std::size_t(slot);
        const dim3 grid(unsigned((down.rows + kRowsPerBlock - 1) / kRowsPerBlock), blocksY);
        if (fits(smem))
            launchChained(groupedDownKernel<Type, true>, dim3(grid), dim3(kThreads), smem, stream,
                h, groups, down, d, slot);
        else
            launchChained(groupedDownKernel<Type, false>, dim3(grid), dim3(kThreads), 0, stream, h,
                groups, down, d, slot);
    }
};

struct DecodeDownLaunch {
    const float* h;
    const std::int32_t* ids;
    const float* weights;
    int k;
    const DeviceExpertStack& down;
    float* out;
    std::int64_t tokens;
    cudaStream_t stream;
    template <TensorType Type> void operator()() const
    {
        const int slot = stagedSlotBytes(rowBytesOf<Type>(down.cols));
        const std::size_t smem = std::size_t(k * kDownRowsDecode) * std::size_t(slot);
        const dim3 grid(
            unsigned((down.rows + kDownRowsDecode - 1) / kDownRowsDecode), unsigned(tokens));
        if (fits(smem))
            launchChained(decodeDownKernel<Type, true>, dim3(grid), dim3(kThreads), smem, stream, h,
                ids, weights, k, down, out, slot);
        else
            launchChained(decodeDownKernel<Type, false>, dim3(grid), dim3(kThreads), 0, stream, h,
                ids, weights, k, down, out, slot);
    }
};

} // namespace

cudaError_t routedExpertsDecode(const float* x, std::int64_t tokens, const std::int32_t* ids,
    const float* weights, int k, const DeviceExpertStack& gate, const DeviceExpertStack& up,
    const DeviceExpertStack& down, float* out, DeviceScratch scratch, cudaStream_t stream)
{
    if (gate.type != up.type || gate.rowStride != up.rowStride || k > kMaxK)
        return routedExpertsDecodeDirect(
            x, tokens, ids, weights, k, gate, up, down, out, scratch, stream);
    if (scratch.bytes < decodeScratchBytes(tokens, k, gate.rows))
        return cudaErrorInvalidValue;
    float* h = reinterpret_cast<float*>(scratch.data);
    if (!dispatchMatrixType(gate.type,
            GateUpLaunch<false> { x, ids, k, {}, gate, up, h, unsigned(tokens * k), stream })
        || !dispatchMatrixType(
            down.type, DecodeDownLaunch { h, ids, weights, k, down, out, tokens, stream }))
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

cudaError_t routedExpertsGroupedMatVec(const float* x, std::int64_t tokens, const std::int32_t* ids,
    const float* weights, int k, const DeviceExpertStack& gate, const DeviceExpertStack& up,
    const DeviceExpertStack& down, float* out, DeviceScratch scratch, cudaStream_t stream)
{
    if (gate.type != up.type || gate.rowStride != up.rowStride)
        return cudaErrorNotSupported;
    const GroupedLayout layout
        = groupedLayout(scratch.data, tokens, k, gate.experts, gate.rows, down.rows, false);
    if (layout.bytes > scratch.bytes)
        return cudaErrorInvalidValue;
    const std::int64_t pairs = tokens * k;
    const unsigned slots = unsigned(gate.experts < pairs ? gate.experts : pairs);
    const GroupArrays groups { layout.offsets, layout.activeExperts, layout.activeCount,
        layout.sortedPair };
    auto* hidden = static_cast<float*>(layout.hidden);
    cudaError_t err = groupPairsByExpert(ids, pairs, gate.experts, kTileRowsF32, layout, stream);
    if (err != cudaSuccess)
        return err;
    if (!dispatchMatrixType(
            gate.type, GateUpLaunch<true> { x, ids, k, groups, gate, up, hidden, slots, stream })
        || !dispatchMatrixType(
            down.type, GroupedDownLaunch { hidden, groups, down, layout.down, slots, stream }))
        return cudaErrorInvalidValue;
    err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    return combineExpertRows(layout, tokens, k, ids, weights, down.rows, out, stream);
}

} // namespace cw::kernels::cuda::moe
