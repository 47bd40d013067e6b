#include "engine/model_files/gguf_file.h"
#include "engine/model_files/gguf_model_loader.h"
#include "engine/model_files/hf_gguf_converter.h"
#include "engine/model_files/hf_model_loader.h"
#include "kernels/cpu/quant/dequantize.h"
#include "tiny_hf_model.h"

#include <cmath>
#include <gtest/gtest.h>

namespace fs = std::filesystem;
using namespace cw::engine;
using cw::kernels::TensorType;

namespace {

fs::path scratch(const std::string& name)
{
    return fs::path(CW_TEST_BINARY_DIR) / "convert_scratch" / name;
}

std::vector<float> floatsOf(const GgufFile& file, const std::string& name)
{
    const auto* t = file.findTensor(name);
    EXPECT_NE(t, nullptr) << name;
    if (!t)
        return {};
    std::vector<float> out(std::size_t(t->elements()));
    const std::int64_t rows = t->elements() / t->ne[0];
    const auto rowBytes = *cw::kernels::rowBytes(t->type, std::uint64_t(t->ne[0]));
    for (std::int64_t r = 0; r < rows; ++r)
        cw::kernels::quant::dequantizeRow(
            t->type, t->data + std::uint64_t(r) * rowBytes, out.data() + r * t->ne[0], t->ne[0]);
    return out;
}

struct Converted {
    std::map<std::string, std::vector<float>> hf;
    fs::path gguf;
};

Converted convert(const std::string& name, const tiny_hf::Options& options, const char* mix)
{
    Converted c;
    const auto dir = scratch(name);
    c.hf = tiny_hf::writeFolder(dir, options);
    tiny_hf::writeTokenizer(dir, options.vocab);
    c.gguf = scratch(name + "-" + mix + ".gguf");
    auto summary = convertHfToGguf(dir.string(), c.gguf.string(), mix);
    EXPECT_TRUE(summary) << (summary ? "" : summary.error().message);
    return c;
}

// Grouped (HF) index of tiled (GGUF) value head `tiled`: nK key heads, perK values per key.
int groupedHead(int tiled, int nK, int perK)
{
    const int j = tiled / nK, k = tiled % nK;
    return k * perK + j;
}

} // namespace

