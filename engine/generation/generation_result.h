#pragma once

#include "engine/common/result.h"
#include "engine/runtime/model.h"
#include "engine/sampling/sampler.h"
#include "engine/sampling/stop_condition.h"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cw::sampling {
class GrammarConstraint;
}

namespace cw::engine {

class Tokenizer;

struct GenerationResult {
    std::vector<std::int32_t> ids; // generated tokens (a final EOS/stop token included)
    std::string text; // the answer, cut before a stop string
    sampling::StopReason reason = sampling::StopReason::None; // None: cancelled or context full
    bool cancelled = false;
    std::int64_t promptTokens = 0;
    double prefillSeconds = 0.0;
    double decodeSeconds = 0.0; // from the first sampled token to the last
};

// Receives text as it becomes safe to show (never half a UTF-8 character, never the start of
// a possible stop string). Return false to cancel; generation stops within this token.
using TextCallback = std::function<bool(std::string_view piece)>;

// Prefills `prompt` on a fresh sequence of `model`, then samples token by token until EOS, a
// stop token or string, max tokens, the end of the context, or a cancel. EOS ids: the
// tokenizer's eos, <|im_end|> and <|endoftext|>. Errors: from the model (context, NaN/Inf
// naming the layer), from the sampler (nothing can be sampled).
Result<GenerationResult> generate(Model& model, const Tokenizer& tokenizer,
    std::span<const std::int32_t> prompt, const sampling::SamplingParams& params,
    const TextCallback& onText = {}, sampling::GrammarConstraint* constraint = nullptr);

} // namespace cw::engine
