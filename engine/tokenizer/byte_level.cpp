#include "engine/tokenizer/byte_level.h"

#include "engine/tokenizer/utf8.h"

namespace cw::engine {

ByteLevelAlphabet::ByteLevelAlphabet()
{
    m_codePointToByte.fill(-1);
    const auto printable = [](int b) {
        return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    int next = 0;
    for (int b = 0; b < 256; ++b) {
        const char32_t cp = printable(b) ? char32_t(b) : char32_t(256 + next++);
        m_byteToCodePoint[std::size_t(b)] = cp;
        m_codePointToByte[cp] = b;
    }
}

std::string ByteLevelAlphabet::encode(std::string_view bytes) const
{
    std::string out;
    out.reserve(bytes.size() * 2);
    for (const char c : bytes)
        utf8::appendCodePoint(out, m_byteToCodePoint[static_cast<unsigned char>(c)]);
    return out;
}

std::optional<std::string> ByteLevelAlphabet::decode(std::string_view spelling) const
{
    std::string out;
    out.reserve(spelling.size());
    std::size_t pos = 0;
    while (pos < spelling.size()) {
        const std::size_t n = utf8::sequenceLength(spelling, pos, nullptr, nullptr);
        if (n == 0)
            return std::nullopt;
        const char32_t cp = utf8::decodeAt(spelling, pos, n);
        if (cp >= m_codePointToByte.size() || m_codePointToByte[cp] < 0)
            return std::nullopt;
        out.push_back(char(m_codePointToByte[cp]));
        pos += n;
    }
    return out;
}

const ByteLevelAlphabet& byteLevelAlphabet()
{
    static const ByteLevelAlphabet alphabet;
    return alphabet;
}

} // namespace cw::engine
