// AVX2 integer dot products of k-quant rows with Q8_K activations: unsigned weight nibbles
// times signed activation bytes with maddubs (16-bit pair sums, no saturation at these
// ranges), madd by the sub-block scale into 32-bit sums, one float multiply per super-block.
// Functions carry target attributes; dot_q8k.cpp calls them only after checking the CPU.
#include "kernels/cpu/quant/dot_q8k_avx2.h"

#include <cassert>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include "kernels/cpu/simd_sum.h"

#include <immintrin.h>

#define CW_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace cw::kernels::quant {
namespace {

using simd::horizontalSum;

CW_AVX2 inline __m256i load(const void* p)
{
    return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

CW_AVX2 inline float half(Half h)
{
    return _cvtsh_ss(h);
}

// The 6-bit scales and mins of a Q4_K/Q5_K block (ggml's 12-byte packing, see scaleMinK4),
// unpacked with 32-bit word operations: scales in the low 128 bits as 16-bit lanes, mins in
// the high 128 bits.
CW_AVX2 inline __m256i unpackScalesMins(const std::uint8_t* packed)
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

// sum_j min_j * (bsum[2j] + bsum[2j+1]) as 8 32-bit lanes.
CW_AVX2 inline __m256i minTerms(__m256i scalesMins, const std::int16_t* bsums)
{
    const __m128i mins = _mm256_extracti128_si256(scalesMins, 1);
    const __m256i paired
        = _mm256_set_m128i(_mm_unpackhi_epi16(mins, mins), _mm_unpacklo_epi16(mins, mins));
    return _mm256_madd_epi16(load(bsums), paired);
}

// Shuffle controls that spread 16-bit lane k of a 128-bit vector over a whole register.
CW_AVX2 inline __m256i spread16(int k)
{
    return _mm256_set1_epi16(short((2 * k) | ((2 * k + 1) << 8)));
}

// Sub-block pair j (64 values) of a Q4_K/Q5_K block: lo/hi are the 5- or 4-bit quants of
// sub-blocks 2j and 2j+1, scales the 8 scales broadcast to both lanes.
CW_AVX2 inline __m256i pairSum(
    __m256i lo, __m256i hi, const std::int8_t* a, __m256i scales, int j, __m256i sum)
{
    const __m256i p0 = _mm256_maddubs_epi16(lo, load(a));
    const __m256i p1 = _mm256_maddubs_epi16(hi, load(a + 32));
    sum = _mm256_add_epi32(
        sum, _mm256_madd_epi16(p0, _mm256_shuffle_epi8(scales, spread16(2 * j))));
    return _mm256_add_epi32(
        sum, _mm256_madd_epi16(p1, _mm256_shuffle_epi8(scales, spread16(2 * j + 1))));
}

CW_AVX2 float dotQ4K(const BlockQ4_K* b, const BlockQ8K* x, std::int64_t nb)
{
    const __m256i lowMask = _mm256_set1_epi8(0x0F);
    __m256 acc = _mm256_setzero_ps();
    __m256 accMins = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i) {
        const __m256i scalesMins = unpackScalesMins(b[i].scales);
        const __m256i scales = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(scalesMins));
        __m256i sumi = _mm256_setzero_si256();
        for (int j = 0; j < 4; ++j) {
            const __m256i q = load(b[i].qs + 32 * j);
            const __m256i lo = _mm256_and_si256(q, lowMask);
            const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), lowMask);
            sumi = pairSum(lo, hi, x[i].qs + 64 * j, scales, j, sumi);
        }
        const float dx = x[i].d;
        acc = _mm256_fmadd_ps(_mm256_set1_ps(dx * half(b[i].d)), _mm256_cvtepi32_ps(sumi), acc);
        accMins = _mm256_fmadd_ps(_mm256_set1_ps(dx * half(b[i].dmin)),
            _mm256_cvtepi32_ps(minTerms(scalesMins, x[i].bsums)), accMins);
    }
    return horizontalSum(_mm256_sub_ps(acc, accMins));
}

