#include "ui/review_view.h"

#include "app/desktop/review_queue.h"
#include "app/render/pdf_page_renderer.h"
#include "ui/finding_detail_pane.h"
#include "ui/findings_table_model.h"
#include "ui/pdf_view.h"

#include <QComboBox>
#include <QEvent>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTextBlock>
#include <QThread>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <utility>

namespace cw::ui {

namespace {

// Below these widths a page cannot be read, or the table shows no clause text.
constexpr int kDocumentMinimumWidth = 320;
constexpr int kFindingsMinimumWidth = 380;
constexpr int kTextColumnChars = 40;
constexpr int kNarrowTableChars = 72; // below this the clause and confidence columns go

} // namespace

ReviewView::ReviewView(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("reviewView"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_splitter = new QSplitter(Qt::Horizontal, this);
    layout->addWidget(m_splitter);

    m_documentStack = new QStackedWidget(m_splitter);
    m_pdfView = new PdfView(m_documentStack);
    m_textView = new QPlainTextEdit(m_documentStack);
    m_textView->setObjectName(QStringLiteral("documentText"));
    m_textView->setAccessibleName(tr("Contract text"));
    m_textView->setReadOnly(true);
    m_documentStack->addWidget(m_pdfView);
    m_documentStack->addWidget(m_textView);

    auto* right = new QSplitter(Qt::Vertical, m_splitter);
    auto* tablePane = new QWidget(right);
    auto* tableLayout = new QVBoxLayout(tablePane);
    tableLayout->setContentsMargins(0, 0, 0, 0);
    auto* filterRow = new QHBoxLayout;
    m_filter = new QLineEdit(tablePane);
    m_filter->setObjectName(QStringLiteral("findingsFilter"));
    m_filter->setPlaceholderText(tr("Filter clauses (category, text, page)…"));
    m_filter->setAccessibleName(tr("Filter clauses"));
    m_filter->setClearButtonEnabled(true);
    m_riskFilter = new QComboBox(tablePane);
    m_riskFilter->setAccessibleName(tr("Minimum risk"));
    m_riskFilter->addItem(tr("All risks"), int(cw::Risk::None));
    m_riskFilter->addItem(tr("Low and above"), int(cw::Risk::Low));
    m_riskFilter->addItem(tr("Medium and above"), int(cw::Risk::Medium));
    m_riskFilter->addItem(tr("High only"), int(cw::Risk::High));
    filterRow->addWidget(m_filter, 1);
    filterRow->addWidget(m_riskFilter);
    tableLayout->addLayout(filterRow);

    m_model = new FindingsTableModel(this);
    m_filterModel = new FindingsFilterModel(this);
    m_filterModel->setSourceModel(m_model);
    m_table = new QTableView(tablePane);
    m_table->setObjectName(QStringLiteral("findingsTable"));
    m_table->setAccessibleName(tr("Clauses found"));
    m_table->setModel(m_filterModel);
    m_table->setSortingEnabled(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->horizontalHeader()->setSectionResizeMode(
        FindingsTableModel::TextColumn, QHeaderView::Stretch);
    m_table->sortByColumn(FindingsTableModel::RiskColumn, Qt::DescendingOrder);
    tableLayout->addWidget(m_table);

    m_detail = new FindingDetailPane(right);
    right->addWidget(tablePane);
    right->addWidget(m_detail);
    right->setStretchFactor(0, 3);
    right->setStretchFactor(1, 2);
    m_splitter->addWidget(m_documentStack);
    m_splitter->addWidget(right);
    // Pages and table share the width evenly: at 3:2 the table's text column shrank to a
    // couple of words. Neither side collapses below what can still be read.
    m_splitter->setStretchFactor(0, 1);
    m_splitter->setStretchFactor(1, 1);
    m_splitter->setChildrenCollapsible(false);
    m_documentStack->setMinimumWidth(kDocumentMinimumWidth);
    right->setMinimumWidth(kFindingsMinimumWidth);
    right->setChildrenCollapsible(false);
    m_table->viewport()->installEventFilter(this);

    connect(m_filter, &QLineEdit::textChanged, m_filterModel, &FindingsFilterModel::setText);
    connect(m_riskFilter, &QComboBox::currentIndexChanged, this,
        [this] { m_filterModel->setMinimumRisk(cw::Risk(m_riskFilter->currentData().toInt())); });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
        &ReviewView::onCurrentRowChanged);
    connect(m_detail, &FindingDetailPane::findingEdited, this, &ReviewView::findingEdited);
}

ReviewView::~ReviewView() = default;

void ReviewView::setCategories(const QStringList& categories)
{
    m_detail->setCategories(categories);
}

void ReviewView::setReview(const cw::Review& review)
{
    m_live = false;
    m_questions.clear();
    m_review = review;
    m_model->setReview(&m_review);
    m_detail->showFinding(nullptr, -1);
    showDocument();
    fitColumns();
}

void ReviewView::fitColumns()
{
    m_table->resizeColumnsToContents();
    m_categoryWidth = m_table->columnWidth(FindingsTableModel::CategoryColumn);
    m_clauseWidth = m_table->columnWidth(FindingsTableModel::ClauseColumn);
    shareColumnWidths();
}

void ReviewView::setDocumentFirst(bool documentFirst)
{
    if (documentFirst == !m_sizesBeforeDocumentFirst.isEmpty())
        return;
    // Widening the window then widens the pages too, not the table.
    m_splitter->setStretchFactor(1, documentFirst ? 0 : 1);
    if (!documentFirst) {
        m_splitter->setSizes(m_sizesBeforeDocumentFirst);
        m_sizesBeforeDocumentFirst.clear();
        return;
    }
    m_sizesBeforeDocumentFirst = m_splitter->sizes();
    const int total = m_sizesBeforeDocumentFirst.value(0) + m_sizesBeforeDocumentFirst.value(1);
    if (total <= 0) // not laid out yet (the panel restored at start): even, as the stretch says
        m_sizesBeforeDocumentFirst = { 1, 1 };
    // Sizes are weights once the splitter's own width differs: the findings column's
    // minimum is what bounds it.
    m_splitter->setSizes({ std::max(total, 100 * kFindingsMinimumWidth), 1 });
}

void ReviewView::shareColumnWidths()
{
    // The clause text is what tells the rows apart: it keeps kTextColumnChars characters'
    // room, and the category and clause columns give way (to their floors; their full
    // text is in the detail pane and the tooltip) before it does.
    using Column = FindingsTableModel::Column;
    const int em = m_table->fontMetrics().averageCharWidth();
    QHeaderView* header = m_table->horizontalHeader();
    // A narrow table (beside the code panel) drops the clause number and the confidence,
    // which the detail pane shows, before the text is cut to a word or two.
    const bool narrow = m_table->viewport()->width() < kNarrowTableChars * em;
    m_table->setColumnHidden(Column::ClauseColumn, narrow);
    m_table->setColumnHidden(Column::ConfidenceColumn, narrow);
    int fixed = 0;
    for (Column column : { Column::RiskColumn, Column::PageColumn, Column::ConfidenceColumn }) {
        if (!m_table->isColumnHidden(column))
            fixed += m_table->columnWidth(column);
    }
    const int available = m_table->viewport()->width() - fixed;
    const int wantText = kTextColumnChars * em;
    const int category = std::min(m_categoryWidth, 18 * em);
    const int clause = narrow ? 0 : std::min(m_clauseWidth, 12 * em);
    const int room = std::max(available - wantText, 0);
    const double share = category + clause > room ? double(room) / (category + clause) : 1.0;
    m_table->setColumnWidth(
        Column::CategoryColumn, std::max(int(category * share), std::min(category, 10 * em)));
    if (!narrow) {
        m_table->setColumnWidth(
            Column::ClauseColumn, std::max(int(clause * share), std::min(clause, 6 * em)));
    }
    header->setSectionResizeMode(Column::TextColumn, QHeaderView::Stretch);
}

bool ReviewView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_table->viewport() && event->type() == QEvent::Resize)
        shareColumnWidths();
    return QWidget::eventFilter(watched, event);
}

