// The DeltaNet core's entry points: the scratch layout, the order of the stages, and the
// element-wise stages (conv + gates before the delta rule, gated RMSNorm after it).
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/deltanet/delta_net_device.cuh"
#include "kernels/cuda/deltanet/delta_net_kernels.h"

#include <cmath>

namespace cw::kernels::cuda {
namespace deltanet {

namespace {

// Row tiles of the conv stage (here and kFastRows): not measured; chosen by reasoning.
constexpr int kConvRowsPerBlock = 8;
constexpr int kConvThreads = 128;
constexpr int kConvChannelsPerThread = kMaxHeadDim / kConvThreads;

std::size_t alignUp(std::size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

// Block (row tile, head unit): unit u < 2 nK is query or key head u (L2-normalised), else
// value head u - 2 nK. Each thread owns up to two channels of the unit for the tile's rows.
// Any kernel width up to kMaxConvKernel.
__global__ void __launch_bounds__(kConvThreads) convGatesKernel(const float* __restrict__ qkv,
    float* __restrict__ alpha, float* __restrict__ beta, const float* __restrict__ convWeight,
    const float* __restrict__ dtBias, const float* __restrict__ negA, Dims dims, Rows rows,
    const float* __restrict__ convState, float* __restrict__ conv)
{
    chainedKernelEntry();
    __shared__ float partial[kConvRowsPerBlock][kConvThreads / 32];
    const int tid = threadIdx.x;
    const int row0 = blockIdx.x * kConvRowsPerBlock;
    const int unit = blockIdx.y;
    const bool normalise = unit < 2 * dims.nK;
    const int base
        = normalise ? unit * dims.dk : 2 * dims.nK * dims.dk + (unit - 2 * dims.nK) * dims.dv;
    const int width = normalise ? dims.dk : dims.dv;
    const int kernel = dims.kernel;
    const int hist = kernel - 1;

    float out[kConvRowsPerBlock][kConvChannelsPerThread];
#pragma unroll
    for (int t = 0; t < kConvRowsPerBlock; ++t) {
        const int r = row0 + t;
        float sumSq = 0.0f;
#pragma unroll
        for (int e = 0; e < kConvChannelsPerThread; ++e) {
            out[t][e] = 0.0f;
            const int local = tid + e * kConvThreads;
            if (r >= rows.rows || local >= width)
                continue;
            const int c = base + local;
            const int s = rows.rowSeq[r];
            const int pos = r - rows.seqRow0[s];
            const int at = rows.rowPos[r];
            const float* ring
                = convState + (std::size_t(rows.stateSlots[s]) * dims.convDim + c) * kernel;
            const float* w = convWeight + std::size_t(c) * kernel;
            float window[kMaxConvKernel];
#pragma unroll
            for (int m = 0; m < kMaxConvKernel; ++m) {
                const int p = pos - hist + m; // input index within the sequence's step
                window[m] = m >= kernel ? 0.0f
                    : p >= 0            ? qkv[std::size_t(r - hist + m) * dims.convDim + c]
                                        : ring[convRingIndex(at - hist + m, kernel)];
            }
            float acc = 0.0f;
#pragma unroll
            for (int m = 0; m < kMaxConvKernel; ++m)
                if (m < kernel)
                    acc += w[m] * window[m];
            out[t][e] = siluF(acc);
            sumSq += out[t][e] * out[t][e];
        }
        if (normalise) {
            sumSq = warpSum(sumSq);
            if ((tid & 31) == 0)
                partial[t][tid >> 5] = sumSq;
        }
    }
    if (normalise)
        __syncthreads();
#pragma unroll
    for (int t = 0; t < kConvRowsPerBlock; ++t) {
        const int r = row0 + t;
        if (r >= rows.rows)
            break;
        float scale = 1.0f;
        if (normalise) {
            float sumSq = 0.0f;
            for (int w = 0; w < kConvThreads / 32; ++w)
                sumSq += partial[t][w];
            scale = 1.0f / sqrtf(sumSq + 1e-6f);
        }
#pragma unroll
        for (int e = 0; e < kConvChannelsPerThread; ++e) {
            const int local = tid + e * kConvThreads;
            if (local < width)
                conv[std::size_t(r) * dims.convDim + base + local] = out[t][e] * scale;
        }
    }

    if (unit != 0)
        return;
    for (int i = tid; i < kConvRowsPerBlock * dims.nV; i += kConvThreads) {
        const int r = row0 + i / dims.nV;
        const int j = i % dims.nV;
        if (r >= rows.rows)
            break;
        const std::size_t at = std::size_t(r) * dims.nV + j;
        alpha[at] = negA[j] * softplusF(alpha[at] + dtBias[j]);
        beta[at] = sigmoidF(beta[at]);
    }
}

// The same for a kernel width of 4 (Qwen3.5's), memory-bound at prefill: each thread loads its
// channel for the tile's rows and the 3 before them once, up front, with the rows' positions
// and slots in shared memory; only a sequence's first 3 rows read the conv state.
constexpr int kFastRows = 16;
constexpr int kFastHist = 3;

__global__ void __launch_bounds__(kConvThreads) convGatesWidth4Kernel(const float* __restrict__ qkv,
    float* __restrict__ alpha, float* __restrict__ beta, const float* __restrict__ convWeight,
    const float* __restrict__ dtBias, const float* __restrict__ negA, Dims dims, Rows rows,
    const float* __restrict__ convState, float* __restrict__ conv)
{
    __shared__ int rowPos[kFastRows], rowAt[kFastRows], rowSlot[kFastRows];
    __shared__ float partial[kFastRows][kConvThreads / 32];
    const int tid = threadIdx.x;
    const int row0 = blockIdx.x * kFastRows;
    const int unit = blockIdx.y;
    const bool normalise = unit < 2 * dims.nK;
    const int base
        = normalise ? unit * dims.dk : 2 * dims.nK * dims.dk + (unit - 2 * dims.nK) * dims.dv;
    const int width = normalise ? dims.dk : dims.dv;
    // The unit's conv weights into L2 before the wait for the kernel before (weights).
    if (tid == 0 && (reinterpret_cast<std::uintptr_t>(convWeight) & 15) == 0)
        prefetchL2(convWeight + std::size_t(base) * 4, unsigned(width) * 16u);
    chainedKernelEntry();
    if (tid < kFastRows) {
        const int r = row0 + tid;
        int pos = -1, at = 0, slot = 0;
        if (r < rows.rows) {
            const int s = rows.rowSeq[r];
            pos = r - rows.seqRow0[s];
            at = rows.rowPos[r];
            slot = rows.stateSlots[s];
        }
        rowPos[tid] = pos;
        rowAt[tid] = at;
        rowSlot[tid] = slot;
    }
    __syncthreads();

    float out[kFastRows][kConvChannelsPerThread];
    float sumSq[kFastRows] = {};
#pragma unroll
    for (int e = 0; e < kConvChannelsPerThread; ++e) {
        const int local = tid + e * kConvThreads;
        const bool active = local < width;
        const int c = base + local;
        float in[kFastRows + kFastHist]; // rows row0 - 3 ...
#pragma unroll
        for (int q = 0; q < kFastRows + kFastHist; ++q) {
            const int r = row0 - kFastHist + q;
            in[q]
                = active && r >= 0 && r < rows.rows ? qkv[std::size_t(r) * dims.convDim + c] : 0.0f;
        }
        const float4 w
            = active ? load4(convWeight + std::size_t(c) * 4) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
        for (int t = 0; t < kFastRows; ++t) {
            const int pos = rowPos[t];
            out[t][e] = 0.0f;
            if (!active || pos < 0)
                continue;
            float win[4];
            const float* ring = convState + (std::size_t(rowSlot[t]) * dims.convDim + c) * 4;
#pragma unroll
            for (int m = 0; m < 4; ++m)
                win[m] = pos - kFastHist + m >= 0
                    ? in[t + m]
                    : ring[convRingIndex(rowAt[t] - kFastHist + m, 4)];
            float acc = 0.0f; // in the CPU's order
            acc += w.x * win[0];
            acc += w.y * win[1];
            acc += w.z * win[2];
            acc += w.w * win[3];
            out[t][e] = siluF(acc);
            sumSq[t] += out[t][e] * out[t][e];
        }
    }
    if (normalise) {
#pragma unroll
        for (int t = 0; t < kFastRows; ++t) {
            const float v = warpSum(sumSq[t]);
            if ((tid & 31) == 0)
                partial[t][tid >> 5] = v;
        }
        __syncthreads();
    }
#pragma unroll
    for (int t = 0; t < kFastRows; ++t) {
        const int r = row0 + t;
        if (r >= rows.rows)
            break;
        float scale = 1.0f;
        if (normalise) {
            float total = 0.0f;
            for (int w = 0; w < kConvThreads / 32; ++w)
                total += partial[t][w];
            scale = 1.0f / sqrtf(total + 1e-6f);
        }
#pragma unroll
        for (int e = 0; e < kConvChannelsPerThread; ++e) {
            const int local = tid + e * kConvThreads;
            if (local < width)
                conv[std::size_t(r) * dims.convDim + base + local] = out[t][e] * scale;
        }
    }

    if (unit != 0)
        return;
    for (int i = tid; i < kFastRows * dims.nV; i += kConvThreads) {
        const int r = row0 + i / dims.nV;
        const int j = i % dims.nV;
        if (r >= rows.rows)
            break;
        const std::size_t at = std::size_t(r) * dims.nV + j;
        alpha[at] = negA[j] * softplusF(alpha[at] + dtBias[j]);
        beta[at] = sigmoidF(beta[at]);
    }
}

// Thread per (sequence, channel): the sequence's last kernel-1 inputs of the step into its
// ring; a sequence shorter than that keeps the older entries it still needs.
__global__ void convStateAdvanceKernel(
    const float* __restrict__ qkv, Dims dims, Rows rows, float* __restrict__ convState)
{
    chainedKernelEntry();
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int s = blockIdx.y;
    if (c >= dims.convDim)
        return;
    const int n = rows.seqTokens[s];
    const int kernel = dims.kernel;
    const int row0 = rows.seqRow0[s], at0 = rows.seqPos0[s];
    float* ring = convState + (std::size_t(rows.stateSlots[s]) * dims.convDim + c) * kernel;
    for (int m = n - (kernel - 1) > 0 ? n - (kernel - 1) : 0; m < n; ++m)
        ring[convRingIndex(at0 + m, kernel)] = qkv[std::size_t(row0 + m) * dims.convDim + c];
}

// Warp per (row, value head): core = rmsNorm(core, w) * silu(z), as ops::rmsNorm + siluMul.
__global__ void gatedNormKernel(const float* __restrict__ z, const float* __restrict__ normWeight,
    Dims dims, int rows, float* __restrict__ core)
{
    chainedKernelEntry();
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= rows * dims.nV)
        return;
    float* o = core + std::size_t(warp) * dims.dv;
    const float* zr = z + std::size_t(warp) * dims.dv;
    constexpr int kPerLane = kMaxHeadDim / 32;
    float x[kPerLane];
    float sumSq = 0.0f;
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) {
        const int d = lane + 32 * e;
        x[e] = d < dims.dv ? o[d] : 0.0f;
        sumSq += x[e] * x[e];
    }
    sumSq = warpSum(sumSq);
    const float scale = 1.0f / sqrtf(sumSq / float(dims.dv) + dims.eps);
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) {
        const int d = lane + 32 * e;
        if (d < dims.dv)
            o[d] = x[e] * scale * normWeight[d] * siluF(zr[d]);
    }
}

} // namespace

