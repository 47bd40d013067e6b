#include "app/llm_review/session_review.h"

#include "app/generation/local_generator.h"
#include "app/llm_review/prompt_rendering.h"

namespace cw::llm {

Result<ModelReviewResult> runModelReview(LlmSession& session, const Document& document,
    const QList<Clause>& clauses, const QList<Finding>& fastFindings, const Playbook& playbook,
    const std::function<bool()>& cancelled, const ModelReviewObserver& observer,
    ModelReviewOptions options)
{
    if (!options.grammar)
        options.grammar = answerGrammarForSchema;
    // A non-owning handle: the caller keeps the session alive for the call.
    generation::LocalGenerator local(
        std::shared_ptr<LlmSession>(std::shared_ptr<LlmSession> {}, &session));
    return runModelReview(
        local, document, clauses, fastFindings, playbook, cancelled, observer, options);
}

} // namespace cw::llm
