#include "app/test_generation/engine_skill_model.h"

#include "engine/generation/generate_and_wait.h"
#include "engine/sampling/grammar_constraint.h"

namespace cw {

namespace {

// Tokens an answer needs at least: a short test file.
constexpr std::int64_t kMinAnswerTokens = 128;

} // namespace

EngineSkillModel::EngineSkillModel(std::shared_ptr<llm::LlmSession> session)
    : m_session(std::move(session))
{
}

Result<std::vector<std::int32_t>> EngineSkillModel::promptTokens(
    const SkillMessages& messages) const
{
    std::vector<engine::ChatMessage> chat;
    if (!messages.system.isEmpty())
        chat.push_back({ "system", messages.system.toStdString(), std::nullopt });
    chat.push_back({ "user", messages.user.toStdString(), std::nullopt });
    engine::ChatOptions options;
    options.enableThinking = false;
    auto prompt = m_session->chatTemplate().renderPrompt(chat, options);
    if (!prompt)
        return prompt.error();
    // The user's code stays text, whatever control-token lookalikes it holds.
    return m_session->tokenizer().encode(prompt->text, prompt->messageText);
}

Result<SkillModelAnswer> EngineSkillModel::answer(const CodeSkill& skill,
    const SkillMessages& messages, const std::function<void(const QString& piece)>& onText,
    const std::function<bool()>& cancelled)
{
    auto prompt = promptTokens(messages);
    if (!prompt)
        return prompt.error();
    const std::int64_t context = m_session->contextLength();
    const std::int64_t promptSize = std::int64_t(prompt->size());
    if (context > 0 && promptSize + kMinAnswerTokens > context)
        return makeError("the code and its prompt take " + std::to_string(promptSize)
            + " tokens; the model's context of " + std::to_string(context)
            + " leaves no room for an answer (give a smaller file or a longer context)");

    engine::ScheduledRequest request;
    request.prompt = std::move(*prompt);
    request.params.temperature = skill.sampling.temperature;
    request.params.topP = skill.sampling.topP;
    request.params.topK = skill.sampling.topK;
    request.params.maxTokens = std::int32_t(context > 0
            ? std::min<std::int64_t>(skill.sampling.maxTokens, context - promptSize)
            : skill.sampling.maxTokens);
    for (const QString& stop : skill.stopSequences)
        request.params.stopStrings.push_back(stop.toStdString());
    if (skill.output == SkillOutputKind::Json) {
        auto constraint = sampling::GrammarConstraint::fromJsonSchema(
            skill.jsonSchema.toStdString(), m_session->vocabulary());
        if (!constraint)
            return makeError(
                skill.sourcePath.toStdString() + ": output.schema: " + constraint.error().message);
        request.constraint = std::make_unique<sampling::GrammarConstraint>(std::move(*constraint));
    }
    // UTF-8 pieces arrive whole (the detokenizer never splits a character). A cancel seen
    // here stops the answer within this token; generateAndWait's poll covers the prefill.
    request.onText = [onText, cancelled](std::string_view piece) {
        if (onText)
            onText(QString::fromUtf8(piece.data(), qsizetype(piece.size())));
        return !(cancelled && cancelled());
    };
    auto result = engine::generateAndWait(m_session->scheduler(), std::move(request), cancelled);
    if (!result)
        return makeError("the model could not answer: " + result.error().message);
    SkillModelAnswer answer;
    answer.text = QString::fromStdString(result->text);
    answer.cancelled = result->cancelled;
    answer.promptTokens = result->promptTokens;
    answer.generatedTokens = std::int64_t(result->ids.size());
    answer.reusedPromptTokens = result->reusedPromptTokens;
    return answer;
}

} // namespace cw
