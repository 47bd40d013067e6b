#pragma once

#include "engine/common/result.h"
#include "engine/generation/generator.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace cw::engine {

// One answer to generate in a batch: its whole prompt, how to sample, an optional grammar
// (not owned; one per request) and a callback for its text as it becomes safe to show.
struct BatchRequest {
    std::vector<std::int32_t> prompt;
    sampling::SamplingParams params;
    sampling::GrammarConstraint* constraint = nullptr;
    TextCallback onText; // returning false stops this request only
};

struct BatchOptions {
    // Polled before every model step: true stops every request (results so far are kept,
    // each marked cancelled). A step of a tiny model takes milliseconds, of a large one on a
    // CPU well under a second per decode token, so a cancel lands within about one step.
    std::function<bool()> cancelled;
    // Called as each request ends (stop, limit, its own cancel), with its index.
    std::function<void(std::size_t index, const GenerationResult& result)> onFinished;
    // Requests decoded together at most; 0: all of them.
    std::size_t maxActive = 0;
};

struct BatchResult {
    std::vector<GenerationResult> results; // in request order
    std::int64_t sharedPrefixTokens = 0; // prefilled once and forked into every request
    std::int64_t promptTokens = 0; // tokens fed through the model for prompts in total
    std::int64_t generatedTokens = 0;
    std::int64_t steps = 0; // model steps taken while decoding
    double prefillSeconds = 0.0;
    double decodeSeconds = 0.0;
    bool cancelled = false; // BatchOptions::cancelled stopped the batch
};

// Generates an answer for every request at once on one model. The longest token prefix
// that all prompts share (a contract and its candidate clauses, the chat header) is
// prefilled once on one sequence; each request forks it (copy-on-write KV blocks) and
// prefills only its own suffix; then every unfinished request adds one token per batched
// Model::step. Sampling, grammar, stop rules and streaming are per request, so greedy
// answers are the tokens generate() gives for each prompt alone (up to the float rounding
// of batched matrix products). Errors: invalid params, a prompt that is empty or longer than
// the context, and the model's errors (then no result is returned).
Result<BatchResult> generateBatch(Model& model, const Tokenizer& tokenizer,
    std::span<BatchRequest> requests, const BatchOptions& options = {});

// Length of the longest prefix shared by all of `prompts` (0 for none or one empty).
std::size_t sharedPrefixLength(std::span<const std::vector<std::int32_t>* const> prompts);

} // namespace cw::engine
