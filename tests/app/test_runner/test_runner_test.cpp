// Each language's runner on a small module and a test file with a passing and a failing
// test: per-test results, build errors, line coverage. A language whose toolchain is not on
// the machine is skipped (QSKIP), never failed.
#include "app/test_runner/code_language.h"
#include "app/test_runner/go_test_runner.h"
#include "app/test_runner/node_test_runner.h"
#include "app/test_runner/test_workspace.h"
#include "app/test_runner/unfinished_tests.h"
#include "tests/app/test_runner/sandbox_skip.h"

#include <QtTest>

using namespace cw;

namespace {

struct LanguageCase {
    QString code;
    QString fileName;
    QString tests; // one passing test (first), one failing
    QString broken; // a test file that does not build
    QString passing, failing; // the tests' names
    int uncoveredLine; // a line only the failing test would cover... or none runs
};

LanguageCase caseFor(const QString& language)
{
    if (language == "python")
        return { "def add(a, b):\n    return a + b\n\n\ndef clamp(x):\n    if x > 10:\n"
                 "        return 10\n    return x\n",
            "calc.py",
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
            "def test_wrong():\n    print('checking')\n    assert add(2, 2) == 5\n",
            "def test_x(:\n    pass\n", "test_add", "test_wrong", 7 };
    if (language == "cpp")
        return { "#pragma once\ninline int add(int a, int b) { return a + b; }\n"
                 "inline int clamp(int x)\n{\n    if (x > 10)\n        return 10;\n"
                 "    return x;\n}\n",
            "calc.h",
            "#include \"calc.h\"\n#include <gtest/gtest.h>\n"
            "TEST(Calc, Add) { EXPECT_EQ(add(2, 3), 5); }\n"
            "TEST(Calc, Wrong) { EXPECT_EQ(add(2, 2), 5); }\n",
            "#include \"calc.h\"\n#include <gtest/gtest.h>\nTEST(Calc, Add) { EXPECT_EQ(ad(2, 3), "
            "5); }\n",
            "Calc.Add", "Calc.Wrong", 6 };
    if (language == "javascript")
        return { "function add(a, b) {\n  return a + b;\n}\nfunction clamp(x) {\n  if (x > 10)\n"
                 "    return 10;\n  return x;\n}\nmodule.exports = { add, clamp };\n",
            "calc.js",
            "const test = require('node:test');\nconst assert = require('node:assert/strict');\n"
            "const { add } = require('./calc.js');\n"
            "test('adds', () => { assert.equal(add(2, 3), 5); });\n"
            "test('wrong', () => { assert.equal(add(2, 2), 5); });\n",
            "const test = require('node:test');\ntest('x', () => {\n", "adds", "wrong", 6 };
    return {
        "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\nfunc Clamp(x int) int {\n"
        "\tif x > 10 {\n\t\treturn 10\n\t}\n\treturn x\n}\n",
        "calc.go",
        "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 "
        "{\n"
        "\t\tt.Fatal(\"add\")\n\t}\n}\n\nfunc TestWrong(t *testing.T) {\n\tif Add(2, 2) != 5 {\n"
        "\t\tt.Fatal(\"two and two\")\n\t}\n}\n",
        "package calc\n\nfunc TestAdd(t *testing.T) {}\n", "TestAdd", "TestWrong", 9
    };
}

} // namespace

class TestRunnerTest : public QObject {
    Q_OBJECT

    std::shared_ptr<const Sandbox> m_sandbox;

    std::unique_ptr<TestWorkspace> workspace(const QString& language, const LanguageCase& c)
    {
        auto created = TestWorkspace::create(m_sandbox, language, c.fileName, c.code);
        if (!created)
            return nullptr;
        return std::move(*created);
    }

private slots:
    void initTestCase()
    {
        auto sandbox = Sandbox::create();
        if (!sandbox)
            CW_SKIP_NO_SANDBOX(sandbox.error().message.c_str());
        m_sandbox = std::make_shared<Sandbox>(*sandbox);
    }

