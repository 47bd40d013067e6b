#include "app/desktop/contract_workflow.h"

#include "app/desktop/app_settings.h"
#include "app/desktop/review_queue.h"
#include "app/ingest/document_reader.h"
#include "app/ingest/pdf_passwords.h"

#include <QFile>
#include <QFileInfo>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>
#include <qcoro/qcorofuture.h>

namespace cw {

ContractWorkflow::ContractWorkflow(ReviewQueue* queue, PasswordPrompt askPassword, QObject* parent)
    : QObject(parent)
    , m_queue(queue)
    , m_askPassword(std::move(askPassword))
{
}

bool ContractWorkflow::isPdfWithinLimits(const QString& path)
{
    const QFileInfo info(path);
    if (!info.isFile() || info.size() > kMaxDocumentBytes)
        return false;
    if (info.suffix().compare(QLatin1String("pdf"), Qt::CaseInsensitive) == 0)
        return true;
    QFile file(path);
    return file.open(QIODevice::ReadOnly) && file.read(1024).contains("%PDF-");
}

QCoro::Task<bool> ContractWorkflow::open(QString path)
{
    AppSettings::addRecentFile(path);
    emit recentFilesChanged();
    if (isPdfWithinLimits(path) && PdfPasswords::lookup(path).isEmpty()) {
        QPointer<ContractWorkflow> self(this);
        // Tasks are named before co_await: GCC 12 destroys temporaries of a co_await
        // full-expression twice.
        auto unlocking = unlock(path);
        const bool unlocked = co_await unlocking;
        if (!self)
            co_return false;
        if (!unlocked) {
            emit notice(
                tr("%1 was not opened: it needs its password.").arg(QFileInfo(path).fileName()));
            co_return false;
        }
    }
    m_queue->enqueue(path);
    co_return true;
}

QCoro::Task<bool> ContractWorkflow::unlock(QString path)
{
    // Poppler reads the trailer and the encryption dictionary: off the UI thread, since a
    // damaged or huge file can take a while.
    QPointer<ContractWorkflow> self(this);
    QFuture<PdfLock> checking = QtConcurrent::run([path] { return pdfLockState(path); });
    const PdfLock lock = co_await checking;
    if (!self)
        co_return false;
    if (lock != PdfLock::NeedsPassword)
        co_return true; // open, or unreadable: the review says what is wrong with it
    const QString name = QFileInfo(path).fileName();
    QString prompt = tr("“%1” is protected by a password.\nPassword:").arg(name);
    for (;;) {
        auto asking = m_askPassword(name, prompt);
        const std::optional<QString> password = co_await asking;
        if (!self || !password)
            co_return false;
        QFuture<bool> trying = QtConcurrent::run(
            [path, password = *password] { return pdfPasswordOpens(path, password); });
        const bool opens = co_await trying;
        if (!self)
            co_return false;
        if (opens) {
            PdfPasswords::remember(path, *password);
            co_return true;
        }
        prompt = tr("That password does not open “%1”. Try again:").arg(name);
    }
}

bool ContractWorkflow::beginPreview(const QString& path, const Review& shownBefore)
{
    m_previewPath.clear();
    if (!isPdfWithinLimits(path))
        return false;
    m_previewPath = path;
    m_beforePreview = shownBefore;
    return true;
}

void ContractWorkflow::previewDone()
{
    m_previewPath.clear();
    m_beforePreview = {};
}

std::optional<Review> ContractWorkflow::previewFailed(const QString& path)
{
    if (m_previewPath.isEmpty() || m_previewPath != path)
        return std::nullopt;
    Review before = std::move(m_beforePreview);
    previewDone();
    return before;
}

std::optional<ReportFormat> ContractWorkflow::formatFor(const QString& path, const QString& filter)
{
    if (auto format = reportFormatFromName(QFileInfo(path).suffix().toLower()))
        return format;
    return reportFormatFromName(
        filter.section(QStringLiteral("*."), 1).section(QLatin1Char(')'), 0, 0));
}

QFuture<Result<void>> ContractWorkflow::exportReport(
    const Review& review, ReportFormat format, const QString& path)
{
    return QtConcurrent::run([review, format, path] { return exportReview(review, format, path); });
}

} // namespace cw
