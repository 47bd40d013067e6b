// Prefill: the gated delta rule chunk by chunk (64 tokens) in the WY/UT form of
// flash-linear-attention's chunk_gated_delta_rule, the same algebra as ops::gatedDeltaRuleChunked.
//
// Within a chunk with cumulative log decay cum_i, A[i][j] = beta_i (k_i . k_j) e^(cum_i - cum_j)
// (j < i) and QK[i][j] = (q_i . k_j) e^(cum_i - cum_j) / sqrt(dk) (j <= i). With
//   (I + A) U = beta v,  (I + A) W = beta k e^cum   (forward substitution),
// the chunk's output and state update for the state S at its start are
//   vNew = U - W S,  o = e^cum q S / sqrt(dk) + QK vNew,  S' = e^cum_last S + K_d^T vNew
// (K_d = k e^(cum_last - cum)). Everything not involving S is computed for all chunks at once
// (the transform kernel): o = Q' S + QK U with Q' = e^cum q / sqrt(dk) - QK W. What is left is
// sequential over chunks (the recurrence kernel): per chunk, [W; Q'] S and K_d^T vNew, f32 FMA
// on register tiles, the state slice kept in registers, one block per (sequence, value head,
// column slice) so that one sequence's 32 heads still fill the GPU. The pipelined kernel copies
// chunk c + 1's W, Q', k and cum into shared memory (cp.async) while it computes chunk c; the
// plain one, for shapes whose two stages do not fit, loads each chunk before computing it.
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/deltanet/delta_net_device.cuh"
#include "kernels/cuda/deltanet/delta_net_kernels.h"

