// DOCX ingest: numbering rendered into the text, tables, runs, and broken archives.
#include "app/ingest/document_reader.h"
#include "app/ingest/docx_numbering.h"

#include <QFile>
#include <QTest>

namespace {

QString dataFile(const char* name)
{
    return QStringLiteral(CW_TEST_DATA_DIR "/ingest/") + QLatin1String(name);
}

QByteArray fileBytes(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

} // namespace

class DocxReaderTest : public QObject {
    Q_OBJECT

private slots:
    void rendersListNumbering()
    {
        auto document = cw::readDocument(dataFile("numbered.docx"));
        QVERIFY2(document.ok(), document.ok() ? "" : document.error().message.c_str());
        QCOMPARE(document->format, cw::DocumentFormat::Docx);
        const QString& text = document->text;
        QVERIFY(text.contains(QStringLiteral("\n\nArticle I General Terms\n\n")));
        // Heading style that numbers itself, then "%1.%2" children, (a) and (i) below.
        QVERIFY(text.contains(QStringLiteral("\n\n1. Definitions\n\n1.1\t\"Services\" means")));
        QVERIFY(text.contains(QStringLiteral("\n\n1.2\t\"Fees\" means")));
        QVERIFY(text.contains(QStringLiteral("\n\n2. Term and Termination\n\n2.1\tTerm.")));
        QVERIFY(text.contains(QStringLiteral("\n\n(a)\tfor material breach")));
        QVERIFY(text.contains(QStringLiteral("\n\n(b)\ton insolvency")));
        QVERIFY(text.contains(QStringLiteral("\n\n(i)\ta receiver")));
        QVERIFY(text.contains(QStringLiteral("\n\n(ii)\tit ceases business.")));
        QVERIFY(text.contains(QStringLiteral("\n\n3. Governing Law\n\n")));
        QVERIFY(text.contains(QStringLiteral("\u2022\ta bullet point")));
    }

    // Every DOCX has pages, never "page 0": page breaks where the file has them (a section
    // that starts a new page, <w:br w:type="page"/>), otherwise its sections.
    void findsPagesFromBreaksAndSections_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("pages");
        QTest::addColumn<QList<int>>("paragraphPages"); // of "Section s paragraph p", in order
        // Sections 1 and 2 (2 starts continuous) on page 1; 3 starts on a new page.
        QTest::newRow("section breaks")
            << "section-pages.docx" << 2 << QList<int> { 1, 1, 1, 1, 1, 1, 2, 2, 2 };
        // One section, a page break after its second paragraph.
        QTest::newRow("page break") << "page-break.docx" << 2 << QList<int> { 1, 1, 2 };
        // No page break at all: each section is a page.
        QTest::newRow("continuous sections")
            << "continuous-sections.docx" << 3 << QList<int> { 1, 1, 1, 2, 2, 2, 3, 3, 3 };
    }

    void findsPagesFromBreaksAndSections()
    {
        QFETCH(QString, file);
        QFETCH(int, pages);
        QFETCH(QList<int>, paragraphPages);
        auto document = cw::readDocument(dataFile(file.toUtf8().constData()));
        QVERIFY2(document.ok(), document.ok() ? "" : document.error().message.c_str());
        QCOMPARE(document->pageCount(), pages);
        QList<int> seen;
        for (const cw::TextLine& line : document->lines) {
            QVERIFY(document->text.mid(line.start, line.end - line.start).startsWith("Section"));
            seen.append(line.page);
        }
        QCOMPARE(seen, paragraphPages);
    }

    void aFileWithoutBreaksIsOnePage()
    {
        auto document = cw::readDocument(dataFile("numbered.docx"));
        QVERIFY(document.ok());
        QCOMPARE(document->pageCount(), 1);
        for (const cw::TextLine& line : document->lines)
            QCOMPARE(line.page, 1);
        QCOMPARE(document->pageAt(document->text.size() / 2), 1);
    }

    void keepsTablesTabsAndBreaksAndDropsDeletions()
    {
        auto document = cw::readDocument(dataFile("numbered.docx"));
        QVERIFY(document.ok());
        const QString& text = document->text;
        QVERIFY(text.contains(QStringLiteral("England.\tTabbed\nNext line")));
        QVERIFY(text.contains(
            QStringLiteral("\n\nParty\tAddress\nAlpha Ltd\t1 High Street, London\n\n")));
        QVERIFY(text.contains(QStringLiteral("Deleted text stays out.")));
        QVERIFY(!text.contains(QStringLiteral("secret")));
    }

