#include "engine/backend/expert_placement.h"

#include <algorithm>
#include <cstdio>
#include <queue>

namespace cw::engine {

namespace {

std::string withCommas(std::int64_t n)
{
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

} // namespace

int ExpertPlacement::cachedIn(int layer) const
{
    const auto& l = onGpu[std::size_t(layer)];
    return int(std::count(l.begin(), l.end(), true));
}

std::string ExpertPlacement::describe() const
{
    int moeLayers = 0, whole = 0;
    for (std::size_t l = 0; l < onGpu.size(); ++l) {
        if (onGpu[l].empty())
            continue;
        ++moeLayers;
        whole += cachedIn(int(l)) == int(onGpu[l].size());
    }
    char host[64];
    std::snprintf(host, sizeof host, "%.2f GiB", double(hostBytes) / double(1ull << 30));
    if (!offloads())
        return "all " + withCommas(totalExperts) + " routed experts on the GPU";
    return withCommas(gpuExperts) + " of " + withCommas(totalExperts)
        + " routed experts on the GPU (the most chosen; " + std::to_string(whole) + " of "
        + std::to_string(moeLayers) + " layers whole), " + host + " of experts in host memory";
}

double OffloadEstimate::cachedShare() const
{
    const std::uint64_t all = cachedExpertBytes + hostExpertBytes;
    return all ? double(cachedExpertBytes) / double(all) : 1.0;
}

std::string OffloadEstimate::describe(std::uint64_t budget) const
{
    auto gib = [](std::uint64_t b) {
        char t[32];
        std::snprintf(t, sizeof t, "%.1f GiB", double(b) / double(1ull << 30));
        return std::string(t);
    };
    switch (fit) {
    case Fit::Whole:
        return "Fits: " + gib(gpuBytes) + " of " + gib(budget) + " on the GPU, every expert there.";
    case Fit::ExpertsOffloaded: {
        char share[16];
        std::snprintf(share, sizeof share, "%.0f %%", 100.0 * cachedShare());
        return "Fits with part of the experts in host memory: " + gib(gpuBytes) + " of "
            + gib(budget) + " on the GPU with " + share + " of the routed experts ("
            + gib(cachedExpertBytes) + ") cached there, the most chosen first; "
            + gib(hostExpertBytes) + " of experts in host memory, which the GPU reads over PCIe"
            + (stagingBytes ? " (prefill copies them in bulk through " + gib(stagingBytes)
                        + " of staging buffers)"
                            : "")
            + ". Decode is slower than with every expert on the GPU.";
    }
    case Fit::No:
        break;
    }
    return "Does not fit: even with every routed expert in host memory the GPU needs "
        + gib(leastBytes) + ", the budget is " + gib(budget) + ".";
}

OffloadEstimate estimateOffload(
    std::uint64_t need, std::uint64_t routed, int moeLayers, std::uint64_t budget)
{
    OffloadEstimate e;
    if (need <= budget) {
        e.fit = OffloadEstimate::Fit::Whole;
        e.gpuBytes = need;
        e.cachedExpertBytes = routed;
        return e;
    }
    const std::uint64_t rest = need - std::min(need, routed);
    e.leastBytes = rest;
    if (routed == 0 || rest > budget)
        return e;
    // Two staging buffers of one layer's uncached experts, found as the CUDA backend plans them:
    // room for a layer whole first, then the cache takes what each round's buffers free.
    const std::uint64_t left = budget - rest;
    const std::uint64_t L = std::uint64_t(std::max(moeLayers, 1));
    auto buffersFor = [&](std::uint64_t cached) { return 2 * ((routed - cached + L - 1) / L); };
    e.fit = OffloadEstimate::Fit::ExpertsOffloaded;
    std::uint64_t staging = buffersFor(0);
    if (staging > left) {
        e.cachedExpertBytes = std::min(routed, left);
    } else {
        for (int round = 0; round < 8; ++round) {
            e.cachedExpertBytes = std::min(routed, left - staging);
            const std::uint64_t needed = buffersFor(e.cachedExpertBytes);
            if (needed >= staging)
                break;
            staging = needed;
        }
        e.stagingBytes = staging;
    }
    e.hostExpertBytes = routed - e.cachedExpertBytes;
    e.gpuBytes = rest + e.stagingBytes + e.cachedExpertBytes;
    return e;
}

ExpertPlacement placeExperts(const ExpertPlacementRequest& r)
{
    const int layers = int(r.expertBytes.size());
    const int E = r.experts;
    const bool measured = r.counts.size() == std::size_t(layers) * std::size_t(E) && E > 0;
    ExpertPlacement p;
    p.onGpu.resize(std::size_t(layers));
    // Each layer's experts, most chosen first (lower number among equals).
    std::vector<std::vector<int>> order(static_cast<std::size_t>(layers));
    for (int l = 0; l < layers; ++l) {
        if (r.expertBytes[std::size_t(l)] == 0 || E <= 0)
            continue;
        p.onGpu[std::size_t(l)].assign(std::size_t(E), false);
        p.totalExperts += E;
        p.hostBytes += std::uint64_t(E) * r.expertBytes[std::size_t(l)];
        auto& o = order[std::size_t(l)];
        o.resize(std::size_t(E));
        for (int e = 0; e < E; ++e)
            o[std::size_t(e)] = e;
        if (measured) {
            const std::uint64_t* c = r.counts.data() + std::size_t(l) * std::size_t(E);
            std::stable_sort(o.begin(), o.end(), [&](int a, int b) { return c[a] > c[b]; });
        }
    }
    // The next candidate of every layer; the most chosen first, then the layer with fewest
    // cached, then the lower layer.
    struct Candidate {
        std::uint64_t count;
        int taken;
        int layer;
    };
    auto worse = [](const Candidate& a, const Candidate& b) {
        if (a.count != b.count)
            return a.count < b.count;
        if (a.taken != b.taken)
            return a.taken > b.taken;
        return a.layer > b.layer;
    };
    std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> next(worse);
    auto countOf = [&](int l, int i) -> std::uint64_t {
        if (!measured)
            return 0;
        return r.counts[std::size_t(l) * std::size_t(E) + std::size_t(order[std::size_t(l)][i])];
    };
    for (int l = 0; l < layers; ++l)
        if (!order[std::size_t(l)].empty())
            next.push({ countOf(l, 0), 0, l });
    std::uint64_t left = r.budgetBytes;
    while (!next.empty()) {
        const Candidate c = next.top();
        next.pop();
        const std::uint64_t bytes = r.expertBytes[std::size_t(c.layer)];
        if (bytes > left)
            continue; // this layer's experts no longer fit; another layer's smaller ones may
        left -= bytes;
        const int e = order[std::size_t(c.layer)][std::size_t(c.taken)];
        p.onGpu[std::size_t(c.layer)][std::size_t(e)] = true;
        p.gpuBytes += bytes;
        p.hostBytes -= bytes;
        ++p.gpuExperts;
        if (c.taken + 1 < E)
            next.push({ countOf(c.layer, c.taken + 1), c.taken + 1, c.layer });
    }
    return p;
}

} // namespace cw::engine
