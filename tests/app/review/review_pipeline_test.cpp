// The review pipeline end to end on a real contract text (held out from training), its
// cancel, bad inputs, and the review command's JSON.
#include "app/heads/cuad_dataset.h"
#include "app/history/history_database.h"
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
        cli.start(
            CW_CLI_PATH, { "review", m_contract, "--text-only", "--format", "json", "--no-save" });
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

    // As the GUI does, a CLI review lands in the history: --db picks the file, --no-save
    // skips it. Qt's XDG_RUNTIME_DIR warning is not printed where the variable is unset.
    void reviewCommandSavesToTheHistory()
    {
        const QString db = m_dir.filePath("cli-history.sqlite");
        QProcess cli;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.remove("XDG_RUNTIME_DIR");
        cli.setProcessEnvironment(environment);
        cli.start(
            CW_CLI_PATH, { "review", m_contract, "--text-only", "--format", "md", "--db", db });
        QVERIFY(cli.waitForFinished(60000));
        const QString err = QString::fromUtf8(cli.readAllStandardError());
        QVERIFY2(cli.exitCode() == 0, qPrintable(err));
        QVERIFY2(err.contains("saved in the history as review 1"), qPrintable(err));
        QVERIFY2(!err.contains("XDG_RUNTIME_DIR"), qPrintable(err));
        {
            auto opened = HistoryDatabase::open(db);
            QVERIFY(opened.ok());
            auto saved = opened.value()->load(1);
            QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().message.c_str());
            QCOMPARE(saved.value().document.path, m_contract);
            QVERIFY(!saved.value().findings.isEmpty());
        }
        cli.start(CW_CLI_PATH, { "review", m_contract, "--text-only", "--no-save", "--db", db });
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 0);
        QVERIFY(!cli.readAllStandardError().contains("saved in the history"));
        auto opened = HistoryDatabase::open(db);
        QVERIFY(opened.ok());
        auto listed = opened.value()->list(0, 10);
        QVERIFY(listed.ok());
        QCOMPARE(listed.value().total, 1);
    }

    // A model given without --heads means the model reviews too; where it cannot, the
    // command says why instead of quietly running the fast heads.
    void reviewCommandWithAModelRunsTheModel()
    {
        QProcess cli;
        cli.start(CW_CLI_PATH,
            { "review", m_contract, "--text-only", "--no-save", "--model",
                m_dir.filePath("no-such-model.gguf") });
        QVERIFY(cli.waitForFinished(60000));
        const QString err = QString::fromUtf8(cli.readAllStandardError());
        QVERIFY2(err.contains("language model could not be used"), qPrintable(err));
        QVERIFY2(err.contains("no-such-model.gguf"), qPrintable(err));
        QProcess help;
        help.start(CW_CLI_PATH, { "review", "--help" });
        QVERIFY(help.waitForFinished(60000));
        QCOMPARE(help.exitCode(), 0);
        const QString text = QString::fromUtf8(help.readAllStandardOutput());
        QVERIFY2(text.contains("default: all with --model"), qPrintable(text));
        QVERIFY2(text.contains("}=json"), qPrintable(text)); // --format's default shown
        QVERIFY2(text.contains("TEXT=cpu"), qPrintable(text)); // --device's default shown
    }

    // The README's example search finds the bundled sample once it is reviewed.
    void readmeSearchExampleMatchesTheSample()
    {
        QFile readme(QStringLiteral(CW_SOURCE_DIR "/README.md"));
        QVERIFY(readme.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(readme.readAll());
        const QRegularExpression example(
            QStringLiteral("clausewright-cli history search '([^']+)'"));
        const QRegularExpressionMatch match = example.match(text);
        QVERIFY2(match.hasMatch(), "the README has no history search example");
        const QString db = m_dir.filePath("sample-history.sqlite");
        QProcess cli;
        cli.start(CW_CLI_PATH,
            { "review", QStringLiteral(CW_SOURCE_DIR "/resources/samples/sample-contract.pdf"),
                "--format", "json", "--db", db });
        QVERIFY(cli.waitForFinished(120000));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
        QProcess search;
        search.start(CW_CLI_PATH, { "history", "search", match.captured(1), "--db", db });
        QVERIFY(search.waitForFinished(60000));
        const QString out = QString::fromUtf8(search.readAllStandardOutput());
        QVERIFY2(search.exitCode() == 0, search.readAllStandardError().constData());
        QVERIFY2(!out.startsWith("No matches"), qPrintable(out));
        QVERIFY2(out.contains(QRegularExpression(
                     QStringLiteral("^1 "), QRegularExpression::MultilineOption)),
            qPrintable(out)); // a hit in review 1
    }
};

QTEST_MAIN(ReviewPipelineTest)
#include "review_pipeline_test.moc"
