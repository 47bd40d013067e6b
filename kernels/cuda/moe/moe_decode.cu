// routedExperts for decode-sized batches, reading each row straight from device memory (the
// path routedExperts takes; also every size for gate and up of different types): no grouping,
// no host round trip. Kernel 1 gives every
// (token, choice) pair its hidden rows silu(gate_e x) * (up_e x), a warp per row with gate and
// up read in the same pass over x; kernel 2 gives every output value its weighted sum over the
// token's choices, taken in ascending expert order as the CPU sums them. Plain f32 FMA
// throughout: decode reads weights, it does not need the tensor cores.
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/moe/moe_expert_rows.cuh"
#include "kernels/cuda/moe/moe_paths.h"
#include "kernels/cuda/quant/dequant.cuh"
#include "kernels/cuda/quant/mat_vec_int8.cuh"

#include <algorithm>
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
    chainedKernelEntry();
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
    chainedKernelEntry();
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
    chainedKernelEntry();
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

constexpr std::int64_t kMaxGridRows = 65535; // gridDim.y's limit

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
        launchChained(gateUpKernel<Type>, dim3(grid), dim3(kWarps * 32), 0, stream, x, gate.cols,
            ids, k, gate, up, h);
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
        launchChained(oneMatrixKernel<Type>, dim3(grid), dim3(kWarps * 32), 0, stream, x, w.cols,
            ids, k, w, h, combine);
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
        launchChained(downKernel<Type>, dim3(grid), dim3(kWarps * 32), 0, stream, h, ids, weights,
            k, down, out);
    }
};

// The integer products (GemmPrecision other than Float32): x quantized once per token row,
// h once per pair, both in two int8 planes (int_dot.cuh): with one plane the silu(gate) * up
// products amplified int8's ~0.5 % to ~1 % against the CPU's f32 products.
constexpr int kIntPlanes = 2;
// Rows per block: not measured; chosen by reasoning. kIntMaxK: a limit of the kernel (its
// per-choice shared arrays), not tuned.
constexpr int kIntGateUpRows = 4; // gate and up rows per block (8 dot products)
constexpr int kIntDownRows = 4; // output values per block
constexpr int kIntMaxK = 32;
constexpr int kIntDownMaxThreads = 256; // k choices x seg threads (launch bound: no spills)

// blockIdx.x: pair p; rows r0.. (blockIdx.y) of the chosen expert's gate and up, read in the
// same pass over x[token(p)]: h[p][r] = silu(gate . x) * (up . x). Pairs are the grid's fast
// dimension so that every pair's blocks of the same rows run together: pairs that chose the
// same expert then read its rows from L2 (at 32 tokens, 256 pairs share ~160 experts). (Tried and
// taken back: the last of a pair's blocks quantizing that pair's h, to save the quantize launch
// after this one: every block's fence and count made the step 10 % slower on the H200, 381 -> 341
// tok/s.)
template <TensorType Type>
__global__ void __launch_bounds__(32 * int_dot::kMaxWarps)
    intGateUpKernel(quant_detail::QuantizedRows x, std::int64_t hidden, const std::int32_t* ids,
        int k, DeviceExpertStack gate, DeviceExpertStack up, float* h)
{
    chainedKernelEntry();
    constexpr int R = kIntGateUpRows;
    const std::int64_t p = blockIdx.x, ffn = gate.rows;
    const std::int64_t r0 = std::int64_t(blockIdx.y) * R;
    const int e = ids[p];
    const std::int64_t t = p / k;
    const std::uint8_t* rowPtr[2 * R];
#pragma unroll
    for (int i = 0; i < R; ++i) {
        const std::int64_t r = r0 + i < ffn ? r0 + i : ffn - 1;
        rowPtr[i] = expertRow(gate, e, r);
        rowPtr[R + i] = expertRow(up, e, r);
    }
    float acc[2 * R][1];
#pragma unroll
    for (int i = 0; i < 2 * R; ++i)
        acc[i][0] = 0.0f;
    int_dot::accumulateUnits<Type, 1, 2 * R, kIntPlanes>(rowPtr,
        hidden / int_dot::Unit<Type>::kValues, hidden, x.q + t * kIntPlanes * hidden,
        x.s + t * (hidden / 32), acc, int(threadIdx.x), int(blockDim.x));
    float v[2 * R];
#pragma unroll
    for (int i = 0; i < 2 * R; ++i)
        v[i] = acc[i][0];
    __shared__ float total[2 * R];
    int_dot::blockSums<2 * R>(v, total);
    if (int(threadIdx.x) < R && r0 + threadIdx.x < ffn)
        h[p * ffn + r0 + threadIdx.x] = total[R + threadIdx.x] * silu(total[threadIdx.x]);
}

