// Playbooks: the default one loads, errors name the file, the rule and the field, and the
// rules set each finding's risk.
#include "app/playbook/playbook.h"

#include <QJsonArray>
#include <QtTest>

using namespace cw;

namespace {
QString errorOf(const QByteArray& yaml)
{
    auto book = parsePlaybook(yaml, "firm.yaml");
    return book.ok() ? QString() : QString::fromStdString(book.error().message);
}

Finding finding(const QString& category, const QJsonObject& fields = {})
{
    Finding f;
    f.category = category;
    f.fields = fields;
    return f;
}
} // namespace

class PlaybookTest : public QObject {
    Q_OBJECT
private slots:
    void loadsTheDefaultPlaybook()
    {
        auto book = loadPlaybook(QStringLiteral(CW_SOURCE_DIR "/resources/playbooks/default.yaml"));
        QVERIFY2(book.ok(), book.ok() ? "" : book.error().message.c_str());
        QVERIFY(book->rules.size() >= 10);
        QVERIFY(book->expected.contains("Governing Law"));
    }

    void readsPreferredAndFallbackWording()
    {
        auto book
            = parsePlaybook("name: x\nrules:\n  - id: cap\n    category: Cap On Liability\n"
                            "    risk: high\n    message: m\n"
                            "    preferred_text: \"Each party's liability is capped.\"\n"
                            "    fallback_text: |\n      Liability is capped at twice the fees.\n",
                "firm.yaml");
        QVERIFY2(book.ok(), book.ok() ? "" : book.error().message.c_str());
        QCOMPARE(
            book->rules.front().preferredText, QStringLiteral("Each party's liability is capped."));
        QCOMPARE(book->rules.front().fallbackText,
            QStringLiteral("Liability is capped at twice the fees."));
        const QString empty = errorOf("name: x\nrules:\n  - id: cap\n    category: Insurance\n"
                                      "    risk: high\n    message: m\n    preferred_text: \"\"\n");
        QVERIFY(empty.contains("rule 1 (cap)") && empty.contains("'preferred_text'"));
        const QString list = errorOf("name: x\nrules:\n  - id: cap\n    category: Insurance\n"
                                     "    risk: high\n    message: m\n    fallback_text: [a]\n");
        QVERIFY(list.contains("'fallback_text' must be text"));
        // Every position of the bundled playbook that a lawyer would redraft has wording.
        auto bundled
            = loadPlaybook(QStringLiteral(CW_SOURCE_DIR "/resources/playbooks/default.yaml"));
        QVERIFY(bundled.ok());
        int worded = 0;
        for (const PlaybookRule& r : bundled->rules)
            worded += !r.preferredText.isEmpty();
        QVERIFY(worded >= 12);
    }

    void errorsNameFileRuleAndField()
    {
        const QString badRisk
            = errorOf("name: x\nrules:\n  - id: cap\n    category: Cap On Liability\n"
                      "    risk: severe\n    message: m\n");
        QVERIFY(badRisk.contains("firm.yaml"));
        QVERIFY(badRisk.contains("rule 1 (cap)"));
        QVERIFY(badRisk.contains("'risk'"));
        const QString badCategory = errorOf("name: x\nrules:\n  - id: a\n    category: Liability\n"
                                            "    risk: high\n    message: m\n");
        QVERIFY(badCategory.contains("'category'"));
        QVERIFY(badCategory.contains("Liability"));
        const QString missingMax
            = errorOf("name: x\nrules:\n  - id: nc\n    category: Non-Compete\n"
                      "    check: max_field\n    field: duration_days\n    risk: high\n"
                      "    message: m\n");
        QVERIFY(missingMax.contains("'max'"));
        QVERIFY(errorOf("name: x\nrules: [\n").contains("firm.yaml"));
        QVERIFY(errorOf("rules: []\n").contains("'name'"));
        const QString duplicate
            = errorOf("name: x\nrules:\n  - {id: a, category: Insurance, risk: low, message: m}\n"
                      "  - {id: a, category: Insurance, risk: low, message: m}\n");
        QVERIFY(duplicate.contains("rule 2"));
        QVERIFY(!loadPlaybook("/nonexistent/p.yaml").ok());
    }

    void rulesSetRiskAndSummary()
    {
        auto book = parsePlaybook("name: firm\nexpected: [Insurance, Governing Law]\nrules:\n"
                                  "  - {id: cap12, category: Cap On Liability, check: max_field, "
                                  "field: cap_months_of_fees, max: 12,"
                                  " risk: high, message: cap above 12 months}\n"
                                  "  - {id: notice60, category: Notice Period To Terminate "
                                  "Renewal, check: min_field, field: notice_days,"
                                  " min: 60, risk: medium, message: short notice}\n"
                                  "  - {id: law, category: Governing Law, check: one_of, field: "
                                  "law, values: [New York, Delaware],"
                                  " risk: medium, message: law not accepted}\n",
            "firm.yaml");
        QVERIFY(book.ok());
        Review review;
        review.findings = { finding("Cap On Liability", { { "cap_months_of_fees", 24 } }),
            finding("Cap On Liability", { { "cap_months_of_fees", 12 } }),
            finding("Notice Period To Terminate Renewal", { { "notice_days", 30 } }),
            finding("Governing Law", { { "law", "Texas" } }),
            finding("Governing Law", { { "law", "new york" } }),
            // A clause that chooses two laws: the second is outside the list.
            finding("Governing Law",
                { { "law", "New York" }, { "laws", QJsonArray { "New York", "Switzerland" } } }),
            finding("Governing Law",
                { { "law", "New York" }, { "laws", QJsonArray { "New York", "Delaware" } } }) };
        applyPlaybook(*book, review);
        QCOMPARE(review.findings[0].risk, Risk::High);
        QCOMPARE(review.findings[0].ruleId, QString("cap12"));
        QCOMPARE(review.findings[1].risk, Risk::Low);
        QVERIFY(review.findings[1].ruleId.isEmpty());
        QCOMPARE(review.findings[2].risk, Risk::Medium);
        QCOMPARE(review.findings[3].risk, Risk::Medium);
        QCOMPARE(review.findings[4].risk, Risk::Low);
        QCOMPARE(review.findings[5].risk, Risk::Medium);
        QCOMPARE(review.findings[6].risk, Risk::Low);
        QCOMPARE(review.summary.high, 1);
        QCOMPARE(review.summary.missingCategories, QStringList { "Insurance" });
        QVERIFY(review.summary.text.contains("Insurance"));
    }
};

QTEST_MAIN(PlaybookTest)
#include "playbook_test.moc"
