#include "app/history/history_store.h"

#include <QCoroFuture>
#include <QFuture>
#include <QPromise>
#include <memory>

namespace cw {

HistoryStore::HistoryStore(QString path, QObject* parent)
    : QObject(parent)
    , m_path(std::move(path))
{
    m_worker.setMaxThreadCount(1);
    m_worker.setExpiryTimeout(-1);
    m_worker.setObjectName(QStringLiteral("HistoryStore"));
}

HistoryStore::~HistoryStore()
{
    m_worker.waitForDone(); // runs every queued call to the end
    m_db.reset();
}

template <typename T, typename Fn> QCoro::Task<Result<T>> HistoryStore::onWorker(Fn fn)
{
    auto promise = std::make_shared<QPromise<Result<T>>>();
    QFuture<Result<T>> future = promise->future();
    promise->start();
    m_worker.start([this, promise, fn = std::move(fn)]() mutable {
        if (!m_db) {
            auto opened = HistoryDatabase::open(m_path);
            if (!opened) {
                promise->addResult(Result<T>(opened.error()));
                promise->finish();
                return;
            }
            m_db = std::move(opened.value());
        }
        promise->addResult(fn(*m_db));
        promise->finish();
    });
    co_return co_await future; // always holds one result: the destructor drains the queue
}

// The public calls are plain functions returning onWorker's task, not coroutines: GCC 12
// destroys temporaries inside a co_await expression twice (a lambda capturing a Review
// crashed). Signals are emitted on the worker; Qt queues them to receivers on other threads.
QCoro::Task<Result<void>> HistoryStore::open()
{
    return onWorker<void>([](HistoryDatabase&) { return Result<void>(); });
}

QCoro::Task<Result<qint64>> HistoryStore::save(Review review)
{
    return onWorker<qint64>([this, review = std::move(review)](HistoryDatabase& db) {
        Result<qint64> saved = db.save(review);
        if (saved)
            emit reviewSaved(saved.value());
        return saved;
    });
}

QCoro::Task<Result<HistoryPage>> HistoryStore::list(int offset, int limit)
{
    return onWorker<HistoryPage>(
        [offset, limit](HistoryDatabase& db) { return db.list(offset, limit); });
}

QCoro::Task<Result<Review>> HistoryStore::load(qint64 id)
{
    return onWorker<Review>([id](HistoryDatabase& db) { return db.load(id); });
}

QCoro::Task<Result<QList<HistorySearchHit>>> HistoryStore::search(QString query, int limit)
{
    return onWorker<QList<HistorySearchHit>>(
        [query = std::move(query), limit](HistoryDatabase& db) { return db.search(query, limit); });
}

QCoro::Task<Result<void>> HistoryStore::remove(qint64 id)
{
    return onWorker<void>([this, id](HistoryDatabase& db) {
        Result<void> removed = db.remove(id);
        if (removed)
            emit reviewRemoved(id);
        return removed;
    });
}

QCoro::Task<Result<void>> HistoryStore::editFinding(
    qint64 reviewId, int findingIndex, FindingEdit edit)
{
    return onWorker<void>(
        [this, reviewId, findingIndex, edit = std::move(edit)](HistoryDatabase& db) {
            Result<void> edited = db.editFinding(reviewId, findingIndex, edit);
            if (edited)
                emit findingEdited(reviewId, findingIndex);
            return edited;
        });
}

} // namespace cw
