#include "engine/backend/cuda/host_experts.h"

#include "engine/backend/cpu/cpu_layers.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

namespace cw::engine {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// value into a ring of the latest `kept` (count: how many were ever kept).
template <typename T>
void keepLatest(std::vector<T>& ring, std::uint64_t& count, T value, std::size_t kept)
{
    if (ring.size() < kept)
        ring.push_back(value);
    else
        ring[std::size_t(count % kept)] = value;
    ++count;
}

} // namespace

Result<std::unique_ptr<HostExperts>> HostExperts::create(const HyperParameters& hp,
    const ModelWeights& weights, const std::vector<std::vector<bool>>& onGpu,
    const std::vector<ExpertBases>& bases, int expertsPerToken, int rowCapacity,
    bool integerProducts, int threads)
{
    std::unique_ptr<HostExperts> h(new HostExperts);
    h->m_hp = &hp;
    h->m_weights = &weights;
    h->m_onGpu = &onGpu;
    h->m_bases = &bases;
    h->m_k = expertsPerToken;
    h->m_rowCapacity = rowCapacity;
    h->m_hidden = hp.hiddenSize;
    h->m_integerProducts = integerProducts;
    h->m_pool = std::make_unique<kernels::ThreadPool>(threads);
    const std::size_t rowFloats = std::size_t(rowCapacity) * std::size_t(h->m_hidden);
    const std::size_t pairs = std::size_t(rowCapacity) * std::size_t(expertsPerToken);
    for (auto [p, bytes] :
        { std::pair<void**, std::size_t> { reinterpret_cast<void**>(&h->m_x), rowFloats * 4 },
            { reinterpret_cast<void**>(&h->m_ids), pairs * 4 },
            { reinterpret_cast<void**>(&h->m_weightsIn), pairs * 4 },
            { reinterpret_cast<void**>(&h->m_out), rowFloats * 4 },
            { reinterpret_cast<void**>(&h->m_control), sizeof(kernels::cuda::HostHandoffControl) },
            { reinterpret_cast<void**>(&h->m_times),
                onGpu.size() * kernels::cuda::kTimesPerLayer * sizeof(std::uint64_t) } })
        if (cudaHostAlloc(p, bytes, cudaHostAllocMapped) != cudaSuccess) {
            cudaGetLastError();
            return makeError("could not pin host memory for the host experts' rows");
        }
    new (h->m_control) kernels::cuda::HostHandoffControl {};
    std::fill_n(h->m_times, onGpu.size() * kernels::cuda::kTimesPerLayer, std::uint64_t(0));
    float* sums = nullptr;
    if (cudaHostGetDevicePointer(&h->m_device.x, h->m_x, 0) != cudaSuccess
        || cudaHostGetDevicePointer(&h->m_device.ids, h->m_ids, 0) != cudaSuccess
        || cudaHostGetDevicePointer(&h->m_device.weights, h->m_weightsIn, 0) != cudaSuccess
        || cudaHostGetDevicePointer(&sums, h->m_out, 0) != cudaSuccess
        || cudaHostGetDevicePointer(&h->m_device.control, h->m_control, 0) != cudaSuccess
        || cudaHostGetDevicePointer(&h->m_device.times, h->m_times, 0) != cudaSuccess
        || cudaMalloc(&h->m_requestCounter, sizeof(std::uint32_t)) != cudaSuccess
        || cudaMemset(h->m_requestCounter, 0, sizeof(std::uint32_t)) != cudaSuccess) {
        cudaGetLastError();
        return makeError("could not map the host experts' rows into the GPU's address space");
    }
    h->m_device.sums = sums;
    h->m_poller = std::thread([p = h.get()] { p->pollLoop(); });
    h->measure();
    h->m_recording = true;
    return h;
}

HostExperts::~HostExperts()
{
    if (m_poller.joinable()) {
        {
            std::lock_guard lock(m_wakeMutex);
            m_stop = true;
        }
        m_wakeCv.notify_one();
        m_poller.join();
    }
    if (m_requestCounter)
        cudaFree(m_requestCounter);
    for (void* p :
        { static_cast<void*>(m_x), static_cast<void*>(m_ids), static_cast<void*>(m_weightsIn),
            static_cast<void*>(m_out), static_cast<void*>(m_control), static_cast<void*>(m_times) })
        if (p)
            cudaFreeHost(p);
}

void HostExperts::wake()
{
    if (!m_poller.joinable())
        return;
    {
        std::lock_guard lock(m_wakeMutex);
        ++m_wakes;
    }
    m_wakeCv.notify_one();
}

