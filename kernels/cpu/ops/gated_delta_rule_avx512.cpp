// The gated delta rule with AVX-512 F (16 floats a register): gated_delta_rule_tiles.h on this
// register type, and the DeltaNet layer's convolution and gated norm (delta_net_rows.h). The
// functions carry target attributes, so the binary runs on any x86-64; ops.cpp calls them after
// checking the CPU. Non-x86 builds compile bodies never called.
#include "kernels/cpu/ops/delta_net_rows_x86.h"
#include "kernels/cpu/ops/gated_delta_rule_x86.h"

#include <cassert>

#if defined(__x86_64__) || defined(__i386__)
// GCC 12's avx512fintrin.h builds max, min and roundscale on a deliberately undefined
// register, which -Wmaybe-uninitialized reports at every inlined use.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#define CW_DELTA_TARGET __attribute__((target("avx512f,avx2,fma")))

namespace cw::kernels::ops {
namespace {

struct Avx512 {
    using Reg = __m512;
    static constexpr int kWidth = 16;
    // 4 x 4 accumulators of the products (a 64-column panel of B per pass) and 8 of a
    // forward-substitution row (128 columns) out of 32 registers. Decode takes whole 128-float
    // state rows, so the state streams through in address order.
    static constexpr int kTileRows = 4, kTileVecs = 4, kWideVecs = 8;
    static constexpr int kRecVecs = 8;

    CW_DELTA_TARGET static Reg load(const float* p) { return _mm512_loadu_ps(p); }
    CW_DELTA_TARGET static void store(float* p, Reg x) { _mm512_storeu_ps(p, x); }
    CW_DELTA_TARGET static Reg set1(float x) { return _mm512_set1_ps(x); }
    CW_DELTA_TARGET static Reg zero() { return _mm512_setzero_ps(); }
    CW_DELTA_TARGET static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
    CW_DELTA_TARGET static Reg sub(Reg a, Reg b) { return _mm512_sub_ps(a, b); }
    CW_DELTA_TARGET static Reg mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
    CW_DELTA_TARGET static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
    CW_DELTA_TARGET static Reg div(Reg a, Reg b) { return _mm512_div_ps(a, b); }
    CW_DELTA_TARGET static Reg max(Reg c, Reg x) { return _mm512_max_ps(c, x); }
    CW_DELTA_TARGET static Reg min(Reg c, Reg x) { return _mm512_min_ps(c, x); }
    CW_DELTA_TARGET static Reg roundNearest(Reg x)
    {
        return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    CW_DELTA_TARGET static Reg pow2(Reg n)
    {
        const __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
        return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
    }
    CW_DELTA_TARGET static Reg keepBelow(Reg x, std::int64_t base, std::int64_t limit)
    {
        const __m512i lane = _mm512_add_epi32(_mm512_set1_epi32(int(base)),
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
        return _mm512_maskz_mov_ps(_mm512_cmplt_epi32_mask(lane, _mm512_set1_epi32(int(limit))), x);
    }
    CW_DELTA_TARGET static Reg keepWhereNotBelow(Reg value, Reg x, float lo)
    {
        return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(lo), _CMP_NLT_UQ), value);
    }

    // Sums of squares in double (delta_net_rows.h): lo takes lanes 0-7, hi lanes 8-15.
    using DReg = __m512d;
    CW_DELTA_TARGET static DReg dzero() { return _mm512_setzero_pd(); }
    CW_DELTA_TARGET static void addSquares(DReg& lo, DReg& hi, Reg x)
    {
        const __m512d a = _mm512_cvtps_pd(_mm512_castps512_ps256(x));
        const __m512d b
            = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
        lo = _mm512_fmadd_pd(a, a, lo);
        hi = _mm512_fmadd_pd(b, b, hi);
    }
    CW_DELTA_TARGET static double dsum(DReg lo, DReg hi)
    {
        return _mm512_reduce_add_pd(_mm512_add_pd(lo, hi));
    }
};

} // namespace
} // namespace cw::kernels::ops

#include "kernels/cpu/ops/delta_net_rows.h"
#include "kernels/cpu/ops/gated_delta_rule_tiles.h"

namespace cw::kernels::ops {

void gatedDeltaRuleChunkedAvx512(const float* q, const float* k, std::int64_t qkStride,
    const float* v, std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens,
    std::int64_t dk, std::int64_t dv, float* state, float* out, std::int64_t outStride, int chunk)
{
    assert(dk % Avx512::kWidth == 0 && dv % Avx512::kWidth == 0);
    runChunked<Avx512>(
        q, k, qkStride, v, vStride, g, beta, nTokens, dk, dv, state, out, outStride, chunk);
}

void gatedDeltaRuleRecurrentAvx512(const float* q, const float* k, std::int64_t qkStride,
    const float* v, std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens,
    std::int64_t dk, std::int64_t dv, float* state, float* out, std::int64_t outStride)
{
    assert(dk % Avx512::kWidth == 0 && dv % Avx512::kWidth == 0);
    runRecurrent<Avx512>(
        q, k, qkStride, v, vStride, g, beta, nTokens, dk, dv, state, out, outStride);
}

void causalConv1dSiluAvx512(const float* in, std::int64_t inStride, std::int64_t nTokens,
    std::int64_t channels, const float* w, int kernel, float* state, float* out,
    std::int64_t outStride)
{
    runCausalConv1dSilu<Avx512>(in, inStride, nTokens, channels, w, kernel, state, out, outStride);
}

void gatedRmsNormAvx512(
    float* x, const float* gate, std::int64_t rows, std::int64_t n, const float* w, float eps)
{
    assert(n % Avx512::kWidth == 0);
    runGatedRmsNorm<Avx512>(x, gate, rows, n, w, eps);
}

} // namespace cw::kernels::ops

#else

namespace cw::kernels::ops {

void gatedDeltaRuleChunkedAvx512(const float*, const float*, std::int64_t, const float*,
    std::int64_t, const float*, const float*, std::int64_t, std::int64_t, std::int64_t, float*,
    float*, std::int64_t, int)
{
    assert(false && "gatedDeltaRuleChunkedAvx512 called on a CPU without AVX-512");
}

void gatedDeltaRuleRecurrentAvx512(const float*, const float*, std::int64_t, const float*,
    std::int64_t, const float*, const float*, std::int64_t, std::int64_t, std::int64_t, float*,
    float*, std::int64_t)
{
    assert(false && "gatedDeltaRuleRecurrentAvx512 called on a CPU without AVX-512");
}

void causalConv1dSiluAvx512(const float*, std::int64_t, std::int64_t, std::int64_t, const float*,
    int, float*, float*, std::int64_t)
{
    assert(false && "causalConv1dSiluAvx512 called on a CPU without AVX-512");
}

void gatedRmsNormAvx512(float*, const float*, std::int64_t, std::int64_t, const float*, float)
{
    assert(false && "gatedRmsNormAvx512 called on a CPU without AVX-512");
}

} // namespace cw::kernels::ops

#endif
