// Decode: the gated delta rule for one token of each sequence, then the gated RMSNorm.
//
// Memory-bound: each head's state (dk x dv f32) is read and written once. The columns of a
// head's state are independent given q, k and the token's v, so a head is split over dv /
// kCols blocks, each streaming its [dk][kCols] slice with 16-byte loads, enough blocks to fill
// the GPU at batch 1. The RMSNorm needs the whole head's output: the last of a head's blocks to
// finish (an atomic count, zeroed by the conv stage of the same step) applies it.
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/deltanet/delta_net_device.cuh"
#include "kernels/cuda/deltanet/delta_net_kernels.h"

namespace cw::kernels::cuda::deltanet {

namespace {

constexpr int kDecodeThreads = 128;
constexpr int kDecodeWarps = kDecodeThreads / 32;

// kDk: 0 for any dk (a multiple of 16 up to 256), else that dk exactly.
template <int kCols, int kDk>
__global__ void __launch_bounds__(kDecodeThreads) decodeKernel(const float* __restrict__ conv,
    const float* __restrict__ g, const float* __restrict__ beta, const float* __restrict__ z,
    const float* __restrict__ normWeight, Dims dims, Rows rows, float* __restrict__ recurrent,
    float* __restrict__ core, int* __restrict__ counters)
{
    constexpr int kLanesPerRow = kCols / 4; // one float4 of columns each
    constexpr int kRowsPerPass = kDecodeThreads / kLanesPerRow;
    constexpr int kPasses = (kDk > 0 ? kDk : kMaxHeadDim) / kRowsPerPass;
    static_assert(kPasses >= 1, "at least one pass");

    __shared__ float kS[kMaxHeadDim], qS[kMaxHeadDim];
    __shared__ __align__(16) float reduceK[kDecodeWarps][kCols];
    __shared__ __align__(16) float reduceQ[kDecodeWarps][kCols];
    __shared__ __align__(16) float deltaS[kCols];
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
    const int row = rows.seqRow0[s];
    const int kh = dims.tiled ? j % dims.nK : j / (dims.nV / dims.nK);
    const int slot = rows.stateSlots[s];
    const int c0 = slice * kCols;
    const int cg = tid % kLanesPerRow;
    const int rowInPass = tid / kLanesPerRow;
    float* head = recurrent + (std::size_t(slot) * dims.nV + j) * std::size_t(dk) * dv;

    // The slice first: its loads are the long pole, so they go out before anything else,
    // even before the wait for the kernel before this one: the state was last written by this
    // kernel in the previous step (or by plain memsets and copies, which order the stream),
    // and the step's row layout by a plain copy before the step.
    float4 st[kPasses];
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
        const int d = p * kRowsPerPass + rowInPass;
        st[p] = d < dk ? *reinterpret_cast<const float4*>(head + std::size_t(d) * dv + c0 + cg * 4)
                       : make_float4(0.f, 0.f, 0.f, 0.f);
    }
    if (tid == 0 && (reinterpret_cast<std::uintptr_t>(normWeight) & 15) == 0 && dv % 4 == 0)
        prefetchL2(normWeight, unsigned(dv) * 4u);
    chainedKernelEntry(); // q, k, v and the gates are the previous kernel's output
    const float* convRow = conv + std::size_t(row) * dims.convDim;
    float kq = 0.0f;
    for (int d = tid; d < dk; d += kDecodeThreads) {
        const float qd = convRow[kh * dk + d];
        const float kd = convRow[dims.nK * dk + kh * dk + d];
        qS[d] = qd;
        kS[d] = kd;
        kq += qd * kd;
    }
    kq = warpSum(kq);
    if (lane == 0)
        kqWarp[warp] = kq;
    const float decay = expf(g[std::size_t(row) * dims.nV + j]);
    const float b = beta[std::size_t(row) * dims.nV + j];
    __syncthreads();

    // Column sums S^T k and S^T q of the old state; the decay is applied after.
    float4 sk = make_float4(0.f, 0.f, 0.f, 0.f), sq = sk;
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
        const int d = p * kRowsPerPass + rowInPass;
        if (d < dk) {
            const float kd = kS[d], qd = qS[d];
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
        const float v = convRow[2 * dims.nK * dk + j * dv + col];
        const float delta = (v - decay * skSum) * b;
        deltaS[tid] = delta;
        const float o = (decay * sqSum + kqSum * delta) * dims.qScale;
        core[std::size_t(row) * dims.nV * dv + std::size_t(j) * dv + col] = o;
        __threadfence(); // visible before this block's count
    }
    __syncthreads();

    // The head's last block to finish normalises the whole head. Only the output has to be
    // visible before the count; the state stores go out after it.
    if (tid == 0)
        lastBlock = atomicAdd(&counters[s * dims.nV + j], 1) == slices - 1;
    __syncthreads();
    const bool last = lastBlock;
    if (last)
        __threadfence(); // the other blocks' outputs are read after their count

    const float4 dl = *reinterpret_cast<const float4*>(&deltaS[cg * 4]);
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
        const int d = p * kRowsPerPass + rowInPass;
        if (d < dk) {
            const float kd = kS[d];
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

template <int kCols, int kDk>
void launchDecodeKernel(const dim3& grid, cudaStream_t stream, const float* conv, const float* g,
    const float* beta, const float* z, const float* normWeight, const Dims& dims, const Rows& rows,
    float* recurrent, float* core, int* counters)
{
    launchChained(decodeKernel<kCols, kDk>, dim3(grid), dim3(kDecodeThreads), 0, stream, conv, g,
        beta, z, normWeight, dims, rows, recurrent, core, counters);
}

} // namespace

cudaError_t launchDecode(const float* conv, const float* g, const float* beta, const float* z,
    const float* normWeight, const Dims& dims, const Rows& rows, float* recurrent, float* core,
    int* counters, int columns, cudaStream_t stream)
{
    if (columns == 0)
        columns = dims.dv % 32 == 0 ? 32 : 16;
    if ((columns != 16 && columns != 32) || dims.dv % columns != 0)
        return cudaErrorInvalidValue;
    const dim3 grid(dims.dv / columns, dims.nV, rows.sequences);
    const bool dk128 = dims.dk == 128;
    if (columns == 32) {
        if (dk128)
            launchDecodeKernel<32, 128>(
                grid, stream, conv, g, beta, z, normWeight, dims, rows, recurrent, core, counters);
        else
            launchDecodeKernel<32, 0>(
                grid, stream, conv, g, beta, z, normWeight, dims, rows, recurrent, core, counters);
    } else {
        if (dk128)
            launchDecodeKernel<16, 128>(
                grid, stream, conv, g, beta, z, normWeight, dims, rows, recurrent, core, counters);
        else
            launchDecodeKernel<16, 0>(
                grid, stream, conv, g, beta, z, normWeight, dims, rows, recurrent, core, counters);
    }
    return cudaGetLastError();
}

} // namespace cw::kernels::cuda::deltanet
