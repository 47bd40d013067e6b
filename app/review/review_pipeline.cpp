#include "app/review/review_pipeline.h"

#include "app/ingest/document_reader.h"
#include "app/llm_review/llm_session.h"
#include "app/playbook/playbook.h"
#include "app/plugins/plugin_host.h"
#include "app/review/clause_findings.h"
#include "app/review/model_review_stage.h"
#include "app/segment/clause_segmenter.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <optional>
#include <qcoro/qcorofuture.h>

namespace cw {

bool hasModelBackend(const ReviewOptions& options)
{
    const auto backends = generation::backendsOf(options.backendOrder);
    return (!options.modelPath.isEmpty() && backends.contains(generation::Backend::InProcess))
        || (options.remote.isSet() && backends.contains(generation::Backend::Remote));
}

QString reviewStageName(ReviewStage stage)
{
    switch (stage) {
    case ReviewStage::Reading:
        return QStringLiteral("reading");
    case ReviewStage::Segmenting:
        return QStringLiteral("segmenting");
    case ReviewStage::Heads:
        return QStringLiteral("heads");
    case ReviewStage::ModelReview:
        return QStringLiteral("model review");
    case ReviewStage::Playbook:
        return QStringLiteral("playbook");
    case ReviewStage::Done:
        return QStringLiteral("done");
    }
    return {};
}

ReviewPipeline::ReviewPipeline(QObject* parent)
    : QObject(parent)
    , m_cancel(std::make_shared<std::atomic_bool>(false))
    , m_sessions(std::make_shared<llm::LlmSessionCache>())
{
    m_pool.setMaxThreadCount(1);
}

ReviewPipeline::~ReviewPipeline()
{
    // A review still running stops at its next cancel check; m_pool's destructor waits.
    m_cancel->store(true);
}

bool ReviewPipeline::isRunning() const
{
    return m_running.load();
}

void ReviewPipeline::cancel()
{
    m_cancel->store(true);
}

Result<Review> ReviewPipeline::runBlocking(const QString& path, const ReviewOptions& options,
    const std::atomic_bool* cancelFlag, const std::function<void(ReviewStage, int, int)>& progress)
{
    ReviewEvents events;
    events.progress = progress;
    return runBlocking(path, options, cancelFlag, events);
}

Result<Review> ReviewPipeline::runBlocking(const QString& path, const ReviewOptions& options,
    const std::atomic_bool* cancelFlag, const ReviewEvents& events, llm::LlmSessionCache* sessions)
{
    std::function<bool()> cancelled = [cancelFlag] { return cancelFlag && cancelFlag->load(); };
    auto report = [&events](ReviewStage stage, int done, int total) {
        if (events.progress)
            events.progress(stage, done, total);
    };
    if (options.heads != "fast" && options.heads != "llm" && options.heads != "all")
        return makeError(
            "heads must be fast, llm or all, not '" + options.heads.toStdString() + "'");
    if (options.heads == "llm" && !hasModelBackend(options))
        return makeError("the LLM head needs a model: give --model PATH (a GGUF file or a "
                         "Hugging Face folder) or --server URL, or use --heads fast");
    // The playbook first: a bad one fails before any slow work.
    const QString playbookPath
        = options.playbookPath.isEmpty() ? defaultPlaybookPath() : options.playbookPath;
    auto playbook = loadPlaybook(playbookPath);
    if (!playbook)
        return playbook.error();

    Review review;
    review.createdAt = QDateTime::currentDateTimeUtc();
    QElapsedTimer timer;
    timer.start();
    report(ReviewStage::Reading, 0, 0);
    Result<Document> document = Error {};
    if (options.textOnly) {
        document = readText(path);
    } else {
        ReadOptions read;
        read.password = options.password;
        read.progress = [&](int done, int total) {
            report(ReviewStage::Reading, done, total);
            return !cancelled();
        };
        document = readDocument(path, read);
    }
    if (!document)
        return document.error();
    if (cancelled())
        return makeError("cancelled");
    review.document = std::move(document.value());
    review.timingsMs["ingest"] = timer.restart();
    if (review.document.text.trimmed().isEmpty())
        return makeError(
            path.toStdString() + ": no text to review (an image-only PDF needs OCR first)");

    report(ReviewStage::Segmenting, 0, 0);
    review.clauses = segmentClauses(review.document);
    review.timingsMs["segment"] = timer.restart();
    if (cancelled())
        return makeError("cancelled");

    std::optional<PluginHost> ownHost;
    PluginHost& host = options.plugins ? *options.plugins : ownHost.emplace(options.pluginFolders);
    // The model's questions are planned from the fast heads' findings, so they run for
    // heads "llm" too; the llm heads run in the model stage, with the model lent to them.
    const QList<LoadedHead> heads = host.heads(QStringLiteral("fast"));
    for (const QString& error : host.errors())
        review.document.warnings.append("plugin skipped: " + error);
    if (heads.isEmpty())
        return makeError(host.noHeadsMessage().toStdString());
    QJsonArray headList;
    int done = 0;
    for (const LoadedHead& h : heads) {
        report(ReviewStage::Heads, done, int(heads.size()));
        HeadRunContext context;
        context.cancelled = cancelled;
        auto found = runHead(h, review.document, review.clauses, context);
        if (!found) {
            if (cancelled())
                return makeError("cancelled");
            review.document.warnings.append(
                h.metadata.id + ": " + QString::fromStdString(found.error().message));
            continue;
        }
        for (const QString& dropped : found->dropped)
            review.document.warnings.append(dropped);
        for (Finding& f : found->findings) {
            if (f.page == 0)
                f.page = review.document.pageAt(f.start);
            review.findings.append(std::move(f));
        }
        headList.append(QJsonObject { { "id", h.metadata.id }, { "version", h.metadata.version },
            { "kind", headKindName(h.metadata.kind) }, { "origin", h.origin } });
        ++done;
    }
    report(ReviewStage::Heads, done, int(heads.size()));
    review.timingsMs["heads"] = timer.restart();
    if (cancelled())
        return makeError("cancelled");

    // The field extractors' values join the CUAD findings of the same clause; findings of
    // no CUAD category are not reported on their own.
    QList<Finding> fieldFindings;
    for (qsizetype i = review.findings.size() - 1; i >= 0; --i) {
        if (review.findings[i].category == QLatin1String("Fields"))
            fieldFindings.append(review.findings.takeAt(i));
    }
    for (Finding& f : review.findings) {
        for (const Finding& values : fieldFindings) {
            if (values.start <= f.start && values.end >= f.end) {
                for (auto it = values.fields.begin(); it != values.fields.end(); ++it) {
                    if (!f.fields.contains(it.key()))
                        f.fields.insert(it.key(), it.value());
                }
            }
        }
    }
    // The classifier finds a category sentence by sentence: one finding per clause.
    review.findings = mergeClauseFindings(review.findings, review.document.text);
    std::stable_sort(review.findings.begin(), review.findings.end(),
        [](const Finding& a, const Finding& b) { return a.start < b.start; });
    review.settings = QJsonObject { { "heads", options.heads }, { "head_list", headList },
        { "playbook", playbookPath }, { "text_only", options.textOnly } };
    bool modelReviewed = false;
    if (options.heads != "fast" && !hasModelBackend(options)) {
        review.document.warnings.append(
            QStringLiteral("No language model given: this review uses the fast heads only."));
    } else if (options.heads != "fast") {
        const QList<Finding> fastFindings = review.findings;
        if (events.fastReviewReady) {
            Review fast = review;
            applyPlaybook(*playbook, fast);
            events.fastReviewReady(fast);
        }
        std::optional<llm::LlmSessionCache> ownSessions;
        if (!sessions)
            sessions = &ownSessions.emplace();
        const ModelStageOptions stageOptions { options.modelPath, options.heads,
            options.modelThreads, options.modelDevice, options.modelContext, options.remote,
            options.remoteKeyFromStore, options.backendOrder, options.modelPrecision,
            options.modelGpuMemoryGiB };
        const QList<LoadedHead> llmHeads = host.heads(QStringLiteral("llm"));
        Result<void> staged = makeError("no LLM head plugin was found (llm_review); searched "
            + host.searchFolders().join(", ").toStdString());
        if (!llmHeads.isEmpty()) {
            headList.append(QJsonObject { { "id", llmHeads.front().metadata.id },
                { "version", llmHeads.front().metadata.version }, { "kind", "llm" },
                { "origin", llmHeads.front().origin } });
            review.settings.insert("head_list", headList);
            staged = runModelStage(review, llmHeads.front(), fastFindings, *playbook, stageOptions,
                *sessions, cancelled, events);
        }
        if (!staged && options.heads == "llm")
            return staged.error();
        if (!staged)
            review.document.warnings.append(
                QStringLiteral("The language model could not be used (%1); this review uses "
                               "the fast heads only.")
                    .arg(QString::fromStdString(staged.error().message)));
        modelReviewed = staged.ok();
        timer.restart();
    }
    report(ReviewStage::Playbook, 0, 0);
    if (!modelReviewed)
        applyPlaybook(*playbook, review);
    review.timingsMs["playbook"] = timer.restart();
    report(ReviewStage::Done, 1, 1);
    return review;
}

QCoro::Task<Result<Review>> ReviewPipeline::review(QString path, ReviewOptions options)
{
    if (m_running.exchange(true))
        co_return makeError("a review is already running");
    m_cancel = std::make_shared<std::atomic_bool>(false);
    std::shared_ptr<std::atomic_bool> flag = m_cancel;
    QPointer<ReviewPipeline> self(this);
    auto progressToUi = [self](ReviewStage stage, int done, int total) {
        QMetaObject::invokeMethod(
            self.data(),
            [self, stage, done, total] {
                if (self)
                    emit self->progress(stage, done, total);
            },
            Qt::QueuedConnection);
    };
    // The future is made outside the co_await expression: GCC 12 destroys temporaries of a
    // co_await full-expression twice, which here double-released the QPointer in the lambda.
    // Each event is copied into a call queued to this object's thread, in order.
    auto toUi = [self](auto emitter) {
        QMetaObject::invokeMethod(
            self.data(),
            [self, emitter] {
                if (self)
                    emitter(self.data());
            },
            Qt::QueuedConnection);
    };
    ReviewEvents events;
    events.progress = progressToUi;
    events.fastReviewReady = [toUi](const Review& review) {
        toUi([review](ReviewPipeline* p) { emit p->fastReviewReady(review); });
    };
    events.modelQuestions = [toUi](const QList<ModelQuestionInfo>& questions) {
        toUi([questions](ReviewPipeline* p) { emit p->modelQuestions(questions); });
    };
    events.modelNote = [toUi](int questionId, const QString& piece) {
        toUi([questionId, piece](ReviewPipeline* p) { emit p->modelNote(questionId, piece); });
    };
    events.modelBackend = [toUi](const QString& backend, const QString& passedOver) {
        toUi([backend, passedOver](
                 ReviewPipeline* p) { emit p->modelBackend(backend, passedOver); });
    };
    events.modelFindings = [toUi](int questionId, const QList<Finding>& findings) {
        toUi([questionId, findings](
                 ReviewPipeline* p) { emit p->modelFindings(questionId, findings); });
    };
    std::shared_ptr<llm::LlmSessionCache> sessions = m_sessions;
    QFuture<Result<Review>> future
        = QtConcurrent::run(&m_pool, [path, options, flag, events, sessions] {
              return runBlocking(path, options, flag.get(), events, sessions.get());
          });
    Result<Review> result = co_await future;
    if (self) {
        self->m_running.store(false);
        emit self->finished();
    }
    co_return result;
}

} // namespace cw
