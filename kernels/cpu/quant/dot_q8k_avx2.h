#pragma once

#include "kernels/cpu/quant/q8_k.h"
#include "kernels/tensor_type.h"

#include <cstdint>

namespace cw::kernels::quant {

// dotRowQ8K with AVX2 (maddubs on the packed nibbles). Call only when cpuSupportsAvx2() and
// hasQ8KDot(type); compiled with target attributes, so the binary runs on any x86-64.
float dotRowQ8KAvx2(TensorType type, const void* row, const BlockQ8K* x, std::int64_t n);

// One row against `count` (1 to 4) tokens' activations, x + t * xStride blocks for token t:
// the weights are unpacked once for all of them (a batch's products are compute-bound).
// out[t] equals dotRowQ8KAvx2 for token t. Types: those hasQ8KTokensAvx2 accepts.
bool hasQ8KTokensAvx2(TensorType type);
void dotRowQ8KTokensAvx2(TensorType type, const void* row, const BlockQ8K* x,
    std::int64_t xStride, int count, std::int64_t n, float* out);

} // namespace cw::kernels::quant
