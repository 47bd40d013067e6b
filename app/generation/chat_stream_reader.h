#pragma once

#include <QByteArray>
#include <cstdint>
#include <string>

namespace cw::generation {

// Reads an OpenAI chat-completions event stream (server-sent events) as its bytes arrive:
// "data: {chunk}" events with choices[0].delta.content, a finish_reason, usage, an
// {"error": ...} event, and "data: [DONE]". Comments (": ...") and other fields are skipped.
class ChatStreamReader {
public:
    // Feeds bytes; returns the content text they completed (whole events only).
    std::string feed(const QByteArray& bytes);

    bool done() const { return m_done; } // [DONE] came
    bool finished() const { return !m_finishReason.empty(); }
    const std::string& finishReason() const { return m_finishReason; }
    const std::string& error() const { return m_error; } // the server's error event
    std::int64_t promptTokens() const { return m_promptTokens; }
    std::int64_t completionTokens() const { return m_completionTokens; }
    std::int64_t events() const { return m_events; }

private:
    std::string event(const QByteArray& data);

    QByteArray m_buffer;
    bool m_done = false;
    std::string m_finishReason;
    std::string m_error;
    std::int64_t m_promptTokens = 0;
    std::int64_t m_completionTokens = 0;
    std::int64_t m_events = 0;
};

} // namespace cw::generation
