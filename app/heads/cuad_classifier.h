#pragma once

#include "app/heads/clause_model.h"
#include "app/review/review_types.h"

#include <QList>
#include <functional>

namespace cw::heads {

// The fast clause classifier: scores every candidate of the text for every category of
// the model and returns the findings (category, candidate span, confidence). Findings of
// a category come only when the contract's best candidate passes the category's presence
// threshold. `cancelled` is polled every few hundred candidates.
QList<Finding> classifyText(const ClauseModel& model, const QString& text,
    const QList<Clause>& clauses, const std::function<bool()>& cancelled = {});

// Scores [candidate][category] of every candidate, category gates applied: what a review
// and the evaluation compute alike. Empty when `cancelled` says so.
std::vector<std::vector<float>> scoreCandidates(const ClauseModel& model, const QString& text,
    const QList<ClauseCandidate>& candidates, const std::function<bool()>& cancelled = {});

// The same on candidates whose features are already computed (training, evaluation).
QList<Finding> classifyCandidates(const ClauseModel& model, const QString& text,
    const QList<ClauseCandidate>& candidates, const std::vector<std::vector<float>>& scores);

// Whether a contract has category `k` of the model (CategoryModel's rule), and the
// candidate that decided it. `cued`: the candidates holding the category's presence cue.
struct PresenceDecision {
    bool present = false;
    bool byCue = false; // only through the cue route
    int top = -1;
};
PresenceDecision decidePresence(const CategoryModel& category,
    const std::vector<std::vector<float>>& scores, int k, const std::vector<int>& cued);

// Zeroes the scores of candidates that lack the words a category cannot do without
// ("escrow" for Source Code Escrow, "insur" for Insurance ...), so rare categories learned
// from few examples do not fire on unrelated text. In place; scores[candidate][category].
void applyCategoryGates(const ClauseModel& model, const QString& text,
    const QList<ClauseCandidate>& candidates, std::vector<std::vector<float>>& scores);

} // namespace cw::heads
