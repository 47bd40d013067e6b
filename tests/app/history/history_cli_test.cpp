#include "app/history/history_database.h"
#include "tests/app/report/sample_review.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace cw;

namespace {

struct CliRun {
    int exitCode = -1;
    QString out;
    QString err;
};

CliRun cli(const QStringList& arguments)
{
    QProcess process;
    process.start(CW_CLI_EXECUTABLE, arguments);
    CliRun run;
    if (!process.waitForFinished(120000))
        return run;
    run.exitCode = process.exitCode();
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

} // namespace

class HistoryCliTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void listsShowsAndSearches();
    void exportsEveryFormat();
    void reportsClearErrors();
    void deletes();

private:
    QTemporaryDir m_dir;
    QString m_db;
    QString m_id;
};

void HistoryCliTest::initTestCase()
{
    m_db = m_dir.filePath("history.sqlite");
    auto db = HistoryDatabase::open(m_db);
    QVERIFY(db.ok());
    Result<qint64> id = db.value()->save(testing::sampleReview());
    QVERIFY(id.ok());
    m_id = QString::number(id.value());
}

void HistoryCliTest::listsShowsAndSearches()
{
    CliRun run = cli({ "history", "list", "--db", m_db });
    QCOMPARE(run.exitCode, 0);
    QVERIFY(run.out.contains("Supply Agreement <Acme & Co>"));
    QVERIFY(run.out.contains("1-1 of 1 reviews"));
    QVERIFY(run.out.contains("1/1/1"));

    run = cli({ "history", "--db", m_db, "show", m_id });
    QCOMPARE(run.exitCode, 0);
    QVERIFY(run.out.contains("Governing Law"));
    QVERIFY(run.out.contains("Qwen3.6-35B-A3B Q4_K_M"));
    QVERIFY(run.out.contains("(edited)"));

    run = cli({ "history", "show", m_id, "--json", "--db", m_db });
    QCOMPARE(run.exitCode, 0);
    const QJsonDocument json = QJsonDocument::fromJson(run.out.toUtf8());
    QCOMPARE(json.object().value("id").toInteger(), m_id.toLongLong());
    QCOMPARE(json.object().value("findings").toArray().size(), 4);

    run = cli({ "history", "search", "Delaware", "--db", m_db });
    QCOMPARE(run.exitCode, 0);
    QVERIFY(run.out.contains("[Delaware]"));
    QVERIFY(run.out.contains("contract"));
    run = cli({ "history", "search", "zebra", "--db", m_db });
    QCOMPARE(run.exitCode, 0);
    QVERIFY(run.out.contains("No matches"));
}

void HistoryCliTest::exportsEveryFormat()
{
    const QList<QPair<QString, QByteArray>> formats { { "json", "{" },
        { "md", "# Contract review" }, { "html", "<!DOCTYPE html>" }, { "csv", "index,category" },
        { "pdf", "%PDF-" } };
    for (const auto& [format, start] : formats) {
        const QString out = m_dir.filePath("report." + format);
        const CliRun run
            = cli({ "history", "export", m_id, "--format", format, "--out", out, "--db", m_db });
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QFile file(out);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY2(file.readAll().startsWith(start), qPrintable(format));
    }
}

void HistoryCliTest::reportsClearErrors()
{
    CliRun run = cli({ "history", "export", m_id, "--format", "docx", "--out", "x", "--db", m_db });
    QCOMPARE(run.exitCode, 2);
    QVERIFY(run.err.contains("unknown format 'docx'"));
    run = cli({ "history", "export", "999", "--format", "md", "--out", m_dir.filePath("x.md"),
        "--db", m_db });
    QCOMPARE(run.exitCode, 1);
    QVERIFY(run.err.contains("no review with id 999"));
    run = cli(
        { "history", "export", m_id, "--format", "md", "--out", "/proc/report.md", "--db", m_db });
    QCOMPARE(run.exitCode, 1);
    QVERIFY(run.err.contains("/proc/report.md"));
    run = cli({ "history", "list", "--db", "/proc/clausewright/history.sqlite" });
    QCOMPARE(run.exitCode, 1);
    QVERIFY(run.err.contains("/proc/clausewright/history.sqlite"));
    run = cli({ "history", "show", "--db", m_db });
    QVERIFY(run.exitCode != 0); // ID missing: usage error
    run = cli({ "history", "--db", m_db });
    QVERIFY(run.exitCode != 0); // no sub-command
}

void HistoryCliTest::deletes()
{
    CliRun run = cli({ "history", "delete", m_id, "--db", m_db });
    QCOMPARE(run.exitCode, 0);
    run = cli({ "history", "delete", m_id, "--db", m_db });
    QCOMPARE(run.exitCode, 1);
    QVERIFY(run.err.contains("no review with id"));
    run = cli({ "history", "list", "--db", m_db });
    QCOMPARE(run.exitCode, 0);
    QVERIFY(run.out.contains("No saved reviews"));
}

QTEST_MAIN(HistoryCliTest)
#include "history_cli_test.moc"
