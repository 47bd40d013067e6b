#pragma once
// The gated delta rule on vector registers, written once for AVX2 and AVX-512. Included only
// by gated_delta_rule_avx2.cpp and gated_delta_rule_avx512.cpp, each after defining
// CW_DELTA_TARGET (its target attribute) and its register type V in an anonymous namespace of
// cw::kernels::ops. Everything here is a template on V, so the two files' instantiations have
// internal linkage and never meet at link time.
//
// V provides: Reg; kWidth (floats per register); kTileRows x kTileVecs, the register tile of
// the matrix products; kWideVecs, the one-row tile of the forward substitution; kRecVecs, the
// decode step's registers per column block; and
// load, store, set1, zero, add, sub, mul, fma(a, b, c) = a * b + c (one rounding),
// max/min(c, x) (x when it is NaN), roundNearest, pow2(n) = 2^n for whole n in [-126, 127],
// keepBelow(x, base, limit) (lane l kept where base + l < limit, else 0) and
// keepWhereNotBelow(value, x, lo) (lanes where x < lo are 0).
//
// Chunk of n tokens (the WY form of transformers' torch_chunk_gated_delta_rule), with
// c_i = g_0 + ... + g_i and every product a blocked FMA loop over dv or dk:
//   kk = K K^T and qk = Q K^T, lower triangles only, on the chunk's transposed keys;
//   negA_ij = -beta_i kk_ij exp(c_i - c_j) (j < i), qk_ij *= exp(c_i - c_j) / sqrt(dk) (j <= i);
//   U = beta V and -W = -beta K exp(c) by forward substitution through negA;
//   vNew = U + (-W) S, out = (Q exp(c) / sqrt(dk)) S + qk vNew;
//   S = S exp(c_last) + (K exp(c_last - c))^T vNew.
// Each sum runs over the same terms in the same order as the portable code in ops.cpp; the
// decode step (recurrentColumns) too.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>
#include <xmmintrin.h>

#ifndef CW_DELTA_TARGET
#error "define CW_DELTA_TARGET and the register type before including gated_delta_rule_tiles.h"
#endif

