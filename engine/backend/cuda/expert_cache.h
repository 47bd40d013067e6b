#pragma once

// Routed experts of a model larger than its GPU memory budget: the most chosen ones in device
// slots, the rest in page-locked host memory the GPU reads over PCIe. Each offloaded layer has
// two views of its expert stacks, both through a per-expert pointer table
// (DeviceExpertStack::expertData):
//   live   cached experts in their slots, the others read in place from mapped host memory
//          (decode steps: a token reads a few experts' rows, so only those rows cross);
//   staged cached experts in their slots, the others copied in bulk into one of two staging
//          buffers first, the next offloaded layer's copy overlapping this layer's work
//          (prefill: nearly every expert is chosen by some token, and a copy at full PCIe speed
//          beats reading the same rows from inside the products).
//   host   (decode steps) as live, plus a zero expert (id: the expert count): each token's
//          host choices are split between the CPU, which computes its share beside the GPU
//          (host_experts.h) while the GPU reads the zero expert in its place and adds the CPU's
//          sum, and the GPU, which reads the rest in place. How many of a token's n host
//          choices the CPU takes is a per-layer table over n from the cost model, applied per
//          token on the device, so the two sides finish together whichever experts it chose.
// Which view a layer takes in a step comes from a cost model with measured figures: the copy
// bandwidth, the rate at which the GPU reads mapped host memory, and the CPU's rate over
// expert bytes with its round trip, against the bytes each view would move for that many
// tokens under the measured routing frequencies.
// Routing counts are kept per layer and expert on the device, saved to the model's cache
// folder and read at the next load, where they decide which experts get the slots; between
// requests (refresh) each layer swaps its coldest cached experts for hotter ones.

#include "engine/backend/cuda/device_memory.h"
#include "engine/backend/cuda/host_experts.h"
#include "engine/backend/expert_placement.h"
#include "engine/models/model_weights.h"
#include "kernels/cuda/moe/moe_experts.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cw::engine {

// The bytes of one routed expert (gate, up and down rows; a fused gate_up stack once) per
// layer of the model; 0 for a layer without routed experts.
std::vector<std::uint64_t> routedExpertBytesPerLayer(const ModelWeights& weights);

// Routing counts an earlier run saved ([layers][experts]); empty when there is no file, or one
// of another model's shape, or a short one.
std::vector<std::uint64_t> readExpertCounts(const std::string& path, int layers, int experts);

class ExpertCache {
public:
    struct LayerStacks {
        kernels::cuda::DeviceExpertStack gate, up, down;
    };

    // What the CPU needs to compute host experts (no host view without it).
    struct HostCompute {
        const HyperParameters* hp = nullptr;
        bool integerProducts = true;
        int threads = 0; // 0: every hardware thread but one
    };

    // Takes the slots, tables and (when `withStaging` fits) two staging buffers from `arena`;
    // pins the offloaded experts' host memory; measures the bandwidths on `stream`.
    // countsPath: where routing counts are kept ("" : not kept).
    static Result<std::unique_ptr<ExpertCache>> create(const ModelWeights& weights,
        const ExpertPlacement& placement, int expertsPerToken, bool withStaging, DeviceArena& arena,
        cudaStream_t stream, std::string countsPath, const HostCompute* hostCompute = nullptr);
    ~ExpertCache();
    ExpertCache(const ExpertCache&) = delete;
    ExpertCache& operator=(const ExpertCache&) = delete;

    // Bytes create() will take from the arena beyond the slots and staging (tables, counts).
    static std::uint64_t overheadBytes(const ModelWeights& weights);
    // One staging buffer's bytes under `placement`: the most a layer keeps uncached.
    static std::uint64_t stagingBytes(const ModelWeights& weights, const ExpertPlacement& placement);

    bool offloaded(int layer) const;
    const LayerStacks& live(int layer) const;
    const LayerStacks& staged(int layer) const;
    const LayerStacks& hostView(int layer) const;
    // The cost model: whether a step of `tokens` rows should read `layer`'s host experts
    // through the staging copy rather than in place.
    bool prefersStaging(int layer, std::int64_t tokens) const;
    bool hasStaging() const { return !m_staging.empty(); }
    // Whether a decode step of `tokens` rows should take the host view (the CPU computes part
    // of `layer`'s host experts, the GPU reads the rest in place) rather than the GPU read them
    // all in place. Either view is right whatever the refreshes did, so a decode graph
    // captured with either stays right.
    bool prefersHost(int layer, std::int64_t tokens) const;
    // Whether CW_CUDA_EXPERTS forces one view (inplace, staged, host, halves) over the cost
    // model, or the cost model's own choice untimed (split).
    bool viewForced() const { return m_forced != Forced::None; }
    // The host view of a decode step's `layer`, in three parts: on the products' stream after
    // the router, handOverToHost splits rows x, ids, weights between the CPU and the GPU
    // (hostGpuIds(): the ids the GPU's products take with the host view) and hands the CPU its
    // share; on a stream that waits for it, awaitHost brings the CPU's weighted sum into
    // hostSums() (device, [rows][hidden]); markGpuDone, after the GPU's products on theirs,
    // times the two sides for activity().
    cudaError_t handOverToHost(int layer, int rows, const float* x, const std::int32_t* ids,
        const float* weights, cudaStream_t stream);
    cudaError_t awaitHost(int layer, int rows, cudaStream_t stream);
    cudaError_t markGpuDone(int layer, cudaStream_t stream);
    const std::int32_t* hostGpuIds() const { return m_hostGpuIds; }
    // The host view's plans of how many of a token's host choices the CPU takes: the cost
    // model's at the GPU's measured in-place rate, at half of it (the decode products read a
    // few experts in place at 15-30 GB/s where the bulk probe reads 34-51: PERFORMANCE.md), and
    // every one on the CPU. decode_view_trial.h times them.
    enum class SplitPlan { Measured = 0, HalfRate = 1, AllOnCpu = 2 };
    static constexpr int kSplitPlans = 3;
    // In stream order, for the steps after: the plan the host views take.
    cudaError_t usePlan(SplitPlan plan, cudaStream_t stream);
    const float* hostSums() const { return m_hostSums; }
    // Before a decode step with host views: the CPU's polling thread is spinning when the
    // step's first layer reaches it (HostExperts::wake).
    void wakeHostExperts()
    {
        if (m_hostExperts)
            m_hostExperts->wake();
    }

