#include "engine/backend/cuda/expert_cache.h"

#include "kernels/cpu/thread_pool.h"
#include "kernels/tensor_type.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

namespace cw::engine {

namespace cuda = kernels::cuda;

namespace {

constexpr std::size_t kAlign = 256;
constexpr char kCountsMagic[8] = { 'C', 'W', 'E', 'X', 'P', 'C', '0', '1' };

// The most rows a step may have for the host view: the decode products' bound, where each
// token's experts are read per choice (the grouped products read them per expert).
int hostRowCapacity()
{
    int rows = 0;
    while (rows < 1024 && cuda::routedExpertsReadPerChoice(rows + 1))
        ++rows;
    return rows;
}

std::size_t alignUp(std::size_t n)
{
    return (n + kAlign - 1) / kAlign * kAlign;
}

std::size_t expertBytesOf(const TensorView& v)
{
    return std::size_t(*kernels::rowBytes(v.type, std::uint64_t(v.ne[0]))) * std::size_t(v.ne[1]);
}

// The distinct expert tensors of a layer (a fused gate_up stack counts once).
std::vector<const TensorView*> distinctViews(const MoeWeights& m)
{
    std::vector<const TensorView*> views;
    for (const ExpertStack* s : { &m.gate, &m.up, &m.down })
        if (s->view && std::find(views.begin(), views.end(), s->view) == views.end())
            views.push_back(s->view);
    return views;
}

std::string gibText(double bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / double(1ull << 30));
    return text;
}

} // namespace

std::vector<std::uint64_t> routedExpertBytesPerLayer(const ModelWeights& w)
{
    std::vector<std::uint64_t> bytes(w.layers.size(), 0);
    for (std::size_t l = 0; l < w.layers.size(); ++l)
        for (const TensorView* v : distinctViews(w.layers[l].moe))
            bytes[l] += expertBytesOf(*v);
    return bytes;
}

std::vector<std::uint64_t> readExpertCounts(const std::string& path, int layers, int experts)
{
    if (path.empty())
        return {};
    std::ifstream in(path, std::ios::binary);
    char magic[8] {};
    std::uint32_t fileLayers = 0, fileExperts = 0;
    if (!in.read(magic, 8) || std::memcmp(magic, kCountsMagic, 8) != 0
        || !in.read(reinterpret_cast<char*>(&fileLayers), 4)
        || !in.read(reinterpret_cast<char*>(&fileExperts), 4) || fileLayers != std::uint32_t(layers)
        || fileExperts != std::uint32_t(experts))
        return {};
    std::vector<std::uint64_t> counts(std::size_t(layers) * std::size_t(experts));
    if (!in.read(reinterpret_cast<char*>(counts.data()),
            std::streamsize(counts.size() * sizeof(std::uint64_t))))
        return {};
    return counts;
}

struct ExpertCache::Stack {
    const TensorView* view = nullptr;
    std::size_t expertBytes = 0;
    std::vector<const std::byte*> host; // per expert, in memory the GPU can map
    std::vector<const void*> mapped; // the same, as the GPU addresses it
    std::byte* slots = nullptr; // the cached experts' device copies
    std::vector<int> slotOf; // per expert: its slot, or -1 in host memory
    const void** liveTable = nullptr; // device [experts]
    const void** stagedTable = nullptr; // device [experts]
    const void** hostTable = nullptr; // device [experts + 1]: the live table, then the zero expert
    std::vector<std::size_t> stagedAt; // per expert: offset in the staging buffer (uncached)
};

struct ExpertCache::Layer {
    bool offloaded = false;
    std::vector<Stack> stacks;
    int gate = -1, up = -1, down = -1; // indices into stacks
    LayerStacks live, staged, host;
    std::size_t pairBytes = 0; // one expert's bytes over the layer's stacks
    // The host view's split (host_handoff.h's HostSplit): device [experts] and
    // [kSplitPlans][k + 1], and the latter as the cost model chose it.
    std::uint8_t* hostMask = nullptr;
    std::int32_t* cpuTake = nullptr;
    std::vector<std::int32_t> cpuTakeChosen;
    int buffer = 0; // the staging buffer this layer copies into
    std::uint64_t uncachedBytes = 0;
};

std::uint64_t ExpertCache::overheadBytes(const ModelWeights& w)
{
    std::uint64_t tables = 0, largest = 0, hidden = 0;
    const std::size_t experts = w.layers.empty()
        ? 0
        : std::size_t(w.layers[0].moe.gate.view ? w.layers[0].moe.gate.view->ne[2] : 0);
    for (const auto& L : w.layers) {
        for (const TensorView* v : distinctViews(L.moe)) {
            // live, staged and host (one entry more) + a slot block's rounding
            tables += 2 * alignUp(experts * sizeof(void*)) + alignUp((experts + 1) * sizeof(void*))
                + kAlign;
            largest = std::max<std::uint64_t>(largest, alignUp(expertBytesOf(*v)));
        }
        if (L.moe.gate.view)
            hidden = std::uint64_t(L.moe.gate.cols);
        tables += alignUp(experts) + alignUp(kSplitPlans * (experts + 1) * 4); // k <= experts
    }
    const std::uint64_t counts = alignUp(w.layers.size() * experts * 4) + 2 * kAlign;
    const std::uint64_t host = largest + alignUp(std::uint64_t(hostRowCapacity()) * hidden * 4)
        + alignUp(std::uint64_t(hostRowCapacity()) * experts * 4) // GPU ids: k <= experts
        + kAlign; // the split's switch
    return tables + counts + host;
}

