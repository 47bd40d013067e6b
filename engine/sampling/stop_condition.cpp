#include "engine/sampling/stop_condition.h"

#include <algorithm>

namespace cw::sampling {

namespace {

// Bytes at the end of s that start a UTF-8 sequence not yet complete.
size_t incompleteUtf8Tail(const std::string& s)
{
    const size_t n = s.size();
    for (size_t back = 1; back <= 4 && back <= n; ++back) {
        const auto c = static_cast<unsigned char>(s[n - back]);
        if ((c & 0xC0) == 0x80)
            continue; // a continuation byte: look further back
        size_t need = 1;
        if ((c & 0xE0) == 0xC0)
            need = 2;
        else if ((c & 0xF0) == 0xE0)
            need = 3;
        else if ((c & 0xF8) == 0xF0)
            need = 4;
        return need > back ? back : 0;
    }
    return 0;
}

} // namespace

StopCondition::StopCondition(const SamplingParams& params, std::vector<int32_t> eosTokenIds)
    : m_eos(std::move(eosTokenIds))
    , m_stopIds(params.stopTokenIds)
    , m_stopStrings(params.stopStrings)
    , m_maxTokens(params.maxTokens)
{
    std::erase_if(m_stopStrings, [](const std::string& s) { return s.empty(); });
}

StopReason StopCondition::add(int32_t tokenId, std::string_view tokenBytes)
{
    if (m_reason != StopReason::None)
        return m_reason;
    ++m_count;
    if (std::find(m_eos.begin(), m_eos.end(), tokenId) != m_eos.end())
        return m_reason = StopReason::EosToken;
    if (std::find(m_stopIds.begin(), m_stopIds.end(), tokenId) != m_stopIds.end())
        return m_reason = StopReason::StopToken;
    const size_t oldSize = m_text.size();
    m_text.append(tokenBytes);
    // A new match must end inside the new bytes, so it starts at most (length - 1) before.
    size_t best = std::string::npos;
    for (const std::string& s : m_stopStrings) {
        const size_t from = oldSize >= s.size() - 1 ? oldSize - (s.size() - 1) : 0;
        const size_t at = m_text.find(s, from);
        if (at != std::string::npos && at < best)
            best = at;
    }
    if (best != std::string::npos) {
        m_text.resize(best);
        return m_reason = StopReason::StopString;
    }
    if (m_maxTokens > 0 && m_count >= m_maxTokens)
        return m_reason = StopReason::MaxTokens;
    return StopReason::None;
}

size_t StopCondition::heldBackBytes() const
{
    if (m_reason != StopReason::None)
        return 0;
    size_t held = 0;
    for (const std::string& s : m_stopStrings) {
        // Longest proper prefix of s that is a suffix of the text.
        for (size_t len = std::min(s.size() - 1, m_text.size()); len > held; --len) {
            if (m_text.compare(m_text.size() - len, len, s, 0, len) == 0) {
                held = len;
                break;
            }
        }
    }
    return std::max(held, incompleteUtf8Tail(m_text));
}

std::string StopCondition::takeReleasable()
{
    const size_t end = m_text.size() - heldBackBytes();
    if (end <= m_released)
        return {};
    std::string out = m_text.substr(m_released, end - m_released);
    m_released = end;
    return out;
}

} // namespace cw::sampling
