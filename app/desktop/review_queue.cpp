#include "app/desktop/review_queue.h"

#include "app/desktop/app_settings.h"

#include <qcoro/qcorotask.h>

namespace cw {

ReviewQueue::ReviewQueue(QObject* parent)
    : QObject(parent)
{
    connect(&m_pipeline, &ReviewPipeline::progress, this, &ReviewQueue::progress);
    connect(&m_pipeline, &ReviewPipeline::fastReviewReady, this, &ReviewQueue::fastReviewReady);
    connect(&m_pipeline, &ReviewPipeline::modelQuestions, this, &ReviewQueue::modelQuestions);
    connect(&m_pipeline, &ReviewPipeline::modelNote, this, &ReviewQueue::modelNote);
    connect(&m_pipeline, &ReviewPipeline::modelFindings, this, &ReviewQueue::modelFindings);
    connect(&m_pipeline, &ReviewPipeline::modelBackend, this, &ReviewQueue::modelBackend);
}

ReviewOptions ReviewQueue::effectiveOptions() const
{
    ReviewOptions options = m_options;
    if (m_modelFromSettings && options.modelPath.isEmpty() && !options.remote.isSet()) {
        const ModelSettings model = AppSettings::model();
        options.modelPath = model.modelPath;
        options.modelThreads = model.threads;
        options.modelDevice = model.device;
        options.modelContext = model.contextLength;
        options.modelPrecision = model.precision;
        options.modelGpuMemoryGiB = model.gpuMemoryGiB;
        const RemoteServerSettings remote = AppSettings::remoteServer();
        options.backendOrder = remote.order;
        if (generation::backendsOf(remote.order).contains(generation::Backend::Remote)) {
            options.remote.baseUrl = remote.baseUrl;
            options.remote.model = remote.model;
            // The key is read from the keyring (or its 0600 file) on the review's thread, when
            // the server is asked: the UI thread never waits for the keyring.
            options.remoteKeyFromStore = true;
        }
        if (hasModelBackend(options) && options.heads == QLatin1String("fast"))
            options.heads = QStringLiteral("all");
    }
    return options;
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
    QCoro::connect(
        m_pipeline.review(m_current, effectiveOptions()), this, [this](Result<Review> result) {
            if (result)
                emit reviewReady(result.value());
            else
                emit failed(m_current, QString::fromStdString(result.error().message));
            startNext();
        });
}

} // namespace cw
