// AVX-512 integer dot products of Q4_K and Q6_K rows with Q8_K activations: the AVX2 method
// (maddubs, madd by the sub-block scale, one float multiply per super-block) on 512-bit
// registers, so each instruction covers two sub-block pairs. Target attributes keep the rest
// of the binary baseline x86-64; dot_q8k.cpp calls these only after checking the CPU.
#include "kernels/cpu/quant/dot_q8k_avx512.h"

#include "kernels/cpu/quant/dot_q8k_avx2.h"

#include <cassert>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
// GCC 12's avx512fintrin.h builds _mm512_inserti64x4 and _mm512_castsi256_si512 on a
// deliberately undefined register, which -Wuninitialized reports at every inlined use.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "kernels/cpu/simd_sum.h"

#include <immintrin.h>

#define CW_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))

namespace cw::kernels::quant {
namespace {

CW_AVX512 inline __m256i load256(const void* p)
{
    return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

CW_AVX512 inline __m512i pair256(__m256i low, __m256i high)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
}

// Word-permute indices: 16-bit lane `a` of the source in the low 256 bits, lane `b` in the
// high 256 bits.
CW_AVX512 inline __m512i halves(short a, short b)
{
    return pair256(_mm256_set1_epi16(a), _mm256_set1_epi16(b));
}

// Word-permute indices: lane base+k in every 16-bit lane of 128-bit quarter k.
CW_AVX512 inline __m512i quarters(short base)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(
                                  _mm_set1_epi16(short(base + 1)), _mm_set1_epi16(base))),
        _mm256_set_m128i(_mm_set1_epi16(short(base + 3)), _mm_set1_epi16(short(base + 2))), 1);
}

// Scales (16-bit lanes 0-7) and mins (lanes 8-15) of a Q4_K block; see dot_q8k_avx2.cpp.
CW_AVX512 inline __m256i unpackScalesMins(const std::uint8_t* packed)
{
    std::uint32_t u[3];
    std::memcpy(u, packed, 12);
    const std::uint32_t scales03 = u[0] & 0x3f3f3f3fu;
    const std::uint32_t mins03 = u[1] & 0x3f3f3f3fu;
    const std::uint32_t scales47 = (u[2] & 0x0f0f0f0fu) | (((u[0] >> 6) & 0x03030303u) << 4);
    const std::uint32_t mins47 = ((u[2] >> 4) & 0x0f0f0f0fu) | (((u[1] >> 6) & 0x03030303u) << 4);
    return _mm256_cvtepu8_epi16(
        _mm_set_epi32(int(mins47), int(mins03), int(scales47), int(scales03)));
}