// The staging copy packs a layer's uncached experts stack by stack (writeTables).
std::uint64_t ExpertCache::stagingBytes(const ModelWeights& w, const ExpertPlacement& placement)
{
    std::uint64_t widest = 0;
    for (std::size_t l = 0; l < w.layers.size() && l < placement.onGpu.size(); ++l) {
        const auto& onGpu = placement.onGpu[l];
        const auto uncached = std::uint64_t(std::count(onGpu.begin(), onGpu.end(), false));
        if (uncached == 0)
            continue;
        std::uint64_t layerBytes = 0;
        for (const TensorView* v : distinctViews(w.layers[l].moe))
            layerBytes += alignUp(uncached * expertBytesOf(*v));
        widest = std::max(widest, layerBytes);
    }
    return widest;
}

Result<std::unique_ptr<ExpertCache>> ExpertCache::create(const ModelWeights& w,
    const ExpertPlacement& placement, int expertsPerToken, bool withStaging, DeviceArena& arena,
    cudaStream_t stream, std::string countsPath, const HostCompute* hostCompute)
{
    std::unique_ptr<ExpertCache> c(new ExpertCache);
    c->m_k = expertsPerToken;
    c->m_weights = &w;
    c->m_placement = placement;
    c->m_countsPath = std::move(countsPath);
    c->m_forced = forcedView();
    c->m_layers.resize(w.layers.size());
    for (const auto& L : w.layers)
        if (L.moe.gate.view)
            c->m_experts = int(L.moe.gate.view->ne[2]);
    for (std::size_t l = 0; l < w.layers.size(); ++l) {
        const auto& onGpu = placement.onGpu[l];
        c->m_layers[l].offloaded = !onGpu.empty()
            && std::count(onGpu.begin(), onGpu.end(), true) < std::ptrdiff_t(onGpu.size());
        if (c->m_layers[l].offloaded) {
            c->m_layers[l].buffer = int(c->m_offloadedOrder.size() % 2);
            c->m_offloadedOrder.push_back(int(l));
        }
    }
    if (auto e = cudaStreamCreateWithFlags(&c->m_copyStream, cudaStreamNonBlocking);
        e != cudaSuccess)
        return cudaFailure("creating the expert copy stream", e);
    for (int b = 0; b < 2; ++b)
        if (cudaEventCreateWithFlags(&c->m_copied[b], cudaEventDisableTiming) != cudaSuccess
            || cudaEventCreateWithFlags(&c->m_free[b], cudaEventDisableTiming) != cudaSuccess)
            return makeError("could not create the expert copy events");
    auto counts = arena.allocate(
        std::max<std::size_t>(w.layers.size() * std::size_t(c->m_experts) * 4, 4), "expert counts");
    if (!counts)
        return counts.error();
    c->m_counts = static_cast<std::uint32_t*>(*counts);
    auto sink = arena.allocate(kAlign, "the host-read probe");
    if (!sink)
        return sink.error();
    c->m_probeSink = static_cast<std::uint32_t*>(*sink);
    if (auto e = cudaMemset(c->m_counts, 0, w.layers.size() * std::size_t(c->m_experts) * 4);
        e != cudaSuccess)
        return cudaFailure("clearing the expert counts", e);
    if (auto r = c->pinHostExperts(); !r)
        return r.error();
    std::size_t largest = 0;
    std::int64_t hidden = 0;
    for (const auto& L : w.layers) {
        for (const TensorView* v : distinctViews(L.moe))
            largest = std::max(largest, alignUp(expertBytesOf(*v)));
        if (L.moe.gate.view)
            hidden = L.moe.gate.cols;
    }
    auto zero = arena.allocate(std::max<std::size_t>(largest, kAlign), "the zero expert");
    if (!zero)
        return zero.error();
    c->m_zeroExpert = static_cast<std::byte*>(*zero);
    if (auto e = cudaMemset(c->m_zeroExpert, 0, std::max<std::size_t>(largest, kAlign));
        e != cudaSuccess)
        return cudaFailure("clearing the zero expert", e);
    auto sums = arena.allocate(std::size_t(hostRowCapacity()) * std::size_t(hidden) * 4 + kAlign,
        "the host experts' sums");
    if (!sums)
        return sums.error();
    c->m_hostSums = static_cast<float*>(*sums);
    auto gpuIds
        = arena.allocate(std::size_t(hostRowCapacity()) * std::size_t(expertsPerToken) * 4 + kAlign,
            "the GPU's ids");
    if (!gpuIds)
        return gpuIds.error();
    c->m_hostGpuIds = static_cast<std::int32_t*>(*gpuIds);
    auto plan = arena.allocate(kAlign, "the host split's plan in use");
    if (!plan)
        return plan.error();
    c->m_planInUse = static_cast<std::int32_t*>(*plan);
    if (auto e = cudaMemset(c->m_planInUse, 0, 4); e != cudaSuccess)
        return cudaFailure("clearing the host split's plan in use", e);
    c->m_planSet = 0;
    for (int l : c->m_offloadedOrder)
        if (auto r = c->buildLayer(l, arena); !r)
            return r.error();
    c->m_hostBases.resize(w.layers.size());
    for (int l : c->m_offloadedOrder) {
        const Layer& L = c->m_layers[std::size_t(l)];
        c->m_hostBases[std::size_t(l)] = { &L.stacks[std::size_t(L.gate)].host,
            &L.stacks[std::size_t(L.up)].host, &L.stacks[std::size_t(L.down)].host };
    }
    if (withStaging && !c->m_offloadedOrder.empty()) {
        const std::uint64_t widest = stagingBytes(w, placement);
        for (int b = 0; b < 2; ++b) {
            auto buffer = arena.allocate(std::size_t(widest), "an expert staging buffer");
            if (!buffer)
                return buffer.error();
            c->m_staging.push_back(static_cast<std::byte*>(*buffer));
        }
        c->m_stagingBytes = widest;
    }
    for (int l : c->m_offloadedOrder) {
        for (const auto& s : c->m_layers[std::size_t(l)].stacks)
            c->m_layers[std::size_t(l)].pairBytes += s.expertBytes;
        c->writeTables(l);
    }
    if (auto e = cudaDeviceSynchronize(); e != cudaSuccess)
        return cudaFailure("setting up the expert cache", e);
    c->m_savedCounts = readExpertCounts(c->m_countsPath, int(w.layers.size()), c->m_experts);
    c->measureBandwidths(stream);
    if (hostCompute && hostCompute->hp && !c->m_offloadedOrder.empty()) {
        int threads = hostCompute->threads;
        if (threads <= 0) // the thread that feeds the GPU keeps a core
            threads = std::max(1, int(std::thread::hardware_concurrency()) - 1);
        // The CPU's rates are measured here; then each layer's split from them.
        auto host = HostExperts::create(*hostCompute->hp, w, c->m_placement.onGpu, c->m_hostBases,
            expertsPerToken, hostRowCapacity(), hostCompute->integerProducts, threads);
        if (!host)
            return host.error();
        c->m_hostExperts = std::move(*host);
        for (int l : c->m_offloadedOrder)
            c->planHostSplit(l);
        if (auto e = cudaDeviceSynchronize(); e != cudaSuccess)
            return cudaFailure("setting up the host experts", e);
    }
    return c;
}

