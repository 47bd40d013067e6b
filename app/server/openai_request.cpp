#include "app/server/openai_request.h"

#include "engine/common/bounded_json.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace cw::server {

namespace {

using Json = nlohmann::ordered_json; // keeps a schema's property order

// Fields a request may carry. Those we accept but that change nothing here are listed apart:
// a client library that always sends them must still work.
constexpr std::array kCommonFields { "model", "stream", "stream_options", "temperature", "top_p",
    "top_k", "min_p", "max_tokens", "stop", "seed", "presence_penalty", "frequency_penalty",
    "repetition_penalty", "logit_bias", "response_format", "n", "user", "logprobs" };
constexpr std::array kChatFields { "messages", "max_completion_tokens", "chat_template_kwargs",
    "top_logprobs", "tools", "tool_choice", "parallel_tool_calls" };
constexpr std::array kCompletionFields { "prompt", "echo", "suffix", "best_of" };

constexpr std::size_t kMaxStopStrings = 4;
constexpr std::size_t kMaxStopLength = 256;

std::string typeName(const Json& v)
{
    return v.type_name();
}

// A short rendering of a bad value for the error message.
std::string shown(const Json& v)
{
    std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (s.size() > 40)
        s = s.substr(0, 37) + "...";
    return s;
}

Error fieldError(std::string_view field, std::string_view what, const Json& got)
{
    return Error { "'" + std::string(field) + "' " + std::string(what) + ", got " + shown(got) };
}

Result<double> number(const Json& v, std::string_view field, double lo, double hi,
    bool loOpen = false, std::string_view range = {})
{
    if (!v.is_number())
        return fieldError(field, "must be a number", v);
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < lo || x > hi || (loOpen && x <= lo))
        return fieldError(field, "must be a number in " + std::string(range), v);
    return x;
}

Result<std::int64_t> integer(
    const Json& v, std::string_view field, std::int64_t lo, std::int64_t hi)
{
    if (!v.is_number_integer())
        return fieldError(field, "must be an integer", v);
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(hi))
        return fieldError(field, "must be at most " + std::to_string(hi), v);
    const std::int64_t x = v.get<std::int64_t>();
    if (x < lo || x > hi)
        return fieldError(field,
            "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", v);
    return x;
}

Result<bool> boolean(const Json& v, std::string_view field)
{
    if (!v.is_boolean())
        return fieldError(field, "must be true or false", v);
    return v.get<bool>();
}

// A message's content: a string, or OpenAI's list of parts of which only text is supported.
Result<std::string> messageContent(const Json& content, const std::string& field)
{
    if (content.is_string())
        return content.get<std::string>();
    if (content.is_null())
        return std::string();
    if (!content.is_array())
        return fieldError(field, "must be a string or an array of text parts", content);
    std::string text;
    for (std::size_t i = 0; i < content.size(); ++i) {
        const Json& part = content[i];
        const std::string at = field + "[" + std::to_string(i) + "]";
        if (!part.is_object() || !part.contains("type") || part["type"] != "text")
            return fieldError(at,
                "must be {\"type\": \"text\", \"text\": ...} (only text is "
                "supported)",
                part);
        if (!part.contains("text") || !part["text"].is_string())
            return fieldError(at + ".text", "must be a string", part.value("text", Json()));
        text += part["text"].get<std::string>();
    }
    return text;
}

Result<std::vector<engine::ChatMessage>> parseMessages(const Json& v)
{
    if (!v.is_array() || v.empty())
        return fieldError("messages", "must be a non-empty array", v);
    std::vector<engine::ChatMessage> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const Json& m = v[i];
        const std::string at = "messages[" + std::to_string(i) + "]";
        if (!m.is_object())
            return fieldError(at, "must be an object", m);
        for (const auto& [key, value] : m.items()) {
            if (key != "role" && key != "content" && key != "name" && key != "reasoning_content")
                return Error { "'" + at + "." + key + "' is not a supported message field" };
        }
        if (!m.contains("role") || !m["role"].is_string())
            return fieldError(at + ".role", "must be a string", m.value("role", Json()));
        const std::string role = m["role"].get<std::string>();
        if (role != "system" && role != "developer" && role != "user" && role != "assistant")
            return fieldError(at + ".role",
                "must be \"system\", \"developer\", \"user\" or \"assistant\"", m["role"]);
        if (!m.contains("content"))
            return Error { "'" + at + ".content' is missing" };
        auto content = messageContent(m["content"], at + ".content");
        if (!content)
            return content.error();
        engine::ChatMessage message { role == "developer" ? "system" : role, *content,
            std::nullopt };
        if (m.contains("reasoning_content")) {
            if (!m["reasoning_content"].is_string())
                return fieldError(
                    at + ".reasoning_content", "must be a string", m["reasoning_content"]);
            message.reasoningContent = m["reasoning_content"].get<std::string>();
        }
        out.push_back(std::move(message));
    }
    return out;
}

