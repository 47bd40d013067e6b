// Prefill, all chunks at once: the UT/WY transform of each (chunk, value head), the part of
// the chunked gated delta rule that does not involve the state (see
// delta_rule_chunk_recurrence.cu for the algebra).
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/deltanet/delta_net_device.cuh"
#include "kernels/cuda/deltanet/delta_net_kernels.h"

namespace cw::kernels::cuda::deltanet {

namespace {

constexpr int kTransformThreads = 128; // at 256, ptxas spills the column phase's registers
constexpr int kSlice = 64; // key dims of q and k staged at a time

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
        // Four partial sums per row, against one chain of dependent FMAs. Measured on the H200
        // (8192 tokens): no gain, 1.58 ms against 1.45 ms, as ptxas then takes 255 registers
        // and 2 blocks fit on an SM instead of 3. Capping them (3 blocks) spills.
#pragma unroll
        for (int i = 1; i < kChunk; ++i) {
            float p0 = 0.0f, p1 = 0.0f, p2 = 0.0f, p3 = 0.0f;
#pragma unroll
            for (int j4 = 0; j4 < i; j4 += 4) {
                const float4 a = load4(As + i * kChunk + j4);
                p0 += a.x * x[j4];
                p1 += a.y * x[j4 + 1];
                p2 += a.z * x[j4 + 2];
                p3 += a.w * x[j4 + 3];
            }
            x[i] -= (p0 + p1) + (p2 + p3);
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
            float p0 = 0.0f, p1 = 0.0f, p2 = 0.0f, p3 = 0.0f;
#pragma unroll
            for (int j4 = 0; j4 <= i; j4 += 4) {
                const float4 a = load4(Qm + i * kChunk + j4);
                p0 += a.x * x[j4];
                p1 += a.y * x[j4 + 1];
                p2 += a.z * x[j4 + 2];
                p3 += a.w * x[j4 + 3];
            }
            x[i] = (p0 + p1) + (p2 + p3);
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
    chainedKernelEntry();
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
    launchChained(chunkTransformKernel, dim3(grid), dim3(kTransformThreads), bytes, stream, conv, g,
        beta, dims, rows, cum, wT, qT, core);
    return cudaGetLastError();
}

} // namespace cw::kernels::cuda::deltanet
