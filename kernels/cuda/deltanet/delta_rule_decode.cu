// Decode: the whole DeltaNet core for one token of each sequence in one kernel: the causal
// conv of the token's q, k and v with the conv state ring, the q/k L2 norms and the gates, the
// gated delta rule, then the gated RMSNorm.
//
// Memory-bound: each head's state (dk x dv f32) is read and written once. The columns of a
// head's state are independent given q, k and the token's v, so a head is split over dv /
// kCols blocks, each streaming its [dk][kCols] slice with 16-byte loads, enough blocks to fill
// the GPU at batch 1. Each of those blocks convolves its key head's q and k (2 dk channels,
// cheap next to the slice) and its own value columns, so no kernel before has to; the blocks
// of a key head compute its q and k alike and one of them stores the inputs in the ring. The
// RMSNorm needs the whole head's output: the last of a head's blocks to finish (an atomic
// count, reset by that block) applies it.
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/deltanet/delta_net_device.cuh"
#include "kernels/cuda/deltanet/delta_net_kernels.h"

namespace cw::kernels::cuda::deltanet {

namespace {

constexpr int kDecodeThreads = 128;
constexpr int kDecodeWarps = kDecodeThreads / 32;

// kDk: 0 for any dk (a multiple of 16 up to 256), else that dk exactly; kK: 0 for any conv
// width up to kMaxConvKernel, else that width.
template <int kCols, int kDk, int kK>
__global__ void __launch_bounds__(kDecodeThreads)
    decodeKernel(const float* __restrict__ qkv, float* __restrict__ alpha, float* __restrict__ beta,
        const float* __restrict__ z, const float* __restrict__ convWeight,
        const float* __restrict__ dtBias, const float* __restrict__ negA,
        const float* __restrict__ normWeight, Dims dims, Rows rows, float* __restrict__ convState,
        float* __restrict__ recurrent, float* __restrict__ core, int* __restrict__ counters)
{
    constexpr int kLanesPerRow = kCols / 4; // one float4 of columns each
    constexpr int kRowsPerPass = kDecodeThreads / kLanesPerRow;
    constexpr int kMaxDk = kDk > 0 ? kDk : kMaxHeadDim;
    constexpr int kPasses = kMaxDk / kRowsPerPass;
    constexpr int kQk = (2 * kMaxDk + kDecodeThreads - 1) / kDecodeThreads; // q/k channels a thread
    constexpr int kTaps = kK > 0 ? kK : kMaxConvKernel;
    static_assert(kPasses >= 1, "at least one pass");

    __shared__ float kS[kMaxHeadDim], qS[kMaxHeadDim]; // conv + SiLU, before the L2 norm
    __shared__ float vS[kCols];
    __shared__ __align__(16) float reduceK[kDecodeWarps][kCols];
    __shared__ __align__(16) float reduceQ[kDecodeWarps][kCols];
    __shared__ __align__(16) float deltaS[kCols];
    __shared__ float sumSqWarp[2][kDecodeWarps];
    __shared__ float kqWarp[kDecodeWarps];
    __shared__ float normWarp[kDecodeWarps];
    __shared__ bool lastBlock;

    const int tid = threadIdx.x;
    const int lane = tid & 31, warp = tid >> 5;
    const int slices = gridDim.x;
    const int slice = blockIdx.x;
    const int j = blockIdx.y;
    const int s = blockIdx.z;
    if (rows.seqTokens[s] < 1)
        return;
    const int dk = kDk > 0 ? kDk : dims.dk;
    const int dv = dims.dv;
    const int kernel = kK > 0 ? kK : dims.kernel;
    const int hist = kernel - 1;
    const int row = rows.seqRow0[s];
    const int at = rows.seqPos0[s]; // the token's position: its input's ring entry
    const int kh = dims.tiled ? j % dims.nK : j / (dims.nV / dims.nK);
    const int slot = rows.stateSlots[s];
    const int c0 = slice * kCols;
    const int cg = tid % kLanesPerRow;
    const int rowInPass = tid / kLanesPerRow;
    float* head = recurrent + (std::size_t(slot) * dims.nV + j) * std::size_t(dk) * dv;
    float* ring = convState + std::size_t(slot) * dims.convDim * kernel;

    // Before the wait for the kernel before: the slice (the long pole), and this thread's conv
    // taps and ring history. The states were last written by an earlier step (this kernel, the
    // prefill's ring update, or plain memsets and copies), the step's row layout by a plain
    // copy before the step, and the weights never change.
    float4 st[kPasses];
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
        const int d = p * kRowsPerPass + rowInPass;
        st[p] = d < dk ? *reinterpret_cast<const float4*>(head + std::size_t(d) * dv + c0 + cg * 4)
                       : make_float4(0.f, 0.f, 0.f, 0.f);
    }
    // Channel of q/k index i < 2 dk: q of the key head, then its k.
    auto qkChannel = [&](int i) { return i < dk ? kh * dk + i : dims.nK * dk + kh * dk + i - dk; };
    float taps[kQk + 1][kTaps], window[kQk + 1][kTaps]; // entry kQk: the value column
#pragma unroll
    for (int e = 0; e <= kQk; ++e) {
        const int i = tid + e * kDecodeThreads;
        const bool active = e < kQk ? i < 2 * dk : tid < kCols;
        const int c = e < kQk ? qkChannel(i) : 2 * dims.nK * dk + j * dv + c0 + tid;
#pragma unroll
        for (int m = 0; m < kTaps; ++m) {
            const bool tap = active && m < kernel;
            taps[e][m] = tap ? convWeight[std::size_t(c) * kernel + m] : 0.0f;
            window[e][m] = tap && m < hist
                ? ring[std::size_t(c) * kernel + convRingIndex(at - hist + m, kernel)]
                : 0.0f;
        }
    }
    if (tid == 0 && (reinterpret_cast<std::uintptr_t>(normWeight) & 15) == 0 && dv % 4 == 0)
        prefetchL2(normWeight, unsigned(dv) * 4u);
    chainedKernelEntry(); // the token's projections are the previous kernels' output

