#include "app/history/history_database.h"
#include "app/history/history_store.h"
#include "tests/app/report/sample_review.h"

#include <QCoroTask>
#include <QEventLoop>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <optional>
#include <sqlite3.h>

using namespace cw;

namespace {

std::unique_ptr<HistoryDatabase> openOrFail(const QString& path)
{
    auto opened = HistoryDatabase::open(path);
    if (!opened) {
        qWarning("%s", opened.error().message.c_str());
        return nullptr;
    }
    return std::move(opened.value());
}

qint64 scalar(HistoryDatabase& db, const char* sql)
{
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db.handle(), sql, -1, &stmt, nullptr);
    const qint64 value = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
    sqlite3_finalize(stmt);
    return value;
}

// Runs the event loop until the task finishes (QCoro::waitFor needs a default-constructible
// result, which cw::Result is not).
template <typename T> T finish(QCoro::Task<T>&& task)
{
    std::optional<T> result;
    QEventLoop loop;
    auto runner = [&](QCoro::Task<T> inner) -> QCoro::Task<> {
        result.emplace(co_await inner);
        loop.quit();
    };
    QCoro::Task<> running = runner(std::move(task));
    if (!result)
        loop.exec();
    return std::move(*result);
}

QString errorText(const Error& error)
{
    return QString::fromStdString(error.message);
}

} // namespace

class HistoryDatabaseTest : public QObject {
    Q_OBJECT
private slots:
    void init()
    {
        QVERIFY(m_dir.isValid());
        m_path = m_dir.filePath(QStringLiteral("h%1.sqlite").arg(++m_count));
    }
    void opensInWalModeWithForeignKeys();
    void savesAndLoadsEveryField();
    void listsNewestFirstWithCountsAndPages();
    void sharesDocumentsAndDeletesOrphans();
    void searchesContractTextAndFindings();
    void searchesChineseSubstrings();
    void ranksCommonWordsAmongTheNewestMatches();
    void fullDiskLosesOnlyTheReviewBeingSaved();
    void editKeepsTheOriginalAndLogsEveryEdit();
    void reportsClearErrors();
    void refusesForeignAndNewerDatabases();
    void asyncStoreWorksOffTheCallerThread();

private:
    QTemporaryDir m_dir;
    QString m_path;
    int m_count = 0;
};

void HistoryDatabaseTest::opensInWalModeWithForeignKeys()
{
    auto db = openOrFail(m_dir.path() + "/nested/folder/history.sqlite");
    QVERIFY(db);
    QCOMPARE(db->schemaVersion(), HistoryDatabase::kSchemaVersion);
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db->handle(), "PRAGMA journal_mode", -1, &stmt, nullptr);
    QCOMPARE(sqlite3_step(stmt), SQLITE_ROW);
    QCOMPARE(QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))),
        QStringLiteral("wal"));
    sqlite3_finalize(stmt);
    QCOMPARE(scalar(*db, "PRAGMA foreign_keys"), 1);
    QCOMPARE(db->integrityCheck().value(), QStringLiteral("ok"));
}

