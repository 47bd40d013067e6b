#include "app/history/test_generation_history.h"

#include "app/history/sqlite_statement.h"
#include "app/test_generation/test_generation_json.h"

#include <QJsonDocument>
#include <QRegularExpression>

namespace cw {

using history::SqlStatement;

namespace {

constexpr const char* kColumns
    = "g.id, g.created_at, g.file_name, g.language, g.skill, g.model, g.rounds, g.kept, "
      "g.discarded, g.summary";

TestGenerationEntry entryFrom(const SqlStatement& s)
{
    TestGenerationEntry e;
    e.id = s.int64(0);
    e.createdAt = QDateTime::fromSecsSinceEpoch(s.int64(1));
    e.fileName = s.text(2);
    e.language = s.text(3);
    e.skill = s.text(4);
    e.model = s.text(5);
    e.rounds = s.integer(6);
    e.kept = s.integer(7);
    e.discarded = s.integer(8);
    e.summary = s.text(9);
    return e;
}

Error sqlError(HistoryDatabase& db, const std::string& what)
{
    return makeError(db.path().toStdString() + ": " + what + ": " + sqlite3_errmsg(db.handle()));
}

QString quotedWords(const QString& query)
{
    QStringList quoted;
    for (QString word :
        query.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts)) {
        word.replace(QLatin1String("\""), QLatin1String("\"\""));
        quoted.append('"' + word + '"');
    }
    return quoted.join(' ');
}

} // namespace

Result<qint64> saveTestGeneration(HistoryDatabase& db, const TestGenerationReport& report)
{
    SqlStatement insert(db.handle(),
        "INSERT INTO test_generations (created_at, file_name, language, skill, model, rounds, "
        "kept, discarded, coverage_before, coverage_after, summary, code, kept_tests, answer, "
        "report) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
    insert.bind(1, QDateTime::currentSecsSinceEpoch())
        .bind(2, report.fileName)
        .bind(3, report.language)
        .bind(4, report.skill)
        .bind(5, report.model)
        .bind(6, int(report.rounds.size()))
        .bind(7, report.kept)
        .bind(8, report.discarded);
    if (report.coverageMeasured)
        insert.bind(9, report.coverageBefore).bind(10, report.coverageAfter);
    else
        insert.bindNull(9).bindNull(10);
    insert.bind(11, report.summary())
        .bind(12, report.code)
        .bind(13, report.keptTests)
        .bind(14,
            report.answer.isEmpty() && !report.answerJson.isEmpty()
                ? QString::fromUtf8(QJsonDocument(report.answerJson).toJson())
                : report.answer)
        .bind(15,
            QString::fromUtf8(
                QJsonDocument(testGenerationToJson(report)).toJson(QJsonDocument::Compact)));
    if (!insert.run())
        return sqlError(db, "cannot save the test generation");
    return qint64(sqlite3_last_insert_rowid(db.handle()));
}

Result<QList<TestGenerationEntry>> listTestGenerations(HistoryDatabase& db, int offset, int limit)
{
    SqlStatement s(db.handle(),
        (QStringLiteral("SELECT %1 FROM test_generations g ORDER BY g.created_at DESC, g.id DESC "
                        "LIMIT ?1 OFFSET ?2")
                .arg(kColumns))
            .toUtf8()
            .constData());
    s.bind(1, limit).bind(2, offset);
    QList<TestGenerationEntry> out;
    while (s.step() == SQLITE_ROW)
        out.append(entryFrom(s));
    if (!s.ok())
        return sqlError(db, "cannot list test generations");
    return out;
}

Result<TestGenerationReport> loadTestGeneration(HistoryDatabase& db, qint64 id)
{
    SqlStatement s(db.handle(), "SELECT report FROM test_generations WHERE id = ?1");
    s.bind(1, id);
    if (s.step() != SQLITE_ROW) {
        if (!s.ok())
            return sqlError(db, "cannot load test generation " + std::to_string(id));
        return makeError("no test generation with id " + std::to_string(id));
    }
    const QJsonDocument doc = QJsonDocument::fromJson(s.text(0).toUtf8());
    if (!doc.isObject())
        return makeError("test generation " + std::to_string(id) + ": its saved report is damaged");
    return testGenerationFromJson(doc.object());
}

Result<QList<TestGenerationEntry>> searchTestGenerations(
    HistoryDatabase& db, const QString& query, int limit)
{
    const QString trimmed = query.trimmed();
    if (trimmed.isEmpty())
        return makeError("test generation search: the query is empty");
    const QByteArray sql
        = QStringLiteral("SELECT %1, snippet(test_generations_fts, -1, '[', ']', '…', 12) FROM "
                         "test_generations_fts JOIN test_generations g ON g.id = "
                         "test_generations_fts.rowid WHERE test_generations_fts MATCH ?1 ORDER "
                         "BY rank LIMIT ?2")
              .arg(kColumns)
              .toUtf8();
    for (const QString& match : { trimmed, quotedWords(trimmed) }) {
        SqlStatement s(db.handle(), sql.constData());
        s.bind(1, match).bind(2, limit);
        QList<TestGenerationEntry> out;
        while (s.step() == SQLITE_ROW) {
            out.append(entryFrom(s));
            out.last().snippet = s.text(10);
        }
        if (s.ok())
            return out;
        // Not FTS5 syntax ("a.b", "x-y"): again as plain words.
    }
    return sqlError(db, "cannot search test generations");
}

Result<void> removeTestGeneration(HistoryDatabase& db, qint64 id)
{
    SqlStatement s(db.handle(), "DELETE FROM test_generations WHERE id = ?1");
    s.bind(1, id);
    if (!s.run())
        return sqlError(db, "cannot delete test generation " + std::to_string(id));
    if (sqlite3_changes(db.handle()) == 0)
        return makeError("no test generation with id " + std::to_string(id));
    return {};
}

} // namespace cw
