#include "app/test_runner/python_test_runner.h"

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

const QString kPython = QStringLiteral("/usr/bin/python3");
const QList<QPair<QString, QString>> kEnvironment
    = { { "PYTHONDONTWRITEBYTECODE", "1" }, { "PYTHONHASHSEED", "0" } };

QByteArray readFile(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Coverage's per-line contexts name the test function ("test_pricing.test_total"); the
// junit report names it "test_total" (or "test_total[3]" when parametrized).
QString functionOf(const QString& context)
{
    return context.section('|', 0, 0).section('.', -1);
}

void readCoverage(const QByteArray& json, const QString& codeFile, TestRunResult& into)
{
    const QJsonObject files = QJsonDocument::fromJson(json).object().value("files").toObject();
    for (auto it = files.begin(); it != files.end(); ++it) {
        if (QFileInfo(it.key()).fileName() != codeFile)
            continue;
        const QJsonObject file = it.value().toObject();
        into.coverage.measured = true;
        for (const QJsonValue& v : file.value("executed_lines").toArray()) {
            into.coverage.covered.insert(v.toInt());
            into.coverage.executable.insert(v.toInt());
        }
        for (const QJsonValue& v : file.value("missing_lines").toArray())
            into.coverage.executable.insert(v.toInt());
        const QJsonObject contexts = file.value("contexts").toObject();
        for (auto c = contexts.begin(); c != contexts.end(); ++c) {
            for (const QJsonValue& name : c.value().toArray()) {
                if (!name.toString().isEmpty())
                    into.coverageByTest[functionOf(name.toString())].insert(c.key().toInt());
            }
        }
    }
    if (!into.coverage.measured && !files.isEmpty())
        into.coverage.measured = true; // measured, and nothing of the file ran
}

} // namespace

Result<QString> PythonTestRunner::probe(const Sandbox& sandbox)
{
    if (!QFileInfo::exists(kPython))
        return makeError("python3 is not installed (apt install python3 python3-pytest "
                         "python3-coverage)");
    QTemporaryDir temp;
    const QString dir = temp.path();
    (void)Sandbox::prepareWorkDir(dir.toStdString());
    QString limit;
    const SandboxResult r = runSandboxed(sandbox, dir,
        { kPython, "-c",
            "import sys, pytest, coverage; print('python3 %s, pytest %s, coverage %s' % "
            "(sys.version.split()[0], pytest.__version__, coverage.__version__))" },
        sandbox.limits(), limit, {});
    if (!limit.isEmpty())
        return makeError("python3 in the sandbox: " + limit.toStdString());
    if (!r.succeeded())
        return makeError("pytest or coverage.py is missing for /usr/bin/python3 (apt install "
                         "python3-pytest python3-coverage)");
    return QString::fromStdString(r.output).trimmed();
}

QString PythonTestRunner::testFileName(const QString& codeFile, const QString&) const
{
    return "test_" + QFileInfo(codeFile).completeBaseName() + ".py";
}

void PythonTestRunner::build(const Sandbox& sandbox, const TestFiles& files, TestRunResult& into,
    const CancelFlag& cancelled)
{
    const SandboxResult r = runSandboxed(sandbox, files.dir,
        { kPython, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
            files.testFile },
        sandbox.limits(), into.limitMessage, cancelled, kEnvironment);
    into.buildOutput = QString::fromStdString(r.output);
    // 0: tests collected; 5: none found (built, and the run will say no tests ran).
    into.built = into.limitMessage.isEmpty() && (r.exitCode == 0 || r.exitCode == 5);
}

void PythonTestRunner::execute(const Sandbox& sandbox, const TestFiles& files,
    const QString& onlyTest, TestRunResult& into, const CancelFlag& cancelled)
{
    QFile rc(QDir(files.dir).filePath(".coveragerc"));
    if (rc.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        rc.write(QStringLiteral("[run]\ndata_file = /sandbox/.coverage\ninclude = /sandbox/%1\n"
                                "dynamic_context = test_function\n")
                     .arg(files.codeFile)
                     .toUtf8());
        rc.close();
    }
    // The plugin that logs each test as it starts and ends (pytestProgressPlugin).
    QFile plugin(QDir(files.dir).filePath("cw_progress.py"));
    if (plugin.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        plugin.write(pytestProgressPlugin());
        plugin.close();
    }
    QFile::remove(QDir(files.dir).filePath(".cw_progress"));
    (void)Sandbox::prepareWorkDir(files.dir.toStdString());
    QFile::remove(QDir(files.dir).filePath("report.xml"));
    QFile::remove(QDir(files.dir).filePath("coverage.json"));
    QFile::remove(QDir(files.dir).filePath(".coverage"));
    const QString target = onlyTest.isEmpty() ? files.testFile : files.testFile + "::" + onlyTest;
    const SandboxResult r = runSandboxed(sandbox, files.dir,
        { kPython, "-m", "coverage", "run", "--rcfile=/sandbox/.coveragerc", "-m", "pytest", "-q",
            "-p", "no:cacheprovider", "-p", "cw_progress", "--junitxml=/sandbox/report.xml",
            target },
        sandbox.limits(), into.limitMessage, cancelled,
        kEnvironment + QList<QPair<QString, QString>> { { "PYTHONPATH", "/sandbox" } });
    into.output = QString::fromStdString(r.output);
    into.cases = readJUnitReport(readFile(QDir(files.dir).filePath("report.xml")), false);
    if (!into.limitMessage.isEmpty()) {
        // Killed before pytest wrote its report: what the plugin logged, and the test that
        // was running named as the one that did not finish.
        QStringList started;
        const QList<TestCaseResult> logged = readPytestProgress(
            QString::fromUtf8(readFile(QDir(files.dir).filePath(".cw_progress"))), started);
        if (into.cases.isEmpty())
            into.cases = logged;
        addUnfinishedTests(into.cases, started, into.limitMessage);
        return;
    }
    QString limit;
    runSandboxed(sandbox, files.dir,
        { kPython, "-m", "coverage", "json", "--rcfile=/sandbox/.coveragerc", "--show-contexts",
            "-o", "/sandbox/coverage.json" },
        sandbox.limits(), limit, cancelled, kEnvironment);
    readCoverage(readFile(QDir(files.dir).filePath("coverage.json")), files.codeFile, into);
}

} // namespace cw
