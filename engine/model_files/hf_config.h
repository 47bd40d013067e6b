#pragma once

#include "engine/common/result.h"
#include "engine/model/model_description.h"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace cw::engine {

// What config.json says about a Hugging Face model, in the engine's terms.
struct HfModelConfig {
    HyperParameters hparams;
    std::string modelType; // top-level model_type: "qwen3_moe", "qwen3_5_moe", "qwen3_5_moe_text"
    std::string architectureClass; // architectures[0], may be empty
    bool nestedTextConfig = false; // settings under text_config (published Qwen3.5/3.6)
    std::int64_t mtpLayers = 0; // mtp_num_hidden_layers (Qwen3.5), skipped by the engine
    std::optional<std::int32_t> eosId, padId, bosId;
    std::vector<std::int64_t> mropeSections; // rope_parameters.mrope_section (Qwen3.5)
};

// Reads config.json (Qwen3MoeForCausalLM "qwen3_moe"; Qwen3.5/3.6 MoE "qwen3_5_moe" with
// text_config or "qwen3_5_moe_text"), accepting the spellings real files use
// (num_experts/num_local_experts, rope_parameters/rope_theta, layer_types or
// full_attention_interval ...). Unknown architectures, missing or absurd values and
// inconsistent head counts are errors naming `path` and the field.
Result<HfModelConfig> parseHfConfig(const nlohmann::json& config, const std::string& path);
Result<HfModelConfig> readHfConfig(const std::string& configJsonPath);

} // namespace cw::engine
