// The segmenter on hand-made texts, one numbering style at a time.
#include "app/ingest/document_reader.h"
#include "app/segment/chinese_numerals.h"
#include "app/segment/clause_segmenter.h"

#include <QTest>

namespace {

struct Outline {
    cw::Document document;
    QList<cw::Clause> clauses;

    QStringList numbers() const
    {
        QStringList out;
        for (const cw::Clause& clause : clauses) {
            if (clause.kind != cw::ClauseKind::Preamble)
                out.append(clause.number.isEmpty()
                        ? QLatin1Char('"') + clause.heading + QLatin1Char('"')
                        : clause.number);
        }
        return out;
    }
    const cw::Clause& byNumber(const QString& number) const
    {
        for (const cw::Clause& clause : clauses) {
            if (clause.number == number)
                return clause;
        }
        static const cw::Clause none = [] {
            cw::Clause clause;
            clause.index = -1;
            return clause;
        }();
        return none;
    }
};

Outline segment(const QString& text)
{
    Outline outline;
    outline.document = cw::documentFromText(text);
    outline.clauses = cw::segmentClauses(outline.document);
    return outline;
}

void checkSpans(const Outline& outline)
{
    const QString& text = outline.document.text;
    qsizetype previous = -1;
    for (const cw::Clause& clause : outline.clauses) {
        QVERIFY(clause.start > previous);
        QVERIFY(clause.start <= clause.ownEnd && clause.ownEnd <= clause.end);
        QVERIFY(clause.end <= text.size());
        if (!clause.number.isEmpty())
            QVERIFY2(text.mid(clause.start).startsWith(clause.number), qPrintable(clause.number));
        if (clause.parent >= 0) {
            const cw::Clause& parent = outline.clauses[clause.parent];
            QCOMPARE(parent.level, clause.level - 1);
            QVERIFY(parent.start < clause.start && clause.end <= parent.end);
        } else {
            QCOMPARE(clause.level, 0);
        }
        previous = clause.start;
    }
}

} // namespace

class ClauseSegmenterTest : public QObject {
    Q_OBJECT

private slots:
    void segmentsNestedDecimalsAndLetters()
    {
        const Outline outline = segment(QStringLiteral(
            "SERVICES AGREEMENT\n\nThis Agreement is made between A and B, who agree to the terms "
            "below, "
            "which are binding on both of them from the date of signature onwards.\n\n"
            "1. DEFINITIONS\n1.1 Scope. The scope is the services.\n1.1.1 Details. As set out.\n"
            "1.2 Interpretation. Headings do not count.\n2. TERM AND TERMINATION\n"
            "2.1 Termination. Either party may terminate:\n(a) for breach;\n(b) on insolvency, "
            "where\n"
            "(i) a receiver is appointed; or\n(ii) it ceases business; and\n(c) on notice.\n"
            "3. GOVERNING LAW\nThis Agreement is governed by the laws of New York.\n"));
        QCOMPARE(outline.numbers(),
            QStringList({ "1.", "1.1", "1.1.1", "1.2", "2.", "2.1", "(a)", "(b)", "(i)", "(ii)",
                "(c)", "3." }));
        checkSpans(outline);
        QCOMPARE(outline.byNumber("1.").heading, QStringLiteral("DEFINITIONS"));
        QCOMPARE(outline.byNumber("1.1").heading, QStringLiteral("Scope"));
        QCOMPARE(outline.byNumber("1.1.1").level, 2);
        QCOMPARE(outline.byNumber("(ii)").level, 3);
        QCOMPARE(outline.clauses[outline.byNumber("(c)").parent].number, QStringLiteral("2.1"));
        QCOMPARE(outline.byNumber("3.").level, 0);
        QCOMPARE(outline.byNumber("3.").heading, QStringLiteral("GOVERNING LAW"));
        QCOMPARE(outline.clauses.front().kind, cw::ClauseKind::Preamble);
        // A section's span holds its sub-clauses; ownEnd stops at the first one.
        const cw::Clause& two = outline.byNumber("2.");
        QVERIFY(outline.document.text.mid(two.start, two.end - two.start)
                    .contains(QStringLiteral("on notice.")));
        QCOMPARE(two.ownEnd, two.start + QStringLiteral("2. TERM AND TERMINATION").size());
    }

