#include "app/generation/remote_server.h"

#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTimer>

namespace cw::generation {

Result<QString> readApiKeyFile(const QString& path)
{
    QFile keys(path);
    if (!keys.open(QIODevice::ReadOnly))
        return makeError(keys.errorString().toStdString());
    return QString::fromUtf8(keys.readLine()).trimmed();
}

Result<QUrl> RemoteServer::endpoint(const QString& path) const
{
    QString base = baseUrl.trimmed();
    while (base.endsWith('/'))
        base.chop(1);
    if (base.endsWith(QLatin1String("/v1")))
        base.chop(3);
    const QUrl url(base + QStringLiteral("/v1/") + path);
    if (!url.isValid()
        || (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https"))
        || url.host().isEmpty())
        return makeError("remote server URL '" + baseUrl.toStdString()
            + "' is not an http:// or https:// address");
    return url;
}

QNetworkRequest RemoteServer::request(const QUrl& url) const
{
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    if (!apiKey.isEmpty())
        request.setRawHeader("Authorization", "Bearer " + apiKey.toUtf8());
    // Answers stream for minutes; the transfer time-out is ours (timeoutSeconds), not Qt's.
    request.setTransferTimeout(timeoutSeconds * 1000);
    return request;
}

std::string describeReplyError(int httpStatus, const QByteArray& body, const QString& networkError)
{
    QString message;
    const QJsonObject error = QJsonDocument::fromJson(body).object().value("error").toObject();
    if (!error.isEmpty())
        message = error.value("message").toString();
    else if (!body.trimmed().isEmpty() && httpStatus >= 400)
        message = QString::fromUtf8(body.left(200)).trimmed();
    if (httpStatus == 401 || httpStatus == 403)
        return "the server refused the API key (HTTP " + std::to_string(httpStatus) + ")"
            + (message.isEmpty() ? std::string() : ": " + message.toStdString());
    if (httpStatus >= 400)
        return "the server answered HTTP " + std::to_string(httpStatus)
            + (message.isEmpty() ? std::string() : ": " + message.toStdString());
    return networkError.toStdString();
}

Result<QNetworkReply*> requestRemoteModels(
    QNetworkAccessManager& network, const RemoteServer& server, int timeoutSeconds)
{
    auto url = server.endpoint(QStringLiteral("models"));
    if (!url)
        return url.error();
    QNetworkRequest request = server.request(*url);
    request.setTransferTimeout(timeoutSeconds * 1000);
    return network.get(request);
}

Result<QStringList> readRemoteModels(QNetworkReply& reply)
{
    const int status = reply.attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray body = reply.readAll();
    const std::string where = reply.url().toString().toStdString();
    if (reply.error() != QNetworkReply::NoError || status != 200)
        return makeError(where + ": " + describeReplyError(status, body, reply.errorString()));
    const QJsonObject list = QJsonDocument::fromJson(body).object();
    if (!list.value("data").isArray())
        return makeError(where + ": not an OpenAI-compatible model list (no \"data\" array)");
    QStringList ids;
    for (const QJsonValue& model : list.value("data").toArray())
        ids.append(model.toObject().value("id").toString());
    return ids;
}

Result<QStringList> listRemoteModels(const RemoteServer& server, int timeoutSeconds)
{
    QNetworkAccessManager network;
    auto reply = requestRemoteModels(network, server, timeoutSeconds);
    if (!reply)
        return reply.error();
    QEventLoop loop;
    QObject::connect(*reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    loop.exec();
    (*reply)->deleteLater();
    return readRemoteModels(**reply);
}

} // namespace cw::generation
