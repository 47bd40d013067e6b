// `clausewright-cli testgen --file F [--skill NAME] [--model PATH] [--run] [--rounds N]
// [--out F]`: a code skill on a file. For test skills with --run: generate, run, repair,
// keep (only tests that build, pass 3 runs in a row and add coverage; failures go back to
// the model for up to --rounds answers), the kept test file to --out or standard output and
// a summary on standard error. Without --run the answer is shown unverified. Other skills
// (review, explain, checklist ...) print their answer. Each generation is saved in the
// history (--db, --no-history). --format json writes the whole report
// (resources/schemas/testgen.schema.json). --replay FILE takes the answers from a JSON array
// of strings instead of a model (to try skills and the runner without one).
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "app/code_skills/code_skill_host.h"
#include "app/history/test_generation_history.h"
#include "app/test_generation/engine_skill_model.h"
#include "app/test_generation/test_generation_json.h"
#include "app/test_runner/code_language.h"

#include <CLI/CLI.hpp>
#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <cstdio>

namespace {

// Set once the command line is read: with --format json, errors are JSON on standard output
// too ({"schema_version": N, "error": "..."}), so a script that parses the output always gets
// an object.
bool jsonOutput = false;

void printError(const std::string& message)
{
    std::fprintf(stderr, "testgen: %s\n", message.c_str());
    if (jsonOutput)
        std::fputs(QJsonDocument(QJsonObject { { "schema_version", cw::kTestRunJsonVersion },
                                     { "error", QString::fromStdString(message) } })
                       .toJson()
                       .constData(),
            stdout);
}

// The generated tests that fail against the code, on standard error: the ones most worth a
// look, since either they or the code are wrong.
void printFailingTests(const cw::TestGenerationReport& report)
{
    if (report.failingTests.isEmpty())
        return;
    std::fprintf(stderr,
        "testgen: %d generated test%s fail%s against the code: the code may be wrong here "
        "(read %s against what the code should do):\n",
        report.failing, report.failing == 1 ? "" : "s", report.failing == 1 ? "s" : "",
        report.failing == 1 ? "it" : "them");
    for (const QString& line : report.failingTests.split('\n'))
        std::fprintf(stderr, "    %s\n", qPrintable(line));
}

cw::Result<QByteArray> readFile(const std::string& path, qint64 limit)
{
    QFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::ReadOnly))
        return cw::makeError(path + ": " + file.errorString().toStdString());
    if (file.size() > limit)
        return cw::makeError(path + ": larger than " + std::to_string(limit >> 20) + " MB");
    return file.readAll();
}

cw::Result<QStringList> replayAnswers(const std::string& path)
{
    auto bytes = readFile(path, 16 << 20);
    if (!bytes)
        return bytes.error();
    const QJsonDocument doc = QJsonDocument::fromJson(*bytes);
    if (!doc.isArray())
        return cw::makeError(path + ": --replay needs a JSON array of answers (strings)");
    QStringList answers;
    for (const QJsonValue& v : doc.array()) {
        if (!v.isString())
            return cw::makeError(path + ": every answer in the array must be a string");
        answers.append(v.toString());
    }
    return answers;
}

void listSkills(cw::CodeSkillHost& host)
{
    for (const cw::CodeSkill& s : host.skills())
        std::printf("%-28s %-34s %s%s\n", s.name.toUtf8().constData(),
            s.languages.join(",").toUtf8().constData(), s.title.toUtf8().constData(),
            s.runnableTests ? " [runs its tests]" : "");
    for (const QString& e : host.errors())
        std::fprintf(stderr, "testgen: skipped %s\n", e.toUtf8().constData());
}

cw::Result<bool> writeOut(const std::string& path, const QString& text)
{
    QSaveFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::WriteOnly))
        return cw::makeError(path + ": " + file.errorString().toStdString());
    file.write(text.toUtf8());
    if (!file.commit())
        return cw::makeError(path + ": " + file.errorString().toStdString());
    return true;
}

