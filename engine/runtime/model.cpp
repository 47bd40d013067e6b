#include "engine/runtime/model.h"

#include "engine/models/layers.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/quant/dequantize.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace cw::engine {

namespace ops = kernels::ops;

Sequence::Sequence(Model& model)
    : m_model(&model)
{
}

Sequence::~Sequence()
{
    m_model->releaseBlocks(*this);
}

Result<std::unique_ptr<Model>> Model::create(ModelDescription description, ModelOptions options)
{
    Result<ModelWeights> weights = makeError("unsupported architecture");
    switch (description.hparams.architecture) {
    case Architecture::Qwen3Moe:
        weights = bindQwen3MoeWeights(description);
        break;
    case Architecture::Qwen35Moe:
        weights = bindQwen35MoeWeights(description);
        break;
    }
    if (!weights)
        return makeError(description.sourcePath + ": " + weights.error().message);
    if (options.kvBlockTokens <= 0 || options.prefillChunk <= 0)
        return makeError("KV block size and prefill chunk must be positive");
    return std::unique_ptr<Model>(new Model(std::move(description), std::move(*weights), options));
}

Model::Model(ModelDescription description, ModelWeights weights, ModelOptions options)
    : m_description(std::move(description))
    , m_weights(std::move(weights))
    , m_options(options)
{
    for (const auto& layer : m_weights.layers) {
        if (layer.kind == LayerKind::FullAttention)
            ++m_attentionLayers;
        else
            ++m_deltaLayers;
    }
    const auto& hp = m_description.hparams;
    m_pool = std::make_unique<kernels::ThreadPool>(options.threads);
    std::int64_t maxTokens = options.maxKvTokens;
    if (maxTokens <= 0)
        maxTokens = 8 * std::max<std::int64_t>(hp.contextLength, 4096);
    m_kv = std::make_unique<KvCachePool>(m_attentionLayers, hp.numKvHeads * hp.headDim,
        options.kvBlockTokens, (maxTokens + options.kvBlockTokens - 1) / options.kvBlockTokens);
}

Model::~Model() = default;

std::unique_ptr<Sequence> Model::newSequence()
{
    const auto& hp = hparams();
    std::unique_ptr<Sequence> s(new Sequence(*this));
    const std::int64_t convDim = 2 * hp.linearNumKeyHeads * hp.linearKeyHeadDim
        + hp.linearNumValueHeads * hp.linearValueHeadDim;
    for (int i = 0; i < m_deltaLayers; ++i) {
        s->m_convState.emplace_back(std::size_t(convDim * (hp.linearConvKernel - 1)), 0.0f);
        s->m_recurrentState.emplace_back(
            std::size_t(hp.linearNumValueHeads * hp.linearKeyHeadDim * hp.linearValueHeadDim),
            0.0f);
    }
    return s;
}

std::unique_ptr<Sequence> Model::fork(const Sequence& parent)
{
    std::unique_ptr<Sequence> s(new Sequence(*this));
    s->m_tokens = parent.m_tokens;
    s->m_blocks = parent.m_blocks;
    for (int block : s->m_blocks)
        m_kv->retain(block);
    s->m_convState = parent.m_convState;
    s->m_recurrentState = parent.m_recurrentState;
    return s;
}

void Model::releaseBlocks(Sequence& sequence)
{
    for (int block : sequence.m_blocks)
        m_kv->release(block);
    sequence.m_blocks.clear();
}

namespace {

Error nonFinite(std::int64_t layer, const char* part)
{
    return makeError("the forward pass produced NaN or Inf in the hidden state after the "
        + std::string(part) + " of layer " + std::to_string(layer));
}

} // namespace

