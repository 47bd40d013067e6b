#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>
#include <random>
#include <vector>

namespace cw::test {

// Random bytes for `blocks` blocks of `type` whose fp16 scale fields are powers of two
// (so every dequantized value is exact in float), for kernels that cannot be fed through a
// quantizer.
std::vector<std::uint8_t> randomBlocks(
    kernels::TensorType type, std::int64_t blocks, std::mt19937& rng);

} // namespace cw::test
