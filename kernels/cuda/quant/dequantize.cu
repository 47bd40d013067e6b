// Whole-row dequantization on the device: to f32 or bf16 (the prefill path's operands and the
// tests' view of dequant8), embedding lookups, and the f32 -> bf16 activation copy.
#include "kernels/cuda/chained_launch.cuh"
#include "kernels/cuda/quant/chunk_decode.cuh"
#include "kernels/cuda/quant/dequant.cuh"
#include "kernels/cuda/quant/quant_internal.h"
#include "kernels/cuda/quant/quant_products.h"

#include <cstdint>
#include <cuda_bf16.h>

namespace cw::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// Value c of a plain float row (the tail past the last whole group of 8).
template <TensorType Type>
__device__ __forceinline__ float loadValue(const std::uint8_t* row, std::int64_t c)
{
    if constexpr (Type == TensorType::F32)
        return reinterpret_cast<const float*>(row)[c];
    else if constexpr (Type == TensorType::F16)
        return detail::halfBits(reinterpret_cast<const std::uint16_t*>(row)[c]);
    else
        return __uint_as_float(std::uint32_t(reinterpret_cast<const std::uint16_t*>(row)[c]) << 16);
}

__device__ __forceinline__ void storeValue(float* out, float v)
{
    *out = v;
}
__device__ __forceinline__ void storeValue(std::uint16_t* out, float v)
{
    *out = __bfloat16_as_ushort(__float2bfloat16_rn(v));
}

__device__ __forceinline__ void store8(float* out, const float v[8])
{
    if ((reinterpret_cast<std::uintptr_t>(out) & 15) == 0) {
        reinterpret_cast<float4*>(out)[0] = make_float4(v[0], v[1], v[2], v[3]);
        reinterpret_cast<float4*>(out)[1] = make_float4(v[4], v[5], v[6], v[7]);
    } else {
#pragma unroll
        for (int i = 0; i < 8; ++i)
            out[i] = v[i];
    }
}

__device__ __forceinline__ std::uint32_t packBf16(float a, float b)
{
    return std::uint32_t(__bfloat16_as_ushort(__float2bfloat16_rn(a)))
        | (std::uint32_t(__bfloat16_as_ushort(__float2bfloat16_rn(b))) << 16);
}

__device__ __forceinline__ void store8(std::uint16_t* out, const float v[8])
{
    if ((reinterpret_cast<std::uintptr_t>(out) & 15) == 0) {
        *reinterpret_cast<uint4*>(out) = make_uint4(
            packBf16(v[0], v[1]), packBf16(v[2], v[3]), packBf16(v[4], v[5]), packBf16(v[6], v[7]));
    } else {
#pragma unroll
        for (int i = 0; i < 8; ++i)
            storeValue(out + i, v[i]);
    }
}

// One row of `cols` values from `row` to `out`, by the threads of the block.
template <TensorType Type, class Out>
__device__ __forceinline__ void dequantizeRowByBlock(
    const std::uint8_t* row, std::int64_t cols, Out* out)
{
    const std::int64_t groups = cols / 8;
    for (std::int64_t g = threadIdx.x; g < groups; g += blockDim.x) {
        float v[8];
        dequant8<Type>(row, g, v);
        store8(out + 8 * g, v);
    }
    if constexpr (BlockTraits<Type>::kValues == 1) {
        for (std::int64_t c = 8 * groups + threadIdx.x; c < cols; c += blockDim.x)
            storeValue(out + c, loadValue<Type>(row, c));
    }
}

template <TensorType Type, class Out>
__global__ void __launch_bounds__(kThreads) dequantizeRowsKernel(
    const std::uint8_t* w, std::size_t rowStride, std::int64_t row0, std::int64_t cols, Out* out)
{
    chainedKernelEntry();
    const std::int64_t r = blockIdx.x;
    dequantizeRowByBlock<Type>(w + std::size_t(row0 + r) * rowStride, cols, out + r * cols);
}

template <TensorType Type>
__global__ void __launch_bounds__(kThreads)
    gatherRowsKernel(const std::uint8_t* w, std::size_t rowStride, std::int64_t rows,
        std::int64_t cols, const std::int32_t* ids, float* out)
{
    chainedKernelEntry();
    const std::int64_t i = blockIdx.x;
    const std::int32_t id = ids[i];
    float* dst = out + i * cols;
    if (id < 0 || id >= rows) { // a bad id must not read outside the matrix; NaN shows it
        for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x)
            dst[c] = __int_as_float(0x7fc00000);
        return;
    }
    dequantizeRowByBlock<Type>(w + std::size_t(id) * rowStride, cols, dst);
}

template <TensorType Type>
__global__ void __launch_bounds__(kThreads) dequantizeChunksKernel(
    const std::uint8_t* w, std::size_t rowStride, std::int64_t cols, float* out)
{
    chainedKernelEntry();
    const std::int64_t r = blockIdx.x;
    const std::uint8_t* row = w + std::size_t(r) * rowStride;
    for (std::int64_t c = threadIdx.x; c < cols / 32; c += blockDim.x) {
        Chunk<Type> chunk;
        chunk.load(row, c);
#pragma unroll
        for (int p = 0; p < 4; ++p) {
            float v[8];
            chunk.template piece<true>(p, v);
            store8(out + r * cols + 32 * c + 8 * p, v);
        }
    }
}

