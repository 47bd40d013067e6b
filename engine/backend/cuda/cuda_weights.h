#pragma once

// The model's weights on the device: every matrix uploaded once as the file stores it
// (quantized blocks, never expanded), expert stacks made contiguous per stack, and the small
// float vectors (norms, gates, conv taps) the host already converted.

#include "engine/backend/cuda/device_memory.h"
#include "engine/models/model_weights.h"
#include "kernels/cuda/moe/moe_experts.h"
#include "kernels/cuda/quant/quant_products.h"

#include <cstdint>
#include <map>
#include <vector>

namespace cw::engine {

struct CudaLayerWeights {
    const float* inputNorm = nullptr;
    const float* postAttentionNorm = nullptr;
    // Attention.
    kernels::cuda::DeviceMatrix q, k, v, o;
    const float* qNorm = nullptr;
    const float* kNorm = nullptr;
    // Gated DeltaNet.
    kernels::cuda::DeviceMatrix qkv, z, beta, alpha, out;
    const float* conv = nullptr;
    const float* dtBias = nullptr;
    const float* negA = nullptr;
    const float* deltaNorm = nullptr;
    // MoE.
    kernels::cuda::DeviceMatrix router;
    kernels::cuda::DeviceExpertStack gate, up, down;
    const float* sharedGate = nullptr; // null: no shared expert
    kernels::cuda::DeviceMatrix sharedGateProj, sharedUp, sharedDown;
};

struct CudaWeights {
    kernels::cuda::DeviceMatrix embedding;
    kernels::cuda::DeviceMatrix output;
    const float* outputNorm = nullptr;
    const float* ropeInvFreq = nullptr;
    std::vector<CudaLayerWeights> layers;
    std::uint64_t matrixBytes = 0; // quantized matrices and expert stacks
    std::uint64_t vectorBytes = 0; // float vectors
};

// Bytes uploadWeights will take (to check the card's room before allocating anything).
std::uint64_t deviceWeightBytes(const ModelWeights& weights);

// Uploads every weight through `arena`; errors name the tensor or the missing room. The routed
// experts of a layer marked in `expertsElsewhere` are left out (the expert cache holds them).
Result<CudaWeights> uploadWeights(const ModelWeights& weights, DeviceArena& arena,
    const std::vector<bool>& expertsElsewhere = {});

} // namespace cw::engine
