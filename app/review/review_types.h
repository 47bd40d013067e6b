#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QRectF>
#include <QSizeF>
#include <QString>
#include <QStringList>
#include <optional>

namespace cw {

// The data a review is made of, shared by ingest, segmentation, the heads, the history
// store, the exporters and the views. Plain values; no behaviour beyond lookups.
//
// Offsets (`start`, `end`) are positions in Document::text in UTF-16 code units (QString
// indices), half-open. Exporters that promise Unicode code points (the JSON report)
// convert with Document::codePointOffset.

enum class DocumentFormat { Pdf, Docx, PlainText };

struct PageInfo {
    int number = 0; // 1-based
    QSizeF sizePt; // page size in PDF points (1/72 in)
    bool hasTextLayer = true;
};

// One line of text as laid out on a page: its span in the text and its box in page
// points (origin top-left), so the GUI can highlight any span.
struct TextLine {
    int page = 0; // 1-based; 0 for formats without pages
    QRectF box;
    qsizetype start = 0;
    qsizetype end = 0;
    bool bold = false;
    double fontSize = 0.0;
};

struct Document {
    QString path;
    DocumentFormat format = DocumentFormat::PlainText;
    QString title;
    QString sha256; // hex, of the file's bytes
    QString text; // the extracted, cleaned text the offsets refer to
    QList<PageInfo> pages;
    QList<TextLine> lines; // in text order
    QStringList warnings; // e.g. "page 3 has no text layer: run OCR first"

    int pageCount() const { return int(pages.size()); }
    // 1-based page holding offset, or 0 if unknown.
    int pageAt(qsizetype offset) const;
    // Boxes covering [start, end): one per line touched, clipped to the line.
    QList<QPair<int, QRectF>> boxesFor(qsizetype start, qsizetype end) const;
    // Unicode code point index of a UTF-16 offset into text.
    qsizetype codePointOffset(qsizetype utf16Offset) const;
};

// What made the segmenter start a clause.
enum class ClauseKind {
    Preamble, // text before the first numbered clause: title, parties, recitals
    Numbered, // "1.", "5.2", "(a)", "Article IV", "Section 3", "第三条"
    Heading, // an unnumbered heading in capitals or bold
    Definition, // one definition: "X" means ... (heading holds the defined term)
    Attachment, // Schedule, Exhibit, Annex, Appendix
};

// A section or clause found by numbering and headings.
struct Clause {
    int index = 0; // position in Review::clauses
    int parent = -1; // index of the enclosing clause, -1 at top level
    int level = 0; // 0: article/section heading, deeper numbers nest
    QString number; // "5.2", "(a)", "Article IV", "第三条"; empty when unnumbered
    QString heading; // "Governing Law"; empty when none
    qsizetype start = 0;
    qsizetype end = 0;
    int page = 0;
    // Added by ingest/segment: [start, ownEnd) is the clause's own text, before its first
    // sub-clause ([start, end) includes the sub-clauses); ownEnd == end for a leaf.
    qsizetype ownEnd = 0;
    ClauseKind kind = ClauseKind::Numbered;
};

enum class Risk { None, Low, Medium, High };

struct Finding {
    QString category; // exact CUAD category name, e.g. "Governing Law"
    qsizetype start = 0;
    qsizetype end = 0;
    int page = 0;
    int clauseIndex = -1;
    QString text;
    QJsonObject fields; // extracted values: {"law": "Delaware"}, {"days": 60}, ...
    // The probability that the finding is right, calibrated on held-out contracts; none where
    // the head has no calibration (rules, extracted fields, the model's answers): then no
    // confidence is shown.
    std::optional<double> confidence;
    double score = 0.0; // the head's own score, to rank its findings; not a probability
    Risk risk = Risk::None;
    QString ruleId; // the playbook rule that set the risk, empty if none fired
    QString rationale; // why: the rule's message or the model's note
    // Wording the language model proposes in place of the clause's text (a medium or high
    // risk clause of a category the playbook has no wording for); the redline's tracked change.
    QString suggestedText;
    QString source; // "fast" or "llm"
    bool needsHumanReview = false; // the fast and LLM heads disagree
    // What the user changed after the review ran.
    bool userEdited = false;
    QString userComment;
    // Added by reports (history edits): the head's category and risk before the user's
    // first edit; meaningful when userEdited.
    QString originalCategory;
    Risk originalRisk = Risk::None;
};

struct ReviewSummary {
    int high = 0;
    int medium = 0;
    int low = 0;
    QStringList missingCategories; // categories the playbook expects but none was found
    QString text; // one paragraph for the report's top
};

struct Review {
    qint64 id = 0; // history row id; 0 until saved
    Document document;
    QList<Clause> clauses;
    QList<Finding> findings;
    ReviewSummary summary;
    QString playbookName;
    QString modelName; // empty: fast heads only
    QJsonObject settings; // heads, device, context, ...
    QMap<QString, qint64> timingsMs; // "ingest", "segment", "heads", "llm"
    QDateTime createdAt;
};

QString riskName(Risk risk); // "none", "low", "medium", "high"
Risk riskFromName(const QString& name); // unknown names give Risk::None

} // namespace cw