__global__ void __launch_bounds__(kThreads)
    convertToBf16Kernel(const float* x, std::int64_t xStride, std::int64_t cols, std::uint16_t* out)
{
    chainedKernelEntry();
    const std::int64_t r = blockIdx.x;
    const float* src = x + r * xStride;
    std::uint16_t* dst = out + r * cols;
    const bool vector = (cols % 4 == 0) && (reinterpret_cast<std::uintptr_t>(src) & 15) == 0;
    if (vector) {
        for (std::int64_t c = 4 * std::int64_t(threadIdx.x); c < cols; c += 4 * blockDim.x) {
            const float4 v = *reinterpret_cast<const float4*>(src + c);
            *reinterpret_cast<uint2*>(dst + c) = make_uint2(packBf16(v.x, v.y), packBf16(v.z, v.w));
        }
    } else {
        for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x)
            storeValue(dst + c, src[c]);
    }
}

bool validMatrix(const DeviceMatrix& w)
{
    const auto traits = tensorTypeTraits(std::uint32_t(w.type));
    return supportsMatrixType(w.type) && traits && w.rows >= 0 && w.cols >= 0
        && w.cols % traits->blockSize == 0 && (w.rows == 0 || w.data != nullptr);
}

// Launchers for dispatchMatrixType (a functor per kernel: the files are C++17).
template <class Out> struct DequantizeRowsLaunch {
    const std::uint8_t* w;
    std::size_t rowStride;
    std::int64_t row0, count, cols;
    Out* out;
    cudaStream_t stream;
    template <TensorType Type> void operator()() const
    {
        launchChained(dequantizeRowsKernel<Type, Out>, dim3(unsigned(count)), dim3(kThreads), 0,
            stream, w, rowStride, row0, cols, out);
    }
};

struct GatherRowsLaunch {
    const std::uint8_t* w;
    std::size_t rowStride;
    std::int64_t rows, cols, count;
    const std::int32_t* ids;
    float* out;
    cudaStream_t stream;
    template <TensorType Type> void operator()() const
    {
        launchChained(gatherRowsKernel<Type>, dim3(unsigned(count)), dim3(kThreads), 0, stream, w,
            rowStride, rows, cols, ids, out);
    }
};

struct DequantizeChunksLaunch {
    const std::uint8_t* w;
    std::size_t rowStride;
    std::int64_t rows, cols;
    float* out;
    cudaStream_t stream;
    template <TensorType Type> void operator()() const
    {
        if constexpr (kIsChunked<Type>)
            launchChained(dequantizeChunksKernel<Type>, dim3(unsigned(rows)), dim3(kThreads), 0,
                stream, w, rowStride, cols, out);
    }
};

struct NoLaunch {
    template <TensorType> void operator()() const { }
};

template <class Out>
cudaError_t launchDequantizeRows(
    const DeviceMatrix& w, std::int64_t row0, std::int64_t count, Out* out, cudaStream_t stream)
{
    if (!validMatrix(w) || row0 < 0 || count < 0 || row0 + count > w.rows)
        return cudaErrorInvalidValue;
    if (count == 0 || w.cols == 0)
        return cudaSuccess;
    dispatchMatrixType(w.type,
        DequantizeRowsLaunch<Out> { static_cast<const std::uint8_t*>(w.data), w.rowStride, row0,
            count, w.cols, out, stream });
    return cudaGetLastError();
}

} // namespace

bool supportsMatrixType(TensorType type)
{
    return dispatchMatrixType(type, NoLaunch {});
}

cudaError_t dequantizeToBf16(const DeviceMatrix& w, std::uint16_t* out, cudaStream_t stream)
{
    return launchDequantizeRows(w, 0, w.rows, out, stream);
}

cudaError_t dequantizeToF32(const DeviceMatrix& w, float* out, cudaStream_t stream)
{
    return launchDequantizeRows(w, 0, w.rows, out, stream);
}

cudaError_t gatherRows(const DeviceMatrix& w, const std::int32_t* ids, std::int64_t count,
    float* out, cudaStream_t stream)
{
    if (!validMatrix(w) || count < 0)
        return cudaErrorInvalidValue;
    if (count == 0 || w.cols == 0)
        return cudaSuccess;
    dispatchMatrixType(w.type,
        GatherRowsLaunch { static_cast<const std::uint8_t*>(w.data), w.rowStride, w.rows, w.cols,
            count, ids, out, stream });
    return cudaGetLastError();
}

namespace quant_detail {

cudaError_t dequantizeRows(const DeviceMatrix& w, std::int64_t row0, std::int64_t count, void* out,
    bool bf16, cudaStream_t stream)
{
    return bf16 ? launchDequantizeRows(w, row0, count, static_cast<std::uint16_t*>(out), stream)
                : launchDequantizeRows(w, row0, count, static_cast<float*>(out), stream);
}

cudaError_t dequantizeChunksToF32(const DeviceMatrix& w, float* out, cudaStream_t stream)
{
    if (!validMatrix(w) || tensorTypeTraits(std::uint32_t(w.type))->blockSize < 32)
        return cudaErrorInvalidValue;
    if (w.rows == 0 || w.cols == 0)
        return cudaSuccess;
    dispatchMatrixType(w.type,
        DequantizeChunksLaunch {
            static_cast<const std::uint8_t*>(w.data), w.rowStride, w.rows, w.cols, out, stream });
    return cudaGetLastError();
}

cudaError_t convertToBf16(const float* x, std::int64_t xStride, std::int64_t rows,
    std::int64_t cols, std::uint16_t* out, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    launchChained(convertToBf16Kernel, dim3(unsigned(rows)), dim3(kThreads), 0, stream, x, xStride,
        cols, out);
    return cudaGetLastError();
}

} // namespace quant_detail
} // namespace cw::kernels::cuda
