// What the readers say about input a user should not have to understand: encrypted PDFs
// (with and without their password), files too large to review, unreadable paths and ZIP
// bombs. Every message names the file.
#include "app/ingest/document_reader.h"
#include "app/ingest/pdf_passwords.h"
#include "hostile_files.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <sys/fsuid.h>
#include <unistd.h>

namespace {

QString dataFile(const char* name)
{
    return QStringLiteral(CW_TEST_DATA_DIR "/ingest/") + QLatin1String(name);
}

// encrypted.pdf is gocall-promotion-agreement.pdf encrypted by qpdf (AES-256) with these.
const QString kUserPassword = QStringLiteral("user-pw");
const QString kOwnerPassword = QStringLiteral("owner-pw");

QString message(const cw::Result<cw::Document>& result)
{
    return result.ok() ? QString() : QString::fromStdString(result.error().message);
}

} // namespace

class BadInputTest : public QObject {
    Q_OBJECT

private slots:
    void tellsLockedFromOpenAndUnreadable()
    {
        QCOMPARE(cw::pdfLockState(dataFile("encrypted.pdf")), cw::PdfLock::NeedsPassword);
        QCOMPARE(cw::pdfLockState(dataFile("gocall-promotion-agreement.pdf")), cw::PdfLock::Open);
        QCOMPARE(cw::pdfLockState(dataFile("not-a-pdf.pdf")), cw::PdfLock::Unreadable);
        QVERIFY(cw::pdfPasswordOpens(dataFile("encrypted.pdf"), kUserPassword));
        QVERIFY(cw::pdfPasswordOpens(dataFile("encrypted.pdf"), kOwnerPassword));
        QVERIFY(!cw::pdfPasswordOpens(dataFile("encrypted.pdf"), QStringLiteral("guess")));
    }

    void readsEncryptedPdfWithItsPassword()
    {
        auto plain = cw::readDocument(dataFile("gocall-promotion-agreement.pdf"));
        QVERIFY(plain.ok());
        for (const QString& password : { kUserPassword, kOwnerPassword }) {
            cw::ReadOptions options;
            options.password = password;
            auto unlocked = cw::readDocument(dataFile("encrypted.pdf"), options);
            QVERIFY2(unlocked.ok(), qPrintable(message(unlocked)));
            QCOMPARE(unlocked->text, plain->text); // both halves of the pages read
            QCOMPARE(unlocked->pageCount(), 5);
        }
    }

    void refusesAWrongOrMissingPassword()
    {
        auto locked = cw::readDocument(dataFile("encrypted.pdf"));
        QVERIFY(message(locked).contains(QStringLiteral("password protected")));
        QVERIFY(message(locked).contains(dataFile("encrypted.pdf")));
        cw::ReadOptions wrong;
        wrong.password = QStringLiteral("user-PW");
        auto refused = cw::readDocument(dataFile("encrypted.pdf"), wrong);
        QVERIFY2(message(refused).contains(QStringLiteral("password does not open")),
            qPrintable(message(refused)));
        QVERIFY(message(refused).contains(dataFile("encrypted.pdf")));
    }

    void usesThePasswordGivenEarlierInTheSession()
    {
        const QString path = dataFile("encrypted.pdf");
        cw::PdfPasswords::remember(path, kUserPassword);
        auto document = cw::readDocument(path);
        cw::PdfPasswords::forget(path);
        QVERIFY2(document.ok(), qPrintable(message(document)));
        QVERIFY(!cw::readDocument(path).ok()); // forgotten
    }

    void refusesAFileTooLargeWithoutReadingIt()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("scan-300MB.pdf"));
        QVERIFY(cw::testing::writeHugePdf(path, qint64(300) * 1000 * 1000));
        auto document = cw::readDocument(path);
        QVERIFY(!document.ok());
        QVERIFY2(message(document).contains(QStringLiteral("too large")), qPrintable(message(document)));
        QVERIFY(message(document).contains(QStringLiteral("300 MB")));
        QVERIFY(message(document).contains(path));
    }

    void refusesAFileItMayNotRead()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("secret.pdf"));
        QVERIFY(QFile::copy(dataFile("gocall-promotion-agreement.pdf"), path));
        QVERIFY(QFile::setPermissions(path, QFileDevice::WriteOwner));
        // Root reads anything: check as "nobody" (setfsuid changes this thread's file access
        // identity only).
        const bool root = geteuid() == 0;
        if (root)
            setfsuid(65534);
        auto document = cw::readDocument(path);
        if (root)
            setfsuid(0);
        QVERIFY(!document.ok());
        QVERIFY2(message(document).contains(QStringLiteral("permission denied")),
            qPrintable(message(document)));
        QVERIFY(message(document).contains(path));
    }

    void refusesADocxZipBomb()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bomb.docx"));
        QVERIFY(cw::testing::writeZipBomb(path, 260)); // 260 MB of XML, ~0.3 MB on disk
        QVERIFY(QFileInfo(path).size() < 2 * 1000 * 1000);
        auto document = cw::readDocument(path);
        QVERIFY(!document.ok());
        QVERIFY2(message(document).contains(QStringLiteral("zip bomb")), qPrintable(message(document)));
        QVERIFY(message(document).contains(path));
    }
};

QTEST_MAIN(BadInputTest)
#include "bad_input_test.moc"
