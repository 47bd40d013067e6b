#pragma once

#include "app/generation/backend_order.h"
#include "app/generation/remote_server.h"
#include "app/review/review_events.h"
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

namespace llm {
class LlmSessionCache;
}
class PluginHost;

// What to run and how.
struct ReviewOptions {
    QString playbookPath; // empty: the default playbook (resources/playbooks/default.yaml)
    QString heads = QStringLiteral("fast"); // "fast", "llm" or "all"
    QString modelPath; // GGUF file or Hugging Face folder, for llm heads
    int modelThreads = 0; // CPU threads for the model; 0: every core
    QString modelDevice = QStringLiteral("cpu"); // cpu, cuda:N or auto (engine::ModelOptions)
    qint64 modelContext = 0; // tokens per sequence; 0: the model's (capped on a GPU)
    QString modelPrecision
        = QStringLiteral("bf16"); // f32, tf32 or bf16 (engine/runtime/precision.h)
    double modelGpuMemoryGiB = 0.0; // engine::ModelOptions::gpuMemoryGiB (0: the free memory)
    // An OpenAI-compatible server for llm heads, and the order the two are tried in.
    generation::RemoteServer remote;
    bool remoteKeyFromStore = false; // remote.apiKey is read from RemoteKeyStore when needed
    generation::BackendOrder backendOrder = generation::BackendOrder::LocalOnly;
    bool textOnly = false; // read the file as plain text, offsets refer to its characters
    QStringList pluginFolders; // extra folders to load head plugins from (tests)
    QString password; // of an encrypted PDF; empty: the one given in this session, if any
    // Heads already loaded, shared by many reviews (a folder review); null: each review loads
    // its own from pluginFolders. Call its heads() once before sharing it between threads.
    std::shared_ptr<PluginHost> plugins;
};

// The stages a review goes through, in order; progress reports which one is running.
enum class ReviewStage { Reading, Segmenting, Heads, ModelReview, Playbook, Done };

QString reviewStageName(ReviewStage stage); // "reading", "segmenting", "heads", ...

// A local model path or a remote server is set, in a backend the order tries.
bool hasModelBackend(const ReviewOptions& options);

// Runs a review off the calling thread: ingest -> segment -> heads -> model review (heads
// "llm" or "all" with a model) -> playbook. Progress and the model's streaming notes arrive
// through signals (queued to the pipeline's thread); cancel() makes a running review finish
// with the error "cancelled" within a second, except during the model review, which stops
// and keeps what was answered. A loaded model stays loaded for the next review with the
// same model path. One review at a time per pipeline object; start another after the
// previous finished.
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
    // The same with every event; `sessions` keeps models loaded between calls (null: the
    // model is loaded for this review only). Heads "llm" without a model path is an error;
    // heads "all" without one, or with a model that fails to load, gives the fast review
    // and a warning saying so.
    static Result<Review> runBlocking(const QString& path, const ReviewOptions& options,
        const std::atomic_bool* cancelFlag, const ReviewEvents& events,
        llm::LlmSessionCache* sessions = nullptr);

    bool isRunning() const;

    // The loaded models this pipeline's reviews share; the code panel shares them too, so
    // one model is loaded once for both.
    const std::shared_ptr<llm::LlmSessionCache>& sessions() const { return m_sessions; }

public slots:
    void cancel();

signals:
    // stage, done, total (done/total count pages, clauses or questions; 0/0 when unknown).
    void progress(cw::ReviewStage stage, int done, int total);
    // The fast heads' review, shown while the model works on it.
    void fastReviewReady(const cw::Review& review);
    void modelQuestions(const QList<cw::ModelQuestionInfo>& questions);
    // A piece of the note the model is writing for a question.
    void modelNote(int questionId, const QString& piece);
    // A question was answered: its findings (source "llm"), before they are merged.
    void modelFindings(int questionId, const QList<cw::Finding>& findings);
    // The backend answering the model's questions, and what the fallback order passed over.
    void modelBackend(const QString& backend, const QString& passedOver);
    void finished();

private:
    std::shared_ptr<std::atomic_bool> m_cancel;
    std::atomic_bool m_running { false };
    std::shared_ptr<llm::LlmSessionCache> m_sessions;
    // Its own worker: a review never waits behind unrelated work on the global pool, and
    // the destructor waits for the review in flight (cancelled first).
    QThreadPool m_pool;
};

} // namespace cw
