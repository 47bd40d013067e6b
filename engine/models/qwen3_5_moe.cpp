// Qwen3.5 / Qwen3.6-35B-A3B (HF "qwen3_5_moe", llama.cpp "qwen35moe"): layers are either
// Gated DeltaNet (linear attention with a recurrent state) or gated full attention (q_proj
// yields query and a sigmoid output gate per head, partial rotary embedding), each followed
// by a MoE block with a shared expert behind a sigmoid gate. Norms are zero-centred (x*(1+w))
// in HF files and have the +1 baked in in GGUF files, except the DeltaNet gated norm which
// is plain in both.
#include "engine/models/model_weights.h"

#include <cmath>

namespace cw::engine {

namespace {

#define CW_TRY_ASSIGN(target, expr)                                                                \
    do {                                                                                           \
        auto cwResult = (expr);                                                                    \
        if (!cwResult)                                                                             \
            return cwResult.error();                                                               \
        target = std::move(*cwResult);                                                             \
    } while (0)

const char* firstPresent(
    const ModelDescription& model, std::int64_t il, const char* a, const char* b)
{
    return model.find(layerTensor(il, a)) ? a : b;
}

Result<void> bindDeltaNet(const ModelDescription& model, std::int64_t il, DeltaNetWeights& d)
{
    const auto& hp = model.hparams;
    const std::int64_t nK = hp.linearNumKeyHeads, nV = hp.linearNumValueHeads;
    const std::int64_t dk = hp.linearKeyHeadDim, dv = hp.linearValueHeadDim;
    if (nK <= 0 || nV <= 0 || dk <= 0 || dv <= 0 || nV % nK || hp.linearConvKernel < 2)
        return makeError(model.sourcePath + ": inconsistent linear-attention sizes (key heads "
            + std::to_string(nK) + ", value heads " + std::to_string(nV) + ", conv kernel "
            + std::to_string(hp.linearConvKernel) + ")");
    const std::int64_t convDim = 2 * nK * dk + nV * dv;
    CW_TRY_ASSIGN(
        d.qkv, bindMatrix(model, layerTensor(il, "attn_qkv.weight"), hp.hiddenSize, convDim));
    CW_TRY_ASSIGN(
        d.z, bindMatrix(model, layerTensor(il, "attn_gate.weight"), hp.hiddenSize, nV * dv));
    CW_TRY_ASSIGN(d.beta, bindMatrix(model, layerTensor(il, "ssm_beta.weight"), hp.hiddenSize, nV));
    CW_TRY_ASSIGN(
        d.alpha, bindMatrix(model, layerTensor(il, "ssm_alpha.weight"), hp.hiddenSize, nV));
    CW_TRY_ASSIGN(
        d.out, bindMatrix(model, layerTensor(il, "ssm_out.weight"), nV * dv, hp.hiddenSize));
    CW_TRY_ASSIGN(d.conv,
        readFloats(model, layerTensor(il, "ssm_conv1d.weight"), convDim * hp.linearConvKernel));
    CW_TRY_ASSIGN(d.dtBias,
        readFloats(model, layerTensor(il, firstPresent(model, il, "ssm_dt.bias", "ssm_dt")), nV));
    CW_TRY_ASSIGN(d.negA,
        readFloats(model, layerTensor(il, firstPresent(model, il, "ssm_a", "ssm_a.weight")), nV));
    if (!model.conventions.ssmAIsNegExp)
        for (auto& a : d.negA)
            a = -std::exp(a);
    CW_TRY_ASSIGN(d.norm, readFloats(model, layerTensor(il, "ssm_norm.weight"), dv));
    return {};
}

} // namespace

Result<ModelWeights> bindQwen35MoeWeights(const ModelDescription& model)
{
    const auto& hp = model.hparams;
    const bool zeroCentred = !model.conventions.normWeightsIncludeOne;
    ModelWeights w;
    if (auto r = bindCommon(model, zeroCentred, w); !r)
        return r.error();
    if (std::int64_t(hp.layerKinds.size()) != hp.numLayers)
        return makeError(model.sourcePath + ": " + std::to_string(hp.layerKinds.size())
            + " layer kinds for " + std::to_string(hp.numLayers) + " layers");
    if (hp.numHeads <= 0 || hp.numKvHeads <= 0 || hp.numHeads % hp.numKvHeads)
        return makeError(model.sourcePath + ": " + std::to_string(hp.numHeads)
            + " attention heads cannot share " + std::to_string(hp.numKvHeads) + " KV heads");
    const std::int64_t qDim = hp.numHeads * hp.headDim;
    const std::int64_t kvDim = hp.numKvHeads * hp.headDim;
    const std::int64_t qRows = hp.attentionOutputGate ? 2 * qDim : qDim;
    int attentionLayers = 0, deltaLayers = 0;
    for (std::int64_t il = 0; il < hp.numLayers; ++il) {
        LayerWeights L;
        L.kind = hp.layerKinds[std::size_t(il)];
        CW_TRY_ASSIGN(L.inputNorm,
            readNorm(model, layerTensor(il, "attn_norm.weight"), hp.hiddenSize, zeroCentred));
        CW_TRY_ASSIGN(L.postAttentionNorm,
            readNorm(
                model, layerTensor(il, "post_attention_norm.weight"), hp.hiddenSize, zeroCentred));
        if (L.kind == LayerKind::FullAttention) {
            L.cacheIndex = attentionLayers++;
            auto& a = L.attention;
            CW_TRY_ASSIGN(
                a.q, bindMatrix(model, layerTensor(il, "attn_q.weight"), hp.hiddenSize, qRows));
            CW_TRY_ASSIGN(
                a.k, bindMatrix(model, layerTensor(il, "attn_k.weight"), hp.hiddenSize, kvDim));
            CW_TRY_ASSIGN(
                a.v, bindMatrix(model, layerTensor(il, "attn_v.weight"), hp.hiddenSize, kvDim));
            CW_TRY_ASSIGN(
                a.o, bindMatrix(model, layerTensor(il, "attn_output.weight"), qDim, hp.hiddenSize));
            CW_TRY_ASSIGN(a.qNorm,
                readNorm(model, layerTensor(il, "attn_q_norm.weight"), hp.headDim, zeroCentred));
            CW_TRY_ASSIGN(a.kNorm,
                readNorm(model, layerTensor(il, "attn_k_norm.weight"), hp.headDim, zeroCentred));
        } else {
            L.stateIndex = deltaLayers++;
            if (auto r = bindDeltaNet(model, il, L.deltaNet); !r)
                return r.error();
        }
        CW_TRY_ASSIGN(L.moe, bindMoe(model, il));
        if (hp.sharedExpertFfnSize > 0) {
            auto& m = L.moe;
            const std::int64_t sh = hp.sharedExpertFfnSize;
            CW_TRY_ASSIGN(m.sharedGate,
                readFloats(model, layerTensor(il, "ffn_gate_inp_shexp.weight"), hp.hiddenSize));
            CW_TRY_ASSIGN(m.sharedGateProj,
                bindMatrix(model, layerTensor(il, "ffn_gate_shexp.weight"), hp.hiddenSize, sh));
            CW_TRY_ASSIGN(m.sharedUp,
                bindMatrix(model, layerTensor(il, "ffn_up_shexp.weight"), hp.hiddenSize, sh));
            CW_TRY_ASSIGN(m.sharedDown,
                bindMatrix(model, layerTensor(il, "ffn_down_shexp.weight"), sh, hp.hiddenSize));
        }
        w.layers.push_back(std::move(L));
    }
    return w;
}

} // namespace cw::engine
