#pragma once

#include "app/playbook/playbook.h"
#include "app/review/review_types.h"

#include <QList>
#include <QString>

namespace cw::redline {

// One change the redline proposes, in Document::text offsets: [start, end) is replaced by
// `replacement` as a tracked change; an empty replacement leaves the text as it is and only
// comments on it. `comment` is the Word comment anchored on the span.
struct RedlineEdit {
    qsizetype start = 0;
    qsizetype end = 0;
    QString replacement;
    QString comment;
    QString category;
    Risk risk = Risk::None;
};

// The edits for a review against its playbook, in text order:
// - a finding whose playbook rule (Finding::ruleId) has preferred_text is replaced by it (by
//   fallback_text where the rule has only that); its comment gives the risk, the rule's reason
//   and the fallback position;
// - a finding of medium or high risk whose rule has no wording (or that no rule set) and for
//   which the language model proposed wording (Finding::suggestedText) is replaced by that,
//   its comment saying the wording is the model's, to check;
// - a finding of medium or high risk whose rule has no wording gets the comment alone;
// - a replacement that overlaps an earlier one is not made twice: its wording goes into its
//   comment instead, which says so.
QList<RedlineEdit> planRedline(const Review& review, const Playbook& playbook);

} // namespace cw::redline
