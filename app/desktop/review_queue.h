#pragma once

#include "app/review/review_pipeline.h"

#include <QObject>
#include <QQueue>

namespace cw {

// The contracts the user dropped, reviewed one after another: dropping a second contract
// while one is running queues it. The GUI shows progress and results from its signals,
// and, when a model is configured, the fast review first and the model's notes and
// findings as they are written.
//
// Unless told otherwise (setModelFromSettings(false)) a review whose options name no model
// uses the model chosen in the settings, with heads "all"; with no model configured it is
// a fast review (the main window's status line says so).
class ReviewQueue : public QObject {
    Q_OBJECT
public:
    explicit ReviewQueue(QObject* parent = nullptr);
    ~ReviewQueue() override;

    void setOptions(const ReviewOptions& options) { m_options = options; }
    const ReviewOptions& options() const { return m_options; }
    void setModelFromSettings(bool follow) { m_modelFromSettings = follow; }
    // The options the next review runs with: options() plus the settings' model.
    ReviewOptions effectiveOptions() const;

    void enqueue(const QString& path);
    int pending() const { return int(m_queue.size()); }
    bool isBusy() const { return m_busy; }
    QString currentPath() const { return m_current; }
    // The models the reviews keep loaded (shared with the code panel).
    const std::shared_ptr<llm::LlmSessionCache>& sessions() const { return m_pipeline.sessions(); }

public slots:
    void cancelCurrent(); // the running review stops within a second; the queue goes on
    void cancelAll();

signals:
    void started(const QString& path);
    void progress(cw::ReviewStage stage, int done, int total);
    void fastReviewReady(const cw::Review& review);
    void modelQuestions(const QList<cw::ModelQuestionInfo>& questions);
    void modelNote(int questionId, const QString& piece);
    void modelFindings(int questionId, const QList<cw::Finding>& findings);
    void modelBackend(const QString& backend, const QString& passedOver);
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
    bool m_modelFromSettings = true;
};

} // namespace cw
