#include "engine/model_files/model_presets.h"

namespace cw::engine {

namespace {

HyperParameters qwen3Moe(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
    std::int64_t kvHeads, std::int64_t headDim, std::int64_t experts, std::int64_t topk,
    std::int64_t expertFfn, std::int64_t vocab, std::int64_t context)
{
    HyperParameters h;
    h.architecture = Architecture::Qwen3Moe;
    h.vocabSize = vocab;
    h.hiddenSize = hidden;
    h.numLayers = layers;
    h.contextLength = context;
    h.rmsNormEps = 1e-6;
    h.tieWordEmbeddings = false;
    h.numHeads = heads;
    h.numKvHeads = kvHeads;
    h.headDim = headDim;
    h.ropeDim = headDim;
    h.ropeTheta = 1e6;
    h.attentionOutputGate = false;
    h.numExperts = experts;
    h.numExpertsPerToken = topk;
    h.expertFfnSize = expertFfn;
    h.sharedExpertFfnSize = 0;
    h.normTopkProb = true;
    h.layerKinds.assign(std::size_t(layers), LayerKind::FullAttention);
    return h;
}

struct LinearAttention {
    std::int64_t keyHeads, valueHeads, keyDim, valueDim, conv;
};

HyperParameters qwen35Moe(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
    std::int64_t kvHeads, std::int64_t headDim, std::int64_t experts, std::int64_t topk,
    std::int64_t expertFfn, std::int64_t sharedFfn, std::int64_t vocab, std::int64_t context,
    LinearAttention linear)
{
    HyperParameters h = qwen3Moe(
        layers, hidden, heads, kvHeads, headDim, experts, topk, expertFfn, vocab, context);
    h.architecture = Architecture::Qwen35Moe;
    h.ropeDim = headDim / 4; // partial_rotary_factor 0.25
    h.ropeTheta = 1e7;
    h.attentionOutputGate = true;
    h.sharedExpertFfnSize = sharedFfn;
    h.linearNumKeyHeads = linear.keyHeads;
    h.linearNumValueHeads = linear.valueHeads;
    h.linearKeyHeadDim = linear.keyDim;
    h.linearValueHeadDim = linear.valueDim;
    h.linearConvKernel = linear.conv;
    for (std::int64_t i = 0; i < layers; ++i) // 3 Gated DeltaNet + 1 gated attention
        h.layerKinds[std::size_t(i)]
            = (i + 1) % 4 == 0 ? LayerKind::FullAttention : LayerKind::GatedDeltaNet;
    return h;
}

std::vector<ModelPreset> makePresets()
{
    std::vector<ModelPreset> presets;
    // Qwen/Qwen3-30B-A3B config.json: 48 layers, hidden 2048, 32 heads, 4 KV heads, head_dim
    // 128, 128 experts, 8 per token, moe_intermediate_size 768, vocab 151936,
    // max_position_embeddings 40960, rope_theta 1e6, rms_norm_eps 1e-6, untied, norm_topk_prob.
    presets.push_back({ "qwen3-30b-a3b", "Qwen3-30B-A3B (qwen3moe): 48 layers, 128 experts, top-8",
        qwen3Moe(48, 2048, 32, 4, 128, 128, 8, 768, 151936, 40960), {}, 151643, "qwen2" });
    // Qwen3.6-35B-A3B text_config (Qwen3_5MoeTextConfig): 40 layers, hidden 2048, 16 heads, 2 KV
    // heads, head_dim 256, partial rotary 0.25, rope_theta 1e7, mrope_section [11, 11, 10],
    // 256 experts, 8 routed + 1 shared, moe/shared intermediate 512, DeltaNet 16 key heads / 32
    // value heads of 128, conv kernel 4, full attention every 4th layer, vocab 248320,
    // max_position_embeddings 262144, untied.
    presets.push_back({ "qwen3.6-35b-a3b",
        "Qwen3.6-35B-A3B (qwen35moe): 40 layers (3 DeltaNet + 1 attention), 256 "
        "experts, 8 routed + 1 shared",
        qwen35Moe(40, 2048, 16, 2, 256, 256, 8, 512, 512, 248320, 262144, { 16, 32, 128, 128, 4 }),
        { 11, 11, 10 }, 248044, "qwen35" });
    // Tiny shapes for tests: every row length a multiple of 256 so k-quants apply unchanged.
    presets.push_back({ "tiny-qwen3-moe", "2 layers, hidden 256, 8 experts, top-2",
        qwen3Moe(2, 256, 4, 2, 64, 8, 2, 256, 1024, 4096), {}, 992, "qwen2" });
    presets.push_back({ "tiny-qwen3.6-moe",
        "4 layers (3 DeltaNet + 1 attention), hidden 256, 8 experts, top-2, "
        "shared expert",
        qwen35Moe(4, 256, 4, 2, 64, 8, 2, 256, 256, 1024, 4096, { 2, 4, 64, 64, 4 }), { 2, 3, 3 },
        992, "qwen35" });
    return presets;
}

} // namespace

const std::vector<ModelPreset>& modelPresets()
{
    static const std::vector<ModelPreset> presets = makePresets();
    return presets;
}

const ModelPreset* findModelPreset(std::string_view name)
{
    for (const auto& preset : modelPresets()) {
        if (preset.name == name)
            return &preset;
    }
    return nullptr;
}

} // namespace cw::engine
