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
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
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
    return _mm512_inserti64x4(
        _mm512_castsi256_si512(
            _mm256_set_m128i(_mm_set1_epi16(short(base + 1)), _mm_set1_epi16(base))),
        _mm256_set_m128i(_mm_set1_epi16(short(base + 3)), _mm_set1_epi16(short(base + 2))), 1);
}

CW_AVX512 inline float horizontalSum256(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
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

CW_AVX512 float dotQ4K(const BlockQ4_K* b, const BlockQ8K* x, std::int64_t nb)
{
    const __m512i lowMask = _mm512_set1_epi8(0x0F);
    // Register of 64 quant bytes jj (j = 2jj, 2jj+1): low nibbles are sub-blocks 4jj and
    // 4jj+2 (low and high 256 bits), high nibbles 4jj+1 and 4jj+3.
    const __m512i scaleLo[2] = { halves(0, 2), halves(4, 6) };
    const __m512i scaleHi[2] = { halves(1, 3), halves(5, 7) };
    __m512 acc = _mm512_setzero_ps();
    __m256 accMins = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i) {
        const __m256i scalesMins = unpackScalesMins(b[i].scales);
        const __m512i scales = _mm512_castsi256_si512(scalesMins);
        const std::int8_t* a = x[i].qs;
        __m512i sumi = _mm512_setzero_si512();
        for (int jj = 0; jj < 2; ++jj) {
            const __m512i q = _mm512_loadu_si512(b[i].qs + 64 * jj);
            const __m512i lo = _mm512_and_si512(q, lowMask);
            const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), lowMask);
            const __m512i aLo = pair256(load256(a + 128 * jj), load256(a + 128 * jj + 64));
            const __m512i aHi = pair256(load256(a + 128 * jj + 32), load256(a + 128 * jj + 96));
            sumi = _mm512_add_epi32(sumi,
                _mm512_madd_epi16(_mm512_maddubs_epi16(lo, aLo),
                    _mm512_permutexvar_epi16(scaleLo[jj], scales)));
            sumi = _mm512_add_epi32(sumi,
                _mm512_madd_epi16(_mm512_maddubs_epi16(hi, aHi),
                    _mm512_permutexvar_epi16(scaleHi[jj], scales)));
        }
        const float dx = x[i].d;
        acc = _mm512_fmadd_ps(_mm512_set1_ps(dx * _cvtsh_ss(b[i].d)), _mm512_cvtepi32_ps(sumi), acc);
        const __m128i mins = _mm256_extracti128_si256(scalesMins, 1);
        const __m256i paired
            = _mm256_set_m128i(_mm_unpackhi_epi16(mins, mins), _mm_unpacklo_epi16(mins, mins));
        accMins = _mm256_fmadd_ps(_mm256_set1_ps(dx * _cvtsh_ss(b[i].dmin)),
            _mm256_cvtepi32_ps(_mm256_madd_epi16(load256(x[i].bsums), paired)), accMins);
    }
    return _mm512_reduce_add_ps(acc) - horizontalSum256(accMins);
}

CW_AVX512 float dotQ6K(const BlockQ6_K* b, const BlockQ8K* x, std::int64_t nb)
{
    const __m512i lowMask = _mm512_set1_epi8(0x0F);
    const __m512i three = _mm512_set1_epi8(3);
    const __m512i highBits = _mm512_set1_epi8(0x30);
    // Each 128-bit quarter of a maddubs result is one 16-group: groups 8h+0..3 for the low
    // nibbles of half h, 8h+4..7 for the high nibbles.
    const __m512i groupsLow[2] = { quarters(0), quarters(8) };
    const __m512i groupsHigh[2] = { quarters(4), quarters(12) };
    __m512 acc = _mm512_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i) {
        const __m256i scales16
            = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].scales)));
        const __m512i scales = _mm512_castsi256_si512(scales16);
        // sum (q - 32) a = sum q a - 32 sum a: the second part from the 16-group sums.
        const __m256i bias
            = _mm256_slli_epi32(_mm256_madd_epi16(load256(x[i].bsums), scales16), 5);
        __m512i sumi = _mm512_inserti64x4(
            _mm512_setzero_si512(), _mm256_sub_epi32(_mm256_setzero_si256(), bias), 0);
        for (int h = 0; h < 2; ++h) {
            const __m512i ql = _mm512_loadu_si512(b[i].ql + 64 * h);
            const __m256i qh = load256(b[i].qh + 32 * h);
            const __m512i qhPair = pair256(qh, _mm256_srli_epi16(qh, 2));
            // Values 0-63 of this half: low nibbles with qh bits 0-1 (first 32) and 2-3.
            const __m512i q12 = _mm512_or_si512(_mm512_and_si512(ql, lowMask),
                _mm512_slli_epi16(_mm512_and_si512(qhPair, three), 4));
            // Values 64-127: high nibbles with qh bits 4-5 and 6-7.
            const __m512i q34 = _mm512_or_si512(
                _mm512_and_si512(_mm512_srli_epi16(ql, 4), lowMask),
                _mm512_and_si512(qhPair, highBits));
            const std::int8_t* a = x[i].qs + 128 * h;
            sumi = _mm512_add_epi32(sumi,
                _mm512_madd_epi16(_mm512_maddubs_epi16(q12, _mm512_loadu_si512(a)),
                    _mm512_permutexvar_epi16(groupsLow[h], scales)));
            sumi = _mm512_add_epi32(sumi,
                _mm512_madd_epi16(_mm512_maddubs_epi16(q34, _mm512_loadu_si512(a + 64)),
                    _mm512_permutexvar_epi16(groupsHigh[h], scales)));
        }
        acc = _mm512_fmadd_ps(
            _mm512_set1_ps(x[i].d * _cvtsh_ss(b[i].d)), _mm512_cvtepi32_ps(sumi), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

} // namespace

float dotRowQ8KAvx512(TensorType type, const void* row, const BlockQ8K* x, std::int64_t n)
{
    switch (type) {
    case TensorType::Q4_K:
        return dotQ4K(static_cast<const BlockQ4_K*>(row), x, n / kQK_K);
    case TensorType::Q6_K:
        return dotQ6K(static_cast<const BlockQ6_K*>(row), x, n / kQK_K);
    default:
        return dotRowQ8KAvx2(type, row, x, n);
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

} // namespace cw::kernels::quant

#endif
