#include "app/test_runner/unfinished_tests.h"

#include <QRegularExpression>
#include <QSet>

namespace cw {

void addUnfinishedTests(
    QList<TestCaseResult>& cases, const QStringList& started, const QString& limitMessage)
{
    QSet<QString> finished;
    for (const TestCaseResult& c : cases)
        finished.insert(c.name);
    for (const QString& name : started) {
        if (finished.contains(name))
            continue;
        TestCaseResult unfinished;
        unfinished.name = name;
        unfinished.outcome = TestOutcome::Failed;
        unfinished.output = QString(kDidNotFinish)
            + (limitMessage.isEmpty() ? QStringLiteral("the run was stopped") : limitMessage);
        cases.append(unfinished);
        finished.insert(name);
    }
}

QList<TestCaseResult> readGoogleTestProgress(const QString& output, QStringList& started)
{
    static const QRegularExpression kLine(
        QStringLiteral(R"(^\[ *(RUN|OK|FAILED|SKIPPED) *\] (\S+\.\S+?)(?: \((\d+) ms\))?\s*$)"));
    QList<TestCaseResult> cases;
    QString running, printed;
    for (const QString& line : output.split('\n')) {
        const auto match = kLine.match(line);
        if (!match.hasMatch()) {
            if (!running.isEmpty())
                printed += line + '\n';
            continue;
        }
        const QString what = match.captured(1);
        const QString name = match.captured(2);
        if (what == QLatin1String("RUN")) {
            running = name;
            printed.clear();
            started.append(name);
            continue;
        }
        // The summary at the end repeats "[  FAILED  ] Suite.Name" without a time.
        if (name != running || match.captured(3).isEmpty())
            continue;
        TestCaseResult c;
        c.name = name;
        c.outcome = what == QLatin1String("OK") ? TestOutcome::Passed
            : what == QLatin1String("SKIPPED")  ? TestOutcome::Skipped
                                                : TestOutcome::Failed;
        c.seconds = match.captured(3).toDouble() / 1000.0;
        c.output = printed.trimmed();
        cases.append(c);
        running.clear();
    }
    return cases;
}

QList<TestCaseResult> readPytestProgress(const QString& log, QStringList& started)
{
    QList<TestCaseResult> cases;
    for (const QString& line : log.split('\n')) {
        const QStringList parts = line.split('\t');
        if (parts.size() < 2)
            continue;
        const QString name = parts[1].section(QStringLiteral("::"), -1);
        if (parts[0] == QLatin1String("start")) {
            started.append(name);
            continue;
        }
        TestCaseResult c;
        c.name = name;
        c.outcome = parts[0] == QLatin1String("passed") ? TestOutcome::Passed
            : parts[0] == QLatin1String("skipped")      ? TestOutcome::Skipped
                                                        : TestOutcome::Failed;
        c.seconds = parts.value(2).toDouble();
        cases.append(c);
    }
    return cases;
}

QByteArray pytestProgressPlugin()
{
    // A test's result is its call phase's, or its setup's where setup failed or skipped it.
    return QByteArrayLiteral(
        "# Written by Clausewright's test runner: each test's start and outcome, flushed at\n"
        "# once, so that a run stopped by a limit still tells which tests finished.\n"
        "_log = open('/sandbox/.cw_progress', 'a', buffering=1)\n"
        "\n"
        "def pytest_runtest_logstart(nodeid, location):\n"
        "    _log.write('start\\t%s\\n' % nodeid)\n"
        "    _log.flush()\n"
        "\n"
        "def pytest_runtest_logreport(report):\n"
        "    if report.when == 'call' or (report.when == 'setup' and report.outcome != 'passed'):\n"
        "        _log.write('%s\\t%s\\t%.3f\\n' % (report.outcome, report.nodeid, "
        "report.duration))\n"
        "        _log.flush()\n");
}

} // namespace cw