// Bit k of every byte of qh moved to bit 4 (the fifth bit of a Q5_K quant); the shift stays
// inside each byte because only bit k is kept.
CW_AVX2 inline __m256i fifthBit(__m256i qh, int k)
{
    const __m256i bit = _mm256_and_si256(qh, _mm256_set1_epi8(char(1 << k)));
    return k <= 4 ? _mm256_sll_epi16(bit, _mm_cvtsi32_si128(4 - k))
                  : _mm256_srl_epi16(bit, _mm_cvtsi32_si128(k - 4));
}

CW_AVX2 float dotQ5K(const BlockQ5_K* b, const BlockQ8K* x, std::int64_t nb)
{
    const __m256i lowMask = _mm256_set1_epi8(0x0F);
    __m256 acc = _mm256_setzero_ps();
    __m256 accMins = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i) {
        const __m256i scalesMins = unpackScalesMins(b[i].scales);
        const __m256i scales = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(scalesMins));
        const __m256i qh = load(b[i].qh);
        __m256i sumi = _mm256_setzero_si256();
        for (int j = 0; j < 4; ++j) {
            const __m256i q = load(b[i].qs + 32 * j);
            const __m256i lo = _mm256_or_si256(_mm256_and_si256(q, lowMask), fifthBit(qh, 2 * j));
            const __m256i hi = _mm256_or_si256(
                _mm256_and_si256(_mm256_srli_epi16(q, 4), lowMask), fifthBit(qh, 2 * j + 1));
            sumi = pairSum(lo, hi, x[i].qs + 64 * j, scales, j, sumi);
        }
        const float dx = x[i].d;
        acc = _mm256_fmadd_ps(_mm256_set1_ps(dx * half(b[i].d)), _mm256_cvtepi32_ps(sumi), acc);
        accMins = _mm256_fmadd_ps(_mm256_set1_ps(dx * half(b[i].dmin)),
            _mm256_cvtepi32_ps(minTerms(scalesMins, x[i].bsums)), accMins);
    }
    return horizontalSum(_mm256_sub_ps(acc, accMins));
}

// Shuffle control putting 16-bit lane 2k of a broadcast 8-lane vector in the low 128 bits
// and lane 2k+1 in the high 128 bits (each 128-bit lane of a maddubs result is one 16-group).
CW_AVX2 inline __m256i laneScaleControl(int k)
{
    return _mm256_set_m128i(_mm_set1_epi16(short((4 * k + 2) | ((4 * k + 3) << 8))),
        _mm_set1_epi16(short((4 * k) | ((4 * k + 1) << 8))));
}

CW_AVX2 float dotQ6K(const BlockQ6_K* b, const BlockQ8K* x, std::int64_t nb)
{
    const __m256i lowMask = _mm256_set1_epi8(0x0F);
    const __m256i three = _mm256_set1_epi8(3);
    const __m256i highBits = _mm256_set1_epi8(0x30);
    __m256 acc = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i) {
        // sum (q - 32) a = sum q a - 32 sum a: the second part from the 16-group sums.
        const __m256i scales16
            = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].scales)));
        __m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(),
            _mm256_slli_epi32(_mm256_madd_epi16(load(x[i].bsums), scales16), 5));
        for (int h = 0; h < 2; ++h) {
            const std::uint8_t* ql = b[i].ql + 64 * h;
            const std::int8_t* a = x[i].qs + 128 * h;
            const __m256i sc = h == 0 ? _mm256_permute2x128_si256(scales16, scales16, 0x00)
                                      : _mm256_permute2x128_si256(scales16, scales16, 0x11);
            const __m256i qlA = load(ql);
            const __m256i qlB = load(ql + 32);
            const __m256i qh = load(b[i].qh + 32 * h);
            const __m256i q1 = _mm256_or_si256(
                _mm256_and_si256(qlA, lowMask), _mm256_slli_epi16(_mm256_and_si256(qh, three), 4));
            const __m256i q2 = _mm256_or_si256(_mm256_and_si256(qlB, lowMask),
                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), three), 4));
            const __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qlA, 4), lowMask),
                _mm256_and_si256(qh, highBits));
            const __m256i q4 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qlB, 4), lowMask),
                _mm256_and_si256(_mm256_srli_epi16(qh, 2), highBits));
            const __m256i p1 = _mm256_madd_epi16(
                _mm256_maddubs_epi16(q1, load(a)), _mm256_shuffle_epi8(sc, laneScaleControl(0)));
            const __m256i p2 = _mm256_madd_epi16(_mm256_maddubs_epi16(q2, load(a + 32)),
                _mm256_shuffle_epi8(sc, laneScaleControl(1)));
            const __m256i p3 = _mm256_madd_epi16(_mm256_maddubs_epi16(q3, load(a + 64)),
                _mm256_shuffle_epi8(sc, laneScaleControl(2)));
            const __m256i p4 = _mm256_madd_epi16(_mm256_maddubs_epi16(q4, load(a + 96)),
                _mm256_shuffle_epi8(sc, laneScaleControl(3)));
            sumi = _mm256_add_epi32(
                sumi, _mm256_add_epi32(_mm256_add_epi32(p1, p2), _mm256_add_epi32(p3, p4)));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(x[i].d * half(b[i].d)), _mm256_cvtepi32_ps(sumi), acc);
    }
    return horizontalSum(acc);
}

