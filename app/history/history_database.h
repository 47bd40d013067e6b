#pragma once

#include "app/review/review_types.h"
#include "engine/common/result.h"

#include <QDateTime>
#include <QList>
#include <QString>
#include <functional>
#include <memory>
#include <optional>

struct sqlite3;

namespace cw {

// One row of the history list.
struct HistoryEntry {
    qint64 id = 0;
    QString title;
    QString documentPath;
    QString modelName; // empty: fast heads only
    QDateTime createdAt;
    int pageCount = 0;
    int clauseCount = 0;
    int findingCount = 0;
    int high = 0;
    int medium = 0;
    int low = 0;
};

// A page of the history list, newest first, and the number of reviews in all.
struct HistoryPage {
    QList<HistoryEntry> entries;
    qint64 total = 0;
};

// A full-text match: the review it belongs to and a snippet with the match in [brackets].
struct HistorySearchHit {
    qint64 reviewId = 0;
    QString title;
    QDateTime createdAt;
    QString where; // "contract" (document text) or "finding"
    int findingIndex = -1; // for "finding": index into Review::findings
    QString snippet;
};

// What a user changes on one finding; unset members stay as they are. The first edit keeps
// the head's category and risk in Finding::originalCategory/originalRisk, and every edit is
// logged in the user_edits table.
struct FindingEdit {
    std::optional<QString> category;
    std::optional<Risk> risk;
    std::optional<QString> comment;
};

// The review history in one SQLite file (WAL mode, foreign keys on, schema versioned with
// PRAGMA user_version and migrated on open). Synchronous: use it from one thread at a time
// (the CLI; HistoryStore wraps it on its own worker thread for the GUI).
class HistoryDatabase {
public:
    static constexpr int kSchemaVersion = 6;

    // Opens (creating folders and the file when missing) and migrates to kSchemaVersion.
    // The error names the path: unwritable folder, not a database, newer schema, ...
    static Result<std::unique_ptr<HistoryDatabase>> open(const QString& path);
    // For migration tests: creates or opens without migrating past `version` (1..latest).
    static Result<std::unique_ptr<HistoryDatabase>> openAtVersion(const QString& path, int version);
    // <AppDataLocation>/history.sqlite: the database the GUI and the CLI share.
    static QString defaultPath();

    ~HistoryDatabase();
    HistoryDatabase(const HistoryDatabase&) = delete;
    HistoryDatabase& operator=(const HistoryDatabase&) = delete;

    QString path() const { return m_path; }
    int schemaVersion() const;

    // Saves the whole review in one transaction; returns its new id. Reviews of the same
    // file (same path and SHA-256) share one document row.
    Result<qint64> save(const Review& review);
    // Newest first; `offset` and `limit` page through the list.
    Result<HistoryPage> list(int offset, int limit);
    Result<qint64> count();
    // The newest review of the file with this SHA-256 against the playbook of this name, if
    // any: what a folder review resumes from instead of reviewing the file again.
    Result<std::optional<qint64>> latestReviewOf(
        const QString& sha256, const QString& playbookName);
    // The review as saved, with the user's edits applied, without re-running anything.
    Result<Review> load(qint64 id);
    // FTS5 query (words, "phrases", prefix*, AND/OR/NOT) over contract text and findings;
    // best matches first (ranked among the newest 2,000 matches of each, so a common word
    // stays fast). Text that is not FTS5 syntax is searched as its words. A query with
    // Chinese (CJK) characters finds substrings: three or more characters through a trigram
    // index, shorter ones in the newest 2,000 reviews.
    Result<QList<HistorySearchHit>> search(const QString& query, int limit = 50);
    // Deletes the review, its clauses, findings and edits, and its document when no other
    // review uses it. Deleting a missing id is an error.
    Result<void> remove(qint64 id);
    Result<void> editFinding(qint64 reviewId, int findingIndex, const FindingEdit& edit);
    // "ok" or SQLite's list of problems.
    Result<QString> integrityCheck();

    // Test hook: called inside save()'s transaction after every row is written, before
    // COMMIT (the durability test kills the writer there).
    void setBeforeCommitHook(std::function<void()> hook) { m_beforeCommit = std::move(hook); }

    sqlite3* handle() const { return m_db; }

private:
    HistoryDatabase(sqlite3* db, QString path);
    static Result<std::unique_ptr<HistoryDatabase>> openImpl(const QString& path, int version);
    Result<void> migrateTo(int version);
    Result<void> exec(const char* sql);
    Error sqlError(const QString& what) const;
    Result<qint64> documentIdFor(const Document& document);
    Result<void> saveClauses(qint64 reviewId, const QList<Clause>& clauses);
    Result<void> saveFindings(qint64 reviewId, const QList<Finding>& findings);
    Result<void> loadClauses(qint64 reviewId, Review& review);
    Result<void> loadFindings(qint64 reviewId, Review& review);
    Result<void> refreshCounts(qint64 reviewId);
    Result<QList<HistorySearchHit>> searchIndexes(const QString& match,
        const QString& literalMatch, const char* documentsTable, const char* findingsTable,
        int limit);
    Result<QList<HistorySearchHit>> searchLike(const QStringList& terms, int limit);

    sqlite3* m_db = nullptr;
    QString m_path;
    std::function<void()> m_beforeCommit;
};

} // namespace cw
