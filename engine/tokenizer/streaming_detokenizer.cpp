#include "engine/tokenizer/streaming_detokenizer.h"

#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/utf8.h"

namespace cw::engine {

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer, bool skipSpecial)
    : m_tokenizer(tokenizer)
    , m_skipSpecial(skipSpecial)
{
}

std::string StreamingDetokenizer::push(std::int32_t id)
{
    if (m_skipSpecial && m_tokenizer.isSpecial(id))
        return {};
    m_pending.append(m_tokenizer.tokenBytes(id));
    std::string out;
    const std::size_t consumed = utf8::appendComplete(out, m_pending);
    m_pending.erase(0, consumed);
    return out;
}

std::string StreamingDetokenizer::flush()
{
    std::string out = utf8::sanitize(m_pending);
    m_pending.clear();
    return out;
}

} // namespace cw::engine
