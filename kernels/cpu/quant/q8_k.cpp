#include "kernels/cpu/quant/q8_k.h"

#include <cmath>

namespace cw::kernels::quant {

void quantizeRowQ8K(const float* x, BlockQ8K* out, std::int64_t n)
{
    for (std::int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
        BlockQ8K& block = out[b];
        float amax = 0.0f;
        for (int i = 0; i < kQK_K; ++i)
            amax = std::fmax(amax, std::fabs(x[i]));
        if (amax == 0.0f) {
            block = BlockQ8K {};
            continue;
        }
        const float inverse = 127.0f / amax;
        block.d = amax / 127.0f;
        for (int i = 0; i < kQK_K; ++i)
            block.qs[i] = std::int8_t(std::lrintf(x[i] * inverse));
        for (int g = 0; g < kQK_K / 16; ++g) {
            int sum = 0;
            for (int i = 0; i < 16; ++i)
                sum += block.qs[16 * g + i];
            block.bsums[g] = std::int16_t(sum);
        }
    }
}

} // namespace cw::kernels::quant
