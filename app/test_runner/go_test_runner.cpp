#include "app/test_runner/go_test_runner.h"

#include "app/test_runner/unfinished_tests.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTemporaryDir>

namespace cw {

namespace {

const QString kGo = QStringLiteral("/usr/bin/go");
const QList<QPair<QString, QString>> kEnvironment = { { "GOCACHE", "/sandbox/.gocache" },
    { "GOPATH", "/sandbox/.gopath" }, { "GOFLAGS", "-mod=mod" }, { "GOTOOLCHAIN", "local" },
    { "GOPROXY", "off" }, { "CGO_ENABLED", "0" } };

} // namespace

QList<TestCaseResult> readGoTestOutput(const QString& output)
{
    static const QRegularExpression kResult(
        QStringLiteral(R"(^\s*--- (PASS|FAIL|SKIP): (\S+) \(([\d.]+)s\))"));
    QList<TestCaseResult> out;
    QMap<QString, QString> printed;
    QString running;
    for (const QString& line : output.split('\n')) {
        if (line.startsWith(QLatin1String("=== RUN   "))) {
            running = line.mid(10).trimmed();
            continue;
        }
        const auto match = kResult.match(line);
        if (!match.hasMatch()) {
            if (!running.isEmpty() && !line.startsWith(QLatin1String("=== ")))
                printed[running] += line + '\n';
            continue;
        }
        TestCaseResult c;
        c.name = match.captured(2);
        c.outcome = match.captured(1) == "PASS" ? TestOutcome::Passed
            : match.captured(1) == "SKIP"       ? TestOutcome::Skipped
                                                : TestOutcome::Failed;
        c.seconds = match.captured(3).toDouble();
        c.output = printed.value(c.name).trimmed();
        out.append(c);
    }
    return out;
}

LineCoverage readGoCoverProfile(const QString& profile, const QString& codeFile)
{
    static const QRegularExpression kBlock(
        QStringLiteral(R"(^(.+):(\d+)\.\d+,(\d+)\.\d+ \d+ (\d+)$)"));
    LineCoverage coverage;
    for (const QString& line : profile.split('\n')) {
        const auto match = kBlock.match(line.trimmed());
        if (!match.hasMatch() || QFileInfo(match.captured(1)).fileName() != codeFile)
            continue;
        coverage.measured = true;
        const int from = match.captured(2).toInt();
        const int to = match.captured(3).toInt();
        const bool ran = match.captured(4).toInt() > 0;
        for (int n = from; n <= to; ++n) {
            coverage.executable.insert(n);
            if (ran)
                coverage.covered.insert(n);
        }
    }
    return coverage;
}

Result<QString> GoTestRunner::probe(const Sandbox& sandbox)
{
    if (!QFileInfo::exists(kGo))
        return makeError("go is not installed (apt install golang-go)");
    QTemporaryDir temp;
    (void)Sandbox::prepareWorkDir(temp.path().toStdString());
    QString limit;
    const SandboxResult r = runSandboxed(
        sandbox, temp.path(), { kGo, "version" }, sandbox.limits(), limit, {}, kEnvironment);
    if (!r.succeeded())
        return makeError("go does not run in the sandbox: " + limit.toStdString() + r.output);
    return QString::fromStdString(r.output).trimmed();
}

QString GoTestRunner::testFileName(const QString& codeFile, const QString&) const
{
    return QFileInfo(codeFile).completeBaseName() + "_test.go";
}

void GoTestRunner::build(const Sandbox& sandbox, const TestFiles& files, TestRunResult& into,
    const CancelFlag& cancelled)
{
    QFile mod(QDir(files.dir).filePath("go.mod"));
    if (mod.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        mod.write("module sandbox\n\ngo 1.18\n");
        mod.close();
    }
    (void)Sandbox::prepareWorkDir(files.dir.toStdString());
    const SandboxResult r = runSandboxed(sandbox, files.dir,
        { kGo, "test", "-c", "-cover", "-covermode=set", "-o", "cw_tests" },
        buildLimits(sandbox.limits()), into.limitMessage, cancelled, kEnvironment);
    into.buildOutput = QString::fromStdString(r.output);
    into.built = r.succeeded() && QFileInfo::exists(QDir(files.dir).filePath("cw_tests"));
}

void GoTestRunner::execute(const Sandbox& sandbox, const TestFiles& files, const QString& onlyTest,
    TestRunResult& into, const CancelFlag& cancelled)
{
    const QDir dir(files.dir);
    QFile::remove(dir.filePath("cover.out"));
    QStringList command
        = { "/sandbox/cw_tests", "-test.v", "-test.coverprofile=/sandbox/cover.out" };
    if (!onlyTest.isEmpty())
        command.append("-test.run=^" + QRegularExpression::escape(onlyTest) + "$");
    const SandboxResult r = runSandboxed(
        sandbox, files.dir, command, sandbox.limits(), into.limitMessage, cancelled, kEnvironment);
    into.output = QString::fromStdString(r.output);
    into.cases = readGoTestOutput(into.output);
    if (!into.limitMessage.isEmpty()) {
        // The test that was running when a limit stopped the binary has "=== RUN" only.
        static const QRegularExpression kRun(
            QStringLiteral(R"(^=== RUN\s+(\S+)\s*$)"), QRegularExpression::MultilineOption);
        QStringList started;
        for (auto it = kRun.globalMatch(into.output); it.hasNext();)
            started.append(it.next().captured(1));
        addUnfinishedTests(into.cases, started, into.limitMessage);
    }
    QFile profile(dir.filePath("cover.out"));
    if (profile.open(QIODevice::ReadOnly))
        into.coverage = readGoCoverProfile(QString::fromUtf8(profile.readAll()), files.codeFile);
}

} // namespace cw
