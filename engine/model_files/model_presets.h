#pragma once

#include "engine/common/result.h"
#include "engine/model/model_description.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cw::engine {

// The geometry of a model without its weights: the published configurations of the two
// target models, and tiny ones for tests.
struct ModelPreset {
    std::string name; // "qwen3-30b-a3b", "qwen3.6-35b-a3b", "tiny-qwen3-moe", ...
    std::string description;
    HyperParameters hparams;
    std::vector<std::int64_t> mropeSections; // Qwen3.5/3.6 rope_parameters.mrope_section
    std::int64_t firstSpecialTokenId = 0; // id of <|endoftext|> in the real tokenizer
    std::string tokenizerPre; // tokenizer.ggml.pre llama.cpp writes for this family
};

const std::vector<ModelPreset>& modelPresets();
const ModelPreset* findModelPreset(std::string_view name);

struct SynthSummary {
    std::uint64_t fileBytes = 0;
    std::size_t tensorCount = 0;
    std::map<std::string, std::size_t> tensorsPerType; // "q4_K" -> count
};

// Writes a llama.cpp-compatible GGUF file of `preset` with random weights reproducible from
// `seed`: the architecture, metadata keys, tensor names, shapes and types llama.cpp's converter
// and llama-quantize would write for `mix` ("q4_k_m", "q8_0", "q6_k", "bf16", "f32" ...), a
// byte-level tokenizer of the preset's vocabulary size with the Qwen special tokens, and a
// ChatML template. Quantized tensors are random valid blocks (random quants, sane fp16
// scales), generated and written one tensor at a time, so the whole model is never in memory.
// `progress` (optional) is called after each tensor with (done, total).
// `routerSkew` > 0 biases routing the way trained models are biased, each layer toward its own
// few experts: the router row of the expert at rank r (shuffled per layer) is scaled by
// (1 + r)^-skew. At 0.2 and 256 experts, top-8, the most chosen quarter of the experts takes
// about 57 % of the choices (0: every expert equally likely, the worst case for a cache).
Result<SynthSummary> synthesizeGguf(const ModelPreset& preset, std::string_view mix,
    std::uint64_t seed, const std::string& outPath,
    const std::function<void(std::size_t, std::size_t)>& progress = {}, double routerSkew = 0.0);

} // namespace cw::engine
