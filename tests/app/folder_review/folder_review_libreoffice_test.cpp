// Slow: a folder of real contracts reviewed into an XLSX that LibreOffice Calc reads (both
// sheets, converted to CSV by soffice --headless), within the time bar of the folder review.
// The folder is the CUAD PDFs beside the repository (../shared/data/contracts/pdf or
// ../../shared/..., or CW_CONTRACTS_PDF_DIR), else the sample contract and the held-out texts.
// Skipped (exit 77) where soffice is not installed.
#include "app/folder_review/folder_review.h"
#include "app/folder_review/review_table.h"
#include "app/heads/cuad_dataset.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace cw;

namespace {

QString contractsFolder(const QTemporaryDir& scratch)
{
    const QString given = qEnvironmentVariable("CW_CONTRACTS_PDF_DIR");
    // Beside the main checkout, or beside a worktree's parent folder.
    for (const QString& dir :
        { given, QStringLiteral(CW_SOURCE_DIR "/../shared/data/contracts/pdf"),
            QStringLiteral(CW_SOURCE_DIR "/../../shared/data/contracts/pdf") }) {
        if (!dir.isEmpty() && !contractsUnder(dir).isEmpty())
            return QDir(dir).absolutePath();
    }
    const QString folder = scratch.filePath("contracts");
    QDir().mkpath(folder);
    QFile::copy(QStringLiteral(CW_SOURCE_DIR "/resources/samples/sample-contract.pdf"),
        folder + "/sample-contract.pdf");
    auto contracts
        = heads::readLabelledContracts(QStringLiteral(CW_TEST_DATA_DIR "/heads/heldout.jsonl.xz"));
    for (int i = 0; contracts && i < contracts->size(); ++i) {
        QFile file(folder + QStringLiteral("/heldout-%1.txt").arg(i));
        if (file.open(QIODevice::WriteOnly))
            file.write(contracts->at(i).text.toUtf8());
    }
    return folder;
}

} // namespace

class FolderReviewLibreOfficeTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private slots:
    void calcReadsTheFolderTable()
    {
        const QString folder = contractsFolder(m_dir);
        const int count = int(contractsUnder(folder).size());
        qInfo("reviewing %d contracts under %s", count, qPrintable(folder));
        FolderReviewOptions options;
        options.historyPath = m_dir.filePath("history.sqlite");
        QElapsedTimer timer;
        timer.start();
        auto results = reviewFolder(folder, options);
        QVERIFY2(results.ok(), results.ok() ? "" : results.error().message.c_str());
        const ReviewTable table = buildReviewTable(*results);
        const QString xlsx = m_dir.filePath("contracts.xlsx");
        QVERIFY(writeReviewTable(table, xlsx).ok());
        const qint64 ms = timer.elapsed();
        qInfo("%d contracts reviewed and tabled in %lld ms", count, qlonglong(ms));
        // The bar is 2 minutes for a folder of 300 contracts on two cores; this folder (ten long
        // PDFs, about 0.65 s each through Poppler on the dev machine) must fit in it too.
        QVERIFY2(ms <= 120000, qPrintable(QString::number(ms)));
        QCOMPARE(table.failed, 0);

        // Every sheet to CSV (filter token 12 = -1: each sheet its own file).
        QProcess soffice;
        soffice.start(QStandardPaths::findExecutable("soffice"),
            { "--headless", "--norestore",
                "-env:UserInstallation=file://" + m_dir.path() + "/profile", "--convert-to",
                "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1",
                "--outdir", m_dir.path(), xlsx });
        QVERIFY(soffice.waitForFinished(120000));
        QCOMPARE(soffice.exitCode(), 0);
        QFile contracts(m_dir.filePath("contracts-Contracts.csv"));
        QVERIFY2(contracts.open(QIODevice::ReadOnly), soffice.readAllStandardError().constData());
        const QString csv = QString::fromUtf8(contracts.readAll());
        const QStringList lines = csv.split("\n", Qt::SkipEmptyParts);
        QVERIFY(
            lines.size() >= count + 2); // two header rows, a row per contract (excerpts may wrap)
        QVERIFY(lines[0].startsWith("File,Title,Status"));
        QVERIFY(lines[0].contains("Governing Law"));
        QVERIFY(lines[1].contains("present,excerpt,risk,page"));
        for (const ContractRow& row : table.rows)
            QVERIFY2(csv.contains(row.file), qPrintable(row.file));
        QFile summary(m_dir.filePath("contracts-Summary.csv"));
        QVERIFY(summary.open(QIODevice::ReadOnly));
        const QString sums = QString::fromUtf8(summary.readAll());
        QVERIFY(sums.startsWith(QStringLiteral("Contracts,%1").arg(count)));
        QVERIFY(sums.contains("Governing Law,"));
    }
};

int main(int argc, char** argv)
{
    if (QStandardPaths::findExecutable("soffice").isEmpty()) {
        std::printf("SKIP: soffice not found (install libreoffice-calc-nogui, or run "
                    "CW_WITH_LIBREOFFICE=1 installer/install-deps.sh)\n");
        return 77;
    }
    QCoreApplication app(argc, argv);
    FolderReviewLibreOfficeTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "folder_review_libreoffice_test.moc"