namespace cw::kernels::cuda::deltanet {

namespace {

// Block (column slice of kCols, value head, sequence): 4 x (kCols / 16) warps, each thread a
// 4 x 4 tile. Phase 1: [W; Q'] (128 x dk) times the state slice (dk x kCols); phase 2: the
// state update K_d^T (dk x 64) times vNew (64 x kCols). Shared: AT [dk][128] ([W; Q']
// transposed), Sm [dk][kCols] (the state slice), Kd [64][dk], Vn [64][kCols], kdec [64].
template <int kCols, int kDk>
__global__ void __launch_bounds__(kCols * 8) chunkRecurrenceKernel(const float* __restrict__ conv,
    const float* __restrict__ cum, const float* __restrict__ wT, const float* __restrict__ qT,
    Dims dims, Rows rows, float* __restrict__ recurrent, float* __restrict__ core)
{
    chainedKernelEntry();
    constexpr int kThreads = kCols * 8;
    constexpr int kPasses = kDk > 0 ? (kDk + 127) / 128 : kMaxHeadDim / 128;
    extern __shared__ float4 recurrenceShared[];
    const int dk = kDk > 0 ? kDk : dims.dk;
    const int dv = dims.dv, nV = dims.nV;
    float* AT = reinterpret_cast<float*>(recurrenceShared);
    float* Sm = AT + dk * 128;
    float* Kd = Sm + dk * kCols;
    float* Vn = Kd + kChunk * dk;
    float* kdec = Vn + kChunk * kCols;
    __shared__ int chunkBase;
    __shared__ float lastDecay;

    const int tid = threadIdx.x;
    const int s = blockIdx.z;
    const int nSeq = rows.seqTokens[s];
    if (nSeq <= 0)
        return;
    if (tid == 0) {
        int base = 0;
        for (int t = 0; t < s; ++t) {
            const int n = rows.seqTokens[t];
            base += n > 0 ? (n + kChunk - 1) / kChunk : 0;
        }
        chunkBase = base;
    }
    const int j = blockIdx.y;
    const int c0 = blockIdx.x * kCols;
    const int kh = dims.tiled ? j % dims.nK : j / (nV / dims.nK);
    const int kOff = dims.nK * dk + kh * dk, vOff = 2 * dims.nK * dk + j * dv;
    const std::size_t stride = dims.convDim;
    float* head = recurrent + (std::size_t(rows.stateSlots[s]) * nV + j) * std::size_t(dk) * dv;
    const int warp = tid >> 5, lane = tid & 31;
    const int rowA = (warp & 3) * 32 + (lane >> 2) * 4;
    const int colL = (warp >> 2) * 16 + (lane & 3) * 4;

    float4 st[kPasses][4];
#pragma unroll
    for (int p = 0; p < kPasses; ++p)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int m = p * 128 + rowA + r;
            st[p][r] = make_float4(0.f, 0.f, 0.f, 0.f);
            if (m < dk) {
                st[p][r] = load4(head + std::size_t(m) * dv + c0 + colL);
                store4(Sm + m * kCols + colL, st[p][r]);
            }
        }
    __syncthreads();
    const int chunks = (nSeq + kChunk - 1) / kChunk;
    for (int c = 0; c < chunks; ++c) {
        const std::size_t headChunk = std::size_t(chunkBase + c) * nV + j;
        const int n = min(kChunk, nSeq - c * kChunk);
        const int row0 = rows.seqRow0[s] + c * kChunk;
        if (c > 0)
            __syncthreads(); // the previous chunk is done with AT, Kd, Vn
        const float* wSrc = wT + headChunk * dk * kChunk;
        const float* qSrc = qT + headChunk * dk * kChunk;
        for (int idx = tid; idx < dk * 32; idx += kThreads) {
            const int d = idx >> 5, q4 = idx & 31;
            const float4 v = q4 < 16 ? load4(wSrc + d * kChunk + q4 * 4)
                                     : load4(qSrc + d * kChunk + (q4 - 16) * 4);
            store4(AT + d * 128 + q4 * 4, v);
        }
        if (tid < kChunk) {
            const float* cc = cum + headChunk * kChunk;
            const float last = cc[n - 1];
            kdec[tid] = tid < n ? expf(last - cc[tid]) : 0.0f;
            if (tid == 0)
                lastDecay = expf(last);
        }
        __syncthreads();
        const int quads = dk / 4;
        for (int idx = tid; idx < kChunk * quads; idx += kThreads) {
            const int i = idx / quads, d4 = idx - i * quads;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (i < n) {
                v = load4(conv + std::size_t(row0 + i) * stride + kOff + d4 * 4);
                const float e = kdec[i];
                v = make_float4(v.x * e, v.y * e, v.z * e, v.w * e);
            }
            store4(Kd + i * dk + d4 * 4, v);
        }

        float acc[4][4] = {};
#pragma unroll 4
        for (int d = 0; d < dk; ++d) {
            const float4 a = load4(AT + d * 128 + rowA);
            const float4 b = load4(Sm + d * kCols + colL);
            const float av[4] = { a.x, a.y, a.z, a.w }, bv[4] = { b.x, b.y, b.z, b.w };
#pragma unroll
            for (int r = 0; r < 4; ++r)
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    acc[r][q] += av[r] * bv[q];
        }
        if (rowA < kChunk) { // W rows: vNew = U - W S
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const int i = rowA + r;
                float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
                if (i < n) {
                    const float4 u
                        = load4(conv + std::size_t(row0 + i) * stride + vOff + c0 + colL);
                    v = make_float4(
                        u.x - acc[r][0], u.y - acc[r][1], u.z - acc[r][2], u.w - acc[r][3]);
                }
                store4(Vn + i * kCols + colL, v);
            }
        } else { // Q' rows: o += Q' S
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const int i = rowA - kChunk + r;
                if (i < n) {
                    float* o
                        = core + std::size_t(row0 + i) * nV * dv + std::size_t(j) * dv + c0 + colL;
                    float4 v = load4(o);
                    v.x += acc[r][0], v.y += acc[r][1], v.z += acc[r][2], v.w += acc[r][3];
                    store4(o, v);
                }
            }
        }
        __syncthreads();

