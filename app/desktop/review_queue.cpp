#include "app/desktop/review_queue.h"

namespace cw {

ReviewQueue::ReviewQueue(QObject* parent)
    : QObject(parent)
{
    connect(&m_pipeline, &ReviewPipeline::progress, this, &ReviewQueue::progress);
}

void ReviewQueue::enqueue(const QString& path)
{
    m_queue.enqueue(path);
    emit queueChanged(pending());
    if (!m_busy)
        runQueue();
}

void ReviewQueue::cancelCurrent()
{
    if (m_busy)
        m_pipeline.cancel();
}

void ReviewQueue::cancelAll()
{
    m_queue.clear();
    emit queueChanged(0);
    cancelCurrent();
}

QCoro::Task<> ReviewQueue::runQueue()
{
    m_busy = true;
    while (!m_queue.isEmpty()) {
        m_current = m_queue.dequeue();
        emit queueChanged(pending());
        emit started(m_current);
        Result<Review> result = co_await m_pipeline.review(m_current, m_options);
        if (result)
            emit reviewReady(result.value());
        else
            emit failed(m_current, QString::fromStdString(result.error().message));
    }
    m_current.clear();
    m_busy = false;
    emit idle();
}

} // namespace cw
