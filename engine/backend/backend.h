#pragma once

// The seam between the model graph (engine/runtime/model.cpp) and the processor it runs on,
// in the spirit of ggml's backend table: a small set of layer-level operations over
// activations, weights, KV storage and recurrent states that the backend owns. The graph is
// written once against this interface; CpuBackend runs it with the kernels of kernels/cpu,
// CudaBackend with those of kernels/cuda, activations never leaving the device between
// operations.
//
// A step is: beginStep (the rows of every sequence), embed, then per layer norm, attention or
// deltaNet, norm with the residual, moe; a last norm with the residual; finishStep for the
// logits. Operations of one step may run asynchronously; finishStep returns the first error
// of the step (a CUDA error, non-finite values), after which the backend is usable again.

#include "engine/common/result.h"
#include "engine/models/expert_load.h"
#include "engine/models/step_timers.h"
#include "engine/runtime/kv_block_store.h"
#include "kernels/token_draw.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace cw::engine {

class ModelDescription;
struct ModelWeights;

// The rows of one sequence in a step: token rows [row0, row0 + n) at positions
// [pos0, pos0 + n), its KV blocks and its recurrent-state slot (-1 without DeltaNet layers).
struct BackendSequence {
    std::int64_t row0 = 0;
    std::int64_t n = 0;
    std::int64_t pos0 = 0;
    const std::vector<int>* kvBlocks = nullptr;
    int stateSlot = -1;
};

struct BackendStep {
    std::span<const std::int32_t> tokens; // every row's token, sequence after sequence
    std::vector<BackendSequence> sequences;
    std::vector<std::int64_t> logitRows; // rows whose logits finishStep returns, in order
    bool wantLogits = true; // false: only the greedy tokens (the logits stay on the device)
    // With wantLogits, per logitRows entry: whether its logits cross to the host (a sampled
    // or grammar-masked sequence's row) or only its greedy token; empty: every row's.
    std::vector<bool> hostRows;
    // Per logitRows entry: the token to draw from that row where its logits are (a sampled
    // sequence's row that needs no host work); empty: every row greedy. A drawn row's token
    // replaces its greedy one in StepOutput::greedy.
    std::vector<kernels::TokenDraw> draws;
};

struct StepOutput {
    std::vector<float> logits; // [rows chosen by hostRows, in order][vocab] when wanted
    // Per logit row: the highest logit's token (lowest id of equals), or the token drawn for
    // it (BackendStep::draws); -1 where a draw found no usable logit.
    std::vector<std::int32_t> greedy;
};

// Which RMSNorm weight a norm applies.
struct NormSite {
    enum class Kind { LayerInput, PostAttention, Output } kind = Kind::LayerInput;
    int layer = 0;
};

// What a backend was asked to hold when it was created.
struct BackendCapacity {
    std::int64_t contextLength = 0; // tokens per sequence
    std::int64_t kvBlocks = 0; // blocks of the KV pool
    int kvBlockTokens = 16;
    int maxSequences = 0; // recurrent-state slots (0: grow on demand, CPU only)
    std::int64_t maxStepRows = 0; // token rows of the largest step (prefill chunk)
};

class Backend {
public:
    virtual ~Backend() = default;

    // "CPU (16 threads)", "NVIDIA H200 (cuda:0)".
    virtual std::string deviceName() const = 0;
    virtual bool isGpu() const = 0;
    // A plain-text account of the memory the backend holds (weights, KV, states, workspace).
    virtual std::string memoryPlan() const = 0;
    // Peak device (or host, for the CPU) memory this backend has allocated, in bytes.
    virtual std::uint64_t peakMemoryBytes() const = 0;

    virtual KvBlockStore& kvStore() = 0;

    // Recurrent-state slots of the DeltaNet layers: a fresh zeroed slot, a copy of one, and
    // its release. Errors: every slot taken.
    virtual Result<int> newState() = 0;
    virtual Result<int> copyState(int from) = 0;
    virtual void releaseState(int slot) = 0;

    virtual Result<void> beginStep(const BackendStep& step) = 0;
    virtual void embed() = 0;
    // normed = rmsNorm(hidden) * w(site), after hidden += delta when addResidual.
    virtual void norm(NormSite site, bool addResidual) = 0;
    // delta = block(normed) for layer `layer`.
    virtual void attention(int layer) = 0;
    virtual void deltaNet(int layer) = 0;
    virtual void moe(int layer) = 0;
    // Logits of step.logitRows ([rows][vocab]) from the normed rows (after the Output norm),
    // and the greedy token of each.
    virtual Result<StepOutput> finishStep() = 0;
    // The logits of the last finished step's logit rows `rows` (indices into its logitRows)
    // [rows][vocab], for rows whose greedy token a grammar refused, until the next step begins.
    // A step of more than keptLogitRows() logit rows keeps none (an error here).
    virtual Result<std::vector<float>> keptLogits(std::span<const std::int64_t> rows) = 0;
    virtual std::int64_t keptLogitRows() const = 0;

    // Time per part of the forward pass (the CPU measures them; others may count steps only).
    virtual const StepTimers& stepTimers() const = 0;
    virtual void resetStepTimers() = 0;
    // Routed experts chosen per MoE layer since load; null where the backend does not count
    // them (the CUDA backend keeps its choices on the device).
    virtual const ExpertLoad* expertLoad() const { return nullptr; }
};

} // namespace cw::engine
