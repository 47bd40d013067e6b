// The AVX-512 integer products of Q4_K and Q6_K rows with Q8_K activations, written once for
// two translation units: dot_q8k_avx512.cpp (F and BW) and dot_q8k_avx512_vnni.cpp (with
// VNNI's vpdpwssd, which adds a word product into its accumulator in one instruction). The
// includer defines CW_Q8K_TARGET (the target attribute) and CW_Q8K_VNNI (0 or 1) first; the
// kernels land in an anonymous namespace of that file, so each gets its own copy.
//
// Per sub-block the sum is maddubs (unsigned quants by signed activations, byte pairs into
// words), then a word multiply by the sub-block's scale into double words; one float multiply
// per super-block. Each instruction covers two sub-blocks. Q4_K's nibbles are unpacked so
// that a register matches 64 consecutive activations (one load), and a weight row's unpacking
// is shared by up to four tokens: per token only the products remain.
#pragma once

#if !defined(CW_Q8K_TARGET) || !defined(CW_Q8K_VNNI)
#error "define CW_Q8K_TARGET and CW_Q8K_VNNI before including dot_q8k_avx512_kernels.h"
#endif

#include "kernels/cpu/quant/q8_k.h"
#include "kernels/cpu/quant/quant_blocks.h"

#include <cstdint>
#include <cstring>
#include <immintrin.h>

namespace cw::kernels::quant {
namespace {

CW_Q8K_TARGET inline __m256i load256(const void* p)
{
    return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

CW_Q8K_TARGET inline __m512i load512(const void* p)
{
    return _mm512_loadu_si512(p);
}

CW_Q8K_TARGET inline __m512i pair256(__m256i low, __m256i high)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
}

// Word-permute indices: 16-bit lane `a` of the source in the low 256 bits, lane `b` in the
// high 256 bits.
CW_Q8K_TARGET inline __m512i halves(short a, short b)
{
    return pair256(_mm256_set1_epi16(a), _mm256_set1_epi16(b));
}

// Word-permute indices: lane base+k in every 16-bit lane of 128-bit quarter k.
CW_Q8K_TARGET inline __m512i quarters(short base)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(
                                  _mm_set1_epi16(short(base + 1)), _mm_set1_epi16(base))),
        _mm256_set_m128i(_mm_set1_epi16(short(base + 3)), _mm_set1_epi16(short(base + 2))), 1);
}

// sum + the word products of `pairs` (maddubs' output) and `scales`, summed in pairs.
CW_Q8K_TARGET inline __m512i addScaled(__m512i sum, __m512i pairs, __m512i scales)
{
#if CW_Q8K_VNNI
    return _mm512_dpwssd_epi32(sum, pairs, scales);
#else
    return _mm512_add_epi32(sum, _mm512_madd_epi16(pairs, scales));
#endif
}

