// Usage: bench_llm_review [MODEL [CONTRACT [THREADS]]] [--device D] [--precision P]
//                         [--server URL [--api-key-file F]] [--json FILE]
// The desktop review's own LLM pass (runModelReview, the code the app runs) on one contract:
// the questions asked, the tokens prefilled (and how many were the shared prefix), the tokens
// generated, questions/s and tokens/s. In-process (MODEL on --device) it then answers the same
// questions one at a time through the same scheduler (its prefix cache as the batch left it);
// with --server the same requests go, with the review's own concurrency, to an
// OpenAI-compatible server (clausewright-server), as `review --server` sends them. --json
// writes the figures as one JSON object (tests/bench/results keeps them).
#include "app/generation/remote_generator.h"
#include "app/llm_review/llm_session.h"
#include "app/llm_review/model_review.h"
#include "app/llm_review/prompt_rendering.h"
#include "app/llm_review/question_prompt.h"
#include "app/llm_review/session_review.h"
#include "app/review/review_pipeline.h"
#include "engine/generation/generate_and_wait.h"
#include "engine/sampling/grammar_constraint.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstdio>

using namespace cw;

namespace {

int fail(const std::string& message)
{
    std::fprintf(stderr, "bench_llm_review: %s\n", message.c_str());
    return 1;
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("The desktop review's LLM pass, timed"));
    parser.addHelpOption();
    parser.addPositionalArgument(
        QStringLiteral("model"), QStringLiteral("GGUF file or model folder (default: tiny)"));
    parser.addPositionalArgument(QStringLiteral("contract"),
        QStringLiteral("PDF, DOCX or TXT (default: tests/data/llm_review/supply_agreement.txt)"));
    parser.addPositionalArgument(
        QStringLiteral("threads"), QStringLiteral("CPU threads (default 0: every core)"));
    const QCommandLineOption deviceOption(QStringLiteral("device"),
        QStringLiteral("cpu, cuda:N or auto (default cpu)"), QStringLiteral("D"),
        QStringLiteral("cpu"));
    const QCommandLineOption precisionOption(QStringLiteral("precision"),
        QStringLiteral("f32, tf32 or bf16 (default bf16)"), QStringLiteral("P"),
        QStringLiteral("bf16"));
    const QCommandLineOption serverOption(QStringLiteral("server"),
        QStringLiteral("an OpenAI-compatible server's URL: the review's requests go there"),
        QStringLiteral("URL"));
    const QCommandLineOption keyOption(QStringLiteral("api-key-file"),
        QStringLiteral("file holding --server's API key"), QStringLiteral("F"));
    const QCommandLineOption jsonOption(QStringLiteral("json"),
        QStringLiteral("also write the figures to FILE as JSON"), QStringLiteral("FILE"));
    parser.addOptions({ deviceOption, precisionOption, serverOption, keyOption, jsonOption });
    parser.process(app);
    const QStringList args = parser.positionalArguments();
    const QString model
        = args.size() > 0 ? args[0] : QStringLiteral(CW_TEST_DATA_DIR "/golden/models/qwen3_moe_a");
    const QString contract = args.size() > 1
        ? args[1]
        : QStringLiteral(CW_TEST_DATA_DIR "/llm_review/supply_agreement.txt");
    const int threads = args.size() > 2 ? args[2].toInt() : 0;
    const bool remote = parser.isSet(serverOption);