void HistoryDatabaseTest::savesAndLoadsEveryField()
{
    auto db = openOrFail(m_path);
    QVERIFY(db);
    const Review original = testing::sampleReview();
    Result<qint64> id = db->save(original);
    QVERIFY2(id.ok(), id.ok() ? "" : id.error().message.c_str());
    Result<Review> loaded = db->load(id.value());
    QVERIFY(loaded.ok());
    const Review& r = loaded.value();
    QCOMPARE(r.id, id.value());
    QCOMPARE(r.document.path, original.document.path);
    QCOMPARE(r.document.sha256, original.document.sha256);
    QCOMPARE(r.document.title, original.document.title);
    QCOMPARE(r.document.format, original.document.format);
    QCOMPARE(r.document.text, original.document.text);
    QCOMPARE(r.document.pageCount(), 2);
    QCOMPARE(r.document.pages[1].sizePt, original.document.pages[1].sizePt);
    QCOMPARE(r.document.lines.size(), original.document.lines.size());
    QCOMPARE(r.document.lines[1].box, original.document.lines[1].box);
    QCOMPARE(r.document.lines[1].start, original.document.lines[1].start);
    QCOMPARE(r.document.lines[0].bold, true);
    QCOMPARE(r.document.warnings, original.document.warnings);
    QCOMPARE(r.clauses.size(), original.clauses.size());
    QCOMPARE(r.clauses[3].number, QStringLiteral("第三条"));
    QCOMPARE(r.clauses[3].start, original.clauses[3].start);
    QCOMPARE(r.clauses[0].kind, ClauseKind::Preamble);
    QCOMPARE(r.findings.size(), original.findings.size());
    for (int i = 0; i < r.findings.size(); ++i) {
        const Finding& a = r.findings[i];
        const Finding& b = original.findings[i];
        QCOMPARE(a.category, b.category);
        QCOMPARE(a.start, b.start);
        QCOMPARE(a.end, b.end);
        QCOMPARE(a.text, b.text);
        QCOMPARE(a.fields, b.fields);
        QCOMPARE(a.confidence, b.confidence);
        QCOMPARE(a.risk, b.risk);
        QCOMPARE(a.ruleId, b.ruleId);
        QCOMPARE(a.rationale, b.rationale);
        QCOMPARE(a.source, b.source);
        QCOMPARE(a.needsHumanReview, b.needsHumanReview);
        QCOMPARE(a.clauseIndex, b.clauseIndex);
        QCOMPARE(a.userEdited, b.userEdited);
        QCOMPARE(a.originalCategory, b.originalCategory);
        QCOMPARE(a.originalRisk, b.originalRisk);
        QCOMPARE(a.userComment, b.userComment);
        QCOMPARE(a.suggestedText, b.suggestedText);
    }
    QCOMPARE(r.summary.text, original.summary.text);
    QCOMPARE(r.summary.missingCategories, original.summary.missingCategories);
    QCOMPARE(r.summary.high, 1);
    QCOMPARE(r.modelName, original.modelName);
    QCOMPARE(r.playbookName, original.playbookName);
    QCOMPARE(r.settings, original.settings);
    QCOMPARE(r.timingsMs, original.timingsMs);
    QCOMPARE(r.createdAt, original.createdAt);
}

void HistoryDatabaseTest::listsNewestFirstWithCountsAndPages()
{
    auto db = openOrFail(m_path);
    QVERIFY(db);
    QList<qint64> ids;
    for (int i = 0; i < 5; ++i) {
        Review review = testing::sampleReview();
        review.document.title = QStringLiteral("Contract %1").arg(i);
        review.document.path = QStringLiteral("/contracts/%1.pdf").arg(i);
        review.createdAt = review.createdAt.addSecs(60 * i);
        ids.append(db->save(review).value());
    }
    Result<HistoryPage> first = db->list(0, 2);
    QVERIFY(first.ok());
    QCOMPARE(first->total, 5);
    QCOMPARE(first->entries.size(), 2);
    QCOMPARE(first->entries[0].id, ids[4]);
    QCOMPARE(first->entries[0].title, QStringLiteral("Contract 4"));
    QCOMPARE(first->entries[1].id, ids[3]);
    QCOMPARE(first->entries[0].findingCount, 4);
    QCOMPARE(first->entries[0].clauseCount, 4);
    QCOMPARE(first->entries[0].high, 1);
    QCOMPARE(first->entries[0].medium, 1);
    QCOMPARE(first->entries[0].low, 1);
    QCOMPARE(first->entries[0].pageCount, 2);
    QCOMPARE(first->entries[0].modelName, QStringLiteral("Qwen3.6-35B-A3B Q4_K_M"));
    Result<HistoryPage> last = db->list(4, 2);
    QCOMPARE(last->entries.size(), 1);
    QCOMPARE(last->entries[0].id, ids[0]);
    QCOMPARE(db->count().value(), 5);
}

void HistoryDatabaseTest::sharesDocumentsAndDeletesOrphans()
{
    auto db = openOrFail(m_path);
    QVERIFY(db);
    const qint64 a = db->save(testing::sampleReview()).value();
    const qint64 b = db->save(testing::sampleReview()).value();
    QCOMPARE(scalar(*db, "SELECT count(*) FROM documents"), 1);
    QCOMPARE(scalar(*db, "SELECT count(*) FROM findings"), 8);
    QVERIFY(db->remove(a).ok());
    QCOMPARE(scalar(*db, "SELECT count(*) FROM documents"), 1);
    QCOMPARE(scalar(*db, "SELECT count(*) FROM findings"), 4);
    QVERIFY(!db->load(a).ok());
    QVERIFY(db->load(b).ok());
    QVERIFY(db->remove(b).ok());
    QCOMPARE(scalar(*db, "SELECT count(*) FROM documents"), 0);
    QCOMPARE(scalar(*db, "SELECT count(*) FROM clauses"), 0);
    QCOMPARE(scalar(*db, "SELECT count(*) FROM user_edits"), 0);
    QCOMPARE(db->search("Delaware").value().size(), 0); // the FTS index follows deletes
    Result<void> again = db->remove(b);
    QVERIFY(!again.ok());
    QVERIFY(errorText(again.error()).contains("no review with id"));
}