// Scales (16-bit lanes 0-7) and mins (lanes 8-15) of a Q4_K block; see dot_q8k_avx2.cpp.
CW_Q8K_TARGET inline __m256i unpackScalesMins(const std::uint8_t* packed)
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
CW_Q8K_TARGET void dotQ4K(
    const BlockQ4_K* b, const BlockQ8K* x, std::int64_t xStride, std::int64_t nb, float* out)
{
    const __m512i lowMask = _mm512_set1_epi8(0x0F);
    // Chunk k of 64 values is 32 quant bytes: low nibbles are values 0-31 (sub-block 2k),
    // high nibbles 32-63 (2k+1). Broadcast to both halves, the high half shifted by 4: the
    // register then lines up with the chunk's 64 activations.
    const __m512i chunkScales[4] = { halves(0, 1), halves(2, 3), halves(4, 5), halves(6, 7) };
    __m512 acc[N];
    for (int t = 0; t < N; ++t)
        acc[t] = _mm512_setzero_ps();
    for (std::int64_t i = 0; i < nb; ++i) {
        const __m256i scalesMins = unpackScalesMins(b[i].scales);
        const __m512i scales = _mm512_castsi256_si512(scalesMins);
        __m512i sumi[N];
        for (int t = 0; t < N; ++t)
            sumi[t] = _mm512_setzero_si512();
        for (int k = 0; k < 4; ++k) {
            const __m512i q = _mm512_broadcast_i64x4(load256(b[i].qs + 32 * k));
            const __m512i v = _mm512_and_si512(
                _mm512_mask_blend_epi64(0xF0, q, _mm512_srli_epi16(q, 4)), lowMask);
            const __m512i s = _mm512_permutexvar_epi16(chunkScales[k], scales);
            for (int t = 0; t < N; ++t)
                sumi[t] = addScaled(
                    sumi[t], _mm512_maddubs_epi16(v, load512(x[t * xStride + i].qs + 64 * k)), s);
        }
        const float d = _cvtsh_ss(b[i].d), dmin = _cvtsh_ss(b[i].dmin);
        const __m128i mins = _mm256_extracti128_si256(scalesMins, 1);
        // Each min twice: it applies to the two 16-value sums of its sub-block.
        const __m256i paired
            = _mm256_set_m128i(_mm_unpackhi_epi16(mins, mins), _mm_unpacklo_epi16(mins, mins));
        for (int t = 0; t < N; ++t) {
            const BlockQ8K& xt = x[t * xStride + i];
            acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(xt.d * d), _mm512_cvtepi32_ps(sumi[t]), acc[t]);
            const __m256i minSums = _mm256_madd_epi16(load256(xt.bsums), paired);
            acc[t] = _mm512_fnmadd_ps(_mm512_set1_ps(xt.d * dmin),
                _mm512_cvtepi32_ps(_mm512_zextsi256_si512(minSums)), acc[t]);
        }
    }
    for (int t = 0; t < N; ++t)
        out[t] = _mm512_reduce_add_ps(acc[t]);
}

// One Q6_K row against N tokens, as dotQ4K above. Its quants already line up with
// consecutive activations.
template <int N>
CW_Q8K_TARGET void dotQ6K(
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
            sumi[t] = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), bias));
        }
        for (int h = 0; h < 2; ++h) {
            const __m512i ql = load512(b[i].ql + 64 * h);
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
                sumi[t] = addScaled(sumi[t], _mm512_maddubs_epi16(q12, load512(a)), s12);
                sumi[t] = addScaled(sumi[t], _mm512_maddubs_epi16(q34, load512(a + 64)), s34);
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
CW_Q8K_TARGET void dotTokens(TensorType type, const void* row, const BlockQ8K* x,
    std::int64_t xStride, std::int64_t nb, float* out)
{
    if (type == TensorType::Q4_K)
        dotQ4K<N>(static_cast<const BlockQ4_K*>(row), x, xStride, nb, out);
    else
        dotQ6K<N>(static_cast<const BlockQ6_K*>(row), x, xStride, nb, out);
}

// out[t] for `count` (1 to 8) tokens.
CW_Q8K_TARGET inline void dotTokensUpTo8(TensorType type, const void* row, const BlockQ8K* x,
    std::int64_t xStride, int count, std::int64_t nb, float* out)
{
    switch (count) {
    case 1:
        return dotTokens<1>(type, row, x, xStride, nb, out);
    case 2:
        return dotTokens<2>(type, row, x, xStride, nb, out);
    case 3:
        return dotTokens<3>(type, row, x, xStride, nb, out);
    case 4:
        return dotTokens<4>(type, row, x, xStride, nb, out);
    case 5:
        return dotTokens<5>(type, row, x, xStride, nb, out);
    case 6:
        return dotTokens<6>(type, row, x, xStride, nb, out);
    case 7:
        return dotTokens<7>(type, row, x, xStride, nb, out);
    default:
        return dotTokens<8>(type, row, x, xStride, nb, out);
    }
}

} // namespace
} // namespace cw::kernels::quant
