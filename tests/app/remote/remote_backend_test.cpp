// The app's remote backend against a real clausewright-server process on a loopback port
// (the tiny random-weight model): models listed, streaming, JSON-schema answers that parse,
// cancel mid-stream, a wrong key, a review through the server, and a server that dies
// mid-answer (a clear error; the review keeps its fast findings).
#include "app/desktop/code_test_controller.h"
#include "app/desktop/remote_key_store.h"
#include "app/generation/remote_generator.h"
#include "app/review/review_pipeline.h"
#include "tests/app/remote/server_process.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

using namespace cw;

namespace {

const QString kModel = QStringLiteral(CW_TEST_DATA_DIR "/golden/models/qwen3_moe_a");
const QString kContract = QStringLiteral(CW_TEST_DATA_DIR "/llm_review/supply_agreement.txt");
const QString kKey = QStringLiteral("remote-test-key-0123456789");

generation::GenerationRequest schemaRequest(const QString& question)
{
    generation::GenerationRequest r;
    r.messages = { { "user", question.toStdString(), std::nullopt } };
    r.jsonSchema = R"({"type": "object", "properties": {"present": {"type": "boolean"},
        "risk": {"enum": ["low", "medium", "high"]}}, "required": ["present", "risk"]})";
    r.maxTokens = 200;
    return r;
}

} // namespace

class RemoteBackendTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_keyFile = m_dir.filePath(QStringLiteral("keys"));
        QFile keys(m_keyFile);
        QVERIFY(keys.open(QIODevice::WriteOnly));
        QVERIFY(keys.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner));
        keys.write(kKey.toUtf8() + "\n");
        keys.close();
        m_server = std::make_unique<cw::testing::ServerProcess>(m_keyFile);
        QVERIFY2(m_server->port() > 0, qPrintable(m_server->log()));
    }

    void keyFileIsOwnerOnlyWithoutAKeyring()
    {
        // CW_NO_KEYRING=1 (set by CTest): the file, readable by its owner alone.
        qputenv("XDG_CONFIG_HOME", m_dir.filePath(QStringLiteral("config")).toUtf8());
        auto where = RemoteKeyStore::write(kKey);
        QVERIFY2(where.ok(), where.ok() ? "" : where.error().message.c_str());
        QCOMPARE(*where, RemoteKeyStore::keyFilePath());
        QCOMPARE(QFile(*where).permissions() & 0x0077, QFileDevice::Permissions {});
        QCOMPARE(*RemoteKeyStore::read(), kKey);
        QVERIFY(RemoteKeyStore::write(QString()).ok());
        QVERIFY(!QFile::exists(*where));
    }

    void listsModelsAndRefusesAWrongKey()
    {
        generation::RemoteServer server { m_server->url(), kKey, {} };
        auto models = generation::listRemoteModels(server);
        QVERIFY2(models.ok(), models.ok() ? "" : models.error().message.c_str());
        QCOMPARE(*models, QStringList { "tiny" });

        server.apiKey = QStringLiteral("remote-test-key-wrong-0000");
        auto refused = generation::listRemoteModels(server);
        QVERIFY(!refused.ok());
        QVERIFY2(QString::fromStdString(refused.error().message)
                     .contains("refused the API key (HTTP 401)"),
            refused.error().message.c_str());
        generation::RemoteGenerator generator(server);
        std::vector<generation::GenerationRequest> requests { schemaRequest("hi") };
        auto generated = generator.generate(requests, [] { return false; }, {});
        QVERIFY(!generated.ok());
        QVERIFY(QString::fromStdString(generated.error().message).contains("401"));
    }

    void streamsJsonSchemaAnswersThatParse()
    {
        generation::RemoteGenerator generator({ m_server->url(), kKey, QStringLiteral("tiny") });
        std::vector<generation::GenerationRequest> requests;
        std::vector<std::string> streamed(3);
        for (int i = 0; i < 3; ++i) {
            requests.push_back(schemaRequest(QStringLiteral("Question %1?").arg(i)));
            requests.back().onText
                = [&streamed, i](std::string_view piece) { streamed[std::size_t(i)] += piece; };
        }
        std::vector<generation::GenerationAnswer> answers(3);
        auto totals = generator.generate(
            requests, [] { return false; },
            [&](std::size_t i, const generation::GenerationAnswer& a) { answers[i] = a; });
        QVERIFY2(totals.ok(), totals.ok() ? "" : totals.error().message.c_str());
        QCOMPARE(totals->failed, 0);
        for (std::size_t i = 0; i < 3; ++i) {
            QVERIFY2(answers[i].complete, answers[i].error.c_str());
            QCOMPARE(streamed[i], answers[i].text);
            QJsonParseError error;
            const QJsonObject answer
                = QJsonDocument::fromJson(QByteArray::fromStdString(answers[i].text), &error)
                      .object();
            QVERIFY2(error.error == QJsonParseError::NoError, answers[i].text.c_str());
            QVERIFY(answer.value("present").isBool());
            QVERIFY(
                QStringList({ "low", "medium", "high" }).contains(answer.value("risk").toString()));
            QVERIFY(answers[i].generatedTokens > 0);
            QVERIFY(answers[i].promptTokens > 0);
        }
    }

    void cancelStopsMidStream()
    {
        generation::RemoteGenerator generator({ m_server->url(), kKey, QStringLiteral("tiny") });
        generation::GenerationRequest r;
        r.messages = { { "user", "Write at length", std::nullopt } };
        r.maxTokens = 3000;
        std::atomic<bool> cancel { false };
        r.onText = [&](std::string_view) { cancel = true; };
        std::vector<generation::GenerationRequest> requests { r };
        generation::GenerationAnswer answer;
        QElapsedTimer timer;
        timer.start();
        auto totals = generator.generate(
            requests, [&] { return cancel.load(); },
            [&](std::size_t, const generation::GenerationAnswer& a) { answer = a; });
        QVERIFY(totals.ok());
        QVERIFY(totals->cancelled);
        QVERIFY(answer.cancelled);
        QVERIFY(!answer.complete);
        QVERIFY2(timer.elapsed() < 3000, qPrintable(QString::number(timer.elapsed())));
    }

    void reviewRunsThroughTheServer()
    {
        ReviewOptions options;
        options.textOnly = true;
        options.heads = QStringLiteral("all");
        options.remote = { m_server->url(), kKey, QStringLiteral("tiny") };
        options.backendOrder = generation::BackendOrder::RemoteOnly;
        QString backend;
        ReviewEvents events;
        events.modelBackend = [&](const QString& b, const QString&) { backend = b; };
        auto review = ReviewPipeline::runBlocking(kContract, options, nullptr, events);
        QVERIFY2(review.ok(), review.ok() ? "" : review.error().message.c_str());
        QCOMPARE(
            review->settings.value("model_backend").toString(), QStringLiteral("remote server"));
        QCOMPARE(backend, QStringLiteral("remote server: tiny"));
        const QJsonObject stats = review->settings.value("model_review").toObject();
        QVERIFY(stats.value("questions").toInt() > 0);
        QVERIFY2(stats.value("answered").toInt() == stats.value("questions").toInt(),
            qPrintable(review->document.warnings.join("\n")));
        QVERIFY(stats.value("generated_tokens").toInteger() > 0);
    }

    void codePanelGeneratesThroughTheServer()
    {
        // The code panel's controller with no local model and the server first: the skill's
        // answer streams from the server, and the report names it.
        CodeTestController controller(m_dir.filePath(QStringLiteral("history.sqlite")));
        controller.setRemote({ m_server->url(), kKey, {} }, generation::BackendOrder::RemoteThenLocal,
            false);
        QSignalSpy pieces(&controller, &CodeTestController::answerPiece);
        QSignalSpy generated(&controller, &CodeTestController::generated);
        QSignalSpy failed(&controller, &CodeTestController::failed);
        QSignalSpy status(&controller, &CodeTestController::status);
        TestGenerationOptions options;
        options.run = false;
        options.rounds = 1;
        QVERIFY(controller.generate(QStringLiteral("explain-code"),
            QStringLiteral("def half(x):\n    return x / 2\n"), QStringLiteral("half.py"),
            QStringLiteral("python"), QString(), options));
        QVERIFY(generated.wait(60000) || !failed.isEmpty());
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed[0][0].toString()));
        QVERIFY(!pieces.isEmpty());
        const auto report = generated[0][0].value<TestGenerationReport>();
        QVERIFY2(report.model.contains(QLatin1String("remote server")), qPrintable(report.model));
        QVERIFY(!report.rounds.isEmpty() && !report.rounds[0].answer.isEmpty());
        bool named = false;
        for (const auto& s : status)
            named = named || s[0].toString().contains(QLatin1String("remote server"));
        QVERIFY(named);
    }

    void fallsBackToTheLocalModelWhenTheServerIsDown()
    {
        ReviewOptions options;
        options.textOnly = true;
        options.heads = QStringLiteral("all");
        options.modelPath = kModel;
        options.modelThreads = 1;
        options.remote = { QStringLiteral("http://127.0.0.1:9"), kKey, QStringLiteral("tiny") };
        options.backendOrder = generation::BackendOrder::RemoteThenLocal;
        auto review = ReviewPipeline::runBlocking(kContract, options);
        QVERIFY2(review.ok(), review.ok() ? "" : review.error().message.c_str());
        QCOMPARE(review->settings.value("model_backend").toString(), QStringLiteral("in-process"));
        QVERIFY2(review->document.warnings.join("\n").contains("passed over: remote server"),
            qPrintable(review->document.warnings.join("\n")));
    }

    void passagesShrinkWhenTheServerRefusesTheirLength()
    {
        // A server that takes 2,400 tokens per request (answers may take 1,024): the first prompts
        // are refused (413), the review asks again with shorter passages until they fit.
        cw::testing::ServerProcess small(m_keyFile, { "--max-request-tokens", "2400" });
        QVERIFY2(small.port() > 0, qPrintable(small.log()));
        ReviewOptions options;
        options.textOnly = true;
        options.heads = QStringLiteral("all");
        options.remote = { small.url(), kKey, QStringLiteral("tiny") };
        options.backendOrder = generation::BackendOrder::RemoteOnly;
        auto review = ReviewPipeline::runBlocking(kContract, options);
        QVERIFY2(review.ok(), review.ok() ? "" : review.error().message.c_str());
        const QJsonObject stats = review->settings.value("model_review").toObject();
        QVERIFY2(
            stats.value("answered").toInt() > 0, qPrintable(review->document.warnings.join("\n")));
        QVERIFY(small.log().contains("\"status\":413"));
    }

    void serverDyingMidAnswerKeepsTheFastFindings()
    {
        cw::testing::ServerProcess doomed(m_keyFile);
        QVERIFY2(doomed.port() > 0, qPrintable(doomed.log()));
        ReviewOptions options;
        options.textOnly = true;
        options.heads = QStringLiteral("all");
        options.remote = { doomed.url(), kKey, QStringLiteral("tiny") };
        options.backendOrder = generation::BackendOrder::RemoteOnly;
        ReviewEvents events;
        bool killed = false;
        events.modelNote = [&](int, const QString&) {
            if (!killed) {
                killed = true;
                doomed.kill();
            }
        };
        auto review = ReviewPipeline::runBlocking(kContract, options, nullptr, events);
        QVERIFY(killed);
        QVERIFY2(review.ok(), review.ok() ? "" : review.error().message.c_str());
        int fast = 0;
        for (const Finding& f : review->findings)
            fast += f.source != QLatin1String("llm");
        QVERIFY(fast > 0);
        const QString warnings = review->document.warnings.join("\n");
        QVERIFY2(warnings.contains("closed the connection before the answer was complete")
                || warnings.contains("cannot reach the server"),
            qPrintable(warnings));
    }

private:
    QTemporaryDir m_dir;
    QString m_keyFile;
    std::unique_ptr<cw::testing::ServerProcess> m_server;
};

QTEST_MAIN(RemoteBackendTest)
#include "remote_backend_test.moc"
