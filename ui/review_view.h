#pragma once

#include "app/review/review_events.h"
#include "app/review/review_types.h"

#include <QHash>
#include <QWidget>

class QComboBox;
class QLineEdit;
class QPlainTextEdit;
class QSplitter;
class QStackedWidget;
class QTableView;

namespace cw {
class PdfPageRenderer;
class ReviewQueue;
} // namespace cw

namespace cw::ui {

class FindingDetailPane;
class FindingsFilterModel;
class FindingsTableModel;
class PdfView;

// One open review: the document (PDF pages, or the text of a DOCX/TXT) on the left, the
// clause table and the selected clause's details on the right. Selecting a row highlights
// the clause at its real position on the page.
//
// While a model review runs the view is live: it shows the fast review, the note the model
// is writing on the selected finding's category grows in the detail pane, and the model's
// findings join the table as each question is answered. The final review (setReview)
// replaces all of it.
class ReviewView : public QWidget {
    Q_OBJECT
public:
    explicit ReviewView(QWidget* parent = nullptr);
    ~ReviewView() override;

    void setReview(const cw::Review& review);
    const cw::Review& review() const { return m_review; }
    bool hasReview() const { return !m_review.document.path.isEmpty(); }
    void setCategories(const QStringList& categories);
    void applyEdit(
        int findingIndex, const QString& category, cw::Risk risk, const QString& comment);

    PdfView* pdfView() const { return m_pdfView; }
    QTableView* table() const { return m_table; }
    QLineEdit* filterEdit() const { return m_filter; }
    void selectFinding(int findingIndex);
    QString documentError() const { return m_documentError; }

    // Follows a queue's streaming signals (fast review, questions, notes, findings).
    void followQueue(cw::ReviewQueue* queue);
    void showFastReview(const cw::Review& review);
    void setModelQuestions(const QList<cw::ModelQuestionInfo>& questions);
    void appendModelNote(int questionId, const QString& piece);
    void appendModelFindings(int questionId, const QList<cw::Finding>& findings);
    // The note written so far for a question; empty when unknown.
    QString modelNote(int questionId) const;
    bool isLive() const { return m_live; }
    FindingDetailPane* detailPane() const { return m_detail; }
    // While another panel (the code panel) takes part of the window: the findings column
    // keeps its minimum and the pages get the rest, so they stay readable; off, the widths
    // from before come back.
    void setDocumentFirst(bool documentFirst);

signals:
    void findingEdited(
        int findingIndex, const QString& category, cw::Risk risk, const QString& comment);
    void findingSelected(int findingIndex);
    // The document pane shows the contract: its PDF pages (opened on a worker), or its saved
    // text (not a PDF, or the file could not be opened: documentError() says why).
    void documentShown();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void fitColumns();
    void shareColumnWidths(); // after a resize: the text column first
    struct LiveQuestion {
        QStringList categories;
        QString note;
        bool answered = false;
    };
    void onCurrentRowChanged();
    int questionFor(const QString& category) const; // -1: not asked
    void showLiveNote();
    void showDocument();
    void showSavedText();

    cw::Review m_review;
    std::shared_ptr<cw::PdfPageRenderer> m_renderer; // shared: made on a worker, see showDocument()
    QString m_documentError;
    quint64 m_documentGeneration = 0; // the latest showDocument() is the one that lands
    QSplitter* m_splitter = nullptr;
    QList<int> m_sizesBeforeDocumentFirst; // empty unless setDocumentFirst(true) holds
    QStackedWidget* m_documentStack = nullptr;
    PdfView* m_pdfView = nullptr;
    QPlainTextEdit* m_textView = nullptr;
    QLineEdit* m_filter = nullptr;
    QComboBox* m_riskFilter = nullptr;
    QTableView* m_table = nullptr;
    FindingsTableModel* m_model = nullptr;
    FindingsFilterModel* m_filterModel = nullptr;
    FindingDetailPane* m_detail = nullptr;
    int m_categoryWidth = 0; // the columns' content widths, before they give way
    int m_clauseWidth = 0;
    bool m_live = false;
    QHash<int, LiveQuestion> m_questions;
};

} // namespace cw::ui
