#pragma once

#include "app/folder_review/folder_review.h"
#include "engine/common/result.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace cw {

// What one contract's review says about one category.
struct CategoryCell {
    bool present = false;
    QString excerpt; // the riskiest (then best-scored) finding's text, shortened
    Risk risk = Risk::None; // the highest among the category's findings
    QString pages; // "3, 7"; empty where pages are unknown
};

struct ContractRow {
    QString file; // relative to the folder
    QString title;
    QString status; // "reviewed", "from the history" or the error
    int pages = 0;
    int high = 0;
    int medium = 0;
    int low = 0;
    QStringList missing; // categories the playbook expects but the review did not find
    QList<CategoryCell> cells; // one per ReviewTable::categories
};

struct CategorySummary {
    QString category;
    int contracts = 0; // contracts where it was found
    int high = 0; // findings of each risk
    int medium = 0;
    int low = 0;
    int missing = 0; // contracts that lack it where the playbook expects it
};

// A folder of contracts as one table: a row per contract, a column group per CUAD category
// (present, excerpt, risk, page), and the counts per risk and category for the summary.
struct ReviewTable {
    QStringList categories;
    QList<ContractRow> rows;
    QList<CategorySummary> summary; // per category, in `categories` order
    int reviewed = 0;
    int resumed = 0;
    int failed = 0;
    int high = 0;
    int medium = 0;
    int low = 0;
};

ReviewTable buildReviewTable(const QList<ContractResult>& results);

// The table's column headers, flattened: "File", ..., "Governing Law: present", ...
QStringList reviewTableHeaders(const ReviewTable& table);
// The cells of one row as text, in reviewTableHeaders order.
QStringList reviewTableCells(const ContractRow& row);

// CSV (RFC 4180, UTF-8): the contracts table only. XLSX: a "Contracts" sheet with the category
// groups over their four columns, and a "Summary" sheet. Either is written whole or not at all.
Result<void> writeReviewTableCsv(const ReviewTable& table, const QString& path);
Result<void> writeReviewTableXlsx(const ReviewTable& table, const QString& path);
// By the path's suffix (.xlsx or .csv).
Result<void> writeReviewTable(const ReviewTable& table, const QString& path);

} // namespace cw
