#pragma once

#include "app/review/review_pipeline.h"

#include <QObject>
#include <QQueue>

namespace cw {

// The contracts the user dropped, reviewed one after another: dropping a second contract
// while one is running queues it. The GUI shows progress and results from its signals.
class ReviewQueue : public QObject {
    Q_OBJECT
public:
    explicit ReviewQueue(QObject* parent = nullptr);
    ~ReviewQueue() override;

    void setOptions(const ReviewOptions& options) { m_options = options; }
    const ReviewOptions& options() const { return m_options; }

    void enqueue(const QString& path);
    int pending() const { return int(m_queue.size()); }
    bool isBusy() const { return m_busy; }
    QString currentPath() const { return m_current; }

public slots:
    void cancelCurrent(); // the running review stops within a second; the queue goes on
    void cancelAll();

signals:
    void started(const QString& path);
    void progress(cw::ReviewStage stage, int done, int total);
    void reviewReady(const cw::Review& review);
    void failed(const QString& path, const QString& message);
    void queueChanged(int pending);
    void idle();

private:
    void startNext();

    ReviewPipeline m_pipeline;
    ReviewOptions m_options;
    QQueue<QString> m_queue;
    QString m_current;
    bool m_busy = false;
};

} // namespace cw
