// AVX2/FMA/F16C row dot products on packed blocks. Every function here carries the target
// attribute instead of the file being built with -mavx2, so the binary still starts on any
// x86-64; dot.cpp calls these only after checking the CPU. Non-x86 builds compile an empty
// body that is never called (the portable path is chosen there).
#include "kernels/cpu/quant/dot_avx2.h"

#include "kernels/cpu/quant/dequantize.h"
#include "kernels/cpu/quant/quant_blocks.h"

#include <cassert>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include "kernels/cpu/simd_sum.h"

#include <immintrin.h>

#define CW_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace cw::kernels::quant {
namespace {

using simd::horizontalSum;

CW_AVX2 inline __m256 bytesToFloats(__m128i v) // the low 8 signed bytes
{
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v));
}

// 16 signed bytes times x[0..16), as 8 partial sums.
CW_AVX2 inline __m256 dot16(__m128i q, const float* x)
{
    const __m256 a = _mm256_mul_ps(bytesToFloats(q), _mm256_loadu_ps(x));
    return _mm256_fmadd_ps(bytesToFloats(_mm_srli_si128(q, 8)), _mm256_loadu_ps(x + 8), a);
}

// 32 signed bytes times x[0..32), as 8 partial sums.
CW_AVX2 inline __m256 dot32(__m256i q, const float* x)
{
    return _mm256_add_ps(
        dot16(_mm256_castsi256_si128(q), x), dot16(_mm256_extracti128_si256(q, 1), x + 16));
}

CW_AVX2 inline __m256 sum32(const float* x)
{
    return _mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(x), _mm256_loadu_ps(x + 8)),
        _mm256_add_ps(_mm256_loadu_ps(x + 16), _mm256_loadu_ps(x + 24)));
}

CW_AVX2 inline __m256i shiftRight16(__m256i v, int bits)
{
    return _mm256_srl_epi16(v, _mm_cvtsi32_si128(bits));
}

CW_AVX2 float dotF32(const float* w, const float* x, std::int64_t n)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(x + i), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 8), _mm256_loadu_ps(x + i + 8), a1);
    }
    float sum = horizontalSum(_mm256_add_ps(a0, a1));
    for (; i < n; ++i)
        sum += w[i] * x[i];
    return sum;
}

CW_AVX2 float dotF16(const std::uint16_t* w, const float* x, std::int64_t n)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 w0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i)));
        const __m256 w1
            = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i + 8)));
        a0 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + i), a0);
        a1 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + i + 8), a1);
    }
    float sum = horizontalSum(_mm256_add_ps(a0, a1));
    for (; i < n; ++i)
        sum += fp16ToFp32(w[i]) * x[i];
    return sum;
}

CW_AVX2 inline __m256 bf16x8(const std::uint16_t* w)
{
    const __m256i wide
        = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}

CW_AVX2 float dotBF16(const std::uint16_t* w, const float* x, std::int64_t n)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_fmadd_ps(bf16x8(w + i), _mm256_loadu_ps(x + i), a0);
        a1 = _mm256_fmadd_ps(bf16x8(w + i + 8), _mm256_loadu_ps(x + i + 8), a1);
    }
    float sum = horizontalSum(_mm256_add_ps(a0, a1));
    for (; i < n; ++i)
        sum += bf16ToFp32(w[i]) * x[i];
    return sum;
}

CW_AVX2 float dotQ8_0(const BlockQ8_0* b, const float* x, std::int64_t nb)
{
    __m256 acc = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i, x += kQK8_0) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qs));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16ToFp32(b[i].d)), dot32(q, x), acc);
    }
    return horizontalSum(acc);
}

CW_AVX2 float dotQ4_0(const BlockQ4_0* b, const float* x, std::int64_t nb)
{
    const __m128i lowMask = _mm_set1_epi8(0x0F);
    const __m256i eight = _mm256_set1_epi8(8);
    __m256 acc = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i, x += kQK4_0) {
        const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].qs));
        const __m128i lo = _mm_and_si128(q, lowMask);
        const __m128i hi = _mm_and_si128(_mm_srli_epi16(q, 4), lowMask);
        const __m256i all = _mm256_sub_epi8(_mm256_set_m128i(hi, lo), eight);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16ToFp32(b[i].d)), dot32(all, x), acc);
    }
    return horizontalSum(acc);
}