    void detectsLanguages()
    {
        QCOMPARE(detectLanguage("a.py", {}), QString("python"));
        QCOMPARE(detectLanguage("a.hpp", {}), QString("cpp"));
        QCOMPARE(detectLanguage("a.mjs", {}), QString("javascript"));
        QCOMPARE(detectLanguage("a.ts", {}), QString("typescript"));
        QCOMPARE(detectLanguage("a.go", {}), QString("go"));
        QCOMPARE(detectLanguage("", "def f(x):\n    return x\n"), QString("python"));
        QCOMPARE(detectLanguage("", "#include <vector>\nint f();\n"), QString("cpp"));
        QCOMPARE(detectLanguage("", "package main\n\nfunc main() {}\n"), QString("go"));
        QCOMPARE(detectLanguage("", "const f = (x) => x;\n"), QString("javascript"));
        QCOMPARE(detectLanguage("", "interface P { x: number }\n"), QString("typescript"));
        QCOMPARE(detectLanguage("", "Lorem ipsum dolor sit amet."), QString());
    }

    void refusesBinaryLargeAndEmptyFiles()
    {
        QVERIFY(!readableCode(QByteArray("ab\0cd", 5), "x.py").ok());
        QVERIFY(
            QString::fromStdString(readableCode(QByteArray("ab\0cd", 5), "x.py").error().message)
                .contains("binary"));
        QVERIFY(!readableCode(QByteArray(kMaxCodeBytes + 1, 'a'), "big.py").ok());
        QVERIFY(!readableCode(QByteArray("\xff\xfe\x00", 2), "bad.py").ok());
        QVERIFY(!readableCode("  \n", "empty.py").ok());
        QVERIFY(readableCode("x = 1\n", "ok.py").ok());
        QVERIFY(!TestWorkspace::create(m_sandbox, "text", "notes.txt", "hello").ok());
    }

    void safeFileNames()
    {
        QCOMPARE(TestWorkspace::safeCodeFileName("python", "my code.py"), QString("my_code.py"));
        QCOMPARE(TestWorkspace::safeCodeFileName("python", ""), QString("code_under_test.py"));
        QCOMPARE(TestWorkspace::safeCodeFileName("cpp", "../../etc/x.hpp"), QString("x.hpp"));
        QCOMPARE(TestWorkspace::safeCodeFileName("python", "test_a.py"), QString("m_test_a.py"));
    }

    void runsTestsWithCoverage_data()
    {
        QTest::addColumn<QString>("language");
        for (const char* language : { "python", "cpp", "javascript", "go" })
            QTest::newRow(language) << QString(language);
    }

    void runsTestsWithCoverage()
    {
        QFETCH(QString, language);
        const LanguageCase c = caseFor(language);
        auto probe = probeToolchain(*m_sandbox, language);
        if (!probe)
            QSKIP(probe.error().message.c_str());
        auto ws = workspace(language, c);
        QVERIFY(ws);
        const TestRunResult r = ws->run(c.tests);
        QVERIFY2(r.built, qPrintable(r.buildOutput));
        QVERIFY2(r.limitMessage.isEmpty(), qPrintable(r.limitMessage));
        QCOMPARE(r.cases.size(), 2);
        QCOMPARE(r.passed(), 1);
        QCOMPARE(r.failed(), 1);
        for (const TestCaseResult& t : r.cases) {
            if (t.name == c.passing)
                QCOMPARE(t.outcome, TestOutcome::Passed);
            else
                QCOMPARE(t.name, c.failing);
        }
        QVERIFY(r.allPassed() == false);
        QVERIFY(r.failureReport().contains(c.failing));
        QVERIFY2(r.coverage.measured, qPrintable(r.output));
        QVERIFY(r.coverage.covered.size() > 0);
        QVERIFY2(!r.coverage.covered.contains(c.uncoveredLine),
            qPrintable(r.coverage.uncoveredRanges()));
        QVERIFY(r.coverage.executable.contains(c.uncoveredLine));
        QVERIFY(r.coverage.percent() > 10 && r.coverage.percent() < 100);

        // Only one test, by name.
        const TestRunResult one = ws->run(c.tests, c.passing);
        QCOMPARE(one.cases.size(), 1);
        QCOMPARE(one.cases.first().name, c.passing);
        QCOMPARE(one.cases.first().outcome, TestOutcome::Passed);

        // A test file that does not build.
        const TestRunResult broken = ws->run(c.broken);
        QVERIFY(!broken.built || broken.failed() > 0 || broken.cases.isEmpty());
        QVERIFY(!broken.allPassed());
        QVERIFY(!broken.failureReport().isEmpty());
    }

