#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>

namespace cw::kernels::quant {

// One row of `type` (n values) dotted with x using AVX2/FMA/F16C. Call only when the CPU has
// them (cpuSupportsAvx2()); the file is compiled with target attributes, not -mavx2.
float dotRowAvx2(TensorType type, const void* row, const float* x, std::int64_t n);

} // namespace cw::kernels::quant
