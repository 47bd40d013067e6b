// `clausewright-cli testgen-history list|show|search|delete`: the test generations the code
// panel and `testgen` saved in the history database.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "app/history/test_generation_history.h"
#include "app/test_generation/test_generation_json.h"

#include <CLI/CLI.hpp>
#include <QCoreApplication>
#include <QJsonDocument>
#include <cstdio>

namespace {

void printEntries(const QList<cw::TestGenerationEntry>& entries)
{
    if (entries.isEmpty()) {
        std::printf("No test generations found.\n");
        return;
    }
    std::printf("%-6s %-17s %-22s %-20s %s\n", "ID", "DATE (UTC)", "FILE", "SKILL", "RESULT");
    for (const cw::TestGenerationEntry& e : entries) {
        std::printf("%-6lld %-17s %-22s %-20s %s\n", qlonglong(e.id),
            qPrintable(e.createdAt.toUTC().toString("yyyy-MM-dd HH:mm")),
            qPrintable(e.fileName.left(22)), qPrintable(e.skill.left(20)), qPrintable(e.summary));
        if (!e.snippet.isEmpty())
            std::printf("       %s\n", qPrintable(e.snippet.simplified()));
    }
}

int runHistory(std::span<char*> args)
{
    CLI::App app { "Saved test generations", "testgen-history" };
    cw::cli::showDefaultsInHelp(app);
    app.require_subcommand(1);
    std::string db, query;
    qint64 id = 0;
    int offset = 0, limit = 50;
    bool json = false;
    app.add_option("--db", db, "history database (default: the one the GUI uses)");
    auto* list = app.add_subcommand("list", "newest first");
    list->add_option("--offset", offset);
    list->add_option("--limit", limit);
    auto* show = app.add_subcommand("show", "one generation: its kept tests, or --json all of it");
    show->add_option("ID", id)->required();
    show->add_flag("--json", json, "the whole report (testgen --format json)");
    auto* search = app.add_subcommand("search", "full text: file, skill, model, code, tests");
    search->add_option("QUERY", query)->required();
    auto* remove = app.add_subcommand("delete", "delete one generation");
    remove->add_option("ID", id)->required();
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    int argc = 1;
    char* argv[] = { args[0], nullptr };
    QCoreApplication qtApp(argc, argv);
    auto opened = cw::HistoryDatabase::open(
        db.empty() ? cw::HistoryDatabase::defaultPath() : QString::fromStdString(db));
    if (!opened) {
        std::fprintf(stderr, "testgen-history: %s\n", opened.error().message.c_str());
        return 1;
    }
    cw::HistoryDatabase& database = **opened;
    auto fail = [](const cw::Error& e) {
        std::fprintf(stderr, "testgen-history: %s\n", e.message.c_str());
        return 1;
    };
    if (list->parsed()) {
        auto entries = cw::listTestGenerations(database, offset, limit);
        if (!entries)
            return fail(entries.error());
        printEntries(*entries);
    } else if (search->parsed()) {
        auto entries = cw::searchTestGenerations(database, QString::fromStdString(query));
        if (!entries)
            return fail(entries.error());
        printEntries(*entries);
    } else if (show->parsed()) {
        auto report = cw::loadTestGeneration(database, id);
        if (!report)
            return fail(report.error());
        if (json)
            std::fputs(
                QJsonDocument(cw::testGenerationToJson(*report)).toJson().constData(), stdout);
        else
            std::printf("%s\n%s\n", qPrintable(report->summary()),
                qPrintable(report->keptTests.isEmpty() ? report->answer : report->keptTests));
    } else if (remove->parsed()) {
        if (auto removed = cw::removeTestGeneration(database, id); !removed)
            return fail(removed.error());
    }
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "testgen-history",
    "saved test generations: list, show, search, delete", runHistory } };

} // namespace