Result<ResponseFormat> parseResponseFormat(const Json& v)
{
    if (!v.is_object() || !v.contains("type") || !v["type"].is_string())
        return fieldError("response_format", "must be an object with a string 'type'", v);
    const std::string type = v["type"].get<std::string>();
    ResponseFormat format;
    if (type == "text")
        return format;
    if (type == "json_object") {
        format.kind = ResponseFormat::Kind::JsonObject;
        return format;
    }
    if (type != "json_schema")
        return fieldError("response_format.type",
            "must be \"text\", \"json_object\" or \"json_schema\"", v["type"]);
    const Json* spec = v.contains("json_schema") ? &v["json_schema"] : nullptr;
    if (!spec || !spec->is_object())
        return fieldError("response_format.json_schema", "must be an object with a 'schema'",
            spec ? *spec : Json());
    for (const auto& [key, value] : spec->items()) {
        if (key != "name" && key != "schema" && key != "strict" && key != "description")
            return Error { "'response_format.json_schema." + key + "' is not a supported field" };
    }
    if (spec->contains("name")) {
        if (!(*spec)["name"].is_string())
            return fieldError(
                "response_format.json_schema.name", "must be a string", (*spec)["name"]);
        format.name = (*spec)["name"].get<std::string>();
    }
    if (!spec->contains("schema"))
        return Error { "'response_format.json_schema.schema' is missing" };
    const Json& schema = (*spec)["schema"];
    if (!schema.is_object() && !schema.is_boolean())
        return fieldError(
            "response_format.json_schema.schema", "must be a JSON Schema object", schema);
    format.kind = ResponseFormat::Kind::JsonSchema;
    format.schema = schema;
    return format;
}

Result<std::vector<std::string>> parseStop(const Json& v)
{
    std::vector<std::string> stops;
    if (v.is_null())
        return stops;
    if (v.is_string()) {
        stops.push_back(v.get<std::string>());
    } else if (v.is_array()) {
        if (v.size() > kMaxStopStrings)
            return fieldError("stop", "may hold at most 4 strings", v);
        for (const Json& s : v) {
            if (!s.is_string())
                return fieldError("stop", "must be a string or an array of strings", v);
            stops.push_back(s.get<std::string>());
        }
    } else {
        return fieldError("stop", "must be a string or an array of strings", v);
    }
    for (const std::string& s : stops) {
        if (s.empty() || s.size() > kMaxStopLength)
            return fieldError("stop", "strings must have 1 to 256 bytes", v);
    }
    return stops;
}

