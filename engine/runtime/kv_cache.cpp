#include "engine/runtime/kv_cache.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <string>

namespace cw::engine {

KvCachePool::KvCachePool(
    int attentionLayers, std::int64_t kvWidth, int blockTokens, std::int64_t maxBlocks)
    : m_layers(attentionLayers)
    , m_kvWidth(kvWidth)
    , m_blockTokens(blockTokens)
    , m_maxBlocks(maxBlocks)
{
}

std::size_t KvCachePool::blockFloats() const
{
    return std::size_t(m_layers) * 2 * std::size_t(m_blockTokens) * std::size_t(m_kvWidth);
}

Result<int> KvCachePool::allocate()
{
    int block;
    if (!m_free.empty()) {
        block = m_free.back();
        m_free.pop_back();
    } else {
        if (std::int64_t(m_blocks.size()) >= m_maxBlocks)
            return makeError("the KV cache is full (" + std::to_string(m_maxBlocks) + " blocks of "
                + std::to_string(m_blockTokens) + " tokens in use)");
        m_blocks.push_back(std::make_unique<float[]>(std::max<std::size_t>(blockFloats(), 1)));
        m_refs.push_back(0);
        block = int(m_blocks.size()) - 1;
    }
    m_refs[std::size_t(block)] = 1;
    ++m_inUse;
    return block;
}

void KvCachePool::retain(int block)
{
    assert(m_refs[std::size_t(block)] > 0);
    ++m_refs[std::size_t(block)];
}

void KvCachePool::release(int block)
{
    assert(m_refs[std::size_t(block)] > 0);
    if (--m_refs[std::size_t(block)] == 0) {
        m_free.push_back(block);
        --m_inUse;
    }
}

Result<int> KvCachePool::copyOnWrite(int block)
{
    if (m_refs[std::size_t(block)] == 1)
        return block;
    auto fresh = allocate();
    if (!fresh)
        return fresh.error();
    std::memcpy(m_blocks[std::size_t(*fresh)].get(), m_blocks[std::size_t(block)].get(),
        blockFloats() * sizeof(float));
    release(block);
    return *fresh;
}

float* KvCachePool::key(int block, int layer, int slot)
{
    return m_blocks[std::size_t(block)].get()
        + ((std::size_t(layer) * 2) * std::size_t(m_blockTokens) + std::size_t(slot))
        * std::size_t(m_kvWidth);
}

float* KvCachePool::value(int block, int layer, int slot)
{
    return m_blocks[std::size_t(block)].get()
        + ((std::size_t(layer) * 2 + 1) * std::size_t(m_blockTokens) + std::size_t(slot))
        * std::size_t(m_kvWidth);
}

} // namespace cw::engine
