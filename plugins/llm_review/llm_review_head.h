#pragma once

#include "app/llm_review/category_questions.h"
#include "app/plugins/clause_head.h"

namespace cw::llm {

// The language model head: per group of related categories (its questions file, the "data"
// of llm_review.json) one question about the fast heads' best candidate clauses, or the
// clauses that mention the group's keywords where they found none. It asks through the model
// the host lends the run (HeadRunContext::llm) and streams each question's note back.
class LlmReviewHead final : public ClauseHead {
public:
    explicit LlmReviewHead(QList<CategoryGroup> groups)
        : m_groups(std::move(groups))
    {
    }
    // Reads the questions file; every category it asks about must be one the metadata
    // declares, so the host never drops what the head was built to find.
    static Result<std::unique_ptr<ClauseHead>> load(const HeadSetup& setup);

    Result<QList<Finding>> find(const Document& document, const QList<Clause>& clauses,
        const HeadRunContext& context) const override;

private:
    QList<CategoryGroup> m_groups;
};

} // namespace cw::llm
