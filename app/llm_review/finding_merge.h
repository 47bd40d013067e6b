#pragma once

#include "app/llm_review/model_review.h"

namespace cw::llm {

// Joins the fast findings and the model's. For each category the model was asked about:
// - both found it in the same place: one finding, the model's (risk, note), keeping the fast
//   head's fields where the model gave none;
// - the model found it where the fast head did not: the model's finding, marked for human
//   review;
// - the fast head found it among the passages asked about but the model judged it absent or
//   placed it elsewhere: the fast finding, marked for human review, with the model's note.
// Findings of categories the model was not asked about (or whose question failed) stay as
// they are.
QList<Finding> mergeFindings(const QList<Finding>& fastFindings, const ModelReviewResult& model);

} // namespace cw::llm
