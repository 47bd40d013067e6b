#include "engine/sampling/grammar_matcher.h"

#include <gtest/gtest.h>
#include <memory>

using namespace cw::sampling;

namespace {

std::shared_ptr<const Grammar> grammar(const std::string& text)
{
    auto g = Grammar::parse(text);
    EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
    return std::make_shared<const Grammar>(std::move(*g));
}

// Whole-string match: accepted and complete.
bool matches(const std::shared_ptr<const Grammar>& g, const std::string& s)
{
    GrammarMatcher m(g);
    return m.accept(s) && m.isComplete();
}

} // namespace

TEST(GrammarMatcher, acceptsAndRejectsStrings)
{
    auto g = grammar(R"(root ::= greeting (" " name)+ "!"?
greeting ::= "hi" | "hello"
name ::= [A-Z] [a-z]{1,3})");
    EXPECT_TRUE(matches(g, "hi Bob"));
    EXPECT_TRUE(matches(g, "hello Ann Eve!"));
    EXPECT_FALSE(matches(g, "hi"));
    EXPECT_FALSE(matches(g, "hi bob"));
    EXPECT_FALSE(matches(g, "hi Bobby")); // {1,3} after the capital
    EXPECT_FALSE(matches(g, "hey Bob"));
    EXPECT_FALSE(matches(g, "hi Bob!!"));
}

TEST(GrammarMatcher, prefixIsAcceptedButNotComplete)
{
    auto g = grammar(R"(root ::= "abc" [0-9]*)");
    GrammarMatcher m(g);
    EXPECT_TRUE(m.accept("ab"));
    EXPECT_FALSE(m.isComplete());
    EXPECT_FALSE(m.accept("x")); // rejected: state unchanged
    EXPECT_TRUE(m.accept("c"));
    EXPECT_TRUE(m.isComplete());
    EXPECT_TRUE(m.accept("123"));
    EXPECT_TRUE(m.isComplete());
}

TEST(GrammarMatcher, negatedClassesRangesAndAny)
{
    auto g = grammar(R"(root ::= [^a-c\n] [xa-c]? .)");
    EXPECT_TRUE(matches(g, "dz"));
    EXPECT_TRUE(matches(g, "dbz"));
    EXPECT_TRUE(matches(g,
        "\xE2\x82\xAC"
        "x\n")); // euro sign, x, newline as "any"
    EXPECT_FALSE(matches(g, "bz"));
    EXPECT_FALSE(matches(g, "\nz"));
}

TEST(GrammarMatcher, boundedRepetition)
{
    auto g = grammar(R"(root ::= "a"{2,4} "b"{3} "c"{1,})");
    EXPECT_TRUE(matches(g, "aabbbc"));
    EXPECT_TRUE(matches(g, "aaaabbbccc"));
    EXPECT_FALSE(matches(g, "abbbc"));
    EXPECT_FALSE(matches(g, "aaaaabbbc"));
    EXPECT_FALSE(matches(g, "aabbc"));
    EXPECT_FALSE(matches(g, "aabbb"));
}

TEST(GrammarMatcher, partialUtf8AcrossFeeds)
{
    auto g = grammar(R"(root ::= "x" [à-ÿ] "y")");
    GrammarMatcher m(g);
    EXPECT_TRUE(m.accept("x\xC3")); // first byte of é (U+00E9)
    EXPECT_FALSE(m.isComplete());
    EXPECT_FALSE(m.canAccept("\x41")); // not a continuation byte
    EXPECT_TRUE(m.accept("\xA9y"));
    EXPECT_TRUE(m.isComplete());
    GrammarMatcher n(g);
    // U+0100 starts with C4: no completion of C4 lies in [à-ÿ].
    EXPECT_FALSE(n.accept("x\xC4"));
    // Invalid UTF-8 is refused: overlong, lone continuation, surrogate.
    auto any = grammar("root ::= .*");
    GrammarMatcher a(any);
    EXPECT_FALSE(a.accept("\xC0\x80"));
    EXPECT_FALSE(a.accept("\x80"));
    EXPECT_FALSE(a.accept("\xED\xA0\x80"));
    EXPECT_TRUE(a.accept("\xF0\x9F\x98\x80"));
}

TEST(GrammarMatcher, nestedRecursiveRules)
{
    auto g = grammar(R"(root ::= list
list ::= "[" ( item ( "," item )* )? "]"
item ::= list | [0-9]+)");
    EXPECT_TRUE(matches(g, "[]"));
    EXPECT_TRUE(matches(g, "[1,[2,[]],33]"));
    EXPECT_FALSE(matches(g, "[1,]"));
    EXPECT_FALSE(matches(g, "[[1]"));
}
