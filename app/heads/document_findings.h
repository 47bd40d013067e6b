#pragma once

#include "app/review/review_types.h"

#include <QList>
#include <QSet>
#include <optional>

namespace cw::heads {

// Categories read from the opening by rules rather than by the classifier.
const QSet<QString>& documentLevelCategories(); // Document Name, Parties, Agreement/Effective Date

// Of those, the ones whose presence the rules decide alone (Document Name, Parties). The dates'
// rules say where a date is, not whether the lawyers would mark one: a contract may give no
// date in its opening yet one at its signatures, or an agreement date that is no effective
// date. So the classifier learns the dates too, reading the rule's date as presence evidence
// (cueCandidates), and decides; the rule's span is the finding where it found one. Issue 34
// section 3, 5-fold on 298, seeds 17-20: macro-F1 0.783/0.786/0.789/0.786 -> 0.786/0.790/0.792/
// 0.789 (seed 17: Agreement Date 0.90 -> 0.98, Effective Date 0.85 -> 0.91; the other
// categories unchanged), span F1 0.627 -> 0.631; effective-date accuracy 0.772 -> 0.746 at seed
// 17, as a date the model now leaves out is no date at all.
const QSet<QString>& ruleDecidedCategories();

// Where the rule of a date category (Agreement Date, Effective Date) found its date: the
// date's start in `text`; none for other categories or where the rule found none. The
// effective date's only where the contract states one (findStatedEffectiveDate): the agreement
// date it falls back to is the agreement date's evidence, and telling the two apart lifted
// Effective Date at seeds 17/18 (false positives 37 -> 33 and 36 -> 38, misses 10 -> 10 and
// 11 -> 8).
std::optional<qsizetype> ruleDateStart(const QString& category, const QString& text);

// Findings for the document-level categories: the title, each party's name and defined
// name, the agreement date and the effective date, with their fields.
QList<Finding> documentLevelFindings(const QString& text);

// Adds fields (fieldsForFinding) to every finding, in place.
void addFindingFields(QList<Finding>& findings);

} // namespace cw::heads
