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

// Most chosen first, over all layers at once (every layer sees the same tokens, so counts
// compare across layers); ties, and every expert when nothing is measured, spread evenly
// over the layers, lower expert numbers first.
ExpertPlacement placeExperts(const ExpertPlacementRequest& request);

} // namespace cw::engine
