// Batched generation over forks of a shared prefix, on the tiny golden models: the same
// greedy tokens as each prompt alone, schema-constrained answers that parse, streaming,
// cancel, and the prefix prefilled once.
#include "engine/generation/batch_generator.h"
#include "engine/generation/constraint_vocabulary.h"
#include "engine/model_files/model_loader.h"
#include "engine/sampling/grammar_constraint.h"
#include "engine/tokenizer/tokenizer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

using cw::engine::BatchRequest;

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

std::vector<std::vector<std::int32_t>> questionPrompts(const cw::engine::Tokenizer& tokenizer)
{
    const std::string contract = "<|im_start|>user\nThis License shall be governed by the laws "
                                 "of the State. Each Contributor grants a perpetual licence.\n";
    std::vector<std::vector<std::int32_t>> prompts;
    for (const std::string q : { "Is there a governing law?", "Which party may terminate?",
             "Is the licence perpetual and irrevocable, and for which works?" })
        prompts.push_back(tokenizer.encode(contract + q + "<|im_end|>\n<|im_start|>assistant\n"));
    return prompts;
}

const char* kSchema = R"({"type":"object","properties":{
    "present":{"type":"boolean"},
    "clause_ids":{"type":"array","items":{"enum":[1,2,3]},"maxItems":3},
    "risk":{"enum":["low","medium","high"]},
    "rationale":{"type":"string","maxLength":60}},
  "required":["present","clause_ids","risk","rationale"]})";

class BatchGenerator : public ::testing::TestWithParam<std::string> { };

} // namespace

TEST_P(BatchGenerator, forkedBatchGivesTheGreedyTokensOfEachPromptAlone)
{
    auto [model, tokenizer] = load(GetParam());
    const auto prompts = questionPrompts(*tokenizer);
    cw::sampling::SamplingParams params;
    params.temperature = 0.0f;
    params.maxTokens = 24;
    std::vector<BatchRequest> requests;
    for (const auto& p : prompts)
        requests.push_back({ p, params, nullptr, {} });
    auto batch = cw::engine::generateBatch(*model, *tokenizer, requests);
    ASSERT_TRUE(batch.ok()) << batch.error().message;
    EXPECT_GT(batch->sharedPrefixTokens, 10);
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        auto alone = cw::engine::generate(*model, *tokenizer, prompts[i], params);
        ASSERT_TRUE(alone.ok());
        EXPECT_EQ(batch->results[i].ids, alone->ids) << "question " << i;
        EXPECT_EQ(batch->results[i].text, alone->text) << "question " << i;
    }
    // Two at a time: requests admitted as others finish give the same tokens.
    cw::engine::BatchOptions two;
    two.maxActive = 2;
    auto paced = cw::engine::generateBatch(*model, *tokenizer, requests, two);
    ASSERT_TRUE(paced.ok());
    for (std::size_t i = 0; i < prompts.size(); ++i)
        EXPECT_EQ(paced->results[i].ids, batch->results[i].ids);
}

TEST_P(BatchGenerator, schemaConstrainedAnswersParseAndStreamTheirText)
{
    auto [model, tokenizer] = load(GetParam());
    auto vocabulary = cw::engine::constraintVocabulary(*tokenizer, *model);
    ASSERT_TRUE(vocabulary.ok()) << vocabulary.error().message;
    const auto prompts = questionPrompts(*tokenizer);
    std::vector<cw::sampling::GrammarConstraint> constraints;
    std::vector<std::string> streamed(prompts.size());
    std::vector<BatchRequest> requests;
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        auto c = cw::sampling::GrammarConstraint::fromJsonSchema(kSchema, *vocabulary);
        ASSERT_TRUE(c.ok()) << c.error().message;
        constraints.push_back(std::move(*c));
    }
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        cw::sampling::SamplingParams params;
        params.temperature = 1.0f;
        params.seed = 7 + i;
        params.maxTokens = 400;
        requests.push_back(
            { prompts[i], params, &constraints[i], [&streamed, i](std::string_view p) {
                 streamed[i] += p;
                 return true;
             } });
    }
    std::vector<std::size_t> finishedOrder;
    cw::engine::BatchOptions options;
    options.onFinished = [&](std::size_t index, const cw::engine::GenerationResult&) {
        finishedOrder.push_back(index);
    };
    auto batch = cw::engine::generateBatch(*model, *tokenizer, requests, options);
    ASSERT_TRUE(batch.ok()) << batch.error().message;
    EXPECT_EQ(finishedOrder.size(), prompts.size());
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        const auto& r = batch->results[i];
        EXPECT_EQ(r.reason, cw::sampling::StopReason::EosToken) << r.text;
        EXPECT_EQ(streamed[i], r.text);
        const auto answer = nlohmann::json::parse(r.text, nullptr, false);
        ASSERT_FALSE(answer.is_discarded()) << r.text;
        EXPECT_TRUE(answer["present"].is_boolean());
        EXPECT_TRUE(answer["clause_ids"].is_array());
        EXPECT_LE(answer["rationale"].get<std::string>().size(), 60u * 4);
    }
}