        const float e = lastDecay;
#pragma unroll
        for (int p = 0; p < kPasses; ++p) {
            const int m0 = p * 128 + rowA;
            if (m0 >= dk)
                continue;
            float up[4][4] = {};
#pragma unroll 4
            for (int t = 0; t < n; ++t) {
                const float4 a = load4(Kd + t * dk + m0);
                const float4 b = load4(Vn + t * kCols + colL);
                const float av[4] = { a.x, a.y, a.z, a.w }, bv[4] = { b.x, b.y, b.z, b.w };
#pragma unroll
                for (int r = 0; r < 4; ++r)
#pragma unroll
                    for (int q = 0; q < 4; ++q)
                        up[r][q] += av[r] * bv[q];
            }
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                float4& v = st[p][r];
                v = make_float4(
                    e * v.x + up[r][0], e * v.y + up[r][1], e * v.z + up[r][2], e * v.w + up[r][3]);
                store4(Sm + (m0 + r) * kCols + colL, v);
            }
        }
    }
#pragma unroll
    for (int p = 0; p < kPasses; ++p)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int m = p * 128 + rowA + r;
            if (m < dk)
                store4(head + std::size_t(m) * dv + c0 + colL, st[p][r]);
        }
}

// As chunkRecurrenceKernel, with two stages of [AT [dk][128] | K [64][dk] | cum [64]] after
// Sm and Vn. K stays unscaled: the decay e^(cum_last - cum_t) of token t goes on row t of vNew,
// which only the state update reads.
template <int kCols, int kDk>
__global__ void __launch_bounds__(kCols * 8)
    chunkRecurrencePipelinedKernel(const float* __restrict__ conv, const float* __restrict__ cum,
        const float* __restrict__ wT, const float* __restrict__ qT, Dims dims, Rows rows,
        float* __restrict__ recurrent, float* __restrict__ core)
{
    chainedKernelEntry();
    constexpr int kThreads = kCols * 8;
    constexpr int kPasses = kDk > 0 ? (kDk + 127) / 128 : kMaxHeadDim / 128;
    extern __shared__ float4 pipelinedShared[];
    const int dk = kDk > 0 ? kDk : dims.dk;
    const int dv = dims.dv, nV = dims.nV;
    float* Sm = reinterpret_cast<float*>(pipelinedShared);
    float* Vn = Sm + dk * kCols;
    float* stages = Vn + kChunk * kCols;
    const int stageFloats = dk * 128 + kChunk * dk + kChunk;
    __shared__ int chunkBase;

    const int tid = threadIdx.x;
    const int s = blockIdx.z;
    const int nSeq = rows.seqTokens[s];
    if (nSeq <= 0)
        return;
    if (tid == 0) {
        int base = 0;
        for (int t = 0; t < s; ++t) {
            const int n = rows.seqTokens[t];
            base += n > 0 ? (n + kChunk - 1) / kChunk : 0;
        }
        chunkBase = base;
    }
    const int j = blockIdx.y;
    const int c0 = blockIdx.x * kCols;
    const int kh = dims.tiled ? j % dims.nK : j / (nV / dims.nK);
    const int kOff = dims.nK * dk + kh * dk, vOff = 2 * dims.nK * dk + j * dv;
    const std::size_t stride = dims.convDim;
    const int seqRow0 = rows.seqRow0[s];
    float* head = recurrent + (std::size_t(rows.stateSlots[s]) * nV + j) * std::size_t(dk) * dv;
    const int warp = tid >> 5, lane = tid & 31;
    const int rowA = (warp & 3) * 32 + (lane >> 2) * 4;
    const int colL = (warp >> 2) * 16 + (lane & 3) * 4;

    float4 st[kPasses][4];
#pragma unroll
    for (int p = 0; p < kPasses; ++p)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int m = p * 128 + rowA + r;
            st[p][r] = make_float4(0.f, 0.f, 0.f, 0.f);
            if (m < dk) {
                st[p][r] = load4(head + std::size_t(m) * dv + c0 + colL);
                store4(Sm + m * kCols + colL, st[p][r]);
            }
        }
    __syncthreads(); // chunkBase

    // Copies chunk c's operands into its stage; rows of K past the chunk are never read.
    auto issue = [&](int c) {
        float* AT = stages + (c & 1) * stageFloats;
        float* K = AT + dk * 128;
        float* cumS = K + kChunk * dk;
        const std::size_t headChunk = std::size_t(chunkBase + c) * nV + j;
        const int n = min(kChunk, nSeq - c * kChunk);
        const float* wSrc = wT + headChunk * dk * kChunk;
        const float* qSrc = qT + headChunk * dk * kChunk;
        for (int idx = tid; idx < dk * 32; idx += kThreads) {
            const int d = idx >> 5, q4 = idx & 31;
            copyAsync16(AT + d * 128 + q4 * 4,
                q4 < 16 ? wSrc + d * kChunk + q4 * 4 : qSrc + d * kChunk + (q4 - 16) * 4);
        }
        const int quads = dk / 4;
        const float* kSrc = conv + std::size_t(seqRow0 + c * kChunk) * stride + kOff;
        for (int idx = tid; idx < n * quads; idx += kThreads) {
            const int i = idx / quads, d4 = idx - i * quads;
            copyAsync16(K + i * dk + d4 * 4, kSrc + std::size_t(i) * stride + d4 * 4);
        }
        if (tid < kChunk / 4)
            copyAsync16(cumS + tid * 4, cum + headChunk * kChunk + tid * 4);
        copyAsyncCommit();
    };

    const int chunks = (nSeq + kChunk - 1) / kChunk;
    issue(0);
    for (int c = 0; c < chunks; ++c) {
        // Chunk c has landed, and every thread is done with chunk c - 1 (its stage, Vn, Sm).
        copyAsyncWaitAll();
        __syncthreads();
        if (c + 1 < chunks)
            issue(c + 1);
        const float* AT = stages + (c & 1) * stageFloats;
        const float* K = AT + dk * 128;
        const float* cumS = K + kChunk * dk;
        const int n = min(kChunk, nSeq - c * kChunk);
        const int row0 = seqRow0 + c * kChunk;
        const float last = cumS[n - 1];

        float acc[4][4] = {};
#pragma unroll 4
        for (int d = 0; d < dk; ++d) {
            const float4 a = load4(AT + d * 128 + rowA);
            const float4 b = load4(Sm + d * kCols + colL);
            const float av[4] = { a.x, a.y, a.z, a.w }, bv[4] = { b.x, b.y, b.z, b.w };
#pragma unroll
            for (int r = 0; r < 4; ++r)
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    acc[r][q] += av[r] * bv[q];
        }
        if (rowA < kChunk) { // W rows: vNew = (U - W S) e^(cum_last - cum)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const int i = rowA + r;
                float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
                if (i < n) {
                    const float4 u
                        = load4(conv + std::size_t(row0 + i) * stride + vOff + c0 + colL);
                    const float e = expf(last - cumS[i]);
                    v = make_float4((u.x - acc[r][0]) * e, (u.y - acc[r][1]) * e,
                        (u.z - acc[r][2]) * e, (u.w - acc[r][3]) * e);
                }
                store4(Vn + i * kCols + colL, v);
            }
        } else { // Q' rows: o += Q' S
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const int i = rowA - kChunk + r;
                if (i < n) {
                    float* o
                        = core + std::size_t(row0 + i) * nV * dv + std::size_t(j) * dv + c0 + colL;
                    float4 v = load4(o);
                    v.x += acc[r][0], v.y += acc[r][1], v.z += acc[r][2], v.w += acc[r][3];
                    store4(o, v);
                }
            }
        }
        __syncthreads();

        const float e = expf(last);
