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