TEST_P(BatchGenerator, sharedPrefixIsPrefilledOnce)
{
    auto [model, tokenizer] = load(GetParam());
    const auto prompts = questionPrompts(*tokenizer);
    const std::vector<const std::vector<std::int32_t>*> views { &prompts[0], &prompts[1],
        &prompts[2] };
    const std::size_t shared = cw::engine::sharedPrefixLength(views);
    cw::sampling::SamplingParams params;
    params.temperature = 0.0f;
    params.maxTokens = 2;
    std::vector<BatchRequest> requests;
    std::size_t total = 0;
    for (const auto& p : prompts) {
        requests.push_back({ p, params, nullptr, {} });
        total += p.size();
    }
    auto batch = cw::engine::generateBatch(*model, *tokenizer, requests);
    ASSERT_TRUE(batch.ok());
    EXPECT_EQ(batch->sharedPrefixTokens, std::int64_t(shared));
    EXPECT_EQ(batch->promptTokens, std::int64_t(total - 2 * shared));
    EXPECT_EQ(model->kvBlocksInUse(), 0) << "every sequence released its blocks";
}

TEST_P(BatchGenerator, cancelStopsEveryRequestWithinAStep)
{
    auto [model, tokenizer] = load(GetParam());
    const auto prompts = questionPrompts(*tokenizer);
    cw::sampling::SamplingParams params;
    params.temperature = 0.0f;
    params.maxTokens = 200;
    params.stopTokenIds = {};
    std::vector<BatchRequest> requests;
    for (const auto& p : prompts)
        requests.push_back({ p, params, nullptr, {} });
    int polls = 0;
    cw::engine::BatchOptions options;
    options.cancelled = [&] { return ++polls > 6; };
    auto batch = cw::engine::generateBatch(*model, *tokenizer, requests, options);
    ASSERT_TRUE(batch.ok());
    EXPECT_TRUE(batch->cancelled);
    EXPECT_LE(batch->steps, 6);
    for (const auto& r : batch->results) {
        EXPECT_TRUE(r.cancelled);
        EXPECT_LT(r.ids.size(), 10u);
    }
}

INSTANTIATE_TEST_SUITE_P(
    GoldenModels, BatchGenerator, ::testing::Values("qwen3_moe_a", "qwen3_5_moe_c"));

TEST(BatchGeneratorErrors, emptyPromptIsRefusedByIndex)
{
    auto [model, tokenizer] = load("qwen3_moe_a");
    std::vector<BatchRequest> requests(2);
    requests[0].prompt = { 1, 2, 3 };
    auto batch = cw::engine::generateBatch(*model, *tokenizer, requests);
    ASSERT_FALSE(batch.ok());
    EXPECT_NE(batch.error().message.find("request 1"), std::string::npos);
}

TEST(GeneratorConstraint, singleGenerationFollowsTheGrammar)
{
    auto [model, tokenizer] = load("qwen3_moe_b");
    auto vocabulary = cw::engine::constraintVocabulary(*tokenizer, *model);
    ASSERT_TRUE(vocabulary.ok());
    auto constraint = cw::sampling::GrammarConstraint::fromJsonSchema(kSchema, *vocabulary);
    ASSERT_TRUE(constraint.ok());
    cw::sampling::SamplingParams params;
    params.seed = 11;
    params.maxTokens = 400;
    const auto prompt = questionPrompts(*tokenizer)[0];
    auto r = cw::engine::generate(*model, *tokenizer, prompt, params, {}, &*constraint);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_FALSE(nlohmann::json::parse(r->text, nullptr, false).is_discarded()) << r->text;
}
