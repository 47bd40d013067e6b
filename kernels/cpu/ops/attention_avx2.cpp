// AVX2/FMA attention over a paged KV cache: the functions carry target attributes, so the
// binary runs on any x86-64; ops.cpp calls them after checking the CPU. Non-x86 builds
// compile an empty body that is never called.
#include "kernels/cpu/ops/attention_avx2.h"

#include "kernels/cpu/ops/ops.h"

#include <algorithm>
#include <cassert>

#if defined(__x86_64__) || defined(__i386__)
#include "kernels/cpu/simd_sum.h"

#include <immintrin.h>

#define CW_AVX2 __attribute__((target("avx2,fma")))

namespace cw::kernels::ops {
namespace {

using simd::horizontalSum;

CW_AVX2 inline float dot(const float* a, const float* b, std::int64_t n)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    std::int64_t d = 0;
    for (; d + 16 <= n; d += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + d), _mm256_loadu_ps(b + d), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + d + 8), _mm256_loadu_ps(b + d + 8), acc1);
    }
    if (d < n)
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + d), _mm256_loadu_ps(b + d), acc0);
    return horizontalSum(_mm256_add_ps(acc0, acc1));
}

// out[0..64) = sum_j p[j] * values[j][offset..offset+64), in key order.
CW_AVX2 void weightedSum64(
    const float* p, const float* const* values, std::int64_t count, std::int64_t offset, float* out)
{
    __m256 acc[8];
    for (auto& a : acc)
        a = _mm256_setzero_ps();
    for (std::int64_t j = 0; j < count; ++j) {
        const __m256 w = _mm256_set1_ps(p[j]);
        const float* v = values[j] + offset;
        for (int k = 0; k < 8; ++k)
            acc[k] = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 8 * k), acc[k]);
    }
    for (int k = 0; k < 8; ++k)
        _mm256_storeu_ps(out + 8 * k, acc[k]);
}

CW_AVX2 void weightedSum8(
    const float* p, const float* const* values, std::int64_t count, std::int64_t offset, float* out)
{
    __m256 acc = _mm256_setzero_ps();
    for (std::int64_t j = 0; j < count; ++j)
        acc = _mm256_fmadd_ps(_mm256_set1_ps(p[j]), _mm256_loadu_ps(values[j] + offset), acc);
    _mm256_storeu_ps(out, acc);
}

// R query heads that read the same keys and values (one KV group of grouped-query attention,
// one query position): each key and value row is loaded once for all R. Per head the sums
// run in the same order as attentionHeadAvx2, so the results are the same bit for bit.
template <int R>
CW_AVX2 void sharedKvHeads(const float* q, std::int64_t qStride, const float* const* keys,
    const float* const* values, std::int64_t nKv, std::int64_t headDim, float scale, float* out,
    std::int64_t outStride, float* scratch)
{
    for (std::int64_t j = 0; j < nKv; ++j) {
        const float* k = keys[j];
        __m256 acc0[R], acc1[R];
        for (int r = 0; r < R; ++r)
            acc0[r] = acc1[r] = _mm256_setzero_ps();
        std::int64_t d = 0;
        for (; d + 16 <= headDim; d += 16) {
            const __m256 k0 = _mm256_loadu_ps(k + d), k1 = _mm256_loadu_ps(k + d + 8);
            for (int r = 0; r < R; ++r) {
                acc0[r] = _mm256_fmadd_ps(_mm256_loadu_ps(q + r * qStride + d), k0, acc0[r]);
                acc1[r] = _mm256_fmadd_ps(_mm256_loadu_ps(q + r * qStride + d + 8), k1, acc1[r]);
            }
        }
        if (d < headDim) {
            const __m256 k0 = _mm256_loadu_ps(k + d);
            for (int r = 0; r < R; ++r)
                acc0[r] = _mm256_fmadd_ps(_mm256_loadu_ps(q + r * qStride + d), k0, acc0[r]);
        }
        for (int r = 0; r < R; ++r)
            scratch[r * nKv + j] = horizontalSum(_mm256_add_ps(acc0[r], acc1[r])) * scale;
    }
    for (int r = 0; r < R; ++r)
        softmax(scratch + r * nKv, nKv);
    for (std::int64_t d = 0; d < headDim; d += 8) {
        const bool two = d + 16 <= headDim;
        __m256 acc0[R], acc1[R];
        for (int r = 0; r < R; ++r)
            acc0[r] = acc1[r] = _mm256_setzero_ps();
        for (std::int64_t j = 0; j < nKv; ++j) {
            const __m256 v0 = _mm256_loadu_ps(values[j] + d);
            const __m256 v1 = two ? _mm256_loadu_ps(values[j] + d + 8) : v0;
            for (int r = 0; r < R; ++r) {
                const __m256 w = _mm256_set1_ps(scratch[r * nKv + j]);
                acc0[r] = _mm256_fmadd_ps(w, v0, acc0[r]);
                acc1[r] = _mm256_fmadd_ps(w, v1, acc1[r]);
            }
        }
        for (int r = 0; r < R; ++r) {
            _mm256_storeu_ps(out + r * outStride + d, acc0[r]);
            if (two)
                _mm256_storeu_ps(out + r * outStride + d + 8, acc1[r]);
        }
        if (two)
            d += 8;
    }
}

} // namespace

