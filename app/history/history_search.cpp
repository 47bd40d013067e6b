// Full-text search over the history (FTS5) and the integrity check.
//
// Speed: ranking every match of a word found in most of 300,000 findings took about a
// second, most of it bm25 and snippets of rows nobody sees. So each index gives its newest
// kRankWindow matches (FTS5 streams rowids in order without ranking), those are ranked, and
// snippets are made only for the hits returned. For a selective query this is the full
// ranking; for a common word it is the best of the newest matches.
//
// Chinese: the unicode61 indexes see a run of Chinese characters as one token, so queries
// with CJK characters go to the trigram indexes (schema 4), which find any substring of
// three or more characters. Shorter CJK terms cannot use a trigram index: they are matched
// with LIKE over the newest kLikeReviews reviews.
#include "app/history/history_database.h"
#include "app/history/sqlite_statement.h"

#include <QHash>
#include <QRegularExpression>
#include <algorithm>
#include <sqlite3.h>

namespace cw {

using history::SqlStatement;

namespace {

constexpr int kRankWindow = 2000; // matches ranked per index
constexpr int kLikeReviews = 2000; // reviews scanned for 1-2 character CJK terms
constexpr int kSnippetContext = 24; // characters either side of a LIKE match

struct RankedHit {
    HistorySearchHit hit;
    double rank = 0; // bm25: lower is better
    qint64 rowid = 0; // in the index the hit came from, for its snippet
};

// The FTS5 tables of one kind of search: word indexes or the CJK trigram indexes.
struct SearchIndexes {
    const char* documents;
    const char* findings;
};
constexpr SearchIndexes kWordIndexes { "documents_fts", "findings_fts" };
constexpr SearchIndexes kCjkIndexes { "documents_cjk", "findings_cjk" };

bool isCjk(QChar c)
{
    const char16_t u = c.unicode();
    return (u >= 0x2E80 && u <= 0x9FFF) || (u >= 0xAC00 && u <= 0xD7AF)
        || (u >= 0xF900 && u <= 0xFAFF) || (u >= 0xFF00 && u <= 0xFFEF) || c.isSurrogate();
}

bool hasCjk(const QString& text)
{
    return std::any_of(text.begin(), text.end(), isCjk);
}

QStringList words(const QString& query)
{
    return query.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
}

// A query a person typed that is not valid FTS5 syntax ("non-compete", "U.S.", "30%")
// becomes its words as quoted phrases, all required.
QString quotedTerms(const QStringList& terms)
{
    QStringList quoted;
    for (QString term : terms) {
        term.replace(QLatin1String("\""), QLatin1String("\"\""));
        quoted.append(QLatin1Char('"') + term + QLatin1Char('"'));
    }
    return quoted.join(QLatin1Char(' '));
}

// The newest kRankWindow matches of `match` in `table`, with their bm25 rank; SQLITE_DONE
// or the error code.
int newestMatches(sqlite3* db, const char* table, const QString& match, QList<RankedHit>& out)
{
    const QByteArray sql = QByteArray("SELECT rowid, bm25(") + table + ") FROM " + table
        + " WHERE " + table + " MATCH ?1 ORDER BY rowid DESC LIMIT ?2";
    SqlStatement query(db, sql.constData());
    query.bind(1, match).bind(2, kRankWindow);
    int rc = SQLITE_ROW;
    while ((rc = query.step()) == SQLITE_ROW) {
        RankedHit hit;
        hit.rowid = query.int64(0);
        hit.rank = query.real(1);
        out.append(hit);
    }
    return rc;
}

QString snippetFor(sqlite3* db, const char* table, const QString& match, qint64 rowid)
{
    const QByteArray sql = QByteArray("SELECT snippet(") + table + ", -1, '[', ']', '…', 12) FROM "
        + table + " WHERE " + table + " MATCH ?1 AND rowid = ?2";
    SqlStatement query(db, sql.constData());
    query.bind(1, match).bind(2, rowid);
    return query.step() == SQLITE_ROW ? query.text(0) : QString();
}

// `text` around the first of `terms` found, with that term in [brackets].
QString likeSnippet(const QString& text, const QStringList& terms)
{
    for (const QString& term : terms) {
        const qsizetype at = text.indexOf(term, 0, Qt::CaseInsensitive);
        if (at < 0)
            continue;
        const qsizetype from = std::max<qsizetype>(0, at - kSnippetContext);
        const qsizetype to = std::min(text.size(), at + term.size() + kSnippetContext);
        QString snippet = text.mid(from, at - from) + QLatin1Char('[') + text.mid(at, term.size())
            + QLatin1Char(']') + text.mid(at + term.size(), to - at - term.size());
        snippet.replace(QLatin1Char('\n'), QLatin1Char(' '));
        return (from > 0 ? QStringLiteral("…") : QString()) + snippet
            + (to < text.size() ? QStringLiteral("…") : QString());
    }
    return text.left(2 * kSnippetContext);
}

QString likePattern(QString term)
{
    term.replace(QLatin1String("\\"), QLatin1String("\\\\"));
    term.replace(QLatin1String("%"), QLatin1String("\\%"));
    term.replace(QLatin1String("_"), QLatin1String("\\_"));
    return QLatin1Char('%') + term + QLatin1Char('%');
}

} // namespace

Result<QList<HistorySearchHit>> HistoryDatabase::search(const QString& query, int limit)
{
    const QString trimmed = query.trimmed();
    if (trimmed.isEmpty())
        return makeError("history search: the query is empty");
    limit = std::clamp(limit, 1, 10000);
    const QStringList terms = words(trimmed);

    if (hasCjk(trimmed)) {
        const bool shortTerm = std::any_of(
            terms.begin(), terms.end(), [](const QString& t) { return t.size() < 3; });
        if (shortTerm)
            return searchLike(terms, limit);
        return searchIndexes(quotedTerms(terms), {}, kCjkIndexes.documents,
            kCjkIndexes.findings, limit);
    }
    return searchIndexes(
        trimmed, quotedTerms(terms), kWordIndexes.documents, kWordIndexes.findings, limit);
}

Result<QList<HistorySearchHit>> HistoryDatabase::searchIndexes(const QString& match,
    const QString& literalMatch, const char* documentsTable, const char* findingsTable, int limit)
{
    QList<RankedHit> documents;
    QList<RankedHit> findings;
    QString used = match;
    int rc = newestMatches(m_db, documentsTable, used, documents);
    if (rc == SQLITE_DONE)
        rc = newestMatches(m_db, findingsTable, used, findings);
    if (rc != SQLITE_DONE && !literalMatch.isEmpty()) {
        // Not FTS5 syntax: search the words literally.
        const QString firstError = QString::fromUtf8(sqlite3_errmsg(m_db));
        documents.clear();
        findings.clear();
        used = literalMatch;
        rc = newestMatches(m_db, documentsTable, used, documents);
        if (rc == SQLITE_DONE)
            rc = newestMatches(m_db, findingsTable, used, findings);
        if (rc != SQLITE_DONE)
            return makeError(m_path.toStdString() + ": cannot search for '" + match.toStdString()
                + "': " + firstError.toStdString());
    }
    if (rc != SQLITE_DONE)
        return sqlError(QStringLiteral("cannot search for '%1'").arg(match));
    const auto byRank = [](const RankedHit& a, const RankedHit& b) { return a.rank < b.rank; };
    std::stable_sort(documents.begin(), documents.end(), byRank);
    std::stable_sort(findings.begin(), findings.end(), byRank);

    // A matching contract is a hit for each review of it, newest first.
    QList<RankedHit> hits;
    SqlStatement reviews(m_db,
        "SELECT r.id, d.title, r.created_at FROM reviews r JOIN documents d ON d.id = "
        "r.document_id WHERE r.document_id = ?1 ORDER BY r.created_at DESC, r.id DESC LIMIT ?2");
    for (const RankedHit& document : documents) {
        if (hits.size() >= limit)
            break;
        reviews.reset();
        reviews.bind(1, document.rowid).bind(2, int(limit - hits.size()));
        while (reviews.step() == SQLITE_ROW) {
            RankedHit hit = document;
            hit.hit.reviewId = reviews.int64(0);
            hit.hit.title = reviews.text(1);
            hit.hit.createdAt = QDateTime::fromMSecsSinceEpoch(reviews.int64(2), Qt::UTC);
            hit.hit.where = QStringLiteral("contract");
            hits.append(hit);
        }
    }
    SqlStatement finding(m_db,
        "SELECT f.review_id, d.title, r.created_at, f.idx FROM findings f "
        "JOIN reviews r ON r.id = f.review_id JOIN documents d ON d.id = r.document_id "
        "WHERE f.id = ?1");
    for (qsizetype i = 0; i < findings.size() && i < limit; ++i) {
        finding.reset();
        finding.bind(1, findings[i].rowid);
        if (finding.step() != SQLITE_ROW)
            continue;
        RankedHit hit = findings[i];
        hit.hit.reviewId = finding.int64(0);
        hit.hit.title = finding.text(1);
        hit.hit.createdAt = QDateTime::fromMSecsSinceEpoch(finding.int64(2), Qt::UTC);
        hit.hit.where = QStringLiteral("finding");
        hit.hit.findingIndex = finding.integer(3);
        hits.append(hit);
    }
    std::stable_sort(hits.begin(), hits.end(), byRank);
    if (hits.size() > limit)
        hits.resize(limit);

    // Snippets only for what is returned; one per contract however many reviews it has.
    QHash<qint64, QString> documentSnippets;
    QList<HistorySearchHit> result;
    result.reserve(hits.size());
    for (RankedHit& hit : hits) {
        if (hit.hit.where == QLatin1String("contract")) {
            auto cached = documentSnippets.find(hit.rowid);
            if (cached == documentSnippets.end())
                cached = documentSnippets.insert(
                    hit.rowid, snippetFor(m_db, documentsTable, used, hit.rowid));
            hit.hit.snippet = *cached;
        } else {
            hit.hit.snippet = snippetFor(m_db, findingsTable, used, hit.rowid);
        }
        result.append(std::move(hit.hit));
    }
    return result;
}

Result<QList<HistorySearchHit>> HistoryDatabase::searchLike(const QStringList& terms, int limit)
{
    QByteArray documentCondition;
    QByteArray findingCondition;
    for (int i = 0; i < terms.size(); ++i) {
        const QByteArray parameter = "?" + QByteArray::number(i + 2);
        documentCondition
            += " AND (d.title || ' ' || d.text) LIKE " + parameter + " ESCAPE '\\'";
        findingCondition += " AND (f.category || ' ' || f.text || ' ' || f.rationale || ' ' || "
                            "f.user_comment) LIKE "
            + parameter + " ESCAPE '\\'";
    }
    const QByteArray recent
        = "(SELECT %1 FROM reviews ORDER BY created_at DESC, id DESC LIMIT ?1)";
    // Each contract once, however many of the newest reviews share it.
    SqlStatement documents(m_db,
        ("SELECT d.id, d.title, d.text FROM documents d WHERE d.id IN "
            + QByteArray(recent).replace("%1", "document_id") + documentCondition)
            .constData());
    // Newest findings first, so the scan stops once `limit` have matched.
    SqlStatement findings(m_db,
        ("SELECT f.review_id, d.title, r.created_at, f.idx, f.category || ' ' || f.text || ' ' "
         "|| f.rationale || ' ' || f.user_comment FROM findings f JOIN reviews r ON r.id = "
         "f.review_id JOIN documents d ON d.id = r.document_id WHERE f.review_id IN "
            + QByteArray(recent).replace("%1", "id") + findingCondition
            + " ORDER BY f.id DESC LIMIT " + QByteArray::number(limit))
            .constData());
    for (SqlStatement* query : { &documents, &findings }) {
        query->bind(1, kLikeReviews);
        for (int i = 0; i < terms.size(); ++i)
            query->bind(i + 2, likePattern(terms[i]));
    }
    const QString failed = QStringLiteral("cannot search for '%1'").arg(terms.join(' '));

    // A matching contract is a hit for each of its reviews, newest first.
    struct Match {
        QString title;
        QString snippet;
    };
    QHash<qint64, Match> matched;
    int rc = SQLITE_ROW;
    while ((rc = documents.step()) == SQLITE_ROW) {
        const QString title = documents.text(1);
        matched.insert(documents.int64(0),
            Match { title, likeSnippet(title + QLatin1Char(' ') + documents.text(2), terms) });
    }
    if (rc != SQLITE_DONE)
        return sqlError(failed);
    QList<HistorySearchHit> result;
    SqlStatement reviews(m_db,
        "SELECT id, created_at FROM reviews WHERE document_id = ?1 "
        "ORDER BY created_at DESC, id DESC LIMIT ?2");
    for (auto it = matched.cbegin(); it != matched.cend(); ++it) {
        reviews.reset();
        reviews.bind(1, it.key()).bind(2, limit);
        while (reviews.step() == SQLITE_ROW) {
            HistorySearchHit hit;
            hit.reviewId = reviews.int64(0);
            hit.title = it->title;
            hit.createdAt = QDateTime::fromMSecsSinceEpoch(reviews.int64(1), Qt::UTC);
            hit.where = QStringLiteral("contract");
            hit.snippet = it->snippet;
            result.append(hit);
        }
    }
    std::sort(result.begin(), result.end(), [](const HistorySearchHit& a, const HistorySearchHit& b) {
        return a.createdAt != b.createdAt ? a.createdAt > b.createdAt : a.reviewId > b.reviewId;
    });
    if (result.size() > limit)
        result.resize(limit);
    while (result.size() < limit && (rc = findings.step()) == SQLITE_ROW) {
        HistorySearchHit hit;
        hit.reviewId = findings.int64(0);
        hit.title = findings.text(1);
        hit.createdAt = QDateTime::fromMSecsSinceEpoch(findings.int64(2), Qt::UTC);
        hit.where = QStringLiteral("finding");
        hit.findingIndex = findings.integer(3);
        hit.snippet = likeSnippet(findings.text(4), terms);
        result.append(hit);
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return sqlError(failed);
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