Result<std::vector<float>> Model::step(std::span<const ForwardRequest> requests)
{
    const auto& hp = hparams();
    StepContext ctx;
    ctx.hp = &hp;
    ctx.conventions = &m_description.conventions;
    ctx.weights = &m_weights;
    ctx.pool = m_pool.get();
    ctx.kv = m_kv.get();
    ctx.timers = &m_timers;
    ctx.integerProducts = m_options.integerProducts;
    ctx.workspace = &m_workspace;
    ++m_timers.steps;
    std::int64_t outRows = 0;
    for (const auto& r : requests) {
        if (!r.sequence || r.sequence->m_model != this)
            return makeError("a forward request names a sequence of another model");
        if (r.tokens.empty())
            return makeError("a forward request has no tokens");
        for (const auto id : r.tokens)
            if (id < 0 || id >= hp.vocabSize)
                return makeError("token id " + std::to_string(id) + " is outside the vocabulary of "
                    + std::to_string(hp.vocabSize));
        const std::int64_t after = r.sequence->length() + std::int64_t(r.tokens.size());
        if (hp.contextLength > 0 && after > hp.contextLength)
            return makeError("the sequence would hold " + std::to_string(after)
                + " tokens, more than the model's context of " + std::to_string(hp.contextLength));
        StepSequence s;
        s.row0 = ctx.rows;
        s.n = std::int64_t(r.tokens.size());
        s.pos0 = r.sequence->length();
        s.kvBlocks = &r.sequence->m_blocks;
        ctx.sequences.push_back(s);
        ctx.rows += s.n;
        outRows += r.allLogits ? s.n : 1;
    }
    for (std::size_t i = 0; i < requests.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (requests[i].sequence == requests[j].sequence)
                return makeError("a sequence appears twice in one forward step");
    // KV blocks for the new positions; a shared partly filled block is copied first.
    if (m_attentionLayers > 0) {
        const int bt = m_kv->blockTokens();
        for (const auto& r : requests) {
            auto& blocks = r.sequence->m_blocks;
            const std::int64_t len = r.sequence->length();
            if (len % bt != 0) {
                auto own = m_kv->copyOnWrite(blocks.back());
                if (!own)
                    return own.error();
                blocks.back() = *own;
            }
            const std::int64_t need = (len + std::int64_t(r.tokens.size()) + bt - 1) / bt;
            while (std::int64_t(blocks.size()) < need) {
                auto b = m_kv->allocate();
                if (!b)
                    return b.error();
                blocks.push_back(*b);
            }
        }
    }

    const std::int64_t T = ctx.rows, H = hp.hiddenSize;
    auto& hidden = m_workspace.hidden;
    auto& normed = m_workspace.normed;
    auto& delta = m_workspace.delta;
    const std::size_t rowValues = static_cast<std::size_t>(T * H);
    hidden.resize(rowValues);
    normed.resize(rowValues);
    delta.resize(rowValues);
    {
        PartTimer time(&m_timers, StepPart::Embedding);
        const auto* emb = m_weights.embedding;
        const std::size_t stride = std::size_t(*kernels::rowBytes(emb->type, std::uint64_t(H)));
        std::int64_t row = 0;
        for (const auto& r : requests)
            for (const auto id : r.tokens)
                kernels::quant::dequantizeRow(
                    emb->type, emb->data + stride * std::size_t(id), hidden.data() + H * row++, H);
    }
    const float eps = float(hp.rmsNormEps);
    const bool renormalise = hp.architecture == Architecture::Qwen35Moe || hp.normTopkProb;
    for (std::size_t il = 0; il < m_weights.layers.size(); ++il) {
        const auto& layer = m_weights.layers[il];
        PartTimer normTime(&m_timers, StepPart::Norms);
        for (std::int64_t t = 0; t < T; ++t)
            ops::rmsNorm(
                hidden.data() + t * H, layer.inputNorm.data(), H, eps, normed.data() + t * H);
        normTime.stop();
        if (layer.kind == LayerKind::FullAttention) {
            attentionLayer(ctx, layer, normed.data(), delta.data());
        } else {
            for (std::size_t i = 0; i < requests.size(); ++i) {
                ctx.sequences[i].convState
                    = &requests[i].sequence->m_convState[std::size_t(layer.stateIndex)];
                ctx.sequences[i].recurrentState
                    = &requests[i].sequence->m_recurrentState[std::size_t(layer.stateIndex)];
            }
            deltaNetLayer(ctx, layer, normed.data(), delta.data());
        }
        PartTimer residualTime(&m_timers, StepPart::Norms);
        for (std::size_t i = 0; i < rowValues; ++i)
            hidden[i] += delta[i];
        if (!ops::allFinite(hidden.data(), T * H))
            return nonFinite(std::int64_t(il),
                layer.kind == LayerKind::FullAttention ? "attention" : "Gated DeltaNet");
        for (std::int64_t t = 0; t < T; ++t)
            ops::rmsNorm(hidden.data() + t * H, layer.postAttentionNorm.data(), H, eps,
                normed.data() + t * H);
        residualTime.stop();
        moeLayer(ctx, layer, renormalise, normed.data(), delta.data());
        PartTimer moeResidualTime(&m_timers, StepPart::Norms);
        for (std::size_t i = 0; i < rowValues; ++i)
            hidden[i] += delta[i];
        if (!ops::allFinite(hidden.data(), T * H))
            return nonFinite(std::int64_t(il), "MoE block");
    }

    // Final norm and the LM head on the rows whose logits are wanted.
    PartTimer headTime(&m_timers, StepPart::OutputHead);
    std::vector<float> rows(static_cast<std::size_t>(outRows * H));
    std::int64_t out = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const auto& s = ctx.sequences[i];
        const std::int64_t first = requests[i].allLogits ? s.row0 : s.row0 + s.n - 1;
        for (std::int64_t t = first; t < s.row0 + s.n; ++t)
            ops::rmsNorm(hidden.data() + t * H, m_weights.outputNorm.data(), H, eps,
                rows.data() + H * out++);
    }
    std::vector<float> logits(static_cast<std::size_t>(outRows * hp.vocabSize));
    linear(ctx, m_weights.output, rows.data(), outRows, logits.data());
    if (!ops::allFinite(logits.data(), std::int64_t(logits.size())))
        return makeError("the forward pass produced NaN or Inf in the logits (output head)");
    for (const auto& r : requests)
        r.sequence->m_tokens.insert(r.sequence->m_tokens.end(), r.tokens.begin(), r.tokens.end());
    return logits;
}

Result<std::vector<float>> Model::prefill(
    Sequence& sequence, std::span<const std::int32_t> tokens, bool allLogits)
{
    const auto& hp = hparams();
    if (tokens.empty())
        return makeError("the prompt is empty");
    if (hp.contextLength > 0 && sequence.length() + std::int64_t(tokens.size()) > hp.contextLength)
        return makeError("the prompt of " + std::to_string(tokens.size())
            + " tokens does not fit the context of " + std::to_string(hp.contextLength)
            + " tokens (" + std::to_string(sequence.length()) + " already used)");
    std::vector<float> all;
    std::vector<float> last;
    for (std::size_t start = 0; start < tokens.size();
         start += std::size_t(m_options.prefillChunk)) {
        const std::size_t n = std::min(tokens.size() - start, std::size_t(m_options.prefillChunk));
        const ForwardRequest r { &sequence, tokens.subspan(start, n), allLogits };
        auto logits = step(std::span<const ForwardRequest>(&r, 1));
        if (!logits)
            return logits.error();
        if (allLogits)
            all.insert(all.end(), logits->begin(), logits->end());
        else
            last = std::move(*logits);
    }
    return allLogits ? all : last;
}

} // namespace cw::engine
