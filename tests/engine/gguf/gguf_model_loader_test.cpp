#include "engine/model_files/gguf_file.h"
#include "engine/model_files/gguf_model_loader.h"
#include "kernels/cpu/quant/dequantize.h"
#include "tiny_gguf_model.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>

using namespace cw::engine;
using cw::test::TinyGgufOptions;

namespace {

std::string tempPath(const std::string& name)
{
    return (std::filesystem::temp_directory_path() / ("cw_gguf_loader_" + name + ".gguf")).string();
}

cw::Result<ModelDescription> load(const TinyGgufOptions& options, const std::string& name)
{
    const std::string path = tempPath(name);
    auto written = cw::test::writeTinyGguf(path, options);
    EXPECT_TRUE(written.ok()) << (written.ok() ? "" : written.error().message);
    auto model = openGgufModel(path);
    std::remove(path.c_str()); // the mapping stays valid after unlink
    return model;
}

std::string errorOf(const TinyGgufOptions& options, const std::string& name)
{
    auto model = load(options, name);
    EXPECT_FALSE(model.ok());
    return model.ok() ? std::string() : model.error().message;
}

} // namespace

TEST(GgufModelLoader, opensQwen3MoeWithHyperParametersTensorsAndTokenizer)
{
    TinyGgufOptions o;
    o.architecture = "qwen3moe";
    auto model = load(o, "qwen3moe");
    ASSERT_TRUE(model.ok()) << model.error().message;
    const auto& h = model->hparams;
    EXPECT_EQ(h.architecture, Architecture::Qwen3Moe);
    EXPECT_EQ(h.numLayers, 4);
    EXPECT_EQ(h.mtpLayers, 0);
    EXPECT_EQ(h.hiddenSize, 64);
    EXPECT_EQ(h.vocabSize, 128);
    EXPECT_EQ(h.numHeads, 4);
    EXPECT_EQ(h.numKvHeads, 2);
    EXPECT_EQ(h.headDim, 16);
    EXPECT_EQ(h.ropeDim, 16);
    EXPECT_EQ(h.ropeTheta, 1e6);
    EXPECT_EQ(h.numExperts, 4);
    EXPECT_EQ(h.numExpertsPerToken, 2);
    EXPECT_EQ(h.expertFfnSize, 32);
    EXPECT_EQ(h.sharedExpertFfnSize, 0);
    EXPECT_EQ(h.contextLength, 4096);
    EXPECT_FALSE(h.attentionOutputGate);
    EXPECT_FALSE(h.tieWordEmbeddings);
    ASSERT_EQ(h.layerKinds.size(), 4u);
    for (auto kind : h.layerKinds)
        EXPECT_EQ(kind, LayerKind::FullAttention);
    EXPECT_TRUE(model->conventions.normWeightsIncludeOne);
    EXPECT_TRUE(model->conventions.ssmAIsNegExp);
    EXPECT_TRUE(model->conventions.deltaNetValueHeadsTiled);
    EXPECT_EQ(model->name, "tiny-qwen3moe");
    // 3 + 4 layers x (attn_norm, q, k, v, o, q_norm, k_norm, ffn_norm, router, gate, up, down)
    EXPECT_EQ(model->tensors.size(), 3u + 4u * 12u);
    const auto& q = model->get("blk.2.attn_q.weight");
    EXPECT_EQ(q.nDims, 2);
    EXPECT_EQ(q.ne[0], 64);
    EXPECT_EQ(q.ne[1], 64);
    const auto& down = model->get("blk.0.ffn_down_exps.weight");
    EXPECT_EQ(down.ne[0], 32);
    EXPECT_EQ(down.ne[2], 4);
    EXPECT_EQ(down.slice(1), down.data + down.bytes / 4);
    const auto& t = model->tokenizer;
    ASSERT_EQ(t.ggmlTokens.size(), 128u);
    EXPECT_EQ(t.ggmlTokens[121], "<|im_start|>");
    EXPECT_EQ(t.ggmlMerges.size(), 2u);
    EXPECT_EQ(t.ggmlTokenTypes.size(), 128u);
    EXPECT_EQ(t.ggmlPre, "qwen2");
    EXPECT_EQ(t.eosId, 122);
    EXPECT_EQ(t.padId, 120);
    EXPECT_EQ(t.bosId, 120);
    EXPECT_NE(model->chatTemplate.find("<|im_start|>"), std::string::npos);
    EXPECT_EQ(model->metadata.at("format"), "gguf");
    EXPECT_FALSE(model->storage.empty());
    // The view reads the file's bytes: an F32 norm is readable.
    const auto& norm = model->get("output_norm.weight");
    float first;
    std::memcpy(&first, norm.data, 4);
    EXPECT_TRUE(std::isfinite(first));
}

