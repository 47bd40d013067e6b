#pragma once

#include "app/heads/clause_candidates.h"
#include "app/heads/jurisdiction_names.h"
#include "app/heads/located.h"

#include <QList>
#include <QString>
#include <vector>

namespace cw::heads {

// Governing law: the jurisdictions whose law [from, to) of text names ("the laws of the
// State of X", "X law", "English law", "the laws thereof" after "made in the State of X"),
// normalised to a US state, a Canadian province or a country, best first: mentions that
// are not about conflict-of-laws carve-outs first, then a state before "United States".
// Mentions of the law a party is organised under are not governing law and are left out.
QList<Located<QString>> findGoverningLaw(
    const QString& text, qsizetype from = 0, qsizetype to = -1);

// Every jurisdiction whose law [from, to) chooses, in text order ("the laws of the State of
// New York and of Switzerland": both), leaving out carve-outs when anything else is named,
// and a country named with one of its own states or provinces.
QStringList chosenJurisdictions(const QString& text, qsizetype from = 0, qsizetype to = -1);

// The contract's governing law, read from all its candidates: a sentence that says what
// governs ("governed by", "construed in accordance with") under a governing-law heading
// beats a venue or arbitration clause that happens to name a state. `classifierScores`
// (per candidate, may be empty) adds the Governing Law classifier's view. index is -1 when
// no candidate names one.
struct GoverningLawChoice {
    QString law; // the first of `laws`
    QStringList laws; // every jurisdiction the clause chooses (chosenJurisdictions)
    int candidate = -1;
    double strength = 0.0; // 1 and above: stated as governing law in so many words
};
GoverningLawChoice chooseGoverningLaw(const QString& text, const QList<ClauseCandidate>& candidates,
    const std::vector<float>& classifierScores);

} // namespace cw::heads