Dims makeDims(const DeltaNetShape& shape)
{
    Dims d;
    d.nK = shape.keyHeads;
    d.nV = shape.valueHeads;
    d.dk = shape.keyDim;
    d.dv = shape.valueDim;
    d.kernel = shape.convKernel;
    d.convDim = shape.convDim();
    d.tiled = shape.valueHeadsTiled;
    d.eps = shape.eps;
    d.qScale = 1.0f / std::sqrt(float(shape.keyDim));
    return d;
}

Rows rowsOf(const StepLayout& layout)
{
    Rows rows;
    rows.rowSeq = layout.rowSeq;
    rows.rowPos = layout.rowPos;
    rows.seqRow0 = layout.seqRow0;
    rows.seqTokens = layout.seqTokens;
    rows.seqPos0 = layout.seqPos0;
    rows.stateSlots = layout.stateSlots;
    rows.rows = layout.rows;
    rows.sequences = layout.sequences;
    return rows;
}

ScratchLayout scratchLayout(const DeltaNetShape& shape, const StepLayout& layout)
{
    ScratchLayout s;
    const std::size_t rows = std::size_t(layout.rows > 0 ? layout.rows : 0);
    const std::size_t seqs = std::size_t(layout.sequences > 0 ? layout.sequences : 0);
    s.prefill = layout.maxTokensPerSequence > 1;
    std::size_t at = 0;
    if (s.prefill) { // decode keeps its conv outputs in registers and shared memory
        s.conv = at;
        at += alignUp(rows * std::size_t(shape.convDim()) * sizeof(float));
        // Chunks of sequence s: ceil(n_s / 64) <= n_s / 64 + 1, and <= ceil(max / 64).
        const std::size_t perSeq = std::size_t(layout.maxTokensPerSequence + kChunk - 1) / kChunk;
        std::size_t chunks = (rows + kChunk - 1) / kChunk + seqs;
        if (seqs * perSeq < chunks)
            chunks = seqs * perSeq;
        s.chunkCapacity = int(chunks);
        const std::size_t perChunk = chunks * std::size_t(shape.valueHeads) * kChunk;
        s.cum = at;
        at += alignUp(perChunk * sizeof(float));
        s.wT = at;
        at += alignUp(perChunk * std::size_t(shape.keyDim) * sizeof(float));
        s.qT = at;
        at += alignUp(perChunk * std::size_t(shape.keyDim) * sizeof(float));
    }
    s.total = at;
    return s;
}

