// `clausewright-cli heads`: the clause-head plugins this program finds, where, and why any was
// skipped, as JSON (what a head author checks first when a plugin does not show up).
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "app/plugins/plugin_host.h"

#include <CLI/CLI.hpp>
#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstdio>
#include <string>
#include <vector>

namespace {

QJsonObject headJson(const cw::LoadedHead& head)
{
    return QJsonObject { { "id", head.metadata.id }, { "name", head.metadata.name },
        { "version", head.metadata.version }, { "kind", cw::headKindName(head.metadata.kind) },
        { "categories", QJsonArray::fromStringList(head.metadata.categories) },
        { "data", head.metadata.data }, { "origin", head.origin } };
}

int runHeads(std::span<char*> args)
{
    CLI::App app { "List the clause-head plugins found, and those skipped", "heads" };
    cw::cli::showDefaultsInHelp(app);
    std::vector<std::string> folders;
    app.add_option("--plugins", folders, "a folder of plugins to load first (repeatable)");
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    int argc = 1;
    char name[] = "clausewright-cli";
    char* argv[] = { name, nullptr };
    QCoreApplication qtApp(argc, argv);
    QStringList extra;
    for (const std::string& f : folders)
        extra.append(QString::fromStdString(f));
    cw::PluginHost host(extra);
    QJsonArray heads;
    for (const cw::LoadedHead& h : host.heads())
        heads.append(headJson(h));
    const QJsonObject out { { "heads", heads },
        { "searched", QJsonArray::fromStringList(host.searchFolders()) },
        { "skipped", QJsonArray::fromStringList(host.errors()) },
        { "abi", CW_CLAUSE_HEAD_FACTORY_IID }, { "types_version", cw::kHeadTypesVersion } };
    std::fputs(QJsonDocument(out).toJson(QJsonDocument::Indented).constData(), stdout);
    if (heads.isEmpty()) {
        std::fprintf(stderr, "heads: %s\n", qPrintable(host.noHeadsMessage()));
        return 1;
    }
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "heads",
    "list the clause-head plugins found (id, kind, categories, file) and those skipped",
    runHeads } };

} // namespace
