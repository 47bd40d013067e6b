#pragma once

#include "app/review/review_types.h"

#include <QList>
#include <QString>

namespace cw {

// One finding per category and clause. The classifier scores each sentence of a clause on
// its own, so a clause of three sentences that each read as "Uncapped Liability" gave three
// findings the findings table showed as three identical rows. Findings of the same category
// in the same clause (clauseIndex >= 0) become one: its span runs from the first to the last
// (its text is re-read from `text`), its score and confidence are the best, its fields are the
// union, and the risk, rule, rationale and source are those of the riskiest (then
// best-scored) finding; it needs human review when any did. Findings of no known clause are
// merged only when they repeat the same span. Order: each merged finding takes the place of
// the first of its group.
QList<Finding> mergeClauseFindings(const QList<Finding>& findings, const QString& text);

} // namespace cw