    void marksBoldHeadingsAndSpans()
    {
        auto document = cw::readDocument(dataFile("numbered.docx"));
        QVERIFY(document.ok());
        QCOMPARE(document->title, QStringLiteral("MASTER SERVICES AGREEMENT"));
        QVERIFY(!document->lines.isEmpty());
        const cw::TextLine& first = document->lines.front();
        QVERIFY(first.bold);
        QCOMPARE(document->text.mid(first.start, first.end - first.start),
            QStringLiteral("MASTER SERVICES AGREEMENT"));
        QVERIFY(!document->lines[1].bold);
        bool headingBold = false;
        for (const cw::TextLine& line : document->lines) {
            if (document->text.mid(line.start, line.end - line.start)
                == QStringLiteral("1. Definitions"))
                headingBold = line.bold;
        }
        QVERIFY(headingBold);
    }

    void refusesBrokenFiles_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        QTest::newRow("malformed body") << dataFile("malformed-xml.docx")
                                        << QStringLiteral("word/document.xml is malformed XML");
        QTest::newRow("malformed numbering") << dataFile(
            "malformed-numbering.docx") << QStringLiteral("word/numbering.xml is malformed XML");
        QTest::newRow("no body") << dataFile("no-document-part.docx")
                                 << QStringLiteral("no word/document.xml");
        QTest::newRow("not a zip") << dataFile("not-a-zip.docx") << QStringLiteral("not a DOCX");
    }

    void refusesBrokenFiles()
    {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        auto document = cw::readDocument(file);
        QVERIFY(!document.ok());
        const QString message = QString::fromStdString(document.error().message);
        QVERIFY2(message.contains(expected), qPrintable(message));
        QVERIFY2(message.contains(file), qPrintable(message));
    }

    void capsUncompressedSizeAndEntries()
    {
        const QByteArray bytes = fileBytes(dataFile("numbered.docx"));
        QVERIFY(!bytes.isEmpty());
        cw::ReadOptions small;
        small.maxUncompressedBytes = 1000; // document.xml expands past it
        auto bomb = cw::readDocxBytes(bytes, QStringLiteral("bomb.docx"), small);
        QVERIFY(!bomb.ok());
        QVERIFY(QString::fromStdString(bomb.error().message).contains(QStringLiteral("zip bomb")));
        cw::ReadOptions few;
        few.maxZipEntries = 3;
        auto many = cw::readDocxBytes(bytes, QStringLiteral("many.docx"), few);
        QVERIFY(!many.ok());
        QVERIFY(QString::fromStdString(many.error().message).contains(QStringLiteral("entries")));
    }

    void formatsNumbers()
    {
        using cw::ingest::DocxNumbering;
        QCOMPARE(
            DocxNumbering::formatNumber(4, QStringLiteral("lowerRoman")), QStringLiteral("iv"));
        QCOMPARE(
            DocxNumbering::formatNumber(14, QStringLiteral("upperRoman")), QStringLiteral("XIV"));
        QCOMPARE(
            DocxNumbering::formatNumber(28, QStringLiteral("lowerLetter")), QStringLiteral("bb"));
        QCOMPARE(
            DocxNumbering::formatNumber(3, QStringLiteral("upperLetter")), QStringLiteral("C"));
        QCOMPARE(
            DocxNumbering::formatNumber(7, QStringLiteral("decimalZero")), QStringLiteral("07"));
        QCOMPARE(DocxNumbering::formatNumber(12, QStringLiteral("chineseCounting")),
            QStringLiteral("十二"));
        QCOMPARE(
            DocxNumbering::formatNumber(22, QStringLiteral("ordinal")), QStringLiteral("22nd"));
    }

    void restartsListsWithStartOverride()
    {
        const QByteArray xml
            = "<w:numbering xmlns:w=\"w\">"
              "<w:abstractNum w:abstractNumId=\"5\"><w:lvl w:ilvl=\"0\"><w:start "
              "w:val=\"3\"/><w:numFmt w:val=\"decimal\"/>"
              "<w:lvlText w:val=\"%1)\"/><w:suff w:val=\"nothing\"/></w:lvl></w:abstractNum>"
              "<w:num w:numId=\"1\"><w:abstractNumId w:val=\"5\"/></w:num>"
              "<w:num w:numId=\"2\"><w:abstractNumId w:val=\"5\"/><w:lvlOverride "
              "w:ilvl=\"0\"><w:startOverride w:val=\"1\"/></w:lvlOverride></w:num>"
              "</w:numbering>";
        auto numbering = cw::ingest::DocxNumbering::parse(xml, QStringLiteral("numbering.xml"));
        QVERIFY(numbering.ok());
        QCOMPARE(numbering->nextLabel(1, 0), QStringLiteral("3)"));
        QCOMPARE(numbering->nextLabel(1, 0), QStringLiteral("4)"));
        QCOMPARE(numbering->nextLabel(2, 0), QStringLiteral("1)"));
        QCOMPARE(numbering->nextLabel(2, 0), QStringLiteral("2)"));
        QCOMPARE(numbering->nextLabel(9, 0), QString()); // unknown list
    }
};

QTEST_MAIN(DocxReaderTest)
#include "docx_reader_test.moc"
