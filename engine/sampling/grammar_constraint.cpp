#include "engine/sampling/grammar_constraint.h"

#include "engine/sampling/json_schema_grammar.h"

#include <bit>
#include <limits>

namespace cw::sampling {

void TokenMask::reset(int32_t size)
{
    m_size = size;
    m_words.assign((static_cast<size_t>(size) + 63) / 64, 0);
}

int32_t TokenMask::count() const
{
    int32_t n = 0;
    for (uint64_t w : m_words)
        n += std::popcount(w);
    return n;
}

GrammarConstraint::GrammarConstraint(
    std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenVocabulary> vocabulary)
    : m_vocabulary(std::move(vocabulary))
    , m_matcher(std::move(grammar))
{
    m_levels.resize(m_vocabulary->maxTokenBytes() + 1);
}

Result<GrammarConstraint> GrammarConstraint::fromGbnf(
    std::string_view gbnf, std::shared_ptr<const TokenVocabulary> vocabulary)
{
    Result<Grammar> g = Grammar::parse(gbnf);
    if (!g)
        return g.error();
    return GrammarConstraint(std::make_shared<const Grammar>(std::move(*g)), std::move(vocabulary));
}

Result<GrammarConstraint> GrammarConstraint::fromJsonSchema(
    std::string_view schemaJson, std::shared_ptr<const TokenVocabulary> vocabulary)
{
    Result<std::string> gbnf = jsonSchemaToGbnf(schemaJson);
    if (!gbnf)
        return gbnf.error();
    return fromGbnf(*gbnf, std::move(vocabulary));
}

bool GrammarConstraint::isComplete() const
{
    return !m_finished && m_matcher.isComplete();
}

bool GrammarConstraint::allows(int32_t id)
{
    if (m_finished || id < 0 || id >= m_vocabulary->size())
        return false;
    if (m_vocabulary->isEos(id))
        return m_matcher.isComplete();
    if (m_vocabulary->isSpecial(id) || m_vocabulary->bytes(id).empty())
        return false;
    return m_matcher.canAccept(m_vocabulary->bytes(id));
}

Result<void> GrammarConstraint::accept(int32_t id)
{
    if (!allows(id))
        return makeError("grammar: token " + std::to_string(id) + " is not allowed here");
    if (m_vocabulary->isEos(id)) {
        m_finished = true;
        return {};
    }
    const bool ok = m_matcher.accept(m_vocabulary->bytes(id));
    (void)ok;
    assert(ok);
    return {};
}

void GrammarConstraint::reset()
{
    m_matcher.reset();
    m_finished = false;
}

void GrammarConstraint::computeMask(TokenMask& mask)
{
    mask.reset(m_vocabulary->size());
    if (m_finished)
        return;
    if (m_matcher.isComplete())
        for (int32_t id : m_vocabulary->eosIds())
            mask.set(id);
    GrammarStacks& stacks = m_matcher.stacks();
    const size_t mark = stacks.mark();
    walk(0, m_matcher.current(), m_matcher.partial(), 0, mask);
    stacks.release(mark);
}

// Depth-first over the vocabulary trie: the stacks after each prefix are computed once for
// every token sharing that prefix, and a subtree is skipped as soon as no stack survives.
void GrammarConstraint::walk(uint32_t nodeIndex, const std::vector<uint32_t>& stacks,
    Utf8Partial partial, size_t depth, TokenMask& mask)
{
    GrammarStacks& gs = m_matcher.stacks();
    const auto& nodes = m_vocabulary->nodes();
    const auto& edges = m_vocabulary->edges();
    const auto& ids = m_vocabulary->tokenIds();
    const TokenVocabulary::TrieNode& node = nodes[nodeIndex];
    std::vector<uint32_t>& next = m_levels[depth];
    for (uint32_t e = node.edgeBegin; e < node.edgeEnd; ++e) {
        Utf8Partial p = partial;
        uint32_t cp = 0;
        const int r = decodeUtf8Byte(p, edges[e].byte, cp);
        if (r < 0)
            continue;
        const size_t mark = gs.mark();
        const std::vector<uint32_t>* after = &stacks;
        if (r == 1) {
            gs.advance(stacks, cp, next);
            if (next.empty()) {
                gs.release(mark);
                continue;
            }
            after = &next;
        } else {
            uint32_t lo, hi;
            if (!utf8CompletionRange(p, lo, hi))
                continue;
            const bool feasible
                = (lo <= 0xD7FF && gs.canAcceptRange(stacks, lo, std::min<uint32_t>(hi, 0xD7FF)))
                || (hi >= 0xE000 && gs.canAcceptRange(stacks, std::max<uint32_t>(lo, 0xE000), hi));
            if (!feasible)
                continue;
        }
        const TokenVocabulary::TrieNode& child = nodes[edges[e].child];
        for (uint32_t t = child.tokenBegin; t < child.tokenEnd; ++t)
            mask.set(ids[t]);
        if (child.edgeBegin != child.edgeEnd)
            walk(edges[e].child, *after, p, depth + 1, mask);
        gs.release(mark);
    }
}

void GrammarConstraint::applyMask(std::span<float> logits)
{
    computeMask(m_mask);
    const size_t vocab = static_cast<size_t>(m_vocabulary->size());
    for (size_t i = 0; i < logits.size(); ++i)
        if (i >= vocab || !m_mask.test(static_cast<int32_t>(i)))
            logits[i] = -std::numeric_limits<float>::infinity();
}

} // namespace cw::sampling
