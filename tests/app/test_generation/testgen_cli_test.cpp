// `clausewright-cli testgen` and `run-tests` as a user runs them: the repair loop with
// --replay answers and --run, the kept file written with --out, the generation saved in the
// history and found by testgen-history search, run-tests' text and JSON (checked against
// resources/schemas), and the refusals (no model, binary file, unknown language).
#include "tests/app/report/json_schema_check.h"
#include "tests/app/test_runner/sandbox_skip.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

namespace {

const QString kCli = QStringLiteral(CW_CLI_PATH);

struct CliResult {
    int exitCode = -1;
    QString out;
    QString err;
};

CliResult cli(const QStringList& args)
{
    QProcess process;
    process.start(kCli, args);
    process.waitForFinished(120000);
    return { process.exitCode(), QString::fromUtf8(process.readAllStandardOutput()),
        QString::fromUtf8(process.readAllStandardError()) };
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(bytes);
}

QStringList schemaProblems(const QString& schemaFile, const QString& json)
{
    QFile file(QStringLiteral(CW_SOURCE_DIR "/resources/schemas/") + schemaFile);
    if (!file.open(QIODevice::ReadOnly))
        return { "cannot read " + schemaFile };
    const cw::testing::JsonSchemaCheck check(QJsonDocument::fromJson(file.readAll()).object());
    return check.check(QJsonDocument::fromJson(json.toUtf8()).object());
}

} // namespace

class TestgenCliTest : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    bool m_canRun = false;

