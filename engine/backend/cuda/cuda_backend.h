#pragma once

// The model's layers on one CUDA GPU: weights uploaded once in their quantized form, KV blocks
// and recurrent states in device memory sized at load, activations on the device from the
// embedding to the logits, decode steps replayed from CUDA graphs.

#include "engine/backend/backend.h"
#include "engine/common/result.h"

#include <memory>
#include <string>

namespace cw::engine {

class ModelDescription;
struct ModelWeights;

struct CudaBackendOptions {
    int device = 0;
    BackendCapacity capacity;
    std::string precision = "bf16"; // prefill products: "bf16", "tf32" or "f32"
};

// Errors say what is missing (driver, device, memory: with the figures) and offer the CPU.
Result<std::unique_ptr<Backend>> createCudaBackend(const ModelDescription& description,
    const ModelWeights& weights, const CudaBackendOptions& options);

} // namespace cw::engine
