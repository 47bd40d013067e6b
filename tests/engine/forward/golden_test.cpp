// Golden tests: the CPU forward pass against float32 logits that transformers 5.17 computed
// from the same bf16 weights (tests/golden/make_golden.py), for every tiny model shape of
// both architectures, prompts of 1 to 700 tokens prefilled in chunks, and greedy decoding.
#include "engine/model_files/model_loader.h"
#include "engine/runtime/model.h"
#include "npy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>

using cw::engine::ForwardRequest;
using cw::engine::Model;
using cw::engine::ModelOptions;

// The same tests run on a GPU from tests/gpu/model (CW_GOLDEN_DEVICE "cuda:0").
#ifndef CW_GOLDEN_DEVICE
#define CW_GOLDEN_DEVICE "cpu"
#endif
#ifndef CW_GOLDEN_PRECISION
#define CW_GOLDEN_PRECISION "bf16"
#endif

namespace {

const std::string kGolden = std::string(CW_TEST_DATA_DIR) + "/golden";

nlohmann::json readMeta(const std::string& name)
{
    std::ifstream in(kGolden + "/ref/" + name + "/meta.json");
    return nlohmann::json::parse(in);
}

std::unique_ptr<Model> load(const std::string& folder, std::int64_t prefillChunk)
{
    auto description = cw::engine::openModel(kGolden + "/models/" + folder);
    EXPECT_TRUE(description.ok()) << (description.ok() ? "" : description.error().message);
    if (!description)
        return nullptr;
    ModelOptions options;
    options.threads = 2;
    options.prefillChunk = prefillChunk;
    options.device = CW_GOLDEN_DEVICE;
    options.gpuPrecision = CW_GOLDEN_PRECISION;
    options.maxSequences = 4;
    auto model = Model::create(std::move(*description), options);
    EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
    return model ? std::move(*model) : nullptr;
}

std::int32_t argmax(const float* x, std::int64_t n)
{
    return std::int32_t(std::max_element(x, x + n) - x);
}

// Logit error allowed, as a fraction of the largest |logit|: the CPU's and the GPU's f32 paths
// stay under 1e-3. Products with bf16 operands round every operand to 8 significant bits, and
// these tiny models amplify that: the GPU's bf16 prefill is held to 1.25 times the error of
// transformers' own bf16 computation on the same model and prompts (bf16_reference.json, see
// tests/golden/README.md), and never looser than 2e-2.
double logitTolerance(const nlohmann::json& meta)
{
    const bool bf16Gpu
        = std::string(CW_GOLDEN_DEVICE) != "cpu" && std::string(CW_GOLDEN_PRECISION) == "bf16";
    double fraction = 1e-3;
    if (bf16Gpu) {
        std::ifstream in(kGolden + "/bf16_reference.json");
        const nlohmann::json reference = nlohmann::json::parse(in);
        const std::string name = meta["name"];
        EXPECT_TRUE(reference.contains(name)) << "bf16_reference.json has no figure for " << name;
        fraction = std::max(
            2e-2, 1.25 * reference.value(name, nlohmann::json::object()).value("bf16", 0.0));
    }
    return fraction * double(meta["max_abs_logit"]);
}

void checkLogits(Model& model, const nlohmann::json& meta, const std::string& refName)
{
    const double tolerance = logitTolerance(meta);
    const std::int64_t vocab = model.vocabSize();
    for (const auto& prompt : meta["prompts"]) {
        const std::vector<std::int32_t> ids = prompt["ids"].get<std::vector<std::int32_t>>();
        const std::vector<std::int64_t> positions
            = prompt["positions"].get<std::vector<std::int64_t>>();
        auto ref = cw::test::readNpy(
            kGolden + "/ref/" + refName + "/" + prompt["logits"].get<std::string>());
        ASSERT_TRUE(ref.has_value());
        ASSERT_EQ(ref->shape.size(), 2u);
        ASSERT_EQ(ref->shape[1], vocab);
        auto sequence = model.newSequence();
        auto logits = model.prefill(*sequence, ids, true);
        ASSERT_TRUE(logits.ok()) << logits.error().message;
        ASSERT_EQ(std::int64_t(logits->size()), std::int64_t(ids.size()) * vocab);
        double worst = 0.0;
        std::int64_t worstPos = -1;
        for (std::size_t r = 0; r < positions.size(); ++r) {
            const float* mine = logits->data() + positions[r] * vocab;
            const float* theirs = ref->data.data() + std::int64_t(r) * vocab;
            for (std::int64_t v = 0; v < vocab; ++v) {
                const double err = std::fabs(double(mine[v]) - double(theirs[v]));
                if (err > worst) {
                    worst = err;
                    worstPos = positions[r];
                }
            }
        }
        std::printf("%s: %zu tokens, max |error| %.3g (tolerance %.3g)\n", refName.c_str(),
            ids.size(), worst, tolerance);
        EXPECT_LE(worst, tolerance) << refName << ": prompt of " << ids.size()
                                    << " tokens, worst error at position " << worstPos;
    }
}

void checkGreedy(Model& model, const nlohmann::json& meta)
{
    const double tolerance = logitTolerance(meta);
    for (const auto& g : meta["greedy"]) {
        const auto prompt = meta["prompts"][g["prompt"].get<std::size_t>()]["ids"]
                                .get<std::vector<std::int32_t>>();
        const auto expected = g["ids"].get<std::vector<std::int32_t>>();
        const auto margins = g["margins"].get<std::vector<double>>();
        auto sequence = model.newSequence();
        auto logits = model.prefill(*sequence, prompt, false);
        ASSERT_TRUE(logits.ok()) << logits.error().message;
        std::size_t matched = 0;
        for (std::size_t i = 0; i < expected.size(); ++i) {
            const std::int32_t next = argmax(logits->data(), model.vocabSize());
            if (next != expected[i]) {
                // Only a near tie in the reference (closer than the logit tolerance) may flip.
                EXPECT_LT(margins[i], 2 * tolerance)
                    << "greedy token " << i << ": " << next << " vs " << expected[i];
                break;
            }
            ++matched;
            const std::int32_t token = next;
            const ForwardRequest request { sequence.get(), std::span<const std::int32_t>(&token, 1),
                false };
            logits = model.step(std::span<const ForwardRequest>(&request, 1));
            ASSERT_TRUE(logits.ok()) << logits.error().message;
        }
        std::printf("greedy: %zu of %zu tokens identical\n", matched, expected.size());
    }
}

class GoldenModel : public ::testing::TestWithParam<std::string> { };

} // namespace

TEST_P(GoldenModel, logitsMatchTransformers)
{
    const std::string name = GetParam();
    const bool published = name.ends_with("_published");
    const std::string refName = published ? name.substr(0, name.size() - 10) : name;
    const auto meta = readMeta(refName);
    auto model = load(name, 100); // 100-token chunks: the 130- and 700-token prompts span several
    ASSERT_TRUE(model);
    checkLogits(*model, meta, refName);
}

TEST_P(GoldenModel, greedyDecodingMatchesTransformers)
{
    const std::string name = GetParam();
    if (name.ends_with("_published"))
        GTEST_SKIP() << "same weights as the text-only folder";
    const auto meta = readMeta(name);
    auto model = load(name, 256);
    ASSERT_TRUE(model);
    checkGreedy(*model, meta);
}

INSTANTIATE_TEST_SUITE_P(AllShapes, GoldenModel,
    ::testing::Values("qwen3_moe_a", "qwen3_moe_b", "qwen3_moe_c", "qwen3_5_moe_a", "qwen3_5_moe_b",
        "qwen3_5_moe_c", "qwen3_5_moe_a_published"));
