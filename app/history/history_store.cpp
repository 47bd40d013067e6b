#include "app/history/history_store.h"

#include <QCoroFuture>
#include <QFuture>
#include <QPointer>
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

QCoro::Task<Result<void>> HistoryStore::open()
{
    co_return co_await onWorker<void>([](HistoryDatabase&) { return Result<void>(); });
}

QCoro::Task<Result<qint64>> HistoryStore::save(Review review)
{
    QPointer<HistoryStore> self(this);
    Result<qint64> saved = co_await onWorker<qint64>(
        [review = std::move(review)](HistoryDatabase& db) { return db.save(review); });
    if (saved && self)
        emit self->reviewSaved(saved.value());
    co_return saved;
}

QCoro::Task<Result<HistoryPage>> HistoryStore::list(int offset, int limit)
{
    co_return co_await onWorker<HistoryPage>(
        [offset, limit](HistoryDatabase& db) { return db.list(offset, limit); });
}

QCoro::Task<Result<Review>> HistoryStore::load(qint64 id)
{
    co_return co_await onWorker<Review>([id](HistoryDatabase& db) { return db.load(id); });
}

QCoro::Task<Result<QList<HistorySearchHit>>> HistoryStore::search(QString query, int limit)
{
    co_return co_await onWorker<QList<HistorySearchHit>>(
        [query = std::move(query), limit](HistoryDatabase& db) { return db.search(query, limit); });
}

QCoro::Task<Result<void>> HistoryStore::remove(qint64 id)
{
    QPointer<HistoryStore> self(this);
    Result<void> removed
        = co_await onWorker<void>([id](HistoryDatabase& db) { return db.remove(id); });
    if (removed && self)
        emit self->reviewRemoved(id);
    co_return removed;
}

QCoro::Task<Result<void>> HistoryStore::editFinding(
    qint64 reviewId, int findingIndex, FindingEdit edit)
{
    QPointer<HistoryStore> self(this);
    Result<void> edited = co_await onWorker<void>(
        [reviewId, findingIndex, edit = std::move(edit)](
            HistoryDatabase& db) { return db.editFinding(reviewId, findingIndex, edit); });
    if (edited && self)
        emit self->findingEdited(reviewId, findingIndex);
    co_return edited;
}

} // namespace cw
