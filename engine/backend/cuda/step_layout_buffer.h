#pragma once

// The step's layout (kernels/cuda/cuda_step.h) packed into one pinned host buffer and sent in
// one copy. Offsets depend only on the row and sequence counts, so a decode step of the same
// batch size always finds its arrays at the same device addresses (what a replayed graph
// reads).

#include "engine/backend/backend.h"
#include "engine/backend/cuda/device_memory.h"
#include "kernels/cuda/cuda_step.h"

#include <cstdint>
#include <cuda_runtime_api.h>

namespace cw::engine {

class StepLayoutBuffer {
public:
    StepLayoutBuffer() = default;
    StepLayoutBuffer(const StepLayoutBuffer&) = delete;
    StepLayoutBuffer& operator=(const StepLayoutBuffer&) = delete;
    ~StepLayoutBuffer();

    Result<void> allocate(std::int64_t rowCapacity, std::int32_t sequenceCapacity,
        std::int32_t blocksPerSequence, DeviceArena& arena);

    // Fills the host buffer for `step` (maxContext: the capacity the kernels' grids use) and
    // returns the layout with device pointers; upload() then sends it.
    kernels::cuda::StepLayout pack(const BackendStep& step, std::int32_t maxContext, bool decode);
    cudaError_t upload(cudaStream_t stream);
    // Device copy of step.logitRows (filled by pack).
    const std::int32_t* logitRows() const { return m_logitRows; }
    // Device copy of step.draws (filled by pack); null when the step draws nothing.
    const kernels::TokenDraw* draws() const { return m_draws; }

private:
    std::int64_t m_rowCapacity = 0;
    std::int32_t m_sequenceCapacity = 0;
    std::int32_t m_blocksPerSequence = 0;
    std::int32_t* m_host = nullptr;
    std::int32_t* m_device = nullptr;
    std::size_t m_used = 0; // int32 values packed for the current step
    const std::int32_t* m_logitRows = nullptr;
    const kernels::TokenDraw* m_draws = nullptr;
};

} // namespace cw::engine