// One Q4_K row against `N` tokens: the quants and scales are unpacked once and multiplied
// with each token's activations; per token the same integer sums and float steps as dotQ4K,
// so each result equals dotQ4K's bit for bit.
template <int N>
CW_AVX2 void dotQ4KTokens(
    const BlockQ4_K* b, const BlockQ8K* x, std::int64_t xStride, std::int64_t nb, float* out)
{
    const __m256i lowMask = _mm256_set1_epi8(0x0F);
    __m256 acc[N], accMins[N];
    for (int t = 0; t < N; ++t)
        acc[t] = accMins[t] = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i) {
        const __m256i scalesMins = unpackScalesMins(b[i].scales);
        const __m256i scales = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(scalesMins));
        __m256i sumi[N];
        for (int t = 0; t < N; ++t)
            sumi[t] = _mm256_setzero_si256();
        for (int j = 0; j < 4; ++j) {
            const __m256i q = load(b[i].qs + 32 * j);
            const __m256i lo = _mm256_and_si256(q, lowMask);
            const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), lowMask);
            const __m256i s0 = _mm256_shuffle_epi8(scales, spread16(2 * j));
            const __m256i s1 = _mm256_shuffle_epi8(scales, spread16(2 * j + 1));
            for (int t = 0; t < N; ++t) {
                const std::int8_t* a = x[t * xStride + i].qs + 64 * j;
                sumi[t] = _mm256_add_epi32(
                    sumi[t], _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load(a)), s0));
                sumi[t] = _mm256_add_epi32(
                    sumi[t], _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load(a + 32)), s1));
            }
        }
        const float d = half(b[i].d), dmin = half(b[i].dmin);
        for (int t = 0; t < N; ++t) {
            const BlockQ8K& xt = x[t * xStride + i];
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(xt.d * d), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
            accMins[t] = _mm256_fmadd_ps(_mm256_set1_ps(xt.d * dmin),
                _mm256_cvtepi32_ps(minTerms(scalesMins, xt.bsums)), accMins[t]);
        }
    }
    for (int t = 0; t < N; ++t)
        out[t] = horizontalSum(_mm256_sub_ps(acc[t], accMins[t]));
}

