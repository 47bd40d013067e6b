// The main window's flows under QT_QPA_PLATFORM=offscreen: drop a contract, watch the clause
// table fill, select a clause (highlighted on its page), export a report, reopen the review
// from the history. Screenshots land in the test's build folder (and in
// resources/screenshots when CW_UPDATE_SCREENSHOTS=1).
#include "app/desktop/app_settings.h"
#include "app/desktop/review_queue.h"
#include "app/desktop/user_folders.h"
#include "app/history/history_store.h"
#include "app/ingest/pdf_passwords.h"
#include "app/render/pdf_page_renderer.h"
#include "app/report/report_exporter.h"
#include "tests/app/ingest/hostile_files.h"
#include "ui/findings_table_model.h"
#include "ui/history_dialog.h"
#include "ui/main_window.h"
#include "ui/message_bar.h"
#include "ui/pdf_view.h"
#include "ui/review_view.h"
#include "ui/ui_theme.h"

#include <QApplication>
#include <QDialog>
#include <QDir>
#include <QDropEvent>
#include <QFileDialog>
#include <QLineEdit>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMimeData>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <csignal>
#include <qcoro/qcorotask.h>
#include <sys/resource.h>
#include <unistd.h>

namespace {

const QString kSample = QStringLiteral(CW_SOURCE_DIR "/resources/samples/sample-contract.pdf");
const QString kIngestData = QStringLiteral(CW_TEST_DATA_DIR "/ingest/");

void saveScreenshot(QWidget* widget, const QString& name)
{
    const QPixmap shot = widget->grab();
    QVERIFY(!shot.isNull());
    QVERIFY(shot.save(QDir(QStringLiteral(CW_TEST_BINARY_DIR)).filePath(name)));
    if (qEnvironmentVariableIntValue("CW_UPDATE_SCREENSHOTS") == 1)
        QVERIFY(shot.save(QStringLiteral(CW_SOURCE_DIR "/resources/screenshots/") + name));
}

// The password dialog the window opens for an encrypted PDF, once it is up.
QInputDialog* passwordDialog(QWidget* window)
{
    QInputDialog* found = nullptr;
    (void)QTest::qWaitFor(
        [&] {
            for (auto* dialog : window->findChildren<QInputDialog*>(
                     QStringLiteral("pdfPasswordDialog"))) {
                if (dialog->isVisible())
                    found = dialog;
            }
            return found != nullptr;
        },
        30000);
    return found;
}

QString labelText(QWidget* window, const char* name)
{
    auto* label = window->findChild<QLabel*>(QLatin1String(name));
    return label ? label->text() : QString();
}

// Writes zeros over the stack below the caller, where the frames of a slot that has returned
// were: a coroutine still holding a reference into them then reads an empty string (as the
// export's "Report written to " with no path did) instead of, by luck, the old value.
[[gnu::noinline]] void scrubStack()
{
    volatile char buffer[256 * 1024];
    for (auto& c : buffer)
        c = 0;
}

template <typename T> T awaited(QCoro::Task<T>&& task)
{
    return QCoro::waitFor(std::move(task));
}

} // namespace

class MainWindowTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings and data stay out of the user's
        QApplication::setApplicationName(QStringLiteral("clausewright-ui-test"));
        QVERIFY(m_dir.isValid());
    }

    void firstStartShowsGettingStartedUntilAChoiceIsMade()
    {
        QSettings().remove(QStringLiteral("firstRun/choice"));
        const auto folders = cw::createUserFolders();
        QVERIFY(folders.ok());
        QVERIFY(QDir(folders->data).exists());
        QVERIFY(QDir(folders->plugins).exists());
        QCOMPARE(QFileInfo(folders->historyDatabase).absolutePath(), folders->data);
        {
            cw::ui::MainWindow window(nullptr, m_dir.filePath(QStringLiteral("first.sqlite")));
            window.resize(1100, 760);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            auto* page = window.findChild<QWidget*>(QStringLiteral("firstRunPage"));
            QVERIFY(page && page->isVisible());
            QVERIFY(labelText(&window, "firstRunDataFolder")
                        .contains(QDir::toNativeSeparators(folders->data).toHtmlEscaped()));
            saveScreenshot(&window, QStringLiteral("first-run.png"));
            auto* fast = window.findChild<QPushButton*>(QStringLiteral("firstRunFastHeads"));
            QVERIFY(fast);
            fast->click();
            QVERIFY(!page->isVisible());
            QVERIFY(window.findChild<QLabel*>(QStringLiteral("dropZone"))->isVisible());
        }
        QCOMPARE(cw::AppSettings::firstRunChoice(), QStringLiteral("fast"));
        cw::ui::MainWindow again(nullptr, m_dir.filePath(QStringLiteral("first.sqlite")));
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QVERIFY(!again.findChild<QWidget*>(QStringLiteral("firstRunPage"))->isVisible());
    }

    void opensAGgufFileInModelSettings()
    {
        cw::ui::MainWindow window(nullptr, m_dir.filePath(QStringLiteral("gguf.sqlite")));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const QString model = m_dir.filePath(QStringLiteral("tiny.gguf"));
        QFile file(model);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("GGUF");
        file.close();
        // The dialog runs its own event loop: a timer inside it reads the path and closes it.
        QString shownPath;
        bool seen = false;
        QTimer poll;
        connect(&poll, &QTimer::timeout, &window, [&] {
            auto* dialog = window.findChild<QDialog*>(QStringLiteral("modelSettings"));
            if (!dialog || !dialog->isVisible())
                return;
            for (auto* edit : dialog->findChildren<QLineEdit*>()) {
                if (edit->accessibleName() == QLatin1String("Model path"))
                    shownPath = edit->text();
            }
            seen = true;
            dialog->reject();
        });
        poll.start(20);
        window.openFile(model);
        QTRY_VERIFY_WITH_TIMEOUT(seen, 10000);
        QCOMPARE(shownPath, model);
    }

    void opensAnEmptyWindowWithADropZone()
    {
        cw::ui::MainWindow window(nullptr, m_dir.filePath(QStringLiteral("empty.sqlite")));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QCOMPARE(window.windowTitle(), QStringLiteral("Clausewright"));
        auto* dropZone = window.findChild<QLabel*>(QStringLiteral("dropZone"));
        QVERIFY(dropZone && dropZone->isVisible());
        saveScreenshot(&window, QStringLiteral("main-window-empty.png"));
    }

    void dropReviewSelectExportReopen()
    {
        cw::ui::MainWindow window(nullptr, m_dir.filePath(QStringLiteral("history.sqlite")));
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy shown(&window, &cw::ui::MainWindow::reviewShown);

        window.openContract(kSample); // what a drop or File > Open does
        QVERIFY2(shown.wait(120000), qPrintable(window.lastError()));
        const qint64 reviewId = shown.takeFirst().at(0).toLongLong();
        QVERIFY(reviewId > 0); // saved to the history

        cw::ui::ReviewView* view = window.reviewView();
        QTableView* table = view->table();
        QVERIFY(table->model()->rowCount() > 5);
        QVERIFY(view->review().document.pageCount() == 13);
        // The status bar: no model is a calm line, memory and the review's speed are shown.
        QCOMPARE(labelText(&window, "modelStatus"), QStringLiteral("Fast heads only — no model loaded"));
        QCOMPARE(labelText(&window, "deviceStatus"), QStringLiteral("Device: CPU"));
        QVERIFY(labelText(&window, "memoryStatus").contains(QStringLiteral("Memory:")));
        QVERIFY2(labelText(&window, "speedStatus").contains(QStringLiteral("13 pages in")),
            qPrintable(labelText(&window, "speedStatus")));

        // Select the governing-law finding: its clause is highlighted on its page.
        int governing = -1;
        for (int i = 0; i < view->review().findings.size(); ++i) {
            if (view->review().findings[i].category == QLatin1String("Governing Law"))
                governing = i;
        }
        QVERIFY2(governing >= 0, "the sample contract has a governing-law clause");
        view->selectFinding(governing);
        QVERIFY(!view->pdfView()->highlights().isEmpty());
        QTest::qWait(1500); // let the worker render the visible pages
        saveScreenshot(&window, QStringLiteral("main-window-review.png"));

        // Export: a PDF report whose text names the contract's governing law category.
        const QString pdf = m_dir.filePath(QStringLiteral("report.pdf"));
        // The export runs on a worker: the task cannot have finished before the event loop
        // ran (it resumes through a queued signal), whereas an export on the UI thread would
        // be done when exportCurrent returns.
        auto exporting = window.exportCurrent(pdf, QStringLiteral("pdf"));
        QVERIFY2(!exporting.isReady(), "the report was written on the UI thread");
        QVERIFY(awaited(std::move(exporting)));
        QVERIFY(QFileInfo(pdf).size() > 1000);
        QProcess pdftotext;
        pdftotext.start(QStringLiteral("pdftotext"), { pdf, QStringLiteral("-") });
        if (pdftotext.waitForFinished(30000) && pdftotext.exitCode() == 0)
            QVERIFY(QString::fromUtf8(pdftotext.readAllStandardOutput())
                        .contains(QLatin1String("Governing Law")));

        // Reopen from the history without re-running: same findings.
        const int findings = int(view->review().findings.size());
        view->setReview(cw::Review {});
        QVERIFY(awaited(window.openFromHistory(reviewId)));
        QCOMPARE(int(view->review().findings.size()), findings);

        cw::ui::HistoryDialog dialog(window.history(), &window);
        dialog.resize(900, 400);
        dialog.refresh();
        dialog.show();
        QTRY_VERIFY_WITH_TIMEOUT(dialog.model()->rowCount() >= 1, 10000);
        saveScreenshot(&dialog, QStringLiteral("history.png"));
    }

    void exportFromTheMenuNamesTheFileWritten()
    {
        // As File ▸ Export Report does it: the save dialog answers, the slot returns while the
        // report is written on a worker, and the message comes later, naming the file.
        cw::ui::MainWindow window(nullptr, m_dir.filePath(QStringLiteral("menu-export.sqlite")));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy shown(&window, &cw::ui::MainWindow::reviewShown);
        window.openContract(kSample);
        QVERIFY2(shown.wait(120000), qPrintable(window.lastError()));
        auto* exportAction = window.findChild<QAction*>(QStringLiteral("exportAction"));
        QVERIFY(exportAction && exportAction->isEnabled());

        const QString path = m_dir.filePath(QStringLiteral("menu-report.pdf"));
        bool answered = false;
        QTimer answer; // the dialog runs its own event loop; this answers it as a user would
        connect(&answer, &QTimer::timeout, &window, [&] {
            auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
            if (!dialog || !dialog->isVisible())
                return;
            answer.stop();
            // Typed into the name field, as a user does: selectFile() on the widget dialog
            // leaves the field showing the suggested name, which accept() then returns.
            auto* name = dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"));
            QVERIFY(name);
            name->setText(path);
            static_cast<QDialog*>(dialog)->accept(); // public in QDialog
            answered = true;
        });
        answer.start(20);
        exportAction->trigger();
        QVERIFY(answered);
        QCOMPARE(window.statusBar()->currentMessage(), QStringLiteral("Writing the report…"));
        QVERIFY(!exportAction->isEnabled());
        scrubStack();
        QTRY_COMPARE_WITH_TIMEOUT(window.statusBar()->currentMessage(),
            QStringLiteral("Report written to %1").arg(path), 60000);
        QVERIFY(QFileInfo(path).size() > 1000);
        QVERIFY(exportAction->isEnabled());
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
    }

    void darkThemeScreenshot()
    {
        cw::ui::applyUiTheme(QStringLiteral("dark"));
        {
            cw::ui::MainWindow window(nullptr, m_dir.filePath(QStringLiteral("dark.sqlite")));
            window.resize(1400, 900);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            QSignalSpy shown(&window, &cw::ui::MainWindow::reviewShown);
            window.openContract(kSample);
            QVERIFY2(shown.wait(120000), qPrintable(window.lastError()));
            cw::ui::ReviewView* view = window.reviewView();
            for (int i = 0; i < view->review().findings.size(); ++i) {
                if (view->review().findings[i].category == QLatin1String("Governing Law"))
                    view->selectFinding(i);
            }
            QTest::qWait(1500);
            QVERIFY(cw::ui::isDarkTheme());
            saveScreenshot(&window, QStringLiteral("main-window-review-dark.png"));
        }
        cw::ui::applyUiTheme(QStringLiteral("light"));
    }

    void asksForThePasswordOfAnEncryptedPdf()
    {
        const QString encrypted = kIngestData + QStringLiteral("encrypted.pdf");
        cw::PdfPasswords::forget(encrypted);
        cw::ui::MainWindow window(nullptr, m_dir.filePath(QStringLiteral("password.sqlite")));
        window.resize(1200, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));

        // Cancel: a calm notice naming the file, no error and nothing reviewed.
        QSignalSpy notices(&window, &cw::ui::MainWindow::noticeShown);
        QSignalSpy errors(&window, &cw::ui::MainWindow::errorShown);
        window.openContract(encrypted);
        QInputDialog* dialog = passwordDialog(&window);
        QVERIFY(dialog);
        QVERIFY(dialog->labelText().contains(QStringLiteral("encrypted.pdf")));
        QCOMPARE(dialog->textEchoMode(), QLineEdit::Password);
        dialog->reject();
        QTRY_VERIFY_WITH_TIMEOUT(!notices.isEmpty(), 10000);
        QVERIFY(notices.takeFirst().at(0).toString().contains(QStringLiteral("encrypted.pdf")));
        QCOMPARE(errors.size(), 0);
        QVERIFY(!window.queue()->isBusy());

        // A wrong password asks again, saying so; the right one reviews the contract and
        // shows its pages.
        QSignalSpy shown(&window, &cw::ui::MainWindow::reviewShown);
        window.openContract(encrypted);
        dialog = passwordDialog(&window);
        QVERIFY(dialog);
        dialog->setTextValue(QStringLiteral("letmein"));
        dialog->accept();
        QTRY_VERIFY_WITH_TIMEOUT(passwordDialog(&window)
                && passwordDialog(&window)->labelText().contains(QStringLiteral("does not open")),
            30000);
        saveScreenshot(passwordDialog(&window), QStringLiteral("password-prompt.png"));
        dialog = passwordDialog(&window);
        dialog->setTextValue(QStringLiteral("user-pw"));
        dialog->accept();
        QVERIFY2(shown.wait(120000), qPrintable(window.lastError()));
        QCOMPARE(errors.size(), 0);
        cw::ui::ReviewView* view = window.reviewView();
        QCOMPARE(view->review().document.pageCount(), 5);
        // The pages open on a worker, with the same password.
        QTRY_VERIFY_WITH_TIMEOUT(
            view->pdfView()->renderer() && view->pdfView()->renderer()->pageCount() == 5, 30000);
        QVERIFY(view->documentError().isEmpty());
        cw::PdfPasswords::forget(encrypted);
    }

    void reportsBadInputAndKeepsTheReviewShown_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        QTest::newRow("corrupt") << kIngestData + QStringLiteral("truncated.pdf")
                                 << QStringLiteral("not a readable PDF");
        QTest::newRow("empty") << kIngestData + QStringLiteral("empty.pdf") << QStringLiteral("empty");
        QTest::newRow("scanned") << kIngestData + QStringLiteral("image-only.pdf")
                                 << QStringLiteral("OCR");
        const QString huge = m_dir.filePath(QStringLiteral("huge-scan.pdf"));
        QVERIFY(cw::testing::writeHugePdf(huge, qint64(300) * 1000 * 1000));
        QTest::newRow("300 MB") << huge << QStringLiteral("too large");
        const QString bomb = m_dir.filePath(QStringLiteral("bomb.docx"));
        QVERIFY(cw::testing::writeZipBomb(bomb, 260));
        QTest::newRow("zip bomb") << bomb << QStringLiteral("zip bomb");
        QTest::newRow("missing") << m_dir.filePath(QStringLiteral("gone.pdf"))
                                 << QStringLiteral("no such file");
        // Root reads any file (the reader and CLI tests check this case as "nobody").
        if (geteuid() != 0) {
            const QString secret = m_dir.filePath(QStringLiteral("secret.pdf"));
            QFile::remove(secret); // from an earlier call of this data function
            QVERIFY(QFile::copy(kIngestData + QStringLiteral("gocall-promotion-agreement.pdf"), secret));
            QVERIFY(QFile::setPermissions(secret, QFileDevice::WriteOwner));
            QTest::newRow("no permission") << secret << QStringLiteral("permission denied");
        }
    }

    void reportsBadInputAndKeepsTheReviewShown()
    {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        if (!m_badInputWindow) {
            m_badInputWindow = std::make_unique<cw::ui::MainWindow>(
                nullptr, m_dir.filePath(QStringLiteral("bad-input.sqlite")));
            m_badInputWindow->resize(1200, 800);
            m_badInputWindow->show();
            QVERIFY(QTest::qWaitForWindowExposed(m_badInputWindow.get()));
            QSignalSpy shown(m_badInputWindow.get(), &cw::ui::MainWindow::reviewShown);
            m_badInputWindow->openContract(kIngestData + QStringLiteral("gocall-promotion-agreement.pdf"));
            QVERIFY2(shown.wait(120000), qPrintable(m_badInputWindow->lastError()));
        }
        cw::ui::MainWindow& window = *m_badInputWindow;
        const cw::Review before = window.reviewView()->review();
        QSignalSpy errors(&window, &cw::ui::MainWindow::errorShown);
        window.openContract(file);
        // A file that fails at once can report before openContract() returns.
        QTRY_VERIFY_WITH_TIMEOUT(!errors.isEmpty(), 60000);
        const QString message = errors.takeFirst().at(0).toString();
        QVERIFY2(message.contains(expected), qPrintable(message));
        QVERIFY2(message.contains(QFileInfo(file).fileName()), qPrintable(message));
        auto* bar = window.findChild<cw::ui::MessageBar*>(QStringLiteral("messageBar"));
        QVERIFY(bar && bar->text() == message);
        // The review that was on screen is still there, and so is its history entry.
        QCOMPARE(window.reviewView()->review().document.path, before.document.path);
        QCOMPARE(window.reviewView()->review().findings.size(), before.findings.size());
        QCOMPARE(window.reviewView()->review().id, before.id);
        if (QTest::currentDataTag() == QLatin1String("scanned")) {
            QTest::qWait(1500); // the earlier contract's pages render again
            saveScreenshot(&window, QStringLiteral("message-bar-scanned.png"));
        }
    }

    void fullDiskExportKeepsThePreviousReport()
    {
        QVERIFY(m_badInputWindow);
        cw::ui::MainWindow& window = *m_badInputWindow;
        const QString out = m_dir.filePath(QStringLiteral("gocall-review.pdf"));
        QFile previous(out);
        QVERIFY(previous.open(QIODevice::WriteOnly));
        previous.write("yesterday's report");
        previous.close();
        QSignalSpy errors(&window, &cw::ui::MainWindow::errorShown);
        // The disk fills up: no file of this process may grow past 8 KB, and the signal that
        // would kill it is ignored, so writes fail with EFBIG as on a full disk.
        rlimit saved {};
        QVERIFY(getrlimit(RLIMIT_FSIZE, &saved) == 0);
        auto* oldHandler = std::signal(SIGXFSZ, SIG_IGN);
        rlimit tiny = saved;
        tiny.rlim_cur = 8 * 1024;
        QVERIFY(setrlimit(RLIMIT_FSIZE, &tiny) == 0);
        const bool exported = awaited(window.exportCurrent(out, QStringLiteral("pdf")));
        setrlimit(RLIMIT_FSIZE, &saved);
        std::signal(SIGXFSZ, oldHandler);
        QVERIFY(!exported);
        QCOMPARE(errors.size(), 1);
        QVERIFY2(errors.at(0).at(0).toString().contains(out), qPrintable(errors.at(0).at(0).toString()));
        QVERIFY(previous.open(QIODevice::ReadOnly));
        QCOMPARE(previous.readAll(), QByteArray("yesterday's report"));
        previous.close();
        // With space again the same export works.
        QVERIFY(awaited(window.exportCurrent(out, QStringLiteral("pdf"))));
        QVERIFY(QFileInfo(out).size() > 1000);
        m_badInputWindow.reset();
    }

    void rendersPagesAtTheDevicePixelRatio()
    {
        cw::ui::MainWindow window(nullptr, m_dir.filePath(QStringLiteral("hidpi.sqlite")));
        window.resize(1200, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy shown(&window, &cw::ui::MainWindow::reviewShown);
        window.openContract(kSample);
        QVERIFY2(shown.wait(120000), qPrintable(window.lastError()));
        cw::ui::PdfView* pdf = window.reviewView()->pdfView();
        QSignalSpy painted(pdf, &cw::ui::PdfView::pageShown);
        pdf->viewport()->update();
        QTRY_VERIFY_WITH_TIMEOUT(
            pdf->renderer() && pdf->renderer()->page(0, pdf->renderDpi()).width() > 1, 10000);
        // One image pixel per device pixel: the page image is as wide as the page on screen
        // times the device pixel ratio, within the cache's rounding of the resolution (to 6
        // dpi: 5 % at the ~60 dpi of a page half the window wide, 2.5 % at twice that).
        const double dpr = pdf->devicePixelRatioF();
        const double onScreen = pdf->renderer()->pageSizePt(0).width() * pdf->pixelsPerPoint() * dpr;
        const double image = pdf->renderer()->page(0, pdf->renderDpi()).width();
        QVERIFY2(std::abs(image - onScreen) / onScreen <= 3.0 / pdf->renderDpi() + 0.01,
            qPrintable(QStringLiteral("image %1 px, page on screen %2 device px")
                           .arg(image)
                           .arg(onScreen)));
        QTest::qWait(500);
        if (dpr > 1.5)
            saveScreenshot(pdf, QStringLiteral("pdf-view-hidpi.png"));
    }

    void showsNoConfidenceWithoutCalibration()
    {
        // A finding with a calibrated confidence shows it; one without (a rule's, the model's
        // alone) shows an empty cell, not a made-up number.
        cw::ui::ReviewView view;
        cw::Review review;
        review.document.path = m_dir.filePath(QStringLiteral("contract.txt"));
        review.document.format = cw::DocumentFormat::PlainText;
        review.document.text = QStringLiteral("Governed by the laws of Delaware. Acme Inc.");
        cw::Finding calibrated;
        calibrated.category = QStringLiteral("Governing Law");
        calibrated.end = 33;
        calibrated.text = review.document.text.left(33);
        calibrated.confidence = 0.83;
        cw::Finding rule;
        rule.category = QStringLiteral("Parties");
        rule.start = 34;
        rule.end = 43;
        rule.text = QStringLiteral("Acme Inc.");
        review.findings = { calibrated, rule };
        view.setReview(review);
        QSet<QString> shown;
        const QAbstractItemModel* model = view.table()->model();
        for (int row = 0; row < model->rowCount(); ++row)
            shown.insert(
                model->index(row, cw::ui::FindingsTableModel::ConfidenceColumn).data().toString());
        QCOMPARE(shown, QSet<QString>({ QStringLiteral("83 %"), QString() }));
    }

    void opensThePdfPreviewOnAWorker()
    {
        // Poppler's load and the walk over every page's size happen off the UI thread: when
        // setReview returns the saved text shows and the pages follow; a file that moved
        // keeps the saved text and says why.
        cw::ui::ReviewView view;
        cw::Review review;
        review.document.path = kSample;
        review.document.format = cw::DocumentFormat::Pdf;
        review.document.text = QStringLiteral("saved text");
        QSignalSpy shown(&view, &cw::ui::ReviewView::documentShown);
        view.setReview(review);
        QVERIFY2(!view.pdfView()->renderer(), "the PDF was opened on the UI thread");
        QVERIFY(shown.wait(30000));
        QVERIFY(view.pdfView()->renderer());
        QCOMPARE(view.pdfView()->renderer()->pageCount(), 13);
        QVERIFY(view.documentError().isEmpty());

        review.document.path = m_dir.filePath(QStringLiteral("moved-away.pdf"));
        view.setReview(review);
        QVERIFY(shown.wait(30000));
        QVERIFY(!view.pdfView()->renderer());
        QVERIFY2(view.documentError().contains(QLatin1String("moved-away.pdf")),
            qPrintable(view.documentError()));
    }

    void reportsAnUnreadableFileInTheWindow()
    {
        cw::ui::MainWindow window(nullptr, m_dir.filePath(QStringLiteral("errors.sqlite")));
        window.show();
        QSignalSpy errors(&window, &cw::ui::MainWindow::errorShown);
        const QString bogus = m_dir.filePath(QStringLiteral("not-a-contract.pdf"));
        QFile file(bogus);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("%PDF-1.4 this is not really a pdf");
        file.close();
        window.openContract(bogus);
        QTRY_VERIFY_WITH_TIMEOUT(!errors.isEmpty(), 30000);
        QVERIFY2(errors.takeFirst().at(0).toString().contains(QLatin1String("not-a-contract.pdf")),
            "the error names the file");
    }

private:
    QTemporaryDir m_dir;
    std::unique_ptr<cw::ui::MainWindow> m_badInputWindow;
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
