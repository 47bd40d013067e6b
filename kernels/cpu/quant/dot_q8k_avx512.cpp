// AVX-512 (F, BW) integer dot products of Q4_K and Q6_K rows with Q8_K activations, for CPUs
// without VNNI (dot_q8k_avx512_vnni.cpp has the same kernels with vpdpwssd). Target
// attributes keep the rest of the binary baseline x86-64; dot_q8k.cpp calls these only after
// checking the CPU.
#include "kernels/cpu/quant/dot_q8k_avx512.h"

#include "kernels/cpu/quant/dot_q8k_avx2.h"

#include <algorithm>
#include <cassert>

#if defined(__x86_64__) || defined(__i386__)
// GCC 12's avx512fintrin.h builds _mm512_inserti64x4 and _mm512_castsi256_si512 on a
// deliberately undefined register, which -Wuninitialized reports at every inlined use.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define CW_Q8K_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))
#define CW_Q8K_VNNI 0
#include "kernels/cpu/quant/dot_q8k_avx512_kernels.h"

namespace cw::kernels::quant {

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
        for (int t = 0; t < count; t += 4) // the AVX2 products take up to 4
            dotRowQ8KTokensAvx2(
                type, row, x + t * xStride, xStride, std::min(4, count - t), n, out + t);
        return;
    }
    dotTokensUpTo8(type, row, x, xStride, count, n / kQK_K, out);
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
