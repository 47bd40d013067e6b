#pragma once

// Builds tiny Hugging Face model folders (config.json, model.safetensors, tokenizer files) of
// both architectures and both Qwen3.5 shapes, with deterministic values, for loader and
// converter tests.

#include "engine/model_files/safetensors_writer.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tiny_hf {

enum class Shape { Qwen3Moe, Qwen35Text, Qwen35Published };

struct Options {
    Shape shape = Shape::Qwen35Text;
    bool fusedExperts = false; // Qwen3.5 published checkpoints
    bool tie = false;
    cw::kernels::TensorType dtype = cw::kernels::TensorType::F32;
    int hidden = 64, layers = 4, heads = 4, kvHeads = 2, headDim = 16;
    int experts = 4, topk = 2, expertFfn = 32, sharedFfn = 64, vocab = 64;
    int keyHeads = 2, valueHeads = 4, keyDim = 16, valueDim = 16, conv = 4;
};

// A value that depends on the tensor and the element, reproducible in the test.
inline float valueOf(const std::string& name, std::size_t i)
{
    std::size_t h = 1469598103934665603ull;
    for (char c : name)
        h = (h ^ std::size_t(std::uint8_t(c))) * 1099511628211ull;
    const double x = std::sin(double(h % 1000003) + double(i) * 0.7071);
    return float(x * 0.25);
}

using Tensors = std::vector<std::pair<std::string, std::vector<std::int64_t>>>;

inline Tensors tensorList(const Options& o)
{
    const bool qwen35 = o.shape != Shape::Qwen3Moe;
    const std::string root = o.shape == Shape::Qwen35Published ? "model.language_model." : "model.";
    const std::int64_t H = o.hidden;
    Tensors t;
    t.push_back({ root + "embed_tokens.weight", { o.vocab, H } });
    for (int l = 0; l < o.layers; ++l) {
        const std::string p = root + "layers." + std::to_string(l) + ".";
        t.push_back({ p + "input_layernorm.weight", { H } });
        t.push_back({ p + "post_attention_layernorm.weight", { H } });
        const bool full = !qwen35 || (l + 1) % 4 == 0;
        if (full) {
            const std::int64_t q = std::int64_t(o.heads) * o.headDim * (qwen35 ? 2 : 1);
            t.push_back({ p + "self_attn.q_proj.weight", { q, H } });
            t.push_back({ p + "self_attn.k_proj.weight", { o.kvHeads * o.headDim, H } });
            t.push_back({ p + "self_attn.v_proj.weight", { o.kvHeads * o.headDim, H } });
            t.push_back({ p + "self_attn.o_proj.weight", { H, o.heads * o.headDim } });
            t.push_back({ p + "self_attn.q_norm.weight", { o.headDim } });
            t.push_back({ p + "self_attn.k_norm.weight", { o.headDim } });
        } else {
            const std::int64_t keys = o.keyHeads * o.keyDim, values = o.valueHeads * o.valueDim;
            const std::string a = p + "linear_attn.";
            t.push_back({ a + "in_proj_qkv.weight", { 2 * keys + values, H } });
            t.push_back({ a + "in_proj_z.weight", { values, H } });
            t.push_back({ a + "in_proj_b.weight", { o.valueHeads, H } });
            t.push_back({ a + "in_proj_a.weight", { o.valueHeads, H } });
            t.push_back({ a + "conv1d.weight", { 2 * keys + values, 1, o.conv } });
            t.push_back({ a + "dt_bias", { o.valueHeads } });
            t.push_back({ a + "A_log", { o.valueHeads } });
            t.push_back({ a + "norm.weight", { o.valueDim } });
            t.push_back({ a + "out_proj.weight", { H, values } });
        }
        t.push_back({ p + "mlp.gate.weight", { o.experts, H } });
        if (o.fusedExperts) {
            t.push_back({ p + "mlp.experts.gate_up_proj", { o.experts, 2 * o.expertFfn, H } });
            t.push_back({ p + "mlp.experts.down_proj", { o.experts, H, o.expertFfn } });
        } else {
            for (int e = 0; e < o.experts; ++e) {
                const std::string x = p + "mlp.experts." + std::to_string(e) + ".";
                t.push_back({ x + "gate_proj.weight", { o.expertFfn, H } });
                t.push_back({ x + "up_proj.weight", { o.expertFfn, H } });
                t.push_back({ x + "down_proj.weight", { H, o.expertFfn } });
            }
        }
        if (qwen35) {
            t.push_back({ p + "mlp.shared_expert.gate_proj.weight", { o.sharedFfn, H } });
            t.push_back({ p + "mlp.shared_expert.up_proj.weight", { o.sharedFfn, H } });
            t.push_back({ p + "mlp.shared_expert.down_proj.weight", { H, o.sharedFfn } });
            t.push_back({ p + "mlp.shared_expert_gate.weight", { 1, H } });
        }
    }
    t.push_back({ root + "norm.weight", { H } });
    if (!o.tie)
        t.push_back({ "lm_head.weight", { o.vocab, H } });
    if (o.shape == Shape::Qwen35Published) {
        t.push_back({ "model.visual.patch_embed.proj.weight", { 8, 3, 2, 2, 2 } });
        t.push_back({ "mtp.fc.weight", { H, 2 * H } });
    }
    return t;
}

