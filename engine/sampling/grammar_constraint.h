#pragma once

#include "engine/sampling/grammar_matcher.h"
#include "engine/sampling/token_vocabulary.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace cw::sampling {

// One bit per token id.
class TokenMask {
public:
    void reset(int32_t size);
    void set(int32_t id) { m_words[static_cast<size_t>(id) >> 6] |= uint64_t { 1 } << (id & 63); }
    bool test(int32_t id) const { return (m_words[static_cast<size_t>(id) >> 6] >> (id & 63)) & 1; }
    int32_t size() const { return m_size; }
    int32_t count() const;

private:
    std::vector<uint64_t> m_words;
    int32_t m_size = 0;
};

// Constrained decoding of one sequence: which tokens may come next so that the output stays
// a prefix of a sentence of the grammar, and EOS only once the sentence is complete.
// Special/control tokens other than EOS are never allowed. One per sequence; not
// thread-safe.
class GrammarConstraint {
public:
    GrammarConstraint(
        std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenVocabulary> vocabulary);

    // Builds the grammar from GBNF text.
    static Result<GrammarConstraint> fromGbnf(
        std::string_view gbnf, std::shared_ptr<const TokenVocabulary> vocabulary);
    // Builds the grammar from a JSON schema (see json_schema_grammar.h).
    static Result<GrammarConstraint> fromJsonSchema(
        std::string_view schemaJson, std::shared_ptr<const TokenVocabulary> vocabulary);

    const TokenVocabulary& vocabulary() const { return *m_vocabulary; }

    // Whether token id may come next (checks just this token).
    bool allows(int32_t id);
    // All tokens that may come next, walking the vocabulary trie.
    void computeMask(TokenMask& mask);
    // Sets the logits of disallowed tokens to -inf (logits.size() may exceed the vocabulary:
    // padding ids are disallowed).
    void applyMask(std::span<float> logits);

    // Advances past token id; an error (state unchanged) if the grammar does not allow it.
    Result<void> accept(int32_t id);
    // The output so far is a complete sentence: EOS is allowed.
    bool isComplete() const;
    // EOS was accepted: nothing more is allowed.
    bool isFinished() const { return m_finished; }
    void reset();

private:
    void walk(uint32_t node, const std::vector<uint32_t>& stacks, Utf8Partial partial, size_t depth,
        TokenMask& mask);

    std::shared_ptr<const TokenVocabulary> m_vocabulary;
    GrammarMatcher m_matcher;
    bool m_finished = false;
    std::vector<std::vector<uint32_t>> m_levels; // scratch stack sets per trie depth
    TokenMask m_mask;
};

} // namespace cw::sampling
