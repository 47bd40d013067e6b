#pragma once

#include "kernels/token_draw.h"

#include <cstdint>
#include <cuda_runtime_api.h>

namespace cw::kernels::cuda {

// For each row r < rows of logits x ([rows][n], on the device) whose draws[r] (on the device)
// draws a token: ids[r] = the token the draw picks, as ops::drawToken does on the host (sums
// in float, so a u within rounding of a boundary between two tokens may pick the other one);
// -1 when no logit of the row is usable. Rows whose draw is greedy keep ids[r] as it was
// (argmaxRows has written it). One block a row; each cut (top-k, top-p) is a bisection over
// the logits' order, a pass over the row per step.
cudaError_t drawTokens(const float* x, std::int64_t rows, std::int64_t n, const TokenDraw* draws,
    std::int32_t* ids, cudaStream_t stream);

} // namespace cw::kernels::cuda
