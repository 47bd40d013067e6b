#pragma once

#include "app/playbook/playbook.h"
#include "app/redline/tracked_changes.h"
#include "app/review/review_types.h"
#include "engine/common/result.h"

#include <QDateTime>
#include <QString>
#include <QStringList>

namespace cw {

struct RedlineSummary {
    int changes = 0; // tracked changes made
    int comments = 0;
    QStringList notPlaced; // edits left out or kept as comments only, and why
};

// Writes the reviewed contract as a DOCX at `outPath` with the playbook's wording as tracked
// changes (author "Clausewright", dated `when`) and a Word comment on each with the risk and
// the reason (redline::planRedline says which findings). A DOCX contract is edited in place:
// the file the review read (its SHA-256 must still match) keeps its formatting, numbering and
// every other part; a PDF or text contract becomes a plain DOCX of the extracted text, one
// paragraph per block of lines, with the same edits. Errors name the file and the problem.
Result<RedlineSummary> exportRedline(const Review& review, const Playbook& playbook,
    const QString& outPath, const QDateTime& when = QDateTime::currentDateTimeUtc());

// The same against the playbook the review was made with (its settings' "playbook", else the
// bundled one): what the GUI's "Export Redline…" writes.
Result<RedlineSummary> exportRedlineWithItsPlaybook(const Review& review, const QString& outPath);

} // namespace cw
