#pragma once

#include "app/llm_review/model_question.h"

namespace cw::llm {

struct PlanLimits {
    int passagesPerCategory = 2; // the fast head's best findings per category
    int keywordPassages = 2; // clauses found by keywords when the fast head found none
    int passagesPerQuestion = 4;
    int passageChars = 700; // longest passage; longer clauses are cut around the finding
};

// Decides what the model is asked: for each category group of `groups` (the LLM head's
// questions file), the passages holding the fast
// head's most confident findings of its categories, or, when it found none, the clauses
// that mention the group's keywords most. Groups with no passage at all are not asked (the
// fast head's silence stands). A long contract thus costs a few passages per group, not
// a full read per category.
QuestionPlan planQuestions(const Document& document, const QList<Clause>& clauses,
    const QList<Finding>& fastFindings, const QList<CategoryGroup>& groups,
    const PlanLimits& limits = {});

} // namespace cw::llm
