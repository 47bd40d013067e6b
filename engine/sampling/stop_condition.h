#pragma once

#include "engine/sampling/sampler.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cw::sampling {

enum class StopReason { None, EosToken, StopToken, StopString, MaxTokens };

// Follows a generation token by token and says when to stop and which text is safe to show.
// Stop strings are found across token boundaries; while the tail of the text could still be
// the start of a stop string that text is held back (not yet "releasable"). When a stop
// string matches, the text up to (not including) it is the final output.
class StopCondition {
public:
    StopCondition(const SamplingParams& params, std::vector<int32_t> eosTokenIds);

    // Adds one generated token and the bytes it decodes to (empty for control tokens).
    // Returns the reason to stop, or StopReason::None to go on. A stop/EOS token adds no text.
    StopReason add(int32_t tokenId, std::string_view tokenBytes);

    StopReason reason() const { return m_reason; }
    int32_t generatedTokens() const { return m_count; }
    // Whole text so far (after a stop string matched: cut before it).
    const std::string& text() const { return m_text; }
    // Bytes at the end of text() that may still belong to a forming stop string.
    size_t heldBackBytes() const;
    // Returns the text that became safe since the last call (all of it once stopped).
    std::string takeReleasable();

private:
    std::vector<int32_t> m_eos;
    std::vector<int32_t> m_stopIds;
    std::vector<std::string> m_stopStrings;
    int32_t m_maxTokens;
    int32_t m_count = 0;
    StopReason m_reason = StopReason::None;
    std::string m_text;
    size_t m_released = 0;
};

} // namespace cw::sampling
