// `clausewright-cli review` and `history export` on bad input, run as a user would: each case
// exits non-zero with a message on standard error that names the file, and a full disk
// leaves the report already at the output path as it was.
#include "app/history/history_database.h"
#include "hostile_files.h"
#include "tests/app/report/sample_review.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <unistd.h>

namespace {

QString dataFile(const char* name)
{
    return QStringLiteral(CW_TEST_DATA_DIR "/ingest/") + QLatin1String(name);
}

struct CliRun {
    int exitCode = -1;
    QString out;
    QString err;
};

// `prefix` runs before the CLI (setpriv, a shell with ulimit); `environment` adds variables.
CliRun runCli(const QStringList& arguments, const QStringList& prefix = {},
    const QStringList& environment = {})
{
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    for (const QString& pair : environment)
        env.insert(pair.section(QLatin1Char('='), 0, 0), pair.section(QLatin1Char('='), 1));
    process.setProcessEnvironment(env);
    QStringList command = prefix;
    command << QStringLiteral(CW_CLI_EXECUTABLE) << arguments;
    process.start(command.takeFirst(), command);
    CliRun run;
    if (!process.waitForFinished(120000))
        return run;
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

} // namespace

class CliBadInputTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void refusesBadFiles_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        QTest::newRow("encrypted") << dataFile("encrypted.pdf") << QStringLiteral("password protected");
        QTest::newRow("scanned") << dataFile("image-only.pdf") << QStringLiteral("OCR");
        QTest::newRow("corrupt") << dataFile("truncated.pdf") << QStringLiteral("not a readable PDF");
        QTest::newRow("empty") << dataFile("empty.pdf") << QStringLiteral("empty");
        QTest::newRow("missing") << m_dir.filePath("missing.pdf") << QStringLiteral("no such file");
        const QString huge = m_dir.filePath(QStringLiteral("huge.pdf"));
        QVERIFY(cw::testing::writeHugePdf(huge, qint64(300) * 1000 * 1000));
        QTest::newRow("300 MB") << huge << QStringLiteral("too large");
        const QString bomb = m_dir.filePath(QStringLiteral("bomb.docx"));
        QVERIFY(cw::testing::writeZipBomb(bomb, 260));
        QTest::newRow("zip bomb") << bomb << QStringLiteral("zip bomb");
    }

    void refusesBadFiles()
    {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        const CliRun run = runCli({ QStringLiteral("review"), file });
        QVERIFY2(run.exitCode > 0, qPrintable(run.err));
        QVERIFY2(run.err.contains(expected), qPrintable(run.err));
        QVERIFY2(run.err.contains(file), qPrintable(run.err));
        QVERIFY(run.out.isEmpty());
    }

    void opensAnEncryptedPdfWithItsPassword()
    {
        const CliRun flag = runCli({ QStringLiteral("review"), dataFile("encrypted.pdf"),
            QStringLiteral("--password"), QStringLiteral("user-pw"), QStringLiteral("--no-save") });
        QVERIFY2(flag.exitCode == 0, qPrintable(flag.err));
        QVERIFY(flag.out.contains(QStringLiteral("\"findings\"")));
        const CliRun env = runCli(
            { QStringLiteral("review"), dataFile("encrypted.pdf"), QStringLiteral("--no-save") }, {},
            { QStringLiteral("CW_PDF_PASSWORD=owner-pw") });
        QVERIFY2(env.exitCode == 0, qPrintable(env.err));
        const CliRun wrong = runCli({ QStringLiteral("review"), dataFile("encrypted.pdf"),
            QStringLiteral("--password"), QStringLiteral("nope") });
        QVERIFY(wrong.exitCode > 0);
        QVERIFY2(wrong.err.contains(QStringLiteral("password does not open")), qPrintable(wrong.err));
        const CliRun none = runCli({ QStringLiteral("review"), dataFile("encrypted.pdf") });
        QVERIFY(none.exitCode > 0);
        QVERIFY2(none.err.contains(QStringLiteral("--password")), qPrintable(none.err));
    }

    void refusesAFileItMayNotRead()
    {
        QTemporaryDir dir;
        QVERIFY(QFile::setPermissions(dir.path(),
            QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner
                | QFileDevice::ExeGroup | QFileDevice::ExeOther));
        const QString secret = dir.filePath(QStringLiteral("secret.pdf"));
        QVERIFY(QFile::copy(dataFile("gocall-promotion-agreement.pdf"), secret));
        QVERIFY(QFile::setPermissions(secret, QFileDevice::WriteOwner));
        // Root reads anything: run the CLI as "nobody" then.
        const QStringList asNobody = geteuid() == 0
            ? QStringList { QStringLiteral("setpriv"), QStringLiteral("--reuid=65534"),
                  QStringLiteral("--regid=65534"), QStringLiteral("--clear-groups") }
            : QStringList {};
        const CliRun run = runCli({ QStringLiteral("review"), secret }, asNobody);
        QVERIFY2(run.exitCode > 0, qPrintable(run.err));
        QVERIFY2(run.err.contains(QStringLiteral("permission denied")), qPrintable(run.err));
        QVERIFY(run.err.contains(secret));
    }

    void fullDiskKeepsTheReportAlreadyThere()
    {
        const QString db = m_dir.filePath(QStringLiteral("history.sqlite"));
        // Kept open while the CLI runs, so the database's shared-memory file is already there
        // and only the report has to grow under the limit.
        auto opened = cw::HistoryDatabase::open(db);
        QVERIFY(opened.ok());
        const qint64 id = opened.value()->save(cw::testing::sampleReview()).value();
        const QString out = m_dir.filePath(QStringLiteral("report.pdf"));
        QFile previous(out);
        QVERIFY(previous.open(QIODevice::WriteOnly));
        previous.write("the report exported yesterday");
        previous.close();
        // The disk fills up: files may grow to 8 KB, and the signal that would kill the
        // writer is ignored so the write fails with EFBIG as on a full disk.
        const QStringList fullDisk { QStringLiteral("sh"), QStringLiteral("-c"),
            QStringLiteral("trap '' XFSZ; ulimit -f 8; exec \"$0\" \"$@\"") };
        const CliRun run = runCli({ QStringLiteral("history"), QStringLiteral("--db"), db,
                                      QStringLiteral("export"), QString::number(id),
                                      QStringLiteral("--format"), QStringLiteral("pdf"),
                                      QStringLiteral("--out"), out },
            fullDisk);
        QVERIFY2(run.exitCode > 0, qPrintable(run.err));
        QVERIFY2(run.err.contains(out), qPrintable(run.err));
        QVERIFY(previous.open(QIODevice::ReadOnly));
        QCOMPARE(previous.readAll(), QByteArray("the report exported yesterday"));
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(CliBadInputTest)
#include "cli_bad_input_test.moc"
