#include "engine/runtime/kv_cache.h"

#include <cassert>
#include <string>

namespace cw::engine {

KvCachePool::KvCachePool(int blockTokens, std::int64_t maxBlocks, KvBlockStore& store)
    : m_blockTokens(blockTokens)
    , m_maxBlocks(maxBlocks)
    , m_store(&store)
{
}

Result<int> KvCachePool::allocate()
{
    int block;
    if (!m_free.empty()) {
        block = m_free.back();
        m_free.pop_back();
    } else {
        if (std::int64_t(m_refs.size()) >= m_maxBlocks)
            return makeError("the KV cache is full (" + std::to_string(m_maxBlocks) + " blocks of "
                + std::to_string(m_blockTokens) + " tokens in use)");
        if (auto grown = m_store->ensureBlocks(std::int64_t(m_refs.size()) + 1); !grown)
            return grown.error();
        m_refs.push_back(0);
        block = int(m_refs.size()) - 1;
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
    m_store->copyBlock(block, *fresh);
    release(block);
    return *fresh;
}

} // namespace cw::engine
