#pragma once

#include "kernels/cpu/quant/q8_k.h"
#include "kernels/tensor_type.h"

#include <cstdint>

namespace cw::kernels::quant {

// dotRowQ8K with AVX2 (maddubs on the packed nibbles). Call only when cpuSupportsAvx2() and
// hasQ8KDot(type); compiled with target attributes, so the binary runs on any x86-64.
float dotRowQ8KAvx2(TensorType type, const void* row, const BlockQ8K* x, std::int64_t n);

} // namespace cw::kernels::quant
