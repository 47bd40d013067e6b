#pragma once

#include "engine/common/result.h"
#include "engine/model/model_description.h"
#include "engine/models/model_weights.h"
#include "engine/models/step_timers.h"
#include "engine/models/step_workspace.h"
#include "engine/runtime/kv_cache.h"
#include "engine/runtime/sequence.h"
#include "kernels/cpu/thread_pool.h"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace cw::engine {

struct ModelOptions {
    int threads = 0; // 0: every hardware thread
    int kvBlockTokens = 16;
    std::int64_t maxKvTokens = 0; // 0: 8 contexts' worth (blocks are allocated on demand)
    std::int64_t prefillChunk = 256; // tokens per step when prefilling a long prompt
    // K-quant weights (Q4_K, Q5_K, Q6_K) multiply activations rounded to 8 bits per value with
    // integer dot products, as llama.cpp does: several times less work per weight byte than
    // converting every weight to float. Off: float activations (slower, for comparisons).
    bool integerProducts = true;
};

// Tokens to add to one sequence in a step, and which logits to return for them.
struct ForwardRequest {
    Sequence* sequence = nullptr;
    std::span<const std::int32_t> tokens;
    bool allLogits = false; // false: only the last token's logits
};

// A loaded model on the CPU: the description (weights memory-mapped), the weights bound for
// its architecture's graph, a thread pool and the KV block pool its sequences share.
class Model {
public:
    static Result<std::unique_ptr<Model>> create(
        ModelDescription description, ModelOptions options = {});
    ~Model();

    const ModelDescription& description() const { return m_description; }
    const HyperParameters& hparams() const { return m_description.hparams; }
    std::int64_t vocabSize() const { return m_description.hparams.vocabSize; }
    kernels::ThreadPool& threads() { return *m_pool; }
    const KvCachePool& kvCache() const { return *m_kv; }
    // Time per part of the forward pass, summed over steps since the last reset.
    const StepTimers& stepTimers() const { return m_timers; }
    void resetStepTimers() { m_timers.reset(); }

    std::unique_ptr<Sequence> newSequence();
    // A sequence with the same tokens and state; KV blocks are shared until one of the two
    // writes into a shared block (copy on write), DeltaNet states are copied.
    std::unique_ptr<Sequence> fork(const Sequence& parent);

    // One forward step over several sequences (prefill chunks and decode tokens together).
    // Returns logits rows [rows][vocab] in request order: every token of a request with
    // allLogits, else its last token. Errors: a token id out of range, a sequence that would
    // exceed the context, a full KV cache, NaN/Inf in the hidden state (names the layer).
    // One step at a time per Model: steps share its thread pool and its step buffers.
    Result<std::vector<float>> step(std::span<const ForwardRequest> requests);

    // Feeds a whole prompt in chunks of options.prefillChunk tokens; returns the logits of
    // every token (allLogits) or of the last.
    Result<std::vector<float>> prefill(
        Sequence& sequence, std::span<const std::int32_t> tokens, bool allLogits = false);

private:
    friend class Sequence;
    Model(ModelDescription description, ModelWeights weights, ModelOptions options);
    void releaseBlocks(Sequence& sequence);

    ModelDescription m_description;
    ModelWeights m_weights;
    ModelOptions m_options;
    std::unique_ptr<kernels::ThreadPool> m_pool;
    std::unique_ptr<KvCachePool> m_kv;
    int m_attentionLayers = 0;
    int m_deltaLayers = 0;
    StepTimers m_timers;
    StepWorkspace m_workspace; // buffers reused by every step
};

} // namespace cw::engine
