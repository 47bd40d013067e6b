// The main window's flows under QT_QPA_PLATFORM=offscreen: drop a contract, watch the clause
// table fill, select a clause (highlighted on its page), export a report, reopen the review
// from the history. Screenshots land in the test's build folder (and in
// resources/screenshots when CW_UPDATE_SCREENSHOTS=1).
#include "app/history/history_store.h"
#include "app/report/report_exporter.h"
#include "ui/history_dialog.h"
#include "ui/main_window.h"
#include "ui/pdf_view.h"
#include "ui/review_view.h"

#include <QApplication>
#include <QDir>
#include <QDropEvent>
#include <QFileInfo>
#include <QLabel>
#include <QMimeData>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <qcoro/qcorotask.h>

namespace {

const QString kSample = QStringLiteral(CW_SOURCE_DIR "/resources/samples/sample-contract.pdf");

void saveScreenshot(QWidget* widget, const QString& name)
{
    const QPixmap shot = widget->grab();
    QVERIFY(!shot.isNull());
    QVERIFY(shot.save(QDir(QStringLiteral(CW_TEST_BINARY_DIR)).filePath(name)));
    if (qEnvironmentVariableIntValue("CW_UPDATE_SCREENSHOTS") == 1)
        QVERIFY(shot.save(QStringLiteral(CW_SOURCE_DIR "/resources/screenshots/") + name));
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
        QVERIFY(awaited(window.exportCurrent(pdf, QStringLiteral("pdf"))));
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
        QVERIFY(errors.wait(30000));
        QVERIFY2(errors.takeFirst().at(0).toString().contains(QLatin1String("not-a-contract.pdf")),
            "the error names the file");
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
