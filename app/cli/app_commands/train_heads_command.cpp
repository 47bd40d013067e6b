// `clausewright-cli train-heads`: trains the fast clause classifier on labelled contracts
// and writes the model file the cuad_classifier plugin loads.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "app/heads/clause_trainer.h"

#include <CLI/CLI.hpp>
#include <QDir>
#include <QFileInfo>
#include <QSet>
#include <cstdio>
#include <numeric>

namespace {

int runTrainHeads(std::span<char*> args)
{
    CLI::App app { "Train the fast clause classifier", "train-heads" };
    cw::cli::showDefaultsInHelp(app);
    std::vector<std::string> data;
    std::string out;
    std::string exclude;
    app.add_option("--data", data,
           "labelled contracts, JSON Lines (.jsonl or .jsonl.xz); several files are joined")
        ->required();
    app.add_option("--out", out, "folder to write cuad_classifier.cwm into")->required();
    app.add_option(
        "--exclude", exclude, "JSON Lines file of contracts to leave out (held out for tests)");
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    auto contracts = cw::heads::readLabelledContracts(data);
    if (!contracts) {
        std::fprintf(stderr, "train-heads: %s\n", contracts.error().message.c_str());
        return 1;
    }
    if (!exclude.empty()) {
        auto held = cw::heads::readLabelledContracts(QString::fromStdString(exclude));
        if (!held) {
            std::fprintf(stderr, "train-heads: %s\n", held.error().message.c_str());
            return 1;
        }
        QSet<QString> ids;
        for (const auto& c : *held)
            ids.insert(c.id);
        contracts->removeIf(
            [&ids](const cw::heads::LabelledContract& c) { return ids.contains(c.id); });
        std::fprintf(stderr, "left out %d contracts, training on %d\n", int(ids.size()),
            int(contracts->size()));
    }
    const QString folder = QString::fromStdString(out);
    if (!QDir().mkpath(folder)) {
        std::fprintf(stderr, "train-heads: %s: cannot create the folder\n", out.c_str());
        return 1;
    }
    const cw::heads::TrainingOptions options;
    const std::vector<cw::heads::PreparedContract> prepared
        = cw::heads::prepareContracts(*contracts, options.hashBits);
    std::vector<int> all(prepared.size());
    std::iota(all.begin(), all.end(), 0);
    const auto model = cw::heads::trainClauseModel(prepared, all, options,
        [](const QString& line) { std::fprintf(stderr, "%s\n", qPrintable(line)); });
    const QString path = QDir(folder).filePath("cuad_classifier.cwm");
    if (auto saved = model.save(path); !saved) {
        std::fprintf(stderr, "train-heads: %s\n", saved.error().message.c_str());
        return 1;
    }
    std::printf("wrote %s (%lld bytes, %d categories, %d contracts)\n", qPrintable(path),
        QFileInfo(path).size(), int(model.categories().size()), int(contracts->size()));
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "train-heads",
    "train the fast clause classifier on labelled contracts", runTrainHeads } };

} // namespace
