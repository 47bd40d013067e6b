#include "engine/model_files/hf_config.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace cw::engine {

namespace {

using nlohmann::json;

// Upper bound for any size in config.json: anything larger is refused as absurd before it can
// size an allocation.
constexpr std::int64_t kMaxDimension = std::int64_t(1) << 24;

class ConfigReader {
public:
    ConfigReader(const json& text, const json& top, std::string path, std::string prefix)
        : m_text(text)
        , m_top(top)
        , m_path(std::move(path))
        , m_prefix(std::move(prefix))
    {
    }

    // First of `names` present in the text settings (then the top level).
    const json* find(std::initializer_list<const char*> names) const
    {
        for (const json* scope : { &m_text, &m_top }) {
            for (const char* name : names) {
                const auto it = scope->find(name);
                if (it != scope->end() && !it->is_null())
                    return &*it;
            }
        }
        return nullptr;
    }

    Error error(const std::string& field, const std::string& what) const
    {
        return makeError(m_path + ": " + m_prefix + field + " " + what);
    }

    Result<std::int64_t> integer(std::initializer_list<const char*> names,
        std::optional<std::int64_t> fallback, std::int64_t minimum = 1,
        std::int64_t maximum = kMaxDimension) const
    {
        const json* value = find(names);
        const std::string field = *names.begin();
        if (!value) {
            if (fallback)
                return *fallback;
            return error(field, "is missing");
        }
        if (!value->is_number_integer())
            return error(field, "is not an integer");
        const auto n = value->get<std::int64_t>();
        if (n < minimum || n > maximum)
            return error(field,
                "is " + std::to_string(n) + ", outside [" + std::to_string(minimum) + ", "
                    + std::to_string(maximum) + "]");
        return n;
    }

    Result<double> number(std::initializer_list<const char*> names, double fallback) const
    {
        const json* value = find(names);
        if (!value)
            return fallback;
        if (!value->is_number() || !std::isfinite(value->get<double>()))
            return error(*names.begin(), "is not a finite number");
        return value->get<double>();
    }

