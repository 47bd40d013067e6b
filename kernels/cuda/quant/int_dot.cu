// Activation quantization for the integer products (int_dot.cuh): one warp per 32-value
// block, one value per lane. Deterministic: every reduction is the same butterfly, and lane 0
// writes the block's scales.
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/quant/int8_rounding.cuh"
#include "kernels/cuda/quant/int_dot.cuh"
#include "kernels/cuda/quant/mat_vec.h"

#include <cstddef>
#include <cstdint>

namespace cw::kernels::cuda::quant_detail {
namespace {

constexpr int kQuantWarps = 8;

std::size_t alignUp(std::size_t n)
{
    return (n + 255) / 256 * 256;
}

// blockIdx.y: token row; warp: 32-value block.
template <int Planes>
__global__ void __launch_bounds__(32 * kQuantWarps) quantizeRowsKernel(const float* __restrict__ x,
    std::int64_t xStride, std::int64_t cols, std::int8_t* __restrict__ q, float4* __restrict__ s)
{
    chainedKernelEntry();
    const std::int64_t blocks = cols / 32;
    const std::int64_t b = std::int64_t(blockIdx.x) * kQuantWarps + threadIdx.x / 32;
    const std::int64_t t = blockIdx.y;
    const int lane = int(threadIdx.x) & 31;
    if (b >= blocks)
        return; // a whole warp
    quantizeBlockPlanes<Planes>(
        x[t * xStride + 32 * b + lane], q + t * Planes * cols, cols, b, s + t * blocks + b);
}

} // namespace

std::size_t quantizedRowsBytes(std::int64_t rows, std::int64_t cols, int planes)
{
    return alignUp(std::size_t(rows) * std::size_t(planes) * std::size_t(cols))
        + alignUp(std::size_t(rows) * std::size_t(cols / 32) * sizeof(float4));
}

QuantizedRows quantizedRowsAt(std::byte* at, std::int64_t rows, std::int64_t cols, int planes)
{
    return { reinterpret_cast<const std::int8_t*>(at),
        reinterpret_cast<const float4*>(
            at + alignUp(std::size_t(rows) * std::size_t(planes) * std::size_t(cols))),
        planes };
}

cudaError_t quantizeRows(const float* x, std::int64_t xStride, std::int64_t rows, std::int64_t cols,
    int planes, std::byte* at, QuantizedRows& out, cudaStream_t stream)
{
    if (cols % 32 != 0 || rows < 1 || (planes != 1 && planes != 2) || !at
        || (reinterpret_cast<std::uintptr_t>(at) & 255) != 0)
        return cudaErrorInvalidValue;
    out = quantizedRowsAt(at, rows, cols, planes);
    auto* q = const_cast<std::int8_t*>(out.q);
    auto* s = const_cast<float4*>(out.s);
    const dim3 grid(unsigned((cols / 32 + kQuantWarps - 1) / kQuantWarps), unsigned(rows));
    if (planes == 1)
        launchChained(quantizeRowsKernel<1>, dim3(grid), dim3(32 * kQuantWarps), 0, stream, x,
            xStride, cols, q, s);
    else
        launchChained(quantizeRowsKernel<2>, dim3(grid), dim3(32 * kQuantWarps), 0, stream, x,
            xStride, cols, q, s);
    return cudaGetLastError();
}

bool intDotSupports(TensorType type, std::int64_t cols, const void* data, std::size_t rowStride)
{
    // The unit loads' alignment (int_dot.cuh): Q4_K/Q5_K read 16 bytes at once, IQ4_XS and
    // Q5_1 8, Q4_1 and Q2_K 4, the rest 2.
    std::size_t align = 2;
    switch (type) {
    case TensorType::Q4_K:
    case TensorType::Q5_K:
        align = 16;
        break;
    case TensorType::IQ4_XS:
    case TensorType::Q5_1:
        align = 8;
        break;
    case TensorType::Q4_1:
    case TensorType::Q2_K:
        align = 4;
        break;
    case TensorType::Q4_0:
    case TensorType::Q5_0:
    case TensorType::Q8_0:
    case TensorType::Q3_K:
    case TensorType::Q6_K:
        break;
    default:
        return false; // F32, F16, BF16 keep their float kernels
    }
    const auto traits = tensorTypeTraits(std::uint32_t(type));
    return traits && cols > 0 && cols % 32 == 0 && cols % traits->blockSize == 0
        && (reinterpret_cast<std::uintptr_t>(data) & (align - 1)) == 0 && rowStride % align == 0;
}

} // namespace cw::kernels::cuda::quant_detail
