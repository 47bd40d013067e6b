#include "app/review/review_summary.h"

#include <QSet>

namespace cw {

ReviewSummary summarizeFindings(const Review& review)
{
    ReviewSummary summary;
    QSet<QString> found;
    for (const Finding& finding : review.findings) {
        found.insert(finding.category);
        summary.high += finding.risk == Risk::High;
        summary.medium += finding.risk == Risk::Medium;
        summary.low += finding.risk == Risk::Low;
    }
    for (const QString& category : review.summary.missingCategories) {
        if (!found.contains(category))
            summary.missingCategories.append(category);
    }
    summary.text = summarySentence(review, summary);
    return summary;
}

QString summarySentence(const Review& review, const ReviewSummary& counts)
{
    const QString against = review.playbookName.isEmpty()
        ? QString()
        : QStringLiteral(" against playbook \"%1\"").arg(review.playbookName);
    QString text = QStringLiteral("%1 findings%2: %3 high, %4 medium, %5 low risk.")
                       .arg(review.findings.size())
                       .arg(against)
                       .arg(counts.high)
                       .arg(counts.medium)
                       .arg(counts.low);
    if (!counts.missingCategories.isEmpty())
        text += QStringLiteral(" Expected but not found: %1.")
                    .arg(counts.missingCategories.join(QStringLiteral(", ")));
    return text;
}

} // namespace cw
