#include "engine/backend/cpu/cpu_kv_store.h"

#include <algorithm>
#include <cstring>

namespace cw::engine {

CpuKvStore::CpuKvStore(int attentionLayers, std::int64_t kvWidth, int blockTokens)
    : m_layers(attentionLayers)
    , m_kvWidth(kvWidth)
    , m_blockTokens(blockTokens)
{
}

std::size_t CpuKvStore::blockFloats() const
{
    return std::size_t(m_layers) * 2 * std::size_t(m_blockTokens) * std::size_t(m_kvWidth);
}

Result<void> CpuKvStore::ensureBlocks(std::int64_t count)
{
    while (std::int64_t(m_blocks.size()) < count)
        m_blocks.push_back(std::make_unique<float[]>(std::max<std::size_t>(blockFloats(), 1)));
    return {};
}

void CpuKvStore::copyBlock(int from, int to)
{
    std::memcpy(m_blocks[std::size_t(to)].get(), m_blocks[std::size_t(from)].get(),
        blockFloats() * sizeof(float));
}

float* CpuKvStore::key(int block, int layer, int slot)
{
    return m_blocks[std::size_t(block)].get()
        + ((std::size_t(layer) * 2) * std::size_t(m_blockTokens) + std::size_t(slot))
        * std::size_t(m_kvWidth);
}

float* CpuKvStore::value(int block, int layer, int slot)
{
    return m_blocks[std::size_t(block)].get()
        + ((std::size_t(layer) * 2 + 1) * std::size_t(m_blockTokens) + std::size_t(slot))
        * std::size_t(m_kvWidth);
}

} // namespace cw::engine