void attentionSharedKvAvx2(const float* q, std::int64_t qStride, std::int64_t nHeads,
    const float* const* keys, const float* const* values, std::int64_t nKv, std::int64_t headDim,
    float scale, float* out, std::int64_t outStride, float* scratch)
{
    assert(headDim % 8 == 0);
    for (std::int64_t r0 = 0; r0 < nHeads; r0 += 4) {
        const float* qr = q + r0 * qStride;
        float* o = out + r0 * outStride;
        switch (std::min<std::int64_t>(4, nHeads - r0)) {
        case 1:
            sharedKvHeads<1>(qr, qStride, keys, values, nKv, headDim, scale, o, outStride, scratch);
            break;
        case 2:
            sharedKvHeads<2>(qr, qStride, keys, values, nKv, headDim, scale, o, outStride, scratch);
            break;
        case 3:
            sharedKvHeads<3>(qr, qStride, keys, values, nKv, headDim, scale, o, outStride, scratch);
            break;
        default:
            sharedKvHeads<4>(qr, qStride, keys, values, nKv, headDim, scale, o, outStride, scratch);
            break;
        }
    }
}

CW_AVX2 void attentionHeadAvx2(const float* q, std::int64_t qStride, std::int64_t nQ,
    std::int64_t firstQueryPos, const float* const* keys, const float* const* values,
    std::int64_t nKv, std::int64_t headDim, float scale, float* out, std::int64_t outStride,
    float* scratch)
{
    assert(headDim % 8 == 0);
    for (std::int64_t i = 0; i < nQ; ++i) {
        const float* qi = q + i * qStride;
        const std::int64_t seen = std::min(nKv, firstQueryPos + i + 1);
        for (std::int64_t j = 0; j < seen; ++j)
            scratch[j] = dot(qi, keys[j], headDim) * scale;
        softmax(scratch, seen);
        float* o = out + i * outStride;
        std::int64_t d = 0;
        for (; d + 64 <= headDim; d += 64)
            weightedSum64(scratch, values, seen, d, o + d);
        for (; d < headDim; d += 8)
            weightedSum8(scratch, values, seen, d, o + d);
    }
}

} // namespace cw::kernels::ops

#else

namespace cw::kernels::ops {

void attentionHeadAvx2(const float*, std::int64_t, std::int64_t, std::int64_t, const float* const*,
    const float* const*, std::int64_t, std::int64_t, float, float*, std::int64_t, float*)
{
    assert(false && "attentionHeadAvx2 called on a CPU without AVX2");
}

void attentionSharedKvAvx2(const float*, std::int64_t, std::int64_t, const float* const*,
    const float* const*, std::int64_t, std::int64_t, float, float*, std::int64_t, float*)
{
    assert(false && "attentionSharedKvAvx2 called on a CPU without AVX2");
}

} // namespace cw::kernels::ops

#endif
