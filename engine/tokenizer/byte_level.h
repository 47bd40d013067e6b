#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace cw::engine {

// GPT-2's byte-level alphabet, which Qwen's tokenizer.json and GGUF vocabularies use to
// spell tokens: every byte is shown as one printable code point (printable Latin-1 bytes
// as themselves, the others as U+0100 + n in byte order).
class ByteLevelAlphabet {
public:
    ByteLevelAlphabet();

    // The byte-level spelling of raw bytes.
    std::string encode(std::string_view bytes) const;
    // The raw bytes of a byte-level spelling; nullopt if a code point is outside the
    // alphabet or the text is not valid UTF-8.
    std::optional<std::string> decode(std::string_view spelling) const;

private:
    std::array<char32_t, 256> m_byteToCodePoint {};
    std::array<int, 512> m_codePointToByte {}; // -1: not in the alphabet
};

const ByteLevelAlphabet& byteLevelAlphabet();

} // namespace cw::engine