namespace cw::kernels::ops {
namespace {

// Subnormal floats flushed to zero (MXCSR FTZ and DAZ) for the life of the object: a strongly
// decaying head drives exp(c) and its products below 1e-38, where many x86 cores take a
// micro-code assist of ~100 cycles per operation. Results change by less than 1e-38.
class FlushSubnormals {
public:
    FlushSubnormals()
        : m_saved(_mm_getcsr())
    {
        _mm_setcsr(m_saved | 0x8040u);
    }
    ~FlushSubnormals() { _mm_setcsr(m_saved); }
    FlushSubnormals(const FlushSubnormals&) = delete;
    FlushSubnormals& operator=(const FlushSubnormals&) = delete;

private:
    unsigned m_saved;
};

// Asks for `rows` rows of `floats` values (row stride `stride`) to be brought into L2. The
// engine's q/k/v rows are 32 KB apart, one to a page, so the hardware prefetchers do not see
// the next chunk coming; a long prompt otherwise waits for memory at each row's first touch.
inline void prefetchRows(
    const float* p, std::int64_t stride, std::int64_t rows, std::int64_t floats)
{
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t i = 0; i < floats; i += 16)
            _mm_prefetch(reinterpret_cast<const char*>(p + r * stride + i), _MM_HINT_T1);
}

constexpr std::int64_t roundUp(std::int64_t x, std::int64_t to)
{
    return (x + to - 1) / to * to;
}

// exp(x) with Cephes' single-precision polynomial (within about 1 ulp of std::exp); 0 below
// -87 (where std::exp is subnormal or 0), clamped at 88 (only masked lanes go there), NaN kept.
template <class V> CW_DELTA_TARGET inline typename V::Reg vexp(typename V::Reg x)
{
    using R = typename V::Reg;
    const R xc = V::min(V::set1(88.0f), V::max(V::set1(-87.0f), x));
    const R n = V::roundNearest(V::mul(xc, V::set1(1.44269504088896341f)));
    R r = V::fma(n, V::set1(-0.693359375f), xc);
    r = V::fma(n, V::set1(2.12194440e-4f), r);
    R p = V::set1(1.9875691500e-4f);
    p = V::fma(p, r, V::set1(1.3981999507e-3f));
    p = V::fma(p, r, V::set1(8.3334519073e-3f));
    p = V::fma(p, r, V::set1(4.1665795894e-2f));
    p = V::fma(p, r, V::set1(1.6666665459e-1f));
    p = V::fma(p, r, V::set1(5.0000001201e-1f));
    p = V::fma(p, V::mul(r, r), V::add(r, V::set1(1.0f)));
    return V::keepWhereNotBelow(V::mul(p, V::pow2(n)), x, -87.0f);
}

enum class TileStart { Zero, Load, LoadScaled };

// C (MR rows of NR registers, row stride ldc) = start + sum over k < depth of A[m][k] B[k][:],
// A's rows of stride lda, B's of stride ldb: one FMA per term, in k order. start is 0, C, or
// C * scale.
template <class V, int MR, int NR>
CW_DELTA_TARGET void tile(float* c, std::int64_t ldc, const float* a, std::int64_t lda,
    const float* b, std::int64_t ldb, std::int64_t depth, TileStart start, float scale)
{
    using R = typename V::Reg;
    constexpr std::int64_t L = V::kWidth;
    R acc[MR][NR];
    const R s = V::set1(scale);
#pragma GCC unroll 8
    for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
        for (int v = 0; v < NR; ++v) {
            if (start == TileStart::Zero)
                acc[m][v] = V::zero();
            else if (start == TileStart::Load)
                acc[m][v] = V::load(c + m * ldc + v * L);
            else
                acc[m][v] = V::mul(V::load(c + m * ldc + v * L), s);
        }
    for (std::int64_t k = 0; k < depth; ++k) {
        const float* bk = b + k * ldb;
        R bv[NR];
#pragma GCC unroll 8
        for (int v = 0; v < NR; ++v)
            bv[v] = V::load(bk + v * L);
#pragma GCC unroll 8
        for (int m = 0; m < MR; ++m) {
            const R am = V::set1(a[m * lda + k]);
#pragma GCC unroll 8
            for (int v = 0; v < NR; ++v)
                acc[m][v] = V::fma(am, bv[v], acc[m][v]);
        }
    }
#pragma GCC unroll 8
    for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
        for (int v = 0; v < NR; ++v)
            V::store(c + m * ldc + v * L, acc[m][v]);
}

// tile<V, MR, nr> for a run-time nr in [1, NR].
template <class V, int MR, int NR>
CW_DELTA_TARGET void tileUpTo(int nr, float* c, std::int64_t ldc, const float* a, std::int64_t lda,
    const float* b, std::int64_t ldb, std::int64_t depth, TileStart start, float scale)
{
    if constexpr (NR > 1) {
        if (nr < NR) {
            tileUpTo<V, MR, NR - 1>(nr, c, ldc, a, lda, b, ldb, depth, start, scale);
            return;
        }
    }
    tile<V, MR, NR>(c, ldc, a, lda, b, ldb, depth, start, scale);
}

// tile<V, mr, nr> for run-time mr in [1, MR] and nr in [1, kTileVecs].
template <class V, int MR = V::kTileRows>
CW_DELTA_TARGET void tileAny(int mr, int nr, float* c, std::int64_t ldc, const float* a,
    std::int64_t lda, const float* b, std::int64_t ldb, std::int64_t depth, TileStart start,
    float scale)
{
    if constexpr (MR > 1) {
        if (mr < MR) {
            tileAny<V, MR - 1>(mr, nr, c, ldc, a, lda, b, ldb, depth, start, scale);
            return;
        }
    }
    tileUpTo<V, MR, V::kTileVecs>(nr, c, ldc, a, lda, b, ldb, depth, start, scale);
}

// Which part of a product to compute. ColumnsToDiagonal: row i needs columns j <= i only (the
// tile covering them is computed whole). DepthToDiagonal: row i sums k <= i only (A is zero
// past its diagonal, so a tile sums up to its last row).
enum class Triangle { None, ColumnsToDiagonal, DepthToDiagonal };

// C (rows x cols, cols a multiple of kWidth) = start + A (rows x depth) B (depth x cols), in
// register tiles; a column panel of B is reused from L1 by every row block.
template <class V>
CW_DELTA_TARGET void gemm(float* c, std::int64_t ldc, const float* a, std::int64_t lda,
    const float* b, std::int64_t ldb, std::int64_t rows, std::int64_t cols, std::int64_t depth,
    TileStart start, float scale, Triangle shape)
{
    constexpr std::int64_t MR = V::kTileRows, NR = V::kTileVecs, L = V::kWidth;
    for (std::int64_t j0 = 0; j0 < cols; j0 += NR * L)
        for (std::int64_t i0 = 0; i0 < rows; i0 += MR) {
            const std::int64_t mr = std::min(MR, rows - i0);
            std::int64_t colEnd = cols, kEnd = depth;
            if (shape == Triangle::ColumnsToDiagonal)
                colEnd = std::min(cols, roundUp(i0 + mr, L));
            else if (shape == Triangle::DepthToDiagonal)
                kEnd = std::min(depth, i0 + mr);
            if (j0 >= colEnd)
                continue;
            tileAny<V>(int(mr), int(std::min(NR, (colEnd - j0) / L)), c + i0 * ldc + j0, ldc,
                a + i0 * lda, lda, b + j0, ldb, kEnd, start, scale);
        }
}

// Solves (I - strictly-lower negA) X = X0 in place, row by row (x_i += sum_{j<i} negA_ij x_j,
// in j order): rows before a block of kTileRows come in as one tiled product, the block's
// own rows one by one.
template <class V>
CW_DELTA_TARGET void forwardSubstitute(float* x, std::int64_t ldx, std::int64_t cols,
    const float* negA, std::int64_t lda, std::int64_t n)
{
    constexpr std::int64_t MR = V::kTileRows, L = V::kWidth, WV = V::kWideVecs;
    for (std::int64_t i0 = 0; i0 < n; i0 += MR) {
        const std::int64_t mr = std::min(MR, n - i0);
        if (i0 > 0)
            gemm<V>(x + i0 * ldx, ldx, negA + i0 * lda, lda, x, ldx, mr, cols, i0, TileStart::Load,
                1.0f, Triangle::None);
        for (std::int64_t r = 1; r < mr; ++r)
            for (std::int64_t j0 = 0; j0 < cols; j0 += WV * L)
                tileUpTo<V, 1, int(WV)>(int(std::min(WV, (cols - j0) / L)), x + (i0 + r) * ldx + j0,
                    ldx, negA + (i0 + r) * lda + i0, lda, x + i0 * ldx + j0, ldx, r,
                    TileStart::Load, 1.0f);
    }
}

// Work space of one chunk; width is the chunk rounded up to whole registers.
struct ChunkTiles {
    std::int64_t width;
    float* cum; // c_i, padded with c_last
    float* expCum; // exp(c_i)
    float* tailDecay; // exp(c_last - c_j)
    float* keysT; // [dk][width], zero past n
    float* negA; // [chunk][width]
    float* qk; // [chunk][width]
    float* vNew; // [chunk][dv]: U, then U - W S
    float* negW; // [chunk][dk]
    float* qDecayed; // [chunk][dk]: q_i exp(c_i) / sqrt(dk)
};

// The decays, masks and gates of kk and qk (row i of negA and qk on entry: k_i . k_j and
// q_i . k_j for the register blocks j0 <= i; later blocks are set to 0).
template <class V>
CW_DELTA_TARGET void decayScores(
    const ChunkTiles& t, const float* beta, std::int64_t n, float qScale)
{
    using R = typename V::Reg;
    constexpr std::int64_t L = V::kWidth;
    const R scale = V::set1(qScale);
    for (std::int64_t i = 0; i < n; ++i) {
        const R ci = V::set1(t.cum[i]), bi = V::set1(beta[i]);
        float* ai = t.negA + i * t.width;
        float* qi = t.qk + i * t.width;
        for (std::int64_t j0 = 0; j0 < t.width; j0 += L) {
            if (j0 > i) {
                V::store(ai + j0, V::zero());
                V::store(qi + j0, V::zero());
                continue;
            }
            const R decay = vexp<V>(V::sub(ci, V::load(t.cum + j0)));
            const R a = V::mul(V::mul(bi, V::load(ai + j0)), decay);
            V::store(ai + j0, V::keepBelow(V::sub(V::zero(), a), j0, i));
            V::store(
                qi + j0, V::keepBelow(V::mul(V::mul(V::load(qi + j0), scale), decay), j0, i + 1));
        }
    }
}

// One chunk of n tokens (n <= the chunk size t was made for): out rows and the state S.
template <class V>
CW_DELTA_TARGET void chunkStep(const float* q, const float* k, std::int64_t qkStride,
    const float* v, std::int64_t vStride, const float* g, const float* beta, std::int64_t n,
    std::int64_t dk, std::int64_t dv, float* state, float* out, std::int64_t outStride,
    float qScale, const ChunkTiles& t)
{
    using R = typename V::Reg;
    constexpr std::int64_t L = V::kWidth;
    const std::int64_t nPadded = roundUp(n, L);
    float acc = 0.0f;
    for (std::int64_t i = 0; i < n; ++i) {
        acc += g[i];
        t.cum[i] = acc;
    }
    for (std::int64_t i = n; i < nPadded; ++i)
        t.cum[i] = acc;
    const R last = V::set1(acc);
    for (std::int64_t i = 0; i < nPadded; i += L) {
        const R c = V::load(t.cum + i);
        V::store(t.expCum + i, vexp<V>(c));
        V::store(t.tailDecay + i, vexp<V>(V::sub(last, c)));
    }
    for (std::int64_t d = 0; d < dk; ++d)
        std::fill(t.keysT + d * t.width + n, t.keysT + (d + 1) * t.width, 0.0f);
    for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t d = 0; d < dk; ++d)
            t.keysT[d * t.width + j] = k[j * qkStride + d];

