#pragma once

#include <string>
#include <string_view>

namespace cw::llm {

// Follows a JSON answer as it is generated and gives back, piece by piece, the decoded text
// of one string field of the top-level object (the model's note), so the reader sees the
// note grow while the rest of the answer is still being written. The pieces concatenate to
// the field's value as a JSON parser reads it. Never emits half a UTF-8 character or half an
// escape; a \u escape that is half a surrogate pair gives U+FFFD.
class StreamingNoteReader {
public:
    explicit StreamingNoteReader(std::string field);

    // Feeds the next bytes of the answer; returns the note text that became known.
    std::string feed(std::string_view bytes);
    bool noteFinished() const { return m_state == State::After; }

private:
    enum class State { Before, InValue, After };
    void feedStructure(char c);
    void feedNote(char c, std::string& out);

    std::string m_field;
    State m_state = State::Before;
    int m_depth = 0;
    bool m_inString = false;
    bool m_escape = false;
    bool m_expectKey = false; // at depth 1: the next string is a key
    bool m_keyMatches = false; // the last key at depth 1 was the field
    std::string m_key;
    std::string m_unicode; // hex digits of a \u escape being read
    unsigned m_highSurrogate = 0;
};

} // namespace cw::llm
