#include "engine/runtime/model.h"

#include "engine/backend/backend_factory.h"
#include "engine/runtime/kv_pool_size.h"
#include "engine/runtime/model_cache_folder.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace cw::engine {

Sequence::Sequence(Model& model)
    : m_model(&model)
{
}

Sequence::~Sequence()
{
    m_model->releaseSequence(*this);
}

Result<std::unique_ptr<Model>> Model::create(ModelDescription description, ModelOptions options)
{
    auto device = parseDevice(options.device);
    if (!device)
        return device.error();
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
    if (options.kvBlockTokens <= 0 || options.prefillChunk < 0 || options.maxSequences <= 0)
        return makeError("KV block size and sequence count must be positive, the prefill chunk not "
                         "negative");
    if (options.contextLength < 0)
        return makeError("the context length must not be negative");
    if (options.gpuPrecision != "f32" && options.gpuPrecision != "tf32"
        && options.gpuPrecision != "bf16")
        return makeError(
            "precision '" + options.gpuPrecision + "' is not one of f32, tf32 or bf16");
    if (!(options.gpuMemoryGiB >= 0.0) || !std::isfinite(options.gpuMemoryGiB))
        return makeError("the GPU memory budget must be a number of GiB, 0 or more (0: the "
                         "card's free memory)");
    std::unique_ptr<Model> model(new Model(std::move(description), std::move(*weights)));

    const auto& hp = model->hparams();
    const bool mayUseGpu = device->kind != DeviceSpec::Kind::Cpu;
    std::int64_t context = hp.contextLength > 0 ? hp.contextLength : kDefaultGpuContext;
    if (options.contextLength > 0) {
        if (hp.contextLength > 0 && options.contextLength > hp.contextLength)
            return makeError("a context of " + std::to_string(options.contextLength)
                + " tokens is more than the model's " + std::to_string(hp.contextLength));
        context = options.contextLength;
    } else if (mayUseGpu) {
        context = std::min(context, kDefaultGpuContext);
    }
    model->m_contextLength = context;

    BackendRequest request;
    request.device = *device;
    request.threads = options.threads;
    request.integerProducts = options.integerProducts;
    request.gpuPrecision = options.gpuPrecision;
    request.gpuMemoryBytes = std::uint64_t(options.gpuMemoryGiB * double(1ull << 30));
    if (mayUseGpu && options.keepExpertCounts && model->hparams().numExperts > 0) {
        const std::string folder = modelCacheFolder(model->m_description.sourcePath);
        if (!folder.empty())
            request.expertCountsPath = folder + "/expert-counts.bin";
    }
    auto& capacity = request.capacity;
    capacity.contextLength = context;
    capacity.kvBlockTokens = options.kvBlockTokens;
    capacity.maxSequences = options.maxSequences;
    std::int64_t kvTokens = options.maxKvTokens;
    if (kvTokens <= 0)
        kvTokens = defaultKvPoolTokens(context, options.maxSequences, mayUseGpu);
    capacity.kvBlocks = (kvTokens + options.kvBlockTokens - 1) / options.kvBlockTokens;
    // Prefill chunk: the GPU's tensor cores want large products; the CPU shorter steps so a
    // cancel lands quickly. The GPU's step workspace is sized for the largest step.
    const std::int64_t chunk = options.prefillChunk;
    capacity.maxStepRows
        = std::max<std::int64_t>(chunk > 0 ? chunk : kGpuPrefillChunk, options.maxSequences);
    auto backend = createBackend(model->m_description, model->m_weights, request);
    if (!backend)
        return backend.error();
    model->m_backend = std::move(*backend);
    model->m_prefillChunk
        = chunk > 0 ? chunk : (model->m_backend->isGpu() ? kGpuPrefillChunk : kCpuPrefillChunk);
    model->m_kv = std::make_unique<KvCachePool>(
        options.kvBlockTokens, capacity.kvBlocks, model->m_backend->kvStore());
    return model;
}

Model::Model(ModelDescription description, ModelWeights weights)
    : m_description(std::move(description))
    , m_weights(std::move(weights))
    , m_deltaLayers(m_weights.layersOf(LayerKind::GatedDeltaNet))
    , m_attentionLayers(m_weights.layersOf(LayerKind::FullAttention))
{
}

Model::~Model() = default;

