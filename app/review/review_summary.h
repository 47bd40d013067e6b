#pragma once

// The summary of a review (counts by risk, expected categories not found, one sentence),
// computed from its findings. The playbook fills it when the review runs; reports compute it
// again when they are written, so a finding the user corrected afterwards (High to Medium,
// another category) is counted as it now is and the sentence agrees with the tables.
#include "app/review/review_types.h"

namespace cw {

// Counts the findings by risk; keeps the expected categories of `review.summary` that still
// have no finding (the playbook's list is not kept, so a category the user moved a finding
// out of is not added back); and writes the sentence.
ReviewSummary summarizeFindings(const Review& review);

// "9 findings against playbook "Default": 3 high, 6 medium, 0 low risk. Expected but not
// found: Cap On Liability." (without a playbook name: "9 findings: ...").
QString summarySentence(const Review& review, const ReviewSummary& counts);

} // namespace cw