    void segmentsArticlesAndSections()
    {
        const Outline outline = segment(QStringLiteral(
            "LOAN AGREEMENT\n\nThis Loan Agreement is entered into by the Lender and the Borrower "
            "on the "
            "terms below, which both parties have read and accept in full.\n\nARTICLE "
            "I\nDEFINITIONS\n"
            "Section 1.1 Defined Terms. Capitalised words have the meanings below.\n"
            "Section 1.2 Construction. Singular includes plural.\nARTICLE II\nTHE LOAN\n"
            "Section 2.1 Amount. The Lender lends USD 1,000,000 as provided in Section 2.3 and\n"
            "Section 5.2 of this Agreement governs repayment.\nSection 2.2 Interest. Five "
            "percent.\n"
            "Article 3 - Miscellaneous\n\u00a7 3.1 Notices. In writing.\n"));
        QCOMPARE(outline.numbers(),
            QStringList({ "ARTICLE I", "Section 1.1", "Section 1.2", "ARTICLE II", "Section 2.1",
                "Section 2.2", "Article 3", "\u00a7 3.1" }));
        checkSpans(outline);
        QCOMPARE(outline.byNumber("ARTICLE I").heading, QStringLiteral("DEFINITIONS"));
        QCOMPARE(outline.byNumber("ARTICLE II").heading, QStringLiteral("THE LOAN"));
        QCOMPARE(outline.byNumber("Section 2.2").level, 1);
        QCOMPARE(outline.byNumber("Article 3").heading, QStringLiteral("Miscellaneous"));
        QCOMPARE(outline.byNumber("Section 1.1").heading, QStringLiteral("Defined Terms"));
    }

    void segmentsSchedulesAndRestartedNumbering()
    {
        const Outline outline
            = segment(QStringLiteral("1. Services. The Supplier provides the services described in "
                                     "Schedule 1 attached hereto "
                                     "and in Exhibit A.\n2. Fees. As in\nSchedule 2 attached "
                                     "hereto.\n\nSCHEDULE 1\nSERVICES\n"
                                     "1. Hosting. Servers.\n2. Support. Hotline.\n\nExhibit A - "
                                     "Form of Notice\nTo: Supplier\n"));
        QCOMPARE(
            outline.numbers(), QStringList({ "1.", "2.", "SCHEDULE 1", "1.", "2.", "Exhibit A" }));
        checkSpans(outline);
        const cw::Clause& schedule = outline.clauses[2];
        QCOMPARE(schedule.kind, cw::ClauseKind::Attachment);
        QCOMPARE(schedule.heading, QStringLiteral("SERVICES"));
        QCOMPARE(schedule.level, 0);
        QCOMPARE(outline.clauses[3].parent, schedule.index);
        QCOMPARE(outline.clauses.back().heading, QStringLiteral("Form of Notice"));
    }

    void splitsDefinitions()
    {
        const Outline outline = segment(QStringLiteral(
            "1. Definitions. In this Agreement:\n\"Agreement\" means this agreement and its "
            "schedules.\n"
            "\u201cAffiliate\u201d shall mean any entity controlling a party.\n"
            "\"Business Day\" has the meaning given in clause 9.\n2. Term. Two years.\n"));
        QCOMPARE(outline.numbers(),
            QStringList({ "1.", "\"Agreement\"", "\"Affiliate\"", "\"Business Day\"", "2." }));
        checkSpans(outline);
        for (int i = 1; i <= 3; ++i) {
            QCOMPARE(outline.clauses[i].kind, cw::ClauseKind::Definition);
            QCOMPARE(outline.clauses[i].level, 1);
            QCOMPARE(outline.clauses[i].parent, 0);
        }
        QVERIFY(
            outline.document.text
                .mid(outline.clauses[2].start, outline.clauses[2].end - outline.clauses[2].start)
                .endsWith(QStringLiteral("controlling a party.")));
    }

    void resistsFalsePositives()
    {
        const Outline outline = segment(QStringLiteral(
            "1. Term. The term is set out in\nSection 5.2 of this Agreement and ends on\n"
            "12 March 2020 unless renewed. The parties agree as follows 1. this is not a clause.\n"
            "1.5 million shares are issued and\n2019. The price was\n$1,000 per share.\n"
            "7. Payment. Net 30.\n2. Law. New York.\n"));
        QCOMPARE(outline.numbers(), QStringList({ "1.", "2." }));
        checkSpans(outline);
    }

    void readsRomanAndLetterAmbiguity()
    {
        QString text = QStringLiteral("1. List. Items:\n");
        for (char c = 'a'; c <= 'j'; ++c)
            text += QStringLiteral("(%1) item %1;\n").arg(QLatin1Char(c));
        text += QStringLiteral(
            "2. Roman. Items:\n(i) one;\n(ii) two;\n(iii) three;\n(iv) four;\n(v) five.\n");
        const Outline outline = segment(text);
        checkSpans(outline);
        const cw::Clause& i = outline.clauses[9]; // after 1. and (a)..(h)
        QCOMPARE(i.number, QStringLiteral("(i)"));
        QCOMPARE(i.level, 1); // the letter after (h), a sibling
        QCOMPARE(outline.clauses[i.index + 1].number, QStringLiteral("(j)"));
        QCOMPARE(outline.clauses[i.index + 1].level, 1);
        const cw::Clause& v = outline.clauses.back();
        QCOMPARE(v.number, QStringLiteral("(v)"));
        QCOMPARE(v.level, 1);
        QCOMPARE(outline.clauses[v.parent].number, QStringLiteral("2."));
    }

