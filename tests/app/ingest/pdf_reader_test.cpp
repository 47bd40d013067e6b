// PDF ingest on real contracts and on broken files.
#include "app/ingest/document_reader.h"

#include <QFile>
#include <QRegularExpression>
#include <QTest>

namespace {

QString dataFile(const char* name)
{
    return QStringLiteral(CW_TEST_DATA_DIR "/ingest/") + QLatin1String(name);
}

QString sampleContract()
{
    return QStringLiteral(CW_SOURCE_DIR "/resources/samples/sample-contract.pdf");
}

} // namespace

class PdfReaderTest : public QObject {
    Q_OBJECT

private slots:
    void readsSampleContract()
    {
        auto document = cw::readDocument(sampleContract());
        QVERIFY2(document.ok(), document.ok() ? "" : document.error().message.c_str());
        QCOMPARE(document->format, cw::DocumentFormat::Pdf);
        QCOMPARE(document->pageCount(), 13);
        QCOMPARE(document->title, QStringLiteral("LICENSE AND HOSTING AGREEMENT"));
        QCOMPARE(document->sha256.size(), 64);
        QVERIFY(document->warnings.isEmpty());
        // Number and text stay on one line although far apart on the page.
        QVERIFY(
            document->text.contains(QStringLiteral("1.1 \"SOFTWARE USER\" means a named user")));
        // Paragraph lines are joined, paragraphs separated by a blank line.
        QVERIFY(document->text.contains(
            QStringLiteral("worldwide to whom a user identification number")));
        QVERIFY(document->text.contains(QStringLiteral("\n\n2. GRANT OF RIGHTS.\n\n")));
    }

    void removesFootersAndPageNumbersMidPage()
    {
        auto document = cw::readDocument(sampleContract());
        QVERIFY(document.ok());
        // The converter put the original pages' footers in the middle of PDF pages; the
        // sentence that runs across them is joined again.
        QVERIFY(document->text.contains(
            QStringLiteral("shall apply to either the entire corporate entity")));
        QVERIFY(!document->text.contains(QStringLiteral("\n\n1\n\n")));
        QVERIFY(document->text.count(QStringLiteral("[*] Certain information on this page")) <= 1);
    }

    void everyLineHasItsSpanAndBox()
    {
        auto document = cw::readDocument(sampleContract());
        QVERIFY(document.ok());
        QVERIFY(document->lines.size() > 500);
        qsizetype previousEnd = 0;
        for (const cw::TextLine& line : document->lines) {
            QVERIFY(line.start >= previousEnd);
            QVERIFY(line.end > line.start);
            QVERIFY(line.page >= 1 && line.page <= 13);
            QVERIFY(line.box.width() > 0 && line.box.height() > 0);
            QVERIFY(line.box.right() <= 600 && line.box.bottom() <= 850);
            previousEnd = line.end;
        }
        const qsizetype at = document->text.indexOf(QStringLiteral("14.3 Choice of Law"));
        QVERIFY(at > 0);
        const auto boxes = document->boxesFor(at, at + 18);
        QCOMPARE(boxes.size(), 1);
        QCOMPARE(boxes.front().first, document->pageAt(at));
        QVERIFY(boxes.front().first >= 9);
    }

    void dehyphenatesWordsSplitAcrossLines()
    {
        auto document = cw::readDocument(dataFile("gocall-promotion-agreement.pdf"));
        QVERIFY(document.ok());
        QCOMPARE(document->pageCount(), 5);
        QVERIFY(document->text.contains(QStringLiteral("Description of the Promotion")));
        // No line-end hyphen before a lower-case continuation survives.
        static const QRegularExpression split(QStringLiteral("[a-z]- [a-z]{3,}"));
        const auto match = split.match(document->text);
        QVERIFY2(!match.hasMatch(), qPrintable(match.captured()));
    }

    void readsOcrTextLayerOfScan()
    {
        auto document = cw::readDocument(dataFile("primeenergy-ocr-scan.pdf"));
        QVERIFY2(document.ok(), document.ok() ? "" : document.error().message.c_str());
        QCOMPARE(document->pageCount(), 4);
        QVERIFY(document->warnings.isEmpty());
        QVERIFY(document->text.size() > 3000);
    }

    void warnsAboutPagesWithoutTextLayer()
    {
        auto document = cw::readDocument(dataFile("mixed-text-and-scan.pdf"));
        QVERIFY(document.ok());
        QCOMPARE(document->pageCount(), 6);
        QCOMPARE(document->warnings.size(), 1);
        QVERIFY(document->warnings.front().contains(QStringLiteral("page 6 has no text layer")));
        QVERIFY(!document->pages[5].hasTextLayer);
        QVERIFY(document->pages[0].hasTextLayer);
    }

    void refusesBadFiles_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        QTest::newRow("image only") << dataFile("image-only.pdf") << QStringLiteral("OCR");
        QTest::newRow("encrypted")
            << dataFile("encrypted.pdf") << QStringLiteral("password protected");
        QTest::newRow("truncated")
            << dataFile("truncated.pdf") << QStringLiteral("not a readable PDF");
        QTest::newRow("empty") << dataFile("empty.pdf") << QStringLiteral("empty");
        QTest::newRow("not a pdf")
            << dataFile("not-a-pdf.pdf") << QStringLiteral("not a readable PDF");
        QTest::newRow("missing") << dataFile("no-such-file.pdf") << QStringLiteral("no such file");
        QTest::newRow("folder") << QStringLiteral(CW_TEST_DATA_DIR) << QStringLiteral("folder");
    }

    void refusesBadFiles()
    {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        auto document = cw::readDocument(file);
        QVERIFY(!document.ok());
        const QString message = QString::fromStdString(document.error().message);
        QVERIFY2(message.contains(expected), qPrintable(message));
        QVERIFY2(message.contains(file), qPrintable(message)); // names the file
    }

    void reportsProgressAndCancels()
    {
        int calls = 0;
        cw::ReadOptions options;
        options.progress = [&](int done, int total) {
            ++calls;
            return !(done == 2 && total == 5);
        };
        auto document = cw::readDocument(dataFile("gocall-promotion-agreement.pdf"), options);
        QVERIFY(!document.ok());
        QCOMPARE(calls, 2);
        QVERIFY(
            QString::fromStdString(document.error().message).contains(QStringLiteral("cancelled")));
    }

    void readsPlainTextUnchanged()
    {
        const QString path = QStringLiteral(CW_TEST_BINARY_DIR "/plain.txt");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        const QByteArray bytes
            = "1. Term.\r\n  The term is two years.\n\n2. Law. \xE4\xB8\xAD\xE6\x96\x87\n";
        file.write(bytes);
        file.close();
        auto document = cw::readText(path);
        QVERIFY(document.ok());
        QCOMPARE(document->text, QString::fromUtf8(bytes));
        QCOMPARE(document->lines.size(), 3);
        QCOMPARE(document->text.mid(
                     document->lines[1].start, document->lines[1].end - document->lines[1].start),
            QStringLiteral("  The term is two years."));
        QCOMPARE(document->pageCount(), 0);
    }
};

QTEST_MAIN(PdfReaderTest)
#include "pdf_reader_test.moc"
