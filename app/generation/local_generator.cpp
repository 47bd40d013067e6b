#include "app/generation/local_generator.h"

#include "engine/generation/batch_generator.h"
#include "engine/sampling/grammar_constraint.h"

namespace cw::generation {

LocalGenerator::LocalGenerator(std::shared_ptr<llm::LlmSession> session)
    : m_session(std::move(session))
{
}

Result<std::string> LocalGenerator::render(const GenerationRequest& request) const
{
    engine::ChatOptions options;
    options.enableThinking = request.thinking;
    return m_session->chatTemplate().render(request.messages, options);
}

Result<std::int64_t> LocalGenerator::promptTokens(const std::vector<engine::ChatMessage>& messages)
{
    GenerationRequest request;
    request.messages = messages;
    auto text = render(request);
    if (!text)
        return text.error();
    return std::int64_t(m_session->tokenizer().encode(*text).size());
}

Result<GenerationTotals> LocalGenerator::generate(std::span<GenerationRequest> requests,
    const std::function<bool()>& cancelled, const FinishedCallback& onFinished)
{
    auto lock = m_session->lock();
    const std::size_t count = requests.size();
    std::vector<sampling::GrammarConstraint> constraints;
    constraints.reserve(count);
    std::vector<engine::BatchRequest> batch(count);
    const std::int64_t context = m_session->contextLength();
    for (std::size_t i = 0; i < count; ++i) {
        const GenerationRequest& request = requests[i];
        auto text = render(request);
        if (!text)
            return text.error();
        engine::BatchRequest& b = batch[i];
        b.prompt = m_session->tokenizer().encode(*text);
        b.params.temperature = request.temperature;
        b.params.topP = request.topP;
        b.params.stopStrings = request.stop;
        b.params.seed = request.seed;
        const std::int64_t room
            = context > 0 ? context - std::int64_t(b.prompt.size()) : std::int64_t(1) << 30;
        b.params.maxTokens = std::int32_t(std::min<std::int64_t>(request.maxTokens, room));
        if (!request.grammar.empty() || !request.jsonSchema.empty()) {
            auto constraint = request.grammar.empty()
                ? sampling::GrammarConstraint::fromJsonSchema(
                    request.jsonSchema, m_session->vocabulary())
                : sampling::GrammarConstraint::fromGbnf(request.grammar, m_session->vocabulary());
            if (!constraint)
                return makeError("answer format of request " + std::to_string(i) + ": "
                    + constraint.error().message);
            constraints.push_back(std::move(*constraint));
            b.constraint = &constraints.back();
        }
        if (request.onText)
            b.onText = [&request](std::string_view piece) {
                request.onText(piece);
                return true;
            };
    }
    engine::BatchOptions options;
    options.cancelled = cancelled;
    options.onFinished = [&](std::size_t index, const engine::GenerationResult& result) {
        GenerationAnswer answer;
        answer.text = result.text;
        answer.cancelled = result.cancelled;
        answer.complete = !result.cancelled;
        answer.promptTokens = result.promptTokens;
        answer.generatedTokens = std::int64_t(result.ids.size());
        if (onFinished)
            onFinished(index, answer);
    };
    auto result = engine::generateBatch(m_session->model(), m_session->tokenizer(),
        std::span<engine::BatchRequest>(batch), options);
    if (!result)
        return makeError("model review: " + result.error().message);
    GenerationTotals totals;
    totals.promptTokens = result->promptTokens;
    totals.sharedPrefixTokens = result->sharedPrefixTokens;
    totals.generatedTokens = result->generatedTokens;
    totals.cancelled = result->cancelled;
    return totals;
}

} // namespace cw::generation