// Q4_K and Q5_K: sum_i (d*sc*q_i - dmin*m) x_i = d*sc*sum(q_i x_i) - dmin*m*sum(x_i).
CW_AVX2 float dotQ4_K(const BlockQ4_K* b, const float* x, std::int64_t nb)
{
    const __m256i lowMask = _mm256_set1_epi8(0x0F);
    __m256 acc = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(b[i].d), dmin = fp16ToFp32(b[i].dmin);
        for (int j = 0; j < 4; ++j, x += 64) {
            std::uint8_t sc0, m0, sc1, m1;
            scaleMinK4(2 * j, b[i].scales, sc0, m0);
            scaleMinK4(2 * j + 1, b[i].scales, sc1, m1);
            const __m256i q
                = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qs + 32 * j));
            const __m256i lo = _mm256_and_si256(q, lowMask);
            const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), lowMask);
            acc = _mm256_fmadd_ps(_mm256_set1_ps(d * float(sc0)), dot32(lo, x), acc);
            acc = _mm256_fnmadd_ps(_mm256_set1_ps(dmin * float(m0)), sum32(x), acc);
            acc = _mm256_fmadd_ps(_mm256_set1_ps(d * float(sc1)), dot32(hi, x + 32), acc);
            acc = _mm256_fnmadd_ps(_mm256_set1_ps(dmin * float(m1)), sum32(x + 32), acc);
        }
    }
    return horizontalSum(acc);
}

CW_AVX2 float dotQ5_K(const BlockQ5_K* b, const float* x, std::int64_t nb)
{
    const __m256i lowMask = _mm256_set1_epi8(0x0F);
    const __m256i one = _mm256_set1_epi8(1);
    __m256 acc = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(b[i].d), dmin = fp16ToFp32(b[i].dmin);
        const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qh));
        for (int j = 0; j < 4; ++j, x += 64) {
            std::uint8_t sc0, m0, sc1, m1;
            scaleMinK4(2 * j, b[i].scales, sc0, m0);
            scaleMinK4(2 * j + 1, b[i].scales, sc1, m1);
            const __m256i q
                = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qs + 32 * j));
            const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(shiftRight16(qh, 2 * j), one), 4);
            const __m256i h1
                = _mm256_slli_epi16(_mm256_and_si256(shiftRight16(qh, 2 * j + 1), one), 4);
            const __m256i lo = _mm256_or_si256(_mm256_and_si256(q, lowMask), h0);
            const __m256i hi
                = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), lowMask), h1);
            acc = _mm256_fmadd_ps(_mm256_set1_ps(d * float(sc0)), dot32(lo, x), acc);
            acc = _mm256_fnmadd_ps(_mm256_set1_ps(dmin * float(m0)), sum32(x), acc);
            acc = _mm256_fmadd_ps(_mm256_set1_ps(d * float(sc1)), dot32(hi, x + 32), acc);
            acc = _mm256_fnmadd_ps(_mm256_set1_ps(dmin * float(m1)), sum32(x + 32), acc);
        }
    }
    return horizontalSum(acc);
}

// Adds the two 16-value groups of a 32-byte vector of signed quants, each with its scale.
CW_AVX2 inline __m256 scaledPair(__m256i q, const float* x, float s0, float s1, __m256 acc)
{
    acc = _mm256_fmadd_ps(_mm256_set1_ps(s0), dot16(_mm256_castsi256_si128(q), x), acc);
    return _mm256_fmadd_ps(_mm256_set1_ps(s1), dot16(_mm256_extracti128_si256(q, 1), x + 16), acc);
}

// Bits 4-5 of the Q6_K quants: 2 bits of qh taken at `shift`, moved to bit 4.
CW_AVX2 inline __m256i q6High(__m256i qh, int shift, __m256i three)
{
    return _mm256_slli_epi16(_mm256_and_si256(shiftRight16(qh, shift), three), 4);
}

