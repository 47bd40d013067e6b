// The prefix cache: keyed by chained KV-block hashes (a prompt finds its longest cached whole
// blocks, a different earlier block is no hit, the least recently used entry goes first), and
// on the tiny golden models a cached prefix forked while other requests decode gives the
// tokens the prompt gives without any cache.
#include "engine/generation/prefix_cache.h"
#include "scheduler_fixture.h"

namespace {

using cw::engine::PrefixCache;
using cw::engine::RequestScheduler;
using cw::engine::ScheduledRequest;
using namespace cw::test;

std::vector<std::int32_t> iota(std::int32_t from, std::size_t n)
{
    std::vector<std::int32_t> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = from + std::int32_t(i);
    return v;
}

} // namespace

TEST(PrefixCacheKeys, aPromptFindsItsLongestCachedWholeBlocks)
{
    const auto m = loadGolden("qwen3_moe_a");
    PrefixCache cache(4, 2);
    const auto prompt = iota(10, 14); // three whole blocks of 4 and two tokens
    const auto hashes = cache.blockHashes(prompt);
    ASSERT_EQ(hashes.size(), 3u);
    EXPECT_EQ(cache.blockHashes(std::span(prompt).first(8)),
        std::vector<std::uint64_t>(hashes.begin(), hashes.begin() + 2))
        << "a block's hash depends on the blocks before it only";
    EXPECT_EQ(cache.longest(prompt, hashes, prompt.size()).sequence, nullptr);

    cache.insert(hashes[0], { prompt.begin(), prompt.begin() + 4 }, m.model->newSequence());
    cache.insert(hashes[1], { prompt.begin(), prompt.begin() + 8 }, m.model->newSequence());
    EXPECT_EQ(cache.longest(prompt, hashes, prompt.size()).tokens, 8u);
    EXPECT_EQ(cache.longest(prompt, hashes, 7).tokens, 4u) << "no longer than the limit";

    // Another first block: its second block's hash differs, so nothing is found.
    auto other = prompt;
    other[1] = 99;
    EXPECT_EQ(cache.longest(other, cache.blockHashes(other), other.size()).sequence, nullptr);

    // Full: the least recently used (the 4-token entry; the 8-token one was just used) goes.
    cache.longest(prompt, hashes, prompt.size());
    cache.insert(hashes[2], { prompt.begin(), prompt.begin() + 12 }, m.model->newSequence());
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_FALSE(cache.contains(hashes[0]));
    EXPECT_TRUE(cache.contains(hashes[1]));
    EXPECT_EQ(cache.longest(prompt, hashes, prompt.size()).tokens, 12u);
}

class PrefixCacheHits : public ::testing::TestWithParam<std::string> { };

TEST_P(PrefixCacheHits, aCachedPrefixForkedWhileOthersDecodeGivesTheUncachedTokens)
{
    const auto m = loadGolden(GetParam());
    const auto questions = contractQuestions(*m.tokenizer, 3);
    const auto other = m.tokenizer->encode("An unrelated request that keeps decoding.");
    const auto otherParams = longGreedy(400); // longer than the questions take; cancelled
    const auto expectedOther = aloneIds(m, other, otherParams);
    std::vector<std::vector<std::int32_t>> expected;
    for (std::size_t i = 0; i < 3; ++i)
        expected.push_back(aloneIds(m, questions[i], greedy(12)));

    cw::engine::SchedulerOptions options;
    options.maxActive = 4;
    options.minSharedPrefix = 16;
    RequestScheduler scheduler(*m.model, *m.tokenizer, options);
    std::promise<void> writing;
    std::uint64_t otherId = 0;
    auto decoding = ask(scheduler, other, otherParams, &otherId, [&](ScheduledRequest& r) {
        r.onText = [&writing, first = true](std::string_view) mutable {
            if (first)
                writing.set_value();
            first = false;
            return true;
        };
    });
    writing.get_future().wait();
    // One after another while the other request decodes: the first has nothing to share, the
    // second shares its prefix with the first (and leaves it in the cache), the third forks it.
    std::vector<cw::engine::GenerationResult> results;
    for (std::size_t i = 0; i < 3; ++i) {
        auto r = ask(scheduler, questions[i], greedy(12)).get();
        ASSERT_TRUE(r.ok()) << r.error().message;
        results.push_back(*r);
    }
    const auto stats = scheduler.stats();
    scheduler.cancel(otherId);
    const auto otherResult = decoding.get();
    ASSERT_TRUE(otherResult.ok());
    ASSERT_TRUE(otherResult->cancelled) << "it was still decoding while the questions ran";
    ASSERT_LE(otherResult->ids.size(), expectedOther.size());
    EXPECT_TRUE(std::equal(otherResult->ids.begin(), otherResult->ids.end(), expectedOther.begin()))
        << "the decode went on unchanged";
    for (std::size_t i = 0; i < 3; ++i)
        EXPECT_EQ(results[i].ids, expected[i]) << "question " << i;
    EXPECT_EQ(results[0].reusedPromptTokens, 0);
    EXPECT_EQ(results[1].reusedPromptTokens, 0);
    // The second question cached the whole blocks it shares with the first.
    const std::size_t block = std::size_t(m.model->kvBlockTokens());
    const std::size_t shared = std::size_t(
        std::mismatch(questions[0].begin(), questions[0].end(), questions[1].begin()).first
        - questions[0].begin());
    ASSERT_GT(shared, 3 * block);
    EXPECT_EQ(results[2].reusedPromptTokens, std::int64_t(shared - shared % block));
    EXPECT_GE(stats.cachedPrefixes, 1u);
    EXPECT_GE(stats.mostRequestsInOneStep, 2u) << "the questions ran beside the decode";
}

TEST_P(PrefixCacheHits, everyBlockGoesBackWhenTheSchedulerGoes)
{
    const auto m = loadGolden(GetParam());
    {
        RequestScheduler scheduler(*m.model, *m.tokenizer);
        std::vector<AnswerFuture> answers;
        for (const auto& q : contractQuestions(*m.tokenizer, 2))
            answers.push_back(ask(scheduler, q, greedy(3)));
        for (auto& a : answers)
            ASSERT_TRUE(a.get().ok());
        EXPECT_GT(m.model->kvBlocksInUse(), 0) << "the cached prefix holds its blocks";
    }
    EXPECT_EQ(m.model->kvBlocksInUse(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    TinyModels, PrefixCacheHits, ::testing::Values("qwen3_moe_a", "qwen3_5_moe_c"));
