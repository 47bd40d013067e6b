// The host's token draw (kernels/cpu/ops/token_draw.h), the reference of the CUDA kernel:
// the same surviving tokens and probabilities as the sampler's chain for every cut, greedy
// and unusable rows, and +inf as the largest float.
#include "engine/sampling/sampler.h"
#include "kernels/cpu/ops/token_draw.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <map>
#include <random>

using cw::kernels::TokenDraw;
using cw::kernels::ops::drawToken;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> randomLogits(std::size_t n, std::uint32_t seed, float spread)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, spread);
    std::vector<float> x(n);
    for (float& v : x)
        v = d(rng);
    return x;
}

// How often each token comes out over a grid of N uniforms: in id order the survivors split
// [0, 1) into intervals of their probabilities, so each count is within one of p * N.
std::map<std::int32_t, double> frequencies(const std::vector<float>& x, TokenDraw draw, int n)
{
    std::map<std::int32_t, double> f;
    for (int i = 0; i < n; ++i) {
        draw.u = (float(i) + 0.5f) / float(n);
        f[drawToken(x.data(), std::int64_t(x.size()), draw)] += 1.0 / n;
    }
    return f;
}

} // namespace

TEST(TokenDraw, greedyIsTheLowestIdOfTheLargest)
{
    const std::vector<float> x { 1.0f, 3.0f, -2.0f, 3.0f };
    EXPECT_EQ(drawToken(x.data(), 4, TokenDraw {}), 1);
    const std::vector<float> withInf { 1.0f, kInf, std::nanf(""), kInf };
    EXPECT_EQ(drawToken(withInf.data(), 4, TokenDraw {}), 1);
}

TEST(TokenDraw, aRowWithoutUsableLogitsGivesMinusOne)
{
    const std::vector<float> x { -kInf, std::nanf(""), -kInf };
    EXPECT_EQ(drawToken(x.data(), 3, TokenDraw { 0.7f, 0, 1.0f, 0.0f, 0.5f }), -1);
    const std::vector<float> one { -kInf, 2.0f, std::nanf("") };
    EXPECT_EQ(drawToken(one.data(), 3, TokenDraw { 0.7f, 0, 0.5f, 0.0f, 0.99f }), 1);
}

TEST(TokenDraw, neverPicksNanOrMinusInfinity)
{
    auto x = randomLogits(300, 3, 1.0f);
    for (std::size_t i = 0; i < x.size(); i += 3)
        x[i] = i % 2 ? -kInf : std::nanf("");
    for (int i = 0; i < 200; ++i) {
        const auto id = drawToken(
            x.data(), 300, TokenDraw { 2.0f, 0, 1.0f, 0.0f, (float(i) + 0.5f) / 200.0f });
        ASSERT_GE(id, 0);
        EXPECT_NE(id % 3, 0) << "token " << id;
    }
}

TEST(TokenDraw, followsTheSamplersDistributionForEveryCut)
{
    struct Case {
        float temperature;
        int topK;
        float topP;
        float minP;
    };
    const Case cases[] { { 1.0f, 0, 1.0f, 0.0f }, { 0.7f, 0, 1.0f, 0.0f }, { 1.3f, 40, 1.0f, 0.0f },
        { 0.8f, 0, 0.9f, 0.0f }, { 1.0f, 0, 0.5f, 0.0f }, { 0.9f, 25, 0.8f, 0.0f },
        { 1.0f, 0, 1.0f, 0.05f }, { 0.6f, 60, 0.95f, 0.02f }, { 2.0f, 1, 1.0f, 0.0f } };
    const int grid = 20000;
    for (const std::size_t n : { std::size_t(97), std::size_t(1921) })
        for (const Case& c : cases) {
            const auto x = randomLogits(n, std::uint32_t(n + 7), 2.0f);
            cw::sampling::SamplingParams params;
            params.temperature = c.temperature;
            params.topK = c.topK;
            params.topP = c.topP;
            params.minP = c.minP;
            std::map<std::int32_t, double> want;
            for (const auto& candidate : cw::sampling::truncatedDistribution(x, params))
                want[candidate.id] = candidate.p;
            const auto got
                = frequencies(x, TokenDraw { c.temperature, c.topK, c.topP, c.minP, 0 }, grid);
            const std::string where = "n " + std::to_string(n) + " T "
                + std::to_string(c.temperature) + " k " + std::to_string(c.topK) + " p "
                + std::to_string(c.topP) + " min-p " + std::to_string(c.minP);
            for (const auto& [id, f] : got)
                EXPECT_TRUE(want.count(id)) << where << ": token " << id << " is not a survivor";
            for (const auto& [id, p] : want)
                EXPECT_NEAR(got.count(id) ? got.at(id) : 0.0, p, 2.0 / grid + 1e-5 * p)
                    << where << ": token " << id;
        }
}

// The shares TokenCuts gives (what backend-ops judges the device's picks by) are the ones the
// draw walks: the token drawn at u is a survivor whose share holds u, and the shares of the
// survivors tile [0, 1) in id order.
TEST(TokenDraw, eachPickHoldsItsUniformInItsShare)
{
    const auto x = randomLogits(1921, 11, 2.0f);
    const TokenDraw draws[] { { 0.9f, 0, 0.8f, 0.0f, 0 }, { 1.2f, 50, 1.0f, 0.01f, 0 } };
    for (TokenDraw draw : draws) {
        const cw::kernels::ops::TokenCuts cuts(x.data(), 1921, draw);
        double end = 0.0;
        for (std::int64_t i = 0; i < 1921; ++i)
            if (cuts.kept(i)) {
                const auto span = cuts.spanOf(i);
                EXPECT_NEAR(span.before, end, 1e-12) << "token " << i;
                EXPECT_GT(span.through, span.before) << "token " << i;
                end = span.through;
            } else {
                EXPECT_EQ(cuts.weight(i), 0.0) << "token " << i;
            }
        EXPECT_NEAR(end, 1.0, 1e-12);
        for (int k = 0; k < 100; ++k) {
            draw.u = (float(k) + 0.37f) / 100.0f;
            const auto id = drawToken(x.data(), 1921, draw);
            ASSERT_TRUE(cuts.kept(id)) << "u " << draw.u;
            const auto span = cuts.spanOf(id);
            EXPECT_GE(double(draw.u), span.before - 1e-12) << "u " << draw.u;
            EXPECT_LT(double(draw.u), span.through + 1e-12) << "u " << draw.u;
        }
    }
}
