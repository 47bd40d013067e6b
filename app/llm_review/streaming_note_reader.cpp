#include "app/llm_review/streaming_note_reader.h"

namespace cw::llm {

namespace {

void appendUtf8(std::string& out, unsigned cp)
{
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

constexpr unsigned kReplacement = 0xFFFD;

} // namespace

StreamingNoteReader::StreamingNoteReader(std::string field)
    : m_field(std::move(field))
{
}

std::string StreamingNoteReader::feed(std::string_view bytes)
{
    std::string out;
    for (char c : bytes) {
        if (m_state == State::InValue)
            feedNote(c, out);
        else if (m_state == State::Before)
            feedStructure(c);
    }
    return out;
}

void StreamingNoteReader::feedStructure(char c)
{
    if (m_inString) {
        if (m_escape) {
            m_escape = false;
            m_key += c; // keys are compared raw: the field name has no escapes
        } else if (c == '\\') {
            m_escape = true;
            m_key += c;
        } else if (c == '"') {
            m_inString = false;
            if (m_depth == 1 && m_expectKey)
                m_keyMatches = m_key == m_field;
        } else {
            m_key += c;
        }
        return;
    }
    switch (c) {
    case '"':
        if (m_depth == 1 && !m_expectKey && m_keyMatches) {
            m_state = State::InValue;
            return;
        }
        m_inString = true;
        m_key.clear();
        break;
    case '{':
    case '[':
        ++m_depth;
        m_expectKey = m_depth == 1 && c == '{';
        break;
    case '}':
    case ']':
        --m_depth;
        break;
    case ':':
        if (m_depth == 1)
            m_expectKey = false;
        break;
    case ',':
        if (m_depth == 1) {
            m_expectKey = true;
            m_keyMatches = false;
        }
        break;
    default:
        break;
    }
}

void StreamingNoteReader::feedNote(char c, std::string& out)
{
    if (!m_unicode.empty() || (m_escape && c == 'u')) {
        if (m_escape) { // the 'u'
            m_escape = false;
            m_unicode.assign(1, 'u');
            return;
        }
        m_unicode += c;
        if (m_unicode.size() < 5)
            return;
        const unsigned cp = unsigned(std::stoul(m_unicode.substr(1), nullptr, 16));
        m_unicode.clear();
        if (cp >= 0xD800 && cp < 0xDC00) {
            if (m_highSurrogate)
                appendUtf8(out, kReplacement);
            m_highSurrogate = cp;
            return;
        }
        if (cp >= 0xDC00 && cp < 0xE000) {
            if (m_highSurrogate)
                appendUtf8(out, 0x10000 + ((m_highSurrogate - 0xD800) << 10) + (cp - 0xDC00));
            else
                appendUtf8(out, kReplacement);
            m_highSurrogate = 0;
            return;
        }
        if (m_highSurrogate) {
            appendUtf8(out, kReplacement);
            m_highSurrogate = 0;
        }
        appendUtf8(out, cp);
        return;
    }
    if (m_highSurrogate && !(m_escape || c == '\\')) {
        appendUtf8(out, kReplacement);
        m_highSurrogate = 0;
    }
    if (m_escape) {
        m_escape = false;
        if (m_highSurrogate) {
            appendUtf8(out, kReplacement);
            m_highSurrogate = 0;
        }
        switch (c) {
        case 'n':
            out += '\n';
            break;
        case 't':
            out += '\t';
            break;
        case 'r':
            out += '\r';
            break;
        case 'b':
            out += '\b';
            break;
        case 'f':
            out += '\f';
            break;
        default: // \" \\ \/
            out += c;
            break;
        }
        return;
    }
    if (c == '\\') {
        m_escape = true;
        return;
    }
    if (c == '"') {
        if (m_highSurrogate)
            appendUtf8(out, kReplacement);
        m_highSurrogate = 0;
        m_state = State::After;
        return;
    }
    out += c;
}

} // namespace cw::llm