// Block (token t = blockIdx.x, values c0.. from blockIdx.y; tokens the fast dimension, so the
// tokens' blocks of the same down rows run together and share them in L2): `seg` threads per
// choice, choices in ascending expert order,
// each segment dotting its choice's down rows with h[pair]; then out[t][c] = sum over the
// ranks of weight * dot, in ascending expert order.
template <TensorType Type>
__global__ void __launch_bounds__(kIntDownMaxThreads)
    intDownKernel(quant_detail::QuantizedRows h, const std::int32_t* ids, const float* weights,
        int k, DeviceExpertStack down, float* out, int seg)
{
    chainedKernelEntry();
    constexpr int R = kIntDownRows;
    __shared__ int choiceAt[kIntMaxK];
    __shared__ float part[kIntMaxK][R];
    const std::int64_t t = blockIdx.x, hidden = down.rows, ffn = down.cols;
    const std::int64_t c0 = std::int64_t(blockIdx.y) * R;
    if (int(threadIdx.x) < k) {
        const int j = int(threadIdx.x);
        const std::int32_t e = ids[t * k + j];
        int rank = 0;
        for (int i = 0; i < k; ++i) {
            const std::int32_t other = ids[t * k + i];
            rank += other < e || (other == e && i < j);
        }
        choiceAt[rank] = j;
    }
    __syncthreads();
    const int s = int(threadIdx.x) / seg, lane = int(threadIdx.x) % seg;
    float acc[R][1];
#pragma unroll
    for (int r = 0; r < R; ++r)
        acc[r][0] = 0.0f;
    if (s < k) {
        const std::int64_t p = t * k + choiceAt[s];
        const int e = ids[p];
        const std::uint8_t* rowPtr[R];
#pragma unroll
        for (int r = 0; r < R; ++r)
            rowPtr[r] = expertRow(down, e, c0 + r < hidden ? c0 + r : hidden - 1);
        int_dot::accumulateUnits<Type, 1, R, kIntPlanes>(rowPtr, ffn / int_dot::Unit<Type>::kValues,
            ffn, h.q + p * kIntPlanes * ffn, h.s + p * (ffn / 32), acc, lane, seg);
    }
    // Segments are aligned groups of `seg` (a power of two up to 32) lanes of one warp.
#pragma unroll
    for (int r = 0; r < R; ++r)
        for (int o = seg / 2; o > 0; o >>= 1)
            acc[r][0] += __shfl_xor_sync(0xFFFFFFFFu, acc[r][0], o);
    if (s < k && lane == 0)
#pragma unroll
        for (int r = 0; r < R; ++r)
            part[s][r] = acc[r][0];
    __syncthreads();
    if (int(threadIdx.x) < R && c0 + threadIdx.x < hidden) {
        float v = 0.0f;
        for (int i = 0; i < k; ++i)
            v += weights[t * k + choiceAt[i]] * part[i][threadIdx.x];
        out[t * hidden + c0 + threadIdx.x] = v;
    }
}

// Threads per choice in intDownKernel: one per unit of a down row up to a warp.
int intDownSegment(TensorType type, std::int64_t ffn)
{
    const std::int64_t units = ffn / int_dot::unitValues(type);
    if (units >= 32)
        return units % 32 == 0 ? 32 : 0;
    return units > 0 && 32 % units == 0 ? int(units) : 0;
}

struct IntGateUpLaunch {
    const quant_detail::QuantizedRows& x;
    std::int64_t tokens;
    const std::int32_t* ids;
    int k;
    const DeviceExpertStack& gate;
    const DeviceExpertStack& up;
    float* h;
    cudaStream_t stream;
    bool& launched;
    template <TensorType Type> void operator()() const
    {
        if constexpr (int_dot::kHasUnit<Type>) {
            const dim3 grid(
                unsigned(tokens * k), unsigned((gate.rows + kIntGateUpRows - 1) / kIntGateUpRows));
            const int threads
                = 32 * int_dot::warpsForUnits(gate.cols / int_dot::Unit<Type>::kValues);
            launchChained(intGateUpKernel<Type>, dim3(grid), dim3(threads), 0, stream, x, gate.cols,
                ids, k, gate, up, h);
            launched = true;
        }
    }
};

struct IntDownLaunch {
    const quant_detail::QuantizedRows& h;
    std::int64_t tokens;
    const std::int32_t* ids;
    const float* weights;
    int k;
    const DeviceExpertStack& down;
    float* out;
    cudaStream_t stream;
    bool& launched;
    template <TensorType Type> void operator()() const
    {
        if constexpr (int_dot::kHasUnit<Type>) {
            const int seg = intDownSegment(Type, down.cols);
            const int threads = (k * seg + 31) / 32 * 32;
            const dim3 grid(
                unsigned(tokens), unsigned((down.rows + kIntDownRows - 1) / kIntDownRows));
            launchChained(intDownKernel<Type>, dim3(grid), dim3(threads), 0, stream, h, ids,
                weights, k, down, out, seg);
            launched = true;
        }
    }
};

