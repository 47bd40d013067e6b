#pragma once

// The reference backend: the model's layers on the CPU's kernels (kernels/cpu), weights read
// in place from the memory-mapped file, KV blocks and recurrent states in host memory that
// grows on demand.

#include "engine/backend/backend.h"
#include "engine/backend/cpu/cpu_kv_store.h"
#include "engine/backend/cpu/cpu_layers.h"
#include "engine/backend/cpu/step_workspace.h"
#include "engine/model/model_description.h"
#include "engine/models/model_weights.h"
#include "kernels/cpu/thread_pool.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace cw::engine {

struct CpuBackendOptions {
    int threads = 0; // 0: every hardware thread
    int kvBlockTokens = 16;
    bool integerProducts = true; // ModelOptions::integerProducts
};

class CpuBackend final : public Backend {
public:
    CpuBackend(const ModelDescription& description, const ModelWeights& weights,
        const CpuBackendOptions& options);

    std::string deviceName() const override;
    bool isGpu() const override { return false; }
    std::string memoryPlan() const override;
    std::uint64_t peakMemoryBytes() const override;
    KvBlockStore& kvStore() override { return m_kv; }

    Result<int> newState() override;
    Result<int> copyState(int from) override;
    void releaseState(int slot) override;

    Result<void> beginStep(const BackendStep& step) override;
    void embed() override;
    void norm(NormSite site, bool addResidual) override;
    void attention(int layer) override;
    void deltaNet(int layer) override;
    void moe(int layer) override;
    Result<StepOutput> finishStep() override;
    Result<std::vector<float>> keptLogits(std::span<const std::int64_t> rows) override;
    std::int64_t keptLogitRows() const override { return INT64_MAX; }

    const StepTimers& stepTimers() const override { return m_timers; }
    void resetStepTimers() override { m_timers.reset(); }
    const ExpertLoad* expertLoad() const override { return m_expertLoad.get(); }

    kernels::ThreadPool& threads() { return *m_pool; }

private:
    // Conv and recurrent states of every DeltaNet layer for one sequence.
    struct State {
        std::vector<std::vector<float>> conv; // per layer: [convDim][kernel - 1]
        std::vector<std::vector<float>> recurrent; // per layer: [nV][dk][dv]
    };

    const ModelDescription& m_description;
    const ModelWeights& m_weights;
    std::unique_ptr<kernels::ThreadPool> m_pool;
    std::unique_ptr<ExpertLoad> m_expertLoad; // MoE models only
    CpuKvStore m_kv;
    std::vector<State> m_states;
    std::vector<bool> m_stateUsed;
    int m_deltaLayers = 0;
    bool m_integerProducts;
    bool m_renormalise;
    StepTimers m_timers;
    StepWorkspace m_workspace;
    StepContext m_ctx;
    const BackendStep* m_step = nullptr;
    std::string m_nonFinite; // the first block of this step whose output was not finite
    std::vector<float> m_keptLogits; // the last finished step's every logit row
    std::int64_t m_keptRows = 0;

    std::string blockBefore(NormSite site) const;
};

} // namespace cw::engine
