#pragma once

// The routed experts a model over its GPU budget keeps in host memory, computed by the CPU for
// decode steps while the GPU computes the cached ones (expert_cache.h) and reads the rest in
// place. Per MoE layer and step: a kernel splits each row's host choices between the two
// sides (kernels/cuda/moe/host_handoff.h: a per-row count from the cost model, so a token that
// chose many host experts gives the CPU more) and hands the rows, the CPU's choices and their
// weights to a CPU thread polling mapped memory; it runs the CPU backend's kernels on them
// (routedExpertsOneToken) and writes the weighted sum back, which a kernel on a stream of its
// own waits for and copies to the device for the GPU to add. The GPU's products read a zero
// expert in place of each of the CPU's, so each expert counts exactly once. All of it is graph
// nodes, so decode steps keep their CUDA graphs; no driver call in between (a graph's host
// node, the first way, took 36-38 us a layer against 8-9 us for this: PERFORMANCE.md).

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
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cw::engine {

class HostExperts {
public:
    // onGpu: per layer and expert, whether the GPU holds it (the cache's placement; it changes
    // between steps, at the cache's refresh, never during one). bases: per layer, where its
    // experts are read (the cache's pinned copies). rowCapacity: the most rows of a step
    // this takes (decode steps). integerProducts: k-quant products with 8-bit activations, as
    // the CPU backend runs them (false: float activations, the f32 reference).
    static Result<std::unique_ptr<HostExperts>> create(const HyperParameters& hp,
        const ModelWeights& weights, const std::vector<std::vector<bool>>& onGpu,
        const std::vector<ExpertBases>& bases, int expertsPerToken, int rowCapacity,
        bool integerProducts, int threads);
    ~HostExperts();
    HostExperts(const HostExperts&) = delete;
    HostExperts& operator=(const HostExperts&) = delete;

    int rowCapacity() const { return m_rowCapacity; }

    // Before a step that hands layers over: the polling thread, asleep after an idle spell,
    // spins again (a step it was not woken for still gets its answers, up to 0.1 s late).
    void wake();

    // On `stream` (the GPU's products'), after the router: splits rows' choices (ids and
    // weights [rows][k] of `layer`) by `split`, the GPU's ids into gpuIds [rows][k] (device),
    // and hands x [rows][hidden] and the CPU's choices to the host.
    cudaError_t handOver(int layer, int rows, const float* x, const std::int32_t* ids,
        const float* weights, const kernels::cuda::HostSplit& split, std::int32_t* gpuIds,
        cudaStream_t stream);
    // On a stream that waits for handOver's: the weighted sum of the CPU's experts into out
    // [rows][hidden] (device), once the CPU has answered. Rows that gave it none get zeros.
    cudaError_t awaitAnswer(int layer, int rows, float* out, cudaStream_t stream);
    // On `stream`, after the GPU's own products of `layer` and before the join with
    // awaitAnswer's: the GPU's side of the layer is done (activity() compares the sides).
    cudaError_t markGpuDone(int layer, cudaStream_t stream);

    // Measured at create: the CPU's time for a layer's host experts of one token as a fixed
    // cost (computeFixedSeconds: the regions' start, x's quantization) plus the experts' bytes
    // at bytesPerSecond, and a round trip's fixed cost (a row there and back through the
    // hand-off, nothing computed) inside a graph, as decode steps run it (on a stream where a
    // graph could not be made).
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
    HostExperts() = default;
    void compute(int layer, int rows); // computeRows, timed once measure() is done
    void computeRows(int layer, int rows);
    void measure();
    void pollLoop();
    void recordSides(int layer); // the GPU's stamps of layer's latest hand-off, into m_sides

    const HyperParameters* m_hp = nullptr;
    const ModelWeights* m_weights = nullptr;
    const std::vector<std::vector<bool>>* m_onGpu = nullptr;
    const std::vector<ExpertBases>* m_bases = nullptr;
    int m_k = 0, m_rowCapacity = 0;
    std::int64_t m_hidden = 0;
    bool m_integerProducts = true;
    std::unique_ptr<kernels::ThreadPool> m_pool;
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
