#pragma once

#include "app/review/review_types.h"
#include "engine/common/result.h"

#include <QObject>
#include <QString>
#include <QStringList>
#include <QThreadPool>
#include <QtGlobal>
#include <atomic>
#include <functional>
#include <memory>
#include <qcoro/qcorotask.h>

namespace cw {

// What to run and how.
struct ReviewOptions {
    QString playbookPath; // empty: the default playbook (resources/playbooks/default.yaml)
    QString heads = QStringLiteral("fast"); // "fast", "llm" or "all"
    QString modelPath; // GGUF file or Hugging Face folder, for llm heads
    bool textOnly = false; // read the file as plain text, offsets refer to its characters
    QStringList pluginFolders; // extra folders to load head plugins from (tests)
};

// The stages a review goes through, in order; progress reports which one is running.
enum class ReviewStage { Reading, Segmenting, Heads, ModelReview, Playbook, Done };

QString reviewStageName(ReviewStage stage); // "reading", "segmenting", "heads", ...

// Runs a review off the calling thread: ingest -> segment -> heads -> playbook. Progress
// arrives through `progress` (queued to the pipeline's thread); cancel() makes a running
// review finish with the error "cancelled" within a second. One review at a time per
// pipeline object; start another after the previous finished.
class ReviewPipeline : public QObject {
    Q_OBJECT
public:
    explicit ReviewPipeline(QObject* parent = nullptr);
    ~ReviewPipeline() override;

    // The review of `path`, computed on the pipeline's own worker thread. Errors name the file
    // (unreadable, corrupt, no text layer, bad playbook) or say "cancelled".
    QCoro::Task<Result<Review>> review(QString path, ReviewOptions options);

    // The same work on the calling thread (CLI, tests); `progress` may be empty.
    static Result<Review> runBlocking(const QString& path, const ReviewOptions& options,
        const std::atomic_bool* cancelFlag = nullptr,
        const std::function<void(ReviewStage, int, int)>& progress = {});

    bool isRunning() const;

public slots:
    void cancel();

signals:
    // stage, done, total (done/total count pages, clauses or questions; 0/0 when unknown).
    void progress(cw::ReviewStage stage, int done, int total);
    void finished();

private:
    std::shared_ptr<std::atomic_bool> m_cancel;
    std::atomic_bool m_running { false };
    // Its own worker: a review never waits behind unrelated work on the global pool, and
    // the destructor waits for the review in flight (cancelled first).
    QThreadPool m_pool;
};

} // namespace cw