bool intStackSupported(const DeviceExpertStack& s)
{
    return quant_detail::intDotSupports(s.type, s.cols, s.data, s.rowStride)
        && quant_detail::intDotSupports(s.type, s.cols, s.data, s.expertStride);
}

// Scratch of the integer path: h in f32, then the quantized x and h.
struct IntLayout {
    float* h;
    std::byte* x;
    std::byte* hq;
    std::size_t bytes;
};

IntLayout intLayout(
    std::byte* base, std::int64_t tokens, int k, std::int64_t ffn, std::int64_t hidden)
{
    const std::size_t hBytes = (decodeScratchBytes(tokens, k, ffn) + 255) / 256 * 256;
    const std::size_t xBytes = quant_detail::quantizedRowsBytes(tokens, hidden, kIntPlanes);
    const std::size_t hqBytes = quant_detail::quantizedRowsBytes(tokens * k, ffn, kIntPlanes);
    return { reinterpret_cast<float*>(base), base ? base + hBytes : nullptr,
        base ? base + hBytes + xBytes : nullptr, hBytes + xBytes + hqBytes };
}

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
    // The kernels take a pair (gate/up) or a token (down) per grid row, and a grid has at most
    // 65,535 rows: a long prefill whose stacks only this path takes (gate and up of different
    // types, say) goes in slices of tokens. Every index is relative to the pointers given.
    const std::int64_t sliceTokens = std::min<std::int64_t>(tokens, kMaxGridRows / k);
    for (std::int64_t t0 = 0; t0 < tokens; t0 += sliceTokens) {
        const std::int64_t n = std::min(sliceTokens, tokens - t0);
        const float* xs = x + t0 * gate.cols;
        const std::int32_t* is = ids + t0 * k;
        float* hs = h + t0 * k * gate.rows;
        bool known = true;
        if (gate.type == up.type) {
            known = dispatchMatrixType(
                gate.type, GateUpLaunch { xs, n, is, k, gate, up, hs, stream });
        } else {
            known = dispatchMatrixType(
                        gate.type, OneMatrixLaunch { xs, n, is, k, gate, hs, false, stream })
                && dispatchMatrixType(
                    up.type, OneMatrixLaunch { xs, n, is, k, up, hs, true, stream });
        }
        if (!known
            || !dispatchMatrixType(down.type,
                DownLaunch { hs, n, is, weights + t0 * k, k, down, out + t0 * down.rows, stream }))
            return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

bool intDecodeSupports(std::int64_t tokens, int k, const DeviceExpertStack& gate,
    const DeviceExpertStack& up, const DeviceExpertStack& down)
{
    return tokens >= 1 && k >= 1 && k <= kIntMaxK && gate.type == up.type && intStackSupported(gate)
        && intStackSupported(up) && intStackSupported(down) && gate.cols % 32 == 0
        && down.cols % 32 == 0 && intDownSegment(down.type, down.cols) > 0
        && k * intDownSegment(down.type, down.cols) <= kIntDownMaxThreads;
}

std::size_t intDecodeScratchBytes(std::int64_t tokens, int k, std::int64_t ffn, std::int64_t hidden)
{
    return intLayout(nullptr, tokens, k, ffn, hidden).bytes;
}

cudaError_t routedExpertsDecodeInt8(const float* x, std::int64_t tokens, const std::int32_t* ids,
    const float* weights, int k, const DeviceExpertStack& gate, const DeviceExpertStack& up,
    const DeviceExpertStack& down, float* out, DeviceScratch scratch, cudaStream_t stream,
    const ExpertDecodeAids& aids)
{
    if (!intDecodeSupports(tokens, k, gate, up, down))
        return cudaErrorNotSupported;
    const std::int64_t ffn = gate.rows, hidden = gate.cols;
    const IntLayout l = intLayout(scratch.data, tokens, k, ffn, hidden);
    if (scratch.bytes < l.bytes || (reinterpret_cast<std::uintptr_t>(scratch.data) & 255) != 0)
        return cudaErrorInvalidValue;
    quant_detail::QuantizedRows xq, hq;
    cudaError_t err = cudaSuccess;
    if (aids.x2.q && aids.x2.s)
        xq = { aids.x2.q, aids.x2.s, kIntPlanes };
    else if ((err = quant_detail::quantizeRows(
                  x, hidden, tokens, hidden, kIntPlanes, l.x, xq, stream))
        != cudaSuccess)
        return err;
    bool launched = false;
    dispatchMatrixType(
        gate.type, IntGateUpLaunch { xq, tokens, ids, k, gate, up, l.h, stream, launched });
    if (!launched)
        return cudaErrorInvalidValue;
    err = quant_detail::quantizeRows(l.h, ffn, tokens * k, ffn, kIntPlanes, l.hq, hq, stream);
    if (err != cudaSuccess)
        return err;
    launched = false;
    dispatchMatrixType(
        down.type, IntDownLaunch { hq, tokens, ids, weights, k, down, out, stream, launched });
    if (!launched)
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

} // namespace cw::kernels::cuda::moe
