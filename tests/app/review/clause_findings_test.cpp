// One finding per category and clause: the sentences of one clause that the classifier found
// one by one become one finding with their evidence merged.
#include "app/review/clause_findings.h"
#include "app/review/review_pipeline.h"

#include <QSet>
#include <QtTest>

using namespace cw;

namespace {

Finding finding(const QString& category, int clause, qsizetype start, qsizetype end,
    const QString& text, double score)
{
    Finding f;
    f.category = category;
    f.clauseIndex = clause;
    f.start = start;
    f.end = end;
    f.text = text.mid(start, end - start);
    f.score = score;
    f.source = QStringLiteral("fast");
    f.rationale = QStringLiteral("score %1").arg(score);
    return f;
}

} // namespace

class ClauseFindingsTest : public QObject {
    Q_OBJECT
private slots:
    void mergesTheSentencesOfOneClause()
    {
        const QString text = QStringLiteral("First sentence. Second one here. Third one.");
        Finding a = finding("Uncapped Liability", 4, 0, 15, text, 0.4);
        a.fields["a"] = 1;
        a.confidence = 0.6;
        Finding b = finding("Uncapped Liability", 4, 16, 32, text, 0.9);
        b.fields["b"] = 2;
        b.needsHumanReview = true;
        Finding c = finding("Uncapped Liability", 4, 33, 43, text, 0.5);
        c.confidence = 0.8;
        const QList<Finding> merged = mergeClauseFindings({ a, b, c }, text);
        QCOMPARE(merged.size(), 1);
        const Finding& m = merged.front();
        QCOMPARE(m.start, qsizetype(0));
        QCOMPARE(m.end, qsizetype(43));
        QCOMPARE(m.text, text);
        QCOMPARE(m.score, 0.9);
        QCOMPARE(m.rationale, QStringLiteral("score 0.9")); // the best-scored one's
        QVERIFY(m.confidence && qFuzzyCompare(*m.confidence, 0.8));
        QCOMPARE(m.fields.value("a").toInt(), 1);
        QCOMPARE(m.fields.value("b").toInt(), 2);
        QVERIFY(m.needsHumanReview);
    }

    void keepsTheRiskiestFindingsRule()
    {
        const QString text = QStringLiteral("Alpha beta. Gamma delta.");
        Finding a = finding("Cap On Liability", 1, 0, 11, text, 0.9);
        Finding b = finding("Cap On Liability", 1, 12, 24, text, 0.2);
        b.risk = Risk::High;
        b.ruleId = QStringLiteral("cap");
        const QList<Finding> merged = mergeClauseFindings({ a, b }, text);
        QCOMPARE(merged.size(), 1);
        QCOMPARE(merged.front().risk, Risk::High);
        QCOMPARE(merged.front().ruleId, QStringLiteral("cap"));
        QCOMPARE(merged.front().score, 0.9);
    }

    void keepsOtherCategoriesAndClausesApart()
    {
        const QString text = QStringLiteral("Alpha beta. Gamma delta. Epsilon.");
        const QList<Finding> merged
            = mergeClauseFindings({ finding("Cap On Liability", 1, 0, 11, text, 0.5),
                                      finding("Uncapped Liability", 1, 0, 11, text, 0.5),
                                      finding("Cap On Liability", 2, 12, 24, text, 0.5),
                                      // No clause known: apart unless the span repeats.
                                      finding("Audit Rights", -1, 0, 11, text, 0.5),
                                      finding("Audit Rights", -1, 12, 24, text, 0.5),
                                      finding("Audit Rights", -1, 12, 24, text, 0.7) },
                text);
        QCOMPARE(merged.size(), 5);
        QCOMPARE(merged[0].category, QStringLiteral("Cap On Liability"));
        QCOMPARE(merged[1].category, QStringLiteral("Uncapped Liability"));
        QCOMPARE(merged[2].clauseIndex, 2);
        QCOMPARE(merged[4].score, 0.7);
    }

    // The sample contract's limitation of liability clause has three sentences the
    // classifier reads as Uncapped Liability; the review shows it once.
    void sampleReviewHasOneFindingPerCategoryAndClause()
    {
        ReviewOptions options;
        auto review = ReviewPipeline::runBlocking(
            QStringLiteral(CW_SOURCE_DIR "/resources/samples/sample-contract.pdf"), options);
        QVERIFY2(review.ok(), review.ok() ? "" : review.error().message.c_str());
        QSet<QString> seen;
        int uncapped = 0;
        for (const Finding& f : review->findings) {
            uncapped += f.category == QLatin1String("Uncapped Liability");
            if (f.clauseIndex < 0)
                continue;
            const QString key = f.category + '/' + QString::number(f.clauseIndex);
            QVERIFY2(!seen.contains(key), qPrintable("two findings for " + key));
            seen.insert(key);
            QCOMPARE(review->document.text.mid(f.start, f.end - f.start), f.text);
        }
        QVERIFY(uncapped >= 1);
    }
};

QTEST_GUILESS_MAIN(ClauseFindingsTest)
#include "clause_findings_test.moc"
