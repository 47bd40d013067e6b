// `clausewright-cli eval-heads`: k-fold cross-validation of the clause heads on labelled
// contracts (CUAD JSON Lines): presence P/R/F1 per category, span F1, field accuracy. With
// --heads llm|all the language model reviews each held-out contract after the fast heads of
// its fold, as `review --heads llm|all` does.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "app/generation/local_generator.h"
#include "app/heads/heads_evaluation.h"
#include "app/ingest/document_reader.h"
#include "app/llm_review/llm_session.h"
#include "app/llm_review/prompt_rendering.h"
#include "app/playbook/playbook.h"
#include "app/plugins/llm_head.h"
#include "app/plugins/plugin_host.h"
#include "app/segment/clause_segmenter.h"

#include <CLI/CLI.hpp>
#include <QCoreApplication>
#include <QJsonDocument>
#include <algorithm>
#include <cstdio>
#include <memory>

namespace {

// The clause of `clauses` (in text order) that holds `offset`, or -1.
int clauseAt(const QList<cw::Clause>& clauses, qsizetype offset)
{
    for (qsizetype i = 0; i < clauses.size(); ++i) {
        if (clauses[i].start <= offset && offset < clauses[i].end)
            return int(i);
    }
    return -1;
}

// The model's pass over one held-out contract, on the text alone (offsets are the labels'):
// the LLM head plugin, with the model lent to it as a review lends it.
cw::Result<QList<cw::Finding>> modelFindings(const cw::LoadedHead& llmHead,
    cw::generation::TextGenerator& generator, const cw::Playbook& playbook, bool mergeWithFast,
    const cw::heads::LabelledContract& contract, QList<cw::Finding> fast)
{
    const cw::Document document = cw::documentFromText(contract.text, contract.id);
    const QList<cw::Clause> clauses = cw::segmentClauses(document);
    // The evaluation's fast findings point at its own candidates; the planner reads clauses.
    for (cw::Finding& f : fast)
        f.clauseIndex = clauseAt(clauses, f.start);
    cw::LlmHeadInput input;
    input.generator = &generator;
    input.fastFindings = fast;
    input.playbook = &playbook;
    input.mergeWithFast = mergeWithFast;
    input.grammarForSchema = cw::llm::answerGrammarForSchema;
    cw::HeadRunContext context;
    context.llm = &input;
    auto run = cw::runHead(llmHead, document, clauses, context);
    if (!run)
        return run.error();
    return run->findings;
}

int runEvalHeads(std::span<char*> args)
{
    CLI::App app { "Cross-validate the clause heads on labelled contracts", "eval-heads" };
    cw::cli::showDefaultsInHelp(app);
    std::vector<std::string> data;
    std::string heads = "fast";
    int folds = 5;
    app.add_option("--data", data,
           "labelled contracts, JSON Lines (.jsonl or .jsonl.xz); several files are joined")
        ->required();
    std::string modelPath, device = "cpu";
    int limit = 0;
    app.add_option("--heads", heads, "which heads: fast, llm (the model's findings) or all")
        ->check(CLI::IsMember({ "fast", "llm", "all" }));
    app.add_option("--model", modelPath, "GGUF file or Hugging Face folder, for --heads llm|all");
    app.add_option("--device", device, "where the model runs: cpu, cuda, cuda:N or auto");
    double gpuMemory = 0.0;
    cw::cli::addGpuMemoryOption(app, gpuMemory);
    app.add_option("--limit", limit, "score only the first N contracts (the model is slow)")
        ->check(CLI::Range(0, 1000000));
    app.add_option("--folds", folds, "number of folds")->check(CLI::Range(2, 20));
    std::string classifier;
    app.add_option("--classifier", classifier,
        "score this trained classifier file (cuad_classifier.cwm) on every contract as it is, "
        "without cross-validation or training: the figure on contracts it never saw");
    cw::heads::TrainingOptions options;
    bool fast = false;
    app.add_option("--threads", options.threads, "worker threads (0: one per core)")
        ->check(CLI::Range(0, 256));
    bool noCues = false;
    app.add_flag("--no-cues", noCues,
        "ablation: decide presence from the classifier's scores alone, without cue wordings");
    app.add_option("--seed", options.seed,
        "order in which training sees the examples (default 17); the macro-F1 moves with it "
        "(0.786 to 0.792 over seeds 17-20 on the 298 contracts), so judge a change on several");
    app.add_flag("--fast", fast,
        "for iterating: half the training epochs (the figures differ a little from a full run)");
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    if (heads != "fast" && modelPath.empty()) {
        std::fprintf(stderr, "eval-heads: --heads %s needs --model PATH\n", heads.c_str());
        return 2;
    }
    auto contracts = cw::heads::readLabelledContracts(data);
    if (!contracts) {
        std::fprintf(stderr, "eval-heads: %s\n", contracts.error().message.c_str());
        return 1;
    }
    if (classifier.empty() && contracts->size() < folds) {
        std::fprintf(stderr, "eval-heads: %s: %d contracts are too few for %d folds\n",
            data.front().c_str(), int(contracts->size()), folds);
        return 1;
    }
    options.presenceCues = !noCues;
    if (fast)
        options.epochs = std::max(1, options.epochs / 2);
    const auto log = [](const QString& line) { std::fprintf(stderr, "%s\n", qPrintable(line)); };
    cw::heads::FindingsRefiner refine;
    std::unique_ptr<cw::generation::LocalGenerator> generator;
    cw::Playbook playbook;
    std::unique_ptr<QCoreApplication> qtApp; // the plugin host finds plugins beside the program
    int qtArgc = 1;
    char qtName[] = "clausewright-cli";
    char* qtArgv[] = { qtName, nullptr };
    cw::LoadedHead llmHead;
    if (heads != "fast") {
        if (!QCoreApplication::instance())
            qtApp = std::make_unique<QCoreApplication>(qtArgc, qtArgv);
        cw::PluginHost host;
        const auto llmHeads = host.heads(QStringLiteral("llm"));
        if (llmHeads.isEmpty()) {
            std::fprintf(stderr,
                "eval-heads: no LLM head plugin (kind llm) was found; searched %s\n",
                qPrintable(host.searchFolders().join(", ")));
            return 1;
        }
        llmHead = llmHeads.front();
        cw::llm::LlmSessionOptions sessionOptions;
        sessionOptions.threads = options.threads;
        sessionOptions.device = QString::fromStdString(device);
        sessionOptions.gpuMemoryGiB = gpuMemory;
        auto opened = cw::llm::LlmSession::open(QString::fromStdString(modelPath), sessionOptions);
        if (!opened) {
            std::fprintf(stderr, "eval-heads: %s\n", opened.error().message.c_str());
            return 1;
        }
        generator = std::make_unique<cw::generation::LocalGenerator>(*opened);
        auto loaded = cw::loadPlaybook(cw::defaultPlaybookPath());
        if (!loaded) {
            std::fprintf(stderr, "eval-heads: %s\n", loaded.error().message.c_str());
            return 1;
        }
        playbook = *loaded;
        const bool merge = heads == "all";
        // merge by value: refine runs after this block, where merge is out of scope.
        refine = [&, merge](
                     const cw::heads::LabelledContract& contract, const QList<cw::Finding>& fast) {
            log(QStringLiteral("model review of %1").arg(contract.id));
            return modelFindings(llmHead, *generator, playbook, merge, contract, fast);
        };
    }
    cw::Result<cw::heads::EvaluationResult> result = cw::Error {};
    if (!classifier.empty()) {
        auto model = cw::heads::ClauseModel::load(QString::fromStdString(classifier));
        if (!model) {
            std::fprintf(stderr, "eval-heads: %s\n", model.error().message.c_str());
            return 1;
        }
        result = cw::heads::evaluateTrainedModel(
            *contracts, *model, options.threads, log, refine, limit);
    } else {
        result = cw::heads::evaluateHeads(*contracts, folds, options, log, refine, limit);
    }
    if (!result) {
        std::fprintf(stderr, "eval-heads: %s\n", result.error().message.c_str());
        return 1;
    }
    std::printf("%s\n", qPrintable(result->table()));
    std::printf("%s\n", QJsonDocument(result->toJson()).toJson(QJsonDocument::Compact).constData());
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "eval-heads",
    "cross-validate the clause heads (fast, or with the model) on labelled contracts",
    runEvalHeads } };

} // namespace