ExpertCache::~ExpertCache()
{
    if (m_counts)
        saveCounts(totalCounts());
    if (m_copyStream) {
        cudaStreamSynchronize(m_copyStream);
        cudaStreamDestroy(m_copyStream);
    }
    for (int b = 0; b < 2; ++b) {
        if (m_copied[b])
            cudaEventDestroy(m_copied[b]);
        if (m_free[b])
            cudaEventDestroy(m_free[b]);
    }
    for (void* p : m_hostCopies)
        cudaFreeHost(p);
}

// The offloaded experts' host bytes, copied into page-locked memory the GPU reads. Not the
// model's own pages registered in place: pinning a file mapping long-term makes the kernel
// migrate each page first, which took over 75 s for the 35B model's 19 GiB on the H100 host
// (one core busy, the load never finished), where copies made by every core take seconds.
Result<void> ExpertCache::pinHostExperts()
{
    struct Job {
        int layer;
        const TensorView* view;
    };
    std::vector<Job> jobs;
    for (int l : m_offloadedOrder)
        for (const TensorView* v : distinctViews(m_weights->layers[std::size_t(l)].moe))
            jobs.push_back({ l, v });
    std::vector<Stack> stacks(jobs.size());
    std::vector<void*> copies(jobs.size(), nullptr);
    struct Failure {
        std::string what;
        cudaError_t error = cudaSuccess;
    };
    std::vector<Failure> failures(jobs.size());
    auto work = [&](std::int64_t begin, std::int64_t end) {
        for (std::size_t j = std::size_t(begin); j < std::size_t(end); ++j) {
            const TensorView* v = jobs[j].view;
            Stack& s = stacks[j];
            s.view = v;
            s.expertBytes = expertBytesOf(*v);
            const std::size_t stride = alignUp(s.expertBytes);
            void* copy = nullptr;
            if (auto e = cudaHostAlloc(&copy, stride * std::size_t(v->ne[2]), cudaHostAllocMapped);
                e != cudaSuccess) {
                failures[j] = { "pinning host memory for layer " + std::to_string(jobs[j].layer)
                        + "'s experts (" + gibText(double(stride) * double(v->ne[2])) + ")",
                    e };
                continue;
            }
            copies[j] = copy;
            void* mapped = nullptr;
            if (auto e = cudaHostGetDevicePointer(&mapped, copy, 0); e != cudaSuccess) {
                failures[j] = { "mapping the experts' host memory", e };
                continue;
            }
            for (std::int64_t e = 0; e < v->ne[2]; ++e) {
                auto* at = static_cast<std::byte*>(copy) + stride * std::size_t(e);
                std::memcpy(at, v->slice(e), s.expertBytes);
                s.host.push_back(at);
                s.mapped.push_back(static_cast<std::byte*>(mapped) + stride * std::size_t(e));
            }
        }
    };
    kernels::ThreadPool(
        int(std::min<std::size_t>(jobs.size(), std::thread::hardware_concurrency())))
        .parallelFor(std::int64_t(jobs.size()), work);
    for (void* c : copies)
        if (c)
            m_hostCopies.push_back(c);
    for (const auto& f : failures)
        if (f.error != cudaSuccess)
            return cudaFailure(f.what, f.error);
    for (std::size_t j = 0; j < jobs.size(); ++j)
        m_layers[std::size_t(jobs[j].layer)].stacks.push_back(std::move(stacks[j]));
    return {};
}

