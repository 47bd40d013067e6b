#include "engine/backend/cuda/device_memory.h"

namespace cw::engine {

Error cudaFailure(const std::string& what, cudaError_t error)
{
    return makeError(what + ": " + cudaGetErrorName(error) + ": " + cudaGetErrorString(error));
}

DeviceArena::~DeviceArena()
{
    for (void* p : m_blocks)
        cudaFree(p);
}

Result<void*> DeviceArena::allocate(std::size_t bytes, const std::string& purpose)
{
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, std::max<std::size_t>(bytes, 256));
    if (e != cudaSuccess) {
        cudaGetLastError();
        return makeError("the GPU has no room for " + purpose + " (" + std::to_string(bytes >> 20)
            + " MiB; " + std::to_string(m_bytes >> 20)
            + " MiB already taken): " + cudaGetErrorString(e)
            + ". Use a shorter context, fewer parallel sequences or --device cpu");
    }
    m_blocks.push_back(p);
    m_bytes += bytes;
    return p;
}

} // namespace cw::engine
