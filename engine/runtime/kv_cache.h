#pragma once

#include "engine/common/result.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace cw::engine {

// A pool of fixed-size KV blocks shared by every sequence of a model. A block holds
// `blockTokens` positions of keys and values for all attention layers. Blocks are reference
// counted so a forked sequence shares its parent's prefix; a sequence that writes into a
// shared block first takes a private copy (copy on write).
class KvCachePool {
public:
    KvCachePool(int attentionLayers, std::int64_t kvWidth, int blockTokens, std::int64_t maxBlocks);

    int blockTokens() const { return m_blockTokens; }
    std::int64_t kvWidth() const { return m_kvWidth; }
    std::int64_t blocksInUse() const { return m_inUse; }
    std::int64_t maxBlocks() const { return m_maxBlocks; }

    Result<int> allocate();
    void retain(int block);
    void release(int block);
    int refCount(int block) const { return m_refs[std::size_t(block)]; }
    // A private copy of `block` (refcount 1); the original loses one reference.
    Result<int> copyOnWrite(int block);

    float* key(int block, int layer, int slot);
    float* value(int block, int layer, int slot);

private:
    std::size_t blockFloats() const;

    int m_layers;
    std::int64_t m_kvWidth;
    int m_blockTokens;
    std::int64_t m_maxBlocks;
    std::int64_t m_inUse = 0;
    std::vector<std::unique_ptr<float[]>> m_blocks;
    std::vector<int> m_refs;
    std::vector<int> m_free;
};

} // namespace cw::engine