void HistoryDatabaseTest::searchesContractTextAndFindings()
{
    auto db = openOrFail(m_path);
    QVERIFY(db);
    const qint64 id = db->save(testing::sampleReview()).value();
    Review other = testing::sampleReview();
    other.document.path = "/contracts/nda.txt";
    other.document.text = QStringLiteral("Mutual non-disclosure agreement. Governed by Texas law.");
    other.findings.clear();
    other.clauses.clear();
    const qint64 otherId = db->save(other).value();

    Result<QList<HistorySearchHit>> hits = db->search("Delaware");
    QVERIFY(hits.ok());
    QVERIFY(!hits->isEmpty());
    bool contract = false;
    bool finding = false;
    for (const HistorySearchHit& hit : hits.value()) {
        QCOMPARE(hit.reviewId, id);
        contract = contract || (hit.where == "contract" && hit.snippet.contains("[Delaware]"));
        finding = finding || (hit.where == "finding" && hit.findingIndex == 0);
    }
    QVERIFY(contract);
    QVERIFY(finding);
    hits = db->search("texas");
    QCOMPARE(hits->size(), 1);
    QCOMPARE(hits->at(0).reviewId, otherId);
    QCOMPARE(db->search("renew*").value().isEmpty(), false); // prefix query
    QCOMPARE(db->search("\"governing law\" NOT delaware").value().size(), 1);
    // Not FTS5 syntax: searched as plain words instead of failing.
    Result<QList<HistorySearchHit>> plain = db->search("non-disclosure");
    QVERIFY2(plain.ok(), plain.ok() ? "" : plain.error().message.c_str());
    QCOMPARE(plain->size(), 1);
    QVERIFY(!db->search("   ").ok());
}

void HistoryDatabaseTest::searchesChineseSubstrings()
{
    auto db = openOrFail(m_path);
    QVERIFY(db);
    const qint64 english = db->save(testing::sampleReview()).value();
    Review chinese = testing::sampleReview();
    chinese.document.path = QStringLiteral("/contracts/保密协议.pdf");
    chinese.document.sha256 = QStringLiteral("cafe");
    chinese.document.title = QStringLiteral("保密协议");
    chinese.document.text = QStringLiteral(
        "第一条 保密义务\n接收方应对披露方提供的全部保密信息承担保密义务，期限为五年。\n"
        "第二条 适用法律\n本协议适用中华人民共和国法律。");
    chinese.findings.resize(1);
    chinese.findings[0].category = QStringLiteral("Governing Law");
    chinese.findings[0].text = QStringLiteral("本协议适用中华人民共和国法律。");
    chinese.findings[0].start = 0;
    chinese.findings[0].end = 10;
    const qint64 id = db->save(chinese).value();
    QVERIFY(id != english);

    // Three or more characters: the trigram index, inside a run of Chinese text.
    Result<QList<HistorySearchHit>> hits = db->search(QStringLiteral("保密义务"));
    QVERIFY2(hits.ok(), hits.ok() ? "" : hits.error().message.c_str());
    QCOMPARE(hits->size(), 1);
    QCOMPARE(hits->at(0).reviewId, id);
    QCOMPARE(hits->at(0).where, QStringLiteral("contract"));
    QVERIFY2(hits->at(0).snippet.contains(QStringLiteral("[保密义务]")), qPrintable(hits->at(0).snippet));
    // The sample review has a Chinese clause too: its contract and finding match as well.
    hits = db->search(QStringLiteral("人民共和国"));
    QCOMPARE(hits->size(), 4);
    bool finding = false;
    for (const HistorySearchHit& hit : hits.value()) {
        QVERIFY2(hit.snippet.contains(QStringLiteral("[人民共和国]")), qPrintable(hit.snippet));
        finding = finding || (hit.reviewId == id && hit.where == "finding" && hit.findingIndex == 0);
    }
    QVERIFY(finding);
    // One or two characters: LIKE over the newest reviews.
    hits = db->search(QStringLiteral("法律"));
    QVERIFY2(hits.ok(), hits.ok() ? "" : hits.error().message.c_str());
    bool contract = false;
    for (const HistorySearchHit& hit : hits.value()) {
        QVERIFY2(hit.snippet.contains(QStringLiteral("[法律]")), qPrintable(hit.snippet));
        contract = contract || (hit.reviewId == id && hit.where == "contract");
    }
    QVERIFY(contract);
    QVERIFY(hits->size() >= 2); // the contract, its finding (and the sample's Chinese note)
    QCOMPARE(db->search(QStringLiteral("五年 保密")).value().size(), 1); // all terms required
    QCOMPARE(db->search(QStringLiteral("租赁")).value().size(), 0);
    // A Chinese comment on an English finding becomes searchable; deleting removes it.
    FindingEdit edit;
    edit.comment = QStringLiteral("客户要求修改管辖法律");
    QVERIFY(db->editFinding(english, 0, edit).ok());
    QCOMPARE(db->search(QStringLiteral("管辖法律")).value().size(), 1);
    QVERIFY(db->remove(id).ok());
    QVERIFY(db->remove(english).ok());
    QCOMPARE(db->search(QStringLiteral("人民共和国")).value().size(), 0);
    QCOMPARE(db->search(QStringLiteral("管辖法律")).value().size(), 0);
    QCOMPARE(db->integrityCheck().value(), QStringLiteral("ok"));
    QCOMPARE(scalar(*db, "SELECT count(*) FROM documents_cjk WHERE documents_cjk MATCH '\"保密\"'"), 0);
}

