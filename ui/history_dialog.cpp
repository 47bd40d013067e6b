#include "ui/history_dialog.h"

#include "app/history/history_store.h"
#include "app/report/report_text.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMessageBox>
#include <QPointer>
#include <QPushButton>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace cw::ui {

namespace {
constexpr int kPageSize = 200;
}

HistoryListModel::HistoryListModel(cw::HistoryStore* store, QObject* parent)
    : QAbstractTableModel(parent)
    , m_store(store)
{
}

void HistoryListModel::reload()
{
    beginResetModel();
    m_entries.clear();
    m_snippets.clear();
    m_total = 0;
    m_searchMode = false;
    m_fetching = false;
    ++m_generation;
    endResetModel();
    fetchMore({});
}

void HistoryListModel::showSearchHits(const QList<cw::HistorySearchHit>& hits)
{
    beginResetModel();
    ++m_generation;
    m_searchMode = true;
    m_fetching = false;
    m_entries.clear();
    m_snippets.clear();
    QSet<qint64> seen;
    for (const cw::HistorySearchHit& hit : hits) {
        if (seen.contains(hit.reviewId))
            continue; // one row per review: its best match
        seen.insert(hit.reviewId);
        cw::HistoryEntry entry;
        entry.id = hit.reviewId;
        entry.title = hit.title;
        entry.createdAt = hit.createdAt;
        m_entries.append(entry);
        m_snippets.append(hit.snippet);
    }
    m_total = m_entries.size();
    endResetModel();
    emit loaded();
}

int HistoryListModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_entries.size());
}

int HistoryListModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant HistoryListModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= m_entries.size())
        return {};
    const cw::HistoryEntry& entry = m_entries[index.row()];
    if (role == ReviewIdRole)
        return entry.id;
    if (role == Qt::ToolTipRole)
        return m_searchMode ? m_snippets.value(index.row()) : entry.documentPath;
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case TitleColumn:
        return entry.title.isEmpty() ? entry.documentPath : entry.title;
    case DateColumn:
        return QLocale().toString(entry.createdAt.toLocalTime(), QLocale::ShortFormat);
    case PagesColumn:
        if (m_searchMode)
            return {};
        return cw::report::pageText(entry.pageCount); // "-" for a file without pages
    case FindingsColumn:
        return m_searchMode ? QVariant(m_snippets.value(index.row()))
                            : QVariant(entry.findingCount);
    case RiskColumn:
        return m_searchMode ? QVariant()
                            : QVariant(tr("%1 high · %2 medium · %3 low")
                                           .arg(entry.high)
                                           .arg(entry.medium)
                                           .arg(entry.low));
    case ModelColumn:
        return entry.modelName.isEmpty() ? tr("fast heads") : entry.modelName;
    default:
        return {};
    }
}

QVariant HistoryListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case TitleColumn:
        return tr("Contract");
    case DateColumn:
        return tr("Reviewed");
    case PagesColumn:
        return tr("Pages");
    case FindingsColumn:
        return m_searchMode ? tr("Match") : tr("Findings");
    case RiskColumn:
        return tr("Risks");
    case ModelColumn:
        return tr("Model");
    default:
        return {};
    }
}

bool HistoryListModel::canFetchMore(const QModelIndex& parent) const
{
    return !parent.isValid() && !m_searchMode && !m_fetching
        && (m_total == 0 ? m_entries.isEmpty() : m_entries.size() < m_total);
}

void HistoryListModel::fetchMore(const QModelIndex& parent)
{
    if (!canFetchMore(parent))
        return;
    m_fetching = true;
    const quint64 generation = m_generation;
    const int offset = int(m_entries.size());
    // Coroutine lambdas capture nothing and take their arguments by value: the lambda and
    // its caller are gone when the task resumes. The model may be gone too (its dialog
    // closed with the window), hence the guard.
    auto task = [](QPointer<HistoryListModel> self, cw::HistoryStore* store, int offset,
                    quint64 generation) -> QCoro::Task<> {
        auto listing = store->list(offset, kPageSize); // named: see MainWindow::onReviewReady
        auto page = co_await listing;
        if (!self || generation != self->m_generation)
            co_return; // reloaded or switched to search meanwhile
        self->m_fetching = false;
        if (!page) {
            emit self->failed(QString::fromStdString(page.error().message));
            co_return;
        }
        self->m_total = page->total;
        if (!page->entries.isEmpty()) {
            self->beginInsertRows({}, int(self->m_entries.size()),
                int(self->m_entries.size() + page->entries.size() - 1));
            self->m_entries.append(page->entries);
            self->endInsertRows();
        } else {
            self->m_total = self->m_entries.size(); // nothing more: stop asking
        }
        emit self->loaded();
    };
    task(this, m_store, offset, generation);
}