// The polling thread: answers each request the GPU publishes (host_handoff.h). It spins while
// steps come (a decode step hands over a layer every few hundred microseconds), sleeps after
// an idle spell, and wakes for a step (wake()) or, unwoken, within 1 ms (0.1 s once idle for
// a second).
void HostExperts::pollLoop()
{
    using Clock = std::chrono::steady_clock;
    constexpr auto kSpin = std::chrono::milliseconds(2);
    std::atomic_ref<std::uint32_t> request(m_control->request), done(m_control->done);
    // Requests are numbered from 1: a first one published before this thread ran is answered
    // too (reading the word here instead lost it, and the GPU waited out its timeout).
    std::uint32_t answered = 0;
    std::uint64_t wakesSeen = 0;
    int previousLayer = -1;
    auto lastWork = Clock::now();
    for (unsigned spin = 1; !m_stop.load(std::memory_order_relaxed); ++spin) {
        const std::uint32_t r = request.load(std::memory_order_acquire);
        if (r != answered) {
            answered = r;
            const int layer = m_control->layer, rows = m_control->rows;
            // The previous layer's stamps are all written: its join came before this request.
            if (previousLayer >= 0)
                recordSides(previousLayer);
            previousLayer = layer;
            if (layer >= 0 && rows > 0 && rows <= m_rowCapacity)
                compute(layer, rows);
            done.store(r, std::memory_order_release);
            lastWork = Clock::now();
            continue;
        }
        if (spin % 1024 != 0 || Clock::now() - lastWork < kSpin) {
            kernels::cpuRelax();
            continue;
        }
        std::unique_lock lock(m_wakeMutex);
        const auto nap = Clock::now() - lastWork < std::chrono::seconds(1)
            ? std::chrono::milliseconds(1)
            : std::chrono::milliseconds(100);
        m_wakeCv.wait_for(lock, nap, [&] { return m_stop.load() || m_wakes != wakesSeen; });
        if (m_wakes != wakesSeen) {
            wakesSeen = m_wakes;
            lastWork = Clock::now();
        }
    }
}

cudaError_t HostExperts::markGpuDone(int layer, cudaStream_t stream)
{
    return kernels::cuda::handoffStampGpuDone(m_device, layer, stream);
}

void HostExperts::recordSides(int layer)
{
    if (!m_recording || layer < 0 || std::size_t(layer) >= m_onGpu->size())
        return;
    const volatile std::uint64_t* t = m_times + std::size_t(layer) * kernels::cuda::kTimesPerLayer;
    const std::uint64_t published = t[0], answered = t[1], gpuDone = t[2];
    // A layer whose GPU stamp is older than its request was not stamped in this step (a graph
    // captured before recording began); nothing to compare.
    if (published == 0 || answered < published || gpuDone < published)
        return;
    const std::pair<float, float> sides { float(double(answered - published) * 1e-3),
        float(double(gpuDone - published) * 1e-3) };
    std::lock_guard lock(m_activityMutex);
    keepLatest(m_sides, m_sidesCount, sides, kActivityKept);
}

cudaError_t HostExperts::handOver(int layer, int rows, const float* x, const std::int32_t* ids,
    const float* weights, const kernels::cuda::HostSplit& split, std::int32_t* gpuIds,
    cudaStream_t stream)
{
    if (rows <= 0 || rows > m_rowCapacity)
        return cudaErrorInvalidValue;
    return kernels::cuda::handoffToHost(m_device, m_requestCounter, layer, rows, x, ids, weights,
        m_hidden, m_k, split, gpuIds, stream);
}

// A CPU that has not answered in this long is not coming back (a layer takes microseconds).
constexpr double kHandoffTimeoutSeconds = 10.0;

cudaError_t HostExperts::awaitAnswer(int layer, int rows, float* out, cudaStream_t stream)
{
    if (rows <= 0 || rows > m_rowCapacity)
        return cudaErrorInvalidValue;
    return kernels::cuda::handoffFromHost(
        m_device, m_requestCounter, layer, rows, m_hidden, out, kHandoffTimeoutSeconds, stream);
}

