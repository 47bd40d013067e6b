// The code panel as a user drives it (offscreen): pasted code gets its language and skills,
// Run works without a model and colours each test, a file over 1 MB or binary is refused,
// Generate needs a model and streams the tiny model's answer round by round, and a
// generation saved in the history reopens with its rounds, kept tests and coverage (the
// screenshot, resources/screenshots/code-panel.png with CW_UPDATE_SCREENSHOTS=1). Runs
// that need the sandbox are skipped where bwrap or pytest is missing.
#include "app/desktop/code_test_controller.h"
#include "app/desktop/review_queue.h"
#include "app/history/test_generation_history.h"
#include "app/test_runner/code_language.h"
#include "ui/code_panel.h"
#include "ui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

using namespace cw;

namespace {

const QString kCode = QStringLiteral("def discount(total, code):\n"
                                     "    \"\"\"The price after a discount code.\"\"\"\n"
                                     "    if code == \"HALF\":\n"
                                     "        return total / 2\n"
                                     "    if code == \"TEN\":\n"
                                     "        return max(total - 10, 0)\n"
                                     "    return total\n");

void saveScreenshot(QWidget* widget, const QString& name)
{
    const QPixmap shot = widget->grab();
    QVERIFY(!shot.isNull());
    QVERIFY(shot.save(QDir(QStringLiteral(CW_TEST_BINARY_DIR)).filePath(name)));
    if (qEnvironmentVariableIntValue("CW_UPDATE_SCREENSHOTS") == 1)
        QVERIFY(shot.save(QStringLiteral(CW_SOURCE_DIR "/resources/screenshots/") + name));
}

QString fenced(const QString& body)
{
    return "```python\n" + body + "```\n";
}

} // namespace

