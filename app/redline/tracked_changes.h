#pragma once

#include "app/redline/redline_plan.h"
#include "app/redline/xml_tree.h"

#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

namespace cw::redline {

// Who made the changes and when: every w:ins, w:del and w:comment carries them.
struct RevisionAuthor {
    QString name = QStringLiteral("Clausewright");
    QString initials = QStringLiteral("CW");
    QString date; // ISO 8601 UTC, "2026-12-03T18:30:00Z"
};

struct PlacedComment {
    int id = 0;
    QString text;
};

struct TrackedChangesResult {
    int changes = 0; // edits made as tracked changes
    QList<PlacedComment> comments; // to write to comments.xml
    QStringList notPlaced; // edits (or parts of them) left out, and why
};

// Where Document::text came from in document.xml: the text of each paragraph the reader kept
// (Document::lines for a DOCX: one line per paragraph or table row, each the paragraph's
// list label, if any, followed by its trimmed text), as [start, end) offsets into `text`.
using ParagraphLines = QList<QPair<qsizetype, qsizetype>>;

// Makes `edits` tracked changes and comment anchors in the WordprocessingML body of
// `document`, in place: the runs a change covers are split at its ends and wrapped in w:del
// (their w:t becoming w:delText), the replacement follows in a w:ins run with the formatting of
// the text it replaces, and a change across paragraphs deletes the paragraph marks between.
// Runs in tables, text boxes, existing tracked changes and equations are not changed: an edit
// over them keeps only its comment. Ids start at `firstId`.
TrackedChangesResult applyTrackedChanges(XmlDocument& document, const QString& text,
    const ParagraphLines& lines, const QList<RedlineEdit>& edits, const RevisionAuthor& author,
    int firstId);

// The largest numeric w:id in the tree (0 when none), so new ids do not collide.
int largestWordId(const XmlNode& node);

// The prefix the tree binds to the WordprocessingML main namespace ("w" in every Word file).
QString wordPrefix(const XmlNode& root);

inline constexpr const char* kWordNamespace
    = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

} // namespace cw::redline
