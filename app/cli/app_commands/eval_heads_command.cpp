// `clausewright-cli eval-heads`: k-fold cross-validation of the fast heads on labelled
// contracts (CUAD JSON Lines): presence P/R/F1 per category, span F1, field accuracy.
#include "app/cli/cli_command.h"
#include "app/heads/heads_evaluation.h"

#include <CLI/CLI.hpp>
#include <QJsonDocument>
#include <algorithm>
#include <cstdio>

namespace {

int runEvalHeads(std::span<char*> args)
{
    CLI::App app { "Cross-validate the clause heads on labelled contracts", "eval-heads" };
    std::string data;
    std::string heads = "fast";
    int folds = 5;
    app.add_option("--data", data, "labelled contracts, JSON Lines (.jsonl or .jsonl.xz)")
        ->required();
    app.add_option("--heads", heads, "which heads: fast (llm needs the engine)")
        ->check(CLI::IsMember({ "fast", "llm" }));
    app.add_option("--folds", folds, "number of folds")->check(CLI::Range(2, 20));
    cw::heads::TrainingOptions options;
    bool fast = false;
    app.add_option("--threads", options.threads, "worker threads (0: one per core)")
        ->check(CLI::Range(0, 256));
    bool noCues = false;
    app.add_flag("--no-cues", noCues,
        "ablation: decide presence from the classifier's scores alone, without cue wordings");
    app.add_flag("--fast", fast,
        "for iterating: half the training epochs (the figures differ a little from a full run)");
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    if (heads == "llm") {
        std::fprintf(
            stderr, "eval-heads: the LLM head is not available in this build; use --heads fast\n");
        return 2;
    }
    auto contracts = cw::heads::readLabelledContracts(QString::fromStdString(data));
    if (!contracts) {
        std::fprintf(stderr, "eval-heads: %s\n", contracts.error().message.c_str());
        return 1;
    }
    if (contracts->size() < folds) {
        std::fprintf(stderr, "eval-heads: %s: %d contracts are too few for %d folds\n",
            data.c_str(), int(contracts->size()), folds);
        return 1;
    }
    options.presenceCues = !noCues;
    if (fast)
        options.epochs = std::max(1, options.epochs / 2);
    const auto result = cw::heads::evaluateFastHeads(*contracts, folds, options,
        [](const QString& line) { std::fprintf(stderr, "%s\n", qPrintable(line)); });
    std::printf("%s\n", qPrintable(result.table()));
    std::printf("%s\n", QJsonDocument(result.toJson()).toJson(QJsonDocument::Compact).constData());
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "eval-heads",
    "cross-validate the clause heads on labelled contracts", runEvalHeads } };

} // namespace
