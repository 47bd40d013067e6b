// The shared expert's scalar sigmoid gate, and silu(gate) * x for its hidden rows (the
// shared expert's own products are plain `linear` calls).
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/moe/moe_experts.h"

namespace cw::kernels::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void siluMulKernel(float* x, const float* gate, std::int64_t n)
{
    chainedKernelEntry();
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float g = gate[i];
        x[i] *= g / (1.0f + expf(-g)); // ops::silu
    }
}

// One block per token row: the gate's dot product, then the gated add.
__global__ void addGatedSharedExpertKernel(
    const float* x, const float* gateWeight, const float* down, std::int64_t hidden, float* out)
{
    chainedKernelEntry();
    __shared__ float partial[kThreads / 32];
    __shared__ float gate;
    const std::int64_t t = blockIdx.x;
    const float* xt = x + t * hidden;
    float dot = 0.0f;
    for (std::int64_t c = threadIdx.x; c < hidden; c += kThreads)
        dot = fmaf(gateWeight[c], xt[c], dot);
    for (int off = 16; off > 0; off >>= 1)
        dot += __shfl_xor_sync(0xFFFFFFFFu, dot, off);
    if (threadIdx.x % 32 == 0)
        partial[threadIdx.x / 32] = dot;
    __syncthreads();
    if (threadIdx.x == 0) {
        float sum = 0.0f;
        for (int w = 0; w < kThreads / 32; ++w)
            sum += partial[w];
        gate = 1.0f / (1.0f + expf(-sum)); // ops::sigmoid
    }
    __syncthreads();
    const float* dt = down + t * hidden;
    float* ot = out + t * hidden;
    for (std::int64_t c = threadIdx.x; c < hidden; c += kThreads)
        ot[c] += gate * dt[c];
}

} // namespace

cudaError_t siluMul(float* x, const float* gate, std::int64_t n, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    const std::int64_t blocks = (n + kThreads - 1) / kThreads;
    launchChained(siluMulKernel, dim3(unsigned(blocks < 4096 ? blocks : 4096)), dim3(kThreads), 0,
        stream, x, gate, n);
    return cudaGetLastError();
}

cudaError_t addGatedSharedExpert(const float* x, const float* gateWeight, const float* down,
    std::int64_t tokens, std::int64_t hidden, float* out, cudaStream_t stream)
{
    if (tokens <= 0)
        return cudaSuccess;
    launchChained(addGatedSharedExpertKernel, dim3(unsigned(tokens)), dim3(kThreads), 0, stream, x,
        gateWeight, down, hidden, out);
    return cudaGetLastError();
}

} // namespace cw::kernels::cuda
