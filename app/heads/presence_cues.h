#pragma once

#include "app/heads/clause_candidates.h"

#include <QString>
#include <vector>

namespace cw::heads {

// Wordings a lawyer would search a contract for to find a category ("most favored",
// "liquidated damages", "covenants not to sue"). A candidate holding one may carry the
// category on weaker classifier evidence than one without: the classifier learns rare
// categories from a handful of contracts, the cues from how contracts are written. The date
// categories' cue is the candidate holding their document-level rule's date.
bool hasPresenceCue(const QString& category);

// Indices (ascending) of the candidates that hold the category's cue; none when the
// category has no cue. One scan of the text per category.
std::vector<int> cueCandidates(
    const QString& category, const QString& text, const QList<ClauseCandidate>& candidates);

} // namespace cw::heads