std::unique_ptr<Sequence> Model::newSequence()
{
    std::unique_ptr<Sequence> s(new Sequence(*this));
    if (m_deltaLayers > 0) {
        auto slot = m_backend->newState();
        if (slot)
            s->m_stateSlot = *slot;
        else
            s->m_stateError = slot.error().message;
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
    if (m_deltaLayers > 0) {
        auto slot = parent.m_stateSlot >= 0 ? m_backend->copyState(parent.m_stateSlot)
                                            : Result<int>(makeError(parent.m_stateError));
        if (slot)
            s->m_stateSlot = *slot;
        else
            s->m_stateError = slot.error().message;
    }
    return s;
}

void Model::releaseSequence(Sequence& sequence)
{
    for (int block : sequence.m_blocks)
        m_kv->release(block);
    sequence.m_blocks.clear();
    if (sequence.m_stateSlot >= 0)
        m_backend->releaseState(sequence.m_stateSlot);
    sequence.m_stateSlot = -1;
}

Result<void> Model::reserveBlocks(const ForwardRequest& r)
{
    // KV blocks for the new positions; a shared partly filled block is copied first.
    const int bt = m_kv->blockTokens();
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
    return {};
}

Result<std::vector<float>> Model::step(std::span<const ForwardRequest> requests)
{
    auto out = run(requests, LogitsToHost::All);
    if (!out)
        return out.error();
    return std::move(out->logits);
}

Result<StepOutput> Model::stepSampling(std::span<const ForwardRequest> requests)
{
    return run(requests, LogitsToHost::Chosen);
}

Result<std::vector<float>> Model::keptLogits(std::span<const std::int64_t> rows)
{
    return m_backend->keptLogits(rows);
}

std::int64_t Model::keptLogitRows() const
{
    return m_backend->keptLogitRows();
}

Result<std::vector<std::int32_t>> Model::stepGreedy(std::span<const ForwardRequest> requests)
{
    auto out = run(requests, LogitsToHost::None);
    if (!out)
        return out.error();
    return std::move(out->greedy);
}

Result<StepOutput> Model::run(std::span<const ForwardRequest> requests, LogitsToHost logits)
{
    const auto& hp = hparams();
    BackendStep plan;
    std::vector<std::int32_t> tokens;
    std::int64_t rows = 0;
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
        if (after > m_contextLength)
            return makeError("the sequence would hold " + std::to_string(after)
                + " tokens, more than the context of " + std::to_string(m_contextLength));
        if (m_deltaLayers > 0 && r.sequence->m_stateSlot < 0)
            return makeError(
                "no recurrent-state slot for this sequence: " + r.sequence->m_stateError);
        BackendSequence s;
        s.row0 = rows;
        s.n = std::int64_t(r.tokens.size());
        s.pos0 = r.sequence->length();
        s.kvBlocks = &r.sequence->m_blocks;
        s.stateSlot = r.sequence->m_stateSlot;
        plan.sequences.push_back(s);
        tokens.insert(tokens.end(), r.tokens.begin(), r.tokens.end());
        const std::int64_t first = r.allLogits ? rows : rows + s.n - 1;
        for (std::int64_t t = first; t < rows + s.n; ++t) {
            plan.logitRows.push_back(t);
            if (logits == LogitsToHost::Chosen)
                plan.hostRows.push_back(r.hostLogits);
            if (logits == LogitsToHost::Chosen && !r.hostLogits && kernels::drawsAToken(r.draw)) {
                plan.draws.resize(plan.logitRows.size()); // rows before: greedy
                plan.draws.back() = r.draw;
            }
        }
        rows += s.n;
    }
    for (std::size_t i = 0; i < requests.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (requests[i].sequence == requests[j].sequence)
                return makeError("a sequence appears twice in one forward step");
    if (m_attentionLayers > 0)
        for (const auto& r : requests)
            if (auto reserved = reserveBlocks(r); !reserved)
                return reserved.error();
    if (!plan.draws.empty())
        plan.draws.resize(plan.logitRows.size());
    plan.tokens = tokens;
    plan.wantLogits = logits == LogitsToHost::All
        || (logits == LogitsToHost::Chosen
            && std::find(plan.hostRows.begin(), plan.hostRows.end(), true) != plan.hostRows.end());
    if (logits == LogitsToHost::Chosen
        && std::find(plan.hostRows.begin(), plan.hostRows.end(), false) == plan.hostRows.end())
        plan.hostRows.clear(); // every row: the plain full copy

    // The graph, the same on every backend.
    Backend& b = *m_backend;
    if (auto begun = b.beginStep(plan); !begun)
        return begun.error();
    b.embed();
    const int layers = int(m_weights.layers.size());
    for (int il = 0; il < layers; ++il) {
        b.norm({ NormSite::Kind::LayerInput, il }, il > 0);
        if (m_weights.layers[std::size_t(il)].kind == LayerKind::FullAttention)
            b.attention(il);
        else
            b.deltaNet(il);
        b.norm({ NormSite::Kind::PostAttention, il }, true);
        b.moe(il);
    }
    b.norm({ NormSite::Kind::Output, 0 }, true);
    auto out = b.finishStep();
    if (!out)
        return out.error();
    for (const auto& r : requests)
        r.sequence->m_tokens.insert(r.sequence->m_tokens.end(), r.tokens.begin(), r.tokens.end());
    return out;
}

Result<std::vector<float>> Model::prefill(
    Sequence& sequence, std::span<const std::int32_t> tokens, bool allLogits)
{
    if (tokens.empty())
        return makeError("the prompt is empty");
    if (sequence.length() + std::int64_t(tokens.size()) > m_contextLength)
        return makeError("the prompt of " + std::to_string(tokens.size())
            + " tokens does not fit the context of " + std::to_string(m_contextLength) + " tokens ("
            + std::to_string(sequence.length()) + " already used)");
    std::vector<float> all;
    std::vector<float> last;
    const std::size_t chunk = std::size_t(m_prefillChunk);
    for (std::size_t start = 0; start < tokens.size(); start += chunk) {
        const std::size_t n = std::min(tokens.size() - start, chunk);
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
