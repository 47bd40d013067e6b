#pragma once

#include "app/llm_review/llm_session.h"
#include "app/llm_review/model_review.h"

namespace cw::llm {

// runModelReview on an in-process session (tests, benchmarks): the session behind a
// LocalGenerator, with the engine's answer grammar where the options give none.
Result<ModelReviewResult> runModelReview(LlmSession& session, const Document& document,
    const QList<Clause>& clauses, const QList<Finding>& fastFindings, const Playbook& playbook,
    const std::function<bool()>& cancelled, const ModelReviewObserver& observer = {},
    ModelReviewOptions options = {});

} // namespace cw::llm
