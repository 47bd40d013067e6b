#pragma once

#include "app/history/history_database.h"

#include <QAbstractTableModel>
#include <QDialog>

class QLineEdit;
class QTableView;
class QLabel;

namespace cw {
class HistoryStore;
}

namespace cw::ui {

// The saved reviews, newest first, fetched a page at a time as the user scrolls, so the
// list opens at once with ten thousand reviews.
class HistoryListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        TitleColumn,
        DateColumn,
        PagesColumn,
        FindingsColumn,
        RiskColumn,
        ModelColumn,
        ColumnCount
    };
    enum Role { ReviewIdRole = Qt::UserRole + 1 };

    explicit HistoryListModel(cw::HistoryStore* store, QObject* parent = nullptr);

    void reload();
    void showSearchHits(const QList<cw::HistorySearchHit>& hits); // replaces the list
    qint64 total() const { return m_total; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(
        int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    bool canFetchMore(const QModelIndex& parent) const override;
    void fetchMore(const QModelIndex& parent) override;

signals:
    void loaded();
    void failed(const QString& message);

private:
    cw::HistoryStore* m_store;
    QList<cw::HistoryEntry> m_entries;
    QList<QString> m_snippets; // search mode: one per entry
    qint64 m_total = 0;
    bool m_fetching = false;
    bool m_searchMode = false;
    quint64 m_generation = 0;
};

class HistoryDialog : public QDialog {
    Q_OBJECT
public:
    HistoryDialog(cw::HistoryStore* store, QWidget* parent = nullptr);
    void refresh();
    HistoryListModel* model() const { return m_model; }

signals:
    void openRequested(qint64 reviewId);

private:
    void search();
    void openSelected();
    void deleteSelected();
    qint64 selectedId() const;

    cw::HistoryStore* m_store;
    HistoryListModel* m_model;
    QLineEdit* m_search = nullptr;
    QTableView* m_table = nullptr;
    QLabel* m_status = nullptr;
};

} // namespace cw::ui