CW_AVX2 float dotQ6_K(const BlockQ6_K* b, const float* x, std::int64_t nb)
{
    const __m256i lowMask = _mm256_set1_epi8(0x0F);
    const __m256i three = _mm256_set1_epi8(3);
    const __m256i bias = _mm256_set1_epi8(32);
    __m256 acc = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(b[i].d);
        for (int h = 0; h < 2; ++h, x += 128) {
            const std::uint8_t* ql = b[i].ql + 64 * h;
            const std::int8_t* sc = b[i].scales + 8 * h;
            const __m256i qlA = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
            const __m256i qlB = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
            const __m256i qh
                = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qh + 32 * h));
            const __m256i q1 = _mm256_sub_epi8(
                _mm256_or_si256(_mm256_and_si256(qlA, lowMask), q6High(qh, 0, three)), bias);
            const __m256i q2 = _mm256_sub_epi8(
                _mm256_or_si256(_mm256_and_si256(qlB, lowMask), q6High(qh, 2, three)), bias);
            const __m256i q3 = _mm256_sub_epi8(
                _mm256_or_si256(
                    _mm256_and_si256(_mm256_srli_epi16(qlA, 4), lowMask), q6High(qh, 4, three)),
                bias);
            const __m256i q4 = _mm256_sub_epi8(
                _mm256_or_si256(
                    _mm256_and_si256(_mm256_srli_epi16(qlB, 4), lowMask), q6High(qh, 6, three)),
                bias);
            acc = scaledPair(q1, x, d * float(sc[0]), d * float(sc[1]), acc);
            acc = scaledPair(q2, x + 32, d * float(sc[2]), d * float(sc[3]), acc);
            acc = scaledPair(q3, x + 64, d * float(sc[4]), d * float(sc[5]), acc);
            acc = scaledPair(q4, x + 96, d * float(sc[6]), d * float(sc[7]), acc);
        }
    }
    return horizontalSum(acc);
}

CW_AVX2 float dotIQ4_XS(const BlockIQ4_XS* b, const float* x, std::int64_t nb)
{
    const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kValuesIQ4NL));
    const __m128i lowMask = _mm_set1_epi8(0x0F);
    __m256 acc = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(b[i].d);
        for (int ib = 0; ib < kQK_K / 32; ++ib, x += 32) {
            const int ls = ((b[i].scales_l[ib / 2] >> 4 * (ib % 2)) & 0xF)
                | (((b[i].scales_h >> 2 * ib) & 3) << 4);
            const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].qs + 16 * ib));
            const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(q, lowMask));
            const __m128i hi
                = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(q, 4), lowMask));
            acc = _mm256_fmadd_ps(
                _mm256_set1_ps(d * float(ls - 32)), dot32(_mm256_set_m128i(hi, lo), x), acc);
        }
    }
    return horizontalSum(acc);
}

// Types without a packed kernel: decode 256 values at a time, then an AVX2 dot.
CW_AVX2 float dotDecoded(TensorType type, const void* row, const float* x, std::int64_t n)
{
    const auto traits = *tensorTypeTraits(std::uint32_t(type));
    const std::int64_t chunk = traits.blockSize >= 256 ? traits.blockSize : 256;
    const std::int64_t chunkBytes = chunk / traits.blockSize * traits.blockBytes;
    alignas(32) float buffer[256];
    float sum = 0;
    const auto* bytes = static_cast<const std::uint8_t*>(row);
    for (std::int64_t start = 0; start < n; start += chunk) {
        const std::int64_t count = chunk < n - start ? chunk : n - start;
        dequantizeRow(type, bytes + start / chunk * chunkBytes, buffer, count);
        sum += dotF32(buffer, x + start, count);
    }
    return sum;
}

} // namespace

float dotRowAvx2(TensorType type, const void* row, const float* x, std::int64_t n)
{
    switch (type) {
    case TensorType::F32:
        return dotF32(static_cast<const float*>(row), x, n);
    case TensorType::F16:
        return dotF16(static_cast<const std::uint16_t*>(row), x, n);
    case TensorType::BF16:
        return dotBF16(static_cast<const std::uint16_t*>(row), x, n);
    case TensorType::Q8_0:
        return dotQ8_0(static_cast<const BlockQ8_0*>(row), x, n / kQK8_0);
    case TensorType::Q4_0:
        return dotQ4_0(static_cast<const BlockQ4_0*>(row), x, n / kQK4_0);
    case TensorType::Q4_K:
        return dotQ4_K(static_cast<const BlockQ4_K*>(row), x, n / kQK_K);
    case TensorType::Q5_K:
        return dotQ5_K(static_cast<const BlockQ5_K*>(row), x, n / kQK_K);
    case TensorType::Q6_K:
        return dotQ6_K(static_cast<const BlockQ6_K*>(row), x, n / kQK_K);
    case TensorType::IQ4_XS:
        return dotIQ4_XS(static_cast<const BlockIQ4_XS*>(row), x, n / kQK_K);
    default:
        return dotDecoded(type, row, x, n);
    }
}

} // namespace cw::kernels::quant

#else

namespace cw::kernels::quant {

float dotRowAvx2(TensorType, const void*, const float*, std::int64_t)
{
    assert(false && "dotRowAvx2 called on a CPU without AVX2");
    return 0.0f;
}

} // namespace cw::kernels::quant

#endif
