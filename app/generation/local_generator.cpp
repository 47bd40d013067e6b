#include "app/generation/local_generator.h"

#include "engine/generation/request_scheduler.h"
#include "engine/sampling/grammar_constraint.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

namespace cw::generation {

namespace {

// Answers the scheduler's thread finished, handed to the caller's thread.
struct Finished {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<std::pair<std::size_t, Result<engine::GenerationResult>>> results;
};

GenerationAnswer answerFrom(const Result<engine::GenerationResult>& result)
{
    GenerationAnswer answer;
    if (!result) {
        answer.error = result.error().message;
        return answer;
    }
    answer.text = result->text;
    answer.cancelled = result->cancelled;
    answer.complete = !result->cancelled;
    answer.promptTokens = result->promptTokens;
    answer.generatedTokens = std::int64_t(result->ids.size());
    return answer;
}

} // namespace

LocalGenerator::LocalGenerator(std::shared_ptr<llm::LlmSession> session)
    : m_session(std::move(session))
{
}

Result<std::vector<std::int32_t>> LocalGenerator::promptIds(const GenerationRequest& request) const
{
    engine::ChatOptions options;
    options.enableThinking = request.thinking;
    auto prompt = m_session->chatTemplate().renderPrompt(request.messages, options);
    if (!prompt)
        return prompt.error();
    // The messages' text stays text: a contract that contains "<|im_end|>" cannot open a role.
    return m_session->tokenizer().encode(prompt->text, prompt->messageText);
}

Result<std::int64_t> LocalGenerator::promptTokens(const std::vector<engine::ChatMessage>& messages)
{
    GenerationRequest request;
    request.messages = messages;
    auto ids = promptIds(request);
    if (!ids)
        return ids.error();
    return std::int64_t(ids->size());
}

Result<GenerationTotals> LocalGenerator::generate(std::span<GenerationRequest> requests,
    const std::function<bool()>& cancelled, const FinishedCallback& onFinished)
{
    const std::size_t count = requests.size();
    const std::int64_t context = m_session->contextLength();
    std::vector<engine::ScheduledRequest> scheduled(count);
    for (std::size_t i = 0; i < count; ++i) {
        const GenerationRequest& request = requests[i];
        auto ids = promptIds(request);
        if (!ids)
            return ids.error();
        engine::ScheduledRequest& s = scheduled[i];
        s.prompt = std::move(*ids);
        s.params.temperature = request.temperature;
        s.params.topP = request.topP;
        s.params.stopStrings = request.stop;
        s.params.seed = request.seed;
        const std::int64_t room
            = context > 0 ? context - std::int64_t(s.prompt.size()) : std::int64_t(1) << 30;
        s.params.maxTokens = std::int32_t(
            std::max<std::int64_t>(1, std::min<std::int64_t>(request.maxTokens, room)));
        if (!request.grammar.empty() || !request.jsonSchema.empty()) {
            auto constraint = request.grammar.empty()
                ? sampling::GrammarConstraint::fromJsonSchema(
                    request.jsonSchema, m_session->vocabulary())
                : sampling::GrammarConstraint::fromGbnf(request.grammar, m_session->vocabulary());
            if (!constraint)
                return makeError("answer format of request " + std::to_string(i) + ": "
                    + constraint.error().message);
            s.constraint = std::make_unique<sampling::GrammarConstraint>(std::move(*constraint));
        }
        if (request.onText)
            s.onText = [&request](std::string_view piece) {
                request.onText(piece);
                return true;
            };
    }

    // Every request goes to the model's scheduler at once; each answer is reported here, on
    // the caller's thread, as it ends. A full queue (another caller's long review) is waited
    // out: the rest are submitted as places free up.
    auto finished = std::make_shared<Finished>();
    engine::RequestScheduler& scheduler = m_session->scheduler();
    std::vector<std::uint64_t> ids;
    std::size_t next = 0, running = 0, refused = 0;
    GenerationTotals totals;
    auto report = [&](std::size_t index, const Result<engine::GenerationResult>& result) {
        const GenerationAnswer answer = answerFrom(result);
        if (result) {
            totals.promptTokens += result->promptTokens - result->reusedPromptTokens;
            totals.sharedPrefixTokens
                = std::max(totals.sharedPrefixTokens, result->reusedPromptTokens);
            totals.generatedTokens += std::int64_t(result->ids.size());
        } else {
            ++totals.failed;
        }
        if (onFinished)
            onFinished(index, answer);
    };
    bool cancelSent = false;
    while (next < count || running > 0) {
        while (next < count && !cancelSent) {
            engine::ScheduledRequest& s = scheduled[next];
            s.onFinished = [finished, index = next](Result<engine::GenerationResult> result) {
                std::lock_guard lock(finished->mutex);
                finished->results.emplace_back(index, std::move(result));
                finished->ready.notify_all();
            };
            auto submitted = scheduler.submit(std::move(s)); // left as it was when refused
            if (submitted.refusal == engine::RequestScheduler::Refusal::QueueFull && running > 0)
                break; // try again when one of ours has ended
            if (submitted.refusal != engine::RequestScheduler::Refusal::None) {
                ++refused;
                report(
                    next, makeError("request " + std::to_string(next) + ": " + submitted.message));
            } else {
                ids.push_back(submitted.id);
                ++running;
            }
            ++next;
        }
        if (cancelled && cancelled() && !cancelSent) {
            for (std::uint64_t id : ids)
                scheduler.cancel(id);
            cancelSent = true;
            totals.cancelled = true;
            for (; next < count; ++next) {
                GenerationAnswer answer;
                answer.cancelled = true;
                if (onFinished)
                    onFinished(next, answer);
            }
        }
        std::deque<std::pair<std::size_t, Result<engine::GenerationResult>>> ended;
        {
            std::unique_lock lock(finished->mutex);
            finished->ready.wait_for(
                lock, std::chrono::milliseconds(20), [&] { return !finished->results.empty(); });
            ended.swap(finished->results);
        }
        for (auto& [index, result] : ended) {
            --running;
            report(index, result);
        }
    }
    if (count > 0 && refused == count)
        return makeError("model review: the model refused every request");
    return totals;
}

} // namespace cw::generation