void HistoryDatabaseTest::ranksCommonWordsAmongTheNewestMatches()
{
    auto db = openOrFail(m_path);
    QVERIFY(db);
    // 30 reviews whose findings all contain "shall": the limit holds, best ranked first,
    // and each hit has its snippet.
    for (int i = 0; i < 30; ++i) {
        Review r = testing::sampleReview();
        r.document.sha256 = QString::number(i);
        r.document.text = QStringLiteral("The supplier shall deliver. ").repeated(i + 1);
        for (Finding& f : r.findings)
            f.text = QStringLiteral("The supplier shall pay within %1 days.").arg(i);
        QVERIFY(db->save(r).ok());
    }
    Result<QList<HistorySearchHit>> hits = db->search(QStringLiteral("shall"), 10);
    QVERIFY(hits.ok());
    QCOMPARE(hits->size(), 10);
    for (const HistorySearchHit& hit : hits.value())
        QVERIFY2(hit.snippet.contains(QStringLiteral("[shall]")), qPrintable(hit.snippet));
}

void HistoryDatabaseTest::fullDiskLosesOnlyTheReviewBeingSaved()
{
    auto db = openOrFail(m_path);
    QVERIFY(db);
    const qint64 kept = db->save(testing::sampleReview()).value();
    // The disk fills up: SQLite may not grow the file past its present size.
    const qint64 pages = scalar(*db, "PRAGMA page_count");
    QVERIFY(scalar(*db, QByteArray("PRAGMA max_page_count = " + QByteArray::number(pages)).constData()) > 0);
    Review big = testing::sampleReview();
    big.document.sha256 = QStringLiteral("big");
    big.document.text = QStringLiteral("Delivery terms and conditions. ").repeated(20000);
    Result<qint64> saved = db->save(big);
    QVERIFY(!saved.ok());
    QVERIFY2(errorText(saved.error()).contains(m_path), saved.error().message.c_str());
    QVERIFY2(errorText(saved.error()).contains(QStringLiteral("full")), saved.error().message.c_str());
    db.reset();
    auto reopened = openOrFail(m_path);
    QVERIFY(reopened);
    QCOMPARE(reopened->integrityCheck().value(), QStringLiteral("ok"));
    QCOMPARE(reopened->count().value(), 1);
    QCOMPARE(reopened->load(kept).value().findings.size(), testing::sampleReview().findings.size());
}

void HistoryDatabaseTest::editKeepsTheOriginalAndLogsEveryEdit()
{
    auto db = openOrFail(m_path);
    QVERIFY(db);
    const qint64 id = db->save(testing::sampleReview()).value();
    FindingEdit edit;
    edit.risk = Risk::High;
    edit.comment = QStringLiteral("Delaware is not acceptable for this client");
    QVERIFY(db->editFinding(id, 0, edit).ok());
    FindingEdit second;
    second.category = QStringLiteral("Jurisdiction");
    QVERIFY(db->editFinding(id, 0, second).ok());

    const Review r = db->load(id).value();
    QCOMPARE(r.findings[0].category, QStringLiteral("Jurisdiction"));
    QCOMPARE(r.findings[0].risk, Risk::High);
    QVERIFY(r.findings[0].userEdited);
    QCOMPARE(r.findings[0].originalCategory, QStringLiteral("Governing Law"));
    QCOMPARE(r.findings[0].originalRisk, Risk::Low);
    QCOMPARE(
        r.findings[0].userComment, QStringLiteral("Delaware is not acceptable for this client"));
    QVERIFY(!r.findings[2].userEdited);
    QCOMPARE(scalar(*db, "SELECT count(*) FROM user_edits"), 2);
    const HistoryEntry entry = db->list(0, 1).value().entries[0];
    QCOMPARE(entry.high, 2);
    QCOMPARE(entry.low, 0);
    QVERIFY(!db->search("acceptable").value().isEmpty()); // comments are searchable

    Result<void> bad = db->editFinding(id, 99, edit);
    QVERIFY(!bad.ok());
    QVERIFY(errorText(bad.error()).contains("has no finding 99"));
    FindingEdit empty;
    empty.category = QStringLiteral("  ");
    QVERIFY(!db->editFinding(id, 0, empty).ok());
}

