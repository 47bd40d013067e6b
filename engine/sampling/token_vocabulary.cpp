#include "engine/sampling/token_vocabulary.h"

#include <algorithm>
#include <string>

namespace cw::sampling {

Result<TokenVocabulary> TokenVocabulary::create(
    std::vector<std::string> tokens, std::vector<int32_t> specialIds, std::vector<int32_t> eosIds)
{
    const auto n = static_cast<int64_t>(tokens.size());
    if (n == 0 || n > INT32_MAX)
        return makeError("token vocabulary: size " + std::to_string(n) + " is out of range");
    TokenVocabulary v;
    v.m_tokens = std::move(tokens);
    v.m_special.assign(v.m_tokens.size(), 0);
    for (int32_t id : specialIds) {
        if (id < 0 || id >= n)
            return makeError("token vocabulary: special token id " + std::to_string(id)
                + " is outside [0, " + std::to_string(n) + ")");
        v.m_special[static_cast<size_t>(id)] = 1;
    }
    for (int32_t id : eosIds) {
        if (id < 0 || id >= n)
            return makeError("token vocabulary: EOS token id " + std::to_string(id)
                + " is outside [0, " + std::to_string(n) + ")");
        v.m_special[static_cast<size_t>(id)] = 1; // EOS is never text
    }
    v.m_eos = std::move(eosIds);
    // The trie holds the ordinary, non-empty tokens, built from the ids sorted by bytes.
    std::vector<int32_t> sorted;
    for (int32_t id = 0; id < n; ++id)
        if (!v.m_special[static_cast<size_t>(id)] && !v.m_tokens[static_cast<size_t>(id)].empty())
            sorted.push_back(id);
    std::sort(sorted.begin(), sorted.end(), [&](int32_t a, int32_t b) {
        const std::string& x = v.m_tokens[static_cast<size_t>(a)];
        const std::string& y = v.m_tokens[static_cast<size_t>(b)];
        return x != y ? x < y : a < b;
    });
    for (int32_t id : sorted)
        v.m_maxBytes = std::max(v.m_maxBytes, v.m_tokens[static_cast<size_t>(id)].size());
    v.m_nodes.reserve(sorted.size() * 2);
    v.build(sorted, 0, sorted.size(), 0);
    return v;
}

bool TokenVocabulary::isEos(int32_t id) const
{
    return std::find(m_eos.begin(), m_eos.end(), id) != m_eos.end();
}

// Builds the node for sorted[begin, end), which share their first `depth` bytes. Recursion
// depth is bounded by the longest token.
uint32_t TokenVocabulary::build(
    const std::vector<int32_t>& sorted, size_t begin, size_t end, size_t depth)
{
    const auto self = static_cast<uint32_t>(m_nodes.size());
    m_nodes.push_back({});
    size_t i = begin;
    const auto tokenBegin = static_cast<uint32_t>(m_trieTokens.size());
    while (i < end && m_tokens[static_cast<size_t>(sorted[i])].size() == depth)
        m_trieTokens.push_back(sorted[i++]);
    const auto tokenEnd = static_cast<uint32_t>(m_trieTokens.size());
    // Children: group by the byte at `depth`; edges of one node are contiguous, so collect
    // them first and append after the subtrees are built.
    std::vector<TrieEdge> mine;
    while (i < end) {
        const auto byte = static_cast<uint8_t>(m_tokens[static_cast<size_t>(sorted[i])][depth]);
        size_t j = i;
        while (j < end
            && static_cast<uint8_t>(m_tokens[static_cast<size_t>(sorted[j])][depth]) == byte)
            ++j;
        mine.push_back({ byte, build(sorted, i, j, depth + 1) });
        i = j;
    }
    TrieNode& node = m_nodes[self];
    node.tokenBegin = tokenBegin;
    node.tokenEnd = tokenEnd;
    node.edgeBegin = static_cast<uint32_t>(m_edges.size());
    m_edges.insert(m_edges.end(), mine.begin(), mine.end());
    node.edgeEnd = static_cast<uint32_t>(m_edges.size());
    return self;
}

} // namespace cw::sampling
