#pragma once

#include "kernels/cpu/quant/q8_k.h"
#include "kernels/tensor_type.h"

#include <cstdint>

namespace cw::kernels::quant {

// dotRowQ8K with AVX-512 (F, BW): the AVX2 products on 512-bit registers, two sub-block
// pairs per instruction; the same integer sums. Call only when cpuSupportsAvx512() and
// hasQ8KDot(type) (Q5_K goes to the AVX2 version).
float dotRowQ8KAvx512(TensorType type, const void* row, const BlockQ8K* x, std::int64_t n);

// One row against `count` (1 to 4) tokens (x + t * xStride blocks for token t), the weights
// unpacked once; out[t] equals dotRowQ8KAvx512 for token t. Types: hasQ8KTokensAvx2's.
void dotRowQ8KTokensAvx512(TensorType type, const void* row, const BlockQ8K* x,
    std::int64_t xStride, int count, std::int64_t n, float* out);

} // namespace cw::kernels::quant
