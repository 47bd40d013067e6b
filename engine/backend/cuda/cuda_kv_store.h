#pragma once

// The KV blocks on the device: one allocation sized at load (kernels/cuda/cuda_step.h's
// PagedKv layout, the CPU's block layout), block copies on the backend's stream so they are
// ordered before the step that writes into the copy.

#include "engine/runtime/kv_block_store.h"
#include "kernels/cuda/cuda_step.h"

#include <cstdint>
#include <cuda_runtime_api.h>

namespace cw::engine {

class CudaKvStore final : public KvBlockStore {
public:
    CudaKvStore(kernels::cuda::PagedKv kv, std::int64_t capacity, int device, cudaStream_t stream)
        : m_kv(kv)
        , m_capacity(capacity)
        , m_device(device)
        , m_stream(stream)
    {
    }

    Result<void> ensureBlocks(std::int64_t count) override
    {
        if (count > m_capacity)
            return makeError("the GPU's KV cache is full (" + std::to_string(m_capacity)
                + " blocks of " + std::to_string(m_kv.blockTokens) + " tokens)");
        return {};
    }

    void copyBlock(int from, int to) override
    {
        const std::size_t floats = blockFloats();
        cudaSetDevice(m_device); // the calling thread's current device may be another
        cudaMemcpyAsync(m_kv.base + std::size_t(to) * floats,
            m_kv.base + std::size_t(from) * floats, floats * sizeof(float),
            cudaMemcpyDeviceToDevice, m_stream);
    }

    std::size_t blockFloats() const
    {
        return std::size_t(m_kv.layers) * 2 * std::size_t(m_kv.blockTokens)
            * std::size_t(m_kv.kvWidth);
    }

private:
    kernels::cuda::PagedKv m_kv;
    std::int64_t m_capacity;
    int m_device;
    cudaStream_t m_stream;
};

} // namespace cw::engine
