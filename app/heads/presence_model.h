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
// Tried and left out (issue 34 section 3; 5-fold on 298 against 0.783/0.786/0.789/0.786 for
// seeds 17-20, mostly by replaying this stage on each fold's dumped held-out and test scores,
// a replay that reproduces eval-heads' per-category figures exactly): the contract's kind
// (CUAD's 25 kinds, read off the title by their own names) as the smoothed share of training
// contracts of that kind holding the category (seeds 17/18: 0.783/0.782); a Bernoulli naive
// Bayes over the contract's heading words, cross-fitted inside the held-out contracts (seed
// 17: 0.780); the top candidate's margin over the best other category there (0.779/0.783) or
// how many categories outscore it there (0.783/0.782); an L2 of 2, 8 or 16 rather than 4
// (means 0.785/0.783/0.783 against 0.786); the model bagged over 10 bootstrap samples (0.785/
// 0.784) or its positives weighted by sqrt of the imbalance (0.781/0.789) or by 2 (0.783/
// 0.785); the plain rule below 6 or 10 held-out positives instead of 8 (6 changes nothing).
// Nor (issue 34, seed 17 against 0.783 / span 0.627) a candidate-level second stage between the
// classifier and this model: per category a logistic regression (L2 4 on standardised
// features, Newton with step halving, positives by sqrt of the imbalance) rescoring each
// contract's 10 best candidates from the first stage's logits: the candidate's own (as offset
// and as feature), the previous and next candidate's, the best in its section (a run under one
// heading) and in the rest of the contract, its rank, the qualified categories' best within
// one candidate; fitted on the fold's held-out scores, cross-fitted over five parts of them for
// the thresholds (0.770 / 0.624; with every other category's logit at the candidate as well,
// 0.771 / 0.620). Losses spread over rare and common categories alike (Unlimited License
// 0.84 -> 0.72, CRE 0.52 -> 0.45, Termination For Convenience 0.76 -> 0.73, Covenant Not To
// Sue 0.83 -> 0.79) against Non-Compete 0.70 -> 0.75 and No-Solicit Of Customers 0.50 -> 0.57.
// Nor (issue 34 section 3, seeds 17-20 against 0.786/0.790/0.792/0.789, mean 0.7893, span F1
// 0.631/0.632/0.628/0.633) a contract-level model as one more feature: the same averaged
// logistic regression fitted on whole contracts, each one example of all its features
// (candidateFeatures over the whole text) labelled with the categories present, fitted on the
// same pairs of folds as the clause models so that its held-out and test scores come as theirs
// do, and its logit read by every category's presence model. 30 epochs: 0.790/0.785/0.791/0.785
// (mean 0.7877, span unchanged); 10 epochs: 0.788/0.785/0.791/0.785 (mean 0.7872). Per category it
// swings both ways by seed (seeds 17/18: Most Favored Nation +0.02/-0.10, Affiliate
// License-Licensor +0.07/-0.07; CRE -0.03/-0.05 at 17/19): beside the best candidates' logits the
// whole contract's words add noise, not ranking.
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
