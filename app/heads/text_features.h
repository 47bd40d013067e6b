#pragma once

#include "app/heads/clause_candidates.h"

#include <QList>
#include <QString>
#include <cstdint>
#include <vector>

namespace cw::heads {

// Hashed features of one candidate: sorted unique indices, each with the same weight
// (binary features scaled to unit length).
struct FeatureVector {
    std::vector<uint32_t> indices;
    float value = 0.0f; // 1/sqrt(indices.size())
};

// Bumped whenever the features change, so an old model file is refused, not misread.
constexpr uint32_t kFeatureVersion = 5;
constexpr uint32_t kDefaultHashBits = 18;

// Word unigrams and bigrams (lower-cased, numbers folded to one token), stems (a long word's
// first six letters), character 4-grams of each word (feature version 5), the words of the
// section heading, the words of the previous and the next candidate, relative position in the
// contract, length, and a few clause-type patterns (money amounts, day counts, defined terms).
// The character 4-grams lift the 5-fold span F1 on the 298 contracts 0.621 -> 0.625/0.627
// (seeds 17/18; four seeds without them: 0.620-0.621) and leave the macro-F1 where the seeds
// scatter it. Tried and left out, 5-fold on 298, seed 17 (0.770 / 0.621 before): word trigrams
// and skip-bigrams (0.756 / 0.615), 2^20 hash buckets (0.768 / 0.619), the heading's stems and
// the parent section's heading (0.768 / 0.621; seed 18 0.762 / 0.622 against 0.763 / 0.621).
// Against version 5 over seeds 17-20 (macro-F1 0.763/0.768/0.765/0.768, span F1 0.625/0.627/
// 0.623/0.627): the words in a negation's scope ("no", "not", "nothing"... up to a comma or
// "except") as features of their own, for "no third-party beneficiaries" against "X is a third
// party beneficiary" (0.768/0.766/0.767/0.766, span 0.625/0.627/0.622/0.625: Third Party
// Beneficiary 0.38 -> 0.47 at seed 17 but 0.36 at 18), and pairs of the clause-type patterns
// (seeds 17/18: 0.765/0.760); and how far into its section a candidate sits (first, second ...
// fifth sentence under a heading, or further; seeds 17/18: 0.766/0.767, span 0.624/0.625,
// within the seeds' scatter). Against seeds 17/18 at 0.783/0.786 (span 0.627/0.628): the
// contract's kind (CUAD's 25 kinds, each found in the title by its own name: licence,
// distributor, supply, franchise ...; "other" for none) as a feature of every candidate
// (0.784/0.785, span 0.627/0.626). Also against those (issue 34): the first six words of a
// candidate in a namespace of their own, as who grants or covenants sits at the opening
// ("Licensor hereby grants", "No third party") and to whom later (0.782/0.785, span 0.626/
// 0.626; Affiliate License-Licensor 0.55 -> 0.59, No-Solicit Of Customers 0.50 -> 0.45 at
// 17); the words of the other candidates of its section within six either way, for an
// exception whose covenant sits further up (0.778/0.776, span 0.623/0.622); and, to see whether
// context dilutes the sentence's own words, no next-candidate words (0.786/0.776); character
// 5-grams of each word beside the 4-grams, in a namespace of their own (0.781/0.786, span
// 0.625/0.626), or 3-grams (0.772/0.781, span 0.620/0.624).
FeatureVector candidateFeatures(
    const QString& text, const QList<ClauseCandidate>& candidates, int index, uint32_t hashBits);

} // namespace cw::heads
