#pragma once

// The CPU backend's layer pieces, which both graphs share, over a batch of T token rows that belong
// to several sequences: attention over the paged KV cache, the Gated DeltaNet, the MoE block.

#include "engine/backend/cpu/cpu_kv_store.h"
#include "engine/backend/cpu/step_workspace.h"
#include "engine/model/model_description.h"
#include "engine/models/expert_load.h"
#include "engine/models/model_weights.h"
#include "engine/models/step_timers.h"
#include "kernels/cpu/thread_pool.h"

#include <cstdint>
#include <span>
#include <vector>

namespace cw::engine {

// The rows of one sequence in a step: token rows [row0, row0+n) at positions [pos0, pos0+n).
struct StepSequence {
    std::int64_t row0 = 0;
    std::int64_t n = 0;
    std::int64_t pos0 = 0;
    const std::vector<int>* kvBlocks = nullptr;
    std::vector<float>* convState = nullptr; // set per DeltaNet layer by the caller
    std::vector<float>* recurrentState = nullptr;
};

struct StepContext {
    const HyperParameters* hp = nullptr;
    const WeightConventions* conventions = nullptr;
    const ModelWeights* weights = nullptr;
    kernels::ThreadPool* pool = nullptr;
    CpuKvStore* kv = nullptr;
    std::int64_t rows = 0; // T
    std::vector<StepSequence> sequences;
    StepTimers* timers = nullptr; // may be null
    bool integerProducts = true; // ModelOptions::integerProducts
    StepWorkspace* workspace = nullptr; // reused buffers; one step at a time
};

// y[T][W.rows] = x[T][W.cols] * W^T. K-quant weights multiply x quantized to 8 bits (Q8_K)
// with integer dot products, as llama.cpp does; other types multiply x as floats.
void linear(
    const StepContext& ctx, const WeightMatrix& w, const float* x, std::int64_t rows, float* y);

// Whether products with w take x quantized to Q8_K (a k-quant type and integer products on).
bool usesQ8K(const StepContext& ctx, const WeightMatrix& w);

// x rows as Q8_K into `q` (resized; its storage is reused between calls).
const kernels::quant::BlockQ8K* quantizeRows(
    const float* x, std::int64_t rows, std::int64_t cols, std::vector<kernels::quant::BlockQ8K>& q);

// Several matrices applied to the same input (q, k, v; or qkv, z, a, b): for a single token
// they share one parallel region, so a decode step waits for the threads once, not per matrix.
struct Projection {
    const WeightMatrix* w;
    float* y; // [T][w->rows]
};
void linearMany(const StepContext& ctx, std::span<const Projection> projections, const float* x,
    std::int64_t rows);

// Attention (Qwen3: plain; Qwen3.5: gated output) for the normalised input x; writes
// out[T][hidden].
void attentionLayer(const StepContext& ctx, const LayerWeights& layer, const float* x, float* out);

// Gated DeltaNet for x; uses ctx.sequences[i].convState/recurrentState; writes out[T][hidden].
void deltaNetLayer(const StepContext& ctx, const LayerWeights& layer, const float* x, float* out);

// Where a layer's experts are read from when not from the model's own tensors: per stack, each
// expert's first byte, laid out as in the model (the CUDA backend's pinned copies of the experts
// it keeps in host memory, so the model file's pages of them are not kept warm as well).
struct ExpertBases {
    const std::vector<const std::byte*>* gate = nullptr;
    const std::vector<const std::byte*>* up = nullptr;
    const std::vector<const std::byte*>* down = nullptr;
};

// One token through the routed experts `chosen` ((expert, weight), ascending experts):
// out[hidden] = sum of weight * down(silu(gate x) * up x), on ctx.pool. Also what the CUDA
// backend runs on the host for the experts it keeps in host memory (host_experts.h), reading
// them at `bases` when given.
void routedExpertsOneToken(const StepContext& ctx, const MoeWeights& m, const float* x,
    const std::vector<std::pair<int, float>>& chosen, float* out,
    const ExpertBases* bases = nullptr);

// MoE block (routed experts, tokens grouped per expert, plus the shared expert if any).
// `load` (may be null) counts the experts chosen, as layer `layerIndex`.
void moeLayer(const StepContext& ctx, const LayerWeights& layer, bool renormalise, const float* x,
    float* out, ExpertLoad* load = nullptr, int layerIndex = 0);

} // namespace cw::engine
