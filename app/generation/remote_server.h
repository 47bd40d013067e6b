#pragma once

#include "engine/common/result.h"

#include <QNetworkRequest>
#include <QString>
#include <QStringList>
#include <QUrl>

class QNetworkAccessManager;
class QNetworkReply;

namespace cw::generation {

// An OpenAI-compatible server: clausewright-server, vLLM, SGLang or llama.cpp's server.
struct RemoteServer {
    QString baseUrl; // "http://gpu-box:8642" or ".../v1"
    QString apiKey; // sent as Authorization: Bearer; empty: none
    QString model; // the id the server lists; empty: the server's only (or first) model
    int timeoutSeconds = 600; // a request with no answer for this long fails

    bool isSet() const { return !baseUrl.trimmed().isEmpty(); }
    bool operator==(const RemoteServer&) const = default;

    // baseUrl + "/v1/" + path; errors: not an http(s) URL.
    Result<QUrl> endpoint(const QString& path) const;
    QNetworkRequest request(const QUrl& url) const; // with the key and JSON content type
};

// The key in an API key file (`--api-key-file`): its first line, trimmed. Errors: why the file
// cannot be read (Qt's words).
Result<QString> readApiKeyFile(const QString& path);

// GET /v1/models without waiting (for the UI thread): the reply, or an error for a bad URL.
// readRemoteModels reads it once it has finished.
Result<QNetworkReply*> requestRemoteModels(
    QNetworkAccessManager& network, const RemoteServer& server, int timeoutSeconds = 10);
Result<QStringList> readRemoteModels(QNetworkReply& reply);

// GET /v1/models: the ids the server serves. Blocks the calling thread (its own event loop)
// for at most `timeoutSeconds`. Errors: unreachable, refused key (401), not an OpenAI API.
Result<QStringList> listRemoteModels(const RemoteServer& server, int timeoutSeconds = 10);

// A person's message for a failed reply: the server's own {"error": {"message"}} where it
// sent one, else the network error.
std::string describeReplyError(int httpStatus, const QByteArray& body, const QString& networkError);

} // namespace cw::generation