    // A test that hangs: the run is stopped by the wall-time limit, the test that finished
    // keeps its result and the hanging one is named as the one that did not finish.
    void keepsFinishedResultsWhenATestHangs_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("tests");
        QTest::addColumn<QString>("finished");
        QTest::addColumn<QString>("hung");
        QTest::newRow("python") << "python"
                                << "import time\nfrom calc import add\n\n\ndef test_add():\n"
                                   "    assert add(2, 3) == 5\n\n\ndef test_hang():\n"
                                   "    time.sleep(600)\n"
                                << "test_add"
                                << "test_hang";
        QTest::newRow("cpp") << "cpp"
                             << "#include \"calc.h\"\n#include <gtest/gtest.h>\n#include <thread>\n"
                                "TEST(Calc, Add) { EXPECT_EQ(add(2, 3), 5); }\n"
                                "TEST(Calc, Hang) { std::this_thread::sleep_for(std::chrono::"
                                "minutes(10)); }\n"
                             << "Calc.Add"
                             << "Calc.Hang";
        QTest::newRow("go") << "go"
                            << "package calc\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\n"
                               "func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"add\")"
                               "\n\t}\n}\n\nfunc TestHang(t *testing.T) {\n\ttime.Sleep(10 * "
                               "time.Minute)\n}\n"
                            << "TestAdd"
                            << "TestHang";
    }

    void keepsFinishedResultsWhenATestHangs()
    {
        QFETCH(QString, language);
        QFETCH(QString, tests);
        QFETCH(QString, finished);
        QFETCH(QString, hung);
        auto probe = probeToolchain(*m_sandbox, language);
        if (!probe)
            QSKIP(probe.error().message.c_str());
        SandboxLimits limits = m_sandbox->limits();
        // Builds run under buildLimits, which allow more.
        limits.wallSeconds = 4;
        auto sandbox = Sandbox::create(limits);
        QVERIFY2(sandbox.ok(), sandbox.ok() ? "" : sandbox.error().message.c_str());
        const LanguageCase c = caseFor(language);
        auto created = TestWorkspace::create(
            std::make_shared<Sandbox>(*sandbox), language, c.fileName, c.code);
        QVERIFY(created.ok());
        const TestRunResult r = (*created)->run(tests);
        QVERIFY2(r.built, qPrintable(r.buildOutput));
        QVERIFY2(r.limitMessage.contains("wall-time"), qPrintable(r.limitMessage));
        QCOMPARE(r.cases.size(), 2);
        QCOMPARE(r.cases[0].name, finished);
        QCOMPARE(r.cases[0].outcome, TestOutcome::Passed);
        QCOMPARE(r.cases[1].name, hung);
        QCOMPARE(r.cases[1].outcome, TestOutcome::Failed);
        QVERIFY2(r.cases[1].output.startsWith("did not finish: stopped: ran past the 4 s"),
            qPrintable(r.cases[1].output));
        QVERIFY(!r.allPassed());
    }

    void readsProgressOfAStoppedRun()
    {
        QStringList started;
        QList<TestCaseResult> cases = readGoogleTestProgress(
            "[==========] Running 3 tests\n[ RUN      ] A.One\n[       OK ] A.One (3 ms)\n"
            "[ RUN      ] A.Two\nx.cpp:9: Failure\n[  FAILED  ] A.Two (1 ms)\n"
            "[ RUN      ] A.Three\n",
            started);
        QCOMPARE(started, (QStringList { "A.One", "A.Two", "A.Three" }));
        QCOMPARE(cases.size(), 2);
        QCOMPARE(cases[1].outcome, TestOutcome::Failed);
        QVERIFY(cases[1].output.contains("x.cpp:9: Failure"));
        addUnfinishedTests(cases, started, "stopped: ran past the 30 s wall-time limit");
        QCOMPARE(cases.size(), 3);
        QCOMPARE(cases[2].name, QString("A.Three"));
        QCOMPARE(
            cases[2].output, QString("did not finish: stopped: ran past the 30 s wall-time limit"));

        started.clear();
        cases = readPytestProgress("start\ttest_x.py::test_a\npassed\ttest_x.py::test_a\t0.010\n"
                                   "start\ttest_x.py::TestK::test_b[2]\n",
            started);
        QCOMPARE(cases.size(), 1);
        QCOMPARE(cases[0].name, QString("test_a"));
        QCOMPARE(started.last(), QString("test_b[2]"));
    }

    // The user's test file keeps its name in what the framework prints.
    void runsTheTestFileUnderTheUsersName()
    {
        auto probe = probeToolchain(*m_sandbox, "python");
        if (!probe)
            QSKIP(probe.error().message.c_str());
        const LanguageCase c = caseFor("python");
        auto ws = workspace("python", c);
        QVERIFY(ws);
        QVERIFY(!ws->useTestFileName("cw_progress.py")); // the runner's own
        QVERIFY(!ws->useTestFileName("calc.py")); // the code's
        QVERIFY(!ws->useTestFileName("bad name.py"));
        QVERIFY(!ws->useTestFileName("bad.go"));
        QVERIFY(ws->useTestFileName("test_bad.py"));
        QCOMPARE(ws->testFile(), QString("test_bad.py"));
        const TestRunResult r = ws->run(c.tests);
        QCOMPARE(r.failed(), 1);
        QVERIFY2(r.output.contains("test_bad.py"), qPrintable(r.output));
        QVERIFY2(!r.output.contains("test_calc.py"), qPrintable(r.output));
    }

    void readsGoOutputAndProfiles()
    {
        const auto cases
            = readGoTestOutput("=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n"
                               "    x_test.go:9: boom\n--- FAIL: TestB (0.01s)\nFAIL\n");
        QCOMPARE(cases.size(), 2);
        QCOMPARE(cases[1].outcome, TestOutcome::Failed);
        QVERIFY(cases[1].output.contains("boom"));
        const LineCoverage cov = readGoCoverProfile(
            "mode: set\nsandbox/x.go:3.20,5.2 1 1\nsandbox/x.go:7.1,9.2 1 0\n", "x.go");
        QCOMPARE(cov.covered.size(), 3);
        QCOMPARE(cov.executable.size(), 6);
        QCOMPARE(cov.uncoveredRanges(), QString("7-9"));
    }

    void readsNodeCoverage()
    {
        const LineCoverage cov
            = readNodeCoverage("# file | line % | branch % | funcs % | uncovered lines\n# p.js |  "
                               "40.00 | 100.00 | 50.00 | 2-4 7\n",
                "p.js", 8);
        QCOMPARE(cov.executable.size(), 8);
        QCOMPARE(cov.uncoveredRanges(), QString("2-4, 7"));
    }
};

CW_SANDBOX_TEST_MAIN(TestRunnerTest)
#include "test_runner_test.moc"
