#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cw::kernels::quant {

// True for the types quantizeRow can write.
bool canQuantize(TensorType type);

// Writes n values (a whole number of blocks) as `type` into dst (rowBytes(type, n) bytes).
// Types: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K. The k-quants use ggml's
// reference (importance-free) algorithms, quantize_row_*_ref, so blocks match llama-quantize
// without an imatrix up to float rounding. Returns false for a type it cannot write (dst
// untouched).
bool quantizeRow(TensorType type, const float* src, void* dst, std::int64_t n);

// What llama.cpp's quantization mix (llama-quant.cpp: tensor_allows_quantization,
// llama_tensor_get_type_impl, tensor_type_fallback) gives one tensor. The counters are those
// llama.cpp keeps while walking the tensors in file order; QuantizationMix keeps them for you.
struct MixTensorContext {
    int nDims = 2;
    std::int64_t ne0 = 0; // row length
    TensorType sourceType = TensorType::F32; // kept for tensors that are not quantized
    std::int64_t nExperts = 0; // <arch>.expert_count (0 or 1: dense)
    std::int64_t nLayers = 0; // all layers, MTP included (llama.cpp's n_layer_all)
    std::int64_t attentionVIndex = 0; // attn_v/attn_qkv/attn_kv_b tensors that came before
    std::int64_t attentionVCount = 0; // attn_v/attn_qkv/attn_kv_b tensors in the model
    std::int64_t ffnDownIndex = 0; // ffn_down* tensors that came before (dense models)
    bool tiedEmbeddings = false; // no output.weight: token_embd gets the output's type
};

// Mix names as llama-quantize spells them, case-insensitive: "f32", "f16", "bf16", "q8_0",
// "q4_0", "q4_1", "q5_0", "q5_1", "q4_k_s", "q4_k_m", "q5_k_s", "q5_k_m", "q6_k".
bool isKnownMix(std::string_view mix);
// The default type of a mix (Q4_K for q4_k_m); F32 for an unknown mix.
TensorType mixBaseType(std::string_view mix);

// The type `tensorName` gets under `mix`: e.g. for Q4_K_M output.weight gets Q6_K, attn_v and
// ffn_down of the layers use_more_bits picks get Q6_K, norms (1-D) and the router
// (ffn_gate_inp) keep sourceType; a row length that is not a whole number of blocks falls back
// as llama.cpp does (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, then F16).
TensorType quantizedTypeForMix(
    std::string_view mix, const std::string& tensorName, const MixTensorContext& context);

// Walks a model's tensors in file order keeping llama.cpp's counters.
class QuantizationMix {
public:
    // allTensorNames: every tensor of the model in file order.
    QuantizationMix(std::string mix, const std::vector<std::string>& allTensorNames,
        std::int64_t nLayersAll, std::int64_t nExperts);
    TensorType next(
        const std::string& tensorName, int nDims, std::int64_t ne0, TensorType sourceType);

private:
    std::string m_mix;
    MixTensorContext m_context;
};

} // namespace cw::kernels::quant
