// The decode view trial (engine/backend/cuda/decode_view_trial.h): which view each decode batch
// size takes while it is timed, and which it keeps. Header-only, so it runs without a GPU.
#include "engine/backend/cuda/decode_view_trial.h"

#include <array>
#include <gtest/gtest.h>
#include <vector>

using cw::engine::DecodeViewTrial;
using View = DecodeViewTrial::View;

namespace {

// Per view (in place, split, the split at half the in-place rate, all on the CPU): the times
// its steps take, in turn.
using Times = std::array<std::vector<double>, DecodeViewTrial::kViews>;

// Runs the trial for `rows` until it decides; returns how many steps that took.
int decide(DecodeViewTrial& trial, int rows, const Times& times)
{
    std::array<std::size_t, DecodeViewTrial::kViews> next {};
    int steps = 0;
    while (trial.deciding(rows) && steps < 100) {
        const View view = trial.view(rows);
        const auto& t = times[std::size_t(view)];
        trial.record(rows, view, t[next[std::size_t(view)]++ % t.size()]);
        ++steps;
    }
    return steps;
}

} // namespace

TEST(DecodeViewTrial, takesTheViewsInTurnUntilEachHasItsRuns)
{
    DecodeViewTrial trial;
    EXPECT_TRUE(trial.deciding(1));
    std::vector<View> views;
    for (std::size_t i = 0; i < DecodeViewTrial::kViews * DecodeViewTrial::kRunsEach; ++i) {
        ASSERT_TRUE(trial.deciding(1));
        views.push_back(trial.view(1));
        trial.record(1, views.back(), 0.010);
    }
    EXPECT_FALSE(trial.deciding(1));
    const View order[] = { View::Split, View::HalfRateSplit, View::AllOnCpu, View::InPlace };
    for (std::size_t i = 0; i < views.size(); ++i)
        EXPECT_EQ(views[i], order[i % 4]) << "step " << i;
}

TEST(DecodeViewTrial, keepsTheFastestByTheMedianNotOneSlowStep)
{
    DecodeViewTrial inPlace;
    decide(inPlace, 1, { { { 0.009 }, { 0.012 }, { 0.010 }, { 0.011 } } });
    EXPECT_EQ(inPlace.view(1), View::InPlace);

    // Every host choice on the CPU wins (a host whose GPU reads host memory slowly).
    DecodeViewTrial allOnCpu;
    decide(allOnCpu, 1, { { { 0.009 }, { 0.008 }, { 0.0072 }, { 0.0067 } } });
    EXPECT_EQ(allOnCpu.view(1), View::AllOnCpu);

    // The GPU reads a few experts in place slower than the probe: the split planned for half
    // the rate wins.
    DecodeViewTrial halfRate;
    decide(halfRate, 1, { { { 0.009 }, { 0.0075 }, { 0.0068 }, { 0.0072 } } });
    EXPECT_EQ(halfRate.view(1), View::HalfRateSplit);

    // The split's first graph launch is slow; its median is still the fastest.
    DecodeViewTrial split;
    decide(split, 1, { { { 0.009 }, { 0.050, 0.006, 0.006 }, { 0.0065 }, { 0.007 } } });
    EXPECT_EQ(split.view(1), View::Split);
}

TEST(DecodeViewTrial, stopsTimingAClearlySlowerViewAfterTwoStepsEach)
{
    // In place at 1.6 times the split's time: dropped after its two steps, the other three
    // timed to the end.
    DecodeViewTrial trial;
    const Times times { { { 0.0096 }, { 0.006 }, { 0.0065 }, { 0.0062 } } };
    std::array<int, DecodeViewTrial::kViews> taken {};
    std::array<std::size_t, DecodeViewTrial::kViews> next {};
    while (trial.deciding(1)) {
        const View view = trial.view(1);
        ++taken[std::size_t(view)];
        trial.record(1, view, times[std::size_t(view)][next[std::size_t(view)]++ % 1]);
        ASSERT_LT(taken[std::size_t(view)], 100);
    }
    EXPECT_EQ(taken[View::InPlace], int(DecodeViewTrial::kRunsBeforeDropping));
    EXPECT_EQ(taken[View::Split], int(DecodeViewTrial::kRunsEach));
    EXPECT_EQ(taken[View::HalfRateSplit], int(DecodeViewTrial::kRunsEach));
    EXPECT_EQ(taken[View::AllOnCpu], int(DecodeViewTrial::kRunsEach));
    EXPECT_EQ(trial.view(1), View::Split);

    // Within the factor (in place 20 % over at first): timed to the end, and can still win by
    // the median.
    DecodeViewTrial close;
    decide(close, 2,
        { { { 0.0072, 0.0072, 0.0055, 0.0055, 0.0055, 0.0055, 0.0055 }, { 0.006 }, { 0.0065 },
            { 0.0062 } } });
    EXPECT_EQ(close.view(2), View::InPlace);
}

TEST(DecodeViewTrial, eachBatchSizeIsTimedOnItsOwn)
{
    DecodeViewTrial trial;
    decide(trial, 1, { { { 0.009 }, { 0.006 }, { 0.0065 }, { 0.007 } } });
    EXPECT_FALSE(trial.deciding(1));
    EXPECT_TRUE(trial.deciding(8));
    decide(trial, 8, { { { 0.020 }, { 0.030 }, { 0.028 }, { 0.025 } } });
    EXPECT_EQ(trial.view(1), View::Split);
    EXPECT_EQ(trial.view(8), View::InPlace);
}

TEST(DecodeViewTrial, aDecidedSizeIgnoresLaterTimesAndResetTimesItAgain)
{
    DecodeViewTrial trial;
    decide(trial, 4, { { { 0.009 }, { 0.006 }, { 0.0065 }, { 0.008 } } });
    ASSERT_EQ(trial.view(4), View::Split);
    for (int i = 0; i < 10; ++i)
        trial.record(4, View::Split, 1.0); // a slow step after the choice does not reopen it
    EXPECT_FALSE(trial.deciding(4));
    EXPECT_EQ(trial.view(4), View::Split);
    trial.reset(); // the cache's experts moved
    EXPECT_TRUE(trial.deciding(4));
    decide(trial, 4, { { { 0.009 }, { 0.012 }, { 0.011 }, { 0.010 } } });
    EXPECT_EQ(trial.view(4), View::InPlace);
}

TEST(DecodeViewTrial, describesTheChoiceOfEachDecidedSizeWithItsMedians)
{
    DecodeViewTrial trial;
    EXPECT_EQ(trial.describe(), "");
    decide(trial, 1, { { { 0.009 }, { 0.0075 }, { 0.0068 }, { 0.0072 } } });
    trial.record(8, View::Split, 0.02); // still being timed: not described
    EXPECT_EQ(trial.describe(),
        "decode view at 1 row: the split at half the in-place rate (medians in ms: in place "
        "9.00, split 7.50, half-rate split 6.80, all on the CPU 7.20)");
}
