#pragma once

// The weights one model graph reads, bound once from a ModelDescription: large matrices stay
// views into the memory-mapped file (products run on the quantized blocks), small vectors
// (norms, decay parameters, conv taps) are converted to float once with the source's
// conventions already applied, so the graphs compute the same thing from GGUF and HF files.

#include "engine/common/result.h"
#include "engine/model/model_description.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cw::engine {

// A row-major matrix of `rows` rows of `cols` values of `type` (one expert of a stack, or a
// whole 2-D tensor).
struct WeightMatrix {
    TensorType type = TensorType::F32;
    const std::byte* data = nullptr;
    std::size_t rowStride = 0; // bytes
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    bool valid() const { return data != nullptr; }
};

// An expert stack [experts][rows][cols].
struct ExpertStack {
    const TensorView* view = nullptr;
    std::int64_t rowOffset = 0; // rows skipped in each expert (gate/up fused: up = second half)
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    WeightMatrix expert(std::int64_t e) const;
};

struct AttentionWeights {
    WeightMatrix q, k, v, o; // q yields query and gate per head when the output is gated
    std::vector<float> qNorm, kNorm; // multiplicative weights (the +1 applied)
};

struct DeltaNetWeights {
    WeightMatrix qkv, z, beta, alpha, out;
    std::vector<float> conv; // [convDim][kernel]
    std::vector<float> dtBias; // [numValueHeads]
    std::vector<float> negA; // -exp(A_log) [numValueHeads]
    std::vector<float> norm; // gated RMSNorm weight [valueHeadDim] (plain, not zero-centred)
};

struct MoeWeights {
    WeightMatrix router; // [experts][hidden]
    ExpertStack gate, up, down;
    // Shared expert (Qwen3.5); empty matrices when absent.
    std::vector<float> sharedGate; // [hidden]
    WeightMatrix sharedGateProj, sharedUp, sharedDown;
    bool hasShared() const { return sharedUp.valid(); }
};

struct LayerWeights {
    LayerKind kind = LayerKind::FullAttention;
    std::vector<float> inputNorm, postAttentionNorm;
    AttentionWeights attention;
    DeltaNetWeights deltaNet;
    MoeWeights moe;
    int cacheIndex = -1; // index among the attention layers (KV cache)
    int stateIndex = -1; // index among the DeltaNet layers (recurrent state)
};

struct ModelWeights {
    const TensorView* embedding = nullptr; // token_embd [vocab][hidden]
    WeightMatrix output; // lm_head (token_embd when tied)
    std::vector<float> outputNorm;
    std::vector<LayerWeights> layers;
    std::vector<float> ropeInvFreq; // ropeDim / 2

    // Layers of one kind: the KV cache's layer count (attention), the recurrent states' (DeltaNet).
    int layersOf(LayerKind kind) const;
};

// Helpers the per-architecture binders share. They return errors naming the tensor.
Result<WeightMatrix> bindMatrix(
    const ModelDescription& model, const std::string& name, std::int64_t cols, std::int64_t rows);
Result<ExpertStack> bindExperts(const ModelDescription& model, const std::string& name,
    std::int64_t cols, std::int64_t rows, std::int64_t experts);
// Reads a small tensor of exactly `count` values as floats.
Result<std::vector<float>> readFloats(
    const ModelDescription& model, const std::string& name, std::int64_t count);
// A norm weight as a multiplier: w, or 1 + w when the source stores zero-centred weights.
Result<std::vector<float>> readNorm(
    const ModelDescription& model, const std::string& name, std::int64_t count, bool zeroCentred);
// Embedding, output norm, lm_head (tied or not) and the rope frequencies.
Result<void> bindCommon(const ModelDescription& model, bool zeroCentredNorms, ModelWeights& w);

std::string layerTensor(std::int64_t layer, const char* suffix); // "blk.<layer>.<suffix>"

// The MoE block of layer `il` (router, experts, no shared expert).
Result<MoeWeights> bindMoe(const ModelDescription& model, std::int64_t il);

// Per-architecture binders (engine/models/qwen3_moe.cpp, qwen3_5_moe.cpp).
Result<ModelWeights> bindQwen3MoeWeights(const ModelDescription& model);
Result<ModelWeights> bindQwen35MoeWeights(const ModelDescription& model);

} // namespace cw::engine
