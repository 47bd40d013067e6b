#pragma once

// Decode steps of a model whose routed experts spill to host memory may take the host view
// (the CPU computes part of each layer's host experts beside the GPU, expert_cache.h) where the
// cost model expects it to finish first. The cost model's rates are each measured alone, and
// run together the two sides do not reach them; which way wins differs from machine to machine
// (kernels/cuda/PERFORMANCE.md, "Routed experts in host memory": on one H100 host the GPU read
// host memory in place at 51 GB/s and its CPU at 60, on another at 34 and 85, where every
// host expert on the CPU decoded at 150 tokens/s, the cost model's split at 124). So each
// decode batch size's first graphed steps take turns among four views, timed on the card:
// every host expert read in place, the cost model's split at the GPU's measured in-place rate
// and at half of it (expert_cache.h's plans), and every host choice on the CPU; the fastest is
// kept until the cache's experts move. A view clearly slower than the best after two steps each
// (its fastest step 25 % over the best's fastest) is timed no more: at 7 steps a view, the
// trial spent 7 of a reply's first steps on in-place reads at half the split's rate.

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace cw::engine {

class DecodeViewTrial {
public:
    enum View { InPlace = 0, Split = 1, HalfRateSplit = 2, AllOnCpu = 3 };
    static constexpr int kViews = 4;
    // Timed steps of each view before the choice (the median decides: a graph's first launch
    // and a busy host can make one step slow). With 3 the views' medians, a few per cent
    // apart, came out in the wrong order (12 GiB on an H100: the trial kept a view decoding
    // 165.8 tokens/s where the split, forced, decoded 170.8); 7 steps each are 28 of a reply's
    // first decode steps.
    static constexpr std::size_t kRunsEach = 7;
    // Steps each view has had when the clearly slower ones are dropped, and what "clearly"
    // means: the fastest step of a view over the fastest of the best view by this factor (the
    // fastest, not the median: a graph's first launch makes one step of two slow).
    static constexpr std::size_t kRunsBeforeDropping = 2;
    static constexpr double kDropFactor = 1.25;

    // The view a decode step of `rows` rows takes: the chosen one, or the next to time.
    View view(int rows) const
    {
        const auto found = m_sizes.find(rows);
        if (found == m_sizes.end())
            return Split;
        const Size& s = found->second;
        if (s.chosen >= 0)
            return View(s.chosen);
        int next = -1;
        for (const View v : { Split, HalfRateSplit, AllOnCpu, InPlace })
            if (!s.dropped[std::size_t(v)]
                && (next < 0
                    || s.seconds[std::size_t(v)].size() < s.seconds[std::size_t(next)].size()))
                next = v;
        return View(next);
    }

    // Whether steps of `rows` rows are still being timed.
    bool deciding(int rows) const
    {
        const auto found = m_sizes.find(rows);
        return found == m_sizes.end() || found->second.chosen < 0;
    }

    void record(int rows, View view, double seconds)
    {
        Size& s = m_sizes[rows];
        if (s.chosen >= 0)
            return;
        s.seconds[std::size_t(view)].push_back(seconds);
        dropSlowViews(s);
        int best = -1;
        for (int v = 0; v < kViews; ++v) {
            if (s.dropped[std::size_t(v)])
                continue;
            if (s.seconds[std::size_t(v)].size() < kRunsEach)
                return;
            if (best < 0
                || median(s.seconds[std::size_t(v)]) < median(s.seconds[std::size_t(best)]))
                best = v;
        }
        s.chosen = best;
    }

    // The experts moved (the cache's refresh): the split is another one, time it again.
    void reset() { m_sizes.clear(); }

    // "decode view at 1 row: the split at half the in-place rate (medians in ms: in place 8.91,
    // split 6.02, half-rate split 5.87, all on the CPU 6.05)", one clause per batch size timed.
    std::string describe() const
    {
        static const char* const names[kViews]
            = { "in place", "split", "half-rate split", "all on the CPU" };
        static const char* const chosenNames[kViews]
            = { "every host expert read in place", "the cost model's split",
                  "the split at half the in-place rate", "every host choice on the CPU" };
        std::string out;
        for (const auto& [rows, s] : m_sizes) {
            if (s.chosen < 0)
                continue;
            char text[240];
            int n = std::snprintf(text, sizeof text,
                "%sdecode view at %d row%s: %s (medians in ms:", out.empty() ? "" : "; ", rows,
                rows == 1 ? "" : "s", chosenNames[s.chosen]);
            for (int v = 0; v < kViews && n > 0 && n < int(sizeof text); ++v)
                n += std::snprintf(text + n, sizeof text - std::size_t(n), "%s %s %.2f",
                    v ? "," : "", names[v], median(s.seconds[std::size_t(v)]) * 1e3);
            out += text;
            out += ")";
        }
        return out;
    }

private:
    struct Size {
        std::array<std::vector<double>, kViews> seconds;
        std::array<bool, kViews> dropped {};
        int chosen = -1;
    };
    // Once every view still timed has kRunsBeforeDropping steps: those clearly slower than the
    // fastest stop being timed (the best one never is, so one view always stays).
    static void dropSlowViews(Size& s)
    {
        double fastest = 0.0;
        for (int v = 0; v < kViews; ++v) {
            const auto& times = s.seconds[std::size_t(v)];
            if (s.dropped[std::size_t(v)])
                continue;
            if (times.size() < kRunsBeforeDropping)
                return;
            const double least = *std::min_element(times.begin(), times.end());
            fastest = fastest > 0.0 ? std::min(fastest, least) : least;
        }
        for (int v = 0; v < kViews; ++v) {
            const auto& times = s.seconds[std::size_t(v)];
            if (!s.dropped[std::size_t(v)]
                && *std::min_element(times.begin(), times.end()) > kDropFactor * fastest)
                s.dropped[std::size_t(v)] = true;
        }
    }
    static double median(std::vector<double> v)
    {
        std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
        return v[v.size() / 2];
    }
    std::map<int, Size> m_sizes;
};

} // namespace cw::engine