TEST(HfConvert, appliesLlamaCppTransformsForQwen35)
{
    tiny_hf::Options o;
    o.shape = tiny_hf::Shape::Qwen35Published;
    o.fusedExperts = true;
    const auto c = convert("qwen35", o, "f32");
    auto file = GgufFile::open(c.gguf.string());
    ASSERT_TRUE(file) << file.error().message;
    EXPECT_EQ(file->getString("general.architecture"), "qwen35moe");
    EXPECT_EQ(file->getInt("qwen35moe.rope.dimension_count"), 4);
    EXPECT_EQ(file->getInt("general.file_type"), 0);
    const std::string p = "model.language_model.layers.";
    const int nK = 2, perK = 2, dv = 16, keys = 32, H = 64;

    // Zero-centred norms get +1, the DeltaNet gated norm does not.
    const auto attnNorm = floatsOf(*file, "blk.0.attn_norm.weight");
    const auto& hfNorm = c.hf.at(p + "0.input_layernorm.weight");
    for (int i : { 0, 17, 63 })
        EXPECT_FLOAT_EQ(attnNorm[std::size_t(i)], hfNorm[std::size_t(i)] + 1.0f);
    EXPECT_FLOAT_EQ(floatsOf(*file, "blk.3.attn_q_norm.weight")[5],
        c.hf.at(p + "3.self_attn.q_norm.weight")[5] + 1.0f);
    EXPECT_FLOAT_EQ(floatsOf(*file, "blk.2.post_attention_norm.weight")[9],
        c.hf.at(p + "2.post_attention_layernorm.weight")[9] + 1.0f);
    EXPECT_FLOAT_EQ(floatsOf(*file, "output_norm.weight")[3],
        c.hf.at("model.language_model.norm.weight")[3] + 1.0f);
    EXPECT_FLOAT_EQ(
        floatsOf(*file, "blk.0.ssm_norm.weight")[7], c.hf.at(p + "0.linear_attn.norm.weight")[7]);

    // Per-head vectors: tiled order, A_log -> -exp(A_log).
    const auto ssmA = floatsOf(*file, "blk.1.ssm_a");
    const auto dt = floatsOf(*file, "blk.1.ssm_dt.bias");
    for (int h = 0; h < 4; ++h) {
        const auto g = std::size_t(groupedHead(h, nK, perK));
        EXPECT_FLOAT_EQ(ssmA[std::size_t(h)], -std::exp(c.hf.at(p + "1.linear_attn.A_log")[g]));
        EXPECT_FLOAT_EQ(dt[std::size_t(h)], c.hf.at(p + "1.linear_attn.dt_bias")[g]);
    }
    EXPECT_FLOAT_EQ(ssmA[1], -std::exp(c.hf.at(p + "1.linear_attn.A_log")[2]));

    // Rows of z, beta and the V rows of qkv; V channels of conv; columns of out_proj.
    const auto z = floatsOf(*file, "blk.0.attn_gate.weight");
    const auto& hfZ = c.hf.at(p + "0.linear_attn.in_proj_z.weight");
    const auto qkv = floatsOf(*file, "blk.0.attn_qkv.weight");
    const auto& hfQkv = c.hf.at(p + "0.linear_attn.in_proj_qkv.weight");
    const auto conv = floatsOf(*file, "blk.0.ssm_conv1d.weight");
    const auto& hfConv = c.hf.at(p + "0.linear_attn.conv1d.weight");
    const auto out = floatsOf(*file, "blk.0.ssm_out.weight");
    const auto& hfOut = c.hf.at(p + "0.linear_attn.out_proj.weight");
    for (int h = 0; h < 4; ++h) {
        const int g = groupedHead(h, nK, perK);
        for (int d : { 0, 15 }) {
            const auto tiledRow = std::size_t(h * dv + d), groupedRow = std::size_t(g * dv + d);
            EXPECT_FLOAT_EQ(z[tiledRow * H + 3], hfZ[groupedRow * H + 3]);
            EXPECT_FLOAT_EQ(
                qkv[(2 * keys + tiledRow) * H + 5], hfQkv[(2 * keys + groupedRow) * H + 5]);
            EXPECT_FLOAT_EQ(
                conv[(2 * keys + tiledRow) * 4 + 2], hfConv[(2 * keys + groupedRow) * 4 + 2]);
            EXPECT_FLOAT_EQ(out[7 * 64 + tiledRow], hfOut[7 * 64 + groupedRow]);
        }
    }
    EXPECT_FLOAT_EQ(qkv[10 * H + 1], hfQkv[10 * H + 1]); // q and k rows stay
    const auto beta = floatsOf(*file, "blk.0.ssm_beta.weight");
    EXPECT_FLOAT_EQ(beta[1 * H + 6], c.hf.at(p + "0.linear_attn.in_proj_b.weight")[2 * H + 6]);

    // Fused experts split into stacks; MTP and vision left out.
    const auto gate = floatsOf(*file, "blk.1.ffn_gate_exps.weight");
    const auto up = floatsOf(*file, "blk.1.ffn_up_exps.weight");
    const auto& fused = c.hf.at(p + "1.mlp.experts.gate_up_proj");
    const std::size_t IH = 32 * 64;
    EXPECT_FLOAT_EQ(gate[2 * IH + 100], fused[2 * 2 * IH + 100]);
    EXPECT_FLOAT_EQ(up[2 * IH + 100], fused[2 * 2 * IH + IH + 100]);
    for (const auto& t : file->tensors()) {
        EXPECT_EQ(t.name.find("nextn"), std::string::npos);
        EXPECT_EQ(t.name.find("visual"), std::string::npos);
    }

    // Tokenizer from tokenizer.json.
    EXPECT_EQ(file->getString("tokenizer.ggml.pre"), "qwen35");
    const auto tokens = file->getStringArray("tokenizer.ggml.tokens");
    ASSERT_TRUE(tokens);
    ASSERT_EQ(tokens->size(), 64u);
    EXPECT_EQ((*tokens)[62], "<|im_end|>");
    EXPECT_EQ((*tokens)[63], "[PAD63]");
    const auto types = file->getIntArray("tokenizer.ggml.token_type");
    ASSERT_TRUE(types);
    EXPECT_EQ((*types)[60], 3);
    EXPECT_EQ((*types)[63], 5);
    EXPECT_EQ((*types)[0], 1);
    EXPECT_EQ(file->getInt("tokenizer.ggml.eos_token_id"), 62);
    EXPECT_EQ(file->getInt("tokenizer.ggml.padding_token_id"), 60);
    const auto merges = file->getStringArray("tokenizer.ggml.merges");
    ASSERT_TRUE(merges);
    EXPECT_EQ(*merges, (std::vector<std::string> { "a b", "ab c" }));
    EXPECT_NE(file->getString("tokenizer.chat_template")->find("<|im_start|>"), std::string::npos);
}