    // The conv of each channel in the CPU's order, then SiLU; the ring takes the input (q and
    // k by the key head's first value head's first block, each value column by its block).
    const float* in = qkv + std::size_t(row) * dims.convDim;
    const bool qkWriter = slice == 0 && (dims.tiled ? j < dims.nK : j % (dims.nV / dims.nK) == 0);
    float sumSqQ = 0.0f, sumSqK = 0.0f;
#pragma unroll
    for (int e = 0; e <= kQk; ++e) {
        const int i = tid + e * kDecodeThreads;
        const bool active = e < kQk ? i < 2 * dk : tid < kCols;
        if (!active)
            continue;
        const int c = e < kQk ? qkChannel(i) : 2 * dims.nK * dk + j * dv + c0 + tid;
        const float x = in[c];
        float acc = 0.0f;
#pragma unroll
        for (int m = 0; m < kTaps; ++m)
            if (m < kernel)
                acc += taps[e][m] * (m < hist ? window[e][m] : x);
        const float y = siluF(acc);
        if (e == kQk || qkWriter)
            ring[std::size_t(c) * kernel + convRingIndex(at, kernel)] = x;
        if (e == kQk)
            vS[tid] = y;
        else if (i < dk) {
            qS[i] = y;
            sumSqQ += y * y;
        } else {
            kS[i - dk] = y;
            sumSqK += y * y;
        }
    }
    sumSqQ = warpSum(sumSqQ);
    sumSqK = warpSum(sumSqK);
    if (lane == 0) {
        sumSqWarp[0][warp] = sumSqQ;
        sumSqWarp[1][warp] = sumSqK;
    }
    const float gate = negA[j] * softplusF(alpha[std::size_t(row) * dims.nV + j] + dtBias[j]);
    const float decay = expf(gate);
    const float b = sigmoidF(beta[std::size_t(row) * dims.nV + j]);
    __syncthreads();
    float totalQ = 0.0f, totalK = 0.0f;
    for (int w = 0; w < kDecodeWarps; ++w) {
        totalQ += sumSqWarp[0][w];
        totalK += sumSqWarp[1][w];
    }
    const float qNorm = 1.0f / sqrtf(totalQ + 1e-6f), kNorm = 1.0f / sqrtf(totalK + 1e-6f);
    float kq = 0.0f;
    for (int d = tid; d < dk; d += kDecodeThreads)
        kq += (qS[d] * qNorm) * (kS[d] * kNorm);
    kq = warpSum(kq);
    if (lane == 0)
        kqWarp[warp] = kq;
    __syncthreads();

