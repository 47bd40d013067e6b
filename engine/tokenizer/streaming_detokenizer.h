#pragma once

#include <cstdint>
#include <string>

namespace cw::engine {

class Tokenizer;

// Turns generated ids into text as they come, never emitting half a UTF-8 character:
// bytes of an unfinished character wait for the next token. What it emits in total
// equals Tokenizer::decode of all the ids (invalid sequences become U+FFFD).
class StreamingDetokenizer {
public:
    explicit StreamingDetokenizer(const Tokenizer& tokenizer, bool skipSpecial = false);

    // Text that became complete with this token (often empty for a byte of a CJK
    // character or an emoji split over tokens).
    std::string push(std::int32_t id);
    // Ends the stream: an unfinished character left over becomes U+FFFD.
    std::string flush();
    // Bytes held back, waiting for the rest of a character.
    std::size_t pendingBytes() const { return m_pending.size(); }

private:
    const Tokenizer& m_tokenizer;
    bool m_skipSpecial;
    std::string m_pending;
};

} // namespace cw::engine
