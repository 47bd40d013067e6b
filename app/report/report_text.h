#pragma once

// Helpers the report formats share: names, colours and orderings. Internal to app/report.
#include "app/review/review_types.h"

#include <QColor>
#include <QList>
#include <QPair>
#include <QString>

namespace cw::report {

QString documentFormatName(DocumentFormat format); // "pdf", "docx", "txt"
QString clauseKindName(ClauseKind kind); // "preamble", "numbered", ...
// Background colour of a risk badge: red, amber, green, grey.
QColor riskColour(Risk risk);
// "High", "Medium", "Low", "None".
QString riskLabel(Risk risk);
// "5.2 Governing Law", "Preamble", "Clause 3" when it has neither number nor heading.
QString clauseTitle(const Clause& clause);
// Indices into review.findings of the findings of clause `clauseIndex` (-1: those that
// belong to no clause), in text order.
QList<int> findingsOfClause(const Review& review, int clauseIndex);
// Clause indices that have at least one finding, in order.
QList<int> clausesWithFindings(const Review& review);
// Findings grouped by clause in clause order, the ones outside any clause (-1) last; only
// groups with findings. What every "clause by clause" section walks.
QList<QPair<int, QList<int>>> findingsByClause(const Review& review);
// "none" when empty: the model line of a report.
QString modelLine(const Review& review);
// The review's summary as its findings now are (summarizeFindings): a correction saved after
// the review ran shows in the counts and in the sentence alike.
ReviewSummary effectiveSummary(const Review& review);

// "3" for a page number, "-" where the format has no pages (a text file without form feeds):
// never "page 0".
QString pageText(int page);
// "13 pages", "1 page", or "no pages" for a text file without form feeds.
QString pageCountText(const Document& document);
// The pages without a text layer (scans), in order.
QList<int> unreadPages(const Document& document);
// "Page 2 has no text layer ..." saying what that means for the review; empty when every page
// was read. Every report puts it at the top.
QString unreadPagesNote(const Document& document);
// A compact one-line "key: value; key: value" rendering of a finding's fields.
QString fieldsLine(const Finding& finding);

// "confidence 0.83" (calibrated), or empty where the finding has no calibrated confidence.
QString confidenceText(const Finding& finding);

} // namespace cw::report