    // Column sums S^T k and S^T q of the old state; the decay is applied after.
    float4 sk = make_float4(0.f, 0.f, 0.f, 0.f), sq = sk;
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
        const int d = p * kRowsPerPass + rowInPass;
        if (d < dk) {
            const float kd = kS[d] * kNorm, qd = qS[d] * qNorm;
            sk.x += st[p].x * kd, sk.y += st[p].y * kd, sk.z += st[p].z * kd, sk.w += st[p].w * kd;
            sq.x += st[p].x * qd, sq.y += st[p].y * qd, sq.z += st[p].z * qd, sq.w += st[p].w * qd;
        }
    }
    for (int offset = kLanesPerRow; offset < 32; offset <<= 1) {
        sk.x += __shfl_xor_sync(0xffffffffu, sk.x, offset);
        sk.y += __shfl_xor_sync(0xffffffffu, sk.y, offset);
        sk.z += __shfl_xor_sync(0xffffffffu, sk.z, offset);
        sk.w += __shfl_xor_sync(0xffffffffu, sk.w, offset);
        sq.x += __shfl_xor_sync(0xffffffffu, sq.x, offset);
        sq.y += __shfl_xor_sync(0xffffffffu, sq.y, offset);
        sq.z += __shfl_xor_sync(0xffffffffu, sq.z, offset);
        sq.w += __shfl_xor_sync(0xffffffffu, sq.w, offset);
    }
    if (lane < kLanesPerRow) {
        *reinterpret_cast<float4*>(&reduceK[warp][lane * 4]) = sk;
        *reinterpret_cast<float4*>(&reduceQ[warp][lane * 4]) = sq;
    }
    __syncthreads();

    // delta = beta (v - exp(g) S^T k); o = (exp(g) S + k delta^T)^T q / sqrt(dk).
    if (tid < kCols) {
        float skSum = 0.0f, sqSum = 0.0f, kqSum = 0.0f;
        for (int w = 0; w < kDecodeWarps; ++w) {
            skSum += reduceK[w][tid];
            sqSum += reduceQ[w][tid];
            kqSum += kqWarp[w];
        }
        const int col = c0 + tid;
        const float delta = (vS[tid] - decay * skSum) * b;
        deltaS[tid] = delta;
        const float o = (decay * sqSum + kqSum * delta) * dims.qScale;
        core[std::size_t(row) * dims.nV * dv + std::size_t(j) * dv + col] = o;
        __threadfence(); // visible before this block's count
    }
    __syncthreads();

    // The head's last block to finish normalises the whole head, resets the count for the next
    // step and writes the gates in place (every block of the head has read them by then).
    // Only the output has to be visible before the count; the state stores go out after it.
    int* count = counters + std::size_t(slot) * dims.nV + j;
    if (tid == 0)
        lastBlock = atomicAdd(count, 1) == slices - 1;
    __syncthreads();
    const bool last = lastBlock;
    if (last) {
        __threadfence(); // the other blocks' outputs are read after their count
        if (tid == 0) {
            *count = 0;
            alpha[std::size_t(row) * dims.nV + j] = gate;
            beta[std::size_t(row) * dims.nV + j] = b;
        }
    }

