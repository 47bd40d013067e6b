// Quantized matrix-vector products. The portable path decodes one block at a time with the
// reference dequantization and multiplies; the AVX2 path (dot_avx2.cpp, compiled for
// avx2/fma/f16c and chosen at run time) works on the packed blocks in registers.
#include "kernels/cpu/quant/dot.h"

#include "kernels/cpu/cpu_features.h"

#include "kernels/cpu/quant/dequantize.h"
#include "kernels/cpu/quant/dot_avx2.h"

#if defined(__x86_64__) || defined(__i386__)
#endif

#include <algorithm>
#include <atomic>

#include <cassert>
#include <vector>

namespace cw::kernels::quant {
namespace {

bool detectAvx2()
{
    const CpuFeatures& cpu = cpuFeatures();
    return cpu.avx2 && cpu.fma && cpu.f16c;
}

bool detectAvx512()
{
    const CpuFeatures& cpu = cpuFeatures();
    return detectAvx2() && cpu.avx512f && cpu.avx512bw;
}

CpuKernelPath detectPath()
{
    return detectAvx512() ? CpuKernelPath::Avx512
        : detectAvx2()    ? CpuKernelPath::Avx2
                          : CpuKernelPath::Portable;
}

std::atomic<CpuKernelPath>& pathSetting()
{
    static std::atomic<CpuKernelPath> path { detectPath() };
    return path;
}

float dotRowPortable(TensorType type, const void* row, const float* x, std::int64_t n)
{
    if (type == TensorType::F32) {
        const auto* w = static_cast<const float*>(row);
        float sum = 0;
        for (std::int64_t i = 0; i < n; ++i)
            sum += w[i] * x[i];
        return sum;
    }
    const auto traits = *tensorTypeTraits(std::uint32_t(type));
    // Decode a chunk of blocks (at least 256 values) at a time into a small buffer.
    const std::int64_t chunk = traits.blockSize >= 256 ? traits.blockSize : 256;
    const std::int64_t chunkBytes = chunk / traits.blockSize * traits.blockBytes;
    float buffer[256];
    float sum = 0;
    const auto* bytes = static_cast<const std::uint8_t*>(row);
    for (std::int64_t start = 0; start < n; start += chunk) {
        const std::int64_t count = std::min(chunk, n - start);
        dequantizeRow(type, bytes + start / chunk * chunkBytes, buffer, count);
        float partial = 0;
        for (std::int64_t i = 0; i < count; ++i)
            partial += buffer[i] * x[start + i];
        sum += partial;
    }
    return sum;
}

using RowDot = float (*)(TensorType, const void*, const float*, std::int64_t);

RowDot rowDotFor(CpuKernelPath path)
{
    return path == CpuKernelPath::Portable ? &dotRowPortable : &dotRowAvx2;
}

} // namespace

bool cpuSupportsAvx2()
{
    static const bool supported = detectAvx2();
    return supported;
}

CpuKernelPath activeCpuKernelPath()
{
    return pathSetting().load(std::memory_order_relaxed);
}

bool cpuSupportsAvx512()
{
    static const bool supported = detectAvx512();
    return supported;
}

CpuKernelPath detectedCpuKernelPath()
{
    return detectPath();
}

void setCpuKernelPath(CpuKernelPath path)
{
    if (path == CpuKernelPath::Avx512 && !cpuSupportsAvx512())
        path = CpuKernelPath::Avx2;
    if (path == CpuKernelPath::Avx2 && !cpuSupportsAvx2())
        path = CpuKernelPath::Portable;
    pathSetting().store(path, std::memory_order_relaxed);
}

float dotRow(TensorType type, const void* row, const float* x, std::int64_t n)
{
    return rowDotFor(activeCpuKernelPath())(type, row, x, n);
}

void matVec(TensorType type, const void* weights, std::size_t rowStrideBytes, std::int64_t rows,
    std::int64_t cols, const float* x, float* y, ThreadPool* pool)
{
    matMul(type, weights, rowStrideBytes, rows, cols, x, 1, y, pool);
}

void matMul(TensorType type, const void* weights, std::size_t rowStrideBytes, std::int64_t rows,
    std::int64_t cols, const float* x, std::int64_t nTokens, float* y, ThreadPool* pool)
{
    assert(tensorTypeTraits(std::uint32_t(type))
        && cols % tensorTypeTraits(std::uint32_t(type))->blockSize == 0);
    const RowDot rowDot = rowDotFor(activeCpuKernelPath());
    const auto* base = static_cast<const std::uint8_t*>(weights);
    // Each row is read from memory once; its bytes stay in L1 while every token uses them.
    auto work = [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t r = begin; r < end; ++r) {
            const void* row = base + std::size_t(r) * rowStrideBytes;
            for (std::int64_t t = 0; t < nTokens; ++t)
                y[t * rows + r] = rowDot(type, row, x + t * cols, cols);
        }
    };
    if (pool && pool->size() > 1 && rows >= 64)
        pool->parallelFor(rows, work, 16);
    else
        work(0, rows);
}

} // namespace cw::kernels::quant
