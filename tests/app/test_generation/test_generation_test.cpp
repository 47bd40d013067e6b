// Generate, run, repair, keep, end to end with a scripted model whose answers are prepared
// round by round: a test file that does not build, then one whose test fails, then one that
// passes (plus a test that adds no coverage). Every round's error reaches the next prompt;
// only the passing, coverage-adding tests are kept. Runs Python tests in the real sandbox
// (skipped without bwrap, python3-pytest or python3-coverage).
#include "app/code_skills/code_skill_host.h"
#include "app/test_generation/test_generation.h"
#include "tests/app/test_runner/sandbox_skip.h"

#include <QStandardPaths>
#include <QtTest>

using namespace cw;

namespace {

const QString kCode = QStringLiteral("def discount(total, code):\n"
                                     "    if code == \"HALF\":\n"
                                     "        return total / 2\n"
                                     "    if code == \"TEN\":\n"
                                     "        return total - 10\n"
                                     "    return total\n");

QString fenced(const QString& body)
{
    return "Here are the tests.\n```python\n" + body + "```\n";
}

} // namespace

class TestGenerationTest : public QObject {
    Q_OBJECT

    std::shared_ptr<const Sandbox> m_sandbox;
    CodeSkillHost m_host;

    const CodeSkill& pytest() { return *m_host.skill("python-pytest"); }

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        SandboxLimits limits;
        limits.cpuSeconds = 3;
        limits.wallSeconds = 10;
        auto sandbox = Sandbox::create(limits);
        if (!sandbox)
            CW_SKIP_NO_SANDBOX(sandbox.error().message.c_str());
        m_sandbox = std::make_shared<Sandbox>(*sandbox);
        if (auto python = probeToolchain(*m_sandbox, "python"); !python)
            CW_SKIP_NO_SANDBOX(python.error().message.c_str());
    }

    void repairsUntilATestIsKept()
    {
        ScriptedSkillModel model({
            fenced("from pricing import discount\n\n\ndef test_half(:\n    assert discount(10, "
                   "'HALF') == 5\n"),
            fenced("from pricing import discount\n\n\ndef test_half():\n    assert discount(10, "
                   "'HALF') == 4\n"),
            fenced("from pricing import discount\n\n\n# Half price.\ndef test_half():\n"
                   "    assert discount(10, 'HALF') == 5\n\n\ndef test_half_again():\n"
                   "    assert discount(20, 'HALF') == 10\n\n\ndef test_ten():\n"
                   "    assert discount(30, 'TEN') == 20\n"),
        });
        QList<int> started;
        QString streamed;
        QList<int> finished;
        TestGenerationObserver observer;
        observer.roundStarted = [&](int n) { started.append(n); };
        observer.answerPiece = [&](const QString& piece) { streamed += piece; };
        observer.roundFinished = [&](const TestGenerationRound& r) { finished.append(r.number); };
        TestGenerationOptions options;
        options.rounds = 3;
        auto report = generateTests(
            model, pytest(), kCode, "pricing.py", "python", m_sandbox, options, observer);
        QVERIFY2(report.ok(), report.ok() ? "" : report.error().message.c_str());
        QCOMPARE(started, QList<int>({ 1, 2, 3 }));
        QCOMPARE(finished, started);
        QCOMPARE(report->rounds.size(), 3);
        QCOMPARE(report->testFileName, QString("test_pricing.py"));

        const TestGenerationRound& r1 = report->rounds[0];
        QVERIFY(!r1.run.built);
        QCOMPARE(r1.verdicts.size(), 1);
        QCOMPARE(r1.verdicts[0].reason, QString("does not build"));
        const QString prompt2 = model.prompts()[1].user;
        QVERIFY2(prompt2.contains("did not build") && prompt2.contains("SyntaxError"),
            qPrintable(prompt2));

        const TestGenerationRound& r2 = report->rounds[1];
        QVERIFY(r2.run.built);
        // Its assertion fails in every run: shown as a possible bug in the code (the next
        // round replaces it with a passing test of the same name, which takes it off).
        QCOMPARE(r2.verdicts[0].reason, QString("fails: the code may be wrong here"));
        QVERIFY(r2.verdicts[0].suspectsCode);
        const QString prompt3 = model.prompts()[2].user;
        QVERIFY2(prompt3.contains("Test test_half failed") && prompt3.contains("assert 5.0 == 4"),
            qPrintable(prompt3));

        const TestGenerationRound& r3 = report->rounds[2];
        QCOMPARE(r3.stableRuns, 3);
        QCOMPARE(r3.verdicts.size(), 3);
        QVERIFY(r3.verdicts[0].kept);
        QCOMPARE(r3.verdicts[1].reason, QString("adds no coverage"));
        QVERIFY(r3.verdicts[2].kept);
        QCOMPARE(report->kept, 2);
        QCOMPARE(report->discarded, 3);

        QVERIFY(report->keptTests.contains("def test_half():"));
        QVERIFY(report->keptTests.contains("# Half price."));
        QVERIFY(report->keptTests.contains("def test_ten():"));
        QVERIFY(!report->keptTests.contains("test_half_again"));
        QCOMPARE(report->keptTests.count("from pricing import discount"), 1);
        QVERIFY2(report->finalRun.allPassed(), qPrintable(report->finalRun.output));
        QCOMPARE(report->finalRun.cases.size(), 2);
        QVERIFY(report->problem.isEmpty());
        QVERIFY2(report->failingTests.isEmpty(), qPrintable(report->failingTests));
        QCOMPARE(report->failing, 0);
        QVERIFY(report->coverageMeasured);
        QCOMPARE(report->coverageBefore, 0.0);
        QVERIFY(report->coverageAfter > 60 && report->coverageAfter < 100);
        QCOMPARE(report->uncoveredLines, QString("6"));
        QVERIFY(report->summary().startsWith("2 kept, 3 discarded; coverage 0% -> 83%"));
        QString all;
        for (const TestGenerationRound& r : report->rounds)
            all += r.answer;
        QCOMPARE(streamed, all);
    }

    void repairsCppTestsThatDoNotCompile()
    {
        if (auto cpp = probeToolchain(*m_sandbox, "cpp"); !cpp)
            QSKIP(cpp.error().message.c_str());
        const QString code = QStringLiteral("#pragma once\n"
                                            "inline int clamp(int x, int high)\n"
                                            "{\n"
                                            "    if (x > high)\n"
                                            "        return high;\n"
                                            "    return x;\n"
                                            "}\n");
        auto cppFile = [](const QString& body) {
            return "```cpp\n#include \"clamp.h\"\n#include <gtest/gtest.h>\n\n" + body + "```\n";
        };
        ScriptedSkillModel model({
            cppFile("TEST(Clamp, High) { EXPECT_EQ(clamp_it(12, 10), 10); }\n"),
            cppFile("TEST(Clamp, High) { EXPECT_EQ(clamp(12, 10), 12); }\n"),
            cppFile("TEST(Clamp, High) { EXPECT_EQ(clamp(12, 10), 10); }\n\n"
                    "TEST(Clamp, Low) { EXPECT_EQ(clamp(3, 10), 3); }\n"),
        });
        TestGenerationOptions options;
        options.rounds = 3;
        auto report = generateTests(
            model, *m_host.skill("cpp-gtest"), code, "clamp.h", "cpp", m_sandbox, options);
        QVERIFY2(report.ok(), report.ok() ? "" : report.error().message.c_str());
        QCOMPARE(report->rounds.size(), 3);
        QCOMPARE(report->rounds[0].verdicts[0].reason, QString("does not build"));
        QVERIFY2(model.prompts()[1].user.contains("clamp_it"), qPrintable(model.prompts()[1].user));
        QCOMPARE(report->rounds[1].verdicts[0].reason, QString("failed"));
        QVERIFY(model.prompts()[2].user.contains("Test Clamp.High failed"));
        QCOMPARE(report->kept, 2);
        QVERIFY(report->keptTests.contains("TEST(Clamp, Low)"));
        QVERIFY2(report->finalRun.allPassed(), qPrintable(report->finalRun.output));
        QCOMPARE(report->coverageAfter, 100.0);
    }

    void keepsTheUsersTestsAndAsksForUncoveredLines()
    {
        ScriptedSkillModel model(
            { fenced("from pricing import discount\n\n\ndef test_ten():\n"
                     "    assert discount(30, 'TEN') == 20\n\n\n"
                     "def test_none():\n    assert discount(30, '') == 30\n") });
        TestGenerationOptions options;
        options.rounds = 1;
        options.existingTests
            = QStringLiteral("from pricing import discount\n\n\ndef test_half():\n    assert "
                             "discount(10, 'HALF') == 5\n");
        auto report
            = generateTests(model, pytest(), kCode, "pricing.py", "python", m_sandbox, options);
        QVERIFY2(report.ok(), report.ok() ? "" : report.error().message.c_str());
        const QString prompt = model.prompts()[0].user;
        QVERIFY(prompt.contains("def test_half():"));
        QVERIFY2(prompt.contains("Lines not yet run by any test: 4-6"), qPrintable(prompt));
        QVERIFY(report->coverageBefore > 40 && report->coverageBefore < 60);
        QCOMPARE(report->coverageAfter, 100.0);
        QCOMPARE(report->kept, 2);
        QVERIFY(report->keptTests.contains("def test_half():"));
        QCOMPARE(report->finalRun.cases.size(), 3);
    }

    void flakyAndEndlessTestsAreDiscarded()
    {
        ScriptedSkillModel model(
            { fenced("import os\nfrom pricing import discount\n\n\ndef test_flaky():\n"
                     "    n = int(open('count').read()) if os.path.exists('count') else 0\n"
                     "    open('count', 'w').write(str(n + 1))\n    assert discount(10, 'HALF') == "
                     "5 and n == 0\n") });
        TestGenerationOptions options;
        options.rounds = 1;
        auto report
            = generateTests(model, pytest(), kCode, "pricing.py", "python", m_sandbox, options);
        QVERIFY(report.ok());
        QCOMPARE(report->rounds[0].verdicts[0].reason, QString("flaky: failed in run 2 of 3"));
        QCOMPARE(report->kept, 0);
        QVERIFY(report->keptTests.isEmpty());

        ScriptedSkillModel endless({ fenced("from pricing import discount\n\n\ndef test_loop():\n"
                                            "    while True:\n        pass\n") });
        QElapsedTimer timer;
        timer.start();
        auto looped
            = generateTests(endless, pytest(), kCode, "pricing.py", "python", m_sandbox, options);
        QVERIFY(looped.ok());
        // The CPU limit, or on a machine too busy to give it 3 s of CPU in 10 s, the wall time.
        const QString reason = looped->rounds[0].verdicts[0].reason;
        QVERIFY2(reason.startsWith("stopped: used its 3 s of CPU")
                || reason.startsWith("stopped: ran past the 10 s wall-time limit"),
            qPrintable(reason));
        QCOMPARE(looped->kept, 0);
        QVERIFY(timer.elapsed() < 30000);
    }

    void answersThatAreNotTestsAreParsedOnce()
    {
        ScriptedSkillModel explain({ "<think>x</think>It halves HALF orders." });
        auto text = generateTests(
            explain, *m_host.skill("explain-code"), kCode, "pricing.py", "python", nullptr, {});
        QVERIFY(text.ok());
        QCOMPARE(text->answer, QString("It halves HALF orders."));
        ScriptedSkillModel review(
            { "{\"summary\": \"ok\", \"findings\": [{\"line\": 5, \"severity\": \"low\", \"kind\": "
              "\"bug\", \"description\": \"d\", \"fix\": \"f\"}]}" });
        auto json = generateTests(
            review, *m_host.skill("bug-review"), kCode, "pricing.py", "python", nullptr, {});
        QVERIFY(json.ok());
        QCOMPARE(json->answerJson.value("findings").toArray().size(), 1);
        // A skill for another language is refused with a message.
        auto wrong = generateTests(
            explain, *m_host.skill("cpp-gtest"), kCode, "pricing.py", "python", m_sandbox, {});
        QVERIFY(!wrong.ok());
        QVERIFY(QString::fromStdString(wrong.error().message).contains("does not take Python"));
    }

    void cancelStopsBeforeTheNextRound()
    {
        ScriptedSkillModel model({ fenced("def test_a():\n    assert True\n") });
        auto report = generateTests(
            model, pytest(), kCode, "pricing.py", "python", m_sandbox, {}, {}, [] { return true; });
        QVERIFY(report.ok());
        QVERIFY(report->cancelled);
        QVERIFY(report->rounds.isEmpty());
    }
};

CW_SANDBOX_TEST_MAIN(TestGenerationTest)
#include "test_generation_test.moc"
