// Sequences, batching, forking and errors of the CPU runtime, on the tiny golden models.
#include "engine/model_files/model_loader.h"
#include "engine/runtime/model.h"
#include "engine/runtime/precision.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <limits>
#include <numeric>

using cw::engine::ForwardRequest;
using cw::engine::Model;
using cw::engine::ModelDescription;
using cw::engine::ModelOptions;

namespace {

const std::string kModels = std::string(CW_TEST_DATA_DIR) + "/golden/models/";

ModelDescription describe(const std::string& name)
{
    auto d = cw::engine::openModel(kModels + name);
    EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
    return std::move(*d);
}

std::unique_ptr<Model> load(const std::string& name, ModelOptions options = {})
{
    options.threads = 2;
    auto m = Model::create(describe(name), options);
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
    return std::move(*m);
}

std::vector<std::int32_t> tokens(std::int32_t seed, std::size_t n)
{
    std::vector<std::int32_t> t(n);
    for (std::size_t i = 0; i < n; ++i)
        t[i] = std::int32_t((seed * 131 + std::int32_t(i) * 17) % 600);
    return t;
}

float maxDiff(const std::vector<float>& a, const std::vector<float>& b, std::size_t offsetB = 0)
{
    float worst = 0.0f;
    for (std::size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::fabs(a[i] - b[offsetB + i]));
    return worst;
}

class Runtime : public ::testing::TestWithParam<std::string> { };

} // namespace

TEST_P(Runtime, batchOfSequencesEqualsEachAlone)
{
    auto model = load(GetParam());
    const auto a = tokens(1, 20), b = tokens(2, 7), c = tokens(3, 33);
    std::vector<std::vector<float>> alone;
    for (const auto* t : { &a, &b, &c }) {
        auto s = model->newSequence();
        auto l = model->prefill(*s, *t, false);
        ASSERT_TRUE(l.ok());
        alone.push_back(*l);
    }
    // Two prefill chunks and a decode step mixed in one batch, twice.
    auto sa = model->newSequence(), sb = model->newSequence(), sc = model->newSequence();
    const std::span<const std::int32_t> A(a), B(b), C(c);
    std::vector<ForwardRequest> first { { sa.get(), A.first(12), false },
        { sb.get(), B.first(1), false }, { sc.get(), C.first(30), false } };
    ASSERT_TRUE(model->step(first).ok());
    std::vector<ForwardRequest> second { { sa.get(), A.subspan(12), false },
        { sb.get(), B.subspan(1), false }, { sc.get(), C.subspan(30), false } };
    auto l = model->step(second);
    ASSERT_TRUE(l.ok()) << l.error().message;
    const std::size_t V = std::size_t(model->vocabSize());
    ASSERT_EQ(l->size(), 3 * V);
    for (std::size_t i = 0; i < 3; ++i)
        EXPECT_LT(maxDiff(alone[i], *l, i * V), 1e-4f) << "sequence " << i;
}

TEST_P(Runtime, forkedSequencesShareThePrefixAndMatchFreshOnes)
{
    ModelOptions options;
    options.kvBlockTokens = 8;
    auto model = load(GetParam(), options);
    const auto prefix = tokens(4, 21); // ends inside a block: the fork must copy on write
    const auto q1 = tokens(5, 6), q2 = tokens(6, 9);
    auto base = model->newSequence();
    ASSERT_TRUE(model->prefill(*base, prefix).ok());
    const auto blocksBefore = model->kvBlocksInUse();
    auto f1 = model->fork(*base), f2 = model->fork(*base);
    EXPECT_EQ(model->kvBlocksInUse(), blocksBefore);
    auto l1 = model->prefill(*f1, q1), l2 = model->prefill(*f2, q2);
    ASSERT_TRUE(l1.ok() && l2.ok());
    for (const auto* q : { &q1, &q2 }) {
        auto fresh = model->newSequence();
        std::vector<std::int32_t> all = prefix;
        all.insert(all.end(), q->begin(), q->end());
        auto l = model->prefill(*fresh, all);
        ASSERT_TRUE(l.ok());
        EXPECT_LT(maxDiff(*l, q == &q1 ? *l1 : *l2), 1e-4f);
    }
    // The parent is unchanged by its children: one more token gives what a fresh run gives.
    const std::vector<std::int32_t> one { 7 };
    auto lb = model->prefill(*base, one);
    auto fresh = model->newSequence();
    std::vector<std::int32_t> all = prefix;
    all.push_back(7);
    auto lf = model->prefill(*fresh, all);
    ASSERT_TRUE(lb.ok() && lf.ok());
    EXPECT_LT(maxDiff(*lb, *lf), 1e-4f);
}

