// The folder review: every contract reviewed and saved to the history, a second run resumed
// from it by content hash, cancel, and the table written as CSV and as XLSX (read back here
// cell by cell).
#include "app/folder_review/folder_review.h"
#include "app/folder_review/review_table.h"
#include "app/heads/cuad_dataset.h"
#include "app/history/history_database.h"
#include "xlsx_reading.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

using namespace cw;

namespace {

void writeFile(const QString& path, const QByteArray& bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        qFatal("cannot write %s", qPrintable(path));
    file.write(bytes);
}

qint64 reviewsIn(const QString& db)
{
    auto opened = HistoryDatabase::open(db);
    if (!opened)
        qFatal("%s", opened.error().message.c_str());
    return *(*opened)->count();
}

} // namespace

class FolderReviewTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_folder;

private slots:
    void initTestCase()
    {
        auto contracts = heads::readLabelledContracts(
            QStringLiteral(CW_TEST_DATA_DIR "/heads/heldout.jsonl.xz"));
        QVERIFY(contracts.ok());
        QVERIFY(contracts->size() >= 3);
        m_folder = m_dir.filePath("contracts");
        writeFile(m_folder + "/a.txt", contracts->at(0).text.toUtf8());
        writeFile(m_folder + "/sub/b.TXT", contracts->at(1).text.toUtf8());
        writeFile(m_folder + "/c.txt", contracts->at(2).text.toUtf8());
        writeFile(m_folder + "/broken.pdf", "not a pdf at all");
        writeFile(m_folder + "/notes.md", "not a contract");
        writeFile(m_folder + "/~$a.docx", "Word's lock file");
    }

    void findsTheContractsOfAFolder()
    {
        QStringList relative;
        for (const QString& path : contractsUnder(m_folder))
            relative.append(QDir(m_folder).relativeFilePath(path));
        QCOMPARE(relative, QStringList({ "a.txt", "broken.pdf", "c.txt", "sub/b.TXT" }));
    }

    void reviewsSavesAndResumes()
    {
        FolderReviewOptions options;
        options.historyPath = m_dir.filePath("resume.sqlite");
        options.jobs = 2;
        QList<FolderReviewProgress> seen;
        auto first = reviewFolder(
            m_folder, options, nullptr, [&](const FolderReviewProgress& p) { seen.append(p); });
        QVERIFY2(first.ok(), first.ok() ? "" : first.error().message.c_str());
        QCOMPARE(first->size(), 4);
        QCOMPARE(seen.size(), 4);
        QCOMPARE(seen.back().done, 4);
        QCOMPARE(seen.back().total, 4);
        QCOMPARE(seen.back().failed, 1);
        QVERIFY(seen.back().remainingMs.has_value());
        QCOMPARE(*seen.back().remainingMs, qint64(0));
        QCOMPARE(reviewsIn(options.historyPath), qint64(3));
        const ContractResult& broken = first->at(1);
        QCOMPARE(broken.relativePath, QStringLiteral("broken.pdf"));
        QVERIFY(!broken.review);
        QVERIFY(broken.error.contains("broken.pdf"));
        for (int i : { 0, 2, 3 }) {
            QVERIFY(first->at(i).review);
            QVERIFY(!first->at(i).resumed);
            QVERIFY(first->at(i).review->id > 0);
        }

        auto second = reviewFolder(m_folder, options);
        QVERIFY(second.ok());
        for (int i : { 0, 2, 3 }) {
            QVERIFY(second->at(i).resumed);
            QCOMPARE(second->at(i).review->id, first->at(i).review->id);
            QCOMPARE(second->at(i).review->findings.size(), first->at(i).review->findings.size());
        }
        QCOMPARE(reviewsIn(options.historyPath), qint64(3)); // nothing reviewed twice
    }

    void cancelKeepsWhatWasSaved()
    {
        FolderReviewOptions options;
        options.historyPath = m_dir.filePath("cancel.sqlite");
        options.jobs = 1;
        std::atomic_bool cancel { false };
        auto result = reviewFolder(m_folder, options, &cancel, [&](const FolderReviewProgress& p) {
            if (p.done - p.failed >= 1)
                cancel.store(true);
        });
        QVERIFY(!result.ok());
        QCOMPARE(QString::fromStdString(result.error().message), QStringLiteral("cancelled"));
        const qint64 saved = reviewsIn(options.historyPath);
        QVERIFY(saved >= 1 && saved < 3);
        auto resumed = reviewFolder(m_folder, options);
        QVERIFY(resumed.ok());
        int fromHistory = 0;
        for (const ContractResult& r : *resumed)
            fromHistory += r.resumed;
        QCOMPARE(qint64(fromHistory), saved);
        QCOMPARE(reviewsIn(options.historyPath), qint64(3));
    }

    void writesTheTableAsXlsxAndCsv()
    {
        FolderReviewOptions options;
        options.historyPath = m_dir.filePath("table.sqlite");
        auto results = reviewFolder(m_folder, options);
        QVERIFY(results.ok());
        const ReviewTable table = buildReviewTable(*results);
        QCOMPARE(table.rows.size(), 4);
        QCOMPARE(table.failed, 1);
        QCOMPARE(table.categories.size(), 41);
        const qsizetype law = table.categories.indexOf("Governing Law");
        QVERIFY(law >= 0);

        const QString xlsx = m_dir.filePath("table.xlsx");
        auto written = writeReviewTable(table, xlsx);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().message.c_str());
        const QList<testing::XlsxSheet> sheets = testing::readXlsx(xlsx);
        QCOMPARE(sheets.size(), 2);
        QCOMPARE(sheets[0].name, QStringLiteral("Contracts"));
        QCOMPARE(sheets[1].name, QStringLiteral("Summary"));
        const auto& cells = sheets[0].cells;
        QCOMPARE(cells.value("A1"), QStringLiteral("File"));
        const int lawColumn = 8 + 4 * int(law);
        QCOMPARE(
            cells.value(testing::columnName(lawColumn) + "1"), QStringLiteral("Governing Law"));
        QCOMPARE(cells.value(testing::columnName(lawColumn) + "2"), QStringLiteral("present"));
        QCOMPARE(cells.value(testing::columnName(lawColumn + 2) + "2"), QStringLiteral("risk"));
        QCOMPARE(cells.value("A3"), QStringLiteral("a.txt"));
        QCOMPARE(cells.value("A4"), QStringLiteral("broken.pdf"));
        QVERIFY(cells.value("C4").contains("broken.pdf"));
        QCOMPARE(cells.value("A6"), QStringLiteral("sub/b.TXT"));
        // Each row's Governing Law group says what its review found.
        for (int r = 0; r < 4; ++r) {
            const CategoryCell& cell = table.rows[r].cells[law];
            const QString row = QString::number(r + 3);
            QCOMPARE(cells.value(testing::columnName(lawColumn) + row),
                QString(cell.present ? "yes" : "no"));
            QCOMPARE(cells.value(testing::columnName(lawColumn + 1) + row), cell.excerpt);
        }
        QVERIFY(table.rows[0].cells[law].present); // the held-out contracts choose a law
        const auto& summary = sheets[1].cells;
        QCOMPARE(summary.value("A1"), QStringLiteral("Contracts"));
        QCOMPARE(summary.value("B1"), QStringLiteral("4"));
        QCOMPARE(summary.value("A4"), QStringLiteral("Could not be reviewed"));
        QCOMPARE(summary.value("B4"), QStringLiteral("1"));
        QCOMPARE(summary.value("A9"), QStringLiteral("Category"));
        QCOMPARE(
            summary.value(QStringLiteral("A%1").arg(10 + law)), QStringLiteral("Governing Law"));
        QCOMPARE(summary.value(QStringLiteral("B%1").arg(10 + law)),
            QString::number(table.summary[law].contracts));

        const QString csv = m_dir.filePath("table.csv");
        QVERIFY(writeReviewTable(table, csv).ok());
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray header = file.readLine();
        QVERIFY(header.startsWith("File,Title,Status,Pages,High,Medium,Low,"));
        QVERIFY(header.contains("Governing Law: present,Governing Law: excerpt,Governing Law: "
                                "risk,Governing Law: page"));
        QCOMPARE(reviewTableHeaders(table).size(), 8 + 41 * 4);
        QVERIFY(file.readLine().startsWith("a.txt,"));
        QVERIFY(!writeReviewTable(table, m_dir.filePath("table.ods")).ok());
    }

    void refusesAMissingFolder()
    {
        FolderReviewOptions options;
        options.historyPath = m_dir.filePath("missing.sqlite");
        auto result = reviewFolder(m_dir.filePath("nowhere"), options);
        QVERIFY(!result.ok());
        QVERIFY(QString::fromStdString(result.error().message).contains("not a folder"));
    }
};

QTEST_GUILESS_MAIN(FolderReviewTest)
#include "folder_review_test.moc"