#pragma unroll
        for (int p = 0; p < kPasses; ++p) {
            const int m0 = p * 128 + rowA;
            if (m0 >= dk)
                continue;
            float up[4][4] = {};
#pragma unroll 4
            for (int t = 0; t < n; ++t) {
                const float4 a = load4(K + t * dk + m0);
                const float4 b = load4(Vn + t * kCols + colL);
                const float av[4] = { a.x, a.y, a.z, a.w }, bv[4] = { b.x, b.y, b.z, b.w };
#pragma unroll
                for (int r = 0; r < 4; ++r)
#pragma unroll
                    for (int q = 0; q < 4; ++q)
                        up[r][q] += av[r] * bv[q];
            }
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                float4& v = st[p][r];
                v = make_float4(
                    e * v.x + up[r][0], e * v.y + up[r][1], e * v.z + up[r][2], e * v.w + up[r][3]);
                store4(Sm + (m0 + r) * kCols + colL, v);
            }
        }
    }
#pragma unroll
    for (int p = 0; p < kPasses; ++p)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int m = p * 128 + rowA + r;
            if (m < dk)
                store4(head + std::size_t(m) * dv + c0 + colL, st[p][r]);
        }
}

std::size_t recurrenceSharedBytes(int dk, int cols, bool pipelined)
{
    const std::size_t stage = std::size_t(dk * 128 + kChunk * dk + kChunk);
    const std::size_t fixed = std::size_t(dk * cols + kChunk * cols);
    return (pipelined ? fixed + 2 * stage : fixed + stage) * sizeof(float);
}

