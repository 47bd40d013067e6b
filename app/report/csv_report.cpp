// The findings as CSV (RFC 4180): a header row, CRLF line ends, fields quoted when they hold a
// comma, a quote or a line break, quotes doubled. UTF-8 without a byte-order mark.
#include "app/report/report_exporter.h"
#include "app/report/report_text.h"

#include <QJsonDocument>

namespace cw {
namespace {

QString csvField(const QString& value)
{
    if (!value.contains(QLatin1Char(',')) && !value.contains(QLatin1Char('"'))
        && !value.contains(QLatin1Char('\n')) && !value.contains(QLatin1Char('\r')))
        return value;
    QString quoted = value;
    quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

} // namespace

QByteArray reviewFindingsToCsv(const Review& review)
{
    const QStringList header { "index", "category", "risk", "page", "clause", "start", "end",
        "confidence", "rule", "source", "needs_human_review", "user_edited", "original_category",
        "original_risk", "user_comment", "text", "rationale", "fields" };
    QString csv = header.join(QLatin1Char(',')) + QStringLiteral("\r\n");
    for (int i = 0; i < review.findings.size(); ++i) {
        const Finding& f = review.findings[i];
        const QString clause = f.clauseIndex >= 0 && f.clauseIndex < review.clauses.size()
            ? report::clauseTitle(review.clauses[f.clauseIndex])
            : QString();
        const QStringList row { QString::number(i + 1), f.category, riskName(f.risk),
            QString::number(f.page), clause,
            QString::number(review.document.codePointOffset(f.start)),
            QString::number(review.document.codePointOffset(f.end)),
            f.confidence ? QString::number(*f.confidence, 'f', 3) : QString(), f.ruleId, f.source,
            f.needsHumanReview ? QStringLiteral("yes") : QStringLiteral("no"),
            f.userEdited ? QStringLiteral("yes") : QStringLiteral("no"),
            f.userEdited ? f.originalCategory : QString(),
            f.userEdited ? riskName(f.originalRisk) : QString(), f.userComment, f.text, f.rationale,
            f.fields.isEmpty()
                ? QString()
                : QString::fromUtf8(QJsonDocument(f.fields).toJson(QJsonDocument::Compact)) };
        QStringList cells;
        cells.reserve(row.size());
        for (const QString& cell : row)
            cells.append(csvField(cell));
        csv += cells.join(QLatin1Char(',')) + QStringLiteral("\r\n");
    }
    return csv.toUtf8();
}

} // namespace cw
