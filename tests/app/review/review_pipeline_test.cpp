// The review pipeline end to end on a real contract text (held out from training), its
// cancel, bad inputs, and the review command's JSON.
#include "app/heads/cuad_dataset.h"
#include "app/review/review_pipeline.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <qcoro/qcorotask.h>

using namespace cw;

class ReviewPipelineTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_contract;

private slots:
    void initTestCase()
    {
        auto contracts = heads::readLabelledContracts(
            QStringLiteral(CW_TEST_DATA_DIR "/heads/heldout.jsonl.xz"));
        QVERIFY(contracts.ok());
        m_contract = m_dir.filePath("contract.txt");
        QFile file(m_contract);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(contracts->at(1).text.toUtf8()); // the KUBIENT master services agreement
    }

    void reviewsATextContract()
    {
        ReviewOptions options;
        options.textOnly = true;
        QStringList stages;
        auto review = ReviewPipeline::runBlocking(m_contract, options, nullptr,
            [&](ReviewStage s, int, int) { stages.append(reviewStageName(s)); });
        QVERIFY2(review.ok(), review.ok() ? "" : review.error().message.c_str());
        QVERIFY(stages.contains("reading") && stages.contains("heads") && stages.contains("done"));
        bool law = false;
        for (const Finding& f : review->findings) {
            QVERIFY(f.start < f.end && f.end <= review->document.text.size());
            QCOMPARE(review->document.text.mid(f.start, f.end - f.start), f.text);
            if (f.category == "Governing Law" && f.fields.value("law").toString() == "Delaware")
                law = true;
        }
        QVERIFY(law);
        QVERIFY(!review->summary.text.isEmpty());
    }

    void cancelStopsTheReview()
    {
        std::atomic_bool cancelled { true };
        ReviewOptions options;
        options.textOnly = true;
        auto review = ReviewPipeline::runBlocking(m_contract, options, &cancelled);
        QVERIFY(!review.ok());
        QCOMPARE(QString::fromStdString(review.error().message), QString("cancelled"));
    }

    void coroutineReviewCanBeCancelled()
    {
        ReviewPipeline pipeline;
        ReviewOptions options;
        options.textOnly = true;
        QSignalSpy finished(&pipeline, &ReviewPipeline::finished);
        std::optional<Result<Review>> result;
        auto task
            = [&]() -> QCoro::Task<> { result = co_await pipeline.review(m_contract, options); };
        auto running = task();
        pipeline.cancel();
        QVERIFY(finished.wait(10000) || finished.count() == 1);
        QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), 10000);
        QVERIFY(!result->ok());
        QCOMPARE(QString::fromStdString(result->error().message), QString("cancelled"));
    }

    void badInputsGiveClearErrors()
    {
        ReviewOptions options;
        auto missing = ReviewPipeline::runBlocking(m_dir.filePath("nope.pdf"), options);
        QVERIFY(!missing.ok());
        QVERIFY(QString::fromStdString(missing.error().message).contains("nope.pdf"));
        QFile bad(m_dir.filePath("bad.yaml"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(
            "name: x\nrules:\n  - id: a\n    category: Nope\n    risk: high\n    message: m\n");
        bad.close();
        options.playbookPath = bad.fileName();
        auto badBook = ReviewPipeline::runBlocking(m_contract, options);
        QVERIFY(!badBook.ok());
        QVERIFY(QString::fromStdString(badBook.error().message).contains("bad.yaml"));
    }

    void reviewCommandWritesJsonFields()
    {
        QProcess cli;
        cli.start(CW_CLI_PATH, { "review", m_contract, "--text-only", "--format", "json" });
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 0);
        const QJsonDocument json = QJsonDocument::fromJson(cli.readAllStandardOutput());
        QVERIFY(json.isObject());
        const QJsonArray findings = json.object().value("findings").toArray();
        QVERIFY(!findings.isEmpty());
        for (const QJsonValue& v : findings) {
            const QJsonObject f = v.toObject();
            for (const char* key :
                { "category", "start", "end", "page", "text", "fields", "confidence", "risk" })
                QVERIFY2(f.contains(key), key);
        }
        QProcess bad;
        bad.start(CW_CLI_PATH, { "review", m_dir.filePath("missing.pdf") });
        QVERIFY(bad.waitForFinished(60000));
        QVERIFY(bad.exitCode() != 0);
        QVERIFY(bad.readAllStandardError().contains("missing.pdf"));
    }
};

QTEST_MAIN(ReviewPipelineTest)
#include "review_pipeline_test.moc"
