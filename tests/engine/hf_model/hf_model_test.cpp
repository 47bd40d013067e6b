#include "engine/model_files/hf_config.h"
#include "engine/model_files/hf_model_loader.h"
#include "tiny_hf_model.h"

#include <cstring>
#include <gtest/gtest.h>

namespace fs = std::filesystem;
using namespace cw::engine;

namespace {

fs::path scratch(const std::string& name)
{
    return fs::path(CW_TEST_BINARY_DIR) / "hf_scratch" / name;
}

float f32At(const std::byte* base, std::size_t i)
{
    float v;
    std::memcpy(&v, base + 4 * i, 4);
    return v;
}

cw::Result<ModelDescription> openWith(const std::string& name, const tiny_hf::Options& options,
    std::map<std::string, std::vector<float>>* values = nullptr)
{
    const auto dir = scratch(name);
    auto written = tiny_hf::writeFolder(dir, options);
    if (values)
        *values = std::move(written);
    return openHuggingFaceModel(dir.string());
}

} // namespace

TEST(HfModel, mapsQwen3MoeOntoLlamaCppNames)
{
    tiny_hf::Options o;
    o.shape = tiny_hf::Shape::Qwen3Moe;
    o.layers = 2;
    std::map<std::string, std::vector<float>> values;
    auto model = openWith("qwen3moe", o, &values);
    ASSERT_TRUE(model) << model.error().message;
    const auto& h = model->hparams;
    EXPECT_EQ(h.architecture, Architecture::Qwen3Moe);
    EXPECT_EQ(h.numExperts, 4);
    EXPECT_EQ(h.numExpertsPerToken, 2);
    EXPECT_EQ(h.headDim, 16);
    EXPECT_EQ(h.ropeDim, 16);
    EXPECT_DOUBLE_EQ(h.ropeTheta, 1e6);
    EXPECT_TRUE(h.normTopkProb);
    EXPECT_EQ(h.sharedExpertFfnSize, 0);
    EXPECT_TRUE(model->conventions.normWeightsIncludeOne); // Qwen3 norms are used as they are
    EXPECT_FALSE(model->conventions.deltaNetValueHeadsTiled);

    const auto& q = model->get("blk.1.attn_q.weight");
    EXPECT_EQ(q.nDims, 2);
    EXPECT_EQ(q.ne[0], 64);
    EXPECT_EQ(q.ne[1], 64);
    EXPECT_NE(model->find("blk.0.ffn_norm.weight"), nullptr);
    EXPECT_EQ(model->find("blk.0.post_attention_norm.weight"), nullptr);
    const auto& down = model->get("blk.1.ffn_down_exps.weight");
    EXPECT_EQ(down.nDims, 3);
    EXPECT_EQ(down.ne[0], 32);
    EXPECT_EQ(down.ne[1], 64);
    EXPECT_EQ(down.ne[2], 4);
    ASSERT_EQ(down.slices.size(), 4u);
    const auto& expected = values.at("model.layers.1.mlp.experts.2.down_proj.weight");
    EXPECT_EQ(f32At(down.slice(2), 0), expected[0]);
    EXPECT_EQ(f32At(down.slice(2), 100), expected[100]);
    EXPECT_EQ(model->tokenizer.eosId, 62);
    EXPECT_NE(model->chatTemplate.find("<|im_start|>"), std::string::npos);
    EXPECT_NE(
        model->tokenizer.tokenizerConfigPath.find("tokenizer_config.json"), std::string::npos);
    EXPECT_NE(model->find("output.weight"), nullptr);
}

