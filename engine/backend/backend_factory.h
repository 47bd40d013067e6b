#pragma once

// Picks and creates the backend a model runs on from the user's device choice.

#include "engine/backend/backend.h"
#include "engine/common/result.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace cw::engine {

class ModelDescription;
struct ModelWeights;

struct DeviceSpec {
    enum class Kind { Cpu, Cuda, Auto } kind = Kind::Cpu;
    int index = 0; // CUDA ordinal
};

// "cpu", "cuda" (cuda:0), "cuda:N" or "auto"; an error names the text and what is accepted.
Result<DeviceSpec> parseDevice(std::string_view text);

struct BackendRequest {
    DeviceSpec device;
    BackendCapacity capacity;
    int threads = 0; // CPU, and on CUDA the host experts' (expert_cache.h)
    bool integerProducts = true; // CPU
    std::string gpuPrecision = "bf16"; // "bf16", "tf32" or "f32"
    std::uint64_t gpuMemoryBytes = 0; // CUDA: the budget (0: the card's free memory)
    std::string expertCountsPath; // CUDA: routing counts kept across runs ("": not kept)
};

// A CUDA device that cannot take the model (no driver, too old, not enough memory) is an
// error whose message says what is needed and offers the CPU; only "auto" falls back.
Result<std::unique_ptr<Backend>> createBackend(const ModelDescription& description,
    const ModelWeights& weights, const BackendRequest& request);

} // namespace cw::engine
