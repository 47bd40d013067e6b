#pragma once

#include "kernels/tensor_type.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cw::engine {

using kernels::TensorType;

// The in-memory description of a model, the same whether it came from a GGUF file or a
// Hugging Face folder: hyper-parameters, how the weights are stored (conventions that
// differ between the two sources), and views of every tensor. The model graphs read only
// this; loaders (engine/model_files/) fill it.

enum class Architecture {
    Qwen3Moe, // Qwen3-30B-A3B: llama.cpp "qwen3moe", HF "qwen3_moe"
    Qwen35Moe, // Qwen3.5/3.6-35B-A3B: llama.cpp "qwen35moe", HF "qwen3_5_moe(_text)"
};

enum class LayerKind { FullAttention, GatedDeltaNet };

struct HyperParameters {
    Architecture architecture = Architecture::Qwen3Moe;
    std::int64_t vocabSize = 0;
    std::int64_t hiddenSize = 0;
    std::int64_t numLayers = 0; // text decoder layers, without the MTP block
    std::int64_t contextLength = 0;
    double rmsNormEps = 1e-6;
    bool tieWordEmbeddings = false;

    // Attention layers.
    std::int64_t numHeads = 0;
    std::int64_t numKvHeads = 0;
    std::int64_t headDim = 0;
    std::int64_t ropeDim = 0; // rotary dimensions per head (partial rotary: < headDim)
    double ropeTheta = 1e6;
    bool attentionOutputGate = false; // Qwen3.5: q_proj also yields a sigmoid gate per head

    // Mixture of experts.
    std::int64_t numExperts = 0;
    std::int64_t numExpertsPerToken = 0;
    std::int64_t expertFfnSize = 0;
    std::int64_t sharedExpertFfnSize = 0; // 0: no shared expert
    bool normTopkProb = true;

    // Gated DeltaNet layers (Qwen3.5): which layers are linear attention.
    std::vector<LayerKind> layerKinds; // size numLayers
    std::int64_t linearNumKeyHeads = 0;
    std::int64_t linearNumValueHeads = 0;
    std::int64_t linearKeyHeadDim = 0;
    std::int64_t linearValueHeadDim = 0;
    std::int64_t linearConvKernel = 0;

    std::int64_t mtpLayers = 0; // multi-token-prediction blocks present in the file (not run)
};

// How a source stores weights that llama.cpp's converter transforms. The graphs honour
// these instead of copying weights, so a memory-mapped file is used as it is.
struct WeightConventions {
    // true: every RMSNorm multiplies by the stored weight as it is (x_normed * w).
    // false: the zero-centred norms multiply by (1 + w). Per architecture:
    //  - qwen3moe (GGUF and HF): true. Qwen3MoE's RMSNorm is plain x*w; nothing to add.
    //  - qwen35moe GGUF: true. llama.cpp's converter baked +1 into attn_norm,
    //    post_attention_norm, output_norm, attn_q_norm and attn_k_norm.
    //  - qwen35moe HF: false. Those five norms are zero-centred (x*(1+w)) in transformers.
    //  The DeltaNet gated norm (ssm_norm, RMSNormGated) is plain x*w in every source and is
    //  never affected by this flag.
    bool normWeightsIncludeOne = true;
    bool ssmAIsNegExp = true; // GGUF ssm_a = -exp(A_log); HF stores A_log
    bool deltaNetValueHeadsTiled = true; // GGUF: value head j uses key head j % nK; HF: j / (nV/nK)
};

// A view of one tensor in ggml order: ne[0] is the innermost (contiguous) dimension, so a
// HF weight of shape [out, in] has ne = {in, out}. For tensors whose outermost slices are
// not contiguous in the file (HF experts stored one tensor per expert, or gate and up
// fused in one tensor), `slices` holds the start of each outermost slice.
struct TensorView {
    std::string name;
    TensorType type = TensorType::F32;
    int nDims = 0;
    std::array<std::int64_t, 4> ne{1, 1, 1, 1};
    const std::byte* data = nullptr; // start of slice 0
    std::uint64_t bytes = 0; // total payload bytes
    std::vector<const std::byte*> slices; // empty: contiguous

    std::int64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
    // Start of outermost slice i (an expert's matrix for 3-D expert stacks).
    const std::byte* slice(std::int64_t i) const;
};

struct TokenizerSource {
    // Exactly one of these is filled: a tokenizer.json path (HF folders), or the
    // tokenizer.ggml.* metadata (GGUF) copied out as tokens, merges and special ids.
    std::string tokenizerJsonPath;
    std::string tokenizerConfigPath;
    std::vector<std::string> ggmlTokens;
    std::vector<std::string> ggmlMerges;
    std::vector<std::int32_t> ggmlTokenTypes;
    std::string ggmlPre; // "qwen2" for Qwen models
    std::optional<std::int32_t> eosId, padId, bosId;
};

class ModelDescription {
public:
    std::string sourcePath;
    std::string name; // general.name or the folder's name
    HyperParameters hparams;
    WeightConventions conventions;
    std::map<std::string, TensorView> tensors; // keyed by llama.cpp (GGUF) tensor names
    TokenizerSource tokenizer;
    std::string chatTemplate; // Jinja source from the file, empty if absent
    std::map<std::string, std::string> metadata; // other facts worth showing (inspect)

    // Keeps the memory maps (and any buffers) the views point into alive.
    std::vector<std::shared_ptr<const void>> storage;

    const TensorView* find(const std::string& name) const;
    const TensorView& get(const std::string& name) const; // asserts it exists
};

} // namespace cw::engine
