// Continuous batching on the tiny golden models: requests submitted from several threads at
// different times, or all at once, give the greedy tokens of each prompt alone; a step mixing
// greedy (device-chosen) and sampled (host-chosen) rows gives every request its own tokens;
// a cancel ends a decoding request within a step; the queue limit refuses; requests still
// running when the scheduler goes hear that they were cancelled.
#include "kernels/cpu/ops/token_draw.h"
#include "scheduler_fixture.h"

#include <chrono>
#include <thread>

namespace {

using cw::engine::RequestScheduler;
using cw::engine::ScheduledRequest;
using namespace cw::test;

class Scheduler : public ::testing::TestWithParam<std::string> { };

} // namespace

TEST_P(Scheduler, requestsArrivingAtAnyTimeGiveTheTokensOfEachPromptAlone)
{
    const auto m = loadGolden(GetParam());
    const auto all = contractQuestions(*m.tokenizer);
    std::vector<std::vector<std::int32_t>> expected;
    for (const auto& p : all)
        expected.push_back(aloneIds(m, p, greedy(16)));
    cw::engine::SchedulerOptions options;
    options.maxActive = 3; // fewer than the requests: some wait and join later
    options.minSharedPrefix = 8;
    RequestScheduler scheduler(*m.model, *m.tokenizer, options);
    std::vector<AnswerFuture> answers(all.size());
    std::vector<std::thread> clients;
    for (std::size_t i = 0; i < all.size(); ++i)
        clients.emplace_back([&, i] {
            std::this_thread::sleep_for(std::chrono::milliseconds(3 * i));
            answers[i] = ask(scheduler, all[i], greedy(16));
        });
    for (auto& c : clients)
        c.join();
    for (std::size_t i = 0; i < all.size(); ++i) {
        auto result = answers[i].get();
        ASSERT_TRUE(result.ok()) << result.error().message;
        EXPECT_EQ(result->ids, expected[i]) << "prompt " << i;
        EXPECT_EQ(result->promptTokens, std::int64_t(all[i].size()));
    }
    // The shared system prompt and contract were cached and forked by the later prompts.
    const auto stats = scheduler.stats();
    EXPECT_GT(stats.reusedPromptTokens, std::int64_t(all[0].size()));
    EXPECT_GE(stats.cachedPrefixes, 1u);
}

TEST_P(Scheduler, manyRequestsAtOnceGiveWhatEachGivesAlone)
{
    const auto m = loadGolden(GetParam());
    auto all = contractQuestions(*m.tokenizer);
    all.push_back(m.tokenizer->encode("A prompt that shares nothing with the others."));
    std::vector<std::vector<std::int32_t>> expected;
    // No early end of turn: every request still decodes when the last one joins.
    const auto params = longGreedy(20);
    for (const auto& p : all)
        expected.push_back(aloneIds(m, p, params));
    cw::engine::SchedulerOptions options;
    options.maxActive = all.size();
    options.minSharedPrefix = 8;
    RequestScheduler scheduler(*m.model, *m.tokenizer, options);
    std::vector<AnswerFuture> answers;
    for (const auto& p : all)
        answers.push_back(ask(scheduler, p, params));
    for (std::size_t i = 0; i < all.size(); ++i) {
        auto result = answers[i].get();
        ASSERT_TRUE(result.ok()) << result.error().message;
        EXPECT_EQ(result->ids, expected[i]) << "prompt " << i;
    }
    const auto stats = scheduler.stats();
    EXPECT_GE(stats.mostRequestsInOneStep, all.size()) << "they ran in one batch";
    // Submitted together, the questions wait for one of them to prefill their shared prefix.
    std::int64_t total = 0;
    for (const auto& p : all)
        total += std::int64_t(p.size());
    EXPECT_LT(stats.promptTokens, total);
    EXPECT_EQ(stats.promptTokens + stats.reusedPromptTokens, total);
}

namespace {

// Plain greedy (the device's argmax), sampled, and greedy with a penalty (host logits): each
// step copies only the rows that need the host, whose tokens are chosen side by side on the
// scheduler's threads; with backend draws the plainly sampled rows are drawn by the backend
// instead. Every answer must still be the one it gives alone.
void mixedRequestsKeepTheirOwnTokens(const std::string& model, bool backendDraws)
{
    const auto m = loadGolden(model);
    const auto all = contractQuestions(*m.tokenizer);
    auto sampled = [](float temperature, std::uint64_t seed) {
        auto p = greedy(24);
        p.temperature = temperature;
        p.seed = seed;
        return p;
    };
    std::vector<cw::sampling::SamplingParams> params { greedy(24), sampled(0.9f, 5), greedy(24),
        sampled(0.8f, 6), sampled(1.2f, 7), sampled(0.7f, 8) };
    params[2].repetitionPenalty = 1.3f;
    params[3].topP = 0.9f;
    params[4].topK = 5;
    params[5].minP = 0.1f;
    std::vector<std::vector<std::int32_t>> expected;
    for (std::size_t i = 0; i < params.size(); ++i)
        expected.push_back(aloneIds(m, all[i % all.size()], params[i], backendDraws));
    cw::engine::SchedulerOptions options;
    options.prefixCacheEntries = 0;
    options.backendDraws = backendDraws;
    RequestScheduler scheduler(*m.model, *m.tokenizer, options);
    std::vector<AnswerFuture> answers;
    for (std::size_t i = 0; i < params.size(); ++i)
        answers.push_back(ask(scheduler, all[i % all.size()], params[i]));
    for (std::size_t i = 0; i < params.size(); ++i) {
        auto result = answers[i].get();
        ASSERT_TRUE(result.ok()) << result.error().message;
        EXPECT_EQ(result->ids, expected[i]) << "request " << i;
    }
    EXPECT_EQ(scheduler.stats().mostRequestsInOneStep, params.size());
}

} // namespace

