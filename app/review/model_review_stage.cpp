#include "app/review/model_review_stage.h"

#include "app/desktop/remote_key_store.h"
#include "app/generation/local_generator.h"
#include "app/generation/remote_generator.h"
#include "app/llm_review/llm_session.h"
#include "app/llm_review/prompt_rendering.h"
#include "app/plugins/llm_head.h"
#include "app/plugins/plugin_host.h"
#include "app/review/clause_findings.h"
#include "app/review/model_run.h"
#include "app/review/review_pipeline.h"
#include "app/review/review_summary.h"

#include <QElapsedTimer>
#include <QJsonObject>
#include <algorithm>

namespace cw {

void applyPlaybookKeepingModelRisk(const Playbook& playbook, Review& review)
{
    QList<QPair<Risk, QString>> model;
    for (const Finding& f : review.findings)
        model.append({ f.risk, f.rationale });
    applyPlaybook(playbook, review);
    ReviewSummary& s = review.summary;
    s.high = s.medium = s.low = 0;
    for (qsizetype i = 0; i < review.findings.size(); ++i) {
        Finding& f = review.findings[i];
        if (f.source == QLatin1String("llm") && model[i].first != Risk::None) {
            f.risk = model[i].first;
            f.rationale = model[i].second;
        }
        s.high += f.risk == Risk::High;
        s.medium += f.risk == Risk::Medium;
        s.low += f.risk == Risk::Low;
    }
    s.text = summarySentence(review, s);
}

namespace {

// The backend `which` of the options, opened: the in-process model loaded (or reused), or
// the remote server's client (which connects when it first asks).
Result<std::unique_ptr<generation::TextGenerator>> openBackend(
    generation::Backend which, const ModelStageOptions& options, llm::LlmSessionCache& sessions)
{
    if (which == generation::Backend::Remote) {
        if (!options.remote.isSet())
            return makeError("no remote server is set");
        generation::RemoteServer server = options.remote;
        if (options.remoteKeyFromStore) {
            auto key = RemoteKeyStore::read();
            if (!key)
                return makeError("the remote server's API key: " + key.error().message);
            server.apiKey = *key;
        }
        return std::unique_ptr<generation::TextGenerator>(
            std::make_unique<generation::RemoteGenerator>(server));
    }
    if (options.modelPath.isEmpty())
        return makeError("no local model is set");
    llm::LlmSessionOptions sessionOptions;
    sessionOptions.threads = options.threads;
    sessionOptions.device = options.device;
    sessionOptions.contextLength = options.contextLength;
    sessionOptions.precision = options.precision;
    sessionOptions.gpuMemoryGiB = options.gpuMemoryGiB;
    auto session = sessions.get(options.modelPath, sessionOptions);
    if (!session)
        return session.error();
    return std::unique_ptr<generation::TextGenerator>(
        std::make_unique<generation::LocalGenerator>(*session));
}

QString describe(const generation::TextGenerator& generator)
{
    return generator.kindName() + QStringLiteral(": ") + generator.name();
}

} // namespace

Result<void> runModelStage(Review& review, const LoadedHead& llmHead,
    const QList<Finding>& fastFindings, const Playbook& playbook, const ModelStageOptions& options,
    llm::LlmSessionCache& sessions, const std::function<bool()>& cancelled,
    const ReviewEvents& events)
{
    QElapsedTimer timer;
    timer.start();
    auto report = [&events](int done, int total) {
        if (events.progress)
            events.progress(ReviewStage::ModelReview, done, total);
    };
    report(0, 0);
    LlmHeadInput input;
    input.fastFindings = fastFindings;
    input.playbook = &playbook;
    input.mergeWithFast = options.heads != QLatin1String("llm");
    input.grammarForSchema = llm::answerGrammarForSchema;
    input.planned = events.modelQuestions;
    input.notePiece = events.modelNote;
    input.answered = events.modelFindings;
    HeadRunContext context;
    context.cancelled = cancelled;
    context.progress = report;
    context.llm = &input;
    // Each backend in the order until one answers; what was passed over, and why, is kept for
    // the review's warnings and the status bar.
    QStringList passedOver;
    std::unique_ptr<generation::TextGenerator> generator;
    LlmHeadReport headReport;
    Result<HeadRunResult> result = Error { "no language model backend is set" };
    for (generation::Backend which : generation::backendsOf(options.order)) {
        const QString label = which == generation::Backend::Remote ? QStringLiteral("remote server")
                                                                   : QStringLiteral("local model");
        auto opened = openBackend(which, options, sessions);
        if (!opened) {
            result = opened.error();
            passedOver.append(label + ": " + QString::fromStdString(opened.error().message));
            continue;
        }
        generator = std::move(*opened);
        review.timingsMs["model_load"] = timer.restart();
        if (events.modelBackend)
            events.modelBackend(describe(*generator), passedOver.join("; "));
        input.generator = generator.get();
        headReport = {};
        input.report = &headReport;
        result = runHead(llmHead, review.document, review.clauses, context);
        if (result || cancelled())
            break;
        passedOver.append(label + ": " + QString::fromStdString(result.error().message));
    }
    if (!result)
        return generation::backendsOf(options.order).size() == 1
            ? result.error()
            : makeError(passedOver.join("; ").toStdString());
    if (!passedOver.isEmpty())
        review.document.warnings.append(QStringLiteral(
            "The model's questions were answered by the %1 backend; passed over: %2.")
                                            .arg(generator->kindName(), passedOver.join("; ")));

    for (const QString& w : headReport.warnings)
        review.document.warnings.append(w);
    for (const QString& dropped : result->dropped)
        review.document.warnings.append(dropped);
    if (headReport.cancelled)
        review.document.warnings.append(
            QStringLiteral("Model review cancelled after %1 of %2 questions; the rest of this "
                           "review comes from the fast heads.")
                .arg(headReport.answered)
                .arg(headReport.questions));
    // Two model findings in one clause the fast heads missed are both added by the merge.
    review.findings = mergeClauseFindings(result->findings, review.document.text);
    std::stable_sort(review.findings.begin(), review.findings.end(),
        [](const Finding& a, const Finding& b) { return a.start < b.start; });
    applyPlaybookKeepingModelRisk(playbook, review);
    review.modelName = generator->name();
    review.settings.insert("model", generator->location());
    review.settings.insert("model_backend", generator->kindName());
    review.settings.insert("model_review",
        QJsonObject { { "questions", headReport.questions }, { "answered", headReport.answered },
            { "passages", headReport.passages },
            { "prompt_tokens", qint64(headReport.promptTokens) },
            { "shared_prefix_tokens", qint64(headReport.sharedPrefixTokens) },
            { "generated_tokens", qint64(headReport.generatedTokens) },
            { "cancelled", headReport.cancelled }, { "head", llmHead.metadata.id },
            { "head_origin", llmHead.origin } });
    review.timingsMs["llm"] = timer.elapsed();
    ModelRun run;
    run.device = generator->device();
    run.seconds = double(review.timingsMs["llm"]) / 1000.0;
    run.generatedTokens = headReport.generatedTokens;
    recordModelRun(review, run);
    return {};
}

} // namespace cw