HistoryDialog::HistoryDialog(cw::HistoryStore* store, QWidget* parent)
    : QDialog(parent)
    , m_store(store)
    , m_model(new HistoryListModel(store, this))
{
    setObjectName(QStringLiteral("historyDialog"));
    setWindowTitle(tr("Review history"));
    resize(900, 520);
    auto* layout = new QVBoxLayout(this);
    m_search = new QLineEdit(this);
    m_search->setObjectName(QStringLiteral("historySearch"));
    m_search->setPlaceholderText(
        tr("Search contracts and findings (words, \"phrases\", prefix*)…"));
    m_search->setAccessibleName(tr("Search the history"));
    m_search->setClearButtonEnabled(true);
    layout->addWidget(m_search);
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("historyTable"));
    m_table->setAccessibleName(tr("Saved reviews"));
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(
        HistoryListModel::TitleColumn, QHeaderView::Stretch);
    layout->addWidget(m_table, 1);
    m_status = new QLabel(this);
    layout->addWidget(m_status);
    auto* buttons = new QDialogButtonBox(this);
    auto* open = buttons->addButton(tr("&Open"), QDialogButtonBox::AcceptRole);
    auto* remove = buttons->addButton(tr("&Delete"), QDialogButtonBox::DestructiveRole);
    buttons->addButton(QDialogButtonBox::Close);
    layout->addWidget(buttons);

    auto* searchDelay = new QTimer(this);
    searchDelay->setSingleShot(true);
    searchDelay->setInterval(250);
    connect(m_search, &QLineEdit::textChanged, searchDelay, qOverload<>(&QTimer::start));
    connect(searchDelay, &QTimer::timeout, this, &HistoryDialog::search);
    connect(open, &QPushButton::clicked, this, &HistoryDialog::openSelected);
    connect(remove, &QPushButton::clicked, this, &HistoryDialog::deleteSelected);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_table, &QTableView::doubleClicked, this, &HistoryDialog::openSelected);
    connect(m_model, &HistoryListModel::loaded, this,
        [this] { m_status->setText(tr("%n review(s)", nullptr, int(m_model->total()))); });
    connect(m_model, &HistoryListModel::failed, m_status, &QLabel::setText);
}

void HistoryDialog::refresh()
{
    m_search->clear();
    m_model->reload();
}

void HistoryDialog::search()
{
    const QString query = m_search->text().trimmed();
    if (query.isEmpty()) {
        m_model->reload();
        return;
    }
    auto task = [](QPointer<HistoryDialog> self, QString query) -> QCoro::Task<> {
        auto searching = self->m_store->search(query, 200);
        auto hits = co_await searching;
        if (!self || query != self->m_search->text().trimmed())
            co_return; // the user typed on
        if (!hits) {
            self->m_status->setText(QString::fromStdString(hits.error().message));
            co_return;
        }
        self->m_model->showSearchHits(hits.value());
    };
    task(this, query);
}

qint64 HistoryDialog::selectedId() const
{
    const QModelIndex index = m_table->currentIndex();
    return index.isValid() ? index.data(HistoryListModel::ReviewIdRole).toLongLong() : 0;
}

void HistoryDialog::openSelected()
{
    if (const qint64 id = selectedId()) {
        emit openRequested(id);
        accept();
    }
}

void HistoryDialog::deleteSelected()
{
    const qint64 id = selectedId();
    if (id == 0)
        return;
    if (QMessageBox::question(this, tr("Delete review"),
            tr("Delete this review from the history? This cannot be undone."))
        != QMessageBox::Yes)
        return;
    auto task = [](QPointer<HistoryDialog> self, qint64 id) -> QCoro::Task<> {
        auto removing = self->m_store->remove(id);
        auto removed = co_await removing;
        if (!self)
            co_return;
        if (!removed)
            self->m_status->setText(QString::fromStdString(removed.error().message));
        self->m_model->reload();
    };
    task(this, id);
}

} // namespace cw::ui
