#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace cw::kernels::quant {

// True for the types quantizeRow can write.
bool canQuantize(TensorType type);

// Writes n values (a whole number of blocks) as `type` into dst (rowBytes(type, n) bytes).
// Types: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K. The k-quants use ggml's reference
// (importance-free) algorithms, quantize_row_*_ref, so blocks match llama-quantize without
// an imatrix up to float rounding. Returns false for a type it cannot write (dst untouched).
bool quantizeRow(TensorType type, const float* src, void* dst, std::int64_t n);

// What llama.cpp's quantization mix (llama-quant.cpp, llama_tensor_get_type) gives one tensor.
// Counters are those llama.cpp keeps while walking the tensors in file order.
struct MixTensorContext {
    int nDims = 2;
    std::int64_t ne0 = 0; // row length (must be a multiple of the chosen type's block)
    std::int64_t nExperts = 0; // <arch>.expert_count (0: dense)
    std::int64_t nLayers = 0; // <arch>.block_count
    std::int64_t attentionVIndex = 0; // how many attn_v (or attn_qkv) tensors came before
    std::int64_t attentionVCount = 0; // attn_v tensors in the model
    std::int64_t ffnDownIndex = 0; // how many ffn_down* tensors came before
    std::int64_t ffnDownCount = 0; // ffn_down* tensors in the model
};

// Mix names as llama-quantize spells them, case-insensitive: "f32", "f16", "bf16", "q8_0",
// "q4_0", "q4_k_m", "q4_k_s", "q5_k_m", "q5_k_s", "q6_k". The default (base) type of a mix.
bool isKnownMix(std::string_view mix);
TensorType mixBaseType(std::string_view mix);

// The type `tensorName` gets under `mix` (e.g. Q4_K_M: output.weight and some attn_v/ffn_down
// get Q6_K, 1-D tensors and the router stay F32). Unknown mix: F32.
TensorType quantizedTypeForMix(
    std::string_view mix, const std::string& tensorName, const MixTensorContext& context);

} // namespace cw::kernels::quant
