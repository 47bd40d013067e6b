// `clausewright-cli run-tests --code F --tests F [--language L]`: the sandboxed runner alone,
// on tests a user already has. Builds and runs them under bubblewrap with the runner's
// limits, prints each test's result and the line coverage of the code (text, or --format
// json: resources/schemas/run-tests.schema.json). Exit status 0 when every test passed, 1
// when one failed or the run was refused, 2 for bad arguments.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "app/test_generation/test_generation_json.h"
#include "app/test_runner/code_language.h"
#include "app/test_runner/test_workspace.h"

#include <CLI/CLI.hpp>
#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <cstdio>

namespace {

void printError(const std::string& message)
{
    std::fprintf(stderr, "run-tests: %s\n", message.c_str());
}

cw::Result<QString> readCode(const std::string& path)
{
    QFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::ReadOnly))
        return cw::makeError(path + ": " + file.errorString().toStdString());
    if (file.size() > cw::kMaxCodeBytes)
        return cw::makeError(path + ": larger than 1 MB; give one file at a time");
    return cw::readableCode(file.readAll(), QString::fromStdString(path));
}

int runTests(std::span<char*> args)
{
    CLI::App app { "Run a test file against code in the sandbox (bubblewrap)", "run-tests" };
    cw::cli::showDefaultsInHelp(app);
    std::string codePath, testsPath, language, format = "text", only;
    int runs = 1;
    double wall = 60, cpu = 30;
    app.add_option("--code", codePath, "the code under test")->required();
    app.add_option("--tests", testsPath, "the test file (pytest, GoogleTest, node:test, Go)")
        ->required();
    app.add_option("--language", language,
           "python, cpp, javascript, typescript or go (default: from the file name or content)")
        ->check(CLI::IsMember({ "python", "cpp", "javascript", "typescript", "go" }));
    app.add_option("--format", format, "text or json")->check(CLI::IsMember({ "text", "json" }));
    app.add_option("--only", only, "run only this test (as the framework names it)");
    app.add_option("--runs", runs, "run the tests this many times (flakiness)")
        ->check(CLI::Range(1, 20));
    app.add_option("--time-limit", wall, "seconds each run may take (wall time)")
        ->check(CLI::Range(1.0, 3600.0));
    app.add_option("--cpu-limit", cpu, "CPU seconds each process may use")
        ->check(CLI::Range(1.0, 3600.0));
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    int argc = 1;
    char* argv[] = { args[0], nullptr };
    QCoreApplication qtApp(argc, argv);
    auto code = readCode(codePath);
    if (!code) {
        printError(code.error().message);
        return 1;
    }
    auto tests = readCode(testsPath);
    if (!tests) {
        printError(tests.error().message);
        return 1;
    }
    QString lang = QString::fromStdString(language);
    if (lang.isEmpty())
        lang = cw::detectLanguage(QString::fromStdString(codePath), *code);
    if (lang.isEmpty() || lang == "text") {
        printError(codePath + ": cannot tell its language; give --language");
        return 2;
    }
    cw::SandboxLimits limits;
    limits.wallSeconds = wall;
    limits.cpuSeconds = int(cpu);
    auto sandbox = cw::Sandbox::create(limits);
    if (!sandbox) {
        printError(sandbox.error().message);
        return 1;
    }
    auto workspace = cw::TestWorkspace::create(std::make_shared<cw::Sandbox>(*sandbox), lang,
        QFileInfo(QString::fromStdString(codePath)).fileName(), *code);
    if (!workspace) {
        printError(workspace.error().message);
        return 1;
    }
    // What the framework prints names the user's file, not the runner's own name for it.
    const QString userTestName = QFileInfo(QString::fromStdString(testsPath)).fileName();
    if (!(*workspace)->useTestFileName(userTestName))
        std::fprintf(stderr,
            "run-tests: note: %s runs as %s (the %s runner needs a name like it)\n",
            qPrintable(userTestName), qPrintable((*workspace)->testFile()), qPrintable(lang));
    bool allPassed = true;
    QJsonArray jsonRuns;
    for (int n = 1; n <= runs; ++n) {
        const cw::TestRunResult run = (*workspace)->run(*tests, QString::fromStdString(only));
        allPassed = allPassed && run.allPassed();
        if (format == "json") {
            jsonRuns.append(cw::testRunToJson(run));
        } else {
            if (runs > 1)
                std::printf("run %d of %d\n", n, runs);
            std::fputs(cw::testRunText(run).toUtf8().constData(), stdout);
        }
    }
    if (format == "json") {
        QJsonObject out = runs == 1 ? jsonRuns.first().toObject() : QJsonObject {};
        if (runs > 1) {
            out["language"] = lang;
            out["runs"] = jsonRuns;
        }
        out["schema_version"] = cw::kTestRunJsonVersion;
        out["code_file"] = (*workspace)->codeFile();
        out["test_file"] = (*workspace)->testFile();
        std::fputs(QJsonDocument(out).toJson().constData(), stdout);
    }
    return allPassed ? 0 : 1;
}

const cw::cli::CliCommandRegistration kRegistration { { "run-tests",
    "run a test file against code in the sandbox: per-test results, coverage", runTests } };

} // namespace