void HistoryDatabaseTest::reportsClearErrors()
{
    auto db = openOrFail(m_path);
    QVERIFY(db);
    Result<Review> missing = db->load(12345);
    QVERIFY(!missing.ok());
    QVERIFY(errorText(missing.error()).contains("no review with id 12345"));
    auto unwritable = HistoryDatabase::open("/proc/clausewright/history.sqlite");
    QVERIFY(!unwritable.ok());
    QVERIFY(errorText(unwritable.error()).startsWith("/proc/clausewright/history.sqlite"));
    auto folder = HistoryDatabase::open(m_dir.path());
    QVERIFY(!folder.ok());
    QVERIFY(errorText(folder.error()).contains("not a file"));
}

void HistoryDatabaseTest::refusesForeignAndNewerDatabases()
{
    QFile junk(m_path);
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write(QByteArray(8192, 'x'));
    junk.close();
    auto notDb = HistoryDatabase::open(m_path);
    QVERIFY(!notDb.ok());
    QVERIFY(errorText(notDb.error()).contains("not a Clausewright history database"));

    const QString foreign = m_path + ".foreign";
    sqlite3* raw = nullptr;
    sqlite3_open(foreign.toUtf8().constData(), &raw);
    sqlite3_exec(raw, "CREATE TABLE accounts(id INTEGER)", nullptr, nullptr, nullptr);
    sqlite3_close(raw);
    auto other = HistoryDatabase::open(foreign);
    QVERIFY(!other.ok());
    QVERIFY(errorText(other.error()).contains("another program"));

    const QString newer = m_path + ".newer";
    QVERIFY(openOrFail(newer));
    sqlite3_open(newer.toUtf8().constData(), &raw);
    sqlite3_exec(raw, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
    sqlite3_close(raw);
    auto future = HistoryDatabase::open(newer);
    QVERIFY(!future.ok());
    QVERIFY(errorText(future.error()).contains("newer Clausewright"));
}

void HistoryDatabaseTest::asyncStoreWorksOffTheCallerThread()
{
    HistoryStore store(m_path);
    QSignalSpy saved(&store, &HistoryStore::reviewSaved);
    QSignalSpy removed(&store, &HistoryStore::reviewRemoved);
    QSignalSpy edited(&store, &HistoryStore::findingEdited);
    QVERIFY(finish(store.open()).ok());
    Result<qint64> id = finish(store.save(testing::sampleReview()));
    QVERIFY(id.ok());
    QCOMPARE(saved.count(), 1);
    QCOMPARE(saved.at(0).at(0).toLongLong(), id.value());
    Result<HistoryPage> page = finish(store.list(0, 10));
    QCOMPARE(page->total, 1);
    Result<Review> review = finish(store.load(id.value()));
    QCOMPARE(review->findings.size(), 4);
    FindingEdit edit;
    edit.comment = QStringLiteral("checked");
    QVERIFY(finish(store.editFinding(id.value(), 1, edit)).ok());
    QCOMPARE(edited.count(), 1);
    QCOMPARE(finish(store.search("Delaware"))->isEmpty(), false);
    QVERIFY(!finish(store.load(999)).ok());
    QVERIFY(finish(store.remove(id.value())).ok());
    QCOMPARE(removed.count(), 1);

    // A store whose database cannot open says why on every call.
    HistoryStore broken("/proc/clausewright/history.sqlite");
    Result<HistoryPage> failed = finish(broken.list(0, 10));
    QVERIFY(!failed.ok());
    QVERIFY(errorText(failed.error()).contains("/proc/clausewright"));
}

QTEST_MAIN(HistoryDatabaseTest)
#include "history_database_test.moc"
