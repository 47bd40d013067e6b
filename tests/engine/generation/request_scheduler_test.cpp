// Continuous batching on the tiny golden models: requests submitted from several threads at
// different times give the greedy tokens of each prompt alone, shared prefixes are prefilled
// once into roots that later prompts fork, a cancel ends a request within a step, the queue
// limit refuses, and requests still running when the scheduler goes hear that they were
// cancelled.
#include "engine/generation/request_scheduler.h"
#include "engine/model_files/model_loader.h"
#include "engine/tokenizer/tokenizer.h"

#include <chrono>
#include <future>
#include <gtest/gtest.h>
#include <thread>

namespace {

using cw::engine::RequestScheduler;
using cw::engine::ScheduledRequest;

const std::string kModels = std::string(CW_TEST_DATA_DIR) + "/golden/models/";

struct Loaded {
    std::unique_ptr<cw::engine::Model> model;
    std::unique_ptr<cw::engine::Tokenizer> tokenizer;
};

Loaded load(const std::string& name)
{
    auto d = cw::engine::openModel(kModels + name);
    EXPECT_TRUE(d.ok());
    auto tok = cw::engine::tokenizerFromSource(d->tokenizer);
    EXPECT_TRUE(tok.ok());
    cw::engine::ModelOptions options;
    options.threads = 2;
    auto m = cw::engine::Model::create(std::move(*d), options);
    EXPECT_TRUE(m.ok());
    return { std::move(*m), std::make_unique<cw::engine::Tokenizer>(std::move(*tok)) };
}

std::vector<std::vector<std::int32_t>> prompts(const cw::engine::Tokenizer& tokenizer)
{
    const std::string contract = "<|im_start|>system\nYou review contracts.<|im_end|>\n"
                                 "<|im_start|>user\nThis License shall be governed by the laws "
                                 "of the State. Each Contributor grants a perpetual licence.\n";
    std::vector<std::vector<std::int32_t>> out;
    for (const std::string q : { "Is there a governing law?", "Which party may terminate?",
             "Is the licence perpetual?", "Who are the parties?", "Is liability capped?" })
        out.push_back(tokenizer.encode(contract + q + "<|im_end|>\n<|im_start|>assistant\n"));
    return out;
}

cw::sampling::SamplingParams greedy(int maxTokens)
{
    cw::sampling::SamplingParams params;
    params.temperature = 0.0f;
    params.maxTokens = maxTokens;
    return params;
}

// Submits and returns a future of its result.
std::future<cw::Result<cw::engine::GenerationResult>> ask(RequestScheduler& scheduler,
    std::vector<std::int32_t> prompt, cw::sampling::SamplingParams params,
    std::uint64_t* id = nullptr)
{
    auto promise = std::make_shared<std::promise<cw::Result<cw::engine::GenerationResult>>>();
    auto future = promise->get_future();
    ScheduledRequest r;
    r.prompt = std::move(prompt);
    r.params = params;
    r.onFinished = [promise](cw::Result<cw::engine::GenerationResult> result) {
        promise->set_value(std::move(result));
    };
    auto submitted = scheduler.submit(std::move(r));
    EXPECT_EQ(submitted.refusal, RequestScheduler::Refusal::None) << submitted.message;
    if (id)
        *id = submitted.id;
    return future;
}

class Scheduler : public ::testing::TestWithParam<std::string> { };

} // namespace

TEST_P(Scheduler, requestsArrivingAtAnyTimeGiveTheTokensOfEachPromptAlone)
{
    auto [model, tokenizer] = load(GetParam());
    const auto all = prompts(*tokenizer);
    std::vector<std::vector<std::int32_t>> expected;
    for (const auto& p : all) {
        auto alone = cw::engine::generate(*model, *tokenizer, p, greedy(16));
        ASSERT_TRUE(alone.ok());
        expected.push_back(alone->ids);
    }
    cw::engine::SchedulerOptions options;
    options.maxActive = 3; // fewer than the requests: some wait and join later
    options.minSharedPrefix = 8;
    RequestScheduler scheduler(*model, *tokenizer, options);
    std::vector<std::future<cw::Result<cw::engine::GenerationResult>>> answers(all.size());
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
    // Every prompt after the first two found the shared system prompt and contract prefilled.
    const auto stats = scheduler.stats();
    EXPECT_GT(stats.reusedPromptTokens, std::int64_t(all[0].size()));
    EXPECT_GE(stats.cachedPrefixes, 1u);
}

TEST_P(Scheduler, cancelEndsARequestWithinAStep)
{
    auto [model, tokenizer] = load(GetParam());
    RequestScheduler scheduler(*model, *tokenizer);
    auto params = greedy(3000);
    params.logitBias = { { 600, -100.0f }, { 602, -100.0f } }; // no early end of turn
    std::uint64_t id = 0;
    auto answer = ask(scheduler, prompts(*tokenizer)[0], params, &id);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    scheduler.cancel(id);
    auto result = answer.get();
    ASSERT_TRUE(result.ok());
    EXPECT_TRUE(result->cancelled);
    EXPECT_LT(result->ids.size(), 3000u);
}

TEST_P(Scheduler, fullQueueAndBadPromptsAreRefused)
{
    auto [model, tokenizer] = load(GetParam());
    cw::engine::SchedulerOptions options;
    options.maxActive = 1;
    options.maxQueued = 1;
    auto params = greedy(3000);
    params.logitBias = { { 600, -100.0f }, { 602, -100.0f } };
    std::future<cw::Result<cw::engine::GenerationResult>> first, second;
    {
        RequestScheduler scheduler(*model, *tokenizer, options);
        first = ask(scheduler, prompts(*tokenizer)[0], params);
        second = ask(scheduler, prompts(*tokenizer)[1], params);
        ScheduledRequest third;
        third.prompt = prompts(*tokenizer)[2];
        third.params = params;
        const auto refused = scheduler.submit(std::move(third));
        EXPECT_EQ(refused.refusal, RequestScheduler::Refusal::QueueFull);
        EXPECT_NE(refused.message.find("queue is full"), std::string::npos);
        ScheduledRequest empty;
        EXPECT_EQ(scheduler.submit(std::move(empty)).refusal, RequestScheduler::Refusal::Invalid);
    } // the scheduler goes while both still run or wait
    auto a = first.get();
    auto b = second.get();
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(a->cancelled);
    EXPECT_TRUE(b->cancelled);
}

INSTANTIATE_TEST_SUITE_P(TinyModels, Scheduler, ::testing::Values("qwen3_moe_a", "qwen3_5_moe_c"));
