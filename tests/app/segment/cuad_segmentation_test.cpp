// The segmenter on real contracts (CUAD texts, unchanged). The expected outlines were read
// off the texts by hand.
#include "app/ingest/document_reader.h"
#include "app/segment/clause_segmenter.h"

#include <QFile>
#include <QTest>
#include <lzma.h>

namespace {

QString readXz(const QString& name)
{
    QFile file(QStringLiteral(CW_TEST_DATA_DIR "/segment/") + name);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QByteArray packed = file.readAll();
    QByteArray out(qsizetype(8) << 20, Qt::Uninitialized);
    uint64_t memlimit = uint64_t(256) << 20;
    size_t inPos = 0;
    size_t outPos = 0;
    const lzma_ret ret = lzma_stream_buffer_decode(&memlimit, 0, nullptr,
        reinterpret_cast<const uint8_t*>(packed.constData()), &inPos, size_t(packed.size()),
        reinterpret_cast<uint8_t*>(out.data()), &outPos, size_t(out.size()));
    if (ret != LZMA_OK)
        return {};
    out.resize(qsizetype(outPos));
    return QString::fromUtf8(out);
}

struct Outline {
    cw::Document document;
    QList<cw::Clause> clauses;

    // Numbers (spaces simplified) of the clauses at `level` whose number starts with prefix.
    QStringList numbers(int level, const QString& prefix = {}) const
    {
        QStringList out;
        for (const cw::Clause& clause : clauses) {
            const QString number = clause.number.simplified();
            if (clause.level == level && !number.isEmpty() && number.startsWith(prefix))
                out.append(number);
        }
        return out;
    }
    QStringList headings(int level, const QString& prefix = {}) const
    {
        QStringList out;
        for (const cw::Clause& clause : clauses) {
            if (clause.level == level && !clause.number.isEmpty()
                && clause.number.simplified().startsWith(prefix))
                out.append(clause.heading);
        }
        return out;
    }
    const cw::Clause* find(const QString& number) const
    {
        for (const cw::Clause& clause : clauses) {
            if (clause.number.simplified() == number)
                return &clause;
        }
        return nullptr;
    }
    QStringList childNumbers(const cw::Clause& parent) const
    {
        QStringList out;
        for (const cw::Clause& clause : clauses) {
            if (clause.parent == parent.index)
                out.append(clause.number.simplified());
        }
        return out;
    }
};

Outline load(const char* name)
{
    Outline outline;
    outline.document = cw::documentFromText(readXz(QLatin1String(name)));
    outline.clauses = cw::segmentClauses(outline.document);
    return outline;
}

} // namespace

class CuadSegmentationTest : public QObject {
    Q_OBJECT

private slots:
    void articlesWithTwoDigitSections()
    {
        const Outline outline = load("blackbox-distributor.txt.xz");
        QVERIFY(outline.document.text.size() > 17000);
        QCOMPARE(outline.numbers(0, QStringLiteral("ARTICLE")),
            QStringList({ "ARTICLE I", "ARTICLE II", "ARTICLE III", "ARTICLE IV", "ARTICLE V",
                "ARTICLE VI", "ARTICLE VII", "ARTICLE VIII", "ARTICLE IX" }));
        QCOMPARE(outline.headings(0, QStringLiteral("ARTICLE")).first(),
            QStringLiteral("APPOINTMENT OF DISTRIBUTORSHIP"));
        QCOMPARE(outline.headings(0, QStringLiteral("ARTICLE")).last(),
            QStringLiteral("GENERAL PROVISIONS"));
        QCOMPARE(outline.numbers(0, QStringLiteral("EXHIBIT")),
            QStringList({ "EXHIBIT A", "EXHIBIT B" }));
        const cw::Clause* first = outline.find(QStringLiteral("1.01."));
        QVERIFY(first);
        QCOMPARE(first->heading, QStringLiteral("Distribution Right"));
        QCOMPARE(outline.clauses[first->parent].number.simplified(), QStringLiteral("ARTICLE I"));
        const cw::Clause* article9 = outline.find(QStringLiteral("ARTICLE IX"));
        QVERIFY(article9);
        QCOMPARE(outline.childNumbers(*article9),
            QStringList({ "9.01.", "9.02.", "9.03.", "9.04.", "9.05.", "9.06.", "9.07." }));
        QCOMPARE(outline.find(QStringLiteral("9.05."))->heading, QStringLiteral("Applicable Law"));
    }

