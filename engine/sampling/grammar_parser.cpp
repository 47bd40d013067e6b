#include "engine/sampling/grammar.h"

#include <algorithm>
#include <map>
#include <string>

namespace cw::sampling {

namespace {

constexpr size_t kMaxElements = size_t { 1 } << 20; // all rules together
constexpr uint32_t kMaxRepetition = 100000;
constexpr int kMaxNesting = 200;
constexpr uint32_t kMaxLeftChain = 2000;

bool isNameChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
        || c == '_';
}

} // namespace

class GrammarParser {
public:
    explicit GrammarParser(std::string_view text)
        : m_text(text)
    {
    }

    Result<Grammar> run(std::string_view rootName)
    {
        skip(true);
        while (m_pos < m_text.size() && m_error.empty()) {
            parseRule();
            skip(true);
        }
        if (!m_error.empty())
            return makeError(m_error);
        for (size_t i = 0; i < m_g.m_rules.size(); ++i)
            if (!m_defined[i])
                return makeError("grammar: rule '" + m_g.m_names[i] + "' is used but never defined"
                    + " (first used at " + where(m_firstUse[i]) + ")");
        auto root = m_ids.find(std::string(rootName));
        if (root == m_ids.end())
            return makeError("grammar: no rule named '" + std::string(rootName) + "' (the start)");
        m_g.m_root = root->second;
        if (auto r = checkLeftRecursion(); !r)
            return r.error();
        return std::move(m_g);
    }

private:
    using Elements = std::vector<GrammarElement>;

