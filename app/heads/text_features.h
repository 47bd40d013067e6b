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
constexpr uint32_t kFeatureVersion = 4;
constexpr uint32_t kDefaultHashBits = 18;

// Word unigrams and bigrams (lower-cased, numbers folded to one token), stems (a long word's
// first six letters), the words of the section heading, the words of the previous and the
// next candidate, relative position in the contract,
// length, and a few clause-type patterns (money amounts, day counts, defined terms).
FeatureVector candidateFeatures(
    const QString& text, const QList<ClauseCandidate>& candidates, int index, uint32_t hashBits);

} // namespace cw::heads
