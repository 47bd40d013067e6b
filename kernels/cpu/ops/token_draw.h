#pragma once

#include "kernels/token_draw.h"

#include <cstdint>

namespace cw::kernels::ops {

// The token `draw` picks from one row of n logits (kernels/token_draw.h): the argmax (lowest
// id among equals) when it is greedy, else the draw from the truncated distribution. NaN and
// -inf are never chosen; +inf counts as the largest float. -1 when no logit is usable. The
// reference the CUDA kernel is tested against.
std::int32_t drawToken(const float* logits, std::int64_t n, const TokenDraw& draw);

} // namespace cw::kernels::ops