Result<void> ExpertCache::buildLayer(int layer, DeviceArena& arena)
{
    auto& L = m_layers[std::size_t(layer)];
    const auto& m = m_weights->layers[std::size_t(layer)].moe;
    const auto& onGpu = m_placement.onGpu[std::size_t(layer)];
    const int cached = int(std::count(onGpu.begin(), onGpu.end(), true));
    const std::string name = "layer " + std::to_string(layer) + " cached experts";
    for (auto& s : L.stacks) {
        s.slotOf.assign(std::size_t(m_experts), -1);
        if (cached > 0) {
            auto slots = arena.allocate(std::size_t(cached) * s.expertBytes, name);
            if (!slots)
                return slots.error();
            s.slots = static_cast<std::byte*>(*slots);
        }
        int next = 0;
        for (int e = 0; e < m_experts; ++e) {
            if (!onGpu[std::size_t(e)]) {
                L.uncachedBytes += s.expertBytes;
                continue;
            }
            s.slotOf[std::size_t(e)] = next;
            if (auto err = cudaMemcpy(s.slots + std::size_t(next) * s.expertBytes,
                    s.host[std::size_t(e)], s.expertBytes, cudaMemcpyHostToDevice);
                err != cudaSuccess)
                return cudaFailure("uploading " + name, err);
            ++next;
        }
        for (const void*** table : { &s.liveTable, &s.stagedTable, &s.hostTable }) {
            const std::size_t entries = std::size_t(m_experts) + (table == &s.hostTable ? 1 : 0);
            auto t = arena.allocate(entries * sizeof(void*), name + " table");
            if (!t)
                return t.error();
            *table = static_cast<const void**>(*t);
        }
    }
    auto mask = arena.allocate(std::size_t(m_experts), name + " host mask");
    const std::size_t takeEntries = std::size_t(kSplitPlans) * std::size_t(m_k + 1);
    auto take = arena.allocate(takeEntries * 4, name + " host split");
    if (!mask)
        return mask.error();
    if (!take)
        return take.error();
    L.hostMask = static_cast<std::uint8_t*>(*mask);
    L.cpuTake = static_cast<std::int32_t*>(*take);
    L.cpuTakeChosen.assign(takeEntries, 0);
    if (auto err = cudaMemset(L.cpuTake, 0, takeEntries * 4); err != cudaSuccess)
        return cudaFailure("clearing " + name + " host split", err);
    auto indexOf = [&](const TensorView* v) {
        for (std::size_t i = 0; i < L.stacks.size(); ++i)
            if (L.stacks[i].view == v)
                return int(i);
        return -1;
    };
    L.gate = indexOf(m.gate.view);
    L.up = indexOf(m.up.view);
    L.down = indexOf(m.down.view);
    enum class View { Live, Staged, Host };
    auto describe = [&](const ExpertStack& h, const Stack& s, View view) {
        cuda::DeviceExpertStack d;
        d.type = h.view->type;
        // The first cached slot, or the first host expert: what the kernels' alignment checks
        // look at (every table entry has the same alignment modulo 16).
        d.data = s.slots         ? static_cast<const void*>(s.slots)
            : view == View::Host ? static_cast<const void*>(m_zeroExpert)
                                 : s.mapped[0];
        d.expertData = view == View::Staged ? s.stagedTable
            : view == View::Host            ? s.hostTable
                                            : s.liveTable;
        d.expertStride = s.expertBytes;
        d.rowStride = std::size_t(*kernels::rowBytes(h.view->type, std::uint64_t(h.view->ne[0])));
        d.rowOffset = h.rowOffset;
        d.rows = h.rows;
        d.cols = h.cols;
        d.experts = h.view->ne[2];
        return d;
    };
    for (const View view : { View::Live, View::Staged, View::Host }) {
        LayerStacks& out = view == View::Staged ? L.staged : view == View::Host ? L.host : L.live;
        out.gate = describe(m.gate, L.stacks[std::size_t(L.gate)], view);
        out.up = describe(m.up, L.stacks[std::size_t(L.up)], view);
        out.down = describe(m.down, L.stacks[std::size_t(L.down)], view);
    }
    return {};
}

