// AVX-512 integer dot products of Q4_K and Q6_K rows with Q8_K activations on CPUs with VNNI
// (Ice Lake, Sapphire Rapids, Zen 4 and later): vpdpwssd adds each sub-block's scaled sums
// into its accumulator in one instruction where the plain AVX-512 kernels take two. Called by
// dot_q8k.cpp only after checking the CPU.
#include "kernels/cpu/quant/dot_q8k_avx2.h"
#include "kernels/cpu/quant/dot_q8k_avx512.h"

#include <algorithm>
#include <cassert>

#if defined(__x86_64__) || defined(__i386__)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define CW_Q8K_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define CW_Q8K_VNNI 1
#include "kernels/cpu/quant/dot_q8k_avx512_kernels.h"

namespace cw::kernels::quant {

float dotRowQ8KAvx512Vnni(TensorType type, const void* row, const BlockQ8K* x, std::int64_t n)
{
    if (type != TensorType::Q4_K && type != TensorType::Q6_K)
        return dotRowQ8KAvx2(type, row, x, n);
    float out;
    dotTokens<1>(type, row, x, 0, n / kQK_K, &out);
    return out;
}

void dotRowQ8KTokensAvx512Vnni(TensorType type, const void* row, const BlockQ8K* x,
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

float dotRowQ8KAvx512Vnni(TensorType, const void*, const BlockQ8K*, std::int64_t)
{
    assert(false && "dotRowQ8KAvx512Vnni called on a CPU without AVX-512 VNNI");
    return 0.0f;
}

void dotRowQ8KTokensAvx512Vnni(
    TensorType, const void*, const BlockQ8K*, std::int64_t, int, std::int64_t, float*)
{
    assert(false && "dotRowQ8KTokensAvx512Vnni called on a CPU without AVX-512 VNNI");
}

} // namespace cw::kernels::quant

#endif
