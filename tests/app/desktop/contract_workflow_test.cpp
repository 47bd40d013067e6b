// The desktop's open / password / preview / export steps without a window: the password
// prompt is a function the test answers, the queue a real ReviewQueue.
#include "app/desktop/app_settings.h"
#include "app/desktop/contract_workflow.h"
#include "app/desktop/review_queue.h"
#include "app/ingest/pdf_passwords.h"

#include <QCoreApplication>
#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <qcoro/qcorotask.h>

namespace {

const QString kIngestData = QStringLiteral(CW_TEST_DATA_DIR "/ingest/");

// Answers each prompt with the next of a list of passwords (nullopt: gives up), and keeps
// the prompts it was shown.
struct ScriptedPrompt {
    QList<std::optional<QString>> answers;
    QStringList prompts;
    QCoro::Task<std::optional<QString>> ask(QString, QString prompt)
    {
        prompts << prompt;
        co_return answers.isEmpty() ? std::nullopt : answers.takeFirst();
    }
};

cw::ContractWorkflow::PasswordPrompt promptOf(ScriptedPrompt& script)
{
    return [&script](QString name, QString prompt) { return script.ask(name, prompt); };
}

} // namespace

class ContractWorkflowTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void anEncryptedPdfIsQueuedOnceItsPasswordOpensIt()
    {
        const QString encrypted = kIngestData + QStringLiteral("encrypted.pdf");
        cw::PdfPasswords::forget(encrypted);
        cw::ReviewQueue queue;
        ScriptedPrompt script;
        script.answers = { QStringLiteral("letmein"), QStringLiteral("user-pw") };
        cw::ContractWorkflow workflow(&queue, promptOf(script));
        QSignalSpy recent(&workflow, &cw::ContractWorkflow::recentFilesChanged);
        QSignalSpy started(&queue, &cw::ReviewQueue::started);
        QVERIFY(QCoro::waitFor(workflow.open(encrypted)));
        QCOMPARE(script.prompts.size(), 2);
        QVERIFY(script.prompts[0].contains(QStringLiteral("encrypted.pdf")));
        QVERIFY(script.prompts[1].contains(QStringLiteral("does not open")));
        QCOMPARE(cw::PdfPasswords::lookup(encrypted), QStringLiteral("user-pw"));
        QCOMPARE(recent.size(), 1);
        QCOMPARE(cw::AppSettings::recentFiles().value(0), encrypted);
        QTRY_COMPARE_WITH_TIMEOUT(started.size(), 1, 10000);
        QCOMPARE(started.at(0).at(0).toString(), encrypted);
        queue.cancelAll();
        cw::PdfPasswords::forget(encrypted);
    }

    void givingUpOnThePasswordQueuesNothingAndSaysWhy()
    {
        const QString encrypted = kIngestData + QStringLiteral("encrypted.pdf");
        cw::PdfPasswords::forget(encrypted);
        cw::ReviewQueue queue;
        ScriptedPrompt script; // no answers: the user cancels the first prompt
        cw::ContractWorkflow workflow(&queue, promptOf(script));
        QSignalSpy notices(&workflow, &cw::ContractWorkflow::notice);
        QSignalSpy started(&queue, &cw::ReviewQueue::started);
        QVERIFY(!QCoro::waitFor(workflow.open(encrypted)));
        QCOMPARE(script.prompts.size(), 1);
        QCOMPARE(notices.size(), 1);
        QVERIFY(notices.at(0).at(0).toString().contains(QStringLiteral("needs its password")));
        QCoreApplication::processEvents();
        QCOMPARE(started.size(), 0);
        QVERIFY(!queue.isBusy());
    }

    void anOpenPdfIsQueuedWithoutAPrompt()
    {
        cw::ReviewQueue queue;
        ScriptedPrompt script;
        cw::ContractWorkflow workflow(&queue, promptOf(script));
        QSignalSpy started(&queue, &cw::ReviewQueue::started);
        QVERIFY(QCoro::waitFor(workflow.open(kIngestData + QStringLiteral("empty.pdf"))));
        QVERIFY(script.prompts.isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(started.size(), 1, 10000);
        queue.cancelAll();
    }

    void aFailedPreviewGivesBackTheReviewShownBefore()
    {
        cw::ReviewQueue queue;
        ScriptedPrompt script;
        cw::ContractWorkflow workflow(&queue, promptOf(script));
        const QString pdf = kIngestData + QStringLiteral("gocall-promotion-agreement.pdf");
        cw::Review before;
        before.document.path = QStringLiteral("/earlier/contract.pdf");

        QVERIFY(!workflow.beginPreview(kIngestData + QStringLiteral("numbered.docx"), before));
        QVERIFY(!workflow.previewing());
        QVERIFY(!workflow.beginPreview(kIngestData + QStringLiteral("missing.pdf"), before));

        QVERIFY(workflow.beginPreview(pdf, before));
        QVERIFY(workflow.previewing());
        QVERIFY(!workflow.previewFailed(QStringLiteral("/another/file.pdf")));
        const auto restored = workflow.previewFailed(pdf);
        QVERIFY(restored);
        QCOMPARE(restored->document.path, before.document.path);
        QVERIFY(!workflow.previewing());
        QVERIFY(!workflow.previewFailed(pdf)); // once only

        QVERIFY(workflow.beginPreview(pdf, before));
        workflow.previewDone();
        QVERIFY(!workflow.previewFailed(pdf));
    }

    void theReportFormatComesFromTheSuffixElseTheFilter()
    {
        using cw::ContractWorkflow;
        using cw::ReportFormat;
        QCOMPARE(ContractWorkflow::formatFor(QStringLiteral("/r/a.MD"), QString()),
            ReportFormat::Markdown);
        QCOMPARE(ContractWorkflow::formatFor(
                     QStringLiteral("/r/a.csv"), QStringLiteral("PDF report (*.pdf)")),
            ReportFormat::Csv);
        QCOMPARE(ContractWorkflow::formatFor(
                     QStringLiteral("/r/report"), QStringLiteral("PDF report (*.pdf)")),
            ReportFormat::Pdf);
        QVERIFY(!ContractWorkflow::formatFor(QStringLiteral("/r/report.docx"), QString()));
    }

    void exportWritesTheReportOrNamesWhatFailed()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        cw::Review review;
        review.document.path = QStringLiteral("/contracts/supply.pdf");
        review.document.title = QStringLiteral("Supply Agreement");
        const QString out = dir.filePath(QStringLiteral("supply-review.json"));
        auto writing = cw::ContractWorkflow::exportReport(review, cw::ReportFormat::Json, out);
        writing.waitForFinished();
        const auto written = writing.result();
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().message.c_str());
        QFile file(out);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().contains("Supply Agreement"));

        const QString nowhere = dir.filePath(QStringLiteral("no/such/folder/review.json"));
        auto failing = cw::ContractWorkflow::exportReport(review, cw::ReportFormat::Json, nowhere);
        failing.waitForFinished();
        const auto failed = failing.result();
        QVERIFY(!failed.ok());
        QVERIFY(QString::fromStdString(failed.error().message)
                    .contains(QStringLiteral("no/such/folder")));
    }
};

QTEST_MAIN(ContractWorkflowTest)
#include "contract_workflow_test.moc"