class CodePanelTest : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_history;

    bool canRunPython(ui::CodePanel& panel)
    {
        if (!panel.controller()->sandboxProblem().isEmpty())
            return false;
        auto sandbox = Sandbox::create();
        return sandbox && probeToolchain(*sandbox, "python").ok();
    }

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        m_history = m_dir.filePath("history.sqlite");
    }

    void detectsTheLanguageAndOffersItsSkills()
    {
        ui::CodePanel panel(m_history);
        panel.setCode("#include <vector>\nint sum(const std::vector<int>& v);\n");
        QTRY_COMPARE(panel.language(), QString("cpp"));
        auto* skills = panel.findChild<QComboBox*>("skillPicker");
        QCOMPARE(skills->itemData(0).toString(), QString("cpp-gtest"));
        QVERIFY(skills->findData("bug-review") >= 0);
        QCOMPARE(skills->findData("python-pytest"), -1);
        panel.setCode("package calc\n\nfunc Add(a, b int) int { return a + b }\n");
        QTRY_COMPARE(panel.language(), QString("go"));
    }

    void refusesBinaryAndLargeFiles()
    {
        ui::CodePanel panel(m_history);
        QFile binary(m_dir.filePath("tool.py"));
        QVERIFY(binary.open(QIODevice::WriteOnly));
        binary.write(QByteArray("\x7f"
                                "ELF\0\0",
            6));
        binary.close();
        QVERIFY(!panel.openCode(binary.fileName()));
        QVERIFY(panel.statusLabel()->text().contains("binary"));
        QFile large(m_dir.filePath("large.py"));
        QVERIFY(large.open(QIODevice::WriteOnly));
        large.write(QByteArray(kMaxCodeBytes + 10, '#'));
        large.close();
        QVERIFY(!panel.openCode(large.fileName()));
        QVERIFY(panel.statusLabel()->text().contains("larger than 1 MB"));
        QVERIFY(panel.codeEditor()->toPlainText().isEmpty());
    }

    void runsTestsWithoutAModel()
    {
        ui::CodePanel panel(m_history);
        panel.setModel({}, 0, "cpu", 0, "bf16");
        panel.show();
        QVERIFY(panel.findChild<QLabel*>("modelNotice")->isVisible());
        QVERIFY(!panel.findChild<QPushButton*>("generateButton")->isEnabled());
        if (!canRunPython(panel))
            QSKIP("no bubblewrap, pytest or coverage.py here");
        QFile source(m_dir.filePath("pricing.py"));
        QVERIFY(source.open(QIODevice::WriteOnly));
        source.write(kCode.toUtf8());
        source.close();
        QVERIFY(panel.openCode(source.fileName()));
        QTRY_COMPARE(panel.language(), QString("python"));
        panel.testsEditor()->setPlainText("from pricing import discount\n\n\ndef test_half():\n"
                                          "    assert discount(10, 'HALF') == 5\n\n\n"
                                          "def test_ten():\n    assert discount(5, 'TEN') == -5\n");
        QSignalSpy shown(&panel, &ui::CodePanel::testsShown);
        QTest::mouseClick(panel.findChild<QPushButton*>("runButton"), Qt::LeftButton);
        QVERIFY(shown.wait(60000));
        QTreeWidget* tree = panel.results();
        QCOMPARE(tree->topLevelItemCount(), 2);
        QCOMPARE(tree->topLevelItem(0)->text(1), QString("passed"));
        QCOMPARE(tree->topLevelItem(1)->text(1), QString("failed"));
        QVERIFY(tree->topLevelItem(1)->foreground(1).color()
            != tree->topLevelItem(0)->foreground(1).color());
        QVERIFY2(panel.coverageLabel()->text().contains("1 passed, 1 failed · line coverage"),
            qPrintable(panel.coverageLabel()->text()));
        QCOMPARE(panel.defaultTestsPath(), m_dir.filePath("test_pricing.py"));
        QVERIFY(panel.saveTestsTo(panel.defaultTestsPath()).ok());
        QVERIFY(QFile::exists(m_dir.filePath("test_pricing.py")));
    }

    void generatesWithTheTinyModel()
    {
        ui::CodePanel panel(m_history);
        panel.setModel(
            QStringLiteral(CW_TEST_DATA_DIR "/golden/models/qwen3_moe_a"), 2, "cpu", 0, "bf16");
        QVERIFY(panel.findChild<QPushButton*>("generateButton")->isEnabled());
        panel.setCode(kCode, "pricing.py");
        QTRY_COMPARE(panel.language(), QString("python"));
        // A skill that runs nothing, so the sandbox is not needed: the answer streams into the
        // tests editor and stays there.
        QVERIFY(panel.selectSkill("explain-code"));
        QSignalSpy pieces(panel.controller(), &CodeTestController::answerPiece);
        QSignalSpy shown(&panel, &ui::CodePanel::generationShown);
        QSignalSpy failed(&panel, &ui::CodePanel::failed);
        QTest::mouseClick(panel.findChild<QPushButton*>("generateButton"), Qt::LeftButton);
        QVERIFY(QTest::qWaitFor([&] { return !shown.isEmpty() || !failed.isEmpty(); }, 60000));
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed[0][0].toString()));
        QVERIFY(pieces.size() > 1);
        const auto report = shown[0][0].value<TestGenerationReport>();
        QCOMPARE(report.model, QString("qwen3_moe_a"));
        QCOMPARE(panel.testsEditor()->toPlainText(), report.answer);
        QTRY_VERIFY(panel.findChild<QPushButton*>("generateButton")->isEnabled());
        // Saved in the history, and found there.
        auto db = HistoryDatabase::open(m_history);
        QVERIFY(db.ok());
        auto found = searchTestGenerations(**db, "discount");
        QVERIFY(found.ok());
        QVERIFY(!found->isEmpty());
        QCOMPARE(found->first().skill, QString("explain-code"));
    }

    void reopensASavedGeneration()
    {
        // A generation made with prepared answers in the real sandbox, saved as the panel
        // saves its own, then reopened from the history.
        auto sandbox = Sandbox::create();
        if (!sandbox || !probeToolchain(*sandbox, "python"))
            QSKIP("no bubblewrap, pytest or coverage.py here");
        CodeSkillHost host;
        ScriptedSkillModel model({
            fenced("from pricing import discount\n\n\ndef test_half():\n    assert discount(10, "
                   "'HALF') == 4\n"),
            fenced("from pricing import discount\n\n\ndef test_half():\n"
                   "    assert discount(10, 'HALF') == 5\n\n\ndef test_ten_never_negative():\n"
                   "    assert discount(5, 'TEN') == 0\n\n\ndef test_half_again():\n"
                   "    assert discount(8, 'HALF') == 4\n"),
        });
        TestGenerationOptions options;
        options.rounds = 2;
        auto report = generateTests(model, *host.skill("python-pytest"), kCode, "pricing.py",
            "python", std::make_shared<Sandbox>(*sandbox), options);
        QVERIFY(report.ok());
        report->model
            = QStringLiteral("Qwen3.6-35B-A3B-Q4_K_M.gguf (answers prepared for the test)");
        qint64 id = 0;
        {
            auto db = HistoryDatabase::open(m_history);
            QVERIFY(db.ok());
            auto saved = saveTestGeneration(**db, *report);
            QVERIFY(saved.ok());
            id = *saved;
        }
        ui::MainWindow window(nullptr, m_history);
        window.resize(1500, 900);
        window.findChild<QAction*>("codePanelAction")->trigger();
        window.show();
        ui::CodePanel* panel = window.codePanel();
        // The panel and the reviews share their loaded models: one copy in memory.
        QCOMPARE(panel->controller()->sessions().get(), window.queue()->sessions().get());
        QSignalSpy shown(panel, &ui::CodePanel::generationShown);
        panel->controller()->loadFromHistory(id);
        QVERIFY(shown.wait(10000));
        QCOMPARE(panel->codeEditor()->toPlainText(), kCode);
        QVERIFY(panel->testsEditor()->toPlainText().contains("def test_ten_never_negative():"));
        QVERIFY(!panel->testsEditor()->toPlainText().contains("test_half_again"));
        QCOMPARE(panel->results()->topLevelItemCount(), 2);
        QCOMPARE(panel->results()->topLevelItem(1)->child(2)->text(1), QString("adds no coverage"));
        QVERIFY2(panel->coverageLabel()->text().startsWith("2 kept, 2 discarded; coverage 0% -> "),
            qPrintable(panel->coverageLabel()->text()));
        // The lines no kept test runs are marked in the code editor's line numbers.
        QCOMPARE(panel->codeEditor()->linesNotRun(),
            report->coverageMeasured ? ui::CodeEditor::linesOfRanges(report->uncoveredLines)
                                     : QSet<int>());
        QVERIFY(!report->coverageMeasured || !panel->codeEditor()->linesNotRun().isEmpty());
        QTest::qWait(200);
        saveScreenshot(panel, "code-panel.png");
    }
};

QTEST_MAIN(CodePanelTest)
#include "code_panel_test.moc"
