#include "engine/models/expert_load.h"

#include <algorithm>

namespace cw::engine {

ExpertLoad::ExpertLoad(int layers, int experts)
    : m_layers(std::max(0, layers))
    , m_experts(std::max(0, experts))
    , m_counts(new std::atomic<std::uint64_t>[std::size_t(m_layers) * std::size_t(m_experts)] {})
{
}

std::vector<ExpertLoad::Layer> ExpertLoad::layerFigures() const
{
    std::vector<Layer> figures;
    for (int l = 0; l < m_layers; ++l) {
        Layer f;
        f.layer = l;
        for (int e = 0; e < m_experts; ++e) {
            const std::uint64_t n
                = m_counts[std::size_t(l) * std::size_t(m_experts) + std::size_t(e)].load(
                    std::memory_order_relaxed);
            f.choices += n;
            f.busiest = std::max(f.busiest, n);
            f.used += n > 0 ? 1 : 0;
        }
        if (f.choices > 0)
            figures.push_back(f);
    }
    return figures;
}

} // namespace cw::engine
