#pragma once

#include <array>
#include <optional>
#include <vector>

namespace cw::heads {

// What a contract's candidates say about one category, as the presence model reads it: the
// logits of its three best candidates (a contract that has the category usually says so in
// more than one sentence; a stray match is usually alone), how many candidates score above
// one half, and whether a candidate holds the category's cue wording, with that candidate's
// logit.
constexpr int kPresenceFeatures = 6;
using PresenceFeatures = std::array<float, kPresenceFeatures>;

// `scores`: [candidate][category]; `cued`: the candidates holding the category's cue.
PresenceFeatures presenceFeatures(
    const std::vector<std::vector<float>>& scores, int k, const std::vector<int>& cued);

// A logistic regression on PresenceFeatures: p(the contract has the category). Fitted per
// category on held-out scores of inner-fold models, so it learns how far to trust the
// sentence classifier for that category; the presence threshold is then chosen on its output.
struct PresenceModel {
    float bias = 0.0f;
    std::array<float, kPresenceFeatures> weights {};
    double probability(const PresenceFeatures& x) const;
};

struct PresenceSample {
    PresenceFeatures x {};
    bool present = false;
};

// Below this many positive (and negative) contracts the model would fit noise; none then.
constexpr int kMinPresencePositives = 8;

// Maximum likelihood with an L2 penalty on the (standardised) weights, by Newton's method.
std::optional<PresenceModel> fitPresenceModel(const std::vector<PresenceSample>& samples);

} // namespace cw::heads