    gemm<V>(t.negA, t.width, k, qkStride, t.keysT, t.width, n, t.width, dk, TileStart::Zero, 1.0f,
        Triangle::ColumnsToDiagonal);
    gemm<V>(t.qk, t.width, q, qkStride, t.keysT, t.width, n, t.width, dk, TileStart::Zero, 1.0f,
        Triangle::ColumnsToDiagonal);
    decayScores<V>(t, beta, n, qScale);

    for (std::int64_t i = 0; i < n; ++i) {
        const R bi = V::set1(beta[i]), ei = V::set1(t.expCum[i]);
        const R qe = V::set1(t.expCum[i] * qScale);
        for (std::int64_t d = 0; d < dv; d += L)
            V::store(t.vNew + i * dv + d, V::mul(bi, V::load(v + i * vStride + d)));
        for (std::int64_t d = 0; d < dk; d += L) {
            const R w = V::mul(V::mul(bi, V::load(k + i * qkStride + d)), ei);
            V::store(t.negW + i * dk + d, V::sub(V::zero(), w));
            V::store(t.qDecayed + i * dk + d, V::mul(V::load(q + i * qkStride + d), qe));
        }
    }
    forwardSubstitute<V>(t.vNew, dv, dv, t.negA, t.width, n);
    forwardSubstitute<V>(t.negW, dk, dk, t.negA, t.width, n);

