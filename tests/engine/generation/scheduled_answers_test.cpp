// Answers through the scheduler on the tiny golden models: greedy ids equal transformers' and
// the streamed text is the answer; a reader's cancel stops within one token; seeded sampling
// is reproducible; schema-constrained answers, several at once, parse and stream their text.
#include "engine/generation/constraint_vocabulary.h"
#include "engine/sampling/grammar_constraint.h"
#include "scheduler_fixture.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

namespace {

using cw::engine::RequestScheduler;
using cw::engine::ScheduledRequest;
using namespace cw::test;

const std::string kRef = std::string(CW_TEST_DATA_DIR) + "/golden/ref/";

const char* kSchema = R"({"type":"object","properties":{
    "present":{"type":"boolean"},
    "clause_ids":{"type":"array","items":{"enum":[1,2,3]},"maxItems":3},
    "risk":{"enum":["low","medium","high"]},
    "rationale":{"type":"string","maxLength":60}},
  "required":["present","clause_ids","risk","rationale"]})";

} // namespace

TEST(ScheduledAnswers, greedyIdsEqualTransformersAndTextIsStreamed)
{
    for (const std::string name : { "qwen3_moe_a", "qwen3_5_moe_c" }) {
        const auto m = loadGolden(name);
        std::ifstream in(kRef + name + "/meta.json");
        const auto meta = nlohmann::json::parse(in);
        const auto& g = meta["greedy"][1];
        const auto prompt = meta["prompts"][g["prompt"].get<std::size_t>()]["ids"]
                                .get<std::vector<std::int32_t>>();
        const auto expected = g["ids"].get<std::vector<std::int32_t>>();
        RequestScheduler scheduler(*m.model, *m.tokenizer);
        ScheduledRequest request;
        request.prompt = prompt;
        request.params = greedy(std::int32_t(expected.size()));
        std::string streamed;
        request.onText = [&](std::string_view piece) {
            streamed += piece;
            return true;
        };
        auto r = cw::engine::generateAndWait(scheduler, std::move(request));
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(r->ids, expected) << name;
        EXPECT_EQ(r->reason, cw::sampling::StopReason::MaxTokens);
        EXPECT_EQ(streamed, r->text);
        EXPECT_EQ(r->promptTokens, std::int64_t(prompt.size()));
    }
}

TEST(ScheduledAnswers, aReadersCancelStopsWithinOneToken)
{
    const auto m = loadGolden("qwen3_5_moe_a");
    RequestScheduler scheduler(*m.model, *m.tokenizer);
    ScheduledRequest request;
    request.prompt = { 10, 20, 30 };
    request.params.maxTokens = 50;
    request.params.seed = 3;
    int calls = 0;
    request.onText = [&](std::string_view) { return ++calls < 2; };
    auto r = cw::engine::generateAndWait(scheduler, std::move(request));
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->cancelled);
    EXPECT_EQ(calls, 2);
    EXPECT_LT(r->ids.size(), 50u);
}

TEST(ScheduledAnswers, seededSamplingIsReproducible)
{
    const auto m = loadGolden("qwen3_moe_b");
    cw::sampling::SamplingParams params;
    params.temperature = 0.8f;
    params.seed = 42;
    params.maxTokens = 10;
    const std::vector<std::int32_t> prompt { 5, 6, 7 };
    const auto a = aloneIds(m, prompt, params);
    EXPECT_EQ(a.size(), 10u);
    EXPECT_EQ(aloneIds(m, prompt, params), a);
}

class ConstrainedAnswers : public ::testing::TestWithParam<std::string> { };

