#include "app/desktop/review_queue.h"

#include <qcoro/qcorotask.h>

namespace cw {

ReviewQueue::ReviewQueue(QObject* parent)
    : QObject(parent)
{
    connect(&m_pipeline, &ReviewPipeline::progress, this, &ReviewQueue::progress);
}

void ReviewQueue::enqueue(const QString& path)
{
    m_queue.enqueue(path);
    if (m_busy)
        emit queueChanged(pending());
    else
        startNext();
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

ReviewQueue::~ReviewQueue()
{
    // The review in flight finishes on its worker; QCoro::connect drops its result because
    // this object (its context) is gone by then.
    m_queue.clear();
    m_pipeline.cancel();
}

void ReviewQueue::startNext()
{
    if (m_queue.isEmpty()) {
        m_current.clear();
        m_busy = false;
        emit idle();
        return;
    }
    m_busy = true;
    m_current = m_queue.dequeue();
    emit queueChanged(pending());
    emit started(m_current);
    QCoro::connect(m_pipeline.review(m_current, m_options), this, [this](Result<Review> result) {
        if (result)
            emit reviewReady(result.value());
        else
            emit failed(m_current, QString::fromStdString(result.error().message));
        startNext();
    });
}

} // namespace cw