int runTestgen(std::span<char*> args)
{
    CLI::App app { "Ask a code skill about a file; test skills can run what they write",
        "testgen" };
    cw::cli::showDefaultsInHelp(app);
    std::string file, skillName, model, out, format = "text", language, replay, existing, db,
                                             skillsDir, device = "cpu", precision = "bf16";
    bool run = false, noHistory = false, list = false;
    int rounds = 3, threads = 0;
    std::int64_t context = 0;
    app.add_option("--file", file, "the code (or, for text skills, the specification or clause)");
    app.add_option("--skill", skillName, "skill name (default: the language's unit-test skill)");
    app.add_option("--model", model, "GGUF file or Hugging Face folder");
    app.add_flag("--run", run, "build and run the tests in the sandbox; keep only passing ones");
    app.add_option("--rounds", rounds, "answers asked for at most (first and repairs)")
        ->check(CLI::Range(1, 20));
    app.add_option("--out", out, "write the kept tests (or the answer) here");
    app.add_option("--format", format,
           "text or json (json: the whole report, or {\"error\": ...} when there is none)")
        ->check(CLI::IsMember({ "text", "json" }));
    app.add_option("--language", language, "python, cpp, javascript, typescript, go or text")
        ->check(CLI::IsMember({ "python", "cpp", "javascript", "typescript", "go", "text" }));
    app.add_option("--tests", existing, "tests you have already: kept, and their coverage counts");
    app.add_option("--replay", replay, "answers from a JSON array of strings instead of a model");
    app.add_option("--skills-dir", skillsDir, "another folder of skill files (searched first)");
    app.add_flag("--list-skills", list, "list the skills and exit");
    app.add_option("--db", db, "history database (default: the one the GUI uses)");
    app.add_flag("--no-history", noHistory, "do not save this generation in the history");
    app.add_option("--threads", threads, "CPU threads for the model (0: all)");
    app.add_option("--device", device, "where the model runs: cpu, cuda, cuda:N or auto");
    double gpuMemory = 0.0;
    cw::cli::addGpuMemoryOption(app, gpuMemory);
    app.add_option(
           "--precision", precision, "arithmetic: f32 (the reference), tf32 or bf16 (fastest)")
        ->check(CLI::IsMember({ "f32", "tf32", "bf16" }));
    app.add_option("--context", context, "tokens per sequence (0: the model's)");
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    jsonOutput = format == "json";
    int argc = 1;
    char* argv[] = { args[0], nullptr };
    QCoreApplication qtApp(argc, argv);
    cw::CodeSkillHost host(
        skillsDir.empty() ? QStringList {} : QStringList { QString::fromStdString(skillsDir) });
    if (list) {
        listSkills(host);
        return 0;
    }
    for (const QString& e : host.errors())
        std::fprintf(stderr, "testgen: skipped %s\n", e.toUtf8().constData());
    if (file.empty()) {
        printError("--file is required (or --list-skills)");
        return 2;
    }
    auto bytes = readFile(file, cw::kMaxCodeBytes);
    if (!bytes) {
        printError(bytes.error().message);
        return 1;
    }
    auto code = cw::readableCode(*bytes, QString::fromStdString(file));
    if (!code) {
        printError(code.error().message);
        return 1;
    }
    QString lang = language.empty() ? cw::detectLanguage(QString::fromStdString(file), *code)
                                    : QString::fromStdString(language);
    if (lang.isEmpty()) {
        printError(file + ": cannot tell its language; give --language");
        return 2;
    }
    const cw::CodeSkill* skill = nullptr;
    if (!skillName.empty()) {
        skill = host.skill(QString::fromStdString(skillName));
        if (!skill) {
            printError("no skill named '" + skillName + "' (see --list-skills)");
            return 2;
        }
    } else {
        const QList<cw::CodeSkill> fitting = host.skillsFor(lang);
        if (fitting.isEmpty()) {
            printError("no skill takes " + cw::languageTitle(lang).toStdString());
            return 2;
        }
        skill = host.skill(fitting.first().name);
    }

    std::unique_ptr<cw::SkillModel> skillModel;
    if (!replay.empty()) {
        auto answers = replayAnswers(replay);
        if (!answers) {
            printError(answers.error().message);
            return 1;
        }
        skillModel = std::make_unique<cw::ScriptedSkillModel>(*answers);
    } else if (!model.empty()) {
        cw::llm::LlmSessionOptions options;
        options.threads = threads;
        options.device = QString::fromStdString(device);
        options.contextLength = context;
        options.precision = QString::fromStdString(precision);
        options.gpuMemoryGiB = gpuMemory;
        auto session = cw::llm::LlmSession::open(QString::fromStdString(model), options);
        if (!session) {
            printError(session.error().message);
            return 1;
        }
        skillModel = std::make_unique<cw::EngineSkillModel>(*session);
    } else {
        printError("a model is needed to generate: give --model PATH (a GGUF file or a Hugging "
                   "Face folder). To run tests you already have: clausewright-cli run-tests");
        return 2;
    }

    std::shared_ptr<const cw::Sandbox> sandbox;
    if (run && skill->runnableTests) {
        auto created = cw::Sandbox::create();
        if (!created) {
            printError(created.error().message);
            return 1;
        }
        sandbox = std::make_shared<cw::Sandbox>(*created);
    }
    cw::TestGenerationOptions options;
    options.rounds = rounds;
    options.run = run;
    if (!existing.empty()) {
        auto tests = readFile(existing, cw::kMaxCodeBytes);
        if (!tests) {
            printError(tests.error().message);
            return 1;
        }
        options.existingTests = QString::fromUtf8(*tests);
    }
    cw::TestGenerationObserver observer;
    observer.roundStarted = [](int n) { std::fprintf(stderr, "testgen: round %d\n", n); };
    observer.status
        = [](const QString& s) { std::fprintf(stderr, "testgen:   %s\n", qPrintable(s)); };
    observer.roundFinished = [](const cw::TestGenerationRound& r) {
        if (!r.parseError.isEmpty())
            std::fprintf(stderr, "testgen:   answer not usable: %s\n", qPrintable(r.parseError));
        for (const cw::TestVerdict& v : r.verdicts)
            std::fprintf(stderr, "testgen:   %-40s %s\n", qPrintable(v.name), qPrintable(v.reason));
    };
    auto report = cw::generateTests(*skillModel, *skill, *code,
        QFileInfo(QString::fromStdString(file)).fileName(), lang, sandbox, options, observer);
    if (!report) {
        printError(report.error().message);
        return 1;
    }
    if (!noHistory) {
        auto opened = cw::HistoryDatabase::open(
            db.empty() ? cw::HistoryDatabase::defaultPath() : QString::fromStdString(db));
        auto saved = opened ? cw::saveTestGeneration(**opened, *report)
                            : cw::Result<qint64>(opened.error());
        if (!saved)
            std::fprintf(
                stderr, "testgen: not saved in the history: %s\n", saved.error().message.c_str());
        else
            std::fprintf(stderr, "testgen: saved in the history as %lld\n", qlonglong(*saved));
    }
    // Tests were asked for, run, and none passed: nothing to hand over as tests.
    const bool noneKept = skill->runnableTests && run && report->keptTests.isEmpty();
    if (noneKept) {
        if (format == "json")
            std::fputs(
                QJsonDocument(cw::testGenerationToJson(*report)).toJson().constData(), stdout);
        std::fprintf(stderr, "testgen: %s\n", qPrintable(report->summary()));
        if (!report->problem.isEmpty())
            std::fprintf(stderr, "testgen: %s\n", qPrintable(report->problem));
        printFailingTests(*report);
        std::fprintf(stderr,
            "testgen: no generated test passed, so none was kept%s (each round's verdicts are "
            "above)\n",
            out.empty() ? "" : (" and " + out + " was not written").c_str());
        return 1;
    }
    // The kept tests; else the answer (a JSON skill's object indented, for people and jq).
    const QString result = !report->keptTests.isEmpty() ? report->keptTests
        : !report->answerJson.isEmpty()
        ? QString::fromUtf8(QJsonDocument(report->answerJson).toJson(QJsonDocument::Indented))
        : report->answer;
    if (!out.empty()) {
        if (auto written = writeOut(out, result); !written) {
            printError(written.error().message);
            return 1;
        }
    }
    if (format == "json") {
        std::fputs(QJsonDocument(cw::testGenerationToJson(*report)).toJson().constData(), stdout);
    } else if (out.empty()) {
        std::fputs(result.toUtf8().constData(), stdout);
        if (!result.endsWith('\n'))
            std::fputc('\n', stdout);
    }
    std::fprintf(stderr, "testgen: %s\n", qPrintable(report->summary()));
    if (!report->problem.isEmpty())
        std::fprintf(stderr, "testgen: %s\n", qPrintable(report->problem));
    printFailingTests(*report);
    if (skill->runnableTests && !run)
        std::fprintf(stderr,
            "testgen: these tests were not run (add --run to build, run and "
            "keep only passing ones)\n");
    if (!out.empty())
        std::fprintf(stderr, "testgen: wrote %s\n", out.c_str());
    // An answer that could not be read is shown as it came, but it is no result.
    const bool unreadable = report->keptTests.isEmpty() && !report->rounds.isEmpty()
        && !report->rounds.last().parseError.isEmpty();
    return report->cancelled || unreadable ? 1 : 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "testgen",
    "code skills: unit tests that are run before they are kept, reviews, explanations",
    runTestgen } };

} // namespace