void ReviewView::followQueue(cw::ReviewQueue* queue)
{
    connect(queue, &cw::ReviewQueue::fastReviewReady, this, &ReviewView::showFastReview);
    connect(queue, &cw::ReviewQueue::modelQuestions, this, &ReviewView::setModelQuestions);
    connect(queue, &cw::ReviewQueue::modelNote, this, &ReviewView::appendModelNote);
    connect(queue, &cw::ReviewQueue::modelFindings, this, &ReviewView::appendModelFindings);
}

void ReviewView::showFastReview(const cw::Review& review)
{
    setReview(review);
    m_live = true;
}

void ReviewView::setModelQuestions(const QList<cw::ModelQuestionInfo>& questions)
{
    if (!m_live)
        return;
    m_questions.clear();
    for (const cw::ModelQuestionInfo& q : questions)
        m_questions.insert(q.id, { q.categories, QString(), false });
    showLiveNote();
}

void ReviewView::appendModelNote(int questionId, const QString& piece)
{
    auto it = m_questions.find(questionId);
    if (!m_live || it == m_questions.end())
        return;
    it->note += piece;
    const int shown = m_detail->findingIndex();
    if (shown >= 0 && questionFor(m_review.findings[shown].category) == questionId)
        m_detail->appendModelNote(piece);
}

void ReviewView::appendModelFindings(int questionId, const QList<cw::Finding>& findings)
{
    auto it = m_questions.find(questionId);
    if (!m_live || it == m_questions.end())
        return;
    it->answered = true;
    if (!findings.isEmpty()) {
        m_model->beginAppend(int(findings.size()));
        m_review.findings.append(findings);
        m_model->endAppend();
    }
    const int shown = m_detail->findingIndex();
    if (shown >= 0 && questionFor(m_review.findings[shown].category) == questionId)
        m_detail->setModelNoteFinished();
}

QString ReviewView::modelNote(int questionId) const
{
    return m_questions.value(questionId).note;
}

