#include "app/ingest/pdf_passwords.h"

#include <QFileInfo>
#include <QHash>
#include <QMutex>
#include <QMutexLocker>
#include <poppler-qt6.h>

namespace cw {

namespace {

QMutex& keyringMutex()
{
    static QMutex mutex;
    return mutex;
}

QHash<QString, QString>& keyring()
{
    static QHash<QString, QString> passwords;
    return passwords;
}

// One key per file however it was named (relative path, symlink, "./x.pdf").
QString fileKey(const QString& path)
{
    const QFileInfo info(path);
    const QString canonical = info.canonicalFilePath();
    return canonical.isEmpty() ? info.absoluteFilePath() : canonical;
}

} // namespace

bool unlockPdf(Poppler::Document& document, const QString& password)
{
    if (!document.isLocked())
        return true;
    const QByteArray utf8 = password.toUtf8();
    if (!document.unlock(utf8, utf8) && !document.isLocked())
        return true;
    const QByteArray latin1 = password.toLatin1();
    if (latin1 != utf8 && !document.unlock(latin1, latin1) && !document.isLocked())
        return true;
    return !document.isLocked();
}

PdfLock pdfLockState(const QString& path)
{
    std::unique_ptr<Poppler::Document> document = Poppler::Document::load(path);
    if (!document)
        return PdfLock::Unreadable;
    return document->isLocked() ? PdfLock::NeedsPassword : PdfLock::Open;
}

bool pdfPasswordOpens(const QString& path, const QString& password)
{
    std::unique_ptr<Poppler::Document> document = Poppler::Document::load(path);
    return document && unlockPdf(*document, password);
}

void PdfPasswords::remember(const QString& path, const QString& password)
{
    QMutexLocker lock(&keyringMutex());
    keyring().insert(fileKey(path), password);
}

QString PdfPasswords::lookup(const QString& path)
{
    QMutexLocker lock(&keyringMutex());
    return keyring().value(fileKey(path));
}

void PdfPasswords::forget(const QString& path)
{
    QMutexLocker lock(&keyringMutex());
    keyring().remove(fileKey(path));
}

} // namespace cw
