#pragma once

// Decode steps of a model whose routed experts spill to host memory may take the host view
// (the CPU computes part of each layer's host experts beside the GPU, expert_cache.h) where the
// cost model expects it to finish first. The cost model's rates are each measured alone, and
// run together the two sides do not reach them (on the H100 host, 2026-12-07, the split it
// chose decoded at 84 tokens/s where every host expert read in place gave 111; through the
// polled hand-off 115-118 against 111, and which wins differs from machine to machine:
// kernels/cuda/PERFORMANCE.md, "Routed experts in host memory"). So each decode batch size's first
// graphed steps alternate between the cost model's views and every host expert read in place,
// timed on the card, and the faster is kept until the cache's experts move.

#include <algorithm>
#include <array>
#include <map>
#include <vector>

namespace cw::engine {

class DecodeViewTrial {
public:
    // Timed steps of each side before the choice (the median decides: a graph's first launch
    // and a busy host can make one step slow).
    static constexpr std::size_t kRunsEach = 3;

    // Whether a decode step of `rows` rows takes the cost model's host views (false: every host
    // expert read in place).
    bool hostView(int rows) const
    {
        const auto found = m_sizes.find(rows);
        if (found == m_sizes.end())
            return true;
        const Size& s = found->second;
        if (s.chosen >= 0)
            return s.chosen == 1;
        return s.seconds[1].size() <= s.seconds[0].size();
    }

    // Whether steps of `rows` rows are still being timed.
    bool deciding(int rows) const
    {
        const auto found = m_sizes.find(rows);
        return found == m_sizes.end() || found->second.chosen < 0;
    }

    void record(int rows, bool host, double seconds)
    {
        Size& s = m_sizes[rows];
        if (s.chosen >= 0)
            return;
        s.seconds[host ? 1 : 0].push_back(seconds);
        if (s.seconds[0].size() >= kRunsEach && s.seconds[1].size() >= kRunsEach)
            s.chosen = median(s.seconds[1]) < median(s.seconds[0]) ? 1 : 0;
    }

    // The experts moved (the cache's refresh): the split is another one, time it again.
    void reset() { m_sizes.clear(); }

private:
    struct Size {
        std::array<std::vector<double>, 2> seconds; // [0] in place, [1] host views
        int chosen = -1;
    };
    static double median(std::vector<double> v)
    {
        std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
        return v[v.size() / 2];
    }
    std::map<int, Size> m_sizes;
};

} // namespace cw::engine
