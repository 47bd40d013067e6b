// POST /v1/chat/completions and /v1/completions: a checked request becomes a scheduled
// generation whose text is sent whole or as server-sent events while it is written.
#include "app/server/answer_channel.h"
#include "app/server/client_connection.h"
#include "app/server/completion_server.h"
#include "app/server/openai_request.h"
#include "app/server/openai_responses.h"
#include "app/server/request_log.h"
#include "engine/sampling/json_schema_grammar.h"

#include <httplib.h>

namespace cw::server {

namespace {

using Clock = std::chrono::steady_clock;

// A grammar for "any JSON object" (response_format json_object).
const nlohmann::ordered_json& anyObjectSchema()
{
    static const auto schema
        = nlohmann::ordered_json { { "type", "object" }, { "additionalProperties", true } };
    return schema;
}
// A streaming client hears at least this often (an SSE comment while the prompt is
// prefilled or the queue waits), which is also how a client that left is noticed.
constexpr auto kHeartbeat = std::chrono::seconds(1);
// How often a client waiting for a whole answer is checked for having hung up.
constexpr auto kDisconnectCheck = std::chrono::milliseconds(20);

double secondsBetween(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double>(b - a).count();
}

// The log line of a request whose client left: why, and the tokens it cost until the
// scheduler stopped it (the scheduler answers within a step; a log line does not wait long).
void noteClientLeft(AnswerChannel& channel)
{
    auto& log = requestLog();
    log["cancelled"] = "client disconnected";
    const auto* outcome = channel.waitUntilFinished(Clock::now() + std::chrono::milliseconds(200));
    if (outcome && *outcome)
        log["completion_tokens"] = (*outcome)->ids.size();
}

// What the streaming provider keeps between its calls.
struct StreamState {
    std::shared_ptr<AnswerChannel> channel;
    AnswerHeader header;
    std::uint64_t id = 0;
    bool includeUsage = false;
    bool firstSent = false;
    bool cancelSent = false;
    bool wholeSent = false; // the tail and [DONE] went out
    bool leftNoted = false;
};

} // namespace

void CompletionServer::completions(
    const httplib::Request& request, httplib::Response& response, bool chat)
{
    const auto arrived = Clock::now();
    auto parsed = parseCompletionRequest(
        request.body, chat ? Endpoint::ChatCompletions : Endpoint::Completions);
    if (!parsed)
        return sendError(response, 400, parsed.error().message, "invalid_request");
    if (!parsed->model.empty() && parsed->model != m_model.id)
        return sendError(response, 404,
            "model '" + parsed->model + "' is not served here; this server serves '" + m_model.id
                + "' (GET /v1/models)",
            "model_not_found");

    // The messages' text is tokenized as text: "<|im_end|>" typed by a user is not a control
    // token (only the template writes those); a raw /v1/completions prompt is the client's
    // own template and keeps them.
    engine::ChatPrompt rendered { parsed->prompt, {} };
    if (chat) {
        engine::ChatOptions chatOptions;
        chatOptions.enableThinking = parsed->enableThinking;
        auto prompt = m_model.chatTemplate.renderPrompt(parsed->messages, chatOptions);
        if (!prompt)
            return sendError(
                response, 400, "'messages': " + prompt.error().message, "invalid_request");
        rendered = std::move(*prompt);
    }
    std::vector<std::int32_t> prompt
        = m_model.tokenizer->encode(rendered.text, rendered.messageText);
    if (prompt.empty())
        return sendError(response, 400, "the prompt encodes to no tokens", "invalid_request");

    // Prompt and answer together must fit the per-request limit (and the context).
    const std::int64_t context = m_model.model->contextLength();
    const std::int64_t limit = m_options.maxRequestTokens > 0 && context > 0
        ? std::min(m_options.maxRequestTokens, context)
        : std::max(m_options.maxRequestTokens, context);
    const auto promptTokens = std::int64_t(prompt.size());
    auto& params = parsed->params;
    if (limit > 0 && promptTokens >= limit)
        return sendError(response, 413,
            "the prompt has " + std::to_string(promptTokens) + " tokens; this server takes at most "
                + std::to_string(limit) + " tokens per request, prompt and answer together",
            "too_many_tokens");
    if (limit > 0 && params.maxTokens == 0)
        params.maxTokens = std::int32_t(limit - promptTokens);
    else if (limit > 0 && promptTokens + params.maxTokens > limit)
        return sendError(response, 413,
            "the request needs " + std::to_string(promptTokens) + " prompt tokens + "
                + std::to_string(params.maxTokens) + " max_tokens; this server takes at most "
                + std::to_string(limit) + " tokens per request",
            "too_many_tokens");

    std::unique_ptr<sampling::GrammarConstraint> constraint;
    if (parsed->format.kind != ResponseFormat::Kind::Text) {
        // Bounded by the schema limits (json_schema_grammar.h): milliseconds, far inside
        // --max-request-seconds, so it needs no cancelling.
        const auto compileStart = Clock::now();
        const bool object = parsed->format.kind == ResponseFormat::Kind::JsonObject;
        auto gbnf = sampling::jsonSchemaToGbnf(object ? anyObjectSchema() : parsed->format.schema);
        if (!gbnf)
            return sendError(response, 400,
                "'response_format.json_schema.schema': " + gbnf.error().message, "invalid_schema");
        auto built = sampling::GrammarConstraint::fromGbnf(*gbnf, m_model.vocabulary);
        if (!built)
            return sendError(response, 400,
                "'response_format.json_schema.schema': " + built.error().message, "invalid_schema");
        constraint = std::make_unique<sampling::GrammarConstraint>(std::move(*built));
        requestLog()["grammar_ms"] = secondsBetween(compileStart, Clock::now()) * 1000.0;
    }

    auto channel = std::make_shared<AnswerChannel>();
    engine::ScheduledRequest scheduled;
    scheduled.prompt = std::move(prompt);
    scheduled.params = params;
    scheduled.constraint = std::move(constraint);
    scheduled.onText = [channel](std::string_view piece) { return channel->push(piece); };
    // Tokens are counted where the answer ends, cancelled ones too (a client that leaves
    // still cost them).
    scheduled.onFinished = [this, channel](Result<engine::GenerationResult> result) {
        if (result)
            m_metrics.countTokens(result->promptTokens, std::int64_t(result->ids.size()));
        channel->finish(std::move(result));
    };
    const auto submitted = m_scheduler.submit(std::move(scheduled));
    if (submitted.refusal == engine::RequestScheduler::Refusal::QueueFull) {
        response.set_header("Retry-After", "1");
        return sendError(response, 429, submitted.message, "queue_full");
    }
    if (submitted.refusal != engine::RequestScheduler::Refusal::None)
        return sendError(response, 400, submitted.message, "invalid_request");

    const auto deadline = arrived + std::chrono::seconds(m_options.maxRequestSeconds);
    requestLog()["prompt_tokens"] = promptTokens;
    // Figures of a finished answer, for /metrics and the log line.
    auto record = [this, arrived, channel](const engine::GenerationResult& result) {
        const auto first = channel->firstTextAt().value_or(Clock::now());
        m_metrics.observeTimeToFirstToken(secondsBetween(arrived, first));
        m_metrics.observeRequest(secondsBetween(arrived, Clock::now()));
        auto& log = requestLog();
        log["completion_tokens"] = result.ids.size();
        log["ttft_ms"] = secondsBetween(arrived, first) * 1000.0;
        log["finish_reason"] = finishReason(result);
    };
    auto header = newAnswerHeader(chat, m_model.id);

    if (!parsed->stream) {
        // Waits in slices, so that a client that hangs up stops its generation.
        const ClientConnection client = ClientConnection::current();
        const AnswerChannel::Outcome* result = nullptr;
        while (!result) {
            const auto until = std::min(deadline, Clock::now() + kDisconnectCheck);
            result = channel->waitUntilFinished(until);
            if (result || until == deadline)
                break;
            if (client.hasLeft()) {
                channel->abandon();
                m_scheduler.cancel(submitted.id);
                noteClientLeft(*channel);
                response.status = 499; // nobody reads it; the log line says so
                return;
            }
        }
        if (!result) {
            m_scheduler.cancel(submitted.id);
            result = channel->waitUntilFinished(Clock::time_point::max());
            if (*result && (*result)->cancelled)
                return sendError(response, 504,
                    "the answer took longer than " + std::to_string(m_options.maxRequestSeconds)
                        + " s and was cancelled",
                    "timeout");
        }
        const AnswerChannel::Outcome& outcome = *result;
        if (!outcome)
            return sendError(response, 500, outcome.error().message, "engine_error");
        record(*outcome);
        response.set_content(dumpJson(answerJson(header, *outcome)), "application/json");
        return;
    }

    auto state = std::make_shared<StreamState>();
    state->channel = channel;
    state->header = std::move(header);
    state->id = submitted.id;
    state->includeUsage = parsed->includeUsage;
    // A stream that ends before its tail was sent lost its client (a failed write, or httplib
    // finding the socket gone): the generation stops and the log line says so. Whether the
    // channel has finished says nothing here: a cancelled generation finishes it too, and the
    // scheduler may do so before this runs.
    auto clientLeft = [this, state] {
        if (state->wholeSent || state->leftNoted)
            return;
        state->leftNoted = true;
        state->channel->abandon();
        m_scheduler.cancel(state->id);
        noteClientLeft(*state->channel);
    };
    beforeRequestLogLine(clientLeft);
    response.set_header("Cache-Control", "no-cache");
    response.set_header("X-Accel-Buffering", "no"); // nginx in front: do not buffer events
    response.set_chunked_content_provider(
        "text/event-stream",
        [this, state, deadline, record](std::size_t, httplib::DataSink& sink) {
            auto write = [&](const std::string& text) {
                if (sink.write(text.data(), text.size()))
                    return true;
                state->channel->abandon(); // the client left: stop generating for it
                m_scheduler.cancel(state->id);
                return false;
            };
            if (!state->firstSent) {
                state->firstSent = true;
                return write(sseEvent(chunkJson(state->header, "", true)));
            }
            if (!state->cancelSent && Clock::now() > deadline) {
                state->cancelSent = true;
                m_scheduler.cancel(state->id);
            }
            AnswerChannel::Update update = state->channel->next(Clock::now() + kHeartbeat);
            if (!update.text.empty())
                return write(sseEvent(chunkJson(state->header, update.text, false)));
            if (!update.finished)
                return write(": waiting\n\n");
            const Result<engine::GenerationResult>& outcome = *update.finished;
            std::string tail;
            if (!outcome) {
                requestLog()["error"] = outcome.error().message;
                tail = sseEvent(errorJson(500, outcome.error().message, "engine_error"));
            } else if (outcome->cancelled) {
                tail = sseEvent(errorJson(504, "the answer was cancelled (time limit)", "timeout"));
            } else {
                record(*outcome);
                const auto usage
                    = usageJson(outcome->promptTokens, std::int64_t(outcome->ids.size()));
                tail = sseEvent(chunkJson(state->header, "", false, finishReason(*outcome), usage));
                if (state->includeUsage)
                    tail += sseEvent(usageChunkJson(state->header, usage));
            }
            tail += "data: [DONE]\n\n";
            if (!write(tail))
                return false;
            state->wholeSent = true;
            sink.done();
            return true;
        },
        [clientLeft](bool) { clientLeft(); }); // also when no log line is written
}

} // namespace cw::server