template <int kCols, int kDk>
cudaError_t launchRecurrence(const dim3& grid, bool pipelined, std::size_t bytes,
    cudaStream_t stream, const float* conv, const float* cum, const float* wT, const float* qT,
    const Dims& dims, const Rows& rows, float* recurrent, float* core)
{
    static std::atomic<std::size_t> allowedPlain { 0 }, allowedPipelined { 0 };
    const auto kernel = pipelined ? chunkRecurrencePipelinedKernel<kCols, kDk>
                                  : chunkRecurrenceKernel<kCols, kDk>;
    const cudaError_t err
        = allowSharedMemory(kernel, pipelined ? allowedPipelined : allowedPlain, bytes);
    if (err != cudaSuccess)
        return err;
    launchChained(kernel, dim3(grid), dim3(kCols * 8), bytes, stream, conv, cum, wT, qT, dims, rows,
        recurrent, core);
    return cudaGetLastError();
}

} // namespace

cudaError_t launchChunkRecurrence(const float* conv, const float* cum, const float* wT,
    const float* qT, const Dims& dims, const Rows& rows, float* recurrent, float* core, int columns,
    int pipeline, cudaStream_t stream)
{
    int device = 0, sharedLimit = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&sharedLimit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (err != cudaSuccess)
        return err;
    const auto fits = [&](int cols, bool pipelined) {
        return recurrenceSharedBytes(dims.dk, cols, pipelined) <= std::size_t(sharedLimit);
    };
    if (columns == 0) // measured on the H200: 32 columns, pipelined where it fits
        columns = dims.dv % 32 == 0 && fits(32, pipeline != 0) ? 32 : 16;
    if ((columns != 16 && columns != 32) || dims.dv % columns != 0)
        return cudaErrorInvalidValue;
    const bool pipelined = pipeline > 0 || (pipeline < 0 && fits(columns, true));
    // A slice asked for by Tuning that the card's shared memory cannot hold (dk 256 at 32
    // columns or double-buffered: 232-414 KB against the H200's 227 KB) is refused as such;
    // the default choice above always fits where dk <= 256.
    if (!fits(columns, pipelined))
        return cudaErrorNotSupported;
    const dim3 grid(dims.dv / columns, dims.nV, rows.sequences);
    const std::size_t bytes = recurrenceSharedBytes(dims.dk, columns, pipelined);
    const bool dk128 = dims.dk == 128;
    if (columns == 32)
        return dk128 ? launchRecurrence<32, 128>(
                   grid, pipelined, bytes, stream, conv, cum, wT, qT, dims, rows, recurrent, core)
                     : launchRecurrence<32, 0>(grid, pipelined, bytes, stream, conv, cum, wT, qT,
                         dims, rows, recurrent, core);
    return dk128 ? launchRecurrence<16, 128>(
               grid, pipelined, bytes, stream, conv, cum, wT, qT, dims, rows, recurrent, core)
                 : launchRecurrence<16, 0>(grid, pipelined, bytes, stream, conv, cum, wT, qT, dims,
                     rows, recurrent, core);
}

} // namespace cw::kernels::cuda::deltanet
