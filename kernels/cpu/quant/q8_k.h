#pragma once

// Activations quantized to 8 bits for the integer dot products of the k-quants (the Q8_K
// block of ggml: one float scale per 256 values and the sum of every 16 quants). Decoding a
// matrix-vector product then multiplies bytes by bytes (maddubs) instead of converting every
// weight to float, which is what keeps the 2-core decode on the memory, not the ALUs.

#include "kernels/cpu/quant/quant_blocks.h"

#include <cstdint>

namespace cw::kernels::quant {

struct BlockQ8K {
    float d; // scale: value = d * q
    std::int8_t qs[kQK_K];
    std::int16_t bsums[kQK_K / 16]; // sum of each run of 16 quants
};
static_assert(sizeof(BlockQ8K) == 4 + kQK_K + kQK_K / 8);

// x (n values, n a multiple of 256) -> n / 256 blocks. Each block's scale is max|x| / 127 and
// every value rounds to the nearest quant, so |error| <= d / 2 per value.
void quantizeRowQ8K(const float* x, BlockQ8K* out, std::int64_t n);

} // namespace cw::kernels::quant
