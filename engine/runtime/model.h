#pragma once

#include "engine/backend/backend.h"
#include "engine/common/result.h"
#include "engine/model/model_description.h"
#include "engine/models/model_weights.h"
#include "engine/models/step_timers.h"
#include "engine/runtime/kv_cache.h"
#include "engine/runtime/sequence.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace cw::engine {

struct ModelOptions {
    // "cpu", "cuda:N" ("cuda" is cuda:0) or "auto" (the first CUDA device when there is one
    // with room for the model, else the CPU). A CUDA device that cannot take the model is an
    // error, never a silent fall back to the CPU.
    std::string device = "cpu";
    // Tokens per sequence; 0: the model's own context, capped at kDefaultGpuContext on a GPU
    // (the KV pool is sized from it there).
    std::int64_t contextLength = 0;
    // Sequences that may hold recurrent state at once (the GPU's state slots; the CPU grows).
    int maxSequences = 16;
    int threads = 0; // CPU threads; 0: every hardware thread
    int kvBlockTokens = 16;
    // KV pool size in tokens; 0: 8 contexts' worth on the CPU (allocated on demand), on a GPU
    // two contexts plus 1,024 tokens per further sequence (allocated at load).
    std::int64_t maxKvTokens = 0;
    // Tokens per step when prefilling a long prompt; 0: 256 on the CPU, 4,096 on a GPU.
    std::int64_t prefillChunk = 0;
    // K-quant weights (Q4_K, Q5_K, Q6_K) multiply activations rounded to 8 bits per value with
    // integer dot products, as llama.cpp does: several times less work per weight byte than
    // converting every weight to float. Off: float activations (slower, for comparisons). CPU.
    bool integerProducts = true;
    // GPU prefill products: "bf16" (tensor cores, fastest), "tf32" or "f32" (the reference).
    std::string gpuPrecision = "bf16";
    // GiB of GPU memory the model may take (weights, KV cache, states, workspace); 0: the
    // card's free memory. A model over it keeps its least chosen routed experts in host memory,
    // the GPU caching the most chosen (routing counts kept in the model's cache folder).
    double gpuMemoryGiB = 0.0;
    // Keep routing counts across runs in modelCacheFolder(); false: start unmeasured each load.
    bool keepExpertCounts = true;
};

constexpr std::int64_t kDefaultGpuContext = 32768;
// Default prefill chunks (ModelOptions::prefillChunk 0).
// On the CPU 512 tokens a step give each expert about 16 of them (8 at 256): a 512-token prompt
// on the 2-core machine read 30.5-31.1 tokens/s against 25.5-28.3 at 256 (interleaved runs).
constexpr std::int64_t kCpuPrefillChunk = 512;
constexpr std::int64_t kGpuPrefillChunk = 4096;

// Tokens to add to one sequence in a step, and which logits to return for them.
struct ForwardRequest {
    Sequence* sequence = nullptr;
    std::span<const std::int32_t> tokens;
    bool allLogits = false; // false: only the last token's logits
    // Model::stepSampling only: false when the greedy token of the request's row is all its
    // caller needs, so its logits stay on the device.
    bool hostLogits = true;
    // Model::stepSampling only, with hostLogits false: the token to draw from the row where
    // the logits are (StepOutput::greedy then holds the drawn token); greedy by default.
    kernels::TokenDraw draw {};
};

// A loaded model: the description (weights memory-mapped), the weights bound for its
// architecture's graph, the backend that runs the graph (and owns the weights' device copies,
// the KV storage and the recurrent states), and the KV block pool its sequences share.
class Model {
public:
    static Result<std::unique_ptr<Model>> create(
        ModelDescription description, ModelOptions options = {});
    ~Model();

