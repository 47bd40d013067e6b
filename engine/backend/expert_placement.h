#pragma once

// Which routed experts live on the GPU when the model does not fit its memory budget: the
// most often chosen ones (routing counts per layer, kept across runs), as many as the bytes
// left for them allow; the others stay in host memory. No CUDA here: the CUDA backend's
// expert cache (engine/backend/cuda/expert_cache.h) applies the placement, tests check it.

#include <cstdint>
#include <string>
#include <vector>

namespace cw::engine {

struct ExpertPlacementRequest {
    int experts = 0; // routed experts per MoE layer
    // Per layer of the model: the bytes of one routed expert (its gate, up and down rows);
    // 0 for a layer without routed experts.
    std::vector<std::uint64_t> expertBytes;
    // [layer][expert] times chosen (row-major, layers x experts); empty: nothing measured yet.
    std::vector<std::uint64_t> counts;
    std::uint64_t budgetBytes = 0; // device bytes the cached experts may take
};

struct ExpertPlacement {
    // Per layer: whether each expert is on the GPU (empty for a layer without experts).
    std::vector<std::vector<bool>> onGpu;
    std::uint64_t gpuBytes = 0, hostBytes = 0;
    std::int64_t gpuExperts = 0, totalExperts = 0;

    bool offloads() const { return gpuExperts < totalExperts; }
    int cachedIn(int layer) const; // experts of `layer` on the GPU
    // "6,144 of 10,240 routed experts on the GPU (the most chosen; 18 of 40 layers whole),
    // 7.10 GiB of experts in host memory".
    std::string describe() const;
};

// Before loading (inspect, Model Settings): where a model's memory would go under a budget,
// from its totals only. `needBytes`: weights, KV cache, states and step memory with every
// expert on the GPU; `routedBytes`: the routed experts' share of the weights.
// Each step's buffers on a GPU (activations, products' scratch, cuBLAS) besides weights, KV
// cache and states: about what the target model needs for a 4,096-token step.
constexpr std::uint64_t kGpuStepMemoryBytes = 1ull << 30;

struct OffloadEstimate {
    enum class Fit { Whole, ExpertsOffloaded, No } fit = Fit::No;
    std::uint64_t gpuBytes = 0; // everything on the GPU, the cached experts included
    std::uint64_t cachedExpertBytes = 0, hostExpertBytes = 0;
    std::uint64_t stagingBytes = 0; // the two prefill staging buffers, where they fit
    std::uint64_t leastBytes = 0; // the least budget that loads with experts in host memory
    double cachedShare() const;
    // "Fits: 11.6 of 12.0 GiB on the GPU with 41 % of the routed experts (7.9 GiB) there and
    // 11.4 GiB of them in host memory."
    std::string describe(std::uint64_t budgetBytes) const;
};
OffloadEstimate estimateOffload(std::uint64_t needBytes, std::uint64_t routedBytes,
    int moeLayers, std::uint64_t budgetBytes);

// Most chosen first, over all layers at once (every layer sees the same tokens, so counts
// compare across layers); ties, and every expert when nothing is measured, spread evenly
// over the layers, lower expert numbers first.
ExpertPlacement placeExperts(const ExpertPlacementRequest& request);

} // namespace cw::engine