void ExpertCache::writeTables(int layer)
{
    auto& L = m_layers[std::size_t(layer)];
    std::size_t at = 0; // in the staging buffer
    for (auto& s : L.stacks) {
        std::vector<const void*> live(static_cast<std::size_t>(m_experts));
        std::vector<const void*> staged(static_cast<std::size_t>(m_experts));
        std::vector<const void*> host(static_cast<std::size_t>(m_experts) + 1, m_zeroExpert);
        s.stagedAt.assign(std::size_t(m_experts), 0);
        for (int e = 0; e < m_experts; ++e) {
            const int slot = s.slotOf[std::size_t(e)];
            if (slot >= 0) {
                live[std::size_t(e)] = staged[std::size_t(e)] = host[std::size_t(e)]
                    = s.slots + std::size_t(slot) * s.expertBytes;
                continue;
            }
            live[std::size_t(e)] = host[std::size_t(e)] = s.mapped[std::size_t(e)];
            s.stagedAt[std::size_t(e)] = at;
            staged[std::size_t(e)] = m_staging.empty()
                ? s.mapped[std::size_t(e)]
                : static_cast<const void*>(m_staging[std::size_t(L.buffer)] + at);
            at += s.expertBytes;
        }
        at = alignUp(at);
        cudaMemcpy(s.liveTable, live.data(), live.size() * sizeof(void*), cudaMemcpyHostToDevice);
        cudaMemcpy(
            s.stagedTable, staged.data(), staged.size() * sizeof(void*), cudaMemcpyHostToDevice);
        cudaMemcpy(s.hostTable, host.data(), host.size() * sizeof(void*), cudaMemcpyHostToDevice);
    }
    const auto& onGpu = m_placement.onGpu[std::size_t(layer)];
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(m_experts));
    for (std::size_t e = 0; e < mask.size(); ++e)
        mask[e] = onGpu[e] ? 0 : 1;
    cudaMemcpy(L.hostMask, mask.data(), mask.size(), cudaMemcpyHostToDevice);
}

bool ExpertCache::offloaded(int layer) const
{
    return layer >= 0 && std::size_t(layer) < m_layers.size()
        && m_layers[std::size_t(layer)].offloaded;
}

const ExpertCache::LayerStacks& ExpertCache::live(int layer) const
{
    return m_layers[std::size_t(layer)].live;
}

const ExpertCache::LayerStacks& ExpertCache::staged(int layer) const
{
    return m_layers[std::size_t(layer)].staged;
}

const ExpertCache::LayerStacks& ExpertCache::hostView(int layer) const
{
    return m_layers[std::size_t(layer)].host;
}

std::vector<double> ExpertCache::choiceChances(int layer) const
{
    const std::size_t E = std::size_t(m_experts);
    const std::uint64_t* c = m_savedCounts.size() == m_layers.size() * E
        ? m_savedCounts.data() + std::size_t(layer) * E
        : nullptr;
    double total = 0.0;
    if (c)
        for (std::size_t e = 0; e < E; ++e)
            total += double(c[e]);
    std::vector<double> p(E, double(m_k) / double(E));
    if (c && total > 0.0)
        for (std::size_t e = 0; e < E; ++e)
            p[e] = std::min(1.0, double(m_k) * double(c[e]) / total);
    return p;
}

double ExpertCache::inPlaceSeconds(int layer, int n, double rate) const
{
    return double(n) * double(m_layers[std::size_t(layer)].pairBytes)
        / (rate * m_mappedBytesPerSecond);
}

// One token's n host choices with c of them on the CPU: the two sides run at once, the CPU's
// with its fixed cost when it has any (the round trip is the layer's, counted once a step).
double ExpertCache::hostSplitSeconds(int layer, int n, int c, double rate) const
{
    const auto& L = m_layers[std::size_t(layer)];
    const double cpu = c == 0 ? 0.0
                              : m_hostExperts->computeFixedSeconds()
            + double(c) * double(L.pairBytes) / m_hostExperts->bytesPerSecond();
    return std::max(cpu, inPlaceSeconds(layer, n - c, rate));
}

// For each plan and n, the c that finishes a token's n host choices soonest at that plan's
// in-place rate (the fewest on the CPU among equals); every one on the CPU when
// CW_CUDA_EXPERTS=host, half of them (rounded up) when it is `halves` (tests: both sides of the
// host view in every token), whichever plan is in use.
void ExpertCache::planHostSplit(int layer)
{
    auto& L = m_layers[std::size_t(layer)];
    const bool rates
        = m_hostExperts && m_hostExperts->bytesPerSecond() > 0.0 && m_mappedBytesPerSecond > 0.0;
    for (int plan = 0; plan < kSplitPlans; ++plan)
        for (int n = 0; n <= m_k; ++n) {
            int best = 0;
            if (m_forced == Forced::Host || plan == int(SplitPlan::AllOnCpu))
                best = n;
            else if (m_forced == Forced::Halves)
                best = (n + 1) / 2;
            else if (rates) {
                const double rate = plan == int(SplitPlan::HalfRate) ? 0.5 : 1.0;
                double bestSeconds = inPlaceSeconds(layer, n, rate);
                for (int c = 1; c <= n; ++c)
                    if (const double t = hostSplitSeconds(layer, n, c, rate); t < bestSeconds) {
                        bestSeconds = t;
                        best = c;
                    }
            }
            L.cpuTakeChosen[std::size_t(plan) * std::size_t(m_k + 1) + std::size_t(n)] = best;
        }
    cudaMemcpy(
        L.cpuTake, L.cpuTakeChosen.data(), L.cpuTakeChosen.size() * 4, cudaMemcpyHostToDevice);
}

// CW_CUDA_EXPERTS (tests, A/B runs; kernels/cuda/PERFORMANCE.md), read once per cache: the
// cost model asks for it per layer and step.
ExpertCache::Forced ExpertCache::forcedView()
{
    const char* forced = std::getenv("CW_CUDA_EXPERTS");
    if (!forced)
        return Forced::None;
    for (const auto& [name, value] : { std::pair { "inplace", Forced::InPlace },
             std::pair { "staged", Forced::Staged }, std::pair { "host", Forced::Host },
             std::pair { "split", Forced::Split }, std::pair { "halves", Forced::Halves } })
        if (std::strcmp(forced, name) == 0)
            return value;
    return Forced::None;
}

