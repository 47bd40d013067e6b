#pragma once

#include "engine/sampling/grammar.h"

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace cw::sampling {

// The state of UTF-8 decoding between bytes: a code point whose first bytes were seen.
struct Utf8Partial {
    uint32_t value = 0; // bits gathered so far
    uint8_t remaining = 0; // continuation bytes still expected (0: on a boundary)
    uint8_t length = 0; // total bytes of the code point being decoded
};

// The pushdown state of a grammar: a set of stacks of positions in rule bodies (as in
// llama.cpp's grammar sampler). Stacks live in an arena as parent-linked nodes so that
// advancing a stack by one code point costs O(1) instead of a copy; the token mask walks a
// vocabulary trie with these.
class GrammarStacks {
public:
    static constexpr uint32_t kEmptyStack = 0xffffffffu; // a stack with nothing left: complete

    explicit GrammarStacks(std::shared_ptr<const Grammar> grammar);

    const Grammar& grammar() const { return *m_grammar; }

    // Stacks at the start of the root rule.
    std::vector<uint32_t> initial();
    // The stacks after consuming codePoint from each of `stacks` (deduplicated, appended to
    // out, which is cleared first).
    void advance(
        const std::vector<uint32_t>& stacks, uint32_t codePoint, std::vector<uint32_t>& out);
    // True when some stack's next terminal can accept a code point in [lo, hi].
    bool canAcceptRange(const std::vector<uint32_t>& stacks, uint32_t lo, uint32_t hi) const;
    static bool hasEmpty(const std::vector<uint32_t>& stacks);

    // Arena bookkeeping: nodes created after mark() may be dropped with release(mark).
    size_t mark() const { return m_nodes.size(); }
    void release(size_t mark) { m_nodes.resize(mark); }
    // Copies `stacks` into a fresh arena, dropping dead nodes; returns the new stack ids.
    std::vector<uint32_t> compact(const std::vector<uint32_t>& stacks);

private:
    struct Node {
        const GrammarElement* pos; // the next element to match (a Chars element)
        uint32_t parent; // kEmptyStack at the bottom
        uint64_t hash;
    };
    uint32_t push(const GrammarElement* pos, uint32_t parent);
    void expand(const GrammarElement* pos, uint32_t parent, std::vector<uint32_t>& out);
    void addUnique(uint32_t node, std::vector<uint32_t>& out) const;
    bool sameStack(uint32_t a, uint32_t b) const;

    std::shared_ptr<const Grammar> m_grammar;
    std::vector<Node> m_nodes;
};

// Feeds UTF-8 bytes one at a time; returns -1 for an invalid byte, 0 when a code point is
// still incomplete (partial updated), 1 when codePoint is complete.
int decodeUtf8Byte(Utf8Partial& partial, uint8_t byte, uint32_t& codePoint);
// The code points that can still complete `partial`, as [lo, hi] without surrogates split
// out; false when none is valid.
bool utf8CompletionRange(const Utf8Partial& partial, uint32_t& lo, uint32_t& hi);

// Matches text against a grammar incrementally, byte by byte (tokens may split a UTF-8 code
// point; the partial code point is carried to the next token).
class GrammarMatcher {
public:
    explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);

    // Consumes bytes if the grammar can continue after them; otherwise returns false and
    // leaves the state unchanged.
    bool accept(std::string_view bytes);
    bool canAccept(std::string_view bytes);
    // The text so far is a whole sentence of the grammar (no partial code point pending).
    bool isComplete() const;
    void reset();

    GrammarStacks& stacks() { return m_stacks; }
    const std::vector<uint32_t>& current() const { return m_current; }
    const Utf8Partial& partial() const { return m_partial; }

private:
    bool feed(std::string_view bytes, std::vector<uint32_t>& stacks, Utf8Partial& partial);

    GrammarStacks m_stacks;
    std::vector<uint32_t> m_current;
    Utf8Partial m_partial;
    std::vector<uint32_t> m_scratchA, m_scratchB;
};

} // namespace cw::sampling
