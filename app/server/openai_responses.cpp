#include "app/server/openai_responses.h"

#include <chrono>
#include <random>

namespace cw::server {

AnswerHeader newAnswerHeader(bool chat, const std::string& model)
{
    static thread_local std::mt19937_64 random { std::random_device {}() };
    char hex[25];
    std::snprintf(hex, sizeof hex, "%016llx%08llx", static_cast<unsigned long long>(random()),
        static_cast<unsigned long long>(random() & 0xffffffffu));
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    return { std::string(chat ? "chatcmpl-" : "cmpl-") + hex,
        std::chrono::duration_cast<std::chrono::seconds>(now).count(), model, chat };
}

const char* finishReason(const engine::GenerationResult& result)
{
    using sampling::StopReason;
    switch (result.reason) {
    case StopReason::EosToken:
    case StopReason::StopToken:
    case StopReason::StopString:
        return "stop";
    case StopReason::MaxTokens:
    case StopReason::None:
        break;
    }
    return "length";
}

nlohmann::json usageJson(std::int64_t promptTokens, std::int64_t completionTokens)
{
    return { { "prompt_tokens", promptTokens }, { "completion_tokens", completionTokens },
        { "total_tokens", promptTokens + completionTokens } };
}

nlohmann::json answerJson(const AnswerHeader& header, const engine::GenerationResult& result)
{
    nlohmann::json choice { { "index", 0 }, { "finish_reason", finishReason(result) },
        { "logprobs", nullptr } };
    if (header.chat)
        choice["message"] = { { "role", "assistant" }, { "content", result.text } };
    else
        choice["text"] = result.text;
    return { { "id", header.id }, { "object", header.chat ? "chat.completion" : "text_completion" },
        { "created", header.created }, { "model", header.model },
        { "choices", nlohmann::json::array({ choice }) },
        { "usage", usageJson(result.promptTokens, std::int64_t(result.ids.size())) } };
}

nlohmann::json chunkJson(const AnswerHeader& header, std::string_view text, bool first,
    const char* finish, const nlohmann::json& usage)
{
    nlohmann::json choice { { "index", 0 }, { "logprobs", nullptr },
        { "finish_reason", finish ? nlohmann::json(finish) : nlohmann::json(nullptr) } };
    if (header.chat) {
        nlohmann::json delta = nlohmann::json::object();
        if (first)
            delta["role"] = "assistant";
        if (!text.empty() || first)
            delta["content"] = text;
        choice["delta"] = delta;
    } else {
        choice["text"] = text;
    }
    nlohmann::json chunk { { "id", header.id },
        { "object", header.chat ? "chat.completion.chunk" : "text_completion" },
        { "created", header.created }, { "model", header.model },
        { "choices", nlohmann::json::array({ choice }) } };
    if (!usage.is_null())
        chunk["usage"] = usage;
    return chunk;
}

nlohmann::json usageChunkJson(const AnswerHeader& header, const nlohmann::json& usage)
{
    return { { "id", header.id },
        { "object", header.chat ? "chat.completion.chunk" : "text_completion" },
        { "created", header.created }, { "model", header.model },
        { "choices", nlohmann::json::array() }, { "usage", usage } };
}

nlohmann::json errorJson(int status, std::string_view message, std::string_view code)
{
    const char* type = "invalid_request_error";
    if (status == 401)
        type = "authentication_error";
    else if (status == 429)
        type = "rate_limit_error";
    else if (status >= 500)
        type = "server_error";
    return { { "error",
        { { "message", message }, { "type", type }, { "param", nullptr },
            { "code", code.empty() ? nlohmann::json(nullptr) : nlohmann::json(code) } } } };
}

std::string dumpJson(const nlohmann::json& value)
{
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string sseEvent(const nlohmann::json& value)
{
    return "data: " + dumpJson(value) + "\n\n";
}

} // namespace cw::server
