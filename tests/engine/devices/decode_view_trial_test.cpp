// The decode view trial (engine/backend/cuda/decode_view_trial.h): which view each decode batch
// size takes while it is timed, and which it keeps. Header-only, so it runs without a GPU.
#include "engine/backend/cuda/decode_view_trial.h"

#include <gtest/gtest.h>

using cw::engine::DecodeViewTrial;

namespace {

// Runs the trial for `rows` until it decides, each side's steps taking the given times in turn;
// returns how many steps that took.
int decide(DecodeViewTrial& trial, int rows, const std::vector<double>& host,
    const std::vector<double>& inPlace)
{
    std::size_t h = 0, p = 0;
    int steps = 0;
    while (trial.deciding(rows) && steps < 100) {
        const bool view = trial.hostView(rows);
        trial.record(rows, view, view ? host[h++ % host.size()] : inPlace[p++ % inPlace.size()]);
        ++steps;
    }
    return steps;
}

} // namespace

TEST(DecodeViewTrial, alternatesTheViewsUntilEachHasItsRuns)
{
    DecodeViewTrial trial;
    EXPECT_TRUE(trial.deciding(1));
    std::vector<bool> views;
    for (std::size_t i = 0; i < 2 * DecodeViewTrial::kRunsEach; ++i) {
        ASSERT_TRUE(trial.deciding(1));
        views.push_back(trial.hostView(1));
        trial.record(1, views.back(), 0.010);
    }
    EXPECT_FALSE(trial.deciding(1));
    for (std::size_t i = 0; i < views.size(); ++i)
        EXPECT_EQ(views[i], i % 2 == 0) << "step " << i;
}

TEST(DecodeViewTrial, keepsTheFasterByTheMedianNotOneSlowStep)
{
    DecodeViewTrial slowHost;
    decide(slowHost, 1, { 0.012, 0.012, 0.012 }, { 0.009, 0.009, 0.009 });
    EXPECT_FALSE(slowHost.hostView(1));

    // The host views' first graph launch is slow; their median is still the faster.
    DecodeViewTrial fastHost;
    decide(fastHost, 1, { 0.050, 0.006, 0.006 }, { 0.009, 0.009, 0.009 });
    EXPECT_TRUE(fastHost.hostView(1));
}

TEST(DecodeViewTrial, eachBatchSizeIsTimedOnItsOwn)
{
    DecodeViewTrial trial;
    decide(trial, 1, { 0.006 }, { 0.009 });
    EXPECT_FALSE(trial.deciding(1));
    EXPECT_TRUE(trial.deciding(8));
    decide(trial, 8, { 0.030 }, { 0.020 });
    EXPECT_TRUE(trial.hostView(1));
    EXPECT_FALSE(trial.hostView(8));
}

TEST(DecodeViewTrial, aDecidedSizeIgnoresLaterTimesAndResetTimesItAgain)
{
    DecodeViewTrial trial;
    decide(trial, 4, { 0.006 }, { 0.009 });
    ASSERT_TRUE(trial.hostView(4));
    for (int i = 0; i < 10; ++i)
        trial.record(4, true, 1.0); // a slow step after the choice does not reopen it
    EXPECT_FALSE(trial.deciding(4));
    EXPECT_TRUE(trial.hostView(4));
    trial.reset(); // the cache's experts moved
    EXPECT_TRUE(trial.deciding(4));
    decide(trial, 4, { 0.012 }, { 0.009 });
    EXPECT_FALSE(trial.hostView(4));
}
