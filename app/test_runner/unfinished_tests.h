#pragma once

// A run that a limit stopped (a test that hangs, loops or prints without end) still reports
// what it got through: the tests that finished keep their results, and the test that was
// running is named as the one that did not finish. The frameworks' own reports (JUnit XML)
// are written only at the end, so the results come from what each framework prints, or
// writes, while it runs.
#include "app/test_runner/test_run_types.h"

namespace cw {

// What the output of a case that did not finish starts with; the limit's message follows.
inline constexpr QLatin1StringView kDidNotFinish { "did not finish: " };

// Adds a failed case for each name in `started` that has no result in `cases` (in order),
// its output saying it did not finish and why (`limitMessage`, e.g. "stopped: ran past the
// 30 s wall-time limit").
void addUnfinishedTests(
    QList<TestCaseResult>& cases, const QStringList& started, const QString& limitMessage);

// GoogleTest's console lines: "[ RUN      ] Suite.Name", "[       OK ] Suite.Name (3 ms)",
// "[  FAILED  ] ...", "[  SKIPPED ] ..."; `started` gets every test that began.
QList<TestCaseResult> readGoogleTestProgress(const QString& output, QStringList& started);

// The lines the pytest plugin of the Python runner writes as it goes: "start\tNODEID" when a
// test begins, "OUTCOME\tNODEID\tSECONDS" when it ends (outcome passed, failed or skipped).
// Names are the node id's last part, as the JUnit report gives them ("test_total[3]").
QList<TestCaseResult> readPytestProgress(const QString& log, QStringList& started);

// The pytest plugin itself (cw_progress.py): appends those lines to /sandbox/.cw_progress,
// flushed at once, so that they survive the run being killed.
QByteArray pytestProgressPlugin();

} // namespace cw