    std::string where() const { return where(m_pos); }
    std::string where(size_t pos) const
    {
        size_t line = 1, col = 1;
        for (size_t i = 0; i < pos && i < m_text.size(); ++i) {
            if (m_text[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        return "line " + std::to_string(line) + ", column " + std::to_string(col);
    }

    void fail(const std::string& what)
    {
        if (m_error.empty())
            m_error = "grammar: " + what + " at " + where();
    }
    bool failed() const { return !m_error.empty(); }
    bool atEnd() const { return m_pos >= m_text.size(); }
    char peek() const { return atEnd() ? '\0' : m_text[m_pos]; }

    // Skips blanks and comments; newlines only when newlineOk.
    void skip(bool newlineOk)
    {
        while (!atEnd()) {
            const char c = m_text[m_pos];
            if (c == '#') {
                while (!atEnd() && m_text[m_pos] != '\n')
                    ++m_pos;
            } else if (c == ' ' || c == '\t' || (newlineOk && (c == '\n' || c == '\r'))) {
                ++m_pos;
            } else {
                break;
            }
        }
    }

    std::string parseName()
    {
        const size_t start = m_pos;
        while (!atEnd() && isNameChar(m_text[m_pos]))
            ++m_pos;
        return std::string(m_text.substr(start, m_pos - start));
    }

    uint32_t ruleId(const std::string& name)
    {
        auto [it, inserted] = m_ids.emplace(name, static_cast<uint32_t>(m_g.m_rules.size()));
        if (inserted) {
            m_g.m_rules.emplace_back();
            m_g.m_names.push_back(name);
            m_defined.push_back(false);
            m_firstUse.push_back(m_pos);
        }
        return it->second;
    }

    uint32_t newRule(const std::string& base)
    {
        std::string name;
        do {
            name = base + "_" + std::to_string(++m_generated);
        } while (m_ids.count(name));
        const uint32_t id = ruleId(name);
        m_defined[id] = true;
        return id;
    }

    void setRule(uint32_t id, Elements body)
    {
        m_total += body.size();
        if (m_total > kMaxElements)
            fail("the grammar is too large (over " + std::to_string(kMaxElements) + " elements)");
        m_g.m_rules[id] = std::move(body);
    }

    void parseRule()
    {
        const size_t start = m_pos;
        const std::string name = parseName();
        if (name.empty())
            return fail("expected a rule name");
        skip(false);
        if (m_text.substr(m_pos, 3) != "::=")
            return fail("expected '::=' after rule name '" + name + "'");
        m_pos += 3;
        skip(true);
        const uint32_t id = ruleId(name);
        if (m_defined[id]) {
            m_pos = start;
            return fail("rule '" + name + "' is defined twice");
        }
        m_defined[id] = true;
        Elements body;
        parseAlternatives(name, body, 0);
        if (failed())
            return;
        skip(false);
        if (!atEnd() && peek() != '\n' && peek() != '\r')
            return fail(std::string("unexpected '") + peek() + "'");
        setRule(id, std::move(body));
    }

    void parseAlternatives(const std::string& name, Elements& out, int depth)
    {
        if (depth > kMaxNesting)
            return fail("groups nested too deeply");
        parseSequence(name, out, depth);
        while (!failed() && peek() == '|') {
            ++m_pos;
            skip(true);
            out.push_back({ GrammarElement::Type::Alt, 0 });
            parseSequence(name, out, depth);
        }
        out.push_back({ GrammarElement::Type::End, 0 });
    }

    bool readHex(int digits, uint32_t& value)
    {
        value = 0;
        for (int i = 0; i < digits; ++i) {
            const char c = peek();
            uint32_t d;
            if (c >= '0' && c <= '9')
                d = static_cast<uint32_t>(c - '0');
            else if (c >= 'a' && c <= 'f')
                d = static_cast<uint32_t>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                d = static_cast<uint32_t>(c - 'A' + 10);
            else
                return false;
            value = value * 16 + d;
            ++m_pos;
        }
        return true;
    }

    // One character of a literal or class (escape sequences and UTF-8 decoded).
    bool parseChar(uint32_t& cp)
    {
        if (atEnd())
            return false;
        const auto c = static_cast<unsigned char>(m_text[m_pos]);
        if (c == '\\') {
            ++m_pos;
            if (atEnd()) {
                fail("unfinished escape");
                return false;
            }
            const char e = m_text[m_pos++];
            int digits = 0;
            switch (e) {
            case 'n':
                cp = '\n';
                return true;
            case 'r':
                cp = '\r';
                return true;
            case 't':
                cp = '\t';
                return true;
            case '0':
                cp = 0;
                return true;
            case '\\':
            case '"':
            case '\'':
            case '[':
            case ']':
            case '-':
            case '^':
            case '/':
                cp = static_cast<uint32_t>(e);
                return true;
            case 'x':
                digits = 2;
                break;
            case 'u':
                digits = 4;
                break;
            case 'U':
                digits = 8;
                break;
            default:
                m_pos -= 2;
                fail(std::string("unknown escape '\\") + e + "'");
                return false;
            }
            if (!readHex(digits, cp)) {
                fail("expected " + std::to_string(digits) + " hex digits after '\\" + e + "'");
                return false;
            }
            if (cp > 0x10FFFF) {
                fail("code point beyond U+10FFFF");
                return false;
            }
            return true;
        }
        int len = c < 0x80       ? 1
            : (c & 0xE0) == 0xC0 ? 2
            : (c & 0xF0) == 0xE0 ? 3
            : (c & 0xF8) == 0xF0 ? 4
                                 : 0;
        if (len == 0 || m_pos + static_cast<size_t>(len) > m_text.size()) {
            fail("invalid UTF-8 in the grammar text");
            return false;
        }
        cp = len == 1 ? c : len == 2 ? (c & 0x1Fu) : len == 3 ? (c & 0x0Fu) : (c & 0x07u);
        for (int i = 1; i < len; ++i) {
            const auto k = static_cast<unsigned char>(m_text[m_pos + static_cast<size_t>(i)]);
            if ((k & 0xC0) != 0x80) {
                fail("invalid UTF-8 in the grammar text");
                return false;
            }
            cp = (cp << 6) | (k & 0x3Fu);
        }
        m_pos += static_cast<size_t>(len);
        return true;
    }

    uint32_t addCharSet(CharSet set)
    {
        std::sort(set.ranges.begin(), set.ranges.end());
        std::vector<std::pair<uint32_t, uint32_t>> merged;
        for (const auto& r : set.ranges) {
            if (!merged.empty() && r.first <= merged.back().second + 1)
                merged.back().second = std::max(merged.back().second, r.second);
            else
                merged.push_back(r);
        }
        set.ranges = std::move(merged);
        m_g.m_charSets.push_back(std::move(set));
        return static_cast<uint32_t>(m_g.m_charSets.size() - 1);
    }

    void parseLiteral(Elements& out)
    {
        ++m_pos; // opening quote
        while (!failed()) {
            if (atEnd() || peek() == '\n')
                return fail("unterminated string literal");
            if (peek() == '"') {
                ++m_pos;
                return;
            }
            uint32_t cp;
            if (!parseChar(cp))
                return;
            CharSet set;
            set.ranges.push_back({ cp, cp });
            out.push_back({ GrammarElement::Type::Chars, addCharSet(std::move(set)) });
        }
    }

    void parseClass(Elements& out)
    {
        ++m_pos; // [
        CharSet set;
        if (peek() == '^') {
            set.negated = true;
            ++m_pos;
        }
        while (!failed()) {
            if (atEnd() || peek() == '\n')
                return fail("unterminated character class");
            if (peek() == ']') {
                ++m_pos;
                break;
            }
            uint32_t lo, hi;
            if (!parseChar(lo))
                return;
            hi = lo;
            if (peek() == '-' && m_pos + 1 < m_text.size() && m_text[m_pos + 1] != ']') {
                ++m_pos;
                if (atEnd() || peek() == '\n')
                    return fail("unterminated character class");
                if (!parseChar(hi))
                    return;
                if (hi < lo)
                    return fail("character range is reversed");
            }
            set.ranges.push_back({ lo, hi });
        }
        if (!failed())
            out.push_back({ GrammarElement::Type::Chars, addCharSet(std::move(set)) });
    }

    bool parseCount(uint32_t& value)
    {
        const size_t start = m_pos;
        uint64_t v = 0;
        while (!atEnd() && peek() >= '0' && peek() <= '9') {
            v = v * 10 + static_cast<uint64_t>(peek() - '0');
            if (v > kMaxRepetition) {
                fail("repetition count above " + std::to_string(kMaxRepetition));
                return false;
            }
            ++m_pos;
        }
        value = static_cast<uint32_t>(v);
        return m_pos > start;
    }

    // Replaces out[start..] (one symbol) by its repetition {min, max}; max == UINT32_MAX: no
    // upper bound.
    void repeat(const std::string& name, Elements& out, size_t start, uint32_t min, uint32_t max)
    {
        Elements sym(out.begin() + static_cast<std::ptrdiff_t>(start), out.end());
        out.resize(start);
        if (sym.empty())
            return; // repeating the empty string is the empty string
        if (static_cast<uint64_t>(sym.size()) * min + m_total > kMaxElements)
            return fail("the grammar is too large after expanding a repetition");
        for (uint32_t i = 0; i < min; ++i)
            out.insert(out.end(), sym.begin(), sym.end());
        if (max == min)
            return;
        const auto E = [](GrammarElement::Type t, uint32_t v = 0) {
            return GrammarElement { t, v };
        };
        if (max == UINT32_MAX) {
            // star ::= sym star | ""
            const uint32_t star = newRule(name);
            Elements body = sym;
            body.push_back(E(GrammarElement::Type::RuleRef, star));
            body.push_back(E(GrammarElement::Type::Alt));
            body.push_back(E(GrammarElement::Type::End));
            setRule(star, std::move(body));
            out.push_back(E(GrammarElement::Type::RuleRef, star));
            return;
        }
        // Nested optionals: opt_k ::= sym opt_{k+1} | "" (the last one without the tail).
        uint32_t next = UINT32_MAX;
        for (uint32_t k = max - min; k > 0 && !failed(); --k) {
            const uint32_t opt = newRule(name);
            Elements body = sym;
            if (next != UINT32_MAX)
                body.push_back(E(GrammarElement::Type::RuleRef, next));
            body.push_back(E(GrammarElement::Type::Alt));
            body.push_back(E(GrammarElement::Type::End));
            setRule(opt, std::move(body));
            next = opt;
        }
        out.push_back(E(GrammarElement::Type::RuleRef, next));
    }

    void parseSequence(const std::string& name, Elements& out, int depth)
    {
        size_t lastSym = out.size();
        bool haveSym = false;
        while (!failed() && !atEnd()) {
            const char c = peek();
            const size_t symStart = out.size();
            if (c == '"') {
                parseLiteral(out);
            } else if (c == '[') {
                parseClass(out);
            } else if (c == '.') {
                ++m_pos;
                CharSet any;
                any.negated = true;
                out.push_back({ GrammarElement::Type::Chars, addCharSet(std::move(any)) });
            } else if (c == '(') {
                ++m_pos;
                skip(true);
                const uint32_t group = newRule(name);
                Elements body;
                parseAlternatives(name, body, depth + 1);
                if (failed())
                    return;
                if (peek() != ')')
                    return fail("expected ')'");
                ++m_pos;
                setRule(group, std::move(body));
                out.push_back({ GrammarElement::Type::RuleRef, group });
            } else if (isNameChar(c)) {
                const std::string ref = parseName();
                out.push_back({ GrammarElement::Type::RuleRef, ruleId(ref) });
            } else if (c == '*' || c == '+' || c == '?' || c == '{') {
                if (!haveSym)
                    return fail(std::string("'") + c + "' follows nothing it could repeat");
                ++m_pos;
                uint32_t min = 0, max = UINT32_MAX;
                if (c == '+')
                    min = 1;
                else if (c == '?')
                    max = 1;
                else if (c == '{') {
                    skip(false);
                    if (!parseCount(min)) {
                        if (!failed())
                            fail("expected a number after '{'");
                        return;
                    }
                    skip(false);
                    if (peek() == ',') {
                        ++m_pos;
                        skip(false);
                        if (peek() != '}' && !parseCount(max)) {
                            if (!failed())
                                fail("expected a number or '}'");
                            return;
                        }
                    } else {
                        max = min;
                    }
                    skip(false);
                    if (peek() != '}')
                        return fail("expected '}'");
                    ++m_pos;
                    if (max < min)
                        return fail("repetition maximum is below its minimum");
                }
                repeat(name, out, lastSym, min, max);
                skip(depth > 0);
                continue;
            } else {
                break; // '|', ')', newline, or something the caller reports
            }
            lastSym = symStart;
            haveSym = true;
            skip(depth > 0);
        }
    }

    // Left recursion would make the matcher expand forever: refuse it.
    Result<void> checkLeftRecursion()
    {
        const size_t n = m_g.m_rules.size();
        std::vector<bool> nullable(n, false);
        for (bool changed = true; changed;) {
            changed = false;
            for (size_t r = 0; r < n; ++r) {
                if (nullable[r])
                    continue;
                bool altNullable = true;
                for (const GrammarElement& e : m_g.m_rules[r]) {
                    if (e.type == GrammarElement::Type::Alt
                        || e.type == GrammarElement::Type::End) {
                        if (altNullable) {
                            nullable[r] = changed = true;
                            break;
                        }
                        altNullable = true;
                    } else if (e.type == GrammarElement::Type::Chars || !nullable[e.value]) {
                        altNullable = false;
                    }
                }
            }
        }
        std::vector<std::vector<uint32_t>> first(n);
        for (size_t r = 0; r < n; ++r) {
            bool prefixNullable = true;
            for (const GrammarElement& e : m_g.m_rules[r]) {
                if (e.type == GrammarElement::Type::Alt || e.type == GrammarElement::Type::End) {
                    prefixNullable = true;
                } else if (prefixNullable) {
                    if (e.type == GrammarElement::Type::RuleRef) {
                        first[r].push_back(e.value);
                        prefixNullable = nullable[e.value];
                    } else {
                        prefixNullable = false;
                    }
                }
            }
        }
        // Iterative DFS: 0 unvisited, 1 on the path, 2 done.
        // Also the longest chain of rules that can start one another: the matcher expands
        // such a chain recursively, so a very long one is refused rather than risking the
        // thread's stack.
        std::vector<uint8_t> state(n, 0);
        std::vector<uint32_t> chain(n, 0);
        for (size_t s = 0; s < n; ++s) {
            if (state[s])
                continue;
            std::vector<std::pair<uint32_t, size_t>> path { { static_cast<uint32_t>(s), 0 } };
            state[s] = 1;
            while (!path.empty()) {
                auto& [r, i] = path.back();
                if (i == first[r].size()) {
                    state[r] = 2;
                    for (uint32_t f : first[r])
                        chain[r] = std::max(chain[r], chain[f] + 1);
                    if (chain[r] > kMaxLeftChain)
                        return makeError("grammar: rule '" + m_g.m_names[r]
                            + "' starts a chain of more than " + std::to_string(kMaxLeftChain)
                            + " rules that begin with one another");
                    path.pop_back();
                    continue;
                }
                const uint32_t next = first[r][i++];
                if (state[next] == 1)
                    return makeError("grammar: rule '" + m_g.m_names[next]
                        + "' is left-recursive (it can start with itself)");
                if (state[next] == 0) {
                    state[next] = 1;
                    path.push_back({ next, 0 });
                }
            }
        }
        return {};
    }

    std::string_view m_text;
    size_t m_pos = 0;
    std::string m_error;
    Grammar m_g;
    std::map<std::string, uint32_t> m_ids;
    std::vector<bool> m_defined;
    std::vector<size_t> m_firstUse;
    size_t m_total = 0;
    uint32_t m_generated = 0;
};

Result<Grammar> Grammar::parse(std::string_view text, std::string_view rootName)
{
    return GrammarParser(text).run(rootName);
}

} // namespace cw::sampling
