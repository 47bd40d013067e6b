#pragma once
// The DeltaNet layer's element-wise stages on vector registers, written once for AVX2 and
// AVX-512: the causal depthwise convolution with SiLU, and the gated RMSNorm of the core's
// output. Included only by gated_delta_rule_avx2.cpp and gated_delta_rule_avx512.cpp, on
// gated_delta_rule_tiles.h (their register types V, CW_DELTA_TARGET and vexp), so everything
// here is internal to each of them as the delta rule is. V also provides div(a, b) (IEEE,
// correctly rounded) and, for the norm's double sum, DReg, dzero, addSquares and dsum.
//
// Both follow the portable loops of ops.cpp operation for operation, rounding for rounding:
// the convolution multiplies and adds apart, not in FMAs (see convTile), and the norm's squares
// are exact in double. Only exp differs: the polynomial vexp (about 1 ulp). Channels past the last
// whole register run in a zero-padded register, so the answer does not depend on the register
// width.

#include "kernels/cpu/ops/gated_delta_rule_tiles.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>

#ifndef CW_DELTA_TARGET
#error "define CW_DELTA_TARGET and the register type before including delta_net_rows.h"
#endif

namespace cw::kernels::ops {
namespace {

// silu(x) = x / (1 + exp(-x)), as ops::silu.
template <class V> CW_DELTA_TARGET inline typename V::Reg vsilu(typename V::Reg x)
{
    return V::div(x, V::add(V::set1(1.0f), vexp<V>(V::sub(V::zero(), x))));
}

// Channels per tile of the convolution: its weights and carried inputs, transposed to
// [tap][channel], stay in L1 (8 + 6 KB for kernel 4) while the tile walks down the tokens,
// and each token's 2 KB of the tile's inputs is one contiguous run for the prefetchers.
constexpr std::int64_t kConvTile = 512;
// The rows are 32 KB apart (a page each), which the hardware prefetchers do not follow:
// the tile asks for the input row kPrefetchRows tokens ahead (10 % at T = 256 on Zen 4).
constexpr std::int64_t kPrefetchRows = 4;

// causalConv1dSilu (ops.h) on one tile of nc <= kConvTile channels, kernel K. Token by
// token, every register of channels: acc = w0 x[t-K+1]; acc = acc + w_i x[t-K+1+i] in tap
// order; out = silu(acc). The products and sums are rounded apart, as the scalar loop does:
// with FMAs every output moved by an ulp or so, and on the tiny k-quant model
// (engine_k_quant_products) that moved enough activations across 8-bit rounding boundaries
// to flip decode-against-prefill and portable-against-SIMD checks; the FMA saves nothing
// measurable here (the loop waits on memory and the SiLU's division). Inputs before the first token
// come from the carried state.
template <class V, int K>
CW_DELTA_TARGET void convTile(const float* in, std::int64_t inStride, std::int64_t nTokens,
    std::int64_t nc, const float* w, float* state, float* out, std::int64_t outStride)
{
    constexpr int hist = K - 1;
    constexpr std::int64_t L = V::kWidth, S = kConvTile;
    alignas(64) float wt[K * S];
    alignas(64) float carried[(hist > 0 ? hist : 1) * S];
    for (std::int64_t c = 0; c < nc; ++c) {
        for (int i = 0; i < K; ++i)
            wt[i * S + c] = w[c * K + i];
        for (int j = 0; j < hist; ++j)
            carried[j * S + c] = state[c * hist + j];
    }
    // The row of tap i for token t: input row t - hist + i, or carried row t + i.
    auto row = [&](std::int64_t t, int i) -> const float* {
        const std::int64_t src = t - hist + i;
        return src >= 0 ? in + src * inStride : carried + (src + hist) * S;
    };
    for (std::int64_t t = 0; t < nTokens; ++t) {
        const float* x[K];
        for (int i = 0; i < K; ++i)
            x[i] = row(t, i);
        float* o = out + t * outStride;
        std::int64_t c = 0;
        const float* ahead
            = t + kPrefetchRows < nTokens ? in + (t + kPrefetchRows) * inStride : nullptr;
        for (; c + L <= nc; c += L) {
            if (ahead && (c * 4) % 64 < L * 4)
                _mm_prefetch(reinterpret_cast<const char*>(ahead + c), _MM_HINT_T0);
            typename V::Reg acc = V::mul(V::load(wt + c), V::load(x[0] + c));
#pragma GCC unroll 8
            for (int i = 1; i < K; ++i)
                acc = V::add(acc, V::mul(V::load(wt + i * S + c), V::load(x[i] + c)));
            V::store(o + c, vsilu<V>(acc));
        }
        if (c < nc) {
            // The last channels, zero-padded to a whole register: every channel gets the
            // same lanes' arithmetic, so AVX2 and AVX-512 agree for any channel count.
            alignas(64) float tap[K][L] = {}, wtail[K][L] = {}, result[L];
            for (int i = 0; i < K; ++i)
                for (std::int64_t l = 0; l < nc - c; ++l) {
                    tap[i][l] = x[i][c + l];
                    wtail[i][l] = wt[i * S + c + l];
                }
            typename V::Reg acc = V::mul(V::load(wtail[0]), V::load(tap[0]));
            for (int i = 1; i < K; ++i)
                acc = V::add(acc, V::mul(V::load(wtail[i]), V::load(tap[i])));
            V::store(result, vsilu<V>(acc));
            std::copy(result, result + (nc - c), o + c);
        }
    }
    // The state becomes the last hist inputs (some still carried ones when nTokens < hist).
    for (int j = 0; j < hist; ++j) {
        const float* r = row(nTokens, j);
        for (std::int64_t c = 0; c < nc; ++c)
            state[c * hist + j] = r[c];
    }
}

template <class V, int K>
CW_DELTA_TARGET void runConv(const float* in, std::int64_t inStride, std::int64_t nTokens,
    std::int64_t channels, const float* w, float* state, float* out, std::int64_t outStride)
{
    constexpr int hist = K - 1;
    for (std::int64_t c0 = 0; c0 < channels; c0 += kConvTile)
        convTile<V, K>(in + c0, inStride, nTokens, std::min(kConvTile, channels - c0), w + c0 * K,
            state + c0 * hist, out + c0, outStride);
}

template <class V>
void runCausalConv1dSilu(const float* in, std::int64_t inStride, std::int64_t nTokens,
    std::int64_t channels, const float* w, int kernel, float* state, float* out,
    std::int64_t outStride)
{
    switch (kernel) {
    case 2:
        runConv<V, 2>(in, inStride, nTokens, channels, w, state, out, outStride);
        break;
    case 3:
        runConv<V, 3>(in, inStride, nTokens, channels, w, state, out, outStride);
        break;
    case 4:
        runConv<V, 4>(in, inStride, nTokens, channels, w, state, out, outStride);
        break;
    default:
        assert(false && "convolution kernel size without a vector version");
    }
}

// gatedRmsNorm (ops.h) on `rows` rows of n values, n a multiple of kWidth: the sum of
// squares in double (each square exact), then x = ((x * scale) * w) * silu(gate).
template <class V>
CW_DELTA_TARGET void runGatedRmsNorm(
    float* x, const float* gate, std::int64_t rows, std::int64_t n, const float* w, float eps)
{
    constexpr std::int64_t L = V::kWidth;
    for (std::int64_t r = 0; r < rows; ++r) {
        float* xr = x + r * n;
        const float* gr = gate + r * n;
        typename V::DReg lo = V::dzero(), hi = V::dzero();
        for (std::int64_t i = 0; i < n; i += L)
            V::addSquares(lo, hi, V::load(xr + i));
        const double sum = V::dsum(lo, hi);
        const typename V::Reg scale
            = V::set1(float(1.0 / std::sqrt(sum / double(n) + double(eps))));
        for (std::int64_t i = 0; i < n; i += L) {
            typename V::Reg y = V::mul(V::load(xr + i), scale);
            if (w)
                y = V::mul(y, V::load(w + i));
            V::store(xr + i, V::mul(y, vsilu<V>(V::load(gr + i))));
        }
    }
}

} // namespace
} // namespace cw::kernels::ops
