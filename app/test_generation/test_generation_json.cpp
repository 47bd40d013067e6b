#include "app/test_generation/test_generation_json.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>

namespace cw {

namespace {

QJsonArray sortedLines(const QSet<int>& lines)
{
    QList<int> sorted(lines.begin(), lines.end());
    std::sort(sorted.begin(), sorted.end());
    QJsonArray out;
    for (int line : sorted)
        out.append(line);
    return out;
}

QSet<int> linesFrom(const QJsonValue& value)
{
    QSet<int> out;
    for (const QJsonValue& v : value.toArray())
        out.insert(v.toInt());
    return out;
}

QJsonObject coverageToJson(const LineCoverage& coverage)
{
    QJsonObject out;
    out["measured"] = coverage.measured;
    if (!coverage.measured)
        return out;
    out["percent"] = std::round(coverage.percent() * 10.0) / 10.0;
    out["executable_lines"] = sortedLines(coverage.executable);
    out["covered_lines"] = sortedLines(coverage.covered);
    out["uncovered"] = coverage.uncoveredRanges();
    return out;
}

TestRunResult runFromJson(const QJsonObject& json)
{
    TestRunResult run;
    run.language = json["language"].toString();
    run.toolchain = json["toolchain"].toString();
    run.built = json["built"].toBool();
    run.buildOutput = json["build_output"].toString();
    run.limitMessage = json["limit"].toString();
    run.output = json["output"].toString();
    run.seconds = json["seconds"].toDouble();
    for (const QJsonValue& v : json["tests"].toArray()) {
        const QJsonObject t = v.toObject();
        const QString outcome = t["outcome"].toString();
        run.cases.append({ t["name"].toString(),
            outcome == "passed"        ? TestOutcome::Passed
                : outcome == "skipped" ? TestOutcome::Skipped
                                       : TestOutcome::Failed,
            t["output"].toString(), t["seconds"].toDouble() });
    }
    const QJsonObject coverage = json["coverage"].toObject();
    run.coverage.measured = coverage["measured"].toBool();
    run.coverage.executable = linesFrom(coverage["executable_lines"]);
    run.coverage.covered = linesFrom(coverage["covered_lines"]);
    return run;
}

} // namespace

QJsonObject testRunToJson(const TestRunResult& run)
{
    QJsonObject out;
    out["language"] = run.language;
    out["toolchain"] = run.toolchain;
    out["built"] = run.built;
    out["build_output"] = run.buildOutput;
    out["limit"] = run.limitMessage;
    out["passed"] = run.passed();
    out["failed"] = run.failed();
    QJsonArray tests;
    for (const TestCaseResult& c : run.cases) {
        QJsonObject t;
        t["name"] = c.name;
        t["outcome"] = testOutcomeName(c.outcome);
        t["output"] = c.output;
        t["seconds"] = c.seconds;
        tests.append(t);
    }
    out["tests"] = tests;
    out["coverage"] = coverageToJson(run.coverage);
    out["output"] = run.output;
    out["seconds"] = run.seconds;
    return out;
}

QJsonObject testGenerationToJson(const TestGenerationReport& report)
{
    QJsonObject out;
    out["schema_version"] = kTestRunJsonVersion;
    out["skill"] = report.skill;
    out["model"] = report.model;
    out["language"] = report.language;
    out["file_name"] = report.fileName;
    out["test_file_name"] = report.testFileName;
    out["toolchain"] = report.toolchain;
    out["code"] = report.code;
    out["kept_tests"] = report.keptTests;
    out["failing_tests"] = report.failingTests;
    out["failing"] = report.failing;
    out["kept"] = report.kept;
    out["discarded"] = report.discarded;
    QJsonObject coverage;
    coverage["measured"] = report.coverageMeasured;
    coverage["before"] = std::round(report.coverageBefore * 10.0) / 10.0;
    coverage["after"] = std::round(report.coverageAfter * 10.0) / 10.0;
    coverage["uncovered"] = report.uncoveredLines;
    out["coverage"] = coverage;
    out["summary"] = report.summary();
    out["problem"] = report.problem;
    out["answer"] = report.answer;
    if (!report.answerJson.isEmpty())
        out["answer_json"] = report.answerJson;
    out["cancelled"] = report.cancelled;
    out["seconds"] = report.seconds;
    QJsonArray rounds;
    for (const TestGenerationRound& r : report.rounds) {
        QJsonObject round;
        round["number"] = r.number;
        round["prompt"] = QJsonObject { { "system", r.prompt.system }, { "user", r.prompt.user } };
        round["answer"] = r.answer;
        round["tests"] = r.tests;
        round["parse_error"] = r.parseError;
        round["runs"] = r.stableRuns;
        round["run"] = testRunToJson(r.run);
        QJsonArray verdicts;
        for (const TestVerdict& v : r.verdicts)
            verdicts.append(
                QJsonObject { { "name", v.name }, { "kept", v.kept }, { "reason", v.reason },
                    { "new_lines", v.newLines }, { "suspects_code", v.suspectsCode } });
        round["verdicts"] = verdicts;
        round["coverage_after"] = std::round(r.coverageAfter * 10.0) / 10.0;
        round["prompt_tokens"] = qint64(r.promptTokens);
        round["reused_prompt_tokens"] = qint64(r.reusedPromptTokens);
        rounds.append(round);
    }
    out["rounds"] = rounds;
    if (!report.keptTests.isEmpty() && !report.testFileName.isEmpty())
        out["final_run"] = testRunToJson(report.finalRun);
    return out;
}

TestGenerationReport testGenerationFromJson(const QJsonObject& json)
{
    TestGenerationReport report;
    report.skill = json["skill"].toString();
    report.model = json["model"].toString();
    report.language = json["language"].toString();
    report.fileName = json["file_name"].toString();
    report.testFileName = json["test_file_name"].toString();
    report.toolchain = json["toolchain"].toString();
    report.code = json["code"].toString();
    report.keptTests = json["kept_tests"].toString();
    report.failingTests = json["failing_tests"].toString();
    report.failing = json["failing"].toInt();
    report.kept = json["kept"].toInt();
    report.discarded = json["discarded"].toInt();
    const QJsonObject coverage = json["coverage"].toObject();
    report.coverageMeasured = coverage["measured"].toBool();
    report.coverageBefore = coverage["before"].toDouble();
    report.coverageAfter = coverage["after"].toDouble();
    report.uncoveredLines = coverage["uncovered"].toString();
    report.problem = json["problem"].toString();
    report.answer = json["answer"].toString();
    report.answerJson = json["answer_json"].toObject();
    report.cancelled = json["cancelled"].toBool();
    report.seconds = json["seconds"].toDouble();
    for (const QJsonValue& v : json["rounds"].toArray()) {
        const QJsonObject r = v.toObject();
        TestGenerationRound round;
        round.number = r["number"].toInt();
        round.prompt.system = r["prompt"].toObject()["system"].toString();
        round.prompt.user = r["prompt"].toObject()["user"].toString();
        round.answer = r["answer"].toString();
        round.tests = r["tests"].toString();
        round.parseError = r["parse_error"].toString();
        round.stableRuns = r["runs"].toInt();
        round.run = runFromJson(r["run"].toObject());
        for (const QJsonValue& verdict : r["verdicts"].toArray()) {
            const QJsonObject o = verdict.toObject();
            round.verdicts.append({ o["name"].toString(), o["kept"].toBool(),
                o["reason"].toString(), o["new_lines"].toInt(), o["suspects_code"].toBool() });
        }
        round.coverageAfter = r["coverage_after"].toDouble();
        round.promptTokens = r["prompt_tokens"].toInteger();
        round.reusedPromptTokens = r["reused_prompt_tokens"].toInteger();
        report.rounds.append(round);
    }
    if (json.contains("final_run"))
        report.finalRun = runFromJson(json["final_run"].toObject());
    return report;
}

QString testRunText(const TestRunResult& run)
{
    QString text;
    if (!run.built) {
        text += QStringLiteral("BUILD FAILED\n") + run.buildOutput.trimmed() + '\n';
    }
    for (const TestCaseResult& c : run.cases) {
        const QString mark = c.outcome == TestOutcome::Passed ? QStringLiteral("PASS")
            : c.outcome == TestOutcome::Skipped               ? QStringLiteral("SKIP")
                                                              : QStringLiteral("FAIL");
        text += QStringLiteral("%1 %2 (%3 s)\n").arg(mark, c.name).arg(c.seconds, 0, 'f', 3);
        if (c.outcome == TestOutcome::Failed && !c.output.isEmpty()) {
            for (const QString& line : c.output.split('\n').mid(0, 30))
                text += QStringLiteral("    ") + line + '\n';
        }
    }
    if (!run.limitMessage.isEmpty())
        text += run.limitMessage + '\n';
    if (run.built && run.cases.isEmpty())
        text += QStringLiteral("no tests ran\n") + run.output.right(2000);
    text += QStringLiteral("%1 passed, %2 failed").arg(run.passed()).arg(run.failed());
    if (run.coverage.measured) {
        text += QStringLiteral("; line coverage %1%").arg(run.coverage.percent(), 0, 'f', 1);
        const QString missing = run.coverage.uncoveredRanges();
        if (!missing.isEmpty())
            text += QStringLiteral(" (not run: %1)").arg(missing);
    } else if (run.built) {
        text += QStringLiteral("; no coverage measured");
    }
    return text + '\n';
}

} // namespace cw
