#include "engine/tokenizer/tokenizer.h"

#include "engine/tokenizer/utf8.h"

#include <algorithm>
#include <mutex>
#include <queue>

namespace cw::engine {

namespace {

constexpr std::size_t kMaxCachedPieceBytes = 64;
constexpr std::size_t kMaxCacheEntries = 1 << 18;

std::uint64_t pairKey(std::int32_t left, std::int32_t right)
{
    return (std::uint64_t(std::uint32_t(left)) << 32) | std::uint32_t(right);
}

} // namespace

struct Tokenizer::PieceCache {
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<std::int32_t>> entries;
};

Tokenizer::Tokenizer()
    : m_cache(std::make_unique<PieceCache>())
{
    m_byteIds.fill(-1);
}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Result<Tokenizer> Tokenizer::build(TokenizerDefinition def)
{
    const std::string& source = def.sourceName;
    auto pre = PreTokenizer::create(def.preTokenizerPattern);
    if (!pre)
        return makeError(source + ": " + pre.error().message);

    Tokenizer t;
    t.m_preTokenizer = std::move(pre.value());
    t.m_normalization = def.normalization;

    std::size_t size = def.pieces.size();
    for (const AddedToken& a : def.addedTokens) {
        if (a.id < 0)
            return makeError(source + ": added token '" + a.content + "' has a negative id");
        size = std::max(size, std::size_t(a.id) + 1);
    }
    t.m_pieces.resize(size);
    t.m_kinds.assign(size, Kind::None);
    t.m_ordinaryIds.reserve(def.pieces.size());
    for (std::size_t id = 0; id < def.pieces.size(); ++id) {
        if (!def.pieces[id])
            continue;
        t.m_pieces[id] = std::move(*def.pieces[id]);
        t.m_kinds[id] = Kind::Ordinary;
        t.m_ordinaryIds.emplace(t.m_pieces[id], std::int32_t(id));
        if (t.m_pieces[id].size() == 1)
            t.m_byteIds[static_cast<unsigned char>(t.m_pieces[id][0])] = std::int32_t(id);
    }

    t.m_merges.reserve(def.merges.size());
    for (std::size_t rank = 0; rank < def.merges.size(); ++rank) {
        const auto& [left, right] = def.merges[rank];
        const auto l = t.m_ordinaryIds.find(left);
        const auto r = t.m_ordinaryIds.find(right);
        const auto m = t.m_ordinaryIds.find(left + right);
        if (l == t.m_ordinaryIds.end() || r == t.m_ordinaryIds.end()
            || m == t.m_ordinaryIds.end()) {
            if (def.skipUnknownMerges)
                continue;
            return makeError(source + ": merge " + std::to_string(rank)
                + " joins tokens that are not in the vocabulary");
        }
        // The first (lowest) rank of a pair wins, as in tokenizers.
        t.m_merges.try_emplace(
            pairKey(l->second, r->second), MergeResult { std::int32_t(rank), m->second });
    }

    for (AddedToken& a : def.addedTokens) {
        if (a.content.empty())
            continue;
        if (!utf8::isValid(a.content))
            return makeError(
                source + ": added token " + std::to_string(a.id) + " is not valid UTF-8");
        t.m_pieces[std::size_t(a.id)] = a.content;
        t.m_kinds[std::size_t(a.id)] = a.special ? Kind::Special : Kind::Added;
        t.m_added.push_back(std::move(a));
    }
    for (std::uint32_t i = 0; i < t.m_added.size(); ++i)
        t.m_addedByFirstByte[static_cast<unsigned char>(t.m_added[i].content[0])].push_back(i);
    for (auto& list : t.m_addedByFirstByte) {
        std::stable_sort(list.begin(), list.end(), [&](std::uint32_t a, std::uint32_t b) {
            return t.m_added[a].content.size() > t.m_added[b].content.size();
        });
    }

    const auto checked = [&](std::optional<std::int32_t> id) -> std::optional<std::int32_t> {
        if (id && t.isValidId(*id))
            return id;
        return std::nullopt;
    };
    t.m_special.bos = checked(def.bos);
    t.m_special.eos = checked(def.eos);
    t.m_special.pad = checked(def.pad);
    t.m_special.endOfText = t.tokenId("<|endoftext|>");
    t.m_special.imStart = t.tokenId("<|im_start|>");
    t.m_special.imEnd = t.tokenId("<|im_end|>");
    t.m_special.thinkStart = t.tokenId("<think>");
    t.m_special.thinkEnd = t.tokenId("</think>");
    return t;
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view input) const
{
    return encode(input, {});
}

std::vector<std::int32_t> Tokenizer::encode(
    std::string_view input, std::span<const TextSpan> plainText) const
{
    std::string sanitized;
    std::vector<TextSpan> sanitizedSpans;
    std::string_view text = input;
    if (!utf8::isValid(input)) {
        // Replaced piece by piece, so that the spans still mark the same text.
        std::size_t at = 0;
        for (const TextSpan& span : plainText) {
            sanitized += utf8::sanitize(input.substr(at, span.begin - at));
            const std::size_t begin = sanitized.size();
            sanitized += utf8::sanitize(input.substr(span.begin, span.end - span.begin));
            sanitizedSpans.push_back({ begin, sanitized.size() });
            at = span.end;
        }
        sanitized += utf8::sanitize(input.substr(at));
        text = sanitized;
        plainText = sanitizedSpans;
    }
    std::vector<std::int32_t> out;
    out.reserve(text.size() / 3 + 4);
    std::size_t segmentStart = 0;
    std::size_t pos = 0;
    std::size_t span = 0; // the first span that does not end before pos
    while (pos < text.size()) {
        while (span < plainText.size() && plainText[span].end <= pos)
            ++span;
        const auto& candidates = m_addedByFirstByte[static_cast<unsigned char>(text[pos])];
        const AddedToken* match = nullptr;
        for (const std::uint32_t index : candidates) {
            const AddedToken& a = m_added[index];
            if (text.compare(pos, a.content.size(), a.content) != 0)
                continue;
            if (a.special && span < plainText.size()
                && plainText[span].begin < pos + a.content.size())
                continue; // typed by a user: text, not a control token
            match = &a;
            break;
        }
        if (!match) {
            ++pos;
            continue;
        }
        encodeOrdinary(text.substr(segmentStart, pos - segmentStart), out);
        out.push_back(match->id);
        pos += match->content.size();
        segmentStart = pos;
    }
    encodeOrdinary(text.substr(segmentStart), out);
    return out;
}

void Tokenizer::encodeOrdinary(std::string_view text, std::vector<std::int32_t>& out) const
{
    if (text.empty())
        return;
    if (m_normalization != NormalizationForm::None) {
        const std::string normalized = normalizeUnicode(text, m_normalization);
        m_preTokenizer.split(normalized, [&](std::string_view piece) { encodePiece(piece, out); });
        return;
    }
    m_preTokenizer.split(text, [&](std::string_view piece) { encodePiece(piece, out); });
}

void Tokenizer::encodePiece(std::string_view piece, std::vector<std::int32_t>& out) const
{
    if (piece.size() > kMaxCachedPieceBytes) {
        runBpe(piece, out);
        return;
    }
    std::string key(piece);
    {
        std::lock_guard lock(m_cache->mutex);
        const auto hit = m_cache->entries.find(key);
        if (hit != m_cache->entries.end()) {
            out.insert(out.end(), hit->second.begin(), hit->second.end());
            return;
        }
    }
    const std::size_t first = out.size();
    runBpe(piece, out);
    std::vector<std::int32_t> ids(out.begin() + std::ptrdiff_t(first), out.end());
    std::lock_guard lock(m_cache->mutex);
    if (m_cache->entries.size() >= kMaxCacheEntries)
        m_cache->entries.clear();
    m_cache->entries.emplace(std::move(key), std::move(ids));
}

void Tokenizer::runBpe(std::string_view piece, std::vector<std::int32_t>& out) const
{
    struct Symbol {
        std::int32_t id;
        std::int32_t prev;
        std::int32_t next;
    };
    std::vector<Symbol> symbols;
    symbols.reserve(piece.size());
    for (const char c : piece) {
        const std::int32_t id = m_byteIds[static_cast<unsigned char>(c)];
        if (id < 0)
            continue; // a byte the vocabulary cannot spell is dropped (no unk token)
        const auto index = std::int32_t(symbols.size());
        symbols.push_back({ id, index - 1, -1 });
        if (index > 0)
            symbols[std::size_t(index - 1)].next = index;
    }
    if (symbols.empty())
        return;

    struct Candidate {
        std::int32_t rank;
        std::int32_t pos; // left symbol
        std::int32_t left, right;
        bool operator>(const Candidate& o) const
        {
            return rank != o.rank ? rank > o.rank : pos > o.pos;
        }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
    const auto consider = [&](std::int32_t pos) {
        if (pos < 0)
            return;
        const std::int32_t next = symbols[std::size_t(pos)].next;
        if (next < 0)
            return;
        const std::int32_t l = symbols[std::size_t(pos)].id;
        const std::int32_t r = symbols[std::size_t(next)].id;
        const auto merge = m_merges.find(pairKey(l, r));
        if (merge != m_merges.end())
            queue.push({ merge->second.rank, pos, l, r });
    };
    for (std::int32_t i = 0; i + 1 < std::int32_t(symbols.size()); ++i)
        consider(i);

    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& left = symbols[std::size_t(c.pos)];
        if (left.id != c.left || left.next < 0)
            continue; // stale: this symbol changed since
        Symbol& right = symbols[std::size_t(left.next)];
        if (right.id != c.right)
            continue;
        left.id = m_merges.find(pairKey(c.left, c.right))->second.id;
        right.id = -1; // removed
        left.next = right.next;
        if (right.next >= 0)
            symbols[std::size_t(right.next)].prev = c.pos;
        consider(left.prev);
        consider(c.pos);
    }
    for (std::int32_t i = 0; i >= 0; i = symbols[std::size_t(i)].next)
        out.push_back(symbols[std::size_t(i)].id);
}

std::string Tokenizer::decodeBytes(std::span<const std::int32_t> ids, bool skipSpecial) const
{
    std::string out;
    for (const std::int32_t id : ids) {
        if (!isValidId(id))
            continue;
        if (skipSpecial && m_kinds[std::size_t(id)] == Kind::Special)
            continue;
        out.append(m_pieces[std::size_t(id)]);
    }
    return out;
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids, bool skipSpecial) const
{
    return utf8::sanitize(decodeBytes(ids, skipSpecial));
}

std::string_view Tokenizer::tokenBytes(std::int32_t id) const
{
    return isValidId(id) ? std::string_view(m_pieces[std::size_t(id)]) : std::string_view();
}

bool Tokenizer::isSpecial(std::int32_t id) const
{
    return isValidId(id) && m_kinds[std::size_t(id)] == Kind::Special;
}

bool Tokenizer::isAdded(std::int32_t id) const
{
    return isValidId(id)
        && (m_kinds[std::size_t(id)] == Kind::Special || m_kinds[std::size_t(id)] == Kind::Added);
}

std::optional<std::int32_t> Tokenizer::tokenId(std::string_view content) const
{
    for (const AddedToken& a : m_added) {
        if (a.content == content)
            return a.id;
    }
    const auto it = m_ordinaryIds.find(std::string(content));
    if (it != m_ordinaryIds.end())
        return it->second;
    return std::nullopt;
}

} // namespace cw::engine
