#include "app/test_runner/cpp_test_runner.h"

#include "app/test_runner/junit_report.h"
#include "app/test_runner/unfinished_tests.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

namespace cw {

namespace {

const QString kCompiler = QStringLiteral("/usr/bin/g++");
const QString kGcov = QStringLiteral("/usr/bin/gcov");
const QString kBinary = QStringLiteral("cw_tests");
const QString kCoverageUnit = QStringLiteral("cw_coverage_unit");
const QStringList kFlags = { "-std=c++20", "-O0", "-g", "--coverage", "-Wall",
    "-Dmain=cw_code_under_test_main", "-I/sandbox" };

bool haveGtest()
{
    if (!QFileInfo::exists("/usr/include/gtest/gtest.h"))
        return false;
    for (const char* dir :
        { "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib" }) {
        if (QFileInfo::exists(QString(dir) + "/libgtest.a")
            || QFileInfo::exists(QString(dir) + "/libgtest.so"))
            return true;
    }
    return false;
}

QString objectOf(const QString& source)
{
    return QFileInfo(source).completeBaseName() + ".o";
}

// gcov --json-format --stdout prints one JSON document per line (its warnings go to the
// same stream here, so lines that are not JSON are skipped).
void readGcov(const QByteArray& output, const QString& codeFile, LineCoverage& coverage)
{
    for (const QByteArray& line : output.split('\n')) {
        if (!line.startsWith('{'))
            continue;
        const QJsonArray files = QJsonDocument::fromJson(line).object().value("files").toArray();
        for (const QJsonValue& f : files) {
            const QJsonObject file = f.toObject();
            if (QFileInfo(file.value("file").toString()).fileName() != codeFile)
                continue;
            coverage.measured = true;
            for (const QJsonValue& l : file.value("lines").toArray()) {
                const QJsonObject entry = l.toObject();
                const int number = entry.value("line_number").toInt();
                coverage.executable.insert(number);
                if (entry.value("count").toDouble() > 0)
                    coverage.covered.insert(number);
            }
        }
    }
}

} // namespace

Result<QString> CppTestRunner::probe(const Sandbox& sandbox)
{
    if (!QFileInfo::exists(kCompiler))
        return makeError("g++ is not installed (apt install g++ libgtest-dev)");
    if (!haveGtest())
        return makeError("GoogleTest is not installed (apt install libgtest-dev)");
    QTemporaryDir temp;
    (void)Sandbox::prepareWorkDir(temp.path().toStdString());
    QString limit;
    const SandboxResult r = runSandboxed(
        sandbox, temp.path(), { kCompiler, "-dumpfullversion" }, sandbox.limits(), limit, {});
    if (!r.succeeded())
        return makeError("g++ does not run in the sandbox: " + limit.toStdString() + r.output);
    QString found = "g++ " + QString::fromStdString(r.output).trimmed() + ", GoogleTest";
    found += QFileInfo::exists(kGcov) ? QStringLiteral(", gcov")
                                      : QStringLiteral(" (no gcov: no coverage)");
    return found;
}

QString CppTestRunner::testFileName(const QString& codeFile, const QString&) const
{
    return "test_" + QFileInfo(codeFile).completeBaseName() + ".cpp";
}

void CppTestRunner::build(const Sandbox& sandbox, const TestFiles& files, TestRunResult& into,
    const CancelFlag& cancelled)
{
    const SandboxLimits limits = buildLimits(sandbox.limits());
    QStringList compile = QStringList { kCompiler } + kFlags
        + QStringList { "-c", files.testFile, "-o", objectOf(files.testFile) };
    SandboxResult r
        = runSandboxed(sandbox, files.dir, compile, limits, into.limitMessage, cancelled);
    into.buildOutput = QString::fromStdString(r.output);
    if (!r.succeeded())
        return;
    r = runSandboxed(sandbox, files.dir,
        { kCompiler, "--coverage", objectOf(files.testFile), "-o", kBinary, "-lgtest",
            "-lgtest_main", "-pthread" },
        limits, into.limitMessage, cancelled);
    into.buildOutput += QString::fromStdString(r.output);
    if (!r.succeeded())
        return;
    into.built = true;
    // The code alone with every inline function kept: its lines count even when no test
    // calls them. Only its notes file is used, so it is never linked.
    QFile unit(QDir(files.dir).filePath(kCoverageUnit + ".cpp"));
    if (unit.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        unit.write(QStringLiteral("#include \"%1\"\n").arg(files.codeFile).toUtf8());
        unit.close();
        (void)Sandbox::prepareWorkDir(files.dir.toStdString());
        QString ignored;
        runSandboxed(sandbox, files.dir,
            QStringList { kCompiler } + kFlags
                + QStringList { "-fkeep-inline-functions", "-fkeep-static-functions", "-c",
                    kCoverageUnit + ".cpp", "-o", kCoverageUnit + ".o" },
            limits, ignored, cancelled);
    }
}

void CppTestRunner::execute(const Sandbox& sandbox, const TestFiles& files, const QString& onlyTest,
    TestRunResult& into, const CancelFlag& cancelled)
{
    const QDir dir(files.dir);
    for (const QString& stale : dir.entryList({ "*.gcda", "report.xml" }, QDir::Files))
        QFile::remove(dir.filePath(stale));
    QStringList command = { "/sandbox/" + kBinary, "--gtest_output=xml:/sandbox/report.xml" };
    if (!onlyTest.isEmpty())
        command.append("--gtest_filter=" + onlyTest);
    const SandboxResult r
        = runSandboxed(sandbox, files.dir, command, sandbox.limits(), into.limitMessage, cancelled);
    into.output = QString::fromStdString(r.output);
    QFile report(dir.filePath("report.xml"));
    if (report.open(QIODevice::ReadOnly))
        into.cases = readJUnitReport(report.readAll(), true);
    if (!into.limitMessage.isEmpty()) {
        // Killed before GoogleTest wrote its report: its console lines tell which tests
        // finished and which one was running.
        QStringList started;
        const QList<TestCaseResult> printed = readGoogleTestProgress(into.output, started);
        if (into.cases.isEmpty())
            into.cases = printed;
        addUnfinishedTests(into.cases, started, into.limitMessage);
        return;
    }
    if (!QFileInfo::exists(kGcov))
        return;
    for (const QString& object : { objectOf(files.testFile), kCoverageUnit + ".o" }) {
        if (!QFileInfo::exists(dir.filePath(object)))
            continue;
        // Its report covers every header the test included: far more than a test prints.
        SandboxLimits limits = sandbox.limits();
        limits.outputBytes = 64u << 20;
        QString ignored;
        const SandboxResult g = runSandboxed(sandbox, files.dir,
            { kGcov, "--json-format", "--stdout", object }, limits, ignored, cancelled);
        readGcov(QByteArray::fromStdString(g.output), files.codeFile, into.coverage);
    }
}

} // namespace cw
