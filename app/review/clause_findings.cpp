#include "app/review/clause_findings.h"

#include <QHash>
#include <algorithm>
#include <tuple>

namespace cw {

namespace {

QString groupKey(const Finding& f)
{
    if (f.clauseIndex >= 0)
        return f.category + QLatin1Char('\x1f') + QString::number(f.clauseIndex);
    return f.category + QLatin1Char('\x1f') + QLatin1Char('@') + QString::number(f.start)
        + QLatin1Char('-') + QString::number(f.end);
}

// The finding whose risk, rule and rationale the merged one keeps.
bool leads(const Finding& a, const Finding& b)
{
    return std::tuple(int(a.risk), a.score) > std::tuple(int(b.risk), b.score);
}

void absorb(Finding& into, const Finding& other, const QString& text)
{
    Finding lead = leads(other, into) ? other : into;
    const Finding& second = leads(other, into) ? into : other;
    lead.start = std::min(into.start, other.start);
    lead.end = std::max(into.end, other.end);
    if (lead.end <= text.size())
        lead.text = text.mid(lead.start, lead.end - lead.start);
    lead.page = into.start <= other.start ? into.page : other.page;
    lead.score = std::max(into.score, other.score);
    if (second.confidence && (!lead.confidence || *second.confidence > *lead.confidence))
        lead.confidence = second.confidence;
    for (auto it = second.fields.begin(); it != second.fields.end(); ++it) {
        if (!lead.fields.contains(it.key()))
            lead.fields.insert(it.key(), it.value());
    }
    lead.needsHumanReview = into.needsHumanReview || other.needsHumanReview;
    lead.userEdited = into.userEdited || other.userEdited;
    into = std::move(lead);
}

} // namespace

QList<Finding> mergeClauseFindings(const QList<Finding>& findings, const QString& text)
{
    QList<Finding> out;
    out.reserve(findings.size());
    QHash<QString, qsizetype> placeOf;
    for (const Finding& f : findings) {
        const QString key = groupKey(f);
        const auto it = placeOf.constFind(key);
        if (it == placeOf.constEnd()) {
            placeOf.insert(key, out.size());
            out.append(f);
        } else {
            absorb(out[*it], f, text);
        }
    }
    return out;
}

} // namespace cw
