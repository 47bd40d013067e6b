// Where answers end and how soon a cancel lands, on the tiny golden models: with no token
// limit an answer ends cleanly at the configured context (not the model file's); a cancel
// mid-prefill ends the request before its prompt is through; a queued request cancels at
// once; a long prompt is prefilled between the running decodes, which keep their pace.
#include "scheduler_fixture.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

namespace {

using cw::engine::RequestScheduler;
using cw::engine::ScheduledRequest;
using namespace cw::test;

class SchedulerLimits : public ::testing::TestWithParam<std::string> { };

std::vector<std::int32_t> longPrompt(const cw::engine::Tokenizer& tokenizer, int repeats)
{
    return contractQuestions(tokenizer, repeats)[0];
}

} // namespace

TEST_P(SchedulerLimits, withoutATokenLimitTheAnswerEndsCleanlyAtTheConfiguredContext)
{
    cw::engine::ModelOptions options;
    options.contextLength = 96; // the model file says 4,096
    const auto m = loadGolden(GetParam(), options);
    ASSERT_EQ(m.model->contextLength(), 96);
    RequestScheduler scheduler(*m.model, *m.tokenizer);
    const auto prompt = contractQuestions(*m.tokenizer)[0];
    ASSERT_LT(prompt.size(), 90u);
    ScheduledRequest request;
    request.prompt = prompt;
    request.params = longGreedy(0); // 0: no limit but the context
    std::string streamed;
    request.onText = [&](std::string_view piece) {
        streamed += piece;
        return true;
    };
    auto result = cw::engine::generateAndWait(scheduler, std::move(request));
    ASSERT_TRUE(result.ok()) << result.error().message;
    EXPECT_TRUE(result->contextFull);
    EXPECT_FALSE(result->cancelled);
    EXPECT_EQ(result->reason, cw::sampling::StopReason::None);
    // Every generated token but the last was fed: the sequence holds exactly the context.
    EXPECT_EQ(std::int64_t(prompt.size() + result->ids.size() - 1), m.model->contextLength());
    EXPECT_EQ(streamed, result->text);
}

TEST_P(SchedulerLimits, cancelMidPrefillEndsTheRequestBeforeItsPromptIsThrough)
{
    const auto m = loadGolden(GetParam());
    cw::engine::SchedulerOptions options;
    options.stepTokens = 16; // many prefill steps for one prompt
    options.maxActive = 2;
    RequestScheduler scheduler(*m.model, *m.tokenizer, options);
    EXPECT_EQ(scheduler.stepTokens(), 16u);
    const auto prompt = longPrompt(*m.tokenizer, 12);
    ASSERT_GT(prompt.size(), 200u);
    std::atomic<std::uint64_t> id { 0 };
    std::atomic<std::size_t> fedWhenCancelled { 0 };
    std::atomic<int> chunksAfterCancel { 0 };
    std::uint64_t submittedId = 0;
    auto answer = ask(scheduler, prompt, greedy(8), &submittedId, [&](ScheduledRequest& r) {
        r.onPromptProgress = [&](std::size_t fed, std::size_t) {
            if (fedWhenCancelled == 0 && fed >= 48) {
                while (id == 0)
                    std::this_thread::yield(); // submit() has not returned the id yet
                fedWhenCancelled = fed;
                scheduler.cancel(id);
            } else if (fedWhenCancelled > 0) {
                ++chunksAfterCancel;
            }
            return true;
        };
    });
    id = submittedId;
    auto result = answer.get();
    ASSERT_TRUE(result.ok()) << result.error().message;
    EXPECT_TRUE(result->cancelled);
    EXPECT_TRUE(result->ids.empty());
    EXPECT_GT(fedWhenCancelled.load(), 0u);
    EXPECT_EQ(chunksAfterCancel.load(), 0) << "no prompt chunk was fed after the cancel";
    EXPECT_LT(scheduler.stats().promptTokens, std::int64_t(prompt.size()));
}

TEST_P(SchedulerLimits, aQueuedRequestCancelsAtOnce)
{
    const auto m = loadGolden(GetParam());
    cw::engine::SchedulerOptions options;
    options.maxActive = 1;
    RequestScheduler scheduler(*m.model, *m.tokenizer, options);
    const auto questions = contractQuestions(*m.tokenizer);
    std::uint64_t runningId = 0, queuedId = 0;
    auto running = ask(scheduler, questions[0], longGreedy(4000), &runningId);
    auto queued = ask(scheduler, questions[1], longGreedy(10), &queuedId);
    scheduler.cancel(queuedId);
    auto q = queued.get(); // before the running one ends: it was not waiting behind it
    ASSERT_TRUE(q.ok());
    EXPECT_TRUE(q->cancelled);
    EXPECT_TRUE(q->ids.empty());
    scheduler.cancel(runningId);
    auto r = running.get();
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->cancelled);
    EXPECT_LT(r->ids.size(), 4000u);
}

TEST_P(SchedulerLimits, aLongPromptIsPrefilledBetweenTheRunningDecodes)
{
    const auto m = loadGolden(GetParam());
    cw::engine::SchedulerOptions options;
    options.stepTokens = 32;
    options.maxActive = 3;
    RequestScheduler scheduler(*m.model, *m.tokenizer, options);
    std::promise<void> writing;
    std::uint64_t decodingId = 0;
    auto decoding = ask(scheduler, m.tokenizer->encode("Write a long answer."), longGreedy(4000),
        &decodingId, [&](ScheduledRequest& r) {
            r.onText = [&writing, first = true](std::string_view) mutable {
                if (first)
                    writing.set_value();
                first = false;
                return true;
            };
        });
    writing.get_future().wait();
    // A long prompt with a prefix two requests share (the shared part is cached through the
    // same budget): every step of their prefill also carries the running decode.
    const auto prompts = contractQuestions(*m.tokenizer, 10);
    // Tokens generated so far (only the decode generates until a prompt is through).
    std::vector<std::int64_t> decodedAtChunk;
    std::mutex mutex;
    std::vector<AnswerFuture> answers;
    for (int i = 0; i < 2; ++i)
        answers.push_back(
            ask(scheduler, prompts[std::size_t(i)], greedy(4), nullptr, [&](ScheduledRequest& r) {
                r.onPromptProgress = [&](std::size_t, std::size_t) {
                    std::lock_guard lock(mutex);
                    decodedAtChunk.push_back(scheduler.stats().generatedTokens);
                    return true;
                };
            }));
    for (auto& a : answers)
        ASSERT_TRUE(a.get().ok());
    scheduler.cancel(decodingId);
    ASSERT_TRUE(decoding.get().ok());
    ASSERT_GT(decodedAtChunk.size(), 8u) << "the prompts took several steps";
    // The decode produced a token in (nearly) every step that fed a chunk: chunks of the two
    // prompts may share a step, so count the distinct decode counts seen.
    std::sort(decodedAtChunk.begin(), decodedAtChunk.end());
    const auto distinct
        = std::unique(decodedAtChunk.begin(), decodedAtChunk.end()) - decodedAtChunk.begin();
    EXPECT_GE(distinct, std::ptrdiff_t(prompts[0].size() / 32) - 1);
}

INSTANTIATE_TEST_SUITE_P(
    TinyModels, SchedulerLimits, ::testing::Values("qwen3_moe_a", "qwen3_5_moe_c"));
