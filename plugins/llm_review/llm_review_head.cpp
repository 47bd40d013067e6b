#include "plugins/llm_review/llm_review_head.h"

#include "app/llm_review/finding_merge.h"
#include "app/llm_review/model_review.h"
#include "app/plugins/llm_head.h"

#include <QSet>

namespace cw::llm {

namespace {

QList<ModelQuestionInfo> questionInfos(const QuestionPlan& plan)
{
    QList<ModelQuestionInfo> infos;
    for (const ModelQuestion& q : plan.questions) {
        ModelQuestionInfo info { q.id, q.categoryNames(), {} };
        for (int id : q.passageIds) {
            const Passage* p = plan.passage(id);
            if (p && p->clauseIndex >= 0 && !info.clauseIndexes.contains(p->clauseIndex))
                info.clauseIndexes.append(p->clauseIndex);
        }
        infos.append(info);
    }
    return infos;
}

void fillReport(const ModelReviewResult& result, LlmHeadReport& report)
{
    report.questions = int(result.plan.questions.size());
    report.passages = int(result.plan.passages.size());
    report.answered = 0;
    for (const QuestionAnswer& a : result.answers)
        report.answered += a.answered;
    report.promptTokens = result.promptTokens;
    report.sharedPrefixTokens = result.sharedPrefixTokens;
    report.generatedTokens = result.generatedTokens;
    report.cancelled = result.cancelled;
    report.warnings = result.warnings;
}

} // namespace

Result<std::unique_ptr<ClauseHead>> LlmReviewHead::load(const HeadSetup& setup)
{
    if (setup.dataPath.isEmpty())
        return makeError("llm_review: its metadata names no questions file ('data')");
    auto groups = readCategoryGroups(setup.dataPath);
    if (!groups)
        return groups.error();
    const QSet<QString> declared(
        setup.metadata.categories.begin(), setup.metadata.categories.end());
    for (const CategoryGroup& g : *groups) {
        for (const CategoryQuestion& c : g.categories) {
            if (!declared.contains(c.category))
                return makeError(setup.dataPath.toStdString() + ": asks about '"
                    + c.category.toStdString() + "', which the plugin's metadata does not declare");
        }
    }
    return std::unique_ptr<ClauseHead>(std::make_unique<LlmReviewHead>(std::move(*groups)));
}

Result<QList<Finding>> LlmReviewHead::find(
    const Document& document, const QList<Clause>& clauses, const HeadRunContext& context) const
{
    const LlmHeadInput* input = context.llm;
    if (!input || !input->generator || !input->playbook)
        return makeError("the LLM head needs a language model: give a model or a server");
    if (input->version != kLlmHeadInputVersion)
        return makeError("llm_review: the host lends LlmHeadInput version "
            + std::to_string(input->version) + ", this plugin reads version "
            + std::to_string(kLlmHeadInputVersion) + "; reinstall the plugin");
    ModelReviewObserver observer;
    observer.planned = [input](const QuestionPlan& plan) {
        if (input->planned)
            input->planned(questionInfos(plan));
    };
    observer.notePiece = input->notePiece;
    observer.answered = [input](const QuestionAnswer& answer, const QList<Finding>& found) {
        if (input->answered)
            input->answered(answer.questionId, found);
    };
    observer.progress = context.progress;
    ModelReviewOptions options;
    options.groups = m_groups;
    options.grammar = input->grammarForSchema;
    auto result = runModelReview(*input->generator, document, clauses, input->fastFindings,
        *input->playbook, context.cancelled, observer, options);
    if (!result)
        return result.error();
    if (input->report)
        fillReport(*result, *input->report);
    return input->mergeWithFast ? mergeFindings(input->fastFindings, *result) : result->findings;
}

} // namespace cw::llm
