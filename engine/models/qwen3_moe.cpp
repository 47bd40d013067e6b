// Qwen3-30B-A3B (HF "qwen3_moe", llama.cpp "qwen3moe"): every layer is grouped-query attention
// with per-head RMSNorm of q and k and full rotary embedding, followed by a sparse MoE block
// (router softmax, top-k, optional renormalisation, no shared expert). Norm weights are plain
// multipliers in both formats.
#include "engine/models/model_weights.h"

namespace cw::engine {

namespace {

#define CW_TRY_ASSIGN(target, expr)                                                                \
    do {                                                                                           \
        auto cwResult = (expr);                                                                    \
        if (!cwResult)                                                                             \
            return cwResult.error();                                                               \
        target = std::move(*cwResult);                                                             \
    } while (0)

} // namespace

Result<MoeWeights> bindMoe(const ModelDescription& model, std::int64_t il)
{
    const auto& hp = model.hparams;
    MoeWeights m;
    if (hp.numExperts <= 0 || hp.numExpertsPerToken <= 0 || hp.numExpertsPerToken > hp.numExperts)
        return makeError(model.sourcePath + ": " + std::to_string(hp.numExpertsPerToken)
            + " experts per token out of " + std::to_string(hp.numExperts) + " is inconsistent");
    CW_TRY_ASSIGN(m.router,
        bindMatrix(model, layerTensor(il, "ffn_gate_inp.weight"), hp.hiddenSize, hp.numExperts));
    const std::int64_t ffn = hp.expertFfnSize;
    if (model.find(layerTensor(il, "ffn_gate_up_exps.weight"))) {
        CW_TRY_ASSIGN(m.gate,
            bindExperts(model, layerTensor(il, "ffn_gate_up_exps.weight"), hp.hiddenSize, 2 * ffn,
                hp.numExperts));
        m.up = m.gate;
        m.gate.rows = ffn;
        m.up.rows = ffn;
        m.up.rowOffset = ffn;
    } else {
        CW_TRY_ASSIGN(m.gate,
            bindExperts(
                model, layerTensor(il, "ffn_gate_exps.weight"), hp.hiddenSize, ffn, hp.numExperts));
        CW_TRY_ASSIGN(m.up,
            bindExperts(
                model, layerTensor(il, "ffn_up_exps.weight"), hp.hiddenSize, ffn, hp.numExperts));
    }
    CW_TRY_ASSIGN(m.down,
        bindExperts(
            model, layerTensor(il, "ffn_down_exps.weight"), ffn, hp.hiddenSize, hp.numExperts));
    return m;
}

Result<ModelWeights> bindQwen3MoeWeights(const ModelDescription& model)
{
    const auto& hp = model.hparams;
    ModelWeights w;
    if (auto r = bindCommon(model, false, w); !r)
        return r.error();
    if (hp.numHeads <= 0 || hp.numKvHeads <= 0 || hp.numHeads % hp.numKvHeads)
        return makeError(model.sourcePath + ": " + std::to_string(hp.numHeads)
            + " attention heads cannot share " + std::to_string(hp.numKvHeads) + " KV heads");
    const std::int64_t qDim = hp.numHeads * hp.headDim;
    const std::int64_t kvDim = hp.numKvHeads * hp.headDim;
    for (std::int64_t il = 0; il < hp.numLayers; ++il) {
        LayerWeights L;
        L.kind = LayerKind::FullAttention;
        L.cacheIndex = int(il);
        CW_TRY_ASSIGN(L.inputNorm,
            readNorm(model, layerTensor(il, "attn_norm.weight"), hp.hiddenSize, false));
        CW_TRY_ASSIGN(L.postAttentionNorm,
            readNorm(model, layerTensor(il, "ffn_norm.weight"), hp.hiddenSize, false));
        auto& a = L.attention;
        CW_TRY_ASSIGN(
            a.q, bindMatrix(model, layerTensor(il, "attn_q.weight"), hp.hiddenSize, qDim));
        CW_TRY_ASSIGN(
            a.k, bindMatrix(model, layerTensor(il, "attn_k.weight"), hp.hiddenSize, kvDim));
        CW_TRY_ASSIGN(
            a.v, bindMatrix(model, layerTensor(il, "attn_v.weight"), hp.hiddenSize, kvDim));
        CW_TRY_ASSIGN(
            a.o, bindMatrix(model, layerTensor(il, "attn_output.weight"), qDim, hp.hiddenSize));
        CW_TRY_ASSIGN(
            a.qNorm, readNorm(model, layerTensor(il, "attn_q_norm.weight"), hp.headDim, false));
        CW_TRY_ASSIGN(
            a.kNorm, readNorm(model, layerTensor(il, "attn_k_norm.weight"), hp.headDim, false));
        CW_TRY_ASSIGN(L.moe, bindMoe(model, il));
        w.layers.push_back(std::move(L));
    }
    return w;
}

} // namespace cw::engine
