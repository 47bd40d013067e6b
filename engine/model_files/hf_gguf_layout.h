#pragma once

// The GGUF file llama.cpp's converter (convert_hf_to_gguf.py, classes Qwen3MoeModel and
// Qwen3_5MoeTextModel) writes for a model: its metadata keys and its tensors with their ggml
// shapes, in the order blocks are numbered. Shared by `synth` (random weights) and `convert`
// (weights from a Hugging Face folder).

#include "engine/common/result.h"
#include "engine/model/model_description.h"
#include "engine/model_files/gguf_writer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cw::engine {

// What a tensor is, which decides how it is generated and transformed.
enum class GgufTensorRole {
    Embedding,
    Output,
    Matrix, // a 2-D projection
    Experts, // a 3-D expert stack
    Router, // ffn_gate_inp: F32 in llama.cpp's files
    ZeroCentredNorm, // Qwen3.5 norms: HF stores w, GGUF stores w + 1
    PlainNorm, // Qwen3 norms and the DeltaNet gated norm: same in HF and GGUF
    SsmA, // GGUF -exp(A_log)
    SsmDtBias,
    SsmConv, // ssm_conv1d, F32 in llama.cpp's files
};

struct GgufTensorSpec {
    std::string name;
    std::vector<std::int64_t> ne; // ggml order
    GgufTensorRole role = GgufTensorRole::Matrix;
    std::int64_t layer = -1;
    // Dimensions as ggml_n_dims counts them (trailing 1s dropped): what the quantization mix
    // looks at (ffn_gate_inp_shexp {n_embd, 1} is 1-D there).
    int effectiveDims() const;
    std::int64_t elements() const;
};

std::string_view ggufArchitectureName(Architecture architecture);
std::vector<GgufTensorSpec> ggufTensorLayout(const HyperParameters& hparams);

// llama.cpp's general.file_type for a mix name ("q4_k_m" -> 15); nullopt for unknown mixes.
std::optional<std::uint32_t> llamaFileType(std::string_view mix);
// The mix's name for a general.file_type number ("q4_k_m" for 15); nullopt if unknown.
std::optional<std::string> llamaFileTypeName(std::uint32_t fileType);

struct GgufModelFacts {
    std::string name; // general.name
    std::uint32_t fileType = 0;
    std::vector<std::int64_t> mropeSections; // Qwen3.5 rope.dimension_sections (padded to 4)
};
void setGgufHyperParameters(
    GgufWriter& writer, const HyperParameters& hparams, const GgufModelFacts& facts);

// The tokenizer.ggml.* content of a GGUF file.
struct GgufVocabulary {
    std::string pre; // "qwen2" (Qwen3) or "qwen35" (Qwen3.5/3.6)
    std::vector<std::string> tokens;
    std::vector<std::int32_t> types; // 1 normal, 3 control, 4 user-defined, 5 unused
    std::vector<std::string> merges;
    std::optional<std::int32_t> eos, pad, bos;
    bool addBos = false;
};

// A byte-level BPE vocabulary of exactly `vocabSize` tokens for random-weight models: the 256
// byte tokens (GPT-2 byte-to-unicode), merged pairs and triples with their merges, the Qwen
// special tokens from `firstSpecialId` (<|endoftext|>, <|im_start|>, <|im_end|>, ... <think>,
// </think>), and [PADn] unused tokens after them, as llama.cpp pads Qwen vocabularies.
GgufVocabulary syntheticQwenVocabulary(
    std::int64_t vocabSize, std::int64_t firstSpecialId, std::string pre);
// The same from a Hugging Face tokenizer.json (+ tokenizer_config.json for special tokens),
// padded to `vocabSize` as llama.cpp's converter does.
Result<GgufVocabulary> vocabularyFromTokenizerJson(const std::string& tokenizerJsonPath,
    const std::string& tokenizerConfigPath, std::int64_t vocabSize, std::string pre);
void setGgufVocabulary(
    GgufWriter& writer, const GgufVocabulary& vocabulary, const std::string& chatTemplate);

} // namespace cw::engine
