#pragma once

#include "app/generation/text_generator.h"
#include "app/llm_review/model_question.h"
#include "app/llm_review/question_planner.h"
#include "app/playbook/playbook.h"

#include <QList>
#include <QString>
#include <cstdint>
#include <functional>

namespace cw::llm {

// What a model review reports while it runs; every callback is called on the review's thread.
struct ModelReviewObserver {
    std::function<void(const QuestionPlan& plan)> planned;
    // A piece of a question's note, as the model writes it; the pieces of one question
    // concatenate to QuestionAnswer::note.
    std::function<void(int questionId, const QString& piece)> notePiece;
    // A question's answer was parsed; `findings` are the model's findings for it.
    std::function<void(const QuestionAnswer& answer, const QList<Finding>& findings)> answered;
    std::function<void(int done, int total)> progress;
};

struct ModelReviewOptions {
    QList<CategoryGroup> groups; // what to ask (the LLM head's questions file)
    // GBNF for an answer's JSON Schema (the host engine's, prompt_rendering.h); empty: the
    // generator derives the grammar from the schema itself.
    std::function<Result<std::string>(const std::string& jsonSchema)> grammar;
    PlanLimits limits;
    float temperature = 0.0f; // greedy: the same contract gives the same review
    std::uint64_t seed = 0;
    int maxAnswerTokens = 1024;
};

struct ModelReviewResult {
    QuestionPlan plan;
    QList<QuestionAnswer> answers; // in question order
    QList<Finding> findings; // source "llm"; risk is the model's judgement
    QStringList warnings; // questions whose answer could not be used
    bool cancelled = false;
    std::int64_t promptTokens = 0; // fed through the model
    std::int64_t sharedPrefixTokens = 0;
    std::int64_t generatedTokens = 0;
    double seconds = 0.0;
};

// Asks the model about the contract: plans the questions from the fast findings, renders one
// prompt per question (all sharing the passages as prefix), and decodes every answer in one
// batch under its JSON grammar (in-process) or as streaming requests with the answer's JSON
// Schema (a remote server). Answers that fail (cut off, unparsable, a server error) become
// warnings; the others stand. When the prompts do not fit the context the passages are
// shortened, then fewer are taken. Errors: nothing fits the context, or the engine failed.
// A cancel returns what was answered so far with `cancelled` set.
Result<ModelReviewResult> runModelReview(generation::TextGenerator& generator,
    const Document& document, const QList<Clause>& clauses, const QList<Finding>& fastFindings,
    const Playbook& playbook, const std::function<bool()>& cancelled,
    const ModelReviewObserver& observer = {}, const ModelReviewOptions& options = {});
// The findings an answer gives: for each category judged present, one per passage named
// (the fast finding's span when one of that category lies inside, else the passage).
QList<Finding> findingsFromAnswer(const Document& document, const QuestionPlan& plan,
    const QuestionAnswer& answer, const QList<Finding>& fastFindings);

} // namespace cw::llm
