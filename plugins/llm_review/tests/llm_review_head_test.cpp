// The language model head plugin: its metadata and questions file, the model the host lends
// it (refused when absent or of another version), and its answers streaming back: every
// question's note in pieces, each answered question's findings at once.
#include "app/llm_review/category_questions.h"
#include "app/plugins/llm_head.h"
#include "app/plugins/plugin_host.h"
#include "plugins/llm_review/llm_review_head.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace cw;

namespace {

// The value at a path of object keys ("properties", "answers", ...).
QJsonValue at(QJsonValue value, std::initializer_list<const char*> path)
{
    for (const char* key : path)
        value = value.toObject().value(QLatin1String(key));
    return value;
}

const QString kQuestions = QStringLiteral(CW_SOURCE_DIR "/plugins/llm_review/llm_questions.json");

// Answers every question "present, in its first passage, high risk", the note first and in
// pieces of a few characters, as a model streams.
class ScriptedGenerator final : public generation::TextGenerator {
public:
    QString name() const override { return QStringLiteral("scripted"); }
    QString location() const override { return QStringLiteral("memory"); }
    QString kindName() const override { return QStringLiteral("in-process"); }
    std::int64_t contextLength() const override { return 0; }
    Result<std::int64_t> promptTokens(const std::vector<engine::ChatMessage>&) override
    {
        return std::int64_t(0);
    }
    Result<generation::GenerationTotals> generate(std::span<generation::GenerationRequest> requests,
        const std::function<bool()>&, const FinishedCallback& onFinished) override
    {
        for (std::size_t i = 0; i < requests.size(); ++i) {
            const QJsonObject schema
                = QJsonDocument::fromJson(QByteArray::fromStdString(requests[i].jsonSchema))
                      .object();
            const QJsonObject categories
                = at(schema, { "properties", "answers", "properties" }).toObject();
            QJsonObject answers;
            for (auto it = categories.begin(); it != categories.end(); ++it) {
                const QJsonArray ids
                    = at(it.value(), { "properties", "clause_ids", "items", "enum" }).toArray();
                answers[it.key()] = QJsonObject { { "present", true },
                    { "clause_ids", QJsonArray { ids.first() } }, { "risk", "high" } };
            }
            grammars.push_back(requests[i].grammar);
            const std::string text = QJsonDocument(QJsonObject { { "answers", answers } })
                                         .toJson(QJsonDocument::Compact)
                                         .toStdString();
            // The note first, as the schema orders it.
            const std::string full = "{\"rationale\":\"" + kNote + "\"," + text.substr(1);
            for (std::size_t at = 0; at < full.size(); at += 5)
                requests[i].onText(std::string_view(full).substr(at, 5));
            generation::GenerationAnswer answer;
            answer.text = full;
            answer.complete = true;
            onFinished(i, answer);
        }
        return generation::GenerationTotals {};
    }

    static inline const std::string kNote = "The clause says so plainly.";
    std::vector<std::string> grammars;
};

const LoadedHead* llmHead(PluginHost& host)
{
    for (const LoadedHead& h : host.heads())
        if (h.metadata.id == "llm_review")
            return &h;
    return nullptr;
}

Document contract()
{
    Document d;
    d.title = QStringLiteral("Supply Agreement");
    d.text = QStringLiteral("1. Governing Law. This Agreement is governed by the laws of the "
                            "State of Delaware.\n2. Term. This Agreement renews automatically "
                            "for successive one-year terms.\n");
    return d;
}

QList<Clause> clausesOf(const Document& d)
{
    Clause a;
    a.index = 0;
    a.start = 0;
    a.end = a.ownEnd = d.text.indexOf("2. Term");
    Clause b;
    b.index = 1;
    b.start = a.end;
    b.end = b.ownEnd = d.text.size();
    return { a, b };
}

} // namespace

class LlmReviewHeadTest : public QObject {
    Q_OBJECT
private slots:
    void pluginIsAnLlmHeadWithItsQuestionsAsData()
    {
        PluginHost host;
        const LoadedHead* h = llmHead(host);
        QVERIFY2(h, qPrintable(host.errors().join('\n')));
        QCOMPARE(h->metadata.kind, HeadKind::Llm);
        QVERIFY(h->origin.endsWith("llm_review.so"));
        QCOMPARE(h->metadata.data, QStringLiteral("llm_questions.json"));
        auto groups = llm::readCategoryGroups(kQuestions);
        QVERIFY(groups.ok());
        int asked = 0;
        for (const llm::CategoryGroup& g : *groups)
            asked += int(g.categories.size());
        QCOMPARE(asked, int(h->metadata.categories.size()));
        QVERIFY(host.heads("fast").size() >= 2); // the llm head is not among the fast ones
        for (const LoadedHead& fast : host.heads("fast"))
            QVERIFY(fast.metadata.kind == HeadKind::Fast);
    }