cudaError_t launchConvGates(const float* qkv, float* alpha, float* beta, const float* convWeight,
    const float* dtBias, const float* negA, const Dims& dims, const Rows& rows,
    const float* convState, float* conv, cudaStream_t stream)
{
    const int units = 2 * dims.nK + dims.nV;
    if (dims.kernel == 4) {
        const dim3 grid((rows.rows + kFastRows - 1) / kFastRows, units);
        launchChained(convGatesWidth4Kernel, dim3(grid), dim3(kConvThreads), 0, stream, qkv, alpha,
            beta, convWeight, dtBias, negA, dims, rows, convState, conv);
        return cudaGetLastError();
    }
    const dim3 grid((rows.rows + kConvRowsPerBlock - 1) / kConvRowsPerBlock, units);
    launchChained(convGatesKernel, dim3(grid), dim3(kConvThreads), 0, stream, qkv, alpha, beta,
        convWeight, dtBias, negA, dims, rows, convState, conv);
    return cudaGetLastError();
}

cudaError_t launchConvStateAdvance(
    const float* qkv, const Dims& dims, const Rows& rows, float* convState, cudaStream_t stream)
{
    constexpr int kThreads = 256;
    const dim3 grid((dims.convDim + kThreads - 1) / kThreads, rows.sequences);
    launchChained(
        convStateAdvanceKernel, dim3(grid), dim3(kThreads), 0, stream, qkv, dims, rows, convState);
    return cudaGetLastError();
}