int ReviewView::questionFor(const QString& category) const
{
    for (auto it = m_questions.begin(); it != m_questions.end(); ++it) {
        if (it->categories.contains(category))
            return it.key();
    }
    return -1;
}

void ReviewView::showLiveNote()
{
    const int shown = m_detail->findingIndex();
    if (!m_live || shown < 0)
        return;
    const int question = questionFor(m_review.findings[shown].category);
    if (question < 0)
        return;
    const LiveQuestion& q = m_questions[question];
    m_detail->setModelNote(q.note, !q.answered);
}

void ReviewView::showDocument()
{
    m_documentError.clear();
    // The finished review of the PDF whose pages are already shown (opened while it was
    // read): keep the pages, their cache and the scroll position.
    if (m_review.document.format == cw::DocumentFormat::Pdf && m_renderer
        && m_renderer->path() == m_review.document.path
        && m_documentStack->currentWidget() == m_pdfView) {
        m_pdfView->setHighlights({});
        emit documentShown();
        return;
    }
    m_pdfView->setRenderer(nullptr);
    m_renderer.reset();
    const quint64 generation = ++m_documentGeneration;
    if (m_review.document.format != cw::DocumentFormat::Pdf) {
        showSavedText();
        return;
    }
    // Poppler loads the file and walks every page's size on a worker (a long or damaged PDF
    // takes a while); the saved text shows meanwhile. The renderer is made there and handed
    // to this thread before anyone else sees it.
    m_textView->setPlainText(m_review.document.text);
    m_documentStack->setCurrentWidget(m_textView);
    struct OpenedPdf {
        std::shared_ptr<cw::PdfPageRenderer> renderer;
        QString error;
    };
    QThread* const uiThread = thread();
    auto* watcher = new QFutureWatcher<OpenedPdf>(this);
    connect(watcher, &QFutureWatcher<OpenedPdf>::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != m_documentGeneration)
            return; // another review is shown now
        const OpenedPdf opened = watcher->result();
        if (!opened.renderer) {
            // The file moved or changed since the review was saved: keep the saved text.
            m_documentError = opened.error;
            emit documentShown();
            return;
        }
        m_renderer = opened.renderer;
        m_pdfView->setRenderer(m_renderer.get());
        m_documentStack->setCurrentWidget(m_pdfView);
        const int shown = m_detail->findingIndex();
        if (shown >= 0 && shown < m_review.findings.size()) {
            const cw::Finding& finding = m_review.findings[shown];
            m_pdfView->setHighlights(m_review.document.boxesFor(finding.start, finding.end));
        }
        emit documentShown();
    });
    watcher->setFuture(QtConcurrent::run([path = m_review.document.path, uiThread] {
        auto renderer = std::make_shared<cw::PdfPageRenderer>();
        if (auto opened = renderer->open(path); !opened)
            return OpenedPdf { nullptr, QString::fromStdString(opened.error().message) };
        renderer->moveToThread(uiThread);
        return OpenedPdf { renderer, QString() };
    }));
}

void ReviewView::showSavedText()
{
    m_textView->setPlainText(m_review.document.text);
    m_documentStack->setCurrentWidget(m_textView);
    emit documentShown();
}

void ReviewView::selectFinding(int findingIndex)
{
    const QModelIndex source = m_model->index(findingIndex, 0);
    const QModelIndex proxy = m_filterModel->mapFromSource(source);
    if (proxy.isValid())
        m_table->setCurrentIndex(proxy);
}

void ReviewView::onCurrentRowChanged()
{
    const QModelIndex current = m_table->currentIndex();
    const int findingIndex
        = current.isValid() ? current.data(FindingsTableModel::FindingIndexRole).toInt() : -1;
    m_detail->showFinding(&m_review, findingIndex);
    if (findingIndex < 0)
        return;
    showLiveNote();
    const cw::Finding& finding = m_review.findings[findingIndex];
    if (m_documentStack->currentWidget() == m_pdfView) {
        m_pdfView->setHighlights(m_review.document.boxesFor(finding.start, finding.end));
    } else {
        QTextCursor cursor(m_textView->document());
        cursor.setPosition(int(std::min<qsizetype>(finding.start, m_review.document.text.size())));
        cursor.setPosition(int(std::min<qsizetype>(finding.end, m_review.document.text.size())),
            QTextCursor::KeepAnchor);
        m_textView->setTextCursor(cursor);
        m_textView->centerCursor();
    }
    emit findingSelected(findingIndex);
}

void ReviewView::applyEdit(
    int findingIndex, const QString& category, cw::Risk risk, const QString& comment)
{
    if (findingIndex < 0 || findingIndex >= m_review.findings.size())
        return;
    cw::Finding& finding = m_review.findings[findingIndex];
    finding.category = category;
    finding.risk = risk;
    finding.userComment = comment;
    finding.userEdited = true;
    m_model->findingChanged(findingIndex);
    m_detail->showFinding(&m_review, findingIndex);
}

} // namespace cw::ui
