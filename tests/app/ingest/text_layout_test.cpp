// Page layout and text assembly on synthetic pages: lines, columns, headers, hyphens.
#include "app/ingest/page_layout.h"
#include "app/ingest/text_assembler.h"

#include <QTest>

using cw::ingest::LaidWord;
using cw::ingest::LayoutLine;
using cw::ingest::LayoutPage;

namespace {

// Words of one line starting at x, 10 pt high, 6 pt per character.
QList<LaidWord> lineWords(const QString& text, double x, double y)
{
    QList<LaidWord> words;
    for (const QString& word : text.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const double width = 6.0 * double(word.size());
        words.append(LaidWord { word, QRectF(x, y, width, 10.0), true, !words.isEmpty() });
        x += width + 4.0;
    }
    return words;
}

LayoutLine line(const QString& text, double x, double y, double width = 400.0)
{
    LayoutLine out;
    out.text = text;
    out.box = QRectF(x, y, width, 10.0);
    out.fontSize = 10.0;
    return out;
}

} // namespace

class TextLayoutTest : public QObject {
    Q_OBJECT

private slots:
    void keepsNumberAndTextOnOneLine()
    {
        QList<LaidWord> words = lineWords(QStringLiteral("Subject to the terms"), 120, 100);
        words.prepend(LaidWord { QStringLiteral("2.1"), QRectF(72, 100.5, 18, 10), true, false });
        words.append(lineWords(QStringLiteral("of this Agreement"), 120, 114));
        const auto lines = cw::ingest::layoutLines(words, QSizeF(612, 792));
        QCOMPARE(lines.size(), 2);
        QCOMPARE(lines[0].text, QStringLiteral("2.1 Subject to the terms"));
        QCOMPARE(lines[1].text, QStringLiteral("of this Agreement"));
        QCOMPARE(lines[0].box.left(), 72.0);
    }

    void readsColumnsLeftThenRight()
    {
        QList<LaidWord> words;
        for (int row = 0; row < 20; ++row) {
            words.append(lineWords(QStringLiteral("left %1 aaa bbb").arg(row), 50, 80 + 14 * row));
            words.append(
                lineWords(QStringLiteral("right %1 ccc ddd").arg(row), 340, 80 + 14 * row));
        }
        const auto lines = cw::ingest::layoutLines(words, QSizeF(612, 792));
        QCOMPARE(lines.size(), 40);
        QCOMPARE(lines[0].text, QStringLiteral("left 0 aaa bbb"));
        QCOMPARE(lines[19].text, QStringLiteral("left 19 aaa bbb"));
        QCOMPARE(lines[20].text, QStringLiteral("right 0 ccc ddd"));
        QCOMPARE(lines[20].column, 1);
    }

    void removesRunningHeadersAndPageNumbers()
    {
        QList<LayoutPage> pages;
        for (int p = 1; p <= 4; ++p) {
            LayoutPage page;
            page.number = p;
            page.size = QSizeF(612, 792);
            page.lines.append(line(QStringLiteral("ACME CONFIDENTIAL - Supply Agreement"), 72, 30));
            static const char* const words[] = { "alpha", "beta", "gamma", "delta" };
            page.lines.append(
                line(QStringLiteral("Body text %1 that is long enough to be a full line.")
                         .arg(QLatin1String(words[p - 1])),
                    72, 300));
            page.lines.append(line(QStringLiteral("Source: ACME CORP, 10-K, 3/1/2019"), 72, 740));
            page.lines.append(line(QStringLiteral("- %1 -").arg(p), 300, 760, 20));
            pages.append(page);
        }
        cw::Document document;
        cw::ingest::assembleText(pages, {}, document);
        QVERIFY(!document.text.contains(QStringLiteral("CONFIDENTIAL")));
        QVERIFY(!document.text.contains(QStringLiteral("Source:")));
        QVERIFY(!document.text.contains(QStringLiteral("- 2 -")));
        QCOMPARE(document.lines.size(), 4);
        QCOMPARE(document.pages.size(), 4);
        QCOMPARE(document.pageAt(document.text.indexOf(QStringLiteral("gamma"))), 3);
    }

    void joinsParagraphLinesAndDehyphenates()
    {
        LayoutPage page;
        page.number = 1;
        page.size = QSizeF(612, 792);
        page.lines.append(line(QStringLiteral("1. TERM."), 72, 100, 60));
        page.lines.append(line(
            QStringLiteral("This Agreement shall remain in effect until the agree-"), 72, 130));
        page.lines.append(
            line(QStringLiteral("ment of the parties to end it, as set out in this"), 72, 142));
        page.lines.append(line(QStringLiteral("clause."), 72, 154, 40));
        page.lines.append(line(QStringLiteral("2. LAW."), 72, 184, 60));
        cw::Document document;
        cw::ingest::assembleText({ page }, {}, document);
        QCOMPARE(document.text,
            QStringLiteral("1. TERM.\n\nThis Agreement shall remain in effect until the agreement "
                           "of the parties to end it, as set out in this clause.\n\n2. LAW."));
        QCOMPARE(document.lines.size(), 5);
        // The hyphen is gone from the first line's span; the spans tile the paragraph.
        const cw::TextLine& hyphenated = document.lines[1];
        QVERIFY(document.text.mid(hyphenated.start, hyphenated.end - hyphenated.start)
                    .endsWith(QStringLiteral("agree")));
        QCOMPARE(document.lines[2].start, hyphenated.end);
        const auto boxes = document.boxesFor(hyphenated.start, document.lines[3].end);
        QCOMPARE(boxes.size(), 3);
    }

    void recognisesPageNumberLines()
    {
        for (const char* yes :
            { "3", "- 3 -", "Page 3", "Page 3 of 12", "3 of 12", "iv", "PAGE 2" })
            QVERIFY2(cw::ingest::isPageNumberLine(QString::fromLatin1(yes)), yes);
        for (const char* no : { "3. Term", "(iv)", "IV", "2019 Agreement", "Section 3" })
            QVERIFY2(!cw::ingest::isPageNumberLine(QString::fromLatin1(no)), no);
    }

    void guessesTitle()
    {
        QCOMPARE(
            cw::ingest::guessTitle(QStringLiteral(
                "EXHIBIT 10.5\n\nCORIO INC.\n\nLICENSE AND HOSTING AGREEMENT\n\nThis License ...")),
            QStringLiteral("LICENSE AND HOSTING AGREEMENT"));
        QCOMPARE(cw::ingest::guessTitle(QStringLiteral(
                     "Exhibit 10.1\n\nSupply Agreement\n\nThis Supply Agreement is made ...")),
            QStringLiteral("Supply Agreement"));
    }
};

QTEST_MAIN(TextLayoutTest)
#include "text_layout_test.moc"