    gemm<V>(t.vNew, dv, t.negW, dk, state, dv, n, dv, dk, TileStart::Load, 1.0f, Triangle::None);
    gemm<V>(out, outStride, t.qDecayed, dk, state, dv, n, dv, dk, TileStart::Zero, 1.0f,
        Triangle::None);
    gemm<V>(out, outStride, t.qk, t.width, t.vNew, dv, n, dv, n, TileStart::Load, 1.0f,
        Triangle::DepthToDiagonal);

    for (std::int64_t d = 0; d < dk; ++d)
        for (std::int64_t j = 0; j < nPadded; j += L)
            V::store(t.keysT + d * t.width + j,
                V::mul(V::load(t.keysT + d * t.width + j), V::load(t.tailDecay + j)));
    gemm<V>(state, dv, t.keysT, t.width, t.vNew, dv, dk, dv, n, TileStart::LoadScaled,
        t.expCum[n - 1], Triangle::None);
}

template <class V>
void runChunked(const float* q, const float* k, std::int64_t qkStride, const float* v,
    std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens, std::int64_t dk,
    std::int64_t dv, float* state, float* out, std::int64_t outStride, int chunk)
{
    const std::int64_t c = chunk, width = roundUp(c, V::kWidth);
    // One buffer per thread, kept between calls (the pool's workers run every head of a step).
    thread_local std::vector<float> buffer;
    const std::int64_t floats = 3 * width + dk * width + 2 * c * width + c * dv + 2 * c * dk;
    if (std::int64_t(buffer.size()) < floats)
        buffer.resize(std::size_t(floats));
    float* p = buffer.data();
    auto take = [&p](std::int64_t count) {
        float* start = p;
        p += count;
        return start;
    };
    ChunkTiles t;
    t.width = width;
    t.cum = take(width);
    t.expCum = take(width);
    t.tailDecay = take(width);
    t.keysT = take(dk * width);
    t.negA = take(c * width);
    t.qk = take(c * width);
    t.vNew = take(c * dv);
    t.negW = take(c * dk);
    t.qDecayed = take(c * dk);

    const FlushSubnormals flush;
    const float qScale = 1.0f / std::sqrt(float(dk));
    for (std::int64_t start = 0; start < nTokens; start += c) {
        const std::int64_t n = std::min(c, nTokens - start);
        if (const std::int64_t next = std::min(c, nTokens - start - c); next > 0) {
            prefetchRows(q + (start + c) * qkStride, qkStride, next, dk);
            prefetchRows(k + (start + c) * qkStride, qkStride, next, dk);
            prefetchRows(v + (start + c) * vStride, vStride, next, dv);
            prefetchRows(out + (start + c) * outStride, outStride, next, dv);
        }
        chunkStep<V>(q + start * qkStride, k + start * qkStride, qkStride, v + start * vStride,
            vStride, g + start, beta + start, n, dk, dv, state, out + start * outStride, outStride,
            qScale, t);
    }
}