// One Q4_K row against N tokens (x + t * xStride blocks for token t): quants and scales are
// unpacked once; per token the integer sums and float steps do not depend on N, so a batch
// gives exactly what one token at a time gives.
template <int N>
CW_AVX512 void dotQ4K(
    const BlockQ4_K* b, const BlockQ8K* x, std::int64_t xStride, std::int64_t nb, float* out)
{
    const __m512i lowMask = _mm512_set1_epi8(0x0F);
    // Register of 64 quant bytes jj (j = 2jj, 2jj+1): low nibbles are sub-blocks 4jj and
    // 4jj+2 (low and high 256 bits), high nibbles 4jj+1 and 4jj+3.
    const __m512i scaleLo[2] = { halves(0, 2), halves(4, 6) };
    const __m512i scaleHi[2] = { halves(1, 3), halves(5, 7) };
    __m512 acc[N];
    __m256 accMins[N];
    for (int t = 0; t < N; ++t) {
        acc[t] = _mm512_setzero_ps();
        accMins[t] = _mm256_setzero_ps();
    }
    for (std::int64_t i = 0; i < nb; ++i) {
        const __m256i scalesMins = unpackScalesMins(b[i].scales);
        const __m512i scales = _mm512_castsi256_si512(scalesMins);
        __m512i sumi[N];
        for (int t = 0; t < N; ++t)
            sumi[t] = _mm512_setzero_si512();
        for (int jj = 0; jj < 2; ++jj) {
            const __m512i q = _mm512_loadu_si512(b[i].qs + 64 * jj);
            const __m512i lo = _mm512_and_si512(q, lowMask);
            const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), lowMask);
            const __m512i sLo = _mm512_permutexvar_epi16(scaleLo[jj], scales);
            const __m512i sHi = _mm512_permutexvar_epi16(scaleHi[jj], scales);
            for (int t = 0; t < N; ++t) {
                const std::int8_t* a = x[t * xStride + i].qs + 128 * jj;
                const __m512i aLo = pair256(load256(a), load256(a + 64));
                const __m512i aHi = pair256(load256(a + 32), load256(a + 96));
                sumi[t] = _mm512_add_epi32(
                    sumi[t], _mm512_madd_epi16(_mm512_maddubs_epi16(lo, aLo), sLo));
                sumi[t] = _mm512_add_epi32(
                    sumi[t], _mm512_madd_epi16(_mm512_maddubs_epi16(hi, aHi), sHi));
            }
        }
        const float d = _cvtsh_ss(b[i].d), dmin = _cvtsh_ss(b[i].dmin);
        const __m128i mins = _mm256_extracti128_si256(scalesMins, 1);
        const __m256i paired
            = _mm256_set_m128i(_mm_unpackhi_epi16(mins, mins), _mm_unpacklo_epi16(mins, mins));
        for (int t = 0; t < N; ++t) {
            const BlockQ8K& xt = x[t * xStride + i];
            acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(xt.d * d), _mm512_cvtepi32_ps(sumi[t]), acc[t]);
            accMins[t] = _mm256_fmadd_ps(_mm256_set1_ps(xt.d * dmin),
                _mm256_cvtepi32_ps(_mm256_madd_epi16(load256(xt.bsums), paired)), accMins[t]);
        }
    }
    for (int t = 0; t < N; ++t)
        out[t] = _mm512_reduce_add_ps(acc[t]) - simd::horizontalSum(accMins[t]);
}

