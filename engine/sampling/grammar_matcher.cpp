#include "engine/sampling/grammar_matcher.h"

#include <algorithm>
#include <cassert>
#include <unordered_map>

namespace cw::sampling {

namespace {

using Type = GrammarElement::Type;

bool endsAlternative(const GrammarElement* e)
{
    return e->type == Type::End || e->type == Type::Alt;
}

uint64_t mixHash(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

// Whether a stack can take some code point completing `partial` (surrogates excluded).
bool partialFeasible(
    const GrammarStacks& s, const std::vector<uint32_t>& stacks, const Utf8Partial& partial)
{
    uint32_t lo, hi;
    if (!utf8CompletionRange(partial, lo, hi))
        return false;
    if (lo <= 0xD7FF && s.canAcceptRange(stacks, lo, std::min<uint32_t>(hi, 0xD7FF)))
        return true;
    return hi >= 0xE000 && s.canAcceptRange(stacks, std::max<uint32_t>(lo, 0xE000), hi);
}

} // namespace

int decodeUtf8Byte(Utf8Partial& p, uint8_t byte, uint32_t& codePoint)
{
    if (p.remaining == 0) {
        if (byte < 0x80) {
            codePoint = byte;
            return 1;
        }
        if (byte >= 0xC2 && byte <= 0xDF)
            p = { static_cast<uint32_t>(byte & 0x1F), 1, 2 };
        else if (byte >= 0xE0 && byte <= 0xEF)
            p = { static_cast<uint32_t>(byte & 0x0F), 2, 3 };
        else if (byte >= 0xF0 && byte <= 0xF4)
            p = { static_cast<uint32_t>(byte & 0x07), 3, 4 };
        else
            return -1;
    } else {
        if ((byte & 0xC0) != 0x80)
            return -1;
        p.value = (p.value << 6) | (byte & 0x3Fu);
        --p.remaining;
    }
    uint32_t lo, hi;
    if (!utf8CompletionRange(p, lo, hi))
        return -1;
    if (p.remaining > 0)
        return 0;
    codePoint = p.value;
    p = {};
    return 1;
}

bool utf8CompletionRange(const Utf8Partial& p, uint32_t& lo, uint32_t& hi)
{
    if (p.length < 2 || p.length > 4)
        return false;
    const uint32_t shift = 6u * p.remaining;
    lo = p.value << shift;
    hi = lo | ((1u << shift) - 1u);
    static constexpr uint32_t kMin[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    static constexpr uint32_t kMax[5] = { 0, 0, 0x7FF, 0xFFFF, 0x10FFFF };
    lo = std::max(lo, kMin[p.length]);
    hi = std::min(hi, kMax[p.length]);
    if (lo > hi)
        return false;
    return !(lo >= 0xD800 && hi <= 0xDFFF);
}

GrammarStacks::GrammarStacks(std::shared_ptr<const Grammar> grammar)
    : m_grammar(std::move(grammar))
{
}

uint32_t GrammarStacks::push(const GrammarElement* pos, uint32_t parent)
{
    const uint64_t parentHash = parent == kEmptyStack ? 0 : m_nodes[parent].hash;
    const uint64_t h
        = mixHash(reinterpret_cast<uintptr_t>(pos) ^ (parentHash * 0x9e3779b97f4a7c15ull));
    m_nodes.push_back({ pos, parent, h });
    return static_cast<uint32_t>(m_nodes.size() - 1);
}

bool GrammarStacks::sameStack(uint32_t a, uint32_t b) const
{
    while (a != b) {
        if (a == kEmptyStack || b == kEmptyStack)
            return false;
        const Node& x = m_nodes[a];
        const Node& y = m_nodes[b];
        if (x.hash != y.hash || x.pos != y.pos)
            return false;
        a = x.parent;
        b = y.parent;
    }
    return true;
}

void GrammarStacks::addUnique(uint32_t node, std::vector<uint32_t>& out) const
{
    for (uint32_t o : out)
        if (sameStack(o, node))
            return;
    out.push_back(node);
}

void GrammarStacks::expand(const GrammarElement* pos, uint32_t parent, std::vector<uint32_t>& out)
{
    switch (pos->type) {
    case Type::End:
    case Type::Alt:
        if (parent == kEmptyStack) {
            addUnique(kEmptyStack, out);
        } else {
            const Node up = m_nodes[parent];
            expand(up.pos, up.parent, out);
        }
        return;
    case Type::RuleRef: {
        const GrammarElement* cont = pos + 1;
        const uint32_t under = endsAlternative(cont) ? parent : push(cont, parent);
        const std::vector<GrammarElement>& body = m_grammar->rule(pos->value);
        const GrammarElement* alt = body.data();
        while (true) {
            expand(alt, under, out);
            while (!endsAlternative(alt))
                ++alt;
            if (alt->type == Type::End)
                break;
            ++alt;
        }
        return;
    }
    case Type::Chars: {
        const size_t before = out.size();
        const uint32_t node = push(pos, parent);
        addUnique(node, out);
        if (out.size() == before && node == m_nodes.size() - 1)
            m_nodes.pop_back(); // a duplicate: drop it again
        return;
    }
    }
}

std::vector<uint32_t> GrammarStacks::initial()
{
    std::vector<uint32_t> out;
    const std::vector<GrammarElement>& body = m_grammar->rule(m_grammar->root());
    const GrammarElement* alt = body.data();
    while (true) {
        expand(alt, kEmptyStack, out);
        while (!endsAlternative(alt))
            ++alt;
        if (alt->type == Type::End)
            break;
        ++alt;
    }
    return out;
}

void GrammarStacks::advance(
    const std::vector<uint32_t>& stacks, uint32_t codePoint, std::vector<uint32_t>& out)
{
    out.clear();
    for (uint32_t s : stacks) {
        if (s == kEmptyStack)
            continue;
        const Node n = m_nodes[s];
        if (m_grammar->charSet(n.pos->value).contains(codePoint))
            expand(n.pos + 1, n.parent, out);
    }
}

bool GrammarStacks::canAcceptRange(
    const std::vector<uint32_t>& stacks, uint32_t lo, uint32_t hi) const
{
    for (uint32_t s : stacks)
        if (s != kEmptyStack && m_grammar->charSet(m_nodes[s].pos->value).intersects(lo, hi))
            return true;
    return false;
}

bool GrammarStacks::hasEmpty(const std::vector<uint32_t>& stacks)
{
    return std::find(stacks.begin(), stacks.end(), kEmptyStack) != stacks.end();
}

std::vector<uint32_t> GrammarStacks::compact(const std::vector<uint32_t>& stacks)
{
    std::vector<Node> fresh;
    std::unordered_map<uint32_t, uint32_t> moved;
    std::vector<uint32_t> result;
    std::vector<uint32_t> chain;
    for (uint32_t s : stacks) {
        chain.clear();
        for (uint32_t n = s; n != kEmptyStack && !moved.count(n); n = m_nodes[n].parent)
            chain.push_back(n);
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            const Node& old = m_nodes[*it];
            const uint32_t parent = old.parent == kEmptyStack ? kEmptyStack : moved.at(old.parent);
            fresh.push_back({ old.pos, parent, old.hash });
            moved[*it] = static_cast<uint32_t>(fresh.size() - 1);
        }
        result.push_back(s == kEmptyStack ? kEmptyStack : moved.at(s));
    }
    m_nodes = std::move(fresh);
    return result;
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar)
    : m_stacks(std::move(grammar))
{
    reset();
}

void GrammarMatcher::reset()
{
    m_stacks.release(0);
    m_current = m_stacks.initial();
    m_partial = {};
}

bool GrammarMatcher::feed(
    std::string_view bytes, std::vector<uint32_t>& stacks, Utf8Partial& partial)
{
    for (char ch : bytes) {
        uint32_t cp = 0;
        const int r = decodeUtf8Byte(partial, static_cast<uint8_t>(ch), cp);
        if (r < 0)
            return false;
        if (r == 0) {
            if (!partialFeasible(m_stacks, stacks, partial))
                return false;
            continue;
        }
        m_stacks.advance(stacks, cp, m_scratchB);
        if (m_scratchB.empty())
            return false;
        stacks.swap(m_scratchB);
    }
    return true;
}

bool GrammarMatcher::canAccept(std::string_view bytes)
{
    const size_t mark = m_stacks.mark();
    m_scratchA = m_current;
    Utf8Partial partial = m_partial;
    const bool ok = feed(bytes, m_scratchA, partial);
    m_stacks.release(mark);
    return ok;
}

bool GrammarMatcher::accept(std::string_view bytes)
{
    const size_t mark = m_stacks.mark();
    m_scratchA = m_current;
    Utf8Partial partial = m_partial;
    if (!feed(bytes, m_scratchA, partial)) {
        m_stacks.release(mark);
        return false;
    }
    m_current.swap(m_scratchA);
    m_partial = partial;
    if (m_stacks.mark() > 4096)
        m_current = m_stacks.compact(m_current);
    return true;
}

bool GrammarMatcher::isComplete() const
{
    return m_partial.remaining == 0 && GrammarStacks::hasEmpty(m_current);
}

} // namespace cw::sampling