// On the polling thread: no CUDA calls here.
void HostExperts::compute(int layer, int rows)
{
    const auto start = std::chrono::steady_clock::now();
    computeRows(layer, rows);
    if (!m_recording)
        return;
    const float us = float(secondsSince(start) * 1e6);
    std::lock_guard lock(m_activityMutex);
    keepLatest(m_computeUs, m_computed, us, kActivityKept);
    // Layers of one step follow each other within a few milliseconds; a longer gap is between
    // steps or requests, not a layer's cycle.
    const double sinceLast = std::chrono::duration<double>(start - m_lastStart).count();
    if (m_lastStart.time_since_epoch().count() != 0 && sinceLast < 2e-3)
        keepLatest(m_cycleUs, m_cycles, float(sinceLast * 1e6), kActivityKept);
    m_lastStart = start;
}

std::string HostExperts::activity() const
{
    std::lock_guard lock(m_activityMutex);
    if (m_computeUs.empty())
        return "";
    auto quantile = [](std::vector<float> v, double q) {
        const auto at = v.begin() + std::ptrdiff_t(q * double(v.size() - 1));
        std::nth_element(v.begin(), at, v.end());
        return *at;
    };
    char text[200];
    std::snprintf(text, sizeof text,
        "the CPU computed %llu layers' host experts, %.0f us each (median; 90th percentile %.0f)",
        static_cast<unsigned long long>(m_computed), quantile(m_computeUs, 0.5),
        quantile(m_computeUs, 0.9));
    std::string out = text;
    if (!m_cycleUs.empty()) {
        std::snprintf(text, sizeof text, ", a layer reaching it every %.0f us within a step",
            quantile(m_cycleUs, 0.5));
        out += text;
    }
    if (!m_sides.empty()) {
        std::vector<float> cpu, gpu;
        std::size_t cpuLast = 0;
        for (const auto& [c, g] : m_sides) {
            cpu.push_back(c);
            gpu.push_back(g);
            cpuLast += c > g ? 1 : 0;
        }
        std::snprintf(text, sizeof text,
            "; from a layer's request, its answer came after %.0f us and the GPU's own share was "
            "done after %.0f us (medians), the answer last in %.0f %% of %zu layers",
            quantile(cpu, 0.5), quantile(gpu, 0.5), 100.0 * double(cpuLast) / double(cpu.size()),
            cpu.size());
        out += text;
    }
    return out;
}

void HostExperts::computeRows(int layer, int rows)
{
    StepContext ctx;
    ctx.hp = m_hp;
    ctx.weights = m_weights;
    ctx.pool = m_pool.get();
    ctx.rows = 1;
    ctx.integerProducts = m_integerProducts;
    const auto& moe = m_weights->layers[std::size_t(layer)].moe;
    const auto& onGpu = (*m_onGpu)[std::size_t(layer)];
    for (int t = 0; t < rows; ++t) {
        m_chosen.clear();
        // The hand-off names the CPU's choices (-1 for the others); a cached expert would
        // have no pinned copy to read, so one is never taken.
        for (int j = 0; j < m_k; ++j) {
            const std::int32_t e = m_ids[std::size_t(t) * std::size_t(m_k) + std::size_t(j)];
            if (e >= 0 && std::size_t(e) < onGpu.size() && !onGpu[std::size_t(e)])
                m_chosen.emplace_back(
                    int(e), m_weightsIn[std::size_t(t) * std::size_t(m_k) + std::size_t(j)]);
        }
        float* out = m_out + std::size_t(t) * std::size_t(m_hidden);
        if (m_chosen.empty()) {
            std::fill(out, out + m_hidden, 0.0f);
            continue;
        }
        std::sort(m_chosen.begin(), m_chosen.end());
        routedExpertsOneToken(ctx, moe, m_x + std::size_t(t) * std::size_t(m_hidden), m_chosen, out,
            &(*m_bases)[std::size_t(layer)]);
    }
}

