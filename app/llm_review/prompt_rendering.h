#pragma once

#include "app/llm_review/question_prompt.h"
#include "engine/chat/chat_template.h"
#include "engine/common/result.h"

#include <string>

namespace cw::llm {

// The parts of asking a question that need the engine, kept in the host so that the LLM head
// plugin links no engine: the host lends them through LlmHeadInput.

// GBNF for an answer's JSON Schema, with JSON string escapes limited to \" \\ \/ \b \f \n \r
// \t: a \u escape could encode half a surrogate pair, which no JSON parser accepts, and the
// model can write any character as UTF-8 anyway. Errors: the schema converter's.
Result<std::string> answerGrammarForSchema(const std::string& jsonSchema);
Result<std::string> answerGrammar(const ModelQuestion& question);

// The whole prompt of one question (questionMessages) rendered with the model's chat template,
// thinking off.
Result<std::string> questionPrompt(const engine::ChatTemplate& chatTemplate,
    const Document& document, const QuestionPlan& plan, const ModelQuestion& question,
    const Playbook& playbook);

} // namespace cw::llm