// Fields every endpoint shares: sampling, limits, streaming, format.
Result<void> parseCommon(const Json& body, CompletionRequest& out)
{
    auto& p = out.params;
    for (const auto& [key, v] : body.items()) {
        if (v.is_null() && key != "stop")
            continue; // OpenAI clients send null for "not given"
        if (key == "model") {
            if (!v.is_string())
                return fieldError(key, "must be a string", v);
            out.model = v.get<std::string>();
        } else if (key == "stream") {
            auto b = boolean(v, key);
            if (!b)
                return b.error();
            out.stream = *b;
        } else if (key == "stream_options") {
            if (!v.is_object())
                return fieldError(key, "must be an object", v);
            for (const auto& [k, x] : v.items()) {
                if (k != "include_usage" && k != "continuous_usage_stats")
                    return Error { "'stream_options." + k + "' is not a supported field" };
                auto b = boolean(x, "stream_options." + k);
                if (!b)
                    return b.error();
                if (k == "include_usage")
                    out.includeUsage = *b;
            }
        } else if (key == "temperature") {
            auto x = number(v, key, 0.0, 2.0, false, "[0, 2]");
            if (!x)
                return x.error();
            p.temperature = float(*x);
        } else if (key == "top_p") {
            auto x = number(v, key, 0.0, 1.0, true, "(0, 1]");
            if (!x)
                return x.error();
            p.topP = float(*x);
        } else if (key == "min_p") {
            auto x = number(v, key, 0.0, 1.0, false, "[0, 1]");
            if (!x)
                return x.error();
            p.minP = float(*x);
        } else if (key == "top_k") {
            auto x = integer(v, key, -1, 1 << 20); // -1: off, as vLLM takes it
            if (!x)
                return x.error();
            p.topK = std::int32_t(std::max<std::int64_t>(*x, 0));
        } else if (key == "max_tokens" || key == "max_completion_tokens") {
            auto x = integer(v, key, 1, 1 << 24);
            if (!x)
                return x.error();
            p.maxTokens = std::int32_t(*x);
        } else if (key == "stop") {
            auto s = parseStop(v);
            if (!s)
                return s.error();
            p.stopStrings = std::move(*s);
        } else if (key == "seed") {
            if (!v.is_number_integer())
                return fieldError(key, "must be an integer", v);
            p.seed = v.is_number_unsigned() ? v.get<std::uint64_t>()
                                            : std::uint64_t(v.get<std::int64_t>());
        } else if (key == "presence_penalty" || key == "frequency_penalty") {
            auto x = number(v, key, -2.0, 2.0, false, "[-2, 2]");
            if (!x)
                return x.error();
            (key == "presence_penalty" ? p.presencePenalty : p.frequencyPenalty) = float(*x);
        } else if (key == "repetition_penalty") {
            auto x = number(v, key, 0.0, 10.0, true, "(0, 10]");
            if (!x)
                return x.error();
            p.repetitionPenalty = float(*x);
        } else if (key == "logit_bias") {
            if (!v.is_object())
                return fieldError(key, "must be an object of token id to bias", v);
            for (const auto& [id, bias] : v.items()) {
                const std::string at = "logit_bias." + id;
                std::int64_t token = -1;
                if (id.empty() || id.size() > 9 || !std::all_of(id.begin(), id.end(), ::isdigit))
                    return Error { "'" + at + "': keys must be token ids" };
                token = std::stoll(id);
                auto x = number(bias, at, -100.0, 100.0, false, "[-100, 100]");
                if (!x)
                    return x.error();
                p.logitBias[std::int32_t(token)] = float(*x);
            }
        } else if (key == "response_format") {
            auto f = parseResponseFormat(v);
            if (!f)
                return f.error();
            out.format = std::move(*f);
        } else if (key == "n" || key == "best_of") {
            auto x = integer(v, key, 1, 1);
            if (!x)
                return Error { "'" + key + "': only 1 answer per request is supported, got "
                    + shown(v) };
        } else if (key == "user") {
            if (!v.is_string())
                return fieldError(key, "must be a string", v);
        } else if (key == "logprobs" || key == "echo") {
            if (!v.is_boolean() && !(key == "logprobs" && v.is_number_integer()))
                return fieldError(key, "must be a boolean", v);
            if ((v.is_boolean() && v.get<bool>()) || (v.is_number_integer() && v != 0))
                return Error { "'" + key + "' is not supported by this server" };
        } else if (key == "top_logprobs") {
            if (!(v.is_number_integer() && v == 0))
                return Error { "'top_logprobs' is not supported by this server" };
        } else if (key == "tools" || key == "tool_choice" || key == "parallel_tool_calls"
            || key == "suffix") {
            if (!(key == "tool_choice" && v == "none") && !(v.is_array() && v.empty())
                && !v.is_boolean())
                return Error { "'" + key + "' is not supported by this server" };
        } else if (key == "chat_template_kwargs") {
            if (!v.is_object())
                return fieldError(key, "must be an object", v);
            for (const auto& [k, x] : v.items()) {
                if (k != "enable_thinking")
                    return Error { "'chat_template_kwargs." + k + "' is not supported" };
                auto b = boolean(x, "chat_template_kwargs.enable_thinking");
                if (!b)
                    return b.error();
                out.enableThinking = *b;
            }
        }
    }
    return {};
}

template <std::size_t N>
bool listed(const std::array<const char*, N>& names, const std::string& key)
{
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return key == n; });
}

} // namespace

Result<CompletionRequest> parseCompletionRequest(std::string_view body, Endpoint endpoint)
{
    auto parsed = parseBoundedJson(body);
    if (!parsed)
        return Error { "the request body " + parsed.error().message };
    const Json json = std::move(*parsed);
    if (!json.is_object())
        return Error { "the request body must be a JSON object, got " + typeName(json) };
    CompletionRequest out;
    out.endpoint = endpoint;
    const bool chat = endpoint == Endpoint::ChatCompletions;
    for (const auto& [key, value] : json.items()) {
        const bool known = listed(kCommonFields, key)
            || (chat ? listed(kChatFields, key) : listed(kCompletionFields, key));
        if (!known)
            return Error { "'" + key + "' is not a field of "
                + (chat ? std::string("/v1/chat/completions") : std::string("/v1/completions"))
                + " requests" };
    }
    try {
        if (auto common = parseCommon(json, out); !common)
            return common.error();
        if (chat) {
            if (!json.contains("messages"))
                return Error { "'messages' is missing" };
            auto messages = parseMessages(json["messages"]);
            if (!messages)
                return messages.error();
            out.messages = std::move(*messages);
        } else {
            if (!json.contains("prompt"))
                return Error { "'prompt' is missing" };
            const Json& prompt = json["prompt"];
            if (prompt.is_string())
                out.prompt = prompt.get<std::string>();
            else if (prompt.is_array() && prompt.size() == 1 && prompt[0].is_string())
                out.prompt = prompt[0].get<std::string>();
            else
                return fieldError("prompt", "must be a string (or an array of one string)", prompt);
            if (out.prompt.empty())
                return Error { "'prompt' is empty" };
        }
    } catch (const Json::exception& e) {
        // Every access above checks the type first; this only guards against a slip.
        return Error { std::string("the request could not be read: ") + e.what() };
    }
    return out;
}

} // namespace cw::server
