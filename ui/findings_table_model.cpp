#include "ui/findings_table_model.h"

#include "app/report/report_text.h"

#include <QColor>
#include <QJsonDocument>

namespace cw::ui {

FindingsTableModel::FindingsTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void FindingsTableModel::setReview(const cw::Review* review)
{
    beginResetModel();
    m_review = review;
    endResetModel();
}

void FindingsTableModel::findingChanged(int findingIndex)
{
    emit dataChanged(index(findingIndex, 0), index(findingIndex, ColumnCount - 1));
}

void FindingsTableModel::beginAppend(int count)
{
    const int first = rowCount();
    beginInsertRows({}, first, first + count - 1);
}

void FindingsTableModel::endAppend()
{
    endInsertRows();
}

int FindingsTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_review ? 0 : int(m_review->findings.size());
}

int FindingsTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QColor FindingsTableModel::riskColor(cw::Risk risk)
{
    switch (risk) {
    case cw::Risk::High:
        return QColor(0xd9, 0x3f, 0x3f);
    case cw::Risk::Medium:
        return QColor(0xe8, 0x9a, 0x1c);
    case cw::Risk::Low:
        return QColor(0x3f, 0x9e, 0x5a);
    case cw::Risk::None:
        break;
    }
    return QColor(0x8a, 0x8a, 0x8a);
}

QString FindingsTableModel::riskLabel(cw::Risk risk)
{
    switch (risk) {
    case cw::Risk::High:
        return tr("High");
    case cw::Risk::Medium:
        return tr("Medium");
    case cw::Risk::Low:
        return tr("Low");
    case cw::Risk::None:
        break;
    }
    return tr("—");
}

QVariant FindingsTableModel::data(const QModelIndex& index, int role) const
{
    if (!m_review || !index.isValid() || index.row() >= m_review->findings.size())
        return {};
    const cw::Finding& finding = m_review->findings[index.row()];
    if (role == FindingIndexRole)
        return index.row();
    if (role == RiskRole)
        return int(finding.risk);
    if (role == NeedsReviewRole)
        return finding.needsHumanReview;
    if (role == SourceRole)
        return finding.source;
    if (role == Qt::ToolTipRole)
        return finding.rationale.isEmpty() ? finding.text.left(400) : finding.rationale;
    if (role == Qt::AccessibleTextRole && index.column() == RiskColumn)
        return tr("%1 risk").arg(riskLabel(finding.risk));

    switch (index.column()) {
    case RiskColumn:
        if (role == Qt::DisplayRole)
            return finding.needsHumanReview ? tr("%1 · review").arg(riskLabel(finding.risk))
                                            : riskLabel(finding.risk);
        if (role == Qt::DecorationRole)
            return riskColor(finding.risk);
        if (role == SortRole)
            return int(finding.risk);
        break;
    case CategoryColumn:
        if (role == Qt::DisplayRole && finding.source == QLatin1String("llm"))
            return tr("%1 · model").arg(finding.category);
        if (role == Qt::DisplayRole || role == SortRole)
            return finding.category;
        break;
    case PageColumn:
        // A text or DOCX file without page breaks has no page: "-", as the reports say.
        if (role == Qt::DisplayRole)
            return cw::report::pageText(finding.page);
        if (role == SortRole)
            return finding.page;
        if (role == Qt::TextAlignmentRole)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case ClauseColumn:
        if (role == Qt::DisplayRole || role == SortRole) {
            if (finding.clauseIndex < 0 || finding.clauseIndex >= m_review->clauses.size())
                return QString();
            const cw::Clause& clause = m_review->clauses[finding.clauseIndex];
            return (clause.number + QLatin1Char(' ') + clause.heading).trimmed();
        }
        break;
    case TextColumn:
        if (role == Qt::DisplayRole) {
            const QString simplified = finding.text.simplified();
            return simplified.size() > 120 ? simplified.left(117) + QStringLiteral("…")
                                           : simplified;
        }
        if (role == SortRole)
            return finding.start;
        break;
    case ConfidenceColumn:
        // No calibration, no number: an empty cell rather than a made-up confidence.
        if (role == Qt::DisplayRole)
            return finding.confidence
                ? QStringLiteral("%1 %").arg(qRound(*finding.confidence * 100))
                : QString();
        if (role == SortRole)
            return finding.confidence.value_or(-1.0);
        if (role == Qt::ToolTipRole && !finding.confidence)
            return tr("No calibrated confidence for this kind of finding");
        if (role == Qt::TextAlignmentRole)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        break;
    default:
        break;
    }
    return {};
}

QVariant FindingsTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case RiskColumn:
        return tr("Risk");
    case CategoryColumn:
        return tr("Category");
    case PageColumn:
        return tr("Page");
    case ClauseColumn:
        return tr("Clause");
    case TextColumn:
        return tr("Text");
    case ConfidenceColumn:
        return tr("Confidence");
    default:
        return {};
    }
}

FindingsFilterModel::FindingsFilterModel(QObject* parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(FindingsTableModel::SortRole);
    setSortCaseSensitivity(Qt::CaseInsensitive);
}

void FindingsFilterModel::setText(const QString& text)
{
    m_text = text.trimmed();
    invalidateFilter();
}

void FindingsFilterModel::setMinimumRisk(cw::Risk risk)
{
    m_minimumRisk = risk;
    invalidateFilter();
}

bool FindingsFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    const QAbstractItemModel* model = sourceModel();
    if (int(m_minimumRisk)
        > model->index(sourceRow, 0, sourceParent).data(FindingsTableModel::RiskRole).toInt())
        return false;
    if (m_text.isEmpty())
        return true;
    for (int column = 0; column < model->columnCount(); ++column) {
        if (model->index(sourceRow, column, sourceParent)
                .data()
                .toString()
                .contains(m_text, Qt::CaseInsensitive))
            return true;
    }
    return false;
}

bool FindingsFilterModel::lessThan(const QModelIndex& left, const QModelIndex& right) const
{
    // Findings the heads disagree on come first whichever column is sorted.
    const bool leftReview = left.data(FindingsTableModel::NeedsReviewRole).toBool();
    const bool rightReview = right.data(FindingsTableModel::NeedsReviewRole).toBool();
    if (leftReview != rightReview)
        return sortOrder() == Qt::AscendingOrder ? leftReview : rightReview;
    return QSortFilterProxyModel::lessThan(left, right);
}

} // namespace cw::ui
