#pragma once

#include "app/review/review_types.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

namespace cw::ui {

// The clause table: one row per finding of the open review.
class FindingsTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        RiskColumn,
        CategoryColumn,
        PageColumn,
        ClauseColumn,
        TextColumn,
        ConfidenceColumn,
        ColumnCount
    };
    enum Role {
        SortRole = Qt::UserRole + 1,
        FindingIndexRole,
        RiskRole,
        NeedsReviewRole,
        SourceRole // "fast" or "llm"
    };

    explicit FindingsTableModel(QObject* parent = nullptr);

    void setReview(const cw::Review* review); // not owned; call again after the review changes
    void findingChanged(int findingIndex);
    // Around appending `count` findings to the review (the model's, as they come): the
    // views add the rows without losing their selection.
    void beginAppend(int count);
    void endAppend();

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(
        int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    static QColor riskColor(cw::Risk risk);
    static QString riskLabel(cw::Risk risk);

private:
    const cw::Review* m_review = nullptr;
};

// Filters the clause table by free text (category, clause text, fields) and minimum risk,
// and sorts findings marked for human review first.
class FindingsFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit FindingsFilterModel(QObject* parent = nullptr);

    void setText(const QString& text);
    void setMinimumRisk(cw::Risk risk);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

private:
    QString m_text;
    cw::Risk m_minimumRisk = cw::Risk::None;
};

} // namespace cw::ui
