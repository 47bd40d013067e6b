// Full-text search over the history (FTS5) and the integrity check.
#include "app/history/history_database.h"
#include "app/history/sqlite_statement.h"

#include <QRegularExpression>
#include <algorithm>
#include <sqlite3.h>

namespace cw {

using history::SqlStatement;

namespace {

struct RankedHit {
    HistorySearchHit hit;
    double rank = 0; // bm25: lower is better
};

// A query a person typed that is not valid FTS5 syntax ("non-compete", "U.S.", "30%")
// becomes its words as quoted phrases, all required.
QString quotedTerms(const QString& query)
{
    QStringList terms;
    for (const QString& word :
        query.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts)) {
        QString term = word;
        term.replace(QLatin1String("\""), QLatin1String("\"\""));
        terms.append(QLatin1Char('"') + term + QLatin1Char('"'));
    }
    return terms.join(QLatin1Char(' '));
}

} // namespace

Result<QList<HistorySearchHit>> HistoryDatabase::search(const QString& query, int limit)
{
    const QString trimmed = query.trimmed();
    if (trimmed.isEmpty())
        return makeError("history search: the query is empty");
    limit = std::clamp(limit, 1, 10000);

    const auto run = [&](const QString& match, QList<RankedHit>& hits) -> int {
        SqlStatement documents(m_db,
            "SELECT r.id, d.title, r.created_at, snippet(documents_fts, 1, '[', ']', "
            "'…', 12), bm25(documents_fts) FROM documents_fts "
            "JOIN documents d ON d.id = documents_fts.rowid "
            "JOIN reviews r ON r.document_id = d.id "
            "WHERE documents_fts MATCH ?1 ORDER BY rank LIMIT ?2");
        documents.bind(1, match).bind(2, limit);
        int rc = SQLITE_ROW;
        while ((rc = documents.step()) == SQLITE_ROW) {
            HistorySearchHit hit;
            hit.reviewId = documents.int64(0);
            hit.title = documents.text(1);
            hit.createdAt = QDateTime::fromMSecsSinceEpoch(documents.int64(2), Qt::UTC);
            hit.where = QStringLiteral("contract");
            hit.snippet = documents.text(3);
            hits.append({ hit, documents.real(4) });
        }
        if (rc != SQLITE_DONE)
            return rc;
        SqlStatement findings(m_db,
            "SELECT f.review_id, d.title, r.created_at, f.idx, "
            "snippet(findings_fts, -1, '[', ']', '…', 12), bm25(findings_fts) "
            "FROM findings_fts JOIN findings f ON f.id = findings_fts.rowid "
            "JOIN reviews r ON r.id = f.review_id JOIN documents d ON d.id = r.document_id "
            "WHERE findings_fts MATCH ?1 ORDER BY rank LIMIT ?2");
        findings.bind(1, match).bind(2, limit);
        while ((rc = findings.step()) == SQLITE_ROW) {
            HistorySearchHit hit;
            hit.reviewId = findings.int64(0);
            hit.title = findings.text(1);
            hit.createdAt = QDateTime::fromMSecsSinceEpoch(findings.int64(2), Qt::UTC);
            hit.where = QStringLiteral("finding");
            hit.findingIndex = findings.integer(3);
            hit.snippet = findings.text(4);
            hits.append({ hit, findings.real(5) });
        }
        return rc;
    };

    QList<RankedHit> hits;
    int rc = run(trimmed, hits);
    if (rc != SQLITE_DONE) {
        // Not FTS5 syntax: search the words literally.
        const QString firstError = QString::fromUtf8(sqlite3_errmsg(m_db));
        hits.clear();
        rc = run(quotedTerms(trimmed), hits);
        if (rc != SQLITE_DONE)
            return makeError(m_path.toStdString() + ": cannot search for '" + trimmed.toStdString()
                + "': " + firstError.toStdString());
    }
    std::stable_sort(hits.begin(), hits.end(),
        [](const RankedHit& a, const RankedHit& b) { return a.rank < b.rank; });
    QList<HistorySearchHit> result;
    for (qsizetype i = 0; i < hits.size() && i < limit; ++i)
        result.append(hits[i].hit);
    return result;
}

Result<QString> HistoryDatabase::integrityCheck()
{
    SqlStatement query(m_db, "PRAGMA integrity_check");
    QStringList lines;
    int rc = SQLITE_ROW;
    while ((rc = query.step()) == SQLITE_ROW)
        lines.append(query.text(0));
    if (rc != SQLITE_DONE)
        return sqlError(QStringLiteral("cannot run the integrity check"));
    return lines.join(QLatin1Char('\n'));
}

} // namespace cw
