#pragma once

// How often each routed expert of each MoE layer was chosen, since the model was loaded: the
// load that expert parallelism or offload would have to balance. Counted by the step thread
// (one relaxed increment per token and choice), read from any thread.

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace cw::engine {

class ExpertLoad {
public:
    ExpertLoad(int layers, int experts);

    int layers() const { return m_layers; }
    int experts() const { return m_experts; }
    void add(int layer, int expert)
    {
        m_counts[std::size_t(layer) * std::size_t(m_experts) + std::size_t(expert)].fetch_add(
            1, std::memory_order_relaxed);
    }

    // One layer's figures (`layer` counts every layer of the model, MoE or not).
    struct Layer {
        int layer = 0;
        std::uint64_t choices = 0; // tokens x experts per token
        std::uint64_t busiest = 0; // choices of its most chosen expert
        int used = 0; // experts chosen at least once
    };
    // Every layer that has chosen an expert at least once.
    std::vector<Layer> layerFigures() const;

private:
    int m_layers, m_experts;
    std::unique_ptr<std::atomic<std::uint64_t>[]> m_counts;
};

} // namespace cw::engine