    // Staging, in stream order: begin() before the step's first layer; stage() makes `stream`
    // wait for the layer's copy (issuing it if the previous layer did not prefetch it);
    // prefetch() issues a later layer's copy into the other buffer; release() marks the
    // layer's buffer free again once `stream` has used it.
    void beginStep();
    cudaError_t stage(int layer, cudaStream_t stream);
    cudaError_t prefetch(int layer);
    cudaError_t release(int layer, cudaStream_t stream);

    // Routing counts: `ids` of one MoE layer's step ([pairs]) are counted on the device.
    cudaError_t count(int layer, const std::int32_t* ids, std::int64_t pairs, cudaStream_t stream);
    // Between steps: reads the counts and swaps each layer's least chosen cached experts for
    // more chosen host ones (at most a bounded copy time), then saves the counts. Returns a
    // line for the log when anything moved, else "".
    Result<std::string> refresh(cudaStream_t stream);

    const ExpertPlacement& placement() const { return m_placement; }
    // Where the experts are, and the host-read bandwidths measured.
    std::string describe() const;
    // What the CPU has done with the host experts since load ("" when nothing).
    std::string activity() const { return m_hostExperts ? m_hostExperts->activity() : ""; }

private:
    enum class Forced { None, InPlace, Staged, Host, Split, Halves };
    static Forced forcedView();
    ExpertCache() = default;
    struct Stack; // one distinct expert tensor of a layer
    struct Layer;
    Result<void> pinHostExperts();
    Result<void> buildLayer(int layer, DeviceArena& arena);
    void writeTables(int layer);
    cudaError_t issueCopy(int layer);
    void measureBandwidths(cudaStream_t stream);
    // Per expert of `layer`: the chance that one token chooses it (the measured counts, else
    // uniform).
    std::vector<double> choiceChances(int layer) const;
    // Per layer: how many of a token's n host choices the CPU takes, for each n and plan (the
    // host view's split), from the measured rates; uploads them.
    void planHostSplit(int layer);
    // The time for one token's n host choices of `layer` with c of them on the CPU, and with
    // all read in place, the in-place reads at `rate` times the measured rate.
    double hostSplitSeconds(int layer, int n, int c, double rate = 1.0) const;
    double inPlaceSeconds(int layer, int n, double rate = 1.0) const;
    std::vector<std::uint64_t> totalCounts() const; // saved + this run's
    void saveCounts(const std::vector<std::uint64_t>& counts) const;

    const ModelWeights* m_weights = nullptr;
    ExpertPlacement m_placement;
    int m_experts = 0, m_k = 0;
    std::vector<Layer> m_layers;
    std::vector<int> m_offloadedOrder; // offloaded layers, ascending
    std::vector<std::byte*> m_staging; // 0 or 2 buffers
    std::uint64_t m_stagingBytes = 0;
    cudaStream_t m_copyStream = nullptr;
    cudaEvent_t m_copied[2] = {}, m_free[2] = {};
    int m_issued[2] = { -1, -1 }; // the layer whose copy each buffer holds this step
    std::uint32_t* m_counts = nullptr; // device [layers][experts]
    std::uint32_t* m_probeSink = nullptr; // device: readBytesProbe's checksum
    std::vector<std::uint64_t> m_savedCounts; // from the counts file, [layers][experts]
    std::byte* m_zeroExpert = nullptr; // device zeros: a host expert's stand-in (host view)
    std::unique_ptr<HostExperts> m_hostExperts;
    // Per layer: its experts' pinned copies, which the CPU reads too (not the model's pages).
    std::vector<ExpertBases> m_hostBases;
    float* m_hostSums = nullptr; // device [decode rows][hidden]
    std::int32_t* m_hostGpuIds = nullptr; // device [decode rows][k]
    std::int32_t* m_planInUse = nullptr; // device word (HostSplit::table)
    int m_planSet = -1; // what m_planInUse was last set to (-1: not yet)
    std::string m_countsPath;
    Forced m_forced = Forced::None; // CW_CUDA_EXPERTS, read at create
    std::vector<void*> m_hostCopies; // the host experts' pinned copies
    double m_copyBytesPerSecond = 0.0, m_mappedBytesPerSecond = 0.0;
};

} // namespace cw::engine