// One Q6_K row against N tokens, as dotQ4K above.
template <int N>
CW_AVX512 void dotQ6K(
    const BlockQ6_K* b, const BlockQ8K* x, std::int64_t xStride, std::int64_t nb, float* out)
{
    const __m512i lowMask = _mm512_set1_epi8(0x0F);
    const __m512i three = _mm512_set1_epi8(3);
    const __m512i highBits = _mm512_set1_epi8(0x30);
    // Each 128-bit quarter of a maddubs result is one 16-group: groups 8h+0..3 for the low
    // nibbles of half h, 8h+4..7 for the high nibbles.
    const __m512i groupsLow[2] = { quarters(0), quarters(8) };
    const __m512i groupsHigh[2] = { quarters(4), quarters(12) };
    __m512 acc[N];
    for (int t = 0; t < N; ++t)
        acc[t] = _mm512_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i) {
        const __m256i scales16
            = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].scales)));
        const __m512i scales = _mm512_castsi256_si512(scales16);
        __m512i sumi[N];
        for (int t = 0; t < N; ++t) {
            // sum (q - 32) a = sum q a - 32 sum a: the second part from the 16-group sums.
            const __m256i bias = _mm256_slli_epi32(
                _mm256_madd_epi16(load256(x[t * xStride + i].bsums), scales16), 5);
            sumi[t] = _mm512_inserti64x4(
                _mm512_setzero_si512(), _mm256_sub_epi32(_mm256_setzero_si256(), bias), 0);
        }
        for (int h = 0; h < 2; ++h) {
            const __m512i ql = _mm512_loadu_si512(b[i].ql + 64 * h);
            const __m256i qh = load256(b[i].qh + 32 * h);
            const __m512i qhPair = pair256(qh, _mm256_srli_epi16(qh, 2));
            // Values 0-63 of this half: low nibbles with qh bits 0-1 (first 32) and 2-3.
            const __m512i q12 = _mm512_or_si512(_mm512_and_si512(ql, lowMask),
                _mm512_slli_epi16(_mm512_and_si512(qhPair, three), 4));
            // Values 64-127: high nibbles with qh bits 4-5 and 6-7.
            const __m512i q34 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), lowMask),
                _mm512_and_si512(qhPair, highBits));
            const __m512i s12 = _mm512_permutexvar_epi16(groupsLow[h], scales);
            const __m512i s34 = _mm512_permutexvar_epi16(groupsHigh[h], scales);
            for (int t = 0; t < N; ++t) {
                const std::int8_t* a = x[t * xStride + i].qs + 128 * h;
                sumi[t] = _mm512_add_epi32(sumi[t],
                    _mm512_madd_epi16(_mm512_maddubs_epi16(q12, _mm512_loadu_si512(a)), s12));
                sumi[t] = _mm512_add_epi32(sumi[t],
                    _mm512_madd_epi16(_mm512_maddubs_epi16(q34, _mm512_loadu_si512(a + 64)), s34));
            }
        }
        const float d = _cvtsh_ss(b[i].d);
        for (int t = 0; t < N; ++t)
            acc[t] = _mm512_fmadd_ps(
                _mm512_set1_ps(x[t * xStride + i].d * d), _mm512_cvtepi32_ps(sumi[t]), acc[t]);
    }
    for (int t = 0; t < N; ++t)
        out[t] = _mm512_reduce_add_ps(acc[t]);
}

template <int N>
void dotTokens(TensorType type, const void* row, const BlockQ8K* x, std::int64_t xStride,
    std::int64_t nb, float* out)
{
    if (type == TensorType::Q4_K)
        dotQ4K<N>(static_cast<const BlockQ4_K*>(row), x, xStride, nb, out);
    else
        dotQ6K<N>(static_cast<const BlockQ6_K*>(row), x, xStride, nb, out);
}

} // namespace

float dotRowQ8KAvx512(TensorType type, const void* row, const BlockQ8K* x, std::int64_t n)
{
    if (type != TensorType::Q4_K && type != TensorType::Q6_K)
        return dotRowQ8KAvx2(type, row, x, n);
    float out;
    dotTokens<1>(type, row, x, 0, n / kQK_K, &out);
    return out;
}

void dotRowQ8KTokensAvx512(TensorType type, const void* row, const BlockQ8K* x,
    std::int64_t xStride, int count, std::int64_t n, float* out)
{
    if (type != TensorType::Q4_K && type != TensorType::Q6_K) {
        dotRowQ8KTokensAvx2(type, row, x, xStride, count, n, out);
        return;
    }
    const std::int64_t nb = n / kQK_K;
    switch (count) {
    case 1:
        return dotTokens<1>(type, row, x, xStride, nb, out);
    case 2:
        return dotTokens<2>(type, row, x, xStride, nb, out);
    case 3:
        return dotTokens<3>(type, row, x, xStride, nb, out);
    default:
        return dotTokens<4>(type, row, x, xStride, nb, out);
    }
}

} // namespace cw::kernels::quant

#else

namespace cw::kernels::quant {

float dotRowQ8KAvx512(TensorType, const void*, const BlockQ8K*, std::int64_t)
{
    assert(false && "dotRowQ8KAvx512 called on a CPU without AVX-512");
    return 0.0f;
}

void dotRowQ8KTokensAvx512(
    TensorType, const void*, const BlockQ8K*, std::int64_t, int, std::int64_t, float*)
{
    assert(false && "dotRowQ8KTokensAvx512 called on a CPU without AVX-512");
}

} // namespace cw::kernels::quant

#endif