TEST(HfConvert, q8_0MatchesF32WithinQuantizationError)
{
    tiny_hf::Options o;
    o.shape = tiny_hf::Shape::Qwen35Text;
    o.dtype = TensorType::BF16;
    const auto exact = convert("q8", o, "f32");
    const auto quantized = convert("q8", o, "q8_0");
    auto a = GgufFile::open(exact.gguf.string());
    auto b = GgufFile::open(quantized.gguf.string());
    ASSERT_TRUE(a && b);
    EXPECT_EQ(b->findTensor("blk.0.ffn_down_exps.weight")->type, TensorType::Q8_0);
    EXPECT_EQ(b->findTensor("blk.0.attn_norm.weight")->type, TensorType::F32);
    EXPECT_EQ(b->findTensor("blk.0.ffn_gate_inp.weight")->type, TensorType::F32);
    for (const auto& t : a->tensors()) {
        const auto x = floatsOf(*a, t.name);
        const auto y = floatsOf(*b, t.name);
        ASSERT_EQ(x.size(), y.size());
        float amax = 0, err = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            amax = std::max(amax, std::fabs(x[i]));
            err = std::max(err, std::fabs(x[i] - y[i]));
        }
        EXPECT_LE(err, amax / 127.0f + 1e-6f) << t.name;
    }
}

TEST(HfConvert, q4KMUsesTheMixAndStaysClose)
{
    tiny_hf::Options o;
    o.shape = tiny_hf::Shape::Qwen35Text;
    o.dtype = TensorType::BF16;
    o.hidden = 256;
    o.headDim = 64;
    o.expertFfn = 256;
    o.sharedFfn = 256;
    o.keyDim = 64;
    o.valueDim = 64;
    o.vocab = 256;
    const auto exact = convert("q4km", o, "f32");
    const auto quantized = convert("q4km", o, "q4_k_m");
    auto a = GgufFile::open(exact.gguf.string());
    auto b = GgufFile::open(quantized.gguf.string());
    ASSERT_TRUE(a && b);
    EXPECT_EQ(b->getInt("general.file_type"), 15);
    EXPECT_EQ(b->findTensor("blk.1.ffn_gate_exps.weight")->type, TensorType::Q4_K);
    EXPECT_EQ(b->findTensor("output.weight")->type, TensorType::Q6_K);
    for (const char* name : { "blk.1.ffn_gate_exps.weight", "blk.0.attn_qkv.weight",
             "blk.3.attn_q.weight", "output.weight" }) {
        const auto x = floatsOf(*a, name);
        const auto y = floatsOf(*b, name);
        double signal = 0, noise = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            signal += double(x[i]) * x[i];
            noise += double(x[i] - y[i]) * (x[i] - y[i]);
        }
        EXPECT_LT(std::sqrt(noise / signal), 0.15) << name;
    }
}

