#include "engine/tokenizer/utf8.h"

namespace cw::engine::utf8 {

void appendCodePoint(std::string& out, char32_t cp)
{
    if (cp < 0x80) {
        out.push_back(char(cp));
    } else if (cp < 0x800) {
        out.push_back(char(0xC0 | (cp >> 6)));
        out.push_back(char(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(char(0xE0 | (cp >> 12)));
        out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(char(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(char(0xF0 | (cp >> 18)));
        out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(char(0x80 | (cp & 0x3F)));
    }
}

std::size_t sequenceLength(
    std::string_view text, std::size_t pos, std::size_t* maximalSubpart, bool* truncated)
{
    const auto byteAt = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char b0 = byteAt(pos);
    if (maximalSubpart)
        *maximalSubpart = 1;
    if (truncated)
        *truncated = false;
    if (b0 < 0x80)
        return 1;
    std::size_t need = 0;
    unsigned char lo = 0x80, hi = 0xBF; // allowed range of the second byte
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        need = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 3;
        if (b0 == 0xE0)
            lo = 0xA0; // no overlongs
        if (b0 == 0xED)
            hi = 0x9F; // no surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 4;
        if (b0 == 0xF0)
            lo = 0x90;
        if (b0 == 0xF4)
            hi = 0x8F; // nothing above U+10FFFF
    } else {
        return 0; // continuation byte or impossible lead byte
    }
    std::size_t i = 1;
    for (; i < need; ++i) {
        if (pos + i >= text.size()) {
            if (maximalSubpart)
                *maximalSubpart = i;
            if (truncated)
                *truncated = true;
            return 0;
        }
        const unsigned char b = byteAt(pos + i);
        const unsigned char min = i == 1 ? lo : 0x80;
        const unsigned char max = i == 1 ? hi : 0xBF;
        if (b < min || b > max) {
            if (maximalSubpart)
                *maximalSubpart = i;
            return 0;
        }
    }
    return need;
}

char32_t decodeAt(std::string_view text, std::size_t pos, std::size_t length)
{
    const auto b
        = [&](std::size_t i) { return char32_t(static_cast<unsigned char>(text[pos + i])); };
    switch (length) {
    case 1:
        return b(0);
    case 2:
        return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3:
        return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default:
        return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
    }
}

bool isValid(std::string_view text)
{
    std::size_t pos = 0;
    while (pos < text.size()) {
        if (static_cast<unsigned char>(text[pos]) < 0x80) {
            ++pos;
            continue;
        }
        const std::size_t n = sequenceLength(text, pos, nullptr, nullptr);
        if (n == 0)
            return false;
        pos += n;
    }
    return true;
}

std::string sanitize(std::string_view text)
{
    if (isValid(text))
        return std::string(text);
    std::string out;
    out.reserve(text.size() + 8);
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t subpart = 0;
        const std::size_t n = sequenceLength(text, pos, &subpart, nullptr);
        if (n == 0) {
            out.append(kReplacement);
            pos += subpart;
        } else {
            out.append(text.substr(pos, n));
            pos += n;
        }
    }
    return out;
}

std::size_t appendComplete(std::string& out, std::string_view bytes)
{
    std::size_t pos = 0;
    while (pos < bytes.size()) {
        std::size_t subpart = 0;
        bool truncated = false;
        const std::size_t n = sequenceLength(bytes, pos, &subpart, &truncated);
        if (n > 0) {
            out.append(bytes.substr(pos, n));
            pos += n;
        } else if (truncated) {
            break; // may still complete with the next bytes
        } else {
            out.append(kReplacement);
            pos += subpart;
        }
    }
    return pos;
}

} // namespace cw::engine::utf8
