#include "app/test_runner/node_test_runner.h"

#include "app/test_runner/junit_report.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QVersionNumber>

namespace cw {

namespace {

const QString kNode = QStringLiteral("/usr/bin/node");

bool isModule(const QString& codeFile, const QString& code)
{
    static const QRegularExpression kExport(
        QStringLiteral(R"(^\s*export\s)"), QRegularExpression::MultilineOption);
    return codeFile.endsWith(".mjs") || codeFile.endsWith(".mts") || kExport.match(code).hasMatch();
}

} // namespace

LineCoverage readNodeCoverage(const QString& output, const QString& codeFile, int lineCount)
{
    LineCoverage coverage;
    for (const QString& raw : output.split('\n')) {
        const QStringList cells = raw.mid(raw.indexOf(' ') + 1).split('|');
        if (cells.size() < 5 || cells[0].trimmed() != codeFile)
            continue;
        coverage.measured = true;
        for (int line = 1; line <= lineCount; ++line)
            coverage.executable.insert(line);
        coverage.covered = coverage.executable;
        for (const QString& range : cells[4].split(' ', Qt::SkipEmptyParts)) {
            const int from = range.section('-', 0, 0).toInt();
            const int to = range.contains('-') ? range.section('-', 1, 1).toInt() : from;
            for (int line = from; line <= to; ++line)
                coverage.covered.remove(line);
        }
    }
    return coverage;
}

QStringList NodeTestRunner::nodeFlags() const
{
    if (m_language == "typescript")
        return { "--experimental-strip-types", "--no-warnings" };
    return {};
}

Result<QString> NodeTestRunner::probe(const Sandbox& sandbox)
{
    if (!QFileInfo::exists(kNode))
        return makeError("node is not installed (apt install nodejs)");
    QTemporaryDir temp;
    (void)Sandbox::prepareWorkDir(temp.path().toStdString());
    QString limit;
    const SandboxResult r
        = runSandboxed(sandbox, temp.path(), { kNode, "--version" }, sandbox.limits(), limit, {});
    if (!r.succeeded())
        return makeError("node does not run in the sandbox: " + limit.toStdString() + r.output);
    const QString version = QString::fromStdString(r.output).trimmed();
    const QVersionNumber number = QVersionNumber::fromString(version.mid(1));
    if (number < QVersionNumber(20))
        return makeError("node " + version.toStdString()
            + " is too old for node:test coverage (needs 20 or newer)");
    if (m_language == "typescript" && number < QVersionNumber(22, 6))
        return makeError("node " + version.toStdString()
            + " cannot run TypeScript (--experimental-strip-types needs node 22.6 or newer)");
    return "node " + version;
}

QString NodeTestRunner::testFileName(const QString& codeFile, const QString& code) const
{
    const QString base = QFileInfo(codeFile).completeBaseName();
    if (m_language == "typescript")
        return base + (isModule(codeFile, code) ? ".test.mts" : ".test.ts");
    return base + (isModule(codeFile, code) ? ".test.mjs" : ".test.js");
}

void NodeTestRunner::build(const Sandbox& sandbox, const TestFiles& files, TestRunResult& into,
    const CancelFlag& cancelled)
{
    if (m_language == "typescript") {
        into.built = true; // node strips the types as it loads; errors show in the run
        return;
    }
    const SandboxResult r = runSandboxed(sandbox, files.dir,
        QStringList { kNode } + nodeFlags() + QStringList { "--check", files.testFile },
        sandbox.limits(), into.limitMessage, cancelled);
    into.buildOutput = QString::fromStdString(r.output);
    into.built = r.succeeded();
}

void NodeTestRunner::execute(const Sandbox& sandbox, const TestFiles& files,
    const QString& onlyTest, TestRunResult& into, const CancelFlag& cancelled)
{
    const QDir dir(files.dir);
    QFile::remove(dir.filePath("report.xml"));
    QStringList command = QStringList { kNode } + nodeFlags()
        + QStringList { "--test", "--experimental-test-coverage", "--test-reporter=junit",
              "--test-reporter-destination=/sandbox/report.xml", "--test-reporter=tap",
              "--test-reporter-destination=stdout" };
    if (!onlyTest.isEmpty())
        command.append("--test-name-pattern=^" + QRegularExpression::escape(onlyTest) + "$");
    command.append(files.testFile);
    const SandboxResult r
        = runSandboxed(sandbox, files.dir, command, sandbox.limits(), into.limitMessage, cancelled);
    into.output = QString::fromStdString(r.output);
    QFile report(dir.filePath("report.xml"));
    if (report.open(QIODevice::ReadOnly))
        into.cases = readJUnitReport(report.readAll(), false);
    // node lists the tests a name pattern left out as skipped.
    if (!onlyTest.isEmpty())
        into.cases.removeIf([&](const TestCaseResult& c) { return c.name != onlyTest; });
    QStringList lines = files.code.split('\n');
    if (!lines.isEmpty() && lines.last().isEmpty())
        lines.removeLast();
    into.coverage = readNodeCoverage(into.output, files.codeFile, int(lines.size()));
}

} // namespace cw