inline nlohmann::json configJson(const Options& o)
{
    nlohmann::json text = { { "vocab_size", o.vocab }, { "hidden_size", o.hidden },
        { "num_hidden_layers", o.layers }, { "num_attention_heads", o.heads },
        { "num_key_value_heads", o.kvHeads }, { "head_dim", o.headDim },
        { "max_position_embeddings", 4096 }, { "rms_norm_eps", 1e-6 },
        { "tie_word_embeddings", o.tie }, { "num_experts_per_tok", o.topk },
        { "moe_intermediate_size", o.expertFfn }, { "eos_token_id", o.vocab - 2 },
        { "pad_token_id", o.vocab - 3 } };
    if (o.shape == Shape::Qwen3Moe) {
        text["model_type"] = "qwen3_moe";
        text["architectures"] = { "Qwen3MoeForCausalLM" };
        text["num_local_experts"] = o.experts;
        text["norm_topk_prob"] = true;
        text["rope_parameters"] = { { "rope_theta", 1000000.0 }, { "rope_type", "default" } };
        return text;
    }
    text["num_experts"] = o.experts;
    text["shared_expert_intermediate_size"] = o.sharedFfn;
    text["linear_num_key_heads"] = o.keyHeads;
    text["linear_num_value_heads"] = o.valueHeads;
    text["linear_key_head_dim"] = o.keyDim;
    text["linear_value_head_dim"] = o.valueDim;
    text["linear_conv_kernel_dim"] = o.conv;
    text["rope_parameters"] = { { "rope_theta", 10000000.0 }, { "partial_rotary_factor", 0.25 },
        { "mrope_section", { 2, 1, 1 } }, { "rope_type", "default" } };
    if (o.shape == Shape::Qwen35Text) {
        text["model_type"] = "qwen3_5_moe_text";
        text["architectures"] = { "Qwen3_5MoeForCausalLM" };
        text["full_attention_interval"] = 4;
        return text;
    }
    nlohmann::json layerTypes = nlohmann::json::array();
    for (int l = 0; l < o.layers; ++l)
        layerTypes.push_back((l + 1) % 4 == 0 ? "full_attention" : "linear_attention");
    text["layer_types"] = layerTypes;
    text["model_type"] = "qwen3_5_moe_text";
    text["mtp_num_hidden_layers"] = 1;
    return { { "architectures", { "Qwen3_5MoeForConditionalGeneration" } },
        { "model_type", "qwen3_5_moe" }, { "tie_word_embeddings", o.tie }, { "text_config", text },
        { "vision_config", { { "depth", 1 } } } };
}

// Writes the folder; returns the values of every tensor (as written, after dtype rounding is
// not applied: tests use F32 to compare exactly).
inline std::map<std::string, std::vector<float>> writeFolder(
    const std::filesystem::path& dir, const Options& o)
{
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::map<std::string, std::vector<float>> values;
    cw::engine::SafetensorsWriter writer;
    for (const auto& [name, shape] : tensorList(o)) {
        std::size_t n = 1;
        for (auto d : shape)
            n *= std::size_t(d);
        std::vector<float> v(n);
        for (std::size_t i = 0; i < n; ++i)
            v[i] = valueOf(name, i);
        writer.addFloats(name, o.dtype, shape, v);
        values[name] = std::move(v);
    }
    writer.setMetadata("format", "pt");
    (void)writer.write((dir / "model.safetensors").string());
    std::ofstream(dir / "config.json") << configJson(o).dump(2);
    std::ofstream(dir / "tokenizer_config.json")
        << R"({"chat_template": "{% for m in messages %}<|im_start|>{{ m.content }}{% endfor %}"})";
    return values;
}

// A small byte-level tokenizer.json of `vocab` ids: normal tokens, two merges and the Qwen
// special tokens <|endoftext|>, <|im_start|>, <|im_end|> at vocab-4 .. vocab-2 (vocab-1 is left
// unused so the converter pads it).
inline void writeTokenizer(const std::filesystem::path& dir, int vocab)
{
    nlohmann::json v = nlohmann::json::object();
    for (int i = 0; i < vocab - 6; ++i)
        v[std::string(1, char('A' + i % 26)) + std::to_string(i)] = i;
    v["ab"] = vocab - 6;
    v["abc"] = vocab - 5;
    nlohmann::json added = nlohmann::json::array();
    const char* specials[] = { "<|endoftext|>", "<|im_start|>", "<|im_end|>" };
    for (int i = 0; i < 3; ++i)
        added.push_back(
            { { "id", vocab - 4 + i }, { "content", specials[i] }, { "special", true } });
    nlohmann::json tokenizer = { { "version", "1.0" }, { "added_tokens", added },
        { "model",
            { { "type", "BPE" }, { "vocab", v },
                { "merges", nlohmann::json::array({ "a b", { "ab", "c" } }) } } } };
    std::ofstream(dir / "tokenizer.json") << tokenizer.dump();
    std::ofstream(dir / "tokenizer_config.json")
        << R"({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "bos_token": null,)"
        << R"( "chat_template": "{% for m in messages %}<|im_start|>{{ m.content }}{% endfor %}"})";
}

} // namespace tiny_hf