// The CPU's time for one token's host experts as a fixed cost plus bytes over a rate, from
// rounds of one expert and of k (each round on other experts than the last: a round on the
// same ones would read them from the CPU's caches), and the fixed cost of a round trip through
// the hand-off.
void HostExperts::measure()
{
    constexpr int kRounds = 4; // the first warms the threads and code up, the best of the rest
    const auto& layers = *m_onGpu;
    for (std::size_t l = 0; l < layers.size() && m_bytesPerSecond == 0.0; ++l) {
        std::vector<int> host;
        for (std::size_t e = 0; e < layers[l].size(); ++e)
            if (!layers[l][e])
                host.push_back(int(e));
        if (int(host.size()) < m_k)
            continue;
        const auto& moe = m_weights->layers[l].moe;
        std::size_t next = 0; // the next host expert a round takes
        auto bestRound = [&](int experts) { // {bytes, seconds} of the best round
            std::uint64_t bytes = 0;
            double best = 0.0;
            for (int round = 0; round < kRounds; ++round) {
                bytes = 0;
                for (int j = 0; j < m_k; ++j) {
                    const int e = j < experts ? host[next++ % host.size()] : -1; // -1: none
                    m_ids[j] = e;
                    m_weightsIn[j] = 1.0f / float(experts);
                    if (e < 0)
                        continue;
                    for (const ExpertStack* s : { &moe.gate, &moe.up, &moe.down }) {
                        const WeightMatrix w = s->expert(e);
                        bytes += std::uint64_t(w.rowStride) * std::uint64_t(w.rows);
                    }
                }
                std::fill(m_x, m_x + m_hidden, 0.01f);
                const auto start = std::chrono::steady_clock::now();
                compute(int(l), 1);
                const double s = secondsSince(start);
                if (round == 1 || (round > 1 && s < best))
                    best = s;
            }
            return std::pair { bytes, best };
        };
        const auto [oneBytes, oneSeconds] = bestRound(1);
        const auto [allBytes, allSeconds] = bestRound(m_k);
        if (allBytes > oneBytes && allSeconds > oneSeconds) {
            const double perByte = (allSeconds - oneSeconds) / double(allBytes - oneBytes);
            m_bytesPerSecond = 1.0 / perByte;
            m_fixedSeconds = std::max(0.0, oneSeconds - perByte * double(oneBytes));
        } else if (allSeconds > 0.0) { // too quick to tell apart: the k experts' rate alone
            m_bytesPerSecond = double(allBytes) / allSeconds;
        }
    }
    cudaStream_t stream = nullptr;
    void* device = nullptr; // zeros: a row, its ids (expert 0, not a host one) and a split
    std::int32_t* gpuIds = nullptr;
    float* answer = nullptr;
    const std::size_t deviceBytes = std::max<std::size_t>(std::size_t(m_hidden) * 4, 64 * 4);
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess
        || cudaMalloc(&device, deviceBytes) != cudaSuccess
        || cudaMemset(device, 0, deviceBytes) != cudaSuccess
        || cudaMalloc(&gpuIds, std::size_t(m_k) * 4) != cudaSuccess
        || cudaMalloc(&answer, std::size_t(m_hidden) * 4) != cudaSuccess) {
        cudaGetLastError();
        for (void* p : { device, static_cast<void*>(gpuIds), static_cast<void*>(answer) })
            if (p)
                cudaFree(p);
        if (stream)
            cudaStreamDestroy(stream);
        return;
    }
    const auto* zeros = static_cast<const std::byte*>(device);
    const kernels::cuda::HostSplit noSplit { reinterpret_cast<const std::uint8_t*>(zeros),
        reinterpret_cast<const std::int32_t*>(zeros), reinterpret_cast<const std::int32_t*>(zeros),
        0 };
    auto roundTrip = [&] { // one row there and back, nothing computed (layer -1)
        handOver(-1, 1, reinterpret_cast<const float*>(zeros),
            reinterpret_cast<const std::int32_t*>(zeros), reinterpret_cast<const float*>(zeros),
            noSplit, gpuIds, stream);
        awaitAnswer(-1, 1, answer, stream);
    };
    auto fastest = [&](auto&& launch) { // of five rounds, each waited for
        double best = 0.0;
        for (int round = 0; round < 5; ++round) {
            const auto start = std::chrono::steady_clock::now();
            launch();
            cudaStreamSynchronize(stream);
            const double s = secondsSince(start);
            best = round == 0 ? s : std::min(best, s);
        }
        return best;
    };
    m_streamRoundTripSeconds = fastest(roundTrip);
    // Decode steps replay graphs, where the rest of the step waits on each layer's round trip:
    // timed as a chain of them in one graph, per round trip (the graph's launch shared out),
    // which is the figure the cost model takes.
    constexpr int kChain = 8;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
        for (int i = 0; i < kChain; ++i)
            roundTrip();
        if (cudaStreamEndCapture(stream, &graph) == cudaSuccess
            && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess)
            m_graphRoundTripSeconds = fastest([&] { cudaGraphLaunch(exec, stream); }) / kChain;
    }
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    cudaFree(answer);
    cudaFree(gpuIds);
    cudaFree(device);
    cudaStreamDestroy(stream);
    cudaGetLastError();
}

} // namespace cw::engine