bool ExpertCache::prefersHost(int layer, std::int64_t tokens) const
{
    const auto& L = m_layers[std::size_t(layer)];
    if (!m_hostExperts || !L.offloaded || tokens > m_hostExperts->rowCapacity()
        || !cuda::routedExpertsReadPerChoice(tokens))
        return false;
    if (m_forced == Forced::Host || m_forced == Forced::Halves)
        return true;
    if (m_forced == Forced::Staged || m_forced == Forced::InPlace)
        return false;
    if (m_hostExperts->bytesPerSecond() <= 0.0 || m_mappedBytesPerSecond <= 0.0)
        return false;
    // A token's host choices n as a binomial over its k choices, each in host memory with the
    // measured chance; the CPU takes each token's rows one after another, the GPU's products
    // read every (token, choice) pair's rows, so both sides add up over the step's tokens.
    const auto p = choiceChances(layer);
    const auto& onGpu = m_placement.onGpu[std::size_t(layer)];
    double hostChance = 0.0;
    for (std::size_t e = 0; e < onGpu.size(); ++e)
        if (!onGpu[e])
            hostChance += p[e];
    const double q = std::clamp(hostChance / double(m_k), 0.0, 1.0);
    double split = 0.0, inPlace = 0.0, chance = std::pow(1.0 - q, double(m_k));
    for (int n = 0; n <= m_k; ++n) {
        split += chance * hostSplitSeconds(layer, n, L.cpuTakeChosen[std::size_t(n)]);
        inPlace += chance * inPlaceSeconds(layer, n);
        if (q < 1.0) // the next binomial term
            chance *= double(m_k - n) / double(n + 1) * q / (1.0 - q);
        else
            chance = n + 1 == m_k ? 1.0 : 0.0;
    }
    const double hostView = m_hostExperts->roundTripSeconds() + double(tokens) * split;
    return hostView < double(tokens) * inPlace;
}

cudaError_t ExpertCache::handOverToHost(int layer, int rows, const float* x,
    const std::int32_t* ids, const float* weights, cudaStream_t stream)
{
    if (!m_hostExperts)
        return cudaErrorInvalidValue;
    const auto& L = m_layers[std::size_t(layer)];
    const cuda::HostSplit split { L.hostMask, L.cpuTake, m_planInUse, m_experts };
    return m_hostExperts->handOver(layer, rows, x, ids, weights, split, m_hostGpuIds, stream);
}

cudaError_t ExpertCache::usePlan(SplitPlan plan, cudaStream_t stream)
{
    if (!m_planInUse || m_planSet == int(plan))
        return cudaSuccess;
    m_planSet = int(plan);
    // From pageable memory: the runtime stages the word before it returns.
    return cudaMemcpyAsync(m_planInUse, &m_planSet, 4, cudaMemcpyHostToDevice, stream);
}

cudaError_t ExpertCache::awaitHost(int layer, int rows, cudaStream_t stream)
{
    if (!m_hostExperts)
        return cudaErrorInvalidValue;
    return m_hostExperts->awaitAnswer(layer, rows, m_hostSums, stream);
}

cudaError_t ExpertCache::markGpuDone(int layer, cudaStream_t stream)
{
    return m_hostExperts ? m_hostExperts->markGpuDone(layer, stream) : cudaSuccess;
}

bool ExpertCache::prefersStaging(int layer, std::int64_t tokens) const
{
    const auto& L = m_layers[std::size_t(layer)];
    if (m_staging.empty() || !L.offloaded)
        return false;
    if (m_forced == Forced::Staged)
        return true;
    if (m_forced == Forced::InPlace)
        return false;
    if (m_copyBytesPerSecond <= 0.0 || m_mappedBytesPerSecond <= 0.0)
        return false;
    // Bytes read in place: the per-pair decode products read an expert's rows once per token
    // that chose it; the grouped ones once per expert chosen at all.
    const bool perPair = cuda::routedExpertsReadPerChoice(tokens);
    const auto p = choiceChances(layer);
    const auto& onGpu = m_placement.onGpu[std::size_t(layer)];
    double inPlace = 0.0;
    for (std::size_t e = 0; e < onGpu.size(); ++e) {
        if (onGpu[e])
            continue;
        const double reads
            = perPair ? double(tokens) * p[e] : 1.0 - std::pow(1.0 - p[e], double(tokens));
        inPlace += reads * double(L.pairBytes);
    }
    return double(L.uncachedBytes) / m_copyBytesPerSecond < inPlace / m_mappedBytesPerSecond;
}

void ExpertCache::beginStep()
{
    m_issued[0] = m_issued[1] = -1;
}

