#include "app/desktop/remote_key_store.h"

#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTimer>

#ifdef CW_HAVE_QTKEYCHAIN
#include <qt6keychain/keychain.h>
#endif

namespace cw {

namespace {

const QString kService = QStringLiteral("Clausewright");
const QString kEntry = QStringLiteral("remote-server-api-key");

bool keyringWanted()
{
#ifdef CW_HAVE_QTKEYCHAIN
    return qEnvironmentVariable("CW_NO_KEYRING") != QLatin1String("1");
#else
    return false;
#endif
}

#ifdef CW_HAVE_QTKEYCHAIN
// Runs a keychain job to its end. The jobs talk D-Bus and answer within milliseconds, or at
// once with NoBackendAvailable where there is no keyring.
void runJob(QKeychain::Job& job)
{
    job.setAutoDelete(false);
    QEventLoop loop;
    QObject::connect(&job, &QKeychain::Job::finished, &loop, &QEventLoop::quit);
    job.start();
    loop.exec();
}
#endif

Result<QString> readFile()
{
    QFile file(RemoteKeyStore::keyFilePath());
    if (!file.exists())
        return QString();
    if (!file.open(QIODevice::ReadOnly))
        return makeError(file.fileName().toStdString() + ": " + file.errorString().toStdString());
    return QString::fromUtf8(file.readAll()).trimmed();
}

Result<QString> writeFile(const QString& key)
{
    const QString path = RemoteKeyStore::keyFilePath();
    if (key.isEmpty()) {
        QFile::remove(path);
        return path;
    }
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    // Owner-only before the key is written, so it is never readable by others.
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)
        || !file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner))
        return makeError(path.toStdString() + ": " + file.errorString().toStdString());
    file.write(key.toUtf8() + '\n');
    if (!file.flush())
        return makeError(path.toStdString() + ": " + file.errorString().toStdString());
    return path;
}

} // namespace

QString RemoteKeyStore::keyFilePath()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation)
        + QStringLiteral("/remote-api-key");
}

Result<QString> RemoteKeyStore::read(QString* where)
{
#ifdef CW_HAVE_QTKEYCHAIN
    if (keyringWanted()) {
        QKeychain::ReadPasswordJob job(kService);
        job.setKey(kEntry);
        runJob(job);
        if (job.error() == QKeychain::NoError) {
            if (where)
                *where = QStringLiteral("the desktop keyring");
            return job.textData();
        }
        // No keyring, or no entry in it: the file, if there is one.
    }
#endif
    if (where)
        *where = keyFilePath();
    return readFile();
}

void RemoteKeyStore::readLater(
    QObject* context, std::function<void(const Result<QString>&, const QString&)> done)
{
    auto fromFile = [context, done] {
        QTimer::singleShot(0, context, [done] { done(readFile(), keyFilePath()); });
    };
#ifdef CW_HAVE_QTKEYCHAIN
    if (keyringWanted()) {
        auto* job = new QKeychain::ReadPasswordJob(kService); // deletes itself when finished
        job->setKey(kEntry);
        QObject::connect(job, &QKeychain::Job::finished, context, [job, done](QKeychain::Job*) {
            if (job->error() == QKeychain::NoError)
                done(job->textData(), QStringLiteral("the desktop keyring"));
            else
                done(readFile(), keyFilePath());
        });
        job->start();
        return;
    }
#endif
    fromFile();
}

Result<QString> RemoteKeyStore::write(const QString& key)
{
#ifdef CW_HAVE_QTKEYCHAIN
    if (keyringWanted()) {
        bool stored = false;
        if (key.isEmpty()) {
            QKeychain::DeletePasswordJob job(kService);
            job.setKey(kEntry);
            runJob(job);
        } else {
            QKeychain::WritePasswordJob job(kService);
            job.setKey(kEntry);
            job.setTextData(key);
            runJob(job);
            stored = job.error() == QKeychain::NoError;
        }
        if (stored) {
            QFile::remove(keyFilePath()); // one place only
            return QStringLiteral("the desktop keyring");
        }
    }
#endif
    return writeFile(key);
}

} // namespace cw