    const ModelDescription& description() const { return m_description; }
    const HyperParameters& hparams() const { return m_description.hparams; }
    std::int64_t vocabSize() const { return m_description.hparams.vocabSize; }
    // Tokens one sequence may hold (ModelOptions::contextLength or the model's own).
    std::int64_t contextLength() const { return m_contextLength; }
    std::int64_t kvBlocksInUse() const { return m_kv->blocksInUse(); }
    int kvBlockTokens() const { return m_kv->blockTokens(); }
    std::int64_t kvMaxBlocks() const { return m_kv->maxBlocks(); }
    std::string deviceName() const { return m_backend->deviceName(); }
    // Tokens fed per step when prefilling (ModelOptions::prefillChunk or the device's default).
    std::int64_t prefillChunk() const { return m_prefillChunk; }
    bool onGpu() const { return m_backend->isGpu(); }
    std::string memoryPlan() const { return m_backend->memoryPlan(); }
    std::uint64_t peakMemoryBytes() const { return m_backend->peakMemoryBytes(); }
    // Time per part of the forward pass, summed over steps since the last reset.
    const StepTimers& stepTimers() const { return m_backend->stepTimers(); }
    void resetStepTimers() { m_backend->resetStepTimers(); }
    // Routed experts chosen per layer since load (null: not counted on this backend).
    const ExpertLoad* expertLoad() const { return m_backend->expertLoad(); }

    std::unique_ptr<Sequence> newSequence();
    // A sequence with the same tokens and state; KV blocks are shared until one of the two
    // writes into a shared block (copy on write), DeltaNet states are copied.
    std::unique_ptr<Sequence> fork(const Sequence& parent);

    // One forward step over several sequences (prefill chunks and decode tokens together).
    // Returns logits rows [rows][vocab] in request order: every token of a request with
    // allLogits, else its last token. Errors: a token id out of range, a sequence that would
    // exceed the context, a full KV cache, no free state slot, NaN/Inf in the hidden state
    // (names the block), a device error (the request fails; the model stays usable).
    // One step at a time per Model.
    Result<std::vector<float>> step(std::span<const ForwardRequest> requests);
    // The same step returning only each logit row's greedy token (argmax, lowest id among
    // equals): on a GPU the logits never leave the device.
    Result<std::vector<std::int32_t>> stepGreedy(std::span<const ForwardRequest> requests);
    // The step a scheduler runs when some sequences are greedy and others are sampled or
    // grammar-masked: every logit row's greedy token, and the logits of the rows of requests
    // with hostLogits only ([those rows, in order][vocab]; none cross when no request asks).
    Result<StepOutput> stepSampling(std::span<const ForwardRequest> requests);
    // After stepSampling, before the next step: the logits of its logit rows `rows` (indices in
    // request order, one row a request) that stayed on the device, [rows][vocab] — for a greedy
    // grammar-masked row whose device pick the grammar refused. A step of more logit rows
    // than keptLogitRows() keeps none.
    Result<std::vector<float>> keptLogits(std::span<const std::int64_t> rows);
    std::int64_t keptLogitRows() const;

    // Feeds a whole prompt in chunks of the prefill chunk; returns the logits of every token
    // (allLogits) or of the last.
    Result<std::vector<float>> prefill(
        Sequence& sequence, std::span<const std::int32_t> tokens, bool allLogits = false);

private:
    friend class Sequence;
    Model(ModelDescription description, ModelWeights weights);
    void releaseSequence(Sequence& sequence);
    Result<void> reserveBlocks(const ForwardRequest& request);
    enum class LogitsToHost { All, None, Chosen };
    Result<StepOutput> run(std::span<const ForwardRequest> requests, LogitsToHost logits);

    ModelDescription m_description;
    ModelWeights m_weights;
    std::int64_t m_contextLength = 0;
    std::int64_t m_prefillChunk = 0;
    int m_deltaLayers = 0;
    int m_attentionLayers = 0;
    std::unique_ptr<Backend> m_backend;
    std::unique_ptr<KvCachePool> m_kv;
};

} // namespace cw::engine
