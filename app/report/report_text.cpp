#include "app/report/report_text.h"

#include "app/review/review_summary.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>
#include <algorithm>

namespace cw::report {

QString documentFormatName(DocumentFormat format)
{
    switch (format) {
    case DocumentFormat::Pdf:
        return QStringLiteral("pdf");
    case DocumentFormat::Docx:
        return QStringLiteral("docx");
    case DocumentFormat::PlainText:
        break;
    }
    return QStringLiteral("txt");
}

QString clauseKindName(ClauseKind kind)
{
    switch (kind) {
    case ClauseKind::Preamble:
        return QStringLiteral("preamble");
    case ClauseKind::Heading:
        return QStringLiteral("heading");
    case ClauseKind::Definition:
        return QStringLiteral("definition");
    case ClauseKind::Attachment:
        return QStringLiteral("attachment");
    case ClauseKind::Numbered:
        break;
    }
    return QStringLiteral("numbered");
}

QColor riskColour(Risk risk)
{
    switch (risk) {
    case Risk::High:
        return QColor(0xf8, 0xd0, 0xcc); // light red
    case Risk::Medium:
        return QColor(0xfd, 0xe8, 0xb8); // amber
    case Risk::Low:
        return QColor(0xd4, 0xee, 0xd6); // green
    case Risk::None:
        break;
    }
    return QColor(0xea, 0xea, 0xea);
}

QString riskLabel(Risk risk)
{
    QString name = riskName(risk);
    name[0] = name[0].toUpper();
    return name;
}

QString clauseTitle(const Clause& clause)
{
    if (clause.kind == ClauseKind::Preamble && clause.number.isEmpty() && clause.heading.isEmpty())
        return QStringLiteral("Preamble");
    const QString title = (clause.number + QLatin1Char(' ') + clause.heading).trimmed();
    return title.isEmpty() ? QStringLiteral("Clause %1").arg(clause.index + 1) : title;
}

QList<int> findingsOfClause(const Review& review, int clauseIndex)
{
    QList<int> indices;
    for (int i = 0; i < review.findings.size(); ++i) {
        const int owner = review.findings[i].clauseIndex;
        const bool known = owner >= 0 && owner < review.clauses.size();
        if ((clauseIndex < 0 && !known) || (clauseIndex >= 0 && owner == clauseIndex))
            indices.append(i);
    }
    std::stable_sort(indices.begin(), indices.end(),
        [&](int a, int b) { return review.findings[a].start < review.findings[b].start; });
    return indices;
}

QList<int> clausesWithFindings(const Review& review)
{
    QList<bool> has(review.clauses.size(), false);
    for (const Finding& finding : review.findings) {
        if (finding.clauseIndex >= 0 && finding.clauseIndex < review.clauses.size())
            has[finding.clauseIndex] = true;
    }
    QList<int> indices;
    for (int i = 0; i < has.size(); ++i) {
        if (has[i])
            indices.append(i);
    }
    return indices;
}

QList<QPair<int, QList<int>>> findingsByClause(const Review& review)
{
    QList<int> clauses = clausesWithFindings(review);
    clauses.append(-1);
    QList<QPair<int, QList<int>>> groups;
    for (const int clauseIndex : clauses) {
        QList<int> findings = findingsOfClause(review, clauseIndex);
        if (!findings.isEmpty())
            groups.append({ clauseIndex, std::move(findings) });
    }
    return groups;
}

QString modelLine(const Review& review)
{
    return review.modelName.isEmpty() ? QStringLiteral("none (fast heads only)") : review.modelName;
}

ReviewSummary effectiveSummary(const Review& review)
{
    return summarizeFindings(review);
}

QString pageText(int page)
{
    return page > 0 ? QString::number(page) : QStringLiteral("-");
}

QString pageCountText(const Document& document)
{
    const int pages = document.pageCount();
    if (pages == 0)
        return QStringLiteral("no pages");
    return pages == 1 ? QStringLiteral("1 page") : QStringLiteral("%1 pages").arg(pages);
}

QList<int> unreadPages(const Document& document)
{
    QList<int> pages;
    for (const PageInfo& page : document.pages) {
        if (!page.hasTextLayer)
            pages.append(page.number);
    }
    return pages;
}

QString unreadPagesNote(const Document& document)
{
    const QList<int> pages = unreadPages(document);
    if (pages.isEmpty())
        return {};
    // Runs of pages as ranges: "2, 5-7".
    QStringList runs;
    for (qsizetype i = 0; i < pages.size();) {
        qsizetype j = i;
        while (j + 1 < pages.size() && pages[j + 1] == pages[j] + 1)
            ++j;
        runs.append(j == i ? QString::number(pages[i])
                           : QStringLiteral("%1-%2").arg(pages[i]).arg(pages[j]));
        i = j + 1;
    }
    const bool one = pages.size() == 1;
    return QStringLiteral("%1 %2 of %3 %4 no text layer (scanned images) and %5 not read: "
                          "clauses there are not reviewed and may be among those listed as "
                          "expected but not found. Run OCR on the file and review it again.")
        .arg(
            one ? QStringLiteral("Page") : QStringLiteral("Pages"), runs.join(QStringLiteral(", ")))
        .arg(document.pageCount())
        .arg(one ? QStringLiteral("has") : QStringLiteral("have"),
            one ? QStringLiteral("was") : QStringLiteral("were"));
}

QString fieldsLine(const Finding& finding)
{
    QStringList parts;
    for (auto it = finding.fields.begin(); it != finding.fields.end(); ++it) {
        const QJsonValue value = it.value();
        QString text;
        if (value.isString())
            text = value.toString();
        else if (value.isDouble())
            text = QString::number(value.toDouble());
        else if (value.isBool())
            text = value.toBool() ? QStringLiteral("yes") : QStringLiteral("no");
        else if (value.isArray())
            text = QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
        else if (value.isObject())
            text
                = QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
        parts.append(it.key() + QStringLiteral(": ") + text);
    }
    return parts.join(QStringLiteral("; "));
}

QString confidenceText(const Finding& finding)
{
    return finding.confidence ? QStringLiteral("confidence %1").arg(*finding.confidence, 0, 'f', 2)
                              : QString();
}

} // namespace cw::report
