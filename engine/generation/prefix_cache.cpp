#include "engine/generation/prefix_cache.h"

#include <algorithm>

namespace cw::engine {

namespace {

// splitmix64's finaliser: a fast, well-mixed 64-bit step. Not cryptographic (a hit also
// compares the tokens), and no hashing library is among the engine's dependencies.
std::uint64_t mix(std::uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

} // namespace

PrefixCache::PrefixCache(int blockTokens, std::size_t capacity)
    : m_blockTokens(blockTokens)
    , m_capacity(capacity)
{
}

std::vector<std::uint64_t> PrefixCache::blockHashes(std::span<const std::int32_t> tokens) const
{
    std::vector<std::uint64_t> hashes;
    const std::size_t bt = std::size_t(m_blockTokens);
    std::uint64_t h = 0x436c617573657772ull; // any fixed seed
    for (std::size_t end = bt; end <= tokens.size(); end += bt) {
        for (std::size_t i = end - bt; i < end; ++i)
            h = mix(h ^ std::uint64_t(std::uint32_t(tokens[i])));
        hashes.push_back(h);
    }
    return hashes;
}

PrefixCache::Hit PrefixCache::longest(
    std::span<const std::int32_t> prompt, std::span<const std::uint64_t> hashes, std::size_t limit)
{
    const std::size_t bt = std::size_t(m_blockTokens);
    for (std::size_t i = std::min(hashes.size(), limit / bt); i-- > 0;) {
        auto it = m_entries.find(hashes[i]);
        if (it == m_entries.end())
            continue;
        const auto& tokens = it->second.tokens;
        if (tokens.size() != (i + 1) * bt
            || !std::equal(tokens.begin(), tokens.end(), prompt.begin()))
            continue;
        it->second.lastUse = ++m_clock;
        return { it->second.sequence.get(), tokens.size() };
    }
    return {};
}

void PrefixCache::insert(
    std::uint64_t hash, std::vector<std::int32_t> tokens, std::unique_ptr<Sequence> sequence)
{
    if (m_capacity == 0)
        return;
    m_entries.erase(hash);
    while (m_entries.size() >= m_capacity)
        evictOne();
    m_entries.emplace(hash, Entry { std::move(tokens), std::move(sequence), ++m_clock });
}

bool PrefixCache::evictOne(const Sequence* keep)
{
    auto oldest = m_entries.end();
    for (auto it = m_entries.begin(); it != m_entries.end(); ++it)
        if (it->second.sequence.get() != keep
            && (oldest == m_entries.end() || it->second.lastUse < oldest->second.lastUse))
            oldest = it;
    if (oldest == m_entries.end())
        return false;
    m_entries.erase(oldest);
    return true;
}

} // namespace cw::engine