// One Q6_K row against `N` tokens, as dotQ6K per token (same sums, same results).
template <int N>
CW_AVX2 void dotQ6KTokens(
    const BlockQ6_K* b, const BlockQ8K* x, std::int64_t xStride, std::int64_t nb, float* out)
{
    const __m256i lowMask = _mm256_set1_epi8(0x0F);
    const __m256i three = _mm256_set1_epi8(3);
    const __m256i highBits = _mm256_set1_epi8(0x30);
    __m256 acc[N];
    for (int t = 0; t < N; ++t)
        acc[t] = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i) {
        const __m256i scales16
            = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].scales)));
        __m256i sumi[N];
        for (int t = 0; t < N; ++t)
            sumi[t] = _mm256_sub_epi32(_mm256_setzero_si256(),
                _mm256_slli_epi32(_mm256_madd_epi16(load(x[t * xStride + i].bsums), scales16), 5));
        for (int h = 0; h < 2; ++h) {
            const std::uint8_t* ql = b[i].ql + 64 * h;
            const __m256i sc = h == 0 ? _mm256_permute2x128_si256(scales16, scales16, 0x00)
                                      : _mm256_permute2x128_si256(scales16, scales16, 0x11);
            const __m256i qlA = load(ql);
            const __m256i qlB = load(ql + 32);
            const __m256i qh = load(b[i].qh + 32 * h);
            const __m256i q1 = _mm256_or_si256(
                _mm256_and_si256(qlA, lowMask), _mm256_slli_epi16(_mm256_and_si256(qh, three), 4));
            const __m256i q2 = _mm256_or_si256(_mm256_and_si256(qlB, lowMask),
                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), three), 4));
            const __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qlA, 4), lowMask),
                _mm256_and_si256(qh, highBits));
            const __m256i q4 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qlB, 4), lowMask),
                _mm256_and_si256(_mm256_srli_epi16(qh, 2), highBits));
            const __m256i s1 = _mm256_shuffle_epi8(sc, laneScaleControl(0));
            const __m256i s2 = _mm256_shuffle_epi8(sc, laneScaleControl(1));
            const __m256i s3 = _mm256_shuffle_epi8(sc, laneScaleControl(2));
            const __m256i s4 = _mm256_shuffle_epi8(sc, laneScaleControl(3));
            for (int t = 0; t < N; ++t) {
                const std::int8_t* a = x[t * xStride + i].qs + 128 * h;
                const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(q1, load(a)), s1);
                const __m256i p2 = _mm256_madd_epi16(_mm256_maddubs_epi16(q2, load(a + 32)), s2);
                const __m256i p3 = _mm256_madd_epi16(_mm256_maddubs_epi16(q3, load(a + 64)), s3);
                const __m256i p4 = _mm256_madd_epi16(_mm256_maddubs_epi16(q4, load(a + 96)), s4);
                sumi[t] = _mm256_add_epi32(
                    sumi[t], _mm256_add_epi32(_mm256_add_epi32(p1, p2), _mm256_add_epi32(p3, p4)));
            }
        }
        const float d = half(b[i].d);
        for (int t = 0; t < N; ++t)
            acc[t] = _mm256_fmadd_ps(
                _mm256_set1_ps(x[t * xStride + i].d * d), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
    }
    for (int t = 0; t < N; ++t)
        out[t] = horizontalSum(acc[t]);
}

template <int N>
void dotTokens(TensorType type, const void* row, const BlockQ8K* x, std::int64_t xStride,
    std::int64_t nb, float* out)
{
    if (type == TensorType::Q4_K)
        dotQ4KTokens<N>(static_cast<const BlockQ4_K*>(row), x, xStride, nb, out);
    else
        dotQ6KTokens<N>(static_cast<const BlockQ6_K*>(row), x, xStride, nb, out);
}

} // namespace

bool hasQ8KTokensAvx2(TensorType type)
{
    return type == TensorType::Q4_K || type == TensorType::Q6_K;
}

void dotRowQ8KTokensAvx2(TensorType type, const void* row, const BlockQ8K* x, std::int64_t xStride,
    int count, std::int64_t n, float* out)
{
    assert(hasQ8KTokensAvx2(type) && count >= 1 && count <= 4);
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

float dotRowQ8KAvx2(TensorType type, const void* row, const BlockQ8K* x, std::int64_t n)
{
    switch (type) {
    case TensorType::Q4_K:
        return dotQ4K(static_cast<const BlockQ4_K*>(row), x, n / kQK_K);
    case TensorType::Q5_K:
        return dotQ5K(static_cast<const BlockQ5_K*>(row), x, n / kQK_K);
    case TensorType::Q6_K:
        return dotQ6K(static_cast<const BlockQ6_K*>(row), x, n / kQK_K);
    default:
        assert(false && "dotRowQ8KAvx2 on a type without an integer product");
        return 0.0f;
    }
}

} // namespace cw::kernels::quant

#else

namespace cw::kernels::quant {

float dotRowQ8KAvx2(TensorType, const void*, const BlockQ8K*, std::int64_t)
{
    assert(false && "dotRowQ8KAvx2 called on a CPU without AVX2");
    return 0.0f;
}

bool hasQ8KTokensAvx2(TensorType)
{
    return false;
}

void dotRowQ8KTokensAvx2(
    TensorType, const void*, const BlockQ8K*, std::int64_t, int, std::int64_t, float*)
{
    assert(false && "dotRowQ8KTokensAvx2 called on a CPU without AVX2");
}

} // namespace cw::kernels::quant

#endif
