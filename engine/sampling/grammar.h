#pragma once

#include "engine/common/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cw::sampling {

// A set of Unicode code points: sorted, merged ranges, optionally negated.
struct CharSet {
    bool negated = false;
    std::vector<std::pair<uint32_t, uint32_t>> ranges; // inclusive [first, second]

    bool contains(uint32_t codePoint) const;
    // True when some code point in [lo, hi] is in the set.
    bool intersects(uint32_t lo, uint32_t hi) const;
};

// One element of a rule body. A rule is a sequence of alternatives, each a sequence of
// RuleRef / Chars elements closed by Alt (another alternative follows) or End (last).
struct GrammarElement {
    enum class Type : uint8_t { End, Alt, RuleRef, Chars };
    Type type;
    uint32_t value; // RuleRef: rule index; Chars: index into Grammar::charSets
};

// A context-free grammar over Unicode code points, written in llama.cpp's GBNF syntax:
//
//   root   ::= object                       # comment
//   object ::= "{" ws ( pair ( "," ws pair )* )? "}"
//   pair   ::= string ":" ws value
//   string ::= "\"" [^"\\\x00-\x1f]* "\""
//   digit  ::= [0-9]   hex ::= [0-9a-fA-F]{1,4}   any ::= .
//
// Literals "..." and classes [...] take the escapes \n \r \t \\ \" \' \[ \] \- \xHH \uHHHH
// \UHHHHHHHH; postfix *, +, ?, {m}, {m,}, {m,n} apply to a symbol, literal, class or group.
// Rules may refer to rules defined later; undefined rules and left recursion are errors.
class Grammar {
public:
    // Parses GBNF text; the start symbol is the rule named rootName. Errors name the line and
    // column.
    static Result<Grammar> parse(std::string_view text, std::string_view rootName = "root");

    uint32_t root() const { return m_root; }
    size_t ruleCount() const { return m_rules.size(); }
    const std::vector<GrammarElement>& rule(uint32_t index) const { return m_rules[index]; }
    const std::string& ruleName(uint32_t index) const { return m_names[index]; }
    const CharSet& charSet(uint32_t index) const { return m_charSets[index]; }

    // Re-prints the grammar (generated repetition rules included), for debugging.
    std::string toString() const;

private:
    friend class GrammarParser;
    uint32_t m_root = 0;
    std::vector<std::vector<GrammarElement>> m_rules;
    std::vector<std::string> m_names;
    std::vector<CharSet> m_charSets;
};

} // namespace cw::sampling
