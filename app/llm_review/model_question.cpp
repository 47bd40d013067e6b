#include "app/llm_review/model_question.h"

namespace cw::llm {

QStringList ModelQuestion::categoryNames() const
{
    QStringList names;
    for (const CategoryQuestion& c : categories)
        names.append(c.category);
    return names;
}

const Passage* QuestionPlan::passage(int id) const
{
    for (const Passage& p : passages) {
        if (p.id == id)
            return &p;
    }
    return nullptr;
}

} // namespace cw::llm
