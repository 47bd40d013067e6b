#include "app/test_generation/engine_skill_model.h"

#include "engine/generation/request_scheduler.h"
#include "engine/sampling/grammar_constraint.h"

#include <chrono>
#include <future>

namespace cw {

namespace {

// Tokens an answer needs at least: a short test file.
constexpr std::int64_t kMinAnswerTokens = 128;

} // namespace

EngineSkillModel::EngineSkillModel(std::shared_ptr<llm::LlmSession> session)
    : m_session(std::move(session))
{
    engine::SchedulerOptions options;
    options.maxActive = 1; // one answer at a time: the rounds of a generation follow each other
    options.maxQueued = 4;
    options.prefixCacheEntries = 1; // the skill's prefix; one state slot
    options.minSharedPrefix = 16;
    m_scheduler = std::make_unique<engine::RequestScheduler>(
        m_session->model(), m_session->tokenizer(), options);
}

EngineSkillModel::~EngineSkillModel()
{
    auto lock = m_session->lock(); // the scheduler frees its cached root on the model
    m_scheduler.reset();
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
    auto text = m_session->chatTemplate().render(chat, options);
    if (!text)
        return text.error();
    return m_session->tokenizer().encode(*text);
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
    // here stops the answer within this token; the wait below covers the prefill.
    request.onText = [onText, cancelled](std::string_view piece) {
        if (onText)
            onText(QString::fromUtf8(piece.data(), qsizetype(piece.size())));
        return !(cancelled && cancelled());
    };
    std::promise<Result<engine::GenerationResult>> finished;
    auto future = finished.get_future();
    request.onFinished = [&finished](Result<engine::GenerationResult> result) {
        finished.set_value(std::move(result));
    };

    auto lock = m_session->lock();
    const std::int64_t reusedBefore = m_scheduler->stats().reusedPromptTokens;
    const auto submitted = m_scheduler->submit(std::move(request));
    if (submitted.refusal != engine::RequestScheduler::Refusal::None)
        return makeError("the model refused the prompt: " + submitted.message);
    bool cancelSent = false;
    while (future.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
        if (!cancelSent && cancelled && cancelled()) {
            m_scheduler->cancel(submitted.id);
            cancelSent = true;
        }
    }
    Result<engine::GenerationResult> result = future.get();
    if (!result)
        return makeError("the model failed: " + result.error().message);
    SkillModelAnswer answer;
    answer.text = QString::fromStdString(result->text);
    answer.cancelled = result->cancelled;
    answer.promptTokens = result->promptTokens;
    answer.generatedTokens = std::int64_t(result->ids.size());
    answer.reusedPromptTokens = m_scheduler->stats().reusedPromptTokens - reusedBefore;
    return answer;
}

} // namespace cw
