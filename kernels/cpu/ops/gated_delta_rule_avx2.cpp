// The gated delta rule with AVX2/FMA (8 floats a register): gated_delta_rule_tiles.h on this
// register type, and the DeltaNet layer's convolution and gated norm (delta_net_rows.h). The
// functions carry target attributes, so the binary runs on any x86-64; ops.cpp calls them after
// checking the CPU. Non-x86 builds compile bodies never called.
#include "kernels/cpu/ops/delta_net_rows_x86.h"
#include "kernels/cpu/ops/gated_delta_rule_x86.h"

#include <cassert>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define CW_DELTA_TARGET __attribute__((target("avx2,fma")))

namespace cw::kernels::ops {
namespace {

struct Avx2 {
    using Reg = __m256;
    static constexpr int kWidth = 8;
    // 4 x 2 accumulators of the products and 8 of a forward-substitution row leave room for
    // the broadcasts and loads in 16 registers (4 x 3 and 6 x 2 measured no faster). Decode
    // takes half a 128-float state row a pass (its 8 sums plus 8 deltas spill a few).
    static constexpr int kTileRows = 4, kTileVecs = 2, kWideVecs = 8;
    static constexpr int kRecVecs = 8;

    CW_DELTA_TARGET static Reg load(const float* p) { return _mm256_loadu_ps(p); }
    CW_DELTA_TARGET static void store(float* p, Reg x) { _mm256_storeu_ps(p, x); }
    CW_DELTA_TARGET static Reg set1(float x) { return _mm256_set1_ps(x); }
    CW_DELTA_TARGET static Reg zero() { return _mm256_setzero_ps(); }
    CW_DELTA_TARGET static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
    CW_DELTA_TARGET static Reg sub(Reg a, Reg b) { return _mm256_sub_ps(a, b); }
    CW_DELTA_TARGET static Reg mul(Reg a, Reg b) { return _mm256_mul_ps(a, b); }
    CW_DELTA_TARGET static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
    CW_DELTA_TARGET static Reg div(Reg a, Reg b) { return _mm256_div_ps(a, b); }
    CW_DELTA_TARGET static Reg max(Reg c, Reg x) { return _mm256_max_ps(c, x); }
    CW_DELTA_TARGET static Reg min(Reg c, Reg x) { return _mm256_min_ps(c, x); }
    CW_DELTA_TARGET static Reg roundNearest(Reg x)
    {
        return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    CW_DELTA_TARGET static Reg pow2(Reg n)
    {
        const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
        return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
    }
    CW_DELTA_TARGET static Reg keepBelow(Reg x, std::int64_t base, std::int64_t limit)
    {
        const __m256i lane = _mm256_add_epi32(
            _mm256_set1_epi32(int(base)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        const __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(limit)), lane);
        return _mm256_and_ps(x, _mm256_castsi256_ps(keep));
    }
    CW_DELTA_TARGET static Reg keepWhereNotBelow(Reg value, Reg x, float lo)
    {
        return _mm256_and_ps(value, _mm256_cmp_ps(x, _mm256_set1_ps(lo), _CMP_NLT_UQ));
    }

    // Sums of squares in double (delta_net_rows.h): lo takes lanes 0-3, hi lanes 4-7.
    using DReg = __m256d;
    CW_DELTA_TARGET static DReg dzero() { return _mm256_setzero_pd(); }
    CW_DELTA_TARGET static void addSquares(DReg& lo, DReg& hi, Reg x)
    {
        const __m256d a = _mm256_cvtps_pd(_mm256_castps256_ps128(x));
        const __m256d b = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
        lo = _mm256_fmadd_pd(a, a, lo);
        hi = _mm256_fmadd_pd(b, b, hi);
    }
    CW_DELTA_TARGET static double dsum(DReg lo, DReg hi)
    {
        const __m256d s = _mm256_add_pd(lo, hi);
        const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
        return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
    }
};

} // namespace
} // namespace cw::kernels::ops

#include "kernels/cpu/ops/delta_net_rows.h"
#include "kernels/cpu/ops/gated_delta_rule_tiles.h"

namespace cw::kernels::ops {

void gatedDeltaRuleChunkedAvx2(const float* q, const float* k, std::int64_t qkStride,
    const float* v, std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens,
    std::int64_t dk, std::int64_t dv, float* state, float* out, std::int64_t outStride, int chunk)
{
    assert(dk % Avx2::kWidth == 0 && dv % Avx2::kWidth == 0);
    runChunked<Avx2>(
        q, k, qkStride, v, vStride, g, beta, nTokens, dk, dv, state, out, outStride, chunk);
}

void gatedDeltaRuleRecurrentAvx2(const float* q, const float* k, std::int64_t qkStride,
    const float* v, std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens,
    std::int64_t dk, std::int64_t dv, float* state, float* out, std::int64_t outStride)
{
    assert(dk % Avx2::kWidth == 0 && dv % Avx2::kWidth == 0);
    runRecurrent<Avx2>(q, k, qkStride, v, vStride, g, beta, nTokens, dk, dv, state, out, outStride);
}

void causalConv1dSiluAvx2(const float* in, std::int64_t inStride, std::int64_t nTokens,
    std::int64_t channels, const float* w, int kernel, float* state, float* out,
    std::int64_t outStride)
{
    runCausalConv1dSilu<Avx2>(in, inStride, nTokens, channels, w, kernel, state, out, outStride);
}

void gatedRmsNormAvx2(
    float* x, const float* gate, std::int64_t rows, std::int64_t n, const float* w, float eps)
{
    assert(n % Avx2::kWidth == 0);
    runGatedRmsNorm<Avx2>(x, gate, rows, n, w, eps);
}

} // namespace cw::kernels::ops

#else

namespace cw::kernels::ops {

void gatedDeltaRuleChunkedAvx2(const float*, const float*, std::int64_t, const float*, std::int64_t,
    const float*, const float*, std::int64_t, std::int64_t, std::int64_t, float*, float*,
    std::int64_t, int)
{
    assert(false && "gatedDeltaRuleChunkedAvx2 called on a CPU without AVX2");
}

void gatedDeltaRuleRecurrentAvx2(const float*, const float*, std::int64_t, const float*,
    std::int64_t, const float*, const float*, std::int64_t, std::int64_t, std::int64_t, float*,
    float*, std::int64_t)
{
    assert(false && "gatedDeltaRuleRecurrentAvx2 called on a CPU without AVX2");
}

void causalConv1dSiluAvx2(const float*, std::int64_t, std::int64_t, std::int64_t, const float*, int,
    float*, float*, std::int64_t)
{
    assert(false && "causalConv1dSiluAvx2 called on a CPU without AVX2");
}

void gatedRmsNormAvx2(float*, const float*, std::int64_t, std::int64_t, const float*, float)
{
    assert(false && "gatedRmsNormAvx2 called on a CPU without AVX2");
}

} // namespace cw::kernels::ops

#endif