TEST(HfModel, mapsQwen35TextShapeWithPerExpertTensors)
{
    tiny_hf::Options o;
    o.shape = tiny_hf::Shape::Qwen35Text;
    o.dtype = cw::kernels::TensorType::BF16;
    auto model = openWith("qwen35text", o);
    ASSERT_TRUE(model) << model.error().message;
    const auto& h = model->hparams;
    EXPECT_EQ(h.architecture, Architecture::Qwen35Moe);
    ASSERT_EQ(h.layerKinds.size(), 4u);
    EXPECT_EQ(h.layerKinds[0], LayerKind::GatedDeltaNet);
    EXPECT_EQ(h.layerKinds[3], LayerKind::FullAttention);
    EXPECT_EQ(h.ropeDim, 4); // 16 x 0.25
    EXPECT_TRUE(h.attentionOutputGate);
    EXPECT_EQ(h.sharedExpertFfnSize, 64);
    EXPECT_FALSE(model->conventions.normWeightsIncludeOne);
    EXPECT_FALSE(model->conventions.ssmAIsNegExp);
    EXPECT_FALSE(model->conventions.deltaNetValueHeadsTiled);

    const auto& conv = model->get("blk.0.ssm_conv1d.weight");
    EXPECT_EQ(conv.type, cw::kernels::TensorType::BF16);
    EXPECT_EQ(conv.nDims, 2);
    EXPECT_EQ(conv.ne[0], 4);
    EXPECT_EQ(conv.ne[1], 2 * 32 + 64);
    EXPECT_EQ(model->get("blk.0.ssm_a").ne[0], 4);
    EXPECT_EQ(model->get("blk.0.ssm_dt.bias").ne[0], 4);
    EXPECT_EQ(model->get("blk.3.attn_q.weight").ne[1], 4 * 16 * 2);
    EXPECT_NE(model->find("blk.3.post_attention_norm.weight"), nullptr);
    EXPECT_EQ(model->get("blk.2.ffn_gate_inp_shexp.weight").ne[1], 1);
    EXPECT_EQ(model->find("blk.0.attn_q.weight"), nullptr);
    EXPECT_EQ(model->find("blk.3.attn_qkv.weight"), nullptr);
}

TEST(HfModel, mapsPublishedShapeWithFusedExpertsAndSkipsVisionAndMtp)
{
    tiny_hf::Options o;
    o.shape = tiny_hf::Shape::Qwen35Published;
    o.fusedExperts = true;
    std::map<std::string, std::vector<float>> values;
    auto model = openWith("qwen35published", o, &values);
    ASSERT_TRUE(model) << model.error().message;
    EXPECT_EQ(model->hparams.architecture, Architecture::Qwen35Moe);
    EXPECT_EQ(model->metadata.at("hf.mtp_layers_skipped"), "1");
    EXPECT_EQ(model->metadata.at("hf.ignored_tensors"), "0");
    for (const auto& [name, view] : model->tensors)
        EXPECT_EQ(name.find("visual"), std::string::npos) << name;

    // gate_up_proj [E, 2I, H]: expert e's gate is rows 0..I-1, its up rows I..2I-1.
    const auto& fused = values.at("model.language_model.layers.1.mlp.experts.gate_up_proj");
    const std::size_t H = 64, I = 32;
    const auto& gate = model->get("blk.1.ffn_gate_exps.weight");
    const auto& up = model->get("blk.1.ffn_up_exps.weight");
    EXPECT_EQ(gate.ne[0], 64);
    EXPECT_EQ(gate.ne[1], 32);
    EXPECT_EQ(gate.ne[2], 4);
    for (std::size_t e = 0; e < 4; ++e) {
        for (std::size_t i : { std::size_t(0), std::size_t(5), I * H - 1 }) {
            EXPECT_EQ(f32At(gate.slice(std::int64_t(e)), i), fused[e * 2 * I * H + i]);
            EXPECT_EQ(f32At(up.slice(std::int64_t(e)), i), fused[e * 2 * I * H + I * H + i]);
        }
    }
    const auto& down = model->get("blk.1.ffn_down_exps.weight");
    EXPECT_EQ(down.ne[0], 32);
    EXPECT_EQ(down.ne[1], 64);
    const auto& fusedDown = values.at("model.language_model.layers.1.mlp.experts.down_proj");
    EXPECT_EQ(f32At(down.slice(3), 7), fusedDown[3 * H * I + 7]);
}

TEST(HfModel, acceptsTiedEmbeddingsWithoutLmHead)
{
    tiny_hf::Options o;
    o.shape = tiny_hf::Shape::Qwen3Moe;
    o.layers = 1;
    o.tie = true;
    auto model = openWith("tied", o);
    ASSERT_TRUE(model) << model.error().message;
    EXPECT_TRUE(model->hparams.tieWordEmbeddings);
    EXPECT_EQ(model->find("output.weight"), nullptr);
}