cudaError_t ExpertCache::issueCopy(int layer)
{
    auto& L = m_layers[std::size_t(layer)];
    const int b = L.buffer;
    if (m_issued[b] == layer)
        return cudaSuccess;
    cudaError_t err = cudaStreamWaitEvent(m_copyStream, m_free[b], 0);
    std::vector<void*> dst;
    std::vector<const void*> src;
    std::vector<std::size_t> sizes;
    for (const auto& s : L.stacks)
        for (int e = 0; e < m_experts; ++e) {
            if (s.slotOf[std::size_t(e)] >= 0)
                continue;
            std::byte* to = m_staging[std::size_t(b)] + s.stagedAt[std::size_t(e)];
            const std::byte* from = s.host[std::size_t(e)];
            // Runs of experts next to each other on both sides are one copy.
            if (!dst.empty() && static_cast<std::byte*>(dst.back()) + sizes.back() == to
                && static_cast<const std::byte*>(src.back()) + sizes.back() == from) {
                sizes.back() += s.expertBytes;
                continue;
            }
            dst.push_back(to);
            src.push_back(from);
            sizes.push_back(s.expertBytes);
        }
    if (err == cudaSuccess && !dst.empty()) {
        cudaMemcpyAttributes attrs {};
        attrs.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
        attrs.flags = cudaMemcpyFlagPreferOverlapWithCompute;
        std::size_t attrIndex = 0;
        err = cudaMemcpyBatchAsync(
            dst.data(), src.data(), sizes.data(), dst.size(), &attrs, &attrIndex, 1, m_copyStream);
        if (err != cudaSuccess) { // a driver without batched copies: one at a time
            cudaGetLastError();
            err = cudaSuccess;
            for (std::size_t i = 0; i < dst.size() && err == cudaSuccess; ++i)
                err = cudaMemcpyAsync(
                    dst[i], src[i], sizes[i], cudaMemcpyHostToDevice, m_copyStream);
        }
    }
    if (err == cudaSuccess)
        err = cudaEventRecord(m_copied[b], m_copyStream);
    m_issued[b] = layer;
    return err;
}

cudaError_t ExpertCache::stage(int layer, cudaStream_t stream)
{
    cudaError_t err = issueCopy(layer);
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(stream, m_copied[m_layers[std::size_t(layer)].buffer], 0);
    return err;
}

cudaError_t ExpertCache::prefetch(int layer)
{
    return offloaded(layer) && !m_staging.empty() ? issueCopy(layer) : cudaSuccess;
}

cudaError_t ExpertCache::release(int layer, cudaStream_t stream)
{
    return cudaEventRecord(m_free[m_layers[std::size_t(layer)].buffer], stream);
}

cudaError_t ExpertCache::count(
    int layer, const std::int32_t* ids, std::int64_t pairs, cudaStream_t stream)
{
    return cuda::countExpertChoices(
        ids, pairs, m_counts + std::size_t(layer) * std::size_t(m_experts), stream);
}

std::vector<std::uint64_t> ExpertCache::totalCounts() const
{
    const std::size_t n = m_layers.size() * std::size_t(m_experts);
    std::vector<std::uint32_t> run(n);
    std::vector<std::uint64_t> total(n, 0);
    if (cudaMemcpy(run.data(), m_counts, n * 4, cudaMemcpyDeviceToHost) != cudaSuccess) {
        cudaGetLastError();
        return m_savedCounts.size() == n ? m_savedCounts : total;
    }
    for (std::size_t i = 0; i < n; ++i)
        total[i] = run[i] + (m_savedCounts.size() == n ? m_savedCounts[i] : 0);
    return total;
}

void ExpertCache::saveCounts(const std::vector<std::uint64_t>& counts) const
{
    if (m_countsPath.empty())
        return;
    // Written beside and renamed, so a crash leaves the old file or the new one.
    const std::string temp = m_countsPath + ".part";
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        const std::uint32_t layers = std::uint32_t(m_layers.size()),
                            experts = std::uint32_t(m_experts);
        out.write(kCountsMagic, 8);
        out.write(reinterpret_cast<const char*>(&layers), 4);
        out.write(reinterpret_cast<const char*>(&experts), 4);
        out.write(reinterpret_cast<const char*>(counts.data()),
            std::streamsize(counts.size() * sizeof(std::uint64_t)));
        if (!out)
            return;
    }
    std::rename(temp.c_str(), m_countsPath.c_str());
}