cudaError_t launchGatedNorm(const float* z, const float* normWeight, const Dims& dims, int rows,
    float* core, cudaStream_t stream)
{
    constexpr int kThreads = 256;
    const long long warps = (long long)rows * dims.nV;
    const int blocks = int((warps * 32 + kThreads - 1) / kThreads);
    launchChained(
        gatedNormKernel, dim3(blocks), dim3(kThreads), 0, stream, z, normWeight, dims, rows, core);
    return cudaGetLastError();
}

cudaError_t gatedDeltaNetTuned(const float* qkv, float* alpha, float* beta, const float* z,
    const float* convWeight, const float* dtBias, const float* negA, const float* normWeight,
    const DeltaNetShape& shape, const StepLayout& layout, DeltaNetStates states, float* core,
    DeviceScratch scratch, const Tuning& tuning, cudaStream_t stream)
{
    if (layout.rows <= 0 || layout.sequences <= 0 || layout.maxTokensPerSequence <= 0)
        return cudaSuccess;
    const bool shapeOk = shape.keyHeads > 0 && shape.valueHeads % shape.keyHeads == 0
        && shape.keyDim % 16 == 0 && shape.valueDim % 16 == 0 && shape.keyDim > 0
        && shape.valueDim > 0 && shape.keyDim <= kMaxHeadDim && shape.valueDim <= kMaxHeadDim
        && shape.convKernel >= 2 && shape.convKernel <= kMaxConvKernel;
    if (!shapeOk || !states.conv || !states.recurrent || !states.counters)
        return cudaErrorInvalidValue;
    const ScratchLayout at = scratchLayout(shape, layout);
    if (at.total > 0 && (scratch.bytes < at.total || scratch.data == nullptr))
        return cudaErrorInvalidValue;
    const Dims dims = makeDims(shape);
    const Rows rows = rowsOf(layout);
    if (!at.prefill)
        return launchDecode(qkv, alpha, beta, z, convWeight, dtBias, negA, normWeight, dims, rows,
            states, core, tuning.decodeColumns, stream);

    auto* conv = reinterpret_cast<float*>(scratch.data + at.conv);
    cudaError_t err = launchConvGates(
        qkv, alpha, beta, convWeight, dtBias, negA, dims, rows, states.conv, conv, stream);
    if (err != cudaSuccess)
        return err;

    auto* cum = reinterpret_cast<float*>(scratch.data + at.cum);
    auto* wT = reinterpret_cast<float*>(scratch.data + at.wT);
    auto* qT = reinterpret_cast<float*>(scratch.data + at.qT);
    if ((err = launchConvStateAdvance(qkv, dims, rows, states.conv, stream)) != cudaSuccess)
        return err;
    if ((err = launchChunkTransform(
             conv, alpha, beta, dims, rows, at.chunkCapacity, cum, wT, qT, core, stream))
        != cudaSuccess)
        return err;
    if ((err = launchChunkRecurrence(conv, cum, wT, qT, dims, rows, states.recurrent, core,
             tuning.chunkColumns, tuning.chunkPipeline, stream))
        != cudaSuccess)
        return err;
    return launchGatedNorm(z, normWeight, dims, layout.rows, core, stream);
}

} // namespace deltanet

cudaError_t gatedDeltaNet(const float* qkv, float* alpha, float* beta, const float* z,
    const float* convWeight, const float* dtBias, const float* negA, const float* normWeight,
    const DeltaNetShape& shape, const StepLayout& layout, DeltaNetStates states, float* core,
    DeviceScratch scratch, cudaStream_t stream)
{
    return deltanet::gatedDeltaNetTuned(qkv, alpha, beta, z, convWeight, dtBias, negA, normWeight,
        shape, layout, states, core, scratch, deltanet::Tuning {}, stream);
}

std::size_t deltaNetScratchBytes(const DeltaNetShape& shape, const StepLayout& layout)
{
    return deltanet::scratchLayout(shape, layout).total;
}

} // namespace cw::kernels::cuda
