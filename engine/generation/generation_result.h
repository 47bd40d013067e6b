#pragma once

#include "engine/sampling/stop_condition.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace cw::engine {

// How one answer ended, as the scheduler reports it.
struct GenerationResult {
    std::vector<std::int32_t> ids; // generated tokens (a final EOS/stop token included)
    std::string text; // the answer, cut before a stop string
    // None: cancelled, or the context was full (contextFull).
    sampling::StopReason reason = sampling::StopReason::None;
    bool cancelled = false;
    bool contextFull = false; // the sequence reached the model's configured context
    std::int64_t promptTokens = 0;
    std::int64_t reusedPromptTokens = 0; // of promptTokens, forked from the prefix cache
    double queuedSeconds = 0.0; // from submit to a place in the running batch
    double prefillSeconds = 0.0; // from that place to the first generated token
    double decodeSeconds = 0.0; // from the first generated token to the last
};

// Receives text as it becomes safe to show (never half a UTF-8 character, never the start of
// a possible stop string). Return false to cancel; generation stops within this token.
using TextCallback = std::function<bool(std::string_view piece)>;

} // namespace cw::engine
