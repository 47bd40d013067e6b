#include "app/generation/remote_generator.h"

#include "app/generation/chat_stream_reader.h"

#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTimer>
#include <memory>

namespace cw::generation {

namespace {

// How often a cancel is looked for while answers stream.
constexpr int kCancelPollMs = 50;

QByteArray requestBody(const GenerationRequest& request, const QString& model)
{
    QJsonArray messages;
    for (const engine::ChatMessage& m : request.messages)
        messages.append(QJsonObject { { "role", QString::fromStdString(m.role) },
            { "content", QString::fromStdString(m.content) } });
    QJsonObject body { { "model", model }, { "messages", messages },
        { "max_tokens", request.maxTokens }, { "temperature", double(request.temperature) },
        { "seed", qint64(request.seed) }, { "stream", true },
        { "stream_options", QJsonObject { { "include_usage", true } } } };
    if (request.topP < 1.0f)
        body.insert("top_p", double(request.topP));
    if (!request.stop.empty()) {
        QJsonArray stop;
        for (const std::string& s : request.stop)
            stop.append(QString::fromStdString(s));
        body.insert("stop", stop);
    }
    if (!request.jsonSchema.empty()) {
        const QJsonObject schema
            = QJsonDocument::fromJson(QByteArray::fromStdString(request.jsonSchema)).object();
        body.insert("response_format",
            QJsonObject { { "type", "json_schema" },
                { "json_schema",
                    QJsonObject {
                        { "name", "answer" }, { "schema", schema }, { "strict", true } } } });
    }
    if (!request.thinking)
        body.insert("chat_template_kwargs", QJsonObject { { "enable_thinking", false } });
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

// One answer in flight.
struct Stream {
    QNetworkReply* reply = nullptr;
    ChatStreamReader reader;
    GenerationAnswer answer;
    QByteArray head; // the first bytes, for an error body
    bool ended = false;
    bool tooLong = false; // refused: prompt longer than the server takes

    std::string take()
    {
        if (!reply->isOpen())
            return {}; // aborted: nothing more to read
        const QByteArray bytes = reply->readAll();
        if (head.size() < 4096)
            head += bytes.left(4096 - head.size());
        return reader.feed(bytes);
    }
};

} // namespace

RemoteGenerator::RemoteGenerator(RemoteServer server)
    : m_server(std::move(server))
{
}

QString RemoteGenerator::name() const
{
    return m_server.model.isEmpty() ? m_server.baseUrl : m_server.model;
}

Result<GenerationTotals> RemoteGenerator::generate(std::span<GenerationRequest> requests,
    const std::function<bool()>& cancelled, const FinishedCallback& onFinished)
{
    GenerationTotals totals;
    m_promptsTooLong = false;
    if (requests.empty())
        return totals;
    auto url = m_server.endpoint(QStringLiteral("chat/completions"));
    if (!url)
        return url.error();
    const std::string where = m_server.baseUrl.toStdString();
    if (m_server.model.isEmpty()) {
        auto models = listRemoteModels(m_server);
        if (!models)
            return models.error();
        if (models->isEmpty())
            return makeError(where + ": the server lists no model");
        m_server.model = models->first();
    }

    QNetworkAccessManager network;
    QEventLoop loop;
    std::vector<std::unique_ptr<Stream>> streams;
    std::size_t ended = 0;
    bool stopping = false;
    // Looked at on a timer and after every piece, so a cancel lands within one piece.
    auto stopIfCancelled = [&] {
        if (stopping || !cancelled || !cancelled())
            return;
        stopping = true;
        for (auto& s : streams)
            if (!s->ended)
                s->reply->abort(); // finished() follows at once, marked cancelled
    };
    for (std::size_t i = 0; i < requests.size(); ++i) {
        auto stream = std::make_unique<Stream>();
        Stream* s = stream.get();
        const GenerationRequest* request = &requests[i];
        s->reply = network.post(m_server.request(*url), requestBody(*request, m_server.model));
        QObject::connect(
            s->reply, &QNetworkReply::readyRead, &loop, [s, request, &stopIfCancelled] {
                const std::string piece = s->take();
                if (piece.empty())
                    return;
                s->answer.text += piece;
                if (request->onText)
                    request->onText(piece);
                stopIfCancelled();
            });
        QObject::connect(s->reply, &QNetworkReply::finished, &loop, [&, s, i, request] {
            const std::string piece = s->take();
            if (!piece.empty()) {
                s->answer.text += piece;
                if (request->onText)
                    request->onText(piece);
            }
            const int status
                = s->reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            GenerationAnswer& a = s->answer;
            a.promptTokens = s->reader.promptTokens();
            a.generatedTokens = s->reader.completionTokens();
            if (stopping) {
                a.cancelled = true;
            } else if (status >= 400) {
                a.error = describeReplyError(status, s->head, s->reply->errorString());
                // 413: clausewright-server's token limit; 400 naming the context: vLLM,
                // SGLang and llama.cpp's wording for a prompt over the context.
                const QString text = QString::fromStdString(a.error).toLower();
                s->tooLong = status == 413
                    || (status == 400 && text.contains("context")
                        && (text.contains("length") || text.contains("exceed")
                            || text.contains("maximum")));
            } else if (s->reply->error() != QNetworkReply::NoError && status == 200) {
                a.error = "the server closed the connection before the answer was complete ("
                    + std::to_string(a.text.size()) + " bytes received; "
                    + s->reply->errorString().toStdString() + ")";
            } else if (s->reply->error() != QNetworkReply::NoError) {
                a.error = "cannot reach the server: " + s->reply->errorString().toStdString();
            } else if (!s->reader.error().empty()) {
                a.error = "the server failed the answer: " + s->reader.error();
            } else if (!s->reader.finished() && !s->reader.done()) {
                a.error = "the server closed the connection before the answer was complete ("
                    + std::to_string(a.text.size()) + " bytes received)";
            } else {
                a.complete = true;
            }
            s->ended = true;
            s->reply->deleteLater();
            if (onFinished)
                onFinished(i, a);
            if (++ended == streams.size())
                loop.quit();
        });
        streams.push_back(std::move(stream));
    }
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &loop, stopIfCancelled);
    poll.start(kCancelPollMs);
    if (ended < streams.size())
        loop.exec();

    bool anyText = false;
    std::string firstError;
    m_promptsTooLong = !stopping;
    for (const auto& s : streams) {
        m_promptsTooLong = m_promptsTooLong && s->tooLong;
        const GenerationAnswer& a = s->answer;
        totals.promptTokens += a.promptTokens;
        totals.generatedTokens += a.generatedTokens;
        anyText |= !a.text.empty();
        if (!a.error.empty()) {
            ++totals.failed;
            if (firstError.empty())
                firstError = a.error;
        }
    }
    totals.cancelled = stopping;
    // Nothing came back at all (unreachable, refused key, no such model): an error, so the
    // caller can say so or try its other backend.
    if (!stopping && totals.failed == int(streams.size()) && !anyText)
        return makeError(where + ": " + firstError);
    return totals;
}

} // namespace cw::generation