TEST(HfModel, refusesUnknownArchitecture)
{
    const auto config = nlohmann::json::parse(R"({"model_type": "llama", "hidden_size": 8})");
    auto parsed = parseHfConfig(config, "/m/config.json");
    ASSERT_FALSE(parsed);
    EXPECT_NE(parsed.error().message.find("unsupported architecture"), std::string::npos);
    EXPECT_NE(parsed.error().message.find("/m/config.json"), std::string::npos);
}

TEST(HfModel, refusesInconsistentHeadCounts)
{
    tiny_hf::Options o;
    auto config = tiny_hf::configJson(o);
    config["linear_num_value_heads"] = 3;
    auto parsed = parseHfConfig(config, "/m/config.json");
    ASSERT_FALSE(parsed);
    EXPECT_NE(parsed.error().message.find("linear_num_value_heads"), std::string::npos);
    config = tiny_hf::configJson(o);
    config["num_key_value_heads"] = 3;
    EXPECT_FALSE(parseHfConfig(config, "/m/config.json"));
    config = tiny_hf::configJson(o);
    config["hidden_size"] = -5;
    EXPECT_FALSE(parseHfConfig(config, "/m/config.json"));
}

TEST(HfModel, refusesTensorWhoseShapeContradictsConfig)
{
    tiny_hf::Options o;
    o.shape = tiny_hf::Shape::Qwen3Moe;
    o.layers = 1;
    const auto dir = scratch("bad_shape");
    tiny_hf::writeFolder(dir, o);
    auto config = tiny_hf::configJson(o);
    config["moe_intermediate_size"] = 48;
    std::ofstream(dir / "config.json") << config.dump();
    auto model = openHuggingFaceModel(dir.string());
    ASSERT_FALSE(model);
    EXPECT_NE(model.error().message.find("has shape [32, 64], config.json implies [48, 64]"),
        std::string::npos)
        << model.error().message;
}

TEST(HfModel, refusesMissingTensorAndMissingLmHead)
{
    tiny_hf::Options o;
    o.shape = tiny_hf::Shape::Qwen3Moe;
    o.layers = 1;
    const auto dir = scratch("missing_layer");
    tiny_hf::writeFolder(dir, o);
    auto config = tiny_hf::configJson(o);
    config["num_hidden_layers"] = 2;
    std::ofstream(dir / "config.json") << config.dump();
    auto model = openHuggingFaceModel(dir.string());
    ASSERT_FALSE(model);
    EXPECT_NE(model.error().message.find("model.layers.1.input_layernorm.weight is missing"),
        std::string::npos)
        << model.error().message;

    o.tie = true;
    tiny_hf::writeFolder(dir, o);
    config = tiny_hf::configJson(o);
    config["tie_word_embeddings"] = false;
    std::ofstream(dir / "config.json") << config.dump();
    model = openHuggingFaceModel(dir.string());
    ASSERT_FALSE(model);
    EXPECT_NE(model.error().message.find("lm_head.weight is missing"), std::string::npos);
}

// The tiny folders written by transformers 5.17 itself (tests/data/golden/models).
TEST(HfModel, opensFoldersWrittenByTransformers)
{
    const fs::path root = fs::path(CW_TEST_DATA_DIR) / "golden" / "models";
    if (!fs::exists(root))
        GTEST_SKIP() << "no golden models";
    int opened = 0;
    for (const auto& entry : fs::directory_iterator(root)) {
        if (!fs::exists(entry.path() / "config.json"))
            continue;
        auto model = openHuggingFaceModel(entry.path().string());
        ASSERT_TRUE(model) << entry.path() << ": " << model.error().message;
        EXPECT_EQ(model->metadata.at("hf.ignored_tensors"), "0") << entry.path();
        EXPECT_NE(model->find("token_embd.weight"), nullptr);
        EXPECT_FALSE(model->tokenizer.tokenizerJsonPath.empty());
        EXPECT_FALSE(model->chatTemplate.empty());
        ++opened;
    }
    EXPECT_GE(opened, 2);
}
