#pragma once

#include "engine/common/result.h"
#include "engine/runtime/kv_block_store.h"

#include <cstdint>
#include <vector>

namespace cw::engine {

// A pool of fixed-size KV blocks shared by every sequence of a model. A block holds
// `blockTokens` positions of keys and values for all attention layers. Blocks are reference
// counted so a forked sequence shares its parent's prefix; a sequence that writes into a
// shared block first takes a private copy (copy on write). The bytes live in the backend's
// KvBlockStore; this class only decides which block holds what.
class KvCachePool {
public:
    KvCachePool(int blockTokens, std::int64_t maxBlocks, KvBlockStore& store);

    int blockTokens() const { return m_blockTokens; }
    std::int64_t blocksInUse() const { return m_inUse; }
    std::int64_t maxBlocks() const { return m_maxBlocks; }

    Result<int> allocate();
    void retain(int block);
    void release(int block);
    int refCount(int block) const { return m_refs[std::size_t(block)]; }
    // A private copy of `block` (refcount 1); the original loses one reference.
    Result<int> copyOnWrite(int block);

private:
    int m_blockTokens;
    std::int64_t m_maxBlocks;
    std::int64_t m_inUse = 0;
    KvBlockStore* m_store;
    std::vector<int> m_refs; // one per block ever made usable
    std::vector<int> m_free;
};

} // namespace cw::engine