TEST(HfConvert, keepsQwen3MoeNormsAsTheyAre)
{
    tiny_hf::Options o;
    o.shape = tiny_hf::Shape::Qwen3Moe;
    o.layers = 2;
    const auto c = convert("qwen3", o, "f32");
    auto file = GgufFile::open(c.gguf.string());
    ASSERT_TRUE(file) << file.error().message;
    EXPECT_EQ(file->getString("general.architecture"), "qwen3moe");
    EXPECT_EQ(file->getString("tokenizer.ggml.pre"), "qwen2");
    EXPECT_FLOAT_EQ(floatsOf(*file, "blk.1.ffn_norm.weight")[4],
        c.hf.at("model.layers.1.post_attention_layernorm.weight")[4]);
    EXPECT_FLOAT_EQ(floatsOf(*file, "blk.0.attn_k_norm.weight")[2],
        c.hf.at("model.layers.0.self_attn.k_norm.weight")[2]);
    const auto down = floatsOf(*file, "blk.1.ffn_down_exps.weight");
    EXPECT_FLOAT_EQ(
        down[3 * 64 * 32 + 11], c.hf.at("model.layers.1.mlp.experts.3.down_proj.weight")[11]);
}

TEST(HfConvert, refusesFolderWithoutTokenizer)
{
    tiny_hf::Options o;
    o.shape = tiny_hf::Shape::Qwen3Moe;
    o.layers = 1;
    const auto dir = scratch("no_tokenizer");
    tiny_hf::writeFolder(dir, o);
    auto summary = convertHfToGguf(dir.string(), scratch("x.gguf").string(), "q8_0");
    ASSERT_FALSE(summary);
    EXPECT_NE(summary.error().message.find("tokenizer.json"), std::string::npos);
}

// A converted file opens with the GGUF loader with the same hyper-parameters as the HF folder.
TEST(HfConvert, convertedFileOpensWithTheSameGeometry)
{
    for (auto shape : { tiny_hf::Shape::Qwen3Moe, tiny_hf::Shape::Qwen35Published }) {
        tiny_hf::Options o;
        o.shape = shape;
        o.fusedExperts = shape == tiny_hf::Shape::Qwen35Published;
        const std::string name = shape == tiny_hf::Shape::Qwen3Moe ? "rt3" : "rt35";
        const auto c = convert(name, o, "bf16");
        auto hf = openHuggingFaceModel(scratch(name).string());
        ASSERT_TRUE(hf) << hf.error().message;
        auto gguf = openGgufModel(c.gguf.string());
        ASSERT_TRUE(gguf) << gguf.error().message;
        const auto& a = hf->hparams;
        const auto& b = gguf->hparams;
        EXPECT_EQ(a.architecture, b.architecture);
        EXPECT_EQ(a.numLayers, b.numLayers);
        EXPECT_EQ(a.vocabSize, b.vocabSize);
        EXPECT_EQ(a.headDim, b.headDim);
        EXPECT_EQ(a.ropeDim, b.ropeDim);
        EXPECT_DOUBLE_EQ(a.ropeTheta, b.ropeTheta);
        EXPECT_EQ(a.numExperts, b.numExperts);
        EXPECT_EQ(a.sharedExpertFfnSize, b.sharedExpertFfnSize);
        EXPECT_EQ(a.layerKinds, b.layerKinds);
        EXPECT_EQ(a.contextLength, b.contextLength);
        EXPECT_TRUE(b.tieWordEmbeddings == a.tieWordEmbeddings);
        EXPECT_TRUE(gguf->conventions.normWeightsIncludeOne);
        for (const auto& [tensorName, view] : hf->tensors) {
            const auto* other = gguf->find(tensorName);
            ASSERT_NE(other, nullptr) << tensorName;
            EXPECT_EQ(view.ne, other->ne) << tensorName;
        }
    }
}
