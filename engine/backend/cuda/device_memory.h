#pragma once

// Device memory the CUDA backend holds, with the errors of the runtime turned into messages
// for a person. Every allocation is counted so the memory plan and the benchmark's peak
// figure come from what was actually taken.

#include "engine/common/result.h"

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <string>
#include <vector>

namespace cw::engine {

// "what: <cuda error name>: <cuda error text>".
Error cudaFailure(const std::string& what, cudaError_t error);

// Owns every cudaMalloc of one backend; freed together.
class DeviceArena {
public:
    DeviceArena() = default;
    DeviceArena(const DeviceArena&) = delete;
    DeviceArena& operator=(const DeviceArena&) = delete;
    ~DeviceArena();

    // `purpose` names the buffer in an out-of-memory message.
    Result<void*> allocate(std::size_t bytes, const std::string& purpose);
    std::uint64_t bytes() const { return m_bytes; }

private:
    std::vector<void*> m_blocks;
    std::uint64_t m_bytes = 0;
};

} // namespace cw::engine
