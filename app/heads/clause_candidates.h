#pragma once

#include "app/review/review_types.h"

#include <QList>
#include <QString>

namespace cw::heads {

// A stretch of contract text the classifier scores: a sentence, or a piece of a long one,
// with the heading of the section it sits in.
struct ClauseCandidate {
    qsizetype start = 0;
    qsizetype end = 0;
    QString heading; // "Governing Law"; empty when none is known
    int clauseIndex = -1; // innermost clause holding the candidate, -1 without clauses
    bool isHeading = false; // the candidate is a section heading on its own
};

// Splits the text into sentences (not at "Inc.", "No. 5", "U.S." ...), further at
// semicolons where a sentence is long, and at paragraph breaks. Each candidate gets the
// last heading seen in the text ("12. Governing Law.") and, when clauses are given, the
// index of the innermost clause holding it.
QList<ClauseCandidate> buildCandidates(const QString& text, const QList<Clause>& clauses);

// Counts of non-whitespace characters before each position (size text.size() + 1), so
// whitespace-normalised lengths and overlaps are differences of two entries.
QList<qsizetype> nonSpacePrefix(const QString& text);

// True when [a0, a1) and [b0, b1) overlap by at least half of the shorter one, counting
// only non-whitespace characters.
bool spansMatch(
    const QList<qsizetype>& prefix, qsizetype a0, qsizetype a1, qsizetype b0, qsizetype b1);

} // namespace cw::heads
