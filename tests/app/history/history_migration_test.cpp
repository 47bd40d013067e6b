// Builds a database at every earlier schema version, fills it the way that version's code
// wrote rows, and checks that opening it migrates to the latest version keeping every row.
#include "app/history/history_database.h"
#include "app/history/history_schema.h"

#include <QTemporaryDir>
#include <QtTest>
#include <sqlite3.h>

using namespace cw;

namespace {

bool exec(sqlite3* db, const char* sql)
{
    char* message = nullptr;
    const bool ok = sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK;
    if (!ok)
        qWarning("%s", message);
    sqlite3_free(message);
    return ok;
}

// Rows as version 1 stored them: one document, one review (created 2026-01-02), two clauses,
// two findings.
const char* const kVersion1Rows = R"sql(
INSERT INTO documents (id, path, sha256, title, pages, format, text, layout)
    VALUES (1, '/old/lease.pdf', 'abc123', 'Office Lease', 3, 'pdf',
            'LEASE. 1. Governing Law. Laws of Ontario govern. 2. Term. Five years.', NULL);
INSERT INTO reviews (id, document_id, model, playbook, settings, timings, summary, missing,
                     created_at)
    VALUES (7, 1, 'Qwen3-30B-A3B', 'landlord', '{"device":"cpu"}', '{"heads":12}',
            'Fine.', '["Cap on Liability"]', 1767312000000);
INSERT INTO clauses VALUES (7, 0, -1, 0, 'numbered', '1.', 'Governing Law', 7, 47, 47, 1);
INSERT INTO clauses VALUES (7, 1, -1, 0, 'numbered', '2.', 'Term', 47, 68, 68, 2);
INSERT INTO findings (id, review_id, idx, clause_index, category, start, end, page, text,
                      fields, confidence, risk, rule, rationale, source, needs_human_review)
    VALUES (1, 7, 0, 0, 'Governing Law', 26, 46, 1, 'Laws of Ontario govern',
            '{"law":"Ontario"}', 0.9, 'medium', 'law.foreign', 'Foreign law', 'fast', 0);
INSERT INTO findings (id, review_id, idx, clause_index, category, start, end, page, text,
                      fields, confidence, risk, rule, rationale, source, needs_human_review)
    VALUES (2, 7, 1, 1, 'Expiration Date', 56, 67, 2, 'Five years', '{"years":5}', 0.8,
            'high', '', 'Long term', 'llm', 1);
)sql";

// Version 2 added user edits: finding 2 was edited from Expiration Date/high to Renewal
// Term/low with a comment.
const char* const kVersion2Rows = R"sql(
UPDATE findings SET category = 'Renewal Term', risk = 'low', original_category =
    'Expiration Date', original_risk = 'high', user_comment = 'checked with client'
    WHERE id = 2;
INSERT INTO user_edits (finding_id, edited_at, old_category, new_category, old_risk, new_risk,
                        comment)
    VALUES (2, 1767398400000, 'Expiration Date', 'Renewal Term', 'high', 'low',
            'checked with client');
UPDATE reviews SET clause_count = 2, finding_count = 2, high = 0, medium = 1, low = 1;
)sql";

// A Chinese contract as any version stored it (version 4 indexes it for substring search).
const char* const kChineseRows = R"sql(
INSERT INTO documents (id, path, sha256, title, pages, format, text, layout)
    VALUES (2, '/old/租赁合同.pdf', 'def456', '租赁合同', 1, 'pdf',
            '第一条 租赁期限为三年。第二条 本合同适用中华人民共和国法律。', NULL);
INSERT INTO reviews (id, document_id, model, playbook, settings, timings, summary, missing,
                     created_at)
    VALUES (8, 2, '', 'default', '{}', '{}', '', '[]', 1767312000001);
INSERT INTO findings (id, review_id, idx, clause_index, category, start, end, page, text,
                      fields, confidence, risk, rule, rationale, source, needs_human_review)
    VALUES (3, 8, 0, 0, 'Governing Law', 14, 30, 1, '本合同适用中华人民共和国法律',
            '{}', 0.9, 'low', '', '', 'fast', 0);
)sql";

} // namespace

class HistoryMigrationTest : public QObject {
    Q_OBJECT
private slots:
    void migratesEveryEarlierVersion_data();
    void migratesEveryEarlierVersion();
    void everyVersionHasAScript();
};

void HistoryMigrationTest::everyVersionHasAScript()
{
    for (int v = 1; v <= HistoryDatabase::kSchemaVersion; ++v)
        QVERIFY(history::migrationScript(v) != nullptr);
    QVERIFY(history::migrationScript(HistoryDatabase::kSchemaVersion + 1) == nullptr);
}

void HistoryMigrationTest::migratesEveryEarlierVersion_data()
{
    QTest::addColumn<int>("version");
    for (int v = 1; v < HistoryDatabase::kSchemaVersion; ++v)
        QTest::addRow("from version %d", v) << v;
}