TEST_P(Scheduler, greedyAndSampledRequestsInOneStepKeepTheirOwnTokens)
{
    mixedRequestsKeepTheirOwnTokens(GetParam(), false);
}

TEST_P(Scheduler, tokensDrawnByTheBackendStayEachRequestsOwn)
{
    mixedRequestsKeepTheirOwnTokens(GetParam(), true);
}

TEST_P(Scheduler, aBackendDrawPicksFromTheStepsOwnLogits)
{
    const auto m = loadGolden(GetParam());
    const auto prompt = contractQuestions(*m.tokenizer).front();
    auto seen = m.model->newSequence();
    auto logits = m.model->step(
        std::vector<cw::engine::ForwardRequest> { { seen.get(), prompt, false, true } });
    ASSERT_TRUE(logits.ok()) << logits.error().message;
    const std::int64_t vocab = m.model->vocabSize();
    for (const cw::kernels::TokenDraw draw :
        { cw::kernels::TokenDraw { 0.8f, 0, 1.0f, 0.0f, 0.37f },
            cw::kernels::TokenDraw { 1.5f, 7, 0.9f, 0.0f, 0.91f },
            cw::kernels::TokenDraw { 1.0f, 0, 0.5f, 0.05f, 0.02f } }) {
        auto drawn = m.model->newSequence();
        cw::engine::ForwardRequest r { drawn.get(), prompt, false, false };
        r.draw = draw;
        auto out = m.model->stepSampling(std::vector<cw::engine::ForwardRequest> { r });
        ASSERT_TRUE(out.ok()) << out.error().message;
        EXPECT_TRUE(out->logits.empty()) << "no logits cross for a drawn row";
        ASSERT_EQ(out->greedy.size(), 1u);
        EXPECT_EQ(out->greedy[0],
            cw::kernels::ops::drawToken(
                logits->data() + logits->size() - std::size_t(vocab), vocab, draw))
            << "temperature " << draw.temperature << " u " << draw.u;
    }
}

TEST_P(Scheduler, cancelEndsADecodingRequestWithinAStep)
{
    const auto m = loadGolden(GetParam());
    RequestScheduler scheduler(*m.model, *m.tokenizer);
    std::uint64_t id = 0;
    std::promise<void> writing;
    auto answer = ask(scheduler, contractQuestions(*m.tokenizer)[0], longGreedy(3000), &id,
        [&](ScheduledRequest& r) {
            r.onText = [&writing, first = true](std::string_view) mutable {
                if (first)
                    writing.set_value();
                first = false;
                return true;
            };
        });
    writing.get_future().wait();
    scheduler.cancel(id);
    auto result = answer.get();
    ASSERT_TRUE(result.ok());
    EXPECT_TRUE(result->cancelled);
    EXPECT_LT(result->ids.size(), 3000u);
}

TEST_P(Scheduler, fullQueueAndBadPromptsAreRefused)
{
    const auto m = loadGolden(GetParam());
    cw::engine::SchedulerOptions options;
    options.maxActive = 1;
    options.maxQueued = 1;
    const auto questions = contractQuestions(*m.tokenizer);
    AnswerFuture first, second;
    {
        RequestScheduler scheduler(*m.model, *m.tokenizer, options);
        first = ask(scheduler, questions[0], longGreedy(3000));
        second = ask(scheduler, questions[1], longGreedy(3000));
        ScheduledRequest third;
        third.prompt = questions[2];
        third.params = longGreedy(3000);
        const auto refused = scheduler.submit(std::move(third));
        EXPECT_EQ(refused.refusal, RequestScheduler::Refusal::QueueFull);
        EXPECT_NE(refused.message.find("queue is full"), std::string::npos);
        EXPECT_EQ(third.prompt, questions[2]) << "a refused request is left as it was";
        ScheduledRequest empty;
        EXPECT_EQ(scheduler.submit(std::move(empty)).refusal, RequestScheduler::Refusal::Invalid);
        ScheduledRequest tooLong;
        tooLong.prompt.assign(std::size_t(m.model->contextLength()), 5);
        const auto full = scheduler.submit(std::move(tooLong));
        EXPECT_EQ(full.refusal, RequestScheduler::Refusal::Invalid);
        EXPECT_NE(full.message.find("context"), std::string::npos) << full.message;
    } // the scheduler goes while both still run or wait
    auto a = first.get();
    auto b = second.get();
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(a->cancelled);
    EXPECT_TRUE(b->cancelled);
}

INSTANTIATE_TEST_SUITE_P(TinyModels, Scheduler, ::testing::Values("qwen3_moe_a", "qwen3_5_moe_c"));
