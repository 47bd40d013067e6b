// libFuzzer target: the readers of a test run's output on any bytes never crash, and after
// addUnfinishedTests every test that started has exactly one result.
#include "app/test_runner/go_test_runner.h"
#include "app/test_runner/junit_report.h"
#include "app/test_runner/unfinished_tests.h"

#include <QByteArray>
#include <QSet>
#include <cstddef>
#include <cstdint>

namespace {

void checkEveryStartedTestHasOneResult(QList<cw::TestCaseResult> cases, const QStringList& started)
{
    cw::addUnfinishedTests(cases, started, QStringLiteral("stopped: fuzz"));
    QSet<QString> names;
    for (const cw::TestCaseResult& c : cases)
        names.insert(c.name);
    for (const QString& name : started) {
        if (!names.contains(name))
            __builtin_trap();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    const QString text = QString::fromUtf8(bytes);
    QStringList started;
    checkEveryStartedTestHasOneResult(cw::readGoogleTestProgress(text, started), started);
    started.clear();
    checkEveryStartedTestHasOneResult(cw::readPytestProgress(text, started), started);
    (void)cw::readGoTestOutput(text);
    (void)cw::readJUnitReport(bytes, size % 2 == 0);
    return 0;
}
