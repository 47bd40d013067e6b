// The Markdown report: summary, a table of every finding, then the findings clause by clause.
#include "app/report/report_exporter.h"
#include "app/report/report_text.h"
#include "app/review/model_run.h"

namespace cw {
namespace {

// Text safe inside a Markdown table cell or paragraph: no line breaks, pipes and markup
// characters escaped.
QString inlineText(QString text)
{
    text.replace(QLatin1Char('\r'), QLatin1Char(' '));
    text.replace(QLatin1Char('\n'), QLatin1Char(' '));
    QString out;
    out.reserve(text.size() + 8);
    for (const QChar c : text) {
        if (QStringLiteral("\\`*_{}[]<>()#+!|~").contains(c))
            out.append(QLatin1Char('\\'));
        out.append(c);
    }
    return out.simplified();
}

QString shortened(const QString& text, int length)
{
    const QString simple = text.simplified();
    return simple.size() <= length ? simple : simple.left(length - 1) + QChar(0x2026);
}

} // namespace

QByteArray reviewToMarkdown(const Review& review)
{
    const ReviewSummary summary = report::effectiveSummary(review);
    QString md;
    md += QStringLiteral("# Contract review: %1\n\n")
              .arg(inlineText(
                  review.document.title.isEmpty() ? review.document.path : review.document.title));
    if (const QString unread = report::unreadPagesNote(review.document); !unread.isEmpty())
        md += QStringLiteral("> **Not read:** %1\n\n").arg(inlineText(unread));
    md += QStringLiteral("- **Document:** %1 (%2, %3)\n")
              .arg(inlineText(review.document.path),
                  report::documentFormatName(review.document.format),
                  report::pageCountText(review.document));
    md += QStringLiteral("- **SHA-256:** `%1`\n").arg(review.document.sha256);
    md += QStringLiteral("- **Model:** %1\n").arg(inlineText(report::modelLine(review)));
    if (!review.playbookName.isEmpty())
        md += QStringLiteral("- **Playbook:** %1\n").arg(inlineText(review.playbookName));
    md += QStringLiteral("- **Reviewed:** %1\n")
              .arg(review.createdAt.toUTC().toString(Qt::ISODate));
    md += QStringLiteral("- **Report generated:** %1\n\n")
              .arg(QDateTime::currentDateTimeUtc().toString(Qt::ISODate));

    md += QStringLiteral("## Summary\n\n");
    if (!summary.text.isEmpty())
        md += inlineText(summary.text) + QStringLiteral("\n\n");
    md += QStringLiteral("| Risk | Findings |\n| --- | ---: |\n");
    md += QStringLiteral("| High | %1 |\n| Medium | %2 |\n| Low | %3 |\n\n")
              .arg(summary.high)
              .arg(summary.medium)
              .arg(summary.low);
    if (!summary.missingCategories.isEmpty()) {
        md += QStringLiteral("**Missing clauses:** ");
        QStringList missing;
        for (const QString& category : summary.missingCategories)
            missing.append(inlineText(category));
        md += missing.join(QStringLiteral(", ")) + QStringLiteral("\n\n");
    }

    md += QStringLiteral("## Findings\n\n| # | Category | Risk | Page | Clause | Text |\n"
                         "| ---: | --- | --- | ---: | --- | --- |\n");
    for (int i = 0; i < review.findings.size(); ++i) {
        const Finding& f = review.findings[i];
        const QString clause = f.clauseIndex >= 0 && f.clauseIndex < review.clauses.size()
            ? report::clauseTitle(review.clauses[f.clauseIndex])
            : QString();
        md += QStringLiteral("| %1 | %2 | %3 | %4 | %5 | %6 |\n")
                  .arg(i + 1)
                  .arg(inlineText(f.category), report::riskLabel(f.risk), report::pageText(f.page),
                      inlineText(clause), inlineText(shortened(f.text, 120)));
    }
    md += QLatin1Char('\n');

    md += QStringLiteral("## Clause by clause\n\n");
    for (const auto& [clauseIndex, findings] : report::findingsByClause(review)) {
        if (clauseIndex >= 0) {
            const Clause& clause = review.clauses[clauseIndex];
            md += QStringLiteral("### %1 (page %2)\n\n")
                      .arg(inlineText(report::clauseTitle(clause)), report::pageText(clause.page));
        } else {
            md += QStringLiteral("### Outside any clause\n\n");
        }
        for (const int i : findings) {
            const Finding& f = review.findings[i];
            md += QStringLiteral("- **%1** — risk **%2**, page %3%4%5\n")
                      .arg(inlineText(f.category), report::riskLabel(f.risk),
                          report::pageText(f.page))
                      .arg(f.confidence ? QStringLiteral(", ") + report::confidenceText(f)
                                        : QString())
                      .arg(f.needsHumanReview ? QStringLiteral(", needs human review") : QString());
            md += QStringLiteral("  > %1\n").arg(inlineText(f.text));
            if (!f.fields.isEmpty())
                md += QStringLiteral("  - Fields: %1\n").arg(inlineText(report::fieldsLine(f)));
            if (!f.rationale.isEmpty())
                md += QStringLiteral("  - Why: %1%2\n")
                          .arg(inlineText(f.rationale),
                              f.ruleId.isEmpty()
                                  ? QString()
                                  : QStringLiteral(" (rule %1)").arg(inlineText(f.ruleId)));
            if (f.userEdited) {
                md += QStringLiteral("  - Edited by the reviewer (was %1, risk %2)%3\n")
                          .arg(inlineText(f.originalCategory), riskName(f.originalRisk),
                              f.userComment.isEmpty()
                                  ? QString()
                                  : QStringLiteral(": ") + inlineText(f.userComment));
            }
        }
        md += QLatin1Char('\n');
    }
    if (const auto run = modelRunOf(review))
        md += QStringLiteral("---\n\n*Model review on %1*\n").arg(inlineText(modelRunText(*run)));
    return md.toUtf8();
}

} // namespace cw