// One decode token on NB registers of columns of the state (row stride dv): the columns of S
// are independent, so the block is read for S^T k, then updated and multiplied by q while it
// is still in L1 or L2; each state value comes from memory once and goes back once. The sums
// over dk run in row order, as in the portable code.
template <class V, int NB>
CW_DELTA_TARGET void recurrentColumns(const float* q, const float* k, const float* v,
    typename V::Reg decay, float beta, float qScale, std::int64_t dk, std::int64_t dv, float* state,
    float* out)
{
    using R = typename V::Reg;
    constexpr std::int64_t L = V::kWidth;
    R acc[NB];
#pragma GCC unroll 8
    for (int b = 0; b < NB; ++b)
        acc[b] = V::zero();
    for (std::int64_t i = 0; i < dk; ++i) {
        const R ki = V::set1(k[i]);
        const float* row = state + i * dv;
#pragma GCC unroll 8
        for (int b = 0; b < NB; ++b)
            acc[b] = V::fma(ki, V::mul(V::load(row + b * L), decay), acc[b]);
    }
    R delta[NB];
    const R betaV = V::set1(beta);
#pragma GCC unroll 8
    for (int b = 0; b < NB; ++b) {
        delta[b] = V::mul(V::sub(V::load(v + b * L), acc[b]), betaV);
        acc[b] = V::zero();
    }
    for (std::int64_t i = 0; i < dk; ++i) {
        const R ki = V::set1(k[i]), qi = V::set1(q[i] * qScale);
        float* row = state + i * dv;
#pragma GCC unroll 8
        for (int b = 0; b < NB; ++b) {
            const R s = V::fma(ki, delta[b], V::mul(V::load(row + b * L), decay));
            V::store(row + b * L, s);
            acc[b] = V::fma(qi, s, acc[b]);
        }
    }
#pragma GCC unroll 8
    for (int b = 0; b < NB; ++b)
        V::store(out + b * L, acc[b]);
}

template <class V, int NB>
CW_DELTA_TARGET void recurrentColumnsUpTo(int nb, const float* q, const float* k, const float* v,
    typename V::Reg decay, float beta, float qScale, std::int64_t dk, std::int64_t dv, float* state,
    float* out)
{
    if constexpr (NB > 1) {
        if (nb < NB) {
            recurrentColumnsUpTo<V, NB - 1>(nb, q, k, v, decay, beta, qScale, dk, dv, state, out);
            return;
        }
    }
    recurrentColumns<V, NB>(q, k, v, decay, beta, qScale, dk, dv, state, out);
}

template <class V>
CW_DELTA_TARGET void recurrentToken(const float* q, const float* k, const float* v, float g,
    float beta, float qScale, std::int64_t dk, std::int64_t dv, float* state, float* out)
{
    constexpr std::int64_t L = V::kWidth, NB = V::kRecVecs;
    const typename V::Reg decay = V::set1(std::exp(g));
    for (std::int64_t j0 = 0; j0 < dv; j0 += NB * L)
        recurrentColumnsUpTo<V, int(NB)>(int(std::min(NB, (dv - j0) / L)), q, k, v + j0, decay,
            beta, qScale, dk, dv, state + j0, out + j0);
}

template <class V>
void runRecurrent(const float* q, const float* k, std::int64_t qkStride, const float* v,
    std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens, std::int64_t dk,
    std::int64_t dv, float* state, float* out, std::int64_t outStride)
{
    const FlushSubnormals flush;
    const float qScale = 1.0f / std::sqrt(float(dk));
    for (std::int64_t t = 0; t < nTokens; ++t)
        recurrentToken<V>(q + t * qkStride, k + t * qkStride, v + t * vStride, g[t], beta[t],
            qScale, dk, dv, state, out + t * outStride);
}

} // namespace
} // namespace cw::kernels::ops
