#pragma once

// One sampled token chosen where its logits are (kernels/cpu/ops/token_draw.h on the host,
// kernels/cuda/ops/token_draw.h on the device), so that a GPU step returns token ids instead
// of 248,320 logits a row. The distribution is the sampler's (engine/sampling/sampler.h) for
// the same parameters: temperature, then top-k, top-p and min-p, without penalties, biases or
// a grammar (those rows stay on the host). Each cut is a threshold on the logit, found without
// sorting; tokens tied exactly at a cut are kept together where the sampler keeps the lower
// ids, and the draw walks the survivors in id order where the sampler walks them best first:
// the same distribution, another token for the same u.

#include <cstdint>

namespace cw::kernels {

struct TokenDraw {
    float temperature = 0.0f; // below 1e-6: greedy (the row's argmax; the draw is not made)
    std::int32_t topK = 0; // 0: off
    float topP = 1.0f; // 1: off
    float minP = 0.0f; // 0: off
    float u = 0.0f; // the uniform draw in [0, 1) that picks the token
};

#if defined(__CUDACC__)
#define CW_HOST_DEVICE __host__ __device__
#else
#define CW_HOST_DEVICE
#endif

CW_HOST_DEVICE inline bool drawsAToken(const TokenDraw& d)
{
    return d.temperature >= 1e-6f;
}

} // namespace cw::kernels
