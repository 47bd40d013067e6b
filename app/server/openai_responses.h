#pragma once

#include "engine/generation/generation_result.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace cw::server {

// The identity of one answer, shared by its chunks.
struct AnswerHeader {
    std::string id; // "chatcmpl-..." or "cmpl-..."
    std::int64_t created = 0; // Unix seconds
    std::string model;
    bool chat = true;
};

AnswerHeader newAnswerHeader(bool chat, const std::string& model);

// "stop" (end of turn, a stop token or string) or "length" (max_tokens, the context).
const char* finishReason(const engine::GenerationResult& result);
nlohmann::json usageJson(std::int64_t promptTokens, std::int64_t completionTokens);

// A whole non-streaming answer.
nlohmann::json answerJson(const AnswerHeader& header, const engine::GenerationResult& result);
// One streaming chunk: `text` as delta (chat: with the role in the first), finish reason and
// usage on the last.
nlohmann::json chunkJson(const AnswerHeader& header, std::string_view text, bool first,
    const char* finish = nullptr, const nlohmann::json& usage = nullptr);
// OpenAI's usage-only chunk (stream_options.include_usage): empty choices.
nlohmann::json usageChunkJson(const AnswerHeader& header, const nlohmann::json& usage);

// {"error": {"message", "type", "param", "code"}}, as OpenAI and vLLM answer errors.
nlohmann::json errorJson(int status, std::string_view message, std::string_view code = {});

// A JSON value as one SSE event ("data: ...\n\n").
std::string sseEvent(const nlohmann::json& value);
std::string dumpJson(const nlohmann::json& value);

} // namespace cw::server
