#include "engine/backend/cpu/cpu_backend.h"

#include "kernels/compute_devices.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/ops/token_draw.h"
#include "kernels/cpu/quant/dequantize.h"

#include <algorithm>
#include <string>

namespace cw::engine {

namespace ops = kernels::ops;

std::string CpuBackend::blockBefore(NormSite site) const
{
    const int last = int(m_weights.layers.size()) - 1;
    if (site.kind == NormSite::Kind::PostAttention)
        return std::string(
                   m_weights.layers[std::size_t(site.layer)].kind == LayerKind::FullAttention
                       ? "attention"
                       : "Gated DeltaNet")
            + " of layer " + std::to_string(site.layer);
    const int layer = site.kind == NormSite::Kind::Output ? last : site.layer - 1;
    return "MoE block of layer " + std::to_string(layer);
}

CpuBackend::CpuBackend(const ModelDescription& description, const ModelWeights& weights,
    const CpuBackendOptions& options)
    : m_description(description)
    , m_weights(weights)
    , m_pool(std::make_unique<kernels::ThreadPool>(options.threads))
    , m_kv(weights.layersOf(LayerKind::FullAttention),
          description.hparams.numKvHeads * description.hparams.headDim, options.kvBlockTokens)
    , m_deltaLayers(weights.layersOf(LayerKind::GatedDeltaNet))
    , m_integerProducts(options.integerProducts)
    , m_renormalise(description.hparams.architecture == Architecture::Qwen35Moe
          || description.hparams.normTopkProb)
{
    if (description.hparams.numExperts > 0)
        m_expertLoad = std::make_unique<ExpertLoad>(
            int(description.hparams.numLayers), int(description.hparams.numExperts));
}

std::string CpuBackend::deviceName() const
{
    std::string name = "CPU";
    for (const auto& device : kernels::listComputeDevices())
        if (device.kind == kernels::DeviceKind::Cpu && !device.name.empty())
            name = device.name;
    return name + " (" + std::to_string(m_pool->size()) + " threads)";
}

std::string CpuBackend::memoryPlan() const
{
    const double mib = 1024.0 * 1024.0;
    return "CPU memory: weights memory-mapped from " + m_description.sourcePath + "; KV cache "
        + std::to_string(int(double(m_kv.bytes()) / mib))
        + " MiB and recurrent states grow on demand";
}

std::uint64_t CpuBackend::peakMemoryBytes() const
{
    std::uint64_t bytes = m_kv.bytes();
    for (const auto& state : m_states)
        for (std::size_t i = 0; i < state.conv.size(); ++i)
            bytes += (state.conv[i].size() + state.recurrent[i].size()) * sizeof(float);
    return bytes;
}

Result<int> CpuBackend::newState()
{
    const auto& hp = m_description.hparams;
    int slot = -1;
    for (std::size_t i = 0; i < m_stateUsed.size() && slot < 0; ++i)
        if (!m_stateUsed[i])
            slot = int(i);
    if (slot < 0) {
        slot = int(m_states.size());
        m_states.emplace_back();
        m_stateUsed.push_back(false);
    }
    const std::int64_t convDim = 2 * hp.linearNumKeyHeads * hp.linearKeyHeadDim
        + hp.linearNumValueHeads * hp.linearValueHeadDim;
    State& s = m_states[std::size_t(slot)];
    s.conv.assign(std::size_t(m_deltaLayers),
        std::vector<float>(std::size_t(convDim * (hp.linearConvKernel - 1)), 0.0f));
    s.recurrent.assign(std::size_t(m_deltaLayers),
        std::vector<float>(
            std::size_t(hp.linearNumValueHeads * hp.linearKeyHeadDim * hp.linearValueHeadDim),
            0.0f));
    m_stateUsed[std::size_t(slot)] = true;
    return slot;
}

Result<int> CpuBackend::copyState(int from)
{
    auto slot = newState();
    if (!slot)
        return slot;
    m_states[std::size_t(*slot)] = m_states[std::size_t(from)];
    return slot;
}

void CpuBackend::releaseState(int slot)
{
    m_stateUsed[std::size_t(slot)] = false;
    m_states[std::size_t(slot)] = State {};
}

Result<void> CpuBackend::beginStep(const BackendStep& step)
{
    m_step = &step;
    m_keptRows = 0;
    m_nonFinite.clear();
    m_ctx = StepContext {};
    m_ctx.hp = &m_description.hparams;
    m_ctx.conventions = &m_description.conventions;
    m_ctx.weights = &m_weights;
    m_ctx.pool = m_pool.get();
    m_ctx.kv = &m_kv;
    m_ctx.timers = &m_timers;
    m_ctx.integerProducts = m_integerProducts;
    m_ctx.workspace = &m_workspace;
    for (const auto& s : step.sequences) {
        StepSequence q;
        q.row0 = s.row0;
        q.n = s.n;
        q.pos0 = s.pos0;
        q.kvBlocks = s.kvBlocks;
        m_ctx.sequences.push_back(q);
        m_ctx.rows += s.n;
    }
    const std::size_t values = std::size_t(m_ctx.rows * m_description.hparams.hiddenSize);
    m_workspace.hidden.resize(values);
    m_workspace.normed.resize(values);
    m_workspace.delta.resize(values);
    ++m_timers.steps;
    return {};
}

void CpuBackend::embed()
{
    PartTimer time(&m_timers, StepPart::Embedding);
    const std::int64_t H = m_description.hparams.hiddenSize;
    const auto* emb = m_weights.embedding;
    const std::size_t stride = std::size_t(*kernels::rowBytes(emb->type, std::uint64_t(H)));
    std::int64_t row = 0;
    for (const auto id : m_step->tokens)
        kernels::quant::dequantizeRow(emb->type, emb->data + stride * std::size_t(id),
            m_workspace.hidden.data() + H * row++, H);
}

void CpuBackend::norm(NormSite site, bool addResidual)
{
    PartTimer time(&m_timers, StepPart::Norms);
    const std::int64_t H = m_description.hparams.hiddenSize, T = m_ctx.rows;
    auto& hidden = m_workspace.hidden;
    if (addResidual) {
        for (std::size_t i = 0; i < std::size_t(T * H); ++i)
            hidden[i] += m_workspace.delta[i];
        // The step's verdict is given once, in finishStep; the first block that went
        // non-finite is remembered so the message can name it.
        if (m_nonFinite.empty() && !ops::allFinite(hidden.data(), T * H))
            m_nonFinite = blockBefore(site);
    }
    const std::vector<float>* w = &m_weights.outputNorm;
    if (site.kind == NormSite::Kind::LayerInput)
        w = &m_weights.layers[std::size_t(site.layer)].inputNorm;
    else if (site.kind == NormSite::Kind::PostAttention)
        w = &m_weights.layers[std::size_t(site.layer)].postAttentionNorm;
    const float eps = float(m_description.hparams.rmsNormEps);
    for (std::int64_t t = 0; t < T; ++t)
        ops::rmsNorm(hidden.data() + t * H, w->data(), H, eps, m_workspace.normed.data() + t * H);
}

void CpuBackend::attention(int layer)
{
    attentionLayer(m_ctx, m_weights.layers[std::size_t(layer)], m_workspace.normed.data(),
        m_workspace.delta.data());
}

void CpuBackend::deltaNet(int layer)
{
    const auto& weights = m_weights.layers[std::size_t(layer)];
    for (std::size_t i = 0; i < m_step->sequences.size(); ++i) {
        State& s = m_states[std::size_t(m_step->sequences[i].stateSlot)];
        m_ctx.sequences[i].convState = &s.conv[std::size_t(weights.stateIndex)];
        m_ctx.sequences[i].recurrentState = &s.recurrent[std::size_t(weights.stateIndex)];
    }
    deltaNetLayer(m_ctx, weights, m_workspace.normed.data(), m_workspace.delta.data());
}

void CpuBackend::moe(int layer)
{
    moeLayer(m_ctx, m_weights.layers[std::size_t(layer)], m_renormalise, m_workspace.normed.data(),
        m_workspace.delta.data(), m_expertLoad.get(), layer);
}

Result<StepOutput> CpuBackend::finishStep()
{
    PartTimer time(&m_timers, StepPart::OutputHead);
    const std::int64_t H = m_description.hparams.hiddenSize;
    const auto& wanted = m_step->logitRows;
    const std::int64_t outRows = std::int64_t(wanted.size());
    if (!m_nonFinite.empty()) {
        const std::string block = std::move(m_nonFinite);
        m_nonFinite.clear();
        m_step = nullptr;
        return makeError(
            "the forward pass produced NaN or Inf in the hidden state after the " + block);
    }
    std::vector<float> rows(std::size_t(outRows * H));
    for (std::int64_t i = 0; i < outRows; ++i)
        std::copy_n(m_workspace.normed.data() + wanted[std::size_t(i)] * H, H, rows.data() + i * H);
    const std::int64_t V = m_description.hparams.vocabSize;
    StepOutput out;
    std::vector<float>& logits = m_keptLogits; // m_keptRows is 0 since beginStep
    logits.resize(std::size_t(outRows * V));
    linear(m_ctx, m_weights.output, rows.data(), outRows, logits.data());
    if (!ops::allFinite(logits.data(), std::int64_t(logits.size()))) {
        m_step = nullptr;
        return makeError("the forward pass produced NaN or Inf in the logits (output head)");
    }
    const auto& draws = m_step->draws;
    for (std::int64_t i = 0; i < outRows; ++i) {
        const float* row = logits.data() + i * V;
        if (!draws.empty() && kernels::drawsAToken(draws[std::size_t(i)]))
            out.greedy.push_back(ops::drawToken(row, V, draws[std::size_t(i)]));
        else
            out.greedy.push_back(std::int32_t(std::max_element(row, row + V) - row));
    }
    // The host computed every row (the greedy tokens need them). Every row wanted (a prompt's
    // logits, say): they move out, and none is kept. Else the chosen ones go out, as the GPU
    // copies only those, and all stay for keptLogits.
    const auto& hostRows = m_step->hostRows;
    if (m_step->wantLogits && hostRows.empty()) {
        out.logits = std::move(logits);
        logits.clear();
    } else {
        if (m_step->wantLogits)
            for (std::int64_t i = 0; i < outRows; ++i)
                if (hostRows[std::size_t(i)])
                    out.logits.insert(
                        out.logits.end(), logits.begin() + i * V, logits.begin() + (i + 1) * V);
        m_keptRows = outRows;
    }
    m_step = nullptr;
    return out;
}

Result<std::vector<float>> CpuBackend::keptLogits(std::span<const std::int64_t> rows)
{
    const std::size_t V = std::size_t(m_description.hparams.vocabSize);
    std::vector<float> out;
    out.reserve(rows.size() * V);
    for (const std::int64_t r : rows) {
        if (r < 0 || r >= m_keptRows)
            return makeError("the last step kept no logits for row " + std::to_string(r));
        out.insert(out.end(), m_keptLogits.begin() + std::ptrdiff_t(std::size_t(r) * V),
            m_keptLogits.begin() + std::ptrdiff_t(std::size_t(r + 1) * V));
    }
    return out;
}

} // namespace cw::engine