Result<std::string> ExpertCache::refresh(cudaStream_t stream)
{
    if (auto e = cudaStreamSynchronize(stream); e != cudaSuccess)
        return cudaFailure("waiting for the step before the expert refresh", e);
    if (auto e = cudaStreamSynchronize(m_copyStream); e != cudaSuccess)
        return cudaFailure("waiting for the expert copies", e);
    const std::vector<std::uint64_t> counts = totalCounts();
    m_savedCounts = counts; // the frequencies the cost model and the host split read
    const std::size_t E = std::size_t(m_experts);
    // A pause of at most ~20 ms of copies per refresh at the measured copy rate.
    double budget = 0.02 * std::max(m_copyBytesPerSecond, 1e9);
    int moved = 0;
    for (int l : m_offloadedOrder) {
        auto& L = m_layers[std::size_t(l)];
        const std::uint64_t* c = counts.data() + std::size_t(l) * E;
        auto& onGpu = m_placement.onGpu[std::size_t(l)];
        std::vector<int> cached, host;
        for (std::size_t e = 0; e < E; ++e)
            (onGpu[e] ? cached : host).push_back(int(e));
        if (cached.empty() || host.empty())
            continue;
        // Coldest cached first, hottest host first; a swap needs the host one clearly hotter
        // (an eighth more choices), so near-equal experts do not trade places every refresh.
        std::sort(cached.begin(), cached.end(), [&](int a, int b) { return c[a] < c[b]; });
        std::sort(host.begin(), host.end(), [&](int a, int b) { return c[a] > c[b]; });
        std::size_t bytes = 0;
        for (const auto& s : L.stacks)
            bytes += s.expertBytes;
        bool changed = false;
        for (std::size_t i = 0; i < std::min(cached.size(), host.size()); ++i) {
            const int out = cached[i], in = host[i];
            if (double(c[in]) <= double(c[out]) * 1.125 + 8.0 || budget < double(bytes))
                break;
            for (auto& s : L.stacks) {
                const int slot = s.slotOf[std::size_t(out)];
                if (auto e = cudaMemcpy(s.slots + std::size_t(slot) * s.expertBytes,
                        s.host[std::size_t(in)], s.expertBytes, cudaMemcpyHostToDevice);
                    e != cudaSuccess)
                    return cudaFailure("moving an expert into the GPU cache", e);
                s.slotOf[std::size_t(in)] = slot;
                s.slotOf[std::size_t(out)] = -1;
            }
            onGpu[std::size_t(out)] = false;
            onGpu[std::size_t(in)] = true;
            budget -= double(bytes);
            changed = true;
            ++moved;
        }
        if (changed) // the split's plans depend on the rates only, not on which are cached
            writeTables(l);
    }
    cudaMemset(m_counts, 0, m_layers.size() * E * 4);
    saveCounts(counts);
    if (auto e = cudaDeviceSynchronize(); e != cudaSuccess)
        return cudaFailure("refreshing the expert cache", e);
    return moved ? "expert cache: " + std::to_string(moved) + " experts moved to the GPU" : "";
}

void ExpertCache::measureBandwidths(cudaStream_t stream)
{
    if (m_offloadedOrder.empty())
        return;
    const auto& s = m_layers[std::size_t(m_offloadedOrder[0])].stacks[0];
    // One stack's host experts (up to 64 MiB), 16-byte aligned, read twice; the second counts.
    std::size_t bytes
        = std::min<std::size_t>(s.expertBytes * std::size_t(m_experts), std::size_t(64) << 20);
    if (!m_staging.empty()) // the copy's destination holds one layer's uncached experts
        bytes = std::min<std::size_t>(bytes, m_stagingBytes);
    bytes = bytes / 16 * 16;
    const auto* from = reinterpret_cast<const std::byte*>(
        (reinterpret_cast<std::uintptr_t>(s.mapped[0]) + 15) / 16 * 16);
    const std::byte* hostFrom = s.host[0] + (from - static_cast<const std::byte*>(s.mapped[0]));
    // Only a contiguous span may be probed: the stack's own experts when they lie in a row.
    for (int e = 1; e < m_experts; ++e)
        if (s.host[std::size_t(e)] != s.host[0] + std::size_t(e) * s.expertBytes) {
            bytes = std::min(bytes, s.expertBytes) / 16 * 16;
            break;
        }
    if (bytes < (1u << 20))
        return;
    cudaEvent_t start = nullptr, stop = nullptr;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    auto time = [&](auto&& launch) {
        float ms = 0.0f;
        for (int round = 0; round < 2; ++round) {
            cudaEventRecord(start, stream);
            launch();
            cudaEventRecord(stop, stream);
            cudaEventSynchronize(stop);
            cudaEventElapsedTime(&ms, start, stop);
        }
        return ms > 0.0f ? double(bytes) / (double(ms) * 1e-3) : 0.0;
    };
    if (!m_staging.empty())
        m_copyBytesPerSecond = time([&] {
            cudaMemcpyAsync(m_staging[0], hostFrom, bytes, cudaMemcpyHostToDevice, stream);
        });
    m_mappedBytesPerSecond = time([&] { cuda::readBytesProbe(from, bytes, m_probeSink, stream); });
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaGetLastError();
}

std::string ExpertCache::describe() const
{
    std::string text = m_placement.describe();
    char rates[160];
    std::snprintf(rates, sizeof rates, "; the GPU reads host memory at %.1f GB/s%s",
        m_mappedBytesPerSecond / 1e9, m_staging.empty() ? "" : " in place");
    text += rates;
    if (!m_staging.empty()) {
        std::snprintf(rates, sizeof rates,
            " and copies it at %.1f GB/s into two staging buffers of %s (prefill)",
            m_copyBytesPerSecond / 1e9, gibText(double(m_stagingBytes)).c_str());
        text += rates;
    }
    if (m_hostExperts) {
        std::snprintf(rates, sizeof rates,
            "; the CPU computes host experts at %.1f GB/s after %.0f us a token and layer "
            "(round trip %.0f us",
            m_hostExperts->bytesPerSecond() / 1e9, m_hostExperts->computeFixedSeconds() * 1e6,
            m_hostExperts->streamRoundTripSeconds() * 1e6);
        text += rates;
        if (m_hostExperts->graphRoundTripSeconds() > 0.0) {
            std::snprintf(rates, sizeof rates, ", %.0f us in a graph",
                m_hostExperts->graphRoundTripSeconds() * 1e6);
            text += rates;
        }
        text += ")";
    }
    return text;
}

} // namespace cw::engine
