#pragma once

#include "engine/runtime/sequence.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

namespace cw::engine {

// Prompt prefixes already run through the model, kept as frozen sequences that new requests
// fork (their KV blocks shared copy-on-write, their DeltaNet state copied). An entry covers
// whole KV blocks and is keyed by the hash of its last block chained over the blocks before it
// (vLLM's block hash), so a prompt finds its longest cached prefix by hashing its own blocks.
// Only chosen block boundaries are kept, not every block: each entry holds a recurrent-state
// slot, which a pure attention model would not need but the hybrid models do.
class PrefixCache {
public:
    PrefixCache(int blockTokens, std::size_t capacity);

    // The chained hash of each whole block of `tokens` (tokens past the last whole block are
    // not hashed). Hash i covers tokens [0, (i + 1) * blockTokens).
    std::vector<std::uint64_t> blockHashes(std::span<const std::int32_t> tokens) const;

    struct Hit {
        const Sequence* sequence = nullptr; // null: nothing cached
        std::size_t tokens = 0;
    };
    // The longest entry that is a prefix of `prompt` and no longer than `limit` tokens
    // (`hashes` are the prompt's blockHashes). Marks it most recently used.
    Hit longest(std::span<const std::int32_t> prompt, std::span<const std::uint64_t> hashes,
        std::size_t limit);
    bool contains(std::uint64_t hash) const { return m_entries.contains(hash); }

    // Keeps `sequence` (holding exactly `tokens`, whole blocks) under the hash of its last
    // block; the least recently used entry goes when the cache is full.
    void insert(
        std::uint64_t hash, std::vector<std::int32_t> tokens, std::unique_ptr<Sequence> sequence);
    // Drops the least recently used entry other than `keep` (its KV blocks and state slot go
    // back); false when there is none.
    bool evictOne(const Sequence* keep = nullptr);
    void clear() { m_entries.clear(); }

    std::size_t size() const { return m_entries.size(); }
    std::size_t capacity() const { return m_capacity; }
    int blockTokens() const { return m_blockTokens; }

private:
    struct Entry {
        std::vector<std::int32_t> tokens; // compared on a hit: a hash collision is no hit
        std::unique_ptr<Sequence> sequence;
        std::uint64_t lastUse = 0;
    };

    int m_blockTokens;
    std::size_t m_capacity;
    std::uint64_t m_clock = 0;
    std::unordered_map<std::uint64_t, Entry> m_entries;
};

} // namespace cw::engine
