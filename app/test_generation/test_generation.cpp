#include "app/test_generation/test_generation.h"

#include "app/code_skills/skill_output.h"
#include "app/test_generation/test_file_parts.h"
#include "app/test_runner/code_language.h"
#include "app/test_runner/unfinished_tests.h"

#include <QElapsedTimer>
#include <QMap>
#include <QRegularExpression>
#include <QSet>
#include <algorithm>

namespace cw {

namespace {

double percentOf(const QSet<int>& covered, const QSet<int>& executable)
{
    if (executable.isEmpty())
        return 0.0;
    int n = 0;
    for (int line : covered)
        n += executable.contains(line) ? 1 : 0;
    return 100.0 * double(n) / double(executable.size());
}

QString rangesOf(const QSet<int>& covered, const QSet<int>& executable)
{
    LineCoverage c;
    c.covered = covered;
    c.executable = executable;
    return c.uncoveredRanges();
}

// Everything the tests of one round did over its runs.
struct CaseHistory {
    int passedRuns = 0;
    int firstFailure = 0; // run number (1-based), 0: none
    QString output;
};

// The state carried from round to round.
struct KeptState {
    QStringList preambles;
    QList<TestBlock> blocks;
    // Tests that fail against the code, by name, with their file's preamble; a later round's
    // passing test of the same name takes one off.
    QMap<QString, QPair<QString, TestBlock>> failing;
    QSet<int> covered;
    QSet<int> executable;
    bool measured = false;
};

// Whether a failure is an assertion the code did not meet (the test ran and expected
// something else), rather than the test itself breaking (a name error, a crash, a panic).
bool isAssertionFailure(const QString& language, const QString& output)
{
    if (language == QLatin1String("python"))
        return output.contains(QLatin1String("AssertionError"))
            || output.contains(QRegularExpression(
                QStringLiteral("^E\\s+assert "), QRegularExpression::MultilineOption));
    if (language == QLatin1String("cpp"))
        return output.contains(QLatin1String("Failure"))
            && (output.contains(QLatin1String("Expected"))
                || output.contains(QLatin1String("Value of"))
                || output.contains(QLatin1String("Which is")));
    if (language == QLatin1String("go"))
        return !output.contains(QLatin1String("panic:"))
            && output.contains(QRegularExpression(QStringLiteral("_test\\.go:\\d+:")));
    return output.contains(QLatin1String("AssertionError")); // node:test
}

QString rangeNote(int lines)
{
    return lines == 1 ? QStringLiteral("+1 line") : QStringLiteral("+%1 lines").arg(lines);
}

// Runs a round's test file stableRuns times, judges each test, and keeps the good ones.
// Returns what the model should hear next (empty: nothing failed).
QString judgeRound(TestWorkspace& workspace, const TestGenerationOptions& options,
    const TestFileParts& parts, TestGenerationRound& round, KeptState& kept,
    const TestGenerationObserver& observer, const std::function<bool()>& cancelled)
{
    auto status = [&](const QString& what) {
        if (observer.status)
            observer.status(what);
    };
    status(QStringLiteral("building and running"));
    round.run = workspace.run(round.tests, {}, cancelled);
    round.stableRuns = 1;
    if (!round.run.built || (round.run.cases.isEmpty() && !round.run.limitMessage.isEmpty())) {
        const QString why
            = !round.run.built ? QStringLiteral("does not build") : round.run.limitMessage;
        for (const TestBlock& b : parts.tests)
            round.verdicts.append({ b.name, false, why, 0 });
        return round.run.failureReport();
    }
    kept.executable.unite(round.run.coverage.executable);
    kept.measured = kept.measured || round.run.coverage.measured;
    if (!round.run.coverageByTest.isEmpty()) {
        // Lines that run when the code is loaded (a Python module's def lines) belong to no
        // test: they count as covered, or "every line covered" could never be reached.
        QSet<int> loading = round.run.coverage.covered;
        for (const QSet<int>& lines : std::as_const(round.run.coverageByTest))
            loading.subtract(lines);
        kept.covered.unite(loading);
    }

    QMap<QString, CaseHistory> history;
    auto record = [&](const TestRunResult& run, int number) {
        for (const TestCaseResult& c : run.cases) {
            CaseHistory& h = history[c.name];
            if (c.outcome == TestOutcome::Passed)
                ++h.passedRuns;
            else if (c.outcome == TestOutcome::Failed && h.firstFailure == 0) {
                h.firstFailure = number;
                h.output = c.output;
            }
        }
    };
    record(round.run, 1);
    for (int n = 2; n <= options.stableRuns && round.run.passed() > 0; ++n) {
        if (cancelled && cancelled())
            break;
        status(QStringLiteral("run %1 of %2").arg(n).arg(options.stableRuns));
        record(workspace.run(round.tests, {}, cancelled), n);
        round.stableRuns = n;
    }

    QString errors;
    if (!round.run.limitMessage.isEmpty())
        errors += round.run.limitMessage + '\n';
    bool keptAny = false;
    for (const TestBlock& block : parts.tests) {
        TestVerdict verdict { block.name, false, {}, 0 };
        QStringList cases;
        for (auto it = history.begin(); it != history.end(); ++it) {
            if (blockOwnsCase(block, it.key()))
                cases.append(it.key());
        }
        int failedIn = 0;
        QString failure;
        bool allStable = !cases.isEmpty();
        for (const QString& name : cases) {
            const CaseHistory& h = history[name];
            if (h.firstFailure && (!failedIn || h.firstFailure < failedIn)) {
                failedIn = h.firstFailure;
                failure = h.output;
            }
            allStable = allStable && h.passedRuns == round.stableRuns;
        }
        if (cases.isEmpty()) {
            verdict.reason = QStringLiteral("did not run");
            errors += QStringLiteral("Test %1 did not run.\n").arg(block.name);
        } else if (failedIn == 1 && failure.startsWith(kDidNotFinish)) {
            // A limit stopped it (a loop, a hang): the limit is the reason.
            verdict.reason = failure.mid(kDidNotFinish.size());
            errors += QStringLiteral("Test %1 %2\n").arg(block.name, failure);
        } else if (failedIn == 1) {
            const bool everyRun = std::all_of(cases.begin(), cases.end(),
                [&](const QString& name) { return history[name].passedRuns == 0; });
            verdict.suspectsCode = everyRun && isAssertionFailure(workspace.language(), failure);
            verdict.reason = verdict.suspectsCode
                ? QStringLiteral("fails: the code may be wrong here")
                : QStringLiteral("failed");
            if (verdict.suspectsCode)
                kept.failing.insert(block.name, { parts.preamble, block });
            errors += QStringLiteral("Test %1 failed:\n%2\n").arg(block.name, failure.right(1500));
        } else if (failedIn > 1 || !allStable) {
            verdict.reason = QStringLiteral("flaky: failed in run %1 of %2")
                                 .arg(failedIn ? failedIn : round.stableRuns)
                                 .arg(round.stableRuns);
            errors += QStringLiteral("Test %1 is flaky (passed, then failed in run %2): make it "
                                     "deterministic.\n%3\n")
                          .arg(block.name)
                          .arg(failedIn)
                          .arg(failure.right(800));
        } else if (!kept.measured) {
            verdict.kept = true;
            verdict.reason = QStringLiteral("kept (coverage not measured here)");
        } else {
            QSet<int> lines;
            bool known = false;
            for (const QString& name : block.caseNames) {
                if (round.run.coverageByTest.contains(name)) {
                    lines.unite(round.run.coverageByTest.value(name));
                    known = true;
                }
            }
            if (!known) {
                for (const QString& name : cases) {
                    status(QStringLiteral("coverage of %1").arg(name));
                    lines.unite(workspace.run(round.tests, name, cancelled).coverage.covered);
                }
            }
            lines.subtract(kept.covered);
            verdict.newLines = int(lines.size());
            verdict.kept = verdict.newLines > 0;
            verdict.reason = verdict.kept
                ? QStringLiteral("kept: %1").arg(rangeNote(verdict.newLines))
                : QStringLiteral("adds no coverage");
            kept.covered.unite(lines);
        }
        if (verdict.kept) {
            kept.blocks.append(block);
            kept.failing.remove(block.name); // its failing version was the test's mistake
            keptAny = true;
        }
        round.verdicts.append(verdict);
    }
    if (keptAny)
        kept.preambles.append(parts.preamble);
    return errors;
}

QString fenceName(const QString& language)
{
    return language == "cpp" ? QStringLiteral("cpp") : language;
}

} // namespace

QString TestGenerationReport::summary() const
{
    if (!answer.isEmpty() && rounds.size() <= 1 && keptTests.isEmpty())
        return QStringLiteral("answered in %1 s").arg(seconds, 0, 'f', 1);
    QString text = QStringLiteral("%1 kept, %2 discarded").arg(kept).arg(discarded);
    if (failing > 0)
        text += QStringLiteral(", %1 %2 against the code (it may be wrong there)")
                    .arg(failing)
                    .arg(failing == 1 ? QStringLiteral("fails") : QStringLiteral("fail"));
    if (coverageMeasured)
        text += QStringLiteral("; coverage %1% -> %2%")
                    .arg(coverageBefore, 0, 'f', 0)
                    .arg(coverageAfter, 0, 'f', 0);
    text += QStringLiteral("; %1 round%2").arg(rounds.size()).arg(rounds.size() == 1 ? "" : "s");
    if (cancelled)
        text += QStringLiteral(" (cancelled)");
    return text;
}

Result<TestGenerationReport> generateTests(SkillModel& model, const CodeSkill& skill,
    const QString& code, const QString& fileName, const QString& language,
    std::shared_ptr<const Sandbox> sandbox, const TestGenerationOptions& options,
    const TestGenerationObserver& observer, const std::function<bool()>& cancelled)
{
    QElapsedTimer timer;
    timer.start();
    if (!skill.supports(language))
        return makeError("skill '" + skill.name.toStdString() + "' does not take "
            + languageTitle(language).toStdString() + " (it takes "
            + skill.languages.join(", ").toStdString() + ")");
    TestGenerationReport report;
    report.skill = skill.name;
    report.model = model.name();
    report.language = language;
    report.fileName = fileName;
    report.code = code;
    const bool runTests = skill.runnableTests && options.run;

    std::unique_ptr<TestWorkspace> workspace;
    if (runTests) {
        if (!sandbox)
            return makeError("generated tests are only run in the sandbox, and there is none");
        auto created = TestWorkspace::create(sandbox, language, fileName, code);
        if (!created)
            return created.error();
        workspace = std::move(*created);
        report.toolchain = workspace->toolchain();
        report.testFileName = workspace->testFile();
    }
    SkillRequest request;
    request.code = code;
    request.language = language;
    request.fileName = workspace
        ? workspace->codeFile()
        : (fileName.isEmpty() ? QStringLiteral("input") + languageExtension(language) : fileName);

    KeptState kept;
    if (workspace && !options.existingTests.trimmed().isEmpty()) {
        const TestFileParts parts = splitTestFile(language, options.existingTests);
        kept.preambles.append(parts.preamble);
        kept.blocks = parts.tests;
        if (observer.status)
            observer.status(QStringLiteral("running your tests"));
        const TestRunResult before = workspace->run(options.existingTests, {}, cancelled);
        if (before.built) {
            kept.covered = before.coverage.covered;
            kept.executable = before.coverage.executable;
            kept.measured = before.coverage.measured;
            report.coverageBefore = before.coverage.percent();
        }
    }

    QString errors;
    const int rounds = runTests ? std::max(1, options.rounds) : 1;
    for (int number = 1; number <= rounds; ++number) {
        if (cancelled && cancelled()) {
            report.cancelled = true;
            break;
        }
        if (observer.roundStarted)
            observer.roundStarted(number);
        TestGenerationRound round;
        round.number = number;
        request.existingTests = kept.blocks.isEmpty() ? options.existingTests
                                                      : joinTestFile(kept.preambles, kept.blocks);
        request.errors = errors;
        request.uncoveredLines
            = kept.measured ? rangesOf(kept.covered, kept.executable) : QString();
        request.repair = !errors.isEmpty();
        round.prompt = renderSkillMessages(skill, request);
        auto answer = model.answer(skill, round.prompt, observer.answerPiece, cancelled);
        if (!answer && number == 1)
            return makeError(answer.error().message);
        if (!answer) { // what earlier rounds kept stays
            report.problem = QStringLiteral("round %1: %2")
                                 .arg(number)
                                 .arg(QString::fromStdString(answer.error().message));
            break;
        }
        round.answer = answer->text;
        round.promptTokens = answer->promptTokens;
        round.reusedPromptTokens = answer->reusedPromptTokens;
        if (answer->cancelled) {
            report.cancelled = true;
            report.rounds.append(round);
            break;
        }
        auto parsed = parseSkillOutput(skill, answer->text);
        if (!parsed) {
            round.parseError = QString::fromStdString(parsed.error().message);
            report.rounds.append(round);
            if (observer.roundFinished)
                observer.roundFinished(round);
            if (!runTests) {
                // Shown as it came (text and JSON alike), with what could not be read.
                report.problem
                    = QStringLiteral("the answer could not be read: %1").arg(round.parseError);
                report.answer = answer->text;
                break;
            }
            errors = QStringLiteral("Your answer could not be used: %1. Answer with one ```%2 "
                                    "code block holding the whole test file.")
                         .arg(round.parseError, fenceName(language));
            continue;
        }
        if (!runTests) {
            report.answer = parsed->code.isEmpty() ? parsed->text : parsed->code;
            report.answerJson = parsed->json;
            if (skill.runnableTests)
                report.keptTests = parsed->code; // asked not to run: shown unverified
            report.rounds.append(round);
            if (observer.roundFinished)
                observer.roundFinished(round);
            break;
        }
        round.tests = parsed->code;
        const TestFileParts parts = splitTestFile(language, round.tests);
        if (parts.tests.isEmpty()) {
            round.parseError = QStringLiteral("the test file has no tests the runner recognises");
            errors
                = QStringLiteral("Your test file has no tests. Write test functions as %1 expects.")
                      .arg(skill.frameworks.value(language, language));
            report.rounds.append(round);
            if (observer.roundFinished)
                observer.roundFinished(round);
            continue;
        }
        const int keptBefore = int(kept.blocks.size());
        errors = judgeRound(*workspace, options, parts, round, kept, observer, cancelled);
        round.coverageAfter = percentOf(kept.covered, kept.executable);
        for (const TestVerdict& v : round.verdicts)
            (v.kept ? report.kept : report.discarded) += 1;
        report.rounds.append(round);
        if (observer.roundFinished)
            observer.roundFinished(round);
        const bool fullyCovered = kept.measured && !kept.executable.isEmpty()
            && percentOf(kept.covered, kept.executable) >= 100.0;
        if (errors.isEmpty() && (fullyCovered || int(kept.blocks.size()) == keptBefore))
            break;
    }

    report.coverageMeasured = kept.measured;
    if (!kept.failing.isEmpty()) {
        QStringList preambles;
        QList<TestBlock> blocks;
        for (const auto& [preamble, block] : std::as_const(kept.failing)) {
            preambles.append(preamble);
            blocks.append(block);
        }
        report.failingTests = joinTestFile(preambles, blocks);
        report.failing = int(blocks.size());
    }
    if (workspace && !kept.blocks.isEmpty()) {
        report.keptTests = joinTestFile(kept.preambles, kept.blocks);
        if (observer.status)
            observer.status(QStringLiteral("running the kept tests together"));
        report.finalRun = workspace->run(report.keptTests, {}, cancelled);
        if (!report.finalRun.allPassed())
            report.problem = QStringLiteral("the kept tests did not all pass together: ")
                + report.finalRun.failureReport(600);
        if (report.finalRun.coverage.measured) {
            kept.covered.unite(report.finalRun.coverage.covered);
            kept.executable.unite(report.finalRun.coverage.executable);
        }
    }
    report.coverageAfter = percentOf(kept.covered, kept.executable);
    report.uncoveredLines = kept.measured ? rangesOf(kept.covered, kept.executable) : QString();
    if (!kept.measured)
        report.coverageBefore = 0.0;
    report.seconds = double(timer.elapsed()) / 1000.0;
    return report;
}

} // namespace cw
