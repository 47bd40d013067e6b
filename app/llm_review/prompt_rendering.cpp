#include "app/llm_review/prompt_rendering.h"

#include "engine/sampling/json_schema_grammar.h"

namespace cw::llm {

Result<std::string> answerGrammarForSchema(const std::string& jsonSchema)
{
    auto gbnf = sampling::jsonSchemaToGbnf(std::string_view(jsonSchema));
    if (!gbnf)
        return gbnf.error();
    static const std::string kJsonChar
        = R"(json-char ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ))";
    static const std::string kPlainChar = R"(json-char ::= [^"\\\x00-\x1F] | "\\" ["\\/bfnrt])";
    const auto at = gbnf->find(kJsonChar);
    if (at == std::string::npos)
        return makeError("answer grammar: the JSON string rule has an unexpected form");
    gbnf->replace(at, kJsonChar.size(), kPlainChar);
    return gbnf;
}

Result<std::string> answerGrammar(const ModelQuestion& question)
{
    return answerGrammarForSchema(answerSchema(question));
}

Result<std::string> questionPrompt(const engine::ChatTemplate& chatTemplate,
    const Document& document, const QuestionPlan& plan, const ModelQuestion& question,
    const Playbook& playbook)
{
    const auto messages = questionMessages(document, plan, question, playbook);
    engine::ChatOptions options;
    options.enableThinking = false;
    return chatTemplate.render(messages, options);
}

} // namespace cw::llm
