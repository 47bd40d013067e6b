#pragma once

#include <QList>
#include <QMap>
#include <QSet>
#include <QString>
#include <QStringList>

namespace cw {

enum class TestOutcome { Passed, Failed, Skipped };

QString testOutcomeName(TestOutcome outcome); // passed, failed, skipped

struct TestCaseResult {
    QString name; // as the framework names it: test_total, PricingTest.Discount, TestParse
    TestOutcome outcome = TestOutcome::Failed;
    QString output; // failure message and what the test printed
    double seconds = 0.0;
};

// Line coverage of the code under test (1-based line numbers of its file).
struct LineCoverage {
    bool measured = false; // false: the toolchain gives none here
    QSet<int> executable; // lines that can run
    QSet<int> covered; // lines that ran
    double percent() const
    {
        return executable.isEmpty() ? 0.0
                                    : 100.0 * double(covered.size()) / double(executable.size());
    }
    // "3-5, 9" for the executable lines not covered.
    QString uncoveredRanges() const;
};

// One run of a test file: did it build, each test's result, coverage.
struct TestRunResult {
    QString language;
    QString toolchain; // "python3 3.11.2, pytest 7.2.1, coverage 6.5.0"
    bool built = false; // compiled (C++, Go) or collected without errors (Python, JS)
    QString buildOutput; // the compiler's or collector's messages
    QList<TestCaseResult> cases;
    LineCoverage coverage;
    QMap<QString, QSet<int>> coverageByTest; // where one run tells which test ran which line
    QString limitMessage; // a sandbox limit that stopped it, one line; empty if none
    QString output; // the run's whole output (capped)
    double seconds = 0.0;

    int passed() const;
    int failed() const;
    bool allPassed() const
    {
        return built && limitMessage.isEmpty() && failed() == 0 && !cases.isEmpty();
    }
    // The failures for a person or a model: build errors, or each failing test and its output.
    QString failureReport(int maxChars = 6000) const;
};

} // namespace cw
