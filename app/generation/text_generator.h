#pragma once

#include "engine/chat/chat_template.h"
#include "engine/common/result.h"

#include <QString>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cw::generation {

// One answer to ask for: a conversation, and what the answer must look like.
struct GenerationRequest {
    std::vector<engine::ChatMessage> messages;
    // JSON Schema the answer must follow (a remote server gets it as response_format
    // json_schema); empty: free text.
    std::string jsonSchema;
    // GBNF the in-process engine constrains with instead of jsonSchema, where the caller has
    // a tighter grammar than the schema converter would make; empty: from jsonSchema.
    std::string grammar;
    int maxTokens = 1024;
    float temperature = 0.0f;
    float topP = 1.0f; // 1: off
    std::vector<std::string> stop; // the answer ends before the first of these

    std::uint64_t seed = 0;
    bool thinking = false; // let a thinking model open a <think> block
    // Text of the answer as it is written, on the generating thread.
    std::function<void(std::string_view piece)> onText;
};

struct GenerationAnswer {
    std::string text;
    bool complete = false; // ended by the model (end of turn, or its token limit)
    bool cancelled = false;
    std::string error; // why this answer failed (it may hold part of the text)
    std::int64_t promptTokens = 0;
    std::int64_t generatedTokens = 0;
};

struct GenerationTotals {
    std::int64_t promptTokens = 0; // fed through the model (remote: as the server counts)
    // In-process: the most prompt tokens one request forked from the prefix cache (prefilled
    // once, shared by the requests that share them).
    std::int64_t sharedPrefixTokens = 0;
    std::int64_t generatedTokens = 0;
    bool cancelled = false;
    int failed = 0; // answers that ended with an error
};

// Where the review's language-model questions are answered: the in-process engine or an
// OpenAI-compatible server (clausewright-server, vLLM, SGLang, llama.cpp's server). Both
// stream, both enforce the JSON schema, both stop on cancel within a step.
class TextGenerator {
public:
    virtual ~TextGenerator() = default;

    virtual QString name() const = 0; // the model, as reviews record it
    virtual QString location() const = 0; // its path, or the server's URL
    virtual QString kindName() const = 0; // "in-process" or "remote server"
    // Where the answers are computed, for the status bar and the report: the engine's device
    // ("CPU (16 threads)", "NVIDIA H200 (cuda:0)") or the server's URL.
    virtual QString device() const { return location(); }
    // Tokens a prompt and its answer may hold; 0: not known here (the server decides).
    virtual std::int64_t contextLength() const = 0;
    // Tokens the rendered conversation takes; 0 where it cannot be counted here.
    virtual Result<std::int64_t> promptTokens(const std::vector<engine::ChatMessage>& messages) = 0;

    // Answers every request (together where the backend batches), calling onFinished as each
    // ends. `cancelled` is polled; a cancel keeps what was answered. Errors: nothing could be
    // answered at all (the model failed, the server cannot be reached or refused the key).
    // The last generate() failed because the server found the prompts longer than its
    // context or its per-request limit (HTTP 413, or 400 naming the context length).
    virtual bool lastPromptsTooLong() const { return false; }

    using FinishedCallback = std::function<void(std::size_t index, const GenerationAnswer&)>;
    virtual Result<GenerationTotals> generate(std::span<GenerationRequest> requests,
        const std::function<bool()>& cancelled, const FinishedCallback& onFinished)
        = 0;
};

} // namespace cw::generation
