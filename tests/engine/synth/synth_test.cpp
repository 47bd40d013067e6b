#include "engine/model_files/gguf_file.h"
#include "engine/model_files/gguf_model_loader.h"
#include "engine/model_files/model_presets.h"
#include "kernels/cpu/quant/dequantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>

namespace fs = std::filesystem;
using namespace cw::engine;
using cw::kernels::TensorType;

namespace {

fs::path scratch(const std::string& name)
{
    const fs::path dir = fs::path(CW_TEST_BINARY_DIR) / "synth_scratch";
    fs::create_directories(dir);
    return dir / name;
}

std::string bytesOf(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

TEST(ModelPresets, publishedGeometries)
{
    const auto* qwen3 = findModelPreset("qwen3-30b-a3b");
    ASSERT_NE(qwen3, nullptr);
    EXPECT_EQ(qwen3->hparams.numLayers, 48);
    EXPECT_EQ(qwen3->hparams.numHeads, 32);
    EXPECT_EQ(qwen3->hparams.numKvHeads, 4);
    EXPECT_EQ(qwen3->hparams.headDim, 128);
    EXPECT_EQ(qwen3->hparams.numExperts, 128);
    EXPECT_EQ(qwen3->hparams.expertFfnSize, 768);
    EXPECT_EQ(qwen3->hparams.vocabSize, 151936);
    const auto* qwen36 = findModelPreset("qwen3.6-35b-a3b");
    ASSERT_NE(qwen36, nullptr);
    EXPECT_EQ(qwen36->hparams.numLayers, 40);
    EXPECT_EQ(qwen36->hparams.numExperts, 256);
    EXPECT_EQ(qwen36->hparams.sharedExpertFfnSize, 512);
    EXPECT_EQ(qwen36->hparams.ropeDim, 64);
    int full = 0;
    for (auto kind : qwen36->hparams.layerKinds)
        full += kind == LayerKind::FullAttention;
    EXPECT_EQ(full, 10);
    EXPECT_EQ(findModelPreset("nope"), nullptr);
}

TEST(Synth, writesLlamaCppLayoutForQwen36Q4KM)
{
    const auto* preset = findModelPreset("tiny-qwen3.6-moe");
    ASSERT_NE(preset, nullptr);
    const auto path = scratch("tiny36.gguf");
    auto summary = synthesizeGguf(*preset, "q4_k_m", 7, path.string());
    ASSERT_TRUE(summary) << summary.error().message;
    auto file = GgufFile::open(path.string());
    ASSERT_TRUE(file) << file.error().message;
    EXPECT_EQ(file->getString("general.architecture"), "qwen35moe");
    EXPECT_EQ(file->getInt("qwen35moe.block_count"), 4);
    EXPECT_EQ(file->getInt("qwen35moe.expert_count"), 8);
    EXPECT_EQ(file->getInt("qwen35moe.ssm.time_step_rank"), 4);
    EXPECT_EQ(file->getInt("qwen35moe.full_attention_interval"), 4);
    EXPECT_EQ(file->getInt("general.file_type"), 15);
    EXPECT_EQ(file->getString("tokenizer.ggml.model"), "gpt2");
    const auto tokens = file->getStringArray("tokenizer.ggml.tokens");
    ASSERT_TRUE(tokens);
    EXPECT_EQ(tokens->size(), 1024u);
    EXPECT_EQ((*tokens)[994], "<|im_end|>");
    EXPECT_EQ(file->getInt("tokenizer.ggml.eos_token_id"), 994);

    const auto* experts = file->findTensor("blk.0.ffn_gate_exps.weight");
    ASSERT_NE(experts, nullptr);
    EXPECT_EQ(experts->type, TensorType::Q4_K);
    EXPECT_EQ(experts->ne[0], 256);
    EXPECT_EQ(experts->ne[1], 256);
    EXPECT_EQ(experts->ne[2], 8);
    EXPECT_EQ(file->findTensor("output.weight")->type, TensorType::Q6_K);
    EXPECT_EQ(file->findTensor("blk.0.ssm_a")->type, TensorType::F32);
    EXPECT_EQ(file->findTensor("blk.0.ffn_gate_inp.weight")->type, TensorType::F32);
    EXPECT_EQ(file->findTensor("blk.0.ssm_conv1d.weight")->type, TensorType::F32);
    EXPECT_EQ(file->findTensor("blk.3.attn_q.weight")->ne[1], 4 * 64 * 2);
    EXPECT_NE(file->findTensor("blk.3.post_attention_norm.weight"), nullptr);
    EXPECT_EQ(file->findTensor("blk.3.attn_qkv.weight"), nullptr);

    // The random blocks decode to finite weights of a sane size.
    std::vector<float> row(256);
    cw::kernels::quant::dequantizeRow(experts->type, experts->data, row.data(), 256);
    double sumSquares = 0;
    for (float v : row) {
        ASSERT_TRUE(std::isfinite(v));
        sumSquares += double(v) * v;
    }
    const double rms = std::sqrt(sumSquares / 256);
    EXPECT_GT(rms, 0.001);
    EXPECT_LT(rms, 0.2);
    float a;
    std::memcpy(&a, file->findTensor("blk.0.ssm_a")->data, 4);
    EXPECT_LT(a, 0.0f);
}

TEST(Synth, isReproducibleFromTheSeed)
{
    const auto* preset = findModelPreset("tiny-qwen3-moe");
    ASSERT_NE(preset, nullptr);
    ASSERT_TRUE(synthesizeGguf(*preset, "q8_0", 1, scratch("a.gguf").string()));
    ASSERT_TRUE(synthesizeGguf(*preset, "q8_0", 1, scratch("b.gguf").string()));
    ASSERT_TRUE(synthesizeGguf(*preset, "q8_0", 2, scratch("c.gguf").string()));
    const auto a = bytesOf(scratch("a.gguf"));
    EXPECT_EQ(a, bytesOf(scratch("b.gguf")));
    EXPECT_NE(a, bytesOf(scratch("c.gguf")));
    auto file = GgufFile::open(scratch("a.gguf").string());
    ASSERT_TRUE(file) << file.error().message;
    EXPECT_EQ(file->getString("general.architecture"), "qwen3moe");
    EXPECT_EQ(file->findTensor("blk.1.ffn_down_exps.weight")->type, TensorType::Q8_0);
    EXPECT_NE(file->findTensor("blk.1.ffn_norm.weight"), nullptr);
    EXPECT_EQ(file->getInt("general.file_type"), 7);
}

TEST(Synth, refusesUnknownQuantization)
{
    auto summary = synthesizeGguf(
        *findModelPreset("tiny-qwen3-moe"), "q9_z", 0, scratch("bad.gguf").string());
    ASSERT_FALSE(summary);
    EXPECT_NE(summary.error().message.find("q9_z"), std::string::npos);
}

// The files synth writes open with the engine's own GGUF loader (and so carry every key and
// tensor a llama.cpp qwen3moe / qwen35moe file has).
TEST(Synth, opensWithTheGgufModelLoader)
{
    for (const char* name : { "tiny-qwen3-moe", "tiny-qwen3.6-moe" }) {
        const auto* preset = findModelPreset(name);
        ASSERT_NE(preset, nullptr);
        const auto path = scratch(std::string(name) + "-loader.gguf");
        ASSERT_TRUE(synthesizeGguf(*preset, "q4_k_m", 3, path.string()));
        auto model = openGgufModel(path.string());
        ASSERT_TRUE(model) << name << ": " << model.error().message;
        const auto& h = model->hparams;
        const auto& expected = preset->hparams;
        EXPECT_EQ(h.architecture, expected.architecture);
        EXPECT_EQ(h.numLayers, expected.numLayers);
        EXPECT_EQ(h.hiddenSize, expected.hiddenSize);
        EXPECT_EQ(h.vocabSize, expected.vocabSize);
        EXPECT_EQ(h.numHeads, expected.numHeads);
        EXPECT_EQ(h.numKvHeads, expected.numKvHeads);
        EXPECT_EQ(h.headDim, expected.headDim);
        EXPECT_EQ(h.ropeDim, expected.ropeDim);
        EXPECT_EQ(h.numExperts, expected.numExperts);
        EXPECT_EQ(h.numExpertsPerToken, expected.numExpertsPerToken);
        EXPECT_EQ(h.expertFfnSize, expected.expertFfnSize);
        EXPECT_EQ(h.sharedExpertFfnSize, expected.sharedExpertFfnSize);
        EXPECT_EQ(h.layerKinds, expected.layerKinds);
        EXPECT_EQ(h.linearNumValueHeads, expected.linearNumValueHeads);
        EXPECT_EQ(h.linearKeyHeadDim, expected.linearKeyHeadDim);
        EXPECT_EQ(model->tokenizer.ggmlTokens.size(), std::size_t(expected.vocabSize));
        EXPECT_FALSE(model->chatTemplate.empty());
    }
}

// --router-skew: each layer's router rows are the uniform file's rows scaled by (1 + r)^-skew,
// r a rank shuffled per layer, so routing leans to a few experts per layer, each its own.
TEST(Synth, skewedRouterScalesEachExpertsRowByItsRank)
{
    const auto* preset = findModelPreset("tiny-qwen3.6-moe");
    ASSERT_NE(preset, nullptr);
    const double skew = 0.5;
    ASSERT_TRUE(synthesizeGguf(*preset, "q8_0", 4, scratch("plain.gguf").string()));
    ASSERT_TRUE(synthesizeGguf(*preset, "q8_0", 4, scratch("skewed.gguf").string(), {}, skew));
    auto plain = GgufFile::open(scratch("plain.gguf").string());
    auto skewed = GgufFile::open(scratch("skewed.gguf").string());
    ASSERT_TRUE(plain && skewed);
    const std::int64_t E = preset->hparams.numExperts;
    std::vector<std::vector<int>> ranksPerLayer;
    for (const char* name : { "blk.0.ffn_gate_inp.weight", "blk.1.ffn_gate_inp.weight" }) {
        const auto* a = plain->findTensor(name);
        const auto* b = skewed->findTensor(name);
        ASSERT_TRUE(a && b) << name;
        ASSERT_EQ(a->type, TensorType::F32);
        ASSERT_EQ(a->ne[1], E);
        const auto H = a->ne[0];
        std::vector<int> ranks;
        for (std::int64_t e = 0; e < E; ++e) {
            const auto* x = reinterpret_cast<const float*>(a->data) + e * H;
            const auto* y = reinterpret_cast<const float*>(b->data) + e * H;
            const double scale = double(y[0]) / double(x[0]);
            for (std::int64_t i = 1; i < H; ++i)
                ASSERT_NEAR(double(y[i]), double(x[i]) * scale, 1e-6 * std::abs(x[i]) + 1e-9)
                    << name << " expert " << e;
            // scale = (1 + r)^-skew gives the rank back.
            const double r = std::pow(scale, -1.0 / skew) - 1.0;
            ASSERT_NEAR(r, std::round(r), 1e-3) << name << " expert " << e;
            ranks.push_back(int(std::lround(r)));
        }
        auto sorted = ranks;
        std::sort(sorted.begin(), sorted.end());
        for (std::int64_t e = 0; e < E; ++e)
            EXPECT_EQ(sorted[std::size_t(e)], e) << name << ": every rank once";
        ranksPerLayer.push_back(ranks);
    }
    EXPECT_NE(ranksPerLayer[0], ranksPerLayer[1]) << "each layer has its own hot experts";
    // The experts' own weights are untouched.
    EXPECT_EQ(std::memcmp(plain->findTensor("blk.0.ffn_up_exps.weight")->data,
                  skewed->findTensor("blk.0.ffn_up_exps.weight")->data, 64),
        0);
    EXPECT_FALSE(synthesizeGguf(*preset, "q8_0", 4, scratch("bad.gguf").string(), {}, -1.0));
}
