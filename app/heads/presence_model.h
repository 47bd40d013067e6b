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
// 0.735), and the contract's length (no gain). Nor a few of them (5-fold on 298, seeds 17-20,
// against 0.763/0.768/0.766/0.768, mean 0.766): the best logits of the 2 categories whose
// presence labels correlate most with this one's on the fold's training contracts (0.758/0.766/
// 0.764/0.765, mean 0.763; Price Restrictions 0.32 -> 0.22 at seed 17), of the 3 such
// (0.758/0.762/0.763/0.755, mean 0.759), or of the 2 whose best logit correlates most with this
// one's label (0.760/0.764/0.764/0.760, mean 0.762): Third Party Beneficiary gains (0.38 -> 0.43
// at seed 17) and Price Restrictions, with 11 positive contracts, loses more. Nor (seeds 17/18
// at 0.763/0.768) the probability mass of the candidates scoring 0.05 or more, log1p of their
// sum, as a softer count (0.760/0.763); nor the plain rule for categories with fewer than 12
// held-out positives rather than 8 (0.757/0.759: Price Restrictions 0.32/0.42 -> 0.22/0.12, so
// the presence model is what carries the rarest categories).
// A category that CUAD defines as a qualification of others (qualifiedCategories) reads one
// more: the best logit of those others' candidates, since an exception to a non-compete needs
// a non-compete to except from. This is CUAD's definition, not a correlation fitted on data.
using PresenceFeatures = std::vector<float>;

// `scores`: [candidate][category]; `cued`: the candidates holding category k's cue;
// `qualified`: the columns of the categories that category k qualifies (none for most).
PresenceFeatures presenceFeatures(const std::vector<std::vector<float>>& scores, int k,
    const std::vector<int>& cued, const std::vector<int>& qualified = {});

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
