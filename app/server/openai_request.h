#pragma once

#include "engine/chat/chat_template.h"
#include "engine/common/result.h"
#include "engine/sampling/sampler.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cw::server {

enum class Endpoint { ChatCompletions, Completions };

struct ResponseFormat {
    enum class Kind { Text, JsonObject, JsonSchema };
    Kind kind = Kind::Text;
    nlohmann::ordered_json schema; // JsonSchema only, in the client's property order
    std::string name;
};

// One /v1/chat/completions or /v1/completions body, checked field by field.
struct CompletionRequest {
    Endpoint endpoint = Endpoint::ChatCompletions;
    std::string model; // empty: the one model served
    std::vector<engine::ChatMessage> messages; // chat
    std::string prompt; // completions
    std::optional<bool> enableThinking; // chat_template_kwargs.enable_thinking
    // OpenAI's defaults: temperature 1, top_p 1. maxTokens 0: not given (the server decides).
    sampling::SamplingParams params;
    bool stream = false;
    bool includeUsage = false; // stream_options.include_usage
    ResponseFormat format;
};

// Parses and checks a request body. Unknown fields, wrong types, out-of-range values and
// unsupported features are errors whose message names the field ("'top_p' must be a number
// in (0, 1], got 1.5"); a body that is not JSON, or not UTF-8, nested more than 64 levels
// deep or holding a key twice in one object says so. Never throws; time and stack are
// proportional to the body's size, whatever its shape (engine/common/bounded_json.h).
Result<CompletionRequest> parseCompletionRequest(std::string_view body, Endpoint endpoint);

} // namespace cw::server
