#pragma once

#include <optional>
#include <vector>

namespace cw::heads {

// What a contract's candidates say about one category, as the presence model reads it: the
// logits of its three best candidates (a contract that has the category usually says so in
// more than one sentence; a stray match is usually alone), how many candidates score above
// one half, and whether a candidate holds the category's cue wording, with that candidate's
// logit. Tried and left out: the best logits of the other categories, as a sketch of what kind
// of contract it is (fitted on some 240 held-out contracts they overfit: macro-F1 0.763 ->
// 0.735), and the contract's length (no gain).
constexpr int kOwnPresenceFeatures = 6;
using PresenceFeatures = std::vector<float>;

// `scores`: [candidate][category]; `cued`: the candidates holding category k's cue.
PresenceFeatures presenceFeatures(
    const std::vector<std::vector<float>>& scores, int k, const std::vector<int>& cued);

// A logistic regression on PresenceFeatures: p(the contract has the category). Fitted per
// category on held-out scores of inner-fold models, so it learns how far to trust the
// sentence classifier for that category; the presence threshold is then chosen on its output.
// A model with fewer weights than features reads the first ones only; the file says how many
// (model format 5; format 4 held six).
struct PresenceModel {
    float bias = 0.0f;
    std::vector<float> weights;
    double probability(const PresenceFeatures& x) const;
};

struct PresenceSample {
    PresenceFeatures x;
    bool present = false;
};

// Below this many positive (and negative) held-out contracts the model would fit noise, and
// the category keeps the plain rule (best candidate, or the cue route); none then.
constexpr int kMinPresencePositives = 8;

// Maximum likelihood with an L2 penalty on the standardised weights, by Newton's method.
std::optional<PresenceModel> fitPresenceModel(const std::vector<PresenceSample>& samples);

} // namespace cw::heads
