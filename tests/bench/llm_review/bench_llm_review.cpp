// Usage: bench_llm_review [MODEL [CONTRACT.txt [THREADS]]]
// Prints, for one contract: the questions asked, the tokens prefilled (and how many were the
// shared prefix), the tokens generated, and questions/s and tokens/s for the batched model
// review, then the same questions answered one at a time through the same scheduler (its
// prefix cache as the batch left it).
#include "app/llm_review/llm_session.h"
#include "app/llm_review/prompt_rendering.h"
#include "app/llm_review/session_review.h"
#include "app/review/review_pipeline.h"
#include "engine/generation/generate_and_wait.h"
#include "engine/sampling/grammar_constraint.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <cstdio>

using namespace cw;

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    const QString model
        = args.size() > 1 ? args[1] : QStringLiteral(CW_TEST_DATA_DIR "/golden/models/qwen3_moe_a");
    const QString contract = args.size() > 2
        ? args[2]
        : QStringLiteral(CW_TEST_DATA_DIR "/llm_review/supply_agreement.txt");
    const int threads = args.size() > 3 ? args[3].toInt() : 0;

    QElapsedTimer timer;
    timer.start();
    auto session = llm::LlmSession::open(model, { threads });
    if (!session) {
        std::fprintf(stderr, "bench_llm_review: %s\n", session.error().message.c_str());
        return 1;
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
    auto result = llm::runModelReview(
        **session, fast->document, fast->clauses, fast->findings, *playbook, [] { return false; },
        {}, reviewOptions);
    if (!result) {
        std::fprintf(stderr, "bench_llm_review: %s\n", result.error().message.c_str());
        return 1;
    }
    const double batchSeconds = result->seconds;
    const int questions = int(result->plan.questions.size());
    std::printf("model %s (load %.2f s), contract %s: %lld chars, %lld clauses, %lld fast "
                "findings (%.2f s)\n",
        qPrintable((*session)->name()), loadSeconds, qPrintable(contract),
        qlonglong(fast->document.text.size()), qlonglong(fast->clauses.size()),
        qlonglong(fast->findings.size()), fastSeconds);
    std::printf("batched: %d questions over %lld passages; %lld prompt tokens fed (shared prefix "
                "%lld), %lld generated in %.2f s: %.2f questions/s, %.1f generated tokens/s, "
                "%.1f prompt+generated tokens/s\n",
        questions, qlonglong(result->plan.passages.size()), qlonglong(result->promptTokens),
        qlonglong(result->sharedPrefixTokens), qlonglong(result->generatedTokens), batchSeconds,
        questions / batchSeconds, double(result->generatedTokens) / batchSeconds,
        double(result->promptTokens + result->generatedTokens) / batchSeconds);

    // The same questions one by one, each waiting for the one before.
    timer.restart();
    std::int64_t prompt = 0, generated = 0;
    for (const llm::ModelQuestion& q : result->plan.questions) {
        auto text = llm::questionPrompt(
            (*session)->chatTemplate(), fast->document, result->plan, q, *playbook);
        auto gbnf = llm::answerGrammar(q);
        if (!text || !gbnf)
            return 1;
        auto constraint = sampling::GrammarConstraint::fromGbnf(*gbnf, (*session)->vocabulary());
        if (!constraint)
            return 1;
        const auto ids = (*session)->tokenizer().encode(*text);
        sampling::SamplingParams params;
        params.temperature = 0.0f;
        params.maxTokens = 1024;
        engine::ScheduledRequest request;
        request.prompt = ids;
        request.params = params;
        request.constraint = std::make_unique<sampling::GrammarConstraint>(std::move(*constraint));
        auto alone = engine::generateAndWait((*session)->scheduler(), std::move(request));
        if (!alone) {
            std::fprintf(stderr, "bench_llm_review: %s\n", alone.error().message.c_str());
            return 1;
        }
        prompt += std::int64_t(ids.size());
        generated += std::int64_t(alone->ids.size());
    }
    const double aloneSeconds = double(timer.elapsed()) / 1000.0;
    std::printf("one at a time: %lld prompt tokens, %lld generated in %.2f s: %.2f questions/s, "
                "%.1f generated tokens/s (batched is %.2fx faster)\n",
        qlonglong(prompt), qlonglong(generated), aloneSeconds, questions / aloneSeconds,
        double(generated) / aloneSeconds, aloneSeconds / batchSeconds);
    return 0;
}
