// Portable integer dot products of k-quant rows with Q8_K activations, the dispatch to the
// AVX2 versions, and the row/token tiling of matMulQ8K.
#include "kernels/cpu/quant/dot_q8k.h"

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/quant/dot.h"
#include "kernels/cpu/quant/dot_q8k_avx2.h"
#include "kernels/cpu/quant/dot_q8k_avx512.h"

#include <algorithm>
#include <atomic>
#include <cassert>

namespace cw::kernels::quant {
namespace {

float dotQ4KPortable(const BlockQ4_K* b, const BlockQ8K* x, std::int64_t nb)
{
    float sum = 0.0f;
    for (std::int64_t i = 0; i < nb; ++i) {
        std::int32_t sumq = 0, summ = 0;
        for (int j = 0; j < 4; ++j) {
            std::uint8_t sc0, m0, sc1, m1;
            scaleMinK4(2 * j, b[i].scales, sc0, m0);
            scaleMinK4(2 * j + 1, b[i].scales, sc1, m1);
            const std::uint8_t* q = b[i].qs + 32 * j;
            const std::int8_t* a = x[i].qs + 64 * j;
            std::int32_t s0 = 0, s1 = 0;
            for (int l = 0; l < 32; ++l) {
                s0 += (q[l] & 0xF) * a[l];
                s1 += (q[l] >> 4) * a[32 + l];
            }
            sumq += sc0 * s0 + sc1 * s1;
            const std::int16_t* bs = x[i].bsums + 4 * j;
            summ += m0 * (bs[0] + bs[1]) + m1 * (bs[2] + bs[3]);
        }
        sum += x[i].d * (fp16ToFp32(b[i].d) * float(sumq) - fp16ToFp32(b[i].dmin) * float(summ));
    }
    return sum;
}

float dotQ5KPortable(const BlockQ5_K* b, const BlockQ8K* x, std::int64_t nb)
{
    float sum = 0.0f;
    for (std::int64_t i = 0; i < nb; ++i) {
        std::int32_t sumq = 0, summ = 0;
        for (int j = 0; j < 4; ++j) {
            std::uint8_t sc0, m0, sc1, m1;
            scaleMinK4(2 * j, b[i].scales, sc0, m0);
            scaleMinK4(2 * j + 1, b[i].scales, sc1, m1);
            const std::uint8_t* q = b[i].qs + 32 * j;
            const std::int8_t* a = x[i].qs + 64 * j;
            std::int32_t s0 = 0, s1 = 0;
            for (int l = 0; l < 32; ++l) {
                const int h0 = ((b[i].qh[l] >> (2 * j)) & 1) << 4;
                const int h1 = ((b[i].qh[l] >> (2 * j + 1)) & 1) << 4;
                s0 += ((q[l] & 0xF) | h0) * a[l];
                s1 += ((q[l] >> 4) | h1) * a[32 + l];
            }
            sumq += sc0 * s0 + sc1 * s1;
            const std::int16_t* bs = x[i].bsums + 4 * j;
            summ += m0 * (bs[0] + bs[1]) + m1 * (bs[2] + bs[3]);
        }
        sum += x[i].d * (fp16ToFp32(b[i].d) * float(sumq) - fp16ToFp32(b[i].dmin) * float(summ));
    }
    return sum;
}

// Q6_K quants are 6-bit unsigned minus 32: sum (q - 32) a = sum q a - 32 sum a, per 16-group.
float dotQ6KPortable(const BlockQ6_K* b, const BlockQ8K* x, std::int64_t nb)
{
    float sum = 0.0f;
    for (std::int64_t i = 0; i < nb; ++i) {
        std::int32_t groups[16] = {};
        for (int h = 0; h < 2; ++h) {
            const std::uint8_t* ql = b[i].ql + 64 * h;
            const std::uint8_t* qh = b[i].qh + 32 * h;
            const std::int8_t* a = x[i].qs + 128 * h;
            std::int32_t* g = groups + 8 * h;
            for (int l = 0; l < 32; ++l) {
                const int q1 = (ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4);
                const int q2 = (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4);
                const int q3 = (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4);
                const int q4 = (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4);
                g[0 + l / 16] += q1 * a[l];
                g[2 + l / 16] += q2 * a[l + 32];
                g[4 + l / 16] += q3 * a[l + 64];
                g[6 + l / 16] += q4 * a[l + 96];
            }
        }
        std::int32_t isum = 0;
        for (int g = 0; g < 16; ++g)
            isum += b[i].scales[g] * (groups[g] - 32 * x[i].bsums[g]);
        sum += x[i].d * fp16ToFp32(b[i].d) * float(isum);
    }
    return sum;
}

float dotRowQ8KPortable(TensorType type, const void* row, const BlockQ8K* x, std::int64_t n)
{
    switch (type) {
    case TensorType::Q4_K:
        return dotQ4KPortable(static_cast<const BlockQ4_K*>(row), x, n / kQK_K);
    case TensorType::Q5_K:
        return dotQ5KPortable(static_cast<const BlockQ5_K*>(row), x, n / kQK_K);
    case TensorType::Q6_K:
        return dotQ6KPortable(static_cast<const BlockQ6_K*>(row), x, n / kQK_K);
    default:
        assert(false && "dotRowQ8K on a type without an integer product");
        return 0.0f;
    }
}

using RowDotQ8K = float (*)(TensorType, const void*, const BlockQ8K*, std::int64_t);

// Weights come from a file mapping in 4 KB pages, where the hardware prefetchers stop at
// every page boundary; asking for the row about 4 KB ahead keeps the stream going across
// pages while this row is multiplied.
inline void prefetchRow(const std::uint8_t* row, std::size_t bytes)
{
    for (std::size_t offset = 0; offset < bytes; offset += 64)
        __builtin_prefetch(row + offset, 0, 0);
}

inline std::int64_t rowsAhead(std::size_t rowStrideBytes)
{
    return std::int64_t((4096 + rowStrideBytes - 1) / rowStrideBytes);
}

std::atomic<bool>& vnniSetting()
{
    static std::atomic<bool> on { cpuFeatures().avx512vnni };
    return on;
}

bool withVnni()
{
    return vnniSetting().load(std::memory_order_relaxed);
}

RowDotQ8K rowDotQ8K()
{
    switch (activeCpuKernelPath()) {
    case CpuKernelPath::Avx512:
        return withVnni() ? &dotRowQ8KAvx512Vnni : &dotRowQ8KAvx512;
    case CpuKernelPath::Avx2:
        return &dotRowQ8KAvx2;
    case CpuKernelPath::Portable:
        break;
    }
    return &dotRowQ8KPortable;
}

} // namespace

void setQ8KVnni(bool on)
{
    vnniSetting().store(on && cpuFeatures().avx512vnni, std::memory_order_relaxed);
}

bool hasQ8KDot(TensorType type)
{
    return type == TensorType::Q4_K || type == TensorType::Q5_K || type == TensorType::Q6_K;
}

float dotRowQ8K(TensorType type, const void* row, const BlockQ8K* x, std::int64_t n)
{
    return rowDotQ8K()(type, row, x, n);
}

void matVecRowsQ8K(TensorType type, const void* weights, std::size_t rowStrideBytes,
    std::int64_t cols, const BlockQ8K* x, std::int64_t begin, std::int64_t end, float* y)
{
    const RowDotQ8K dot = rowDotQ8K();
    const auto* base = static_cast<const std::uint8_t*>(weights);
    const std::int64_t ahead = rowsAhead(rowStrideBytes);
    for (std::int64_t r = begin; r < end; ++r) {
        if (r + ahead < end)
            prefetchRow(base + std::size_t(r + ahead) * rowStrideBytes, rowStrideBytes);
        y[r - begin] = dot(type, base + std::size_t(r) * rowStrideBytes, x, cols);
    }
}

void matMulRowsQ8K(TensorType type, const void* weights, std::size_t rowStrideBytes,
    std::int64_t cols, const BlockQ8K* x, std::int64_t nTokens, std::int64_t begin,
    std::int64_t end, float* y, std::int64_t yStride)
{
    assert(hasQ8KDot(type) && cols % kQK_K == 0);
    const auto* base = static_cast<const std::uint8_t*>(weights);
    const std::int64_t blocks = cols / kQK_K;
    if (nTokens == 1) {
        matVecRowsQ8K(type, weights, rowStrideBytes, cols, x, begin, end, y + begin);
        return;
    }
    // ~64 KB of activations per token tile: with a chunk of weight rows it fits in L2.
    const std::int64_t tile
        = std::max<std::int64_t>(1, (64 * 1024) / (blocks * std::int64_t(sizeof(BlockQ8K))));
    // Up to 4 tokens per call share the unpacking of each weight block, 8 with VNNI (whose
    // fused products leave the registers for them: 94 -> 97 GMAC/s for Q4_K, 106 -> 113 for
    // Q6_K on a Zen 4 core; without VNNI 8 spill and lose).
    const RowDotQ8K dot = rowDotQ8K();
    const bool grouped = activeCpuKernelPath() != CpuKernelPath::Portable && hasQ8KTokensAvx2(type);
    using TokensDot = void (*)(
        TensorType, const void*, const BlockQ8K*, std::int64_t, int, std::int64_t, float*);
    const bool wide = activeCpuKernelPath() == CpuKernelPath::Avx512;
    const TokensDot tokensDot = !wide
        ? &dotRowQ8KTokensAvx2
        : (withVnni() ? &dotRowQ8KTokensAvx512Vnni : &dotRowQ8KTokensAvx512);
    const int perCall = wide && withVnni() ? 8 : 4;
    for (std::int64_t t0 = 0; t0 < nTokens; t0 += tile) {
        const std::int64_t t1 = std::min(nTokens, t0 + tile);
        for (std::int64_t r = begin; r < end; ++r) {
            const void* row = base + std::size_t(r) * rowStrideBytes;
            if (!grouped) {
                for (std::int64_t t = t0; t < t1; ++t)
                    y[t * yStride + r] = dot(type, row, x + t * blocks, cols);
                continue;
            }
            for (std::int64_t t = t0; t < t1; t += perCall) {
                const int count = int(std::min<std::int64_t>(perCall, t1 - t));
                float out[8];
                tokensDot(type, row, x + t * blocks, blocks, count, cols, out);
                for (int k = 0; k < count; ++k)
                    y[(t + k) * yStride + r] = out[k];
            }
        }
    }
}

void matMulQ8K(TensorType type, const void* weights, std::size_t rowStrideBytes, std::int64_t rows,
    std::int64_t cols, const BlockQ8K* x, std::int64_t nTokens, float* y, ThreadPool* pool)
{
    auto work = [&](std::int64_t begin, std::int64_t end) {
        matMulRowsQ8K(type, weights, rowStrideBytes, cols, x, nTokens, begin, end, y, rows);
    };
    // Chunks of rows small enough to balance, large enough that a chunk's rows (about
    // 64 KB of weights when several tokens share them) are reused from cache.
    const std::int64_t minRows = nTokens > 1 ? 32 : 16;
    if (pool && pool->size() > 1 && rows >= 2 * minRows)
        pool->parallelFor(rows, work, minRows);
    else
        work(0, rows);
}

} // namespace cw::kernels::quant
