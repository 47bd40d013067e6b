// The LLM head's parts that need no model: question planning, answer schema and grammar,
// answer parsing, the streaming note reader, and merging with the fast findings.
#include "app/llm_review/finding_merge.h"
#include "app/llm_review/prompt_rendering.h"
#include "app/llm_review/question_planner.h"
#include "app/llm_review/question_prompt.h"
#include "app/llm_review/streaming_note_reader.h"
#include "app/segment/clause_segmenter.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace cw;
using namespace cw::llm;

namespace {

// The LLM head plugin's questions, as the plugin reads them.
const QList<CategoryGroup>& categoryGroups()
{
    static const QList<CategoryGroup> groups = [] {
        auto read = readCategoryGroups(
            QStringLiteral(CW_SOURCE_DIR "/plugins/llm_review/llm_questions.json"));
        if (!read)
            qFatal("%s", read.error().message.c_str());
        return *read;
    }();
    return groups;
}

Document contract()
{
    QFile file(QStringLiteral(CW_TEST_DATA_DIR "/llm_review/supply_agreement.txt"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read the test contract");
    Document d;
    d.path = file.fileName();
    d.title = QStringLiteral("Supply Agreement");
    d.text = QString::fromUtf8(file.readAll());
    return d;
}

Finding fastFinding(const Document& d, const QList<Clause>& clauses, const QString& category,
    const QString& words, double confidence = 0.7)
{
    Finding f;
    f.category = category;
    f.start = d.text.indexOf(words);
    Q_ASSERT(f.start >= 0);
    f.end = f.start + words.size();
    f.text = words;
    f.confidence = confidence;
    f.score = confidence;
    f.source = QStringLiteral("fast");
    for (const Clause& c : clauses) {
        if (c.start <= f.start && c.end >= f.end)
            f.clauseIndex = c.index; // innermost: clauses come outer first
    }
    return f;
}

const ModelQuestion* questionOf(const QuestionPlan& plan, const QString& category)
{
    for (const ModelQuestion& q : plan.questions) {
        if (q.categoryNames().contains(category))
            return &q;
    }
    return nullptr;
}

} // namespace

class LlmReviewTest : public QObject {
    Q_OBJECT
private slots:
    void everyCuadCategoryIsInExactlyOneGroup()
    {
        QSet<QString> seen;
        for (const CategoryGroup& g : categoryGroups()) {
            for (const CategoryQuestion& c : g.categories) {
                QVERIFY2(!seen.contains(c.category), qPrintable(c.category));
                seen.insert(c.category);
                QVERIFY(!c.keywords.isEmpty());
            }
        }
        QCOMPARE(seen.size(), 41);
    }

    void planTakesFastCandidatesThenKeywords()
    {
        const Document d = contract();
        const QList<Clause> clauses = segmentClauses(d);
        const QList<Finding> fast { fastFinding(d, clauses, "Governing Law",
                                        "governed by the laws of the State of Texas", 0.9),
            fastFinding(d, clauses, "Cap On Liability", "aggregate liability under this Agreement"),
            fastFinding(d, clauses, "Cap On Liability", "Limitation of Liability", 0.3) };
        PlanLimits limits;
        limits.passagesPerCategory = 1;
        const QuestionPlan plan = planQuestions(d, clauses, fast, categoryGroups(), limits);
        const ModelQuestion* law = questionOf(plan, "Governing Law");
        QVERIFY(law);
        QVERIFY(!law->fromKeywords);
        QCOMPARE(law->passageIds.size(), 1);
        const Passage* p = plan.passage(law->passageIds.first());
        QVERIFY(p && p->start <= fast[0].start && p->end >= fast[0].end);
        // Only the most confident liability finding with one passage per category.
        const ModelQuestion* cap = questionOf(plan, "Cap On Liability");
        QVERIFY(cap);
        QCOMPARE(cap->passageIds.size(), 1);
        // Insurance had no fast finding: its group is asked from a keyword hit.
        const ModelQuestion* insurance = questionOf(plan, "Insurance");
        QVERIFY(insurance);
        QVERIFY(insurance->fromKeywords);
        bool insuranceClause = false;
        for (int id : insurance->passageIds)
            insuranceClause |= d.text
                                   .mid(plan.passage(id)->start,
                                       plan.passage(id)->end - plan.passage(id)->start)
                                   .contains("liability insurance");
        QVERIFY(insuranceClause);
        // Passages are bounded and shared: no two cover the same text.
        for (const Passage& a : plan.passages) {
            QVERIFY(a.end - a.start <= limits.passageChars);
            for (const Passage& b : plan.passages)
                QVERIFY(a.id == b.id || a.start != b.start);
        }
        QVERIFY(plan.questions.size() < 41);
    }

    void promptsShareThePassagesAndEndWithTheQuestion()
    {
        const Document d = contract();
        const QList<Clause> clauses = segmentClauses(d);
        const QuestionPlan plan = planQuestions(d, clauses, {}, categoryGroups());
        QVERIFY(plan.questions.size() >= 2);
        Playbook playbook;
        playbook.name = "test";
        PlaybookRule rule;
        rule.id = "law-list";
        rule.category = "Governing Law";
        rule.check = PlaybookRule::Check::OneOf;
        rule.field = "law";
        rule.values = QStringList { "Delaware", "New York" };
        rule.message = "Governing law outside the list";
        playbook.rules.append(rule);
        const engine::ChatTemplate chat(engine::ChatTemplateFlavour::Qwen3);
        auto a = questionPrompt(chat, d, plan, plan.questions[0], playbook);
        auto b = questionPrompt(chat, d, plan, plan.questions[1], playbook);
        QVERIFY(a.ok() && b.ok());
        const std::string passages = "[" + std::to_string(plan.passages.last().id) + "]";
        const auto lastPassageA = a->find(passages);
        QVERIFY(lastPassageA != std::string::npos);
        QCOMPARE(a->substr(0, lastPassageA), b->substr(0, lastPassageA));
        const ModelQuestion* law = questionOf(plan, "Governing Law");
        QVERIFY(law);
        auto lawPrompt = questionPrompt(chat, d, plan, *law, playbook);
        QVERIFY(lawPrompt->find("Governing law outside the list") != std::string::npos);
        QVERIFY(lawPrompt->find("Delaware, New York") != std::string::npos);
    }

    void answerSchemaAndGrammarAcceptOnlyTheQuestionsPassages()
    {
        ModelQuestion q;
        q.id = 3;
        q.categories = categoryGroups()[3].categories; // governing law: one field
        q.passageIds = { 2, 5 };
        const auto schema = QJsonDocument::fromJson(QByteArray::fromStdString(answerSchema(q)));
        QVERIFY(schema.isObject());
        const QJsonObject props = schema.object()["properties"].toObject();
        QVERIFY(props.contains(kNoteField));
        const QJsonObject law = props["answers"]["properties"]["Governing Law"].toObject();
        QCOMPARE(law["properties"]["clause_ids"]["items"]["enum"].toArray().size(), 2);
        QVERIFY(law["properties"]["fields"]["properties"].toObject().contains("law"));
        auto grammar = answerGrammar(q);
        QVERIFY2(grammar.ok(), grammar.ok() ? "" : grammar.error().message.c_str());
        QVERIFY(grammar->find("\"u\" [0-9a-fA-F]{4}") == std::string::npos);

        auto parsed = parseAnswer(q,
            "{\"rationale\":\"Texas law.\",\"answers\":{\"Governing Law\":{\"present\":true,"
            "\"clause_ids\":[5,9],\"risk\":\"medium\",\"fields\":{\"law\":\"Texas\"}}}}");
        QVERIFY(parsed.ok());
        QCOMPARE(parsed->note, QString("Texas law."));
        QCOMPARE(parsed->verdicts.size(), 1);
        QCOMPARE(parsed->verdicts[0].passageIds, QList<int> { 5 }); // 9 was not a candidate
        QCOMPARE(parsed->verdicts[0].risk, Risk::Medium);
        QCOMPARE(parsed->verdicts[0].fields["law"].toString(), QString("Texas"));
        auto cut = parseAnswer(q, "{\"rationale\":\"Texas law.\",\"answers\":{\"Gov");
        QVERIFY(!cut.ok());
        QVERIFY(QString::fromStdString(cut.error().message).contains("not a JSON object"));
    }

    void modelProposesWordingWhereThePlaybookHasNone()
    {
        const Document d = contract();
        const QList<Clause> clauses = segmentClauses(d);
        const QList<Finding> fast {
            fastFinding(d, clauses, "Exclusivity", "exclusively from Supplier"),
            fastFinding(d, clauses, "Governing Law", "governed by the laws"),
        };
        QuestionPlan plan = planQuestions(d, clauses, fast, categoryGroups());
        Playbook playbook;
        PlaybookRule law;
        law.id = "law";
        law.category = "Governing Law";
        law.message = "Governing law outside the list";
        law.preferredText = "This Agreement is governed by the laws of New York.";
        playbook.rules.append(law);
        markWordingCategories(plan, playbook);
        const ModelQuestion* lawQ = questionOf(plan, "Governing Law");
        const ModelQuestion* exclusiveQ = questionOf(plan, "Exclusivity");
        QVERIFY(lawQ && exclusiveQ);
        QVERIFY(!lawQ->wordingCategories.contains("Governing Law"));
        QVERIFY(exclusiveQ->wordingCategories.contains("Exclusivity"));

        auto verdictSchema = [](const ModelQuestion& q, const QString& category) {
            const auto schema
                = QJsonDocument::fromJson(QByteArray::fromStdString(answerSchema(q)));
            const QJsonObject answers
                = schema.object().value("properties").toObject().value("answers").toObject();
            return answers.value("properties").toObject().value(category).toObject();
        };
        QVERIFY(!verdictSchema(*lawQ, "Governing Law")["properties"].toObject().contains(
            "suggested_text"));
        const QJsonObject exclusive = verdictSchema(*exclusiveQ, "Exclusivity");
        QCOMPARE(exclusive["properties"]["suggested_text"]["maxLength"].toInt(),
            kSuggestedTextMaxChars);
        QVERIFY(!exclusive["required"].toArray().contains("suggested_text")); // optional
        QVERIFY(answerGrammar(*exclusiveQ).ok());
        const auto messages = questionMessages(d, plan, *exclusiveQ, playbook);
        QVERIFY(messages.back().content.find("\"suggested_text\"") != std::string::npos);

        // Two passages named, high risk: the proposal goes on the first one's finding only.
        QVERIFY(plan.passages.size() >= 2);
        ModelQuestion asked = *exclusiveQ;
        const int first = plan.passages[0].id, second = plan.passages[1].id;
        asked.passageIds = { first, second };
        QJsonObject verdicts;
        for (const CategoryQuestion& c : asked.categories)
            verdicts[c.category] = QJsonObject { { "present", false },
                { "clause_ids", QJsonArray {} }, { "risk", "low" } };
        verdicts["Exclusivity"] = QJsonObject { { "present", true },
            { "clause_ids", QJsonArray { first, second } }, { "risk", "high" },
            { "suggested_text", "  Customer may buy from others. " } };
        const QByteArray text = QJsonDocument(QJsonObject {
            { "rationale", "Exclusive." }, { "answers", verdicts } })
                                    .toJson(QJsonDocument::Compact);
        auto parsed = parseAnswer(asked, text.toStdString());
        QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message.c_str());
        const QList<Finding> found = findingsFromAnswer(d, plan, *parsed, fast);
        QCOMPARE(found.size(), 2);
        QCOMPARE(found[0].suggestedText, QString("Customer may buy from others."));
        QVERIFY(found[1].suggestedText.isEmpty());

        // At low risk nothing is proposed, whatever the answer holds.
        for (CategoryVerdict& v : parsed->verdicts)
            v.risk = Risk::Low;
        for (const Finding& f : findingsFromAnswer(d, plan, *parsed, fast))
            QVERIFY(f.suggestedText.isEmpty());
    }

    void streamedNoteConcatenatesToTheParsedNote()
    {
        const std::string answer = "{ \"rationale\" : \"Cap of 24 months\\\" fees \\\\ \\n over "
                                   "\\u00e9\\ud83d\\ude00 the 12 \\/ months\", \"answers\":"
                                   "{\"rationale\":\"not this one\"}}";
        const QString expected
            = QJsonDocument::fromJson(QByteArray::fromStdString(answer))["rationale"].toString();
        QVERIFY(!expected.isEmpty());
        for (std::size_t step : { std::size_t(1), std::size_t(2), std::size_t(5), answer.size() }) {
            StreamingNoteReader reader(kNoteField);
            QString streamed;
            for (std::size_t at = 0; at < answer.size(); at += step)
                streamed += QString::fromStdString(reader.feed(answer.substr(at, step)));
            QCOMPARE(streamed, expected);
            QVERIFY(reader.noteFinished());
        }
    }

    void mergeMarksDisagreementsForHumanReview()
    {
        const Document d = contract();
        const QList<Clause> clauses = segmentClauses(d);
        const Finding law = fastFinding(d, clauses, "Governing Law", "governed by the laws");
        const Finding exclusivity
            = fastFinding(d, clauses, "Exclusivity", "exclusively from Supplier");
        const Finding insurance = fastFinding(d, clauses, "Insurance", "liability insurance");
        const Finding untouched = fastFinding(d, clauses, "Audit Rights", "audit Supplier's books");
        const QList<Finding> fast { law, exclusivity, insurance, untouched };
        ModelReviewResult model;
        model.plan = planQuestions(d, clauses, fast, categoryGroups());
        auto passageOf = [&](const Finding& f) {
            for (const Passage& p : model.plan.passages)
                if (p.start <= f.start && p.end >= f.end)
                    return p.id;
            return -1;
        };
        const ModelQuestion* lawQ = questionOf(model.plan, "Governing Law");
        const ModelQuestion* compQ = questionOf(model.plan, "Exclusivity");
        const ModelQuestion* protQ = questionOf(model.plan, "Insurance");
        QVERIFY(lawQ && compQ && protQ);
        // Agreement on the law, disagreement on exclusivity (the model says absent), and a
        // different place for insurance (the model points at the law passage).
        auto answerTo = [](int id, const QString& note) {
            QuestionAnswer a;
            a.questionId = id;
            a.answered = true;
            a.note = note;
            return a;
        };
        QuestionAnswer lawA = answerTo(lawQ->id, "Texas law.");
        lawA.verdicts.append({ "Governing Law", true, { passageOf(law) }, Risk::Medium,
            QJsonObject { { "law", "Texas" } }, {} });
        QuestionAnswer compA = answerTo(compQ->id, "No exclusivity.");
        for (const CategoryQuestion& c : compQ->categories)
            compA.verdicts.append({ c.category, false, {}, Risk::Low, {}, {} });
        QuestionAnswer protA = answerTo(protQ->id, "Insurance elsewhere.");
        protA.verdicts.append({ "Insurance", true, { passageOf(law) }, Risk::Low, {}, {} });
        model.answers = { lawA, compA, protA };
        for (const QuestionAnswer& a : model.answers)
            model.findings.append(findingsFromAnswer(d, model.plan, a, fast));

        const QList<Finding> merged = mergeFindings(fast, model);
        int lawCount = 0;
        for (const Finding& f : merged) {
            if (f.category == "Governing Law") {
                ++lawCount;
                QCOMPARE(f.source, QString("llm"));
                QVERIFY(!f.needsHumanReview);
                QCOMPARE(f.rationale, QString("Texas law."));
                QCOMPARE(f.start, law.start); // the fast head's precise span
            } else if (f.category == "Exclusivity") {
                QCOMPARE(f.source, QString("fast"));
                QVERIFY(f.needsHumanReview);
                QVERIFY(f.rationale.contains("No exclusivity."));
            } else if (f.category == "Insurance" && f.source == "fast") {
                QVERIFY(f.needsHumanReview);
            } else if (f.category == "Insurance") {
                QVERIFY(f.needsHumanReview); // the model alone
                QCOMPARE(f.risk, Risk::Low);
            } else if (f.category == "Audit Rights") {
                QVERIFY(!f.needsHumanReview);
                QCOMPARE(f.source, QString("fast"));
            }
        }
        QCOMPARE(lawCount, 1);
        QCOMPARE(merged.size(), fast.size() + 1);
    }
};

QTEST_MAIN(LlmReviewTest)
#include "llm_review_test.moc"
