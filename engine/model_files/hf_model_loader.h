#pragma once

#include "engine/common/result.h"
#include "engine/model/model_description.h"

#include <string>

namespace cw::engine {

// Opens a Hugging Face model folder (config.json, model.safetensors or shards named by
// model.safetensors.index.json, tokenizer.json, tokenizer_config.json, chat_template.jinja)
// of Qwen3-MoE ("qwen3_moe") or Qwen3.5/3.6-MoE in both of its shapes: what save_pretrained
// writes for the text-only classes ("qwen3_5_moe_text", tensors under "model.", one tensor per
// expert) and the published checkpoints ("qwen3_5_moe", text settings in text_config, text
// model under "model.language_model.", experts per expert or fused in gate_up_proj/down_proj;
// the vision tower "model.visual.*" and the MTP block "mtp.*" are skipped).
//
// Every tensor becomes a view keyed by its llama.cpp (GGUF) name, ne in ggml order (the HF
// shape reversed), pointing into the memory-mapped files: nothing is copied. Expert stacks are
// 3-D views whose `slices` point at each expert's matrix (per-expert tensors, or the gate and
// up halves of a fused gate_up_proj). The weights keep the HF conventions (see
// WeightConventions): zero-centred norms without +1, A_log rather than -exp(A_log), DeltaNet
// value heads grouped by key head.
Result<ModelDescription> openHuggingFaceModel(const std::string& folder);

// A single .safetensors file whose config.json (and tokenizer files) lie beside it.
Result<ModelDescription> openHuggingFaceSafetensors(const std::string& safetensorsPath);

} // namespace cw::engine