    void segmentsChineseNumbering()
    {
        const Outline outline = segment(QStringLiteral(
            "技术服务合同\n\n甲方与乙方经友好协商，就技术服务事项达成如下协议，双方共同遵守。\n"
            "第一章 总则\n第一条 为明确双方权利义务，订立本合同。\n第二条 "
            "定义\n本合同所用词语含义如下。\n"
            "第二章 费用与支付\n第三条 "
            "服务费用\n（一）首期款为合同总额的百分之三十；\n（二）余款于验收后支付。\n"
            "第四条 争议解决\n本合同适用中华人民共和国法律。\n"));
        QCOMPARE(outline.numbers(),
            QStringList({ "第一章", "第一条", "第二条", "第二章", "第三条", "（一）", "（二）",
                "第四条" }));
        checkSpans(outline);
        QCOMPARE(outline.byNumber("第一章").heading, QStringLiteral("总则"));
        QCOMPARE(outline.byNumber("第一章").level, 0);
        QCOMPARE(outline.byNumber("第二条").heading, QStringLiteral("定义"));
        QCOMPARE(outline.byNumber("第二条").level, 1);
        QCOMPARE(outline.byNumber("（二）").level, 2);
        QCOMPARE(outline.byNumber("第四条").heading, QStringLiteral("争议解决"));
        QCOMPARE(
            outline.clauses[outline.byNumber("第四条").parent].number, QStringLiteral("第二章"));
    }

    void convertsChineseNumerals()
    {
        QCOMPARE(cw::parseChineseNumeral(u"十二"), 12);
        QCOMPARE(cw::parseChineseNumeral(u"二十"), 20);
        QCOMPARE(cw::parseChineseNumeral(u"一百零五"), 105);
        QCOMPARE(cw::parseChineseNumeral(u"叁拾"), 30);
        QCOMPARE(cw::parseChineseNumeral(u"１２"), 12);
        QCOMPARE(cw::parseChineseNumeral(u"合同"), -1);
        QCOMPARE(cw::toChineseNumeral(12), QStringLiteral("十二"));
        QCOMPARE(cw::toChineseNumeral(110), QStringLiteral("一百一十"));
        for (int value = 1; value < 2000; value += 7)
            QCOMPARE(cw::parseChineseNumeral(cw::toChineseNumeral(value)), value);
    }

    void usesBoldHeadingsAndPages()
    {
        cw::Document document = cw::documentFromText(QStringLiteral(
            "Recitals of the parties that run long enough to count as body text of this agreement, "
            "more "
            "than one hundred and fifty characters in all, so headings after it are headings.\n\n"
            "Confidentiality\n\nEach party keeps the other's information secret.\f"
            "Liability\n\nNeither party is liable for indirect loss.\n"));
        QCOMPARE(document.pageCount(), 2);
        for (cw::TextLine& line : document.lines) {
            const QString text = document.text.mid(line.start, line.end - line.start);
            line.bold
                = text == QStringLiteral("Confidentiality") || text == QStringLiteral("Liability");
        }
        const QList<cw::Clause> clauses = cw::segmentClauses(document);
        QCOMPARE(clauses.size(), 3);
        QCOMPARE(clauses[1].kind, cw::ClauseKind::Heading);
        QCOMPARE(clauses[1].heading, QStringLiteral("Confidentiality"));
        QCOMPARE(clauses[1].page, 1);
        QCOMPARE(clauses[2].heading, QStringLiteral("Liability"));
        QCOMPARE(clauses[2].page, 2);
    }

    void handlesEmptyAndUnnumberedText()
    {
        QVERIFY(cw::segmentClauses(cw::documentFromText(QString())).isEmpty());
        const QList<cw::Clause> whole
            = cw::segmentClauses(cw::documentFromText(QStringLiteral("  Just one paragraph.\n")));
        QCOMPARE(whole.size(), 1);
        QCOMPARE(whole[0].start, 2);
        QCOMPARE(whole[0].end, 21);
    }
};

QTEST_MAIN(ClauseSegmenterTest)
#include "clause_segmenter_test.moc"
