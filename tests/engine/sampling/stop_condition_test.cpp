#include "engine/sampling/stop_condition.h"

#include <gtest/gtest.h>

using namespace cw::sampling;

TEST(StopCondition, stopStringSplitAcrossTokensIsFoundAndCut)
{
    SamplingParams p;
    p.stopStrings = { "</answer>" };
    StopCondition stop(p, { 99 });
    std::string shown;
    EXPECT_EQ(stop.add(1, "The fee is 5%"), StopReason::None);
    shown += stop.takeReleasable();
    EXPECT_EQ(stop.add(2, ".</an"), StopReason::None);
    EXPECT_EQ(stop.heldBackBytes(), 4u); // "</an" may be forming
    shown += stop.takeReleasable();
    EXPECT_EQ(shown, "The fee is 5%.");
    EXPECT_EQ(stop.add(3, "swer> trailing"), StopReason::StopString);
    shown += stop.takeReleasable();
    EXPECT_EQ(shown, "The fee is 5%.");
    EXPECT_EQ(stop.text(), "The fee is 5%.");
}

TEST(StopCondition, heldBackTextIsReleasedWhenTheStopStringDoesNotForm)
{
    SamplingParams p;
    p.stopStrings = { "STOP" };
    StopCondition stop(p, {});
    EXPECT_EQ(stop.add(1, "abST"), StopReason::None);
    EXPECT_EQ(stop.takeReleasable(), "ab");
    EXPECT_EQ(stop.add(2, "OX"), StopReason::None);
    EXPECT_EQ(stop.takeReleasable(), "STOX");
}

TEST(StopCondition, earliestOfSeveralStopStringsWins)
{
    SamplingParams p;
    p.stopStrings = { "bc", "abcd" };
    StopCondition stop(p, {});
    EXPECT_EQ(stop.add(1, "xa"), StopReason::None);
    EXPECT_EQ(stop.add(2, "bcd"), StopReason::StopString);
    EXPECT_EQ(stop.text(), "x"); // "abcd" starts at 1, before "bc" at 2
}

TEST(StopCondition, stopStringInsideOneToken)
{
    SamplingParams p;
    p.stopStrings = { "\n\n" };
    StopCondition stop(p, {});
    EXPECT_EQ(stop.add(1, "line\n\nmore"), StopReason::StopString);
    EXPECT_EQ(stop.text(), "line");
}

TEST(StopCondition, eosStopTokenAndMaxTokens)
{
    SamplingParams p;
    p.stopTokenIds = { 7 };
    p.maxTokens = 3;
    {
        StopCondition stop(p, { 99 });
        EXPECT_EQ(stop.add(99, "<eos>"), StopReason::EosToken);
        EXPECT_EQ(stop.text(), "");
    }
    {
        StopCondition stop(p, { 99 });
        EXPECT_EQ(stop.add(1, "a"), StopReason::None);
        EXPECT_EQ(stop.add(7, "x"), StopReason::StopToken);
        EXPECT_EQ(stop.text(), "a");
    }
    {
        StopCondition stop(p, { 99 });
        EXPECT_EQ(stop.add(1, "a"), StopReason::None);
        EXPECT_EQ(stop.add(1, "a"), StopReason::None);
        EXPECT_EQ(stop.add(1, "a"), StopReason::MaxTokens);
        EXPECT_EQ(stop.generatedTokens(), 3);
        EXPECT_EQ(stop.add(1, "a"), StopReason::MaxTokens); // stays stopped
        EXPECT_EQ(stop.text(), "aaa");
    }
}

TEST(StopCondition, incompleteUtf8IsHeldBack)
{
    SamplingParams p;
    StopCondition stop(p, {});
    EXPECT_EQ(stop.add(1, "caf\xC3"), StopReason::None);
    EXPECT_EQ(stop.takeReleasable(), "caf");
    EXPECT_EQ(stop.add(2, "\xA9!"), StopReason::None);
    EXPECT_EQ(stop.takeReleasable(), "\xC3\xA9!");
}
