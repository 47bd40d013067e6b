#include "engine/model_files/hf_model_loader.h"

#include "engine/model_files/hf_config.h"
#include "engine/model_files/safetensors_model_files.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace cw::engine {

namespace fs = std::filesystem;

namespace {

using Shape = std::vector<std::int64_t>;

std::string shapeText(const Shape& shape)
{
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

std::string blk(std::int64_t layer, const char* what)
{
    return "blk." + std::to_string(layer) + "." + what;
}

// Builds the views of one model: finds each HF tensor, checks its dtype and shape against
// config.json, and records the view under its GGUF name.
class TensorMapper {
public:
    TensorMapper(const SafetensorsModelFiles& files, const HfModelConfig& config,
        std::string source, ModelDescription& model)
        : m_files(files)
        , m_config(config)
        , m_source(std::move(source))
        , m_model(model)
    {
    }

    Result<void> mapAll()
    {
        m_root = m_files.find("model.language_model.embed_tokens.weight") ? "model.language_model."
                                                                          : "model.";
        const auto& h = m_config.hparams;
        const std::int64_t hidden = h.hiddenSize;
        if (auto r
            = plain(m_root + "embed_tokens.weight", "token_embd.weight", { h.vocabSize, hidden });
            !r)
            return r;
        for (std::int64_t layer = 0; layer < h.numLayers; ++layer) {
            if (auto r = mapLayer(layer); !r)
                return r;
        }
        if (auto r = plain(m_root + "norm.weight", "output_norm.weight", { hidden }); !r)
            return r;
        if (m_files.find("lm_head.weight")) {
            if (auto r = plain("lm_head.weight", "output.weight", { h.vocabSize, hidden }); !r)
                return r;
        } else if (!h.tieWordEmbeddings) {
            return makeError(m_source
                + ": tensor lm_head.weight is missing and "
                  "tie_word_embeddings is false");
        }
        std::int64_t ignored = 0;
        for (const auto& [name, tensor] : m_files.tensors()) {
            if (!m_used.count(name) && name.rfind("model.visual.", 0) != 0
                && name.rfind("mtp.", 0) != 0)
                ++ignored;
        }
        m_model.metadata["hf.ignored_tensors"] = std::to_string(ignored);
        return {};
    }

private:
    const SafetensorsTensor* require(const std::string& hfName, Error& error)
    {
        const auto* tensor = m_files.find(hfName);
        if (!tensor) {
            error = makeError(m_source + ": tensor " + hfName + " is missing");
            return nullptr;
        }
        if (!tensor->type) {
            error = makeError(m_files.fileOf(hfName) + ": tensor " + hfName + " has dtype "
                + tensor->dtype + "; only F32, F16 and BF16 are supported");
            return nullptr;
        }
        m_used.insert(hfName);
        return tensor;
    }

    Error shapeError(const std::string& hfName, const Shape& actual, const Shape& expected)
    {
        return makeError(m_files.fileOf(hfName) + ": tensor " + hfName + " has shape "
            + shapeText(actual) + ", config.json implies " + shapeText(expected));
    }

    Result<void> plain(const std::string& hfName, const std::string& ggufName,
        const Shape& expected, std::optional<Shape> ggmlNe = std::nullopt)
    {
        Error error;
        const auto* tensor = require(hfName, error);
        if (!tensor)
            return error;
        if (tensor->shape != expected)
            return shapeError(hfName, tensor->shape, expected);
        TensorView view;
        view.name = ggufName;
        view.type = *tensor->type;
        const Shape ne = ggmlNe ? *ggmlNe : Shape(expected.rbegin(), expected.rend());
        view.nDims = int(ne.size());
        for (std::size_t i = 0; i < ne.size(); ++i)
            view.ne[i] = ne[i];
        view.data = tensor->data;
        view.bytes = tensor->bytes();
        m_model.tensors[ggufName] = std::move(view);
        return {};
    }

    // One 3-D view of E matrices [rows, cols] (HF order) from per-expert pointers.
    void stacked(const std::string& ggufName, TensorType type, std::int64_t rows, std::int64_t cols,
        std::vector<const std::byte*> slices, std::uint64_t sliceBytes)
    {
        TensorView view;
        view.name = ggufName;
        view.type = type;
        view.nDims = 3;
        view.ne = { cols, rows, std::int64_t(slices.size()), 1 };
        view.data = slices.front();
        view.bytes = sliceBytes * slices.size();
        view.slices = std::move(slices);
        m_model.tensors[ggufName] = std::move(view);
    }

    const SafetensorsTensor* fused(const std::string& base)
    {
        if (const auto* t = m_files.find(base))
            return t;
        return m_files.find(base + ".weight");
    }

    Result<void> mapExperts(std::int64_t layer, const std::string& p)
    {
        const auto& h = m_config.hparams;
        const std::int64_t experts = h.numExperts;
        const std::int64_t ffn = h.expertFfnSize;
        const std::int64_t hidden = h.hiddenSize;
        const auto* gateUp = fused(p + "mlp.experts.gate_up_proj");
        const auto* down = fused(p + "mlp.experts.down_proj");
        if (gateUp || down) {
            Error error;
            const std::string gateUpName = gateUp ? gateUp->name : p + "mlp.experts.gate_up_proj";
            const std::string downName = down ? down->name : p + "mlp.experts.down_proj";
            if (!require(gateUpName, error) || !require(downName, error))
                return error;
            if (gateUp->shape != Shape { experts, 2 * ffn, hidden })
                return shapeError(gateUpName, gateUp->shape, { experts, 2 * ffn, hidden });
            if (down->shape != Shape { experts, hidden, ffn })
                return shapeError(downName, down->shape, { experts, hidden, ffn });
            const std::uint64_t half = gateUp->bytes() / std::uint64_t(experts) / 2;
            std::vector<const std::byte*> gates, ups;
            for (std::int64_t e = 0; e < experts; ++e) {
                gates.push_back(gateUp->data + 2 * half * std::uint64_t(e));
                ups.push_back(gateUp->data + 2 * half * std::uint64_t(e) + half);
            }
            stacked(blk(layer, "ffn_gate_exps.weight"), *gateUp->type, ffn, hidden,
                std::move(gates), half);
            stacked(
                blk(layer, "ffn_up_exps.weight"), *gateUp->type, ffn, hidden, std::move(ups), half);
            TensorView view;
            view.name = blk(layer, "ffn_down_exps.weight");
            view.type = *down->type;
            view.nDims = 3;
            view.ne = { ffn, hidden, experts, 1 };
            view.data = down->data;
            view.bytes = down->bytes();
            m_model.tensors[view.name] = std::move(view);
            return {};
        }
        struct Part {
            const char* hf;
            const char* gguf;
            std::int64_t rows, cols;
        };
        const Part parts[] = { { "gate_proj", "ffn_gate_exps.weight", ffn, hidden },
            { "up_proj", "ffn_up_exps.weight", ffn, hidden },
            { "down_proj", "ffn_down_exps.weight", hidden, ffn } };
        for (const auto& part : parts) {
            std::vector<const std::byte*> slices;
            std::optional<TensorType> type;
            std::uint64_t bytes = 0;
            for (std::int64_t e = 0; e < experts; ++e) {
                const std::string name
                    = p + "mlp.experts." + std::to_string(e) + "." + part.hf + ".weight";
                Error error;
                const auto* t = require(name, error);
                if (!t)
                    return error;
                if (t->shape != Shape { part.rows, part.cols })
                    return shapeError(name, t->shape, { part.rows, part.cols });
                if (type && *type != *t->type)
                    return makeError(m_files.fileOf(name) + ": tensor " + name + " has dtype "
                        + t->dtype + ", unlike expert 0 of the same layer");
                type = t->type;
                bytes = t->bytes();
                slices.push_back(t->data);
            }
            stacked(blk(layer, part.gguf), *type, part.rows, part.cols, std::move(slices), bytes);
        }
        return {};
    }

    Result<void> mapLayer(std::int64_t layer)
    {
        const auto& h = m_config.hparams;
        const std::int64_t hidden = h.hiddenSize;
        const bool qwen35 = h.architecture == Architecture::Qwen35Moe;
        const std::string p = m_root + "layers." + std::to_string(layer) + ".";
        struct Entry {
            std::string hf;
            std::string gguf;
            Shape shape;
            std::optional<Shape> ne;
        };
        std::vector<Entry> entries = {
            { p + "input_layernorm.weight", blk(layer, "attn_norm.weight"), { hidden }, {} },
            { p + "post_attention_layernorm.weight",
                blk(layer, qwen35 ? "post_attention_norm.weight" : "ffn_norm.weight"), { hidden },
                {} },
            { p + "mlp.gate.weight", blk(layer, "ffn_gate_inp.weight"), { h.numExperts, hidden },
                {} },
        };
        if (h.layerKinds[std::size_t(layer)] == LayerKind::FullAttention) {
            const std::int64_t q = h.numHeads * h.headDim * (h.attentionOutputGate ? 2 : 1);
            const std::int64_t kv = h.numKvHeads * h.headDim;
            const std::string a = p + "self_attn.";
            entries.push_back(
                { a + "q_proj.weight", blk(layer, "attn_q.weight"), { q, hidden }, {} });
            entries.push_back(
                { a + "k_proj.weight", blk(layer, "attn_k.weight"), { kv, hidden }, {} });
            entries.push_back(
                { a + "v_proj.weight", blk(layer, "attn_v.weight"), { kv, hidden }, {} });
            entries.push_back({ a + "o_proj.weight", blk(layer, "attn_output.weight"),
                { hidden, h.numHeads * h.headDim }, {} });
            entries.push_back(
                { a + "q_norm.weight", blk(layer, "attn_q_norm.weight"), { h.headDim }, {} });
            entries.push_back(
                { a + "k_norm.weight", blk(layer, "attn_k_norm.weight"), { h.headDim }, {} });
        } else {
            const std::int64_t keys = h.linearNumKeyHeads * h.linearKeyHeadDim;
            const std::int64_t values = h.linearNumValueHeads * h.linearValueHeadDim;
            const std::int64_t conv = 2 * keys + values;
            const std::int64_t nv = h.linearNumValueHeads;
            const std::string l = p + "linear_attn.";
            entries.push_back(
                { l + "in_proj_qkv.weight", blk(layer, "attn_qkv.weight"), { conv, hidden }, {} });
            entries.push_back(
                { l + "in_proj_z.weight", blk(layer, "attn_gate.weight"), { values, hidden }, {} });
            entries.push_back(
                { l + "in_proj_b.weight", blk(layer, "ssm_beta.weight"), { nv, hidden }, {} });
            entries.push_back(
                { l + "in_proj_a.weight", blk(layer, "ssm_alpha.weight"), { nv, hidden }, {} });
            entries.push_back({ l + "conv1d.weight", blk(layer, "ssm_conv1d.weight"),
                { conv, 1, h.linearConvKernel }, Shape { h.linearConvKernel, conv } });
            entries.push_back({ l + "dt_bias", blk(layer, "ssm_dt.bias"), { nv }, {} });
            entries.push_back({ l + "A_log", blk(layer, "ssm_a"), { nv }, {} });
            entries.push_back(
                { l + "norm.weight", blk(layer, "ssm_norm.weight"), { h.linearValueHeadDim }, {} });
            entries.push_back(
                { l + "out_proj.weight", blk(layer, "ssm_out.weight"), { hidden, values }, {} });
        }
        if (qwen35) {
            const std::int64_t shared = h.sharedExpertFfnSize;
            const std::string s = p + "mlp.shared_expert.";
            entries.push_back({ s + "gate_proj.weight", blk(layer, "ffn_gate_shexp.weight"),
                { shared, hidden }, {} });
            entries.push_back({ s + "up_proj.weight", blk(layer, "ffn_up_shexp.weight"),
                { shared, hidden }, {} });
            entries.push_back({ s + "down_proj.weight", blk(layer, "ffn_down_shexp.weight"),
                { hidden, shared }, {} });
            entries.push_back({ p + "mlp.shared_expert_gate.weight",
                blk(layer, "ffn_gate_inp_shexp.weight"), { 1, hidden }, {} });
        }
        for (const auto& e : entries) {
            if (auto r = plain(e.hf, e.gguf, e.shape, e.ne); !r)
                return r;
        }
        return mapExperts(layer, p);
    }

    const SafetensorsModelFiles& m_files;
    const HfModelConfig& m_config;
    std::string m_source;
    ModelDescription& m_model;
    std::string m_root;
    std::set<std::string> m_used;
};

std::string readText(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

// tokenizer_config.json "chat_template" (a string, or a list of {name, template}), else
// chat_template.jinja.
std::string findChatTemplate(const fs::path& folder)
{
    std::error_code ec;
    const fs::path config = folder / "tokenizer_config.json";
    if (fs::is_regular_file(config, ec)) {
        const auto json = nlohmann::json::parse(readText(config), nullptr, false);
        if (json.is_object()) {
            const auto it = json.find("chat_template");
            if (it != json.end() && it->is_string())
                return it->get<std::string>();
            if (it != json.end() && it->is_array()) {
                for (const auto& entry : *it) {
                    if (entry.is_object() && entry.value("name", "") == "default"
                        && entry.contains("template") && entry["template"].is_string())
                        return entry["template"].get<std::string>();
                }
            }
        }
    }
    const fs::path jinja = folder / "chat_template.jinja";
    if (fs::is_regular_file(jinja, ec))
        return readText(jinja);
    return {};
}

Result<ModelDescription> describe(
    const fs::path& folder, const std::string& source, Result<SafetensorsModelFiles> files)
{
    auto config = readHfConfig((folder / "config.json").string());
    if (!config)
        return config.error();
    if (!files)
        return files.error();

    ModelDescription model;
    model.sourcePath = source;
    model.name = fs::absolute(folder).lexically_normal().filename().string();
    if (model.name.empty())
        model.name = fs::absolute(folder).lexically_normal().parent_path().filename().string();
    model.hparams = config->hparams;
    const bool qwen35 = config->hparams.architecture == Architecture::Qwen35Moe;
    // HF weights as transformers uses them: see WeightConventions.
    model.conventions.normWeightsIncludeOne = !qwen35;
    model.conventions.ssmAIsNegExp = false;
    model.conventions.deltaNetValueHeadsTiled = false;

    TensorMapper mapper(files.value(), config.value(), source, model);
    if (auto mapped = mapper.mapAll(); !mapped)
        return mapped.error();
    for (auto& mapping : files->mappings())
        model.storage.push_back(std::move(mapping));

    std::error_code ec;
    if (fs::is_regular_file(folder / "tokenizer.json", ec))
        model.tokenizer.tokenizerJsonPath = (folder / "tokenizer.json").string();
    if (fs::is_regular_file(folder / "tokenizer_config.json", ec))
        model.tokenizer.tokenizerConfigPath = (folder / "tokenizer_config.json").string();
    model.tokenizer.eosId = config->eosId;
    model.tokenizer.padId = config->padId;
    model.tokenizer.bosId = config->bosId;
    model.chatTemplate = findChatTemplate(folder);

    model.metadata["source.format"] = "safetensors";
    model.metadata["hf.model_type"] = config->modelType;
    model.metadata["hf.architecture"] = config->architectureClass;
    model.metadata["hf.files"] = std::to_string(files->filePaths().size());
    if (config->mtpLayers > 0)
        model.metadata["hf.mtp_layers_skipped"] = std::to_string(config->mtpLayers);
    return model;
}

} // namespace

Result<ModelDescription> openHuggingFaceModel(const std::string& folder)
{
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
        return makeError(folder + ": not a folder");
    if (!fs::is_regular_file(fs::path(folder) / "config.json", ec))
        return makeError(folder + ": no config.json (not a Hugging Face model folder)");
    return describe(folder, folder, SafetensorsModelFiles::openFolder(folder));
}

Result<ModelDescription> openHuggingFaceSafetensors(const std::string& safetensorsPath)
{
    const fs::path folder = fs::path(safetensorsPath).parent_path();
    std::error_code ec;
    const fs::path dir = folder.empty() ? fs::path(".") : folder;
    if (!fs::is_regular_file(dir / "config.json", ec))
        return makeError(safetensorsPath + ": no config.json beside it");
    return describe(dir, safetensorsPath, SafetensorsModelFiles::openFile(safetensorsPath));
}

} // namespace cw::engine
