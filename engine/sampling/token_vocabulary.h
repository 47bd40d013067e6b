#pragma once

#include "engine/common/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cw::sampling {

// The vocabulary as the sampler sees it: what each token id decodes to (raw bytes, after
// byte-level decoding), which ids are special/control tokens (never produced as text under a
// grammar) and which end the sequence. Built once per model; holds a byte trie of the
// ordinary tokens so that a grammar checks shared prefixes once.
class TokenVocabulary {
public:
    struct TrieEdge {
        uint8_t byte;
        uint32_t child;
    };
    struct TrieNode {
        uint32_t edgeBegin, edgeEnd; // into edges()
        uint32_t tokenBegin, tokenEnd; // into tokenIds(): tokens whose bytes end here
    };

    // Ids in specialIds / eosIds must be < tokens.size().
    static Result<TokenVocabulary> create(std::vector<std::string> tokens,
        std::vector<int32_t> specialIds, std::vector<int32_t> eosIds);

    int32_t size() const { return static_cast<int32_t>(m_tokens.size()); }
    const std::string& bytes(int32_t id) const { return m_tokens[static_cast<size_t>(id)]; }
    bool isSpecial(int32_t id) const { return m_special[static_cast<size_t>(id)] != 0; }
    bool isEos(int32_t id) const;
    const std::vector<int32_t>& eosIds() const { return m_eos; }
    size_t maxTokenBytes() const { return m_maxBytes; }

    // Trie: node 0 is the root (the empty prefix).
    const std::vector<TrieNode>& nodes() const { return m_nodes; }
    const std::vector<TrieEdge>& edges() const { return m_edges; }
    const std::vector<int32_t>& tokenIds() const { return m_trieTokens; }

private:
    uint32_t build(const std::vector<int32_t>& sorted, size_t begin, size_t end, size_t depth);

    std::vector<std::string> m_tokens;
    std::vector<uint8_t> m_special;
    std::vector<int32_t> m_eos;
    std::vector<TrieNode> m_nodes;
    std::vector<TrieEdge> m_edges;
    std::vector<int32_t> m_trieTokens;
    size_t m_maxBytes = 0;
};

} // namespace cw::sampling
