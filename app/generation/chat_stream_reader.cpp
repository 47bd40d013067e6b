#include "app/generation/chat_stream_reader.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace cw::generation {

std::string ChatStreamReader::feed(const QByteArray& bytes)
{
    m_buffer += bytes;
    std::string text;
    while (true) {
        // Events end with a blank line; servers use \n or \r\n.
        qsizetype end = m_buffer.indexOf("\n\n");
        qsizetype skip = 2;
        const qsizetype crlf = m_buffer.indexOf("\r\n\r\n");
        if (crlf >= 0 && (end < 0 || crlf < end)) {
            end = crlf;
            skip = 4;
        }
        if (end < 0)
            break;
        const QByteArray block = m_buffer.left(end);
        m_buffer.remove(0, end + skip);
        QByteArray data;
        for (QByteArray line : block.split('\n')) {
            if (line.endsWith('\r'))
                line.chop(1);
            if (!line.startsWith("data:"))
                continue; // a comment, event:, id: or retry:
            line.remove(0, 5);
            if (line.startsWith(' '))
                line.remove(0, 1);
            if (!data.isEmpty())
                data += '\n';
            data += line;
        }
        if (!data.isEmpty())
            text += event(data);
    }
    return text;
}

std::string ChatStreamReader::event(const QByteArray& data)
{
    if (data.trimmed() == "[DONE]") {
        m_done = true;
        return {};
    }
    const QJsonObject chunk = QJsonDocument::fromJson(data).object();
    if (chunk.isEmpty())
        return {};
    ++m_events;
    if (chunk.contains("error")) {
        const QJsonValue error = chunk.value("error");
        m_error
            = (error.isObject() ? error.toObject().value("message").toString() : error.toString())
                  .toStdString();
        if (m_error.empty())
            m_error = "the server reported an error";
        return {};
    }
    const QJsonObject usage = chunk.value("usage").toObject();
    if (!usage.isEmpty()) {
        m_promptTokens = usage.value("prompt_tokens").toInteger();
        m_completionTokens = usage.value("completion_tokens").toInteger();
    }
    std::string text;
    for (const QJsonValue& value : chunk.value("choices").toArray()) {
        const QJsonObject choice = value.toObject();
        text += choice.value("delta").toObject().value("content").toString().toStdString();
        const QJsonValue reason = choice.value("finish_reason");
        if (reason.isString())
            m_finishReason = reason.toString().toStdString();
    }
    return text;
}

} // namespace cw::generation
