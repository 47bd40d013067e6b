#include "app/test_runner/test_run_types.h"

#include <algorithm>

namespace cw {

QString testOutcomeName(TestOutcome outcome)
{
    switch (outcome) {
    case TestOutcome::Passed:
        return QStringLiteral("passed");
    case TestOutcome::Failed:
        return QStringLiteral("failed");
    case TestOutcome::Skipped:
        return QStringLiteral("skipped");
    }
    return {};
}

QString LineCoverage::uncoveredRanges() const
{
    QList<int> missing;
    for (int line : executable) {
        if (!covered.contains(line))
            missing.append(line);
    }
    std::sort(missing.begin(), missing.end());
    QStringList ranges;
    for (qsizetype i = 0; i < missing.size();) {
        qsizetype j = i;
        while (j + 1 < missing.size() && missing[j + 1] == missing[j] + 1)
            ++j;
        ranges.append(j == i ? QString::number(missing[i])
                             : QStringLiteral("%1-%2").arg(missing[i]).arg(missing[j]));
        i = j + 1;
    }
    return ranges.join(QStringLiteral(", "));
}

int TestRunResult::passed() const
{
    return int(std::count_if(cases.begin(), cases.end(),
        [](const TestCaseResult& c) { return c.outcome == TestOutcome::Passed; }));
}

int TestRunResult::failed() const
{
    return int(std::count_if(cases.begin(), cases.end(),
        [](const TestCaseResult& c) { return c.outcome == TestOutcome::Failed; }));
}

QString TestRunResult::failureReport(int maxChars) const
{
    QString report;
    if (!limitMessage.isEmpty())
        report += limitMessage + '\n';
    if (!built) {
        report += QStringLiteral("The test file did not build:\n") + buildOutput.right(maxChars);
        return report.left(maxChars);
    }
    if (cases.isEmpty())
        report += QStringLiteral("No tests ran.\n") + output.right(maxChars / 2);
    for (const TestCaseResult& c : cases) {
        if (c.outcome != TestOutcome::Failed)
            continue;
        report += QStringLiteral("Test %1 failed:\n%2\n").arg(c.name, c.output.right(1500));
    }
    return report.left(maxChars);
}

} // namespace cw
