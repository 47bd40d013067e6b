#pragma once

// The CPU's KV blocks: host memory, allocated block by block as the pool hands them out.
// Block layout [layer][key, value][slot][kvWidth] f32 (kernels/cuda/cuda_step.h's PagedKv
// uses the same one on the device).

#include "engine/runtime/kv_block_store.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace cw::engine {

class CpuKvStore final : public KvBlockStore {
public:
    CpuKvStore(int attentionLayers, std::int64_t kvWidth, int blockTokens);

    Result<void> ensureBlocks(std::int64_t count) override;
    void copyBlock(int from, int to) override;

    int blockTokens() const { return m_blockTokens; }
    std::int64_t kvWidth() const { return m_kvWidth; }
    std::uint64_t bytes() const { return m_blocks.size() * blockFloats() * sizeof(float); }
    float* key(int block, int layer, int slot);
    float* value(int block, int layer, int slot);

private:
    std::size_t blockFloats() const;

    int m_layers;
    std::int64_t m_kvWidth;
    int m_blockTokens;
    std::vector<std::unique_ptr<float[]>> m_blocks;
};

} // namespace cw::engine
