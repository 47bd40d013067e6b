#pragma once

#include "kernels/token_draw.h"

#include <cstdint>

namespace cw::kernels::ops {

// What a draw's cuts leave of one row of logits: which tokens survive and with what weight.
// NaN and -inf never survive; +inf counts as the largest float.
class TokenCuts {
public:
    TokenCuts(const float* logits, std::int64_t n, const TokenDraw& draw);

    std::int32_t best() const { return std::int32_t(m_best); } // -1: no usable logit
    bool kept(std::int64_t i) const;
    double weight(std::int64_t i) const; // unnormalised; 0 for a token that is cut
    // The survivors' mass before token i and through it, in id order, as fractions of the
    // whole: the draw picks i for u in [before, through).
    struct Span {
        double before = 0.0, through = 0.0;
    };
    Span spanOf(std::int64_t i) const;

private:
    double rawWeight(float logit) const;

    const float* m_logits;
    std::int64_t m_n;
    TokenDraw m_draw;
    std::int64_t m_best = -1, m_usable = 0;
    float m_top = 0.0f, m_cut = 0.0f;
};

// The token `draw` picks from one row of n logits (kernels/token_draw.h): the argmax (lowest
// id among equals) when it is greedy, else the draw from the truncated distribution. -1 when
// no logit is usable. The reference the CUDA kernel is tested against.
std::int32_t drawToken(const float* logits, std::int64_t n, const TokenDraw& draw);

} // namespace cw::kernels::ops
