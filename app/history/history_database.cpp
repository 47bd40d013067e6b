#include "app/history/history_database.h"

#include "app/history/document_layout_codec.h"
#include "app/history/history_schema.h"
#include "app/history/sqlite_statement.h"
#include "app/report/report_text.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QStandardPaths>
#include <sqlite3.h>

namespace cw {

using history::SqlStatement;
using history::SqlTransaction;

namespace {

QString compactJson(const QJsonObject& object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

QJsonObject parseObject(const QString& json)
{
    return QJsonDocument::fromJson(json.toUtf8()).object();
}

DocumentFormat formatFromName(const QString& name)
{
    if (name == QLatin1String("pdf"))
        return DocumentFormat::Pdf;
    if (name == QLatin1String("docx"))
        return DocumentFormat::Docx;
    return DocumentFormat::PlainText;
}

ClauseKind clauseKindFromName(const QString& name)
{
    static const QStringList kinds { "preamble", "numbered", "heading", "definition",
        "attachment" };
    const qsizetype index = kinds.indexOf(name);
    return index < 0 ? ClauseKind::Numbered : ClauseKind(index);
}

} // namespace

HistoryDatabase::HistoryDatabase(sqlite3* db, QString path)
    : m_db(db)
    , m_path(std::move(path))
{
}

HistoryDatabase::~HistoryDatabase()
{
    sqlite3_close_v2(m_db);
}

QString HistoryDatabase::defaultPath()
{
    // The GUI's AppDataLocation (organisation and application "Clausewright"), spelled out so
    // the CLI, whatever its own application name, opens the same file.
    const QString base = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
    return base + QStringLiteral("/Clausewright/Clausewright/history.sqlite");
}

Result<std::unique_ptr<HistoryDatabase>> HistoryDatabase::open(const QString& path)
{
    return openImpl(path, kSchemaVersion);
}

Result<std::unique_ptr<HistoryDatabase>> HistoryDatabase::openAtVersion(
    const QString& path, int version)
{
    if (version < 1 || version > kSchemaVersion)
        return makeError("history: no schema version " + std::to_string(version));
    return openImpl(path, version);
}

Error HistoryDatabase::sqlError(const QString& what) const
{
    const int code = sqlite3_errcode(m_db);
    if (code == SQLITE_FULL || sqlite3_extended_errcode(m_db) == SQLITE_IOERR_WRITE)
        return makeError(m_path.toStdString() + ": " + what.toStdString()
            + ": the disk is full or the file cannot grow (free some space and try again; the "
              "reviews already saved are kept)");
    return makeError(
        m_path.toStdString() + ": " + what.toStdString() + ": " + sqlite3_errmsg(m_db));
}

Result<void> HistoryDatabase::exec(const char* sql)
{
    char* message = nullptr;
    if (sqlite3_exec(m_db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
        const std::string text = message ? message : sqlite3_errmsg(m_db);
        sqlite3_free(message);
        return makeError(m_path.toStdString() + ": " + text);
    }
    return {};
}

int HistoryDatabase::schemaVersion() const
{
    SqlStatement query(m_db, "PRAGMA user_version");
    return query.step() == SQLITE_ROW ? query.integer(0) : -1;
}

Result<std::unique_ptr<HistoryDatabase>> HistoryDatabase::openImpl(const QString& path, int version)
{
    const std::string name = path.toStdString();
    if (path.isEmpty())
        return makeError("history: no database path given");
    const QFileInfo info(path);
    if (info.exists() && !info.isFile())
        return makeError(name + ": not a file");
    if (!QDir().mkpath(info.absolutePath()))
        return makeError(name + ": cannot create the folder " + info.absolutePath().toStdString());
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.toUtf8().constData(), &raw,
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        const std::string reason = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
        sqlite3_close_v2(raw);
        return makeError(name + ": cannot open the history database: " + reason);
    }
    std::unique_ptr<HistoryDatabase> self(new HistoryDatabase(raw, path));
    sqlite3_busy_timeout(raw, 5000);

    // Statements in blocks: a live statement holds a read transaction, and WAL mode
    // cannot be switched on inside one.
    {
        SqlStatement versionQuery(raw, "PRAGMA user_version");
        if (versionQuery.step() != SQLITE_ROW)
            return makeError(name + ": not a Clausewright history database ("
                + versionQuery.error().toStdString() + ")");
        const int current = versionQuery.integer(0);
        SqlStatement appQuery(raw, "PRAGMA application_id");
        const int application = appQuery.step() == SQLITE_ROW ? appQuery.integer(0) : 0;
        SqlStatement tables(raw, "SELECT count(*) FROM sqlite_master");
        const qint64 tableCount = tables.step() == SQLITE_ROW ? tables.int64(0) : 0;
        if ((current > 0 && application != history::kApplicationId)
            || (current == 0 && tableCount > 0))
            return makeError(name
                + ": an SQLite database of another program, not a Clausewright "
                  "history; choose another file");
        if (current > kSchemaVersion)
            return makeError(name + ": written by a newer Clausewright (schema version "
                + std::to_string(current) + ", this build knows up to "
                + std::to_string(kSchemaVersion) + ")");
    }
    {
        SqlStatement wal(raw, "PRAGMA journal_mode = WAL");
        if (wal.step() != SQLITE_ROW)
            return makeError(
                name + ": cannot write the history database: " + wal.error().toStdString());
        if (wal.text(0) != QLatin1String("wal"))
            return makeError(name + ": cannot switch to WAL mode (journal mode is "
                + wal.text(0).toStdString() + ")");
    }
    // NORMAL is durable across a crash or kill of the process in WAL mode; only a power
    // loss can drop the last commits, never corrupt the file.
    if (auto pragmas = self->exec("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;");
        !pragmas)
        return pragmas.error();
    if (auto migrated = self->migrateTo(version); !migrated)
        return migrated.error();
    return self;
}

Result<void> HistoryDatabase::migrateTo(int version)
{
    for (int next = schemaVersion() + 1; next <= version; ++next) {
        SqlTransaction transaction(m_db);
        if (!transaction.began())
            return sqlError(QStringLiteral("cannot start migration to schema %1").arg(next));
        if (auto script = exec(history::migrationScript(next)); !script)
            return makeError(
                script.error().message + " (migrating to schema " + std::to_string(next) + ")");
        const QByteArray pragma = "PRAGMA user_version = " + QByteArray::number(next);
        if (auto set = exec(pragma.constData()); !set)
            return set.error();
        if (!transaction.commit())
            return sqlError(QStringLiteral("cannot commit migration to schema %1").arg(next));
    }
    return {};
}

Result<qint64> HistoryDatabase::documentIdFor(const Document& document)
{
    SqlStatement find(m_db,
        "SELECT id FROM documents WHERE sha256 = ?1 AND path = ?2 AND "
        "text = ?3 LIMIT 1");
    find.bind(1, document.sha256).bind(2, document.path).bind(3, document.text);
    const int found = find.step();
    if (found == SQLITE_ROW)
        return find.int64(0);
    if (found != SQLITE_DONE)
        return sqlError(QStringLiteral("cannot look up the document"));
    SqlStatement insert(m_db,
        "INSERT INTO documents (path, sha256, title, pages, format, text, "
        "layout) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    insert.bind(1, document.path)
        .bind(2, document.sha256)
        .bind(3, document.title)
        .bind(4, document.pageCount())
        .bind(5, report::documentFormatName(document.format))
        .bind(6, document.text)
        .bindBlob(7, history::encodeDocumentLayout(document));
    if (!insert.run())
        return sqlError(QStringLiteral("cannot save the document"));
    return qint64(sqlite3_last_insert_rowid(m_db));
}

Result<void> HistoryDatabase::saveClauses(qint64 reviewId, const QList<Clause>& clauses)
{
    SqlStatement insert(m_db,
        "INSERT INTO clauses (review_id, idx, parent, level, kind, number, "
        "heading, start, end, own_end, page) VALUES "
        "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    for (int i = 0; i < clauses.size(); ++i) {
        const Clause& c = clauses[i];
        insert.reset();
        insert.bind(1, reviewId)
            .bind(2, i)
            .bind(3, c.parent)
            .bind(4, c.level)
            .bind(5, report::clauseKindName(c.kind))
            .bind(6, c.number)
            .bind(7, c.heading)
            .bind(8, qint64(c.start))
            .bind(9, qint64(c.end))
            .bind(10, qint64(c.ownEnd))
            .bind(11, c.page);
        if (!insert.run())
            return sqlError(QStringLiteral("cannot save clause %1").arg(i));
    }
    return {};
}

Result<void> HistoryDatabase::saveFindings(qint64 reviewId, const QList<Finding>& findings)
{
    SqlStatement insert(m_db,
        "INSERT INTO findings (review_id, idx, clause_index, category, start, end, page, "
        "text, fields, confidence, risk, rule, rationale, source, needs_human_review, "
        "original_category, original_risk, user_comment, suggested_text) VALUES (?1, ?2, ?3, "
        "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)");
    for (int i = 0; i < findings.size(); ++i) {
        const Finding& f = findings[i];
        insert.reset();
        insert.bind(1, reviewId)
            .bind(2, i)
            .bind(3, f.clauseIndex)
            .bind(4, f.category)
            .bind(5, qint64(f.start))
            .bind(6, qint64(f.end))
            .bind(7, f.page)
            .bind(8, f.text)
            .bind(9, compactJson(f.fields))
            .bind(10, f.confidence.value_or(-1.0)) // -1: no calibrated confidence
            .bind(11, riskName(f.risk))
            .bind(12, f.ruleId)
            .bind(13, f.rationale)
            .bind(14, f.source)
            .bind(15, int(f.needsHumanReview))
            .bind(18, f.userComment)
            .bind(19, f.suggestedText);
        if (f.userEdited)
            insert.bind(16, f.originalCategory).bind(17, riskName(f.originalRisk));
        else
            insert.bindNull(16).bindNull(17);
        if (!insert.run())
            return sqlError(QStringLiteral("cannot save finding %1").arg(i));
    }
    return {};
}

Result<qint64> HistoryDatabase::save(const Review& review)
{
    SqlTransaction transaction(m_db);
    if (!transaction.began())
        return sqlError(QStringLiteral("cannot start saving the review"));
    Result<qint64> documentId = documentIdFor(review.document);
    if (!documentId)
        return documentId.error();
    int counts[4] = { 0, 0, 0, 0 };
    for (const Finding& finding : review.findings)
        ++counts[int(finding.risk)];
    QJsonObject timings;
    for (auto it = review.timingsMs.begin(); it != review.timingsMs.end(); ++it)
        timings.insert(it.key(), it.value());
    const QDateTime created
        = review.createdAt.isValid() ? review.createdAt : QDateTime::currentDateTimeUtc();
    SqlStatement insert(m_db,
        "INSERT INTO reviews (document_id, model, playbook, settings, "
        "timings, summary, missing, created_at, clause_count, "
        "finding_count, high, medium, low) VALUES "
        "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
    insert.bind(1, documentId.value())
        .bind(2, review.modelName)
        .bind(3, review.playbookName)
        .bind(4, compactJson(review.settings))
        .bind(5, compactJson(timings))
        .bind(6, review.summary.text)
        .bind(7,
            QString::fromUtf8(
                QJsonDocument(QJsonArray::fromStringList(review.summary.missingCategories))
                    .toJson(QJsonDocument::Compact)))
        .bind(8, created.toMSecsSinceEpoch())
        .bind(9, int(review.clauses.size()))
        .bind(10, int(review.findings.size()))
        .bind(11, counts[int(Risk::High)])
        .bind(12, counts[int(Risk::Medium)])
        .bind(13, counts[int(Risk::Low)]);
    if (!insert.run())
        return sqlError(QStringLiteral("cannot save the review"));
    const qint64 reviewId = sqlite3_last_insert_rowid(m_db);
    if (auto saved = saveClauses(reviewId, review.clauses); !saved)
        return saved.error();
    if (auto saved = saveFindings(reviewId, review.findings); !saved)
        return saved.error();
    if (m_beforeCommit)
        m_beforeCommit();
    if (!transaction.commit())
        return sqlError(QStringLiteral("cannot commit the review (disk full?)"));
    return reviewId;
}

Result<qint64> HistoryDatabase::count()
{
    SqlStatement query(m_db, "SELECT count(*) FROM reviews");
    if (query.step() != SQLITE_ROW)
        return sqlError(QStringLiteral("cannot count reviews"));
    return query.int64(0);
}

Result<std::optional<qint64>> HistoryDatabase::latestReviewOf(
    const QString& sha256, const QString& playbookName)
{
    SqlStatement query(m_db,
        "SELECT r.id FROM reviews r JOIN documents d ON d.id = r.document_id "
        "WHERE d.sha256 = ?1 AND r.playbook = ?2 ORDER BY r.id DESC LIMIT 1");
    query.bind(1, sha256).bind(2, playbookName);
    const int rc = query.step();
    if (rc == SQLITE_ROW)
        return std::optional<qint64>(query.int64(0));
    if (rc != SQLITE_DONE)
        return sqlError(QStringLiteral("cannot look up the reviews of a document"));
    return std::optional<qint64>();
}

Result<HistoryPage> HistoryDatabase::list(int offset, int limit)
{
    HistoryPage page;
    Result<qint64> total = count();
    if (!total)
        return total.error();
    page.total = total.value();
    SqlStatement query(m_db,
        "SELECT r.id, d.title, d.path, r.model, r.created_at, d.pages, "
        "r.clause_count, r.finding_count, r.high, r.medium, r.low "
        "FROM reviews r JOIN documents d ON d.id = r.document_id "
        "ORDER BY r.created_at DESC, r.id DESC LIMIT ?1 OFFSET ?2");
    query.bind(1, std::clamp(limit, 0, 100000)).bind(2, std::max(offset, 0));
    int rc = SQLITE_ROW;
    while ((rc = query.step()) == SQLITE_ROW) {
        HistoryEntry entry;
        entry.id = query.int64(0);
        entry.title = query.text(1);
        entry.documentPath = query.text(2);
        entry.modelName = query.text(3);
        entry.createdAt = QDateTime::fromMSecsSinceEpoch(query.int64(4), Qt::UTC);
        entry.pageCount = query.integer(5);
        entry.clauseCount = query.integer(6);
        entry.findingCount = query.integer(7);
        entry.high = query.integer(8);
        entry.medium = query.integer(9);
        entry.low = query.integer(10);
        page.entries.append(entry);
    }
    if (rc != SQLITE_DONE)
        return sqlError(QStringLiteral("cannot list reviews"));
    return page;
}

Result<void> HistoryDatabase::loadClauses(qint64 reviewId, Review& review)
{
    SqlStatement query(m_db,
        "SELECT idx, parent, level, kind, number, heading, start, end, "
        "own_end, page FROM clauses WHERE review_id = ?1 ORDER BY idx");
    query.bind(1, reviewId);
    int rc = SQLITE_ROW;
    while ((rc = query.step()) == SQLITE_ROW) {
        Clause c;
        c.index = query.integer(0);
        c.parent = query.integer(1);
        c.level = query.integer(2);
        c.kind = clauseKindFromName(query.text(3));
        c.number = query.text(4);
        c.heading = query.text(5);
        c.start = query.int64(6);
        c.end = query.int64(7);
        c.ownEnd = query.int64(8);
        c.page = query.integer(9);
        review.clauses.append(c);
    }
    if (rc != SQLITE_DONE)
        return sqlError(QStringLiteral("cannot load the clauses of review %1").arg(reviewId));
    return {};
}

Result<void> HistoryDatabase::loadFindings(qint64 reviewId, Review& review)
{
    SqlStatement query(m_db,
        "SELECT clause_index, category, start, end, page, text, fields, "
        "confidence, risk, rule, rationale, source, needs_human_review, "
        "original_category, original_risk, user_comment, suggested_text FROM findings "
        "WHERE review_id = ?1 ORDER BY idx");
    query.bind(1, reviewId);
    int rc = SQLITE_ROW;
    while ((rc = query.step()) == SQLITE_ROW) {
        Finding f;
        f.clauseIndex = query.integer(0);
        f.category = query.text(1);
        f.start = query.int64(2);
        f.end = query.int64(3);
        f.page = query.integer(4);
        f.text = query.text(5);
        f.fields = parseObject(query.text(6));
        if (const double confidence = query.real(7); confidence >= 0.0)
            f.confidence = confidence;
        f.risk = riskFromName(query.text(8));
        f.ruleId = query.text(9);
        f.rationale = query.text(10);
        f.source = query.text(11);
        f.needsHumanReview = query.integer(12) != 0;
        f.userEdited = !query.isNull(13);
        f.originalCategory = f.userEdited ? query.text(13) : QString();
        f.originalRisk = f.userEdited ? riskFromName(query.text(14)) : Risk::None;
        f.userComment = query.text(15);
        f.suggestedText = query.text(16);
        review.findings.append(f);
    }
    if (rc != SQLITE_DONE)
        return sqlError(QStringLiteral("cannot load the findings of review %1").arg(reviewId));
    return {};
}

Result<Review> HistoryDatabase::load(qint64 id)
{
    SqlStatement query(m_db,
        "SELECT r.model, r.playbook, r.settings, r.timings, r.summary, "
        "r.missing, r.created_at, d.path, d.sha256, d.title, d.format, "
        "d.text, d.layout, r.high, r.medium, r.low FROM reviews r "
        "JOIN documents d ON d.id = r.document_id WHERE r.id = ?1");
    query.bind(1, id);
    const int rc = query.step();
    if (rc == SQLITE_DONE)
        return makeError(m_path.toStdString() + ": no review with id " + std::to_string(id));
    if (rc != SQLITE_ROW)
        return sqlError(QStringLiteral("cannot load review %1").arg(id));
    Review review;
    review.id = id;
    review.modelName = query.text(0);
    review.playbookName = query.text(1);
    review.settings = parseObject(query.text(2));
    const QJsonObject timings = parseObject(query.text(3));
    for (auto it = timings.begin(); it != timings.end(); ++it)
        review.timingsMs.insert(it.key(), it.value().toInteger());
    review.summary.text = query.text(4);
    for (const QJsonValue& value : QJsonDocument::fromJson(query.text(5).toUtf8()).array())
        review.summary.missingCategories.append(value.toString());
    review.createdAt = QDateTime::fromMSecsSinceEpoch(query.int64(6), Qt::UTC);
    Document document;
    document.path = query.text(7);
    document.sha256 = query.text(8);
    document.title = query.text(9);
    document.format = formatFromName(query.text(10));
    document.text = query.text(11);
    std::optional<Document> laidOut = history::decodeDocumentLayout(query.blob(12), document);
    if (!laidOut)
        return makeError(m_path.toStdString() + ": the page layout of review " + std::to_string(id)
            + " is damaged");
    review.document = std::move(*laidOut);
    review.summary.high = query.integer(13);
    review.summary.medium = query.integer(14);
    review.summary.low = query.integer(15);
    if (auto loaded = loadClauses(id, review); !loaded)
        return loaded.error();
    if (auto loaded = loadFindings(id, review); !loaded)
        return loaded.error();
    return review;
}

Result<void> HistoryDatabase::remove(qint64 id)
{
    SqlTransaction transaction(m_db);
    if (!transaction.began())
        return sqlError(QStringLiteral("cannot start deleting review %1").arg(id));
    SqlStatement find(m_db, "SELECT document_id FROM reviews WHERE id = ?1");
    find.bind(1, id);
    if (find.step() != SQLITE_ROW)
        return makeError(m_path.toStdString() + ": no review with id " + std::to_string(id));
    const qint64 documentId = find.int64(0);
    SqlStatement drop(m_db, "DELETE FROM reviews WHERE id = ?1");
    if (!drop.bind(1, id).run())
        return sqlError(QStringLiteral("cannot delete review %1").arg(id));
    SqlStatement orphan(m_db,
        "DELETE FROM documents WHERE id = ?1 AND NOT EXISTS "
        "(SELECT 1 FROM reviews WHERE document_id = ?1)");
    if (!orphan.bind(1, documentId).run())
        return sqlError(QStringLiteral("cannot delete the document of review %1").arg(id));
    if (!transaction.commit())
        return sqlError(QStringLiteral("cannot commit deleting review %1").arg(id));
    return {};
}

Result<void> HistoryDatabase::refreshCounts(qint64 reviewId)
{
    SqlStatement update(m_db,
        "UPDATE reviews SET "
        "high = (SELECT count(*) FROM findings WHERE review_id = ?1 AND "
        "risk = 'high'), medium = (SELECT count(*) FROM findings WHERE "
        "review_id = ?1 AND risk = 'medium'), low = (SELECT count(*) FROM "
        "findings WHERE review_id = ?1 AND risk = 'low') WHERE id = ?1");
    if (!update.bind(1, reviewId).run())
        return sqlError(QStringLiteral("cannot update the counts of review %1").arg(reviewId));
    return {};
}

Result<void> HistoryDatabase::editFinding(
    qint64 reviewId, int findingIndex, const FindingEdit& edit)
{
    SqlTransaction transaction(m_db);
    if (!transaction.began())
        return sqlError(QStringLiteral("cannot start editing review %1").arg(reviewId));
    SqlStatement find(m_db,
        "SELECT id, category, risk, user_comment FROM findings "
        "WHERE review_id = ?1 AND idx = ?2");
    find.bind(1, reviewId).bind(2, findingIndex);
    if (find.step() != SQLITE_ROW)
        return makeError(m_path.toStdString() + ": review " + std::to_string(reviewId)
            + " has no finding " + std::to_string(findingIndex));
    const qint64 findingId = find.int64(0);
    const QString oldCategory = find.text(1);
    const QString oldRisk = find.text(2);
    const QString category = edit.category ? edit.category->trimmed() : oldCategory;
    if (category.isEmpty())
        return makeError("history: a finding's category cannot be empty");
    const QString risk = edit.risk ? riskName(*edit.risk) : oldRisk;
    const QString comment = edit.comment ? *edit.comment : find.text(3);
    SqlStatement update(m_db,
        "UPDATE findings SET category = ?2, risk = ?3, user_comment = ?4, "
        "original_category = coalesce(original_category, ?5), "
        "original_risk = coalesce(original_risk, ?6) WHERE id = ?1");
    update.bind(1, findingId)
        .bind(2, category)
        .bind(3, risk)
        .bind(4, comment)
        .bind(5, oldCategory)
        .bind(6, oldRisk);
    if (!update.run())
        return sqlError(QStringLiteral("cannot edit finding %1").arg(findingIndex));
    SqlStatement log(m_db,
        "INSERT INTO user_edits (finding_id, edited_at, old_category, "
        "new_category, old_risk, new_risk, comment) VALUES "
        "(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    log.bind(1, findingId)
        .bind(2, QDateTime::currentMSecsSinceEpoch())
        .bind(3, oldCategory)
        .bind(4, category)
        .bind(5, oldRisk)
        .bind(6, risk)
        .bind(7, comment);
    if (!log.run())
        return sqlError(QStringLiteral("cannot log the edit of finding %1").arg(findingIndex));
    if (auto counted = refreshCounts(reviewId); !counted)
        return counted.error();
    if (!transaction.commit())
        return sqlError(QStringLiteral("cannot commit the edit of finding %1").arg(findingIndex));
    return {};
}

} // namespace cw