TEST_P(ConstrainedAnswers, schemaConstrainedAnswersAtOnceParseAndStreamTheirText)
{
    const auto m = loadGolden(GetParam());
    auto vocabulary = cw::engine::constraintVocabulary(*m.tokenizer, *m.model);
    ASSERT_TRUE(vocabulary.ok()) << vocabulary.error().message;
    const auto prompts = contractQuestions(*m.tokenizer);
    RequestScheduler scheduler(*m.model, *m.tokenizer);
    std::vector<std::string> streamed(3);
    std::vector<AnswerFuture> answers;
    for (std::size_t i = 0; i < 3; ++i) {
        auto c = cw::sampling::GrammarConstraint::fromJsonSchema(kSchema, *vocabulary);
        ASSERT_TRUE(c.ok()) << c.error().message;
        cw::sampling::SamplingParams params;
        params.temperature = 1.0f;
        params.seed = 7 + i;
        params.maxTokens = 400;
        answers.push_back(ask(scheduler, prompts[i], params, nullptr, [&, i](ScheduledRequest& r) {
            r.constraint = std::make_unique<cw::sampling::GrammarConstraint>(std::move(*c));
            r.onText = [&streamed, i](std::string_view p) {
                streamed[i] += p;
                return true;
            };
        }));
    }
    for (std::size_t i = 0; i < 3; ++i) {
        auto r = answers[i].get();
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(r->reason, cw::sampling::StopReason::EosToken) << r->text;
        EXPECT_EQ(streamed[i], r->text);
        const auto answer = nlohmann::json::parse(r->text, nullptr, false);
        ASSERT_FALSE(answer.is_discarded()) << r->text;
        EXPECT_TRUE(answer["present"].is_boolean());
        EXPECT_TRUE(answer["clause_ids"].is_array());
        EXPECT_LE(answer["rationale"].get<std::string>().size(), 60u * 4);
    }
}

TEST_P(ConstrainedAnswers, greedyConstrainedAnswersAtOnceAreTheMaskedArgmaxOfEachRow)
{
    // Greedy under a grammar the scheduler keeps the device's pick where the grammar allows it
    // and fetches the row's logits only where it does not; the tokens must be those of masking
    // every row by hand and taking its argmax, one prompt at a time.
    const auto m = loadGolden(GetParam());
    auto vocabulary = cw::engine::constraintVocabulary(*m.tokenizer, *m.model);
    ASSERT_TRUE(vocabulary.ok()) << vocabulary.error().message;
    const auto prompts = contractQuestions(*m.tokenizer);
    constexpr std::int32_t kMaxTokens = 300;
    std::vector<std::vector<std::int32_t>> expected(3);
    for (std::size_t i = 0; i < 3; ++i) {
        auto c = cw::sampling::GrammarConstraint::fromJsonSchema(kSchema, *vocabulary);
        ASSERT_TRUE(c.ok()) << c.error().message;
        auto sequence = m.model->newSequence();
        auto logits = m.model->prefill(*sequence, prompts[i]);
        ASSERT_TRUE(logits.ok()) << logits.error().message;
        for (std::int32_t n = 0; n < kMaxTokens; ++n) {
            std::vector<float> masked = *logits;
            c->applyMask(masked);
            const std::int32_t id
                = std::int32_t(std::max_element(masked.begin(), masked.end()) - masked.begin());
            ASSERT_TRUE(c->accept(id).ok());
            expected[i].push_back(id);
            if (c->isFinished())
                break;
            const cw::engine::ForwardRequest next { sequence.get(),
                std::span<const std::int32_t>(&expected[i].back(), 1) };
            logits = m.model->step(std::span<const cw::engine::ForwardRequest>(&next, 1));
            ASSERT_TRUE(logits.ok()) << logits.error().message;
        }
    }
    RequestScheduler scheduler(*m.model, *m.tokenizer);
    std::vector<AnswerFuture> answers;
    for (std::size_t i = 0; i < 3; ++i) {
        auto c = cw::sampling::GrammarConstraint::fromJsonSchema(kSchema, *vocabulary);
        ASSERT_TRUE(c.ok()) << c.error().message;
        answers.push_back(
            ask(scheduler, prompts[i], greedy(kMaxTokens), nullptr, [&](ScheduledRequest& r) {
                r.constraint = std::make_unique<cw::sampling::GrammarConstraint>(std::move(*c));
            }));
    }
    for (std::size_t i = 0; i < 3; ++i) {
        auto r = answers[i].get();
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(r->ids, expected[i]) << "prompt " << i << ": " << r->text;
    }
}

INSTANTIATE_TEST_SUITE_P(
    TinyModels, ConstrainedAnswers, ::testing::Values("qwen3_moe_a", "qwen3_5_moe_c"));
