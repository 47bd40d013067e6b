#pragma once

#include "engine/common/result.h"
#include "engine/model_files/model_presets.h"

#include <functional>
#include <string>
#include <string_view>

namespace cw::engine {

// Converts a Hugging Face folder (or a bare .safetensors file with config.json beside it) of
// qwen3_moe or Qwen3.5/3.6 MoE into the GGUF file llama.cpp's convert_hf_to_gguf.py followed by
// llama-quantize would write: the same architecture, metadata, tokenizer (tokens, merges, token
// types, special ids, chat template from tokenizer.json / tokenizer_config.json) and tensor
// names, shapes and types for `mix` ("f32", "bf16", "q8_0", "q6_k", "q4_k_m" ...), with the
// weight transforms llama.cpp applies to qwen35moe:
//  - ssm_a = -exp(A_log);
//  - +1 baked into every zero-centred norm (attn_norm, post_attention_norm, output_norm,
//    attn_q_norm, attn_k_norm), not into the DeltaNet gated norm ssm_norm;
//  - DeltaNet value heads reordered from grouped (head j uses key head j / (nV/nK)) to tiled
//    (j % nK) in the V rows of attn_qkv, attn_gate (z), ssm_alpha (a), ssm_beta (b), ssm_a,
//    ssm_dt.bias, the V channels of ssm_conv1d and the columns of ssm_out;
//  - conv1d squeezed to [channels, kernel], experts stacked into 3-D tensors.
// The vision tower and the MTP block are not written (as llama.cpp's converter does).
// One tensor at a time is held in memory (as float32).
Result<SynthSummary> convertHfToGguf(const std::string& from, const std::string& outPath,
    std::string_view mix, const std::function<void(std::size_t, std::size_t)>& progress = {});

} // namespace cw::engine