    QElapsedTimer timer;
    timer.start();
    std::shared_ptr<llm::LlmSession> session;
    std::unique_ptr<generation::TextGenerator> generator;
    if (remote) {
        generation::RemoteServer server;
        server.baseUrl = parser.value(serverOption);
        if (parser.isSet(keyOption)) {
            auto key = generation::readApiKeyFile(parser.value(keyOption));
            if (!key)
                return fail(parser.value(keyOption).toStdString() + ": " + key.error().message);
            server.apiKey = *key;
        }
        generator = std::make_unique<generation::RemoteGenerator>(server);
    } else {
        llm::LlmSessionOptions sessionOptions;
        sessionOptions.threads = threads;
        sessionOptions.device = parser.value(deviceOption);
        sessionOptions.precision = parser.value(precisionOption);
        auto opened = llm::LlmSession::open(model, sessionOptions);
        if (!opened)
            return fail(opened.error().message);
        session = *opened;
    }
    const double loadSeconds = double(timer.restart()) / 1000.0;
    ReviewOptions options;
    options.textOnly = contract.endsWith(QLatin1String(".txt"));
    auto fast = ReviewPipeline::runBlocking(contract, options);
    if (!fast) {
        std::fprintf(stderr, "bench_llm_review: %s\n", fast.error().message.c_str());
        return 1;
    }
    auto playbook = loadPlaybook(defaultPlaybookPath());
    if (!playbook) {
        std::fprintf(stderr, "bench_llm_review: %s\n", playbook.error().message.c_str());
        return 1;
    }
    const double fastSeconds = double(timer.restart()) / 1000.0;
    // The questions the LLM head plugin asks, read from its data file.
    llm::ModelReviewOptions reviewOptions;
    auto groups = llm::readCategoryGroups(
        QStringLiteral(CW_SOURCE_DIR "/plugins/llm_review/llm_questions.json"));
    if (!groups) {
        std::fprintf(stderr, "bench_llm_review: %s\n", groups.error().message.c_str());
        return 1;
    }
    reviewOptions.groups = *groups;
    auto result = remote ? llm::runModelReview(
                      *generator, fast->document, fast->clauses, fast->findings, *playbook,
                      [] { return false; }, {}, reviewOptions)
                         : llm::runModelReview(
                             *session, fast->document, fast->clauses, fast->findings, *playbook,
                             [] { return false; }, {}, reviewOptions);
    if (!result)
        return fail(result.error().message);
    const double batchSeconds = result->seconds;
    const int questions = int(result->plan.questions.size());
    const QString modelName = remote ? generator->name() : session->name();
    QJsonObject figures { { QStringLiteral("path"),
                              remote ? QStringLiteral("server") : QStringLiteral("in-process") },
        { QStringLiteral("device"),
            remote ? parser.value(serverOption) : parser.value(deviceOption) },
        { QStringLiteral("model"), modelName }, { QStringLiteral("contract"), contract },
        { QStringLiteral("chars"), double(fast->document.text.size()) },
        { QStringLiteral("load_seconds"), loadSeconds }, { QStringLiteral("questions"), questions },
        { QStringLiteral("passages"), double(result->plan.passages.size()) },
        { QStringLiteral("prompt_tokens"), double(result->promptTokens) },
        { QStringLiteral("shared_prefix_tokens"), double(result->sharedPrefixTokens) },
        { QStringLiteral("generated_tokens"), double(result->generatedTokens) },
        { QStringLiteral("seconds"), batchSeconds },
        { QStringLiteral("warnings"), double(result->warnings.size()) } };
    if (!remote)
        figures.insert(QStringLiteral("precision"), parser.value(precisionOption));
    auto writeJson = [&] {
        if (!parser.isSet(jsonOption))
            return true;
        QFile out(parser.value(jsonOption));
        return out.open(QIODevice::WriteOnly | QIODevice::Truncate)
            && out.write(QJsonDocument(figures).toJson(QJsonDocument::Compact) + '\n') > 0;
    };
    std::printf("model %s (load %.2f s), contract %s: %lld chars, %lld clauses, %lld fast "
                "findings (%.2f s)\n",
        qPrintable(modelName), loadSeconds, qPrintable(contract),
        qlonglong(fast->document.text.size()), qlonglong(fast->clauses.size()),
        qlonglong(fast->findings.size()), fastSeconds);
    std::printf("batched: %d questions over %lld passages; %lld prompt tokens fed (shared prefix "
                "%lld), %lld generated in %.2f s: %.2f questions/s, %.1f generated tokens/s, "
                "%.1f prompt+generated tokens/s\n",
        questions, qlonglong(result->plan.passages.size()), qlonglong(result->promptTokens),
        qlonglong(result->sharedPrefixTokens), qlonglong(result->generatedTokens), batchSeconds,
        questions / batchSeconds, double(result->generatedTokens) / batchSeconds,
        double(result->promptTokens + result->generatedTokens) / batchSeconds);

    if (remote)
        return writeJson() ? 0 : fail(parser.value(jsonOption).toStdString() + ": cannot write");

    // The same questions one by one, each waiting for the one before.
    timer.restart();
    std::int64_t prompt = 0, generated = 0;
    for (const llm::ModelQuestion& q : result->plan.questions) {
        // Rendered and tokenized as the review's own requests are (the messages' text as text).
        engine::ChatOptions chat;
        chat.enableThinking = false;
        auto rendered = session->chatTemplate().renderPrompt(
            llm::questionMessages(fast->document, result->plan, q, *playbook), chat);
        auto gbnf = llm::answerGrammar(q);
        if (!rendered || !gbnf)
            return fail(!rendered ? rendered.error().message : gbnf.error().message);
        auto constraint = sampling::GrammarConstraint::fromGbnf(*gbnf, session->vocabulary());
        if (!constraint)
            return fail(constraint.error().message);
        const auto ids = session->tokenizer().encode(rendered->text, rendered->messageText);
        sampling::SamplingParams params;
        params.temperature = 0.0f;
        params.maxTokens = 1024;
        engine::ScheduledRequest request;
        request.prompt = ids;
        request.params = params;
        request.constraint = std::make_unique<sampling::GrammarConstraint>(std::move(*constraint));
        auto alone = engine::generateAndWait(session->scheduler(), std::move(request));
        if (!alone)
            return fail(alone.error().message);
        prompt += std::int64_t(ids.size());
        generated += std::int64_t(alone->ids.size());
    }
    const double aloneSeconds = double(timer.elapsed()) / 1000.0;
    std::printf("one at a time: %lld prompt tokens, %lld generated in %.2f s: %.2f questions/s, "
                "%.1f generated tokens/s (batched is %.2fx faster)\n",
        qlonglong(prompt), qlonglong(generated), aloneSeconds, questions / aloneSeconds,
        double(generated) / aloneSeconds, aloneSeconds / batchSeconds);
    figures.insert(QStringLiteral("alone"),
        QJsonObject { { QStringLiteral("prompt_tokens"), double(prompt) },
            { QStringLiteral("generated_tokens"), double(generated) },
            { QStringLiteral("seconds"), aloneSeconds } });
    return writeJson() ? 0 : fail(parser.value(jsonOption).toStdString() + ": cannot write");
}
