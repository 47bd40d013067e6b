#pragma once

#include "kernels/cpu/quant/q8_k.h"
#include "kernels/tensor_type.h"

#include <cstdint>

namespace cw::kernels::quant {

// dotRowQ8K with AVX-512 (F, BW): two sub-blocks per instruction, the same integer sums as
// the AVX2 products. Call only when cpuSupportsAvx512() and hasQ8KDot(type) (Q5_K goes to
// the AVX2 version). The Vnni versions need AVX-512 VNNI too and give the same values.
float dotRowQ8KAvx512(TensorType type, const void* row, const BlockQ8K* x, std::int64_t n);
float dotRowQ8KAvx512Vnni(TensorType type, const void* row, const BlockQ8K* x, std::int64_t n);

// One row against `count` (1 to 8) tokens (x + t * xStride blocks for token t), the weights
// unpacked once; out[t] equals dotRowQ8KAvx512 for token t. Types: hasQ8KTokensAvx2's (Q5_K
// goes to the AVX2 version, 4 tokens at most).
void dotRowQ8KTokensAvx512(TensorType type, const void* row, const BlockQ8K* x,
    std::int64_t xStride, int count, std::int64_t n, float* out);
void dotRowQ8KTokensAvx512Vnni(TensorType type, const void* row, const BlockQ8K* x,
    std::int64_t xStride, int count, std::int64_t n, float* out);

} // namespace cw::kernels::quant