    const float4 dl = *reinterpret_cast<const float4*>(&deltaS[cg * 4]);
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
        const int d = p * kRowsPerPass + rowInPass;
        if (d < dk) {
            const float kd = kS[d] * kNorm;
            float4 n;
            n.x = decay * st[p].x + kd * dl.x;
            n.y = decay * st[p].y + kd * dl.y;
            n.z = decay * st[p].z + kd * dl.z;
            n.w = decay * st[p].w + kd * dl.w;
            *reinterpret_cast<float4*>(head + std::size_t(d) * dv + c0 + cg * 4) = n;
        }
    }
    if (!last)
        return;
    float* o = core + std::size_t(row) * dims.nV * dv + std::size_t(j) * dv;
    constexpr int kPerThread = (kMaxHeadDim + kDecodeThreads - 1) / kDecodeThreads;
    float x[kPerThread];
    float sumSq = 0.0f;
#pragma unroll
    for (int e = 0; e < kPerThread; ++e) {
        const int d = tid + e * kDecodeThreads;
        x[e] = d < dv ? __ldcg(o + d) : 0.0f;
        sumSq += x[e] * x[e];
    }
    sumSq = warpSum(sumSq);
    if (lane == 0)
        normWarp[warp] = sumSq;
    __syncthreads();
    sumSq = 0.0f;
    for (int w = 0; w < kDecodeWarps; ++w)
        sumSq += normWarp[w];
    const float scale = 1.0f / sqrtf(sumSq / float(dv) + dims.eps);
    const float* zr = z + std::size_t(row) * dims.nV * dv + std::size_t(j) * dv;
#pragma unroll
    for (int e = 0; e < kPerThread; ++e) {
        const int d = tid + e * kDecodeThreads;
        if (d < dv)
            o[d] = x[e] * scale * normWeight[d] * siluF(zr[d]);
    }
}

struct DecodeArgs {
    const float* qkv;
    float *alpha, *beta;
    const float *z, *convWeight, *dtBias, *negA, *normWeight;
    Dims dims;
    Rows rows;
    DeltaNetStates states;
    float* core;
};

template <int kCols, int kDk, int kK>
void launchDecodeKernel(const dim3& grid, cudaStream_t stream, const DecodeArgs& a)
{
    launchChained(decodeKernel<kCols, kDk, kK>, dim3(grid), dim3(kDecodeThreads), 0, stream, a.qkv,
        a.alpha, a.beta, a.z, a.convWeight, a.dtBias, a.negA, a.normWeight, a.dims, a.rows,
        a.states.conv, a.states.recurrent, a.core, a.states.counters);
}

template <int kCols>
void launchDecodeColumns(const dim3& grid, cudaStream_t stream, const DecodeArgs& a)
{
    const bool dk128 = a.dims.dk == 128, width4 = a.dims.kernel == 4;
    if (dk128 && width4)
        launchDecodeKernel<kCols, 128, 4>(grid, stream, a);
    else if (dk128)
        launchDecodeKernel<kCols, 128, 0>(grid, stream, a);
    else if (width4)
        launchDecodeKernel<kCols, 0, 4>(grid, stream, a);
    else
        launchDecodeKernel<kCols, 0, 0>(grid, stream, a);
}

} // namespace

cudaError_t launchDecode(const float* qkv, float* alpha, float* beta, const float* z,
    const float* convWeight, const float* dtBias, const float* negA, const float* normWeight,
    const Dims& dims, const Rows& rows, const DeltaNetStates& states, float* core, int columns,
    cudaStream_t stream)
{
    if (columns == 0) // 32 where dv allows: no recorded measurement (the benchmark compares them)
        columns = dims.dv % 32 == 0 ? 32 : 16;
    if ((columns != 16 && columns != 32) || dims.dv % columns != 0)
        return cudaErrorInvalidValue;
    const dim3 grid(dims.dv / columns, dims.nV, rows.sequences);
    const DecodeArgs a { qkv, alpha, beta, z, convWeight, dtBias, negA, normWeight, dims, rows,
        states, core };
    if (columns == 32)
        launchDecodeColumns<32>(grid, stream, a);
    else
        launchDecodeColumns<16>(grid, stream, a);
    return cudaGetLastError();
}

} // namespace cw::kernels::cuda::deltanet
