#pragma once

// One step of a DeltaNet layer's core on random data, run by the CPU reference (the formulas
// of engine/models/layers.cpp deltaNetLayer with kernels/cpu/ops) and by the CUDA kernels, so
// the tests and the micro-benchmark share the set-up. Plain C++ with the CUDA runtime API.

#include "kernels/cuda/deltanet/delta_net_kernels.h"
#include "kernels/cuda/deltanet/gated_delta_net.h"

#include <cstdint>
#include <cuda_runtime_api.h>
#include <string>
#include <vector>

namespace cw::test {

using kernels::cuda::DeltaNetShape;

// Weights of one layer and the recurrent states of every slot (host copies).
struct DeltaNetLayerData {
    DeltaNetShape shape;
    int slots = 0;
    std::vector<float> convWeight, dtBias, negA, normWeight;
    std::vector<float> convState, recurrentState;
};

// The projections of one step: rows of sequences given by their lengths and state slots.
struct DeltaNetStepData {
    std::vector<int> lengths, slots;
    int maxTokensPerSequence = 0; // capacity handed to the kernels (>= every length)
    std::vector<float> qkv, alpha, beta, z;
    int rows() const;
};

// What a step produces: core rows, the rewritten gates and the states after the step.
struct DeltaNetStepResult {
    std::vector<float> core, g, beta, convState, recurrentState;
};

// Deterministic random data (never zeros): weights and nonzero states as after an earlier
// step.
DeltaNetLayerData randomLayer(const DeltaNetShape& shape, int slots, std::uint32_t seed);
DeltaNetStepData randomStep(const DeltaNetShape& shape, std::vector<int> lengths,
    std::vector<int> slots, std::uint32_t seed, int maxTokensPerSequence = 0);

// The CPU reference; updates layer's states.
DeltaNetStepResult cpuStep(DeltaNetLayerData& layer, const DeltaNetStepData& step);

// A layer's weights and states on the device, and the step buffers of the largest step run.
class DeviceDeltaNet {
public:
    explicit DeviceDeltaNet(const DeltaNetLayerData& layer);
    ~DeviceDeltaNet();
    DeviceDeltaNet(const DeviceDeltaNet&) = delete;
    DeviceDeltaNet& operator=(const DeviceDeltaNet&) = delete;

    // Uploads the step, poisons core and scratch with NaN, runs gatedDeltaNet (or the tuned
    // variant) and returns its error; `result` is filled when it succeeded.
    cudaError_t run(const DeltaNetStepData& step, DeltaNetStepResult* result,
        const kernels::cuda::deltanet::Tuning* tuning = nullptr);

    // The device's conv and recurrent states of every slot as they are now, the conv states in
    // the CPU's layout (the last kernel-1 inputs, oldest first).
    cudaError_t downloadStates(std::vector<float>& conv, std::vector<float>& recurrent) const;

    // For the benchmark: upload once, then enqueue the call repeatedly on `stream`.
    cudaError_t upload(const DeltaNetStepData& step);
    cudaError_t enqueue(cudaStream_t stream, const kernels::cuda::deltanet::Tuning& tuning);
    // The pieces enqueue() hands to the kernels, for timing the stages one by one.
    const float* qkv() const { return m_qkv; }
    float* alpha() { return m_alpha; }
    float* betaRaw() { return m_beta; }
    const float* z() const { return m_z; }
    float* core() { return m_core; }
    kernels::cuda::StepLayout layout() const { return m_layout; }
    kernels::cuda::DeviceScratch scratch() const { return { m_scratch, m_scratchBytes }; }
    kernels::cuda::DeltaNetStates states() const
    {
        return { m_convState, m_recurrent, m_counters };
    }
    const float* convWeight() const { return m_convWeight; }
    const float* dtBias() const { return m_dtBias; }
    const float* negA() const { return m_negA; }
    const float* normWeight() const { return m_normWeight; }

private:
    template <typename T> cudaError_t reserve(T*& p, std::size_t& capacity, std::size_t count);

    DeltaNetShape m_shape;
    int m_slots = 0;
    float *m_convWeight = nullptr, *m_dtBias = nullptr, *m_negA = nullptr, *m_normWeight = nullptr,
          *m_convState = nullptr, *m_recurrent = nullptr;
    float *m_qkv = nullptr, *m_alpha = nullptr, *m_beta = nullptr, *m_z = nullptr,
          *m_core = nullptr;
    int* m_counters = nullptr;
    // Each slot's next position: the device's conv ring is indexed by position (the CPU's
    // states carry an earlier context of 100 tokens when a test starts).
    std::vector<int> m_slotPos;
    std::int32_t* m_ints = nullptr;
    std::byte* m_scratch = nullptr;
    std::size_t m_qkvCap = 0, m_alphaCap = 0, m_betaCap = 0, m_zCap = 0, m_coreCap = 0,
                m_intsCap = 0, m_scratchCap = 0, m_scratchBytes = 0;
    kernels::cuda::StepLayout m_layout;
};

// ||a - b|| / ||b|| and max |a - b|; NaN anywhere in a gives infinity.
struct ErrorFigures {
    double relative = 0.0, maxAbs = 0.0;
    std::string text() const;
};
ErrorFigures compare(const std::vector<float>& got, const std::vector<float>& want);

} // namespace cw::test
