#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>

namespace cw::kernels::quant {

// Converts n values of `type` (n a whole number of blocks of that type) to floats, with
// exactly the formulas of ggml's dequantize_row_* (ggml-quants.c), so results are bit for bit
// those of llama.cpp. Types: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K,
// Q5_K, Q6_K, IQ4_XS.
void dequantizeRow(TensorType type, const void* src, float* dst, std::int64_t n);

} // namespace cw::kernels::quant