TEST(GgufModelLoader, opensQwen35MoeWithLayerKindsSharedExpertAndMtpBlock)
{
    TinyGgufOptions o;
    o.mix = "q8_0";
    auto model = load(o, "qwen35moe");
    ASSERT_TRUE(model.ok()) << model.error().message;
    const auto& h = model->hparams;
    EXPECT_EQ(h.architecture, Architecture::Qwen35Moe);
    EXPECT_EQ(h.numLayers, 4);
    EXPECT_EQ(h.mtpLayers, 1);
    EXPECT_TRUE(h.attentionOutputGate);
    EXPECT_EQ(h.ropeDim, 4);
    EXPECT_EQ(h.sharedExpertFfnSize, 32);
    EXPECT_EQ(h.linearNumKeyHeads, 2);
    EXPECT_EQ(h.linearNumValueHeads, 4);
    EXPECT_EQ(h.linearKeyHeadDim, 16);
    EXPECT_EQ(h.linearValueHeadDim, 16);
    EXPECT_EQ(h.linearConvKernel, 4);
    const std::vector<LayerKind> kinds = { LayerKind::GatedDeltaNet, LayerKind::GatedDeltaNet,
        LayerKind::GatedDeltaNet, LayerKind::FullAttention };
    EXPECT_EQ(h.layerKinds, kinds);
    EXPECT_EQ(model->get("blk.0.attn_qkv.weight").type, TensorType::Q8_0);
    EXPECT_EQ(model->get("blk.0.ssm_conv1d.weight").type, TensorType::F32); // never quantized
    EXPECT_EQ(model->get("blk.0.ffn_gate_inp.weight").type, TensorType::F32); // router
    EXPECT_EQ(model->get("blk.0.ssm_a").ne[0], 4);
    EXPECT_EQ(model->get("blk.0.ssm_dt.bias").ne[0], 4);
    EXPECT_EQ(model->get("blk.3.attn_q.weight").ne[1], 128); // query + gate
    EXPECT_NE(model->find("blk.4.nextn.eh_proj.weight"), nullptr);
    EXPECT_EQ(model->get("blk.4.nextn.eh_proj.weight").ne[0], 128);
    EXPECT_NE(model->find("blk.4.attn_q.weight"), nullptr);
    EXPECT_EQ(model->find("blk.0.attn_q.weight"), nullptr);
}

TEST(GgufModelLoader, splitsFusedGateUpExpertsIntoSlicedViews)
{
    TinyGgufOptions o;
    o.fuseGateUp = true;
    o.withMtp = false;
    const std::string path = tempPath("fused");
    ASSERT_TRUE(cw::test::writeTinyGguf(path, o).ok());
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file.ok());
    auto model = describeGgufModel(*file);
    ASSERT_TRUE(model.ok()) << model.error().message;
    const auto* fused = file->findTensor("blk.1.ffn_gate_up_exps.weight");
    ASSERT_NE(fused, nullptr);
    const auto& gate = model->get("blk.1.ffn_gate_exps.weight");
    const auto& up = model->get("blk.1.ffn_up_exps.weight");
    EXPECT_EQ(gate.ne[1], 32);
    EXPECT_EQ(up.ne[2], 4);
    const std::uint64_t expertBytes = fused->bytes / 4;
    EXPECT_EQ(gate.slice(2), fused->data + 2 * expertBytes);
    EXPECT_EQ(up.slice(2), fused->data + 2 * expertBytes + expertBytes / 2);
    EXPECT_EQ(model->find("blk.1.ffn_gate_up_exps.weight"), nullptr);
    std::remove(path.c_str());
}

TEST(GgufModelLoader, quantizedMixLoadsAndDequantizes)
{
    TinyGgufOptions o;
    o.mix = "q4_k_m"; // rows of 64 fall back to Q5_0 / Q8_0 as llama.cpp does
    auto model = load(o, "q4km");
    ASSERT_TRUE(model.ok()) << model.error().message;
    const auto& out = model->get("output.weight");
    EXPECT_EQ(out.type, TensorType::Q8_0); // Q6_K wanted, 64 is not a multiple of 256
    EXPECT_EQ(model->get("blk.1.attn_gate.weight").type, TensorType::Q5_0);
    std::vector<float> row(64);
    cw::kernels::quant::dequantizeRow(out.type, out.data, row.data(), 64);
    for (float v : row)
        EXPECT_LT(std::fabs(v), 5.0f);
}

TEST(GgufModelLoader, refusesUnsupportedArchitecture)
{
    TinyGgufOptions o;
    o.architecture = "llama";
    const auto message = errorOf(o, "llama");
    EXPECT_NE(message.find("architecture \"llama\" is not supported"), std::string::npos)
        << message;
    EXPECT_NE(message.find(".gguf: "), std::string::npos);
}

TEST(GgufModelLoader, refusesShapesThatContradictTheHyperParameters)
{
    TinyGgufOptions o;
    o.reshape["blk.3.attn_k.weight"] = { 64, 48 };
    const auto message = errorOf(o, "shape");
    EXPECT_NE(
        message.find(
            "tensor blk.3.attn_k.weight has shape [64, 48], the hyper-parameters imply [64, 32]"),
        std::string::npos)
        << message;
}

TEST(GgufModelLoader, refusesMissingAndUnexpectedTensors)
{
    TinyGgufOptions missing;
    missing.skip = { "blk.2.ssm_out.weight" };
    EXPECT_NE(errorOf(missing, "missing").find("tensor blk.2.ssm_out.weight is missing"),
        std::string::npos);
    TinyGgufOptions extra;
    extra.extra = { "blk.0.mystery.weight" };
    EXPECT_NE(
        errorOf(extra, "extra").find("unexpected tensor blk.0.mystery.weight"), std::string::npos);
    TinyGgufOptions tied;
    tied.architecture = "qwen3moe";
    tied.skip = { "output.weight" };
    auto model = load(tied, "tied");
    ASSERT_TRUE(model.ok()) << model.error().message;
    EXPECT_TRUE(model->hparams.tieWordEmbeddings);
}
