// `clausewright-cli review-folder DIR --out TABLE.xlsx|.csv`: every PDF, DOCX and text contract
// under DIR reviewed with the fast heads and the playbook, each saved to the history, and one
// table of them all: a row per contract, a column group per category (present, excerpt, risk,
// page); the XLSX has a summary sheet too. Progress and time left go to standard error; Ctrl-C
// stops cleanly (what was reviewed stays in the history) and a second run resumes from the
// history by content hash.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "app/folder_review/folder_review.h"
#include "app/folder_review/review_table.h"
#include "app/history/history_database.h"

#include <CLI/CLI.hpp>
#include <QCoreApplication>
#include <QFileInfo>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <unistd.h>

namespace {

std::atomic_bool g_cancel { false };
static_assert(std::atomic_bool::is_always_lock_free);

extern "C" void onInterrupt(int)
{
    g_cancel.store(true);
    std::signal(SIGINT, SIG_DFL); // a second Ctrl-C ends the process at once
}

QString clock(qint64 ms)
{
    const qint64 s = (ms + 500) / 1000;
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

int runReviewFolder(std::span<char*> args)
{
    CLI::App app { "Review every contract in a folder into one table", "review-folder" };
    cw::cli::showDefaultsInHelp(app);
    std::string folder, out, playbook, db;
    int jobs = 0;
    std::vector<std::string> pluginFolders;
    app.add_option("DIR", folder, "folder of contracts: *.pdf, *.docx, *.txt, subfolders included")
        ->required();
    app.add_option("--out", out,
           "the table: .xlsx (a Contracts sheet and a Summary sheet) or .csv (the contracts "
           "table only)")
        ->required();
    app.add_option("--playbook", playbook, "playbook YAML/JSON (default: the bundled one)");
    app.add_option("--db", db, "history database (default: the GUI's, under AppDataLocation)");
    app.add_option("--jobs", jobs, "contracts reviewed at once (0: one per core)")
        ->check(CLI::Range(0, 256));
    app.add_option(
        "--plugins", pluginFolders, "a folder of clause-head plugins to load first (repeatable)");
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    const QString outPath = QString::fromStdString(out);
    const QString suffix = QFileInfo(outPath).suffix().toLower();
    if (suffix != "xlsx" && suffix != "csv") {
        std::fprintf(stderr, "review-folder: --out %s: the table must be a .xlsx or a .csv file\n",
            out.c_str());
        return 2;
    }
    int argc = 1;
    char* argv[] = { args[0], nullptr };
    QCoreApplication qtApp(argc, argv);
    QCoreApplication::setApplicationName("clausewright");

    cw::FolderReviewOptions options;
    options.review.heads = QStringLiteral("fast");
    options.review.playbookPath = QString::fromStdString(playbook);
    for (const std::string& f : pluginFolders)
        options.review.pluginFolders.append(QString::fromStdString(f));
    options.historyPath
        = db.empty() ? cw::HistoryDatabase::defaultPath() : QString::fromStdString(db);
    options.jobs = jobs;

    const bool terminal = isatty(fileno(stderr));
    qint64 lastPrinted = -1000000;
    auto progress = [&](const cw::FolderReviewProgress& p) {
        const bool last = p.done == p.total;
        if (!terminal && !last && p.elapsedMs - lastPrinted < 2000)
            return;
        lastPrinted = p.elapsedMs;
        const QString left = p.remainingMs
            ? QStringLiteral(", about %1 left").arg(clock(*p.remainingMs))
            : QString();
        std::fprintf(stderr,
            "%sreview-folder: %d/%d contracts (%d from the history, %d failed), %s elapsed%s%s",
            terminal ? "\r\033[K" : "", p.done, p.total, p.resumed, p.failed,
            qPrintable(clock(p.elapsedMs)), qPrintable(left), terminal && !last ? "" : "\n");
        std::fflush(stderr);
    };
    std::signal(SIGINT, onInterrupt);
    auto results = cw::reviewFolder(QString::fromStdString(folder), options, &g_cancel, progress);
    std::signal(SIGINT, SIG_DFL);
    if (!results) {
        if (g_cancel.load()) {
            std::fprintf(stderr,
                "\nreview-folder: cancelled; the contracts reviewed so far are in the history "
                "(%s), and running the same command again resumes from them\n",
                qPrintable(options.historyPath));
            return 130;
        }
        std::fprintf(stderr, "review-folder: %s\n", results.error().message.c_str());
        return 1;
    }
    if (results->isEmpty()) {
        std::fprintf(
            stderr, "review-folder: %s: no PDF, DOCX or text files found\n", folder.c_str());
        return 1;
    }
    for (const cw::ContractResult& r : *results) {
        if (!r.error.isEmpty())
            std::fprintf(
                stderr, "review-folder: %s: %s\n", qPrintable(r.relativePath), qPrintable(r.error));
    }
    const cw::ReviewTable table = cw::buildReviewTable(*results);
    if (auto written = cw::writeReviewTable(table, outPath); !written) {
        std::fprintf(stderr, "review-folder: %s\n", written.error().message.c_str());
        return 1;
    }
    std::fprintf(stderr,
        "review-folder: %lld contracts (%d reviewed, %d from the history, %d failed); %d high, "
        "%d medium, %d low risk findings; wrote %s\n",
        qlonglong(table.rows.size()), table.reviewed, table.resumed, table.failed, table.high,
        table.medium, table.low, out.c_str());
    return table.failed == table.rows.size() ? 1 : 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "review-folder",
    "review every contract in a folder into one table (xlsx, csv), saved to the history",
    runReviewFolder } };

} // namespace
