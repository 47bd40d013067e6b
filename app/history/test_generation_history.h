#pragma once

#include "app/history/history_database.h"
#include "app/test_generation/test_generation.h"

#include <QDateTime>

namespace cw {

// One row of the list of saved test generations.
struct TestGenerationEntry {
    qint64 id = 0;
    QDateTime createdAt;
    QString fileName;
    QString language;
    QString skill;
    QString model;
    int rounds = 0;
    int kept = 0;
    int discarded = 0;
    QString summary;
    QString snippet; // search hits: the match in [brackets]
};

// The code panel's and `testgen`'s generations in the history database (schema 5): each
// with its skill, model, rounds, results and the whole report, searchable (FTS5 over file
// name, skill, model, code, kept tests and answer) like reviews.
Result<qint64> saveTestGeneration(HistoryDatabase& db, const TestGenerationReport& report);
// Newest first.
Result<QList<TestGenerationEntry>> listTestGenerations(HistoryDatabase& db, int offset, int limit);
Result<TestGenerationReport> loadTestGeneration(HistoryDatabase& db, qint64 id);
// FTS5 syntax, or plain words (each required) when the query is not valid FTS5.
Result<QList<TestGenerationEntry>> searchTestGenerations(
    HistoryDatabase& db, const QString& query, int limit = 50);
Result<void> removeTestGeneration(HistoryDatabase& db, qint64 id);

} // namespace cw
