#include "engine/sampling/grammar.h"
#include "engine/sampling/grammar_matcher.h"

#include <gtest/gtest.h>
#include <memory>

using namespace cw::sampling;

namespace {

std::string parseError(const std::string& text)
{
    auto g = Grammar::parse(text);
    return g.ok() ? std::string("(parsed)") : g.error().message;
}

} // namespace

TEST(GrammarParser, parsesRulesAlternativesGroupsAndRepetition)
{
    auto g = Grammar::parse(R"(
# a comment
root  ::= greeting (" " name)+ "!"?   # trailing comment
greeting ::= "hi" | "hello"
name  ::= [A-Z] [a-z]{1,8}
)");
    ASSERT_TRUE(g.ok()) << g.error().message;
    EXPECT_EQ(g->ruleName(g->root()), "root");
    EXPECT_GE(g->ruleCount(), 3u);
    EXPECT_NE(g->toString().find("greeting ::="), std::string::npos);
}

TEST(GrammarParser, newlinesContinueInsideGroupsAndAfterBar)
{
    auto g = Grammar::parse("root ::= (\n  \"a\"\n  | \"b\"\n) |\n  \"c\"\n");
    ASSERT_TRUE(g.ok()) << g.error().message;
}

TEST(GrammarParser, reportsLineAndColumn)
{
    EXPECT_EQ(parseError("root ::= \"a\"\nx ::= [a-\n"),
        "grammar: unterminated character class at line 2, column 10");
    EXPECT_EQ(
        parseError("root ::= \"abc"), "grammar: unterminated string literal at line 1, column 14");
    EXPECT_EQ(parseError("root = \"a\""),
        "grammar: expected '::=' after rule name 'root' at line 1, column 6");
    EXPECT_EQ(parseError("root ::= * \"a\""),
        "grammar: '*' follows nothing it could repeat at line 1, column 10");
    EXPECT_EQ(parseError("root ::= (\"a\""), "grammar: expected ')' at line 1, column 14");
    EXPECT_EQ(parseError("root ::= \"\\q\""), "grammar: unknown escape '\\q' at line 1, column 11");
    EXPECT_EQ(parseError("root ::= \"a\"{3,1}"),
        "grammar: repetition maximum is below its minimum at line 1, column 18");
    EXPECT_EQ(
        parseError("root ::= [z-a]"), "grammar: character range is reversed at line 1, column 14");
}

TEST(GrammarParser, refusesUndefinedDuplicateMissingRootAndLeftRecursion)
{
    EXPECT_EQ(parseError("root ::= item\n"),
        "grammar: rule 'item' is used but never defined (first used at line 1, column 14)");
    EXPECT_EQ(parseError("root ::= \"a\"\nroot ::= \"b\"\n"),
        "grammar: rule 'root' is defined twice at line 2, column 1");
    EXPECT_EQ(parseError("start ::= \"a\"\n"), "grammar: no rule named 'root' (the start)");
    EXPECT_NE(
        parseError("root ::= root \"a\" | \"b\"\n").find("left-recursive"), std::string::npos);
    EXPECT_NE(
        parseError("root ::= x\nx ::= \"\"? root\n").find("left-recursive"), std::string::npos);
    EXPECT_NE(parseError("root ::= (\"\")*\n").find("left-recursive"), std::string::npos);
}

TEST(GrammarParser, escapesAndUnicode)
{
    auto g = Grammar::parse(R"(root ::= "\x41\u00e9\U0001F600\n\"" [\]\-\\] "é")");
    ASSERT_TRUE(g.ok()) << g.error().message;
    GrammarMatcher m(std::make_shared<const Grammar>(std::move(*g)));
    EXPECT_TRUE(m.accept("A\xC3\xA9\xF0\x9F\x98\x80\n\"-\xC3\xA9"));
    EXPECT_TRUE(m.isComplete());
    EXPECT_FALSE(Grammar::parse(R"(root ::= "\x4")").ok());
    EXPECT_FALSE(Grammar::parse("root ::= \"\xC3\"").ok()); // invalid UTF-8 in the text
}

TEST(GrammarParser, refusesHugeRepetitions)
{
    EXPECT_NE(parseError("root ::= \"a\"{99999999}").find("repetition count"), std::string::npos);
    EXPECT_NE(parseError("root ::= \"abcdefghijklmnopqrstuvwxyz\"{50000}").find("too large"),
        std::string::npos);
}

TEST(GrammarParser, refusesVeryLongChainsOfLeadingRules)
{
    std::string text = "root ::= r0\n";
    for (int i = 0; i < 3000; ++i)
        text += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + " \"x\"\n";
    text += "r3000 ::= \"y\"\n";
    EXPECT_NE(parseError(text).find("chain of more than 2000 rules"), std::string::npos);
    // A long chain that is not at the start of the rules is fine (no recursion there).
    std::string ok = "root ::= \"a\" r0\n";
    for (int i = 0; i < 3000; ++i)
        ok += "r" + std::to_string(i) + " ::= \"x\" r" + std::to_string(i + 1) + "\n";
    ok += "r3000 ::= \"y\"\n";
    EXPECT_EQ(parseError(ok), "(parsed)");
}