    void refusesToRunWithoutAModelOrWithAnotherInputVersion()
    {
        PluginHost host;
        const LoadedHead* h = llmHead(host);
        QVERIFY(h);
        const Document d = contract();
        auto none = runHead(*h, d, clausesOf(d), {});
        QVERIFY(!none.ok());
        QVERIFY(QString::fromStdString(none.error().message).contains("needs a language model"));
        ScriptedGenerator generator;
        Playbook playbook;
        LlmHeadInput input;
        input.version = kLlmHeadInputVersion + 1;
        input.generator = &generator;
        input.playbook = &playbook;
        HeadRunContext context;
        context.llm = &input;
        auto other = runHead(*h, d, clausesOf(d), context);
        QVERIFY(!other.ok());
        QVERIFY2(QString::fromStdString(other.error().message)
                     .contains(QStringLiteral("version %1").arg(kLlmHeadInputVersion + 1)),
            other.error().message.c_str());
    }

    void notesStreamAndAnswersBecomeFindings()
    {
        PluginHost host;
        const LoadedHead* h = llmHead(host);
        QVERIFY(h);
        const Document d = contract();
        ScriptedGenerator generator;
        Playbook playbook;
        LlmHeadReport report;
        LlmHeadInput input;
        input.generator = &generator;
        input.playbook = &playbook;
        input.mergeWithFast = false;
        input.grammarForSchema = [](const std::string& schema) -> Result<std::string> {
            return "grammar of " + std::to_string(schema.size());
        };
        QList<ModelQuestionInfo> planned;
        QMap<int, QString> notes;
        QMap<int, int> answered;
        input.planned = [&](const QList<ModelQuestionInfo>& q) { planned = q; };
        input.notePiece = [&](int q, const QString& piece) { notes[q] += piece; };
        input.answered
            = [&](int q, const QList<Finding>& found) { answered[q] = int(found.size()); };
        input.report = &report;
        HeadRunContext context;
        context.llm = &input;
        auto run = runHead(*h, d, clausesOf(d), context);
        QVERIFY2(run.ok(), run.ok() ? "" : run.error().message.c_str());
        QVERIFY(!planned.isEmpty()); // keyword passages: the fast heads found nothing here
        QCOMPARE(report.questions, int(planned.size()));
        QCOMPARE(report.answered, int(planned.size()));
        for (const ModelQuestionInfo& q : planned) {
            QCOMPARE(notes.value(q.id), QString::fromStdString(ScriptedGenerator::kNote));
            QVERIFY(answered.value(q.id) > 0);
        }
        QVERIFY(run->dropped.isEmpty());
        QVERIFY(!run->findings.isEmpty());
        for (const Finding& f : run->findings) {
            QCOMPARE(f.source, QStringLiteral("llm"));
            QCOMPARE(f.risk, Risk::High);
        }
        // The host's grammar was used for every question.
        QCOMPARE(generator.grammars.size(), std::size_t(planned.size()));
        for (const std::string& g : generator.grammars)
            QVERIFY(g.rfind("grammar of ", 0) == 0);
    }

    void questionsFileErrorsNameTheFile()
    {
        QTemporaryDir dir;
        QFile bad(dir.filePath("llm_questions.json"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(R"({"format": 1, "groups": [{"id": "x", "categories": [{"category": "Secret",
            "meaning": "m", "keywords": []}]}]})");
        bad.close();
        HeadSetup setup;
        setup.metadata.categories = QStringList { "Governing Law" };
        setup.dataPath = bad.fileName();
        auto head = llm::LlmReviewHead::load(setup);
        QVERIFY(!head.ok());
        const QString message = QString::fromStdString(head.error().message);
        QVERIFY2(
            message.contains(bad.fileName()) && message.contains("Secret"), qPrintable(message));
        auto format = llm::parseCategoryGroups(R"({"format": 2, "groups": []})", "q.json");
        QVERIFY(!format.ok());
        QVERIFY(QString::fromStdString(format.error().message).contains("format 2"));
    }
};

QTEST_MAIN(LlmReviewHeadTest)
#include "llm_review_head_test.moc"
