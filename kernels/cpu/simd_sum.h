#pragma once
// The lane sum every x86 kernel file ends its dot products with. Include only on x86
// (inside `#if defined(__x86_64__) || defined(__i386__)`): the target attribute lets
// files built without -mavx2 call it from their own AVX2 or AVX-512 functions.
#include <immintrin.h>

namespace cw::kernels::simd {

// The sum of the eight lanes of `v`.
__attribute__((target("avx2,fma"))) inline float horizontalSum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

} // namespace cw::kernels::simd
