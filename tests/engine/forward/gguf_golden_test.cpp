// The golden models converted to GGUF with `convert` (convertHfToGguf, llama.cpp's layout and
// weight transforms: tiled DeltaNet value heads, +1 baked into norms, ssm_a = -exp(A_log)):
// bf16 files must give the transformers logits within the same tolerance as the HF folders,
// so every convention is honoured; Q8_0 files are checked for top-1 agreement.
#include "engine/model_files/hf_gguf_converter.h"
#include "engine/model_files/model_loader.h"
#include "engine/runtime/model.h"
#include "npy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

const std::string kGolden = std::string(CW_TEST_DATA_DIR) + "/golden";

struct Comparison {
    double worst = 0.0;
    int agree = 0;
    int total = 0;
};

std::string referenceOf(const std::string& name)
{
    const std::string suffix = "_published";
    return name.ends_with(suffix) ? name.substr(0, name.size() - suffix.size()) : name;
}

Comparison compare(const std::string& name, const std::string& mix)
{
    Comparison c;
    const std::string refName = referenceOf(name);
    const auto out = std::filesystem::path(CW_TEST_BINARY_DIR) / (name + "." + mix + ".gguf");
    auto converted = cw::engine::convertHfToGguf(kGolden + "/models/" + name, out.string(), mix);
    EXPECT_TRUE(converted.ok()) << (converted.ok() ? "" : converted.error().message);
    if (!converted)
        return c;
    auto d = cw::engine::openModel(out.string());
    EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
    if (!d)
        return c;
    auto model = cw::engine::Model::create(std::move(*d), {});
    EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
    if (!model)
        return c;
    std::ifstream in(kGolden + "/ref/" + refName + "/meta.json");
    const auto meta = nlohmann::json::parse(in);
    const std::int64_t V = (*model)->vocabSize();
    for (const auto& prompt : meta["prompts"]) {
        const auto ids = prompt["ids"].get<std::vector<std::int32_t>>();
        const auto positions = prompt["positions"].get<std::vector<std::int64_t>>();
        auto ref = cw::test::readNpy(
            kGolden + "/ref/" + refName + "/" + prompt["logits"].get<std::string>());
        EXPECT_TRUE(ref.has_value());
        auto s = (*model)->newSequence();
        auto logits = (*model)->prefill(*s, ids, true);
        EXPECT_TRUE(logits.ok()) << (logits.ok() ? "" : logits.error().message);
        if (!ref || !logits)
            return c;
        for (std::size_t r = 0; r < positions.size(); ++r) {
            const float* mine = logits->data() + positions[r] * V;
            const float* theirs = ref->data.data() + std::int64_t(r) * V;
            for (std::int64_t v = 0; v < V; ++v)
                c.worst = std::max(c.worst, double(std::fabs(mine[v] - theirs[v])));
            c.agree += (std::max_element(mine, mine + V) - mine)
                == (std::max_element(theirs, theirs + V) - theirs);
            ++c.total;
        }
    }
    std::filesystem::remove(out);
    return c;
}

double maxAbsLogit(const std::string& name)
{
    std::ifstream in(kGolden + "/ref/" + referenceOf(name) + "/meta.json");
    return nlohmann::json::parse(in)["max_abs_logit"];
}

class ConvertedGguf : public ::testing::TestWithParam<std::string> { };

} // namespace

TEST_P(ConvertedGguf, bf16FileGivesTheTransformersLogits)
{
    const auto c = compare(GetParam(), "bf16");
    std::printf("%s bf16 GGUF: max |error| %.3g\n", GetParam().c_str(), c.worst);
    ASSERT_GT(c.total, 0);
    EXPECT_LE(c.worst, 1e-3 * maxAbsLogit(GetParam()));
}

TEST_P(ConvertedGguf, q8_0FileAgreesOnTheTopToken)
{
    const auto c = compare(GetParam(), "q8_0");
    ASSERT_GT(c.total, 0);
    std::printf("%s Q8_0 GGUF: top-1 agreement %d / %d (%.1f %%)\n", GetParam().c_str(), c.agree,
        c.total, 100.0 * c.agree / c.total);
    EXPECT_GE(c.agree, 0.8 * c.total); // see q8_0_test.cpp for why not 99 % on these tiny models
}

// The shapes a llama.cpp GGUF file can hold. Not here, with what happens today:
//  - qwen3_moe_b (norm_topk_prob false): the GGUF model renormalises the top-k weights
//    (llama.cpp's qwen3moe always does), logits differ by up to 8.5;
//  - qwen3_5_moe_b (layers full/linear/full): the file does not record the layer pattern in a
//    form the loader reads, which then looks for attn_qkv in the full-attention layer 0;
//  - qwen3_5_moe_c (key head dim 16, value head dim 32): llama.cpp has one ssm.state_size for
//    both, the loader refuses the file.
INSTANTIATE_TEST_SUITE_P(AllShapes, ConvertedGguf,
    ::testing::Values("qwen3_moe_a", "qwen3_moe_c", "qwen3_5_moe_a", "qwen3_5_moe_a_published"));
