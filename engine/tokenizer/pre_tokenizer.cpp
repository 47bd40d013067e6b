#include "engine/tokenizer/pre_tokenizer.h"

#include <pcre2.h>

namespace cw::engine {

const std::string PreTokenizer::kQwen2Pattern
    = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct PreTokenizer::Compiled {
    pcre2_code* code = nullptr;
    ~Compiled() { pcre2_code_free(code); }
};

namespace {

// PCRE2's \s with PCRE2_UCP is "Z or \t\n\v\f\r"; Oniguruma's (used by Hugging Face
// tokenizers) is Unicode White_Space, which adds U+0085 NEXT LINE.
std::string toPcre2Dialect(std::string_view pattern)
{
    std::string out;
    out.reserve(pattern.size() + 32);
    bool inClass = false;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            const char e = pattern[i + 1];
            ++i;
            if (e == 's')
                out += inClass ? "\\s\\x{85}" : "[\\s\\x{85}]";
            else if (e == 'S' && !inClass)
                out += "[^\\s\\x{85}]";
            else {
                out.push_back('\\');
                out.push_back(e);
            }
            continue;
        }
        if (!inClass && c == '[') {
            inClass = true;
            out.push_back(c);
            if (i + 1 < pattern.size() && pattern[i + 1] == '^')
                out.push_back(pattern[++i]);
            if (i + 1 < pattern.size() && pattern[i + 1] == ']')
                out.push_back(pattern[++i]); // a literal ']' first in a class
            continue;
        }
        if (inClass && c == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {
            const auto end = pattern.find(":]", i + 2);
            if (end != std::string_view::npos) {
                out.append(pattern.substr(i, end + 2 - i));
                i = end + 1;
                continue;
            }
        }
        if (inClass && c == ']')
            inClass = false;
        out.push_back(c);
    }
    return out;
}

} // namespace

Result<PreTokenizer> PreTokenizer::create(std::string_view pattern)
{
    const std::string translated = toPcre2Dialect(pattern);
    int errorCode = 0;
    PCRE2_SIZE errorOffset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()),
        translated.size(), PCRE2_UTF | PCRE2_UCP, &errorCode, &errorOffset, nullptr);
    if (!code) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(errorCode, message, sizeof message);
        return makeError("pre-tokenizer regex does not compile at offset "
            + std::to_string(errorOffset) + ": " + reinterpret_cast<const char*>(message));
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); // interpreted matching stays if no JIT
    auto compiled = std::make_shared<Compiled>();
    compiled->code = code;
    PreTokenizer result;
    result.m_compiled = std::move(compiled);
    return result;
}

void PreTokenizer::split(
    std::string_view text, const std::function<void(std::string_view)>& piece) const
{
    if (text.empty())
        return;
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(m_compiled->code, nullptr);
    const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    std::size_t start = 0; // where the next search begins
    std::size_t emitted = 0; // text before this has been given to `piece`
    while (start < text.size()) {
        const int rc = pcre2_match(
            m_compiled->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, match, nullptr);
        if (rc < 0)
            break; // no further match (or a matching limit): the rest is one gap
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
        const std::size_t begin = ovector[0], end = ovector[1];
        if (begin > emitted)
            piece(text.substr(emitted, begin - emitted));
        if (end > begin) {
            piece(text.substr(begin, end - begin));
            emitted = end;
            start = end;
        } else {
            // An empty match: step over one code point so the search advances.
            std::size_t next = begin + 1;
            while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80)
                ++next;
            start = next;
            emitted = begin;
        }
    }
    if (emitted < text.size())
        piece(text.substr(emitted));
    pcre2_match_data_free(match);
}

} // namespace cw::engine
