// The generation loop on a tiny golden model: greedy ids equal transformers', stops, cancel.
#include "engine/generation/generator.h"
#include "engine/model_files/model_loader.h"
#include "engine/tokenizer/tokenizer.h"

#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

const std::string kGolden = std::string(CW_TEST_DATA_DIR) + "/golden";

struct Loaded {
    std::unique_ptr<cw::engine::Model> model;
    std::unique_ptr<cw::engine::Tokenizer> tokenizer;
};

Loaded load(const std::string& name)
{
    auto d = cw::engine::openModel(kGolden + "/models/" + name);
    EXPECT_TRUE(d.ok());
    auto tok = cw::engine::tokenizerFromSource(d->tokenizer);
    EXPECT_TRUE(tok.ok()) << (tok.ok() ? "" : tok.error().message);
    auto m = cw::engine::Model::create(std::move(*d), {});
    EXPECT_TRUE(m.ok());
    return { std::move(*m), std::make_unique<cw::engine::Tokenizer>(std::move(*tok)) };
}

} // namespace

TEST(Generator, greedyIdsEqualTransformersAndTextIsStreamed)
{
    for (const std::string name : { "qwen3_moe_a", "qwen3_5_moe_c" }) {
        auto [model, tokenizer] = load(name);
        std::ifstream in(kGolden + "/ref/" + name + "/meta.json");
        const auto meta = nlohmann::json::parse(in);
        const auto& g = meta["greedy"][1];
        const auto prompt = meta["prompts"][g["prompt"].get<std::size_t>()]["ids"]
                                .get<std::vector<std::int32_t>>();
        const auto expected = g["ids"].get<std::vector<std::int32_t>>();
        cw::sampling::SamplingParams params;
        params.temperature = 0.0f;
        params.maxTokens = std::int32_t(expected.size());
        std::string streamed;
        auto r
            = cw::engine::generate(*model, *tokenizer, prompt, params, [&](std::string_view piece) {
                  streamed += piece;
                  return true;
              });
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(r->ids, expected) << name;
        EXPECT_EQ(r->reason, cw::sampling::StopReason::MaxTokens);
        EXPECT_EQ(streamed, r->text);
        EXPECT_EQ(r->promptTokens, std::int64_t(prompt.size()));
    }
}

TEST(Generator, cancelStopsWithinOneToken)
{
    auto [model, tokenizer] = load("qwen3_5_moe_a");
    const std::vector<std::int32_t> prompt { 10, 20, 30 };
    cw::sampling::SamplingParams params;
    params.maxTokens = 50;
    params.seed = 3;
    int calls = 0;
    auto r = cw::engine::generate(
        *model, *tokenizer, prompt, params, [&](std::string_view) { return ++calls < 2; });
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->cancelled);
    EXPECT_LT(r->ids.size(), 50u);
}

TEST(Generator, seededSamplingIsReproducibleAndPromptTooLongIsAnError)
{
    auto [model, tokenizer] = load("qwen3_moe_b");
    const std::vector<std::int32_t> prompt { 5, 6, 7 };
    cw::sampling::SamplingParams params;
    params.temperature = 0.8f;
    params.seed = 42;
    params.maxTokens = 10;
    auto a = cw::engine::generate(*model, *tokenizer, prompt, params);
    auto b = cw::engine::generate(*model, *tokenizer, prompt, params);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->ids, b->ids);
    const std::vector<std::int32_t> huge(std::size_t(model->hparams().contextLength + 1), 5);
    EXPECT_FALSE(cw::engine::generate(*model, *tokenizer, huge, params).ok());
}
