#pragma once

#include "app/report/report_exporter.h"
#include "app/review/review_types.h"

#include <QFuture>
#include <QObject>
#include <QString>
#include <functional>
#include <optional>
#include <qcoro/qcorotask.h>

namespace cw {

class ReviewQueue;

// The desktop's steps between "the user chose a contract" and "its review shows", and between
// "export" and "the report is on disk", without widgets: the window supplies the password
// prompt and shows what this decides. Every step that reads or writes a file runs on a worker
// thread, so the UI thread never waits for Poppler or the disk.
class ContractWorkflow : public QObject {
    Q_OBJECT
public:
    // Asks the user for a PDF's password: fileName for the dialog's title, prompt the text
    // to show (it says when the last answer was wrong). nullopt: the user gave up.
    using PasswordPrompt
        = std::function<QCoro::Task<std::optional<QString>>(QString fileName, QString prompt)>;

    ContractWorkflow(ReviewQueue* queue, PasswordPrompt askPassword, QObject* parent = nullptr);

    // Remembers the file among the recent ones, unlocks an encrypted PDF (asking until its
    // password opens it or the user gives up) and queues the file for review. False: not
    // queued (notice() says why).
    QCoro::Task<bool> open(QString path);

    // Preview of a PDF's pages while it is read and reviewed: begin() says whether the file
    // is one to preview and keeps the review shown before, to put back if this one fails.
    bool beginPreview(const QString& path, const Review& shownBefore);
    // The review's own result replaces the preview.
    void previewDone();
    // The review of path failed: the review to show again, when path was being previewed.
    std::optional<Review> previewFailed(const QString& path);
    bool previewing() const { return !m_previewPath.isEmpty(); }

    // The report format of a save dialog's answer: the file's suffix, else the chosen filter's
    // ("PDF report (*.pdf)" gives pdf) when the user typed none.
    static std::optional<ReportFormat> formatFor(const QString& path, const QString& filter);
    // Renders and writes the report on a worker (the review is copied to it). A future, not a
    // coroutine: clang 14 cannot compile this one as a coroutine under the fuzzers' flags
    // ("Cannot represent a difference across sections").
    static QFuture<Result<void>> exportReport(
        const Review& review, ReportFormat format, const QString& path);

    // A PDF the reader will take: a larger file is refused by the review with a message, and
    // Poppler should not be asked to open it on the way (it scans a damaged file end to end).
    static bool isPdfWithinLimits(const QString& path);

signals:
    void recentFilesChanged();
    void notice(const QString& message);

private:
    QCoro::Task<bool> unlock(QString path);

    ReviewQueue* m_queue;
    PasswordPrompt m_askPassword;
    Review m_beforePreview;
    QString m_previewPath;
};

} // namespace cw
