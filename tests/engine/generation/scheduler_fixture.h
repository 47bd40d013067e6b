#pragma once

// What the scheduler tests share: the tiny golden models, prompts that share a contract
// prefix, and the reference answer of a prompt run alone through a scheduler of its own.
#include "engine/generation/generate_and_wait.h"
#include "engine/generation/request_scheduler.h"
#include "engine/model_files/model_loader.h"
#include "engine/runtime/precision.h"
#include "engine/tokenizer/tokenizer.h"

#include <cstdlib>
#include <future>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cw::test {

inline const std::string kGoldenModels = std::string(CW_TEST_DATA_DIR) + "/golden/models/";

struct LoadedModel {
    std::unique_ptr<engine::Model> model;
    std::unique_ptr<engine::Tokenizer> tokenizer;
};

inline LoadedModel loadGolden(const std::string& name, engine::ModelOptions options = {})
{
    auto d = engine::openModel(kGoldenModels + name);
    EXPECT_TRUE(d.ok());
    auto tok = engine::tokenizerFromSource(d->tokenizer);
    EXPECT_TRUE(tok.ok());
    if (options.threads == 0)
        options.threads = 2;
    // CW_TEST_DEVICE=cuda:0 runs the same tests on a GPU (on the accelerator machine).
    if (const char* device = std::getenv("CW_TEST_DEVICE"); device && *device)
        options.device = device;
    // CW_TEST_PRECISION=f32 there: the answers are compared with transformers' float32 ones.
    if (const char* precision = std::getenv("CW_TEST_PRECISION"); precision && *precision) {
        auto applied = engine::applyPrecision(options, precision);
        EXPECT_TRUE(applied.ok()) << (applied.ok() ? "" : applied.error().message);
    }
    auto m = engine::Model::create(std::move(*d), options);
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
    return { std::move(*m), std::make_unique<engine::Tokenizer>(std::move(*tok)) };
}

// Questions about one contract: a shared system prompt and passage, then the question.
inline std::vector<std::vector<std::int32_t>> contractQuestions(
    const engine::Tokenizer& tokenizer, int passageRepeats = 1)
{
    std::string contract = "<|im_start|>system\nYou review contracts.<|im_end|>\n"
                           "<|im_start|>user\n";
    for (int i = 0; i < passageRepeats; ++i)
        contract += "This License shall be governed by the laws of the State. Each Contributor "
                    "grants a perpetual licence. ";
    std::vector<std::vector<std::int32_t>> out;
    for (const std::string q : { "Is there a governing law?", "Which party may terminate?",
             "Is the licence perpetual?", "Who are the parties?", "Is liability capped?" })
        out.push_back(tokenizer.encode(contract + q + "<|im_end|>\n<|im_start|>assistant\n"));
    return out;
}

inline sampling::SamplingParams greedy(int maxTokens)
{
    sampling::SamplingParams params;
    params.temperature = 0.0f;
    params.maxTokens = maxTokens;
    return params;
}

// Greedy without an early end of turn (the tiny models' <|im_end|> 600 and eos 602).
inline sampling::SamplingParams longGreedy(int maxTokens)
{
    auto params = greedy(maxTokens);
    params.logitBias = { { 600, -100.0f }, { 602, -100.0f } };
    return params;
}

using AnswerFuture = std::future<Result<engine::GenerationResult>>;

// Submits and returns a future of the result; `configure` may add callbacks.
inline AnswerFuture ask(engine::RequestScheduler& scheduler, std::vector<std::int32_t> prompt,
    sampling::SamplingParams params, std::uint64_t* id = nullptr,
    const std::function<void(engine::ScheduledRequest&)>& configure = {})
{
    auto promise = std::make_shared<std::promise<Result<engine::GenerationResult>>>();
    auto future = promise->get_future();
    engine::ScheduledRequest r;
    r.prompt = std::move(prompt);
    r.params = params;
    if (configure)
        configure(r);
    r.onFinished = [promise](Result<engine::GenerationResult> result) {
        promise->set_value(std::move(result));
    };
    auto submitted = scheduler.submit(std::move(r));
    EXPECT_EQ(submitted.refusal, engine::RequestScheduler::Refusal::None) << submitted.message;
    if (id)
        *id = submitted.id;
    return future;
}

// The answer of a prompt alone: a scheduler of one request and no prefix cache.
inline std::vector<std::int32_t> aloneIds(const LoadedModel& m,
    const std::vector<std::int32_t>& prompt, const sampling::SamplingParams& params,
    std::optional<bool> backendDraws = std::nullopt)
{
    engine::SchedulerOptions options;
    options.backendDraws = backendDraws;
    options.maxActive = 1;
    options.prefixCacheEntries = 0;
    engine::RequestScheduler scheduler(*m.model, *m.tokenizer, options);
    engine::ScheduledRequest r;
    r.prompt = prompt;
    r.params = params;
    auto result = engine::generateAndWait(scheduler, std::move(r));
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
    return result.ok() ? result->ids : std::vector<std::int32_t> {};
}

} // namespace cw::test
