// routedExperts for decode-sized batches, reading each row straight from device memory (the
// path routedExperts takes; also every size for gate and up of different types): no grouping,
// no host round trip. Kernel 1 gives every
// (token, choice) pair its hidden rows silu(gate_e x) * (up_e x), a warp per row with gate and
// up read in the same pass over x; kernel 2 gives every output value its weighted sum over the
// token's choices, taken in ascending expert order as the CPU sums them. Plain f32 FMA
// throughout: decode reads weights, it does not need the tensor cores.
#include "kernels/cuda/moe/moe_expert_rows.cuh"
#include "kernels/cuda/moe/moe_paths.h"
#include "kernels/cuda/quant/dequant.cuh"

#include <climits>

namespace cw::kernels::cuda::moe {
namespace {

constexpr int kWarps = 8; // rows per block
constexpr int kChunk = 8; // choices whose loads are in flight together in kernel 2

// This lane's share of row . x over `groups` groups of eight values.
template <TensorType Type>
__device__ __forceinline__ float laneDot(
    const std::uint8_t* row, const float* x, int groups, int lane)
{
    float acc = 0.0f;
#pragma unroll 4
    for (int g = lane; g < groups; g += 32) {
        float w[8];
        dequant8<Type>(row, g, w);
        const float4 x0 = reinterpret_cast<const float4*>(x)[2 * g];
        const float4 x1 = reinterpret_cast<const float4*>(x)[2 * g + 1];
        acc = fmaf(w[0], x0.x, acc);
        acc = fmaf(w[1], x0.y, acc);
        acc = fmaf(w[2], x0.z, acc);
        acc = fmaf(w[3], x0.w, acc);
        acc = fmaf(w[4], x1.x, acc);
        acc = fmaf(w[5], x1.y, acc);
        acc = fmaf(w[6], x1.z, acc);
        acc = fmaf(w[7], x1.w, acc);
    }
    return acc;
}

// blockIdx.y: pair p = t * k + j; warp: hidden row r. h[p][r] = silu(gate . x) * (up . x).
template <TensorType Type>
__global__ void __launch_bounds__(kWarps * 32) gateUpKernel(const float* x, std::int64_t hidden,
    const std::int32_t* ids, int k, DeviceExpertStack gate, DeviceExpertStack up, float* h)
{
    const int lane = int(threadIdx.x) % 32;
    const std::int64_t r = std::int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
    const std::int64_t p = blockIdx.y;
    if (r >= gate.rows)
        return;
    const int e = ids[p];
    const float* xt = x + (p / k) * hidden;
    const std::uint8_t* gateRow = expertRow(gate, e, r);
    const std::uint8_t* upRow = expertRow(up, e, r);
    const int groups = int(hidden / 8);
    float g = 0.0f, u = 0.0f;
#pragma unroll 4
    for (int i = lane; i < groups; i += 32) {
        float wg[8], wu[8];
        dequant8<Type>(gateRow, i, wg);
        dequant8<Type>(upRow, i, wu);
        const float4 x0 = reinterpret_cast<const float4*>(xt)[2 * i];
        const float4 x1 = reinterpret_cast<const float4*>(xt)[2 * i + 1];
        const float xv[8] = { x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w };
#pragma unroll
        for (int q = 0; q < 8; ++q) {
            g = fmaf(wg[q], xv[q], g);
            u = fmaf(wu[q], xv[q], u);
        }
    }
    g = warpSum(g);
    u = warpSum(u);
    if (lane == 0)
        h[p * gate.rows + r] = u * silu(g);
}

// Gate and up of different types (rare): one matrix per launch. First launch stores the
// gate's products, the second turns them into silu(gate) * up.
template <TensorType Type>
__global__ void __launch_bounds__(kWarps * 32) oneMatrixKernel(const float* x, std::int64_t hidden,
    const std::int32_t* ids, int k, DeviceExpertStack w, float* h, bool combineWithGate)
{
    const int lane = int(threadIdx.x) % 32;
    const std::int64_t r = std::int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
    const std::int64_t p = blockIdx.y;
    if (r >= w.rows)
        return;
    const float v = warpSum(
        laneDot<Type>(expertRow(w, ids[p], r), x + (p / k) * hidden, int(hidden / 8), lane));
    if (lane == 0) {
        float& slot = h[p * w.rows + r];
        slot = combineWithGate ? v * silu(slot) : v;
    }
}

// blockIdx.y: token t; warp: output value c. out[t][c] = sum_j w[t][j] * (down_e(j) row c .
// h[t][j]) with j in ascending expert order.
template <TensorType Type>
__global__ void __launch_bounds__(kWarps * 32) downKernel(const float* h, const std::int32_t* ids,
    const float* weights, int k, DeviceExpertStack down, float* out)
{
    const int lane = int(threadIdx.x) % 32;
    const std::int64_t c = std::int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
    const std::int64_t t = blockIdx.y;
    if (c >= down.rows)
        return;
    const std::int64_t ffn = down.cols;
    const int groups = int(ffn / 8);
    float acc = 0.0f;
    // Choices come in chunks of 32 lanes (k <= 32 in one chunk for every real model).
    for (int base = 0; base < k; base += 32) {
        const int n = k - base < 32 ? k - base : 32;
        const int myId = lane < n ? ids[t * k + base + lane] : INT_MAX;
        int rank = 0; // position of this lane's choice in ascending expert order
        for (int j = 0; j < n; ++j) {
            const int other = __shfl_sync(0xFFFFFFFFu, myId, j);
            rank += other < myId || (other == myId && j < lane);
        }
        for (int s0 = 0; s0 < n; s0 += kChunk) {
            float partial[kChunk];
            float w[kChunk];
#pragma unroll
            for (int s = 0; s < kChunk; ++s) {
                partial[s] = 0.0f;
                w[s] = 0.0f;
                if (s0 + s < n) {
                    const unsigned owner = __ballot_sync(0xFFFFFFFFu, lane < n && rank == s0 + s);
                    const int j = __ffs(int(owner)) - 1;
                    const int e = __shfl_sync(0xFFFFFFFFu, myId, j);
                    const std::int64_t p = t * k + base + j;
                    w[s] = weights[p];
                    partial[s] = laneDot<Type>(expertRow(down, e, c), h + p * ffn, groups, lane);
                }
            }
#pragma unroll
            for (int s = 0; s < kChunk; ++s)
                if (s0 + s < n)
                    acc += w[s] * warpSum(partial[s]);
        }
    }
    if (lane == 0)
        out[t * down.rows + c] = acc;
}

struct GateUpLaunch {
    const float* x;
    std::int64_t tokens;
    const std::int32_t* ids;
    int k;
    const DeviceExpertStack& gate;
    const DeviceExpertStack& up;
    float* h;
    cudaStream_t stream;
    template <TensorType Type> void operator()() const
    {
        const dim3 grid(unsigned((gate.rows + kWarps - 1) / kWarps), unsigned(tokens * k));
        gateUpKernel<Type><<<grid, kWarps * 32, 0, stream>>>(x, gate.cols, ids, k, gate, up, h);
    }
};

struct OneMatrixLaunch {
    const float* x;
    std::int64_t tokens;
    const std::int32_t* ids;
    int k;
    const DeviceExpertStack& w;
    float* h;
    bool combine;
    cudaStream_t stream;
    template <TensorType Type> void operator()() const
    {
        const dim3 grid(unsigned((w.rows + kWarps - 1) / kWarps), unsigned(tokens * k));
        oneMatrixKernel<Type><<<grid, kWarps * 32, 0, stream>>>(x, w.cols, ids, k, w, h, combine);
    }
};

struct DownLaunch {
    const float* h;
    std::int64_t tokens;
    const std::int32_t* ids;
    const float* weights;
    int k;
    const DeviceExpertStack& down;
    float* out;
    cudaStream_t stream;
    template <TensorType Type> void operator()() const
    {
        const dim3 grid(unsigned((down.rows + kWarps - 1) / kWarps), unsigned(tokens));
        downKernel<Type><<<grid, kWarps * 32, 0, stream>>>(h, ids, weights, k, down, out);
    }
};

} // namespace

std::size_t decodeScratchBytes(std::int64_t tokens, int k, std::int64_t ffn)
{
    return std::size_t(tokens) * std::size_t(k) * std::size_t(ffn) * sizeof(float);
}

cudaError_t routedExpertsDecodeDirect(const float* x, std::int64_t tokens, const std::int32_t* ids,
    const float* weights, int k, const DeviceExpertStack& gate, const DeviceExpertStack& up,
    const DeviceExpertStack& down, float* out, DeviceScratch scratch, cudaStream_t stream)
{
    if (scratch.bytes < decodeScratchBytes(tokens, k, gate.rows))
        return cudaErrorInvalidValue;
    float* h = reinterpret_cast<float*>(scratch.data);
    bool known = true;
    if (gate.type == up.type) {
        known = dispatchMatrixType(
            gate.type, GateUpLaunch { x, tokens, ids, k, gate, up, h, stream });
    } else {
        known = dispatchMatrixType(
                    gate.type, OneMatrixLaunch { x, tokens, ids, k, gate, h, false, stream })
            && dispatchMatrixType(
                up.type, OneMatrixLaunch { x, tokens, ids, k, up, h, true, stream });
    }
    if (!known
        || !dispatchMatrixType(
            down.type, DownLaunch { h, tokens, ids, weights, k, down, out, stream }))
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

} // namespace cw::kernels::cuda::moe