void HistoryMigrationTest::migratesEveryEarlierVersion()
{
    QFETCH(int, version);
    QTemporaryDir dir;
    const QString path = dir.filePath("old.sqlite");
    {
        auto old = HistoryDatabase::openAtVersion(path, version);
        QVERIFY2(old.ok(), old.ok() ? "" : old.error().message.c_str());
        QCOMPARE(old.value()->schemaVersion(), version);
        QVERIFY(exec(old.value()->handle(), kVersion1Rows));
        if (version >= 2)
            QVERIFY(exec(old.value()->handle(), kVersion2Rows));
        QVERIFY(exec(old.value()->handle(), kChineseRows));
    }

    auto opened = HistoryDatabase::open(path);
    QVERIFY2(opened.ok(), opened.ok() ? "" : opened.error().message.c_str());
    HistoryDatabase& db = *opened.value();
    QCOMPARE(db.schemaVersion(), HistoryDatabase::kSchemaVersion);
    QCOMPARE(db.integrityCheck().value(), QStringLiteral("ok"));

    Result<HistoryPage> page = db.list(0, 10);
    QVERIFY(page.ok());
    QCOMPARE(page->total, 2);
    const HistoryEntry& entry = page->entries[1];
    QCOMPARE(entry.id, 7);
    QCOMPARE(entry.title, QStringLiteral("Office Lease"));
    QCOMPARE(entry.clauseCount, 2); // computed by the version 2 migration when absent
    QCOMPARE(entry.findingCount, 2);
    QCOMPARE(entry.medium, 1);
    QCOMPARE(entry.high, version >= 2 ? 0 : 1);

    Result<Review> review = db.load(7);
    QVERIFY2(review.ok(), review.ok() ? "" : review.error().message.c_str());
    QCOMPARE(review->document.text,
        QStringLiteral("LEASE. 1. Governing Law. Laws of Ontario govern. 2. Term. Five years."));
    QCOMPARE(review->document.pageCount(), 0); // version 1 stored no layout here
    QCOMPARE(review->modelName, QStringLiteral("Qwen3-30B-A3B"));
    QCOMPARE(review->settings.value("device").toString(), QStringLiteral("cpu"));
    QCOMPARE(review->timingsMs.value("heads"), 12);
    QCOMPARE(review->summary.missingCategories, QStringList { "Cap on Liability" });
    QCOMPARE(review->createdAt.toMSecsSinceEpoch(), 1767312000000);
    QCOMPARE(review->clauses.size(), 2);
    QCOMPARE(review->clauses[1].heading, QStringLiteral("Term"));
    QCOMPARE(review->findings.size(), 2);
    QCOMPARE(review->findings[0].fields.value("law").toString(), QStringLiteral("Ontario"));
    const Finding& edited = review->findings[1];
    if (version >= 2) {
        QVERIFY(edited.userEdited);
        QCOMPARE(edited.category, QStringLiteral("Renewal Term"));
        QCOMPARE(edited.originalCategory, QStringLiteral("Expiration Date"));
        QCOMPARE(edited.originalRisk, Risk::High);
        QCOMPARE(edited.userComment, QStringLiteral("checked with client"));
    } else {
        QVERIFY(!edited.userEdited);
        QCOMPARE(edited.category, QStringLiteral("Expiration Date"));
    }

    // The FTS index built by the version 3 migration covers the old rows.
    Result<QList<HistorySearchHit>> hits = db.search("ontario");
    QVERIFY(hits.ok());
    QCOMPARE(hits->size(), 2); // the contract text and the finding
    QCOMPARE(hits->at(0).reviewId, 7);

    // The trigram index built by the version 4 migration finds Chinese substrings.
    Result<QList<HistorySearchHit>> chinese = db.search(QStringLiteral("人民共和国"));
    QVERIFY2(chinese.ok(), chinese.ok() ? "" : chinese.error().message.c_str());
    QCOMPARE(chinese->size(), 2);
    QCOMPARE(chinese->at(0).reviewId, 8);
    QCOMPARE(db.search(QStringLiteral("三年")).value().size(), 1);
    QVERIFY(db.remove(8).ok());
    QCOMPARE(db.search(QStringLiteral("人民共和国")).value().size(), 0);

    // The migrated database takes new reviews and edits.
    FindingEdit edit;
    edit.risk = Risk::Low;
    QVERIFY(db.editFinding(7, 0, edit).ok());
    QCOMPARE(db.load(7)->findings[0].originalRisk, Risk::Medium);
    QVERIFY(db.remove(7).ok());
    QCOMPARE(db.count().value(), 0);
    QCOMPARE(db.search("ontario")->size(), 0);
}

QTEST_MAIN(HistoryMigrationTest)
#include "history_migration_test.moc"
