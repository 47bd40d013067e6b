// Which routed experts the GPU keeps when the model does not fit its memory budget.
#include "engine/backend/expert_placement.h"

#include <gtest/gtest.h>

namespace cw::engine {
namespace {

ExpertPlacementRequest request(int layers, int experts, std::uint64_t bytes, std::uint64_t budget)
{
    ExpertPlacementRequest r;
    r.experts = experts;
    r.expertBytes.assign(std::size_t(layers), bytes);
    r.budgetBytes = budget;
    return r;
}

TEST(ExpertPlacement, EverythingFitsAndNothingIsOffloaded)
{
    const auto p = placeExperts(request(4, 8, 100, 3200));
    EXPECT_FALSE(p.offloads());
    EXPECT_EQ(p.gpuExperts, 32);
    EXPECT_EQ(p.hostBytes, 0u);
    EXPECT_EQ(p.describe(), "all 32 routed experts on the GPU");
}

TEST(ExpertPlacement, UnmeasuredRoutingSpreadsTheCacheEvenlyOverTheLayers)
{
    // 10 experts' room over 4 layers of 8: 3, 3, 2, 2, the lowest experts of each.
    const auto p = placeExperts(request(4, 8, 100, 1050));
    EXPECT_TRUE(p.offloads());
    EXPECT_EQ(p.gpuExperts, 10);
    EXPECT_EQ(p.gpuBytes, 1000u);
    EXPECT_EQ(p.hostBytes, 2200u);
    EXPECT_EQ(p.cachedIn(0), 3);
    EXPECT_EQ(p.cachedIn(1), 3);
    EXPECT_EQ(p.cachedIn(2), 2);
    EXPECT_EQ(p.cachedIn(3), 2);
    EXPECT_TRUE(p.onGpu[0][0] && p.onGpu[0][2] && !p.onGpu[0][3]);
}

TEST(ExpertPlacement, TheMostChosenExpertsWinAcrossLayers)
{
    auto r = request(2, 4, 100, 300);
    // Layer 0: expert 3 hot; layer 1: experts 1 and 2 hot.
    r.counts = { 1, 2, 3, 90, /* layer 1 */ 5, 80, 70, 4 };
    const auto p = placeExperts(r);
    EXPECT_EQ(p.gpuExperts, 3);
    EXPECT_TRUE(p.onGpu[0][3]);
    EXPECT_TRUE(p.onGpu[1][1]);
    EXPECT_TRUE(p.onGpu[1][2]);
    EXPECT_EQ(p.cachedIn(0), 1);
    EXPECT_EQ(p.describe(),
        "3 of 8 routed experts on the GPU (the most chosen; 0 of 2 layers whole), 0.00 GiB of "
        "experts in host memory");
}

TEST(ExpertPlacement, LayersWithoutExpertsAndCountsOfTheWrongSizeAreIgnored)
{
    auto r = request(3, 4, 100, 450);
    r.expertBytes[1] = 0; // a dense layer
    r.counts = { 1, 2, 3 }; // not layers x experts: treated as nothing measured
    const auto p = placeExperts(r);
    EXPECT_TRUE(p.onGpu[1].empty());
    EXPECT_EQ(p.totalExperts, 8);
    EXPECT_EQ(p.gpuExperts, 4);
    EXPECT_EQ(p.cachedIn(0), 2);
    EXPECT_EQ(p.cachedIn(2), 2);
}

TEST(ExpertPlacement, LargerExpertsThatNoLongerFitLeaveRoomForSmallerOnes)
{
    auto r = request(2, 2, 100, 260);
    r.expertBytes[0] = 150;
    r.counts = { 50, 40, 10, 5 };
    const auto p = placeExperts(r);
    // Layer 0's first expert (150) fits, its second no longer does; layer 1's 100 does.
    EXPECT_TRUE(p.onGpu[0][0]);
    EXPECT_FALSE(p.onGpu[0][1]);
    EXPECT_TRUE(p.onGpu[1][0]);
    EXPECT_EQ(p.gpuBytes, 250u);
}

TEST(ExpertPlacement, NoBudgetKeepsEveryExpertOnTheHost)
{
    const auto p = placeExperts(request(2, 3, 100, 0));
    EXPECT_EQ(p.gpuExperts, 0);
    EXPECT_EQ(p.hostBytes, 600u);
}

} // namespace
} // namespace cw::engine

namespace cw::engine {
namespace {

constexpr std::uint64_t kGiB = 1ull << 30;

TEST(OffloadEstimate, WholeModelWithinTheBudget)
{
    const auto e = estimateOffload(20 * kGiB, 18 * kGiB, 40, 24 * kGiB);
    EXPECT_EQ(e.fit, OffloadEstimate::Fit::Whole);
    EXPECT_EQ(e.describe(24 * kGiB), "Fits: 20.0 GiB of 24.0 GiB on the GPU, every expert there.");
}

TEST(OffloadEstimate, ExpertsOverTheBudgetGoToHostMemoryWithStaging)
{
    // 2 GiB besides the experts; two staging buffers of one layer's uncached experts:
    // c + 2 (16 - c) / 40 = 8 GiB, so 7.58 GiB of the 16 cached and 2 x 0.21 GiB of staging.
    const auto e = estimateOffload(18 * kGiB, 16 * kGiB, 40, 10 * kGiB);
    EXPECT_EQ(e.fit, OffloadEstimate::Fit::ExpertsOffloaded);
    EXPECT_NEAR(double(e.stagingBytes) / double(kGiB), 2 * (16 - 7.2 / 0.95) / 40, 1e-6);
    EXPECT_EQ(e.cachedExpertBytes + e.hostExpertBytes, 16 * kGiB);
    EXPECT_LE(e.gpuBytes, 10 * kGiB);
    EXPECT_GE(e.gpuBytes, 10 * kGiB - 64);
    EXPECT_NEAR(e.cachedShare(), 7.2 / 0.95 / 16.0, 1e-6);
    EXPECT_NE(e.describe(10 * kGiB).find("47 % of the routed experts (7.6 GiB)"), std::string::npos)
        << e.describe(10 * kGiB);
}

TEST(OffloadEstimate, TooLittleRoomEvenWithoutExperts)
{
    const auto e = estimateOffload(18 * kGiB, 16 * kGiB, 40, kGiB);
    EXPECT_EQ(e.fit, OffloadEstimate::Fit::No);
    EXPECT_EQ(e.leastBytes, 2 * kGiB);
    EXPECT_EQ(e.describe(kGiB),
        "Does not fit: even with every routed expert in host memory the GPU needs 2.0 GiB, the "
        "budget is 1.0 GiB.");
    // Without staging room the cache still takes what is left.
    const auto tight = estimateOffload(18 * kGiB, 16 * kGiB, 40, 2 * kGiB + kGiB / 2);
    EXPECT_EQ(tight.fit, OffloadEstimate::Fit::ExpertsOffloaded);
    EXPECT_EQ(tight.stagingBytes, 0u);
    EXPECT_EQ(tight.cachedExpertBytes, kGiB / 2);
}

} // namespace
} // namespace cw::engine
