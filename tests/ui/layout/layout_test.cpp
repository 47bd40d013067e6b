// The main window at 1280 x 800 (the default size) under QT_QPA_PLATFORM=offscreen, measured
// rather than looked at: the findings table's text column, the review beside the code panel,
// the code editor's line numbers, the detail pane after another contract, the menus on the
// welcome page, the title of a review reopened from the history. Screenshots land in the
// test's build folder (docs/screens has before/after copies).
#include "app/desktop/review_queue.h"
#include "ui/code_panel.h"
#include "ui/finding_detail_pane.h"
#include "ui/findings_table_model.h"
#include "ui/main_window.h"
#include "ui/pdf_view.h"
#include "ui/review_view.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTest>
#include <qcoro/qcorotask.h>

namespace {

const QString kSample = QStringLiteral(CW_SOURCE_DIR "/resources/samples/sample-contract.pdf");

void saveScreenshot(QWidget* widget, const QString& name)
{
    const QPixmap shot = widget->grab();
    QVERIFY(!shot.isNull());
    QVERIFY(shot.save(QDir(QStringLiteral(CW_TEST_BINARY_DIR)).filePath(name)));
}

QAction* action(QWidget* window, const QString& text)
{
    for (QAction* a : window->findChildren<QAction*>()) {
        if (a->text() == text)
            return a;
    }
    return nullptr;
}

int textChars(QTableView* table, int width)
{
    return width / std::max(1, table->fontMetrics().averageCharWidth());
}

} // namespace

class LayoutTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setApplicationName(QStringLiteral("clausewright-ui-layout-test"));
        QSettings().clear();
        QSettings().setValue(QStringLiteral("firstRun/choice"), QStringLiteral("fast"));
        QVERIFY(m_dir.isValid());
        m_window = std::make_unique<cw::ui::MainWindow>(
            nullptr, m_dir.filePath(QStringLiteral("layout.sqlite")));
        m_window->resize(1280, 800);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }

    void welcomePageDisablesWhatNeedsAReview()
    {
        // Nothing is open: zooming, paging and filtering would do nothing, so they are off;
        // so is Cancel while nothing runs. Opening a file and the code panel stay on.
        cw::ui::MainWindow& window = *m_window;
        QVERIFY(window.findChild<QLabel*>(QStringLiteral("dropZone"))->isVisible());
        saveScreenshot(&window, QStringLiteral("welcome.png"));
        for (const QString& text : { QStringLiteral("Zoom &In"), QStringLiteral("Zoom &Out"),
                 QStringLiteral("&Fit Width"), QStringLiteral("&Next Page"),
                 QStringLiteral("&Previous Page"), QStringLiteral("&Copy Selection"),
                 QStringLiteral("&Filter Clauses"), QStringLiteral("&Cancel Review") }) {
            QAction* a = action(&window, text);
            QVERIFY2(a, qPrintable(text));
            QVERIFY2(!a->isEnabled(), qPrintable(text + QStringLiteral(" is enabled")));
        }
        QVERIFY(action(&window, QStringLiteral("&Open Contract…"))->isEnabled());
        QVERIFY(action(&window, QStringLiteral("Code and &Tests"))->isEnabled());
    }

    void textColumnKeepsRoomForTheClause()
    {
        cw::ui::MainWindow& window = *m_window;
        QSignalSpy shown(&window, &cw::ui::MainWindow::reviewShown);
        window.openContract(kSample);
        QVERIFY2(shown.wait(120000), qPrintable(window.lastError()));
        m_reviewId = shown.takeFirst().at(0).toLongLong();
        cw::ui::ReviewView* view = window.reviewView();
        QTRY_VERIFY_WITH_TIMEOUT(view->pdfView()->renderer() != nullptr, 30000);
        QTest::qWait(800); // the visible pages render
        saveScreenshot(&window, QStringLiteral("review-1280.png"));
        QTableView* table = view->table();
        const int text = table->columnWidth(cw::ui::FindingsTableModel::TextColumn);
        QVERIFY2(textChars(table, text) >= 40,
            qPrintable(QStringLiteral("the text column has room for %1 characters (%2 px)")
                           .arg(textChars(table, text))
                           .arg(text)));
        // The review is open: its actions are on, Cancel is not (nothing runs).
        QVERIFY(action(&window, QStringLiteral("Zoom &In"))->isEnabled());
        QVERIFY(action(&window, QStringLiteral("&Filter Clauses"))->isEnabled());
        QVERIFY(!action(&window, QStringLiteral("&Cancel Review"))->isEnabled());
    }

    void codePanelLeavesTheReviewReadable()
    {
        cw::ui::MainWindow& window = *m_window;
        QAction* code = action(&window, QStringLiteral("Code and &Tests"));
        QVERIFY(code);
        const int pagesAlone = window.reviewView()->pdfView()->width();
        code->trigger();
        QTRY_VERIFY(window.codePanel()->isVisible());
        QTest::qWait(800);
        saveScreenshot(&window, QStringLiteral("review-with-code-panel.png"));
        cw::ui::ReviewView* view = window.reviewView();
        const int pages = view->pdfView()->width();
        const int findings = view->table()->width();
        const int panel = window.codePanel()->width();
        const QString sizes = QStringLiteral("pages %1 px, findings %2 px, code panel %3 px")
                                  .arg(pages)
                                  .arg(findings)
                                  .arg(panel);
        // Readable: the findings column gives way to its minimum before the pages do.
        QVERIFY2(pages >= 480, qPrintable(sizes));
        QVERIFY2(findings >= 360, qPrintable(sizes));
        QVERIFY2(panel >= 360, qPrintable(sizes));
        QVERIFY2(panel < window.width() / 2, qPrintable(sizes));
        // The table keeps some clause text even here.
        QTableView* table = view->table();
        QVERIFY2(textChars(table, table->columnWidth(cw::ui::FindingsTableModel::TextColumn)) >= 20,
            qPrintable(sizes));
        // Closed, the review has its widths from before; opened again, the same as now.
        code->trigger();
        QTRY_VERIFY(!window.codePanel()->isVisible());
        QTRY_VERIFY2(std::abs(view->pdfView()->width() - pagesAlone) <= 8,
            qPrintable(QStringLiteral("pages %1 px, before %2 px")
                           .arg(view->pdfView()->width())
                           .arg(pagesAlone)));
        QVERIFY(!table->isColumnHidden(cw::ui::FindingsTableModel::ConfidenceColumn));
        code->trigger();
        QTRY_VERIFY(window.codePanel()->isVisible());
        QTRY_VERIFY2(std::abs(view->pdfView()->width() - pages) <= 8,
            qPrintable(QStringLiteral("pages %1 px, first %2 px")
                           .arg(view->pdfView()->width())
                           .arg(pages)));
    }

    void codeEditorNumbersItsLines()
    {
        cw::ui::CodePanel* panel = m_window->codePanel();
        QPlainTextEdit* editor = panel->codeEditor();
        QString code;
        for (int line = 1; line <= 40; ++line)
            code += QStringLiteral("x%1 = %1\n").arg(line);
        panel->setCode(code, QStringLiteral("numbers.py"));
        QTest::qWait(200);
        saveScreenshot(panel, QStringLiteral("code-editor.png"));
        auto* gutter = editor->findChild<QWidget*>(QStringLiteral("lineNumbers"));
        QVERIFY2(gutter, "the code editor has no line numbers");
        QVERIFY(gutter->isVisible());
        // Wide enough for "40" and left of the text, which starts after it.
        QVERIFY(gutter->width() >= editor->fontMetrics().horizontalAdvance(QStringLiteral("40")));
        QVERIFY(editor->viewport()->geometry().left() >= gutter->geometry().right());
        action(m_window.get(), QStringLiteral("Code and &Tests"))->trigger(); // closes it
        QTRY_VERIFY(!panel->isVisible());
    }

    void detailPaneClearsForANewContract()
    {
        cw::ui::ReviewView* view = m_window->reviewView();
        const cw::Review& first = view->review();
        int governing = -1;
        for (int i = 0; i < first.findings.size(); ++i) {
            if (first.findings[i].category == QLatin1String("Governing Law"))
                governing = i;
        }
        QVERIFY(governing >= 0);
        view->selectFinding(governing);
        auto* category = view->detailPane()->findChild<QComboBox*>();
        QVERIFY(category);
        QCOMPARE(category->currentText(), QStringLiteral("Governing Law"));

        cw::Review other;
        other.document.path = m_dir.filePath(QStringLiteral("other.txt"));
        other.document.format = cw::DocumentFormat::PlainText;
        other.document.text = QStringLiteral("A contract without findings.");
        view->setReview(other);
        for (auto* combo : view->detailPane()->findChildren<QComboBox*>()) {
            QVERIFY2(combo->currentText().isEmpty(),
                qPrintable(combo->accessibleName() + QStringLiteral(": ") + combo->currentText()));
            QVERIFY(!combo->isEnabled());
        }
        saveScreenshot(view->detailPane(), QStringLiteral("detail-pane-cleared.png"));
    }

    void aTextContractShowsNoPageZero()
    {
        // TXT and DOCX without page breaks have no pages: the table says "-", as the reports
        // do, and the detail pane names no page.
        cw::ui::ReviewView* view = m_window->reviewView();
        cw::Review text;
        text.document.path = m_dir.filePath(QStringLiteral("plain.txt"));
        text.document.format = cw::DocumentFormat::PlainText;
        text.document.text = QStringLiteral("This Agreement is governed by the laws of Delaware.");
        cw::Finding finding;
        finding.category = QStringLiteral("Governing Law");
        finding.risk = cw::Risk::Low;
        finding.page = 0;
        text.findings.append(finding);
        view->setReview(text);
        QAbstractItemModel* model = view->table()->model();
        QCOMPARE(model->rowCount(), 1);
        int pageColumn = -1;
        for (int c = 0; c < model->columnCount(); ++c) {
            if (model->headerData(c, Qt::Horizontal).toString() == QLatin1String("Page"))
                pageColumn = c;
        }
        QVERIFY(pageColumn >= 0);
        QCOMPARE(model->index(0, pageColumn).data().toString(), QStringLiteral("-"));
        view->selectFinding(0);
        auto* body = view->detailPane()->findChild<QTextBrowser*>();
        QVERIFY(body);
        QVERIFY2(!body->toPlainText().contains(QLatin1String("page 0")),
            qPrintable(body->toPlainText()));
    }

    void reopenedReviewNamesItsContractInTheTitle()
    {
        // Another window on the same history, as after a restart: File ▸ History ▸ Open.
        cw::ui::MainWindow window(nullptr, m_dir.filePath(QStringLiteral("layout.sqlite")));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QCOMPARE(window.windowTitle(), QStringLiteral("Clausewright"));
        QVERIFY(m_reviewId > 0);
        QVERIFY(QCoro::waitFor(window.openFromHistory(m_reviewId)));
        const cw::Review& review = window.reviewView()->review();
        const QString name = review.document.title.isEmpty()
            ? QFileInfo(review.document.path).fileName()
            : review.document.title;
        QCOMPARE(window.windowTitle(), QStringLiteral("%1 — Clausewright").arg(name));
    }

    void cleanupTestCase() { m_window.reset(); }

private:
    QTemporaryDir m_dir;
    std::unique_ptr<cw::ui::MainWindow> m_window;
    qint64 m_reviewId = 0;
};

QTEST_MAIN(LayoutTest)
#include "layout_test.moc"
