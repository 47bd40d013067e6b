// gui_open_bench [--runs N] [PDF]
// What a user waits for after dropping a long contract on the window: the time until page 1
// is painted and until the fast-head findings fill the clause table (and until the review is
// saved to the history), measured in the real MainWindow under QT_QPA_PLATFORM=offscreen.
//
// Without PDF it assembles a 100-page contract with qpdf from real CUAD contracts: three
// whole contracts from ../shared/data/contracts/pdf when that folder is there (Zogenix
// distributor agreement 68 pages, Buffalo Wild Wings franchise agreement 29, GoCall
// promotion agreement pages 1-3), otherwise from the repository's own CUAD files (the sample
// contract seven times, the GoCall and PrimeEnergy test contracts).
#include "app/review/review_types.h"
#include "ui/main_window.h"
#include "ui/pdf_view.h"
#include "ui/review_view.h"

#include <QAbstractItemModel>
#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

const QString kSource = QStringLiteral(CW_SOURCE_DIR);

QString makeHundredPagePdf(const QString& folder)
{
    const QDir shared(kSource + QStringLiteral("/../shared/data/contracts/pdf"));
    QStringList pages { QStringLiteral("--empty"), QStringLiteral("--pages") };
    const QString zogenix = shared.filePath(QStringLiteral(
        "ZogenixInc_20190509_10-Q_EX-10.2_11663313_EX-10.2_Distributor Agreement.pdf"));
    const QString buffalo
        = shared.filePath(QStringLiteral("BUFFALOWILDWINGSINC_06_05_1998-EX-10.3-FRANCHISE AGREEMENT.pdf"));
    const QString gocall = kSource + QStringLiteral("/tests/data/ingest/gocall-promotion-agreement.pdf");
    if (QFileInfo::exists(zogenix) && QFileInfo::exists(buffalo)) {
        pages << zogenix << QStringLiteral("1-z") << buffalo << QStringLiteral("1-z") << gocall
              << QStringLiteral("1-3");
        std::printf("contract: Zogenix (68 pages) + Buffalo Wild Wings (29) + GoCall pages 1-3\n");
    } else {
        const QString sample = kSource + QStringLiteral("/resources/samples/sample-contract.pdf");
        for (int i = 0; i < 7; ++i)
            pages << sample << QStringLiteral("1-z");
        pages << gocall << QStringLiteral("1-z")
              << kSource + QStringLiteral("/tests/data/ingest/primeenergy-ocr-scan.pdf")
              << QStringLiteral("1-z");
        std::printf("contract: the sample contract x7 (91 pages) + GoCall (5) + PrimeEnergy (4)\n");
    }
    const QString out = folder + QStringLiteral("/hundred-pages.pdf");
    pages << QStringLiteral("--") << out;
    QProcess qpdf;
    qpdf.start(QStringLiteral("qpdf"), pages);
    if (!qpdf.waitForFinished(60000) || qpdf.exitCode() > 3) { // 3: warnings only
        std::fprintf(stderr, "gui_open_bench: qpdf failed: %s\n",
            qPrintable(QString::fromLocal8Bit(qpdf.readAllStandardError())));
        return {};
    }
    return out;
}

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

struct Run {
    double page1 = -1;
    double findings = -1;
    double saved = -1;
    int findingCount = 0;
    int pages = 0;
};

Run openOnce(const QString& pdf, const QString& historyPath)
{
    Run run;
    cw::ui::MainWindow window(nullptr, historyPath);
    window.resize(1400, 900);
    window.show();
    if (!QTest::qWaitForWindowExposed(&window))
        return run;
    QTest::qWait(200); // the history opens on its worker; let start-up settle
    QElapsedTimer timer;
    QObject::connect(window.reviewView()->pdfView(), &cw::ui::PdfView::pageShown, &window,
        [&](int page) {
            if (page == 0 && run.page1 < 0)
                run.page1 = double(timer.nsecsElapsed()) / 1e6;
        });
    QAbstractItemModel* table = window.reviewView()->table()->model();
    QObject::connect(table, &QAbstractItemModel::modelReset, &window, [&] {
        if (run.findings < 0 && table->rowCount() > 0) {
            run.findings = double(timer.nsecsElapsed()) / 1e6;
            run.findingCount = table->rowCount();
            run.pages = window.reviewView()->review().document.pageCount();
        }
    });
    QObject::connect(&window, &cw::ui::MainWindow::reviewShown, &window,
        [&] { run.saved = double(timer.nsecsElapsed()) / 1e6; });
    timer.start();
    window.openContract(pdf); // what a drop does
    (void)QTest::qWaitFor(
        [&] { return run.saved >= 0 || !window.lastError().isEmpty(); }, 120000);
    if (!window.lastError().isEmpty())
        std::fprintf(stderr, "gui_open_bench: %s\n", qPrintable(window.lastError()));
    return run;
}

} // namespace

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true); // settings and history stay out of the user's
    QApplication::setApplicationName(QStringLiteral("clausewright-gui-open-bench"));
    int runs = 3;
    QString pdf;
    const QStringList args = app.arguments();
    for (int i = 1; i < args.size(); ++i) {
        if (args[i] == QLatin1String("--runs") && i + 1 < args.size())
            runs = std::max(1, args[++i].toInt());
        else
            pdf = args[i];
    }
    QTemporaryDir temp;
    if (pdf.isEmpty())
        pdf = makeHundredPagePdf(temp.path());
    if (pdf.isEmpty())
        return 1;
    std::printf("file: %s (%.1f MB), %d CPU threads\n", qPrintable(QFileInfo(pdf).fileName()),
        double(QFileInfo(pdf).size()) / 1e6, QThread::idealThreadCount());

    std::vector<double> page1, findings, saved;
    for (int i = 0; i < runs; ++i) {
        const Run run = openOnce(pdf, temp.filePath(QStringLiteral("history-%1.sqlite").arg(i)));
        if (run.page1 < 0 || run.findings < 0) {
            std::fprintf(stderr, "gui_open_bench: run %d did not finish\n", i + 1);
            return 1;
        }
        std::printf("run %d: %d pages; page 1 painted %.0f ms; %d findings shown %.0f ms; saved "
                    "to history %.0f ms\n",
            i + 1, run.pages, run.page1, run.findingCount, run.findings, run.saved);
        page1.push_back(run.page1);
        findings.push_back(run.findings);
        saved.push_back(run.saved);
    }
    std::printf("median of %d: page 1 %.0f ms (target < 1000), findings %.0f ms (target < 3000), "
                "saved %.0f ms\n",
        runs, median(page1), median(findings), median(saved));
    return 0;
}
