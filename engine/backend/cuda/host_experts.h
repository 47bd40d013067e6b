#pragma once

// The routed experts a model over its GPU budget keeps in host memory, computed by the CPU for
// decode steps while the GPU computes the cached ones (expert_cache.h). Per MoE layer and step,
// on a stream of its own: the layer's input rows and routing choices cross to pinned host
// memory, a host function runs the CPU backend's kernels on the host experts those rows chose
// (routedExpertsOneToken), and the weighted sum crosses back for the GPU to add. The GPU's own
// products read a zero expert in place of each host one, so each expert counts exactly once.
// Two ways across, both graph nodes, so decode steps keep their CUDA graphs: by default a
// kernel hands the rows to a CPU thread that polls mapped memory and a kernel waits for its
// answer (kernels/cuda/moe/host_handoff.h); CW_CUDA_HANDOFF=node has copies and a host function
// instead, which the driver runs and reports back (tens of microseconds a layer more).

#include "engine/backend/cpu/cpu_layers.h"
#include "engine/common/result.h"
#include "engine/model/model_description.h"
#include "engine/models/model_weights.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/moe/host_handoff.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cuda_runtime.h>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cw::engine {

class HostExperts {
public:
    // onGpu: per layer and expert, whether the GPU holds it (the cache's placement); onCpu:
    // which of the others the CPU computes (the rest the GPU reads in place). Both change
    // between steps (the cache's refresh), never during one. bases: per layer, where its
    // experts are read (the cache's pinned copies). rowCapacity: the most rows of a step
    // this takes (decode steps). integerProducts: k-quant products with 8-bit activations, as
    // the CPU backend runs them (false: float activations, the f32 reference).
    static Result<std::unique_ptr<HostExperts>> create(const HyperParameters& hp,
        const ModelWeights& weights, const std::vector<std::vector<bool>>& onGpu,
        const std::vector<std::vector<bool>>& onCpu, const std::vector<ExpertBases>& bases,
        int expertsPerToken, int rowCapacity, bool integerProducts, int threads);
    ~HostExperts();
    HostExperts(const HostExperts&) = delete;
    HostExperts& operator=(const HostExperts&) = delete;

    int rowCapacity() const { return m_rowCapacity; }

    // Before a step that hands layers over: the polling thread, asleep after an idle spell,
    // spins again (a step it was not woken for still gets its answers, up to 0.1 s late).
    void wake();

    // On `stream`, after what is already queued there: rows x [rows][hidden], ids and weights
    // [rows][k] of `layer` to the host, the weighted sum of the experts the CPU computes into
    // out [rows][hidden] (device). Rows that chose none of them get zeros.
    cudaError_t enqueue(int layer, int rows, const float* x, const std::int32_t* ids,
        const float* weights, float* out, cudaStream_t stream);
    // On the stream of the GPU's own products of `layer`, after them and before the join with
    // enqueue's stream: the GPU's side of the layer is done (activity() compares the sides).
    cudaError_t markGpuDone(int layer, cudaStream_t stream);

    // Measured at create: the CPU's time for a layer's host experts of one token as a fixed
    // cost (computeFixedSeconds: the regions' start, x's quantization) plus the experts' bytes
    // at bytesPerSecond, and a round trip's fixed cost (a row there and back through the
    // hand-off, nothing computed) inside a graph, as decode steps run it (on a stream where a
    // graph could not be made); both.
    double bytesPerSecond() const { return m_bytesPerSecond; }
    double computeFixedSeconds() const { return m_fixedSeconds; }
    double roundTripSeconds() const
    {
        return m_graphRoundTripSeconds > 0.0 ? m_graphRoundTripSeconds : m_streamRoundTripSeconds;
    }
    double streamRoundTripSeconds() const { return m_streamRoundTripSeconds; }
    double graphRoundTripSeconds() const { return m_graphRoundTripSeconds; } // 0: not measured

    // What the CPU has done since load, for a benchmark to tell which side of a split runs
    // long: how many layers it computed, the median and 90th percentile of its time on one, and
    // the median time from one layer's start to the next within a step, and (polled hand-off)
    // the median time from a layer's request to its answer and to the GPU's own share done,
    // with how often the CPU's answer came last; "" before any.
    std::string activity() const;

private:
    struct Job {
        HostExperts* owner;
        int layer, rows;
    };
    enum class Handoff { Poll, HostNode };
    HostExperts() = default;
    static void CUDART_CB run(void* job);
    void compute(int layer, int rows); // computeRows, timed once measure() is done
    void computeRows(int layer, int rows);
    void measure();
    void pollLoop();
    void recordSides(int layer); // the GPU's stamps of layer's latest hand-off, into m_sides
    cudaError_t handOver(int layer, int rows, const float* x, const std::int32_t* ids,
        const float* weights, float* out, cudaStream_t stream);

    const HyperParameters* m_hp = nullptr;
    const ModelWeights* m_weights = nullptr;
    const std::vector<std::vector<bool>>* m_onGpu = nullptr;
    const std::vector<std::vector<bool>>* m_onCpu = nullptr;
    const std::vector<ExpertBases>* m_bases = nullptr;
    int m_k = 0, m_rowCapacity = 0;
    std::int64_t m_hidden = 0;
    bool m_integerProducts = true;
    std::unique_ptr<kernels::ThreadPool> m_pool;
    Handoff m_handoff = Handoff::Poll;
    // Pinned and mapped: one step's layer at a time (the layers of a step run in order).
    float* m_x = nullptr;
    std::int32_t* m_ids = nullptr;
    float* m_weightsIn = nullptr;
    float* m_out = nullptr;
    kernels::cuda::HostHandoffControl* m_control = nullptr; // mapped
    std::uint64_t* m_times = nullptr; // mapped [layer][kTimesPerLayer] (host_handoff.h)
    kernels::cuda::HostHandoffBuffers m_device; // the same buffers as the GPU addresses them
    std::uint32_t* m_requestCounter = nullptr; // device
    std::thread m_poller;
    std::atomic<bool> m_stop { false };
    std::mutex m_wakeMutex;
    std::condition_variable m_wakeCv;
    std::uint64_t m_wakes = 0; // under m_wakeMutex
    std::map<std::pair<int, int>, std::unique_ptr<Job>> m_jobs; // stable: graphs keep them
    std::vector<std::pair<int, float>> m_chosen;
    double m_bytesPerSecond = 0.0, m_fixedSeconds = 0.0;
    // The latest layers' compute and start-to-start times, in microseconds (a ring of
    // kActivityKept each; written by the thread that computes, read by activity()).
    static constexpr std::size_t kActivityKept = std::size_t(1) << 16;
    mutable std::mutex m_activityMutex;
    std::vector<float> m_computeUs, m_cycleUs;
    // Per layer handed over: request to answer seen, request to the GPU's share done (us).
    std::vector<std::pair<float, float>> m_sides;
    std::uint64_t m_sidesCount = 0;
    std::uint64_t m_computed = 0, m_cycles = 0;
    std::chrono::steady_clock::time_point m_lastStart {};
    std::atomic<bool> m_recording { false }; // off while measure() runs

    double m_streamRoundTripSeconds = 0.0, m_graphRoundTripSeconds = 0.0;
};

} // namespace cw::engine