private slots:
    void initTestCase()
    {
        writeFile(m_dir.filePath("pricing.py"),
            "def discount(total, code):\n    if code == \"HALF\":\n        return total / 2\n"
            "    return total\n");
        const QJsonArray answers { "```python\nfrom pricing import discount\n\n\ndef test_half():\n"
                                   "    assert discount(10, 'HALF') == 4\n```\n",
            "```python\nfrom pricing import discount\n\n\ndef test_half():\n"
            "    assert discount(10, 'HALF') == 5\n\n\ndef test_none():\n"
            "    assert discount(10, '') == 10\n```\n" };
        writeFile(m_dir.filePath("answers.json"), QJsonDocument(answers).toJson());
        // Whether this machine can run Python tests in the sandbox at all.
        writeFile(m_dir.filePath("probe_test.py"), "def test_ok():\n    assert True\n");
        const CliResult probe = cli({ "run-tests", "--code", m_dir.filePath("pricing.py"),
            "--tests", m_dir.filePath("probe_test.py") });
        m_canRun = probe.exitCode == 0;
        if (!m_canRun)
            qWarning("sandboxed Python runs unavailable: %s", qPrintable(probe.err));
    }

    void generatesRepairsAndKeeps()
    {
        if (!m_canRun)
            CW_SKIP_NO_SANDBOX("no bubblewrap, pytest or coverage.py here");
        const QString out = m_dir.filePath("test_pricing.py");
        const QString db = m_dir.filePath("history.sqlite");
        const CliResult r = cli({ "testgen", "--file", m_dir.filePath("pricing.py"), "--replay",
            m_dir.filePath("answers.json"), "--run", "--rounds", "3", "--out", out, "--db", db,
            "--format", "json" });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("2 kept, 1 discarded; coverage 0% -> 100%; 2 rounds"),
            qPrintable(r.err));
        const QStringList problems = schemaProblems("testgen.schema.json", r.out);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
        const QJsonObject json = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(json["rounds"].toArray().size(), 2);
        QCOMPARE(json["rounds"]
                     .toArray()[0]
                     .toObject()["verdicts"]
                     .toArray()[0]
                     .toObject()["reason"]
                     .toString(),
            QString("fails: the code may be wrong here"));
        QCOMPARE(json["failing"].toInt(), 0); // round 2's passing test_half replaced it
        QFile kept(out);
        QVERIFY(kept.open(QIODevice::ReadOnly));
        const QString tests = QString::fromUtf8(kept.readAll());
        QVERIFY(tests.contains("def test_none():"));
        QCOMPARE(tests, json["kept_tests"].toString());

        const CliResult found = cli({ "testgen-history", "--db", db, "search", "discount" });
        QCOMPARE(found.exitCode, 0);
        QVERIFY2(found.out.contains("pricing.py") && found.out.contains("python-pytest"),
            qPrintable(found.out));
        const CliResult shown = cli({ "testgen-history", "--db", db, "show", "1", "--json" });
        QCOMPARE(
            QJsonDocument::fromJson(shown.out.toUtf8()).object()["kept_tests"].toString(), tests);

        // The kept file passes on its own with the runner alone.
        const CliResult run
            = cli({ "run-tests", "--code", m_dir.filePath("pricing.py"), "--tests", out });
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.out.contains("PASS test_half") && run.out.contains("line coverage 100.0%"),
            qPrintable(run.out));
    }

    // With --run, a generation whose every test fails keeps none: exit 1, said on standard
    // error, and --out is not written.
    void keepingNoTestExitsOneAndWritesNothing()
    {
        if (!m_canRun)
            CW_SKIP_NO_SANDBOX("no bubblewrap, pytest or coverage.py here");
        const QJsonArray answers {
            "```python\nfrom pricing import discount\n\n\n"
            "def test_half():\n    assert discount(10, 'HALF') == 4\n```\n"
        };
        writeFile(m_dir.filePath("failing_answers.json"), QJsonDocument(answers).toJson());
        const QString out = m_dir.filePath("never_written.py");
        const CliResult r = cli({ "testgen", "--file", m_dir.filePath("pricing.py"), "--replay",
            m_dir.filePath("failing_answers.json"), "--run", "--rounds", "1", "--out", out,
            "--no-history" });
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(
            r.err.contains("no generated test passed, so none was kept and "), qPrintable(r.err));
        QVERIFY(!QFile::exists(out));
        QVERIFY2(r.out.isEmpty(), qPrintable(r.out));
    }

    // A generated test whose assertion fails against the code is shown, not dropped: the
    // code halves nothing, as its docstring says it should.
    void showsATestThatFailsAgainstTheCode()
    {
        if (!m_canRun)
            CW_SKIP_NO_SANDBOX("no bubblewrap, pytest or coverage.py here");
        writeFile(m_dir.filePath("halving.py"),
            "def half(total):\n    \"\"\"Half of total.\"\"\"\n    return total / 3\n\n\n"
            "def same(total):\n    return total\n");
        const QJsonArray answers { "```python\nfrom halving import half, same\n\n\n"
                                   "def test_half():\n    assert half(10) == 5\n\n\n"
                                   "def test_same():\n    assert same(4) == 4\n```\n" };
        writeFile(m_dir.filePath("halving_answers.json"), QJsonDocument(answers).toJson());
        const CliResult r = cli({ "testgen", "--file", m_dir.filePath("halving.py"), "--replay",
            m_dir.filePath("halving_answers.json"), "--run", "--rounds", "1", "--no-history",
            "--format", "json" });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QStringList problems = schemaProblems("testgen.schema.json", r.out);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
        const QJsonObject json = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(json["kept"].toInt(), 1);
        QCOMPARE(json["failing"].toInt(), 1);
        QVERIFY(json["failing_tests"].toString().contains("def test_half():"));
        QVERIFY(!json["kept_tests"].toString().contains("test_half"));
        const QJsonObject verdict
            = json["rounds"].toArray()[0].toObject()["verdicts"].toArray()[0].toObject();
        QCOMPARE(verdict["reason"].toString(), QString("fails: the code may be wrong here"));
        QVERIFY(verdict["suspects_code"].toBool());
        QVERIFY2(r.err.contains("1 generated test fails against the code: the code may be wrong"),
            qPrintable(r.err));
        QVERIFY2(r.err.contains("assert half(10) == 5"), qPrintable(r.err));
    }

    // --format json always prints JSON: without --run, an answer that cannot be read, and an
    // error before any answer.
    void jsonFormatAlwaysPrintsJson()
    {
        const CliResult unverified = cli({ "testgen", "--file", m_dir.filePath("pricing.py"),
            "--replay", m_dir.filePath("answers.json"), "--no-history", "--format", "json" });
        QVERIFY2(unverified.exitCode == 0, qPrintable(unverified.err));
        const QJsonObject shown = QJsonDocument::fromJson(unverified.out.toUtf8()).object();
        QVERIFY2(shown["kept_tests"].toString().contains("def test_half():"),
            qPrintable(unverified.out));
        QVERIFY(schemaProblems("testgen.schema.json", unverified.out).isEmpty());

        writeFile(m_dir.filePath("prose.json"), R"(["I would test the discount function."])");
        const CliResult unreadable = cli({ "testgen", "--file", m_dir.filePath("pricing.py"),
            "--replay", m_dir.filePath("prose.json"), "--no-history", "--format", "json" });
        QCOMPARE(unreadable.exitCode, 1);
        const QJsonObject prose = QJsonDocument::fromJson(unreadable.out.toUtf8()).object();
        QVERIFY2(
            prose["problem"].toString().contains("could not be read"), qPrintable(unreadable.out));
        QVERIFY(!prose["rounds"].toArray()[0].toObject()["parse_error"].toString().isEmpty());
        QCOMPARE(prose["answer"].toString(), QString("I would test the discount function."));

        const CliResult noModel
            = cli({ "testgen", "--file", m_dir.filePath("pricing.py"), "--format", "json" });
        QCOMPARE(noModel.exitCode, 2);
        const QJsonObject error = QJsonDocument::fromJson(noModel.out.toUtf8()).object();
        QVERIFY2(error["error"].toString().contains("a model is needed"), qPrintable(noModel.out));
    }

    void runTestsReportsFailuresAsJson()
    {
        if (!m_canRun)
            CW_SKIP_NO_SANDBOX("no bubblewrap, pytest or coverage.py here");
        writeFile(m_dir.filePath("failing_test.py"),
            "from pricing import discount\n\n\ndef test_wrong():\n    assert discount(4, 'HALF') "
            "== 3\n");
        const CliResult r = cli({ "run-tests", "--code", m_dir.filePath("pricing.py"), "--tests",
            m_dir.filePath("failing_test.py"), "--format", "json" });
        QCOMPARE(r.exitCode, 1);
        const QStringList problems = schemaProblems("run-tests.schema.json", r.out);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
        const QJsonObject json = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(json["failed"].toInt(), 1);
        // Run under the user's own file name, not the runner's test_pricing.py.
        QCOMPARE(json["test_file"].toString(), QString("failing_test.py"));
        QVERIFY2(!r.out.contains("test_pricing.py"), qPrintable(r.out));
        QCOMPARE(json["tests"].toArray()[0].toObject()["outcome"].toString(), QString("failed"));
        QVERIFY(
            json["tests"].toArray()[0].toObject()["output"].toString().contains("assert 2.0 == 3"));
        QCOMPARE(json["coverage"].toObject()["uncovered"].toString(), QString("4"));
    }

    void refusesWhatItCannotDo()
    {
        const CliResult noModel = cli({ "testgen", "--file", m_dir.filePath("pricing.py") });
        QCOMPARE(noModel.exitCode, 2);
        QVERIFY(noModel.err.contains("a model is needed to generate"));
        writeFile(m_dir.filePath("blob.py"),
            QByteArray("\x7f"
                       "ELF\0\0\1",
                7));
        const CliResult binary = cli({ "run-tests", "--code", m_dir.filePath("blob.py"), "--tests",
            m_dir.filePath("blob.py") });
        QCOMPARE(binary.exitCode, 1);
        QVERIFY2(binary.err.contains("blob.py: a binary file"), qPrintable(binary.err));
        writeFile(m_dir.filePath("notes"), "Lorem ipsum dolor sit amet.\n");
        const CliResult unknown = cli(
            { "run-tests", "--code", m_dir.filePath("notes"), "--tests", m_dir.filePath("notes") });
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY(unknown.err.contains("cannot tell its language"));
        const CliResult badSkill = cli({ "testgen", "--file", m_dir.filePath("pricing.py"),
            "--skill", "nope", "--replay", m_dir.filePath("answers.json") });
        QCOMPARE(badSkill.exitCode, 2);
        QVERIFY(badSkill.err.contains("no skill named 'nope'"));
    }
};

CW_SANDBOX_TEST_MAIN(TestgenCliTest)
#include "testgen_cli_test.moc"
