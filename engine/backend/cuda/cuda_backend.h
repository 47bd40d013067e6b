#pragma once

// The model's layers on one CUDA GPU: weights uploaded once in their quantized form, KV blocks
// and recurrent states in device memory sized at load, activations on the device from the
// embedding to the logits, decode steps replayed from CUDA graphs.

#include "engine/backend/backend.h"
#include "engine/common/result.h"

#include <cstdint>
#include <memory>
#include <string>

namespace cw::engine {

class ModelDescription;
struct ModelWeights;

struct CudaBackendOptions {
    int device = 0;
    BackendCapacity capacity;
    std::string precision = "bf16"; // prefill products: "bf16", "tf32" or "f32"
    // Device bytes the backend may take (weights, KV, states, workspace; not the CUDA
    // context); 0: the card's free memory. A model over the budget keeps its least chosen
    // routed experts in host memory (engine/backend/cuda/expert_cache.h).
    std::uint64_t memoryBudgetBytes = 0;
    std::string expertCountsPath; // where routing counts are kept ("": not kept)
    // CPU threads for the routed experts kept in host memory (0: every hardware thread but one).
    int hostThreads = 0;
};

// Errors say what is missing (driver, device, memory: with the figures) and offer the CPU.
Result<std::unique_ptr<Backend>> createCudaBackend(const ModelDescription& description,
    const ModelWeights& weights, const CudaBackendOptions& options);

} // namespace cw::engine