    Result<bool> boolean(std::initializer_list<const char*> names, bool fallback) const
    {
        const json* value = find(names);
        if (!value)
            return fallback;
        if (!value->is_boolean())
            return error(*names.begin(), "is not true or false");
        return value->get<bool>();
    }

private:
    const json& m_text;
    const json& m_top;
    std::string m_path;
    std::string m_prefix;
};

std::optional<std::int32_t> tokenId(const json* value)
{
    if (!value)
        return std::nullopt;
    if (value->is_array() && !value->empty())
        value = &(*value)[0];
    if (value->is_number_integer() && value->get<std::int64_t>() >= 0
        && value->get<std::int64_t>() < (std::int64_t(1) << 31))
        return std::int32_t(value->get<std::int64_t>());
    return std::nullopt;
}

#define CW_TRY(var, expr)                                                                          \
    auto var##Result = (expr);                                                                     \
    if (!var##Result)                                                                              \
        return var##Result.error();                                                                \
    const auto var = var##Result.value()

} // namespace

Result<HfModelConfig> parseHfConfig(const json& config, const std::string& path)
{
    if (!config.is_object())
        return makeError(path + ": not a JSON object");
    HfModelConfig out;
    if (const auto it = config.find("model_type"); it != config.end() && it->is_string())
        out.modelType = it->get<std::string>();
    if (const auto it = config.find("architectures");
        it != config.end() && it->is_array() && !it->empty() && (*it)[0].is_string())
        out.architectureClass = (*it)[0].get<std::string>();

    const json* text = &config;
    if (const auto it = config.find("text_config"); it != config.end()) {
        if (!it->is_object())
            return makeError(path + ": text_config is not an object");
        text = &*it;
        out.nestedTextConfig = true;
    }
    std::string textType = out.modelType;
    if (const auto it = text->find("model_type"); it != text->end() && it->is_string())
        textType = it->get<std::string>();

    auto& h = out.hparams;
    const bool qwen3
        = out.modelType == "qwen3_moe" || out.architectureClass == "Qwen3MoeForCausalLM";
    const bool qwen35 = out.modelType == "qwen3_5_moe" || out.modelType == "qwen3_5_moe_text"
        || textType == "qwen3_5_moe_text"
        || out.architectureClass == "Qwen3_5MoeForConditionalGeneration"
        || out.architectureClass == "Qwen3_5MoeForCausalLM";
    if (qwen3 == qwen35)
        return makeError(path + ": unsupported architecture (model_type \"" + out.modelType
            + "\", architectures \"" + out.architectureClass
            + "\"); supported: qwen3_moe, qwen3_5_moe, qwen3_5_moe_text");
    h.architecture = qwen3 ? Architecture::Qwen3Moe : Architecture::Qwen35Moe;

    const ConfigReader r(*text, config, path, out.nestedTextConfig ? "text_config." : "");
    CW_TRY(vocab, r.integer({ "vocab_size" }, std::nullopt));
    CW_TRY(hidden, r.integer({ "hidden_size" }, std::nullopt));
    CW_TRY(layers, r.integer({ "num_hidden_layers" }, std::nullopt, 1, 4096));
    CW_TRY(context, r.integer({ "max_position_embeddings" }, 32768, 1, std::int64_t(1) << 40));
    CW_TRY(eps, r.number({ "rms_norm_eps" }, 1e-6));
    CW_TRY(tie, r.boolean({ "tie_word_embeddings" }, false));
    h.vocabSize = vocab;
    h.hiddenSize = hidden;
    h.numLayers = layers;
    h.contextLength = context;
    h.rmsNormEps = eps;
    h.tieWordEmbeddings = tie;
    out.eosId = tokenId(r.find({ "eos_token_id" }));
    out.padId = tokenId(r.find({ "pad_token_id" }));
    out.bosId = tokenId(r.find({ "bos_token_id" }));

    CW_TRY(heads, r.integer({ "num_attention_heads" }, std::nullopt));
    CW_TRY(kvHeads, r.integer({ "num_key_value_heads" }, heads));
    CW_TRY(headDim, r.integer({ "head_dim" }, hidden / heads));
    if (heads % kvHeads != 0)
        return r.error("num_attention_heads",
            "(" + std::to_string(heads) + ") is not a multiple of num_key_value_heads ("
                + std::to_string(kvHeads) + ")");
    h.numHeads = heads;
    h.numKvHeads = kvHeads;
    h.headDim = headDim;

    // Rotary embedding: rope_parameters (transformers 5) or the older top-level fields.
    const json* rope = r.find({ "rope_parameters", "rope_scaling" });
    double theta = qwen35 ? 1e7 : 1e6;
    double partial = qwen35 ? 0.25 : 1.0;
    if (rope && rope->is_object()) {
        if (auto it = rope->find("rope_theta"); it != rope->end() && it->is_number())
            theta = it->get<double>();
        if (auto it = rope->find("partial_rotary_factor"); it != rope->end() && it->is_number())
            partial = it->get<double>();
        if (auto it = rope->find("mrope_section"); it != rope->end() && it->is_array()) {
            for (const auto& s : *it) {
                if (s.is_number_integer())
                    out.mropeSections.push_back(s.get<std::int64_t>());
            }
        }
    }
    CW_TRY(thetaTop, r.number({ "rope_theta" }, theta));
    CW_TRY(partialTop, r.number({ "partial_rotary_factor" }, partial));
    if (!(thetaTop > 0))
        return r.error("rope_theta", "must be positive");
    if (!(partialTop > 0 && partialTop <= 1))
        return r.error("partial_rotary_factor", "must be in (0, 1]");
    h.ropeTheta = thetaTop;
    h.ropeDim = std::int64_t(double(headDim) * partialTop);
    if (h.ropeDim % 2 != 0 || h.ropeDim == 0)
        return r.error("partial_rotary_factor",
            "gives an odd or zero rotary dimension " + std::to_string(h.ropeDim));
    CW_TRY(gate, r.boolean({ "attn_output_gate" }, qwen35));
    h.attentionOutputGate = gate;

    CW_TRY(experts, r.integer({ "num_experts", "num_local_experts" }, std::nullopt, 1, 65536));
    CW_TRY(topk,
        r.integer({ "num_experts_per_tok", "num_experts_per_token" }, std::nullopt, 1, experts));
    CW_TRY(expertFfn, r.integer({ "moe_intermediate_size" }, std::nullopt));
    CW_TRY(sharedFfn,
        r.integer({ "shared_expert_intermediate_size" },
            qwen35 ? std::optional<std::int64_t>() : std::optional<std::int64_t>(0),
            qwen35 ? 1 : 0));
    CW_TRY(normTopk, r.boolean({ "norm_topk_prob" }, qwen35));
    h.numExperts = experts;
    h.numExpertsPerToken = topk;
    h.expertFfnSize = expertFfn;
    h.sharedExpertFfnSize = qwen35 ? sharedFfn : 0;
    h.normTopkProb = normTopk;

    if (qwen3) {
        CW_TRY(sparseStep, r.integer({ "decoder_sparse_step" }, 1));
        const json* dense = r.find({ "mlp_only_layers" });
        if (sparseStep != 1 || (dense && dense->is_array() && !dense->empty()))
            return r.error("mlp_only_layers",
                "names dense (non-MoE) layers, which this engine "
                "does not support");
        h.layerKinds.assign(std::size_t(layers), LayerKind::FullAttention);
        return out;
    }

    // Qwen3.5/3.6: Gated DeltaNet layers.
    const json* types = r.find({ "layer_types" });
    if (types) {
        if (!types->is_array() || std::int64_t(types->size()) != layers)
            return r.error("layer_types", "is not a list of num_hidden_layers entries");
        for (const auto& t : *types) {
            const std::string kind = t.is_string() ? t.get<std::string>() : std::string();
            if (kind == "full_attention")
                h.layerKinds.push_back(LayerKind::FullAttention);
            else if (kind == "linear_attention")
                h.layerKinds.push_back(LayerKind::GatedDeltaNet);
            else
                return r.error("layer_types", "has an unknown entry \"" + kind + "\"");
        }
    } else {
        CW_TRY(interval, r.integer({ "full_attention_interval" }, 4, 1, layers));
        for (std::int64_t i = 0; i < layers; ++i)
            h.layerKinds.push_back(
                (i + 1) % interval == 0 ? LayerKind::FullAttention : LayerKind::GatedDeltaNet);
    }
    CW_TRY(keyHeads, r.integer({ "linear_num_key_heads" }, 16));
    CW_TRY(valueHeads, r.integer({ "linear_num_value_heads" }, 32));
    CW_TRY(keyDim, r.integer({ "linear_key_head_dim" }, 128));
    CW_TRY(valueDim, r.integer({ "linear_value_head_dim" }, 128));
    CW_TRY(convKernel, r.integer({ "linear_conv_kernel_dim" }, 4, 1, 64));
    if (valueHeads % keyHeads != 0)
        return r.error("linear_num_value_heads",
            "(" + std::to_string(valueHeads) + ") is not a multiple of linear_num_key_heads ("
                + std::to_string(keyHeads) + ")");
    h.linearNumKeyHeads = keyHeads;
    h.linearNumValueHeads = valueHeads;
    h.linearKeyHeadDim = keyDim;
    h.linearValueHeadDim = valueDim;
    h.linearConvKernel = convKernel;
    CW_TRY(mtp, r.integer({ "mtp_num_hidden_layers" }, 0, 0, 64));
    out.mtpLayers = mtp;

    return out;
}

Result<HfModelConfig> readHfConfig(const std::string& configJsonPath)
{
    std::ifstream in(configJsonPath, std::ios::binary);
    if (!in)
        return makeError(configJsonPath + ": cannot open");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const auto config = json::parse(buffer.str(), nullptr, false);
    if (config.is_discarded())
        return makeError(configJsonPath + ": not well-formed JSON");
    return parseHfConfig(config, configJsonPath);
}

} // namespace cw::engine
