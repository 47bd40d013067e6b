#include "engine/sampling/grammar.h"

#include <algorithm>
#include <string>

namespace cw::sampling {

namespace {

void appendUtf8(std::string& out, uint32_t cp)
{
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

void printChar(std::string& out, uint32_t cp)
{
    static const char* hex = "0123456789ABCDEF";
    if (cp == '\\' || cp == '"' || cp == ']' || cp == '[' || cp == '-' || cp == '^') {
        out += '\\';
        out += static_cast<char>(cp);
    } else if (cp < 0x20 || cp == 0x7F) {
        out += "\\x";
        out += hex[cp >> 4];
        out += hex[cp & 15];
    } else {
        appendUtf8(out, cp);
    }
}

} // namespace

bool CharSet::contains(uint32_t cp) const
{
    auto it = std::upper_bound(
        ranges.begin(), ranges.end(), cp, [](uint32_t v, const auto& r) { return v < r.first; });
    const bool in = it != ranges.begin() && cp <= std::prev(it)->second;
    return in != negated;
}

bool CharSet::intersects(uint32_t lo, uint32_t hi) const
{
    if (lo > hi)
        return false;
    if (!negated) {
        for (const auto& r : ranges)
            if (r.first <= hi && lo <= r.second)
                return true;
        return false;
    }
    // Negated: some point of [lo, hi] lies outside every range (ranges sorted and merged).
    uint32_t next = lo;
    for (const auto& r : ranges) {
        if (r.second < next)
            continue;
        if (r.first > next)
            return true;
        if (r.second >= hi)
            return false;
        next = r.second + 1;
    }
    return next <= hi;
}

std::string Grammar::toString() const
{
    std::string out;
    for (size_t r = 0; r < m_rules.size(); ++r) {
        out += m_names[r] + " ::=";
        for (const GrammarElement& e : m_rules[r]) {
            switch (e.type) {
            case GrammarElement::Type::End:
                break;
            case GrammarElement::Type::Alt:
                out += " |";
                break;
            case GrammarElement::Type::RuleRef:
                out += " " + m_names[e.value];
                break;
            case GrammarElement::Type::Chars: {
                const CharSet& s = m_charSets[e.value];
                out += " [";
                if (s.negated)
                    out += '^';
                for (const auto& [lo, hi] : s.ranges) {
                    printChar(out, lo);
                    if (hi != lo) {
                        out += '-';
                        printChar(out, hi);
                    }
                }
                out += ']';
                break;
            }
            }
        }
        out += '\n';
    }
    return out;
}

} // namespace cw::sampling