INSTANTIATE_TEST_SUITE_P(
    BothArchitectures, Runtime, ::testing::Values("qwen3_moe_b", "qwen3_5_moe_a"));

TEST(RuntimeErrors, promptLongerThanTheContextIsAnError)
{
    auto d = describe("qwen3_5_moe_a");
    d.hparams.contextLength = 16;
    auto model = Model::create(std::move(d), {});
    ASSERT_TRUE(model.ok());
    auto s = (*model)->newSequence();
    auto r = (*model)->prefill(*s, tokens(1, 17));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("context"), std::string::npos) << r.error().message;
    EXPECT_TRUE((*model)->prefill(*s, tokens(1, 16)).ok());
    const std::vector<std::int32_t> one { 3 };
    EXPECT_FALSE((*model)->prefill(*s, one).ok());
}

TEST(RuntimeErrors, anUnknownPrecisionIsRefusedNamingTheChoices)
{
    ModelOptions options;
    options.gpuPrecision = "fp8";
    auto model = Model::create(describe("qwen3_moe_a"), options);
    ASSERT_FALSE(model.ok());
    EXPECT_NE(model.error().message.find("'fp8'"), std::string::npos) << model.error().message;
    EXPECT_NE(model.error().message.find("f32, tf32 or bf16"), std::string::npos);
    ModelOptions chosen;
    EXPECT_FALSE(cw::engine::applyPrecision(chosen, "f16").ok());
    ASSERT_TRUE(cw::engine::applyPrecision(chosen, "f32").ok());
    EXPECT_EQ(chosen.gpuPrecision, "f32");
    EXPECT_FALSE(chosen.integerProducts); // the reference: float activations on the CPU too
    ASSERT_TRUE(cw::engine::applyPrecision(chosen, "bf16").ok());
    EXPECT_TRUE(chosen.integerProducts);
}

TEST(RuntimeErrors, tokenOutsideTheVocabularyIsAnError)
{
    auto model = load("qwen3_moe_a");
    auto s = model->newSequence();
    const std::vector<std::int32_t> bad { 1, 640 };
    auto r = model->prefill(*s, bad);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("640"), std::string::npos);
}

TEST(RuntimeErrors, nanInTheHiddenStateNamesTheLayer)
{
    for (const std::string name : { "qwen3_moe_a", "qwen3_5_moe_a" }) {
        auto d = describe(name);
        auto& view = d.tensors.at("blk.1.attn_norm.weight");
        auto nan = std::make_shared<std::vector<float>>(
            std::size_t(view.elements()), std::numeric_limits<float>::quiet_NaN());
        view.type = cw::kernels::TensorType::F32;
        view.data = reinterpret_cast<const std::byte*>(nan->data());
        view.bytes = nan->size() * sizeof(float);
        d.storage.push_back(nan);
        auto model = Model::create(std::move(d), {});
        ASSERT_TRUE(model.ok()) << model.error().message;
        auto s = (*model)->newSequence();
        auto r = (*model)->prefill(*s, tokens(2, 5));
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.error().message.find("layer 1"), std::string::npos) << r.error().message;
    }
}

TEST(RuntimeErrors, inconsistentShapesAreRefusedAtLoad)
{
    auto d = describe("qwen3_5_moe_a");
    d.hparams.linearNumValueHeads
        = 3; // not a multiple of the key heads, and not the tensors' shape
    auto model = Model::create(std::move(d), {});
    ASSERT_FALSE(model.ok());
    EXPECT_NE(model.error().message.find("linear-attention"), std::string::npos)
        << model.error().message;
    auto d2 = describe("qwen3_moe_a");
    d2.tensors.erase("blk.0.attn_k.weight");
    auto model2 = Model::create(std::move(d2), {});
    ASSERT_FALSE(model2.ok());
    EXPECT_NE(model2.error().message.find("blk.0.attn_k.weight"), std::string::npos);
}
