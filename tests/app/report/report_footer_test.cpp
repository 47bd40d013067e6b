// The report's footer says where the model review ran, its tokens/s and its time; a review
// of the fast heads only says nothing of the kind. The run survives the JSON round trip that
// the history uses.
#include "app/report/report_exporter.h"
#include "app/review/model_run.h"

#include <QTest>

using namespace cw;

class ReportFooterTest : public QObject {
    Q_OBJECT

private slots:
    void footerNamesTheDeviceTokensPerSecondAndTime()
    {
        Review review;
        review.modelName = QStringLiteral("tiny.gguf");
        ModelRun run;
        run.device = QStringLiteral("NVIDIA H200 (cuda:0)");
        run.seconds = 2.5;
        run.generatedTokens = 1000;
        recordModelRun(review, run);
        const QString expected = QStringLiteral("NVIDIA H200 (cuda:0) · 400.0 tokens/s · 2.5 s");
        QCOMPARE(modelRunText(*modelRunOf(review)), expected);
        // Markdown escapes the device's parentheses.
        const QString markdownRun
            = QStringLiteral("NVIDIA H200 \\(cuda:0\\) · 400.0 tokens/s · 2.5 s");
        QVERIFY(QString::fromUtf8(reviewToMarkdown(review))
                    .endsWith(QStringLiteral("*Model review on ") + markdownRun + "*\n"));
        QVERIFY(
            QString::fromUtf8(reviewToHtml(review))
                .contains(QStringLiteral("<footer class=\"note\">Model review on ") + expected));
        auto back = reviewFromJson(reviewToJson(review));
        QVERIFY(back.ok());
        QVERIFY(modelRunOf(*back).has_value());
        QCOMPARE(modelRunText(*modelRunOf(*back)), expected);
        QVERIFY(reviewToPdf(review).ok());
    }

    void fastHeadsOnlyShowNoModelRun()
    {
        Review review;
        QVERIFY(!modelRunOf(review).has_value());
        QVERIFY(!QString::fromUtf8(reviewToMarkdown(review)).contains("Model review on"));
        QVERIFY(!QString::fromUtf8(reviewToHtml(review)).contains("Model review on"));
    }
};

QTEST_MAIN(ReportFooterTest)
#include "report_footer_test.moc"
