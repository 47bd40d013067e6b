#pragma once

// Where a backend keeps the KV blocks that KvCachePool hands out: the pool decides which
// block holds what (reference counts, copy on write, block tables); the store holds the
// bytes (host memory for the CPU, device memory for CUDA) and copies blocks.

#include "engine/common/result.h"

#include <cstdint>

namespace cw::engine {

class KvBlockStore {
public:
    virtual ~KvBlockStore() = default;
    // Makes blocks [0, count) usable (the CPU allocates on demand; a GPU store is sized at
    // creation and refuses more).
    virtual Result<void> ensureBlocks(std::int64_t count) = 0;
    virtual void copyBlock(int from, int to) = 0;
};

} // namespace cw::engine