    void sectionsRunTogetherOnOneLine()
    {
        const Outline outline = load("medalist-consulting.txt.xz");
        QCOMPARE(outline.numbers(0),
            QStringList({ "1.", "2.", "3.", "4.", "5.", "6.", "7.", "8.", "9." }));
        QCOMPARE(outline.headings(0),
            QStringList({ "Consulting Services", "No Control by the Company",
                "Independent Contractor", "Compensation and Reimbursement", "Confidentiality",
                "Intellectual Property, Inventions and Patents", "Restrictive Covenants",
                "Termination", "General Provisions" }));
        const cw::Clause* nonCompete = outline.find(QStringLiteral("7.3"));
        QVERIFY(nonCompete);
        QCOMPARE(nonCompete->heading, QStringLiteral("Noncompetition"));
        QCOMPARE(outline.clauses[nonCompete->parent].number, QStringLiteral("7."));
        QVERIFY(outline.document.text.mid(nonCompete->start, nonCompete->end - nonCompete->start)
                    .startsWith(QStringLiteral("7.3 Noncompetition. CONSULTANT agrees")));
    }

    void parenthesisedNumbersWithLetteredLists()
    {
        const Outline outline = load("intelligent-highway-strategic-alliance.txt.xz");
        const QStringList top = outline.numbers(0);
        QVERIFY(top.size() >= 11);
        QCOMPARE(top.mid(0, 11),
            QStringList({ "1)", "2)", "3)", "4)", "5)", "6)", "7)", "8)", "9)", "10)", "11)" }));
        QCOMPARE(outline.find(QStringLiteral("9)"))->heading, QStringLiteral("Governing Law"));
        QCOMPARE(outline.find(QStringLiteral("1)"))->heading, QStringLiteral("Duties of Bravatek"));
        QCOMPARE(outline.childNumbers(*outline.find(QStringLiteral("1)"))),
            QStringList({ "a.", "b.", "c.", "d." }));
        QCOMPARE(outline.childNumbers(*outline.find(QStringLiteral("2)"))),
            QStringList({ "a.", "b.", "c.", "d.", "e." }));
    }

    void numberedSectionsDefinitionsAndSchedules()
    {
        const Outline outline = load("violin-sponsorship.txt.xz");
        QCOMPARE(outline.headings(0, QStringLiteral("1")).first(), QStringLiteral("Definitions"));
        QStringList top;
        for (const QString& number : outline.numbers(0)) {
            if (number.front().isDigit())
                top.append(number);
        }
        QCOMPARE(top,
            QStringList(
                { "1.", "2.", "3.", "4.", "5.", "6.", "7.", "8.", "9.", "10.", "11.", "12." }));
        QCOMPARE(outline.numbers(0, QStringLiteral("SCHEDULE")),
            QStringList({ "SCHEDULE 1", "SCHEDULE 2", "SCHEDULE 3", "SCHEDULE 4" }));
        QCOMPARE(outline.find(QStringLiteral("11."))->heading, QStringLiteral("Arbitration"));
        const cw::Clause* definitions = outline.find(QStringLiteral("1."));
        bool affiliate = false;
        for (const cw::Clause& clause : outline.clauses) {
            if (clause.parent == definitions->index && clause.kind == cw::ClauseKind::Definition
                && clause.heading == QStringLiteral("Affiliate"))
                affiliate = true;
        }
        QVERIFY(affiliate);
    }

    void articlesWithSectionKeyword()
    {
        const Outline outline = load("aspirity-outsourcing.txt.xz");
        QCOMPARE(outline.numbers(0, QStringLiteral("ARTICLE")),
            QStringList({ "ARTICLE I", "ARTICLE II", "ARTICLE III", "ARTICLE IV", "ARTICLE V",
                "ARTICLE VI", "ARTICLE VII", "ARTICLE VIII", "ARTICLE IX" }));
        QCOMPARE(
            outline.headings(0, QStringLiteral("ARTICLE")).first(), QStringLiteral("DEFINITIONS"));
        QCOMPARE(
            outline.headings(0, QStringLiteral("ARTICLE")).last(), QStringLiteral("MISCELLANEOUS"));
        const cw::Clause* defined = outline.find(QStringLiteral("Section 1.01"));
        QVERIFY(defined);
        QCOMPARE(outline.clauses[defined->parent].number.simplified(), QStringLiteral("ARTICLE I"));
    }

    void spansAreConsistentOnAllFiles()
    {
        for (const char* name : { "blackbox-distributor.txt.xz", "medalist-consulting.txt.xz",
                 "intelligent-highway-strategic-alliance.txt.xz", "violin-sponsorship.txt.xz",
                 "aspirity-outsourcing.txt.xz" }) {
            const Outline outline = load(name);
            QVERIFY(!outline.clauses.isEmpty());
            qsizetype previous = -1;
            for (const cw::Clause& clause : outline.clauses) {
                QVERIFY(clause.start > previous);
                QVERIFY(clause.ownEnd <= clause.end && clause.end <= outline.document.text.size());
                if (clause.parent >= 0)
                    QVERIFY(outline.clauses[clause.parent].end >= clause.end);
                previous = clause.start;
            }
        }
    }
};

QTEST_MAIN(CuadSegmentationTest)
#include "cuad_segmentation_test.moc"
