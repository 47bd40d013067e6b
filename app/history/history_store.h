#pragma once

#include "app/history/history_database.h"

#include <QCoroTask>
#include <QObject>
#include <QThreadPool>

namespace cw {

// The history for the GUI: a HistoryDatabase on the store's own worker thread (one thread,
// one connection), so the UI thread never waits on disk. Every call returns a QCoro task
// that finishes on the caller's thread; the signals tell every view what changed.
//
//     cw::HistoryStore store(cw::HistoryDatabase::defaultPath());
//     if (auto opened = co_await store.open(); !opened) showError(opened.error());
//     auto page = co_await store.list(0, 100);
//
// Calls made before open() has finished wait for it (they run in order on the worker).
class HistoryStore : public QObject {
    Q_OBJECT
public:
    explicit HistoryStore(QString path, QObject* parent = nullptr);
    // Finishes the calls already queued, then closes the database.
    ~HistoryStore() override;

    QString path() const { return m_path; }

    QCoro::Task<Result<void>> open();
    QCoro::Task<Result<qint64>> save(Review review);
    QCoro::Task<Result<HistoryPage>> list(int offset, int limit);
    QCoro::Task<Result<Review>> load(qint64 id);
    QCoro::Task<Result<QList<HistorySearchHit>>> search(QString query, int limit = 50);
    QCoro::Task<Result<void>> remove(qint64 id);
    QCoro::Task<Result<void>> editFinding(qint64 reviewId, int findingIndex, FindingEdit edit);

signals:
    void reviewSaved(qint64 id);
    void reviewRemoved(qint64 id);
    void findingEdited(qint64 reviewId, int findingIndex);

private:
    template <typename T, typename Fn> QCoro::Task<Result<T>> onWorker(Fn fn);

    QString m_path;
    QThreadPool m_worker; // one thread, never expiring: it owns the connection
    std::unique_ptr<HistoryDatabase> m_db; // touched only on m_worker's thread
};

} // namespace cw
