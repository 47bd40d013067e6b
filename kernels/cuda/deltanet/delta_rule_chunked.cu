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
// column slice) so that one sequence's 32 heads still fill the GPU.
#include "kernels/cuda/deltanet/delta_net_device.cuh"
#include "kernels/cuda/deltanet/delta_net_kernels.h"

#include <atomic>

namespace cw::kernels::cuda::deltanet {

namespace {

constexpr int kTransformThreads = 128; // at 256, ptxas spills the column phase's registers
constexpr int kSlice = 64; // key dims of q and k staged at a time

// Raises a kernel's dynamic shared memory limit to what it needs, once per kernel (a host
// call, not a stream operation).
template <typename Kernel>
cudaError_t allowSharedMemory(Kernel kernel, std::atomic<std::size_t>& allowed, std::size_t bytes)
{
    if (bytes <= 48 * 1024 || bytes <= allowed.load())
        return cudaSuccess;
    const cudaError_t err
        = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
    if (err == cudaSuccess)
        allowed.store(bytes);
    return err;
}

__device__ __forceinline__ float4 load4(const float* p)
{
    return *reinterpret_cast<const float4*>(p);
}

__device__ __forceinline__ void store4(float* p, float4 v)
{
    *reinterpret_cast<float4*>(p) = v;
}

// The sequence and chunk of global chunk index b, or -1 past the step's chunks.
__device__ int findChunk(const Rows& rows, int b, int& chunkInSeq)
{
    int acc = 0;
    for (int s = 0; s < rows.sequences; ++s) {
        const int n = rows.seqTokens[s];
        const int chunks = n > 0 ? (n + kChunk - 1) / kChunk : 0;
        if (b < acc + chunks) {
            chunkInSeq = b - acc;
            return s;
        }
        acc += chunks;
    }
    return -1;
}

// Thread per column of [U | W] (the RHS beta v | beta k e^cum): forward substitution, then
// y = QK x, both on the column held in registers. A and QK are zero above their diagonals, so
// whole float4s of them apply. Not inlined and with 32-bit offsets: inside the kernel body
// ptxas spilled most of the column (CUDA 13, sm_90).
__device__ __noinline__ void transformColumns(float* __restrict__ conv,
    const float* __restrict__ As, const float* __restrict__ Qm, const float* __restrict__ betS,
    const float* __restrict__ ecumS, Dims dims, int n, int row0, int qOff, int kOff, int vOff,
    std::size_t headChunk, float* __restrict__ wT, float* __restrict__ qT, float* __restrict__ core)
{
    const int dk = dims.dk, dv = dims.dv, nV = dims.nV;
    const int j = blockIdx.y;
    const int stride = dims.convDim;
    float* rows0 = conv + std::size_t(row0) * stride;
    float* core0 = core + std::size_t(row0) * nV * dv + std::size_t(j) * dv;
    const int coreStride = nV * dv;
    for (int col = threadIdx.x; col < dv + dk; col += kTransformThreads) {
        const bool isU = col < dv;
        const int d = col - dv;
        float* src = rows0 + (isU ? vOff + col : kOff + d);
        float x[kChunk];
#pragma unroll
        for (int i = 0; i < kChunk; ++i) {
            const float v = i < n ? src[i * stride] : 0.0f;
            x[i] = isU ? betS[i] * v : betS[i] * v * ecumS[i];
        }
#pragma unroll
        for (int i = 1; i < kChunk; ++i)
#pragma unroll
            for (int j4 = 0; j4 < i; j4 += 4) {
                const float4 a = load4(As + i * kChunk + j4);
                x[i] -= a.x * x[j4];
                x[i] -= a.y * x[j4 + 1];
                x[i] -= a.z * x[j4 + 2];
                x[i] -= a.w * x[j4 + 3];
            }
        if (isU) {
#pragma unroll
            for (int i = 0; i < kChunk; ++i)
                if (i < n)
                    src[i * stride] = x[i]; // U over v
        } else {
            float* dst = wT + (headChunk * dk + d) * kChunk;
#pragma unroll
            for (int i = 0; i < kChunk; i += 4)
                store4(dst + i, make_float4(x[i], x[i + 1], x[i + 2], x[i + 3]));
        }
        // Descending, so x[i] gives way to y[i] only once no later y needs it.
#pragma unroll
        for (int i = kChunk - 1; i >= 0; --i) {
            float y = 0.0f;
#pragma unroll
            for (int j4 = 0; j4 <= i; j4 += 4) {
                const float4 a = load4(Qm + i * kChunk + j4);
                y += a.x * x[j4];
                y += a.y * x[j4 + 1];
                y += a.z * x[j4 + 2];
                y += a.w * x[j4 + 3];
            }
            x[i] = y;
        }
        if (isU) {
#pragma unroll
            for (int i = 0; i < kChunk; ++i)
                if (i < n)
                    core0[i * coreStride + col] = x[i];
        } else {
            const float* q = rows0 + qOff + d;
            float* dst = qT + (headChunk * dk + d) * kChunk;
#pragma unroll
            for (int i = 0; i < kChunk; i += 4) {
                float qp[4];
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    qp[e] = i + e < n
                        ? q[(i + e) * stride] * (ecumS[i + e] * dims.qScale) - x[i + e]
                        : 0.0f;
                store4(dst + i, make_float4(qp[0], qp[1], qp[2], qp[3]));
            }
        }
    }
}

// Block (global chunk, value head). Shared: kT, qT [kSlice][64] (a slice of key dims,
// transposed), A, QK [64][64], cum, beta, e^cum [64].
__global__ void __launch_bounds__(kTransformThreads)
    chunkTransformKernel(float* __restrict__ conv, const float* __restrict__ g,
        const float* __restrict__ beta, Dims dims, Rows rows, float* __restrict__ cumOut,
        float* __restrict__ wT, float* __restrict__ qT, float* __restrict__ core)
{
    extern __shared__ float4 transformShared[];
    float* kTs = reinterpret_cast<float*>(transformShared);
    float* qTs = kTs + kSlice * kChunk;
    float* As = qTs + kSlice * kChunk;
    float* Qm = As + kChunk * kChunk;
    float* cumS = Qm + kChunk * kChunk;
    float* betS = cumS + kChunk;
    float* ecumS = betS + kChunk;
    __shared__ int where[2];

    const int tid = threadIdx.x;
    const int chunk = blockIdx.x;
    const int j = blockIdx.y;
    if (tid == 0) {
        int inSeq = 0;
        where[0] = findChunk(rows, chunk, inSeq);
        where[1] = inSeq;
    }
    __syncthreads();
    const int s = where[0];
    if (s < 0)
        return;
    const int dk = dims.dk, dv = dims.dv, nV = dims.nV;
    const int n = min(kChunk, rows.seqTokens[s] - where[1] * kChunk);
    const int row0 = rows.seqRow0[s] + where[1] * kChunk;
    const int kh = dims.tiled ? j % dims.nK : j / (nV / dims.nK);
    const int qOff = kh * dk, kOff = dims.nK * dk + kh * dk, vOff = 2 * dims.nK * dk + j * dv;
    const std::size_t stride = dims.convDim;
    const std::size_t headChunk = std::size_t(chunk) * nV + j;

    if (tid < kChunk) {
        const bool in = tid < n;
        cumS[tid] = in ? g[std::size_t(row0 + tid) * nV + j] : 0.0f;
        betS[tid] = in ? beta[std::size_t(row0 + tid) * nV + j] : 0.0f;
    }
    __syncthreads();
    if (tid == 0) { // sequential, as the CPU sums it
        float acc = 0.0f;
        for (int i = 0; i < kChunk; ++i) {
            acc += cumS[i];
            cumS[i] = acc;
        }
    }
    __syncthreads();
    if (tid < kChunk) {
        ecumS[tid] = expf(cumS[tid]);
        cumOut[headChunk * kChunk + tid] = cumS[tid];
    }

    // k_i . k_j and q_i . k_j: 4 x 8 tiles, thread (ti, tj).
    const int ti = tid >> 3, tj = tid & 7;
    float kk[4][8] = {}, qk[4][8] = {};
    for (int d0 = 0; d0 < dk; d0 += kSlice) {
        const int quads = min(kSlice, dk - d0) / 4;
        for (int idx = tid; idx < kChunk * quads; idx += kTransformThreads) {
            const int i = idx & (kChunk - 1), d4 = idx / kChunk;
            float4 kv = make_float4(0.f, 0.f, 0.f, 0.f), qv = kv;
            if (i < n) {
                const float* r = conv + std::size_t(row0 + i) * stride + d0 + d4 * 4;
                kv = load4(r + kOff);
                qv = load4(r + qOff);
            }
            kTs[(d4 * 4 + 0) * kChunk + i] = kv.x;
            kTs[(d4 * 4 + 1) * kChunk + i] = kv.y;
            kTs[(d4 * 4 + 2) * kChunk + i] = kv.z;
            kTs[(d4 * 4 + 3) * kChunk + i] = kv.w;
            qTs[(d4 * 4 + 0) * kChunk + i] = qv.x;
            qTs[(d4 * 4 + 1) * kChunk + i] = qv.y;
            qTs[(d4 * 4 + 2) * kChunk + i] = qv.z;
            qTs[(d4 * 4 + 3) * kChunk + i] = qv.w;
        }
        __syncthreads();
        for (int d = 0; d < quads * 4; ++d) {
            const float4 a = load4(kTs + d * kChunk + ti * 4);
            const float4 q = load4(qTs + d * kChunk + ti * 4);
            const float4 b0 = load4(kTs + d * kChunk + tj * 8);
            const float4 b1 = load4(kTs + d * kChunk + tj * 8 + 4);
            const float av[4] = { a.x, a.y, a.z, a.w }, qv[4] = { q.x, q.y, q.z, q.w };
            const float bv[8] = { b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w };
#pragma unroll
            for (int r = 0; r < 4; ++r)
#pragma unroll
                for (int c = 0; c < 8; ++c) {
                    kk[r][c] += av[r] * bv[c];
                    qk[r][c] += qv[r] * bv[c];
                }
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int c = 0; c < 8; ++c) {
            const int i = ti * 4 + r, jj = tj * 8 + c;
            const float decay = expf(cumS[i] - cumS[jj]);
            As[i * kChunk + jj] = jj < i ? betS[i] * kk[r][c] * decay : 0.0f;
            Qm[i * kChunk + jj] = jj <= i ? qk[r][c] * dims.qScale * decay : 0.0f;
        }
    __syncthreads();
    transformColumns(
        conv, As, Qm, betS, ecumS, dims, n, row0, qOff, kOff, vOff, headChunk, wT, qT, core);
}

std::size_t transformSharedBytes()
{
    return (2 * kSlice * kChunk + 2 * kChunk * kChunk + 3 * kChunk) * sizeof(float);
}

// Block (column slice of kCols, value head, sequence): 4 x (kCols / 16) warps, each thread a
// 4 x 4 tile. Phase 1: [W; Q'] (128 x dk) times the state slice (dk x kCols); phase 2: the
// state update K_d^T (dk x 64) times vNew (64 x kCols). Shared: AT [dk][128] ([W; Q']
// transposed), Sm [dk][kCols] (the state slice), Kd [64][dk], Vn [64][kCols], kdec [64].
template <int kCols, int kDk>
__global__ void __launch_bounds__(kCols * 8) chunkRecurrenceKernel(const float* __restrict__ conv,
    const float* __restrict__ cum, const float* __restrict__ wT, const float* __restrict__ qT,
    Dims dims, Rows rows, float* __restrict__ recurrent, float* __restrict__ core)
{
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

std::size_t recurrenceSharedBytes(int dk, int cols)
{
    return std::size_t(dk * 128 + dk * cols + kChunk * dk + kChunk * cols + kChunk) * sizeof(float);
}

template <int kCols, int kDk>
cudaError_t launchRecurrence(const dim3& grid, std::size_t bytes, cudaStream_t stream,
    const float* conv, const float* cum, const float* wT, const float* qT, const Dims& dims,
    const Rows& rows, float* recurrent, float* core)
{
    static std::atomic<std::size_t> allowed { 0 };
    const auto kernel = chunkRecurrenceKernel<kCols, kDk>;
    const cudaError_t err = allowSharedMemory(kernel, allowed, bytes);
    if (err != cudaSuccess)
        return err;
    kernel<<<grid, kCols * 8, bytes, stream>>>(conv, cum, wT, qT, dims, rows, recurrent, core);
    return cudaGetLastError();
}

} // namespace

cudaError_t launchChunkTransform(float* conv, const float* g, const float* beta, const Dims& dims,
    const Rows& rows, int chunkCapacity, float* cum, float* wT, float* qT, float* core,
    cudaStream_t stream)
{
    static std::atomic<std::size_t> allowed { 0 };
    const std::size_t bytes = transformSharedBytes();
    const cudaError_t err = allowSharedMemory(chunkTransformKernel, allowed, bytes);
    if (err != cudaSuccess)
        return err;
    if (chunkCapacity <= 0)
        return cudaSuccess;
    const dim3 grid(chunkCapacity, dims.nV);
    chunkTransformKernel<<<grid, kTransformThreads, bytes, stream>>>(
        conv, g, beta, dims, rows, cum, wT, qT, core);
    return cudaGetLastError();
}

cudaError_t launchChunkRecurrence(const float* conv, const float* cum, const float* wT,
    const float* qT, const Dims& dims, const Rows& rows, float* recurrent, float* core, int columns,
    cudaStream_t stream)
{
    if (columns == 0)
        columns = 16;
    if (dims.dk > 128) // the 32-column slice would not fit in shared memory
        columns = 16;
    if ((columns != 16 && columns != 32) || dims.dv % columns != 0)
        return cudaErrorInvalidValue;
    const dim3 grid(dims.dv / columns, dims.nV, rows.sequences);
    const std::size_t bytes = recurrenceSharedBytes(dims.dk, columns);
    const bool dk128 = dims.dk == 128;
    if (columns == 32)
        return dk128 ? launchRecurrence<32, 128>(
                   grid, bytes, stream, conv, cum, wT, qT, dims, rows, recurrent, core)
                     : launchRecurrence<32, 0>(
                         grid, bytes, stream, conv, cum, wT, qT, dims, rows, recurrent, core);
    return dk128 ? launchRecurrence<16, 128>(
               grid, bytes, stream, conv, cum, wT, qT, dims, rows, recurrent, core)
                 : launchRecurrence<16, 0>(
                     grid, bytes, stream, conv, cum, wT, qT, dims, rows, recurrent, core);
}

} // namespace cw::kernels::cuda::deltanet
