#include "app/redline/redline_plan.h"

#include <algorithm>

namespace cw::redline {

namespace {

const PlaybookRule* ruleOf(const Playbook& playbook, const QString& id)
{
    for (const PlaybookRule& rule : playbook.rules) {
        if (rule.id == id)
            return &rule;
    }
    return nullptr;
}

QString riskWord(Risk risk)
{
    switch (risk) {
    case Risk::High:
        return QStringLiteral("High risk");
    case Risk::Medium:
        return QStringLiteral("Medium risk");
    case Risk::Low:
        return QStringLiteral("Low risk");
    case Risk::None:
        break;
    }
    return QStringLiteral("No risk set");
}

} // namespace

QList<RedlineEdit> planRedline(const Review& review, const Playbook& playbook)
{
    QList<RedlineEdit> edits;
    for (const Finding& f : review.findings) {
        if (f.end <= f.start || f.end > review.document.text.size())
            continue;
        const PlaybookRule* rule = f.ruleId.isEmpty() ? nullptr : ruleOf(playbook, f.ruleId);
        const bool modelWording = f.risk >= Risk::Medium && !f.suggestedText.isEmpty();
        if (!rule && !modelWording)
            continue;
        QString wording;
        if (rule)
            wording = rule->preferredText.isEmpty() ? rule->fallbackText : rule->preferredText;
        const bool fromModel = wording.isEmpty() && modelWording;
        if (fromModel)
            wording = f.suggestedText;
        if (wording.isEmpty() && f.risk < Risk::Medium)
            continue;
        RedlineEdit edit;
        edit.start = f.start;
        edit.end = f.end;
        edit.replacement = wording;
        edit.category = f.category;
        edit.risk = f.risk;
        if (rule)
            edit.comment = QStringLiteral("%1 (%2, playbook rule %3): %4.")
                               .arg(riskWord(f.risk), f.category, rule->id, rule->message);
        else
            edit.comment = QStringLiteral("%1 (%2, the language model's judgement): %3")
                               .arg(riskWord(f.risk), f.category, f.rationale);
        if (!f.userComment.isEmpty())
            edit.comment += QStringLiteral(" Reviewer's note: %1").arg(f.userComment);
        if (fromModel)
            edit.comment += QStringLiteral(" The wording was proposed by the language model, "
                                           "not taken from the playbook: check it before "
                                           "accepting the change.");
        else if (rule && !rule->preferredText.isEmpty() && !rule->fallbackText.isEmpty())
            edit.comment += QStringLiteral(" Fallback position: %1").arg(rule->fallbackText);
        else if (wording.isEmpty())
            edit.comment += QStringLiteral(" The playbook has no wording for this position.");
        edits.append(edit);
    }
    std::stable_sort(edits.begin(), edits.end(),
        [](const RedlineEdit& a, const RedlineEdit& b) { return a.start < b.start; });
    qsizetype changedUpTo = -1;
    QString changedCategory;
    for (RedlineEdit& edit : edits) {
        if (edit.replacement.isEmpty())
            continue;
        if (edit.start < changedUpTo) {
            edit.comment += QStringLiteral(" Proposed wording, not made a tracked change because "
                                           "the text is already changed for %1: %2")
                                .arg(changedCategory, edit.replacement);
            edit.replacement.clear();
            continue;
        }
        changedUpTo = edit.end;
        changedCategory = edit.category;
    }
    return edits;
}

} // namespace cw::redline
